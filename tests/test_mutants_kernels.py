"""Tests that fail on mutants ``scripts/mutate.py`` let through in the public
layer of the kernel metrics (``calibr/_kernel_metrics.py``: ``skce``, ``mmce``,
``median_bandwidth``) and in ``val_prob`` (``calibr/_valprob.py``).

Each test names in its docstring the mutants it kills (module, line at the
commit the mutants were made from, and the change). The expected values are
independent of the code under test: worked by hand, exact, or recomputed here
from the published definitions.
"""

from __future__ import annotations

import contextlib
import math
import signal
import warnings

import numpy as np
import pandas as pd
import pytest
from oracles import valprob_oracle as oracle
from tolerances import MLE_RTOL

import calibr
from calibr import InputError
from calibr import _kernel_metrics as km
from calibr import _valprob as vp

# --------------------------------------------------------------------------
# calibr/_kernel_metrics.py


def test_mmce_refuses_missing_values_by_default():
    """_kernel_metrics 328: mmce()'s default ``na_rm=False`` changed to True (a
    NaN would be dropped silently). Dropped on request: n = 2, e = (-0.2, 0.3),
    MMCE^2 = (e1^2 + e2^2 + 2 e1 e2 exp(-0.5 / 0.2)) / 4."""
    p, y = [0.2, math.nan, 0.7], [0, 1, 1]
    with pytest.raises(InputError, match=r"^`p` must not contain missing values"):
        calibr.mmce(p, y)
    want = math.sqrt((0.04 + 0.09 - 0.12 * math.exp(-2.5)) / 4)
    assert calibr.mmce(p, y, na_rm=True) == pytest.approx(want, rel=1e-14)


def test_hits_are_uint8_for_every_label_dtype():
    """_kernel_metrics 81 (``y.dtype == np.uint8`` -> ``!=``) and 83
    (``== np.bool_`` -> ``!=``): _as_hits() hands the compiled kernels exact 0/1
    labels as uint8 whatever the dtype of the validated labels (one compiled
    specialisation for all of them); the mutants pass int64 or float64 labels
    through unchanged (a new compilation per dtype) or reinterpret bytes."""
    for y in (np.array([0, 1, 1, 0], dtype=np.int64), np.array([0.0, 1.0, 1.0, 0.0]),
              np.array([False, True, True, False]), np.array([0, 1, 1, 0], dtype=np.uint8)):
        hits = km._as_hits(y)
        assert hits.dtype == np.uint8, y.dtype
        assert hits.tolist() == [0, 1, 1, 0], y.dtype


def test_a_negative_zero_biased_estimate_is_returned_as_zero():
    """_kernel_metrics 76 (``value > 0.0`` -> ``>=``): the clamp returns +0.0 for
    a signed zero, as for every rounding-level negative ("0.0, not -0.0")."""
    for value in (-0.0, -1e-18, 0.0):
        got = km._clamp_biased(value)
        assert got == 0.0 and math.copysign(1.0, got) == 1.0, value
    assert km._clamp_biased(0.25) == 0.25


def test_median_bandwidth_of_a_frame_with_default_column_names():
    """_kernel_metrics 443 (``columns[0]`` -> ``columns[1]``): without ``y``, a
    DataFrame's stand-in labels name its first column. For pandas' default
    names 0..K-1 that is the label 0 (0-based, matched by name); the label 1
    alone would be refused as ambiguous (R's code 1 or the column named 1).
    By hand: rows (0.5, 0.5), (0.2, 0.8), (0.5, 0.5) have the positive distances
    |(0.3, -0.3)| twice (the tied pair is not counted), median sqrt(0.18)."""
    prob = np.array([[0.5, 0.5], [0.2, 0.8], [0.5, 0.5]])
    want = math.sqrt((0.5 - 0.2) ** 2 + (0.5 - 0.8) ** 2)
    assert calibr.median_bandwidth(pd.DataFrame(prob)) == want
    assert calibr.median_bandwidth(pd.DataFrame(prob), type="confidence") == 0.8 - 0.5
    np.testing.assert_array_equal(calibr.median_bandwidth(pd.DataFrame(prob), type="classwise"),
                                  [0.5 - 0.2, 0.8 - 0.5])


# --------------------------------------------------------------------------
# calibr/_valprob.py


@contextlib.contextmanager
def _deadline(seconds: float):
    """Fail (instead of hanging) if the block runs longer than ``seconds``: a
    mutant of the Newton line search can loop for ever."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_chi2_tail_refuses_other_degrees_of_freedom():
    """_valprob 288 (``raise ValueError(df)`` -> ``pass``): only 1 and 2 degrees
    of freedom have a tail here; another is refused, not answered with None."""
    with pytest.raises(ValueError, match=r"^3$"):
        vp._chi2_sf(1.5, 3)
    assert vp._chi2_sf(math.nan, 3) != vp._chi2_sf(math.nan, 3)  # NaN before the check
    assert vp._chi2_sf(-1.0, 3) == 1.0  # and a non-positive x


def test_a_matrix_past_the_shape_check_is_still_refused(monkeypatch):
    """_valprob 193 (``raise InputError`` -> ``pass``): should a matrix get past
    _refuse_matrix, the check of prepare()'s result refuses it."""
    monkeypatch.setattr(vp, "_refuse_matrix", lambda p: None)
    with pytest.raises(InputError, match=r"^`p` must be a vector of probabilities P\(y = 1\) "
                                         r"for val_prob\.$"):
        vp.val_prob(np.array([[0.2, 0.8], [0.6, 0.4]]), [1, 2])


def test_type_7_quantile_does_not_interpolate_between_equal_values():
    """_valprob 362 (``index > lo and x_hi != qs`` -> ``or``): R's quantile()
    interpolates only between different values; (1 - h) q + h q is not q in
    float64 (q = 0.45, h = 0.7000000000000002 gives 0.45000000000000007)."""
    assert (1.0 - 0.7000000000000002) * 0.45 + 0.7000000000000002 * 0.45 != 0.45
    assert vp._quantile7(np.array([0.45, 0.1, 0.45, 0.2]), 0.9) == 0.45  # index 3.7
    assert vp._quantile7(np.full(4, 0.45), 0.9) == 0.45


#: Calibrated by construction: at p = 1/4 one event in four, at 3/4 three in
#: four, at 1/2 one in two. logit(1/4) = -logit(3/4) in float64 and logit(1/2)
#: = 0, so mean(logit p) is exactly 0 and equals the logit of the two rows at 1/2.
CALIBRATED_P = [0.25, 0.75] * 4 + [0.5, 0.5]
CALIBRATED_Y = [1, 1, 0, 1, 0, 1, 0, 0, 1, 0]


def test_recalibration_of_calibrated_predictions_by_hand():
    """_valprob 421 (``beta[1] * xc`` -> ``/`` in the starting deviance: 0 / 0
    where a logit equals the mean), 446 (``or`` -> ``and`` in the stopping
    rule: the fit of these data then fails), 394-396 (the separation test:
    ``.max`` and ``.min`` swapped flag these data, whose lowest p is an event
    and whose highest a non-event, as separated). The group rates equal p, so
    the maximum-likelihood recalibration is Intercept 0, Slope 1, its deviance
    that of p itself: U:Chi-sq = 0, U = -2/n, Q = D + 2/n; Spiegelhalter's
    numerator is 0 in every group. C: 25 pairs, 15 concordant, 7 tied:
    C = 18.5/25, Dxy = (15 - 3)/25. Brier = (0.75 + 0.75 + 0.5)/10."""
    p = np.array(CALIBRATED_P)
    x = np.log(p / (1 - p))
    assert float(np.mean(x)) == 0.0 and x[-1] == 0.0  # the premise of the 421 mutant
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vp.val_prob(CALIBRATED_P, CALIBRATED_Y, method="exact")
    assert got["Intercept"] == pytest.approx(0.0, abs=1e-12)
    assert got["Slope"] == pytest.approx(1.0, rel=1e-12)
    assert got["U:Chi-sq"] == pytest.approx(0.0, abs=1e-12)
    assert got["U"] == pytest.approx(-0.2, rel=1e-12)
    assert got["Q"] == pytest.approx(got["D"] + 0.2, rel=1e-12)
    assert got["U:p"] == pytest.approx(1.0, abs=1e-12)
    assert got["S:z"] == pytest.approx(0.0, abs=1e-15) and got["S:p"] == pytest.approx(1.0)
    assert got["C (ROC)"] == 0.74 and got["Dxy"] == pytest.approx(0.48, abs=1e-15)
    assert got["Brier"] == pytest.approx(0.2, rel=1e-15)


@pytest.mark.parametrize("reverse", [False, True], ids=["events-above", "events-below"])
def test_quasi_complete_separation_is_separation(reverse):
    """_valprob 396 (``<=`` -> ``<`` in either half of the separation test): p
    separates the outcomes with a tie at the boundary (0.5 is both a y = 0 and
    a y = 1), in either direction; the fit has no maximum-likelihood estimate
    (Newton would stop at a huge slope)."""
    p = [0.1, 0.2, 0.5, 0.5, 0.7, 0.8]
    y = [1, 1, 1, 0, 0, 0] if reverse else [0, 0, 0, 1, 1, 1]
    with pytest.warns(RuntimeWarning, match=r"`p` separates the outcomes"):
        got = vp.val_prob(p, y, method="exact")
    for name in ("U", "U:Chi-sq", "U:p", "Q", "Intercept", "Slope"):
        assert math.isnan(got[name]), name
    # the statistics that need no fit: of the 9 pairs, the tie at 0.5 counts 1/2
    # and the other 8 are concordant (discordant when reversed)
    assert got["C (ROC)"] == pytest.approx(1 / 18 if reverse else 17 / 18, rel=1e-15)


def test_recalibration_halves_a_step_that_overshoots():
    """_valprob 441 (``t *= 0.5`` -> ``t *= 1.0``, which loops for ever): from
    the null fit, the first Newton step raises the deviance (14 events at
    0.2..0.8, a non-event at 0.9999, an event at 1 - 1e-8), so it must be
    shortened; the fit still reaches the maximum, checked in 40-digit decimal
    arithmetic."""
    p = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] * 2 + [1 - 1e-4, 1 - 1e-8])
    y = np.array([1.0] * 14 + [0.0, 1.0])
    with _deadline(20.0):
        got = vp.val_prob(p, y, method="exact")
    a, b = oracle.logistic_mle_decimal(p, y, (got["Intercept"], got["Slope"]))
    assert got["Intercept"] == pytest.approx(a, rel=MLE_RTOL)
    assert got["Slope"] == pytest.approx(b, rel=MLE_RTOL)

