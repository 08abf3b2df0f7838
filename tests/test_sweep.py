"""``bins="sweep"`` (the monotonic sweep of Roelofs et al. 2022) and
``bins="auto"`` (the cube-root rule) for ``ece``, ``mce``, ``calibration_error``
and ``calibration_table`` (``docs/definitions.md``, "Binning options").

Checked against the direct implementation of the paper in
``tests/oracles/sweep.py`` (every b binned from scratch), on hand-worked cases,
and for its refusals; the compiled sweep's two ways of checking a b (every bin,
or the descents only) against each other and the oracle on outcomes almost
sorted by p, where the sweep runs to b near n.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracles.sweep import sweep_oracle
from tolerances import ORACLE_RTOL

import calibr
from calibr._binning.sweep import cube_root_bins, sweep, sweep_bins
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
    assert sweep_bins(p, y, binning, right, w * 0.75) >= 1


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
                                                r"'sweep' \(the monotonic sweep\) and 'auto' "
                                                r"\(the cube-root rule\)\.$"):
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
