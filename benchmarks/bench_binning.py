"""Benchmark of the binning options: equal-mass ECE, calibr against
uncertainty-calibration's ``get_ece_em``, on the same data in one run. Prints
times and ratios.

Run:  python benchmarks/bench_binning.py [--repeat 5] [--n 1000000]

The target is in benchmarks/README.md ("Binning options"). Both are timed end to
end (calibr's input checks included), each a median of ``--repeat`` runs taken in
turn; the two results are printed too, to show that they agree.
uncertainty-calibration is a test dependency (pip install uncertainty-calibration).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import calibr


def interleaved(fns, repeat):
    """Median time of each function, the functions run in turn in every round."""
    out = {name: f() for name, f in fns.items()}  # warm-up, and the values
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args()
    import calibration

    rng = np.random.default_rng(0)
    n = args.n
    cases = {}
    p = rng.random(n)
    cases["binary"] = (p, (rng.random(n) < p).astype(np.int64))
    pk = rng.dirichlet(np.ones(10), n)
    cases["K = 10, top-label"] = (pk, rng.integers(0, 10, n))
    print(f"equal-mass ECE, 15 bins, n = {n:,}; median of {args.repeat} (seconds)")
    print(f"{'case':<20} {'calibr':>10} {'get_ece_em':>12} {'ratio':>8}  values")
    for name, (pp, yy) in cases.items():
        classes = {} if pp.ndim == 1 else {"classes": range(pp.shape[1])}
        fns = {
            "calibr": lambda pp=pp, yy=yy, c=classes: calibr.ece(
                pp, yy, 15, type="confidence", binning="equal-mass", **c),
            "peer": lambda pp=pp, yy=yy: calibration.get_ece_em(pp, yy, num_bins=15),
        }
        t, values = interleaved(fns, args.repeat)
        ratio = t["peer"] / t["calibr"]
        print(f"{name:<20} {t['calibr']:>10.4f} {t['peer']:>12.4f} {ratio:>7.1f}x  "
              f"{values['calibr']:.15g} / {float(values['peer']):.15g}")


if __name__ == "__main__":
    main()
