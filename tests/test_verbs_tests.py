"""Calibration tests in the verbs: ``summarise(tests=..., rng=...)``, ``calibr.test()``
and ``calibr report --test ... --seed N``.

Every statistic and p-value is compared with ``calibr.calibration_test`` called
on the group's own rows with the group's generator, bit for bit (``==``): the
group in row g of the result draws from ``SeedSequence(seed).spawn(n_rows)[g]``,
and each test starts a fresh generator from it (``calibr/frame.py``,
``summarise``, Notes; ``docs/calibration_tests.md``, "In the verbs").
"""

from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

import calibr
from calibr import InputError, InputTypeError, calibration_test
from calibr.cli import main
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions
from calibr.frame import CalibrationTest, summarise
from calibr.frame import test as test_spec

DIGITS = [f"p_{k}" for k in range(10)]


def group_rng(seed, n_rows: int, g: int) -> np.random.Generator:
    """The generator of the group in row ``g`` (documented in summarise(), Notes)."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(n_rows)[g])


def assert_same(row: pd.Series, name: str, res) -> None:
    """The row's two columns of test ``name`` are the result's, bit for bit (NaN == NaN)."""
    for what, value in (("statistic", res.statistic), ("pvalue", res.pvalue)):
        got = row[f"{name}_{what}"]
        assert got == value or (math.isnan(got) and math.isnan(value)), (name, what, got, value)


@pytest.fixture(scope="module")
def binary():
    return load_breast_cancer_predictions()


@pytest.fixture(scope="module")
def digits():
    df = load_digits_predictions()
    return df.groupby("model", sort=True).head(150).reset_index(drop=True)


BINARY_TESTS = {
    "skce": test_spec("skce", n_resamples=200),
    "skce_block": "skce_block",
    "consistency": test_spec("consistency", metric="mce", bins=5, n_resamples=50),
    "spiegelhalter": "spiegelhalter",
    "hosmer_lemeshow": test_spec("hosmer_lemeshow", ddof=0),
}
BINARY_CALLS = {
    "skce": ("skce", {"n_resamples": 200}),
    "skce_block": ("skce_block", {}),
    "consistency": ("consistency", {"metric": "mce", "bins": 5, "n_resamples": 50}),
    "spiegelhalter": ("spiegelhalter", {}),
    "hosmer_lemeshow": ("hosmer_lemeshow", {"ddof": 0}),
}


# --------------------------------------------------------------------------
# summarise(tests=...)


def test_binary_groups_equal_calibration_test_on_each_group(binary):
    out = summarise(binary.groupby("model"), p="p", y="y", tests=BINARY_TESTS, rng=11)
    names = list(BINARY_TESTS)
    assert list(out.columns) == ["model", "ece", "mce"] + [
        f"{n}_{w}" for n in names for w in ("statistic", "pvalue", "small_n")]
    models = sorted(binary["model"].unique())
    assert out["model"].tolist() == models
    for g, model in enumerate(models):
        rows = binary[binary["model"] == model]
        for name, (method, opts) in BINARY_CALLS.items():
            res = calibration_test(rows["p"], rows["y"], method, rng=group_rng(11, 3, g), **opts)
            assert_same(out.iloc[g], name, res)
    # the metric columns are those of summarise() without tests
    plain = summarise(binary.groupby("model"), p="p", y="y")
    pd.testing.assert_frame_equal(out[plain.columns], plain)


def test_multiclass_groups_equal_calibration_test_on_each_group(digits):
    tests = {
        "skce": test_spec("skce", n_resamples=30, type="confidence"),
        "block": test_spec("skce_block", type="classwise", bandwidth="median"),
        "canonical": test_spec("skce", n_resamples=20),
        "consistency": test_spec("consistency", metric="ece", n_resamples=20),
    }
    out = summarise(digits.groupby("model"), y="y", p_prefix="p_", tests=tests, rng=5)
    models = sorted(digits["model"].unique())
    for g, model in enumerate(models):
        rows = digits[digits["model"] == model]
        for name, spec in tests.items():
            res = calibration_test(rows[DIGITS], rows["y"], spec.method, rng=group_rng(5, 3, g),
                                   classes=range(10), **spec.options)
            assert res.type != "binary"
            assert_same(out.iloc[g], name, res)


def test_string_labels_and_a_list_of_tests(digits):
    labels = np.array(list("abcdefghij"))
    df = digits.rename(columns=dict(zip(DIGITS, labels, strict=True)))
    df["y"] = labels[df["y"].to_numpy()]
    out = summarise(df.groupby("model"), p=list(labels), y="y",
                    tests=["skce_block", test_spec("consistency", n_resamples=10)], rng=2)
    assert "consistency_pvalue" in out and "skce_block_statistic" in out
    for g, (_, rows) in enumerate(df.groupby("model")):
        for method, opts in (("skce_block", {}), ("consistency", {"n_resamples": 10})):
            res = calibration_test(rows[list(labels)], rows["y"], method, rng=group_rng(2, 3, g),
                                   **opts)
            assert_same(out.iloc[g], method, res)


def test_same_seed_same_frame_and_other_seeds_differ(binary):
    def run(rng):
        return summarise(binary.groupby("model"), p="p", y="y", metrics="ece",
                         tests=test_spec("skce", n_resamples=100), rng=rng)

    pd.testing.assert_frame_equal(run(3), run(3))
    assert not run(3)["skce_pvalue"].equals(run(4)["skce_pvalue"])
    # the statistic does not depend on the random numbers
    assert run(3)["skce_statistic"].equals(run(4)["skce_statistic"])


def test_generator_rng_spawns_one_stream_per_group_and_advances(binary):
    gen = np.random.default_rng(8)
    tests = test_spec("consistency", n_resamples=40)
    first = summarise(binary.groupby("model"), p="p", y="y", tests=tests, rng=gen)
    # the Generator's first three children are those of its seed, 8
    pd.testing.assert_frame_equal(
        first, summarise(binary.groupby("model"), p="p", y="y", tests=tests, rng=8))
    second = summarise(binary.groupby("model"), p="p", y="y", tests=tests, rng=gen)
    assert not first["consistency_pvalue"].equals(second["consistency_pvalue"])
    children = np.random.SeedSequence(8).spawn(6)[3:]  # the next three children
    for g, (_, rows) in enumerate(binary.groupby("model")):
        res = calibration_test(rows["p"], rows["y"], "consistency", n_resamples=40,
                               rng=np.random.default_rng(children[g]))
        assert_same(second.iloc[g], "consistency", res)


def test_a_groups_stream_depends_on_nothing_else(binary):
    """Not on the other tests asked for, their order, or the other groups' rows."""
    spec = {"skce": test_spec("skce", n_resamples=100),
            "consistency": test_spec("consistency", n_resamples=30)}
    both = summarise(binary.groupby("model"), p="p", y="y", tests=spec, rng=1)
    swapped = summarise(binary.groupby("model"), p="p", y="y",
                        tests=dict(reversed(spec.items())), rng=1)
    alone = summarise(binary.groupby("model"), p="p", y="y", tests={"skce": spec["skce"]}, rng=1)
    for col in ("skce_statistic", "skce_pvalue"):
        assert both[col].equals(swapped[col]) and both[col].equals(alone[col])
    assert both["consistency_pvalue"].equals(swapped["consistency_pvalue"])
    # other rows in the other groups: the first group's numbers stay
    changed = binary.copy()
    other = changed["model"] != "logistic"
    changed.loc[other, "p"] = changed.loc[other, "p"] ** 2
    again = summarise(changed.groupby("model"), p="p", y="y", tests=spec, rng=1)
    assert again.iloc[0].equals(both.iloc[0])
    assert again["skce_statistic"].iloc[1] != both["skce_statistic"].iloc[1]


def test_ungrouped_frame_is_group_zero(binary):
    rows = binary[binary["model"] == "logistic"]
    out = summarise(rows, p="p", y="y", tests="spiegelhalter")
    assert list(out.columns) == ["ece", "mce", "spiegelhalter_statistic", "spiegelhalter_pvalue",
                                 "spiegelhalter_small_n"]
    assert_same(out.iloc[0], "spiegelhalter", calibration_test(rows["p"], rows["y"],
                                                               "spiegelhalter"))
    out = summarise(rows, p="p", y="y", tests=test_spec("skce", n_resamples=50), rng=9)
    assert_same(out.iloc[0], "skce", calibration_test(rows["p"], rows["y"], n_resamples=50,
                                                      rng=group_rng(9, 1, 0)))


def test_categorical_keys_unobserved_groups_are_nan(binary):
    df = binary.copy()
    df["model"] = pd.Categorical(df["model"], categories=["aaa", "logistic", "naive_bayes",
                                                          "random_forest", "zzz"])
    tests = {"skce": test_spec("skce", n_resamples=60), "hl": "hosmer_lemeshow"}
    out = summarise(df.groupby("model", observed=False), p="p", y="y", tests=tests, rng=4)
    assert out["model"].tolist() == list(df["model"].cat.categories)
    small = [c for c in out.columns if c.endswith("_small_n")]
    assert small == ["skce_small_n", "hl_small_n"]
    for g in (0, 4):  # no row: no number, and below every test's least n
        assert out.drop(columns=small).iloc[g, 1:].isna().all()
        assert out.loc[g, small].tolist() == [True, True]
    for g in (1, 2, 3):
        rows = df[df["model"] == out["model"].iloc[g]]
        assert_same(out.iloc[g], "skce", calibration_test(rows["p"], rows["y"], n_resamples=60,
                                                          rng=group_rng(4, 5, g)))
        assert_same(out.iloc[g], "hl", calibration_test(rows["p"], rows["y"], "hosmer_lemeshow"))
    observed = summarise(df.groupby("model", observed=True), p="p", y="y", tests=tests, rng=4)
    # with observed=True the groups are rows 0..2: other positions, other streams
    rows = df[df["model"] == "logistic"]
    assert_same(observed.iloc[0], "skce", calibration_test(rows["p"], rows["y"], n_resamples=60,
                                                           rng=group_rng(4, 3, 0)))


def test_na_rm_drops_rows_as_calibration_test_does(binary):
    df = binary.copy()
    df.loc[[3, 600, 1200], "p"] = np.nan
    df.loc[[10, 700], "y"] = np.nan
    tests = {"skce": test_spec("skce", n_resamples=50), "spiegelhalter": "spiegelhalter"}
    out = summarise(df.groupby("model"), p="p", y="y", tests=tests, rng=6, na_rm=True)
    for g, (_, rows) in enumerate(df.groupby("model")):
        for name, opts in (("skce", {"n_resamples": 50, "rng": group_rng(6, 3, g)}),
                           ("spiegelhalter", {})):
            res = calibration_test(rows["p"], rows["y"], name, na_rm=True, **opts)
            assert res.n < len(rows) or g == 2
            assert_same(out.iloc[g], name, res)
    with pytest.raises(InputError, match=r"missing.*group model="):
        summarise(df.groupby("model"), p="p", y="y", tests="spiegelhalter")


def test_importing_a_test_spec_into_a_test_module_collects_nothing(tmp_path):
    """pytest does not take CalibrationTest for a test class of a module that imports it
    (it would warn that it cannot collect a dataclass): pytest on such a module, with
    that warning made an error, collects nothing and fails nothing."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "test_imports_a_spec.py").write_text(
        "from calibr.frame import CalibrationTest  # noqa: F401\n")
    env = dict(os.environ, PYTHONPATH=str(Path(calibr.__file__).resolve().parent.parent))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-W", "error::pytest.PytestCollectionWarning", "test_imports_a_spec.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, run.stdout + run.stderr


# --------------------------------------------------------------------------
# errors


def _two_risks() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["a"] * 8 + ["b"] * 8,
        "p": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] + [0.2] * 4 + [0.7] * 4,
        "y": [0, 0, 1, 0, 1, 1, 0, 1] * 2,
    })


def test_a_group_the_test_refuses_raises_its_error_naming_the_group():
    with pytest.raises(InputError, match=r"needs at least 3 groups of distinct risk.*"
                                         r"\[test 'hosmer_lemeshow'; group model='b'\]$"):
        summarise(_two_risks().groupby("model"), p="p", y="y", tests="hosmer_lemeshow")
    with pytest.raises(InputError, match=r"\[test 'hl'; group model='b'\]$"):
        summarise(_two_risks().groupby("model"), p="p", y="y",
                  tests={"hl": test_spec("hosmer_lemeshow", groups=4)})


def test_binary_only_test_on_multiclass_names_the_group(digits):
    with pytest.raises(InputError, match=r"is for binary outcomes only.*"
                                         r"\[test 'spiegelhalter'; group model='logistic'\]$"):
        summarise(digits.groupby("model"), y="y", p_prefix="p_", tests="spiegelhalter")


@pytest.mark.parametrize(("tests", "err", "match"), [
    ("brier", InputError, r"^`tests` must name calibration tests \('skce', 'skce_block', "
                          r"'consistency', 'spiegelhalter', 'hosmer_lemeshow', 'ks', "
                          r"'kuiper'\); got 'brier'\.$"),
    (["skce", 3], InputError, r"^`tests` must hold calibration test names .* got 3\.$"),
    (5, InputError, r"^`tests` must be a test name, a calibr.test\(\.\.\.\) spec, a list or a "
                    r"dict of them; got int\.$"),
    ({1: "skce"}, InputError, r"^`tests` must map non-empty strings to tests; got the key 1\.$"),
    (["skce", test_spec("skce", n_resamples=5)], InputError,
     r"^`tests` must name each test once; 'skce' appears 2 times\. Name them with a dict"),
    (CalibrationTest("skce", {"n_resamples": 0}), InputError,
     r"^`n_resamples` must be an integer from 1 to 10,000,000; got 0\.$"),
    (CalibrationTest("nope"), InputError, r"^`tests` must name calibration tests .* got 'nope'"),
])
def test_bad_tests_raise_before_anything_is_computed(monkeypatch, binary, tests, err, match):
    import calibr.frame as frame

    def never(*args, **kwargs):  # pragma: no cover - the point is that it is not called
        raise AssertionError("computed")

    monkeypatch.setattr(frame, "calibration_test", never)
    monkeypatch.setattr(frame, "groups_of", never)
    with pytest.raises(err, match=match):
        summarise(binary.groupby("model"), p="p", y="y", tests=tests)


@pytest.mark.parametrize(("call", "err", "match"), [
    (lambda: test_spec("nope"), InputError,
     r"^`method` must name calibration tests \(.*\); got 'nope'\.$"),
    (lambda: test_spec("skce", foo=1), InputError,
     r"^The test 'skce' has no option 'foo'; its options are n_resamples, bandwidth, type, "
     r"metric, bins, estimator, groups, ddof\.$"),
    (lambda: test_spec("skce", rng=1), InputError,
     r"^The option 'rng' of test 'skce' is set by summarise\(\) \(`rng`\)"),
    (lambda: test_spec("ks", weights=[1, 2]), InputError,
     r"^The option 'weights' of test 'ks' is set by summarise\(\) \(`weights`\)"),
    (lambda: test_spec("skce", classes=[0, 1]), InputError,
     r"^The option 'classes' of test 'skce' is set by summarise\(\) \(its data arguments\)"),
    (lambda: test_spec("consistency", metric="brier"), InputError, r"^`metric` must be one of"),
    (lambda: test_spec("hosmer_lemeshow", groups=2), InputError,
     r"^`groups` must be an integer from 3 to 100,000; got 2\.$"),
    (lambda: test_spec("skce", bandwidth=-1), InputError, r"^`bandwidth` must be"),
])
def test_bad_test_specs(call, err, match):
    with pytest.raises(err, match=match):
        call()


@pytest.mark.parametrize(("rng", "err", "match"), [
    (-1, InputError, r"^`rng` must be None, a nonnegative integer seed or a "
                     r"numpy.random.Generator; got -1\.$"),
    (1.5, InputTypeError, r"^`rng` must be None, a nonnegative integer seed or a "
                          r"numpy.random.Generator; got float\.$"),
    (np.random.RandomState(0), InputTypeError, r"got RandomState\.$"),
])
def test_bad_rng(binary, rng, err, match):
    with pytest.raises(err, match=match):
        summarise(binary.groupby("model"), p="p", y="y", tests="skce", rng=rng)


def test_test_columns_must_not_clash(binary):
    with pytest.raises(InputError, match=r"^The test column 'skce_pvalue' has the name of a "
                                         r"metric column"):
        summarise(binary, p="p", y="y", metrics={"skce_pvalue": "ece"}, tests="skce")
    df = binary.assign(spiegelhalter_pvalue=1)
    with pytest.raises(InputError, match=r"^The test column 'spiegelhalter_pvalue' has the "
                                         r"name of a group key"):
        summarise(df.groupby("spiegelhalter_pvalue"), p="p", y="y", tests="spiegelhalter")


def test_spec_is_public_lazy_and_not_a_pytest_test():
    assert calibr.test is test_spec and "test" in calibr.__all__
    assert test_spec.__test__ is False and CalibrationTest.__test__ is False
    spec = calibr.test("consistency", metric="mce", n_resamples=500)
    assert spec == CalibrationTest("consistency", {"metric": "mce", "n_resamples": 500})


def test_input_is_not_modified(binary):
    df = binary.copy()
    summarise(df.groupby("model"), p="p", y="y", tests="skce_block")
    pd.testing.assert_frame_equal(df, binary)


@pytest.mark.parametrize("options", [None, [("n_resamples", 5)], "n_resamples=5"])
def test_the_options_of_a_test_spec_must_be_a_dict(options):
    """summarise() refuses a CalibrationTest whose options are not a dict, naming the test
    and the type."""
    df = pd.DataFrame({"p": [0.2, 0.7, 0.4], "y": [0, 1, 1]})
    with pytest.raises(InputError, match=r"^The options of test 'skce' must be a dict; got "
                                         rf"{type(options).__name__}\.$"):
        calibr.summarise(df, "p", "y", metrics="ece", tests=[CalibrationTest("skce", options)],
                         rng=0)


def test_a_generator_that_cannot_spawn_streams_is_refused_by_name():
    """A Generator on a legacy-seeded bit generator (no seed sequence) cannot give each
    group its own stream; summarise() refuses it and says so."""
    legacy = np.random.Generator(np.random.RandomState(0)._bit_generator)
    df = pd.DataFrame({"p": [0.2, 0.7, 0.4], "y": [0, 1, 1]})
    with pytest.raises(calibr.InputTypeError, match=r"this Generator cannot spawn independent "
                                                    r"streams for the groups\.$"):
        calibr.summarise(df, "p", "y", metrics="ece", tests="spiegelhalter", rng=legacy)


# --------------------------------------------------------------------------
# calibr report --test METHOD --seed N


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_bundled_data_csv_equals_calibration_test(capsys, binary):
    code, out, err = run(capsys, "report", "--example", "breast_cancer", "--test",
                         "skce(n_resamples=100),spiegelhalter", "--test", "hosmer_lemeshow",
                         "--seed", "3", "-f", "csv")
    assert code == 0 and err == ""
    rep = pd.read_csv(io.StringIO(out))
    assert list(rep.columns)[-11:] == [
        "skce(n_resamples=100)_statistic", "skce(n_resamples=100)_pvalue",
        "skce(n_resamples=100)_n_resamples", "skce(n_resamples=100)_small_n",
        "spiegelhalter_statistic", "spiegelhalter_pvalue", "spiegelhalter_small_n",
        "hosmer_lemeshow_statistic", "hosmer_lemeshow_pvalue", "hosmer_lemeshow_small_n",
        "seed"]
    assert (rep["seed"] == 3).all() and (rep["skce(n_resamples=100)_n_resamples"] == 100).all()
    for g, model in enumerate(sorted(binary["model"].unique())):
        assert rep["model"].iloc[g] == model
        rows = binary[binary["model"] == model]
        row = rep.iloc[g].rename(lambda c: c.replace("skce(n_resamples=100)", "skce"))
        assert_same(row, "skce", calibration_test(rows["p"], rows["y"], n_resamples=100,
                                                  rng=group_rng(3, 3, g)))
        assert_same(row, "spiegelhalter", calibration_test(rows["p"], rows["y"], "spiegelhalter"))
        assert_same(row, "hosmer_lemeshow",
                    calibration_test(rows["p"], rows["y"], "hosmer_lemeshow"))


def test_report_table_and_json_state_what_was_done(capsys):
    argv = ["report", "--example", "breast_cancer", "--test",
            "skce(n_resamples=50),consistency(metric=mce,n_resamples=20)"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    header = out.split("\n\n")[0].splitlines()
    assert header[-3] == ("tests: skce(n_resamples=50) = asymptotic SKCE test, 50 bootstrap "
                          "resamples (statistic n/(n-1) SKCE_uq - SKCE_b, often negative, also "
                          "when miscalibrated: read its p-value, not its sign); "
                          "consistency(metric=mce,n_resamples=20) = consistency resampling of mce, "
                          "20 resamples")
    assert header[-1].startswith("small_n: True where a group has fewer rows than its test "
                                 "holds its level from (skce(n_resamples=50) 20, "
                                 "consistency(metric=mce,n_resamples=20) 1000;")
    assert header[-2].startswith("seed: 0 (group g draws from "
                                 "numpy.random.SeedSequence(0).spawn(groups)[g]")
    code, again, _ = run(capsys, *argv)  # the default seed 0: the same report
    assert again == out
    code, out, _ = run(capsys, *argv, "-f", "json")
    rows = json.loads(out)
    assert len(rows) == 3 and all(r["seed"] == 0 for r in rows)
    assert all(r["skce(n_resamples=50)_n_resamples"] == 50 for r in rows)
    assert all(0.0 <= r["consistency(metric=mce,n_resamples=20)_pvalue"] <= 1.0 for r in rows)


def test_report_small_csv_with_groups(capsys, tmp_path):
    rng = np.random.default_rng(1)
    n = 120
    df = pd.DataFrame({"model": rng.choice(["m1", "m2", "m3"], n),
                       "prob": np.round(rng.random(n), 3)})
    df["label"] = (rng.random(n) < df["prob"]).astype(int)
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    out_file = tmp_path / "report.json"
    code, out, err = run(capsys, "report", str(path), "-p", "prob", "-y", "label", "-g", "model",
                         "--test", "consistency(n_resamples=30)", "--test", "skce_block",
                         "--seed", "42", "-o", str(out_file))
    assert (code, out, err) == (0, "", "")
    rows = json.loads(out_file.read_text())
    back = pd.read_csv(path)
    for g, model in enumerate(["m1", "m2", "m3"]):
        sub = back[back["model"] == model]
        row = pd.Series(rows[g]).rename(
            lambda c: c.replace("consistency(n_resamples=30)", "consistency"))
        assert row["model"] == model and row["seed"] == 42
        assert_same(row, "consistency", calibration_test(
            sub["prob"], sub["label"], "consistency", n_resamples=30, rng=group_rng(42, 3, g)))
        assert_same(row, "skce_block", calibration_test(sub["prob"], sub["label"], "skce_block"))


def test_report_multiclass_file(capsys, tmp_path, digits):
    path = tmp_path / "digits.csv"
    digits.to_csv(path, index=False)
    code, out, _ = run(capsys, "report", str(path), "--prob-prefix", "p_", "-g", "model",
                       "--test", "skce(type=confidence,n_resamples=20)", "-f", "csv")
    assert code == 0
    rep = pd.read_csv(io.StringIO(out))
    back = pd.read_csv(path)
    for g, (model, sub) in enumerate(back.groupby("model")):
        assert rep["model"].iloc[g] == model
        res = calibration_test(sub[DIGITS], sub["y"], type="confidence", n_resamples=20,
                               classes=range(10), rng=group_rng(0, 3, g))
        assert rep["skce(type=confidence,n_resamples=20)_pvalue"].iloc[g] == res.pvalue


def _bad(capsys, tmp_path, *argv, match):
    out_file = tmp_path / "out.csv"
    code = main([*argv, "-o", str(out_file)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("calibr: error: ") and err.count("\n") == 1, err
    assert not out_file.exists()
    assert re.search(match, err), err
    assert "`method" not in err and "`tests`" not in err and "`rng`" not in err, err


@pytest.mark.parametrize(("argv", "match"), [
    (["--test", "brier"], r"--test: unknown test 'brier'; the tests are skce, skce_block, "
                          r"consistency, spiegelhalter, hosmer_lemeshow, ks, kuiper\.$"),
    (["--test", "skce(n_resamples=0)"], r"--test: 'skce\(n_resamples=0\)': `n_resamples` must "
                                        r"be an integer from 1 to 10,000,000; got 0\.$"),
    (["--test", "skce(foo=1)"], r"--test: the test 'skce\(foo=1\)' has no option 'foo'"),
    (["--test", "skce(rng=1)"], r"--test: 'rng' is not an option of a test .* --seed sets it"),
    (["--test", "skce(na_rm=True)"], r"--na-rm sets it for all tests"),
    (["--test", "skce,skce"], r"--test: 'skce' appears twice\.$"),
    (["--test", "skce(n_resamples=5"], r"--test: unbalanced parentheses"),
    (["--test", "skce,"], r"--test: empty entry"),
    (["--test", "skce", "--seed", "-1"], r"--seed must be a nonnegative integer; got -1\.$"),
    (["--seed", "x"], r"argument --seed: invalid int value: 'x'"),
    (["--test", "skce", "--per-bin"], r"--test .* does not apply to --per-bin\.$"),
    (["--example", "digits", "--test", "spiegelhalter"],
     r"--test spiegelhalter is for binary outcomes only \(one --prob column\); bundled example "
     r"data digits has 10 probability columns\.$"),
])
def test_report_bad_values(capsys, tmp_path, argv, match):
    _bad(capsys, tmp_path, "report", *argv, match=match)


def test_report_group_refused_by_a_test(capsys, tmp_path):
    path = tmp_path / "two.csv"
    _two_risks().to_csv(path, index=False)
    _bad(capsys, tmp_path, "report", str(path), "-g", "model", "--test", "hosmer_lemeshow",
         match=r"--test hosmer_lemeshow needs at least 3 groups of distinct risk.*"
               r"\[test 'hosmer_lemeshow'; group model='b'\]$")


# --------------------------------------------------------------------------
# small samples: each test's least n (docs/calibration_tests.md, "Small samples")

def test_min_n_is_the_simulated_least_n_of_each_method():
    """The table of calibr._inference.calibration_tests.MIN_N: one entry per method, the values
    validation/simulate_small_n.py gives (docs/calibration_tests.md)."""
    from calibr._inference.calibration_tests import MIN_N, TEST_METHODS

    assert set(MIN_N) == set(TEST_METHODS)
    assert MIN_N == {"skce": 20, "skce_block": 20, "consistency": 1000, "spiegelhalter": 5,
                     "hosmer_lemeshow": 5, "ks": 5, "kuiper": 5}


@pytest.mark.parametrize(("method", "least"), [("skce", 20), ("spiegelhalter", 5),
                                               ("skce_block", 20)])
def test_a_result_below_its_methods_least_n_says_so(method, least):
    gen = np.random.default_rng(4)
    p = gen.uniform(0.1, 0.9, least)
    y = (gen.random(least) < p).astype(int)
    assert not calibration_test(p, y, method, n_resamples=9, rng=0).small_n
    assert calibration_test(p[:-1], y[:-1], method, n_resamples=9, rng=0).small_n


def test_summarise_flags_a_test_run_below_its_least_n():
    """``<name>_small_n``: True for the group of 4 rows (below 20 for skce, 5 for
    spiegelhalter), False for the group of 60, True for an unobserved group (0 rows)."""
    gen = np.random.default_rng(2)
    p = gen.uniform(0.1, 0.9, 64)
    df = pd.DataFrame({"g": pd.Categorical(["tiny"] * 4 + ["big"] * 60,
                                           categories=["big", "tiny", "none"]),
                       "p": p, "y": (gen.random(64) < p).astype(int)})
    got = summarise(df.groupby("g", observed=False), "p", "y", metrics="ece",
                    tests=[test_spec("skce", n_resamples=99), "spiegelhalter"], rng=0)
    assert list(got.columns) == ["g", "ece", "skce_statistic", "skce_pvalue", "skce_small_n",
                                 "spiegelhalter_statistic", "spiegelhalter_pvalue",
                                 "spiegelhalter_small_n"]
    assert got["skce_small_n"].dtype == bool and got["skce_pvalue"].isna().tolist()[2]
    assert got["skce_small_n"].tolist() == [False, True, True]
    assert got["spiegelhalter_small_n"].tolist() == [False, True, True]
    # at least 5 rows: spiegelhalter holds its level, skce (20) still does not
    got = summarise(df.iloc[:5].assign(g="five").groupby("g"), "p", "y", metrics="ece",
                    tests=[test_spec("skce", n_resamples=99), "spiegelhalter"], rng=0)
    assert (bool(got["skce_small_n"][0]), bool(got["spiegelhalter_small_n"][0])) == (True,
                                                                                        False)


def test_report_states_each_tests_least_n_and_flags_small_groups(capsys, tmp_path):
    gen = np.random.default_rng(2)
    p = np.round(gen.uniform(0.1, 0.9, 64), 4)
    pd.DataFrame({"g": ["tiny"] * 4 + ["big"] * 60, "p": p,
                  "y": (gen.random(64) < p).astype(int)}).to_csv(tmp_path / "d.csv",
                                                                 index=False)
    assert main(["report", str(tmp_path / "d.csv"), "--by", "g", "--test", "skce,spiegelhalter",
                 "-f", "csv"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert got["skce_small_n"].tolist() == [False, True]
    assert main(["report", str(tmp_path / "d.csv"), "--by", "g", "--test",
                 "skce,spiegelhalter"]) == 0
    out = capsys.readouterr().out
    assert ("small_n: True where a group has fewer rows than its test holds its level from "
            "(skce 20, spiegelhalter 5; docs/calibration_tests.md, \"Small samples\")") in out
