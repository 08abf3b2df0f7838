"""The one implementation of the lazy engines, in narwhals' lazy layer
(``docs/engines.md``): the bin of each row and the per-(group, bin) sums in the
engine's expression language, the metric on the driver.

The rule (the module docstring of :mod:`calibr._engines`): a binary ``p``, 0/1
or boolean labels, numeric weights, bins known without the data (any number of
equal-width bins, explicit breaks, either closure) or equal-mass bins of an
ungrouped source without weights are **pushed down** (not the top-label form,
``type="top-label"``, which reads a binary ``p`` as two columns); anything else is
**collected** (the used columns, when the source has at most
:data:`MAX_COLLECT_ROWS` rows) and computed by the eager path, bit for bit that
of pandas; above that, refused.

The pushed-down query is one ``with_columns`` (the row's bin, its contributions
and its counters of bad values) and one ``group_by(keys, bin).agg(sum)``; the
driver receives O(groups x bins) rows, drops the groups of a missing key
(pandas' ``dropna=True``), orders the groups as pandas' ``groupby(sort=True)``
does, and finishes with the functions of the pandas path (``ece_from_stats``,
``mce_from_stats``, ``calibration_error``'s ``per_row``, the table's
``table_from_stats``). A counter of bad values that is not 0 (a missing ``p``
without ``na_rm``, ``p`` outside [0, 1], a label other than 0/1, a bad weight, a
group left empty) sends the call down the collected path, whose pandas message
names the first bad row; above the collect limit the message gives the count
and no position (positions are not defined on an unordered source).

The bin rule is that of ``calibr._binning.bin_index``: for R's bins the
arithmetic of the compiled kernels (``calibr._kernels.binned._bin_right_closed``:
``m = floor(v B + 1/2)``, then one comparison with ``m * (1/B)``, exactly the
break), otherwise the number of inner breaks below the value (``<`` closed on
the right, ``<=`` on the left), which is ``searchsorted`` minus one, clipped.
Every value is cast to float64 first (float32 columns are read exactly).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from .._input import InputError, InputTypeError, arg, fmt
from .._input.frames import frame_to_pandas

__all__ = ["MAX_COLLECT_ROWS", "Engine", "bind"]

#: A lazy source is collected (for what the engine does not compute: see the
#: module docstring) only when it has at most this many rows; above, refused.
MAX_COLLECT_ROWS = 10_000_000


@dataclass(frozen=True)
class Engine:
    """One engine: its name, how a message names its sources, how to collect one."""

    name: str  # "polars", "duckdb", "spark"
    what: str  # "a polars LazyFrame"
    collect: str  # the user's way to collect: "lf.collect()"
    is_source: Callable[[Any], bool]
    #: ``(native, columns, names) -> native``: the ``columns`` renamed ``names``,
    #: for an engine whose column references parse the name (Spark reads ``a.b``
    #: as a field and a backtick as a quote); None: selected by name.
    project: Callable[[Any, list, list], Any] | None = None
    #: ``(native, keys, p, y, bins) -> native query``: the engine's own query of the
    #: cells of clean, unweighted data in R's bins, grouped by the columns ``keys``
    #: (none, one or several, of any type: :func:`_engine_cells`); None: narwhals'
    #: query (:func:`_fast_stats`) serves every case.
    cells: Callable[[Any, list, str, str, int], Any] | None = None
    #: how ``cells`` lays out its cell key: ``"offset"`` (``key * bins + bin +
    #: BAD_OFFSET * bad``, read by :func:`_offset_bins`) or ``"shifted"`` (``key + j *
    #: CELL_SHIFT`` plus the label's term, read by :func:`_shifted_bins`).
    cells_layout: str = "offset"
    #: ``(native rows, key, weighted, low, high) -> per-group sums | None``: the
    #: engine's own route to the sorted sums of ``calibr._engines._pushdown``
    #: (``_Query.sorted_sums``) for one integer group key (or none) whose values lie
    #: in ``[low, high]``; None (the field, or its answer): the window query.
    sorted_rows: Callable[[Any, str | None, bool, int, int], Any] | None = None


# --------------------------------------------------------------------------
# sources, columns and the collect rule


def _source(engine: Engine, native: Any, name: str) -> Any:
    if not engine.is_source(native):
        raise InputTypeError(
            f"`{name}` must be {engine.what} (or a pandas, polars or Arrow object); got a "
            f"{type(native).__module__}.{type(native).__name__}.", param=name)
    return nw.from_native(native)


_PANDAS_DTYPES = {nw.Float64: "float64", nw.Float32: "float32", nw.Int64: "int64",
                  nw.Int32: "int32", nw.Int16: "int16", nw.Int8: "int8", nw.UInt64: "uint64",
                  nw.UInt32: "uint32", nw.UInt16: "uint16", nw.UInt8: "uint8",
                  nw.Boolean: "bool", nw.Categorical: "category", nw.Enum: "category"}


def _native_columns(lf: Any) -> list:
    """The source's column names, each as often as it occurs (a Spark DataFrame
    can hold two columns of one name; narwhals' schema holds one)."""
    native = lf.to_native()
    if type(native).__module__.startswith("pyspark"):
        return list(native.columns)
    return list(lf.collect_schema().names())


def _meta(lf: Any) -> pd.DataFrame:
    """An empty pandas frame with the source's columns (duplicates kept) and
    dtypes, for the pandas path's column checks (their messages)."""
    schema = lf.collect_schema()
    names = _native_columns(lf)
    return pd.DataFrame({
        i: pd.Series(dtype=_PANDAS_DTYPES.get(schema[name].base_type(), object))
        for i, name in enumerate(names)}).set_axis(names, axis=1)


def _collect(lf: Any) -> Any:
    """``lf.collect()``; polars' with its streaming engine, which reads the files in
    batches (its default engine loads every row of the used columns first: 2.8 GB
    against 0.6 GB for 1e8 rows, and twice the time)."""
    if lf.implementation is nw.Implementation.POLARS:
        return lf.collect(engine="streaming")
    return lf.collect()


def _rows(lf: Any) -> int:
    return int(_collect(lf.select(nw.len().alias("n"))).item())


def _limit_text(engine: Engine, n: int, what: str) -> str:
    return (f"{what} on {engine.what} collects its rows to the driver, and it has {n:,}, more "
            f"than calibr collects ({MAX_COLLECT_ROWS:,}, calibr._engines._lazy."
            f"MAX_COLLECT_ROWS). Compute it on fewer rows (a sample or a filter), or collect "
            f"the columns yourself ({engine.collect}) and pass the result; ece, mce, "
            f"calibration_error, calibration_table and summarise of ece/mce with equal-width "
            f"bins, and brier, log_loss, auroc, ecce and calibration_test's spiegelhalter, "
            f"hosmer_lemeshow, ks and kuiper of a binary p run on the engine (docs/engines.md).")


def _query_frame(engine: Engine, lf: Any, used: Sequence[Hashable]) -> tuple[Any, dict]:
    """The source as every engine query reads it: only the ``used`` columns, renamed
    ``c0``, ``c1``, ... (``{user name: query name}`` is returned).

    This is the one rule for names in a query: no name of the caller's reaches
    the engine's expressions, so a column named like a column of the query
    (``__bin``, ``__count``, ...), or holding a dot or a backtick (which Spark
    parses), cannot collide with or be misread by it (docs/engines.md, "Names")."""
    names = list(dict.fromkeys(used))
    new = {n: f"c{i}" for i, n in enumerate(names)}
    if engine.project is None:
        return lf.select(*names).rename(new), new
    native = engine.project(lf.to_native(), names, list(new.values()))
    return nw.from_native(native), new


def _collect_used(engine: Engine, lf: Any, used: Sequence[Hashable]) -> Any:
    """The used columns, collected, under the caller's names (the engine's eager
    frame: polars or Arrow)."""
    q, new = _query_frame(engine, lf, used)
    back = {v: k for k, v in new.items()}
    return nw.from_native(_collect(q).to_native(), eager_only=True).rename(back).to_native()


def _collected(engine: Engine, lf: Any, used: Sequence[Hashable], what: str,
               param: str) -> Any:
    """The used columns as the engine's eager frame (polars or Arrow), or the
    refusal above :data:`MAX_COLLECT_ROWS` rows."""
    n = _rows(lf)
    if n > MAX_COLLECT_ROWS:
        raise InputError(_limit_text(engine, n, what), param=param)
    return _collect_used(engine, lf, used)


def _column(frame: Any, cols: Any) -> Any:
    """``p`` (one column, or a frame of several) or another column of a collected frame."""
    df = nw.from_native(frame, eager_only=True)
    if isinstance(cols, list):
        return df.select(cols).to_native()
    return df.get_column(cols).to_native()


def _metric_columns(engine: Engine, lf: Any, y: Any, weights: Any):
    """The columns of a metric's lazy ``p``: ``y`` (and ``weights``) name columns of
    it, the others are the probabilities."""
    from .._input.groups import Columns

    names = list(lf.collect_schema().names())
    for value, name in ((y, "y"), (weights, "weights")):
        if name == "weights" and value is None:
            continue
        if not isinstance(value, str) or value not in names:
            raise InputError(
                f"`{name}` must name a column of {arg('p')} when {arg('p')} is {engine.what} "
                "(its columns: "
                f"{', '.join(map(repr, names[:10]))}); got {fmt(value)}.", param=name)
    pcols = [c for c in names if c not in (y, weights)]
    if not pcols:
        raise InputError(f"`p` ({engine.what}) has no probability column besides {arg('y')}.",
                         param="p")
    return Columns(p=pcols[0] if len(pcols) == 1 else pcols, y=y, classes=None)


def _pushable(lf: Any, cols: Any, weights: Hashable | None, classes: Any) -> bool:
    """Whether the columns' types are those the engine query reads: a numeric
    ``p``, 0/1 numbers or booleans as labels, numeric weights; no ``classes``."""
    if not cols.binary or classes is not None or cols.classes is not None:
        return False
    schema = lf.collect_schema()
    p_t, y_t = schema[cols.p], schema[cols.y]
    if not p_t.is_numeric() or not (y_t.is_numeric() or y_t == nw.Boolean):
        return False
    return weights is None or schema[weights].is_numeric()


# --------------------------------------------------------------------------
# the engine query


def _bin_expr(x: Any, spec: Any, edges: np.ndarray) -> Any:
    """The 0-based bin of ``x`` (float64) as a float64 expression.

    ``x`` is first clamped to [0, 1] (the identity on a valid value): a value
    outside, which the counters send to the pandas path's message, must not
    make the engine fail first (Spark's ANSI mode raises ARITHMETIC_OVERFLOW
    when ``floor`` of ``inf`` or of ``1e20 * B`` is cast to a 64-bit integer)."""
    x = nw.min_horizontal(nw.max_horizontal(x, nw.lit(0.0)), nw.lit(1.0))
    if spec.is_default:  # R's bins: calibr._kernels.binned._bin_right_closed
        b = spec.bins
        m = (x * float(b) + 0.5).floor()
        j = m - 1.0 + (x > m * (1.0 / b)).cast(nw.Float64)
        # 0 to the first bin, 1.0 to the last (LEAST/GREATEST in SQL: no CASE)
        return nw.min_horizontal(nw.max_horizontal(j, nw.lit(0.0)), nw.lit(float(b - 1)))
    inner = [float(t) for t in edges[1:-1]]
    if not inner:
        return nw.lit(0.0)
    below = [((nw.lit(t) < x) if spec.right else (nw.lit(t) <= x)).cast(nw.Float64)
             for t in inner]
    return nw.sum_horizontal(*below) if len(below) > 1 else below[0]


_COUNTERS = ("__rows", "__valid", "__pmiss", "__ymiss", "__pbad", "__ybad", "__wbad")
_SUMS = ("__count", "__sp", "__sy")


def _stats(lf: Any, keys: list, cols: Any, weights: Hashable | None, spec: Any,
           edges: np.ndarray, na_rm: bool) -> pd.DataFrame:
    """One query: per (keys, bin) the row count, the counters of bad values and the
    sums of the kept rows (weighted: of ``w``, ``w p``, ``w y``), as pandas."""
    x = nw.col(cols.p).cast(nw.Float64)
    yv = nw.col(cols.y).cast(nw.Float64)
    p_miss = x.is_null() | x.is_nan()
    y_miss = yv.is_null() | yv.is_nan()
    complete = ~(p_miss | y_miss)
    p_out = (x < 0.0) | (x > 1.0)
    y_out = ~((yv == 0.0) | (yv == 1.0))
    if na_rm:  # the pandas path checks the values of the complete rows only
        p_bad, y_bad = complete & p_out, complete & y_out
    else:
        p_bad, y_bad = ~p_miss & p_out, ~y_miss & y_out
    valid = complete & ~p_out & ~y_out
    row = {
        "__bin": nw.when(valid).then(_bin_expr(x, spec, edges)).otherwise(0.0).cast(nw.Int64),
        "__valid": valid.cast(nw.Float64),
        "__pmiss": p_miss.cast(nw.Float64),
        "__ymiss": y_miss.cast(nw.Float64),
        "__pbad": p_bad.cast(nw.Float64),
        "__ybad": y_bad.cast(nw.Float64),
    }
    if weights is None:
        row.update(__wbad=nw.lit(0.0), __count=valid.cast(nw.Float64),
                   __sp=nw.when(valid).then(x).otherwise(0.0),
                   __sy=nw.when(valid).then(yv).otherwise(0.0))
    else:
        w = nw.col(weights).cast(nw.Float64)
        w_bad = w.is_null() | w.is_nan() | (w < 0.0) | (w > np.finfo(np.float64).max)
        row.update(__wbad=w_bad.cast(nw.Float64),
                   __count=nw.when(valid).then(w).otherwise(0.0),
                   __sp=nw.when(valid).then(w * x).otherwise(0.0),
                   __sy=nw.when(valid).then(w * yv).otherwise(0.0))
    aggs = [nw.len().alias("__rows")] + [nw.col(c).sum().alias(c)
                                         for c in (*_COUNTERS[1:], *_SUMS)]
    query = (lf.select(*keys, **row)
             .group_by(*keys, "__bin", drop_null_keys=False).agg(*aggs))
    out = frame_to_pandas(_collect(query))  # an integer key holding a missing value: Int64
    for c in (*_COUNTERS, *_SUMS):  # DuckDB sums to decimals, Spark to objects at times
        out[c] = out[c].astype(np.float64)
    return out


#: Integer key types of at most 32 bits: ``key * nbins + bin`` of such a key is a
#: whole number below 2**52 in magnitude for any number of bins calibr allows
#: (``MAX_BINS``, below 2**20), exact as a float64, so one such key column and the
#: bin are grouped as one float64 key.
_NARROW_INTS = (nw.Int8, nw.Int16, nw.Int32, nw.UInt8, nw.UInt16, nw.UInt32)


def _one_key(lf: Any, keys: list, nbins: int) -> bool:
    """Whether the group key and the bin can be grouped as one float64 key
    (``key * nbins + bin`` here and in polars' query, ``key + j * CELL_SHIFT`` in
    DuckDB's and Spark's: :func:`_engine_cells`): one integer key of at most 32
    bits. Any other key is grouped as it is, beside the bin."""
    if len(keys) != 1 or nbins > 2**20:
        return False
    return lf.collect_schema()[keys[0]].base_type() in _NARROW_INTS


def _fast_stats(lf: Any, keys: list, cols: Any, weights: Hashable | None, spec: Any,
                edges: np.ndarray, na_rm: bool) -> pd.DataFrame | None:
    """The per-(keys, bin) sums of clean data in the cheapest query: the bin of each
    row, and per cell the row count, the sums of ``p`` and ``y`` (weighted: of
    ``w``, ``w p``, ``w y``) over all rows and the count of rows that are not valid
    (missing, out of range, a bad weight). None when a row is not valid: the sums
    over all rows are then not those of the kept rows, and :func:`_stats` (which
    counts each kind of bad value) is run instead.

    Its cost is the engine's grouping into groups x bins cells: a single integer
    key ``key * bins + bin`` when the group key is one narrow integer column (one
    hash key instead of two, about 30% faster on polars and 45% on DuckDB at 1e8
    rows; benchmarks/README.md, "Engines")."""
    x = nw.col(cols.p).cast(nw.Float64)
    yv = nw.col(cols.y).cast(nw.Float64)
    valid = ((x >= 0.0) & (x <= 1.0) & ((yv == 0.0) | (yv == 1.0))).fill_null(False)
    nbins = edges.shape[0] - 1
    # the bin as a float64, no CASE and no integer cast (each costs the engine more
    # than the bin itself); a missing p has a missing bin, put in bin 0: its row is
    # counted in __bad, which sends the call to the full query
    row = {"__bin": _bin_expr(x, spec, edges).fill_null(0.0),
           "__bad": (~valid).cast(nw.Float64)}
    if weights is None:  # the count is the engine's row count (COUNT(*))
        row.update(__sp=x, __sy=yv)
        sums = [nw.len().alias("__count")]
    else:
        w = nw.col(weights).cast(nw.Float64)
        w_ok = (w >= 0.0) & (w <= np.finfo(np.float64).max)
        row["__bad"] = (~(valid & w_ok.fill_null(False))).cast(nw.Float64)
        row.update(__count=w, __sp=w * x, __sy=w * yv)
        sums = [nw.col("__count").sum().alias("__count")]
    sums += [nw.col(c).sum().alias(c) for c in ("__bad", "__sp", "__sy")]
    if _one_key(lf, keys, nbins):
        key = keys[0]
        bin_ = row.pop("__bin")
        query = (lf.select(__k=nw.col(key).cast(nw.Float64) * float(nbins) + bin_, **row)
                 .group_by("__k", drop_null_keys=True).agg(*sums))
        out = _collect(query).to_pandas()
        if out["__bad"].astype(np.float64).sum() != 0:
            return None
        k = out.pop("__k").to_numpy(dtype=np.float64).astype(np.int64)
        g = np.floor_divide(k, nbins)
        dtype = _PANDAS_DTYPES[lf.collect_schema()[key].base_type()]
        out.insert(0, key, g.astype(dtype))
        out.insert(1, "__bin", k - g * nbins)
    else:
        query = (lf.select(*keys, **row)
                 .group_by(*keys, "__bin", drop_null_keys=False).agg(*sums))
        out = frame_to_pandas(_collect(query))
        if out["__bad"].astype(np.float64).sum() != 0:
            return None
        out["__bin"] = out["__bin"].to_numpy(dtype=np.float64).astype(np.int64)
    for c in ("__bad", *_SUMS):  # DuckDB sums to decimals, Spark to objects at times
        out[c] = out[c].astype(np.float64)
    if keys:  # pandas' dropna: the rows of a missing key are in no group
        out = out.dropna(subset=keys)
    if out.empty or out["__bad"].sum() != 0:
        return None
    return out


#: The offset of a bad row's cell key in :func:`_engine_cells`: a clean row's key
#: ``key * bins + bin`` (a narrow integer key, ``bins <= 2**20``) lies in
#: ``[-2**51, 2**51)``, a bad row's at ``2**52`` above it, in ``[2**51, 2**53)``:
#: every key a whole float64, exact.
BAD_OFFSET = 2.0**52


def _engine_cells(engine: Engine, q: Any, keys: list, cols: Any, nbins: int
                  ) -> pd.DataFrame | None:
    """:func:`_fast_stats`' frame from the engine's own query (``engine.cells``, in
    calibr/_engines/polars.py, duckdb.py and spark.py): one grouping and its row
    count and sums of ``p`` and ``y``, nothing else (benchmarks/README.md,
    "Engines": the sums of a counter cost the engine a third of its time).

    The grouping is the float64 cell key ``__k`` alone when the engine folds the
    group key into it (one integer key of at most 32 bits, :func:`_one_key`; or
    no key), and the group keys themselves and ``__k`` otherwise (any other key:
    a 64-bit integer, a string, several columns), which the result then holds as
    columns of their own. ``__k`` is laid out as ``engine.cells_layout`` says:
    ``"offset"`` (polars: ``key * bins + bin + BAD_OFFSET * bad``, read here) or
    ``"shifted"`` (DuckDB and Spark: :func:`_shifted_bins`). A row that is not
    valid (a missing, NaN or out-of-range ``p``, a label other than 0/1) shows
    in its cell: then None, and :func:`_stats` counts each kind. A row with a
    missing group key is in no group (pandas' dropna), whatever its values."""
    native = engine.cells(q.to_native(), keys, cols.p, cols.y, nbins)
    got = _collect(nw.from_native(native))
    apart = [k for k in keys if k in got.columns]  # the keys grouped as they are
    fused = keys[0] if keys and not apart else None
    # an integer key that held a missing value is pandas' nullable integer, as
    # frame_to_pandas reads it (and the pandas path holds it), though its rows are gone
    held = [k for k in apart if got.get_column(k).null_count()]
    if apart:  # pandas' dropna: a missing key (or a NaN one) puts the row in no group
        schema = got.schema
        for k in apart:
            miss = nw.col(k).is_null()
            if schema[k].is_float():
                miss = miss | nw.col(k).is_nan()
            got = got.filter(~miss)
    if engine.cells_layout == "shifted":
        read = _shifted_bins(got, q, fused, cols, nbins)
    else:
        read = _offset_bins(got, fused, nbins)
    if read is None:
        return None
    got, bins, g = read
    out = frame_to_pandas(got.drop("__k"))
    for k in held:
        if out[k].dtype.kind in "iu":  # int64 -> Int64, uint64 -> UInt64, ...
            out[k] = out[k].astype(out[k].dtype.name.replace("u", "U").replace("int", "Int"))
    for c in _SUMS:  # DuckDB's COUNT(*) is an integer, Spark's a long
        out[c] = out[c].astype(np.float64)
    out.insert(0, "__bin", bins)
    out.insert(0, "__bad", 0.0)
    if fused is not None:
        out.insert(0, fused, g.astype(_PANDAS_DTYPES[q.collect_schema()[fused].base_type()]))
    return out


def _offset_bins(got: Any, fused: str | None, nbins: int) -> tuple | None:
    """The cells' ``(frame, R's bins, folded keys)`` of the offset layout (polars): a
    missing folded key makes ``__k`` missing (the row is in no group); a bad row's
    ``__k`` lies at or above ``BAD_OFFSET / 2``, or is NaN; then None."""
    if fused is not None:
        got = got.filter(~nw.col("__k").is_null())  # a missing key: in no group
    k = got.get_column("__k").to_numpy().astype(np.float64)
    if k.size == 0 or not (k < BAD_OFFSET / 2).all():  # NaN fails the comparison
        return None
    kk = k.astype(np.int64)
    g = np.floor_divide(kk, nbins)  # 0 when the key is apart: __k is the bin
    return got, kk - g * nbins, g


#: The shifted layout of an engine's cell key (``Engine.cells_layout == "shifted"``,
#: calibr/_engines/duckdb.py and spark.py): ``key + j * CELL_SHIFT + CELL_BAD * t``,
#: where ``j = m + [v > m / B]`` (``m = floor(v B + 1/2)``) is R's bin plus one, with
#: no clamp, and ``t`` is 0 for a label 0/1 and at least 1 for any other. A narrow
#: integer key lies in ``[-2**31, 2**32)``, so ``key + 2**31`` is below CELL_SHIFT
#: and ``j`` is read back exactly while ``|j| < 2**20``; ``t`` moves a bad label's key
#: to ``2**54`` or beyond, above every clean one (at most ``(2**20 + 2) 2**33``).
#: A key grouped apart is not in the sum (``key`` is 0 there).
CELL_SHIFT = 2.0**33
CELL_BAD = 2.0**54


def top_break_below_one(bins: int) -> bool:
    """Whether ``bins * (1 / bins)`` rounds below 1 (49, 98, 103, ...: 15% of the
    numbers of bins up to 2**20): then ``p = 1`` has ``j = bins + 1``, as a ``p``
    just above 1 does, and the cell query adds ``p > 1`` to the bad term."""
    return bins * (1.0 / bins) < 1.0


def _shifted_bins(got: Any, q: Any, fused: str | None, cols: Any, nbins: int
                  ) -> tuple | None:
    """The cells' ``(frame, R's bins, folded keys)`` of the shifted key
    (:data:`CELL_SHIFT`): the bad values are read from the cells, not counted by
    the query (benchmarks/README.md, "Engines at their floor": every counter, flag
    or clamp cost DuckDB 0.3 s of 1.9 at 1e8 rows). A clean ``p`` has ``j`` in
    ``[0, bins]``, and ``[0, bins + 1]`` when :func:`top_break_below_one`; any
    other ``p`` (NaN, an infinity, out of [0, 1]) has a NaN or infinite key, or
    ``j`` outside, but a ``p`` in ``(-1/B, 0)``, which shares ``j = 0`` with
    ``p = 0``: there the sum of ``p`` is 0 exactly when every value is a zero (a
    sum of values <= 0, one of them negative, is negative). A missing ``p`` or
    ``y`` makes ``__k`` missing; so does a missing folded key, and then one count
    of the rows with a key and a missing ``p`` or ``y`` tells them apart (a
    missing key alone puts the row in no group, pandas' dropna); with the keys
    apart, the rows of a missing key are gone already. R's bin is ``j - 1``,
    clamped to ``[0, bins - 1]``."""
    if bool(got.get_column("__k").is_null().any()):
        if fused is None:
            return None
        lost = q.filter(~nw.col(fused).is_null()
                        & (nw.col(cols.p).is_null() | nw.col(cols.y).is_null()))
        if _rows(lost):
            return None
        got = got.filter(~nw.col("__k").is_null())  # a missing key: in no group
    k = got.get_column("__k").to_numpy().astype(np.float64)
    if k.size == 0 or not np.isfinite(k).all():
        return None
    j = np.floor((k + 2.0**31) / CELL_SHIFT)
    top = nbins + 1 if top_break_below_one(nbins) else nbins
    if ((j < 0) | (j > top)).any():
        return None
    sp = got.get_column("__sp").to_numpy().astype(np.float64)
    if (sp[j == 0] != 0.0).any():  # a p in (-1/B, 0)
        return None
    g = (k - j * CELL_SHIFT).astype(np.int64) if fused is not None else None
    return got, np.clip(j - 1, 0, nbins - 1).astype(np.int64), g


@dataclass
class _Groups:
    """The merged sums of the groups, in pandas' group order."""

    keys: pd.DataFrame | None  # one row per group (None: ungrouped)
    count: np.ndarray  # (G, B)
    sp: np.ndarray
    sy: np.ndarray
    counters: dict  # name -> (G,) totals

    @functools.cached_property
    def metrics(self) -> dict[str, np.ndarray]:
        """Each group's ECE and MCE, as the pandas path's grouped summary computes
        them (``calibr._kernels.grouped.ece_mce``: per group, bit for bit
        ``ece_from_stats`` and ``mce_from_stats`` of its row)."""
        from .._kernels.grouped import ece_mce

        ece, mce = ece_mce(self.count, self.sp, self.sy)
        return {"ece": ece, "mce": mce}


def _groups(st: pd.DataFrame, keys: list, nbins: int) -> _Groups:
    if keys:
        gid = st.groupby(keys, sort=True, dropna=True, observed=True).ngroup()
        st = st.assign(__g=gid.to_numpy()).dropna(subset=["__g"])
        g = st["__g"].to_numpy().astype(np.int64)
        first = st.drop_duplicates("__g").sort_values("__g")
        key_frame = first[keys].reset_index(drop=True)
        n_groups = len(key_frame)
    else:
        g = np.zeros(len(st), dtype=np.int64)
        key_frame, n_groups = None, 1
    b = st["__bin"].to_numpy().astype(np.int64)
    out = {}
    for c in _SUMS:
        a = np.zeros((n_groups, nbins))
        np.add.at(a, (g, b), st[c].to_numpy())
        out[c] = a
    counters = {}
    for c in _COUNTERS:
        if c in st:  # the full query's counters (not in _fast_stats')
            a = np.zeros(n_groups)
            np.add.at(a, g, st[c].to_numpy())
            counters[c] = a
    return _Groups(key_frame, out["__count"], out["__sp"], out["__sy"], counters)


def _bad(gr: _Groups, na_rm: bool, weighted: bool) -> bool:
    """Whether a counter says the pandas path would raise (its message is then
    made by the collected path, or from the counters)."""
    c = gr.counters
    if c["__wbad"].sum() or c["__pbad"].sum() or c["__ybad"].sum():
        return True
    if not na_rm and (c["__pmiss"].sum() or c["__ymiss"].sum()):
        return True
    if np.any(c["__rows"] == 0) or np.any(c["__valid"] == 0):
        return True
    return bool(weighted and np.any(gr.count.sum(axis=1) == 0))


def _counted_error(engine: Engine, gr: _Groups, n: int, na_rm: bool) -> InputError:
    """The error of a source above the collect limit, from the counters (the
    pandas path's order of checks; counts, no positions)."""
    c = {k: int(v.sum()) for k, v in gr.counters.items()}
    tail = (f" [{engine.what} of {n:,} rows, more than calibr collects "
            f"({MAX_COLLECT_ROWS:,}) to find the first: positions are not given]")

    def phrase(k: int) -> str:
        return f"{k:,} value{'s' if k != 1 else ''}"

    if c["__wbad"]:
        return InputError(f"`weights` must be finite, nonnegative numbers, never missing; "
                          f"{phrase(c['__wbad'])} are not.{tail}", param="weights")
    if not na_rm and c["__pmiss"]:
        return InputError(f"`p` must not contain missing values; {phrase(c['__pmiss'])} "
                          f"missing. Pass {arg('na_rm', 'hint', True)} to drop incomplete "
                          f"observations.{tail}",
                          param="p")
    if not na_rm and c["__ymiss"]:
        return InputError(f"`y` must not contain missing values; {phrase(c['__ymiss'])} "
                          f"missing. Pass {arg('na_rm', 'hint', True)} to drop incomplete "
                          f"observations.{tail}",
                          param="y")
    if c["__pbad"]:
        return InputError(f"`p` must lie in [0, 1]; {phrase(c['__pbad'])} do not.{tail}",
                          param="p")
    if c["__ybad"]:
        return InputError(f"`y` must be 0/1 or boolean for {arg('p', 'vector')}; "
                          f"{phrase(c['__ybad'])} do not.{tail}", param="y")
    if np.any(gr.counters["__valid"] == 0):
        return InputError(f"`p` and {arg('y')} have no complete observations in a group: "
                          f"{arg('na_rm', 'hint', True)} dropped all its rows.{tail}", param="p")
    return InputError(f"`weights` must have a positive total in every group; a group's "
                      f"weights are all 0.{tail}", param="weights", code="zero_total")


def _equal_mass_edges(lf: Any, cols: Any, bins: int, right: bool, n: int) -> np.ndarray:
    """The breaks of ``calibr._binning.equal_mass_breaks`` of the kept values:
    the order statistics at ranks ``s - 1`` and ``s`` of each group start ``s``,
    read by a global sort on the engine (only those 2 (B - 1) values travel)."""
    from .._binning.equal_mass import group_starts

    b = min(bins, n)
    starts = group_starts(n, b)
    if starts.size == 0:
        cuts = np.empty(0)
    else:
        ranks = sorted(set((starts - 1).tolist()) | set(starts.tolist()))
        x = nw.col(cols.p).cast(nw.Float64)
        yv = nw.col(cols.y).cast(nw.Float64)
        kept = ~(x.is_null() | x.is_nan() | yv.is_null() | yv.is_nan())
        got = (lf.filter(kept).select(__x=x).with_row_index("__r", order_by="__x")
               .filter(nw.col("__r").is_in(ranks)))
        got = _collect(got).to_pandas()
        value = dict(zip(got["__r"].astype(np.int64), got["__x"].astype(np.float64),
                         strict=True))
        cuts = (np.array([value[s - 1] for s in starts.tolist()])
                + np.array([value[s] for s in starts.tolist()])) / 2.0
    if right:
        return np.concatenate(([0.0], np.unique(np.append(cuts, 1.0))))
    return np.append(np.unique(np.append(0.0, cuts)), 1.0)


def _pushed(engine: Engine, lf: Any, keys: list, cols: Any, weights: Hashable | None,
            spec: Any, na_rm: bool, eager: Callable[[Any], Any]) -> tuple[_Groups, np.ndarray]:
    """The groups' sums and the breaks, from the engine; a bad value or an
    empty group runs ``eager`` on the collected columns (the pandas path's
    message) when the source is small enough, or raises from the counters.

    The queries read :func:`_query_frame` (the used columns under generated
    names); the key columns of the result get the caller's names back."""
    from .._input.groups import Columns

    used = [*keys, cols.p, cols.y, *([] if weights is None else [weights])]
    q, new = _query_frame(engine, lf, used)
    qkeys = [new[k] for k in keys]
    qcols = Columns(p=new[cols.p], y=new[cols.y], classes=None)
    qw = None if weights is None else new[weights]

    def explain(gr: _Groups | None) -> Any:
        return _explain(engine, lf, used, gr, na_rm, eager)

    if spec.data_free:
        edges = spec.edges()
    else:  # equal-mass, ungrouped, unweighted: first the kept count
        first = _groups(_stats(q, qkeys, qcols, qw, _ONE_BIN, _ONE_EDGES, na_rm), qkeys, 1)
        if _bad(first, na_rm, weights is not None) or first.count.sum() == 0:
            return explain(first), None
        edges = _equal_mass_edges(q, qcols, spec.bins, spec.right, int(first.count.sum()))
    fast = None
    if engine.cells is not None and spec.is_default and qw is None:
        fast = _engine_cells(engine, q, qkeys, qcols, spec.bins)
    else:
        fast = _fast_stats(q, qkeys, qcols, qw, spec, edges, na_rm)
    gr = None
    if fast is not None:
        gr = _groups(fast, qkeys, edges.shape[0] - 1)
        if not np.all(gr.count.sum(axis=1) > 0):  # a group of zero weights: explained
            gr = None
    if gr is None:
        st = _stats(q, qkeys, qcols, qw, spec, edges, na_rm)
        if st.empty:
            return explain(None), None
        gr = _groups(st, qkeys, edges.shape[0] - 1)
        if _bad(gr, na_rm, weights is not None):
            return explain(gr), None
    if gr.keys is not None and len(gr.keys) == 0:  # every key missing: pandas' answer
        return explain(gr), None
    if gr.keys is not None:
        gr.keys = gr.keys.set_axis(keys, axis=1)
    return gr, edges


class _EagerResult(Exception):
    """The collected path did not raise: its result is the answer (never expected;
    it keeps the rule "the pandas path decides" even then)."""

    def __init__(self, value: Any) -> None:
        super().__init__("eager result")
        self.value = value


def _explain(engine: Engine, lf: Any, used: list, gr: _Groups | None, na_rm: bool,
             eager: Callable[[Any], Any]) -> Any:
    n = _rows(lf)
    if n <= MAX_COLLECT_ROWS:
        raise _EagerResult(eager(_collect_used(engine, lf, used)))
    if gr is not None and gr.keys is not None and len(gr.keys) == 0:
        # no group (every key missing): the pandas path's answer on no rows
        raise _EagerResult(eager(_collect_used(engine, lf.head(0), used)))
    if gr is None:
        raise InputError(f"`p` and {arg('y')} must not be empty; got 0 observations.", param="p")
    raise _counted_error(engine, gr, n, na_rm)


class _OneBin:
    """The spec of the counting query of equal-mass bins: one bin [0, 1]."""

    is_default = False
    right = True
    data_free = True


_ONE_BIN = _OneBin()
_ONE_EDGES = np.array([0.0, 1.0])


def _pushable_spec(spec: Any, grouped: bool, weighted: bool) -> bool:
    if spec.binning == "isotonic":
        return False
    if spec.data_free:
        return True
    if isinstance(spec.bins, str):  # "sweep", "auto": chosen from the data, collected
        return False
    return not grouped and not weighted  # equal-mass: one global sort


# --------------------------------------------------------------------------
# the public functions, for one engine


def bind(engine: Engine, columns: Callable[..., Any] | None = None,
         poisson: Callable[..., Any] | None = None) -> dict[str, Callable[..., Any]]:
    """The backend functions of ``engine`` (what :func:`calibr._input.lazy_backend`
    hands the public functions), by name. ``columns``: the pushed-down columns of
    ``summarise`` that are not binned (``calibr._engines._pushdown.group_values``;
    None: such a column is collected); ``poisson``: ``summarise`` with
    ``scheme="poisson"`` (``calibr._engines._poisson.summarise``; None: collected)."""

    def run(push: Callable[[], Any]) -> Any:
        try:
            return push()
        except _EagerResult as done:
            return done.value

    def binned(which: str, p, y, bins, type, classes, na_rm, weights, binning, right,
               norm=None, debias=False):
        import calibr

        from .._binning import BinSpec

        lf = _source(engine, p, "p")
        cols = _metric_columns(engine, lf, y, weights)
        spec = BinSpec.from_options(bins, binning, right)
        options = dict(bins=bins, type=type, classes=classes, na_rm=na_rm, binning=binning,
                       right=right)
        if which == "calibration_error":
            options.update(norm=norm, debias=debias)
        else:
            options["weights"] = None

        def eager(frame: Any) -> float:
            if weights is not None:
                options["weights"] = _column(frame, weights)
            return getattr(calibr, which)(_column(frame, cols.p), _column(frame, cols.y),
                                          **options)

        if not (_pushable(lf, cols, weights, classes) and type != "top-label"
                and _pushable_spec(spec, False, weights is not None)):
            used = [*(cols.p if isinstance(cols.p, list) else [cols.p]), cols.y,
                    *([] if weights is None else [weights])]
            return eager(_collected(engine, lf, used, f"calibr.{which}", "p"))

        def push() -> float:
            from .._kernels import binned as kernels

            gr, _ = _pushed(engine, lf, [], cols, weights, spec, na_rm, eager)
            stats = (gr.count[0], gr.sp[0], gr.sy[0])
            if which == "ece":
                return kernels.ece_from_stats(*stats)
            if which == "mce":
                return kernels.mce_from_stats(*stats)
            from .._metrics.lp import per_row

            return float(per_row(*stats, norm, debias)[0])

        return run(push)

    def ece(p, y, bins, type, classes, na_rm, weights, binning, right):
        return binned("ece", p, y, bins, type, classes, na_rm, weights, binning, right)

    def mce(p, y, bins, type, classes, na_rm, weights, binning, right):
        return binned("mce", p, y, bins, type, classes, na_rm, weights, binning, right)

    def calibration_error(p, y, bins, type, *, norm, debias, binning, right, classes, na_rm):
        if debias and norm != "l2":
            raise InputError(
                f'`debias = True` is defined for `norm = "l2"` only (Kumar et al.); got '
                f'`norm = "{norm}"`.', param="debias")
        return binned("calibration_error", p, y, bins, type, classes, na_rm, None, binning,
                      right, norm=norm, debias=debias)

    def kernel(which: str, p, y, options: dict, weights):
        import calibr

        lf = _source(engine, p, "p")
        cols = _metric_columns(engine, lf, y, weights)
        used = [*(cols.p if isinstance(cols.p, list) else [cols.p]), cols.y,
                *([] if weights is None else [weights])]
        frame = _collected(engine, lf, used, f"calibr.{which}", "p")
        w = None if weights is None else _column(frame, weights)
        return getattr(calibr, which)(_column(frame, cols.p), _column(frame, cols.y),
                                      weights=w, **options)

    def skce(p, y, estimator, bandwidth, type, classes, na_rm, weights):
        return kernel("skce", p, y, dict(estimator=estimator, bandwidth=bandwidth, type=type,
                                         classes=classes, na_rm=na_rm), weights)

    def mmce(p, y, bandwidth, classes, na_rm, weights):
        return kernel("mmce", p, y, dict(bandwidth=bandwidth, classes=classes, na_rm=na_rm),
                      weights)

    def frame_source(data: Any, by: list | None) -> tuple[Any, list]:
        lf = _source(engine, data, "data")
        keys = list(by or [])
        names = lf.collect_schema().names()
        missing = [k for k in keys if k not in names]
        if missing:
            raise InputError(
                f"`by` names {fmt(missing[0])}, which is not a column of `data`; its columns "
                f"are {', '.join(map(repr, names[:10]))}{', ...' if len(names) > 10 else ''}.",
                param="by")
        from .._input.groups import unhashable_key_error

        schema = lf.collect_schema()
        for k in keys:  # the pandas path's refusal of a key it cannot hash
            if schema[k].base_type() in (nw.List, nw.Array, nw.Struct, nw.Object):
                raise unhashable_key_error(k)
        return lf, keys

    def summarise(data, p, y, metrics, *, p_prefix, classes, na_rm, tests, rng, weights,
                  confidence_level, ci_method, n_resamples, named_metrics, by=None,
                  scheme="multinomial", row_key=None):
        import calibr

        from .._binning import BinSpec
        from .._input.groups import resolve_columns, weights_column

        lf, keys = frame_source(data, by)
        meta = _meta(lf)
        cols = resolve_columns(meta, p, y, p_prefix, classes)
        wcol = weights_column(meta, weights)
        kwargs = dict(p=p, y=y, metrics=metrics, p_prefix=p_prefix, classes=classes,
                      na_rm=na_rm, tests=tests, rng=rng, weights=weights,
                      confidence_level=confidence_level, ci_method=ci_method,
                      n_resamples=n_resamples, **named_metrics)
        if keys:
            kwargs["by"] = keys

        def eager(frame: Any) -> Any:
            return calibr.summarise(frame, **kwargs)

        plan = _binned_plan(metrics, named_metrics)
        if scheme == "poisson":  # intervals on the engine: calibr/_engines/_poisson.py
            kwargs.update(scheme=scheme, row_key=row_key)
            if poisson is not None:
                return run(lambda: poisson(engine, lf, keys, cols, wcol, classes, plan,
                                           kwargs, eager, row_key))
        specs = None
        if plan is not None and tests is None and confidence_level is None:
            specs = [BinSpec.from_options(o["bins"], o["binning"], o["right"])
                     if which in ("ece", "mce") else None for _, which, o in plan]
            if not all(s is None or s.data_free for s in specs) or (
                    columns is None and None in specs):
                specs = None
        if specs is None or not _pushable(lf, cols, wcol, classes):
            used = [*keys, *(cols.p if isinstance(cols.p, list) else [cols.p]), cols.y,
                    *([] if wcol is None else [wcol])]
            return eager(_collected(engine, lf, used, "calibr.summarise", "data"))
        names = [name for name, _, _ in plan]
        dup = [n for n in names if names.count(n) > 1] + [n for n in names if n in keys]
        if dup:  # the pandas path's message (never a result to compute)
            return eager(_collect(lf.head(0)).to_native())

        def push() -> Any:
            values = {}
            done: dict = {}
            key_frame = None
            rest = [item for item, spec in zip(plan, specs, strict=True) if spec is None]
            if rest:  # the scores and the cumulative measures: calibr/_engines/_pushdown.py
                key_frame, values = columns(engine, lf, keys, cols, wcol, na_rm, rest, eager)
            for (name, which, _), spec in zip(plan, specs, strict=True):
                if spec is None:
                    continue
                if spec not in done:
                    done[spec], _ = _pushed(engine, lf, keys, cols, wcol, spec, na_rm, eager)
                gr = done[spec]
                key_frame = gr.keys
                values[name] = gr.metrics[which]
            result = pd.DataFrame({name: values[name] for name, _, _ in plan})
            if key_frame is not None:
                result = pd.concat([key_frame, result], axis=1)
            return _native_result(engine, result)

        return run(push)

    def calibration_table(p, y, bins, type, *, classes, na_rm, confidence_level, data, p_prefix,
                          weights, consistency, n_resamples, rng, binning, right, by=None):
        import calibr

        from .._binning import BinSpec
        from .._input.groups import resolve_columns, weights_column
        from ..table import check_group_keys, table_from_stats

        spec = BinSpec.from_options(bins, binning, right)
        if data is None:
            lf = _source(engine, p, "p")
            if p_prefix is not None:
                raise InputError(f"`p_prefix` needs {arg('data')}: it selects columns of a "
                                 "data frame.", param="p_prefix")
            cols = _metric_columns(engine, lf, y, weights)
            wcol, keys = weights, []
            kwargs = dict(bins=bins, type=type, classes=classes, na_rm=na_rm,
                          confidence_level=confidence_level, consistency=consistency,
                          n_resamples=n_resamples, rng=rng, binning=binning, right=right)

            def eager(frame: Any) -> Any:
                w = None if wcol is None else _column(frame, wcol)
                return calibr.calibration_table(_column(frame, cols.p),
                                                _column(frame, cols.y), weights=w, **kwargs)
        else:
            lf, keys = frame_source(data, by)
            meta = _meta(lf)
            cols = resolve_columns(meta, p, y, p_prefix, classes)
            wcol = weights_column(meta, weights)
            kwargs = dict(p=p, y=y, bins=bins, type=type, classes=classes, na_rm=na_rm,
                          confidence_level=confidence_level, p_prefix=p_prefix, weights=weights,
                          consistency=consistency, n_resamples=n_resamples, rng=rng,
                          binning=binning, right=right)
            if keys:
                kwargs["by"] = keys

            def eager(frame: Any) -> Any:
                return calibr.calibration_table(data=frame, **kwargs)

        if (consistency is not None or not _pushable(lf, cols, wcol, classes)
                or type == "top-label"
                or not _pushable_spec(spec, bool(keys), wcol is not None)):
            used = [*keys, *(cols.p if isinstance(cols.p, list) else [cols.p]), cols.y,
                    *([] if wcol is None else [wcol])]
            return eager(_collected(engine, lf, used, "calibr.calibration_table",
                                    "p" if data is None else "data"))

        def push() -> Any:
            gr, edges = _pushed(engine, lf, keys, cols, wcol, spec, na_rm, eager)
            stats = [(gr.count[g], gr.sp[g], gr.sy[g]) for g in range(gr.count.shape[0])]
            table, owner = table_from_stats(stats, edges, confidence_level, False, wcol is not None,
                                            None)
            if gr.keys is not None:
                check_group_keys(gr.keys.columns, table.columns)
                table = pd.concat([gr.keys.take(owner).reset_index(drop=True), table], axis=1)
            return _native_result(engine, table)

        return run(push)

    def collect_arguments(p: Any, y: Any, weights: Any, what: str) -> tuple[Any, Any, Any]:
        """``(p, y, weights)`` of a function the engine does not compute: the
        columns of ``p`` (``y`` and ``weights`` name columns of it) collected under
        the rule, as the engine's eager columns (the input layer reads them as it
        reads polars and Arrow)."""
        lf = _source(engine, p, "p")
        cols = _metric_columns(engine, lf, y, weights)
        used = [*(cols.p if isinstance(cols.p, list) else [cols.p]), cols.y,
                *([] if weights is None else [weights])]
        frame = _collected(engine, lf, used, what, "p")
        return (_column(frame, cols.p), _column(frame, cols.y),
                None if weights is None else _column(frame, weights))

    def collect_frame(data: Any, what: str) -> Any:
        """A verb's whole ``data`` collected under the rule (the verbs the engine
        does not compute: ``html_report``, ``multicalibration``), as the engine's
        eager frame."""
        lf = _source(engine, data, "data")
        return _collected(engine, lf, lf.collect_schema().names(), what, "data")

    return dict(ece=ece, mce=mce, calibration_error=calibration_error, skce=skce, mmce=mmce,
                summarise=summarise, calibration_table=calibration_table,
                collect_arguments=collect_arguments, collect_frame=collect_frame)


def _native_result(engine: Engine, result: pd.DataFrame) -> Any:
    """A verb's result as the eager frame narwhals' ``collect()`` gives for the
    engine: a polars DataFrame for a LazyFrame, an Arrow Table for DuckDB and Spark."""
    from .._input.frames import to_callers_frame

    return to_callers_frame(result, "polars" if engine.name == "polars" else "pyarrow")


def _binned_plan(metrics: Any, named: dict) -> list | None:
    """``[(column, reduction, resolved options)]`` of summarise()'s metric columns
    when every one is a metric of the registry whose number comes from the per-bin
    sums, declared pushed down (``calibr._registry``: ``lazy_column=PUSHED_DOWN``,
    whose reductions of ``stats=BIN_SUMS`` are ``"ece"`` and ``"mce"``) in a form the
    query sums (not ``type="top-label"``), pushed down; else None (the call is
    collected)."""
    from .._input import resolved_options
    from .._registry import PUSHED_DOWN, info_of
    from ..frame import metric_columns

    plan = []
    for name, spec, func in metric_columns(metrics, named):
        info = info_of(spec.func if isinstance(spec.func, str) else func)
        if info is None or info.lazy_column != PUSHED_DOWN:
            return None
        options = resolved_options(func, spec.options)
        if options.get("type") == "top-label":  # the query sums a binary p's one set of bins
            return None
        # the binned metrics by their reduction of the bin sums, the others by name
        plan.append((name, info.reduction if info.kind == "binned" else info.name, options))
    return plan
