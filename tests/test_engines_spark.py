"""Spark DataFrames on calibr/_engines/spark.py (local[2], UI off, the suite's one
session of tests/conftest.py): the pushed-down binned metrics,
summarise and calibration_table equal the pandas path to ENGINE_RTOL, bad input
gives the pandas message, and what Spark does not compute is collected. Few and
cheap: the rule itself is tested on polars and DuckDB (tests/test_engines.py)."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from test_engines import (
    BAD,
    BINS,
    SUM_TESTS,
    SUMS,
    _close,
    _frame,
    _grouped_frame,
    _message,
    _no_rows_collected,
    _same_test,
    _tied_frame,
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
