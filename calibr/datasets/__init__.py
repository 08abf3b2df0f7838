"""Example data: predictions of real classifiers on real data sets.

Both data sets hold out-of-fold predicted probabilities (5-fold stratified
cross-validation with a fixed seed, the same folds for every model) of three
scikit-learn classifiers whose calibration differs visibly:

- ``"naive_bayes"``: Gaussian naive Bayes (overconfident);
- ``"logistic"``: standardised logistic regression (close to calibrated);
- ``"random_forest"``: a random forest of 200 trees (underconfident).

They were made by ``scripts/make_example_data.py`` in the calibr repository
(scikit-learn 1.9.1; the script records the versions and the seed) from the
breast cancer and digits data sets that ship with scikit-learn. The files are
plain CSV, shipped inside the package; loading them needs only pandas (imported
by the loaders, not by ``import calibr.datasets``).
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DATASETS", "load_breast_cancer_predictions", "load_digits_predictions"]

#: Names of the bundled data sets and the file of each.
DATASETS = {
    "breast_cancer": "breast_cancer_predictions.csv",
    "digits": "digits_predictions.csv",
}

_MODELS = ["naive_bayes", "logistic", "random_forest"]


def _read(name: str) -> pd.DataFrame:
    import pandas as pd  # here, so that importing calibr.datasets stays cheap

    ref = resources.files(__name__).joinpath("data", DATASETS[name])
    with ref.open("rb") as fh:
        df = pd.read_csv(fh)
    # model as a plain string column in the order of the file (a fresh frame every call)
    df["model"] = df["model"].astype(str)
    return df


def load_breast_cancer_predictions() -> pd.DataFrame:
    """Out-of-fold predictions of three classifiers on the breast cancer data.

    The Wisconsin diagnostic breast cancer data set of scikit-learn (569
    tumours, 30 features; binary), with the predictions of three classifiers
    in long format: one row per model and tumour (1707 rows).

    Returns
    -------
    pandas.DataFrame
        Columns:

        - ``model`` (str): ``"naive_bayes"``, ``"logistic"`` or ``"random_forest"``;
        - ``fold`` (int): the cross-validation fold (1..5) that held the row out;
        - ``id`` (int): the row of ``sklearn.datasets.load_breast_cancer()``;
        - ``y`` (int): scikit-learn's target, 1 = benign, 0 = malignant;
        - ``p`` (float): the predicted probability that ``y == 1`` (benign),
          rounded to 8 decimals.

        A fresh DataFrame on every call.

    See Also
    --------
    load_digits_predictions : the multiclass example.

    Examples
    --------
    >>> import calibr
    >>> from calibr.datasets import load_breast_cancer_predictions
    >>> df = load_breast_cancer_predictions()
    >>> df.shape
    (1707, 5)
    >>> sorted(df["model"].unique())
    ['logistic', 'naive_bayes', 'random_forest']
    >>> nb = df[df["model"] == "naive_bayes"]
    >>> lr = df[df["model"] == "logistic"]
    >>> calibr.ece(nb["p"], nb["y"]) > calibr.ece(lr["p"], lr["y"])
    True
    """
    return _read("breast_cancer")


def load_digits_predictions() -> pd.DataFrame:
    """Out-of-fold predictions of three classifiers on the digits data (10 classes).

    The optical recognition of handwritten digits data set of scikit-learn
    (1797 images of 8x8 pixels; classes 0..9), with the predicted class
    probabilities of three classifiers in long format: one row per model and
    image (5391 rows).

    Returns
    -------
    pandas.DataFrame
        Columns:

        - ``model`` (str): ``"naive_bayes"``, ``"logistic"`` or ``"random_forest"``;
        - ``fold`` (int): the cross-validation fold (1..5) that held the row out;
        - ``id`` (int): the row of ``sklearn.datasets.load_digits()``;
        - ``y`` (int): the true digit, 0..9;
        - ``p_0`` ... ``p_9`` (float): the predicted probability of each digit,
          rounded to 8 decimals; each row sums to 1 within 1e-7.

        A fresh DataFrame on every call.

    Notes
    -----
    The labels are 0-based digits, while a bare probability matrix reads
    integer labels as R's 1-based codes. Name the classes explicitly, e.g.
    ``calibr.ece(df[cols], df["y"], classes=range(10))``, or use
    :func:`calibr.summarise` with ``p_prefix="p_"``, which matches the label 3
    to the column ``p_3``.

    See Also
    --------
    load_breast_cancer_predictions : the binary example.

    Examples
    --------
    >>> import calibr
    >>> from calibr.datasets import load_digits_predictions
    >>> df = load_digits_predictions()
    >>> df.shape
    (5391, 14)
    >>> cols = [f"p_{k}" for k in range(10)]
    >>> lr = df[df["model"] == "logistic"]
    >>> round(calibr.ece(lr[cols], lr["y"], type="confidence", classes=range(10)), 4)
    0.0185
    """
    return _read("digits")
