"""``calibr.ecce`` and ``calibration_test(method="ks" | "kuiper")``: the cumulative
calibration errors of Arrieta-Ibarra et al. (2022) (``docs/definitions.md``,
"Cumulative calibration errors: `ecce()`").

Checked against mcgrad 0.1.5 (``ecce``, ``ecce_sigma``, ``ecce_pvalue`` at
float64), against MAPIE 1.6.0 (``kolmogorov_smirnov_statistic``,
``kuiper_statistic`` and their p-values, and its doctests), against the oracle
``tests/oracles/cumulative.py`` (ties, weights, the top-label form), on
hand-worked cases in exact fractions, and for its refusals.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mapie.metrics.calibration as mapie_cal
import mcgrad.metrics as mcgrad_metrics
import numpy as np
import pytest
from oracles.cumulative import cumulative_path, ecce_oracle, max_abs_sf_oracle
from oracles.multicalibration import range_sf_oracle
from tolerances import (
    ECCE_RTOL,
    EXACT_RTOL,
    MAPIE_JITTER_RTOL,
    MAX_ABS_SF_ATOL,
    MAX_ABS_SF_RTOL,
    MULTICAL_PVALUE_ATOL,
)

import calibr
from calibr._inference.multicalibration import _ecce_pvalue
from calibr._kernels.cumulative import max_abs_sf
from calibr._metrics.cumulative import ecce_pvalue


def _data(n: int, seed: int, power: float = 1.0, ties: int | None = None):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    if ties is not None:
        p = np.round(p, ties)
    y = (rng.random(n) < p ** power).astype(np.int64)
    return p, y


# --------------------------------------------------------------------------
# mcgrad


@pytest.mark.parametrize(("n", "seed", "power"), [(1, 0, 1.0), (7, 1, 1.0), (500, 2, 1.0),
                                                  (5000, 3, 1.2), (100_000, 4, 1.0)])
def test_kuiper_equals_mcgrad(n, seed, power):
    p, y = _data(n, seed, power)
    assert calibr.ecce(p, y, "kuiper") == pytest.approx(
        mcgrad_metrics.ecce(y, p), rel=ECCE_RTOL, abs=1e-300)
    assert calibr.ecce(p, y, "kuiper", scale="sigma") == pytest.approx(
        mcgrad_metrics.ecce_sigma(y, p), rel=ECCE_RTOL)
    res = calibr.calibration_test(p, y, "kuiper")
    assert res.pvalue == pytest.approx(mcgrad_metrics.ecce_pvalue(y, p), rel=0,
                                       abs=MULTICAL_PVALUE_ATOL)


def test_weighted_ecce_equals_mcgrad_and_sigma_counts_weights():
    # mcgrad's ECCE with sample weights is calibr's; its sigma is sqrt(sum w^2 p (1-p)) / W
    # (sampling weights), calibr's sqrt(sum w p (1-p)) / W (frequency weights)
    p, y = _data(2000, 5)
    w = np.random.default_rng(6).integers(0, 4, p.shape[0]).astype(float)
    assert calibr.ecce(p, y, "kuiper", weights=w) == pytest.approx(
        mcgrad_metrics.ecce(y, p, sample_weight=w), rel=ECCE_RTOL)
    ks, kuiper, sigma = ecce_oracle(p, y, w)
    assert calibr.ecce(p, y, "kuiper", scale="sigma", weights=w) == pytest.approx(
        kuiper / sigma, rel=ECCE_RTOL)
    mcgrad_sigma = math.sqrt(np.sum(w * w * p * (1 - p))) / np.sum(w)
    assert mcgrad_metrics.ecce_sigma(y, p, sample_weight=w) == pytest.approx(
        kuiper / mcgrad_sigma, rel=ECCE_RTOL)


@pytest.mark.parametrize("kind", ["ks", "kuiper"])
def test_weighted_test_is_the_weighted_ecce_and_the_repeated_rows(kind):
    """calibration_test(method=kind, weights=w): statistic, estimate and p-value are
    those of ecce(weights=w) (bit for bit), and for whole-number weights those of
    the repeated rows (to rounding); ties and rows of weight 0 included."""
    for p, y in (_data(600, 21), _data(600, 22, ties=2)):
        w = np.random.default_rng(23).integers(0, 4, p.shape[0]).astype(np.float64)
        res = calibr.calibration_test(p, y, kind, weights=w)
        assert res.statistic == calibr.ecce(p, y, kind, scale="sigma", weights=w)
        assert res.estimate == calibr.ecce(p, y, kind, weights=w)
        assert res.pvalue == float(ecce_pvalue(res.statistic, kind)[0])
        assert (res.n, res.method, res.type) == (600, kind, "binary")
        rep = calibr.calibration_test(np.repeat(p, w.astype(int)), np.repeat(y, w.astype(int)),
                                      kind)
        assert res.statistic == pytest.approx(rep.statistic, rel=ECCE_RTOL)
        assert res.estimate == pytest.approx(rep.estimate, rel=ECCE_RTOL)
        assert res.pvalue == pytest.approx(rep.pvalue, rel=ECCE_RTOL, abs=1e-300)
    ones = calibr.calibration_test(p, y, kind, weights=np.ones(p.shape[0]))
    plain = calibr.calibration_test(p, y, kind)
    assert (ones.statistic, ones.pvalue) == pytest.approx((plain.statistic, plain.pvalue),
                                                          rel=ECCE_RTOL)


def test_weighted_test_against_mcgrad():
    """mcgrad's ecce_pvalue with sample weights reads them as sampling weights
    (sigma of w^2): with weights 1 both tests agree, and with other weights
    mcgrad's p-value is its tail at calibr's Kuiper ECCE over mcgrad's sigma."""
    p, y = _data(3000, 24)
    w = np.random.default_rng(25).integers(1, 4, p.shape[0]).astype(np.float64)
    unit = calibr.calibration_test(p, y, "kuiper", weights=np.ones(p.shape[0]))
    assert unit.pvalue == pytest.approx(
        mcgrad_metrics.ecce_pvalue(y, p, sample_weight=np.ones(p.shape[0])), rel=0,
        abs=MULTICAL_PVALUE_ATOL)
    res = calibr.calibration_test(p, y, "kuiper", weights=w)
    mcgrad_sigma = math.sqrt(np.sum(w * w * p * (1 - p))) / np.sum(w)
    assert mcgrad_metrics.ecce_pvalue(y, p, sample_weight=w) == pytest.approx(
        float(ecce_pvalue(res.estimate / mcgrad_sigma, "kuiper")[0]), rel=0,
        abs=MULTICAL_PVALUE_ATOL)


@pytest.mark.parametrize("method", ["skce", "skce_block", "consistency", "spiegelhalter",
                                    "hosmer_lemeshow"])
def test_other_tests_refuse_weights_naming_them(method):
    p, y = _data(50, 26)
    with pytest.raises(calibr.InputError, match=(
            r'^`weights` are taken by method = "ks" and "kuiper" only \(frequency weights, '
            r'as calibr\.ecce\(\) takes them\); got method = "' + method + r'"\. For '
            r"whole-number weights, repeat the rows \(numpy\.repeat\) instead\.$")):
        calibr.calibration_test(p, y, method, weights=np.ones(50))


def test_weighted_test_refusals_are_the_input_layers():
    p, y = _data(20, 27)
    with pytest.raises(calibr.InputError, match=r"`weights` must be nonnegative"):
        calibr.calibration_test(p, y, "ks", weights=-np.ones(20))
    with pytest.raises(calibr.InputError, match=r"`weights`"):
        calibr.calibration_test(p, y, "kuiper", weights=np.ones(19))


# --------------------------------------------------------------------------
# MAPIE


@pytest.mark.parametrize(("n", "seed"), [(50, 0), (1000, 1), (1000, 3), (20_000, 2)])
def test_statistics_equal_mapie_to_its_jitter(n, seed):
    p, y = _data(n, seed)
    path, sigma = cumulative_path(p, y)
    assert calibr.ecce(p, y, "ks", scale="sigma") == pytest.approx(
        mapie_cal.kolmogorov_smirnov_statistic(y, p), rel=MAPIE_JITTER_RTOL)
    got_ks = calibr.calibration_test(p, y, "ks").pvalue
    assert got_ks == pytest.approx(mapie_cal.kolmogorov_smirnov_p_value(y, p), abs=1e-6)
    # MAPIE's Kuiper range is that of C_1..C_n, without C_0 = 0: the same where the
    # path takes both signs, else smaller
    mapie_kuiper = mapie_cal.kuiper_statistic(y, p)
    assert mapie_kuiper == pytest.approx((path[1:].max() - path[1:].min()) / sigma,
                                         rel=MAPIE_JITTER_RTOL)
    got = calibr.calibration_test(p, y, "kuiper")
    if path.max() > 0 > path.min():
        assert got.statistic == pytest.approx(mapie_kuiper, rel=MAPIE_JITTER_RTOL)
        assert got.pvalue == pytest.approx(mapie_cal.kuiper_p_value(y, p), abs=1e-6)
    else:
        assert got.statistic > mapie_kuiper


def test_mapie_doctests():
    y = np.array([0, 1, 0, 1, 0])
    p = np.array([0.1, 0.9, 0.21, 0.9, 0.5])
    assert round(calibr.ecce(p, y, "ks", scale="sigma"), 3) == 0.978
    # MAPIE's kuiper_statistic doctest says 0.857: it takes the range of C_1..C_n
    # without C_0 = 0, and this path (-0.02, -0.062, -0.162, -0.142, -0.122) never
    # goes above 0; with C_0 (the definition, and mcgrad) the range is 0.162 / sigma
    assert round(mapie_cal.kuiper_statistic(y, p), 3) == 0.857
    assert round(calibr.ecce(p, y, "kuiper", scale="sigma"), 3) == 0.978
    assert calibr.ecce(p, y, "kuiper", scale="sigma") == pytest.approx(
        mcgrad_metrics.ecce_sigma(y, p), rel=ECCE_RTOL)
    # kuiper_p_value's doctest, 0.9684: p = 0.5 is tied between a y = 1 and a y = 0
    # row, and MAPIE orders tied rows by its jitter (the y = 0 row first here), so
    # its path dips to -0.9 / 6 inside the tie; calibr reads the path at the end of
    # the tie only. Given MAPIE's jittered scores, calibr gives MAPIE's number.
    y2 = np.array([1, 0, 1, 0, 1, 0])
    p2 = np.array([0.8, 0.3, 0.5, 0.5, 0.7, 0.1])
    assert round(mapie_cal.kuiper_p_value(y2, p2), 4) == 0.9684
    jittered = mapie_cal.add_jitter(p2, random_state=1)
    assert round(calibr.calibration_test(jittered, y2, "kuiper").pvalue, 4) == 0.9684
    assert calibr.calibration_test(p2, y2, "kuiper").pvalue > 0.9999
    assert round(mapie_cal.kolmogorov_smirnov_p_value(y2, p2), 4) == 0.7857
    assert round(calibr.calibration_test(jittered, y2, "ks").pvalue, 4) == 0.7857


# --------------------------------------------------------------------------
# the oracle: ties, weights, the top-label form, permutations


@pytest.mark.parametrize("seed", range(4))
def test_equals_the_oracle_with_ties_and_weights(seed):
    p, y = _data(3000, seed, ties=2)
    w = np.random.default_rng(seed + 10).random(p.shape[0]) * 3
    for weights in (None, w):
        ks, kuiper, sigma = ecce_oracle(p, y, weights)
        assert calibr.ecce(p, y, weights=weights) == pytest.approx(ks, rel=ECCE_RTOL)
        assert calibr.ecce(p, y, "kuiper", weights=weights) == pytest.approx(kuiper,
                                                                            rel=ECCE_RTOL)
        assert calibr.ecce(p, y, scale="sigma", weights=weights) == pytest.approx(
            ks / sigma, rel=ECCE_RTOL)


def test_order_of_rows_and_of_tied_rows_does_not_matter():
    p, y = _data(1000, 7, ties=1)
    perm = np.random.default_rng(8).permutation(p.shape[0])
    for kind in ("ks", "kuiper"):
        assert calibr.ecce(p[perm], y[perm], kind) == pytest.approx(calibr.ecce(p, y, kind),
                                                                    rel=ECCE_RTOL)


def test_whole_weights_are_repeated_rows():
    p, y = _data(400, 9, ties=2)
    w = np.random.default_rng(10).integers(0, 4, p.shape[0])
    for kind in ("ks", "kuiper"):
        for scale in ("probability", "sigma"):
            assert calibr.ecce(p, y, kind, scale=scale, weights=w) == pytest.approx(
                calibr.ecce(np.repeat(p, w), np.repeat(y, w), kind, scale=scale),
                rel=ECCE_RTOL)


def test_matrix_p_is_the_top_label_form():
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(4), 600)
    y = rng.integers(1, 5, 600)
    conf = p.max(axis=1)
    hit = (p.argmax(axis=1) + 1 == y).astype(int)
    ks, kuiper, _ = ecce_oracle(conf, hit)
    assert calibr.ecce(p, y) == pytest.approx(ks, rel=ECCE_RTOL)
    assert calibr.ecce(p, y, "kuiper", type="confidence") == pytest.approx(kuiper,
                                                                         rel=ECCE_RTOL)
    res = calibr.calibration_test(p, y, "kuiper")
    assert res.type == "confidence" and res.n == 600


# --------------------------------------------------------------------------
# hand-worked cases


def _exact(value: float, want: Fraction | float) -> None:
    assert value == pytest.approx(float(want), rel=EXACT_RTOL, abs=1e-300)


def test_a_single_row():
    # the path 0, 3/4: both kinds 3/4, sigma sqrt(3/16), their ratio sqrt(3)
    _exact(calibr.ecce([0.25], [1]), Fraction(3, 4))
    _exact(calibr.ecce([0.25], [1], "kuiper"), Fraction(3, 4))
    _exact(calibr.ecce([0.25], [1], scale="sigma"), math.sqrt(3))
    res = calibr.calibration_test([0.25], [1], "ks")
    _exact(res.statistic, math.sqrt(3))
    _exact(res.estimate, Fraction(3, 4))
    assert res.pvalue == pytest.approx(max_abs_sf_oracle(math.sqrt(3)), rel=MAX_ABS_SF_RTOL)


def test_ties_are_one_block():
    # p = (0.2, 0.2, 0.6, 0.6), y = (0, 1, 1, 0): the blocks add 0.6 and -0.2, the
    # path 0, 0.6, 0.4 over n = 4 (row by row it would pass -0.2 or 1.0 too)
    p, y = [0.2, 0.2, 0.6, 0.6], [0, 1, 1, 0]
    _exact(calibr.ecce(p, y), Fraction(3, 20))
    _exact(calibr.ecce(p, y, "kuiper"), Fraction(3, 20))
    _exact(calibr.ecce(p[::-1], [0, 1, 1, 0][::-1]), Fraction(3, 20))


def test_a_path_of_both_signs():
    # p = (0.1, 0.5, 0.9), y = (1, 0, 0): steps 0.9, -0.5, -0.9; path 0, 0.9, 0.4, -0.5
    p, y = [0.1, 0.5, 0.9], [1, 0, 0]
    _exact(calibr.ecce(p, y), Fraction(3, 10))
    _exact(calibr.ecce(p, y, "kuiper"), Fraction(14, 30))
    _exact(calibr.ecce(p, y, scale="sigma"), 0.9 / math.sqrt(0.09 + 0.25 + 0.09))


def test_every_p_equal_is_one_block():
    # p = 0.3 for all: one step, sum(y - p) = 2 - 1.5; the ECCE is |ybar - pbar|
    p, y = [0.3] * 5, [1, 0, 1, 0, 0]
    _exact(calibr.ecce(p, y), Fraction(1, 10))
    _exact(calibr.ecce(p, y, "kuiper"), Fraction(1, 10))


@pytest.mark.parametrize("label", [0, 1])
def test_y_all_equal(label):
    p = np.array([0.1, 0.4, 0.7])
    y = np.full(3, label)
    ks, kuiper, sigma = ecce_oracle(p, y)
    _exact(calibr.ecce(p, y), ks)
    _exact(calibr.ecce(p, y, "kuiper"), kuiper)
    # the path is monotone, so its range is its largest absolute value
    _exact(ks, Fraction(4, 10) if label == 0 else Fraction(18, 30))
    assert ks == kuiper


def test_sigma_zero():
    # p of 0 and 1 only: sigma = 0; a contradicted p gives inf, agreeing ones 0 (mcgrad's)
    assert calibr.ecce([0.0, 1.0], [0, 1], scale="sigma") == 0.0
    assert calibr.ecce([0.0, 1.0], [1, 1], scale="sigma") == math.inf
    res = calibr.calibration_test([0.0, 1.0], [1, 1], "kuiper")
    assert res.statistic == math.inf and res.pvalue == 0.0
    res = calibr.calibration_test([0.0, 1.0], [0, 1], "ks")
    assert res.statistic == 0.0 and res.pvalue == 1.0
    assert mcgrad_metrics.ecce_sigma(np.array([1, 1]), np.array([0.0, 1.0])) == math.inf


# --------------------------------------------------------------------------
# the p-values


def test_max_abs_tail_equals_the_40_digit_oracle():
    xs = np.concatenate([np.linspace(0.05, 0.99, 30), [1.0], np.linspace(1.01, 12, 60),
                         [20.0, 37.0]])
    got = max_abs_sf(xs)
    for x, g in zip(xs, got, strict=True):
        want = max_abs_sf_oracle(float(x))
        if x >= 1:
            assert g == pytest.approx(want, rel=MAX_ABS_SF_RTOL), x
        else:
            assert g == pytest.approx(want, rel=0, abs=MAX_ABS_SF_ATOL), x
    edge = max_abs_sf(np.array([0.0, np.inf, np.nan, -1.0]))
    assert edge[0] == 1.0 and edge[1] == 0.0 and math.isnan(edge[2]) and edge[3] == 1.0


def test_tails_equal_mapies_distribution_functions_where_they_are_accurate():
    # MAPIE computes 1 - F(x) from the theta series, cut after a number of terms
    # that is too small from x of about 2 on: within 4e-15 of the 40-digit tail
    # below x = 2, up to 3.2e-11 (KS) and 9.3e-12 (Kuiper) absolute out to x = 12;
    # calibr is within 2.3e-16 of it everywhere (measured on 600 points)
    xs = np.linspace(0.05, 2, 100)
    want = np.array([1.0 - mapie_cal.kolmogorov_smirnov_cdf(x) for x in xs])
    np.testing.assert_allclose(ecce_pvalue(xs, "ks"), want, rtol=0, atol=1e-14)
    want = np.array([1.0 - mapie_cal.kuiper_cdf(x) for x in xs])
    np.testing.assert_allclose(ecce_pvalue(xs, "kuiper"), want, rtol=0, atol=1e-14)
    far = np.linspace(2, 12, 100)
    want = np.array([1.0 - mapie_cal.kolmogorov_smirnov_cdf(x) for x in far])
    np.testing.assert_allclose(ecce_pvalue(far, "ks"), want, rtol=0, atol=1e-10)


def test_the_range_tail_is_one_function():
    xs = np.linspace(0.01, 12, 50)
    np.testing.assert_array_equal(_ecce_pvalue(xs), ecce_pvalue(xs, "kuiper"))
    for x in (0.5, 2.0, 7.0):
        assert ecce_pvalue(x, "kuiper")[0] == pytest.approx(range_sf_oracle(x), rel=1e-13,
                                                            abs=1e-15)


def test_the_test_is_calibrated_enough_under_the_null():
    # calibrated data: the p-value is not small; miscalibrated: it is
    p, y = _data(20_000, 12)
    for kind in ("ks", "kuiper"):
        assert calibr.calibration_test(p, y, kind).pvalue > 0.01
        assert calibr.calibration_test(p ** 1.3, y, kind).pvalue < 1e-10


# --------------------------------------------------------------------------
# refusals


def test_refusals():
    p, y = _data(10, 13)
    with pytest.raises(calibr.InputError, match=r"`kind` must be one of 'ks', 'kuiper'; "
                                                r"got 'max'\."):
        calibr.ecce(p, y, "max")
    with pytest.raises(calibr.InputError, match=r"`scale` must be one of 'probability', "
                                                r"'sigma'; got 'z'\."):
        calibr.ecce(p, y, scale="z")
    with pytest.raises(calibr.InputError, match=r"`type` must be one of 'confidence'; "
                                                r"got 'classwise'\."):
        calibr.ecce(p, y, type="classwise")
    pm = np.array([[0.2, 0.8], [0.6, 0.4]])
    with pytest.raises(calibr.InputError, match=r'`type` must be "confidence" \(or left '
                                                r'out\) for `method = "ks"`'):
        calibr.calibration_test(pm, [1, 2], "ks", type="classwise")
    with pytest.raises(calibr.InputError, match=r"`p` must lie in \[0, 1\]"):
        calibr.ecce([0.2, 1.5], [0, 1])
    with pytest.raises(calibr.InputError, match=r"`weights` must be nonnegative"):
        calibr.ecce([0.2, 0.5], [0, 1], weights=[1, -1])


def test_input_is_not_modified():
    p, y = _data(100, 14)
    w = np.ones(100)
    before = p.copy(), y.copy(), w.copy()
    calibr.ecce(p, y, weights=w)
    calibr.calibration_test(p, y, "kuiper")
    for a, b in zip((p, y, w), before, strict=True):
        np.testing.assert_array_equal(a, b)
