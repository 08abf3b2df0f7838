"""Run every vignette in ``vignettes/*.md`` and check that R and Python agree.

The conventions (also stated at the top of each vignette):

- Fenced blocks are run by language: every ```` ```python ```` block, in order,
  in one namespace (the current directory is a temporary folder); every
  ```` ```r ```` block, in order, as one ``Rscript`` script. Blocks of other
  languages (```` ```text ````, ```` ```bash ````) are not run.
- A ```` ```text ```` block that directly follows a ```` ```python ```` block is
  that block's expected standard output, compared line by line (trailing
  spaces ignored).
- A comment ``<!-- compare: name1, name2 -->`` names data frames that both the
  Python and the R code create under those names. After both have run, each
  side writes them to CSV at 17 significant digits (Python
  ``float_format="%.17g"``, R ``sprintf("%.17g")``); the test reads both back
  with Python's exact ``float()`` and requires the same columns, the same
  non-float values and floats equal to ``R_RTOL`` relative (with the
  absolute floor ``R_ATOL`` for values that are zero up to rounding; both in
  ``tests/tolerances.py``).
- R reads the bundled CSV files from the folder in the environment variable
  ``CALIBR_DATA``, which the test sets to the package's data folder.

The R half needs ``Rscript`` with the reference package ``calibrRef``
(``R CMD INSTALL r_reference/calibrRef``) and dplyr. Without them the R tests
skip, unless ``CALIBR_REQUIRE_R`` is set (as in CI), where they fail instead,
exactly like the ``rref`` fixture.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tolerances import R_ATOL, R_RTOL

try:  # a vignette may draw figures; never open a window
    import matplotlib

    matplotlib.use("Agg")
except ImportError:  # pragma: no cover - the plot extra is part of the test extra
    pass

VIGNETTE_DIR = Path(__file__).resolve().parent.parent / "vignettes"
VIGNETTES = sorted(VIGNETTE_DIR.glob("*.md"))
#: The vignettes that must exist: a first walk-through and the guide for R users
#: (README.md points to it); more may be added.
REQUIRED = {"getting-started.md", "migrating-from-r.md"}
#: Fence languages a vignette may use: run (python, r) or shown only (text, bash).
LANGUAGES = {"python", "r", "text", "bash"}
#: R and calibr agree to about 1e-12 relative; the reasons are in tests/tolerances.py
#: (R_RTOL, R_ATOL).
RTOL, ATOL = R_RTOL, R_ATOL

_FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)[^\n]*$")
_COMPARE = re.compile(r"<!--\s*compare:\s*([\w\s,]+?)\s*-->")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the first code line
    expected: str | None = None  # for python: the text block that follows


def parse(path: Path) -> tuple[list[Block], list[str]]:
    """The fenced blocks of a Markdown file and the names in its compare comments."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    last_end = -1  # line index just after the previous block's closing fence
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2)
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        if j == len(lines):
            raise AssertionError(f"{path.name}:{i + 1}: unclosed code fence")
        block = Block(lang, "\n".join(lines[start:j]) + "\n", start + 1)
        gap_is_blank = all(not s.strip() for s in lines[last_end:i])
        if lang == "text" and blocks and blocks[-1].lang == "python" and gap_is_blank:
            blocks[-1].expected = block.code
        blocks.append(block)
        i = last_end = j + 1
    names = [n.strip() for m in _COMPARE.finditer("\n".join(lines)) for n in m.group(1).split(",")]
    return blocks, [n for n in names if n]


def _required(var: str) -> bool:
    return os.environ.get(var, "").strip().lower() not in ("", "0", "false", "no")


def _data_dir() -> Path:
    return Path(str(resources.files("calibr.datasets").joinpath("data")))


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Python's half of the CSV convention: floats at 17 significant digits."""
    frame.to_csv(path, index=False, float_format="%.17g")


_INT = re.compile(r"^[+-]?\d+$")
_MISSING = {"", "NA", "NaN", "nan"}


def read_csv(path: Path) -> pd.DataFrame:
    """Read either side's CSV; numbers are parsed by Python's ``float()``, which is exact.

    (pandas' own float parser is not round-trip exact in every version.) A column
    of integer literals becomes int64, one of numbers float64, anything else str.
    """
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    out = {}
    for name in raw.columns:
        values = raw[name].tolist()
        if values and all(_INT.match(v) for v in values):
            out[name] = np.array([int(v) for v in values], dtype=np.int64)
            continue
        try:
            out[name] = np.array([np.nan if v in _MISSING else float(v) for v in values])
        except ValueError:
            out[name] = np.array(values, dtype=object)
    return pd.DataFrame(out, columns=raw.columns)


_R_WRITER = """
.calibr_write <- function(df, path) {
  df <- as.data.frame(df)
  for (col in names(df)) {
    if (is.double(df[[col]])) df[[col]] <- sprintf("%.17g", df[[col]])
    else if (is.factor(df[[col]])) df[[col]] <- as.character(df[[col]])
  }
  utils::write.csv(df, path, row.names = FALSE)
}
"""


def assert_frames_agree(py: pd.DataFrame, r: pd.DataFrame, name: str) -> None:
    assert list(py.columns) == list(r.columns), f"{name}: columns differ"
    assert py.shape == r.shape, f"{name}: shapes differ ({py.shape} vs {r.shape})"
    floats = [c for c in py.columns if pd.api.types.is_float_dtype(py[c])
              or pd.api.types.is_float_dtype(r[c])]
    keys = [c for c in py.columns if c not in floats]
    for c in keys:
        assert py[c].astype(str).tolist() == r[c].astype(str).tolist(), f"{name}: column {c!r}"
    for c in floats:
        np.testing.assert_allclose(py[c].to_numpy(float), r[c].to_numpy(float), rtol=RTOL,
                                   atol=ATOL, err_msg=f"{name}: column {c!r}")


# --- running the Python half ------------------------------------------------------

_python_runs: dict[Path, dict] = {}


def run_python(path: Path, workdir: Path) -> dict:
    """Run the Python blocks of ``path`` in order; return the namespace (cached)."""
    if path in _python_runs:
        return _python_runs[path]
    blocks, _ = parse(path)
    namespace: dict = {"__name__": "__vignette__"}
    old = Path.cwd()
    os.chdir(workdir)
    try:
        for block in blocks:
            if block.lang != "python":
                continue
            code = compile(block.code, f"{path.name}:{block.line}", "exec")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)  # noqa: S102 - the vignette is our own code
            if block.expected is not None:
                got = [s.rstrip() for s in out.getvalue().rstrip("\n").splitlines()]
                want = [s.rstrip() for s in block.expected.rstrip("\n").splitlines()]
                assert got == want, (
                    f"{path.name}:{block.line}: the printed output differs from the text block "
                    f"that follows it.\n--- got ---\n" + "\n".join(got)
                    + "\n--- vignette ---\n" + "\n".join(want)
                )
    finally:
        os.chdir(old)
    _python_runs[path] = namespace
    return namespace


# --- running the R half -----------------------------------------------------------


@pytest.fixture(scope="session")
def rscript() -> str:
    """Path of Rscript when it can load calibrRef and dplyr; else skip (or fail)."""
    exe = shutil.which("Rscript")
    problem = None
    if exe is None:
        problem = "Rscript is not on PATH"
    else:
        probe = subprocess.run(
            [exe, "--vanilla", "-e", "library(calibrRef); library(dplyr)"],
            capture_output=True, text=True, timeout=300,
        )
        if probe.returncode != 0:
            problem = f"R cannot load calibrRef and dplyr: {probe.stderr.strip()[-500:]}"
    if problem is not None:
        msg = f"R reference not available: {problem}"
        if _required("CALIBR_REQUIRE_R"):
            pytest.fail(msg + " (CALIBR_REQUIRE_R is set, so this is a failure)")
        pytest.skip(msg)
    return exe


def run_r(path: Path, exe: str, workdir: Path, names: list[str]) -> dict[str, pd.DataFrame]:
    blocks, _ = parse(path)
    parts = [f"# {path.name}:{b.line}\n{b.code}" for b in blocks if b.lang == "r"]
    outputs = {n: workdir / f"r_{n}.csv" for n in names}
    epilogue = _R_WRITER + "".join(
        f'.calibr_write({n}, "{p.as_posix()}")\n' for n, p in outputs.items()
    )
    script = workdir / f"{path.stem}.R"
    script.write_text("\n".join(parts) + "\n" + epilogue, encoding="utf-8")
    env = dict(os.environ, CALIBR_DATA=str(_data_dir()))
    proc = subprocess.run([exe, "--vanilla", str(script)], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, (
        f"R blocks of {path.name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    )
    return {n: read_csv(p) for n, p in outputs.items()}


# --- the tests ----------------------------------------------------------------------


def test_the_promised_vignettes_exist():
    assert REQUIRED <= {p.name for p in VIGNETTES}


@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.name)
def test_vignette_blocks_are_well_formed(path):
    blocks, names = parse(path)
    langs = {b.lang for b in blocks}
    # An unknown tag ("py", "R", "python3", none) would be a block the tests silently skip.
    assert langs <= LANGUAGES, f"{path.name}: unknown fence languages {langs - LANGUAGES}"
    assert "python" in langs, f"{path.name}: no python block"
    if "r" in langs:
        assert names, f"{path.name}: R code but no <!-- compare: ... --> comment"
    assert len(names) == len(set(names)), f"{path.name}: a compare name repeats"


@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.name)
def test_python_blocks_run_and_print_what_the_vignette_shows(path, tmp_path_factory):
    namespace = run_python(path, tmp_path_factory.mktemp(path.stem))
    _, names = parse(path)
    for name in names:
        assert isinstance(namespace.get(name), pd.DataFrame), (
            f"{path.name}: the Python code does not define the data frame {name!r}"
        )


@pytest.mark.r
@pytest.mark.parametrize(
    "path", [p for p in VIGNETTES if any(b.lang == "r" for b in parse(p)[0])],
    ids=lambda p: p.name,
)
def test_r_blocks_give_the_numbers_of_the_python_blocks(path, rscript, tmp_path_factory):
    _, names = parse(path)
    workdir = tmp_path_factory.mktemp(path.stem + "_r")
    namespace = run_python(path, tmp_path_factory.mktemp(path.stem))
    r_frames = run_r(path, rscript, workdir, names)
    for name in names:
        write_csv(namespace[name], workdir / f"py_{name}.csv")
        assert_frames_agree(read_csv(workdir / f"py_{name}.csv"), r_frames[name], name)


# --- the harness itself ------------------------------------------------------------


def test_parser_pairs_output_blocks_and_reads_compare_comments(tmp_path):
    md = tmp_path / "x.md"
    md.write_text(
        "# T\n<!-- compare: a, b -->\n```python\nprint(1)\n```\n\n```text\n1\n```\n"
        "Some prose.\n```text\nnot an output\n```\n````r\nx <- 1\n````\n"
        "```python\ny = 2\n```\nprose\n```text\nshown, not checked\n```\n",
        encoding="utf-8",
    )
    blocks, names = parse(md)
    assert names == ["a", "b"]
    assert [b.lang for b in blocks] == ["python", "text", "text", "r", "python", "text"]
    assert blocks[0].expected == "1\n" and blocks[0].line == 4
    assert blocks[3].code == "x <- 1\n"
    assert blocks[4].expected is None


def test_frames_must_agree_to_the_tolerance():
    a = pd.DataFrame({"model": ["x", "y"], "ece": [0.1, 0.2]})
    assert_frames_agree(a, a.assign(ece=a["ece"] * (1 + 5e-13)), "t")
    with pytest.raises(AssertionError):
        assert_frames_agree(a, a.assign(ece=a["ece"] * (1 + 1e-10)), "t")
    with pytest.raises(AssertionError, match="column 'model'"):
        assert_frames_agree(a, a.assign(model=["x", "z"]), "t")
    with pytest.raises(AssertionError, match="columns differ"):
        assert_frames_agree(a, a.rename(columns={"ece": "mce"}), "t")


def test_csv_convention_round_trips_doubles(tmp_path):
    values = np.random.default_rng(5).random(200) ** 7
    write_csv(pd.DataFrame({"v": values}), tmp_path / "v.csv")
    np.testing.assert_array_equal(read_csv(tmp_path / "v.csv")["v"].to_numpy(), values)


@pytest.mark.parametrize("case", ["no pytest", "no plugin"])
def test_regression_gate_vignette_says_why_pytest_did_not_run(case, tmp_path, monkeypatch,
                                                              capsys):
    """Without the pytest extra, the vignette's fixture block stops with pytest's own
    words, not with a FileNotFoundError or an AttributeError of its helpers: here with
    an interpreter that has no pytest (a stand-in that says what Python says), and with
    pytest's plugins not loaded (no fixture calibration_regression)."""
    blocks = [b for b in parse(VIGNETTE_DIR / "regression-gate.md")[0] if b.lang == "python"]
    data, fixture = blocks[0], blocks[1]
    assert "def run_pytest" in fixture.code
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__vignette__"}
    exec(compile(data.code, "data", "exec"), namespace)  # noqa: S102 - our own code
    if case == "no pytest":
        fake = tmp_path / "python"
        fake.write_text("#!/bin/sh\necho \"$0: No module named pytest\" >&2\nexit 1\n")
        fake.chmod(0o755)
        monkeypatch.setattr("sys.executable", str(fake))
        match = r"pytest could not run the tests .*\n.*: No module named pytest$"
    else:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        match = r"pytest could not run the tests (?s:.*)fixture 'calibration_regression' not found"
    with pytest.raises(RuntimeError, match=match):
        exec(compile(fixture.code, "fixture", "exec"), namespace)  # noqa: S102
    capsys.readouterr()
