"""Spark DataFrames on calibr/_engines/spark.py (local[2], UI off, the suite's one
session of tests/conftest.py): the pushed-down binned metrics,
summarise and calibration_table equal the pandas path to ENGINE_RTOL, bad input
gives the pandas message, and what Spark does not compute is collected. Few and
cheap: the rule itself is tested on polars and DuckDB (tests/test_engines.py)."""

from __future__ import annotations

import sys
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from test_engines import (
    BAD,
    BINS,
    SUM_TESTS,
    SUMS,
    _apart_key_frame,
    _close,
    _frame,
    _grouped_frame,
    _message,
    _no_rows_collected,
    _same_test,
    _tied_frame,
    check_an_integer_key_with_a_missing_value,
)
from tolerances import ENGINE_RTOL

import calibr


@pytest.fixture(scope="module")
def spark(spark_session):
    """The suite's SparkSession (tests/conftest.py)."""
    return spark_session




def test_no_pandas_3_warning_escapes_calibr(spark):
    """pyspark 4.3 warns about pandas >= 3 when pyspark.testing.utils is first imported;
    where calibr's query is the first to import it (here: imported afresh), calibr's
    call ignores exactly that warning, and no other warning escapes either."""
    df = _grouped_frame()
    sdf = _sdf(spark, df)
    binary = sdf.select("p", "y")  # a py4j call of the user's: it imports the module
    saved = {name: sys.modules.pop(name) for name in list(sys.modules)
             if name.startswith("pyspark.testing")}
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            calibr.ece(binary, "y")
            calibr.summarise(sdf, "p", "y", by="k", metrics=["ece", "skce"])
        imported = "pyspark.testing.utils" in sys.modules  # by calibr's query
    finally:
        sys.modules.update(saved)
    assert imported
    assert [str(w.message) for w in seen] == []


def _sdf(spark, df: pd.DataFrame, partitions: int | None = 4):
    """Four partitions: the sums of a bin come from several of them (the rows are
    then shuffled: a collected frame has them in another order). None: the rows
    in the frame's order, as the positions of messages need."""
    sdf = spark.createDataFrame(pa.Table.from_pandas(df, preserve_index=False))
    return sdf if partitions is None else sdf.repartition(partitions)


def test_binned_metrics_equal_the_pandas_path(spark):
    df = _frame(2000)
    sdf = _sdf(spark, df)
    cases = [(calibr.ece, "p", BINS[0]), (calibr.ece, "p32", BINS[0]),
             (calibr.mce, "p", BINS[1]), (calibr.calibration_error, "p", BINS[4]),
             (calibr.ece, "p", BINS[6])]  # R's bins, float32, right=False, breaks, equal-mass
    for f, pcol, opts in cases:
        want = f(df[pcol], df["y"], **opts)
        assert _close(f(sdf.select(pcol, "y"), "y", **opts), want), (f.__name__, pcol, opts)
    want = calibr.ece(df["p"], df["y"], weights=df["w"])
    assert _close(calibr.ece(sdf.select("p", "y", "w"), "y", weights="w"), want)


def test_verbs_equal_the_pandas_path(spark):
    df = _grouped_frame()
    sdf = _sdf(spark, df)
    want = calibr.summarise(df.groupby(["k", "g"]), "p", "y")
    got = calibr.summarise(sdf, "p", "y", by=["k", "g"])
    assert isinstance(got, pa.Table)
    got = got.to_pandas()
    pd.testing.assert_frame_equal(got[["k", "g"]], want[["k", "g"]], check_dtype=False)
    pd.testing.assert_frame_equal(got[["ece", "mce"]], want[["ece", "mce"]],
                                  rtol=ENGINE_RTOL, atol=0)
    want = calibr.calibration_table("p", "y", data=df.groupby("g"), bins=4)
    got = calibr.calibration_table("p", "y", data=sdf, by="g", bins=4).to_pandas()
    pd.testing.assert_frame_equal(got, want, rtol=ENGINE_RTOL, atol=0, check_dtype=False)


def test_bad_input_and_the_collected_path(spark):
    small = _frame(200)
    for bad in ("missing p", "string y"):
        df = BAD[bad](small)
        want = _message(lambda d=df: calibr.ece(d["p"], d["y"]))
        assert _message(lambda d=df: calibr.ece(_sdf(spark, d, None).select("p", "y"),
                                                "y")) == want
    sdf = _sdf(spark, small, None)
    assert calibr.skce(sdf.select("p", "y"), "y") == calibr.skce(small["p"], small["y"])
    assert np.isfinite(calibr.mmce(sdf.select("p", "y"), "y"))


def test_scores_and_cumulative_measures_are_pushed_down(spark, monkeypatch):
    """brier, log_loss, auroc, ecce and the spiegelhalter/ks/kuiper tests on Spark (four
    partitions: the blocks of tied p and the window sum cross them) equal the pandas path,
    with no row collected: direct calls, weighted, summarise by group (a group of one row,
    its AUROC NaN with the pandas warning); then nulls: na_rm drops the pandas path's rows,
    and without it the pandas path's message."""
    df = _tied_frame(400)
    sdf = _sdf(spark, df)
    with monkeypatch.context() as m:
        _no_rows_collected(m)
        for f, opts in SUMS:
            want = f(df["p"], df["y"], **opts)
            assert _close(f(sdf.select("p", "y"), "y", **opts), want), (f.__name__, opts)
            want = f(df["p"], df["y"], weights=df["w"], **opts)
            got = f(sdf.select("p", "y", "w"), "y", weights="w", **opts)
            assert _close(got, want), (f.__name__, opts, "weighted")
        for method in SUM_TESTS:
            _same_test(calibr.calibration_test(sdf.select("p", "y"), "y", method),
                       calibr.calibration_test(df["p"], df["y"], method))
        metrics = ["brier", "log_loss", "auroc", "ecce",
                   calibr.metric("ecce", kind="kuiper", scale="sigma")]
        with pytest.warns(RuntimeWarning) as want_warning:
            want = calibr.summarise(df.groupby("g"), "p", "y", metrics=metrics, weights="w")
        with pytest.warns(RuntimeWarning) as got_warning:
            got = calibr.summarise(sdf, "p", "y", metrics=metrics, weights="w",
                                   by="g").to_pandas()
        assert [str(w.message) for w in got_warning] == [str(w.message) for w in want_warning]
        assert list(got["g"]) == ["a", "b", "c", "lone"]
        pd.testing.assert_frame_equal(got.drop(columns="g"), want.drop(columns="g"),
                                      rtol=ENGINE_RTOL, atol=0)
    nulls = df.assign(p=df["p"].mask(np.arange(400) % 11 == 4),
                      y=df["y"].astype("Float64").mask(np.arange(400) % 13 == 5))
    nsdf = _sdf(spark, nulls, None)
    for f, opts in SUMS[:5]:
        want = f(nulls["p"], nulls["y"], na_rm=True, **opts)
        assert _close(f(nsdf.select("p", "y"), "y", na_rm=True, **opts), want), f.__name__
    want = _message(lambda: calibr.ecce(nulls["p"], nulls["y"]))
    assert _message(lambda: calibr.ecce(nsdf.select("p", "y"), "y")) == want
def test_the_poisson_bootstrap_equals_the_pandas_path(spark, monkeypatch):
    """docs/engines.md, "Intervals on the engine": the replicates of Spark's Poisson
    bootstrap are those of the pandas path on the same rows (tests/test_poisson.py
    pins the generator), and another partitioning gives the same interval."""
    from calibr._engines import _lazy

    gen = np.random.default_rng(3)
    n = 1500
    p = gen.random(n)
    df = pd.DataFrame({"p": p, "y": (gen.random(n) < p).astype(np.int64),
                       "id": gen.permutation(n).astype(np.int64) - 700})
    want = calibr.bootstrap(df["p"], df["y"], "ece", n_resamples=30, rng=21, scheme="poisson",
                            row_key=df["id"], bins=8)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)  # nothing is collected
    for partitions in (1, 7):
        got = calibr.bootstrap(_sdf(spark, df, partitions), "y", "ece", n_resamples=30, rng=21,
                               scheme="poisson", row_key="id", bins=8)
        assert got.seed == 21 and got.n == n
        assert _close(got.estimate, want.estimate)
        np.testing.assert_allclose(got.bootstrap_distribution, want.bootstrap_distribution,
                                   rtol=ENGINE_RTOL, atol=0)
        np.testing.assert_allclose(tuple(got.confidence_interval),
                                   tuple(want.confidence_interval), rtol=ENGINE_RTOL, atol=0)
    with pytest.raises(calibr.InputError, match="`row_key` must identify each row: 1 value "
                                                "repeats an earlier one.$"):
        calibr.bootstrap(_sdf(spark, df.assign(id=df["id"].where(df.index != 9, df["id"][8]))),
                         "y", n_resamples=5, rng=1, scheme="poisson", row_key="id")


def test_poisson_intervals_of_summarise_and_the_scores(spark, monkeypatch):
    """docs/engines.md, "Intervals on the engine": summarise(..., scheme="poisson")
    by group (ece, brier, log_loss in one call) and bootstrap of the log loss (an
    impossible row: NaN replicates, as the pandas path) on Spark, against the pandas
    path on the same rows, with nothing collected."""
    from calibr._engines import _lazy

    gen = np.random.default_rng(4)
    n = 600
    p = gen.random(n)
    df = pd.DataFrame({"g": gen.integers(0, 3, n).astype(np.int64), "p": p,
                       "y": (gen.random(n) < p).astype(np.int64),
                       "id": gen.permutation(n).astype(np.int64) * 3})
    df.loc[[2, 9], ["p", "y"]] = [[0.0, 1], [1.0, 0]]
    kw = dict(metrics=["ece", "brier", "log_loss"], confidence_level=0.9, n_resamples=12,
              rng=5, scheme="poisson", row_key="id", by="g")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the impossible rows' inf log loss, said alike
        want = calibr.summarise(df, "p", "y", **kw)
        lwant = calibr.bootstrap(df["p"], df["y"], "log_loss", n_resamples=12, rng=5,
                                 scheme="poisson", row_key=df["id"])
        monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)  # nothing is collected
        got = calibr.summarise(_sdf(spark, df, 3), "p", "y", **kw).to_pandas()
        lgot = calibr.bootstrap(_sdf(spark, df.drop(columns="g"), 3), "y", "log_loss",
                                n_resamples=12, rng=5, scheme="poisson", row_key="id")
    assert list(got.columns) == list(want.columns)
    np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), rtol=ENGINE_RTOL,
                               atol=0)
    assert np.isnan(lgot.bootstrap_distribution).any()
    np.testing.assert_allclose(lgot.bootstrap_distribution, lwant.bootstrap_distribution,
                               rtol=ENGINE_RTOL, atol=0)


def _spark_cells(spark, df: pd.DataFrame, keys: list, bins: int = 10):
    """``_lazy._engine_cells`` of Spark's own cell query (calibr/_engines/spark.py,
    ``_cells``) on ``df`` (columns c0 the key, c1 ``p``, c2 ``y``), in two partitions,
    in (keys, bin) order: Spark's group-by returns its groups in any order."""
    import narwhals as nw

    from calibr._engines import _lazy
    from calibr._engines import spark as engine

    q = nw.from_native(_sdf(spark, df, 2))
    got = _lazy._engine_cells(engine.ENGINE, q, keys, SimpleNamespace(p="c1", y="c2"), bins)
    return None if got is None else got.sort_values([*keys, "__bin"], ignore_index=True)


def test_the_engines_own_query_bins_every_edge_as_bin_index(spark):
    """Spark's cell query on every break k/B of R's bins, its neighbouring doubles, 0,
    1 and the smallest double (each row its own int32 group: its cell gives its bin),
    for some B (49 and 98: ``B (1/B)`` rounds below 1); then one bad value of each
    kind, grouped and not: the cells say so (None: the counting query runs)."""
    from calibr._binning import BinSpec, bin_index

    for b in (1, 2, 3, 5, 7, 10, 49, 64, 98, 1000):
        edges = BinSpec.from_options(b, "equal-width", True).edges()
        k = np.arange(b + 1) / b
        x = np.unique(np.clip(np.concatenate(
            [edges, np.nextafter(edges, -1.0), np.nextafter(edges, 2.0), k,
             np.nextafter(k, -1.0), np.nextafter(k, 2.0), [0.0, 1.0, 5e-324]]), 0.0, 1.0))
        df = pd.DataFrame({"c0": np.arange(x.size, dtype=np.int32), "c1": x,
                           "c2": (np.arange(x.size) % 2).astype(np.int8)})
        got = _spark_cells(spark, df, ["c0"], b)
        np.testing.assert_array_equal(got["c0"].to_numpy(), np.arange(x.size))
        np.testing.assert_array_equal(got["__bin"].to_numpy(), bin_index(x, edges, True),
                                      err_msg=f"bins={b}")
        np.testing.assert_array_equal(got["__sp"].to_numpy(), x)
        np.testing.assert_array_equal(got["__sy"].to_numpy(), df["c2"].to_numpy())
    base = pd.DataFrame({"c0": np.array([0, 1, 1], dtype=np.int32), "c1": [0.5, 1.0, -0.0],
                         "c2": np.array([1, 1, 0], dtype=np.int8)})
    got = _spark_cells(spark, base, ["c0"], 49)
    assert got["__bin"].tolist() == [24, 0, 48] and got["__sp"].tolist() == [0.5, 0.0, 1.0]
    bad_p = [np.nan, None, -0.1, 1.5, np.inf, -np.inf, 1e308, -5e-324, np.nextafter(1.0, 2.0)]
    for bins in (10, 49):
        for v in bad_p:
            df = base.assign(c1=pd.array([0.5, 1.0, v], dtype="Float64"))
            assert _spark_cells(spark, df, ["c0"], bins) is None, (bins, v)
    for y in (pd.array([1, 1, 2], dtype="int8"), pd.array([1, 1, None], dtype="Int8"),
              pd.array([1.0, 1.0, 0.5]), pd.array([1.0, 1.0, 1 - 2**-53]),
              pd.array([1.0, 1.0, np.nan]), pd.array([True, True, None], dtype="boolean")):
        assert _spark_cells(spark, base.assign(c2=y), ["c0"]) is None, y
        assert _spark_cells(spark, base.assign(c2=y)[["c1", "c2"]], []) is None, y
    # a missing key: the row is in no group, whatever its p and y
    lost = base.assign(c0=pd.array([0, 1, None], dtype="Int32"),
                       c1=pd.array([0.5, 1.0, None], dtype="Float64"))
    assert _spark_cells(spark, lost, ["c0"])["c0"].tolist() == [0, 1]


def test_spark_s_cell_key_reads_an_integer_label_as_whole(spark):
    """Spark's cell key (calibr/_engines/_cells.py, ``cell_exprs``) takes ``y (y - 1)``
    itself as the label's term for each of Spark's integer types and booleans
    (``WHOLE_LABELS``, the one list of both engines), and ``y (y - 1) <> 0`` (in
    Spark's plan ``NOT (... = 0.0)``) for any other."""
    from calibr._engines import spark as engine

    for sql_type, whole in [("boolean", True), ("tinyint", True), ("smallint", True),
                            ("int", True), ("bigint", True), ("float", False),
                            ("double", False), ("decimal(10,0)", False)]:
        sdf = spark.range(2).selectExpr("CAST(id AS INT) AS c0", "CAST(id / 2 AS DOUBLE) AS c1",
                                        f"CAST(id AS {sql_type}) AS c2")
        plan = engine._cells(sdf, ["c0"], "c1", "c2", 10)._jdf.queryExecution().analyzed()
        assert ("NOT" not in plan.toString()) == whole, (sql_type, plan.toString())


def test_an_integer_key_with_a_missing_value_stays_an_integer(spark):
    """Spark: see tests/test_engines.py, ``check_an_integer_key_with_a_missing_value``."""
    check_an_integer_key_with_a_missing_value(lambda df: _sdf(spark, df, None))


def test_spark_s_own_query_groups_any_other_key_beside_the_bin(spark, monkeypatch):
    """Spark's cell query groups a 64-bit key (2**63 - 1 and -2**63 + 5 exact), a
    string key, a float key with NaN and two keys as they are, beside the bin, with
    nothing collected: the pandas path's groups, keys and numbers; a missing ``p`` in
    a row with a key gives the pandas path's message (tests/test_engines.py,
    ``test_the_engines_own_query_groups_any_other_key_beside_the_bin``); an int32
    key alone is folded into the cell key."""
    from calibr._engines import _lazy

    cells = _lazy._engine_cells
    calls = []
    for kind in ("int64", "string", "float", "two"):
        df, keys = _apart_key_frame(kind)
        with monkeypatch.context() as m:
            _no_rows_collected(m)
            m.setattr(_lazy, "_engine_cells", lambda *a: calls.append(cells(*a)) or calls[-1])
            want = calibr.summarise(df.groupby(keys), "p", "y", metrics=["ece", "mce"])
            got = calibr.summarise(_sdf(spark, df), "p", "y", by=keys,
                                   metrics=["ece", "mce"]).to_pandas()
        if kind == "float":
            want = want.astype({"k": "float64"})
        for k in keys:
            assert got[k].tolist() == want[k].tolist(), (kind, k)
        pd.testing.assert_frame_equal(got.drop(columns=keys), want.drop(columns=keys),
                                      rtol=ENGINE_RTOL, atol=0)
    assert len(calls) == 4 and all(c is not None for c in calls)
    lost = df.copy()
    lost.loc[3, "p"] = np.nan
    want = _message(lambda: calibr.summarise(lost.groupby(keys), "p", "y"))
    assert _message(lambda: calibr.summarise(_sdf(spark, lost, None), "p", "y", by=keys)) == want
    # the grouping itself: one int32 key folded into the cell key, any other beside it
    from calibr._engines.spark import _cells

    for sql_type, folded in (("INT", True), ("BIGINT", False), ("STRING", False)):
        sdf = spark.range(2).selectExpr(f"CAST(id AS {sql_type}) AS c0",
                                        "CAST(id / 2 AS DOUBLE) AS c1", "CAST(id AS INT) AS c2")
        names = _cells(sdf, ["c0"], "c1", "c2", 10).columns
        assert names[:2] == (["__k", "__count"] if folded else ["c0", "__k"]), sql_type


def test_summarise_on_spark_s_own_query_is_pandas(spark, monkeypatch):
    """summarise(ece, mce) by one int32 key runs Spark's own cell query (one query,
    nothing collected): ties on the breaks, -0.0, a group of one row, a missing key,
    negative keys, equal to the pandas path; a group that na_rm empties gives the
    pandas message; a bad label the pandas message (the counting query after the cells)."""
    from calibr._engines import _lazy

    df = _tied_frame(400)
    df["k"] = pd.array(df["g"].map({"a": -3, "b": 0, "c": 7, "lone": 2**31 - 1}),
                       dtype="Int32")
    df.loc[5, "k"] = None
    sdf = _sdf(spark, df)
    calls = []
    shifted = _lazy._shifted_bins

    def spy(*args):
        out = shifted(*args)
        calls.append(out is not None)
        return out

    with monkeypatch.context() as m:
        _no_rows_collected(m)
        m.setattr(_lazy, "_shifted_bins", spy)
        for bins in (10, 20):
            metrics = [calibr.metric("ece", bins=bins), calibr.metric("mce", bins=bins)]
            want = calibr.summarise(df.groupby("k"), "p", "y", metrics=metrics)
            got = calibr.summarise(sdf, "p", "y", metrics=metrics, by="k").to_pandas()
            assert list(got["k"]) == [-3, 0, 7, 2**31 - 1]
            pd.testing.assert_frame_equal(got.drop(columns="k"), want.drop(columns="k"),
                                          rtol=ENGINE_RTOL, atol=0)
    assert calls == [True, True]
    gone = df.dropna(subset=["k"])
    gone = gone.assign(p=gone["p"].mask(gone["k"] == 7))
    want = _message(lambda: calibr.summarise(gone.groupby("k"), "p", "y", na_rm=True))
    assert "no complete observations" in want[1]
    assert _message(lambda: calibr.summarise(_sdf(spark, gone, None), "p", "y", by="k",
                                             na_rm=True)) == want
    bad = gone.assign(p=df["p"], y=gone["y"].where(gone.index != 9, 2))
    want = _message(lambda: calibr.summarise(bad.groupby("k"), "p", "y"))
    assert _message(lambda: calibr.summarise(_sdf(spark, bad, None), "p", "y", by="k")) == want
