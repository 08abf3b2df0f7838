"""Benchmark: ``summarise(ecce)`` by group, pushed down on the lazy engines, against
the engine's own sort of the same column per group.

    python benchmarks/bench_ecce_engines.py [--rows 1e7] [--groups 10000] [--files 20]
        [--repeat 3] [--engines polars,duckdb,spark] [--dir DIR]

The dataset of ``benchmarks/bench_engines.py`` (``g`` int32, ``p`` float64 in
[0, 1), ``y`` int8 drawn from ``p``; Parquet files). For each engine, in a fresh
process, a warm-up, then ``--repeat`` rounds of

- ``calibr``: ``calibr.summarise(source, "p", "y", by="g", metrics=["ecce"])``:
  the check of bad values, then on DuckDB and Spark one RANGE window sum over ``p``
  per group and the per-group maximum and minimum, on polars the rows sorted by
  ``p`` and streamed into calibr's kernel (``calibr/_engines/_pushdown.py``,
  ``calibr/_engines/polars.py``);
- ``sort``: the engine's own sort of ``p`` within each group, as a window
  ``row_number() OVER (PARTITION BY g ORDER BY p)`` whose maximum per group is
  collected (polars: ``pl.col("p").rank("ordinal").over("g")``), the least any
  query that reads ``p`` in order per group costs on that engine;

printing both times and their ratio, and the range over the rounds. The target
(benchmarks/README.md, "Engines"): at most 3 times the sort. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 3.0


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def _cases(engine: str, root: str):
    """``(calibr, sort, stop)`` on the engine's lazy source of the files."""
    import calibr

    files = os.path.join(root, "*.parquet")
    if engine == "polars":
        import polars as pl

        def source():
            return pl.scan_parquet(files)

        return (lambda: calibr.summarise(source(), "p", "y", by="g", metrics=["ecce"]),
                lambda: source().select("g", r=pl.col("p").rank("ordinal").over("g"))
                .group_by("g").agg(pl.col("r").max()).collect(engine="streaming"),
                lambda: None)
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        return (lambda: calibr.summarise(con.read_parquet(files), "p", "y", by="g",
                                         metrics=["ecce"]),
                lambda: con.sql(f"SELECT g, max(r) FROM (SELECT g, row_number() OVER "
                                f"(PARTITION BY g ORDER BY p) AS r FROM "
                                f"read_parquet('{files}')) GROUP BY g").arrow(), con.close)
    if engine == "spark":
        from pyspark.sql import SparkSession, Window
        from pyspark.sql import functions as F

        spark = (SparkSession.builder.master("local[2]").appName("bench_ecce_engines")
                 .config("spark.ui.enabled", "false")
                 .config("spark.sql.shuffle.partitions", "4")
                 .config("spark.driver.memory", "4g").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        w = Window.partitionBy("g").orderBy("p")
        return (lambda: calibr.summarise(spark.read.parquet(root), "p", "y", by="g",
                                         metrics=["ecce"]),
                lambda: spark.read.parquet(root).select("g", F.row_number().over(w).alias("r"))
                .groupBy("g").max("r").collect(), spark.stop)
    raise SystemExit(f"unknown engine {engine!r}")


def run_engine(engine: str, root: str, repeat: int) -> dict:
    ours, sort, stop = _cases(engine, root)
    ours()  # warm-up
    sort()
    rounds = []
    for _ in range(repeat):
        rounds.append((_timed(ours), _timed(sort)))
    stop()
    return {"rounds": rounds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--groups", type=int, default=10_000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engines", default="polars,duckdb,spark")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child:
        print(json.dumps(run_engine(args.child, args.dir, args.repeat)))
        return
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_engines import write_dataset

    tmp = None if args.dir else tempfile.TemporaryDirectory()
    root = args.dir or tmp.name
    os.makedirs(root, exist_ok=True)
    rows = int(args.rows)
    write_dataset(root, rows, args.groups, args.files)
    print(f"dataset: {rows:,} rows, {args.groups:,} groups, {args.files} files")
    for engine in [e for e in args.engines.split(",") if e]:
        cmd = [sys.executable, __file__, "--child", engine, "--dir", root, "--repeat",
               str(args.repeat)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"{engine} failed:\n{out.stderr[-3000:]}")
        rounds = json.loads(out.stdout.strip().splitlines()[-1])["rounds"]
        print(f"{engine}: summarise(ecce) by g against the engine's sort of p per group")
        for i, (a, b) in enumerate(rounds):
            print(f"  round {i + 1}: calibr {a:.3f} s, sort {b:.3f} s, ratio {a / b:.2f}")
        ratios = [a / b for a, b in rounds]
        print(f"  {engine}: ratio {min(ratios):.2f} to {max(ratios):.2f} over {len(ratios)} "
              f"rounds (target <= {TARGET:g}: {'met' if max(ratios) <= TARGET else 'NOT met'})")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
