"""Oracles of ``calibr.calibration_test`` (``docs/calibration_tests.md``): each
test's formula written plainly, with the n x n kernel matrix (O(n^2) memory on
purpose, n <= a few thousand), following CalibrationTests.jl's algorithms:

* ``AsymptoticSKCETest``: the kernel matrix ``H = (h_ij)``, the statistic
  ``n/(n-1) SKCE_uq - SKCE_b`` and, for resampling counts ``C``, the bootstrap
  statistic ``T' = n^-2 sum_i C_i sum_j ((n/(n-1)) (C_j - delta_ij) - 2) h_ij``
  (its ``bootstrap_ccdf`` loop, one replicate at a time);
* ``AsymptoticBlockSKCETest`` with blocks of 2: the mean of ``h_{2b-1, 2b}``,
  its standard error and the normal upper tail;
* ``ConsistencyTest``: resample rows, draw labels from the resampled
  predictions, recompute the metric (here with the binned oracle);
* Spiegelhalter's z and Hosmer-Lemeshow's deciles of risk, as textbook sums.

The random draws follow the documented order of ``calibration_test`` (per
replicate: ``u = rng.random(n)`` and the rows ``floor(n * u)``, then for
consistency resampling ``rng.random(n)``), so that with the same seed the
oracle sees the same resamples.
"""

from __future__ import annotations

import math

import numpy as np

from .binned import binary_stats_oracle
from .skce import distance_matrix, median_oracle

__all__ = [
    "binary_ece_oracle",
    "block_test_oracle",
    "consistency_oracle",
    "hosmer_lemeshow_oracle",
    "kernel_inputs",
    "kernel_matrix",
    "r_quantile7",
    "skce_bootstrap_oracle",
    "skce_statistic_oracle",
    "form_matrix",
    "pvalue_share",
    "resample_counts",
    "resample_rows",
    "spiegelhalter_oracle",
]


def kernel_inputs(p: np.ndarray, y: np.ndarray, form: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """What each kernel sees: a list of ``(x, e)`` (one entry, or one per column
    for ``"classwise"``). ``p``: vector or matrix; ``y``: 0/1 (vector) or 0-based codes."""
    if p.ndim == 1:
        return [(p, y.astype(float) - p)]
    n, k = p.shape
    if form == "canonical":
        return [(p, np.eye(k)[y] - p)]
    if form == "confidence":
        top = p.argmax(axis=1)  # the first maximal column
        x = p[np.arange(n), top]
        return [(x, (top == y).astype(float) - x)]
    if form == "classwise":
        return [(p[:, c], (y == c).astype(float) - p[:, c]) for c in range(k)]
    raise ValueError(form)


def kernel_matrix(x: np.ndarray, e: np.ndarray, h: float | str) -> np.ndarray:
    """``H_ij = exp(-d(x_i, x_j) / h) <e_i, e_j>`` (``h="median"``: R's median)."""
    if h == "median":
        h = median_oracle(x)
    gram = np.outer(e, e) if e.ndim == 1 else e @ e.T
    return np.exp(-distance_matrix(x) / h) * gram


def form_matrix(p: np.ndarray, y: np.ndarray, form: str, h: float | str) -> np.ndarray:
    """The kernel matrix of a form: the mean of the per-column matrices for
    ``"classwise"`` (its SKCE is the mean of the per-column SKCEs, and every
    quantity below is linear in H)."""
    mats = [kernel_matrix(x, e, h) for x, e in kernel_inputs(p, y, form)]
    return sum(mats) / len(mats)


def skce_statistic_oracle(H: np.ndarray) -> tuple[float, float]:
    """``(SKCE_uq, n/(n-1) SKCE_uq - SKCE_b)`` from the kernel matrix."""
    n = H.shape[0]
    uq = H[np.triu_indices(n, 1)].sum() / (n * (n - 1) / 2)
    biased = H.sum() / n**2
    return float(uq), float(n / (n - 1) * uq - biased)


def skce_bootstrap_oracle(H: np.ndarray, counts: np.ndarray) -> float:
    """CalibrationTests.jl's bootstrap statistic for resampling counts ``C``:
    ``n^-2 sum_i C_i sum_j (alpha (C_j - delta_ij) - 2) h_ij``, alpha = n/(n-1)."""
    n = H.shape[0]
    alpha = n / (n - 1)
    total = 0.0
    for i in np.flatnonzero(counts):
        coef = alpha * (counts - (np.arange(n) == i)) - 2.0
        total += counts[i] * float(np.dot(coef, H[:, i]))
    return total / n**2


def resample_counts(rng: np.random.Generator, n: int) -> np.ndarray:
    """One replicate's counts, drawn as ``calibration_test`` draws them."""
    return np.bincount(resample_rows(rng, n), minlength=n).astype(float)


def resample_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    """One replicate's rows: ``floor(n * u)`` of n uniform numbers."""
    return np.floor(n * rng.random(n)).astype(np.int64)


def pvalue_share(null: np.ndarray, statistic: float) -> float:
    """The share of the null distribution at or above the statistic."""
    return float(np.mean(null >= statistic))


def block_test_oracle(x: list, e: list, h: float) -> tuple[float, float, float, float]:
    """``(estimate, stderr, z, pvalue)`` of the block test with blocks (1, 2),
    (3, 4), ...; ``x``/``e`` lists of kernel inputs (their block values averaged)."""
    n = x[0].shape[0]
    m = n // 2
    vals = np.zeros(m)
    for xk, ek in zip(x, e, strict=True):
        for b in range(m):
            i, j = 2 * b, 2 * b + 1
            d = abs(xk[i] - xk[j]) if xk.ndim == 1 else math.sqrt(
                sum((xk[i, c] - xk[j, c]) ** 2 for c in range(xk.shape[1])))
            vals[b] += math.exp(-d / h) * float(np.dot(ek[i], ek[j]))
    vals /= len(x)
    est = vals.mean()
    se = math.sqrt(((vals - est) ** 2).sum() / (m * (m - 1)))
    z = est / se
    return float(est), se, z, 0.5 * math.erfc(z / math.sqrt(2.0))


def binary_ece_oracle(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Binary ECE: ``sum_b |sum of y - sum of p| / n`` over the bins."""
    count, sum_conf, sum_hit = binary_stats_oracle(p, y, bins)
    return float(np.abs(sum_hit - sum_conf).sum() / p.shape[0])


def consistency_oracle(p: np.ndarray, seed: int, n_resamples: int, bins: int = 10) -> np.ndarray:
    """The ECE of ``n_resamples`` consistency resamples of a vector ``p``."""
    rng = np.random.default_rng(seed)
    n = p.shape[0]
    out = np.empty(n_resamples)
    for b in range(n_resamples):
        ps = p[resample_rows(rng, n)]
        ys = (rng.random(n) < ps).astype(np.int64)
        out[b] = binary_ece_oracle(ps, ys, bins)
    return out


def spiegelhalter_oracle(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spiegelhalter's z written as the standardised Brier score:
    ``(B - E0[B]) / sqrt(Var0[B])`` under y_i ~ Bernoulli(p_i), two-sided p."""
    n = p.shape[0]
    brier = np.mean((y - p) ** 2)
    expected = np.mean(p * (1 - p))
    var = np.sum((1 - 2 * p) ** 2 * p * (1 - p)) / n**2
    z = (brier - expected) / math.sqrt(var)
    return float(z), math.erfc(abs(z) / math.sqrt(2))


def r_quantile7(x: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """R's ``quantile(x, probs, type = 7)`` (its own arithmetic)."""
    xs = np.sort(x)
    n = xs.shape[0]
    out = []
    for prob in probs:
        index = (n - 1) * prob
        lo = math.floor(index)
        hi = math.ceil(index)
        q = xs[lo]
        if index > lo and xs[hi] != q:
            t = index - lo
            q = (1 - t) * q + t * xs[hi]
        out.append(q)
    return np.array(out)


def hosmer_lemeshow_oracle(p: np.ndarray, y: np.ndarray, g: int = 10) -> tuple[float, int]:
    """``(chi-square, number of groups)``: deciles of risk cut at R's type-7
    quantiles of p at 0, 1/g, ..., 1 (repeats merged), intervals closed on the
    right and the first closed on both sides, empty groups dropped; a cell
    with expected count 0 adds 0 if its observed count is 0, else infinity."""
    probs = np.arange(g + 1) * (1.0 / g)  # R's seq(0, 1, 1/g) ...
    probs[-1] = 1.0  # ... with its last value 1 (for g = 49 R's is below 1)
    breaks = sorted(set(r_quantile7(p, probs).tolist()))
    chi2 = 0.0
    groups = 0
    for k in range(1, len(breaks)):
        lo, hi = breaks[k - 1], breaks[k]
        inside = [(lo < v <= hi) or (k == 1 and v == lo) for v in p]
        inside = np.array(inside)
        if not inside.any():
            continue
        groups += 1
        o1, e1 = y[inside].sum(), p[inside].sum()
        o0, e0 = (1 - y[inside]).sum(), (1 - p[inside]).sum()
        for o, e in ((o1, e1), (o0, e0)):
            if e > 0:
                chi2 += (o - e) ** 2 / e
            elif o > 0:
                chi2 = math.inf
    return float(chi2), groups
