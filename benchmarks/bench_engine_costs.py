"""Benchmark: DuckDB's per-row costs behind docs/engines.md's estimates ("Past
this machine"): its sum per group, its sum over (group, R's bin) cells, a sort
within groups with a running sum (the cumulative tests), and a (replicate,
group, bin) aggregation of 20 replicates (the Poisson bootstrap; a hash of
the row and the replicate stands in for the draw).

    python benchmarks/bench_engine_costs.py DIR

DIR holds bench_engines.py's dataset of 1e7 rows (``--rows 1e7 --dir DIR``).
Each query runs 3 times; printed: the times and the wall ns per row (per
row-replicate). Nothing is asserted.
"""

import sys
import time

import duckdb

con = duckdb.connect()
f = f"{sys.argv[1]}/*.parquet"
n = con.sql(f"SELECT COUNT(*) FROM read_parquet('{f}')").fetchall()[0][0]


R = 20  # replicates of the bootstrap stand-in, on 1e6 of the rows (20 files x 50,000)
SRC = f"read_parquet('{f}', file_row_number := true)"
BIN = "LEAST(GREATEST(FLOOR(p*10.0+0.5) - 1 + CAST(p > FLOOR(p*10.0+0.5)*0.1 AS DOUBLE), 0), 9)"
SUB = f"(SELECT *, 'x' AS filename FROM {SRC} WHERE file_row_number < 50000)"
QUERIES = {
    "per_group_sum": f"SELECT g, SUM(p), SUM(y) FROM {SRC} GROUP BY g",
    "cells": f"SELECT g*10.0 + {BIN} AS k, COUNT(*), SUM(p), SUM(y) FROM {SRC} GROUP BY 1",
    "sort_window_per_group": (
        "SELECT g, MAX(abs(c)) FROM (SELECT g, SUM(y - p) OVER (PARTITION BY g ORDER BY p "
        f"ROWS UNBOUNDED PRECEDING) AS c FROM {SRC}) GROUP BY g"),
    # a stand-in for a counter-based Poisson(1) draw: a hash of (row key, replicate)
    f"replicates_{R}_on_1e6": (
        f"SELECT r, g*10.0 + {BIN} AS k, SUM(w), SUM(w*p), SUM(w*y) FROM (SELECT r.range AS r, "
        "g, p, y, CAST(hash(file_row_number, filename, r.range) % 3 AS DOUBLE) AS w FROM "
        f"{SUB} s, range({R}) r) GROUP BY 1, 2"),
}


def timed(sql: str, k: int = 3) -> list:
    out = []
    for _ in range(k):
        t0 = time.perf_counter()
        con.sql(sql).arrow()
        out.append(time.perf_counter() - t0)
    return out


rows = con.sql(f"SELECT COUNT(*) FROM {SUB}").fetchall()[0][0]
for name, sql in QUERIES.items():
    v = timed(sql)
    per = rows * R if name.startswith("replicates") else n
    print(f"{name}: " + " ".join(f"{x:.2f}" for x in v) + f" s; wall ns per unit "
          f"{min(v) / per * 1e9:.1f} to {max(v) / per * 1e9:.1f} (units: {per:,})")
