"""The `calibr` command (calibr.cli.main)."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import calibr
from calibr.cli import main, parse_metrics
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions
from calibr.frame import Metric, metric, summarise
from calibr.table import TABLE_COLUMNS, calibration_table

DIGITS = [f"p_{k}" for k in range(10)]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


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
    assert list(got.columns) == ["dataset", "model", "n", "ece", "mce"]
    assert got["dataset"].tolist() == ["breast_cancer"] * 3 + ["digits"] * 3
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
    lines = out.splitlines()
    assert lines[0].split() == ["dataset", "model", "n", "ece", "mce"]
    assert len(lines) == 4 and all(line.split()[0] == "digits" for line in lines[1:])


def test_report_file_matches_summarise(capsys, binary_csv):
    path, df = binary_csv
    code, out, err = run(capsys, "report", str(path), "--prob", "prob", "--label", "label",
                         "--by", "model", "fold", "--metrics", "ece,mce(bins=5)",
                         "--bins", "4", "--format", "json")
    assert code == 0 and err == ""
    records = json.loads(out)
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


def test_report_no_group_and_stdin(capsys, monkeypatch, binary_csv):
    path, df = binary_csv
    monkeypatch.setattr(sys, "stdin", io.StringIO(path.read_text()))
    code, out, _ = run(capsys, "report", "-", "-p", "prob", "-y", "label", "-f", "csv")
    assert code == 0
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["n", "ece", "mce"]
    assert got.loc[0, "ece"] == calibr.ece(df["prob"], df["label"])


def test_report_parquet(capsys, tmp_path, binary_csv):
    pytest.importorskip("pyarrow")
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
    pytest.importorskip("matplotlib")
    path, _ = binary_csv
    png = tmp_path / "rel.png"
    code, out, err = run(capsys, "report", str(path), "-p", "prob", "-y", "label", "-g", "model",
                         "--plot", str(png))
    assert code == 0 and err == ""
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.splitlines()[0].split() == ["model", "n", "ece", "mce"]


def test_help_and_version(capsys):
    code, out, _ = run(capsys, "report", "--help")
    assert code == 0 and "bundled example data" in out and "exit status" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"calibr {calibr.__version__}"


def test_parse_metrics():
    specs = parse_metrics("ece, mce(bins=5),ece(type='confidence', bins=2)")
    assert specs == [("ece", Metric("ece")), ("mce(bins=5)", Metric("mce", {"bins": 5})),
                     ("ece(type='confidence', bins=2)",
                      Metric("ece", {"type": "confidence", "bins": 2}))]


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
    return err


def write(tmp_path, df, name="bad.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return str(path)


GOOD = pd.DataFrame({"m": ["a", "a", "b"], "p": [0.2, 0.7, 0.4], "y": [0, 1, 1]})


@pytest.mark.parametrize(
    ("make_args", "match"),
    [
        (lambda t: ["report", str(t / "nope.csv")], r"nope\.csv: no such file\.$"),
        (lambda t: ["report", str(t)], r": is a directory, not a file\.$"),
        (lambda t: ["report", write(t, GOOD, "x.xlsx")],
         r"x\.xlsx: cannot tell the format from the extension; use \.csv or \.parquet\.$"),
        (lambda t: ["report", write(t, GOOD), "-p", "q"],
         r"--prob must name a column of the data; got 'q'\.$"),
        (lambda t: ["report", write(t, GOOD), "-y", "label"],
         r"--label must name a column of the data; got 'label'\.$"),
        (lambda t: ["report", write(t, GOOD), "-g", "model"], r"--by: no column 'model' in the"),
        (lambda t: ["report", write(t, GOOD.assign(p=[0.2, 1.7, 0.4])), "-g", "m"],
         r"--prob must lie in \[0, 1\]; 1 value does not, the first at position 1 \(1\.7\)\. "
         r"\[group m='a'\]$"),
        (lambda t: ["report", write(t, GOOD.assign(y=[0, 2, 1]))],
         r"--label must be 0/1 or boolean for a vector --prob"),
        (lambda t: ["report", write(t, GOOD.assign(p=[0.2, None, 0.4]))],
         r"--prob must not contain missing values; .* Pass --na-rm to drop incomplete "
         r"observations\.$"),
        (lambda t: ["report", write(t, GOOD.assign(p=["x", "y", "z"]))],
         r"--prob must be numeric"),
        (lambda t: ["report", write(t, pd.DataFrame({"p_0": [0.5, 0.3], "p_1": [0.6, 0.7],
                                                     "y": [0, 1]})), "--prob-prefix", "p_"],
         r"--prob rows must sum to 1 \(within 1e-06\); 1 row does not, the first at row 0"),
        (lambda t: ["report", write(t, GOOD), "-m", "ece,brier"],
         r"`metrics` must name calibr metrics .* got 'brier'\.$"),
        (lambda t: ["report", write(t, GOOD), "-m", "mce(bns=2)"],
         r"The metric 'mce\(bns=2\)' has no option 'bns'; its options are bins, type\.$"),
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
         r"error: --by: the column 'n' has the name of the report's row count; rename it in the "
         r"data\.$"),
        (lambda t: ["report", write(t, GOOD.assign(ece=[1, 1, 2])), "--by", "m", "ece"],
         r"error: --by: the column 'ece' has the name of a metric column of the report; rename "
         r"it in the data\.$"),
        (lambda t: ["report", write(t, GOOD.assign(n=[1, 1, 2])), "--by", "n", "--per-bin"],
         r"error: --by: the column 'n' has the name of a column of the per-bin table; rename it "
         r"in the data\.$"),
        (lambda t: ["report", write(t, GOOD.assign(y=[3, 1, 2]).rename(columns={"p": "p_1"})
                                    .assign(p_2=[0.5, 0.2, 0.4], p_3=[0.3, 0.1, 0.2])),
                    "--prob", "p_1", "p_2", "p_3"],
         r"error: --label must be one of the class labels \('p_1', 'p_2', 'p_3'\); 3 values do "
         r"not, the first at position 0 \(3\)\. Labels are matched to the names of the --prob "
         r"columns; pass --classes to give the label of each column\.$"),
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
        (lambda t: ["report", "-p", "q"], r"--prob need FILE or --example"),
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
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, make_args, match):
    _bad(capsys, tmp_path, *make_args(tmp_path), match=match)


def test_missing_command(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert err == "calibr: error: missing command; try `calibr report` (see `calibr --help`)\n"


def test_bad_plot_format_writes_nothing(capsys, tmp_path):
    pytest.importorskip("matplotlib")
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
    code = main(["report", write(tmp_path, GOOD), "-o", path, "--plot", path])
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


def test_corrupt_parquet(capsys, tmp_path):
    pytest.importorskip("pyarrow")
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
         r"an array\); check --bins and the metric options\.\n$"),
        (MemoryError(), r"^calibr: error: out of memory for this computation; check --bins and "
                        r"the metric options\.\n$"),
        (OverflowError("Python int too large to convert to C long"),
         r"^calibr: error: a number is too large for this computation \(Python int too large to "
         r"convert to C long\); check --bins and the metric options\.\n$"),
    ],
)
def test_overflow_and_memory_errors_exit_2(capsys, tmp_path, monkeypatch, exc, match):
    import calibr.cli

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(calibr.cli, "summarise", boom)
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
    ok = subprocess.run([sys.executable, "-m", "calibr.cli", "report"],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and ok.stderr == ""
    assert "random_forest" in ok.stdout


def test_plot_gets_the_confidence_table_unless_classwise(capsys, tmp_path, monkeypatch):
    import calibr.plot

    seen = []

    class Fig:
        def savefig(self, buf, format):  # noqa: A002 - matplotlib's name
            buf.write(b"fake " + format.encode())

    def fake(table, by=None, **kw):
        seen.append((table, by))
        return Fig()

    monkeypatch.setattr(calibr.plot, "reliability_diagram", fake)
    png = tmp_path / "d.png"
    assert main(["report", "--example", "digits", "--plot", str(png)]) == 0
    table, by = seen[-1]
    assert list(table.columns) == ["dataset", "model", *TABLE_COLUMNS]
    assert by == ["dataset", "model"]
    assert png.read_bytes() == b"fake png"
    assert main(["report", "--example", "digits", "--type", "classwise", "--plot", str(png)]) == 0
    table, by = seen[-1]
    assert list(table.columns) == ["dataset", "model", "class", *TABLE_COLUMNS]
    assert by == ["dataset", "model"]  # classes are curves within each panel
    capsys.readouterr()


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
    assert list(got.columns) == ["dataset", "model", "fold", "n", "ece"]
    assert len(got) == 2 * 3 * 5
