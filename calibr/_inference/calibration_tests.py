"""``calibration_test()``: is a model miscalibrated at all? Hypothesis tests of
calibration (``docs/calibration_tests.md`` has every formula and its source).

A thin public function (argument rules, the shared input layer, a dispatch
table of methods) over the SKCE kernels: the scalar forms of the asymptotic
SKCE test resample with :mod:`calibr._kernels.weighted_sums` in O(n) per
replicate after one sort.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _binning
from .._defaults import BINS_DEFAULT
from .._docs import shared_docs
from .._input import (
    BANDWIDTH,
    BINS,
    FLAG,
    MAX_RESAMPLES,
    RNG,
    InputError,
    Integer,
    Optional,
    Options,
    Prepared,
    arg,
    defaults,
    lazy_backend,
    prepare,
    validate_params,
    warn,
)
from .._kernels._threads import chunk_bounds, run_chunks
from .._kernels.canonical import canonical_pair_sum
from .._kernels.scalar_sums import scalar_pair_sum
from .._kernels.skce import estimate_from_sums
from .._kernels.top_label import top_label
from .._kernels.weighted_sums import (
    canonical_quadratic_forms,
    gap_factors,
    skce_test_replicates,
    sorted_scalars,
    weighted_row_sums,
)
from .._metrics.valprob import spiegelhalter_from_sums
from .._registry import DEFAULT_METRIC, METRICS
from .bootstrap import CANONICAL_WARN_COST, REPLICATE_CHUNKS

__all__ = ["MIN_N", "WEIGHTED", "CalibrationTestResult", "calibration_test"]

TEST_METHODS = ("skce", "skce_block", "consistency", "spiegelhalter", "hosmer_lemeshow", "ks",
            "kuiper")
#: The metrics of consistency resampling: those of the registry that can be its
#: statistic (``calibr._registry``, ``consistency``).
_METRICS = tuple(name for name, info in METRICS.items() if info.consistency is not None)
#: The forms of ``type``: the SKCE tests' (``calibr.skce``'s), and the top-label
#: form of the binned metrics (consistency resampling of ``ece``, ``mce``,
#: ``calibration_error`` only).
_TOP_LABEL = "top-label"
_TYPES = ("canonical", "confidence", "classwise", _TOP_LABEL)
BINARY_ONLY = ("spiegelhalter", "hosmer_lemeshow")
#: The methods that take frequency weights (those of ``calibr.ecce``).
WEIGHTED = ("ks", "kuiper")
#: The methods whose p-value comes from resampling (its resolution is 1 / n_resamples):
#: the reports give their ``n_resamples``.
RESAMPLING_TESTS = ("skce", "consistency")


def pvalue_resolution(method: str, options: dict[str, Any]) -> float | None:
    """The resolution of a test's p-value, ``1 / n_resamples`` for a test that
    resamples (``options``' or :func:`calibration_test`'s default), None for an
    analytic one (``docs/calibration_tests.md``, "Resolution of a resampled p-value")."""
    if method not in RESAMPLING_TESTS:
        return None
    return 1.0 / int({**defaults(calibration_test), **options}["n_resamples"])


#: The least number of observations from which each method holds its level: the
#: smallest n of the grid 5, 10, 20, 50, 100, 500 from which the upper 95% limit
#: of its type I error at 0.05 stays within 0.075 (Bradley's liberal criterion) in
#: ``validation/simulate_small_n.py`` (``docs/calibration_tests.md``, "Small
#: samples"). A test run on fewer rows is still run, and flagged: ``small_n``.
MIN_N = {"skce": 20, "skce_block": 20, "consistency": 1000, "spiegelhalter": 5,
         "hosmer_lemeshow": 5, "ks": 5, "kuiper": 5}

#: Uniform numbers drawn and held at once (float64, 32 MB): the replicates of
#: the scalar SKCE test go to the kernel in batches of this many values.
_IDX_BATCH = 1 << 22
#: At most this many Hosmer-Lemeshow groups (R's quantile() of that many
#: probabilities; far more than rows is meaningless: groups of tied p merge).
MAX_GROUPS = 10**5
#: Resampling counts held at once in the canonical SKCE test (float64, 128 MB).
_COUNTS_BATCH = 1 << 24


@dataclass(frozen=True, eq=False)
class CalibrationTestResult:
    """The outcome of :func:`calibr.calibration_test` (scipy's field names).

    Attributes
    ----------
    statistic : float
        The test statistic (see :func:`calibration_test`, Notes, per method).
    pvalue : float
        The p-value of the null hypothesis "the predictions are calibrated".
    estimate : float
        The calibration error estimate the test is built on.
    method : str
        The method used.
    n : int
        The number of observations used (after ``na_rm``): rows, also with
        ``weights`` (not their total weight).
    type : str
        What the kernel or metric saw: ``"binary"`` for a vector ``p``, else
        ``"canonical"``, ``"confidence"`` or ``"classwise"`` (for consistency
        resampling with ``ece``/``mce``/``skce``, the metric's ``type``);
        ``"top-label"`` for consistency resampling in that form (a vector ``p``
        too).
    n_resamples : int or None
        Bootstrap or consistency resamples (``"skce"``, ``"consistency"``).
    bandwidth : float, tuple of float, str or None
        The kernel bandwidth: the value used by ``"skce"`` and ``"skce_block"``
        (``"median"`` resolved; one per column for ``"classwise"``), the option
        as given for consistency resampling with ``skce`` or ``mmce``.
    metric : str or None
        The metric of consistency resampling.
    stderr : float or None
        ``"skce_block"``: the standard error of the block mean.
    df : int or None
        ``"hosmer_lemeshow"``: degrees of freedom, ``groups - ddof``.
    groups : int or None
        ``"hosmer_lemeshow"``: the number of risk groups used.
    null_distribution : numpy.ndarray or None
        The ``n_resamples`` resampled statistics (``"skce"``, ``"consistency"``),
        read-only.
    """

    statistic: float
    pvalue: float
    estimate: float
    method: str
    n: int
    type: str
    n_resamples: int | None = None
    bandwidth: float | tuple[float, ...] | str | None = None
    metric: str | None = None
    stderr: float | None = None
    df: int | None = None
    groups: int | None = None
    null_distribution: np.ndarray | None = field(default=None, repr=False)

    @property
    def small_n(self) -> bool:
        """True when the test ran on fewer observations than the least n from which
        its method holds its level (the table ``MIN_N`` of
        ``calibr/_inference/calibration_tests.py``, ``docs/calibration_tests.md``,
        "Small samples"): its p-value is shown, but
        a calibrated model is rejected more often than the level says."""
        return self.n < MIN_N[self.method]

    def _repr_html_(self) -> str:
        """The fields as an HTML table, for notebooks (``calibr._display.repr``)."""
        from .._display.repr import result_html

        return result_html(self)


# --------------------------------------------------------------------------
# options


@dataclass(frozen=True)
class _Options:
    n_resamples: int
    rng: np.random.Generator
    bandwidth: float | str
    type: str | None
    metric: str
    bins: int
    estimator: str
    groups: int
    ddof: int


# --------------------------------------------------------------------------
# the public function


@validate_params(
    method=Options(*TEST_METHODS),
    n_resamples=Integer(1, MAX_RESAMPLES),
    rng=RNG,
    bandwidth=BANDWIDTH,
    type=Optional(Options(*_TYPES)),
    metric=Options(*_METRICS),
    bins=BINS,
    estimator=Options("uq", "ul", "biased"),
    groups=Integer(3, MAX_GROUPS),
    ddof=Integer(0, what="a nonnegative integer"),
    na_rm=FLAG,
)
@shared_docs
def calibration_test(
    p: Any,
    y: Any,
    method: str = "skce",
    *,
    n_resamples: int = 1000,
    rng: int | np.random.Generator | None = None,
    bandwidth: float | str = 0.2,
    type: str | None = None,
    metric: str = DEFAULT_METRIC,
    bins: int = BINS_DEFAULT,
    estimator: str = "uq",
    groups: int = 10,
    ddof: int = 2,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> CalibrationTestResult:
    r"""Test the null hypothesis that the predictions ``p`` are calibrated.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    method : str, default "skce"
        One of ``"skce"``, ``"skce_block"``, ``"consistency"``,
        ``"spiegelhalter"``, ``"hosmer_lemeshow"``, ``"ks"``, ``"kuiper"``.
        ``"skce"``: the asymptotic SKCE test (bootstrap); ``"skce_block"``: the
        asymptotic block SKCE test with blocks of 2 (a z test, no resampling);
        ``"consistency"``: consistency resampling of a metric;
        ``"spiegelhalter"``: Spiegelhalter's z test (binary only);
        ``"hosmer_lemeshow"``: the Hosmer-Lemeshow test on deciles of risk
        (binary only); ``"ks"`` and ``"kuiper"``: the cumulative calibration
        tests of Arrieta-Ibarra et al. (2022), asymptotic p-values of the
        sigma-scaled :func:`calibr.ecce` (no resampling). The default is
        ``"skce"``.
    n_resamples : int, default 1000, keyword-only
        Bootstrap or consistency resamples (``"skce"``, ``"consistency"``), at
        most 10,000,000.
    rng : None, int or numpy.random.Generator, keyword-only
        The random numbers of the resampling: a seed (the same seed gives the
        same result), a Generator (used as is: its state advances), or None
        for fresh entropy.
    bandwidth : float or "median", default 0.2, keyword-only
        Bandwidth of the Laplacian kernel, as in :func:`calibr.skce`
        (``"skce"``, ``"skce_block"``, and ``"consistency"`` with
        ``metric="skce"`` or ``"mmce"``).
    type : {"canonical", "confidence", "classwise", "top-label"}, optional, keyword-only
        Multiclass form, ignored for a vector ``p``. Default: that of
        :func:`calibr.skce` (``"canonical"``) for the SKCE tests, and the
        metric's own default for consistency resampling. ``"top-label"``
        (Gupta & Ramdas 2022) only for consistency resampling of a binned
        metric (``ece``, ``mce``, ``calibration_error``), and not ignored for a
        vector ``p`` (read as the columns ``(1 - p, p)``, as those metrics do).
    metric : str, default "ece", keyword-only
        The statistic of consistency resampling: the name of a registered
        metric (``calibr.frame.METRICS``), computed by the calibr function of
        that name with ``bins``, ``type``, ``estimator`` and
        ``bandwidth`` as they apply (``bins`` and ``type`` for ``ece``, ``mce``
        and ``calibration_error``; ``type``, ``estimator`` and ``bandwidth`` for
        ``skce``; ``bandwidth`` for ``mmce``; ``type`` for ``smece``, whose
        bandwidth is its own ``"auto"``).
    <calibr:test_bins>
    estimator : {"uq", "ul", "biased"}, default "uq", keyword-only
        ``estimator`` of ``skce`` in consistency resampling.
    groups : int, default 10, keyword-only
        Hosmer-Lemeshow: the number of quantile groups (deciles: 10); 3 to
        100,000.
    ddof : int, default 2, keyword-only
        Hosmer-Lemeshow: the statistic of G groups is referred to
        :math:`\chi^2_{G - \mathrm{ddof}}`. 2 (the default, as
        ``ResourceSelection::hoslem.test``) is for predictions fitted on the
        same data by a logistic regression; **use 0 for predictions made
        without these data** (a held-out validation set): under calibration
        the statistic is then :math:`\chi^2_G`, and with 2 a calibrated model
        is rejected too often (10% of the time at the 5% level with 10
        groups in a simulation; ``docs/calibration_tests.md``).
    <calibr:classes>
    <calibr:na_rm>
    weights : array-like, optional, keyword-only
        Frequency weights, one per row, for ``"ks"`` and ``"kuiper"`` only: a
        whole-number weight counts its row that many times, as
        :func:`calibr.ecce` takes them (``docs/definitions.md``, "Frequency
        weights"), so the test is that of the repeated rows. The other methods
        refuse them.

    Returns
    -------
    CalibrationTestResult
        A frozen result with ``statistic``, ``pvalue``, ``estimate``,
        ``method``, ``n``, ``type``, and as they apply ``n_resamples``,
        ``bandwidth``, ``metric``, ``stderr``, ``df``, ``groups`` and
        ``null_distribution`` (None otherwise); its property ``small_n`` says
        whether ``n`` is below the least n from which the method holds its
        level (``docs/calibration_tests.md``, "Small samples").

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument; a matrix ``p``
        with ``"spiegelhalter"`` or ``"hosmer_lemeshow"`` (binary only);
        ``weights`` with a method other than ``"ks"`` and ``"kuiper"``; fewer
        than 2 observations (``"skce"``) or 4 (``"skce_block"``); fewer than 3
        distinct risk groups for ``"hosmer_lemeshow"``; ``bandwidth="median"``
        when all predictions are equal.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, an ``rng`` of
        another type, or a generator, set, dict or string where a vector is
        expected.

    Warns
    -----
    UserWarning
        ``"skce"`` in the canonical form when :math:`n^2 (K + B)` exceeds
        1e11 (about a minute or more).
    RuntimeWarning
        When the statistic is undefined (zero variance) and the p-value NaN.

    Notes
    -----
    Every formula, with its source, is in ``docs/calibration_tests.md``. With
    the kernel terms :math:`h_{ij} = k(x_i, x_j) \langle e_i, e_j\rangle` of
    :func:`calibr.skce` (Laplacian kernel, ``bandwidth``, the forms of
    ``docs/definitions.md``, "Kernel metrics"):

    - ``"skce"`` (Widmann, Lindsten & Zachariah 2019; CalibrationTests.jl's
      ``AsymptoticSKCETest``): statistic
      :math:`\frac{n}{n-1}\widehat{\mathrm{SKCE}}_{uq} -
      \widehat{\mathrm{SKCE}}_b`, estimate
      :math:`\widehat{\mathrm{SKCE}}_{uq}` (``skce(p, y, "uq")``). Its null
      distribution is bootstrapped: with :math:`C_i` the number of times row
      :math:`i` is drawn in a replicate (n rows drawn uniformly with
      replacement),
      :math:`T' = n^{-2}\sum_i C_i \sum_j (\frac{n}{n-1}(C_j - \delta_{ij}) -
      2) h_{ij}`; the p-value is the share of the ``n_resamples`` values
      :math:`T' \ge` the statistic. Binary, confidence and classwise forms:
      O(n log n) once, then O(n) per replicate (O(nK) classwise), exact, no
      n x n matrix. **Canonical form: O(n^2 K) once plus O(n^2) per
      replicate** (the kernel of probability vectors has no running-sum
      form), in blocks of rows with O(n) memory per replicate.
    - ``"skce_block"`` (``AsymptoticBlockSKCETest``, blocks of 2): the values
      :math:`h_{2b-1,2b}` of the disjoint pairs (1, 2), (3, 4), ... in row
      order; estimate their mean (``skce(p, y, "ul")``), standard error
      :math:`s = \sqrt{\sum_b (h_b - \bar h)^2 / (m(m-1))}` over the
      :math:`m = \lfloor n/2 \rfloor` pairs, statistic :math:`z = \bar h / s`,
      one-sided p-value :math:`1 - \Phi(z)`.
    - ``"consistency"`` (Bröcker & Smith 2007; ``ConsistencyTest``): each
      resample draws n rows of ``p`` with replacement and a label from each
      drawn row's distribution, and recomputes ``metric``; statistic and
      estimate: the metric on the data; p-value: the share of resamples with
      a value :math:`\ge` it.
    - ``"spiegelhalter"``: :math:`z = \sum_i (y_i - p_i)(1 - 2p_i) /
      \sqrt{\sum_i (1 - 2p_i)^2 p_i (1 - p_i)}`, two-sided p-value
      :math:`2\Phi(-|z|)`, as ``rms::val.prob``'s S:z and S:p (and
      :func:`calibr.val_prob`); estimate: the Brier score minus its
      expectation under calibration, :math:`\frac1n \sum_i (y_i - p_i)(1 - 2p_i)`.
    - ``"ks"`` and ``"kuiper"`` (Arrieta-Ibarra et al. 2022): statistic
      ``ecce(p, y, kind=method, scale="sigma")``, estimate ``ecce(p, y,
      kind=method)``; p-value the upper tail of the maximum of :math:`|B|`
      (``"ks"``) or of the range of :math:`B` (``"kuiper"``), :math:`B`
      standard Brownian motion on [0, 1] (``docs/definitions.md``,
      "Cumulative calibration errors"). A matrix ``p``: the top-label
      (confidence) form only. With ``weights``, both are
      ``ecce(..., weights=weights)``'s (``n`` stays the number of rows).
    - ``"hosmer_lemeshow"``: groups cut at R's type-7 quantiles of ``p`` at
      :math:`0, 1/g, \dots, 1`, intervals closed on the right (the first on
      both sides), so **rows with equal p always share a group**; repeated
      quantiles are merged and empty groups dropped, leaving :math:`G`
      groups; statistic :math:`\sum_g [(O_g - E_g)^2/E_g + (O'_g - E'_g)^2 /
      E'_g]` with observed and expected events :math:`O_g, E_g = \sum p_i`
      and non-events :math:`O'_g, E'_g = \sum (1 - p_i)`; p-value the upper
      tail of :math:`\chi^2_{G - \mathrm{ddof}}` (:math:`G - 2` by default);
      estimate: the statistic.

    The resampling p-values are the share of resamples at or above the
    statistic (as CalibrationTests.jl; 0 is possible), so their resolution is
    ``1 / n_resamples``. Random numbers, per replicate: ``u = rng.random(n)``
    and the rows ``floor(n * u)`` (each row with probability 1/n to within
    :math:`n 2^{-53}`), then for consistency resampling ``rng.random(n)`` (the
    labels).

    References
    ----------
    Widmann, D., Lindsten, F., & Zachariah, D. (2019). Calibration tests in
    multi-class classification: A unifying framework. NeurIPS 32.

    Bröcker, J., & Smith, L. A. (2007). Increasing the reliability of
    reliability diagrams. Weather and Forecasting, 22(3), 651-661.

    Spiegelhalter, D. J. (1986). Probabilistic prediction in patient
    management and clinical trials. Statistics in Medicine, 5, 421-433.

    Arrieta-Ibarra, I., Gujral, P., Tannen, J., Tygert, M., & Xu, C. (2022).
    Metrics of calibration for probabilistic predictions. JMLR 23(351), 1-54.

    Hosmer, D. W., & Lemeshow, S. (1980). Goodness of fit tests for the
    multiple logistic regression model. Communications in Statistics - Theory
    and Methods, 9(10), 1043-1069.

    Examples
    --------
    >>> import numpy as np
    >>> from calibr import calibration_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(1000)
    >>> y = rng.random(1000) < p          # calibrated by construction
    >>> res = calibration_test(p, y, rng=1)
    >>> res.method, res.n_resamples, res.pvalue > 0.05
    ('skce', 1000, True)
    >>> bad = calibration_test(p ** 3, y, rng=1)   # far too low
    >>> float(bad.pvalue)
    0.0
    >>> hl = calibration_test(p, y, "hosmer_lemeshow")
    >>> hl.df, hl.groups
    (8, 10)
    """
    if type == _TOP_LABEL:
        _check_top_label(method, metric)
    if weights is not None and method not in WEIGHTED:
        raise InputError(
            f'`weights` are taken by method = "ks" and "kuiper" only (frequency weights, '
            f'as calibr.ecce() takes them); got method = "{method}". For whole-number '
            "weights, repeat the rows (numpy.repeat) instead.",
            param="weights"
        )
    lazy = lazy_backend(p, y, weights)
    if lazy is not None and hasattr(lazy, "calibration_test"):  # docs/engines.md
        return lazy.calibration_test(p, y, method, dict(
            n_resamples=n_resamples, rng=rng, bandwidth=bandwidth, type=type, metric=metric,
            bins=bins, estimator=estimator, groups=groups, ddof=ddof, classes=classes,
            na_rm=na_rm, weights=weights))
    if method in BINARY_ONLY:
        _refuse_matrix(p, method)
    prep = prepare(p, y, classes=classes, na_rm=na_rm, weights=weights)
    gen = np.random.default_rng(rng)
    opts = _Options(n_resamples, gen, bandwidth, type, metric, bins, estimator, groups, ddof)
    return _RUNNERS[method](prep, opts)


# --------------------------------------------------------------------------
# helpers


def _top_label_metrics() -> list[str]:
    """The metrics of consistency resampling that have the top-label form (their
    ``type`` rule lists it): the binned ones."""
    out = []
    for name in _METRICS:
        rule = METRICS[name].function.__calibr_rules__.get("type")
        if _TOP_LABEL in getattr(rule, "choices", ()):
            out.append(name)
    return out


def _check_top_label(method: str, metric: str) -> None:
    """Refuse ``type="top-label"`` where it has no meaning: any method but consistency
    resampling, and a metric without that form."""
    names = _top_label_metrics()
    which = ", ".join(f'"{m}"' for m in names)
    if method != "consistency":
        raise InputError(
            f'`type = "top-label"` is a form of the binned metrics ({which}): it applies to '
            f'`method = "consistency"` only; got `method = "{method}"`.',
            param="type"
        )
    if metric not in names:
        raise InputError(
            f'`type = "top-label"` is a form of the binned metrics ({which}); '
            f'`metric = "{metric}"` has no top-label form.',
            param="type"
        )


def _refuse_matrix(p: Any, method: str) -> None:
    """Refuse a matrix ``p`` for a binary-only method, before prepare() reads its labels."""
    try:
        shape = p.shape if hasattr(p, "shape") else np.shape(p)
    except Exception:  # noqa: BLE001 - ragged or unreadable: prepare() says why
        return
    if len(shape) >= 2:
        hint = (" For a two-class matrix, pass the column of the positive class "
                "(e.g. p[:, 1])." if len(shape) == 2 else "")
        raise InputError(
            f"{arg('method', 'setting', method)} is for binary outcomes only: {arg('p')} must "
            "be a vector "
            f"of probabilities P(y = 1); got an array of shape {tuple(shape)}.{hint}",
            param="p"
        )


def _hits(y: np.ndarray) -> np.ndarray:
    """Exact 0/1 labels as uint8."""
    return np.asarray(y != 0, dtype=np.uint8)


def _form(prep: Prepared, type: str | None) -> str:
    """The form of the SKCE tests: ``type``, else that of ``calibr.skce()``."""
    if prep.binary:
        return "binary"
    if type is not None:
        return type
    from .._metrics.kernel import skce

    return defaults(skce)["type"]


def _scalar_kernels(prep: Prepared, form: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(x, c)`` of each scalar kernel: one (binary, confidence) or one per column."""
    if form == "binary":
        return [(np.ascontiguousarray(prep.p, dtype=np.float64), _hits(prep.y))]
    if form == "confidence":
        rho, hit = top_label(prep.p, prep.y)
        return [(rho, hit)]
    return [(np.ascontiguousarray(prep.p[:, k]), _hits(prep.y == k)) for k in range(prep.k)]


def _bandwidths(prep: Prepared, form: str, bandwidth: float | str) -> list[float]:
    """The bandwidth of each kernel of the form, ``"median"`` resolved by
    :func:`calibr.median_bandwidth` (whose errors are those of ``skce()``)."""
    nk = prep.k if form == "classwise" else 1
    if bandwidth != "median":
        return [float(bandwidth)] * nk
    from .._metrics.kernel import median_bandwidth

    if prep.binary:
        return [float(median_bandwidth(prep.p))]
    # the caller's class labels, so that an error names the column as skce() does
    if form == "classwise":
        return [float(v) for v in median_bandwidth(prep.p, type="classwise",
                                                   classes=prep.classes)]
    return [float(median_bandwidth(prep.p, type=form, classes=prep.classes))]


def _bandwidth_field(hs: list[float], form: str) -> float | tuple[float, ...]:
    return tuple(hs) if form == "classwise" else hs[0]


def _draw_uniforms(gen: np.random.Generator, n: int, count: int) -> np.ndarray:
    """``count`` replicates of n uniform numbers: the same values as ``count``
    successive calls ``gen.random(n)`` (each value takes one draw)."""
    return gen.random((count, n))


def _rows(u: np.ndarray, n: int) -> np.ndarray:
    """The rows a replicate draws: ``floor(n * u)`` (u in [0, 1), so below n; the
    bound only guards the last index). Each row has probability 1/n to within
    n 2^-53; ``Generator.integers`` would be exact, and 5 to 10 times slower
    than the whole O(n) replicate of the scalar SKCE test."""
    return np.minimum((n * u).astype(np.int64), n - 1)


def _share_at_or_above(null: np.ndarray, statistic: float) -> float:
    return float(np.count_nonzero(null >= statistic)) / null.shape[0]


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _normal_upper(z: float) -> float:
    """1 - Phi(z), accurate in the upper tail."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


# --------------------------------------------------------------------------
# "skce": the asymptotic SKCE test


def _check_n(prep: Prepared, method: str, least: int) -> None:
    if prep.n < least:
        raise InputError(
            f"{arg('method', 'setting', method)} needs at least {least} observations; got "
            f"{prep.n}.",
            param="method"
        )


def _skce_test(prep: Prepared, o: _Options) -> CalibrationTestResult:
    _check_n(prep, "skce", 2)
    form = _form(prep, o.type)
    hs = _bandwidths(prep, form, o.bandwidth)
    n = prep.n
    alpha = n / (n - 1)
    if form == "canonical":
        estimate, statistic, null = _skce_canonical(prep, hs[0], alpha, o)
    else:
        estimate, statistic, null = _skce_scalar(prep, form, hs, alpha, o)
    return CalibrationTestResult(
        statistic=statistic, pvalue=_share_at_or_above(null, statistic), estimate=estimate,
        method="skce", n=n, type=form, n_resamples=o.n_resamples,
        bandwidth=_bandwidth_field(hs, form), null_distribution=_readonly(null),
    )


def _skce_scalar(
    prep: Prepared, form: str, hs: list[float], alpha: float, o: _Options
) -> tuple[float, float, np.ndarray]:
    n = prep.n
    uqs, stats, orders, es, gs, rs = [], [], [], [], [], []
    for (x, c), h in zip(_scalar_kernels(prep, form), hs, strict=True):
        pair, diag, _ = scalar_pair_sum(x, c, h)  # the sums of skce() itself
        uq = estimate_from_sums("uq", n, pair, diag)
        uqs.append(uq)
        stats.append(alpha * uq - estimate_from_sums("biased", n, pair, diag))
        order, xs, e = sorted_scalars(x, c)
        g = gap_factors(xs, h)
        orders.append(order)
        es.append(e)
        gs.append(g)
        rs.append(weighted_row_sums(e, np.ones(n), g))
    order, e, g, r = (np.ascontiguousarray(np.stack(a)) for a in (orders, es, gs, rs))
    null = np.empty(o.n_resamples)
    batch = max(1, min(o.n_resamples, _IDX_BATCH // n))
    for start in range(0, o.n_resamples, batch):
        count = min(batch, o.n_resamples - start)
        u = _draw_uniforms(o.rng, n, count)
        # replicates are independent: chunks on all cores give the same bits
        calls = [(u[lo:hi], order, e, g, r, alpha)
                 for lo, hi in chunk_bounds(count, min(count, REPLICATE_CHUNKS))]
        null[start:start + count] = np.concatenate(list(run_chunks(skce_test_replicates, calls)))
    return float(np.mean(uqs)), float(np.mean(stats)), null


def _skce_canonical(
    prep: Prepared, h: float, alpha: float, o: _Options
) -> tuple[float, float, np.ndarray]:
    n, k = prep.n, prep.k
    if float(n) * n * (k + o.n_resamples) > CANONICAL_WARN_COST:
        warn(
            f'calibration_test: the canonical SKCE test costs O(n^2 (K + n_resamples)) '
            f"operations, here n = {n:,}, K = {k}, n_resamples = {o.n_resamples:,}; "
            f'type="confidence" or "classwise" costs O(n) per resample.',
            UserWarning,
        )
    pair, diag, _ = canonical_pair_sum(prep.p, prep.y, h)  # the sums of skce() itself
    uq = estimate_from_sums("uq", n, pair, diag)
    statistic = alpha * uq - estimate_from_sums("biased", n, pair, diag)
    e = -prep.p.copy()
    e[np.arange(n), prep.y] += 1.0
    d = np.einsum("ij,ij->i", e, e)
    null = np.empty(o.n_resamples)
    batch = max(1, min(o.n_resamples, _COUNTS_BATCH // n))
    for start in range(0, o.n_resamples, batch):
        count = min(batch, o.n_resamples - start)
        rows = _rows(_draw_uniforms(o.rng, n, count), n)
        counts = np.zeros((count, n))
        for b in range(count):
            counts[b] = np.bincount(rows[b], minlength=n)
        q, r = canonical_quadratic_forms(prep.p, e, h, counts)
        null[start:start + count] = (alpha * (q - counts @ d) - 2.0 * (counts @ r)) / (
            float(n) * float(n))
    return uq, statistic, null


# --------------------------------------------------------------------------
# "skce_block": the asymptotic block test with blocks of 2


def _pair_values(prep: Prepared, form: str, hs: list[float]) -> np.ndarray:
    """``h_{2b, 2b+1}`` (0-based) of the disjoint pairs, averaged over the kernels."""
    m = prep.n // 2
    if form == "canonical":
        e = -prep.p.copy()
        e[np.arange(prep.n), prep.y] += 1.0
        a, b = prep.p[0:2 * m:2], prep.p[1:2 * m:2]
        d2 = np.zeros(m)
        for k in range(prep.k):  # column order, as R's dist()
            d2 += (a[:, k] - b[:, k]) ** 2
        inner = np.einsum("ij,ij->i", e[0:2 * m:2], e[1:2 * m:2])
        return np.exp(-np.sqrt(d2) / hs[0]) * inner
    total = np.zeros(m)
    kernels = _scalar_kernels(prep, form)
    for (x, c), h in zip(kernels, hs, strict=True):
        e = c.astype(np.float64) - x
        total += np.exp(-np.abs(x[0:2 * m:2] - x[1:2 * m:2]) / h) * e[0:2 * m:2] * e[1:2 * m:2]
    return total / len(kernels)


def _skce_block_test(prep: Prepared, o: _Options) -> CalibrationTestResult:
    _check_n(prep, "skce_block", 4)
    form = _form(prep, o.type)
    hs = _bandwidths(prep, form, o.bandwidth)
    vals = _pair_values(prep, form, hs)
    m = vals.shape[0]
    estimate = float(np.mean(vals))
    stderr = math.sqrt(float(np.sum((vals - estimate) ** 2)) / (m * (m - 1)))
    if stderr == 0.0:
        z = math.nan if estimate == 0.0 else math.copysign(math.inf, estimate)
    else:
        z = estimate / stderr
    if math.isnan(z):
        warn(
            'calibration_test: every pair gives the same kernel term 0, so the block '
            "statistic is 0/0; statistic and p-value are NaN.",
            RuntimeWarning,
        )
    return CalibrationTestResult(
        statistic=z, pvalue=math.nan if math.isnan(z) else _normal_upper(z),
        estimate=estimate, method="skce_block", n=prep.n, type=form,
        bandwidth=_bandwidth_field(hs, form), stderr=stderr,
    )


# --------------------------------------------------------------------------
# "consistency": consistency resampling


def _metric_call(prep: Prepared, o: _Options) -> tuple[Callable[[np.ndarray, np.ndarray], float],
                                                         str, float | str | None]:
    """The metric as a function of (p, codes) on canonical arrays, the form it
    uses, and the bandwidth to report. The metric's entry in the registry names
    the options of this function that it is given (``consistency``): ``type`` as
    given, or the metric's default; the others always."""
    info = METRICS[o.metric]
    fn = info.function
    passed = info.consistency
    kwargs: dict[str, Any] = {k: getattr(o, k) for k in passed if k != "type"}
    bandwidth = o.bandwidth if "bandwidth" in passed else None
    if prep.binary:
        if o.type == _TOP_LABEL:  # not ignored: a vector p read as (1 - p, p)
            kwargs["type"] = _TOP_LABEL
            return (lambda p, y: float(fn(p, y, **kwargs))), _TOP_LABEL, bandwidth
        return (lambda p, y: float(fn(p, y, **kwargs))), "binary", bandwidth
    if "type" in passed:
        form = o.type or defaults(fn)["type"]
        kwargs["type"] = form
    else:  # mmce: the top-label confidence
        form = "confidence"
    # 0-based codes passed on as R's codes 1..K (the fastest route through prepare())
    return (lambda p, y: float(fn(p, y + 1, **kwargs))), form, bandwidth


def _consistent_labels(gen: np.random.Generator, ps: np.ndarray) -> np.ndarray:
    """One label from each row's distribution: 0/1 with P(1) = p for a vector,
    else the 0-based class k with probability p_k / (row sum)."""
    u = gen.random(ps.shape[0])
    if ps.ndim == 1:
        return (u < ps).astype(np.uint8)
    cum = np.cumsum(ps, axis=1)
    v = u * cum[:, -1]
    labels = np.count_nonzero(cum <= v[:, None], axis=1)
    return np.minimum(labels, ps.shape[1] - 1)


def _consistency_test(prep: Prepared, o: _Options) -> CalibrationTestResult:
    fn, form, bandwidth = _metric_call(prep, o)
    observed = fn(prep.p, prep.y)
    n = prep.n
    null = np.empty(o.n_resamples)
    for b in range(o.n_resamples):
        ps = prep.p[_rows(o.rng.random(n), n)]
        null[b] = fn(ps, _consistent_labels(o.rng, ps))
    return CalibrationTestResult(
        statistic=observed, pvalue=_share_at_or_above(null, observed), estimate=observed,
        method="consistency", n=n, type=form, n_resamples=o.n_resamples,
        bandwidth=bandwidth, metric=o.metric, null_distribution=_readonly(null),
    )


# --------------------------------------------------------------------------
# "spiegelhalter"


def _spiegelhalter_test(prep: Prepared, o: _Options) -> CalibrationTestResult:
    p = prep.p
    y = np.asarray(prep.y, dtype=np.float64)
    a = 1.0 - 2.0 * p
    return spiegelhalter_result(float(np.sum((y - p) * a)),
                                float(np.sum(a * a * p * (1.0 - p))), prep.n)


def spiegelhalter_result(num: float, var: float, n: int) -> CalibrationTestResult:
    """The test from its sums (``calibr._metrics.valprob.spiegelhalter_from_sums``)
    over ``n`` rows: the pandas path's and the lazy engines' (their query sums)."""
    z, pvalue = spiegelhalter_from_sums(num, var)
    if math.isnan(z):
        warn(
            "calibration_test: every `p` is 0, 0.5 or 1 and agrees with its outcome where "
            "it is 0 or 1, so Spiegelhalter's statistic is 0/0; statistic and p-value are NaN.",
            RuntimeWarning,
        )
    return CalibrationTestResult(statistic=z, pvalue=pvalue, estimate=num / n if n else math.nan,
                                 method="spiegelhalter", n=n, type="binary")


# --------------------------------------------------------------------------
# "hosmer_lemeshow"


def _r_quantile7(xs: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """R's ``quantile(x, probs, type = 7)`` of the sorted ``xs``, with R's arithmetic:
    ``(1 - h) x[lo] + h x[hi]`` where the two differ."""
    return r_quantile7(lambda i: xs[i], xs.shape[0], probs)


def quantile_ranks(n: int, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 0-based ranks ``(lo, hi)`` of the order statistics that R's type-7
    quantiles of ``n`` values at ``probs`` read."""
    index = (n - 1) * probs
    return np.floor(index).astype(np.int64), np.ceil(index).astype(np.int64)


def r_quantile7(take: Callable[[np.ndarray], np.ndarray], n: int,
                probs: np.ndarray) -> np.ndarray:
    """:func:`_r_quantile7` from ``take(ranks)``, the order statistics of ``n``
    values at 0-based ranks (the lazy engines read only those:
    ``calibr/_engines/_pushdown.py``)."""
    index = (n - 1) * probs
    lo, hi = quantile_ranks(n, probs)
    q = np.array(take(lo), dtype=np.float64)
    upper = np.asarray(take(hi), dtype=np.float64)
    t = index - lo
    inner = (index > lo) & (upper != q)
    q[inner] = (1.0 - t[inner]) * q[inner] + t[inner] * upper[inner]
    return q


def hosmer_lemeshow_probs(groups: int) -> np.ndarray:
    """R's ``seq(0, 1, 1/g)``, its last value 1."""
    probs = np.arange(groups + 1) * (1.0 / groups)  # R's seq(0, 1, 1/g) ...
    probs[-1] = 1.0  # ... whose last value is below 1 for some g (49: 49 * (1/49) < 1)
    return probs


def _chi2_upper(x: float, df: int) -> float:
    """Upper tail of the chi-square distribution with integer ``df`` >= 1, as a
    finite sum of positive terms (no cancellation): for ``df = 2m``,
    ``sum_{k<m} e^{-x/2} (x/2)^k / k!``; for ``df = 2m + 1``,
    ``erfc(sqrt(x/2)) + sum_{k<m} e^{-x/2} (x/2)^{k+1/2} / Gamma(k + 3/2)``;
    the terms in logs, so nothing overflows."""
    if math.isnan(x):
        return math.nan
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    half = x / 2.0
    log_half = math.log(half)
    if df % 2 == 0:
        return math.fsum(math.exp(-half + k * log_half - math.lgamma(k + 1.0))
                         for k in range(df // 2))
    tail = math.erfc(math.sqrt(half))
    return tail + math.fsum(math.exp(-half + (k + 0.5) * log_half - math.lgamma(k + 1.5))
                            for k in range(df // 2))


def _hosmer_lemeshow_test(prep: Prepared, o: _Options) -> CalibrationTestResult:
    p = prep.p
    y = np.asarray(prep.y, dtype=np.float64)
    xs = np.sort(p)
    breaks = np.unique(_r_quantile7(xs, hosmer_lemeshow_probs(o.groups)))
    # group of each row: breaks[g] < p <= breaks[g + 1], the lowest break in group 0
    # (R's cut(include.lowest = TRUE)); one break (all p equal): one group
    group = (_binning.bin_index(p, breaks, right=True) if breaks.size > 1
             else np.zeros(p.shape, dtype=np.int64))
    nb = max(breaks.size - 1, 1)
    sums = [np.bincount(group, weights=v, minlength=nb) for v in (y, p, 1.0 - y, 1.0 - p)]
    return hosmer_lemeshow_result(np.bincount(group, minlength=nb), *sums, prep.n, o.groups,
                                  o.ddof, lambda: np.unique(p).size)


def hosmer_lemeshow_result(size: np.ndarray, obs1: np.ndarray, exp1: np.ndarray,
                           obs0: np.ndarray, exp0: np.ndarray, n: int, groups: int,
                           ddof: int, distinct: Callable[[], int]) -> CalibrationTestResult:
    """The test from the rows and sums of ``y``, ``p``, ``1 - y``, ``1 - p`` of each
    quantile group (the pandas path's and the lazy engines'); ``distinct()``: the
    number of distinct ``p``, for the message of too few groups."""
    used = size > 0
    g = int(np.count_nonzero(used))
    if g < 3:
        k = distinct()
        raise InputError(
            f"{arg('method', 'setting', 'hosmer_lemeshow')} needs at least 3 groups of "
            f"distinct risk; the {groups} quantile groups of {arg('p')} merge into {g} "
            f"({k} distinct value{'s' if k != 1 else ''} of {arg('p')} among "
            f"{n} observations).",

            param="p"
        )
    obs1, exp1, obs0, exp0 = obs1[used], exp1[used], obs0[used], exp0[used]
    statistic = 0.0
    for obs, exp in ((obs1, exp1), (obs0, exp0)):
        pos = exp > 0.0
        statistic += float(np.sum((obs[pos] - exp[pos]) ** 2 / exp[pos]))
        if np.any(obs[~pos] > 0.0):  # an event where p is 0 (or a non-event where 1)
            statistic = math.inf
    df = g - ddof
    if df < 1:
        raise InputError(
            f"`ddof` must leave at least 1 degree of freedom; got ddof = {ddof} with "
            f"{g} groups.",
            param="ddof"
        )
    return CalibrationTestResult(
        statistic=statistic, pvalue=_chi2_upper(statistic, df), estimate=statistic,
        method="hosmer_lemeshow", n=n, type="binary", df=df, groups=g,
    )


# --------------------------------------------------------------------------
# "ks" and "kuiper": the cumulative calibration tests


def _cumulative_test(prep: Prepared, o: _Options, kind: str) -> CalibrationTestResult:
    from .._metrics.cumulative import ecce_pvalue, ecce_stats

    if not prep.binary and o.type not in (None, "confidence"):
        raise InputError(
            f'`type` must be "confidence" (or left out) for {arg("method", "setting", kind)}: the '

            f"cumulative differences are of one score per row; got {o.type!r}.",
            param="type"
        )
    stats = ecce_stats(prep)
    statistic = stats.value(kind, "sigma")
    return CalibrationTestResult(
        statistic=statistic, pvalue=float(ecce_pvalue(statistic, kind)[0]),
        estimate=stats.value(kind), method=kind, n=prep.n,
        type="binary" if prep.binary else "confidence",
    )


#: Dispatch by table: one entry per method.
_RUNNERS: dict[str, Callable[[Prepared, _Options], CalibrationTestResult]] = {
    "skce": _skce_test,
    "skce_block": _skce_block_test,
    "consistency": _consistency_test,
    "spiegelhalter": _spiegelhalter_test,
    "hosmer_lemeshow": _hosmer_lemeshow_test,
    "ks": lambda prep, o: _cumulative_test(prep, o, "ks"),
    "kuiper": lambda prep, o: _cumulative_test(prep, o, "kuiper"),
}
