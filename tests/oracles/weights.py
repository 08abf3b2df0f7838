"""Oracles of the frequency-weighted metrics (``docs/definitions.md``, "Frequency
weights"), written from the definitions and not from calibr's kernels: a plain
loop over the bins (binned), and the dense n x n kernel matrix (SKCE).

Bins come from :func:`oracles.binned.bin_of_oracle` (one mask per bin), the
top label from :func:`oracles.binned.top_label_oracle` and the distances from
:func:`oracles.skce.distance_matrix`.
"""

from __future__ import annotations

import math

import numpy as np

from .binned import bin_of_oracle, top_label_oracle
from .skce import distance_matrix

__all__ = ["weighted_binned_oracle", "weighted_skce_oracle", "weighted_metric_oracle"]


def _binary_gaps(x: np.ndarray, c: np.ndarray, w: np.ndarray, bins: int):
    """``[(total weight of the bin, |acc - conf|)]`` of the bins with a positive weight."""
    b = bin_of_oracle(x, bins)
    out = []
    for j in range(bins):
        members = b == j
        total = float(np.sum(w[members]))
        if total > 0:
            acc = float(np.sum(w[members] * c[members])) / total
            conf = float(np.sum(w[members] * x[members])) / total
            out.append((total, abs(acc - conf)))
    return out


def weighted_binned_oracle(metric: str, p, y, w, bins: int, type: str = "classwise") -> float:
    """Weighted ECE or MCE: ``p`` a vector (``y`` 0/1) or a matrix (``y`` 0-based codes)."""
    p, y, w = np.asarray(p, float), np.asarray(y), np.asarray(w, float)
    if p.ndim == 1:
        parts = [_binary_gaps(p, y.astype(float), w, bins)]
    elif type == "confidence":
        r, c = top_label_oracle(p, y)
        parts = [_binary_gaps(r, c, w, bins)]
    else:
        parts = [_binary_gaps(p[:, k], (y == k).astype(float), w, bins) for k in range(p.shape[1])]
    if metric == "mce":
        return max(g for part in parts for _, g in part)
    eces = [sum(t * g for t, g in part) / sum(t for t, _ in part) for part in parts]
    return float(np.mean(eces))


def weighted_skce_oracle(x: np.ndarray, e: np.ndarray, w: np.ndarray, estimator: str,
                         h: float) -> float:
    """Weighted SKCE with the n x n matrix ``H = exp(-D / h) * <e_i, e_j>``.

    biased: ``w' H w / N^2``; uq: the U-statistic of the repeated sample,
    ``(sum_{i<j} w_i w_j H_ij + sum_i C(w_i, 2) H_ii) / C(N, 2)``.
    """
    G = np.outer(e, e) if e.ndim == 1 else e @ e.T
    H = np.exp(-distance_matrix(x) / h) * G
    N = float(np.sum(w))
    if estimator == "biased":
        return float(w @ H @ w) / N**2
    upper = np.triu(np.outer(w, w) * H, 1).sum()
    self_pairs = np.sum(w * (w - 1) / 2 * np.diag(H))
    return float(upper + self_pairs) / (N * (N - 1) / 2)


def weighted_metric_oracle(metric: str, p, y, w, form: str, estimator: str = "biased",
                           h: float = 0.2) -> float:
    """skce/mmce of a form ("binary", "canonical", "confidence", "classwise");
    ``y`` 0/1 (binary) or 0-based codes."""
    p, y, w = np.asarray(p, float), np.asarray(y), np.asarray(w, float)
    if metric == "mmce":
        form = "binary" if p.ndim == 1 else "confidence"
        estimator = "biased"
    if form == "binary":
        value = weighted_skce_oracle(p, y - p, w, estimator, h)
    elif form == "confidence":
        r, c = top_label_oracle(p, y)
        value = weighted_skce_oracle(r, c - r, w, estimator, h)
    elif form == "classwise":
        value = float(np.mean([
            weighted_skce_oracle(p[:, k], (y == k) - p[:, k], w, estimator, h)
            for k in range(p.shape[1])
        ]))
    else:
        onehot = np.eye(p.shape[1])[y]
        value = weighted_skce_oracle(p, onehot - p, w, estimator, h)
    return math.sqrt(max(value, 0.0)) if metric == "mmce" else value
