"""calibration_test(): every method against its dense oracle
(``tests/oracles/calibration_tests.py``, CalibrationTests.jl's kernel-matrix
algorithm), the frequency-weighted kernels against repeated rows, CalibrationTests'
own expectation, p-values under the null with binomial bounds, Spiegelhalter
against R's ``rms::val.prob`` and ``calibr.val_prob``, Hosmer-Lemeshow against a
base-R computation, and every error message pinned.

The type I error and power at full size are in ``validation/simulate_tests.py``.
The R tests need R with rms through rpy2 (``.ci/install``); without it they
skip, and under the CI variables they fail instead.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import _restore_library_path, unavailable
from oracles import calibration_tests as oracle
from oracles.skce import skce_oracle
from tolerances import CTEST_RTOL, HL_RTOL, VALPROB_ATOL, VALPROB_RTOL

import calibr
from calibr import InputError, InputTypeError
from calibr._inference import calibration_tests as ct_module
from calibr._inference.calibration_tests import (
    CalibrationTestResult,
    _chi2_upper,
    _consistent_labels,
    _r_quantile7,
    calibration_test,
)
from calibr._kernels import weighted_sums as ws
from calibr._kernels.scalar_sums import scalar_pair_sum
from calibr._metrics.valprob import val_prob

# --------------------------------------------------------------------------
# data


def _binary(n: int, seed, kind: str = "uniform"):
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        p = rng.random(n)
    elif kind == "ties":
        p = rng.choice([0.1, 0.25, 0.5, 0.8, 0.9], n)
    elif kind == "extremes":
        p = rng.choice([0.0, 1e-17, 0.3, 0.7, 1 - 2**-53, 1.0], n)
    else:  # pragma: no cover - a typo in a parametrisation
        raise KeyError(kind)
    y = (rng.random(n) < p).astype(np.int64)
    return p, y


def _multi(n: int, seed, k: int = 3, alpha: float = 1.0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, alpha), n)
    y = np.minimum((np.cumsum(p, axis=1) <= rng.random(n)[:, None]).sum(axis=1), k - 1)
    return p, y  # 0-based codes


def _close_null(fast: np.ndarray, dense: np.ndarray) -> None:
    """Each replicate to CTEST_RTOL of the largest |T'| of the null distribution."""
    scale = np.max(np.abs(dense))
    assert np.max(np.abs(fast - dense)) <= CTEST_RTOL * scale


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# --------------------------------------------------------------------------
# frequency-weighted kernels


@pytest.mark.parametrize("kind", ["uniform", "ties", "extremes"])
@pytest.mark.parametrize("h", [0.01, 0.2, 5.0])
def test_integer_weights_equal_repeated_rows(kind, h):
    """W, D1, D2 with integer weights give the sums of the sample with each row
    repeated w times, C(w, 2) pairs of a row with itself included."""
    p, y = _binary(300, [1, len(kind)], kind)
    w = np.random.default_rng(2).integers(0, 5, 300).astype(np.float64)
    order, xs, e = ws.sorted_scalars(p, y)
    pair, d1, d2 = ws.weighted_pair_sum(e, w, order, ws.gap_factors(xs, h))
    rep = np.repeat(np.arange(300), w.astype(int))
    t_rep, diag_rep, _ = scalar_pair_sum(p[rep], y[rep], h)
    assert math.isclose(pair + (d2 - d1) / 2, t_rep, rel_tol=CTEST_RTOL, abs_tol=1e-12)
    assert math.isclose(d1, diag_rep, rel_tol=1e-14)
    big_n = int(w.sum())
    uq = (pair + (d2 - d1) / 2) / (big_n * (big_n - 1) / 2)
    biased = (2 * pair + d2) / big_n**2
    e_rep = y[rep] - p[rep]
    assert math.isclose(uq, skce_oracle(p[rep], e_rep, "uq", h), rel_tol=CTEST_RTOL,
                        abs_tol=1e-15)
    assert math.isclose(biased, skce_oracle(p[rep], e_rep, "biased", h), rel_tol=CTEST_RTOL)


def test_unit_weights_are_the_unweighted_pair_sum_exactly():
    """With weights 1 the recurrence performs skce()'s own operations (no ties)."""
    p, y = _binary(2000, 3)
    order, xs, e = ws.sorted_scalars(p, y)
    pair, d1, d2 = ws.weighted_pair_sum(e, np.ones(2000), order, ws.gap_factors(xs, 0.2))
    t, diag, _ = scalar_pair_sum(p, y, 0.2)
    assert pair == t and d1 == diag and d2 == diag


@pytest.mark.parametrize("kind", ["uniform", "ties", "extremes"])
def test_weighted_row_sums_against_the_kernel_matrix(kind):
    p, y = _binary(400, [4, len(kind)], kind)
    w = np.random.default_rng(5).integers(0, 4, 400).astype(np.float64)
    order, xs, e = ws.sorted_scalars(p, y)
    r = ws.weighted_row_sums(e, w[order], ws.gap_factors(xs, 0.3))
    H = oracle.kernel_matrix(p, y - p, 0.3)
    dense = (H @ w)[order]
    assert np.max(np.abs(r - dense)) <= CTEST_RTOL * np.max(np.abs(dense))


def test_kernels_on_tiny_inputs():
    empty = np.empty(0)
    assert ws.weighted_pair_sum(empty, empty, np.empty(0, np.int64), empty) == (0.0, 0.0, 0.0)
    assert ws.gap_factors(empty, 0.2).shape == (0,)
    one = np.array([0.3])
    assert ws.weighted_pair_sum(one, np.array([2.0]), np.array([0]), empty) == (
        0.0, 2 * 0.09, 4 * 0.09)
    assert ws.weighted_row_sums(one, np.array([2.0]), empty)[0] == 2 * 0.09


@pytest.mark.parametrize("form", ["binary", "confidence", "classwise"])
def test_replicates_with_fixed_counts_equal_the_dense_algorithm(form):
    """skce_test_replicates with explicit resample indices equals CalibrationTests.jl's
    bootstrap_ccdf sum over the kernel matrix, including extreme counts."""
    n = 250
    if form == "binary":
        p, y = _binary(n, 6)
        kernels = [(p, y)]
    elif form == "confidence":
        p, y = _multi(n, 7)
        top = p.argmax(axis=1)
        kernels = [(p[np.arange(n), top], (top == y).astype(np.uint8))]
    else:
        p, y = _multi(n, 7)
        kernels = [(p[:, k].copy(), (y == k).astype(np.uint8)) for k in range(3)]
    rng = np.random.default_rng(8)
    # six random replicates, then every draw row 0, every row once, rows 0 and n-1 only
    u = np.vstack([rng.random((6, n)), np.zeros(n), (np.arange(n) + 0.5) / n,
                   np.repeat([0.0, 1 - 2**-53], n // 2)])
    idx = np.floor(n * u).astype(np.int64)
    assert idx.max() == n - 1 and np.array_equal(idx[7], np.arange(n))
    orders, es, gs, rs = [], [], [], []
    for x, c in kernels:
        order, xs, e = ws.sorted_scalars(x, c)
        g = ws.gap_factors(xs, 0.25)
        orders.append(order)
        es.append(e)
        gs.append(g)
        rs.append(ws.weighted_row_sums(e, np.ones(n), g))
    fast = ws.skce_test_replicates(u, np.stack(orders), np.stack(es), np.stack(gs),
                                   np.stack(rs), n / (n - 1))
    H = oracle.form_matrix(p, y, "binary" if form == "binary" else form, 0.25)
    dense = np.array([oracle.skce_bootstrap_oracle(H, np.bincount(i, minlength=n).astype(float))
                      for i in idx])
    _close_null(fast, dense)
    # every row drawn once: T' = n^-2 sum_ij ((alpha (1 - delta_ij) - 2) h_ij)
    H_sum, H_diag = H.sum(), np.trace(H)
    alpha = n / (n - 1)
    assert fast[7] == pytest.approx((alpha * (H_sum - H_diag) - 2 * H_sum) / n**2,
                                    rel=CTEST_RTOL)


def test_canonical_quadratic_forms_against_the_kernel_matrix():
    p, y = _multi(300, 9, k=4)
    e = np.eye(4)[y] - p
    counts = np.random.default_rng(10).integers(0, 3, (5, 300)).astype(np.float64)
    q, r = ws.canonical_quadratic_forms(p, e, 0.4, counts, block=64)
    H = oracle.kernel_matrix(p, e, 0.4)
    np.testing.assert_allclose(r, H.sum(axis=1), rtol=0, atol=CTEST_RTOL * np.abs(r).max())
    dense = np.einsum("bi,ij,bj->b", counts, H, counts)
    np.testing.assert_allclose(q, dense, rtol=CTEST_RTOL)


# --------------------------------------------------------------------------
# "skce": the public test against the dense oracle, same seed, same resamples


@pytest.mark.parametrize(("form", "n", "h"), [
    ("binary", 2000, 0.2),
    ("binary", 301, "median"),
    ("confidence", 400, 0.1),
    ("classwise", 300, "median"),
    ("canonical", 300, 0.5),
    ("canonical", 200, "median"),
])
def test_skce_test_equals_the_dense_algorithm(form, n, h):
    if form == "binary":
        p, y = _binary(n, [11, n])
        call_y = y
    else:
        p, y = _multi(n, [12, n])
        call_y = y + 1  # R codes
    b = 40
    res = calibration_test(p, call_y, "skce", type=None if form == "binary" else form,
                           bandwidth=h, n_resamples=b, rng=13)
    inputs = oracle.kernel_inputs(p, y, form)
    if h == "median":
        hs = [oracle.median_oracle(x) for x, _ in inputs]
    else:
        hs = [h] * len(inputs)
    mats = [oracle.kernel_matrix(x, e, hk) for (x, e), hk in zip(inputs, hs, strict=True)]
    H = sum(mats) / len(mats)
    uq, statistic = oracle.skce_statistic_oracle(H)
    assert _rel(res.estimate, uq) <= CTEST_RTOL
    assert _rel(res.statistic, statistic) <= CTEST_RTOL
    rng = np.random.default_rng(13)
    dense = np.array([oracle.skce_bootstrap_oracle(H, oracle.resample_counts(rng, n))
                      for _ in range(b)])
    _close_null(res.null_distribution, dense)
    assert res.pvalue == oracle.pvalue_share(res.null_distribution, res.statistic)
    assert (res.method, res.n, res.type, res.n_resamples) == ("skce", n, form, b)
    expected_h = tuple(hs) if form == "classwise" else hs[0]
    assert res.bandwidth == pytest.approx(expected_h, rel=1e-15)


@pytest.mark.parametrize("form", ["binary", "canonical", "confidence", "classwise"])
@pytest.mark.parametrize("h", [0.3, "median"])
def test_skce_estimate_is_skce_exactly(form, h):
    if form == "binary":
        p, y = _binary(150, 14, "ties")
    else:
        p, y = _multi(150, 15)
        y = y + 1
    kind = "canonical" if form == "binary" else form
    res = calibration_test(p, y, type=kind, bandwidth=h, n_resamples=5, rng=0)
    assert res.estimate == calibr.skce(p, y, "uq", bandwidth=h, type=kind)


def test_skce_test_n_2():
    res = calibration_test([0.2, 0.9], [0, 1], n_resamples=20, rng=1)
    p = np.array([0.2, 0.9])
    H = oracle.kernel_matrix(p, np.array([0.0, 1.0]) - p, 0.2)
    assert res.statistic == pytest.approx(oracle.skce_statistic_oracle(H)[1], rel=1e-14)
    assert res.null_distribution.shape == (20,)


# --------------------------------------------------------------------------
# "skce_block"


@pytest.mark.parametrize(("form", "n", "h"), [
    ("binary", 1001, 0.2), ("binary", 4, "median"), ("canonical", 300, 0.4),
    ("confidence", 300, "median"), ("classwise", 301, 0.3),
])
def test_block_test_against_the_oracle(form, n, h):
    if form == "binary":
        p, y = _binary(n, [16, n])
        call_y = y
    else:
        p, y = _multi(n, [17, n])
        call_y = y + 1
    kind = None if form == "binary" else form
    res = calibration_test(p, call_y, "skce_block", type=kind, bandwidth=h)
    inputs = oracle.kernel_inputs(p, y, form)
    hs = [oracle.median_oracle(x) for x, _ in inputs] if h == "median" else [h] * len(inputs)
    xs, es = [x for x, _ in inputs], [e for _, e in inputs]
    if len(set(hs)) > 1:  # classwise median: one bandwidth per column
        parts = [oracle.block_test_oracle([x], [e], hk) for x, e, hk in zip(xs, es, hs,
                                                                            strict=True)]
        est = float(np.mean([part[0] for part in parts]))
    else:
        est, se, z, pv = oracle.block_test_oracle(xs, es, hs[0])
        assert _rel(res.stderr, se) <= CTEST_RTOL
        assert _rel(res.statistic, z) <= CTEST_RTOL
        assert res.pvalue == pytest.approx(pv, rel=1e-12)
    assert _rel(res.estimate, est) <= CTEST_RTOL
    ul = calibr.skce(p, call_y, "ul", bandwidth=h, type=kind or "canonical")
    assert _rel(res.estimate, ul) <= CTEST_RTOL
    assert res.n_resamples is None and res.null_distribution is None


def test_block_test_hand_worked():
    """Two pairs: h_1 = exp(-0.1/0.2) (0.8)(-0.1)... with exact values by hand."""
    p = np.array([0.2, 0.3, 0.6, 0.6])
    y = np.array([1, 0, 1, 1])
    e = y - p
    h1 = math.exp(-0.1 / 0.2) * e[0] * e[1]
    h2 = e[2] * e[3]
    mean = (h1 + h2) / 2
    se = math.sqrt(((h1 - mean) ** 2 + (h2 - mean) ** 2) / 2)
    res = calibration_test(p, y, "skce_block")
    assert res.estimate == pytest.approx(mean, rel=1e-15)
    assert res.stderr == pytest.approx(se, rel=1e-14)
    assert res.pvalue == pytest.approx(0.5 * math.erfc(mean / se / math.sqrt(2)), rel=1e-14)


def test_block_test_zero_variance():
    with pytest.warns(RuntimeWarning, match=r"^calibration_test: every pair gives the same "
                      r"kernel term 0, so the block statistic is 0/0; statistic and p-value "
                      r"are NaN\.$") as caught:
        res = calibration_test([0.0, 1.0, 0.0, 1.0, 0.0], [0, 1, 0, 1, 1], "skce_block")
    assert caught[0].filename == __file__  # points at the caller
    assert math.isnan(res.statistic) and math.isnan(res.pvalue) and res.estimate == 0.0
    p = np.array([0.5, 0.5, 0.5, 0.5])
    res = calibration_test(p, [1, 1, 1, 1], "skce_block")  # every pair 0.25: z = +inf
    assert res.statistic == math.inf and res.pvalue == 0.0


# --------------------------------------------------------------------------
# "consistency"


def test_consistency_resampling_binary_against_the_oracle():
    p, y = _binary(400, 18)
    res = calibration_test(p, y, "consistency", n_resamples=50, rng=19)
    dense = oracle.consistency_oracle(p, 19, 50)
    np.testing.assert_allclose(res.null_distribution, dense, rtol=1e-12, atol=1e-15)
    observed = oracle.binary_ece_oracle(p, y)
    assert res.statistic == pytest.approx(observed, rel=1e-12) and res.estimate == res.statistic
    assert res.pvalue == oracle.pvalue_share(res.null_distribution, res.statistic)
    assert (res.metric, res.type, res.n_resamples) == ("ece", "binary", 50)


def _labels_loop(u: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """Label of each row: the first k with u * (row sum) < p_0 + ... + p_k."""
    out = np.empty(ps.shape[0], np.int64)
    for i in range(ps.shape[0]):
        acc, target = 0.0, u[i] * np.cumsum(ps[i])[-1]
        for k in range(ps.shape[1]):
            acc += ps[i, k]
            if target < acc:
                break
        out[i] = k
    return out


def test_consistent_labels_rule():
    p, _ = _multi(500, 20, k=5, alpha=0.3)
    p[:50, 0] += p[:50, 1]  # zero-probability columns: never drawn
    p[:50, 1] = 0.0
    labels = _consistent_labels(np.random.default_rng(21), p)
    u = np.random.default_rng(21).random(500)
    np.testing.assert_array_equal(labels, _labels_loop(u, p))
    assert np.all(p[np.arange(500), labels] > 0)
    assert np.array_equal(_consistent_labels(np.random.default_rng(22), np.array([0.3, 0.9])),
                          (np.random.default_rng(22).random(2) < [0.3, 0.9]).astype(np.uint8))


@pytest.mark.parametrize(("metric", "kwargs"), [
    ("ece", {"type": "confidence", "bins": 7}),
    ("mce", {}),
    ("skce", {"estimator": "biased", "bandwidth": 0.3, "type": "classwise"}),
    ("mmce", {"bandwidth": "median"}),
])
def test_consistency_resampling_multiclass(metric, kwargs):
    """Each replicate is the metric of the resampled rows with labels drawn from them."""
    p, y = _multi(120, 23)
    res = calibration_test(p, y + 1, "consistency", metric=metric, n_resamples=15, rng=24,
                           **kwargs)
    fn = getattr(calibr, metric)
    metric_kwargs = {k: v for k, v in kwargs.items()}
    rng = np.random.default_rng(24)
    expected = []
    for _ in range(15):
        ps = p[oracle.resample_rows(rng, 120)]
        labels = _labels_loop(rng.random(120), ps)
        expected.append(fn(ps, labels + 1, **metric_kwargs))
    np.testing.assert_array_equal(res.null_distribution, expected)
    assert res.statistic == fn(p, y + 1, **metric_kwargs)
    default_type = {"ece": "classwise", "mce": "classwise", "mmce": "confidence"}
    assert res.type == kwargs.get("type", default_type.get(metric))
    assert res.bandwidth == kwargs.get("bandwidth")


# --------------------------------------------------------------------------
# CalibrationTests' own expectation (its R interface's tests): 500 predictions
# from Dirichlet(1, 1), every target class 2 -> p-value <= 1e-6 for the
# consistency and asymptotic SKCE tests; its kernel is exp(-3 ||x - x'||).


def _dirichlet_500():
    rng = np.random.default_rng(1234)
    return rng.dirichlet([1.0, 1.0], 500)


@pytest.mark.parametrize("kwargs", [
    {"method": "skce", "bandwidth": 1 / 3},
    {"method": "skce"},
    {"method": "skce", "type": "confidence"},
    {"method": "skce_block", "bandwidth": 1 / 3},
    {"method": "consistency"},
    {"method": "consistency", "metric": "skce", "bandwidth": 1 / 3, "n_resamples": 200},
    {"method": "consistency", "metric": "skce", "estimator": "biased", "bandwidth": 1 / 3,
     "n_resamples": 200},
])
def test_calibration_tests_expectation_all_targets_class_2(kwargs):
    p = _dirichlet_500()
    res = calibration_test(p, np.full(500, 2), rng=1, **kwargs)
    assert res.pvalue <= 1e-6
    # the binary form of the same data (P(class 2) = p[:, 1], every y = 1)
    if kwargs["method"] != "consistency" or "metric" not in kwargs:
        assert calibration_test(p[:, 1], np.ones(500), rng=1, **kwargs).pvalue <= 1e-6


# --------------------------------------------------------------------------
# p-values under the null: datasets drawn calibrated (fixed seeds 0..M-1), the
# number of p-values at or below 0.05 and 0.5 within the central 99.9% band of
# Binomial(M, level) -- exact bounds, not tuned to the seeds.


def _binomial_band(m: int, prob: float, level: float = 0.999) -> tuple[int, int]:
    pmf = [math.comb(m, k) * prob**k * (1 - prob) ** (m - k) for k in range(m + 1)]
    tail = (1 - level) / 2
    lo, acc = 0, 0.0
    while acc + pmf[lo] <= tail:
        acc += pmf[lo]
        lo += 1
    hi, acc = m, 0.0
    while acc + pmf[hi] <= tail:
        acc += pmf[hi]
        hi -= 1
    return lo, hi


def test_binomial_band():
    # Binomial(200, 0.05): P(X <= 1) = 0.00040 and P(X >= 22) = 0.00048, each <= 0.0005,
    # while P(X <= 2) = 0.0023 and P(X >= 21) exceed it
    assert _binomial_band(200, 0.05) == (2, 21)
    lo, hi = _binomial_band(200, 0.5)
    assert (lo, hi) == (200 - hi, 200 - lo)


@pytest.mark.parametrize(("name", "m", "draw", "kwargs"), [
    ("skce binary", 200, lambda s: _binary(200, [30, s]), {"n_resamples": 200}),
    ("skce confidence", 150, lambda s: _multi(200, [31, s]), {"type": "confidence",
                                                              "n_resamples": 200}),
    ("skce classwise", 150, lambda s: _multi(200, [32, s]), {"type": "classwise",
                                                             "n_resamples": 200}),
    ("skce canonical", 100, lambda s: _multi(120, [33, s]), {"n_resamples": 100}),
    ("skce_block", 300, lambda s: _binary(200, [34, s]), {"method": "skce_block"}),
    ("consistency", 150, lambda s: _binary(100, [35, s]), {"method": "consistency",
                                                           "n_resamples": 50}),
    ("spiegelhalter", 300, lambda s: _binary(200, [36, s]), {"method": "spiegelhalter"}),
    ("hosmer_lemeshow", 300, lambda s: _binary(300, [37, s]),
     {"method": "hosmer_lemeshow", "ddof": 0}),
])
def test_pvalues_uniform_under_the_null(name, m, draw, kwargs):
    pvalues = []
    for s in range(m):
        p, y = draw(s)
        if p.ndim == 2:
            y = y + 1
        pvalues.append(calibration_test(p, y, rng=s, **kwargs).pvalue)
    pvalues = np.array(pvalues)
    for level in (0.05, 0.5):
        lo, hi = _binomial_band(m, level)
        count = int(np.count_nonzero(pvalues <= level))
        assert lo <= count <= hi, (name, level, count, (lo, hi))


def test_miscalibration_is_detected():
    rng = np.random.default_rng(40)
    z = rng.normal(0, 1.5, 1000)
    p = 1 / (1 + np.exp(-2.0 * z))  # overconfident
    y = (rng.random(1000) < 1 / (1 + np.exp(-z))).astype(int)
    for method in ("skce", "consistency", "spiegelhalter", "hosmer_lemeshow"):
        assert calibration_test(p, y, method, rng=1, n_resamples=200).pvalue < 1e-3, method


# --------------------------------------------------------------------------
# Spiegelhalter


@pytest.mark.parametrize("kind", ["uniform", "ties"])
def test_spiegelhalter_equals_val_prob_and_the_oracle(kind):
    p, y = _binary(500, [41, len(kind)], kind)
    res = calibration_test(p, y, "spiegelhalter")
    stats = val_prob(p, y)
    assert res.statistic == stats["S:z"] and res.pvalue == stats["S:p"]
    z, pv = oracle.spiegelhalter_oracle(p, y.astype(float))
    assert res.statistic == pytest.approx(z, rel=1e-12)
    assert res.pvalue == pytest.approx(pv, rel=1e-12)
    brier = np.mean((y - p) ** 2)
    assert res.estimate == pytest.approx(brier - np.mean(p * (1 - p)), rel=1e-12)


def test_spiegelhalter_degenerate():
    with pytest.warns(RuntimeWarning, match=r"^calibration_test: every `p` is 0, 0\.5 or 1 and "
                      r"agrees with its outcome where it is 0 or 1, so Spiegelhalter's "
                      r"statistic is 0/0; statistic and p-value are NaN\.$") as caught:
        res = calibration_test([0.5, 0.5, 0.0], [1, 0, 0], "spiegelhalter")
    assert caught[0].filename == __file__
    assert math.isnan(res.statistic) and math.isnan(res.pvalue)
    res = calibration_test([0.5, 0.0], [1, 1], "spiegelhalter")  # y = 1 where p = 0
    assert res.statistic == math.inf and res.pvalue == 0.0


# --------------------------------------------------------------------------
# Hosmer-Lemeshow


@pytest.mark.parametrize(("kind", "n", "g"), [
    ("uniform", 1000, 10), ("uniform", 57, 10), ("ties", 800, 10), ("uniform", 5, 10),
    ("uniform", 400, 49), ("extremes", 600, 10), ("uniform", 300, 4),
])
def test_hosmer_lemeshow_against_the_oracle(kind, n, g):
    p, y = _binary(n, [42, n, g], kind)
    chi2, groups = oracle.hosmer_lemeshow_oracle(p, y.astype(float), g)
    if groups < 3:
        with pytest.raises(InputError, match="needs at least 3 groups"):
            calibration_test(p, y, "hosmer_lemeshow", groups=g)
        return
    res = calibration_test(p, y, "hosmer_lemeshow", groups=g)
    assert res.groups == groups and res.df == groups - 2
    if math.isinf(chi2):
        assert res.statistic == math.inf and res.pvalue == 0.0
    else:
        assert res.statistic == pytest.approx(chi2, rel=1e-12)
    assert res.estimate == res.statistic
    res0 = calibration_test(p, y, "hosmer_lemeshow", groups=g, ddof=0)
    assert res0.df == groups and res0.statistic == res.statistic
    assert res0.pvalue == _chi2_upper(res.statistic, groups)


def test_hosmer_lemeshow_ties_share_a_group():
    """Every row with the same p lands in the same group (here 4 values, 4 groups)."""
    p = np.repeat([0.1, 0.2, 0.6, 0.9], [10, 30, 50, 10])
    y = np.zeros(100, int)
    res = calibration_test(p, y, "hosmer_lemeshow")
    assert res.groups == 4 and res.df == 2
    expected = sum(n * v + n * v * v / (1 - v) for n, v in ((10, .1), (30, .2), (50, .6),
                                                            (10, .9)))
    assert res.statistic == pytest.approx(expected, rel=1e-13)


def test_r_quantile7_hand_worked():
    xs = np.array([0.0, 1.0, 2.0, 2.0, 10.0])
    probs = np.array([0.0, 0.1, 0.3, 0.5, 0.625, 0.9, 1.0])
    np.testing.assert_array_equal(_r_quantile7(xs, probs),
                                  oracle.r_quantile7(xs, probs))
    np.testing.assert_allclose(_r_quantile7(xs, probs), [0.0, 0.4, 1.2, 2.0, 2.0, 6.8, 10.0],
                               rtol=1e-15)


def test_chi2_upper_exact_cases():
    assert _chi2_upper(3.0, 2) == pytest.approx(math.exp(-1.5), rel=1e-15)
    assert _chi2_upper(3.0, 1) == pytest.approx(math.erfc(math.sqrt(1.5)), rel=1e-15)
    x = 7.5  # df = 4: e^{-x/2} (1 + x/2)
    assert _chi2_upper(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-14)
    x = 2.0  # df = 3: erfc(sqrt(x/2)) + sqrt(2x/pi) e^{-x/2}
    assert _chi2_upper(x, 3) == pytest.approx(
        math.erfc(1.0) + math.sqrt(2 * x / math.pi) * math.exp(-1.0), rel=1e-14)
    assert _chi2_upper(0.0, 8) == 1.0 and _chi2_upper(math.inf, 8) == 0.0
    assert math.isnan(_chi2_upper(math.nan, 8))
    assert 0.0 < _chi2_upper(3000.0, 2000) < 1.0  # no overflow in the terms


# --------------------------------------------------------------------------
# R: rms::val.prob's S:z/S:p, and Hosmer-Lemeshow computed in base R

_R_CODE = r"""
suppressPackageStartupMessages(library(rms))
calibr_sz <- function(p, y) unname(val.prob(p, y, pl = FALSE)[c("S:z", "S:p")])
calibr_hl <- function(p, y, g, ddof) {
  br <- unique(quantile(p, probs = seq(0, 1, 1 / g)))
  grp <- cut(p, breaks = br, include.lowest = TRUE)
  obs <- xtabs(cbind(1 - y, y) ~ grp)
  expct <- xtabs(cbind(1 - p, p) ~ grp)
  keep <- rowSums(obs) > 0
  chisq <- sum((obs[keep, ] - expct[keep, ])^2 / expct[keep, ])
  G <- sum(keep)
  c(chisq, G, pchisq(chisq, G - ddof, lower.tail = FALSE))
}
calibr_quantile7 <- function(x, probs) unname(quantile(x, probs, type = 7))
calibr_pchisq <- function(x, df) pchisq(x, df, lower.tail = FALSE)
"""


class RSession:
    def __init__(self) -> None:
        import rpy2.robjects as ro

        self._ro = ro
        ro.r(_R_CODE)

    def _vec(self, x):
        return self._ro.FloatVector(np.asarray(x, dtype=np.float64).tolist())

    def call(self, name: str, *args) -> np.ndarray:
        conv = [self._vec(a) if isinstance(a, np.ndarray) else a for a in args]
        return np.asarray(self._ro.r[name](*conv), dtype=np.float64)


@pytest.fixture(scope="module")
def r_session() -> RSession:
    try:
        session = RSession()
    except Exception as exc:  # noqa: BLE001 - any failure to reach R/rms is reported alike
        unavailable(f"R with rms not available through rpy2: {type(exc).__name__}: {exc}")
        raise  # pragma: no cover - unavailable() raised
    finally:
        _restore_library_path()
    return session


@pytest.mark.r
@pytest.mark.parametrize("seed", range(4))
def test_spiegelhalter_against_rms(r_session, seed):
    rng = np.random.default_rng([43, seed])
    n = [30, 500, 2000, 10_000][seed]
    p = rng.uniform(0.01, 0.99, n)
    y = (rng.random(n) < p ** [1.0, 1.3, 0.8, 1.0][seed]).astype(float)
    res = calibration_test(p, y, "spiegelhalter")
    z, pv = r_session.call("calibr_sz", p, y)
    assert res.statistic == pytest.approx(z, rel=VALPROB_RTOL, abs=VALPROB_ATOL)
    assert res.pvalue == pytest.approx(pv, rel=VALPROB_RTOL, abs=VALPROB_ATOL)


@pytest.mark.r
@pytest.mark.parametrize(("kind", "n", "g", "ddof"), [
    ("uniform", 1000, 10, 2), ("uniform", 333, 10, 0), ("ties", 800, 10, 2),
    ("ties", 2000, 8, 1), ("uniform", 200, 5, 2), ("uniform", 5000, 20, 2),
    ("extremes", 600, 10, 2), ("uniform", 40, 10, 2),
])
def test_hosmer_lemeshow_against_base_r(r_session, kind, n, g, ddof):
    p, y = _binary(n, [44, n, g], kind)
    if kind == "extremes":  # R's 0/0 for a group of p = 0 with no event: keep p in (0, 1)
        p = np.clip(p, 1e-9, 1 - 1e-9)
    res = calibration_test(p, y, "hosmer_lemeshow", groups=g, ddof=ddof)
    chisq, groups, pv = r_session.call("calibr_hl", p, y.astype(float), g, ddof)
    assert res.groups == int(groups)
    assert res.statistic == pytest.approx(chisq, rel=HL_RTOL)
    assert res.pvalue == pytest.approx(pv, rel=HL_RTOL, abs=1e-300)


@pytest.mark.r
def test_quantile7_and_chi2_tail_against_r(r_session):
    rng = np.random.default_rng(45)
    for n, g in ((5, 10), (57, 10), (1000, 7), (100, 3), (64, 20)):
        x = np.round(rng.random(n), 2)
        probs = np.arange(g + 1) * (1.0 / g)
        np.testing.assert_array_equal(_r_quantile7(np.sort(x), probs),
                                      r_session.call("calibr_quantile7", x, probs))
    for df in (1, 2, 3, 7, 8, 17, 18, 40):
        for x in (1e-3, 0.5, 3.0, 8.0, 20.0, 60.0, 200.0):
            expected = float(r_session.call("calibr_pchisq", x, df)[0])
            assert _chi2_upper(x, df) == pytest.approx(expected, rel=HL_RTOL), (x, df)


# --------------------------------------------------------------------------
# random numbers, result object, inputs


def test_same_rng_same_result():
    p, y = _binary(300, 50)
    for method in ("skce", "consistency"):
        a = calibration_test(p, y, method, rng=7, n_resamples=30)
        b = calibration_test(p, y, method, rng=np.random.default_rng(7), n_resamples=30)
        c = calibration_test(p, y, method, rng=8, n_resamples=30)
        assert np.array_equal(a.null_distribution, b.null_distribution)
        assert a.pvalue == b.pvalue and a.statistic == b.statistic
        assert not np.array_equal(a.null_distribution, c.null_distribution)
    gen = np.random.default_rng(9)  # a Generator is used as is: its state advances
    first = calibration_test(p, y, rng=gen, n_resamples=10).null_distribution
    second = calibration_test(p, y, rng=gen, n_resamples=10).null_distribution
    assert not np.array_equal(first, second)
    assert calibration_test(p, y, rng=None, n_resamples=10).n_resamples == 10


def test_batches_do_not_change_the_draws(monkeypatch):
    p, y = _binary(100, 51)
    whole = calibration_test(p, y, rng=3, n_resamples=25).null_distribution
    monkeypatch.setattr(ct_module, "_IDX_BATCH", 300)  # batches of 3 replicates
    assert np.array_equal(calibration_test(p, y, rng=3, n_resamples=25).null_distribution, whole)
    pm, ym = _multi(60, 52)
    whole = calibration_test(pm, ym + 1, rng=3, n_resamples=7).null_distribution
    monkeypatch.setattr(ct_module, "_COUNTS_BATCH", 130)  # batches of 2 replicates
    batched = calibration_test(pm, ym + 1, rng=3, n_resamples=7).null_distribution
    np.testing.assert_allclose(batched, whole, rtol=1e-13)


def test_result_is_frozen_and_read_only():
    res = calibration_test(*_binary(50, 53), rng=1, n_resamples=5)
    assert isinstance(res, CalibrationTestResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.pvalue = 0.5
    with pytest.raises(ValueError, match="read-only"):
        res.null_distribution[0] = 1.0
    assert "null_distribution" not in repr(res)


def test_inputs_untouched_and_pandas_same_as_numpy():
    p, y = _binary(120, 54)
    p0, y0 = p.copy(), y.copy()
    a = calibration_test(p, y, rng=1, n_resamples=10)
    assert np.array_equal(p, p0) and np.array_equal(y, y0)
    b = calibration_test(pd.Series(p), pd.Series(y), rng=1, n_resamples=10)
    assert a.statistic == b.statistic and np.array_equal(a.null_distribution,
                                                         b.null_distribution)
    pm, ym = _multi(80, 55)
    frame = pd.DataFrame(pm, columns=["a", "b", "c"])
    labels = pd.Series(np.array(["a", "b", "c"])[ym])
    c = calibration_test(frame, labels, type="classwise", rng=2, n_resamples=10)
    d = calibration_test(pm, ym + 1, type="classwise", rng=2, n_resamples=10)
    assert c.statistic == d.statistic and np.array_equal(c.null_distribution,
                                                         d.null_distribution)
    q = pm.copy()
    q[0] = np.nan
    e = calibration_test(q, ym + 1, "skce_block", na_rm=True)
    assert e.n == 79


def test_canonical_cost_warning(monkeypatch):
    monkeypatch.setattr(ct_module, "CANONICAL_WARN_COST", 1e4)
    pm, ym = _multi(50, 56)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        calibration_test(pm, ym + 1, rng=1, n_resamples=10)
    assert len(caught) == 1
    assert caught[0].filename == __file__  # points at the caller
    assert str(caught[0].message) == (
        "calibration_test: the canonical SKCE test costs O(n^2 (K + n_resamples)) "
        "operations, here n = 50, K = 3, n_resamples = 10; type=\"confidence\" or "
        "\"classwise\" costs O(n) per resample.")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calibration_test(pm, ym + 1, rng=1, n_resamples=10, type="confidence")


# --------------------------------------------------------------------------
# errors


_P, _Y = _binary(20, 60)


NRES = r"^`n_resamples` must be an integer from 1 to 10,000,000; got "


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "kce"}, InputError, r"^`method` must be one of 'skce', 'skce_block', "
     r"'consistency', 'spiegelhalter', 'hosmer_lemeshow', 'ks', 'kuiper'; got 'kce'\.$"),
    ({"n_resamples": 0}, InputError, NRES + r"0\.$"),
    ({"n_resamples": 2.5}, InputError, NRES + r"2\.5\.$"),
    ({"n_resamples": True}, InputError, NRES + r"True"),
    ({"n_resamples": 10**7 + 1}, InputError,
     NRES + r"10000001\.$"),
    ({"rng": -1}, InputError, r"^`rng` must be None, a nonnegative integer seed or a "
     r"numpy\.random\.Generator; got -1\.$"),
    ({"rng": 1.5}, InputTypeError, r"^`rng` must be None, a nonnegative integer seed or a "
     r"numpy\.random\.Generator; got float\.$"),
    ({"rng": np.random.RandomState(0)}, InputTypeError, r"; got RandomState\.$"),
    ({"rng": True}, InputTypeError, r"; got bool\.$"),
    ({"bandwidth": -1.0}, InputError, r"^`bandwidth`"),
    ({"type": "conf"}, InputError, r"^`type` must be one of 'canonical', 'confidence', "
     r"'classwise', 'top-label'; got 'conf'\.$"),
    ({"metric": "brier"}, InputError, r"^`metric` must be one of 'ece', 'mce', 'skce', "
     r"'mmce', 'calibration_error', 'smece'; got 'brier'\.$"),
    ({"bins": 0}, InputError, r"^`bins` must be a single positive integer; got 0\.$"),
    ({"estimator": "u"}, InputError, r"^`estimator` must be one of 'uq', 'ul', 'biased'; "
     r"got 'u'\.$"),
    ({"groups": 2}, InputError, r"^`groups` must be an integer from 3 to 100,000; got 2\.$"),
    ({"groups": 10**5 + 1}, InputError,
     r"^`groups` must be an integer from 3 to 100,000; got 100001\.$"),
    ({"ddof": -1}, InputError, r"^`ddof` must be a nonnegative integer; got -1\.$"),
    ({"na_rm": 1}, InputError, r"^`na_rm` must be True or False; got 1\.$"),
])
def test_option_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        calibration_test(_P, _Y, **kwargs)


@pytest.mark.parametrize("method", ["spiegelhalter", "hosmer_lemeshow"])
def test_binary_only_methods_refuse_a_matrix(method):
    pm, ym = _multi(10, 61)
    with pytest.raises(InputError, match=(
            rf'^`method = "{method}"` is for binary outcomes only: `p` must be a vector of '
            r"probabilities P\(y = 1\); got an array of shape \(10, 3\)\. For a two-class "
            r"matrix, pass the column of the positive class \(e\.g\. p\[:, 1\]\)\.$")):
        calibration_test(pm, ym + 1, method)
    with pytest.raises(InputError, match=r"got an array of shape \(10, 3\)\. For a two-class"):
        calibration_test(pd.DataFrame(pm), ym + 1, method)


@pytest.mark.parametrize(("p", "y", "kwargs", "message"), [
    ([0.2, 0.2, 0.7, 0.7], [0, 1, 1, 0], {"method": "hosmer_lemeshow"},
     r'^`method = "hosmer_lemeshow"` needs at least 3 groups of distinct risk; the 10 '
     r"quantile groups of `p` merge into 2 \(2 distinct values of `p` among 4 "
     r"observations\)\.$"),
    ([0.2] * 5, [0, 1, 1, 0, 0], {"method": "hosmer_lemeshow"},
     r"merge into 1 \(1 distinct value of `p` among 5 observations\)\.$"),
    ([0.1, 0.2, 0.3, 0.4], [0, 1, 1, 0], {"method": "hosmer_lemeshow", "groups": 3, "ddof": 3},
     r"^`ddof` must leave at least 1 degree of freedom; got ddof = 3 with 3 groups\.$"),
    ([0.3], [1], {}, r'^`method = "skce"` needs at least 2 observations; got 1\.$'),
    ([0.3, 0.4, 0.5], [1, 0, 1], {"method": "skce_block"},
     r'^`method = "skce_block"` needs at least 4 observations; got 3\.$'),
    ([0.3] * 4, [1, 0, 1, 0], {"bandwidth": "median"},
     r'^`bandwidth = "median"` needs at least two distinct predictions'),
    ([0.3] * 4, [1, 0, 1, 0], {"method": "skce_block", "bandwidth": "median"},
     r'^`bandwidth = "median"` needs at least two distinct predictions'),
    ([0.3, 1.2], [1, 0], {}, r"^`p` must lie in \[0, 1\]"),
    ([0.3, 0.2], [1, 2], {"method": "spiegelhalter"}, r"^`y` must"),
])
def test_data_errors(p, y, kwargs, message):
    with pytest.raises(InputError, match=message):
        calibration_test(p, y, **kwargs)


def test_classwise_median_names_the_constant_column():
    p = np.array([[0.5, 0.5, 0.0], [0.3, 0.7, 0.0], [0.6, 0.4, 0.0], [0.2, 0.8, 0.0]])
    for method in ("skce", "skce_block"):
        with pytest.raises(InputError) as err:
            calibration_test(p, [1, 2, 1, 2], method, type="classwise", bandwidth="median")
        with pytest.raises(InputError) as same:
            calibr.skce(p, [1, 2, 1, 2], type="classwise", bandwidth="median")
        assert str(err.value) == str(same.value)
        assert str(err.value).endswith("the column of class 3 has all its values equal (0.0).")
    frame = pd.DataFrame(p, columns=["a", "b", "c"])
    with pytest.raises(InputError, match=r"the column of class 'c' has all its values equal"):
        calibration_test(frame, ["a", "b", "a", "b"], type="classwise", bandwidth="median")


def test_metric_errors_name_the_metric_option():
    pm, ym = _multi(10, 62)
    with pytest.raises(InputError, match=r"^`type` must be one of 'classwise', 'confidence', "
                       r"'top-label'; got 'canonical'\.$"):
        calibration_test(pm, ym + 1, "consistency", type="canonical")


def test_binary_form_is_half_the_canonical_form_of_two_columns():
    """CalibrationTests.jl sees a binary prediction as the vector (1 - p, p): its
    kernel terms with bandwidth sqrt(2) h are twice calibr's binary ones with h
    (distance sqrt(2) |p - p'|, <e, e'> = 2 (y - p)(y' - p')), so on the same
    resamples every statistic doubles and the p-value is the same."""
    p, y = _binary(400, 63)
    h = 0.15
    binary = calibration_test(p, y, bandwidth=h, n_resamples=50, rng=4)
    two = calibration_test(np.column_stack([1 - p, p]), y + 1, bandwidth=math.sqrt(2) * h,
                           n_resamples=50, rng=4)
    assert two.type == "canonical"
    assert two.statistic == pytest.approx(2 * binary.statistic, rel=CTEST_RTOL)
    assert two.estimate == pytest.approx(2 * binary.estimate, rel=CTEST_RTOL)
    _close_null(two.null_distribution, 2 * binary.null_distribution)
    assert two.pvalue == binary.pvalue
