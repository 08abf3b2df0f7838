"""Speed of calibr.decompose() (the CORP decomposition) against model-diagnostics'
``model_diagnostics.scoring.decompose``, on the same data in one run.

Usage::

    python benchmarks/bench_decompose.py              # n = 1e6, 5 runs
    python benchmarks/bench_decompose.py --n 100000 --runs 3

Both are timed end to end on the same binary sample: calibr on ``p`` and ``y``
(its input checks included), model-diagnostics with ``SquaredError()`` or
``LogLoss()`` (its validation, scikit-learn's isotonic fit and its scoring of
every row included; it returns a polars frame). Each run times calibr and the
peer back to back, alternating which goes first, and the ratio (peer's time
over calibr's) is taken per run; the script prints each case's median times
and the range of the ratios over the runs, and checks that the numbers agree to
1e-12. ``numpy.argsort`` of ``p``, the sort that the isotonic fit needs, is
timed beside them as the floor. The targets are in benchmarks/README.md
("Score decomposition").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model_diagnostics.scoring import LogLoss, SquaredError  # noqa: E402
from model_diagnostics.scoring import decompose as md_decompose  # noqa: E402

import calibr  # noqa: E402

TARGET = 3.0  # calibr at least this many times faster than model-diagnostics
FIELDS = ("score", "mcb", "dsc", "unc")


def timed(f) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def case(name: str, p: np.ndarray, y: np.ndarray, w: np.ndarray | None, score: str,
         runs: int) -> list[float]:
    fn = SquaredError() if score == "brier" else LogLoss()
    yf = y.astype(np.float64)

    def ours():
        return calibr.decompose(p, y, score, weights=w)

    def theirs():
        return md_decompose(yf, p, weights=w, scoring_function=fn)

    got, ref = ours(), theirs()  # warm-up (compiled kernels loaded, caches warm)
    row = ref.row(0, named=True)
    want = [row["score"], row["miscalibration"], row["discrimination"], row["uncertainty"]]
    diff = max(abs(getattr(got, f) - v) for f, v in zip(FIELDS, want, strict=True))
    t_ours, t_theirs, t_sort, ratios = [], [], [], []
    for r in range(runs):
        pair = (ours, theirs) if r % 2 == 0 else (theirs, ours)
        first, _ = timed(pair[0])
        second, _ = timed(pair[1])
        a, b = (first, second) if r % 2 == 0 else (second, first)
        t_ours.append(a)
        t_theirs.append(b)
        ratios.append(b / a)
        t_sort.append(timed(lambda: np.argsort(p))[0])
    print(f"\n{name}")
    print(f"  calibr.decompose          {np.median(t_ours) * 1e3:8.1f} ms  "
          f"(runs {min(t_ours) * 1e3:.1f} to {max(t_ours) * 1e3:.1f})")
    print(f"  model_diagnostics         {np.median(t_theirs) * 1e3:8.1f} ms  "
          f"(runs {min(t_theirs) * 1e3:.1f} to {max(t_theirs) * 1e3:.1f})")
    print(f"  numpy.argsort(p)          {np.median(t_sort) * 1e3:8.1f} ms")
    print(f"  ratio model-diagnostics / calibr: median {np.median(ratios):.1f}x, runs "
          f"{min(ratios):.1f}x to {max(ratios):.1f}x (target >= {TARGET:.0f}x: "
          f"{'met' if min(ratios) >= TARGET else 'NOT met'})")
    print(f"  calibr / argsort: {np.median(t_ours) / np.median(t_sort):.1f}x;  "
          f"largest difference of the four numbers: {diff:.1e}")
    return ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(20210201)
    p = rng.random(n)
    y = (rng.random(n) < p**1.3).astype(np.int64)
    ties = np.clip(np.round(p, 3), 1e-3, 1 - 1e-3)  # 1,000 distinct values
    w = rng.integers(1, 4, n).astype(np.float64)
    print(f"CORP decomposition, n = {n:,}, {args.runs} runs (ratios per run)")
    ratios = []
    for score in ("brier", "log_loss"):
        ratios += case(f"{score}, continuous p", p, y, None, score, args.runs)
    ratios += case("brier, p rounded to 3 decimals (ties)", ties, y, None, "brier", args.runs)
    ratios += case("log_loss, frequency weights", p, y, w, "log_loss", args.runs)
    print(f"\nsmallest ratio over every case and run: {min(ratios):.1f}x")


if __name__ == "__main__":
    main()
