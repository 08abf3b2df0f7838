"""The top label of a row of probabilities: its largest value and the first column
that holds it.

One rule everywhere (``docs/definitions.md``, "Binned metrics", confidence
form): ties go to the first maximal column, R's
``max.col(ties.method = "first")``. ``torch.max(dim=1)`` on a CPU follows the
same rule (checked against torch in ``tests/test_torchmetrics_compat.py``), so
the torchmetrics-compatible kernels use it too. Every kernel that needs a top
label calls :func:`first_max`, or :func:`row_scan` (:func:`row_scan_pair` for two
rows at once) to check the row in the same read; all are inlined into their
callers.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from ._threads import chunk_bounds, num_threads, run_chunks

__all__ = ["first_max", "row_scan", "row_scan_pair", "top_label", "top_label_class"]


@jit(nogil=True, inline="always")
def row_scan(p, i):  # pragma: no cover - compiled
    """One read of row ``i``: ``(max, first column of the max, sum, all in [0, 1])``.

    The maximum and its column follow the rule of this module (strict ``>``: a
    tie keeps the earlier column; -0.0 equals 0.0). The sum adds the columns
    left to right from 0.0, as the input layer's row-sum check does
    (``scans.count_bad_row_sums``), so a verdict on it is that check's verdict.
    ``all in [0, 1]`` is False for a NaN. With NaN in the row the maximum and
    its column are meaningless (callers then look only at the last value).
    """
    best = p[i, 0]
    arg = 0
    total = 0.0
    inside = True
    for k in range(p.shape[1]):
        v = p[i, k]
        total += v
        inside &= (v >= 0.0) & (v <= 1.0)
        if v > best:  # strict: a tie keeps the earlier column
            best = v
            arg = k
    return best, arg, total, inside


@jit(nogil=True, inline="always")
def row_scan_pair(p, i, j):  # pragma: no cover - compiled
    """:func:`row_scan` of rows i and j in one loop over the columns: the two rows'
    chains of additions and comparisons interleave, so that neither waits on the
    other (about a fifth faster on 10 columns). Returns row i's four values, then
    row j's."""
    best_i = p[i, 0]
    best_j = p[j, 0]
    arg_i = 0
    arg_j = 0
    total_i = 0.0
    total_j = 0.0
    inside_i = True
    inside_j = True
    for k in range(p.shape[1]):
        v = p[i, k]
        w = p[j, k]
        total_i += v
        total_j += w
        inside_i &= (v >= 0.0) & (v <= 1.0)
        inside_j &= (w >= 0.0) & (w <= 1.0)
        if v > best_i:  # strict: a tie keeps the earlier column
            best_i = v
            arg_i = k
        if w > best_j:
            best_j = w
            arg_j = k
    return best_i, arg_i, total_i, inside_i, best_j, arg_j, total_j, inside_j


@jit(nogil=True, inline="always")
def first_max(p, i):  # pragma: no cover - compiled
    """``(max_k p[i, k], the first k where it is reached)``; -0.0 equals 0.0.

    :func:`row_scan` without its checks (the compiler drops what is unused).
    Never called with NaN: the input layers refuse it before any kernel runs.
    """
    best, arg, _, _ = row_scan(p, i)
    return best, arg


@jit(nogil=True)
def _top_label_rows(p, codes, rho, hit, lo, hi):  # pragma: no cover - compiled
    for i in range(lo, hi, 2):  # two rows at a time (the last one twice if odd)
        j = min(i + 1, hi - 1)
        best, arg, _, _, best_j, arg_j, _, _ = row_scan_pair(p, i, j)
        rho[i] = best
        hit[i] = 1 if arg == codes[i] else 0
        rho[j] = best_j
        hit[j] = 1 if arg_j == codes[j] else 0
    return 0


@jit(nogil=True)
def _top_label_class_rows(p, codes, rho, hit, cls, lo, hi):  # pragma: no cover - compiled
    for i in range(lo, hi, 2):  # two rows at a time (the last one twice if odd)
        j = min(i + 1, hi - 1)
        best, arg, _, _, best_j, arg_j, _, _ = row_scan_pair(p, i, j)
        rho[i] = best
        cls[i] = arg
        hit[i] = 1 if arg == codes[i] else 0
        rho[j] = best_j
        cls[j] = arg_j
        hit[j] = 1 if arg_j == codes[j] else 0
    return 0


#: Matrices of at least this many rows are read in ``num_threads()`` chunks, in
#: threads (each row's result is its own: the chunks do not change any number).
PARALLEL_MIN_N = 1 << 16


def top_label(p: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidence ``max_k p_ik`` (float64) and correctness ``1{first argmax == y_i}``
    (uint8) of each row of the float64 matrix ``p``; ``codes`` are 0-based."""
    n = p.shape[0]
    rho = np.empty(n)
    hit = np.empty(n, np.uint8)
    nchunks = num_threads() if n >= PARALLEL_MIN_N else 1
    for _ in run_chunks(_top_label_rows, [(p, codes, rho, hit, lo, hi)
                                          for lo, hi in chunk_bounds(n, nchunks)]):
        pass
    return rho, hit


def top_label_class(p: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray]:
    """:func:`top_label` and the top label itself: ``(confidence, correctness, class)``,
    the class (int64, 0-based) the first column that holds the row's maximum (the
    predicted class of the top-label calibration error, ``docs/definitions.md``)."""
    n = p.shape[0]
    rho = np.empty(n)
    hit = np.empty(n, np.uint8)
    cls = np.empty(n, np.int64)
    nchunks = num_threads() if n >= PARALLEL_MIN_N else 1
    for _ in run_chunks(_top_label_class_rows, [(p, codes, rho, hit, cls, lo, hi)
                                                for lo, hi in chunk_bounds(n, nchunks)]):
        pass
    return rho, hit, cls
