"""calibr.smece and calibr.smece_curve (``docs/smece.md``).

Three references:

* the oracle (``tests/oracles/smece.py``): the definition by direct kernel sums
  on a grid far finer than the bandwidth, independent of calibr's binning and
  FFT; calibr must match it to its documented accuracy;
* relplot itself (``relplot.smECE``/``smECE_sigma``, the peer implementation of
  Błasiok & Nakkiran): it must agree within what relplot's own discretisation
  allows (the tolerances below, each with its measured source);
* exact identities (one observation, a residual of one sign).

``method="relplot"`` must give relplot's own numbers (``RELPLOT_METHOD_RTOL``)
on random and adversarial inputs, and relplot's bandwidth exactly.

relplot comes through ``conftest.require``: missing, it fails under the CI
variables instead of skipping.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import require
from oracles.smece import reflected_kernel, smece_auto_oracle, smece_oracle

import calibr
from calibr import InputError, InputTypeError
from calibr._metrics import smooth as _smooth

relplot = require("relplot")

# ------------------------------------------------------------------ tolerances

#: calibr vs the oracle: calibr's documented bound 0.2 * (step / sigma)**2 =
#: 1.3e-6 (docs/smece.md, "Accuracy"), plus the oracle's own 8e-8; measured 2.3e-7.
ORACLE_TOL = 2e-6
#: relplot vs calibr at a fixed bandwidth of at most 0.15, no prediction within
#: 1e-3 of 0 or 1: relplot's 200-point evaluation mesh (a Riemann sum whose end
#: points get full weight) and its 1/1000 binning grid; measured at most 1.7%
#: relative for n < 1000 (sharp curves of few points) and 0.4% for n >= 1000.
#: With a 20001-point mesh relplot comes within 1e-4 of calibr (docs/smece.md).
RELPLOT_RTOL_SMALL = 0.03
RELPLOT_RTOL_LARGE = 0.006
#: ... with masses at exactly 0 and 1, after doubling calibr's interior rows
#: (relplot counts a boundary mass once where the reflection counts it twice):
#: the evaluation mesh's end points now carry the large boundary terms; measured 3.2%.
RELPLOT_RTOL_BOUNDARY = 0.05
#: Automatic bandwidth, n >= 100: relplot's fixed point moves by its relative
#: error times sigma, plus the search's resolution 2**-10 (docs/smece.md).
AUTO_STEP = 2.0**-10
#: Same sums in another order (a permutation of the rows).
ORDER_RTOL = 1e-12
#: method="relplot" vs relplot: the same numpy operations in the same order (the
#: binning compiled, adding the same terms in the same order as numpy.add.at);
#: measured 5.4e-15 relative over 1,400 comparisons, most bit-identical.
RELPLOT_METHOD_RTOL = 1e-9


def _sample(n: int, seed: int, lo: float = 0.0, hi: float = 1.0, power: float | None = None):
    rng = np.random.default_rng(seed)
    p = lo + (hi - lo) * rng.random(n)
    power = rng.uniform(0.6, 1.8) if power is None else power
    y = (rng.random(n) < p**power).astype(np.int64)
    return p, y


def _multi(n: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.7), n)
    sharp = p**1.6 / np.sum(p**1.6, axis=1, keepdims=True)  # an overconfident model
    u = rng.random((n, 1))
    y = np.minimum((np.cumsum(sharp, axis=1) < u).sum(axis=1), k - 1)  # 0-based
    return p, y


# ------------------------------------------------------------------ exact identities


@pytest.mark.parametrize("sigma", [1.0, 0.2, 0.01, 1e-3])
@pytest.mark.parametrize("p, y", [(0.3, 1), (0.0, 1), (1.0, 1), (0.999, 0), (0.5, 0)])
def test_one_observation_is_its_absolute_residual(p, y, sigma):
    # A = r K and D = K: the ratio of the two integrals is |r| for any quadrature
    assert calibr.smece([p], [y], bandwidth=sigma) == pytest.approx(abs(y - p), rel=1e-12,
                                                                    abs=1e-15)


def test_residuals_of_one_sign_give_the_absolute_mean_residual():
    # every kernel integrates to 1 over [0, 1], so with y - p >= 0 everywhere the
    # integral of |A| is the integral of A = the sum of the residuals
    rng = np.random.default_rng(7)
    p = rng.random(300) * 0.9
    y = np.ones(300, dtype=int)
    for sigma in (0.5, 0.05, 0.003):
        assert calibr.smece(p, y, bandwidth=sigma) == pytest.approx(np.mean(1 - p), rel=1e-9)


def test_perfect_predictions_give_zero():
    assert calibr.smece([0.0, 1.0, 1.0, 0.0], [0, 1, 1, 0], bandwidth=0.1) == 0.0
    assert calibr.smece([0.0, 1.0, 1.0, 0.0], [0, 1, 1, 0]) == 0.0


# ------------------------------------------------------------------ the oracle

ORACLE_CASES = [
    ("n=1", np.array([0.37]), np.array([0])),
    ("n=2", np.array([0.2, 0.9]), np.array([1, 0])),
    ("ties", np.array([0.5, 0.5, 0.5, 0.25, 0.25, 0.8, 0.8, 0.8]),
     np.array([1, 0, 1, 0, 0, 1, 1, 0])),
    ("at 0 and 1", np.array([0.0, 0.0, 1.0, 1.0, 0.5, 0.5, 0.5, 1e-9, 1 - 1e-9]),
     np.array([0, 1, 1, 0, 1, 1, 0, 1, 0])),
    ("near the edges", np.array([0.0004, 0.0011, 0.9993, 0.9999, 0.5, 0.3]),
     np.array([1, 0, 0, 1, 1, 0])),
    ("random 40", *_sample(40, 11)),
]


@pytest.mark.parametrize("sigma", [1.0, 0.3, 0.1, 0.03, 0.01])
@pytest.mark.parametrize("case", ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES])
def test_fixed_bandwidth_matches_the_oracle(case, sigma):
    _, p, y = case
    expected = smece_oracle(p, y, sigma, per_sigma=1000)
    assert calibr.smece(p, y, bandwidth=sigma) == pytest.approx(expected, abs=ORACLE_TOL)


@pytest.mark.parametrize("sigma", [1.2, 4.0])
@pytest.mark.parametrize("case", ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES])
def test_large_bandwidth_matches_the_oracle(case, sigma):
    """Above 1 the kernel is the wrapped Gaussian's Fourier series (the images of
    the oracle's direct sum, summed another way)."""
    _, p, y = case
    expected = smece_oracle(p, y, sigma, per_sigma=1000)
    assert calibr.smece(p, y, bandwidth=sigma) == pytest.approx(expected, abs=ORACLE_TOL)


def test_small_bandwidth_matches_the_oracle():
    p, y = _sample(12, 12)
    for sigma in (0.003, 0.001):
        expected = smece_oracle(p, y, sigma, per_sigma=600)
        assert calibr.smece(p, y, bandwidth=sigma) == pytest.approx(expected, abs=ORACLE_TOL)


@pytest.mark.parametrize("seed, n", [(21, 3), (22, 10), (23, 40), (24, 60)])
def test_automatic_bandwidth_matches_the_oracle(seed, n):
    p, y = _sample(n, seed)
    value, sigma = smece_auto_oracle(p, y)
    curve = calibr.smece_curve(p, y, points=3)
    assert curve.bandwidth == sigma
    assert calibr.smece(p, y) == pytest.approx(value, abs=ORACLE_TOL)
    assert curve.smece == calibr.smece(p, y)


# ------------------------------------------------------------------ relplot


def _relplot_rtol(n: int) -> float:
    return RELPLOT_RTOL_LARGE if n >= 1000 else RELPLOT_RTOL_SMALL


FIXED_N = [1, 2, 5, 30, 100, 1000, 10_000, 100_000]


@pytest.mark.parametrize("n", FIXED_N)
@pytest.mark.parametrize("sigma", [0.15, 0.05, 0.02, 0.01, 0.005])
def test_fixed_bandwidth_matches_relplot(n, sigma):
    p, y = _sample(n, 100 + n, lo=0.002, hi=0.998)
    expected = relplot.smECE_sigma(p, y, sigma)
    assert calibr.smece(p, y, bandwidth=sigma) == pytest.approx(
        expected, rel=_relplot_rtol(n), abs=1e-6)


@pytest.mark.parametrize("n", [30, 1000, 100_000])
def test_ties_match_relplot(n):
    p, y = _sample(n, 200 + n, lo=0.01, hi=0.99)
    digits = 1 if n < 1000 else 2  # few distinct values, many ties, none at 0 or 1
    p = np.clip(np.round(p, digits), 10.0**-digits, 1 - 10.0**-digits)
    for sigma in (0.1, 0.02):
        assert calibr.smece(p, y, bandwidth=sigma) == pytest.approx(
            relplot.smECE_sigma(p, y, sigma), rel=_relplot_rtol(n), abs=1e-6)


@pytest.mark.parametrize("n", [10, 2000, 100_000])
@pytest.mark.parametrize("boundary", [0.1, 0.5, 0.9])
def test_masses_at_0_and_1_are_reflected_in_full(n, boundary):
    """relplot reflects its grid without repeating the end nodes, so a
    prediction at exactly 0 or 1 counts half as much as the paper's reflected
    kernel counts it (docs/smece.md, "relplot"): calibr on the sample with the
    interior rows doubled is relplot on the sample, and the two differ on the
    sample itself by far more than the discretisation."""
    rng = np.random.default_rng(int(boundary * 10) + n)
    p = rng.uniform(0.01, 0.99, n)
    edge = rng.random(n) < boundary
    edge[:2] = True
    p[edge] = rng.integers(0, 2, edge.sum())
    y = (rng.random(n) < p**1.3).astype(np.int64)
    inner = (p > 0) & (p < 1)
    doubled_p, doubled_y = np.concatenate([p, p[inner]]), np.concatenate([y, y[inner]])
    for sigma in (0.1, 0.02):
        theirs = relplot.smECE_sigma(p, y, sigma)
        assert calibr.smece(doubled_p, doubled_y, bandwidth=sigma) == pytest.approx(
            theirs, rel=RELPLOT_RTOL_BOUNDARY)
        if n > 10:
            assert abs(calibr.smece(p, y, bandwidth=sigma) - theirs) > 0.04 * theirs


@pytest.mark.parametrize("n", [100, 300, 1000, 10_000, 100_000])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_automatic_bandwidth_matches_relplot(n, seed):
    p, y = _sample(n, 300 * seed + n, lo=0.002, hi=0.998, power=0.8 + 0.3 * seed)
    theirs, their_sigma = relplot.smECE(p, y, return_width=True)
    ours = calibr.smece_curve(p, y, points=2)
    # at relplot's bandwidth, calibr's value is relplot's up to the discretisation
    assert calibr.smece(p, y, bandwidth=their_sigma) == pytest.approx(
        theirs, rel=_relplot_rtol(n), abs=1e-6)
    # each fixed point moves by the other's relative error times sigma
    rtol = _relplot_rtol(n)
    slack = AUTO_STEP + 2 * rtol * (their_sigma + theirs)
    assert abs(ours.bandwidth - their_sigma) <= slack
    assert abs(ours.smece - theirs) <= slack


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 30])
def test_automatic_bandwidth_of_small_samples(n):
    """Few observations: smECE_sigma - sigma is flat near its zero, and relplot's
    percent-level error can move the bisection far; what must hold is the
    search itself (the bracket of the fixed point) and calibr's value at
    relplot's bandwidth."""
    for seed in range(4):
        p, y = _sample(n, 400 + 10 * n + seed, lo=0.002, hi=0.998)
        theirs, their_sigma = relplot.smECE(p, y, return_width=True)
        if their_sigma <= 0.15:
            assert calibr.smece(p, y, bandwidth=their_sigma) == pytest.approx(
                theirs, rel=RELPLOT_RTOL_SMALL, abs=1e-6)
        curve = calibr.smece_curve(p, y, points=2)
        sigma = curve.bandwidth
        assert sigma >= calibr.smece(p, y, bandwidth=sigma)  # the upper end ...
        below = sigma - AUTO_STEP  # ... of a bracket of width 2**-10
        assert below == 0.0 or below < 0.001 or below < calibr.smece(p, y, bandwidth=below)


@pytest.mark.parametrize("k", [3, 10])
@pytest.mark.parametrize("n", [20, 2000, 100_000])
def test_multiclass_confidence_matches_relplot(n, k):
    p, y = _multi(n, k, seed=500 + n + k)
    conf, correct = relplot.multiclass_logits_to_confidences(p, y, probs=True)
    rtol = _relplot_rtol(n)
    for sigma in (0.1, 0.02):
        ours = calibr.smece(p, y, bandwidth=sigma, classes=range(k))
        assert ours == pytest.approx(relplot.smECE_sigma(conf, correct, sigma), rel=rtol,
                                     abs=1e-6)
        assert ours == calibr.smece(conf, correct.astype(int), bandwidth=sigma)
    theirs, their_sigma = relplot.smECE(conf, correct, return_width=True)
    ours = calibr.smece(p, y + 1)  # R's codes 1..K
    if n >= 100:
        assert abs(ours - theirs) <= AUTO_STEP + 2 * rtol * (their_sigma + theirs)
    assert ours == calibr.smece(conf, correct.astype(int))


def test_multiclass_classwise_is_the_mean_over_columns():
    p, y = _multi(3000, 4, seed=600)
    for bandwidth in (0.05, "auto"):
        per_column = [calibr.smece(p[:, k], (y == k).astype(int), bandwidth=bandwidth)
                      for k in range(4)]
        got = calibr.smece(p, y, classes=range(4), type="classwise", bandwidth=bandwidth)
        assert got == pytest.approx(np.mean(per_column), rel=1e-15)
    theirs = np.mean([relplot.smECE_sigma(p[:, k], (y == k) * 1.0, 0.05) for k in range(4)])
    ours = calibr.smece(p, y, classes=range(4), type="classwise", bandwidth=0.05)
    assert ours == pytest.approx(theirs, rel=RELPLOT_RTOL_LARGE)


# ------------------------------------------------------------------ method="relplot"


def _adversarial(i: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded data of 8 kinds (``i % 8``), n from 1 to 20,000."""
    rng = np.random.default_rng([5, i])
    kind = i % 8
    n = int(rng.choice([1, 2, 3, 5, 10, 50, 300, 2000, 20_000]))
    if kind == 0:  # calibrated
        p = rng.random(n)
        y = rng.random(n) < p
    elif kind == 1:  # miscalibrated
        p = rng.random(n)
        y = rng.random(n) < p**2
    elif kind == 2:  # ties on the decimal grid
        p = np.round(rng.random(n), 1)
        y = rng.random(n) < 0.5
    elif kind == 3:  # every p the same
        p = np.full(n, rng.random())
        y = rng.random(n) < 0.3
    elif kind == 4:  # masses at 0 and 1 and next to them
        p = rng.choice([0.0, 1.0, 0.5, 0.9999, 0.0001], n)
        y = rng.random(n) < 0.5
    elif kind == 5:  # saturated: most p near 0 or 1
        p = rng.beta(0.2, 0.2, n)
        y = rng.random(n) < p
    elif kind == 6:  # one outcome only
        p = rng.random(n)
        y = np.zeros(n, dtype=bool)
    else:  # a narrow range
        p = 0.5 + 0.001 * rng.random(n)
        y = rng.random(n) < 0.5
    return p, y.astype(np.int64)


def _same(ours: float, theirs: float) -> None:
    assert ours == pytest.approx(theirs, rel=RELPLOT_METHOD_RTOL, abs=1e-300)


@pytest.mark.parametrize("case", range(40))
def test_relplot_method_is_relplot_smece(case):
    """Automatic bandwidth: relplot's bandwidth exactly and its value."""
    p, y = _adversarial(case)
    theirs, their_sigma = relplot.smECE(p, y * 1.0, return_width=True)
    _same(calibr.smece(p, y, method="relplot"), theirs)
    curve = calibr.smece_curve(p, y, method="relplot", points=2)
    assert curve.bandwidth == their_sigma
    _same(curve.smece, theirs)


@pytest.mark.parametrize("case", range(0, 40, 3))
@pytest.mark.parametrize("sigma", [0.004, 0.05, 0.3, 1.0, 3.0])
def test_relplot_method_is_relplot_smece_sigma(case, sigma):
    """Fixed bandwidths: relplot's grid of max(2000, round(20 / sigma)) // 2 + 1
    nodes (2501 at 0.004) and its mesh of max(200, round(10 / sigma)) points."""
    p, y = _adversarial(case)
    _same(calibr.smece(p, y, bandwidth=sigma, method="relplot"),
          relplot.smECE_sigma(p, y * 1.0, sigma))


def test_relplot_method_at_the_smallest_bandwidth_and_large_n():
    p, y = _sample(30, 901)
    _same(calibr.smece(p, y, bandwidth=0.001, method="relplot"),
          relplot.smECE_sigma(p, y * 1.0, 0.001))
    p, y = _sample(100_000, 902)
    theirs, their_sigma = relplot.smECE(p, y * 1.0, return_width=True)
    curve = calibr.smece_curve(p, y, method="relplot", points=2)
    assert curve.bandwidth == their_sigma
    _same(curve.smece, theirs)
    _same(calibr.smece(p, y, method="relplot"), theirs)


@pytest.mark.parametrize("k", [3, 10])
@pytest.mark.parametrize("n", [20, 2000])
def test_relplot_method_multiclass(n, k):
    """The confidence form is relplot on multiclass_logits_to_confidences; the
    classwise form the mean of relplot per column."""
    p, y = _multi(n, k, seed=950 + n + k)
    conf, correct = relplot.multiclass_logits_to_confidences(p, y, probs=True)
    _same(calibr.smece(p, y, classes=range(k), method="relplot"), relplot.smECE(conf, correct))
    _same(calibr.smece(p, y, classes=range(k), method="relplot", bandwidth=0.05),
          relplot.smECE_sigma(conf, correct, 0.05))
    _same(calibr.smece(p, y, classes=range(k), type="classwise", method="relplot"),
          float(np.mean([relplot.smECE(p[:, j], (y == j) * 1.0) for j in range(k)])))


@pytest.mark.parametrize("case", [0, 1, 3, 4, 5, 9, 15, 16])
def test_relplot_method_curve_is_prepare_rel_diagram(case):
    """relplot's diagram without its (random) bootstrap: the main line, a
    kernel smoother of y not centred on the diagonal, its density, bandwidth
    and smooth ECE, on its mesh of 200 points."""
    p, y = _adversarial(case)
    theirs = relplot.prepare_rel_diagram(p, y * 1.0, plot_confidence_band=False,
                                         report_CE_std=False)
    curve = calibr.smece_curve(p, y, method="relplot")
    np.testing.assert_array_equal(curve.x, theirs["mesh"])
    np.testing.assert_allclose(curve.y, theirs["mu"], rtol=RELPLOT_METHOD_RTOL, atol=1e-300)
    # relplot's kde bins masses 1/n, calibr divides the binned counts by n
    np.testing.assert_allclose(curve.density, theirs["density"], rtol=RELPLOT_METHOD_RTOL,
                               atol=1e-15 * float(np.max(theirs["density"])))
    assert curve.bandwidth == theirs["sigma"]
    _same(curve.smece, theirs["ce"])


def test_relplot_method_curve_at_a_fixed_bandwidth_and_mesh():
    p, y = _sample(500, 903)
    old = relplot.config.plot_mesh_pts
    relplot.config.plot_mesh_pts = 57
    try:
        theirs = relplot.prepare_rel_diagram(p, y * 1.0, plot_confidence_band=False,
                                             report_CE_std=False, kde_bandwidth=0.03)
    finally:
        relplot.config.plot_mesh_pts = old
    curve = calibr.smece_curve(p, y, method="relplot", bandwidth=0.03, points=57)
    np.testing.assert_allclose(curve.y, theirs["mu"], rtol=RELPLOT_METHOD_RTOL)
    np.testing.assert_allclose(curve.density, theirs["density"], rtol=RELPLOT_METHOD_RTOL)
    _same(curve.smece, relplot.smECE_sigma(p, y * 1.0, 0.03))
    assert curve.bandwidth == 0.03


def test_the_integral_stays_the_default():
    p, y = _sample(2000, 904)
    assert calibr.smece(p, y) == calibr.smece(p, y, method="integral")
    assert calibr.smece(p, y) != calibr.smece(p, y, method="relplot")
    default, integral = calibr.smece_curve(p, y), calibr.smece_curve(p, y, method="integral")
    np.testing.assert_array_equal(default.y, integral.y)
    assert default.smece == integral.smece


@pytest.mark.parametrize("func", [calibr.smece, calibr.smece_curve])
@pytest.mark.parametrize(("method", "shown"), [("rms", "'rms'"), ("Relplot", "'Relplot'"),
                                               (None, "None")])
def test_unknown_method_is_refused(func, method, shown):
    with pytest.raises(InputError, match=(
        "^`method` must be one of 'integral', 'relplot'; got " + shown + r"\.$"
    )):
        func([0.2, 0.7], [0, 1], method=method)


# ------------------------------------------------------------------ the curve


def _curve_oracle(p, y, sigma, mesh):
    a = np.zeros_like(mesh)
    d = np.zeros_like(mesh)
    for xi, yi in zip(p, y, strict=True):
        k = reflected_kernel(mesh, xi, sigma)
        a += (yi - xi) * k
        d += k
    return mesh + a / d, d / len(p)


@pytest.mark.parametrize("sigma", [0.2, 0.05, 0.01])
def test_curve_matches_the_oracle(sigma):
    p, y = _sample(50, 700)
    p[:3] = [0.0, 1.0, 1.0]
    curve = calibr.smece_curve(p, y, bandwidth=sigma, points=101)
    mu, density = _curve_oracle(p, y, sigma, curve.x)
    ok = ~np.isnan(curve.y)
    assert ok.mean() > 0.8
    np.testing.assert_allclose(curve.density, density, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(curve.y[ok], mu[ok], atol=1e-5)
    assert curve.smece == calibr.smece(p, y, bandwidth=sigma)
    np.testing.assert_array_equal(curve.x, np.linspace(0, 1, 101))


def test_curve_matches_relplot():
    """relplot's centred smoother (CenteredRegressor(KernelSmoother), as its
    reliability_diagram helper fits it) on its 200-point mesh, and its density
    (kde). relplot adds 1e-4 to the kernel sums before dividing, which matters
    only where the density is tiny."""
    from relplot.estimators import CenteredRegressor, KernelSmoother
    from relplot.kernels import ReflectedGaussianKernel

    p, y = _sample(20_000, 701, lo=0.002, hi=0.998)
    curve = calibr.smece_curve(p, y)
    sigma = curve.bandwidth
    model = CenteredRegressor(KernelSmoother(ReflectedGaussianKernel(sigma)))
    model.fit(p.reshape(-1, 1), y)
    mu = model.predict(curve.x.reshape(-1, 1))
    density = ReflectedGaussianKernel(sigma).kde(p, curve.x)
    np.testing.assert_allclose(curve.y, mu, atol=2e-3)
    # relplot's kde is its grid of masses times the Gaussian density at 1/1000 steps
    np.testing.assert_allclose(curve.density[1:-1], density[1:-1], rtol=5e-3)


def test_curve_is_nan_only_where_there_is_no_density():
    curve = calibr.smece_curve([0.5, 0.52], [1, 0], bandwidth=0.01, points=11)
    assert np.isnan(curve.y[[0, 1, 9, 10]]).all()
    assert np.isfinite(curve.y[5])
    assert np.all(curve.density >= 0)


def test_grid_is_the_smallest_power_of_two_of_step_at_most_sigma_over_400():
    """``nodes(sigma)`` is the smallest power of two m with 1/m <= sigma/400, and at least
    1024 (docs/smece.md).

    400 / 1024 = 0.390625 needs exactly 1024 intervals; a bandwidth just below it needs
    2048; 400 / 2**19 is the smallest bandwidth's grid.
    """
    assert _smooth.nodes(0.390625) == 1024
    assert _smooth.nodes(0.390625 * (1 - 2**-40)) == 2048
    assert _smooth.nodes(400 / 2048) == 2048
    assert _smooth.nodes(1.0) == 1024 and _smooth.nodes(50.0) == 1024
    assert _smooth.nodes(400 / 2**19) == 2**19
    assert _smooth.nodes(1e-3) == 2**19


def test_smece_curve_density_floor_is_1e_8_of_the_maximum():
    """smece_curve() is NaN exactly where the smoothed density is below 1e-8 of its
    maximum.

    One prediction at 0.2, sigma 0.05: the density is a Gaussian bump, at distance t
    ``exp(-t^2 / (2 sigma^2))`` of its peak; the mesh of 2001 points has points whose
    ratio lies in [1.2e-8, 1.9e-8), finite with a floor of 1e-8 and NaN with one of
    2e-8.
    """
    curve = calibr.smece_curve([0.2], [1], bandwidth=0.05, points=2001)
    ratio = curve.density / np.max(curve.density)
    assert np.any((ratio >= 1.2e-8) & (ratio < 1.9e-8))
    assert np.all(np.isfinite(curve.y[ratio >= 1.01e-8]))
    assert np.all(np.isnan(curve.y[ratio < 0.99e-8]))
    assert np.isnan(curve.y).sum() > 900  # beyond 0.2 + 6 sigma


def test_smece_curve_points_bounds_and_default():
    """smece_curve() evaluates 200 points unless told otherwise, and takes from 2 to
    1,000,000."""
    p, y = [0.2, 0.6, 0.7], [0, 1, 1]
    assert calibr.smece_curve(p, y, bandwidth=0.1).x.shape == (200,)
    assert calibr.smece_curve(p, y, bandwidth=0.1, points=2).x.tolist() == [0.0, 1.0]
    assert calibr.smece_curve(p, y, bandwidth=0.1, points=1_000_000).y.shape == (1_000_000,)
    with pytest.raises(InputError, match=r"^`points` must be an integer from 2 to 1,000,000; "
                                         r"got 1000001\.$"):
        calibr.smece_curve(p, y, bandwidth=0.1, points=1_000_001)


def test_smece_curve_result_is_frozen():
    """The curve smece_curve() returns is frozen: its fields cannot be reassigned."""
    import dataclasses

    curve = calibr.smece_curve([0.2, 0.6], [0, 1], bandwidth=0.1, points=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        curve.bandwidth = 0.2


# ------------------------------------------------------------------ inputs


def test_input_forms_agree():
    p, y = _sample(500, 800)
    ref = calibr.smece(p, y)
    assert calibr.smece(pd.Series(p), pd.Series(y.astype(bool))) == ref
    assert calibr.smece(p.tolist(), y.tolist()) == ref
    assert calibr.smece(p, np.where(y == 1, "yes", "no"), classes=("no", "yes")) == ref
    with_nan = np.append(p, np.nan)
    assert calibr.smece(with_nan, np.append(y, 1), na_rm=True) == ref
    perm = np.random.default_rng(0).permutation(500)
    assert calibr.smece(p[perm], y[perm], bandwidth=0.05) == pytest.approx(
        calibr.smece(p, y, bandwidth=0.05), rel=ORDER_RTOL)


def test_a_missing_value_is_refused_unless_na_rm():
    """``na_rm=False`` is the default of both functions: a missing ``p`` raises."""
    message = ("^`p` must not contain missing values; 1 value is missing, the first at "
               "position 1. Pass na_rm=True")
    for fn in (calibr.smece, calibr.smece_curve):
        with pytest.raises(InputError, match=message):
            fn([0.2, np.nan, 0.7], [0, 1, 1])


BAD_BANDWIDTH = '`bandwidth` must be "auto" or a finite number of at least 0.001; got '


@pytest.mark.parametrize("value, shown", [
    (0, "0"), (-0.1, "-0.1"), (5e-4, "0.0005"), (math.nan, "nan"), (math.inf, "inf"),
    ("median", "'median'"), ("Auto", "'Auto'"), (True, "True"), (None, "None"),
])
def test_bad_bandwidth(value, shown):
    for func in (calibr.smece, calibr.smece_curve):
        with pytest.raises(InputError, match=f"^{BAD_BANDWIDTH}{shown}\\.$".replace("(", r"\(")):
            func([0.2, 0.7], [0, 1], bandwidth=value)


def test_bad_options_and_data_name_the_argument():
    with pytest.raises(InputError, match="^`type` must be one of 'confidence', 'classwise'; "
                                         "got 'canonical'.$"):
        calibr.smece([0.2, 0.7], [0, 1], type="canonical")
    with pytest.raises(InputError, match="^`points` must be an integer from 2 to 1,000,000; "
                                         "got 1.$"):
        calibr.smece_curve([0.2, 0.7], [0, 1], points=1)
    with pytest.raises(InputError, match="^`na_rm` must be"):
        calibr.smece([0.2, 0.7], [0, 1], na_rm="yes")
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]"):
        calibr.smece([0.2, 1.7], [0, 1])
    with pytest.raises(InputError, match="^`p` and `y` must not be empty"):
        calibr.smece([], [])
    with pytest.raises(InputTypeError, match="^`p`"):
        calibr.smece(["a", "b"], [0, 1])
    with pytest.raises(TypeError):
        calibr.smece([0.2, 0.7], [0, 1], 0.1)  # the options are keyword-only


def test_inputs_are_not_changed():
    p, y = _sample(100, 900)
    pm, ym = _multi(100, 3, seed=901)
    copies = [a.copy() for a in (p, y, pm, ym)]
    calibr.smece(p, y)
    calibr.smece_curve(p, y)
    calibr.smece(pm, ym, classes=range(3), type="classwise")
    with pytest.raises(InputError):
        calibr.smece(p, y, bandwidth=0)
    for a, b in zip((p, y, pm, ym), copies, strict=True):
        np.testing.assert_array_equal(a, b)


def test_grid_resolution_follows_the_bandwidth():
    # the documented accuracy rests on a step of at most sigma / 400
    for sigma in (1.0, 0.3, 0.05, 2.0**-9, 1e-3):
        m = _smooth.nodes(sigma)
        assert 1.0 / m <= sigma / _smooth.NODES_PER_SIGMA and m >= _smooth.MIN_NODES


def test_integral_of_the_absolute_value_splits_at_sign_changes():
    # the exact integral of |linear interpolant| of the nodes (unit step)
    assert _smooth._integral_abs(np.array([1.0, -1.0])) == 0.5
    assert _smooth._integral_abs(np.array([3.0, -1.0, 0.0, 2.0])) == pytest.approx(
        (9 + 1) / 8 + 0.5 + 1.0)


def test_wrapped_kernel_series_agree():
    # sigma > 1 uses the Fourier series of the wrapped Gaussian, below the images
    d = np.arange(64) / 32
    for sigma in (0.7, 1.0, 1.3):
        images = sum(np.exp(-0.5 * ((d - 2 * k) / sigma) ** 2) for k in range(-30, 31))
        images /= sigma * math.sqrt(2 * math.pi)
        np.testing.assert_allclose(_smooth._circle_kernel(32, sigma), images, rtol=1e-13)
    # a huge bandwidth: a flat kernel, the absolute mean residual
    p, y = _sample(50, 13)
    for sigma in (1e3, 2.0**70, 1e300):
        assert calibr.smece(p, y, bandwidth=sigma) == pytest.approx(abs(np.mean(y - p)),
                                                                    rel=1e-12)


def test_reliability_diagram_draws_the_smoothed_curve():
    require("matplotlib")
    import pandas as pd

    from calibr.plot import reliability_diagram

    gen = np.random.default_rng(12)
    p = gen.random(400)
    y = gen.random(400) < p**2
    curve = calibr.smece_curve(p, y)
    fig = reliability_diagram(calibr.calibration_table(p, y), smooth=curve)
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("smoothed")]
    assert np.array_equal(line.get_xdata(), curve.x, equal_nan=True)
    assert np.array_equal(line.get_ydata(), curve.y, equal_nan=True)
    assert line.get_label() == (f"smoothed (bandwidth {curve.bandwidth:.3g}, "
                                f"smECE {curve.smece:.3g})")
    df = pd.DataFrame({"m": np.repeat(["a", "b"], 200), "p": p, "y": y})
    table = calibr.calibration_table("p", "y", data=df.groupby("m"))
    fig = reliability_diagram(table, smooth={("b",): curve})
    panels = [ax for ax in fig.axes if ax.get_label() == "reliability"]
    smoothed = [[ln.get_label().startswith("smoothed") for ln in ax.get_lines()]
                for ax in panels]
    assert [any(s) for s in smoothed] == [False, True]
    # the panel's legend gives the bandwidth and smooth ECE of its own curve
    assert panels[0].get_legend() is None
    assert [t.get_text() for t in panels[1].get_legend().get_texts()] == [line.get_label()]
    for bad in (3, [curve], {("a",): 1.0}):
        with pytest.raises(calibr.InputTypeError, match="^`smooth` must be None"):
            reliability_diagram(table, smooth=bad)
