"""Oracle of the calibration gain (``docs/definitions.md``, "The calibration gain"),
written from the definitions and not from calibr's code: the fold rule by a plain
loop over the classes and their shuffled rows, the temperature by scipy's root
finder on the derivative of the mean log loss, and the two scores row by row.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import softmax

__all__ = ["folds_oracle", "loss_oracle", "temperature_oracle"]


def folds_oracle(codes, cv: int, seed) -> np.ndarray:
    """Each class in increasing code order: its rows shuffled by the generator's
    ``permutation``, then dealt to folds 0, 1, ..., cv - 1, the deal continuing
    from one class to the next."""
    gen = np.random.default_rng(seed)
    codes = np.asarray(codes)
    out = np.full(codes.shape[0], -1)
    turn = 0
    for k in sorted(set(codes.tolist())):
        rows = [i for i in range(codes.shape[0]) if codes[i] == k]
        for j in gen.permutation(len(rows)):
            out[rows[j]] = turn % cv
            turn += 1
    return out


def temperature_oracle(logp: np.ndarray, codes: np.ndarray) -> float:
    """The inverse temperature minimising the mean log loss of softmax(beta log p):
    the root of its derivative, the mean of E_beta[log p] - log p_y (increasing)."""
    own = logp[np.arange(len(codes)), codes]

    def derivative(beta):
        return float(np.mean((softmax(beta * logp, axis=1) * logp).sum(axis=1) - own))
    return float(brentq(derivative, -20.0, 20.0, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def loss_oracle(p: np.ndarray, codes: np.ndarray, score: str) -> float:
    """The mean log loss or Brier score (binary: ``(p - y)^2``; a matrix: the sum
    over the classes), row by row."""
    total = 0.0
    for i in range(len(codes)):
        if p.ndim == 1:
            own = p[i] if codes[i] == 1 else 1 - p[i]
            total += -np.log(own) if score == "log_loss" else (p[i] - codes[i]) ** 2
        elif score == "log_loss":
            total += -np.log(p[i, codes[i]])
        else:
            total += sum((p[i, k] - (k == codes[i])) ** 2 for k in range(p.shape[1]))
    return total / len(codes)
