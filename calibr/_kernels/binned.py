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
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from ._threads import chunk_bounds, num_threads, run_chunks
from .top_label import first_max

__all__ = [
    "bin_stats",
    "binary_stats",
    "breaks",
    "classwise_stats",
    "confidence_stats",
    "ece_from_stats",
    "mce_from_stats",
]


def breaks(bins: int) -> np.ndarray:
    """R's ``seq(0, 1, length.out = bins + 1)`` (identical doubles)."""
    return np.linspace(0.0, 1.0, bins + 1)


# --------------------------------------------------------------------------
# turning statistics into metrics


def _gaps(count, sum_conf, sum_hit):
    nonempty = count > 0
    safe = np.where(nonempty, count, 1.0)
    gap = np.abs(sum_hit / safe - sum_conf / safe)
    return nonempty, gap


def ece_from_stats(count, sum_conf, sum_hit) -> float:
    """ECE; for (K, bins) statistics, the mean over the K rows (classwise)."""
    nonempty, gap = _gaps(count, sum_conf, sum_hit)
    per = np.sum(np.where(nonempty, count * gap, 0.0), axis=-1) / np.sum(count, axis=-1)
    return float(np.mean(per))


def mce_from_stats(count, sum_conf, sum_hit) -> float:
    """MCE; for (K, bins) statistics, the maximum over everything (classwise)."""
    nonempty, gap = _gaps(count, sum_conf, sum_hit)
    return float(np.max(gap[nonempty]))


# --------------------------------------------------------------------------
# fast kernels (numba, one pass)
#
# The breaks are computed arithmetically: numpy's linspace(0, 1, B + 1) is
# exactly ``m * (1 / B)`` for m < B and 1.0 at the end (checked for every B up
# to 3000 in the tests), so no table look-up is needed per value. Large inputs
# are cut into a fixed number of chunks that run in threads on all cores; the
# chunking depends only on n, so results do not depend on the number of threads.

#: Inputs of at least this many rows are cut into ``CHUNKS`` chunks (in threads).
PARALLEL_MIN_N = 1 << 18
CHUNKS = 8


@jit(nogil=True, inline="always")
def _bin_right_closed(v, bins, step):  # pragma: no cover - compiled
    """R's bin of v in [0, 1] (0-based): breaks[j] < v <= breaks[j+1], 0 in bin 0.

    ``v * bins`` may round across a break; one comparison with each exact
    neighbouring break (``j * step``) settles it. Branch-free on purpose: with
    branches, random data costs a misprediction every few values.
    """
    j0 = min(int(v * bins), bins - 1)
    j = j0 - np.int64(v <= j0 * step) + np.int64(v > (j0 + 1) * step)
    return min(max(j, 0), bins - 1)


@jit(nogil=True)
def _binary_chunk(p, y, bins, step, lo, hi):  # pragma: no cover - compiled
    out = np.zeros((3, bins))
    for i in range(lo, hi):
        v = p[i]
        j = _bin_right_closed(v, bins, step)
        out[0, j] += 1.0
        out[1, j] += v
        out[2, j] += y[i]
    return out


@jit(nogil=True)
def _confidence_chunk(p, codes, bins, step, lo, hi):  # pragma: no cover - compiled
    out = np.zeros((3, bins))
    for i in range(lo, hi):
        r, top = first_max(p, i)
        j = _bin_right_closed(r, bins, step)
        out[0, j] += 1.0
        out[1, j] += r
        out[2, j] += top == codes[i]
    return out


@jit(nogil=True)
def _classwise_chunk(p, codes, bins, step, lo, hi):  # pragma: no cover - compiled
    k = p.shape[1]
    out = np.zeros((k, 3, bins))
    for i in range(lo, hi):
        for c in range(k):
            v = p[i, c]
            j = _bin_right_closed(v, bins, step)
            out[c, 0, j] += 1.0
            out[c, 1, j] += v
        yi = codes[i]
        out[yi, 2, _bin_right_closed(p[i, yi], bins, step)] += 1.0
    return out


#: Memory for the per-chunk copies of the per-bin sums that are alive at once.
#: Each chunk returns its own (K x) 3 x bins sums; with many bins and classes,
#: fewer chunks run at a time (never fewer than one), so that the chunks of a
#: large ``bins * K`` (bounded by calibr._validation.MAX_BIN_CELLS) do not
#: multiply its memory by the number of chunks.
CHUNK_MEMORY = 1 << 28


def _run(chunk, p, y, bins, cells):
    """The chunk kernel over all rows, summed over the chunks in chunk order.

    The chunks (and so the sums, bit for bit) depend only on n; at most
    ``CHUNK_MEMORY`` bytes of chunk results (``cells`` bins of 3 float64
    sums each) are alive at once, which only limits how many chunks run
    concurrently. Adding them one by one in chunk order is what
    ``np.sum(parts, axis=0)`` does, without stacking all of them.
    """
    n = p.shape[0]
    step = 1.0 / bins
    nchunks = CHUNKS if n >= PARALLEL_MIN_N else 1
    calls = [(p, y, bins, step, lo, hi) for lo, hi in chunk_bounds(n, nchunks)]
    window = min(num_threads(), CHUNK_MEMORY // (24 * cells) - 1)
    total = None
    for part in run_chunks(chunk, calls, window):
        if total is None:
            total = part
        else:
            total += part
    return total


def binary_stats(p: np.ndarray, y: np.ndarray, bins: int):
    """Per-bin count, sum of p and sum of y; ``y`` holds exact 0/1 values."""
    count, sum_conf, sum_hit = _run(_binary_chunk, p, y, bins, bins)
    return count, sum_conf, sum_hit


def confidence_stats(p: np.ndarray, codes: np.ndarray, bins: int):
    """Per-bin statistics of the top-label confidence and its correctness."""
    count, sum_conf, sum_hit = _run(_confidence_chunk, p, codes, bins, bins)
    return count, sum_conf, sum_hit


def classwise_stats(p: np.ndarray, codes: np.ndarray, bins: int):
    """Per-class, per-bin statistics, arrays of shape (K, bins)."""
    acc = _run(_classwise_chunk, p, codes, bins, bins * p.shape[1])
    return acc[:, 0], acc[:, 1], acc[:, 2]


def bin_stats(p: np.ndarray, y: np.ndarray, binary: bool, bins: int, type: str):
    """The statistics behind ece()/mce() of one form: binary, or a matrix's
    ``"confidence"`` / ``"classwise"`` form."""
    if binary:
        return binary_stats(p, y, bins)
    if type == "confidence":
        return confidence_stats(p, y, bins)
    return classwise_stats(p, y, bins)
