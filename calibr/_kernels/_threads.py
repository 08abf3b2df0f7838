"""The one chunk runner: nogil numba kernels on all cores, with plain Python threads.

Not numba's ``parallel=True``: its GNU OpenMP layer makes any later ``fork()``
of the process (``multiprocessing`` on Linux, for one) terminate the child. The
kernels run by :func:`run_chunks` are compiled with ``nogil=True``, so threads
run them truly in parallel, and a fresh pool per call leaves nothing behind to
break a fork.

Every caller splits its work into a number of chunks that depends only on the
size of the input (never on the number of threads) and combines the chunk
results in chunk order, so that the results are the same bits on every machine.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numba

__all__ = ["chunk_bounds", "num_threads", "run_chunks"]


def num_threads() -> int:
    """Threads to use: numba's setting (``NUMBA_NUM_THREADS``, by default the CPUs)."""
    return max(1, int(numba.config.NUMBA_NUM_THREADS))


def chunk_bounds(n: int, nchunks: int) -> list[tuple[int, int]]:
    """``nchunks`` contiguous ranges ``(lo, hi)`` that cover ``range(n)`` exactly once."""
    return [(c * n // nchunks, (c + 1) * n // nchunks) for c in range(nchunks)]


def run_chunks(fn: Callable, calls: Sequence[tuple], window: int | None = None) -> Iterator:
    """Yield ``fn(*args)`` for each ``args`` in ``calls``, in the order of ``calls``.

    The calls run in threads, at most ``window`` of them (default and upper bound:
    :func:`num_threads`) submitted and not yet consumed at any time, which bounds
    the memory of the results alive at once. With one call or a window of one they
    run one after another in this thread. The order of the results never depends
    on the threads.
    """
    limit = num_threads() if window is None else min(max(1, window), num_threads())
    window = min(len(calls), limit)
    if window <= 1:
        for args in calls:
            yield fn(*args)
        return
    with ThreadPoolExecutor(max_workers=window) as pool:
        pending = deque(pool.submit(fn, *args) for args in calls[:window])
        following = iter(calls[window:])
        while pending:
            part = pending.popleft().result()
            nxt = next(following, None)
            if nxt is not None:
                pending.append(pool.submit(fn, *nxt))
            yield part
