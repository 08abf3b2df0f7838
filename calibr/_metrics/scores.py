"""``brier()``, ``log_loss()`` and ``auroc()``: the proper scores and the
discrimination that are reported beside a calibration error (``docs/definitions.md``,
"Scores and discrimination").

Thin public functions over :mod:`calibr._kernels.scores`. Unweighted input whose
labels the kernels read directly (``Converted.direct()``) is read once: the
kernel checks every value in the pass that computes the sum (or fills the sort
keys) and, on a refused value, the input layer checks again to say what is wrong
(or drops incomplete rows under ``na_rm=True``). Weighted input is validated by
the input layer first. A metric that is undefined on the data (the AUROC of one
class) raises :class:`calibr.InputError` with ``code="undefined"``;
``summarise()`` turns that into NaN for the group and one warning
(``calibr.frame``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._docs import shared_docs
from .._input import (
    FLAG,
    ROW_SUM_TOL,
    InputError,
    Optional,
    Options,
    Prepared,
    convert,
    finish,
    fmt,
    lazy_backend,
    real_value,
    validate_params,
    warn,
)
from .._input.warning import CountedWarning
from .._kernels import scores as _ks
from .._kernels._jit import read_only

__all__ = ["AUROC_AVERAGES", "AUROC_TYPES", "UNDEFINED", "auroc", "brier", "log_loss",
           "log_loss_value", "loss_sums", "loss_value", "one_class_error"]

#: The multiclass forms of ``auroc``: one-vs-rest, or the top label's correctness.
AUROC_TYPES = ("ovr", "confidence")
#: How ``auroc(type="ovr")`` averages the classes: equally, or by prevalence.
AUROC_AVERAGES = ("macro", "weighted")
#: The ``code`` of the :class:`calibr.InputError` of a metric undefined on the data.
UNDEFINED = "undefined"


def _eps(value: Any, name: str) -> float:
    """A clipping bound strictly between 0 and 0.5."""
    real = real_value(value)
    if real is not None and 0.0 < real < 0.5:
        return real
    raise InputError(f"`{name}` must be None or a number strictly between 0 and 0.5; "
                     f"got {fmt(value)}.", param=name)


#: ``eps`` of ``log_loss``: None (no clipping) or a bound in (0, 0.5).
EPS = Optional(_eps)


def _validated(p: Any, y: Any, classes: Sequence | None, na_rm: bool, weights: Any,
               kernel) -> tuple[Any, int, Prepared | None]:
    """``(kernel's result, n, None)`` when the kernel read the raw input and accepted
    it, else ``(None, n, prepared input)``. ``kernel(p, labels, offset, binary)``
    returns ``(result, ok)``."""
    conv = convert(p, y, classes=classes, na_rm=na_rm, weights=weights)
    direct = conv.direct()
    if direct is not None:
        q, labels, offset = direct
        result, ok = kernel(read_only(q), read_only(labels), offset, conv.binary)
        if ok:
            return result, conv.p.shape[0], None
    prep = finish(conv)
    return None, prep.n, prep


def _codes(prep: Prepared) -> np.ndarray:
    return read_only(np.ascontiguousarray(prep.y))


@validate_params(na_rm=FLAG)
@shared_docs
def brier(
    p: Any,
    y: Any,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Brier score: the mean squared difference between the predicted
    probabilities and the outcomes (summed over the classes).

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    <calibr:classes>
    <calibr:na_rm>
    <calibr:weights>

    Returns
    -------
    float
        In [0, 1] for a vector ``p``, in [0, 2] for a matrix.

    Raises
    ------
    <calibr:raises>

    Notes
    -----
    With weights :math:`w_i` (1 without weights),

    .. math:: \mathrm{BS} = \frac{\sum_i w_i (p_i - y_i)^2}{\sum_i w_i}
              \quad\text{(vector } p\text{)}, \qquad
              \mathrm{BS} = \frac{\sum_i w_i \sum_k (p_{ik} - [y_i = k])^2}{\sum_i w_i}
              \quad\text{(matrix)},

    Brier's (1950) score, summed over the K classes for a matrix. A 2-column
    matrix therefore gives twice the score of its second column as a vector;
    scikit-learn's ``brier_score_loss`` halves a 2-column matrix
    (``scale_by_half="auto"``): ``docs/conventions.md`` gives the call that
    reproduces each of its numbers. It is the ``score`` of
    :func:`calibr.decompose` (which splits it into miscalibration,
    discrimination and uncertainty). O(n), one pass.

    <calibr:dask_scores>

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of
    probability. Monthly Weather Review 78(1), 1-3.

    Examples
    --------
    >>> import calibr
    >>> round(calibr.brier([0.1, 0.9, 0.8, 0.3], [0, 1, 1, 0]), 12)
    0.0375
    >>> round(calibr.brier([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.2, 0.2, 0.6]], [1, 2, 3]), 12)
    0.146666666667
    >>> round(calibr.brier([0.2, 0.6], [0, 1], weights=[3, 1]), 12)   # the rows 0.2 x 3, 0.6
    0.07
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None and hasattr(lazy, "brier"):  # docs/dask.md, docs/engines.md
        return lazy.brier(p, y, classes=classes, na_rm=na_rm, weights=weights)
    total, n, prep = _validated(p, y, classes, na_rm, weights, _brier_kernel)
    if prep is None:
        return float(total / n)
    return loss_value("brier", *loss_sums(prep, "brier"))


def _brier_kernel(q, labels, offset, binary):
    """The checked sum of the rows' Brier scores, and whether every value was valid."""
    if binary:
        return _ks.checked_binary_brier(q, labels)
    return _ks.checked_matrix_brier(q, labels, np.int64(offset), ROW_SUM_TOL)


def _onehot(prep: Prepared) -> np.ndarray:
    out = np.zeros(prep.p.shape)
    out[np.arange(prep.n), prep.y] = 1.0
    return out


def loss_sums(prep: Prepared, score: str, eps: float = 0.0) -> tuple[float, float, int]:
    """``(W, L, z)`` of validated input: the total weight (the rows without
    weights), the (weighted) sum of the rows' losses (``score``: ``"brier"`` or
    ``"log_loss"`` clipped at ``eps``, 0 for none) and the rows of positive weight
    whose log loss is inf (their loss is not in L). The one implementation of the
    two scores: :func:`brier`, :func:`log_loss`, the Dask backend's merged sums and
    ``calibr._metrics.recalibration`` read it; :func:`loss_value` gives the score."""
    w = prep.weights
    weight = float(prep.n) if w is None else float(np.sum(w))
    if score == "brier":
        if w is None:
            total, ok = _brier_kernel(read_only(prep.p), _codes(prep), 0, prep.binary)
            if ok:
                return weight, float(total), 0
            # forecasts outside [0, 1], which the kernel refuses: decompose's columns
        if prep.binary:
            losses = (prep.p - prep.y) ** 2
        else:
            losses = np.sum((prep.p - _onehot(prep)) ** 2, axis=1)
        return weight, float(np.sum(losses) if w is None else np.dot(w, losses)), 0
    got = _log_sum(read_only(prep.p), _codes(prep), 0, prep.binary, eps, ROW_SUM_TOL,
                   None if w is None else read_only(w))
    if got is None:  # pragma: no cover - validated input the kernel refuses: a bug
        raise RuntimeError("calibr: the log-loss kernel refused input calibr had validated.")
    return weight, -got[0], got[1]


def loss_value(score: str, weight: float, total: float, zeros: int) -> float:
    """The score of :func:`loss_sums`' sums, ``total / weight``; the log loss of
    rows with probability 0 for their outcome: inf, with the warning that counts
    them."""
    if score == "brier":
        return float(total / weight)
    return log_loss_value(-total, zeros, weight)


@validate_params(eps=EPS, na_rm=FLAG)
@shared_docs
def log_loss(
    p: Any,
    y: Any,
    eps: float | None = None,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Log loss (cross-entropy): the mean negative natural logarithm of the
    probability given to the observed outcome.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    eps : float, optional
        None (the default): no clipping; a probability of exactly 0 for the
        observed outcome gives ``inf``, with a warning that counts such rows. A
        number in (0, 0.5): every probability is clipped to ``[eps, 1 - eps]``
        first, as scikit-learn's ``log_loss`` does (with
        ``eps=numpy.finfo(float).eps``, ``docs/conventions.md``).
    <calibr:classes>
    <calibr:na_rm>
    weights : array-like, optional, keyword-only
        Frequency weights, one per row: a whole-number weight counts the row
        that many times (``docs/definitions.md``, "Frequency weights"); a row of
        weight 0 counts nowhere, not even as an impossible prediction.

    Returns
    -------
    float
        In [0, inf].

    Raises
    ------
    <calibr:raises>

    Warns
    -----
    UserWarning
        When some rows give their observed outcome probability 0 (the result is
        ``inf``); the message counts them.

    Notes
    -----
    With :math:`q_i` the probability of row i's observed outcome (``p`` where
    ``y`` is 1 and ``1 - p`` where it is 0 for a vector ``p``; the column of the
    row's class of a matrix) and weights :math:`w_i` (1 without weights),

    .. math:: \mathrm{LL} = -\frac{\sum_i w_i \log q_i}{\sum_i w_i}

    (Good 1952). O(n): in chunks of 65,536 rows, one compiled pass that checks the
    input and picks :math:`q_i`, numpy's vectorised logarithm, and a compiled sum
    whose order depends on n alone (so ``summarise`` gives a group the same bits).

    <calibr:dask_scores>

    References
    ----------
    Good, I. J. (1952). Rational decisions. Journal of the Royal Statistical
    Society B 14(1), 107-114.

    Examples
    --------
    >>> import calibr
    >>> round(calibr.log_loss([0.9, 0.1, 0.2, 0.65], [1, 0, 0, 1]), 5)
    0.21616
    >>> import math
    >>> round(calibr.log_loss([0.5, 0.5], [0, 1]), 12) == round(math.log(2), 12)
    True
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     calibr.log_loss([1.0, 0.5], [0, 1])
    inf
    >>> round(calibr.log_loss([1.0, 0.5], [0, 1], eps=1e-15), 4)
    17.6164
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None and hasattr(lazy, "log_loss"):  # docs/dask.md, docs/engines.md
        return lazy.log_loss(p, y, eps, classes=classes, na_rm=na_rm, weights=weights)
    clip = 0.0 if eps is None else float(eps)
    conv = convert(p, y, classes=classes, na_rm=na_rm, weights=weights)
    direct = conv.direct()
    if direct is not None:
        q, labels, offset = direct
        got = _log_sum(read_only(q), read_only(labels), offset, conv.binary, clip,
                       ROW_SUM_TOL, None)
        if got is not None:
            return log_loss_value(*got, float(conv.p.shape[0]))
    return loss_value("log_loss", *loss_sums(finish(conv), "log_loss", clip))


#: Rows picked, logged and summed together (``_log_sum``): their values stay in cache
#: between the three passes. A multiple of the kernels' ``BLOCK``, so that the sum
#: of the chunks is that of one pass (``calibr._kernels.scores.lane_sum``).
LOG_CHUNK = 1 << 16


def _log_sum(q: np.ndarray, labels: np.ndarray, offset: int, binary: bool, clip: float,
             tol: float, w: np.ndarray | None) -> tuple[float, int] | None:
    """``(sum of (w_i) log q_i, rows with q_i = 0 (of positive weight))`` chunk by
    chunk: the compiled kernel checks and picks each row's probability, numpy takes
    the logarithm (vectorised) and the sum; None if the kernel refuses a value."""
    n = q.shape[0]
    buf = np.empty(min(n, LOG_CHUNK))
    total = 0.0
    zeros = 0
    for lo in range(0, n, LOG_CHUNK):
        hi = min(n, lo + LOG_CHUNK)
        out = buf[:hi - lo]
        if binary:
            zero, ok = _ks.checked_binary_picked(q, labels, clip, lo, hi, out)
        else:
            zero, ok = _ks.checked_matrix_picked(q, labels, np.int64(offset), tol, clip,
                                                 lo, hi, out)
        if not ok:
            return None
        if zero:
            hit = out == 0.0
            if w is not None:
                hit &= w[lo:hi] > 0.0  # a row of weight 0 is no row
            zeros += int(np.count_nonzero(hit))
            out[out == 0.0] = 1.0  # counted: their log is not summed
        np.log(out, out=out)
        if w is None:
            total = _ks.lane_sum(out, total)  # the chunks add up as one pass
        else:
            total += float(np.dot(w[lo:hi], out))
    return total, zeros


def log_loss_value(total: float, zeros: int, weight: float) -> float:
    """The log loss from ``_log_sum``'s sums: inf, with the warning, for an
    impossible row."""
    if zeros:
        rows = "row gives its" if zeros == 1 else "rows give their"
        warn(CountedWarning(
            f"log_loss: {zeros:,} {rows} observed outcome probability 0, so the log "
            "loss is inf; pass eps= to clip the probabilities (docs/definitions.md, "
            "\"Log loss\").", count=zeros,
            what=("gives its observed outcome probability 0 (the log loss is inf)",
                  "give their observed outcome probability 0 (the log loss is inf)")))
        return math.inf
    return -total / weight


@validate_params(type=Options(*AUROC_TYPES), average=Options(*AUROC_AVERAGES), na_rm=FLAG)
@shared_docs
def auroc(
    p: Any,
    y: Any,
    type: str = "ovr",
    average: str = "macro",
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Area under the ROC curve: the probability that a random positive is
    scored above a random negative, ties counting one half.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    type : {"ovr", "confidence"}, default "ovr"
        Multiclass form, ignored for a vector ``p``. ``"ovr"``: each column
        against the indicator of its class (one-vs-rest), averaged by
        ``average``; ``"confidence"``: the top-label confidence against whether
        the top label (ties: the first maximal column) is correct, the AUROC
        that selective-prediction and LLM evaluations report.
    average : {"macro", "weighted"}, default "macro"
        How ``type="ovr"`` averages the classes' AUROCs: equally, or weighted by
        the classes' prevalence in ``y`` (weighted by ``weights``). Ignored
        otherwise.
    <calibr:classes>
    <calibr:na_rm>
    <calibr:weights>

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument; the message
        names the argument. The AUROC is undefined, and ``y`` refused (with the
        error's ``code`` ``"undefined"``), when the outcomes compared have one
        value only: ``y`` of one class (a vector ``p``), a class of a matrix
        with no row or every row (``"ovr"``), or top labels all right or all
        wrong (``"confidence"``). ``summarise()`` gives such a group NaN and
        warns once, naming the groups.
    <calibr:raises_type>

    Notes
    -----
    For scores :math:`x_i`, 0/1 outcomes :math:`c_i` and weights :math:`w_i`
    (1 without weights),

    .. math:: \mathrm{AUROC} = \frac{\sum_{i: c_i = 1} \sum_{j: c_j = 0} w_i w_j
              \left([x_i > x_j] + \tfrac12 [x_i = x_j]\right)}
              {\sum_{i: c_i = 1} w_i \sum_{j: c_j = 0} w_j},

    the Mann-Whitney statistic (Hanley & McNeil 1982), which equals the
    trapezoidal area under the ROC curve and the ``C`` of
    :func:`calibr.val_prob`. One-vs-rest multiclass averages over the classes
    as scikit-learn's ``roc_auc_score(multi_class="ovr")`` (Provost & Domingos
    2000 for the prevalence weights). O(n log n): unweighted, one ``numpy.sort``
    of n integer keys (the value and the outcome packed) and one pass; weighted,
    one ``numpy.argsort``.

    References
    ----------
    Hanley, J. A. & McNeil, B. J. (1982). The meaning and use of the area under a
    receiver operating characteristic (ROC) curve. Radiology 143(1), 29-36.
    Provost, F. & Domingos, P. (2000). Well-trained PETs: improving probability
    estimation trees. CeDER working paper IS-00-04, New York University.

    Examples
    --------
    >>> import calibr
    >>> calibr.auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    0.75
    >>> calibr.auroc([0.2, 0.5, 0.5, 0.9], [0, 0, 1, 1])   # the tie counts one half
    0.875
    >>> p = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    >>> round(calibr.auroc(p, [1, 3, 3, 2]), 12)   # scikit-learn's ovr macro
    0.888888888889
    >>> calibr.auroc(p, [1, 3, 3, 2], type="confidence")   # right: 0.7, 0.8; wrong: 0.5, 0.6
    1.0
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None and hasattr(lazy, "auroc"):  # docs/engines.md
        return lazy.auroc(p, y, type, average, classes=classes, na_rm=na_rm, weights=weights)

    def kernel(q, labels, offset, binary):
        if not binary:
            return None, False
        keys = np.empty(q.shape[0], dtype=np.uint64)
        ok = _ks.binary_keys(q, labels, keys)
        return keys, ok

    keys, _, prep = _validated(p, y, classes, na_rm, weights, kernel)
    if prep is None:
        keys.sort()
        value = _from_keys(keys)
        if value is None:
            raise one_class_error("`y` has one value only", "outcomes 0 and 1")
        return value
    w = prep.weights
    if prep.binary:
        value = _auc(prep.p, prep.y, w)
        if value is None:
            raise one_class_error("`y` has one value only (among the rows of positive weight)"
                             if w is not None else "`y` has one value only",
                             "outcomes 0 and 1")
        return value
    if type == "confidence":
        rho, hit = prep.scalar_view()
        value = _auc(rho, hit, w)
        if value is None:
            raise one_class_error("every top label is right, or every one wrong",
                             "right and wrong top labels")
        return value
    per = np.empty(prep.k)
    for k in range(prep.k):
        value = _auc(np.ascontiguousarray(prep.p[:, k]), prep.y == k, w)
        if value is None:
            raise one_class_error(f"class {fmt(prep.classes[k])} has no row or every row",
                             "each class and its rest")
        per[k] = value
    if average == "macro":
        return float(np.mean(per))
    prevalence = np.bincount(prep.y, weights=w, minlength=prep.k)
    return float(np.dot(prevalence, per) / np.sum(prevalence))


def one_class_error(what: str, needs: str) -> InputError:
    """The error of an AUROC undefined on the data (``code="undefined"``): the pandas
    path's and the lazy engines' (``calibr/_engines/_pushdown.py``)."""
    return InputError(f"{what}, so the AUROC is undefined: it needs {needs} "
                      "(docs/definitions.md, \"AUROC\").", param="y", code=UNDEFINED)


def _from_keys(keys: np.ndarray) -> float | None:
    twice, npos, nneg = _ks.auc_sorted_keys(read_only(keys))
    if npos == 0 or nneg == 0:
        return None
    return float(twice / (2.0 * float(npos) * float(nneg)))


def _auc(x: np.ndarray, c: np.ndarray, w: np.ndarray | None) -> float | None:
    """The AUROC of validated scores ``x`` in [0, 1] and 0/1 outcomes ``c``; None
    when one outcome has no (positive) weight."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    c = np.ascontiguousarray(c)
    if w is None:
        keys = np.empty(x.shape[0], dtype=np.uint64)
        _ks.binary_keys(read_only(x), read_only(c), keys)
        keys.sort()
        return _from_keys(keys)
    order = np.argsort(x, kind="stable")
    num, wpos, wneg = _ks.auc_weighted_sorted(
        read_only(np.ascontiguousarray(x[order])),
        read_only(np.ascontiguousarray(c[order])),
        read_only(np.ascontiguousarray(w[order])))
    if wpos == 0.0 or wneg == 0.0:
        return None
    return float(num / (wpos * wneg))
