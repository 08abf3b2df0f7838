"""Oracles of the score decompositions and the isotonic fit (``docs/definitions.md``,
"Score decompositions: `decompose()`" and "Binning options").

* :func:`pav_oracle` -- the isotonic regression written plainly: the distinct
  values (ties pooled), then "merge the first adjacent pair of groups whose
  means are out of order" until none is, in exact rational arithmetic (weights
  and outcomes as :class:`fractions.Fraction`), O(m^2);
* :func:`corp_oracle` -- MCB, DSC, UNC as differences of mean scores of the
  forecasts, the recalibrated forecasts and the mean outcome, each scored row
  by row;
* :func:`murphy_oracle` -- the textbook reliability, resolution and
  uncertainty over bins given by their breaks, one mask per bin;
* :func:`exact_brier_corp` -- the CORP decomposition of the Brier score in
  exact fractions, for the hand-worked cases.

Nothing here imports calibr.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["corp_oracle", "exact_brier_corp", "murphy_oracle", "pav_oracle", "score_oracle"]


def pav_oracle(x, y, w=None) -> tuple[list[list[float]], list[Fraction]]:
    """The isotonic regression of ``y`` on ``x`` (ties pooled), exactly.

    Returns the blocks, each the list of distinct values of ``x`` it holds (in
    increasing order), and each block's fitted value (a Fraction). Rows of
    weight 0 are left out. Adjacent groups with equal means are merged too, so
    that the blocks are the maximal runs of one fitted value.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=float)
    keep = w > 0
    x, y, w = x[keep], y[keep], w[keep]
    groups = []  # [values, total weight, weighted sum of y]
    for v in sorted(set(x.tolist())):
        at = x == v
        groups.append([[v], sum(Fraction(t) for t in w[at]),
                       sum(Fraction(a) * Fraction(b) for a, b in zip(w[at], y[at], strict=True))])
    merged = True
    while merged:
        merged = False
        for j in range(len(groups) - 1):
            a, b = groups[j], groups[j + 1]
            if a[2] / a[1] >= b[2] / b[1]:
                groups[j] = [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
                del groups[j + 1]
                merged = True
                break
    return [g[0] for g in groups], [g[2] / g[1] for g in groups]


def fitted_oracle(x, y, w=None) -> np.ndarray:
    """The isotonic fit at each row (NaN for rows of weight 0)."""
    blocks, values = pav_oracle(x, y, w)
    of = {v: float(f) for vals, f in zip(blocks, values, strict=True) for v in vals}
    x = np.asarray(x, dtype=float)
    return np.array([of.get(v, math.nan) for v in x.tolist()])


def score_oracle(f, y, score: str) -> np.ndarray:
    """The score of forecasts ``f`` for 0/1 outcomes ``y``, row by row."""
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    if score == "brier":
        return (f - y) ** 2
    out = np.empty_like(f)
    for i, (fi, yi) in enumerate(zip(f.tolist(), y.tolist(), strict=True)):
        prob = fi if yi == 1 else 1.0 - fi
        out[i] = math.inf if prob == 0 else -math.log(prob)
    return out


def _mean(values, w) -> float:
    values = np.asarray(values, dtype=float)
    if w is None:
        return float(np.mean(values))
    w = np.asarray(w, dtype=float)
    keep = w > 0
    return float(np.sum(w[keep] * values[keep]) / np.sum(w[keep]))


def corp_oracle(p, y, score: str = "brier", w=None) -> tuple[float, float, float, float]:
    """``(score, mcb, dsc, unc)`` of the CORP decomposition: the mean scores of
    ``p``, of its isotonic recalibration and of the mean outcome, row by row."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    fitted = fitted_oracle(p, y, w)
    ybar = _mean(y, w)
    s_p = _mean(score_oracle(p, y, score), w)
    s_c = _mean(score_oracle(np.where(np.isnan(fitted), 0.5, fitted), y, score), w)
    s_r = _mean(score_oracle(np.full_like(p, ybar), y, score), w)
    return s_p, s_p - s_c, s_r - s_c, s_r


def _bin_of(v: float, breaks: np.ndarray, right: bool) -> int:
    """The bin of v among the breaks by the definition (one comparison per bin)."""
    nb = breaks.shape[0] - 1
    for b in range(nb):
        lo, hi = breaks[b], breaks[b + 1]
        if right and (lo < v <= hi or (b == 0 and v == lo)):
            return b
        if not right and (lo <= v < hi or (b == nb - 1 and v == hi)):
            return b
    raise AssertionError(f"{v} in no bin of {breaks}")


def _entropy(q: float, score: str) -> float:
    if score == "brier":
        return q * (1 - q)
    return -sum(t * math.log(t) for t in (q, 1 - q) if t > 0)


def _divergence(f: float, q: float, score: str) -> float:
    """d(f, q): the expected score of forecast f minus H(q), outcome probability q."""
    if score == "brier":
        return (f - q) ** 2
    out = 0.0
    for a, b in ((q, f), (1 - q, 1 - f)):
        if a > 0:
            out += math.inf if b == 0 else a * math.log(a / b)
    return out


def murphy_oracle(p, y, breaks, right: bool = True, score: str = "brier",
                  w=None) -> tuple[float, float, float, float]:
    """``(score, rel, res, unc)`` of Murphy's decomposition over the bins of
    ``breaks``: ``rel = sum n_b/n d(pbar_b, ybar_b)``, ``res = sum n_b/n
    d(ybar, ybar_b)``, ``unc = H(ybar)``; ``score`` the mean score of ``p``."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones_like(p) if w is None else np.asarray(w, dtype=float)
    breaks = np.asarray(breaks, dtype=float)
    j = np.array([_bin_of(v, breaks, right) for v in p.tolist()])
    n = w.sum()
    ybar = float(np.sum(w * y) / n)
    rel = res = 0.0
    for b in range(breaks.shape[0] - 1):
        m = j == b
        nb = w[m].sum()
        if nb == 0:
            continue
        pbar = float(np.sum(w[m] * p[m]) / nb)
        yb = float(np.sum(w[m] * y[m]) / nb)
        rel += nb / n * _divergence(pbar, yb, score)
        res += nb / n * _divergence(ybar, yb, score)  # the mean outcome as the forecast
    return _mean(score_oracle(p, y, score), w), rel, res, _entropy(ybar, score)


def exact_brier_corp(p, y) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """The CORP decomposition of the Brier score in exact fractions (unit weights;
    ``p`` given as Fractions or exact decimals as strings)."""
    ps = [Fraction(v) for v in p]
    ys = [Fraction(v) for v in y]
    n = len(ps)
    blocks, values = pav_oracle([float(v) for v in ps], [float(v) for v in ys])
    of = {v: f for vals, f in zip(blocks, values, strict=True) for v in vals}
    fitted = [of[float(v)] for v in ps]
    ybar = sum(ys) / n
    s_p = sum((a - b) ** 2 for a, b in zip(ps, ys, strict=True)) / n
    s_c = sum((a - b) ** 2 for a, b in zip(fitted, ys, strict=True)) / n
    s_r = sum((ybar - b) ** 2 for b in ys) / n
    return s_p, s_p - s_c, s_r - s_c, s_r
