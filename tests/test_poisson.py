"""The Poisson scheme of calibr.bootstrap (docs/bootstrap.md, "The Poisson scheme"):
its counter-based generator (calibr/_kernels/poisson.py) against the pure-Python
reference of tests/oracles/poisson.py and the Poisson(1) distribution, the pandas
path's replicates against the metric on the rows repeated by the reference's
counts, the row key and its refusals, and the engines (polars, DuckDB; Spark in
tests/test_engines_spark.py) against the pandas path on the same rows
(docs/engines.md, "Intervals on the engine")."""

from __future__ import annotations

import re
import warnings

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest
from oracles.poisson import count_oracle, ece_of_counts_oracle, thresholds_oracle
from scipy import stats
from tolerances import ENGINE_RTOL

import calibr
from calibr import InputError
from calibr._engines import _lazy
from calibr._kernels import poisson as kp

KEYS = np.array([0, 1, 2, 3, 17, -1, -2**63, 2**63 - 1, 2**32, 2**32 - 1, 123456789012],
                dtype=np.int64)


def test_thresholds_are_the_poisson_distribution_function():
    assert list(kp.THRESHOLDS) == thresholds_oracle()
    assert len(kp.THRESHOLDS) == 12  # counts 0 to 12
    cdf = stats.poisson.cdf(np.arange(12), 1.0) * 2.0**32
    assert np.all(np.abs(np.array(kp.THRESHOLDS) - cdf) <= 1.0)


@pytest.mark.parametrize("seed", [0, 1, 42, 2**32, 2**64 - 1])
def test_counts_equal_the_reference(seed):
    a, b = kp.row_state(seed, KEYS)
    for r in (1, 2, 3, 200, 10_000_000):
        assert kp.counts(a, b, r).tolist() == [count_oracle(seed, r, int(k)) for k in KEYS]


def test_first_counts_are_pinned():
    """The first counts of seed 42, keys 0..7, replicates 1..3: any change to the
    generator changes the intervals every engine computes."""
    a, b = kp.row_state(42, np.arange(8))
    got = [kp.counts(a, b, r).tolist() for r in (1, 2, 3)]
    assert got == [[3, 1, 1, 0, 2, 1, 1, 0], [0, 0, 2, 1, 3, 4, 2, 1], [0, 0, 0, 1, 1, 1, 1, 0]]


def test_counts_are_poisson_one_and_independent():
    a, b = kp.row_state(7, np.arange(200_000))
    c = np.stack([kp.counts(a, b, r) for r in range(1, 11)])
    freq = np.bincount(c.ravel(), minlength=13)
    expected = stats.poisson.pmf(np.arange(13), 1.0) * c.size
    # the first 6 counts (expected >= 6000 each): within 5 standard deviations
    assert np.all(np.abs(freq[:6] - expected[:6]) < 5 * np.sqrt(expected[:6]))
    # replicates and neighbouring rows uncorrelated
    assert abs(np.corrcoef(c[0], c[1])[0, 1]) < 0.01
    assert abs(np.corrcoef(c[0, :-1], c[0, 1:])[0, 1]) < 0.01


def _data(n: int = 300, seed: int = 0):
    gen = np.random.default_rng(seed)
    p = gen.random(n)
    y = (gen.random(n) < p**2).astype(np.int64)
    return p, y


@pytest.mark.parametrize("metric,opts", [("ece", {}), ("ece", {"bins": 4, "right": False}),
                                         ("mce", {}), ("brier", {})])
def test_each_replicate_is_the_metric_on_the_repeated_rows(metric, opts):
    p, y = _data()
    res = calibr.bootstrap(p, y, metric, n_resamples=20, rng=5, scheme="poisson", **opts)
    assert res.scheme == "poisson" and res.seed == 5
    for r in (1, 2, 20):
        counts = [count_oracle(5, r, i) for i in range(p.size)]
        idx = np.repeat(np.arange(p.size), counts)
        want = getattr(calibr, metric)(p[idx], y[idx], **opts)
        assert res.bootstrap_distribution[r - 1] == pytest.approx(want, rel=1e-12)
    counts = [count_oracle(5, 1, i) for i in range(p.size)]
    if metric == "ece" and not opts:
        assert res.bootstrap_distribution[0] == pytest.approx(
            ece_of_counts_oracle(p, y, counts, 10), rel=1e-12)
    lo, hi = np.quantile(res.bootstrap_distribution, [0.025, 0.975])
    assert tuple(res.confidence_interval) == (lo, hi)


def test_the_row_key_follows_the_rows():
    """The same rows in another order, with their keys: the same replicates (the
    interval does not depend on the order or partitioning of the rows)."""
    p, y = _data()
    keys = np.arange(p.size) * 3 + 1000
    res = calibr.bootstrap(p, y, "ece", n_resamples=50, rng=9, scheme="poisson", row_key=keys)
    perm = np.random.default_rng(1).permutation(p.size)
    again = calibr.bootstrap(p[perm], y[perm], "ece", n_resamples=50, rng=9, scheme="poisson",
                             row_key=keys[perm])
    np.testing.assert_allclose(again.bootstrap_distribution, res.bootstrap_distribution,
                               rtol=1e-12)
    counts = [count_oracle(9, 1, int(k)) for k in keys]
    idx = np.repeat(np.arange(p.size), counts)
    assert res.bootstrap_distribution[0] == pytest.approx(calibr.ece(p[idx], y[idx]), rel=1e-12)
    # the default key is the position: another order is another resample
    moved = calibr.bootstrap(p[perm], y[perm], "ece", n_resamples=50, rng=9, scheme="poisson")
    assert not np.allclose(moved.bootstrap_distribution, res.bootstrap_distribution)


def test_na_rm_keeps_the_input_positions_as_keys():
    p, y = _data(50)
    p_na = p.copy()
    p_na[[3, 10]] = np.nan
    res = calibr.bootstrap(p_na, y, "ece", n_resamples=5, rng=2, scheme="poisson", na_rm=True)
    kept = np.setdiff1d(np.arange(50), [3, 10])
    counts = [count_oracle(2, 1, int(k)) for k in kept]
    idx = kept[np.repeat(np.arange(kept.size), counts)]
    assert res.n == 48
    assert res.bootstrap_distribution[0] == pytest.approx(calibr.ece(p[idx], y[idx]), rel=1e-12)
    keyed = calibr.bootstrap(p_na, y, "ece", n_resamples=5, rng=2, scheme="poisson",
                             na_rm=True, row_key=np.arange(50) + 7)
    counts = [count_oracle(2, 1, int(k) + 7) for k in kept]
    idx = kept[np.repeat(np.arange(kept.size), counts)]
    assert keyed.bootstrap_distribution[0] == pytest.approx(calibr.ece(p[idx], y[idx]),
                                                            rel=1e-12)


def test_a_replicate_without_rows_is_undefined():
    """One row: a replicate draws it 0 times with probability 1/e; the interval
    abstains (NaN) as for any undefined replicate."""
    with pytest.warns(RuntimeWarning, match="NaN or infinite"):
        res = calibr.bootstrap([0.3], [1], "ece", n_resamples=20, rng=1, scheme="poisson")
    assert np.isnan(res.bootstrap_distribution).any()
    assert np.isnan(res.confidence_interval.low)


def test_a_replicate_of_one_row_is_the_metric_of_that_row_drawn_once_or_more():
    """One row drawn k times (the reference's counts): NaN for k = 0, else the
    metric of that row, |0.3 - 1| = 0.7 for the ECE (the per-bin sums) and
    (0.3 - 1)^2 = 0.49 for the Brier score (the rows repeated), k = 1 included."""
    counts = np.array([count_oracle(1, r, 0) for r in range(1, 31)])
    assert {0, 1} <= set(counts.tolist())  # both cases are reached
    for metric, value in [("ece", 0.7), ("brier", 0.49)]:
        with pytest.warns(RuntimeWarning, match="NaN or infinite"):
            res = calibr.bootstrap([0.3], [1], metric, n_resamples=30, rng=1,
                                   scheme="poisson")
        want = np.where(counts == 0, np.nan, value)
        np.testing.assert_allclose(res.bootstrap_distribution, want, rtol=1e-15)


def test_the_default_scheme_is_multinomial():
    p, y = _data()
    a = calibr.bootstrap(p, y, n_resamples=30, rng=4)
    b = calibr.bootstrap(p, y, n_resamples=30, rng=4, scheme="multinomial")
    assert a.scheme == "multinomial" and a.seed is None
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(scheme="bayes"), InputError, "`scheme` must be one of"),
    (dict(scheme="poisson", rng=2**64), InputError,
     r"`rng` must be a seed below 2\*\*64 for `scheme = \"poisson\"`"),
    (dict(row_key=np.arange(6)), InputError,
     r"`row_key` keys the rows of `scheme = \"poisson\"`; the multinomial scheme"),
    (dict(scheme="poisson", row_key=np.arange(5)), InputError,
     "`row_key` must have one value per row of `p`; got 5 for 6 rows"),
    (dict(scheme="poisson", row_key=np.arange(6.0)), InputError,
     "`row_key` must be a vector of integers, one per row .* dtype float64"),
    (dict(scheme="poisson", row_key=np.array([0, 1, 2, 2, 5, 5])), InputError,
     r"`row_key` must identify each row: 2 values repeat an earlier one \(first 2, at "
     r"position 2\)"),
    (dict(scheme="poisson", row_key=pd.array([0, 1, None, 3, 4, 5], dtype="Int64")),
     InputError, r"`row_key` must not contain missing values; 1 missing \(first at "
                 r"position 2\)"),
    (dict(scheme="poisson", row_key=np.array([0, 1, 2, 3, 4, 2**63], dtype=np.uint64)),
     InputError, "`row_key` must fit in a signed 64-bit integer"),
])
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        calibr.bootstrap([0.1, 0.2, 0.3, 0.6, 0.8, 0.9], [0, 0, 1, 1, 1, 0], "ece",
                         n_resamples=10, **kwargs)


def test_a_generator_or_none_gives_a_seed():
    p, y = _data()
    res = calibr.bootstrap(p, y, n_resamples=10, rng=np.random.default_rng(3), scheme="poisson")
    assert res.seed == int(np.random.default_rng(3).integers(0, 2**64, dtype=np.uint64))
    again = calibr.bootstrap(p, y, n_resamples=10, rng=res.seed, scheme="poisson")
    np.testing.assert_array_equal(again.bootstrap_distribution, res.bootstrap_distribution)
    fresh = calibr.bootstrap(p, y, n_resamples=10, scheme="poisson")
    assert 0 <= fresh.seed < 2**64


def test_an_unsigned_row_key_up_to_the_largest_signed_one_is_taken():
    """An unsigned key is taken up to 2**63 - 1, the largest int64 (one more is
    refused: test_bad_input); its replicates are those of the same signed keys."""
    p, y = [0.1, 0.2, 0.3, 0.6, 0.8, 0.9], [0, 0, 1, 1, 1, 0]
    keys = [0, 1, 2, 3, 4, 2**63 - 1]
    got = calibr.bootstrap(p, y, "ece", n_resamples=10, rng=2, scheme="poisson",
                           row_key=np.array(keys, dtype=np.uint64))
    want = calibr.bootstrap(p, y, "ece", n_resamples=10, rng=2, scheme="poisson",
                            row_key=np.array(keys, dtype=np.int64))
    np.testing.assert_array_equal(got.bootstrap_distribution, want.bootstrap_distribution)


def test_the_seeds_run_from_0_to_2_to_the_64_minus_1():
    """docs/bootstrap.md, "The seed": any integer 0 <= s < 2**64; both ends are seeds,
    whose replicates are the metric on the reference's counts."""
    p, y = _data(40)
    for seed in (0, 2**64 - 1):
        res = calibr.bootstrap(p, y, "brier", n_resamples=3, rng=seed, scheme="poisson")
        assert res.seed == seed
        idx = np.repeat(np.arange(p.size), [count_oracle(seed, 3, i) for i in range(p.size)])
        assert res.bootstrap_distribution[2] == pytest.approx(
            np.mean((p[idx] - y[idx]) ** 2), rel=1e-12)
    with pytest.raises(InputError, match=re.escape(
            '`rng` must be None, a nonnegative integer seed or a numpy.random.Generator; '
            'got -1.')):
        calibr.bootstrap(p, y, n_resamples=3, rng=-1, scheme="poisson")


# --------------------------------------------------------------------------
# the engines


ENGINES = ["polars", "duckdb"]


def _frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    p = gen.random(n)
    p[:11] = np.linspace(0, 1, 11)  # on R's breaks
    df = pd.DataFrame({"p": p, "id": gen.permutation(n).astype(np.int64) * 5 - 3000})
    df["y"] = (gen.random(n) < p).astype(np.int64)
    return df


def _source(df: pd.DataFrame, engine: str, chunks: int = 1):
    """The rows as ``chunks`` pieces in another order, concatenated: another
    partitioning of the same rows."""
    frame = pl.from_pandas(df)
    if chunks > 1:
        order = np.random.default_rng(chunks).permutation(len(df))
        frame = pl.concat([frame[order[i::chunks].tolist()] for i in range(chunks)])
    if engine == "polars":
        return frame.lazy()
    return duckdb.from_arrow(frame.to_arrow())


def _assert_same(got, want):
    assert got.scheme == want.scheme == "poisson" and got.seed == want.seed
    assert got.n == want.n
    assert got.estimate == pytest.approx(want.estimate, rel=ENGINE_RTOL, abs=0)
    np.testing.assert_allclose(got.bootstrap_distribution, want.bootstrap_distribution,
                               rtol=ENGINE_RTOL, atol=0)
    np.testing.assert_allclose(tuple(got.confidence_interval), tuple(want.confidence_interval),
                               rtol=ENGINE_RTOL, atol=0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("metric,opts", [("ece", {}), ("ece", {"bins": 7, "right": False}),
                                         ("mce", {"bins": np.array([0.0, 0.3, 0.5, 1.0])})])
def test_the_engine_equals_the_pandas_path(engine, metric, opts, monkeypatch):
    df = _frame()
    want = calibr.bootstrap(df["p"], df["y"], metric, n_resamples=40, rng=11, scheme="poisson",
                            row_key=df["id"], method="basic", **opts)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)  # nothing is collected
    for chunks in (1, 3):
        got = calibr.bootstrap(_source(df, engine, chunks), "y", metric, n_resamples=40,
                               rng=11, scheme="poisson", row_key="id", method="basic", **opts)
        _assert_same(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engine_drops_incomplete_rows_as_pandas(engine, monkeypatch):
    df = _frame(500)
    df["p"] = df["p"].where(np.arange(500) % 7 != 0)
    want = calibr.bootstrap(df["p"], df["y"], n_resamples=20, rng=1, scheme="poisson",
                            row_key=df["id"], na_rm=True)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    got = calibr.bootstrap(_source(df, engine), "y", n_resamples=20, rng=1, scheme="poisson",
                           row_key="id", na_rm=True)
    _assert_same(got, want)


@pytest.mark.filterwarnings("ignore:The BCa confidence interval cannot be calculated")
@pytest.mark.parametrize("engine", ENGINES)
def test_what_the_engine_does_not_resample_is_collected(engine):
    """BCa (the jackknife reads the rows), a metric the engine does not resample
    (ecce), the multinomial scheme: the pandas path on the collected rows."""
    df = _frame(300)
    src = _source(df, engine)
    for kwargs in (dict(metric="ece", method="bca"), dict(metric="ecce")):
        got = calibr.bootstrap(src, "y", n_resamples=15, rng=3, scheme="poisson",
                               row_key="id", **kwargs)
        want = calibr.bootstrap(df["p"], df["y"], n_resamples=15, rng=3, scheme="poisson",
                                row_key=df["id"], **kwargs)
        np.testing.assert_array_equal(got.bootstrap_distribution, want.bootstrap_distribution)
    got = calibr.bootstrap(src.select("p", "y"), "y", n_resamples=15, rng=3)
    want = calibr.bootstrap(df["p"], df["y"], n_resamples=15, rng=3)
    np.testing.assert_array_equal(got.bootstrap_distribution, want.bootstrap_distribution)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("change,kwargs,match", [
    (None, dict(row_key=None), r"`row_key` is needed for `scheme = \"poisson\"` on a"),
    (None, dict(row_key="nope"), "`row_key` must name a column of `p` other than `y`"),
    (None, dict(row_key="y"), "`row_key` must name a column of `p` other than `y`"),
    ("float", dict(row_key="id"), "`row_key` must name a column of integers .* 'id' holds "
                                  "Float64"),
    (None, dict(row_key="id", rng=2**64), r"`rng` must be a seed below 2\*\*64"),
    (None, dict(row_key="id", rng=2**64, method="bca"), r"`rng` must be a seed below 2\*\*64"),
    ("null", dict(row_key="id"), "`row_key` must not contain missing values; 1 missing.$"),
    ("dup", dict(row_key="id"), "`row_key` must identify each row: 2 values repeat an "
                                "earlier one.$"),
])
def test_bad_input_on_the_engine(engine, change, kwargs, match, monkeypatch):
    df = _frame(300)
    if change == "float":
        df["id"] = df["id"].astype(float)
    elif change == "null":
        df["id"] = df["id"].astype("Int64").mask(np.arange(300) == 4)
    elif change == "dup":
        df.loc[[5, 6], "id"] = df.loc[4, "id"]
    src = _source(df, engine)
    ran = []
    if change is None or change == "float":  # refused from the schema: no query runs
        monkeypatch.setattr(_lazy, "_collect", lambda lf: ran.append(lf))
    with pytest.raises(InputError, match=match):
        calibr.bootstrap(src, "y", n_resamples=10, scheme="poisson", **kwargs)
    assert ran == []


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_values_on_the_engine_get_the_pandas_message(engine):
    """A missing p without na_rm, a label that is not 0/1, na_rm dropping every row:
    the pandas path's error (class and message), as for the pushed-down metrics."""
    df = _frame(200)
    cases = [df.assign(p=df["p"].where(np.arange(200) != 5)),
             df.assign(y=np.where(np.arange(200) == 7, 2, df["y"])),
             df.assign(p=np.nan)]
    for bad, na_rm in zip(cases, (False, False, True), strict=True):
        with pytest.raises(InputError) as want:
            calibr.bootstrap(bad["p"], bad["y"], n_resamples=5, rng=1, scheme="poisson",
                             row_key=bad["id"], na_rm=na_rm)
        with pytest.raises(InputError, match=re.escape(str(want.value))):
            calibr.bootstrap(_source(bad, engine), "y", n_resamples=5, rng=1,
                             scheme="poisson", row_key="id", na_rm=na_rm)


@pytest.mark.parametrize("engine", ENGINES)
def test_float32_p_and_boolean_y_on_the_engine(engine, monkeypatch):
    df = _frame(400)
    df["p"] = df["p"].astype(np.float32)
    df["y"] = df["y"].astype(bool)
    want = calibr.bootstrap(df["p"], df["y"], n_resamples=10, rng=2, scheme="poisson",
                            row_key=df["id"])
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    got = calibr.bootstrap(_source(df, engine), "y", n_resamples=10, rng=2, scheme="poisson",
                           row_key="id")
    _assert_same(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_replicate_batches_give_the_counts_of_one_query(engine, monkeypatch):
    """docs/engines.md, "Intervals on the engine": the replicates run in batches of
    consecutive replicates; any batching gives the per-(group, replicate, bin)
    counts of one query exactly (and of the numpy generator), the sums to
    ENGINE_RTOL."""
    import narwhals as nw

    from calibr._engines._poisson import replicate_sums

    df = _frame(600)
    df["g"] = np.arange(600) % 3
    df["bin"] = np.minimum((df["p"] * 4).astype(np.int64), 3)
    native = _source(df, engine)
    rows = nw.from_native(native).select(
        "g", __bin=nw.col("bin").cast(nw.Int64), __p=nw.col("p").cast(nw.Float64),
        __y=nw.col("y").cast(nw.Float64), __key=nw.col("id").cast(nw.Int64))

    def table(batch):
        out = replicate_sums(engine, rows, ["g"], 77, 23, batch=batch)
        return out.sort_values(["g", "__r", "__bin"]).reset_index(drop=True)

    one = table(23)
    a, b = kp.row_state(77, df["id"].to_numpy())
    cell = df["g"].to_numpy() * 4 + df["bin"].to_numpy()
    want = np.stack([np.bincount(cell, weights=kp.counts(a, b, r), minlength=12)
                     for r in range(1, 24)])  # (replicate, g * 4 + bin)
    got = np.zeros_like(want)
    got[one["__r"] - 1, one["g"] * 4 + one["__bin"]] = one["__count"]
    np.testing.assert_array_equal(got, want)
    if engine == "polars":  # polars' default: queries of POLARS_BATCH replicates
        from calibr._engines import _poisson

        calls = []
        run = _poisson._RUNNERS["polars"]
        monkeypatch.setitem(_poisson._RUNNERS, "polars",
                            lambda *a: calls.append(a[3]) or run(*a))
        monkeypatch.setattr(_poisson, "POLARS_BATCH", 5)
    for batch in (1, 7, None):
        again = table(batch)
        pd.testing.assert_frame_equal(again[["g", "__r", "__bin", "__count"]],
                                      one[["g", "__r", "__bin", "__count"]], check_dtype=False)
        np.testing.assert_allclose(again[["__sp", "__sy"]], one[["__sp", "__sy"]],
                                   rtol=ENGINE_RTOL, atol=0)
    if engine == "polars":
        assert calls[-5:] == [range(1, 6), range(6, 11), range(11, 16), range(16, 21),
                              range(21, 24)]


@pytest.mark.filterwarnings("ignore:log_loss. 2 rows give", "ignore:The metric is NaN")
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("metric,opts,impossible", [
    ("brier", {}, False), ("log_loss", {}, False), ("log_loss", {}, True),
    ("log_loss", {"eps": 1e-3}, True)])
def test_the_scores_on_the_engine_equal_the_pandas_path(engine, metric, opts, impossible,
                                                        monkeypatch):
    """brier and log_loss: per replicate the engine's sums of n (p - y)^2, n log q and
    the count of drawn rows whose q is 0 (the log loss is then inf, a NaN replicate
    as on the pandas path), against the pandas path on the same rows."""
    df = _frame(700)
    if impossible:  # q = 0 on two rows: the log loss of a replicate that draws one is inf
        df.loc[[3, 40], "p"] = [0.0, 1.0]
        df.loc[[3, 40], "y"] = [1, 0]
    with np.errstate(divide="ignore"):
        want = calibr.bootstrap(df["p"], df["y"], metric, n_resamples=30, rng=4,
                                scheme="poisson", row_key=df["id"], **opts)
        monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)  # nothing is collected
        for chunks in (1, 3):
            got = calibr.bootstrap(_source(df, engine, chunks), "y", metric, n_resamples=30,
                                   rng=4, scheme="poisson", row_key="id", **opts)
            _assert_same(got, want)
    if impossible and not opts:  # inf where a replicate draws an impossible row: NaN
        assert np.isnan(got.bootstrap_distribution).any()
        assert np.isfinite(got.bootstrap_distribution).any()


# --------------------------------------------------------------------------
# summarise(confidence_level=..., scheme="poisson")


def _grouped_frame(n: int = 900, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    df = pd.DataFrame({"g": gen.integers(0, 4, n), "p": gen.random(n),
                       "id": gen.permutation(n).astype(np.int64) * 7 - 100})
    df["y"] = (gen.random(n) < df["p"]).astype(np.int64)
    df["h"] = gen.choice(["a", "b"], n)
    df.loc[5, "g"] = 9  # a group of one row: a replicate may draw none of it (NaN)
    df.loc[[8, 30, 31], "p"] = np.nan  # na_rm drops these; their keys stay keys
    return df


POISSON_METRICS = ["ece", "mce", "brier", "log_loss", calibr.metric("ece", bins=7, right=False)]


@pytest.mark.filterwarnings("ignore:summarise. the metric", "ignore:The metric is NaN")
def test_summarise_poisson_is_the_bootstrap_of_each_group():
    """pandas: each group's bounds are bootstrap(scheme="poisson") of its rows with
    their keys and the call's one seed (docs/bootstrap.md, "In the verbs")."""
    df = _grouped_frame()
    out = calibr.summarise(df, "p", "y", by="g", metrics=POISSON_METRICS, confidence_level=0.9,
                           n_resamples=25, rng=3, scheme="poisson", row_key="id", na_rm=True,
                           ci_method="basic")
    at_positions = calibr.summarise(df, "p", "y", by="g", metrics="ece", confidence_level=0.9,
                                    n_resamples=25, rng=3, scheme="poisson", na_rm=True)
    for i, g in enumerate(sorted(df["g"].unique())):
        rows = df[(df["g"] == g) & df["p"].notna()]
        for name, (metric, opts) in {"ece": ("ece", {}), "brier": ("brier", {}),
                                     "log_loss": ("log_loss", {}),
                                     "ece(bins=7, right=False)": ("ece", dict(bins=7,
                                                                              right=False))
                                     }.items():
            with np.errstate(invalid="ignore"):
                res = calibr.bootstrap(rows["p"], rows["y"], metric, confidence_level=0.9,
                                       n_resamples=25, rng=3, scheme="poisson",
                                       row_key=rows["id"], method="basic", **opts)
            np.testing.assert_array_equal(out.loc[i, [f"{name}_low", f"{name}_high"]]
                                          .to_numpy(float), tuple(res.confidence_interval))
        res = calibr.bootstrap(rows["p"], rows["y"], "ece", confidence_level=0.9,
                               n_resamples=25, rng=3, scheme="poisson",
                               row_key=rows.index.to_numpy())  # default: the positions
        np.testing.assert_array_equal(at_positions.loc[i, ["ece_low", "ece_high"]]
                                      .to_numpy(float), tuple(res.confidence_interval))
    assert np.isnan(out.loc[4, "ece_low"])  # the one-row group abstains


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("by", ["g", ["h", "g"], None])
def test_summarise_poisson_on_the_engine_equals_the_pandas_path(engine, by, monkeypatch):
    df = _grouped_frame()
    kw = dict(metrics=POISSON_METRICS, confidence_level=0.9, n_resamples=25, rng=3,
              scheme="poisson", row_key="id", na_rm=True, by=by)
    with warnings.catch_warnings(record=True) as want_warned:
        warnings.simplefilter("always")
        want = calibr.summarise(df, "p", "y", **kw)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)  # nothing is collected
    for chunks in (1, 3):
        with warnings.catch_warnings(record=True) as got_warned:
            warnings.simplefilter("always")
            got = calibr.summarise(_source(df, engine, chunks), "p", "y", **kw).to_pandas()
        assert list(got.columns) == list(want.columns)
        if by == ["h", "g"]:
            pd.testing.assert_frame_equal(got[by], want[by], check_dtype=False)
            got, want_n = got.drop(columns=by), want.drop(columns=by)
        else:
            want_n = want
        np.testing.assert_allclose(got.to_numpy(float), want_n.to_numpy(float),
                                   rtol=ENGINE_RTOL, atol=0)
        # the one-row group's NaN replicates: the same warnings, naming the group
        assert sorted(str(w.message) for w in got_warned) == sorted(
            str(w.message) for w in want_warned)
    # one per metric column, naming the one-row group (g=9; with h, one of them)
    assert (len(want_warned) == 5) == (by is not None)


@pytest.mark.parametrize("engine", ENGINES)
def test_summarise_poisson_two_log_losses_and_an_impossible_row(engine, monkeypatch):
    """Two log losses (eps and none) in one call, each from its own sums; a row of
    q 0 in group 1: its replicates that draw it are NaN without eps (the interval
    abstains), finite with eps; the MCE of the same cells; as the pandas path."""
    df = _grouped_frame(600)
    df.loc[df.index[df["g"] == 1][:1], ["p", "y"]] = [0.0, 1]
    kw = dict(metrics=["log_loss", calibr.metric("log_loss", eps=0.01), "mce"],
              confidence_level=0.9, n_resamples=30, rng=8, scheme="poisson", row_key="id",
              na_rm=True, by="g")
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.simplefilter("ignore")
        want = calibr.summarise(df, "p", "y", **kw)
        monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)  # nothing is collected
        got = calibr.summarise(_source(df, engine), "p", "y", **kw).to_pandas()
    assert np.isnan(want.loc[1, "log_loss_low"])
    assert np.isfinite(want.loc[1, "log_loss(eps=0.01)_low"])
    np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), rtol=ENGINE_RTOL,
                               atol=0)


@pytest.mark.parametrize("engine", ENGINES)
def test_summarise_poisson_refuses_a_group_na_rm_empties_before_resampling(engine,
                                                                          monkeypatch):
    """A group that na_rm empties: refused by the point summary, as on the pandas
    path, before any replicate is computed."""
    from calibr._engines import _poisson

    df = _grouped_frame(300)
    df.loc[df["g"] == 2, "p"] = np.nan
    kw = dict(metrics=["ece"], confidence_level=0.9, n_resamples=5, rng=3, scheme="poisson",
              row_key="id", na_rm=True, by="g")
    with pytest.raises(InputError, match="no complete observations: na_rm=True dropped all"):
        calibr.summarise(df, "p", "y", **kw)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    monkeypatch.setattr(_poisson, "replicate_sums", lambda *a, **k: pytest.fail("resampled"))
    with pytest.raises(InputError, match="no complete observations in a group: na_rm=True "
                                         "dropped all its rows"):
        calibr.summarise(_source(df, engine), "p", "y", **kw)


@pytest.mark.parametrize("engine", ENGINES)
def test_summarise_poisson_collects_what_the_engine_does_not_resample(engine, monkeypatch):
    """Another metric (skce), BCa, tests: the pandas path on the collected rows,
    under the collect rule (refused above it)."""
    df = _grouped_frame(300)
    df.loc[5, "g"] = 0  # no one-row group: the SKCE needs 2 rows
    kw = dict(confidence_level=0.9, n_resamples=10, rng=3, scheme="poisson", row_key="id",
              na_rm=True, by="g")
    for extra in (dict(metrics=["ece", "skce"]), dict(metrics="ece", ci_method="bca")):
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the one-row group's NaN
            want = calibr.summarise(df, "p", "y", **kw, **extra)
            got = calibr.summarise(_source(df, engine), "p", "y", **kw, **extra).to_pandas()
        pd.testing.assert_frame_equal(got, want, check_dtype=False)
    monkeypatch.setattr(_lazy, "MAX_COLLECT_ROWS", 100)
    with pytest.raises(InputError, match="calibr.summarise on .* collects its rows"):
        calibr.summarise(_source(df, engine), "p", "y", metrics=["ece", "skce"], **kw)


@pytest.mark.parametrize("change,kwargs,match", [
    (None, dict(row_key="id"), r"`row_key` keys the rows of `scheme = \"poisson\"`"),
    (None, dict(scheme="poisson"), r"`scheme = \"poisson\"` resamples the rows of the "
                                   "intervals of `confidence_level`, and there are none"),
    (None, dict(scheme="poisson", confidence_level=0.9, rng=2**64),
     r"`rng` must be a seed below 2\*\*64"),
    (None, dict(scheme="poisson", confidence_level=0.9, row_key="nope"),
     "`row_key` must name one column of `data`; got 'nope'"),
    ("float", dict(scheme="poisson", confidence_level=0.9, row_key="id"),
     "`row_key` must be a vector of integers"),
    ("dup", dict(scheme="poisson", confidence_level=0.9, row_key="id"),
     "`row_key` must identify each row: 1 value repeats an earlier one"),
])
def test_summarise_poisson_bad_input(change, kwargs, match):
    df = _grouped_frame(100)
    if change == "float":
        df["id"] = df["id"].astype(float)
    elif change == "dup":
        df.loc[7, "id"] = df.loc[3, "id"]
    with pytest.raises(InputError, match=match):
        calibr.summarise(df, "p", "y", by="g", n_resamples=5, na_rm=True, **kwargs)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("change,kwargs,match", [
    (None, dict(row_key=None), r"`row_key` is needed for `scheme = \"poisson\"` on a.* "
                               "integer column of `data`"),
    (None, dict(row_key="nope"), "`row_key` must name a column of `data` other than `y`"),
    ("float", dict(row_key="id"), "`row_key` must name a column of integers .* 'id' holds "
                                  "Float64"),
    (None, dict(row_key="id", rng=2**64), r"`rng` must be a seed below 2\*\*64"),
    ("null", dict(row_key="id"), "`row_key` must not contain missing values; 1 missing.$"),
    ("dup", dict(row_key="id"), "`row_key` must identify each row: 1 value repeats an "
                                "earlier one.$"),
])
def test_summarise_poisson_bad_input_on_the_engine(engine, change, kwargs, match, monkeypatch):
    df = _grouped_frame(200)
    if change == "float":
        df["id"] = df["id"].astype(float)
    elif change == "null":
        df["id"] = df["id"].astype("Int64").mask(np.arange(200) == 4)
    elif change == "dup":
        df.loc[7, "id"] = df.loc[3, "id"]
    src = _source(df, engine)
    ran = []
    if change is None or change == "float":  # refused before any query
        monkeypatch.setattr(_lazy, "_collect", lambda lf: ran.append(lf))
    with pytest.raises(InputError, match=match):
        calibr.summarise(src, "p", "y", by="g", confidence_level=0.9, n_resamples=5,
                         scheme="poisson", na_rm=True, **kwargs)
    assert ran == []


# --------------------------------------------------------------------------
# the driver's reduction of the engine's cells (calibr/_engines/_poisson.py)

#: The engine's cells of 2 groups x 3 replicates, 4 bins, in no order; by hand:
#: group 0, replicate 1: bins 0 and 2, gaps |0 - 0.25 / 2| = 0.125 and
#: |1 - 0.625| = 0.375, so ECE (2 * 0.125 + 0.375) / 3, MCE 0.375, Brier
#: (0.03125 + 0.140625) / 3, log loss 0.75 / 3; replicate 2 draws none of it
#: (no cell); replicate 3: a cell of count 0 (as Spark returns it) and bin 3 of
#: gap |1 - 0.875|, a drawn row of q 0 (log loss inf: NaN). Group 1: replicate 1
#: only a cell of count 0 (NaN); replicate 2 gaps |1 - 0.25| = 0.75 and
#: |0.5 - 0.875| = 0.375 of 2 rows each. A cell of no group (-1) is skipped.
CELLS = pd.DataFrame(
    [  # g, r, bin, count, sp, sy, sb, sl0, sz0
        (0, 1, 2, 1.0, 0.625, 1.0, 0.140625, -0.25, 0.0),
        (1, 2, 0, 2.0, 0.5, 2.0, 0.5, -1.5, 0.0),
        (0, 3, 1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        (-1, 1, 0, 8.0, 4.0, 0.0, 1.0, -3.0, 1.0),
        (0, 1, 0, 2.0, 0.25, 0.0, 0.03125, -0.5, 0.0),
        (1, 1, 3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        (0, 3, 3, 4.0, 3.5, 4.0, 0.5, -0.75, 1.0),
        (1, 2, 3, 2.0, 1.75, 1.0, 0.75, -1.0, 0.0)],
    columns=["g", "__r", "__bin", "__count", "__sp", "__sy", "__sb", "__sl0", "__sz0"])
NAN = np.nan
CELL_VALUES = {
    "ece": [[0.625 / 3, NAN, 0.125], [NAN, 0.5625, NAN]],
    "mce": [[0.375, NAN, 0.125], [NAN, 0.75, NAN]],
    "brier": [[0.171875 / 3, NAN, 0.125], [NAN, 0.3125, NAN]],
    "log_loss": [[0.25, NAN, NAN], [NAN, 0.625, NAN]]}


@pytest.mark.parametrize("chunk", [None, 1])
def test_the_driver_reduces_the_cells_as_worked_by_hand(chunk, monkeypatch):
    """ECE, MCE, Brier and log loss per (group, replicate) from the engine's cells,
    all groups and replicates at once (in one chunk, and in chunks of one
    (group, replicate) each): the values worked by hand; NaN where a replicate
    draws no row of the group, or a row of q 0 (log loss); no warning."""
    from calibr._engines import _poisson

    if chunk is not None:
        monkeypatch.setattr(_poisson, "REDUCE_CHUNK", chunk)
    wanted = [("ece", "ece", None), ("mce", "mce", None), ("brier", "brier", None),
              ("log_loss", "log_loss", 0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _poisson.reduce_cells(CELLS, CELLS["g"].to_numpy(), 2, 3, wanted)
        scores = _poisson.reduce_cells(  # a query without bins: no sums of p and y
            CELLS.drop(columns=["__sp", "__sy"]), CELLS["g"].to_numpy(), 2, 3, wanted[2:])
    assert list(got) == ["ece", "mce", "brier", "log_loss"]
    for name, want in CELL_VALUES.items():
        np.testing.assert_array_equal(got[name], np.array(want), err_msg=name)
    for name in ("brier", "log_loss"):
        np.testing.assert_array_equal(scores[name], got[name], err_msg=name)


def test_the_driver_reads_the_cells_in_chunks(monkeypatch):
    """Chunks of REDUCE_CHUNK cells, or of one cell per (group, replicate) if that
    is more (each chunk's sums are arrays of that length)."""
    from calibr._engines import _poisson

    assert _poisson.REDUCE_CHUNK == 2**22
    assert _poisson.cell_chunks(8, 6) == [(0, 8)]
    assert _poisson.cell_chunks(0, 6) == []
    assert _poisson.cell_chunks(10**7, 10) == [(0, 2**22), (2**22, 2**23), (2**23, 10**7)]
    assert _poisson.cell_chunks(2**23 + 1, 2**23) == [(0, 2**23), (2**23, 2**23 + 1)]
    monkeypatch.setattr(_poisson, "REDUCE_CHUNK", 1)
    assert _poisson.cell_chunks(10, 6) == [(0, 6), (6, 10)]
