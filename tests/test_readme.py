"""README's two commands stay true: CI runs README's test command, and the first
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


def test_ci_runs_readme_test_command():
    _, run_tests = _first_commands()
    test_command = run_tests.removeprefix("bash .ci/install && ")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "bash .ci/install" in ci
    assert test_command in ci, "the last step of .ci/run must be README's test command"
    assert "CALIBR_REQUIRE_R=1" in test_command and "CALIBR_REQUIRE_TORCH=1" in test_command


def test_main_job_runs_on_the_bundled_data():
    out = subprocess.run([sys.executable, "-m", "calibr.cli", "report"], capture_output=True,
                         text=True, check=True)
    assert "naive_bayes" in out.stdout and "ece" in out.stdout


def test_public_names():
    for name in calibr.__all__:
        assert hasattr(calibr, name)
    assert isinstance(calibr.__version__, str)
