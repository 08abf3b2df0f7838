"""calibr.calibration_error(): the plug-in Lp and debiased L2 calibration errors of
Kumar, Liang & Ma (2019), against the ``uncertainty-calibration`` package itself
(``calibration.lower_bound_scaling_ce`` / ``get_calibration_error``), against
calibr's own ece()/mce() for the l1 and max norms, and hand-worked values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require

import calibr
from calibr import InputError, InputTypeError

RTOL = 1e-12


def _peer():
    return require("calibration.utils")


def _data(n, k=None, seed=0, decimals=None):
    gen = np.random.default_rng([seed, n, k or 0])
    if k is None:
        p = gen.random(n)
        p = np.round(p, decimals) if decimals else p
        return p, (gen.random(n) < p**2).astype(np.int64)
    p = gen.dirichlet(np.full(k, 0.6), n)
    sharp = p**2 / np.sum(p**2, axis=1, keepdims=True)  # labels from sharper probabilities
    y = np.minimum((np.cumsum(sharp, axis=1) <= gen.random(n)[:, None]).sum(axis=1), k - 1)
    return p, y


def _close(a, b, n):
    # relative, with an absolute floor for errors that nearly cancel
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=n * 2.0**-52)


@pytest.mark.parametrize("n", [2, 7, 50, 1000, 100_000])
@pytest.mark.parametrize(("power", "debias"), [(1, False), (2, False), (2, True)])
@pytest.mark.parametrize("bins", [1, 3, 15])
def test_binary_equal_mass_matches_uncertainty_calibration(n, power, debias, bins):
    u = _peer()
    for decimals in (None, 2):  # ties on the edges too
        p, y = _data(n, decimals=decimals)
        want = u.lower_bound_scaling_ce(p, y, p=power, debias=debias, num_bins=bins,
                                        binning_scheme=u.get_equal_bins, mode="marginal")
        got = calibr.calibration_error(p, y, bins=bins, binning="equal-mass",
                                       norm=f"l{power}", debias=debias)
        assert _close(got, want, n), (got, want)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("mode", ["marginal", "top-label"])
@pytest.mark.parametrize(("power", "debias"), [(1, False), (2, False), (2, True)])
def test_multiclass_matches_uncertainty_calibration(k, mode, power, debias):
    u = _peer()
    p, y = _data(3000, k)
    type_ = "classwise" if mode == "marginal" else "confidence"
    want = u.lower_bound_scaling_ce(p, y, p=power, debias=debias, num_bins=15,
                                    binning_scheme=u.get_equal_bins, mode=mode)
    got = calibr.calibration_error(p, y, bins=15, binning="equal-mass", type=type_,
                                   norm=f"l{power}", debias=debias, classes=range(k))
    assert _close(got, want, 3000), (got, want)
    if power == 2 and debias:  # the package's entry point, on continuous predictions
        assert _close(got, u.get_calibration_error(p, y, p=2, debias=True, mode=mode), 3000)


def test_equal_width_breaks_match_a_custom_binning_scheme():
    """The package bins by its upper edges with bisect-left (right-closed), so
    explicit breaks give the same bins in both."""
    u = _peer()
    p, y = _data(2000, decimals=1)  # values on the edges k/10
    breaks = np.linspace(0, 1, 11)
    for power, debias in [(1, False), (2, False), (2, True)]:
        want = u.lower_bound_scaling_ce(p, y, p=power, debias=debias, num_bins=10,
                                        binning_scheme=lambda probs, num_bins: list(breaks[1:]),
                                        mode="marginal")
        got = calibr.calibration_error(p, y, bins=breaks, norm=f"l{power}", debias=debias)
        assert _close(got, want, 2000), (power, debias, got, want)


@pytest.mark.parametrize("type_", ["classwise", "confidence"])
@pytest.mark.parametrize("options", [{}, {"bins": 4, "binning": "equal-mass"},
                                     {"bins": 7, "right": False}])
def test_l1_is_the_ece_and_max_is_the_mce(type_, options):
    for p, y, kw in [(*_data(500), {}), (*_data(400, 4), {"classes": range(4)})]:
        ece = calibr.ece(p, y, type=type_, **kw, **options)
        assert math.isclose(calibr.calibration_error(p, y, type=type_, norm="l1", **kw,
                                                     **options), ece, rel_tol=1e-13)
        assert calibr.calibration_error(p, y, type=type_, norm="max", **kw,
                                        **options) == calibr.mce(p, y, type=type_, **kw,
                                                                 **options)


def test_hand_worked_values():
    # bins of 2: bin 1 holds 0.1 (y 0), 0.2 (y 1), 0.3 (y 1): mean p 0.2, mean y 2/3;
    # bin 2 holds 0.9 (y 1): mean p 0.9, mean y 1
    p, y = [0.1, 0.2, 0.3, 0.9], [0, 1, 1, 1]
    g1, g2 = 2 / 3 - 0.2, 0.1
    l2 = math.sqrt(0.75 * g1**2 + 0.25 * g2**2)
    assert calibr.calibration_error(p, y, bins=2) == pytest.approx(l2, rel=1e-14)
    # debiased: bin 1 loses (2/3)(1/3)/2; bin 2 (one row) counts 0
    deb = math.sqrt(0.75 * (g1**2 - (2 / 3) * (1 / 3) / 2))
    assert calibr.calibration_error(p, y, bins=2, debias=True) == pytest.approx(deb, rel=1e-14)
    # a debiased square below 0 is 0: calibrated-looking bins
    assert calibr.calibration_error([0.5, 0.5], [0, 1], bins=1, debias=True) == 0.0


def test_bad_arguments():
    p, y = _data(50)
    with pytest.raises(InputError, match=r'^`debias = True` is defined for `norm = "l2"`'):
        calibr.calibration_error(p, y, norm="l1", debias=True)
    with pytest.raises(InputError, match="`norm`"):
        calibr.calibration_error(p, y, norm="l3")
    with pytest.raises(InputError, match="`debias`"):
        calibr.calibration_error(p, y, debias="yes")
    with pytest.raises(InputError, match="`bins`"):
        calibr.calibration_error(p, y, bins=0)
    with pytest.raises(InputError, match="`binning`"):
        calibr.calibration_error(p, y, binning="quantile")
    with pytest.raises(InputTypeError):
        calibr.calibration_error(p, set(y))
    before = p.copy()
    with pytest.raises(InputError, match="`p`"):
        calibr.calibration_error(p + 1, y)
    assert np.array_equal(p, before)


def test_calibration_error_refuses_missing_values_unless_na_rm():
    """calibration_error() raises on a NaN unless ``na_rm=True``.

    Dropped on request: 0.2 (y 0) and 0.7 (y 1) in 2 bins, gaps 0.2 and 0.3: the l2
    error sqrt((0.04 + 0.09) / 2).
    """
    p, y = [0.2, math.nan, 0.7], [0, 1, 1]
    with pytest.raises(InputError, match="missing"):
        calibr.calibration_error(p, y, bins=2)
    assert calibr.calibration_error(p, y, bins=2, na_rm=True) == pytest.approx(
        math.sqrt(0.065), rel=1e-14)
