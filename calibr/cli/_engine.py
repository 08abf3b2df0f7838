"""Where the report of a directory or glob FILE is computed (``docs/cli.md``,
"Datasets of many files"): by Dask's threads in this process (the default: no
cluster to start), on a local cluster of worker processes when the files are
large for this machine's memory, or on the Dask scheduler at ``--scheduler``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass

from ._errors import CLIError, _detail

#: Seconds to wait for the scheduler at --scheduler (distributed's own default, 30 s,
#: is long to wait for a mistyped address; a running scheduler answers in far less).
SCHEDULER_TIMEOUT = 10

#: Files whose total size on disk is more than this share of the memory available
#: are computed on a local cluster, whose workers have memory limits and spill to
#: disk, instead of in this process. Decoded, Parquet takes several times its size
#: on disk.
MEMORY_SHARE = 0.25

#: What installs calibr's ``dask`` extra (calibr itself is not on PyPI).
DASK_INSTALL = "pip install 'dask[dataframe,distributed]'"


def available_memory() -> int | None:
    """The memory available to a new process, in bytes (None: unknown)."""
    try:
        import psutil  # a dependency of distributed
    except ImportError:
        pass
    else:
        return int(psutil.virtual_memory().available)
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not on this system
        return None


def _size(nbytes: int | None) -> str:
    value = float(nbytes or 0)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            break
        value /= 1000
    return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"


def _need_distributed(what: str) -> None:
    """A CLIError ("``what`` needs dask.distributed ...") if it is not installed."""
    try:
        import distributed  # noqa: F401
    except ImportError as err:
        raise CLIError(f"{what} needs dask.distributed ({_detail(err)}); install it with "
                       f"`{DASK_INSTALL}`.") from None


@dataclass
class Engine:
    """Where Dask computes a report: ``"threads"`` in this process, a local
    ``"cluster"`` of worker processes, or the ``"scheduler"`` at ``address``."""

    kind: str
    address: str | None = None
    size: int = 0  # the files' total size on disk, in bytes
    available: int | None = None  # the memory available when the engine was chosen
    workers: int | None = None  # of the local cluster, once it has started

    def header(self) -> str:
        """The table output's line that says where the report was computed."""
        if self.kind == "scheduler":
            return f"engine: dask, the scheduler at {self.address} (--scheduler)"
        if self.kind == "cluster":
            return (f"engine: dask, a local cluster of {self.workers} worker processes (the "
                    f"files, {_size(self.size)} on disk, are more than {MEMORY_SHARE:.0%} of "
                    f"the {_size(self.available)} of available memory)")
        from dask.system import CPU_COUNT

        return f"engine: dask, {CPU_COUNT} threads in this process (no cluster)"

    @contextlib.contextmanager
    def compute(self) -> Iterator[None]:
        """The context in which ``dask.compute`` runs on this engine."""
        if self.kind == "threads":
            import dask

            with dask.config.set(scheduler="threads"):  # also with a distributed Client
                yield
            return
        from distributed import Client, LocalCluster
        from distributed.scheduler import KilledWorker

        with contextlib.ExitStack() as stack:
            if self.kind == "cluster":
                cluster = stack.enter_context(LocalCluster(
                    processes=True, threads_per_worker=1, dashboard_address=None,
                    silence_logs=logging.ERROR))
                stack.enter_context(Client(cluster))
                self.workers = len(cluster.workers)
            else:
                stack.enter_context(_connect(self.address))
            try:
                yield
            except KilledWorker:  # as out of memory in this process: the input's size
                raise CLIError("a Dask worker died while computing the report (distributed's "
                               "KilledWorker), e.g. out of memory; use smaller files, or a "
                               "cluster with more memory per worker (--scheduler).") from None


def _connect(address: str):
    """A client of the Dask scheduler at ``address``, or a CLIError that says why not."""
    from distributed import Client

    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT)
    except ValueError as err:  # not an address, e.g. without a port
        raise CLIError(f"--scheduler {address}: not the address of a Dask scheduler "
                       f"({_detail(err)}); write e.g. tcp://scheduler-host:8786.") from None
    except (OSError, asyncio.TimeoutError):  # refused, unknown host, no answer
        raise CLIError(f"--scheduler: could not reach the Dask scheduler at {address} "
                       f"within {SCHEDULER_TIMEOUT} s: is it running?") from None


def choose(files: list[str], scheduler: str | None) -> Engine:
    """The engine of the report of ``files`` (a directory's or a glob's):
    ``--scheduler`` if given, else a local cluster if the files take more than
    ``MEMORY_SHARE`` of the available memory, else threads in this process."""
    if scheduler is not None:
        _need_distributed("--scheduler")
        return Engine("scheduler", address=scheduler)
    size = 0
    for name in files:
        try:
            size += os.path.getsize(name)
        except OSError as err:
            raise CLIError(f"{name}: cannot read it: {err.strerror or _detail(err)}.") from None
    available = available_memory()
    if available is not None and size > MEMORY_SHARE * available:
        _need_distributed(f"the files, {_size(size)} on disk, are more than {MEMORY_SHARE:.0%} "
                          f"of the {_size(available)} of available memory, so they are "
                          "computed on a local Dask cluster, which")
        return Engine("cluster", size=size, available=available)
    return Engine("threads", size=size, available=available)
