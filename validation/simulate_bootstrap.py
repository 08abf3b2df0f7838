"""Coverage of ``calibr.bootstrap`` intervals, by simulation.

Models with a known calibration function, so that the population value of the
metric is known exactly:

* ``overconfident``: ``p ~ U(0, 1)``, ``P(y = 1 | p) = p^2``. With equal-width
  bins no bin contains a sign change of ``p^2 - p``, so the population ECE is
  ``sum_b |int_b (p^2 - p) dp| = int_0^1 (p - p^2) dp = 1/6`` for every
  number of bins, and the population MCE with 10 bins is the largest bin
  mean of ``p - p^2``: on a bin of centre c and half-width w it is
  ``c - c^2 - w^2/3``, largest at c = 0.45 and 0.55: ``0.2475 - 0.0025/3``.
* ``calibrated``: ``P(y = 1 | p) = p``: the population ECE is 0, which no
  interval of a nonnegative estimator with a positive bias can cover; shown
  for honesty, not as a target.

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
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calibr  # noqa: E402

#: name -> (model index for the seeds, calibration function, {metric: population value})
MODELS = {
    "overconfident": (0, lambda p: p**2, {"ece": 1 / 6, "mce": 0.2475 - 0.0025 / 3}),
    "calibrated": (1, lambda p: p, {"ece": 0.0}),
}
METHODS = ("percentile", "basic", "bca")


def draw(model: str, seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Dataset ``seed`` of ``model``: n predictions and their labels."""
    index, f, _ = MODELS[model]
    rng = np.random.default_rng([index, seed])
    p = rng.random(n)
    y = rng.random(n) < f(p)
    return p, y


def coverage(model: str, metric: str, method: str, datasets: int, n: int, resamples: int,
             level: float) -> tuple[float, float]:
    """(share of intervals covering the population value, mean interval width)."""
    truth = MODELS[model][2][metric]
    hits = 0
    width = 0.0
    for s in range(datasets):
        p, y = draw(model, s, n)
        res = calibr.bootstrap(p, y, metric, n_resamples=resamples, rng=s, method=method,
                               confidence_level=level)
        low, high = res.confidence_interval
        hits += low <= truth <= high
        width += high - low
    return hits / datasets, width / datasets


def band(level: float, datasets: int) -> tuple[float, float]:
    """The binomial 99% band of a share around ``level`` (normal approximation)."""
    half = 2.5758 * math.sqrt(level * (1 - level) / datasets)
    return level - half, level + half


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
