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
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calibr
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


STATISTICAL = 'mode="statistical", level=0.95, n_resamples=499, rng=3'


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
    _write(pytester, options='mode="statistical", level=0.9, n_resamples=499, rng=3')
    other = _run(pytester)
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines([f"*The snapshot {snapshot} was made with level=0.95, "
                                "n_resamples=499, rng=3*; the check asks for level=0.9*"])
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
    (dict(level=0.9), calibr.InputError, '`level` applies to mode="statistical"'),
    (dict(rng=0), calibr.InputError, '`rng` applies to mode="statistical"'),
    (dict(mode="statistical", tolerance=0.1), calibr.InputError,
     '`tolerance` applies to mode="absolute"'),
    (dict(mode="statistical", level=1.5), calibr.InputError,
     r"`level` must be a number strictly between 0 and 1; got 1\.5\."),
    (dict(mode="statistical", n_resamples=0), calibr.InputError,
     "`n_resamples` must be an integer from 1 to"),
    (dict(mode="statistical", rng=np.random.default_rng(0)), calibr.InputTypeError,
     r"`rng` must be an integer seed >= 0 \(the snapshot stores it\); got Generator\."),
    (dict(mode="statistical", rng=-2), calibr.InputError, "`rng` must be an integer seed"),
    (dict(by="nope"), calibr.InputError, "`by` must name columns of `data`; 'nope' is not one."),
    (dict(basename="x", fullpath="y.csv"), calibr.InputError,
     "Give the snapshot by `basename` or by `fullpath`, not both."),
    (dict(metrics="brier"), calibr.InputError, "`metrics` must name calibr metrics"),
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
    status, out, err = _cli(capsys, *one)  # labels 0, 1, 2 do not name the columns
    assert status == 2 and "pass --classes to give the label of each column" in err
    status, out, _ = _cli(capsys, *one, "--classes", "0,1,2")
    assert status == 1 and pd.read_csv(io.StringIO(out))["pvalue"].iloc[0] == want.pvalue


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
        ((base, cand, "--level", "1.5"), "--level must be a number strictly between 0 and 1"),
        ((base, cand, "--n-resamples", "0"), "--n-resamples must be an integer from 1"),
        ((base, cand, "--seed", "-1"), "--seed must be a nonnegative integer"),
        ((base, cand, "-m", "brier"), "--metrics: unknown metric 'brier'"),
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
        "metric   n  baseline candidate difference    ci_low ci_high   pvalue worse\n"
        "   ece 569 1.860e-02  0.062108   0.043507 0.0239014     inf < 0.0001   yes\n"
        "   mce 569 3.546e-01  0.807308   0.452693 0.2199121     inf   0.0131   yes\n"
        "  skce 569 7.174e-06  0.001338   0.001331 0.0006417     inf < 0.0001   yes")
    status, out, _ = _main(capsys, *argv, "-f", "csv")
    got = pd.read_csv(io.StringIO(out))
    b = bc[bc["model"] == "logistic"]
    c = bc[bc["model"] == "naive_bayes"].set_index("id").loc[b["id"]]  # matched by --key
    res = calibr.paired_bootstrap(c["p"].to_numpy(), b["p"].to_numpy(), b["y"].to_numpy(),
                                  "mce", n_resamples=9999, alternative="greater", rng=0)
    assert got["pvalue"].tolist()[::2] == [0.0, 0.0] and got["pvalue"][1] == res.pvalue
    assert got["ci_low"][1] == res.confidence_interval.low


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

    from calibr import _bootstrap
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
