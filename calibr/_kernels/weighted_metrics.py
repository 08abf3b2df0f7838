"""Frequency-weighted ``ece()``, ``mce()``, ``skce()`` and ``mmce()``
(``docs/definitions.md``, "Frequency weights").

A weight ``w_i`` counts row ``i`` ``w_i`` times: integer weights give the value
of the sample in which each row is repeated ``w_i`` times, to rounding.

* Binned metrics: the per-bin statistics become weighted sums, ``count_b =
  sum w_i``, ``sum_conf_b = sum w_i x_i``, ``sum_hit_b = sum w_i c_i`` over the
  rows in bin b (``calibr._binning.stats``, the numpy path of every option), and
  :func:`calibr._kernels.binned.ece_from_stats` / ``mce_from_stats`` turn them
  into the metrics unchanged (a bin is empty when its total weight is 0).
* Kernel metrics: ``W = sum_{i<j} w_i w_j h_ij``, ``D1 = sum_i w_i h_ii``,
  ``D2 = sum_i w_i^2 h_ii`` (:mod:`calibr._kernels.weighted_sums`), and with
  ``N = sum_i w_i``: ``"biased"`` ``(2 W + D2) / N^2``, ``"uq"``
  ``(W + (D2 - D1) / 2) / C(N, 2)``. The scalar forms use the O(n) recurrence of
  :func:`calibr._kernels.weighted_sums.weighted_pair_sum` after one sort; the
  canonical form sums the kernel matrix's upper triangle in blocks of rows
  (O(n^2 K) time, O(block * n) memory, never n x n).

Rows of weight 0 are dropped before the kernel sums, so that a weight of 0 gives
exactly (bit for bit) the value without the row.
"""

from __future__ import annotations

import math

import numpy as np

from .weighted_sums import gap_factors, sorted_scalars, weighted_pair_sum

__all__ = [
    "weighted_canonical_sums",
    "weighted_estimate",
    "power_of_two_scale",
    "weighted_scalar_sums",
]

#: Rows of the canonical kernel matrix computed together (``BLOCK * n`` float64).
BLOCK = 256


# --------------------------------------------------------------------------
# kernel sums


def weighted_scalar_sums(x: np.ndarray, c: np.ndarray, w: np.ndarray,
                         h: float) -> tuple[float, float, float]:
    """``(W, D1, D2)`` of the scalar Laplacian kernel, ``e = c - x``; O(n log n)."""
    order, xs, es = sorted_scalars(np.ascontiguousarray(x, dtype=np.float64), c)
    g = gap_factors(xs, float(h))
    pair, d1, d2 = weighted_pair_sum(es, np.ascontiguousarray(w), order, g)
    return float(pair), float(d1), float(d2)


def weighted_canonical_sums(p: np.ndarray, codes: np.ndarray, w: np.ndarray,
                            h: float) -> tuple[float, float, float]:
    """``(W, D1, D2)`` of the canonical kernel ``exp(-||p_i - p_j|| / h) <e_i, e_j>``,
    ``e_i = onehot(y_i) - p_i``; distances summed in column order (R's ``dist()``).
    Only the pairs ``i < j`` are evaluated, a block of rows at a time."""
    n, k = p.shape
    e = -p.copy()
    e[np.arange(n), codes] += 1.0
    diag = np.einsum("ik,ik->i", e, e)
    d1 = float(w @ diag)
    d2 = float((w * w) @ diag)
    pair = 0.0
    for i0 in range(0, n - 1, BLOCK):
        i1 = min(n, i0 + BLOCK)
        sq = np.zeros((i1 - i0, n - i0))
        for col in range(k):
            diff = p[i0:i1, col, None] - p[None, i0:, col]
            sq += diff * diff
        hb = np.exp(-np.sqrt(sq) / h) * (e[i0:i1] @ e[i0:].T)
        hb *= w[i0:i1, None] * w[None, i0:]
        pair += float(np.triu(hb, 1).sum())  # row i of the block: columns j > i
    return pair, d1, d2


def weighted_estimate(estimator: str, total: float, pair: float, d1: float, d2: float) -> float:
    """``"biased"`` or ``"uq"`` from the weighted sums and ``N = total``."""
    if estimator == "biased":
        return (2.0 * pair + d2) / (total * total)
    return (pair + (d2 - d1) / 2.0) / (total * (total - 1.0) / 2.0)


def power_of_two_scale(w: np.ndarray) -> np.ndarray:
    """``w`` times the power of two that brings its maximum into [0.5, 1): exact, so
    that the biased estimate (homogeneous of degree 0 in w) keeps every bit and
    its sums cannot overflow however large the weights (weights below 2**-1022
    times the largest lose bits as subnormals: their share is below 1e-300)."""
    _, exponent = math.frexp(float(np.max(w)))
    return np.ldexp(w, -exponent)
