"""calibr against netcal's ECE, through numbers netcal itself made
(tests/data/netcal_reference, made by scripts/make_netcal_reference.py with
netcal 1.4.0; PROVENANCE.md there): netcal's convention is left-closed
equal-width bins with 1 in the last bin, i.e. ``right=False``
(docs/conventions.md), and the top-label confidence for a probability matrix."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path

import pytest

import calibr

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "netcal_reference" / "netcal_ece.csv"


def _script():
    spec = importlib.util.spec_from_file_location(
        "make_netcal_reference", ROOT / "scripts" / "make_netcal_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows():
    with open(DATA, newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_case_of_the_script_is_in_the_reference():
    script = _script()
    got = {(r["kind"], int(r["n"]), int(r["k"]), int(r["bins"]), int(r["seed"]))
           for r in _rows()}
    assert got == set(script.CASES)


@pytest.mark.parametrize("row", _rows(), ids=lambda r: "-".join(
    r[c] for c in ("kind", "n", "k", "bins", "seed")))
def test_ece_with_right_false_is_netcal_s(row):
    script = _script()
    p, y = script.case_data(row["kind"], int(row["n"]), int(row["k"]), int(row["seed"]))
    kw = {"type": "confidence", "classes": range(p.shape[1])} if p.ndim == 2 else {}
    got = calibr.ece(p, y, int(row["bins"]), right=False, **kw)
    want = float(row["netcal_ece"])
    # netcal clips confidences to [eps, 1 - eps] first: a difference of rounding
    assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-14), (got, want)
