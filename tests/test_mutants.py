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
from calibr._input import BANDWIDTH, BINS, LEVEL, Integer, Options, check_options, validate_params
from calibr._lowess import lowess
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
# calibr/_input/params.py


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
    msg = r"`show_ece` needs the bins of calibr.calibration_table\(\)"
    bad_number = table.astype({"bin": float})
    bad_number.loc[0, "bin"] = 1.5  # its edges are still those of bin 1
    bad_range = table.copy()
    bad_range.loc[1, ["bin", "lower", "upper"]] = [3, 1.0, 1.5]
    overlap = table.copy()
    overlap.loc[0, "upper"] = 0.6  # bin 1 reaches into bin 2
    # (any consecutive bins from 0 to 1 are bins of calibration_table(binning=...,
    # bins=<breaks>), so a narrower or zero-width bin is no longer refused)
    for bad in (bad_number, bad_range, overlap):
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


# ------------------------------------------------------------------ calibr/_input/


def test_the_bin_cell_bound_is_inclusive():
    """_validation 273 (`bins * k > MAX_BIN_CELLS` -> `>=`): exactly the bound is allowed."""
    from calibr._input import MAX_BIN_CELLS, check_bin_cells

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


# ------------------------------------------------------------------ calibr/frame.py


def test_metric_and_test_specs_are_read_only():
    """frame 66 and 244 (``@dataclass(frozen=True)`` -> ``frozen=False`` on Metric
    and CalibrationTest): a spec is a value; its fields cannot be reassigned."""
    import dataclasses

    from calibr.frame import CalibrationTest, Metric, metric, test

    spec = metric("mce", bins=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.func = "ece"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.options = {}
    assert spec == Metric("mce", {"bins": 2}) and spec.default_name == "mce(bins=2)"
    tspec = test("consistency", n_resamples=50)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tspec.method = "skce"
    with pytest.raises(dataclasses.FrozenInstanceError):
        tspec.options = {}
    assert tspec == CalibrationTest("consistency", {"n_resamples": 50})


def test_a_metric_spec_with_weights_is_refused():
    """frame 164 (``raise InputError(...)`` -> ``pass`` for the option ``weights``):
    a metric's ``weights`` is one per row of the whole data, so a spec cannot
    carry it (summarise() would pass the same weights to every group)."""
    from calibr.frame import metric

    with pytest.raises(InputError, match=r"(?i)the option 'weights' of metric 'ece' "):
        metric("ece", weights=[1, 2, 1])
    assert metric("ece", bins=3).options == {"bins": 3}


def test_importing_a_test_spec_into_a_test_module_collects_nothing(tmp_path):
    """frame 258 (``CalibrationTest.__test__ = False`` -> True): pytest would take
    the class for a test class in any test module that imports it, and warn that
    it cannot collect it (a dataclass has an ``__init__``). Run pytest on such a
    module with that warning made an error: nothing is collected, no error."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "test_imports_a_spec.py").write_text(
        "from calibr.frame import CalibrationTest  # noqa: F401\n")
    env = dict(os.environ, PYTHONPATH=str(Path(calibr.__file__).resolve().parent.parent))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-W", "error::pytest.PytestCollectionWarning", "test_imports_a_spec.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, run.stdout + run.stderr


# ------------------------------------------------------------------ calibr/cli


def test_option_values_true_and_false_in_python_and_r_spelling():
    """cli/_args 224 (``"False": False`` or ``"FALSE": False`` -> True in _BOOLS):
    an option value False (R's FALSE) is False, True (TRUE) is True; other words
    stay strings, numbers become numbers."""
    from calibr.cli._args import _value

    for text, want in (("False", False), ("FALSE", False), (" True ", True), ("TRUE", True)):
        assert _value(text) is want, text
    assert _value("no") == "no" and _value("'False'") == "False"
    assert _value("3") == 3 and type(_value("3")) is int and _value("0.5") == 0.5


_CLI_CSV = "p,y\n0.2,0\n0.7,1\n0.4,1\n0.9,1\n"


def test_a_compressed_csv_whose_module_is_missing_is_one_clear_error(capsys, monkeypatch,
                                                                      tmp_path):
    """cli/_io 93 (``raise CLIError`` -> ``pass`` for an ImportError of pandas'
    reader, e.g. .csv.zst without zstandard): one line naming the file, exit 2."""
    import sys

    from calibr.cli import main

    monkeypatch.setitem(sys.modules, "zstandard", None)  # absent, whether installed or not
    path = tmp_path / "preds.csv.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd not really zstd")
    code = main(["report", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"calibr: error: {path}: cannot read it: ") and err.count("\n") == 1


def test_an_output_path_that_is_a_directory_is_refused(capsys, tmp_path):
    """cli/_io 151 (``raise CLIError(... is a directory)`` -> ``pass``): the
    message names the option and the path, and nothing is written."""
    from calibr.cli import main

    src = tmp_path / "in.csv"
    src.write_text(_CLI_CSV)
    target = tmp_path / "out"
    target.mkdir()
    code = main(["report", str(src), "-o", str(target)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"calibr: error: --output {target}: is a directory.\n"
    assert list(target.iterdir()) == []


def test_stdin_from_a_file_may_write_over_another_existing_file(capsys, monkeypatch, tmp_path):
    """cli/_io 165 (``S_ISREG(...) and samestat(...)`` -> ``or``): with stdin a
    regular file, only an output that *is* that file is refused; another
    existing file is replaced by the report."""
    import sys

    from calibr.cli import main

    src = tmp_path / "in.csv"
    src.write_text(_CLI_CSV)
    dest = tmp_path / "old.csv"
    dest.write_text("old contents\n")
    with open(src) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        code = main(["report", "-", "-f", "csv", "-o", str(dest)])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = pd.read_csv(dest)
    assert got.loc[0, "n"] == 4 and "ece" in got.columns
    assert src.read_text() == _CLI_CSV


@pytest.mark.parametrize("renormalize", [False, True])
def test_a_row_out_of_range_is_reported_as_out_of_range_not_by_its_sum(capsys, tmp_path,
                                                                        renormalize):
    """cli/_columns 141 (``((arr >= 0) & (arr <= 1)).all(axis=1)`` -> ``.any``): a
    row with a value above 1 is not a row the row-sum rule (or --renormalize)
    judges: the error is the range error of the value, whatever the row's sum."""
    from calibr.cli import main

    src = tmp_path / "mc.csv"
    src.write_text("a,b,y\n0.3,0.7,a\n0.9,1.3,b\n0.6,0.4,b\n")  # row 2 sums to 2.2
    code = main(["report", str(src), "-p", "a", "b", *(["--renormalize"] * renormalize)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == ("calibr: error: --prob must lie in [0, 1]; 1 value does not, the first at "
                   "data row 2, column 'b' (1.3).\n")


# ------------------------------------------------------------------ calibr/table.py


def _wilson_by_hand(x, n, level=0.95):
    """Wilson (1927): (x + z^2/2 -+ z sqrt(x (n - x) / n + z^2 / 4)) / (n + z^2)."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    half = z * math.sqrt(x * (n - x) / n + z * z / 4)
    return (x + z * z / 2 - half) / (n + z * z), (x + z * z / 2 + half) / (n + z * z)


def test_wilson_interval_takes_arrays_of_up_to_three_dimensions():
    """table 95 and 96 (``ndims=(0, 1, 2, 3)`` -> ``(0, 1, 2, 4)`` or ``(0, 1, 3, 3)``
    for ``successes`` or ``n``): 2-D and 3-D counts are taken, 4-D refused."""
    from calibr.table import wilson_interval

    lo1, hi1 = _wilson_by_hand(1, 4)
    lo3, hi3 = _wilson_by_hand(3, 4)
    for shape in ((2,), (1, 2), (1, 1, 2)):
        x = np.array([1.0, 3.0]).reshape(shape)
        for successes, n in ((x, 4), (x, np.full(shape, 4.0)), (1.0, np.full(shape, 4.0))):
            lo, hi = wilson_interval(successes, n)
            assert lo.shape == hi.shape == shape
        lo, hi = wilson_interval(x, np.full(shape, 4.0))
        assert lo.ravel() == pytest.approx([lo1, lo3], rel=1e-14)
        assert hi.ravel() == pytest.approx([hi1, hi3], rel=1e-14)
    four = np.ones((1, 1, 1, 2))
    for successes, n, name in ((four, 4, "successes"), (1, 4 * four, "n")):
        with pytest.raises(InputError, match=rf"^`{name}` must be a count or an array of "
                                             r"counts; got an array of shape \(1, 1, 1, 2\)\.$"):
            wilson_interval(successes, n)


def test_wilson_interval_refuses_one_bad_count_among_good_ones():
    """table 105 (``bad.any()`` -> ``.all()``: one non-finite count), 107 (``(m <=
    0).any()`` -> ``.all()``: one n of 0) and 108 (the mask of the message ``m <= 0``
    -> ``m <= 1``: an n of 1 is positive)."""
    from calibr.table import wilson_interval

    with pytest.raises(InputError, match=r"^`successes` must be finite numbers; 1 value does "
                                         r"not, the first at position 1 \(nan\)\.$"):
        wilson_interval([1, math.nan], [2, 2])
    with pytest.raises(InputError, match=r"^`n` must be finite numbers; 1 value does not, the "
                                         r"first at position 0 \(inf\)\.$"):
        wilson_interval([1, 1], [math.inf, 2])
    with pytest.raises(InputError, match=r"^`n` must be positive; 1 value does not, the first "
                                         r"at position 2 \(0\.0\)\.$"):
        wilson_interval([0, 1, 0], [2, 1, 0])
    lo, hi = wilson_interval([0, 1], [2, 1])  # n = 1 is allowed
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(_wilson_by_hand(0, 2)[1], rel=1e-14)
    assert lo[1] == pytest.approx(_wilson_by_hand(1, 1)[0], rel=1e-14)


def test_report_groups_are_sorted_and_only_the_observed_ones(capsys, tmp_path):
    """cli/_report 204 (``groupby(by, sort=True, ..., observed=True)`` with
    ``observed`` -> False, or ``sort`` -> False): a categorical key (kept by
    Parquet) with an unused category makes no row, and the rows are in key order,
    not in order of appearance. By hand, 10 bins: group a (0.4 and 0.9, both
    y = 1) has gaps 0.6 and 0.1, group b (0.2 with y = 0, 0.7 with y = 1) 0.2 and
    0.3."""
    require("pyarrow")
    from calibr.cli import main

    df = pd.DataFrame({"g": pd.Categorical(["b", "b", "a", "a"], categories=["a", "b", "z"]),
                       "p": [0.2, 0.7, 0.4, 0.9], "y": [0, 1, 1, 1]})
    path = tmp_path / "preds.parquet"
    df.to_parquet(path)
    assert pd.read_parquet(path)["g"].cat.categories.tolist() == ["a", "b", "z"]
    code = main(["report", str(path), "-g", "g", "-f", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    import io

    got = pd.read_csv(io.StringIO(out))
    assert got["g"].tolist() == ["a", "b"] and got["n"].tolist() == [2, 2]
    assert got["ece"].tolist() == pytest.approx([0.35, 0.25], abs=1e-12)
    assert got["mce"].tolist() == pytest.approx([0.6, 0.3], abs=1e-12)


def test_grouped_table_rows_keep_their_group_across_kernel_batches(monkeypatch):
    """table 205 (``owner.append(g + g0)`` -> ``g - g0``): when the groups' bin sums
    are made in several batches (GROUP_MEMORY made small: two groups of 2 bins a
    batch), each row still belongs to its group. By hand: group g has the one row
    p = (g + 1) / 10 with y = 1, in bin 1 of 2."""
    from calibr._kernels import grouped

    monkeypatch.setattr(grouped, "GROUP_MEMORY", 24 * 2 * 2)
    df = pd.DataFrame({"g": [4, 3, 2, 1, 0], "p": [0.5, 0.4, 0.3, 0.2, 0.1], "y": 1})
    for table in (calibration_table("p", "y", data=df.groupby("g"), bins=2),
                  calibration_table("p", "y", data=df.groupby("g", as_index=False), bins=2)):
        assert table["g"].tolist() == [0, 1, 2, 3, 4]
        assert table["mean_confidence"].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5],
                                                                   abs=1e-15)
        assert table["bin"].tolist() == [1] * 5 and table["n"].tolist() == [1] * 5


def test_grouped_table_bounds_the_bins_of_the_classwise_form_only(monkeypatch):
    """table 312 (``not sp.binary and type == "classwise"`` in the grouped path:
    ``and`` -> ``or`` survived, ``not x`` -> ``x`` and ``==`` -> ``!=`` timed out on
    the real bound): with the bound on bins x K made 20, 7 bins of 3 classes
    (21) are refused for the classwise form only, and 21 bins of a binary p are
    not bounded by it."""
    import calibr._input.params as params

    monkeypatch.setattr(params, "MAX_BIN_CELLS", 20)
    rng = np.random.default_rng(5)
    pm = rng.dirichlet(np.ones(3), size=12)
    df = pd.DataFrame({"g": np.repeat([1, 2], 6), "p_0": pm[:, 0], "p_1": pm[:, 1],
                       "p_2": pm[:, 2], "y": rng.integers(0, 3, size=12), "p": pm[:, 0],
                       "y2": rng.integers(0, 2, size=12)})
    grouped = df.groupby("g")
    with pytest.raises(InputError, match=r"got bins = 7 with K = 3 classes \(21 bins\)"):
        calibration_table(None, "y", data=grouped, p_prefix="p_", bins=7)
    table = calibration_table(None, "y", data=grouped, p_prefix="p_", bins=7, type="confidence")
    assert table["n"].sum() == 12 and "class" not in table
    assert calibration_table(None, "y", data=grouped, p_prefix="p_", bins=6)["n"].sum() == 36
    for type_ in ("classwise", "confidence"):
        binary = calibration_table("p", "y2", data=grouped, bins=21, type=type_)
        assert binary["n"].sum() == 12
    # and summarise() (frame 737, the same condition in its all-groups kernels)
    with pytest.raises(InputError, match=r"got bins = 7 with K = 3 classes \(21 bins\)"):
        calibr.summarise(grouped, ["p_0", "p_1", "p_2"], "y", classes=range(3),
                         metrics=[calibr.metric("ece", bins=7)])
    got = calibr.summarise(grouped, ["p_0", "p_1", "p_2"], "y", classes=range(3),
                           metrics={"e": calibr.metric("ece", bins=7, type="confidence")})["e"]
    assert got[0] == calibr.ece(pm[:6], df["y"][:6], bins=7, type="confidence", classes=range(3))


class _Unreadable:
    """A sequence numpy cannot read (its ``__array__`` raises), not ragged."""

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("boom")

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return 0.5


def test_an_object_numpy_cannot_read_is_a_type_error():
    """_validation 375 (``raise InputTypeError(... numpy cannot read ...)`` ->
    ``pass``): numpy's own error is named in calibr's message."""
    with pytest.raises(calibr.InputTypeError, match=r"^`p` must be a vector or a matrix; got a "
                       r"_Unreadable that numpy cannot read as an array \(RuntimeError: boom\)\.$"):
        calibr.ece(_Unreadable(), [0, 1])


@pytest.mark.parametrize("dtype", ["string", "category"])
def test_a_non_numeric_column_of_missing_values_only_names_its_dtype(dtype):
    """_validation 456 (``msg + "."`` -> ``msg - "."`` when no value is present to
    show): the message ends after the dtype."""
    with pytest.raises(calibr.InputTypeError, match=rf"^`p` must be numeric \(integer or float\); "
                                                    rf"got dtype {dtype}\.$"):
        calibr.ece(pd.Series([None, None], dtype=dtype), [0, 1])


def test_the_refused_column_shown_is_the_one_with_the_earliest_value():
    """_validation 481 (``min(firsts)`` -> ``max``): of several refused columns the
    message shows the first present value by row (then by column), and a column
    of missing values only is shown last of all."""
    x = [0.2, 0.3]
    flags = pd.array([pd.NA, True], dtype="boolean")  # first value at row 1
    words = pd.array(["u", "v"], dtype="string")  # first value at row 0
    msg = r"^`p` must be numeric \(integer or float\); got columns of dtype boolean, string, "
    with pytest.raises(calibr.InputTypeError, match=msg + r"the first value at row 0, column 2 "
                                                          r"\('u'\)\.$"):
        calibr.ece(pd.DataFrame({"x": x, "a": flags, "b": words}), [0, 1])
    none = pd.array([pd.NA, pd.NA], dtype="string")
    with pytest.raises(calibr.InputTypeError, match=msg + r"the first value at row 1, column 1 "
                                                          r"\(True\)\.$"):
        calibr.ece(pd.DataFrame({"x": x, "a": flags, "b": none}), [0, 1])


def test_out_of_range_probabilities_are_those_below_0_or_above_1():
    """_validation 566 (the mask ``(arr < 0) | (arr > 1)`` of the range message with
    ``<`` -> ``<=``, ``0`` -> ``1``, ``>`` -> ``>=``, ``1`` -> ``2``, and its ``raise`` ->
    ``pass``): 0 and 1 are in range; of 1.5 and -0.5 the first is shown."""
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]; 2 values do not, the "
                                         r"first at position 3 \(1\.5\)\.$"):
        calibr.ece([0.0, 1.0, 0.5, 1.5, -0.5], [0, 1, 1, 0, 1])
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]; 2 values do not, the "
                                         r"first at row 1, column 0 \(-0\.25\)\.$"):
        calibr.ece([[0.0, 1.0], [-0.25, 1.25]], [1, 0])


def test_one_line_cuts_only_text_longer_than_the_limit():
    """cli/__init__ 78 (``len(text) > limit`` -> ``>=``): a text of exactly ``limit``
    characters is kept whole; one more is cut to ``limit - 3`` and "..."."""
    from calibr.cli import _one_line

    assert _one_line("a  b\n" + "x" * 6, 10) == "a b " + "x" * 6
    assert _one_line("x" * 11, 10) == "x" * 7 + "..."
    assert _one_line("x" * 200) == "x" * 200


def test_the_directories_of_the_outputs_are_the_users_not_that_of_the_input():
    """cli/__init__ 92 (``name != "file"`` -> ``==``): an OSError on a file in the
    directory of --output or --plot (their temporary files) is the user's
    problem, one in the directory of the input FILE is not (a bug)."""
    import argparse

    from calibr.cli import _input_message, _user_paths

    root = "/nonexistent-calibr-dir"
    args = argparse.Namespace(file=f"{root}/in/data.csv", output=f"{root}/out/report.csv",
                              plot=f"{root}/fig/plot.png")
    assert _user_paths(args) == {f"{root}/in/data.csv", f"{root}/out/report.csv",
                                 f"{root}/out", f"{root}/fig/plot.png", f"{root}/fig"}
    temp = OSError(28, "No space left on device", f"{root}/out/.report.csv.tmp")
    assert _input_message(temp, _user_paths(args)) == (
        f"{root}/out/.report.csv.tmp: No space left on device.")
    beside_input = OSError(28, "No space left on device", f"{root}/in/other.tmp")
    assert _input_message(beside_input, _user_paths(args)) is None


def test_calibr_input_errors_reaching_main_are_the_users():
    """cli/__init__ 107 (``validation is not None and ...`` -> ``is None``): an
    InputError or InputTypeError of calibr that reaches main() unwrapped is a
    message about the input (exit 2), not an internal error; other exceptions
    are (None)."""
    from calibr.cli import _input_message

    assert _input_message(InputError("`p` is wrong."), set()) == "--prob is wrong."  # CLI words
    assert _input_message(calibr.InputTypeError("The data are wrong."), set()) == (
        "The data are wrong.")
    assert _input_message(ValueError("`p` is wrong."), set()) is None


def test_the_report_function_is_an_attribute_of_the_cli_package():
    """cli/__init__ 65 (``name == "report"`` -> ``!=`` in the package's
    ``__getattr__``): ``calibr.cli.report`` is the report function of
    ``calibr.cli._report``; submodules are modules."""
    import importlib
    import types

    import calibr.cli as cli

    assert cli.report is importlib.import_module("calibr.cli._report").report
    assert callable(cli.report)
    assert isinstance(cli._render, types.ModuleType)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        cli.no_such_name  # noqa: B018


@pytest.mark.parametrize("options", [None, [("n_resamples", 5)], "n_resamples=5"])
def test_the_options_of_a_test_spec_must_be_a_dict(options):
    """frame 325 (``raise InputError(... must be a dict ...)`` -> ``pass``)."""
    from calibr.frame import CalibrationTest

    df = pd.DataFrame({"p": [0.2, 0.7, 0.4], "y": [0, 1, 1]})
    with pytest.raises(InputError, match=r"^The options of test 'skce' must be a dict; got "
                                         rf"{type(options).__name__}\.$"):
        calibr.summarise(df, "p", "y", metrics="ece", tests=[CalibrationTest("skce", options)],
                         rng=0)


def test_a_tuple_names_a_column_only_of_multiindex_columns():
    """_groups 116 (``raise InputError(... must name a column ...)`` -> ``pass``
    when ``y`` is not a key): a tuple is a column key only when the columns are a
    MultiIndex, even if a flat Index holds that tuple as a label (pandas'
    get_loc would find it)."""
    df = pd.DataFrame({("a", "b"): [0, 1, 1], "p": [0.2, 0.7, 0.4]})
    assert not isinstance(df.columns, pd.MultiIndex)
    msg = r"^`y` must name a column of the data; got \('a', 'b'\)\.$"
    with pytest.raises(InputError, match=msg):
        calibr.summarise(df, "p", ("a", "b"), metrics="ece")
    with pytest.raises(InputError, match=msg):
        calibration_table("p", ("a", "b"), data=df)


def test_a_table_of_data_that_is_not_a_frame_is_a_type_error():
    """_groups 274 (``raise InputTypeError(... DataFrame or DataFrameGroupBy ...)``
    -> ``pass``): calibration_table(data=...) reaches groups_of() directly."""
    for data, name in (([[0.2, 0]], "list"), (np.zeros((2, 2)), "ndarray"),
                       (pd.Series([0.2, 0.7]), "Series")):
        with pytest.raises(calibr.InputTypeError, match=r"^`data` must be a pandas DataFrame or "
                           rf"DataFrameGroupBy \(df\.groupby\(\.\.\.\)\); got {name}\.$"):
            calibration_table("p", "y", data=data)


@pytest.mark.parametrize("emptied", [["a"], ["a", "b"]])
def test_the_error_of_groups_emptied_by_na_rm_names_the_first(emptied):
    """_groups 459 (``only=int(emptied[0])`` -> ``emptied[1]``): of the groups whose
    rows na_rm=True drops entirely, the table's error names the first."""
    p = [math.nan if g in emptied else v for g, v in zip("aabbcc", [0.2, 0.7] * 3, strict=True)]
    df = pd.DataFrame({"g": list("aabbcc"), "p": p, "y": [0, 1] * 3})
    with pytest.raises(InputError, match=r"^`p` and `y` have no complete observations: "
                                         r"na_rm=True dropped all 2\. \[group g='a'\]$"):
        calibration_table("p", "y", data=df.groupby("g"), na_rm=True)
    table = calibration_table("p", "y", data=df[~df["g"].isin(emptied)].groupby("g"), na_rm=True)
    assert table["n"].sum() == 2 * (3 - len(emptied))


def test_a_generator_that_cannot_spawn_streams_is_refused_by_name():
    """frame 405 (``raise InputTypeError(... cannot spawn ...)`` -> ``pass``): a
    Generator on a legacy-seeded bit generator (no seed sequence) cannot give each
    group its own stream; the message says so."""
    legacy = np.random.Generator(np.random.RandomState(0)._bit_generator)
    df = pd.DataFrame({"p": [0.2, 0.7, 0.4], "y": [0, 1, 1]})
    with pytest.raises(calibr.InputTypeError, match=r"this Generator cannot spawn independent "
                                                    r"streams for the groups\.$"):
        calibr.summarise(df, "p", "y", metrics="ece", tests="spiegelhalter", rng=legacy)


# ------------------------------------------------------------------ calibr/torchmetrics.py


def test_torchmetrics_ignore_index_takes_the_whole_int64_range():
    """torchmetrics 136 (``_INT64_MIN <= value <= _INT64_MAX`` with either ``<=`` ->
    ``<``): both ends of the int64 range are allowed, one past them refused. By
    hand: p = 0.2, 0.7, 0.4 (y = 0, 1, 1) fall in three bins of 15, gaps 0.2,
    0.3 and 0.6: ECE 1.1 / 3."""
    from calibr.torchmetrics import binary_calibration_error

    p, y = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1])
    for ok in (-(2**63), 2**63 - 1):
        assert binary_calibration_error(p, y, ignore_index=ok) == pytest.approx(1.1 / 3,
                                                                                rel=1e-12)
    for bad in (-(2**63) - 1, 2**63):
        with pytest.raises(InputError, match=rf"within the int64 range .*; got {bad}\.$"):
            binary_calibration_error(p, y, ignore_index=bad)


def test_torchmetrics_messages_show_a_multiline_or_long_value_by_its_type():
    """torchmetrics 103 (``"\\n" in text or len(text) > 80`` -> ``and``): a value whose
    repr spans lines (a 2-D array) or is longer than 80 characters is named by its
    type; a short one-line repr is shown."""
    from calibr.torchmetrics import binary_calibration_error

    p, y = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1])
    for bad, shown in ((np.array([[1, 2], [3, 4]]), "an object of type ndarray"),
                       ("x" * 81, "an object of type str"), ("x" * 78, "'" + "x" * 78 + "'")):
        with pytest.raises(InputError, match=r"^`n_bins` must be an integer larger than 0; "
                                             rf"got {shown}\.$"):
            binary_calibration_error(p, y, n_bins=bad)


def test_torchmetrics_two_classes_are_enough():
    """torchmetrics 146 (``num_classes < 2`` -> ``<= 2``). By hand: the top labels
    of (0.8, 0.2), (0.3, 0.7), (0.6, 0.4) have confidences 0.8, 0.7, 0.6 (three
    bins of 15) and are right, right, wrong (targets 0, 1, 1): ECE 1.1 / 3."""
    from calibr.torchmetrics import multiclass_calibration_error

    p, y = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]), np.array([0, 1, 1])
    assert multiclass_calibration_error(p, y, num_classes=2) == pytest.approx(1.1 / 3, rel=1e-6)
    with pytest.raises(InputError, match=r"^`num_classes` must be an integer larger than 1; "
                                         r"got 1\.$"):
        multiclass_calibration_error(p, y, num_classes=1)


def test_torchmetrics_names_what_it_cannot_read():
    """torchmetrics 180 (``if x is None: return "None"`` -> ``is not``): the message
    names None as None and any other object by its type."""
    from calibr.torchmetrics import binary_calibration_error

    head = (r"^`preds` must be a numpy array, a pandas Series or DataFrame, a \(nested\) list "
            r"or tuple, or a torch tensor; got ")
    for x, shown in ((None, "None"), ({0.5}, "a set"), ("ab", r"a str \('ab'\)")):
        with pytest.raises(calibr.InputTypeError, match=head + shown + r"\.$"):
            binary_calibration_error(x, [0, 1])


def test_torchmetrics_refuses_a_sparse_tensor_by_its_layout():
    """torchmetrics 229 (``x.layout != torch.strided or nested`` -> ``and``): a sparse
    (not nested) tensor is refused as not dense, before numpy is asked."""
    torch = require("torch")
    from calibr.torchmetrics import binary_calibration_error

    sparse = torch.tensor([0.2, 0.7]).to_sparse()
    with pytest.raises(calibr.InputTypeError, match=r"^`preds` must be a dense tensor; got a "
                       r"tensor with layout torch\.sparse_coo\. Convert it with \.to_dense\(\)"):
        binary_calibration_error(sparse, torch.tensor([0, 1]))
    assert float(binary_calibration_error(sparse.to_dense(), torch.tensor([0, 1]))) == (
        pytest.approx(0.25, rel=1e-6))  # gaps 0.2 and 0.3 in two bins


def _groups_frame():
    """Three groups of ten rows (binary, seeded) and a 3-class version of them."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, 30)
    y = (rng.uniform(size=30) < p).astype(int)
    pm = rng.dirichlet(np.ones(3), size=30)
    ym = rng.integers(0, 3, size=30)
    return pd.DataFrame({"g": np.repeat(["a", "b", "c"], 10), "p": p, "y": y,
                         "q0": pm[:, 0], "q1": pm[:, 1], "q2": pm[:, 2], "ym": ym})


_BINARY_SPECS = [("ece", {}), ("mce", {"bins": 4}),
                 *[("skce", {"estimator": e, "bandwidth": h})
                   for e in ("biased", "uq", "ul") for h in (0.5, "median")],
                 ("mmce", {}), ("mmce", {"bandwidth": 0.3})]
_MULTICLASS_SPECS = [("ece", {"type": t}) for t in ("classwise", "confidence")] + [
    ("skce", {"estimator": e, "bandwidth": h, "type": t})
    for e in ("biased", "uq", "ul") for h in (0.5, "median")
    for t in ("canonical", "classwise", "confidence")] + [("mmce", {})]


@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "multiclass"])
def test_summarise_all_groups_at_once_equals_each_groups_call(multiclass):
    """frame 737-802 (the all-groups kernels of summarise(), ``_AllGroups``):
    ``(sp.y == k)`` -> ``!=`` and ``axis=-1`` -> ``-2`` in the classwise SKCE, the
    scalar kernels' ``estimator == "ul"`` -> ``!=``, ``finish``'s ``estimator ==
    "biased"`` -> ``!=`` (uq and ul estimates below 0 kept, not clamped) and its
    clamp ``value > 0.0``. Each value must be the bits of the metric called on the
    group's rows, for every metric, estimator, bandwidth and form. One metric a
    call: the kernels' error on one metric sends every metric to the per-group
    loop, which would hide the others' wrong values."""
    df = _groups_frame()
    if multiclass:
        p, y, specs = ["q0", "q1", "q2"], "ym", _MULTICLASS_SPECS
    else:
        p, y, specs = "p", "y", _BINARY_SPECS
    extra = {"classes": range(3)} if multiclass else {}
    negatives = 0
    for name, opts in specs:
        got = calibr.summarise(df.groupby("g"), p, y, metrics={"m": calibr.metric(name, **opts)},
                               **extra)["m"]
        for r, key in enumerate("abc"):
            rows = df[df["g"] == key]
            want = getattr(calibr, name)(rows[p], rows[y], **opts, **extra)
            assert got[r] == want, (name, opts, key)
            negatives += want < 0
    assert negatives > 0  # some uq and ul estimates are negative: kept as they are


def test_summarise_skce_of_a_perfect_group_is_zero():
    """frame 802 (the clamp ``np.where(value > 0.0, value, 0.0)`` with its ``0.0``s
    made ``1.0``): a group whose p are its labels has residuals 0, so its biased
    SKCE is exactly 0 (and that of the other group is positive and below 1)."""
    df = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "p": [0.0, 1.0, 1.0, 0.2, 0.7, 0.4],
                       "y": [0, 1, 1, 0, 1, 1]})
    biased = calibr.metric("skce", estimator="biased")
    got = calibr.summarise(df.groupby("g"), "p", "y", metrics={"s": biased})["s"].tolist()
    assert got[0] == 0.0 and 0.0 < got[1] < 1.0
    assert got[1] == calibr.skce([0.2, 0.7, 0.4], [0, 1, 1], estimator="biased")


def test_summarise_median_bandwidth_error_names_the_group():
    """frame 797 (``np.isnan(observed).any()`` -> ``.all()`` in ``finish``): one group
    without a median bandwidth (all its p equal) makes summarise() raise that
    group's error, not return NaN for it."""
    df = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "p": [0.2, 0.7, 0.4, 0.3, 0.3, 0.3],
                       "y": [0, 1, 1, 0, 1, 1]})
    for metric in (calibr.metric("skce", bandwidth="median"),
                   calibr.metric("mmce", bandwidth="median")):
        with pytest.raises(InputError, match=r"needs at least two distinct predictions; .*"
                                             r"\[metric .*; group g='b'\]$"):
            calibr.summarise(df.groupby("g"), "p", "y", metrics=[metric])


def test_reliability_diagram_styles_of_few_and_many_curves():
    """plot 360 (the diagonal's ``[0, 1], [0, 1]`` and ``linewidth=1``), 368
    (``slots > _FEW_CURVES`` -> ``>=``), 376 (``markersize=3 if crowded else 4``), 377
    (``linewidth=1.0 if crowded else 1.5``) and 383 (the intervals' ``linewidth=0.8
    if crowded else 1`` and ``alpha``): three curves are drawn in the plain style,
    four in the thin one, over the dashed diagonal from (0, 0) to (1, 1)."""
    require("matplotlib").use("Agg")
    from matplotlib.collections import LineCollection

    from calibr.plot import reliability_diagram

    rng = np.random.default_rng(9)
    for k, marker, line, ci_width, ci_alpha in ((3, 4, 1.5, 1.0, 0.8), (4, 3, 1.0, 0.8, 0.35)):
        p = rng.dirichlet(np.ones(k), size=60)
        y = rng.integers(1, k + 1, size=60)
        ax = reliability_diagram(calibration_table(p, y, bins=3), by=[]).axes[0]
        (diagonal,) = [ln for ln in ax.get_lines() if ln.get_label() == "perfect calibration"]
        assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
        assert diagonal.get_linewidth() == 1 and diagonal.get_linestyle() == "--"
        curves = [ln for ln in ax.get_lines() if ln.get_label().startswith("class")]
        assert len(curves) == k
        assert {ln.get_markersize() for ln in curves} == {marker}
        assert {ln.get_linewidth() for ln in curves} == {line}
        bars = [c for c in ax.collections if isinstance(c, LineCollection)]
        assert len(bars) == k
        assert {float(c.get_linewidth()[0]) for c in bars} == {ci_width}
        assert {c.get_alpha() for c in bars} == {ci_alpha}


def test_mixed_object_labels_are_not_taken_for_r_codes():
    """_validation 844 (``return False`` -> True for object labels that are not all
    integers): labels 1, "2", 2, 1 against columns 0..2 are not "integers without
    a 0" (the R-codes ambiguity); the string "2" is simply not a class label."""
    p = pd.DataFrame([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    with pytest.raises(InputError, match=r"^`y` must be one of the class labels \(0, 1, 2\); 1 "
                                         r"value does not, the first at position 1 \('2'\)\."):
        calibr.ece(p, np.array([1, "2", 2, 1], dtype=object))
    with pytest.raises(InputError, match=r"^`y` is ambiguous for a DataFrame `p` whose columns "
                                         r"are named 0\.\.2"):
        calibr.ece(p, np.array([1, 2, 2, 1], dtype=object))


def test_weighted_binned_metrics_bound_the_bins_of_the_classwise_form_only(monkeypatch):
    """_binned_metrics 39 (``not prep.binary and type == "classwise"`` on the
    weighted path: ``and`` -> ``or``, ``not x`` -> ``x``, ``==`` -> ``!=``): with the
    bound on bins x K made 20, weighted ece of 3 classes in 7 bins (21) is refused
    for the classwise form only; a binary p in 21 bins is not bounded by it. By
    hand, one row of weight 2 with p = 0.2 (y = 0) and one of weight 1 with p = 0.7
    (y = 1): ECE (2 * 0.2 + 1 * 0.3) / 3."""
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
