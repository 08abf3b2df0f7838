"""Oracle of ``bins="sweep"`` (``docs/definitions.md``, "Binning options"), written
from Roelofs, Cain, Shlens & Mozer (2022): for b = 1, 2, ..., bin the rows from
scratch (equal-width breaks ``numpy.linspace``, or equal-mass breaks from
``numpy.array_split`` of the sorted values and the midpoints between groups),
take the mean outcome of each non-empty bin by boolean masks, and stop at the
first b whose means are not nondecreasing: the sweep's number of bins is the
b before it. O(n) per b, as the paper's own loop. Weights are whole numbers,
read as counts: the rows are repeated.
"""

from __future__ import annotations

import numpy as np

__all__ = ["oracle_breaks", "sweep_oracle"]


def oracle_breaks(x: np.ndarray, b: int, binning: str, right: bool) -> np.ndarray:
    if binning == "equal-width":
        return np.linspace(0.0, 1.0, b + 1)
    groups = [g for g in np.array_split(np.sort(x), min(b, x.shape[0]))]
    cuts = [(a[-1] + c[0]) / 2.0 for a, c in zip(groups[:-1], groups[1:], strict=True)]
    if right:
        return np.concatenate(([0.0], np.unique(np.append(cuts, 1.0))))
    return np.append(np.unique(np.append(0.0, cuts)), 1.0)


def _means(x: np.ndarray, c: np.ndarray, edges: np.ndarray, right: bool) -> list[float]:
    out = []
    last = edges.shape[0] - 2
    for k in range(last + 1):
        lo, hi = edges[k], edges[k + 1]
        if right:
            inside = ((x > lo) | (k == 0)) & (x <= hi)
            if k > 0 and lo == hi:  # a zero-width bin holds its value
                inside = x == lo
        else:
            inside = (x >= lo) & ((x < hi) | (k == last))
            if k < last and lo == hi:
                inside = x == lo
        if k == 0 and right and edges[1] == 0.0:
            inside = x == 0.0
        if inside.any():
            out.append(float(np.mean(c[inside])))
    return out


def sweep_oracle(x, c, binning: str, right: bool = True, weights=None) -> int:
    x = np.asarray(x, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    if weights is not None:
        w = np.asarray(weights).astype(np.int64)
        x, c = np.repeat(x, w), np.repeat(c, w)
    best = 1
    for b in range(2, x.shape[0] + 1):
        means = _means(x, c, oracle_breaks(x, b, binning, right), right)
        if any(m2 < m1 for m1, m2 in zip(means[:-1], means[1:], strict=True)):
            break
        best = b
    return best
