"""Oracle of ``calibr.ecce`` (``docs/definitions.md``, "Cumulative calibration
errors: `ecce()`"), written from the definition of Arrieta-Ibarra et al. (2022):
the rows grouped by their distinct ``p`` (``numpy.unique``), the cumulative sum
of ``w (y - p)`` over the groups, the path ``0, C_1, ..., C_m`` over the total
weight, its maximum absolute value and its range; and the null tails of both,
the maximum of ``|B|`` and the range of ``B`` for standard Brownian motion, in
40-digit arithmetic (mpmath).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cumulative_path", "ecce_oracle", "max_abs_sf_oracle"]


def ecce_oracle(p, y, weights=None) -> tuple[float, float, float]:
    """``(ks, kuiper, sigma)`` of binary data: ``p`` and 0/1 ``y`` as sequences."""
    path, sigma = cumulative_path(p, y, weights)
    return float(np.max(np.abs(path))), float(np.max(path) - np.min(path)), sigma


def cumulative_path(p, y, weights=None) -> tuple[np.ndarray, float]:
    """The path ``0, C_1, ..., C_m`` (one value per distinct ``p``) and sigma."""
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(p) if weights is None else np.asarray(weights, dtype=np.float64)
    values, block = np.unique(p, return_inverse=True)
    total = float(np.sum(w))
    path = [0.0]
    for j in range(values.shape[0]):
        rows = block == j
        path.append(path[-1] + float(np.sum(w[rows] * (y[rows] - p[rows]))))
    path = np.array(path) / total
    sigma = math.sqrt(float(np.sum(w * p * (1.0 - p)))) / total
    return path, sigma


def max_abs_sf_oracle(x: float) -> float:
    """``P(max_t |B_t| > x)`` on [0, 1]: ``2 sum_{k >= 1} (-1)^(k-1) erfc((2k - 1) x /
    sqrt(2))`` (the reflection principle), summed in 40 digits until the terms
    vanish; below x = 0.5 from the theta series ``1 - (4 / pi) sum_k (-1)^k / (2k + 1)
    exp(-(2k + 1)^2 pi^2 / (8 x^2))`` (the erfc series converges slowly there)."""
    import mpmath

    with mpmath.workdps(40):
        v = mpmath.mpf(x)
        if v <= 0:
            return 1.0
        total = mpmath.mpf(0)
        if v < 0.5:
            k = 0
            while True:
                odd = 2 * k + 1
                term = mpmath.exp(-odd * odd * mpmath.pi ** 2 / (8 * v * v)) / odd
                total += term if k % 2 == 0 else -term
                if term < mpmath.mpf(10) ** -45:
                    break
                k += 1
            return float(1 - 4 / mpmath.pi * total)
        k = 1
        while True:
            term = mpmath.erfc((2 * k - 1) * v / mpmath.sqrt(2))
            total += term if k % 2 else -term
            if term < mpmath.mpf(10) ** -45:
                break
            k += 1
        return float(2 * total)
