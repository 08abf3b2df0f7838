"""``val_prob()`` against the real R package rms (``rms::val.prob``), through rpy2.

The default, ``method="rms"``, must print rms's numbers: every statistic is
compared with rms 6.5 (Debian's ``r-cran-rms``) to 1e-9 on varied seeded data
(calibrated, over- and under-confident and shifted predictions, n from 5 to
100,000, heavy ties, grids of values on rms's bin edges, near and complete
separation, fits that run out of rms's iterations, probabilities close to 0
and 1 and beyond rms's clamp, and ranges so narrow that rms gives up), and
against the oracles of rms's Fortran (``tests/oracles/valprob_oracle.py``)
without R.

``method="exact"`` computes the definitions; where rms computes something
else, the tests show that the difference is exactly that, with the same
oracles:

* C and Dxy: rms up to 6.8 rounds ``p`` into bins of width 0.0002; calibr's
  exact value equals ``Hmisc::somers2`` and, where no two distinct ``p`` share
  a bin, rms's.
* Intercept and Slope: rms's Newton-Raphson stops early (-2LL changing by at
  most 0.025); calibr's equal ``glm()`` run to full convergence.
* D:p: NA in rms up to 6.8 (``lrm.fit`` suppresses it when given initial
  values); calibr's equals R's ``pchisq(D:Chi-sq, 1, lower.tail = FALSE)``.

Also the port of R's ``lowess()`` against R itself, hand-worked exact cases,
the degenerate branches (one distinct ``p``, separated outcomes, every ``p``
0.5) and every error message.

The R side needs ``r-cran-rms`` (``.ci/install``). Without R the R tests skip;
with ``CALIBR_REQUIRE_R=1`` they fail instead.
"""

from __future__ import annotations

import contextlib
import math
import re
import signal
import warnings
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from conftest import _restore_library_path, unavailable
from oracles import valprob_oracle as oracle
from tolerances import (
    EXACT_RTOL,
    LOWESS_ATOL,
    LOWESS_RTOL,
    MLE_RTOL,
    PVALUE_ATOL,
    RMS_FIT_RTOL,
    RMS_ORACLE_RTOL,
    VALPROB_ATOL,
    VALPROB_RTOL,
)

from calibr import InputError, InputTypeError
from calibr._metrics import valprob as _valprob
from calibr._metrics.lowess import lowess
from calibr._metrics.valprob import (
    VAL_PROB_NAMES,
    _chi2_sf,
    _concordance,
    _quantile7,
    _separated,
    spiegelhalter,
    val_prob,
)

#: The statistics compared with VALPROB_RTOL in every dataset.
_SAME_FORMULA = ("R2", "D", "D:Chi-sq", "U", "U:Chi-sq", "Q", "Brier",
                 "Emax", "E90", "Eavg", "S:z", "S:p")
_PVALUES = ("U:p", "S:p")


# --------------------------------------------------------------------------
# R through rpy2

_R_CODE = r"""
suppressPackageStartupMessages(library(rms))
calibr_vp <- function(p, y) val.prob(p, y, pl = FALSE)
calibr_glm <- function(p, y) {
  lg <- qlogis(p)
  f <- suppressWarnings(glm(y ~ lg, family = binomial,
                            control = glm.control(epsilon = 1e-14, maxit = 100)))
  unname(c(coef(f), deviance(f)))
}
calibr_somers <- function(p, y) unname(Hmisc::somers2(p, y)[c("C", "Dxy")])
calibr_dev01 <- function(p, y) -2 * sum(dbinom(y, 1, p, log = TRUE))
calibr_pchisq1 <- function(x) pchisq(x, 1, lower.tail = FALSE)
calibr_lowess <- function(x, y, f, iter, delta) {
  if (is.null(delta)) lowess(x, y, f = f, iter = iter)$y
  else lowess(x, y, f = f, iter = iter, delta = delta)$y
}
calibr_rms_version <- function() as.character(packageVersion("rms"))
"""


class RmsSession:
    """The R functions above, called with float64 vectors; results as numpy."""

    def __init__(self) -> None:
        import rpy2.robjects as ro

        self._ro = ro
        ro.r(_R_CODE)
        self.version = str(ro.r["calibr_rms_version"]()[0])
        major, minor = (int(v) for v in self.version.split(".")[:2])
        #: rms up to 6.8 (Fortran lrm.fit): binned C and Dxy, D:p = NA
        self.legacy = (major, minor) < (6, 9)

    def _vec(self, x) -> object:
        return self._ro.FloatVector(np.asarray(x, dtype=np.float64).tolist())

    def _call(self, name: str, *args) -> np.ndarray:
        return np.asarray(self._ro.r[name](*args), dtype=np.float64)

    def val_prob(self, p, y) -> pd.Series:
        out = self._ro.r["calibr_vp"](self._vec(p), self._vec(y))
        return pd.Series(np.asarray(out, dtype=np.float64), index=list(out.names))

    def val_prob_or_error(self, p, y) -> pd.Series | str:
        """val.prob's result, or the message of the error it stops with."""
        from rpy2.rinterface_lib import callbacks
        from rpy2.rinterface_lib.embedded import RRuntimeError

        quiet = callbacks.consolewrite_warnerror, callbacks.consolewrite_print
        callbacks.consolewrite_warnerror = callbacks.consolewrite_print = lambda _: None
        try:
            return self.val_prob(p, y)
        except RRuntimeError as exc:
            return str(exc)
        finally:
            callbacks.consolewrite_warnerror, callbacks.consolewrite_print = quiet

    def val_prob_raw(self, p, y) -> tuple[np.ndarray, list]:
        """The vector and its names as R returns them (names may be NA)."""
        out = self._ro.r["calibr_vp"](self._vec(p), self._vec(y))
        names = [None if n is self._ro.NA_Character else str(n) for n in out.names]
        return np.asarray(out, dtype=np.float64), names

    def glm(self, p, y) -> np.ndarray:
        return self._call("calibr_glm", self._vec(p), self._vec(y))

    def somers2(self, p, y) -> np.ndarray:
        return self._call("calibr_somers", self._vec(p), self._vec(y))

    def dev01(self, p, y) -> float:
        return float(self._call("calibr_dev01", self._vec(p), self._vec(y))[0])

    def pchisq1(self, x: float) -> float:
        return float(self._call("calibr_pchisq1", float(x))[0])

    def lowess(self, x, y, f: float, iter: int, delta: float | None) -> np.ndarray:
        d = self._ro.NULL if delta is None else float(delta)
        return self._call("calibr_lowess", self._vec(x), self._vec(y), float(f), int(iter), d)


@pytest.fixture(scope="session")
def rms() -> RmsSession:
    """R with rms loaded (a skip without it; a failure under CALIBR_REQUIRE_R)."""
    try:
        session = RmsSession()
    except Exception as exc:  # noqa: BLE001 - any failure to reach R/rms is reported alike
        unavailable(f"R package rms not available through rpy2: {type(exc).__name__}: {exc}")
        raise  # pragma: no cover - unavailable() raised
    finally:
        _restore_library_path()
    return session


# --------------------------------------------------------------------------
# datasets


def _expit(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _overlap(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Make the smallest p an event and the largest a non-event, so the
    outcomes cannot be separated (the recalibration MLE exists)."""
    y = y.copy()
    y[np.argmin(p)] = 1.0
    y[np.argmax(p)] = 0.0
    return y


def _dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([20_240_611, sum(map(ord, name))])
    if name == "calibrated":
        p = rng.beta(2.0, 3.0, 500)
        y = rng.random(500) < p
    elif name == "overconfident":
        z = rng.normal(0.0, 1.5, 800)
        p, y = _expit(2.0 * z), rng.random(800) < _expit(z)
    elif name == "underconfident":
        z = rng.normal(0.0, 1.5, 800)
        p, y = _expit(0.5 * z), rng.random(800) < _expit(z)
    elif name == "shifted":
        z = rng.normal(0.0, 1.0, 600)
        p, y = _expit(z), rng.random(600) < _expit(z - 1.0)
    elif name.startswith("small-"):
        n = int(name[6:])
        p = rng.uniform(0.05, 0.95, n)
        y = rng.random(n) < p
    elif name == "n-10000":
        z = rng.normal(0.0, 1.0, 10_000)
        p, y = _expit(z), rng.random(10_000) < _expit(0.2 + 1.2 * z)
    elif name == "heavy-ties":
        p = rng.choice([0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9], 1000)
        y = rng.random(1000) < p
    elif name == "grid-0.001":
        p = np.round(rng.uniform(0.001, 0.999, 3000), 3)
        y = rng.random(3000) < p
    elif name == "duplicated-rows":
        p0 = rng.uniform(0.1, 0.9, 40)
        y0 = rng.random(40) < p0
        p, y = np.repeat(p0, 5), np.repeat(y0, 5)
    elif name == "two-values":
        p = rng.choice([0.3, 0.6], 200)
        y = rng.random(200) < p
    elif name == "near-separation":
        z = rng.normal(0.0, 1.0, 200)
        p, y = _expit(3.0 * z), rng.random(200) < _expit(8.0 * z)
    elif name == "near-0-and-1":
        z = rng.normal(0.0, 6.0, 500)
        p, y = _expit(z), rng.random(500) < _expit(0.7 * z)
    else:  # pragma: no cover - a typo in a parametrisation
        raise KeyError(name)
    y = np.asarray(y, dtype=np.float64)
    return np.asarray(p, dtype=np.float64), _overlap(p, y)


DATASETS = (
    "calibrated", "overconfident", "underconfident", "shifted", "small-10", "small-15",
    "small-20", "n-10000", "heavy-ties", "grid-0.001", "duplicated-rows", "two-values",
    "near-separation", "near-0-and-1",
)
#: The rms Fortran oracle is a scalar Python loop: n = 10,000 would take seconds.
ORACLE_DATASETS = tuple(d for d in DATASETS if d != "n-10000")


def _bin_safe(p: np.ndarray) -> bool:
    """Are all distinct p at least one rms bin (0.0002) apart, so that rms's
    binned C equals the exact C?"""
    u = np.unique(p)
    return bool(u.size < 2 or np.min(np.diff(u)) > 0.00021)


def _assert_close(ours: float, ref: float, name: str, rtol: float, atol: float) -> None:
    assert math.isclose(ours, ref, rel_tol=rtol, abs_tol=atol), (
        f"{name}: calibr {ours!r}, R {ref!r} (relative difference "
        f"{abs(ours - ref) / max(abs(ref), 1e-300):.2e})"
    )


# --------------------------------------------------------------------------
# parity with rms::val.prob


_PVALUE_NAMES = ("D:p", "U:p", "S:p")


def _require_fortran_rms(rms) -> None:
    if not rms.legacy:  # pragma: no cover - rms >= 6.9 is not in Debian 12
        pytest.fail(f"method='rms' reproduces rms 5.1-2 to 6.8-2 (Fortran lrm.fit); R has "
                    f"rms {rms.version}")


def _assert_matches_rms(ours: pd.Series, ref: pd.Series, rms) -> None:
    """Every statistic of rms::val.prob to VALPROB_RTOL; D:p, NA in rms <= 6.8,
    against R's chi-square tail at rms's D:Chi-sq."""
    assert list(ref.index) == list(VAL_PROB_NAMES)
    for stat in VAL_PROB_NAMES:
        atol = PVALUE_ATOL if stat in _PVALUE_NAMES else VALPROB_ATOL
        if stat == "D:p":
            assert math.isnan(ref[stat])
            _assert_close(ours[stat], rms.pchisq1(ref["D:Chi-sq"]), stat, VALPROB_RTOL, 0.0)
        else:
            _assert_close(ours[stat], ref[stat], stat, VALPROB_RTOL, atol)


@pytest.mark.r
@pytest.mark.parametrize("name", DATASETS)
def test_every_statistic_matches_rms_val_prob(rms, name):
    """The default, method="rms": rms's binned C and Dxy, its early-stopped
    Intercept and Slope, and everything else, to 1e-9."""
    _require_fortran_rms(rms)
    p, y = _dataset(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these datasets is degenerate
        ours = val_prob(p, y)
    pd.testing.assert_series_equal(ours, val_prob(p, y, method="rms"))
    _assert_matches_rms(ours, rms.val_prob(p, y), rms)


def _adversarial(i: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded data of 16 kinds (``i % 16``), n from 5 to 10,000: what rms's bins,
    clamp and stopping rule are sensitive to."""
    rng = np.random.default_rng([2_025, i])
    kind = i % 16
    n = int(rng.choice([5, 10, 30, 100, 500, 2000, 10_000]))
    if kind == 0:  # uniform, calibrated
        p = rng.uniform(0.01, 0.99, n)
        y = rng.random(n) < p
    elif kind == 1:  # overconfident
        z = rng.normal(0.0, 1.5, n)
        p, y = _expit(2.0 * z), rng.random(n) < _expit(z)
    elif kind == 2:  # heavy ties on round values
        p = rng.choice([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9], n)
        y = rng.random(n) < p
    elif kind in (3, 4):  # grids of 0.001 and 0.0001: on and between rms's bin edges
        p = np.round(rng.uniform(0.001, 0.999, n), kind)
        y = rng.random(n) < p
    elif kind == 5:  # many p near 0 and 1 (into rms's first and last bins)
        z = rng.normal(0.0, 6.0, n)
        p, y = _expit(z), rng.random(n) < _expit(0.7 * z)
    elif kind == 6:  # near separation
        z = rng.normal(0.0, 1.0, n)
        p, y = _expit(3.0 * z), rng.random(n) < _expit(8.0 * z)
    elif kind == 7:  # a narrow range of p (an ill-conditioned fit)
        p = rng.uniform(0.3, 0.3 + 10.0 ** rng.uniform(-3.5, -1.0), n)
        y = rng.random(n) < 0.3
    elif kind == 8:  # exactly the bin edges k / 5000
        p = rng.choice(np.arange(1, 5000) / 5000, n)
        y = rng.random(n) < p
    elif kind == 9:  # shifted and steeper
        z = rng.normal(0.0, 1.0, n)
        p, y = _expit(z), rng.random(n) < _expit(0.2 + 1.2 * z)
    elif kind == 10:  # complete separation, either direction
        p = np.sort(rng.uniform(0.01, 0.99, n))
        y = np.arange(n) >= rng.integers(1, n)
        y = ~y if rng.random() < 0.5 else y
    elif kind == 11:  # one overlapping pair: rms runs out of iterations
        p = np.sort(rng.uniform(0.01, 0.99, n))
        y = (np.arange(n) >= n // 2).astype(np.float64)
        y[n // 2 - 1], y[n // 2] = 1.0, 0.0
    elif kind == 12:  # beyond rms's clamp of the linear predictor at +-30
        z = rng.normal(0.0, 15.0, n)
        p, y = _expit(z), rng.random(n) < _expit(0.5 * z)
    elif kind == 13:  # p down to 1e-300
        p = 10.0 ** rng.uniform(-300.0, -1.0, n)
        y = rng.random(n) < 0.3
    elif kind == 14:  # p up to 1 - 1e-15
        p = 1.0 - 10.0 ** rng.uniform(-15.0, -1.0, n)
        y = rng.random(n) < 0.7
    else:  # quasi-complete separation: ties at the boundary
        p = np.sort(rng.choice([0.1, 0.2, 0.4, 0.6, 0.8], n))
        y = p > 0.4
        y[p == 0.4] = rng.random(np.count_nonzero(p == 0.4)) < 0.5
    p = np.clip(p, 1e-300, 1.0 - 2.0**-53)
    y = np.asarray(y, dtype=np.float64)
    if y.min() == y.max():
        y[0] = 1.0 - y[0]
    if np.all(p == p[0]):
        p[0] = 0.5 * p[0]
    return p, y


_RMS_SINGULAR = r"^val_prob: rms's lrm\.fit finds an information matrix singular"


@pytest.mark.r
@pytest.mark.parametrize("case", range(96))
def test_rms_method_matches_val_prob_on_random_and_adversarial_data(rms, case):
    """Every statistic to 1e-9, on 96 seeded datasets of 16 kinds. Where rms's
    val.prob stops with an error (a narrow range of p: lrm.fit finds an
    information matrix singular), calibr says so and gives rms's computation;
    where p separates the outcomes, rms's numbers with a warning."""
    _require_fortran_rms(rms)
    p, y = _adversarial(case)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ours = val_prob(p, y)
    messages = [str(w.message) for w in record]
    ref = rms.val_prob_or_error(p, y)
    singular = [m for m in messages if re.match(_RMS_SINGULAR, m)]
    if isinstance(ref, str):  # "apparently singular matrix", or val.prob's names() after
        # lrm.fit printed "singular information matrix" and returned no fit
        assert ("singular" in ref or "'names' attribute" in ref) and len(singular) == 1, (
            ref, messages)
        assert np.isfinite(ours.drop("D:p")).all()
        return
    assert not singular, messages
    assert any("separates the outcomes" in m for m in messages) == _separated(p, y), messages
    _assert_matches_rms(ours, ref, rms)


@pytest.mark.r
@pytest.mark.parametrize("kind", ["calibrated", "overconfident", "rounded"])
def test_rms_method_matches_val_prob_at_n_100000(rms, kind):
    """Large n: rms's sums are long sequential double sums (and R's sum() long
    double ones), whose rounding calibr repeats."""
    _require_fortran_rms(rms)
    rng = np.random.default_rng([100_000, len(kind)])
    z = rng.normal(0.0, 1.5, 100_000)
    p = _expit(2.0 * z if kind == "overconfident" else z)
    y = (rng.random(z.size) < _expit(z)).astype(np.float64)
    if kind == "rounded":
        p = np.clip(np.round(p, 3), 0.001, 0.999)
    _assert_matches_rms(val_prob(p, y), rms.val_prob(p, y), rms)


@pytest.mark.r
@pytest.mark.parametrize("name", DATASETS)
def test_exact_method_differs_from_rms_only_as_documented(rms, name):
    """method="exact": the same numbers as rms but for C and Dxy (rms's bins),
    Intercept and Slope (rms's stopping rule) and what depends on the fit."""
    p, y = _dataset(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = val_prob(p, y, method="exact")
    ref = rms.val_prob(p, y)
    for stat in _SAME_FORMULA:
        atol = PVALUE_ATOL if stat in _PVALUES else VALPROB_ATOL
        _assert_close(ours[stat], ref[stat], stat, VALPROB_RTOL, atol)
    _assert_close(ours["U:p"], ref["U:p"], "U:p", VALPROB_RTOL, PVALUE_ATOL)
    for stat in ("Intercept", "Slope"):
        _assert_close(ours[stat], ref[stat], stat, RMS_FIT_RTOL, 0.0)
    _assert_close(ours["D:p"], rms.pchisq1(ref["D:Chi-sq"]), "D:p", VALPROB_RTOL, 0.0)
    # C and Dxy: exact; rms <= 6.8 bins p, which matters only when two
    # distinct p share a bin
    if _bin_safe(p) or not rms.legacy:
        for stat in ("Dxy", "C (ROC)"):
            _assert_close(ours[stat], ref[stat], stat, VALPROB_RTOL, 0.0)


@pytest.mark.r
@pytest.mark.parametrize("name", DATASETS)
def test_c_and_dxy_are_exact_and_rms_bins_them(rms, name):
    p, y = _dataset(name)
    ours = val_prob(p, y, method="exact")
    c_ref, dxy_ref = rms.somers2(p, y)  # Hmisc: exact, from average ranks
    _assert_close(ours["C (ROC)"], c_ref, "C vs somers2", VALPROB_RTOL, 0.0)
    _assert_close(ours["Dxy"], dxy_ref, "Dxy vs somers2", VALPROB_RTOL, 0.0)
    if rms.legacy and name in ORACLE_DATASETS:
        ref = rms.val_prob(p, y)
        c_bins, dxy_bins = oracle.rms65_concordance(p, y)
        _assert_close(ref["C (ROC)"], c_bins, "rms C vs its bins", RMS_ORACLE_RTOL, 0.0)
        _assert_close(ref["Dxy"], dxy_bins, "rms Dxy vs its bins", RMS_ORACLE_RTOL, 0.0)
        rms_method = val_prob(p, y)
        assert (rms_method["C (ROC)"], rms_method["Dxy"]) == (c_bins, dxy_bins)


def test_bins_change_c_when_distinct_p_share_a_bin():
    """The check above is not vacuous: two p 1e-5 apart share an rms bin."""
    p = np.array([0.30000, 0.30001, 0.6, 0.2])
    y = np.array([0.0, 1.0, 1.0, 0.0])
    c_bins, _ = oracle.rms65_concordance(p, y)
    c_exact, _ = oracle.concordance_pairs(p, y)
    assert c_exact == Fraction(1) and c_bins == 0.875
    assert not _bin_safe(p)
    assert _concordance(p, y) == (1.0, 1.0)


@pytest.mark.r
@pytest.mark.parametrize("name", DATASETS)
def test_recalibration_is_the_maximum_likelihood_fit(rms, name):
    p, y = _dataset(name)
    ours = val_prob(p, y, method="exact")
    a, b, deviance = rms.glm(p, y)  # glm run to convergence (epsilon 1e-14)
    _assert_close(ours["Intercept"], a, "Intercept vs glm", VALPROB_RTOL, 0.0)
    _assert_close(ours["Slope"], b, "Slope vs glm", VALPROB_RTOL, 0.0)
    u_chisq = rms.dev01(p, y) - deviance
    _assert_close(ours["U:Chi-sq"], u_chisq, "U:Chi-sq vs glm", VALPROB_RTOL, VALPROB_ATOL)


def _one_overlapping_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted p whose lower half are non-events and upper half events, but for
    one swapped pair in the middle: the fit exists, with a steep slope."""
    p = np.sort(np.random.default_rng(seed).uniform(0.01, 0.99, n))
    y = (np.arange(n) >= n // 2).astype(np.float64)
    y[n // 2 - 1], y[n // 2] = 1.0, 0.0
    return p, y


@pytest.mark.parametrize(("n", "seed"), [(20, 4), (200, 0), (200, 5), (200, 7)])
def test_recalibration_reaches_the_maximum_near_separation(n, seed):
    """Steep fits (slopes 18 to 1,364): equal to the maximum computed in
    40-digit decimal arithmetic, not just to a deviance that is flat to rounding."""
    p, y = _one_overlapping_pair(n, seed)
    stats = val_prob(p, y, method="exact")
    a, b = oracle.logistic_mle_decimal(p, y, (stats["Intercept"], stats["Slope"]))
    assert math.isclose(stats["Intercept"], a, rel_tol=MLE_RTOL)
    assert math.isclose(stats["Slope"], b, rel_tol=MLE_RTOL)
    assert stats["Slope"] > 10.0


@pytest.mark.r
@pytest.mark.parametrize("name", ORACLE_DATASETS)
def test_rms_fit_is_newton_raphson_stopped_at_eps(rms, name):
    """rms's own Intercept and Slope are its lrm.fit iterations, reproduced by
    the oracle: the difference from calibr's is rms's stopping rule, nothing else."""
    if not rms.legacy:  # pragma: no cover - rms >= 6.9 fits in R code, with other rules
        pytest.fail("rms >= 6.9: replace the Fortran oracle of lrm.fit")
    p, y = _dataset(name)
    ref = rms.val_prob(p, y)
    a, b, _ = oracle.rms65_lrm_fit(p, y)
    _assert_close(ref["Intercept"], a, "rms Intercept vs oracle", RMS_ORACLE_RTOL, 0.0)
    _assert_close(ref["Slope"], b, "rms Slope vs oracle", RMS_ORACLE_RTOL, 0.0)


@pytest.mark.r
def test_rms_runs_out_of_iterations_near_separation(rms):
    """One overlapping pair among 200: the maximum is at Slope 157. rms's
    Newton-Raphson stops after its 11 iterations at 77 (lrm.fit's fail flag,
    which val.prob does not check), so its Intercept, Slope and U:Chi-sq are
    those of an unconverged fit, reproduced by the oracle and by method="rms"
    (with a warning); method="exact" equals glm()."""
    p, y = _one_overlapping_pair(200, 0)
    ours = val_prob(p, y, method="exact")
    a, b, deviance = rms.glm(p, y)
    _assert_close(ours["Intercept"], a, "Intercept vs glm", VALPROB_RTOL, 0.0)
    _assert_close(ours["Slope"], b, "Slope vs glm", VALPROB_RTOL, 0.0)
    _assert_close(ours["U:Chi-sq"], rms.dev01(p, y) - deviance, "U:Chi-sq vs glm",
                  VALPROB_RTOL, 0.0)
    ref = rms.val_prob(p, y)
    assert abs(ref["Slope"] - ours["Slope"]) > 1.0  # rms is far from the maximum
    if rms.legacy:
        a_rms, b_rms, dev_rms = oracle.rms65_lrm_fit(p, y)
        _assert_close(ref["Intercept"], a_rms, "rms Intercept vs oracle", RMS_ORACLE_RTOL, 0.0)
        _assert_close(ref["Slope"], b_rms, "rms Slope vs oracle", RMS_ORACLE_RTOL, 0.0)
        _assert_close(ref["U:Chi-sq"], rms.dev01(p, y) - dev_rms, "rms U:Chi-sq vs oracle",
                      RMS_ORACLE_RTOL, 0.0)
    for stat in ("Dxy", "C (ROC)", "R2", "D", "D:Chi-sq", "Brier", "Emax", "E90", "Eavg",
                 "S:z", "S:p"):
        _assert_close(ours[stat], ref[stat], stat, VALPROB_RTOL, VALPROB_ATOL)
    _require_fortran_rms(rms)
    with pytest.warns(RuntimeWarning, match="stopped after its 11 Newton-Raphson iterations"):
        _assert_matches_rms(val_prob(p, y), ref, rms)


def test_rms_method_warns_when_rms_runs_out_of_iterations():
    """The case above without R: method="rms" gives the oracle's unconverged
    fit, and says so."""
    p, y = _one_overlapping_pair(200, 0)
    with pytest.warns(RuntimeWarning) as record:
        ours = val_prob(p, y)
    assert [str(w.message) for w in record] == [
        "val_prob: rms's lrm.fit stopped after its 11 Newton-Raphson iterations without "
        "converging (its fail flag, which rms's val.prob ignores); Intercept, Slope, U, "
        "U:Chi-sq, U:p and Q are those of that estimate, as rms reports them. "
        'method="exact" gives the maximum-likelihood fit.'
    ]
    assert record[0].filename == __file__
    want = _rms_oracle_statistics(p, y)
    for stat in ("Intercept", "Slope", "U:Chi-sq"):
        _assert_close(ours[stat], want[stat], stat, VALPROB_RTOL, 0.0)
    assert abs(ours["Slope"] - val_prob(p, y, method="exact")["Slope"]) > 1.0


@pytest.mark.r
def test_probabilities_beyond_rms_clamp(rms):
    """rms's Fortran clamps the linear predictor to [-30, 30], so for p within
    1e-13 of 0 or 1 its D:Chi-sq (and D, R2) differ from the definition;
    method="exact" equals the exact deviance computed in R with dbinom(),
    method="rms" rms's."""
    p, y = _dataset("calibrated")
    p = np.concatenate([p, [1e-15, 2e-14, 1.0 - 1e-14, 1.0 - 2e-15, 1e-16]])
    y = np.concatenate([y, [1.0, 0.0, 0.0, 1.0, 0.0]])
    ours = val_prob(p, y, method="exact")
    ref = rms.val_prob(p, y)
    n1 = y.sum()
    n0 = y.size - n1
    null = -2.0 * (n1 * math.log(n1 / y.size) + n0 * math.log(n0 / y.size))
    exact = null - rms.dev01(p, y)
    _assert_close(ours["D:Chi-sq"], exact, "D:Chi-sq vs dbinom", VALPROB_RTOL, 0.0)
    assert abs(ref["D:Chi-sq"] - exact) > 1.0  # the clamp matters here ...
    if rms.legacy:  # ... and is all that differs
        clamped = null - oracle.rms65_fixed_deviance(p, y)
        _assert_close(ref["D:Chi-sq"], clamped, "rms D:Chi-sq vs oracle", RMS_ORACLE_RTOL, 0.0)
    a, b, deviance = rms.glm(p, y)
    _assert_close(ours["Intercept"], a, "Intercept vs glm", VALPROB_RTOL, 0.0)
    _assert_close(ours["Slope"], b, "Slope vs glm", VALPROB_RTOL, 0.0)
    for stat in ("Brier", "Emax", "E90", "Eavg", "S:z", "S:p"):
        _assert_close(ours[stat], ref[stat], stat, VALPROB_RTOL, VALPROB_ATOL)
    _require_fortran_rms(rms)
    _assert_matches_rms(val_prob(p, y), ref, rms)


def _narrow(width: float, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """10 p within ``width`` above 0.3: the two largest events (``seed`` None:
    the outcomes are separated), or random outcomes."""
    if seed is None:
        return np.linspace(0.3, 0.3 + width, 10), np.array([0.0] * 8 + [1.0, 1.0])
    rng = np.random.default_rng([7, seed])
    return 0.3 + width * rng.random(10), (rng.random(10) < 0.3).astype(np.float64)


def _two_clusters(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A narrow cluster of p and a few p near 0 or 1, whose weight in the
    information matrix depends on the estimate: at some estimates only the
    cluster counts, and the matrix is nearly singular there."""
    rng = np.random.default_rng([3, seed])
    na, nb = int(rng.integers(4, 30)), int(rng.integers(1, 6))
    width, centre = 10.0 ** rng.uniform(-6.0, -2.0), rng.uniform(0.05, 0.95)
    cluster = centre + width * rng.uniform(-1.0, 1.0, na)
    far = 10.0 ** rng.uniform(-15.0, -1.0, nb)
    far = np.where(rng.random(nb) < 0.5, far, 1.0 - far)
    p = np.concatenate([cluster, far])
    y = (rng.random(p.size) < p).astype(np.float64)
    if rng.random() < 0.5:
        y[na:] = far > 0.5
    return p, y


#: Data on which rms's lrm.fit finds an information matrix singular: (p, y,
#: the error that stops rms's val.prob, the number of calibr's warnings).
RMS_GIVES_UP = {
    # lrm.fit's R code calls solvet() on the fixed model's information matrix ...
    "fixed-model": (np.linspace(0.3, 0.3001, 10), np.array([0.0, 0, 0, 1, 0, 0, 0, 0, 0, 1]),
                    "apparently singular matrix", 1),
    "fixed-model-only": (*_two_clusters(0), "apparently singular matrix", 1),
    # ... and on the recalibration's at its estimate
    "final-estimate-only": (*_two_clusters(9013), "apparently singular matrix", 1),
    # LRMFIT's QR of a Newton step: lrm.fit prints "singular information
    # matrix", returns no fit, and val.prob's names() fails
    "newton-step": (*_narrow(2.8e-4, 0), "'names' attribute", 1),
    "newton-step-only": (*_two_clusters(5282), "'names' attribute", 2),  # + out of iterations
    "newton-step-separated": (*_narrow(1e-3), "'names' attribute", 2),  # + separated
}


@pytest.mark.r
@pytest.mark.parametrize("case", RMS_GIVES_UP)
def test_rms_val_prob_gives_up_on_a_singular_information_matrix(rms, case):
    """rms's lrm.fit calls an information matrix singular (R's QR tolerance
    1e-7) and rms's val.prob stops with an error (calibr warns, below)."""
    _require_fortran_rms(rms)
    p, y, error, _ = RMS_GIVES_UP[case]
    ref = rms.val_prob_or_error(p, y)
    assert isinstance(ref, str) and error in ref, ref


@pytest.mark.parametrize("case", RMS_GIVES_UP)
def test_where_rms_gives_up_calibr_warns_and_carries_on(case):
    """Where rms's val.prob stops with an error (above), method="rms" warns and
    carries on rms's computation without the check: C, Dxy and D:Chi-sq as the
    oracles of rms's Fortran compute them. (Its fit has no rms to compare with,
    and near-singular steps amplify rounding: 1e-9 from the oracle's here.)"""
    p, y, _, count = RMS_GIVES_UP[case]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ours = val_prob(p, y)
    messages = [str(w.message) for w in record]
    assert messages[0] == (
        "val_prob: rms's lrm.fit finds an information matrix singular (R's QR tolerance "
        "1e-7: the logits of `p` vary too little), where rms's val.prob stops with an "
        "error; these statistics carry on rms's computation without that check."
    )
    assert record[0].filename == __file__
    assert len(messages) == count, messages
    assert np.isfinite(ours).all()
    want = _rms_oracle_statistics(p, y)
    assert (ours["C (ROC)"], ours["Dxy"]) == (want["C (ROC)"], want["Dxy"])
    _assert_close(ours["D:Chi-sq"], want["D:Chi-sq"], "D:Chi-sq", VALPROB_RTOL, VALPROB_ATOL)


def test_equal_logits_give_no_recalibration():
    """Distinct p whose logits are equal doubles (1e-300 and the next double):
    the information matrix is singular in exact arithmetic too, so the
    recalibration is NaN (rms's val.prob stops in solvet())."""
    tiny = np.array([1e-300, np.nextafter(1e-300, 1.0)] * 2)
    with pytest.warns(RuntimeWarning) as record:
        stats = val_prob(tiny, [0, 1, 1, 0])
    assert [str(w.message) for w in record][1:] == [
        "val_prob: the information matrix of the recalibration is singular; Intercept, "
        "Slope, U, U:Chi-sq, U:p and Q are NaN."
    ]
    assert record[0].message.args[0].startswith("val_prob: rms's lrm.fit finds")
    assert np.isnan(stats[["Intercept", "Slope", "U", "U:Chi-sq", "U:p", "Q"]]).all()
    assert stats["C (ROC)"] == 0.5 and np.isfinite(stats["D:Chi-sq"])


def test_a_wider_range_gives_no_singular_matrix():
    """Ten times the range of the "fixed-model" case: no warning."""
    p, y, _, _ = RMS_GIVES_UP["fixed-model"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        val_prob(0.3 + 10.0 * (p - 0.3), y)


# --------------------------------------------------------------------------
# degenerate branches


@pytest.mark.r
@pytest.mark.parametrize(
    ("p", "y"),
    [
        ([0.3] * 5, [0, 1, 0, 0, 1]),
        ([0.8] * 12, [1] * 9 + [0] * 3),
        ([0.05] * 3, [0, 1, 0]),
    ],
    ids=["p-0.3", "p-0.8", "n-3"],
)
def test_one_distinct_p_follows_rms_branch(rms, p, y):
    """R's branch for a single distinct p. Its result has 19 values for 18
    names (rms writes one 0 too many), so R's values are read by position: the
    first 13 (Dxy ... Slope) by name, Eavg at 16, S:z and S:p at 18 and 19.
    calibr's Emax and E90 are |p - mean(y)| like Eavg, which is what the smooth
    gives: R's lowess of a constant x is mean(y)."""
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ours = val_prob(p, y)
    values, names = rms.val_prob_raw(p, y)
    assert len(values) == 19 and names[:18] == list(VAL_PROB_NAMES) and names[18] is None
    for i, stat in enumerate(VAL_PROB_NAMES[:13]):
        atol = PVALUE_ATOL if stat == "U:p" else VALPROB_ATOL
        _assert_close(ours[stat], values[i], stat, VALPROB_RTOL, atol)
    _assert_close(ours["Eavg"], values[15], "Eavg", VALPROB_RTOL, 0.0)
    _assert_close(ours["S:z"], values[17], "S:z", VALPROB_RTOL, VALPROB_ATOL)
    _assert_close(ours["S:p"], values[18], "S:p", VALPROB_RTOL, PVALUE_ATOL)
    smooth = rms.lowess(p, y, 2.0 / 3.0, 0, None)
    gap = float(np.max(np.abs(p - smooth)))
    for stat in ("Emax", "E90", "Eavg"):
        _assert_close(ours[stat], gap, stat, VALPROB_RTOL, VALPROB_ATOL)
    assert ours["D:Chi-sq"] == 0.0 and ours["D:p"] == 1.0 and ours["Slope"] == 0.0
    assert ours["D"] == -1.0 / p.size


SEPARATED = {
    "complete": ([0.1, 0.2, 0.3, 0.6, 0.7, 0.8], [0, 0, 0, 1, 1, 1]),
    "quasi-complete": ([0.1, 0.2, 0.5, 0.5, 0.7, 0.8], [0, 0, 0, 1, 1, 1]),
    "reversed": ([0.1, 0.2, 0.3, 0.6, 0.7, 0.8], [1, 1, 1, 0, 0, 0]),
    "n-3": ([0.1, 0.8, 0.5], [0, 1, 1]),
}
_SEPARATION_WARNING = (
    r"val_prob: `p` separates the outcomes .* no maximum-likelihood estimate; "
    r"Intercept, Slope, U, U:Chi-sq, U:p and Q are NaN\."
)
_SEPARATION_WARNING_RMS = (
    r"^val_prob: `p` separates the outcomes .* no maximum-likelihood estimate; "
    r"Intercept, Slope, U, U:Chi-sq, U:p and Q are those of the estimate where rms's "
    r"Newton-Raphson stopped, as rms reports them \(method=\"exact\" gives NaN\)\.$"
)


@pytest.mark.r
@pytest.mark.parametrize("case", SEPARATED)
def test_separated_outcomes_give_nan_fit_and_rms_values_otherwise(rms, case):
    """rms reports the unconverged values of its Newton iterations there, and
    so does method="rms" (with a warning); method="exact" reports NaN for the
    six statistics of the fit and R's value for the other twelve."""
    p, y = (np.asarray(v, dtype=np.float64) for v in SEPARATED[case])
    with pytest.warns(RuntimeWarning, match=_SEPARATION_WARNING):
        ours = val_prob(p, y, method="exact")
    ref = rms.val_prob(p, y)
    _require_fortran_rms(rms)
    with pytest.warns(RuntimeWarning, match=_SEPARATION_WARNING_RMS):
        _assert_matches_rms(val_prob(p, y), ref, rms)
    for stat in VAL_PROB_NAMES:
        if stat in ("U", "U:Chi-sq", "U:p", "Q", "Intercept", "Slope"):
            assert math.isnan(ours[stat]), stat
        elif stat == "D:p":
            _assert_close(ours[stat], rms.pchisq1(ref["D:Chi-sq"]), stat, VALPROB_RTOL, 0.0)
        else:
            atol = PVALUE_ATOL if stat == "S:p" else VALPROB_ATOL
            _assert_close(ours[stat], ref[stat], stat, VALPROB_RTOL, atol)


@pytest.mark.r
def test_every_p_one_half(rms):
    """Spiegelhalter's statistic has variance 0: NaN in R, NaN with a warning here."""
    p = np.full(6, 0.5)
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1.0])
    with pytest.warns(RuntimeWarning, match=r"every `p` is 0\.5, .* S:z and S:p are NaN\."):
        ours = val_prob(p, y)
    values, _ = rms.val_prob_raw(p, y)
    assert math.isnan(ours["S:z"]) and math.isnan(ours["S:p"])
    assert math.isnan(values[17]) and math.isnan(values[18])
    _assert_close(ours["Brier"], values[10], "Brier", VALPROB_RTOL, 0.0)


# --------------------------------------------------------------------------
# hand-worked cases (exact fractions)

#: p in quarters (exact in binary), with ties within and across outcomes
HAND_P = [0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 0.75]
HAND_Y = [0, 1, 0, 0, 1, 1, 0]


def test_hand_worked_brier_c_and_spiegelhalter():
    """Events at 1/4, 3/4, 3/4; non-events at 1/4, 1/2, 1/2, 3/4.
    Pairs: 12; concordant 6 (each 3/4 event over 1/4, 1/2, 1/2), tied 3, so
    C = (6 + 3/2)/12 = 5/8 and Dxy = (6 - 3)/12 = 1/4.
    Brier = (1 + 9 + 4 + 4 + 1 + 1 + 9)/16/7 = 29/112.
    Spiegelhalter: numerator -1/8 + 3/8 + 0 + 0 - 1/8 - 1/8 + 3/8 = 3/8,
    variance 5 * (1/4 * 3/16) = 15/64, z = (3/8)/(sqrt(15)/8) = sqrt(3/5)."""
    stats = val_prob(HAND_P, HAND_Y)
    assert oracle.concordance_pairs(HAND_P, HAND_Y) == (Fraction(5, 8), Fraction(1, 4))
    assert oracle.brier_exact(HAND_P, HAND_Y) == Fraction(29, 112)
    assert oracle.spiegelhalter_exact(HAND_P, HAND_Y) == (Fraction(3, 8), Fraction(15, 64))
    assert stats["C (ROC)"] == 0.625 and stats["Dxy"] == 0.25
    assert math.isclose(stats["Brier"], 29 / 112, rel_tol=EXACT_RTOL)
    assert math.isclose(stats["S:z"], math.sqrt(3 / 5), rel_tol=EXACT_RTOL)
    assert math.isclose(stats["S:p"], math.erfc(math.sqrt(3 / 10)), rel_tol=EXACT_RTOL)


def test_spiegelhalter_private_function():
    """The reusable ``spiegelhalter``: z and its two-sided p-value, and R's
    IEEE results when the variance is 0 (every p in {0, 1/2, 1})."""
    z, pvalue = spiegelhalter(np.array([0.25, 0.75]), np.array([1.0, 0.0]))
    # numerator 3/4, variance 3/32: z = (3/4) / sqrt(3/32) = sqrt(6)
    assert math.isclose(z, math.sqrt(6.0), rel_tol=EXACT_RTOL)
    assert math.isclose(pvalue, math.erfc(math.sqrt(3.0)), rel_tol=EXACT_RTOL)
    z, pvalue = spiegelhalter(np.array([0.25, 0.75]), np.array([0, 1]))  # integer y
    assert math.isclose(z, -math.sqrt(6.0) / 3.0, rel_tol=EXACT_RTOL)
    assert spiegelhalter(np.array([0.0, 0.5]), np.array([1.0, 0.0])) == (math.inf, 0.0)
    assert spiegelhalter(np.array([1.0, 0.5]), np.array([0.0, 1.0])) == (math.inf, 0.0)
    z, pvalue = spiegelhalter(np.array([0.5, 0.0, 1.0]), np.array([1.0, 0.0, 1.0]))
    assert math.isnan(z) and math.isnan(pvalue)


@pytest.mark.parametrize("seed", range(6))
def test_concordance_against_every_pair(seed):
    rng = np.random.default_rng([7, seed])
    n = int(rng.integers(2, 60))
    p = rng.choice(np.linspace(0.05, 0.95, int(rng.integers(2, 12))), n)
    y = (rng.random(n) < 0.5).astype(np.float64)
    y[:2] = (0.0, 1.0)
    c_exact, dxy_exact = oracle.concordance_pairs(p, y)
    c, dxy = _concordance(p, y)
    assert c == float(c_exact) and dxy == float(dxy_exact)


# --------------------------------------------------------------------------
# the statistics from their definitions


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
    _, fitted = lowess(p, y, iter=0)  # checked against R's lowess() below
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
    """Every statistic of val_prob() equals its definition, recomputed here from the
    formulas of rms::val.prob (docs/val_prob.md): the deviances and chi-square tails,
    R2, D, U, Q, Brier, the lowess errors and their type-7 quantile, and Spiegelhalter's
    z; the recalibration is the maximum-likelihood fit (both score equations are 0). On
    the help-page example, R's printed numbers too."""
    p, y = _datasets()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # these data are not separated
        got = val_prob(p, y, method="exact")
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


def test_chi_square_tails():
    """The chi-square tails of 1 and 2 degrees of freedom: P(chi2_1 > x) = 2 Phi(-sqrt x)
    and P(chi2_2 > x) = exp(-x / 2), and 1 for x <= 0."""
    for x in (0.25, 1.0, 3.841458820694124, 7.5):
        assert _chi2_sf(x, 1) == pytest.approx(2 * NormalDist().cdf(-math.sqrt(x)), rel=1e-12)
        assert _chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    assert _chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-12)
    assert _chi2_sf(0.0, 1) == 1.0 and _chi2_sf(-2.0, 2) == 1.0


def test_chi2_tail_refuses_other_degrees_of_freedom():
    """Only 1 and 2 degrees of freedom have a tail here; another is a ValueError (after the
    answers for NaN and x <= 0), not None."""
    with pytest.raises(ValueError, match=r"^3$"):
        _chi2_sf(1.5, 3)
    assert _chi2_sf(math.nan, 3) != _chi2_sf(math.nan, 3)  # NaN before the check
    assert _chi2_sf(-1.0, 3) == 1.0  # and a non-positive x


def test_quantile_is_r_type_7():
    """The quantile of the errors is R's type 7 (numpy's default "linear" method): the
    index, the reads below and above it, and the interpolation."""
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 11, 57):
        x = rng.normal(size=n)
        for prob in (0.1, 0.5, 0.9):
            assert _quantile7(x, prob) == pytest.approx(float(np.quantile(x, prob)), rel=1e-14)
    assert _quantile7(np.array([4.0, 1.0, 2.0, 3.0]), 0.9) == pytest.approx(3.7, rel=1e-14)


def test_type_7_quantile_does_not_interpolate_between_equal_values():
    """R's quantile() interpolates only between different values, and so does calibr, since
    in float64 (1 - h) q + h q need not be q: q = 0.45 and h = 0.7000000000000002 give
    0.45000000000000007."""
    assert (1.0 - 0.7000000000000002) * 0.45 + 0.7000000000000002 * 0.45 != 0.45
    assert _quantile7(np.array([0.45, 0.1, 0.45, 0.2]), 0.9) == 0.45  # index 3.7
    assert _quantile7(np.full(4, 0.45), 0.9) == 0.45


#: Calibrated by construction: at p = 1/4 one event in four, at 3/4 three in
#: four, at 1/2 one in two. logit(1/4) = -logit(3/4) in float64 and logit(1/2)
#: = 0, so mean(logit p) is exactly 0 and equals the logit of the two rows at 1/2.
CALIBRATED_P = [0.25, 0.75] * 4 + [0.5, 0.5]
CALIBRATED_Y = [1, 1, 0, 1, 0, 1, 0, 0, 1, 0]


def test_recalibration_of_calibrated_predictions_by_hand():
    """Predictions calibrated by construction, whose lowest p is an event and highest a
    non-event (not separated), and some of whose logits equal their mean 0: the
    maximum-likelihood recalibration is Intercept 0, Slope 1, its deviance that of p
    itself, so U:Chi-sq = 0, U = -2/n, Q = D + 2/n; Spiegelhalter's numerator is 0 in
    every group. C: 25 pairs, 15 concordant, 7 tied: C = 18.5/25, Dxy = (15 - 3)/25.
    Brier = (0.75 + 0.75 + 0.5)/10."""
    p = np.array(CALIBRATED_P)
    x = np.log(p / (1 - p))
    assert float(np.mean(x)) == 0.0 and x[-1] == 0.0  # centred logits of 0: no division by them
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = val_prob(CALIBRATED_P, CALIBRATED_Y, method="exact")
    assert got["Intercept"] == pytest.approx(0.0, abs=1e-12)
    assert got["Slope"] == pytest.approx(1.0, rel=1e-12)
    assert got["U:Chi-sq"] == pytest.approx(0.0, abs=1e-12)
    assert got["U"] == pytest.approx(-0.2, rel=1e-12)
    assert got["Q"] == pytest.approx(got["D"] + 0.2, rel=1e-12)
    assert got["U:p"] == pytest.approx(1.0, abs=1e-12)
    assert got["S:z"] == pytest.approx(0.0, abs=1e-15) and got["S:p"] == pytest.approx(1.0)
    assert got["C (ROC)"] == 0.74 and got["Dxy"] == pytest.approx(0.48, abs=1e-15)
    assert got["Brier"] == pytest.approx(0.2, rel=1e-15)


@contextlib.contextmanager
def _deadline(seconds: float):
    """Fail (instead of hanging) if the block runs longer than ``seconds``: a
    broken line search of the Newton fit can loop for ever."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_recalibration_halves_a_step_that_overshoots():
    """From the null fit, the first Newton step raises the deviance (14 events at 0.2..0.8,
    a non-event at 0.9999, an event at 1 - 1e-8), so the step must be shortened; the fit
    still reaches the maximum, checked in 40-digit decimal arithmetic."""
    p = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] * 2 + [1 - 1e-4, 1 - 1e-8])
    y = np.array([1.0] * 14 + [0.0, 1.0])
    with _deadline(20.0):
        got = val_prob(p, y, method="exact")
    a, b = oracle.logistic_mle_decimal(p, y, (got["Intercept"], got["Slope"]))
    assert got["Intercept"] == pytest.approx(a, rel=MLE_RTOL)
    assert got["Slope"] == pytest.approx(b, rel=MLE_RTOL)


# --------------------------------------------------------------------------
# degenerate data, messages and warnings


def test_one_distinct_p_statistics_by_hand():
    """A single distinct ``p`` takes rms's branch of its own: p = 0.3 four times with one
    event in four, every statistic worked by hand."""
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


@pytest.mark.parametrize("reverse", [False, True], ids=["events-above", "events-below"])
def test_quasi_complete_separation_is_separation(reverse):
    """p that separates the outcomes with a tie at the boundary (0.5 is both a y = 0 and a
    y = 1), in either direction, is separation: the fit has no maximum-likelihood
    estimate (Newton would stop at a huge slope), so its statistics are NaN, with a
    warning; C needs no fit."""
    p = [0.1, 0.2, 0.5, 0.5, 0.7, 0.8]
    y = [1, 1, 1, 0, 0, 0] if reverse else [0, 0, 0, 1, 1, 1]
    with pytest.warns(RuntimeWarning, match=r"`p` separates the outcomes"):
        got = val_prob(p, y, method="exact")
    for name in ("U", "U:Chi-sq", "U:p", "Q", "Intercept", "Slope"):
        assert math.isnan(got[name]), name
    # the statistics that need no fit: of the 9 pairs, the tie at 0.5 counts 1/2
    # and the other 8 are concordant (discordant when reversed)
    assert got["C (ROC)"] == pytest.approx(1 / 18 if reverse else 17 / 18, rel=1e-15)


def test_val_prob_one_event_is_enough():
    """One event is enough (both outcomes are present); these data are separated, so with
    the separation warning."""
    with pytest.warns(RuntimeWarning, match="separates the outcomes"):
        got = val_prob([0.2, 0.4, 0.6], [0, 0, 1])
    assert got["C (ROC)"] == 1.0 and got["Dxy"] == 1.0


def test_val_prob_one_outcome_message_for_two_values():
    """The one-outcome message counts the values: "all 2 values are 1"."""
    with pytest.raises(InputError, match=r"; all 2 values are 1\.$"):
        val_prob([0.2, 0.4], [1, 1])


def test_val_prob_warnings_point_at_the_caller():
    """val_prob()'s warnings (here: variance 0) name the caller's file, not calibr's."""
    with pytest.warns(RuntimeWarning, match="variance 0") as record:
        val_prob([0.5, 0.5, 0.5], [0, 1, 1])
    assert record[0].filename == __file__


def test_a_matrix_past_the_shape_check_is_still_refused(monkeypatch):
    """Should a matrix get past _refuse_matrix, the check of prepare()'s result still
    refuses it, with the same message."""
    monkeypatch.setattr(_valprob, "_refuse_matrix", lambda p: None)
    with pytest.raises(InputError, match=r"^`p` must be a vector of probabilities P\(y = 1\) "
                                         r"for val_prob\.$"):
        val_prob(np.array([[0.2, 0.8], [0.6, 0.4]]), [1, 2])


# --------------------------------------------------------------------------
# the lowess port against R's lowess()


def _lowess_case(i: int):
    rng = np.random.default_rng([1979, i])
    kind = ("plain", "ties", "duplicates", "outliers", "binary-y")[i % 5]
    n = int(rng.choice([1, 2, 3, 4, 5, 7, 10, 31, 100, 400]))
    x = rng.uniform(-2.0, 3.0, n)
    y = np.sin(2.0 * x) + rng.normal(0.0, 0.3, n)
    if kind == "ties":
        x = np.round(x * 2.0) / 2.0
    elif kind == "duplicates":
        x, y = np.repeat(x, 3)[:n], np.repeat(y, 3)[:n]
    elif kind == "outliers":
        y[::4] += 25.0
    elif kind == "binary-y":
        y = (rng.random(n) < 0.5).astype(np.float64)
    f = float(rng.choice([2.0 / 3.0, 0.05, 0.3, 1.0, 1.5]))
    it = int(rng.choice([0, 1, 3, 5]))
    delta = [None, 0.0, 0.05, 0.5][i % 4]
    return x, y, f, it, delta


def _cmad_case_y() -> np.ndarray:
    x = np.arange(21.0)
    y = 2.0 * x + 1.0 + 1e-8 * np.random.default_rng(1).normal(size=21)
    y[10] += 100.0
    return y


LOWESS_SPECIAL = {
    "constant-x": (np.full(9, 0.4), np.arange(9.0), 2.0 / 3.0, 3, None),
    "constant-y": (np.arange(12.0), np.full(12, 2.5), 2.0 / 3.0, 3, None),
    "delta-0-n-300": (np.sort(np.random.default_rng(3).random(300)),
                      np.random.default_rng(4).random(300), 2.0 / 3.0, 2, 0.0),
    "delta-covers-all": (np.arange(20.0), np.arange(20.0) ** 2, 0.5, 0, 100.0),
    # robustness weights all 0 in one window: C's ok = FALSE copies y
    "all-weights-zero": (np.array([1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0]),
                         np.array([0.0, 0.0, 1.0, 10.0, 1.0, 10.0, 0.0, 0.0, 10.0]), 0.5, 2, 0.0),
    "n-1": (np.array([0.7]), np.array([1.0]), 2.0 / 3.0, 3, None),
    # the fit at x = 1 has h = 1000: the point at 1000 is exactly 0.999 h away,
    # inside the window (C's r <= h9) with a weight of 2.7e-8
    "point-at-0.999-h": (np.array([-999.0, -999.0, -999.0, -1.0, 1.0, 1000.0, 2000.0]),
                         np.array([-0.6, 0.1, -0.9, 0.8, 0.2, 0.3, 0.4]), 0.8, 0, 0.0),
    # residuals of 1e-8 but for one outlier: 6 * median |res| is between 1e-9
    # and 1e-7 of their mean, so C's "effectively zero" test (1e-7) stops here
    "cmad-effectively-zero": (np.arange(21.0), _cmad_case_y(), 0.2, 3, None),
    # one far point: the range of x (1000, not the 1 of the rest) decides that the
    # windows inside [0, 1] are too narrow for a slope (C's 0.001 * range)
    "far-point-sets-the-range": (np.append(np.linspace(0, 1, 40), 1000.0),
                                 np.append(np.linspace(0, 1, 40) ** 2, 5.0), 0.3, 0, None),
}


@pytest.mark.r
@pytest.mark.parametrize("case", range(60))
def test_lowess_matches_r_random(rms, case):
    x, y, f, it, delta = _lowess_case(case)
    xs, ours = lowess(x, y, f, it, delta)
    ref = rms.lowess(x, y, f, it, delta)
    np.testing.assert_array_equal(xs, np.sort(x))
    np.testing.assert_allclose(ours, ref, rtol=LOWESS_RTOL, atol=LOWESS_ATOL)


@pytest.mark.r
@pytest.mark.parametrize("case", LOWESS_SPECIAL)
def test_lowess_matches_r_special(rms, case):
    x, y, f, it, delta = LOWESS_SPECIAL[case]
    _, ours = lowess(x, y, f, it, delta)
    ref = rms.lowess(x, y, f, it, delta)
    np.testing.assert_allclose(ours, ref, rtol=LOWESS_RTOL, atol=LOWESS_ATOL)


# --------------------------------------------------------------------------
# result and inputs


def test_result_is_a_float_series_with_r_names():
    stats = val_prob(HAND_P, HAND_Y)
    assert isinstance(stats, pd.Series)
    assert stats.dtype == np.float64
    assert list(stats.index) == [
        "Dxy", "C (ROC)", "R2", "D", "D:Chi-sq", "D:p", "U", "U:Chi-sq", "U:p", "Q",
        "Brier", "Intercept", "Slope", "Emax", "E90", "Eavg", "S:z", "S:p",
    ]


def test_input_forms_give_the_same_numbers_and_are_not_modified():
    p, y = _dataset("calibrated")
    p_copy, y_copy = p.copy(), y.copy()
    expected = val_prob(p, y)
    pd.testing.assert_series_equal(val_prob(p.tolist(), y.astype(bool).tolist()), expected)
    index = pd.RangeIndex(10, 10 + p.size)
    pd.testing.assert_series_equal(
        val_prob(pd.Series(p, index=index), pd.Series(y.astype(np.int64), index=index)),
        expected,
    )
    pd.testing.assert_series_equal(val_prob(p.astype(np.float32).astype(np.float64), y),
                                   val_prob(p.astype(np.float32), y))
    np.testing.assert_array_equal(p, p_copy)
    np.testing.assert_array_equal(y, y_copy)


def test_labels_named_by_classes():
    p, y = _dataset("small-20")
    labels = np.where(y == 1.0, "yes", "no")
    pd.testing.assert_series_equal(val_prob(p, labels, classes=("no", "yes")), val_prob(p, y))
    with pytest.raises(InputError, match=(
        r"^`y` must be 0/1 or boolean for a vector `p`; 20 values do not, the first at "
        r"position 0 \('(no|yes)'\)\. Pass classes=\(negative, positive\) to name other labels\.$"
    )):
        val_prob(p, labels)


def test_row_order_does_not_matter():
    p, y = _dataset("heavy-ties")
    perm = np.random.default_rng(5).permutation(p.size)
    pd.testing.assert_series_equal(val_prob(p[perm], y[perm]), val_prob(p, y),
                                   rtol=1e-12, atol=VALPROB_ATOL)


def test_na_rm_drops_incomplete_rows():
    p, y = _dataset("small-20")
    p_na = p.copy()
    p_na[[3, 7]] = np.nan
    y_na = pd.array(y.astype(np.int64), dtype="Int64")
    y_na[11] = pd.NA
    keep = np.ones(p.size, dtype=bool)
    keep[[3, 7, 11]] = False
    pd.testing.assert_series_equal(val_prob(p_na, y_na, na_rm=True), val_prob(p[keep], y[keep]))
    with pytest.raises(InputError, match=r"^`p` must not contain missing values; 2 values are "
                                         r"missing, the first at position 3\. Pass na_rm=True"):
        val_prob(p_na, y)


@pytest.mark.parametrize(
    ("p", "message"),
    [
        (np.full((4, 2), 0.5), r"^`p` must be a vector of probabilities P\(y = 1\) for val_prob, "
                               r"which is for binary outcomes only; got a matrix of shape "
                               r"\(4, 2\)\. For a two-class matrix, pass the column of the "
                               r"positive class \(e\.g\. p\[:, 1\]\)\.$"),
        (pd.DataFrame({"a": [0.2, 0.4, 0.6, 0.8]}), r"got a matrix of shape \(4, 1\)\."),
        ([[0.2, 0.8]] * 4, r"got a matrix of shape \(4, 2\)\."),
        (np.full((4, 1, 1), 0.5), r"binary outcomes only; got an array of shape \(4, 1, 1\)\.$"),
    ],
    ids=["ndarray", "dataframe", "nested-list", "3-d"],
)
def test_matrix_p_is_refused(p, message):
    with pytest.raises(InputError, match=message):
        val_prob(p, [0, 1, 0, 1])


def test_p_of_zero_or_one_is_refused():
    with pytest.raises(InputError, match=(
        r"^`p` must lie strictly between 0 and 1 for val_prob \(its statistics use "
        r"logit\(p\)\); 2 values do not, the first at position 2 \(1\.0\)\.$"
    )):
        val_prob([0.2, 0.5, 1.0, 0.7, 0.0], [0, 1, 1, 0, 0])
    with pytest.raises(InputError, match=r"; 1 value does not, the first at position 0 \(0\.0\)"):
        val_prob([0.0, 0.5, 0.3], [0, 1, 1])
    with pytest.raises(InputError, match=(
        r"; 1 value does not, the first at position 1 of the complete observations \(1\.0\)\.$"
    )):
        val_prob([np.nan, 0.5, 1.0, 0.3], [0, 1, 1, 0], na_rm=True)


@pytest.mark.parametrize(
    ("y", "message"),
    [
        ([0, 0, 0, 0], r"^`y` must contain both outcomes \(0 and 1\) for val_prob; all 4 values "
                       r"are 0\.$"),
        ([True] * 4, r"^`y` must contain both outcomes \(0 and 1\) for val_prob; all 4 values "
                     r"are 1\.$"),
    ],
)
def test_one_outcome_is_refused(y, message):
    with pytest.raises(InputError, match=message):
        val_prob([0.2, 0.4, 0.6, 0.8], y)
    with pytest.raises(InputError, match=message):  # also for one distinct p
        val_prob([0.3] * 4, y)


def test_one_observation_is_refused():
    with pytest.raises(InputError, match=r"^`y` must contain both outcomes \(0 and 1\) for "
                                         r"val_prob; its one value is 1\.$"):
        val_prob([0.3], [1])


@pytest.mark.parametrize(
    ("p", "y", "kwargs", "error", "message"),
    [
        ([0.2, 0.4], [0, 1, 1], {}, InputError,
         r"^`p` and `y` must have the same length; got 2 and 3\.$"),
        ([0.2, 1.4, 0.5], [0, 1, 1], {}, InputError,
         r"^`p` must lie in \[0, 1\]; 1 value does not, the first at position 1 \(1\.4\)\.$"),
        ([0.2, 0.4, 0.5], [0, 2, 1], {}, InputError,
         r"^`y` must be 0/1 or boolean for a vector `p`; 1 value does not, the first at "
         r"position 1 \(2\)\."),
        ([], [], {}, InputError, r"^`p` and `y` must not be empty; got 0 observations\.$"),
        ("0.5", [1], {}, InputTypeError, r"^`p` must be .*; got a string \('0\.5'\)\.$"),
        ([0.2, 0.4], [0, 1], {"na_rm": "yes"}, InputError,
         r"^`na_rm` must be True or False; got 'yes'\.$"),
    ],
    ids=["length", "range", "labels", "empty", "string", "na_rm"],
)
def test_errors_of_the_input_layer(p, y, kwargs, error, message):
    with pytest.raises(error, match=message):
        val_prob(p, y, **kwargs)


@pytest.mark.parametrize("method", ["glm", "RMS", None, 1])
def test_unknown_method_is_refused(method):
    shown = repr(method) if isinstance(method, str) else str(method)
    with pytest.raises(InputError, match=(
        r"^`method` must be one of 'rms', 'exact'; got " + re.escape(shown) + r"\.$"
    )):
        val_prob(HAND_P, HAND_Y, method=method)


@pytest.mark.parametrize("method", ["exact", "rms"])
def test_separation_warning_is_exactly_worded(method):
    with pytest.warns(RuntimeWarning) as record:
        stats = val_prob([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], method=method)
    head = (
        "val_prob: `p` separates the outcomes (no y = 1 has a smaller p than a y = 0, or no "
        "y = 1 a larger one), so the logistic recalibration of y on logit(p) has no "
        "maximum-likelihood estimate; "
    )
    assert [str(w.message) for w in record] == [head + (
        "Intercept, Slope, U, U:Chi-sq, U:p and Q are NaN." if method == "exact" else
        "Intercept, Slope, U, U:Chi-sq, U:p and Q are those of the estimate where rms's "
        'Newton-Raphson stopped, as rms reports them (method="exact" gives NaN).'
    )]
    assert record[0].filename == __file__  # points at the caller's line
    assert math.isnan(stats["Slope"]) == (method == "exact")


# --------------------------------------------------------------------------
# method="rms" against the oracles of rms's Fortran (no R needed)


def _oracle_case(i: int) -> tuple[np.ndarray, np.ndarray]:
    """The adversarial datasets, cut to 600 rows (the oracles are scalar loops)."""
    p, y = _adversarial(i)
    p, y = p[:600].copy(), y[:600].copy()
    if y.min() == y.max():
        y[0] = 1.0 - y[0]
    if np.all(p == p[0]):
        p[0] = 0.5 * p[0]
    return p, y


#: Three steps of the recalibration: 14 events at 0.2..0.8, a non-event at
#: 0.9999, an event at 1 - 1e-8: rms's first Newton step raises -2LL, and
#: its step halving brings it back.
OVERSHOOT_P = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] * 2 + [1 - 1e-4, 1 - 1e-8])
OVERSHOOT_Y = np.array([1.0] * 14 + [0.0, 1.0])


def _rms_oracle_statistics(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """C, Dxy, D:Chi-sq, R2, Intercept, Slope and U:Chi-sq as rms <= 6.8 computes
    them: the oracles of its Fortran, and val.prob's R code in exact sums."""
    n = y.size
    n1 = float(y.sum())
    n0 = n - n1
    null = -2.0 * math.fsum([n0 * math.log(n0 / n), n1 * math.log(n1 / n)])
    lr = null - oracle.rms65_fixed_deviance(p, y)
    c_bins, dxy_bins = oracle.rms65_concordance(p, y)
    a, b, dev = oracle.rms65_lrm_fit(p, y)
    x = [math.log(v / (1.0 - v)) for v in p]
    l01 = -2.0 * math.fsum(o * v - math.log(1.0 + math.exp(v)) for v, o in zip(x, y, strict=True))
    return {"C (ROC)": c_bins, "Dxy": dxy_bins, "D:Chi-sq": lr, "D": (lr - 1.0) / n,
            "R2": (1.0 - math.exp(-lr / n)) / (1.0 - math.exp(-null / n)),
            "Intercept": a, "Slope": b, "U:Chi-sq": l01 - dev}


@pytest.mark.parametrize("case", [*range(48), "overshoot"])
def test_rms_method_equals_the_oracles_of_rms_fortran(case):
    """Bins, clamp, stopping rule, step halving and the order of rms's sums,
    against a scalar transcription of lrmfit.f (``tests/oracles``): C and Dxy
    equal (integer counts), the rest to rounding (the 2 x 2 solve differs:
    Cramer's rule against LAPACK, amplified by ill-conditioned fits)."""
    p, y = (OVERSHOOT_P, OVERSHOOT_Y) if case == "overshoot" else _oracle_case(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # separation, unconverged and singular fits included
        ours = val_prob(p, y)
    want = _rms_oracle_statistics(p, y)
    assert (ours["C (ROC)"], ours["Dxy"]) == (want["C (ROC)"], want["Dxy"])
    for stat in ("D:Chi-sq", "D", "R2", "Intercept", "Slope", "U:Chi-sq"):
        _assert_close(ours[stat], want[stat], stat, VALPROB_RTOL, VALPROB_ATOL)


@pytest.mark.r
def test_rms_method_halves_a_step_as_rms_does(rms):
    _require_fortran_rms(rms)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = val_prob(OVERSHOOT_P, OVERSHOOT_Y)
    _assert_matches_rms(ours, rms.val_prob(OVERSHOOT_P, OVERSHOOT_Y), rms)
