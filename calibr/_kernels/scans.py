"""One-pass scans of the input layer (``calibr._input``): count the values
that break a rule, so that valid input costs one vectorised pass and only bad
input pays for building the message.

Large inputs run as a fixed number of chunks in threads (the counts do not
depend on the number of threads).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, read_only
from ._threads import chunk_bounds, run_chunks

__all__ = ["count_bad_row_sums", "count_not_binary", "count_outside_unit"]

#: Inputs with at least this many values are scanned in ``CHUNKS`` threads.
PARALLEL_MIN_N = 1 << 20
CHUNKS = 4
#: Vectors of fewer values are scanned by numpy: microseconds either way, and a
#: small input's first call then compiles no scan kernel (a few tenths of a
#: second each, per dtype).
NUMPY_MAX_N = 1 << 16


@jit(nogil=True)
def _count_outside_unit(x, lo, hi):  # pragma: no cover - compiled
    """Number of values of x[lo:hi] not in [0, 1] (NaN and inf included)."""
    c = 0
    for v in x[lo:hi]:  # iterating a slice (not x[i]) lets LLVM vectorise the loop
        c += not (v >= 0.0 and v <= 1.0)
    return c


@jit(nogil=True)
def _count_not_binary(y, lo, hi):  # pragma: no cover - compiled
    """Number of values of y[lo:hi] other than 0 and 1."""
    c = 0
    for v in y[lo:hi]:
        c += (v != 0) & (v != 1)
    return c


@jit(nogil=True)
def _count_bad_row_sums(p, tol, lo, hi):  # pragma: no cover - compiled
    """Number of rows of p[lo:hi] whose sum is more than tol away from 1."""
    c = 0
    for row in p[lo:hi]:
        s = 0.0
        for v in row:
            s += v
        c += abs(s - 1.0) > tol
    return c


def _count(kernel, x: np.ndarray, *args) -> int:
    x = read_only(x)
    nchunks = CHUNKS if x.size >= PARALLEL_MIN_N else 1
    calls = [(x, *args, lo, hi) for lo, hi in chunk_bounds(x.shape[0], nchunks)]
    return sum(run_chunks(kernel, calls))


def count_outside_unit(x: np.ndarray) -> int:
    """Values of the vector ``x`` outside [0, 1], NaN and inf included."""
    if x.size < NUMPY_MAX_N:
        return int(np.count_nonzero(~((x >= 0.0) & (x <= 1.0))))
    return _count(_count_outside_unit, x)


def count_not_binary(y: np.ndarray) -> int:
    """Values of the vector ``y`` other than 0 and 1."""
    if y.size < NUMPY_MAX_N:
        return int(np.count_nonzero((y != 0) & (y != 1)))
    return _count(_count_not_binary, y)


def count_bad_row_sums(p: np.ndarray, tol: float) -> int:
    """Rows of the C-contiguous matrix ``p`` whose sum is more than ``tol`` from 1."""
    return _count(_count_bad_row_sums, p, tol)
