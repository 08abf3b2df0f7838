"""Speed and accuracy of calibr.smece() against relplot.smECE (the smooth ECE of
Błasiok & Nakkiran 2023), on the same data in one run.

Usage::

    python benchmarks/bench_smece.py              # n = 1e6, binary and K = 10
    python benchmarks/bench_smece.py --n 100000 --repeat 3

Both are timed end to end with the automatic bandwidth: calibr on the raw
probability matrix (its input checks and top label included), relplot on the
confidences and correctness of ``relplot.multiclass_logits_to_confidences``
(included in its time). Accuracy is measured at relplot's bandwidth against a
reference, calibr's algorithm on a grid ten times finer (4,000 nodes per
sigma; its error ~1e-8, docs/smece.md), and against relplot with a 20,001-point
evaluation mesh (relplot's own discretisation refined, independent of calibr's
code). The target is in benchmarks/README.md ("Smooth ECE").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import relplot  # noqa: E402

import calibr  # noqa: E402
from calibr._metrics import smooth as _smooth  # noqa: E402

TARGET = 5.0  # calibr at least this many times faster, at equal or better accuracy


def median_time(f, repeat: int) -> tuple[float, object]:
    out = f()  # warm-up (compiled, caches warm)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def fine_reference(x: np.ndarray, hits: np.ndarray, sigma: float) -> float:
    old = _smooth.NODES_PER_SIGMA
    _smooth.NODES_PER_SIGMA = 10 * old
    try:
        return _smooth._smece_at(_smooth._binned(x, hits, sigma), sigma)
    finally:
        _smooth.NODES_PER_SIGMA = old


def relplot_fine(x: np.ndarray, c: np.ndarray, sigma: float) -> float:
    old = relplot.config.smECE_mesh_pts
    relplot.config.smECE_mesh_pts = 20_001
    try:
        return float(relplot.smECE_sigma(x, c, sigma))
    finally:
        relplot.config.smECE_mesh_pts = old


def case(name: str, p: np.ndarray, y: np.ndarray, repeat: int) -> float:
    if p.ndim == 1:
        def theirs():
            return relplot.smECE(p, y, return_width=True)
        x, c = p, y.astype(np.float64)
    else:
        def theirs():
            conf, correct = relplot.multiclass_logits_to_confidences(p, y, probs=True)
            return relplot.smECE(conf, correct, return_width=True)
        x, c = relplot.multiclass_logits_to_confidences(p, y, probs=True)

    def ours():
        return calibr.smece(p, y, classes=None if p.ndim == 1 else range(p.shape[1]))

    t_ours, v_ours = median_time(ours, repeat)
    t_theirs, (v_theirs, sigma) = median_time(theirs, repeat)
    our_sigma = calibr.smece_curve(
        p, y, points=2, classes=None if p.ndim == 1 else range(p.shape[1])).bandwidth
    hits = c.astype(np.uint8)
    ref = fine_reference(x, hits, sigma)
    ours_at = calibr.smece(x, hits.astype(np.int64), bandwidth=sigma)
    print(f"\n{name}")
    print(f"  calibr.smece     {t_ours * 1e3:9.1f} ms   value {v_ours:.8f} (sigma {our_sigma})")
    print(f"  relplot.smECE    {t_theirs * 1e3:9.1f} ms   value {float(v_theirs):.8f} "
          f"(sigma {sigma})")
    ratio = t_theirs / t_ours
    print(f"  ratio relplot / calibr: {ratio:.1f}x  (target >= {TARGET:.0f}x: "
          f"{'met' if ratio >= TARGET else 'NOT met'})")
    print(f"  at sigma = {sigma}: |calibr - reference| = {abs(ours_at - ref):.2e}, "
          f"|relplot - reference| = {abs(float(v_theirs) - ref):.2e}, "
          f"|relplot(20,001-point mesh) - reference| = {abs(relplot_fine(x, c, sigma) - ref):.2e}")
    return ratio


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(20231001)
    p = rng.random(n)
    y = (rng.random(n) < p**1.3).astype(np.int64)
    k = 10
    pm = rng.dirichlet(np.full(k, 0.3), n)
    sharp = pm**1.5 / np.sum(pm**1.5, axis=1, keepdims=True)
    ym = np.minimum((np.cumsum(sharp, axis=1) < rng.random((n, 1))).sum(axis=1), k - 1)
    print(f"smooth ECE, automatic bandwidth, n = {n:,}, median of {args.repeat} runs")
    ratios = [case("binary", p, y, args.repeat),
              case(f"multiclass (confidence), K = {k}", pm, ym, args.repeat)]
    print(f"\nsmallest ratio: {min(ratios):.1f}x")


if __name__ == "__main__":
    main()
