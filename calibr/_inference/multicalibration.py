"""The multicalibration error of Guy et al. (2025): the sigma-scaled ECCE of
Arrieta-Ibarra et al. (2022), maximised over segments defined by feature values
(``docs/definitions.md``, "Multicalibration: `multicalibration()`").

How it is computed: the rows are sorted by ``p`` once; each feature is turned
into integer codes once (its values, or its quantile bins, in the order in
which they first occur along increasing ``p``); every combination of up to
``max_depth`` features is then one pass over the sorted rows
(:func:`calibr._kernels.multicalibration.segment_sums`) that gives all of the
combination's segments at once, a segment being a cell of the combination's
codes (a combination with very many possible cells numbers its occupied
cells first). The combinations run in threads.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._docs import shared_docs
from .._input import (
    FLAG,
    InputError,
    InputTypeError,
    Integer,
    bad_values_message,
    fmt,
    prepare,
    validate_params,
)
from .._input.frames import frame_verb
from .._input.groups import complete_rows, resolve_columns, weights_column
from .._kernels import multicalibration as _mk
from .._kernels._jit import read_only
from .._kernels._threads import run_chunks
from .._metrics.cumulative import ecce_pvalue

__all__ = ["MulticalibrationResult", "multicalibration"]

#: The multiple of the global sigma that is the minimum detectable error
#: (Guy et al. 2025: about 5 sigma for detection).
MDE_SIGMAS = 5.0

#: The columns of :attr:`MulticalibrationResult.segments`, in order.
SEGMENT_COLUMNS = ("segment", "depth", "definition", "conditions", "n", "weight", "ecce",
                   "sigma", "ecce_sigma", "pvalue")


@dataclass(frozen=True, eq=False)
class MulticalibrationResult:
    """The outcome of :func:`calibr.multicalibration` (``docs/definitions.md``,
    "Multicalibration: `multicalibration()`").

    Attributes
    ----------
    statistic : float
        The multicalibration error on the sigma scale: the largest
        ``ecce / sigma`` over the segments (the whole data included). mcgrad's
        ``mce_sigma``.
    pvalue : float
        The p-value of ``statistic`` as for a single segment (the range of
        standard Brownian motion on [0, 1]), not adjusted for the number of
        segments; the smallest p-value of the segments. mcgrad's ``mce_pvalue``.
    mce : float
        ``statistic`` on the scale of ``p``: ``statistic * global_sigma``
        (mcgrad's ``mce``).
    mce_relative : float
        ``100 * mce / min(prevalence, 1 - prevalence)``, ``prevalence`` the
        (weighted) mean of ``y``: percent of the base rate (mcgrad's
        ``mce_relative``); ``inf`` when ``y`` is all 0 or all 1 (NaN if ``mce``
        is 0 then).
    mde : float
        The minimum detectable error, ``5 * global_sigma`` (mcgrad's ``mde``).
    mde_relative : float
        ``mde`` in percent of the base rate, as ``mce_relative``.
    global_ecce : float
        The ECCE of the whole data (the segment of depth 0).
    global_sigma : float
        Its standard deviation under perfect calibration.
    n : int
        The number of observations used (after ``na_rm``; with ``weights``, the
        rows of positive weight).
    n_segments : int
        The number of segments evaluated (the whole data included).
    segments : pandas.DataFrame
        One row per segment, the worst first (by ``ecce_sigma``, ties in the
        order of ``segment``): ``segment`` (its number in mcgrad's order:
        depth, then the combination of features, then their values), ``depth``
        (the number of conditions), ``definition`` (the conditions as text,
        e.g. ``"region == 'north' & age in (34.0, 51.0]"``), ``conditions``
        (a tuple of ``(column, operator, value)``: operators ``"=="``,
        ``"not in"`` (the collapsed rare values of a categorical column; the
        value is the tuple of the values kept, ``None`` standing for missing),
        ``"in"`` (a quantile bin, a ``pandas.Interval``) and ``"is missing"``),
        ``n`` (rows), ``weight`` (total weight; ``n`` without weights), ``ecce``,
        ``sigma``, ``ecce_sigma`` (``ecce / sigma``) and ``pvalue``.
    """

    statistic: float
    pvalue: float
    mce: float
    mce_relative: float
    mde: float
    mde_relative: float
    global_ecce: float
    global_sigma: float
    n: int
    n_segments: int
    segments: pd.DataFrame = field(repr=False)

    def _repr_html_(self) -> str:
        """The fields as an HTML table, for notebooks (``calibr._display.repr``)."""
        from .._display.repr import result_html

        return result_html(self)


# --------------------------------------------------------------------------
# the p-value


def _ecce_pvalue(x: np.ndarray) -> np.ndarray:
    """The p-value of sigma-scaled ECCEs ``x``: ``P(R > x)``, ``R`` the range of
    standard Brownian motion on [0, 1]; the one tail of ``calibr.ecce``'s Kuiper
    form (``calibr._metrics.cumulative.ecce_pvalue``)."""
    return ecce_pvalue(x, "kuiper")


# --------------------------------------------------------------------------
# features: each segment column as integer codes of the sorted rows


@dataclass(frozen=True)
class _Feature:
    """One segment column: a code per row (in ``p`` order) and the condition of
    each code, ``(column, operator, value)``."""

    name: Hashable
    codes: np.ndarray  # int32, codes 0..len(conditions)-1 in order of first occurrence
    conditions: list[tuple[Hashable, str, Any]]


def _value_ranks(uniques: Any) -> np.ndarray:
    """The rank of each of the distinct ``uniques`` in their own order (numbers,
    strings, a Categorical's categories); values of types without a common order
    by type name, then ``repr``."""
    values = pd.Index(uniques)
    try:
        order = np.asarray(values.argsort())
    except (TypeError, ValueError):
        keys = [(type(v).__name__, repr(v)) for v in values]
        order = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.intp)
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(len(values))
    return ranks


def _ordered(raw: np.ndarray, uniques: Any, ps: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Codes of the rows sorted by ``p`` (``raw``, int64 indexes into
    ``uniques``, -1 for missing) renumbered in the order of each value's
    smallest ``p``, ties by the values' own order (missing after them): the
    order in which the values first occur along increasing ``p``, whatever the
    order of tied rows. Missing is a code of its own; values that no row has
    get none. Returns the codes (int32) and, for each code, its index into
    ``uniques`` (-1 for missing)."""
    m = len(uniques)
    n = raw.shape[0]
    first = _mk.first_positions(read_only(raw), m)
    present = np.flatnonzero(first < n)  # indexes into uniques, and m for missing
    first_p = ps[first[present]]
    ranks = np.append(_value_ranks(uniques), m)[present]
    order = present[np.lexsort((ranks, first_p))]
    new = np.full(m + 1, -1, dtype=np.int32)
    new[order] = np.arange(order.shape[0], dtype=np.int32)
    return new[np.where(raw < 0, m, raw)], [int(i) if i < m else -1 for i in order]


def _scalar(value: Any) -> Any:
    """A numpy scalar as the Python scalar (for conditions and their text)."""
    return value.item() if isinstance(value, np.generic) and not isinstance(
        value, (np.datetime64, np.timedelta64)) else value


def _categorical(name: Hashable, values: pd.Series, rows: np.ndarray, ps: np.ndarray,
                 w: np.ndarray | None, max_values: int) -> _Feature:
    """Each value its own code, missing being one value too; with more than
    ``max_values`` values, the ``max_values - 1`` most frequent kept (ties: the
    first met along increasing ``p``, see :func:`_ordered`) and the rest one
    code, "other". ``values`` is the whole column, ``rows`` the positions of
    the rows used, sorted by ``p``."""
    try:
        raw, uniques = pd.factorize(values, use_na_sentinel=True)
    except TypeError as err:  # e.g. lists as values
        raise InputTypeError(f"`segments` column {fmt(name)} must hold values that can be told "
                             f"apart (hashable, as for pandas' groupby); {err}.",
                             param="segments") from None
    codes, source = _ordered(raw.astype(np.int64, copy=False)[rows], uniques, ps)
    labels = [None if i < 0 else _scalar(uniques[i]) for i in source]
    m = len(labels)
    if m <= max_values:
        conditions = [(name, "is missing", None) if i < 0 else (name, "==", labels[k])
                      for k, i in enumerate(source)]
        return _Feature(name, codes, conditions)
    counts = np.bincount(codes, weights=w, minlength=m)
    kept = np.sort(np.argsort(-counts, kind="stable")[: max_values - 1])
    other = np.setdiff1d(np.arange(m), kept)
    # the groups in order of first occurrence: a kept code at its own place,
    # "other" at the place of its first member
    firsts = np.concatenate([kept, other[:1]])
    order = np.argsort(firsts, kind="stable")
    lut = np.empty(m, dtype=np.int32)
    new_of_group = np.empty(len(firsts), dtype=np.int32)
    new_of_group[order] = np.arange(len(firsts), dtype=np.int32)
    lut[kept] = new_of_group[: len(kept)]
    lut[other] = new_of_group[-1]
    kept_values = tuple(labels[i] for i in kept)
    conditions: list[tuple[Hashable, str, Any]] = [None] * len(firsts)  # type: ignore[list-item]
    for g, code in enumerate(firsts):
        if g == len(kept):
            conditions[new_of_group[g]] = (name, "not in", kept_values)
        elif source[code] < 0:
            conditions[new_of_group[g]] = (name, "is missing", None)
        else:
            conditions[new_of_group[g]] = (name, "==", labels[code])
    return _Feature(name, lut[codes], conditions)


def _weighted_quantiles(x: np.ndarray, w: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """numpy's ``quantile(method="linear")`` of the sample in which ``x[i]`` is
    repeated ``w[i]`` times (``docs/definitions.md``, "Multicalibration"):
    the same index arithmetic and interpolation as numpy's, on the order
    statistics of the repeated sample, for real weights too (``w > 0``)."""
    order = np.argsort(x, kind="stable")
    xs, cum = x[order], np.cumsum(w[order])
    total = cum[-1]
    virtual = (total - 1) * qs
    previous = np.floor(virtual)
    upper = previous + 1
    # numpy's rule for the maximum; a total weight of at most 1 has no sample to
    # repeat, and gets its ends only at q = 0 and q = 1 (at exactly 1, numpy's rule
    # would read every q as the maximum: virtual is 0 = total - 1 for every q)
    above = virtual >= total - 1 if total > 1 else qs >= 1

    def order_statistic(j: np.ndarray) -> np.ndarray:  # the value at 0-based position j
        return xs[np.minimum(np.searchsorted(cum, j, side="right"), xs.shape[0] - 1)]

    a, b = order_statistic(previous), order_statistic(upper)  # positions below 0: xs[0]
    a[above] = b[above] = xs[-1]
    gamma = virtual - previous
    diff = b - a
    out = a + diff * gamma
    high = gamma >= 0.5
    out[high] = b[high] - diff[high] * (1 - gamma[high])
    return out


def _numerical(name: Hashable, x: np.ndarray, ps: np.ndarray, w: np.ndarray | None,
               max_values: int) -> _Feature:
    """Each value its own code if there are at most ``max_values`` (missing not
    counted), else ``max_values`` quantile bins of pandas' ``cut`` (edges at the
    quantiles ``0, 1/k, ..., 1``, duplicates dropped, closed on the right, the
    first closed on both sides); missing is one code more."""
    missing = np.isnan(x)
    present = x[~missing]
    # few values allowed: count them with an early stop; many: hash them
    distinct = (_mk.distinct_upto(read_only(present), max_values) if max_values <= 64
                else pd.unique(present).shape[0])
    if distinct <= max_values:
        raw, uniques = pd.factorize(x, use_na_sentinel=True)
        codes, source = _ordered(raw.astype(np.int64, copy=False), uniques, ps)
        conditions = [(name, "is missing", None) if i < 0 else (name, "==", float(uniques[i]))
                      for i in source]
        return _Feature(name, codes, conditions)
    qs = np.linspace(0, 1, max_values + 1)
    if w is None:
        edges = pd.Series(present).quantile(qs).to_numpy()
    else:
        edges = _weighted_quantiles(present, w[~missing], qs)
    edges = pd.unique(edges)
    ids = np.searchsorted(edges, x, side="left")
    ids[x == edges[0]] = 1
    bins = (ids - 1).astype(np.float64)
    bins[missing] = np.nan
    raw, uniques = pd.factorize(bins, use_na_sentinel=True)
    codes, source = _ordered(raw.astype(np.int64, copy=False), uniques, ps)
    conditions: list[tuple[Hashable, str, Any]] = []
    for b in (-1 if i < 0 else int(uniques[i]) for i in source):
        if b < 0:
            conditions.append((name, "is missing", None))
        else:
            conditions.append((name, "in", pd.Interval(float(edges[b]), float(edges[b + 1]),
                                                       closed="both" if b == 0 else "right")))
    return _Feature(name, codes, conditions)


# --------------------------------------------------------------------------
# arguments


def _segment_columns(frame: pd.DataFrame, segments: Any, y: Hashable,
                     categorical: Any) -> tuple[list[Hashable], set]:
    """The segment columns (a list of names, or one name) and the subset of them
    read as categorical although numeric."""
    names = [segments] if isinstance(segments, str) or not isinstance(
        segments, (Sequence, pd.Index)) else list(segments)
    if not names:
        raise InputError("`segments` must name at least one column of the data; got none.",
                         param="segments")
    seen: set = set()
    for name in names:
        try:
            loc = frame.columns.get_loc(name)
        except (KeyError, TypeError, pd.errors.InvalidIndexError):
            raise InputError(f"`segments` must name columns of the data; {fmt(name)} is not "
                             "one.", param="segments") from None
        if not isinstance(loc, (int, np.integer)):
            raise InputError(f"`segments` must name one column each; {fmt(name)} names several "
                             "columns of the data: rename the columns so that each name is "
                             "unique.", param="segments")
        if name in seen:
            raise InputError(f"`segments` names {fmt(name)} twice.", param="segments")
        seen.add(name)
        if name == y:
            raise InputError(f"`segments` must not include the label column {fmt(y)}: a segment "
                             "of one label has no calibration to measure.", param="segments")
    if categorical is None:
        return names, set()
    cats = [categorical] if isinstance(categorical, str) or not isinstance(
        categorical, (Sequence, pd.Index)) else list(categorical)
    for name in cats:
        try:
            known = name in seen
        except TypeError:  # unhashable: no column name
            known = False
        if not known:
            raise InputError(f"`categorical` must name columns of `segments`; {fmt(name)} is "
                             "not one of them.", param="categorical")
    return names, set(cats)


def _feature(frame: pd.DataFrame, name: Hashable, rows: np.ndarray, ps: np.ndarray,
             w: np.ndarray | None, max_values: int, as_categorical: bool) -> _Feature:
    """The feature of segment column ``name`` over the row positions ``rows``
    (the rows used, sorted by ``p``: their ``p`` are ``ps``, their weights ``w``)."""
    column = frame[name]
    if column.isna().all():
        raise InputError(f"`segments` column {fmt(name)} is missing in every row: it defines no "
                         "segments.", param="segments")
    dtype = column.dtype
    numeric = (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
               and not as_categorical)
    if not numeric:
        return _categorical(name, column, rows, ps, w, max_values)
    if pd.api.types.is_complex_dtype(dtype):
        raise InputTypeError(f"`segments` column {fmt(name)} holds complex numbers, which have "
                             "no quantiles; list it in `categorical` to use its values as they "
                             "are.", param="segments")
    x = column.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(x)
    if infinite.any():
        raise InputError(bad_values_message(
            "segments", f"hold finite or missing values in column {fmt(name)} (its quantiles "
            "bin it)", infinite, x), param="segments")
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.nanmax(x) - np.nanmin(x)
    if not np.isfinite(span):
        raise InputError(f"`segments` column {fmt(name)} spans more than the largest float "
                         f"({fmt(np.nanmin(x))} to {fmt(np.nanmax(x))}): its quantiles cannot "
                         "be interpolated; list it in `categorical` to use its values as they "
                         "are.", param="segments")
    return _numerical(name, x[rows], ps, w, max_values)


def _condition_text(condition: tuple[Hashable, str, Any]) -> str:
    column, op, value = condition
    col = column if isinstance(column, str) else repr(column)
    if op == "is missing":
        return f"{col} is missing"
    if op == "in":
        left = "[" if value.closed == "both" else "("
        return f"{col} in {left}{value.left!r}, {value.right!r}]"
    if op == "not in":
        shown = ", ".join("missing" if v is None else repr(v) for v in value)
        return f"{col} not in {{{shown}}}"
    return f"{col} == {value!r}"


# --------------------------------------------------------------------------
# the function


@frame_verb(collect=True)  # polars / Arrow frames; lazy sources collected (docs/engines.md)
@shared_docs
@validate_params(max_depth=Integer(1), max_values=Integer(1), min_samples=Integer(1),
                 na_rm=FLAG)
def multicalibration(
    data: pd.DataFrame,
    p: Hashable,
    y: Hashable,
    segments: Hashable | Sequence[Hashable],
    *,
    categorical: Hashable | Sequence[Hashable] | None = None,
    weights: Hashable | None = None,
    max_depth: int = 3,
    max_values: int = 3,
    min_samples: int = 10,
    na_rm: bool = False,
) -> MulticalibrationResult:
    """The multicalibration error: the worst sigma-scaled ECCE over segments.

    Each segment is the rows that meet up to ``max_depth`` conditions, one per
    segment column (``region == 'north' & age in (34.0, 51.0]``); the ECCE of a
    segment is the range of the cumulative residuals ``y - p`` of its rows
    sorted by ``p``, and its sigma-scaled form the ECCE over its standard
    deviation under perfect calibration. The statistic is the largest of these
    over the segments, the whole data included (Guy et al. 2025).

    Parameters
    ----------
    data : pandas.DataFrame
        The predictions, outcomes and segment columns, one row per observation.
        It is not modified.
    p : column name
        The column of predicted probabilities P(y = 1), in [0, 1].
    y : column name
        The column of outcomes, 0/1 or booleans.
    segments : column name or list of column names
        The columns that define segments. A numeric column (not boolean) with
        more than ``max_values`` distinct values is cut into ``max_values``
        quantile bins; any other column's values are its segments, the
        ``max_values - 1`` most frequent kept and the rest pooled into one
        segment when there are more than ``max_values``. A missing value is a
        value of its own (for a numeric column, one segment more than
        ``max_values``).
    categorical : column name or list of column names, optional, keyword-only
        Numeric columns of ``segments`` to read as categorical (their values,
        never bins), e.g. integer codes of regions.
    weights : column name, optional, keyword-only
        A column of frequency weights (``docs/definitions.md``, "Frequency
        weights"): a whole-number weight counts its row that many times, for the
        ECCE, its sigma, the sizes of segments, the pooling of rare values and
        the quantile bins; rows of weight 0 are left out.
    max_depth : int, default 3, keyword-only
        The largest number of conditions of a segment (at least 1).
    max_values : int, default 3, keyword-only
        The most segments of one column (at least 1; missing values aside for a
        numeric column).
    min_samples : int, default 10, keyword-only
        The smallest segment evaluated: segments with fewer rows (with weights,
        a smaller total weight) are left out. At least 1 and at most the number
        of observations (the total weight).
    <calibr:na_rm>
        Only ``p`` and ``y`` are looked at: a missing segment value is a value.

    Returns
    -------
    MulticalibrationResult
        ``statistic``, ``pvalue``, ``mce``, ``mce_relative``, ``mde``,
        ``mde_relative``, ``global_ecce``, ``global_sigma``, ``n``,
        ``n_segments`` and ``segments``, a DataFrame of every segment, the worst
        first.

    Raises
    ------
    calibr.InputError
        For a column that is not in ``data`` or a segment column missing in
        every row, ``max_depth``, ``max_values`` or ``min_samples`` out of range,
        and any bad ``p``, ``y`` or weight (as for the metrics).
    calibr.InputTypeError
        If ``data`` is not a pandas DataFrame.

    Notes
    -----
    For a segment S, with its rows sorted by ``p`` and ``w = 1`` without weights,
    ``ECCE_S = (max_k C_k - min_k C_k) / W_S`` with ``C_k`` the running sum of
    ``w_i (y_i - p_i)`` (``C_0 = 0``) and ``W_S`` the total weight, and
    ``sigma_S = sqrt(sum w_i p_i (1 - p_i)) / W_S``. The running sum is read at
    the end of each block of tied ``p`` only. The statistic is ``max_S ECCE_S /
    sigma_S``; its p-value is that of the range of standard Brownian motion on
    [0, 1]; ``mde = 5 sigma_whole``. The formulas, the segments, and the
    differences from mcgrad 0.1.5's ``MulticalibrationError`` are in
    ``docs/definitions.md``, "Multicalibration: `multicalibration()`".

    References
    ----------
    Guy, Haimovich, Linder, Okati, Perini, Tax & Tygert (2025). Measuring
    multi-calibration. arXiv:2506.11251.

    Arrieta-Ibarra, Gujral, Tannen, Tygert & Xu (2022). Metrics of calibration
    for probabilistic predictions. JMLR 23(351), 1-54.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import calibr
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"p": rng.uniform(0.1, 0.9, 4000),
    ...                    "region": rng.choice(["north", "south", "east"], 4000),
    ...                    "age": rng.integers(18, 80, 4000)})
    >>> bias = np.where(df["region"] == "north", 0.1, 0.0)  # too low in the north
    >>> df["y"] = (rng.random(4000) < df["p"] + bias).astype(int)
    >>> res = calibr.multicalibration(df, "p", "y", ["region", "age"])
    >>> round(res.statistic, 2), f"{res.pvalue:.1e}", res.n_segments
    (8.21, '8.7e-16', 16)
    >>> res.segments.loc[0, "definition"], int(res.segments.loc[0, "n"])
    ("region == 'north'", 1315)
    """
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.",
                             param="data")
    cols = resolve_columns(data, p, y, None, None)
    if not cols.binary:
        raise InputError("`p` must name one column (P(y = 1)): multicalibration is for binary "
                         f"outcomes; got {fmt(p)}.", param="p")
    names, as_categorical = _segment_columns(data, segments, y, categorical)
    wcol = weights_column(data, weights)
    prep = prepare(data[p], data[y], weights=None if wcol is None else data[wcol], na_rm=na_rm)
    rows = np.flatnonzero(complete_rows(data, cols)) if na_rm else np.arange(data.shape[0])
    pv = prep.p
    yv = prep.y.astype(np.float64)
    w = prep.weights
    if w is not None:
        positive = w > 0
        if not positive.all():
            rows, pv, yv, w = rows[positive], pv[positive], yv[positive], w[positive]
    n = pv.shape[0]
    total = float(n) if w is None else float(w.sum())
    if min_samples > total:
        what = (f"the number of observations ({n:,})" if w is None
                else f"the total weight of the observations ({fmt(total)})")
        raise InputError(f"`min_samples` must be at most {what}; got {min_samples:,}.",
                         param="min_samples")

    order = np.argsort(pv)  # any order of tied p gives the same segments (to rounding)
    ps, ys = pv[order], yv[order]
    ws = None if w is None else w[order]
    sorted_rows = rows[order]
    features = [_feature(data, name, sorted_rows, ps, ws, max_values, name in as_categorical)
                for name in names]

    a = ys - ps
    b = ps * (1.0 - ps)
    c = np.ones(n)
    if ws is not None:
        a, b, c = ws * a, ws * b, ws
    last = np.empty(n, dtype=bool)
    last[-1] = True
    np.not_equal(ps[1:], ps[:-1], out=last[:-1])
    ends = np.flatnonzero(last)
    maxblock = int(np.max(np.diff(ends, prepend=-1)))
    codes = np.empty((len(features), n), dtype=np.int32)
    for f, feat in enumerate(features):
        codes[f] = feat.codes
    sizes = [len(feat.conditions) for feat in features]

    depths = range(1, min(max_depth, len(features)) + 1)
    combos = [()] + [combo for depth in depths
                     for combo in itertools.combinations(range(len(features)), depth)]
    sums = (read_only(a), read_only(b), read_only(c), read_only(last), maxblock)
    calls = [(read_only(codes), combo, sizes, sums) for combo in combos]
    results = list(run_chunks(_combination, calls))

    table = _segments_table(features, combos, sizes, results, min_samples, w is not None)
    sigma_ratio = table["ecce_sigma"].to_numpy()
    statistic = float(sigma_ratio.max())
    global_ecce = float(table["ecce"].iloc[0])
    global_sigma = float(table["sigma"].iloc[0])
    order_out = np.argsort(-sigma_ratio, kind="stable")
    table = table.iloc[order_out].reset_index(drop=True)

    mean_y = float(np.sum(c * ys) / total) if ws is not None else float(ys.mean())
    base = min(mean_y, 1.0 - mean_y)
    mce = statistic * global_sigma
    mde = MDE_SIGMAS * global_sigma
    return MulticalibrationResult(
        statistic=statistic,
        pvalue=float(_ecce_pvalue(np.array([statistic]))[0]),
        mce=mce,
        mce_relative=_relative(mce, base),
        mde=mde,
        mde_relative=_relative(mde, base),
        global_ecce=global_ecce,
        global_sigma=global_sigma,
        n=n,
        n_segments=int(table.shape[0]),
        segments=table,
    )


def _relative(value: float, base: float) -> float:
    """``100 * value / base``: inf for a base rate of 0 (NaN if ``value`` is 0 too)."""
    if base == 0.0:
        return math.nan if value == 0.0 else math.inf
    return 100.0 * value / base


#: A combination of features with at most this many cells (or at most n) keeps
#: its sums in one array indexed by the cells (mixed radix); beyond, its
#: occupied cells are numbered first (at most n of them), so that many values
#: per column at depth 3 never ask for memory per possible cell.
DENSE_CELLS = 1 << 16


def _combination(codes: np.ndarray, combo: tuple[int, ...], sizes: list[int],
                 sums: tuple) -> tuple:
    """The per-cell sums of one combination of features (``segment_sums``) and
    the codes of each cell, ``(rows, total, variance, high, low, digits)``:
    ``digits`` is None when the cells are the mixed-radix numbers of the codes,
    else an array of the codes of each occupied cell, in mcgrad's order."""
    n = codes.shape[1]
    radix = [sizes[f] for f in combo]
    ncells = math.prod(radix)
    if ncells <= max(n, DENSE_CELLS) or len(combo) == 1:
        strides = np.ones(len(combo), dtype=np.int64)
        for j in range(len(combo) - 2, -1, -1):
            strides[j] = strides[j + 1] * radix[j + 1]
        return (*_mk.segment_sums(codes, read_only(np.array(combo, dtype=np.int64)),
                                  read_only(strides), ncells, *sums), None)
    # number the occupied cells, one column at a time (each step below n * size)
    cell, digits = codes[combo[0]].astype(np.int64), None
    for f in combo[1:]:
        cell, keys = pd.factorize(cell * sizes[f] + codes[f], sort=False)
        keys = keys.to_numpy() if isinstance(keys, pd.Index) else np.asarray(keys)
        head = (keys // sizes[f])[:, None] if digits is None else digits[keys // sizes[f]]
        digits = np.concatenate([head, (keys % sizes[f])[:, None]], axis=1)
    order = np.lexsort(digits.T[::-1])  # mcgrad's order: the first column most significant
    rank = np.empty(order.shape[0], dtype=np.int32)
    rank[order] = np.arange(order.shape[0], dtype=np.int32)
    occupied = np.ascontiguousarray(rank[cell][None, :])
    out = _mk.segment_sums(read_only(occupied), read_only(np.zeros(1, dtype=np.int64)),
                           read_only(np.ones(1, dtype=np.int64)), order.shape[0], *sums)
    return (*out, digits[order])


def _segments_table(features: list[_Feature], combos: list[tuple[int, ...]], sizes: list[int],
                    results: list[tuple], min_samples: int, weighted: bool) -> pd.DataFrame:
    """Every segment of at least ``min_samples`` (rows, or total weight), in
    mcgrad's order: depth, combination, cell."""
    conditions: list[tuple] = []
    depth: list[int] = []
    parts = {key: [] for key in ("rows", "total", "variance", "range")}
    for combo, (rows, total, variance, high, low, table) in zip(combos, results, strict=True):
        kept = np.flatnonzero((total if weighted else rows) >= min_samples)
        parts["rows"].append(rows[kept])
        parts["total"].append(total[kept])
        parts["variance"].append(variance[kept])
        parts["range"].append(high[kept] - low[kept])
        radix = [sizes[f] for f in combo]
        for cell in kept.tolist():
            if table is not None:
                digits = table[cell].tolist()
            else:
                digits = []
                for size in reversed(radix):
                    cell, digit = divmod(cell, size)
                    digits.append(digit)
                digits.reverse()
            conditions.append(tuple(features[f].conditions[d]
                                    for f, d in zip(combo, digits, strict=True)))
            depth.append(len(combo))
    rows = np.concatenate(parts["rows"])
    total = np.concatenate(parts["total"])
    variance = np.concatenate(parts["variance"])
    spread = np.concatenate(parts["range"])
    root = np.sqrt(variance)
    ecce = spread / total
    sigma = root / total
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(root > 0, spread / root, np.where(spread > 0, np.inf, 0.0))
    return pd.DataFrame({
        "segment": np.arange(rows.shape[0]),
        "depth": np.array(depth, dtype=np.int64),
        "definition": [" & ".join(_condition_text(c) for c in cond) if cond else "all rows"
                       for cond in conditions],
        "conditions": conditions,
        "n": rows,
        "weight": total,
        "ecce": ecce,
        "sigma": sigma,
        "ecce_sigma": ratio,
        "pvalue": _ecce_pvalue(ratio),
    }, columns=list(SEGMENT_COLUMNS))
