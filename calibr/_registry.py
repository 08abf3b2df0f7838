"""The registry of calibr's scalar metrics: one entry per metric, read by everything
that takes a metric by name.

The verbs (``summarise(metrics=...)``, ``calibr.metric(...)``), the bootstrap
(``bootstrap(metric=...)``, ``paired_bootstrap``), ``calibration_test(method=
"consistency", metric=...)``, the Dask backend, the command line (``calibr report
--metrics``, ``calibr compare``), the regression gate, the contract tests and the
table of ``docs/definitions.md`` ("The metric registry") all read :data:`METRICS`;
none keeps a list of names or an if-chain over them. A name that is not here is
refused by each of them with its own message (listing :data:`METRICS`), never
computed by an ``else`` branch.

An entry says

* ``name``: the metric's name, which is also the name of its public function;
* ``kind``: ``"binned"`` (over the bins of ``calibr._binning``: ``ece``, ``mce``,
  ``calibration_error``), ``"kernel"`` (the Laplacian-kernel estimators: ``skce``,
  ``mmce``), ``"smooth"`` (``smece``), ``"cumulative"`` (the cumulative
  differences along sorted ``p``: ``ecce``) or ``"score"`` (a proper score or a
  discrimination measure, not a calibration error: ``brier``, ``log_loss``,
  ``auroc``);
* ``stats`` and ``reduction``: the sufficient statistics the number is a function
  of, and which function. :data:`BIN_SUMS` are the per-bin (count, sum of p, sum of
  y) of ``calibr._kernels.binned`` / ``grouped.*_stat_batches``; :data:`PAIR_SUMS`
  the kernel pair sums of the sorted scalars (``grouped.scalar_pair_sums``,
  ``_kernels.weighted_sums``); :data:`SORTED_SUMS` the running sums of ``y - p``
  of the rows sorted by ``p``, read at the end of each block of tied ``p``
  (``_kernels.cumulative``); :data:`ROW_SUMS` the total weight, the sum of the
  rows' losses and the count of rows of infinite loss
  (``calibr._metrics.scores.loss_sums``). The reductions are :data:`REDUCTIONS`;
  ``None``: no path from statistics (the metric is called on the rows);
* the paths that use them, each a fixed word (or ``None``, with the reason in
  ``note``): ``bootstrap`` (:data:`BIN_SUMS`, :data:`PAIR_SUMS` or
  :data:`SORTED_SUMS`: O(n) per replicate; :data:`RECOMPUTE`: the metric on
  each resample), ``grouped``
  (``summarise`` on a pandas groupby: every group at once from the compiled
  grouped kernels of ``calibr._kernels.grouped``, from the statistics named, or
  :data:`GROUP_ROWS`: the metric's own kernels on each group's rows; ``None``:
  one call per group), ``dask`` (:data:`MERGED_SUMS`: per-partition sums added;
  :data:`GATHERED`: the pandas path on the rows gathered, group by group for a
  groupby); ``lazy_call`` and ``lazy_column``, on a lazy engine (polars
  ``LazyFrame``, DuckDB relation, Spark DataFrame), a direct call of the function
  and a column of ``summarise`` (:data:`PUSHED_DOWN`: the engine's own query sums;
  :data:`COLLECTED`: the columns used are collected, ``docs/engines.md``);
* ``higher_is_better``: False for an error or a loss (the default: larger is worse),
  True for a measure where larger is better (``auroc``); the gates (``calibr
  compare``, the regression fixture's statistical mode) test for a change in the
  worse direction;
* ``consistency``: the options of ``calibration_test`` passed on to the metric in
  consistency resampling (``calibration_test(method="consistency",
  metric=name)``), or ``None`` when it cannot be its statistic;
* the metric's options and whether it takes ``weights`` are read from its
  signature (:attr:`MetricInfo.options`, :attr:`MetricInfo.weights`), never
  restated.

Each path can be narrower than the entry says: a data-dependent binning
(``binning="equal-mass"``) has no fixed bins, the canonical SKCE and
``bandwidth="median"`` no sorted pair sums; the consumer then recomputes, as
its docs say.

Not scalar metrics, so not here: ``decompose`` (a ``Decomposition``: score,
miscalibration, discrimination, uncertainty), ``multicalibration`` (a
``MulticalibrationResult``: a segment table and a test), ``val_prob`` (a Series of
fifteen statistics), ``median_bandwidth`` (a bandwidth, not an error),
``smece_curve`` (a curve), ``calibration_table`` (a table), ``calibration_test``
(a test), ``risk_coverage`` (a curve), ``recalibrate`` (probabilities) and
``calibration_gain`` (a ``CalibrationGain``: three losses; its difference is the
metric ``recalibration_gain``). A column of ``summarise`` or a bootstrap
replicate is one number. ``fixed_size_ce`` is one number, but of the rows' order
where tied confidences straddle a bin (``docs/conventions.md``, "LLM evaluation
tools"), which the lazy engines do not keep: not here either.

This module imports nothing of the numerics: the command line's ``--help`` lists
the metrics without numpy. :attr:`MetricInfo.function` imports the function on
first use.

How to add a metric
-------------------
1. The function, in a module of the metrics layer: ``f(p, y, <options>, *,
   classes=None, na_rm=False[, weights=None])`` returning a float, its options
   declared with ``validate_params`` (their defaults in the signature, or in
   ``calibr._defaults``), a numpydoc docstring with Examples; export it from
   ``calibr/__init__.py``.
2. One entry in :data:`METRICS` below: at least ``name``, ``module`` and
   ``kind``; the paths default to the generic ones (recompute, one call per
   group, gathered), so a metric works everywhere from its entry alone. Name its
   sufficient statistics only if every consumer has their kernels.
3. Its docs: the formula once in ``docs/definitions.md`` with its paper, and its
   row of the registry table there (``tests/test_registry.py`` checks the table
   equals this registry).
4. Its oracle: a readable numpy version under ``tests/oracles/`` and a test of the
   function against it (and against R or a peer where one has it). The common
   tests (``tests/test_contract.py``, ``tests/test_registry.py``) pick the entry
   up: every path against the direct call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from types import MappingProxyType
from typing import Any

__all__ = [
    "BATTERY",
    "BIN_SUMS",
    "DATA_ARGS",
    "DEFAULT_METRIC",
    "DEFAULT_METRICS",
    "GATHERED",
    "GLOBAL_SORT",
    "GROUP_ROWS",
    "MERGED_SUMS",
    "METRICS",
    "PAIR_SUMS",
    "RECOMPUTE",
    "ROW_SUMS",
    "SORTED_SUMS",
    "PUSHED_DOWN",
    "COLLECTED",
    "LAZY_PATHS",
    "PUSHED_DOWN_SUMS",
    "REDUCTIONS",
    "MetricInfo",
    "higher_is_better",
    "info_of",
]

#: The per-bin sums (count, sum of p, sum of y) of fixed bins.
BIN_SUMS = "bin_sums"
#: The Laplacian-kernel pair sums of sorted scalars (a numeric bandwidth).
PAIR_SUMS = "pair_sums"
#: The running sums of ``y - p`` of the rows sorted by ``p`` (ties one block).
SORTED_SUMS = "sorted_sums"
#: The total weight, the (weighted) sum of the rows' losses and the rows of infinite
#: loss (``calibr._metrics.scores.loss_sums``): a proper score that is a row mean.
ROW_SUMS = "row_sums"

#: ``summarise`` on a pandas groupby: the metric's own kernels on each group's rows
#: (sorted by group) in one compiled loop, no statistics merged (``calibr._kernels.grouped``).
GROUP_ROWS = "group_rows"
#: The bootstrap calls the metric on each resample.
RECOMPUTE = "recompute"
#: Dask: per-partition sums, added in a fixed tree.
MERGED_SUMS = "merged_sums"
#: Dask: a direct call sorts the rows globally and combines per-partition sums
#: (the pair sums and boundary sums of ``calibr._engines.dask.exact_scalar``; the running
#: sums of ``calibr._engines.dask.ecce``, by a prefix scan); ``summarise`` computes it
#: group by group, as :data:`GATHERED`.
GLOBAL_SORT = "global_sort"
#: Dask: ``summarise`` runs the pandas path on the rows gathered to one worker (per
#: group for a groupby); the function itself takes no Dask input.
GATHERED = "gathered"
#: A lazy engine (polars LazyFrame, DuckDB, Spark): the engine computes the sums in
#: one query (``calibr._engines._lazy``); only groups x bins numbers reach the driver.
PUSHED_DOWN = "pushed_down"
#: A lazy engine: the columns used are collected and the pandas path runs on them.
COLLECTED = "collected"
#: The paths on a lazy engine.
LAZY_PATHS = (PUSHED_DOWN, COLLECTED)
#: The metrics, not binned, whose engine query is written (calibr/_engines/_pushdown.py):
#: the row sums of the scores, the sorted sums of ecce and the AUROC's ranks.
PUSHED_DOWN_SUMS = ("brier", "log_loss", "auroc", "ecce")

#: The reductions of each kind of statistics to a metric's number.
REDUCTIONS = {
    BIN_SUMS: ("ece", "mce"),  # the share-weighted mean of the bins' gaps; their maximum
    PAIR_SUMS: ("skce", "mmce"),  # an SKCE estimator; the square root of the biased one
    SORTED_SUMS: ("ecce",),  # the largest |sum| (KS) or the range of the sums (Kuiper)
    ROW_SUMS: ("brier", "log_loss"),  # the sum of the losses over the weight
}

#: The Dask paths each kind of statistics allows.
DASK_PATHS = {BIN_SUMS: (MERGED_SUMS, GATHERED), PAIR_SUMS: (GLOBAL_SORT, GATHERED),
              SORTED_SUMS: (GLOBAL_SORT, GATHERED), ROW_SUMS: (MERGED_SUMS, GATHERED)}

#: The arguments of a metric that belong to the data, not to its options.
DATA_ARGS = ("p", "y", "classes", "na_rm", "weights")

#: The metric of ``bootstrap()``, ``paired_bootstrap()``, consistency resampling
#: and ``calibr compare`` when none is named (their signatures read it here).
DEFAULT_METRIC = "ece"

#: The metrics of ``summarise()`` (and of its fixture, and of ``calibr report``)
#: when none are named.
DEFAULT_METRICS = ("ece", "mce")


@dataclass(frozen=True)
class MetricInfo:
    """One metric of the registry (the fields: the module docstring).

    Examples
    --------
    >>> from calibr._registry import METRICS
    >>> info = METRICS["mce"]
    >>> info.kind, info.bootstrap, info.weights
    ('binned', 'bin_sums', True)
    >>> info.options
    ('bins', 'type', 'binning', 'right')
    """

    name: str
    module: str
    kind: str
    summary: str
    stats: str | None = None
    reduction: str | None = None
    bootstrap: str = RECOMPUTE
    grouped: str | None = None
    dask: str = GATHERED
    lazy_call: str = COLLECTED
    lazy_column: str = COLLECTED
    consistency: tuple[str, ...] | None = None
    note: str = ""
    higher_is_better: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {KINDS}")
        if self.stats is not None and self.reduction not in REDUCTIONS[self.stats]:
            raise ValueError(f"{self.name}: reduction {self.reduction!r} of {self.stats}")
        if self.bootstrap not in (RECOMPUTE, self.stats):
            raise ValueError(f"{self.name}: bootstrap {self.bootstrap!r} without its stats")
        if self.grouped not in (None, self.stats, GROUP_ROWS):
            raise ValueError(f"{self.name}: grouped {self.grouped!r} without its stats")
        if self.dask not in DASK_PATHS.get(self.stats, (GATHERED,)):
            raise ValueError(f"{self.name}: dask {self.dask!r}")
        for path in (self.lazy_call, self.lazy_column):
            if path not in LAZY_PATHS:
                raise ValueError(f"{self.name}: lazy path {path!r}")
            # the engines' queries: the bin sums, or the row and sorted sums of
            # calibr/_engines/_pushdown.py (the metrics of PUSHED_DOWN_SUMS)
            if path == PUSHED_DOWN and self.kind != "binned" and self.name not in PUSHED_DOWN_SUMS:
                raise ValueError(f"{self.name}: pushed down without a query")
        if (self.lazy_column == PUSHED_DOWN and self.stats != BIN_SUMS
                and self.name not in PUSHED_DOWN_SUMS):
            raise ValueError(f"{self.name}: a summarise column pushed down needs its sums")

    @property
    def function(self) -> Callable[..., float]:
        """The public function (imported on first use)."""
        return getattr(import_module(self.module), self.name)

    @property
    def options(self) -> tuple[str, ...]:
        """The options of the function, in its order: its keywords but the data's."""
        return tuple(
            name for name, prm in inspect.signature(self.function).parameters.items()
            if prm.kind in (prm.POSITIONAL_OR_KEYWORD, prm.KEYWORD_ONLY)
            and name not in DATA_ARGS
        )

    @property
    def weights(self) -> bool:
        """Whether the function takes frequency weights (``weights=``)."""
        return "weights" in inspect.signature(self.function).parameters


#: The kinds of metric.
KINDS = ("binned", "kernel", "smooth", "cumulative", "score", "selective", "recalibration")

_ENTRIES = (
    MetricInfo(
        "ece", "calibr._metrics.binned", "binned",
        "expected calibration error over bins (R's ece)",
        stats=BIN_SUMS, reduction="ece", bootstrap=BIN_SUMS, grouped=BIN_SUMS,
        dask=MERGED_SUMS, lazy_call=PUSHED_DOWN, lazy_column=PUSHED_DOWN,
        consistency=("bins", "type"),
        note="fixed bins only: equal-mass bins are the data's own, so recomputed; "
             "type='top-label': bin_sums of one column of K x bins (predicted class, bin) "
             "cells in the bootstrap and on Dask, one call per group in summarise "
             "(the grouped kernels know the other forms only)",
    ),
    MetricInfo(
        "mce", "calibr._metrics.binned", "binned",
        "maximum calibration error over bins (R's mce)",
        stats=BIN_SUMS, reduction="mce", bootstrap=BIN_SUMS, grouped=BIN_SUMS,
        dask=MERGED_SUMS, lazy_call=PUSHED_DOWN, lazy_column=PUSHED_DOWN,
        consistency=("bins", "type"),
        note="fixed bins only, as ece; type='top-label' as ece",
    ),
    MetricInfo(
        "skce", "calibr._metrics.kernel", "kernel",
        "squared kernel calibration error (R's skce)",
        stats=PAIR_SUMS, reduction="skce", bootstrap=PAIR_SUMS, grouped=PAIR_SUMS,
        dask=GLOBAL_SORT, consistency=("type", "estimator", "bandwidth"),
        note="pair sums need a numeric bandwidth and a scalar form (not canonical), "
             "and the global sort of Dask no weights and not 'ul'",
    ),
    MetricInfo(
        "mmce", "calibr._metrics.kernel", "kernel",
        "maximum mean calibration error (R's mmce)",
        stats=PAIR_SUMS, reduction="mmce", bootstrap=PAIR_SUMS, grouped=PAIR_SUMS,
        dask=GLOBAL_SORT, consistency=("bandwidth",),
        note="as skce",
    ),
    MetricInfo(
        "calibration_error", "calibr._metrics.lp", "binned",
        "Lp calibration error over bins, plug-in or debiased (Kumar et al.)",
        lazy_call=PUSHED_DOWN, consistency=("bins", "type"),
        note="its reduction of the bin sums (an Lp norm, debiased) has no compiled "
             "kernel yet: recomputed, one call per group, gathered; a direct call on a "
             "lazy engine reduces the engine's bin sums, a summarise column is collected",
    ),
    MetricInfo(
        "smece", "calibr._metrics.smooth", "smooth",
        "smooth ECE (Blasiok & Nakkiran)",
        consistency=("type",),
        note="a kernel smoothing of the rows, no sums to merge: recomputed, one call "
             "per group, gathered; its bandwidth ('auto') is not calibration_test's",
    ),
    MetricInfo(
        "ecce", "calibr._metrics.cumulative", "cumulative",
        "cumulative calibration error, KS or Kuiper (Arrieta-Ibarra et al.)",
        stats=SORTED_SUMS, reduction="ecce", bootstrap=SORTED_SUMS, dask=GLOBAL_SORT,
        lazy_call=PUSHED_DOWN, lazy_column=PUSHED_DOWN,
        note="the rows sorted once: a bootstrap resample is a count per sorted row "
             "(O(n) per replicate, bit for bit the call on the resample); a direct "
             "call on Dask sorts the keys globally and scans the partitions' sums "
             "(weights too), summarise computes it group by group; no grouped kernel "
             "(one call per group); a lazy engine sums the blocks of tied p and runs a "
             "window sum over them, per group; its tests are calibration_test's 'ks' and "
             "'kuiper', not consistency resampling",
    ),
    MetricInfo(
        "brier", "calibr._metrics.scores", "score",
        "Brier score, summed over the classes (Brier 1950)",
        stats=ROW_SUMS, reduction="brier", dask=MERGED_SUMS, grouped=GROUP_ROWS,
        lazy_call=PUSHED_DOWN, lazy_column=PUSHED_DOWN,
        note="a mean of per-row losses: O(n) per bootstrap replicate by recomputing; "
             "every group in one compiled pass; on Dask the partitions' row sums merged, "
             "a call and a summarise column alike; a row sum per group on the lazy "
             "engines (a binary p; a matrix is collected); not "
             "consistency resampling (its excess under miscalibration, (q - p)(1 - 2p), "
             "has either sign: calibration_test's 'spiegelhalter' is its two-sided test)",
    ),
    MetricInfo(
        "log_loss", "calibr._metrics.scores", "score",
        "log loss, natural log (Good 1952)",
        stats=ROW_SUMS, reduction="log_loss", dask=MERGED_SUMS, grouped=GROUP_ROWS,
        lazy_call=PUSHED_DOWN, lazy_column=PUSHED_DOWN,
        note="as brier (its excess, (q - p) log((1 - p) / p), has either sign)",
    ),
    MetricInfo(
        "auroc", "calibr._metrics.scores", "score",
        "area under the ROC curve, ties one half (Hanley & McNeil)",
        higher_is_better=True, grouped=GROUP_ROWS, lazy_call=PUSHED_DOWN,
        lazy_column=PUSHED_DOWN,
        note="a sort per call: O(n log n) per bootstrap replicate; undefined (NaN in "
             "summarise, with one warning) for one class; a sort per group, every group "
             "in one compiled loop; gathered on Dask; on the lazy engines, the midranks "
             "of a binary p from its blocks of tied p and a window sum (a matrix is "
             "collected); a discrimination measure, not a "
             "calibration statistic, so not consistency resampling",
    ),
    MetricInfo(
        "aurc", "calibr._metrics.selective", "selective",
        "area under the risk-coverage curve of the top-label confidence (Geifman & El-Yaniv)",
        note="one sort of the confidences, no sums to merge: recomputed, one call per "
             "group, gathered, collected",
    ),
    MetricInfo(
        "e_aurc", "calibr._metrics.selective", "selective",
        "AURC minus that of the oracle confidence, error rate squared over 2",
        note="as aurc",
    ),
    MetricInfo(
        "augrc", "calibr._metrics.selective", "selective",
        "area under the generalized risk-coverage curve (Traub et al.)",
        note="as aurc",
    ),
    MetricInfo(
        "selective_accuracy", "calibr._metrics.selective", "selective",
        "accuracy of the most confident share `coverage` of the predictions",
        higher_is_better=True,
        note="as aurc; an accuracy: larger is better (the gates read it so)",
    ),
    MetricInfo(
        "recalibration_gain", "calibr._metrics.recalibration", "recalibration",
        "a proper score minus its value after cross-fitted recalibration (Berta et al.)",
        note="cv fits on the rows: recomputed, one call per group, gathered, collected; "
             "its folds are seeded by its option rng (default 0), so a group, a resample "
             "or a run gives the same number for the same rows",
    ),
)

#: Every metric by name, in the order of the docs (read-only).
METRICS: Mapping[str, MetricInfo] = MappingProxyType({e.name: e for e in _ENTRIES})

#: The evaluation battery: a calibration error with the scores reported beside it
#: (``calibr report --battery``; ``docs/definitions.md``, "Scores and discrimination"),
#: those of the list that are registered.
BATTERY = tuple(name for name in ("ece", "brier", "log_loss", "auroc", "aurc")
                if name in METRICS)

#: The binned metrics: those that ``bins``, ``type``, ``binning`` and ``right`` apply to
#: (in the reports and the command line's ``--bins``).
BINNED = tuple(name for name, info in METRICS.items() if info.kind == "binned")


def higher_is_better(func: Any) -> bool:
    """Whether larger values of a metric (by name or function) are better: True only
    for a registry entry that says so; a callable of the user's is an error (larger
    is worse), as the gates have always read every metric.

    Examples
    --------
    >>> higher_is_better("auroc"), higher_is_better("ece"), higher_is_better(len)
    (True, False, False)
    """
    info = info_of(func)
    return info is not None and info.higher_is_better


def info_of(func: Any) -> MetricInfo | None:
    """The entry of a metric given by name or as its public function; None for any
    other value (a callable of the user's, called on the rows).

    Examples
    --------
    >>> import calibr
    >>> from calibr._registry import info_of
    >>> info_of(calibr.ece).name, info_of("smece").kind, info_of(len)
    ('ece', 'smooth', None)
    """
    if isinstance(func, str):
        return METRICS.get(func)
    name = getattr(func, "__name__", None)
    info = METRICS.get(name) if isinstance(name, str) else None
    return info if info is not None and info.function is func else None
