"""Benchmark: ``summarise(ece, mce)`` on the lazy engines against each engine's own
grouped sum, and eager polars input against numpy input.

    python benchmarks/bench_engines.py [--rows 1e8] [--groups 10000] [--files 20]
        [--repeat 3] [--engines polars,duckdb,spark] [--dir DIR] [--eager-rows 1e7]
        [--key-type int32|int64|string]

A Parquet dataset of binary rows (``g`` int32 with ``--groups`` values, or
int64 (pandas' default) or a string with ``--key-type``, ``p``
float64 in [0, 1), ``y`` int8 drawn from ``p``) is written to a temporary folder,
or to ``--dir`` and kept (reused when it holds the same rows). Then, for each
engine, in a fresh process per engine (so that each process's peak memory is its
own), a warm-up call of each, then ``--repeat`` timed rounds of

- ``calibr``: ``calibr.summarise(source, "p", "y", by="g", metrics=["ece",
  "mce"])`` on the engine's lazy source of the files (polars ``scan_parquet``,
  DuckDB ``read_parquet``, Spark ``spark.read.parquet`` on ``local[2]``): the
  bin of each row and the per-(group, bin) sums computed by the engine, the
  metrics on the driver (docs/engines.md);
- ``peer``: the engine's own grouped sum of the same two columns of the same
  files (polars ``group_by("g").agg(sum)`` with its streaming engine, as calibr
  collects, DuckDB ``GROUP BY g ... SUM``,
  Spark ``groupBy("g").sum()``), collected;
- ``cells``: the engine's own grouped sum of the same columns per (group,
  ``floor(10 p)``): as many cells as calibr's query with 10 bins, the floor of
  what any query that sums per (group, bin) costs on that engine;

each round printing both times and their ratio; the summary gives the range of
the ratios over the rounds, and the process's peak resident memory (the driver:
this Python process; for Spark the JVM is another process with its own limit,
``spark.driver.memory``). Driver memory flat in n: run twice with different
``--rows`` and compare the peaks; the part that grows with the data is the peak
less the peak after one call of calibr's summary on a Parquet file of 1,000 rows
(imports, compiled kernels, the engine's start: the same at every n).
``--eager-rows N`` times ``calibr.ece`` of a polars Series against the same
values as numpy arrays (n = N). The targets are
in benchmarks/README.md ("Engines"). Nothing is asserted: tests never time
anything.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: The targets of the ratio calibr / peer, per engine.
TARGETS = {"polars": 2.0, "duckdb": 2.0, "spark": 3.0}
#: The target of calibr / the engine's own (group, bin) grouped sum, per engine.
FLOOR_TARGET = 1.3
EAGER_TARGET = 1.10  # polars input at most 10% over numpy input


def write_dataset(root: str, rows: int, groups: int, files: int, seed: int = 0,
                  key_type: str = "int32") -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = Path(root, "_ROWS")  # a leading _: Spark skips it
    written = f"{rows} {groups} {files} {seed}" + ("" if key_type == "int32" else f" {key_type}")
    if stamp.exists() and stamp.read_text() == written:
        return
    for old in glob.glob(os.path.join(root, "*.parquet")):
        os.remove(old)
    rng = np.random.default_rng(seed)
    per = -(-rows // files)
    for i in range(files):
        n = min(per, rows - i * per)
        if n <= 0:
            break
        p = rng.random(n)
        g = pa.array(rng.integers(0, groups, n).astype(np.int32))
        g = g.cast(pa.string()) if key_type == "string" else g.cast(getattr(pa, key_type)())
        table = pa.table({"g": g, "p": p, "y": (rng.random(n) < p).astype(np.int8)})
        pq.write_table(table, os.path.join(root, f"part-{i:04d}.parquet"))
    stamp.write_text(written)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def _cases(engine: str, root: str):
    """``(calibr, peer, cells, stop)``: three callables on the engine's lazy source of
    the files (calibr's summary, the grouped sum per group, the grouped sum per
    (group, tenth of p): as many cells as calibr's query with 10 bins), and what to
    call when done."""
    import calibr

    files = os.path.join(root, "*.parquet")
    metrics = ["ece", "mce"]
    if engine == "polars":
        import polars as pl

        def source():
            return pl.scan_parquet(files)

        return (lambda: calibr.summarise(source(), "p", "y", by="g", metrics=metrics),
                lambda: source().group_by("g").agg(pl.col("p").sum(), pl.col("y").sum())
                .collect(engine="streaming"),
                lambda: source().group_by("g", (pl.col("p") * 10).floor().alias("b"))
                .agg(pl.col("p").sum(), pl.col("y").sum()).collect(engine="streaming"),
                lambda: None)
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()

        def source():
            return con.read_parquet(files)

        return (lambda: calibr.summarise(source(), "p", "y", by="g", metrics=metrics),
                # to_arrow_table, as calibr's collect (DuckDB 2's .arrow() is a reader)
                lambda: con.sql(f"SELECT g, SUM(p), SUM(y) FROM read_parquet('{files}') "
                                "GROUP BY g").to_arrow_table(),
                lambda: con.sql(f"SELECT g, floor(p * 10) AS b, SUM(p), SUM(y) FROM "
                                f"read_parquet('{files}') GROUP BY g, b").to_arrow_table(),
                con.close)
    if engine == "spark":
        from pyspark.sql import SparkSession

        spark = (SparkSession.builder.master("local[2]").appName("bench_engines")
                 .config("spark.ui.enabled", "false")
                 .config("spark.sql.shuffle.partitions", "4")
                 .config("spark.driver.memory", "4g").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")

        def source():
            return spark.read.parquet(root)

        from pyspark.sql import functions as F

        return (lambda: calibr.summarise(source(), "p", "y", by="g", metrics=metrics),
                lambda: source().groupBy("g").sum("p", "y").collect(),
                lambda: source().groupBy("g", F.floor(F.col("p") * 10).alias("b"))
                .sum("p", "y").collect(), spark.stop)
    raise SystemExit(f"unknown engine {engine!r}")


def run_engine(engine: str, root: str, repeat: int) -> dict:
    """One engine's rounds, in this process: the times, and the peak memory."""
    with tempfile.TemporaryDirectory() as tiny:
        # the fixed part: imports, compiled kernels and the engine's start, on 1,000 rows
        write_dataset(tiny, 1000, 10, 1)
        _cases(engine, tiny)[0]()
    fixed = _peak_mb()
    ours, peer, cells, stop = _cases(engine, root)
    ours()  # warm-up on the data: the engine's caches
    ours()
    mine = _peak_mb()  # calibr's own peak: before any peer query has run
    peer()
    cells()
    rounds, floor = [], []
    for _ in range(repeat):
        t_ours = _timed(ours)
        t_peer = _timed(peer)
        t_cells = _timed(cells)
        rounds.append((t_ours, t_peer))
        floor.append((t_cells, t_peer))
    stop()
    return {"rounds": rounds, "cells": floor, "peak_mb": mine, "peak_fixed_mb": fixed}


def run_eager(rows: int, repeat: int) -> dict:
    import polars as pl

    import calibr

    rng = np.random.default_rng(1)
    p = rng.random(rows)
    y = (rng.random(rows) < p).astype(np.int64)
    ps, ys = pl.Series("p", p), pl.Series("y", y)
    calibr.ece(p, y)
    calibr.ece(ps, ys)
    assert calibr.ece(ps, ys) == calibr.ece(p, y)
    rounds = []
    for _ in range(repeat):  # each round: the best of 7 calls of each (~10 ms a call)
        t_np = min(_timed(lambda: calibr.ece(p, y)) for _ in range(7))
        t_pl = min(_timed(lambda: calibr.ece(ps, ys)) for _ in range(7))
        rounds.append((t_pl, t_np))
    return {"rounds": rounds}


def _child(case: str, root: str, repeat: int, rows: int) -> dict:
    cmd = [sys.executable, __file__, "--child", case, "--dir", root, "--repeat", str(repeat),
           "--eager-rows", str(rows)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{case} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _report(name: str, rounds: list, target: float, mine: str, peer: str) -> None:
    ratios = [a / b for a, b in rounds]
    for i, (a, b) in enumerate(rounds):
        print(f"  {name} round {i + 1}: {mine} {a:.4f} s, {peer} {b:.4f} s, ratio {a / b:.2f}")
    print(f"  {name}: ratio {min(ratios):.2f} to {max(ratios):.2f} over {len(ratios)} rounds "
          f"(target <= {target:g}: {'met' if max(ratios) <= target else 'NOT met'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e8)
    ap.add_argument("--groups", type=int, default=10_000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engines", default="polars,duckdb,spark")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--eager-rows", type=float, default=1e7)
    ap.add_argument("--key-type", default="int32", choices=["int32", "int64", "string"])
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child:
        if args.child == "eager":
            res = run_eager(int(args.eager_rows), args.repeat)
        else:
            res = run_engine(args.child, args.dir, args.repeat)
        print(json.dumps(res))
        return
    tmp = None if args.dir else tempfile.TemporaryDirectory()
    root = args.dir or tmp.name
    os.makedirs(root, exist_ok=True)
    rows = int(args.rows)
    t0 = time.perf_counter()
    write_dataset(root, rows, args.groups, args.files, key_type=args.key_type)
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(root, "*.parquet")))
    print(f"dataset: {rows:,} rows, {args.groups:,} groups ({args.key_type}), {args.files} files, "
          f"{size / 1e9:.2f} GB on disk ({time.perf_counter() - t0:.0f} s to write or check)")
    for engine in [e for e in args.engines.split(",") if e]:
        res = _child(engine, root, args.repeat, rows)
        print(f"{engine}: summarise(ece, mce) by g against the engine's grouped sum")
        _report(engine, res["rounds"], TARGETS[engine], "calibr", "peer")
        ratios = [a / b for a, b in res["cells"]]
        print(f"  {engine}: the engine's own grouped sum over (group, tenth of p), as many "
              f"cells as calibr's query: {min(ratios):.2f} to {max(ratios):.2f} times its "
              "sum per group")
        floor = [a / c for (a, _), (c, _) in zip(res["rounds"], res["cells"], strict=True)]
        print(f"  {engine}: calibr against the engine's own (group, tenth of p) sum, per "
              f"round: {' '.join(f'{r:.2f}' for r in floor)}; {min(floor):.2f} to "
              f"{max(floor):.2f} (target <= {FLOOR_TARGET:g}: "
              f"{'met' if max(floor) <= FLOOR_TARGET else 'NOT met'})")
        print(f"  {engine}: peak memory of the driver process over two calls of calibr's "
              f"summary {res['peak_mb']:.0f} MB ({res['peak_fixed_mb']:.0f} MB after imports "
              f"and a call on 1,000 rows: {res['peak_mb'] - res['peak_fixed_mb']:.0f} MB grow "
              "with the data)")
    if args.eager_rows:
        res = _child("eager", root, max(args.repeat, 5), int(args.eager_rows))
        print(f"eager: calibr.ece of polars Series against numpy arrays, "
              f"n = {int(args.eager_rows):,}")
        _report("eager", res["rounds"], EAGER_TARGET, "polars", "numpy")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
