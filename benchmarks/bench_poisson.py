"""Benchmark: the Poisson bootstrap of ECE by group on the lazy engines, against one
pass of the engine's own (replicate, group, bin) aggregation.

    python benchmarks/bench_poisson.py [--rows 1e6] [--groups 100] [--replicates 200]
        [--files 4] [--repeat 3] [--engines polars,duckdb,spark] [--dir DIR]
        [--query both|poisson|pass] [--warmup 1]

A Parquet dataset (``g`` int32 with ``--groups`` values, ``p`` float64 in [0, 1),
``y`` int8 drawn from ``p``, ``id`` int64 a permutation of the rows) is written to
a temporary folder. For each engine, on its lazy source of the files (polars
``scan_parquet``, DuckDB ``read_parquet``, Spark ``spark.read.parquet`` on
``local[2]``), a warm-up of each, then ``--repeat`` rounds of

- ``poisson``: the ``--replicates`` replicates of the ECE (R's 10 bins) of every
  group by the Poisson scheme, as ``bootstrap(scheme="poisson")`` computes them on
  the engine (``calibr/_engines/_poisson.py``: the row's bin, its state from the
  key, the cross join with the replicates, the counts, the per-(group,
  replicate, bin) sums of ``n``, ``n p``, ``n y``, collected; the ECE of each
  (group, replicate) on the driver, by ``reduce_cells``);
- ``pass``: the engine's own query of the same shape without the generator: the
  rows' bin, the cross join with the replicates, the per-(group, replicate, bin)
  row count and sums of ``p`` and ``y``, collected (polars, whose cross join
  materialises its n x R rows: in queries of consecutive replicates of at most
  ``POLARS_CROSSED`` crossed rows each);

printing both times and their ratio; the summary gives the range of the ratios
over the rounds, and the process's peak resident memory (``ru_maxrss``: run one
engine per process for its own peak; Spark's JVM, another process: its
``VmHWM``). ``--dir`` reads (or first writes) the dataset in a folder of yours
instead of a temporary one. At 1e7 rows one query takes minutes: ``--query
poisson`` or ``--query pass`` times one of the two per process (``--warmup 0``),
so that each holds the benchmark lock for one query.
The target is in benchmarks/README.md ("Engines: the Poisson
bootstrap"). Nothing is asserted: tests never time anything.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET = 3.0
#: polars' pass: crossed rows per query (each query materialises them).
POLARS_CROSSED = 2**23


def write_dataset(root: str, rows: int, groups: int, files: int, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    ids = rng.permutation(rows).astype(np.int64)
    per = -(-rows // files)
    for i in range(files):
        lo, hi = i * per, min((i + 1) * per, rows)
        n = hi - lo
        p = rng.random(n)
        pq.write_table(pa.table({"g": rng.integers(0, groups, n).astype(np.int32), "p": p,
                                 "y": (rng.random(n) < p).astype(np.int8), "id": ids[lo:hi]}),
                       os.path.join(root, f"part-{i:04d}.parquet"))


def _frame(native):
    """The kept rows as the engine query reads them: group, bin, p, y, key."""
    import narwhals as nw

    from calibr._binning import BinSpec
    from calibr._engines._lazy import _bin_expr

    spec = BinSpec.from_options(10, "equal-width", True)
    x = nw.col("p").cast(nw.Float64)
    return nw.from_native(native).select(
        "g", __bin=_bin_expr(x, spec, spec.edges()).cast(nw.Int64), __p=x,
        __y=nw.col("y").cast(nw.Float64), __key=nw.col("id").cast(nw.Int64))


def poisson(engine: str, native, replicates: int) -> np.ndarray:
    """The (group, replicate) ECE values of the Poisson scheme, computed on the engine
    and reduced on the driver as calibr reduces them (``reduce_cells``)."""
    from calibr._engines._poisson import reduce_cells, replicate_sums

    sums = replicate_sums(engine, _frame(native), ["g"], 12345, replicates)
    groups, gi = np.unique(sums["g"].to_numpy().astype(np.int64), return_inverse=True)
    return reduce_cells(sums, gi, groups.size, replicates, [("ece", "ece", None)])["ece"]


def one_pass(engine: str, native, replicates: int, session=None):
    """The engine's own (group, replicate, bin) aggregation of the crossed rows."""
    rows = _frame(native).to_native()
    if engine == "polars":
        import polars as pl

        # polars materialises a cross join (n x R rows: 57 GB at 1e7 x 200), so its pass
        # runs in batches of consecutive replicates of at most POLARS_CROSSED rows
        n = rows.select(pl.len()).collect().item()
        per = max(1, POLARS_CROSSED // n)
        out = []
        for r0 in range(1, replicates + 1, per):
            reps = pl.LazyFrame({"__r": np.arange(r0, min(r0 + per, replicates + 1),
                                                  dtype=np.int64)})
            out.append(rows.join(reps, how="cross").group_by("g", "__r", "__bin")
                       .agg(pl.len(), pl.col("__p").sum(), pl.col("__y").sum())
                       .collect(engine="streaming"))
        return pl.concat(out)
    if engine == "duckdb":
        return rows.query("__rows", (
            "SELECT g, __r, __bin, COUNT(*), SUM(__p), SUM(__y) FROM __rows CROSS JOIN "
            f"(SELECT range AS __r FROM range(1, {replicates + 1})) GROUP BY g, __r, __bin")).df()
    from pyspark.sql import functions as F

    reps = session.range(1, replicates + 1).withColumnRenamed("id", "__r")
    return (rows.crossJoin(F.broadcast(reps)).groupBy("g", "__r", "__bin")
            .agg(F.count("*"), F.sum("__p"), F.sum("__y")).toArrow())


def run(engine: str, root: str, replicates: int, repeat: int, query: str = "both",
        warmup: int = 1) -> list[tuple[float, float]]:
    files = os.path.join(root, "*.parquet")
    session = None
    if engine == "polars":
        import polars as pl

        def source():
            return pl.scan_parquet(files)
    elif engine == "duckdb":
        import duckdb

        con = duckdb.connect()

        def source():
            return con.read_parquet(files)
    else:
        from pyspark.sql import SparkSession

        session = (SparkSession.builder.master("local[2]").appName("bench_poisson")
                   .config("spark.ui.enabled", "false")
                   .config("spark.sql.shuffle.partitions", "4")
                   .config("spark.driver.memory", "4g").getOrCreate())
        session.sparkContext.setLogLevel("ERROR")

        def source():
            return session.read.parquet(root)

    for _ in range(warmup):
        if query != "pass":
            poisson(engine, source(), replicates)
        if query != "poisson":
            one_pass(engine, source(), replicates, session)
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        if query != "pass":
            poisson(engine, source(), replicates)
        t1 = time.perf_counter()
        if query != "poisson":
            one_pass(engine, source(), replicates, session)
        t2 = time.perf_counter()
        rounds.append((t1 - t0, t2 - t1))
    if session is not None:
        global JVM_PEAK_MB
        JVM_PEAK_MB = _jvm_peak(session)
        session.stop()
    return rounds


#: Spark: the JVM's peak resident memory (VmHWM) in MB, read before the session stops.
JVM_PEAK_MB = None


def _jvm_peak(session) -> float | None:
    """The largest VmHWM of the Spark gateway's process and its children (the JVM)."""
    try:
        root = session.sparkContext._gateway.proc.pid
    except AttributeError:
        return None
    pids, peak = {root}, None
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) in pids:
                    pids.add(int(d.name))
            except (OSError, ValueError, IndexError):
                continue
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    mb = int(line.split()[1]) / 1024
                    peak = mb if peak is None else max(peak, mb)
        except OSError:
            continue
    return peak


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--groups", type=int, default=100)
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engines", default="polars,duckdb,spark")
    ap.add_argument("--dir", default=None, help="the dataset's folder (written if empty)")
    ap.add_argument("--query", choices=("both", "poisson", "pass"), default="both")
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args(argv)
    rows = int(args.rows)
    print(f"{rows:,} rows, {args.groups} groups, {args.replicates} replicates, 10 bins, "
          f"{args.files} files; {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.dir or tmp
        if not any(Path(root).glob("*.parquet")):
            os.makedirs(root, exist_ok=True)
            write_dataset(root, rows, args.groups, args.files)
        for engine in args.engines.split(","):
            rounds = run(engine, root, args.replicates, args.repeat, args.query, args.warmup)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            with open("/proc/loadavg") as f:
                load = " ".join(f.read().split()[:3])
            for i, (a, b) in enumerate(rounds):
                if args.query == "both":
                    print(f"  {engine} round {i + 1}: poisson {a:.2f} s, pass {b:.2f} s, "
                          f"ratio {a / b:.2f}", flush=True)
                else:
                    print(f"  {engine} round {i + 1}: {args.query} {max(a, b):.2f} s",
                          flush=True)
            jvm = f", the JVM {JVM_PEAK_MB:,.0f} MB" if engine == "spark" and JVM_PEAK_MB else ""
            print(f"  {engine}: peak resident memory {peak:,.0f} MB{jvm}; load average {load}",
                  flush=True)
            if args.query == "both":
                ratios = [a / b for a, b in rounds]
                print(f"  {engine}: ratio {min(ratios):.2f} to {max(ratios):.2f} over "
                      f"{len(ratios)} rounds (target <= {TARGET:g}: "
                      f"{'met' if max(ratios) <= TARGET else 'NOT met'})", flush=True)


if __name__ == "__main__":
    main()
