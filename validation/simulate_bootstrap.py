"""Coverage of ``calibr.bootstrap`` intervals, by simulation.

The models and their exact population values: ``validation/bootstrap_coverage.py``.

For each model and method, ``--datasets`` datasets of ``--n`` rows (dataset s
uses ``numpy.random.default_rng([model, s])``) get a ``--level`` interval from
``--resamples`` resamples (seed s); the share that covers the population value
is reported with its binomial 99% band around the nominal level.

Run from the repository root::

    python validation/simulate_bootstrap.py               # 500 datasets, n = 1e4
    python validation/simulate_bootstrap.py --datasets 100 --resamples 499  # quick

The results at the defaults are in ``docs/bootstrap.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bootstrap_coverage import MODELS, band, draw, simulate  # noqa: E402

__all__ = ["MODELS", "band", "coverage", "draw"]

METHODS = ("percentile", "basic", "bca")


def coverage(model: str, metric: str, method: str, datasets: int, n: int, resamples: int,
             level: float) -> tuple[float, float]:
    """(share of intervals covering the population value, mean interval width)."""
    shares, width = simulate(model, metric, datasets, n, resamples, level, method=method)
    return shares["interval"], width


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=500)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--level", type=float, default=0.95)
    args = ap.parse_args(argv)
    lo, hi = band(args.level, args.datasets)
    print(f"{args.datasets} datasets of n = {args.n:,}, {args.resamples} resamples, "
          f"level {args.level}; binomial 99% band [{lo:.3f}, {hi:.3f}]")
    print(f"{'model':<14} {'metric':<6} {'method':<10} {'coverage':>8} {'width':>9} "
          f"{'in band':>8} {'seconds':>8}")
    for model, (_, _, truths) in MODELS.items():
        for metric in truths:
            for method in METHODS:
                t0 = time.perf_counter()
                share, width = coverage(model, metric, method, args.datasets, args.n,
                                        args.resamples, args.level)
                ok = "yes" if lo <= share <= hi else "no"
                print(f"{model:<14} {metric:<6} {method:<10} {share:>8.3f} {width:>9.5f} "
                      f"{ok:>8} {time.perf_counter() - t0:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
