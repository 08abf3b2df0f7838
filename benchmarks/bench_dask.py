"""Benchmark: the grouped summary on Dask against Dask's own groupby-sum.

    python benchmarks/bench_dask.py [--rows 20000000] [--groups 100] [--files 32]
                                    [--repeat 3] [--workers 1,2]

A partitioned Parquet dataset of binary rows (``p`` float32, ``y`` bool, a group
column ``g`` with ``--groups`` values) is written to a temporary folder (the size
used is printed; 2e8 rows, the issue's size, need about 2 GB of files and
minutes per run on 2 cores, so the default is smaller). Then, on a local
cluster of ``--workers`` worker processes (one thread each), interleaved
``--repeat`` times, the median times of

- ``calibr``: ``calibr.summarise(dd.read_parquet(dir).groupby("g"), p="p",
  y="y", metrics=["ece", "mce"]).compute()`` (exact: per-partition per-bin sums,
  merged; docs/dask.md);
- ``groupby.sum``: ``dd.read_parquet(dir).groupby("g")[["p", "y"]].sum()
  .compute()`` on the same files (one pass, the yardstick);

and their ratio, and the peak resident memory of each worker (``ru_maxrss``
after the runs, the workers restarted before each contender's runs). Nothing
is asserted: tests never time anything.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=2e7)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import calibr

    rows = int(args.rows)
    with tempfile.TemporaryDirectory() as root:
        t0 = time.perf_counter()
        write_dataset(root, rows, args.groups, args.files)
        size = sum(os.path.getsize(os.path.join(root, f)) for f in os.listdir(root))
        print(f"dataset: {rows:,} rows (p float32, y bool), {args.groups} groups, "
              f"{args.files} Parquet files, {size / 1e6:.0f} MB, written in "
              f"{time.perf_counter() - t0:.1f} s")

        def ours():
            return calibr.summarise(dd.read_parquet(root).groupby("g"), p="p", y="y",
                                    metrics=["ece", "mce"]).compute()

        def peer():
            return dd.read_parquet(root).groupby("g")[["p", "y"]].sum().compute()

        for workers in (int(w) for w in args.workers.split(",")):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                times: dict[str, list[float]] = {"calibr": [], "groupby.sum": []}
                peaks: dict[str, list[float]] = {}
                for name, func in (("calibr", ours), ("groupby.sum", peer)):
                    client.restart()
                    func()  # warm: imports and compiled kernels on every worker
                    for _ in range(args.repeat):
                        t = time.perf_counter()
                        func()
                        times[name].append(time.perf_counter() - t)
                    peaks[name] = sorted(client.run(_peak_mb).values())
                med = {k: statistics.median(v) for k, v in times.items()}
                print(f"\n{workers} worker process(es), 1 thread each, median of {args.repeat}:")
                for name in times:
                    print(f"  {name:12s} {med[name]:8.2f} s   peak RSS per worker: "
                          + ", ".join(f"{m:.0f} MB" for m in peaks[name]))
                print(f"  ratio calibr / groupby.sum: {med['calibr'] / med['groupby.sum']:.2f}")
                print(f"  rows per second (calibr): {rows / med['calibr']:,.0f}")


if __name__ == "__main__":
    main()
