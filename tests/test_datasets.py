"""The bundled example data (made by scripts/make_example_data.py)."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
import pytest

import calibr
from calibr.datasets import DATASETS, load_breast_cancer_predictions, load_digits_predictions

MODELS = {"naive_bayes", "logistic", "random_forest"}
DIGIT_COLS = [f"p_{k}" for k in range(10)]


def test_files_are_package_data_and_small():
    total = 0
    for fname in DATASETS.values():
        ref = resources.files("calibr.datasets").joinpath("data", fname)
        assert ref.is_file()
        total += len(ref.read_bytes())
    assert total < 1_000_000


def test_breast_cancer_layout():
    df = load_breast_cancer_predictions()
    assert list(df.columns) == ["model", "fold", "id", "y", "p"]
    assert len(df) == 3 * 569
    assert set(df["model"]) == MODELS
    assert set(df["fold"]) == {1, 2, 3, 4, 5}
    assert set(df["y"]) == {0, 1}
    assert df["p"].between(0, 1).all()
    # every tumour once per model, the same fold and label for every model
    per_model = {m: g.set_index("id").sort_index() for m, g in df.groupby("model")}
    for g in per_model.values():
        assert list(g.index) == list(range(569))
        pd.testing.assert_series_equal(g["fold"], per_model["logistic"]["fold"])
        pd.testing.assert_series_equal(g["y"], per_model["logistic"]["y"])
    # scikit-learn's breast cancer data has 357 benign (y = 1) and 212 malignant
    assert (per_model["logistic"]["y"] == 1).sum() == 357


def test_digits_layout_and_row_sums():
    df = load_digits_predictions()
    assert list(df.columns) == ["model", "fold", "id", "y", *DIGIT_COLS]
    assert len(df) == 3 * 1797
    assert set(df["model"]) == MODELS
    assert set(df["y"]) == set(range(10))
    p = df[DIGIT_COLS].to_numpy()
    assert ((p >= 0) & (p <= 1)).all()
    assert np.abs(p.sum(axis=1) - 1).max() <= 1e-7  # 10 values rounded to 8 decimals


def test_loaders_return_fresh_frames():
    a = load_digits_predictions()
    a.loc[0, "p_0"] = -1.0
    assert load_digits_predictions().loc[0, "p_0"] >= 0


def test_models_calibrate_visibly_differently():
    """Naive Bayes is the worst calibrated on both data sets, logistic the best;
    naive Bayes is overconfident (most of its predictions at the extremes) and the
    forest underconfident on digits."""
    bc = load_breast_cancer_predictions()
    e = {m: calibr.ece(g["p"], g["y"]) for m, g in bc.groupby("model")}
    assert e["naive_bayes"] > e["random_forest"] > e["logistic"]

    dg = load_digits_predictions()
    conf = {}
    for m, g in dg.groupby("model"):
        conf[m] = calibr.ece(g[DIGIT_COLS], g["y"], type="confidence", classes=range(10))
    assert conf["naive_bayes"] > 2 * conf["logistic"]
    assert conf["random_forest"] > 2 * conf["logistic"]
    top = {m: g[DIGIT_COLS].max(axis=1) for m, g in dg.groupby("model")}
    acc = {
        m: (g[DIGIT_COLS].to_numpy().argmax(axis=1) == g["y"].to_numpy()).mean()
        for m, g in dg.groupby("model")
    }
    assert top["naive_bayes"].mean() > acc["naive_bayes"] + 0.1  # overconfident
    assert top["random_forest"].mean() < acc["random_forest"] - 0.1  # underconfident


@pytest.mark.parametrize("loader", [load_breast_cancer_predictions, load_digits_predictions])
def test_no_missing_values(loader):
    assert not loader().isna().any().any()
