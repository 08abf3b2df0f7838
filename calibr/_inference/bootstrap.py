"""``bootstrap()`` and ``paired_bootstrap()``: confidence intervals of calibr's
metrics, and of the difference between two models on the same rows
(``docs/bootstrap.md`` has every definition and decision).

A thin public layer (argument rules, the shared input layer, one plan per
metric) over :mod:`calibr._kernels.bootstrap`. Each replicate resamples the
rows, the (p, y) pairs: after one preparation of the sample (bins assigned, or
sorted once per kernel), a replicate of the binned metrics, of the scalar
SKCE/MMCE and of the ECCE costs O(n). The rest (canonical SKCE, ``bandwidth="median"``) calls
the metric on each resample.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np

from .. import _binning, _registry
from .._defaults import BOOTSTRAP_RESAMPLES_DEFAULT
from .._docs import shared_docs
from .._input import (
    LEVEL,
    MAX_RESAMPLES,
    RNG,
    InputError,
    InputTypeError,
    Integer,
    Options,
    Prepared,
    arg,
    check_options,
    defaults,
    fmt,
    metric_value,
    prepare,
    validate_params,
    warn,
)
from .._input.backends import lazy_backend
from .._input.frames import eager
from .._input.groups import group_seeds
from .._input.warning import CountedRuntimeWarning
from .._kernels import bootstrap as kb
from .._kernels import poisson as kp
from .._kernels._threads import chunk_bounds, run_chunks
from .._kernels.top_label import top_label
from .._kernels.weighted_sums import gap_factors, sorted_scalars, weighted_row_sums
from .._metrics.cumulative import sorted_rows
from .._metrics.scores import UNDEFINED
from .._registry import DEFAULT_METRIC, METRICS

__all__ = [
    "BootstrapResult",
    "ConfidenceInterval",
    "PairedBootstrapResult",
    "bootstrap",
    "paired_bootstrap",
]

CI_METHODS = ("percentile", "basic", "bca")
#: The resampling schemes of :func:`bootstrap` (``docs/bootstrap.md``).
SCHEMES = ("multinomial", "poisson")
_ALTERNATIVES = ("two-sided", "less", "greater")
#: Counts of draws at or above this go to the kernels' int32 carry (the tests
#: lower it to reach that path).
COUNT_BASE = kb.COUNT_BASE
#: At most this many rows (resampling counts are int32 where uint8 would wrap).
MAX_ROWS = 2**31 - 1
#: Work chunks of a batch of replicates (run on up to ``num_threads()`` threads),
#: of the bootstrap and of the resampling tests (calibr._inference.calibration_tests).
REPLICATE_CHUNKS = 16
#: A canonical-SKCE computation warns when its cost passes this (about a minute or
#: more on one core): the bootstrap's n^2 K (B + 1), and the test's n^2 (K +
#: n_resamples) (the kernel matrix in O(n^2 K), each replicate an O(n^2) quadratic
#: form), read by calibr._inference.calibration_tests.
CANONICAL_WARN_COST = 1e11


class ConfidenceInterval(NamedTuple):
    """A confidence interval (scipy's ``ConfidenceInterval``)."""

    low: float
    high: float


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """The outcome of :func:`calibr.bootstrap` (scipy's field names, plus the
    estimate and what was done).

    Attributes
    ----------
    confidence_interval : ConfidenceInterval
        ``low`` and ``high``.
    bootstrap_distribution : ndarray
        The ``n_resamples`` replicate values, in replicate order (read-only).
    standard_error : float
        The standard deviation of the replicates (``ddof=1``, as scipy).
    estimate : float
        The metric on the data, the number ``calibr.<metric>(p, y, ...)`` gives.
    metric : str
        The metric's name (``"ece"``, ...) or the callable's name.
    method : str
        ``"percentile"``, ``"basic"`` or ``"bca"``.
    confidence_level : float
    n_resamples : int
    n : int
        The observations used (after ``na_rm``).
    scheme : str
        ``"multinomial"`` or ``"poisson"``.
    seed : int or None
        The Poisson scheme's seed (``0 <= seed < 2**64``; the one drawn when
        ``rng`` was None or a Generator), None for the multinomial scheme.
    """

    confidence_interval: ConfidenceInterval
    bootstrap_distribution: np.ndarray
    standard_error: float
    estimate: float
    metric: str
    method: str
    confidence_level: float
    n_resamples: int
    n: int
    scheme: str = "multinomial"
    seed: int | None = None

    def _repr_html_(self) -> str:
        """The fields as an HTML table, for notebooks (``calibr._display.repr``)."""
        from .._display.repr import result_html

        return result_html(self)


@dataclass(frozen=True, eq=False)
class PairedBootstrapResult:
    """The outcome of :func:`calibr.paired_bootstrap`: the difference
    ``metric(p_a) - metric(p_b)`` on the same rows.

    Attributes
    ----------
    confidence_interval : ConfidenceInterval
        Of the difference (one-sided for ``alternative="less"``/``"greater"``).
    bootstrap_distribution : ndarray
        The replicate differences (read-only).
    standard_error : float
    estimate : float
        ``estimate_a - estimate_b``.
    estimate_a, estimate_b : float
        The metric of each model on the data.
    pvalue : float
        Of the null hypothesis "the difference is 0" against ``alternative``:
        the bootstrap test that inverts the percentile interval
        (``docs/bootstrap.md``).
    alternative : str
    metric, method, confidence_level, n_resamples, n
        As in :class:`BootstrapResult`.
    """

    confidence_interval: ConfidenceInterval
    bootstrap_distribution: np.ndarray
    standard_error: float
    estimate: float
    estimate_a: float
    estimate_b: float
    pvalue: float
    alternative: str
    metric: str
    method: str
    confidence_level: float
    n_resamples: int
    n: int

    def _repr_html_(self) -> str:
        """The fields as an HTML table, for notebooks (``calibr._display.repr``)."""
        from .._display.repr import result_html

        return result_html(self)


# --------------------------------------------------------------------------
# the metric as a plan: its value, replicates and jackknife


#: The kernel code of each reduction of the per-bin sums and of the pair sums
#: (``calibr._registry.REDUCTIONS``); the pair sums' "skce" code is the estimator's.
_BIN_CODES = {"ece": kb.ECE, "mce": kb.MCE}
_PAIR_CODES = {"mmce": {None: kb.MMCE},
               "skce": {"uq": kb.UQ, "biased": kb.BIASED}}


def check_metric(metric: Any, options: dict[str, Any], function: str) -> tuple[
        str, Callable[..., float], dict[str, Any]]:
    """The metric's name, function and checked options (the engines' bootstrap
    checks them first too)."""
    if "weights" in options:
        raise InputError(
            f"`weights` is not an option of {function}(): its replicates are resampling "
            "counts themselves; repeat the rows instead.",
            param="weights"
        )
    if isinstance(metric, str):
        if metric not in METRICS:
            raise InputError(
                "`metric` must be one of " + ", ".join(f'"{m}"' for m in METRICS)
                + f", or a callable; got {fmt(metric)}.",
                param="metric"
            )
        info = METRICS[metric]
        fn = info.function
        known_options = info.options
        bad = [k for k in options if k not in known_options]
        if bad:
            known = ", ".join(known_options)
            raise InputTypeError(
                f"{function}() got the option `{bad[0]}`, which {metric}() does not take; "
                f"its options are {known}.",
                param=bad[0]
            )
        return metric, fn, check_options(fn.__calibr_rules__, options)
    if callable(metric):
        return getattr(metric, "__name__", type(metric).__name__), metric, dict(options)
    raise InputTypeError(
        f"`metric` must be a metric name or a callable; got {type(metric).__name__}.",
        param="metric"
    )


def _form(prep: Prepared, full: dict[str, Any]) -> str:
    """The form of a calibr metric with its options ``full`` (defaults included)."""
    if full.get("type") == _binning.TOP_LABEL:  # a vector p too: its two columns
        return _binning.TOP_LABEL
    if prep.binary:
        return "binary"
    if "type" not in full:  # mmce: no type, the top-label confidence
        return "confidence"
    return full["type"]


def _labels(prep: Prepared) -> tuple[np.ndarray, dict[str, Any]]:
    """y and the keyword arguments that make a metric read the canonical arrays."""
    if prep.binary:
        return prep.y, {}
    return prep.y, {"classes": tuple(range(prep.k))}


class _Plan:
    """How one metric is computed on the data, on a replicate and without a row."""

    def __init__(self, name: str, fn: Callable[..., float], opts: dict[str, Any],
                 prep: Prepared) -> None:
        if prep.n > MAX_ROWS:  # the kernels count draws per row in int32
            raise InputError(
                f"The bootstrap takes at most {MAX_ROWS:,} observations; got {prep.n:,}.",
                param="p"
            )
        self.name, self.fn, self.opts, self.prep = name, fn, opts, prep
        y, self.label_kwargs = _labels(prep)
        self.y = y
        self.kind = "generic"
        info = _registry.info_of(fn)
        if info is not None:  # a calibr metric: its bootstrap path (calibr._registry)
            full = {**defaults(fn), **opts}  # what the call fn(p, y, **opts) uses
            self.form = _form(prep, full)
            if info.bootstrap == _registry.BIN_SUMS:
                spec = _binning.BinSpec.from_options(full["bins"], full["binning"],
                                                     full["right"])
                if spec.data_free:
                    self._binned(spec, _BIN_CODES[info.reduction])
                # equal-mass bins are the resample's own: the metric on each resample
            elif info.bootstrap == _registry.SORTED_SUMS:
                self._cumulative(full["kind"], full["scale"])
            elif (info.bootstrap == _registry.PAIR_SUMS and self.form != "canonical"
                  and full["bandwidth"] != "median"):
                bandwidth = full["bandwidth"]
                estimator = full.get("estimator")  # None: mmce, which has no estimator
                if estimator == "ul":
                    self._ul(float(bandwidth))
                else:
                    self._scalar(float(bandwidth), _PAIR_CODES[info.reduction][estimator])
        self.calibr_metric = info is not None
        # a calibr metric may be inf on the data (log_loss of an impossible row)
        self.estimate = (metric_value(self._value(prep.p, y)) if self.calibr_metric
                         else self.call(prep.p, y))

    def call(self, p: np.ndarray, y: np.ndarray) -> float:
        """The metric on resampled rows: a callable's inf is an error; a calibr
        metric's inf (log_loss of an impossible row) is NaN, which no quantile reads:
        the interval abstains (:func:`_interval`)."""
        if not self.calibr_metric:
            return metric_value(self._value(p, y), finite=True)
        value = metric_value(self._value(p, y))
        return math.nan if math.isinf(value) else value

    def _value(self, p: np.ndarray, y: np.ndarray) -> Any:
        """What the metric returns on these rows, unchecked (see :meth:`call`)."""
        return self.fn(p, y, **self.label_kwargs, **self.opts)

    # the columns a kernel sees: (x, 0/1 outcome) per column
    def _columns(self) -> list[tuple[np.ndarray, np.ndarray]]:
        prep = self.prep
        if prep.binary:
            return [(prep.p, (prep.y != 0).astype(np.uint8))]
        if self.form == "confidence":
            rho, hit = top_label(prep.p, prep.y)
            return [(rho, hit)]
        return [(np.ascontiguousarray(prep.p[:, k]), (prep.y == k).astype(np.uint8))
                for k in range(prep.k)]

    def _binned(self, spec: _binning.BinSpec, code: int) -> None:
        """Fixed bins (equal-width, or explicit breaks), either closure: each row's
        cell once, by the rule of calibr._binning."""
        edges, right = spec.edges(), spec.right
        bins = edges.shape[0] - 1
        # before any per-cell memory: bins x K cells for "classwise" and "top-label"
        _binning.check_cells(bins, self.prep.binary, self.prep.k, self.form)
        if self.form == _binning.TOP_LABEL:  # one column, in its predicted class's bins
            h, hit, cls, k = _binning.top_label_columns(self.prep.p, self.prep.y,
                                                        self.prep.binary)
            self.x = np.ascontiguousarray(h[:, None])
            self.cells = np.ascontiguousarray(
                (cls * bins + _binning.bin_index(h, edges, right))[:, None], dtype=np.int32)
            self.c = np.ascontiguousarray(hit[:, None], dtype=np.uint8)
            self.kind, self.bins, self.code = "binned", k * bins, code
            return
        cols = self._columns()
        self.x = np.ascontiguousarray(np.column_stack([x for x, _ in cols]), dtype=np.float64)
        self.cells = np.ascontiguousarray(np.column_stack(
            [k * bins + _binning.bin_index(x, edges, right) for k, (x, _) in enumerate(cols)]),
            dtype=np.int32)
        self.c = np.ascontiguousarray(np.column_stack([c for _, c in cols]), dtype=np.uint8)
        self.kind, self.bins, self.code = "binned", bins, code

    def _scalar(self, h: float, code: int) -> None:
        orders, es, gs = [], [], []
        for x, c in self._columns():
            order, xs, e = sorted_scalars(np.ascontiguousarray(x, dtype=np.float64), c)
            orders.append(order)
            es.append(e)
            gs.append(gap_factors(xs, h))
        self.kind, self.code = "scalar", code
        # int32 positions (n < 2^31): half the bytes that each replicate streams
        self.order = np.ascontiguousarray(np.array(orders, dtype=np.int32))
        self.e = np.ascontiguousarray(np.array(es))
        self.g = np.ascontiguousarray(np.array(gs).reshape(len(gs), -1))

    def _cumulative(self, kind: str, scale: str) -> None:
        """ECCE: the rows sorted once by ``ecce``'s keys (``calibr._metrics.cumulative``)."""
        ((x, c),) = self._columns()  # binary, or the top-label confidence
        self.kind = "cumulative"
        self.rows = sorted_rows(x, c)
        self.code = kb.KS if kind == "ks" else kb.KUIPER
        self.sigma_scale = scale == "sigma"

    def _ul(self, h: float) -> None:
        cols = self._columns()
        self.kind = "ul"
        self.x = np.ascontiguousarray(np.array([x for x, _ in cols], dtype=np.float64))
        self.e = np.ascontiguousarray(np.array([c - x for x, c in cols], dtype=np.float64))
        self.h = np.full(len(cols), h)

    # ------------------------------------------------------------------
    def replicates(self, gens: list[np.random.Generator], bounds: list[tuple[int, int]],
                   out: np.ndarray) -> None:
        """The metric on replicates ``lo .. hi - 1`` into ``out``, for each chunk
        ``(lo, hi)`` of ``bounds``, drawing from that chunk's generator."""
        if self.kind == "generic":
            with warnings.catch_warnings():
                if self.calibr_metric:  # its warnings on the data came with the estimate
                    warnings.simplefilter("ignore")
                self._generic(gens, bounds, out)
            return
        base = COUNT_BASE
        if self.kind == "binned":
            fn, args = kb.binned_replicates, (base, self.x, self.cells, self.c, self.bins,
                                              self.code)
        elif self.kind == "scalar":
            fn, args = kb.scalar_replicates, (base, self.order, self.e, self.g, self.code)
        elif self.kind == "cumulative":
            r = self.rows
            fn, args = kb.cumulative_replicates, (base, r.order, r.steps, r.terms, r.ends,
                                                  self.code, self.sigma_scale)
        else:
            fn, args = kb.ul_replicates, (self.x, self.e, self.h)
        calls = [(gen, *args, lo, hi, out) for gen, (lo, hi) in zip(gens, bounds, strict=True)]
        for _ in run_chunks(fn, calls):
            pass

    def _generic(self, gens: list[np.random.Generator], bounds: list[tuple[int, int]],
                 out: np.ndarray) -> None:
        """The metric called on each resample (NaN where it is undefined)."""
        p, y, n = self.prep.p, self.y, self.prep.n
        for gen, (lo, hi) in zip(gens, bounds, strict=True):
            for b in range(lo, hi):
                idx = np.minimum((n * gen.random(n)).astype(np.int64), n - 1)
                try:
                    out[b] = self.call(p[idx], y[idx])
                except InputError as err:  # e.g. auroc of a resample of one class
                    if err.code != UNDEFINED:
                        raise
                    out[b] = math.nan

    def poisson_value(self, counts: np.ndarray) -> float:
        """The metric on the rows repeated ``counts`` times (one replicate of the
        Poisson scheme; NaN when no row is drawn or the metric is undefined).

        The binned metrics of a vector ``p`` with fixed bins reduce the per-bin
        sums of the counts, ``count * p`` and ``count * y`` (in row order), with
        ``ece_from_stats``/``mce_from_stats``: the numbers the engines reduce
        (``calibr/_engines/_poisson.py``); every other metric is called on the
        repeated rows."""
        if self.kind == "binned" and self.prep.binary and self.form == "binary":
            from .._kernels.binned import ece_from_stats, mce_from_stats

            cells, w = self.cells[:, 0], counts.astype(np.float64)
            count = np.bincount(cells, weights=w, minlength=self.bins)
            if count.sum() == 0.0:
                return math.nan
            sp = np.bincount(cells, weights=w * self.x[:, 0], minlength=self.bins)
            sy = np.bincount(cells, weights=w * self.c[:, 0], minlength=self.bins)
            reduce = ece_from_stats if self.code == kb.ECE else mce_from_stats
            return reduce(count, sp, sy)
        idx = np.repeat(np.arange(self.prep.n), counts)
        if idx.size == 0:
            return math.nan
        try:
            return self.call(self.prep.p[idx], self.y[idx])
        except InputError as err:  # e.g. auroc of a resample of one class
            if err.code != UNDEFINED:
                raise
            return math.nan

    def jackknife(self) -> np.ndarray:
        """The metric without row i, for each row i (NaN where it is undefined:
        fewer than 2 rows, or a metric that refuses n - 1 rows)."""
        if self.prep.n < 2 or (self.kind == "scalar" and self.code == kb.UQ
                               and self.prep.n < 3):  # "uq" needs 2 rows: n - 1 = 1 has none
            return np.full(self.prep.n, math.nan)
        if self.kind == "binned":
            return kb.binned_jackknife(self.x, self.cells, self.c, self.bins, self.code)
        if self.kind == "scalar":
            n = self.prep.n
            ones = np.ones(n)
            r = np.array([weighted_row_sums(self.e[k], ones, self.g[k])
                          for k in range(self.e.shape[0])])
            return kb.scalar_jackknife(self.order, self.e, self.g, r, self.code)
        p, y, n = self.prep.p, self.y, self.prep.n
        keep = np.ones(n, dtype=bool)
        out = np.empty(n)
        for i in range(n):
            keep[i] = False
            try:
                value = self._value(p[keep], y[keep])
            except InputError:  # e.g. "uq" of 1 row: the BCa interval is undefined
                value = math.nan
            out[i] = metric_value(value, finite=True)  # a bad value is an error, not NaN
            keep[i] = True
        return out

    def cost(self) -> float:
        """Kernel evaluations per replicate of the canonical SKCE (0 otherwise)."""
        if self.name == "skce" and getattr(self, "form", None) == "canonical":
            return float(self.prep.n) ** 2 * self.prep.k
        return 0.0


def _replicates(plans: Sequence[_Plan], rng: Any, n_resamples: int) -> list[np.ndarray]:
    """The replicates of every plan on the same resamples.

    The replicates are cut into ``min(16, n_resamples)`` chunks of consecutive
    replicates (``chunk_bounds``); chunk c draws from the generator of the c-th
    child of ``rng``'s seed sequence (``SeedSequence(rng).spawn(chunks)[c]``,
    or the Generator's own ``seed_seq``), replicate after replicate, n numbers
    ``u = gen.random()`` each, the rows ``floor(n * u)``. Every plan gets fresh
    generators from the same children, so all of them draw the same rows.
    """
    nchunks = min(REPLICATE_CHUNKS, n_resamples)
    bounds = chunk_bounds(n_resamples, nchunks)
    seeds, bitgen = group_seeds(rng, nchunks, "resamples")
    out = []
    for plan in plans:
        dist = np.empty(n_resamples)
        plan.replicates([np.random.Generator(bitgen(s)) for s in seeds], bounds, dist)
        out.append(dist)
    return out


def poisson_seed(rng: Any) -> int:
    """The Poisson scheme's seed: ``rng`` itself (an integer below 2**64), the next
    64-bit integer of a Generator, or fresh entropy for None."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, kp.MAX_SEED, dtype=np.uint64))
    if rng is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    if not 0 <= rng < kp.MAX_SEED:
        raise InputError(
            f'`rng` must be a seed below 2**64 for `scheme = "poisson"` (the generator '
            f"keys each row's counts by a 64-bit seed); got {fmt(rng)}.", param="rng")
    return int(rng)


def row_key_missing(count: int, where: str = "") -> InputError:
    """The error of a row key with ``count`` missing values (``where``: the first's
    position, when the rows have positions)."""
    return InputError(f"`row_key` must not contain missing values; {count:,} missing{where}.",
                      param="row_key")


def row_key_repeated(count: int, where: str = "") -> InputError:
    """The error of a row key with ``count`` values that repeat an earlier one."""
    return InputError(
        f"`row_key` must identify each row: {count:,} value{'s' if count != 1 else ''} "
        f"repeat{'s' if count == 1 else ''} an earlier one{where}.", param="row_key")


def check_row_keys(row_key: Any, n: int) -> np.ndarray:
    """``row_key`` as int64: integers, one per row of the input, none missing,
    no two equal (``docs/bootstrap.md``, "The Poisson scheme")."""
    isna = getattr(row_key, "isna", None) or getattr(row_key, "is_null", None)
    if isna is not None:
        missing = np.asarray(isna(), dtype=bool)
        if missing.any():
            raise row_key_missing(int(missing.sum()),
                                  f" (first at position {int(np.flatnonzero(missing)[0])})")
    arr = np.asarray(row_key)
    if arr.dtype == object and arr.size and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
            for v in arr.tolist()):
        arr = np.asarray(arr.tolist())  # Python ints (e.g. a nullable column without NA)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise InputError(
            "`row_key` must be a vector of integers, one per row (the Poisson scheme "
            f"keys each row's counts by it); got {arr.ndim}-d values of dtype "
            f"{arr.dtype}.", param="row_key")
    if arr.shape[0] != n:
        raise InputError(
            f"`row_key` must have one value per row of `p`; got {arr.shape[0]:,} for "
            f"{n:,} rows.", param="row_key")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise InputError(
            f"`row_key` must fit in a signed 64-bit integer; got {int(arr.max())}.",
            param="row_key")
    keys = arr.astype(np.int64)
    uniq, first, times = np.unique(keys, return_index=True, return_counts=True)
    if uniq.shape[0] != n:
        raise row_key_repeated(n - uniq.shape[0],
                               f" (first {int(uniq[times > 1][0])}, at position "
                               f"{int(first[times > 1][0])})")
    return keys


def _poisson_keys(row_key: Any, prep: Prepared, p: Any) -> np.ndarray:
    """The row keys of the rows used: ``row_key`` (checked), or the rows'
    positions in the input; only those of the rows ``na_rm`` keeps."""
    if row_key is None:
        return (np.arange(prep.n, dtype=np.int64) if prep.kept is None
                else prep.kept.astype(np.int64))
    n_input = prep.n if prep.kept is None else len(p)
    keys = check_row_keys(row_key, n_input)
    return keys if prep.kept is None else keys[prep.kept]


def _poisson_replicates(plan: _Plan, seed: int, keys: np.ndarray,
                        n_resamples: int) -> np.ndarray:
    """Replicate r (1 to ``n_resamples``) of the Poisson scheme: each row's count
    from :mod:`calibr._kernels.poisson`, keyed by (seed, r, row key)."""
    a, b = kp.row_state(seed, keys)
    out = np.empty(n_resamples)
    with warnings.catch_warnings():
        if plan.calibr_metric:  # its warnings on the data came with the estimate
            warnings.simplefilter("ignore")
        for r in range(1, n_resamples + 1):
            out[r - 1] = plan.poisson_value(kp.counts(a, b, r))
    return out


# --------------------------------------------------------------------------
# intervals (scipy.stats.bootstrap's definitions)

_NORMAL = NormalDist()


def _ndtr(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _ndtri(q: float) -> float:
    if q <= 0.0:
        return -math.inf
    if q >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(q)


def _acceleration(jack: np.ndarray) -> float:
    """Efron's acceleration sum(U^3) / (6 (sum U^2)^1.5) of the jackknife values,
    U_i = (n - 1)(mean - jack_i); NaN when the jackknife is constant or undefined.

    U is divided by max |U| first: the ratio does not change, and neither
    U^2 nor U^3 underflow or overflow (metrics near 1e-110 made the
    denominator 0.0, a ZeroDivisionError; near 1e-300, a NaN for a defined
    interval).
    """
    n = float(jack.shape[0])
    with np.errstate(all="ignore"):  # NaN or infinite values: the scale is not finite
        u = (n - 1.0) * (np.mean(jack) - jack)
        scale = float(np.max(np.abs(u))) if u.size else math.nan
    if not (math.isfinite(scale) and scale > 0.0):
        return math.nan
    v = u / scale
    return float(np.sum(v**3)) / float(np.sum(v**2)) ** 1.5 / 6.0


def _bca_levels(dist: np.ndarray, estimate: float, jack: np.ndarray,
                alpha: float) -> tuple[float, float]:
    """The quantile levels of the BCa interval (Efron & Tibshirani 1993, 14.3
    and 15.4; scipy's ``_bca_interval``)."""
    below = np.count_nonzero(dist < estimate) + np.count_nonzero(dist <= estimate)
    z0 = _ndtri(below / (2.0 * dist.shape[0]))
    a = _acceleration(jack)
    z = _ndtri(alpha)
    levels = []
    for zq in (z, -z):
        s = z0 + zq
        levels.append(_ndtr(z0 + s / (1.0 - a * s)))
    return levels[0], levels[1]


def _interval(dist: np.ndarray, estimate: float, level: float, method: str,
              jack: Callable[[], np.ndarray] | None, alternative: str = "two-sided"
              ) -> ConfidenceInterval:
    alpha = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    undefined = int(np.count_nonzero(np.isnan(dist)))
    if undefined:
        warn(CountedRuntimeWarning(
            f"The metric is NaN or infinite (undefined, e.g. the AUROC of one class; or the "
            f"log loss of an impossible prediction) on {undefined:,} "
            f"of the {dist.shape[0]:,} resamples, so the confidence interval is NaN "
            "(docs/bootstrap.md).", count=undefined, unit=("resample", "resamples"),
            what=("gives the metric NaN or inf, so the interval is NaN",
                  "give the metric NaN or inf, so the intervals are NaN")))
        return ConfidenceInterval(math.nan, math.nan)
    if method == "bca":
        lo_q, hi_q = _bca_levels(dist, estimate, jack(), alpha)
    else:
        lo_q, hi_q = alpha, 1.0 - alpha
    if math.isnan(lo_q) or math.isnan(hi_q):
        warn(
            "The BCa confidence interval cannot be calculated: the estimate lies outside "
            "the bootstrap distribution (every replicate above it, or every one below), "
            "or the jackknife values (the metric without each row) are all equal or "
            "undefined (as for \"uq\" on 2 rows); the interval is NaN.",
            RuntimeWarning,
        )
        low = high = math.nan
    else:
        low, high = (float(v) for v in np.quantile(dist, [lo_q, hi_q]))
    if method == "basic":
        low, high = 2.0 * estimate - high, 2.0 * estimate - low
    if alternative == "less":
        low = -math.inf
    elif alternative == "greater":
        high = math.inf
    return ConfidenceInterval(low, high)


def _std(dist: np.ndarray) -> float:
    return float(np.std(dist, ddof=1)) if dist.shape[0] > 1 else math.nan


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _warn_cost(plans: Sequence[_Plan], n_resamples: int) -> None:
    cost = sum(plan.cost() for plan in plans) * (n_resamples + 1)
    if cost > CANONICAL_WARN_COST:
        warn(
            f"The canonical SKCE costs O(n^2 K) per replicate: about {cost:.1e} kernel "
            "evaluations in all here (a minute or more); type='confidence' or "
            "'classwise' is O(n) per replicate.",
            UserWarning,
        )


_RULES = dict(
    n_resamples=Integer(1, MAX_RESAMPLES),
    confidence_level=LEVEL,
    method=Options(*CI_METHODS, "BCa"),
    rng=RNG,
)


def _method(method: str) -> str:
    return "bca" if method == "BCa" else method


# --------------------------------------------------------------------------
# the public functions


@validate_params(**_RULES, scheme=Options(*SCHEMES))
@shared_docs
def bootstrap(
    p: Any,
    y: Any,
    metric: str | Callable[..., float] = DEFAULT_METRIC,
    *,
    n_resamples: int = BOOTSTRAP_RESAMPLES_DEFAULT,
    confidence_level: float = 0.95,
    method: str = "percentile",
    rng: int | np.random.Generator | None = None,
    classes: Sequence | None = None,
    na_rm: bool = False,
    scheme: str = "multinomial",
    row_key: Any = None,
    **options: Any,
) -> BootstrapResult:
    r"""Bootstrap confidence interval of a calibration metric.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    metric : str or callable, default "ece"
        The name of a registered metric (``calibr.frame.METRICS``: ``"ece"``,
        ``"mce"``, ...), computed by the calibr function of that name with
        ``options``; or any function
        ``f(p, y, **options) -> float`` (called on each resample), which must
        return a real number: a Python or numpy int or float (or a 0-d array of
        one), finite or NaN.
    n_resamples : int, default 9999, keyword-only
        Bootstrap replicates (scipy's default), 1 to 10,000,000.
    confidence_level : float, default 0.95, keyword-only
        Strictly between 0 and 1.
    method : {"percentile", "basic", "bca"}, default "percentile", keyword-only
        The interval, as ``scipy.stats.bootstrap`` defines it (``"BCa"`` is
        accepted too). BCa needs the metric without each row (the jackknife):
        O(n) in all for the binned metrics and the scalar SKCE/MMCE, and n
        calls of the metric on n - 1 rows otherwise.
    rng : None, int or numpy.random.Generator, keyword-only
        The random numbers: a seed (the same seed gives the same result), a
        Generator (used as is: its state advances), or None for fresh entropy.
        For ``scheme="poisson"``: a seed below 2**64, or a Generator's next
        64-bit integer, or fresh entropy (the seed used is
        ``BootstrapResult.seed``).
    <calibr:classes>
    <calibr:na_rm>
    scheme : {"multinomial", "poisson"}, default "multinomial", keyword-only
        How a replicate resamples the rows: ``"multinomial"`` draws n rows with
        replacement; ``"poisson"`` repeats each row a Poisson(1) number of
        times, from a counter-based generator keyed by the seed, the replicate
        and the row's key, so that a polars ``LazyFrame``, a DuckDB relation
        or a Spark DataFrame computes the same replicates on the engine
        (``docs/bootstrap.md``, "The Poisson scheme").
    row_key : array-like or str, optional, keyword-only
        The Poisson scheme's key of each row: integers (signed 64-bit), one per
        row of the input, none missing, no two equal. Default: the row's
        position in the input (0, 1, ...). On an engine source, the name of
        such a column of ``p`` (required there: an engine's rows have no
        position).
    **options
        The metric's options, the keywords of its signature: ``bins``,
        ``type``, ``binning`` and ``right`` (``ece``, ``mce``); ``estimator``,
        ``bandwidth`` and ``type`` (``skce``); ``bandwidth`` (``mmce``);
        ``kind`` and ``scale`` (``ecce``); those of ``calibration_error`` and
        ``smece`` (called on each resample).
        Frequency weights are not taken. Equal-width bins and explicit breaks
        (either closure) are fixed bins, O(n) per replicate;
        ``binning="equal-mass"`` places the bins on each resample (a call of
        the metric per replicate).

    Returns
    -------
    BootstrapResult
        ``confidence_interval.low/high``, ``standard_error``,
        ``bootstrap_distribution`` (scipy's names), ``estimate``, and what was
        done.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument or option, and
        for a callable ``metric`` that returns anything but a finite number or
        NaN (None, a bool, a complex number, an array, an infinity).
    TypeError
        (``calibr.InputTypeError``) for an option the metric does not take, an
        ``rng`` of another type, or input of a type calibr does not accept.

    Warns
    -----
    UserWarning
        For the canonical SKCE when its cost, :math:`n^2 K` per replicate,
        passes 1e11 kernel evaluations in all.
    RuntimeWarning
        When a BCa interval is undefined (a degenerate distribution, or a
        jackknife that is constant or undefined, as for ``"uq"`` on 2 rows):
        NaN.

    Notes
    -----
    Replicate b draws n rows with replacement, the (p, y) pairs together: the
    rows :math:`\lfloor n u_t \rfloor` of n uniform numbers. The replicates
    are cut into ``min(16, n_resamples)`` chunks of consecutive replicates;
    chunk c draws ``u = gen.random(n)`` for each of its replicates in turn,
    from the generator of ``numpy.random.SeedSequence(rng).spawn(chunks)[c]``
    (for a Generator ``rng``, of its ``bit_generator.seed_seq.spawn``), so the
    chunks run on all cores and the result does not depend on the threads
    (``docs/bootstrap.md``). Each replicate
    value equals ``calibr.<metric>(p[idx], y[idx], **options)`` for those rows
    ``idx``, to rounding (``ecce``: bit for bit). Cost per replicate:
    **O(n)** for ``ece``/``mce`` with fixed bins (O(nK) classwise), for
    ``skce``/``mmce`` with a numeric bandwidth in the binary, confidence and
    classwise forms (the counts of a resample are frequency weights of the
    sample sorted once), and for ``ecce`` (the rows sorted once, each copy's
    step added in the sorted order); **the canonical SKCE is O(n^2 K) per
    replicate**, and ``bandwidth="median"``, equal-mass and isotonic bins and
    ``bins="sweep"``/``"auto"`` recompute on each resample (a call of the
    metric per replicate).

    The intervals follow ``scipy.stats.bootstrap``: ``"percentile"`` the
    :math:`\alpha/2` and :math:`1 - \alpha/2` quantiles of the replicates
    (linear interpolation), ``"basic"`` :math:`2\hat\theta` minus them,
    ``"bca"`` Efron's bias-corrected and accelerated quantiles. The default
    is ``"percentile"``, not scipy's ``"BCa"``, because BCa costs n metric
    calls where no O(n) jackknife exists. ``docs/bootstrap.md`` has the
    definitions.

    References
    ----------
    Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
    Chapman & Hall.

    Examples
    --------
    >>> import numpy as np
    >>> import calibr
    >>> gen = np.random.default_rng(0)
    >>> p = gen.random(2000)
    >>> y = gen.random(2000) < p ** 2          # overconfident
    >>> res = calibr.bootstrap(p, y, "ece", n_resamples=999, rng=1)
    >>> bool(res.confidence_interval.low < res.estimate < res.confidence_interval.high)
    True
    >>> res.estimate == calibr.ece(p, y)
    True
    """
    method = _method(method)
    lazy = lazy_backend(p)
    if lazy is not None and hasattr(lazy, "bootstrap"):  # an engine source (docs/engines.md)
        return lazy.bootstrap(p, y, metric, n_resamples=n_resamples,
                              confidence_level=confidence_level, method=method, rng=rng,
                              classes=classes, na_rm=na_rm, scheme=scheme, row_key=row_key,
                              **options)
    if scheme == "multinomial" and row_key is not None:
        raise InputError(
            f'`row_key` keys the rows of {arg("scheme", "setting", "poisson")}; the '
            "multinomial scheme draws rows by position.", param="row_key")
    seed = poisson_seed(rng) if scheme == "poisson" else None
    name, fn, opts = check_metric(metric, options, "bootstrap")
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    plan = _Plan(name, fn, opts, prep)
    _warn_cost([plan], n_resamples)
    if seed is None:
        (dist,) = _replicates([plan], rng, n_resamples)
    else:
        dist = _poisson_replicates(plan, seed, _poisson_keys(row_key, prep, p), n_resamples)
    return finish_bootstrap(dist, plan.estimate, confidence_level, method, plan.jackknife,
                            name, n_resamples, prep.n, scheme, seed)


def finish_bootstrap(dist: np.ndarray, estimate: float, confidence_level: float, method: str,
                     jackknife: Callable[[], np.ndarray] | None, name: str, n_resamples: int,
                     n: int, scheme: str, seed: int | None) -> BootstrapResult:
    """The result of :func:`bootstrap` from the replicates (the engines' Poisson
    bootstrap ends here too)."""
    ci = _interval(dist, estimate, confidence_level, method, jackknife)
    return BootstrapResult(
        confidence_interval=ci, bootstrap_distribution=_readonly(dist),
        standard_error=_std(dist), estimate=estimate, metric=name, method=method,
        confidence_level=confidence_level, n_resamples=n_resamples, n=n, scheme=scheme,
        seed=seed,
    )


def _same_rows(p_a: Any, p_b: Any) -> None:
    """Refuse predictions of different lengths, before either is read."""
    try:
        na, nb = len(p_a), len(p_b)
    except TypeError:  # not a sequence: prepare() names what is wrong
        return
    if na != nb:
        raise InputError(
            f"{arg('p_a')} and {arg('p_b')} must be predictions for the same rows; got {na} and "
            f"{nb} rows.",
            param="p_b"
        )


def _prepare_as(name: str, p: Any, y: Any, **kwargs: Any) -> Prepared:
    """``prepare(p, y)`` whose errors name the argument ``name`` where they name ``p``
    (the terms of the message and ``param``; its text and the values it shows stay)."""
    try:
        return prepare(p, y, **kwargs)
    except (InputError, InputTypeError) as err:
        raise err.renamed({"p": name}) from None


@validate_params(**_RULES, alternative=Options(*_ALTERNATIVES))
@shared_docs
def paired_bootstrap(
    p_a: Any,
    p_b: Any,
    y: Any,
    metric: str | Callable[..., float] = DEFAULT_METRIC,
    *,
    n_resamples: int = BOOTSTRAP_RESAMPLES_DEFAULT,
    confidence_level: float = 0.95,
    method: str = "percentile",
    alternative: str = "two-sided",
    rng: int | np.random.Generator | None = None,
    classes: Sequence | None = None,
    na_rm: bool = False,
    **options: Any,
) -> PairedBootstrapResult:
    r"""Is model A better calibrated than model B? The bootstrap of the difference
    ``metric(p_a, y) - metric(p_b, y)`` on the same rows.

    Parameters
    ----------
    p_a, p_b : array-like, pandas Series or DataFrame
        The predictions of the two models for the same rows, each as ``p`` of
        the metric (both vectors, or both matrices with the same columns).
    <calibr:y>
    metric : str or callable, default "ece"
        As in :func:`calibr.bootstrap`.
    n_resamples, confidence_level, method, rng
        As in :func:`calibr.bootstrap`.
    alternative : {"two-sided", "less", "greater"}, default "two-sided", keyword-only
        The alternative hypothesis about the difference A - B: ``"greater"``
        (A is worse calibrated: its error is larger), ``"less"`` (A is
        better), or either. A one-sided alternative gives a one-sided
        interval, as in scipy.
    <calibr:classes>
    na_rm : bool, default False, keyword-only
        Drop the rows where ``p_a``, ``p_b`` or ``y`` is missing (the same rows
        from both) instead of raising.
    **options
        The metric's options, as in :func:`calibr.bootstrap`.

    Returns
    -------
    PairedBootstrapResult
        The interval, ``standard_error`` and ``bootstrap_distribution`` of the
        difference, ``estimate`` (A - B), ``estimate_a``, ``estimate_b`` and
        ``pvalue``.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values, or predictions of different
        lengths.
    TypeError
        (``calibr.InputTypeError``) as for :func:`calibr.bootstrap`.

    Notes
    -----
    Each replicate draws the same rows for both models (the pairs
    ``(p_a, p_b, y)`` are resampled together), so the interval is that of the
    paired difference. The p-value inverts the percentile interval: with
    :math:`d^*_b` the replicate differences, ``"greater"`` gives the share
    :math:`d^*_b \le 0`, ``"less"`` the share :math:`d^*_b \ge 0`, and
    ``"two-sided"`` twice the smaller of the two (at most 1). Its resolution
    is ``1 / n_resamples``; 0 is possible.

    Examples
    --------
    >>> import numpy as np
    >>> import calibr
    >>> gen = np.random.default_rng(0)
    >>> p = gen.random(5000)
    >>> y = gen.random(5000) < p                 # p is calibrated
    >>> res = calibr.paired_bootstrap(p ** 2, p, y, n_resamples=999, rng=1,
    ...                               alternative="greater")
    >>> bool(res.estimate > 0), float(res.pvalue)
    (True, 0.0)
    """
    method = _method(method)
    name, fn, opts = check_metric(metric, options, "paired_bootstrap")
    # read once, as the input layer reads any array (a GPU y is copied to the host
    # once, not once per model; docs/definitions.md, "Arrays of other libraries")
    p_a, p_b, y = eager(p_a, "p_a"), eager(p_b, "p_b"), eager(y, "y")
    _same_rows(p_a, p_b)
    if na_rm:
        keep = _complete_rows(p_a, p_b)
        p_a, p_b, y = (_take(v, keep) for v in (p_a, p_b, y))
    prep_a = _prepare_as("p_a", p_a, y, classes=classes, na_rm=na_rm)
    prep_b = _prepare_as("p_b", p_b, y, classes=classes, na_rm=na_rm)
    if (prep_a.binary, prep_a.k, prep_a.n) != (prep_b.binary, prep_b.k, prep_b.n):
        what = lambda prep: "a vector" if prep.binary else f"{prep.k} columns"  # noqa: E731
        raise InputError(
            f"{arg('p_a')} and {arg('p_b')} must be predictions of the same kind for the same "
            "rows; got "
            f"{what(prep_a)} ({prep_a.n} rows used) and {what(prep_b)} ({prep_b.n} rows used).",
            param="p_b"
        )
    plans = [_Plan(name, fn, opts, prep_a), _Plan(name, fn, opts, prep_b)]
    _warn_cost(plans, n_resamples)
    da, db = _replicates(plans, rng, n_resamples)
    dist = da - db
    estimate = plans[0].estimate - plans[1].estimate

    def jack() -> np.ndarray:
        return plans[0].jackknife() - plans[1].jackknife()

    ci = _interval(dist, estimate, confidence_level, method, jack, alternative)
    at_most = np.count_nonzero(dist <= 0.0) / n_resamples
    at_least = np.count_nonzero(dist >= 0.0) / n_resamples
    if alternative == "greater":
        pvalue = at_most
    elif alternative == "less":
        pvalue = at_least
    else:
        pvalue = min(1.0, 2.0 * min(at_most, at_least))
    return PairedBootstrapResult(
        confidence_interval=ci, bootstrap_distribution=_readonly(dist),
        standard_error=_std(dist), estimate=estimate, estimate_a=plans[0].estimate,
        estimate_b=plans[1].estimate, pvalue=float(pvalue), alternative=alternative,
        metric=name, method=method, confidence_level=confidence_level,
        n_resamples=n_resamples, n=prep_a.n,
    )


def _missing_rows(p: Any) -> np.ndarray | None:
    """Rows of ``p`` with a missing value, as a boolean mask (None if p is not an
    array of numbers: the input layer then reports it)."""
    try:
        arr = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if arr.ndim == 1:
        return np.isnan(arr)
    if arr.ndim == 2:
        return np.isnan(arr).any(axis=1)
    return None


def _complete_rows(p_a: Any, p_b: Any) -> np.ndarray | None:
    """The rows where neither model's prediction is missing (None: let each
    ``prepare()`` decide)."""
    ma, mb = _missing_rows(p_a), _missing_rows(p_b)
    if ma is None or mb is None or ma.shape != mb.shape:
        return None
    return ~(ma | mb)


def _take(values: Any, keep: np.ndarray | None) -> Any:
    if keep is None or keep.all():
        return values
    if hasattr(values, "iloc"):
        return values.iloc[keep]
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    return arr[keep] if arr.shape[:1] == keep.shape else values
