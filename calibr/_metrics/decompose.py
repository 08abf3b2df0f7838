"""``decompose()``: how much of a Brier score or log loss is miscalibration
(``docs/definitions.md``, "Score decompositions").

The CORP decomposition of Dimitriadis, Gneiting & Jordan (2021), the score of
the predictions split as ``score = MCB - DSC + UNC`` with the reliability curve
of the isotonic fit (PAV, ties pooled: ``calibr._binning.isotonic_blocks``), and
the classical decomposition of Murphy (1973) over calibr's bins
(``binning="equal-width"`` or ``"equal-mass"``). A thin public function: the
options by their rules, the data by the input layer, then per column one sort
and one compiled pass (or the per-bin sums of ``calibr._binning``) and a few
numpy reductions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _binning
from .._defaults import BINS_DEFAULT, DECOMPOSE_BINNING_DEFAULT, RIGHT_DEFAULT
from .._docs import shared_docs
from .._input import (
    BIN_SPEC,
    FLAG,
    RIGHT,
    InputError,
    Options,
    Prepared,
    arg,
    convert,
    count_phrase,
    finish,
    fmt,
    position_text,
    validate_params,
)
from .scores import loss_sums

__all__ = ["Decomposition", "decompose"]

#: ``score=``: the scoring rules decomposed (``docs/definitions.md``).
SCORES = ("brier", "log_loss")
#: ``binning=`` of ``decompose``: CORP's isotonic fit (the default), or Murphy's
#: decomposition over calibr's bins.
DECOMPOSE_BINNINGS = (DECOMPOSE_BINNING_DEFAULT, "equal-width", "equal-mass")

_FIELDS = ("score", "mcb", "dsc", "unc")


@dataclass(frozen=True, eq=False)
class Decomposition:
    """The outcome of :func:`calibr.decompose`: ``score = mcb - dsc + unc``.

    For a vector ``p`` each of ``score``, ``mcb``, ``dsc`` and ``unc`` is a float;
    for a matrix ``p`` it is a read-only float64 array with one value per class
    (the one-vs-rest decomposition of each column), in the order of ``classes``.

    Attributes
    ----------
    score : float or ndarray
        The mean score of the predictions (Brier score or log loss).
    mcb : float or ndarray
        Miscalibration: the score minus that of the recalibrated predictions
        (``binning="isotonic"``), or Murphy's reliability term over the bins.
        Nonnegative up to rounding.
    dsc : float or ndarray
        Discrimination (resolution): the score of the climatology (the mean
        outcome) minus that of the recalibrated predictions. Nonnegative up to
        rounding.
    unc : float or ndarray
        Uncertainty: the score of the climatology, the entropy of the mean
        outcome (``ybar (1 - ybar)`` for the Brier score).
    scoring : str
        ``"brier"`` or ``"log_loss"``.
    binning : str
        ``"isotonic"`` (CORP), ``"equal-width"`` or ``"equal-mass"`` (Murphy).
    n : int
        The observations used (after ``na_rm``).
    classes : tuple or None
        The class of each value (a matrix ``p``), or None (a vector ``p``).
    """

    score: float | np.ndarray
    mcb: float | np.ndarray
    dsc: float | np.ndarray
    unc: float | np.ndarray
    scoring: str
    binning: str
    n: int
    classes: tuple | None = None

    def to_frame(self):
        """The decomposition as a tidy DataFrame: one row (a vector ``p``) or one row
        per class with a first column ``class``, then ``score``, ``mcb``, ``dsc``
        and ``unc``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        cols = {name: np.atleast_1d(getattr(self, name)).astype(np.float64)
                for name in _FIELDS}
        if self.classes is None:
            return pd.DataFrame(cols)
        return pd.DataFrame({"class": list(self.classes), **cols})

    def _repr_html_(self) -> str:
        """The fields as an HTML table, for notebooks (``calibr._display.repr``)."""
        from .._display.repr import result_html

        return result_html(self)


# --------------------------------------------------------------------------
# the scoring rules: the score of a forecast f for an outcome of probability q


def _xlogy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a log b``, 0 where ``a`` is 0 (scipy's ``xlogy``), without warnings."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a * np.log(b)
    return np.where(a == 0, 0.0, out)


def _entropy(q: np.ndarray, scoring: str) -> np.ndarray:
    """The expected score of the forecast q when the outcome has probability q:
    ``q (1 - q)`` (Brier) or ``-q log q - (1 - q) log(1 - q)`` (log loss)."""
    if scoring == "brier":
        return q * (1.0 - q)
    return 0.0 - (_xlogy(q, q) + _xlogy(1.0 - q, 1.0 - q))  # 0.0, not -0.0, at q = 0 or 1


def _divergence(f: np.ndarray, q: np.ndarray, scoring: str) -> np.ndarray:
    """The expected score of the forecast f minus that of q, when the outcome has
    probability q: ``(f - q)^2`` (Brier), the Kullback-Leibler divergence of
    Bernoulli(q) from Bernoulli(f) (log loss)."""
    if scoring == "brier":
        return (f - q) ** 2
    with np.errstate(divide="ignore"):
        return (_xlogy(q, q) - _xlogy(q, f)) + (_xlogy(1.0 - q, 1.0 - q)
                                               - _xlogy(1.0 - q, 1.0 - f))


def _mean_score(x: np.ndarray, c: np.ndarray, w: np.ndarray | None, scoring: str) -> float:
    """The mean score of the forecasts ``x`` for the 0/1 outcomes ``c``: that of
    ``calibr.brier`` / ``calibr.log_loss``, by their one implementation
    (``calibr._metrics.scores.loss_sums``); the caller has refused an infinite log
    loss."""
    weight, total, _ = loss_sums(Prepared(x, c, True, None, w), scoring)
    return total / weight


def _parts(x: np.ndarray, c: np.ndarray, w: np.ndarray | None, scoring: str,
           spec: _binning.BinSpec) -> tuple[float, float, float, float]:
    """``(score, mcb, dsc, unc)`` of one column: forecasts ``x`` (float64), 0/1
    outcomes ``c`` (bool), positive weights ``w`` or None."""
    score = _mean_score(x, c, w, scoring)
    if spec.binning == "isotonic":
        blocks = _binning.isotonic_blocks(x, c, w)
        weight, fitted = blocks.weight, blocks.fitted
    else:
        count, sum_conf, sum_hit, _ = _binning.stats(x, c, w, True, spec, "classwise")
        full = count > 0
        weight, fitted = count[full], sum_hit[full] / count[full]
        mean_forecast = sum_conf[full] / weight
    total = float(np.sum(weight))
    ybar = float(np.sum(weight * fitted)) / total
    unc = float(_entropy(np.float64(ybar), scoring))
    recalibrated = float(np.sum(weight * _entropy(fitted, scoring))) / total
    dsc = unc - recalibrated
    if spec.binning == "isotonic":
        mcb = score - recalibrated
    else:  # Murphy: each bin's mean forecast against its mean outcome
        mcb = float(np.sum(weight * _divergence(mean_forecast, fitted, scoring))) / total
    return score, mcb, dsc, unc


def _refuse_infinite_log_loss(p: np.ndarray, y: np.ndarray, binary: bool, w: np.ndarray | None,
                              classes: tuple | None, dropped: int) -> None:
    """The log loss is infinite where ``p`` gives probability 0 to what happened:
    refused (calibr does not clip), naming the first such value; rows of weight 0
    are left out, as they are of the score."""
    if binary:
        given = np.where(y.astype(bool), p, 1.0 - p)  # the probability of what happened
        bad = given == 0.0
    else:  # one-vs-rest: p = 0 in the observed class's column, or 1 in another
        hit = np.zeros(p.shape, dtype=bool)
        hit[np.arange(p.shape[0]), y] = True
        bad = np.where(hit, p == 0.0, p == 1.0)
    if w is not None:
        bad &= (w > 0)[:, None] if not binary else w > 0
    if not bad.any():
        return
    (positions,) = np.nonzero(bad.ravel())
    first = int(positions[0])
    row = first if binary else first // p.shape[1]
    label = int(y[row]) if binary else classes[int(y[row])]
    verb = "does not" if positions.size == 1 else "do not"
    where = position_text(first, p.shape)
    if dropped:
        where += (f" of the {p.shape[0]:,} complete rows ({arg('na_rm', 'hint', True)} "
                  f"dropped {dropped:,})")
    rule = (f"not be 0 where {arg('y')} is 1 nor 1 where {arg('y')} is 0" if binary else

            "not be 0 in the column of the observed class nor 1 in another column")
    raise InputError(
        f"`p` must {rule} for score = 'log_loss': the log loss is infinite there, and calibr "
        f"does not clip; {count_phrase(positions.size, 'value', 'values')} {verb}, the first "
        f"at {where} (p = {fmt(p.ravel()[first])}, y = {fmt(label)}).",
        param="p"
    )


@validate_params(score=Options(*SCORES), binning=Options(*DECOMPOSE_BINNINGS), bins=BIN_SPEC,
                 right=RIGHT, na_rm=FLAG)
@shared_docs
def decompose(
    p: Any,
    y: Any,
    score: str = "brier",
    *,
    binning: str = DECOMPOSE_BINNING_DEFAULT,
    bins: int = BINS_DEFAULT,
    right: bool = RIGHT_DEFAULT,
    weights: Any = None,
    classes: Sequence | None = None,
    na_rm: bool = False,
) -> Decomposition:
    r"""How much of a Brier score or log loss is miscalibration: ``score = MCB - DSC + UNC``.

    The CORP decomposition (Dimitriadis, Gneiting & Jordan 2021): the
    predictions are recalibrated by the isotonic regression of the outcomes on
    them (the pool-adjacent-violators algorithm, tied predictions pooled), and
    the score splits into miscalibration (what recalibration would gain),
    discrimination (what the recalibrated predictions gain over the mean
    outcome) and uncertainty (the score of the mean outcome). With
    ``binning="equal-width"`` or ``"equal-mass"``, the classical decomposition
    of Murphy (1973) over the bins of :func:`calibr.ece` instead.

    Parameters
    ----------
    <calibr:p>
        Probabilities only: values outside [0, 1] are refused.
    <calibr:y>
    score : {"brier", "log_loss"}, default "brier"
        The scoring rule: the Brier score ``(p - y)^2`` (squared error) or the
        log loss ``-y log p - (1 - y) log(1 - p)`` (natural logarithm), averaged
        over the observations.
    binning : {"isotonic", "equal-width", "equal-mass"}, default "isotonic", keyword-only
        ``"isotonic"``: CORP, the reliability curve of the isotonic fit (the
        bins of ``calibration_table(binning="isotonic")``). ``"equal-width"``
        or ``"equal-mass"``: Murphy's decomposition over ``bins`` bins of that
        kind (``docs/definitions.md``, "Binning options").
    bins : int or sequence of float, default 10, keyword-only
        The bins of Murphy's decomposition, as for :func:`calibr.ece` (a number
        of bins, or the breaks themselves with ``binning="equal-width"``). Not
        with ``binning="isotonic"``, whose bins come from the fit.
    <calibr:right>
        Murphy's decomposition only (the isotonic fit has no closure).
    weights : array-like, optional, keyword-only
        Frequency weights, one nonnegative finite number per observation (not
        missing; a positive total): the weighted mean score, the weighted
        isotonic fit, the weighted bins. Whole-number weights give the
        decomposition of the sample with each row repeated, to rounding; 0
        drops the row. Real values are accepted (``binning="equal-mass"``
        needs whole numbers).
    <calibr:classes>
    <calibr:na_rm>

    Returns
    -------
    Decomposition
        ``score``, ``mcb``, ``dsc``, ``unc`` (floats for a vector ``p``; for a
        matrix ``p``, arrays with one value per class, the one-vs-rest
        decomposition of each column against the indicator of its class), and
        ``scoring``, ``binning``, ``n``, ``classes``.
        :meth:`Decomposition.to_frame` gives them as a DataFrame.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument: an unknown
        ``score`` or ``binning``, ``bins`` with ``binning="isotonic"``, ``p``
        outside [0, 1], and for ``score="log_loss"`` a probability of exactly 0
        given to what happened (``p = 0`` with ``y = 1``, ``p = 1`` with
        ``y = 0``; for a matrix, 0 in the observed class's column or 1 in
        another), where the log loss is infinite: calibr does not clip. The
        message names the first such value.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    Notes
    -----
    With :math:`S(x, y)` the score of forecast x for outcome y,
    :math:`\bar S(\cdot)` its (weighted) mean over the observations,
    :math:`\hat p` the isotonic fit of y on p and :math:`\bar y` the mean
    outcome (``docs/definitions.md``, "Score decompositions"):

    .. math::

        \mathrm{MCB} = \bar S(p) - \bar S(\hat p), \quad
        \mathrm{DSC} = \bar S(\bar y) - \bar S(\hat p), \quad
        \mathrm{UNC} = \bar S(\bar y),

    so ``score = mcb - dsc + unc`` to rounding, with ``mcb >= 0`` and
    ``dsc >= 0`` (the isotonic fit is the best nondecreasing recalibration
    for every proper score at once, and p and the constant are both
    nondecreasing in p). These are ``model_diagnostics.scoring.decompose``'s
    numbers with ``SquaredError()`` or ``LogLoss()`` (model-diagnostics 1.5.0;
    tests/test_decompose.py checks them to 1e-12), except where scikit-learn's
    isotonic fit under it pools predictions closer than 1e-15 as ties
    (``docs/definitions.md`` lists the differences).

    Murphy's decomposition over bins b with total weight :math:`n_b` of
    :math:`n`, mean forecast :math:`\bar p_b` and mean outcome :math:`\bar y_b`:
    ``mcb`` is the reliability :math:`\sum_b \frac{n_b}{n} d(\bar p_b, \bar y_b)`
    and ``dsc`` the resolution :math:`\sum_b \frac{n_b}{n} d(\bar y, \bar y_b)`
    (``d(f, q)``: the expected score of the forecast f for an outcome of
    probability q, minus that of q itself: ``(f - q)^2``, or the
    Kullback-Leibler divergence of Bernoulli(q) from Bernoulli(f) for the log
    loss), ``unc`` as above and ``score`` the score of p itself. Then
    ``score - (mcb - dsc + unc)`` is the within-bin part of the score
    (Stephenson, Coelho & Jolliffe 2008), 0 when the predictions are constant
    within each bin; use CORP for an exact split.

    A matrix ``p`` is decomposed column by column (one-vs-rest). For the Brier
    score the sums over the classes are the decomposition of the multiclass
    Brier score :math:`\sum_k (p_k - 1\{y = k\})^2`; for the log loss they
    decompose the sum of the one-vs-rest log losses, not the multiclass log
    loss.

    The isotonic fit needs all the rows at once, sorted: one ``numpy.argsort``
    per column, O(n log n), then an O(n) pass.

    References
    ----------
    Dimitriadis, T., Gneiting, T., & Jordan, A. I. (2021). Stable reliability
    diagrams for probabilistic classifiers. PNAS 118(8), e2016191118.
    Murphy, A. H. (1973). A new vector partition of the probability score.
    Journal of Applied Meteorology 12, 595-600.
    Stephenson, D. B., Coelho, C. A. S., & Jolliffe, I. T. (2008). Two extra
    components in the Brier score decomposition. Weather and Forecasting 23,
    752-757.

    Examples
    --------
    >>> import calibr
    >>> d = calibr.decompose([0.1, 0.5, 0.5, 0.9], [0, 0, 1, 1])
    >>> round(d.score, 12), round(d.mcb, 12), round(d.dsc, 12), round(d.unc, 12)
    (0.13, 0.005, 0.125, 0.25)
    >>> d = calibr.decompose([0.2, 0.4, 0.6, 0.8], [1, 0, 1, 0], "log_loss")
    >>> round(d.mcb - d.dsc + d.unc - d.score, 12), d.dsc
    (0.0, 0.0)
    >>> calibr.decompose([[0.7, 0.3], [0.4, 0.6]], [1, 2]).to_frame().round(3)
       class  score    mcb   dsc   unc
    0      1  0.125  0.125  0.25  0.25
    1      2  0.125  0.125  0.25  0.25
    """
    spec = _binning.BinSpec.from_options(bins, binning, right)
    conv = convert(p, y, classes=classes, na_rm=na_rm, weights=weights)
    prep = finish(conv)
    w = prep.weights
    if score == "log_loss":
        _refuse_infinite_log_loss(prep.p, prep.y, prep.binary, w, prep.classes,
                                  conv.p.shape[0] - prep.n)
    rows = None
    if w is not None and not np.all(w > 0):  # weight 0 drops the row
        rows = w > 0
        w = w[rows]
    if prep.binary:
        x = prep.p if rows is None else prep.p[rows]
        c = prep.y.astype(bool) if rows is None else prep.y[rows].astype(bool)
        values = _parts(x, c, w, score, spec)
        return Decomposition(*values, scoring=score, binning=binning, n=prep.n)
    pm = prep.p if rows is None else prep.p[rows]
    ym = prep.y if rows is None else prep.y[rows]
    per = np.array([_parts(np.ascontiguousarray(pm[:, k]), ym == k, w, score, spec)
                    for k in range(pm.shape[1])])
    fields = []
    for j in range(4):
        col = np.ascontiguousarray(per[:, j])
        col.flags.writeable = False
        fields.append(col)
    return Decomposition(*fields, scoring=score, binning=binning, n=prep.n,
                         classes=prep.classes)
