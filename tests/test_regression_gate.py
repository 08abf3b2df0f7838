"""Calibration as a regression test: the pytest plugin (``calibr/pytest_plugin.py``),
``calibr compare`` (``calibr/cli/_compare.py``) and the simulation of both gates
(``validation/simulate_gate.py``); ``docs/regression_gate.md`` has the rules.

The plugin is run in inner pytest sessions (``pytester``), which find it through
the ``pytest11`` entry point (one test checks that it is registered), or through
``-p calibr.pytest_plugin`` in a checkout that was not reinstalled since the
entry point was added. Every data set has a fixed seed.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import math
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calibr
from calibr import InputError
from calibr.cli import _compare
from calibr.pytest_plugin import CalibrationRegressionFixture

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent


def _entry_point() -> list:
    return [ep for ep in entry_points(group="pytest11") if ep.value == "calibr.pytest_plugin"]


def _plugin_args() -> list[str]:
    """Nothing when the entry point loads the plugin, else ``-p calibr.pytest_plugin``."""
    return [] if _entry_point() else ["-p", "calibr.pytest_plugin"]


def test_the_plugin_is_registered_through_the_pytest11_entry_point():
    (ep,) = _entry_point()
    assert ep.name == "calibr"
    assert ep.load() is sys.modules["calibr.pytest_plugin"]


def test_the_plugin_module_imports_no_numerics(tmp_path):
    """pytest imports the plugin at start-up in every project with calibr installed."""
    code = ("import sys, calibr.pytest_plugin\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'numba', 'scipy', "
            "'pytest_regressions') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------
# the plugin in inner pytest sessions

_TEST_MODULE = '''
import numpy as np
import pandas as pd

def predictions(slope, seed=1, resample=None):
    rng = np.random.default_rng(seed)
    n = 1500
    x = rng.standard_normal(n)
    y = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    p = 1 / (1 + np.exp(-slope * x))
    df = pd.DataFrame({{"model": np.repeat(["a", "b"], n // 2), "p": p, "y": y}})
    if resample is not None:  # a bootstrap resample of the rows, within each model
        gen = np.random.default_rng(resample)
        half = n // 2
        df = df.iloc[np.concatenate([gen.integers(0, half, half),
                                     half + gen.integers(0, half, half)])]
    return df

def test_calibration(calibration_regression):
    calibration_regression.check(predictions({slope}, resample={resample}), p="p", y="y",
                                 by="model", metrics=["ece", "mce"], {options})
'''


@pytest.fixture(autouse=True, scope="module")
def _warm() -> None:
    """Import and load, in this process, everything the inner sessions run: pytester's
    in-process runs drop the modules a run imported, and numba cannot import its
    lazily loaded registries twice."""
    df = pd.DataFrame({"m": ["a", "a", "b", "b"], "p": [0.1, 0.8, 0.3, 0.6], "y": [0, 1, 0, 1]})
    calibr.summarise(df.groupby("m"), p="p", y="y", metrics=["ece", "mce"])
    calibr.bootstrap(df["p"], df["y"], "ece", n_resamples=9, rng=0)
    calibr.bootstrap(df["p"], df["y"], "mce", n_resamples=9, rng=0)
    import pytest_regressions.common  # noqa: F401


def _inner_predictions(slope: float) -> pd.DataFrame:
    """The data of the inner test module, computed here."""
    ns: dict = {}
    exec(_TEST_MODULE.split("def test_calibration")[0].replace("{{", "{").replace("}}", "}"),
         ns)
    return ns["predictions"](slope)


def _write(pytester, slope=1.0, resample=None, options="tolerance=1e-9"):
    pytester.makepyfile(test_model=_TEST_MODULE.format(slope=slope, resample=resample,
                                                       options=options))
    return pytester.path / "test_model" / "test_calibration.csv"


def _run(pytester, *args):
    return pytester.runpytest(*_plugin_args(), "-p", "no:cacheprovider", *args)


def test_first_run_writes_the_snapshot_and_fails_then_passes(pytester):
    snapshot = _write(pytester)
    first = _run(pytester)
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*File not found in data directory, created:*",
                                f"*- {snapshot}"])
    table = pd.read_csv(snapshot)
    assert list(table.columns) == ["model", "metric", "n", "value"]
    assert table[["model", "metric"]].values.tolist() == [
        ["a", "ece"], ["a", "mce"], ["b", "ece"], ["b", "mce"]]
    assert table["n"].tolist() == [750] * 4
    # the values are calibr.summarise's, at 17 digits (read back exactly)
    want = calibr.summarise(_inner_predictions(1.0).groupby("model"), p="p", y="y",
                            metrics=["ece", "mce"])
    assert table["value"].tolist() == want[["ece", "mce"]].to_numpy().ravel().tolist()
    _run(pytester).assert_outcomes(passed=1)


def test_absolute_mode_fails_on_a_worse_metric_and_keeps_the_snapshot(pytester):
    snapshot = _write(pytester)
    _run(pytester).assert_outcomes(failed=1)
    before = snapshot.read_bytes()
    _write(pytester, slope=1.6)  # an overconfident model
    worse = _run(pytester)
    worse.assert_outcomes(failed=1)
    worse.stdout.fnmatch_lines([
        "*Calibration differs from the snapshot: 4 value(s) further than the tolerance*",
        "*To update the snapshot, use --force-regen option.*",
        f"*snapshot: {snapshot}",
        "*model metric *snapshot *obtained *diff *tolerance",
        "*a *ece *",
    ])
    assert snapshot.read_bytes() == before  # never rewritten without --force-regen
    # --force-regen rewrites it (and fails once, as pytest-regressions does); then it passes
    regen = _run(pytester, "--force-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines(["*Files differ and --force-regen set, regenerating file at:*"])
    assert snapshot.read_bytes() != before
    _run(pytester).assert_outcomes(passed=1)
    # --regen-all rewrites every snapshot and passes
    regenerated = snapshot.read_bytes()
    _write(pytester, slope=1.2)
    _run(pytester, "--regen-all").assert_outcomes(passed=1)
    assert snapshot.read_bytes() != regenerated
    _run(pytester).assert_outcomes(passed=1)


def test_absolute_mode_passes_within_the_tolerance(pytester):
    _write(pytester, options="tolerance=1e-9")
    _run(pytester).assert_outcomes(failed=1)
    _write(pytester, slope=1.0 + 1e-12, options="tolerance=1e-9")
    _run(pytester).assert_outcomes(passed=1)
    _write(pytester, slope=1.0 + 1e-6, options="tolerance=1e-12")
    _run(pytester).assert_outcomes(failed=1)


STATISTICAL = 'mode="statistical", confidence_level=0.95, n_resamples=499, rng=3'


def test_statistical_mode_passes_a_resample_and_fails_a_worsening(pytester):
    snapshot = _write(pytester, options=STATISTICAL)
    _run(pytester).assert_outcomes(failed=1)
    table = pd.read_csv(snapshot)
    assert list(table.columns) == ["model", "metric", "n", "value", "low", "high", "level",
                                   "method", "n_resamples", "seed"]
    assert set(table["level"]) == {0.95} and set(table["n_resamples"]) == {499}
    assert set(table["seed"]) == {3} and set(table["method"]) == {"percentile"}
    # each row is calibr.bootstrap on the group's rows with the stored seed
    a = _inner_predictions(1.0).query("model == 'a'")
    res = calibr.bootstrap(a["p"], a["y"], "ece", n_resamples=499, rng=3)
    row = table.iloc[0]
    assert (row["low"], row["high"]) == (res.confidence_interval.low,
                                         res.confidence_interval.high)
    assert row["value"] == calibr.ece(a["p"], a["y"])
    before = snapshot.read_bytes()

    # Resamples of the same model's rows pass, unless a value lands above its own
    # 97.5% bootstrap quantile: for the seeds 11 to 30 that happens to 4 of the 80
    # values (seeds 11, 16, 18, 26); validation/simulate_gate.py measures the rate.
    for seed in (12, 13):
        _write(pytester, resample=seed, options=STATISTICAL)
        _run(pytester).assert_outcomes(passed=1)
    _write(pytester, slope=0.999, options=STATISTICAL)  # another value, not worse: passes
    _run(pytester).assert_outcomes(passed=1)

    _write(pytester, slope=1.8, options=STATISTICAL)  # injected overconfidence fails
    worse = _run(pytester)
    worse.assert_outcomes(failed=1)
    worse.stdout.fnmatch_lines([
        "*Calibration is worse than the snapshot: * value(s) above the upper end (high) of "
        "the snapshot's 95% bootstrap interval*",
        "*model metric *snapshot *obtained *diff *low *high",
    ])
    assert snapshot.read_bytes() == before


def test_statistical_mode_refuses_a_snapshot_made_otherwise(pytester):
    snapshot = _write(pytester, options=STATISTICAL)
    _run(pytester).assert_outcomes(failed=1)
    _write(pytester, options='mode="statistical", confidence_level=0.9, n_resamples=499,'
                                        ' rng=3')
    other = _run(pytester)
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines([f"*The snapshot {snapshot} was made with "
                                "confidence_level=0.95, n_resamples=499, rng=3*; the check "
                                "asks for confidence_level=0.9*"])
    # an absolute snapshot has no intervals
    (pytester.path / "test_model" / "test_calibration.csv").unlink()
    _write(pytester)
    _run(pytester).assert_outcomes(failed=1)
    _write(pytester, options=STATISTICAL)
    _run(pytester).stdout.fnmatch_lines(["*has no bootstrap intervals*"])


def test_new_or_missing_groups_fail(pytester):
    _write(pytester)
    _run(pytester).assert_outcomes(failed=1)
    pytester.makepyfile(test_model=_TEST_MODULE.format(slope=1.0, resample=None,
                                                       options="tolerance=1e-9").replace(
        '["a", "b"]', '["a", "c"]'))
    out = _run(pytester)
    out.assert_outcomes(failed=1)
    out.stdout.fnmatch_lines(["*The groups or metrics differ from the snapshot.*",
                              "*- only in the snapshot: model=b, metric ece*",
                              "*- only in the new data: model=c, metric ece*"])


# --------------------------------------------------------------------------
# bad arguments: named, and nothing written

@pytest.fixture
def fixture_object(request, tmp_path):
    return CalibrationRegressionFixture(tmp_path / "copy", tmp_path / "data", request)


_DF = pd.DataFrame({"g": ["a", "a", "b", "b"], "p": [0.1, 0.8, 0.3, 0.6], "y": [0, 1, 0, 1]})

BAD = [
    (dict(mode="exact"), calibr.InputError, '`mode` must be "absolute" or "statistical"; '
     "got 'exact'."),
    (dict(tolerance=-1), calibr.InputError, r"`tolerance` must be a finite number >= 0; "
     r"got -1\."),
    (dict(tolerance="1e-3"), calibr.InputError, "`tolerance` must be a finite number"),
    (dict(confidence_level=0.9), calibr.InputError,
     '`confidence_level` applies to mode="statistical"'),
    (dict(rng=0), calibr.InputError, '`rng` applies to mode="statistical"'),
    (dict(min_n=5), calibr.InputError, '`min_n` applies to mode="statistical"'),
    (dict(mode="statistical", min_n=-1), calibr.InputError,
     r"`min_n` must be a nonnegative integer; got -1\."),
    (dict(mode="statistical", tolerance=0.1), calibr.InputError,
     '`tolerance` applies to mode="absolute"'),
    (dict(mode="statistical", confidence_level=1.5), calibr.InputError,
     r"`confidence_level` must be a number strictly between 0 and 1; got 1\.5\."),
    (dict(mode="statistical", n_resamples=0), calibr.InputError,
     "`n_resamples` must be an integer from 1 to"),
    (dict(mode="statistical", rng=np.random.default_rng(0)), calibr.InputTypeError,
     r"`rng` must be an integer seed >= 0 \(the snapshot stores it\); got Generator\."),
    (dict(mode="statistical", rng=-2), calibr.InputError, "`rng` must be an integer seed"),
    (dict(by="nope"), calibr.InputError, "`by` must name columns of `data`; 'nope' is not one."),
    (dict(basename="x", fullpath="y.csv"), calibr.InputError,
     "Give the snapshot by `basename` or by `fullpath`, not both."),
    (dict(metrics="bogus"), calibr.InputError, "`metrics` must name calibr metrics"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), BAD,
                         ids=[next(iter(k)) + str(i) for i, (k, _, _) in enumerate(BAD)])
def test_bad_arguments_are_named_and_nothing_is_written(fixture_object, tmp_path, kwargs,
                                                        error, match):
    with pytest.raises(error, match=match):
        fixture_object.check(_DF, p="p", y="y", **kwargs)
    assert not list(tmp_path.rglob("*.csv"))


def test_data_must_be_a_frame_and_by_must_not_clash(fixture_object, tmp_path):
    with pytest.raises(calibr.InputTypeError, match=r"`data` must be a pandas DataFrame; "
                                                     r"got dict\."):
        fixture_object.check({"p": [0.5]}, p="p", y="y")
    with pytest.raises(calibr.InputError, match="`by`: the column 'metric' has the name of a "
                                                "column of the snapshot"):
        fixture_object.check(_DF.rename(columns={"g": "metric"}), p="p", y="y", by="metric")
    with pytest.raises(calibr.InputError, match=r"must lie in \[0, 1\]"):
        fixture_object.check(_DF.assign(p=[0.1, 1.5, 0.3, 0.6]), p="p", y="y", by="g")
    assert not list(tmp_path.rglob("*.csv"))


def _snapshot(path, rows, columns=("metric", "n", "value")):
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False, lineterminator="\n")
    return path


def test_plugin_settings_defaults_and_bounds():
    """The plugin's documented defaults (tolerance 1e-10; level 0.95, 999 resamples, seed
    0) and bounds: a tolerance of 0 or 0.5 and one resample are taken, a bool seed is
    refused, and so is an option of the statistical mode in the absolute one."""
    from calibr.pytest_plugin import CalibrationRegressionFixture as F

    assert F._settings("absolute", None, None, None, None) == {"mode": "absolute",
                                                               "tolerance": 1e-10}
    assert F._settings("absolute", 0, None, None, None)["tolerance"] == 0.0
    assert F._settings("absolute", 0.5, None, None, None)["tolerance"] == 0.5
    assert F._settings("statistical", None, None, None, None) == {
        "mode": "statistical", "level": 0.95, "n_resamples": 999, "seed": 0, "min_n": 100}
    assert F._settings("statistical", None, 0.5, 1, 7, 0) == {
        "mode": "statistical", "level": 0.5, "n_resamples": 1, "seed": 7, "min_n": 0}
    with pytest.raises(calibr.InputTypeError, match=r"^`rng` must be an integer seed >= 0 "
                                                    r"\(the snapshot stores it\); got bool\.$"):
        F._settings("statistical", None, None, None, True)
    with pytest.raises(InputError, match=r'^`n_resamples` applies to mode="statistical"'):
        F._settings("absolute", None, None, 5, None)


def test_plugin_by_names_key_columns_once():
    """``by`` is a column key or a list of them (a list is not one key; an unhashable key
    gets the message, not pandas' TypeError), each column named once."""
    from calibr.pytest_plugin import CalibrationRegressionFixture as F

    df = pd.DataFrame({"g": ["a"], 0: [1], "p": [0.5], "y": [1]})
    assert F._keys(df, None) == []
    assert F._keys(df, "g") == ["g"]
    assert F._keys(df, ["g", 0]) == ["g", 0]
    assert F._keys(df, ("g",)) == ["g"]
    assert F._keys(df, 0) == [0]
    with pytest.raises(InputError, match=r"^`by` must name columns of `data`; \['g'\] is not "
                                         r"one\.$"):
        F._keys(df, [["g"]])
    with pytest.raises(InputError, match=r"^`by` must name each column once; got "
                                         r"\['g', 'g'\]\.$"):
        F._keys(df, ["g", "g"])


def test_plugin_basename_must_be_a_non_empty_string(fixture_object, tmp_path):
    """``basename`` must be a non-empty string; a bad one is named, and nothing is written."""
    fx = fixture_object
    df = pd.DataFrame({"p": [0.1, 0.8], "y": [0, 1]})
    for bad, shown in (("", "''"), (3, "3")):
        with pytest.raises(InputError, match=f"^`basename` must be a non-empty string; got "
                                             f"{shown}\\.$"):
            fx.check(df, p="p", y="y", basename=bad)
    assert not list(tmp_path.rglob("*.csv"))


def test_plugin_reads_empty_cells_as_nan_and_names_a_missing_column(tmp_path):
    """A snapshot's empty cells read as NaN and its numbers as floats; a snapshot without a
    needed column (``value``, or a key of ``by``) fails with a message naming it."""
    from calibr.pytest_plugin import _read

    path = _snapshot(tmp_path / "s.csv", [["ece", 3, ""], ["mce", 3, 0.25]])
    rows = _read(path, [])
    assert math.isnan(rows[0]["value"]) and rows[1]["value"] == 0.25 and rows[1]["n"] == 3.0
    assert rows[0]["metric"] == "ece" and "low" not in rows[0]
    bad = _snapshot(tmp_path / "b.csv", [["ece", 3]], columns=("metric", "n"))
    with pytest.raises(AssertionError, match=r"^The snapshot .*b\.csv has no column 'value'; "
                                             r"its columns are 'metric', 'n'\."):
        _read(bad, [])
    with pytest.raises(AssertionError, match=r"has no column 'g'"):
        _read(path, ["g"])


def test_plugin_comparison_boundaries(fixture_object, tmp_path):
    """The documented boundaries of the comparison: a difference equal to the tolerance
    passes and one ulp more fails; a NaN against a number fails, either way round; in
    the statistical mode a value equal to the snapshot's upper end passes, above it or
    missing fails (its lower end for a metric whose higher values are better)."""
    fx = fixture_object
    absolute = {"mode": "absolute", "tolerance": 0.25}
    old = _snapshot(tmp_path / "old.csv", [["ece", 3, 0.5], ["mce", 3, ""]])
    same = _snapshot(tmp_path / "same.csv", [["ece", 3, 0.75], ["mce", 3, ""]])
    fx._compare(same, old, old, [], absolute)  # |0.75 - 0.5| = 0.25: passes
    for rows in ([["ece", 3, 0.75 + 2**-52], ["mce", 3, ""]], [["ece", 3, ""], ["mce", 3, ""]],
                 [["ece", 3, 0.5], ["mce", 3, 0.5]]):
        new = _snapshot(tmp_path / "new.csv", rows)
        with pytest.raises(AssertionError, match=r"^Calibration differs from the snapshot: "
                                                 r"1 value\(s\) further than the tolerance"):
            fx._compare(new, old, old, [], absolute)
    cols = ("metric", "n", "value", "low", "high", "level", "method", "n_resamples", "seed")
    stat = {"mode": "statistical", "level": 0.9, "n_resamples": 9, "seed": 1, "min_n": 3}
    old = _snapshot(tmp_path / "old.csv", [["ece", 3, 0.5, 0.25, 0.625, 0.9, "percentile", 9,
                                            1]], cols)
    at_high = _snapshot(tmp_path / "new.csv", [["ece", 3, 0.625, "", "", "", "", "", ""]],
                        cols)
    fx._compare(at_high, old, old, [], stat)
    for value in (0.625 + 2**-53, ""):
        new = _snapshot(tmp_path / "new.csv", [["ece", 3, value, "", "", "", "", "", ""]],
                        cols)
        with pytest.raises(AssertionError, match=r"^Calibration is worse than the snapshot: "
                                                 r"1 value\(s\) above the upper end"):
            fx._compare(new, old, old, [], stat)
    # higher is better (auroc): a value equal to the lower end passes, below it fails
    higher = {**stat, "higher": {"auroc"}}
    old = _snapshot(tmp_path / "old.csv", [["auroc", 3, 0.75, 0.625, 0.875, 0.9, "percentile",
                                            9, 1]], cols)
    at_low = _snapshot(tmp_path / "new.csv", [["auroc", 3, 0.625, "", "", "", "", "", ""]],
                       cols)
    fx._compare(at_low, old, old, [], higher)
    for value in (0.625 - 2**-53, ""):
        new = _snapshot(tmp_path / "new.csv", [["auroc", 3, value, "", "", "", "", "", ""]],
                        cols)
        with pytest.raises(AssertionError, match=r"; auroc: below its lower end \(low\), "
                                                 r"higher is better\)\.\n"):
            fx._compare(new, old, old, [], higher)


def test_plugin_table_groups_sorted_with_missing_keys_and_observed_only(fixture_object, tmp_path):
    """The plugin's table has its groups in sorted key order, the rows with a missing key
    as a group of their own (as its docstring says), and only the observed categories of
    a categorical key."""
    fx = fixture_object
    settings = {"mode": "absolute", "tolerance": 0.0}
    df = pd.DataFrame({"g": ["b", "b", None, "a", "a"], "p": [0.1, 0.8, 0.3, 0.2, 0.6],
                       "y": [0, 1, 1, 0, 0]})
    table = fx._table(df, "p", "y", ["ece"], ["g"], None, settings)
    assert table["g"].iloc[:2].tolist() == ["a", "b"] and pd.isna(table["g"].iloc[2])
    assert table["n"].tolist() == [2, 2, 1]
    # a: |0 - 0.2| and |0 - 0.6| in two bins; b: 0.1 and 0.2 gaps; the lone 0.3 with y 1
    assert table["value"].tolist() == pytest.approx([0.4, 0.15, 0.7], rel=1e-12)
    df["g"] = pd.Categorical(df["g"], categories=["c", "b", "a"])
    table = fx._table(df, "p", "y", ["ece"], ["g"], None, settings)
    assert table["g"].iloc[:2].tolist() == ["b", "a"] and len(table) == 3


def test_plugin_snapshot_path_without_resolve_check_paths(fixture_object, tmp_path, monkeypatch):
    """With a pytest-regressions older than 2.6 (no ``resolve_check_paths``) the snapshot
    is the full path as given, else the basename or the test's name (non-word characters
    as ``_``) with ``.csv`` in the original data folder."""
    import types

    fx = fixture_object
    monkeypatch.setitem(sys.modules, "pytest_regressions.common",
                        types.ModuleType("pytest_regressions.common"))
    assert fx._source(None, "/x/y.csv") == Path("/x/y.csv")
    assert fx._source("snap", None) == tmp_path / "data" / "snap.csv"
    name = "test_plugin_snapshot_path_without_resolve_check_paths"
    assert fx._source(None, None) == tmp_path / "data" / f"{name}.csv"


# --------------------------------------------------------------------------
# calibr compare

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="calibr")
    sub = parser.add_subparsers(dest="command")
    _compare.add_parser(sub)
    return parser


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    args = _parser().parse_args(["compare", *map(str, argv)])
    status = args.run(args)
    out, err = capsys.readouterr()
    return status, out, err


def test_compare_parser_imports_no_numerics(tmp_path):
    """The command line's parser stays cheap (``calibr --help``), with compare added."""
    code = ("import argparse, sys\n"
            "from calibr.cli import _compare\n"
            "parser = argparse.ArgumentParser()\n"
            "_compare.add_parser(parser.add_subparsers(dest='command'))\n"
            "parser.parse_args(['compare', 'a.csv', 'b.csv', '--key', 'id'])\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'numba', 'scipy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300, check=True)
    assert out.stdout.strip() == "[]"


def _files(tmp_path: Path, slope: float, seed: int = 5, n: int = 3000) -> tuple[Path, Path]:
    """A baseline and a candidate (the same rows, shuffled, with a key column)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    y = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    base = pd.DataFrame({"id": [f"r{i}" for i in range(n)],
                         "seg": rng.choice(["u", "v"], n),
                         "p": 1 / (1 + np.exp(-(x + 0.3 * rng.standard_normal(n)))), "y": y})
    cand = base.assign(p=1 / (1 + np.exp(-slope * (x + 0.3 * rng.standard_normal(n)))))
    cand = cand.iloc[rng.permutation(n)]
    base.to_csv(tmp_path / "base.csv", index=False)
    cand.to_csv(tmp_path / "cand.csv", index=False)
    return tmp_path / "base.csv", tmp_path / "cand.csv"


def test_compare_exit_0_for_the_same_model_matched_by_key(tmp_path, capsys):
    base, cand = _files(tmp_path, slope=1.0)
    status, out, err = _cli(capsys, base, cand, "--key", "id", "--by", "seg",
                            "--n-resamples", "999")
    assert (status, err) == (0, "")
    assert "rows: 3000, matched by --key 'id'" in out
    assert ("method: paired bootstrap (calibr.paired_bootstrap, alternative=\"greater\": the "
            "candidate is worse), percentile, 999 resamples, seed 0") in out
    assert "result: no significant worsening in 2 comparisons (exit status 0)" in out


def test_compare_exit_1_for_a_worse_candidate_with_the_numbers_of_paired_bootstrap(
        tmp_path, capsys):
    base, cand = _files(tmp_path, slope=1.6)
    status, out, err = _cli(capsys, base, cand, "--key", "id", "--by", "seg",
                            "--n-resamples", "499", "--seed", "7", "-f", "csv")
    assert (status, err) == (1, "")
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["seg", *_compare.RESULT_COLUMNS]
    b = pd.read_csv(base)
    c = pd.read_csv(cand).set_index("id").loc[b["id"]]  # the candidate in the baseline's order
    for _, row in got.iterrows():
        rows = (b["seg"] == row["seg"]).to_numpy()
        res = calibr.paired_bootstrap(c["p"].to_numpy()[rows], b["p"].to_numpy()[rows],
                                      b["y"].to_numpy()[rows], "ece", n_resamples=499,
                                      alternative="greater", rng=7)
        assert row["difference"] == pytest.approx(res.estimate, rel=1e-12)
        assert row["pvalue"] == res.pvalue and bool(row["worse"]) is (res.pvalue < 0.05)
    assert got["worse"].all()
    status, out, _ = _cli(capsys, base, cand, "--key", "id", "--n-resamples", "499")
    assert status == 1
    assert "result: the candidate is significantly worse in 1 of 1 comparison: ece" in out


def test_compare_one_file_with_two_columns(tmp_path, capsys):
    base, cand = _files(tmp_path, slope=1.6)
    b = pd.read_csv(base)
    c = pd.read_csv(cand).set_index("id").loc[b["id"]]
    b.assign(p_new=c["p"].to_numpy()).to_csv(tmp_path / "both.csv", index=False)
    common = [tmp_path / "both.csv", "--n-resamples", "499", "-m", "ece,mce(bins=5)"]
    status, out, _ = _cli(capsys, *common, "--p-baseline", "p", "--p-candidate", "p_new")
    assert status == 1 and "p (baseline) and p_new (candidate)" in out
    # the other way round, the candidate is the better model
    status, out, _ = _cli(capsys, *common, "--p-baseline", "p_new", "--p-candidate", "p")
    assert status == 0 and "no significant worsening in 2 comparisons" in out


def test_compare_multiclass_two_files_and_one_file(tmp_path, capsys):
    rng = np.random.default_rng(8)
    n = 900
    p = rng.dirichlet(np.ones(3), n)
    y = np.array([rng.choice(3, p=row) for row in p])
    q = p**2 / (p**2).sum(axis=1, keepdims=True)  # overconfident
    pd.DataFrame({"0": p[:, 0], "1": p[:, 1], "2": p[:, 2], "y": y}).to_csv(
        tmp_path / "a.csv", index=False)
    pd.DataFrame({"0": q[:, 0], "1": q[:, 1], "2": q[:, 2], "y": y}).to_csv(
        tmp_path / "b.csv", index=False)
    want = calibr.paired_bootstrap(q, p, y, "ece", n_resamples=199, alternative="greater",
                                   rng=0, classes=[0, 1, 2])
    status, out, _ = _cli(capsys, tmp_path / "a.csv", tmp_path / "b.csv", "--prob", "0", "1",
                          "2", "--n-resamples", "199", "-f", "csv")
    got = pd.read_csv(io.StringIO(out))
    assert status == 1 and got["difference"].iloc[0] == pytest.approx(want.estimate, rel=1e-12)
    both = pd.DataFrame({"a0": p[:, 0], "a1": p[:, 1], "a2": p[:, 2], "b0": q[:, 0],
                         "b1": q[:, 1], "b2": q[:, 2], "y": y})
    both.to_csv(tmp_path / "both.csv", index=False)
    one = [tmp_path / "both.csv", "--p-baseline", "a0", "a1", "a2", "--p-candidate", "b0",
           "b1", "b2", "--n-resamples", "199", "-f", "csv"]
    # labels 0, 1, 2 are the numbers of the columns a0, a1, a2 (docs/cli.md, "Column
    # lists"), as --classes 0,1,2 says
    for given in ([], ["--classes", "0,1,2"]):
        status, out, _ = _cli(capsys, *one, *given)
        assert status == 1 and pd.read_csv(io.StringIO(out))["pvalue"].iloc[0] == want.pvalue
    named = [tmp_path / "both.csv", "--p-baseline", "a0", "a1", "a2", "--p-candidate", "b0",
             "b1", "b2", "--n-resamples", "199", "-f", "csv"]
    both.rename(columns={"a0": "ax", "a1": "ay", "a2": "az"}).to_csv(tmp_path / "both.csv",
                                                                       index=False)
    named[2:5] = ["ax", "ay", "az"]
    status, out, err = _cli(capsys, *named)  # labels 0, 1, 2 do not name these columns
    assert status == 2 and "pass --classes to give the label of each column" in err


def test_compare_exit_2_for_bad_input_with_one_line(tmp_path, capsys):
    base, cand = _files(tmp_path, slope=1.0, n=200)
    b = pd.read_csv(base)
    b.iloc[[0, 0, *range(2, 200)]].to_csv(tmp_path / "dup.csv", index=False)
    b.iloc[:150].to_csv(tmp_path / "short.csv", index=False)
    b.assign(p=b["p"].where(b.index != 9, 1.5)).to_csv(tmp_path / "bad_p.csv", index=False)
    cases = [
        ((base, cand, "--key", "id"), None),  # fine: checked below with the others
        ((base, tmp_path / "dup.csv", "--key", "id"),
         "--key 'id': the key 'r0' appears more than once in CANDIDATE"),
        ((base, tmp_path / "short.csv", "--key", "id"),
         f"--key 'id': 50 keys of BASELINE {base} are not in CANDIDATE"),
        ((tmp_path / "short.csv", base, "--key", "id"),
         f"--key 'id': 50 keys of CANDIDATE {base} are not in BASELINE"),
        ((base, cand), "--label 'y' differs between the files"),  # shuffled, no --key
        ((base, tmp_path / "short.csv"), "has 200 data rows and CANDIDATE"),
        ((base, tmp_path / "bad_p.csv", "--key", "id"), "--prob of CANDIDATE"),
        ((base, cand, "--key", "nope"), "--key: no column 'nope' in BASELINE"),
        ((base, cand, "--confidence-level", "1.5"),
         "--confidence-level must be a number strictly between 0 and 1"),
        ((base, cand, "--n-resamples", "0"), "--n-resamples must be an integer from 1"),
        ((base, cand, "--seed", "-1"), "--seed must be a nonnegative integer"),
        ((base, cand, "-m", "bogus"), "--metrics: unknown metric 'bogus'"),
        ((base,), "one file holds both models: give --p-baseline COL and --p-candidate COL"),
        ((base, "--p-baseline", "p", "--p-candidate", "p", ), "must name different columns"),
        ((base, "--p-baseline", "p", "--p-candidate", "y", "--key", "id"),
         "--key matches the rows of two files"),
        ((base, tmp_path / "missing.csv"), "missing.csv: no such file."),
        ((base, cand, "--by", "metric"), "--by: no column 'metric'"),
    ]
    for argv, message in cases[1:]:
        status, out, err = _cli(capsys, *argv)
        assert (status, out) == (2, ""), (argv, out, err)
        assert err.startswith("calibr: error: ") and err.count("\n") == 1, err
        assert message in err, (argv, err)
    assert _cli(capsys, *cases[0][0], "--n-resamples", "99")[0] == 0


def _main(capsys, *argv: str) -> tuple[int, str, str]:
    """``calibr compare`` through the whole command line (its parser and error sorting)."""
    from calibr.cli import main

    status = main(["compare", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["-p", "p", "a.csv", "b.csv"],
         "--prob took 'a.csv' and 'b.csv' as column names, but they are files, and BASELINE and "
         "CANDIDATE are missing; put them before the options (calibr compare a.csv b.csv --prob "
         "p) or end the list with -- (calibr compare --prob p -- a.csv b.csv)."),
        (["--by", "seg", "a.csv", "b.csv"],
         "--by took 'a.csv' and 'b.csv' as column names, but they are files, and BASELINE and "
         "CANDIDATE are missing; put them before the options (calibr compare a.csv b.csv --by "
         "seg) or end the list with -- (calibr compare --by seg -- a.csv b.csv)."),
        (["a.csv", "-p", "p", "b.csv"],
         "--prob took 'b.csv' as a column name, but it is a file, and CANDIDATE is missing; put "
         "it before the options (calibr compare a.csv b.csv --prob p) or end the list with -- "
         "(calibr compare a.csv --prob p -- b.csv)."),
        (["--p-baseline", "p", "--p-candidate", "q", "a.csv"],
         "--p-candidate took 'a.csv' as a column name, but it is a file, and BASELINE is "
         "missing; put it before the options (calibr compare a.csv --p-candidate q) or end the "
         "list with -- (calibr compare --p-candidate q -- a.csv)."),
        (["-p", "p"], "the following arguments are required: BASELINE (see `calibr compare "
                      "--help`)"),
        (["a.csv", "b.csv", "--by", "seg,seg"], "--by names the column 'seg' twice."),
        # one file given as both models: the files named, not "the column 'a.csv' twice"
        (["-p", "p", "a.csv", "a.csv"],
         "--prob took 'a.csv' and 'a.csv' as column names, but they are files, and BASELINE and "
         "CANDIDATE are missing; put them before the options (calibr compare a.csv a.csv --prob "
         "p) or end the list with -- (calibr compare --prob p -- a.csv a.csv)."),
        (["a.csv", "b.csv", "--by", "a.csv", "a.csv"], "--by names the column 'a.csv' twice."),
    ],
)
def test_compare_column_lists_that_took_the_files(tmp_path, capsys, monkeypatch, argv, want):
    """A list separated by spaces takes the files that follow it; compare says so instead
    of "BASELINE is required" or reading one file as both models."""
    monkeypatch.chdir(tmp_path)
    frame = pd.DataFrame({"seg": ["u", "v"] * 5, "p": np.linspace(0.1, 0.9, 10),
                          "q": np.linspace(0.2, 0.8, 10), "y": [0, 1] * 5})
    frame.to_csv("a.csv", index=False)
    frame.to_csv("b.csv", index=False)
    assert _main(capsys, *argv) == (2, "", f"calibr: error: {want}\n")


def test_compare_column_lists_by_commas_and_after_the_files(tmp_path, capsys):
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(3), 300)
    y = np.array([rng.choice(3, p=row) for row in p])
    q = p**2 / (p**2).sum(axis=1, keepdims=True)
    frame = pd.DataFrame({"a0": p[:, 0], "a1": p[:, 1], "a2": p[:, 2], "b0": q[:, 0],
                          "b1": q[:, 1], "b2": q[:, 2], "y": y})
    frame.to_csv(tmp_path / "both.csv", index=False)
    common = ["--n-resamples", "99", "--classes", "0,1,2", "-f", "csv"]
    outs = [_main(capsys, tmp_path / "both.csv", *common, *cols) for cols in (
        ["--p-baseline", "a0", "a1", "a2", "--p-candidate", "b0", "b1", "b2"],
        ["--p-baseline", "a0,a1,a2", "--p-candidate", "b0,b1,b2"],
        ["--p-baseline", "a0,a1", "--p-baseline", "a2", "--p-candidate", "b0", "b1,b2"],
    )]
    outs.append(_main(capsys, *common, "--p-baseline", "a0,a1,a2", "--p-candidate", "b0", "b1",
                      "b2", "--", tmp_path / "both.csv"))
    assert all(o == outs[0] for o in outs) and outs[0][0] == 1
    want = calibr.paired_bootstrap(q, p, y, "ece", n_resamples=99, alternative="greater",
                                   rng=0, classes=[0, 1, 2])
    assert pd.read_csv(io.StringIO(outs[0][1]))["pvalue"].iloc[0] == want.pvalue


def test_compare_table_numbers_and_a_pvalue_below_the_resolution(tmp_path, capsys):
    """The table: 4 significant digits, and p = 0 of 9999 replicates as "< 0.0001" (not 0.0,
    0.0000 or 0.000100); the CSV keeps every digit."""
    bc = calibr.datasets.load_breast_cancer_predictions()
    for model in ("logistic", "naive_bayes"):
        bc[bc["model"] == model][["id", "p", "y"]].to_csv(tmp_path / f"{model}.csv", index=False)
    argv = [tmp_path / "logistic.csv", tmp_path / "naive_bayes.csv", "--key", "id", "-m",
            "ece,mce,skce"]
    status, out, _ = _main(capsys, *argv)
    assert status == 1
    assert out.split("\n\n")[1] == (
        "metric   n small_n  baseline candidate difference    ci_low ci_high   pvalue worse\n"
        "   ece 569      no 1.860e-02  0.062108   0.043507 0.0239014     inf < 0.0001   yes\n"
        "   mce 569      no 3.546e-01  0.807308   0.452693 0.2199121     inf   0.0131   yes\n"
        "  skce 569      no 7.174e-06  0.001338   0.001331 0.0006417     inf < 0.0001   yes")
    status, out, _ = _main(capsys, *argv, "-f", "csv")
    got = pd.read_csv(io.StringIO(out))
    b = bc[bc["model"] == "logistic"]
    c = bc[bc["model"] == "naive_bayes"].set_index("id").loc[b["id"]]  # matched by --key
    res = calibr.paired_bootstrap(c["p"].to_numpy(), b["p"].to_numpy(), b["y"].to_numpy(),
                                  "mce", n_resamples=9999, alternative="greater", rng=0)
    assert got["pvalue"].tolist()[::2] == [0.0, 0.0] and got["pvalue"][1] == res.pvalue
    assert got["ci_low"][1] == res.confidence_interval.low


def _two_files(tmp_path, n=60, seed=3, power=1.0, **extra):
    """A baseline and a candidate for the same rows (a key column ``id``)."""
    gen = np.random.default_rng(seed)
    p = np.round(gen.random(n), 3)
    y = (gen.random(n) < p).astype(int)
    base = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "p": p, "y": y, **extra})
    cand = base.assign(p=np.round(p**power, 6))
    base.to_csv(tmp_path / "base.csv", index=False)
    cand.to_csv(tmp_path / "cand.csv", index=False)
    return base, cand


def _error(capsys, *argv):
    status, out, err = _cli(capsys, *argv)
    assert (status, out) == (2, ""), err
    assert err.startswith("calibr: error: ") and err.count("\n") == 1, err
    return err[len("calibr: error: "):].rstrip("\n")


def test_compare_level_and_resamples_bounds(tmp_path, capsys, monkeypatch):
    """--confidence-level must lie strictly between 0 and 1 (0, 1, NaN and -0.5 are refused
    with the message of --confidence-level, not the bootstrap's of ``confidence_level``);
    --n-resamples runs from 1 to MAX_RESAMPLES, both ends included."""
    from calibr import _input

    _two_files(tmp_path)
    files = (tmp_path / "base.csv", tmp_path / "cand.csv")
    for level, shown in (("0", "0.0"), ("1", "1.0"), ("nan", "nan"), ("-0.5", "-0.5")):
        assert _error(capsys, *files, "--confidence-level", level) == (
            f"--confidence-level must be a number strictly between 0 and 1; got {shown}.")
    assert _cli(capsys, *files, "--n-resamples", "1")[0] in (0, 1)
    monkeypatch.setattr(_input, "MAX_RESAMPLES", 5)
    assert _error(capsys, *files, "--n-resamples", "6") == (
        "--n-resamples must be an integer from 1 to 5; got 6.")
    status, out, _ = _cli(capsys, *files, "--n-resamples", "5")
    assert status in (0, 1) and "percentile, 5 resamples, seed 0" in out


def test_compare_default_resamples_and_level(tmp_path, capsys):
    """The documented defaults, 9999 resamples at level 0.95, are the report's."""
    _two_files(tmp_path)
    status, out, _ = _cli(capsys, tmp_path / "base.csv", tmp_path / "cand.csv")
    assert status == 0
    assert "percentile, 9999 resamples, seed 0 (the same for each group and metric)" in out
    assert "worse: p-value < 0.05 (--confidence-level 0.95)" in out


def test_compare_layout_errors(tmp_path, capsys):
    """One file holds both models only with both --p-baseline and --p-candidate, naming as
    many columns each; those options with two files, or --prob with one, are refused,
    each message saying what to give; the file is untouched."""
    base, _ = _two_files(tmp_path)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    base.assign(q=base["p"]).to_csv(tmp_path / "both.csv", index=False)
    both = tmp_path / "both.csv"
    one = "one file holds both models: give --p-baseline COL and --p-candidate COL (or give " \
          "two files, BASELINE and CANDIDATE)."
    assert _error(capsys, both, "--p-baseline", "p") == one
    assert _error(capsys, both, "--p-candidate", "q") == one
    assert _error(capsys, both, "--p-baseline", "p", "y", "--p-candidate", "q") == (
        "--p-baseline and --p-candidate must name as many columns; got 2 and 1.")
    for option in ("--p-baseline", "--p-candidate"):
        assert _error(capsys, b, c, option, "p") == (
            f"{option} names a column of the one file that holds both models; with BASELINE "
            "and CANDIDATE, give --prob.")
    assert _error(capsys, both, "--prob", "p") == (
        "--prob names the column of each of two files; with one file, give --p-baseline and "
        "--p-candidate.")
    assert pd.read_csv(both).shape == (60, 4)


def test_compare_missing_columns_are_named(tmp_path, capsys):
    """A missing column is named with the option and the file (BASELINE or CANDIDATE,
    --p-baseline or --p-candidate of one file), and the file's columns are listed, the
    first 10, then "... (N in all)"; a file of a header only is refused."""
    extra = {f"c{i}": 0 for i in range(7)}  # id, p, y + 7 = 10 columns
    base, _ = _two_files(tmp_path, **extra)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    shown = ", ".join(repr(col) for col in base.columns)
    assert _error(capsys, b, c, "-y", "nope") == (
        f"--label: no column 'nope' in BASELINE {b}; its columns are {shown}.")
    base.assign(c7=0).to_csv(tmp_path / "wide.csv", index=False)
    assert _error(capsys, tmp_path / "wide.csv", c, "-y", "nope") == (
        f"--label: no column 'nope' in BASELINE {tmp_path / 'wide.csv'}; its columns are "
        f"{shown}, ... (11 in all).")
    assert _error(capsys, b, c, "--by", "nope").startswith(
        f"--by: no column 'nope' in BASELINE {b}; its columns are 'id'")
    assert _error(capsys, b, "--p-baseline", "nope", "--p-candidate", "p").startswith(
        f"--p-baseline: no column 'nope' in {b}; its columns are 'id'")
    assert _error(capsys, b, "--p-baseline", "p", "--p-candidate", "nope").startswith(
        f"--p-candidate: no column 'nope' in {b}; its columns are 'id'")
    pd.DataFrame(columns=["p", "y"]).to_csv(tmp_path / "empty.csv", index=False)
    assert _error(capsys, tmp_path / "empty.csv", c) == (
        f"BASELINE {tmp_path / 'empty.csv'} has no data rows, only a header.")


def test_compare_key_messages(tmp_path, capsys):
    """The --key messages: the keys of one file missing from the other (three shown, then
    "..."; the singular for one), the data row of a missing key, and the rows and count
    of a repeated key."""
    base, cand = _two_files(tmp_path)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    for drop, shown in ((1, "1 key of BASELINE {b} is not in CANDIDATE {c} ('r59')"),
                        (3, "3 keys of BASELINE {b} are not in CANDIDATE {c} ('r57', 'r58', "
                            "'r59')"),
                        (4, "4 keys of BASELINE {b} are not in CANDIDATE {c} ('r56', 'r57', "
                            "'r58', ...)")):
        cand.iloc[:-drop].to_csv(c, index=False)
        assert _error(capsys, b, c, "--key", "id") == (
            "--key 'id': " + shown.format(b=b, c=c) + "; both files must hold the same rows.")
    base.iloc[:-1].to_csv(tmp_path / "short.csv", index=False)
    cand.to_csv(c, index=False)
    s = tmp_path / "short.csv"
    assert _error(capsys, s, c, "--key", "id") == (
        f"--key 'id': 1 key of CANDIDATE {c} is not in BASELINE {s} ('r59'); both files "
        "must hold the same rows.")
    base.iloc[:-2].to_csv(s, index=False)
    assert _error(capsys, s, c, "--key", "id") == (
        f"--key 'id': 2 keys of CANDIDATE {c} are not in BASELINE {s} ('r58', 'r59'); both "
        "files must hold the same rows.")
    missing = base.assign(id=base["id"].where(base.index != 2, None))
    missing.to_csv(tmp_path / "m.csv", index=False)
    assert _error(capsys, tmp_path / "m.csv", c, "--key", "id") == (
        f"--key 'id': BASELINE {tmp_path / 'm.csv'} has a missing key at data row 3; each "
        "row needs a key.")
    for ids, count in ((["r0", "r1", "r0"], "1 repeated key"),
                       (["r0", "r1", "r0", "r1", "r0"], "3 repeated keys")):
        dup = base.copy()
        dup.loc[: len(ids) - 1, "id"] = ids
        dup.to_csv(tmp_path / "d.csv", index=False)
        assert _error(capsys, tmp_path / "d.csv", c, "--key", "id") == (
            f"--key 'id': the key 'r0' appears more than once in BASELINE "
            f"{tmp_path / 'd.csv'} (data rows 1 and 3; {count} in all); each row needs its "
            "own key.")
    assert pd.read_csv(c).shape[0] == 60


def test_compare_label_difference_names_the_row(tmp_path, capsys):
    """Labels that differ between the files are refused, naming the data row (from 1) and
    both labels."""
    base, cand = _two_files(tmp_path)
    flipped = cand.copy()
    flipped.loc[4, "y"] = 1 - flipped.loc[4, "y"]
    flipped.to_csv(tmp_path / "cand.csv", index=False)
    assert _error(capsys, tmp_path / "base.csv", tmp_path / "cand.csv") == (
        f"--label 'y' differs between the files: data row 5 of BASELINE has "
        f"{int(base.loc[4, 'y'])}, the same row of CANDIDATE {int(flipped.loc[4, 'y'])}; the "
        "files must hold the same rows (--key matches rows by a key column).")


def test_compare_by_refuses_result_column_names(tmp_path, capsys):
    """A --by column with the name of a column of the result is refused."""
    _two_files(tmp_path, pvalue=1)
    assert _error(capsys, tmp_path / "base.csv", tmp_path / "cand.csv", "--by", "pvalue") == (
        "--by: the column 'pvalue' has the name of a column of the result; rename it in the "
        "data.")


def test_compare_one_file_validation_names_each_models_column(tmp_path, capsys):
    """With one file, a bad probability is reported under the option of the model whose
    column holds it (--p-baseline or --p-candidate), at its data row."""
    base, _ = _two_files(tmp_path)
    bad = base.assign(q=base["p"]).assign(p=base["p"].where(base.index != 4, 1.5))
    bad.to_csv(tmp_path / "both.csv", index=False)
    f = tmp_path / "both.csv"
    err = _error(capsys, f, "--p-baseline", "p", "--p-candidate", "q")
    assert err.startswith("--p-baseline") and "data row 5" in err, err
    err = _error(capsys, f, "--p-baseline", "q", "--p-candidate", "p")
    assert err.startswith("--p-candidate") and "data row 5" in err, err


def test_compare_groups_sorted_with_missing_keys_and_observed_only(tmp_path, capsys):
    """The groups of --by are in sorted key order, the rows with a missing key form a group
    of their own (as the help says), and an unused category of a categorical key (from a
    Parquet file) makes no group."""
    seg = np.array(["v"] * 20 + ["u"] * 20 + [None] * 20, dtype=object)
    base, _ = _two_files(tmp_path, seg=seg)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    common = ("--by", "seg", "--n-resamples", "19", "-f", "csv")
    status, out, err = _cli(capsys, b, c, *common)
    assert status == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert got["seg"].iloc[:2].tolist() == ["u", "v"] and pd.isna(got["seg"].iloc[2])
    assert got["n"].tolist() == [20, 20, 20]
    base.assign(seg=pd.Categorical(seg, categories=["w", "v", "u"])).to_parquet(
        tmp_path / "base.parquet")
    status, out, err = _cli(capsys, tmp_path / "base.parquet", c, *common)
    assert status == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert got["seg"].iloc[:2].tolist() == ["v", "u"] and got["n"].tolist() == [20, 20, 20]


def test_compare_two_class_columns_and_a_column_named_one(tmp_path, capsys):
    """--prob 0 1 names two class columns, matched to the labels 0 and 1 (a two-column
    matrix, not its first column), and --prob 1 alone a binary column named "1": each
    result is paired_bootstrap() of the same data."""
    gen = np.random.default_rng(11)
    n = 200
    p = gen.random(n)
    y = (gen.random(n) < p).astype(int)
    q = p**2
    pd.DataFrame({"0": 1 - p, "1": p, "y": y}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"0": 1 - q, "1": q, "y": y}).to_csv(tmp_path / "b.csv", index=False)
    status, out, err = _cli(capsys, tmp_path / "a.csv", tmp_path / "b.csv", "--prob",
                                    "0", "1", "--n-resamples", "49", "-f", "csv")
    assert status in (0, 1), err
    want = calibr.paired_bootstrap(np.column_stack([1 - q, q]), np.column_stack([1 - p, p]),
                                   y, n_resamples=49, alternative="greater", rng=0,
                                   classes=[0, 1])
    got = pd.read_csv(io.StringIO(out))
    assert got["difference"].iloc[0] == pytest.approx(want.estimate, rel=1e-12)
    assert got["pvalue"].iloc[0] == want.pvalue
    status, out, err = _cli(capsys, tmp_path / "a.csv", tmp_path / "b.csv", "--prob",
                                    "1", "--n-resamples", "49", "-f", "csv")
    assert status in (0, 1), err
    want = calibr.paired_bootstrap(q, p, y, n_resamples=49, alternative="greater", rng=0)
    assert pd.read_csv(io.StringIO(out))["difference"].iloc[0] == pytest.approx(
        want.estimate, rel=1e-12)


def test_compare_table_names_the_worse_groups(tmp_path, capsys):
    """The table's verdict line names the group of each worse comparison."""
    seg = np.array(["u", "v"] * 200, dtype=object)
    _two_files(tmp_path, n=400, power=3.0, seg=seg)
    status, out, err = _cli(capsys, tmp_path / "base.csv", tmp_path / "cand.csv",
                                    "--by", "seg", "--n-resamples", "199")
    assert status == 1, err
    assert out.endswith("\nresult: the candidate is significantly worse in 2 of 2 "
                        "comparisons: ece (seg='u'); ece (seg='v') (exit status 1)\n"), out


# --------------------------------------------------------------------------
# the simulation, small: fixed seeds, so it cannot flake

def _simulation():
    spec = importlib.util.spec_from_file_location("simulate_gate",
                                                  ROOT / "validation" / "simulate_gate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gates_catch_a_worsening_and_pass_the_same_model():
    sim = _simulation()
    seeds = range(20)
    n, level, b = 1500, 0.95, 199
    fresh = [sim.fixture_fails(s, n, level, b, "fresh", 1.6) for s in seeds]
    resample = [sim.fixture_fails(s, n, level, b, "resample", 1.6) for s in seeds]
    worse = [sim.fixture_fails(s, n, level, b, "worse", 1.6) for s in seeds]
    same = [sim.compare_flags(s, n, level, b, 1.0) for s in seeds]
    caught = [sim.compare_flags(s, n, level, b, 1.6) for s in seeds]
    counts = [sum(v) for v in (fresh, resample, worse, same, caught)]
    # The seeds fix every number (this machine, with the bootstrap's scheme of
    # docs/bootstrap.md: [0, 0, 20, 0, 19]); the bounds leave a
    # margin for rounding on other platforms. False alarms: at most 1 in 20 (the
    # nominal 5%); detections of the overconfident model (slope 1.6): at least 18.
    assert max(counts[0], counts[1], counts[3]) <= 1, counts
    assert min(counts[2], counts[4]) >= 18, counts


def test_compare_is_a_subcommand_and_a_crash_is_not_a_verdict(tmp_path, capsys, monkeypatch):
    """`calibr compare` through the real entry point: exit 0/1 as the verdict, and an
    internal error exits 3 (its 1 means "significantly worse")."""
    import numpy as np
    import pandas as pd

    from calibr._inference import bootstrap as _bootstrap
    from calibr.cli import main

    gen = np.random.default_rng(3)
    n = 2000
    p = gen.random(n)
    y = (gen.random(n) < p).astype(int)
    pd.DataFrame({"p": p, "y": y}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"p": p**1.6, "y": y}).to_csv(tmp_path / "b.csv", index=False)
    argv = ["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--n-resamples", "199"]
    assert main(argv) == 1
    assert main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "a.csv"),
                 "--n-resamples", "199"]) == 0

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(_bootstrap, "paired_bootstrap", broken)
    import calibr

    monkeypatch.setattr(calibr, "paired_bootstrap", broken, raising=False)
    capsys.readouterr()
    assert main(argv) == 3
    assert "internal error" in capsys.readouterr().err


def test_compare_table_group_keys_are_not_rounded(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 200
    p = rng.random(n)
    frame = pd.DataFrame({"t": np.repeat([1.00001, 1.00002], n // 2), "p": p,
                          "y": (rng.random(n) < p).astype(int)})
    frame.to_csv(tmp_path / "a.csv", index=False)
    status, out, _ = _main(capsys, tmp_path / "a.csv", tmp_path / "a.csv", "--by", "t",
                           "--n-resamples", "19")
    rows = [line.split() for line in out.split("\n\n")[1].splitlines()]
    assert status == 0 and [r[0] for r in rows[1:]] == ["1.00001", "1.00002"]


# --------------------------------------------------------------------------
# small groups: shown, marked, never gating (docs/regression_gate.md, "Small groups")

def _both_with_a_tiny_group(tmp_path: Path) -> Path:
    """One file with both models, grouped by model and fold: two groups of 200 rows of
    one model, and the group (tiny, 5) of 4 rows, all y = 0, whose candidate raises
    every p (every resample of those 4 rows is worse)."""
    gen = np.random.default_rng(11)
    n = 400
    p = gen.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"model": "big", "fold": np.repeat([1, 2], n // 2), "p": p,
                          "p_new": np.clip(p + gen.normal(0, 0.02, n), 0.01, 0.99),
                          "y": (gen.random(n) < p).astype(int)})
    tiny = pd.DataFrame({"model": "tiny", "fold": 5, "p": [0.1, 0.2, 0.3, 0.4],
                         "p_new": [0.3, 0.4, 0.5, 0.6], "y": 0})
    path = tmp_path / "both.csv"
    pd.concat([frame, tiny]).to_csv(path, index=False)
    return path


def test_compare_a_group_below_min_n_is_shown_and_never_gates(tmp_path, capsys):
    both = _both_with_a_tiny_group(tmp_path)
    argv = [both, "--p-baseline", "p", "--p-candidate", "p_new", "--by", "model", "fold",
            "--p-adjust", "holm", "--n-resamples", "999"]
    status, out, err = _cli(capsys, *argv)
    assert (status, err) == (0, ""), out
    assert ("gate: groups of at least 100 rows (--min-n 100); a smaller group is shown, marked "
            "small_n, and never gates") in out
    assert "over the 2 comparisons that can gate" in out
    tiny = [line for line in out.splitlines() if line.lstrip().startswith("tiny")]
    assert len(tiny) == 1 and tiny[0].split()[-2:] == ["<", "100"], tiny
    assert " yes " in tiny[0]  # the small_n column
    assert out.endswith("(exit status 0); 1 comparison of groups under 100 rows shown, not "
                        "gating (--min-n)\n"), out
    # the CSV: the row is there with its numbers, small_n true, not worse, no adjusted p
    status, out, _ = _cli(capsys, *argv, "-f", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index(["model", "fold"])
    assert status == 0
    assert got["small_n"].tolist() == [False, False, True]
    row = got.loc[("tiny", 5)]
    assert row["n"] == 4 and row["pvalue"] == 0.0 and not row["worse"]
    assert math.isnan(row["pvalue_adjusted"])
    # the two groups that gate are adjusted as a family of 2 (Holm)
    big = got.loc["big"]
    want = calibr.p_adjust(big["pvalue"].to_numpy(), "holm")
    assert big["pvalue_adjusted"].tolist() == pytest.approx(want.tolist(), rel=0, abs=0)
    # --min-n 0: every group gates, and the four rows fail the gate as before
    status, out, _ = _cli(capsys, *argv, "--min-n", "0")
    assert status == 1
    assert "significantly worse in 1 of 3 comparisons: ece (model='tiny', fold=5)" in out
    # --min-n 4 gates the group of 4 rows; 5 does not
    assert _cli(capsys, *argv, "--min-n", "4")[0] == 1
    assert _cli(capsys, *argv, "--min-n", "5")[0] == 0
    # without --p-adjust too: the raw p-value of the small group is not read
    plain = [a for a in argv if a not in ("--p-adjust", "holm")]
    status, out, _ = _cli(capsys, *plain, "-f", "csv")
    got = pd.read_csv(io.StringIO(out))
    assert status == 0 and got["pvalue"].tolist()[2] == 0.0 and not got["worse"].any()
    assert _cli(capsys, *plain, "--min-n", "4")[0] == 1


def test_compare_min_n_must_be_nonnegative(tmp_path, capsys):
    _two_files(tmp_path)
    err = _error(capsys, tmp_path / "base.csv", tmp_path / "cand.csv", "--min-n", "-1")
    assert err == "--min-n must be a nonnegative integer; got -1."


def test_compare_html_marks_a_group_below_min_n(tmp_path, capsys):
    both = _both_with_a_tiny_group(tmp_path)
    page = tmp_path / "cmp.html"
    status, _, err = _cli(capsys, both, "--p-baseline", "p", "--p-candidate", "p_new",
                          "--by", "model", "fold", "--n-resamples", "199", "--html", page)
    assert (status, err) == (0, "")
    text = page.read_text()
    assert ('data-label="worse" data-sort="0" class="k"><span class="v">n &lt; 100</span></td>'
            in text)
    assert ("n &lt; 100: a group of fewer than 100 rows (--min-n) is shown and never gates"
            in text)
    assert "no p-value of a group that can gate is below 0.05" in text


def test_plugin_statistical_mode_never_fails_a_group_below_min_n(fixture_object, tmp_path):
    """A value above the snapshot's upper end fails when its group has min_n rows, here
    and in the snapshot; with fewer on either side it is listed in a warning instead."""
    fx = fixture_object
    cols = ("g", "metric", "n", "value", "low", "high", "level", "method", "n_resamples",
            "seed")
    stat = {"mode": "statistical", "level": 0.9, "n_resamples": 9, "seed": 1, "min_n": 30}
    meta = [0.9, "percentile", 9, 1]
    old = _snapshot(tmp_path / "old.csv", [["big", "ece", 30, 0.1, 0.05, 0.2, *meta],
                                           ["tiny", "ece", 4, 0.1, 0.05, 0.2, *meta]], cols)
    empty = ["", "", "", "", "", ""]
    worse_tiny = _snapshot(tmp_path / "new.csv", [["big", "ece", 30, 0.2, *empty],
                                                  ["tiny", "ece", 4, 0.9, *empty]], cols)
    with pytest.warns(UserWarning, match=r"^calibration_regression: 1 value\(s\) of groups "
                      r"under min_n = 30 rows \(here or in the snapshot\) are not checked: "
                      r"a bootstrap of so few rows says nothing about the population: g=tiny, "
                      r"metric ece \(n = 4\)\.$"):
        fx._compare(worse_tiny, old, old, ["g"], stat)
    # the snapshot's group had 4 rows: a new group of 30 is not checked either
    grown = _snapshot(tmp_path / "new.csv", [["big", "ece", 30, 0.2, *empty],
                                             ["tiny", "ece", 30, 0.9, *empty]], cols)
    with pytest.warns(UserWarning, match=r"g=tiny, metric ece \(n = 30\)"):
        fx._compare(grown, old, old, ["g"], stat)
    # a group of min_n rows gates
    with pytest.raises(AssertionError, match=r"^Calibration is worse than the snapshot: 1 "):
        fx._compare(worse_tiny, old, old, ["g"], {**stat, "min_n": 4})
    worse_big = _snapshot(tmp_path / "new.csv", [["big", "ece", 30, 0.2 + 2**-50, *empty],
                                                 ["tiny", "ece", 4, 0.1, *empty]], cols)
    with pytest.raises(AssertionError, match=r"^Calibration is worse than the snapshot: 1 "):
        with pytest.warns(UserWarning, match="g=tiny"):
            fx._compare(worse_big, old, old, ["g"], stat)
