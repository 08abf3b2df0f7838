"""The per-bin table behind ``ece()`` and ``mce()``, as a tidy DataFrame.

The table and the Wilson interval are defined in ``docs/definitions.md``,
section "The per-bin table"; with ``data=``, the groups are those of the
group layer (``calibr._groups``), as for :func:`calibr.summarise`.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from ._docs import shared_docs
from ._groups import Groups, Split, groups_of, resolve_columns, split
from ._kernel_metrics import _as_hits
from ._kernels import binned, grouped
from ._kernels.top_label import top_label
from ._params import BINS, FLAG, LEVEL, Options, validate_params
from ._validation import (
    InputError,
    _as_float_array,
    _bad_values_message,
    check_bin_cells,
    prepare,
)

__all__ = ["calibration_table", "wilson_interval", "TABLE_COLUMNS"]

#: The columns of every table, after the group keys and (multiclass classwise) ``class``.
TABLE_COLUMNS = (
    "bin", "lower", "upper", "n", "mean_confidence", "observed_frequency", "gap",
    "ci_lower", "ci_upper",
)

_TYPES = ("classwise", "confidence")


@validate_params(level=LEVEL)
def wilson_interval(
    successes: Any, n: Any, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    r"""Wilson score interval for a binomial proportion (no continuity correction).

    Parameters
    ----------
    successes, n : array-like
        Success counts and trial counts: real numbers with
        ``0 <= successes <= n`` and ``n > 0``, of shapes that broadcast.
    level : float, default 0.95
        Confidence level in (0, 1).

    Returns
    -------
    (lower, upper) : tuple of float64 arrays

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a level outside (0, 1), counts that are
        missing, infinite, negative or above ``n``, ``n <= 0``, or shapes that
        do not broadcast.
    TypeError
        (``calibr.InputTypeError``) for counts that are not real numbers.

    Notes
    -----
    With :math:`\hat p = x / n` and :math:`z` the :math:`1 - (1 - level)/2`
    normal quantile,

    .. math:: \frac{\hat p + \frac{z^2}{2n} \pm z \sqrt{\frac{\hat p (1 - \hat p)}{n}
              + \frac{z^2}{4 n^2}}}{1 + z^2 / n},

    R's ``prop.test(x, n, correct = FALSE)$conf.int``. The bounds are exactly 0
    when x = 0 and exactly 1 when x = n.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Examples
    --------
    >>> from calibr.table import wilson_interval
    >>> lo, hi = wilson_interval([3], [10])
    >>> round(float(lo[0]), 7), round(float(hi[0]), 7)
    (0.1077913, 0.6032219)
    """
    z = _z(level)
    what = "a count or an array of counts"
    x = _as_float_array(successes, "successes", what, ndims=(0, 1, 2, 3))
    m = _as_float_array(n, "n", what, ndims=(0, 1, 2, 3))
    try:
        x, m = np.broadcast_arrays(x, m)
    except ValueError:
        raise InputError(
            f"`successes` and `n` must have shapes that broadcast; got {x.shape} and {m.shape}."
        ) from None
    for name, values in (("successes", x), ("n", m)):
        bad = ~np.isfinite(values)
        if bad.any():
            raise InputError(_bad_values_message(name, "be finite numbers", bad, values))
    if (m <= 0).any():
        raise InputError(_bad_values_message("n", "be positive", m <= 0, m))
    bad = (x < 0) | (x > m)
    if bad.any():
        raise InputError(_bad_values_message("successes", "lie in [0, n]", bad, x))
    return _wilson(x, m, z)


def _wilson(x: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson bounds of valid float64 counts for the normal quantile ``z``."""
    z2 = z * z
    phat = x / n
    denom = 1.0 + z2 / n
    center = (phat + z2 / (2.0 * n)) / denom
    with np.errstate(over="ignore"):  # n near 1e154 and up: z2 / inf is the 0 it should be
        half = z / denom * np.sqrt(phat * (1.0 - phat) / n + z2 / (4.0 * n * n))
    lower = np.where(x == 0, 0.0, center - half)
    upper = np.where(x == n, 1.0, center + half)
    return lower, upper


def _z(level: float) -> float:
    """The 1 - (1 - level)/2 normal quantile (R's ``qnorm((1 + conf.level)/2)``).

    For the largest levels below 1, ``1 - (1 - level)/2`` rounds to 1.0 (whose
    quantile is infinite); the quantile is then taken by symmetry from the
    lower tail, ``-inv_cdf((1 - level)/2)``, which is exact there.
    """
    half_alpha = (1.0 - level) / 2.0
    upper = 1.0 - half_alpha
    if upper < 1.0:
        return NormalDist().inv_cdf(upper)
    return -NormalDist().inv_cdf(half_alpha)


def _rows(
    p: np.ndarray, y: np.ndarray, binary: bool, bins: int, type: str, z: float
) -> dict[str, np.ndarray]:
    """The table's columns for one group's canonical arrays (non-empty bins only).

    The statistics are those of ``ece()``/``mce()``: the same kernels on the
    same arrays. ``"_class"`` holds 0-based class positions (classwise only).
    """
    stats = binned.bin_stats(p, y, binary, bins, type)
    count, sum_conf, sum_hit = (np.atleast_2d(s) for s in stats)
    cls, b = np.nonzero(count > 0)  # row-major: by class, then by bin
    return _columns(cls, b, count[cls, b], sum_conf[cls, b], sum_hit[cls, b],
                    binned.breaks(bins), z, not binary and type == "classwise")


def _columns(cls: np.ndarray, b: np.ndarray, n: np.ndarray, sum_conf: np.ndarray,
             sum_hit: np.ndarray, edges: np.ndarray, z: float,
             classwise: bool) -> dict[str, np.ndarray]:
    """The table's columns of the non-empty bins ``b`` (0-based) of classes ``cls``,
    from their counts and sums."""
    conf = sum_conf / n
    freq = sum_hit / n
    lo, hi = _wilson(sum_hit, n, z)
    out = {
        "bin": b.astype(np.int64) + 1,
        "lower": edges[b],
        "upper": edges[b + 1],
        "n": n.astype(np.int64),
        "mean_confidence": conf,
        "observed_frequency": freq,
        "gap": np.abs(freq - conf),
        "ci_lower": lo,
        "ci_upper": hi,
    }
    if classwise:
        out["_class"] = cls
    return out


def _group_rows(
    sp: Split, bins: int, type: str, z: float
) -> tuple[list[dict[str, np.ndarray]], list[np.ndarray]]:
    """The table's columns of every group at once (per-(group, bin) sums in one
    pass, ``calibr._kernels.grouped``), with the group of each row: the rows of
    :func:`_rows` called on each group's slice, bit for bit, in pandas' order of
    the groups."""
    classwise = not sp.binary and type == "classwise"
    if classwise:  # one pass over the rows in the frame's order
        batches = grouped.classwise_stat_batches(sp.rows_p, sp.rows_y, sp.ids, sp.start, bins)
    else:  # the binary kernel on the rows sorted by group
        if sp.binary:
            x, c = sp.p, _as_hits(sp.y)
        else:
            x, c = top_label(sp.rows_p, sp.rows_y)
            x, c = sp.by_group(x), sp.by_group(c)
        batches = grouped.binary_stat_batches(x, np.ascontiguousarray(c), sp.start, bins)
    edges = binned.breaks(bins)
    parts, owner = [], []
    for g0, _, *stats in batches:
        count, sum_conf, sum_hit = (s if classwise else s[:, None, :] for s in stats)
        g, cls, b = np.nonzero(count > 0)  # row-major: by group, class, then bin
        parts.append(_columns(cls, b, count[g, cls, b], sum_conf[g, cls, b],
                              sum_hit[g, cls, b], edges, z, classwise))
        owner.append(g + g0)
    return parts, owner


def _frame(parts: list[dict[str, np.ndarray]], classes: tuple | None) -> pd.DataFrame:
    cols = {c: np.concatenate([part[c] for part in parts]) for c in TABLE_COLUMNS}
    if parts and "_class" in parts[0]:
        codes = np.concatenate([part["_class"] for part in parts])
        return pd.DataFrame({"class": pd.Index(list(classes)).take(codes), **cols})
    return pd.DataFrame(cols)


@validate_params(bins=BINS, type=Options(*_TYPES), ci_level=LEVEL, na_rm=FLAG)
@shared_docs
def calibration_table(
    p: Any,
    y: Any,
    bins: int = 10,
    type: str = "classwise",
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    ci_level: float = 0.95,
    data: pd.DataFrame | DataFrameGroupBy | None = None,
    p_prefix: str | None = None,
) -> pd.DataFrame:
    """The per-bin statistics behind ``ece()`` and ``mce()``, as a tidy DataFrame.

    Parameters
    ----------
    <calibr:p>
        With ``data``: the name of the probability column, or a list of
        names (one per class), or None with ``p_prefix``.
    <calibr:y>
        With ``data``: the name of the label column.
    <calibr:bins>
    type : {"classwise", "confidence"}, default "classwise"
        Multiclass form (ignored for binary input): one set of bins per class
        (one-vs-rest), or the top-label confidence and its correctness.
    <calibr:classes>
    <calibr:na_rm>
    ci_level : float, default 0.95, keyword-only
        Confidence level of the interval for the observed frequency.
    data : DataFrame or DataFrameGroupBy, optional, keyword-only
        Take ``p`` and ``y`` from the columns of this frame (``p`` and ``y``
        name them, as for :func:`calibr.summarise`); grouped, one table per
        group (pandas' ``observed=``/``dropna=`` semantics), stacked.
    p_prefix : str, optional, keyword-only
        With ``data``: the probability columns are those starting with this
        prefix (see :func:`calibr.summarise` for how class labels are derived).

    Returns
    -------
    DataFrame
        A new frame with a default index and the columns, in this order: the
        group keys (with a grouped ``data``); ``class`` (multiclass
        ``"classwise"`` only: the class label); ``bin`` (1-based); ``lower`` and
        ``upper`` (the bin's edges, R's ``seq(0, 1, length.out = bins + 1)``);
        ``n`` (members); ``mean_confidence``; ``observed_frequency`` (the share
        of members whose outcome is 1, or whose class is the column's, or whose
        top label is right); ``gap`` (``|observed_frequency -
        mean_confidence|``); ``ci_lower`` and ``ci_upper`` (the Wilson score
        interval of the observed frequency, see :func:`wilson_interval`).
        Only non-empty bins appear, as the metrics ignore empty bins.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values, as the metrics.
    TypeError
        For a non-numeric ``p`` or a ``data`` that is not a DataFrame or DataFrameGroupBy.

    Notes
    -----
    Bin membership is that of :func:`calibr.ece` (closed on the right, 0 in the
    first bin), and the statistics come from the same kernels, so per group
    (and per class for ``"classwise"``)

    - ``(n * gap).sum() / n.sum()`` is the binary ECE (for ``"classwise"``,
      ``ece()`` is the mean of it over the classes);
    - ``gap.max()`` is the MCE (for ``"classwise"``, over all classes).

    For the table of each group of a DataFrame, chain with ``.pipe()``:
    ``df.groupby("model").pipe((calibration_table, "data"), "p", "y")``.

    Examples
    --------
    >>> from calibr.table import calibration_table
    >>> tab = calibration_table([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], bins=2)
    >>> print(tab.round(4).to_string())
       bin  lower  upper  n  mean_confidence  observed_frequency   gap  ci_lower  ci_upper
    0    1    0.0    0.5  2             0.15                 0.0  0.15    0.0000    0.6576
    1    2    0.5    1.0  2             0.85                 1.0  0.15    0.3424    1.0000
    """
    z = _z(ci_level)
    if data is None:
        if p_prefix is not None:
            raise InputError("`p_prefix` needs `data`: it selects columns of a data frame.")
        prep = prepare(p, y, classes=classes, na_rm=na_rm)
        check_bin_cells(bins, prep.k, not prep.binary and type == "classwise")
        return _frame([_rows(prep.p, prep.y, prep.binary, bins, type, z)], prep.classes)

    groups = groups_of(data)
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
    sp = split(groups, cols, na_rm)
    if sp.rows_p is None:  # no observed group
        return _empty(groups, not cols.binary and type == "classwise")
    check_bin_cells(bins, sp.k, not sp.binary and type == "classwise")
    sp.raise_if_emptied()  # a group whose rows na_rm=True dropped: its error
    parts, owner = _group_rows(sp, bins, type, z)
    table = _frame(parts, sp.classes)
    if groups.keys is None:
        return table
    keys = groups.keys.take(np.concatenate(owner)).reset_index(drop=True)
    clash = [c for c in keys.columns if c in table.columns]
    if clash:
        raise InputError(
            f"The group key {clash[0]!r} has the name of a column of the table; rename it."
        )
    return pd.concat([keys, table], axis=1)


def _empty(groups: Groups, with_class: bool) -> pd.DataFrame:
    """The table of a grouping with no observed group: the columns, no rows."""
    names = (list(groups.keys.columns) if groups.keys is not None else []) + (
        ["class"] if with_class else []
    ) + list(TABLE_COLUMNS)
    return pd.DataFrame({c: [] for c in names})
