"""Cross-fitted recalibration and the calibration gain of a proper score
(``docs/definitions.md``, "The calibration gain: `calibration_gain()`,
`recalibrate()`").

The rows are dealt into ``cv`` stratified folds (:func:`folds`); each fold's
predictions are recalibrated by a map fitted on the other folds: Platt scaling
(the logistic regression of ``y`` on ``logit(p)``, two parameters), temperature
scaling (one inverse temperature on the log-probabilities, binary or
multiclass), both by Newton's method with step halving, or the isotonic
regression of ``y`` on ``p`` by the pool-adjacent-violators pass of
``calibr._binning.isotonic_blocks``, read between its knots as scikit-learn's
``IsotonicRegression(out_of_bounds="clip")`` does. The calibration gain is the
score of ``p`` minus the score of the recalibrated probabilities, the
calibration error of Berta et al. (2025).

The losses are those of ``calibr.brier`` and ``calibr.log_loss``, computed by
their one implementation (``calibr._metrics.scores.loss_sums``). With frequency
weights, the fits are weighted and the losses weighted means; the folds deal the
rows of positive weight, each row whole into one fold (``docs/definitions.md``,
"The calibration gain").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _binning
from .._docs import shared_docs
from .._input import (
    RNG,
    InputError,
    Integer,
    Options,
    Prepared,
    bad_values_message,
    count_phrase,
    prepare,
    validate_params,
)
from .._input.warning import CountedRuntimeWarning, warn
from .decompose import SCORES  # the proper scores calibr computes: "brier", "log_loss"
from .scores import loss_sums

__all__ = ["METHODS", "SCORES", "CalibrationGain", "calibration_gain", "folds",
           "recalibrate", "recalibration_gain"]

#: The recalibration maps.
METHODS = ("platt", "temperature", "isotonic")
#: The folds when ``cv`` is not given.
CV_DEFAULT = 5
#: Newton's method: the most steps, and the gradient norm at which it stops.
_MAX_STEPS = 100
_GRAD_TOL = 1e-12


@dataclass(frozen=True)
class CalibrationGain:
    """The result of :func:`calibr.calibration_gain`.

    Attributes
    ----------
    score : str
        ``"log_loss"`` or ``"brier"``.
    method : str
        The recalibration map: ``"platt"``, ``"temperature"`` or ``"isotonic"``.
    cv : int
        The number of folds.
    n : int
        The number of rows (of positive weight).
    loss : float
        The mean score of ``p``.
    refinement : float
        The mean score of the out-of-fold recalibrated probabilities.
    calibration_error : float
        ``loss - refinement``: the part of the loss that recalibration removes
        out of sample (negative when the recalibration does worse than ``p``).
    """

    score: str
    method: str
    cv: int
    n: int
    loss: float
    refinement: float
    calibration_error: float

    def _repr_html_(self) -> str:
        """The fields as an HTML table, for notebooks (``calibr._display.repr``)."""
        from .._display.repr import result_html

        return result_html(self)


# ------------------------------------------------------------------ the folds

def folds(codes: np.ndarray, cv: int, rng: Any) -> np.ndarray:
    """The fold (0..cv-1) of each row: the rows of each class (in the order of the
    class codes) in the order of ``numpy.random.default_rng(rng).permutation``,
    dealt in turn to folds 0, 1, ..., cv - 1, the count carried from one class to
    the next (``docs/definitions.md``, "The folds")."""
    gen = np.random.default_rng(rng)
    out = np.empty(codes.shape[0], dtype=np.int64)
    offset = 0
    for k in np.unique(codes):
        rows = np.flatnonzero(codes == k)
        rows = rows[gen.permutation(rows.shape[0])]
        out[rows] = (offset + np.arange(rows.shape[0])) % cv
        offset += rows.shape[0]
    return out


def _check_classes(codes: np.ndarray, cv: int) -> None:
    present, counts = np.unique(codes, return_counts=True)
    if present.shape[0] < 2:
        raise InputError(
            "`y` has one class only; a recalibration map needs outcomes of two classes "
            "or more.", param="y")
    if cv > counts.min():
        raise InputError(
            f"`cv` must be at most the count of the rarest class of `y` "
            f"({int(counts.min())}), so that every fold holds each class; got {cv}.",
            param="cv")


# ------------------------------------------------------------------ the fits

def _sigmoid(t: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-t))`` as ``(1 + tanh(t / 2)) / 2``: one pass, no overflow."""
    out = np.tanh(t * 0.5)
    out += 1.0
    out *= 0.5
    return out


def _log1pexp(t: np.ndarray) -> np.ndarray:
    """``log(1 + exp(t))`` as ``max(t, 0) + log1p(exp(-|t|))``: no overflow."""
    out = np.abs(t)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += np.maximum(t, 0.0)
    return out


def _newton(loss, grad_hess, theta: np.ndarray) -> np.ndarray:
    """Minimise a smooth convex ``loss`` (a mean over the rows) from ``theta``:
    Newton steps, halved until the loss does not increase; stops when no gradient
    component exceeds 1e-12, when a step moves no parameter by more than 1e-15 of
    its size, or after 100 steps."""
    current = loss(theta)
    for _ in range(_MAX_STEPS):
        g, h = grad_hess(theta)
        if not np.all(np.isfinite(g)) or np.max(np.abs(g)) <= _GRAD_TOL:
            break
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        while t > 1e-10:
            cand = theta - t * step
            value = loss(cand)
            if value <= current:
                break
            t /= 2.0
        else:
            break
        small = np.all(np.abs(cand - theta) <= 1e-15 * (1.0 + np.abs(theta)))
        theta, current = cand, value
        if small:
            break
    return theta


def _platt_fit(z: np.ndarray, y: np.ndarray, intercept: bool = True,
               w: np.ndarray | None = None) -> np.ndarray:
    """``(a, b)`` of ``sigmoid(a z + b)``: the maximum-likelihood logistic regression
    of ``y`` on ``z = logit(p)`` (no penalty; weighted by ``w``); without
    ``intercept``, ``b = 0`` and ``a`` is the binary inverse temperature. The loss is
    a mean, so the tolerance does not grow with the rows."""
    ones = w is None
    w = np.ones_like(z) if ones else w
    n = z.shape[0] if ones else float(np.sum(w))
    wz = z if ones else w * z
    yz = float(np.dot(y, wz))
    ysum = float(y.sum() if ones else np.dot(y, w))
    zz = z * wz

    def loss(theta):
        t = theta[0] * z + theta[1]
        lp = _log1pexp(t)
        return float(((np.sum(lp) if ones else np.dot(w, lp)) - theta[0] * yz
                      - theta[1] * ysum) / n)

    def grad_hess(theta):
        q = _sigmoid(theta[0] * z + theta[1])
        v = q * (1.0 - q)
        gz, vz = np.dot(q, wz) - yz, np.dot(v, wz)
        if not intercept:
            return np.array([gz / n]), np.array([[max(np.dot(v, zz), 1e-300) / n]])
        g = np.array([gz, (q.sum() if ones else np.dot(q, w)) - ysum]) / n
        h = np.array([[np.dot(v, zz), vz], [vz, v.sum() if ones else np.dot(v, w)]]) / n
        return g, h

    def full(th: np.ndarray) -> np.ndarray:
        return th if intercept else np.array([th[0], 0.0])

    start = np.array([1.0, 0.0]) if intercept else np.array([1.0])
    return full(_newton(lambda th: loss(full(th)), lambda th: grad_hess(full(th)), start))


def _temperature_fit(logp: np.ndarray, codes: np.ndarray, w: np.ndarray | None = None
                     ) -> float:
    """The inverse temperature ``beta`` of ``softmax(beta log p)`` that maximises the
    (``w``-weighted) likelihood of ``codes`` (a matrix of log-probabilities, one
    column per class)."""
    n = logp.shape[0] if w is None else float(np.sum(w))
    own = logp[np.arange(logp.shape[0]), codes]

    def total(values: np.ndarray) -> float:
        return float(np.sum(values) if w is None else np.dot(w, values))

    def loss(theta):
        s = theta[0] * logp
        m = s.max(axis=1)
        lse = m + np.log(np.exp(s - m[:, None]).sum(axis=1))
        return total(lse - theta[0] * own) / n

    def grad_hess(theta):
        s = theta[0] * logp
        s -= s.max(axis=1)[:, None]
        q = np.exp(s)
        q /= q.sum(axis=1)[:, None]
        mean = (q * logp).sum(axis=1)
        var = (q * logp * logp).sum(axis=1) - mean * mean
        return (np.array([total(mean - own) / n]),
                np.array([[max(total(var) / n, 1e-300)]]))

    return float(_newton(loss, grad_hess, np.array([1.0]))[0])


def _isotonic_map(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None):
    """The (``w``-weighted) isotonic regression of ``y`` on ``x`` (ties pooled), as a
    function read linearly between the smallest and the largest ``x`` of each block
    and constant beyond the ends (scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip")``)."""
    b = _binning.isotonic_blocks(x, y, w)
    knots = np.column_stack((b.lowest, b.highest)).ravel()
    values = np.repeat(b.fitted, 2)
    return lambda v: np.interp(v, knots, values)


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


def _recalibrated(prep: Prepared, method: str, cv: int, rng: Any) -> np.ndarray:
    """The out-of-fold recalibrated ``prep.p``; its weights (all positive, or None)
    weight the fits."""
    codes = prep.y.astype(np.int64) if prep.binary else prep.y
    w = prep.weights
    _check_classes(codes, cv)
    fold = folds(codes, cv, rng)
    out = np.empty_like(prep.p)
    if method != "isotonic":
        if prep.binary:
            z = _logit(prep.p)
        else:
            with np.errstate(divide="ignore"):
                logp = np.log(prep.p)
    for f in range(cv):
        test = fold == f
        train = ~test
        wt = None if w is None else w[train]
        if method == "isotonic":
            if prep.binary:
                out[test] = _isotonic_map(prep.p[train], prep.y[train], wt)(prep.p[test])
            else:
                out[test] = _isotonic_ovr(prep.p[train], codes[train], prep.p[test], wt)
        elif method == "platt":
            a, b = _platt_fit(z[train], prep.y[train].astype(np.float64), w=wt)
            out[test] = _sigmoid(a * z[test] + b)
        elif prep.binary:  # temperature of the columns (1 - p, p): sigmoid(beta logit p)
            beta = _platt_fit(z[train], prep.y[train].astype(np.float64), intercept=False,
                              w=wt)[0]
            out[test] = _sigmoid(beta * z[test])
        else:
            beta = _temperature_fit(logp[train], codes[train], wt)
            s = beta * logp[test]
            s -= s.max(axis=1)[:, None]
            e = np.exp(s)
            out[test] = e / e.sum(axis=1)[:, None]
    return out


def _isotonic_ovr(p: np.ndarray, codes: np.ndarray, new: np.ndarray,
                  w: np.ndarray | None = None) -> np.ndarray:
    """One isotonic map per class (one against the rest), the rows then divided by
    their sum; a row whose maps are all 0 gets 1/K each (scikit-learn's rule)."""
    k = p.shape[1]
    out = np.column_stack([_isotonic_map(np.ascontiguousarray(p[:, j]),
                                         (codes == j).astype(np.float64), w)(new[:, j])
                           for j in range(k)])
    total = out.sum(axis=1)
    zero = total == 0.0
    out[zero] = 1.0 / k
    total[zero] = 1.0
    return out / total[:, None]


def _check_method(prep: Prepared, method: str) -> None:
    if method == "platt" and not prep.binary:
        raise InputError(
            "`method` = 'platt' is binary (a logistic regression on logit(p)); for a "
            "matrix `p` use 'temperature' or 'isotonic'.", param="method")
    if method != "isotonic":
        p = prep.p
        bad = (p <= 0.0) | (p >= 1.0) if prep.binary else p <= 0.0
        if bad.any():
            what = ("lie strictly between 0 and 1" if prep.binary
                    else "be positive (their logarithms are the temperature's input)")
            raise InputError(
                bad_values_message("p", what, bad, p)[:-1]
                + f" with method = {method!r}; use method = 'isotonic', which reads "
                "p of 0 and 1.", param="p")


# ------------------------------------------------------------------ the losses

def _mean_loss(prep: Prepared, q: np.ndarray, score: str, what: str) -> float:
    """The (weighted) mean score of the probabilities ``q`` (``prep.p`` or its
    recalibration) for ``prep``'s outcomes, by ``calibr._metrics.scores.loss_sums``;
    a log loss of rows with probability 0 for their outcome: inf, with a warning
    that counts them."""
    weight, total, zeros = loss_sums(Prepared(q, prep.y, prep.binary, prep.classes,
                                              prep.weights), score)
    if zeros:
        warn(CountedRuntimeWarning(
            f"The log loss of {what} is inf: it gives the outcome of "
            f"{count_phrase(zeros, 'row', 'rows')} a probability of 0 "
            "(docs/definitions.md, \"The calibration gain\").", count=zeros,
            what=(f"gets a probability of 0 for its outcome from {what} (the log loss is "
                  "inf)", f"get a probability of 0 for their outcome from {what} (the log "
                  "loss is inf)")))
        return float("inf")
    return total / weight


# ------------------------------------------------------------------ public

_RULES = dict(method=Options(*METHODS), cv=Integer(2, 10**6), rng=RNG)


@validate_params(**_RULES)
@shared_docs
def recalibrate(
    p: Any,
    y: Any,
    method: str = "temperature",
    *,
    cv: int = CV_DEFAULT,
    rng: int | np.random.Generator | None = 0,
    classes: Sequence | None = None,
    na_rm: bool = False,
) -> np.ndarray:
    """Out-of-fold recalibrated probabilities: each fold's ``p`` mapped by the
    recalibration fitted on the other folds.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    method : {"temperature", "platt", "isotonic"}, default "temperature"
        ``"isotonic"``: the isotonic regression of ``y`` on ``p`` (one class
        against the rest for a matrix, the rows then normalised); ``"platt"``
        (binary): the logistic regression of ``y`` on ``logit(p)``;
        ``"temperature"``: ``softmax(beta log p)``, one inverse temperature
        ``beta`` (binary: ``sigmoid(beta logit(p))``).
    cv : int, default 5, keyword-only
        The number of stratified folds, from 2 to the count of the rarest class.
    rng : int, numpy.random.Generator or None, default 0, keyword-only
        The seed of the folds (``numpy.random.default_rng(rng)``); the default
        0 gives the same folds on every call.
    <calibr:classes>
    <calibr:na_rm>

    Returns
    -------
    ndarray
        The recalibrated probabilities, of the shape of the canonical ``p``
        (the rows ``na_rm=True`` kept).

    Raises
    ------
    ValueError
        (``calibr.InputError``) for an unknown ``method``, ``cv`` below 2 or
        above the count of the rarest class, ``y`` of one class, ``p`` of 0 or
        1 with ``"platt"`` or ``"temperature"``, and bad values of any argument.
    <calibr:raises_type>

    Notes
    -----
    The folds, the fits and their stopping rules: ``docs/definitions.md``,
    "The calibration gain".

    Examples
    --------
    >>> import numpy as np, calibr
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 2000)
    >>> y = rng.random(2000) < p
    >>> q = p ** 2  # too low everywhere
    >>> calibr.recalibrate(q, y)[:4].round(3).tolist()
    [0.451, 0.268, 0.106, 0.084]
    >>> p[:4].round(3).tolist()
    [0.623, 0.293, 0.087, 0.065]
    """
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    _check_method(prep, method)
    return _recalibrated(prep, method, cv, rng)


@validate_params(score=Options(*SCORES), **_RULES)
@shared_docs
def calibration_gain(
    p: Any,
    y: Any,
    score: str = "log_loss",
    method: str = "temperature",
    *,
    cv: int = CV_DEFAULT,
    rng: int | np.random.Generator | None = 0,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> CalibrationGain:
    """The part of a proper score that cross-fitted recalibration removes: the
    loss, the loss after recalibration (the refinement) and their difference.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    score : {"log_loss", "brier"}, default "log_loss"
        The mean log loss (natural log) or the Brier score (binary: the mean
        of ``(p - y)^2``; a matrix: of the sum over the classes).
    method : {"temperature", "platt", "isotonic"}, default "temperature"
        The recalibration map, as :func:`calibr.recalibrate` (the default, one
        parameter, is the map Berta et al. recommend for the log loss).
    cv : int, default 5, keyword-only
        The number of stratified folds.
    rng : int, numpy.random.Generator or None, default 0, keyword-only
        The seed of the folds.
    <calibr:classes>
    <calibr:na_rm>
    weights : array-like, optional, keyword-only
        Frequency weights, one per row: weighted fits and weighted mean losses. A
        row of weight 0 is no row (not in the folds, not refused for a ``p`` of 0
        or 1); the folds deal the other rows, each whole into one fold, so a
        whole-number weight counts the row that many times in its fold
        (``docs/definitions.md``, "The calibration gain").

    Returns
    -------
    CalibrationGain
        ``loss``, ``refinement`` and ``calibration_error = loss - refinement``,
        with ``score``, ``method``, ``cv`` and ``n``.

    Raises
    ------
    ValueError
        (``calibr.InputError``) as :func:`calibr.recalibrate`, and for an
        unknown ``score``.
    <calibr:raises_type>

    Warns
    -----
    RuntimeWarning
        When a log loss is inf (a probability of 0 given to the outcome, by
        ``p`` or by an isotonic map), with the count of such rows.

    Notes
    -----
    Berta, Holzmüller, Jordan & Bach (2025) split a proper loss into the
    calibration error, what the best recalibration of ``p`` removes, and the
    refinement, what remains; estimated out of sample by cross-fitting, as
    probmetrics' ``calib-err_*`` and ``refinement_*``
    (``docs/definitions.md``, "The calibration gain").

    References
    ----------
    Berta, E., Holzmüller, D., Jordan, M. I., & Bach, F. (2025). Rethinking
    early stopping: refine, then calibrate. arXiv:2501.19195.

    Examples
    --------
    >>> import numpy as np, calibr
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 2000)
    >>> y = rng.random(2000) < p
    >>> q = p ** 2  # too low everywhere
    >>> g = calibr.calibration_gain(q, y)
    >>> round(g.loss, 4), round(g.refinement, 4), round(g.calibration_error, 4)
    (0.6791, 0.6012, 0.0779)
    """
    prep = _positive(prepare(p, y, classes=classes, na_rm=na_rm, weights=weights))
    _check_method(prep, method)
    q = _recalibrated(prep, method, cv, rng)
    loss = _mean_loss(prep, prep.p, score, "p")
    refinement = _mean_loss(prep, q, score, "the recalibrated p")
    return CalibrationGain(score=score, method=method, cv=cv, n=prep.n,
                           loss=loss, refinement=refinement,
                           calibration_error=loss - refinement)


def _positive(prep: Prepared) -> Prepared:
    """``prep`` without its rows of weight 0 (no row: in no fold, no fit, no loss)."""
    w = prep.weights
    if w is None or np.all(w > 0):
        return prep
    keep = w > 0
    return Prepared(np.ascontiguousarray(prep.p[keep]), prep.y[keep], prep.binary,
                    prep.classes, w[keep])


@validate_params(score=Options(*SCORES), **_RULES)
@shared_docs
def recalibration_gain(
    p: Any,
    y: Any,
    score: str = "log_loss",
    method: str = "temperature",
    *,
    cv: int = CV_DEFAULT,
    rng: int | np.random.Generator | None = 0,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    """The calibration error of a proper score, one number: ``calibration_gain(p,
    y, ...).calibration_error``, the metric of ``summarise``, the bootstrap and
    the command line.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    score : {"log_loss", "brier"}, default "log_loss"
    method : {"temperature", "platt", "isotonic"}, default "temperature"
    cv : int, default 5, keyword-only
    rng : int, numpy.random.Generator or None, default 0, keyword-only
        As :func:`calibr.calibration_gain`; the default seed makes the number a
        function of the rows (the same in every group, resample and run).
    <calibr:classes>
    <calibr:na_rm>
    weights : array-like, optional, keyword-only
        Frequency weights, as :func:`calibr.calibration_gain`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        (``calibr.InputError``) as :func:`calibr.calibration_gain`.
    <calibr:raises_type>

    Examples
    --------
    >>> import numpy as np, calibr
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 2000)
    >>> y = rng.random(2000) < p
    >>> q = p ** 2  # too low everywhere
    >>> round(calibr.recalibration_gain(q, y, "brier", "isotonic"), 4)
    0.0348
    """
    return calibration_gain(p, y, score, method, cv=cv, rng=rng, classes=classes,
                            na_rm=na_rm, weights=weights).calibration_error
