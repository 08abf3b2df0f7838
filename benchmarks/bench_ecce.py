"""Speed of calibr.ecce() and of its p-value (calibration_test(method="ks" |
"kuiper")) against numpy.sort of the same n and against mcgrad's ecce, in one run.

Usage::

    python benchmarks/bench_ecce.py                 # n = 1e7, 3 repeats
    python benchmarks/bench_ecce.py --n 1000000 --repeat 5

The data: n continuous p in [0, 1) and y drawn from them (int64). Each repeat
times, end to end and in this order, ``numpy.sort(p)`` (a copy), calibr's
``calibration_test(p, y, "kuiper")`` (the ECCE on both scales and the p-value),
``calibr.ecce(p, y)`` (KS), and mcgrad 0.1.5's ``ecce(y, p)`` (the Kuiper form
on the scale of p; float64) and its ``ecce_pvalue``, and prints the ratios of
that repeat; the summary gives the range of the ratios. Before the repeats, one
untimed call of calibr and of ``numpy.sort`` at the full n compiles (or loads)
the kernels and faults in the pages of the first n-sized buffers. The targets are in
benchmarks/README.md ("Cumulative calibration errors").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mcgrad.metrics as mcgrad_metrics  # noqa: E402

import calibr  # noqa: E402

SORT_TARGET = 3.0  # calibr's ECCE and p-value at most this many times np.sort
PEER_TARGET = 10.0  # at least this many times faster than mcgrad's ecce


def data(n: int, seed: int = 20261203):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    return p, y


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    p, y = data(args.n)
    # compile (or load) the kernels, and touch the memory of a call of this size once
    # (the first n-sized allocations of a process fault their pages in, for calibr's
    # keys as for np.sort's copy), untimed
    calibr.calibration_test(p, y, "kuiper")
    np.sort(p)
    print(f"ecce, n = {args.n:,}, {args.repeat} repeats")
    to_sort, to_peer = [], []
    for r in range(args.repeat):
        t_sort, _ = timed(lambda: np.sort(p))
        t_test, res = timed(lambda: calibr.calibration_test(p, y, "kuiper"))
        t_ks, _ = timed(lambda: calibr.ecce(p, y))
        t_peer, ref = timed(lambda: mcgrad_metrics.ecce(y, p))
        t_peer_p, ref_p = timed(lambda: mcgrad_metrics.ecce_pvalue(y, p))
        to_sort.append(t_test / t_sort)
        to_peer.append(t_peer / t_test)
        print(f"  repeat {r + 1}: np.sort {t_sort:.3f} s, calibr test {t_test:.3f} s "
              f"({t_test / t_sort:.2f}x np.sort), calibr ecce(ks) {t_ks:.3f} s, "
              f"mcgrad ecce {t_peer:.3f} s ({t_peer / t_test:.1f}x calibr's test), "
              f"mcgrad ecce_pvalue {t_peer_p:.3f} s")
    print(f"\n  ecce: calibr {res.estimate!r}, mcgrad {ref!r}, relative difference "
          f"{abs(res.estimate - ref) / ref:.1e}; p-value calibr {res.pvalue!r}, "
          f"mcgrad {ref_p!r}")
    print(f"  calibr / np.sort: {min(to_sort):.2f}x to {max(to_sort):.2f}x (target <= "
          f"{SORT_TARGET:.0f}x: {'met' if max(to_sort) <= SORT_TARGET else 'NOT met'})")
    print(f"  mcgrad / calibr: {min(to_peer):.1f}x to {max(to_peer):.1f}x (target >= "
          f"{PEER_TARGET:.0f}x: {'met' if min(to_peer) >= PEER_TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
