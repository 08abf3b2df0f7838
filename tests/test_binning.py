"""Binning options of the binned metrics (``docs/definitions.md``, "Binning
options"; ``docs/conventions.md``): equal-mass bins, the closure ``right=``,
explicit breaks, against the peers themselves.

The peers are optional packages of the ``test`` extra, imported by
``conftest.require``: on a developer's machine without them these tests skip,
under CI's variables (``CALIBR_REQUIRE_R`` / ``CALIBR_REQUIRE_TORCH``) they fail.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from conftest import require
from oracles.decompose import pav_oracle
from tolerances import ORACLE_ATOL, ORACLE_RTOL

import calibr
from calibr import InputError, _binning
from calibr._kernels import binned
from calibr.plot import table_ece

calibration = require("calibration")
relplot_metrics = require("relplot.metrics")
sk_calibration = require("sklearn.calibration")

RTOL = ORACLE_RTOL  # 1e-12 relative: the same bins, sums in another order ...
EPS = 2.0**-52  # ... or n * eps absolute: the worst-case error of a sum of n values
#                 in [0, 1] added in another order, relative to the means (a gap that
#                 cancels: one bin of 1e5 values); moving one value to another bin
#                 changes an ECE by about 1/n, far more.

#: Sample sizes from 1 to 1e5 and class counts up to 10 (1 = a binary vector).
SIZES = (1, 2, 3, 7, 15, 16, 31, 100, 1000, 100_000)
CLASSES = (1, 2, 3, 5, 10)


def close(a, b, n=1, rtol=RTOL):
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + max(n * EPS, ORACLE_ATOL)


def sample(n, k, seed, ties=False, grid=False):
    """Probabilities (a vector for k = 1, else an (n, k) matrix), 0-based labels and
    R's 1-based codes. ``ties``: rounded to 2 decimals (many ties, values on
    edges); ``grid``: every value on the decimal grid k/10."""
    rng = np.random.default_rng(seed)
    if k == 1:
        p = rng.random(n)
        if ties:
            p = np.round(p, 2)
        if grid:
            p = rng.integers(0, 11, n) / 10
        y = (rng.random(n) < p).astype(np.int64)
        return p, y
    alpha = np.full(k, 0.5)
    p = rng.dirichlet(alpha, n)
    if ties or grid:
        digits = 1 if grid else 2
        p = np.round(p, digits)
        p[:, -1] = np.round(1.0 - p[:, :-1].sum(axis=1), 12)
        ok = (p[:, -1] >= 0) & (p[:, -1] <= 1)
        p = p[ok]
        p /= p.sum(axis=1, keepdims=True)
        if p.shape[0] == 0:
            p = np.full((1, k), 1.0 / k)
    y = rng.integers(0, k, p.shape[0])
    return p, y


def ece(p, y, k, **kw):
    extra = {} if k == 1 else {"classes": range(k)}
    return calibr.ece(p, y, **kw, **extra)


# --------------------------------------------------------------------------
# uncertainty-calibration: get_ece_em (equal-mass) and get_ece (equal-width)


@pytest.mark.parametrize("k", CLASSES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["random", "ties", "grid"])
def test_equal_mass_is_get_ece_em(n, k, kind):
    p, y = sample(n, k, seed=n * 31 + k, ties=kind == "ties", grid=kind == "grid")
    for bins in (15, 10, 1, 3):
        want = calibration.get_ece_em(p, y, num_bins=bins)  # top-label (mode's default)
        got = ece(p, y, k, bins=bins, type="confidence", binning="equal-mass")
        assert close(got, want, n), (bins, got, want)
    if k > 1:  # 'marginal': each column's own equal-mass bins, the mean over the columns
        want = calibration.get_ece_em(p, y, num_bins=15, mode="marginal")
        got = ece(p, y, k, bins=15, type="classwise", binning="equal-mass")
        assert close(got, want, n), (got, want)


@pytest.mark.parametrize("k", CLASSES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["random", "ties", "grid"])
def test_equal_width_right_closed_is_get_ece(n, k, kind):
    """get_ece bins with bisect_left on the upper edges i / B: right-closed, as R.
    Its edges i / B are correctly rounded, R's (numpy.linspace) are i * (1 / B), so
    the call that reproduces it on every value is ``bins=np.arange(B + 1) / B``."""
    p, y = sample(n, k, seed=n * 17 + k, ties=kind == "ties", grid=kind == "grid")
    for bins in (15, 10, 7):
        want = calibration.get_ece(p, y, num_bins=bins)
        got = ece(p, y, k, bins=np.arange(bins + 1) / bins, type="confidence")
        assert close(got, want, n), (bins, got, want)
        if kind == "random":  # no value on an edge: R's bins are the same
            assert close(ece(p, y, k, bins=bins, type="confidence"), want, n)


def test_get_ece_and_r_differ_only_on_the_doubles_between_their_edges():
    """R's third break of 10 bins is 3 * 0.1 = 0.30000000000000004, get_ece's 3/10 =
    0.3: the value 0.30000000000000004 is in bin 3 for R, in bin 4 for get_ece."""
    v = np.linspace(0, 1, 11)[3]
    assert v == 0.30000000000000004
    p, y = np.array([v, 0.9]), np.array([1, 1])
    assert _binning.bin_index(p, binned.breaks(10))[0] == 2
    assert _binning.bin_index(p, np.arange(11) / 10)[0] == 3
    want = calibration.get_ece(p, y, num_bins=10)
    assert calibr.ece(p, y, bins=np.arange(11) / 10) == pytest.approx(want, rel=RTOL)
    assert want == pytest.approx(calibr.ece(p, y, bins=10), rel=RTOL)  # gaps alike here
    # where it matters: a bin that holds both in one convention and not the other
    p, y = np.array([v, 0.25]), np.array([1, 0])
    assert calibr.ece(p, y, bins=10) == pytest.approx((0.0 + 2 * abs(0.5 - (v + 0.25) / 2)) / 2)
    assert calibration.get_ece(p, y, num_bins=10) == pytest.approx(
        calibr.ece(p, y, bins=np.arange(11) / 10), rel=RTOL)
    assert calibration.get_ece(p, y, num_bins=10) != pytest.approx(calibr.ece(p, y, bins=10))


# --------------------------------------------------------------------------
# equal-mass edges, by hand


def test_equal_mass_breaks_by_hand():
    br = _binning.equal_mass_breaks
    # groups [0.1, 0.2] [0.3, 0.4]: the midpoint 0.25
    assert br(np.array([0.4, 0.1, 0.3, 0.2]), 2).tolist() == [0.0, 0.25, 1.0]
    # array_split: 5 values in 2 groups are 3 + 2
    assert br(np.array([0.1, 0.2, 0.3, 0.4, 0.5]), 2).tolist() == [0.0, 0.35, 1.0]
    # more bins than values: one group per value
    assert br(np.array([0.2, 0.6]), 15).tolist() == [0.0, 0.4, 1.0]
    assert br(np.array([0.7]), 15).tolist() == [0.0, 1.0]
    # ties on a cut point: the cut is the tied value, all of them in the bin the closure
    # gives them (below for right=True), never split
    p = np.array([0.2, 0.2, 0.2, 0.5])
    assert br(p, 2).tolist() == [0.0, 0.2, 1.0]
    assert _binning.bin_index(p, br(p, 2), True).tolist() == [0, 0, 0, 1]
    assert br(p, 2, right=False).tolist() == [0.0, 0.2, 1.0]
    assert _binning.bin_index(p, br(p, 2, False), False).tolist() == [1, 1, 1, 1]
    # repeated cut points are one; a group of zeros is the bin [0, 0] (right-closed)
    p = np.array([0.0, 0.0, 0.0, 0.0, 0.5, 0.9])
    assert br(p, 3).tolist() == [0.0, 0.0, 0.25, 1.0]
    assert _binning.bin_index(p, br(p, 3)).tolist() == [0, 0, 0, 0, 2, 2]
    # left-closed: the cut point 0 merges with the break 0, ones make [1, 1]
    assert br(p, 3, right=False).tolist() == [0.0, 0.25, 1.0]
    q = 1.0 - p
    assert br(q, 3, right=False).tolist() == [0.0, 0.75, 1.0, 1.0]
    assert _binning.bin_index(q, br(q, 3, False), False).tolist() == [2, 2, 2, 2, 0, 0]
    assert br(q, 3, right=True).tolist() == [0.0, 0.75, 1.0]
    # the ECE of these bins is get_ece_em's
    y = np.array([0, 1, 0, 0, 1, 1])
    assert close(calibr.ece(p, y, 3, binning="equal-mass"),
                 calibration.get_ece_em(p, y, num_bins=3))
    assert close(calibr.ece(q, y, 3, binning="equal-mass"),
                 calibration.get_ece_em(q, y, num_bins=3))


def test_equal_mass_ece_by_hand():
    """Exact fractions: bins {0.1, 0.2 | 0.3, 0.4}: |0 - 0.15| and |1 - 0.35| ..."""
    p, y = [0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1]
    assert calibr.ece(p, y, bins=2, binning="equal-mass") == pytest.approx(
        0.5 * 0.15 + 0.5 * 0.65, rel=1e-15)
    assert calibr.mce(p, y, bins=2, binning="equal-mass") == pytest.approx(0.65, rel=1e-15)
    # R's 2 equal-width bins put all four in bin 1
    assert calibr.ece(p, y, bins=2) == pytest.approx(0.25, rel=1e-15)


def test_equal_mass_weights_must_total_below_two_to_the_53():
    """Equal-mass bins of weighted rows need a total weight below 2**53, so that the ranks
    of the repeated sample are exact: exactly 2**53 is refused, 2**53 - 1 taken.

    Accepted: 2**52 copies of 0.2 (y 0) and 2**52 - 1 of 0.7 (y 1) in 2 equal-mass bins,
    whose cut is (0.2 + 0.7) / 2 = 0.45: gaps 0.2 and 0.3 with those weights.
    """
    p, y = [0.2, 0.7], [0, 1]
    with pytest.raises(InputError, match=r'^`weights` must total less than 2\*\*53 for '
                                         r'binning = "equal-mass" \(so that the ranks are '
                                         r"exact\); got 9\.0072e\+15\.$"):
        calibr.ece(p, y, 2, binning="equal-mass", weights=[2.0**52, 2.0**52])
    w = [2.0**52, 2.0**52 - 1]
    want = (w[0] * 0.2 + w[1] * 0.3) / (w[0] + w[1])
    assert calibr.ece(p, y, 2, binning="equal-mass", weights=w) == pytest.approx(want,
                                                                                   rel=1e-12)


def test_breaks_are_right_closed_by_default():
    """The internal ``breaks()`` closes bins on the right unless told otherwise, as its
    signature documents: values tied at 0 make the bin [0, 0] when closed on the right,
    and merge with the break 0 when closed on the left (``equal_mass_breaks``' rule)."""
    x = np.array([0.0, 0.0, 0.0, 0.0, 0.5, 0.9])
    assert _binning.breaks(x, 3, "equal-mass").tolist() == [0.0, 0.0, 0.25, 1.0]
    assert _binning.breaks(x, 3, "equal-mass", False).tolist() == [0.0, 0.25, 1.0]


def test_binning_stats_shapes_and_sums_by_hand():
    """``stats()`` returns B bins for B + 1 breaks (shape (B,), or (K, B) for the classwise
    form of a multiclass ``p``), empty bins included, with the sums worked by hand.

    Left-closed 2 bins of [0, 0.5, 1]: 0.1 and 0.3 (y 0, 1) in bin 0, 0.5 and 1.0 (y 1,
    1) in bin 1.
    """
    p, y = np.array([0.1, 0.5, 0.3, 1.0]), np.array([0, 1, 1, 1])
    left = _binning.BinSpec.from_options
    count, conf, hit, edges = _binning.stats(p, y, None, True, left(2, "equal-width", False),
                                             "classwise")
    assert edges.tolist() == [0.0, 0.5, 1.0]
    assert count.tolist() == [2.0, 2.0] and hit.tolist() == [1.0, 2.0]
    assert conf.tolist() == pytest.approx([0.4, 1.5], rel=1e-15)
    pm = np.array([[0.7, 0.3], [0.2, 0.8], [0.4, 0.6]])
    count, conf, hit, edges = _binning.stats(pm, np.array([0, 1, 1]), None, False,
                                             left(3, "equal-width", False), "confidence")
    assert count.shape == (3,) and edges.shape == (4,)
    # top labels 0.7, 0.8 (bin [2/3, 1]) and 0.6 (bin [1/3, 2/3)), all right
    assert count.tolist() == [0.0, 1.0, 2.0] and hit.tolist() == [0.0, 1.0, 2.0]
    # classwise: (K, B) for 2 classes and 3 left-closed bins
    count, conf, hit, edges = _binning.stats(pm[:, :2] / pm[:, :2].sum(axis=1, keepdims=True),
                                             np.array([0, 1, 1]), None, False,
                                             left(3, "equal-width", False), "classwise")
    assert count.shape == (2, 3) and edges.shape == (4,)
    assert count.sum(axis=1).tolist() == [3.0, 3.0] and hit.sum(axis=1).tolist() == [1.0, 2.0]
    # the last bins empty: still B of them
    count, conf, hit, edges = _binning.stats(np.array([0.1, 0.2]), np.array([0, 1]), None,
                                             True, left(4, "equal-width", False), "classwise")
    assert count.tolist() == [2.0, 0.0, 0.0, 0.0] and hit.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_bin_spec_is_a_hashable_value_of_the_checked_options():
    """``BinSpec``: R's bins only for a number of equal-width, right-closed bins; the
    number of bins without the data; explicit breaks kept as their doubles, so that
    equal specs are equal and hash alike (a cache key), and ``edges`` gives them back."""
    spec = _binning.BinSpec.from_options
    assert spec(10, "equal-width", True).is_default
    for other in (spec(10, "equal-width", False), spec(10, "equal-mass", True),
                  spec(np.linspace(0, 1, 11), "equal-width", True)):
        assert not other.is_default
    assert spec(7, "equal-mass", False).nbins == 7
    breaks = np.array([0.0, 0.30000000000000004, 0.5, 1.0])
    a, b = spec(breaks, "equal-width", True), spec(list(breaks), "equal-width", True)
    assert a == b and hash(a) == hash(b) and a.nbins == 3 and a.data_free
    assert a.edges().tobytes() == breaks.tobytes() and not a.edges().flags.writeable
    assert len({a, b, spec(3, "equal-width", True)}) == 2
    assert not spec(3, "equal-mass", True).data_free
    assert spec(3, "equal-width", True).edges().tolist() == binned.breaks(3).tolist()
    x = np.array([0.4, 0.1, 0.3, 0.2])
    assert spec(2, "equal-mass", True).edges(x).tolist() == [0.0, 0.25, 1.0]
    with pytest.raises(InputError, match=r"^`binning` must be 'equal-width' \(the default\) "
                                         r"when `bins` gives the breaks; got 'equal-mass' "
                                         r"with 4 breaks\."):
        spec(breaks, "equal-mass", True)


# --------------------------------------------------------------------------
# left-closed: numpy.histogram, relplot; right-closed: scikit-learn


def histogram_ece(p, y, bins):
    """ECE with numpy.histogram's bins (left-closed, 1 in the last bin)."""
    n, _ = np.histogram(p, bins=bins, range=(0, 1))
    conf, _ = np.histogram(p, bins=bins, range=(0, 1), weights=p)
    hit, _ = np.histogram(p, bins=bins, range=(0, 1), weights=y.astype(float))
    ok = n > 0
    return float(np.sum(np.abs(hit[ok] - conf[ok])) / p.shape[0])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["random", "ties", "grid"])
def test_left_closed_is_numpy_histogram(n, kind):
    p, y = sample(n, 1, seed=n + 5, ties=kind == "ties", grid=kind == "grid")
    for bins in (10, 15, 3, 1):
        assert close(calibr.ece(p, y, bins, right=False), histogram_ece(p, y, bins), n)
        # numpy.histogram's bin of each value is calibr's
        counts = np.bincount(_binning.bin_index(p, binned.breaks(bins), right=False),
                             minlength=bins)
        assert counts.tolist() == np.histogram(p, bins=bins, range=(0, 1))[0].tolist()


def relplot_breaks(bins):
    """relplot's binnedECE: bin floor(f / (1/B)), and 1.0 alone in bin B (B + 1 bins):
    left-closed bins, then [1 - ulp, 1] for 1.0."""
    edges = binned.breaks(bins)
    return np.concatenate((edges[:-1], [np.nextafter(1.0, 0.0), 1.0]))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["random", "ties", "grid"])
def test_left_closed_is_relplot_binned_ece(n, kind):
    p, y = sample(n, 1, seed=n + 9, ties=kind == "ties", grid=kind == "grid")
    for bins in (10, 15, 4):
        want = float(relplot_metrics.binnedECE(p, y, nbins=bins))
        assert close(calibr.ece(p, y, bins=relplot_breaks(bins), right=False), want, n)
        if not (p == 1.0).any():  # relplot gives 1.0 a bin of its own
            assert close(calibr.ece(p, y, bins, right=False), want, n)


def test_decimal_grid_edges_under_each_convention():
    """The values k/10 with B = 10: R's breaks are 0.30000000000000004,
    0.6000000000000001 and 0.7000000000000001 where the grid has 0.3, 0.6 and 0.7, so
    left-closed (numpy.histogram, relplot, netcal's digitize) puts those three in the
    bin below, and right-closed (R, scikit-learn) puts every k/10 but 0 in the bin
    below."""
    v = np.arange(11) / 10
    edges = binned.breaks(10)
    left = _binning.bin_index(v, edges, right=False)
    right = _binning.bin_index(v, edges, right=True)
    assert left.tolist() == [0, 1, 2, 2, 4, 5, 5, 6, 8, 9, 9]
    assert right.tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    # numpy.histogram and relplot agree on the left-closed bins of k/10 (0..0.9)
    assert np.histogram(v, bins=10, range=(0, 1))[0].tolist() == np.bincount(
        left, minlength=10).tolist()
    relplot_bin = ((v + 0) / (1.0 / 10)).astype(int)  # relplot.metrics.binning
    assert relplot_bin[:-1].tolist() == left[:-1].tolist() and relplot_bin[-1] == 10
    # numpy.digitize (netcal's convention, on the inner edges) agrees too
    assert (np.digitize(v, edges[1:-1], right=False)).tolist() == left.tolist()
    # scikit-learn's calibration_curve: searchsorted(bins[1:-1], p) (side left) is R's
    assert np.searchsorted(edges[1:-1], v).tolist() == right.tolist()


@pytest.mark.parametrize("n", [n for n in SIZES if n > 1])
@pytest.mark.parametrize("kind", ["random", "ties", "grid"])
def test_right_closed_table_is_sklearn_calibration_curve(n, kind):
    p, y = sample(n, 1, seed=n + 13, ties=kind == "ties", grid=kind == "grid")
    if len(np.unique(y)) < 2:
        y[0] = 1 - y[0]
    for bins in (10, 5):
        prob_true, prob_pred = sk_calibration.calibration_curve(y, p, n_bins=bins,
                                                                strategy="uniform")
        tab = calibr.calibration_table(p, y, bins)
        np.testing.assert_allclose(tab["observed_frequency"], prob_true, rtol=RTOL, atol=0)
        np.testing.assert_allclose(tab["mean_confidence"], prob_pred, rtol=RTOL, atol=0)


# --------------------------------------------------------------------------
# R's default untouched; the options' numbers hang together


def test_default_options_are_r_bit_for_bit_and_breaks_reproduce_them():
    p, y = sample(5000, 4, seed=3)
    codes = y + 1
    for t in ("classwise", "confidence"):
        r = calibr.ece(p, codes, 10, t)
        assert calibr.ece(p, codes, 10, t, binning="equal-width", right=True) == r
        assert close(calibr.ece(p, codes, np.linspace(0, 1, 11), t), r)
        assert close(calibr.mce(p, codes, np.linspace(0, 1, 11), t), calibr.mce(p, codes, 10, t))


@pytest.mark.parametrize("opts", [dict(binning="equal-mass"), dict(right=False),
                                  dict(bins=[0, 0.35, 0.5, 0.9, 1]),
                                  dict(binning="equal-mass", right=False, bins=7)])
def test_table_and_metrics_agree_and_the_breaks_are_the_tables(opts):
    p, y = sample(3000, 5, seed=11, ties=True)
    codes = y + 1
    for t in ("classwise", "confidence"):
        tab = calibr.calibration_table(p, codes, type=t, **opts)
        assert close(table_ece(tab), calibr.ece(p, codes, type=t, **opts))
        assert tab["gap"].max() == calibr.mce(p, codes, type=t, **opts)
        assert (tab["lower"] <= tab["upper"]).all()
        assert tab["n"].sum() == (p.shape[0] * (5 if t == "classwise" else 1))
    if "bins" in opts and not isinstance(opts["bins"], int):
        tab = calibr.calibration_table(p, codes, type="confidence", **opts)
        edges = np.asarray(opts["bins"], dtype=float)
        assert tab["lower"].tolist() == edges[tab["bin"] - 1].tolist()
        assert tab["upper"].tolist() == edges[tab["bin"]].tolist()


def test_equal_mass_table_breaks_are_get_equal_bins():
    p, y = sample(1000, 1, seed=4, ties=True)
    tab = calibr.calibration_table(p, y, 15, binning="equal-mass")
    upper = calibration.utils.get_equal_bins(list(p), num_bins=15)
    assert tab["upper"].tolist() == upper
    assert tab["lower"].tolist() == [0.0] + upper[:-1]
    # each bin holds about n / B values
    assert tab["n"].min() >= 50


@pytest.mark.parametrize("opts", [dict(binning="equal-mass"), dict(right=False),
                                  dict(bins=[0, 0.2, 0.7, 1])])
def test_weights_are_repeated_rows(opts):
    p, y = sample(400, 3, seed=8, ties=True)
    w = np.random.default_rng(2).integers(0, 4, p.shape[0])
    w[0] = 0
    rep_p, rep_y = np.repeat(p, w, axis=0), np.repeat(y, w)
    for t in ("classwise", "confidence"):
        kw = dict(type=t, classes=range(3), **opts)
        assert close(calibr.ece(p, y, weights=w, **kw), calibr.ece(rep_p, rep_y, **kw))
        assert close(calibr.mce(p, y, weights=w, **kw), calibr.mce(rep_p, rep_y, **kw))
        a = calibr.calibration_table(p, y, weights=w, **kw)
        b = calibr.calibration_table(rep_p, rep_y, **kw)
        assert a["upper"].tolist() == b["upper"].tolist()
        np.testing.assert_allclose(a["n"], b["n"], rtol=0)


def test_equal_mass_refuses_fractional_weights():
    with pytest.raises(calibr.InputError, match=r'^`weights` must be whole numbers for '
                                                r'binning = "equal-mass"'):
        calibr.ece([0.1, 0.5, 0.9], [0, 1, 1], 2, binning="equal-mass", weights=[1, 0.5, 2])
    # fine for the other options: a weighted count
    calibr.ece([0.1, 0.5, 0.9], [0, 1, 1], 2, right=False, weights=[1, 0.5, 2])


def test_summarise_routes_other_bins_per_group_with_the_metrics_numbers():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"g": rng.integers(0, 4, 2000), "p": np.round(rng.random(2000), 2)})
    df["y"] = (rng.random(2000) < df["p"]).astype(int)
    specs = {"ece": "ece",
             "em": calibr.metric("ece", bins=15, binning="equal-mass"),
             "ml": calibr.metric("mce", right=False),
             "eb": calibr.metric("ece", bins=[0, 0.5, 0.75, 1])}
    res = calibr.summarise(df.groupby("g"), "p", "y", **specs)
    for i, (_, g) in enumerate(df.groupby("g")):
        assert res["ece"][i] == calibr.ece(g["p"], g["y"])
        assert res["em"][i] == calibr.ece(g["p"], g["y"], 15, binning="equal-mass")
        assert res["ml"][i] == calibr.mce(g["p"], g["y"], right=False)
        assert res["eb"][i] == calibr.ece(g["p"], g["y"], [0, 0.5, 0.75, 1])
    tab = calibr.calibration_table("p", "y", 15, data=df.groupby("g"), binning="equal-mass")
    for gk, g in df.groupby("g"):
        rows = tab[tab["g"] == gk].drop(columns="g").reset_index(drop=True)
        pd.testing.assert_frame_equal(
            rows, calibr.calibration_table(g["p"], g["y"], 15, binning="equal-mass"))


def test_consistency_band_uses_the_tables_bins():
    p, y = sample(500, 1, seed=6)
    a = calibr.calibration_table(p, y, 5, binning="equal-mass", consistency=0.9, rng=3,
                                 n_resamples=200)
    b = calibr.calibration_table(p, y, 5, binning="equal-mass", consistency=0.9, rng=3,
                                 n_resamples=200)
    pd.testing.assert_frame_equal(a, b)
    # the band of a calibrated sample's equal-mass bin is near its mean confidence
    inside = (a["consistency_lower"] <= a["mean_confidence"] + 0.05) & (
        a["mean_confidence"] - 0.05 <= a["consistency_upper"])
    assert inside.all()
    default = calibr.calibration_table(p, y, 5, consistency=0.9, rng=3, n_resamples=200)
    assert not np.array_equal(default["upper"], a["upper"])


# --------------------------------------------------------------------------
# isotonic bins: the blocks of the isotonic fit (the CORP reliability diagram)


def _blocks_oracle(x, c, w=None):
    """(values of each block, fitted value, total weight, weighted mean of x) by the
    exact PAV of tests/oracles/decompose.py."""
    groups, fitted = pav_oracle(x, c, w)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=float)
    out = []
    for vals, f in zip(groups, fitted, strict=True):
        m = np.isin(x, vals) & (w > 0)
        out.append((vals, float(f), float(w[m].sum()), float(np.sum(w[m] * x[m]) / w[m].sum())))
    return out


@pytest.mark.parametrize("right", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_isotonic_table_rows_are_the_blocks_of_the_fit(right, weighted, seed):
    rng = np.random.default_rng(seed)
    n = (3, 40, 700, 5000)[seed]
    p = np.round(rng.random(n), (1, 2, 2, 3)[seed])
    y = (rng.random(n) < p**1.5).astype(np.int64)
    w = rng.random(n) * 2 if weighted else None
    if weighted:
        w[::5] = 0.0
        w[0] = 1.0
    tab = calibr.calibration_table(p, y, binning="isotonic", right=right, weights=w)
    want = _blocks_oracle(p, y, w)
    assert len(tab) == len(want)
    np.testing.assert_allclose(tab["observed_frequency"], [f for _, f, _, _ in want],
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tab["n"], [t for _, _, t, _ in want], rtol=1e-12)
    np.testing.assert_allclose(tab["mean_confidence"], [m for *_, m in want], rtol=1e-12)
    assert np.all(np.diff(tab["observed_frequency"]) > 0)
    # the breaks are values of the data: every row of a block is in its bin exactly
    if right:
        assert tab["upper"].tolist() == [v[-1] for v, *_ in want[:-1]] + [1.0]
    else:
        assert tab["lower"].tolist() == [0.0] + [v[0] for v, *_ in want[1:]]
    assert tab["bin"].tolist() == list(range(1, len(want) + 1))
    # ece() over the same bins is the table's weighted gap
    assert close(table_ece(tab), calibr.ece(p, y, binning="isotonic", right=right, weights=w),
                 n=n)
    assert tab["gap"].max() == calibr.mce(p, y, binning="isotonic", right=right, weights=w)


def test_isotonic_table_of_every_form():
    p, y = sample(2000, 4, seed=13, ties=True)
    codes = y + 1
    tab = calibr.calibration_table(p, codes, binning="isotonic")
    for k in range(4):
        rows = tab[tab["class"] == k + 1]
        want = _blocks_oracle(p[:, k], (y == k).astype(int))
        np.testing.assert_allclose(rows["observed_frequency"], [f for _, f, _, _ in want],
                                   rtol=1e-12, atol=1e-15)
        assert rows["n"].sum() == p.shape[0]
    top = calibr.calibration_table(p, codes, type="confidence", binning="isotonic")
    x, c = p.max(axis=1), (p.argmax(axis=1) == y).astype(int)
    want = _blocks_oracle(x, c)
    np.testing.assert_allclose(top["observed_frequency"], [f for _, f, _, _ in want],
                               rtol=1e-12, atol=1e-15)
    for t in ("classwise", "confidence"):
        kw = dict(type=t, binning="isotonic")
        assert close(table_ece(calibr.calibration_table(p, codes, **kw)),
                     calibr.ece(p, codes, **kw), n=p.shape[0])


def test_isotonic_bins_at_the_ends_are_zero_width():
    # a first block of zeros (right-closed) and a last block of ones (left-closed)
    p = np.array([0.0, 0.0, 0.4, 0.6, 1.0, 1.0])
    y = np.array([0, 0, 1, 0, 1, 1])
    right = calibr.calibration_table(p, y, binning="isotonic")
    assert right[["lower", "upper", "n"]].values.tolist() == [
        [0.0, 0.0, 2], [0.0, 0.6, 2], [0.6, 1.0, 2]]
    assert right["observed_frequency"].tolist() == [0.0, 0.5, 1.0]
    left = calibr.calibration_table(p, y, binning="isotonic", right=False)
    assert left[["lower", "upper", "n"]].values.tolist() == [
        [0.0, 0.4, 2], [0.4, 1.0, 2], [1.0, 1.0, 2]]
    assert _binning.isotonic_breaks(p, y, True).tolist() == [0.0, 0.0, 0.6, 1.0]


def test_isotonic_bins_per_group_and_in_summarise():
    rng = np.random.default_rng(14)
    df = pd.DataFrame({"g": rng.integers(0, 3, 900), "p": np.round(rng.random(900), 2)})
    df["y"] = (rng.random(900) < df["p"]).astype(int)
    tab = calibr.calibration_table("p", "y", data=df.groupby("g"), binning="isotonic")
    res = calibr.summarise(df.groupby("g"), "p", "y",
                           e=calibr.metric("ece", binning="isotonic"))
    for i, (gk, g) in enumerate(df.groupby("g")):
        rows = tab[tab["g"] == gk].drop(columns="g").reset_index(drop=True)
        pd.testing.assert_frame_equal(rows, calibr.calibration_table(g["p"], g["y"],
                                                                     binning="isotonic"))
        assert res["e"][i] == calibr.ece(g["p"], g["y"], binning="isotonic")


def test_isotonic_bins_refuse_a_consistency_band():
    with pytest.raises(calibr.InputError, match=(
            r"^`consistency` cannot be combined with binning = 'isotonic': the band keeps the "
            r"table's bins fixed, and isotonic bins are chosen from the outcomes, so the band "
            r"would be too narrow \(docs/definitions\.md, \"Binning options\"\)\.$")) as err:
        calibr.calibration_table([0.1, 0.5, 0.9], [0, 1, 1], binning="isotonic",
                                 consistency=0.9)
    assert err.value.param == "consistency"


def test_reliability_diagram_draws_the_isotonic_bins():
    require("matplotlib").use("Agg")
    from calibr.plot import COUNTS_LABEL, reliability_diagram

    p, y = sample(600, 1, seed=15)
    tab = calibr.calibration_table(p, y, binning="isotonic")
    fig = reliability_diagram(tab, show_ece=True)
    counts = next(ax for ax in fig.axes if ax.get_label() == COUNTS_LABEL)
    assert sorted(r.get_height() for r in counts.patches) == sorted(tab["n"].tolist())
    assert fig.axes[0].get_title() == f"ECE = {calibr.ece(p, y, binning='isotonic'):.4g}"


# --------------------------------------------------------------------------
# errors, named and pinned


def _as_breaks(shown, rest):
    return (r"^`bins` must be a single positive integer; got " + shown
            + r"; as breaks \(R's cut\(x, breaks = \.\.\.\)\) it must " + rest)


BAD = [
    (dict(binning="equal_mass"), r"^`binning` must be one of 'equal-width', 'equal-mass', "
                                 r"'isotonic'; got 'equal_mass'\.$"),
    (dict(binning="quantile"), r"^`binning` must be one of"),
    (dict(right="false"), r"^`right` must be True or False; got 'false'\.$"),
    (dict(right=1), r"^`right` must be True or False; got 1\.$"),
    (dict(bins=[0, 0.6, 0.5, 1]),
     _as_breaks(r"\[0, 0\.6, 0\.5, 1\]", r"be strictly increasing \(as R's cut\(\) "
                r"requires\); the value at position 2 \(0\.5\) is not above the one before "
                r"\(0\.6\)\.$")),
    (dict(bins=[0, 0.5, 0.5, 1]), _as_breaks(r".*", r"be strictly increasing")),
    (dict(bins=[0.1, 0.5, 1]), _as_breaks(r"\[0\.1, 0\.5, 1\]",
                                          r"start at 0 and end at 1; it runs from 0\.1 to "
                                          r"1\.0\.$")),
    (dict(bins=[0, 0.5, 0.9]), _as_breaks(r".*", r"start at 0 and end at 1")),
    (dict(bins=[0, np.nan, 1]), _as_breaks(r".*", r"be finite numbers; the value at "
                                                  r"position 1 is nan\.$")),
    (dict(bins=[0]), _as_breaks(r"\[0\]", r"hold at least 2 values \(one bin\); it "
                                           r"has 1\.$")),
    (dict(bins=[]), _as_breaks(r"\[\]", r"hold at least 2 values")),
    (dict(bins=np.zeros((2, 2))), _as_breaks(r"an array of shape \(2, 2\)",
                                             r"be a 1-d sequence of numbers; it has 2 "
                                             r"dimensions\.$")),
    (dict(bins=[0, 0.5, 1], binning="equal-mass"),
     r"^`binning` must be 'equal-width' \(the default\) when `bins` gives the breaks; got "
     r"'equal-mass' with 3 breaks\."),
    (dict(bins=2.5), r"^`bins` must be a single positive integer; got 2\.5\.$"),
    (dict(bins=15, binning="isotonic"),
     r"^`bins` does not apply to binning = 'isotonic': its bins are the blocks of the "
     r"isotonic fit, one per fitted value; got bins = 15\. Leave `bins` out\.$"),
    (dict(bins=[0, 0.5, 1], binning="isotonic"),
     r"^`bins` does not apply to binning = 'isotonic': .*; got 3 breaks\. Leave `bins` out\.$"),
]
BAD_TYPES = [
    (dict(bins=[0, "a", 1]), _as_breaks(r".*", r"be real numbers; the value at position 1 "
                                               r"is 'a'\.$")),
    (dict(bins={0, 1}), r"^`bins` must be a single positive integer or a sorted sequence of "
                        r"breaks from 0 to 1 \(a list, tuple or array\); got a set\.$"),
]


@pytest.mark.parametrize("func", [calibr.ece, calibr.mce, calibr.calibration_table])
@pytest.mark.parametrize("kw,match", BAD)
def test_bad_options_are_input_errors_naming_the_argument(func, kw, match):
    p = np.array([0.1, 0.5, 0.9])
    before = p.copy()
    with pytest.raises(calibr.InputError, match=match):
        func(p, [0, 1, 1], **kw)
    assert np.array_equal(p, before)


@pytest.mark.parametrize("func", [calibr.ece, calibr.mce, calibr.calibration_table])
@pytest.mark.parametrize("kw,match", BAD_TYPES)
def test_bad_breaks_types_are_input_type_errors(func, kw, match):
    with pytest.raises(calibr.InputTypeError, match=match):
        func([0.1, 0.5, 0.9], [0, 1, 1], **kw)


def test_bad_options_in_summarise_name_the_metric_and_group():
    df = pd.DataFrame({"p": [0.1, 0.6, 0.9], "y": [0, 1, 1]})
    with pytest.raises(calibr.InputError, match=r"^`binning` must be one of .*\[metric 'e'"):
        calibr.summarise(df, "p", "y", e=calibr.metric("ece", binning="width"))


# --------------------------------------------------------------------------
# the plot draws the chosen bins; the command line


def test_reliability_diagram_draws_the_tables_bins():
    require("matplotlib").use("Agg")  # a test dependency: a failure, not a skip, in CI
    from calibr.plot import COUNTS_LABEL, reliability_diagram

    p, y = sample(600, 1, seed=12)
    tab = calibr.calibration_table(p, y, 6, binning="equal-mass")
    fig = reliability_diagram(tab, show_ece=True)
    counts = next(ax for ax in fig.axes if ax.get_label() == COUNTS_LABEL)
    bars = sorted(counts.patches, key=lambda r: r.get_x())
    assert [round(r.get_x(), 12) for r in bars] == [round(v, 12) for v in tab["lower"]]
    assert [round(r.get_x() + r.get_width(), 12) for r in bars] == [
        round(v, 12) for v in tab["upper"]]
    assert [r.get_height() for r in bars] == tab["n"].tolist()
    title = fig.axes[0].get_title()
    assert title == f"ECE = {calibr.ece(p, y, 6, binning='equal-mass'):.4g}"


def test_cli_binning_options(tmp_path, capsys):
    from calibr.cli import main

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"p": np.round(rng.random(300), 3), "m": rng.integers(0, 2, 300)})
    df["y"] = (rng.random(300) < df["p"]).astype(int)
    path = tmp_path / "in.csv"
    df.to_csv(path, index=False)
    code = main(["report", str(path), "--by", "m", "--binning", "equal-mass", "--right",
                 "false", "--format", "json",
                 "--metrics", "ece,mce,ece(bins=4,binning=equal-width,right=true)"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = json.load(io.StringIO(out))
    rows = rows["rows"] if isinstance(rows, dict) else rows
    for row, (_, g) in zip(rows, df.groupby("m"), strict=True):
        assert row["ece"] == pytest.approx(
            calibr.ece(g["p"], g["y"], binning="equal-mass", right=False), rel=1e-12)
        assert row["mce"] == pytest.approx(
            calibr.mce(g["p"], g["y"], binning="equal-mass", right=False), rel=1e-12)
        assert row["ece(bins=4,binning=equal-width,right=true)"] == pytest.approx(
            calibr.ece(g["p"], g["y"], 4), rel=1e-12)
    code = main(["report", str(path), "--per-bin", "--binning", "equal-mass"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "bins: 10 equal-mass bins (each group's and class's own breaks), closed on the " \
           "right, 0 in the first bin" in out
    code = main(["report", str(path), "--right", "maybe"])
    _, err = capsys.readouterr()
    assert code == 2 and "--right" in err


# --------------------------------------------------------------------------
# docs/conventions.md: every row's calibr call against the library


def _tm():
    torch = require("torch")
    tmf = require("torchmetrics.functional.classification")
    return torch, tmf


def _relplot_breaks_doc(B):
    return np.r_[np.linspace(0, 1, B + 1)[:-1], np.nextafter(1.0, 0.0), 1.0]


def _row_tm_binary(p, y, k):
    if k > 1:
        return None
    torch, tmf = _tm()
    want = float(tmf.binary_calibration_error(torch.tensor(p), torch.tensor(y), n_bins=15))
    got = float(calibr.torchmetrics.binary_calibration_error(p, y, n_bins=15))
    return got, want, 0.0


def _row_tm_multiclass(p, y, k):
    if k == 1:
        return None
    torch, tmf = _tm()
    want = float(tmf.multiclass_calibration_error(torch.tensor(p), torch.tensor(y),
                                                  num_classes=k, n_bins=15))
    got = float(calibr.torchmetrics.multiclass_calibration_error(p, y, num_classes=k,
                                                                 n_bins=15))
    return got, want, 1e-6  # float32 result (docs/torchmetrics.md)


def _row_relplot(p, y, k):
    if k > 1:
        return None
    B = 10
    want = float(relplot_metrics.binnedECE(p, y, nbins=B))
    return calibr.ece(p, y, bins=_relplot_breaks_doc(B), right=False), want, None


def _row_sklearn_uniform(p, y, k):
    if k > 1 or len(np.unique(y)) < 2:
        return None
    B = 10
    true, pred = sk_calibration.calibration_curve(y, p, n_bins=B, strategy="uniform")
    tab = calibr.calibration_table(p, y, B)
    got = np.r_[tab["observed_frequency"], tab["mean_confidence"]]
    return got, np.r_[true, pred], None


def _row_sklearn_quantile(p, y, k):
    if k > 1 or len(np.unique(y)) < 2:
        return None
    B = 5
    inner = np.percentile(p, np.linspace(0, 100, B + 1))[1:-1]
    if len(np.unique(inner)) < len(inner) or inner[0] <= 0 or inner[-1] >= 1:
        return None  # repeated percentiles: calibr refuses repeated breaks
    true, pred = sk_calibration.calibration_curve(y, p, n_bins=B, strategy="quantile")
    tab = calibr.calibration_table(p, y, bins=np.r_[0, inner, 1])
    return np.r_[tab["observed_frequency"], tab["mean_confidence"]], np.r_[true, pred], None


def _classes(k):
    return {} if k == 1 else {"classes": range(k)}


def _row_uc_ece(p, y, k):
    want = calibration.get_ece(p, y, num_bins=15)
    got = calibr.ece(p, y, bins=np.arange(16) / 15, type="confidence", **_classes(k))
    return got, want, None


def _row_uc_ece_em(p, y, k):
    want = calibration.get_ece_em(p, y, num_bins=15)
    got = calibr.ece(p, y, 15, type="confidence", binning="equal-mass", **_classes(k))
    return got, want, None


def _row_uc_ece_em_marginal(p, y, k):
    if k == 1:
        return None
    want = calibration.get_ece_em(p, y, num_bins=15, mode="marginal")
    got = calibr.ece(p, y, 15, type="classwise", binning="equal-mass", **_classes(k))
    return got, want, None


def _row_numpy_histogram(p, y, k):
    if k > 1:
        return None
    B = 10
    counts = calibr.calibration_table(p, y, B, right=False)
    hist = np.histogram(p, bins=B, range=(0, 1))[0]
    assert counts["n"].tolist() == hist[hist > 0].tolist()
    return calibr.ece(p, y, B, right=False), histogram_ece(p, y, B), None


#: The rows of docs/conventions.md (ids) and their checks; "r" is checked against R
#: by tests/test_r_static.py and tests/test_binned.py, "netcal" is not checked.
CONVENTIONS = {
    "tm-binary": _row_tm_binary,
    "tm-multiclass": _row_tm_multiclass,
    "relplot": _row_relplot,
    "sklearn-uniform": _row_sklearn_uniform,
    "sklearn-quantile": _row_sklearn_quantile,
    "uc-ece": _row_uc_ece,
    "uc-ece-em": _row_uc_ece_em,
    "uc-ece-em-marginal": _row_uc_ece_em_marginal,
    "numpy-histogram": _row_numpy_histogram,
}


def test_the_conventions_table_lists_the_checked_rows():
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "conventions.md").read_text()
    ids = [line.split("|")[1].strip().strip("`") for line in text.splitlines()
           if line.startswith("| `")]
    assert ids == ["r", *CONVENTIONS, "netcal"]


@pytest.mark.parametrize("row", list(CONVENTIONS))
@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("n", [1, 7, 100, 10_000])
@pytest.mark.parametrize("kind", ["random", "ties", "grid"])
def test_conventions_table(row, k, n, kind):
    p, y = sample(n, k, seed=n + 7 * k, ties=kind == "ties", grid=kind == "grid")
    if kind == "grid" and k == 1:
        p[0] = 1.0  # the top-label confidence 1.0: relplot's and torchmetrics' own bin
    out = CONVENTIONS[row](p, y, k)
    if out is None:  # the setting does not apply (e.g. binary only)
        return
    got, want, atol = out
    got, want = np.atleast_1d(np.asarray(got, float)), np.atleast_1d(np.asarray(want, float))
    assert got.shape == want.shape
    if atol is None:
        for a, b in zip(got, want, strict=True):
            assert close(a, b, n), (row, a, b)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)


# --------------------------------------------------------------------------
# the compiled per-bin sums (calibr._kernels.bin_sums) against numpy's two steps


def _awkward_values(edges: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """Random values, every break and its neighbouring doubles, 0, -0.0 and 1."""
    inner = np.concatenate([edges, np.nextafter(edges, -1.0), np.nextafter(edges, 2.0)])
    out = np.concatenate([rng.random(n), np.clip(inner, 0.0, 1.0), [0.0, -0.0, 1.0]])
    return rng.permutation(out)


@pytest.mark.parametrize("right", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kind", ["equal-width", "equal-mass", "crowded", "explicit", "one"])
def test_compiled_bin_sums_are_numpys_bit_for_bit(kind, right, weighted):
    """The bin of each value is numpy.searchsorted's, clipped, and each bin's sums
    are numpy.bincount's (row order), bit for bit: the lookup table, a cell with
    many breaks, repeated breaks (zero-width equal-mass bins) and values on the
    breaks change nothing."""
    rng = np.random.default_rng(40)
    edges = {"equal-width": binned.breaks(37),
             "equal-mass": _binning.breaks(np.round(rng.random(500) ** 4, 3), 40,
                                           "equal-mass", right),
             "crowded": np.concatenate(([0.0], 0.3 + np.arange(1, 300) * 1e-9,
                                        [0.5, 1.0])),
             "explicit": np.array([0.0, 0.1, 0.11, 0.7, 1.0]),
             "one": np.array([0.0, 1.0])}[kind]
    x = _awkward_values(edges, rng, 3000)
    c = (rng.random(x.shape[0]) < 0.4).astype(np.int64)
    w = rng.random(x.shape[0]) * 3 if weighted else None
    got = _binning.compiled_bin_sums(x, c, w, edges, right)
    want = _binning.bin_sums(_binning.bin_index(x, edges, right), x, c, w,
                             edges.shape[0] - 1)
    for a, b in zip(got, want, strict=True):
        assert a.tobytes() == b.tobytes()
