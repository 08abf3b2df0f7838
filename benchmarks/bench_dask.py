"""Benchmark: the grouped summary on Dask against Dask's own groupby-sum.

    python benchmarks/bench_dask.py [--rows 2e7] [--groups 100] [--files 32]
        [--repeat 3] [--workers 1,2] [--metrics ece,mce,skce] [--skce-rows 0]
        [--dir DIR]

A partitioned Parquet dataset of binary rows (``p`` float32, ``y`` bool, a group
column ``g`` with ``--groups`` values) is written to a temporary folder, or to
``--dir`` and kept (the size is printed; 2e8 rows, the size measured in
docs/dask.md, are about 1.2 GB of files and minutes per run on 2 cores, so the
default is smaller).
Then, on a local cluster of ``--workers`` worker processes (one thread each),
``--repeat`` timed runs after a warm-up run of each of

- ``calibr``: ``calibr.summarise(dd.read_parquet(dir).groupby("g"), p="p",
  y="y", metrics=[...]).compute()`` (ece/mce exact from per-partition per-bin
  sums, merged; skce group by group after an exchange of the rows by group;
  docs/dask.md);
- ``groupby.sum``: ``dd.read_parquet(dir).groupby("g")[["p", "y"]].sum()
  .compute()`` on the same files (one pass, the yardstick);

with the median, min and max times, the ratio (median and run by run), and the
peak resident memory of each worker during the timed runs (the kernel's
high-water mark, reset after the warm-up) above its resident memory then,
against the in-memory size of one partition. ``--skce-rows N`` also times the
exact scalar ``skce(p, y, "uq", 0.2)`` on N rows of one group (Dask's global
sort, then one scan per partition) on 2 workers. Nothing is asserted: tests
never time anything.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time

import numpy as np
import pandas as pd


def write_dataset(root: str, rows: int, groups: int, files: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    per = -(-rows // files)
    for i in range(files):
        n = min(per, rows - i * per)
        if n <= 0:
            break
        p = rng.random(n, dtype=np.float32)
        frame = pd.DataFrame({
            "g": rng.integers(0, groups, n).astype(np.int32),
            "p": p,
            "y": rng.random(n, dtype=np.float32) < p,
        })
        frame.to_parquet(os.path.join(root, f"part-{i:04d}.parquet"), index=False)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _ready() -> float:
    """Import what the runs import, and return the resident memory then."""
    import dask.dataframe  # noqa: F401

    import calibr  # noqa: F401
    return _rss_mb()


def _reset_peak() -> float:
    """After the warm-up run (imports, compiled kernels): collect garbage, reset
    the kernel's high-water mark of this process (``/proc/self/clear_refs``) and
    return the resident memory, the baseline of the timed runs."""
    import gc

    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _rss_mb()


def _hwm_mb() -> float:
    """The resident high-water mark since :func:`_reset_peak` (VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=2e7)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--metrics", default="ece,mce,skce")
    parser.add_argument("--skce-rows", type=float, default=0,
                        help="also time the exact scalar skce() on this many rows")
    parser.add_argument("--dir", default=None,
                        help="keep the dataset here (written if absent)")
    args = parser.parse_args()

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import calibr

    rows = int(args.rows)
    metrics = args.metrics.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.dir or tmp
        os.makedirs(root, exist_ok=True)
        t0 = time.perf_counter()
        if not os.listdir(root):
            write_dataset(root, rows, args.groups, args.files)
        files = sorted(os.listdir(root))
        size = sum(os.path.getsize(os.path.join(root, f)) for f in files)
        part_mb = pd.read_parquet(os.path.join(root, files[0])).memory_usage(
            deep=True, index=False).sum() / 2**20
        print(f"dataset: {rows:,} rows (p float32, y bool), {args.groups} groups, "
              f"{len(files)} Parquet files, {size / 1e6:.0f} MB on disk, ready in "
              f"{time.perf_counter() - t0:.1f} s; one partition in memory: {part_mb:.0f} MiB")

        def ours():
            return calibr.summarise(dd.read_parquet(root).groupby("g"), p="p", y="y",
                                    metrics=metrics).compute()

        def peer():
            return dd.read_parquet(root).groupby("g")[["p", "y"]].sum().compute()

        def scalar():
            ddf = dd.read_parquet(skce_root)
            return calibr.skce(ddf["p"], ddf["y"], "uq", 0.2).compute()

        for workers in (int(w) for w in args.workers.split(",")):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                times: dict[str, list[float]] = {"calibr": [], "groupby.sum": []}
                peaks: dict[str, list[float]] = {}
                bases: dict[str, list[float]] = {}
                for name, func in (("calibr", ours), ("groupby.sum", peer)):
                    client.restart()
                    client.run(_ready)
                    func()  # warm: imports and compiled kernels on every worker
                    base = client.run(_reset_peak)
                    for _ in range(args.repeat):
                        t = time.perf_counter()
                        func()
                        times[name].append(time.perf_counter() - t)
                    hwm = client.run(_hwm_mb)
                    order = sorted(hwm)
                    peaks[name] = [hwm[w] for w in order]
                    bases[name] = [base[w] for w in order]
                med = {k: statistics.median(v) for k, v in times.items()}
                print(f"\n{workers} worker process(es), 1 thread each, {args.repeat} runs "
                      f"(median [min, max]); metrics {metrics}:")
                for name in times:
                    grow = [p - b for p, b in zip(peaks[name], bases[name], strict=True)]
                    print(f"  {name:12s} {med[name]:8.2f} s [{min(times[name]):.2f}, "
                          f"{max(times[name]):.2f}]   peak RSS per worker: "
                          + ", ".join(f"{m:.0f}" for m in peaks[name])
                          + " MiB (above the warm baseline: "
                          + ", ".join(f"{g:.0f}" for g in grow)
                          + f" MiB = {max(grow) / part_mb:.1f}x one partition)")
                ratios = [a / b for a, b in zip(times["calibr"], times["groupby.sum"],
                                                strict=True)]
                print(f"  ratio calibr / groupby.sum: {med['calibr'] / med['groupby.sum']:.2f} "
                      f"(run by run {min(ratios):.2f} to {max(ratios):.2f})")
                print(f"  rows per second (calibr): {rows / med['calibr']:,.0f}")

    if args.skce_rows:
        n = int(args.skce_rows)
        with tempfile.TemporaryDirectory() as skce_root:
            write_dataset(skce_root, n, 1, max(args.files, n // 5_000_000))
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                client.run(_ready)
                t = time.perf_counter()
                value = scalar()
                first = time.perf_counter() - t
                t = time.perf_counter()
                scalar()
                second = time.perf_counter() - t
                print(f"\nexact scalar skce(p, y, 'uq', 0.2) on {n:,} rows (global sort and "
                      f"one scan), 2 workers: {first:.1f} s cold, {second:.1f} s warm; "
                      f"value {value:.6g}; peak RSS per worker "
                      + ", ".join(f"{m:.0f}" for m in sorted(client.run(_peak_mb).values()))
                      + " MiB")


if __name__ == "__main__":
    main()
