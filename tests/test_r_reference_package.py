"""Checks of the R reference package itself (``r_reference/calibrRef``).

The parity tests trust calibrRef, so calibrRef must earn that trust here: hand-worked
values (exact fractions where the metric is rational), the endpoint and tie conventions
of ``docs/definitions.md``, internal identities between estimators, an error for every
kind of bad input of its "Inputs" section, the help-page examples, and the committed reference data
(``tests/data/r_reference``, made by ``r_reference/make_inputs.R`` and
``r_reference/make_reference.R``) matching what the installed package computes now.

All tests go through the ``rref`` fixture (``tests/rref.py``) and are marked ``r``.
"""

from __future__ import annotations

import math
import shutil
import statistics
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rref import DATA_DIR as DATA
from rref import call_reference_row, read_case, read_cases, read_reference

pytestmark = pytest.mark.r

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "r_reference" / "examples"

# Tolerances (each with its reason).
# Hand-worked values: R sums and means in long double, so allow a few ulps.
EXACT_RTOL = 1e-15
# Closed forms with exp(): libm's exp may differ from Python's by an ulp or two.
CLOSED_FORM_RTOL = 1e-14
# Committed data vs. the live package on this machine: the same code on the same doubles
# is bit-identical; a different BLAS (tcrossprod in the canonical form) may move the last
# bits, which matters only in absolute terms for values that cancel to ~0.
COMMITTED_RTOL, COMMITTED_ATOL = 1e-13, 1e-15


def f(x: Fraction | float) -> float:
    return float(x)


# --------------------------------------------------------------------------- hand-worked ECE/MCE


def test_mce_help_page_example_is_0_15(rref):
    p = np.array([0.10, 0.20, 0.80, 0.90])
    y = np.array([0, 0, 1, 1])
    # Bin [0, 0.5]: conf = (0.1 + 0.2) / 2, acc = 0; bin (0.5, 1]: conf = 0.85, acc = 1.
    assert rref.mce(p, y, bins=2) == pytest.approx(0.15, rel=EXACT_RTOL)
    assert rref.ece(p, y, bins=2) == pytest.approx(0.15, rel=EXACT_RTOL)
    # One bin: conf = 0.5 = acc.
    assert rref.ece(p, y, bins=1) == pytest.approx(0.0, abs=1e-16)


def test_zero_is_in_the_first_bin_and_a_break_goes_to_the_lower_bin(rref):
    p = np.array([0.0, 0.5, 1.0])
    y = np.array([0, 1, 1])
    # bins = 2: [0, 0.5] holds 0 and 0.5 (conf 1/4, acc 1/2); (0.5, 1] holds 1 (gap 0).
    assert rref.ece(p, y, bins=2) == pytest.approx(
        f(Fraction(2, 3) * Fraction(1, 4)), rel=EXACT_RTOL
    )
    assert rref.mce(p, y, bins=2) == pytest.approx(0.25, rel=EXACT_RTOL)


def test_values_on_computed_breaks_use_seq_breaks(rref):
    # seq(0, 1, length.out = 11)[4] is 3 * 0.1 = 0.30000000000000004, not 0.3.
    on_break = 3 * 0.1
    assert on_break == np.linspace(0, 1, 11)[3] and on_break != 0.3
    p = np.array([on_break, 0.35])
    y = np.array([1, 0])
    # on_break is in bin (0.2, 0.3000...04] alone, 0.35 in (0.3000...04, 0.4] alone.
    gap1 = 1 - Fraction(on_break)
    gap2 = Fraction(0.35)
    expected_ece = (gap1 + gap2) / 2
    assert rref.ece(p, y, bins=10) == pytest.approx(f(expected_ece), rel=EXACT_RTOL)
    assert rref.mce(p, y, bins=10) == pytest.approx(f(max(gap1, gap2)), rel=EXACT_RTOL)
    # Had on_break gone to the upper bin, both would be |1/2 - 0.325| = 0.175.
    assert not math.isclose(rref.ece(p, y, bins=10), 0.175, rel_tol=1e-6)


def test_classwise_and_confidence_by_hand(rref):
    p = np.array([[0.25, 0.75], [0.5, 0.5], [1.0, 0.0]])
    y = np.array([2, 1, 1])
    # Column 1 vs 1{y = 1} = (0, 1, 1), bins = 2: [0, .5] holds 0.25, 0.5 (conf 3/8, acc 1/2),
    # (.5, 1] holds 1.0 (gap 0): ECE_1 = 2/3 * 1/8 = 1/12, MCE_1 = 1/8.
    # Column 2 vs (1, 0, 0): [0, .5] holds 0.5, 0 (conf 1/4, acc 0), (.5, 1] holds 0.75
    # (acc 1, gap 1/4): ECE_2 = 2/3 * 1/4 + 1/3 * 1/4 = 1/4, MCE_2 = 1/4.
    ece_cw = (Fraction(1, 12) + Fraction(1, 4)) / 2
    assert rref.ece(p, y, bins=2) == pytest.approx(f(ece_cw), rel=EXACT_RTOL)
    assert rref.mce(p, y, bins=2) == pytest.approx(0.25, rel=EXACT_RTOL)
    # Confidence: r = (0.75, 0.5, 1.0) (the 0.5/0.5 tie goes to column 1), c = (1, 1, 1).
    # bins = 2: [0, .5] holds 0.5 (gap 1/2); (.5, 1] holds 0.75, 1.0 (conf 7/8, gap 1/8).
    ece_conf = Fraction(1, 3) * Fraction(1, 2) + Fraction(2, 3) * Fraction(1, 8)
    assert rref.ece(p, y, bins=2, type="confidence") == pytest.approx(f(ece_conf), rel=EXACT_RTOL)
    assert rref.mce(p, y, bins=2, type="confidence") == pytest.approx(0.5, rel=EXACT_RTOL)


@pytest.mark.parametrize(("label", "expected"), [(1, 0.6), (2, 0.4), (3, 0.4)])
def test_confidence_ties_go_to_the_first_maximal_column(rref, label, expected):
    p = np.array([[0.4, 0.4, 0.2]])
    # Predicted class is column 1 (max.col ties.method = "first"); r = 0.4.
    assert rref.ece(p, np.array([label]), bins=10, type="confidence") == pytest.approx(
        expected, rel=EXACT_RTOL
    )


def test_empty_bins_are_ignored(rref):
    p = np.array([0.05, 0.95])
    y = np.array([0, 1])
    for bins in (1, 2, 10, 50):
        expected = 0.0 if bins == 1 else 0.05
        assert rref.ece(p, y, bins=bins) == pytest.approx(expected, abs=1e-16, rel=EXACT_RTOL)
        assert rref.mce(p, y, bins=bins) == pytest.approx(expected, abs=1e-16, rel=EXACT_RTOL)


def test_type_is_ignored_for_binary_input(rref):
    rng = np.random.default_rng(5)
    p = rng.random(50)
    y = (rng.random(50) < p).astype(int)
    assert rref.ece(p, y, type="classwise") == rref.ece(p, y, type="confidence")
    assert rref.mce(p, y, bins=7, type="classwise") == rref.mce(p, y, bins=7, type="confidence")
    values = {rref.skce(p, y, type=t) for t in ("canonical", "confidence", "classwise")}
    assert len(values) == 1


def test_factor_labels_equal_integer_codes(rref):
    p = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    codes = np.array([2, 1, 3, 3])
    factor = pd.Categorical.from_codes(codes - 1, categories=["a", "b", "c"])
    assert rref.ece(p, factor, bins=3) == rref.ece(p, codes, bins=3)
    assert rref.ece(p, pd.Series(factor), bins=3) == rref.ece(p, codes, bins=3)
    assert rref.skce(p, factor, estimator="biased") == rref.skce(p, codes, estimator="biased")


# --------------------------------------------------------------------------- hand-worked SKCE/MMCE


def test_binary_skce_two_points_closed_form(rref):
    p = np.array([0.2, 0.9])
    y = np.array([0, 1])
    h = 0.2
    e = np.array([0 - 0.2, 1 - 0.9])
    k12 = math.exp(-abs(0.2 - 0.9) / h)
    biased = (e[0] ** 2 + e[1] ** 2 + 2 * e[0] * e[1] * k12) / 4
    uq = e[0] * e[1] * k12
    assert rref.skce(p, y, estimator="biased", bandwidth=h) == pytest.approx(
        biased, rel=CLOSED_FORM_RTOL
    )
    assert rref.skce(p, y, estimator="uq", bandwidth=h) == pytest.approx(uq, rel=CLOSED_FORM_RTOL)
    assert rref.skce(p, y, estimator="ul", bandwidth=h) == pytest.approx(uq, rel=CLOSED_FORM_RTOL)
    assert rref.mmce(p, y, bandwidth=h) == pytest.approx(math.sqrt(biased), rel=CLOSED_FORM_RTOL)


def test_canonical_skce_two_rows_closed_form(rref):
    p = np.array([[0.5, 0.5], [0.25, 0.75]])
    y = np.array([1, 2])
    # e_1 = (1/2, -1/2), e_2 = (-1/4, 1/4): <e1,e1> = 1/2, <e2,e2> = 1/8, <e1,e2> = -1/4;
    # ||p_1 - p_2|| = sqrt(1/8).
    k12 = math.exp(-math.sqrt(0.125) / 1.0)
    biased = (0.5 + 0.125 + 2 * (-0.25) * k12) / 4
    assert rref.skce(p, y, "biased", 1.0, "canonical") == pytest.approx(
        biased, rel=CLOSED_FORM_RTOL
    )
    assert rref.skce(p, y, "uq", 1.0, "canonical") == pytest.approx(
        -0.25 * k12, rel=CLOSED_FORM_RTOL
    )
    assert rref.skce(p, y, "ul", 1.0, "canonical") == pytest.approx(
        -0.25 * k12, rel=CLOSED_FORM_RTOL
    )


def test_one_hot_predictions_have_exact_skce(rref):
    # Residuals vanish for correct one-hot rows; a wrong one-hot row has <e,e> = 2.
    p = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([1, 2, 1])
    assert rref.skce(p, y, "biased", 0.2, "canonical") == pytest.approx(
        f(Fraction(2, 9)), rel=EXACT_RTOL
    )
    assert rref.skce(p, y, "uq", 0.2, "canonical") == 0.0
    # Confidence form: r = 1 for all, c = (1, 1, 0): only e_3 = -1 is nonzero.
    assert rref.skce(p, y, "biased", 0.2, "confidence") == pytest.approx(
        f(Fraction(1, 9)), rel=EXACT_RTOL
    )
    assert rref.mmce(p, y) == pytest.approx(1 / 3, rel=EXACT_RTOL)


def test_ul_uses_disjoint_pairs_and_ignores_the_last_odd_observation(rref):
    rng = np.random.default_rng(7)
    p = rng.random(5)
    y = (rng.random(5) < p).astype(int)
    h12 = rref.skce(p[:2], y[:2], "uq")
    h34 = rref.skce(p[2:4], y[2:4], "uq")
    assert rref.skce(p, y, "ul") == pytest.approx((h12 + h34) / 2, rel=EXACT_RTOL)
    assert rref.skce(p[:4], y[:4], "ul") == rref.skce(p, y, "ul")
    assert rref.skce(p[:3], y[:3], "ul") == rref.skce(p[:2], y[:2], "ul")


def test_uq_is_the_off_diagonal_mean(rref):
    rng = np.random.default_rng(8)
    p = rng.random(9)
    y = (rng.random(9) < p).astype(int)
    n = len(p)
    e2 = float(np.sum((y - p) ** 2))
    biased = rref.skce(p, y, "biased")
    uq = rref.skce(p, y, "uq")
    # n^2 biased = sum_i e_i^2 + n (n - 1) uq, since k(p_i, p_i) = 1.
    assert n * n * biased == pytest.approx(e2 + n * (n - 1) * uq, rel=1e-13)


def test_median_bandwidth_by_hand(rref):
    p = np.array([0.1, 0.2, 0.4, 0.8])
    y = np.array([0, 1, 0, 1])
    # Six positive distances; R's median averages the middle two (0.4 - 0.1 and 0.8 - 0.4).
    d = sorted(abs(a - b) for i, a in enumerate(p) for b in p[i + 1 :])
    h = (d[2] + d[3]) / 2
    assert h == statistics.median(d)
    for est in ("uq", "ul", "biased"):
        assert rref.skce(p, y, est, "median") == rref.skce(p, y, est, h)
    assert rref.mmce(p, y, "median") == rref.mmce(p, y, h)


def test_median_bandwidth_ignores_zero_distances(rref):
    p = np.array([0.1, 0.1, 0.5, 0.1])
    y = np.array([0, 1, 1, 0])
    # Distances: three zeros and three times 0.5 - 0.1; the median of the positive ones.
    h = 0.5 - 0.1
    assert rref.skce(p, y, "uq", "median") == rref.skce(p, y, "uq", h)


def test_median_bandwidth_canonical_uses_euclidean_distances(rref):
    p = np.array([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]])
    y = np.array([2, 1, 1])
    rows = [np.sqrt(np.sum((p[i] - p[j]) ** 2)) for i in range(3) for j in range(i + 1, 3)]
    h = float(statistics.median(rows))
    assert rref.skce(p, y, "biased", "median", "canonical") == pytest.approx(
        rref.skce(p, y, "biased", h, "canonical"), rel=EXACT_RTOL
    )


def test_median_bandwidth_classwise_resolves_per_column(rref):
    rng = np.random.default_rng(9)
    p = rng.dirichlet([1.0, 2.0, 3.0], size=12)
    p = p / p.sum(axis=1, keepdims=True)
    y = rng.integers(1, 4, size=12)
    per_column = [rref.skce(p[:, k], (y == k + 1).astype(int), "uq", "median") for k in range(3)]
    assert rref.skce(p, y, "uq", "median", "classwise") == pytest.approx(
        sum(per_column) / 3, rel=EXACT_RTOL
    )


def test_mmce_squared_is_biased_skce(rref):
    rng = np.random.default_rng(10)
    p = rng.random(40)
    y = (rng.random(40) < p).astype(int)
    for h in (0.05, 0.2, "median"):
        assert rref.mmce(p, y, h) ** 2 == pytest.approx(rref.skce(p, y, "biased", h), rel=1e-14)
    pm = rng.dirichlet([1.0, 1.0, 1.0, 1.0], size=30)
    ym = rng.integers(1, 5, size=30)
    assert rref.mmce(pm, ym) ** 2 == pytest.approx(
        rref.skce(pm, ym, "biased", 0.2, "confidence"), rel=1e-14
    )


def test_biased_skce_is_nonnegative(rref):
    rng = np.random.default_rng(11)
    for _ in range(10):
        p = rng.dirichlet([0.5, 0.5, 0.5], size=15)
        y = rng.integers(1, 4, size=15)
        for t in ("canonical", "confidence", "classwise"):
            assert rref.skce(p, y, "biased", 0.3, t) >= 0


# --------------------------------------------------------------------------- bad input


P2 = np.array([[0.3, 0.7], [0.6, 0.4], [0.5, 0.5]])
Y2 = np.array([2, 1, 1])
PB = np.array([0.1, 0.2, 0.8])
YB = np.array([0, 0, 1])

BAD_INPUTS = [
    (
        "p_inf",
        dict(p=np.array([0.1, np.inf, 0.3]), y=YB),
        r"`p` must be finite; 1 value does not, the first at position 2 \(Inf\)",
    ),
    (
        "p_nan",
        dict(p=np.array([0.1, 0.2, np.nan]), y=YB),
        r"`p` must not contain missing values; found 1 missing value, the first at position 3",
    ),
    (
        "p_above_one",
        dict(p=np.array([0.1, 1.2, 1.5]), y=YB),
        r"`p` must lie in \[0, 1\]; 2 values do not, the first at position 2 \(1.2\)",
    ),
    (
        "p_negative",
        dict(p=np.array([-0.1, 0.2, 0.3]), y=YB),
        r"`p` must lie in \[0, 1\]; 1 value does not, the first at position 1 \(-0.1\)",
    ),
    (
        "p_matrix_out_of_range",
        dict(p=np.array([[0.5, 0.5], [1.5, -0.5], [0.5, 0.5]]), y=Y2),
        r"`p` must lie in \[0, 1\]; 2 values do not, the first at row 2, column 1 \(1.5\)",
    ),
    (
        "rows_not_summing_to_one",
        dict(p=np.array([[0.3, 0.7], [0.6, 0.5], [0.5, 0.5]]), y=Y2),
        r"each row of `p` must sum to 1 \(absolute tolerance 1e-6\); "
        r"1 row does not, the first is row 2 \(sum 1.1\)",
    ),
    (
        "row_sum_2e-6_off",
        dict(p=np.array([[0.3, 0.7 + 2e-6], [0.6, 0.4], [0.5, 0.5]]), y=Y2),
        r"must sum to 1 .* the first is row 1",
    ),
    (
        "one_column",
        dict(p=np.ones((3, 1)), y=np.array([1, 1, 1])),
        r"`p` as a matrix must have at least two columns \(one per class\); got 1",
    ),
    (
        "length_mismatch",
        dict(p=PB, y=np.array([0, 1])),
        r"`y` must have one label per prediction: `p` has 3, `y` has 2",
    ),
    ("length_mismatch_matrix", dict(p=P2, y=np.array([1, 2, 1, 2])), r"`p` has 3, `y` has 4"),
    (
        "empty",
        dict(p=np.array([]), y=np.array([], dtype=int)),
        r"`p` must not be empty; got 0 predictions",
    ),
    ("empty_matrix", dict(p=np.empty((0, 3)), y=np.array([], dtype=int)), r"`p` must not be empty"),
    (
        "binary_label_2",
        dict(p=PB, y=np.array([0, 2, 1])),
        r"`y` for a binary `p` must be coded 0 and 1; "
        r"1 value does not, the first at position 2 \(2\)",
    ),
    (
        "binary_label_half",
        dict(p=PB, y=np.array([0, 0.5, 1])),
        r"must be coded 0 and 1; .* \(0.5\)",
    ),
    (
        "binary_label_nan",
        dict(p=PB, y=np.array([0, np.nan, 1])),
        r"`y` must not contain missing values; found 1 missing value, the first at position 2",
    ),
    (
        "multiclass_zero_based",
        dict(p=P2, y=np.array([1, 0, 0])),
        r"integer class codes in 1:2; 2 values do not, the first at position 2 \(0\)\. "
        r"Class codes are 1-based",
    ),
    (
        "multiclass_too_large",
        dict(p=P2, y=np.array([1, 3, 1])),
        r"`y` for a matrix `p` must be integer class codes in 1:2; "
        r"1 value does not, the first at position 2 \(3\)\.$",
    ),
    (
        "multiclass_fractional",
        dict(p=P2, y=np.array([1, 1.5, 1])),
        r"integer class codes in 1:2; .* \(1.5\)",
    ),
    (
        "factor_levels",
        dict(p=P2, y=pd.Categorical(["a", "b", "c"])),
        r"`y` as a factor must have one level per column of `p` \(2\); got 3 levels",
    ),
    (
        "factor_na",
        dict(p=P2, y=pd.Categorical(["a", None, "b"], categories=["a", "b"])),
        r"`y` must not contain missing values; found 1 missing value, the first at position 2",
    ),
]


@pytest.mark.parametrize(
    ("data", "match"), [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS]
)
@pytest.mark.parametrize("metric", ["ece", "mce", "skce", "mmce"])
def test_bad_data_is_an_error_in_every_metric(rref, metric, data, match):
    with pytest.raises(rref.RError, match=match):
        getattr(rref, metric)(data["p"], data["y"])


def test_row_sums_within_tolerance_are_accepted(rref):
    p = np.array([[0.3, 0.7 + 5e-7], [0.6, 0.4 - 5e-7], [0.5, 0.5]])
    assert math.isfinite(rref.ece(p, Y2))


BAD_OPTIONS = [
    ("ece", dict(bins=2.5), r"`bins` must be a single positive integer; got 2.5\."),
    ("ece", dict(bins=0), r"`bins` must be a single positive integer; got 0\."),
    ("mce", dict(bins=-3), r"`bins` must be a single positive integer; got -3\."),
    ("mce", dict(bins=float("inf")), r"`bins` must be a single positive integer; got Inf\."),
    ("ece", dict(bins="10"), r"`bins` must be a single positive integer; got \"10\"\."),
    (
        "ece",
        dict(bins=[1, 2]),
        r"`bins` must be a single positive integer; got an object of class list",
    ),
    ("ece", dict(type="top"), r"'arg' should be one of .*classwise.*confidence"),
    ("mce", dict(type="canonical"), r"'arg' should be one of"),
    ("skce", dict(estimator="unbiased"), r"'arg' should be one of .*uq.*ul.*biased"),
    ("skce", dict(type="binary"), r"'arg' should be one of .*canonical.*confidence.*classwise"),
    (
        "skce",
        dict(bandwidth=0),
        r"`bandwidth` must be a single positive finite number or \"median\"; got 0\.",
    ),
    ("skce", dict(bandwidth=-1.0), r"`bandwidth` must be .*; got -1\."),
    ("skce", dict(bandwidth=float("inf")), r"`bandwidth` must be .*; got Inf\."),
    ("skce", dict(bandwidth=float("nan")), r"`bandwidth` must be .*; got NaN\."),
    ("skce", dict(bandwidth="mean"), r"`bandwidth` must be .*; got \"mean\"\."),
    (
        "mmce",
        dict(bandwidth=0),
        r"`bandwidth` must be a single positive finite number or \"median\"; got 0\.",
    ),
    ("mmce", dict(bandwidth="Median"), r"got \"Median\"\."),
]


@pytest.mark.parametrize(("metric", "options", "match"), BAD_OPTIONS)
@pytest.mark.parametrize("binary", [True, False], ids=["binary", "multiclass"])
def test_bad_options_are_errors(rref, metric, options, match, binary):
    p, y = (PB, YB) if binary else (P2, Y2)
    with pytest.raises(rref.RError, match=match):
        getattr(rref, metric)(p, y, **options)


@pytest.mark.parametrize("estimator", ["uq", "ul"])
def test_unbiased_estimators_need_two_observations(rref, estimator):
    with pytest.raises(
        rref.RError, match=rf"`estimator = \"{estimator}\"` needs at least 2 observations; got 1\."
    ):
        rref.skce(np.array([0.3]), np.array([1]), estimator)
    assert rref.skce(np.array([0.3]), np.array([1]), "biased") == pytest.approx(
        0.49, rel=EXACT_RTOL
    )


@pytest.mark.parametrize("type_", ["canonical", "confidence", "classwise"])
def test_median_bandwidth_without_positive_distance_is_an_error(rref, type_):
    match = (
        r"`bandwidth = \"median\"` needs at least two distinct predictions; "
        r"all pairwise distances are 0\."
    )
    with pytest.raises(rref.RError, match=match):
        rref.skce(np.full(4, 0.3), np.array([0, 1, 0, 1]), "uq", "median")
    p = np.tile([0.2, 0.3, 0.5], (4, 1))
    with pytest.raises(rref.RError, match=match):
        rref.skce(p, np.array([1, 2, 3, 1]), "biased", "median", type_)
    with pytest.raises(rref.RError, match=match):
        rref.mmce(p, np.array([1, 2, 3, 1]), "median")


def test_classwise_median_fails_if_any_column_is_constant(rref):
    p = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3], [0.1, 0.6, 0.3]])
    y = np.array([1, 2, 3])
    assert math.isfinite(rref.skce(p, y, "uq", "median", "canonical"))
    with pytest.raises(rref.RError, match="all pairwise distances are 0"):
        rref.skce(p, y, "uq", "median", "classwise")


# --------------------------------------------------------------------------- harness and data


def test_harness_passes_doubles_and_shapes_exactly(rref):
    rng = np.random.default_rng(12)
    p = rng.dirichlet([1.0, 1.0, 1.0], size=6)
    r_matrix = rref._p(p)
    assert list(r_matrix.do_slot("dim")) == [6, 3]
    assert np.array_equal(np.array(list(r_matrix)).reshape(3, 6).T, p)
    y = rref._y(np.array([1, 2, 3], dtype=np.int64))
    assert y.typeof == rref._ri.RTYPES.INTSXP and list(y) == [1, 2, 3]


def test_committed_inputs_parse_identically_in_python_and_r(rref):
    import rpy2.robjects as ro

    read_csv = ro.r("function(path) { d <- utils::read.csv(path); as.matrix(d) }")
    for case in read_cases().case:
        p, y = read_case(case)
        r_data = read_csv(str(DATA / "inputs" / f"{case}.csv"))
        nrow, ncol = r_data.dim
        r_arr = np.array(list(r_data), dtype=np.float64).reshape(ncol, nrow).T
        assert np.array_equal(r_arr[:, :-1], p.reshape(len(y), -1)), case
        assert np.array_equal(r_arr[:, -1], y), case


def test_committed_reference_matches_the_installed_package(rref):
    """reference.csv (made by r_reference/make_reference.R) is what calibrRef computes now."""
    ref = read_reference()
    cases = read_cases()
    assert set(ref.case) == set(cases.case)
    expected_rows_per_case = 2 * 2 * 9 + 3 * 3 * 4 + 4
    assert (ref.groupby("case").size() == expected_rows_per_case).all()
    for case, rows in ref.groupby("case", sort=False):
        p, y = read_case(case)
        for row in rows.itertuples():
            if row.error:
                with pytest.raises(rref.RError) as info:
                    call_reference_row(rref, p, y, row)
                assert str(info.value) == row.error, (case, row)
            else:
                assert call_reference_row(rref, p, y, row) == pytest.approx(
                    float(row.value), rel=COMMITTED_RTOL, abs=COMMITTED_ATOL
                ), (case, row)


# --------------------------------------------------------------------------- help-page examples


def _rscript(script: Path) -> subprocess.CompletedProcess[str]:
    rscript = shutil.which("Rscript")
    if rscript is None:
        pytest.fail("Rscript is not on PATH although the rref fixture loaded R")
    return subprocess.run(
        [rscript, "--vanilla", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_mce_help_page_example_runs_and_prints_0_15(rref):
    out = _rscript(EXAMPLES / "mce_example.R")
    assert out.returncode == 0, out.stderr
    # The help page shows:
    # >    mce
    # > 1 0.15
    assert out.stdout.splitlines() == ["   mce", "1 0.15"]


def test_skce_help_page_example_runs_and_prints_true(rref):
    out = _rscript(EXAMPLES / "skce_example.R")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 3, out.stdout
    # The page shows output only for all.equal(skce(..., "biased"), mmce(p, y)^2): TRUE.
    assert lines[1] == "[1] TRUE"
    # The other two lines print skce() with R's 7 significant digits; recompute them
    # through the harness from the same seeded R draws.
    import rpy2.robjects as ro

    draws = ro.r(
        """local({
          set.seed(31); p <- stats::runif(200); y <- rbinom(200, 1, p)
          set.seed(32); prob <- matrix(stats::runif(150 * 3), ncol = 3)
          prob <- prob / rowSums(prob)
          list(p = p, y = y, prob = prob, labels = max.col(prob))
        })"""
    )
    p = np.array(draws.rx2("p"))
    y = np.array(draws.rx2("y"), dtype=np.int64)
    prob = np.array(draws.rx2("prob"))
    labels = np.array(draws.rx2("labels"), dtype=np.int64)
    assert prob.shape == (150, 3)
    assert lines[0] == f"[1] {_r_print(rref.skce(p, y))}"
    assert lines[2] == f"[1] {_r_print(rref.skce(prob, labels, type='canonical'))}"


def _r_print(x: float) -> str:
    """How R's print() shows a double with the default 7 significant digits."""
    import rpy2.robjects as ro

    return str(ro.r["format"](ro.FloatVector([x]), digits=7)[0])
