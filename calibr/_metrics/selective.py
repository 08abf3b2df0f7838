"""Selective prediction: the risk-coverage curve of the top-label confidence and
its areas (``docs/definitions.md``, "Selective prediction: `risk_coverage()`,
`aurc()`, `e_aurc()`, `augrc()`, `selective_accuracy()`").

A prediction is accepted when its confidence is at least a threshold; every
distinct confidence is one threshold (ties are one point of the curve, so a
number depends on the rows and not on their order). The confidence of a row is
its top-label confidence (binary: ``max(p, 1 - p)``) and it is correct when its
top label (binary: 1 when ``p > 0.5``; a matrix: the first column holding the
row's maximum) is ``y``. The risk is the 0/1 loss, one minus the accuracy.

One sort of the confidences (unweighted: one ``numpy.sort`` of integer keys that
pack each confidence and whether the row is an error, those of ``ecce``,
``calibr._kernels.cumulative.fill_keys``; weighted: one stable ``argsort``), then
O(n) for the running counts. Unweighted, the areas are one compiled pass over the
sorted keys (``calibr._kernels.selective``), with no curve built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from .._docs import shared_docs
from .._input import (
    FLAG,
    InputError,
    InputTypeError,
    Options,
    Prepared,
    arg,
    prepare,
    validate_params,
)
from .._input.frames import frame_verb
from .._input.groups import groups_of, resolve_columns, split, weights_column
from .._input.messages import fmt
from .._input.params import real_value
from .._kernels import cumulative as _ck
from .._kernels import selective as _ksel
from .._kernels._jit import read_only

__all__ = ["RULES", "RISK_COVERAGE_COLUMNS", "Curve", "aurc", "augrc", "curve_of",
           "e_aurc", "risk_coverage", "selective_accuracy", "top_label_hits"]

#: The integration rules of ``aurc`` and ``augrc``: the trapezoid over the curve's
#: points from coverage 0 (the default) or the right-endpoint step sum.
RULES = ("trapezoid", "step")

#: The columns of ``risk_coverage()``, after the group keys.
RISK_COVERAGE_COLUMNS = ("threshold", "n", "coverage", "risk", "generalized_risk")

#: The coverage of ``selective_accuracy`` when none is given.
COVERAGE_DEFAULT = 0.8


def _coverage(value: Any, name: str) -> float:
    """A real number in (0, 1]: the share of the rows accepted."""
    real = None if isinstance(value, (bool, np.bool_)) else real_value(value)
    if real is not None and math.isfinite(real) and 0.0 < real <= 1.0:
        return real
    raise InputError(f"`{name}` must be a number in (0, 1]; got {fmt(value)}.", param=name)


def top_label_hits(prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """``(confidence, correct)`` of validated input: binary ``max(p, 1 - p)`` and
    ``(p > 0.5) == y``; a matrix: ``calibr._kernels.top_label``."""
    if prep.binary:
        p = prep.p
        return np.maximum(p, 1.0 - p), (p > 0.5) == (prep.y != 0)
    conf, hit = prep.scalar_view()
    return conf, hit.astype(bool)


@dataclass(frozen=True)
class Curve:
    """The risk-coverage curve: one point per distinct confidence, the highest
    first. ``n`` and ``errors`` are the (weighted) counts of the rows, and of the
    errors, whose confidence is at least ``threshold``; ``total`` is their total."""

    threshold: np.ndarray
    n: np.ndarray
    errors: np.ndarray
    total: float

    @property
    def coverage(self) -> np.ndarray:
        return self.n / self.total

    @property
    def risk(self) -> np.ndarray:
        return self.errors / self.n

    @property
    def generalized_risk(self) -> np.ndarray:
        return self.errors / self.total

    @property
    def error_rate(self) -> float:
        return float(self.errors[-1] / self.total)


def curve_of(conf: np.ndarray, correct: np.ndarray, w: np.ndarray | None = None) -> Curve:
    """The :class:`Curve` of confidences ``conf``, correctness ``correct`` and
    optional frequency weights ``w`` (rows of weight 0 are kept: they add no mass)."""
    if w is None:  # one integer sort of the keys (confidence, error) of _kernels.cumulative
        x = np.ascontiguousarray(conf, dtype=np.float64)
        miss = np.ascontiguousarray(~correct).view(np.uint8)
        keys = np.empty(x.shape[0], dtype=np.uint64)
        _ck.fill_keys(read_only(x), read_only(x.view(np.uint64)), read_only(miss), keys)
        keys.sort()
        bits = keys >> np.uint64(1)
        starts = np.flatnonzero(np.concatenate(([True], bits[1:] != bits[:-1])))[::-1]
        before = np.concatenate(([0], np.cumsum(keys & np.uint64(1))))  # errors below
        total = x.shape[0]
        return Curve(bits[starts].view(np.float64), (total - starts).astype(np.float64),
                     (before[-1] - before[starts]).astype(np.float64), float(total))
    order = np.argsort(-conf, kind="stable")
    cs = conf[order]
    ws = w[order]
    cw = np.cumsum(ws)
    ce = np.cumsum(np.where(correct[order], 0.0, ws))
    ends = np.append(np.flatnonzero(np.diff(cs) != 0.0), cs.shape[0] - 1)
    n = cw[ends]
    keep = np.append(True, np.diff(n) > 0.0) & (n > 0.0)  # a block of weight 0: no point
    return Curve(cs[ends][keep], n[keep], ce[ends][keep], float(cw[-1]))


def _prepared_curve(p: Any, y: Any, classes: Any, na_rm: bool, weights: Any) -> Curve:
    prep = prepare(p, y, classes=classes, na_rm=na_rm, weights=weights)
    conf, hit = top_label_hits(prep)
    return curve_of(conf, hit, prep.weights)


def _areas(p: Any, y: Any, classes: Any, na_rm: bool, weights: Any) -> tuple[float, ...]:
    """The areas of ``calibr._kernels.selective.AREAS`` and the error rate: unweighted,
    one sort of the keys and one compiled pass (no curve); weighted, from the curve."""
    prep = prepare(p, y, classes=classes, na_rm=na_rm, weights=weights)
    if prep.weights is not None:
        conf, hit = top_label_hits(prep)
        c = curve_of(conf, hit, prep.weights)
        return (curve_aurc(c), curve_aurc(c, "step"), curve_augrc(c),
                curve_augrc(c, "step"), c.error_rate)
    keys = np.empty(prep.n, dtype=np.uint64)
    if prep.binary:
        _ksel.binary_miss_keys(read_only(np.ascontiguousarray(prep.p)),
                               read_only(np.ascontiguousarray(prep.y)), keys)
    else:
        conf, hit = prep.scalar_view()
        x = np.ascontiguousarray(conf, dtype=np.float64)
        miss = np.ascontiguousarray(hit == 0).view(np.uint8)
        _ck.fill_keys(read_only(x), read_only(x.view(np.uint64)), read_only(miss), keys)
    keys.sort()
    *areas, errors = _ksel.sorted_areas(read_only(keys))
    return (*areas, errors / prep.n)


def _area_of(measure: str, rule: str, p: Any, y: Any, classes: Any, na_rm: bool,
             weights: Any) -> float:
    return float(_areas(p, y, classes, na_rm, weights)[_ksel.AREAS.index((measure, rule))])


def _area(kappa: np.ndarray, values: np.ndarray, first: float, rule: str) -> float:
    """The area under the points ``(kappa, values)`` (coverage increasing): the
    trapezoid from ``(0, first)``, or the step sum with each point's value on the
    coverage it adds."""
    dk = np.diff(kappa, prepend=0.0)
    if rule == "step":
        return float(np.dot(dk, values))
    prev = np.concatenate(([first], values[:-1]))
    return float(np.dot(dk, values + prev) / 2.0)


def curve_aurc(c: Curve, rule: str = "trapezoid") -> float:
    """The AURC of a :class:`Curve` (``docs/definitions.md``)."""
    r = c.risk
    return _area(c.coverage, r, float(r[0]), rule)


def curve_augrc(c: Curve, rule: str = "trapezoid") -> float:
    """The AUGRC of a :class:`Curve` (``docs/definitions.md``)."""
    return _area(c.coverage, c.generalized_risk, 0.0, rule)


def curve_accuracy(c: Curve, coverage: float) -> float:
    """The accuracy of the most confident share ``coverage`` of the mass, a tied
    block straddling it counted in proportion (``docs/definitions.md``)."""
    target = coverage * c.total
    j = int(np.searchsorted(c.n, target * (1.0 - 1e-12), side="left"))
    j = min(j, c.n.shape[0] - 1)
    n0 = c.n[j - 1] if j > 0 else 0.0
    e0 = c.errors[j - 1] if j > 0 else 0.0
    share = (target - n0) / (c.n[j] - n0)
    errors = e0 + share * (c.errors[j] - e0)
    return float(1.0 - errors / target)


_SHARED = dict(rule=Options(*RULES), na_rm=FLAG)


@validate_params(**_SHARED)
@shared_docs
def aurc(
    p: Any,
    y: Any,
    *,
    rule: str = "trapezoid",
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Area under the risk-coverage curve of the top-label confidence.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    rule : {"trapezoid", "step"}, default "trapezoid", keyword-only
        ``"trapezoid"``: the trapezoid rule over the curve's points (one per
        distinct confidence), from coverage 0 where the risk is that of the
        first point (Traub et al.'s reference implementation); ``"step"``: each
        point's risk over the coverage it adds, which without ties is the mean
        over k of the risk of the k most confident rows (Geifman & El-Yaniv;
        uncertainty-calibration's ``1 - get_selective_stats(...)[0]``).
    <calibr:classes>
    <calibr:na_rm>
    <calibr:weights>

    Returns
    -------
    float
        In [0, 1]; lower is better.

    Raises
    ------
    <calibr:raises>

    Notes
    -----
    The confidence of a row is its top-label confidence (binary: ``max(p, 1 -
    p)``); it is correct when its top label is ``y``. At each distinct
    confidence :math:`t_1 > \dots > t_m`, the coverage :math:`\kappa_j` is the
    share of rows with confidence at least :math:`t_j` and the risk
    :math:`r_j` their error rate (0/1 loss). With :math:`\kappa_0 = 0` and
    :math:`r_0 = r_1`,

    .. math:: \mathrm{AURC} = \sum_{j=1}^m (\kappa_j - \kappa_{j-1})
              \frac{r_j + r_{j-1}}{2}

    (``rule="step"``: :math:`\sum_j (\kappa_j - \kappa_{j-1}) r_j`). How this
    differs from torch-uncertainty and uncertainty-calibration:
    ``docs/definitions.md``, "Selective prediction".

    References
    ----------
    Geifman, Y., & El-Yaniv, R. (2017). Selective classification for deep
    neural networks. NeurIPS 30.

    Examples
    --------
    >>> import calibr
    >>> p = [0.9, 0.8, 0.3, 0.6]
    >>> y = [1, 0, 0, 0]
    >>> round(calibr.aurc(p, y), 6)
    0.270833
    >>> round(calibr.aurc(p, y, rule="step"), 6)
    0.333333
    """
    return _area_of("aurc", rule, p, y, classes, na_rm, weights)


@validate_params(na_rm=FLAG)
@shared_docs
def e_aurc(
    p: Any,
    y: Any,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Excess AURC: ``aurc(p, y)`` minus the AURC of the oracle confidence that
    ranks every correct prediction above every error.

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
        In [0, 1], 0 for a confidence that ranks every correct prediction
        above every error.

    Raises
    ------
    <calibr:raises>

    Notes
    -----
    Under the trapezoid rule of :func:`aurc`, the smallest AURC of any confidence
    for the same predictions is :math:`e^2 / 2`, :math:`e` the error rate: the
    oracle that gives the correct rows one confidence and the errors a lower
    one (``docs/definitions.md`` shows no confidence does better). So
    :math:`\mathrm{E\text{-}AURC} = \mathrm{AURC} - e^2/2 \ge 0`, exactly; Geifman
    et al.'s continuous :math:`e + (1 - e)\log(1 - e)` is the limit of a strict
    ranking, and can exceed a finite sample's AURC.

    References
    ----------
    Geifman, Y., Uziel, G., & El-Yaniv, R. (2019). Bias-reduced uncertainty
    estimation for deep neural classifiers. ICLR.

    Examples
    --------
    >>> import calibr
    >>> round(calibr.e_aurc([0.9, 0.8, 0.3, 0.6], [1, 0, 0, 0]), 6)
    0.145833
    """
    areas = _areas(p, y, classes, na_rm, weights)
    return float(areas[_ksel.AREAS.index(("aurc", "trapezoid"))] - areas[-1] ** 2 / 2.0)


@validate_params(**_SHARED)
@shared_docs
def augrc(
    p: Any,
    y: Any,
    *,
    rule: str = "trapezoid",
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Area under the generalized risk-coverage curve (Traub et al., 2024).

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    rule : {"trapezoid", "step"}, default "trapezoid", keyword-only
        As :func:`aurc`; the trapezoid starts at the point (0, 0).
    <calibr:classes>
    <calibr:na_rm>
    <calibr:weights>

    Returns
    -------
    float
        In [0, 1/2]; lower is better.

    Raises
    ------
    <calibr:raises>

    Notes
    -----
    The generalized risk at threshold :math:`t_j` is the share of all rows that
    are accepted and wrong, :math:`g_j = \kappa_j r_j`; with :math:`\kappa_0 =
    g_0 = 0`,

    .. math:: \mathrm{AUGRC} = \sum_{j=1}^m (\kappa_j - \kappa_{j-1})
              \frac{g_j + g_{j-1}}{2},

    the probability that a random error is accepted while a random row is
    rejected (ties one half). ``docs/definitions.md``, "Selective prediction".

    References
    ----------
    Traub, J., Bungert, T. J., Lüth, C. T., Baumgartner, M., Maier-Hein, K. H.,
    Maier-Hein, L., & Jaeger, P. F. (2024). Overcoming common flaws in the
    evaluation of selective classification systems. NeurIPS 37.

    Examples
    --------
    >>> import calibr
    >>> round(calibr.augrc([0.9, 0.8, 0.3, 0.6], [1, 0, 0, 0]), 6)
    0.1875
    """
    return _area_of("augrc", rule, p, y, classes, na_rm, weights)


@validate_params(coverage=_coverage, na_rm=FLAG)
@shared_docs
def selective_accuracy(
    p: Any,
    y: Any,
    *,
    coverage: float = COVERAGE_DEFAULT,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Accuracy of the most confident share ``coverage`` of the predictions.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    coverage : float, default 0.8, keyword-only
        The share of the rows (of the weight) accepted, in (0, 1].
    <calibr:classes>
    <calibr:na_rm>
    <calibr:weights>

    Returns
    -------
    float

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a ``coverage`` outside (0, 1] and bad values
        of any other argument.
    <calibr:raises_type>

    Notes
    -----
    The rows are taken from the most confident down until their mass is
    ``coverage`` times the total; a block of tied confidences that straddles
    that mass enters in proportion (its errors counted at its error rate), the
    mean over the orders of the tied rows. Without ties and with ``coverage *
    n`` whole, it is ``1 -`` torch-uncertainty's ``RiskAtxCov(coverage)``;
    ``docs/definitions.md``, "Selective prediction".

    Examples
    --------
    >>> import calibr
    >>> calibr.selective_accuracy([0.9, 0.8, 0.3, 0.6], [1, 0, 0, 0], coverage=0.5)
    0.5
    """
    return curve_accuracy(_prepared_curve(p, y, classes, na_rm, weights), coverage)


def _curve_rows(c: Curve) -> dict[str, np.ndarray]:
    return {"threshold": c.threshold, "n": c.n, "coverage": c.coverage, "risk": c.risk,
            "generalized_risk": c.generalized_risk}


@frame_verb(collect=True)  # polars / Arrow frames, lazy sources and by=
@validate_params(na_rm=FLAG)
@shared_docs
def risk_coverage(
    p: Any,
    y: Any,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
    data: pd.DataFrame | DataFrameGroupBy | None = None,
    p_prefix: str | None = None,
    by: Any = None,
) -> pd.DataFrame:
    """The risk-coverage curve of the top-label confidence, one row per distinct
    confidence (the highest first), as a tidy DataFrame.

    Parameters
    ----------
    <calibr:p>
        With ``data``: the name of the probability column, or a list of
        names (one per class), or None with ``p_prefix``.
    <calibr:y>
        With ``data``: the name of the label column.
    <calibr:classes>
    <calibr:na_rm>
    weights : array-like or column name, optional, keyword-only
        Frequency weights, one per row (``docs/definitions.md``, "Frequency
        weights"); with ``data``, a column name.
    data : pandas DataFrame or DataFrameGroupBy, optional, keyword-only
        Read ``p`` and ``y`` as columns; a groupby gives one curve per group,
        its keys first, as :func:`calibr.calibration_table`.
    p_prefix : str, optional, keyword-only
        With ``data``: the class columns are those whose names start with it.
    by : column name or list of names, optional, keyword-only
        Group ``data`` by these columns (as ``data.groupby(by)``).

    Returns
    -------
    pandas.DataFrame
        Columns ``threshold`` (a confidence), ``n`` (the rows, or weight, with
        confidence at least ``threshold``), ``coverage`` (``n`` over the total),
        ``risk`` (their error rate, 0/1 loss) and ``generalized_risk`` (their
        errors over the total); a group's rows in order of decreasing
        ``threshold``.

    Raises
    ------
    <calibr:raises>

    Examples
    --------
    >>> import calibr
    >>> calibr.risk_coverage([0.9, 0.8, 0.3, 0.6], [1, 0, 0, 0])
       threshold    n  coverage      risk  generalized_risk
    0        0.9  1.0      0.25  0.000000              0.00
    1        0.8  2.0      0.50  0.500000              0.25
    2        0.7  3.0      0.75  0.333333              0.25
    3        0.6  4.0      1.00  0.500000              0.50
    """
    if data is None:
        if isinstance(p, str) and isinstance(y, str):  # column names, no frame
            raise InputTypeError(
                f"`p` and `y` are column names only with {arg('data')}, the frame they name; "
                "pass `data`, or arrays as `p` and `y`.", param="data")
        if p_prefix is not None:
            raise InputError(f"`p_prefix` needs {arg('data')}: it selects columns of a data frame.",
                             param="p_prefix")
        return pd.DataFrame(_curve_rows(_prepared_curve(p, y, classes, na_rm, weights)))
    groups = groups_of(data)
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
    wcol = weights_column(groups.frame, weights)
    sp = split(groups, cols, na_rm, wcol)
    if sp.rows_p is None:  # no observed group
        empty = pd.DataFrame({c: pd.Series(dtype=float) for c in RISK_COVERAGE_COLUMNS})
        if groups.keys is None:
            return empty
        return pd.concat([groups.keys.iloc[:0].reset_index(drop=True), empty], axis=1)
    sp.raise_if_emptied()
    parts, owner = [], []
    for part in sp.parts():
        prep = Prepared(part.p, part.y, sp.binary, sp.classes, part.w)
        conf, hit = top_label_hits(prep)
        rows = _curve_rows(curve_of(conf, hit, part.w))
        parts.append(rows)
        owner.append(np.full(rows["n"].shape[0], part.g, dtype=np.int64))
    table = pd.DataFrame({c: np.concatenate([r[c] for r in parts]) for c in RISK_COVERAGE_COLUMNS})
    if groups.keys is None:
        return table
    keys = groups.keys.take(np.concatenate(owner)).reset_index(drop=True)
    clash = [c for c in keys.columns if c in table.columns]
    if clash:
        raise InputError(
            f"The group key {clash[0]!r} has the name of a column of the table; rename it.",
            param="data"
        )
    return pd.concat([keys, table], axis=1)
