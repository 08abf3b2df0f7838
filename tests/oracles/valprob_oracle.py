"""Oracles of ``val_prob()`` (``docs/val_prob.md``), independent of ``calibr._metrics.valprob``.

* :func:`concordance_pairs` -- C and Dxy by looping over every (event,
  non-event) pair, in exact fractions;
* :func:`brier_exact`, :func:`spiegelhalter_exact` -- the Brier score and the
  numerator and variance of Spiegelhalter's z, in exact fractions;
* :func:`logistic_mle_decimal` -- the maximum-likelihood recalibration
  (Intercept, Slope) by Newton's method in 40-digit decimal arithmetic;
* :func:`rms65_concordance`, :func:`rms65_fixed_deviance`, :func:`rms65_lrm_fit`
  -- what the Fortran routine ``lrmfit.f`` of rms up to 6.8 computes for
  ``val.prob`` (transcribed from rms 6.5-0's ``src/lrmfit.f``, ``LRMFIT``,
  ``LLOGIT`` and ``gcorr``, for one predictor): C and Dxy from predicted
  probabilities rounded into bins of width 0.0002, the -2 log-likelihood with
  the linear predictor clamped to [-30, 30], and the Newton-Raphson fit with
  rms's stopping rule (-2LL changes by at most ``eps = 0.025``; at most 11
  iterations, ``maxit = 12``). They explain, to rounding, where rms 6.5's numbers differ from
  the exact definitions that calibr computes.

Scalar loops with the ``math`` module throughout: the same C library functions
(``exp``, ``log``) that R's Fortran calls, so that bin boundaries fall the same way.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

__all__ = [
    "brier_exact",
    "concordance_pairs",
    "logistic_mle_decimal",
    "rms65_concordance",
    "rms65_fixed_deviance",
    "rms65_lrm_fit",
    "spiegelhalter_exact",
]


def concordance_pairs(p, y) -> tuple[Fraction, Fraction]:
    """(C, Dxy): every pair of an event i and a non-event j; concordant if
    p_i > p_j, tied if equal (counted 1/2), discordant otherwise."""
    events = [float(v) for v, o in zip(p, y, strict=True) if o == 1]
    nonevents = [float(v) for v, o in zip(p, y, strict=True) if o == 0]
    con = tie = dis = 0
    for a in events:
        for b in nonevents:
            if a > b:
                con += 1
            elif a == b:
                tie += 1
            else:
                dis += 1
    pairs = con + tie + dis
    return Fraction(2 * con + tie, 2 * pairs), Fraction(con - dis, pairs)


def brier_exact(p, y) -> Fraction:
    """mean((p - y)^2) of exactly representable ``p`` (floats become Fractions exactly)."""
    terms = [(Fraction(float(v)) - int(o)) ** 2 for v, o in zip(p, y, strict=True)]
    return sum(terms, Fraction(0)) / len(terms)


def spiegelhalter_exact(p, y) -> tuple[Fraction, Fraction]:
    """(numerator, variance) of Spiegelhalter's z, exactly: z = num / sqrt(var)."""
    num = Fraction(0)
    var = Fraction(0)
    for v, o in zip(p, y, strict=True):
        q = Fraction(float(v))
        num += (int(o) - q) * (1 - 2 * q)
        var += (1 - 2 * q) ** 2 * q * (1 - q)
    return num, var


def logistic_mle_decimal(p, y, start: tuple[float, float], digits: int = 40,
                         iterations: int = 8) -> tuple[float, float]:
    """(a, b) maximising the likelihood of logit P(y = 1) = a + b x, x = R's
    ``qlogis(p)`` (the double), by Newton's method in ``digits``-digit decimals
    from ``start`` (which must be close: no step halving)."""
    with decimal.localcontext() as ctx:
        ctx.prec = digits
        x = [decimal.Decimal(_qlogis(float(v))) for v in p]
        y = [int(o) for o in y]
        a, b = decimal.Decimal(start[0]), decimal.Decimal(start[1])
        one = decimal.Decimal(1)
        for _ in range(iterations):
            ga = gb = haa = hab = hbb = decimal.Decimal(0)
            for xi, yi in zip(x, y, strict=True):
                mu = one / (one + (-(a + b * xi)).exp())
                w = mu * (one - mu)
                ga += yi - mu
                gb += (yi - mu) * xi
                haa += w
                hab += w * xi
                hbb += w * xi * xi
            det = haa * hbb - hab * hab
            a += (hbb * ga - hab * gb) / det
            b += (haa * gb - hab * ga) / det
        return float(a), float(b)


def _lprob(bb: float) -> float:
    """lrmfit.f's ``lprob``: the logistic function of bb clamped to [-30, 30]."""
    return 1.0 / (1.0 + math.exp(-min(max(bb, -30.0), 30.0)))


def _qlogis(p: float) -> float:
    """R's ``qlogis(p)``: log(p / (1 - p))."""
    return math.log(p / (1.0 - p))


def rms65_concordance(p, y) -> tuple[float, float]:
    """(C, Dxy) as rms <= 6.8's ``lrm.fit`` reports them for ``val.prob``.

    ``LLOGIT`` puts each observation in bin ``INT(5000 * lprob(lp) + 1)`` (1..5001)
    of its outcome, with ``lp = 0 + 1 * qlogis(p)``; ``gcorr`` counts pairs of
    bins: an event in a higher bin than a non-event is concordant, the same bin
    a tie.
    """
    table = np.zeros((5001, 2), dtype=np.int64)
    for v, o in zip(p, y, strict=True):
        ipp = int(5000.0 * _lprob(0.0 + 1.0 * _qlogis(float(v))) + 1.0)
        table[ipp - 1, int(o)] += 1
    numy = table.sum(axis=0)
    con = dis = tie = 0.0
    for j1 in range(5001):
        k = float(table[j1, 0])
        if k > 0:
            ic = float(table[j1 + 1:, 1].sum())
            con += k * ic
            dis += k * (numy[1] - ic - table[j1, 1])
            tie += k * table[j1, 1]
    fn = con + dis + tie
    return (con + tie * 0.5) / fn, (con - dis) / fn


def _llogit(beta: tuple[float, float], x, y) -> tuple[float, np.ndarray, np.ndarray]:
    """``LLOGIT`` for one predictor: (-2 log-likelihood, score, information)."""
    loglik = 0.0
    u = np.zeros(2)
    v = np.zeros((2, 2))
    for xi, yi in zip(x, y, strict=True):
        c = (1.0, float(xi))
        bx = 0.0
        for i in range(2):
            bx = bx + beta[i] * c[i]
        cpiy = _lprob(bx)
        viy = cpiy * (1.0 - cpiy)
        if yi == 0:
            loglik = loglik + math.log(1.0 - cpiy)
            dy = 0.0
        else:
            loglik = loglik + math.log(cpiy)
            dy = 1.0
        for i in range(2):
            u[i] = u[i] + (dy - cpiy) * c[i]
            for j in range(2):
                v[i, j] = v[i, j] + viy * c[i] * c[j]
    return -2.0 * loglik, u, v


def rms65_fixed_deviance(p, y) -> float:
    """-2 log-likelihood that rms <= 6.8 computes for ``val.prob``'s fixed model
    ``lrm.fit(qlogis(p), y, initial = c(0, 1), maxit = 1)`` (clamped at |lp| = 30)."""
    x = [_qlogis(float(v)) for v in p]
    return _llogit((0.0, 1.0), x, y)[0]


def rms65_lrm_fit(p, y, maxit: int = 12, eps: float = 0.025) -> tuple[float, float, float]:
    """(Intercept, Slope, -2LL) of rms <= 6.8's ``lrm.fit(qlogis(p), y)``.

    ``LRMFIT``'s Newton-Raphson: start at (logit of the event rate, 0); at most
    ``maxit - 1`` iterations; step halving when -2LL rises; stop once the -2LL
    of the current estimate differs from the previous one by at most ``eps``,
    *after* taking that iteration's Newton step. Out of iterations, rms returns
    the last estimate and (as ``deviance[2]``) the -2LL before the last step.
    """
    x = [_qlogis(float(v)) for v in p]
    y = [int(o) for o in y]
    rate = sum(y) / len(y)
    beta = np.array([math.log(rate / (1.0 - rate)), 0.0])
    oldl = 1e30
    deltab = np.zeros(2)
    curstp = 1.0
    for it in range(1, maxit):
        loglik, u, v = _llogit(tuple(beta), x, y)
        if np.max(np.abs(u)) < 1e-9 and abs(loglik - oldl) < 0.1 * eps:
            break
        if loglik > oldl:
            if it == 1:  # pragma: no cover - -2LL cannot rise at the first step
                raise RuntimeError("lrm.fit failed at the first iteration")
            curstp = curstp / 2.0
            beta = beta - curstp * deltab
            continue
        curstp = 1.0
        deltab = np.linalg.solve(v, u)
        beta = beta + deltab
        if abs(oldl - loglik) <= eps:
            break
        oldl = loglik
    else:
        # out of iterations: LRMFIT returns (fail = TRUE) without recomputing
        # -2LL, so R reports the -2LL of the estimate before the last step
        return float(beta[0]), float(beta[1]), loglik
    loglik, _, _ = _llogit(tuple(beta), x, y)
    return float(beta[0]), float(beta[1]), loglik
