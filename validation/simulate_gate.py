"""False alarms and detections of calibr's two regression gates, by simulation.

The synthetic model (``docs/regression_gate.md``, "Simulation"): a latent score
``x ~ N(0, 1)``, the label ``y ~ Bernoulli(sigmoid(x))``, and a model that sees
the score with its own noise, ``p = sigmoid(k (x + e))`` with
``e ~ N(0, 0.3^2)``. ``k = --base`` (default 1: nearly calibrated, population
ECE 0.014) is the baseline model; a second draw of ``e`` with the same ``k`` is
"the same model" (the same population ECE: the null hypothesis), and
``k = --worse`` (default 1.3: overconfident, population ECE 0.052) is the
injected worsening.

The gates:

* ``fixture``: the statistical mode of the ``calibration_regression``
  fixture. The snapshot is made on dataset A of the baseline model (its ECE and
  the two-sided percentile interval of ``calibr.bootstrap`` at ``--level``,
  ``--resamples`` replicates, seed s); the check fails when the ECE of the new
  data is above the interval's upper end. Two nulls: the new data is a fresh
  dataset of the same model (``fresh``), or a bootstrap resample of dataset A
  (``resample``); the alternative: a fresh dataset of the worse model.
* ``compare``: ``calibr compare``. On the same rows, the candidate (the same
  model, i.e. another draw of ``e``, or the worse one) against the baseline:
  ``calibr.paired_bootstrap(candidate, baseline, y, "ece",
  alternative="greater")``; a worsening is flagged when the p-value is below
  ``1 - --level``.

Dataset s of the run uses ``numpy.random.default_rng([scenario, s])`` for the
data and seed s for the bootstrap: every number below is reproducible.

Run from the repository root::

    python validation/simulate_gate.py                      # 200 datasets, n = 2000
    python validation/simulate_gate.py --datasets 50        # quick
    python validation/simulate_gate.py --base 1.6 --worse 1.9   # a miscalibrated baseline
    python validation/simulate_gate.py --small-groups --datasets 1000   # groups of 4 to 100

The results at the defaults are in ``docs/regression_gate.md``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calibr  # noqa: E402

#: The noise of a model's view of the score.
NOISE = 0.3
#: Seed streams: (scenario index) for numpy.random.default_rng([index, s]).
STREAMS = {"fixture": 0, "compare": 1}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def draw(rng: np.random.Generator, n: int, k: float) -> tuple[np.ndarray, np.ndarray]:
    """n rows of the model with slope ``k``: (p, y)."""
    x = rng.standard_normal(n)
    y = (rng.random(n) < _sigmoid(x)).astype(np.int64)
    p = _sigmoid(k * (x + NOISE * rng.standard_normal(n)))
    return p, y


def draw_pair(rng: np.random.Generator, n: int, k: float, base_k: float = 1.0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same n rows scored by the baseline (slope ``base_k``) and by a candidate
    of slope ``k``."""
    x = rng.standard_normal(n)
    y = (rng.random(n) < _sigmoid(x)).astype(np.int64)
    base = _sigmoid(base_k * (x + NOISE * rng.standard_normal(n)))
    cand = _sigmoid(k * (x + NOISE * rng.standard_normal(n)))
    return base, cand, y


def fixture_fails(seed: int, n: int, level: float, resamples: int, new: str,
                  worse: float, base: float = 1.0) -> bool:
    """Does the statistical mode fail? ``new``: "fresh", "resample" or "worse"."""
    rng = np.random.default_rng([STREAMS["fixture"], seed])
    p, y = draw(rng, n, base)
    snap = calibr.bootstrap(p, y, "ece", n_resamples=resamples, confidence_level=level,
                            rng=seed)
    if new == "fresh":
        p2, y2 = draw(rng, n, base)
    elif new == "resample":
        idx = rng.integers(0, n, n)
        p2, y2 = p[idx], y[idx]
    else:
        p2, y2 = draw(rng, n, worse)
    return bool(calibr.ece(p2, y2) > snap.confidence_interval.high)


def compare_flags(seed: int, n: int, level: float, resamples: int, k: float,
                  base: float = 1.0) -> bool:
    """Does ``calibr compare`` flag the candidate of slope ``k`` (baseline: ``base``)?"""
    rng = np.random.default_rng([STREAMS["compare"], seed])
    base_p, cand, y = draw_pair(rng, n, k, base)
    res = calibr.paired_bootstrap(cand, base_p, y, "ece", n_resamples=resamples,
                                  confidence_level=level, alternative="greater", rng=seed)
    return bool(res.pvalue < 1.0 - level)


#: The small-group nulls of ``--small-groups``: ``p ~ U(lo, hi)``, the candidate
#: ``p + shift``, the truth ``P(y = 1) = p + shift / 2``: in every bin of either model
#: the mean gap is ``shift / 2``, so both have the population ECE ``shift / 2`` (the
#: null hypothesis holds with equality), and a group of a few rows all of one class
#: makes every bootstrap resample favour one model. name -> (lo, hi, shift).
SMALL_NULLS = {"mid": (0.1, 0.7, 0.2), "low": (0.02, 0.18, 0.08)}


def small_group_flags(seed: int, n: int, level: float, resamples: int, null: str) -> bool:
    """Does ``calibr compare`` flag a candidate that is, in the population, as well
    calibrated as the baseline (the ``SMALL_NULLS[null]`` pair), on a group of n rows?"""
    lo, hi, shift = SMALL_NULLS[null]
    rng = np.random.default_rng([2 + list(SMALL_NULLS).index(null), n, seed])
    p = rng.uniform(lo, hi, n)
    y = (rng.random(n) < p + shift / 2).astype(np.int64)
    res = calibr.paired_bootstrap(p + shift, p, y, "ece", n_resamples=resamples,
                                  confidence_level=level, alternative="greater", rng=seed)
    return bool(res.pvalue < 1.0 - level)


def small_groups(datasets: int, level: float, resamples: int,
                 ns: tuple[int, ...] = (4, 5, 10, 20, 30, 50, 100)) -> dict:
    """The false-alarm rate of ``compare`` on small groups of the ``SMALL_NULLS``."""
    out = {}
    print(f"small groups: {datasets} datasets per n; level {level}; {resamples} resamples")
    for null, (lo, hi, shift) in SMALL_NULLS.items():
        print(f"{null}: p ~ U({lo}, {hi}), candidate p + {shift}, P(y = 1) = p + {shift / 2:g}"
              f" (both models' population ECE {shift / 2:g})")
        for n in ns:
            r, se = rate([small_group_flags(s, n, level, resamples, null)
                          for s in range(datasets)])
            print(f"compare  false alarms, {null}, n = {n:3d}{'':20s} {r:.3f} (se {se:.3f})")
            out[(null, n)] = r
    return out


def rate(flags: list[bool]) -> tuple[float, float]:
    """The share of True and its binomial standard error."""
    m = len(flags)
    r = sum(flags) / m
    return r, math.sqrt(max(r * (1 - r), 1e-12) / m)


def run(datasets: int, n: int, level: float, resamples: int, worse: float,
        base: float = 1.0) -> dict[str, float]:
    """Every rate of the simulation (and print them)."""
    out = {}
    seeds = range(datasets)
    print(f"{datasets} datasets of n = {n}; level {level}; {resamples} resamples; baseline "
          f"slope k = {base}, worse model k = {worse}")
    rows = [
        ("fixture", "false alarms, fresh data of the same model",
         [fixture_fails(s, n, level, resamples, "fresh", worse, base) for s in seeds]),
        ("fixture", "false alarms, a resample of the snapshot's data",
         [fixture_fails(s, n, level, resamples, "resample", worse, base) for s in seeds]),
        ("fixture", "detections, fresh data of the worse model",
         [fixture_fails(s, n, level, resamples, "worse", worse, base) for s in seeds]),
        ("compare", "false alarms, a candidate of the same model",
         [compare_flags(s, n, level, resamples, base, base) for s in seeds]),
        ("compare", "detections, the worse candidate",
         [compare_flags(s, n, level, resamples, worse, base) for s in seeds]),
    ]
    for gate, what, flags in rows:
        r, se = rate(flags)
        print(f"{gate:8s} {what:50s} {sum(flags):4d}/{len(flags)} = {r:.3f} (se {se:.3f})")
        out[f"{gate}: {what}"] = r
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--base", type=float, default=1.0,
                        help="the baseline model's slope k (default 1: nearly calibrated)")
    parser.add_argument("--worse", type=float, default=1.3,
                        help="the worse model's slope k (default 1.3)")
    parser.add_argument("--small-groups", action="store_true",
                        help="only the false alarms of compare on small groups of an "
                        "equal-ECE pair (docs/regression_gate.md, \"Small groups\")")
    args = parser.parse_args(argv)
    if args.small_groups:
        small_groups(args.datasets, args.level, args.resamples)
        return 0
    run(args.datasets, args.n, args.level, args.resamples, args.worse, args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
