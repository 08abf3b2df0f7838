"""Selective prediction: ``risk_coverage``, ``aurc``, ``e_aurc``, ``augrc`` and
``selective_accuracy`` (``docs/definitions.md``, "Selective prediction").

Checked against uncertainty-calibration 0.1.4 (``get_selective_stats``), against
torch-uncertainty 0.13.0 (``AURC``, ``AUGRC``, ``RiskAtxCov``; its module is
loaded from its file, since the package's ``__init__`` imports ``lightning``,
which it does not declare), against the oracle ``tests/oracles/selective.py``
(ties, weights, multiclass), on hand-worked cases in exact fractions, and for its
refusals.
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from calibration.utils import get_selective_stats
from oracles.selective import accuracy_oracle, area_oracle, curve_oracle, hits_oracle

import calibr

TOL = 1e-12


def _tu():
    """torch-uncertainty's risk-coverage module, loaded from its file."""
    root = Path(importlib.util.find_spec("torch_uncertainty").submodule_search_locations[0])
    spec = importlib.util.spec_from_file_location(
        "tu_risk_coverage", root / "metrics" / "classification" / "risk_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _data(n, seed, ties=None, k=None):
    rng = np.random.default_rng(seed)
    if k is None:
        p = rng.random(n)
        if ties is not None:
            p = np.round(p * ties) / ties
        y = (rng.random(n) < p ** 1.5).astype(int)
        return p, y
    p = rng.dirichlet(np.ones(k), size=n)
    if ties is not None:
        p = np.round(p * ties) / ties
        p /= p.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=row) for row in p])
    return p, y


# ---------------------------------------------------------------- hand-worked

P4, Y4 = [0.9, 0.8, 0.3, 0.6], [1, 0, 0, 0]  # confidences .9 .8 .7 .6; right wrong right wrong


def test_the_hand_worked_curve_and_areas():
    t = calibr.risk_coverage(P4, Y4)
    assert t.threshold.tolist() == pytest.approx([0.9, 0.8, 0.7, 0.6], abs=TOL)
    assert t.n.tolist() == [1, 2, 3, 4]
    assert t.risk.tolist() == pytest.approx([0, 1 / 2, 1 / 3, 1 / 2], abs=TOL)
    assert t.generalized_risk.tolist() == pytest.approx([0, 1 / 4, 1 / 4, 1 / 2], abs=TOL)
    q = F(1, 4)
    trap = q * (0 + 0) / 2 + q * (0 + F(1, 2)) / 2 + q * (F(1, 2) + F(1, 3)) / 2 \
        + q * (F(1, 3) + F(1, 2)) / 2
    assert calibr.aurc(P4, Y4) == pytest.approx(float(trap), abs=TOL)  # 13/48
    assert calibr.aurc(P4, Y4, rule="step") == pytest.approx(1 / 3, abs=TOL)
    assert calibr.e_aurc(P4, Y4) == pytest.approx(float(trap - F(1, 8)), abs=TOL)
    assert calibr.augrc(P4, Y4) == pytest.approx(3 / 16, abs=TOL)
    assert calibr.augrc(P4, Y4, rule="step") == pytest.approx(q * (0 + q + q + F(1, 2)), abs=TOL)
    assert calibr.selective_accuracy(P4, Y4, coverage=0.5) == pytest.approx(0.5, abs=TOL)
    assert calibr.selective_accuracy(P4, Y4, coverage=0.75) == pytest.approx(2 / 3, abs=TOL)
    # the default coverage is 0.8: 3.2 of the 4 rows, 2 right of weight 3.2
    assert calibr.selective_accuracy(P4, Y4) == pytest.approx(2 / 3.2, abs=TOL)


def test_ties_are_one_point_and_the_trapezoid_crosses_them():
    # confidences .9 (right), .8 .8 (one right, one wrong), .6 (wrong)
    p, y = [0.9, 0.8, 0.2, 0.6], [1, 1, 1, 0]
    t = calibr.risk_coverage(p, y)
    assert t.n.tolist() == [1, 3, 4]
    assert t.risk.tolist() == pytest.approx([0, 1 / 3, 1 / 2], abs=TOL)
    want = 0.25 * 0 + 0.5 * (0 + 1 / 3) / 2 + 0.25 * (1 / 3 + 1 / 2) / 2
    assert calibr.aurc(p, y) == pytest.approx(want, abs=TOL)
    # the straddling tied block enters in proportion: 1 + half of (1 right, 1 wrong)
    assert calibr.selective_accuracy(p, y, coverage=0.5) == pytest.approx(0.75, abs=TOL)


def test_every_p_equal_is_one_point():
    p, y = np.full(10, 0.7), np.array([1] * 7 + [0] * 3)
    t = calibr.risk_coverage(p, y)
    assert len(t) == 1 and t.risk.iloc[0] == pytest.approx(0.3)
    assert calibr.aurc(p, y) == pytest.approx(0.3, abs=TOL)
    assert calibr.augrc(p, y) == pytest.approx(0.15, abs=TOL)
    assert calibr.selective_accuracy(p, y, coverage=0.2) == pytest.approx(0.7, abs=TOL)


def test_binary_top_label_of_one_half_is_class_zero():
    # p = 0.5: the columns (0.5, 0.5), the first maximal column (class 0) predicted
    assert calibr.risk_coverage([0.5, 0.5], [0, 1]).risk.tolist() == [0.5]
    assert calibr.selective_accuracy([0.5, 0.5, 0.9], [0, 0, 1], coverage=1.0) == 1.0


# ---------------------------------------------------------------- peers

def test_uncertainty_calibrations_selective_stats_is_the_step_rule():
    p, y = _data(2000, 1)
    conf, correct = hits_oracle(p, y)
    area, acc = get_selective_stats(conf, correct)
    assert calibr.aurc(p, y, rule="step") == pytest.approx(1 - area, abs=TOL)
    # its second number: the accuracy of the int(0.1 n) + 1 most confident rows
    assert calibr.selective_accuracy(p, y, coverage=(int(0.1 * 2000) + 1) / 2000) \
        == pytest.approx(acc, abs=TOL)


def test_uncertainty_calibrations_selective_stats_multiclass():
    p, y = _data(1500, 2, k=4)
    conf, correct = hits_oracle(p, y)
    area, _ = get_selective_stats(conf, correct)
    assert calibr.aurc(p, y + 1, rule="step") == pytest.approx(1 - area, abs=TOL)


@pytest.mark.parametrize("k", [None, 3], ids=["binary", "multiclass"])
def test_torch_uncertaintys_aurc_and_augrc_from_the_step_rule(k):
    """torch-uncertainty: the trapezoid over the rows from coverage 1/n, times
    n / (n - 1); without ties, (n * step - (first + last) / 2) / (n - 1)."""
    tu = _tu()
    p, y = _data(1000, 3, k=k)
    yc = y if k is None else y + 1
    n = len(y)
    t = calibr.risk_coverage(p, yc)
    for cls, name, col in ((tu.AURC, calibr.aurc, "risk"),
                           (tu.AUGRC, calibr.augrc, "generalized_risk")):
        m = cls()
        m.update(torch.tensor(p), torch.tensor(y))
        theirs = float(m.compute())
        first, last = t[col].iloc[0], t[col].iloc[-1]
        ours = (n * name(p, yc, rule="step") - (first + last) / 2) / (n - 1)
        assert ours == pytest.approx(theirs, abs=1e-9)  # theirs: float32 error counts


def test_torch_uncertaintys_risk_at_coverage():
    tu = _tu()
    p, y = _data(1000, 4)
    for c in (0.8, 0.35, 1.0):
        m = tu.RiskAtxCov(c)
        m.update(torch.tensor(p), torch.tensor(y))
        assert calibr.selective_accuracy(p, y, coverage=c) == pytest.approx(
            1 - float(m.compute()), abs=1e-9)


# ---------------------------------------------------------------- oracle

@pytest.mark.parametrize("k", [None, 3], ids=["binary", "multiclass"])
@pytest.mark.parametrize("rule", ["trapezoid", "step"])
def test_areas_equal_the_oracle_with_ties(k, rule):
    p, y = _data(700, 5, ties=20, k=k)
    yc = y if k is None else y + 1
    conf, correct = hits_oracle(p, y)
    assert calibr.aurc(p, yc, rule=rule) == pytest.approx(
        area_oracle(conf, correct, rule=rule), abs=TOL)
    assert calibr.augrc(p, yc, rule=rule) == pytest.approx(
        area_oracle(conf, correct, generalized=True, rule=rule), abs=TOL)
    t = calibr.risk_coverage(p, yc)
    want = np.array(curve_oracle(conf, correct))
    np.testing.assert_allclose(t[["threshold", "n", "coverage", "risk"]].to_numpy(), want,
                               rtol=0, atol=TOL)


@pytest.mark.parametrize("k", [None, 3], ids=["binary", "multiclass"])
def test_areas_over_many_points_equal_the_oracle(k):
    """More points than one part of the compiled pass's sums
    (``calibr._kernels.selective.PART``): every part reaches the total."""
    from calibr._kernels.selective import PART

    p, y = _data(2 * PART + 600, 11, k=k)
    yc = y if k is None else y + 1
    conf, correct = hits_oracle(p, y)
    assert len(np.unique(conf)) > 2 * PART
    for rule in ("trapezoid", "step"):
        assert calibr.aurc(p, yc, rule=rule) == pytest.approx(
            area_oracle(conf, correct, rule=rule), abs=TOL)
        assert calibr.augrc(p, yc, rule=rule) == pytest.approx(
            area_oracle(conf, correct, generalized=True, rule=rule), abs=TOL)
    e = 1.0 - correct.mean()
    assert calibr.e_aurc(p, yc) == pytest.approx(area_oracle(conf, correct) - e ** 2 / 2,
                                                 abs=TOL)


def test_weighted_areas_equal_the_oracle_and_repeated_rows():
    p, y = _data(400, 6, ties=15)
    w = np.random.default_rng(7).integers(0, 4, size=400).astype(float)
    conf, correct = hits_oracle(p, y)
    rep = np.repeat(np.arange(400), w.astype(int))
    for f in (calibr.aurc, calibr.augrc, calibr.e_aurc):
        assert f(p, y, weights=w) == pytest.approx(f(p[rep], y[rep]), abs=TOL)
    assert calibr.aurc(p, y, weights=w) == pytest.approx(area_oracle(conf, correct, w), abs=TOL)
    for c in (0.3, 0.8):
        assert calibr.selective_accuracy(p, y, coverage=c, weights=w) == pytest.approx(
            calibr.selective_accuracy(p[rep], y[rep], coverage=c), abs=TOL)
    pd.testing.assert_frame_equal(calibr.risk_coverage(p, y, weights=w),
                                  calibr.risk_coverage(p[rep], y[rep]), atol=TOL, rtol=0)


def test_a_missing_p_is_refused_unless_na_rm():
    p, y = _data(200, 11)
    pn, yn = np.append(p, np.nan), np.append(y, 1)
    for f in (calibr.aurc, calibr.augrc, calibr.e_aurc, calibr.selective_accuracy):
        assert f(pn, yn, na_rm=True) == pytest.approx(f(p, y), abs=TOL)
        with pytest.raises(calibr.InputError, match=r"^`p` must not contain missing values; "
                                                   r"1 value is missing, .* Pass na_rm=True"):
            f(pn, yn)  # na_rm is False by default: nothing dropped silently
    pd.testing.assert_frame_equal(calibr.risk_coverage(pn, yn, na_rm=True),
                                  calibr.risk_coverage(p, y))
    with pytest.raises(calibr.InputError, match=r"^`p` must not contain missing values"):
        calibr.risk_coverage(pn, yn)


def test_selective_accuracy_with_ties_equals_the_oracle():
    p, y = _data(500, 8, ties=10)
    conf, correct = hits_oracle(p, y)
    for c in (0.1, 0.37, 0.8, 1.0):
        assert calibr.selective_accuracy(p, y, coverage=c) == pytest.approx(
            accuracy_oracle(conf, correct, c), abs=TOL)


def test_the_order_of_the_rows_does_not_matter():
    p, y = _data(600, 9, ties=8)
    perm = np.random.default_rng(0).permutation(600)
    for f in (calibr.aurc, calibr.augrc, calibr.e_aurc, calibr.selective_accuracy):
        assert f(p[perm], y[perm]) == pytest.approx(f(p, y), abs=TOL)


def test_e_aurc_is_zero_for_the_oracle_and_never_negative():
    p, y = _data(300, 10)
    correct = hits_oracle(p, y)[1]
    # a confidence with every correct row above every error: the oracle, exactly 0
    q = np.where(correct, 0.9, 0.6) * np.where(y == 1, 1, 0) \
        + np.where(correct, 0.1, 0.4) * np.where(y == 1, 0, 1)
    assert calibr.e_aurc(q, y) == pytest.approx(0.0, abs=TOL)
    for seed in range(20):
        p, y = _data(50, 100 + seed, ties=[None, 5][seed % 2])
        assert calibr.e_aurc(p, y) >= -TOL
    # Geifman et al.'s continuous oracle (fd-shifts' eaurc) from calibr's numbers
    e = 1 - calibr.selective_accuracy(p, y, coverage=1.0)
    geifman = calibr.aurc(p, y) - (e + (1 - e) * np.log(1 - e))
    assert geifman == pytest.approx(calibr.e_aurc(p, y) + e ** 2 / 2 - e - (1 - e) * np.log(1 - e))


def test_risk_coverage_per_group_equals_the_call_on_each_group():
    p, y = _data(300, 11, ties=10)
    df = pd.DataFrame({"p": p, "y": y, "g": np.repeat(["a", "b", "c"], 100)})
    out = calibr.risk_coverage("p", "y", data=df.groupby("g"))
    assert list(out.columns) == ["g", "threshold", "n", "coverage", "risk", "generalized_risk"]
    for g, rows in df.groupby("g"):
        want = calibr.risk_coverage(rows.p.to_numpy(), rows.y.to_numpy())
        got = out[out.g == g].drop(columns="g").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want)
    pd.testing.assert_frame_equal(calibr.risk_coverage("p", "y", data=df, by="g"), out)


def test_risk_coverage_of_groups_with_no_rows_is_an_empty_table():
    # observed=False keeps the categories 'a' and 'b' as groups, each of 0 rows:
    # no group has a curve, so no row (not a row of missing values per group)
    df = pd.DataFrame({"g": pd.Categorical([], categories=["a", "b"]), "p": [], "y": []})
    out = calibr.risk_coverage("p", "y", data=df.groupby("g", observed=False))
    assert out.shape == (0, 6)
    assert list(out.columns) == ["g", "threshold", "n", "coverage", "risk", "generalized_risk"]


# ---------------------------------------------------------------- refusals

@pytest.mark.parametrize(("call", "match"), [
    (lambda: calibr.aurc([0.2], [1], rule="x"), r"`rule` must be one of 'trapezoid', 'step'"),
    (lambda: calibr.augrc([0.2], [1], rule=1), r"`rule` must be one of"),
    (lambda: calibr.selective_accuracy([0.2], [1], coverage=0),
     r"`coverage` must be a number in \(0, 1\]; got 0\."),
    (lambda: calibr.selective_accuracy([0.2], [1], coverage=1.5), r"`coverage` must be"),
    (lambda: calibr.selective_accuracy([0.2], [1], coverage=True), r"`coverage` must be"),
    (lambda: calibr.aurc([], []), r"`p` and `y` must not be empty"),
    (lambda: calibr.e_aurc([0.2, 1.2], [1, 0]), r"`p`"),
    (lambda: calibr.risk_coverage([0.2], [1], p_prefix="a"), r"`p_prefix` needs `data`"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(calibr.InputError, match=match):
        call()


def test_a_group_key_named_like_a_column_of_the_table_is_refused():
    df = pd.DataFrame({"p": [0.9, 0.8, 0.3, 0.6], "y": [1, 0, 0, 0], "risk": [1, 1, 2, 2]})
    with pytest.raises(calibr.InputError, match=r"^The group key 'risk' has the name of a "
                                               r"column of the table; rename it\.$"):
        calibr.risk_coverage("p", "y", data=df.groupby("risk"))


def test_column_names_without_data_are_refused():
    with pytest.raises(calibr.InputTypeError,
                       match=r"`p` and `y` are column names only with `data`"):
        calibr.risk_coverage("p", "y")



def test_rows_of_weight_zero_are_as_if_absent():
    p, y = np.array([0.95, 0.9, 0.2, 0.6, 0.7]), np.array([0, 1, 0, 1, 1])
    w = np.array([0.0, 1.0, 2.0, 0.0, 1.0])  # the most confident row weighs nothing
    keep = w > 0
    pd.testing.assert_frame_equal(calibr.risk_coverage(p, y, weights=w),
                                  calibr.risk_coverage(p[keep], y[keep], weights=w[keep]))
    for f in (calibr.aurc, calibr.augrc, calibr.e_aurc, calibr.selective_accuracy):
        assert f(p, y, weights=w) == pytest.approx(f(p[keep], y[keep], weights=w[keep]), abs=TOL)


def test_augrc_is_the_probability_an_error_outranks_a_row():
    """The AUGRC: the probability that a random error's confidence is above a
    random row's, ties one half (a double sum over the pairs)."""
    p, y = _data(300, 12, ties=10)
    conf, correct = hits_oracle(p, y)
    err = conf[~correct]
    pairs = (err[:, None] > conf[None, :]) + 0.5 * (err[:, None] == conf[None, :])
    assert calibr.augrc(p, y) == pytest.approx(pairs.sum() / 300 ** 2, abs=TOL)
