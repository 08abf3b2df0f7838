"""Shared fixtures.

Live R parity tests use the ``rref`` fixture (the R reference package in
``r_reference/`` driven through rpy2). On a machine without R they skip; with
``CALIBR_REQUIRE_R=1`` (set by ``.ci/run``) a missing R, rpy2 or R package is a
failure instead, so a CI run can never pass by skipping the parity tests.
The same holds for the torchmetrics comparisons and ``CALIBR_REQUIRE_TORCH=1``.

The other optional packages of the tests (matplotlib, pyarrow: both in the
``test`` extra, so CI has them) and anything else a test needs from the machine
go through :func:`require` and :func:`unavailable`: a skip on a developer's
machine, a failure when either CI variable is set. So no test can skip in CI.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pandas as pd
import pytest

#: The variables that .ci/run sets: with either of them, a skip is a failure.
CI_VARIABLES = ("CALIBR_REQUIRE_R", "CALIBR_REQUIRE_TORCH")

#: LD_LIBRARY_PATH before anything started embedded R (see _restore_library_path).
_ORIGINAL_LD_LIBRARY_PATH = os.environ.get("LD_LIBRARY_PATH")


def _restore_library_path() -> None:
    """Undo embedded R's change of LD_LIBRARY_PATH, in os.environ and in the C
    environment that subprocesses inherit.

    rpy2 and R put R's and the system's library folders first; a Python started
    afterwards by a test then loads the wrong libpython and cannot import numpy.
    R's own libraries are loaded by then, so the original value is restored.
    """
    if _ORIGINAL_LD_LIBRARY_PATH is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
        os.unsetenv("LD_LIBRARY_PATH")
    else:
        os.environ["LD_LIBRARY_PATH"] = _ORIGINAL_LD_LIBRARY_PATH


def _required(var: str) -> bool:
    return os.environ.get(var, "").strip().lower() not in ("", "0", "false", "no")


def in_ci() -> bool:
    """Is a CI variable set (``.ci/run`` sets both)?"""
    return any(_required(var) for var in CI_VARIABLES)


def unavailable(reason: str) -> None:
    """Skip the test (or the module, at import) for ``reason``, or fail it in CI."""
    if in_ci():
        set_vars = " / ".join(var for var in CI_VARIABLES if _required(var))
        pytest.fail(f"{reason} ({set_vars} is set, so this is a failure, not a skip)",
                    pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require(name: str) -> ModuleType:
    """``import name``: an optional package of the tests (the ``test`` extra), or
    :func:`unavailable` (a skip on a developer's machine, a failure in CI).

    Unlike ``pytest.importorskip``, this never lets a CI run pass by skipping.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        unavailable(f"{name} is not installed ({exc}); pip install -e '.[test]' installs it")
        raise  # pragma: no cover - unavailable() raised


@pytest.fixture(scope="session")
def rref():
    """The R reference implementation (see ``tests/rref.py``)."""
    try:
        import rref as _rref

        loaded = _rref.load()
        _restore_library_path()
        return loaded
    except Exception as exc:  # noqa: BLE001 - any failure to load R is reported alike
        msg = f"R reference not available: {type(exc).__name__}: {exc}"
        if _required("CALIBR_REQUIRE_R"):
            pytest.fail(msg + " (CALIBR_REQUIRE_R is set, so this is a failure)")
        pytest.skip(msg)


@pytest.fixture(scope="session")
def torchmetrics_mod():
    """torchmetrics itself, or a skip (a failure under CALIBR_REQUIRE_TORCH)."""
    try:
        import torch  # noqa: F401
        import torchmetrics

        return torchmetrics
    except Exception as exc:  # noqa: BLE001
        msg = f"torchmetrics not available: {type(exc).__name__}: {exc}"
        if _required("CALIBR_REQUIRE_TORCH"):
            pytest.fail(msg + " (CALIBR_REQUIRE_TORCH is set, so this is a failure)")
        pytest.skip(msg)


def layout(df: pd.DataFrame, keys: list) -> dict:
    """What a layout snapshot (pytest-regressions' ``data_regression``) holds: the
    column names and dtypes, and the key columns row by row (the group order),
    one line per row (``"logistic, 3"``; the dtypes say what the keys are).

    Never a computed number: the numbers of the bundled data are R's, compared in
    tests/test_bundled_r.py, so that ``--force-regen`` can only ever accept a
    change of layout.
    """
    return {
        "columns": [str(c) for c in df.columns],
        "dtypes": [str(t) for t in df.dtypes],
        "keys": [", ".join(map(str, row)) for row in df[keys].itertuples(index=False)],
    }


@pytest.fixture(scope="session")
def spark_session():
    """The suite's one SparkSession (local[2], UI off, two shuffle partitions,
    UTC, no adaptive execution), started on first use and stopped at the end of the session:
    tests/test_engines_spark.py and tests/test_hostile_frames.py share it."""
    import warnings

    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName("calibr-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               # adaptive query execution re-plans each small query: a third of the
               # time of tests/test_hostile_frames.py on Spark, and nothing to adapt
               .config("spark.sql.adaptive.enabled", "false"))
    with warnings.catch_warnings():
        # pyspark's own warning at the session's start, the user's code, not calibr's
        # (calibr/_engines/spark.py says why calibr ignores it in its own calls)
        warnings.filterwarnings("ignore", message=r"PySpark does not yet fully support pandas",
                                category=FutureWarning)
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
