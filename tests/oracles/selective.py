"""Oracle of selective prediction (``docs/definitions.md``, "Selective prediction"),
written from the definitions and not from calibr's code: each row's top label by
``numpy.argmax`` (a vector ``p`` is the columns ``(1 - p, p)``), one boolean mask
per distinct confidence, and plain loops over the points of the curve.
"""

from __future__ import annotations

import numpy as np

__all__ = ["accuracy_oracle", "area_oracle", "curve_oracle", "hits_oracle"]


def hits_oracle(p, y) -> tuple[np.ndarray, np.ndarray]:
    """``(confidence, correct)`` of each row (``y`` 0/1 or 0-based codes)."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 1:
        p = np.column_stack((1.0 - p, p))
    top = np.argmax(p, axis=1)
    return p[np.arange(p.shape[0]), top], top == np.asarray(y).astype(np.int64)


def curve_oracle(conf, correct, w=None) -> list[tuple[float, float, float, float]]:
    """``(threshold, n, coverage, risk)`` per distinct confidence, the highest first
    (rows of weight 0 add no point)."""
    conf = np.asarray(conf, dtype=np.float64)
    w = np.ones(conf.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    total = w.sum()
    out = []
    for t in sorted(set(conf[w > 0].tolist()), reverse=True):
        accepted = conf >= t
        n = w[accepted].sum()
        errors = w[accepted & ~correct].sum()
        out.append((t, n, n / total, errors / n))
    return out


def area_oracle(conf, correct, w=None, *, generalized=False, rule="trapezoid") -> float:
    """The AURC (AUGRC with ``generalized``) by a loop over the points."""
    area, k0 = 0.0, 0.0
    points = curve_oracle(conf, correct, w)
    v0 = 0.0 if generalized else points[0][3]
    for _, _, k, r in points:
        v = k * r if generalized else r
        area += (k - k0) * (v if rule == "step" else (v + v0) / 2)
        k0, v0 = k, v
    return area


def accuracy_oracle(conf, correct, coverage: float) -> float:
    """Unweighted: the mean over random orders of tied rows of the accuracy of the
    ``coverage * n`` most confident rows (``coverage * n`` whole), by averaging
    over many shuffles exactly: the straddling block's rows enter in proportion."""
    conf = np.asarray(conf, dtype=np.float64)
    k = round(coverage * conf.shape[0])
    order = np.argsort(-conf, kind="stable")
    t = conf[order[k - 1]]
    above = conf > t
    block = conf == t
    take = k - above.sum()
    errors = (~correct[above]).sum() + take * (~correct[block]).mean()
    return 1.0 - errors / k
