"""Running nogil numba kernels on all cores with plain Python threads.

Not numba's ``parallel=True``: its GNU OpenMP layer makes any later ``fork()``
of the process (``multiprocessing`` on Linux, for one) terminate the child. The
kernels here are compiled with ``nogil=True``, so threads run them truly in
parallel, and a fresh pool per call leaves nothing behind to break a fork.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba

__all__ = ["in_threads", "num_threads", "over_chunks"]


def num_threads() -> int:
    """Threads to use: numba's setting (``NUMBA_NUM_THREADS``, by default the CPUs)."""
    return max(1, int(numba.config.NUMBA_NUM_THREADS))


def in_threads(fn: Callable, nchunks: int, *args) -> list:
    """``[fn(*args, c, nchunks) for c in range(nchunks)]``, the chunks in threads."""
    if nchunks == 1:
        return [fn(*args, 0, 1)]
    with ThreadPoolExecutor(max_workers=min(nchunks, num_threads())) as pool:
        futures = [pool.submit(fn, *args, c, nchunks) for c in range(nchunks)]
        return [f.result() for f in futures]


def over_chunks(fn: Callable, n: int, nchunks: int, *args) -> list:
    """``[fn(*args, lo, hi) for each of nchunks contiguous ranges of range(n)]``.

    The ranges depend only on ``n`` and ``nchunks``, never on the number of
    threads, so the results (and their summation order) are the same everywhere.
    """
    bounds = [(c * n // nchunks, (c + 1) * n // nchunks) for c in range(nchunks)]
    if nchunks == 1 or num_threads() == 1:
        return [fn(*args, lo, hi) for lo, hi in bounds]
    with ThreadPoolExecutor(max_workers=min(nchunks, num_threads())) as pool:
        futures = [pool.submit(fn, *args, lo, hi) for lo, hi in bounds]
        return [f.result() for f in futures]
