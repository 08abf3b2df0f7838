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
    "bin_among_oracle",
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
    return bin_among_oracle(v, breaks_oracle(bins), right=True)


def _member(v, edges, b, right):
    """Whether v lies in bin b of the breaks ``edges`` (either closure)."""
    last = edges.shape[0] - 2
    if right:  # (a, b], and 0 in the first bin
        return ((v > edges[b]) | ((b == 0) & (v == edges[0]))) & (v <= edges[b + 1])
    # [a, b), and 1 in the last bin
    return (v >= edges[b]) & ((v < edges[b + 1]) | ((b == last) & (v == edges[-1])))


def bin_among_oracle(v: np.ndarray, edges: np.ndarray, right: bool = True,
                     window: bool = False) -> np.ndarray:
    """0-based bin of each value among the breaks ``edges`` (nondecreasing, 0 to 1), by
    the definition: ``right=True``, ``edges[b] < v <= edges[b+1]`` with 0 in bin 0
    (R's ``cut(right = TRUE, include.lowest = TRUE)``); ``right=False``,
    ``edges[b] <= v < edges[b+1]`` with 1 in the last bin (``numpy.histogram``).

    One mask per bin; with ``window`` (R's equal-width breaks of many bins), only
    the bins ``floor(v B) - 2 .. floor(v B) + 2`` of each value are tried (its bin
    is among them: a break is within a few ulps of ``m / B``). Either way each value
    must fall in exactly one of the bins tried.
    """
    nb = edges.shape[0] - 1
    out = np.full(v.shape, -1, dtype=np.int64)
    hits = np.zeros(v.shape, dtype=np.int64)
    if window:
        centre = np.floor(v * nb).astype(np.int64)
        for d in range(-2, 3):
            b = np.clip(centre + d, 0, nb - 1)
            fresh = (b != np.clip(centre + d - 1, 0, nb - 1)) | (d == -2)  # each bin once
            inside = fresh & _member(v, edges, b, right)
            out[inside] = b[inside]
            hits += inside
    else:
        for b in range(nb):
            inside = _member(v, edges, b, right)
            out[inside] = b
            hits += inside
    assert (hits == 1).all(), "a value in no bin, or in two"
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
