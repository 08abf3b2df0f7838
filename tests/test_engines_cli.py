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
    args = ["--p-baseline", "p", "--p-candidate", "q", "--resamples", "99", "--seed", "1"]
    code, want, err = _run(capsys, "compare", str(files / "all.csv"), *args)
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
