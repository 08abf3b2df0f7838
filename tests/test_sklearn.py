"""calibr.sklearn: registry metrics as scikit-learn scorers (docs/tools.md).

Every number is checked against the metric called by hand on the fold's
``predict_proba`` of the very estimator scikit-learn fitted (``return_estimator``,
``return_indices``), with the labels turned into 0/1 or column positions by hand,
so the scorer's column choice, label mapping, sign and weights are each checked
independently of the scorer's code.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import calibr
from calibr import InputError
from calibr._registry import METRICS
from calibr.sklearn import SCORERS, get_scorer, make_scorer

ROOT = Path(__file__).resolve().parents[1]
CV = KFold(3, shuffle=True, random_state=0)


def _data(k: int = 2, n: int = 240, labels=None):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_classes=k,
                               random_state=1)
    return X, (y if labels is None else np.asarray(labels)[y])


def _folds(est, X, y, scoring, **kw):
    out = cross_validate(est, X, y, cv=CV, scoring=scoring, return_estimator=True,
                         return_indices=True, **kw)
    return out, list(zip(out["estimator"], out["indices"]["test"], strict=True))


def _codes(model, y):
    """The position of each label in the estimator's classes_, by hand."""
    return np.array([list(model.classes_).index(v) for v in y])


@pytest.mark.parametrize("labels", [None, ["no", "yes"], [3, 7]], ids=["01", "str", "int"])
@pytest.mark.parametrize("est", [LogisticRegression(),
                                 GradientBoostingClassifier(n_estimators=20, random_state=0)],
                         ids=["logreg", "gbm"])
def test_binary_scores_are_minus_the_metric_on_the_positive_column(est, labels):
    X, y = _data(2, labels=labels)
    out, folds = _folds(est, X, y, {"ece": make_scorer("ece", bins=10),
                                    "mce": make_scorer("mce", bins=5)})
    for i, (model, test) in enumerate(folds):
        p = model.predict_proba(X[test])[:, 1]
        y01 = _codes(model, y[test])  # 1 for classes_[1], the positive class
        assert out["test_ece"][i] == -calibr.ece(p, y01, bins=10)
        assert out["test_mce"][i] == -calibr.mce(p, y01, bins=5)
        assert out["test_ece"][i] < 0


@pytest.mark.parametrize("labels", [None, ["ant", "bee", "cat"]], ids=["int", "str"])
@pytest.mark.parametrize("est", [LogisticRegression(),
                                 GradientBoostingClassifier(n_estimators=20, random_state=0)],
                         ids=["logreg", "gbm"])
def test_multiclass_scores_are_minus_the_metric_on_the_matrix(est, labels):
    X, y = _data(3, labels=labels)
    out, folds = _folds(est, X, y, {"ece": make_scorer("ece", bins=10, type="confidence"),
                                    "cw": make_scorer("calibration_error", norm="l1")})
    for i, (model, test) in enumerate(folds):
        P = model.predict_proba(X[test])
        codes = _codes(model, y[test])
        assert out["test_ece"][i] == -calibr.ece(P, codes, bins=10, type="confidence",
                                                 classes=range(3))
        assert out["test_cw"][i] == -calibr.calibration_error(P, codes, norm="l1",
                                                              classes=range(3))


@pytest.mark.parametrize("name", list(METRICS))
def test_every_registry_metric_scores_minus_its_value(name):
    """An error or a loss scores minus its value, by the name ``neg_<metric>``; a
    metric the registry says is better larger (auroc, selective_accuracy) scores its
    value, by its own name, as scikit-learn's ``roc_auc``."""
    X, y = _data(2, n=150, labels=["no", "yes"])
    model = LogisticRegression().fit(X[:100], y[:100])
    p = model.predict_proba(X[100:])[:, 1]
    value = METRICS[name].function(p, _codes(model, y[100:]))
    higher = METRICS[name].higher_is_better
    want = value if higher else -value
    assert make_scorer(name)(model, X[100:], y[100:]) == want
    assert get_scorer(name if higher else f"neg_{name}")(model, X[100:], y[100:]) == want
    assert higher == (name in ("auroc", "selective_accuracy"))


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_sklearn_proposal_names_are_calibration_error_with_that_norm(norm):
    X, y = _data(3)
    model = LogisticRegression().fit(X[:160], y[:160])
    want = -calibr.calibration_error(model.predict_proba(X[160:]), y[160:], norm=norm,
                                    classes=range(3))
    assert get_scorer(f"neg_{norm}_calibration_error")(model, X[160:], y[160:]) == want
    assert SCORERS[f"neg_{norm}_calibration_error"] == ("calibration_error", {"norm": norm})
    # the norms differ, so a wrong norm could not pass
    others = {n: get_scorer(f"neg_{n}_calibration_error")(model, X[160:], y[160:])
              for n in ("l1", "l2", "max")}
    assert len(set(others.values())) == 3


def test_grid_search_picks_the_parameters_of_a_hand_loop():
    X, y = _data(2, n=300, labels=["no", "yes"])
    grid = [0.001, 0.03, 1.0, 100.0]
    cv = StratifiedKFold(4, shuffle=True, random_state=2)
    search = GridSearchCV(LogisticRegression(), {"C": grid}, cv=cv,
                          scoring=make_scorer("ece", bins=8)).fit(X, y)
    means = []
    for c in grid:
        fold_scores = []
        for train, test in cv.split(X, y):
            m = LogisticRegression(C=c).fit(X[train], y[train])
            fold_scores.append(-calibr.ece(m.predict_proba(X[test])[:, 1],
                                           (y[test] == "yes").astype(int), bins=8))
        means.append(np.mean(fold_scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], means, rtol=1e-14)
    assert search.best_params_ == {"C": grid[int(np.argmax(means))]}
    assert len(set(np.round(means, 10))) == len(grid)  # distinct: the pick is meaningful


def test_pipeline_and_logistic_regression_cv():
    X, y = _data(3, labels=["ant", "bee", "cat"])
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    out, folds = _folds(pipe, X, y, make_scorer("mce", bins=4))
    for i, (model, test) in enumerate(folds):
        assert out["test_score"][i] == -calibr.mce(model.predict_proba(X[test]),
                                                   _codes(model, y[test]), bins=4,
                                                   classes=range(3))
    # LogisticRegressionCV scores its own path fits with the scorer (the same numbers
    # for every class) and keeps the C of the largest mean score: the least ECE
    lrcv = LogisticRegressionCV(Cs=[0.01, 1.0], cv=CV, l1_ratios=(0.0,),
                                use_legacy_attributes=True,
                                scoring=make_scorer("ece", bins=5)).fit(X, y)
    scores = lrcv.scores_["ant"][:, :, 0]  # (folds, Cs)
    assert (scores < 0).all()
    assert lrcv.C_[0] == [0.01, 1.0][int(np.argmax(scores.mean(axis=0)))]


def test_sample_weight_is_routed_to_weights():
    X, y = _data(2, labels=["no", "yes"])
    w = np.random.default_rng(0).integers(1, 5, len(y)).astype(float)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_scorer("ece", bins=10).set_score_request(sample_weight=True)
        est = LogisticRegression().set_fit_request(sample_weight=False)
        out, folds = _folds(est, X, y, scorer, params={"sample_weight": w})
    for i, (model, test) in enumerate(folds):
        p, y01 = model.predict_proba(X[test])[:, 1], _codes(model, y[test])
        assert out["test_score"][i] == -calibr.ece(p, y01, bins=10, weights=w[test])
        # whole-number weights are repeated rows (docs/conventions.md): by hand
        assert out["test_score"][i] == pytest.approx(
            -calibr.ece(np.repeat(p, w[test].astype(int)),
                        np.repeat(y01, w[test].astype(int)), bins=10), abs=1e-15)
        assert out["test_score"][i] != -calibr.ece(p, y01, bins=10)


def test_a_metric_without_weights_refuses_a_routed_sample_weight():
    X, y = _data(2)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = get_scorer("neg_l1_calibration_error").set_score_request(sample_weight=True)
        model = LogisticRegression().fit(X, y)
        with pytest.raises(InputError, match="'calibration_error' takes no weights") as e:
            scorer(model, X, y, sample_weight=np.ones(len(y)))
    assert e.value.param == "sample_weight"


def test_no_predict_proba_is_sklearns_error():
    X, y = _data(2)
    with pytest.raises(AttributeError, match="SVC has none of the following attributes: "
                                             "predict_proba"):
        make_scorer("ece")(SVC().fit(X, y), X, y)


def test_labels_the_estimator_lacks_are_an_input_error_naming_classes():
    X, y = _data(3, labels=["ant", "bee", "cat"])
    model = LogisticRegression().fit(X[y != "cat"], y[y != "cat"])  # never saw 'cat'
    with pytest.raises(InputError, match=r"The labels of y_true cannot be matched to the "
                                         r"estimator's `classes` \('ant', 'bee'\): `y` must "
                                         r"be one of the class labels") as e:
        make_scorer("ece")(model, X, y)
    assert e.value.param == "classes"
    assert "cat" in str(e.value)


class _NoClasses(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)


def test_an_estimator_without_classes_is_an_input_error_naming_classes():
    X, y = _data(2)
    with pytest.raises(InputError, match="from the estimator's `classes_`, which _NoClasses "
                                         "does not have") as e:
        make_scorer("ece")(_NoClasses().fit(X, y), X, y)
    assert e.value.param == "classes"


def test_make_scorer_refuses_bad_names_and_options():
    with pytest.raises(InputError, match="`metric` must name a calibr metric .*got 'ECE'"):
        make_scorer("ECE")
    for data_arg in ("classes", "weights", "na_rm", "sample_weight", "p"):
        with pytest.raises(InputError, match=f"The option '{data_arg}' of a scorer is set "
                                             "from the estimator and the data") as e:
            make_scorer("ece", **{data_arg: None})
        assert e.value.param == data_arg
    with pytest.raises(InputError, match="The metric 'ece' has no option 'norm'; its options "
                                         "are bins, type, binning, right"):
        make_scorer("ece", norm="l1")
    with pytest.raises(InputError, match="`name` must be one of calibr's scorers .*got 'ece'"):
        get_scorer("ece")


def test_scorer_names_cover_the_registry():
    assert {m if i.higher_is_better else f"neg_{m}" for m, i in METRICS.items()} <= set(SCORERS)
    assert {"neg_l1_calibration_error", "neg_l2_calibration_error",
            "neg_max_calibration_error"} <= set(SCORERS)


def test_the_scorer_is_sklearns_with_its_sign():
    scorer = make_scorer("ece", bins=15)
    assert scorer._response_method == "predict_proba"
    assert scorer._sign == -1
    assert repr(scorer) == ("make_scorer(ece, greater_is_better=False, "
                            "response_method='predict_proba', bins=15)")
    assert clone(LogisticRegression()) is not None  # clone untouched by the import


def test_a_fitted_search_with_a_scorer_pickles():
    X, y = _data(2, labels=["no", "yes"])
    search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=CV,
                          scoring=make_scorer("ece", bins=10)).fit(X, y)
    again = pickle.loads(pickle.dumps(search))
    assert again.score(X, y) == search.score(X, y) == make_scorer("ece", bins=10)(
        search.best_estimator_, X, y)


def test_docs_tools_python_blocks_run_and_print_what_the_page_shows(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_vignettes import run_python
    finally:
        sys.path.remove(str(ROOT / "tests"))
    namespace = run_python(ROOT / "docs" / "tools.md", tmp_path)
    assert namespace["search"].best_params_ == {"C": 10.0}
