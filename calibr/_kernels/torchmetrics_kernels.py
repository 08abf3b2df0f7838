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

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, overload

from ._jit import jit

__all__ = [
    "torch_linspace",
    "sigmoid",
    "sleef_exp",
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


_L2U_F64 = 0.69314718055966295651160180568695068359375
_L2L_F64 = 0.28235290563031577122588448175013436025525412068e-12
_INV_LN2_F64 = 1.442695040888963407359924681001892137426645954152985934135449406931
_EXP_POLY_F64 = (  # c9 .. c0 of SLEEF's exp_u10 (FMA build), Estrin order below
    0.2081276378237164457e-8,
    0.2511210703042288022e-7,
    0.2755762628169491192e-6,
    0.2755723402025388239e-5,
    0.2480158687479686264e-4,
    0.1984126989855865850e-3,
    0.1388888888914497797e-2,
    0.8333333333314938210e-2,
    0.4166666666666602598e-1,
    0.1666666666666669072e0,
)
_EXP_MAX_F64 = 709.782712893384  # 0x1.62e42fefa39efp+9: above it, inf


def _fma64(a, b, c) -> np.ndarray:
    """``a * b + c`` for float64 arrays with one rounding (exact rationals; slow, readable)."""
    exact = np.frompyfunc(lambda x, y, z: float(Fraction(x) * Fraction(y) + Fraction(z)), 3, 1)
    return exact(*np.broadcast_arrays(a, b, c)).astype(np.float64)


def sleef_exp(d: np.ndarray) -> np.ndarray:
    """exp as torch's vectorised kernels compute it: SLEEF's ``exp_u10`` in the dtype.

    float32 is ``sleef_expf``. float64: ``q = rint(d / ln 2)``, ``s = d - q ln 2`` in
    two fused steps, a degree-10 polynomial in Estrin's order, three more fused steps
    to ``1 + s + s^2/2 + ...``, times ``2^q`` in two halves; 0 below -1000, inf above
    ``log(DBL_MAX)``.
    """
    d = np.asarray(d)
    if d.dtype == np.float32:
        return sleef_expf(d)
    finite = np.where(np.isfinite(d), d, 0.0)
    u = np.rint(finite * _INV_LN2_F64)
    q = u.astype(np.int64)
    s = _fma64(u, -_L2U_F64, finite)
    s = _fma64(u, -_L2L_F64, s)
    s2, c = s * s, _EXP_POLY_F64
    s4 = s2 * s2
    s8 = s4 * s4
    low = _fma64(s2, _fma64(s, c[6], c[7]), _fma64(s, c[8], c[9]))
    mid = _fma64(s2, _fma64(s, c[2], c[3]), _fma64(s, c[4], c[5]))
    u = _fma64(s8, _fma64(s, c[0], c[1]), _fma64(s4, mid, low))
    u = _fma64(_fma64(_fma64(u, s, 0.5), s, 1.0), s, 1.0)
    half = q >> 1
    with np.errstate(over="ignore", under="ignore"):
        u = u * np.ldexp(1.0, half) * np.ldexp(1.0, q - half)
    u = np.where(d < -1000, 0.0, u)
    u = np.where(d > _EXP_MAX_F64, np.inf, u)
    return np.where(np.isnan(d), d, u)


def sigmoid_oracle(x: np.ndarray) -> np.ndarray:
    """Readable sigmoid with SLEEF's exp everywhere (torch's vectorised body)."""
    one = x.dtype.type(1.0)
    with np.errstate(over="ignore"):
        return np.reciprocal(sleef_exp(x.dtype.type(0.0) - x) + one).astype(x.dtype)


def _torch_row_sums(e: np.ndarray) -> np.ndarray:
    """Row sums of a 2-d array in the order of torch's ``vec_reduce_all``.

    Rows shorter than a vector are summed left to right. Longer rows accumulate whole
    vectors lane by lane, the tail into the first lanes; then the lanes are added as
    a tree for float32 (lane i + lane i + W/2, down to one: the shuffle reduction)
    and left to right for float64.
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
    if e.dtype == np.float64:
        acc = lanes[:, 0].copy()
        for k in range(1, w):
            acc += lanes[:, k]
        return acc
    h = w // 2
    while h >= 1:
        lanes = lanes[:, :h] + lanes[:, h : 2 * h]
        h //= 2
    return lanes[:, 0]


def softmax_oracle(x: np.ndarray) -> np.ndarray:
    """Readable softmax: SLEEF exp, ``_torch_row_sums``, times 1/sum."""
    e = sleef_exp(x - x.max(axis=1, keepdims=True)).astype(x.dtype)
    return e * np.reciprocal(_torch_row_sums(e))[:, None]


# the fast versions (numba), used by sigmoid() and softmax()


def _fma_intrinsic(nbtype, irtype):
    def fma(typingctx, a, b, c):
        sig = nbtype(nbtype, nbtype, nbtype)

        def codegen(context, builder, signature, args):
            fn = builder.module.declare_intrinsic(
                "llvm.fma", [irtype], ir.FunctionType(irtype, [irtype] * 3)
            )
            return builder.call(fn, args)

        return sig, codegen

    return intrinsic(fma)


#: one ``a * b + c`` with a single rounding: LLVM's ``llvm.fma`` (the hardware FMA
#: instruction, or libm's ``fma``/``fmaf`` where there is none)
_fma32_scalar = _fma_intrinsic(types.float32, ir.FloatType())
_fma64_scalar = _fma_intrinsic(types.float64, ir.DoubleType())


@jit(nogil=True)
def _fma32_arrays(a, b, c):
    """``_fma32_scalar`` over float32 arrays (to test it against ``_fma32``)."""
    out = np.empty(a.size, dtype=np.float32)
    for i in range(a.size):
        out[i] = _fma32_scalar(a[i], b[i], c[i])
    return out


#: 2**k as float32 for the two halves of 2**q (|q| <= 151 for -104 <= d <= 100)
_POW2_OFFSET = 80
_POW2_F32 = np.array([2.0**k for k in range(-_POW2_OFFSET, _POW2_OFFSET + 1)], dtype=np.float32)


@jit(nogil=True)
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


_POW2_OFFSET_F64 = 760
_POW2_F64 = np.array([2.0**k for k in range(-_POW2_OFFSET_F64, _POW2_OFFSET_F64 + 1)])


@jit(nogil=True)
def _sleef_exp_scalar(d):
    """``sleef_exp`` for one float64."""
    if d != d:
        return d
    if d < -1000.0:
        return 0.0
    if d > 709.782712893384:
        return np.inf
    u = np.rint(d * 1.4426950408889634)
    q = int(u)
    s = _fma64_scalar(u, -0.69314718055966295651160180568695068359375, d)
    s = _fma64_scalar(u, -0.28235290563031577122588448175013436025525412068e-12, s)
    s2 = s * s
    s4 = s2 * s2
    s8 = s4 * s4
    low = _fma64_scalar(
        s2,
        _fma64_scalar(s, 0.1388888888914497797e-2, 0.8333333333314938210e-2),
        _fma64_scalar(s, 0.4166666666666602598e-1, 0.1666666666666669072e0),
    )
    mid = _fma64_scalar(
        s2,
        _fma64_scalar(s, 0.2755762628169491192e-6, 0.2755723402025388239e-5),
        _fma64_scalar(s, 0.2480158687479686264e-4, 0.1984126989855865850e-3),
    )
    u = _fma64_scalar(
        s8,
        _fma64_scalar(s, 0.2081276378237164457e-8, 0.2511210703042288022e-7),
        _fma64_scalar(s4, mid, low),
    )
    u = _fma64_scalar(u, s, 0.5)
    u = _fma64_scalar(u, s, 1.0)
    u = _fma64_scalar(u, s, 1.0)
    half = q >> 1
    u = u * _POW2_F64[half + _POW2_OFFSET_F64]
    return u * _POW2_F64[q - half + _POW2_OFFSET_F64]


def _sleef_exp_any(d):  # typed by the overload below
    raise NotImplementedError


@overload(_sleef_exp_any)  # compiled into its (cached) callers
def _sleef_exp_any_impl(d):
    if d == types.float32:
        return lambda d: _sleef_expf_scalar(d)
    return lambda d: _sleef_exp_scalar(d)


@jit(nogil=True)
def _sigmoid_kernel(x, one, lanes, tasks):
    """torch's sigmoid: SLEEF's exp on whole pairs of vectors, libm's ``exp``/``expf``
    on the rest of each thread chunk (the scalar loop of ``cpu_kernel_vec``)."""
    n = x.size
    out = np.empty_like(x)
    zero = one - one
    chunk = max(1, (n + tasks - 1) // tasks)
    step = 2 * lanes
    for begin in range(0, n, chunk):
        end = min(n, begin + chunk)
        body = begin + (end - begin) // step * step
        for i in range(begin, body):
            out[i] = one / (_sleef_exp_any(zero - x[i]) + one)
        for i in range(body, end):
            out[i] = one / (one + math.exp(-x[i]))
    return out


@jit(nogil=True)
def _softmax_kernel(x, one, lanes, tree):
    """torch's softmax over the columns (as ``softmax_oracle``)."""
    m, c = x.shape
    out = np.empty_like(x)
    acc = np.empty(lanes, dtype=x.dtype)
    for i in range(m):
        mx = x[i, 0]
        for k in range(1, c):
            if x[i, k] > mx:
                mx = x[i, k]
        for k in range(c):
            out[i, k] = _sleef_exp_any(x[i, k] - mx)
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
            if tree:
                h = lanes // 2
                while h >= 1:
                    for k in range(h):
                        acc[k] = acc[k] + acc[k + h]
                    h //= 2
                total = acc[0]
            else:
                total = acc[0]
                for k in range(1, lanes):
                    total += acc[k]
        inv = one / total
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
    return _physical_cores()


@functools.lru_cache(maxsize=1)
def _physical_cores() -> int:
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

    Gives torch's bits: SLEEF's exp on the vectorised body and libm's ``exp`` on
    each thread chunk's scalar tail (arrays longer than 32768 are split by torch's
    thread count).
    """
    flat = np.ascontiguousarray(x).reshape(-1)
    one = x.dtype.type(1.0)
    out = _sigmoid_kernel(flat, one, _torch_lanes(x.dtype), _torch_tasks(flat.size))
    return out.reshape(x.shape)


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the columns of a 2-d ``x`` in its dtype (a new array), as torch's kernel.

    SLEEF's exp of ``x - max``, the row sum in torch's order, times its reciprocal.
    """
    rows = np.ascontiguousarray(x)
    tree = rows.dtype == np.float32
    return _softmax_kernel(rows, rows.dtype.type(1.0), _torch_lanes(rows.dtype), tree)


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


@jit(nogil=True, inline="always")
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


@jit(nogil=True)
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


@jit(nogil=True)
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


@jit(nogil=True)
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


@jit(nogil=True)
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


@jit(nogil=True)
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


@jit(nogil=True)
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
