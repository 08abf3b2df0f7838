"""``bins="sweep"`` (the monotonic sweep of Roelofs et al. 2022) and
``bins="auto"`` (the cube-root rule) for ``ece``, ``mce``, ``calibration_error``
and ``calibration_table`` (``docs/definitions.md``, "Binning options").

Checked against the direct implementation of the paper in
``tests/oracles/sweep.py`` (every b binned from scratch), on hand-worked cases,
and for its refusals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracles.sweep import sweep_oracle
from tolerances import ORACLE_RTOL

import calibr
from calibr._sweep import cube_root_bins, sweep_bins


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
