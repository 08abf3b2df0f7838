"""Make calibr's bundled example data: real classifiers on real scikit-learn data sets.

Run from the repository root::

    pip install scikit-learn
    python scripts/make_example_data.py

It writes ``calibr/datasets/data/breast_cancer_predictions.csv`` and
``calibr/datasets/data/digits_predictions.csv``: out-of-fold predicted
probabilities of three classifiers (5-fold stratified cross-validation,
shuffled with a fixed seed, the same folds for every model) on the breast
cancer (binary) and digits (10 classes) data sets that ship with
scikit-learn. The models calibrate visibly differently:

- ``naive_bayes``: Gaussian naive Bayes, strongly overconfident (its
  probabilities pile up at 0 and 1);
- ``logistic``: standardised logistic regression, close to calibrated;
- ``random_forest``: a random forest (200 trees), underconfident (its
  probabilities shy away from 0 and 1).

Made with (recorded by hand from the run that produced the committed files):
Python 3.11.7, scikit-learn 1.9.1, numpy 2.4.6, pandas 3.1.1, seed 20240601.
Other scikit-learn versions may give slightly different numbers.

Probabilities are rounded to 8 decimals (written as the shortest decimal
string of the rounded double). Rows of the multiclass file then sum to 1
within 10 * 0.5e-8 = 5e-8, well inside the 1e-6 that calibr accepts; the
script checks this (and that every value is in [0, 1]) after reading the
written files back, and fails otherwise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

SEED = 20240601
N_FOLDS = 5
DECIMALS = 8
ROW_SUM_TOL = 1e-6  # what calibr's input validation accepts
OUT = Path(__file__).resolve().parent.parent / "calibr" / "datasets" / "data"


def _models() -> dict:
    return {
        "naive_bayes": GaussianNB(),
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000)),
        "random_forest": RandomForestClassifier(n_estimators=200, random_state=SEED, n_jobs=1),
    }


def _out_of_fold(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Fold number (1-based) of each row and each model's out-of-fold probabilities."""
    folds = np.zeros(len(y), dtype=np.int64)
    probs = {name: np.full((len(y), len(np.unique(y))), np.nan) for name in _models()}
    cv = StratifiedKFold(n_splits=N_FOLDS, shuffle=True, random_state=SEED)
    for fold, (train, test) in enumerate(cv.split(x, y), start=1):
        folds[test] = fold
        for name, model in _models().items():
            model.fit(x[train], y[train])
            probs[name][test] = model.predict_proba(x[test])
    for name, pr in probs.items():
        if np.isnan(pr).any():
            raise RuntimeError(f"{name}: some rows got no out-of-fold prediction")
    return folds, probs


def _long(folds, y, probs, columns) -> pd.DataFrame:
    parts = []
    for name, pr in probs.items():
        part = pd.DataFrame({"model": name, "fold": folds, "id": np.arange(len(y)), "y": y})
        rounded = np.round(pr, DECIMALS)
        for j, col in enumerate(columns):
            part[col] = rounded[:, j]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _check(path: Path, pcols: list[str], multiclass: bool) -> None:
    df = pd.read_csv(path)
    p = df[pcols].to_numpy(dtype=np.float64)
    if not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError(f"{path.name}: probabilities outside [0, 1]")
    if multiclass:
        dev = np.abs(p.sum(axis=1) - 1.0).max()
        if dev > ROW_SUM_TOL:
            raise RuntimeError(f"{path.name}: a row sums to 1 only within {dev:.3g}")
        print(f"{path.name}: largest |row sum - 1| = {dev:.3g}")
    print(f"{path.name}: {len(df)} rows, {path.stat().st_size} bytes")


def main() -> None:
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, pandas {pd.__version__}")
    OUT.mkdir(parents=True, exist_ok=True)

    # Breast cancer: binary. y is scikit-learn's target (1 = benign, 0 = malignant);
    # p is the predicted probability of y = 1.
    bc = load_breast_cancer()
    folds, probs = _out_of_fold(bc.data, bc.target)
    df = _long(folds, bc.target, {k: v[:, 1:] for k, v in probs.items()}, ["p"])
    path = OUT / "breast_cancer_predictions.csv"
    df.to_csv(path, index=False)
    _check(path, ["p"], multiclass=False)

    # Digits: 10 classes, labels 0..9; column p_k is the probability of digit k.
    dg = load_digits()
    folds, probs = _out_of_fold(dg.data, dg.target)
    cols = [f"p_{k}" for k in range(10)]
    df = _long(folds, dg.target, probs, cols)
    path = OUT / "digits_predictions.csv"
    df.to_csv(path, index=False)
    _check(path, cols, multiclass=True)


if __name__ == "__main__":
    main()
