"""Type I error of every ``calibr.calibration_test`` method at small n, by simulation.

Under calibration (labels drawn from the predictions), for each method and each
n in ``--ns``, independent datasets are drawn (dataset ``s`` at size n uses
``numpy.random.default_rng([n, s])``; the test's resampling seed is ``s``), the
test is run at its defaults, and the share of datasets with p-value <= 0.05 is
the type I error. Printed per cell: the rejection rate, its Monte Carlo
standard error ``sqrt(r (1 - r) / m)`` and the one-sided upper 95% limit of the
rate (Clopper-Pearson, ``scipy.stats.beta``).

The criterion (``docs/calibration_tests.md``, "Small samples"): a test holds its
level at n when the upper 95% limit of its rejection rate is at most 0.075
(Bradley's liberal criterion, 1.5 alpha, for alpha = 0.05); a test's minimum n
is the smallest n of the grid from which it holds at every larger n of the
grid. Those minimums are ``calibr._inference.calibration_tests.MIN_N``.

The data: binary ``p ~ Beta(2, 2)``, ``y ~ Bernoulli(p)``; 3-class ``p ~
Dirichlet(1, 1, 1)``, ``y ~ Categorical(p)`` (the calibrated models of
``validation/simulate_tests.py``).

Run from the repository root (about 5 minutes on 2 shared cores)::

    nice python validation/simulate_small_n.py
    nice python validation/simulate_small_n.py --scale 0.2     # quick: a fifth of the datasets
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibr._inference.calibration_tests import MIN_N, calibration_test  # noqa: E402
from calibr._input import InputError  # noqa: E402

ALPHA = 0.05
#: Bradley's liberal criterion: a rate up to 1.5 alpha holds the level.
LIBERAL = 1.5 * ALPHA
NS = (5, 10, 20, 50, 100, 500, 1000)


def _binary(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    p = rng.beta(2.0, 2.0, n)
    return p, (rng.random(n) < p).astype(np.int64)


def _multi(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    p = rng.dirichlet(np.ones(3), n)
    u = rng.random(n)
    y = np.minimum((np.cumsum(p, axis=1) <= u[:, None]).sum(axis=1), 2)
    return p, y + 1


#: Tests: name -> (data, keyword arguments of calibration_test, datasets, resamples).
#: Fewer datasets where a dataset costs more (consistency resampling calls the
#: metric once per resample; the canonical SKCE test is O(n^2) per resample).
TESTS = {
    "skce": (_binary, {"method": "skce"}, 4000, 500),
    "skce_block": (_binary, {"method": "skce_block"}, 2000, None),
    "consistency (ece)": (_binary, {"method": "consistency"}, 1000, 200),
    "spiegelhalter": (_binary, {"method": "spiegelhalter"}, 2000, None),
    "hosmer_lemeshow ddof=0": (_binary, {"method": "hosmer_lemeshow", "ddof": 0}, 2000, None),
    "hosmer_lemeshow ddof=2": (_binary, {"method": "hosmer_lemeshow"}, 2000, None),
    "ks": (_binary, {"method": "ks"}, 2000, None),
    "kuiper": (_binary, {"method": "kuiper"}, 2000, None),
    "skce canonical (3-class)": (_multi, {"method": "skce", "type": "canonical"}, 1000, 200),
    "skce classwise (3-class)": (_multi, {"method": "skce", "type": "classwise"}, 1000, 200),
}


def upper_limit(count: int, m: int, level: float = 0.95) -> float:
    """One-sided upper ``level`` Clopper-Pearson limit of a binomial rate."""
    return 1.0 if count == m else float(beta.ppf(level, count + 1, m - count))


def _run(job: tuple[str, int, int]) -> tuple[str, int, int, int, int, float]:
    """(test, n, datasets run, rejections, datasets refused, seconds)."""
    test, n, datasets = job
    draw, kwargs, _, resamples = TESTS[test]
    extra = {} if resamples is None else {"n_resamples": resamples}
    rejected = refused = 0
    start = time.perf_counter()
    for s in range(datasets):
        p, y = draw(np.random.default_rng([n, s]), n)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = calibration_test(p, y, rng=s, **kwargs, **extra)
        except InputError:
            refused += 1
            continue
        # an undefined statistic (NaN p-value) is not a rejection
        rejected += bool(res.pvalue <= ALPHA)
    return test, n, datasets - refused, rejected, refused, time.perf_counter() - start


def minimum_n(rows: dict[int, tuple[int, int]]) -> int | None:
    """The smallest n of the grid from which every larger n holds the level (None:
    not even the largest)."""
    best = None
    for n in sorted(rows, reverse=True):
        m, count = rows[n]
        if m == 0 or upper_limit(count, m) > LIBERAL:
            break
        best = n
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", type=int, nargs="+", default=list(NS))
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every test's number of datasets")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)

    jobs = [(test, n, max(1, round(spec[2] * args.scale)))
            for test, spec in TESTS.items() for n in args.ns]
    # the dearest jobs first, so that both workers stay busy
    jobs.sort(key=lambda j: -j[1] * (TESTS[j[0]][3] or 1) * j[2])
    results: dict[str, dict[int, tuple[int, int]]] = {t: {} for t in TESTS}
    seconds: dict[str, float] = dict.fromkeys(TESTS, 0.0)
    refusals: dict[tuple[str, int], int] = {}
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for test, n, m, count, refused, secs in pool.map(_run, jobs):
            results[test][n] = (m, count)
            seconds[test] += secs
            refusals[(test, n)] = refused

    print(f"Rejection rate at 0.05 under calibration (p-value <= 0.05); in brackets the "
          f"Monte Carlo standard error; * where the upper 95% limit exceeds {LIBERAL:g}.")
    print()
    head = " | ".join(f"n = {n}" for n in args.ns)
    print(f"| test | datasets, resamples | {head} | minimum n | in calibr | seconds |")
    print("| --- | --- | " + " | ".join("---" for _ in args.ns) + " | --- | --- | --- |")
    for test, spec in TESTS.items():
        cells = []
        for n in args.ns:
            m, count = results[test][n]
            if m == 0:
                cells.append("refused")
                continue
            r = count / m
            se = math.sqrt(r * (1.0 - r) / m)
            mark = "*" if upper_limit(count, m) > LIBERAL else ""
            note = f" ({refusals[(test, n)]} refused)" if refusals[(test, n)] else ""
            cells.append(f"{r:.3f} ({se:.3f}){mark}{note}")
        least = minimum_n(results[test])
        method = spec[1]["method"]
        print(f"| {test} | {round(spec[2] * args.scale)}, {spec[3] or '-'} | "
              f"{' | '.join(cells)} | {least if least is not None else '> ' + str(max(args.ns))}"
              f" | {MIN_N.get(method, '-')} | {seconds[test]:.0f} |")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
