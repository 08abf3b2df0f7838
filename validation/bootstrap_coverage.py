"""The simulation loop of ``validation/simulate_bootstrap.py`` and
``validation/simulate_poisson.py``: the models with exact population values, their
datasets, and the share of bootstrap intervals that cover the population value.

* ``overconfident``: ``p ~ U(0, 1)``, ``P(y = 1 | p) = p^2``. With equal-width
  bins no bin contains a sign change of ``p^2 - p``, so the population ECE is
  ``sum_b |int_b (p^2 - p) dp| = int_0^1 (p - p^2) dp = 1/6`` for every
  number of bins, and the population MCE with 10 bins is the largest bin
  mean of ``p - p^2``: on a bin of centre c and half-width w it is
  ``c - c^2 - w^2/3``, largest at c = 0.45 and 0.55: ``0.2475 - 0.0025/3``.
* ``calibrated``: ``P(y = 1 | p) = p``: the population ECE is 0, which no
  interval of a nonnegative estimator with a positive bias can cover; shown
  for honesty, not as a target.

Dataset s of a model uses ``numpy.random.default_rng([model index, s])``, and its
bootstrap ``rng=s``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calibr  # noqa: E402

#: name -> (model index for the seeds, calibration function, {metric: population value})
MODELS = {
    "overconfident": (0, lambda p: p**2, {"ece": 1 / 6, "mce": 0.2475 - 0.0025 / 3}),
    "calibrated": (1, lambda p: p, {"ece": 0.0}),
}


def draw(model: str, seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Dataset ``seed`` of ``model``: n predictions and their labels."""
    index, f, _ = MODELS[model]
    rng = np.random.default_rng([index, seed])
    p = rng.random(n)
    y = rng.random(n) < f(p)
    return p, y


def band(level: float, datasets: int) -> tuple[float, float]:
    """The binomial 99% band of a share around ``level`` (normal approximation)."""
    half = 2.5758 * math.sqrt(level * (1 - level) / datasets)
    return level - half, level + half


def confidence_interval(res: Any) -> tuple[float, float]:
    """The interval the bootstrap gives."""
    return tuple(res.confidence_interval)


def simulate(model: str, metric: str, datasets: int, n: int, resamples: int, level: float,
             intervals: dict[str, Callable[[Any], tuple[float, float]]] | None = None,
             **options: Any) -> tuple[dict[str, float], float]:
    """For each of ``datasets`` datasets of ``model``: ``calibr.bootstrap(p, y, metric,
    n_resamples=resamples, rng=s, confidence_level=level, **options)``, and each
    interval of ``intervals`` (``{name: result -> (low, high)}``; default: the
    bootstrap's own); returns the share of each that covers the population value,
    and the mean width of the first."""
    intervals = intervals or {"interval": confidence_interval}
    truth = MODELS[model][2][metric]
    hits = dict.fromkeys(intervals, 0)
    width = 0.0
    for s in range(datasets):
        p, y = draw(model, s, n)
        res = calibr.bootstrap(p, y, metric, n_resamples=resamples, rng=s,
                               confidence_level=level, **options)
        for i, (name, interval) in enumerate(intervals.items()):
            low, high = interval(res)
            hits[name] += low <= truth <= high
            if i == 0:
                width += high - low
    return {name: k / datasets for name, k in hits.items()}, width / datasets
