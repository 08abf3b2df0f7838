"""``smece()`` and ``smece_curve()``: the smooth ECE of Błasiok & Nakkiran (2023)
and its smoothed reliability curve (``docs/smece.md``).

Thin public functions: option checks, the shared input layer
(:func:`calibr._input.prepare`), then, per bandwidth, one compiled pass of
linear binning (:func:`calibr._kernels.smooth.bin_residuals`) and numpy on the
grid: the reflected Gaussian convolution as a circular convolution by FFT, and
the integral of its absolute value. ``method="relplot"`` dispatches to relplot's
discretisation instead (``calibr/_metrics/smooth_relplot.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._input import (
    FLAG,
    InputError,
    Integer,
    Options,
    Prepared,
    fmt,
    prepare,
    real_value,
    validate_params,
)
from .._kernels.smooth import bin_residuals
from .._kernels.top_label import top_label
from .kernel import as_hits
from .smooth_relplot import RelplotGrids, relplot_curve, relplot_smece_at

__all__ = ["SmoothCurve", "smece", "smece_curve"]

_TYPES = ("confidence", "classwise")
#: ``method=``: the continuous integral (the default) or relplot 1.0.3's
#: discretisation of it (``docs/smece.md``).
_METHODS = ("integral", "relplot")

#: Grid nodes per bandwidth: the grid step is at most ``bandwidth / NODES_PER_SIGMA``.
#: The error of linear binning plus the trapezoidal rule is at most about
#: ``0.2 * (step / bandwidth) ** 2`` (``docs/smece.md``, "Accuracy"): 1.3e-6 here.
NODES_PER_SIGMA = 400
#: The coarsest grid (large bandwidths): 1/1024 of [0, 1].
MIN_NODES = 1024
#: The smallest fixed bandwidth, relplot's ``eps``: its grid has 2**19 intervals
#: (an FFT of a million points, tens of milliseconds).
MIN_BANDWIDTH = 1e-3
#: relplot's ``smECE(eps=0.001)``: bandwidths below it count as "large enough"
#: in the search, and the search's 10 halvings resolve the bandwidth to 2**-10.
SEARCH_EPS = 0.001
SEARCH_STEPS = 10
#: Where the smoothed density is below this fraction of its maximum, the smoothed
#: mean of ``smece_curve`` is NaN: the FFT's rounding (about 1e-15 of the
#: maximum) would dominate the ratio of two such small sums.
DENSITY_FLOOR = 1e-8


def _bandwidth(value: Any, name: str) -> float | str:
    """``"auto"`` or a finite number of at least MIN_BANDWIDTH."""
    if isinstance(value, str):
        if value == "auto":
            return "auto"
    else:
        h = real_value(value)
        if h is not None and math.isfinite(h) and h >= MIN_BANDWIDTH:
            return h
    raise InputError(
        f'`{name}` must be "auto" or a finite number of at least {MIN_BANDWIDTH}; '
        f"got {fmt(value)}.",
        param=name
    )


def nodes(sigma: float) -> int:
    """Grid intervals ``m`` on [0, 1] for bandwidth ``sigma`` (step ``1/m``): the
    smallest power of two of at least ``NODES_PER_SIGMA / sigma`` and MIN_NODES,
    so that the grids of different bandwidths are nested (see :class:`_Binned`)."""
    target = max(MIN_NODES, math.ceil(NODES_PER_SIGMA / sigma))
    return 1 << (target - 1).bit_length()


def _restrict(w: np.ndarray) -> np.ndarray:
    """Linear binning on the grid of step ``2/m`` from linear binning on the grid
    of step ``1/m`` (``w`` of length ``m + 1``, ``m`` even): a fine node between
    two coarse ones gives half of its mass to each. Exact: the coarse hat
    functions are linear between fine nodes, so linear interpolation on the fine
    grid reproduces them."""
    coarse = w[0::2].copy()
    odd = 0.5 * w[1::2]
    coarse[:-1] += odd
    coarse[1:] += odd
    return coarse


class _Binned:
    """The linearly binned residuals and counts of one sample on the grids that
    a bandwidth search asks for: one compiled pass over the data onto a fine
    grid (at least ``SEARCH_NODES`` intervals), then for each coarser grid an
    exact restriction of the grid arrays (O(grid), not O(n))."""

    def __init__(self, x: np.ndarray, hits: np.ndarray, fine: int = 1) -> None:
        self.x, self.hits, self.fine = x, hits, fine
        self.grids: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        if m not in self.grids:
            finer = [g for g in self.grids if g > m]
            if finer:
                g = min(finer)
                wr, wd = self.grids[g]
                while g > m:
                    wr, wd, g = _restrict(wr), _restrict(wd), g // 2
                    self.grids[g] = (wr, wd)
            else:
                top = max(m, self.fine)
                self.grids[top] = bin_residuals(self.x, self.hits, top)
                return self(m)
        return self.grids[m]


#: The first grid of the automatic bandwidth's search: bandwidths down to
#: NODES_PER_SIGMA / SEARCH_NODES (0.003) are restricted from it.
SEARCH_NODES = 1 << 17


def _circle_kernel(m: int, sigma: float) -> np.ndarray:
    """The Gaussian density of scale ``sigma`` wrapped onto the circle of length
    2 (all its images ``d - 2k``), at the ``2m`` node offsets ``d = j / m``."""
    d = np.arange(2 * m) / m
    if sigma > 1.0:  # the Fourier series of the wrapped Gaussian: few terms, any sigma
        out = np.full(2 * m, 0.5)
        for k in range(1, math.ceil(12.5 / (math.pi * sigma)) + 1):
            z = math.pi * sigma * k
            if z > 12.5:  # exp(-78) and beyond: below rounding
                break
            out += math.exp(-0.5 * z * z) * np.cos(math.pi * k * d)
        return out
    reach = math.ceil(10.0 * sigma)  # d - 2k for d in [0, 2): every image within 20 sigma
    out = np.zeros(2 * m)
    for k in range(-reach, reach + 2):
        z = (d - 2.0 * k) / sigma
        out += np.exp(-0.5 * z * z)
    return out / (math.sqrt(2.0 * math.pi) * sigma)


def _smooth_on_grid(binned: _Binned, sigma: float) -> tuple[np.ndarray, ...]:
    """``(A, D, m)``: at the nodes ``j / m``, ``j = 0..m``, the kernel sums
    ``A(t) = sum_i (y_i - x_i) K(t, x_i)`` and ``D(t) = sum_i K(t, x_i)`` of the
    linearly binned sample, with K the reflected Gaussian kernel of
    ``docs/smece.md``."""
    m = nodes(sigma)
    wr, wd = binned(m)
    # reflection at 0 and 1 = a circle of length 2 carrying the sample and its
    # mirror image 2 - x; masses at 0 and 1 are their own mirror images
    both = np.empty((2, 2 * m))
    for row, w in ((0, wr), (1, wd)):
        both[row, : m + 1] = w
        both[row, m + 1:] = w[m - 1:0:-1]
        both[row, 0] *= 2.0
        both[row, m] *= 2.0
    spectrum = np.fft.rfft(both, axis=1) * np.fft.rfft(_circle_kernel(m, sigma))
    conv = np.fft.irfft(spectrum, n=2 * m, axis=1)[:, : m + 1]
    return conv[0], conv[1], m


def _integral_abs(a: np.ndarray) -> float:
    """Trapezoidal integral (unit step) of ``|a|`` between the nodes, exact for the
    piecewise-linear interpolant (a sign change splits its interval at the zero)."""
    left, right = a[:-1], a[1:]
    same = left * right >= 0.0
    both = np.abs(left) + np.abs(right)
    with np.errstate(invalid="ignore", divide="ignore"):
        crossing = (left * left + right * right) / both
    return float(0.5 * np.sum(np.where(same, both, crossing)))


def _trapezoid(a: np.ndarray) -> float:
    return float(np.sum(a) - 0.5 * (a[0] + a[-1]))


def _smece_at(binned: _Binned, sigma: float) -> float:
    a, d, _ = _smooth_on_grid(binned, sigma)
    return _integral_abs(a) / _trapezoid(d)


def _search(value: Callable[[float], float]) -> float:
    """relplot's bandwidth search (``docs/smece.md``, "Automatic bandwidth"):
    1 if ``1 >= smECE_1``, else 10 bisection steps on [0, 1] for the fixed point
    ``sigma = smECE_sigma``; returns the upper end (a ``sigma >= smECE_sigma``)."""

    def small(alpha: float) -> bool:  # the side of the fixed point where sigma < smECE_sigma
        return alpha < SEARCH_EPS or alpha < value(alpha)

    if small(1.0):
        return 1.0
    start, end = 1.0, 0.0
    for _ in range(SEARCH_STEPS):
        mid = (start + end) / 2
        if small(mid):
            end = mid
        else:
            start = mid
    return start


def _binary_smece(binned: Any, bandwidth: float | str,
                  at: Callable[[Any, float], float] | None = None) -> tuple[float, float]:
    """(smooth ECE, bandwidth used) of a binned sample, ``at(binned, sigma)``
    being the smooth ECE at one bandwidth (calibr's integral by default)."""
    at = _smece_at if at is None else at
    if bandwidth != "auto":
        return at(binned, bandwidth), bandwidth
    seen: dict[float, float] = {}

    def value(sigma: float) -> float:
        if sigma not in seen:
            seen[sigma] = at(binned, sigma)
        return seen[sigma]

    sigma = _search(value)
    return value(sigma), sigma


def _binned(x: np.ndarray, hits: np.ndarray, bandwidth: float | str) -> _Binned:
    fine = SEARCH_NODES if bandwidth == "auto" else 1
    return _Binned(np.ascontiguousarray(x, dtype=np.float64), hits, fine)


def _relplot_grids(x: np.ndarray, hits: np.ndarray, bandwidth: float | str) -> RelplotGrids:
    return RelplotGrids(x, hits)


#: ``method`` -> (the binned sample of one column, the smooth ECE at one bandwidth)
_METHOD_TABLE: dict[str, tuple[Callable[..., Any], Callable[[Any, float], float]]] = {
    "integral": (_binned, _smece_at),
    "relplot": (_relplot_grids, relplot_smece_at),
}


def _scores(prep: Prepared, type: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (scores, hits) pairs that the smooth ECE is computed on."""
    if prep.binary:
        return [(prep.p, as_hits(prep.y))]
    if type == "confidence":
        return [top_label(prep.p, prep.y)]
    columns = np.array(prep.p.T, dtype=np.float64, order="C")
    return [(columns[k], (prep.y == k).view(np.uint8)) for k in range(prep.k)]


@validate_params(bandwidth=_bandwidth, type=Options(*_TYPES), method=Options(*_METHODS),
                 na_rm=FLAG)
def smece(
    p: Any,
    y: Any,
    *,
    bandwidth: float | str = "auto",
    type: str = "confidence",
    method: str = "integral",
    classes: Sequence | None = None,
    na_rm: bool = False,
) -> float:
    r"""Smooth ECE (smECE) of Błasiok & Nakkiran (2023).

    The absolute residual ``y - p``, smoothed by a Gaussian kernel reflected at
    0 and 1, integrated against the smoothed density of the predictions.

    Parameters
    ----------
    p : array-like, pandas Series or DataFrame
        Predicted probabilities: a vector of P(y = 1) for binary problems, or a
        matrix (or DataFrame) with one column per class whose rows sum to 1
        within 1e-6.
    y : array-like, pandas Series or Categorical
        Outcomes: 0/1 or booleans for a vector ``p``; for a matrix, integer codes
        1..K (as in R), a Categorical whose categories are the columns, labels
        equal to the column names of a DataFrame ``p`` (matched by name), or
        labels listed in ``classes``.
    bandwidth : float or "auto", default "auto", keyword-only
        The standard deviation sigma of the Gaussian kernel: a finite number of
        at least 0.001 (relplot's ``eps``), or ``"auto"`` for the fixed point sigma* with
        ``smECE_sigma* = sigma*`` of Błasiok & Nakkiran (2023), found by
        relplot's bisection (``docs/smece.md``, "Automatic bandwidth"); for
        ``type="classwise"``, each column its own.
    type : {"confidence", "classwise"}, default "confidence", keyword-only
        Multiclass form; ignored for a vector ``p``. ``"confidence"``: the
        binary smooth ECE of the top-label confidence ``max_k p_ik`` against
        the correctness of the first maximal column (what relplot computes
        from ``multiclass_logits_to_confidences``); ``"classwise"``: the mean
        over the columns of the binary smooth ECE of column k against 1{y = k}.
    method : {"integral", "relplot"}, default "integral", keyword-only
        ``"integral"``: the continuous integral of the definition, to about
        1e-6 (Notes). ``"relplot"``: relplot 1.0.3's discretisation of it, the
        numbers ``relplot.smECE`` and ``relplot.smECE_sigma`` give (to
        rounding: measured 5e-15 relative, the same automatic bandwidth),
        with which published values were computed; they differ from the
        integral by up to 1-3% at small bandwidths and more where
        predictions lie at 0 or 1 (``docs/smece.md``, "relplot").
    classes : sequence, optional, keyword-only
        The label of each column of ``p`` (e.g. ``classes=range(K)`` for 0-based
        labels), or ``(negative, positive)`` for a vector ``p``.
    na_rm : bool, default False, keyword-only
        Drop observations with a missing value instead of raising.

    Returns
    -------
    float
        The smooth ECE, in [0, 1].

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument (``bandwidth``
        neither ``"auto"`` nor a finite number of at least 0.001, ``method``
        neither ``"integral"`` nor ``"relplot"``).
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    See Also
    --------
    smece_curve : the smoothed reliability curve, density and bandwidth.
    ece : the binned ECE.

    Notes
    -----
    With residuals :math:`r_i = y_i - p_i` and the reflected Gaussian kernel
    :math:`K_\sigma(t, x) = \sum_{k \in \mathbb{Z}} \phi_\sigma(t - x - 2k)
    + \phi_\sigma(t + x - 2k)` (the Gaussian density folded onto [0, 1] by
    reflections at 0 and 1, so that :math:`\int_0^1 K_\sigma(t, x)\,dt = 1`),

    .. math::

        \mathrm{smECE}_\sigma = \frac{1}{n} \int_0^1
            \Big| \sum_i r_i K_\sigma(t, p_i) \Big| \, dt ,

    which is :math:`\int |\hat r(t)| \hat\delta(t)\,dt` with the smoothed
    residual :math:`\hat r` and the smoothed density :math:`\hat\delta`.

    calibr computes this continuous quantity to about 1e-6 (not relplot's
    discretisation): linear binning onto a grid of step at most sigma/400, the
    reflected convolution as an exact circular convolution on a circle of
    length 2 (FFT), and the trapezoidal rule on ``|A|`` split at its sign
    changes, normalised by the same rule's integral of the density; the error
    is at most about ``0.2 (step / sigma)^2`` (1.3e-6). relplot's ``smECE``
    differs from it by its own discretisation (mostly its 200-point evaluation
    mesh): measured up to 0.4% relative at a fixed bandwidth of at most 0.15
    for n >= 1000 and 1.7% for small n, more at larger bandwidths (its kernel
    window of +-0.5), and more where predictions lie at or within 1/1000 of 0
    or 1, whose mass relplot counts once where the reflection counts it twice
    (``docs/smece.md``, "relplot"). The automatic bandwidth is relplot's
    search, so both end at the same multiple of 2**-10 unless relplot's error
    moves its fixed point.

    References
    ----------
    Błasiok, J., & Nakkiran, P. (2023). Smooth ECE: Principled reliability
    diagrams via kernel smoothing. arXiv:2309.12236.

    Examples
    --------
    >>> import numpy as np
    >>> import calibr
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(1000)
    >>> y = (rng.random(1000) < p ** 1.5).astype(int)
    >>> round(calibr.smece(p, y), 4)
    0.0816
    >>> round(calibr.smece(p, y, bandwidth=0.05), 4)
    0.0845

    relplot's numbers (``relplot.smECE(p, y)``):

    >>> round(calibr.smece(p, y, method="relplot"), 4)
    0.0814

    A probability matrix, its labels coded 1..K as in R:

    >>> prob = rng.dirichlet(np.ones(3), 500)
    >>> labels = rng.integers(1, 4, 500)
    >>> round(calibr.smece(prob, labels), 4)
    0.2876
    >>> round(calibr.smece(prob, labels, type="classwise"), 4)
    0.1635
    """
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    binned, at = _METHOD_TABLE[method]
    values = [_binary_smece(binned(x, hits, bandwidth), bandwidth, at)[0]
              for x, hits in _scores(prep, type)]
    return float(np.mean(values)) if len(values) > 1 else float(values[0])


@dataclass(frozen=True)
class SmoothCurve:
    """The smoothed reliability curve of :func:`calibr.smece_curve`.

    Attributes
    ----------
    x : numpy.ndarray
        The mesh of confidences, ``points`` equally spaced values from 0 to 1.
    y : numpy.ndarray
        The smoothed mean outcome at each ``x``:
        ``x + sum_i (y_i - p_i) K(x, p_i) / sum_i K(x, p_i)``; NaN where the
        smoothed density is below 1e-8 of its maximum.
    density : numpy.ndarray
        The smoothed density of the predictions at each ``x``,
        ``(1/n) sum_i K(x, p_i)`` (it integrates to 1 over [0, 1]).
    bandwidth : float
        The bandwidth sigma used.
    smece : float
        The smooth ECE at that bandwidth.
    """

    x: np.ndarray
    y: np.ndarray
    density: np.ndarray
    bandwidth: float
    smece: float


@validate_params(bandwidth=_bandwidth, points=Integer(2, 1_000_000),
                 method=Options(*_METHODS), na_rm=FLAG)
def smece_curve(
    p: Any,
    y: Any,
    *,
    bandwidth: float | str = "auto",
    points: int = 200,
    method: str = "integral",
    classes: Sequence | None = None,
    na_rm: bool = False,
) -> SmoothCurve:
    r"""The smoothed reliability curve of the smooth ECE.

    The kernel-smoothed mean outcome as a function of the confidence, and the
    smoothed density of the predictions, with the kernel and bandwidth of
    :func:`calibr.smece`. By default the smoothed residual added to the
    diagonal (relplot's ``CenteredRegressor(KernelSmoother(...))``); with
    ``method="relplot"``, relplot's ``prepare_rel_diagram`` main line without
    its bootstrap (``mu``, ``density``, ``sigma`` and ``ce``).

    Parameters
    ----------
    p : array-like, pandas Series or DataFrame
        Predicted probabilities: a vector of P(y = 1), or a matrix with one
        column per class whose rows sum to 1 within 1e-6, reduced to the
        top-label confidence and correctness (the confidence form).
    y : array-like, pandas Series or Categorical
        Outcomes, as for :func:`calibr.smece`.
    bandwidth : float or "auto", default "auto", keyword-only
        As for :func:`calibr.smece`.
    points : int, default 200, keyword-only
        The number of mesh points from 0 to 1 (relplot's 200), 2 to 1,000,000.
    method : {"integral", "relplot"}, default "integral", keyword-only
        ``"integral"``: the sums of :func:`calibr.smece` on its grid,
        ``y = x + A(x) / D(x)``. ``"relplot"``: relplot 1.0.3's
        ``prepare_rel_diagram(p, y, plot_confidence_band=False)``: the
        bandwidth and smooth ECE of ``smece(method="relplot")``, and on the
        mesh the kernel-smoothed outcome ``Y(x) / (D(x) + 1e-4)`` on relplot's
        grid, not centred on the diagonal (relplot's default bootstrap
        bagging of that line is random, and left out).
    classes : sequence, optional, keyword-only
        The label of each column of ``p``, or ``(negative, positive)`` for a
        vector ``p``.
    na_rm : bool, default False, keyword-only
        Drop observations with a missing value instead of raising.

    Returns
    -------
    SmoothCurve
        ``x``, ``y`` (the smoothed mean outcome), ``density``, ``bandwidth`` and
        ``smece``.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    See Also
    --------
    smece : the smooth ECE alone, and the multiclass forms.

    Notes
    -----
    The sums are those of :func:`calibr.smece` on its grid (step at most
    sigma/400), interpolated linearly to the mesh; the curve's ``y`` is
    ``x + A(x) / D(x)`` (``docs/smece.md``). relplot adds 1e-4 to ``D``, which
    pulls its centred curve towards the diagonal (and its uncentred
    ``prepare_rel_diagram`` line towards 0) where there are no predictions;
    ``method="integral"`` does not, and reports NaN where the density is too
    small to divide by.

    Examples
    --------
    >>> import numpy as np
    >>> import calibr
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(1000)
    >>> y = (rng.random(1000) < p ** 1.5).astype(int)
    >>> curve = calibr.smece_curve(p, y)
    >>> curve.x.shape, curve.y.shape, curve.density.shape
    ((200,), (200,), (200,))
    >>> round(curve.smece, 4) == round(calibr.smece(p, y), 4)
    True
    """
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    ((x, hits),) = _scores(prep, "confidence")
    mesh = np.linspace(0.0, 1.0, points)
    if method == "relplot":
        grids = RelplotGrids(x, hits)
        value, sigma = _binary_smece(grids, bandwidth, relplot_smece_at)
        mu, density = relplot_curve(grids, sigma, mesh)
        return SmoothCurve(x=mesh, y=mu, density=density, bandwidth=float(sigma),
                           smece=float(value))
    binned = _binned(x, hits, bandwidth)
    value, sigma = _binary_smece(binned, bandwidth)
    a, d, m = _smooth_on_grid(binned, sigma)
    grid = np.arange(m + 1) / m
    a_mesh = np.interp(mesh, grid, a)
    d_mesh = np.maximum(np.interp(mesh, grid, d), 0.0)  # the FFT's rounding can dip below 0
    reliable = d_mesh >= DENSITY_FLOOR * float(np.max(d))
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.where(reliable, mesh + a_mesh / d_mesh, np.nan)
    return SmoothCurve(x=mesh, y=mu, density=d_mesh / prep.n, bandwidth=float(sigma),
                       smece=float(value))
