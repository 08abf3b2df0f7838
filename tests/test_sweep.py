"""``bins="sweep"`` (the monotonic sweep of Roelofs et al. 2022) and
``bins="auto"`` (the cube-root rule) for ``ece``, ``mce``, ``calibration_error``
and ``calibration_table`` (``docs/definitions.md``, "Binning options").

Checked against the direct implementation of the paper in
``tests/oracles/sweep.py`` (every b binned from scratch), on hand-worked cases,
and for its refusals; the compiled sweep's two ways of checking a b (every bin,
or the descents only) against each other and the oracle on outcomes almost
sorted by p, where the sweep runs to b near n. ``bins="sweep-caltrain"``
against a port of google-research caltrain's own sweep
(``tests/oracles/caltrain.py``), with each of its departures from
``bins="sweep"``; weights of any scale against a bounded loop.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from oracles.caltrain import caltrain_bins, caltrain_ece, ties_split
from oracles.sweep import sweep_oracle
from tolerances import ORACLE_RTOL

import calibr
from calibr._binning.sweep import caltrain_breaks, cube_root_bins, sweep, sweep_bins
from calibr._input import MAX_BINS
from calibr._kernels import sweep as sk


def _data(n: int, seed: int, power: float = 1.0, decimals: int | None = None):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    if decimals is not None:
        p = np.round(p, decimals)
    y = (rng.random(n) < p ** power).astype(np.int64)
    return p, y


@pytest.mark.parametrize("binning", ["equal-width", "equal-mass"])
@pytest.mark.parametrize("right", [True, False])
@pytest.mark.parametrize(("n", "seed", "decimals"), [(40, 0, None), (300, 1, None),
                                                     (300, 2, 1), (1000, 3, 2), (2000, 4, None)])
def test_the_number_of_bins_equals_the_oracle(binning, right, n, seed, decimals):
    p, y = _data(n, seed, decimals=decimals)
    b = sweep_bins(p, y, binning, right)
    assert b == sweep_oracle(p, y, binning, right)
    for metric in (calibr.ece, calibr.mce):
        assert metric(p, y, bins="sweep", binning=binning, right=right) == pytest.approx(
            metric(p, y, bins=b, binning=binning, right=right), rel=ORACLE_RTOL, abs=1e-15)


@pytest.mark.parametrize("binning", ["equal-width", "equal-mass"])
def test_whole_weights_are_repeated_rows(binning):
    p, y = _data(200, 5, decimals=2)
    w = np.random.default_rng(6).integers(0, 4, p.shape[0])
    b = sweep_bins(p, y, binning, True, w.astype(np.float64))
    assert b == sweep_oracle(p, y, binning, True, w)
    assert b == sweep_bins(np.repeat(p, w), np.repeat(y, w), binning, True)
    assert calibr.ece(p, y, bins="sweep", binning=binning, weights=w) == pytest.approx(
        calibr.ece(np.repeat(p, w), np.repeat(y, w), bins="sweep", binning=binning),
        rel=ORACLE_RTOL)


@pytest.mark.parametrize("right", [True, False])
def test_equal_width_sweep_of_huge_whole_weights_reads_their_proportions(right):
    """Equal-width bins and their mean outcomes depend on the weights' proportions only,
    so whole weights scaled past 2**31 in total (where a product of two running sums
    leaves int64; the sweep then compares in floating point) sweep to the same number."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        p = np.round(rng.random(300), 2)
        y = (rng.random(300) < p).astype(np.int64)
        w = rng.integers(0, 4, 300).astype(np.float64)
        b = sweep_bins(p, y, "equal-width", right, w)
        for scale in (2.0**29, 2.0**33, 2.0**45):
            assert sweep_bins(p, y, "equal-width", right, w * scale) == b, (seed, scale)


def test_multiclass_forms_sweep_each_column_or_the_top_label():
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(3), 900)
    y = rng.integers(1, 4, 900)
    per_column = [calibr.ece(p[:, k], (y == k + 1).astype(int), bins="sweep") for k in range(3)]
    assert calibr.ece(p, y, bins="sweep") == pytest.approx(np.mean(per_column),
                                                           rel=ORACLE_RTOL)
    conf, hit = p.max(axis=1), (p.argmax(axis=1) + 1 == y).astype(int)
    assert calibr.ece(p, y, bins="sweep", type="confidence", binning="equal-mass") == \
        pytest.approx(calibr.ece(conf, hit, bins="sweep", binning="equal-mass"),
                      rel=ORACLE_RTOL)


def test_table_and_calibration_error_use_the_swept_bins():
    p, y = _data(3000, 8)
    b = sweep_bins(p, y, "equal-mass", True)
    table = calibr.calibration_table(p, y, bins="sweep", binning="equal-mass")
    want = calibr.calibration_table(p, y, bins=b, binning="equal-mass")
    pd.testing.assert_frame_equal(table, want)
    assert calibr.calibration_error(p, y, bins="sweep", norm="l2") == pytest.approx(
        calibr.calibration_error(p, y, bins=sweep_bins(p, y, "equal-width", True), norm="l2"),
        rel=ORACLE_RTOL)


def _almost_sorted(n: int, seed: int, flips: int, gap: float | None = None,
                   decimals: int | None = None):
    """Outcomes sorted by p (0 below a threshold, 1 above) but for a few flipped
    rows; with ``gap``, rows 0 and 1 are a 1 at 0.5 and a 0 at 0.5 + gap, a descent
    that only bins narrower than ``gap`` could show."""
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    if decimals is not None:
        p = np.round(p, decimals)
    y = (p > (0.5 if gap is not None else rng.uniform(0.3, 0.7))).astype(np.int64)
    flip = rng.choice(n, flips, replace=False)
    y[flip] = 1 - y[flip]
    if gap is not None:
        p[0], p[1] = 0.5, 0.5 + gap
        y[0], y[1] = 1, 0
    return p, y


@pytest.mark.parametrize("binning", ["equal-width", "equal-mass"])
@pytest.mark.parametrize("right", [True, False])
@pytest.mark.parametrize(("n", "seed", "flips", "gap", "decimals"), [
    (60, 0, 1, None, None), (120, 1, 2, None, None), (120, 2, 0, 1e-9, None),
    (150, 3, 3, None, 2), (90, 4, 1, 1e-12, None)])
def test_almost_sorted_outcomes_every_way_equal_the_oracle(binning, right, n, seed, flips,
                                                           gap, decimals):
    """The adversarial case: b runs to near n. Each way of checking a b gives the
    oracle's number (and weights that are whole numbers are repeated rows)."""
    p, y = _almost_sorted(n, seed, flips, gap, decimals)
    want = sweep_oracle(p, y, binning, right)
    for mode in (sk.AUTO, sk.EVERY_BIN, sk.DESCENTS):
        assert sweep_bins(p, y, binning, right, mode=mode) == want
    w = np.random.default_rng(seed).integers(0, 3, n).astype(np.float64)
    w[:2] = 1.0
    want = sweep_oracle(p, y, binning, right, w)
    for mode in (sk.AUTO, sk.EVERY_BIN, sk.DESCENTS):
        assert sweep_bins(p, y, binning, right, w, mode) == want


@pytest.mark.parametrize("binning", ["equal-width", "equal-mass"])
@pytest.mark.parametrize("right", [True, False])
def test_the_descents_stand_for_every_bin_up_to_thousands_of_bins(binning, right):
    """Far beyond the oracle's reach: the descents only and every bin agree, with
    and without whole weights, and real weights (no exact sums: every bin)
    still give a number."""
    for seed, gap in ((5, 1e-12), (6, 1e-7)):
        p, y = _almost_sorted(4000, seed, 0, gap)
        ways = {mode: sweep_bins(p, y, binning, right, mode=mode)
                for mode in (sk.AUTO, sk.EVERY_BIN, sk.DESCENTS)}
        assert len(set(ways.values())) == 1 and ways[sk.AUTO] > 100, ways
        w = np.random.default_rng(seed).integers(1, 3, p.shape[0]).astype(np.float64)
        ways = {mode: sweep_bins(p, y, binning, right, w, mode)
                for mode in (sk.AUTO, sk.EVERY_BIN, sk.DESCENTS)}
        assert len(set(ways.values())) == 1, ways
    if binning == "equal-width":
        assert sweep_bins(p, y, binning, right, w * 0.75) >= 1
    else:  # refused before the loop, which counts the repeated rows
        with pytest.raises(calibr.InputError, match=r"^`weights` must be whole numbers"):
            sweep_bins(p, y, binning, right, w * 0.75)


def test_a_sweep_to_near_n_rows_at_a_million_rows():
    """Outcomes sorted but for one 1 just below a 0 (a gap of 1e-12): no bin of
    up to a million equal-width bins is that narrow, so the sweep runs to about
    n; only the descents are checked per b (one pair), not every bin (which
    would be about 1e11 bin checks)."""
    p, y = _almost_sorted(10**6, 7, 0, gap=1e-12)
    assert sweep_bins(p, y, "equal-width", True) > 10**5


def test_the_sweeps_sort_gives_the_equal_mass_breaks_of_its_number():
    """The sorted values the sweep hands to the equal-mass breaks are numpy.sort's
    (none when a zero could be a -0.0, or with weights)."""
    p, y = _data(3000, 12)
    b, presorted = sweep(p, y, "equal-mass", True)
    assert presorted is not None
    np.testing.assert_array_equal(presorted, np.sort(p))
    for right in (True, False):
        assert calibr._binning.equal_mass_breaks(None, b, right, presorted=presorted).tobytes() \
            == calibr._binning.equal_mass_breaks(p, b, right).tobytes()
    q = np.append(p, -0.0)
    assert sweep(q, np.append(y, 1), "equal-mass", True)[1] is None
    assert sweep(p, y, "equal-mass", True, np.ones(p.shape[0]))[1] is None


# --------------------------------------------------------------------------
# hand-worked cases


def test_outcomes_sorted_by_p_sweep_to_one_bin_per_row():
    # y nondecreasing along p: every binning is monotone, so b = n
    p = np.array([0.1, 0.2, 0.3, 0.6, 0.8])
    y = np.array([0, 0, 1, 1, 1])
    assert sweep_bins(p, y, "equal-mass", True) == 5 == sweep_oracle(p, y, "equal-mass")
    assert calibr.ece(p, y, bins="sweep", binning="equal-mass") == pytest.approx(
        np.mean(np.abs(y - p)), rel=1e-15)


def test_a_first_violation_at_two_bins():
    # y = 1, 0, 0, 0: two equal-mass bins have means 1/2 and 0: not monotone, b = 1
    p, y = [0.1, 0.2, 0.3, 0.4], [1, 0, 0, 0]
    assert sweep_bins(np.array(p), np.array(y), "equal-mass", True) == 1
    assert calibr.ece(p, y, bins="sweep", binning="equal-mass") == pytest.approx(
        abs(0.25 - 0.25), abs=1e-15)


def test_single_row_every_p_equal_and_one_outcome():
    assert calibr.ece([0.3], [1], bins="sweep") == pytest.approx(0.7, rel=1e-15)
    assert sweep_bins(np.array([0.3]), np.array([1]), "equal-mass", True) == 1
    # every p equal: one distinct value, trivially monotone: b = n, one non-empty bin
    p, y = np.full(6, 0.4), np.array([1, 0, 0, 1, 0, 0])
    assert sweep_bins(p, y, "equal-width", True) == 6
    assert calibr.ece(p, y, bins="sweep") == pytest.approx(abs(2 / 6 - 0.4), rel=1e-14)
    for label in (0, 1):  # y all 0 or all 1: every binning is monotone
        q = np.linspace(0.05, 0.95, 7)
        assert sweep_bins(q, np.full(7, label), "equal-mass", True) == 7


@pytest.mark.parametrize(("total", "want"), [(0.5, 1), (1, 1), (2, 2), (8, 2), (9, 3),
                                             (27, 3), (28, 4), (1000, 10), (1001, 11),
                                             (10**6, 100), (10**6 + 1, 101), (12.5, 3)])
def test_cube_root_rule(total, want):
    assert cube_root_bins(total) == want


def test_auto_is_the_cube_root_of_the_rows_or_of_the_total_weight():
    p, y = _data(1000, 9)
    # the numpy path of other bins against R's compiled kernels: rounding apart
    assert calibr.ece(p, y, bins="auto") == pytest.approx(calibr.ece(p, y, bins=10),
                                                          rel=ORACLE_RTOL)
    assert calibr.ece(p, y, bins="auto", binning="equal-mass") == calibr.ece(
        p, y, bins=10, binning="equal-mass")
    w = np.full(1000, 2.0)  # a total of 2000: 13 bins (12^3 = 1728 < 2000 <= 13^3)
    assert calibr.ece(p, y, bins="auto", weights=w) == pytest.approx(
        calibr.ece(p, y, bins=13, weights=w), rel=1e-15)


# --------------------------------------------------------------------------
# refusals


def test_refusals():
    p, y = _data(20, 10)
    with pytest.raises(calibr.InputError, match=r"`bins` must be a single positive integer; "
                                                r"got 'swep'\. The strings it takes are "
                                                r"'sweep' \(the monotonic sweep\), 'auto' "
                                                r"\(the cube-root rule\) and 'sweep-caltrain' "
                                                r"\(the sweep as google-research caltrain "
                                                r"computes it\)\.$"):
        calibr.ece(p, y, bins="swep")
    with pytest.raises(calibr.InputError, match=r"`bins` does not apply to binning = "
                                                r"'isotonic'.*got bins = 'sweep'"):
        calibr.ece(p, y, bins="sweep", binning="isotonic")


def test_dask_gathers_the_rows_for_a_number_of_bins_from_the_data():
    import dask.dataframe as dd

    p, y = _data(2000, 11)
    frame = dd.from_pandas(pd.DataFrame({"p": p, "y": y}), npartitions=4)
    for bins in ("sweep", "auto"):
        got = calibr.ece(frame["p"], frame["y"], bins=bins, binning="equal-mass")
        got = got.compute(scheduler="synchronous") if hasattr(got, "compute") else got
        assert got == pytest.approx(calibr.ece(p, y, bins=bins, binning="equal-mass"),
                                    rel=ORACLE_RTOL)


# --------------------------------------------------------------------------
# bins="sweep-caltrain": google-research caltrain's em_ece_sweep / ew_ece_sweep
# (docs/definitions.md, "Binning options"); each departure of bins="sweep" from it


def _caltrain(p, y, binning):
    return calibr.ece(p, y, bins="sweep-caltrain", binning=binning, right=False)


def test_caltrain_departure_a_equal_mass_groups_by_rank():
    """(a) caltrain's rank r of n goes to group floor((r / n) b): at n = 6, b = 4
    groups of 2, 1, 2, 1 rows, where numpy.array_split makes 2, 2, 1, 1."""
    p, y = np.arange(1, 7) / 7, np.array([0, 0, 0, 1, 0, 1])
    assert calibr.ece(p, y, bins="sweep", binning="equal-mass") == pytest.approx(1 / 6,
                                                                               rel=1e-14)
    assert caltrain_ece(p, y, "equal-mass") == pytest.approx(3 / 14, rel=1e-14)
    assert _caltrain(p, y, "equal-mass") == pytest.approx(3 / 14, rel=1e-14)
    # b = 4: groups of ranks (0, 1), (2), (3, 4), (5), each starting at its first value
    np.testing.assert_array_equal(caltrain_breaks(p, 4, "equal-mass"),
                                  [0.0, 3 / 7, 4 / 7, 6 / 7, 1.0])
    assert [len(g) for g in np.array_split(p, 4)] == [2, 2, 1, 1]


def test_caltrain_departure_b_the_largest_number_of_bins():
    """(b) caltrain's loop stops at n - 1 bins, calibr's at n: outcomes sorted by p
    sweep to 3 bins there (the first two rows together), 4 here (one row each)."""
    p, y = np.array([0.2, 0.4, 0.6, 0.8]), np.array([0, 1, 1, 1])
    assert sweep_bins(p, y, "equal-mass", True) == 4
    assert sweep_bins(p, y, "equal-mass", False, caltrain=True) == 3
    assert int(caltrain_bins(p, y, "equal-mass").max()) + 1 == 3
    assert calibr.ece(p, y, bins="sweep", binning="equal-mass") == pytest.approx(0.35,
                                                                               rel=1e-14)
    assert caltrain_ece(p, y, "equal-mass") == pytest.approx(0.25, rel=1e-14)
    assert _caltrain(p, y, "equal-mass") == pytest.approx(0.25, rel=1e-14)


def test_caltrain_departure_t_tied_values_split_by_caltrain_only():
    """(t) caltrain splits tied values between groups in the order its sort leaves
    them (0.45 with the rows in the order given); calibr's bins are intervals of
    values, so every rule of calibr keeps the three 0.4s together (0.15), and so
    does the caltrain option: the one departure it keeps (docs/definitions.md)."""
    p, y = np.array([0.4, 0.4, 0.4, 0.6]), np.array([0, 0, 1, 1])
    assert calibr.ece(p, y, bins="sweep", binning="equal-mass") == pytest.approx(0.15,
                                                                               rel=1e-13)
    assert caltrain_ece(p, y, "equal-mass") == pytest.approx(0.45, rel=1e-14)
    assert ties_split(p, y, "equal-mass")
    assert _caltrain(p, y, "equal-mass") == pytest.approx(0.15, rel=1e-13)


def test_caltrain_departure_c_equal_width_breaks_by_floor():
    """(c) caltrain's equal-width bin of v is floor(v b) in float64: 0.3 is in bin 3
    of 10 there (0.3 * 10 rounds to 3), in bin 2 of numpy.linspace's breaks
    (linspace(0, 1, 11)[3] = 0.30000000000000004 > 0.3), either closure. On the
    rows below, 0.6 at b = 5 (0.6 * 5 = 3, linspace's break 0.6000000000000001)
    stops calibr's sweep at 4 bins; caltrain's runs to 6."""
    caltrain = caltrain_breaks(None, 10, "equal-width")
    assert caltrain[3] == 0.3 and np.linspace(0, 1, 11)[3] > 0.3
    for right in (True, False):
        assert calibr._binning.bin_index(np.array([0.3]), np.linspace(0, 1, 11), right)[0] == 2
    assert calibr._binning.bin_index(np.array([0.3]), caltrain, False)[0] == 3
    assert np.floor(0.3 * 10) == 3
    for b in (2, 3, 5, 7, 10, 49, 1000):  # each break: the first double floor(v b) reaches i
        e = caltrain_breaks(None, b, "equal-width")[1:-1]
        i = np.arange(1, b)
        np.testing.assert_array_equal(np.floor(e * b), i)
        np.testing.assert_array_equal(np.floor(np.nextafter(e, 0) * b), i - 1)
    p = np.array([0.65, 0.0, 0.6, 0.95, 0.25, 0.7, 0.35])
    y = np.array([0, 0, 1, 1, 0, 1, 0])
    assert sweep_bins(p, y, "equal-width", False) == 4
    assert sweep_bins(p, y, "equal-width", False, caltrain=True) == 6
    assert calibr.ece(p, y, bins="sweep", right=False) == pytest.approx(0.1, rel=1e-13)
    assert caltrain_ece(p, y, "equal-width") == pytest.approx(0.6 / 3.5, rel=1e-14)
    assert _caltrain(p, y, "equal-width") == pytest.approx(0.6 / 3.5, rel=1e-14)


@pytest.mark.parametrize("binning", ["equal-mass", "equal-width"])
def test_caltrain_option_equals_caltrain_on_random_cases(binning):
    """The option is caltrain's number whenever caltrain's bins are intervals of
    values (no tie split between groups at any number of bins it tries; always
    for equal-width bins), ties included: values rounded to 1 or 2 decimals tie
    often or now and then. With both orders of ties in caltrain's sort."""
    compared = compared_ties = 0
    for seed in range(160):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(3, 70))
        p = rng.random(n)
        if seed % 3:  # ties: many, or a few
            p = np.round(p, seed % 3)
        y = (rng.random(n) < p ** (1 + seed % 2)).astype(np.int64)
        got = _caltrain(p, y, binning)
        l2 = calibr.calibration_error(p, y, bins="sweep-caltrain", binning=binning,
                                      right=False, norm="l2")
        for order in ("stable", "outcome"):
            if ties_split(p, y, binning, order):
                continue
            compared += 1
            compared_ties += np.unique(p).shape[0] < n
            assert got == pytest.approx(caltrain_ece(p, y, binning, 1, order), rel=1e-12,
                                        abs=1e-15), (seed, order)
            assert l2 == pytest.approx(caltrain_ece(p, y, binning, 2, order), rel=1e-12,
                                       abs=1e-15), (seed, order)
            b = int(caltrain_bins(p, y, binning, order).max()) + 1
            assert len(np.unique(caltrain_bins(p, y, binning, order))) == len(np.unique(
                calibr._binning.bin_index(p, calibr._binning.breaks(
                    p, "sweep-caltrain", binning, False, hits=y), False))), (seed, b)
    assert compared >= (300 if binning == "equal-width" else 100), compared
    assert compared_ties >= (180 if binning == "equal-width" else 12), compared_ties


@pytest.mark.parametrize("binning", ["equal-width", "equal-mass"])
@pytest.mark.parametrize(("n", "seed", "flips", "gap", "decimals"), [
    (60, 0, 1, None, None), (120, 1, 2, None, None), (120, 2, 0, 1e-9, None),
    (150, 3, 3, None, 2)])
def test_caltrain_every_way_of_checking_equals_caltrain(binning, n, seed, flips, gap,
                                                        decimals):
    """Outcomes almost sorted by p, where the sweep runs to b near n - 1: each way
    of checking a b (every bin, the descents only) gives caltrain's bins."""
    p, y = _almost_sorted(n, seed, flips, gap, decimals)
    ways = {sweep_bins(p, y, binning, False, mode=mode, caltrain=True)
            for mode in (sk.AUTO, sk.EVERY_BIN, sk.DESCENTS)}
    assert len(ways) == 1
    if not ties_split(p, y, binning):
        assert _caltrain(p, y, binning) == pytest.approx(caltrain_ece(p, y, binning),
                                                         rel=1e-12, abs=1e-15)
        assert ways.pop() >= int(caltrain_bins(p, y, binning).max()) + 1


def test_caltrain_small_inputs_and_forms():
    # n <= 2: caltrain's loop never runs, one bin
    assert _caltrain([0.3], [1], "equal-mass") == pytest.approx(0.7, rel=1e-15)
    assert _caltrain([0.2, 0.8], [0, 1], "equal-width") == pytest.approx(0.0, abs=1e-15)
    assert caltrain_ece([0.2, 0.8], [0, 1], "equal-width") == pytest.approx(0.0, abs=1e-15)
    # the top-label confidences, as caltrain's multiclass_setting="top_label"
    rng = np.random.default_rng(13)
    p = rng.dirichlet(np.ones(3), 300)
    y = rng.integers(1, 4, 300)
    conf, hit = p.max(axis=1), (p.argmax(axis=1) + 1 == y).astype(int)
    assert calibr.ece(p, y, bins="sweep-caltrain", type="confidence", binning="equal-mass",
                      right=False) == pytest.approx(caltrain_ece(conf, hit, "equal-mass"),
                                                    rel=1e-12)


def test_caltrain_refusals():
    p, y = _data(20, 10)
    with pytest.raises(calibr.InputError, match=r"^`right` must be False with bins = "
                                                r"'sweep-caltrain': caltrain's bins are "
                                                r"closed on the left \(its equal-width bin "
                                                r"of p is floor\(p B\)\)\. Pass right=False\.$"):
        calibr.ece(p, y, bins="sweep-caltrain")
    with pytest.raises(calibr.InputError, match=r"^`weights` do not apply to bins = "
                                                r"'sweep-caltrain': caltrain's sweep has no "
                                                r"weights\. Repeat the rows, or use bins = "
                                                r"'sweep' \(whose weights are counts\)\.$"):
        calibr.ece(p, y, bins="sweep-caltrain", right=False, weights=np.ones(20))


# --------------------------------------------------------------------------
# weights of any scale: the loops are bounded by MAX_BINS and the rows


@pytest.mark.parametrize(("total", "want"), [(1e18, MAX_BINS), (1e18 + 2**10, MAX_BINS),
                                             (2e-300, 1), (999_999.0**3, 999_999)])
def test_cube_root_rule_of_large_and_tiny_totals(total, want):
    # totals far above 1e18: in a child process, test_huge_weights_end_in_bounded_work
    assert cube_root_bins(total) == want


_BOUNDED = textwrap.dedent("""
    import numpy as np
    import calibr
    from calibr._binning.sweep import cube_root_bins
    # the cap comes before the correcting steps: a total of 2e100 once started
    # them near 2.7e33, a float cube root off by about 1e17 units
    assert cube_root_bins(2e100) == cube_root_bins(1.7e308) == 10**6
    print(calibr.ece([0.2, 0.8], [0, 1], bins="auto", weights=[1e100, 1e100]))
    # a descent no equal-width bin of up to 1e6 separates: the sweep runs to
    # b = 1e6 (the total weight allows it), every bin checked (sums not exact)
    p = np.array([0.1, 0.123456789123, 0.123456789123 + 1e-13, 0.9])
    y = np.array([0, 1, 0, 1])
    for w in (1e100, 1e300, 0.5e6 + 0.5):
        print(calibr.ece(p, y, bins="sweep", weights=np.full(4, w)))
""")


def test_huge_weights_end_in_bounded_work():
    """Before: the first line never returned (90 s and more), and the sweep's
    every-bin check cost O(b) per b up to 1e6 (about 5e11 steps for 4 rows). Now
    one b costs O(min(b, rows) log); run in a child process so that a regression
    fails here (after 10 minutes, far beyond the seconds it takes) instead of
    stopping the suite."""
    out = subprocess.run([sys.executable, "-c", _BOUNDED], capture_output=True, text=True,
                         timeout=600, check=True).stdout.split()
    assert float(out[0]) == pytest.approx(0.2, rel=1e-14)
    p = np.array([0.1, 0.123456789123, 0.123456789123 + 1e-13, 0.9])
    y = np.array([0, 1, 0, 1])
    # the sweep's B is the cap: every b up to 1e6 keeps the descent in one bin
    assert sweep_bins(p, y, "equal-width", True, np.full(4, 1e100)) == MAX_BINS
    want = calibr.ece(p, y, bins=MAX_BINS)
    for got in out[1:]:
        assert float(got) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("binning", ["equal-width", "equal-mass"])
def test_weights_of_every_scale(binning):
    """1e300, 1e-300 and mixed scales give an answer or the equal-mass refusal
    (before the sweep's loop reads the repeated rows as int64); a total that
    overflows is refused by the input layer."""
    p, y = np.array([0.2, 0.4, 0.6, 0.8]), np.array([0, 1, 0, 1])
    for w in ([1e300] * 4, [1e-300] * 4, [1e-300, 1e300, 1.0, 3.0]):
        w = np.array(w)
        if binning == "equal-mass" and (np.sum(w) >= 2**53 or np.any(w != np.floor(w))):
            with pytest.raises(calibr.InputError, match=r"^`weights` must (total less than "
                                                        r"2\*\*53|be whole numbers) for "
                                                        r"binning = \"equal-mass\""):
                calibr.ece(p, y, bins="sweep", binning=binning, weights=w)
            continue
        for bins in ("sweep", "auto"):
            assert 0.0 <= calibr.ece(p, y, bins=bins, binning=binning, weights=w) <= 1.0
    assert sweep_bins(p, y, "equal-width", True, np.full(4, 1e-300)) == 1  # total < 1
    with pytest.raises(calibr.InputError, match=r"^`weights` must have a finite total; "
                                                r"their sum overflows a float64\.$"):
        calibr.ece(p, y, bins="sweep", binning=binning, weights=np.full(4, 1e308))
