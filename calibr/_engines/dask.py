"""Dask input: the same metrics and verbs, lazily, on data beyond one machine
(``docs/dask.md``).

The public functions hand a Dask input here (and only a Dask input: they test
the module of each data argument's type, ``a.__class__.__module__.startswith("dask")``,
and import this module, which imports dask, only then; ``import calibr`` never
imports dask). The result follows Dask's
convention: lazy, a ``dask.delayed.Delayed`` for a metric and a Dask DataFrame
for the verbs, whose ``.compute()`` gives the pandas result.

* **Exact by merged sums** (``ece``, ``mce``, ``calibration_table``, and
  ``summarise`` when every metric is binned): each partition is validated by
  the one input layer (``calibr._input``, through ``_binning.binned_stats`` and
  the group layer ``calibr._input.groups``) and reduced to the kernels' per-(group,
  bin) statistics ``(count, sum_conf, sum_hit)``; the partitions' statistics are
  added in a fixed binary tree (partition 0 + 1, 2 + 3, ..., then the pairs of
  those), and the metric or table is computed from the merged sums by the
  functions of the pandas path (``ece_from_stats``, ``mce_from_stats``, the
  table's ``_columns``). Counts and hits are integers, exact in any order;
  ``sum_conf`` (and weighted sums) is added in another order than one pass over
  all rows, so values that depend on it agree with the pandas path to rounding
  (<= 1e-12 relative), bit for bit with one partition, and are deterministic
  for a given partitioning. ``brier`` and ``log_loss`` (a call, or a column of
  ``summarise``) merge each partition's (and group's) row sums ``(W, L, z)`` of
  ``calibr._metrics.scores.loss_sums`` the same way.
* **A global sort** (the binary or confidence-form ``skce`` with ``"uq"`` or
  ``"biased"`` and a fixed bandwidth, and ``mmce``, without weights): the
  validated scalars are sorted by Dask, each partition gives its own pair sum
  and two boundary sums, and the cross-partition pairs follow from the
  factorised kernel (:func:`exact_scalar`); to rounding.
* **Group by group** (``summarise`` of a Dask groupby, for its metrics that are
  not binned with data-independent bins): the rows cut into buckets by a hash of
  the keys, each bucket's pieces joined in partition order on one worker, and
  the pandas path on each group's rows in the frame's order
  (:func:`_per_group`); bit for bit.
* **Gathered** (the other kernel options, equal-mass bins, callables,
  ``tests``, intervals, consistency bands): the partitions are concatenated on one
  worker in partition order and the pandas path runs there, so the value is
  that of the pandas path on the same rows, bit for bit; all those rows must
  fit in one worker's memory.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask import delayed

from .._input import InputError, InputTypeError, arg, extended, fmt

__all__ = ["brier", "calibration_table", "ece", "ecce", "exact_scalar", "log_loss", "loss",
           "mce", "mmce", "skce", "summarise"]

_COLLECTIONS = (dd.Series, dd.DataFrame)


def _from_stats(reduction: str) -> Callable[..., float]:
    """The function of the merged sums of a reduction of the registry
    (``calibr._registry.REDUCTIONS``: the per-bin sums' ``"ece"`` and ``"mce"``, the
    row sums' ``"brier"`` and ``"log_loss"``); an unknown one is a KeyError."""
    from .._kernels import binned
    from .._metrics.scores import loss_value

    if reduction in ("brier", "log_loss"):
        return functools.partial(loss_value, reduction)
    return {"ece": binned.ece_from_stats, "mce": binned.mce_from_stats}[reduction]


#: The first item of a summarise spec of row sums (the others are binned specs,
#: ``(bins, type, binning, right)``): ``(ROWS, score, eps)``.
_ROWS = "\0calibr-row-sums"


# --------------------------------------------------------------------------
# partitions


def _partitions(name: str, obj: Any, n: int | None) -> list | None:
    """The partitions of a Dask Series/DataFrame as Delayed objects (None for None);
    ``n``: the partition count it must have (that of ``p``)."""
    if obj is None:
        return None
    if not isinstance(obj, _COLLECTIONS):
        what = "a Dask Series or DataFrame" if name == "p" else "a Dask Series"
        raise InputTypeError(
            f"`{name}` must be {what} when one of the data arguments is a Dask object "
            f"(calibr pairs their partitions); got {type(obj).__module__}."
            f"{type(obj).__name__}.",
            param=name
        )
    parts = list(obj.to_delayed())
    if n is not None and len(parts) != n:
        raise InputError(
            f"`{name}` must have the partitions of {arg('p')} (calibr pairs them, as pandas "
            f"objects are paired by position); got {len(parts)} and {n} partitions. "
            "Take both from one Dask DataFrame, e.g. ddf['p'] and ddf['y'].",
            param=name
        )
    return parts


def _co_aligned(objs: list) -> bool:
    """Whether Dask collections come from one expression (``ddf['p']`` and
    ``ddf['y']``), so that Dask can give them the same partitions only when they
    are optimised together."""
    try:
        from dask.dataframe.dask_expr._expr import are_co_aligned
    except ImportError:  # pragma: no cover - dask before 2025.1
        try:
            from dask_expr._expr import are_co_aligned
        except ImportError:
            return False
    try:
        return bool(are_co_aligned(*(obj.expr for obj in objs)))
    except Exception:  # noqa: BLE001 - pragma: no cover - another expression kind
        return False


def _pack(*parts: Any) -> pd.DataFrame:
    """The pieces of one partition side by side, columns labelled "k:j"."""
    cols = {}
    for k, part in enumerate(parts):
        if isinstance(part, pd.DataFrame):
            for j in range(part.shape[1]):
                cols[f"{k}:{j}"] = part.iloc[:, j]
        else:
            cols[f"{k}:0"] = part
    return pd.DataFrame(cols)


def _unpack(packed: pd.DataFrame, k: int, like: Any) -> Any:
    """Piece ``k`` of a :func:`_pack`-ed partition, with the names of ``like``."""
    if isinstance(like, pd.DataFrame):
        piece = packed[[f"{k}:{j}" for j in range(like.shape[1])]]
        piece.columns = like.columns
        return piece
    return packed[f"{k}:0"].rename(like.name)


def _all_partitions(p: Any, y: Any, weights: Any) -> tuple[list, list, list | None]:
    """The paired partitions of ``p``, ``y`` (and ``weights``) as Delayed objects.

    Columns of one Dask DataFrame are optimised together, in one frame: Dask
    may combine the partitions of a column read alone (Parquet files whose
    projected columns are small are read two or more at a time), and two columns
    optimised apart need not be cut alike. Collections of different origins are
    paired partition by partition and must have as many."""
    objs = [("p", p), ("y", y)] + ([("weights", weights)] if weights is not None else [])
    for name, obj in objs:
        if not isinstance(obj, _COLLECTIONS):
            _partitions(name, obj, None)  # raises the type error
    if _co_aligned([obj for _, obj in objs]):
        packed = dd.map_partitions(_pack, *(obj for _, obj in objs),
                                   meta=_pack(*(obj._meta for _, obj in objs)))
        frames = list(packed.to_delayed())
        pieces = [[delayed(_unpack)(f, k, obj._meta) for f in frames]
                  for k, (_, obj) in enumerate(objs)]
        return pieces[0], pieces[1], pieces[2] if weights is not None else None
    pp = _partitions("p", p, None)
    return pp, _partitions("y", y, len(pp)), _partitions("weights", weights, len(pp))


def _in_partition(err: Exception, i: int) -> Exception:
    """The same error with the partition named (its positions count that
    partition's rows)."""
    return extended(err, f" [Dask partition {i}; positions count the rows of that partition]")



def _tree(items: list, combine: Callable[[Any, Any], Any]) -> Any:
    """``items`` combined pairwise in a fixed binary tree (Delayed): deterministic."""
    while len(items) > 1:
        items = [delayed(combine)(items[i], items[i + 1]) if i + 1 < len(items) else items[i]
                 for i in range(0, len(items), 2)]
    return items[0]


def _add_stats(a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x + z for x, z in zip(a, b, strict=True))


def _concat(parts: list) -> Any:
    """The partitions, concatenated in partition order (their own indexes kept)."""
    return parts[0] if len(parts) == 1 else pd.concat(parts)


def _has_complete(p: Any, y: Any) -> bool:
    miss = p.isna()
    if isinstance(miss, pd.DataFrame):
        miss = miss.any(axis=1)
    return bool((~(miss.to_numpy(dtype=bool) | y.isna().to_numpy(dtype=bool))).any())


# --------------------------------------------------------------------------
# the metrics


def mergeable(bins: Any, binning: str) -> bool:
    """Bins whose breaks do not depend on the data: per-partition sums merge (not
    ``bins="sweep"`` or ``"auto"``, whose number of bins comes from all the rows)."""
    if isinstance(bins, str):
        return False
    return binning == "equal-width" or not isinstance(bins, int)


def _stats(p, y, bins, type, classes, na_rm, w, binning, right) -> tuple:
    """``calibr._binning.binned_stats``, where kept weights that total 0 are not an
    error: a partition (or a group's rows in it) may hold only rows of weight 0,
    which add nothing; the total is checked on the merged sums."""
    from .._binning import BinSpec, binned_stats

    spec = BinSpec.from_options(bins, binning, right)
    try:
        return binned_stats(p, y, spec, type=type, classes=classes, na_rm=na_rm, weights=w)
    except InputError as err:
        if w is None or err.code != "zero_total":
            raise
    # every kept weight is 0 (they are nonnegative): the sums are 0, of the shapes
    # that unit weights give (which also checks p and y)
    ones = pd.Series(1.0, index=w.index) if isinstance(w, pd.Series) else np.ones(len(w))
    return tuple(np.zeros_like(s) for s in binned_stats(p, y, spec, type=type, classes=classes,
                                                        na_rm=na_rm, weights=ones))


def _binned_part(i, p, y, w, bins, type, classes, na_rm, binning, right):
    """One partition's per-bin statistics (None: no row, or none kept by na_rm)."""
    if len(p) == 0 or (na_rm and not _has_complete(p, y)):
        return None
    try:
        return _stats(p, y, bins, type, classes, na_rm, w, binning, right)
    except (ValueError, TypeError) as err:
        raise _in_partition(err, i) from None


def _finish_binned(stats: tuple | None, which: str, na_rm: bool) -> float:

    if stats is None:
        if na_rm:
            raise InputError(f"`p` and {arg('y')} have no complete observations: "
                             f"{arg('na_rm', 'hint', True)} dropped every row of every "
                             "partition.", param="p")
        raise InputError(f"`p` and {arg('y')} must not be empty; got 0 observations.", param="p")
    if float(np.sum(stats[0])) == 0.0:  # weighted: every kept weight 0
        raise InputError("`weights` must have a positive total; all the weights of the "
                         "rows kept are 0.", param="weights", code="zero_total")
    return _from_stats(which)(*stats)


def binned_metric(which: str, p, y, bins, type, classes, na_rm, weights, binning, right):
    """``ece()`` or ``mce()`` of Dask input: exact by merged sums, or gathered for
    equal-mass bins. A Delayed float."""
    pp, yy, ww = _all_partitions(p, y, weights)
    if not mergeable(bins, binning):
        from .._metrics import binned as _binned_metrics

        return delayed(_gathered_metric)(getattr(_binned_metrics, which), _concat_d(pp),
                                         _concat_d(yy), _concat_d(ww),
                                         dict(bins=bins, type=type, classes=classes,
                                              na_rm=na_rm, binning=binning, right=right))
    parts = [delayed(_binned_part)(i, a, b, None if ww is None else ww[i], bins, type,
                                   classes, na_rm, binning, right)
             for i, (a, b) in enumerate(zip(pp, yy, strict=True))]
    return delayed(_finish_binned)(_tree(parts, _add_stats), which, na_rm)


def ece(p, y, bins, type, classes, na_rm, weights, binning, right):
    return binned_metric("ece", p, y, bins, type, classes, na_rm, weights, binning, right)


def mce(p, y, bins, type, classes, na_rm, weights, binning, right):
    return binned_metric("mce", p, y, bins, type, classes, na_rm, weights, binning, right)


def _concat_d(parts: list | None) -> Any:
    return None if parts is None else delayed(_concat)(parts)


def _gathered_metric(func: Callable[..., float], p, y, w, options: dict) -> float:
    return func(p, y, weights=w, **options)


# the exact distributed scalar SKCE: a global sort, then per-partition sums
#
# With the rows sorted by x and cut into partitions whose ranges do not overlap
# (every x of partition a is <= every x of a later partition b), the kernel of a
# pair across partitions factorises: for x_i in a and x_j in b,
# exp(-(x_j - x_i)/h) = exp(-(hi_a - x_i)/h) exp(-(lo_b - hi_a)/h) exp(-(x_j - lo_b)/h),
# every exponent <= 0 (nothing overflows). So
#     T = sum_a T_a + sum_{a<b} L_a exp(-(lo_b - hi_a)/h) R_b,
# with T_a the pair sum inside partition a (the pandas path's kernel,
# calibr/_kernels/scalar_sums.py), L_a = sum_i e_i exp(-(hi_a - x_i)/h) and
# R_b = sum_j e_j exp(-(x_j - lo_b)/h): exact, to rounding.


def _scalar_part(i, p, y, classes, na_rm) -> pd.DataFrame:
    """One partition's validated scalars: x (the binary p, or the top-label
    confidence) and c (the hit), for the global sort."""
    from .._input import prepare
    from .._metrics.kernel import scalar_form

    if len(p) == 0 or (na_rm and not _has_complete(p, y)):
        return pd.DataFrame({"x": np.empty(0), "c": np.empty(0, np.uint8)})
    try:
        prep = prepare(p, y, classes=classes, na_rm=na_rm)
    except (ValueError, TypeError) as err:
        raise _in_partition(err, i) from None
    x, c = scalar_form(prep)
    return pd.DataFrame({"x": np.asarray(x, dtype=np.float64), "c": np.asarray(c, np.uint8)})


def _sorted_part_sums(part: pd.DataFrame, h: float) -> tuple | None:
    """``(n, T_a, sum e^2, lo, hi, L_a, R_a)`` of one partition of the sorted rows."""
    from .._kernels.scalar_sums import scalar_pair_sum

    if len(part) == 0:
        return None
    x = np.ascontiguousarray(part["x"].to_numpy(dtype=np.float64))
    c = np.ascontiguousarray(part["c"].to_numpy(dtype=np.uint8))
    total, diag, _ = scalar_pair_sum(x, c, h)
    e = c - x
    lo, hi = float(x.min()), float(x.max())
    return (len(x), total, diag, lo, hi, float(e @ np.exp(-(hi - x) / h)),
            float(e @ np.exp(-(x - lo) / h)))


def _finish_sorted(sums: list, estimator: str, h: float, na_rm: bool) -> float:
    from .._metrics.kernel import skce_from_sums

    sums = [s for s in sums if s is not None]
    if not sums:
        _finish_binned(None, "ece", na_rm)  # raises the empty input's error
    n, within, diag, lo, hi, left, right = (np.array(v, dtype=np.float64)
                                            for v in zip(*sums, strict=True))
    order = np.argsort(lo, kind="stable")  # the partitions of the sort, in x order
    lo, hi, left, right = lo[order], hi[order], left[order], right[order]
    if np.any(hi[:-1] > lo[1:]):  # pragma: no cover - would be a bug of the sort
        raise RuntimeError("calibr: the sorted partitions overlap.")
    bridge = np.triu(np.exp(-(lo[None, :] - hi[:, None]) / h), 1)  # a < b only
    pair = float(np.sum(within)) + float(left @ bridge @ right)
    return skce_from_sums(estimator, int(np.sum(n)), pair, float(np.sum(diag)))


def exact_scalar(p, y, estimator: str, h: float, classes, na_rm, root: bool = False):
    """The binary (or confidence-form) SKCE, "uq" or "biased" with a fixed
    bandwidth, exactly on the cluster: validated per partition, sorted by x with
    Dask's global sort, one O(n log n) pass per partition, partitions combined
    by the factorisation above. ``root``: the MMCE (its square root)."""
    pp, yy, _ = _all_partitions(p, y, None)
    meta = pd.DataFrame({"x": np.empty(0), "c": np.empty(0, np.uint8)})
    parts = [delayed(_scalar_part)(i, a, b, classes, na_rm)
             for i, (a, b) in enumerate(zip(pp, yy, strict=True))]
    rows = dd.from_delayed(parts, meta=meta, verify_meta=False)
    ordered = rows.sort_values("x") if rows.npartitions > 1 else rows
    sums = [delayed(_sorted_part_sums)(part, float(h)) for part in ordered.to_delayed()]
    value = delayed(_finish_sorted)(sums, estimator, float(h), na_rm)
    return delayed(math.sqrt)(value) if root else value


def skce(p, y, estimator, bandwidth, type, classes, na_rm, weights):
    """``skce()`` of Dask input. Exact on the cluster for a binary ``p`` (or
    ``type="confidence"``) with ``"uq"`` or ``"biased"``, a fixed bandwidth and no
    weights (:func:`exact_scalar`); otherwise the rows are gathered to one worker
    (partition order) and the pandas path runs there. A Delayed float."""
    from .._metrics.kernel import skce as pandas_skce

    if (weights is None and estimator in ("uq", "biased") and bandwidth != "median"
            and (isinstance(p, dd.Series) or type == "confidence")):
        return exact_scalar(p, y, estimator, bandwidth, classes, na_rm)
    pp, yy, ww = _all_partitions(p, y, weights)
    return delayed(_gathered_metric)(pandas_skce, _concat_d(pp), _concat_d(yy), _concat_d(ww),
                                     dict(estimator=estimator, bandwidth=bandwidth, type=type,
                                          classes=classes, na_rm=na_rm))


def mmce(p, y, bandwidth, classes, na_rm, weights):
    """``mmce()`` of Dask input: exact on the cluster with a fixed bandwidth and
    no weights (:func:`exact_scalar`), else gathered, as :func:`skce`. A Delayed
    float."""
    from .._metrics.kernel import mmce as pandas_mmce

    if weights is None and bandwidth != "median":
        return exact_scalar(p, y, "biased", bandwidth, classes, na_rm, root=True)
    pp, yy, ww = _all_partitions(p, y, weights)
    return delayed(_gathered_metric)(pandas_mmce, _concat_d(pp), _concat_d(yy), _concat_d(ww),
                                     dict(bandwidth=bandwidth, classes=classes, na_rm=na_rm))


# ecce: a global sort by the packed keys of (p, y), then a prefix scan
#
# calibr.ecce sorts the rows by one uint64 key per row (the bits of p shifted left
# by one, y in the last bit: calibr._kernels.cumulative.fill_keys) and reads the
# running sum of w (y - p) at the end of each block of tied p. Here each partition
# makes its keys, Dask sorts the rows by them (the order of the pandas path; a block
# of tied p may span partitions), each partition of the sort gives its sums and its
# extremes at the block ends before its last (partial_extremes), and the finish adds
# each partition's running sum to the total of those before it (the prefix scan)
# and reads a partition's last block end only where the next partition starts with
# another p.


def _prepared_part(i, p, y, w, classes, na_rm) -> Any:
    """One partition's validated input (``calibr._input.Prepared``; None: no row, or
    none kept by ``na_rm``). Kept weights that total 0 are not an error here: they
    are weights 0, which add nothing; the total is checked on the merged sums."""
    from .._input import Prepared, prepare

    if len(p) == 0 or (na_rm and not _has_complete(p, y)):
        return None
    try:
        try:
            return prepare(p, y, classes=classes, na_rm=na_rm, weights=w)
        except InputError as err:
            if w is None or err.code != "zero_total":
                raise
        ones = pd.Series(1.0, index=w.index) if isinstance(w, pd.Series) else np.ones(len(w))
        prep = prepare(p, y, classes=classes, na_rm=na_rm, weights=ones)
        return Prepared(prep.p, prep.y, prep.binary, prep.classes, np.zeros(prep.n))
    except (ValueError, TypeError) as err:
        raise _in_partition(err, i) from None


def _loss_part(i, p, y, w, classes, na_rm, score: str, eps: float) -> tuple | None:
    """One partition's ``(W, L, z)`` of ``calibr._metrics.scores.loss_sums``."""
    from .._metrics.scores import loss_sums

    prep = _prepared_part(i, p, y, w, classes, na_rm)
    return None if prep is None else loss_sums(prep, score, eps)


def _finish_loss(sums: tuple | None, score: str, na_rm: bool) -> float:
    return _finish_binned(sums, score, na_rm)  # (W, L, z): the weight first, as a count


def loss(score: str, p, y, classes, na_rm, weights, eps: float | None = None):
    """``brier()`` or ``log_loss()`` of Dask input: each partition's ``(W, L, z)``
    (``calibr._metrics.scores.loss_sums``), added in the fixed tree, and the score
    of the sums (``loss_value``). A Delayed float."""
    pp, yy, ww = _all_partitions(p, y, weights)
    parts = [delayed(_loss_part)(i, a, b, None if ww is None else ww[i], classes, na_rm,
                                 score, 0.0 if eps is None else float(eps))
             for i, (a, b) in enumerate(zip(pp, yy, strict=True))]
    return delayed(_finish_loss)(_tree(parts, _add_stats), score, na_rm)


def brier(p, y, classes, na_rm, weights):
    return loss("brier", p, y, classes, na_rm, weights)


def log_loss(p, y, eps, classes, na_rm, weights):
    return loss("log_loss", p, y, classes, na_rm, weights, eps)


def _key_part(i, p, y, w, classes, na_rm) -> pd.DataFrame:
    """One partition's validated rows as sort keys ``k`` (and weights ``w``); kept
    weights that total 0 are not an error here (they add nothing; the total is
    checked at the finish)."""
    from .._kernels._jit import read_only
    from .._kernels.cumulative import fill_keys

    weighted = w is not None
    empty = {"k": np.empty(0, np.uint64)}
    if weighted:
        empty["w"] = np.empty(0)
    prep = _prepared_part(i, p, y, w, classes, na_rm)
    if prep is None:
        return pd.DataFrame(empty)
    ws = prep.weights
    x, c = prep.scalar_view()
    x = np.ascontiguousarray(x, dtype=np.float64)
    keys = np.empty(x.shape[0], dtype=np.uint64)
    fill_keys(read_only(x), read_only(x.view(np.uint64)), read_only(np.ascontiguousarray(c)),
              keys)
    out = {"k": keys}
    if weighted:
        out["w"] = np.asarray(ws, dtype=np.float64)
    return pd.DataFrame(out)


def _ecce_part_sums(part: pd.DataFrame) -> tuple | None:
    """``(first key, last key, run, high, low, variance, total)`` of one partition of
    the sorted rows (None: empty)."""
    from .._kernels._jit import read_only
    from .._kernels.cumulative import partial_extremes

    if len(part) == 0:
        return None
    keys = part["k"].to_numpy(dtype=np.uint64)
    ws = part["w"].to_numpy(dtype=np.float64) if "w" in part.columns else np.empty(0)
    if np.any(keys[1:] < keys[:-1]):  # one partition: not shuffled, so not sorted
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        ws = ws[order] if ws.shape[0] else ws
    keys, ws = np.ascontiguousarray(keys), np.ascontiguousarray(ws)
    return (int(keys[0]), int(keys[-1]),
            *partial_extremes(read_only(keys), read_only(ws)))


def _finish_ecce(sums: list, kind: str, scale: str, na_rm: bool) -> float:
    from .._metrics.cumulative import EcceStats

    sums = sorted((s for s in sums if s is not None), key=lambda s: (s[0], s[1]))
    if not sums:
        _finish_binned(None, "ece", na_rm)  # raises the empty input's error
    if any(a[1] > b[0] for a, b in zip(sums[:-1], sums[1:], strict=True)):
        raise RuntimeError("calibr: the sorted partitions overlap.")  # pragma: no cover
    offset = high = low = variance = total = 0.0
    for j, (_, last, run, inner_high, inner_low, var, tot) in enumerate(sums):
        if inner_high > -math.inf:  # block ends inside the partition
            high = max(high, offset + inner_high)
            low = min(low, offset + inner_low)
        offset += run
        # the last block ends here unless the next partition starts with the same p
        if j == len(sums) - 1 or (sums[j + 1][0] >> 1) != (last >> 1):
            high = max(high, offset)
            low = min(low, offset)
        variance += var
        total += tot
    if total == 0.0:  # weighted: every kept weight 0
        raise InputError("`weights` must have a positive total; all the weights of the "
                         "rows kept are 0.", param="weights", code="zero_total")
    stats = EcceStats(ks=max(high, -low) / total, kuiper=(high - low) / total,
                      sigma=math.sqrt(variance) / total)
    return stats.value(kind, scale)


def ecce(p, y, kind, scale, type, classes, na_rm, weights):
    """``ecce()`` of Dask input, on the cluster: each partition validated and made
    into sort keys, Dask's global sort by the keys, one pass per partition, and a
    prefix scan of the partitions' running sums (weights too). A Delayed float."""
    pp, yy, ww = _all_partitions(p, y, weights)
    meta = pd.DataFrame({"k": np.empty(0, np.uint64)} | (
        {} if ww is None else {"w": np.empty(0)}))
    parts = [delayed(_key_part)(i, a, b, None if ww is None else ww[i], classes, na_rm)
             for i, (a, b) in enumerate(zip(pp, yy, strict=True))]
    rows = dd.from_delayed(parts, meta=meta, verify_meta=False)
    ordered = rows.sort_values("k") if rows.npartitions > 1 else rows
    sums = [delayed(_ecce_part_sums)(part) for part in ordered.to_delayed()]
    return delayed(_finish_ecce)(sums, kind, scale, na_rm)


# --------------------------------------------------------------------------
# the verbs: a Dask DataFrame or GroupBy


def _frame_of(data: Any) -> tuple[dd.DataFrame, list | None, dict]:
    """The Dask DataFrame, the key columns (None: ungrouped) and pandas' grouping
    options of ``data`` (Dask's defaults None read as pandas' defaults)."""
    if isinstance(data, dd.DataFrame):
        return data, None, {}
    frame = getattr(data, "obj", None)
    by = getattr(data, "by", None)
    if not isinstance(frame, dd.DataFrame) or by is None:
        raise InputTypeError(
            "`data` must be a DataFrame or DataFrameGroupBy, of pandas or of Dask "
            f"(ddf.groupby(...)); got {type(data).__module__}.{type(data).__name__}.",
            param="data"
        )
    keys = list(by) if isinstance(by, (list, tuple)) else [by]
    if not all(isinstance(k, Hashable) and not isinstance(k, tuple) and k in frame.columns
               for k in keys):
        raise InputTypeError(
            "`data` must be grouped by column names for calibr's Dask path "
            "(ddf.groupby('model') or ddf.groupby(['model', 'fold'])); got a grouping by "
            f"{fmt(by)}.",
            param="data"
        )
    opts = {
        "sort": True if data.sort is None else bool(data.sort),
        "dropna": True if data.dropna is None else bool(data.dropna),
        "observed": True if data.observed is None else bool(data.observed),
    }
    return frame, keys, opts


def _normal_key(values: tuple) -> tuple:
    """A dict key for a group's key values in which missing values are equal."""
    return tuple("\0calibr-missing" if (v is None or (not isinstance(v, str) and pd.isna(v)))
                 else v for v in values)


def _part_groups(part: pd.DataFrame, keys: list | None, dropna: bool):
    from .._input.groups import groups_of

    if keys is None:
        return groups_of(part)
    return groups_of(part.groupby(keys, sort=False, dropna=dropna, observed=True))


def _group_stats(i: int, part: pd.DataFrame, keys: list | None, dropna: bool, cols,
                 specs: list[tuple], na_rm: bool, weights: Hashable | None,
                 groups: Any = None) -> dict | None:
    """One partition's rows by group: for each group (first appearance), its key
    row, its rows, its kept rows and the statistics of each spec: per-bin sums of
    a binned spec ``(bins, type, binning, right)``, ``(W, L, z)`` of a spec of row
    sums ``(_ROWS, score, eps)``; None for an empty partition. ``groups``: the
    partition's groups, if already found."""
    from .._input import Prepared
    from .._input.groups import complete_rows, split
    from .._metrics.scores import loss_sums

    if len(part) == 0:
        return None
    if groups is None:
        groups = _part_groups(part, keys, dropna)
    kept_any = (not na_rm) or bool(complete_rows(part, cols)[groups.ids >= 0].any())
    out = {"keys": groups.keys, "sizes": groups.sizes, "kept": np.zeros_like(groups.sizes),
           "stats": [[None] * len(specs) for _ in range(groups.n_groups)],
           "classes": None, "k": None, "binary": None}
    if not kept_any:
        return out
    try:
        sp = split(groups, cols, na_rm, weights, partial=True)
        out["kept"] = sp.sizes
        out["classes"], out["binary"], out["k"] = sp.classes, sp.binary, sp.k
        extra = None if sp.binary else range(sp.k)
        for g in range(groups.n_groups):
            a, b = sp.start[g], sp.start[g + 1]
            if a == b:
                continue
            w = None if sp.rows_w is None else sp.w[a:b]
            for j, spec in enumerate(specs):
                if isinstance(spec[0], str) and spec[0] == _ROWS:  # (ROWS, score, eps)
                    rows = Prepared(sp.p[a:b], sp.y[a:b], sp.binary, sp.classes, w)
                    out["stats"][g][j] = loss_sums(rows, spec[1], spec[2])
                    continue
                bins, type, binning, right = spec
                out["stats"][g][j] = _stats(sp.p[a:b], sp.y[a:b], bins, type, extra, False,
                                            w, binning, right)
    except (ValueError, TypeError) as err:
        raise _in_partition(err, i) from None
    return out


def _merge_groups(a: dict | None, b: dict | None) -> dict | None:
    """Two partitions' (or merged) group statistics, added group by group; the
    groups in order of first appearance."""
    if a is None or b is None:
        return a if b is None else b
    if a.get("index") is None:
        a = _indexed(a)
    b = _indexed(b)
    index = dict(a["index"])
    order = list(a["order"])
    rows = {k: list(v) for k, v in a["rows"].items()}
    key_frames = [a["key_frame"]] if a["key_frame"] is not None else []
    new = []
    for pos, key in enumerate(b["order"]):
        size, kept, stats = b["rows"][key]
        if key in rows:
            old = rows[key]
            rows[key] = [old[0] + size, old[1] + kept,
                         [_add_stats(s, t) for s, t in zip(old[2], stats, strict=True)]]
        else:
            rows[key] = [size, kept, stats]
            index[key] = len(order)
            order.append(key)
            new.append(pos)
    if b["key_frame"] is not None and new:
        key_frames.append(b["key_frame"].iloc[new])
    key_frame = (pd.concat(key_frames, ignore_index=True) if key_frames else None)
    return {"index": index, "order": order, "rows": rows, "key_frame": key_frame,
            "classes": a["classes"] if a["classes"] is not None else b["classes"],
            "binary": a["binary"] if a["binary"] is not None else b["binary"],
            "k": a["k"] if a["k"] is not None else b["k"]}


def _indexed(part: dict | None) -> dict | None:
    """A partition's result in the merged form (groups by normalised key)."""
    if part is None or part.get("index") is not None:
        return part
    keys = part["keys"]
    n = len(part["sizes"])
    order = [_normal_key(tuple(r)) for r in keys.itertuples(index=False, name=None)] \
        if keys is not None else [()]
    rows = {k: [int(part["sizes"][g]), int(part["kept"][g]), part["stats"][g]]
            for g, k in enumerate(order[:n])}
    return {"index": {k: g for g, k in enumerate(order)}, "order": order, "rows": rows,
            "key_frame": None if keys is None else keys.reset_index(drop=True),
            "classes": part["classes"], "binary": part["binary"], "k": part["k"]}


def _pandas_groups(merged: dict, keys: list | None, opts: dict, key_meta: pd.DataFrame | None):
    """pandas' groups of the observed key values (pandas' order, unobserved
    categories with observed=False) and the group of each merged group."""
    from .._input.groups import groups_of

    if keys is None:
        return None, np.zeros(1, dtype=np.int64), 1
    frame = merged["key_frame"] if merged is not None else None
    if frame is None:
        frame = key_meta.iloc[:0]
    frame = frame.astype(key_meta.dtypes.to_dict())
    groups = groups_of(frame.groupby(keys, **opts))
    return groups, groups.ids, groups.n_groups


def _group_text(groups, g: int) -> str:
    return "" if groups is None else f" [group {groups.describe(g)}]"


def _check_kept(merged: dict, groups, ids: np.ndarray, na_rm: bool) -> None:
    for r, key in enumerate(merged["order"]):
        size, kept, stats = merged["rows"][key]
        if kept == 0:
            raise InputError(f"`p` and {arg('y')} have no complete observations: "
                             f"{arg('na_rm', 'hint', True)} dropped "
                             f"all {size}.{_group_text(groups, int(ids[r]))}", param="p")
        if stats and stats[0] is not None and float(np.sum(stats[0][0])) == 0.0:
            dropped = (f" (of the observations kept by {arg('na_rm', 'hint', True)})"
                       if kept < size else "")
            raise InputError(f"`weights` must have a positive total; all {kept:,} "
                             f"weights{dropped} are 0.{_group_text(groups, int(ids[r]))}",
                             param="weights", code="zero_total")


def _metric_specs(columns) -> tuple[list[tuple], list[tuple[str, int | None]]]:
    """The specs of merged sums (binned: ``(bins, type, binning, right)``; row sums:
    ``(_ROWS, score, eps)``) and each column's (reduction, spec position);
    ``("group", None)`` for a column that is not merged sums (computed group by
    group)."""
    from .._input import resolved_options
    from .._registry import MERGED_SUMS, METRICS, ROW_SUMS
    from ..frame import metric_name

    specs: list[tuple] = []
    plan: list[tuple[str, int | None]] = []
    for _, spec, func in columns:
        name = metric_name(spec, func)
        if name is None or METRICS[name].dask != MERGED_SUMS:  # the registry's Dask path
            plan.append(("group", None))
            continue
        info = METRICS[name]
        name = info.reduction  # of the merged sums
        opts = resolved_options(func, spec.options)
        if info.stats == ROW_SUMS:
            key = (_ROWS, name, 0.0 if opts.get("eps") is None else float(opts["eps"]))
        elif not mergeable(opts["bins"], opts["binning"]):
            plan.append(("group", None))
            continue
        else:
            key = (opts["bins"], opts["type"], opts["binning"], opts["right"])
        same = [j for j, s in enumerate(specs) if _same_spec(s, key)]
        if same:
            plan.append((name, same[0]))
        else:
            plan.append((name, len(specs)))
            specs.append(key)
    return specs, plan


def _same_spec(a: tuple, b: tuple) -> bool:
    return (len(a) == len(b) and a[1:] == b[1:] and type(a[0]) is type(b[0])
            and bool(np.array_equal(a[0], b[0])))


def _summary_frame(merged, keys, opts, key_meta, plan, names, na_rm,
                   per_group: pd.DataFrame | None = None) -> pd.DataFrame:
    """The summary in pandas' order: the binned columns from the merged sums, the
    others from ``per_group`` (indexed by the group keys)."""

    groups, ids, n_groups = _pandas_groups(merged, keys, opts, key_meta)
    values = np.full((n_groups, len(names)), np.nan)
    by_key = {}
    if per_group is not None:
        per_group, errors = per_group
        if errors:  # the error of the group first in pandas' order, as pandas raises it
            pos = {key: ids[r] for r, key in enumerate(merged["order"])}
            raise min(errors, key=lambda e: pos.get(e[0], -1))[1]
        if per_group is not None:
            for idx, row in zip(per_group.index, per_group.to_numpy(dtype=np.float64),
                                strict=True):
                by_key[_normal_key(idx if isinstance(idx, tuple) else (idx,))] = row
    if merged is None:
        if keys is None:
            raise InputError(f"`p` and {arg('y')} must not be empty; got 0 observations.",
                             param="p")
    else:
        from .._input.warning import GroupWarnings

        _check_kept(merged, groups, ids, na_rm)
        said = GroupWarnings()  # the log loss's impossible rows: once, as pandas says it
        for r in sorted(range(len(merged["order"])), key=lambda r: ids[r]):  # pandas' order
            key = merged["order"][r]
            stats = merged["rows"][key][2]
            q = 0
            for j, (name, s) in enumerate(plan):
                if name == "group":
                    values[ids[r], j] = by_key[key][q]
                    q += 1
                    continue
                with said.gathering(names[j], int(ids[r])):
                    values[ids[r], j] = _from_stats(name)(*stats[s])
        said.warn(lambda g: "" if groups is None else groups.describe(g))
    result = pd.DataFrame(values, columns=names)
    if groups is None:
        return result
    return pd.concat([groups.keys.reset_index(drop=True), result], axis=1)


#: At most this many buckets of groups (reduce tasks) for the metrics computed
#: group by group; each partition is cut into that many pieces.
MAX_BUCKETS = 64


def n_buckets(n_partitions: int) -> int:
    """Buckets for ``n_partitions``: about four partitions' rows per bucket (at
    least 8 buckets, at most :data:`MAX_BUCKETS`, never more than partitions).
    Each bucket is one reduce task and costs one piece of every partition, so
    fewer buckets mean fewer tasks (at 32 partitions, 8 buckets instead of 32
    took the grouped skce of 2e7 rows from 4.1 to 3.0 times Dask's groupby-sum)
    and larger reduce tasks."""
    return max(1, min(n_partitions, MAX_BUCKETS, max(8, -(-n_partitions // 4))))


def _stats_and_pieces(i: int, part: pd.DataFrame, keys: list, dropna: bool, cols,
                      specs: list[tuple], na_rm: bool, weights: Hashable | None,
                      columns: list, key_dtypes: dict, n_buckets: int) -> tuple:
    """One partition's group statistics (:func:`_group_stats`, indexed) and its
    rows (only ``columns``) cut into ``n_buckets`` pieces by a hash of the group
    keys (taken in the frame's dtypes, so that a group's rows of every partition
    land in one bucket; rows that pandas leaves out of every group, such as
    missing keys with ``dropna=True``, in none), each piece in the rows' order.
    One grouping of the partition serves both."""
    if len(part) == 0:
        return (None, *([part[columns]] * n_buckets))
    groups = _part_groups(part, keys, dropna)
    stats = _indexed(_group_stats(i, part, keys, dropna, cols, specs, na_rm, weights, groups))
    hashed = groups.keys
    if any(hashed[k].dtype != key_dtypes[k] for k in keys):
        hashed = hashed.astype(key_dtypes)
    of_group = (pd.util.hash_pandas_object(hashed, index=False).to_numpy()
                % np.uint64(n_buckets)).astype(np.uint8)  # MAX_BUCKETS <= 255
    bucket = np.append(of_group, np.uint8(n_buckets))[groups.ids]  # id -1: no bucket
    order = np.argsort(bucket, kind="stable")  # uint8: a radix sort
    cuts = np.concatenate([[0], np.cumsum(np.bincount(bucket, minlength=n_buckets + 1))])
    part = part[columns].take(order)
    return (stats, *(part.iloc[cuts[r]:cuts[r + 1]] for r in range(n_buckets)))


def _bucket_metrics(pieces: list[pd.DataFrame], keys: list, opts: dict, kwargs: dict,
                    names: list[str]) -> tuple[pd.DataFrame | None, list]:
    """The pandas path on one bucket's rows, grouped: its pieces concatenated in
    partition order, so that each group's rows are in the frame's order (the
    numbers are those of the pandas path on the same frame, bit for bit).
    Returns the metrics indexed by the keys, and instead, if a group fails, the
    first failing group's (key, error), for the caller to raise the error of the
    group first in pandas' order."""
    from ..frame import summarise as pandas_summarise

    rows = pd.concat(pieces) if len(pieces) > 1 else pieces[0]
    del pieces
    if len(rows) == 0:
        return None, []
    grouping = dict(opts, observed=True)
    try:
        res = pandas_summarise(rows.groupby(keys, **grouping), **kwargs)
    except (ValueError, TypeError):
        for key, sub in rows.groupby(keys, **grouping):
            try:
                pandas_summarise(sub.groupby(keys, **grouping), **kwargs)
            except (ValueError, TypeError) as err:
                key = key if isinstance(key, tuple) else (key,)
                return None, [(_normal_key(key), err)]
        raise  # pragma: no cover - a failure of the bucket but of no group alone
    return res.set_index(keys)[names].astype(np.float64), []


def _joined_buckets(results: list) -> tuple[pd.DataFrame | None, list]:
    frames = [f for f, _ in results if f is not None]
    errors = [e for _, errs in results for e in errs]
    return (pd.concat(frames) if frames else None), errors


def _per_group(work: list, n_buckets: int, keys: list, opts: dict, kwargs: dict,
               names: list[str]) -> Any:
    """The metrics ``names`` group by group, by a shuffle of our own: the pieces
    of bucket r of every partition (:func:`_stats_and_pieces`), concatenated in
    partition order, go through the pandas path grouped
    (:func:`_bucket_metrics`). No row is numbered or sorted to keep the frame's
    order: the pieces keep it. A Delayed ``(metrics indexed by the keys,
    [(key, error)])``."""
    results = [delayed(_bucket_metrics)([w[1 + r] for w in work], keys, opts, kwargs, names)
               for r in range(n_buckets)]
    return delayed(_joined_buckets)(results)


def _gathered_summary(frame: pd.DataFrame, keys: list | None, opts: dict,
                      kwargs: dict) -> pd.DataFrame:
    from ..frame import summarise as pandas_summarise

    data = frame if keys is None else frame.groupby(keys, **opts)
    return pandas_summarise(data, **kwargs)


def _key_meta(frame: dd.DataFrame, keys: list | None) -> pd.DataFrame | None:
    return None if keys is None else frame._meta[keys]


def _result_meta(key_meta: pd.DataFrame | None, names: list[str],
                 flags: tuple[str, ...] = ()) -> pd.DataFrame:
    """The empty result: the keys, a float64 column per name, a bool one per flag
    (a test's ``<name>_small_n``)."""
    cols = {} if key_meta is None else {k: key_meta[k] for k in key_meta.columns}
    meta = pd.DataFrame(cols).iloc[:0]
    for n in names:
        meta[n] = pd.Series(dtype=bool if n in flags else np.float64)
    return meta.reset_index(drop=True)


def summarise(data: Any, p, y, metrics, *, p_prefix, classes, na_rm, tests, rng, weights,
              confidence_level, ci_method, n_resamples, named_metrics,
              scheme: str = "multinomial", row_key: Any = None) -> dd.DataFrame:
    """``summarise()`` of a Dask DataFrame or GroupBy: a Dask DataFrame of one
    partition (the summary). ``ece``/``mce`` with data-independent bins come from
    merged per-(group, bin) sums; the other metrics of a groupby group by group
    (:func:`_per_group`); with ``tests`` or intervals, or an ungrouped frame with
    another metric, the rows are gathered to one worker and the pandas path
    runs there."""
    from .._input.groups import resolve_columns, weights_column
    from ..frame import check_metric_names, columns_of_tests, metric_columns, named_tests

    frame, keys, opts = _frame_of(data)
    columns = metric_columns(metrics, named_metrics)
    names = [name for name, _, _ in columns]
    cols = resolve_columns(frame._meta, p, y, p_prefix, classes)
    weights = weights_column(frame._meta, weights)
    key_meta = _key_meta(frame, keys)
    if keys is not None and tests is None and confidence_level is None:
        check_metric_names(names, keys)  # the pandas path's refusal, at the call
    specs, plan = _metric_specs(columns)
    by_group = [j for j, (name, _) in enumerate(plan) if name == "group"]
    if tests is not None or confidence_level is not None or (by_group and keys is None):
        kwargs = dict(p=p, y=y, metrics=metrics, p_prefix=p_prefix, classes=classes,
                      na_rm=na_rm, tests=tests, rng=rng, weights=weights,
                      confidence_level=confidence_level, ci_method=ci_method,
                      n_resamples=n_resamples, scheme=scheme, row_key=row_key,
                      **named_metrics)
        out_names = []
        for n in names:
            out_names += [n] if confidence_level is None else [n, f"{n}_low", f"{n}_high"]
        tested = named_tests(tests)
        out_names += columns_of_tests(tested)
        flags = tuple(f"{name}_small_n" for name, _ in tested)
        parts = list(frame.to_delayed())
        result = delayed(_gathered_summary)(delayed(_concat)(parts), keys, opts, kwargs)
        return dd.from_delayed([result], meta=_result_meta(key_meta, out_names, flags),
                               verify_meta=False)
    dropna = opts.get("dropna", True)
    per_group = None
    if by_group:
        gnames = [names[j] for j in by_group]
        kwargs = dict(p=p, y=y, metrics={names[j]: columns[j][1] for j in by_group},
                      p_prefix=p_prefix, classes=classes, na_rm=na_rm, weights=weights)
        pcols = cols.p if isinstance(cols.p, list) else [cols.p]
        used = list(dict.fromkeys([*keys, *pcols, cols.y,
                                   *([] if weights is None else [weights])]))
        key_dtypes = frame._meta[keys].dtypes.to_dict()
        parts = list(frame.to_delayed())
        r = n_buckets(len(parts))
        work = [delayed(_stats_and_pieces, nout=r + 1)(
                    i, part, keys, dropna, cols, specs, na_rm, weights, used, key_dtypes, r)
                for i, part in enumerate(parts)]
        merged = _tree([w[0] for w in work], _merge_groups)
        per_group = _per_group(work, r, keys, opts, kwargs, gnames)
    else:
        parts = [delayed(_indexed)(delayed(_group_stats)(i, part, keys, dropna, cols, specs,
                                                          na_rm, weights))
                 for i, part in enumerate(frame.to_delayed())]
        merged = _tree(parts, _merge_groups)
    result = delayed(_summary_frame)(merged, keys, opts, key_meta, plan, names, na_rm,
                                     per_group)
    return dd.from_delayed([result], meta=_result_meta(key_meta, names), verify_meta=False)


# --------------------------------------------------------------------------
# calibration_table


def _table_frame(merged, keys, opts, key_meta, spec, ci_level, weighted, na_rm, classes,
                 classwise_columns=False):
    from .. import _binning
    from ..table import TABLE_COLUMNS, table_from_stats

    bins, type, binning, right = spec
    groups, ids, n_groups = _pandas_groups(merged, keys, opts, key_meta)
    if merged is None or (keys is not None and not merged["order"]):
        if keys is None:
            raise InputError(f"`p` and {arg('y')} must not be empty; got 0 observations.",
                             param="p")
        # no group (no rows, or every key missing): the pandas path's empty table
        names = list(key_meta.columns) + ["class"] * classwise_columns + list(TABLE_COLUMNS)
        return pd.DataFrame({c: [] for c in names})
    _check_kept(merged, groups, ids, na_rm)
    edges = _binning.BinSpec.from_options(bins, binning, right).edges()
    classwise = not merged["binary"] and type == "classwise"
    top = type == _binning.TOP_LABEL
    labels = merged["classes"]
    if top and merged["binary"]:  # a vector p's two columns (1 - p, p)
        labels = (0, 1) if classes is None else tuple(classes)
    by_group = sorted(range(len(merged["order"])), key=lambda r: ids[r])
    stats = [merged["rows"][merged["order"][r]][2][0] for r in by_group]
    table, owner = table_from_stats(stats, edges, ci_level, classwise, weighted, labels, top)
    if groups is None:
        return table
    group_ids = np.array([ids[r] for r in by_group], dtype=np.int64)
    keys_frame = groups.keys.take(group_ids[owner]).reset_index(drop=True)
    return pd.concat([keys_frame, table], axis=1)


def _gathered_table(frame, keys, opts, kwargs):
    from ..table import calibration_table as pandas_table

    data = frame if keys is None else frame.groupby(keys, **opts)
    return pandas_table(data=data, **kwargs)


def _series_frame(p: Any, y: Any, weights: Any) -> tuple[dd.DataFrame, Any, str, Any]:
    """A Dask DataFrame of ``p``, ``y`` (and ``weights``) Series, with the column
    names that the table reads."""
    pp, yy, ww = _all_partitions(p, y, weights)
    pcols = list(p.columns) if isinstance(p, dd.DataFrame) else "__calibr_p__"
    taken = set(pcols) if isinstance(pcols, list) else {pcols}
    yname, wname = "__calibr_y__", "__calibr_w__"
    while yname in taken or wname in taken:
        yname, wname = yname + "_", wname + "_"

    def join(a, b, c):
        cols = {}
        if isinstance(a, pd.DataFrame):
            cols.update({k: a[k] for k in a.columns})
        else:
            cols[pcols] = pd.Series(a.to_numpy() if hasattr(a, "to_numpy") else a, index=a.index)
        cols[yname] = b
        if c is not None:
            cols[wname] = c
        return pd.DataFrame(cols)

    meta = join(p._meta, y._meta, None if weights is None else weights._meta)
    parts = [delayed(join)(a, b, None if ww is None else ww[i])
             for i, (a, b) in enumerate(zip(pp, yy, strict=True))]
    return (dd.from_delayed(parts, meta=meta, verify_meta=False), pcols, yname,
            None if weights is None else wname)


def calibration_table(p, y, bins, type, *, classes, na_rm, confidence_level, data, p_prefix,
                      weights, consistency, n_resamples, rng, binning, right) -> dd.DataFrame:
    """``calibration_table()`` of Dask input: per-(group, bin) sums merged, the
    table from them; equal-mass bins and consistency bands gather the rows."""
    from .._input.groups import resolve_columns, weights_column
    from ..table import TABLE_COLUMNS, check_group_keys

    if data is None:
        if p_prefix is not None:
            raise InputError(f"`p_prefix` needs {arg('data')}: it selects columns of a data frame.",
                             param="p_prefix")
        frame, p, y, weights = _series_frame(p, y, weights)
        keys, opts = None, {}
    else:
        frame, keys, opts = _frame_of(data)
    cols = resolve_columns(frame._meta, p, y, p_prefix, classes)
    weights = weights_column(frame._meta, weights)
    key_meta = _key_meta(frame, keys)
    top = type == "top-label"  # one row per (predicted class, bin), for a vector p too
    classwise = top or (not cols.binary and type == "classwise")
    meta_cols = ([] if key_meta is None else list(key_meta.columns)) + \
        ["class"] * classwise + list(TABLE_COLUMNS)
    if consistency is not None:
        meta_cols += ["consistency_lower", "consistency_upper"]
    if key_meta is not None:  # the pandas path's refusal, when the call is made
        check_group_keys(key_meta.columns, meta_cols[len(key_meta.columns):])
    meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in meta_cols})
    if key_meta is not None:
        meta = meta.astype(key_meta.dtypes.to_dict())
    meta = meta.astype({"bin": np.int64, "n": np.float64 if weights else np.int64})
    if classwise:  # the class labels, as the pandas table takes them
        if cols.binary:  # top-label: the columns (1 - p, p)
            labels = (0, 1) if classes is None else classes
        else:
            labels = cols.classes if cols.classes is not None else cols.p
        meta = meta.astype({"class": pd.Index(list(labels)).dtype})
    if consistency is not None or not mergeable(bins, binning):
        kwargs = dict(p=p, y=y, bins=bins, type=type, classes=classes, na_rm=na_rm,
                      confidence_level=confidence_level, p_prefix=p_prefix, weights=weights,
                      consistency=consistency, n_resamples=n_resamples, rng=rng,
                      binning=binning, right=right)
        result = delayed(_gathered_table)(delayed(_concat)(list(frame.to_delayed())), keys,
                                          opts, kwargs)
        return dd.from_delayed([result], meta=meta, verify_meta=False)
    spec = (bins, type, binning, right)
    dropna = opts.get("dropna", True)
    parts = [delayed(_indexed)(delayed(_group_stats)(i, part, keys, dropna, cols, [spec], na_rm,
                                                      weights))
             for i, part in enumerate(frame.to_delayed())]
    merged = _tree(parts, _merge_groups)
    result = delayed(_table_frame)(merged, keys, opts, key_meta, spec, confidence_level,
                                   weights is not None, na_rm, classes, classwise)
    return dd.from_delayed([result], meta=meta, verify_meta=False)
