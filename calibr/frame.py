"""Data-frame verbs: calibration metrics per group, as a tidy DataFrame (spec section 6).

R users write::

    df |> group_by(model) |> summarise(ece = ece(p, y), mce2 = mce(p, y, bins = 2))

With calibr and pandas::

    calibr.summarise(df.groupby("model"), p="p", y="y",
                     ece="ece", mce2=calibr.metric("mce", bins=2))

The grouping is pandas' own (a ``DataFrameGroupBy`` with any keys and its
``observed=``, ``dropna=`` and ``sort=``), the result is a fresh DataFrame with
the group keys as columns, one column per metric, one row per group and a
default index, and the numbers are those of calling each metric on each
group's rows.

How it is fast and still exact: the rows are validated once by
``calibr._validation.prepare()`` (which works row by row, so a group's rows
validate and convert exactly as they would alone), sorted by group, and each
metric is then called on each group's slice of the canonical arrays. Only the
validation work on pandas objects is shared; every number comes from the
public metric itself. If the shared validation finds bad input, each group's
original rows are validated on their own, so that the error names the group
and the position within it, as a per-group call of the metric would.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from ._binned_metrics import ece, mce
from ._kernel_metrics import mmce, skce
from ._validation import (
    InputError,
    InputTypeError,
    Prepared,
    _class_list,
    _fmt,
    check_flag,
    prepare,
)

__all__ = ["Metric", "metric", "summarise", "METRICS"]

#: The metrics that can be named by a string.
METRICS: dict[str, Callable[..., Any]] = {"ece": ece, "mce": mce, "skce": skce, "mmce": mmce}

#: Arguments that belong to the data, not to a metric: summarise() sets them.
_DATA_ARGS = ("p", "y", "classes", "na_rm")


# --------------------------------------------------------------------------
# metric specifications


@dataclass(frozen=True)
class Metric:
    """A metric with its options, as one column of :func:`summarise`.

    Made by :func:`metric`; ``Metric("mce", {"bins": 2})`` is R's
    ``mce(p, y, bins = 2)``.

    Attributes
    ----------
    func : str or callable
        A name from :data:`METRICS` (``"ece"``, ``"mce"``, ``"skce"``,
        ``"mmce"``) or a callable with calibr's metric signature.
    options : dict
        Keyword arguments passed on every call (e.g. ``{"bins": 2}``).
    """

    func: str | Callable[..., Any]
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def default_name(self) -> str:
        """The column name when none is given: ``"mce"`` or ``"mce(bins=2)"``."""
        base = self.func if isinstance(self.func, str) else _callable_name(self.func)
        if not self.options:
            return base
        args = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{base}({args})"


def metric(func: str | Callable[..., Any], /, **options: Any) -> Metric:
    """A metric with options, for :func:`summarise` (R's ``mce(p, y, bins = 2)``).

    Parameters
    ----------
    func : str or callable
        ``"ece"``, ``"mce"``, ``"skce"`` or ``"mmce"``, or a callable with
        calibr's metric signature (such as ``calibr.mce`` itself, or your own
        function; see :func:`summarise` for what it receives).
    **options
        The metric's options, e.g. ``bins=2``, ``type="confidence"``,
        ``estimator="ul"``. The data arguments (``p``, ``y``, ``classes``,
        ``na_rm``) are set by :func:`summarise` and cannot be given here.

    Returns
    -------
    Metric

    Raises
    ------
    ValueError
        (``calibr.InputError``) for an unknown metric name or an option the
        metric does not have.

    Examples
    --------
    >>> from calibr.frame import metric
    >>> metric("mce", bins=2)
    Metric(func='mce', options={'bins': 2})
    >>> metric("mce", bins=2).default_name
    'mce(bins=2)'
    """
    spec = Metric(func, dict(options))
    _resolve(spec)  # unknown names and options fail here, before any data is read
    return spec


def _callable_name(func: Callable[..., Any]) -> str:
    if isinstance(func, functools.partial):
        inner = _callable_name(func.func)
        if func.keywords:
            args = ", ".join(f"{k}={v!r}" for k, v in func.keywords.items())
            return f"{inner}({args})"
        return inner
    return getattr(func, "__name__", type(func).__name__)


def _unknown_metric(value: Any, specs: bool = False) -> InputError:
    """The error for a ``metrics`` entry that is not a calibr metric."""
    return InputError(
        "`metrics` must name calibr metrics ("
        + ", ".join(repr(m) for m in METRICS)
        + ") or be callables"
        + (" or calibr.metric(...) specs" if specs else "")
        + f"; got {_fmt(value)}."
    )


def _resolve(spec: Metric) -> Callable[..., Any]:
    """The function of ``spec``, after checking its name and option names."""
    if isinstance(spec.func, str):
        if spec.func not in METRICS:
            raise _unknown_metric(spec.func)
        func = METRICS[spec.func]
    elif callable(spec.func):
        func = spec.func
    else:
        raise _unknown_metric(spec.func)
    clash = [k for k in spec.options if k in _DATA_ARGS]
    if clash:
        raise InputError(
            f"The option {clash[0]!r} of metric {spec.default_name!r} is set by the data "
            "arguments of summarise(); pass it there instead."
        )
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # some builtins have no signature: let the call decide
        return func
    try:
        sig.bind_partial(None, None, **spec.options)
    except TypeError:
        known = [
            n for n, prm in list(sig.parameters.items())[2:]
            if prm.kind in (prm.POSITIONAL_OR_KEYWORD, prm.KEYWORD_ONLY) and n not in _DATA_ARGS
        ]
        bad = [k for k in spec.options if k not in sig.parameters]
        raise InputError(
            f"The metric {spec.default_name!r} has no option {bad[0] if bad else '?'!r}; "
            f"its options are {', '.join(known) if known else 'none'}."
        ) from None
    return func


def _as_spec(value: Any) -> Metric:
    if isinstance(value, Metric):
        return value
    if isinstance(value, str) or callable(value):
        return Metric(value)
    raise _unknown_metric(value, specs=True)


def _metric_columns(
    metrics: Any, named: Mapping[str, Any]
) -> list[tuple[str, Metric, Callable[..., Any]]]:
    """``[(column name, spec, function)]`` from ``metrics=`` and ``**named``."""
    items: list[tuple[str, Metric]] = []
    if metrics is None and not named:
        metrics = ("ece", "mce")
    if metrics is not None:
        if isinstance(metrics, Mapping):
            items += [(str(k), _as_spec(v)) for k, v in metrics.items()]
        elif isinstance(metrics, (str, Metric)) or callable(metrics):
            spec = _as_spec(metrics)
            items.append((spec.default_name, spec))
        elif isinstance(metrics, Sequence):
            for m in metrics:
                spec = _as_spec(m)
                items.append((spec.default_name, spec))
        else:
            raise InputError(
                "`metrics` must be a metric, a list of metrics or a dict of them; "
                f"got {type(metrics).__name__}."
            )
    items += [(k, _as_spec(v)) for k, v in named.items()]
    if not items:
        raise InputError("`metrics` must name at least one metric; got none.")
    names = [name for name, _ in items]
    dup = [n for n in names if names.count(n) > 1]
    if dup:
        raise InputError(
            f"Metric column names must be unique; {dup[0]!r} appears {names.count(dup[0])} "
            "times. Name the columns with a dict or keyword arguments, e.g. "
            "mce2=calibr.metric('mce', bins=2)."
        )
    return [(name, spec, _resolve(spec)) for name, spec in items]


# --------------------------------------------------------------------------
# columns of the data


_INT_NAME = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class Columns:
    """The probability and label columns of a data frame."""

    p: Hashable | list  # one column key (binary) or a list of them (multiclass)
    y: Hashable
    classes: tuple | None  # explicit class labels for prepare(), or None


def resolve_columns(
    frame: pd.DataFrame,
    p: Any,
    y: Any,
    p_prefix: str | None,
    classes: Sequence | None,
) -> Columns:
    """Check the column arguments against ``frame`` and derive class labels.

    A column is named by its label; when the frame's columns are a MultiIndex,
    by its full key, a tuple (and a list of tuples names several columns).
    Every name must select exactly one column.

    With ``p_prefix``, the probability columns are those whose names start with
    the prefix, in the frame's order; their class labels are the rest of each
    name. When the labels in ``y`` are numbers and every such rest is a plain
    decimal integer (``"0"``, ``"12"``, ``"-1"``; not ``"01"``), the class labels
    are those integers, so that the label 3 matches ``p_3``; otherwise they are
    the strings. ``classes=`` overrides this; it follows the metrics' rules (an
    ordered sequence of distinct labels: no set, no string).
    """
    if classes is not None:
        classes = tuple(_class_list(classes))
    if y is None:
        raise InputError("`y` must name the label column; got None.")
    if not _is_key(frame, y):
        raise InputError(f"`y` must name a column of the data; got {_fmt(y)}.")
    _check_one_column(frame, y, "y", f"`y` must name a column of the data; got {_fmt(y)}.")
    if p_prefix is not None:
        if p is not None:
            raise InputError("Give the probability columns by `p` or by `p_prefix`, not both.")
        if not isinstance(p_prefix, str) or not p_prefix:
            raise InputError(f"`p_prefix` must be a non-empty string; got {_fmt(p_prefix)}.")
        cols = [c for c in frame.columns if isinstance(c, str) and c.startswith(p_prefix)]
        if y in cols:
            raise InputError(
                f"The label column {y!r} also starts with p_prefix {p_prefix!r}; "
                "list the probability columns with `p` instead."
            )
        if len(cols) < 2:
            raise InputError(
                f"`p_prefix` must match at least two columns (one per class); "
                f"{p_prefix!r} matches {len(cols)}"
                + (f" ({cols[0]!r})." if cols else ".")
            )
        for c in cols:
            _check_one_column(frame, c, "p_prefix", f"`p_prefix` matched {_fmt(c)}, not a column.")
        if classes is None:
            classes = _classes_from_names(
                [c[len(p_prefix):] for c in cols], frame[y], f"the columns with prefix {p_prefix!r}"
            )
        return Columns(p=cols, y=y, classes=tuple(classes))
    if p is None:
        raise InputError("`p` must name the probability column(s), or give `p_prefix`; got None.")
    if _is_key(frame, p):
        _check_one_column(frame, p, "p", f"`p` must name a column of the data; got {_fmt(p)}.")
        return Columns(p=p, y=y, classes=classes)
    if isinstance(p, Sequence) and not isinstance(p, (str, bytes)):
        cols = list(p)
        for c in cols:
            if not _is_key(frame, c):
                raise InputError(f"`p` must name columns of the data; {_fmt(c)} is not one.")
            _check_one_column(frame, c, "p", f"`p` must name columns of the data; {_fmt(c)} is "
                                             "not one.")
        if len(cols) < 2:
            raise InputError(
                "`p` must name one column (binary) or at least two (one per class); "
                f"got a list of {len(cols)}."
            )
        return Columns(p=cols, y=y, classes=classes)
    raise InputError(
        f"`p` must be a column name or a list of column names; got {type(p).__name__}."
    )


def _is_label(x: Any) -> bool:
    """A single column label (not a list or tuple of them)."""
    return isinstance(x, str) or (isinstance(x, Hashable) and not isinstance(x, tuple))


def _is_key(frame: pd.DataFrame, x: Any) -> bool:
    """A single column key of ``frame``: a label, or a tuple if its columns are a MultiIndex."""
    if isinstance(x, tuple):
        return isinstance(frame.columns, pd.MultiIndex)
    return _is_label(x)


def _check_one_column(frame: pd.DataFrame, key: Any, name: str, missing: str) -> None:
    """Raise ``InputError(missing)`` unless ``key`` is a column, and an error naming
    the count unless it selects exactly one (a duplicated name, or a partial key
    of a MultiIndex, selects several)."""
    try:
        loc = frame.columns.get_loc(key)
    except (KeyError, TypeError, pd.errors.InvalidIndexError):
        raise InputError(missing) from None
    if isinstance(loc, (int, np.integer)):
        return
    count = int(np.count_nonzero(loc)) if isinstance(loc, np.ndarray) else len(
        range(len(frame.columns))[loc])
    fix = (
        "give the full key of one column (a tuple)" if isinstance(frame.columns, pd.MultiIndex)
        else "rename the columns so that each name is unique"
    )
    raise InputError(
        f"`{name}` must name one column each; {_fmt(key)} names {count} columns of the data: "
        f"{fix}."
    )


def _classes_from_names(names: list[str], y: pd.Series, source: str) -> list:
    """Class labels from names: integers if the labels in ``y`` are numbers and every
    name is a plain decimal integer; the strings if the labels are not numbers."""
    dtype = y.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    kind = getattr(dtype, "kind", "O")
    if kind == "O":
        inferred = pd.api.types.infer_dtype(y, skipna=True)
        kind = {"integer": "i", "floating": "f", "mixed-integer-float": "f"}.get(inferred, "O")
    if kind in "iuf":
        if all(_INT_NAME.fullmatch(s) for s in names):
            return [int(s) for s in names]
        raise InputError(
            f"The labels in {y.name!r} are numbers, but {source} "
            f"name the classes {', '.join(repr(s) for s in names[:5])}"
            f"{', ...' if len(names) > 5 else ''}; pass classes= to give the label of each column."
        )
    return names


# --------------------------------------------------------------------------
# groups


@dataclass
class Groups:
    """The rows of each group, in the order of pandas' result.

    ``keys`` is a DataFrame of the group keys (one row per group, pandas'
    order, default index) or None for ungrouped data; ``ids`` gives each row
    of ``frame`` its group's position in ``keys`` (-1: dropped by pandas, e.g.
    a missing key with ``dropna=True``); ``sizes`` is the row count of each
    group (0 for unobserved categories with ``observed=False``).
    """

    frame: pd.DataFrame
    keys: pd.DataFrame | None
    ids: np.ndarray
    sizes: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.sizes)

    def describe(self, g: int) -> str:
        if self.keys is None:
            return ""
        row = self.keys.iloc[g]
        return ", ".join(f"{k}={_fmt(v)}" for k, v in row.items())


def groups_of(data: Any) -> Groups:
    """Groups of a DataFrame (one group) or a DataFrameGroupBy (pandas' groups)."""
    if isinstance(data, pd.DataFrame):
        n = len(data)
        return Groups(data, None, np.zeros(n, dtype=np.int64), np.array([n], dtype=np.int64))
    if not isinstance(data, DataFrameGroupBy):
        raise InputTypeError(
            "`data` must be a pandas DataFrame or DataFrameGroupBy (df.groupby(...)); "
            f"got {type(data).__name__}."
        )
    frame = data.obj
    if getattr(data, "as_index", True):
        size = data.size()
        sizes = size.to_numpy(dtype=np.int64)
        keys = pd.DataFrame(index=size.index).reset_index()  # pandas names unnamed keys
    else:
        # as_index=False: the keys are columns of pandas' results. Its size() would
        # add a column "size" (an error if a key has that name); a named
        # aggregation with a fresh name counts the same rows of the same groups.
        if len(frame.columns) == 0:
            raise InputError("`data` has no columns, so it has no probability column.")
        fresh = "__calibr_size__"
        while fresh in frame.columns:
            fresh += "_"
        counted = data.agg(**{fresh: (frame.columns[0], "size")})
        sizes = counted[fresh].to_numpy(dtype=np.int64)
        keys = counted.drop(columns=fresh).reset_index(drop=True)
    ids = _row_groups(data.ngroup(), sizes)
    return Groups(frame, keys, ids, sizes)


def _row_groups(ngroup: pd.Series, sizes: np.ndarray) -> np.ndarray:
    """Each row's position in ``size()`` (-1: in no group), from ``ngroup()``.

    pandas numbers the groups in the order of ``size()``, but not always over
    the same groups: for categorical keys with ``observed=False`` it skips the
    empty (unobserved) groups, while for time bins (``pd.Grouper(freq=...)``) it
    counts the empty bins too. Both numberings are tried, and the one whose
    per-group row counts equal ``size()`` is used.
    """
    ng = ngroup.to_numpy(dtype=np.float64, na_value=np.nan)
    local = np.where(np.isnan(ng), -1, ng).astype(np.int64)
    member = local >= 0
    top = int(local.max(initial=-1))
    observed = np.flatnonzero(sizes > 0)
    candidates = []
    if top < len(sizes):  # numbered over all groups of size()
        candidates.append(local)
    if top < observed.size:  # numbered over the observed groups only
        ids = np.full(local.shape, -1, dtype=np.int64)
        ids[member] = observed[local[member]]
        candidates.append(ids)
    for ids in candidates:
        if np.array_equal(np.bincount(ids[member], minlength=len(sizes)), sizes):
            return ids
    raise RuntimeError(  # pragma: no cover - a pandas contract changed
        "calibr could not match pandas' groups to their rows."
    )


def complete_rows(frame: pd.DataFrame, cols: Columns) -> np.ndarray:
    """Rows with no missing value in the probability or label columns."""
    pmiss = frame[cols.p].isna()
    if isinstance(pmiss, pd.DataFrame):
        pmiss = pmiss.any(axis=1)
    return ~(pmiss.to_numpy(dtype=bool) | frame[cols.y].isna().to_numpy(dtype=bool))


@dataclass
class Split:
    """Canonical arrays sorted by group: group ``g`` is ``p[start[g]:start[g+1]]``."""

    prep: Prepared | None
    p: np.ndarray | None
    y: np.ndarray | None
    start: np.ndarray
    complete: np.ndarray  # complete rows per group


def split(groups: Groups, cols: Columns, na_rm: bool) -> Split:
    """Validate all kept rows once and sort the canonical arrays by group.

    Raises whatever ``prepare()`` raises; callers then fall back to per-group
    calls, which report the failing group.
    """
    frame = groups.frame
    keep = groups.ids >= 0
    if na_rm:
        keep &= complete_rows(frame, cols)
    ids = groups.ids[keep]
    complete = np.bincount(ids, minlength=groups.n_groups)
    start = np.concatenate([[0], np.cumsum(complete)])
    if not keep.any():
        return Split(None, None, None, start, complete)
    if keep.all():
        p_obj, y_obj = frame[cols.p], frame[cols.y]
    else:
        p_obj, y_obj = frame[cols.p][keep], frame[cols.y][keep]
    prep = prepare(p_obj, y_obj, classes=cols.classes, na_rm=False)
    order = np.argsort(ids, kind="stable")
    if np.all(order[1:] > order[:-1]):  # already sorted (e.g. grouped blocks)
        return Split(prep, prep.p, prep.y, start, complete)
    return Split(prep, prep.p[order], prep.y[order], start, complete)


def group_frames(groups: Groups, cols: Columns) -> Iterator[tuple[int, Any, pd.Series]]:
    """Each observed group's probability and label rows of the original frame
    (the slow, exact path): ``(g, p rows, y rows)``."""
    p_obj, y_obj = groups.frame[cols.p], groups.frame[cols.y]
    order = np.argsort(groups.ids, kind="stable")
    ids_sorted = groups.ids[order]
    bounds = np.searchsorted(ids_sorted, np.arange(groups.n_groups + 1))
    for g in range(groups.n_groups):
        if groups.sizes[g] > 0:
            rows = order[bounds[g]:bounds[g + 1]]
            yield g, p_obj.iloc[rows], y_obj.iloc[rows]


def with_context(err: Exception, groups: Groups, g: int, what: str = "") -> Exception:
    """The same exception type with the group (and metric) appended to the message."""
    parts = [p for p in (what, groups.describe(g) and f"group {groups.describe(g)}") if p]
    if not parts:
        return err
    msg = f"{err} [{'; '.join(parts)}]"
    try:
        return type(err)(msg)
    except Exception:  # noqa: BLE001 - an exception type with another constructor
        return (InputTypeError if isinstance(err, TypeError) else InputError)(msg)


# --------------------------------------------------------------------------
# the verb


def summarise(
    data: pd.DataFrame | DataFrameGroupBy,
    p: Hashable | Sequence[Hashable] | None = None,
    y: Hashable | None = None,
    metrics: Any = None,
    *,
    p_prefix: str | None = None,
    classes: Sequence | None = None,
    na_rm: bool = False,
    **named_metrics: Any,
) -> pd.DataFrame:
    """Calibration metrics per group, as a tidy DataFrame (R's ``summarise()``).

    Parameters
    ----------
    data : DataFrame or DataFrameGroupBy
        The predictions, whole or grouped by ``df.groupby(keys, ...)`` with any
        number of keys. The grouping's ``observed=``, ``dropna=`` and ``sort=``
        act as in pandas: with ``observed=False`` an unobserved category
        combination gets a row of NaN (like pandas' ``mean()``); with
        ``dropna=True`` (pandas' default) rows with a missing key belong to no
        group; with ``dropna=False`` they form their own group.
    p : str or list of str, optional
        The probability column: one column name for binary problems (P(y = 1)),
        or a list of column names, one per class. Labels in ``y`` are then
        matched to the column names (as the metrics match them for a DataFrame
        ``p``), unless ``classes=`` gives the label of each column: for R's
        1-based codes ``y + 1``, pass ``classes=range(1, K + 1)``.
    y : str
        The label column.
    metrics : str, callable, Metric, list or dict, default ("ece", "mce")
        The metrics, one column each. A name (``"ece"``, ``"mce"``,
        ``"skce"``, ``"mmce"``), a callable, or :func:`calibr.metric` with
        options (``calibr.metric("mce", bins=2)``). A list names each column
        after its metric (``"mce"``, or ``"mce(bins=2)"`` with options); a dict
        maps column names to metrics.
    p_prefix : str, optional, keyword-only
        Instead of ``p``: every column whose name starts with this prefix is a
        probability column, in the frame's order, and the rest of each name is
        its class label. If the labels in ``y`` are numbers and every rest is a
        plain decimal integer, the class labels are those integers (``y == 3``
        is the class of column ``p_3``); otherwise they are the strings, and
        numeric labels with non-integer names are an error (pass ``classes=``).
    classes : sequence, optional, keyword-only
        The label of each probability column (as for the metrics); overrides
        the labels derived from ``p_prefix``.
    na_rm : bool, default False, keyword-only
        Drop rows with a missing probability or label before computing (as the
        metrics' ``na_rm``); otherwise missing values are an error.
    **named_metrics
        More metrics as ``column=metric``, e.g. ``ece="ece"`` or
        ``mce2=calibr.metric("mce", bins=2)`` (R's
        ``summarise(mce2 = mce(p, y, bins = 2))``).

    Returns
    -------
    DataFrame
        A new frame: the group keys as columns (none for an ungrouped
        DataFrame), then one float column per metric, one row per group in
        pandas' group order, and a default RangeIndex.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for unknown columns, metrics or options, and
        for bad probabilities or labels. Errors found in a group end with the
        group and the metric in brackets, e.g. ``[metric 'ece'; group model='a']``.
    TypeError
        If ``data`` is not a DataFrame or DataFrameGroupBy, or ``p`` is not numeric.

    Notes
    -----
    Each number equals calling the metric on the group's rows, e.g.
    ``calibr.mce(g["p"], g["y"], bins=2)``. The rows are validated once and
    each metric is then called on each group's slice of the validated arrays.
    A callable metric is called as ``f(p, y, **options)``: ``p`` is a float64
    array of shape ``(n,)`` or ``(n, K)``, ``y`` holds 0/1 values (binary) or
    0-based class codes, with ``classes=range(K)`` added for multiclass input
    (the calling convention of calibr's metrics).

    ``data`` is never modified. The verb takes ``data`` first, so it chains
    with ``.pipe()``: ``df.groupby("model").pipe(calibr.summarise, p="p", y="y")``.

    Examples
    --------
    R's ``summarise(mce = mce(p, y, bins = 2))`` from the help page of ``mce()``:

    >>> import pandas as pd
    >>> from calibr.frame import metric, summarise
    >>> predictions = pd.DataFrame({"p": [0.10, 0.20, 0.80, 0.90], "y": [0, 0, 1, 1]})
    >>> summarise(predictions, p="p", y="y", mce=metric("mce", bins=2)).round(12)
        mce
    0  0.15

    Per group, several metrics:

    >>> df = pd.DataFrame({
    ...     "model": ["a", "a", "a", "a", "b", "b", "b", "b"],
    ...     "p": [0.1, 0.2, 0.8, 0.9, 0.3, 0.6, 0.7, 0.4],
    ...     "y": [0, 0, 1, 1, 1, 0, 1, 0],
    ... })
    >>> df.groupby("model").pipe(
    ...     summarise, p="p", y="y", metrics=["ece", metric("mce", bins=2)]
    ... ).round(4)
      model   ece  mce(bins=2)
    0     a  0.15         0.15
    1     b  0.50         0.15
    """
    columns = _metric_columns(metrics, named_metrics)
    groups = groups_of(data)
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
    na_rm = check_flag(na_rm, "na_rm")

    values = np.full((groups.n_groups, len(columns)), np.nan)
    try:
        sp = split(groups, cols, na_rm)
    except (ValueError, TypeError):
        _raise_per_group(groups, cols, na_rm)
        raise
    if sp.prep is not None:
        extra = {} if sp.prep.binary else {"classes": range(sp.prep.k)}
        for g in range(groups.n_groups):
            a, b = sp.start[g], sp.start[g + 1]
            if groups.sizes[g] == 0:
                continue  # unobserved (observed=False): NaN, as pandas
            if a == b:  # every row of the group had a missing value (na_rm=True)
                _raise_per_group(groups, cols, na_rm, only=g)
            pg, yg = sp.p[a:b], sp.y[a:b]
            for j, (name, spec, func) in enumerate(columns):
                try:
                    values[g, j] = func(pg, yg, **spec.options, **extra)
                except (ValueError, TypeError) as err:
                    raise with_context(err, groups, g, f"metric {name!r}") from None
    elif groups.sizes.any() or groups.keys is None:  # no complete rows, or empty data
        _raise_per_group(groups, cols, na_rm)

    result = pd.DataFrame(values, columns=[name for name, _, _ in columns])
    if groups.keys is None:
        return result
    clash = [c for c in result.columns if c in groups.keys.columns]
    if clash:
        raise InputError(
            f"The metric column {clash[0]!r} has the name of a group key; name it "
            "differently with a dict or a keyword argument."
        )
    keys = groups.keys.reset_index(drop=True)
    return pd.concat([keys, result], axis=1)


def _raise_per_group(groups: Groups, cols: Columns, na_rm: bool, only: int | None = None) -> None:
    """Validate each group's original rows as a metric called on the group would,
    and raise the first error with the group appended. Returns if none fails."""
    if groups.keys is None:
        prepare(groups.frame[cols.p], groups.frame[cols.y], classes=cols.classes, na_rm=na_rm)
        return
    parts = group_frames(groups, cols)
    while True:
        try:
            g, p_rows, y_rows = next(parts)
        except StopIteration:
            return
        except Exception:  # noqa: BLE001 - pandas cannot slice these columns (e.g. a
            return  # structured dtype): the caller raises the error of the whole frame
        if only is not None and g != only:
            continue
        try:
            prepare(p_rows, y_rows, classes=cols.classes, na_rm=na_rm)
        except (ValueError, TypeError) as err:
            raise with_context(err, groups, g) from None
