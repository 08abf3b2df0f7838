"""calibr's numbers on its bundled example data, against R.

``tests/data/r_reference/bundled_summary.csv`` and ``bundled_tables.csv`` were
made by ``r_reference/make_reference.R`` (the section "the bundled example
data"): per model, calibrRef's ``ece()``/``mce()``, calibrRef's bin table, and
R's ``prop.test(x, n, conf.level = level, correct = FALSE)`` for the interval
of each bin's observed frequency. Provenance (R version, checksums of the data
files): ``tests/data/r_reference/PROVENANCE.md``. Never regenerate them from
Python.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tolerances import R_ATOL, R_RTOL

import calibr
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions

DATA = Path(__file__).parent / "data" / "r_reference"
SUMMARY = pd.read_csv(DATA / "bundled_summary.csv", dtype={"value": str})
TABLES = pd.read_csv(DATA / "bundled_tables.csv", keep_default_na=False, dtype=str)

LOADERS = {"breast_cancer": load_breast_cancer_predictions, "digits": load_digits_predictions}
COLUMNS = {"breast_cancer": {"p": "p"}, "digits": {"p_prefix": "p_"}}


def _float(col: pd.Series) -> np.ndarray:
    return np.array([float(v) for v in col])  # Python's correctly rounded parse


def test_the_reference_covers_both_data_sets_every_model():
    for data, loader in LOADERS.items():
        models = set(loader()["model"])
        assert set(SUMMARY.loc[SUMMARY["data"] == data, "model"]) == models
        assert set(TABLES.loc[TABLES["data"] == data, "model"]) == models


@pytest.mark.parametrize(
    "key", sorted(SUMMARY.groupby(["data", "metric", "type", "bins"]).groups), ids=str
)
def test_summarise_equals_r(key):
    data, metric, type_, bins = key
    want = SUMMARY.groupby(["data", "metric", "type", "bins"]).get_group(key)
    got = calibr.summarise(
        LOADERS[data]().groupby("model"), y="y", **COLUMNS[data],
        value=calibr.metric(metric, bins=int(bins), type=type_),
    )
    merged = got.merge(want, on="model", suffixes=("", "_r"))
    assert len(merged) == len(want) == len(got)
    np.testing.assert_allclose(merged["value"], _float(merged["value_r"]), rtol=R_RTOL,
                               atol=R_ATOL)


@pytest.mark.parametrize(
    "key", sorted(TABLES.groupby(["data", "type", "bins", "level"]).groups), ids=str
)
def test_calibration_table_equals_r(key):
    data, type_, bins, level = key
    want = TABLES.groupby(["data", "type", "bins", "level"]).get_group(key)
    got = calibr.calibration_table(
        y="y", data=LOADERS[data]().groupby("model"), bins=int(bins), type=type_,
        confidence_level=float(level), **({"p": "p"} if data == "breast_cancer" else {"p": None,
                                                                               "p_prefix": "p_"}),
    )
    assert len(got) == len(want)
    keys = ["model", "bin"] + (["class"] if "class" in got else [])
    got = got.assign(**({"class": got["class"].astype(str)} if "class" in got else {}))
    want = want.assign(bin=want["bin"].astype(int))
    merged = got.merge(want, on=keys, suffixes=("", "_r"), validate="one_to_one")
    assert len(merged) == len(want)
    np.testing.assert_array_equal(merged["n"], merged["n_r"].astype(int))
    for col in ("lower", "upper", "mean_confidence", "observed_frequency", "gap", "ci_lower",
                "ci_upper"):
        np.testing.assert_allclose(merged[col], _float(merged[f"{col}_r"]), rtol=R_RTOL,
                                   atol=R_ATOL, err_msg=col)
