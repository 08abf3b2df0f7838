"""skce() and mmce(): hand-worked cases, the fast exact kernels against the readable
O(n^2) numpy oracles (random and adversarial inputs, hypothesis), the exact median
heuristic, identities, and every error message pinned.

Live parity with the R reference is in ``test_skce_r.py``.
"""

from __future__ import annotations

import doctest
import math
import os
import subprocess
import sys
import textwrap
import threading
import zlib

import numba
import numpy as np
import pandas as pd
import pytest
from conftest import unavailable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.skce import median_oracle, skce_oracle
from tolerances import ORACLE_ATOL, SKCE_ATOL, SKCE_RTOL

import calibr
from calibr import InputError
from calibr._kernels import canonical, scalar_sums, vexp
from calibr._kernels import scalar_median as smed
from calibr._kernels import top_label as tl
from calibr._kernels.skce import estimate_from_sums
from calibr._metrics import kernel as _kernel_metrics
from calibr._metrics.kernel import mmce, skce

ESTIMATORS = ("uq", "ul", "biased")
BANDWIDTHS = (1e-4, 1e-3, 0.05, 0.2, 1.0, 10.0, 1e4, "median")


def close(a, b, rtol=SKCE_RTOL, atol=SKCE_ATOL):
    return math.isclose(a, b, rel_tol=rtol, abs_tol=atol)


# ------------------------------------------------------------------ helpers


def _scalar_inputs(rng, n, kind):
    if kind == "uniform":
        x = rng.random(n)
    elif kind == "ties":
        x = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n)
    elif kind == "rounded":
        x = np.round(rng.random(n), 2)
    elif kind == "clustered":  # near-equal values: tiny gaps
        x = 0.5 + rng.integers(-3, 4, n) * 1e-12
    elif kind == "extremes":  # 0, 1 and values near them
        x = rng.choice([0.0, 5e-324, 1e-300, 1e-17, 1 - 2**-53, 1.0, 0.5], n)
    else:
        raise ValueError(kind)
    c = (rng.random(n) < x).astype(np.uint8)
    return x, c


def _fast_scalar(x, c, estimator, h):
    if estimator == "ul":
        return scalar_sums.scalar_ul(x, c, h)
    total, diag, _ = scalar_sums.scalar_pair_sum(x, c, h)
    return estimate_from_sums(estimator, x.shape[0], total, diag)


def _fast_canonical(p, codes, estimator, h, block=canonical.BLOCK):
    if estimator == "ul":
        return canonical.canonical_ul(p, codes, h, block)
    total, diag, _ = canonical.canonical_pair_sum(p, codes, h, block)
    return estimate_from_sums(estimator, p.shape[0], total, diag)


def _onehot(codes, k):
    return np.eye(k)[codes]


def _dirichlet(rng, n, k, kind):
    if kind == "dirichlet":
        p = rng.dirichlet(np.ones(k), n)
    elif kind == "onehot":
        p = _onehot(rng.integers(0, k, n), k)
    elif kind == "repeated":  # heavy ties: few distinct rows
        p = rng.dirichlet(np.ones(k), 3)[rng.integers(0, 3, n)]
    elif kind == "constant_column":
        p = rng.dirichlet(np.ones(k - 1), n) * 0.75
        p = np.column_stack([p, np.full(n, 0.25)])
    else:
        raise ValueError(kind)
    return p


# ------------------------------------------------------------- hand-worked


def test_two_points_by_hand():
    """n = 2: uq = ul = e1 e2 exp(-|p1 - p2| / h); biased = (2 h12 + e1^2 + e2^2) / 4."""
    p = np.array([0.3, 0.9])
    y = np.array([1, 0])
    e1, e2 = 1 - 0.3, 0 - 0.9
    h12 = e1 * e2 * math.exp(-abs(0.3 - 0.9) / 0.2)
    assert close(skce(p, y), h12, rtol=1e-14)
    assert close(skce(p, y, "ul"), h12, rtol=1e-14)
    assert close(skce(p, y, "biased"), (2 * h12 + e1**2 + e2**2) / 4, rtol=1e-14)
    # the only positive distance is the median
    assert close(skce(p, y, bandwidth="median"), e1 * e2 * math.exp(-1.0), rtol=1e-14)


def test_three_points_by_hand_canonical():
    p = np.array([[0.5, 0.5], [0.2, 0.8], [0.5, 0.5]])
    codes = [1, 2, 2]  # 1-based, as in R
    e = _onehot(np.array([0, 1, 1]), 2) - p
    d = np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1))
    k = np.exp(-d / 0.3)
    pairs = [(0, 1), (0, 2), (1, 2)]
    t = sum(k[i, j] * e[i] @ e[j] for i, j in pairs)
    assert close(skce(p, codes, bandwidth=0.3), t / 3, rtol=1e-13)
    assert close(skce(p, codes, "ul", 0.3), k[0, 1] * e[0] @ e[1], rtol=1e-13)
    assert close(skce(p, codes, "biased", 0.3), (2 * t + (e**2).sum()) / 9, rtol=1e-13)
    # positive distances: |(0.3, -0.3)| twice -> median sqrt(0.18) (the tie pair is excluded)
    assert canonical.canonical_median(p) == median_oracle(p) == d[0, 1]


def test_ul_uses_the_given_order():
    rng = np.random.default_rng(1)
    p = rng.random(9)
    y = (rng.random(9) < p).astype(int)
    perm = rng.permutation(9)
    assert close(skce(p, y), skce(p[perm], y[perm]))
    assert close(skce(p, y, "biased"), skce(p[perm], y[perm], "biased"))
    e = y - p
    expected = np.mean(
        [e[i] * e[i + 1] * math.exp(-abs(p[i] - p[i + 1]) / 0.2) for i in (0, 2, 4, 6)]
    )
    assert close(skce(p, y, "ul"), expected, rtol=1e-14)  # the 9th observation is ignored


def test_type_is_ignored_for_binary():
    p = np.array([0.2, 0.7, 0.4, 0.9])
    y = np.array([0, 1, 1, 1])
    values = {skce(p, y, "uq", 0.3, t) for t in ("canonical", "confidence", "classwise")}
    assert len(values) == 1


# -------------------------------------------------------------- vectorised exp


def test_vexp_matches_numpy_exp():
    rng = np.random.default_rng(2)
    x = np.concatenate(
        [-rng.random(200_000) * 760, [0.0, -0.0, -1e-300, -708.4, -745.1, -746, -np.inf]]
    )
    got = vexp.vexp_array(x)
    ref = np.exp(x)
    normal = ref > 2.3e-308
    rel = np.abs(got[normal] - ref[normal]) / ref[normal]
    assert rel.max() <= 2.5 * np.finfo(float).eps  # about 1 ulp
    assert np.all(np.abs(got[~normal] - ref[~normal]) <= 1e-300)  # subnormal range
    assert got[-7] == 1.0 and got[-6] == 1.0 and got[-1] == 0.0


# -------------------------------------------------- fast kernels vs the oracles

SCALAR_KINDS = ("uniform", "ties", "rounded", "clustered", "extremes")


@pytest.mark.parametrize("kind", SCALAR_KINDS)
@pytest.mark.parametrize("h", BANDWIDTHS)
def test_scalar_kernels_match_oracle(kind, h):
    rng = np.random.default_rng(zlib.crc32(f"scalar/{kind}/{h}".encode()))
    for n in (2, 3, 4, 7, 50, 301):
        x, c = _scalar_inputs(rng, n, kind)
        if h == "median" and math.isnan(median_oracle(x)):
            continue
        e = c - x
        for est in ESTIMATORS:
            got = _fast_scalar(x, c, est, h)
            want = skce_oracle(x, e, est, h)
            assert math.isfinite(got)
            assert close(got, want, atol=ORACLE_ATOL), (n, est, got, want)


CANONICAL_KINDS = ("dirichlet", "onehot", "repeated", "constant_column")


@pytest.mark.parametrize("kind", CANONICAL_KINDS)
@pytest.mark.parametrize("h", (1e-3, 0.05, 0.2, 10.0, "median"))
@pytest.mark.parametrize("block", (3, 16, canonical.BLOCK))
def test_canonical_kernels_match_oracle(kind, h, block):
    rng = np.random.default_rng(zlib.crc32(f"canonical/{kind}/{h}/{block}".encode()))
    for n, k in ((2, 2), (3, 3), (5, 4), (40, 10), (101, 3)):
        p = _dirichlet(rng, n, k, kind)
        codes = rng.integers(0, k, n)
        if h == "median" and math.isnan(median_oracle(p)):
            continue
        e = _onehot(codes, k) - p
        for est in ESTIMATORS:
            got = _fast_canonical(p, codes, est, h, block)
            want = skce_oracle(p, e, est, h)
            assert close(got, want, atol=ORACLE_ATOL), (n, k, est, got, want)


def test_extreme_bandwidths_stay_finite_and_exact():
    rng = np.random.default_rng(3)
    x, c = _scalar_inputs(rng, 200, "uniform")
    e = c - x
    for h in (1e-300, 1e-12, 1e-4, 1e4, 1e12, 1e300):
        for est in ESTIMATORS:
            got = _fast_scalar(x, c, est, h)
            assert math.isfinite(got)
            assert close(got, skce_oracle(x, e, est, h), atol=ORACLE_ATOL)
    # h -> infinity: the kernel is 1, T = ((sum e)^2 - sum e^2) / 2
    total, diag, _ = scalar_sums.scalar_pair_sum(x, c, 1e300)
    assert close(total, (e.sum() ** 2 - (e**2).sum()) / 2, rtol=1e-12)
    # h -> 0: only ties interact; distinct values give T = 0 exactly
    total, _, _ = scalar_sums.scalar_pair_sum(x, c, 1e-300)
    assert total == 0.0


def test_scalar_pair_sum_larger_n():
    rng = np.random.default_rng(4)
    for kind in ("uniform", "ties", "rounded"):
        x, c = _scalar_inputs(rng, 3000, kind)
        for h in (1e-4, 0.2, "median"):
            total, diag, hh = scalar_sums.scalar_pair_sum(x, c, h)
            want = skce_oracle(x, c - x, "uq", h)
            assert close(total / (3000 * 2999 / 2), want, atol=ORACLE_ATOL)


@numba.njit(parallel=True, cache=False)
def _direct_pair_sum(x, e, h):  # pragma: no cover - compiled
    """sum_{i<j} e_i e_j exp(-|x_i - x_j| / h), each row with Neumaier summation."""
    n = x.shape[0]
    part = np.zeros(n)
    for i in numba.prange(n):
        s = 0.0
        comp = 0.0
        for j in range(i + 1, n):
            v = e[i] * e[j] * math.exp(-abs(x[i] - x[j]) / h)
            t = s + v
            if abs(s) >= abs(v):
                comp += (s - t) + v
            else:
                comp += (v - t) + s
            s = t
        part[i] = s + comp
    return part


@pytest.mark.parametrize("kind", ("uniform", "ties", "clustered"))
def test_running_sum_accuracy_at_larger_n(kind):
    """The sorted running sum against a compensated direct O(n^2) sum, n = 8000,
    h from 1e-4 to 1e4: relative error far below the 1e-9 parity tolerance."""
    rng = np.random.default_rng(8)
    n = 8000
    if kind == "uniform":
        x = rng.random(n)
    elif kind == "ties":
        x = rng.choice(np.linspace(0, 1, 7), n)
    else:
        x = 0.5 + rng.integers(-50, 50, n) * 1e-9
    c = (rng.random(n) < x).astype(np.uint8)
    e = c - x
    for h in (1e-4, 1e-3, 0.2, 10.0, 1e4):
        want = math.fsum(_direct_pair_sum(x, e, h))
        got, _, _ = scalar_sums.scalar_pair_sum(x, c, h)
        assert math.isclose(got, want, rel_tol=1e-11, abs_tol=1e-12), (h, got, want)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(
        st.one_of(
            st.sampled_from([0.0, 1.0, 0.5, 0.1, 0.3, 0.30000000000000004, 5e-324, 1 - 2**-53]),
            st.floats(0.0, 1.0),
        ),
        min_size=2,
        max_size=40,
    ),
    data=st.data(),
    h=st.one_of(st.sampled_from([1e-4, 1e-3, 0.2, 10.0, 1e4]), st.floats(1e-4, 1e4)),
)
def test_scalar_fast_equals_oracle_hypothesis(values, data, h):
    x = np.array(values)
    c = np.array(data.draw(st.lists(st.integers(0, 1), min_size=x.size, max_size=x.size)), np.uint8)
    e = c - x
    for est in ESTIMATORS:
        assert close(_fast_scalar(x, c, est, h), skce_oracle(x, e, est, h), atol=ORACLE_ATOL)
    want = median_oracle(x)
    got = smed.scalar_median(x)
    assert (math.isnan(got) and math.isnan(want)) or got == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.integers(0, 5), min_size=2, max_size=25),
    k=st.integers(2, 10),
    seed=st.integers(0, 2**32 - 1),
    h=st.one_of(st.sampled_from([1e-3, 0.2, 10.0]), st.floats(1e-3, 10.0)),
    block=st.sampled_from([2, 5, 256]),
)
def test_canonical_fast_equals_oracle_hypothesis(rows, k, seed, h, block):
    rng = np.random.default_rng(seed)
    palette = np.vstack([rng.dirichlet(np.ones(k), 3), _onehot(np.arange(3) % k, k)])
    p = palette[np.array(rows)]
    codes = rng.integers(0, k, p.shape[0])
    e = _onehot(codes, k) - p
    for est in ESTIMATORS:
        got = _fast_canonical(p, codes, est, h, block)
        assert close(got, skce_oracle(p, e, est, h), atol=ORACLE_ATOL)
    want = median_oracle(p)
    got = canonical.canonical_median(p, block)
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_hits_are_uint8_for_every_label_dtype():
    """as_hits() hands the compiled kernels exact 0/1 labels as uint8, whatever the dtype
    of the validated labels (int64, float64, bool, uint8): one compiled specialisation
    for all of them, and no bytes reinterpreted."""
    for y in (np.array([0, 1, 1, 0], dtype=np.int64), np.array([0.0, 1.0, 1.0, 0.0]),
              np.array([False, True, True, False]), np.array([0, 1, 1, 0], dtype=np.uint8)):
        hits = _kernel_metrics.as_hits(y)
        assert hits.dtype == np.uint8, y.dtype
        assert hits.tolist() == [0, 1, 1, 0], y.dtype


# ------------------------------------------------------- exact median heuristic


@pytest.mark.parametrize("kind", ("uniform", "ties", "rounded", "extremes", "beta"))
@pytest.mark.parametrize("n", (2, 3, 4, 5, 100, 1001, 4000))
def test_scalar_median_is_exact(kind, n):
    rng = np.random.default_rng(n)
    x = rng.beta(0.1, 0.1, n) if kind == "beta" else _scalar_inputs(rng, n, kind)[0]
    want = median_oracle(x)
    got = smed.scalar_median(x)
    assert (math.isnan(got) and math.isnan(want)) or got == want


def _tuning(**changes):
    """scalar_median.TUNING with some entries replaced (by name)."""
    names = ("collect_per_row", "collect_min", "sample_min", "sample_per_row", "sample_cap",
             "z", "subsample_step", "subsample_min", "subsample_z", "seed")
    values = dict(zip(names, smed.TUNING, strict=True))
    values.update(changes)
    return tuple(float(values[name]) for name in names)


@pytest.mark.parametrize("seed", range(80))
def test_scalar_median_selection_rounds(seed):
    """Tiny caps and samples force many bracketing rounds, pivots that hit the
    answer, ranks that straddle the bracket, and both parities; pivots at the
    target quantile itself (z = 0) often miss; the subsample's first pivots from
    n = 4 on."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    kind = ("uniform", "ties", "rounded", "extremes")[seed % 4]
    x = _scalar_inputs(rng, n, kind)[0]
    want = median_oracle(x)
    xs = np.sort(x)
    for tune in (
        _tuning(collect_per_row=0, collect_min=8, sample_min=16 + seed % 5, sample_per_row=0,
                seed=seed),
        _tuning(collect_per_row=0, collect_min=1 + seed % 3, sample_min=2, sample_per_row=0,
                z=(0.0, 1.0, 3.0)[seed % 3], subsample_step=2 + seed % 3, subsample_min=4,
                subsample_z=(0.5, 1.0, 3.0)[seed % 3], seed=seed),
    ):
        got = smed._median_tuned(xs, tune)
        assert (math.isnan(got) and math.isnan(want)) or got == want, tune


@pytest.mark.parametrize("kind", ("uniform", "ties", "rounded", "extremes"))
def test_pair_counts_of_the_selection_are_exact(kind):
    """The counting sweep of the scalar median: #{i < j : x_j - x_i <= t} and
    #{... < t}, with each row's pointer, against a brute-force count, for t on
    computed differences (ties at the pivot) and between them, in every one of
    the sweep's four interleaved segments."""
    rng = np.random.default_rng(zlib.crc32(kind.encode()))
    for n in (2, 3, 5, 17, 64, 301):
        x = np.sort(_scalar_inputs(rng, n, kind)[0])
        d = x[None, :] - x[:, None]  # d[i, j] = x_j - x_i, as the sweep computes it
        upper = np.triu(np.ones((n, n), dtype=bool), 1)
        diffs = np.unique(d[upper])
        ts = np.concatenate([diffs, np.nextafter(diffs, np.inf), [0.0, 5e-324, 0.3, 1.0]])
        out = np.empty(n, np.int64)
        for t in rng.choice(ts, size=min(ts.size, 60), replace=False):
            assert smed._ptr_pass(x, t, out) == int(np.sum(upper & (d <= t))), t
            np.testing.assert_array_equal(out, np.sum(d <= t, axis=1))
            if t > 0:  # the strict count, as the selection takes it
                below = np.nextafter(t, -np.inf)
                assert smed._ptr_pass(x, below, out) == int(np.sum(upper & (d < t))), t
                np.testing.assert_array_equal(out, np.sum(d < t, axis=1))


@pytest.mark.parametrize("seed", range(24))
def test_canonical_median_refinement_rounds(monkeypatch, seed):
    """Few bins and a tiny collection cap force the bracket refinement."""
    monkeypatch.setattr(canonical, "MEDIAN_BINS", 4 + seed % 3)
    monkeypatch.setattr(canonical, "COLLECT_CAP", 3)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    k = int(rng.integers(2, 6))
    p = _dirichlet(rng, n, k, CANONICAL_KINDS[seed % 4])
    want = median_oracle(p)
    got = canonical.canonical_median(p, block=int(rng.integers(2, 20)))
    assert (math.isnan(got) and math.isnan(want)) or got == want


# --------------------------------------------------------- public functions


def _public_cases():
    rng = np.random.default_rng(5)
    for n in (2, 3, 8, 57):
        for k in (2, 3, 10):
            yield n, k, rng.dirichlet(np.ones(k) * 0.7, n), rng.integers(1, k + 1, n)


@pytest.mark.parametrize("h", (0.05, 0.2, 3.0, "median"))
def test_public_forms_against_oracle(h):
    for _n, k, p, y in _public_cases():
        codes = y - 1
        # canonical
        for est in ESTIMATORS:
            assert close(skce(p, y, est, h), skce_oracle(p, _onehot(codes, k) - p, est, h))
        # confidence
        rho = p.max(axis=1)
        hit = (p.argmax(axis=1) == codes).astype(float)
        for est in ESTIMATORS:
            want = skce_oracle(rho, hit - rho, est, h)
            assert close(skce(p, y, est, h, "confidence"), want)
        # classwise: mean over the columns, each with its own median
        for est in ESTIMATORS:
            want = np.mean(
                [skce_oracle(p[:, j], (codes == j) - p[:, j], est, h) for j in range(k)]
            )
            assert close(skce(p, y, est, h, "classwise"), want)


@pytest.mark.parametrize("h", (0.01, 0.2, 5.0, "median"))
def test_mmce_squared_is_the_biased_skce(h):
    rng = np.random.default_rng(6)
    for n in (2, 3, 10, 200):
        p = rng.random(n)
        y = (rng.random(n) < p).astype(int)
        assert close(mmce(p, y, h) ** 2, skce(p, y, "biased", h), rtol=1e-12)
        prob = rng.dirichlet(np.ones(4), n)
        lab = rng.integers(1, 5, n)
        assert close(
            mmce(prob, lab, h) ** 2, skce(prob, lab, "biased", h, "confidence"), rtol=1e-12
        )
        assert mmce(p, y, h) >= 0


def test_perfect_predictions_give_zero():
    p = np.array([0.0, 1.0, 1.0, 0.0])
    y = np.array([0, 1, 1, 0])
    assert skce(p, y, "biased") == 0.0 and mmce(p, y) == 0.0 and skce(p, y) == 0.0


def test_label_dtypes_and_pandas_agree():
    rng = np.random.default_rng(7)
    p = rng.random(30)
    y = (rng.random(30) < p).astype(int)
    ref = skce(p, y, "biased")
    for yy in (y.astype(bool), y.astype(float), y.astype(np.uint8), pd.Series(y)):
        assert skce(pd.Series(p), yy, "biased") == ref
    prob = rng.dirichlet(np.ones(3), 30)
    lab = rng.integers(1, 4, 30)
    frame = pd.DataFrame(prob, columns=["a", "b", "c"])
    names = np.array(["a", "b", "c"])[lab - 1]
    for t in ("canonical", "confidence", "classwise"):
        want = skce(prob, lab, "uq", 0.2, t)
        assert skce(frame, names, "uq", 0.2, t) == want
        assert skce(prob, lab - 1, "uq", 0.2, t, classes=range(3)) == want
        cat = pd.Categorical(names, categories=["a", "b", "c"])
        assert skce(frame, cat, "uq", 0.2, t) == want


def test_na_rm_drops_incomplete_rows():
    p = np.array([0.2, np.nan, 0.7, 0.4, 0.9])
    y = np.array([0, 1, 1, 0, 1])
    keep = ~np.isnan(p)
    assert skce(p, y, na_rm=True) == skce(p[keep], y[keep])
    with pytest.raises(ValueError, match="missing"):
        skce(p, y)


def test_inputs_are_not_modified():
    p = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
    y = np.array([2, 1, 2])
    p0, y0 = p.copy(), y.copy()
    for t in ("canonical", "confidence", "classwise"):
        skce(p, y, "biased", "median", t)
    mmce(p, y)
    assert np.array_equal(p, p0) and np.array_equal(y, y0)


def test_docstring_examples(monkeypatch):
    monkeypatch.setattr(calibr, "skce", skce, raising=False)
    monkeypatch.setattr(calibr, "mmce", mmce, raising=False)
    result = doctest.testmod(_kernel_metrics, raise_on_error=False)
    assert result.attempted >= 10 and result.failed == 0


def test_mmce_refuses_missing_values_unless_na_rm():
    """mmce() raises on a NaN unless ``na_rm=True``. Dropped on request: n = 2, e = (-0.2,
    0.3), MMCE^2 = (e1^2 + e2^2 + 2 e1 e2 exp(-0.5 / 0.2)) / 4."""
    p, y = [0.2, math.nan, 0.7], [0, 1, 1]
    with pytest.raises(InputError, match=r"^`p` must not contain missing values"):
        calibr.mmce(p, y)
    want = math.sqrt((0.04 + 0.09 - 0.12 * math.exp(-2.5)) / 4)
    assert calibr.mmce(p, y, na_rm=True) == pytest.approx(want, rel=1e-14)


# ------------------------------------------------------------------- errors


@pytest.mark.parametrize("bad", (0, 0.0, -1, -0.2, float("nan"), float("inf"), -np.inf))
def test_bad_bandwidth_number(bad):
    msg = r'`bandwidth` must be a positive finite number or "median"; got'
    with pytest.raises(calibr.InputError, match=msg):
        skce([0.2, 0.6], [0, 1], bandwidth=bad)
    with pytest.raises(calibr.InputError, match=msg):
        mmce([0.2, 0.6], [0, 1], bandwidth=bad)


@pytest.mark.parametrize("bad", ("mean", "Median", "", None, [0.2], True))
def test_bad_bandwidth_other(bad):
    with pytest.raises(calibr.InputError, match=r"`bandwidth` must be a positive finite number"):
        skce([0.2, 0.6], [0, 1], bandwidth=bad)


def test_bad_estimator_and_type():
    with pytest.raises(
        calibr.InputError, match=r"`estimator` must be one of 'uq', 'ul', 'biased'; got 'u'\."
    ):
        skce([0.2, 0.6], [0, 1], estimator="u")
    with pytest.raises(
        calibr.InputError,
        match=r"`type` must be one of 'canonical', 'confidence', 'classwise'; got 'strong'\.",
    ):
        skce([[0.2, 0.8]], [1], "biased", type="strong")


@pytest.mark.parametrize("estimator", ("uq", "ul"))
def test_too_few_observations(estimator):
    msg = rf'`estimator = "{estimator}"` needs at least 2 observations; got 1\.'
    with pytest.raises(calibr.InputError, match=msg):
        skce([0.3], [1], estimator)
    with pytest.raises(calibr.InputError, match=msg):
        skce([[0.3, 0.7]], [2], estimator)
    # the biased estimator is defined for n = 1
    assert skce([0.3], [1], "biased") == pytest.approx(0.49)


MEDIAN_MSG = (
    r'`bandwidth = "median"` needs at least two distinct predictions; '
    r"all pairwise distances are 0\."
)


CLASSWISE_MEDIAN_MSG = (
    r'`bandwidth = "median"` with `type = "classwise"` needs at least two distinct '
    r"predictions in every column of `p`; the column {which} has all its values equal "
    r"\({value}\)\."
)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_median_with_all_predictions_equal(estimator):
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        skce([0.4, 0.4, 0.4], [0, 1, 1], estimator, "median")
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        skce([0.4], [1], "biased", "median")
    same = [[0.2, 0.8], [0.2, 0.8], [0.2, 0.8]]
    for t in ("canonical", "confidence"):
        with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
            skce(same, [1, 2, 2], estimator, "median", t)
    # classwise: each column its own median; the first constant column is named
    msg = CLASSWISE_MEDIAN_MSG.format(which="of class 1", value=r"0\.2")
    with pytest.raises(calibr.InputError, match=msg):
        skce(same, [1, 2, 2], estimator, "median", "classwise")
    # confidence: different rows with the same top probability
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        skce([[0.2, 0.8], [0.8, 0.2]], [1, 2], estimator, "median", "confidence")
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        mmce([[0.2, 0.8], [0.8, 0.2]], [1, 2], "median")


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_classwise_median_with_a_constant_column(estimator):
    """The message names the constant column: its class label, else its position."""
    p = np.array([[0.5, 0.2, 0.3], [0.3, 0.4, 0.3], [0.1, 0.6, 0.3]])
    y = [1, 2, 3]
    with pytest.raises(
        calibr.InputError, match=CLASSWISE_MEDIAN_MSG.format(which="of class 3", value=r"0\.3")
    ):
        skce(p, y, estimator, "median", "classwise")
    frame = pd.DataFrame(p, columns=["cat", "dog", "emu"])
    with pytest.raises(
        calibr.InputError, match=CLASSWISE_MEDIAN_MSG.format(which="of class 'emu'", value=r"0\.3")
    ):
        skce(frame, ["cat", "dog", "emu"], estimator, "median", "classwise")
    prep = _kernel_metrics.Prepared(p=p, y=np.array([0, 1, 2]), binary=False, classes=None)
    with pytest.raises(
        calibr.InputError,
        match=CLASSWISE_MEDIAN_MSG.format(which=r"at position 2 \(0-based\)", value=r"0\.3"),
    ):
        _kernel_metrics._dispatch(prep, estimator, "median", "classwise")
    assert math.isfinite(skce(p, y, "uq", 0.2, "classwise"))  # a fixed bandwidth is fine
    assert math.isfinite(skce(p, y, "uq", "median", "canonical"))


def test_input_layer_errors_propagate():
    with pytest.raises(calibr.InputError, match=r"`p` must lie in \[0, 1\]; 1 value does not"):
        skce([0.2, 1.2], [0, 1])
    with pytest.raises(calibr.InputError, match=r"`y`"):
        skce([0.2, 0.5], [0, 2])
    with pytest.raises(calibr.InputError, match=r"`y` must"):
        mmce([0.2, 0.5], [0, 1, 1])
    with pytest.raises(calibr.InputError, match=r"1-based"):
        skce([[0.2, 0.8], [0.5, 0.5]], [0, 1])
    with pytest.raises(calibr.InputError, match=r"sum to 1"):
        skce([[0.2, 0.7], [0.5, 0.5]], [1, 2])
    with pytest.raises(calibr.InputError, match=r"`na_rm` must be True or False"):
        skce([0.2, 0.5], [0, 1], na_rm="yes")


# ------------------------------------------------------ threads and fork()

_FORK_SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from calibr._kernels import canonical
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), 2000)
    codes = rng.integers(0, 4, 2000)
    want = canonical.canonical_pair_sum(P, codes, "median")[0]  # threaded kernels, in the parent
    pid = os.fork()
    if pid == 0:  # the child must be able to run them too
        got = canonical.canonical_pair_sum(P, codes, "median")[0]
        os._exit(0 if got == want else 3)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
    """
)


def test_canonical_kernels_survive_fork():
    """The canonical kernels run in plain threads (nogil), not numba's OpenMP layer,
    so a forked child (multiprocessing on Linux) can still use them."""
    if not hasattr(os, "fork"):
        unavailable("needs os.fork() (not on Windows)")
    out = subprocess.run(
        [sys.executable, "-c", _FORK_SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]


_THREADS_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from calibr._kernels import canonical
    rng = np.random.default_rng(12)
    P = rng.dirichlet(np.ones(5), 3000)
    codes = rng.integers(0, 5, 3000)
    for block in (canonical.BLOCK, 40):  # 6 and 16 (= CHUNKS) work chunks
        print(canonical.canonical_pair_sum(P, codes, 0.2, block)[0].hex())
        print(canonical.canonical_pair_sum(P, codes, "median", block)[0].hex())
        print(canonical.canonical_median(P, block).hex())
    """
)


def test_canonical_results_do_not_depend_on_the_thread_count():
    """The work is split into a fixed number of chunks (never one per thread) and
    combined in a fixed order, so 1 and 2 threads give bit-identical results."""
    outputs = []
    for threads in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", _THREADS_SCRIPT],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, NUMBA_NUM_THREADS=threads),
        )
        assert out.returncode == 0, out.stderr[-2000:]
        outputs.append(out.stdout.split())
    assert len(outputs[0]) == 6
    assert outputs[0] == outputs[1]


def test_concurrent_calls_from_threads():
    rng = np.random.default_rng(9)
    P = rng.dirichlet(np.ones(3), 700)
    lab = rng.integers(1, 4, 700)
    want = skce(P, lab, "uq", "median")
    results = []

    def work():
        results.append(skce(P, lab, "uq", "median"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


def test_median_of_subnormal_spreads():
    """Values that differ only in the subnormal range: no histogram scale
    overflows, the selection stays exact."""
    rng = np.random.default_rng(10)
    for x in (
        rng.integers(0, 50, 3000) * 1e-310,
        np.concatenate([rng.integers(0, 50, 500) * 1e-310, [0.5]]),
    ):
        assert smed.scalar_median(x) == median_oracle(x)


@pytest.mark.parametrize("h", (5e-324, 1e-310, 1e-300, 1e300))
def test_canonical_extreme_bandwidths(h):
    """1/h overflows for h < 2**-1024: ties must still get the kernel value 1."""
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(3), 5)[rng.integers(0, 5, 40)]
    codes = rng.integers(0, 3, 40)
    e = _onehot(codes, 3) - p
    for est in ESTIMATORS:
        with np.errstate(over="ignore", divide="ignore"):
            want = skce_oracle(p, e, est, h)
        assert close(_fast_canonical(p, codes, est, h, block=8), want, atol=ORACLE_ATOL)
        assert close(skce(p, codes + 1, est, h), want, atol=ORACLE_ATOL)


# ------------------------------------------------- the biased estimator is >= 0


def _raw_biased(x, c, h=0.2):
    """The biased SKCE straight from the kernels' sums, before calibr clamps it."""
    total, diag, _ = scalar_sums.scalar_pair_sum(np.ascontiguousarray(x, dtype=np.float64), c, h)
    return estimate_from_sums("biased", x.shape[0], total, diag)


def test_biased_rounding_negatives_are_zero():
    # perfectly calibrated: p = 0.1 and one positive in ten. In exact arithmetic
    # the biased SKCE is (sum of residuals)^2 / n^2 = 0; in float64 the pair sum
    # rounds to -2.2e-18, which R returns and calibr returned before.
    p = np.full(10, 0.1)
    y = np.array([1] + [0] * 9)
    raw = _raw_biased(p, y.astype(np.uint8))
    assert -_kernel_metrics.ROUNDING_FLOOR < raw < 0  # the input does produce a negative
    got = skce(p, y, "biased")
    assert got == 0.0 and math.copysign(1.0, got) == 1.0  # 0.0, not -0.0
    assert mmce(p, y) == 0.0
    # confidence and canonical forms: rows of 1/3 with every label equally often
    prob = np.full((21, 3), 1 / 3)
    lab = np.tile([1, 2, 3], 7)
    for form in ("canonical", "confidence", "classwise"):
        assert skce(prob, lab, "biased", 0.2, form) == 0.0, form
    x, c = tl.top_label(prob, lab - 1)
    assert _raw_biased(x, c) < 0
    total, diag, _ = canonical.canonical_pair_sum(prob, lab - 1, 0.2)
    assert estimate_from_sums("biased", 21, total, diag) < 0
    # the unbiased estimators are left as they are (they can be negative)
    assert skce(p, y, "uq") == estimate_from_sums(
        "uq", 10, *scalar_sums.scalar_pair_sum(p, y.astype(np.uint8), 0.2)[:2])


def test_skce_and_mmce_share_the_rounding_bound():
    assert _kernel_metrics.ROUNDING_FLOOR == 1e-12
    assert _kernel_metrics._clamp_biased(-1e-18) == 0.0
    assert _kernel_metrics._clamp_biased(-1e-12) == 0.0
    assert _kernel_metrics._clamp_biased(3e-18) == 3e-18
    with pytest.raises(RuntimeError, match=r"^calibr bug: the biased SKCE came out negative"):
        _kernel_metrics._clamp_biased(-2e-12)
    assert "0.0" in skce.__doc__ and "-1e-12" in skce.__doc__


def test_a_negative_zero_biased_estimate_is_returned_as_zero():
    """The clamp of the biased estimate returns +0.0 for a signed zero, as for every
    rounding-level negative ("0.0, not -0.0")."""
    for value in (-0.0, -1e-18, 0.0):
        got = _kernel_metrics._clamp_biased(value)
        assert got == 0.0 and math.copysign(1.0, got) == 1.0, value
    assert _kernel_metrics._clamp_biased(0.25) == 0.25


# ------------------------------------------------------------- median_bandwidth


def _median_cases():
    rng = np.random.default_rng(20240501)
    for n, k in ((2, 2), (3, 3), (9, 4), (60, 3), (301, 5), (2000, 10)):
        p = rng.dirichlet(np.ones(k) * 0.7, n)
        p[rng.random(n) < 0.2] = p[0]  # ties between rows (and so in every column)
        y = rng.integers(1, k + 1, n)
        yield n, k, p, y


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_median_bandwidth_is_the_bandwidth_skce_and_mmce_use(estimator):
    """skce(..., bandwidth=median_bandwidth(...)) equals skce(..., bandwidth="median")
    exactly (==), in every form; the classwise form column by column."""
    for _n, k, p, y in _median_cases():
        x = p[:, 0]
        yb = (y == 1).astype(int)
        h = calibr.median_bandwidth(x, yb)
        assert type(h) is float
        assert skce(x, yb, estimator, h) == skce(x, yb, estimator, "median")
        for form in ("canonical", "confidence"):
            h = calibr.median_bandwidth(p, y, form)
            assert type(h) is float
            assert skce(p, y, estimator, h, form) == skce(p, y, estimator, "median", form)
        h = calibr.median_bandwidth(p, y, "confidence")
        assert mmce(p, y, h) == mmce(p, y, "median")
        hs = calibr.median_bandwidth(p, y, "classwise")
        assert isinstance(hs, np.ndarray) and hs.dtype == np.float64 and hs.shape == (k,)
        per_column = [skce(p[:, j], (y == j + 1).astype(int), estimator, hs[j]) for j in range(k)]
        assert float(np.mean(per_column)) == skce(p, y, estimator, "median", "classwise")


def test_median_bandwidth_against_the_oracle():
    for _n, k, p, y in _median_cases():
        codes = y - 1
        assert calibr.median_bandwidth(p) == median_oracle(p)
        rho = p[np.arange(p.shape[0]), np.argmax(p, axis=1)]
        assert calibr.median_bandwidth(p, y, "confidence") == median_oracle(rho)
        want = [median_oracle(p[:, j]) for j in range(k)]
        np.testing.assert_array_equal(calibr.median_bandwidth(p, codes, "classwise",
                                                              classes=range(k)), want)
        assert calibr.median_bandwidth(p[:, 1]) == median_oracle(p[:, 1])


def test_median_bandwidth_by_hand():
    # |0.1 - 0.4| = 0.3, 0.25, 0.7, 0.05, 0.45, 0.4: an even count, R's median is
    # the mean of the middle two, (0.3 + 0.4) / 2 (each as computed in float64)
    p = [0.1, 0.4, 0.35, 0.8]
    assert calibr.median_bandwidth(p) == ((0.4 - 0.1) + (0.8 - 0.4)) / 2
    # the tied pair is not a positive distance: (0.2, 0.2, 0.6) -> 0.4, 0.4 -> 0.4
    assert calibr.median_bandwidth([0.2, 0.2, 0.6]) == 0.6 - 0.2
    prob = np.array([[0.5, 0.5], [0.2, 0.8], [0.5, 0.5]])
    d = math.sqrt((0.2 - 0.5) ** 2 + (0.8 - 0.5) ** 2)  # twice, and the tie 0 is not counted
    assert calibr.median_bandwidth(prob) == d == median_oracle(prob)


def test_median_bandwidth_ignores_labels_but_checks_them():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(3), 40)
    y = rng.integers(1, 4, 40)
    for form in ("canonical", "confidence", "classwise"):
        with_y = calibr.median_bandwidth(p, y, form)
        if form != "confidence":  # the confidence form's top label does not need y
            np.testing.assert_array_equal(calibr.median_bandwidth(p, type=form), with_y)
        np.testing.assert_array_equal(calibr.median_bandwidth(p, rng.permutation(y), form),
                                      with_y)
    # y is checked as skce checks it
    with pytest.raises(calibr.InputError, match=r"`y`"):
        calibr.median_bandwidth(p, np.zeros(40, int))
    with pytest.raises(calibr.InputError, match=r"`p` and `y` must have the same length"):
        calibr.median_bandwidth(p, y[:-1])
    with pytest.raises(calibr.InputError, match=r"`y`"):
        calibr.median_bandwidth([0.2, 0.6], [0, 2])
    # na_rm drops the same rows as in skce: those with a missing p, and with y, a missing y
    x = np.array([0.2, np.nan, 0.7, 0.4, 0.9, 0.05])
    yb = np.array([0, 1, 1, np.nan, 1, 0])
    keep_p = ~np.isnan(x)
    keep = keep_p & ~np.isnan(yb)
    assert calibr.median_bandwidth(x, na_rm=True) == median_oracle(x[keep_p])
    assert calibr.median_bandwidth(x, yb, na_rm=True) == median_oracle(x[keep])
    h = calibr.median_bandwidth(x, yb, na_rm=True)
    assert skce(x, yb, bandwidth=h, na_rm=True) == skce(x, yb, bandwidth="median", na_rm=True)
    with pytest.raises(calibr.InputError, match=r"missing"):
        calibr.median_bandwidth(x)
    with pytest.raises(calibr.InputError, match=r"`y`.*missing|missing.*`y`"):
        calibr.median_bandwidth(x[keep_p], yb[keep_p])


def test_median_bandwidth_names_columns_without_labels():
    """skce's message (CLASSWISE_MEDIAN_MSG) also without y: a DataFrame's columns (or
    classes=) name the constant column, and a plain matrix's columns are R's codes."""
    p = np.array([[0.5, 0.2, 0.3], [0.3, 0.4, 0.3], [0.1, 0.6, 0.3]])
    frame = pd.DataFrame(p, columns=["cat", "dog", "emu"])
    cases = [
        ({"p": p}, "of class 3"),
        ({"p": frame}, "of class 'emu'"),
        ({"p": p, "classes": ["a", "b", "c"]}, "of class 'c'"),
        ({"p": p, "y": [1, 2, 3]}, "of class 3"),
        ({"p": frame, "y": ["cat", "dog", "emu"]}, "of class 'emu'"),
    ]
    for kwargs, which in cases:
        msg = CLASSWISE_MEDIAN_MSG.format(which=which, value=r"0\.3")
        with pytest.raises(calibr.InputError, match=msg):
            calibr.median_bandwidth(**kwargs, type="classwise")
    two = pd.DataFrame({"a": [0.2, 0.6, 0.9], "b": [0.8, 0.4, 0.1]})
    np.testing.assert_array_equal(calibr.median_bandwidth(two, type="classwise"),
                                  [median_oracle(two["a"].to_numpy()),
                                   median_oracle(two["b"].to_numpy())])


@pytest.mark.parametrize("form", ("canonical", "confidence"))
def test_median_bandwidth_errors(form):
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        calibr.median_bandwidth([0.4, 0.4, 0.4])
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        calibr.median_bandwidth([0.4], [1])
    same = [[0.2, 0.8], [0.2, 0.8], [0.2, 0.8]]
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        calibr.median_bandwidth(same, type=form)
    with pytest.raises(calibr.InputError, match=MEDIAN_MSG):
        calibr.median_bandwidth([[0.2, 0.8], [0.8, 0.2]], [1, 2], "confidence")
    with pytest.raises(
        calibr.InputError,
        match=r"`type` must be one of 'canonical', 'confidence', 'classwise'; got 'strong'\.",
    ):
        calibr.median_bandwidth(same, type="strong")
    with pytest.raises(calibr.InputError, match=r"`na_rm` must be True or False"):
        calibr.median_bandwidth(same, na_rm="yes")
    with pytest.raises(calibr.InputError, match=r"`p` must lie in \[0, 1\]"):
        calibr.median_bandwidth([0.2, 1.2])
    with pytest.raises(calibr.InputError, match=r"sum to 1"):
        calibr.median_bandwidth([[0.2, 0.7], [0.5, 0.5]])
    with pytest.raises(calibr.InputTypeError, match=r"`p`"):
        calibr.median_bandwidth(v for v in [0.2, 0.5])


def test_median_bandwidth_is_public_and_documented():
    assert "median_bandwidth" in calibr.__all__
    assert calibr.median_bandwidth.__calibr_rules__.keys() == {"type", "na_rm"}
    doc = calibr.median_bandwidth.__doc__
    assert "<calibr:" not in doc and "na_rm : bool" in doc and "Examples" in doc
    p = np.array([0.3, 0.1, 0.9])
    p0 = p.copy()
    calibr.median_bandwidth(p, [0, 1, 1])
    assert np.array_equal(p, p0)


def test_integer_p_and_object_labels_give_the_same_numbers():
    """Integer-dtype probabilities (0/1), and boolean or float labels held in object
    arrays, reach the numbers of float64 p and integer labels, in every form."""
    rng = np.random.default_rng(44)
    p_int = (rng.random(80) < 0.5).astype(np.int64)
    p = np.where(rng.random(80) < 0.5, p_int, rng.random(80))
    y = (rng.random(80) < 0.5).astype(np.int64)
    labels = {
        "bool objects": np.array([bool(v) for v in y], dtype=object),
        "float objects": np.array([float(v) for v in y], dtype=object),
    }
    for pp in (p_int, p):
        for est, h in (("uq", 0.2), ("biased", "median"), ("ul", 0.5)):
            want = skce(pp.astype(np.float64), y, est, h)
            if pp is p_int:
                for dtype in (np.int64, np.int32, np.uint8):
                    assert skce(pp.astype(dtype), y, est, h) == want, dtype
            for name, yy in labels.items():
                assert skce(pp, yy, est, h) == want, name
        want = mmce(pp.astype(np.float64), y, "median")
        assert mmce(pp, labels["bool objects"], "median") == want
        assert calibr.median_bandwidth(pp, labels["float objects"]) == calibr.median_bandwidth(
            pp.astype(np.float64), y)
    onehot = np.eye(3, dtype=np.int64)[rng.integers(0, 3, 60)]
    codes = rng.integers(1, 4, 60)
    for form in ("canonical", "confidence", "classwise"):
        want = skce(onehot.astype(np.float64), codes, "uq", 0.3, form)
        assert skce(onehot, codes, "uq", 0.3, form) == want
        assert skce(onehot.astype(np.uint8), codes.astype(object), "uq", 0.3, form) == want


def test_median_bandwidth_of_a_frame_with_default_column_names():
    """Without ``y``, a DataFrame's stand-in labels name its first column. For pandas'
    default names 0..K-1 that is the label 0 (0-based, matched by name); the label 1
    alone would be refused as ambiguous (R's code 1 or the column named 1). By hand:
    rows (0.5, 0.5), (0.2, 0.8), (0.5, 0.5) have the positive distances |(0.3, -0.3)|
    twice (the tied pair is not counted), median sqrt(0.18)."""
    prob = np.array([[0.5, 0.5], [0.2, 0.8], [0.5, 0.5]])
    want = math.sqrt((0.5 - 0.2) ** 2 + (0.5 - 0.8) ** 2)
    assert calibr.median_bandwidth(pd.DataFrame(prob)) == want
    assert calibr.median_bandwidth(pd.DataFrame(prob), type="confidence") == 0.8 - 0.5
    np.testing.assert_array_equal(calibr.median_bandwidth(pd.DataFrame(prob), type="classwise"),
                                  [0.5 - 0.2, 0.8 - 0.5])


# ------------------------------------------ the median bandwidth for every n


def _median_inputs(rng, n, kind):
    if kind == "beta":
        return rng.beta(0.1, 0.1, n)
    if kind == "subnormal":  # differences only in the subnormal range
        return rng.integers(0, 50, n) * 1e-310
    if kind == "one apart":  # one value apart from a big tie: all positive d equal
        return np.concatenate([np.full(n - 1, 0.3), [0.9]])
    return _scalar_inputs(rng, n, kind)[0]


MEDIAN_KINDS = ("uniform", "ties", "rounded", "clustered", "extremes", "beta", "subnormal",
                "one apart")


@pytest.mark.parametrize("n", (2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 99, 100, 101, 300, 301, 1000, 1001))
def test_median_of_sorted_is_exact_at_every_n(n):
    """The compiled median_of_sorted() and scalar_median() equal the O(n^2)
    oracle on random, tied, clustered, extreme (0, 1, subnormal) and degenerate
    data; over the kinds and seeds both parities of the number of positive
    differences occur at every n >= 3 (the mean of the two middle values, or the
    middle one)."""
    parities = set()
    for seed in range(3):
        rng = np.random.default_rng([n, seed])
        for kind in MEDIAN_KINDS:
            x = _median_inputs(rng, n, kind)
            xs = np.sort(x)
            d = (xs[None, :] - xs[:, None])[np.triu_indices(n, 1)]
            parities.add(int(np.count_nonzero(d > 0)) % 2)
            want = median_oracle(x)
            for got in (float(smed.median_of_sorted(xs)), smed.scalar_median(x),
                        smed.scalar_median(xs, presorted=True)):
                assert (math.isnan(got) and math.isnan(want)) or got == want, (kind, seed)
    if n >= 3:
        assert parities == {0, 1}


@pytest.mark.parametrize("n", (4096, 4097, 5003))
def test_median_of_sorted_subsample_path_is_exact(n):
    """From n = SUBSAMPLE_MIN on, the first pivots come from the selection on a
    subsample: still exact, on smooth, tied, extreme and degenerate data."""
    assert n >= smed.SUBSAMPLE_MIN
    rng = np.random.default_rng(n)
    for kind in ("uniform", "rounded", "beta", "ties", "one apart", "extremes"):
        x = _median_inputs(rng, n, kind)
        assert smed.scalar_median(x) == median_oracle(x), kind


def test_median_of_sorted_is_exact_for_any_tuning():
    """The sample, the subsample and the pivots only steer: any caps, sample
    sizes, pivot spreads (0: pivots at the quantile itself, so they often miss)
    and seeds give the same exact value."""
    rng = np.random.default_rng(12)
    for trial in range(60):
        n = int(rng.integers(2, 120))
        kind = MEDIAN_KINDS[trial % len(MEDIAN_KINDS)]
        xs = np.sort(_median_inputs(rng, n, kind))
        want = median_oracle(xs)
        tune = _tuning(collect_per_row=float(rng.choice([0.0, 0.1, 1.0])),
                       collect_min=int(rng.integers(0, 40)), sample_min=int(rng.integers(1, 50)),
                       sample_per_row=float(rng.choice([0.0, 0.05, 1.0])),
                       sample_cap=int(rng.integers(1, 500)), z=float(rng.uniform(0, 4)),
                       subsample_step=int(rng.integers(2, 9)),
                       subsample_min=int(rng.choice([2, 30, 10**9])),
                       subsample_z=float(rng.uniform(0, 4)), seed=int(rng.integers(0, 2**31)))
        got = smed._median_tuned(xs, tune)
        assert (math.isnan(got) and math.isnan(want)) or got == want, (trial, kind, tune)


_BRANCH_PROBE = r"""
import math, sys, warnings
import numpy as np
warnings.simplefilter("ignore")  # uint64 wrap-around of the generator in plain Python
sys.path.insert(0, {tests!r})
from oracles.skce import median_oracle
import calibr._kernels.scalar_median as S
path = S.__file__
lines = open(path).read().splitlines()
marks = {{i + 1: s.split("# branch:")[1].strip() for i, s in enumerate(lines) if "# branch:" in s}}
seen = set()
def tracer(frame, event, arg):
    if frame.f_code.co_filename != path:
        return None
    if event == "line" and frame.f_lineno in marks:
        seen.add(frame.f_lineno)
    return tracer
wrong = []
sys.settrace(tracer)
for seed in range(40):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    x = [rng.random(n), np.round(rng.random(n), 1), rng.choice([0.0, 0.5, 1.0], n),
         np.concatenate([np.full(n - 1, 0.3), [0.9]]), rng.beta(0.1, 0.1, n)][seed % 5]
    xs = np.sort(x)
    for tune in [(0.0, 1.0, 2.0, 0.05, 6.0, 0.0, 3.0, 6.0, 0.5, seed),
                 (0.1, 2.0, 4.0, 0.2, 64.0, 2.0, 2.0, 4.0, 1.0, seed),
                 (0.0, 1e9, 2.0, 0.05, 6.0, 0.0, 3.0, 1e9, 0.5, seed),
                 S.TUNING]:
        got = S._median_tuned(xs, tuple(float(v) for v in tune))
        want = median_oracle(xs)
        if not (got == want or (math.isnan(got) and math.isnan(want))):
            wrong.append((seed, tune, got, want))
sys.settrace(None)
print(repr(wrong))
print(repr(sorted(name for line, name in marks.items() if line not in seen)))
print(len(marks))
"""


def test_median_selection_takes_every_branch():
    """The selection run as plain Python (numba's NUMBA_DISABLE_JIT), traced:
    small adversarial inputs (ties, a tie block with one value apart, few
    distinct values, heavy tails) under tunings that force them reach every
    line marked ``# branch:`` in scalar_median.py (a pivot that is the answer,
    with the next value equal or the smallest above it, from either side;
    pivots on the wrong side; one pivot; the collection, and the k-th as the last
    candidate; the stratified sample; the subsample's tie, hit and bracket;
    the quickselect's ties; the gathering's miss and ties), and the values are
    exact."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    code = _BRANCH_PROBE.format(tests=os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    wrong, missed, marks = out.stdout.strip().splitlines()[-3:]
    assert wrong == "[]"
    assert missed == "[]"
    assert int(marks) >= 16


@pytest.mark.parametrize("k", (1, 7, 200))
def test_classwise_median_of_many_columns_equals_per_column(k):
    """The classwise median bandwidth comes from one compiled loop over the
    columns: each equals the column's own median (and the binary skce of the
    column), and the classwise skce with "median" is the mean of the per-column
    binary skce() values, bit for bit."""
    rng = np.random.default_rng(k)
    n = 150
    p = rng.dirichlet(np.ones(k + 1) * 0.5, n) if k > 1 else rng.dirichlet(np.ones(2), n)
    if k == 7:  # coarse rows: ties within the columns
        coarse = rng.integers(1, 4, (n, k + 1)).astype(float)
        p = coarse / coarse.sum(axis=1, keepdims=True)
    kk = p.shape[1]
    y = rng.integers(1, kk + 1, n)
    h = calibr.median_bandwidth(p, type="classwise")
    assert h.shape == (kk,)
    for j in range(kk):
        col = p[:, j].copy()
        assert h[j] == smed.scalar_median(col) == median_oracle(col)
        assert h[j] == calibr.median_bandwidth(col, (y == j + 1).astype(np.int64))
    for est in ESTIMATORS:
        want = float(np.mean([skce(p[:, j].copy(), (y == j + 1).astype(np.int64), est, "median")
                              for j in range(kk)]))
        assert skce(p, y, est, "median", "classwise") == want, est
    rows = np.sort(np.array(p.T, order="C"), axis=1)
    np.testing.assert_array_equal(smed.median_of_sorted_rows(rows), h)


def test_classwise_median_names_the_first_constant_column():
    # the columns of classes 3 and 4 are constant: the message names class 3
    p = np.array([[0.1, 0.4, 0.3, 0.2], [0.25, 0.25, 0.3, 0.2], [0.4, 0.1, 0.3, 0.2],
                  [0.2, 0.3, 0.3, 0.2]])
    y = np.array([1, 2, 3, 4])
    message = (r'`bandwidth = "median"` with `type = "classwise"` needs at least two distinct '
               r"predictions in every column of `p`; the column of class 3 has all its values "
               r"equal \(0\.3\)\.")
    for call in (lambda: calibr.median_bandwidth(p, type="classwise"),
                 lambda: calibr.median_bandwidth(p, y, type="classwise"),
                 lambda: skce(p, y, "uq", "median", "classwise")):
        with pytest.raises(calibr.InputError, match=message):
            call()


@pytest.mark.parametrize("n", (2, 3, 5, 20, 60, 150, 400))
def test_canonical_median_bins_scale_with_the_pairs(monkeypatch, n):
    """The canonical median's histogram has about one bin per 8 pairs at small n
    instead of 2^15: the same exact value as with the full histogram."""
    rng = np.random.default_rng(n)
    for kind in CANONICAL_KINDS:
        p = _dirichlet(rng, n, 4, kind)
        got = canonical.canonical_median(p)
        want = median_oracle(p)
        assert (math.isnan(got) and math.isnan(want)) or got == want, kind
        monkeypatch.setattr(canonical, "MEDIAN_MIN_BINS", canonical.MEDIAN_BINS)
        full = canonical.canonical_median(p)
        monkeypatch.undo()
        assert (math.isnan(got) and math.isnan(full)) or got == full, kind
