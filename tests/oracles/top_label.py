"""Oracle of the top-label calibration error (``type="top-label"``;
``docs/definitions.md``, "Top-label calibration error"), written from Gupta &
Ramdas (2022) and not from calibr's code: each row's predicted class by
``numpy.argmax`` (the first maximum), the rows of each predicted class binned on
their own by one boolean mask per bin (:func:`oracles.binned.bin_among_oracle`),
and a plain loop over the (class, bin) cells.

Equal-mass breaks come from ``numpy.array_split`` of the sorted confidences of the
class and the midpoints between its groups (:func:`oracles.sweep.oracle_breaks`);
whole-number weights are read as counts, the rows repeated (equal-mass bins only:
the other binnings take the weights as they are).
"""

from __future__ import annotations

import math

import numpy as np

from .binned import bin_among_oracle
from .sweep import oracle_breaks

__all__ = ["cells_oracle", "predicted_oracle", "top_label_metric_oracle"]


def predicted_oracle(p, codes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(class, confidence, hit)`` of each row: a vector ``p`` is the two columns
    ``(1 - p, p)`` (``codes`` then 0/1)."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 1:
        p = np.column_stack((1.0 - p, p))
    codes = np.asarray(codes).astype(np.int64)
    cls = np.argmax(p, axis=1)
    h = p[np.arange(p.shape[0]), cls]
    return cls, h, (cls == codes).astype(np.float64)


def _class_breaks(h: np.ndarray, w: np.ndarray, bins, binning: str, right: bool) -> np.ndarray:
    if not isinstance(bins, int):
        return np.asarray(bins, dtype=np.float64)
    if binning == "equal-width":
        return np.linspace(0.0, 1.0, bins + 1)
    repeated = np.repeat(h, w.astype(np.int64))  # whole-number weights as counts
    return oracle_breaks(repeated, bins, "equal-mass", right)


def cells_oracle(p, codes, bins=10, *, binning: str = "equal-width", right: bool = True,
                 weights=None) -> list[tuple[int, int, float, float, float]]:
    """``[(class, bin, total weight, mean confidence, mean hit)]`` of the cells of
    positive weight, by class, then bin."""
    cls, h, hit = predicted_oracle(p, codes)
    w = np.ones(h.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    out = []
    for c in range(int(cls.max()) + 1 if cls.size else 0):
        mine = cls == c
        if not np.any(w[mine] > 0):
            continue
        edges = _class_breaks(h[mine], w[mine], bins, binning, right)
        b = bin_among_oracle(h[mine], edges, right)
        for j in range(edges.shape[0] - 1):
            inside = b == j
            total = float(np.sum(w[mine][inside]))
            if total > 0:
                conf = float(np.sum(w[mine][inside] * h[mine][inside])) / total
                acc = float(np.sum(w[mine][inside] * hit[mine][inside])) / total
                out.append((c, j, total, conf, acc))
    return out


def top_label_metric_oracle(metric: str, p, codes, bins=10, *, binning: str = "equal-width",
                            right: bool = True, weights=None, norm: str = "l1",
                            debias: bool = False) -> float:
    """TL-ECE (``metric="ece"``), TL-MCE (``"mce"``) or the Lp error over the cells
    (``"calibration_error"``, with ``norm`` and ``debias``)."""
    cells = cells_oracle(p, codes, bins, binning=binning, right=right, weights=weights)
    n = sum(t for _, _, t, _, _ in cells)
    gaps = [(t, abs(acc - conf), acc) for _, _, t, conf, acc in cells]
    if metric == "mce" or (metric == "calibration_error" and norm == "max"):
        return max(g for _, g, _ in gaps)
    if metric == "ece":
        return sum(t / n * g for t, g, _ in gaps)
    if debias:
        total = sum(t / n * (g * g - acc * (1.0 - acc) / (t - 1.0))
                    for t, g, acc in gaps if t >= 2)
        return math.sqrt(max(total, 0.0))
    q = {"l1": 1.0, "l2": 2.0}[norm]
    return sum(t / n * g**q for t, g, _ in gaps) ** (1.0 / q)
