"""calibr against the committed R reference data.

The numbers in tests/data/r_reference/reference.csv were made by
r_reference/make_reference.R (R package calibrRef) from the committed inputs in
tests/data/r_reference/inputs/, written by r_reference/make_inputs.R; R version,
seeds and checksums are in tests/data/r_reference/PROVENANCE.md. They are data
from R: never regenerate them from Python.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tolerances import R_ATOL, R_RTOL, SKCE_ATOL, SKCE_RTOL

import calibr

DATA = Path(__file__).parent / "data" / "r_reference"
REFERENCE = pd.read_csv(DATA / "reference.csv", keep_default_na=False, dtype=str)

#: mmce = sqrt(biased SKCE): an absolute error e in the SKCE near 0 becomes sqrt(e)
MMCE_ATOL = 1e-8

MEDIAN_PREFIX = '`bandwidth = "median"` needs at least two distinct predictions'
CLASSWISE_MEDIAN = (
    r'`bandwidth = "median"` with `type = "classwise"` needs at least two distinct '
    r"predictions in every column of `p`; the column of class \d+ has all its values "
    r"equal \([0-9.e-]+\)\."
)


@cache
def _case(name: str):
    # read as text and convert with Python's correctly rounded float(): bit-exact
    df = pd.read_csv(DATA / "inputs" / f"{name}.csv", dtype=str).map(float)
    y = df["y"].to_numpy(np.int64)
    pcols = [c for c in df.columns if c != "y"]
    p = df[pcols[0]].to_numpy() if pcols == ["p"] else df[pcols].to_numpy()
    return p, y


def _call(row):
    p, y = _case(row["case"])
    metric = getattr(calibr, row["metric"])
    if row["metric"] in ("ece", "mce"):
        return metric(p, y, bins=int(row["bins"]), type=row["type"])
    bw = row["bandwidth"] if row["bandwidth"] == "median" else float(row["bandwidth"])
    if row["metric"] == "mmce":
        return metric(p, y, bandwidth=bw)
    return metric(p, y, estimator=row["estimator"], bandwidth=bw, type=row["type"])


def _rows(metrics):
    sub = REFERENCE[REFERENCE["metric"].isin(metrics)]
    return [pytest.param(r, id="-".join(v for v in r.values() if v and len(v) < 40))
            for r in sub.drop(columns=["value"]).assign(value=sub["value"]).to_dict("records")]


def _compare(row, rtol, atol):
    if row["error"]:  # calibr reproduces R's message word for word ...
        with pytest.raises(calibr.InputError) as info:
            _call(row)
        classwise = row["type"] == "classwise" and _case(row["case"])[0].ndim == 2
        if classwise and row["bandwidth"] == "median" and "distinct" in row["error"]:
            # ... except that it names the constant column (R's message does not)
            assert row["error"].startswith(MEDIAN_PREFIX)
            assert re.fullmatch(CLASSWISE_MEDIAN, str(info.value)), str(info.value)
        else:
            assert str(info.value) == row["error"]
        return
    got = _call(row)
    assert got == pytest.approx(float(row["value"]), rel=rtol, abs=atol)


def test_reference_data_is_complete():
    assert set(REFERENCE["metric"]) == {"ece", "mce", "skce", "mmce"}
    assert len(REFERENCE) > 2000
    assert (REFERENCE["value"] != "").sum() + (REFERENCE["error"] != "").sum() == len(REFERENCE)


@pytest.mark.parametrize("row", _rows(["ece", "mce"]))
def test_binned_against_committed_r_data(row):
    _compare(row, R_RTOL, R_ATOL)


@pytest.mark.parametrize("row", _rows(["skce"]))
def test_skce_against_committed_r_data(row):
    _compare(row, SKCE_RTOL, SKCE_ATOL)


@pytest.mark.parametrize("row", _rows(["mmce"]))
def test_mmce_against_committed_r_data(row):
    _compare(row, SKCE_RTOL, MMCE_ATOL)
