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


def _required(var: str) -> bool:
    return os.environ.get(var, "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def rref():
    """The R reference implementation (see ``tests/rref.py``)."""
    try:
        import rref as _rref

        return _rref.load()
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
