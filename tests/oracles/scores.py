"""Oracles of the scores (``docs/definitions.md``, "Scores and discrimination"):
each written from its formula, row by row or pair by pair, with no sort.

* :func:`brier_oracle` -- the mean over rows of the squared distance between
  the row's probabilities and the one-hot outcome;
* :func:`log_loss_oracle` -- the mean over rows of ``-log`` of the probability
  given to the outcome;
* :func:`auroc_oracle` -- the Mann-Whitney count over every (positive,
  negative) pair, ties one half, O(n^2); with weights each pair counts
  ``w_i w_j``;
* :func:`auroc_exact` -- the same in exact fractions, for hand-worked cases.

``p`` is a vector (binary, ``y`` 0/1) or an (n, K) matrix (``y`` 0-based
codes). Nothing here imports calibr.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["auroc_exact", "auroc_oracle", "brier_oracle", "log_loss_oracle"]


def _onehot(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P, Y)``: the (n, K) probabilities and one-hot outcomes (a vector as two
    columns ``(1 - p, p)``)."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=int)
    if p.ndim == 1:
        p = np.column_stack([1.0 - p, p])
    out = np.zeros_like(p)
    for i, k in enumerate(y):
        out[i, k] = 1.0
    return p, out


def _mean(values: list[float], w) -> float:
    w = np.ones(len(values)) if w is None else np.asarray(w, dtype=float)
    return sum(wi * v for wi, v in zip(w, values, strict=True) if wi != 0) / float(np.sum(w))


def brier_oracle(p, y, w=None) -> float:
    """Binary: mean of ``(p - y)^2``; a matrix: mean of ``sum_k (p_k - [y = k])^2``."""
    if np.ndim(p) == 1:
        values = [(float(pi) - float(yi)) ** 2 for pi, yi in zip(p, y, strict=True)]
    else:
        P, Y = _onehot(p, y)
        values = [sum((P[i, k] - Y[i, k]) ** 2 for k in range(P.shape[1]))
                  for i in range(P.shape[0])]
    return _mean(values, w)


def log_loss_oracle(p, y, w=None) -> float:
    """Mean of ``-log`` of the probability of the observed outcome."""
    P, Y = _onehot(p, y)
    values = []
    for i in range(P.shape[0]):
        q = P[i, int(np.argmax(Y[i]))]
        values.append(math.inf if q == 0 else -math.log(q))
    return _mean(values, w)


def auroc_oracle(x, c, w=None) -> float:
    """Sum over (positive i, negative j) of ``w_i w_j ([x_i > x_j] + [x_i = x_j] / 2)``
    over the product of the classes' total weights."""
    x = np.asarray(x, dtype=float)
    c = np.asarray(c) != 0
    w = np.ones(x.shape[0]) if w is None else np.asarray(w, dtype=float)
    num = 0.0
    for i in np.flatnonzero(c):
        for j in np.flatnonzero(~c):
            if x[i] > x[j]:
                num += w[i] * w[j]
            elif x[i] == x[j]:
                num += 0.5 * w[i] * w[j]
    return num / (float(np.sum(w[c])) * float(np.sum(w[~c])))


def auroc_exact(x, c) -> Fraction:
    """The AUROC of ``x`` against 0/1 ``c`` as an exact fraction."""
    pos = [xi for xi, ci in zip(x, c, strict=True) if ci]
    neg = [xi for xi, ci in zip(x, c, strict=True) if not ci]
    num = sum(Fraction(2 if a > b else 1 if a == b else 0) for a in pos for b in neg)
    return num / (2 * len(pos) * len(neg))
