"""``val_prob()``: the statistics of R's ``rms::val.prob`` for binary predictions.

Every statistic, its formula and how it relates to R's code are in
``docs/val_prob.md``. Two methods, dispatched by ``_GENERAL``: ``"rms"`` (the
default) repeats the arithmetic of rms's Fortran ``lrm.fit`` (its binned rank
statistics and its stopping rule, ``calibr/_kernels/rms.py``) and prints
rms's numbers; ``"exact"`` computes the definitions. The tests
``tests/test_val_prob.py`` call the real R package through rpy2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._docs import shared_docs
from .._input import InputError, Options, prepare, validate_params, warn
from .._kernels import rms as rms_kernels
from .lowess import lowess

__all__ = ["VAL_PROB_NAMES", "val_prob"]

#: The names of ``rms::val.prob``'s result, in R's order: the index of the
#: Series that :func:`val_prob` returns.
VAL_PROB_NAMES: tuple[str, ...] = (
    "Dxy", "C (ROC)", "R2", "D", "D:Chi-sq", "D:p", "U", "U:Chi-sq", "U:p", "Q",
    "Brier", "Intercept", "Slope", "Emax", "E90", "Eavg", "S:z", "S:p",
)

#: The statistics that need the logistic recalibration fit: NaN when its
#: maximum-likelihood estimate does not exist (separated outcomes).
_FIT_NAMES = ("U", "U:Chi-sq", "U:p", "Q", "Intercept", "Slope")

#: Newton-Raphson for the recalibration fit: stop once a step moves no
#: coefficient by more than this, relative to max(1, |coefficient|). Newton
#: converges quadratically, so the estimate is then exact to rounding.
_FIT_STEP_TOL = 1e-12
#: ... or once a step this small no longer shrinks (Newton's steps shrink
#: quadratically until rounding noise, amplified by an ill-conditioned fit,
#: is all that moves).
_FIT_NOISE = 1e-8
#: A step is accepted if it raises the deviance by at most this, relative to
#: 1 + deviance: near the maximum the deviance is flat to rounding.
_DEV_SLACK = 1e-12
#: Newton iterations allowed (the hardest fits tried, one overlapping pair
#: among 20,000 observations, take about 30).
_FIT_MAXIT = 100

#: ``method=``: the first is the default. "rms" repeats rms's Fortran
#: ``lrm.fit`` (binned C and Dxy, its stopping rule); "exact" computes the
#: definitions (``docs/val_prob.md``).
_METHODS = ("rms", "exact")

#: rms's ``lrm.fit`` defaults (``maxit = 12``, ``eps = 0.025``, ``tol = 1e-7``):
#: LRMFIT runs at most ``maxit - 1`` Newton-Raphson iterations, stops once -2LL
#: changes by at most ``eps``, and calls the information matrix singular when
#: its QR decomposition (R's ``dqrdc2``) finds a column below ``tol`` times its
#: norm.
_RMS_MAXIT = 12
_RMS_EPS = 0.025
_RMS_TOL = 1e-7


@validate_params(method=Options(*_METHODS))
@shared_docs
def val_prob(
    p: Any, y: Any, *, method: str = "rms", classes: Sequence | None = None,
    na_rm: bool = False,
) -> pd.Series:
    r"""Validation statistics of predicted probabilities, as R's ``rms::val.prob``.

    Discrimination (Dxy, C), likelihood-based measures (R2, D, U, Q), the Brier
    score, the logistic recalibration (Intercept, Slope), the errors of a
    lowess calibration curve (Emax, E90, Eavg) and Spiegelhalter's z test, with
    R's names, order and definitions. Binary outcomes only; no plot (see
    ``calibr.plot.reliability_diagram``).

    Parameters
    ----------
    p : array-like or pandas Series
        Predicted probabilities P(y = 1), a vector; each strictly between 0
        and 1.
    y : array-like or pandas Series
        Outcomes, 0/1 or booleans (or the two labels of ``classes``), with both
        outcomes present.
    method : {"rms", "exact"}, default "rms", keyword-only
        ``"rms"``: the numbers ``rms::val.prob`` prints, to 1e-9 relative
        (measured: 1e-11), with the Fortran ``lrm.fit`` of rms 5.1-2 to
        6.8-2 (Debian 12's rms 6.5): C and Dxy from predicted probabilities
        rounded into bins of width 0.0002, and the Intercept and Slope (and
        U, U:Chi-sq, U:p, Q) where its Newton-Raphson stops, once -2LL
        changes by at most 0.025. ``"exact"``: the definitions below, C and
        Dxy over the exact ``p``, the recalibration at the maximum likelihood
        (rms >= 6.9 also computes C and Dxy exactly; see
        ``docs/val_prob.md``).
    classes : sequence of two labels, optional, keyword-only
        ``(negative, positive)``: the labels of ``y`` for 0 and 1.
    <calibr:na_rm>

    Returns
    -------
    pandas.Series
        18 float64 values indexed by R's names, in R's order: ``"Dxy"``,
        ``"C (ROC)"``, ``"R2"``, ``"D"``, ``"D:Chi-sq"``, ``"D:p"``, ``"U"``,
        ``"U:Chi-sq"``, ``"U:p"``, ``"Q"``, ``"Brier"``, ``"Intercept"``,
        ``"Slope"``, ``"Emax"``, ``"E90"``, ``"Eavg"``, ``"S:z"``, ``"S:p"``
        (``VAL_PROB_NAMES``). ``stats["C (ROC)"]`` reads one.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a matrix ``p``, values of ``p`` outside
        (0, 1) (0 and 1 included), ``y`` other than 0/1 or with one outcome
        only, different lengths, missing values without ``na_rm=True``, or a
        ``method`` other than ``"rms"`` and ``"exact"``.
    TypeError
        (``calibr.InputTypeError``) for inputs that are not numeric vectors.

    Warns
    -----
    RuntimeWarning
        When ``p`` separates the outcomes (every ``y = 1`` has ``p`` at least
        as large as every ``y = 0``, or the reverse): the logistic
        recalibration has no maximum-likelihood estimate, so with
        ``method="exact"`` Intercept, Slope, U, U:Chi-sq, U:p and Q are NaN;
        with ``method="rms"`` they are rms's, where its iterations stopped.
        With ``method="rms"``, also when rms's ``lrm.fit`` runs out of its 11
        iterations (rms's unconverged numbers, which ``val.prob`` reports
        without a word), and when it finds an information matrix singular,
        where rms's ``val.prob`` stops with an error (``p`` within a range so
        narrow that its logits are nearly constant). When every ``p`` is 0.5:
        S:z and S:p are NaN (the variance of Spiegelhalter's statistic is 0).

    Notes
    -----
    Mirrors ``rms::val.prob(p, y, pl = FALSE)`` with its defaults. The
    definitions, which ``method="exact"`` computes, with :math:`n`
    observations, :math:`n_1` of them with :math:`y = 1`, :math:`n_0 = n -
    n_1` and :math:`x_i = \operatorname{logit} p_i`:

    - **C (ROC)**: the share of (:math:`y = 1`, :math:`y = 0`) pairs whose
      ``p`` are in the same order, ties counted 1/2;
      **Dxy** :math:`= 2C - 1` (Somers' rank correlation). ``method="rms"``
      counts the pairs of bins ``floor(5000 p) + 1`` instead, so that ``p``
      closer than 0.0002 may count as tied (by up to 1e-4 relative on
      continuous data, more where many ``p`` are below 0.0002 or above
      0.9998).
    - :math:`L_{01} = -2 \sum_i [y_i \log p_i + (1 - y_i) \log(1 - p_i)]`, the
      deviance of the predictions; :math:`L_0 = -2 [n_1 \log(n_1/n) + n_0
      \log(n_0/n)]`, that of the overall rate.
    - **D:Chi-sq** :math:`= L_0 - L_{01}`; **D** :math:`= (\text{D:Chi-sq} -
      1)/n`, the discrimination index; **D:p**, the upper tail of
      :math:`\chi^2_1` at D:Chi-sq (NA in rms up to 6.8).
    - **R2** :math:`= (1 - e^{-\text{D:Chi-sq}/n}) / (1 - e^{-L_0/n})`,
      Nagelkerke's :math:`R^2` of the predictions.
    - **Intercept**, **Slope**: the maximum-likelihood fit of
      :math:`\operatorname{logit} P(y = 1) = a + b x`, R's
      ``glm(y ~ qlogis(p), binomial)``; computed by Newton-Raphson until a step
      moves the estimates by less than 1e-12 relative (exact to rounding).
      ``method="rms"`` stops as rms's ``lrm.fit`` does, earlier (about 1e-6
      relative from the maximum on ordinary data), and close to separation
      possibly far from it (``docs/val_prob.md``).
    - **U:Chi-sq** :math:`= L_{01} - L_{ab}`, with :math:`L_{ab}` the deviance
      of that fit; **U** :math:`= (\text{U:Chi-sq} - 2)/n`, the unreliability
      index; **U:p**, the upper tail of :math:`\chi^2_2`;
      **Q** :math:`= D - U`, the quality index.
    - **Brier** :math:`= \frac{1}{n} \sum_i (p_i - y_i)^2`.
    - **Emax**, **E90**, **Eavg**: the largest, 0.9 quantile (R's type 7) and
      mean of :math:`|p_i - s(p_i)|`, where :math:`s` is R's
      ``lowess(p, y, iter = 0)`` (span 2/3, ``delta = 0.01 * diff(range(p))``).
    - **S:z** :math:`= \sum_i (y_i - p_i)(1 - 2 p_i) / \sqrt{\sum_i (1 - 2
      p_i)^2 p_i (1 - p_i)}`, Spiegelhalter's z; **S:p**
      :math:`= 2 \Phi(-|z|)`.

    ``method="rms"`` also computes D:Chi-sq, D and R2 with the linear
    predictor clamped to [-30, 30] as rms's Fortran does (which matters only
    for ``p`` within 1e-13 of 0 or 1). Both methods give D:p (NA in rms up to
    6.8) and compute the tails of U:p, D:p and S:p without R's cancellation
    in ``1 - pchisq()``; both give the same Brier score, lowess errors and
    Spiegelhalter test.

    When every ``p`` is the same, R (and calibr) report Dxy = 0, C = 0.5,
    R2 = 0, D:Chi-sq = 0, D:p = 1, D = -1/n, Slope = 0, Intercept = logit of the
    event rate, U:Chi-sq = :math:`L_{01} - L_0` on 1 degree of freedom and
    U = (U:Chi-sq - 1)/n; Emax = E90 = Eavg = :math:`|p - \bar y|`.

    **Decisions** (``docs/val_prob.md`` gives the reasons): ``p`` equal to 0 or
    1 is refused (R drops those rows from some statistics and not others);
    so is ``y`` with one outcome only (R fails or reports infinite values);
    the default is rms's numbers, since the function's name promises them.

    References
    ----------
    .. [1] F. E. Harrell, *Regression Modeling Strategies*, 2nd ed., Springer,
       2015; and the R package rms, function ``val.prob``.
    .. [2] D. J. Spiegelhalter, "Probabilistic prediction in patient management
       and clinical trials", *Statistics in Medicine* 5 (1986), 421-433.
    .. [3] W. S. Cleveland, "Robust locally weighted regression and smoothing
       scatterplots", *Journal of the American Statistical Association* 74
       (1979), 829-836.

    Examples
    --------
    The same numbers as R's
    ``rms::val.prob(c(.1, .2, .3, .4, .5, .6, .7, .8, .9, .3),
    c(0, 0, 1, 0, 0, 1, 1, 1, 1, 0), pl = FALSE)``, except ``D:p`` (NA in
    rms up to 6.8):

    >>> p = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.3]
    >>> y = [0, 0, 1, 0, 0, 1, 1, 1, 1, 0]
    >>> stats = val_prob(p, y)
    >>> print(stats.round(4).to_string())
    Dxy          0.8000
    C (ROC)      0.9000
    R2           0.5473
    D            0.4285
    D:Chi-sq     5.2847
    D:p          0.0215
    U           -0.0867
    U:Chi-sq     1.1331
    U:p          0.5675
    Q            0.5152
    Brier        0.1340
    Intercept    0.3045
    Slope        2.1024
    Emax         0.2397
    E90          0.2163
    Eavg         0.1216
    S:z         -0.8785
    S:p          0.3797
    >>> float(stats["C (ROC)"])
    0.9

    rms's Slope stops short of the maximum-likelihood one:

    >>> round(float(stats["Slope"]), 7)
    2.1023658
    >>> round(float(val_prob(p, y, method="exact")["Slope"]), 7)
    2.1023691
    """
    _refuse_matrix(p)
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    if not prep.binary:  # pragma: no cover - _refuse_matrix refused every matrix
        raise InputError("`p` must be a vector of probabilities P(y = 1) for val_prob.", param="p")
    probs = prep.p
    outcome = np.asarray(prep.y, dtype=np.float64)
    _check_open_unit(probs, _original_length(p))
    _check_both_outcomes(outcome)
    if bool(np.all(probs == probs[0])):
        values, messages = _constant_p(probs, outcome), []
    else:
        values, messages = _general(probs, outcome, method)
    if math.isnan(values["S:z"]):
        messages.append("val_prob: every `p` is 0.5, so Spiegelhalter's statistic has "
                        "variance 0; S:z and S:p are NaN.")
    for message in messages:
        warn(message, RuntimeWarning)
    return pd.Series([values[name] for name in VAL_PROB_NAMES],
                     index=pd.Index(VAL_PROB_NAMES), dtype=np.float64)


# --------------------------------------------------------------------------
# input checks beyond prepare()


def _refuse_matrix(p: Any) -> None:
    """Refuse a matrix (or higher) ``p`` before prepare() reads it as multiclass."""
    if isinstance(p, (pd.DataFrame, pd.Series, np.ndarray)):
        shape = p.shape
    else:
        try:
            shape = np.shape(p)
        except Exception:  # noqa: BLE001 - ragged or unreadable: prepare() says why
            return
    if len(shape) >= 2:
        what = "a matrix" if len(shape) == 2 else "an array"
        hint = (" For a two-class matrix, pass the column of the positive class "
                "(e.g. p[:, 1])." if len(shape) == 2 else "")
        raise InputError(
            f"`p` must be a vector of probabilities P(y = 1) for val_prob, which is for "
            f"binary outcomes only; got {what} of shape {tuple(shape)}.{hint}",
            param="p"
        )


def _original_length(p: Any) -> int | None:
    try:
        return len(p)
    except TypeError:  # pragma: no cover - prepare() accepted p, so it has a length
        return None


def _check_open_unit(probs: np.ndarray, original_n: int | None) -> None:
    """Refuse p equal to 0 or 1 (prepare() has checked [0, 1])."""
    bad = (probs <= 0.0) | (probs >= 1.0)
    if not bad.any():
        return
    (positions,) = np.nonzero(bad)
    first = int(positions[0])
    count = positions.size
    dropped = original_n is not None and original_n != probs.shape[0]
    where = (f"position {first} of the complete observations" if dropped
             else f"position {first}")
    raise InputError(
        f"`p` must lie strictly between 0 and 1 for val_prob (its statistics use "
        f"logit(p)); {count} {'value does' if count == 1 else 'values do'} not, the first "
        f"at {where} ({float(probs[first])!r}).",
        param="p"
    )


def _check_both_outcomes(outcome: np.ndarray) -> None:
    n1 = int(np.count_nonzero(outcome))
    if 0 < n1 < outcome.shape[0]:
        return
    n = outcome.shape[0]
    which = 1 if n1 else 0
    every = f"all {n} values are" if n > 1 else "its one value is"
    raise InputError(
        f"`y` must contain both outcomes (0 and 1) for val_prob; {every} {which}.",
        param="y"
    )


# --------------------------------------------------------------------------
# the statistics


def _chi2_sf(x: float, df: int) -> float:
    """Upper tail of the chi-square distribution with 1 or 2 degrees of freedom
    (R's ``1 - pchisq(x, df)``, without its cancellation; 1 for ``x <= 0``)."""
    if math.isnan(x):
        return math.nan
    if x <= 0.0:
        return 1.0
    if df == 1:
        return math.erfc(math.sqrt(x / 2.0))
    if df == 2:
        return math.exp(-x / 2.0)
    raise ValueError(df)  # pragma: no cover - only 1 and 2 are used


def spiegelhalter(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    r"""Spiegelhalter's (1986) z test of calibration, as ``rms::val.prob`` computes it.

    .. math:: z = \frac{\sum_i (y_i - p_i)(1 - 2 p_i)}
                       {\sqrt{\sum_i (1 - 2 p_i)^2 \, p_i (1 - p_i)}}

    Under calibration (``y_i ~ Bernoulli(p_i)`` independently) ``z`` is
    asymptotically standard normal; the p-value is two-sided,
    :math:`2 \Phi(-|z|)`.

    Parameters
    ----------
    p : ndarray
        float64 probabilities in [0, 1].
    y : ndarray
        0/1 outcomes (any real dtype), the same length.

    Returns
    -------
    (float, float)
        ``(z, pvalue)``. With zero variance (every ``p`` in {0, 1/2, 1}) they
        follow IEEE division as in R: ``(nan, nan)`` when the numerator is 0
        too, else ``(inf, 0.0)`` (the numerator is then positive: a ``p`` of 0
        or 1 contradicted by its outcome).

    Examples
    --------
    >>> z, pvalue = spiegelhalter(np.array([0.25, 0.75]), np.array([1.0, 0.0]))
    >>> round(z, 6), round(pvalue, 6)
    (2.44949, 0.014306)
    """
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    a = 1.0 - 2.0 * p
    return spiegelhalter_from_sums(float(np.sum((y - p) * a)), float(np.sum(a * a * p * (1.0 - p))))


def spiegelhalter_from_sums(num: float, var: float) -> tuple[float, float]:
    """``(z, pvalue)`` of :func:`spiegelhalter` from its two sums, ``num = sum (y -
    p)(1 - 2p)`` and ``var = sum (1 - 2p)^2 p (1 - p)`` (the lazy engines compute
    them in their query: ``calibr/_engines/_pushdown.py``)."""
    if var == 0.0:
        if num == 0.0:
            return math.nan, math.nan
        return (math.inf if num > 0.0 else -math.inf), 0.0
    z = num / math.sqrt(var)
    return z, math.erfc(abs(z) / math.sqrt(2.0))


def _deviance_of_p(p: np.ndarray, y: np.ndarray) -> float:
    """-2 log-likelihood of the predictions themselves (accurate near 0 and 1)."""
    return -2.0 * float(np.sum(np.where(y == 1.0, np.log(p), np.log1p(-p))))


def _null_deviance(y: np.ndarray) -> float:
    """-2 log-likelihood of the overall event rate (R's ``llnull``)."""
    n = y.shape[0]
    n1 = float(np.count_nonzero(y))
    n0 = n - n1
    return -2.0 * (n1 * math.log(n1 / n) + n0 * math.log(n0 / n))


def _logit(p: np.ndarray) -> np.ndarray:
    """R's ``qlogis(p)``: ``log(p / (1 - p))``."""
    return np.log(p / (1.0 - p))


def _quantile7(x: np.ndarray, prob: float) -> float:
    """R's ``quantile(x, prob)`` (type 7), with R's arithmetic."""
    n = x.shape[0]
    s = np.sort(x)
    index = 1.0 + (n - 1) * prob  # 1-based, as in R
    lo = math.floor(index)
    hi = math.ceil(index)
    qs = float(s[lo - 1])
    x_hi = float(s[hi - 1])
    if index > lo and x_hi != qs:
        h = index - lo
        qs = (1.0 - h) * qs + h * x_hi
    return qs


def _concordance(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(C, Dxy) over all (y = 1, y = 0) pairs, ties in ``p`` counted 1/2.

    One sort: per distinct value of ``p``, the events and non-events there and
    the non-events below. Counts are exact integers; C and Dxy are
    ``(con + tie / 2) / pairs`` and ``(con - dis) / pairs`` as in rms.
    """
    order = np.argsort(p, kind="stable")
    ps = p[order]
    ys = y[order]
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    events = np.add.reduceat(ys.astype(np.int64), starts)
    sizes = np.diff(np.r_[starts, ps.shape[0]])
    nonevents = sizes - events
    below = np.cumsum(nonevents) - nonevents  # non-events at smaller p
    n1 = int(events.sum())
    n0 = int(nonevents.sum())
    con = int(np.dot(events, below))
    tie = int(np.dot(events, nonevents))
    pairs = n1 * n0
    dis = pairs - con - tie
    return (con + tie * 0.5) / pairs, (con - dis) / pairs


def _separated(x: np.ndarray, y: np.ndarray) -> bool:
    """Does ``x`` separate the outcomes (then the logistic fit has no MLE)?"""
    x1 = x[y == 1.0]
    x0 = x[y == 0.0]
    return bool(x0.max() <= x1.min() or x1.max() <= x0.min())


def _fit_deviance(eta: np.ndarray, y: np.ndarray) -> float:
    """-2 log-likelihood of a logistic model with linear predictor ``eta``."""
    return 2.0 * float(np.sum(np.logaddexp(0.0, eta) - y * eta))


def _recalibration(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float] | None:
    """Maximum-likelihood ``(a, b, deviance)`` of ``logit P(y = 1) = a + b x``.

    Newton-Raphson from R's start (the logit of the event rate, slope 0), in
    the centred parametrisation ``a' + b (x - mean(x))`` (better conditioned;
    ``a = a' - b mean(x)``). A step is halved while it raises the deviance by
    more than rounding (``_DEV_SLACK``): close to the maximum the deviance is
    flat to rounding while the estimates still move, so only full Newton steps
    reach the maximum there. It stops once a step moves the estimates by at
    most ``_FIT_STEP_TOL``, or by at most ``_FIT_NOISE`` without shrinking
    (rounding noise). Returns None if it does not converge (not expected when
    the estimate exists).
    """
    xbar = float(np.mean(x))
    xc = x - xbar
    rate = float(np.mean(y))
    beta = np.array([math.log(rate / (1.0 - rate)), 0.0])
    dev = _fit_deviance(beta[0] + beta[1] * xc, y)
    previous = math.inf
    for _ in range(_FIT_MAXIT):
        eta = beta[0] + beta[1] * xc
        mu = 0.5 * (1.0 + np.tanh(0.5 * eta))  # the logistic function, without overflow
        e = np.exp(-np.abs(eta))
        w = e / (1.0 + e) ** 2  # mu (1 - mu), accurate in the tails
        r = y - mu
        g0, g1 = float(np.sum(r)), float(np.sum(r * xc))
        h00, h01, h11 = float(np.sum(w)), float(np.sum(w * xc)), float(np.sum(w * xc * xc))
        det = h00 * h11 - h01 * h01
        if not (math.isfinite(det) and det > 0.0):
            return None  # pragma: no cover - x is not constant, so det > 0
        step = np.array([(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det])
        t = 1.0
        while True:
            candidate = beta + t * step
            new_dev = _fit_deviance(candidate[0] + candidate[1] * xc, y)
            if new_dev <= dev + _DEV_SLACK * (1.0 + abs(dev)):
                break
            t *= 0.5
            if t < 1e-10:  # pragma: no cover - a Newton step of a concave fit descends
                return None
        moved = float(np.max(np.abs(candidate - beta) / np.maximum(1.0, np.abs(candidate))))
        beta, dev = candidate, new_dev
        if moved <= _FIT_STEP_TOL or (moved <= _FIT_NOISE and moved > 0.5 * previous):
            a = float(beta[0] - beta[1] * xbar)
            b = float(beta[1])
            return a, b, _fit_deviance(a + b * x, y)
        previous = moved
    return None  # pragma: no cover - the estimate exists, Newton converges


def _lowess_errors(p: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(Emax, E90, Eavg) of ``|p - lowess(p, y, iter = 0)|`` at each ``p``.

    R evaluates the smooth at each ``p`` with ``approx(..., ties = mean)``;
    lowess gives tied ``p`` the same fitted value, so that is the fitted value.
    """
    xs, fitted = lowess(p, y, iter=0)
    smooth = fitted[np.searchsorted(xs, p)]
    err = np.abs(p - smooth)
    return float(np.max(err)), _quantile7(err, 0.9), float(np.mean(err))


_SEPARATED = (
    "val_prob: `p` separates the outcomes (no y = 1 has a smaller p than a y = 0, or no "
    "y = 1 a larger one), so the logistic recalibration of y on logit(p) has no "
    "maximum-likelihood estimate; "
)


def _fit_statistics(a: float, b: float, dev: float, l01: float, d: float,
                    n: int) -> dict[str, float]:
    """The six statistics of the recalibration fit ``(a, b)`` of deviance ``dev``."""
    u_chisq = l01 - dev
    u = (u_chisq - 2.0) / n
    return {"Intercept": a, "Slope": b, "U:Chi-sq": u_chisq, "U": u,
            "U:p": _chi2_sf(u_chisq, 2), "Q": d - u}


def _exact_general(p: np.ndarray, y: np.ndarray) -> tuple[dict[str, float], list[str]]:
    """``method="exact"``: the definitions of ``docs/val_prob.md``."""
    n = p.shape[0]
    x = _logit(p)
    l01 = _deviance_of_p(p, y)
    l0 = _null_deviance(y)
    lr = l0 - l01
    c_index, dxy = _concordance(p, y)
    r2 = math.expm1(-lr / n) / math.expm1(-l0 / n)
    d = (lr - 1.0) / n
    out = {"Dxy": dxy, "C (ROC)": c_index, "R2": r2, "D": d, "D:Chi-sq": lr}
    fit = None if _separated(x, y) else _recalibration(x, y)
    if fit is None:
        out.update(dict.fromkeys(_FIT_NAMES, math.nan))
        return out, [_SEPARATED + "Intercept, Slope, U, U:Chi-sq, U:p and Q are NaN."]
    out.update(_fit_statistics(*fit, l01, d, n))
    return out, []


def _r_sum(terms: np.ndarray) -> float:
    """R's ``sum()`` of doubles: left to right in long double, rounded to double
    (where numpy's long double is wider than double, as on x86-64 Linux)."""
    return float(np.cumsum(terms.astype(np.longdouble))[-1])


def _rms_singular(v00: float, v10: float, v11: float) -> bool:
    """Does rms find the 2 x 2 information matrix ``V`` singular? R's QR
    decomposition ``dqrdc2``, which both LRMFIT (for each Newton step) and
    ``lrm.fit``'s R code (``solvet``, for the variance of the estimates) use
    with ``tol = _RMS_TOL``, calls the second column negligible when its norm
    after the Householder reflection of the first, ``|det V| / |v_1|``, is below
    ``tol`` times its original norm."""
    det = v00 * v11 - v10 * v10
    return not abs(det) / math.hypot(v00, v10) >= _RMS_TOL * math.hypot(v10, v11)


def _rms_recalibration(x: np.ndarray, y: np.ndarray,
                       n1: int) -> tuple[float, float, float, str, bool]:
    """``(a, b, deviance, status, singular)`` of rms's ``lrm.fit(x, y)``: LRMFIT's
    Newton-Raphson in ``src/lrmfit.f`` of rms 5.1-2 to 6.8-2.

    From (logit of the event rate, 0), each iteration evaluates -2LL and its
    derivatives at the current estimate; if -2LL rose, it halves the last step
    (moves back by half of what remains) and goes on; else it takes the full
    Newton step and stops if -2LL changed by at most ``eps = 0.025`` from the
    previous accepted estimate: the step is taken, then the test made, so the
    result is one Newton step beyond the estimate that passed. It also stops
    when the score is below 1e-9 and -2LL changed by less than ``eps / 10``.
    Then ``deviance`` is -2LL at the result and ``status`` "converged". After
    ``maxit - 1 = 11`` iterations without stopping (``status`` "iterations",
    rms's ``fail``), the result is the last estimate and ``deviance`` the -2LL
    last evaluated, before the last step, as rms returns them. ``singular``:
    rms found an information matrix singular on the way (:func:`_rms_singular`),
    where it gives up; calibr carries on. ``status`` "singular": a Newton step
    cannot be computed at all (the determinant is not positive).
    """
    n = x.shape[0]
    pp = n1 / n
    beta0, beta1 = math.log(pp / (1.0 - pp)), 0.0
    oldl = 1e30
    step0 = step1 = 0.0
    curstp = 1.0
    loglik = math.nan
    singular = False
    status = "iterations"
    for _ in range(1, _RMS_MAXIT):
        loglik, u0, u1, v00, v10, v11 = rms_kernels.llogit(beta0, beta1, x, y)
        if max(abs(u0), abs(u1)) < 1e-9 and abs(loglik - oldl) < 0.1 * _RMS_EPS:
            status = "converged"
            break
        if loglik > oldl:  # never at the first iteration: oldl is 1e30 there
            curstp /= 2.0
            beta0, beta1 = beta0 - curstp * step0, beta1 - curstp * step1
            continue
        curstp = 1.0
        singular = singular or _rms_singular(v00, v10, v11)
        det = v00 * v11 - v10 * v10
        if not (math.isfinite(det) and det > 0.0):
            return math.nan, math.nan, math.nan, "singular", True
        step0, step1 = (v11 * u0 - v10 * u1) / det, (v00 * u1 - v10 * u0) / det
        beta0, beta1 = beta0 + step0, beta1 + step1
        if abs(oldl - loglik) <= _RMS_EPS:
            status = "converged"
            break
        oldl = loglik
    if status == "iterations":
        return beta0, beta1, loglik, status, singular
    loglik, _, _, v00, v10, v11 = rms_kernels.llogit(beta0, beta1, x, y)
    return beta0, beta1, loglik, status, singular or _rms_singular(v00, v10, v11)


_RMS_SINGULAR = (
    "val_prob: rms's lrm.fit finds an information matrix singular (R's QR tolerance "
    "1e-7: the logits of `p` vary too little), where rms's val.prob stops with an "
    "error; these statistics carry on rms's computation without that check."
)


def _rms_general(p: np.ndarray, y: np.ndarray) -> tuple[dict[str, float], list[str]]:
    """``method="rms"``: what ``rms::val.prob`` computes with the Fortran
    ``lrm.fit`` of rms 5.1-2 to 6.8-2 (``docs/val_prob.md``, "method="rms"")."""
    n = p.shape[0]
    n1 = int(np.count_nonzero(y))
    n0 = n - n1
    x = rms_kernels.qlogis(p)
    # the fixed model lrm.fit(x, y, initial = c(0, 1), maxit = 1): -2LL and the
    # rank statistics at intercept 0, slope 1
    fixed, _, _, v00, v10, v11 = rms_kernels.llogit(0.0, 1.0, x, y)
    singular = _rms_singular(v00, v10, v11)
    c_index, dxy = _concordance(rms_kernels.rank_bins(x), y)
    # lrm.fit's R code: llnull, Model L.R. and R2 from sums of weights
    llnull = -2.0 * _r_sum(np.array([n0 * math.log(n0 / n), n1 * math.log(n1 / n)]))
    lr = llnull - fixed
    r2 = (1.0 - math.exp(-lr / n)) / (1.0 - math.exp(-llnull / n))
    d = (lr - 1.0) / n
    l01 = -2.0 * _r_sum(rms_kernels.val_prob_l01_terms(x, y))
    out = {"Dxy": dxy, "C (ROC)": c_index, "R2": r2, "D": d, "D:Chi-sq": lr}
    a, b, dev, status, fit_singular = _rms_recalibration(x, y, n1)
    messages = [_RMS_SINGULAR] if singular or fit_singular else []
    if status == "singular":
        out.update(dict.fromkeys(_FIT_NAMES, math.nan))
        messages.append("val_prob: the information matrix of the recalibration is singular; "
                        "Intercept, Slope, U, U:Chi-sq, U:p and Q are NaN.")
        return out, messages
    out.update(_fit_statistics(a, b, dev, l01, d, n))
    if _separated(x, y):
        messages.append(_SEPARATED + (
            "Intercept, Slope, U, U:Chi-sq, U:p and Q are those of the estimate where "
            "rms's Newton-Raphson stopped, as rms reports them (method=\"exact\" gives NaN)."
        ))
    elif status == "iterations":
        messages.append(
            "val_prob: rms's lrm.fit stopped after its 11 Newton-Raphson iterations "
            "without converging (its fail flag, which rms's val.prob ignores); Intercept, "
            "Slope, U, U:Chi-sq, U:p and Q are those of that estimate, as rms reports them. "
            "method=\"exact\" gives the maximum-likelihood fit."
        )
    return out, messages


#: ``method`` -> the statistics of the general branch (more than one distinct p)
#: that depend on it, with the messages of the warnings to give.
_GENERAL = {"rms": _rms_general, "exact": _exact_general}


def _general(p: np.ndarray, y: np.ndarray, method: str) -> tuple[dict[str, float], list[str]]:
    out, messages = _GENERAL[method](p, y)
    out["D:p"] = _chi2_sf(out["D:Chi-sq"], 1)
    out["Brier"] = float(np.mean((p - y) ** 2))
    out["Emax"], out["E90"], out["Eavg"] = _lowess_errors(p, y)
    out["S:z"], out["S:p"] = spiegelhalter(p, y)
    return out, messages


def _constant_p(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """R's branch for a single distinct ``p`` (no ranking, slope fixed at 0)."""
    n = p.shape[0]
    rate = float(np.mean(y))
    l01 = _deviance_of_p(p, y)
    u_chisq = l01 - _null_deviance(y)  # R's L01 - L.cal: L.cal is the null deviance
    d = -1.0 / n
    u = (u_chisq - 1.0) / n
    gap = abs(float(p[0]) - rate)
    z, pvalue = spiegelhalter(p, y)
    return {
        "Dxy": 0.0, "C (ROC)": 0.5, "R2": 0.0, "D": d, "D:Chi-sq": 0.0, "D:p": 1.0,
        "U": u, "U:Chi-sq": u_chisq, "U:p": _chi2_sf(u_chisq, 1), "Q": d - u,
        "Brier": float(np.mean((y - p[0]) ** 2)), "Intercept": math.log(rate / (1.0 - rate)),
        "Slope": 0.0, "Emax": gap, "E90": gap, "Eavg": gap, "S:z": z, "S:p": pvalue,
    }
