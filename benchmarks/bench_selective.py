"""Speed of calibr's selective-prediction areas and of its calibration gain,
against their peers on the same data, in one run.

Usage::

    python benchmarks/bench_selective.py               # n = 1e6, 3 repeats
    python benchmarks/bench_selective.py --n 100000 --repeat 5

The data: n continuous binary p in (0.01, 0.99) and y drawn from p ** 1.5 (int64).
Each repeat times, end to end:

* ``calibr.aurc(p, y)`` and ``calibr.augrc(p, y)`` (each sorts), against
  torch-uncertainty 0.13.0's ``AURC`` and ``AUGRC`` (``update`` and ``compute``
  on CPU float64 tensors of p; its module loaded from its file, as in
  tests/test_selective.py) and uncertainty-calibration's
  ``get_selective_stats(conf, correct)`` (given the confidences and hits,
  untimed), and ``numpy.sort(p)`` as the floor;
* ``calibr.calibration_gain(p, y, method=m, cv=5)`` for Platt and isotonic
  against scikit-learn's fits on the same five folds (``LogisticRegression(C=
  inf)`` on logit(p), ``IsotonicRegression(out_of_bounds="clip")``, each fitted on
  four folds and predicting the fifth, plus the two losses): the work of
  ``CalibratedClassifierCV``'s calibrators without its estimator (its folds fit the
  estimator, not the map, so it cannot run calibr's cross-fitting itself); and
  the temperature map against probmetrics 1.3.0's ``TemperatureScalingCalibrator``
  on the same folds.

``--areas-only`` leaves out the calibration gain (most of the run's time). The
ratios of each repeat are printed; the summary gives their range. The targets
are in benchmarks/README.md ("Selective prediction and the calibration gain").
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from calibration.utils import get_selective_stats  # noqa: E402
from probmetrics.calibrators import TemperatureScalingCalibrator  # noqa: E402
from probmetrics.distributions import CategoricalProbs  # noqa: E402
from sklearn.isotonic import IsotonicRegression  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

import calibr  # noqa: E402
from calibr._metrics.recalibration import folds  # noqa: E402

PEER_TARGET = 10.0  # aurc/augrc at least this many times faster than torch-uncertainty's


def _tu():
    root = Path(importlib.util.find_spec("torch_uncertainty").submodule_search_locations[0])
    spec = importlib.util.spec_from_file_location(
        "tu_risk_coverage", root / "metrics" / "classification" / "risk_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def data(n: int, seed: int = 20261206):
    rng = np.random.default_rng(seed)
    p = 0.01 + 0.98 * rng.random(n)
    y = (rng.random(n) < p ** 1.5).astype(np.int64)
    return p, y


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def tu_area(cls, pt, yt):
    m = cls()
    m.update(pt, yt)
    return float(m.compute())


def sklearn_gain(p, y, fold, method):
    z = np.log(p) - np.log1p(-p)
    q = np.empty_like(p)
    for k in range(fold.max() + 1):
        t = fold == k
        if method == "platt":
            lr = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(z[~t, None], y[~t])
            q[t] = lr.predict_proba(z[t, None])[:, 1]
        else:
            q[t] = IsotonicRegression(out_of_bounds="clip").fit(p[~t], y[~t]).predict(p[t])
    return np.mean((p - y) ** 2) - np.mean((q - y) ** 2)


def probmetrics_temperature(p, y, fold):
    probs = torch.tensor(np.column_stack((1 - p, p)))
    q = np.empty_like(p)
    for k in range(fold.max() + 1):
        t = fold == k
        cal = TemperatureScalingCalibrator()
        cal.fit_torch(CategoricalProbs(probs[~t]), torch.tensor(y[~t]))
        q[t] = cal.predict_proba_torch(CategoricalProbs(probs[t])).get_probs()[:, 1].numpy()
    return np.mean(-np.log(np.where(y == 1, p, 1 - p))) - np.mean(
        -np.log(np.where(y == 1, q, 1 - q)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--areas-only", action="store_true",
                    help="time aurc/augrc and their peers only, not the calibration gain")
    args = ap.parse_args()
    tu = _tu()
    p, y = data(args.n)
    pt, yt = torch.tensor(p), torch.tensor(y)
    conf = np.maximum(p, 1 - p)
    hit = (p > 0.5) == (y == 1)
    fold = folds(y, 5, 0)
    calibr.aurc(p, y)
    calibr.augrc(p, y)
    calibr.calibration_gain(p[:1000], y[:1000], "brier", "isotonic")
    print(f"selective prediction and the calibration gain, n = {args.n:,}, "
          f"{args.repeat} repeats")
    ratios: dict[str, list[float]] = {}

    def note(key, value):
        ratios.setdefault(key, []).append(value)

    for r in range(args.repeat):
        t_sort, _ = timed(lambda: np.sort(p))
        t_aurc, a = timed(lambda: calibr.aurc(p, y))
        t_augrc, g = timed(lambda: calibr.augrc(p, y))
        t_tu_a, ta = timed(lambda: tu_area(tu.AURC, pt, yt))
        t_tu_g, tg = timed(lambda: tu_area(tu.AUGRC, pt, yt))
        t_uc, (area, _) = timed(lambda: get_selective_stats(conf, hit))
        note("aurc / np.sort", t_aurc / t_sort)
        note("torch-uncertainty AURC / aurc", t_tu_a / t_aurc)
        note("torch-uncertainty AUGRC / augrc", t_tu_g / t_augrc)
        note("get_selective_stats / aurc", t_uc / t_aurc)
        print(f"  repeat {r + 1}: np.sort {t_sort:.3f} s; aurc {t_aurc:.3f} s, augrc "
              f"{t_augrc:.3f} s; torch-uncertainty AURC {t_tu_a:.3f} s, AUGRC {t_tu_g:.3f} s; "
              f"get_selective_stats {t_uc:.3f} s")
        if args.areas_only:
            continue
        for method in ("platt", "isotonic"):
            t_c, gain = timed(lambda m=method: calibr.calibration_gain(p, y, "brier", m))
            t_s, ref = timed(lambda m=method: sklearn_gain(p, y, fold, m))
            note(f"sklearn {method} / calibration_gain", t_s / t_c)
            print(f"    {method}: calibration_gain {t_c:.3f} s ({gain.calibration_error:.6g}), "
                  f"scikit-learn on the same folds {t_s:.3f} s ({ref:.6g})")
        t_c, gain = timed(lambda: calibr.calibration_gain(p, y, "log_loss", "temperature"))
        t_s, ref = timed(lambda: probmetrics_temperature(p, y, fold))
        note("probmetrics temperature / calibration_gain", t_s / t_c)
        print(f"    temperature: calibration_gain {t_c:.3f} s ({gain.calibration_error:.6g}), "
              f"probmetrics on the same folds {t_s:.3f} s ({ref:.6g})")
    print(f"\n  aurc calibr {a!r}, 1 - get_selective_stats {1 - area!r} (step sum), "
          f"torch-uncertainty {ta!r}; augrc calibr {g!r}, torch-uncertainty {tg!r}")
    print("\n  ratios (range over repeats):")
    for key, values in ratios.items():
        print(f"    {key}: {min(values):.2f} - {max(values):.2f}")
    low = min(min(ratios["torch-uncertainty AURC / aurc"]),
              min(ratios["torch-uncertainty AUGRC / augrc"]))
    print(f"  target: >= {PEER_TARGET:.0f}x faster than torch-uncertainty: "
          f"{'met' if low >= PEER_TARGET else 'NOT met'} (lowest {low:.2f}x)")


if __name__ == "__main__":
    main()
