"""The arithmetic of rms's Fortran ``lrm.fit`` for ``val_prob(method="rms")``
(``docs/val_prob.md``, "method="rms"").

rms 5.1-2 to 6.8-2 fit ``val.prob``'s two logistic models with the Fortran
routine ``LRMFIT`` of ``src/lrmfit.f``. These kernels repeat its routine
``LLOGIT`` for one predictor, without weights, offset or penalty, operation by
operation: the linear predictor ``b0 + b1 x`` clamped to [-30, 30], the
logistic function ``1 / (1 + exp(-lp))``, ``log(1 - p)`` for a non-event, and
every sum accumulated in row order in double precision. ``math.exp`` and
``math.log`` compile to the C library's ``exp`` and ``log``, the functions that
R and its Fortran call (numpy's own vectorised ``exp``/``log`` differ from them
in the last bit for some arguments), so that the sums, and the bins of
``rank_bins``, fall as rms's do.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = ["llogit", "qlogis", "rank_bins", "val_prob_l01_terms"]


@jit(nogil=True, inline="always")
def _lprob(bb):  # pragma: no cover - compiled
    """lrmfit.f's ``lprob``: the logistic function of ``bb`` clamped to [-30, 30]."""
    return 1.0 / (1.0 + math.exp(-min(max(bb, -30.0), 30.0)))


@jit(nogil=True)
def qlogis(p):  # pragma: no cover - compiled
    """R's ``qlogis(p)``: ``log(p / (1 - p))`` with the C library's ``log``."""
    out = np.empty(p.shape[0])
    for i in range(p.shape[0]):
        out[i] = math.log(p[i] / (1.0 - p[i]))
    return out


@jit(nogil=True)
def llogit(b0, b1, x, y):  # pragma: no cover - compiled
    """``LLOGIT`` at the intercept ``b0`` and slope ``b1`` of the predictor ``x``
    (float64) for 0/1 outcomes ``y`` (float64): ``(-2 log-likelihood, u0, u1,
    v00, v10, v11)``, the score and the lower triangle of the information.

    The same expressions in the same order as the Fortran: ``bx = 0 + b0 * 1 +
    b1 * x``, ``u(i) += (dy - p) * c(i) * w`` and ``v(k) += p (1 - p) * c(i) *
    c(j) * w`` with ``c = (1, x)`` and ``w = 1`` (multiplications by 1 are
    exact and left out).
    """
    loglik = 0.0
    u0 = 0.0
    u1 = 0.0
    v00 = 0.0
    v10 = 0.0
    v11 = 0.0
    for i in range(x.shape[0]):
        xi = x[i]
        bx = 0.0 + b0
        bx = bx + b1 * xi
        cpiy = _lprob(bx)
        viy = cpiy * (1.0 - cpiy)
        if y[i] == 0.0:
            loglik = loglik + math.log(1.0 - cpiy)
            dy = 0.0
        else:
            loglik = loglik + math.log(cpiy)
            dy = 1.0
        u0 = u0 + (dy - cpiy)
        v00 = v00 + viy
        u1 = u1 + (dy - cpiy) * xi
        v10 = v10 + viy * xi
        v11 = v11 + viy * xi * xi
    return -2.0 * loglik, u0, u1, v00, v10, v11


@jit(nogil=True)
def rank_bins(x):  # pragma: no cover - compiled
    """The bin of each observation in ``LLOGIT``'s table of the rank statistics,
    for ``val.prob``'s fixed model (intercept 0, slope 1): ``INT(5000 *
    lprob(x) + 1)``, 1 to 5001 (bins of width 0.0002 of the predicted
    probability recomputed from ``x = qlogis(p)``)."""
    out = np.empty(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = int(5000.0 * _lprob(0.0 + x[i]) + 1.0)
    return out


@jit(nogil=True)
def val_prob_l01_terms(x, y):  # pragma: no cover - compiled
    """The terms ``y * logit - log(1 + exp(logit))`` of ``val.prob``'s ``L01``
    (R code, summed there by ``sum()``)."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = y[i] * x[i] - math.log(1.0 + math.exp(x[i]))
    return out
