"""Benchmark: the grouped summary against its peers in the same run.

    python benchmarks/bench_frame.py [--groups 10000] [--rows 100] [--repeat 5]
                                     [--median-groups 1000] [--median-rows 1000]
                                     [--quick] [--no-loops]

Three cases, each timed against its peers on the same data, the contenders
interleaved (one call of each in turn, ``--repeat`` rounds) and the median time
of each printed with the ratios:

1. ece + mce for G groups of R rows (binary, and multiclass with K = 4):

   - ``summarise``: ``calibr.summarise(df.groupby("g"), ...)``;
   - ``groupby.sum``: pandas' ``df.groupby("g")[[p columns, "y"]].sum()`` on the
     same frame (one pass over the rows by group: the target's yardstick);
   - ``numpy loop``: ``calibr.ece``/``calibr.mce`` on pre-split numpy arrays (the
     metrics themselves, called once per group);
   - ``groupby.apply``: ``df.groupby("g").apply(...)`` calling the metrics on
     each group's columns, the plain pandas way (fewer rounds: it is slow).

   The two loops take minutes at the default sizes; ``--no-loops`` leaves them out.

2. ``skce`` (uq, bandwidth 0.2) and ``mmce`` on the same data, against
   ``groupby.sum`` (multiclass: ``skce`` in its default canonical form and in
   the confidence form).

3. ``skce(bandwidth="median")`` for 1,000 groups of 1,000 rows (binary), against
   ``np.sort`` of the whole p column.

4. The battery: ``ece``, ``brier``, ``log_loss`` and ``auroc`` for G groups of R
   rows (binary), against ``groupby.sum`` of the same columns.

``--only`` runs some of the cases (``binned`` and ``kernel``: 1 and 2, binary and
K = 4; ``median``: 3; ``battery``: 4).

The targets are in benchmarks/README.md ("Grouped summaries"). Every number of
``summarise`` must equal the metric called on the group; this script checks
that against the numpy loop (case 1) and against per-group calls on a sample of
groups (cases 2 and 3). Timings are wall-clock on whatever else the machine is
doing: run it a few times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

import calibr
from calibr.frame import metric, summarise


def _interleaved(fns: dict[str, Callable[[], object]], repeat: int,
                 rounds: dict[str, int] | None = None) -> tuple[dict[str, float], dict]:
    """Median wall time of each function, calling them in turn for ``repeat``
    rounds (``rounds[name]`` caps the rounds of a slow one); and the last outputs."""
    rounds = rounds or {}
    times: dict[str, list[float]] = {name: [] for name in fns}
    out: dict[str, object] = {}
    for r in range(repeat):
        for name, fn in fns.items():
            if r >= rounds.get(name, repeat):
                continue
            t0 = time.perf_counter()
            out[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}, out


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


def _columns(k: int | None) -> tuple[str | list[str], dict, dict]:
    """(probability column(s), metric keywords, summarise keywords)."""
    if k is None:
        return "p", {}, {"p": "p"}
    return [f"p_{c}" for c in range(k)], {"classes": range(k)}, {"p_prefix": "p_"}


def _check_sample(df: pd.DataFrame, res: pd.DataFrame, k: int | None,
                  specs: dict[str, object], sample: int = 25) -> None:
    """Each of ``sample`` groups spread over the result equals the per-group calls."""
    pcols, kw, _ = _columns(k)
    groups = dict(iter(df.groupby("g")))
    for i in np.linspace(0, len(res) - 1, sample).astype(int):
        sub = groups[res.loc[i, "g"]]
        for name, spec in specs.items():
            func = getattr(calibr, spec.func)
            want = func(sub[pcols], sub["y"], **spec.options, **kw)
            assert res.loc[i, name] == want, f"summarise != {name} on group {i}"


def bench_binned(df: pd.DataFrame, groups: int, k: int | None, repeat: int,
                 loops: bool = True) -> dict[str, float]:
    pcols, kw, sargs = _columns(k)
    sum_cols = [pcols, "y"] if k is None else [*pcols, "y"]

    # pre-split numpy arrays (not timed: the loop is the metric calls alone)
    order = np.argsort(df["g"].to_numpy(), kind="stable")
    p_all = df[pcols].to_numpy()[order]
    y_all = df["y"].to_numpy()[order]
    bounds = np.searchsorted(df["g"].to_numpy()[order], np.arange(groups + 1))
    pieces = [(p_all[a:b], y_all[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def numpy_loop():
        return np.array([[calibr.ece(p, y, **kw), calibr.mce(p, y, **kw)] for p, y in pieces])

    def frame_summary():
        return summarise(df.groupby("g"), y="y", metrics=["ece", "mce"], **sargs)

    def groupby_sum():
        return df.groupby("g")[sum_cols].sum()

    def groupby_apply():
        return df.groupby("g").apply(
            lambda s: pd.Series({"ece": calibr.ece(s[pcols], s["y"], **kw),
                                 "mce": calibr.mce(s[pcols], s["y"], **kw)}),
            include_groups=False,
        )

    frame_summary()  # compile / warm up
    slow = max(1, repeat // 2)
    fns = {"summarise": frame_summary, "groupby.sum": groupby_sum}
    if loops:
        fns.update({"numpy loop": numpy_loop, "groupby.apply": groupby_apply})
    t, out = _interleaved(fns, repeat, {"numpy loop": slow, "groupby.apply": slow})
    if loops:
        ref = out["numpy loop"]
        assert np.array_equal(out["summarise"][["ece", "mce"]].to_numpy(), ref), \
            "summarise != numpy loop"
        assert np.array_equal(out["groupby.apply"][["ece", "mce"]].to_numpy(), ref), \
            "groupby.apply != numpy loop"
    else:
        _check_sample(df, out["summarise"], k, {"ece": metric("ece"), "mce": metric("mce")})
    return t


def bench_kernel(df: pd.DataFrame, k: int | None, repeat: int) -> dict[str, float]:
    pcols, _, sargs = _columns(k)
    sum_cols = [pcols, "y"] if k is None else [*pcols, "y"]
    fns: dict[str, Callable[[], object]] = {
        "groupby.sum": lambda: df.groupby("g")[sum_cols].sum()}
    specs: dict[str, dict[str, object]] = {"summarise skce": {"skce": metric("skce")}}
    if k is not None:
        specs["summarise skce confidence"] = {
            "skce_conf": metric("skce", type="confidence")}
    specs["summarise mmce"] = {"mmce": metric("mmce")}
    for name, spec in specs.items():
        fns[name] = lambda spec=spec: summarise(df.groupby("g"), y="y", metrics=spec, **sargs)
    for name in specs:
        fns[name]()  # compile / warm up
    t, out = _interleaved(fns, repeat)
    for name, spec in specs.items():
        _check_sample(df, out[name], k, spec)
    return t


def bench_median(groups: int, rows: int, repeat: int) -> dict[str, float]:
    df = _data(groups, rows, None, seed=1)
    spec = {"skce": metric("skce", bandwidth="median")}
    p = df["p"].to_numpy()

    def frame_summary():
        return summarise(df.groupby("g"), "p", "y", metrics=spec)

    frame_summary()  # compile / warm up
    t, out = _interleaved({"summarise skce median": frame_summary,
                           "np.sort(p)": lambda: np.sort(p),
                           "groupby.sum": lambda: df.groupby("g")[["p", "y"]].sum()}, repeat)
    _check_sample(df, out["summarise skce median"], None, spec)
    return t


BATTERY = ("ece", "brier", "log_loss", "auroc")


def bench_battery(df: pd.DataFrame, repeat: int) -> dict[str, float]:
    specs = {name: metric(name) for name in BATTERY}

    def frame_summary():
        return summarise(df.groupby("g"), "p", "y", metrics=list(BATTERY))

    frame_summary()  # compile / warm up
    t, out = _interleaved({"summarise battery": frame_summary,
                           "groupby.sum": lambda: df.groupby("g")[["p", "y"]].sum()}, repeat)
    _check_sample(df, out["summarise battery"], None, specs)
    return t


def _print(t: dict[str, float]) -> None:
    for name, sec in t.items():
        print(f"  {name:<28} {sec * 1e3:10.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--median-groups", type=int, default=1_000)
    ap.add_argument("--median-rows", type=int, default=1_000)
    ap.add_argument("--quick", action="store_true",
                    help="a tenth of the groups (a smoke test, not the targets' sizes)")
    ap.add_argument("--no-loops", action="store_true",
                    help="leave out the per-group loops (numpy loop, groupby.apply), which "
                         "take minutes; the targets' peers stay")
    ap.add_argument("--only", nargs="+", choices=("binned", "kernel", "median", "battery"),
                    default=("binned", "kernel", "median", "battery"),
                    help="the cases to run (default: all)")
    args = ap.parse_args()
    if args.quick:
        args.groups //= 10
        args.median_groups //= 10
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.2f} at the start")
    for label, k in (("binary", None), ("multiclass K=4", 4)):
        if "binned" not in args.only and "kernel" not in args.only:
            break
        df = _data(args.groups, args.rows, k)
        if "binned" not in args.only:
            t = bench_kernel(df, k, args.repeat)
            print(f"{label}: {args.groups} groups x {args.rows} rows, skce (uq, h = 0.2) "
                  "and mmce")
            _print(t)
            for name in t:
                if name != "groupby.sum":
                    print(f"  {name.removeprefix('summarise ')} / groupby.sum "
                          f"= {t[name] / t['groupby.sum']:.2f}  (goal <= 10)")
            continue
        t = bench_binned(df, args.groups, k, args.repeat, loops=not args.no_loops)
        print(f"{label}: {args.groups} groups x {args.rows} rows, ece + mce "
              f"(median of {args.repeat}, interleaved)")
        _print(t)
        s = t["summarise"]
        print(f"  summarise / groupby.sum   = {s / t['groupby.sum']:.2f}  (goal <= 5)")
        if not args.no_loops:
            print(f"  summarise / numpy loop    = {s / t['numpy loop']:.2f}  (goal <= 3)")
            print(f"  summarise / groupby.apply = {s / t['groupby.apply']:.4f}  (goal < 1)")

        if "kernel" not in args.only:
            continue
        t = bench_kernel(df, k, args.repeat)
        print(f"{label}: {args.groups} groups x {args.rows} rows, skce (uq, h = 0.2) and mmce")
        _print(t)
        for name in t:
            if name != "groupby.sum":
                print(f"  {name.removeprefix('summarise ')} / groupby.sum "
                      f"= {t[name] / t['groupby.sum']:.2f}  (goal <= 10)")

    if "median" in args.only:
        t = bench_median(args.median_groups, args.median_rows, args.repeat)
        print(f"binary: {args.median_groups} groups x {args.median_rows} rows, "
              f"skce(bandwidth='median')")
        _print(t)
        print(f"  summarise / np.sort(p)    = "
              f"{t['summarise skce median'] / t['np.sort(p)']:.2f}  (goal <= 20)")
        print(f"  summarise / groupby.sum   = "
              f"{t['summarise skce median'] / t['groupby.sum']:.2f}  (for reference)")

    if "battery" in args.only:
        t = bench_battery(_data(args.groups, args.rows, None), args.repeat)
        print(f"binary: {args.groups} groups x {args.rows} rows, {', '.join(BATTERY)} "
              f"(median of {args.repeat}, interleaved)")
        _print(t)
        print(f"  summarise / groupby.sum   = "
              f"{t['summarise battery'] / t['groupby.sum']:.2f}  (goal <= 10)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} at the end")


if __name__ == "__main__":
    main()
