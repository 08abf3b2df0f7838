"""Tests that fail on mutants ``scripts/mutate.py`` let through (issue 9).

Each test names in its docstring the mutants it kills (module, line at the
commit the mutants were made from, and the change). The expected values are
independent of the code under test: worked by hand, exact, recomputed here
from the published definitions, or R's numbers as printed in calibr's docs.
"""

from __future__ import annotations

import math
import warnings
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from conftest import require

import calibr
from calibr import InputError
from calibr._lowess import lowess
from calibr._params import (
    BANDWIDTH,
    BINS,
    LEVEL,
    Integer,
    Options,
    check_options,
    validate_params,
)
from calibr._valprob import _chi2_sf, _quantile7, val_prob
from calibr.table import TABLE_COLUMNS, calibration_table

# --------------------------------------------------------------------------
# calibr/_binned_metrics.py


def test_the_default_is_ten_bins():
    """_binned_metrics 32 and 101: the default ``bins=10`` of ece() and mce()
    changed to 11.

    0.15 and 0.19 share the bin (0.1, 0.2] of 10 bins (ECE = MCE =
    |0.5 - 0.17| = 0.33); with 11 bins they fall in two (ECE 0.52, MCE 0.85).
    """
    p, y = [0.15, 0.19], [1, 0]
    assert calibr.ece(p, y) == pytest.approx(0.33, abs=1e-12)
    assert calibr.mce(p, y) == pytest.approx(0.33, abs=1e-12)
    assert calibr.ece(p, y, bins=11) == pytest.approx(0.52, abs=1e-12)


def test_missing_values_are_refused_by_default():
    """_binned_metrics 36 and 105: the default ``na_rm=False`` of ece() and mce()
    changed to True (a NaN would be dropped silently)."""
    p, y = [0.2, math.nan, 0.7], [0, 1, 1]
    for metric in (calibr.ece, calibr.mce):
        with pytest.raises(InputError, match="missing"):
            metric(p, y)
    # dropped on request: 0.2 in (0.1, 0.2] with gap 0.2, 0.7 in (0.6, 0.7] with gap 0.3
    assert calibr.ece(p, y, na_rm=True) == pytest.approx(0.25, abs=1e-12)
    assert calibr.mce(p, y, na_rm=True) == pytest.approx(0.3, abs=1e-12)


def test_the_bins_times_classes_bound_is_for_the_classwise_form_only():
    """_binned_metrics 23: ``not prep.binary and type == "classwise"`` mutated
    (``and`` -> ``or``, ``not x`` -> ``x``, ``==`` -> ``!=``): the bound on bins x K
    must hold for classwise multiclass input and not for the confidence form."""
    k, bins = 11, 909_091  # 10,000,001 bins x classes: one over the bound
    p = np.full((4, k), 1.0 / k)
    y = [1, 1, 2, 3]
    with pytest.raises(InputError, match=r"must be at most 10,000,000 for type = \"classwise\""):
        calibr.ece(p, y, bins=bins)
    # confidence: top label 1 (ties: the first column) with confidence 1/11, right
    # for 2 of 4 rows, all in one bin
    assert calibr.ece(p, y, bins=bins, type="confidence") == pytest.approx(0.5 - 1 / 11,
                                                                           abs=1e-12)


# --------------------------------------------------------------------------
# calibr/_params.py


def test_the_bins_and_bandwidth_rules_refuse_other_parameters():
    """_params 74 and 84: ``raise -> pass`` in the BINS and BANDWIDTH rules, which
    only check a parameter of their own name (their messages name it)."""
    with pytest.raises(ValueError, match="the BINS rule is for `bins`, not `nbins`"):
        BINS(5, "nbins")
    with pytest.raises(ValueError, match="the BANDWIDTH rule is for `bandwidth`, not `h`"):
        BANDWIDTH(1.0, "h")
    assert BINS(5.0, "bins") == 5 and BANDWIDTH("median", "bandwidth") == "median"


def test_a_level_is_strictly_between_zero_and_one():
    """_params 91: ``0.0 < real < 1.0`` with either ``<`` made ``<=``."""
    for bad in (0.0, 1.0, 0, 1):
        with pytest.raises(InputError, match=r"strictly between 0 and 1"):
            LEVEL(bad, "level")
    assert LEVEL(0.5, "level") == 0.5
    with pytest.raises(InputError, match=r"^`ci_level` must be a number strictly between 0 "
                       r"and 1; got 1\.$"):
        calibration_table([0.2, 0.7], [0, 1], ci_level=1)


def test_integer_rule_integral_floats_only_when_allowed():
    """_params 99 (default ``integral_float=False`` -> True), 108 (``and`` -> ``or``,
    ``not x`` -> ``x``) and 110 (``and`` -> ``or``, ``is not`` -> ``is``, ``==`` ->
    ``!=``): which floats the Integer rule takes."""
    strict = Integer(1, 5)
    with pytest.raises(InputError, match=r"^`n` must be an integer from 1 to 5; got 2\.0\.$"):
        strict(2.0, "n")
    loose = Integer(1, 5, integral_float=True)
    assert loose(3.0, "n") == 3 and type(loose(3.0, "n")) is int
    assert loose(np.float64(5.0), "n") == 5
    for bad in (2.5, math.nan, math.inf, True, np.True_):
        with pytest.raises(InputError, match=r"^`n` must be an integer from 1 to 5; got "):
            loose(bad, "n")
    # public: reliability_diagram's ncols takes no float
    require("matplotlib").use("Agg")
    from calibr.plot import reliability_diagram

    table = calibration_table([0.2, 0.6, 0.7], [0, 1, 1], bins=2)
    with pytest.raises(InputError, match=r"^`ncols` must be a single positive integer; "
                       r"got 1\.0\.$"):
        reliability_diagram(table, ncols=1.0)


def test_integer_rule_bounds_are_inclusive_and_named():
    """_params 112 (``self.high is None`` -> ``is not``: the wrong wording) and 118
    (``out < self.low`` -> ``<=``, ``out > self.high`` -> ``>=``)."""
    rule = Integer(2, 4)
    assert [rule(v, "n") for v in (2, 3, 4)] == [2, 3, 4]
    for bad in (1, 5):
        with pytest.raises(InputError, match=rf"^`n` must be an integer from 2 to 4; got {bad}\.$"):
            rule(bad, "n")
    with pytest.raises(InputError, match=r"^`n` must be an integer of at least 1,000; got 999\.$"):
        Integer(1000)(999, "n")
    assert Integer(1000)(1000, "n") == 1000


def test_check_options_checks_the_given_names_only():
    """_params 163: ``if name in out`` -> ``not in`` (absent names would be read,
    given ones left unchecked)."""
    rules = {"bins": BINS, "type": Options("classwise", "confidence")}
    assert check_options(rules, {"bins": 5.0, "other": "x"}) == {"bins": 5, "other": "x"}
    assert check_options(rules, {}) == {}
    with pytest.raises(InputError, match=r"`bins` must be a single positive integer"):
        check_options(rules, {"bins": 2.5})


def test_a_ruled_first_positional_parameter_is_checked():
    """_params 210: ``0 <= pos < len(args)`` with ``<=`` -> ``<`` or ``0`` -> ``1``
    (a ruled parameter passed as the first positional argument went unchecked)."""

    @validate_params(bins=BINS)
    def nbins(bins=10):
        return bins

    assert nbins(5.0) == 5 and type(nbins(5.0)) is int
    with pytest.raises(InputError, match=r"`bins` must be a single positive integer; got 2\.5"):
        nbins(2.5)
    assert nbins() == 10 and nbins(bins=3.0) == 3


# --------------------------------------------------------------------------
# calibr/table.py


def test_empty_grouped_multiclass_table_has_a_class_column_when_classwise():
    """table 274: ``not cols.binary and type == "classwise"`` mutated (``==`` ->
    ``!=`` survived; ``and`` -> ``or`` and ``not x`` -> ``x`` too): the columns of
    the table of a grouping with no observed group."""
    df = pd.DataFrame({"k": pd.Series([], dtype=object), "p_a": pd.Series([], dtype=float),
                       "p_b": pd.Series([], dtype=float), "y": pd.Series([], dtype=object)})
    grouped = df.groupby("k", observed=True)
    classwise = calibration_table(None, "y", data=grouped, p_prefix="p_")
    assert list(classwise.columns) == ["k", "class", *TABLE_COLUMNS] and len(classwise) == 0
    confidence = calibration_table(None, "y", data=grouped, p_prefix="p_", type="confidence")
    assert list(confidence.columns) == ["k", *TABLE_COLUMNS] and len(confidence) == 0
    binary = df[["k", "p_a"]].assign(y=pd.Series([], dtype=float)).groupby("k", observed=True)
    for type_ in ("classwise", "confidence"):
        table = calibration_table("p_a", "y", data=binary, type=type_)
        assert list(table.columns) == ["k", *TABLE_COLUMNS]


# --------------------------------------------------------------------------
# calibr/plot.py


def test_four_curves_are_crowded_three_are_not():
    """plot 32: ``_FEW_CURVES = 3`` -> 4: a panel of more than three curves puts
    its legend beside the panel (1.2 inches wider) and draws thinner lines."""
    require("matplotlib").use("Agg")
    from calibr.plot import reliability_diagram

    rng = np.random.default_rng(9)
    for k, width, line in ((4, 3.6 + 1.2, 1.0), (3, 3.6, 1.5)):
        p = rng.dirichlet(np.ones(k), size=60)
        y = rng.integers(1, k + 1, size=60)
        fig = reliability_diagram(calibration_table(p, y, bins=3), by=[])
        assert fig.get_size_inches()[0] == pytest.approx(width)
        ax = fig.axes[0]
        curves = [ln for ln in ax.get_lines() if ln.get_label().startswith("class")]
        assert len(curves) == k
        assert {ln.get_linewidth() for ln in curves} == {line}


def test_table_ece_refuses_bins_that_are_not_calibration_table_bins():
    """plot 146 (``width > 0`` -> ``>=``: a zero width divided by), 147 (``np.all``
    -> ``np.any`` in the bin-number checks) and 151 (``and`` -> ``or`` between the
    lower- and upper-edge checks)."""
    from calibr.plot import table_ece

    p, y = [0.1, 0.2, 0.6, 0.9], [0, 1, 1, 1]
    table = calibration_table(p, y, bins=2)
    # bin 1: 0.1, 0.2 (gap |0.5 - 0.15|), bin 2: 0.6, 0.9 (gap |1 - 0.75|)
    assert table_ece(table) == pytest.approx((2 * 0.35 + 2 * 0.25) / 4, abs=1e-12)
    msg = "`show_ece` needs the equal-width bins of calibr.calibration_table()"
    bad_number = table.astype({"bin": float})
    bad_number.loc[0, "bin"] = 1.5  # its edges are still those of bin 1
    bad_range = table.copy()
    bad_range.loc[1, ["bin", "lower", "upper"]] = [3, 1.0, 1.5]
    bad_upper = table.copy()
    bad_upper.loc[1, "upper"] = 0.75  # the lower edge right, the upper wrong
    bad_width = table.copy()
    bad_width.loc[0, "upper"] = 0.0  # a first bin of width 0
    for bad in (bad_number, bad_range, bad_upper, bad_width):
        with pytest.raises(InputError, match=msg):
            table_ece(bad)


# --------------------------------------------------------------------------
# calibr/_valprob.py: statistics recomputed from their definitions


def _expit(z):
    return 1.0 / (1.0 + np.exp(-z))


def _definitions(p, y, a, b):
    """val_prob's statistics from the formulas of rms::val.prob (docs/val_prob.md),
    given the recalibration fit (a, b), which is checked separately."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    n, n1 = len(p), int(y.sum())
    n0 = n - n1
    l01 = -2.0 * sum(math.log(pi) if yi else math.log(1.0 - pi) for pi, yi in zip(p, y,
                                                                                  strict=True))
    l0 = -2.0 * (n1 * math.log(n1 / n) + n0 * math.log(n0 / n))
    dchi = l0 - l01
    pairs = [(pi, pj) for pi, yi in zip(p, y, strict=True) if yi
             for pj, yj in zip(p, y, strict=True) if not yj]
    c = sum(1.0 if pi > pj else 0.5 if pi == pj else 0.0 for pi, pj in pairs) / len(pairs)
    mu = _expit(a + b * np.log(p / (1 - p)))
    lab = -2.0 * float(np.sum(y * np.log(mu) + (1 - y) * np.log(1 - mu)))
    uchi = l01 - lab
    d = (dchi - 1) / n
    u = (uchi - 2) / n
    _, fitted = lowess(p, y, iter=0)  # checked against R's lowess() in test_val_prob.py
    err = np.abs(p - fitted[np.searchsorted(np.sort(p), p)])
    num = float(np.sum((y - p) * (1 - 2 * p)))
    z = num / math.sqrt(float(np.sum((1 - 2 * p) ** 2 * p * (1 - p))))
    return {
        "Dxy": 2 * c - 1, "C (ROC)": c,
        "R2": (1 - math.exp(-dchi / n)) / (1 - math.exp(-l0 / n)),
        "D": d, "D:Chi-sq": dchi, "D:p": 2 * NormalDist().cdf(-math.sqrt(dchi)),
        "U": u, "U:Chi-sq": uchi, "U:p": math.exp(-uchi / 2), "Q": d - u,
        "Brier": float(np.mean((p - y) ** 2)), "Intercept": a, "Slope": b,
        "Emax": float(err.max()), "E90": float(np.quantile(err, 0.9)),
        "Eavg": float(err.mean()), "S:z": z, "S:p": 2 * NormalDist().cdf(-abs(z)),
    }


#: rms::val.prob's numbers for the help-page example (calibr's docstring), 4 places
_HELP_P = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.3]
_HELP_Y = [0, 0, 1, 0, 0, 1, 1, 1, 1, 0]
_HELP_R = {"Dxy": 0.8, "C (ROC)": 0.9, "R2": 0.5473, "D": 0.4285, "D:Chi-sq": 5.2847,
           "U": -0.0867, "U:Chi-sq": 1.1331, "U:p": 0.5675, "Q": 0.5152, "Brier": 0.1340,
           "Intercept": 0.3045, "Slope": 2.1024, "Emax": 0.2397, "E90": 0.2163,
           "Eavg": 0.1216, "S:z": -0.8785, "S:p": 0.3797}


def _datasets():
    rng = np.random.default_rng(20240901)
    p = rng.uniform(0.02, 0.98, size=57)
    y = (rng.uniform(size=57) < _expit(1.7 * np.log(p / (1 - p)) - 0.4)).astype(int)
    return [(_HELP_P, _HELP_Y), (p, y)]


@pytest.mark.parametrize("case", [0, 1], ids=["help-page", "seeded"])
def test_val_prob_statistics_follow_their_definitions(case):
    """_valprob, the general branch (lines 335-497 at the mutated commit): every
    arithmetic, constant and comparison mutant of the deviances, the chi-square
    tails, R2, D, U, Q, the type-7 quantile, the lowess errors, the recalibration
    fit (its deviance, start and stopping) and the separation test."""
    p, y = _datasets()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # these data are not separated
        got = val_prob(p, y)
    a, b = got["Intercept"], got["Slope"]
    # the fit is the maximum likelihood: both score equations are zero
    x = np.log(np.asarray(p) / (1 - np.asarray(p)))
    r = np.asarray(y) - _expit(a + b * x)
    assert abs(r.sum()) < 1e-9 and abs((r * x).sum()) < 1e-9
    want = _definitions(p, y, a, b)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-10, abs=1e-12), name
    if case == 0:  # and R's own numbers
        for name, value in _HELP_R.items():
            assert got[name] == pytest.approx(value, abs=5e-5), name


def test_one_distinct_p_statistics_by_hand():
    """_valprob 198 (``probs == probs[0]`` -> ``!=``), 502-514 (every mutant of the
    single-``p`` branch): p = 0.3 four times, one event in four."""
    p, y = [0.3] * 4, [0, 0, 0, 1]
    got = val_prob(p, y)
    l01 = -2 * (3 * math.log(0.7) + math.log(0.3))
    l0 = -2 * (math.log(0.25) + 3 * math.log(0.75))
    uchi = l01 - l0
    z = (0.4 * (-0.3 * 3 + 0.7)) / math.sqrt(4 * 0.16 * 0.21)
    want = {"Dxy": 0.0, "C (ROC)": 0.5, "R2": 0.0, "D": -0.25, "D:Chi-sq": 0.0, "D:p": 1.0,
            "U": (uchi - 1) / 4, "U:Chi-sq": uchi, "U:p": 2 * NormalDist().cdf(-math.sqrt(uchi)),
            "Q": -0.25 - (uchi - 1) / 4, "Brier": (3 * 0.09 + 0.49) / 4,
            "Intercept": math.log(1 / 3), "Slope": 0.0, "Emax": 0.05, "E90": 0.05,
            "Eavg": 0.05, "S:z": z, "S:p": 2 * NormalDist().cdf(-abs(z))}
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_chi_square_tails():
    """_valprob 282-287: ``x <= 0.0`` -> ``x <= 1.0``, ``return 1.0`` -> 2.0, and
    ``x / 2.0`` made ``x * 2.0`` or ``x / 4.0`` in both tails. P(chi2_1 > x) =
    2 Phi(-sqrt x) and P(chi2_2 > x) = exp(-x / 2)."""
    for x in (0.25, 1.0, 3.841458820694124, 7.5):
        assert _chi2_sf(x, 1) == pytest.approx(2 * NormalDist().cdf(-math.sqrt(x)), rel=1e-12)
        assert _chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    assert _chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-12)
    assert _chi2_sf(0.0, 1) == 1.0 and _chi2_sf(-2.0, 2) == 1.0


def test_quantile_type_7():
    """_valprob 357-364: the index, the floor/ceiling reads and the interpolation
    of R's type-7 quantile (numpy's default "linear" method is the same)."""
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 11, 57):
        x = rng.normal(size=n)
        for prob in (0.1, 0.5, 0.9):
            assert _quantile7(x, prob) == pytest.approx(float(np.quantile(x, prob)), rel=1e-14)
    assert _quantile7(np.array([4.0, 1.0, 2.0, 3.0]), 0.9) == pytest.approx(3.7, rel=1e-14)


def test_val_prob_one_event_is_enough():
    """_valprob 263: ``0 < n1 < n`` -> ``1 < n1 < n`` (one event refused)."""
    with pytest.warns(RuntimeWarning, match="separates the outcomes"):
        got = val_prob([0.2, 0.4, 0.6], [0, 0, 1])
    assert got["C (ROC)"] == 1.0 and got["Dxy"] == 1.0


def test_val_prob_one_outcome_message_for_two_values():
    """_valprob 267: ``n > 1`` -> ``n > 2`` in the message ("all 2 values are")."""
    with pytest.raises(InputError, match=r"; all 2 values are 1\.$"):
        val_prob([0.2, 0.4], [1, 1])


def test_val_prob_warnings_point_at_the_caller():
    """_valprob 207: ``stacklevel=2`` -> 3 (the variance-0 warning would name a
    frame above the caller)."""
    with pytest.warns(RuntimeWarning, match="variance 0") as record:
        val_prob([0.5, 0.5, 0.5], [0, 1, 1])
    assert record[0].filename == __file__


# ------------------------------------------------------------------ calibr/_groups.py


def test_two_probability_columns_are_a_multiclass_p():
    """_groups 154 (`len(cols) < 2` -> `<= 2`): two named columns are K = 2."""
    df = pd.DataFrame({"a": [0.2, 0.7, 0.5, 0.9], "b": [0.8, 0.3, 0.5, 0.1],
                       "y": ["a", "b", "a", "a"]})
    got = calibr.summarise(df, p=["a", "b"], y="y", metrics=["ece"])["ece"].iloc[0]
    assert got == calibr.ece(df[["a", "b"]], df["y"])


def test_integer_column_labels_name_columns():
    """_groups 167 (`or` -> `and` in _is_label): 0 and 1 are column labels too."""
    df = pd.DataFrame({0: [0.2, 0.7, 0.4], 1: [0, 1, 1]})
    got = calibr.summarise(df, p=0, y=1, metrics=["ece"])["ece"].iloc[0]
    assert got == calibr.ece([0.2, 0.7, 0.4], [0, 1, 1])


def test_an_unobserved_group_before_the_failing_one_is_not_the_error():
    """_groups 263 (`sizes[g] > 0` -> `>= 0`): the error of bad input names the
    observed group that fails, not an empty (unobserved) category before it."""
    key = pd.Categorical(["b", "b", "c", "c"], categories=["a", "b", "c"])
    df = pd.DataFrame({"g": key, "p": [0.2, 0.7, 1.5, 0.3], "y": [0, 1, 1, 0]})
    with pytest.raises(calibr.InputError, match=r"group g='c'\]$"):
        calibr.summarise(df.groupby("g", observed=False), "p", "y", metrics=["ece"])


def test_a_grouping_of_a_frame_without_columns_is_an_input_error():
    """_groups 287 (`len(frame.columns) == 0` -> `== 1`): zero columns with
    as_index=False is refused with its message (the mutant indexes past the end)."""
    empty = pd.DataFrame(index=range(3))
    with pytest.raises(calibr.InputError, match=r"has no columns"):
        calibr.summarise(empty.groupby(np.array([0, 0, 1]), as_index=False), "p", "y")


def test_calibr_own_groupings_keep_only_observed_combinations():
    """_groups 338 (`observed=True` -> `False` in by_columns): an unused category
    of a key column makes no group."""
    from calibr._groups import by_columns

    frame = pd.DataFrame({"k": pd.Categorical(["x", "x", "y"], categories=["x", "y", "z"]),
                          "p": [0.1, 0.2, 0.3]})
    assert by_columns(frame, ["k"]).ngroups == 2


# ------------------------------------------------------------------ calibr/_validation.py


def test_the_bin_cell_bound_is_inclusive():
    """_validation 273 (`bins * k > MAX_BIN_CELLS` -> `>=`): exactly the bound is allowed."""
    from calibr._validation import MAX_BIN_CELLS, check_bin_cells

    check_bin_cells(MAX_BIN_CELLS // 4, 4, True)  # 10,000,000 cells: allowed
    with pytest.raises(InputError, match=r"got bins = 2,500,001 with K = 4 classes"):
        check_bin_cells(MAX_BIN_CELLS // 4 + 1, 4, True)


def test_two_weighted_rows_are_enough_for_uq():
    """_validation 1035 (`total < 2.0` -> `<=`): weights totalling exactly 2 make a
    repeated sample of 2 rows, one pair: skce uq = its kernel term (hand-worked:
    e = (y - p), h = exp(-|0.2 - 0.7| / 0.5) e_1 e_2 = exp(-1) * (-0.2) * 0.3)."""
    got = calibr.skce([0.2, 0.7], [0, 1], "uq", 0.5, weights=[1, 1])
    assert got == pytest.approx(math.exp(-1.0) * (-0.2) * 0.3, rel=1e-14)


def test_long_values_are_shortened_in_messages():
    """_validation 155 (`+ "..."` -> `-`): a value longer than 80 characters is shown
    cut to 77 characters and "..."."""
    with pytest.raises(InputError) as info:
        calibr.ece([0.1, 0.2], [0, 1], type="x" * 200)
    assert "'" + "x" * 76 + "..." in str(info.value)
