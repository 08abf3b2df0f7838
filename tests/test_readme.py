"""README's two commands stay true: CI runs both, in a fresh venv, and the first
command's main job (``calibr report`` on the bundled data) works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import calibr

ROOT = Path(__file__).resolve().parents[1]


def _first_commands():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", text)[:2]


def test_readme_starts_with_the_two_commands():
    setup_and_run, run_tests = _first_commands()
    assert setup_and_run == "pip install . && calibr report"
    assert run_tests.startswith("bash .ci/install && ") and "pytest" in run_tests


def test_ci_runs_readme_commands_in_a_fresh_venv():
    """.ci/run does what a new user does: it makes a virtual environment from
    ``python3`` and, inside it, runs README's two commands, each line exactly."""
    setup_and_run, run_tests = _first_commands()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    ci = [line.removesuffix(" || status=$?") for line in ci if not line.startswith("#")]

    def step(line: str) -> int:
        assert line in ci, f".ci/run must run {line!r}"
        return ci.index(line)

    unquoted = [line.replace('"', "") for line in ci]
    venv = next((i for i, line in enumerate(unquoted) if line.startswith("python3 -m venv ")), None)
    assert venv is not None, ".ci/run must make a fresh venv with python3 -m venv"
    activate = f". {unquoted[venv].removeprefix('python3 -m venv ')}/bin/activate"
    assert activate in unquoted, f".ci/run must activate the venv: {activate!r}"
    order = [venv, unquoted.index(activate), *map(step, [setup_and_run, run_tests, "ruff check ."])]
    assert order == sorted(order), "venv, activate, README's two commands, ruff: in this order"
    assert "CALIBR_REQUIRE_R=1" in run_tests and "CALIBR_REQUIRE_TORCH=1" in run_tests
    assert "--system-site-packages" not in ci[venv]


def test_ci_builds_the_documentation_as_readme_says():
    """README's "Documentation" section builds the site with warnings as errors;
    .ci/run runs that line exactly, after README's test command (which installs the
    docs extra) and before the end."""
    section = (ROOT / "README.md").read_text().split("\n## Documentation\n", 1)[1]
    block = re.findall(r"```sh\n(.+?)\n```", section, re.S)[0].splitlines()
    build = next(line for line in block if line.startswith("sphinx-build "))
    assert build.split()[1:3] == ["-W", "--keep-going"]
    ci = [line.strip().removesuffix(" || status=$?")
          for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    _, run_tests = _first_commands()
    assert build in ci, f".ci/run must run {build!r}"
    assert ci.index(run_tests) < ci.index(build) < ci.index('exit "$status"')
    assert f"{build} || status=$?" in (ROOT / ".ci" / "run").read_text()


def test_main_job_runs_on_the_bundled_data():
    out = subprocess.run([sys.executable, "-m", "calibr.cli", "report"], capture_output=True,
                         text=True, check=True)
    assert "naive_bayes" in out.stdout and "ece" in out.stdout


def test_public_names():
    for name in calibr.__all__:
        assert hasattr(calibr, name)
    assert isinstance(calibr.__version__, str)
