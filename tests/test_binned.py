"""ece() and mce(): hand-worked cases, the R help page example, the fast kernels
against the readable oracles, invariants, and live parity with the R reference."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracles.binned import (
    bin_among_oracle,
    bin_of_oracle,
    binary_stats_oracle,
    breaks_oracle,
    classwise_stats_oracle,
    confidence_stats_oracle,
    exact_binary,
)
from tolerances import ORACLE_ATOL, ORACLE_RTOL, ORDER_SLACK, R_ATOL, R_RTOL

import calibr
from calibr import InputError
from calibr._kernels import binned

TYPES = ("classwise", "confidence")


# ----------------------------------------------------------------- hand-worked


def test_help_page_example_mce():
    # the example of R's help page (r_reference/calibrRef/man/mce.Rd):
    # predictions |> summarise(mce = mce(p, y, bins = 2)) gives 0.15
    predictions = pd.DataFrame({"p": [0.10, 0.20, 0.80, 0.90], "y": [0, 0, 1, 1]})
    got = calibr.mce(predictions["p"], predictions["y"], bins=2)
    assert got == pytest.approx(0.15, rel=1e-15)
    assert got == exact_binary([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], 2)[1]


def test_hand_worked_binary():
    # bins = 4: breaks 0, .25, .5, .75, 1
    # 0.25 sits on a break -> bin 1; 0.0 -> bin 1; 0.5 -> bin 2; 1.0 -> bin 4
    p = [0.0, 0.25, 0.5, 0.6, 1.0]
    y = [0, 1, 1, 0, 1]
    # bin1 {0, .25}: conf 1/8, acc 1/2 -> 3/8;  bin2 {.5}: 1/2;  bin3 {.6}: 0.6;  bin4 {1}: 0
    assert calibr.ece(p, y, bins=4) == pytest.approx(2 / 5 * 3 / 8 + 1 / 5 * 1 / 2 + 1 / 5 * 0.6,
                                                     rel=1e-15)
    assert calibr.mce(p, y, bins=4) == pytest.approx(0.6, rel=1e-15)


def test_values_on_breaks_go_to_the_lower_bin():
    # 0.3 == 3 * 0.1 in R's breaks? No: seq gives 0.30000000000000004, so 0.3 is
    # below that break and joins bin 3 with 0.25; 0.30000000000000004 itself is
    # exactly on the break and also goes to bin 3 (closed on the right).
    edges = np.linspace(0, 1, 11)
    assert edges[3] == 0.30000000000000004
    p = np.array([0.25, 0.3, edges[3], 0.35])
    stats = binned.binary_stats(p, np.array([0, 0, 0, 0]), 10)
    np.testing.assert_array_equal(stats[0], [0, 0, 3, 1, 0, 0, 0, 0, 0, 0])
    # and 0.7 (below 0.7000000000000001) with 1/3 on bins = 3
    assert edges[7] == 0.7000000000000001
    stats = binned.binary_stats(np.array([0.7, edges[7], 1 / 3, 2 / 3]), np.zeros(4), 10)
    np.testing.assert_array_equal(np.nonzero(stats[0])[0], [3, 6])
    e3 = np.linspace(0, 1, 4)
    stats = binned.binary_stats(np.array([e3[1], e3[2], 0.0, 1.0]), np.zeros(4), 3)
    np.testing.assert_array_equal(stats[0], [2, 1, 1])


def test_hand_worked_multiclass():
    p = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    y = [1, 3, 3]
    # confidence, bins=5: r = .7 (right), .5 (wrong), .8 (right; on the break .8 -> bin 4)
    # bin 4 {.7, .8}: gap |1 - .75| = .25 ; bin 3 {.5}: gap .5
    assert calibr.ece(p, y, bins=5, type="confidence") == pytest.approx(2 / 3 * 0.25 + 1 / 3 * 0.5)
    assert calibr.mce(p, y, bins=5, type="confidence") == pytest.approx(0.5)
    # classwise = mean / max of the per-column binary metrics
    per = [exact_binary(p[:, k], [int(v == k + 1) for v in y], 5) for k in range(3)]
    assert calibr.ece(p, y, bins=5) == pytest.approx(np.mean([e for e, _ in per]), rel=1e-14)
    assert calibr.mce(p, y, bins=5) == pytest.approx(max(m for _, m in per), rel=1e-14)


def test_argmax_ties_go_to_the_first_column():
    p = np.array([[0.4, 0.4, 0.2], [0.3, 0.35, 0.35]])
    # row 0: top label 1 (first of the tie); row 1: top label 2
    assert calibr.ece(p, [1, 2], bins=1, type="confidence") == pytest.approx(
        abs(1.0 - (0.4 + 0.35) / 2))
    assert calibr.ece(p, [2, 3], bins=1, type="confidence") == pytest.approx((0.4 + 0.35) / 2)


def test_empty_bins_are_ignored():
    assert calibr.mce([0.05, 0.05], [0, 0], bins=50) == pytest.approx(0.05)
    assert calibr.ece([0.05, 0.95], [0, 1], bins=50) == pytest.approx(0.05)


def test_returns_python_float():
    assert type(calibr.ece([0.2, 0.7], [0, 1])) is float
    assert type(calibr.mce(np.array([[0.2, 0.8]]), [2])) is float


def test_ece_and_mce_default_to_ten_bins():
    """ece() and mce() use 10 bins unless told otherwise.

    0.15 and 0.19 share the bin (0.1, 0.2] of 10 bins (ECE = MCE = |0.5 - 0.17| = 0.33);
    with 11 bins they fall in two (ECE 0.52).
    """
    p, y = [0.15, 0.19], [1, 0]
    assert calibr.ece(p, y) == pytest.approx(0.33, abs=1e-12)
    assert calibr.mce(p, y) == pytest.approx(0.33, abs=1e-12)
    assert calibr.ece(p, y, bins=11) == pytest.approx(0.52, abs=1e-12)


def test_ece_and_mce_refuse_missing_values_unless_na_rm():
    """A NaN makes ece() and mce() raise unless ``na_rm=True`` asks for the incomplete rows
    to be dropped: they are never dropped silently."""
    p, y = [0.2, math.nan, 0.7], [0, 1, 1]
    for metric in (calibr.ece, calibr.mce):
        with pytest.raises(InputError, match="missing"):
            metric(p, y)
    # dropped on request: 0.2 in (0.1, 0.2] with gap 0.2, 0.7 in (0.6, 0.7] with gap 0.3
    assert calibr.ece(p, y, na_rm=True) == pytest.approx(0.25, abs=1e-12)
    assert calibr.mce(p, y, na_rm=True) == pytest.approx(0.3, abs=1e-12)


# ----------------------------------------------------------------- the bins x K bound: classwise


def test_the_bins_times_classes_bound_binds_the_classwise_form_only():
    """The bound of 10,000,000 on bins x K holds for the classwise form of a multiclass
    ``p`` (a set of bins per class), not for the confidence form (one set of bins):
    909,091 bins of 11 classes are one cell over it."""
    k, bins = 11, 909_091  # 10,000,001 bins x classes: one over the bound
    p = np.full((4, k), 1.0 / k)
    y = [1, 1, 2, 3]
    with pytest.raises(InputError, match=r"must be at most 10,000,000 for type = \"classwise\""):
        calibr.ece(p, y, bins=bins)
    # confidence: top label 1 (ties: the first column) with confidence 1/11, right
    # for 2 of 4 rows, all in one bin
    assert calibr.ece(p, y, bins=bins, type="confidence") == pytest.approx(0.5 - 1 / 11,
                                                                           abs=1e-12)


def test_weighted_ece_bounds_the_bins_of_the_classwise_form_only(monkeypatch):
    """The weighted path checks the same bound, for the classwise form only: with the bound
    on bins x K made 20, weighted ece of 3 classes in 7 bins (21) is refused for the
    classwise form and computed for the confidence form, and a binary p in 21 bins is
    not bounded by it. By hand, one row of weight 2 with p = 0.2 (y = 0) and one of
    weight 1 with p = 0.7 (y = 1): ECE (2 * 0.2 + 1 * 0.3) / 3."""
    import calibr._input.params as params

    monkeypatch.setattr(params, "MAX_BIN_CELLS", 20)
    pm = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    ym, w = [3, 3, 1], [1, 2, 1]  # R's 1-based codes
    with pytest.raises(InputError, match=r"got bins = 7 with K = 3 classes \(21 bins\)"):
        calibr.ece(pm, ym, bins=7, weights=w)
    # confidence: top labels 3, 3, 3 with confidences 0.5, 0.8, 0.4 (bins 4, 6, 3 of 7),
    # right, right, wrong: gaps 0.5, 0.2 and 0.4 with weights 1, 2, 1
    assert calibr.ece(pm, ym, bins=7, type="confidence", weights=w) == pytest.approx(
        (0.5 + 2 * 0.2 + 0.4) / 4, abs=1e-12)
    assert calibr.ece([0.2, 0.7], [0, 1], bins=21, weights=[2, 1]) == pytest.approx(
        (2 * 0.2 + 0.3) / 3, abs=1e-12)


def test_bins_from_the_data_are_bounded_by_the_bins_they_make(monkeypatch):
    """Isotonic bins and bins="sweep"/"auto" take their number from the data, so the
    bound on bins x K is checked on the bins made (the most of any class, to which
    the per-bin sums are padded), not on ``bins`` (isotonic ignores it; a rule is
    not a number). With the bound made 20: 11 classes of one row (one bin each)
    are computed, as without the bound; of 40 rows, 4 "auto" bins of each column
    (44 cells), or 2 of each predicted class's rows (22), are refused."""
    import calibr._input.params as params

    rng = np.random.default_rng(31)
    pm = rng.dirichlet(np.ones(11), 40)
    ym = rng.integers(0, 11, 40)
    rules = [{"bins": "auto"}, {"binning": "isotonic"}, {"bins": "sweep"}]
    want = [calibr.ece(pm[:1], ym[:1], classes=range(11), **opts) for opts in rules]
    monkeypatch.setattr(params, "MAX_BIN_CELLS", 20)
    for opts, value in zip(rules, want, strict=True):
        assert calibr.ece(pm[:1], ym[:1], classes=range(11), **opts) == value, opts
    for form in ("classwise", "top-label"):
        made = 4 if form == "classwise" else 2  # top label: each class's rows, about 4
        with pytest.raises(InputError, match=rf'type = "{form}" .*got bins = {made} with '
                           rf"K = 11 classes \({11 * made} bins\)"):
            calibr.ece(pm, ym, bins="auto", type=form, classes=range(11))
    with pytest.raises(InputError, match=r"got bins = 2 with K = 11 classes \(22 bins\)"):
        calibr.ece(pm, ym, bins=2, classes=range(11))


def test_top_label_bins_are_bounded_per_class(monkeypatch):
    """The top-label form keeps one set of bins per predicted class: K sets for K
    columns, 2 for a binary p (read as two columns), each bounded as the
    classwise form is (bins x sets at most MAX_BIN_CELLS, here made 20)."""
    import calibr._input.params as params

    rng = np.random.default_rng(32)
    p = rng.random(60)
    y = (rng.random(60) < p).astype(np.int64)
    pm = rng.dirichlet(np.ones(3), 60)
    ym = rng.integers(0, 3, 60)
    want = (calibr.ece(p, y, bins=10, type="top-label"),
            calibr.ece(pm, ym, bins=6, type="top-label", classes=range(3)))
    monkeypatch.setattr(params, "MAX_BIN_CELLS", 20)
    assert calibr.ece(p, y, bins=10, type="top-label") == want[0]  # 2 x 10 cells
    assert calibr.ece(pm, ym, bins=6, type="top-label", classes=range(3)) == want[1]  # 18
    with pytest.raises(InputError, match=r'for type = "top-label" .* got bins = 11 with '
                       r"K = 2 classes \(22 bins\)"):
        calibr.ece(p, y, bins=11, type="top-label")
    with pytest.raises(InputError, match=r"got bins = 7 with K = 3 classes \(21 bins\)"):
        calibr.ece(pm, ym, bins=7, type="top-label", classes=range(3))


# ----------------------------------------------------------------- kernels vs oracle


def test_breaks_are_linspace_and_the_arithmetic_of_the_kernel():
    for b in range(1, 3001):
        np.testing.assert_array_equal(binned.breaks(b), breaks_oracle(b))


def _adversarial_values(rng, n, bins):
    edges = binned.breaks(bins)
    pool = np.concatenate([edges, np.nextafter(edges, 2.0), np.nextafter(edges, -1.0),
                           [0.0, 1.0, 0.3, 0.7, 1 / 3, 2 / 3, 5e-324, 1 - 2**-53]])
    pool = pool[(pool >= 0) & (pool <= 1)]
    v = rng.random(n)
    pick = rng.random(n) < 0.5
    v[pick] = rng.choice(pool, size=pick.sum())
    return v


def _assert_stats_equal(fast, oracle):
    for f, o in zip(fast, oracle, strict=True):
        np.testing.assert_allclose(f, o, rtol=ORACLE_RTOL, atol=ORACLE_ATOL)


@pytest.mark.parametrize("bins", [1, 2, 3, 7, 10, 15, 50, 333])
@pytest.mark.parametrize("n", [1, 2, 17, 1000, 300_000])  # the last takes the parallel path
def test_binary_kernel_matches_oracle(bins, n):
    rng = np.random.default_rng(bins * 1000 + n)
    p = _adversarial_values(rng, n, bins)
    y = (rng.random(n) < p).astype(np.int64)
    fast = binned.binary_stats(p, y, bins)
    _assert_stats_equal(fast, binary_stats_oracle(p, y, bins))
    np.testing.assert_array_equal(fast[0], binary_stats_oracle(p, y, bins)[0])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.uint8, np.float64])
def test_binary_kernel_label_dtypes(dtype):
    rng = np.random.default_rng(1)
    p = rng.random(500)
    y = (rng.random(500) < p)
    ref = calibr.ece(p, y.astype(np.int64))
    assert calibr.ece(p, y.astype(dtype)) == ref


def _random_simplex(rng, n, k, adversarial=True):
    p = rng.dirichlet(np.full(k, 0.5), size=n)
    if adversarial and n:
        m = rng.random(n) < 0.2
        p[m] = np.eye(k)[rng.integers(0, k, m.sum())]  # one-hot rows
        t = rng.random(n) < 0.1
        p[t] = 1.0 / k  # all tied
    return p


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("bins", [1, 4, 10, 50])
@pytest.mark.parametrize("n", [1, 33, 5000, 140_000])
def test_multiclass_kernels_match_oracles(k, bins, n):
    rng = np.random.default_rng(k * 7919 + bins * 31 + n)
    p = _random_simplex(rng, n, k)
    codes = rng.integers(0, k, n)
    _assert_stats_equal(binned.confidence_stats(p, codes, bins),
                        confidence_stats_oracle(p, codes, bins))
    _assert_stats_equal(binned.classwise_stats(p, codes, bins),
                        classwise_stats_oracle(p, codes, bins))


unit = st.one_of(
    st.floats(0, 1),
    st.sampled_from([0.0, 1.0, 0.1, 0.3, 0.7, 1 / 3, 2 / 3, 0.30000000000000004, 0.5]),
)


@settings(max_examples=300, deadline=None)
@given(
    p=hnp.arrays(np.float64, st.integers(1, 60), elements=unit),
    bins=st.integers(1, 60),
    data=st.data(),
)
def test_property_binary_fast_equals_oracle_and_order(p, bins, data):
    y = data.draw(hnp.arrays(np.int64, p.shape, elements=st.integers(0, 1)))
    fast = binned.binary_stats(p, y, bins)
    oracle = binary_stats_oracle(p, y, bins)
    _assert_stats_equal(fast, oracle)
    e, m = calibr.ece(p, y, bins), calibr.mce(p, y, bins)
    assert 0.0 <= e <= m + ORDER_SLACK
    assert m <= 1.0


@settings(max_examples=200, deadline=None)
@given(
    raw=hnp.arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(2, 6)),
                   elements=st.floats(0, 1)),
    bins=st.integers(1, 30),
    data=st.data(),
)
def test_property_multiclass(raw, bins, data):
    sums = raw.sum(axis=1, keepdims=True)
    p = np.where(sums > 0, raw / np.where(sums > 0, sums, 1), 1.0 / raw.shape[1])
    n, k = p.shape
    y = data.draw(hnp.arrays(np.int64, (n,), elements=st.integers(1, k)))
    for type_ in TYPES:
        e, m = calibr.ece(p, y, bins, type_), calibr.mce(p, y, bins, type_)
        assert 0.0 <= e <= m + ORDER_SLACK and m <= 1.0
    _assert_stats_equal(binned.classwise_stats(p, y - 1, bins),
                        classwise_stats_oracle(p, y - 1, bins))
    _assert_stats_equal(binned.confidence_stats(p, y - 1, bins),
                        confidence_stats_oracle(p, y - 1, bins))


def test_permutation_invariance_and_pandas_equals_numpy():
    rng = np.random.default_rng(5)
    p = _random_simplex(rng, 400, 4)
    y = rng.integers(1, 5, 400)
    perm = rng.permutation(400)
    df = pd.DataFrame(p, columns=list("abcd"))
    labels = pd.Categorical(np.array(list("abcd"))[y - 1], categories=list("abcd"))
    for metric in (calibr.ece, calibr.mce):
        for type_ in TYPES:
            ref = metric(p, y, 7, type_)
            assert metric(p[perm], y[perm], 7, type_) == pytest.approx(ref, rel=1e-13, abs=1e-15)
            assert metric(df, labels, 7, type_) == ref
            assert metric(df, np.array(list("abcd"))[y - 1], 7, type_) == ref


def test_large_binary_against_oracle_metrics():
    rng = np.random.default_rng(11)
    p = rng.random(1_000_003)
    y = rng.random(p.size) < p
    for bins in (10, 15):
        st_ = binary_stats_oracle(p, y, bins)
        assert calibr.ece(p, y, bins) == pytest.approx(binned.ece_from_stats(*st_), rel=1e-12)
        assert calibr.mce(p, y, bins) == pytest.approx(binned.mce_from_stats(*st_), rel=1e-12)


# ----------------------------------------------------------------- live R parity


def _r_y(y):
    return np.asarray(y, dtype=np.int64)


@pytest.mark.r
def test_r_breaks_are_numpy_linspace(rref):
    import rpy2.robjects as ro

    for b in (1, 2, 3, 7, 10, 15, 20, 49, 50, 100, 333, 1000):
        r = np.asarray(ro.r(f"seq(0, 1, length.out = {b + 1})"))
        np.testing.assert_array_equal(r, binned.breaks(b))


def _check(rref, p, y_r, y_py=None, bins=10, types=TYPES, **kw):
    y_py = y_r if y_py is None else y_py
    for metric in ("ece", "mce"):
        for type_ in types:
            want = getattr(rref, metric)(p, _r_y(y_r), bins=bins, type=type_)
            got = getattr(calibr, metric)(p, y_py, bins=bins, type=type_, **kw)
            assert got == pytest.approx(want, rel=R_RTOL, abs=R_ATOL), (metric, type_, bins)


@pytest.mark.r
@pytest.mark.parametrize("bins", list(range(1, 51)))
def test_r_parity_binary_every_bins(rref, bins):
    rng = np.random.default_rng(100 + bins)
    n = int(rng.integers(1, 400))
    p = _adversarial_values(rng, n, bins)
    y = (rng.random(n) < p).astype(np.int64)
    _check(rref, p, y, bins=bins, types=("classwise",))


@pytest.mark.r
@pytest.mark.parametrize("k", list(range(2, 11)))
@pytest.mark.parametrize("bins", [1, 2, 3, 5, 10, 13, 20, 50])
def test_r_parity_multiclass(rref, k, bins):
    rng = np.random.default_rng(1000 * k + bins)
    n = int(rng.integers(1, 300))
    p = _random_simplex(rng, n, k)
    y = rng.integers(1, k + 1, n)
    _check(rref, p, y, bins=bins)


@pytest.mark.r
def test_r_parity_values_on_breaks_and_ties(rref):
    rng = np.random.default_rng(3)
    for bins in (3, 10, 20):
        edges = binned.breaks(bins)
        p = np.repeat(np.concatenate([edges, [0.3, 0.7, 1 / 3, 2 / 3]]), 5)
        y = (rng.random(p.size) < 0.5).astype(np.int64)
        _check(rref, p, y, bins=bins, types=("classwise",))
        # k / B written as a division is not always the break
        kb = np.arange(bins + 1) / bins
        _check(rref, kb, (kb > 0.5).astype(np.int64), bins=bins, types=("classwise",))
    # heavy ties in multiclass: few distinct rows
    rows = _random_simplex(rng, 4, 4, adversarial=False)
    p = rows[rng.integers(0, 4, 200)]
    y = rng.integers(1, 5, 200)
    for bins in (1, 4, 10):
        _check(rref, p, y, bins=bins)
    # one-hot rows only
    p = np.eye(5)[rng.integers(0, 5, 100)]
    _check(rref, p, rng.integers(1, 6, 100), bins=10)


@pytest.mark.r
def test_r_parity_categorical_and_dataframe(rref):
    rng = np.random.default_rng(8)
    p = _random_simplex(rng, 150, 3)
    y = rng.integers(1, 4, 150)
    names = np.array(["setosa", "versicolor", "virginica"])
    df = pd.DataFrame(p, columns=names)
    cat = pd.Categorical(names[y - 1], categories=names)
    for bins in (5, 10):
        _check(rref, p, y, y_py=cat, bins=bins)
        _check(rref, df, y, y_py=names[y - 1], bins=bins)
        # R sees the factor directly
        for metric in ("ece", "mce"):
            want = getattr(rref, metric)(p, cat, bins=bins, type="classwise")
            assert getattr(calibr, metric)(df, cat, bins=bins) == pytest.approx(
                want, rel=R_RTOL, abs=R_ATOL)


@pytest.mark.r
def test_r_rejects_what_calibr_rejects(rref):
    bad = [
        ([0.1, 1.2], [0, 1], {}),
        ([0.1, np.nan], [0, 1], {}),
        ([0.1, 0.2], [0, 2], {}),
        (np.array([[0.5, 0.5], [0.2, 0.7]]), [1, 2], {}),
        (np.array([[0.5, 0.5], [0.3, 0.7]]), [0, 2], {}),
        ([0.1, 0.2], [0, 1], {"bins": 2.5}),
        ([0.1, 0.2], [0, 1], {"bins": 0}),
    ]
    for p, y, kw in bad:
        with pytest.raises(rref.RError):
            rref.ece(np.asarray(p, dtype=float), np.asarray(y), **kw)
        with pytest.raises(calibr.InputError):
            calibr.ece(p, y, **kw)


# ----------------------------------------------------------------- memory of the chunks


@pytest.mark.parametrize("kind", ["binary", "confidence", "classwise"])
@pytest.mark.parametrize("memory", [None, 1])
def test_chunked_sums_are_bit_identical_with_fewer_chunks_alive(monkeypatch, kind, memory):
    """The chunk results are added in chunk order, as np.sum over the stacked
    chunks did, whatever the number of chunks alive at once (all of them, or one
    at a time when the per-bin sums are large): bit for bit the same numbers."""
    from calibr._kernels import _threads

    rng = np.random.default_rng(17)
    n, k, bins = 300_000, 4, 50
    p = _random_simplex(rng, n, k)
    codes = rng.integers(0, k, n)
    if kind == "binary":
        args, chunk = (p[:, 0].copy(), (codes == 0).astype(np.int64)), binned._binary_chunk
        fast, checks = binned.binary_stats, ()
    elif kind == "confidence":
        args, chunk, fast = (p, codes), binned._confidence_chunk, binned.confidence_stats
        checks = (np.int64(0), np.inf)
    else:
        args, chunk, fast = (p, codes), binned._classwise_chunk, binned.classwise_stats
        checks = (np.int64(0), np.inf)
    parts = []
    for lo, hi in _threads.chunk_bounds(n, binned.CHUNKS):
        part, ok = chunk(*args, *checks, bins, binned.lanes(bins), lo, hi)
        assert ok
        parts.append(part)
    before = np.sum(parts, axis=0)  # how the chunks were summed before
    if memory is not None:
        monkeypatch.setattr(binned, "CHUNK_MEMORY", memory)  # one chunk alive at a time
    got = fast(*args, bins)
    want = (before[:, 0], before[:, 1], before[:, 2]) if kind == "classwise" else tuple(before)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


# ----------------------------------------------------------------- the threaded paths
#
# Inputs of at least binned.PARALLEL_MIN_N rows are cut into binned.CHUNKS chunks
# that run in threads, and the input scans of at least scans.PARALLEL_MIN_N values
# into scans.CHUNKS: every row must be counted once, in whichever chunk it lies.


def _rows_on_breaks(rng, p, rows, bins):
    """Put the top (first column) value of the given rows exactly on a break."""
    k = p.shape[1]
    v = rng.choice(binned.breaks(bins)[1:-1], rows.size)
    v = np.maximum(v, 1.0 / k)  # still the top value (ties to the first column)
    p[rows] = (1 - v[:, None]) / (k - 1)
    p[rows, 0] = v


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("bins", [3, 10])
def test_multiclass_threaded_path_counts_every_row_once(k, bins):
    from calibr._kernels._threads import chunk_bounds

    n = binned.PARALLEL_MIN_N + 5  # the threaded path, and not a multiple of CHUNKS
    assert n % binned.CHUNKS != 0
    rng = np.random.default_rng(1000 * k + bins)
    p = _random_simplex(rng, n, k)
    codes = rng.integers(0, k, n)
    bounds = chunk_bounds(n, binned.CHUNKS)
    # values on the breaks, at each chunk's first and last rows and all over the last chunk
    edges_rows = np.array([b for lo, hi in bounds for b in (lo, hi - 1)])
    last = rng.integers(bounds[-1][0], n, 3000)
    _rows_on_breaks(rng, p, np.concatenate([edges_rows, last]), bins)
    for fast, oracle in ((binned.confidence_stats, confidence_stats_oracle),
                         (binned.classwise_stats, classwise_stats_oracle)):
        got, want = fast(p, codes, bins), oracle(p, codes, bins)
        np.testing.assert_array_equal(got[0], want[0])  # counts: exact
        np.testing.assert_array_equal(got[2], want[2])  # hits: exact integers too
        _assert_stats_equal(got, want)
        assert got[0].sum() == n * (k if fast is binned.classwise_stats else 1)
    for type_ in TYPES:  # and the public metrics
        st_ = (classwise_stats_oracle if type_ == "classwise" else confidence_stats_oracle)(
            p, codes, bins)
        assert calibr.ece(p, codes + 1, bins, type_) == pytest.approx(
            binned.ece_from_stats(*st_), rel=ORACLE_RTOL, abs=ORACLE_ATOL)
        assert calibr.mce(p, codes + 1, bins, type_) == pytest.approx(
            binned.mce_from_stats(*st_), rel=ORACLE_RTOL, abs=ORACLE_ATOL)


def test_binary_threaded_path_with_breaks_in_the_last_chunk():
    from calibr._kernels._threads import chunk_bounds

    n, bins = binned.PARALLEL_MIN_N + 3, 7
    rng = np.random.default_rng(31)
    p = rng.random(n)
    lo = chunk_bounds(n, binned.CHUNKS)[-1][0]
    p[lo:] = rng.choice(binned.breaks(bins), n - lo)
    y = (rng.random(n) < p).astype(np.int64)
    got, want = binned.binary_stats(p, y, bins), binary_stats_oracle(p, y, bins)
    np.testing.assert_array_equal(got[0], want[0])
    _assert_stats_equal(got, want)


def _chunk_edges(n: int, nchunks: int) -> list[int]:
    from calibr._kernels._threads import chunk_bounds

    return sorted({i for lo, hi in chunk_bounds(n, nchunks) for i in (lo, (lo + hi) // 2, hi - 1)})


def test_threaded_scans_find_a_bad_value_in_every_chunk():
    """A bad value only in the last chunk, only in the middle, or at any chunk's
    first or last position is found by each scan of the input layer."""
    from calibr._kernels import scans

    n = scans.PARALLEL_MIN_N + 7  # the threaded path, not a multiple of CHUNKS
    positions = _chunk_edges(n, scans.CHUNKS)
    assert positions[-1] == n - 1 and len(positions) == 3 * scans.CHUNKS
    for pos in positions:
        x = np.full(n, 0.5)
        for bad in (1.5, -0.0 - 1e-300, np.nan, np.inf):
            x[pos] = bad
            assert scans.count_outside_unit(x) == 1, (pos, bad)
        y = np.zeros(n)
        y[pos] = 2.0
        assert scans.count_not_binary(y) == 1, pos
    assert scans.count_outside_unit(np.full(n, 0.5)) == 0
    x = np.full(n, 0.5)
    x[positions] = 7.0
    assert scans.count_outside_unit(x) == len(positions)
    m = scans.PARALLEL_MIN_N // 4 + 3  # rows of 4: m * 4 values, the threaded path
    for row in _chunk_edges(m, scans.CHUNKS):
        p = np.full((m, 4), 0.25)
        p[row, 0] = 0.3
        assert scans.count_bad_row_sums(p, 1e-6) == 1, row


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint8, np.bool_, np.int8])
def test_small_scans_by_numpy_count_as_the_kernels(dtype):
    """Below scans.NUMPY_MAX_N values the scans are numpy's: on the edge values
    (0, 1, their neighbours, -0.0, NaN, inf) and every label dtype they count
    what the compiled scans count, and the boundary itself switches paths."""
    from calibr._kernels import scans

    edges = np.array([0.0, -0.0, 1.0, np.nextafter(0, -1), np.nextafter(1, 2),
                      np.nextafter(0, 1), np.nextafter(1, 0), np.nan, np.inf, -np.inf, 0.5,
                      2.0, -1.0])
    rng = np.random.default_rng(5)
    for n in (len(edges), 1000, scans.NUMPY_MAX_N - 1, scans.NUMPY_MAX_N):
        x = rng.choice(edges, n)
        kernel = scans._count(scans._count_outside_unit, x)
        assert scans.count_outside_unit(x) == kernel == int(np.sum(~((x >= 0) & (x <= 1))))
        labels = np.array([0, 1, 2, -1, 3, 0, 1]) if dtype is not np.bool_ else np.array([0, 1])
        y = rng.choice(labels, n).astype(dtype)
        if dtype is np.float64:
            y[::7] = np.nan
            y[1::11] = 0.5
        kernel = scans._count(scans._count_not_binary, y)
        assert scans.count_not_binary(y) == kernel
        assert kernel == int(np.sum(~np.isin(y, [0, 1])))


@pytest.mark.parametrize("where", ["middle", "last"])
def test_threaded_checks_of_the_public_functions(where):
    """The same through ece(): the message names the only bad value (or row)."""
    from calibr._kernels import scans

    n = scans.PARALLEL_MIN_N + 7
    pos = n // 2 + 1 if where == "middle" else n - 1
    p = np.full(n, 0.5)
    y = np.zeros(n, dtype=np.int64)
    p[pos] = 1.5
    with pytest.raises(calibr.InputError, match=rf"^`p` must lie in \[0, 1\]; 1 value does not, "
                       rf"the first at position {pos} \(1\.5\)\.$"):
        calibr.ece(p, y)
    p[pos] = 0.5
    y[pos] = 2
    with pytest.raises(calibr.InputError, match=rf"^`y` must be 0/1 or boolean for a vector "
                       rf"`p`; 1 value does not, the first at position {pos} \(2\)\.$"):
        calibr.ece(p, y)
    m = scans.PARALLEL_MIN_N // 4 + 3
    row = m // 2 + 1 if where == "middle" else m - 1
    P = np.full((m, 4), 0.25)
    P[row, 0] = 0.3
    with pytest.raises(calibr.InputError, match=rf"^`p` rows must sum to 1 \(within 1e-06\); "
                       rf"1 row does not, the first at row {row} \(sum 1\.05"):
        calibr.mce(P, np.ones(m, dtype=np.int64))


# ----------------------------------------------------------------- input dtypes


def test_integer_p_and_object_labels_give_the_same_numbers():
    """Integer-dtype probabilities (0/1), and boolean or float labels held in object
    arrays, reach the numbers of float64 p and integer labels."""
    rng = np.random.default_rng(41)
    p = np.concatenate([np.zeros(30), np.ones(30), rng.random(60)])
    p_int = (rng.random(120) < 0.5).astype(np.int64)
    y = (rng.random(120) < 0.5).astype(np.int64)
    labels = {
        "bool objects": np.array([bool(v) for v in y], dtype=object),
        "float objects": np.array([float(v) for v in y], dtype=object),
        "bool": y.astype(bool),
    }
    for metric in (calibr.ece, calibr.mce):
        for pp in (p, p_int):
            want = metric(pp.astype(np.float64), y, bins=7)
            for dtype in (np.int64, np.int32, np.uint8):
                if pp is p_int:
                    assert metric(pp.astype(dtype), y, bins=7) == want, dtype
            for name, yy in labels.items():
                assert metric(pp, yy, bins=7) == want, name
    # a one-hot integer matrix with R codes, and object labels of the classes
    k = 3
    onehot = np.eye(k, dtype=np.int64)[rng.integers(0, k, 90)]
    codes = rng.integers(1, k + 1, 90)
    for type_ in TYPES:
        want = calibr.ece(onehot.astype(np.float64), codes, 5, type_)
        assert calibr.ece(onehot, codes, 5, type_) == want
        assert calibr.ece(onehot.astype(np.uint8), codes.astype(object), 5, type_) == want
        assert calibr.ece(onehot, codes.astype(np.float64).astype(object), 5, type_) == want


# ----------------------------------------------------------------- one pass: check and bin
#
# ece()/mce() take the binning pass's own checks optimistically and fall back to
# the input layer (calibr._input.finish) only when they refuse something, for
# its message: the messages, and every number, must be those of the checks.


def _neighbours(edges, rng):
    """The breaks, the two doubles on each side of each, the midpoints, random values
    and the smallest subnormal: the values where a bin rule can go wrong."""
    v = np.concatenate([edges, np.nextafter(edges, 2.0), np.nextafter(edges, -1.0),
                        np.nextafter(np.nextafter(edges, 2.0), 2.0),
                        np.nextafter(np.nextafter(edges, -1.0), -1.0),
                        (edges[:-1] + edges[1:]) / 2, rng.random(50), [5e-324]])
    return v[(v >= 0) & (v <= 1)]


def test_bin_rule_on_every_break_and_its_neighbours():
    """One bin rule per closure: the compiled kernels' right-closed rule (one
    comparison with the nearest break, ``_bin_right_closed``) and the numpy rule of
    every other path (``calibr._binning.bin_index``) against the oracle's masks, on
    every break, the doubles next to it, and random values, for every bins up to
    3000 and some up to the largest allowed; ``bin_index`` closed on the left too."""
    import numba

    from calibr._binning import bin_index
    from calibr._kernels.binned import _bin_right_closed

    @numba.njit(cache=False)
    def bins_of(v, bins):  # pragma: no cover - compiled
        out = np.empty(v.size, np.int64)
        step = 1.0 / bins
        for i in range(v.size):
            out[i] = _bin_right_closed(v[i], bins, step)
        return out

    rng = np.random.default_rng(61)
    sizes = list(range(1, 301)) + list(rng.integers(301, 3001, 40))
    sizes += [4095, 4096, 4097, 65_536, 99_991, 999_999, 1_000_000]
    for bins in sizes:
        edges = breaks_oracle(bins)
        if bins > 300:  # every break of the largest would take long: many of them
            edges = np.unique(np.concatenate([edges[:50], edges[-50:],
                                              rng.choice(edges, 300)]))
        v = _neighbours(edges, rng)
        # one mask per bin, or (many bins) the masks of the bins next to each value
        for right in (True, False):
            want = bin_among_oracle(v, breaks_oracle(bins), right, window=bins > 300)
            np.testing.assert_array_equal(bin_index(v, binned.breaks(bins), right), want,
                                          f"bin_index, {bins} bins, right={right}")
            if right:
                np.testing.assert_array_equal(bins_of(v, bins), want, f"compiled, {bins} bins")


def test_bin_index_on_explicit_and_equal_mass_breaks():
    """``bin_index`` on breaks other than R's, both closures, against the oracle's
    masks: random strictly increasing breaks, and the zero-width bins of equal-mass
    breaks ([0, 0] closed on the right, [1, 1] on the left), which hold their value."""
    from calibr._binning import bin_index, equal_mass_breaks

    rng = np.random.default_rng(62)
    cases = [np.array([0.0, 1.0]), np.array([0.0, 0.3, 0.30000000000000004, 1.0])]
    for _ in range(200):
        inner = np.unique(rng.random(int(rng.integers(1, 40))))
        cases.append(np.concatenate([[0.0], inner[(inner > 0) & (inner < 1)], [1.0]]))
    ties = np.array([0.0, 0.0, 0.0, 0.0, 0.5, 0.9])
    for right in (True, False):
        for edges in cases:
            v = _neighbours(edges, rng)
            np.testing.assert_array_equal(bin_index(v, edges, right),
                                          bin_among_oracle(v, edges, right))
        for x in (ties, 1.0 - ties):
            edges = equal_mass_breaks(x, 3, right)
            v = np.concatenate([x, _neighbours(edges, rng)])
            np.testing.assert_array_equal(bin_index(v, edges, right),
                                          bin_among_oracle(v, edges, right))


def _lane_order_oracle(p, y, bins):
    """The documented order of the binary kernel's sums, written plainly: chunks of
    chunk_bounds(n, CHUNKS) from PARALLEL_MIN_N rows; in a chunk [lo, hi), row i in
    lane (i - lo) % L, each lane summed in row order from 0.0, lanes added in lane
    order; chunks added in chunk order. Python floats are IEEE doubles."""
    from calibr._kernels._threads import chunk_bounds

    n = len(p)
    nchunks = binned.CHUNKS if n >= binned.PARALLEL_MIN_N else 1
    nl = binned.lanes(bins)
    b = bin_of_oracle(p, bins)
    total = None
    for lo, hi in chunk_bounds(n, nchunks):
        lanes = [[0.0] * bins for _ in range(nl)]
        count = np.zeros(bins)
        hit = np.zeros(bins)
        for i in range(lo, hi):
            lanes[(i - lo) % nl][b[i]] += float(p[i])
            count[b[i]] += 1
            hit[b[i]] += float(y[i])
        conf = np.array(lanes[0])
        for u in range(1, nl):
            conf = conf + np.array(lanes[u])
        part = np.stack([count, conf, hit])
        total = part if total is None else total + part
    return total


@pytest.mark.parametrize("bins", [1, 3, 10, binned.LANES_MAX_BINS + 1])
@pytest.mark.parametrize("n", [1, 5, 4099, binned.PARALLEL_MIN_N + 9])
def test_binary_sums_follow_the_documented_order_bit_for_bit(bins, n):
    """What a caller that must reproduce ece() bit for bit (the grouped kernels)
    relies on: the lanes, the chunks and their order, exactly."""
    rng = np.random.default_rng(bins + n)
    p = _adversarial_values(rng, n, bins)
    p[: n // 3] = rng.random(n // 3) * 0.05  # a run of neighbours in the first bin
    y = (rng.random(n) < p).astype(np.int64)
    want = _lane_order_oracle(p, y, bins)
    for got in (binned.binary_stats(p, y, bins),
                binned.checked_bin_stats(p, y.astype(bool), 0, True, bins, "classwise", 1e-6)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    # the confidence form is the binary form of the top label and its hit
    P = np.column_stack([p, 1 - p]) if bins > 1 else np.column_stack([p, 1 - p])
    codes = (rng.random(n) < 0.5).astype(np.int64)
    r = np.maximum(p, 1 - p)
    hit = (np.where(p >= 1 - p, 0, 1) == codes).astype(np.int64)
    for g, w in zip(binned.confidence_stats(P, codes, bins), binned.binary_stats(r, hit, bins),
                    strict=True):
        np.testing.assert_array_equal(g, w)


def test_the_compiled_routine_for_one_chunk():
    """binary_rows (for callers in compiled code) gives one chunk's statistics."""
    rng = np.random.default_rng(71)
    p, bins = rng.random(5000), 12
    y = (rng.random(5000) < p).astype(np.uint8)
    nl = binned.lanes(bins)
    out = np.zeros((3, bins))
    scratch = (np.zeros(2 * nl * bins, np.int64), np.zeros(nl * bins),
               np.zeros(binned.BLOCK, np.uint32))
    assert binned.binary_rows(p, y, 100, 4000, bins, nl, *scratch, out[0], out[1], out[2])
    for g, w in zip(out, binned.binary_stats(p[100:4000], y[100:4000], bins), strict=True):
        np.testing.assert_array_equal(g, w)
    y[3999] = 2
    assert not binned.binary_rows(p, y, 100, 4000, bins, nl, *scratch, out[0], out[1], out[2])
    assert binned.binary_rows(p, y, 100, 3999, bins, nl, *scratch, out[0], out[1], out[2])


def _message(call, *args, **kwargs):
    with pytest.raises((calibr.InputError, calibr.InputTypeError)) as info:
        call(*args, **kwargs)
    return str(info.value)


def _positions(n):
    """First and last rows, the edges of the first block, and the first, middle and
    last rows of the first, a middle and the last chunk."""
    from calibr._kernels._threads import chunk_bounds

    nchunks = binned.CHUNKS if n >= binned.PARALLEL_MIN_N else 1
    pos = {0, n - 1, min(n - 1, binned.BLOCK - 1), min(n - 1, binned.BLOCK)}
    bounds = chunk_bounds(n, nchunks)
    for lo, hi in {bounds[0], bounds[nchunks // 2], bounds[-1]}:
        pos |= {lo, hi - 1, (lo + hi) // 2}
    return sorted(pos)


@pytest.mark.parametrize("n", [3, 4100, binned.PARALLEL_MIN_N + 7])
def test_binary_fast_path_messages_are_the_checks_messages(n):
    """A bad value anywhere (first, middle or last chunk, block edges): the same
    message as the input layer's checks, naming that position; NaN dropped by
    na_rm=True gives the number of the complete rows."""
    from calibr._input import prepare

    rng = np.random.default_rng(n)
    p0 = rng.random(n)
    y0 = (rng.random(n) < p0).astype(np.int64)
    bad_p = [np.nan, np.inf, -np.inf, 1.5, -1e-300, 1 + 2**-52]
    bad_y = [2, -1, 0.5, np.nan]
    for pos in _positions(n):
        for v in bad_p:
            p = p0.copy()
            p[pos] = v
            msg = _message(prepare, p, y0)
            assert re.search(rf"position {pos}\b", msg)
            for dtype in (np.int64, bool, np.float64):
                for metric in (calibr.ece, calibr.mce):
                    assert _message(metric, p, y0.astype(dtype), bins=7) == msg
            if np.isnan(v) and n > 1:
                keep = np.arange(n) != pos
                assert calibr.ece(p, y0, na_rm=True) == calibr.ece(p[keep], y0[keep])
        for v in bad_y:
            y = y0.astype(np.float64)
            y[pos] = v
            forms = [y, y.astype(np.int64)] if v in (2, -1) else [y]
            for yy in forms:
                msg = _message(prepare, p0, yy)
                assert re.search(rf"position {pos}\b", msg)
                assert _message(calibr.ece, p0, yy) == msg
            if np.isnan(v) and n > 1:
                keep = np.arange(n) != pos
                assert calibr.mce(p0, y, na_rm=True) == calibr.mce(p0[keep], y0[keep])


@pytest.mark.parametrize("n", [4, 3000, binned.PARALLEL_MIN_N + 5])
def test_multiclass_fast_path_messages_are_the_checks_messages(n):
    from calibr._input import prepare

    rng = np.random.default_rng(n + 1)
    k = 3
    P0 = _random_simplex(rng, n, k, adversarial=False)
    codes0 = rng.integers(1, k + 1, n)
    for pos in _positions(n):
        cases = []
        for v in (np.nan, 1.2, -0.1, np.inf):
            P = P0.copy()
            P[pos, 1] = v
            cases.append((P, codes0))
        P = P0.copy()
        P[pos] = [0.5, 0.25, 0.26]  # a row sum off by 0.01
        cases.append((P, codes0))
        P = P0.copy()
        P[pos] = [0.5, 0.25, 0.25 + 5e-7]  # within the tolerance: fine
        cases.append((P, codes0))
        for v in (0, k + 1, -3):
            y = codes0.copy()
            y[pos] = v
            cases.append((P0, y))
        for v in (1.5, np.nan, np.inf):
            y = codes0.astype(np.float64)
            y[pos] = v
            cases.append((P0, y))
        y = pd.Categorical.from_codes(codes0 - 1, categories=["a", "b", "c"])
        y = pd.Categorical(np.where(np.arange(n) == pos, None, np.asarray(y, dtype=object)),
                           categories=["a", "b", "c"])
        cases.append((P0, y))
        for P, y in cases:
            try:
                prep = prepare(P, y)
            except calibr.InputError as err:
                msg = str(err)
                for type_ in TYPES:
                    for metric in (calibr.ece, calibr.mce):
                        assert _message(metric, P, y, 5, type_) == msg, (pos, type_)
            else:
                for type_ in TYPES:
                    want = binned.ece_from_stats(*binned.bin_stats(prep.p, prep.y, False, 5,
                                                                   type_))
                    assert calibr.ece(P, y, 5, type_) == want


@pytest.mark.parametrize("n", [500, binned.PARALLEL_MIN_N + 3])
def test_every_label_dtype_gives_the_same_bits(n):
    """bool, integers of every width and sign, floats and objects: the same numbers
    (counts and hits are exact integers, so the label dtype cannot change a sum)."""
    rng = np.random.default_rng(n + 5)
    p = rng.random(n)
    y = rng.random(n) < p
    want = (calibr.ece(p, y.astype(np.int64)), calibr.mce(p, y.astype(np.int64)))
    forms = [y.astype(d) for d in (bool, np.int8, np.uint8, np.int16, np.int32, np.uint32,
                                   np.int64, np.uint64, np.float16, np.float32, np.float64)]
    forms += [y.astype(object), y.astype(np.int64).astype(object),
              pd.Series(y, dtype="boolean"), pd.Series(y.astype(np.int64), dtype="Int64"),
              pd.Series(y.astype(np.int64)).astype("int64[pyarrow]"),
              np.repeat(y.astype(np.int64), 2)[::2]]  # a strided view
    for yy in forms:
        assert (calibr.ece(p, yy), calibr.mce(p, yy)) == want, getattr(yy, "dtype", None)
    P = np.column_stack([p * 0.5, p * 0.5, 1 - p])
    codes = rng.integers(1, 4, n)
    for type_ in TYPES:
        want = calibr.ece(P, codes, 6, type_)
        for d in (np.int8, np.uint8, np.int16, np.int32, np.uint64, np.float32, np.float64):
            assert calibr.ece(P, codes.astype(d), 6, type_) == want, (type_, d)
        assert calibr.ece(P, codes.astype(object), 6, type_) == want
        cat = pd.Categorical.from_codes(codes - 1, categories=["a", "b", "c"])
        assert calibr.ece(P, cat, 6, type_) == want
        assert calibr.ece(pd.DataFrame(P, columns=["a", "b", "c"]), cat, 6, type_) == want
        assert calibr.ece(P, np.array(list("abc"))[codes - 1], 6, type_,
                          classes=["a", "b", "c"]) == want


@pytest.mark.parametrize("dtype", [bool, np.int8, np.int64, np.float64])
def test_binary_labels_are_read_without_a_copy(dtype):
    """The fast path reads p and y as given: no converted copy of either (numpy
    allocations are traced; the kernels' per-bin sums are not numpy's)."""
    import tracemalloc

    rng = np.random.default_rng(3)
    n = 1 << 21
    p = rng.random(n)
    y = (rng.random(n) < p).astype(dtype)
    calibr.ece(p, y)  # compile or load the kernels outside the measurement
    tracemalloc.start()
    try:
        calibr.ece(p, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak  # y alone is at least 2 MB


def test_cell_rows_adds_each_row_to_its_group_and_bin():
    """cell_rows (calibr/_engines/polars.py's batches): row i into cell ``(g_i - base)
    * bins + bin_index(p_i)``, in row order (np.add.at's sums, bit for bit), rows
    keyed ``skip`` in no cell; key_range ignores them; a bad p or y stops it."""
    from calibr._binning import bin_index

    rng = np.random.default_rng(3)
    n, bins, skip = 5000, 7, -(2**62)
    p = rng.random(n)
    p[:8] = np.linspace(0, 1, 8)  # R's breaks of 7 bins, 0 and 1
    y = (rng.random(n) < p).astype(np.float64)
    g = rng.integers(-3, 5, n).astype(np.int64)
    g[::13] = skip
    assert binned.key_range(g, skip) == (-3, 4)
    assert binned.key_range(np.full(3, skip), skip) == (1, 0)
    out = [np.zeros(8 * bins) for _ in range(3)]
    assert binned.cell_rows(g, p, y, skip, -3, bins, *out)
    kept = g != skip
    cell = (g[kept] + 3) * bins + bin_index(p[kept], np.linspace(0, 1, bins + 1), True)
    want = [np.zeros(8 * bins) for _ in range(3)]
    for a, v in zip(want, (np.ones(kept.sum()), p[kept], y[kept]), strict=True):
        np.add.at(a, cell, v)
    for a, b in zip(out, want, strict=True):
        np.testing.assert_array_equal(a, b)
    for bad_p, bad_y in ((np.nan, 0.0), (1.5, 0.0), (-1e-300, 1.0), (0.5, 2.0), (0.5, np.nan)):
        p2, y2 = p.copy(), y.copy()
        p2[-1], y2[-1] = bad_p, bad_y
        g2 = g.copy()
        g2[-1] = 0
        assert not binned.cell_rows(g2, p2, y2, skip, -3, bins,
                                    *[np.zeros(8 * bins) for _ in range(3)])
        g2[-1] = skip  # a row in no group is not checked (pandas drops it first)
        assert binned.cell_rows(g2, p2, y2, skip, -3, bins,
                                *[np.zeros(8 * bins) for _ in range(3)])
