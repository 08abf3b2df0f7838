"""Hostile frames on every input path: the same call on pandas (the reference),
polars eager and lazy, Arrow, DuckDB, Spark and Dask gives the pandas path's
answer (to ENGINE_RTOL) or its error (the same class and message).

Each case is an Arrow table (every engine is built from it) and the calls made
on it: reserved names (a column named like a column of an engine query, or
holding a dot, a backtick, a quote), every dtype narwhals knows in ``p``, ``y``,
the weights and the group key, nulls and NaN, duplicate column names, empty
groups, and a key named like a column of the result (docs/engines.md, "Names"
and "Types"). Dask's messages carry the partition (docs/dask.md); it is
stripped before comparing. Spark runs in one session for the whole test
session (local[2], UI off), on the same cases."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from tolerances import ENGINE_RTOL

import calibr

N = 24
RESERVED = ["__g", "__bin", "__bad", "__count", "__sp", "__sy", "__rows", "__valid",
            "__pmiss", "__ymiss", "__pbad", "__ybad", "__wbad", "__k", "__x", "__r", "c0",
            "c1", "_0", "a.b", "a`b", "a b", 'a"b']


def _base() -> dict[str, pa.Array]:
    rng = np.random.default_rng(31)
    p = np.round(rng.random(N), 6)
    p[:3] = [0.0, 1.0, 0.5]
    y = (rng.random(N) < p).astype(np.int64)
    g = np.array(["b", "a"] * (N // 2))
    return {"g": pa.array(g), "p": pa.array(p), "y": pa.array(y),
            "w": pa.array(rng.integers(1, 4, N).astype(np.int64))}


def _table(**columns: Any) -> pa.Table:
    """The base columns, replaced or added by ``columns`` (None drops one)."""
    cols = _base()
    for name, value in columns.items():
        if value is None:
            cols.pop(name)
        else:
            array = isinstance(value, (pa.Array, pa.ChunkedArray))
            cols[name] = value if array else pa.array(value)
    return pa.table(cols)


def _with(arr: pa.Array, at: dict[int, Any]) -> pa.Array:
    values = arr.to_pylist()
    for i, v in at.items():
        values[i] = v
    return pa.array(values, type=arr.type)


def _p() -> pa.Array:
    return _base()["p"]


def _decimal(values: pa.Array, scale: int = 6) -> pa.Array:
    return pa.array([None if v is None else decimal.Decimal(f"{v:.{scale}f}")
                     for v in values.to_pylist()], pa.decimal128(12, scale))


#: (id, table, calls): a call is (verb, keyword arguments); the verbs are
#: "summarise" and "table" of ``data``, and "ece" of the columns p and y.
Case = tuple[str, Callable[[], pa.Table], list[tuple[str, dict]]]


def _summary_and_table(by: Any = "g", **kw: Any) -> list[tuple[str, dict]]:
    return [("summarise", dict(by=by, **kw)), ("table", dict(by=by, **kw))]


def _reserved() -> pa.Table:
    base = _base()
    cols = {name: base["g"] for name in RESERVED}
    cols.update({"__sp": base["p"], "__sy": base["y"], "__count": base["w"]})
    cols["__g"] = base["g"]
    return pa.table(cols)


KEYS = [k for k in RESERVED if k not in ("__sp", "__sy", "__count")]

CASES: list[Case] = [
    # reserved names: every column of the queries, and names Spark would parse
    ("reserved names", _reserved,
     [("summarise", dict(p="__sp", y="__sy", by=KEYS)),
      ("summarise", dict(p="__sp", y="__sy", by=KEYS, weights="__count")),
      ("table", dict(p="__sp", y="__sy", by=KEYS[:6], bins=4)),
      ("summarise", dict(p="__sp", y="__sy", by="__g"))]),
    ("one int32 key named __bin", lambda: _table(
        __bin=pa.array(np.arange(N) % 3, pa.int32()), c0=_p(), g=None),
     [("summarise", dict(p="c0", by="__bin")), ("table", dict(p="c0", by="__bin", bins=3))]),
    ("equal-mass, sweep and auto of reserved names", lambda: pa.table(
        {"__x": _p(), "__r": _base()["y"]}),
     [("ece", dict(p="__x", y="__r", bins=5, binning="equal-mass")),
      ("ece", dict(p="__x", y="__r", bins="sweep")),
      ("ece", dict(p="__x", y="__r", bins="auto")),
      ("table", dict(p="__x", y="__r", bins="sweep", by=None)),
      ("table", dict(p="__x", y="__r", bins="auto", by=None))]),
    # p of every dtype
    *[(f"p {name}", (lambda a=arr: _table(p=a)), [("ece", {}), ("summarise", dict(by="g"))])
      for name, arr in [
          ("float32", pa.array(_p().to_numpy().astype(np.float32))),
          ("int8 0/1", pa.array((np.arange(N) % 2).astype(np.int8))),
          ("uint8 0/1", pa.array((np.arange(N) % 2).astype(np.uint8))),
          ("decimal", _decimal(_p())),
          ("bool", pa.array(np.arange(N) % 2 == 0)),
          ("string", pa.array([str(v) for v in _p().to_pylist()])),
          ("date", pa.array([dt.date(2024, 1, 1)] * N)),
          ("timestamp", pa.array([dt.datetime(2024, 1, 1)] * N, pa.timestamp("us"))),
          ("duration", pa.array([dt.timedelta(seconds=1)] * N, pa.duration("us"))),
          ("dictionary", pa.array([f"{v}" for v in _p().to_pylist()]).dictionary_encode()),
          ("binary", pa.array([b"0.5"] * N)),
          ("list", pa.array([[v] for v in _p().to_pylist()])),
          ("struct", pa.array([{"v": v} for v in _p().to_pylist()])),
          ("null", pa.nulls(N, pa.float64())),
      ]],
    # bad and missing values of p
    *[(f"p {name}", (lambda a=arr: _table(p=a)), [("ece", {}), ("ece", dict(na_rm=True)),
                                                  *_summary_and_table()])
      for name, arr in [
          ("with a null", _with(_p(), {5: None})),
          ("with NaN", _with(_p(), {5: float("nan")})),
          ("with inf", _with(_p(), {5: float("inf")})),
          ("with 1e20", _with(_p(), {5: 1e20})),
          ("with -1e20", _with(_p(), {5: -1e20})),
          ("with -0.5", _with(_p(), {5: -0.5})),
          ("decimal with a null", _decimal(_with(_p(), {5: None}))),
      ]],
    # y of every dtype
    *[(f"y {name}", (lambda a=arr: _table(y=a)), [("ece", {}), ("summarise", dict(by="g"))])
      for name, arr in [
          ("bool", pa.array(_base()["y"].to_numpy() == 1)),
          ("int8", pa.array(_base()["y"].to_numpy().astype(np.int8))),
          ("uint64", pa.array(_base()["y"].to_numpy().astype(np.uint64))),
          ("float32", pa.array(_base()["y"].to_numpy().astype(np.float32))),
          ("decimal", _decimal(_base()["y"].cast(pa.float64()), 0)),
          ("string", pa.array([str(v) for v in _base()["y"].to_pylist()])),
          ("with a null", _with(_base()["y"], {4: None})),
          ("2", _with(_base()["y"], {4: 2})),
      ]],
    # weights of several dtypes and values
    *[(f"weights {name}", (lambda a=arr: _table(w=a)),
       [("summarise", dict(by="g", weights="w")), ("table", dict(by="g", weights="w")),
        ("summarise", dict(by=None, weights="w"))])
      for name, arr in [
          ("float32", pa.array(_base()["w"].to_numpy().astype(np.float32))),
          ("uint8", pa.array(_base()["w"].to_numpy().astype(np.uint8))),
          ("decimal", _decimal(_base()["w"].cast(pa.float64()), 2)),
          ("with a null", _with(_base()["w"].cast(pa.float64()), {3: None})),
          ("negative", _with(_base()["w"], {3: -1})),
          ("zero in a group", pa.array(np.where(np.arange(N) % 2 == 0, 0, 1))),
          ("string", pa.array([str(v) for v in _base()["w"].to_pylist()])),
      ]],
    # group keys of every dtype
    *[(f"key {name}", (lambda a=arr: _table(g=a)), _summary_and_table())
      for name, arr in [
          ("dictionary", pa.array(["b", "a"] * (N // 2)).dictionary_encode()),
          ("int8", pa.array((np.arange(N) % 3).astype(np.int8))),
          ("uint32", pa.array((np.arange(N) % 3).astype(np.uint32))),
          ("int64", pa.array((np.arange(N) % 3).astype(np.int64) * 10**12)),
          ("bool", pa.array(np.arange(N) % 2 == 0)),
          ("float with NaN", pa.array(np.where(np.arange(N) % 3 == 0, np.nan,
                                               np.arange(N) % 2))),
          ("date", pa.array([dt.date(2024, 1, 1 + i % 2) for i in range(N)])),
          ("timestamp", pa.array([dt.datetime(2024, 1, 1, i % 2) for i in range(N)],
                                 pa.timestamp("us"))),
          ("decimal", pa.array([decimal.Decimal(i % 2) for i in range(N)],
                               pa.decimal128(5, 1))),
          ("binary", pa.array([b"x" if i % 2 else b"z" for i in range(N)])),
          ("list", pa.array([[i % 2] for i in range(N)])),
          ("struct", pa.array([{"v": i % 2} for i in range(N)])),
          ("with nulls", pa.array([None if i % 4 == 0 else "ab"[i % 2] for i in range(N)])),
          ("all null", pa.nulls(N, pa.string())),
      ]],
    # empty groups and empty frames
    ("a group emptied by na_rm", lambda: _table(
        p=pa.array([None if i % 2 == 0 else v for i, v in enumerate(_p().to_pylist())])),
     _summary_and_table(na_rm=True)),
    ("no rows", lambda: _table().slice(0, 0), [("ece", {}), *_summary_and_table()]),
    # a key named like a column of the result
    ("key named n", lambda: _table(n=_base()["g"], g=None), _summary_and_table(by="n")),
    ("key named ece", lambda: _table(ece=_base()["g"], g=None), _summary_and_table(by="ece")),
    ("key named bin", lambda: _table(bin=_base()["g"], g=None), [("table", dict(by="bin"))]),
    # duplicate column names (the engines that can hold them: see DUPLICATES)
    ("two p columns", lambda: pa.table([_p(), _p(), _base()["y"], _base()["g"]],
                                       names=["p", "p", "y", "g"]), _summary_and_table()),
    ("two unused columns of one name", lambda: pa.table(
        [_p(), _base()["y"], _base()["g"], _base()["w"], _base()["w"]],
        names=["p", "y", "g", "x", "x"]), _summary_and_table()),
]

#: The engines whose frames can hold two columns of one name (polars, DuckDB
#: and Dask cannot: their constructors refuse or rename them).
DUPLICATES = {"pandas", "arrow", "spark"}
#: The engines of the parametrised test; the reference is pandas with its own
#: ``groupby`` (and the columns of ``p`` and ``y`` as Series for ``ece``).
ENGINES = ["pandas", "polars", "polars-lazy", "arrow", "duckdb", "spark", "dask"]


def _spark_table(table: pa.Table) -> pa.Table:
    """What Spark holds of the table: no dictionaries (their values), no unsigned
    integers (the next signed type), timestamps as instants (UTC, the session's
    time zone), as a user's Spark frame would hold them."""
    widen = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
             pa.uint64(): pa.decimal128(20, 0)}
    columns = []
    for column in table.columns:
        t = column.type
        if pa.types.is_dictionary(t):
            column = column.cast(t.value_type)
        elif t in widen:
            column = column.cast(widen[t])
        elif pa.types.is_timestamp(t) and t.tz is None:  # Spark's TIMESTAMP: an instant
            column = column.cast(pa.timestamp(t.unit, tz="UTC"))
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _source(engine: str, table: pa.Table | pd.DataFrame, spark: Any) -> Any:
    if isinstance(table, pd.DataFrame):  # the reference on what Dask holds
        return table
    if engine in ("pandas", "reference"):  # dates as datetime64, as a pandas user has them
        return table.to_pandas(date_as_object=False)
    if engine == "arrow":
        return table
    if engine in ("polars", "polars-lazy"):
        import polars as pl

        df = pl.from_arrow(table)
        return df if engine == "polars" else df.lazy()
    if engine == "duckdb":
        import duckdb

        return duckdb.from_arrow(table)
    if engine == "spark":
        return spark.createDataFrame(_spark_table(table))
    import dask.dataframe as dd

    return dd.from_pandas(table.to_pandas(date_as_object=False), npartitions=2)


def _call(engine: str, table: pa.Table, verb: str, kw: dict, spark: Any,
          cache: dict) -> Any:
    """The call on the engine's source of ``table`` (each source built once per
    case: a Spark frame costs a job)."""
    kw = dict(kw)
    p, y = kw.pop("p", "p"), kw.pop("y", "y")
    by = kw.pop("by", None)

    def source(cols: tuple | None) -> Any:
        if cols not in cache:
            t = table if cols is None else (
                table[list(cols)] if isinstance(table, pd.DataFrame) else table.select(cols))
            cache[cols] = _source(engine, t, spark)
        return cache[cols]

    if verb == "ece":
        src = source((p, y))
        if engine in ("polars-lazy", "duckdb", "spark"):
            return calibr.ece(src, y, **kw)
        if engine == "arrow":
            return calibr.ece(src.column(p), src.column(y), **kw)
        return calibr.ece(src[p], src[y], **kw)
    data = source(None)
    if engine == "reference" and by is not None:  # pandas' own groupby (the "pandas"
        data, by = data.groupby(by), None  # engine passes by=, as the others do)
    if engine == "dask" and by is not None:
        data, by = data.groupby(by), None
    if by is not None:
        kw["by"] = by
    if verb == "summarise":
        return calibr.summarise(data, p, y, **kw)
    return calibr.calibration_table(p, y, data=data, **kw)


def _held(engine: str, table: pa.Table) -> pa.Table:
    """The table as the engine holds it (DuckDB reads a dictionary as its values,
    Spark has no unsigned integers, polars its own time units): the reference is
    the pandas path on the same data."""
    if engine in ("polars", "polars-lazy"):
        import polars as pl

        return pl.from_arrow(table).to_arrow()
    if engine == "duckdb":
        import duckdb

        return duckdb.from_arrow(table).to_arrow_table()
    if engine == "spark":
        return _spark_table(table)
    if engine == "dask":  # Dask stores object columns as strings (convert-string)
        return _source("dask", table, None).compute()
    return table


#: The refusal of a column that is not numeric: its message shows the dtype or the
#: first value as each library hands the column to pandas (``datetime64[s]`` or
#: ``datetime.date``, ``category`` or ``str``); compared by class, argument and group.
_NOT_NUMERIC = re.compile(r"^`(\w+)` must (be numeric \(integer or float\)|hold real numbers); "
                          r".*?(( \[group [^\]]*\])?)$")


def _outcome(run: Callable[[], Any]) -> Any:
    """A result as pandas, or ``(error class, message)``."""
    try:
        out = run()
        if hasattr(out, "compute"):
            out = out.compute()
    except Exception as err:  # noqa: BLE001 - the error is the outcome compared
        message = re.sub(r" \[Dask partition \d+; positions count the rows of that "
                         r"partition\]", "", str(err))
        message = _NOT_NUMERIC.sub(r"`\1` is not numeric\3", message)
        return (type(err).__name__, message)
    if isinstance(out, pa.Table):
        out = out.to_pandas()
    elif hasattr(out, "to_pandas"):
        out = out.to_pandas()
    return out


def _same_key(a: Any, b: Any) -> bool:
    if isinstance(a, (dt.date, np.datetime64)) and isinstance(b, (dt.date, np.datetime64)):
        return pd.Timestamp(a) == pd.Timestamp(b)
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    if isinstance(a, (np.ndarray, list)) or isinstance(b, (np.ndarray, list)):
        return list(a) == list(b)
    return a == b or (float(a) == float(b) if _number(a) and _number(b) else False)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating, decimal.Decimal)) and not \
        isinstance(v, (bool, np.bool_))


def _assert_same(got: Any, want: Any, what: str) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and got == want, \
            f"{what}: {got!r} != the pandas path's {want!r}"
        return
    assert not isinstance(got, tuple), f"{what}: {got!r}, where pandas gives a result"
    if isinstance(want, float):
        assert got == want or abs(got - want) <= ENGINE_RTOL * abs(want), (what, got, want)
        return
    assert list(got.columns) == list(want.columns), (what, list(got.columns))
    assert len(got) == len(want), (what, len(got), len(want))
    for c in want.columns:
        a, b = got[c].tolist(), want[c].tolist()
        if pd.api.types.is_float_dtype(want[c].dtype) and c not in ("lower", "upper"):
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                       rtol=ENGINE_RTOL, atol=0, err_msg=f"{what}: {c}")
        else:
            assert all(_same_key(u, v) for u, v in zip(a, b, strict=True)), (what, c, a, b)


def _partition_local(error: tuple) -> tuple:
    """Dask checks the values partition by partition (docs/dask.md): its message
    counts and places the bad values of the first partition that has one, in
    that partition's group; the counts, positions and group are left out."""
    message = re.sub(r"\[group [^\]]*\]", "[group]", error[1])
    return error[0], re.sub(r"\d[\d,]*", "#", message)


@pytest.mark.parametrize("engine", ENGINES)
def test_hostile_frames_give_the_pandas_answer(engine, request):
    # the suite's one SparkSession (tests/conftest.py), started only for Spark
    spark = request.getfixturevalue("spark_session") if engine == "spark" else None
    failures = []
    for name, make, calls in CASES:
        table = make()
        if len(set(table.column_names)) < table.num_columns and engine not in DUPLICATES:
            continue
        held = _held(engine, table)
        mine: dict = {}
        for verb, kw in calls:
            want = _outcome(lambda t=held, v=verb, k=kw: _call("reference", t, v, k, None, {}))
            got = _outcome(lambda t=table, v=verb, k=kw, c=mine: _call(engine, t, v, k, spark, c))
            if engine == "dask" and isinstance(got, tuple) and isinstance(want, tuple):
                got, want = _partition_local(got), _partition_local(want)
            try:
                _assert_same(got, want, f"{name}: {verb}({kw})")
            except AssertionError as err:
                failures.append(str(err)[:600])
    assert not failures, f"{len(failures)} differ:\n" + "\n".join(failures)


def test_the_new_refusals_are_pinned():
    """The messages the rules of docs/engines.md ("Names", "Types") add."""
    import polars as pl

    df = _table(g=pa.array([[i % 2] for i in range(N)])).to_pandas()
    for data in (df.groupby("g"), pl.from_pandas(df).lazy()):
        kw = {} if isinstance(data, pd.core.groupby.DataFrameGroupBy) else {"by": "g"}
        with pytest.raises(calibr.InputTypeError, match=r"^The group key 'g' holds lists, "
                           r"arrays or other unhashable values, which cannot be group keys; "
                           r"convert the column \(e\.g\. to strings\) to group by it\.$") as e:
            calibr.summarise(data, "p", "y", **kw)
        assert e.value.param == "by"
    with pytest.raises(calibr.InputError, match=r"^`p` must hold real numbers that fit in a "
                       r"float64; 1 value does not, the first at position 1 "
                       r"\(Decimal\('1E\+400'\)\)\.$"):
        calibr.ece([decimal.Decimal("0.5"), decimal.Decimal("1e400")], [0, 1])
    assert calibr.ece([decimal.Decimal("0.2"), decimal.Decimal("0.7")], [0, 1]) == \
        calibr.ece([0.2, 0.7], [0, 1])
    import dask.dataframe as dd

    ddf = dd.from_pandas(_table(n=_base()["g"]).to_pandas(), npartitions=2)
    with pytest.raises(calibr.InputError, match=r"^The group key 'n' has the name of a column "
                       r"of the table; rename it\.$"):
        calibr.calibration_table("p", "y", data=ddf.groupby("n"))  # at the call, not compute


def test_no_group_above_the_collect_limit(monkeypatch):
    """Every key missing on a source larger than calibr collects: the pandas path's
    empty table and summary (from no rows), not a message of the counters."""
    import polars as pl

    from calibr._engines import _lazy

    table = _table(g=pa.nulls(N, pa.string()))
    want_t = calibr.calibration_table("p", "y", data=table.to_pandas().groupby("g"))
    want_s = calibr.summarise(table.to_pandas().groupby("g"), "p", "y")
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 5)
    lf = pl.from_arrow(table).lazy()
    got_t = calibr.calibration_table("p", "y", data=lf, by="g").to_pandas()
    got_s = calibr.summarise(lf, "p", "y", by="g").to_pandas()
    assert list(got_t.columns) == list(want_t.columns) and len(got_t) == len(want_t) == 0
    assert list(got_s.columns) == list(want_s.columns) and len(got_s) == len(want_s) == 0
