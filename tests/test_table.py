"""calibr.table.calibration_table: the per-bin table behind ece() and mce()."""

from __future__ import annotations

import copy
import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from conftest import layout
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.binned import bin_of_oracle
from tolerances import ORACLE_ATOL, ORACLE_RTOL

import calibr
from calibr import InputError
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions
from calibr.table import TABLE_COLUMNS, calibration_table, wilson_interval

DIGITS = [f"p_{k}" for k in range(10)]
Z = NormalDist().inv_cdf(0.975)


def weighted_gap(t):
    return float((t["n"] * t["gap"]).sum() / t["n"].sum())


# --------------------------------------------------------------------------
# the Wilson interval, against hand-worked values


def test_wilson_hand_worked():
    # R: prop.test(3, 10, correct = FALSE)$conf.int -> 0.1077913 0.6032219
    lo, hi = wilson_interval([3], [10])
    assert lo[0] == pytest.approx(0.1077913, abs=5e-8)
    assert hi[0] == pytest.approx(0.6032219, abs=5e-8)
    # R: prop.test(5, 10, correct = FALSE)$conf.int -> 0.2365931 0.7634069
    lo, hi = wilson_interval([5], [10])
    assert lo[0] == pytest.approx(0.2365931, abs=5e-8)
    assert hi[0] == pytest.approx(0.7634069, abs=5e-8)
    # closed forms at the ends: x = 0 gives [0, z^2 / (n + z^2)], x = n gives [n / (n + z^2), 1]
    lo, hi = wilson_interval([0, 4], [4, 4])
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(Z**2 / (4 + Z**2), rel=1e-14)
    assert lo[1] == pytest.approx(4 / (4 + Z**2), rel=1e-14)
    # x = 1, n = 1 at 90%: lower = 1 / (1 + z^2) with z = qnorm(0.95)
    z90 = NormalDist().inv_cdf(0.95)
    lo, hi = wilson_interval([1], [1], confidence_level=0.9)
    assert lo[0] == pytest.approx(1 / (1 + z90**2), rel=1e-14) and hi[0] == 1.0


@pytest.mark.r
def test_wilson_against_r_prop_test(rref):
    import rpy2.robjects as ro

    for x, n, level in [(0, 1, 0.95), (1, 3, 0.95), (7, 19, 0.9), (19, 19, 0.99), (40, 137, 0.8)]:
        ci = ro.r(f"prop.test({x}, {n}, conf.level = {level}, correct = FALSE)$conf.int")
        lo, hi = wilson_interval([x], [n], level)
        assert lo[0] == pytest.approx(ci[0], rel=1e-9, abs=1e-12)
        assert hi[0] == pytest.approx(ci[1], rel=1e-9, abs=1e-12)


def _wilson_by_hand(x, n, level=0.95):
    """Wilson (1927): (x + z^2/2 -+ z sqrt(x (n - x) / n + z^2 / 4)) / (n + z^2)."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    half = z * math.sqrt(x * (n - x) / n + z * z / 4)
    return (x + z * z / 2 - half) / (n + z * z), (x + z * z / 2 + half) / (n + z * z)


def test_wilson_interval_takes_arrays_of_up_to_three_dimensions():
    """wilson_interval() takes counts of 0 to 3 dimensions (``n`` a scalar or of the same
    shape) and refuses 4-D arrays, naming the argument."""
    lo1, hi1 = _wilson_by_hand(1, 4)
    lo3, hi3 = _wilson_by_hand(3, 4)
    for shape in ((2,), (1, 2), (1, 1, 2)):
        x = np.array([1.0, 3.0]).reshape(shape)
        for successes, n in ((x, 4), (x, np.full(shape, 4.0)), (1.0, np.full(shape, 4.0))):
            lo, hi = wilson_interval(successes, n)
            assert lo.shape == hi.shape == shape
        lo, hi = wilson_interval(x, np.full(shape, 4.0))
        assert lo.ravel() == pytest.approx([lo1, lo3], rel=1e-14)
        assert hi.ravel() == pytest.approx([hi1, hi3], rel=1e-14)
    four = np.ones((1, 1, 1, 2))
    for successes, n, name in ((four, 4, "successes"), (1, 4 * four, "n")):
        with pytest.raises(InputError, match=rf"^`{name}` must be a count or an array of "
                                             r"counts; got an array of shape \(1, 1, 1, 2\)\.$"):
            wilson_interval(successes, n)


def test_wilson_interval_refuses_one_bad_count_among_good_ones():
    """One non-finite count, or one ``n`` of 0, among good ones is refused at its position;
    an ``n`` of 1 is positive and allowed."""
    with pytest.raises(InputError, match=r"^`successes` must be finite numbers; 1 value does "
                                         r"not, the first at position 1 \(nan\)\.$"):
        wilson_interval([1, math.nan], [2, 2])
    with pytest.raises(InputError, match=r"^`n` must be finite numbers; 1 value does not, the "
                                         r"first at position 0 \(inf\)\.$"):
        wilson_interval([1, 1], [math.inf, 2])
    with pytest.raises(InputError, match=r"^`n` must be positive; 1 value does not, the first "
                                         r"at position 2 \(0\.0\)\.$"):
        wilson_interval([0, 1, 0], [2, 1, 0])
    lo, hi = wilson_interval([0, 1], [2, 1])  # n = 1 is allowed
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(_wilson_by_hand(0, 2)[1], rel=1e-14)
    assert lo[1] == pytest.approx(_wilson_by_hand(1, 1)[0], rel=1e-14)


# --------------------------------------------------------------------------
# layout


def test_columns_and_values_of_a_small_table():
    t = calibration_table([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], bins=2)
    assert list(t.columns) == list(TABLE_COLUMNS)
    assert t["bin"].tolist() == [1, 2]
    assert t["lower"].tolist() == [0.0, 0.5] and t["upper"].tolist() == [0.5, 1.0]
    assert t["n"].tolist() == [2, 2]
    np.testing.assert_allclose(t["mean_confidence"], [0.15, 0.85], rtol=1e-15)
    assert t["observed_frequency"].tolist() == [0.0, 1.0]
    np.testing.assert_allclose(t["gap"], [0.15, 0.15], rtol=1e-14)
    assert t["ci_lower"].tolist()[0] == 0.0 and t["ci_upper"].tolist()[1] == 1.0
    assert t["ci_upper"][0] == pytest.approx(Z**2 / (2 + Z**2), rel=1e-14)
    assert t["bin"].dtype == np.int64 and t["n"].dtype == np.int64
    assert isinstance(t.index, pd.RangeIndex)


def test_only_nonempty_bins_and_r_breaks():
    # 0 goes to the first bin; a value on a break goes to the lower bin
    p = np.array([0.0, 0.3, 0.1 * 3, 0.7, 1.0])
    t = calibration_table(p, [0, 1, 0, 1, 1], bins=10)
    assert t["bin"].tolist() == [1, 3, 7, 10]
    assert t["n"].tolist() == [1, 2, 1, 1]
    edges = np.linspace(0, 1, 11)
    np.testing.assert_array_equal(t["lower"], edges[t["bin"] - 1])
    np.testing.assert_array_equal(t["upper"], edges[t["bin"]])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 80), bins=st.integers(1, 20),
       grid=st.sampled_from([None, 5, 10, 20]))
def test_membership_and_consistency_binary(seed, n, bins, grid):
    rng = np.random.default_rng(seed)
    p = rng.random(n) if grid is None else rng.integers(0, grid + 1, n) / grid
    y = rng.integers(0, 2, n)
    t = calibration_table(p, y, bins=bins)
    # bin membership is the readable oracle's
    b = bin_of_oracle(p, bins) + 1
    counts = np.bincount(b, minlength=bins + 1)
    assert t["bin"].tolist() == [i for i in range(1, bins + 1) if counts[i] > 0]
    assert t["n"].tolist() == [int(counts[i]) for i in t["bin"]]
    for row in t.itertuples():
        members = b == row.bin
        assert row.mean_confidence == pytest.approx(p[members].mean(), rel=ORACLE_RTOL)
        assert row.observed_frequency == pytest.approx(y[members].mean(), rel=ORACLE_RTOL)
        assert row.ci_lower <= row.observed_frequency <= row.ci_upper
    assert t["gap"].tolist() == (t["observed_frequency"] - t["mean_confidence"]).abs().tolist()
    # consistent with the metrics
    assert weighted_gap(t) == pytest.approx(calibr.ece(p, y, bins=bins),
                                            rel=ORACLE_RTOL, abs=ORACLE_ATOL)
    assert t["gap"].max() == calibr.mce(p, y, bins=bins)


def test_classwise_multiclass_consistency_per_class():
    df = load_digits_predictions()
    g = df[df["model"] == "naive_bayes"]
    t = calibration_table(g[DIGITS], g["y"], bins=15, classes=range(10))
    assert list(t.columns) == ["class", *TABLE_COLUMNS]
    assert t["class"].tolist() == sorted(t["class"].tolist())
    assert set(t["class"]) == set(range(10))
    per_class = t.groupby("class").apply(weighted_gap, include_groups=False)
    assert (t.groupby("class")["n"].sum() == len(g)).all()
    # classwise ECE = mean over classes of each class's n-weighted mean gap
    assert float(per_class.mean()) == pytest.approx(
        calibr.ece(g[DIGITS], g["y"], bins=15, classes=range(10)), rel=ORACLE_RTOL)
    # each class's weighted gap is the binary ECE of its column against 1{y = k}
    for k in range(10):
        assert per_class[k] == pytest.approx(
            calibr.ece(g[f"p_{k}"], (g["y"] == k).astype(int), bins=15), rel=ORACLE_RTOL)
    assert t["gap"].max() == calibr.mce(g[DIGITS], g["y"], bins=15, classes=range(10))


def test_confidence_multiclass_consistency():
    df = load_digits_predictions()
    g = df[df["model"] == "random_forest"]
    t = calibration_table(g[DIGITS], g["y"], type="confidence", classes=range(10))
    assert list(t.columns) == list(TABLE_COLUMNS)
    assert t["n"].sum() == len(g)
    assert weighted_gap(t) == pytest.approx(
        calibr.ece(g[DIGITS], g["y"], type="confidence", classes=range(10)), rel=ORACLE_RTOL)
    assert t["gap"].max() == calibr.mce(g[DIGITS], g["y"], type="confidence", classes=range(10))
    # the forest is underconfident: it is right more often than it says in most bins
    assert (t["observed_frequency"] > t["mean_confidence"]).mean() > 0.5


def test_class_labels_come_from_the_input():
    p = pd.DataFrame({"cat": [0.7, 0.2], "dog": [0.3, 0.8]})
    t = calibration_table(p, ["cat", "dog"], bins=2)
    assert t["class"].tolist() == ["cat", "cat", "dog", "dog"]
    t = calibration_table(p.to_numpy(), [1, 2], bins=2)  # R codes: classes 1..K
    assert t["class"].tolist() == [1, 1, 2, 2]


def test_na_rm_and_input_untouched():
    p = np.array([0.1, np.nan, 0.8, 0.9])
    y = np.array([0, 1, 1, 1])
    before = p.copy()
    t = calibration_table(p, y, bins=2, na_rm=True)
    np.testing.assert_array_equal(p, before)
    assert t["n"].sum() == 3
    with pytest.raises(ValueError, match=r"`p` must not contain missing values"):
        calibration_table(p, y)


# --------------------------------------------------------------------------
# per group


def test_per_group_equals_tables_of_each_group():
    df = load_breast_cancer_predictions()
    before = copy.deepcopy(df)
    t = calibration_table("p", "y", bins=8, data=df.groupby(["model", "fold"]))
    pd.testing.assert_frame_equal(df, before)
    assert list(t.columns) == ["model", "fold", *TABLE_COLUMNS]
    parts = []
    for (m, f), g in df.groupby(["model", "fold"]):
        part = calibration_table(g["p"], g["y"], bins=8)
        part.insert(0, "fold", f)
        part.insert(0, "model", m)
        parts.append(part)
    pd.testing.assert_frame_equal(t, pd.concat(parts, ignore_index=True), check_exact=True)
    # and consistent with summarise per group
    s = calibr.frame.summarise(df.groupby(["model", "fold"]), "p", "y",
                               metrics=[calibr.frame.metric("ece", bins=8),
                                        calibr.frame.metric("mce", bins=8)])
    w = t.groupby(["model", "fold"]).apply(weighted_gap, include_groups=False)
    np.testing.assert_allclose(w.to_numpy(), s["ece(bins=8)"].to_numpy(), rtol=ORACLE_RTOL)
    np.testing.assert_array_equal(t.groupby(["model", "fold"])["gap"].max().to_numpy(),
                                  s["mce(bins=8)"].to_numpy())


def test_per_group_multiclass_prefix_and_pipe():
    df = load_digits_predictions()
    t = df.groupby("model").pipe((calibration_table, "data"), None, "y", p_prefix="p_", bins=5)
    assert list(t.columns) == ["model", "class", *TABLE_COLUMNS]
    for m, g in df.groupby("model"):
        part = calibration_table(g[DIGITS], g["y"], bins=5, classes=range(10))
        got = t[t["model"] == m].drop(columns="model").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, part, check_exact=True)
    ungrouped = df.pipe((calibration_table, "data"), None, "y", p_prefix="p_", bins=5)
    pd.testing.assert_frame_equal(
        ungrouped, calibration_table(df[DIGITS], df["y"], bins=5, classes=range(10)))


def test_per_group_observed_false_leaves_out_empty_groups():
    df = pd.DataFrame({"k": pd.Categorical(["a", "a", "b"], categories=["a", "b", "c"]),
                       "p": [0.2, 0.7, 0.4], "y": [0, 1, 1]})
    t = calibration_table("p", "y", bins=2, data=df.groupby("k", observed=False))
    assert t["k"].tolist() == ["a", "a", "b"]
    assert isinstance(t["k"].dtype, pd.CategoricalDtype)
    empty = calibration_table("p", "y", data=df.iloc[:0].groupby("k", observed=True))
    assert list(empty.columns) == ["k", *TABLE_COLUMNS] and len(empty) == 0


def test_per_group_time_bins_leave_out_the_empty_bin():
    # pandas numbers the empty daily bin in ngroup(); the table has no row for it
    rng = np.random.default_rng(3)
    days = ["2020-01-01"] * 10 + ["2020-01-03"] * 10 + ["2020-01-04"] * 10
    p = rng.random(30)
    df = pd.DataFrame({"t": pd.to_datetime(days), "p": p, "y": (rng.random(30) < p).astype(int)})
    t = calibration_table("p", "y", bins=4, data=df.groupby(pd.Grouper(key="t", freq="D")))
    assert list(t.columns) == ["t", *TABLE_COLUMNS]
    assert sorted(t["t"].dt.day.unique()) == [1, 3, 4]
    for day, g in df.groupby("t"):
        got = t[t["t"] == day].drop(columns="t").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, calibration_table(g["p"], g["y"], bins=4),
                                      check_exact=True)


def test_empty_grouped_multiclass_table_has_a_class_column_when_classwise():
    """The table of a grouping without an observed group has the columns it would have with
    groups: a ``class`` column for the classwise form of a multiclass ``p`` only, none
    for the confidence form or a binary ``p``."""
    df = pd.DataFrame({"k": pd.Series([], dtype=object), "p_a": pd.Series([], dtype=float),
                       "p_b": pd.Series([], dtype=float), "y": pd.Series([], dtype=object)})
    grouped = df.groupby("k", observed=True)
    classwise = calibration_table(None, "y", data=grouped, p_prefix="p_")
    assert list(classwise.columns) == ["k", "class", *TABLE_COLUMNS] and len(classwise) == 0
    confidence = calibration_table(None, "y", data=grouped, p_prefix="p_", type="confidence")
    assert list(confidence.columns) == ["k", *TABLE_COLUMNS] and len(confidence) == 0
    binary = df[["k", "p_a"]].assign(y=pd.Series([], dtype=float)).groupby("k", observed=True)
    for type_ in ("classwise", "confidence"):
        table = calibration_table("p_a", "y", data=binary, type=type_)
        assert list(table.columns) == ["k", *TABLE_COLUMNS]


def test_grouped_table_rows_keep_their_group_across_kernel_batches(monkeypatch):
    """When the groups' bin sums are made in several batches (GROUP_MEMORY made small: two
    groups of 2 bins a batch), each row still belongs to its group. By hand: group g has
    the one row p = (g + 1) / 10 with y = 1, in bin 1 of 2."""
    from calibr._kernels import grouped

    monkeypatch.setattr(grouped, "GROUP_MEMORY", 24 * 2 * 2)
    df = pd.DataFrame({"g": [4, 3, 2, 1, 0], "p": [0.5, 0.4, 0.3, 0.2, 0.1], "y": 1})
    for table in (calibration_table("p", "y", data=df.groupby("g"), bins=2),
                  calibration_table("p", "y", data=df.groupby("g", as_index=False), bins=2)):
        assert table["g"].tolist() == [0, 1, 2, 3, 4]
        assert table["mean_confidence"].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5],
                                                                   abs=1e-15)
        assert table["bin"].tolist() == [1] * 5 and table["n"].tolist() == [1] * 5


# --------------------------------------------------------------------------
# errors


def test_errors():
    with pytest.raises(ValueError, match=r"`confidence_level` must be a number strictly "
                       r"between 0 and 1; got 1\.5\."):
        calibration_table([0.5], [1], confidence_level=1.5)
    with pytest.raises(ValueError, match=r"`confidence_level` must be .* got True\."):
        calibration_table([0.5], [1], confidence_level=True)
    with pytest.raises(ValueError, match=r"`bins` must be a single positive integer; got 0\."):
        calibration_table([0.5], [1], bins=0)
    with pytest.raises(ValueError, match=r"`type` must be one of 'classwise', 'confidence', "
                       r"'top-label'; got 'top'\."):
        calibration_table([0.5], [1], type="top")
    with pytest.raises(ValueError, match=r"`p_prefix` needs `data`: it selects columns of a data "
                       r"frame\."):
        calibration_table(None, [1], p_prefix="p_")
    with pytest.raises(ValueError, match=r"^`na_rm` must be True or False; got 1\.$"):
        calibration_table([0.5], [1], na_rm=1)
    with pytest.raises(ValueError, match=r"^`na_rm` must be True or False; got 'no'\.$"):
        calibration_table("p", "y", na_rm="no", data=pd.DataFrame({"p": [0.5], "y": [1]}))
    df = pd.DataFrame({"g": ["a", "b"], "p": [0.5, 1.5], "y": [1, 0]})
    with pytest.raises(ValueError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, the first "
                       r"at position 0 \(1\.5\)\. \[group g='b'\]$"):
        calibration_table("p", "y", data=df.groupby("g"))
    with pytest.raises(ValueError, match=r"The group key 'bin' has the name of a column of the "
                       r"table; rename it\."):
        calibration_table("p", "y", data=df.assign(p=0.5).groupby("g").pipe(
            lambda gb: gb.obj.rename(columns={"g": "bin"}).groupby("bin")))
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame or DataFrameGroupBy"):
        calibration_table("p", "y", data={"p": [0.5]})


def test_a_table_of_data_that_is_not_a_frame_is_a_type_error():
    """calibration_table(data=...) refuses a list, an ndarray or a Series with an
    InputTypeError naming ``data`` and what it must be."""
    for data, name in (([[0.2, 0]], "list"), (np.zeros((2, 2)), "ndarray"),
                       (pd.Series([0.2, 0.7]), "Series")):
        with pytest.raises(calibr.InputTypeError, match=r"^`data` must be a pandas DataFrame or "
                           rf"DataFrameGroupBy \(df\.groupby\(\.\.\.\)\); got {name}\.$"):
            calibration_table("p", "y", data=data)


# --------------------------------------------------------------------------
# layout of the bundled data's table (the numbers are R's: tests/test_bundled_r.py)


def test_bundled_table_layout(data_regression):
    """Column names and dtypes, and the rows' keys (model, class, bin) in order;
    never a number (see ``layout`` in tests/conftest.py)."""
    bc = load_breast_cancer_predictions()
    binary = calibration_table("p", "y", data=bc.groupby("model"))
    assert not binary.isna().any().any() and math.isclose(binary["n"].sum(), len(bc))
    dg = load_digits_predictions()
    classwise = calibration_table(None, "y", data=dg.groupby("model"), p_prefix="p_", bins=5)
    confidence = calibration_table(None, "y", data=dg.groupby("model"), p_prefix="p_",
                                   type="confidence")
    data_regression.check({
        "breast_cancer": layout(binary, ["model", "bin"]),
        "digits_classwise": layout(classwise, ["model", "class", "bin"]),
        "digits_confidence": layout(confidence, ["model", "bin"]),
    })


# --------------------------------------------------------------------------
# ci_level and na_rm reach every row


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.99])
def test_ci_level_sets_the_interval_of_every_row(level):
    """Each row's interval is the Wilson interval at ci_level (the closed form,
    docs/definitions.md "The per-bin table"), with and without data=; a level
    other than 0.95 gives other bounds wherever 0 < x < n."""
    df = load_breast_cancer_predictions()
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    for t in (calibration_table(df["p"], df["y"], bins=12, confidence_level=level),
              calibration_table("p", "y", bins=12, confidence_level=level,
                                data=df.groupby("model"))):
        n = t["n"].to_numpy(dtype=float)
        x = np.round(t["observed_frequency"].to_numpy() * n)  # the successes, exactly
        phat = x / n
        center = (phat + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z / (1 + z**2 / n) * np.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2))
        lower = np.where(x == 0, 0.0, center - half)
        upper = np.where(x == n, 1.0, center + half)
        np.testing.assert_allclose(t["ci_lower"], lower, rtol=ORACLE_RTOL, atol=ORACLE_ATOL)
        np.testing.assert_allclose(t["ci_upper"], upper, rtol=ORACLE_RTOL, atol=ORACLE_ATOL)
        inner = (x > 0) & (x < n)
        assert inner.sum() >= 5
        default = calibration_table(df["p"], df["y"], bins=12) if "model" not in t else (
            calibration_table("p", "y", bins=12, data=df.groupby("model")))
        if level != 0.95:
            assert (t["ci_upper"] != default["ci_upper"])[inner].all()


def test_na_rm_drops_a_row_with_one_missing_probability_column():
    """With data= and na_rm=True, a NaN in one probability column drops its row,
    as calibration_table(p, y, na_rm=True) on each group's rows does."""
    df = load_digits_predictions()
    df.loc[[3, 500, 1100, 2000], "p_4"] = np.nan  # one column of each row only
    df.loc[[7], "p_0"] = np.nan
    t = calibration_table(None, "y", data=df.groupby("model"), p_prefix="p_", bins=5,
                          na_rm=True)
    for m, g in df.groupby("model"):
        want = calibration_table(g[DIGITS], g["y"], bins=5, classes=range(10), na_rm=True)
        got = t[t["model"] == m].drop(columns="model").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        complete = int(g[DIGITS].notna().all(axis=1).sum())
        assert (got.groupby("class")["n"].sum() == complete).all()
    whole = calibration_table(None, "y", data=df, p_prefix="p_", bins=5, na_rm=True)
    pd.testing.assert_frame_equal(
        whole, calibration_table(df[DIGITS], df["y"], bins=5, classes=range(10), na_rm=True),
        check_exact=True)


@pytest.mark.parametrize("emptied", [["a"], ["a", "b"]])
def test_the_error_of_groups_emptied_by_na_rm_names_the_first(emptied):
    """Of the groups whose rows na_rm=True drops entirely, the table's error names the
    first; without them the table is made."""
    p = [math.nan if g in emptied else v for g, v in zip("aabbcc", [0.2, 0.7] * 3, strict=True)]
    df = pd.DataFrame({"g": list("aabbcc"), "p": p, "y": [0, 1] * 3})
    with pytest.raises(InputError, match=r"^`p` and `y` have no complete observations: "
                                         r"na_rm=True dropped all 2\. \[group g='a'\]$"):
        calibration_table("p", "y", data=df.groupby("g"), na_rm=True)
    table = calibration_table("p", "y", data=df[~df["g"].isin(emptied)].groupby("g"), na_rm=True)
    assert table["n"].sum() == 2 * (3 - len(emptied))


# --------------------------------------------------------------------------
# levels, counts and the bound on bins x K


def test_levels_up_to_the_largest_double_below_one():
    level = 1 - 2**-53  # 1 - (1 - level)/2 rounds to 1.0, whose quantile is infinite
    t = calibration_table([0.1, 0.2, 0.9], [0, 0, 1], bins=2, confidence_level=level)
    z = -NormalDist().inv_cdf(2**-54)  # the same quantile, from the lower tail
    assert math.isfinite(z) and z > 8
    lo, hi = wilson_interval(t["observed_frequency"] * t["n"], t["n"], level)
    np.testing.assert_array_equal(t["ci_lower"], lo)
    np.testing.assert_array_equal(t["ci_upper"], hi)
    assert t[["ci_lower", "ci_upper"]].notna().all().all()
    n = 2.0
    assert hi[0] == pytest.approx(z**2 / (n + z**2), rel=1e-12)  # x = 0: [0, z^2 / (n + z^2)]
    # the levels that worked before give the same numbers as before
    for lv in (0.5, 0.9, 0.95, 0.99, 1 - 2**-52):
        assert calibr.table._z(lv) == NormalDist().inv_cdf(1 - (1 - lv) / 2)


@pytest.mark.parametrize("bad, shown", [
    (1.5, r"1\.5"), (0, "0"), (1, "1"), (np.nan, "nan"), ("0.9", "'0\\.9'"), (True, "True"),
    (10**400, "an integer of 401 digits"), ([0.9], r"\[0\.9\]"),
], ids=["1.5", "0", "1", "nan", "str", "True", "10**400", "list"])
def test_levels_are_checked_in_both_functions(bad, shown):
    with pytest.raises(calibr.InputError, match=rf"^`confidence_level` must be a number "
                       rf"strictly between 0 and 1; got {shown}\.$"):
        calibration_table([0.5], [1], confidence_level=bad)
    with pytest.raises(calibr.InputError, match=rf"^`confidence_level` must be a number "
                       rf"strictly between 0 and 1; got {shown}\.$"):
        wilson_interval([1], [2], bad)


def test_wilson_interval_checks_its_counts():
    with pytest.raises(calibr.InputError, match=r"^`successes` must lie in \[0, n\]; 1 value does "
                       r"not, the first at position 1 \(3\.0\)\.$"):
        wilson_interval([1, 3], [2, 2])
    with pytest.raises(calibr.InputError, match=r"^`n` must be positive; 1 value does not, the "
                       r"first at position 0 \(0\.0\)\.$"):
        wilson_interval([0], [0])
    with pytest.raises(calibr.InputError, match=r"^`successes` must be finite numbers; 1 value "
                       r"does not, the first at position 0 \(nan\)\.$"):
        wilson_interval([np.nan], [2])
    with pytest.raises(calibr.InputError, match=r"^`successes` and `n` must have shapes that "
                       r"broadcast; got \(2,\) and \(3,\)\.$"):
        wilson_interval([1, 1], [2, 2, 2])
    with pytest.raises(calibr.InputTypeError, match=r"^`n` must hold real numbers; 1 value is "
                       r"not, the first at position 0 \('2' of type str\)\.$"):
        wilson_interval([1], ["2"])
    with pytest.raises(calibr.InputTypeError, match=r"^`successes` must be an array-like "):
        wilson_interval((v for v in [1]), [2])
    lo, hi = wilson_interval(3, 10)  # scalars and broadcasting still work
    assert lo.shape == () and float(lo) == pytest.approx(0.1077913, abs=5e-8)
    lo, hi = wilson_interval([[0], [3]], 10)
    assert lo.shape == (2, 1)


def test_table_bounds_bins_times_classes(monkeypatch):
    from calibr._kernels import binned

    def no_kernel(*args, **kwargs):  # pragma: no cover - reached only if the bound is missing
        raise AssertionError("the per-bin kernels ran before the bound was checked")

    msg = r"^`bins` times the number of classes must be at most 10,000,000 for type = "
    p = np.full((20, 1000), 1e-3)
    y = np.ones(20, dtype=np.int64)
    monkeypatch.setattr(binned, "bin_stats", no_kernel)  # 24 GB if it ran
    with pytest.raises(calibr.InputError, match=msg):
        calibration_table(p, y, bins=10**6)
    frame = pd.DataFrame(p, columns=[f"p_{k}" for k in range(1000)]).assign(y=0, g=[0, 1] * 10)
    with pytest.raises(calibr.InputError, match=msg):
        calibration_table(None, "y", bins=10**6, data=frame.groupby("g"), p_prefix="p_")
    monkeypatch.undo()
    t = calibration_table(p, y, bins=10**6, type="confidence")
    assert t["n"].tolist() == [20]


def test_multiindex_columns_and_as_index_false_with_a_key_named_size():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"size": rng.choice(["s", "m"], 40), "p": rng.random(40),
                       "y": rng.integers(0, 2, 40)})
    want = calibration_table("p", "y", data=df.groupby("size"))
    got = calibration_table("p", "y", data=df.groupby("size", as_index=False))
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    mi = df.copy()
    mi.columns = pd.MultiIndex.from_tuples([("key", "size"), ("pred", "p"), ("pred", "y")])
    got = calibration_table(("pred", "p"), ("pred", "y"), data=mi.groupby([("key", "size")]))
    assert list(got.columns[1:]) == list(TABLE_COLUMNS)
    pd.testing.assert_frame_equal(got.iloc[:, 1:], want.iloc[:, 1:], check_exact=True,
                                  check_column_type=False)
    assert got.iloc[:, 0].tolist() == want["size"].tolist()


def test_grouped_table_bounds_the_bins_of_the_classwise_form_only(monkeypatch):
    """The grouped path checks the bound on bins x K for the classwise form of a multiclass
    ``p`` only: with the bound made 20, 7 bins of 3 classes (21) are refused for the
    classwise form and taken for the confidence form, and 21 bins of a binary ``p`` are
    not bounded by it; summarise() checks the same bound."""
    import calibr._input.params as params

    monkeypatch.setattr(params, "MAX_BIN_CELLS", 20)
    rng = np.random.default_rng(5)
    pm = rng.dirichlet(np.ones(3), size=12)
    df = pd.DataFrame({"g": np.repeat([1, 2], 6), "p_0": pm[:, 0], "p_1": pm[:, 1],
                       "p_2": pm[:, 2], "y": rng.integers(0, 3, size=12), "p": pm[:, 0],
                       "y2": rng.integers(0, 2, size=12)})
    grouped = df.groupby("g")
    with pytest.raises(InputError, match=r"got bins = 7 with K = 3 classes \(21 bins\)"):
        calibration_table(None, "y", data=grouped, p_prefix="p_", bins=7)
    table = calibration_table(None, "y", data=grouped, p_prefix="p_", bins=7, type="confidence")
    assert table["n"].sum() == 12 and "class" not in table
    assert calibration_table(None, "y", data=grouped, p_prefix="p_", bins=6)["n"].sum() == 36
    for type_ in ("classwise", "confidence"):
        binary = calibration_table("p", "y2", data=grouped, bins=21, type=type_)
        assert binary["n"].sum() == 12
    # and summarise(), whose all-groups kernels check the same bound
    with pytest.raises(InputError, match=r"got bins = 7 with K = 3 classes \(21 bins\)"):
        calibr.summarise(grouped, ["p_0", "p_1", "p_2"], "y", classes=range(3),
                         metrics=[calibr.metric("ece", bins=7)])
    got = calibr.summarise(grouped, ["p_0", "p_1", "p_2"], "y", classes=range(3),
                           metrics={"e": calibr.metric("ece", bins=7, type="confidence")})["e"]
    assert got[0] == calibr.ece(pm[:6], df["y"][:6], bins=7, type="confidence", classes=range(3))


def test_the_consistency_band_takes_1000_resamples_by_default():
    """``n_resamples`` of the consistency band defaults to 1000 (the docstring of
    calibration_table): the default's band is that of n_resamples=1000, the same
    seed, and not that of 1001."""
    rng = np.random.default_rng(5)
    p = rng.random(3000)  # bins of ~1000 rows: frequencies of many values, so the
    y = (rng.random(3000) < p).astype(int)  # band's quantiles move with one resample more
    band = ["consistency_lower", "consistency_upper"]
    default = calibration_table(p, y, bins=3, consistency=0.9, rng=7)[band]
    pd.testing.assert_frame_equal(
        default, calibration_table(p, y, bins=3, consistency=0.9, n_resamples=1000, rng=7)[band])
    assert not default.equals(
        calibration_table(p, y, bins=3, consistency=0.9, n_resamples=1001, rng=7)[band])


def test_a_consistency_draw_above_the_row_sum_is_the_last_class():
    """calibr/table.py, _resampled_frequencies: a matrix row draws label j where
    cumsum(p)[j-1] <= u < cumsum(p)[j], and the last class where u lies above the
    row's sum (rounding). A row of sum 0.5 makes that case half the draws; the
    draws are the generator's, repeated here: the row (integers), then u (random)."""
    from calibr.table import _resampled_frequencies

    p = np.array([[0.25, 0.25]])
    for seed in range(8):
        gen = np.random.default_rng(seed)
        gen.integers(0, 1, size=1)
        u = gen.random(1)[0]
        label = 0 if u < 0.25 else 1  # u >= 0.5: above the sum, the last class
        freq = _resampled_frequencies(p, False, np.array([0.0, 1.0]), True, "classwise",
                                      np.random.default_rng(seed))
        assert freq.tolist() == [[float(label == 0)], [float(label == 1)]]
