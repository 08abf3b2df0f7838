"""Speed of ``bins="sweep"`` (the monotonic sweep, ``calibr.ece(p, y, bins="sweep")``)
against numpy.sort of the same n, and against the direct implementation of the
paper (``tests/oracles/sweep.py``: every b binned from scratch) at a smaller n,
in one run.

Usage::

    python benchmarks/bench_sweep.py                 # n = 1e6, 7 repeats; oracle n = 2e4
    python benchmarks/bench_sweep.py --n 1000000 --repeat 9 --inner 3 --oracle-n 20000

The data: n continuous p in [0, 1) and y drawn from them (int64), calibrated,
so the sweep stops where noise first breaks the monotone means (64 bins here at
n = 1e6). Each repeat times, end to end, ``numpy.sort(p)`` (a copy) and
``calibr.ece(p, y, bins="sweep")`` with equal-width and with equal-mass bins
(input checks, the sweep, the breaks of its number and the per-bin sums),
``--inner`` times each, interleaved, and takes each one's fastest (on a shared
machine a call of 20 ms is often caught by another job's burst, and then takes
twice as long); it prints the ratios of the repeat, and the summary their
range. Then, on the first ``--oracle-n`` rows, the oracle's number of bins and
time against calibr's (the same number of bins, or the script says so), and the
adversarial case, outcomes sorted by p but for one 1 just below a 0 (the sweep
runs to b near n). Before the repeats, one untimed call of each compiles (or
loads) the kernels. The target is in benchmarks/README.md ("Binning options").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from oracles.sweep import sweep_oracle  # noqa: E402

import calibr  # noqa: E402
from calibr._binning.sweep import sweep_bins  # noqa: E402

SORT_TARGET = 5.0  # ece(bins="sweep") at most this many times np.sort of the same n


def data(n: int, seed: int = 20261204):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    return p, y


def adversarial(n: int, seed: int = 20261205):
    """Outcomes sorted by p, but a 1 at 0.5 just below a 0 at 0.5 + 1e-12."""
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    p[0], p[1] = 0.5, 0.5 + 1e-12
    y = (p > 0.5).astype(np.int64)
    y[0], y[1] = 1, 0
    return p, y


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--inner", type=int, default=3)
    ap.add_argument("--oracle-n", type=int, default=20_000)
    args = ap.parse_args()
    p, y = data(args.n)
    binnings = ("equal-width", "equal-mass")
    for binning in binnings:  # compile (or load) the kernels, untimed
        calibr.ece(p, y, bins="sweep", binning=binning)
    np.sort(p)
    nbins = {b: sweep_bins(p, y, b, True) for b in binnings}
    print(f"ece(bins='sweep'), n = {args.n:,}, {args.repeat} repeats; the sweep's bins: "
          + ", ".join(f"{b} {nbins[b]}" for b in binnings))
    ratios: dict[str, list[float]] = {b: [] for b in binnings}
    calls = {"np.sort": lambda: np.sort(p)}
    for binning in binnings:
        calls[binning] = lambda b=binning: calibr.ece(p, y, bins="sweep", binning=b)
    for r in range(args.repeat):
        best = dict.fromkeys(calls, np.inf)
        for _ in range(args.inner):
            for name, f in calls.items():
                best[name] = min(best[name], timed(f)[0])
        t_sort = best["np.sort"]
        line = [f"np.sort {t_sort * 1e3:.1f} ms"]
        for binning in binnings:
            ratios[binning].append(best[binning] / t_sort)
            line.append(f"{binning} {best[binning] * 1e3:.1f} ms ({best[binning] / t_sort:.2f}x)")
        print(f"  repeat {r + 1}: " + ", ".join(line))
    for binning in binnings:
        rs = ratios[binning]
        print(f"  {binning} / np.sort: {min(rs):.2f}x to {max(rs):.2f}x, median "
              f"{np.median(rs):.2f}x (target <= {SORT_TARGET:.0f}x: "
              f"{'met' if max(rs) <= SORT_TARGET else 'NOT met'})")

    m = min(args.oracle_n, args.n)
    q, z = p[:m], y[:m]
    print(f"\nagainst the paper's loop (tests/oracles/sweep.py), n = {m:,}")
    for binning in binnings:
        t_ours, ours = timed(lambda b=binning: sweep_bins(q, z, b, True))
        t_oracle, want = timed(lambda b=binning: sweep_oracle(q, z, b, True))
        same = "the same" if ours == want else f"DIFFERENT (oracle {want})"
        print(f"  {binning}: {ours} bins, {same}; calibr's sweep {t_ours * 1e3:.2f} ms, "
              f"oracle {t_oracle:.2f} s ({t_oracle / t_ours:,.0f}x)")

    print("\nadversarial: outcomes sorted but for one descent 1e-12 wide")
    for n in (10**5, args.n):
        a, c = adversarial(n)
        for binning in binnings:
            t, b = timed(lambda b=binning, a=a, c=c: sweep_bins(a, c, b, True))
            print(f"  n = {n:,}, {binning}: {b:,} bins in {t:.2f} s")


if __name__ == "__main__":
    main()
