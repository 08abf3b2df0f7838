"""Type I error and power of ``calibr.calibration_test``, by simulation.

For each test and each data-generating model, ``--datasets`` independent
datasets of ``--n`` rows are drawn (fixed seeds: dataset ``s`` of model ``m``
uses ``numpy.random.default_rng([m, s])``), the test is run at its defaults
with ``--resamples`` resamples (seed ``s``), and the share of datasets with
p-value <= 0.05 is reported:

* calibrated models (labels drawn from the predictions): the rejection rate is
  the type I error; it should lie in the binomial 99% band around 0.05 for
  ``--datasets`` draws (printed), and the Kolmogorov-Smirnov distance of the
  p-values from the uniform distribution is shown as well;
* miscalibrated models (labels drawn from other probabilities): the rejection
  rate is the power.

Run from the repository root (about 20 minutes on 2 cores at the defaults)::

    python validation/simulate_tests.py               # 500 datasets, n = 500
    python validation/simulate_tests.py --datasets 100 --resamples 200   # quick

The results at the defaults are in ``docs/calibration_tests.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibr._inference.calibration_tests import calibration_test  # noqa: E402

ALPHA = 0.05


def _expit(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _categorical(rng: np.random.Generator, prob: np.ndarray) -> np.ndarray:
    u = rng.random(prob.shape[0])
    return np.minimum((np.cumsum(prob, axis=1) <= u[:, None]).sum(axis=1), prob.shape[1] - 1)


#: Data-generating models: name -> (kind, description, draw(rng, n) -> (p, y)).
def _binary_calibrated(rng, n):
    p = rng.beta(2.0, 2.0, n)
    return p, (rng.random(n) < p).astype(np.int64)


def _binary_overconfident(rng, n):
    z = rng.normal(0.0, 1.5, n)
    return _expit(1.5 * z), (rng.random(n) < _expit(z)).astype(np.int64)


def _binary_shifted(rng, n):
    z = rng.normal(0.0, 1.5, n)
    return _expit(z), (rng.random(n) < _expit(z + 0.4)).astype(np.int64)


def _multi_calibrated(rng, n):
    p = rng.dirichlet(np.ones(3), n)
    return p, _categorical(rng, p) + 1


def _multi_overconfident(rng, n):
    logits = rng.normal(0.0, 1.0, (n, 3))
    return _softmax(1.5 * logits), _categorical(rng, _softmax(logits)) + 1


def _multi_shifted(rng, n):
    logits = rng.normal(0.0, 1.0, (n, 3))
    truth = _softmax(logits + np.array([0.4, 0.0, -0.4]))
    return _softmax(logits), _categorical(rng, truth) + 1


MODELS = {
    "binary calibrated": ("binary", "p ~ Beta(2, 2), y ~ Bernoulli(p)", _binary_calibrated),
    "binary overconfident": (
        "binary", "z ~ N(0, 1.5^2), p = expit(1.5 z), y ~ Bernoulli(expit(z))",
        _binary_overconfident),
    "binary shifted": (
        "binary", "z ~ N(0, 1.5^2), p = expit(z), y ~ Bernoulli(expit(z + 0.4))",
        _binary_shifted),
    "3-class calibrated": ("multi", "p ~ Dirichlet(1, 1, 1), y ~ Categorical(p)",
                           _multi_calibrated),
    "3-class overconfident": (
        "multi", "logits ~ N(0, 1) iid, p = softmax(1.5 logits), y ~ Cat(softmax(logits))",
        _multi_overconfident),
    "3-class shifted": (
        "multi", "p = softmax(logits), y ~ Cat(softmax(logits + (0.4, 0, -0.4)))",
        _multi_shifted),
}

#: Tests: name -> (kind, keyword arguments of calibration_test).
TESTS = {
    "skce": ("binary", {"method": "skce"}),
    "skce_block": ("binary", {"method": "skce_block"}),
    "consistency (ECE)": ("binary", {"method": "consistency"}),
    "spiegelhalter": ("binary", {"method": "spiegelhalter"}),
    "hosmer_lemeshow ddof=2": ("binary", {"method": "hosmer_lemeshow"}),
    "hosmer_lemeshow ddof=0": ("binary", {"method": "hosmer_lemeshow", "ddof": 0}),
    "skce canonical": ("multi", {"method": "skce", "type": "canonical"}),
    "skce confidence": ("multi", {"method": "skce", "type": "confidence"}),
    "skce classwise": ("multi", {"method": "skce", "type": "classwise"}),
    "skce_block canonical": ("multi", {"method": "skce_block", "type": "canonical"}),
    "consistency (ECE confidence)": ("multi", {"method": "consistency", "type": "confidence"}),
}


def binomial_band(m: int, alpha: float, level: float = 0.99) -> tuple[int, int]:
    """The central ``level`` band of Binomial(m, alpha): the smallest lo and largest
    hi with P(X < lo) <= (1 - level)/2 and P(X > hi) <= (1 - level)/2."""
    pmf = [math.comb(m, k) * alpha**k * (1 - alpha) ** (m - k) for k in range(m + 1)]
    tail = (1 - level) / 2
    lo, acc = 0, 0.0
    while acc + pmf[lo] <= tail:
        acc += pmf[lo]
        lo += 1
    hi, acc = m, 0.0
    while acc + pmf[hi] <= tail:
        acc += pmf[hi]
        hi -= 1
    return lo, hi


def ks_uniform(pvalues: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance of the p-values from U(0, 1)."""
    x = np.sort(pvalues)
    m = x.shape[0]
    k = np.arange(1, m + 1)
    return float(max(np.max(k / m - x), np.max(x - (k - 1) / m)))


def _run(job: tuple[str, str, int, int, int]) -> tuple[str, str, np.ndarray, float]:
    model, test, datasets, n, resamples = job
    draw = MODELS[model][2]
    kwargs = dict(TESTS[test][1])
    m_id = list(MODELS).index(model)
    pvalues = np.empty(datasets)
    start = time.perf_counter()
    for s in range(datasets):
        p, y = draw(np.random.default_rng([m_id, s]), n)
        res = calibration_test(p, y, n_resamples=resamples, rng=s, **kwargs)
        pvalues[s] = res.pvalue
    return model, test, pvalues, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=500)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)

    jobs = [(model, test, args.datasets, args.n, args.resamples)
            for model, (kind, _, _) in MODELS.items()
            for test, (tkind, _) in TESTS.items() if tkind == kind]
    lo, hi = binomial_band(args.datasets, ALPHA)
    print(f"{args.datasets} datasets of n = {args.n} per model, {args.resamples} resamples, "
          f"alpha = {ALPHA}; binomial 99% band of the rejection count under the null: "
          f"[{lo}, {hi}] = [{lo / args.datasets:.3f}, {hi / args.datasets:.3f}]\n")
    for model, (_, desc, _) in MODELS.items():
        print(f"- {model}: {desc}")
    print()
    results = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for model, test, pvalues, seconds in pool.map(_run, jobs):
            results[(model, test)] = (pvalues, seconds)

    print("| model | test | rejection rate at 0.05 | in 99% band | KS distance | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (model, test), (pvalues, seconds) in results.items():
        count = int(np.count_nonzero(pvalues <= ALPHA))
        null = "calibrated" in model
        band = ("yes" if lo <= count <= hi else "**no**") if null else "(power)"
        ks = f"{ks_uniform(pvalues):.3f}" if null else ""
        print(f"| {model} | {test} | {count / args.datasets:.3f} | {band} | {ks} | "
              f"{seconds:.0f} |")


if __name__ == "__main__":
    main()
