"""Per-bin statistics for the binned metrics ``ece()`` and ``mce()``
(``docs/definitions.md``, "Binned metrics").

Bins follow R: the breaks are ``seq(0, 1, length.out = B + 1)``, which equal
``numpy.linspace(0, 1, B + 1)`` exactly; bin ``b`` (0-based) holds
``breaks[b] < v <= breaks[b + 1]``, and 0 belongs to the first bin
(``cut(v, breaks, include.lowest = TRUE, right = TRUE)``).

One numba pass over the data per form (no Python loop per row or bin) gives
per-bin ``(count, sum_conf, sum_hit)`` arrays; ``ece_from_stats`` and
``mce_from_stats`` turn them into the metrics. The readable numpy oracles the
tests check these kernels against are in ``tests/oracles/binned.py``.

The same pass checks the values (the "checked" kernels): probabilities in
[0, 1] (NaN is not), 0/1 labels or class codes in range, rows that sum to 1.
Valid input, the common case, is thus read once; only when a check fails does
the input layer (``calibr._input``) look again, to build its message.

How the sums are accumulated (what a caller that must reproduce them bit for bit,
such as the grouped kernels, has to follow):

* Rows are cut into chunks that depend only on n (``CHUNKS`` chunks from
  ``PARALLEL_MIN_N`` rows on, else one); each chunk's sums start from zero and
  the chunk results are added in chunk order.
* Counts and hits are exact integers (int64 inside a chunk), so their order of
  addition does not matter.
* Binary and confidence forms: within a chunk ``[lo, hi)`` the values of row
  ``i`` go to lane ``(i - lo) % L`` (``L = lanes(bins)``: 4 for up to
  ``LANES_MAX_BINS`` bins, else 1); each lane sums its values in row order from
  0.0, and a bin's chunk sum is ``((lane0 + lane1) + lane2) + lane3``. Interleaved
  lanes keep neighbouring rows that fall in the same bin (sorted or concentrated
  data, confidences near 1) from waiting on each other's additions.
  :func:`binary_rows` is the compiled routine for one chunk.
* Classwise form: each (class, bin) sums its values in row order from 0.0 (a
  row's K values go to K different sums, so neighbouring rows rarely wait).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, read_only
from ._threads import chunk_bounds, num_threads, run_chunks
from .top_label import row_scan_pair

__all__ = [
    "bin_stats",
    "binary_rows",
    "cell_rows",
    "key_range",
    "binary_stats",
    "bin_gaps",
    "breaks",
    "checked_bin_stats",
    "classwise_stats",
    "confidence_stats",
    "ece_from_stats",
    "lanes",
    "mce_from_stats",
]


def breaks(bins: int) -> np.ndarray:
    """R's ``seq(0, 1, length.out = bins + 1)`` (identical doubles)."""
    return np.linspace(0.0, 1.0, bins + 1)


# --------------------------------------------------------------------------
# turning statistics into metrics


def bin_gaps(count, sum_conf, sum_hit):
    """The bins drawn (``count > 0``) and each bin's gap ``|sum_hit / count -
    sum_conf / count|`` (0 where the bin is empty)."""
    nonempty = count > 0
    safe = np.where(nonempty, count, 1.0)
    gap = np.abs(sum_hit / safe - sum_conf / safe)
    return nonempty, gap


def ece_from_stats(count, sum_conf, sum_hit) -> float:
    """ECE; for (K, bins) statistics, the mean over the K rows (classwise)."""
    nonempty, gap = bin_gaps(count, sum_conf, sum_hit)
    per = np.sum(np.where(nonempty, count * gap, 0.0), axis=-1) / np.sum(count, axis=-1)
    return float(np.mean(per))


def mce_from_stats(count, sum_conf, sum_hit) -> float:
    """MCE; for (K, bins) statistics, the maximum over everything (classwise)."""
    nonempty, gap = bin_gaps(count, sum_conf, sum_hit)
    return float(np.max(gap[nonempty]))


# --------------------------------------------------------------------------
# fast kernels (numba, one pass)
#
# The breaks are computed arithmetically: numpy's linspace(0, 1, B + 1) is
# exactly ``m * (1 / B)`` for m < B and 1.0 at the end (checked for every B up
# to 3000 in the tests), so no table look-up is needed per value. Large inputs
# are cut into a fixed number of chunks that run in threads on all cores; the
# chunking depends only on n, so results do not depend on the number of threads.
#
# Each chunk works in blocks of BLOCK rows, in two steps: first the checks and
# the bin of every row of the block, into a small index array (a branch-free
# loop that the compiler vectorises), then the additions into the per-bin sums
# (one scalar pass over data still in the L1 cache).

#: Inputs of at least this many rows are cut into ``CHUNKS`` chunks (in threads).
PARALLEL_MIN_N = 1 << 18
CHUNKS = 8

#: Rows checked and binned at once before their values are added (a multiple of LANES).
BLOCK = 2048

#: Interleaved partial sums per bin of the binary and confidence forms ...
LANES = 4
#: ... for at most this many bins (beyond, neighbouring rows rarely share a bin,
#: and L copies of many bins would only cost memory).
LANES_MAX_BINS = 4096


def lanes(bins: int) -> int:
    """The number of interleaved partial sums per bin (binary and confidence forms)."""
    return LANES if bins <= LANES_MAX_BINS else 1


@jit(nogil=True, inline="always")
def _bin_right_closed(v, bins, step):  # pragma: no cover - compiled
    """R's bin of v in [0, 1] (0-based): breaks[j] < v <= breaks[j+1], 0 in bin 0.

    ``m``, the nearest integer to ``v * bins``, names the break nearest to v:
    ``v * bins`` is within a few ulps of its exact value, and the breaks
    ``m * step`` within a few ulps of ``m / bins``, so v lies strictly between
    breaks ``m - 1`` and ``m + 1``. One comparison with break m (computed as
    ``m * step``, exactly the break) then settles the bin: m - 1 if
    ``v <= breaks[m]``, else m; the clamp maps 0 to bin 0 and 1.0 to the last
    bin whatever ``bins * step`` rounds to. Branch-free on purpose: with
    branches, random data costs a misprediction every few values. (The tests
    check it against the oracle on every break and its neighbouring doubles.)
    """
    m = int(v * bins + 0.5)
    j = m - 1 + np.int64(v > m * step)
    return min(max(j, 0), bins - 1)


@jit(nogil=True, inline="always")
def _class_code(t, offset, k):  # pragma: no cover - compiled
    """The 0-based class of label t (``t - offset``) if it is an integer in 0..k-1, else -1.

    Integer labels, and floats that hold an integer (R's codes as doubles); NaN and
    fractions give -1.
    """
    c = t - offset
    if c >= 0 and c < k:
        ci = np.int64(c)
        if ci == c:
            return ci
    return np.int64(-1)


@jit(nogil=True, inline="always")
def _log2(nlanes):  # pragma: no cover - compiled
    """log2 of a power of two (the lanes): index arithmetic by shifts, not products."""
    bits = 0
    while (1 << bits) < nlanes:
        bits += 1
    return bits


@jit(nogil=True, inline="always")
def _add_block(idx, values, nb, counts, sums):  # pragma: no cover - compiled
    """Step two: each of the ``nb`` rows of the block into its (bin, lane, hit) count
    and its (bin, lane) sum; ``idx[k] = (bin * L + lane) * 2 + hit``."""
    for k in range(nb):
        j = idx[k]  # unsigned: no check for negative indices
        counts[j] += 1
        sums[j >> np.uint32(1)] += values[k]


@jit(nogil=True, inline="always")
def _lane_totals(counts, sums, bins, nlanes, count, conf, hit):  # pragma: no cover
    """Per bin: the count and hits (exact), and the sum of the lanes in lane order."""
    for j in range(bins):
        base = j * nlanes
        c = np.int64(0)
        h = np.int64(0)
        s = 0.0
        for u in range(nlanes):
            c += counts[2 * (base + u)] + counts[2 * (base + u) + 1]
            h += counts[2 * (base + u) + 1]
            s += sums[base + u]
        count[j] = c
        conf[j] = s
        hit[j] = h


@jit(nogil=True, inline="always")
def binary_rows(p, y, lo, hi, bins, nlanes, counts, sums, idx,
                count, conf, hit):  # pragma: no cover - compiled
    """Per-bin count, sum of p and sum of y of rows ``lo..hi-1`` into ``count``,
    ``conf``, ``hit`` (float64, length ``bins``), checking as it goes.

    Returns False, with the outputs unset, as soon as a block holds a value of p
    outside [0, 1] (NaN too) or a y other than 0 and 1; True otherwise. ``counts``
    (int64, ``2 * nlanes * bins``), ``sums`` (float64, ``nlanes * bins``) and
    ``idx`` (uint32, ``BLOCK``) are scratch space, overwritten. ``nlanes`` is
    ``lanes(bins)``: row i goes to lane ``(i - lo) % nlanes`` (a power of two).
    """
    step = 1.0 / bins
    counts[:] = 0
    sums[:] = 0.0
    mask = nlanes - 1
    shift = _log2(nlanes) + 1
    for b0 in range(lo, hi, BLOCK):
        nb = min(BLOCK, hi - b0)
        pb = p[b0:b0 + nb]
        yb = y[b0:b0 + nb]
        good = True
        for k in range(nb):  # branch-free: vectorised
            v = pb[k]
            t = yb[k]
            inside = (v >= 0.0) & (v <= 1.0)
            good &= inside & ((t == 0) | (t == 1))
            j = _bin_right_closed(v if inside else 0.0, bins, step)
            idx[k] = np.uint32((j << shift) | ((k & mask) << 1) | np.int64(t != 0))
        if not good:
            return False
        _add_block(idx, pb, nb, counts, sums)
    _lane_totals(counts, sums, bins, nlanes, count, conf, hit)
    return True


def _binary_chunk(p, y, bins, nlanes, lo, hi):
    """:func:`binary_rows` of rows ``lo..hi-1`` into a fresh (3, bins) array. The
    scratch is numpy's (not allocated in compiled code), so that ``ece()``
    compiles one kernel, not a second one around it."""
    out = np.empty((3, bins))
    ok = binary_rows(p, y, lo, hi, bins, nlanes, np.empty(2 * nlanes * bins, np.int64),
                     np.empty(nlanes * bins), np.empty(BLOCK, np.uint32),
                     out[0], out[1], out[2])
    return out, ok


@jit(nogil=True)
def _confidence_chunk(p, codes, offset, tol, bins, nlanes, lo, hi):  # pragma: no cover
    """The binary statistics of the top-label confidence and its correctness, with
    the checks of a probability matrix: values in [0, 1], rows summing to 1 within
    ``tol``, labels ``codes - offset`` in 0..K-1."""
    k_cols = p.shape[1]
    step = 1.0 / bins
    counts = np.zeros(2 * nlanes * bins, np.int64)
    sums = np.zeros(nlanes * bins)
    idx = np.empty(BLOCK, np.uint32)
    top = np.empty(BLOCK)
    mask = nlanes - 1
    shift = _log2(nlanes) + 1
    out = np.empty((3, bins))
    for b0 in range(lo, hi, BLOCK):
        nb = min(BLOCK, hi - b0)
        good = True
        for k in range(0, nb, 2):  # two rows at a time (the last one twice if nb is odd)
            i = b0 + k
            i2 = min(i + 1, b0 + nb - 1)
            best, arg, total, inside, best2, arg2, total2, inside2 = row_scan_pair(p, i, i2)
            code = _class_code(codes[i], offset, k_cols)
            code2 = _class_code(codes[i2], offset, k_cols)
            good &= inside & (abs(total - 1.0) <= tol) & (code >= 0)
            good &= inside2 & (abs(total2 - 1.0) <= tol) & (code2 >= 0)
            r = best if inside else 0.0
            top[k] = r
            j = _bin_right_closed(r, bins, step)
            idx[k] = np.uint32((j << shift) | ((k & mask) << 1) | np.int64(arg == code))
            if i2 > i:
                r = best2 if inside2 else 0.0
                top[k + 1] = r
                j = _bin_right_closed(r, bins, step)
                idx[k + 1] = np.uint32((j << shift) | (((k + 1) & mask) << 1)
                                       | np.int64(arg2 == code2))
        if not good:
            return out, False
        _add_block(idx, top, nb, counts, sums)
    _lane_totals(counts, sums, bins, nlanes, out[0], out[1], out[2])
    return out, True


@jit(nogil=True)
def _classwise_chunk(p, codes, offset, tol, bins, nlanes, lo, hi):  # pragma: no cover
    """Per class and bin: the count and sum of the column's values, and the hits of
    the rows of that class (the class's own column), with the checks of
    :func:`_confidence_chunk`. ``nlanes`` is unused (one sum per class and bin).

    Step one bins every value of a block of rows (a flat, vectorised loop); step
    two adds them, two rows at a time: row a's value, then row b's, into each
    class's bin, so every (class, bin) still adds its values in row order, and
    the two rows' sums for the row-sum check (left to right from 0.0, as the
    input layer's scan) interleave instead of waiting on each other.
    """
    k_cols = p.shape[1]
    step = 1.0 / bins
    cells = k_cols * bins
    counts = np.zeros(cells, np.int64)
    hits = np.zeros(cells, np.int64)
    sums = np.zeros(cells)
    rows = max(2, BLOCK // k_cols)
    idx = np.empty(rows * k_cols, np.uint32)
    out = np.empty((k_cols, 3, bins))
    for r0 in range(lo, hi, rows):
        nr = min(rows, hi - r0)
        flat = p[r0:r0 + nr].reshape(nr * k_cols)
        good = True
        for q in range(nr * k_cols):  # branch-free: vectorised
            v = flat[q]
            inside = (v >= 0.0) & (v <= 1.0)
            good &= inside
            idx[q] = np.uint32(_bin_right_closed(v if inside else 0.0, bins, step))
        for k in range(0, nr, 2):  # rows k and k2 (the last row twice if nr is odd)
            k2 = min(k + 1, nr - 1)
            a = k * k_cols
            b = k2 * k_cols
            total_a = 0.0
            total_b = 0.0
            for c in range(k_cols):
                base = np.uint64(c * bins)  # unsigned: no negative-index checks
                total_a += flat[a + c]
                total_b += flat[b + c]
                cell = base + idx[a + c]
                counts[cell] += 1
                sums[cell] += flat[a + c]
                if k2 > k:
                    cell = base + idx[b + c]
                    counts[cell] += 1
                    sums[cell] += flat[b + c]
            code_a = _class_code(codes[r0 + k], offset, k_cols)
            code_b = _class_code(codes[r0 + k2], offset, k_cols)
            good &= (abs(total_a - 1.0) <= tol) & (code_a >= 0)
            good &= (abs(total_b - 1.0) <= tol) & (code_b >= 0)
            c = max(code_a, 0)  # a refused code is caught by ``good`` below
            hits[np.uint64(c * bins) + idx[a + c]] += 1
            if k2 > k:
                c = max(code_b, 0)
                hits[np.uint64(c * bins) + idx[b + c]] += 1
        if not good:
            return out, False
    for c in range(k_cols):
        for j in range(bins):
            out[c, 0, j] = counts[c * bins + j]
            out[c, 1, j] = sums[c * bins + j]
            out[c, 2, j] = hits[c * bins + j]
    return out, True


#: Memory for the per-chunk copies of the per-bin sums that are alive at once.
#: Each chunk keeps its own (K x) 3 x bins sums and scratch; with many bins and
#: classes, fewer chunks run at a time (never fewer than one), so that the chunks
#: of a large ``bins * K`` (bounded by calibr._input.MAX_BIN_CELLS) do not
#: multiply its memory by the number of chunks.
CHUNK_MEMORY = 1 << 28


def _run(chunk, args, n, bins, chunk_bytes):
    """``chunk(*args, bins, lanes(bins), lo, hi)`` over all rows, summed over the
    chunks in chunk order; None if a chunk found a value its checks refuse.

    The chunks (and so the sums, bit for bit) depend only on n; at most
    ``CHUNK_MEMORY`` bytes of chunk results and scratch (``chunk_bytes`` each) are
    alive at once, which only limits how many chunks run concurrently. Adding
    them one by one in chunk order is what ``np.sum(parts, axis=0)`` does,
    without stacking all of them.
    """
    nchunks = CHUNKS if n >= PARALLEL_MIN_N else 1
    nlanes = lanes(bins)
    args = tuple(read_only(a) if isinstance(a, np.ndarray) else a for a in args)
    calls = [(*args, bins, nlanes, lo, hi) for lo, hi in chunk_bounds(n, nchunks)]
    window = min(num_threads(), CHUNK_MEMORY // chunk_bytes - 1)
    total = None
    for part, ok in run_chunks(chunk, calls, window):
        if not ok:
            return None
        if total is None:
            total = part
        else:
            total += part
    return total


def _binary_checked(p, y, bins):
    nl = lanes(bins)
    stats = _run(_binary_chunk, (p, y), p.shape[0], bins, (24 * nl + 24) * bins + 4 * BLOCK)
    return None if stats is None else (stats[0], stats[1], stats[2])


def _confidence_checked(p, codes, offset, tol, bins):
    nl = lanes(bins)
    stats = _run(_confidence_chunk, (p, codes, offset, tol), p.shape[0], bins,
                 (24 * nl + 24) * bins + 12 * BLOCK)
    return None if stats is None else (stats[0], stats[1], stats[2])


def _classwise_checked(p, codes, offset, tol, bins):
    cells = bins * p.shape[1]
    stats = _run(_classwise_chunk, (p, codes, offset, tol), p.shape[0], bins,
                 48 * cells + 12 * BLOCK)
    return None if stats is None else (stats[:, 0], stats[:, 1], stats[:, 2])


def checked_bin_stats(p: np.ndarray, y: np.ndarray, offset: int, binary: bool, bins: int,
                      type: str, tol: float):
    """The statistics of :func:`bin_stats`, from unchecked input, or None if a value
    is refused.

    ``p``: float64, C-contiguous (a vector, or an (n, K) matrix). ``y``: any real
    dtype; for a vector ``p`` it must hold 0 and 1 only, for a matrix class codes
    ``offset .. K - 1 + offset`` (R's codes with ``offset=1``). Matrix rows must sum
    to 1 within ``tol``. Nothing is built for a message: on None, the input
    layer checks again to say what is wrong.
    """
    if binary:
        return _binary_checked(p, y, bins)
    if type == "confidence":
        return _confidence_checked(p, y, np.int64(offset), tol, bins)
    return _classwise_checked(p, y, np.int64(offset), tol, bins)


def _valid(stats):
    if stats is None:  # the inputs were checked by the input layer: a bug, not bad input
        raise RuntimeError("calibr: a binned kernel refused input that calibr had validated.")
    return stats


def binary_stats(p: np.ndarray, y: np.ndarray, bins: int):
    """Per-bin count, sum of p and sum of y; ``p`` in [0, 1], ``y`` exact 0/1 values."""
    return _valid(_binary_checked(np.ascontiguousarray(p), np.ascontiguousarray(y), bins))


def confidence_stats(p: np.ndarray, codes: np.ndarray, bins: int):
    """Per-bin statistics of the top-label confidence and its correctness
    (``codes`` 0-based)."""
    return _valid(_confidence_checked(np.ascontiguousarray(p), codes, np.int64(0), np.inf, bins))


def classwise_stats(p: np.ndarray, codes: np.ndarray, bins: int):
    """Per-class, per-bin statistics, arrays of shape (K, bins) (``codes`` 0-based)."""
    return _valid(_classwise_checked(np.ascontiguousarray(p), codes, np.int64(0), np.inf, bins))


def bin_stats(p: np.ndarray, y: np.ndarray, binary: bool, bins: int, type: str):
    """The statistics behind ece()/mce() of one form, for validated input: binary,
    or a matrix's ``"confidence"`` / ``"classwise"`` form."""
    if binary:
        return binary_stats(p, y, bins)
    if type == "confidence":
        return confidence_stats(p, y, bins)
    return classwise_stats(p, y, bins)


# --------------------------------------------------------------------------
# per-(group, bin) cells of a stream of row batches (calibr/_engines/polars.py)


@jit(nogil=True)
def key_range(g, skip):  # pragma: no cover - compiled
    """The least and the greatest value of ``g`` (int64) other than ``skip``;
    ``(1, 0)`` (empty) when every value is ``skip``."""
    lo = np.int64(1)
    hi = np.int64(0)
    first = True
    for i in range(g.shape[0]):
        v = g[i]
        if v == skip:
            continue
        if first:
            lo = v
            hi = v
            first = False
        else:
            lo = min(lo, v)
            hi = max(hi, v)
    return lo, hi


@jit(nogil=True)
def cell_rows(g, p, y, skip, base, bins, count, conf, hit):  # pragma: no cover - compiled
    """Add each row of a batch to its (group, bin) cell: ``count``, ``conf`` (the sum
    of ``p``) and ``hit`` (of ``y``) at ``(g - base) * bins + bin``, R's bin of
    ``p`` (:func:`_bin_right_closed`, the per-call kernels' rule). A row whose key
    is ``skip`` (a missing group key) is in no group. Returns False as soon as a
    row holds a ``p`` outside [0, 1] (NaN too) or a ``y`` other than 0 and 1 (the
    caller then counts each kind of bad value; the cells are then incomplete).
    ``g`` - ``base`` must lie in ``[0, count.size / bins)`` for every kept row."""
    step = 1.0 / bins
    for i in range(g.shape[0]):
        gi = g[i]
        if gi == skip:
            continue
        v = p[i]
        t = y[i]
        if not ((v >= 0.0) & (v <= 1.0) & ((t == 0.0) | (t == 1.0))):
            return False
        k = (gi - base) * bins + _bin_right_closed(v, bins, step)
        count[k] += 1.0
        conf[k] += v
        hit[k] += t
    return True
