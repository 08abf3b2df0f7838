"""Shared fixtures.

Live R parity tests use the ``rref`` fixture (the R reference package in
``r_reference/`` driven through rpy2). On a machine without R they skip; with
``CALIBR_REQUIRE_R=1`` (set by ``.ci/run``) a missing R, rpy2 or R package is a
failure instead, so a CI run can never pass by skipping the parity tests.
The same holds for the torchmetrics comparisons and ``CALIBR_REQUIRE_TORCH=1``.
"""

from __future__ import annotations

import os

import pytest

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
