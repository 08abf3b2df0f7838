"""Every `calibr` command in a shell block of docs/*.md and docs/site/*.md runs, on
files that match what the pages say, and exits as documented (0).

The files (docs/cli.md, "Example files"): ``preds.csv`` and ``preds.parquet`` hold
one row per prediction with the columns model, fold, y and p (binary: y is 0 or 1),
or, for a command that names the columns p_0, p_1, p_2 (``--prob p_0,p_1,p_2``,
``--prob-prefix p_``), those three columns with y in 0..2; ``counts.csv`` adds a
column count of whole-number frequency weights; ``base.csv`` and ``cand.csv`` are two
models' predictions of the same rows (columns id, segment, p, y; the candidate's rows
in another order and no worse calibrated); ``predictions/`` is a directory of Parquet
files (model, p, y) and ``runs.db`` a DuckDB database with that table as
``predictions``. Each command runs in its own copy of these files, through
:func:`calibr.cli.main` (the console script's function) with the words the shell
would give it. A synopsis (``calibr compare BASELINE CANDIDATE [--prob COL ...]``)
is no command: the blocks that hold one are listed in SYNOPSES, so that no other
block can be skipped unseen.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calibr.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("docs/*.md"), *ROOT.glob("docs/site/*.md")])
SHELL = {"sh", "bash", "shell", "console"}
#: Blocks that show a command's synopsis, not a command: (page, first line).
SYNOPSES = {("docs/regression_gate.md", "calibr compare BASELINE CANDIDATE [--prob COL ...] "
                                        "[--key COL]")}
_FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)[^\n]*$")


def shell_blocks(path: Path) -> list[tuple[int, str]]:
    """The shell blocks of a page: (line of the first code line, code)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        j = i + 1
        while not lines[j].strip().startswith(m.group(1)):
            j += 1
        if m.group(2) in SHELL:
            out.append((i + 2, "\n".join(s.strip() for s in lines[i + 1:j])))
        i = j + 1
    return out


def commands(code: str) -> list[list[str]]:
    """The calibr commands of a block, as the shell splits them (continued lines
    joined, comments dropped)."""
    out = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "calibr":
            out.append(words)
    return out


def examples() -> list:
    found, synopses = [], set()
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        for line, code in shell_blocks(page):
            if (name, code.splitlines()[0]) in SYNOPSES:
                synopses.add((name, code.splitlines()[0]))
                continue
            for words in commands(code):
                found.append(pytest.param(words, id=f"{name}:{line}:{' '.join(words)[:60]}"))
    assert synopses == SYNOPSES  # each listed synopsis is still on its page
    return found


EXAMPLES = examples()


def test_the_pages_have_the_commands_this_file_runs():
    ids = [p.id for p in EXAMPLES]
    assert len(ids) >= 25
    assert any("docs/cli.md" in i and "--prob p_0,p_1,p_2" in i for i in ids)
    assert any("docs/engines.md" in i and "duckdb:runs.db::predictions" in i for i in ids)
    assert any("docs/site/html-report.md" in i for i in ids)


def _binary(rng: np.random.Generator, n: int) -> pd.DataFrame:
    p = rng.random(n)
    return pd.DataFrame({"model": rng.choice(["a", "b"], n), "fold": rng.integers(1, 3, n),
                         "p": p, "y": (rng.random(n) < p).astype(int)})


def _multiclass(rng: np.random.Generator, n: int) -> pd.DataFrame:
    prob = rng.dirichlet([2.0, 2.0, 2.0], n)
    y = np.array([rng.choice(3, p=row) for row in prob])
    return pd.DataFrame({"model": rng.choice(["a", "b"], n), "fold": rng.integers(1, 3, n),
                         **{f"p_{k}": prob[:, k] for k in range(3)}, "y": y})


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """The example files, binary and multiclass, each in its own folder."""
    rng = np.random.default_rng(31)
    made = {}
    for kind, frame in (("binary", _binary(rng, 240)), ("multiclass", _multiclass(rng, 240))):
        folder = tmp_path_factory.mktemp(kind)
        frame.to_csv(folder / "preds.csv", index=False)
        frame.to_parquet(folder / "preds.parquet", index=False)
        made[kind] = folder
    folder = made["binary"]
    _binary(rng, 240).assign(count=rng.integers(0, 4, 240)).to_csv(folder / "counts.csv",
                                                                  index=False)
    n = 300
    base = pd.DataFrame({"id": [f"r{i:04d}" for i in range(n)],
                         "segment": rng.choice(["new", "returning"], n), "p": rng.random(n)})
    base["y"] = (rng.random(n) < base["p"]).astype(int)
    base.to_csv(folder / "base.csv", index=False)
    cand = base.assign(p=np.clip(base["p"] + rng.normal(0, 0.02, n), 0.001, 0.999))
    cand.sample(frac=1.0, random_state=1).to_csv(folder / "cand.csv", index=False)
    (folder / "predictions").mkdir()
    parts = _binary(rng, 300).drop(columns="fold")
    parts.iloc[:150].to_parquet(folder / "predictions" / "part-0.parquet", index=False)
    parts.iloc[150:].to_parquet(folder / "predictions" / "part-1.parquet", index=False)
    import duckdb

    con = duckdb.connect(str(folder / "runs.db"))
    con.register("parts", parts)
    con.execute("CREATE TABLE predictions AS SELECT * FROM parts")
    con.close()
    return made


@pytest.mark.parametrize("words", EXAMPLES)
def test_documented_command_runs(words, files, tmp_path, monkeypatch, capsys):
    multiclass = any("p_" in w for w in words)
    shutil.copytree(files["multiclass" if multiclass else "binary"], tmp_path,
                    dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    code = main(words[1:])
    _, err = capsys.readouterr()
    assert code == 0, err
