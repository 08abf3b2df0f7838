"""The command line on polars and DuckDB (calibr/cli/_scan.py, docs/engines.md):
``calibr report`` and ``calibr compare`` of Parquet files, directories and globs
read with ``--engine polars`` or ``--engine duckdb``, and of a DuckDB table
(``duckdb:PATH::TABLE``), give the output of one CSV holding the same rows (but
the ``engine:`` line); an engine's failure is one line, exit 2, nothing written."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from calibr.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _body(text: str) -> list[str]:
    """The report but its header line (which names the input) and the engine line."""
    return [line for line in text.splitlines()[1:] if not line.startswith("engine: ")]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("engines_cli")
    rng = np.random.default_rng(7)
    n = 1500
    df = pd.DataFrame({"model": rng.choice(["b", "a"], n), "p": rng.random(n),
                       "q": rng.random(n), "w": rng.integers(1, 4, n).astype(float),
                       "note": "x"})
    df["y"] = (rng.random(n) < df["p"]).astype(np.int64)
    df.to_csv(root / "all.csv", index=False)
    (root / "dir").mkdir()
    for i, start in enumerate(range(0, n, 500)):
        df.iloc[start:start + 500].to_parquet(root / "dir" / f"part{i}.parquet", index=False)
    (root / "dir" / "_SUCCESS").write_text("")
    con = duckdb.connect(str(root / "preds.db"))
    con.execute("create table scores as select * from df")
    con.close()
    (root / "bad.parquet").write_text("not parquet")
    return root


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("options", [["--by", "model"], ["--by", "model", "--weights", "w"],
                                     ["--per-bin", "--bins", "4"], ["--test", "spiegelhalter"],
                                     ["--format", "csv", "--metrics", "ece,skce"]])
def test_report_equals_that_of_one_csv(capsys, files, engine, options):
    code, want, err = _run(capsys, "report", str(files / "all.csv"), *options)
    assert code == 0, err
    for source in (files / "dir", f"{files}/dir/*.parquet"):
        code, got, err = _run(capsys, "report", str(source), "--engine", engine, *options)
        assert code == 0, err
        assert _body(got) == _body(want)
        if "csv" not in options:
            assert f"engine: {engine}, 3 Parquet files scanned lazily" in got
    code, got, err = _run(capsys, "report", f"duckdb:{files}/preds.db::scores", *options)
    assert code == 0, err
    assert _body(got) == _body(want)


def test_compare_reads_through_the_engines(capsys, files):
    args = ["--p-baseline", "p", "--p-candidate", "q", "--n-resamples", "99", "--seed", "1"]
    code, want, err = _run(capsys, "compare", str(files / "all.csv"), *args)
    assert (code, err) == (1, "")  # q is worse calibrated than p
    for source, extra in ((str(files / "dir"), ["--engine", "polars"]),
                          (str(files / "dir"), ["--engine", "duckdb"]),
                          (f"duckdb:{files}/preds.db::scores", [])):
        got = _run(capsys, "compare", source, *args, *extra)
        assert got[0] == code and _body(got[1]) == _body(want), got[2]


@pytest.mark.parametrize(("argv", "message"), [
    (["{root}/bad.parquet", "--engine", "polars"],
     "calibr: error: {root}/bad.parquet: polars cannot read it: "),
    (["{root}/bad.parquet", "--engine", "duckdb"],
     "calibr: error: {root}/bad.parquet: DuckDB cannot read it: "),
    (["duckdb:{root}/preds.db::nope"],
     "calibr: error: duckdb:{root}/preds.db::nope: DuckDB cannot read it: Catalog Error: "),
    (["duckdb:{root}/none.db::scores"],
     "calibr: error: duckdb:{root}/none.db::scores: no such file '{root}/none.db'."),
    (["duckdb:{root}/preds.db"],
     "calibr: error: duckdb:{root}/preds.db: a DuckDB table is given as duckdb:PATH::TABLE"),
    (["{root}/all.csv", "--engine", "polars"],
     "calibr: error: --engine polars reads Parquet files; {root}/all.csv is CSV"),
    (["duckdb:{root}/preds.db::scores", "--engine", "polars"],
     "calibr: error: --engine polars: duckdb:{root}/preds.db::scores is a DuckDB table"),
])
def test_engine_failures_are_one_line_exit_2_nothing_written(capsys, files, argv, message):
    out = files / "out.csv"
    argv = [a.format(root=files) for a in argv]
    code, got, err = _run(capsys, "report", *argv, "--output", str(out))
    assert code == 2 and got == ""
    assert err.startswith(message.format(root=files)), err
    assert err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize(("engine", "install"), [("polars", "pip install 'polars=="),
                                                 ("duckdb", "pip install 'duckdb==")])
def test_an_engine_not_installed_is_one_line_exit_2(capsys, files, monkeypatch, engine, install):
    """--engine of a package that does not import: calibr's error with the install
    command (exit 2), never an internal error; nothing written."""
    import sys

    monkeypatch.setitem(sys.modules, engine, None)  # `import polars` raises ImportError
    out = files / "out.csv"
    code, got, err = _run(capsys, "report", str(files / "dir"), "--engine", engine,
                          "--output", str(out))
    assert code == 2 and got == ""
    assert err.startswith(f"calibr: error: --engine {engine} needs {engine} ("), err
    assert f"install it with `{install}" in err and err.count("\n") == 1
    assert not out.exists()


def _parts(root, name, frames, ext="parquet"):
    """A directory ``root/name`` of one file per frame (part0, part1, ...)."""
    folder = root / name
    folder.mkdir()
    for i, frame in enumerate(frames):
        if ext == "parquet":
            frame.to_parquet(folder / f"part{i}.parquet", index=False)
        else:
            frame.to_csv(folder / f"part{i}.csv", index=False)
    return folder


GOOD = pd.DataFrame({"p": [0.2, 0.7, 0.4, 0.9], "y": [0, 1, 1, 1]})


@pytest.mark.parametrize("engine", ["dask", "polars", "duckdb"])
@pytest.mark.parametrize(("second", "message"), [
    (GOOD.assign(p=GOOD["p"].astype(str)),
     "the column 'p' holds floating-point numbers in {d}/part0.parquet but text in "
     "{d}/part1.parquet; every file of a directory or glob must store a column with one type."),
    (GOOD.assign(p=[0, 1, 1, 1]),
     "the column 'p' holds floating-point numbers in {d}/part0.parquet but integers in "
     "{d}/part1.parquet; every file of a directory or glob must store a column with one type."),
    (GOOD.rename(columns={"p": "q"}),
     "the files do not have the same columns: {d}/part0.parquet has 'p', 'y', "
     "{d}/part1.parquet has 'q', 'y'; every file of a directory or glob must have the same "
     "columns."),
])
def test_files_that_disagree_are_refused_alike_by_every_engine(capsys, tmp_path, engine,
                                                              second, message):
    """Files of one directory whose columns or types differ: one message from every
    engine, before any reads them (DuckDB used to cast the second file to the first's
    types: text read as numbers, 1.5 as 2; Dask to fail inside its computation)."""
    folder = _parts(tmp_path, "d", [GOOD, second])
    out = tmp_path / "r.csv"
    code, got, err = _run(capsys, "report", str(folder), "--engine", engine, "-o", str(out))
    assert (code, got) == (2, "")
    assert err == f"calibr: error: {folder}: {message.format(d=folder)}\n"
    assert not out.exists()


@pytest.mark.parametrize("engine", ["dask", "polars", "duckdb"])
def test_a_text_p_in_every_file_is_the_same_error_on_every_engine(capsys, tmp_path, engine):
    text = GOOD.assign(p=GOOD["p"].astype(str))
    folder = _parts(tmp_path, "d", [text, text])
    code, got, err = _run(capsys, "report", str(folder), "--engine", engine)
    assert (code, got) == (2, "")
    assert err.startswith("calibr: error: --prob must be numeric (integer or float); got "
                          "dtype str"), err


def test_files_with_other_columns_are_refused_without_an_abort(tmp_path):
    """CSV files of different columns read by Dask (the default engine): exit 2 and
    one line, in a process of its own (never an abort of Dask's threads at exit)."""
    import subprocess
    import sys

    folder = _parts(tmp_path, "mixed", [GOOD, GOOD.rename(columns={"p": "q"})], "csv")
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-m", "calibr.cli", "report", str(folder)],
                              capture_output=True, text=True, check=False)
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        assert proc.stderr == (
            f"calibr: error: {folder}: the files do not have the same columns: "
            f"{folder}/part0.csv has 'p', 'y', {folder}/part1.csv has 'q', 'y'; every file of "
            "a directory or glob must have the same columns.\n")


@pytest.mark.parametrize("engine", [[], ["--engine", "dask"], ["--engine", "polars"]])
def test_compare_of_two_directories_equals_that_of_two_files(capsys, files, tmp_path, engine):
    """compare reads a directory (or glob) as report does: its files' rows in order."""
    df = pd.read_csv(files / "all.csv")
    other = df.assign(p=df["q"])
    other.to_csv(tmp_path / "other.csv", index=False)
    kind = "parquet" if engine == ["--engine", "polars"] else "csv"
    base = _parts(tmp_path, "base", [df.iloc[:700], df.iloc[700:]], kind)
    cand = _parts(tmp_path, "cand", [other.iloc[:900], other.iloc[900:]], kind)
    args = ["--prob", "p", "--n-resamples", "99", "--seed", "1", "--format", "csv"]
    code, want, err = _run(capsys, "compare", str(files / "all.csv"),
                           str(tmp_path / "other.csv"), *args)
    assert (code, err) == (1, "")  # q is worse calibrated than p
    got = _run(capsys, "compare", str(base), str(cand), *args, *engine)
    assert got == (code, want, "")
    same = _run(capsys, "compare", str(base), str(base), *args, *engine)
    assert same[0] == 0 and same[2] == ""


@pytest.mark.parametrize("command", [["report"], ["compare", "--p-baseline", "p",
                                                  "--p-candidate", "q"]])
def test_sep_is_refused_for_a_duckdb_table(capsys, files, command):
    code, got, err = _run(capsys, command[0], f"duckdb:{files}/preds.db::scores",
                          *command[1:], "--sep", ";")
    assert (code, got) == (2, "")
    assert err == "calibr: error: --sep applies to CSV input; FILE is a DuckDB table.\n"
