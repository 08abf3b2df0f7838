"""Speed of calibr.brier(), log_loss() and auroc() against numpy and scikit-learn,
in one run.

Usage::

    python benchmarks/bench_scores.py                 # n = 1e7, 3 repeats
    python benchmarks/bench_scores.py --n 1000000 --repeat 5

The data: n continuous p in [0, 1) and y drawn from them (int64), binary. Each
repeat times, end to end (input checks included), ``numpy.sum(p)`` and
``calibr.brier(p, y)``; ``numpy.log(p).sum()`` and ``calibr.log_loss(p, y)``;
``numpy.sort(p)`` (a copy), ``calibr.auroc(p, y)`` and scikit-learn's
``roc_auc_score(y, p)``; and scikit-learn's ``brier_score_loss`` and ``log_loss``.
Each case's time is the shortest of ``--best-of`` calls (5; scikit-learn's one
call). It prints the ratios of that repeat; the summary gives their range. One untimed
call of each before the repeats compiles (or loads) the kernels and faults in the
first n-sized buffers. The targets are in benchmarks/README.md ("Scores").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sklearn import metrics as sk  # noqa: E402

import calibr  # noqa: E402

#: brier, log_loss: at most this many times their numpy floor; auroc: np.sort
FLOOR_TARGET = 2.0
#: auroc: at least this many times faster than scikit-learn's roc_auc_score
PEER_TARGET = 5.0


def data(n: int, seed: int = 20261206):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    return p, y


def timed(f, best_of: int):
    """The shortest of ``best_of`` calls (a call of a few milliseconds on a shared
    machine is often interrupted; the shortest is the least disturbed)."""
    out = []
    for _ in range(best_of):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return min(out)


CASES = {
    "np.sum(p)": lambda p, y: np.sum(p),
    "brier": lambda p, y: calibr.brier(p, y),
    "np.log(p).sum()": lambda p, y: np.log(p).sum(),
    "log_loss": lambda p, y: calibr.log_loss(p, y),
    "np.sort(p)": lambda p, y: np.sort(p),
    "auroc": lambda p, y: calibr.auroc(p, y),
    "sklearn roc_auc_score": lambda p, y: sk.roc_auc_score(y, p),
    "sklearn brier_score_loss": lambda p, y: sk.brier_score_loss(y, p),
    "sklearn log_loss": lambda p, y: sk.log_loss(y, p),
}

#: (name, numerator, denominator, the target, "<=" or ">=")
RATIOS = [
    ("brier / np.sum", "brier", "np.sum(p)", FLOOR_TARGET, "<="),
    ("log_loss / np.log.sum", "log_loss", "np.log(p).sum()", FLOOR_TARGET, "<="),
    ("auroc / np.sort", "auroc", "np.sort(p)", FLOOR_TARGET, "<="),
    ("sklearn roc_auc / auroc", "sklearn roc_auc_score", "auroc", PEER_TARGET, ">="),
    ("sklearn brier / brier", "sklearn brier_score_loss", "brier", None, ""),
    ("sklearn log_loss / log_loss", "sklearn log_loss", "log_loss", None, ""),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--best-of", type=int, default=5,
                    help="calls per case and repeat, the shortest kept (scikit-learn: 1)")
    args = ap.parse_args()
    p, y = data(args.n)
    for f in CASES.values():  # compile, load, fault pages in
        f(p, y)
    # the numbers agree (scikit-learn clips at 2.2e-16; no p here is below it)
    assert abs(calibr.auroc(p, y) - sk.roc_auc_score(y, p)) < 1e-12
    assert abs(calibr.brier(p, y) - sk.brier_score_loss(y, p)) < 1e-12
    assert abs(calibr.log_loss(p, y) - sk.log_loss(y, p)) < 1e-9
    runs = {name: [] for name, *_ in RATIOS}
    print(f"n = {args.n:,}, binary, {args.repeat} repeats")
    for r in range(args.repeat):
        times = {name: timed(lambda f=f: f(p, y), 1 if name.startswith("sklearn") else
                             args.best_of) for name, f in CASES.items()}
        print(f"repeat {r + 1}: " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in times.items()))
        for name, num, den, _, _ in RATIOS:
            runs[name].append(times[num] / times[den])
    print()
    for name, _, _, target, op in RATIOS:
        lo, hi = min(runs[name]), max(runs[name])
        goal = f"(target {op} {target:g})" if target is not None else ""
        print(f"{name:30s} {lo:6.2f} - {hi:6.2f} {goal}")


if __name__ == "__main__":
    main()
