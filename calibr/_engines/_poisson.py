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

The query: the rows kept (complete, as ``na_rm`` keeps them) with their bin,
``p``, ``y`` and the row state ``(a, b)`` (once per row), crossed with the
replicates ``r = 1 .. R``; per row and replicate the count ``n``; per
``(keys, r, bin)`` the sums of ``n``, ``n p`` and ``n y`` over the rows drawn
(``n > 0``). The driver receives
O(groups x R x bins) numbers and reduces each replicate with the functions of
the pandas path (``ece_from_stats``, ``mce_from_stats``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

from .._kernels import poisson as kp

__all__ = ["bind_bootstrap", "replicate_sums"]

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


def _replicate_plan(R: Any) -> list[dict[str, Any]]:
    """The steps from ``__a``, ``__b`` and the replicate ``__r`` to the count ``__n``."""
    steps: list[dict[str, Any]] = [
        {"__h": R.band(R.add(R.col("__a"), R.mul(R.col("__r"), R.col("__b"))), _M)}]
    for e in _fmix_steps(R, "__h"):
        steps.append({"__h": e})
    steps.append({"__n": R.count(R.col("__h"))})
    return steps


def _run_polars(native: Any, keys: list, seed: int, n_resamples: int) -> pd.DataFrame:
    import polars as pl

    R = _Polars()
    lf = native
    for step in _state_plan(R, seed):
        lf = lf.with_columns(**step)
    lf = lf.select(*keys, "__bin", "__p", "__y", "__a", "__b")
    reps = pl.LazyFrame({"__r": np.arange(1, n_resamples + 1, dtype=np.int64)})
    lf = lf.join(reps, how="cross")
    for step in _replicate_plan(R):
        lf = lf.with_columns(**step)
    n = pl.col("__n").cast(pl.Float64)
    q = lf.filter(pl.col("__n") > 0).group_by(*keys, "__r", "__bin").agg(
        n.sum().alias("__count"), (n * pl.col("__p")).sum().alias("__sp"),
        (n * pl.col("__y")).sum().alias("__sy"))
    return q.collect(engine="streaming").to_pandas()


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


def _aggregate_sql(R: Any, rows_sql: str, qkeys: list[str], seed: int,
                   n_resamples: int, reps_sql: str) -> str:
    base = [*qkeys, "__bin", "__p", "__y", "__key"]
    sql, have = _sql_steps(R, rows_sql, base, _state_plan(R, seed))
    keep = [*qkeys, "__bin", "__p", "__y", "__a", "__b"]
    crossed = (f"SELECT {', '.join('__s.' + c for c in keep)}, __reps.__r FROM "
               f"(SELECT {', '.join(keep)} FROM ({sql}) AS __t0) AS __s CROSS JOIN "
               f"({reps_sql}) AS __reps")
    sql, have = _sql_steps(R, crossed, [*keep, "__r"], _replicate_plan(R))
    group = ", ".join([*qkeys, "__r", "__bin"])
    return (f"SELECT {group}, SUM(CAST(__n AS DOUBLE)) AS __count, "
            f"SUM(CAST(__n AS DOUBLE) * __p) AS __sp, SUM(CAST(__n AS DOUBLE) * __y) AS __sy "
            f"FROM ({sql}) AS __z WHERE __n > 0 GROUP BY {group}")


def _run_duckdb(native: Any, keys: list, seed: int, n_resamples: int) -> pd.DataFrame:
    R = _Sql("duckdb")
    reps = f"SELECT range AS __r FROM range(1, {n_resamples + 1})"
    sql = _aggregate_sql(R, "SELECT * FROM __rows", keys, seed, n_resamples, reps)
    return native.query("__rows", sql).df()


def _run_spark(native: Any, keys: list, seed: int, n_resamples: int) -> pd.DataFrame:
    R = _Sql("spark")
    sdf = native
    for step in _state_plan(R, seed):
        keep = [c for c in sdf.columns if c not in step]
        sdf = sdf.selectExpr(*keep, *[f"{e} AS {name}" for name, e in step.items()])
    sdf = sdf.select(*keys, "__bin", "__p", "__y", "__a", "__b")
    from pyspark.sql import functions as F

    reps = sdf.sparkSession.range(1, n_resamples + 1).withColumnRenamed("id", "__r")
    sdf = sdf.crossJoin(F.broadcast(reps))
    for step in _replicate_plan(R):
        keep = [c for c in sdf.columns if c not in step]
        sdf = sdf.selectExpr(*keep, *[f"{e} AS {name}" for name, e in step.items()])
    # no filter of the rows drawn 0 times here: Spark pushes a filter below the
    # projections by substituting their expressions into it (the generator's
    # steps, each read twice by the next: an expression that doubles per step),
    # and its generated code passes the JVM's 64 KB method limit
    out = sdf.groupBy(*keys, "__r", "__bin").agg(
        F.expr("SUM(CAST(__n AS DOUBLE))").alias("__count"),
        F.expr("SUM(CAST(__n AS DOUBLE) * __p)").alias("__sp"),
        F.expr("SUM(CAST(__n AS DOUBLE) * __y)").alias("__sy"))
    return out.toArrow().to_pandas()


_RUNNERS: dict[str, Callable[..., pd.DataFrame]] = {
    "polars": _run_polars, "duckdb": _run_duckdb, "spark": _run_spark}


def replicate_sums(engine_name: str, rows: Any, keys: list[Hashable], seed: int,
                   n_resamples: int) -> pd.DataFrame:
    """Per ``(keys, __r, __bin)`` the sums ``__count``, ``__sp``, ``__sy`` of the
    Poisson counts of the rows of ``rows`` (a narwhals lazy frame of the kept rows
    with the columns ``keys``, ``__bin`` (Int64), ``__p``, ``__y`` (Float64) and
    ``__key`` (Int64)), computed on the engine; cells with no row are absent.

    The rows a replicate draws 0 times (a share 1/e) are filtered out before the
    aggregation: they add nothing to a sum (``0 * p`` is ``+0.0``), and the
    aggregation, the query's largest cost, reads 37% fewer rows."""
    out = _RUNNERS[engine_name](rows.to_native(), list(keys), seed, n_resamples)
    for c in ("__count", "__sp", "__sy"):
        out[c] = out[c].astype(np.float64)
    out["__r"] = out["__r"].astype(np.int64)
    out["__bin"] = out["__bin"].astype(np.int64)
    return out


# --------------------------------------------------------------------------
# bootstrap() on an engine source

#: Row-key column types the engines read as a signed 64-bit integer exactly.
_KEY_TYPES = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32")


def _row_key_column(engine: Any, lf: Any, row_key: Any, y: Any) -> str:
    """The row key's column of the source, checked from its schema (no query)."""
    from .._input import InputError, arg, fmt

    names = list(lf.collect_schema().names())
    if row_key is None:
        raise InputError(
            f'`row_key` is needed for {arg("scheme", "setting", "poisson")} on {engine.what}: '
            "name an integer column of `p` that identifies each row (an engine's rows have no "
            "position; docs/engines.md, \"Intervals on the engine\").", param="row_key")
    if not isinstance(row_key, str) or row_key not in names or row_key == y:
        raise InputError(
            f"`row_key` must name a column of {arg('p')} other than {arg('y')} when "
            f"{arg('p')} is {engine.what} (its columns: {', '.join(map(repr, names[:10]))}); "
            f"got {fmt(row_key)}.", param="row_key")
    dtype = lf.collect_schema()[row_key]
    if str(dtype.base_type()) not in _KEY_TYPES:
        raise InputError(
            f"`row_key` must name a column of integers (signed, or unsigned of at most 32 "
            f"bits: the generator reads a signed 64-bit key); {row_key!r} holds {dtype}.",
            param="row_key")
    return row_key


def bind_bootstrap(engine: Any) -> Callable[..., Any]:
    """The ``bootstrap`` of ``engine``: the Poisson scheme of a binned metric
    pushed down; everything else collected under the rule of
    :mod:`calibr._engines._lazy`."""
    from . import _lazy

    def bootstrap(p, y, metric, *, n_resamples, confidence_level, method, rng, classes,
                  na_rm, scheme, row_key, **options):
        import narwhals as nw

        import calibr

        from .._binning import BinSpec
        from .._inference.bootstrap import (
            check_metric,
            finish_bootstrap,
            poisson_seed,
            row_key_missing,
            row_key_repeated,
        )
        from .._input import resolved_options
        from .._kernels.binned import ece_from_stats, mce_from_stats

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
        full = resolved_options(fn, opts) if name in ("ece", "mce") else {}
        spec = (BinSpec.from_options(full["bins"], full["binning"], full["right"])
                if full else None)
        pushed = (scheme == "poisson" and spec is not None and spec.data_free
                  and method != "bca" and full["type"] != "top-label"
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
        x = nw.col(qp).cast(nw.Float64)
        yv = nw.col(qy).cast(nw.Float64)
        kept = ~(x.is_null() | x.is_nan() | yv.is_null() | yv.is_nan())
        k = nw.col(qk)
        counts = _lazy._collect(q.select(
            nw.len().alias("rows"), k.null_count().alias("missing"),
            k.n_unique().alias("distinct"),
            kept.cast(nw.Int64).sum().alias("kept"))).to_pandas().iloc[0]
        rows, missing = int(counts["rows"]), int(counts["missing"])
        if missing:
            raise row_key_missing(missing)
        if int(counts["distinct"]) != rows:
            raise row_key_repeated(rows - int(counts["distinct"]))
        edges = spec.edges()
        nbins = edges.shape[0] - 1
        frame = q.filter(kept).select(
            __bin=_lazy._bin_expr(x, spec, edges).cast(nw.Int64), __p=x, __y=yv,
            __key=k.cast(nw.Int64))
        sums = replicate_sums(engine.name, frame, [], seed, n_resamples)
        r = sums["__r"].to_numpy() - 1
        b = sums["__bin"].to_numpy()
        stats = {}
        for c in ("__count", "__sp", "__sy"):
            a = np.zeros((n_resamples, nbins))
            a[r, b] = sums[c].to_numpy()  # one row per (replicate, bin)
            stats[c] = a
        reduce = ece_from_stats if name == "ece" else mce_from_stats
        dist = np.empty(n_resamples)
        for i in range(n_resamples):
            count = stats["__count"][i]
            dist[i] = (math.nan if count.sum() == 0.0
                       else reduce(count, stats["__sp"][i], stats["__sy"][i]))
        return finish_bootstrap(dist, float(estimate), confidence_level, method, None, name,
                                n_resamples, int(counts["kept"]), "poisson", seed)

    return bootstrap
