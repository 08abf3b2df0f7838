"""Frequency weights of ece(), mce(), skce() and mmce() (``docs/definitions.md``,
"Frequency weights").

* whole-number weights == the rows repeated (``numpy.repeat``), for every metric,
  form and estimator, in calibr and in the R reference (which has no weights:
  it gets the repeated rows);
* real weights == the readable oracles of ``tests/oracles/weights.py``;
* a weight of 0 == the row dropped, bit for bit; na_rm=True drops the weights
  of the rows it drops;
* scaling every weight by a constant leaves the binned and biased values
  unchanged (a property test; bit for bit for powers of two in "biased");
* every error, its message pinned.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.weights import weighted_binned_oracle, weighted_metric_oracle
from tolerances import (
    ORACLE_ATOL,
    ORACLE_RTOL,
    R_ATOL,
    R_RTOL,
    SKCE_ATOL,
    SKCE_RTOL,
    WEIGHTS_ATOL,
    WEIGHTS_RTOL,
)

import calibr

# ------------------------------------------------------------------ cases

#: (metric, form, estimator): every form and estimator each metric supports
#: with weights ("ul" and bandwidth="median" refuse them: see the errors below).
CASES = (
    [(m, f, None) for m in ("ece", "mce") for f in ("binary", "classwise", "confidence")]
    + [("skce", f, e) for f in ("binary", "canonical", "confidence", "classwise")
       for e in ("uq", "biased")]
    + [("mmce", "binary", None), ("mmce", "confidence", None)]
)
IDS = ["-".join(x for x in case if x) for case in CASES]
SEEDS = range(6)
BINS = 7
BANDWIDTH = 0.3


def _data(form: str, seed: int, n: int | None = None, k: int = 3):
    """Seeded (p, y) with ties: y 0/1 for "binary", R's codes 1..K otherwise."""
    rng = np.random.default_rng([20240611, seed])
    n = int(rng.integers(5, 60)) if n is None else n
    if form == "binary":
        p = rng.random(n)
        if seed % 2 == 0:
            p = np.round(p, 1)  # ties (and values on the breaks)
        y = (rng.random(n) < p).astype(np.int64)
        return p, y
    p = rng.dirichlet(np.ones(k), n)
    if seed % 2 == 0:  # repeated rows and tied top labels
        p[: n // 3] = p[0]
        p[n // 3: n // 2] = np.full(k, 1.0 / k)
    y = rng.integers(1, k + 1, n)
    return p, y


def _weights(n: int, seed: int) -> np.ndarray:
    """Weights among 0, 1, 2 and 7, with at least two rows of positive weight."""
    rng = np.random.default_rng([7, seed])
    w = rng.choice([0, 1, 2, 7], n).astype(np.int64)
    w[:2] = [2, 1]
    return w


def _call(case, p, y, weights=None, **kw):
    metric, form, estimator = case
    func = getattr(calibr, metric)
    if weights is not None:
        kw["weights"] = weights
    if metric in ("ece", "mce"):
        if form != "binary":
            kw["type"] = form
        return func(p, y, bins=BINS, **kw)
    if metric == "mmce":
        return func(p, y, bandwidth=BANDWIDTH, **kw)
    if form != "binary":
        kw["type"] = form
    return func(p, y, estimator, bandwidth=BANDWIDTH, **kw)


def _repeat(p, y, w):
    return np.repeat(p, w, axis=0), np.repeat(y, w)


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=atol)


# ------------------------------------------------------------------ repeated rows


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_whole_weights_equal_repeated_rows(case, seed):
    p, y = _data(case[1], seed)
    w = _weights(len(y), seed)
    got = _call(case, p, y, w)
    want = _call(case, *_repeat(p, y, w))
    assert _close(got, want, WEIGHTS_RTOL, WEIGHTS_ATOL), (got, want)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_unit_weights_equal_no_weights(case):
    p, y = _data(case[1], 11)
    got = _call(case, p, y, np.ones(len(y)))
    assert _close(got, _call(case, p, y), WEIGHTS_RTOL, WEIGHTS_ATOL)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_weights_none_is_the_unweighted_call(case):
    p, y = _data(case[1], 12)
    assert _call(case, p, y, None) == _call(case, p, y)


def test_uq_counts_pairs_of_a_repeated_row():
    """One row of weight 3 is three equal rows: three pairs, each e^2 = 0.64."""
    assert math.isclose(calibr.skce([0.2], [1], weights=[3]), 0.64, rel_tol=1e-15)
    assert calibr.skce([0.2, 0.9], [1, 0], weights=[3, 0]) == calibr.skce(
        [0.2], [1], weights=[3])


@pytest.mark.r
@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_whole_weights_equal_r_on_repeated_rows(rref, case, seed):
    metric, form, estimator = case
    p, y = _data(form, seed)
    w = _weights(len(y), seed)
    got = _call(case, p, y, w)
    rp, ry = _repeat(p, y, w)
    r_type = "canonical" if form == "binary" else form
    if metric in ("ece", "mce"):
        kw = {} if form == "binary" else {"type": form}
        want = getattr(rref, metric)(rp, ry, bins=BINS, **kw)
        assert _close(got, want, R_RTOL, R_ATOL), (got, want)
    elif metric == "mmce":
        want = rref.mmce(rp, ry, bandwidth=BANDWIDTH)
        assert _close(got, want, SKCE_RTOL, SKCE_ATOL), (got, want)
    else:
        want = rref.skce(rp, ry, estimator=estimator, bandwidth=BANDWIDTH, type=r_type)
        assert _close(got, want, SKCE_RTOL, SKCE_ATOL), (got, want)


# ------------------------------------------------------------------ real weights


def _oracle(case, p, y, w):
    metric, form, estimator = case
    codes = y if form == "binary" else y - 1
    if metric in ("ece", "mce"):
        return weighted_binned_oracle(metric, p, codes, w, BINS, form)
    return weighted_metric_oracle(metric, p, codes, w, form, estimator or "biased", BANDWIDTH)


REAL_CASES = [c for c in CASES if c[2] != "uq"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", REAL_CASES, ids=["-".join(x for x in c if x) for c in REAL_CASES])
def test_real_weights_match_the_oracle(case, seed):
    p, y = _data(case[1], seed)
    rng = np.random.default_rng([3, seed])
    w = rng.exponential(1.0, len(y)) * (rng.random(len(y)) < 0.8)
    w[0] = 0.37
    got = _call(case, p, y, w)
    want = _oracle(case, p, y, w)
    assert _close(got, want, ORACLE_RTOL, ORACLE_ATOL), (got, want)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_whole_weights_match_the_oracle(case, seed):
    p, y = _data(case[1], seed)
    w = _weights(len(y), seed)
    got = _call(case, p, y, w)
    assert _close(got, _oracle(case, p, y, w), ORACLE_RTOL, ORACLE_ATOL)


def test_mce_leaves_out_bins_of_weight_zero():
    """Hand-worked: the bin of 0.05 holds only a row of weight 0, so it is empty."""
    p, y, w = [0.05, 0.95, 0.5], [1, 1, 0], [0.0, 1.5, 0.5]
    assert calibr.mce(p, y, weights=w) == 0.5
    # ECE = (1.5 * 0.05 + 0.5 * 0.5) / 2
    assert math.isclose(calibr.ece(p, y, weights=w), (1.5 * 0.05 + 0.5 * 0.5) / 2.0,
                        rel_tol=1e-15)


# ------------------------------------------------------------------ zeros, na_rm


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_weight_zero_is_the_row_dropped_bit_for_bit(case):
    p, y = _data(case[1], 4)
    rng = np.random.default_rng(5)
    w = rng.exponential(1.0, len(y)) if case[2] != "uq" else rng.integers(1, 5, len(y))
    w = w.astype(float)
    w[::3] = 0.0
    keep = w > 0
    assert _call(case, p, y, w) == _call(case, p[keep], y[keep], w[keep])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_na_rm_drops_the_weights_of_dropped_rows(case):
    p, y = _data(case[1], 6)
    w = _weights(len(y), 6).astype(float)
    p = p.copy()
    p[3] = np.nan  # a missing p (in one column of a matrix)
    y = y.astype(float)
    y[5] = np.nan
    keep = np.ones(len(y), bool)
    keep[[3, 5]] = False
    got = _call(case, p, y, w, na_rm=True)
    want = _call(case, p[keep], y[keep].astype(np.int64), w[keep])
    assert got == want


# ------------------------------------------------------------------ scaling


SCALED = [c for c in CASES if c[2] != "uq"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(SCALED), seed=st.integers(0, 10**6),
       c=st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False))
def test_scaling_the_weights_changes_nothing(case, seed, c):
    p, y = _data(case[1], seed, n=30)
    rng = np.random.default_rng(seed)
    w = rng.exponential(1.0, len(y))
    assert _close(_call(case, p, y, w * c), _call(case, p, y, w), WEIGHTS_RTOL, WEIGHTS_ATOL)


@pytest.mark.parametrize("case", [c for c in SCALED if c[0] in ("skce", "mmce")],
                         ids=lambda c: "-".join(x for x in c if x))
@pytest.mark.parametrize("power", [-40, -1, 3, 200])
def test_powers_of_two_keep_every_bit_of_biased(case, power):
    p, y = _data(case[1], 8)
    w = np.random.default_rng(9).exponential(1.0, len(y))
    assert _call(case, p, y, np.ldexp(w, power)) == _call(case, p, y, w)


def test_huge_weights_do_not_overflow_biased():
    p, y = _data("binary", 1, n=20)
    w = np.full(20, 1e300)
    got = calibr.skce(p, y, "biased", weights=w)
    assert _close(got, calibr.skce(p, y, "biased"), WEIGHTS_RTOL, WEIGHTS_ATOL)
    assert _close(calibr.ece(p, y, weights=w), calibr.ece(p, y), WEIGHTS_RTOL, WEIGHTS_ATOL)


# ------------------------------------------------------------------ errors

P5 = np.array([0.1, 0.4, 0.35, 0.8, 0.6])
Y5 = np.array([0, 0, 1, 1, 1])
METRICS = ["ece", "mce", "skce", "mmce"]


def _raises(metric: str, weights, message: str, exc=calibr.InputError, **kw):
    with pytest.raises(exc, match="^" + re.escape(message) + "$"):
        getattr(calibr, metric)(P5, Y5, weights=weights, **kw)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(("weights", "message"), [
    ([1, 2, 3, 4], "`weights` must have one value per observation (5); got 4."),
    (np.ones((5, 1)), "`weights` must be a vector of nonnegative numbers, one per "
     "observation; got an array of shape (5, 1)."),
    (3.0, "`weights` must be a vector of nonnegative numbers, one per observation; "
     "got a scalar."),
    ([1, 2, -1, 1, -3], "`weights` must be nonnegative; 2 values do not, the first at "
     "position 2 (-1.0)."),
    ([1, np.nan, 1, 1, 1], "`weights` must not contain missing values; 1 value is missing, "
     "the first at position 1. na_rm=True drops observations with a missing `p` or `y`, "
     "never a missing weight."),
    ([1, None, 1, pd.NA, 1], "`weights` must not contain missing values; 2 values are "
     "missing, the first at position 1. na_rm=True drops observations with a missing `p` "
     "or `y`, never a missing weight."),
    ([np.inf, 1, 1, 1, 1], "`weights` must be finite; 1 value does not, the first at "
     "position 0 (inf)."),
    ([0, 0, 0, 0, 0], "`weights` must have a positive total; all 5 weights are 0."),
    ([1e308] * 5, "`weights` must have a finite total; their sum overflows a float64."),
])
def test_weight_errors(metric, weights, message):
    _raises(metric, weights, message)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(("weights", "message"), [
    (["a", "b", "c", "d", "e"], "`weights` must hold real numbers; 5 values are not, the "
     "first at position 0 ('a' of type str)."),
    (np.array(["a", "b", "c", "d", "e"]), "`weights` must be numeric (integer or float); got "
     "dtype <U1, the first value at position 0 ('a')."),
    ([True, False, True, True, True], "`weights` must be numeric (integer or float); got "
     "dtype bool, the first value at position 0 (True)."),
    ({1, 2, 3, 4, 5}, "`weights` must be an array-like (a list, tuple, numpy array or pandas "
     "object); got a set."),
])
def test_weight_type_errors(metric, weights, message):
    _raises(metric, weights, message, exc=calibr.InputTypeError)


@pytest.mark.parametrize("metric", METRICS)
def test_nan_weight_is_an_error_even_where_na_rm_drops_the_row(metric):
    p = P5.copy()
    p[1] = np.nan
    with pytest.raises(calibr.InputError, match=r"^`weights` must not contain missing values; "
                       r"1 value is missing, the first at position 1\."):
        getattr(calibr, metric)(p, Y5, weights=[1, np.nan, 1, 1, 1], na_rm=True)


@pytest.mark.parametrize("metric", METRICS)
def test_weights_of_the_kept_rows_all_zero(metric):
    p = P5.copy()
    p[[0, 1]] = np.nan
    with pytest.raises(calibr.InputError, match="^" + re.escape(
            "`weights` must have a positive total; all 3 weights (of the observations kept "
            "by na_rm=True) are 0.") + "$"):
        getattr(calibr, metric)(p, Y5, weights=[1, 1, 0, 0, 0], na_rm=True)


def test_uq_refuses_fractional_weights():
    _raises("skce", [0.5, 1, 1, 1.25, 1],
            '`weights` must be whole numbers (counts of repeated rows) for estimator = "uq"; '
            "2 values do not, the first at position 0 (0.5). Real-valued weights are accepted "
            'by estimator = "biased", mmce(), ece() and mce().')


def test_uq_needs_a_total_of_two():
    _raises("skce", [1, 0, 0, 0, 0], '`weights` must total at least 2 for estimator = "uq" '
            "(the size of the repeated sample); got 1.0.")
    # "biased" takes a single row: e = 0 - 0.1
    assert math.isclose(calibr.skce(P5, Y5, "biased", weights=[1, 0, 0, 0, 0]), 0.01,
                        rel_tol=1e-15)


def test_uq_total_must_be_exact():
    _raises("skce", [2.0**52, 2.0**52, 0, 0, 0], '`weights` must total less than 2**53 for '
            'estimator = "uq" (the size of the repeated sample, exact in a float64); got '
            "9007199254740992.0.")


def test_ul_refuses_weights():
    _raises("skce", [1, 1, 1, 1, 1], '`weights` cannot be used with estimator = "ul": its '
            "disjoint pairs (1, 2), (3, 4), ... depend on the order of the rows, which weights "
            'do not give; use estimator = "uq" or "biased".', estimator="ul")


@pytest.mark.parametrize("metric", ["skce", "mmce"])
def test_median_bandwidth_refuses_weights(metric):
    _raises(metric, [1, 1, 1, 1, 1], '`weights` cannot be used with bandwidth = "median"; '
            "pass a positive number as `bandwidth`, e.g. calibr.median_bandwidth() of the "
            "repeated rows (np.repeat(p, weights, axis=0) for whole-number weights).",
            bandwidth="median")


def test_pandas_weights_must_share_the_index_of_p():
    p = pd.Series(P5, index=list("abcde"))
    y = pd.Series(Y5, index=list("abcde"))
    with pytest.raises(calibr.InputError, match="^`weights` and `p` are pandas objects with "
                       "different indexes"):
        calibr.ece(p, y, weights=pd.Series(np.ones(5)))
    assert calibr.ece(p, y, weights=pd.Series(np.ones(5), index=list("abcde"))) == calibr.ece(
        P5, Y5, weights=np.ones(5))


@pytest.mark.parametrize("metric", METRICS)
def test_weights_are_never_modified(metric):
    w = np.array([1.0, 2.0, 0.0, 7.0, 1.0])
    before = w.copy()
    getattr(calibr, metric)(P5, Y5, weights=w)
    w.flags.writeable = False  # read-only weights are read as well
    getattr(calibr, metric)(P5, Y5, weights=w)
    assert np.array_equal(w, before)


def test_summarise_refuses_weights_instead_of_ignoring_them():
    """A `weights` option of a metric in summarise() would be one weight per row of
    the whole frame: refused with a message pointing at summarise(weights=) (it was
    once silently ignored)."""
    import pandas as pd

    df = pd.DataFrame({"g": [0, 0, 1, 1], "p": [0.2, 0.7, 0.4, 0.9], "y": [0, 1, 1, 1]})
    w = np.array([1.0, 2.0, 3.0, 4.0])
    message = (r"^The option 'weights' of metric 'ece' is one weight per row of the data; "
               r"name the weights column with summarise\(\.\.\., weights='column'\)")
    for data in (df, df.groupby("g")):
        with pytest.raises(calibr.InputError, match=message):
            calibr.summarise(data, "p", "y", metrics=[calibr.metric("ece", weights=w)])


def test_weights_totalling_two_are_enough_for_uq():
    """skce uq needs weights totalling at least 2: exactly 2 (two rows of weight 1) make
    one pair, and the estimate is that pair's kernel term (by hand: e = y - p, exp(-|0.2
    - 0.7| / 0.5) e_1 e_2 = exp(-1) * (-0.2) * 0.3)."""
    got = calibr.skce([0.2, 0.7], [0, 1], "uq", 0.5, weights=[1, 1])
    assert got == pytest.approx(math.exp(-1.0) * (-0.2) * 0.3, rel=1e-14)
