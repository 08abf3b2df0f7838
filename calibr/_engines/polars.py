"""polars ``LazyFrame`` sources: the rule of :mod:`calibr._engines` in polars'
expressions, through narwhals (``docs/engines.md``). A verb's result is a polars
``DataFrame``."""

from __future__ import annotations

from typing import Any

from ._lazy import Engine, bind
from ._poisson import bind_bootstrap
from ._poisson import summarise as poisson_summarise
from ._pushdown import bind_pushdown, group_values


def _is_source(value: Any) -> bool:
    import polars as pl

    return isinstance(value, pl.LazyFrame)


#: The most (group, bin) cells :func:`_cells` holds as dense arrays (the range of
#: the group key times the bins: 3 float64 arrays of 2**22 cells are 96 MB); a key
#: whose values span more runs polars' own group-by (:func:`_grouped_cells`).
MAX_DENSE_CELLS = 2**22

#: The key of a row whose group key is missing, in :func:`_cells`' batches: in no
#: group (pandas' dropna). Not a value of a group key of at most 32 bits, nor of
#: a key less its smallest value (:func:`_sorted_rows`: at most 2**20); a 64-bit
#: key may hold it, and :func:`_cells` then checks each batch.
_NO_GROUP = -(2**62)


def _dense_key(lf: Any, keys: list) -> bool:
    """Whether :func:`_cells` streams the rows into dense arrays: no key, or one
    integer key that polars casts to ``Int64`` exactly (of at most 64 bits, and not
    ``UInt64``; a 128-bit key may lie beyond ``Int64`` or hold :data:`_NO_GROUP`)."""
    import polars as pl

    if not keys:
        return True
    if len(keys) > 1:
        return False
    return lf.collect_schema()[keys[0]] in (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8,
                                            pl.UInt16, pl.UInt32)


def _cells(lf: Any, keys: list, p: str, y: str, bins: int) -> Any:
    """The cells of clean, unweighted data in R's ``bins`` (what
    ``calibr._engines._lazy._engine_cells`` reads: the group key, ``__k``, the bin
    as a float64, and each cell's ``__count``, ``__sp``, ``__sy``), with the
    driver's memory bounded whatever the number of rows.

    polars' streaming engine reads the rows (the key as int64, ``p`` and ``y`` as
    float64) and hands them over in batches (``collect_batches``); each batch is
    added to dense per-(group, bin) arrays by a compiled kernel
    (``calibr._kernels.binned.cell_rows``, R's bin by the per-call kernels' rule).
    The memory is the batches in flight and the arrays, one slot per cell of the
    key's range: polars' own ``group_by`` over 1e5 cells kept a share of the rows
    that missed its table of hot keys until its end, 0.5 to 3 GB at 1e8 rows,
    varying from run to run (benchmarks/README.md, "Engines at their floor").
    Keys other than one integer column (:func:`_dense_key`), or a key whose range
    times ``bins`` exceeds :data:`MAX_DENSE_CELLS`, or a 64-bit key that holds
    :data:`_NO_GROUP`, run :func:`_grouped_cells` instead. A row that is not
    valid: one cell keyed at ``BAD_OFFSET`` (the caller then counts each kind of
    bad value)."""
    import numpy as np
    import polars as pl

    from .._kernels.binned import cell_rows, key_range
    from ._lazy import BAD_OFFSET

    if not _dense_key(lf, keys):
        return _grouped_cells(lf, keys, p, y, bins)
    key = keys[0] if keys else None
    wide = key is not None and lf.collect_schema()[key] == pl.Int64
    g = pl.lit(0, pl.Int64) if key is None else pl.col(key).cast(pl.Int64)
    if not wide:  # filled by polars' threads (per batch on the driver it cost 20 to
        # 60% more: benchmarks/README.md, "any other group key")
        g = g.fill_null(_NO_GROUP)
    rows = lf.select(g.alias("g"), pl.col(p).cast(pl.Float64).alias("p"),
                     pl.col(y).cast(pl.Float64).alias("y"))
    base, width = 0, 0
    count = conf = hit = np.zeros(0)
    for batch in rows.collect_batches(maintain_order=False):
        gv = batch.get_column("g")
        if wide:  # a 64-bit key may hold the sentinel's value: then polars' group-by
            missing = gv.null_count()
            gv = gv.fill_null(_NO_GROUP)
            if int((gv == _NO_GROUP).sum()) != missing:
                return _grouped_cells(lf, keys, p, y, bins)
        gv = gv.to_numpy()
        pv, yv = (batch.get_column(c).to_numpy() for c in ("p", "y"))
        lo, hi = key_range(gv, _NO_GROUP)  # Python ints: the width cannot overflow
        if lo > hi:
            continue
        if width == 0 or lo < base or hi >= base + width:
            new_base = lo if width == 0 else min(base, lo)
            new_width = (hi if width == 0 else max(base + width - 1, hi)) - new_base + 1
            if new_width * bins > MAX_DENSE_CELLS:
                return _grouped_cells(lf, keys, p, y, bins)
            at = (base - new_base) * bins
            grown = []
            for a in (count, conf, hit):
                b = np.zeros(new_width * bins)
                b[at:at + a.size] = a
                grown.append(b)
            count, conf, hit = grown
            base, width = new_base, new_width
        if not cell_rows(gv, np.ascontiguousarray(pv), np.ascontiguousarray(yv), _NO_GROUP,
                         base, bins, count, conf, hit):
            return pl.LazyFrame({"__k": [BAD_OFFSET], "__count": [1.0], "__sp": [0.0],
                                 "__sy": [0.0]})  # read as bad, with or without a key
    cells = np.flatnonzero(count)
    out = {"__k": (cells % bins).astype(np.float64), "__count": count[cells],
           "__sp": conf[cells], "__sy": hit[cells]}
    if key is not None:  # the key, exact in int64, back in its own type
        g = pl.Series(key, base + cells // bins, dtype=pl.Int64)
        out = {key: g.cast(lf.collect_schema()[key]), **out}
    return pl.LazyFrame(out)


def _grouped_cells(lf: Any, keys: list, p: str, y: str, bins: int) -> Any:
    """:func:`_cells`' frame as polars' own query: one ``group_by`` over the float64
    cell key ``key * bins + bin + BAD_OFFSET * bad`` (one integer key of at most
    32 bits folded in, ``calibr._engines._lazy._one_key``; any other keys grouped
    beside it as they are) and its ``len``, ``sum(p)``, ``sum(y)``, run by the
    streaming engine (its memory grows with the rows that miss its table of hot
    keys: not bounded).

    The bin is ``calibr._kernels.binned._bin_right_closed``'s arithmetic (``m =
    floor(v B + 1/2)``, one comparison with ``m * (1/B)``, the clamp), on ``p``
    clamped to [0, 1]; a missing ``p`` has bin 0 and a NaN one a NaN key, both
    marked bad. Not ``ceil(p B) - 1``: ``p B`` rounds across a break (0.6 with 5
    bins: ``ceil(3.0000000000000004) - 1 = 3``, R's bin 2; docs/engines.md)."""
    import narwhals as nw
    import polars as pl

    from ._lazy import BAD_OFFSET, _one_key

    x = pl.col(p).cast(pl.Float64)
    yv = pl.col(y).cast(pl.Float64)
    m = (x * float(bins) + 0.5).floor()
    b = (m - 1.0 + (x > m * (1.0 / bins)).cast(pl.Float64)).clip(0.0, float(bins - 1))
    valid = ((x >= 0.0) & (x <= 1.0) & (yv * (1.0 - yv) == 0.0)).fill_null(False)
    k = b.fill_null(0.0) + (~valid).cast(pl.Float64) * BAD_OFFSET
    fold = _one_key(nw.from_native(lf), keys, bins)
    if fold:
        k = pl.col(keys[0]).cast(pl.Float64) * float(bins) + k
    return lf.group_by(*([] if fold else keys), k.alias("__k")).agg(
        pl.len().alias("__count"), x.sum().alias("__sp"), yv.sum().alias("__sy"))


#: The most groups (the range of the group key) whose state :func:`_sorted_rows`
#: holds (12 float64 a group: 100 MB at 2**20); a wider key runs the window query.
MAX_RUNNING_GROUPS = 2**20

#: The rows of a batch of :func:`_sorted_rows`' stream (None: polars' choice).
RUNNING_BATCH_ROWS: int | None = None


def _sorted_rows(lf: Any, key: str | None, weighted: bool, low: int, high: int) -> Any:
    """The sorted sums of ``calibr._engines._pushdown`` (``_Query.sorted_sums``) of
    the kept rows ``lf`` (``__x``, ``__y``, ``__w`` and the integer ``key``, whose
    values lie in ``[low, high]``): per group ``n``, ``W``, ``var``, ``high``,
    ``low``, ``num``, ``wpos``, ``wneg`` as a pandas frame; None when the key's
    range exceeds :data:`MAX_RUNNING_GROUPS` or the stream is not sorted.

    polars sorts the rows by ``p`` alone, across all groups (one float64 sort key,
    no (group, ``p``) blocks and no window), and hands them over in batches in the
    sorted order (``collect_batches(maintain_order=True)``); a compiled kernel
    (``calibr._kernels.cumulative.group_running``) carries each group's running
    sum from batch to batch and reads it at the end of each of the group's blocks
    of tied ``p`` (calibr's tie rule), with the AUROC's midrank sums of the same
    blocks. The kernel checks the order as it reads: a row below the one before
    it (a stream polars did not keep in order) gives None, and the caller runs
    the window query. The memory is polars' sort of the kept columns and one row
    of state per value of the key's range (benchmarks/README.md, "Pushed-down
    ecce")."""
    import numpy as np
    import pandas as pd
    import polars as pl

    from .._kernels.cumulative import GROUP_STATE, group_close, group_running

    width = high - low + 1
    if width > MAX_RUNNING_GROUPS:
        return None
    if key is None:
        g = pl.lit(0, pl.Int64)
    elif lf.collect_schema()[key] == pl.UInt64:  # may exceed Int64: shifted in its own type
        g = (pl.col(key) - pl.lit(low, pl.UInt64)).cast(pl.Int64)
    else:  # an integer of at most 64 bits: its shift to [0, width) cannot overflow
        g = pl.col(key).cast(pl.Int64) - pl.lit(low, pl.Int64)
    g = g.fill_null(_NO_GROUP).alias("g")
    rows = lf.select(g, "__x", "__y", *(["__w"] if weighted else [])).sort("__x")
    scale, half = (1.0, 0.5) if weighted else (2.0, 1.0)  # unweighted: twice, in integers
    state = np.zeros((width, len(GROUP_STATE)))
    prev = np.full(1, -np.inf)
    none = np.zeros(0)
    for batch in rows.collect_batches(maintain_order=True, chunk_size=RUNNING_BATCH_ROWS):
        gv, x, c = (batch.get_column(n).to_numpy() for n in ("g", "__x", "__y"))
        ws = batch.get_column("__w").to_numpy() if weighted else none
        if not group_running(gv, np.ascontiguousarray(x), np.ascontiguousarray(c),
                             np.ascontiguousarray(ws), _NO_GROUP, scale, half, prev,
                             state):
            return None
    group_close(state, scale, half)
    at = np.flatnonzero(state[:, 6] > 0)
    col = {name: state[at, j] for j, name in enumerate(GROUP_STATE)}
    out = {} if key is None else {key: [low + int(k) for k in at]}  # any 64-bit key, exact
    out.update(n=col["n"], W=col["W"], var=col["var"], high=col["high"], low=col["low"],
               num=col["num"], wpos=col["wpos"], wneg=col["below"])
    return pd.DataFrame(out)


ENGINE = Engine(name="polars", what="a polars LazyFrame", collect="lf.collect()",
                is_source=_is_source, cells=_cells, sorted_rows=_sorted_rows)

#: The verbs take ``by=`` column names (calibr._input.frames.lazy_grouping).
GROUPS_BY_NAME = True

_FUNCTIONS = {**bind(ENGINE, group_values, poisson_summarise), **bind_pushdown(ENGINE)}
ece = _FUNCTIONS["ece"]
mce = _FUNCTIONS["mce"]
calibration_error = _FUNCTIONS["calibration_error"]
skce = _FUNCTIONS["skce"]
mmce = _FUNCTIONS["mmce"]
summarise = _FUNCTIONS["summarise"]
calibration_table = _FUNCTIONS["calibration_table"]
collect_arguments = _FUNCTIONS["collect_arguments"]
collect_frame = _FUNCTIONS["collect_frame"]
brier = _FUNCTIONS["brier"]
log_loss = _FUNCTIONS["log_loss"]
auroc = _FUNCTIONS["auroc"]
ecce = _FUNCTIONS["ecce"]
calibration_test = _FUNCTIONS["calibration_test"]
bootstrap = bind_bootstrap(ENGINE)

__all__ = ["ENGINE", "GROUPS_BY_NAME", "auroc", "bootstrap", "brier", "calibration_error",
           "calibration_table", "calibration_test", "collect_arguments", "collect_frame", "ece",
           "ecce", "log_loss", "mce", "mmce", "skce", "summarise"]
