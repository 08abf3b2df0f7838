"""The compiled parts of ``multicalibration()`` (``docs/definitions.md``,
"Multicalibration: `multicalibration()`").

* :func:`segment_sums` -- one pass over the rows sorted by ``p`` for one
  combination of segment features: every segment of the combination (a cell of
  its codes) at once, with the running sum of its residuals, the extremes of
  that running sum, its weight and its null variance.
* :func:`first_positions` and :func:`distinct_upto` -- what the segments of a
  column need of its values: where each code first occurs, and whether a
  numeric column has more than ``max_values`` distinct values (without hashing
  them all).

The p-value of a sigma-scaled ECCE is ``calibr._kernels.cumulative.range_sf``,
the one tail of the range of Brownian motion (``calibr.ecce`` uses it too).

The readable oracles of the tests are in ``tests/oracles/multicalibration.py``.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["distinct_upto", "first_positions", "segment_sums"]


@jit(nogil=True)
def first_positions(codes, m):  # pragma: no cover - compiled
    """The first position of each code ``0..m-1`` in ``codes`` (int64), and at
    index ``m`` that of the first missing value (a negative code); ``n`` where
    a code does not occur."""
    n = codes.shape[0]
    out = np.full(m + 1, n, dtype=np.int64)
    left = m + 1
    for i in range(n):
        c = codes[i]
        if c < 0:
            c = m
        if out[c] == n:
            out[c] = i
            left -= 1
            if left == 0:
                break
    return out


@jit(nogil=True)
def distinct_upto(x, limit):  # pragma: no cover - compiled
    """The number of distinct non-NaN values of ``x`` (float64), counted up to
    ``limit + 1``: the scan stops once there are more than ``limit``."""
    seen = np.empty(min(limit, x.shape[0]) + 1)
    count = 0
    for i in range(x.shape[0]):
        v = x[i]
        if v != v:
            continue
        new = True
        for j in range(count):
            if seen[j] == v:
                new = False
                break
        if new:
            seen[count] = v
            count += 1
            if count > limit:
                break
    return count


@jit(nogil=True)
def segment_sums(codes, features, strides, ncells, a, b, c, last,
                 maxblock):  # pragma: no cover - compiled
    """Per cell of one combination of features: ``(rows, total, variance, high, low)``.

    ``codes`` (int32, features x n) holds each feature's code of every row, the
    rows sorted by ``p``; the combination is the features ``features`` (int64,
    0 to 3 of them), and a row's cell is ``sum_j codes[features[j], i] *
    strides[j]`` (mixed radix, the first feature most significant), one of
    ``ncells``. ``a``, ``b``, ``c`` are each row's ``w (y - p)``, ``w p (1 - p)``
    and ``w`` (``w = 1`` without weights); ``last[i]`` says that row ``i`` ends a
    block of tied ``p`` (the last row always does); ``maxblock`` is the length
    of the longest block.

    Per cell: its number of rows, the totals of ``c`` and ``b``, and the largest
    and smallest value of the running sum of ``a`` over its rows, the sum read
    at the end of each block of tied ``p`` only and the empty sum 0 included
    (so the order of tied rows does not matter).
    """
    n = a.shape[0]
    d = features.shape[0]
    rows = np.zeros(ncells, dtype=np.int64)
    total = np.zeros(ncells)
    variance = np.zeros(ncells)
    run = np.zeros(ncells)
    high = np.zeros(ncells)
    low = np.zeros(ncells)
    pending = np.empty(maxblock, dtype=np.int64)  # cells met in the open block of ties
    npending = 0
    for i in range(n):
        cell = 0
        for j in range(d):
            cell += codes[features[j], i] * strides[j]
        s = run[cell] + a[i]
        run[cell] = s
        variance[cell] += b[i]
        total[cell] += c[i]
        rows[cell] += 1
        if last[i]:
            if s > high[cell]:
                high[cell] = s
            elif s < low[cell]:
                low[cell] = s
            for k in range(npending):
                q = pending[k]
                t = run[q]
                if t > high[q]:
                    high[q] = t
                elif t < low[q]:
                    low[q] = t
            npending = 0
        else:
            pending[npending] = cell
            npending += 1
    return rows, total, variance, high, low
