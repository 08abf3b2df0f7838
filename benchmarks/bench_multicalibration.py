"""Speed of calibr.multicalibration() against mcgrad's MulticalibrationError
(Guy et al. 2025), on the same data in one run.

Usage::

    python benchmarks/bench_multicalibration.py             # n = 1e6, 5 columns, depth 3
    python benchmarks/bench_multicalibration.py --n 100000 --repeat 5

The data: 1e6 rows, three categorical columns of five values (pooled into three
segments each) and two normal numeric columns (three quantile bins each), depth
3 and the other options at both libraries' defaults: 376 segments. Each repeat
times calibr and then mcgrad, end to end (mcgrad: the object built and its
``mce_sigma``, ``mce_pvalue`` and ``mde`` computed; calibr: the call, which also
lists every segment), and prints the ratio of that repeat; the summary gives
the median and the range of the ratios. mcgrad runs at ``precision_dtype=
"float64"``, the setting whose numbers calibr reproduces, and once at its
default float32 for reference. The target is in benchmarks/README.md
("Multicalibration").
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcgrad.metrics import MulticalibrationError  # noqa: E402

import calibr  # noqa: E402

TARGET = 3.0  # calibr at least this many times faster than mcgrad (float64)

CATEGORICAL = ["c0", "c1", "c2"]
NUMERICAL = ["x0", "x1"]


def data(n: int, seed: int = 20251101) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"p": rng.random(n)})
    for c in CATEGORICAL:
        df[c] = rng.choice(list("abcde"), n, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    for c in NUMERICAL:
        df[c] = rng.normal(size=n)
    bias = np.where((df["c0"] == "a") & (df["x0"] > 1), 0.02, 0.0)
    df["y"] = (rng.random(n) < np.clip(df["p"] + bias, 0, 1)).astype(np.int64)
    return df


def ours(df: pd.DataFrame, depth: int):
    res = calibr.multicalibration(df, "p", "y", CATEGORICAL + NUMERICAL, max_depth=depth)
    return res.statistic, res.pvalue, res.mde, res.n_segments


def theirs(df: pd.DataFrame, depth: int, dtype: str = "float64"):
    m = MulticalibrationError(df, "y", "p", categorical_segment_columns=CATEGORICAL,
                              numerical_segment_columns=NUMERICAL, max_depth=depth,
                              precision_dtype=dtype)
    return float(m.mce_sigma), float(m.mce_pvalue), float(m.mde), m.total_number_segments


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # mcgrad's pandas deprecation warnings
    logging.disable(logging.WARNING)
    df = data(args.n)
    ours(df.head(5000), args.depth)  # compile (or load) the kernels
    print(f"multicalibration, n = {args.n:,}, {len(CATEGORICAL)} categorical + "
          f"{len(NUMERICAL)} numeric columns, depth {args.depth}, {args.repeat} repeats")
    ratios, t_ours, t_theirs = [], [], []
    for r in range(args.repeat):
        a, got = timed(lambda: ours(df, args.depth))
        b, ref = timed(lambda: theirs(df, args.depth))
        ratios.append(b / a)
        t_ours.append(a)
        t_theirs.append(b)
        print(f"  repeat {r + 1}: calibr {a:7.3f} s, mcgrad (float64) {b:7.2f} s, "
              f"ratio {b / a:5.1f}x")
    c32, ref32 = timed(lambda: theirs(df, args.depth, "float32"))
    print(f"  mcgrad at its default float32: {c32:.2f} s "
          f"({c32 / np.median(t_ours):.1f}x calibr's median)")
    print(f"\n  segments: calibr {got[3]}, mcgrad {ref[3]}")
    print(f"  statistic: calibr {got[0]!r}, mcgrad {ref[0]!r} (float32: {ref32[0]!r}); "
          f"relative difference {abs(got[0] - ref[0]) / ref[0]:.1e}")
    print(f"  p-value: calibr {got[1]!r}, mcgrad {ref[1]!r}; mde: calibr {got[2]!r}, "
          f"mcgrad {ref[2]!r}")
    med = float(np.median(ratios))
    print(f"\n  calibr {np.median(t_ours):.3f} s ({min(t_ours):.3f} to {max(t_ours):.3f}), "
          f"mcgrad {np.median(t_theirs):.2f} s ({min(t_theirs):.2f} to {max(t_theirs):.2f})")
    print(f"  ratio mcgrad / calibr: median {med:.1f}x, range {min(ratios):.1f}x to "
          f"{max(ratios):.1f}x (target >= {TARGET:.0f}x: "
          f"{'met' if min(ratios) >= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
