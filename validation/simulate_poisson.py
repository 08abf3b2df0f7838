"""Coverage of the Poisson scheme of ``calibr.bootstrap`` against the multinomial
scheme, by simulation, on the same datasets.

The models and their exact population values are those of
``validation/bootstrap_coverage.py`` (``overconfident``: p ~ U(0, 1),
P(y = 1 | p) = p^2, population ECE 1/6 for any equal-width bins, population MCE
with 10 bins 0.2475 - 0.0025/3). For each metric and scheme, ``--datasets``
datasets of ``--n`` rows (dataset s uses ``numpy.random.default_rng([0, s])``,
as there) get a ``--level`` percentile and basic interval from ``--resamples``
resamples (seed s for both schemes); the share that covers the population value
is reported with its binomial 99% band around the nominal level, and the mean
width.

Run from the repository root::

    python validation/simulate_poisson.py                 # 400 datasets, n = 5,000
    python validation/simulate_poisson.py --datasets 100  # quick

The results at the defaults are in ``docs/bootstrap.md`` ("The Poisson scheme").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bootstrap_coverage import MODELS, band, simulate  # noqa: E402

SCHEMES = ("multinomial", "poisson")


def _percentile(level: float):
    """The percentile interval from the replicates (numpy's linear quantiles)."""
    def interval(res):
        return tuple(np.quantile(res.bootstrap_distribution, [(1 - level) / 2,
                                                              (1 + level) / 2]))
    return interval


def _basic(level: float):
    """The basic interval: twice the estimate minus the percentile interval."""
    def interval(res):
        q_lo, q_hi = _percentile(level)(res)
        return 2 * res.estimate - q_hi, 2 * res.estimate - q_lo
    return interval


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=400)
    ap.add_argument("--n", type=int, default=5_000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--level", type=float, default=0.95)
    args = ap.parse_args(argv)
    lo, hi = band(args.level, args.datasets)
    print(f"{args.datasets} datasets of n = {args.n:,}, {args.resamples} resamples, "
          f"level {args.level}; binomial 99% band [{lo:.3f}, {hi:.3f}]")
    print(f"{'metric':<6} {'scheme':<12} {'method':<10} {'coverage':>8} {'width':>9} "
          f"{'in band':>8} {'seconds':>8}")
    for metric in MODELS["overconfident"][2]:
        for scheme in SCHEMES:
            t0 = time.perf_counter()
            shares, width = simulate("overconfident", metric, args.datasets, args.n,
                                     args.resamples, args.level,
                                     {"percentile": _percentile(args.level),
                                      "basic": _basic(args.level)}, scheme=scheme)
            seconds = time.perf_counter() - t0
            for method, share in shares.items():
                ok = "yes" if lo <= share <= hi else "no"
                print(f"{metric:<6} {scheme:<12} {method:<10} {share:>8.3f} "
                      f"{width:>9.5f} {ok:>8} {seconds:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
