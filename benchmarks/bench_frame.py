"""Benchmark: the grouped summary against its peers in the same run.

    python benchmarks/bench_frame.py [--groups 10000] [--rows 100] [--repeat 5]

Computes ece + mce for G groups of R rows (binary, and multiclass with K = 4)
three ways and prints the median wall time of each and the ratios:

- ``summarise``: ``calibr.frame.summarise(df.groupby("g"), ...)``;
- ``numpy loop``: ``calibr.ece``/``calibr.mce`` on pre-split numpy arrays (the
  floor: the metrics themselves, with nothing else);
- ``groupby.apply``: ``df.groupby("g").apply(...)`` calling the metrics on
  each group's columns, the plain pandas way.

The targets are in benchmarks/README.md ("Grouped summaries"). The numbers
must be equal; this script checks that too.
Timings are wall-clock on whatever else the machine is doing: run it a few
times.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

import calibr
from calibr.frame import summarise


def _median_time(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _data(groups: int, rows: int, k: int | None, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = groups * rows
    g = rng.permutation(np.repeat(np.arange(groups), rows))  # groups interleaved, as in real data
    if k is None:
        p = rng.random(n)
        return pd.DataFrame({"g": g, "p": p, "y": (rng.random(n) < p).astype(np.int64)})
    p = rng.dirichlet(np.ones(k), n)
    df = pd.DataFrame(p, columns=[f"p_{c}" for c in range(k)])
    df.insert(0, "y", rng.integers(0, k, n))
    df.insert(0, "g", g)
    return df


def bench(groups: int, rows: int, k: int | None, repeat: int) -> dict[str, float]:
    df = _data(groups, rows, k)
    if k is None:
        pcols, kw, sargs = "p", {}, {"p": "p"}
    else:
        pcols, kw, sargs = [f"p_{c}" for c in range(k)], {"classes": range(k)}, {"p_prefix": "p_"}

    # pre-split numpy arrays (not timed: the floor is the metric calls alone)
    order = np.argsort(df["g"].to_numpy(), kind="stable")
    p_all = df[pcols].to_numpy()[order]
    y_all = df["y"].to_numpy()[order]
    bounds = np.searchsorted(df["g"].to_numpy()[order], np.arange(groups + 1))
    pieces = [(p_all[a:b], y_all[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def numpy_loop():
        return np.array([[calibr.ece(p, y, **kw), calibr.mce(p, y, **kw)] for p, y in pieces])

    def frame_summary():
        return summarise(df.groupby("g"), y="y", metrics=["ece", "mce"], **sargs)

    def groupby_apply():
        return df.groupby("g").apply(
            lambda s: pd.Series({"ece": calibr.ece(s[pcols], s["y"], **kw),
                                 "mce": calibr.mce(s[pcols], s["y"], **kw)}),
            include_groups=False,
        )

    frame_summary()  # compile / warm up
    t_np, ref = _median_time(numpy_loop, repeat)
    t_sum, res = _median_time(frame_summary, repeat)
    t_app, app = _median_time(groupby_apply, max(1, repeat // 2))
    assert np.array_equal(res[["ece", "mce"]].to_numpy(), ref), "summarise != numpy loop"
    assert np.array_equal(app[["ece", "mce"]].to_numpy(), ref), "groupby.apply != numpy loop"
    return {"numpy loop": t_np, "summarise": t_sum, "groupby.apply": t_app}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for label, k in (("binary", None), ("multiclass K=4", 4)):
        t = bench(args.groups, args.rows, k, args.repeat)
        print(f"{label}: {args.groups} groups x {args.rows} rows, ece + mce "
              f"(median of {args.repeat})")
        for name, sec in t.items():
            print(f"  {name:<14} {sec * 1e3:9.1f} ms")
        print(f"  summarise / numpy loop    = {t['summarise'] / t['numpy loop']:.2f}  (goal <= 3)")
        print(f"  summarise / groupby.apply = {t['summarise'] / t['groupby.apply']:.2f}  "
              "(goal < 1)")


if __name__ == "__main__":
    main()
