"""Compiled code across processes: numba's on-disk cache, and where it is kept.

numba's cache outlives the process, so a bug in it shows only in the *next*
process (a kernel that loads from the cache and then fails, or loads a stale
copy). These tests run every compiled path of the public API
(``compiled_paths.py``) in fresh Python processes that share one fresh cache
directory, in two different orders, and again in a process that only loads
from the warm cache; every outcome (value or error message) must equal the one
computed in this process, bit for bit.

The last test installs calibr the way README's commands do (``pip install .``,
run, then an editable install) into a scratch virtual environment and checks
that no cache file ever lands in ``site-packages``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from site import getsitepackages

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

import compiled_paths
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(compiled_paths.__file__).resolve()
NAMES = list(compiled_paths.PATHS)


def _env(cache: Path | None, home: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    if home is not None:
        env["HOME"] = str(home)
        env.pop("XDG_CACHE_HOME", None)
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> dict:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), *args], env=env, cwd=cwd, capture_output=True,
        text=True, timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def _cache_files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def in_process() -> dict[str, str]:
    """Every path's outcome computed in this (the test) process."""
    return compiled_paths.run(NAMES)


def _sequence(cache: Path, groups: list[list[str]], results: dict, key: str) -> None:
    """Run the groups of paths one process each; collect the outcomes and, per
    kernel, the largest number of signatures any of the processes had."""
    env = _env(cache)
    values: dict[str, str] = {}
    signatures: dict[str, int] = {}
    try:
        for group in groups:
            report = _run(["--stats", *group], env)
            values.update(report["values"])
            for kernel, stats in report["stats"].items():
                signatures[kernel] = max(signatures.get(kernel, 0), stats["signatures"])
        results[key] = (values, signatures)
    except BaseException as exc:  # reported by the test thread
        results[key] = exc


def test_every_path_in_fresh_processes_in_two_orders_then_warm(tmp_path, in_process):
    # order 1: one process per path, in the registry's order; order 2: a seeded
    # shuffle, a few paths per process. Each order has its own fresh cache; the
    # two run side by side (two cores).
    shuffled = NAMES[:]
    random.Random(20261201).shuffle(shuffled)
    orders = {
        "one per process": [[name] for name in NAMES],
        "shuffled, grouped": [shuffled[i:i + 5] for i in range(0, len(shuffled), 5)],
    }
    caches = {key: tmp_path / f"cache{i}" for i, key in enumerate(orders)}
    results: dict = {}
    threads = [
        threading.Thread(target=_sequence, args=(caches[key], groups, results, key))
        for key, groups in orders.items()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key in orders:
        if isinstance(results[key], BaseException):
            raise results[key]
        got, signatures = results[key]
        diff = {n: (got[n], in_process[n]) for n in NAMES if got[n] != in_process[n]}
        assert not diff, f"{key}: outcomes differ from the in-process ones: {diff}"
        # the registry covers every compiled function (except those inlined into
        # their callers): each was compiled by some process of a cold sequence
        unreached = [k for k, count in signatures.items() if count == 0]
        assert not unreached, f"add a path to compiled_paths.py that reaches {unreached}"

    # a process that only loads: it compiles nothing and writes nothing
    warm = caches["one per process"]
    before = _cache_files(warm)
    assert any(name.endswith(".nbc") for name in before)
    report = _run(["--stats", "all"], _env(warm))
    assert report["values"] == in_process
    compiled = {k: v for k, v in report["stats"].items() if v["misses"]}
    assert not compiled, f"compiled although the cache was warm: {compiled}"
    assert _cache_files(warm) == before


def test_cache_lives_under_numba_cache_dir_and_never_beside_the_source(tmp_path):
    """With NUMBA_CACHE_DIR set, calibr's cache goes to $NUMBA_CACHE_DIR/calibr;
    nothing is written into the package directory."""
    before = {p for p in (ROOT / "calibr").rglob("*.nb[ic]")}
    _run(["ece_binary_int64", "skce_canonical_uq_median"], _env(tmp_path))
    assert list((tmp_path / "calibr").rglob("*.nbc"))
    assert {p for p in (ROOT / "calibr").rglob("*.nb[ic]")} == before == set()


_OWN_DIR = """
import json, os
from calibr._kernels import _jit, binned
print(json.dumps(_jit._subdir(binned.__file__)))
"""


def test_first_compilation_removes_the_stale_cache_directories_and_nothing_else(tmp_path):
    """A cold process removes, on its first compilation, the directories of this copy
    of calibr at other versions (both layouts) and those of copies that no longer
    exist; it keeps those of other existing copies, those it cannot attribute and
    anything not named like calibr's. A warm process removes nothing."""
    root = tmp_path / "calibr"
    out = subprocess.run([sys.executable, "-c", _OWN_DIR], env=_env(tmp_path), text=True,
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    own = json.loads(out.stdout)
    copy = own.split("-")[0]  # _kernels_<sha1 of the kernels' directory>
    other = "_kernels_" + "ab" * 20
    elsewhere = tmp_path / "another_copy" / "_kernels"
    elsewhere.mkdir(parents=True)

    def made(name: str, source: Path | None = None) -> Path:
        path = root / name
        path.mkdir(parents=True)
        (path / "x.nbi").write_bytes(b"old")
        if source is not None:
            (path / "source").write_text(f"{source}\n")
        return path

    stale = [made(copy + "-" + "0" * 16), made(copy),  # this copy, other versions
             made(other + "-" + "1" * 16, tmp_path / "uninstalled" / "_kernels")]
    kept = [made(other + "-" + "2" * 16, elsewhere), made(other),  # live, or not known
            made("_kernels_" + "cd" * 20 + "-" + "3" * 16),  # no source file
            made("notes"), made(copy + "-" + "4" * 15)]  # not calibr's names
    (root / (copy + "-" + "5" * 16 + ".txt")).write_text("a user's file")
    _run(["ece_binary_int64"], _env(tmp_path))
    assert not [p for p in stale if p.exists()]
    assert all((p / "x.nbi").read_bytes() == b"old" for p in kept)
    assert (root / (copy + "-" + "5" * 16 + ".txt")).read_text() == "a user's file"
    assert (root / own / "source").read_text().strip() == str(
        Path(compiled_paths.__file__).resolve().parents[1] / "calibr" / "_kernels")
    assert list((root / own).glob("*.nbc"))

    again = made(copy + "-" + "6" * 16)  # a warm process compiles nothing: removes nothing
    _run(["ece_binary_int64"], _env(tmp_path))
    assert (again / "x.nbi").exists()


def test_a_removed_cache_directory_does_not_break_a_running_process(tmp_path):
    """A process whose cache directory disappears (removed by a newer calibr) keeps
    computing: the load finds nothing and the save is skipped."""
    code = """
import json, shutil
import numpy as np
import calibr
from calibr._kernels import _jit
p = np.linspace(0, 1, 50); y = (p > 0.5).astype(np.int64)
a = calibr.ece(p, y)
shutil.rmtree(_jit.cache_dir())
b = calibr.skce(p, y, bandwidth=0.3)
print(json.dumps([a, b, _jit.cache_dir().exists()]))
"""
    out = subprocess.run([sys.executable, "-c", code], env=_env(tmp_path), text=True,
                         capture_output=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    a, b, exists = json.loads(out.stdout)
    import numpy as np

    import calibr

    p = np.linspace(0, 1, 50)
    y = (p > 0.5).astype(np.int64)
    assert [a, b] == [calibr.ece(p, y), calibr.skce(p, y, bandwidth=0.3)]
    assert not exists


def _copy_project(dest: Path) -> Path:
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "calibr", dest / "calibr",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nb[ic]"))
    return dest


def _scratch_venv(venv: Path) -> str:
    """A virtual environment that sees the packages of the interpreter running the
    tests (numba, pip, setuptools), and nothing else, behind its own site-packages.

    ``--system-site-packages`` would not do: from a venv's python it chains to the
    *base* interpreter's site-packages, not to the venv's, so the scratch venv would
    test whatever the base happens to hold. A ``.pth`` file in the scratch
    site-packages adds this interpreter's site directories instead (with their own
    ``.pth`` files, as ``site`` does for system site-packages). They come after the
    scratch site-packages on ``sys.path``, so a calibr that pip installs there comes
    first, ahead of the calibr under test (the test checks which one imports)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    site_dir = Path(subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    outer = [d for d in getsitepackages() if Path(d).is_dir()]
    (site_dir / "outer_site_packages.pth").write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in outer))
    return py


def _imported_calibr(py: str, env: dict[str, str], cwd: Path) -> Path:
    where = subprocess.run([py, "-c", "import calibr; print(calibr.__file__)"],
                           capture_output=True, text=True, env=env, cwd=cwd)
    assert where.returncode == 0, where.stderr
    return Path(where.stdout.strip())


def test_build_requirements_are_in_the_test_extra():
    """The install test below builds calibr without build isolation (no network
    inside the suite), so the test extra must install calibr's build requirements."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    name = re.compile(r"[A-Za-z0-9._-]+")
    extras = meta["project"]["optional-dependencies"]
    test_extra = {name.match(r).group().lower() for r in extras["test"]}
    build = {name.match(r).group().lower() for r in meta["build-system"]["requires"]}
    assert build <= test_extra, f"add {sorted(build - test_extra)} to the test extra"


def test_readme_install_sequence_leaves_nothing_pip_does_not_own(tmp_path):
    """README's commands in order: ``pip install .`` then ``calibr report``, then an
    editable install. No cache file may land in site-packages (pip would leave it
    behind, and the leftover directory would shadow the editable install).

    The scratch venv builds calibr from the packages of the interpreter under test
    (``--no-build-isolation --no-index``), so the test needs no network; README's
    ``pip install .`` itself, with build isolation, is what ``.ci/run`` runs."""
    src = _copy_project(tmp_path / "src")
    venv = tmp_path / "venv"
    py = _scratch_venv(venv)
    home = tmp_path / "home"
    home.mkdir()
    env = _env(None, home)
    env.pop("PYTHONPATH", None)  # the scratch venv imports what pip installed there
    pip = [py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    site = Path(subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())

    subprocess.run([*pip, str(src)], check=True, env=env, cwd=tmp_path)
    assert _imported_calibr(py, env, home) == site / "calibr" / "__init__.py"
    report = subprocess.run([str(venv / "bin" / "calibr"), "report", "--example", "breast_cancer"],
                            capture_output=True, text=True, env=env, cwd=home)
    assert report.returncode == 0, report.stderr
    assert not list((site / "calibr").rglob("*.nb[ic]")), "cache files in site-packages"
    assert list((home / ".cache" / "calibr").rglob("*.nbc")), "no cache in the user cache dir"

    subprocess.run([py, "-m", "pip", "uninstall", "-q", "-y", "calibr"], check=True, env=env)
    assert not (site / "calibr").exists(), "pip uninstall left site-packages/calibr behind"

    subprocess.run([*pip, "-e", str(src)], check=True, env=env, cwd=tmp_path)
    assert _imported_calibr(py, env, home) == src / "calibr" / "__init__.py"
    report = subprocess.run([str(venv / "bin" / "calibr"), "report", "--example", "breast_cancer"],
                            capture_output=True, text=True, env=env, cwd=home)
    assert report.returncode == 0, report.stderr
    assert "logistic" in report.stdout
