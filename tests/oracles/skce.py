"""Oracles of the kernel metrics (``docs/definitions.md``, "Kernel metrics"): the
formulas written plainly, with the n x n distance and residual matrices (O(n^2)
memory on purpose), as the R reference computes them.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["distance_matrix", "median_oracle", "skce_oracle"]


def distance_matrix(x: np.ndarray) -> np.ndarray:
    """|x_i - x_j| for scalars, ||x_i - x_j||_2 for the rows of a matrix."""
    if x.ndim == 1:
        return np.abs(x[:, None] - x[None, :])
    d2 = np.zeros((x.shape[0], x.shape[0]))
    for k in range(x.shape[1]):  # column by column, as R's dist() sums
        d2 += (x[:, None, k] - x[None, :, k]) ** 2
    return np.sqrt(d2)


def median_oracle(x: np.ndarray) -> float:
    """R's ``median(d[d > 0])`` of the pairwise distances ``d`` (i < j); NaN if none."""
    n = x.shape[0]
    d = distance_matrix(x)[np.triu_indices(n, 1)]
    d = d[d > 0]
    return float(np.median(d)) if d.size else math.nan


def skce_oracle(x: np.ndarray, e: np.ndarray, estimator: str, h: float | str) -> float:
    """SKCE estimate from kernel inputs ``x`` and residuals ``e``.

    ``x``, ``e``: shape ``(n,)`` (scalar kernel) or ``(n, K)`` (canonical).
    ``h``: a bandwidth or ``"median"``.
    """
    n = x.shape[0]
    if h == "median":
        h = median_oracle(x)
    D = distance_matrix(x)
    G = np.outer(e, e) if e.ndim == 1 else e @ e.T
    H = np.exp(-D / h) * G
    if estimator == "biased":
        return float(H.sum() / n**2)
    if estimator == "uq":
        return float(H[np.triu_indices(n, 1)].sum() / (n * (n - 1) / 2))
    if estimator == "ul":
        m = n // 2
        return float(H[2 * np.arange(m), 2 * np.arange(m) + 1].mean())
    raise ValueError(estimator)
