"""Speed of ``calibration_test(method="skce")`` against the dense kernel-matrix
algorithm of CalibrationTests.jl (written in numpy, as fast as numpy allows),
on the same data and the same resamples, in one run.

Usage::

    python benchmarks/bench_calibration_tests.py           # n = 1e5 (calibr only),
                                                           # and 2,000 / 10,000 (both)
    python benchmarks/bench_calibration_tests.py --quick   # n = 2,000 only

Target (2 cores): binary and confidence form, n = 1e5, 1,000 bootstrap
iterations, <= 30 s. The dense algorithm stores the n x n kernel matrix (80 GB
at n = 1e5), so it runs at n = 2,000 and 10,000 only: its time and peak memory
are printed beside calibr's, with the ratio, and the p-values of the two are
checked to agree (same resample draws).

Times are wall-clock, one run each after a warm-up call (compiled kernels),
on whatever else the machine is doing; peak memory is what ``tracemalloc``
sees of numpy's allocations (the numba kernels' own O(n) buffers are not
included).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibr._inference.calibration_tests import calibration_test  # noqa: E402
from calibr._kernels._threads import num_threads  # noqa: E402

B = 1000
H = 0.2


def data(form: str, n: int, seed: int = 0):
    rng = np.random.default_rng([seed, n])
    if form == "binary":
        p = rng.random(n)
        return p, (rng.random(n) < p).astype(np.int64)
    p = rng.dirichlet(np.ones(10), n)
    y = np.minimum((np.cumsum(p, axis=1) <= rng.random(n)[:, None]).sum(axis=1), 9)
    return p, y + 1


def kernel_view(form: str, p: np.ndarray, y: np.ndarray):
    """(x, e) the scalar kernel sees: binary, or the top-label confidence form."""
    if form == "binary":
        return p, y - p
    top = p.argmax(axis=1)
    x = p[np.arange(p.shape[0]), top]
    return x, (top == (y - 1)).astype(float) - x


def dense_skce_test(x: np.ndarray, e: np.ndarray, h: float, b: int, seed: int):
    """CalibrationTests.jl's AsymptoticSKCETest: the n x n kernel matrix, the
    statistic, and b bootstrap replicates T' = n^-2 [a (C'HC - C.diag) - 2 C.r]
    (the replicates in batches through BLAS, with calibr's draws)."""
    n = x.shape[0]
    K = np.abs(np.subtract.outer(x, x))  # one n x n matrix, transformed in place
    K /= -h
    np.exp(K, out=K)
    K *= e[:, None]
    K *= e[None, :]
    total, diag = K.sum(), np.trace(K)
    alpha = n / (n - 1)
    uq = (total - diag) / (n * (n - 1))
    statistic = alpha * uq - total / n**2
    r = K.sum(axis=1)
    d = np.diag(K).copy()
    rng = np.random.default_rng(seed)
    null = np.empty(b)
    batch = max(1, min(b, (1 << 24) // n))
    for start in range(0, b, batch):
        m = min(batch, b - start)
        rows = np.floor(n * rng.random((m, n))).astype(np.int64)  # calibr's draws
        counts = np.stack([np.bincount(row, minlength=n) for row in rows]).astype(np.float64)
        q = np.einsum("bi,bi->b", counts @ K, counts)
        null[start:start + m] = (alpha * (q - counts @ d) - 2.0 * (counts @ r)) / n**2
    return float(np.mean(null >= statistic))


def measure(fn):
    """(seconds, peak MB traced, result) of one call."""
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 2,000 only")
    args = parser.parse_args(argv)

    print(f"calibration_test(method='skce'), {B} bootstrap iterations, bandwidth {H}; "
          f"{num_threads()} threads available\n")
    for form in ("binary", "confidence"):  # warm-up: compile every kernel once
        p, y = data(form, 500)
        calibration_test(p, y, type="confidence", n_resamples=5, rng=0)

    print("| form | n | calibr s | calibr peak MB | dense s | dense peak MB | "
          "dense / calibr | same p-value |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    sizes = [2_000] if args.quick else [2_000, 10_000, 100_000]
    for form in ("binary", "confidence"):
        for n in sizes:
            p, y = data(form, n)
            t_c, m_c, res = measure(lambda p=p, y=y: calibration_test(
                p, y, type="confidence", bandwidth=H, n_resamples=B, rng=1))
            if n <= 10_000:
                x, e = kernel_view(form, p, y)
                t_d, m_d, pv = measure(lambda x=x, e=e: dense_skce_test(x, e, H, B, 1))
                dense = (f"{t_d:.2f} | {m_d:.0f} | {t_d / t_c:.0f}x | "
                         f"{'yes' if pv == res.pvalue else f'no ({pv} vs {res.pvalue})'}")
            else:
                dense = (f"cannot run (kernel matrix {8 * n * n / 1e9:.0f} GB) | | | ")
            target = "  (target <= 30 s)" if n == 100_000 else ""
            print(f"| {form} | {n:,} | {t_c:.2f}{target} | {m_c:.0f} | {dense} |")


if __name__ == "__main__":
    main()
