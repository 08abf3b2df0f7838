"""``skce()``, ``mmce()`` and ``median_bandwidth()``: the kernel calibration errors
(``docs/definitions.md``, "Kernel metrics").

Thin public functions: argument checks (``calibr._input.params``), the shared input
layer, dispatch to the exact fast kernels (:mod:`calibr._kernels.skce` maps
them), a Python ``float`` back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._docs import shared_docs
from .._input import (
    BANDWIDTH,
    FLAG,
    InputError,
    Options,
    Prepared,
    arg,
    check_kernel_weights,
    convert_p,
    fmt,
    lazy_backend,
    prepare,
    validate_params,
)
from .._kernels.canonical import canonical_median, canonical_pair_sum, canonical_ul
from .._kernels.scalar_median import median_of_sorted_rows, scalar_median
from .._kernels.scalar_sums import scalar_pair_sum, scalar_ul
from .._kernels.skce import estimate_from_sums
from .._kernels.top_label import top_label
from .._kernels.weighted_metrics import (
    power_of_two_scale,
    weighted_canonical_sums,
    weighted_estimate,
    weighted_scalar_sums,
)

__all__ = ["median_bandwidth", "mmce", "skce"]

_ESTIMATORS = ("uq", "ul", "biased")
_TYPES = ("canonical", "confidence", "classwise")


def _median_error(prep: Prepared, column: int | None) -> InputError:
    if column is None:
        return InputError(
            '`bandwidth = "median"` needs at least two distinct predictions; '
            "all pairwise distances are 0.",
            param="bandwidth"
        )
    which = (
        f"of class {fmt(prep.classes[column])}"
        if prep.classes is not None
        else f"at position {column} (0-based)"
    )
    return InputError(
        '`bandwidth = "median"` with `type = "classwise"` needs at least two distinct '
        f"predictions in every column of {arg('p')}; the column {which} has all its values "

        f"equal ({fmt(prep.p[0, column])}).",
        param="bandwidth"
    )


#: A biased SKCE (a positive semi-definite quadratic form, >= 0 in exact
#: arithmetic) in [-ROUNDING_FLOOR, 0) is rounding at the level of zero, for a
#: sample calibrated up to rounding: skce() and mmce() return 0.0 for it. Its
#: terms are bounded by 1 and summed in float64, so rounding stays far below
#: this; a value below it would be a bug in the kernels, not rounding
#: (``docs/definitions.md``, "Rounding at zero").
ROUNDING_FLOOR = 1e-12


def _clamp_biased(value: float) -> float:
    """The biased SKCE with rounding-level negatives (see ROUNDING_FLOOR) as 0.0."""
    if value < -ROUNDING_FLOOR:  # pragma: no cover - would be a bug in the kernels
        raise RuntimeError(f"calibr bug: the biased SKCE came out negative ({value!r}).")
    return value if value > 0.0 else 0.0


def as_hits(y: np.ndarray) -> np.ndarray:
    """Exact 0/1 labels as uint8 (one compiled kernel for every label dtype)."""
    if y.dtype == np.uint8:
        return y
    if y.dtype == np.bool_:
        return y.view(np.uint8)
    return (y != 0).view(np.uint8)


def _estimate(
    prep: Prepared,
    x: np.ndarray,
    c: np.ndarray,
    estimator: str,
    h: float | str,
    canonical: bool = False,
    column: int | None = None,
) -> float:
    """SKCE of the Laplacian kernel on x (scalars, or the rows of a matrix when
    ``canonical``) with residuals onehot(c) - x; ``column``: the column of ``p``
    that x is, for the message when its median bandwidth is undefined."""
    if canonical:
        ul, pair_sums = canonical_ul, canonical_pair_sum
    else:
        ul, pair_sums = scalar_ul, scalar_pair_sum
        x = np.ascontiguousarray(x, dtype=np.float64)
        c = np.ascontiguousarray(c)
    if estimator == "ul":
        value = ul(x, c, h)
    else:
        pair_sum, diag, _ = pair_sums(x, c, h)
        value = estimate_from_sums(estimator, x.shape[0], pair_sum, diag)
    if h == "median" and math.isnan(value):  # the kernels' NaN for "all distances 0"
        raise _median_error(prep, column)
    return _clamp_biased(value) if estimator == "biased" else value


def _dispatch(prep: Prepared, estimator: str, h: float | str, type: str) -> float:
    if prep.binary:
        return _estimate(prep, prep.p, as_hits(prep.y), estimator, h)
    if type == "confidence":
        rho, hit = top_label(prep.p, prep.y)
        return _estimate(prep, rho, hit, estimator, h)
    if type == "classwise":
        columns = np.array(prep.p.T, dtype=np.float64, order="C")  # each column contiguous
        hs = _classwise_medians(prep, columns) if h == "median" else [h] * prep.k
        per_class = [
            _estimate(prep, columns[k], (prep.y == k).view(np.uint8), estimator, hs[k], column=k)
            for k in range(prep.k)
        ]
        return float(np.mean(per_class))
    return _estimate(prep, prep.p, prep.y, estimator, h, canonical=True)


def _weighted(prep: Prepared, estimator: str, h: float, type: str) -> float:
    """The weighted estimate (``docs/definitions.md``, "Frequency weights") of
    validated input whose weights passed the input layer's rules for ``estimator``."""
    p, y, w = prep.p, prep.y, prep.weights
    if not w.all():  # rows of weight 0 are dropped: bit for bit the value without them
        keep = w > 0
        p, y, w = p[keep], y[keep], w[keep]
    if estimator == "biased":
        w = power_of_two_scale(w)  # exact; the estimate keeps every bit
    total = float(np.sum(w))

    def estimate(sums: tuple[float, float, float]) -> float:
        value = weighted_estimate(estimator, total, *sums)
        return _clamp_biased(value) if estimator == "biased" else value

    if prep.binary:
        return estimate(weighted_scalar_sums(p, as_hits(y), w, h))
    if type == "confidence":
        rho, hit = top_label(p, y)
        return estimate(weighted_scalar_sums(rho, hit, w, h))
    if type == "classwise":
        columns = np.array(p.T, dtype=np.float64, order="C")
        return float(np.mean([
            estimate(weighted_scalar_sums(columns[k], (y == k).view(np.uint8), w, h))
            for k in range(prep.k)
        ]))
    return estimate(weighted_canonical_sums(p, y, w, h))


def _prepare_weighted(p, y, estimator, bandwidth, classes, na_rm, weights) -> Prepared:
    """``prepare()`` with the weights' rules of ``estimator`` and ``bandwidth``."""
    check_kernel_weights(estimator, bandwidth)
    counts_for = 'estimator = "uq"' if estimator == "uq" else None
    return prepare(p, y, classes=classes, na_rm=na_rm, weights=weights, counts_for=counts_for)


def _check_n(estimator: str, n: int) -> None:
    if estimator != "biased" and n < 2:
        raise InputError(f'`estimator = "{estimator}"` needs at least 2 observations; got {n}.',
                         param="estimator")


def scalar_form(prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """The scalars of the binary (or top-label) SKCE of validated input: ``x``, the
    binary ``p`` (or each row's top-label confidence), and ``c``, its hit as uint8."""
    x, c = prep.scalar_view()
    return (x, as_hits(c)) if prep.binary else (x, c)


def skce_from_sums(estimator: str, n: int, pair_sum: float, diag_sum: float) -> float:
    """The ``"uq"`` or ``"biased"`` SKCE of ``n`` rows from the kernels' pair sums
    (``calibr._kernels.skce.estimate_from_sums``), with the checks and the rounding
    floor of :func:`skce`: for a backend that adds the sums of the parts of the data
    (``calibr._engines.dask``)."""
    _check_n(estimator, n)
    value = estimate_from_sums(estimator, n, pair_sum, diag_sum)
    return _clamp_biased(value) if estimator == "biased" else value


@validate_params(
    estimator=Options(*_ESTIMATORS), type=Options(*_TYPES), bandwidth=BANDWIDTH, na_rm=FLAG
)
@shared_docs
def skce(
    p: Any,
    y: Any,
    estimator: str = "uq",
    bandwidth: float | str = 0.2,
    type: str = "canonical",
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Squared kernel calibration error (SKCE) of Widmann et al. (2019).

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    estimator : {"uq", "ul", "biased"}, default "uq"
        ``"uq"``: the unbiased U-statistic; ``"ul"``: the unbiased linear
        estimator over the disjoint pairs (1, 2), (3, 4), ...; ``"biased"``: the
        V-statistic, equal to ``mmce(p, y, bandwidth) ** 2`` in the binary and
        confidence forms.
    <calibr:bandwidth>
        :func:`calibr.median_bandwidth` returns the median one.
    type : {"canonical", "confidence", "classwise"}, default "canonical"
        Multiclass form; ignored for a vector ``p``.
    <calibr:classes>
    <calibr:na_rm>
    weights : array-like, optional, keyword-only
        Frequency weights, one nonnegative finite number per observation (not
        missing; a positive total). A whole-number weight w counts the
        observation w times: the estimate equals that of the sample with each
        row repeated, to rounding (for ``"uq"``, a row repeated w times adds
        C(w, 2) pairs of itself); 0 drops the row. ``"uq"`` needs whole numbers
        with a total of at least 2; ``"biased"`` also takes real values (the
        weighted V-statistic). Not with ``"ul"`` (its pairs depend on the row
        order) nor ``bandwidth="median"``. Rows that ``na_rm=True`` drops take
        their weights with them. See ``docs/definitions.md``, "Frequency weights".

    Returns
    -------
    float
        The estimate. ``"biased"`` is nonnegative: in exact arithmetic it is a
        positive semi-definite quadratic form, and a sample calibrated up to
        rounding can make the float64 sum a tiny negative number (around
        -1e-18); calibr returns 0.0 for any value in [-1e-12, 0), as
        :func:`calibr.mmce` does, where R returns the negative number. The
        unbiased estimators can be negative in finite samples.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument, fewer than 2
        observations for ``"uq"`` or ``"ul"``, or ``bandwidth="median"`` when all
        pairwise distances are 0 (all predictions equal); for ``weights``: a
        length other than that of ``p``, missing, infinite or negative values, a
        total of 0, non-whole values or a total below 2 for ``"uq"``, and
        ``estimator="ul"`` or ``bandwidth="median"`` with weights.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    See Also
    --------
    mmce : the square root of the biased estimator (binary or confidence form).
    median_bandwidth : the bandwidth that ``bandwidth="median"`` uses.

    Notes
    -----
    Mirrors R's ``skce(p, y, estimator = c("uq", "ul", "biased"),
    bandwidth = 0.2, type = c("canonical", "confidence", "classwise"))``; the
    definitions are in ``docs/definitions.md``, "Kernel metrics".

    With residuals :math:`e_i` and the Laplacian kernel, the kernel terms are
    :math:`h_{ij} = \exp(-d(x_i, x_j)/h) \langle e_i, e_j \rangle`, and

    .. math::

        \widehat{\mathrm{SKCE}}_b = \frac{1}{n^2} \sum_{i,j} h_{ij}, \quad
        \widehat{\mathrm{SKCE}}_{uq} = \binom{n}{2}^{-1} \sum_{i<j} h_{ij}, \quad
        \widehat{\mathrm{SKCE}}_{ul} = \lfloor n/2 \rfloor^{-1}
            \sum_{i=1}^{\lfloor n/2 \rfloor} h_{2i-1, 2i}.

    Binary: :math:`x_i = p_i`, :math:`e_i = y_i - p_i`, :math:`d = |x_i - x_j|`.
    Confidence: :math:`x_i = \max_k p_{ik}`, :math:`e_i = c_i - x_i` with
    :math:`c_i` = 1 if the first maximal column is the label. Classwise: the mean
    over the columns of the binary SKCE of column k against 1{y = k}.
    Canonical: :math:`x_i = p_i`, :math:`e_i = \mathrm{onehot}(y_i) - p_i`,
    :math:`d` the Euclidean distance.

    The values are exact (no approximation), computed without any n x n matrix:
    the scalar forms in O(n log n) by a running sum along the sorted confidences,
    the median bandwidth of scalars by an exact selection of the middle pairwise
    difference, the canonical form in O(n^2 K) blocked, parallel tiles with
    O(n) extra memory.

    With weights ``w`` (``N = sum_i w_i``), ``"biased"`` is
    :math:`N^{-2} \sum_{i,j} w_i w_j h_{ij}` and ``"uq"`` is
    :math:`\binom{N}{2}^{-1} (\sum_{i<j} w_i w_j h_{ij} + \sum_i \binom{w_i}{2}
    h_{ii})`, the U-statistic of the repeated sample. R's ``skce()`` has no
    weights.

    <calibr:dask_kernel>

    References
    ----------
    Widmann, D., Lindsten, F., & Zachariah, D. (2019). Calibration tests in
    multi-class classification: A unifying framework. NeurIPS 32.
    arXiv:1910.11385.

    Examples
    --------
    >>> import numpy as np
    >>> import calibr
    >>> p = np.array([0.1, 0.4, 0.35, 0.8])
    >>> y = np.array([0, 0, 1, 1])
    >>> round(calibr.skce(p, y), 10)
    -0.03498578
    >>> round(calibr.skce(p, y, estimator="ul", bandwidth=0.5), 10)
    0.0374032606
    >>> bool(np.isclose(calibr.skce(p, y, "biased"), calibr.mmce(p, y) ** 2))
    True

    A probability matrix, its labels coded 1..K as in R:

    >>> prob = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    >>> round(calibr.skce(prob, [1, 3, 3], bandwidth="median"), 10)
    0.0194979332
    >>> round(calibr.skce(prob, [1, 3, 3], type="classwise"), 10)
    0.0035620762
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None:  # a lazy result: docs/dask.md
        return lazy.skce(p, y, estimator, bandwidth, type, classes, na_rm, weights)
    if weights is not None:
        prep = _prepare_weighted(p, y, estimator, bandwidth, classes, na_rm, weights)
        return float(_weighted(prep, estimator, bandwidth, type))
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    _check_n(estimator, prep.n)
    return float(_dispatch(prep, estimator, bandwidth, type))


@validate_params(bandwidth=BANDWIDTH, na_rm=FLAG)
@shared_docs
def mmce(
    p: Any,
    y: Any,
    bandwidth: float | str = 0.2,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Maximum mean calibration error (MMCE) of Kumar et al. (2018).

    Parameters
    ----------
    <calibr:p>
        A matrix ``p`` is reduced to its top-label confidence and correctness
        (the confidence form).
    <calibr:y>
    bandwidth : float or "median", default 0.2
        Bandwidth of the Laplacian kernel on the confidences: a positive finite
        number, or ``"median"`` (the median of their positive pairwise
        distances, ``median_bandwidth(p, y, type="confidence")``).
    <calibr:classes>
    <calibr:na_rm>
    weights : array-like, optional, keyword-only
        Frequency weights, one nonnegative finite number per observation (not
        missing; a positive total): the square root of the weighted biased SKCE
        of :func:`calibr.skce`. Whole-number weights give the value of the
        sample with each row repeated w times, to rounding; real values are
        accepted. Not with ``bandwidth="median"``. See ``docs/definitions.md``,
        "Frequency weights".

    Returns
    -------
    float
        The square root of the biased SKCE, nonnegative.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument (``weights``
        as for :func:`calibr.skce` with ``"biased"``), or ``bandwidth="median"``
        when all predictions are equal or with weights.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    See Also
    --------
    skce : the squared kernel calibration error.
    median_bandwidth : the bandwidth that ``bandwidth="median"`` uses.

    Notes
    -----
    Mirrors R's ``mmce(p, y, bandwidth = 0.2)``:

    .. math::

        \mathrm{MMCE} = \Big(\frac{1}{n^2} \sum_{i,j} e_i e_j
            \exp(-|x_i - x_j| / h)\Big)^{1/2},

    with :math:`x_i = p_i`, :math:`e_i = y_i - p_i` (binary) or the top-label
    confidence and correctness (matrix). So ``mmce(p, y, h) ** 2`` equals
    ``skce(p, y, "biased", h)`` (binary) and ``skce(P, y, "biased", h,
    type="confidence")`` (matrix). Exact, O(n log n), no n x n matrix.

    The biased SKCE is a positive semi-definite quadratic form, so it is >= 0
    in exact arithmetic; for a sample that is calibrated up to rounding it can
    come out as a tiny negative number (around -1e-18). calibr then returns
    0.0, where R's ``sqrt()`` returns NaN with a warning.

    <calibr:dask_kernel>

    References
    ----------
    Kumar, A., Sarawagi, S., & Jain, U. (2018). Trainable calibration measures
    for neural networks from kernel mean embeddings. ICML.

    Examples
    --------
    >>> import calibr
    >>> round(calibr.mmce([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]), 10)
    0.1152905676
    >>> prob = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]
    >>> round(calibr.mmce(prob, [1, 3, 3], bandwidth="median"), 10)
    0.1819016263
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None:  # a lazy result: docs/dask.md
        return lazy.mmce(p, y, bandwidth, classes, na_rm, weights)
    if weights is not None:
        prep = _prepare_weighted(p, y, "biased", bandwidth, classes, na_rm, weights)
        return math.sqrt(_weighted(prep, "biased", bandwidth, "confidence"))
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    x, c = scalar_form(prep)
    value = _estimate(prep, x, c, "biased", bandwidth)  # rounding-level negatives are 0.0
    return math.sqrt(value)


def _first_label(classes: Any) -> Any:
    """The first of ``classes`` (None if there is none to take: then ``prepare()``
    refuses ``classes`` with its own message)."""
    try:
        return next(iter(classes), None)
    except TypeError:
        return None


def _prepare_without_labels(p: Any, classes: Sequence | None, na_rm: bool) -> Prepared:
    """``prepare()`` for ``p`` alone: the same checks of ``p``, ``classes`` and
    ``na_rm``, with stand-in labels that are always valid (one class for every row)."""
    arr, columns = convert_p(p)  # the input layer's conversion, for the shape only
    n = arr.shape[0]
    if classes is not None:
        first = _first_label(classes)
        labels = np.zeros(n, np.int64) if first is None else [first] * n
    elif arr.ndim == 1:
        labels = np.zeros(n, np.int64)
    elif columns is not None:
        labels = [columns[0]] * n  # matched by name, as every DataFrame label is
    else:
        labels = np.ones(n, np.int64)  # R's class code 1
    return prepare(p, labels, classes=classes, na_rm=na_rm)


@validate_params(type=Options(*_TYPES), na_rm=FLAG)
@shared_docs
def median_bandwidth(
    p: Any,
    y: Any = None,
    type: str = "canonical",
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
) -> float | np.ndarray:
    r"""The median bandwidth of the kernel metrics: the bandwidth that
    ``skce(p, y, bandwidth="median", type=type)`` uses.

    R's ``median()`` of the positive pairwise distances of what the kernel sees
    (``docs/definitions.md``, "Kernel metrics"), exact, so that it can be
    reported, or reused as a fixed ``bandwidth`` for other samples.

    Parameters
    ----------
    <calibr:p>
    y : array-like, pandas Series or Categorical, optional
        The outcomes, as for :func:`calibr.skce`. The median does not depend on
        them, but when given they are checked as :func:`calibr.skce` checks them,
        so that ``na_rm=True`` drops the same rows (those with a missing ``y``
        too). Without ``y``, only ``p`` (and ``classes``) are checked, and
        ``na_rm=True`` drops the rows with a missing value in ``p``.
    type : {"canonical", "confidence", "classwise"}, default "canonical"
        Multiclass form, as for :func:`calibr.skce`; ignored for a vector ``p``.
        ``"confidence"`` is also the bandwidth of ``mmce(p, y, "median")`` for a
        matrix ``p``.
    <calibr:classes>
    <calibr:na_rm>

    Returns
    -------
    float or numpy.ndarray
        A float for a vector ``p`` and for the canonical and confidence forms;
        for ``type="classwise"`` with a matrix ``p``, a float64 array with the
        median of each column, in column order.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument, or when all
        pairwise distances are 0 (all predictions equal; for
        ``type="classwise"``, a column whose values are all equal), with the
        message of :func:`calibr.skce`.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    See Also
    --------
    skce, mmce : the metrics that ``bandwidth="median"`` resolves with it.

    Notes
    -----
    The distances are ``|x_i - x_j|`` of the scalars (a vector ``p``, the
    top-label confidences, or one column for ``"classwise"``) and the Euclidean
    distances between the rows of ``p`` (canonical), over the pairs ``i < j``.
    R computes it as ``median(d[d > 0])`` of ``abs(outer(x, x, "-"))`` or
    ``dist(p)``; calibr selects the middle value(s) exactly without forming
    the n^2 distances.

    Examples
    --------
    >>> import calibr
    >>> p, y = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    >>> h = calibr.median_bandwidth(p, y)
    >>> round(h, 10)
    0.35
    >>> calibr.skce(p, y, bandwidth=h) == calibr.skce(p, y, bandwidth="median")
    True

    A probability matrix (labels are not needed): the canonical form, and one
    median per column for the classwise form.

    >>> prob = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]
    >>> round(calibr.median_bandwidth(prob), 10)
    0.6480740698
    >>> calibr.median_bandwidth(prob, type="classwise").round(10)
    array([0.5, 0.3, 0.5])
    """
    if y is None:
        prep = _prepare_without_labels(p, classes, na_rm)
    else:
        prep = prepare(p, y, classes=classes, na_rm=na_rm)
    if prep.binary:
        return _scalar_median_or_raise(prep, prep.p)
    if type == "confidence":
        return _scalar_median_or_raise(prep, top_label(prep.p, prep.y)[0])
    if type == "classwise":
        return _classwise_medians(prep, np.array(prep.p.T, dtype=np.float64, order="C"))
    h = canonical_median(prep.p)
    if math.isnan(h):
        raise _median_error(prep, None)
    return h


def _scalar_median_or_raise(prep: Prepared, x: np.ndarray) -> float:
    h = scalar_median(np.ascontiguousarray(x, dtype=np.float64))
    if math.isnan(h):
        raise _median_error(prep, None)
    return h


def _classwise_medians(prep: Prepared, columns: np.ndarray) -> np.ndarray:
    """The median bandwidth of every column of p (``columns``: p transposed, C
    order), in one compiled loop over the sorted columns (no Python-level call
    per column); the error names the first column whose values are all equal."""
    h = median_of_sorted_rows(np.sort(columns, axis=1))
    constant = np.flatnonzero(np.isnan(h))
    if constant.size:
        raise _median_error(prep, int(constant[0]))
    return h
