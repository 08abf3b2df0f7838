"""``calibration_gain``, ``recalibrate`` and ``recalibration_gain``
(``docs/definitions.md``, "The calibration gain").

Checked on the same folds against probmetrics 1.3.0 (``MetricsWithCalibration``
with its ``TemperatureScalingCalibrator`` and its ``"isotonic"`` calibrator:
``calib-err_*`` and ``refinement_*``), scikit-learn 1.9.1
(``LogisticRegression(C=inf)`` on ``logit(p)`` for Platt,
``IsotonicRegression(out_of_bounds="clip")``, ``log_loss``,
``brier_score_loss``), the oracle ``tests/oracles/recalibration.py`` (the fold
rule, the temperature by scipy), and for its refusals.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import torch
from oracles.recalibration import folds_oracle, loss_oracle, temperature_oracle
from probmetrics.calibrators import TemperatureScalingCalibrator, get_calibrator
from probmetrics.distributions import CategoricalProbs
from probmetrics.metrics import Metrics, MetricsWithCalibration
from probmetrics.splitters import Splitter
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, log_loss

import calibr
from calibr._metrics.recalibration import folds

TOL = 1e-12


def _binary(n, seed, lo=0.0):
    rng = np.random.default_rng(seed)
    p = lo + rng.random(n) * (1 - 2 * lo)
    return p, (rng.random(n) < p ** 1.5).astype(int)


def _multiclass(n, seed, k=3):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=n)
    y = np.array([rng.choice(k, p=row) for row in p])
    p = p ** 1.7
    return p / p.sum(axis=1, keepdims=True), y


class _Fixed(Splitter):
    """probmetrics on calibr's folds."""

    def __init__(self, fold):
        self.fold = fold

    def get_splits(self, y_true, random_state=None):
        return [(np.flatnonzero(self.fold != k), np.flatnonzero(self.fold == k))
                for k in range(self.fold.max() + 1)]

    def get_name(self):
        return "fixed"


def _probmetrics(p, y, calibrator, fold):
    k = p.shape[1]
    m = MetricsWithCalibration(Metrics.from_names(["logloss", "brier"]), calibrator, _Fixed(fold))
    out = m.compute_all(
        CategoricalProbs(torch.nn.functional.one_hot(torch.tensor(y), k).double()),
        CategoricalProbs(torch.tensor(p)))
    return {key.split("_")[0] + "_" + key.split("_")[1]: float(v) for key, v in out.items()}


# ---------------------------------------------------------------- the folds

def test_the_fold_rule_equals_the_oracle():
    for seed, (n, cv) in enumerate([(11, 2), (50, 5), (97, 3)]):
        codes = np.random.default_rng(100 + seed).integers(0, 3, n)
        np.testing.assert_array_equal(folds(codes, cv, seed), folds_oracle(codes, cv, seed))


def test_the_folds_are_stratified_and_seeded():
    codes = np.random.default_rng(1).integers(0, 4, 1003)
    f = folds(codes, 5, 7)
    for k in range(4):
        counts = np.bincount(f[codes == k], minlength=5)
        assert counts.max() - counts.min() <= 1
    sizes = np.bincount(f, minlength=5)
    assert sizes.max() - sizes.min() <= 1
    np.testing.assert_array_equal(f, folds(codes, 5, np.random.default_rng(7)))
    assert not np.array_equal(f, folds(codes, 5, 8))


def test_the_same_rng_gives_the_same_gain():
    p, y = _binary(500, 2)
    a = calibr.calibration_gain(p, y, "brier", "isotonic", rng=3)
    assert a == calibr.calibration_gain(p, y, "brier", "isotonic", rng=3)
    assert a != calibr.calibration_gain(p, y, "brier", "isotonic", rng=4)
    assert calibr.calibration_gain(p, y, "brier", "isotonic") == \
        calibr.calibration_gain(p, y, "brier", "isotonic", rng=0)
    assert calibr.calibration_gain(p, y) == \
        calibr.calibration_gain(p, y, "log_loss", "temperature", cv=5, rng=0)


# ---------------------------------------------------------------- the fits

def test_platt_equals_sklearns_unpenalised_logistic_regression_on_the_logit():
    p, y = _binary(3000, 3, lo=0.01)
    f = folds(y, 5, 0)
    z = np.log(p / (1 - p))
    want = np.empty_like(p)
    for k in range(5):
        t = f == k
        lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(z[~t, None], y[~t])
        want[t] = lr.predict_proba(z[t, None])[:, 1]
    # sklearn's lbfgs stops at its tolerance; calibr's Newton at the optimum
    np.testing.assert_allclose(calibr.recalibrate(p, y, "platt"), want, rtol=0, atol=1e-8)


def test_isotonic_equals_sklearns_isotonic_regression_on_the_same_folds():
    p, y = _binary(3000, 4)
    p = np.round(p, 2)  # ties, pooled as sklearn pools them
    f = folds(y, 4, 1)
    want = np.empty_like(p)
    for k in range(4):
        t = f == k
        want[t] = IsotonicRegression(out_of_bounds="clip").fit(p[~t], y[~t]).predict(p[t])
    np.testing.assert_allclose(calibr.recalibrate(p, y, "isotonic", cv=4, rng=1), want,
                               rtol=0, atol=TOL)


def test_multiclass_isotonic_is_one_against_the_rest_normalised_as_sklearn():
    p, y = _multiclass(1500, 5)
    f = folds(y, 5, 0)
    want = np.empty_like(p)
    for k in range(5):
        t = f == k
        cols = np.column_stack([
            IsotonicRegression(out_of_bounds="clip").fit(p[~t, j], y[~t] == j).predict(p[t, j])
            for j in range(3)])
        s = cols.sum(axis=1, keepdims=True)
        want[t] = np.where(s == 0, 1 / 3, cols / np.where(s == 0, 1, s))
    np.testing.assert_allclose(calibr.recalibrate(p, y + 1, "isotonic"), want, rtol=0, atol=TOL)


@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "multiclass"])
def test_temperature_equals_the_scipy_oracle(multiclass):
    p, y = _multiclass(800, 6) if multiclass else _binary(800, 6, lo=0.01)
    logp = np.log(p) if multiclass else np.column_stack((np.log1p(-p), np.log(p)))
    f = folds(y, 3, 2)
    got = calibr.recalibrate(p, y + 1 if multiclass else y, "temperature", cv=3, rng=2)
    for k in range(3):
        t = f == k
        beta = temperature_oracle(logp[~t], y[~t])
        s = beta * logp[t]
        want = np.exp(s - np.logaddexp.reduce(s, axis=1, keepdims=True))
        np.testing.assert_allclose(got[t], want if multiclass else want[:, 1], rtol=0,
                                   atol=1e-9)


def test_temperature_fits_a_class_of_probability_1e_300_without_overflow():
    # underconfident p (beta near 2.7) and a class never seen, at 1e-300: beta times
    # the spread of log p passes exp's range, so the log-sum-exp must shift by the max
    rng = np.random.default_rng(3)
    lg = rng.normal(size=(600, 3)) * 2
    q = np.exp(lg) / np.exp(lg).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in q])
    p = np.exp(0.4 * lg)
    p = np.column_stack((p / p.sum(axis=1, keepdims=True), np.full(600, 1e-300)))
    logp = np.log(p)
    f = folds(y, 3, 2)
    got = calibr.recalibrate(p, y + 1, "temperature", cv=3, rng=2)
    for k in range(3):
        t = f == k
        beta = temperature_oracle(logp[~t], y[~t])
        assert beta > 2
        s = beta * logp[t]
        want = np.exp(s - np.logaddexp.reduce(s, axis=1, keepdims=True))
        np.testing.assert_allclose(got[t], want, rtol=0, atol=1e-9)


# ---------------------------------------------------------------- the gain: peers

@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "multiclass"])
def test_temperature_gain_equals_probmetrics(multiclass):
    p, y = _multiclass(2000, 7) if multiclass else _binary(2000, 7, lo=0.01)
    pm = p if multiclass else np.column_stack((1 - p, p))
    theirs = _probmetrics(pm, y, TemperatureScalingCalibrator(max_bisection_steps=60),
                          folds(y, 5, 0))
    yc = y + 1 if multiclass else y
    ll = calibr.calibration_gain(p, yc, "log_loss", "temperature")
    assert ll.calibration_error == pytest.approx(theirs["calib-err_logloss"], abs=1e-10)
    assert ll.refinement == pytest.approx(theirs["refinement_logloss"], abs=1e-10)
    br = calibr.calibration_gain(p, yc, "brier", "temperature")
    # probmetrics' Brier score sums over both columns of a binary p: twice calibr's (p - y)^2
    scale = 1.0 if multiclass else 2.0
    assert scale * br.calibration_error == pytest.approx(theirs["calib-err_brier"], abs=1e-10)
    assert scale * br.refinement == pytest.approx(theirs["refinement_brier"], abs=1e-10)
    # the two-column matrix reproduces probmetrics' binary Brier score directly
    two = calibr.calibration_gain(pm, y + 1, "brier", "temperature")
    assert two.refinement == pytest.approx(theirs["refinement_brier"], abs=1e-10)


def test_isotonic_gain_equals_probmetrics_brier_and_its_clipped_log_loss():
    p, y = _multiclass(2000, 8)
    f = folds(y, 5, 0)
    theirs = _probmetrics(p, y, get_calibrator("isotonic"), f)
    br = calibr.calibration_gain(p, y + 1, "brier", "isotonic")
    assert br.calibration_error == pytest.approx(theirs["calib-err_brier"], abs=1e-12)
    # the log loss: an isotonic map can give the outcome probability 0; calibr says
    # inf, probmetrics clips the log-probabilities at log(float32 tiny) and renormalises
    with pytest.warns(RuntimeWarning, match=r"it gives the outcome of \d+ rows? a probability"):
        ll = calibr.calibration_gain(p, y + 1, "log_loss", "isotonic")
    assert ll.refinement == np.inf and ll.calibration_error == -np.inf
    q = calibr.recalibrate(p, y + 1, "isotonic")
    with np.errstate(divide="ignore"):
        logq = np.maximum(np.log(q), np.log(np.finfo(np.float32).tiny))
    clipped = -(logq - np.logaddexp.reduce(logq, axis=1, keepdims=True))[np.arange(2000), y]
    assert clipped.mean() == pytest.approx(theirs["refinement_logloss"], abs=1e-10)


def test_the_loss_is_sklearns_and_the_oracles():
    p, y = _binary(1000, 9, lo=0.001)
    g = calibr.calibration_gain(p, y, "log_loss", "platt")
    assert g.loss == pytest.approx(log_loss(y, p), abs=TOL)
    assert g.loss == pytest.approx(loss_oracle(p, y, "log_loss"), abs=TOL)
    b = calibr.calibration_gain(p, y, "brier", "platt")
    assert b.loss == pytest.approx(brier_score_loss(y, p), abs=TOL)
    q = calibr.recalibrate(p, y, "platt")
    assert b.refinement == pytest.approx(loss_oracle(q, y, "brier"), abs=TOL)
    assert b.calibration_error == b.loss - b.refinement
    pm, ym = _multiclass(600, 10)
    m = calibr.calibration_gain(pm, ym + 1, "brier", "temperature")
    assert m.loss == pytest.approx(loss_oracle(pm, ym, "brier"), abs=TOL)
    assert m.loss == pytest.approx(brier_score_loss(ym, pm, labels=[0, 1, 2]), abs=TOL)


def test_a_miscalibrated_p_has_a_positive_gain_and_the_scalar_metric_is_it():
    p, y = _binary(5000, 11, lo=0.01)
    bent = p ** 3  # overconfident towards 0
    for method in ("platt", "temperature", "isotonic"):
        g = calibr.calibration_gain(bent, y, "brier", method)
        assert g.calibration_error > 0.01
        assert calibr.recalibration_gain(bent, y, "brier", method) == g.calibration_error
    assert "calibration_error" in calibr.calibration_gain(p, y)._repr_html_()
    with pytest.raises(dataclasses.FrozenInstanceError):  # read-only: loss - refinement holds
        g.calibration_error = 0.0


# ---------------------------------------------------------------- weights

def _repeated_folds(monkeypatch, w):
    """The folds of a weighted call, recorded; the call on the repeated rows then
    gets each row's fold repeated (a row of weight w: w copies in its one fold)."""
    from calibr._metrics import recalibration

    seen = []

    def record(codes, cv, rng):
        seen.append(folds(codes, cv, rng))
        return seen[-1]

    def repeat(codes, cv, rng):
        return np.repeat(seen[-1], w[w > 0])

    return (lambda: monkeypatch.setattr(recalibration, "folds", record),
            lambda: monkeypatch.setattr(recalibration, "folds", repeat))


@pytest.mark.parametrize(("kind", "method"), [
    ("binary", "platt"), ("binary", "temperature"), ("binary", "isotonic"),
    ("multi", "temperature"), ("multi", "isotonic")])
@pytest.mark.parametrize("score", ["log_loss", "brier"])
def test_whole_weights_are_repeated_rows_on_the_same_folds(monkeypatch, kind, method, score):
    """Weights that equal repeated rows give the same gain, the copies of a row in
    its one fold (``docs/definitions.md``, "The calibration gain"); weight 0 is no
    row, even one that the method would refuse."""
    if kind == "binary":
        p, y = _binary(300, 21, lo=0.02)
        p = np.round(p, 2)  # ties, for the isotonic fit
    else:
        p, y = _multiclass(300, 22)
        y = y + 1
    w = np.random.default_rng(5).integers(0, 4, p.shape[0])
    p = p.copy()
    p[np.flatnonzero(w == 0)[0]] = 0.0 if kind == "binary" else [1.0, 0.0, 0.0]
    weighted, repeated = _repeated_folds(monkeypatch, w)
    weighted()
    got = calibr.calibration_gain(p, y, score, method, cv=3, weights=w)
    repeated()
    want = calibr.calibration_gain(np.repeat(p, w, axis=0), np.repeat(y, w), score, method,
                                   cv=3)
    assert got.n == int((w > 0).sum()) and want.n == int(w.sum())
    for field in ("loss", "refinement", "calibration_error"):
        assert getattr(got, field) == pytest.approx(getattr(want, field), rel=1e-10, abs=TOL)
    weighted()
    assert calibr.recalibration_gain(p, y, score, method, cv=3, weights=w) == \
        got.calibration_error


def test_weighted_fits_equal_sklearns_weighted_fits_on_the_same_folds():
    """Platt: ``LogisticRegression(C=inf)`` with ``sample_weight``; isotonic:
    ``IsotonicRegression`` with ``sample_weight``; the losses sklearn's weighted
    ``log_loss`` and ``brier_score_loss``. Real (not whole) weights."""
    p, y = _binary(2000, 23, lo=0.01)
    p = np.round(p, 3)
    w = np.random.default_rng(6).uniform(0.1, 3.0, p.shape[0])
    f = folds(y, 4, 2)
    z = np.log(p / (1 - p))
    platt, iso = np.empty_like(p), np.empty_like(p)
    for k in range(4):
        t = f == k
        lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(
            z[~t, None], y[~t], sample_weight=w[~t])
        platt[t] = lr.predict_proba(z[t, None])[:, 1]
        iso[t] = IsotonicRegression(out_of_bounds="clip").fit(
            p[~t], y[~t], sample_weight=w[~t]).predict(p[t])
    g = calibr.calibration_gain(p, y, "log_loss", "platt", cv=4, rng=2, weights=w)
    assert g.loss == pytest.approx(log_loss(y, p, sample_weight=w), abs=TOL)
    # sklearn's lbfgs stops at its tolerance; calibr's Newton at the optimum
    assert g.refinement == pytest.approx(log_loss(y, platt, sample_weight=w), abs=1e-8)
    b = calibr.calibration_gain(p, y, "brier", "isotonic", cv=4, rng=2, weights=w)
    assert b.loss == pytest.approx(brier_score_loss(y, p, sample_weight=w), abs=TOL)
    assert b.refinement == pytest.approx(brier_score_loss(y, iso, sample_weight=w), abs=TOL)
    # unit weights are no weights
    ones = calibr.calibration_gain(p, y, "brier", "isotonic", cv=4, rng=2,
                                   weights=np.ones_like(p))
    none = calibr.calibration_gain(p, y, "brier", "isotonic", cv=4, rng=2)
    assert [ones.loss, ones.refinement] == pytest.approx([none.loss, none.refinement],
                                                         abs=TOL)


def test_a_missing_p_is_refused_unless_na_rm():
    p, y = _binary(200, 1, lo=0.01)
    pn, yn = np.append(p, np.nan), np.append(y, 1)
    g, want = calibr.calibration_gain(pn, yn, na_rm=True), calibr.calibration_gain(p, y)
    assert (g.n, g.loss, g.refinement) == (want.n, want.loss, want.refinement)
    np.testing.assert_array_equal(calibr.recalibrate(pn, yn, na_rm=True),
                                  calibr.recalibrate(p, y))
    for f in (calibr.calibration_gain, calibr.recalibrate):
        with pytest.raises(calibr.InputError, match=r"^`p` must not contain missing values; "
                                                   r"1 value is missing, .* Pass na_rm=True"):
            f(pn, yn)  # na_rm is False by default: nothing dropped silently


# ---------------------------------------------------------------- refusals

@pytest.mark.parametrize(("call", "match"), [
    (lambda: calibr.calibration_gain([0.2, 0.8] * 5, [0, 1] * 5, method="beta"),
     r"`method` must be one of 'platt', 'temperature', 'isotonic'"),
    (lambda: calibr.calibration_gain([0.2, 0.8] * 5, [0, 1] * 5, score="ece"),
     r"`score` must be one of 'brier', 'log_loss'"),
    (lambda: calibr.recalibrate([0.2, 0.8] * 5, [0, 1] * 5, cv=1), r"`cv`"),
    (lambda: calibr.recalibrate([0.2, 0.8] * 5, [0, 1] * 4 + [0, 0], cv=5),
     r"`cv` must be at most the count of the rarest class of `y` \(4\), so that every "
     r"fold holds each class; got 5\."),
    (lambda: calibr.recalibrate([0.2, 0.8] * 5, [1] * 10),
     r"`y` has one class only; a recalibration map needs outcomes of two classes"),
    (lambda: calibr.calibration_gain([], []), r"`p` and `y` must not be empty"),
    (lambda: calibr.recalibrate(np.full((10, 3), 1 / 3), [1, 2, 3, 1, 2, 3, 1, 2, 3, 1],
                                "platt", cv=2),
     r"`method` = 'platt' is binary"),
    (lambda: calibr.recalibrate([0.0, 0.3, 0.8, 0.9], [0, 0, 1, 1], "temperature", cv=2),
     r"`p` must lie strictly between 0 and 1; 1 value does not, the first at position 0 "
     r"\(0\.0\) with method = 'temperature'; use method = 'isotonic'"),
    (lambda: calibr.recalibrate([0.1, 0.3, 0.8, 1.0], [0, 0, 1, 1], "platt", cv=2),
     r"`p` must lie strictly between 0 and 1"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(calibr.InputError, match=match):
        call()


def test_isotonic_reads_p_of_0_and_1():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = calibr.recalibrate([0.0, 0.3, 0.8, 1.0] * 3, [0, 0, 1, 1] * 3, "isotonic", cv=2)
    assert q.tolist() == [0.0, 0.0, 1.0, 1.0] * 3


def test_a_row_whose_isotonic_maps_are_all_0_gets_1_over_k():
    """scikit-learn's rule for the one-against-the-rest maps (its
    ``_CalibratedClassifier.predict_proba``): a zero row becomes uniform."""
    from calibr._metrics.recalibration import _isotonic_ovr

    train = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    codes = np.array([0, 1, 2])  # each map: 0 up to 0.1, 1 from 0.8
    new = np.array([[0.05, 0.05, 0.05], [0.8, 0.1, 0.1]])  # below every map's first knot
    out = _isotonic_ovr(train, codes, new)
    np.testing.assert_allclose(out[0], [1 / 3, 1 / 3, 1 / 3], rtol=0, atol=TOL)
    np.testing.assert_allclose(out[1], [1.0, 0.0, 0.0], rtol=0, atol=TOL)
