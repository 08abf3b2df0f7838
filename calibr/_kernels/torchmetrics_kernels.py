"""Kernels for ``calibr.torchmetrics`` (torchmetrics-compatible calibration error).

torchmetrics 1.9 computes its calibration error as follows (``_ce_compute`` and
``_binning_bucketize``), always in the dtype of the confidences:

* boundaries ``torch.linspace(0, 1, n_bins + 1)``;
* bin index ``bucketize(conf, boundaries, right=True) - 1``: bins are closed on
  the left, ``boundaries[b] <= conf < boundaries[b + 1]``, and a confidence of
  exactly 1.0 lands in an extra bin ``n_bins`` (so there are ``n_bins + 1``);
* per-bin count, sum of confidences and sum of accuracies by ``scatter_add_``,
  which on the CPU adds the elements one after another in input order, in the
  dtype of the confidences (float32 sums and even float32 counts).

Everything here keeps that arithmetic: ``numpy.add.at`` and the numba loops
both accumulate sequentially in the state's dtype, so the per-bin sums are the
same bits as torch's; ``torch_linspace`` and ``torch_sum`` reproduce torch's
boundaries and its order of additions in the short sums over the bins, so
``finalize`` gives torchmetrics' bits (up to torch's MKL ``sqrt`` for l2).

Each kernel comes twice:

* ``*_oracle``: short numpy that is obviously the definition;
* the fast version: one numba pass over the data, no Python loop per element.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from fractions import Fraction

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = [
    "torch_linspace",
    "sigmoid",
    "sleef_expf",
    "sigmoid_oracle",
    "softmax",
    "softmax_oracle",
    "bin_index_oracle",
    "accumulate_oracle",
    "top_label_oracle",
    "binary_scan",
    "binary_accumulate",
    "binary_accumulate_checked",
    "multiclass_scan",
    "multiclass_accumulate",
    "multiclass_accumulate_checked",
    "finalize",
    "torch_sum",
]


# --------------------------------------------------------------------------
# torch.linspace, exactly


@functools.lru_cache(maxsize=256)
def _linspace_cached(steps: int, dtype_str: str) -> np.ndarray:
    dtype = np.dtype(dtype_str)
    out = np.empty(steps, dtype=dtype)
    if steps == 1:
        out[0] = 0.0
    else:
        one = dtype.type(1.0)
        step = one / dtype.type(steps - 1)  # (end - start) / (steps - 1), in the dtype
        exact_step = Fraction(float(step))
        halfway = steps // 2
        for i in range(steps):
            # torch's CPU kernel (compiled with fused multiply-add on AVX2/AVX512 builds):
            # the lower half is start + step * i, the upper half end - step * (steps - 1 - i),
            # each rounded once.
            if i < halfway:
                exact = exact_step * i
            else:
                exact = 1 - exact_step * (steps - 1 - i)
            # float(exact) is the correctly rounded float64; for float32 the exact value
            # spans at most 24 + log2(steps) < 53 bits (1 minus a 24-bit step times an
            # integer), so float64 holds it exactly and one rounding to float32 remains.
            out[i] = float(exact)
    out.setflags(write=False)
    return out


def torch_linspace(steps: int, dtype) -> np.ndarray:
    """``torch.linspace(0, 1, steps, dtype=dtype)`` on a CPU, bit for bit (read-only).

    torch computes ``step = 1 / (steps - 1)`` in the dtype, the first ``steps // 2``
    points as ``step * i`` and the rest as ``1 - step * (steps - 1 - i)``, each with a
    single rounding (a fused multiply-add). ``numpy.linspace`` computes ``i * step``
    throughout, in float64, so its upper half can differ by an ulp.
    """
    return _linspace_cached(int(steps), np.dtype(dtype).str)


# --------------------------------------------------------------------------
# normalisation of logits, in torch's order of operations
#
# torch's CPU sigmoid and softmax compute exp with SLEEF's ``expf_u10`` in float32
# (vectorised, with fused multiply-adds); ``sleef_expf`` below is a numpy port of
# that algorithm, so float32 logits give torch's bits. float64 uses numpy's exp,
# which can differ from SLEEF's by an ulp (far below the 1e-12 tolerance).


def _torch_lanes(dtype) -> int:
    """Vector lanes of torch's softmax kernel on this CPU (64-byte on AVX512, else 32)."""
    return _SOFTMAX_VECTOR_BYTES // np.dtype(dtype).itemsize


def _detect_softmax_vector_bytes() -> int:
    forced = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    if forced in ("avx2", "default"):
        return 32
    if forced == "avx512":
        return 64
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return 64 if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags else 32
    except OSError:
        pass
    return 32


#: torch registers its softmax kernel for AVX512 too (16 float32 lanes there, else 8).
_SOFTMAX_VECTOR_BYTES = _detect_softmax_vector_bytes()


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` for float32 arrays with one rounding (a fused multiply-add).

    The product is exact in float64; the sum is rounded to float64 and then to
    float32, which is the single rounding except when the float64 sum lands exactly
    halfway between two float32s: then the sign of the float64 rounding error decides.
    """
    with np.errstate(invalid="ignore"):  # inf inputs: masked by the callers
        p = a.astype(np.float64) * b.astype(np.float64)
        c64 = c.astype(np.float64)
        r = p + c64
        bb = r - p
        err = (p - (r - bb)) + (c64 - bb)  # exact: p + c == r + err (TwoSum)
        r32 = r.astype(np.float32)
        diff = r - r32.astype(np.float64)
        toward = np.nextafter(r32, np.where(diff > 0, np.float32(np.inf), np.float32(-np.inf)))
        half_gap = np.abs(toward.astype(np.float64) - r32.astype(np.float64)) / 2
    tie = (diff != 0) & (np.abs(diff) == half_gap) & (err != 0)
    if tie.any():
        past = tie & (np.sign(err) == np.sign(diff))
        r32 = np.where(past, toward, r32)
    return r32


_LN2_HI = np.float32(0.693145751953125)
_LN2_LO = np.float32(1.428606765330187045e-06)
_INV_LN2 = np.float32(1.442695040888963407359924681001892137426645954152985934135449406931)
_EXPF_POLY = tuple(
    np.float32(c)
    for c in (
        0.000198527617612853646278381,
        0.00139304355252534151077271,
        0.00833336077630519866943359,
        0.0416664853692054748535156,
        0.166666671633720397949219,
        0.5,
    )
)


def sleef_expf(d: np.ndarray) -> np.ndarray:
    """exp of a float32 array as SLEEF's ``expf_u10`` (torch's vectorised float32 exp).

    ``q = rint(d / ln 2)``; ``s = d - q ln 2`` in two fused steps; a degree-6
    polynomial ``1 + s + s^2 u(s)``; then times ``2^q`` in two halves; 0 below -104
    and inf above 100.
    """
    d = np.asarray(d, dtype=np.float32)
    with np.errstate(invalid="ignore"):  # +-inf: q is garbage, masked at the end
        q = np.rint(d * _INV_LN2).astype(np.int32)
    qf = q.astype(np.float32)
    s = _fma32(qf, np.full_like(d, -_LN2_HI), d)
    s = _fma32(qf, np.full_like(d, -_LN2_LO), s)
    u = np.full_like(d, _EXPF_POLY[0])
    for coef in _EXPF_POLY[1:]:
        u = _fma32(u, s, np.full_like(d, coef))
    u = np.float32(1.0) + _fma32(s * s, u, s)
    half = q >> 1
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        u = u * np.ldexp(np.float32(1.0), half).astype(np.float32)
        u = u * np.ldexp(np.float32(1.0), q - half).astype(np.float32)
    u = np.where(d < -104, np.float32(0.0), u)
    return np.where(d > 100, np.float32(np.inf), u).astype(np.float32)


def sigmoid_oracle(x: np.ndarray) -> np.ndarray:
    """Readable float32 sigmoid, SLEEF's exp everywhere (torch's vectorised body)."""
    with np.errstate(over="ignore"):
        return np.reciprocal(sleef_expf(np.float32(0.0) - x) + np.float32(1.0))


def _torch_row_sums(e: np.ndarray) -> np.ndarray:
    """Row sums of a 2-d array in the order of torch's ``vec_reduce_all``.

    Rows shorter than a vector are summed left to right. Longer rows accumulate whole
    vectors lane by lane, the tail into the first lanes, and the vector's lanes are
    then added as a tree (lane i + lane i + W/2, and so on down to one).
    """
    n, c = e.shape
    w = _torch_lanes(e.dtype)
    if c < w:
        acc = e[:, 0].copy()
        for k in range(1, c):
            acc += e[:, k]
        return acc
    lanes = e[:, :w].copy()
    d = w
    while d < c - c % w:
        lanes += e[:, d : d + w]
        d += w
    if c > d:
        lanes[:, : c - d] += e[:, d:]
    h = w // 2
    while h >= 1:
        lanes = lanes[:, :h] + lanes[:, h : 2 * h]
        h //= 2
    return lanes[:, 0]


def softmax_oracle(x: np.ndarray) -> np.ndarray:
    """Readable float32 softmax: SLEEF exp, ``_torch_row_sums``, times 1/sum."""
    e = sleef_expf(x - x.max(axis=1, keepdims=True))
    return e * np.reciprocal(_torch_row_sums(e))[:, None]


# the fast versions (numba), used by sigmoid() and softmax()


@intrinsic
def _fma32_scalar(typingctx, a, b, c):
    """One float32 ``a * b + c`` with a single rounding: LLVM's ``llvm.fma`` (the
    hardware FMA instruction, or libm's ``fmaf`` where there is none)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):
        f32 = ir.FloatType()
        fma = builder.module.declare_intrinsic("llvm.fma", [f32], ir.FunctionType(f32, [f32] * 3))
        return builder.call(fma, args)

    return sig, codegen


@numba.njit(cache=True, nogil=True)
def _fma32_arrays(a, b, c):
    """``_fma32_scalar`` over float32 arrays (to test it against ``_fma32``)."""
    out = np.empty(a.size, dtype=np.float32)
    for i in range(a.size):
        out[i] = _fma32_scalar(a[i], b[i], c[i])
    return out


#: 2**k as float32 for the two halves of 2**q (|q| <= 151 for -104 <= d <= 100)
_POW2_OFFSET = 80
_POW2_F32 = np.array([2.0**k for k in range(-_POW2_OFFSET, _POW2_OFFSET + 1)], dtype=np.float32)


@numba.njit(cache=True, nogil=True)
def _sleef_expf_scalar(d):
    """``sleef_expf`` for one float32."""
    if d != d:
        return d  # NaN stays NaN (and never indexes the table below)
    if d < -104.0:
        return np.float32(0.0)
    if d > 100.0:
        return np.float32(np.inf)
    q = int(np.rint(d * np.float32(1.4426950408889634)))
    qf = np.float32(q)
    s = _fma32_scalar(qf, np.float32(-0.693145751953125), d)
    s = _fma32_scalar(qf, np.float32(-1.428606765330187045e-06), s)
    u = np.float32(0.000198527617612853646278381)
    u = _fma32_scalar(u, s, np.float32(0.00139304355252534151077271))
    u = _fma32_scalar(u, s, np.float32(0.00833336077630519866943359))
    u = _fma32_scalar(u, s, np.float32(0.0416664853692054748535156))
    u = _fma32_scalar(u, s, np.float32(0.166666671633720397949219))
    u = _fma32_scalar(u, s, np.float32(0.5))
    u = np.float32(1.0) + _fma32_scalar(s * s, u, s)
    half = q >> 1
    u = u * _POW2_F32[half + _POW2_OFFSET]
    return u * _POW2_F32[q - half + _POW2_OFFSET]


@numba.njit(cache=True, nogil=True)
def _sigmoid32(x, lanes, tasks):
    """torch's float32 sigmoid: SLEEF's exp on whole pairs of vectors, libm's ``expf``
    on the rest of each thread chunk (the scalar loop of ``cpu_kernel_vec``)."""
    n = x.size
    out = np.empty(n, dtype=np.float32)
    one = np.float32(1.0)
    chunk = max(1, (n + tasks - 1) // tasks)
    step = 2 * lanes
    for begin in range(0, n, chunk):
        end = min(n, begin + chunk)
        body = begin + (end - begin) // step * step
        for i in range(begin, body):
            out[i] = one / (_sleef_expf_scalar(np.float32(0.0) - x[i]) + one)
        for i in range(body, end):
            out[i] = one / (one + np.float32(math.exp(-x[i])))
    return out


@numba.njit(cache=True, nogil=True)
def _softmax32(x, lanes):
    """torch's float32 softmax over the columns (as ``softmax_oracle``)."""
    m, c = x.shape
    out = np.empty((m, c), dtype=np.float32)
    acc = np.empty(lanes, dtype=np.float32)
    for i in range(m):
        mx = x[i, 0]
        for k in range(1, c):
            if x[i, k] > mx:
                mx = x[i, k]
        for k in range(c):
            out[i, k] = _sleef_expf_scalar(x[i, k] - mx)
        if c < lanes:
            total = out[i, 0]
            for k in range(1, c):
                total += out[i, k]
        else:
            for k in range(lanes):
                acc[k] = out[i, k]
            d = lanes
            while d < c - c % lanes:
                for k in range(lanes):
                    acc[k] += out[i, d + k]
                d += lanes
            for k in range(c - d):
                acc[k] += out[i, d + k]
            h = lanes // 2
            while h >= 1:
                for k in range(h):
                    acc[k] = acc[k] + acc[k + h]
                h //= 2
            total = acc[0]
        inv = np.float32(1.0) / total
        for k in range(c):
            out[i, k] = out[i, k] * inv
    return out


def _torch_tasks(n: int) -> int:
    """How many chunks ``at::parallel_for`` splits n elements into (grain 32768)."""
    if n <= 32768:
        return 1
    return max(1, min(_torch_threads(), -(-n // 32768)))


def _torch_threads() -> int:
    """torch's intra-op thread count: from torch if it is loaded, else its default."""
    torch = sys.modules.get("torch")  # never imported here
    if torch is not None and hasattr(torch, "get_num_threads"):
        return int(torch.get_num_threads())
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    cores = set()
    try:  # torch's default is the number of physical cores
        with open("/proc/cpuinfo") as fh:
            phys = None
            for line in fh:
                if line.startswith("physical id"):
                    phys = line.split(":", 1)[1].strip()
                elif line.startswith("core id"):
                    cores.add((phys, line.split(":", 1)[1].strip()))
    except OSError:
        pass
    return len(cores) or os.cpu_count() or 1


def sigmoid(x: np.ndarray) -> np.ndarray:
    """``1 / (exp(0 - x) + 1)`` in the dtype of ``x`` (a new array), as torch's CPU kernel.

    float32 gives torch's bits: SLEEF's exp on the vectorised body and libm's
    ``expf`` on each thread chunk's tail (arrays longer than 32768 are split by
    torch's thread count). float64 uses numpy's exp, which can differ by an ulp.
    """
    if x.dtype == np.float32:
        flat = np.ascontiguousarray(x).reshape(-1)
        return _sigmoid32(flat, _torch_lanes(np.float32), _torch_tasks(flat.size)).reshape(x.shape)
    with np.errstate(over="ignore"):
        return np.reciprocal(np.exp(x.dtype.type(0.0) - x) + x.dtype.type(1.0))


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the columns of a 2-d ``x`` in its dtype (a new array), as torch's kernel.

    float32 gives torch's bits (SLEEF's exp, the row sum in torch's order, times its
    reciprocal). float64 uses numpy's exp and sum, times the reciprocal.
    """
    if x.dtype == np.float32:
        return _softmax32(np.ascontiguousarray(x), _torch_lanes(np.float32))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e * np.reciprocal(e.sum(axis=1, keepdims=True))


# --------------------------------------------------------------------------
# readable oracles


def bin_index_oracle(conf: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """``bucketize(conf, boundaries, right=True) - 1``: bins closed on the left, 1.0 alone."""
    return np.searchsorted(boundaries, conf, side="right") - 1


def accumulate_oracle(conf, acc, boundaries, count, conf_sum, acc_sum) -> None:
    """Add ``conf``/``acc`` into the per-bin state, one element after another (in place)."""
    dtype = count.dtype
    idx = bin_index_oracle(conf.astype(dtype), boundaries)
    np.add.at(count, idx, dtype.type(1.0))
    np.add.at(conf_sum, idx, conf.astype(dtype))
    np.add.at(acc_sum, idx, acc.astype(dtype))


def top_label_oracle(probs: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Top-label confidence (as float32) and hit (first maximal column on ties)."""
    pred = np.argmax(probs, axis=1)
    conf = probs[np.arange(probs.shape[0]), pred].astype(np.float32)
    return conf, (pred == target).astype(np.float32)


# --------------------------------------------------------------------------
# fast kernels (numba, one pass each)


@numba.njit(cache=True, nogil=True, inline="always")
def _bin_of(x, boundaries, n_bins):
    """Bin index of ``x`` in [0, 1]: start from ``x * n_bins``, then settle exactly."""
    j = int(x * n_bins)
    if j > n_bins:
        j = n_bins
    if j < 0:
        j = 0
    while j < n_bins and boundaries[j + 1] <= x:
        j += 1
    while j > 0 and boundaries[j] > x:
        j -= 1
    return j


@numba.njit(cache=True, nogil=True)
def binary_scan(preds, target, has_ignore, ignore, check_target):
    """One pass: kept count, any value outside [0, 1], first NaN, first bad target.

    Returns ``(kept, outside, first_nan, first_bad_target)``; positions are -1 when
    there is none. Only rows whose target is not ``ignore`` count for ``outside``
    and ``first_nan``; the target check covers every row (as torchmetrics').
    """
    kept = 0
    outside = False
    first_nan = -1
    first_bad = -1
    for i in range(preds.size):
        t = target[i]
        if check_target and first_bad < 0:
            if t != 0 and t != 1 and not (has_ignore and t == ignore):
                first_bad = i
        if has_ignore and t == ignore:
            continue
        kept += 1
        x = preds[i]
        if not (x >= 0.0 and x <= 1.0):
            outside = True
            if x != x and first_nan < 0:
                first_nan = i
    return kept, outside, first_nan, first_bad


@numba.njit(cache=True, nogil=True)
def binary_accumulate(preds, target, has_ignore, ignore, boundaries, count, conf_sum, acc_sum):
    """Add each kept (pred, target) into the per-bin state, in input order (in place)."""
    n_bins = boundaries.size - 1
    for i in range(preds.size):
        t = target[i]
        if has_ignore and t == ignore:
            continue
        x = preds[i]
        j = _bin_of(x, boundaries, n_bins)
        count[j] += 1.0
        conf_sum[j] += x
        acc_sum[j] += t


@numba.njit(cache=True, nogil=True)
def binary_accumulate_checked(
    preds, target, has_ignore, ignore, check_target, boundaries, count, conf_sum, acc_sum
):
    """``binary_accumulate`` for a batch of probabilities, checking as it goes: one pass.

    Returns ``(status, position)``: 0 when every kept value lies in [0, 1] and the
    state was updated; 1 at the first kept value outside [0, 1] (or NaN), and 2 at the
    first bad target (with ``check_target``): then the state is left unchanged.
    """
    n_bins = boundaries.size - 1
    c = count.copy()
    s = conf_sum.copy()
    a = acc_sum.copy()
    for i in range(preds.size):
        t = target[i]
        if has_ignore and t == ignore:
            continue
        if check_target and t != 0 and t != 1:
            return 2, i
        x = preds[i]
        if not (x >= 0.0 and x <= 1.0):
            return 1, i
        j = _bin_of(x, boundaries, n_bins)
        c[j] += 1.0
        s[j] += x
        a[j] += t
    count[:] = c
    conf_sum[:] = s
    acc_sum[:] = a
    return 0, -1


@numba.njit(cache=True, nogil=True)
def multiclass_accumulate_checked(
    preds, target, has_ignore, ignore, boundaries, count, conf_sum, acc_sum
):
    """``multiclass_accumulate`` for a batch of probabilities, checking as it goes.

    Returns True when every kept value lies in [0, 1] (the state was updated), False
    at the first kept value outside [0, 1] or NaN (the state is left unchanged).
    """
    m, k_cols = preds.shape
    n_bins = boundaries.size - 1
    c = count.copy()
    s = conf_sum.copy()
    a = acc_sum.copy()
    for i in range(m):
        t = target[i]
        if has_ignore and t == ignore:
            continue
        best = preds[i, 0]
        arg = 0
        if not best >= 0.0:  # negative or NaN
            return False
        for k in range(1, k_cols):
            v = preds[i, k]
            if not v >= 0.0:
                return False
            if v > best:
                best = v
                arg = k
        if not best <= 1.0:  # the row maximum bounds every value above
            return False
        conf = np.float32(best)
        j = _bin_of(conf, boundaries, n_bins)
        c[j] += 1.0
        s[j] += conf
        if arg == t:
            a[j] += 1.0
    count[:] = c
    conf_sum[:] = s
    acc_sum[:] = a
    return True


@numba.njit(cache=True, nogil=True)
def multiclass_scan(preds, target, has_ignore, ignore):
    """One pass over (M, C) rows: ``(kept, outside, first_nan_row)``.

    Counts the kept rows (target not ``ignore``), tells whether a kept row has a
    value outside [0, 1] (the logit rule) and where the first kept NaN is (-1: none).
    """
    m, c = preds.shape
    kept = 0
    outside = False
    first_nan = -1
    for i in range(m):
        if has_ignore and target[i] == ignore:
            continue
        kept += 1
        for k in range(c):
            x = preds[i, k]
            if not (x >= 0.0 and x <= 1.0):
                outside = True
                if x != x and first_nan < 0:
                    first_nan = i
    return kept, outside, first_nan


@numba.njit(cache=True, nogil=True)
def multiclass_accumulate(preds, target, has_ignore, ignore, boundaries, count, conf_sum, acc_sum):
    """Top-label (first maximal column) confidence as float32 and hit, binned (in place)."""
    m, c = preds.shape
    n_bins = boundaries.size - 1
    for i in range(m):
        t = target[i]
        if has_ignore and t == ignore:
            continue
        best = preds[i, 0]
        arg = 0
        for k in range(1, c):
            v = preds[i, k]
            if v > best:
                best = v
                arg = k
        conf = np.float32(best)
        j = _bin_of(conf, boundaries, n_bins)
        count[j] += 1.0
        conf_sum[j] += conf
        if arg == t:
            acc_sum[j] += 1.0


# --------------------------------------------------------------------------
# from per-bin state to the metric


def finalize(count: np.ndarray, conf_sum: np.ndarray, acc_sum: np.ndarray, norm: str):
    """torchmetrics' ``_ce_compute`` from the per-bin sums, in the state's dtype.

    Every step is torch's elementwise IEEE arithmetic, and the two sums over the
    bins follow ``torch.sum``'s order (:func:`torch_sum`), so the result is the
    same bits as torchmetrics' when the per-bin sums are.

    Returns a numpy scalar of the state's dtype, except for ``norm="l2"`` when the
    weighted sum of squared gaps is not positive (including NaN for no samples):
    then ``numpy.int64(0)``, as torchmetrics returns ``torch.tensor(0)``.
    """
    dtype = count.dtype
    with np.errstate(divide="ignore", invalid="ignore"):
        conf_bin = np.nan_to_num(conf_sum / count)
        acc_bin = np.nan_to_num(acc_sum / count)
        prop_bin = count / torch_sum(count)
        gap = acc_bin - conf_bin
        if norm == "l1":
            return torch_sum(np.abs(gap) * prop_bin)
        if norm == "max":
            return dtype.type(np.abs(gap).max())
        ce = torch_sum(gap * gap * prop_bin)
        if ce > 0:
            return dtype.type(np.sqrt(ce))
        return np.int64(0)


# --------------------------------------------------------------------------
# torch.sum's order of additions (ATen's cascade_sum), for the short sums over bins

#: ATen's sum kernel is registered for its AVX2 and default builds only (not AVX512),
#: and both use 32-byte vectors: 8 float32 or 4 float64 lanes.
_TORCH_VECTOR_BYTES = 32
_ILP = 4  # ATen's row_sum splits a row into 4 interleaved partial sums
_LEVELS = 4  # ... each a cascade of 4 levels


def _cascade(load, size: int, zero):
    """ATen's ``multi_row_sum`` for 4 interleaved rows: returns their 4 sums."""
    level_power = max(4, (int(size - 1).bit_length() if size > 1 else 0) // _LEVELS)
    level_step = 1 << level_power
    level_mask = level_step - 1
    acc = [[zero] * _ILP for _ in range(_LEVELS)]
    i = 0
    while i + level_step <= size:
        for _ in range(level_step):
            for k in range(_ILP):
                acc[0][k] = acc[0][k] + load(i * _ILP + k)
            i += 1
        for j in range(1, _LEVELS):
            for k in range(_ILP):
                acc[j][k] = acc[j][k] + acc[j - 1][k]
                acc[j - 1][k] = zero
            if i & (level_mask << (j * level_power)):
                break
    for row in range(i, size):
        for k in range(_ILP):
            acc[0][k] = acc[0][k] + load(row * _ILP + k)
    for j in range(1, _LEVELS):
        for k in range(_ILP):
            acc[0][k] = acc[0][k] + acc[j][k]
    return acc[0]


def _row_sum(load, size: int, zero):
    """ATen's ``row_sum``: 4 interleaved cascades, the tail into the first, then combined."""
    partial = _cascade(load, size // _ILP, zero)
    for i in range(size // _ILP * _ILP, size):
        partial[0] = partial[0] + load(i)
    for k in range(1, _ILP):
        partial[0] = partial[0] + partial[k]
    return partial[0]


def torch_sum(x: np.ndarray) -> np.floating:
    """``torch.sum`` of a contiguous 1-d float32/float64 array on a CPU, bit for bit.

    A port of the order of additions of ATen's serial ``cascade_sum`` (arrays of up
    to 32768 elements, below which torch does not split the sum across threads):
    a cascade over 32-byte vectors, then the scalar tail, then the vector's lanes.
    Every addition rounds in ``x.dtype`` (numpy float32 arithmetic is IEEE).
    """
    dtype = x.dtype
    zero = dtype.type(0.0)
    width = _TORCH_VECTOR_BYTES // dtype.itemsize
    if x.size < width:
        return dtype.type(zero + _row_sum(lambda i: x[i], x.size, zero))
    n_vec = x.size // width
    lanes = _row_sum(lambda i: x[i * width : (i + 1) * width], n_vec, np.zeros(width, dtype))
    total = zero
    for v in x[n_vec * width :]:
        total = dtype.type(total + v)
    for v in lanes:
        total = dtype.type(total + v)
    return dtype.type(zero + total)
