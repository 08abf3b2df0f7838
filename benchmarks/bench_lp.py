"""Speed of ``calibr.calibration_error(debias=True)`` (the debiased L2 calibration
error over 15 equal-mass bins) against uncertainty-calibration's
``get_calibration_error(p=2, debias=True)`` on the same data, in one run.

Usage::

    python benchmarks/bench_lp.py              # n = 1e6, binary and K = 10
    python benchmarks/bench_lp.py --repeat 3

Target (``benchmarks/README.md``): >= 10x faster, binary and K = 10 (marginal).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calibr  # noqa: E402


def data(n: int, k: int | None):
    rng = np.random.default_rng([n, k or 0])
    if k is None:
        p = rng.random(n)
        return p, (rng.random(n) < p).astype(np.int64)
    p = rng.dirichlet(np.ones(k), n)
    y = np.minimum((np.cumsum(p, axis=1) <= rng.random(n)[:, None]).sum(axis=1), k - 1)
    return p, y


def best(fn, repeat: int) -> tuple[float, float]:
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value


def main(argv: list[str] | None = None) -> None:
    from calibration import get_calibration_error

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    calibr.calibration_error(*data(1000, None), bins=15, binning="equal-mass", debias=True)
    print(f"debiased L2, 15 equal-mass bins, n = {args.n:,}; best of {args.repeat}\n")
    print("| case | calibr s | uncertainty-calibration s | ratio | values |")
    print("| --- | --- | --- | --- | --- |")
    for k in (None, 10):
        p, y = data(args.n, k)
        kw = {} if k is None else {"classes": range(k)}
        t_c, v_c = best(lambda p=p, y=y, kw=kw: calibr.calibration_error(
            p, y, bins=15, binning="equal-mass", debias=True, **kw), args.repeat)
        t_u, v_u = best(lambda p=p, y=y: get_calibration_error(p, y, p=2, debias=True),
                        args.repeat)
        name = "binary" if k is None else f"K = {k}, marginal"
        print(f"| {name} | {t_c:.3f} | {t_u:.2f} | {t_u / t_c:.1f}x | {v_c:.12g} / {v_u:.12g} |",
              flush=True)


if __name__ == "__main__":
    main()
