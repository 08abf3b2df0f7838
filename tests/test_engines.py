"""Lazy sources on the engines of calibr/_engines/ (polars LazyFrame, DuckDB;
Spark in tests/test_engines_spark.py): the pushed-down binned metrics equal the
pandas path on the same rows to ENGINE_RTOL, the bin of every row is that of
calibr._binning.bin_index (breaks, 0 and 1, float32), groups and their order
are pandas', bad input raises the pandas path's message, and the collect rule
(docs/engines.md) collects below MAX_COLLECT_ROWS and refuses above."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import duckdb
import narwhals as nw
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from tolerances import ENGINE_RTOL

import calibr
import calibr._engines.duckdb
import calibr._engines.polars
from calibr._binning import BinSpec, bin_index
from calibr._engines import _lazy
from calibr._registry import COLLECTED, METRICS, PUSHED_DOWN

ENGINES = ["polars", "duckdb"]


def _frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    # values exactly on R's breaks of 10, 7 and 3 bins, on the explicit breaks, 0 and 1
    on = np.concatenate([np.linspace(0, 1, 11), np.linspace(0, 1, 8), np.linspace(0, 1, 4),
                         [0.0, 0.0, 1.0, 1.0, 0.25, 0.6]])
    p[:on.size] = on
    p[on.size:on.size + 20] = np.nextafter(np.linspace(0.05, 0.95, 20), 2.0)
    df = pd.DataFrame({"g": rng.choice(["b", "a", "c"], n), "k": rng.integers(0, 4, n),
                       "p": p, "w": rng.integers(0, 4, n).astype(float)})
    df["y"] = (rng.random(n) < df["p"]).astype(np.int64)
    df["p32"] = df["p"].astype(np.float32)
    return df


def _source(df: pd.DataFrame | pl.DataFrame, engine: str):
    frame = df if isinstance(df, pl.DataFrame) else pl.from_pandas(df)
    if engine == "polars":
        return frame.lazy()
    return duckdb.from_arrow(frame.to_arrow())


def _cols(src, *names):
    return nw.from_native(src).select(*names).to_native()


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= ENGINE_RTOL * abs(b)


BINS = [
    dict(),  # R's bins
    dict(bins=7, right=False),
    dict(bins=3),
    dict(bins=1),
    dict(bins=np.array([0.0, 0.25, 0.6, 1.0])),
    dict(bins=np.array([0.0, 0.25, 0.6, 1.0]), right=False),
    dict(bins=10, binning="equal-mass"),
    dict(bins=15, binning="equal-mass", right=False),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opts", BINS, ids=repr)
def test_binned_metrics_equal_the_pandas_path(engine, opts):
    df = _frame()
    src = _source(df, engine)
    for pcol in ("p", "p32"):  # float32 columns are read exactly, as pandas reads them
        lazy_p = _cols(src, pcol, "y")
        for f, extra in ((calibr.ece, {}), (calibr.mce, {}),
                         (calibr.calibration_error, {}),
                         (calibr.calibration_error, {"norm": "l1"}),
                         (calibr.calibration_error, {"norm": "max"}),
                         (calibr.calibration_error, {"debias": True})):
            want = f(df[pcol], df["y"], **opts, **extra)
            got = f(lazy_p, "y", **opts, **extra)
            assert isinstance(got, float)
            assert _close(got, want), (f.__name__, pcol, extra, got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_weighted_metrics_equal_the_pandas_path(engine):
    df = _frame()
    src = _cols(_source(df, engine), "p", "y", "w")
    for opts in BINS[:6]:
        for f in (calibr.ece, calibr.mce):
            want = f(df["p"], df["y"], weights=df["w"], **opts)
            assert _close(f(src, "y", weights="w", **opts), want), (f.__name__, opts)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opts", BINS[:6], ids=repr)
def test_the_bin_of_every_row_is_that_of_bin_index(engine, opts):
    """The bin expression on every break, its neighbouring doubles, 0 and 1."""
    spec = BinSpec.from_options(opts.get("bins", 10), "equal-width", opts.get("right", True))
    edges = spec.edges()
    x = np.unique(np.clip(np.concatenate(
        [edges, np.nextafter(edges, -1.0), np.nextafter(edges, 2.0), [0.0, 1.0, 5e-324]]),
        0.0, 1.0))
    for values in (x, x.astype(np.float32)):
        src = _source(pd.DataFrame({"x": values}), engine)
        expr = _lazy._bin_expr(nw.col("x").cast(nw.Float64), spec, edges)
        got = nw.from_native(src).select(b=expr.cast(nw.Int64)).collect().to_pandas()["b"]
        want = bin_index(values.astype(np.float64), edges, spec.right)
        np.testing.assert_array_equal(got.to_numpy(), want)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engines_own_query_bins_every_edge_as_bin_index(engine):
    """The engine's own cell query (calibr/_engines/polars.py and duckdb.py,
    ``_cells``) on every break k/B of R's bins, its neighbouring doubles, 0, 1 and
    the smallest double, for B = 1..64 and a few large B: each row its own group
    (an int32 key), so its cell key gives its bin; and ``ceil(p B) - 1``, the
    simpler rule, disagrees with bin_index there (why the kernel's arithmetic)."""
    module = {"polars": calibr._engines.polars, "duckdb": calibr._engines.duckdb}[engine]
    ceil_wrong = 0
    for b in [*range(1, 65), 100, 1000, 1023, 4096]:
        edges = BinSpec.from_options(b, "equal-width", True).edges()
        k = np.arange(b + 1) / b
        x = np.unique(np.clip(np.concatenate(
            [edges, np.nextafter(edges, -1.0), np.nextafter(edges, 2.0), k,
             np.nextafter(k, -1.0), np.nextafter(k, 2.0), [0.0, 1.0, 5e-324]]), 0.0, 1.0))
        want = bin_index(x, edges, True)
        ceil_wrong += int((np.maximum(np.ceil(x * b) - 1, 0) != want).sum())
        df = pd.DataFrame({"c0": np.arange(x.size, dtype=np.int32), "c1": x,
                           "c2": np.zeros(x.size, dtype=np.int8)})
        q = nw.from_native(_source(df, engine))
        got = _lazy._engine_cells(module.ENGINE, q, ["c0"], SimpleNamespace(p="c1", y="c2"), b)
        got = got.sort_values("c0")
        np.testing.assert_array_equal(got["c0"].to_numpy(), np.arange(x.size))
        np.testing.assert_array_equal(got["__bin"].to_numpy(), want, err_msg=f"bins={b}")
        np.testing.assert_array_equal(got["__sp"].to_numpy(), x)
        # one bad row (a label 2) sends the call to the counting query
        bad = nw.from_native(_source(df.assign(c2=np.where(df["c0"] == 1, 2, 0)), engine))
        assert _lazy._engine_cells(module.ENGINE, bad, ["c0"],
                                   SimpleNamespace(p="c1", y="c2"), b) is None
    assert ceil_wrong > 500, ceil_wrong


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bad", [np.nan, None, -0.1, 1.5, np.inf, -np.inf, 1e308, -5e-324])
def test_the_engines_own_query_marks_a_bad_p(engine, bad):
    """A NaN, missing or out-of-range ``p`` lands in a bad cell (None: counted by
    the full query); a missing key drops the row (pandas' dropna)."""
    module = {"polars": calibr._engines.polars, "duckdb": calibr._engines.duckdb}[engine]
    cols = SimpleNamespace(p="c1", y="c2")
    df = pl.DataFrame({"c0": pl.Series([0, 1, None], dtype=pl.Int32),
                       "c1": pl.Series([0.5, bad, bad], dtype=pl.Float64, strict=False),
                       "c2": pl.Series([1, 0, 0], dtype=pl.Int8)})
    assert _lazy._engine_cells(module.ENGINE, nw.from_native(_source(df, engine)),
                               ["c0"], cols, 10) is None
    got = _lazy._engine_cells(module.ENGINE, nw.from_native(_source(df[[0, 2]], engine)),
                              ["c0"], cols, 10)
    assert got["c0"].tolist() == [0] and got["__bin"].tolist() == [4]
    assert got["__count"].tolist() == [1.0] and got["__sy"].tolist() == [1.0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bad", [0.5, 2.0, -1.0, 5e-324, 1 - 2**-53, 1e308, np.nan, None])
def test_the_engines_own_query_marks_a_bad_label(engine, bad):
    """A label other than 0/1 (``y (1 - y) != 0``: near 0, near 1, huge) or a
    missing one lands in a bad cell."""
    module = {"polars": calibr._engines.polars, "duckdb": calibr._engines.duckdb}[engine]
    df = pl.DataFrame({"c0": pl.Series([0, 1], dtype=pl.Int32), "c1": [0.5, 0.5],
                       "c2": pl.Series([1.0, bad], dtype=pl.Float64, strict=False)})
    assert _lazy._engine_cells(module.ENGINE, nw.from_native(_source(df, engine)), ["c0"],
                               SimpleNamespace(p="c1", y="c2"), 10) is None



@pytest.mark.parametrize("sql_type,whole", [
    ("BOOLEAN", True), ("TINYINT", True), ("SMALLINT", True), ("INTEGER", True),
    ("BIGINT", True), ("HUGEINT", True), ("UTINYINT", True), ("USMALLINT", True),
    ("UINTEGER", True), ("UBIGINT", True), ("UHUGEINT", True), ("FLOAT", False),
    ("DOUBLE", False), ("DECIMAL(10,0)", False), ("DECIMAL(4,1)", False)])
def test_duckdb_s_cell_key_reads_an_integer_label_as_whole(sql_type, whole):
    """DuckDB's cell key (calibr/_engines/_cells.py, ``cell_exprs``) takes ``y (y - 1)``
    itself as the label's term for each of DuckDB's integer and boolean types
    (``WHOLE_LABELS``, the one list of both engines), and ``y (y - 1) <> 0`` for any
    other; the query's text says which."""
    rel = duckdb.sql(f"SELECT 1::INTEGER AS c0, 0.5::DOUBLE AS c1, 1::{sql_type} AS c2")
    query = calibr._engines.duckdb._cells(rel, ["c0"], "c1", "c2", 10).sql_query()
    assert ("<>" not in query) == whole, query


@pytest.mark.parametrize("dtype,folded", [(pl.Int8, True), (pl.UInt32, True), (pl.Int32, True),
                                          (pl.Int64, False), (pl.UInt64, False),
                                          (pl.String, False)])
def test_the_engines_own_query_folds_only_a_narrow_integer_key(dtype, folded):
    """One integer key of at most 32 bits is folded into the float64 cell key (one
    hash key: faster); any other is grouped beside it (DuckDB's query, and
    polars' group-by, ``_grouped_cells``); two keys are never folded."""
    df = pl.DataFrame({"c0": pl.Series([1, 2]).cast(dtype), "c1": [0.5, 0.25],
                       "c2": pl.Series([1, 0], dtype=pl.Int8)})
    query = calibr._engines.duckdb._cells(duckdb.from_arrow(df.to_arrow()), ["c0"], "c1",
                                          "c2", 10).sql_query()
    assert query.endswith("GROUP BY 1" if folded else "GROUP BY 1, 2"), query
    got = calibr._engines.polars._grouped_cells(df.lazy(), ["c0"], "c1", "c2", 10)
    assert got.collect_schema().names()[:2] == (["__k", "__count"] if folded else ["c0", "__k"])
    two = df.with_columns(c3=pl.col("c0"))
    query = calibr._engines.duckdb._cells(duckdb.from_arrow(two.to_arrow()), ["c0", "c3"],
                                          "c1", "c2", 10).sql_query()
    assert query.endswith("GROUP BY 1, 2, 3"), query


def _cells_of(engine: str, df: pl.DataFrame, keys: list, bins: int = 10):
    """The cells of the engine's own query, in (keys, bin) order: an engine's
    group-by returns its groups in any order (DuckDB's differs run to run)."""
    module = {"polars": calibr._engines.polars, "duckdb": calibr._engines.duckdb}[engine]
    got = _lazy._engine_cells(module.ENGINE, nw.from_native(_source(df, engine)), keys,
                              SimpleNamespace(p="c1", y="c2"), bins)
    return None if got is None else got.sort_values([*keys, "__bin"], ignore_index=True)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bins", [10, 49, 98])
def test_the_engines_own_query_tells_one_from_just_above_one(engine, bins):
    """``bins * (1 / bins)`` rounds below 1 for 49 and 98 (not 10): there ``p = 1``
    and a ``p`` just above 1 share the top cell of the shifted key
    (calibr._engines._lazy.top_break_below_one), and the query marks ``p > 1``; 0
    and -0.0 are in bin 0, a ``p`` just below 0 is bad."""
    assert _lazy.top_break_below_one(bins) == (bins != 10)
    ok = pl.DataFrame({"c0": pl.Series([0, 0, 1, 1], dtype=pl.Int32),
                       "c1": [1.0, 0.0, -0.0, 1.0], "c2": pl.Series([1, 0, 0, 1], dtype=pl.Int8)})
    got = _cells_of(engine, ok, ["c0"], bins)
    got = got.groupby(["c0", "__bin"], as_index=False)[["__count", "__sp", "__sy"]].sum()
    assert got.values.tolist() == [[0, 0, 1, 0, 0], [0, bins - 1, 1, 1, 1],
                                   [1, 0, 1, 0, 0], [1, bins - 1, 1, 1, 1]]
    for bad in (np.nextafter(1.0, 2.0), np.nextafter(-0.0, -1.0), 1.0 + 0.4 / bins):
        df = ok.with_columns(c1=pl.Series([1.0, 0.0, bad, 1.0]))
        assert _cells_of(engine, df, ["c0"], bins) is None, bad
        assert _cells_of(engine, df.select("c1", "c2"), [], bins) is None, bad


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype,bad", [(pl.Int8, 2), (pl.Int8, -1), (pl.Int8, 127),
                                       (pl.Int8, -128), (pl.Int64, 2**62),
                                       (pl.Int64, -(2**63)), (pl.UInt8, 255),
                                       (pl.Int8, None), (pl.Boolean, None)])
def test_the_engines_own_query_marks_a_bad_integer_label(engine, dtype, bad):
    """An integer label other than 0/1 (``y (y - 1) >= 2``, huge ones too) or a
    missing one (integer or boolean) is bad, grouped or not; clean ones are not."""
    good = [True, False] if dtype == pl.Boolean else [1, 0]
    clean = pl.DataFrame({"c0": pl.Series([0, 1], dtype=pl.Int32), "c1": [0.5, 0.25],
                          "c2": pl.Series(good, dtype=dtype)})
    got = _cells_of(engine, clean, ["c0"])
    assert got["__sy"].tolist() == [1.0, 0.0] and got["__bin"].tolist() == [4, 2]
    df = clean.with_columns(c2=pl.Series([good[0], bad], dtype=dtype))
    assert _cells_of(engine, df, ["c0"]) is None
    assert _cells_of(engine, df.select(c1="c1", c2="c2"), []) is None


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engines_own_query_drops_a_missing_key_only(engine):
    """A missing key puts its row in no group, whatever its ``p`` and ``y``; a
    missing ``p`` or ``y`` in a row with a key is bad (the shifted key of DuckDB
    and Spark is missing for all three: one count tells them apart); an unsigned
    32-bit key above 2**31 and a negative one are read back exactly."""
    key = pl.Series([0, 2**32 - 1, None, None], dtype=pl.UInt32)
    df = pl.DataFrame({"c0": key, "c1": pl.Series([0.5, 0.95, None, np.nan]),
                       "c2": pl.Series([1, 0, None, 5], dtype=pl.Int8)})
    got = _cells_of(engine, df, ["c0"])
    assert got["c0"].tolist() == [0, 2**32 - 1] and got["__bin"].tolist() == [4, 9]
    df = df.with_columns(c0=pl.Series([-(2**31), 2**31 - 1, None, None], dtype=pl.Int32))
    got = _cells_of(engine, df, ["c0"])
    assert got["c0"].tolist() == [-(2**31), 2**31 - 1] and got["__bin"].tolist() == [4, 9]
    for c in ("c1", "c2"):
        lost = df.with_columns(**{c: pl.Series([None, *df[c].to_list()[1:]],
                                               dtype=df[c].dtype)})
        assert _cells_of(engine, lost, ["c0"]) is None, c


def _apart_key_frame(kind: str) -> tuple[pd.DataFrame, list]:
    """Rows whose group keys the engines' own cell query groups as they are, beside
    the bin (not folded into one float64 key): 64-bit integers beyond 2**53 (and the
    polars stream's sentinel -2**62, and UInt64 above 2**63), strings, floats with
    NaN and missing keys (float64 and float32), and two keys; ties on R's breaks;
    missing keys, two of them in a row with a NaN or out-of-range ``p`` (in no
    group: not an error)."""
    rng = np.random.default_rng(23)
    n = 600
    p = rng.random(n)
    p[::4] = np.round(p[::4], 1)  # on the breaks of 10 bins
    df = pd.DataFrame({"p": p, "y": (rng.random(n) < p).astype(np.int8)})
    pick = rng.integers(0, 4, n)
    values = {"int64": [2**53 + 1, -(2**63) + 5, 2**63 - 1, 0],
              "sentinel": [-(2**62), -(2**62) + 1, -(2**62) + 3, -(2**62) + 2],
              "uint64": [2**64 - 1, 2**63 + 1, 7, 0]}
    if kind in values:
        dtype = "UInt64" if kind == "uint64" else "Int64"
        df["k"] = pd.array(np.array(values[kind], dtype=dtype.lower())[pick], dtype=dtype)
    elif kind == "string":
        df["k"] = np.array(["b", "a", "ü", "a b"], dtype=object)[pick]
    elif kind in ("float", "float32"):
        df["k"] = np.array([0.5, -2.0, 1e300 if kind == "float" else 3e38, 3.0],
                           dtype=np.float64 if kind == "float" else np.float32)[pick]
        df.loc[7, "k"] = np.nan
    elif kind == "two":
        df["k"] = pd.array(np.array([2**40, -3], dtype=np.int64)[pick % 2], dtype="Int64")
        df["s"] = np.array(["x", "y"], dtype=object)[pick // 2]
    df.loc[::50, "k"] = None
    df.loc[50, "p"] = np.nan  # its key is missing: the row is in no group
    df.loc[100, "p"] = 2.0  # so is this one's
    return df, (["s", "k"] if kind == "two" else ["k"])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["int64", "sentinel", "uint64", "string", "float", "float32",
                                  "two"])
def test_the_engines_own_query_groups_any_other_key_beside_the_bin(engine, kind, monkeypatch):
    """Any key but one narrow integer runs the engine's own cell query too, its keys
    grouped as they are (``_lazy._engine_cells``; polars: the dense stream for an
    integer key, polars' group-by for the rest): the pandas path's groups, key values
    (2**63 - 1 and 2**64 - 1 exact), key dtype and numbers; a missing ``p`` in a row
    with a key is bad there, and ``summarise`` gives the pandas path's message."""
    df, keys = _apart_key_frame(kind)
    # a float key's NaN stays NaN (polars' from_pandas would make it missing)
    frame = pl.from_pandas(df, nan_to_null=not kind.startswith("float"))
    if kind.startswith("float"):  # and a missing one, in the row of p = 2
        frame = frame.with_columns(k=pl.when(pl.int_range(pl.len()) != 100).then("k"))
    src = _source(frame, engine)
    if kind.startswith("float"):
        assert nw.from_native(src).select(nw.col("k").is_nan().sum()).collect().item() > 1
        assert nw.from_native(src).select(nw.col("k").is_null().sum()).collect().item() == 1
    calls = []
    cells = _lazy._engine_cells
    monkeypatch.setattr(_lazy, "_engine_cells",
                        lambda *a: calls.append(cells(*a)) or calls[-1])
    metrics = ["ece", "mce", calibr.metric("ece", bins=49)]
    want = calibr.summarise(df.groupby(keys), "p", "y", metrics=metrics)
    got = nw.from_native(calibr.summarise(src, "p", "y", by=keys, metrics=metrics)).to_pandas()
    assert len(calls) == 2 and all(c is not None for c in calls)  # one per number of bins
    if kind.startswith("float"):
        want = want.astype({"k": df["k"].dtype})
    for k in keys:
        assert got[k].tolist() == want[k].tolist(), k
        assert str(got[k].dtype).lower() == str(want[k].dtype).lower(), k
    pd.testing.assert_frame_equal(got.drop(columns=keys), want.drop(columns=keys),
                                  rtol=ENGINE_RTOL, atol=0)
    # the cells themselves: each key's bins, counts and sums, as the kernels give them
    from calibr._kernels.binned import binary_stats

    module = {"polars": calibr._engines.polars, "duckdb": calibr._engines.duckdb}[engine]
    q = nw.from_native(_source(df.rename(columns={"p": "c1", "y": "c2"}), engine))
    out = cells(module.ENGINE, q, keys, SimpleNamespace(p="c1", y="c2"), 10)
    for name, part in df.dropna(subset=keys).groupby(keys):
        name = name if isinstance(name, tuple) else (name,)
        mine = out
        for k, v in zip(keys, name, strict=True):
            mine = mine[mine[k] == v]
        count, sp, sy = binary_stats(part["p"].to_numpy(), part["y"].to_numpy(), 10)
        at = np.flatnonzero(count)
        # DuckDB's j = 0 (p = 0) and j = 1 are two cells of R's bin 0
        mine = mine.groupby("__bin", as_index=False)[["__count", "__sp", "__sy"]].sum()
        np.testing.assert_array_equal(mine["__bin"].to_numpy(), at)
        np.testing.assert_array_equal(mine["__count"].to_numpy(), count[at])
        np.testing.assert_allclose(mine["__sp"].to_numpy(), sp[at], rtol=ENGINE_RTOL)
        np.testing.assert_array_equal(mine["__sy"].to_numpy(), sy[at])
    # a missing p in a row with a key: bad, and the pandas path's message
    lost = df.copy()
    lost.loc[3, "p"] = np.nan
    q = nw.from_native(_source(lost.rename(columns={"p": "c1", "y": "c2"}), engine))
    assert cells(module.ENGINE, q, keys, SimpleNamespace(p="c1", y="c2"), 10) is None
    want = _message(lambda: calibr.summarise(lost.groupby(keys), "p", "y"))
    assert _message(lambda: calibr.summarise(_source(lost, engine), "p", "y", by=keys)) == want


def test_polars_cells_stream_every_key_polars_casts_to_int64_exactly(monkeypatch):
    """polars' dense stream (``_cells``, memory bounded) takes no key and one integer
    key of at most 64 bits but ``UInt64`` (docs/engines.md, "Pushed down"), 64-bit
    keys far from 0 included (``base`` + the cell, exact); polars' group-by
    (``_grouped_cells``) takes the rest: ``UInt64``, 128-bit, string, float, two keys."""
    pol = calibr._engines.polars
    dense = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32]
    for dtype in [*dense, pl.UInt64, pl.Int128, pl.UInt128, pl.String, pl.Float64]:
        lf = pl.LazyFrame({"c0": pl.Series([1, 2]).cast(dtype), "c3": [1, 2]})
        assert pol._dense_key(lf, ["c0"]) == (dtype in dense), dtype
        assert not pol._dense_key(lf, ["c0", "c3"]) and not pol._dense_key(lf, ["c3", "c0"])
    assert pol._dense_key(lf, [])
    monkeypatch.setattr(pol, "_grouped_cells", None)  # not called
    df = pl.DataFrame({"c0": [2**62 + 1, 2**62 + 3, None], "c1": [0.05, 0.95, 0.5],
                       "c2": pl.Series([1, 0, 1], dtype=pl.Int8)})
    got = pol._cells(df.lazy(), ["c0"], "c1", "c2", 10).collect().sort("c0")
    assert got.select("c0", "__k", "__count").rows() == [(2**62 + 1, 0.0, 1.0),
                                                         (2**62 + 3, 9.0, 1.0)]
    got = pol._cells(df.lazy(), [], "c1", "c2", 10).collect().sort("__k")
    assert got.select("__k", "__count").rows() == [(0.0, 1.0), (4.0, 1.0), (9.0, 1.0)]


@pytest.mark.parametrize("dtype", [pl.Int128, pl.UInt128])
def test_polars_cells_group_a_128_bit_key_as_it_is(dtype):
    """A 128-bit integer key is not cast to int64 by the dense stream (polars'
    ``_dense_key``: only the integers it casts exactly): a key beyond 2**64 is read,
    not refused by a failed cast, and the stream's sentinel -2**62 is a key of its
    own, not a missing one (its rows are in their group)."""
    low = 3 if dtype == pl.UInt128 else -(2**62)
    df = pl.DataFrame({"c0": pl.Series([2**70, low, low, None], dtype=dtype),
                       "c1": [0.05, 0.95, 0.55, 0.5],
                       "c2": pl.Series([1, 0, 1, 0], dtype=pl.Int8)})
    got = calibr._engines.polars._cells(df.lazy(), ["c0"], "c1", "c2", 10).collect()
    got = got.filter(pl.col("c0").is_not_null()).sort("c0", "__k")
    assert got.schema["c0"] == dtype
    assert got.select("c0", "__k", "__count", "__sy").rows() == [
        (low, 5.0, 1, 1.0), (low, 9.0, 1, 0.0), (2**70, 0.0, 1, 1.0)]


@pytest.mark.parametrize("dtype", ["Int64", "UInt64"])
def test_a_64_bit_key_with_a_missing_value_is_pandas_nullable_in_duckdb_s_result(dtype):
    """DuckDB's result (an Arrow table) of a 64-bit integer key that holds a missing
    value converts to pandas' nullable ``dtype``, as the pandas path's key column
    (and the collected and the scores' paths) is: the engine's own cell query drops
    the missing key's rows, which must not make the key a plain ``int64``."""
    df = _null_key_frame(dtype)
    rel = _source(df, "duckdb")
    want = calibr.summarise(df.groupby("k"), "p", "y", metrics=["ece"])
    assert str(want["k"].dtype) == dtype
    for metric in ("ece", "brier"):
        got = calibr.summarise(rel, "p", "y", by="k", metrics=[metric]).to_pandas()
        assert str(got["k"].dtype) == dtype, metric
        assert got["k"].tolist() == want["k"].tolist()
    want = calibr.calibration_table("p", "y", data=df.groupby("k"))
    got = calibr.calibration_table("p", "y", data=rel, by="k").to_pandas()
    assert str(got["k"].dtype) == str(want["k"].dtype) == dtype


def _batched_frame(folder) -> pl.LazyFrame:
    """Three Parquet files of 120,000 rows whose group keys span ever wider ranges
    (0..9, then down to -50, then up to 199), ties on R's breaks, missing keys:
    polars' streaming engine hands them to ``_cells`` in several batches."""
    rng = np.random.default_rng(11)
    parts = []
    for lo, hi in ((0, 10), (-50, 5), (100, 200)):
        n = 120_000
        p = rng.random(n)
        p[::5] = np.round(p[::5], 1)  # on the breaks of 10 bins
        g = pl.Series(rng.integers(lo, hi, n), dtype=pl.Int32)
        g = g.scatter(np.arange(0, n, 1001), None)  # missing keys: in no group
        pl.DataFrame({"g": g, "p": p, "y": pl.Series(rng.random(n) < p, dtype=pl.Int8)}
                     ).write_parquet(folder / f"part-{len(parts)}.parquet")
        parts.append(folder / f"part-{len(parts)}.parquet")
    return pl.scan_parquet(parts)


def test_polars_cells_in_batches_equal_polars_group_by_and_pandas(tmp_path):
    """calibr/_engines/polars.py's ``_cells`` adds polars' batches to dense
    (group, bin) arrays that grow with the key's range: the same cells as polars'
    own group-by (``_grouped_cells``), and ``summarise`` the pandas path's
    numbers, groups and order."""
    lf = _batched_frame(tmp_path)
    rows = lf.select("g", "p", "y").collect_batches(maintain_order=False)
    assert sum(1 for _ in rows) > 1  # several batches: the arrays grow
    pol = calibr._engines.polars
    got = pol._cells(lf, ["g"], "p", "y", 10).collect().sort("g", "__k")
    assert got.schema["g"] == pl.Int32  # the key back in its own type, beside the bin
    # polars' group-by folds the int32 key into its cell key: key * 10 + bin
    want = pol._grouped_cells(lf, ["g"], "p", "y", 10).collect(engine="streaming")
    want = want.filter(pl.col("__k").is_not_null()).with_columns(
        g=(pl.col("__k") / 10).floor(), __k=pl.col("__k") - (pl.col("__k") / 10).floor() * 10
    ).sort("g", "__k")
    np.testing.assert_array_equal(got["g"].to_numpy(), want["g"].to_numpy())
    np.testing.assert_array_equal(got["__k"].to_numpy(), want["__k"].to_numpy())
    np.testing.assert_array_equal(got["__count"].to_numpy(), want["__count"].to_numpy())
    np.testing.assert_allclose(got["__sp"].to_numpy(), want["__sp"].to_numpy(),
                               rtol=ENGINE_RTOL)
    np.testing.assert_array_equal(got["__sy"].to_numpy(), want["__sy"].to_numpy())
    df = lf.collect().to_pandas()
    res = calibr.summarise(lf, "p", "y", by="g", metrics=["ece", "mce"]).to_pandas()
    ref = calibr.summarise(df, "p", "y", by="g", metrics=["ece", "mce"])
    np.testing.assert_array_equal(res["g"].to_numpy(), ref["g"].to_numpy())
    for c in ("ece", "mce"):
        np.testing.assert_allclose(res[c].to_numpy(), ref[c].to_numpy(), rtol=ENGINE_RTOL)
    # ungrouped: one key; the per-bin sums are the pandas path's (its ECE of these
    # 360,000 calibrated rows is a difference of sums near 1e4, below ENGINE_RTOL's reach)
    cells = _lazy._engine_cells(pol.ENGINE, nw.from_native(lf), [],
                                SimpleNamespace(p="p", y="y"), 10).sort_values("__bin")
    from calibr._kernels.binned import binary_stats

    count, sp, sy = binary_stats(df["p"].to_numpy(), df["y"].to_numpy(), 10)
    np.testing.assert_array_equal(cells["__count"].to_numpy(), count)
    np.testing.assert_allclose(cells["__sp"].to_numpy(), sp, rtol=ENGINE_RTOL)
    np.testing.assert_array_equal(cells["__sy"].to_numpy(), sy)


def test_polars_cells_of_a_wide_key_run_polars_group_by(monkeypatch, tmp_path):
    """A key whose range times the bins exceeds ``MAX_DENSE_CELLS`` runs polars'
    own group-by (``_grouped_cells``), with the same numbers."""
    pol = calibr._engines.polars
    calls = []
    grouped = pol._grouped_cells
    monkeypatch.setattr(pol, "_grouped_cells",
                        lambda *a: calls.append(a) or grouped(*a))
    lf = _batched_frame(tmp_path)
    df = lf.collect().to_pandas()
    ref = calibr.summarise(df, "p", "y", by="g", metrics=["ece", "mce"])
    monkeypatch.setattr(pol, "MAX_DENSE_CELLS", 2_499)  # 250 keys x 10 bins: grows past it
    res = calibr.summarise(lf, "p", "y", by="g", metrics=["ece", "mce"]).to_pandas()
    assert len(calls) == 1
    for c in ("ece", "mce"):
        np.testing.assert_allclose(res[c].to_numpy(), ref[c].to_numpy(), rtol=ENGINE_RTOL)
    monkeypatch.setattr(pol, "MAX_DENSE_CELLS", 2_500)  # exactly 250 x 10: the dense arrays
    calibr.summarise(lf, "p", "y", by="g", metrics=["ece", "mce"])
    assert len(calls) == 1


@pytest.mark.parametrize("bad", [np.nan, 1.5, -0.0 - 1e-300])
def test_polars_cells_stop_at_a_bad_row_of_a_later_batch(bad, tmp_path):
    """A bad ``p`` in the last chunk (a later batch) makes the cells bad (None), and
    ``summarise`` gives the pandas path's message."""
    lf = _batched_frame(tmp_path)
    df = lf.collect()
    n = df.height
    df = df.with_columns(p=pl.when(pl.int_range(n) == n - 7).then(bad).otherwise(pl.col("p")))
    assert _lazy._engine_cells(calibr._engines.polars.ENGINE, nw.from_native(df.lazy()), ["g"],
                               SimpleNamespace(p="p", y="y"), 10) is None
    with pytest.raises(calibr.InputError, match=r"`p` must (not contain missing|lie in \[0, 1\])"):
        calibr.summarise(df.lazy(), "p", "y", by="g", metrics=["ece"])


def _grouped_frame() -> pd.DataFrame:
    df = _frame(2000, seed=4)
    df.loc[::97, "g"] = None  # missing keys: in no group (pandas' dropna=True)
    return df


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("by", ["g", ["k", "g"], "k"])
def test_summarise_groups_and_order_are_pandas(engine, by):
    df = _grouped_frame()
    src = _source(df, engine)
    metrics = ["ece", "mce", calibr.metric("ece", bins=4, right=False),
               calibr.metric("mce", bins=np.array([0.0, 0.3, 1.0]))]
    want = calibr.summarise(df.groupby(by), "p", "y", metrics=metrics)
    got = calibr.summarise(src, "p", "y", metrics=metrics, by=by)
    assert isinstance(got, pl.DataFrame if engine == "polars" else pa.Table)
    got = got.to_pandas()
    keys = [by] if isinstance(by, str) else by
    pd.testing.assert_frame_equal(got[keys], want[keys], check_dtype=False)
    pd.testing.assert_frame_equal(got.drop(columns=keys), want.drop(columns=keys),
                                  rtol=ENGINE_RTOL, atol=0)
    # weighted, and ungrouped
    want = calibr.summarise(df.groupby(by), "p", "y", weights="w")
    got = calibr.summarise(src, "p", "y", weights="w", by=by).to_pandas()
    pd.testing.assert_frame_equal(got.drop(columns=keys), want.drop(columns=keys),
                                  rtol=ENGINE_RTOL, atol=0)
    want = calibr.summarise(df.dropna(), "p", "y")
    got = calibr.summarise(_source(df.dropna(), engine), "p", "y").to_pandas()
    pd.testing.assert_frame_equal(got, want, rtol=ENGINE_RTOL, atol=0)


def _null_key_frame(dtype: str) -> pd.DataFrame:
    """A key of groups 7 and 2**53 + 1 (3 for a narrow key; pandas' nullable
    ``dtype``) and rows of no key (a missing value)."""
    rng = np.random.default_rng(11)
    other = 2**53 + 1 if dtype.endswith("64") else 3
    return pd.DataFrame({"k": pd.array([7] * 20 + [other] * 20 + [None] * 10, dtype=dtype),
                         "p": rng.random(50), "y": rng.integers(0, 2, 50)})


def check_an_integer_key_with_a_missing_value(make: Callable[[pd.DataFrame], Any],
                                              dtype: str = "Int64") -> None:
    """The groups of an integer key that holds a missing value, on the source
    ``make(df)`` gives, against the pandas path: each key read back an integer (a
    result's key column of ``dtype``, not Float64; 2**53 + 1 not rounded), and a
    group's message naming it ``k=7``, not ``k=7.0``
    (calibr._input.frames.frame_to_pandas), for a pushed-down binned metric, a
    pushed-down score and a collected metric."""
    df = _null_key_frame(dtype)
    gone = df.assign(p=df["p"].mask(df["k"] == 7))  # na_rm empties group 7
    for metric in ("ece", "brier", "smece"):
        # a missing p that na_rm drops: the engine's counting query (_lazy._stats)
        for data in (df, df.assign(p=df["p"].mask(df.index == 25))):
            got = calibr.summarise(make(data), "p", "y", metrics=[metric], by="k", na_rm=True)
            want = calibr.summarise(data.groupby("k"), "p", "y", metrics=[metric], na_rm=True)
            assert str(nw.from_native(got).schema["k"]) == dtype, metric
            got = nw.from_native(got).to_pandas()
            assert got["k"].tolist() == want["k"].tolist() == sorted(set(df["k"].dropna()))
            np.testing.assert_allclose(got[metric], want[metric], rtol=ENGINE_RTOL, atol=0)
        want = _message(lambda m=metric: calibr.summarise(gone.groupby("k"), "p", "y",
                                                          metrics=[m], na_rm=True))
        assert "[group k=7]" in want[1], want
        assert _message(lambda m=metric: calibr.summarise(make(gone), "p", "y", metrics=[m],
                                                          by="k", na_rm=True)) == want


@pytest.mark.parametrize("source", ["polars", "duckdb", "polars eager", "arrow"])
@pytest.mark.parametrize("dtype", ["Int64", "UInt64", "Int8"])
def test_an_integer_key_with_a_missing_value_stays_an_integer(source, dtype):
    """A lazy engine (its pushed-down and collected paths) and an eager polars or
    Arrow frame (without pandas' metadata): see
    :func:`check_an_integer_key_with_a_missing_value`."""
    def make(df: pd.DataFrame) -> Any:
        if source in ENGINES:
            return _source(df, source)
        frame = pl.from_pandas(df)
        return frame if source == "polars eager" else frame.to_arrow()

    check_an_integer_key_with_a_missing_value(make, dtype)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "Int32"])
def test_a_narrow_integer_key_grouped_with_the_bin_is_pandas(engine, dtype):
    """One narrow integer key: the engine groups ``key * bins + bin`` as one integer
    (calibr._engines._lazy._one_key); negative keys, a missing key (in no group), and
    with weights and explicit breaks, the groups, order and key dtype of pandas."""
    df = _grouped_frame()
    key = df["k"].to_numpy() - (2 if dtype.lower().startswith("int") else 0)
    df["key"] = pd.array(key, dtype=dtype)
    if dtype == "Int32":
        df.loc[::101, "key"] = None
    src = _source(df, engine)
    assert _lazy._one_key(nw.from_native(src), ["key"], 10)
    metrics = ["ece", "mce", calibr.metric("mce", bins=np.array([0.0, 0.3, 1.0]))]
    for weights in (None, "w"):
        want = calibr.summarise(df.groupby("key"), "p", "y", metrics=metrics, weights=weights)
        got = calibr.summarise(src, "p", "y", metrics=metrics, by="key",
                               weights=weights).to_pandas()
        assert list(got["key"]) == list(want["key"])
        pd.testing.assert_frame_equal(got.drop(columns="key"), want.drop(columns="key"),
                                      rtol=ENGINE_RTOL, atol=0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opts", [dict(), dict(bins=4, right=False), dict(weights="w"),
                                  dict(bins=5, binning="equal-mass"),
                                  dict(bins=1, binning="equal-mass")], ids=repr)
def test_calibration_table_equals_the_pandas_path(engine, opts):
    df = _grouped_frame()
    src = _source(df, engine)
    grouped = opts.get("binning") is None
    if grouped:
        want = calibr.calibration_table("p", "y", data=df.groupby("g"), **opts)
        got = calibr.calibration_table("p", "y", data=src, by="g", **opts).to_pandas()
    else:
        want = calibr.calibration_table("p", "y", data=df, **opts)
        got = calibr.calibration_table("p", "y", data=src, **opts).to_pandas()
    exact = ["bin", "lower", "upper"] + ([] if "weights" in opts else
                                         ["n", "observed_frequency", "ci_lower", "ci_upper"])
    pd.testing.assert_frame_equal(got[exact], want[exact], check_exact=True, check_dtype=False)
    pd.testing.assert_frame_equal(got, want, rtol=ENGINE_RTOL, atol=0, check_dtype=False)
    # the metric form: p a lazy frame of the probability and label columns
    if not grouped:
        tab = calibr.calibration_table(_cols(src, "p", "y"), "y", **opts).to_pandas()
        pd.testing.assert_frame_equal(tab, want, rtol=ENGINE_RTOL, atol=0, check_dtype=False)


@pytest.mark.parametrize("engine", ENGINES)
def test_na_rm_drops_the_rows_pandas_drops(engine):
    df = _frame(500)
    df["p"] = df["p"].mask(np.arange(500) % 11 == 0)
    df["y"] = df["y"].astype("Float64").mask(np.arange(500) % 13 == 0)
    frame = pl.from_pandas(df)  # nulls, not NaN, in polars and DuckDB
    src = _source(frame, engine)
    for opts in (dict(), dict(binning="equal-mass")):
        want = calibr.ece(df["p"], df["y"], na_rm=True, **opts)
        assert _close(calibr.ece(_cols(src, "p", "y"), "y", na_rm=True, **opts), want)
    want = calibr.summarise(df.groupby("g"), "p", "y", na_rm=True)
    got = calibr.summarise(src, "p", "y", na_rm=True, by="g").to_pandas()
    pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                  rtol=ENGINE_RTOL, atol=0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("which", ["first", "last"])
def test_a_group_na_rm_empties_raises_the_pandas_message(engine, which):
    """One group whose every row na_rm drops is an error in pandas, never a row of
    missing metrics: the engine's counters must see it though the other groups are
    fine (the mutation check's survivor: ``any`` of the empty groups read as ``all``)."""
    df = _frame(300)
    gone = df["g"] == sorted(df["g"].unique())[0 if which == "first" else -1]
    df["p"] = df["p"].mask(gone)
    src = _source(pl.from_pandas(df), engine)
    want = _message(lambda: calibr.summarise(df.groupby("g"), "p", "y", na_rm=True))
    assert "no complete observations" in want[1]
    assert _message(lambda: calibr.summarise(src, "p", "y", by="g", na_rm=True)) == want
    want = _message(lambda: calibr.calibration_table("p", "y", data=df, by="g", na_rm=True))
    assert _message(lambda: calibr.calibration_table("p", "y", data=src, by="g",
                                                     na_rm=True)) == want


def _message(call) -> tuple[type, str]:
    with pytest.raises((calibr.InputError, calibr.InputTypeError)) as info:
        call()
    return type(info.value), str(info.value)


BAD = {
    "missing p": lambda df: df.assign(p=df["p"].mask(df.index == 7)),
    "p above 1": lambda df: df.assign(p=df["p"].where(df.index != 5, 1.5)),
    "y = 2": lambda df: df.assign(y=df["y"].where(df.index != 9, 2)),
    "string y": lambda df: df.assign(y=np.where(df["y"] == 1, "yes", "no")),
    "string p": lambda df: df.assign(p=df["p"].astype(str)),
    "negative weight": lambda df: df.assign(w=df["w"].where(df.index != 3, -1.0)),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bad", sorted(BAD))
def test_bad_input_raises_the_pandas_message(engine, bad):
    df = BAD[bad](_frame(300))
    src = _source(df, engine)
    w = {"weights": "w"} if bad == "negative weight" else {}
    want = _message(lambda: calibr.ece(df["p"], df["y"], weights=df["w"] if w else None))
    assert _message(lambda: calibr.ece(_cols(src, "p", "y", "w") if w else _cols(src, "p", "y"),
                                       "y", **w)) == want
    want = _message(lambda: calibr.summarise(df.groupby("g"), "p", "y", **w))
    assert _message(lambda: calibr.summarise(src, "p", "y", by="g", **w)) == want


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_columns_raise_the_pandas_message(engine):
    df = _frame(100)
    src = _source(df, engine)
    for kwargs in (dict(p="q", y="y"), dict(p="p", y="z"), dict(p="p", y="y", weights="v")):
        want = _message(lambda kw=kwargs: calibr.summarise(df, **kw))
        assert _message(lambda kw=kwargs: calibr.summarise(src, **kw)) == want
    want = _message(lambda: calibr.summarise(pl.from_pandas(df), "p", "y", by="zz"))
    assert _message(lambda: calibr.summarise(src, "p", "y", by="zz")) == want
    err, msg = _message(lambda: calibr.ece(_cols(src, "p", "y"), "label"))
    assert err is calibr.InputError and msg.startswith("`y` must name a column of `p`")


@pytest.mark.parametrize("engine", ENGINES)
def test_what_the_engine_does_not_compute_is_collected(engine):
    df = _grouped_frame()
    src = _source(df, engine)
    lazy_p = _cols(src, "p", "y")
    assert calibr.skce(lazy_p, "y") == calibr.skce(df["p"], df["y"])  # bit for bit
    assert calibr.mmce(lazy_p, "y", bandwidth=0.2) == calibr.mmce(df["p"], df["y"],
                                                                   bandwidth=0.2)
    assert calibr.ece(lazy_p, "y", binning="isotonic") == calibr.ece(df["p"], df["y"],
                                                                     binning="isotonic")
    want = calibr.summarise(df.groupby("g"), "p", "y", metrics=["ece", "skce"],
                            tests="spiegelhalter", rng=1)
    got = calibr.summarise(src, "p", "y", metrics=["ece", "skce"], tests="spiegelhalter",
                           rng=1, by="g").to_pandas()
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # multiclass: one column per class, collected
    rng = np.random.default_rng(2)
    pm = rng.dirichlet([1, 1, 1], 200)
    mc = pd.DataFrame(pm, columns=["a", "b", "c"]).assign(y=rng.choice(["a", "b", "c"], 200))
    src_mc = _source(mc, engine)
    for type_ in ("classwise", "confidence"):
        assert calibr.ece(src_mc, "y", type=type_) == calibr.ece(mc[["a", "b", "c"]], mc["y"],
                                                                 type=type_)


@pytest.mark.parametrize("engine", ENGINES)
def test_collected_columns_replace_arguments_given_by_keyword(engine):
    """The collected p, y and weights take the place of the arguments as they were
    given, by position or by keyword (calibr/_input/params.py, _collect_lazy):
    ``y="y"`` after a positional ``p`` is a keyword, not the second position.
    decompose() is collected (the engines do not compute it); its score, the Brier
    score, is scikit-learn's ``brier_score_loss`` with ``sample_weight``."""
    from sklearn.metrics import brier_score_loss

    df = _frame(200)
    lazy_w = _cols(_source(df, engine), "p", "y", "w")
    want = brier_score_loss(df["y"], df["p"], sample_weight=df["w"])
    for got in (calibr.decompose(lazy_w, y="y", weights="w"),
                calibr.decompose(p=lazy_w, y="y", weights="w"),
                calibr.decompose(lazy_w, "y", weights="w")):
        assert got.score == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_above_the_collect_limit_calibr_refuses(engine, monkeypatch):
    df = _frame(300)
    src = _source(df, engine)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    what = "a polars LazyFrame" if engine == "polars" else "a DuckDB relation"
    with pytest.raises(calibr.InputError, match=re.escape(
            f"calibr.skce on {what} collects its rows to the driver, and it has 300, more "
            "than calibr collects (100, ")) as info:
        calibr.skce(_cols(src, "p", "y"), "y")
    assert info.value.param == "p"
    # the pushed-down metrics still run; a bad value gives the counts, no position
    assert _close(calibr.ece(_cols(src, "p", "y"), "y"), calibr.ece(df["p"], df["y"]))
    bad = _source(df.assign(p=df["p"].where(df.index % 50 != 1, 1.5)), engine)
    with pytest.raises(calibr.InputError, match=re.escape(
            f"`p` must lie in [0, 1]; 6 values do not. [{what} of 300 rows")):
        calibr.ece(_cols(bad, "p", "y"), "y")


def test_the_collect_limit_is_ten_million_rows():
    """docs/engines.md, "The rule": a source of more than 10,000,000 rows is never
    collected (counting its rows is the engine's, and cheap)."""
    n = 10_000_001
    lf = pl.LazyFrame({"i": [0]}).select(p=pl.int_range(n) / n, y=pl.lit(1))
    with pytest.raises(calibr.InputError, match=re.escape(
            "calibr.smece on a polars LazyFrame collects its rows to the driver, and it has "
            "10,000,001, more than calibr collects (10,000,000, ")):
        calibr.smece(lf, "y")


@pytest.mark.parametrize("engine", ENGINES)
def test_what_the_engine_computes_runs_above_the_collect_limit(engine, monkeypatch):
    """What the rule pushes down is computed on the engine whatever the source's size,
    never collected: equal-mass bins, summarise() of ece and mce, rows na_rm drops
    (the full query with its counters), a group of one row, the largest finite weight."""
    df = _frame(300)
    df.loc[7, "p"] = np.nan  # dropped by na_rm: the query that counts bad values
    df.loc[0, "g"] = "lone"  # a group of one row
    df.loc[11, "w"] = np.finfo(np.float64).max  # finite: a valid weight
    src = _source(df, engine)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    clean = df.drop(index=7)
    for opts in (dict(binning="equal-mass"), dict(bins=15, binning="equal-mass", right=False)):
        want = calibr.ece(clean["p"], clean["y"], **opts)
        assert _close(calibr.ece(_cols(_source(clean, engine), "p", "y"), "y", **opts), want)
    for weights in (None, "w"):
        want = calibr.summarise(df.groupby("g"), "p", "y", metrics=["ece", "mce"],
                                weights=weights, na_rm=True)
        got = calibr.summarise(src, "p", "y", metrics=["ece", "mce"], weights=weights,
                               na_rm=True, by="g").to_pandas()
        assert list(got["g"]) == ["a", "b", "c", "lone"]
        pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                      rtol=ENGINE_RTOL, atol=0)


@pytest.mark.parametrize("engine", ENGINES)
def test_clean_data_is_summed_in_one_query(engine, monkeypatch):
    """Clean data costs the engine one grouped query (calibr._engines._lazy._fast_stats:
    the sums over all rows); the query that counts each kind of bad value runs only
    when a value is bad (benchmarks/README.md, "Engines")."""
    df = _frame(500)
    df["k8"] = df["k"].astype("int8")  # one narrow integer key: grouped with the bin as one
    src = _source(df, engine)
    queries = []

    def counted(lf):
        queries.append(lf)
        return collect(lf)

    collect = _lazy._collect
    monkeypatch.setattr(_lazy, "_collect", counted)
    for call in (lambda: calibr.ece(_cols(src, "p", "y"), "y"),
                 lambda: calibr.mce(_cols(src, "p", "y", "w"), "y", weights="w", bins=4),
                 lambda: calibr.summarise(src, "p", "y", metrics=["ece", "mce"], by="g"),
                 lambda: calibr.summarise(src, "p", "y", metrics=["ece", "mce"], by="k8",
                                          weights="w")):
        queries.clear()
        call()
        assert len(queries) == 1, len(queries)
    bad = _source(df.assign(p=df["p"].mask(df.index == 3)), engine)
    queries.clear()
    calibr.ece(_cols(bad, "p", "y"), "y", na_rm=True)
    assert len(queries) == 2, len(queries)  # the sums, then the counters of bad values


@pytest.mark.parametrize("engine", ENGINES)
def test_functions_the_engine_does_not_compute_collect_under_the_rule(engine, monkeypatch):
    """docs/engines.md, "The rule": every other function of ``p`` and ``y`` (and the
    verbs html_report and multicalibration) collects the columns it uses, bit for
    bit the pandas path, and refuses above the collect limit."""
    df = _frame(400)
    src = _source(df, engine)
    lazy_p = _cols(src, "p", "y")
    p, y = df["p"], df["y"]
    assert calibr.mmce(lazy_p, "y") == calibr.mmce(p, y)
    assert calibr.smece(lazy_p, "y") == calibr.smece(p, y)
    got, want = calibr.decompose(lazy_p, "y"), calibr.decompose(p, y)
    assert (got.score, got.mcb, got.dsc, got.unc) == (want.score, want.mcb, want.dsc, want.unc)
    got = calibr.bootstrap(lazy_p, "y", "mce", n_resamples=50, rng=3)
    want = calibr.bootstrap(p, y, "mce", n_resamples=50, rng=3)
    assert got.confidence_interval == want.confidence_interval
    got = calibr.calibration_test(lazy_p, "y", "skce_block")
    want = calibr.calibration_test(p, y, "skce_block")
    assert (got.statistic, got.pvalue) == (want.statistic, want.pvalue)
    # weights name a column of the source
    lazy_w = _cols(src, "p", "y", "w")
    assert calibr.skce(lazy_w, "y", weights="w") == calibr.skce(p, y, weights=df["w"])
    # the verbs the engines do not compute: html_report and multicalibration
    page = calibr.html_report(src, "p", "y", by="g", bins=4, consistency=None)
    assert page == calibr.html_report(df.groupby("g"), "p", "y", bins=4, consistency=None)
    got = calibr.multicalibration(src, "p", "y", ["g", "k"])
    want = calibr.multicalibration(df, "p", "y", ["g", "k"])
    assert (got.statistic, got.pvalue) == (want.statistic, want.pvalue)
    # above the limit: refused, the function named
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    what = "a polars LazyFrame" if engine == "polars" else "a DuckDB relation"
    with pytest.raises(calibr.InputError, match=re.escape(
            f"calibr.smece on {what} collects its rows to the driver, and it has 400, more "
            "than calibr collects (100, ")) as info:
        calibr.smece(lazy_p, "y")
    assert info.value.param == "p"
    with pytest.raises(calibr.InputError, match=re.escape(
            f"calibr.html_report on {what} collects its rows")) as info:
        calibr.html_report(src, "p", "y")
    assert info.value.param == "data"


def test_a_function_that_reads_values_refuses_a_lazy_source():
    lf = pl.from_pandas(_frame(50)).lazy()
    with pytest.raises(calibr.InputTypeError, match=re.escape(
            "`p_a` is a polars LazyFrame: this function reads it as values, not as a lazy "
            "source; collect the columns it needs first")):
        calibr.paired_bootstrap(lf, lf, "y", "ece")


def test_import_calibr_imports_no_engine():
    import subprocess
    import sys

    code = ("import sys, calibr; calibr.ece([0.2, 0.7], [0, 1]); "
            "calibr.ece(__import__('polars').Series([0.2]), [0]); "
            "print(sorted(m for m in ('duckdb', 'pyspark', 'calibr._engines') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize("engine", ENGINES)
def test_each_metric_takes_the_registrys_path_on_the_engine(engine, name, monkeypatch):
    """The registry declares each metric's path on a lazy source (``lazy_call``,
    ``lazy_column``; the table of docs/engines.md is read from it): with the collect
    limit below the source's rows, a metric declared pushed down still answers (the
    pandas path's number), and one declared collected refuses, as a direct call and
    as a column of summarise."""
    df = _frame(300)
    info = METRICS[name]
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    func = getattr(calibr, name)
    calls = [
        (info.lazy_call, lambda: func(_cols(_source(df, engine), "p", "y"), "y"),
         lambda: func(df["p"], df["y"])),
        (info.lazy_column,
         lambda: calibr.summarise(_source(df, engine), "p", "y", metrics=[name], by="g")
         .to_pandas()[name].tolist(),
         lambda: calibr.summarise(df.groupby("g"), "p", "y", metrics=[name])[name].tolist()),
    ]
    for path, lazy, pandas in calls:
        if path == PUSHED_DOWN:
            got, want = lazy(), pandas()
            assert np.allclose(got, want, rtol=ENGINE_RTOL, atol=0)
        else:
            assert path == COLLECTED
            with pytest.raises(calibr.InputError, match="more than calibr collects"):
                lazy()


# --------------------------------------------------------------------------
# the scores and the cumulative measures (calibr/_engines/_pushdown.py)

#: The pushed-down functions of the row sums and the sorted sums, with options.
SUMS = [(calibr.brier, {}), (calibr.log_loss, {}), (calibr.log_loss, {"eps": 0.05}),
        (calibr.auroc, {}), (calibr.ecce, {}), (calibr.ecce, {"kind": "kuiper"}),
        (calibr.ecce, {"scale": "sigma"}), (calibr.ecce, {"kind": "kuiper", "scale": "sigma"})]
#: calibration_test's methods from the engine's sums.
SUM_TESTS = ("spiegelhalter", "hosmer_lemeshow", "ks", "kuiper")


def _tied_frame(n: int = 600, seed: int = 5) -> pd.DataFrame:
    """p on a grid of 0.05 (blocks of tied p, 0 and 1 among them), -0.0 (the key of
    0.0), weights 0 to 3, groups a, b, c and "lone" (one row), no impossible
    prediction (y = 1 where p = 1, y = 0 where p = 0)."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(n) * 20) / 20
    p[3] = -0.0
    y = (rng.random(n) < p).astype(np.int64)
    y[p == 1.0], y[p == 0.0] = 1, 0
    df = pd.DataFrame({"g": rng.choice(["b", "a", "c"], n), "p": p, "y": y,
                       "w": rng.integers(0, 4, n).astype(float)})
    df.loc[0, ["g", "w"]] = ["lone", 2.0]
    return df


def _no_rows_collected(monkeypatch):
    """Collecting a source's rows fails (the pushed-down path never does)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the rows were collected")

    monkeypatch.setattr(_lazy, "_collect_used", refuse)


def _same_test(got, want) -> None:
    assert (got.method, got.n, got.type, got.small_n) == (want.method, want.n, want.type,
                                                          want.small_n)
    for field in ("statistic", "pvalue", "estimate"):
        assert _close(getattr(got, field), getattr(want, field)), (field, got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_scores_and_cumulative_measures_are_pushed_down_exactly(engine, monkeypatch):
    """brier, log_loss, auroc, ecce and the spiegelhalter/hosmer_lemeshow/ks/kuiper tests of a
    binary p on the engine equal the pandas path on the same rows (ties, -0.0, weights
    with zeros), with no row collected; n and small_n are the pandas path's (a few rows:
    small_n)."""
    df = _tied_frame()
    src = _source(df, engine)
    _no_rows_collected(monkeypatch)
    for f, opts in SUMS:
        want = f(df["p"], df["y"], **opts)
        got = f(_cols(src, "p", "y"), "y", **opts)
        assert isinstance(got, float)
        assert _close(got, want), (f.__name__, opts, got, want)
        want = f(df["p"], df["y"], weights=df["w"], **opts)
        got = f(_cols(src, "p", "y", "w"), "y", weights="w", **opts)
        assert _close(got, want), (f.__name__, opts, "weighted", got, want)
    for y in (0, 1):  # every running sum of one sign: the range includes C_0 = 0
        one = df[(df["p"] > 0.0) & (df["p"] < 1.0)].assign(y=y)  # no step of 0 first
        osrc = _cols(_source(one, engine), "p", "y")
        for opts in ({"kind": "kuiper"}, {"kind": "kuiper", "scale": "sigma"}):
            assert _close(calibr.ecce(osrc, "y", **opts), calibr.ecce(one["p"], one["y"], **opts))
    few = df.head(4)  # 4 rows: below every method's MIN_N
    for method in SUM_TESTS:
        _same_test(calibr.calibration_test(_cols(src, "p", "y"), "y", method),
                   calibr.calibration_test(df["p"], df["y"], method))
        if method != "hosmer_lemeshow":  # 4 rows: fewer than 3 groups of distinct risk
            _same_test(calibr.calibration_test(_cols(_source(few, engine), "p", "y"), "y",
                                               method),
                       calibr.calibration_test(few["p"], few["y"], method))
    # Hosmer-Lemeshow: R's type-7 quantile groups of p (ties merge groups), its df
    for groups, ddof in ((7, 2), (49, 1), (3, 0)):
        got = calibr.calibration_test(_cols(src, "p", "y"), "y", "hosmer_lemeshow",
                                      groups=groups, ddof=ddof)
        want = calibr.calibration_test(df["p"], df["y"], "hosmer_lemeshow", groups=groups,
                                       ddof=ddof)
        _same_test(got, want)
        assert (got.df, got.groups) == (want.df, want.groups)
    two = df.assign(p=np.where(df["p"] < 0.5, 0.25, 0.75))
    want = _message(lambda: calibr.calibration_test(two["p"], two["y"], "hosmer_lemeshow"))
    assert "2 distinct values" in want[1]
    assert _message(lambda: calibr.calibration_test(_cols(_source(two, engine), "p", "y"),
                                                    "y", "hosmer_lemeshow")) == want
    for method in ("ks", "kuiper"):
        _same_test(calibr.calibration_test(_cols(src, "p", "y", "w"), "y", method,
                                           weights="w"),
                   calibr.calibration_test(df["p"], df["y"], method, weights=df["w"]))


@pytest.mark.parametrize("engine", ENGINES)
def test_summarise_pushes_down_the_scores_per_group(engine, monkeypatch):
    """summarise() of brier, log_loss, auroc and ecce (with ece) by group on the engine is
    the pandas path's frame, a group of one row included (its AUROC NaN, with the pandas
    path's warning), weighted or not, with no row collected."""
    df = _tied_frame()
    src = _source(df, engine)
    _no_rows_collected(monkeypatch)
    metrics = ["ece", "brier", "log_loss", "auroc", "ecce",
               calibr.metric("ecce", kind="kuiper", scale="sigma"),
               calibr.metric("log_loss", eps=0.1)]
    for weights in (None, "w"):
        with pytest.warns(RuntimeWarning) as want_warning:
            want = calibr.summarise(df.groupby("g"), "p", "y", metrics=metrics,
                                    weights=weights)
        with pytest.warns(RuntimeWarning) as got_warning:
            got = calibr.summarise(src, "p", "y", metrics=metrics, weights=weights,
                                   by="g").to_pandas()
        assert [str(w.message) for w in got_warning] == [str(w.message) for w in want_warning]
        assert list(got.columns) == list(want.columns)
        assert list(got["g"]) == ["a", "b", "c", "lone"]
        pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                      rtol=ENGINE_RTOL, atol=0)


@pytest.mark.parametrize("engine", ENGINES)
def test_summarise_pushes_down_ecce_alone_per_group(engine, monkeypatch):
    """summarise() of the ecce columns alone (no AUROC: polars' blocks without class
    sums and one window, DuckDB's RANGE window) is the pandas path's frame: ties, a
    group of one row, weights with zeros, nulls that na_rm drops."""
    df = _tied_frame()
    df["p"] = df["p"].mask(np.arange(len(df)) % 17 == 3)
    src = _source(pl.from_pandas(df), engine)
    _no_rows_collected(monkeypatch)
    metrics = ["ecce", calibr.metric("ecce", kind="kuiper", scale="sigma"),
               calibr.metric("ecce", kind="kuiper")]
    for weights in (None, "w"):
        want = calibr.summarise(df.groupby("g"), "p", "y", metrics=metrics, weights=weights,
                                na_rm=True)
        got = calibr.summarise(src, "p", "y", metrics=metrics, weights=weights, by="g",
                               na_rm=True).to_pandas()
        assert list(got["g"]) == ["a", "b", "c", "lone"]
        pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                      rtol=ENGINE_RTOL, atol=0)


def _int_keyed(n: int = 600) -> pd.DataFrame:
    """:func:`_tied_frame` with an Int32 group key of a gapped range (-3 to 40), some
    rows without a key (in no group) and nulls in p (dropped by na_rm)."""
    df = _tied_frame(n)
    df["g"] = df["g"].map({"a": 7, "b": -3, "c": 12, "lone": 40}).astype("Int32")
    df["g"] = df["g"].mask(np.arange(n) % 29 == 6)
    df["p"] = df["p"].mask(np.arange(n) % 17 == 3)
    return df


def _stream_spy(monkeypatch) -> dict:
    """Counts the batches and the completed streams of polars' sorted sums
    (calibr/_engines/polars.py, ``_sorted_rows``)."""
    from calibr._kernels import cumulative

    seen = {"batches": 0, "streams": 0}
    running, close = cumulative.group_running, cumulative.group_close

    def counted_running(*args):
        seen["batches"] += 1
        return running(*args)

    def counted_close(*args):
        seen["streams"] += 1
        return close(*args)

    monkeypatch.setattr(cumulative, "group_running", counted_running)
    monkeypatch.setattr(cumulative, "group_close", counted_close)
    return seen


@pytest.mark.parametrize("batch", [None, 7])
def test_polars_streams_the_sorted_sums_of_an_integer_key(batch, monkeypatch):
    """polars' ecce and auroc of one integer key: the rows sorted by p, streamed in
    batches (7 rows: many) into calibr._kernels.cumulative.group_running, equal the
    pandas path: ties (the running sum read at each block's end), -0.0, a group of one
    row, weights with zeros, missing keys, nulls that na_rm drops."""
    df = _int_keyed()
    src = _source(pl.from_pandas(df), "polars")
    _no_rows_collected(monkeypatch)
    monkeypatch.setattr(calibr._engines.polars, "RUNNING_BATCH_ROWS", batch)
    seen = _stream_spy(monkeypatch)

    def no_window(*args):
        raise AssertionError("the window query ran")

    monkeypatch.setattr(calibr._engines._pushdown._Query, "window_sums", no_window)
    ecces = ["ecce", calibr.metric("ecce", kind="kuiper", scale="sigma"),
             calibr.metric("ecce", kind="kuiper"), calibr.metric("ecce", scale="sigma")]
    streams = 0
    for metrics in (ecces, [*ecces, "auroc"]):
        for weights in (None, "w"):
            with warnings.catch_warnings():  # the lone group's AUROC: NaN, as pandas'
                warnings.simplefilter("ignore", RuntimeWarning)
                want = calibr.summarise(df.groupby("g"), "p", "y", metrics=metrics,
                                        weights=weights, na_rm=True)
                got = calibr.summarise(src, "p", "y", metrics=metrics, weights=weights,
                                       by="g", na_rm=True).to_pandas()
            streams += 1
            assert seen["streams"] == streams
            assert list(got["g"]) == [-3, 7, 12, 40]
            pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                          rtol=ENGINE_RTOL, atol=0)
    assert seen["batches"] > (30 * streams if batch else 0)
    keep = df.dropna(subset=["p"])
    for f, opts in SUMS[3:]:  # auroc and ecce, no key
        for w in ({}, {"weights": "w"}):
            got = f(_cols(src, "p", "y", *w.values()), "y", na_rm=True, **opts, **w)
            want = f(keep["p"], keep["y"], **opts, **({"weights": keep["w"]} if w else {}))
            assert _close(got, want), (f.__name__, opts, w, got, want)
    assert seen["streams"] == streams + 2 * len(SUMS[3:])


def test_polars_streams_one_row_per_group_and_refuses_an_emptied_group(monkeypatch):
    """Groups of one row each (every running sum one step), and a group that na_rm
    empties (the pandas path's message, before any stream)."""
    monkeypatch.setattr(calibr._engines.polars, "RUNNING_BATCH_ROWS", 2)
    seen = _stream_spy(monkeypatch)
    one = pd.DataFrame({"g": pd.array([5, 1, 9, 3, 2], dtype="Int32"),
                        "p": [0.25, 0.5, 0.75, 1.0, 0.0], "y": [1, 0, 1, 1, 0]})
    metrics = ["ecce", calibr.metric("ecce", kind="kuiper", scale="sigma")]
    want = calibr.summarise(one.groupby("g"), "p", "y", metrics=metrics)
    got = calibr.summarise(_source(one, "polars"), "p", "y", metrics=metrics,
                           by="g").to_pandas()
    assert seen == {"batches": 3, "streams": 1}
    pd.testing.assert_frame_equal(got, want, rtol=ENGINE_RTOL, atol=0, check_dtype=False)
    gone = _int_keyed(300)
    gone["p"] = gone["p"].mask(gone["g"] == 12)
    want = _message(lambda: calibr.summarise(gone.groupby("g"), "p", "y", metrics=["ecce"],
                                             na_rm=True))
    assert "no complete observations" in want[1]
    assert _message(lambda: calibr.summarise(_source(gone, "polars"), "p", "y", by="g",
                                             metrics=["ecce"], na_rm=True)) == want
    assert seen["streams"] == 1


@pytest.mark.parametrize("dtype,keys", [
    ("Int8", [-128, 127, 0, 5]), ("UInt8", [255, 0, 3, 254]),
    ("Int64", [-(2**63), -(2**63) + 40, -(2**63) + 7, -(2**63) + 12]),
    ("Int64", [2**63 - 1, 2**63 - 41, 2**63 - 8, 2**63 - 13]),
    ("UInt64", [2**64 - 1, 2**64 - 41, 2**64 - 8, 2**64 - 13]),
    ("UInt64", [2**63 + 5, 2**63 - 3, 2**63, 2**63 + 1]),
    ("Int64", [-(2**62), -(2**62) + 1, -(2**62) + 2, -(2**62) + 3])])
def test_polars_streams_an_integer_key_of_any_width(dtype, keys, monkeypatch):
    """The stream reads each key less the smallest, so an integer key of any width
    takes it: keys at both ends of Int8, UInt8, Int64 and UInt64 (above 2**63 too),
    and keys equal to the value of a missing key in polars' cells
    (``_NO_GROUP``): the same numbers and keys as pandas, with a missing key and
    every row in its own group."""
    df = _int_keyed()
    code = {7: keys[0], -3: keys[1], 12: keys[2], 40: keys[3]}
    df["g"] = pd.array([pd.NA if pd.isna(v) else code[v] for v in df["g"]], dtype=dtype)
    metrics = ["ecce", calibr.metric("ecce", kind="kuiper"), "auroc"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = calibr.summarise(df.groupby("g"), "p", "y", metrics=metrics, na_rm=True)
        seen = _stream_spy(monkeypatch)
        got = calibr.summarise(_source(pl.from_pandas(df), "polars"), "p", "y",
                               metrics=metrics, by="g", na_rm=True).to_pandas()
    assert seen["streams"] == 1
    assert [int(k) for k in got["g"]] == sorted(keys)
    assert [int(k) for k in want["g"]] == sorted(keys)
    pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                  rtol=ENGINE_RTOL, atol=0)


def test_polars_falls_back_to_the_window_query(monkeypatch):
    """A key whose range exceeds MAX_RUNNING_GROUPS, a stream the kernel finds out of
    order, and a string key run polars' window query over the blocks of tied p: the
    same numbers."""
    from calibr._kernels import cumulative

    df = _int_keyed()
    metrics = ["ecce", calibr.metric("ecce", kind="kuiper"), "auroc"]

    def check(frame):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = calibr.summarise(frame.groupby("g"), "p", "y", metrics=metrics, na_rm=True)
            got = calibr.summarise(_source(frame, "polars"), "p", "y", metrics=metrics,
                                   by="g", na_rm=True).to_pandas()
        assert list(got["g"]) == list(want["g"])
        pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                      rtol=ENGINE_RTOL, atol=0)

    with monkeypatch.context() as m:
        m.setattr(calibr._engines.polars, "MAX_RUNNING_GROUPS", 43)  # -3 to 40: 44
        seen = _stream_spy(m)
        check(df)
        assert seen == {"batches": 0, "streams": 0}
    with monkeypatch.context() as m:
        m.setattr(cumulative, "group_running", lambda *args: False)
        seen = _stream_spy(m)
        check(df)
        assert seen == {"batches": 1, "streams": 0}
    seen = _stream_spy(monkeypatch)
    check(df.assign(g=("k" + df["g"].astype(str)).mask(df["g"].isna())))  # a string key
    assert seen == {"batches": 0, "streams": 0}
    with monkeypatch.context() as m:  # the spy sees the stream of the Int32 key
        m.setattr(calibr._engines.polars, "MAX_RUNNING_GROUPS", 44)
        check(df)
    assert seen["streams"] == 1


def test_polars_sorted_rows_gives_each_group_its_sums():
    """calibr/_engines/polars.py's ``_sorted_rows``: one row per group of rows (its key,
    not its offset), the kernel's columns under the names ``_Query`` reads, weighted
    (midranks by weight) or not (twice the midrank sum), and no group key."""
    from calibr._engines.polars import _sorted_rows

    rows = pl.LazyFrame({"k": pl.Series([4, 2, 4, 4, 2, None], dtype=pl.Int32),
                         "__x": [0.25, 0.25, 0.5, 0.5, 0.75, 0.5],
                         "__y": [0.0, 0.0, 1.0, 0.0, 1.0, 1.0],
                         "__w": [2.0, 3.0, 1.0, 0.0, 4.0, 9.0]})
    got = _sorted_rows(rows, "k", False, 2, 5)
    want = pd.DataFrame({"k": [2, 4], "n": [2.0, 3.0], "W": [2.0, 3.0],
                         "var": [0.375, 0.6875], "high": [0.0, 0.0], "low": [-0.25, -0.25],
                         "num": [2.0, 3.0], "wpos": [1.0, 1.0], "wneg": [1.0, 2.0]})
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    got = _sorted_rows(rows, "k", True, 2, 4)
    want = want.assign(W=[7.0, 3.0], var=[0.5625 + 0.75, 0.375 + 0.25], high=[0.25, 0.0],
                       low=[-0.75, -0.5], num=[12.0, 2.0], wpos=[4.0, 1.0], wneg=[3.0, 2.0])
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    got = _sorted_rows(rows.drop("k"), None, False, 0, 0)
    assert got.columns.tolist() == want.columns.tolist()[1:]
    assert got[["n", "num", "wpos", "wneg"]].to_numpy().tolist() == [[6.0, 16.0, 3.0, 3.0]]
    assert _sorted_rows(rows, "k", False, 2, 3) is None  # key 4 outside [2, 3]


def test_group_running_checks_the_order_and_the_keys():
    """calibr._kernels.cumulative.group_running refuses a row below the one before it
    (in the batch or the last batch's) and a key outside its state; its sums read the
    running sum at the end of each block of tied p, per group."""
    from calibr._kernels.cumulative import GROUP_STATE, group_close, group_running

    def fresh(groups):
        return np.zeros((groups, len(GROUP_STATE))), np.full(1, -np.inf)

    none = np.zeros(0)
    g = np.array([0, 1, 0, 0, 1], dtype=np.int64)
    x = np.array([0.25, 0.25, 0.5, 0.5, 0.75])
    c = np.array([0.0, 0.0, 1.0, 0.0, 1.0])
    s, prev = fresh(2)
    assert group_running(g, x, c, none, -1, 2.0, 1.0, prev, s)
    assert prev[0] == 0.75
    group_close(s, 2.0, 1.0)
    col = dict(zip(GROUP_STATE, s.T, strict=True))
    # group 0: -0.25 | +0.5 -0.5 (one block of p = 0.5): read -0.25 twice, never 0.25
    assert col["high"].tolist() == [0.0, 0.0] and col["low"].tolist() == [-0.25, -0.25]
    assert col["run"].tolist() == [-0.25, 0.0]
    assert col["n"].tolist() == [3.0, 2.0] and col["W"].tolist() == [3.0, 2.0]
    assert col["var"].tolist() == [0.1875 + 0.5, 0.1875 + 0.1875]
    # twice the midrank sums: group 0's positive ties one negative and tops another
    assert col["num"].tolist() == [3.0, 2.0]
    assert col["wpos"].tolist() == [1.0, 1.0] and col["below"].tolist() == [2.0, 1.0]
    s, prev = fresh(2)
    assert not group_running(g, x[::-1].copy(), c, none, -1, 2.0, 1.0, prev, s)
    s, prev = fresh(2)
    prev[0] = 0.5  # the last batch ended above this one's first row
    assert not group_running(g, x, c, none, -1, 2.0, 1.0, prev, s)
    s, prev = fresh(2)
    assert group_running(g, x, c, none, 1, 2.0, 1.0, prev, s)  # key 1: in no group
    assert s[1, 6] == 0.0 and s[0, 6] == 3.0
    for bad in (np.array([0, 2, 0, 0, 1]), np.array([0, -1, 0, 0, 1])):
        s, prev = fresh(2)
        assert not group_running(bad, x, c, none, 9, 2.0, 1.0, prev, s)
    s, prev = fresh(2)  # weighted: w (y - p), and the midrank weights
    w = np.array([2.0, 3.0, 1.0, 0.0, 4.0])
    assert group_running(g, x, c, w, -1, 1.0, 0.5, prev, s)
    group_close(s, 1.0, 0.5)
    assert s[:, 2].tolist() == [0.0, 0.25] and s[:, 3].tolist() == [-0.5, -0.75]
    assert s[:, 10].tolist() == [2.0, 12.0] and s[:, 5].tolist() == [3.0, 7.0]


@pytest.mark.parametrize("engine", ENGINES)
def test_pushed_down_scores_keep_the_pandas_rules(engine, monkeypatch):
    """na_rm drops the rows pandas drops (nulls in p and y); without na_rm, and in a group
    na_rm empties, the pandas path's message (below the collect limit: its first bad row;
    above: the counts); an impossible prediction makes log_loss inf with the pandas path's
    warning, counted in the query (a row of weight 0 not counted)."""
    df = _tied_frame(300)
    df["p"] = df["p"].mask(np.arange(300) % 11 == 4)
    df["y"] = df["y"].astype("Float64").mask(np.arange(300) % 13 == 5)
    src = _source(pl.from_pandas(df), engine)  # nulls, not NaN
    for f, opts in SUMS:
        want = f(df["p"], df["y"], na_rm=True, **opts)
        assert _close(f(_cols(src, "p", "y"), "y", na_rm=True, **opts), want), f.__name__
        want = _message(lambda: f(df["p"], df["y"], **opts))  # noqa: B023
        assert "must not contain missing values" in want[1]
        assert _message(lambda: f(_cols(src, "p", "y"), "y", **opts)) == want  # noqa: B023
    for method in SUM_TESTS:
        _same_test(calibr.calibration_test(_cols(src, "p", "y"), "y", method, na_rm=True),
                   calibr.calibration_test(df["p"], df["y"], method, na_rm=True))
    gone = df.assign(p=df["p"].mask(df["g"] == "c"))
    want = _message(lambda: calibr.summarise(gone.groupby("g"), "p", "y", metrics=["brier"],
                                             na_rm=True))
    assert "no complete observations" in want[1]
    gsrc = _source(pl.from_pandas(gone), engine)
    assert _message(lambda: calibr.summarise(gsrc, "p", "y", metrics=["ecce", "auroc"],
                                             by="g", na_rm=True)) == want
    zero = _tied_frame(300).assign(w=lambda d: d["w"].where(d["g"] != "lone", 0.0))
    want = _message(lambda: calibr.summarise(zero.groupby("g"), "p", "y", metrics=["ecce"],
                                             weights="w"))
    assert "positive total" in want[1]
    assert _message(lambda: calibr.summarise(_source(zero, engine), "p", "y", by="g",
                                             metrics=["ecce", "brier"], weights="w")) == want
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    with pytest.raises(calibr.InputError, match=re.escape(
            "`p` must not contain missing values; 27 values missing. Pass na_rm=True "
            "to drop incomplete observations. [a ")):
        calibr.brier(_cols(src, "p", "y"), "y")
    # log_loss: p = 1 with y = 0 in two rows, one of them of weight 0
    bad = _tied_frame(300)
    bad.loc[[10, 20], ["p", "y", "w"]] = [[1.0, 0, 2.0], [1.0, 0, 0.0]]
    bsrc = _source(bad, engine)
    for weights, rows in ((None, "2 rows give their"), ("w", "1 row gives its")):
        w = {} if weights is None else {"weights": "w"}
        with pytest.warns(UserWarning, match=f"log_loss: {rows} observed outcome probability "
                                             "0, so the log loss is inf"):
            assert calibr.log_loss(_cols(bsrc, "p", "y", "w") if w else _cols(bsrc, "p", "y"),
                                   "y", **w) == np.inf
        with pytest.warns(UserWarning, match=f"log_loss: {rows}"):
            calibr.log_loss(bad["p"], bad["y"], weights=bad["w"] if w else None)


@pytest.mark.parametrize("engine", ENGINES)
def test_auroc_of_one_class_and_what_stays_collected(engine, monkeypatch):
    """The AUROC of one class is the pandas path's InputError (code "undefined"); a
    multiclass p, classes= and the other methods of calibration_test are collected (and
    refused above the collect limit)."""
    df = _tied_frame(200)
    one = df.assign(y=1)
    src = _source(one, engine)
    want = _message(lambda: calibr.auroc(one["p"], one["y"]))
    assert _message(lambda: calibr.auroc(_cols(src, "p", "y"), "y")) == want
    zero_w = df.assign(w=np.where(df["y"] == 1, 0.0, 1.0))
    want = _message(lambda: calibr.auroc(zero_w["p"], zero_w["y"], weights=zero_w["w"]))
    assert "among the rows of positive weight" in want[1]
    assert _message(lambda: calibr.auroc(_cols(_source(zero_w, engine), "p", "y", "w"), "y",
                                         weights="w")) == want
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    src = _source(df, engine)
    for call in (lambda: calibr.calibration_test(_cols(src, "p", "y"), "y", "skce_block"),
                 lambda: calibr.calibration_test(_cols(src, "p", "y"), "y", "skce"),
                 lambda: calibr.brier(_cols(src, "p", "y"), "y", classes=[0, 1])):
        with pytest.raises(calibr.InputError, match="more than calibr collects"):
            call()


@pytest.mark.parametrize("engine", ENGINES)
def test_an_undefined_auroc_warns_once_in_the_words_of_pandas(engine):
    """Groups of one class get NaN and one warning naming them, word for word the
    pandas path's (one group: "which gets NaN"; two: "which get NaN")."""
    df = _grouped_frame().dropna(subset=["g"])
    for ones in (["a"], ["a", "b"]):
        one = df.assign(y=np.where(df["g"].isin(ones), 1, df["y"]))
        with pytest.warns(RuntimeWarning) as want:
            calibr.summarise(one.groupby("g"), "p", "y", metrics=["auroc"])
        with pytest.warns(RuntimeWarning) as got:
            calibr.summarise(_source(one, engine), "p", "y", metrics=["auroc"], by="g")
        assert [str(w.message) for w in got] == [str(w.message) for w in want]
        assert len(want) == 1 and ("gets NaN" in str(want[0].message)) == (len(ones) == 1)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("by", [["k", "g"], ["k8", "g"], "k8"])
def test_pushed_down_scores_group_as_pandas(engine, by):
    """The scores' and ecce's groups are pandas' groups in pandas' order: two keys (the
    first a narrow integer: not polars' stream of one key), a narrow integer key,
    missing keys (in no group)."""
    df = _grouped_frame()
    df["k8"] = df["k"].astype("int8")
    metrics = ["brier", "ecce", "auroc", "ece", "log_loss"]
    want = calibr.summarise(df.groupby(by), "p", "y", metrics=metrics)
    got = calibr.summarise(_source(df, engine), "p", "y", metrics=metrics, by=by).to_pandas()
    keys = [by] if isinstance(by, str) else by
    pd.testing.assert_frame_equal(got[keys], want[keys], check_dtype=False)
    pd.testing.assert_frame_equal(got.drop(columns=keys), want.drop(columns=keys),
                                  rtol=ENGINE_RTOL, atol=0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("lone", [5, 6])
def test_the_warning_names_five_undefined_groups_and_counts_the_rest(engine, lone):
    """The AUROC of ``lone`` groups of one class: the pandas path's warning, which
    names five groups and counts the others ("and 1 more" only past five)."""
    rng = np.random.default_rng(1)
    names = list("abcdefg")[:lone + 1]
    g = np.repeat(names, 20)
    p = rng.random(g.size)
    y = np.where(g == names[-1], (rng.random(g.size) < p).astype(np.int64), 1)
    df = pd.DataFrame({"g": g, "p": p, "y": y})
    shown = "; ".join(f"g='{k}'" for k in names[:5])
    message = (f"summarise: the metric 'auroc' is undefined on {lone} groups (e.g. one class "
               f"only), which get NaN: {shown}{' and 1 more' if lone > 5 else ''}.")
    for src, by in ((df.groupby("g"), None), (_source(df, engine), "g")):
        with pytest.warns(RuntimeWarning) as got:
            calibr.summarise(src, "p", "y", metrics=["auroc"], **({"by": by} if by else {}))
        assert [str(w.message) for w in got] == [message]


@pytest.mark.parametrize("engine", ENGINES)
def test_hosmer_lemeshow_of_one_distinct_p_on_the_engine(engine, monkeypatch):
    """Every p equal: one quantile group (no break between two), refused as the pandas
    path refuses it, from the engine's sums."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"p": np.full(300, 0.3), "y": (rng.random(300) < 0.4).astype(np.int64)})
    _no_rows_collected(monkeypatch)
    message = ('^`method = "hosmer_lemeshow"` needs at least 3 groups of distinct risk; the '
               "10 quantile groups of `p` merge into 1 \\(1 distinct value of `p` among 300 "
               "observations\\).$")
    with pytest.raises(calibr.InputError, match=message):
        calibr.calibration_test(df["p"], df["y"], "hosmer_lemeshow")
    with pytest.raises(calibr.InputError, match=message):
        calibr.calibration_test(_source(df, engine), "y", "hosmer_lemeshow")


@pytest.mark.parametrize("engine", ENGINES)
def test_pushed_down_scores_of_groups_met_in_reverse_order(engine):
    """Groups whose rows come in blocks in the reverse of pandas' (sorted) order, each
    its own Brier score: each group's row of the engine's result gets that group's
    number (the mean of (p - y)^2 of its rows, by numpy)."""
    rng = np.random.default_rng(12)
    g = np.repeat(["z", "y", "x", "w"], 150)
    p = rng.random(600)
    y = (rng.random(600) < p ** np.repeat([3.0, 1.0, 0.5, 2.0], 150)).astype(np.int64)
    df = pd.DataFrame({"g": g, "p": p, "y": y})
    got = calibr.summarise(_source(df, engine), "p", "y", metrics=["brier"],
                           by="g").to_pandas()
    assert list(got["g"]) == ["w", "x", "y", "z"]
    want = [np.mean((p[g == k] - y[g == k]) ** 2) for k in ["w", "x", "y", "z"]]
    np.testing.assert_allclose(got["brier"], want, rtol=ENGINE_RTOL, atol=0)
