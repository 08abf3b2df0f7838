"""The group layer: the rows of a data frame, by group, as canonical arrays.

One module turns a ``DataFrame`` or ``DataFrameGroupBy`` and the names of its
probability and label columns into what the metrics read, for every verb that
works per group: :func:`calibr.summarise`, :func:`calibr.calibration_table`
with ``data=``, the command line (``calibr.cli``) and the plots
(``calibr.plot``). The rules are stated in ``docs/definitions.md``, sections
"Inputs" and "Data-frame verbs".

::

    groups = groups_of(data)                      # pandas' groups, keys and order
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
    sp = split(groups, cols, na_rm)               # validate every row once
    for part in sp.parts():                       # each observed group, pandas' order
        with part.errors("metric 'ece'"):         # errors name the group (and metric)
            value = ece(part.p, part.y)

How it is fast and still exact: ``calibr._input.prepare()`` works row by
row, so a group's rows validate and convert exactly as they would alone. The
rows of all groups are therefore validated once and sorted by group
(:func:`split`); each group is then a contiguous slice of the canonical
arrays, and every number is that of the metric called on its slice. If the
shared validation finds bad input, each group's original rows are validated
on their own (:func:`raise_per_group`), so that the error names the group and
the position within it, as a per-group call of the metric would.

For kernels that compute every group in one pass (``calibr._kernels.grouped``),
:class:`Split` also exposes the canonical arrays in the frame's order with the
group of each row (``ids``) and the offsets of the groups in the sorted arrays
(``start``); the arrays sorted by group are made only when read (one stable
pass that puts each row in its group's next slot). Per-(group, bin) sums can
be one pass over the rows in the frame's order, which adds each group's rows
in the order of its slice, and a recurrence over the rows sorted by group
restarts at each ``start[g]``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from .._kernels.grouped import by_group
from . import (
    InputError,
    InputTypeError,
    arg,
    check_weight_values,
    class_list,
    convert_weights,
    extended,
    fmt,
    prepare,
)

__all__ = [
    "Columns",
    "Groups",
    "Part",
    "Split",
    "by_columns",
    "classes_from_names",
    "complete_rows",
    "group_seeds",
    "groups_of",
    "numbered_classes",
    "raise_per_group",
    "resolve_columns",
    "split",
    "subframes",
    "weights_column",
    "with_context",
]


# --------------------------------------------------------------------------
# columns of the data


_INT_NAME = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class Columns:
    """The probability and label columns of a data frame."""

    p: Hashable | list  # one column key (binary) or a list of them (multiclass)
    y: Hashable
    classes: tuple | None  # explicit class labels for prepare(), or None

    @property
    def binary(self) -> bool:
        """One probability column (a vector ``p``)."""
        return not isinstance(self.p, list)


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
    name (see :func:`classes_from_names`). ``classes=`` overrides this; it
    follows the metrics' rules (an ordered sequence of distinct labels: no set,
    no string).
    """
    if classes is not None:
        classes = tuple(class_list(classes))
    if y is None:
        raise InputError("`y` must name the label column; got None.", param="y")
    if not _is_key(frame, y):
        raise InputError(f"`y` must name a column of the data; got {fmt(y)}.", param="y")
    _check_one_column(frame, y, "y", f"`y` must name a column of the data; got {fmt(y)}.")
    if p_prefix is not None:
        if p is not None:
            raise InputError(f"Give the probability columns by {arg('p', 'use')} or by "
                             f"{arg('p_prefix', 'use')}, not both.", param="p_prefix")
        if not isinstance(p_prefix, str) or not p_prefix:
            raise InputError(f"`p_prefix` must be a non-empty string; got {fmt(p_prefix)}.",
                             param="p_prefix")
        cols = [c for c in frame.columns if isinstance(c, str) and c.startswith(p_prefix)]
        if y in cols:
            raise InputError(
                f"The label column {y!r} also starts with {arg('p_prefix')} {p_prefix!r}; "
                f"list the probability columns with {arg('p', 'use')} instead.",
                param="p_prefix"
            )
        if len(cols) < 2:
            raise InputError(
                f"`p_prefix` must match at least two columns (one per class); "
                f"{p_prefix!r} matches {len(cols)}"
                + (f" ({cols[0]!r})." if cols else "."),
                param="p_prefix"
            )
        for c in cols:
            _check_one_column(frame, c, "p_prefix", f"`p_prefix` matched {fmt(c)}, not a column.")
        if classes is None:
            classes = classes_from_names(
                [c[len(p_prefix):] for c in cols], frame[y], f"the columns with prefix {p_prefix!r}"
            )
        return Columns(p=cols, y=y, classes=tuple(classes))
    if p is None:
        raise InputError(f"`p` must name the probability column(s), or give "
                         f"{arg('p_prefix', 'use')}; got None.", param="p")
    if _is_key(frame, p):
        _check_one_column(frame, p, "p", f"`p` must name a column of the data; got {fmt(p)}.")
        return Columns(p=p, y=y, classes=classes)
    if isinstance(p, Sequence) and not isinstance(p, (str, bytes)):
        cols = list(p)
        for c in cols:
            if not _is_key(frame, c):
                raise InputError(f"`p` must name columns of the data; {fmt(c)} is not one.",
                                 param="p")
            _check_one_column(frame, c, "p", f"`p` must name columns of the data; {fmt(c)} is "
                                             "not one.")
        if len(cols) < 2:
            raise InputError(
                "`p` must name one column (binary) or at least two (one per class); "
                f"got a list of {len(cols)}.",
                param="p"
            )
        if classes is None:
            numbered = numbered_classes(cols, frame[y])
            classes = None if numbered is None else tuple(numbered)
        return Columns(p=cols, y=y, classes=classes)
    raise InputError(
        f"`p` must be a column name or a list of column names; got {type(p).__name__}.",
        param="p"
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
        raise InputError(missing, param=name) from None
    if isinstance(loc, (int, np.integer)):
        return
    count = int(np.count_nonzero(loc)) if isinstance(loc, np.ndarray) else len(
        range(len(frame.columns))[loc])
    fix = (
        "give the full key of one column (a tuple)" if isinstance(frame.columns, pd.MultiIndex)
        else "rename the columns so that each name is unique"
    )
    raise InputError(
        f"`{name}` must name one column each; {fmt(key)} names {count} columns of the data: "
        f"{fix}.",
        param=name
    )


#: The number after the common prefix of numbered columns: 0, 1, 12 (not 01, not -1).
_NUMBER = re.compile(r"0|[1-9][0-9]*")


def numbered_classes(names: Sequence, y: pd.Series) -> list[int] | None:
    """The class labels of probability columns named by one prefix and numbers
    (``p_0, p_1, p_2``, or ``0, 1, 2``) when the labels in ``y`` are numbers: those
    numbers, so that the label 2 is the class of ``p_2``, as with ``p_prefix``
    (:func:`classes_from_names`); None for any other names or labels, whose labels
    are then matched to the names themselves (``docs/cli.md``, "Column lists").

    The prefix is the names' longest common start without its trailing digits
    (``p_10, p_11`` have the prefix ``p_``). Names whose numbers could be read two
    ways give None: a prefix ending in ``-`` (``a-1``: the label 1 or -1?) or a
    number with a leading zero (``p_01``).
    """
    if not all(isinstance(c, str) for c in names) or not _numeric_labels(y):
        return None
    prefix = os.path.commonprefix(list(names)).rstrip("0123456789")
    rests = [c[len(prefix):] for c in names]
    if prefix.endswith("-") or not all(_NUMBER.fullmatch(r) for r in rests):
        return None
    return [int(r) for r in rests]


def _numeric_labels(y: pd.Series) -> bool:
    """Are the labels in ``y`` numbers (a Categorical's: its categories)?"""
    dtype = y.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    kind = getattr(dtype, "kind", "O")
    if kind == "O":
        inferred = pd.api.types.infer_dtype(y, skipna=True)
        kind = {"integer": "i", "floating": "f", "mixed-integer-float": "f"}.get(inferred, "O")
    return kind in "iuf"


def classes_from_names(names: list[str], y: pd.Series, source: str) -> list:
    """Class labels from the names of the probability columns (the suffixes after
    ``p_prefix``, or the command line's ``--classes``).

    When the labels in ``y`` are numbers and every name is a plain decimal
    integer (``"0"``, ``"12"``, ``"-1"``; not ``"01"``), the class labels are
    those integers, so that the label 3 matches ``p_3``; numbers with other
    names are an error (``source`` says where the names come from). When the
    labels are not numbers, the class labels are the strings.
    """
    if _numeric_labels(y):
        if all(_INT_NAME.fullmatch(s) for s in names):
            return [int(s) for s in names]
        raise InputError(
            f"The labels in {y.name!r} are numbers, but {source} "
            f"name the classes {', '.join(repr(s) for s in names[:5])}"
            f"{', ...' if len(names) > 5 else ''}; pass {arg('classes', 'hint')} to give the "
            "label of each column.",
            param="y"
        )
    return names


# --------------------------------------------------------------------------
# groups of a DataFrame or DataFrameGroupBy


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
        """``"model='a', fold=1"``: the keys of group ``g`` for messages ("" ungrouped)."""
        if self.keys is None:
            return ""
        row = self.keys.iloc[g]
        return ", ".join(f"{k}={fmt(v)}" for k, v in row.items())

    def rows(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(g, positions in frame)`` of each observed group, in pandas' order."""
        order = np.argsort(self.ids, kind="stable")
        bounds = np.searchsorted(self.ids[order], np.arange(self.n_groups + 1))
        for g in range(self.n_groups):
            if self.sizes[g] > 0:
                yield g, order[bounds[g]:bounds[g + 1]]


def groups_of(data: Any) -> Groups:
    """Groups of a DataFrame (one group) or a DataFrameGroupBy (pandas' groups,
    with its ``observed=``, ``dropna=``, ``sort=`` and ``as_index=``)."""
    if isinstance(data, pd.DataFrame):
        n = len(data)
        return Groups(data, None, np.zeros(n, dtype=np.int64), np.array([n], dtype=np.int64))
    if not isinstance(data, DataFrameGroupBy):
        raise InputTypeError(
            "`data` must be a pandas DataFrame or DataFrameGroupBy (df.groupby(...)); "
            f"got {type(data).__name__}.",
            param="data"
        )
    frame = data.obj
    if getattr(data, "as_index", True):
        try:
            size = data.size()
        except TypeError:  # pandas' bare error of a key it cannot hash
            _check_hashable_keys(data)
            raise
        sizes = size.to_numpy(dtype=np.int64)
        keys = pd.DataFrame(index=size.index).reset_index()  # pandas names unnamed keys
    else:
        # as_index=False: the keys are columns of pandas' results. Its size() would
        # add a column "size" (an error if a key has that name); a named
        # aggregation with a fresh name counts the same rows of the same groups.
        if len(frame.columns) == 0:
            raise InputError("`data` has no columns, so it has no probability column.",
                             param="data")
        fresh = "__calibr_size__"
        while fresh in frame.columns:
            fresh += "_"
        try:
            counted = data.agg(**{fresh: (frame.columns[0], "size")})
        except TypeError:
            _check_hashable_keys(data)
            raise
        sizes = counted[fresh].to_numpy(dtype=np.int64)
        keys = counted.drop(columns=fresh).reset_index(drop=True)
    ids = _row_groups(data.ngroup(), sizes)
    return Groups(frame, keys, ids, sizes)


def unhashable_key_error(name: Any) -> InputTypeError:
    """The refusal of a group key column of lists, arrays or structs (values that
    pandas cannot hash, so cannot group by); the same on every path
    (docs/engines.md, "Types")."""
    return InputTypeError(
        f"The group key {name!r} holds lists, arrays or other unhashable values, which "
        "cannot be group keys; convert the column (e.g. to strings) to group by it.",
        param="by")


def _check_hashable_keys(data: DataFrameGroupBy) -> None:
    """Refuse a key column of unhashable values (pandas' own error, which this
    replaces, is a bare ``TypeError`` from its hash table)."""
    frame = data.obj
    keys = data.keys if isinstance(data.keys, list) else [data.keys]
    for key in keys:
        if not isinstance(key, Hashable) or key not in frame.columns:
            continue
        column = frame[key]
        if isinstance(column, pd.Series) and column.dtype == object:
            for v in column:
                if not isinstance(v, Hashable):
                    raise unhashable_key_error(key)


def _row_groups(ngroup: pd.Series, sizes: np.ndarray) -> np.ndarray:
    """Each row's position in ``size()`` (-1: in no group), from ``ngroup()``.

    pandas numbers the groups in the order of ``size()``, but not always over
    the same groups: for categorical keys with ``observed=False`` it skips the
    empty (unobserved) groups, while for time bins (``pd.Grouper(freq=...)``) it
    counts the empty bins too. Both numberings are tried, and the one whose
    per-group row counts equal ``size()`` is used.
    """
    if ngroup.dtype.kind in "iu":  # no row without a group
        local = ngroup.to_numpy(dtype=np.int64)
    else:
        ng = ngroup.to_numpy(dtype=np.float64, na_value=np.nan)
        local = np.where(np.isnan(ng), -1, ng).astype(np.int64)
    member = local >= 0
    everyone = bool(member.all())
    top = int(local.max(initial=-1))

    def counts_match(ids: np.ndarray) -> bool:
        counted = np.bincount(ids if everyone else ids[member], minlength=len(sizes))
        return bool(np.array_equal(counted, sizes))

    if top < len(sizes) and counts_match(local):  # numbered over all groups of size()
        return local
    observed = np.flatnonzero(sizes > 0)
    if top < observed.size:  # numbered over the observed groups only
        ids = np.full(local.shape, -1, dtype=np.int64)
        ids[member] = observed[local[member]]
        if counts_match(ids):
            return ids
    raise RuntimeError(  # pragma: no cover - a pandas contract changed
        "calibr could not match pandas' groups to their rows."
    )


def by_columns(frame: pd.DataFrame, keys: list) -> DataFrameGroupBy:
    """``frame`` grouped by the columns ``keys`` (a non-empty list) as calibr's own
    tables are: groups in the order of first appearance, a missing key its own
    group, observed combinations only."""
    return frame.groupby(keys, sort=False, dropna=False, observed=True)


def subframes(frame: pd.DataFrame, keys: list) -> list[tuple[tuple, pd.DataFrame]]:
    """``[(key tuple, rows)]`` of :func:`by_columns`; ``[((), frame)]`` without keys."""
    if not keys:
        return [((), frame)]
    return [(key if isinstance(key, tuple) else (key,), sub)
            for key, sub in by_columns(frame, keys)]


def group_seeds(rng: Any, n_groups: int,
                what: str = "groups") -> tuple[list[np.random.SeedSequence], type]:
    """The seed sequence of each group (``SeedSequence(seed).spawn(n_groups)``, or a
    Generator's ``spawn``) and the bit generator to build on it: the random numbers
    of ``summarise(tests=)`` and of ``calibration_table(consistency=)``, and of the
    chunks of :func:`calibr.bootstrap`'s resamples (``what``). ``rng`` is
    None, an integer seed or a Generator (checked by the verbs' ``rng`` rule);
    nothing is ever derived from ``hash()``."""
    if isinstance(rng, np.random.Generator):
        bitgen = rng.bit_generator
        try:
            return bitgen.seed_seq.spawn(n_groups), type(bitgen)
        except (TypeError, AttributeError):
            raise InputTypeError(
                "`rng` must be None, a nonnegative integer seed or a numpy.random.Generator "
                "made from a seed (numpy.random.default_rng(seed)); this Generator cannot "
                f"spawn independent streams for the {what}.",
                param="rng"
            ) from None
    return np.random.SeedSequence(rng).spawn(n_groups), np.random.PCG64


# --------------------------------------------------------------------------
# validation once, canonical arrays sorted by group


def complete_rows(frame: pd.DataFrame, cols: Columns) -> np.ndarray:
    """Rows with no missing value in the probability or label columns (a row of
    a multiclass ``p`` is incomplete if any one of its columns is missing)."""
    pmiss = frame[cols.p].isna()
    if isinstance(pmiss, pd.DataFrame):
        pmiss = pmiss.any(axis=1)
    return ~(pmiss.to_numpy(dtype=bool) | frame[cols.y].isna().to_numpy(dtype=bool))


@dataclass(frozen=True)
class Part:
    """One observed group's slice of a :class:`Split`: ``p`` and ``y`` are views
    of the canonical arrays (float64 ``p``, 0/1 or 0-based codes ``y``)."""

    g: int  # the group's position in ``Groups.keys`` (pandas' order)
    p: np.ndarray
    y: np.ndarray
    groups: Groups
    w: np.ndarray | None = None  # float64 frequency weights of the rows (``weights=``)

    @contextlib.contextmanager
    def errors(self, what: str = "") -> Iterator[None]:
        """Re-raise a ValueError or TypeError of the block with the group (and
        ``what``, e.g. ``"metric 'ece'"``) appended to its message."""
        try:
            yield
        except (ValueError, TypeError) as err:
            raise with_context(err, self.groups, self.g, what) from None


@dataclass(frozen=True)
class Split:
    """The canonical arrays of every kept row, and the same sorted by group.

    ``rows_p`` and ``rows_y`` hold the canonical arrays in the frame's order
    and ``ids`` the group of each row (its position in pandas' order); kernels
    that compute every group in one pass read these. ``p``, ``y`` and
    ``codes`` are the same sorted by group (stably, so each group's rows keep
    the frame's order), made when first read: group ``g`` is the rows
    ``start[g]:start[g + 1]`` of ``p`` and ``y``, and ``codes`` holds the group
    of each row (non-decreasing). The arrays are None when no row is kept (a
    grouping with no observed group); then ``binary`` and ``classes`` are
    unknown (None). ``rows_w`` holds the float64 frequency weights of the kept
    rows (the verbs' ``weights=``, checked as the metrics check them) or None,
    and ``w`` the same sorted by group.
    """

    groups: Groups
    cols: Columns
    na_rm: bool
    rows_p: np.ndarray | None
    rows_y: np.ndarray | None
    binary: bool | None
    classes: tuple | None  # the label of each column (multiclass)
    ids: np.ndarray
    start: np.ndarray
    rows_w: np.ndarray | None = None
    weights: Hashable | None = None  # the name of the weights column

    @functools.cached_property
    def p(self) -> np.ndarray | None:
        return self.by_group(self.rows_p)

    @functools.cached_property
    def w(self) -> np.ndarray | None:
        return self.by_group(self.rows_w)

    @functools.cached_property
    def y(self) -> np.ndarray | None:
        return self.by_group(self.rows_y)

    @functools.cached_property
    def codes(self) -> np.ndarray:
        return self.by_group(self.ids)

    def by_group(self, a: np.ndarray | None) -> np.ndarray | None:
        """``a`` (one value or row per kept row, in the frame's order) sorted by group."""
        return None if a is None else by_group(a, self.ids, self.start)

    @property
    def sizes(self) -> np.ndarray:
        """The kept rows of each group."""
        return np.diff(self.start)

    @property
    def k(self) -> int:
        """The number of classes (1 for binary input)."""
        return 1 if self.rows_p is None or self.rows_p.ndim == 1 else int(self.rows_p.shape[1])

    @property
    def observed(self) -> np.ndarray:
        """Which groups have rows in the data (False: unobserved, ``observed=False``)."""
        return self.groups.sizes > 0

    def parts(self) -> Iterator[Part]:
        """Each observed group's slice, in pandas' order: the one per-group loop.

        A group whose rows were all dropped by ``na_rm=True`` raises the error of
        a metric called on its rows, naming the group.
        """
        if self.rows_p is None:
            return
        for g in range(self.groups.n_groups):
            if self.groups.sizes[g] == 0:
                continue  # unobserved (observed=False): no rows, no part
            a, b = self.start[g], self.start[g + 1]
            if a == b:  # every row of the group had a missing value (na_rm=True)
                raise_per_group(self.groups, self.cols, self.na_rm, only=g,
                                weights=self.weights)
            w = None if self.rows_w is None else self.w[a:b]
            yield Part(g, self.p[a:b], self.y[a:b], self.groups, w)

    def raise_if_emptied(self) -> None:
        """Raise the error of the first observed group whose rows were all dropped
        by ``na_rm=True``, as :meth:`parts` does when it reaches it."""
        emptied = np.flatnonzero(self.observed & (self.sizes == 0))
        if emptied.size:
            raise_per_group(self.groups, self.cols, self.na_rm, only=int(emptied[0]),
                            weights=self.weights)


def weights_column(frame: pd.DataFrame, weights: Any) -> Hashable | None:
    """Check the verbs' ``weights=``: None, or the name of one column of ``frame``."""
    if weights is None:
        return None
    missing = f"`weights` must name a column of the data; got {fmt(weights)}."
    if not _is_key(frame, weights):
        raise InputError(missing, param="weights")
    _check_one_column(frame, weights, "weights", missing)
    return weights


def split(groups: Groups, cols: Columns, na_rm: bool, weights: Hashable | None = None, *,
          partial: bool = False) -> Split:
    """Validate every row of every group once: the canonical arrays, by group.

    Bad input raises the error of a metric called on the first failing group's
    rows, with the group appended (see :func:`raise_per_group`). With
    ``weights`` (a column checked by :func:`weights_column`), the weights are
    checked as the metrics check them (``docs/definitions.md``, "Frequency
    weights"): every weight of a row in a group, also of a row that
    ``na_rm=True`` drops, and a positive total for each group's kept rows.

    ``partial``: the rows are one part of the data (a Dask partition,
    ``calibr._engines.dask``), in which a group may have no kept rows, or kept weights
    that total 0; those two checks are then left to the caller, on the parts'
    merged counts.
    """
    try:
        sp = _split(groups, cols, na_rm, weights)
    except (ValueError, TypeError):
        raise_per_group(groups, cols, na_rm, weights=weights)
        raise
    if partial:
        return sp
    if sp.rows_p is None and (groups.sizes.any() or groups.keys is None):
        raise_per_group(groups, cols, na_rm, weights=weights)  # no complete rows, or empty
    if sp.rows_w is not None:
        with np.errstate(over="ignore"):
            totals = np.bincount(sp.ids, weights=sp.rows_w, minlength=groups.n_groups)
        bad = np.flatnonzero((sp.sizes > 0) & ~(np.isfinite(totals) & (totals > 0)))
        for g in bad:  # the error of the group's own rows (a total of 0, or an overflow)
            raise_per_group(groups, cols, na_rm, only=int(g), weights=weights)
    return sp


def _split(groups: Groups, cols: Columns, na_rm: bool, weights: Hashable | None) -> Split:
    frame = groups.frame
    member = groups.ids >= 0
    keep = member.copy()
    if na_rm:
        keep &= complete_rows(frame, cols)
    all_kept = bool(keep.all())
    ids = groups.ids if all_kept else groups.ids[keep]
    start = np.zeros(groups.n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(ids, minlength=groups.n_groups), out=start[1:])
    rows_w = None
    if weights is not None:
        # every weight of a row in a group is checked, also of one na_rm drops
        w_obj = frame[weights] if bool(member.all()) else frame[weights][member]
        w_member = convert_weights(w_obj, None, len(w_obj))
        check_weight_values(w_member, None)
        rows_w = w_member if all_kept else w_member[keep[member]]
    if ids.shape[0] == 0:
        return Split(groups, cols, na_rm, None, None, None, None, ids, start, None, weights)
    if all_kept:
        p_obj, y_obj = frame[cols.p], frame[cols.y]
    else:
        p_obj, y_obj = frame[cols.p][keep], frame[cols.y][keep]
    prep = prepare(p_obj, y_obj, classes=cols.classes, na_rm=False)
    return Split(groups, cols, na_rm, prep.p, prep.y, prep.binary, prep.classes, ids, start,
                 rows_w, weights)


def raise_per_group(groups: Groups, cols: Columns, na_rm: bool, only: int | None = None,
                    weights: Hashable | None = None) -> None:
    """Validate each group's original rows (and weights) as a metric called on the
    group would, and raise the first error with the group appended. Returns if
    none fails."""
    w_obj = None if weights is None else groups.frame[weights]
    if groups.keys is None:
        prepare(groups.frame[cols.p], groups.frame[cols.y], classes=cols.classes, na_rm=na_rm,
                weights=w_obj)
        return
    p_obj, y_obj = groups.frame[cols.p], groups.frame[cols.y]
    for g, rows in groups.rows():
        if only is not None and g != only:
            continue
        try:
            p_rows, y_rows = p_obj.iloc[rows], y_obj.iloc[rows]
            w_rows = None if w_obj is None else w_obj.iloc[rows]
        except Exception:  # noqa: BLE001 - pandas cannot slice these columns (e.g. a
            return  # structured dtype): the caller raises the error of the whole frame
        try:
            prepare(p_rows, y_rows, classes=cols.classes, na_rm=na_rm, weights=w_rows)
        except (ValueError, TypeError) as err:
            raise with_context(err, groups, g) from None


def with_context(err: Exception, groups: Groups, g: int, what: str = "") -> Exception:
    """The same exception type with the group (and metric) appended to the message,
    e.g. ``[metric 'ece'; group model='a']``."""
    parts = [p for p in (what, groups.describe(g) and f"group {groups.describe(g)}") if p]
    if not parts:
        return err
    return extended(err, f" [{'; '.join(parts)}]")

