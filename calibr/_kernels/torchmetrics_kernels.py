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

Everything here keeps that arithmetic: the numba loops accumulate sequentially
in the state's dtype, so the per-bin sums are the same bits as torch's;
``torch_linspace`` and ``torch_sum`` reproduce torch's boundaries and its order
of additions in the short sums over the bins, so ``finalize`` gives
torchmetrics' bits (up to torch's MKL ``sqrt`` for l2).

Logits are normalised by a plain ``exp`` in torch's order of operations and
dtype (``sigmoid``, ``softmax``): within a few ulps of torch's values, not its
bits (``docs/torchmetrics.md``, "Logits"). The readable numpy oracles the tests
check these kernels against are in ``tests/oracles/torchmetrics.py``.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from ._jit import jit
from ._threads import chunk_bounds, num_threads, run_chunks
from .top_label import first_max, row_scan_pair

__all__ = [
    "binary_accumulate",
    "binary_accumulate_checked",
    "binary_scan",
    "finalize",
    "multiclass_accumulate",
    "multiclass_scan",
    "sigmoid",
    "softmax",
    "torch_linspace",
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
# normalisation of logits: a plain exp, in torch's order of operations and dtype
#
# torch's CPU kernels compute ``1 / (exp(0 - x) + 1)`` and ``exp(x - max) * (1 /
# sum)`` in the dtype of x, with SLEEF's vectorised exp on most elements. Here
# exp is libm's (numba's ``math.exp``, ``expf`` for float32), and the row sum is
# taken left to right in the dtype (torch's order for rows shorter than its
# vector width, 8 or 16 float32 lanes; it adds longer rows lane by lane): each
# value is within a few ulps of torch's (measured bounds in docs/torchmetrics.md,
# "Logits"), most often the same bits.


@jit(nogil=True)
def _sigmoid_kernel(x, one):  # pragma: no cover - compiled
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = one / (math.exp(-x[i]) + one)
    return out


@jit(nogil=True)
def _softmax_kernel(x, one):  # pragma: no cover - compiled
    m, c = x.shape
    out = np.empty_like(x)
    for i in range(m):
        mx = x[i, 0]
        for k in range(1, c):
            if x[i, k] > mx:
                mx = x[i, k]
        total = one - one
        for k in range(c):
            v = math.exp(x[i, k] - mx)
            out[i, k] = v
            total += v
        inv = one / total
        for k in range(c):
            out[i, k] = out[i, k] * inv
    return out


def sigmoid(x: np.ndarray) -> np.ndarray:
    """``1 / (exp(-x) + 1)`` in the dtype of ``x`` (a new array of its shape)."""
    flat = np.ascontiguousarray(x).reshape(-1)
    return _sigmoid_kernel(flat, x.dtype.type(1.0)).reshape(x.shape)


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the columns of a 2-d ``x`` in its dtype (a new array):
    ``exp(x - max)`` times the reciprocal of its row sum (added left to right). A
    row with +inf, or of -inf only, comes out NaN."""
    rows = np.ascontiguousarray(x)
    return _softmax_kernel(rows, rows.dtype.type(1.0))


# --------------------------------------------------------------------------
# fast kernels (numba, one pass each)

#: Modes of :func:`multiclass_accumulate` (how rows are read).
ROWS, PROBABILITIES, LOGITS = 0, 1, 2

#: Batches of at least this many rows run the costly phase of
#: :func:`multiclass_accumulate` in threads (the result does not depend on it).
MULTICLASS_PARALLEL_MIN_N = 1 << 15



@jit(nogil=True, inline="always")
def _bin_left_closed(x, boundaries, n_bins):  # pragma: no cover - compiled
    """torchmetrics' bin of ``x`` in [0, 1]: ``boundaries[j] <= x < boundaries[j + 1]``
    on torch.linspace boundaries, and the extra bin ``n_bins`` for exactly 1.0.

    Starts from ``x * n_bins``, then settles exactly against the boundaries.
    """
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
    """One pass: ``(first_nan, first_bad_target)``, positions or -1 when there is none.

    Only rows whose target is not ``ignore`` count for ``first_nan``; the target
    check (with ``check_target``) covers every row (as torchmetrics').
    """
    first_nan = -1
    first_bad = -1
    for i in range(preds.size):
        t = target[i]
        if check_target and first_bad < 0:
            if t != 0 and t != 1 and not (has_ignore and t == ignore):
                first_bad = i
        if has_ignore and t == ignore:
            continue
        x = preds[i]
        if x != x and first_nan < 0:
            first_nan = i
    return first_nan, first_bad


@jit(nogil=True)
def binary_accumulate(preds, target, has_ignore, ignore, boundaries, count, conf_sum, acc_sum):
    """Add each kept (pred, target) into the per-bin state, in input order (in place)."""
    n_bins = boundaries.size - 1
    for i in range(preds.size):
        t = target[i]
        if has_ignore and t == ignore:
            continue
        x = preds[i]
        j = _bin_left_closed(x, boundaries, n_bins)
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
        j = _bin_left_closed(x, boundaries, n_bins)
        c[j] += 1.0
        s[j] += x
        a[j] += t
    count[:] = c
    conf_sum[:] = s
    acc_sum[:] = a
    return 0, -1


@jit(nogil=True)
def multiclass_scan(preds, target, has_ignore, ignore):
    """One pass over (M, C) rows: the first kept row with a NaN (-1: none)."""
    m, c = preds.shape
    for i in range(m):
        if has_ignore and target[i] == ignore:
            continue
        for k in range(c):
            x = preds[i, k]
            if x != x:
                return i
    return -1


@jit(nogil=True, inline="always")
def _add_ones(x, m, one, exact):  # pragma: no cover - compiled
    """``x + one + one + ...`` (m times) in the dtype of x, each addition rounded, as
    torch's sequential ``scatter_add_`` of ones: x is a whole number >= 0, and
    ``exact`` (2**24 for float32, 2**53 for float64) the first whole number whose
    successor the dtype does not hold. Below it every addition is exact; from it on
    an addition rounds to even, which leaves x unchanged after at most one step."""
    if x < exact:
        room = np.int64(exact - x)
        if m <= room:
            return x + one * m
        x = exact
        m -= room
    while m > 0:
        nxt = x + one
        if nxt == x:
            break
        x = nxt
        m -= 1
    return x


@jit(nogil=True)
def _probability_rows(preds, target, has_ignore, ignore, boundaries, check, lo, hi, direct,
                      key, conf, conf_sum, counts):  # pragma: no cover - compiled
    """The top label of every kept row of lo..hi-1, in row order: its float32
    confidence goes straight into its bin's sum in ``conf_sum`` (``direct``), or
    into ``conf[i - lo]`` and its bin into ``key[i - lo]`` (-1 for an ignored row),
    for :func:`_merge_rows`; per bin the number of rows and of hits go into
    ``counts`` (int64, ``2 * (n_bins + 1)``: count, hits).

    With ``check``, returns the first kept row with a value outside [0, 1] or NaN;
    returns -1 when every kept row was binned.
    """
    n_bins = boundaries.size - 1
    sums = conf_sum.copy()  # local copies: the compiler keeps them apart from the input
    cells = np.zeros(counts.shape[0], np.int64)
    for i in range(lo, hi, 2):  # two rows at a time (the last one twice if odd)
        i2 = min(i + 1, hi - 1)
        best, arg, _, inside, best2, arg2, _, inside2 = row_scan_pair(preds, i, i2)
        t = target[i]
        if has_ignore and t == ignore:
            if not direct:
                key[i - lo] = -1
        elif check and not inside:
            return i
        else:  # the bin of its float32 confidence (as in _logit_rows)
            c32 = np.float32(best)
            j = _bin_left_closed(c32, boundaries, n_bins)
            if direct:
                sums[j] += c32
            else:
                key[i - lo] = j
                conf[i - lo] = c32
            cells[2 * j] += 1
            cells[2 * j + 1] += arg == t
        if i2 == i:
            break
        t = target[i2]
        if has_ignore and t == ignore:
            if not direct:
                key[i2 - lo] = -1
        elif check and not inside2:
            return i2
        else:
            c32 = np.float32(best2)
            j = _bin_left_closed(c32, boundaries, n_bins)
            if direct:
                sums[j] += c32
            else:
                key[i2 - lo] = j
                conf[i2 - lo] = c32
            cells[2 * j] += 1
            cells[2 * j + 1] += arg2 == t
    if direct:
        conf_sum[:] = sums
    counts[:] = cells
    return -1


@jit(nogil=True)
def _logit_rows(preds, target, has_ignore, ignore, boundaries, one, lo, hi, direct,
                key, conf, conf_sum, counts):  # pragma: no cover - compiled
    """:func:`_probability_rows` for logits: the top label of the softmax of each kept
    row (the arithmetic of :func:`_softmax_kernel`); returns the first kept row whose
    softmax is undefined (NaN), or -1."""
    k_cols = preds.shape[1]
    n_bins = boundaries.size - 1
    soft = np.empty((1, k_cols), dtype=preds.dtype)  # the row's softmax
    sums = conf_sum.copy()  # local copies: the compiler keeps them apart from the input
    cells = np.zeros(counts.shape[0], np.int64)
    for i in range(lo, hi):
        t = target[i]
        if has_ignore and t == ignore:
            if not direct:
                key[i - lo] = -1
            continue
        mx = preds[i, 0]
        for c in range(1, k_cols):
            if preds[i, c] > mx:
                mx = preds[i, c]
        total = one - one
        for c in range(k_cols):
            v = math.exp(preds[i, c] - mx)
            soft[0, c] = v
            total += v
        inv = one / total
        defined = True
        for c in range(k_cols):
            soft[0, c] = soft[0, c] * inv
            defined &= soft[0, c] == soft[0, c]
        if not defined:
            return i
        best, arg = first_max(soft, 0)
        c32 = np.float32(best)
        j = _bin_left_closed(c32, boundaries, n_bins)
        if direct:
            sums[j] += c32
        else:
            key[i - lo] = j
            conf[i - lo] = c32
        cells[2 * j] += 1
        cells[2 * j + 1] += arg == t
    if direct:
        conf_sum[:] = sums
    counts[:] = cells
    return -1


@jit(nogil=True)
def _merge_rows(key, conf, counts, one, exact, count, conf_sum, acc_sum):  # pragma: no cover
    """In input order: each buffered row's confidence into its bin's sum, one addition
    after another in the state's dtype (torch's ``scatter_add_``); then the counts
    and hits as that many additions of one (:func:`_add_ones`)."""
    for i in range(key.shape[0]):
        j = key[i]
        if j >= 0:
            conf_sum[j] += conf[i]
    for j in range(count.shape[0]):
        count[j] = _add_ones(count[j], counts[2 * j], one, exact)
        acc_sum[j] = _add_ones(acc_sum[j], counts[2 * j + 1], one, exact)
    return 0


def _rows_call(kernel, how, preds, target, has_ignore, ignore, boundaries, lo, hi, direct,
               conf_sum, n_cells):
    rows = 0 if direct else hi - lo
    return (kernel, (preds, target, has_ignore, ignore, boundaries, how, lo, hi, direct,
                     np.empty(rows, np.int32), np.empty(rows, np.float32), conf_sum,
                     np.zeros(n_cells, np.int64)))


def _call(kernel, args):
    return kernel(*args)


def multiclass_accumulate(preds, target, has_ignore, ignore, boundaries, count, conf_sum,
                          acc_sum, mode: int = ROWS) -> int:
    """Bin the top-label (first maximal column) confidence, as float32, and the hit of
    every kept row of the C-contiguous (M, C) ``preds`` into the per-bin state
    (``count``, ``conf_sum``, ``acc_sum``), in place.

    ``mode``: ``ROWS`` takes the rows as they are; ``PROBABILITIES`` refuses a row
    with a value outside [0, 1] or NaN; ``LOGITS`` bins the softmax of each row and
    refuses a row whose softmax is undefined. Returns -1, or a refused row (the
    state is then unchanged; of several, which one depends on the threads).

    From ``MULTICLASS_PARALLEL_MIN_N`` rows the batch is cut into one chunk per
    thread. The first chunk adds its confidences straight into a copy of the
    state, in row order; the others, at the same time, keep each row's bin and
    float32 confidence (8 bytes a row), which are then added after the first
    chunk's, in row order. So the per-bin sums are those of one sequential pass
    (torch's bits) whatever the threads; counts and hits are counted as integers.
    """
    m = preds.shape[0]
    if mode == LOGITS:
        kernel, how = _logit_rows, preds.dtype.type(1.0)
    else:
        kernel, how = _probability_rows, mode == PROBABILITIES
    n_cells = 2 * count.shape[0]
    sums = conf_sum.copy()
    nchunks = num_threads() if m >= MULTICLASS_PARALLEL_MIN_N else 1
    bounds = chunk_bounds(m, nchunks)
    calls = [_rows_call(kernel, how, preds, target, has_ignore, ignore, boundaries, lo, hi,
                        c == 0, sums, n_cells) for c, (lo, hi) in enumerate(bounds)]
    refused = [bad for bad in run_chunks(_call, calls) if bad >= 0]
    if refused:
        return min(refused)
    dtype = count.dtype
    one, exact = dtype.type(1.0), dtype.type(2.0 ** (np.finfo(dtype).nmant + 1))
    counts = calls[0][1][-1]
    for _, args in calls[1:]:
        counts += args[-1]
    new_count, new_acc = count.copy(), acc_sum.copy()
    empty = np.empty(0, np.int32), np.empty(0, np.float32)
    _merge_rows(*empty, counts, one, exact, new_count, sums, new_acc)  # the counts
    for _, args in calls[1:]:  # the buffered rows, in chunk order
        _merge_rows(args[9], args[10], np.zeros(n_cells, np.int64), one, exact, new_count,
                    sums, new_acc)
    count[:] = new_count
    conf_sum[:] = sums
    acc_sum[:] = new_acc
    return -1


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
