"""The `calibr` command (calibr.cli.main)."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import require, unavailable

import calibr
from calibr import InputError
from calibr._input import arg
from calibr._registry import METRICS
from calibr.cli import main, parse_metrics
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions
from calibr.frame import Metric, metric, summarise
from calibr.table import TABLE_COLUMNS, calibration_table

DIGITS = [f"p_{k}" for k in range(10)]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def table_body(out):
    """The rows of the table output (between the header and the footnotes) as lists of
    cells, the column names first."""
    header, body, *notes = out.split("\n\n")
    assert header.startswith("calibr ")
    return [line.split() for line in body.splitlines()]


@pytest.fixture
def binary_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    p = rng.random(n)
    df = pd.DataFrame({"model": rng.choice(["a", "b"], n), "fold": rng.integers(1, 3, n),
                       "prob": p, "label": (rng.random(n) < p).astype(int)})
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.fixture
def digits_csv(tmp_path):
    df = load_digits_predictions()
    path = tmp_path / "digits.csv"
    df.to_csv(path, index=False)
    return path, df


# --------------------------------------------------------------------------
# success


def test_report_bundled_data_by_default(capsys):
    code, out, err = run(capsys, "report", "--format", "csv")
    assert code == 0 and err == ""
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["dataset", "model", "form", "bins", "n", "ece", "mce",
                                 "mce_bin_n"]
    assert got["dataset"].tolist() == ["breast_cancer"] * 3 + ["digits"] * 3
    assert got["form"].tolist() == ["binary"] * 3 + ["classwise"] * 3
    assert got["bins"].tolist() == [10] * 6
    assert got["n"].tolist() == [569] * 3 + [1797] * 3
    bc = load_breast_cancer_predictions()
    dg = load_digits_predictions()
    ref = pd.concat([
        summarise(bc.groupby("model"), "p", "y"),
        summarise(dg.groupby("model"), y="y", p_prefix="p_"),
    ], ignore_index=True)
    np.testing.assert_array_equal(got["ece"].to_numpy(), ref["ece"].to_numpy())  # CSV: 17 digits
    np.testing.assert_array_equal(got["mce"].to_numpy(), ref["mce"].to_numpy())


def test_report_table_format_and_example(capsys):
    code, out, err = run(capsys, "report", "--example", "digits", "--type", "confidence")
    assert code == 0 and err == ""
    rows = table_body(out)
    assert rows[0] == ["dataset", "model", "form", "bins", "n", "ece", "mce", "mce_bin_n"]
    assert len(rows) == 4 and all(row[:3] == ["digits", row[1], "confidence"] for row in rows[1:])


def test_report_file_matches_summarise(capsys, binary_csv):
    path, df = binary_csv
    code, out, err = run(capsys, "report", str(path), "--prob", "prob", "--label", "label",
                         "--by", "model", "fold", "--metrics", "ece,mce(bins=5)",
                         "--bins", "4", "--format", "json")
    assert code == 0 and err == ""
    records = json.loads(out)
    assert out == json.dumps(records, indent=2) + "\n"  # docs/cli.md: indented by two
    ref = summarise(df.groupby(["model", "fold"]), "prob", "label",
                    metrics={"ece": metric("ece", bins=4), "mce(bins=5)": metric("mce", bins=5)})
    assert [r["model"] for r in records] == ref["model"].tolist()
    assert [r["fold"] for r in records] == ref["fold"].tolist()
    assert [r["ece"] for r in records] == ref["ece"].tolist()
    assert [r["mce(bins=5)"] for r in records] == ref["mce(bins=5)"].tolist()
    assert [r["n"] for r in records] == df.groupby(["model", "fold"]).size().tolist()


def test_report_multiclass_prefix_and_output_file(capsys, digits_csv, tmp_path):
    path, df = digits_csv
    dest = tmp_path / "report.json"
    code, out, err = run(capsys, "report", str(path), "--prob-prefix", "p_", "--by", "model",
                         "-o", str(dest))
    assert code == 0 and out == "" and err == ""
    records = json.loads(dest.read_text())  # format from the extension
    for r in records:
        g = df[df["model"] == r["model"]]
        assert r["ece"] == calibr.ece(g[DIGITS], g["y"], classes=range(10))


def test_report_column_list_and_classes(capsys, tmp_path):
    df = load_digits_predictions()
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    code, out, _ = run(capsys, "report", str(path), "--prob", *DIGITS,
                       "--classes", ",".join(str(k) for k in range(10)), "--format", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    assert got.loc[0, "ece"] == calibr.ece(df[DIGITS], df["y"], classes=range(10))


def test_report_numbered_column_list_is_the_prefix_report(capsys, tmp_path):
    """docs/cli.md's `--prob p_0,p_1,p_2` on a file whose y holds 0..2: the report of
    --prob-prefix p_ (the label k is the class of p_k), also with the columns in
    another order, and of --classes 0,1,2."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame(rng.dirichlet([1, 1, 1], 90), columns=["p_0", "p_1", "p_2"])
    df = df.assign(y=rng.integers(0, 3, 90), model=np.repeat(["a", "b"], 45),
                   fold=np.tile([1, 2], 45))
    path = write(tmp_path, df, "preds.csv")
    code, want, _ = run(capsys, "report", path, "--by", "model,fold", "--prob-prefix", "p_")
    assert code == 0
    for argv in (["--prob", "p_0,p_1,p_2"], ["--prob", "p_0,p_1,p_2", "--classes", "0,1,2"]):
        code, out, err = run(capsys, "report", path, "--by", "model,fold", *argv)
        assert (code, out, err) == (0, want, "")
    code, out, _ = run(capsys, "report", path, "--prob", "p_2,p_0,p_1", "-f", "csv")
    assert code == 0
    assert pd.read_csv(io.StringIO(out))["ece"].tolist() == [
        calibr.ece(df[["p_2", "p_0", "p_1"]], df["y"], classes=[2, 0, 1])]


def test_report_no_group_and_stdin(capsys, monkeypatch, binary_csv):
    path, df = binary_csv
    monkeypatch.setattr(sys, "stdin", io.StringIO(path.read_text()))
    code, out, _ = run(capsys, "report", "-", "-p", "prob", "-y", "label", "-f", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["form", "bins", "n", "ece", "mce", "mce_bin_n"]
    assert got.loc[0, "ece"] == calibr.ece(df["prob"], df["label"])


def test_report_parquet(capsys, tmp_path, binary_csv):
    require("pyarrow")
    _, df = binary_csv
    path = tmp_path / "preds.parquet"
    df.to_parquet(path)
    code, out, _ = run(capsys, "report", str(path), "-p", "prob", "-y", "label", "-g", "model",
                       "-f", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    ref = summarise(df.groupby("model"), "prob", "label")
    np.testing.assert_array_equal(got["ece"].to_numpy(), ref["ece"].to_numpy())


def test_report_per_bin(capsys, binary_csv):
    path, df = binary_csv
    code, out, _ = run(capsys, "report", str(path), "-p", "prob", "-y", "label", "-g", "model",
                       "--per-bin", "--bins", "5", "-f", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    ref = calibration_table("prob", "label", bins=5, data=df.groupby("model"))
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)


def test_report_per_bin_bundled_keeps_columns_in_order(capsys):
    code, out, _ = run(capsys, "report", "--per-bin", "-f", "json")
    assert code == 0
    records = json.loads(out)
    assert list(records[0]) == ["dataset", "model", "class", *TABLE_COLUMNS]
    assert records[0]["class"] is None  # breast cancer: binary, no class
    assert {r["class"] for r in records if r["dataset"] == "digits"} == set(range(10))


def test_report_missing_keys_form_a_group(capsys, tmp_path):
    df = pd.DataFrame({"g": ["a", None, "a", None], "p": [0.2, 0.4, 0.7, 0.9], "y": [0, 1, 1, 1]})
    path = tmp_path / "k.csv"
    df.to_csv(path, index=False)
    code, out, _ = run(capsys, "report", str(path), "-g", "g", "-f", "json")
    assert code == 0
    records = json.loads(out)
    assert [r["g"] for r in records] == ["a", None]
    assert [r["n"] for r in records] == [2, 2]


def test_report_plot(capsys, binary_csv, tmp_path):
    require("matplotlib")
    path, _ = binary_csv
    png = tmp_path / "rel.png"
    code, out, err = run(capsys, "report", str(path), "-p", "prob", "-y", "label", "-g", "model",
                         "--plot", str(png))
    assert code == 0 and err == ""
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert table_body(out)[0] == ["model", "form", "bins", "n", "ece", "mce", "mce_bin_n"]


def test_help_and_version(capsys):
    code, out, _ = run(capsys, "report", "--help")
    assert code == 0 and "bundled example data" in out and "exit status" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"calibr {calibr.__version__}"


def test_help_says_the_defaults_of_ece(capsys):
    """--bins, --type, --binning and --right default to ece()'s options, and the help
    says so from calibr._defaults (the parser imports no numerics to read ece()), so
    it follows them."""
    from calibr._input import defaults

    want = defaults(calibr.ece)
    code, out, _ = run(capsys, "report", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert f"nearly equal size (default: {want['bins']})" in text
    assert f"(default: {want['type']}; --plot and --html draw the confidence" in text
    assert f"{want['binning']} (R's, the default)" in text
    assert "(true, R's default)" in text and want["right"] is True


def test_parse_metrics():
    specs = parse_metrics("ece, mce(bins=5),ece(type='confidence', bins=2)")
    assert specs == [("ece", Metric("ece")), ("mce(bins=5)", Metric("mce", {"bins": 5})),
                     ("ece(type='confidence', bins=2)",
                      Metric("ece", {"type": "confidence", "bins": 2}))]


def test_report_groups_are_sorted_and_only_the_observed_ones(capsys, tmp_path):
    """The rows of ``calibr report -g`` are in key order, not in order of appearance, and
    an unused category of a categorical key (kept by Parquet) makes no row. By hand, 10
    bins: group a (0.4 and 0.9, both y = 1) has gaps 0.6 and 0.1, group b (0.2 with y =
    0, 0.7 with y = 1) 0.2 and 0.3."""
    require("pyarrow")

    df = pd.DataFrame({"g": pd.Categorical(["b", "b", "a", "a"], categories=["a", "b", "z"]),
                       "p": [0.2, 0.7, 0.4, 0.9], "y": [0, 1, 1, 1]})
    path = tmp_path / "preds.parquet"
    df.to_parquet(path)
    assert pd.read_parquet(path)["g"].cat.categories.tolist() == ["a", "b", "z"]
    code = main(["report", str(path), "-g", "g", "-f", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err

    got = pd.read_csv(io.StringIO(out))
    assert got["g"].tolist() == ["a", "b"] and got["n"].tolist() == [2, 2]
    assert got["ece"].tolist() == pytest.approx([0.35, 0.25], abs=1e-12)
    assert got["mce"].tolist() == pytest.approx([0.6, 0.3], abs=1e-12)


def test_option_values_true_and_false_in_python_and_r_spelling():
    """An option value False (R's FALSE) is False, True (TRUE) is True; other words stay
    strings, numbers become numbers."""
    from calibr.cli._args import _value

    for text, want in (("False", False), ("FALSE", False), (" True ", True), ("TRUE", True)):
        assert _value(text) is want, text
    assert _value("no") == "no" and _value("'False'") == "False"
    assert _value("3") == 3 and type(_value("3")) is int and _value("0.5") == 0.5


def test_the_report_function_is_an_attribute_of_the_cli_package():
    """``calibr.cli.report`` is the report function of ``calibr.cli._report`` (the
    package's lazy ``__getattr__``); its submodules are modules, and another name is an
    AttributeError."""
    import importlib
    import types

    import calibr.cli as cli

    assert cli.report is importlib.import_module("calibr.cli._report").report
    assert callable(cli.report)
    assert isinstance(cli._render, types.ModuleType)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        cli.no_such_name  # noqa: B018


# --------------------------------------------------------------------------
# bad input: exit status 2, one line on stderr, nothing on stdout, no file written


def _bad(capsys, tmp_path, *argv, match):
    out_file = tmp_path / "out.csv"
    plot_file = tmp_path / "out.png"
    code = main([*argv, "-o", str(out_file), "--plot", str(plot_file)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("calibr: error: ")
    assert "Traceback" not in err
    assert not out_file.exists() and not plot_file.exists()
    assert re.search(match, err), err
    # command-line words only (the user's own text, quoted, may hold anything)
    assert not PYTHON_WORDS.search(re.sub(r"'[^']*'", "''", err)), err
    return err


#: Words of calibr's Python API that must not reach a command-line message.
PYTHON_WORDS = re.compile(r"`(p|y|metrics|classes|na_rm|p_prefix|data)`|callable|classes=|na_rm"
                          r"|p_prefix|DataFrame|summarise\(|\bposition \d")


def write(tmp_path, df, name="bad.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return str(path)


GOOD = pd.DataFrame({"m": ["a", "a", "b"], "p": [0.2, 0.7, 0.4], "y": [0, 1, 1]})


def _empty_dir(tmp_path):
    """An empty directory beside the outputs of _bad (an output in the input
    directory is refused before the directory is read)."""
    (tmp_path / "empty").mkdir()
    return str(tmp_path / "empty")


@pytest.mark.parametrize(
    ("make_args", "match"),
    [
        (lambda t: ["report", str(t / "nope.csv")], r"nope\.csv: no such file\.$"),
        (lambda t: ["report", _empty_dir(t)], r": no files in the directory\.$"),  # Dask
        (lambda t: ["report", write(t, GOOD, "x.xlsx")],
         r"x\.xlsx: cannot tell the format from the extension; use \.csv or \.parquet\.$"),
        (lambda t: ["report", write(t, GOOD), "-p", "q"],
         r"error: --prob: no column 'q' in .*bad\.csv; its columns are 'm', 'p', 'y'\.$"),
        (lambda t: ["report", write(t, GOOD), "-y", "label"],
         r"error: --label: no column 'label' in .*bad\.csv; its columns are 'm', 'p', 'y'\.$"),
        (lambda t: ["report", write(t, GOOD), "-g", "model"],
         r"error: --by: no column 'model' in .*bad\.csv; its columns are 'm', 'p', 'y'\.$"),
        (lambda t: ["report", write(t, GOOD), "--weights", "w"],
         r"error: --weights: no column 'w' in .*bad\.csv; its columns are 'm', 'p', 'y'\.$"),
        (lambda t: ["report", write(t, GOOD), "-p", "p", "q"],
         r"error: --prob: no column 'q' in .*bad\.csv; its columns are 'm', 'p', 'y'\.$"),
        (lambda t: ["report", write(t, GOOD), "--prob-prefix", "q_"],
         r"error: --prob-prefix: no column of .*bad\.csv starts with 'q_'; its columns are 'm', "
         r"'p', 'y'\.$"),
        # the data row in the file, not the position within the group
        (lambda t: ["report", write(t, GOOD.assign(p=[0.2, 0.7, 1.7])), "-g", "m"],
         r"error: --prob must lie in \[0, 1\]; 1 value does not, the first at data row 3 "
         r"\(1\.7\)\.$"),
        (lambda t: ["report", write(t, GOOD.assign(y=[0, 2, 1]))],
         r"error: --label must be 0/1 or boolean for a single --prob column; 1 value does not, "
         r"the first at data row 2 \(2\)\.$"),
        (lambda t: ["report", write(t, GOOD.assign(p=[0.2, None, 0.4]))],
         r"--prob must not contain missing values; .* Pass --na-rm to drop incomplete "
         r"observations\.$"),
        (lambda t: ["report", write(t, GOOD.assign(p=["x", "y", "z"]))],
         r"error: --prob must hold numbers; 3 values are not, the first at data row 1 "
         r"\('x'\)\.$"),
        (lambda t: ["report", write(t, pd.DataFrame({"p_0": [0.5, 0.3], "p_1": [0.6, 0.7],
                                                     "y": [0, 1]})), "--prob-prefix", "p_"],
         r"error: the --prob-prefix 'p_' columns must sum to 1 in each row \(within 1e-06\); 1 "
         r"row does not, the first at data row 1: its sum 1\.1 is 0\.10000000000000009 away "
         r"from 1\. If the probabilities were rounded \(e\.g\. saved with 6 decimals\), pass "
         r"--renormalize to divide each row by its sum\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "ece,bogus"],
         r"error: --metrics: unknown metric 'bogus'; the metrics are "
         + re.escape(", ".join(METRICS)) + r"\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "mce(bns=2)"],
         r"error: --metrics: the metric 'mce\(bns=2\)' has no option 'bns'; its options are "
         r"bins, type, binning, right\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "skce(classes=1)"],
         r"error: --metrics: 'classes' is not an option of a metric \('skce\(classes=1\)'\); "
         r"--classes sets it for all metrics\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "ece(na_rm=TRUE)"],
         r"error: --metrics: 'na_rm' is not an option of a metric \('ece\(na_rm=TRUE\)'\); "
         r"--na-rm sets it for all metrics\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "mce(bins=2, bins=3)"],
         r"error: --metrics: 'mce\(bins=2, bins=3\)' sets 'bins' twice\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "skce(estimator=uu)"],
         r"error: `estimator` must be one of 'uq', 'ul', 'biased'; got 'uu'\. "
         r"\[metric 'skce\(estimator=uu\)'\]$"),
        (lambda t: ["report", write(t, GOOD), "-m", "mce(bins=0)"],
         r"`bins` must be a single positive integer; got 0\. \[metric 'mce\(bins=0\)'\]$"),
        (lambda t: ["report", write(t, GOOD), "-m", "mce(bins=2"], r"unbalanced parentheses"),
        (lambda t: ["report", write(t, GOOD), "-m", "mce(2)"],
         r"options are written name=value; got '2'"),
        (lambda t: ["report", write(t, GOOD), "-m", "ece,,mce"], r"--metrics: empty entry"),
        (lambda t: ["report", write(t, GOOD), "-m", "ece,ece"], r"--metrics: 'ece' appears twice"),
        (lambda t: ["report", write(t, GOOD), "--bins", "0"],
         r"error: --bins must be a single positive integer; got 0\.$"),
        (lambda t: ["report", write(t, GOOD), "--bins", "1099511627776"],
         r"error: --bins must be .*; got 1099511627776\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "ece(bins=1e20)"],
         r"error: `bins` must be .*; got 1e\+20\. \[metric 'ece\(bins=1e20\)'\]$"),
        (lambda t: ["report", write(t, GOOD), "-m", "ece(bins=True)"],
         r"error: `bins` must be a single positive integer; got True\. "
         r"\[metric 'ece\(bins=True\)'\]$"),
        (lambda t: ["report", write(t, GOOD), "-m", "mce(bins=FALSE)"],
         r"error: `bins` must be a single positive integer; got False\. "),
        (lambda t: ["report", write(t, GOOD.assign(n=[1, 1, 2])), "--by", "n"],
         r"error: --by: the column 'n' has the name of a column of the report; rename it in the "
         r"data\.$"),
        (lambda t: ["report", write(t, GOOD.assign(ece=[1, 1, 2])), "--by", "m", "ece"],
         r"error: --by: the column 'ece' has the name of a column of the report; rename "
         r"it in the data\.$"),
        (lambda t: ["report", write(t, GOOD.assign(mce_bin_n=[1, 1, 2])), "--by", "mce_bin_n"],
         r"error: --by: the column 'mce_bin_n' has the name of a column of the report"),
        (lambda t: ["report", write(t, GOOD.assign(form=[1, 1, 2])), "--by", "form"],
         r"error: --by: the column 'form' has the name of a column of the report"),
        (lambda t: ["report", write(t, GOOD.assign(n=[1, 1, 2])), "--by", "n", "--per-bin"],
         r"error: --by: the column 'n' has the name of a column of the per-bin table; rename it "
         r"in the data\.$"),
        (lambda t: ["report", write(t, GOOD.assign(y=[3, 1, 2]).rename(columns={"p": "a"})
                                    .assign(b=[0.5, 0.2, 0.4], c=[0.3, 0.1, 0.2])),
                    "--prob", "a", "b", "c"],
         r"error: --label must be one of the class labels \('a', 'b', 'c'\); 3 values do "
         r"not, the first at data row 1 \(3\)\. Labels are matched to the names of the --prob "
         r"columns; pass --classes to give the label of each column\.$"),
        # numbered columns: the label is the column's number, never its position (R's codes)
        (lambda t: ["report", write(t, GOOD.assign(y=[3, 1, 2]).rename(columns={"p": "p_0"})
                                    .assign(p_1=[0.5, 0.2, 0.4], p_2=[0.3, 0.1, 0.2])),
                    "--prob", "p_0,p_1,p_2"],
         r"error: --label must be one of the class labels \(0, 1, 2\); 1 value does not, the "
         r"first at data row 1 \(3\)\.$"),
        (lambda t: ["report", write(t, GOOD.assign(y=["no", "yes", "yes"]))],
         r"error: --label .* Pass --classes NEGATIVE,POSITIVE to name other labels\.$"),
        (lambda t: ["report", write(t, GOOD.assign(p=[None, None, None])), "--na-rm"],
         r"error: --prob and --label have no complete observations: --na-rm dropped all 3\.$"),
        (lambda t: ["report", write(t, GOOD), "--bins", "2.5"],
         r"argument --bins: invalid int value: '2\.5' \(see `calibr report --help`\)$"),
        (lambda t: ["report", write(t, GOOD), "--type", "top"],
         r"argument --type: invalid choice: 'top'"),
        (lambda t: ["report", write(t, GOOD), "--format", "xml"],
         r"argument -f/--format: invalid choice"),
        (lambda t: ["report", write(t, GOOD), "-p", "p", "--prob-prefix", "p_"],
         r"give the probability columns by --prob or by --prob-prefix, not both\.$"),
        (lambda t: ["report", write(t, GOOD), "--example", "digits"],
         r"--example picks bundled data; it cannot be used with FILE\.$"),
        (lambda t: ["report", "-p", "q"],
         r"error: --prob needs FILE or --example: the two bundled data sets have different "
         r"columns\.$"),
        (lambda t: ["report", "-p", "q", "-y", "y"],
         r"error: --prob, --label need FILE or --example: the two bundled data sets have "
         r"different columns\.$"),
        (lambda t: ["report", write(t, GOOD), "--unknown"], r"unrecognized arguments: --unknown"),
        (lambda t: ["frobnicate"], r"argument COMMAND: invalid choice: 'frobnicate'"),
        (lambda t: ["report", write(t, pd.DataFrame()), "-p", "p"],
         r"error: .*bad\.csv: cannot read it as CSV: No columns to parse from file\.$"),
        (lambda t: ["report", write(t, GOOD.assign(y=[3, 4, 3]).rename(columns={"p": "p_x"})
                                    .assign(p_y=[0.8, 0.3, 0.6]).assign(p_x=[0.2, 0.7, 0.4])),
                    "--prob-prefix", "p_"],
         r"The labels in 'y' are numbers, but the columns with prefix 'p_' name the classes "
         r"'x', 'y'; pass --classes to give the label of each column\.$"),
        (lambda t: ["report", write(t, GOOD.assign(y=[3, 4, 3]).rename(columns={"p": "p_x"})
                                    .assign(p_y=[0.8, 0.3, 0.6]).assign(p_x=[0.2, 0.7, 0.4])),
                    "--prob-prefix", "p_", "--classes", "x,y"],
         r"--classes: the labels in 'y' are numbers, so the classes must be integers; "
         r"got 'x,y'\.$"),
        (lambda t: ["report", write(t, GOOD), "--classes", "0,0", "-p", "p"],
         r"--classes must not repeat a label"),
        (lambda t: ["report", write(t, GOOD.assign(y=[3, 1, 2]).rename(columns={"p": "a"})
                                    .assign(b=[0.5, 0.2, 0.4], c=[0.3, 0.1, 0.2])),
                    "--prob", "a", "b", "c", "--classes", "1,2"],
         r"error: --classes must give one label per column of --prob \(3\); got 2\.$"),
        (lambda t: ["report", write(t, GOOD.rename(columns={"p": "p_1"})), "--prob-prefix", "p_"],
         r"error: --prob-prefix must match at least two columns \(one per class\); 'p_' matches "
         r"1 \('p_1'\)\.$"),
        (lambda t: ["report", write(t, pd.DataFrame({"ya": [0.3], "yb": [0.7], "y": ["a"]})),
                    "--prob-prefix", "y"],
         r"error: The label column 'y' also starts with --prob-prefix 'y'; list the probability "
         r"columns with --prob instead\.$"),
        (lambda t: ["report", write(t, GOOD.assign(p=["0.2", "unknown", "0.1"]))],
         r"error: --prob must hold numbers; 1 value is not, the first at data row 2 "
         r"\('unknown'\)\.$"),
        (lambda t: ["report", write(t, pd.DataFrame({"p_0": [0.2, 0.4, "?"],
                                                     "p_1": ["0.8", "x", "?"],
                                                     "y": [0, 1, 1]})), "--prob-prefix", "p_"],
         r"error: --prob-prefix 'p_' must hold numbers; 3 values are not, the first at data "
         r"row 2, column 'p_1' \('x'\)\.$"),
        (lambda t: ["report", write(t, GOOD.assign(y=[None, 1, 0]))],
         r"error: --label must not contain missing values; 1 value is missing, the first at data "
         r"row 1\. Pass --na-rm to drop incomplete observations\.$"),
        (lambda t: ["report", write(t, GOOD), "--renormalize"],
         r"error: --renormalize needs several probability columns \(--prob A B \.\.\. or "
         r"--prob-prefix\); a single --prob column has no row sums\.$"),
        (lambda t: ["report", write(t, GOOD), "--sep", ";;"],
         r"error: --sep must be one character \(or 'tab'\); got ';;'\.$"),
        (lambda t: ["report", "--sep", ";"], r"error: --sep applies to CSV input; give FILE\.$"),
        (lambda t: ["report", write(t, GOOD.iloc[:0])],
         r"error: .*bad\.csv has no data rows, only a header\.$"),
        (lambda t: ["report", write(t, GOOD.iloc[:0]), "--by", "m"],
         r"error: .*bad\.csv has no data rows, only a header\.$"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, make_args, match):
    _bad(capsys, tmp_path, *make_args(tmp_path), match=match)


@pytest.mark.parametrize("message, param, python, cli", [
    # each argument of OPTIONS, as the subject (param) or a term of the message
    ("`y` must be 0/1", "y", "`y` must be 0/1", "--label must be 0/1"),
    ("`classes` must be unique", "classes", "`classes` must be unique",
     "--classes must be unique"),
    ("`na_rm` must be True or False", "na_rm", "`na_rm` must be True or False",
     "--na-rm must be True or False"),
    ("`weights` must be finite", "weights", "`weights` must be finite", "--weights must be finite"),
    ("`rng` must be None", "rng", "`rng` must be None", "--seed must be None"),
    (f"`metrics` must name calibr metrics ('ece'){arg('metrics', 'python', ' or be callables')}; "
     "got 3.", "metrics", "`metrics` must name calibr metrics ('ece') or be callables; got 3.",
     "--metrics must name calibr metrics ('ece'); got 3."),
    ("`tests` must name tests", "tests", "`tests` must name tests", "--test must name tests"),
    ("`p_prefix` matched 'x', not a column.", "p_prefix", "`p_prefix` matched 'x', not a column.",
     "--prob-prefix matched 'x', not a column."),
    ("`p` must lie in [0, 1]", "p", "`p` must lie in [0, 1]", "--prob must lie in [0, 1]"),
    (f"The columns of {arg('p')} and {arg('y')}", "y", "The columns of `p` and `y`",
     "The columns of --prob and --label"),
    # name = value, and name=value hints
    (f"{arg('method', 'setting', 'spiegelhalter')} is for binary outcomes only", "p",
     '`method = "spiegelhalter"` is for binary outcomes only',
     "--test spiegelhalter is for binary outcomes only"),
    (f"Pass {arg('na_rm', 'hint', True)} to drop incomplete observations.", "y",
     "Pass na_rm=True to drop incomplete observations.",
     "Pass --na-rm to drop incomplete observations."),
    (f"Pass {arg('classes', 'hint', '(negative, positive)')} to name other labels.", "y",
     "Pass classes=(negative, positive) to name other labels.",
     "Pass --classes NEGATIVE,POSITIVE to name other labels."),
    (f"pass {arg('classes', 'hint')} to give the label of each column.", "y",
     "pass classes= to give the label of each column.",
     "pass --classes to give the label of each column."),
    (f"pass {arg('classes', 'hint', 'range(3)')} for 0-based labels, or "
     f"{arg('classes', 'hint', 'range(1, 4)')} for R's codes.", "y",
     "pass classes=range(3) for 0-based labels, or classes=range(1, 4) for R's codes.",
     "pass --classes 0,1,2 for 0-based labels, or --classes 1,2,3 for R's codes."),
    # the phrases of Python objects
    (f"`y` must hold integer class codes in 1..3 for {arg('p', 'columns', 3)}", "y",
     "`y` must hold integer class codes in 1..3 for a 3-column `p`",
     "--label must hold integer class codes in 1..3 for 3 probability columns"),
    (f"Labels are matched to {arg('p', 'frame')}", "y",
     "Labels are matched to the column names of the DataFrame `p`",
     "Labels are matched to the names of the --prob columns"),
    (f"`y` must be 0/1 or boolean for {arg('p', 'vector')}", "y",
     "`y` must be 0/1 or boolean for a vector `p`",
     "--label must be 0/1 or boolean for a single --prob column"),
    (f"The option 'rng' of test 'x' is set by {arg('summarise', 'function')} ({arg('rng')}); "
     "pass it there instead.", "tests",
     "The option 'rng' of test 'x' is set by summarise() (`rng`); pass it there instead.",
     "The option 'rng' of test 'x' is set by the report (--seed); pass it there instead."),
    # names that are not options everywhere stay, and so does text that is no term
    ("`bins` must be a single positive integer", "bins",
     "`bins` must be a single positive integer", "`bins` must be a single positive integer"),
    (f"{arg('p_a')} and {arg('p_b')} must be predictions", "p_b",
     "`p_a` and `p_b` must be predictions", "`p_a` and `p_b` must be predictions"),
    ("did you mean `classes=`?", "metrics", "did you mean `classes=`?",
     "did you mean `classes=`?"),
    ("summarise(..., weights='column')", "metrics", "summarise(..., weights='column')",
     "summarise(..., weights='column')"),
    ("`y` must be 0/1; got '`p`' (na_rm=True).", "y", "`y` must be 0/1; got '`p`' (na_rm=True).",
     "--label must be 0/1; got '`p`' (na_rm=True)."),
])
def test_library_messages_in_the_words_of_the_command_line(message, param, python, cli):
    """calibr.cli._errors._cli_message: one table from the arguments of the Python API
    to the options that set them, applied to the terms of a message (its subject,
    ``param``, and the arguments written with calibr._input.arg), never to its text."""
    from calibr.cli._errors import _cli_message

    err = InputError(message, param=param)
    assert str(err) == python
    assert _cli_message(err) == cli


def test_library_messages_with_the_callers_words():
    """``p`` is the option that gave the probabilities; a caller that knows that a
    message is about --bins (not a metric's ``bins``) or names other arguments
    says so; a list of --prob columns is still given by --prob."""
    from calibr.cli._errors import _cli_message

    prefix = "--prob-prefix 'p_'"
    assert _cli_message(InputError("`p` rows must sum to 1", param="p"), prefix) == (
        f"{prefix} rows must sum to 1")
    assert _cli_message(InputError(f"list the probability columns with {arg('p', 'use')} "
                                   "instead.", param="p_prefix"), prefix) == (
        "list the probability columns with --prob instead.")
    assert _cli_message(InputError("`bins` must be a single positive integer; got 0.",
                                   param="bins"), names={"bins": "--bins"}) == (
        "--bins must be a single positive integer; got 0.")
    assert _cli_message(InputError(f"{arg('p_a')} and {arg('p_b')}", param="p_b"),
                        names={"p_a": "A", "p_b": "B"}) == "A and B"


def test_a_value_that_looks_like_an_argument_is_shown_as_it_is(capsys, tmp_path):
    """The command line writes the arguments a library message names (its terms) as
    options, and nothing else: a label "`p`" or "na_rm=True" in the data stays as
    it is (a rewrite of the message's text would show --prob and --na-rm)."""
    df = pd.DataFrame({"p": [0.2, 0.7, 0.4, 0.5], "y": ["no", "yes", "`p`", "na_rm=True"]})
    _bad(capsys, tmp_path, "report", write(tmp_path, df), "--classes", "no,yes",
         match=r"error: --label must be one of the class labels \('no', 'yes'\); 2 values do "
               r"not, the first at data row 3 \('`p`'\)\.$")
    df["y"] = ["no", "yes", "na_rm=True ", "`y`"]
    _bad(capsys, tmp_path, "report", write(tmp_path, df), "--classes", "no,yes",
         match=r"error: --label must be one of the class labels \('no', 'yes'\); 2 values do "
               r"not, the first at data row 3 \('na_rm=True '\)\.$")


def test_the_options_table_names_arguments_of_the_api():
    """Each key of the table is a parameter of a public function of calibr (the
    table follows the API's names, and a renamed parameter fails here)."""
    import inspect

    from calibr.cli._errors import OPTIONS

    params = set()
    for name in calibr.__all__:
        obj = getattr(calibr, name)
        if callable(obj) and not isinstance(obj, type):
            params |= set(inspect.signature(obj).parameters)
    assert set(OPTIONS) <= params, set(OPTIONS) - params


def test_header_only_file_is_the_same_error_with_or_without_by(capsys, tmp_path):
    path = write(tmp_path, GOOD.iloc[:0])
    errs = [_bad(capsys, tmp_path, "report", path, *by, match="no data rows")
            for by in ([], ["--by", "m"], ["--by", "m", "--per-bin"])]
    assert errs[0] == errs[1] == errs[2]


def test_missing_command(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert err == "calibr: error: missing command; try `calibr report` (see `calibr --help`)\n"


def test_bad_plot_format_writes_nothing(capsys, tmp_path):
    require("matplotlib")
    out_file = tmp_path / "out.csv"
    code = main(["report", write(tmp_path, GOOD), "-o", str(out_file),
                 "--plot", str(tmp_path / "out.xyz")])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "xyz" in err
    assert not out_file.exists() and not (tmp_path / "out.xyz").exists()


def test_output_directory_missing(capsys, tmp_path):
    code = main(["report", write(tmp_path, GOOD), "-o", str(tmp_path / "no" / "out.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert "--output" in err and "does not exist" in err


def test_same_output_and_plot(capsys, tmp_path):
    path = str(tmp_path / "x.png")
    (tmp_path / "x.txt").symlink_to(path)  # a text output that is the image (.png is not one)
    code = main(["report", write(tmp_path, GOOD), "-o", str(tmp_path / "x.txt"), "--plot", path])
    _, err = capsys.readouterr()
    assert code == 2 and "--output and --plot must be different files." in err
    assert not (tmp_path / "x.png").exists()


def test_plot_without_matplotlib(capsys, tmp_path, monkeypatch):
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out_file = tmp_path / "r.csv"
    code = main(["report", write(tmp_path, GOOD), "-o", str(out_file),
                 "--plot", str(tmp_path / "r.png")])
    _, err = capsys.readouterr()
    assert code == 2
    # calibr is not on PyPI: the hint names the package that is
    assert err == ("calibr: error: --plot needs matplotlib; install it with "
                   "`pip install matplotlib`.\n")
    assert not out_file.exists() and not (tmp_path / "r.png").exists()


def test_parquet_without_pyarrow(capsys, tmp_path, monkeypatch):
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1")

    def no_engine(*args, **kwargs):
        raise ImportError("Unable to find a usable engine")

    monkeypatch.setattr(pd, "read_parquet", no_engine)
    code = main(["report", str(path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err == ("calibr: error: reading Parquet needs pyarrow; install it with "
                   "`pip install pyarrow`.\n")


#: ``python -c`` code that runs the command with some packages missing: ``import
#: NAME`` raises ModuleNotFoundError, as in an environment without them.
WITHOUT = """
import sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {names!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Absent())
from calibr.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_without(names, *argv):
    """The command in a fresh process where the packages ``names`` are missing."""
    return subprocess.run([sys.executable, "-c", WITHOUT.format(names=set(names)), *argv],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("missing", "options", "message"),
    [
        # ``pip install .`` alone: neither Dask nor the engines that stand in for it
        (["dask", "polars", "duckdb"], [], "{dir}: reading a directory or a glob of files "
         "needs Dask (No module named 'dask'); install it with "
         "`pip install 'dask[dataframe,distributed]'`."),
        (["pyarrow", "fastparquet"], [], "{dir}: reading a directory or a glob of files needs "
         "Dask (No module named 'pyarrow'); install it with "
         "`pip install 'dask[dataframe,distributed]'`."),
        (["distributed"], ["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs "
         "dask.distributed (No module named 'distributed'); install it with "
         "`pip install 'dask[dataframe,distributed]'`."),
    ],
    ids=["dask", "pyarrow", "distributed"],
)
def test_a_directory_without_dask_is_an_input_error(tmp_path, missing, options, message):
    """A missing optional package is the environment's, not a bug in calibr: exit 2
    and the command that installs it (calibr is not on PyPI: the packages that are)."""
    require("pyarrow")
    parts = tmp_path / "predictions"
    parts.mkdir()
    for i in range(2):
        GOOD.to_parquet(parts / f"part-{i}.parquet")
    proc = run_without(missing, "report", str(parts), "--by", "m", *options,
                       "-o", str(tmp_path / "r.csv"))
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr == f"calibr: error: {message.format(dir=parts)}\n"
    assert not (tmp_path / "r.csv").exists()


def test_without_dask_a_directory_is_read_by_polars(tmp_path):
    """docs/cli.md: without Dask, polars (then DuckDB) reads a directory; the same
    report as of the rows in one file."""
    require("pyarrow")
    require("polars")
    parts = tmp_path / "predictions"
    parts.mkdir()
    for i in range(2):
        GOOD.to_parquet(parts / f"part-{i}.parquet")
    proc = run_without(["dask", "distributed"], "report", str(parts), "-f", "csv")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    one = run_without([], "report", write(tmp_path, pd.concat([GOOD, GOOD])), "-f", "csv")
    assert proc.stdout == one.stdout


def test_without_dask_a_single_file_is_read_by_pandas(tmp_path):
    proc = run_without(["dask", "distributed"], "report", write(tmp_path, GOOD), "-f", "csv")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("form,bins,n,ece,mce,mce_bin_n\n")


def test_parquet_output_without_pyarrow(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    dest = tmp_path / "r.parquet"
    code, out, err = run(capsys, "report", write(tmp_path, GOOD), "-o", str(dest))
    assert (code, out) == (2, "")
    assert err == (f"calibr: error: --output {dest}: writing Parquet needs pyarrow; install it "
                   "with `pip install pyarrow`.\n")
    assert not dest.exists()


def test_a_full_stdout_is_an_input_error(tmp_path):
    """`calibr report > /dev/full`: the disk, not calibr, is at fault."""
    if not os.path.exists("/dev/full"):
        unavailable("needs Linux's /dev/full")  # CI runs on Linux: there, a failure
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "calibr.cli", "report",
                               write(tmp_path, GOOD)], stdout=full, stderr=subprocess.PIPE,
                              text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr == ("calibr: error: cannot write the output to stdout: No space left on "
                           "device.\n")


def test_an_output_under_a_regular_file(capsys, tmp_path):
    src = write(tmp_path, GOOD)
    code, out, err = run(capsys, "report", src, "-o", f"{src}/r.csv")
    assert (code, out) == (2, "")
    assert err == (f"calibr: error: --output {src}/r.csv: {os.path.realpath(src)!r} is not a "
                   "directory.\n")


def test_corrupt_parquet(capsys, tmp_path):
    require("pyarrow")
    path = tmp_path / "x.parquet"
    path.write_bytes(b"not parquet at all")
    code = main(["report", str(path)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and err.startswith("calibr: error: ")


def test_unreadable_csv_names_the_file(capsys, tmp_path):
    path = tmp_path / "garbage.csv"
    path.write_bytes(b"p,y\n\x81\xfe\x00\xff,1\n")
    code, out, err = run(capsys, "report", str(path))
    assert code == 2 and out == ""
    assert re.fullmatch(r"calibr: error: .*garbage\.csv: cannot read it as CSV: it is not UTF-8 "
                        r"text \(it has the byte 0x81\)\.\n", err), err


def test_stdin_csv_errors_name_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, out, err = run(capsys, "report", "-")
    assert code == 2 and out == ""
    assert err == "calibr: error: -: cannot read it as CSV: No columns to parse from file.\n"


@pytest.mark.parametrize(
    ("exc", "match"),
    [
        (MemoryError("Unable to allocate 8.00 TiB for an array"),
         r"^calibr: error: out of memory for this computation \(Unable to allocate 8\.00 TiB for "
         r"an array\); check the size of the input, --bins and the metric options\.\n$"),
        (MemoryError(), r"^calibr: error: out of memory for this computation; check the size of "
                        r"the input, --bins and the metric options\.\n$"),
    ],
)
def test_memory_errors_exit_2(capsys, tmp_path, monkeypatch, exc, match):
    import calibr.cli

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(calibr.cli._report, "summarise", boom)
    code, out, err = run(capsys, "report", write(tmp_path, GOOD))
    assert code == 2 and out == ""
    assert re.search(match, err), err


def test_r_codes_with_a_column_list_need_classes(capsys, tmp_path):
    # the --help epilog: labels equal the column names, or --classes gives them
    df = GOOD.assign(y=[3, 1, 2]).rename(columns={"p": "a"}).assign(b=[0.5, 0.2, 0.4],
                                                                   c=[0.3, 0.1, 0.2])
    path = write(tmp_path, df)
    code, out, err = run(capsys, "report", path, "--prob", "a", "b", "c", "--classes", "1,2,3",
                         "-f", "csv")
    assert code == 0 and err == ""
    got = pd.read_csv(io.StringIO(out))
    assert got["ece"].tolist() == [calibr.ece(df[["a", "b", "c"]], df["y"], classes=[1, 2, 3])]


def test_help_does_not_promise_r_codes_or_pypi(capsys):
    code, out, _ = run(capsys, "report", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "be R's 1-based codes" not in text
    assert "--classes must give the label of each column (e.g. --classes 1,2,3 for R's 1-based " \
           "codes)" in text
    assert "pip install calibr" not in text and "(pip install matplotlib)" in text


def test_real_process_has_no_traceback(tmp_path):
    """The same through a real interpreter: exit status 2, one line, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "calibr.cli", "report", str(tmp_path / "missing.csv")],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    # python -m calibr (calibr/__main__.py) runs the command as python -m calibr.cli does
    ok = subprocess.run([sys.executable, "-m", "calibr", "report"],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and ok.stderr == ""
    assert ok.stdout.startswith("calibr report of bundled example data")
    assert "random_forest" in ok.stdout


def test_help_of_bins_and_smooth_says_what_they_apply_to(capsys, monkeypatch):
    """--bins counts the bins of either --binning (not "equal-width" only), and --smooth
    names the diagrams it draws on: the binary and confidence ones (--type top-label
    has no diagram)."""
    monkeypatch.setenv("COLUMNS", "1000")  # argparse: no line breaks inside the phrases
    code, out, _ = run(capsys, "report", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "number of equal-width bins" not in text
    assert ("--bins B number of bins for ece, mce, calibration_error, --per-bin and --plot, of "
            "the kind --binning "
            "says: B bins of equal width on [0, 1], or with --binning equal-mass B groups of "
            "nearly equal size") in text
    assert "top-label diagrams" not in text
    assert "(calibr.smece_curve; binary and confidence diagrams, the top label's " in text


def test_the_skce_statistic_says_its_sign_means_nothing(capsys, tmp_path):
    """The asymptotic SKCE test's statistic, n/(n-1) SKCE_uq - SKCE_b, is negative for
    a group far from calibrated (p-value 0 here); the table's header says to read the
    p-value, not the sign."""
    rng = np.random.default_rng(3)
    p = rng.random(400)
    y = (rng.random(400) < p**4).astype(int)  # badly miscalibrated
    path = write(tmp_path, pd.DataFrame({"p": p, "y": y}))
    code, out, _ = run(capsys, "report", path, "--test", "skce(n_resamples=200)", "-f", "csv")
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    assert code == 0
    assert row["skce(n_resamples=200)_statistic"] < 0
    assert row["skce(n_resamples=200)_pvalue"] == 0
    code, out, _ = run(capsys, "report", path, "--test", "skce(n_resamples=200)")
    assert code == 0
    assert ("tests: skce(n_resamples=200) = asymptotic SKCE test, 200 bootstrap resamples "
            "(statistic n/(n-1) SKCE_uq - SKCE_b, often negative, also when miscalibrated: "
            "read its p-value, not its sign)\n") in out


class FakeFigure:
    def savefig(self, buf, format):  # noqa: A002 - matplotlib's name
        buf.write(b"fake " + format.encode())


_NOTE = ("more than 3 classes, drawn as the confidence, not in the classwise form of the "
         "metrics (--type classwise draws that)")


def _keep_plot_calls(monkeypatch, real=False):
    """Record what --plot passes to reliability_diagram: (table, by, options, figure)."""
    import calibr.plot

    seen = []
    draw = calibr.plot.reliability_diagram

    def keep(table, by=None, **kw):
        fig = draw(table, by=by, **kw) if real else FakeFigure()
        seen.append((table, by, kw, fig))
        return fig

    monkeypatch.setattr(calibr.plot, "reliability_diagram", keep)
    return seen


def test_plot_draws_the_top_label_of_many_classes_by_default(capsys, tmp_path, monkeypatch):
    """Without --type, ten classes are drawn as the top label (one curve per panel,
    titled so), three classwise; --type picks either; the report's numbers do not
    change with --plot."""
    require("matplotlib")
    seen = _keep_plot_calls(monkeypatch)
    png = tmp_path / "d.png"
    code, out, err = run(capsys, "report", "--example", "digits", "-f", "csv", "--plot",
                         str(png))
    assert code == 0 and err == ""
    table, by, kw, _ = seen[-1]
    assert list(table.columns) == ["dataset", "model", *TABLE_COLUMNS]  # no class: top label
    assert by == ["dataset", "model"]
    assert kw == {"title": "Reliability diagrams: 10 equal-width bins; form: confidence "
                           f"(each row's highest probability)\n{_NOTE}", "show_ece": True,
                  "ece_label": "confidence ECE"}
    df = load_digits_predictions()
    want = calibration_table(None, "y", type="confidence", data=df.groupby("model"),
                             p_prefix="p_")
    pd.testing.assert_frame_equal(table.drop(columns="dataset"), want)
    assert png.read_bytes() == b"fake png"
    assert run(capsys, "report", "--example", "digits", "-f", "csv")[1] == out  # the same numbers
    assert pd.read_csv(io.StringIO(out))["form"].tolist() == ["classwise"] * 3

    assert main(["report", "--example", "digits", "--type", "classwise", "--plot",
                 str(png)]) == 0
    table, by, kw, _ = seen[-1]
    assert list(table.columns) == ["dataset", "model", "class", *TABLE_COLUMNS]
    assert by == ["dataset", "model"]  # classes are curves within each panel
    assert kw == {"title": "Reliability diagrams: 10 equal-width bins; form: classwise; one "
                           "curve per class", "show_ece": True, "ece_label": "ECE"}
    assert main(["report", "--example", "digits", "--type", "confidence", "--bins", "5",
                 "--plot", str(png)]) == 0
    table, by, kw, _ = seen[-1]
    assert list(table.columns) == ["dataset", "model", *TABLE_COLUMNS]
    assert kw["title"] == ("Reliability diagrams: 5 equal-width bins; form: confidence (each "
                           "row's highest probability)")
    assert kw["ece_label"] == "confidence ECE"
    assert main(["report", "--plot", str(png)]) == 0  # both bundled data sets
    table, by, kw, _ = seen[-1]
    assert kw["title"] == ("Reliability diagrams: 10 equal-width bins; form: binary "
                           "(breast_cancer), confidence (each row's highest probability) "
                           f"(digits)\ndigits: {_NOTE}")
    assert kw["ece_label"] == {("digits", m): "confidence ECE"
                               for m in ("logistic", "naive_bayes", "random_forest")}
    assert main(["report", "--type", "classwise", "--plot", str(png)]) == 0
    assert seen[-1][2]["title"] == ("Reliability diagrams: 10 equal-width bins; form: binary "
                                    "(breast_cancer), classwise (digits); one curve per class")
    assert seen[-1][2]["ece_label"] == {}
    capsys.readouterr()


@pytest.mark.parametrize(("k", "drawn"), [(2, "classwise"), (3, "classwise"), (4, "confidence")])
def test_plot_draws_up_to_three_classes_classwise(capsys, tmp_path, monkeypatch, k, drawn):
    require("matplotlib")
    seen = _keep_plot_calls(monkeypatch)
    rng = np.random.default_rng(k)
    df = pd.DataFrame(rng.dirichlet(np.ones(k), 120), columns=[f"p_{j}" for j in range(k)])
    df["y"] = rng.integers(0, k, 120)
    src = write(tmp_path, df)
    code, out, err = run(capsys, "report", src, "--prob-prefix", "p_", "--per-bin",
                         "--plot", str(tmp_path / "k.png"))
    assert code == 0 and err == ""
    assert table_body(out)[0][0] == "class"  # the printed table: classwise, as the metrics
    table, _, kw, _ = seen[-1]
    assert ("class" in table.columns) == (drawn == "classwise")
    want = calibration_table(None, "y", type=drawn, data=df, p_prefix="p_")
    pd.testing.assert_frame_equal(table, want)
    assert kw["ece_label"] == ("confidence ECE" if drawn == "confidence" else "ECE")
    assert kw["title"].endswith(_NOTE) == (drawn == "confidence")


def test_plot_panels_carry_the_ece_they_draw(capsys, tmp_path, monkeypatch):
    """A real figure of the default digits report: one panel per model, titled with
    its confidence ECE (calibr.ece(type="confidence")), counts on a log scale, every
    title inside the figure, no legend (one curve each); with --type classwise, the
    classwise ECE that the report prints and one legend for the figure."""
    require("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    import calibr.plot

    seen = _keep_plot_calls(monkeypatch, real=True)
    png = tmp_path / "d.png"
    df = load_digits_predictions()
    for form in ("confidence", "classwise"):
        extra = ["--type", "classwise"] if form == "classwise" else []
        code, out, err = run(capsys, "report", "--example", "digits", "--plot", str(png),
                             "-f", "json", *extra)
        assert code == 0 and err == ""
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        fig = seen[-1][3]
        records = json.loads(out)
        panels = [ax for ax in fig.axes if ax.get_label() == calibr.plot.PANEL_LABEL]
        counts = [ax for ax in fig.axes if ax.get_label() == calibr.plot.COUNTS_LABEL]
        assert len(panels) == len(counts) == len(records) == 3
        assert len(fig.axes) == 6  # a row of three: no empty axes
        assert {ax.get_yscale() for ax in counts} == {"log"}
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        for text in [ax.title for ax in panels] + [fig._suptitle]:
            box = text.get_window_extent(canvas.get_renderer())
            assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, text.get_text()
        for ax, r in zip(panels, records, strict=True):
            g = df[df["model"] == r["model"]]
            printed = calibr.ece(g[DIGITS], g["y"], classes=range(10))
            assert r["ece"] == printed and r["form"] == "classwise"  # the report's numbers
            if form == "confidence":
                ece = calibr.ece(g[DIGITS], g["y"], type="confidence", classes=range(10))
                assert ax.get_title() == (f"dataset = digits, model = {r['model']}\n"
                                          f"confidence ECE = {ece:.4g}")
                assert ax.get_legend() is None
            else:
                assert ax.get_title() == (f"dataset = digits, model = {r['model']}\n"
                                          f"ECE = {printed:.4g} (mean over 10 classes)")
                assert ax.get_legend() is None  # one legend, for the figure
        if form == "confidence":
            assert fig.legends == []
        else:
            (legend,) = fig.legends
            assert [t.get_text() for t in legend.get_texts()] == [
                "perfect calibration", *(f"class = {k}" for k in range(10))]


def test_too_many_panels_for_one_plot(capsys, tmp_path):
    df = pd.DataFrame({"g": np.arange(202) // 2, "p": np.tile([0.2, 0.8], 101),
                       "y": np.tile([0, 1], 101)})
    err = _bad(capsys, tmp_path, "report", write(tmp_path, df), "--by", "g",
               match=r"error: --plot draws one panel per group, and 101 groups are too many "
                     r"for one figure \(at most 100\); use fewer --by columns\.$")
    assert err


def test_na_rm_drops_incomplete_rows(capsys, tmp_path):
    df = pd.DataFrame({"m": ["a", "a", "a", "b"], "p": [0.2, None, 0.7, 0.4],
                       "y": [0, 1, None, 1]})
    path = write(tmp_path, df)
    code, out, err = run(capsys, "report", path, "-g", "m", "--na-rm", "-f", "json")
    assert code == 0 and err == ""
    records = json.loads(out)
    assert [r["n"] for r in records] == [1, 1]
    assert records[0]["ece"] == calibr.ece([0.2], [0])


def test_bundled_data_with_other_keys(capsys):
    code, out, _ = run(capsys, "report", "--by", "model", "fold", "-m", "ece", "-f", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["dataset", "model", "fold", "form", "bins", "n", "ece"]
    assert len(got) == 2 * 3 * 5


def test_a_compressed_csv_whose_module_is_missing_is_one_clear_error(capsys, monkeypatch,
                                                                      tmp_path):
    """A compressed CSV whose module is missing (.csv.zst without zstandard) is one line
    naming the file, exit 2."""
    monkeypatch.setitem(sys.modules, "zstandard", None)  # absent, whether installed or not
    path = tmp_path / "preds.csv.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd not really zstd")
    code = main(["report", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"calibr: error: {path}: cannot read it: ") and err.count("\n") == 1


# --------------------------------------------------------------------------
# the format of --output: its extension


def test_parquet_output_holds_the_rows_of_the_csv(capsys, tmp_path, binary_csv):
    require("pyarrow")
    path, _ = binary_csv
    for options in (["--by", "model", "fold"], ["--by", "model", "--per-bin"]):
        options = [*options, "--prob", "prob", "--label", "label"]
        code, csv, err = run(capsys, "report", str(path), *options, "-f", "csv")
        assert code == 0, err
        want = pd.read_csv(io.StringIO(csv))
        for name in ("r.parquet", "r.PQ"):
            dest = tmp_path / name
            code, out, err = run(capsys, "report", str(path), *options, "-o", str(dest))
            assert (code, out, err) == (0, "", "")
            assert dest.read_bytes()[:4] == b"PAR1"
            got = pd.read_parquet(dest)
            assert list(got.columns) == list(want.columns)
            pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize(("name", "options", "first"), [
    ("r.csv", [], "form,bins,n,ece,mce,mce_bin_n"),
    ("r.json", [], "["),
    ("r.txt", [], "calibr report of "),
    ("r", [], "calibr report of "),
    ("r.txt", ["-f", "csv"], "form,bins,n,ece,mce,mce_bin_n"),
    ("r", ["-f", "json"], "["),
    ("r.CSV", ["-f", "csv"], "form,bins,n,ece,mce,mce_bin_n"),
])
def test_text_outputs_follow_the_extension_or_format(capsys, tmp_path, name, options, first):
    dest = tmp_path / name
    code, out, err = run(capsys, "report", write(tmp_path, GOOD), "-o", str(dest), *options)
    assert (code, out, err) == (0, "", "")
    assert dest.read_text().splitlines()[0].startswith(first)


@pytest.mark.parametrize(("name", "options", "message"), [
    ("r.xlsx", [], "calibr does not write .xlsx files"),
    ("r.xls", ["-f", "csv"], "calibr does not write .xls files"),
    ("r.html", [], "calibr does not write .html files"),
    ("r.tsv", [], "calibr does not write .tsv files"),
    ("r.csv.gz", [], "calibr does not write .gz files"),
])
def test_an_extension_calibr_does_not_write_is_refused(capsys, tmp_path, name, options,
                                                       message):
    src = write(tmp_path, GOOD)
    before = _snapshot(tmp_path)
    dest = tmp_path / name
    code, out, err = run(capsys, "report", src, "-o", str(dest), *options)
    assert (code, out) == (2, "")
    assert err == (f"calibr: error: --output {dest}: {message}; use .csv, .json, .parquet or "
                   ".pq, or .txt or no extension for the table (or --format).\n")
    assert _snapshot(tmp_path) == before  # nothing written


@pytest.mark.parametrize(("name", "fmt", "written"), [
    ("r.csv", "json", "CSV"), ("r.json", "csv", "JSON"), ("r.csv", "table", "CSV"),
    ("r.parquet", "csv", "Parquet"), ("r.pq", "table", "Parquet"),
])
def test_a_format_that_contradicts_the_extension_is_refused(capsys, tmp_path, name, fmt,
                                                            written):
    src = write(tmp_path, GOOD)
    before = _snapshot(tmp_path)
    dest = tmp_path / name
    code, out, err = run(capsys, "report", src, "-o", str(dest), "-f", fmt)
    assert (code, out) == (2, "")
    assert err == (f"calibr: error: --format {fmt} contradicts the extension of --output {dest} "
                   f"({written}); drop --format or change the extension.\n")
    assert _snapshot(tmp_path) == before


def test_a_report_arrow_cannot_store_is_an_input_error(capsys, tmp_path, monkeypatch):
    pa = require("pyarrow")

    def no_type(self, *args, **kwargs):
        raise pa.ArrowTypeError("no Arrow type for the column 'm'")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", no_type)
    src = write(tmp_path, GOOD)
    before = _snapshot(tmp_path)
    dest = tmp_path / "r.parquet"
    code, out, err = run(capsys, "report", src, "--by", "m", "-o", str(dest))
    assert (code, out) == (2, "")
    assert err == (f"calibr: error: --output {dest}: cannot write the report as Parquet: no "
                   "Arrow type for the column 'm'; write it as .csv or .json.\n")
    assert _snapshot(tmp_path) == before


# --------------------------------------------------------------------------
# no file is ever lost


def _snapshot(directory):
    """Every file of ``directory`` (name -> bytes), temporary files of calibr included."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.mark.parametrize("option", ["-o", "--plot"])
@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_output_that_is_the_input_is_refused(capsys, tmp_path, option, link, suffix):
    if suffix == ".parquet":
        require("pyarrow")
        src = tmp_path / "in.parquet"
        GOOD.to_parquet(src)
    else:
        src = Path(write(tmp_path, GOOD, "in.csv"))
    dest = {"same": src, "symlink": tmp_path / f"link{suffix}",
            "hardlink": tmp_path / f"hard{suffix}"}[link]
    if link == "symlink":
        dest.symlink_to(src)
    elif link == "hardlink":
        os.link(src, dest)
    before = _snapshot(tmp_path)
    code, out, err = run(capsys, "report", str(src), option, str(dest))
    assert code == 2 and out == ""
    name = "--output" if option == "-o" else "--plot"
    assert err == (f"calibr: error: {name} {dest} is the input FILE; calibr never overwrites "
                   "its input: choose another path.\n")
    assert _snapshot(tmp_path) == before
    assert dest.is_symlink() == (link == "symlink")


def test_output_that_is_the_file_on_stdin_is_refused(tmp_path):
    path = Path(write(tmp_path, GOOD, "in.csv"))
    before = path.read_bytes()
    with open(path, "rb") as stdin:
        proc = subprocess.run([sys.executable, "-m", "calibr.cli", "report", "-", "-o", str(path)],
                              stdin=stdin, capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"calibr: error: --output {path} is the input on stdin; calibr never "
                           "overwrites its input: choose another path.\n")
    assert path.read_bytes() == before


def _tree(root):
    """Every file under ``root`` (relative path -> bytes), links as what they point to."""
    return {str(f.relative_to(root)): (os.readlink(f) if f.is_symlink() else f.read_bytes())
            for f in sorted(root.rglob("*")) if f.is_file() or f.is_symlink()}


@pytest.fixture
def sources(tmp_path):
    """Inputs of every kind: a CSV, a directory and a glob of Parquet files, DuckDB
    tables (one in a database named runs.txt), and links to them."""
    require("pyarrow")
    import duckdb

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"p": rng.random(40), "q": rng.random(40)})
    df["y"] = (rng.random(40) < df["p"]).astype(int)
    (tmp_path / "parts" / "sub").mkdir(parents=True)
    df.iloc[:20].to_parquet(tmp_path / "parts" / "a.parquet", index=False)
    df.iloc[20:].to_parquet(tmp_path / "parts" / "b.parquet", index=False)
    df.to_csv(tmp_path / "one.csv", index=False)
    for name in ("runs.db", "runs.txt"):
        con = duckdb.connect(str(tmp_path / name))
        con.execute("create table preds as select * from df")
        con.close()
    (tmp_path / "db-link").symlink_to(tmp_path / "runs.db")
    (tmp_path / "part-link.parquet").symlink_to(tmp_path / "parts" / "a.parquet")
    os.link(tmp_path / "parts" / "b.parquet", tmp_path / "hard.parquet")
    return tmp_path


DB = "duckdb:{t}/runs.db::preds"
WORDS = "; calibr never overwrites its input: choose another path.\n"


@pytest.mark.parametrize(("argv", "says"), [
    # the database of a DuckDB table, by any name
    (["report", DB, "--html", "{t}/runs.db"],
     "--html {t}/runs.db is the database of the input FILE " + DB),
    (["report", DB, "--html", "{t}/db-link"],
     "--html {t}/db-link is the database of the input FILE " + DB),
    (["report", DB, "--html", "{t}/../{n}/runs.db"],
     "--html {t}/../{n}/runs.db is the database of the input FILE " + DB),
    (["report", "duckdb:{t}/runs.txt::preds", "-o", "{t}/runs.txt"],
     "--output {t}/runs.txt is the database of the input FILE duckdb:{t}/runs.txt::preds"),
    (["report", DB, "--plot", "{t}/runs.db.wal"],
     "--plot {t}/runs.db.wal is the database of the input FILE " + DB),
    (["compare", DB, "--p-baseline", "p", "--p-candidate", "q", "--html", "{t}/runs.db"],
     "--html {t}/runs.db is the database of the input FILE " + DB),
    (["compare", "{t}/one.csv", DB, "--prob", "p", "--html", "{t}/db-link"],
     "--html {t}/db-link is the database of the input CANDIDATE " + DB),
    (["compare", "{t}/one.csv", DB, "--prob", "p", "--html", "{t}/one.csv"],
     "--html {t}/one.csv is the input BASELINE"),
    # a directory: any file in it or below it, existing or new, and its files by a link
    (["report", "{t}/parts", "-o", "{t}/parts/b.parquet"],
     "--output {t}/parts/b.parquet is in the input directory FILE {t}/parts, whose files "
     "are all read"),
    (["report", "{t}/parts", "--engine", "polars", "-o", "{t}/parts/new.csv"],
     "--output {t}/parts/new.csv is in the input directory FILE {t}/parts, whose files are "
     "all read"),
    (["report", "{t}/parts", "--engine", "duckdb", "--plot", "{t}/parts/sub/r.png"],
     "--plot {t}/parts/sub/r.png is in the input directory FILE {t}/parts, whose files are "
     "all read"),
    (["report", "{t}/parts", "-o", "{t}/part-link.parquet"],
     "--output {t}/part-link.parquet is in the input directory FILE {t}/parts, whose files "
     "are all read"),
    (["report", "{t}/parts", "-o", "{t}/hard.parquet"],
     "--output {t}/hard.parquet is a file of the input directory FILE {t}/parts"),
    (["compare", "{t}/one.csv", "{t}/parts", "--prob", "p", "--html", "{t}/parts/r.html"],
     "--html {t}/parts/r.html is in the input directory CANDIDATE {t}/parts, whose files "
     "are all read"),
    # a glob: each match, by any name, and a new file it would match
    (["report", "{t}/parts/*.parquet", "--engine", "polars", "-o", "{t}/parts/a.parquet"],
     "--output {t}/parts/a.parquet is matched by the input glob FILE {t}/parts/*.parquet"),
    (["report", "{t}/parts/*.parquet", "-o", "{t}/hard.parquet"],
     "--output {t}/hard.parquet is matched by the input glob FILE {t}/parts/*.parquet"),
    (["report", "{t}/parts/*.parquet", "--engine", "duckdb", "-o", "{t}/parts/c.parquet"],
     "--output {t}/parts/c.parquet is matched by the input glob FILE {t}/parts/*.parquet"),
])
def test_no_output_is_any_file_of_an_input(capsys, sources, argv, says):
    """One rule for every output (--output, --plot, --html) against every input: a
    file, every file of a directory (or any new file in it), every match of a glob
    (or a new one), a DuckDB table's database, both inputs of compare; by resolved
    path and, where the output exists, as a file (symbolic and hard links)."""
    fill = {"t": sources, "n": sources.name}
    before = _tree(sources)
    code, out, err = run(capsys, *[a.format(**fill) for a in argv])
    assert (code, out) == (2, "")
    assert err == "calibr: error: " + says.format(**fill) + WORDS
    assert _tree(sources) == before


def test_an_output_beside_an_input_is_written(capsys, sources):
    """Outputs that no input reads are written, an existing one overwritten (docs/cli.md,
    "No file is lost"): beside a directory, a glob's directory file it does not match,
    the directory of a DuckDB database."""
    (sources / "old.csv").write_text("old")
    for argv, path in ((["report", str(sources / "parts")], "old.csv"),
                       (["report", f"{sources}/parts/*.parquet"], "parts/r.csv"),
                       (["report", f"duckdb:{sources}/runs.db::preds"], "r2.csv")):
        code, out, err = run(capsys, *argv, "-o", str(sources / path), "--format", "csv")
        assert (code, out, err) == (0, "", "")
        assert (sources / path).read_text().startswith("form,bins,n,ece,mce")


@pytest.fixture
def keep(tmp_path):
    """A good input and two existing outputs with known bytes."""
    src = write(tmp_path, GOOD, "good.csv")
    out, png = tmp_path / "keep.csv", tmp_path / "keep.png"
    out.write_bytes(b"precious report\n")
    png.write_bytes(b"precious image")
    return src, out, png


def test_unwritable_plot_keeps_the_existing_output(capsys, tmp_path, keep):
    if not Path("/proc/self").is_dir():
        unavailable("needs Linux's /proc")  # CI runs on Linux: there, a failure
    src, out, _ = keep
    before = _snapshot(tmp_path)
    code, stdout, err = run(capsys, "report", src, "-o", str(out), "--plot", "/proc/x.png")
    assert _snapshot(tmp_path) == before  # byte-identical, and no temporary file left
    assert code == 2 and stdout == ""
    assert re.fullmatch(r"calibr: error: --plot /proc/x\.png: cannot write it: .+\.\n", err), err
    assert not Path("/proc/x.png").exists()


def test_failure_while_rendering_keeps_the_existing_outputs(capsys, tmp_path, keep,
                                                           monkeypatch):
    require("matplotlib")
    import calibr.plot

    def broken(*args, **kwargs):
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(calibr.plot, "reliability_diagram", broken)
    src, out, png = keep
    before = _snapshot(tmp_path)
    code, _, err = run(capsys, "report", src, "-o", str(out), "--plot", str(png))
    assert _snapshot(tmp_path) == before
    assert code == 1 and "internal error (RuntimeError: renderer crashed)" in err


@pytest.mark.parametrize("existing", [True, False])
@pytest.mark.parametrize("fail", ["write", "rename"])
def test_failure_while_writing_the_second_output(capsys, tmp_path, keep, monkeypatch,
                                                 existing, fail):
    """A disk full while writing the second file, or its rename failing after the first
    output was renamed: every existing file keeps its bytes, a new one does not appear,
    and no temporary file is left."""
    require("matplotlib")
    import calibr.cli

    src, out, png = keep
    if not existing:
        out.unlink()
        png.unlink()
    before = _snapshot(tmp_path)
    calls = []
    real = {"write": calibr.cli._io._write_temp, "rename": os.replace}[fail]

    def second_fails(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    if fail == "write":
        monkeypatch.setattr(calibr.cli._io, "_write_temp", second_fails)
    else:
        monkeypatch.setattr(calibr.cli.os, "replace", second_fails)
    code, stdout, err = run(capsys, "report", src, "-o", str(out), "--plot", str(png))
    assert _snapshot(tmp_path) == before
    assert code == 2 and stdout == ""
    assert err == f"calibr: error: --plot {png}: cannot write it: No space left on device.\n"
    assert len(calls) >= 2
    if fail == "rename":  # the first output had been renamed into place: it was undone
        assert calls[0][1] == str(out)


@pytest.mark.parametrize("existing", [True, False])
@pytest.mark.parametrize("outputs", ["one", "two"])
def test_failure_inside_a_write_removes_its_temporary_file(capsys, tmp_path, keep, monkeypatch,
                                                           existing, outputs):
    """The disk fills up while a temporary file is being written (it exists, half
    written): that file is removed, so are the finished temporary files of the other
    outputs, and every existing file keeps its bytes."""
    import calibr.cli

    if outputs == "two":
        require("matplotlib")
    src, out, png = keep
    if not existing:
        out.unlink()
        png.unlink()
    before = _snapshot(tmp_path)
    calls = []
    real_fsync = os.fsync

    def last_fails(fd):
        calls.append(fd)
        if len(calls) == (2 if outputs == "two" else 1):
            raise OSError(28, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(calibr.cli._io.os, "fsync", last_fails)
    argv = ["report", src, "-o", str(out)] + (["--plot", str(png)] if outputs == "two" else [])
    code, stdout, err = run(capsys, *argv)
    assert len(calls) == (2 if outputs == "two" else 1)
    assert _snapshot(tmp_path) == before  # no temporary file left, every file as it was
    failed = f"--plot {png}" if outputs == "two" else f"--output {out}"
    assert code == 2 and stdout == ""
    assert err == f"calibr: error: {failed}: cannot write it: No space left on device.\n"


def test_outputs_replace_files_whole_and_keep_their_mode(capsys, tmp_path, keep):
    src, out, _ = keep
    os.chmod(out, 0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(out)
    code, _, _ = run(capsys, "report", src, "-o", str(link))
    assert code == 0
    assert link.is_symlink()  # the link still points at the output
    assert out.read_text().startswith("form,bins,n,ece,mce")
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.csv", "keep.csv", "keep.png",
                                                          "link.csv"]


_CLI_CSV = "p,y\n0.2,0\n0.7,1\n0.4,1\n0.9,1\n"


def test_an_output_path_that_is_a_directory_is_refused(capsys, tmp_path):
    """An --output that is a directory is refused with a message naming the option and the
    path, and nothing is written into it."""
    src = tmp_path / "in.csv"
    src.write_text(_CLI_CSV)
    target = tmp_path / "out"
    target.mkdir()
    code = main(["report", str(src), "-o", str(target)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"calibr: error: --output {target}: is a directory.\n"
    assert list(target.iterdir()) == []


# --------------------------------------------------------------------------
# one error contract: the user's mistakes exit 2, calibr's bugs exit 1


@pytest.mark.parametrize(
    ("exc", "shown"),
    [
        (KeyError("p_3"), "KeyError: 'p_3'"),
        (IndexError("index 10 is out of bounds"), "IndexError: index 10 is out of bounds"),
        (RuntimeError(), "RuntimeError"),
        (AttributeError("'NoneType' object has no attribute 'p'"),
         "AttributeError: 'NoneType' object has no attribute 'p'"),
        (ValueError("operands could not be broadcast"),
         "ValueError: operands could not be broadcast"),
        (TypeError("unsupported operand"), "TypeError: unsupported operand"),
        (OverflowError("Python int too large to convert to C long"),
         "OverflowError: Python int too large to convert to C long"),
        (OSError("numba cache"), "OSError: numba cache"),
    ],
)
@pytest.mark.parametrize("where", ["summarise", "calibration_table", "_mce_bin_counts"])
def test_a_bug_in_calibr_exits_1_and_never_blames_the_input(capsys, tmp_path, monkeypatch,
                                                             exc, shown, where):
    import calibr.cli

    def bug(*args, **kwargs):
        raise exc

    monkeypatch.setattr(calibr.cli._report, where, bug)
    code, out, err = run(capsys, "report", write(tmp_path, GOOD), "--per-bin"
                         if where == "calibration_table" else "--bins=10")
    assert code == 1 and out == ""
    assert err == (f"calibr: internal error ({shown}). This is a bug in calibr, not a problem "
                   "with your input; run the command again with --debug to see the traceback.\n")
    assert "missing column" not in err and "calibr: error" not in err


@pytest.mark.parametrize("argv", [["--debug", "report"], ["report", "--debug"]])
def test_debug_raises_the_bug(capsys, tmp_path, monkeypatch, argv):
    import calibr.cli

    def bug(*args, **kwargs):
        raise KeyError("the bug")

    monkeypatch.setattr(calibr.cli._report, "summarise", bug)
    with pytest.raises(KeyError, match="the bug"):
        main([*argv, write(tmp_path, GOOD)])


def test_debug_in_a_real_process_prints_the_traceback(tmp_path):
    code = ("import sys, calibr.cli as c, calibr.cli._report as r\n"
            "def bug(*a, **k): raise IndexError('the bug')\n"
            "r.summarise = bug\n"
            "sys.exit(c.main(sys.argv[1:]))\n")
    path = write(tmp_path, GOOD)
    plain = subprocess.run([sys.executable, "-c", code, "report", path],
                           capture_output=True, text=True, check=False)
    assert plain.returncode == 1 and plain.stderr.count("\n") == 1
    assert "Traceback" not in plain.stderr and "--debug" in plain.stderr
    debug = subprocess.run([sys.executable, "-c", code, "report", path, "--debug"],
                           capture_output=True, text=True, check=False)
    assert debug.returncode == 1
    assert debug.stderr.startswith("Traceback") and "IndexError: the bug" in debug.stderr


def test_debug_with_bad_input_adds_the_traceback(capsys, tmp_path):
    code, _, err = run(capsys, "--debug", "report", write(tmp_path, GOOD), "-p", "q")
    assert code == 2
    assert err.startswith("Traceback") and "CLIError" in err
    assert err.splitlines()[-1].startswith("calibr: error: --prob: no column 'q'")


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (calibr.InputError(f"`p` and {arg('y')} must be ready; got {arg('classes')}.", param="p"),
         "calibr: error: --prob and --label must be ready; got --classes.\n"),
        (calibr.InputTypeError("`p` must be numeric (integer or float); got dtype str.",
                               param="p"),
         "calibr: error: --prob must be numeric (integer or float); got dtype str.\n"),
    ],
)
def test_calibr_input_errors_exit_2_in_command_line_words(capsys, tmp_path, monkeypatch, exc,
                                                          message):
    import calibr.cli

    def refuse(*args, **kwargs):
        raise exc

    monkeypatch.setattr(calibr.cli._report, "summarise", refuse)
    code, out, err = run(capsys, "report", write(tmp_path, GOOD))
    assert code == 2 and out == "" and err == message


def test_missing_column_lists_at_most_ten_columns(capsys, tmp_path):
    df = pd.DataFrame({f"col{k}": [0.5] for k in range(15)} | {"y": [1]})
    shown = ", ".join(f"'col{k}'" for k in range(10))
    _bad(capsys, tmp_path, "report", write(tmp_path, df), "-p", "p",
         match=rf"error: --prob: no column 'p' in .*bad\.csv; its columns are {shown}, \.\.\. "
               r"\(16 in all\)\.$")


@pytest.mark.parametrize(("sep", "shown"), [(";", "';'"), ("\t", "tab"), ("|", "'|'")])
def test_missing_column_hints_at_the_separator(capsys, tmp_path, sep, shown):
    path = tmp_path / "semi.csv"
    GOOD.to_csv(path, sep=sep, index=False)
    err = _bad(capsys, tmp_path, "report", str(path), "-g", "m",
               match=rf"error: --label: no column 'y' in .*semi\.csv; its columns are "
                     rf"{re.escape(repr(f'm{sep}p{sep}y'))}\. The file seems to be "
                     rf"{re.escape(shown)}-separated, but calibr read it as comma-separated "
                     rf"CSV: pass --sep {re.escape(shown)}\.$")
    assert err


@pytest.mark.parametrize(("sep", "option"), [(";", ";"), ("\t", "tab"), ("\t", "\\t"),
                                             ("|", "|")])
def test_sep_reads_other_separators(capsys, tmp_path, binary_csv, sep, option):
    path, df = binary_csv
    other = tmp_path / "other.csv"
    df.to_csv(other, sep=sep, index=False)
    args = ["-p", "prob", "-y", "label", "-g", "model", "-f", "csv"]
    code, out, err = run(capsys, "report", str(other), "--sep", option, *args)
    assert code == 0 and err == ""
    assert out == run(capsys, "report", str(path), *args)[1]


def test_sep_does_not_apply_to_parquet(capsys, tmp_path):
    require("pyarrow")
    path = tmp_path / "x.parquet"
    GOOD.to_parquet(path)
    _bad(capsys, tmp_path, "report", str(path), "--sep", ";",
         match=r"error: --sep applies to CSV input; FILE is a Parquet file\.$")


def test_one_line_cuts_only_text_longer_than_the_limit():
    """_one_line() keeps a text of exactly ``limit`` characters whole (its whitespace
    collapsed); one more is cut to ``limit - 3`` and "..."."""
    from calibr.cli import _one_line

    assert _one_line("a  b\n" + "x" * 6, 10) == "a b " + "x" * 6
    assert _one_line("x" * 11, 10) == "x" * 7 + "..."
    assert _one_line("x" * 200) == "x" * 200


def test_the_directories_of_the_outputs_are_the_users_not_that_of_the_input():
    """An OSError on a file in the directory of --output or --plot (their temporary files)
    is the user's problem; one in the directory of the input FILE is not (a bug)."""
    import argparse

    from calibr.cli import _input_message, _user_paths

    root = "/nonexistent-calibr-dir"
    args = argparse.Namespace(file=f"{root}/in/data.csv", output=f"{root}/out/report.csv",
                              plot=f"{root}/fig/plot.png")
    assert _user_paths(args) == {f"{root}/in/data.csv", f"{root}/out/report.csv",
                                 f"{root}/out", f"{root}/fig/plot.png", f"{root}/fig"}
    temp = OSError(28, "No space left on device", f"{root}/out/.report.csv.tmp")
    assert _input_message(temp, _user_paths(args)) == (
        f"{root}/out/.report.csv.tmp: No space left on device.")
    beside_input = OSError(28, "No space left on device", f"{root}/in/other.tmp")
    assert _input_message(beside_input, _user_paths(args)) is None


def test_calibr_input_errors_reaching_main_are_the_users():
    """An InputError or InputTypeError of calibr that reaches main() unwrapped is a message
    about the input (exit 2, in the command line's words), not an internal error; other
    exceptions are not."""
    from calibr.cli import _input_message

    assert _input_message(InputError("`p` is wrong.", param="p"), set()) == (
        "--prob is wrong.")  # CLI words
    assert _input_message(calibr.InputTypeError("The data are wrong."), set()) == (
        "The data are wrong.")
    assert _input_message(ValueError("`p` is wrong."), set()) is None


# --------------------------------------------------------------------------
# pipes, JSON dates, stdin


def test_a_pipe_closed_early_ends_quietly_with_141(tmp_path):
    rng = np.random.default_rng(3)
    n = 6000
    df = pd.DataFrame({"g": np.arange(n) // 2, "p": rng.random(n), "y": rng.integers(0, 2, n)})
    path = write(tmp_path, df, "big.csv")
    proc = subprocess.Popen([sys.executable, "-m", "calibr.cli", "report", path, "-g", "g"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.read(100)  # the reader takes a little (as `head -c 100`) and leaves
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait() == 141
    assert first.startswith(b"calibr report of ")
    assert err == b""  # no "Broken pipe", no "Exception ignored"


def test_json_writes_dates_times_and_durations_as_iso_8601():
    from calibr.cli._render import _json_value

    assert _json_value(pd.Timestamp("2024-03-01 12:30")) == "2024-03-01T12:30:00"
    assert _json_value(pd.Timestamp("2024-03-01 12:30", tz="Europe/Paris")) == \
        "2024-03-01T12:30:00+01:00"
    assert _json_value(np.datetime64("2024-03-01T12:30")) == "2024-03-01T12:30:00"
    assert _json_value(np.datetime64("NaT")) is None
    assert _json_value(pd.NaT) is None
    assert _json_value(pd.Timedelta(hours=36)) == "P1DT12H0M0S"
    assert _json_value(np.timedelta64(90, "m")) == "P0DT1H30M0S"
    assert _json_value(pd.Period("2024-03", freq="M")) == \
        "2024-03-01T00:00:00/2024-04-01T00:00:00"
    assert _json_value(pd.Period("2024Q1", freq="Q")) == \
        "2024-01-01T00:00:00/2024-04-01T00:00:00"
    import datetime

    assert _json_value(datetime.date(2024, 3, 1)) == "2024-03-01"
    assert _json_value(datetime.timedelta(seconds=90)) == "P0DT0H1M30S"
    assert _json_value(np.float64("nan")) is None and _json_value(np.int64(3)) == 3


def test_json_with_date_group_keys_from_parquet(capsys, tmp_path):
    require("pyarrow")
    df = pd.DataFrame({
        "day": pd.to_datetime(["2024-03-01", "2024-03-01", "2024-03-02"]),
        "at": pd.to_datetime(["2024-03-01 10:00"] * 3).tz_localize("UTC"),
        "lag": pd.to_timedelta([1, 1, 2], unit="h"),
        "month": pd.PeriodIndex(["2024-03", "2024-03", "2024-04"], freq="M"),
        "p": [0.2, 0.7, 0.4], "y": [0, 1, 1],
    })
    path = tmp_path / "dated.parquet"
    df.to_parquet(path)
    code, out, err = run(capsys, "report", str(path), "--by", "day", "at", "lag", "month",
                         "-f", "json")
    assert code == 0 and err == ""
    records = json.loads(out)
    assert [(r["day"], r["at"], r["lag"], r["month"], r["n"]) for r in records] == [
        ("2024-03-01T00:00:00", "2024-03-01T10:00:00+00:00", "P0DT1H0M0S",
         "2024-03-01T00:00:00/2024-04-01T00:00:00", 2),
        ("2024-03-02T00:00:00", "2024-03-01T10:00:00+00:00", "P0DT2H0M0S",
         "2024-04-01T00:00:00/2024-05-01T00:00:00", 1),
    ]


def test_non_utf8_on_stdin_is_one_clear_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"p,y\n\x81,1\n")))
    code, out, err = run(capsys, "report", "-")
    assert code == 2 and out == ""
    assert err == ("calibr: error: -: cannot read it as CSV: it is not UTF-8 text (it has the "
                   "byte 0x81).\n")


def test_non_utf8_on_stdin_in_a_real_process():
    proc = subprocess.run([sys.executable, "-m", "calibr.cli", "report", "-"],
                          input=b"p,y\n0.5,1\n\xff\xfe,0\n", capture_output=True, check=False)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr == (b"calibr: error: -: cannot read it as CSV: it is not UTF-8 text (it "
                           b"has the byte 0xff).\n")


def test_stdin_from_a_file_may_write_over_another_existing_file(capsys, monkeypatch, tmp_path):
    """With stdin a regular file, only an output that *is* that file is refused; another
    existing file is replaced by the report."""
    src = tmp_path / "in.csv"
    src.write_text(_CLI_CSV)
    dest = tmp_path / "old.csv"
    dest.write_text("old contents\n")
    with open(src) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        code = main(["report", "-", "-f", "csv", "-o", str(dest)])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = pd.read_csv(dest)
    assert got.loc[0, "n"] == 4 and "ece" in got.columns
    assert src.read_text() == _CLI_CSV


# --------------------------------------------------------------------------
# rows that do not sum to 1: the message, and --renormalize


def six_decimals(tmp_path, k, n=60, seed=0, by=False, name=None):
    """A CSV of Dirichlet probabilities saved with 6 decimals (as many tools do); its
    first five rows sum to 1 exactly."""
    rng = np.random.default_rng(seed)
    probs = np.round(rng.dirichlet(np.ones(k), n), 6)
    probs[:5] = np.eye(k)[rng.integers(0, k, 5)]
    df = pd.DataFrame(probs, columns=[f"p_{j}" for j in range(k)])
    df.insert(0, "y", rng.integers(0, k, n))
    if by:
        df.insert(0, "m", np.where(np.arange(n) % 2 == 0, "a", "b"))
    path = tmp_path / (name or f"six_{k}.csv")
    df.to_csv(path, index=False, float_format="%.6f")
    back = pd.read_csv(path)
    return path, back


def first_bad_row(df, cols, tol=1e-6):
    """calibr's rule (R's): |row sum - 1| > 1e-6, the sum as numpy adds a C-order row."""
    sums = np.ascontiguousarray(df[cols].to_numpy(dtype=float)).sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > tol)
    return bad, sums


@pytest.mark.parametrize("k", [3, 10])
@pytest.mark.parametrize("option", ["prefix", "list"])
def test_rounded_rows_get_the_data_row_the_sum_and_the_fix(capsys, tmp_path, k, option):
    path, df = six_decimals(tmp_path, k)
    cols = [f"p_{j}" for j in range(k)]
    bad, sums = first_bad_row(df, cols)
    assert bad.size and bad[0] >= 5  # a real file where the first rows are fine
    s = float(sums[bad[0]])
    cols_args = (["--prob-prefix", "p_"] if option == "prefix"
                 else ["--prob", *cols, "--classes", ",".join(map(str, range(k)))])
    word = "--prob-prefix 'p_'" if option == "prefix" else "--prob"
    rows = f"{bad.size} rows do" if bad.size > 1 else "1 row does"
    err = _bad(capsys, tmp_path, "report", str(path), *cols_args,
               match=re.escape(
                   f"error: the {word} columns must sum to 1 in each row (within 1e-06); "
                   f"{rows} not, the first at data row {bad[0] + 1}: its sum {s!r} is "
                   f"{abs(s - 1)!r} away from 1. If the probabilities were rounded (e.g. saved "
                   "with 6 decimals), pass --renormalize to divide each row by its sum.") + "$")
    # the data row counts from the file's first line after the header
    line = path.read_text().splitlines()[bad[0] + 1]
    assert abs(sum(float(v) for v in line.split(",")[1:]) - 1) > 1e-6
    assert err


def test_rounded_rows_are_counted_in_the_file_not_in_the_group(capsys, tmp_path):
    path, df = six_decimals(tmp_path, 3, by=True, seed=4)
    cols = ["p_0", "p_1", "p_2"]
    bad, _ = first_bad_row(df, cols)
    in_group = int((df["m"].iloc[: bad[0]] == df["m"].iloc[bad[0]]).sum())
    assert in_group != bad[0]  # the position within its group differs
    _bad(capsys, tmp_path, "report", str(path), "--prob-prefix", "p_", "--by", "m",
         match=rf"the first at data row {bad[0] + 1}: its sum ")


@pytest.mark.parametrize("k", [3, 10])
def test_renormalize_divides_each_row_by_its_sum(capsys, tmp_path, k):
    path, df = six_decimals(tmp_path, k, n=300, by=True)
    cols = [f"p_{j}" for j in range(k)]
    code, out, err = run(capsys, "report", str(path), "--prob-prefix", "p_", "--by", "m",
                         "--renormalize", "-m", "ece,mce,ece(type=confidence)", "-f", "json")
    assert code == 0 and err == ""
    arr = np.ascontiguousarray(df[cols].to_numpy(dtype=float))
    fixed = pd.DataFrame(arr / arr.sum(axis=1, keepdims=True), columns=cols)
    records = json.loads(out)
    assert [r["m"] for r in records] == ["a", "b"]
    for r in records:
        rows = (df["m"] == r["m"]).to_numpy()
        p, y = fixed[rows], df["y"][rows]
        assert r["ece"] == calibr.ece(p, y, classes=range(k))
        assert r["mce"] == calibr.mce(p, y, classes=range(k))
        assert r["ece(type=confidence)"] == calibr.ece(p, y, type="confidence",
                                                       classes=range(k))
    assert pd.read_csv(path).equals(df)  # the file itself is untouched


def test_renormalize_refuses_rows_that_are_not_rounding(capsys, tmp_path):
    path, df = six_decimals(tmp_path, 3)
    df.loc[7, ["p_0", "p_1", "p_2"]] = [0.5, 0.3, 0.19]  # sums to 0.99: not rounding
    df.loc[9, ["p_0", "p_1", "p_2"]] = [0.5, 0.3, 0.25]
    df.to_csv(path, index=False)
    _bad(capsys, tmp_path, "report", str(path), "--prob-prefix", "p_", "--renormalize",
         match=r"error: --renormalize divides each row by its sum only if every row sums to 1 "
               r"within 0\.001 \(rounding\); 2 rows do not, the first at data row 8 "
               r"\(sum 0\.99\)\.$")


def test_renormalize_leaves_bad_values_to_the_checks(capsys, tmp_path):
    path, df = six_decimals(tmp_path, 3)
    df.loc[6, "p_1"] = np.nan
    df.to_csv(path, index=False)
    _bad(capsys, tmp_path, "report", str(path), "--prob-prefix", "p_", "--renormalize",
         match=r"error: --prob-prefix 'p_' must not contain missing values; 1 value is "
               r"missing, the first at data row 7, column 'p_1'\. Pass --na-rm to drop "
               r"incomplete observations\.$")
    code, out, err = run(capsys, "report", str(path), "--prob-prefix", "p_", "--renormalize",
                         "--na-rm", "-f", "json")
    assert code == 0 and err == "" and json.loads(out)[0]["n"] == len(df) - 1


def test_renormalize_judges_a_row_holding_exactly_1_by_its_sum(capsys, tmp_path):
    """A probability of exactly 1 is in range: its row is one --renormalize judges by its sum."""
    src = tmp_path / "mc.csv"
    src.write_text("a,b,y\n0.3,0.7,a\n1.0,0.5,b\n0.6,0.4,b\n")  # row 2 sums to 1.5
    code = main(["report", str(src), "-p", "a", "b", "--renormalize"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == ("calibr: error: --renormalize divides each row by its sum only if every row "
                   "sums to 1 within 0.001 (rounding); 1 row does not, the first at data row 2 "
                   "(sum 1.5).\n")


@pytest.mark.parametrize("renormalize", [False, True])
def test_a_row_out_of_range_is_reported_as_out_of_range_not_by_its_sum(capsys, tmp_path,
                                                                        renormalize):
    """A row with a value above 1 is not a row the row-sum rule (or --renormalize) judges:
    the error is the range error of the value, whatever the row's sum."""
    src = tmp_path / "mc.csv"
    src.write_text("a,b,y\n0.3,0.7,a\n0.9,1.3,b\n0.6,0.4,b\n")  # row 2 sums to 2.2
    code = main(["report", str(src), "-p", "a", "b", *(["--renormalize"] * renormalize)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == ("calibr: error: --prob must lie in [0, 1]; 1 value does not, the first at "
                   "data row 2, column 'b' (1.3).\n")


# --------------------------------------------------------------------------
# what the numbers are: source, bins, form, n, and the MCE's bin


def test_table_output_says_what_was_computed(capsys, binary_csv, digits_csv):
    path, _ = binary_csv
    code, out, _ = run(capsys, "report", str(path), "-p", "prob", "-y", "label", "--bins", "5")
    assert code == 0
    assert out.split("\n\n")[0] == (f"calibr report of {path}\n"
                                    "bins: 5 equal-width bins on [0, 1]\n"
                                    "form: binary = one probability column")
    assert table_body(out)[1][:3] == ["binary", "5", "200"]

    dpath, _ = digits_csv
    code, out, _ = run(capsys, "report", str(dpath), "--prob-prefix", "p_", "--by", "model",
                       "--type", "confidence")
    assert code == 0
    assert out.split("\n\n")[0].splitlines()[1:] == [
        "bins: 10 equal-width bins on [0, 1]",
        "form: confidence = the top-label probability against whether the top label is right",
    ]
    assert {row[1] for row in table_body(out)[1:]} == {"confidence"}

    code, out, _ = run(capsys, "report", "--example", "digits")
    assert out.split("\n\n")[0] == (
        "calibr report of bundled example data digits\n"
        "bins: 10 equal-width bins on [0, 1]\n"
        "form: classwise = one-vs-rest per class (ece: the mean over the classes, mce: the "
        "largest gap of any class)")



def test_form_and_bins_columns_only_for_metrics_that_take_them(capsys):
    code, out, _ = run(capsys, "report", "--example", "breast_cancer", "-m", "skce,mmce")
    assert code == 0
    assert out.split("\n\n")[0] == "calibr report of bundled example data breast_cancer"
    assert table_body(out)[0] == ["dataset", "model", "n", "skce", "mmce"]
    code, out, _ = run(capsys, "report", "--example", "breast_cancer", "-m", "mce(bins=5)",
                       "-f", "csv")
    assert list(pd.read_csv(io.StringIO(out)).columns) == [
        "dataset", "model", "form", "n", "mce(bins=5)", "mce(bins=5)_bin_n"]
    code, out, _ = run(capsys, "report", "--example", "digits", "--per-bin")
    assert out.split("\n\n")[0].splitlines()[0] == (
        "calibr per-bin table of bundled example data digits")


def test_mce_from_a_tiny_bin_is_flagged(capsys):
    """The bundled breast-cancer logistic MCE (0.35) comes from a bin of 2 samples."""
    from calibr.cli import MCE_MIN_BIN_COUNT

    bc = load_breast_cancer_predictions()
    code, out, _ = run(capsys, "report", "--example", "breast_cancer", "-f", "json")
    records = json.loads(out)
    for r in records:
        g = bc[bc["model"] == r["model"]]
        tab = calibration_table(g["p"], g["y"])  # this model's bins, computed on their own
        top = tab[tab["gap"] == tab["gap"].max()]
        assert r["mce"] == tab["gap"].max() == calibr.mce(g["p"], g["y"])
        assert r["mce_bin_n"] == top["n"].max()
    logistic = records[0]
    assert logistic["model"] == "logistic" and logistic["mce_bin_n"] == 2
    assert round(logistic["mce"], 2) == 0.35

    code, out, _ = run(capsys, "report", "--example", "breast_cancer")
    rows = table_body(out)
    assert rows[0][-2:] == ["mce", "mce_bin_n"]
    # 4 significant digits of the smallest of the column (0.2267), as docs/cli.md says
    assert rows[1][1] == "logistic" and rows[1][-2:] == ["0.3546*", "2"]
    assert out.endswith(
        f"\n\n* the MCE comes from a bin of fewer than {MCE_MIN_BIN_COUNT} samples (see "
        "mce_bin_n): a gap measured on so few samples is mostly noise.\n")


def test_classwise_mce_bin_is_the_largest_gap_over_all_classes(capsys):
    dg = load_digits_predictions()
    code, out, _ = run(capsys, "report", "--example", "digits", "-m", "mce,mce(bins=5)",
                       "-f", "json")
    for r in json.loads(out):
        g = dg[dg["model"] == r["model"]]
        for col, bins in (("mce", 10), ("mce(bins=5)", 5)):
            tab = calibration_table(g[DIGITS], g["y"], bins=bins, classes=range(10))
            assert r[col] == tab["gap"].max()
            assert r[f"{col}_bin_n"] == tab.loc[tab["gap"] == tab["gap"].max(), "n"].max()


@pytest.mark.parametrize("offset", [-1, 0])
def test_mce_flag_threshold(capsys, tmp_path, offset):
    from calibr.cli import MCE_MIN_BIN_COUNT

    k = MCE_MIN_BIN_COUNT + offset  # samples in the bin of the largest gap
    df = pd.DataFrame({"p": [0.1] * k + [0.9] * 50, "y": [1] * k + [1] * 45 + [0] * 5})
    code, out, _ = run(capsys, "report", write(tmp_path, df), "--bins", "2")
    row = table_body(out)[1]
    assert row[-1] == str(k) and float(row[-2].rstrip("*")) == pytest.approx(0.9)
    assert row[-2].endswith("*") == (k < MCE_MIN_BIN_COUNT)
    assert ("* the MCE comes from a bin" in out) == (k < MCE_MIN_BIN_COUNT)
    code, csv_out, _ = run(capsys, "report", write(tmp_path, df), "--bins", "2", "-f", "csv")
    got = pd.read_csv(io.StringIO(csv_out))  # machine-readable: numbers, no marks, no prose
    assert got["mce"].dtype == float and got["mce_bin_n"].tolist() == [k]
    assert "*" not in csv_out and len(csv_out.splitlines()) == 2


# --------------------------------------------------------------------------
# skce and mmce through the command line


def test_skce_and_mmce_binary_equal_the_functions(capsys, binary_csv):
    path, df = binary_csv
    code, out, err = run(capsys, "report", str(path), "-p", "prob", "-y", "label", "-g", "model",
                         "-m", "skce,mmce,skce(estimator=ul),skce(estimator=biased),"
                               "skce(bandwidth=median),mmce(bandwidth=0.05)", "-f", "json")
    assert code == 0 and err == ""
    records = json.loads(out)
    assert [r["model"] for r in records] == ["a", "b"]
    for r in records:
        g = df[df["model"] == r["model"]]
        p, y = g["prob"], g["label"]
        assert r["skce"] == calibr.skce(p, y)
        assert r["mmce"] == calibr.mmce(p, y)
        assert r["skce(estimator=ul)"] == calibr.skce(p, y, estimator="ul")
        assert r["skce(estimator=biased)"] == calibr.skce(p, y, estimator="biased")
        assert r["skce(bandwidth=median)"] == calibr.skce(p, y, bandwidth="median")
        assert r["mmce(bandwidth=0.05)"] == calibr.mmce(p, y, bandwidth=0.05)


def test_skce_multiclass_equals_the_function(capsys):
    dg = load_digits_predictions()
    metrics = ("skce,skce(estimator=ul),skce(bandwidth=median),skce(type=classwise),"
               "skce(type=confidence, estimator=ul),mmce")
    code, out, err = run(capsys, "report", "--example", "digits", "-m", metrics, "-f", "json")
    assert code == 0 and err == ""
    for r in json.loads(out):
        g = dg[dg["model"] == r["model"]]
        p, y = g[DIGITS], g["y"]
        kw = {"classes": range(10)}
        assert r["skce"] == calibr.skce(p, y, **kw)
        assert r["skce(estimator=ul)"] == calibr.skce(p, y, estimator="ul", **kw)
        assert r["skce(bandwidth=median)"] == calibr.skce(p, y, bandwidth="median", **kw)
        assert r["skce(type=classwise)"] == calibr.skce(p, y, type="classwise", **kw)
        assert r["skce(type=confidence, estimator=ul)"] == calibr.skce(
            p, y, type="confidence", estimator="ul", **kw)
        assert r["mmce"] == calibr.mmce(p, y, **kw)


def test_skce_option_unquoted_in_a_real_process(binary_csv):
    """As the docs show it: --metrics "skce(estimator=ul)", the value without quotes."""
    path, df = binary_csv
    proc = subprocess.run(
        [sys.executable, "-m", "calibr.cli", "report", str(path), "-p", "prob", "-y", "label",
         "--metrics", "skce(estimator=ul),skce(bandwidth=median)", "-f", "json"],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    (r,) = json.loads(proc.stdout)
    assert r["skce(estimator=ul)"] == calibr.skce(df["prob"], df["label"], estimator="ul")
    assert r["skce(bandwidth=median)"] == calibr.skce(df["prob"], df["label"],
                                                      bandwidth="median")


def test_help_documents_the_new_options(capsys):
    code, out, _ = run(capsys, "report", "--help")
    assert code == 0
    text = " ".join(out.split())
    for phrase in (
        "--renormalize multiclass: divide each row of the probability columns by its sum, if "
        "every row sums to 1 within 1e-3 (e.g. probabilities saved with 6 decimals); "
        "otherwise an error",
        "--sep CHAR the field separator of CSV input (default: ,), e.g. ';'; 'tab' or '\\t' "
        "for tab-separated files",
        "--debug on an error, show Python's full traceback (to report a bug in calibr)",
        "1 for an internal error (a bug in calibr: run again with --debug and report it; "
        "calibr compare has its own statuses, see calibr compare --help); "
        "141 when the reader of the output closed the pipe early",
        "marks an MCE from a bin of fewer than 10 samples with *",
    ):
        assert phrase in text, phrase


def test_outputs_that_are_not_regular_files_are_written_not_replaced(tmp_path):
    """/dev/stdout into a pipe and a FIFO are written to, never renamed over."""
    path = write(tmp_path, GOOD)
    proc = subprocess.run([sys.executable, "-m", "calibr.cli", "report", path, "-o",
                           "/dev/stdout", "-f", "csv"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.splitlines()[0] == "form,bins,n,ece,mce,mce_bin_n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that opening it to write works
    try:
        assert main(["report", path, "-o", str(fifo), "-f", "csv"]) == 0
        got = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert got.decode().splitlines()[0] == "form,bins,n,ece,mce,mce_bin_n"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the FIFO


def test_by_a_column_of_lists_is_an_input_error(capsys, tmp_path):
    require("pyarrow")
    path = tmp_path / "lists.parquet"
    GOOD.assign(m=[[1], [2], [1]]).to_parquet(path)
    _bad(capsys, tmp_path, "report", str(path), "--by", "m",
         match=r"error: --by: the column 'm' of .*lists\.parquet holds values that cannot be "
               r"grouped, the first at data row 1 \(a ndarray\); group by columns of numbers, "
               r"strings or dates\.$")


def test_tsv_files_are_tab_separated(capsys, tmp_path, binary_csv):
    path, df = binary_csv
    tsv = tmp_path / "preds.tsv"
    df.to_csv(tsv, sep="\t", index=False)
    args = ["-p", "prob", "-y", "label", "-f", "csv"]
    code, out, err = run(capsys, "report", str(tsv), *args)
    assert code == 0 and err == ""
    assert out == run(capsys, "report", str(path), *args)[1]


def test_interrupted(capsys, tmp_path, monkeypatch):
    import calibr.cli

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(calibr.cli._report, "summarise", interrupt)
    code, out, err = run(capsys, "report", write(tmp_path, GOOD))
    assert code == 130 and out == "" and err == "calibr: interrupted\n"


def test_decimal_commas_get_a_hint(capsys, tmp_path):
    path = tmp_path / "european.csv"
    path.write_text("p;y\n0,2;1\n0,7;0\n")
    _bad(capsys, tmp_path, "report", str(path), "--sep", ";",
         match=r"error: --prob must hold numbers; 2 values are not, the first at data row 1 "
               r"\('0,2'\) \(a decimal comma\? calibr reads numbers with a decimal point\)\.$")


# --------------------------------------------------------------------------
# column lists (--prob, --by): commas, repeats and spaces; a FILE a list took is named
# (docs/cli.md, "Column lists")


def test_column_lists_by_commas_repeats_and_spaces_are_the_same(capsys, binary_csv):
    path, df = binary_csv
    common = ["-p", "prob", "-y", "label", "-m", "ece", "-f", "csv"]
    ref = summarise(df.groupby(["model", "fold"]), "prob", "label", metrics=["ece"])
    outs = []
    for by in (["--by", "model", "fold"], ["--by", "model,fold"], ["--by=model,fold"],
               ["--by", "model", "--by", "fold"], ["-g", "model", "-m", "ece", "-g", "fold"]):
        code, out, err = run(capsys, "report", str(path), *common, *by)
        assert (code, err) == (0, ""), by
        outs.append(out)
    # after --, FILE may follow a list separated by spaces
    code, out, _ = run(capsys, "report", *common, "--by", "model", "fold", "--", str(path))
    assert code == 0
    outs.append(out)
    assert all(o == outs[0] for o in outs)
    got = pd.read_csv(io.StringIO(outs[0]))
    assert got[["model", "fold"]].values.tolist() == ref[["model", "fold"]].values.tolist()
    assert got["ece"].tolist() == ref["ece"].tolist()


def test_probability_columns_as_a_comma_list(capsys, digits_csv):
    path, df = digits_csv
    want = calibr.ece(df[DIGITS], df["y"], classes=range(10))
    classes = ["--classes", ",".join(str(k) for k in range(10)), "-f", "csv"]
    for prob in (DIGITS, [",".join(DIGITS)], [",".join(DIGITS[:4]), *DIGITS[4:]]):
        code, out, _ = run(capsys, "report", str(path), "--prob", *prob, *classes)
        assert code == 0 and pd.read_csv(io.StringIO(out)).loc[0, "ece"] == want
    # repeated: the lists add up, in order
    code, out, _ = run(capsys, "report", str(path), "-p", ",".join(DIGITS[:5]), "-p",
                       ",".join(DIGITS[5:]), *classes)
    assert code == 0 and pd.read_csv(io.StringIO(out)).loc[0, "ece"] == want


@pytest.fixture
def in_data_dir(tmp_path, monkeypatch):
    """A working directory with the files of the column-list messages."""
    monkeypatch.chdir(tmp_path)
    GOOD.to_csv(tmp_path / "preds.csv", index=False)
    GOOD.to_csv(tmp_path / "a.csv", index=False)
    (tmp_path / "parts").mkdir()
    GOOD.to_csv(tmp_path / "parts" / "x.csv", index=False)
    return tmp_path


def _took(option, files, what, cols, cmd="calibr report"):
    """The message of a column list that took FILE."""
    shown = " ".join(files)
    return (f"calibr: error: {option} took {' and '.join(repr(f) for f in files)} as a column "
            f"name, but {what}, and FILE is missing; put it before the options ({cmd} {shown} "
            f"{option} {cols}) or end the list with -- ({cmd} {option} {cols} -- {shown}).\n")


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["-p", "p", "preds.csv"], _took("--prob", ["preds.csv"], "it is a file", "p")),
        (["--by", "m", "preds.csv"], _took("--by", ["preds.csv"], "it is a file", "m")),
        (["-g", "m", "y", "preds.csv", "-m", "ece"],
         _took("--by", ["preds.csv"], "it is a file", "m y")),
        (["--by", "m,y", "preds.csv"], _took("--by", ["preds.csv"], "it is a file", "m,y")),
        (["--by", "preds.csv"], _took("--by", ["preds.csv"], "it is a file", "COL")),
        (["-p", "p", "nope.parquet"],
         _took("--prob", ["nope.parquet"], "it looks like a file name", "p")),
        (["-p", "p", "nope.CSV.GZ"],
         _took("--prob", ["nope.CSV.GZ"], "it looks like a file name", "p")),
        (["--by", "m", "parts/"], _took("--by", ["parts/"], "it is a directory", "m")),
        (["--by", "m", "parts/*.csv"],  # quoted for the shell in the fixes
         "calibr: error: --by took 'parts/*.csv' as a column name, but it is a glob of files, "
         "and FILE is missing; put it before the options (calibr report 'parts/*.csv' --by m) "
         "or end the list with -- (calibr report --by m -- 'parts/*.csv').\n"),
        (["--by", "m", "-"], _took("--by", ["-"], "it is standard input", "m")),
        (["--by", "m", "-p", "p", "preds.csv"],
         _took("--prob", ["preds.csv"], "it is a file", "p")),
    ],
)
def test_a_column_list_that_took_file_is_refused(capsys, in_data_dir, argv, want):
    """Without FILE, a list separated by spaces that ends in the name of an input took it:
    exit 2 with what happened and the two fixes, never a column named 'preds.csv'."""
    code, out, err = run(capsys, "report", *argv)
    assert (code, out, err) == (2, "", want)


def test_a_column_list_that_took_file_fix_works(capsys, in_data_dir):
    first = run(capsys, "report", "preds.csv", "-p", "p", "--by", "m", "-f", "csv")
    last = run(capsys, "report", "-f", "csv", "-p", "p", "--by", "m", "--", "preds.csv")
    assert first[0] == last[0] == 0 and first[1] == last[1]


def test_column_names_that_are_also_files_without_file(capsys, in_data_dir):
    """A bare word is a column, even when a file or directory of that name exists (the
    bundled data have a column model); only when that column is missing does the
    message say it is also a directory."""
    (in_data_dir / "model").mkdir()
    (in_data_dir / "p").write_text("")
    code, out, err = run(capsys, "report", "--example", "breast_cancer", "-p", "p", "--by",
                         "model", "-m", "ece", "-f", "csv")
    assert (code, err) == (0, "") and len(pd.read_csv(io.StringIO(out))) == 3
    code, out, err = run(capsys, "report", "--by", "model", "parts")
    assert (code, out) == (2, "")
    assert err == ("calibr: error: --by: no column 'parts' in bundled example data "
                   "breast_cancer; its columns are 'model', 'fold', 'id', 'y', 'p'. 'parts' is "
                   "also a directory: if it is FILE, put it before the options or after --.\n")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--by", "m", "--by", "m"], r"error: --by names the column 'm' twice\.$"),
        (["--by", "m,m"], r"error: --by names the column 'm' twice\.$"),
        (["-p", "p", "p"], r"error: --prob names the column 'p' twice\.$"),
        (["-p", "p,"], r"error: --prob: empty column name in 'p,'; a list of columns is "
                       r"written a,b,c\.$"),
        (["--by", "m,,y"], r"error: --by: empty column name in 'm,,y'; a list of columns is "
                           r"written a,b,c\.$"),
        (["--by", ""], r"error: --by: empty column name in ''; a list of columns is "
                       r"written a,b,c\.$"),
    ],
)
def test_column_lists_refuse_repeats_and_empty_names(capsys, tmp_path, args, match):
    _bad(capsys, tmp_path, "report", write(tmp_path, GOOD), *args, match=match)


# --------------------------------------------------------------------------
# numbers in the table: 4 significant digits per column, p-values below their
# resolution as "< bound"; CSV and JSON keep every digit (docs/cli.md)


def test_number_cells_are_four_significant_digits_per_column():
    from calibr.cli._render import _number_cells

    # the smallest value has 4 significant digits, the others as many decimals
    assert _number_cells([0.018601, 0.062108, 0.027742]) == ["0.01860", "0.06211", "0.02774"]
    assert _number_cells([0.354615, 0.807308, 0.226667]) == ["0.3546", "0.8073", "0.2267"]
    # trailing zeros dropped for the whole column: 0.5 needs one decimal
    assert _number_cells([0.5, 1.0, 0.0]) == ["0.5", "1.0", "0.0"]
    assert _number_cells([-1.091249, 31.084274]) == ["-1.091", "31.084"]
    assert _number_cells([1234.5678, 20.0]) == ["1235", "20"]
    # scientific notation, for the whole column, when it is narrower than fixed point
    assert _number_cells([7.17395e-06, 0.001338, 0.000133]) == [
        "7.174e-06", "1.338e-03", "1.330e-04"]
    assert _number_cells([0.000123]) == ["0.000123"]  # as wide as 1.23e-04: fixed
    assert _number_cells([1e6]) == ["1e+06"]
    assert _number_cells([float("nan"), float("inf"), -float("inf"), 0.25, -0.0]) == [
        "NaN", "inf", "-inf", "0.25", "0.00"]
    assert _number_cells([float("nan")]) == ["NaN"]
    # a column of zeros has no significant digit: no decimals (R: format(c(0, -0)) "0" "0")
    assert _number_cells([0.0, -0.0, float("nan")]) == ["0", "0", "NaN"]


@pytest.mark.r
def test_number_cells_are_what_r_format_prints(rref):
    """The rule is R's: format(x, digits = 4), on random columns of every scale."""
    import rpy2.robjects as ro

    from calibr.cli._render import TABLE_DIGITS, _number_cells

    rng = np.random.default_rng(11)
    for _ in range(400):
        n = int(rng.integers(1, 7))
        kind = int(rng.integers(0, 4))
        x = (10.0 ** rng.uniform(-12, 8, n) if kind == 0 else rng.random(n) if kind == 1
             else np.round(rng.random(n) * 10.0 ** rng.integers(0, 5), int(rng.integers(0, 6)))
             if kind == 2 else rng.integers(0, 1000, n) / rng.choice([7, 9999, 1000, 199], n))
        x = x * rng.choice([-1.0, 1.0], n)
        want = [c.strip() for c in ro.r["format"](ro.FloatVector(x), digits=TABLE_DIGITS)]
        assert _number_cells(x) == want, x.tolist()


def test_pvalue_cells_below_the_resolution():
    from calibr.cli._render import _pvalue_cells

    # B resamples: p = k / B, and 0 is below the resolution 1 / B
    assert _pvalue_cells([0.0, 0.285, 0.01], 1000) == ["< 0.001", "0.285", "0.010"]
    assert _pvalue_cells([0.0, 1 / 9999, 64 / 9999], 9999) == [
        "< 0.0001", "0.000100", "0.006401"]
    assert _pvalue_cells([0.0], 199) == ["< 0.005025"]
    # analytic: below the machine epsilon, as R prints a test
    assert _pvalue_cells([3.929315e-212, 0.0, 0.2751632, 0.004589], None) == [
        "< 2.2e-16", "< 2.2e-16", "0.275163", "0.004589"]
    assert _pvalue_cells([2.3e-16, float("nan")], None) == ["2.3e-16", "NaN"]


def test_table_numbers_tests_and_pvalues(capsys):
    code, out, _ = run(capsys, "report", "--example", "breast_cancer", "-m", "ece,skce",
                       "--test", "skce,spiegelhalter")
    assert code == 0
    assert out.split("\n\n")[1] == (
        "      dataset         model   form  bins   n     ece      skce skce_statistic "
        "skce_pvalue  skce_n_resamples  skce_small_n spiegelhalter_statistic "
        "spiegelhalter_pvalue  spiegelhalter_small_n  seed\n"
        "breast_cancer      logistic binary    10 569 0.01860 7.174e-06     -3.602e-05       "
        "0.285              1000         False                  -1.091             0.275163"
        "                  False     0\n"
        "breast_cancer   naive_bayes binary    10 569 0.06211 1.338e-03     -9.899e-05     "
        "< 0.001              1000         False                  31.084            < 2.2e-16"
        "                  False     0\n"
        "breast_cancer random_forest binary    10 569 0.02774 1.325e-04     -5.509e-05       "
        "0.010              1000         False                  -2.835             0.004589"
        "                  False     0\n")
    # CSV and JSON: every digit, the numbers of summarise()
    bc = load_breast_cancer_predictions()
    ref = summarise(bc.groupby("model"), "p", "y", metrics=["ece", "skce"],
                    tests=["skce", "spiegelhalter"], rng=0)
    for fmt in ("csv", "json"):
        code, out, _ = run(capsys, "report", "--example", "breast_cancer", "-m", "ece,skce",
                           "--test", "skce,spiegelhalter", "-f", fmt)
        got = pd.read_csv(io.StringIO(out)) if fmt == "csv" else pd.DataFrame(json.loads(out))
        for col in ("ece", "skce", "skce_statistic", "skce_pvalue", "spiegelhalter_statistic",
                    "spiegelhalter_pvalue"):
            assert got[col].tolist() == ref[col].tolist(), (fmt, col)


def test_per_bin_table_has_the_rule_per_column(capsys):
    from calibr.cli._render import _number_cells

    code, out, _ = run(capsys, "report", "--example", "digits", "--per-bin")
    rows = table_body(out)
    code, csv_out, _ = run(capsys, "report", "--example", "digits", "--per-bin", "-f", "csv")
    tab = pd.read_csv(io.StringIO(csv_out))
    assert rows[0] == list(tab.columns) and len(rows) == len(tab) + 1
    cells = {col: [r[i] for r in rows[1:]] for i, col in enumerate(rows[0])}
    for col in ("lower", "upper", "mean_confidence", "observed_frequency", "gap", "ci_lower",
                "ci_upper"):
        assert cells[col] == _number_cells(tab[col]), col
    for col in ("dataset", "model", "class", "bin", "n"):  # keys and counts as they are
        assert cells[col] == tab[col].astype(str).tolist(), col
    assert rows[1][rows[0].index("mean_confidence")] == "1.160e-03"  # was 1.159902e-03
    assert rows[1][rows[0].index("lower")] == "0.0"


def test_table_keys_and_counts_are_not_rounded(capsys, tmp_path):
    """Two groups whose float keys agree to 4 digits must not look alike; weighted
    counts are shown as they are."""
    df = pd.DataFrame({"t": [1.00001] * 4 + [1.00002] * 4, "p": [0.2, 0.7, 0.4, 0.9] * 2,
                       "y": [0, 1, 1, 1] * 2, "w": [1.5, 2.25, 1.0, 3.0] * 2})
    code, out, _ = run(capsys, "report", write(tmp_path, df), "--by", "t", "-m", "ece",
                       "--weights", "w")
    rows = table_body(out)
    assert code == 0 and rows[0] == ["t", "form", "bins", "n", "ece"]
    assert [r[0] for r in rows[1:]] == ["1.00001", "1.00002"]
    assert [r[3] for r in rows[1:]] == ["7.75", "7.75"]
    code, out, _ = run(capsys, "report", write(tmp_path, df), "--by", "t", "--per-bin",
                       "--bins", "2")
    assert {r[0] for r in table_body(out)[1:]} == {"1.00001", "1.00002"}


def test_an_interval_that_leaves_out_its_estimate_is_marked_and_said_in_every_format(
        capsys, tmp_path):
    """--confidence-level: a bootstrap interval can leave out its estimate (a binned
    error of calibrated data: the resamples' errors all lie above it). The table marks
    the bound beyond the estimate with "!" and says why below (the HTML's dagger and
    note); CSV, JSON and Parquet carry <metric>_interval_excludes_estimate."""
    rng = np.random.default_rng(3)
    n = 12000
    p = rng.random(n)
    frame = pd.DataFrame({"model": np.repeat(["a", "b", "c"], n // 3), "p": p,
                          "y": (rng.random(n) < p).astype(int)})
    path = tmp_path / "cal.csv"
    frame.to_csv(path, index=False)
    argv = [str(path), "--by", "model", "--confidence-level", "0.95", "--n-resamples", "200"]
    code, out, err = run(capsys, "report", *argv, "-f", "csv")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    # the same intervals as the library's, the flag by hand
    ref = calibr.summarise(frame.groupby("model"), "p", "y", confidence_level=0.95,
                           n_resamples=200, rng=0)
    excluded = {}
    for m in ("ece", "mce"):
        np.testing.assert_array_equal(got[f"{m}_low"], ref[f"{m}_low"])
        below = ref[m].to_numpy() < ref[f"{m}_low"].to_numpy()
        above = ref[m].to_numpy() > ref[f"{m}_high"].to_numpy()
        excluded[m] = (below, above)
        assert got[f"{m}_interval_excludes_estimate"].tolist() == (below | above).tolist()
        cols = list(got.columns)
        assert cols.index(f"{m}_interval_excludes_estimate") == cols.index(f"{m}_high") + 1
    flags = np.concatenate([b | a for b, a in excluded.values()])
    assert flags.any() and not flags.all()  # the data show both
    code, out, _ = run(capsys, "report", *argv, "-f", "json")
    assert [r["ece_interval_excludes_estimate"] for r in json.loads(out)] == \
        got["ece_interval_excludes_estimate"].tolist()
    code, out, _ = run(capsys, "report", *argv)
    rows = table_body(out)
    head = rows[0]
    assert "ece_interval_excludes_estimate" not in head  # the mark says it
    for m, (below, above) in excluded.items():
        low = [r[head.index(f"{m}_low")] for r in rows[1:]]
        high = [r[head.index(f"{m}_high")] for r in rows[1:]]
        assert [c.endswith("!") for c in low] == below.tolist(), low
        assert [c.endswith("!") for c in high] == above.tolist(), high
    from calibr._html._report import OUTSIDE_NOTE
    note = out.split("\n\n")[-1]
    assert note.startswith("! The interval does not contain the estimate. This can happen:")
    assert OUTSIDE_NOTE[1:] in " ".join(note.split())
    assert "the column <metric>_interval_excludes_estimate says it" in note
    pq = tmp_path / "r.parquet"
    assert run(capsys, "report", *argv, "-o", str(pq))[0] == 0
    pd.testing.assert_frame_equal(pd.read_parquet(pq), got, check_dtype=False)


def test_a_warning_is_one_line_in_the_words_of_the_command(tmp_path):
    """A warning of the report is ``calibr: warning: ...``, one line on stderr, without
    Python's file, line and category, and without the API's ``summarise:``; each
    warning once (in a real process, whose filters are Python's defaults). With
    --debug, Python's own form (file, line, category) is kept."""
    path = tmp_path / "w.csv"
    path.write_text("p,y,g\n0,1,a\n0.5,1,a\n0.3,0,a\n0.2,0,b\n0.9,0,b\n")
    argv = [sys.executable, "-m", "calibr.cli", "report", str(path), "--prob", "p",
            "--label", "y", "--by", "g", "--metrics", "log_loss,auroc"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "calibr: warning: the metric 'auroc' is undefined on 1 group (e.g. one class "
        "only), which gets NaN: g='b'.",
        "calibr: warning: the metric 'log_loss': 1 row in 1 group gives its observed "
        "outcome probability 0 (the log loss is inf): g='a' (1)."]
    debug = subprocess.run([*argv, "--debug"], capture_output=True, text=True, check=False)
    assert debug.returncode == 0 and "CountedWarning: summarise: the metric 'log_loss'" in (
        debug.stderr)


def test_a_library_deprecation_is_left_to_python(capsys, monkeypatch):
    """A warning that is not about the input (a library's DeprecationWarning or
    FutureWarning) is not made a ``calibr: warning:`` line: it goes to what showed
    warnings before (Python's form, by Python's filters); calibr's own warnings do
    become that line."""
    import calibr.cli as cli
    from calibr._input.warning import CountedWarning

    seen = []
    monkeypatch.setattr(cli, "_PYTHON_SHOWWARNING", lambda *a: seen.append(a[1]))
    cli._show_warning(DeprecationWarning("x is old"), DeprecationWarning, "f.py", 1)
    cli._show_warning(FutureWarning("x will change"), FutureWarning, "f.py", 1)
    cli._show_warning(UserWarning("plain\n  text"), UserWarning, "f.py", 1)
    cli._show_warning(CountedWarning("summarise: 2 rows", count=2, what=("a", "b")),
                      CountedWarning, "f.py", 1)
    assert seen == [DeprecationWarning, FutureWarning]
    assert capsys.readouterr().err.splitlines() == [
        "calibr: warning: plain text", "calibr: warning: 2 rows"]
