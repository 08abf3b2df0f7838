"""The repository's own rules, checked so that they keep holding.

* Tests live in the file of the behaviour they protect: no test module is named
  after a mutation run or an issue (``scripts/mutate.py`` finds the gaps; the
  tests that close them go next to the behaviour).
* Comments and docstrings cite files of this repository (``docs/*.md``, the R
  help pages ``r_reference/calibrRef/man/*.Rd``), never a document outside it
  or an issue number.
* No test can pass in CI by skipping: optional packages go through
  ``conftest.require`` (a failure under CI's variables), not
  ``pytest.importorskip``.
* Every pytest marker declared in ``pyproject.toml`` is used.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()

#: Test modules named after how they came about rather than what they protect.
HISTORY_NAMES = re.compile(r"^test_(mutants?|mutation|issues?)(_|\.|\d)", re.IGNORECASE)

#: Citations of documents outside the repository, or of issues.
OUTSIDE = re.compile(
    r"spec sections? \d|spec §|\bsections? [\d-]+ of the spec\b|\b(?:pages|conventions) of the "
    r"spec\b|\bthe spec's\b|\br-docs/|\.\./shared/"
    r"|\(issues? \d+\)|\bissues? #?\d+\b|\bthe issue's\b",
    re.IGNORECASE,
)

#: Directories that are not the project's own text.
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache", ".venv",
              "build", "dist"}


def _text_files() -> list[Path]:
    """The tracked files (``git ls-files``), or, without git, every file of the tree
    outside caches and build folders."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True, timeout=60).stdout
        paths = [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        paths = [p for p in ROOT.rglob("*") if p.is_file()
                 and not _SKIP_DIRS.intersection(p.relative_to(ROOT).parts)]
    return [p for p in paths if p.is_file()]


def test_no_test_module_is_named_after_a_mutation_run_or_an_issue():
    named = sorted(p.name for p in (ROOT / "tests").rglob("test_*.py")
                   if HISTORY_NAMES.match(p.name))
    assert named == [], (f"{named}: put each test in the file of the behaviour it protects "
                         "(tests/test_<behaviour>.py), named for that behaviour")


def test_no_file_cites_a_document_outside_the_repository():
    found = []
    for path in _text_files():
        if path.resolve() == THIS:
            continue  # the patterns themselves
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], ("cite a file of this repository (docs/*.md, "
                         "r_reference/calibrRef/man/*.Rd) instead:\n" + "\n".join(found))


@pytest.mark.parametrize("folder", ["tests", "calibr"])
def test_no_test_skips_by_importorskip(folder):
    calls = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / folder).rglob("*.py"))
             if p.resolve() != THIS
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bimportorskip\s*\(", line)]
    assert calls == [], (f"{calls}: use conftest.require(name), which fails instead of "
                         "skipping under CALIBR_REQUIRE_R / CALIBR_REQUIRE_TORCH")


def _declared_markers() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^markers\s*=\s*\[(.*?)^\]", text, re.MULTILINE | re.DOTALL)
    assert block is not None, "pyproject.toml declares no markers"
    return re.findall(r'^\s*"(\w+)\s*:', block.group(1), re.MULTILINE)


def test_every_declared_marker_is_used():
    markers = _declared_markers()
    assert {"r", "torch"} <= set(markers)
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py")
                       if p.resolve() != THIS)
    unused = [m for m in markers if not re.search(rf"\bpytest\.mark\.{m}\b", source)]
    assert unused == [], (f"markers declared in pyproject.toml but used by no test: {unused}; "
                          "use them or remove the declaration")
