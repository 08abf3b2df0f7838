"""The Poisson bootstrap on the engines (``docs/engines.md``, "Intervals on the
engine"; ``docs/bootstrap.md``, "The Poisson scheme").

The generator of :mod:`calibr._kernels.poisson`, written once as a small tree of
integer operations (``xor``, ``&``, ``|``, ``+``, ``-``, ``*``, a floor division
by a power of 2 of a nonnegative value, ``>=``) and rendered in each engine's own
language: polars expressions, DuckDB SQL and Spark SQL. Every value stays below
``2**56`` in a signed 64-bit integer, so no engine overflows (DuckDB and Spark's
ANSI mode would raise) and each computes the very integers numpy computes: the
counts, and so the integer sums, are equal on every engine and every
partitioning.

The query: the rows kept (complete, as ``na_rm`` keeps them) with their group
keys, their bin, the summed columns (``p`` and ``y``; ``(p - y)^2``, ``log q``
and ``q == 0`` for the scores) and the row state ``(a, b)`` (once per row); per
row and replicate the count ``n``; per ``(keys, r, bin)`` the sums of ``n`` and
of ``n`` times each column. DuckDB and Spark cross the rows with the replicates
``r = 1 .. R`` in one query (DuckDB over the rows drawn, ``n > 0``); polars,
whose cross join materialises its rows, takes :data:`POLARS_BATCH` replicates
per query as columns of each row. The driver receives O(groups x R x bins)
numbers and reduces all replicates at once (:func:`reduce_cells`, the pandas
path's ``bin_gaps`` per cell), then the intervals with ``finish_bootstrap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

from .._kernels import poisson as kp

__all__ = ["ECE_SUMS", "POLARS_BATCH", "PUSHED_METRICS", "bind_bootstrap", "check_row_key",
           "pushed_form", "cell_chunks", "reduce_cells", "replicate_sums", "replicate_values",
           "summarise"]

_M = kp.MASK


# --------------------------------------------------------------------------
# the generator as an expression tree, rendered per engine


class _Sql:
    """Renders the operations as SQL text (DuckDB or Spark)."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def col(self, name: str) -> str:
        return name

    def xor(self, a: Any, b: Any) -> str:
        return f"xor({a}, {b})" if self.dialect == "duckdb" else f"({a} ^ {b})"

    def band(self, a: Any, b: Any) -> str:
        return f"({a} & {b})"

    def bor(self, a: Any, b: Any) -> str:
        return f"({a} | {b})"

    def add(self, a: Any, b: Any) -> str:
        return f"({a} + {b})"

    def sub(self, a: Any, b: Any) -> str:
        return f"({a} - {b})"

    def mul(self, a: Any, b: Any) -> str:
        return f"({a} * {b})"

    def div(self, a: Any, d: int) -> str:
        """``a // d`` for ``a >= 0`` or ``a`` a multiple of ``d``: DuckDB's ``//``
        and Spark's ``div`` truncate, the same as the floor there."""
        return f"({a} // {d})" if self.dialect == "duckdb" else f"({a} div {d})"

    def count(self, h: Any) -> str:
        """The number of thresholds ``h`` reaches, as a CASE that stops at the first
        threshold above ``h`` (92% of the words stop by the third: 30% less time
        than the sum of the 12 comparisons on DuckDB)."""
        whens = " ".join(f"WHEN {h} < {t} THEN {j}" for j, t in enumerate(kp.THRESHOLDS))
        return f"(CASE {whens} ELSE {len(kp.THRESHOLDS)} END)"


class _Polars:
    """Renders the operations as polars expressions (Int64 arithmetic)."""

    def __init__(self) -> None:
        import polars as pl

        self.pl = pl

    def _e(self, a: Any) -> Any:
        return self.pl.lit(a, dtype=self.pl.Int64) if isinstance(a, int) else a

    def col(self, name: str) -> Any:
        return self.pl.col(name)

    def xor(self, a: Any, b: Any) -> Any:
        return self._e(a).xor(self._e(b))

    def band(self, a: Any, b: Any) -> Any:
        return self._e(a).and_(self._e(b))

    def bor(self, a: Any, b: Any) -> Any:
        return self._e(a).or_(self._e(b))

    def add(self, a: Any, b: Any) -> Any:
        return self._e(a) + self._e(b)

    def sub(self, a: Any, b: Any) -> Any:
        return self._e(a) - self._e(b)

    def mul(self, a: Any, b: Any) -> Any:
        return self._e(a) * self._e(b)

    def div(self, a: Any, d: int) -> Any:
        return self._e(a) // self._e(d)

    def count(self, h: Any) -> Any:
        pl = self.pl
        return pl.sum_horizontal(*[(h >= pl.lit(t, dtype=pl.Int64)).cast(pl.Int64)
                                   for t in kp.THRESHOLDS])


def _mul32(R: Any, x: Any, c: int) -> Any:
    """``(x c) mod 2**32`` of a word ``x < 2**32``, as two products below 2**48."""
    lo, hi = c & 0xFFFF, c >> 16
    return R.band(R.add(R.mul(x, lo), R.mul(R.band(R.mul(x, hi), 0xFFFF), 65536)), _M)


def _fmix_steps(R: Any, name: str) -> list[Any]:
    """fmix32 of the column ``name`` as three steps, each an expression of the
    column ``name`` that the previous step wrote (so no expression repeats a
    deep one)."""
    h = R.col(name)
    first = _mul32(R, R.xor(h, R.div(h, 65536)), kp.MURMUR[0])
    second = _mul32(R, R.xor(h, R.div(h, 8192)), kp.MURMUR[1])
    third = R.xor(h, R.div(h, 65536))
    return [first, second, third]


# --------------------------------------------------------------------------
# the query, per engine


def _state_plan(R: Any, seed: int) -> list[dict[str, Any]]:
    """The projection steps that add ``__a`` and ``__b`` (the row state) to a frame
    holding the row key ``__key`` (Int64): each step a dict of new columns."""
    s1, s2, s3, s4 = kp.seed_words(seed)
    key = R.col("__key")
    lo = R.band(key, _M)
    steps: list[dict[str, Any]] = [{"__lo": lo}]
    steps.append({"__hi": R.band(R.div(R.sub(key, R.col("__lo")), 2**32), _M),
                  "__u": R.xor(R.col("__lo"), s1)})
    steps.append({"__v": R.xor(R.col("__hi"), s3)})
    fu, fv = _fmix_steps(R, "__u"), _fmix_steps(R, "__v")
    for a, b in zip(fu, fv, strict=True):
        steps.append({"__u": a, "__v": b})
    steps.append({"__u": R.xor(R.xor(R.col("__u"), R.col("__hi")), s2),
                  "__v": R.xor(R.xor(R.col("__v"), R.col("__lo")), s4)})
    fu, fv = _fmix_steps(R, "__u"), _fmix_steps(R, "__v")
    for a, b in zip(fu, fv, strict=True):
        steps.append({"__u": a, "__v": b})
    steps.append({"__a": R.col("__u"), "__b": R.bor(R.col("__v"), 1)})
    return steps


def _replicate_plan(R: Any, r: Any = None, suffix: str = "") -> list[dict[str, Any]]:
    """The steps from ``__a``, ``__b`` and the replicate (the column ``__r``, or the
    integer ``r``) to the count ``__n{suffix}``."""
    h = f"__h{suffix}"
    rep = R.col("__r") if r is None else r
    steps: list[dict[str, Any]] = [
        {h: R.band(R.add(R.col("__a"), R.mul(rep, R.col("__b"))), _M)}]
    for e in _fmix_steps(R, h):
        steps.append({h: e})
    steps.append({f"__n{suffix}": R.count(R.col(h))})
    return steps


#: The sums of the ECE and MCE: per cell, ``sum n p`` and ``sum n y``.
ECE_SUMS: dict[str, tuple[str, str]] = {"__sp": ("__p", "n"), "__sy": ("__y", "n")}

#: polars: replicates per query (docs/engines.md, "Intervals on the engine").
POLARS_BATCH = 25


def _run_polars(native: Any, keys: list, seed: int, reps: range,
                sums: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """polars: no cross join (its crossed rows were materialised: n x R rows); the
    replicates of ``reps`` as columns of each row, summed per ``(keys, bin)`` by the
    streaming engine, whose state is one row per cell."""
    import polars as pl

    R = _Polars()
    lf = native
    for step in _state_plan(R, seed):
        lf = lf.with_columns(**step)
    used = list(dict.fromkeys(c for c, _ in sums.values()))
    lf = lf.select(*keys, "__bin", *used, "__a", "__b")
    plans = [_replicate_plan(R, r, f"_{r}") for r in reps]
    for i in range(len(plans[0])):
        step: dict[str, Any] = {}
        for plan in plans:
            step.update(plan[i])
        lf = lf.with_columns(**step)
    aggs = []
    for r in reps:
        n = pl.col(f"__n_{r}")
        aggs.append(n.cast(pl.Float64).sum().alias(f"__count@{r}"))
        for out, (c, kind) in sums.items():
            w = n.cast(pl.Float64) if kind == "n" else (n > 0).cast(pl.Float64)
            aggs.append((w * pl.col(c)).sum().alias(f"{out}@{r}"))
    wide = lf.group_by(*keys, "__bin").agg(*aggs).collect(engine="streaming").to_pandas()
    parts = []
    for r in reps:
        part = wide[[*keys, "__bin"]].copy()
        part["__r"] = r
        for out in ("__count", *sums):
            part[out] = wide[f"{out}@{r}"].to_numpy()
        parts.append(part[part["__count"] > 0])  # as the engines' query: drawn cells only
    return pd.concat(parts, ignore_index=True)


def _sql_steps(R: Any, source: str, cols: list[str], steps: list[dict[str, Any]]) -> tuple[
        str, list[str]]:
    """Nested SELECTs, one per step, each passing on ``cols`` and the columns so far."""
    sql, have = source, list(cols)
    for step in steps:
        keep = [c for c in have if c not in step]
        exprs = keep + [f"{e} AS {name}" for name, e in step.items()]
        sql = f"SELECT {', '.join(exprs)} FROM ({sql}) AS __t"
        have = keep + list(step)
    return sql, have


def _sum_sql(sums: dict[str, tuple[str, str]], filtered: bool) -> str:
    """The SQL sums of a query whose rows drawn 0 times are ``filtered`` out (or not)."""
    out = ["SUM(CAST(__n AS DOUBLE)) AS __count"]
    for name, (c, kind) in sums.items():
        if kind == "n":
            out.append(f"SUM(CAST(__n AS DOUBLE) * {c}) AS {name}")
        else:
            out.append(f"SUM({c}) AS {name}" if filtered
                       else f"SUM(CASE WHEN __n > 0 THEN {c} ELSE 0.0 END) AS {name}")
    return ", ".join(out)


def _aggregate_sql(R: Any, rows_sql: str, qkeys: list[str], seed: int,
                   reps_sql: str, sums: dict[str, tuple[str, str]]) -> str:
    used = list(dict.fromkeys(c for c, _ in sums.values()))
    base = [*qkeys, "__bin", *used, "__key"]
    sql, have = _sql_steps(R, rows_sql, base, _state_plan(R, seed))
    keep = [*qkeys, "__bin", *used, "__a", "__b"]
    crossed = (f"SELECT {', '.join('__s.' + c for c in keep)}, __reps.__r FROM "
               f"(SELECT {', '.join(keep)} FROM ({sql}) AS __t0) AS __s CROSS JOIN "
               f"({reps_sql}) AS __reps")
    sql, have = _sql_steps(R, crossed, [*keep, "__r"], _replicate_plan(R))
    group = ", ".join([*qkeys, "__r", "__bin"])
    return (f"SELECT {group}, {_sum_sql(sums, True)} "
            f"FROM ({sql}) AS __z WHERE __n > 0 GROUP BY {group}")


def _run_duckdb(native: Any, keys: list, seed: int, reps: range,
                sums: dict[str, tuple[str, str]]) -> pd.DataFrame:
    R = _Sql("duckdb")
    reps_sql = f"SELECT range AS __r FROM range({reps.start}, {reps.stop})"
    sql = _aggregate_sql(R, "SELECT * FROM __rows", keys, seed, reps_sql, sums)
    return native.query("__rows", sql).df()


def _run_spark(native: Any, keys: list, seed: int, reps: range,
               sums: dict[str, tuple[str, str]]) -> pd.DataFrame:
    R = _Sql("spark")
    sdf = native
    for step in _state_plan(R, seed):
        keep = [c for c in sdf.columns if c not in step]
        sdf = sdf.selectExpr(*keep, *[f"{e} AS {name}" for name, e in step.items()])
    used = list(dict.fromkeys(c for c, _ in sums.values()))
    sdf = sdf.select(*keys, "__bin", *used, "__a", "__b")
    from pyspark.sql import functions as F

    rep_frame = sdf.sparkSession.range(reps.start, reps.stop).withColumnRenamed("id", "__r")
    sdf = sdf.crossJoin(F.broadcast(rep_frame))
    for step in _replicate_plan(R):
        keep = [c for c in sdf.columns if c not in step]
        sdf = sdf.selectExpr(*keep, *[f"{e} AS {name}" for name, e in step.items()])
    # no filter of the rows drawn 0 times here: Spark pushes a filter below the
    # projections by substituting their expressions into it (the generator's
    # steps, each read twice by the next: an expression that doubles per step),
    # and its generated code passes the JVM's 64 KB method limit
    aggs = [F.expr(e) for e in _sum_sql(sums, False).split(", ")]
    out = sdf.groupBy(*keys, "__r", "__bin").agg(*aggs)
    return out.toArrow().to_pandas()


_RUNNERS: dict[str, Callable[..., pd.DataFrame]] = {
    "polars": _run_polars, "duckdb": _run_duckdb, "spark": _run_spark}


def replicate_sums(engine_name: str, rows: Any, keys: list[Hashable], seed: int,
                   n_resamples: int, sums: dict[str, tuple[str, str]] | None = None,
                   batch: int | None = None) -> pd.DataFrame:
    """Per ``(keys, __r, __bin)`` the sums ``__count`` (of the Poisson counts ``n``)
    and ``sums`` (``{name: (column, kind)}``: ``sum n v`` for the kind ``"n"``, the
    sum of ``v`` over the rows drawn for ``"drawn"``; default :data:`ECE_SUMS`) of
    the rows of ``rows`` (a narwhals lazy frame of the kept rows with the columns
    ``keys``, ``__bin`` (Int64), the summed columns (Float64) and ``__key``
    (Int64)), computed on the engine; cells with no row drawn are absent.

    The replicates run in queries of ``batch`` consecutive replicates (default:
    :data:`POLARS_BATCH` on polars, all of them in one query on DuckDB and Spark,
    whose cross joins stream): each row's counts depend on the seed, the replicate
    and its key only, so the result is that of one query (the sums added in
    another order: to ``ENGINE_RTOL``).

    The rows a replicate draws 0 times (a share 1/e) are filtered out before the
    aggregation on DuckDB: they add nothing to a sum (``0 * p`` is ``+0.0``), and
    the aggregation, the query's largest cost, reads 37% fewer rows."""
    sums = ECE_SUMS if sums is None else sums
    if batch is None:
        batch = POLARS_BATCH if engine_name == "polars" else n_resamples
    native = rows.to_native()
    parts = [_RUNNERS[engine_name](native, list(keys), seed,
                                   range(r0, min(r0 + batch, n_resamples + 1)), sums)
             for r0 in range(1, n_resamples + 1, batch)]
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    for c in ("__count", *sums):
        out[c] = out[c].astype(np.float64)
    out["__r"] = out["__r"].astype(np.int64)
    out["__bin"] = out["__bin"].astype(np.int64)
    return out


# --------------------------------------------------------------------------
# bootstrap() on an engine source

#: Row-key column types the engines read as a signed 64-bit integer exactly.
_KEY_TYPES = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32")


def _row_key_column(engine: Any, lf: Any, row_key: Any, y: Any, source: str = "p") -> str:
    """The row key's column of the source, checked from its schema (no query)."""
    from .._input import InputError, arg, fmt

    names = list(lf.collect_schema().names())
    if row_key is None:
        raise InputError(
            f'`row_key` is needed for {arg("scheme", "setting", "poisson")} on {engine.what}: '
            f"name an integer column of `{source}` that identifies each row (an engine's rows "
            "have no "
            "position; docs/engines.md, \"Intervals on the engine\").", param="row_key")
    if not isinstance(row_key, str) or row_key not in names or row_key == y:
        raise InputError(
            f"`row_key` must name a column of {arg(source)} other than {arg('y')} when "
            f"{arg(source)} is {engine.what} (its columns: {', '.join(map(repr, names[:10]))}); "
            f"got {fmt(row_key)}.", param="row_key")
    dtype = lf.collect_schema()[row_key]
    if str(dtype.base_type()) not in _KEY_TYPES:
        raise InputError(
            f"`row_key` must name a column of integers (signed, or unsigned of at most 32 "
            f"bits: the generator reads a signed 64-bit key); {row_key!r} holds {dtype}.",
            param="row_key")
    return row_key


#: The metrics whose Poisson replicates the engines compute: the binned ones from
#: per-(replicate, bin) sums, the scores from per-replicate row sums.
PUSHED_METRICS = ("ece", "mce", "brier", "log_loss")


def pushed_form(name: str, options: dict[str, Any]) -> Any:
    """The bins of a pushed-down ``ece``/``mce`` (a data-free ``BinSpec``), True for
    ``brier``/``log_loss``, None when the metric in this form is not pushed down
    (``options``: its resolved options)."""
    from .._binning import BinSpec

    if name in ("brier", "log_loss"):
        return True
    if name not in ("ece", "mce") or options.get("type") == "top-label":
        return None
    spec = BinSpec.from_options(options["bins"], options["binning"], options["right"])
    return spec if spec.data_free else None


def check_row_key(engine: Any, q: Any, qk: str, kept: Any = None) -> int:
    """One counting query over every row: no missing key, no repeated key; returns
    the count of rows ``kept`` (an expression; 0 without)."""
    import narwhals as nw

    from .._inference.bootstrap import row_key_missing, row_key_repeated
    from . import _lazy

    k = nw.col(qk)
    counts = _lazy._collect(q.select(
        nw.len().alias("rows"), k.null_count().alias("missing"),
        k.n_unique().alias("distinct"),
        (nw.lit(0) if kept is None else kept.cast(nw.Int64).sum()).alias("kept")
    )).to_pandas().iloc[0]
    rows, missing = int(counts["rows"]), int(counts["missing"])
    if missing:
        raise row_key_missing(missing)
    if int(counts["distinct"]) != rows:
        raise row_key_repeated(rows - int(counts["distinct"]))
    return int(counts["kept"])


#: The engine's cells reduced at once by :func:`reduce_cells` (at least one cell
#: per (group, replicate)): its temporaries are a few arrays of this length.
REDUCE_CHUNK = 1 << 22


def cell_chunks(n_cells: int, size: int) -> list[tuple[int, int]]:
    """The chunks ``[lo, hi)`` of :func:`reduce_cells`'s ``n_cells`` cells: of
    :data:`REDUCE_CHUNK` cells, or of ``size`` (the replicates of all groups) if
    more, so that each chunk's sums, arrays of ``size``, cost no more than its
    cells."""
    step = max(REDUCE_CHUNK, size)
    return [(lo, min(lo + step, n_cells)) for lo in range(0, n_cells, step)]


def reduce_cells(out: pd.DataFrame, g: np.ndarray, n_groups: int, n_resamples: int,
                 wanted: list[tuple[str, str, int | None]]) -> dict[str, np.ndarray]:
    """The replicates ``{column: (n_groups, n_resamples)}`` of each ``(column,
    metric, tag)`` of ``wanted`` (``metric`` of :data:`PUSHED_METRICS`; ``tag``
    the log loss's sums ``__sl{tag}``, ``__sz{tag}``) from the engine's cells
    ``out`` (:func:`replicate_sums`: one row per (keys, replicate, bin) drawn, in
    any order) whose groups are ``g`` (-1: no group, skipped).

    Each replicate is the pandas path's reduction of its per-bin sums
    (:meth:`calibr._inference.bootstrap._Plan.poisson_value`), over the cells of
    all groups and replicates at once: a cell's gap by ``bin_gaps`` (``|sum n y /
    sum n - sum n p / sum n|``, its bin drawn), the ECE ``sum count * gap / sum
    count`` and the MCE the largest gap of the replicate's drawn bins; ``sum n
    (p - y)^2 / sum n``; ``-(sum n log q) / sum n``, NaN where a row drawn has
    ``q`` 0 (its log loss is inf, the pandas path's replicate NaN). A replicate
    that draws no row of its group (no cell, or cells of count 0) is NaN. Only
    the order in which a replicate's bins are added differs from the pandas
    path's (to ``ENGINE_RTOL``). The cells are read in the chunks of
    :func:`cell_chunks`: the memory beyond ``out`` is a few arrays of a chunk's
    length and of ``n_groups x n_resamples`` (docs/engines.md, "Intervals on the
    engine")."""
    from .._kernels.binned import bin_gaps

    size = n_groups * n_resamples
    slots = size + 1  # the last: the cells of no group, dropped (no copy of the others)
    total = np.zeros(slots)
    acc = {name: np.zeros(slots) for name, _, _ in wanted}
    zeros = {name: np.zeros(slots) for name, which, _ in wanted if which == "log_loss"}
    binned = any(which in ("ece", "mce") for _, which, _ in wanted)
    rep = out["__r"].to_numpy()
    col = {c: out[c].to_numpy() for c in out.columns if c.startswith("__s") or c == "__count"}
    for lo, hi in cell_chunks(len(out), size):
        part = g[lo:hi]
        at = np.where(part >= 0, part * n_resamples + (rep[lo:hi] - 1), size)
        cells = {c: a[lo:hi] for c, a in col.items()}
        count = cells["__count"]
        total += np.bincount(at, count, slots)
        if binned:  # a bin of count 0 has the gap 0 (its sums are 0): it adds nothing
            gap = bin_gaps(count, cells["__sp"], cells["__sy"])[1]
        for name, which, tag in wanted:
            if which == "ece":
                acc[name] += np.bincount(at, count * gap, slots)
            elif which == "mce":  # the gaps are >= 0: the largest of 0 and them
                np.maximum.at(acc[name], at, gap)
            elif which == "brier":
                acc[name] += np.bincount(at, cells["__sb"], slots)
            else:
                acc[name] += np.bincount(at, cells[f"__sl{tag}"], slots)
                zeros[name] += np.bincount(at, cells[f"__sz{tag}"], slots)
    total = total[:size]  # the replicates, without the slot of no group
    some = total != 0.0
    values = {}
    for name, which, _ in wanted:
        dist, sums = np.full(size, math.nan), acc[name][:size]
        if which == "mce":
            dist[some] = sums[some]
        elif which == "log_loss":
            fine = some & (zeros[name][:size] == 0.0)
            dist[fine] = -sums[fine] / total[fine]
        else:
            dist[some] = sums[some] / total[some]
        values[name] = dist.reshape(n_groups, n_resamples)
    return values


def replicate_values(engine: Any, q: Any, qkeys: list[str], qp: str, qy: str, qk: str,
                     plan: list[tuple[str, str, dict[str, Any]]], seed: int, n_resamples: int,
                     locate: Callable[[pd.DataFrame], np.ndarray] | None, n_groups: int
                     ) -> dict[str, np.ndarray]:
    """The Poisson replicates of each ``(column, metric, options)`` of ``plan``
    (metrics of :data:`PUSHED_METRICS`) per group: ``{column: (n_groups,
    n_resamples)}``, NaN where a replicate draws no row of the group.

    One engine query per distinct set of bins (the row sums of ``brier`` and
    ``log_loss`` ride on the first; one bin when there is none), over the rows
    whose ``p`` and ``y`` are there (``na_rm``'s rows; the caller has checked the
    rest); ``locate`` gives each row of the sums' keys its group (-1: none, a
    missing key), None ungrouped. The replicates: :func:`reduce_cells` of each
    query's sums."""
    import narwhals as nw

    from . import _lazy
    from ._pushdown import observed_probability

    x = nw.col(qp).cast(nw.Float64)
    yv = nw.col(qy).cast(nw.Float64)
    kept = ~(x.is_null() | x.is_nan() | yv.is_null() | yv.is_nan())
    specs: list[Any] = []
    for _, which, opts in plan:
        form = pushed_form(which, opts)
        if form is not True and form not in specs:
            specs.append(form)
    scores: dict[str, Any] = {}  # the row sums of the scores: {sum name: (column, kind)}
    extra: dict[str, Any] = {}
    tags: dict[str, int] = {}  # the log losses' sums: __sl{tag}, __sz{tag}
    for name, which, opts in plan:
        if which == "brier":
            extra["__sq"] = (x - yv) ** 2
            scores["__sb"] = ("__sq", "n")
        elif which == "log_loss":
            eps = opts.get("eps")
            tag = tags[name] = [o.get("eps") for _, w, o in plan
                                if w == "log_loss"].index(eps)
            picked = observed_probability(x, yv, eps)
            extra[f"__lq{tag}"] = nw.when(picked > 0.0).then(picked).otherwise(1.0).log()
            extra[f"__lz{tag}"] = (picked == 0.0).cast(nw.Float64)
            scores[f"__sl{tag}"] = (f"__lq{tag}", "n")
            scores[f"__sz{tag}"] = (f"__lz{tag}", "drawn")
    values: dict[str, np.ndarray] = {}
    for i, spec in enumerate(specs or [None]):
        if spec is None:
            b = nw.lit(0.0)
        else:
            b = _lazy._bin_expr(x, spec, spec.edges())
        sums = dict(ECE_SUMS) if spec is not None else {}
        cols = dict(__p=x, __y=yv) if spec is not None else {}
        if i == 0:
            sums.update(scores)
            cols.update(extra)
        frame = q.filter(kept).select(*qkeys, __bin=b.cast(nw.Int64), **cols,
                                      __key=nw.col(qk).cast(nw.Int64))
        out = replicate_sums(engine.name, frame, qkeys, seed, n_resamples, sums)
        g = np.zeros(len(out), dtype=np.int64) if locate is None else locate(out[qkeys])
        wanted = [(name, which, tags.get(name)) for name, which, opts in plan
                  if (which in ("ece", "mce") and pushed_form(which, opts) == spec)
                  or (i == 0 and which in ("brier", "log_loss"))]
        values.update(reduce_cells(out, g, n_groups, n_resamples, wanted))
    return values


def bind_bootstrap(engine: Any) -> Callable[..., Any]:
    """The ``bootstrap`` of ``engine``: the Poisson scheme of the metrics of
    :data:`PUSHED_METRICS` pushed down; everything else collected under the rule of
    :mod:`calibr._engines._lazy`."""
    from . import _lazy

    def bootstrap(p, y, metric, *, n_resamples, confidence_level, method, rng, classes,
                  na_rm, scheme, row_key, **options):
        import calibr

        from .._inference.bootstrap import check_metric, finish_bootstrap, poisson_seed
        from .._input import resolved_options

        lf = _lazy._source(engine, p, "p")
        kwargs = dict(n_resamples=n_resamples, confidence_level=confidence_level,
                      method=method, rng=rng, classes=classes, na_rm=na_rm, scheme=scheme)
        if scheme == "poisson":
            key = _row_key_column(engine, lf, row_key, y)
            if isinstance(rng, int):  # a seed the generator cannot use: before any query
                poisson_seed(rng)
            cols = _lazy._metric_columns(engine, lf.drop(key), y, None)
        else:
            if row_key is not None:  # the pandas path's message, nothing collected
                return calibr.bootstrap([0.5], [1], metric, row_key=row_key, **kwargs,
                                        **options)
            key, cols = None, _lazy._metric_columns(engine, lf, y, None)
        name, fn, opts = check_metric(metric, options, "bootstrap")
        full = resolved_options(fn, opts) if name in PUSHED_METRICS else {}
        pushed = (scheme == "poisson" and name in PUSHED_METRICS and method != "bca"
                  and pushed_form(name, full) is not None
                  and _lazy._pushable(lf, cols, None, classes))
        pcols = cols.p if isinstance(cols.p, list) else [cols.p]
        if not pushed:  # collected: the pandas path on the engine's rows, in its order
            used = [*pcols, cols.y, *([] if key is None else [key])]
            frame = _lazy._collected(engine, lf, used, "calibr.bootstrap", "p")
            extra = {} if key is None else {"row_key": _lazy._column(frame, key)}
            return calibr.bootstrap(_lazy._column(frame, cols.p), _lazy._column(frame, cols.y),
                                    metric, **kwargs, **extra, **options)
        seed = poisson_seed(rng)
        q, new = _lazy._query_frame(engine, lf, [cols.p, cols.y, key])
        qp, qy, qk = new[cols.p], new[cols.y], new[key]
        # the estimate, by the engine's pushed-down metric (its checks and messages)
        estimate = getattr(calibr, name)(q.select(qp, qy).to_native(), qy, na_rm=na_rm,
                                         **opts)
        import narwhals as nw

        x = nw.col(qp).cast(nw.Float64)
        yv = nw.col(qy).cast(nw.Float64)
        n = check_row_key(engine, q, qk,
                          ~(x.is_null() | x.is_nan() | yv.is_null() | yv.is_nan()))
        dist = replicate_values(engine, q, [], qp, qy, qk, [(name, name, full)], seed,
                                n_resamples, None, 1)[name][0]
        return finish_bootstrap(dist, float(estimate), confidence_level, method, None, name,
                                n_resamples, n, "poisson", seed)

    return bootstrap


def summarise(engine: Any, lf: Any, keys: list, cols: Any, wcol: Any, classes: Any,
              plan: list | None, kwargs: dict[str, Any], eager: Callable[[Any], Any],
              row_key: Any) -> Any:
    """``summarise(..., confidence_level=..., scheme="poisson", row_key=COLUMN)`` of a
    lazy source (``docs/engines.md``, "Intervals on the engine"): the metrics of
    :data:`PUSHED_METRICS` (``plan``, as ``_lazy._binned_plan`` gives it) by the
    engine's pushed-down summary, their intervals from the engine's per-(group,
    replicate) sums, every group with the seed ``kwargs["rng"]`` (already an
    integer: ``calibr.frame.summarise``) and the rows' keys; any other metric,
    ``tests``, BCa, ``weights`` or input the query does not read: the pandas path on
    the collected columns (under the collect rule)."""
    import calibr

    from .._inference.bootstrap import finish_bootstrap
    from .._input.warning import GroupWarnings
    from ..frame import check_interval_names, check_metric_names
    from . import _lazy
    from ._pushdown import _describe

    key = _row_key_column(engine, lf, row_key, cols.y, "data")
    forms = [] if plan is None else [pushed_form(which, opts) for _, which, opts in plan]
    pushed = (plan is not None and all(f is not None for f in forms)
              and kwargs["tests"] is None and kwargs["ci_method"] not in ("bca", "BCa")
              and wcol is None and _lazy._pushable(lf, cols, None, classes))
    if not pushed:
        pcols = cols.p if isinstance(cols.p, list) else [cols.p]
        used = [*keys, *pcols, cols.y, *([] if wcol is None else [wcol]), key]
        return eager(_lazy._collected(engine, lf, list(dict.fromkeys(used)),
                                      "calibr.summarise", "data"))
    names = [name for name, _, _ in plan]
    out_names = [c for n in names for c in (n, f"{n}_low", f"{n}_high")]
    if keys:
        check_metric_names(out_names, keys)  # the pandas path's refusal, before any query
    check_interval_names(names, [])
    seed = int(kwargs["rng"])
    point = {k: v for k, v in kwargs.items() if k not in ("scheme", "row_key")}
    point["confidence_level"] = None
    import narwhals as nw

    est = nw.from_native(calibr.summarise(lf.to_native(), **point), eager_only=True).to_pandas()
    q, new = _lazy._query_frame(engine, lf, [*keys, cols.p, cols.y, key])
    qkeys = [new[k] for k in keys]
    check_row_key(engine, q, new[key])
    key_frame = est[keys] if keys else None
    n_groups = len(est)

    def locate(found: pd.DataFrame) -> np.ndarray:
        target = found.set_axis(keys, axis=1)
        if len(keys) == 1:
            return pd.Index(key_frame[keys[0]]).get_indexer(target[keys[0]])
        return pd.MultiIndex.from_frame(key_frame).get_indexer(pd.MultiIndex.from_frame(target))

    dists = replicate_values(engine, q, qkeys, new[cols.p], new[cols.y], new[key], plan, seed,
                             kwargs["n_resamples"], locate if keys else None, n_groups)
    said = GroupWarnings()
    result = {} if key_frame is None else {k: key_frame[k] for k in keys}
    for name, which, _ in plan:
        low, high = np.full(n_groups, math.nan), np.full(n_groups, math.nan)
        values = est[name].to_numpy(dtype=np.float64)
        for g in range(n_groups):
            with said.gathering(name, g, units=("resamples",)):
                ci = finish_bootstrap(dists[name][g], float(values[g]),
                                      kwargs["confidence_level"], kwargs["ci_method"], None,
                                      which, kwargs["n_resamples"], 0, "poisson",
                                      seed).confidence_interval
            low[g], high[g] = ci
        result.update({name: values, f"{name}_low": low, f"{name}_high": high})
    said.warn(lambda g: _describe(key_frame, g))
    return _lazy._native_result(engine, pd.DataFrame(result).reset_index(drop=True))
