"""calibr.frame.summarise: metrics per pandas group, as a tidy DataFrame."""

from __future__ import annotations

import copy
import functools
import re

import numpy as np
import pandas as pd
import pytest
from conftest import layout
from hypothesis import example, given, settings
from hypothesis import strategies as st

import calibr
from calibr import InputError
from calibr._registry import METRICS
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions
from calibr.frame import Metric, metric, summarise

#: The registry's names as the messages list them (a tuple's repr), as a pattern.
_METRIC_NAMES = re.escape(repr(tuple(METRICS)))

DIGITS = [f"p_{k}" for k in range(10)]


def binary_frame(seed=0, n=300, groups=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    return pd.DataFrame({
        "model": rng.choice(list(groups), n),
        "fold": rng.integers(1, 4, n),
        "p": p,
        "y": (rng.random(n) < p ** 1.5).astype(int),
    })


def multiclass_frame(seed=0, n=300, k=4, labels=None):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), n)
    labels = list(range(k)) if labels is None else labels
    df = pd.DataFrame(p, columns=[f"p_{c}" for c in labels])
    df.insert(0, "y", [labels[i] for i in rng.integers(0, k, n)])
    df.insert(0, "model", rng.choice(["a", "b"], n))
    return df


def per_group(df, keys, fn):
    """The reference: call the metric on each group's rows (pandas' own groups)."""
    return {key: fn(sub) for key, sub in df.groupby(keys)}


# --------------------------------------------------------------------------
# equal to calling each metric on each group


def test_binary_groups_equal_per_group_calls():
    df = binary_frame()
    out = summarise(df.groupby("model"), p="p", y="y",
                    metrics=["ece", "mce", metric("mce", bins=2)])
    assert list(out.columns) == ["model", "ece", "mce", "mce(bins=2)"]
    assert isinstance(out.index, pd.RangeIndex)
    for _, row in out.iterrows():
        g = df[df["model"] == row["model"]]
        assert row["ece"] == calibr.ece(g["p"], g["y"])
        assert row["mce"] == calibr.mce(g["p"], g["y"])
        assert row["mce(bins=2)"] == calibr.mce(g["p"], g["y"], bins=2)


def test_two_keys_equal_per_group_calls():
    df = binary_frame(seed=1, n=500)
    out = summarise(df.groupby(["model", "fold"]), "p", "y", metrics=["ece", "mce"])
    ref = per_group(df, ["model", "fold"], lambda g: (calibr.ece(g["p"], g["y"]),
                                                      calibr.mce(g["p"], g["y"])))
    assert len(out) == len(ref)
    for _, row in out.iterrows():
        assert (row["ece"], row["mce"]) == ref[(row["model"], row["fold"])]


@pytest.mark.parametrize("type_", ["classwise", "confidence"])
def test_multiclass_prefix_equal_per_group_calls(type_):
    df = multiclass_frame(seed=2)
    cols = [f"p_{k}" for k in range(4)]
    out = summarise(df.groupby("model"), y="y", p_prefix="p_",
                    metrics={"e": metric("ece", type=type_, bins=5),
                             "m": metric("mce", type=type_)})
    for _, row in out.iterrows():
        g = df[df["model"] == row["model"]]
        assert row["e"] == calibr.ece(g[cols], g["y"], bins=5, type=type_, classes=range(4))
        assert row["m"] == calibr.mce(g[cols], g["y"], type=type_, classes=range(4))


def test_multiclass_column_list_matches_labels_to_names():
    df = multiclass_frame(seed=3, labels=["cat", "dog", "eel"], k=3)
    cols = ["p_cat", "p_dog", "p_eel"]
    df = df.rename(columns=dict(zip(cols, ["cat", "dog", "eel"], strict=True)))
    out = summarise(df.groupby("model"), p=["cat", "dog", "eel"], y="y")
    for _, row in out.iterrows():
        g = df[df["model"] == row["model"]]
        assert row["ece"] == calibr.ece(g[["cat", "dog", "eel"]], g["y"])
        assert row["mce"] == calibr.mce(g[["cat", "dog", "eel"]], g["y"])


def test_column_list_with_r_codes_needs_classes():
    # as documented for `p`: numeric labels match numbered columns by their numbers (the
    # rule of p_prefix), not R's 1-based codes by position...
    df = load_digits_predictions().assign(y1=lambda d: d["y"] + 1)
    with pytest.raises(ValueError, match=r"^`y` must be one of the class labels \(0, 1, 2, 3, "
                       r"4, 5, 6, 7, 8, 9\); 180 values do not, the first at position 9 \(10\)\. "
                       r"\[group model='logistic'\]$"):
        summarise(df.groupby("model"), p=DIGITS, y="y1")
    # ...unless classes= gives them
    ones = summarise(df.groupby("model"), p=DIGITS, y="y1", classes=range(1, 11))
    zeros = summarise(df.groupby("model"), p=DIGITS, y="y", classes=range(10))
    pd.testing.assert_frame_equal(ones, zeros, check_exact=True)


def test_numbered_column_list_follows_the_rule_of_p_prefix():
    """p=["p_0", ...] with numeric labels: the label k is the class of p_k, the same
    frame as p_prefix="p_" (docs/cli.md, "Column lists"), with the columns in any
    order; names that could be read two ways are matched as names."""
    df = load_digits_predictions()
    want = summarise(df.groupby("model"), p_prefix="p_", y="y")
    pd.testing.assert_frame_equal(summarise(df.groupby("model"), p=DIGITS, y="y"), want,
                                  check_exact=True)
    shuffled = DIGITS[5:] + DIGITS[:5]
    pd.testing.assert_frame_equal(summarise(df.groupby("model"), p=shuffled, y="y"),
                                  summarise(df.groupby("model"), p=shuffled, y="y",
                                            classes=[*range(5, 10), *range(5)]),
                                  check_exact=True)
    for names in (["a-0", "a-1", "a-2"], ["p_00", "p_01", "p_02"]):
        three = pd.DataFrame({names[0]: [0.2, 0.5], names[1]: [0.3, 0.25],
                              names[2]: [0.5, 0.25], "y": [0, 1]})
        with pytest.raises(ValueError, match=r"^`y` must be one of the class labels \("
                           + re.escape(", ".join(repr(n) for n in names))):
            summarise(three, p=names, y="y")


def test_bundled_digits_equal_per_group_calls():
    df = load_digits_predictions()
    out = summarise(df.groupby(["model", "fold"]), y="y", p_prefix="p_",
                    metrics=["ece", metric("ece", type="confidence", bins=15)])
    for _, row in out.iterrows():
        g = df[(df["model"] == row["model"]) & (df["fold"] == row["fold"])]
        assert row["ece"] == calibr.ece(g[DIGITS], g["y"], classes=range(10))
        assert row["ece(type='confidence', bins=15)"] == calibr.ece(
            g[DIGITS], g["y"], type="confidence", bins=15, classes=range(10))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    n_groups=st.integers(1, 6),
    bins=st.integers(1, 12),
    grid=st.sampled_from([None, 4, 10]),
)
def test_property_equal_per_group_calls(seed, n, n_groups, bins, grid):
    """Random groups, values on bin edges (grid) included."""
    rng = np.random.default_rng(seed)
    p = rng.random(n) if grid is None else rng.integers(0, grid + 1, n) / grid
    df = pd.DataFrame({"g": rng.integers(0, n_groups, n), "p": p,
                       "y": rng.integers(0, 2, n).astype(bool)})
    out = summarise(df.groupby("g"), "p", "y",
                    metrics=[metric("ece", bins=bins), metric("mce", bins=bins)])
    for _, row in out.iterrows():
        sub = df[df["g"] == row["g"]]
        assert row[f"ece(bins={bins})"] == calibr.ece(sub["p"], sub["y"], bins=bins)
        assert row[f"mce(bins={bins})"] == calibr.mce(sub["p"], sub["y"], bins=bins)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 50),
    k=st.integers(2, 5),
    bins=st.integers(1, 8),
    type_=st.sampled_from(["classwise", "confidence"]),
    observed=st.booleans(),
    dropna=st.booleans(),
)
@example(seed=0, n=1, k=3, bins=1, type_="classwise", observed=False, dropna=True)  # all keys NaN
def test_property_multiclass_categorical_keys(seed, n, k, bins, type_, observed, dropna):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), n)
    p[rng.random(n) < 0.2] = np.eye(k)[0]  # ties and exact 0/1 values
    df = pd.DataFrame(p, columns=[f"p_{c}" for c in "abcde"[:k]])
    df["y"] = rng.choice(list("abcde"[:k]), n)
    keys = rng.choice(["u", "v", None], n)
    df["g"] = pd.Categorical(keys, categories=["u", "v", "w"])
    gb = df.groupby("g", observed=observed, dropna=dropna)
    out = summarise(gb, y="y", p_prefix="p_",
                    metrics=[metric("ece", bins=bins, type=type_), metric("mce", bins=bins,
                                                                         type=type_)])
    cols = [f"p_{c}" for c in "abcde"[:k]]
    assert len(out) == len(gb.size())
    for i, (_, sub) in enumerate(gb):
        if len(sub) == 0:
            assert out.iloc[i, 1:].isna().all()
            continue
        assert out.iloc[i, 1] == calibr.ece(sub[cols], sub["y"], bins=bins, type=type_,
                                            classes=list("abcde"[:k]))
        assert out.iloc[i, 2] == calibr.mce(sub[cols], sub["y"], bins=bins, type=type_,
                                            classes=list("abcde"[:k]))


def test_kernel_metrics_join():
    # no skip: the kernel metrics are part of calibr, so a broken import must fail here
    df = binary_frame(seed=4, n=120)
    out = summarise(df.groupby("model"), "p", "y",
                    metrics=["skce", "mmce", metric("skce", estimator="biased", bandwidth=0.5)])
    for _, row in out.iterrows():
        g = df[df["model"] == row["model"]]
        assert row["skce"] == calibr.skce(g["p"], g["y"])
        assert row["mmce"] == calibr.mmce(g["p"], g["y"])
        assert row["skce(estimator='biased', bandwidth=0.5)"] == (
            calibr.skce(g["p"], g["y"], estimator="biased", bandwidth=0.5))


def test_metric_names_are_the_public_functions():
    # every registered metric by its name, the public function of that name (the
    # registry's own test pins which names there are: tests/test_registry.py)
    assert calibr.frame.METRICS == {name: getattr(calibr, name) for name in METRICS}
    assert {"ece", "mce", "skce", "mmce"} <= set(calibr.frame.METRICS)  # R's four
    with pytest.raises(TypeError):  # a read-only view of the registry
        calibr.frame.METRICS["brier"] = len


def test_ungrouped_dataframe_gives_one_row():
    df = binary_frame()
    out = summarise(df, "p", "y")
    assert list(out.columns) == ["ece", "mce"]
    assert out.index.equals(pd.RangeIndex(1))
    assert out.loc[0, "ece"] == calibr.ece(df["p"], df["y"])
    assert out.loc[0, "mce"] == calibr.mce(df["p"], df["y"])


def test_r_help_page_example():
    """The example of r_reference/calibrRef/man/mce.Rd: summarise(mce = mce(p, y, bins = 2))
    gives 0.15."""
    predictions = pd.DataFrame({"p": [0.10, 0.20, 0.80, 0.90], "y": [0, 0, 1, 1]})
    out = summarise(predictions, p="p", y="y", mce=metric("mce", bins=2))
    assert list(out.columns) == ["mce"]
    assert out.loc[0, "mce"] == pytest.approx(0.15, rel=1e-12)


def _groups_frame():
    """Three groups of ten rows (binary, seeded) and a 3-class version of them."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, 30)
    y = (rng.uniform(size=30) < p).astype(int)
    pm = rng.dirichlet(np.ones(3), size=30)
    ym = rng.integers(0, 3, size=30)
    return pd.DataFrame({"g": np.repeat(["a", "b", "c"], 10), "p": p, "y": y,
                         "q0": pm[:, 0], "q1": pm[:, 1], "q2": pm[:, 2], "ym": ym})


_BINARY_SPECS = [("ece", {}), ("mce", {"bins": 4}),
                 *[("skce", {"estimator": e, "bandwidth": h})
                   for e in ("biased", "uq", "ul") for h in (0.5, "median")],
                 ("mmce", {}), ("mmce", {"bandwidth": 0.3})]
_MULTICLASS_SPECS = [("ece", {"type": t}) for t in ("classwise", "confidence")] + [
    ("skce", {"estimator": e, "bandwidth": h, "type": t})
    for e in ("biased", "uq", "ul") for h in (0.5, "median")
    for t in ("canonical", "classwise", "confidence")] + [("mmce", {})]


@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "multiclass"])
def test_summarise_all_groups_at_once_equals_each_groups_call(multiclass):
    """summarise()'s all-groups kernels give, for every metric, estimator, bandwidth and
    form, the bits of the metric called on the group's rows: negative uq and ul
    estimates are kept, only the biased estimate is clamped at 0. One metric a call: an
    error of the kernels on one metric sends every metric to the per-group loop, which
    would hide the others' wrong values."""
    df = _groups_frame()
    if multiclass:
        p, y, specs = ["q0", "q1", "q2"], "ym", _MULTICLASS_SPECS
    else:
        p, y, specs = "p", "y", _BINARY_SPECS
    extra = {"classes": range(3)} if multiclass else {}
    negatives = 0
    for name, opts in specs:
        got = calibr.summarise(df.groupby("g"), p, y, metrics={"m": calibr.metric(name, **opts)},
                               **extra)["m"]
        for r, key in enumerate("abc"):
            rows = df[df["g"] == key]
            want = getattr(calibr, name)(rows[p], rows[y], **opts, **extra)
            assert got[r] == want, (name, opts, key)
            negatives += want < 0
    assert negatives > 0  # some uq and ul estimates are negative: kept as they are


def test_summarise_skce_of_a_perfect_group_is_zero():
    """A group whose p are its labels has residuals 0, so its biased SKCE is exactly 0; the
    other group's is skce() of its rows."""
    df = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "p": [0.0, 1.0, 1.0, 0.2, 0.7, 0.4],
                       "y": [0, 1, 1, 0, 1, 1]})
    biased = calibr.metric("skce", estimator="biased")
    got = calibr.summarise(df.groupby("g"), "p", "y", metrics={"s": biased})["s"].tolist()
    assert got[0] == 0.0 and 0.0 < got[1] < 1.0
    assert got[1] == calibr.skce([0.2, 0.7, 0.4], [0, 1, 1], estimator="biased")


# --------------------------------------------------------------------------
# metric specifications and column names


def test_ways_to_give_metrics():
    df = binary_frame()
    gb = df.groupby("model")
    a = summarise(gb, "p", "y", metrics={"e": "ece", "m2": metric("mce", bins=2)})
    b = summarise(gb, "p", "y", e="ece", m2=metric("mce", bins=2))
    c = summarise(gb, "p", "y", e=calibr.ece, m2=functools.partial(calibr.mce, bins=2))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    d = summarise(gb, "p", "y", metrics=[calibr.ece, functools.partial(calibr.mce, bins=2)])
    assert list(d.columns) == ["model", "ece", "mce(bins=2)"]
    assert list(summarise(gb, "p", "y", metrics="mce").columns) == ["model", "mce"]
    # default: ece and mce; metrics= and keywords combine, in that order
    assert list(summarise(gb, "p", "y").columns) == ["model", "ece", "mce"]
    e = summarise(gb, "p", "y", metrics=["ece"], m2=metric("mce", bins=2))
    assert list(e.columns) == ["model", "ece", "m2"]


def test_custom_callable_gets_validated_arrays():
    seen = []

    def share_positive(p, y, **kw):
        seen.append((type(p), p.dtype, kw))
        return float(np.mean(y))

    df = binary_frame()
    out = summarise(df.groupby("model"), "p", "y", metrics={"rate": share_positive})
    ref = df.groupby("model")["y"].mean()
    np.testing.assert_array_equal(out["rate"].to_numpy(), ref.to_numpy())
    assert all(t is np.ndarray and d == np.float64 and kw == {} for t, d, kw in seen)

    seen.clear()
    mc = multiclass_frame()
    summarise(mc, y="y", p_prefix="p_", metrics={"x": share_positive})
    assert seen[0][2] == {"classes": range(4)}


def test_metric_spec_helpers():
    assert metric("mce", bins=2) == Metric("mce", {"bins": 2})
    assert metric("ece").default_name == "ece"
    assert metric("ece", type="confidence", bins=5).default_name == (
        "ece(type='confidence', bins=5)")
    assert metric(calibr.mce, bins=3).default_name == "mce(bins=3)"


def test_metric_and_test_specs_are_read_only():
    """Metric and CalibrationTest specs are values: their fields cannot be reassigned, and
    equal specs compare equal."""
    import dataclasses

    from calibr.frame import CalibrationTest, Metric, metric, test

    spec = metric("mce", bins=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.func = "ece"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.options = {}
    assert spec == Metric("mce", {"bins": 2}) and spec.default_name == "mce(bins=2)"
    tspec = test("consistency", n_resamples=50)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tspec.method = "skce"
    with pytest.raises(dataclasses.FrozenInstanceError):
        tspec.options = {}
    assert tspec == CalibrationTest("consistency", {"n_resamples": 50})


def test_a_metric_spec_with_weights_is_refused():
    """A metric spec cannot carry ``weights``: they are one per row of the whole data, and
    summarise() would pass the same weights to every group."""
    with pytest.raises(InputError, match=r"(?i)the option 'weights' of metric 'ece' "):
        metric("ece", weights=[1, 2, 1])
    assert metric("ece", bins=3).options == {"bins": 3}


def test_two_probability_columns_are_a_multiclass_p():
    """Two named probability columns are a multiclass ``p`` of K = 2, as in ece()."""
    df = pd.DataFrame({"a": [0.2, 0.7, 0.5, 0.9], "b": [0.8, 0.3, 0.5, 0.1],
                       "y": ["a", "b", "a", "a"]})
    got = calibr.summarise(df, p=["a", "b"], y="y", metrics=["ece"])["ece"].iloc[0]
    assert got == calibr.ece(df[["a", "b"]], df["y"])


def test_integer_column_labels_name_columns():
    """Integer column labels (0 and 1) name columns, for ``p`` and for ``y``."""
    df = pd.DataFrame({0: [0.2, 0.7, 0.4], 1: [0, 1, 1]})
    got = calibr.summarise(df, p=0, y=1, metrics=["ece"])["ece"].iloc[0]
    assert got == calibr.ece([0.2, 0.7, 0.4], [0, 1, 1])


# --------------------------------------------------------------------------
# pandas' grouping semantics


def keyed_frame():
    return pd.DataFrame({
        "k": pd.Categorical(["a", "a", "b", None, "b", "a"], categories=["a", "b", "c"]),
        "j": [1.0, np.nan, 1.0, 2.0, 1.0, 1.0],
        "p": [0.1, 0.5, 0.3, 0.2, 0.9, 0.4],
        "y": [0, 1, 1, 0, 1, 0],
    })


@pytest.mark.parametrize("observed", [True, False])
@pytest.mark.parametrize("dropna", [True, False])
@pytest.mark.parametrize("sort", [True, False])
@pytest.mark.parametrize("keys", [["k"], ["k", "j"], ["j"]])
def test_observed_dropna_sort_follow_pandas(observed, dropna, sort, keys):
    df = keyed_frame()
    gb = df.groupby(keys, observed=observed, dropna=dropna, sort=sort)
    out = summarise(gb, "p", "y", metrics=["ece"])
    # the groups, their keys and their order are pandas' own
    ref = gb["p"].mean().reset_index()
    pd.testing.assert_frame_equal(out[keys], ref[keys])
    # empty (unobserved) groups give NaN, as pandas' mean does; the others the metric
    sizes = gb.size().to_numpy()
    assert out["ece"].isna().to_numpy().tolist() == (sizes == 0).tolist()
    for i, (_, sub) in enumerate(gb):
        if len(sub):
            assert out.loc[i, "ece"] == calibr.ece(sub["p"], sub["y"])


def test_missing_key_rows_are_dropped_or_grouped_as_pandas():
    df = keyed_frame()
    kept = summarise(df.groupby("j"), "p", "y")  # dropna=True: the NaN key's row is left out
    assert kept["j"].tolist() == [1.0, 2.0]
    both = summarise(df.groupby("j", dropna=False), "p", "y")
    assert both["j"].isna().tolist() == [False, False, True]
    assert both.loc[2, "ece"] == calibr.ece([0.5], [1])
    # a bad value in a dropped row is not validated (it belongs to no group)
    df.loc[1, "p"] = 7.0
    summarise(df.groupby("j"), "p", "y")


def test_categorical_key_dtype_is_kept():
    out = summarise(keyed_frame().groupby("k", observed=False), "p", "y")
    assert isinstance(out["k"].dtype, pd.CategoricalDtype)
    assert out["k"].tolist() == ["a", "b", "c"]


def test_as_index_false_and_other_groupers():
    df = binary_frame()
    ref = summarise(df.groupby("model"), "p", "y")
    pd.testing.assert_frame_equal(summarise(df.groupby("model", as_index=False), "p", "y"), ref)
    by_series = summarise(df.groupby(df["model"].rename("m")), "p", "y")
    assert list(by_series.columns) == ["m", "ece", "mce"]
    np.testing.assert_array_equal(by_series["ece"].to_numpy(), ref["ece"].to_numpy())
    by_level = summarise(df.set_index("model").groupby(level="model"), "p", "y")
    pd.testing.assert_frame_equal(by_level, ref)


def day_frame():
    """30 rows on 2020-01-01, -03 and -04: the daily bin of 2020-01-02 is empty."""
    rng = np.random.default_rng(7)
    days = ["2020-01-01"] * 10 + ["2020-01-03"] * 10 + ["2020-01-04"] * 10
    p = rng.random(30)
    return pd.DataFrame({"t": pd.to_datetime(days), "m": rng.choice(["a", "b"], 30), "p": p,
                         "y": (rng.random(30) < p).astype(int)})


@pytest.mark.parametrize("how", ["key", "index", "with_m"])
def test_time_bins_with_an_empty_bin_follow_pandas(how):
    # pandas numbers the empty time bins in ngroup() (unlike unobserved categories)
    df = day_frame()
    if how == "key":
        gb = df.groupby(pd.Grouper(key="t", freq="D"))
    elif how == "index":
        gb = df.set_index("t").groupby(pd.Grouper(freq="D"))
    else:
        gb = df.groupby([pd.Grouper(key="t", freq="D"), "m"])
    out = summarise(gb, "p", "y", metrics=["ece", "mmce"])
    ref = gb["p"].mean()
    keys = list(ref.index.names)
    pd.testing.assert_frame_equal(out[keys], ref.reset_index()[keys])
    # the empty day is a row of NaN, as in pandas' mean(); every other row the metric
    assert out["ece"].isna().tolist() == ref.isna().tolist()
    assert out["mmce"].isna().tolist() == ref.isna().tolist()
    if how == "key":
        assert out["t"].dt.day.tolist() == [1, 2, 3, 4]
        assert out["ece"].isna().tolist() == [False, True, False, False]
    for i, (_, sub) in enumerate(gb):
        if len(sub):
            assert out.loc[i, "ece"] == calibr.ece(sub["p"], sub["y"])
            assert out.loc[i, "mmce"] == calibr.mmce(sub["p"], sub["y"])


def test_row_groups_accepts_both_numberings_of_ngroup():
    from calibr._input.groups import _row_groups

    sizes = np.array([2, 0, 1])
    # over all groups (time bins) and over the observed ones (categories): the same rows
    over_all = pd.Series([0, 2, 0, -1])
    over_observed = pd.Series([0, 1, 0, -1])
    np.testing.assert_array_equal(_row_groups(over_all, sizes), [0, 2, 0, -1])
    np.testing.assert_array_equal(_row_groups(over_observed, sizes), [0, 2, 0, -1])
    np.testing.assert_array_equal(_row_groups(pd.Series([np.nan, 1.0, 0.0, 0.0]), sizes),
                                  [-1, 2, 0, 0])
    with pytest.raises(RuntimeError, match=r"^calibr could not match pandas' groups to their "
                       r"rows\.$"):
        _row_groups(pd.Series([0, 1, 1, 1]), sizes)


def test_empty_grouped_frame_gives_no_rows():
    df = binary_frame().iloc[:0]
    out = summarise(df.groupby("model"), "p", "y")
    assert list(out.columns) == ["model", "ece", "mce"]
    assert len(out) == 0


def test_an_unobserved_group_before_the_failing_one_is_not_the_error():
    """The error of bad input names the observed group that fails, not an empty
    (unobserved) category before it."""
    key = pd.Categorical(["b", "b", "c", "c"], categories=["a", "b", "c"])
    df = pd.DataFrame({"g": key, "p": [0.2, 0.7, 1.5, 0.3], "y": [0, 1, 1, 0]})
    with pytest.raises(calibr.InputError, match=r"group g='c'\]$"):
        calibr.summarise(df.groupby("g", observed=False), "p", "y", metrics=["ece"])


def test_calibr_own_groupings_keep_only_observed_combinations():
    """The groupings calibr makes itself (by_columns) keep only the observed combinations:
    an unused category of a key column makes no group."""
    from calibr._input.groups import by_columns

    frame = pd.DataFrame({"k": pd.Categorical(["x", "x", "y"], categories=["x", "y", "z"]),
                          "p": [0.1, 0.2, 0.3]})
    assert by_columns(frame, ["k"]).ngroups == 2


# --------------------------------------------------------------------------
# the input is untouched; .pipe(); na_rm


def test_input_untouched_and_pipe():
    df = keyed_frame()
    df.loc[2, "p"] = np.nan
    before = copy.deepcopy(df)
    gb = df.groupby(["k", "j"], observed=False, dropna=False)
    out = gb.pipe(summarise, p="p", y="y", na_rm=True)
    pd.testing.assert_frame_equal(df, before)
    pd.testing.assert_frame_equal(out, summarise(gb, "p", "y", na_rm=True))
    out.loc[0, "ece"] = -1.0  # a fresh frame: writing to it changes nothing
    pd.testing.assert_frame_equal(df, before)
    mc = multiclass_frame()
    before = mc.copy()
    mc.pipe(summarise, y="y", p_prefix="p_")
    pd.testing.assert_frame_equal(mc, before)


def test_na_rm_equals_per_group_na_rm():
    df = binary_frame(seed=5, n=200)
    df.loc[[3, 10, 50], "p"] = np.nan
    df.loc[[7, 11], "y"] = np.nan
    out = summarise(df.groupby("model"), "p", "y", na_rm=True)
    for _, row in out.iterrows():
        g = df[df["model"] == row["model"]]
        assert row["ece"] == calibr.ece(g["p"], g["y"], na_rm=True)
        assert row["mce"] == calibr.mce(g["p"], g["y"], na_rm=True)
    with pytest.raises(ValueError, match=r"`p` must not contain missing values; .* \[group "):
        summarise(df.groupby("model"), "p", "y")


def test_na_rm_group_with_no_complete_row_is_an_error():
    df = pd.DataFrame({"g": ["a", "a", "b"], "p": [0.2, 0.3, np.nan], "y": [0, 1, 1]})
    with pytest.raises(
        ValueError,
        match=r"no complete observations: na_rm=True dropped all 1\. \[group g='b'\]",
    ):
        summarise(df.groupby("g"), "p", "y", na_rm=True)


def test_na_rm_drops_a_row_with_one_missing_probability_column():
    """A row of a multiclass p with a missing value in ONE of its columns is
    incomplete: na_rm=True drops it, as the metrics do (docs/definitions.md,
    "Inputs": missing values)."""
    df = multiclass_frame(seed=17, n=160, k=3)
    cols = ["p_0", "p_1", "p_2"]
    df.loc[[4, 40, 77], "p_1"] = np.nan  # one column of the row only
    df.loc[[9], "p_2"] = np.nan
    df.loc[[12], "y"] = np.nan
    for data in (df.groupby("model"), df):
        out = summarise(data, y="y", p_prefix="p_", na_rm=True,
                        metrics=["ece", "mce", "skce", metric("ece", type="confidence")])
        rows = df.groupby("model") if data is not df else [(None, df)]
        for i, (_, g) in enumerate(rows):
            assert out.loc[i, "ece"] == calibr.ece(g[cols], g["y"], classes=range(3),
                                                   na_rm=True)
            assert out.loc[i, "skce"] == calibr.skce(g[cols], g["y"], classes=range(3),
                                                     na_rm=True)
            assert out.loc[i, "ece(type='confidence')"] == calibr.ece(
                g[cols], g["y"], type="confidence", classes=range(3), na_rm=True)
    with pytest.raises(ValueError, match=r"^`p` must not contain missing values; 3 values are "
                       r"missing, the first at row 1, column 1\. Pass na_rm=True to drop "
                       r"incomplete observations\. \[group model='a'\]$"):
        summarise(df.groupby("model"), y="y", p_prefix="p_")


def test_split_sorts_the_canonical_arrays_by_group_with_codes_and_offsets():
    """The group layer's interface for kernels that compute all groups at once:
    group g is rows start[g]:start[g + 1] of the sorted arrays, codes[i] is the
    group of row i, and each slice is exactly the canonical arrays of the group's
    own rows (pandas' order of groups, the frame's order within a group)."""
    from calibr._input import prepare
    from calibr._input.groups import groups_of, resolve_columns, split

    df = keyed_frame()
    df.loc[4, "p"] = np.nan
    gb = df.groupby(["k", "j"], observed=False, dropna=False)
    groups = groups_of(gb)
    cols = resolve_columns(groups.frame, "p", "y", None, None)
    sp = split(groups, cols, na_rm=True)
    assert sp.binary and sp.k == 1 and sp.classes is None
    assert len(sp.start) == groups.n_groups + 1 and sp.start[0] == 0 and sp.start[-1] == 5
    assert np.all(np.diff(sp.codes) >= 0) and len(sp.codes) == len(sp.p) == len(sp.y)
    seen = []
    for part, (key, sub) in zip(sp.parts(), [(k, s) for k, s in gb if len(s)], strict=True):
        a, b = sp.start[part.g], sp.start[part.g + 1]
        np.testing.assert_array_equal(sp.codes[a:b], part.g)
        want = prepare(sub["p"], sub["y"], na_rm=True)
        np.testing.assert_array_equal(part.p, want.p)
        np.testing.assert_array_equal(part.y, want.y)
        assert all(a == b or (pd.isna(a) and pd.isna(b))
                   for a, b in zip(groups.keys.iloc[part.g], key, strict=True))
        seen.append(part.g)
    assert seen == np.flatnonzero(sp.observed).tolist()
    # errors inside a part's block name the group (and what was computed)
    part = next(iter(sp.parts()))
    with pytest.raises(ValueError, match=r"^boom \[metric 'x'; group k='a', j=1\.0\]$"):
        with part.errors("metric 'x'"):
            raise ValueError("boom")


# --------------------------------------------------------------------------
# class labels from a prefix


def test_prefix_int_labels_match_int_suffixes():
    df = multiclass_frame(seed=6, k=3)  # labels 0, 1, 2; columns p_0, p_1, p_2
    out = summarise(df, y="y", p_prefix="p_")
    assert out.loc[0, "ece"] == calibr.ece(df[["p_0", "p_1", "p_2"]], df["y"], classes=[0, 1, 2])


def test_prefix_string_labels_match_string_suffixes():
    df = multiclass_frame(seed=7, k=3, labels=["cat", "dog", "eel"])
    out = summarise(df, y="y", p_prefix="p_")
    assert out.loc[0, "ece"] == calibr.ece(
        df[["p_cat", "p_dog", "p_eel"]], df["y"], classes=["cat", "dog", "eel"])


def test_prefix_string_digit_labels_stay_strings():
    """Labels '0', '1', '2' (strings) match the suffixes as strings."""
    df = multiclass_frame(seed=8, k=3)
    df["y"] = df["y"].astype(str)
    out = summarise(df, y="y", p_prefix="p_")
    ints = multiclass_frame(seed=8, k=3)
    assert out.loc[0, "ece"] == summarise(ints, y="y", p_prefix="p_").loc[0, "ece"]


def test_prefix_with_categorical_and_float_labels():
    df = multiclass_frame(seed=9, k=3)
    ref = summarise(df, y="y", p_prefix="p_")
    cat = df.assign(y=pd.Categorical(df["y"]))
    pd.testing.assert_frame_equal(summarise(cat, y="y", p_prefix="p_"), ref)
    flt = df.assign(y=df["y"].astype(float))
    pd.testing.assert_frame_equal(summarise(flt, y="y", p_prefix="p_"), ref)


def test_prefix_columns_in_frame_order_and_classes_override():
    df = multiclass_frame(seed=10, k=3)
    df = df[["model", "y", "p_2", "p_0", "p_1"]]
    out = summarise(df, y="y", p_prefix="p_")
    assert out.loc[0, "ece"] == calibr.ece(df[["p_2", "p_0", "p_1"]], df["y"], classes=[2, 0, 1])
    # classes= overrides the suffixes (here: 1-based labels for the same columns)
    shifted = df.assign(y=df["y"] + 1)
    out2 = summarise(shifted, y="y", p_prefix="p_", classes=[3, 1, 2])
    assert out2.loc[0, "ece"] == out.loc[0, "ece"]


def test_prefix_numeric_labels_with_word_suffixes_is_an_error():
    df = multiclass_frame(seed=11, k=3, labels=["cat", "dog", "eel"])
    df["y"] = df["y"].map({"cat": 0, "dog": 1, "eel": 2})
    with pytest.raises(
        ValueError,
        match=r"The labels in 'y' are numbers, but the columns with prefix 'p_' name the "
        r"classes 'cat', 'dog', 'eel'; pass classes= to give the label of each column\.",
    ):
        summarise(df, y="y", p_prefix="p_")


# --------------------------------------------------------------------------
# errors, each pinned


def test_errors_on_arguments():
    df = binary_frame()
    gb = df.groupby("model")
    with pytest.raises(ValueError, match=r"`metrics` must name calibr metrics " + _METRIC_NAMES
                       + r" or be callables; got 'ecee'\."):
        summarise(gb, "p", "y", metrics=["ecee"])
    with pytest.raises(ValueError, match=r"^`metrics` must name calibr metrics " + _METRIC_NAMES
                       + r" or be callables or calibr.metric\(...\) specs; got 3\.$"):
        summarise(gb, "p", "y", metrics=[3])
    with pytest.raises(ValueError, match=r"^`metrics` must name calibr metrics " + _METRIC_NAMES
                       + r" or be callables; got 3\.$"):
        summarise(gb, "p", "y", metrics=[Metric(3)])
    with pytest.raises(ValueError, match=r"^`metrics` must be a metric, a list of metrics or a "
                       r"dict of them; got int\.$"):
        summarise(gb, "p", "y", metrics=5)
    with pytest.raises(ValueError, match=r"^`p` must be a column name or a list of column names; "
                       r"got set\.$"):
        summarise(gb, {"p"}, "y")
    with pytest.raises(ValueError, match=r"The metric 'mce\(bns=2\)' has no option 'bns'; "
                       r"its options are bins, type, binning, right\."):
        metric("mce", bns=2)
    with pytest.raises(ValueError, match=r"The option 'classes' of metric 'ece\(classes=.*is set "
                       r"by the data arguments of summarise\(\); pass it there instead\."):
        metric("ece", classes=[0, 1])
    with pytest.raises(ValueError, match=r"Metric column names must be unique; 'ece' appears 2 "
                       r"times\."):
        summarise(gb, "p", "y", metrics=["ece", calibr.ece])
    with pytest.raises(ValueError, match=r"`metrics` must name at least one metric; got none\."):
        summarise(gb, "p", "y", metrics=[])
    with pytest.raises(ValueError, match=r"`p` must name a column of the data; got 'q'\."):
        summarise(gb, "q", "y")
    with pytest.raises(ValueError, match=r"`y` must name a column of the data; got 'label'\."):
        summarise(gb, "p", "label")
    with pytest.raises(ValueError, match=r"`y` must name the label column; got None\."):
        summarise(gb, "p")
    with pytest.raises(ValueError, match=r"`p` must name columns of the data; 'x' is not one\."):
        summarise(gb, ["p", "x"], "y")
    with pytest.raises(ValueError, match=r"^`p_prefix` must be a non-empty string; got ''\.$"):
        summarise(gb, y="y", p_prefix="")
    with pytest.raises(ValueError, match=r"`p` must name one column \(binary\) or at least two"):
        summarise(gb, ["p"], "y")
    with pytest.raises(ValueError, match=r"`p` must name the probability column\(s\), or give "
                       r"`p_prefix`; got None\."):
        summarise(gb, y="y")
    with pytest.raises(ValueError, match=r"Give the probability columns by `p` or by `p_prefix`, "
                       r"not both\."):
        summarise(gb, "p", "y", p_prefix="p")
    with pytest.raises(ValueError, match=r"`p_prefix` must match at least two columns \(one per "
                       r"class\); 'p' matches 1 \('p'\)\."):
        summarise(gb, y="y", p_prefix="p")
    with pytest.raises(ValueError, match=r"`p_prefix` must match at least two columns .*'zz' "
                       r"matches 0\."):
        summarise(gb, y="y", p_prefix="zz")
    with pytest.raises(ValueError, match=r"The label column 'p_y' also starts with `p_prefix` "
                       r"'p_'; list the probability columns with `p` instead\."):
        summarise(multiclass_frame().rename(columns={"y": "p_y"}), y="p_y", p_prefix="p_")
    with pytest.raises(ValueError, match=r"`na_rm` must be True or False; got 'yes'\."):
        summarise(gb, "p", "y", na_rm="yes")
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame or DataFrameGroupBy "
                       r"\(df.groupby\(...\)\); got SeriesGroupBy\."):
        summarise(df.groupby("model")["p"], "p", "y")
    with pytest.raises(ValueError, match=r"^The metric column 'model' has the name of a group "
                       r"key; name it differently with a dict or a keyword argument\.$"):
        summarise(gb, "p", "y", model="ece")
    with pytest.raises(ValueError, match=r"^`na_rm` must be True or False; got 1\.$"):
        summarise(gb, "p", "y", na_rm=1)


_TAKEN = (r"was taken as an output column named {key} \(keyword arguments of summarise\(\) "
          r"that are not its parameters name metric columns\), but {value} is not a calibr "
          r"metric " + _METRIC_NAMES + r", a callable or a calibr.metric\(\.\.\.\) spec")


@pytest.mark.parametrize(("kwargs", "shown", "hint"), [
    ({"prob": "p_0"}, ("'prob'", "'p_0'"), r"; did you mean `p=`\?"),  # an alias
    ({"label": "y"}, ("'label'", "'y'"), r"; did you mean `y=`\?"),
    ({"seed": 1}, ("'seed'", "1"), r"; did you mean `rng=`\?"),
    ({"weight": "w"}, ("'weight'", "'w'"), r"; did you mean `weights=`\?"),  # difflib
    ({"na_rn": True}, ("'na_rn'", "True"), r"; did you mean `na_rm=`\?"),
    ({"resamples": 99}, ("'resamples'", "99"), r"; did you mean `n_resamples=`\?"),
    ({"level": 0.9}, ("'level'", "0.9"), r"; did you mean `confidence_level=`\?"),
    ({"group_by": "model"}, ("'group_by'", "'model'"),
     r"; for metrics per group, pass by='model', or data\.groupby\('model'\) as `data`\."),
    ({"foo": "bar"}, ("'foo'", "'bar'"), r"\."),  # nothing close: no guess
])
def test_a_keyword_that_is_no_metric_says_which_parameter_it_may_mean(kwargs, shown, hint):
    df = pd.DataFrame({"model": ["a", "b", "a"], "p_0": [0.1, 0.9, 0.3], "y": [0, 1, 1]})
    key, value = shown
    args = {"p": "p_0", "y": "y", "ece": "ece", **kwargs}
    if "prob" in kwargs:
        del args["p"]
    written = f"`{next(iter(kwargs))}={value}`"
    with pytest.raises(calibr.InputError, match="^" + re.escape(written) + " "
                       + _TAKEN.format(key=key, value=re.escape(value)) + hint + "$"):
        summarise(df, **args)
    # the same keyword with a metric is a metric column of that name
    out = summarise(df, "p_0", "y", **{next(iter(kwargs)): "mce"})
    assert list(out.columns) == [next(iter(kwargs))]


def test_a_callable_metric_must_return_a_real_number():
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "p": [0.1, 0.9, 0.3, 0.5], "y": [0, 1, 1, 0]})
    for value, shown in [(None, "None (NoneType)"), (1j, "1j (complex)"),
                         (np.array([1.0, 2.0]), "an array of shape (2,) (ndarray)"),
                         (np.array([0.5]), "an array of shape (1,) (ndarray)"),
                         ("0.5", "'0.5' (str)"), (True, "True (bool)"), ([0.5], "[0.5] (list)")]:
        with pytest.raises(calibr.InputError, match="^" + re.escape(
                "The metric 'f' must return a real number (a float, an int or a numpy "
                f"scalar); it returned {shown}. [metric 'f'; group g='a']") + "$"):
            summarise(df.groupby("g"), "p", "y", f=lambda p, y, v=value: v)
    # numbers of any real type, 0-d arrays, NaN and infinities are values
    for value in (np.float32(0.25), np.int8(2), np.array(0.5), 3, np.nan, np.inf):
        out = summarise(df.groupby("g"), "p", "y", f=lambda p, y, v=value: v)
        np.testing.assert_array_equal(out["f"].to_numpy(), np.full(2, float(value)))
        assert out["f"].dtype == np.float64


def test_bad_values_name_the_group_and_position_within_it():
    df = pd.DataFrame({"g": ["a", "a", "b", "b", "b"], "p": [0.1, 0.2, 0.3, 1.2, 0.4],
                       "y": [0, 1, 1, 0, 1]})
    with pytest.raises(ValueError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, the "
                       r"first at position 1 \(1\.2\)\. \[group g='b'\]$"):
        summarise(df.groupby("g"), "p", "y")
    df.loc[3, "p"] = 0.5
    df.loc[4, "y"] = 2
    with pytest.raises(ValueError, match=r"^`y` must be 0/1 or boolean for a vector `p`; .* "
                       r"\[group g='b'\]$"):
        summarise(df.groupby("g"), "p", "y")
    df.loc[4, "y"] = 1
    with pytest.raises(ValueError, match=r"^`bins` must be a single positive integer; got 0\. "
                       r"\[metric 'mce\(bins=0\)'; group g='a'\]$"):
        summarise(df.groupby("g"), "p", "y", metrics=[metric("mce", bins=0)])
    with pytest.raises(ValueError, match=r"^`p` must lie in \[0, 1\]; .*\(1\.5\)\.$"):
        summarise(pd.DataFrame({"p": [0.2, 1.5], "y": [0, 1]}), "p", "y")
    with pytest.raises(ValueError, match=r"`p` and `y` must not be empty; got 0 observations\."):
        summarise(pd.DataFrame({"p": [], "y": []}), "p", "y")
    with pytest.raises(TypeError, match=r"`p` must be numeric"):
        summarise(df.assign(p=list("abcde")).groupby("g"), "p", "y")


def test_a_grouping_of_a_frame_without_columns_is_an_input_error():
    """A grouping (as_index=False) of a frame without columns is refused with a message
    that says so."""
    empty = pd.DataFrame(index=range(3))
    with pytest.raises(calibr.InputError, match=r"has no columns"):
        calibr.summarise(empty.groupby(np.array([0, 0, 1]), as_index=False), "p", "y")


def test_summarise_median_bandwidth_error_names_the_group():
    """One group without a median bandwidth (all its p equal) makes summarise() raise that
    group's error, naming the metric and the group; it is not a NaN."""
    df = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "p": [0.2, 0.7, 0.4, 0.3, 0.3, 0.3],
                       "y": [0, 1, 1, 0, 1, 1]})
    for spec in (calibr.metric("skce", bandwidth="median"),
                 calibr.metric("mmce", bandwidth="median")):
        with pytest.raises(InputError, match=r"needs at least two distinct predictions; .*"
                                             r"\[metric .*; group g='b'\]$"):
            calibr.summarise(df.groupby("g"), "p", "y", metrics=[spec])


# --------------------------------------------------------------------------
# layout of the bundled data's summary (the numbers are R's: tests/test_bundled_r.py)


def test_bundled_summary_layout(data_regression):
    bc = load_breast_cancer_predictions()
    dg = load_digits_predictions()
    binary = summarise(bc.groupby("model"), "p", "y", metrics=["ece", "mce"])
    multi = summarise(dg.groupby(["model", "fold"]), y="y", p_prefix="p_",
                      metrics=["ece", "mce", metric("ece", type="confidence"), "skce"])
    for out in (binary, multi):
        assert isinstance(out.index, pd.RangeIndex)
        assert out.drop(columns=["model", "fold"], errors="ignore").notna().all().all()
    data_regression.check({"breast_cancer": layout(binary, ["model"]),
                           "digits": layout(multi, ["model", "fold"])})


# --------------------------------------------------------------------------
# the R workflow itself: dplyr's group_by() |> summarise() with the R reference


def _r_frame(ro, df):
    """An R data.frame with the numeric columns copied bit for bit and strings as strings."""
    cols = {}
    for name, col in df.items():
        if col.dtype.kind == "f":
            cols[name] = ro.FloatVector(col.tolist())
        elif col.dtype.kind in "iu":
            cols[name] = ro.IntVector(col.tolist())
        else:
            cols[name] = ro.StrVector(col.astype(str).tolist())
    return ro.DataFrame(cols)


@pytest.mark.r
def test_matches_dplyr_summarise_in_r(rref):
    """`df |> group_by(model, fold) |> summarise(...)` in R (dplyr + the R reference package)
    gives the numbers of calibr.frame.summarise, binary and multiclass."""
    import rpy2.robjects as ro
    from tolerances import R_ATOL, R_RTOL

    try:
        ro.r("suppressPackageStartupMessages({library(dplyr); library(calibrRef)})")
    except Exception as exc:  # noqa: BLE001 - dplyr is part of the R setup of the CI
        pytest.fail(f"R package dplyr or calibrRef not loadable: {exc}")

    bc = load_breast_cancer_predictions()
    ro.globalenv["bc"] = _r_frame(ro, bc)
    r_bc = ro.r("""
        bc |> group_by(model, fold) |>
          summarise(ece = ece(p, y), mce2 = mce(p, y, bins = 2), .groups = "drop") |>
          as.data.frame()
    """)
    py_bc = summarise(bc.groupby(["model", "fold"]), "p", "y",
                      ece="ece", mce2=metric("mce", bins=2))
    assert list(r_bc.rx2("model")) == py_bc["model"].tolist()
    assert list(r_bc.rx2("fold")) == py_bc["fold"].tolist()
    np.testing.assert_allclose(py_bc["ece"], list(r_bc.rx2("ece")), rtol=R_RTOL, atol=R_ATOL)
    np.testing.assert_allclose(py_bc["mce2"], list(r_bc.rx2("mce2")), rtol=R_RTOL, atol=R_ATOL)

    dg = load_digits_predictions()
    ro.globalenv["dg"] = _r_frame(ro, dg)
    r_dg = ro.r("""
        dg |> group_by(model) |>
          summarise(ece = ece(cbind(p_0, p_1, p_2, p_3, p_4, p_5, p_6, p_7, p_8, p_9), y + 1L),
                    conf = ece(cbind(p_0, p_1, p_2, p_3, p_4, p_5, p_6, p_7, p_8, p_9), y + 1L,
                               bins = 15, type = "confidence")) |>
          as.data.frame()
    """)
    py_dg = summarise(dg.groupby("model"), y="y", p_prefix="p_",
                      ece="ece", conf=metric("ece", bins=15, type="confidence"))
    assert list(r_dg.rx2("model")) == py_dg["model"].tolist()
    np.testing.assert_allclose(py_dg["ece"], list(r_dg.rx2("ece")), rtol=R_RTOL, atol=R_ATOL)
    np.testing.assert_allclose(py_dg["conf"], list(r_dg.rx2("conf")), rtol=R_RTOL, atol=R_ATOL)


# --------------------------------------------------------------------------
# the docs say what the code does


def test_docs_on_column_lists_and_installing_are_true():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    # a list of probability columns does not read R's 1-based codes (see
    # test_column_list_with_r_codes_needs_classes); nothing may say it does
    assert "or as R's 1-based codes" not in summarise.__doc__
    assert "classes=range(1, K + 1)" in summarise.__doc__
    migrating = (root / "vignettes" / "migrating-from-r.md").read_text()
    assert '`p=prob_cols` |' not in migrating
    assert "`p=prob_cols, classes=range(K)`" in migrating
    df = load_digits_predictions()
    got = summarise(df.groupby("model"), p=DIGITS, y="y", classes=range(10), ece="ece")
    ref = summarise(df.groupby("model"), y="y", p_prefix="p_", ece="ece")
    pd.testing.assert_frame_equal(got, ref, check_exact=True)
    # calibr is not on PyPI: no install line may name it there
    for name in ("getting-started.md", "migrating-from-r.md"):
        text = (root / "vignettes" / name).read_text()
        assert "pip install calibr" not in text and "calibr[plot]" not in text, name


# --------------------------------------------------------------------------
# MultiIndex columns, as_index=False, and column names that select several columns


def test_multiindex_columns_are_named_by_tuples():
    df = binary_frame(seed=12, n=120)
    mi = df.copy()
    mi.columns = pd.MultiIndex.from_tuples(
        [("key", "model"), ("key", "fold"), ("pred", "p"), ("pred", "y")])
    want = summarise(df.groupby("model"), "p", "y", metrics=["ece", "skce"])
    got = summarise(mi.groupby([("key", "model")]), ("pred", "p"), ("pred", "y"),
                    metrics=["ece", "skce"])
    assert list(got.columns) == [("key", "model"), "ece", "skce"]
    np.testing.assert_array_equal(got[("key", "model")].to_numpy(), want["model"].to_numpy())
    np.testing.assert_array_equal(got[["ece", "skce"]].to_numpy(), want[["ece", "skce"]].to_numpy())
    whole = summarise(mi, ("pred", "p"), ("pred", "y"))
    assert whole.loc[0, "ece"] == calibr.ece(df["p"], df["y"])
    # several probability columns: a list of tuples
    mc = multiclass_frame(seed=13, k=3, labels=["a", "b", "c"])
    mmc = mc.copy()
    mmc.columns = pd.MultiIndex.from_tuples([("k", "model"), ("k", "y"), ("p", "a"), ("p", "b"),
                                             ("p", "c")])
    got = summarise(mmc, [("p", "a"), ("p", "b"), ("p", "c")], ("k", "y"),
                    classes=["a", "b", "c"])
    assert got.loc[0, "ece"] == calibr.ece(mc[["p_a", "p_b", "p_c"]], mc["y"],
                                           classes=["a", "b", "c"])
    # a partial key selects several columns: an error that says so
    with pytest.raises(ValueError, match=r"^`p` must name one column each; 'pred' names 2 columns "
                       r"of the data: give the full key of one column \(a tuple\)\.$"):
        summarise(mi, "pred", ("pred", "y"))
    with pytest.raises(ValueError, match=r"^`y` must name a column of the data; got "
                       r"\('pred', 'z'\)\.$"):
        summarise(mi, ("pred", "p"), ("pred", "z"))


def test_duplicated_column_names_are_refused():
    df = binary_frame(seed=14, n=20)
    dup = pd.concat([df, df[["p"]]], axis=1)
    with pytest.raises(ValueError, match=r"^`p` must name one column each; 'p' names 2 columns of "
                       r"the data: rename the columns so that each name is unique\.$"):
        summarise(dup, "p", "y")
    with pytest.raises(ValueError, match=r"^`y` must name one column each; 'y' names 2 columns"):
        summarise(pd.concat([df, df[["y"]]], axis=1), "p", "y")


def test_as_index_false_with_a_key_named_size():
    """pandas' own size() cannot add its "size" column when a key has that name."""
    df = binary_frame(seed=15).rename(columns={"model": "size"})
    want = summarise(df.groupby("size"), "p", "y")
    got = summarise(df.groupby("size", as_index=False), "p", "y")
    pd.testing.assert_frame_equal(got, want)
    assert list(got.columns) == ["size", "ece", "mce"]
    two = summarise(df.groupby(["size", "fold"], as_index=False, sort=False), "p", "y")
    pd.testing.assert_frame_equal(two, summarise(df.groupby(["size", "fold"], sort=False),
                                                 "p", "y"))


def test_classes_follow_the_metrics_rules_in_summarise():
    df = multiclass_frame(seed=16, k=3, labels=["a", "b", "c"])
    cols = ["p_a", "p_b", "p_c"]
    with pytest.raises(ValueError, match=r"^`classes` must be an ordered sequence of labels \(a "
                       r"list, tuple, range, array or pandas Index\), one per column of `p`; got a "
                       r"set\.$"):
        summarise(df, cols, "y", classes={"a", "b", "c"})
    with pytest.raises(ValueError, match=r"got a str\.$"):
        summarise(df, cols, "y", classes="abc")  # not the classes 'a', 'b', 'c'
    with pytest.raises(ValueError, match=r"got a str\.$"):
        calibr.calibration_table(cols, "y", classes="abc", data=df)
    out = summarise(df, cols, "y", classes=["a", "b", "c"])
    assert out.loc[0, "ece"] == calibr.ece(df[cols], df["y"], classes=["a", "b", "c"])


def test_a_tuple_names_a_column_only_of_multiindex_columns():
    """A tuple is a column key only when the columns are a MultiIndex, even if a flat Index
    holds that tuple as a label (pandas' get_loc would find it)."""
    df = pd.DataFrame({("a", "b"): [0, 1, 1], "p": [0.2, 0.7, 0.4]})
    assert not isinstance(df.columns, pd.MultiIndex)
    msg = r"^`y` must name a column of the data; got \('a', 'b'\)\.$"
    with pytest.raises(InputError, match=msg):
        calibr.summarise(df, "p", ("a", "b"), metrics="ece")
    with pytest.raises(InputError, match=msg):
        calibr.calibration_table("p", ("a", "b"), data=df)
    # in a list of probability columns too (pandas' get_loc alone would accept it)
    two = pd.DataFrame({("a", "b"): [0.2, 0.7, 0.4], "q": [0.8, 0.3, 0.6], "y": [0, 1, 1]})
    msg = r"^`p` must name columns of the data; \('a', 'b'\) is not one\.$"
    with pytest.raises(InputError, match=msg):
        calibr.summarise(two, [("a", "b"), "q"], "y", metrics="ece")
    with pytest.raises(InputError, match=msg):
        calibr.calibration_table([("a", "b"), "q"], "y", data=two)


def test_the_tables_groups_keep_a_missing_key_as_its_own_group():
    """calibr._input.groups.subframes (the plot's panels and curves, the command line's
    groups of a table): groups in the order of first appearance, a missing key its own
    group, the frame itself without keys."""
    from calibr._input.groups import subframes

    table = pd.DataFrame({"g": ["b", None, "a", "b", None], "v": [1, 2, 3, 4, 5]})
    parts = subframes(table, ["g"])
    assert [k[0] if isinstance(k[0], str) else None for k, _ in parts] == ["b", None, "a"]
    assert [sub["v"].tolist() for _, sub in parts] == [[1, 4], [2, 5], [3]]
    assert subframes(table, [])[0][0] == () and subframes(table, [])[0][1] is table
