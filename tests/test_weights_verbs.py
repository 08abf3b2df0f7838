"""Frequency weights in the verbs: ``summarise(weights=)``,
``calibration_table(weights=)`` and ``calibr report --weights``
(``docs/definitions.md``, "Frequency weights in the verbs"; ``docs/cli.md``,
"Frequency weights: ``--weights``").

* each group's number == the metric called on the group's rows with their
  weights, bit for bit (``==``);
* whole-number weights == the verbs on the frame with each row repeated
  (``DataFrame.index.repeat``), to the rounding of ``tests/tolerances.py``, and
  == the R reference on the repeated rows;
* the weighted table: ``table_ece`` == weighted ``ece()`` and ``max(gap)`` ==
  weighted ``mce()`` bit for bit; the Wilson interval counts the weights;
* every error names ``weights`` (``--weights``), and the frame is unchanged.
"""

from __future__ import annotations

import copy
import io
import re

import numpy as np
import pandas as pd
import pytest
from tolerances import R_ATOL, R_RTOL, WEIGHTS_ATOL, WEIGHTS_RTOL

import calibr
from calibr.cli import main
from calibr.frame import metric, summarise
from calibr.plot import table_ece
from calibr.table import calibration_table, wilson_interval

BINS = 5
H = 0.3

#: Every metric and form that takes weights, as summarise() columns.
BINARY_METRICS = {
    "ece": "ece",
    "mce": "mce",
    "mce3": metric("mce", bins=3),
    "skce_uq": metric("skce", estimator="uq", bandwidth=H),
    "skce_b": metric("skce", estimator="biased", bandwidth=H),
    "mmce": metric("mmce", bandwidth=H),
}
MULTI_METRICS = {
    "ece": "ece",
    "ece_conf": metric("ece", type="confidence"),
    "mce": metric("mce", bins=3),
    "mce_conf": metric("mce", bins=3, type="confidence"),
    "skce_can": metric("skce", estimator="uq", bandwidth=H),
    "skce_cw": metric("skce", estimator="biased", bandwidth=H, type="classwise"),
    "skce_conf": metric("skce", estimator="uq", bandwidth=H, type="confidence"),
    "mmce": metric("mmce", bandwidth=H),
}


def binary_frame(seed: int, n: int = 120) -> pd.DataFrame:
    """Three models (one with many zero weights), rounded p (ties), whole weights 0..4."""
    rng = np.random.default_rng([20261201, seed])
    model = rng.choice(["a", "b", "c"], n)
    p = np.round(rng.random(n), 2)
    y = (rng.random(n) < p).astype(np.int64)
    w = rng.integers(0, 5, n).astype(np.int64)
    w[(model == "c") & (rng.random(n) < 0.6)] = 0
    return pd.DataFrame({"model": model, "p": p, "y": y, "w": w})


def multi_frame(seed: int, n: int = 90, k: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng([20261202, seed])
    p = rng.dirichlet(np.ones(k), n)
    y = np.array([rng.choice(k, p=row) for row in p]) + 1
    df = pd.DataFrame(p, columns=[f"p_{j}" for j in range(1, k + 1)])
    df.insert(0, "fold", rng.integers(0, 2, n))
    df["y"] = y
    df["w"] = rng.integers(0, 4, n)
    return df


def call(spec, p, y, w, **extra):
    """The metric of a summarise() column called directly."""
    spec = spec if isinstance(spec, calibr.Metric) else metric(spec)
    return getattr(calibr, spec.func)(p, y, **spec.options, weights=w, **extra)


def repeat(df: pd.DataFrame, col: str = "w") -> pd.DataFrame:
    """Each row repeated by its whole-number weight (the repeated sample)."""
    return df.loc[df.index.repeat(df[col].to_numpy(dtype=np.int64))].drop(columns=col)


# ------------------------------------------------------------------ summarise()


@pytest.mark.parametrize("seed", range(3))
def test_binary_groups_equal_the_weighted_metric_bit_for_bit(seed):
    df = binary_frame(seed)
    got = summarise(df.groupby("model"), p="p", y="y", metrics=BINARY_METRICS, weights="w")
    assert list(got["model"]) == ["a", "b", "c"]
    for i, (key, g) in enumerate(df.groupby("model")):
        assert got["model"][i] == key
        for col, spec in BINARY_METRICS.items():
            assert got[col][i] == call(spec, g["p"], g["y"], g["w"]), (key, col)


@pytest.mark.parametrize("seed", range(2))
def test_multiclass_groups_equal_the_weighted_metric_bit_for_bit(seed):
    df = multi_frame(seed)
    got = summarise(df.groupby("fold"), p_prefix="p_", y="y", metrics=MULTI_METRICS,
                    weights="w")
    for i, (_, g) in enumerate(df.groupby("fold")):
        p = g[["p_1", "p_2", "p_3"]].to_numpy()
        for col, spec in MULTI_METRICS.items():
            assert got[col][i] == call(spec, p, g["y"], g["w"]), col


def test_ungrouped_frame_and_real_weights():
    df = binary_frame(0)
    df["w"] = df["w"] * 0.37 + 0.01
    metrics = {k: v for k, v in BINARY_METRICS.items() if k != "skce_uq"}  # "uq" needs counts
    got = summarise(df, p="p", y="y", metrics=metrics, weights="w")
    assert got.shape == (1, len(metrics))
    for col, spec in metrics.items():
        assert got[col][0] == call(spec, df["p"], df["y"], df["w"]), col


@pytest.mark.parametrize("seed", range(3))
def test_whole_weights_equal_the_repeated_frame(seed):
    df = binary_frame(seed)
    got = summarise(df.groupby("model"), p="p", y="y", metrics=BINARY_METRICS, weights="w")
    want = summarise(repeat(df).groupby("model"), p="p", y="y", metrics=BINARY_METRICS)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=WEIGHTS_RTOL,
                                  atol=WEIGHTS_ATOL)


def test_whole_weights_equal_the_repeated_frame_multiclass():
    df = multi_frame(3)
    got = summarise(df.groupby("fold"), p_prefix="p_", y="y", metrics=MULTI_METRICS,
                    weights="w")
    want = summarise(repeat(df).groupby("fold"), p_prefix="p_", y="y", metrics=MULTI_METRICS)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=WEIGHTS_RTOL,
                                  atol=WEIGHTS_ATOL)


@pytest.mark.r
def test_whole_weights_equal_r_on_the_repeated_rows(rref):
    df = binary_frame(4, n=60)
    got = summarise(df.groupby("model"), p="p", y="y", metrics=BINARY_METRICS, weights="w")
    for i, (_, g) in enumerate(repeat(df).groupby("model")):
        p, y = g["p"].to_numpy(), g["y"].to_numpy()
        want = {
            "ece": rref.ece(p, y, bins=10), "mce": rref.mce(p, y, bins=10),
            "mce3": rref.mce(p, y, bins=3),
            "skce_uq": rref.skce(p, y, estimator="uq", bandwidth=H, type="canonical"),
            "skce_b": rref.skce(p, y, estimator="biased", bandwidth=H, type="canonical"),
            "mmce": rref.mmce(p, y, bandwidth=H),
        }
        for col, value in want.items():
            assert got[col][i] == pytest.approx(value, rel=R_RTOL, abs=R_ATOL), col


def test_zero_weights_drop_rows_bit_for_bit_and_na_rm_drops_their_weights():
    df = binary_frame(5)
    kept = df[df["w"] > 0].copy()
    kept["w"] = kept["w"].astype(float)
    metrics = {"ece": "ece", "mce": "mce", "skce": BINARY_METRICS["skce_b"]}
    dropped = summarise(kept.groupby("model"), p="p", y="y", metrics=metrics, weights="w")
    zero = summarise(df.groupby("model"), p="p", y="y", metrics=metrics, weights="w")
    pd.testing.assert_frame_equal(zero, dropped, check_exact=True)
    # na_rm=True: rows with a missing p are dropped with their weights
    holes = df.copy()
    holes.loc[::7, "p"] = np.nan
    got = summarise(holes.groupby("model"), p="p", y="y", metrics=metrics, weights="w",
                    na_rm=True)
    want = summarise(df.drop(index=df.index[::7]).groupby("model"), p="p", y="y",
                     metrics=metrics, weights="w")
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_unit_weights_are_close_to_no_weights():
    df = binary_frame(6)
    df["w"] = 1
    got = summarise(df.groupby("model"), p="p", y="y", metrics=BINARY_METRICS, weights="w")
    want = summarise(df.groupby("model"), p="p", y="y", metrics=BINARY_METRICS)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=WEIGHTS_RTOL,
                                  atol=WEIGHTS_ATOL)


def test_callable_metric_gets_the_group_weights():
    df = binary_frame(7)
    seen = []

    def total(p, y, weights=None):
        seen.append(weights.copy())
        return float(np.sum(weights))

    got = summarise(df.groupby("model"), p="p", y="y", metrics={"t": total}, weights="w")
    assert list(got["t"]) == [float(g["w"].sum()) for _, g in df.groupby("model")]
    assert all(s.dtype == np.float64 for s in seen)


def test_unobserved_groups_stay_nan_with_weights():
    df = binary_frame(8)
    df["model"] = pd.Categorical(df["model"], categories=["a", "b", "c", "z"])
    got = summarise(df.groupby("model", observed=False), p="p", y="y", metrics="ece",
                    weights="w")
    assert np.isnan(got["ece"][3])
    g = df[df["model"] == "b"]
    assert got["ece"][1] == calibr.ece(g["p"], g["y"], weights=g["w"])


def test_rows_in_no_group_are_not_read_and_the_frame_is_unchanged():
    df = binary_frame(12).astype({"model": object, "w": float})
    df.loc[4, ["model", "w"]] = [None, -5.0]  # dropna=True: row 4 is in no group
    before = copy.deepcopy(df)
    got = summarise(df.groupby("model"), p="p", y="y", metrics="ece", weights="w")
    pd.testing.assert_frame_equal(df, before)
    want = summarise(df.drop(index=4).groupby("model"), p="p", y="y", metrics="ece",
                     weights="w")
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    with pytest.raises(calibr.InputError, match=r"`weights` must be nonnegative; .*"
                                                r"\[group model=nan\]"):
        summarise(df.groupby("model", dropna=False), p="p", y="y", weights="w")


# ------------------------------------------------------------------ errors


def _bad(df, match, exc=calibr.InputError, **kw):
    before = copy.deepcopy(df)
    kw = {"p": "p", "y": "y", "weights": "w", **kw}
    with pytest.raises(exc, match=match):
        summarise(df.groupby("model"), **kw)
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize("grouped", [True, False])
def test_weighted_ks_and_kuiper_tests_are_calibration_test_per_group(grouped):
    """summarise(tests=["ks", "kuiper"], weights=) gives, per group, the statistic and
    p-value of calibration_test(..., weights=) on the group's rows, bit for bit, and
    those of the repeated rows to rounding."""
    df = binary_frame(5)
    data = df.groupby("model") if grouped else df
    got = summarise(data, p="p", y="y", metrics="ecce", tests=["ks", "kuiper"], weights="w",
                    rng=0)
    rep = summarise(repeat(df).groupby("model") if grouped else repeat(df), p="p", y="y",
                    metrics="ecce", tests=["ks", "kuiper"], rng=0)
    parts = [g for _, g in df.groupby("model")] if grouped else [df]
    for i, g in enumerate(parts):
        for kind in ("ks", "kuiper"):
            res = calibr.calibration_test(g["p"], g["y"], kind, weights=g["w"])
            assert got[f"{kind}_statistic"].iloc[i] == res.statistic
            assert got[f"{kind}_pvalue"].iloc[i] == res.pvalue
            assert got[f"{kind}_pvalue"].iloc[i] == pytest.approx(
                rep[f"{kind}_pvalue"].iloc[i], rel=1e-12, abs=1e-300)
        assert got["ecce"].iloc[i] == calibr.ecce(g["p"], g["y"], weights=g["w"])


def test_report_weighted_ks_test(capsys, tmp_path):
    """calibr report --test ks,kuiper --weights w: summarise's numbers."""
    import io

    from calibr.cli import main

    df = binary_frame(6)
    path = tmp_path / "in.csv"
    df.to_csv(path, index=False)
    code = main(["report", str(path), "--by", "model", "--test", "ks,kuiper", "--weights",
                 "w", "--seed", "0", "-f", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    want = summarise(df.groupby("model"), p="p", y="y", tests=["ks", "kuiper"], weights="w",
                     rng=0)
    for col in ("ks_statistic", "ks_pvalue", "kuiper_statistic", "kuiper_pvalue"):
        assert got[col].tolist() == want[col].tolist()


def test_weight_errors_name_weights_and_the_group():
    df = binary_frame(0)
    first_b = int(np.flatnonzero(df["model"] == "b")[2])
    neg = df.copy()
    neg.loc[first_b, "w"] = -1
    _bad(neg, re.escape("`weights` must be nonnegative; 1 value does not, the first at "
                        "position 2 (-1.0). [group model='b']"))
    nan = df.copy().astype({"w": float})
    nan.loc[first_b, "w"] = np.nan
    nan.loc[first_b, "p"] = np.nan  # na_rm drops the row, never its missing weight
    _bad(nan, r"`weights` must not contain missing values; 1 value is missing, the first at "
              r"position 2\. .* \[group model='b'\]", na_rm=True)
    inf = df.copy().astype({"w": float})
    inf.loc[first_b, "w"] = np.inf
    _bad(inf, r"`weights` must be finite; .*\[group model='b'\]")
    zero = df.copy()
    zero.loc[zero["model"] == "b", "w"] = 0
    n_b = int((zero["model"] == "b").sum())
    _bad(zero, re.escape(f"`weights` must have a positive total; all {n_b} weights are 0. "
                         "[group model='b']"))
    text = df.copy().astype({"w": object})
    text.loc[first_b, "w"] = "two"
    _bad(text, re.escape("`weights` must hold real numbers; 1 value is not, the first at "
                         "position 2 ('two' of type str). [group model='b']"),
         exc=calibr.InputTypeError)
    _bad(df, re.escape("`weights` must name a column of the data; got 'nope'."),
         weights="nope")


def test_options_and_tests_that_refuse_weights():
    df = binary_frame(1)
    _bad(df, r'`weights` cannot be used with estimator = "ul".*\[metric "skce\(estimator=',
         metrics=metric("skce", estimator="ul"))
    _bad(df, r'`weights` cannot be used with bandwidth = "median".*\[metric',
         metrics=metric("mmce", bandwidth="median"))
    frac = df.astype({"w": float})
    frac["w"] = frac["w"] + 0.5
    _bad(frac, r"`weights` must be whole numbers .* for estimator = \"uq\".*\[metric",
         metrics=metric("skce", estimator="uq"))
    _bad(df, re.escape("`weights` cannot be combined with the test 'spiegelhalter': of "
                       "calibr.calibration_test()'s methods only \"ks\" and \"kuiper\" take "
                       "frequency weights."), tests=["ks", "spiegelhalter"], rng=0)
    _bad(df, re.escape("`weights` needs metrics that take frequency weights; the metric 'f' "
                       "has no parameter 'weights'."), metrics={"f": lambda p, y: 0.0})
    with pytest.raises(calibr.InputError, match=r"The option 'weights' of metric 'ece' is one "
                                                r"weight per row"):
        metric("ece", weights=[1, 2])


# ------------------------------------------------------------------ calibration_table()


TABLE_FORMS = [("binary", None), ("multi", "classwise"), ("multi", "confidence")]


def _table_args(form, type_):
    if form == "binary":
        return binary_frame(2), {"p": "p", "y": "y", "by": "model"}
    return multi_frame(2), {"p": None, "p_prefix": "p_", "y": "y", "by": "fold", "type": type_}


@pytest.mark.parametrize(("form", "type_"), TABLE_FORMS)
def test_weighted_table_equals_the_repeated_rows(form, type_):
    df, a = _table_args(form, type_)
    by = a.pop("by")
    got = calibration_table(data=df.groupby(by), bins=BINS, weights="w", **a)
    want = calibration_table(data=repeat(df).groupby(by), bins=BINS, **a)
    assert got["n"].dtype == np.float64
    pd.testing.assert_frame_equal(got, want, check_exact=False, check_dtype=False,
                                  rtol=WEIGHTS_RTOL, atol=WEIGHTS_ATOL)
    assert (got["n"] == want["n"]).all()  # whole numbers: exactly the counts


@pytest.mark.parametrize(("form", "type_"), TABLE_FORMS)
@pytest.mark.parametrize("real", [False, True])
def test_weighted_table_gives_weighted_ece_and_mce_bit_for_bit(form, type_, real):
    df, a = _table_args(form, type_)
    by = a.pop("by")
    if real:
        df["w"] = df["w"] * 0.3 + 0.05
    tab = calibration_table(data=df.groupby(by), bins=BINS, weights="w", **a)
    for key, g in df.groupby(by):
        rows = tab[tab[by] == key].drop(columns=by)
        p = g["p"] if form == "binary" else g[["p_1", "p_2", "p_3"]].to_numpy()
        kw = {} if type_ is None else {"type": type_}
        assert table_ece(rows) == calibr.ece(p, g["y"], bins=BINS, weights=g["w"], **kw)
        assert rows["gap"].max() == calibr.mce(p, g["y"], bins=BINS, weights=g["w"], **kw)


def test_weighted_table_columns_by_hand():
    p = np.array([0.1, 0.15, 0.3, 0.8, 0.9, 0.95])
    y = np.array([0, 1, 0, 1, 1, 0])
    w = np.array([2.0, 1.25, 0.0, 1.5, 0.75, 3.0])
    tab = calibration_table(p, y, bins=2, weights=w)
    # bin 1: rows 0, 1 (row 2 has weight 0); bin 2: rows 3, 4, 5
    assert tab["n"].dtype == np.float64
    assert list(tab["n"]) == [3.25, 5.25]
    assert tab["mean_confidence"][0] == pytest.approx((2 * 0.1 + 1.25 * 0.15) / 3.25,
                                                      rel=1e-15)
    assert tab["observed_frequency"][0] == pytest.approx(1.25 / 3.25, rel=1e-15)
    assert tab["mean_confidence"][1] == pytest.approx(
        (1.5 * 0.8 + 0.75 * 0.9 + 3 * 0.95) / 5.25, rel=1e-15)
    assert tab["observed_frequency"][1] == pytest.approx(2.25 / 5.25, rel=1e-15)
    # the Wilson interval of x = sum(w c) successes in n = sum(w) trials
    lo, hi = wilson_interval([1.25, 2.25], [3.25, 5.25])
    np.testing.assert_array_equal(tab["ci_lower"], lo)
    np.testing.assert_array_equal(tab["ci_upper"], hi)
    # a bin whose rows all have weight 0 is left out
    only = calibration_table(p, y, bins=2, weights=[0, 0, 0, 1, 1, 1])
    assert list(only["bin"]) == [2]


def test_table_of_arrays_equals_the_table_of_the_frame():
    df = binary_frame(3)
    g = df[df["model"] == "a"]
    arrays = calibration_table(g["p"].to_numpy(), g["y"].to_numpy(), bins=BINS,
                               weights=g["w"].to_numpy())
    frame = calibration_table("p", "y", bins=BINS, data=g, weights="w")
    pd.testing.assert_frame_equal(arrays, frame, check_exact=True)


def test_table_weight_errors_and_the_frame_is_unchanged():
    df = binary_frame(4)
    before = copy.deepcopy(df)
    neg = df.copy()
    neg.loc[neg.index[0], "w"] = -3
    with pytest.raises(calibr.InputError, match=r"`weights` must be nonnegative.*\[group "):
        calibration_table("p", "y", data=neg.groupby("model"), weights="w")
    with pytest.raises(calibr.InputError, match="`weights` must name a column"):
        calibration_table("p", "y", data=df, weights=["w"])
    with pytest.raises(calibr.InputError, match="`weights` must have one value per"):
        calibration_table([0.2, 0.4], [0, 1], weights=[1.0])
    with pytest.raises(calibr.InputTypeError, match="`weights`"):
        calibration_table([0.2, 0.4], [0, 1], weights=["a", "b"])
    calibration_table("p", "y", data=df.groupby("model"), weights="w")
    pd.testing.assert_frame_equal(df, before)


# ------------------------------------------------------------------ the command line


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _files(tmp_path):
    df = binary_frame(9, n=200)
    weighted = tmp_path / "weighted.csv"
    repeated = tmp_path / "repeated.csv"
    df.to_csv(weighted, index=False)
    repeat(df).to_csv(repeated, index=False)
    return df, str(weighted), str(repeated)


METRICS_ARG = "ece,mce(bins=5),skce(estimator=uq,bandwidth=0.3),mmce"


@pytest.mark.parametrize("extra", [[], ["--per-bin"]])
def test_weighted_report_equals_the_report_of_repeated_rows(capsys, tmp_path, extra):
    _, weighted, repeated = _files(tmp_path)
    common = ["--by", "model", "-m", METRICS_ARG, "-f", "csv", *extra]
    code, out_w, err = _run(capsys, "report", weighted, "--weights", "w", *common)
    assert (code, err) == (0, "")
    code, out_r, err = _run(capsys, "report", repeated, *common)
    assert (code, err) == (0, "")
    got, want = pd.read_csv(io.StringIO(out_w)), pd.read_csv(io.StringIO(out_r))
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=WEIGHTS_RTOL,
                                  atol=WEIGHTS_ATOL)
    assert got["n"].dtype == np.int64  # whole-number totals are written as integers


def test_weighted_report_table_says_it_is_weighted_and_plots(capsys, tmp_path):
    _, weighted, _ = _files(tmp_path)
    plot = tmp_path / "w.png"
    code, out, err = _run(capsys, "report", weighted, "--weights", "w", "--by", "model",
                          "--plot", str(plot))
    assert code == 0 and err == ""
    assert "weights: column 'w' (frequency weights; n is the total weight)" in out
    assert plot.stat().st_size > 0


def test_real_weights_give_decimal_totals(capsys, tmp_path):
    df = binary_frame(10)
    df["w"] = df["w"] + 0.25
    path = tmp_path / "real.csv"
    df.to_csv(path, index=False)
    code, out, _ = _run(capsys, "report", str(path), "--weights", "w", "--by", "model",
                        "-f", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    want = summarise(df.groupby("model"), p="p", y="y", metrics=["ece", "mce"], weights="w")
    np.testing.assert_array_equal(got["n"], df.groupby("model")["w"].sum().to_numpy())
    np.testing.assert_allclose(got["ece"], want["ece"], rtol=1e-15)


@pytest.mark.parametrize(
    ("change", "argv", "message"),
    [
        (None, ["--weights", "nope"],
         "calibr: error: --weights: no column 'nope' in {file}; its columns are 'model', "
         "'p', 'y', 'w'."),
        ("negative", ["--weights", "w"],
         "calibr: error: --weights must be nonnegative; 1 value does not, the first at data "
         "row 4 (-1.0)."),
        ("nan", ["--weights", "w", "--na-rm"],
         "calibr: error: --weights must not contain missing values; 1 value is missing, the "
         "first at data row 4. --na-rm drops observations with a missing --prob or --label, "
         "never a missing weight."),
        ("zero-b", ["--weights", "w", "--by", "model"],
         "calibr: error: --weights must have a positive total; all {n_b} weights are 0. "
         "[group model='b']"),
        (None, ["--weights", "w", "--test", "ks,skce"],
         "calibr: error: --weights cannot be combined with --test skce: of the calibration "
         "tests only ks and kuiper take frequency weights."),
        (None, ["--weights", "w", "-m", "skce(estimator=ul)"],
         'calibr: error: --weights cannot be used with estimator = "ul": its disjoint pairs'),
        (None, ["--weights", "w", "-m", "mmce(bandwidth=median)"],
         'calibr: error: --weights cannot be used with bandwidth = "median"'),
        (None, ["-m", "ece(weights=2)"],
         "calibr: error: --metrics: 'weights' is not an option of a metric ('ece(weights=2)'); "
         "--weights sets it for all metrics."),
    ],
)
def test_weights_errors_exit_2_with_one_line(capsys, tmp_path, change, argv, message):
    df = binary_frame(11, n=40).astype({"w": float})
    if change == "negative":
        df.loc[3, "w"] = -1
    elif change == "nan":
        df.loc[3, ["w", "p"]] = np.nan
    elif change == "zero-b":
        df.loc[df["model"] == "b", "w"] = 0
    path = tmp_path / "in.csv"
    df.to_csv(path, index=False)
    out_path = tmp_path / "out.csv"
    out_path.write_text("keep")
    code, out, err = _run(capsys, "report", str(path), "-o", str(out_path), *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    want = message.format(file=path, n_b=int((df["model"] == "b").sum()))
    assert err.startswith(want), err
    assert out_path.read_text() == "keep"
