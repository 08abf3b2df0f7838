"""Oracles of the binned metrics (``docs/definitions.md``, "Binned metrics").

``*_stats_oracle`` return per-bin ``(count, sum_conf, sum_hit)`` arrays as the
fast kernels of ``calibr._kernels.binned`` do, computed with one numpy mask per
bin; :func:`exact_binary` computes ECE and MCE in exact rational arithmetic.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = [
    "binary_stats_oracle",
    "bin_of_oracle",
    "breaks_oracle",
    "classwise_stats_oracle",
    "confidence_stats_oracle",
    "exact_binary",
    "top_label_oracle",
]


def breaks_oracle(bins: int) -> np.ndarray:
    """R's ``seq(0, 1, length.out = bins + 1)``: 0, ``i * (1 / bins)``, 1."""
    edges = np.arange(bins + 1) * (1.0 / bins)
    edges[-1] = 1.0
    return edges


def bin_of_oracle(v: np.ndarray, bins: int) -> np.ndarray:
    """0-based bin of each value: ``breaks[b] < v <= breaks[b+1]``, 0 in bin 0."""
    edges = breaks_oracle(bins)
    out = np.full(v.shape, -1, dtype=np.int64)
    for b in range(bins):
        lower_ok = (v > edges[b]) | ((b == 0) & (v == edges[0]))
        out[lower_ok & (v <= edges[b + 1])] = b
    assert (out >= 0).all()
    return out


def binary_stats_oracle(p: np.ndarray, y: np.ndarray, bins: int):
    """Per-bin count, sum of p and sum of y."""
    b = bin_of_oracle(p, bins)
    count = np.array([np.sum(b == j) for j in range(bins)], dtype=np.float64)
    sum_conf = np.array([np.sum(p[b == j]) for j in range(bins)], dtype=np.float64)
    sum_hit = np.array([np.sum(y[b == j]) for j in range(bins)], dtype=np.float64)
    return count, sum_conf, sum_hit


def top_label_oracle(p: np.ndarray, codes: np.ndarray):
    """Top-label confidence r and correctness c (ties to the first maximal column:
    numpy's argmax returns the first maximum)."""
    j = np.argmax(p, axis=1)
    r = p[np.arange(p.shape[0]), j]
    c = (j == codes).astype(np.float64)
    return r, c


def confidence_stats_oracle(p: np.ndarray, codes: np.ndarray, bins: int):
    r, c = top_label_oracle(p, codes)
    return binary_stats_oracle(r, c, bins)


def classwise_stats_oracle(p: np.ndarray, codes: np.ndarray, bins: int):
    """Per-class, per-bin statistics, each array of shape (K, bins)."""
    parts = [binary_stats_oracle(p[:, k], (codes == k).astype(np.float64), bins)
             for k in range(p.shape[1])]
    return tuple(np.stack([part[i] for part in parts]) for i in range(3))


def exact_binary(p, y, bins: int) -> tuple[float, float]:
    """ECE and MCE of a binary sample in exact rational arithmetic (the floats of
    ``p`` and of the breaks taken as the exact rationals they are), rounded once."""
    edges = [Fraction(float(e)) for e in breaks_oracle(bins)]
    groups: dict[int, list] = {}
    for pi, yi in zip(p, y, strict=True):
        v = Fraction(float(pi))
        b = next(j for j in range(bins) if v <= edges[j + 1] and (v > edges[j] or j == 0))
        groups.setdefault(b, []).append((v, Fraction(int(yi))))
    n = len(p)
    gaps = {b: abs(sum(t for _, t in m) / len(m) - sum(v for v, _ in m) / len(m))
            for b, m in groups.items()}
    ece = sum(Fraction(len(groups[b]), n) * g for b, g in gaps.items())
    return float(ece), float(max(gaps.values()))
