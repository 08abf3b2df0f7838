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


def _cells(lf: Any, key: str | None, p: str, y: str, bins: int) -> Any:
    """The cells of clean, unweighted data in R's ``bins`` as polars' own query
    (``calibr._engines._lazy._engine_cells`` reads it): one ``group_by`` over the
    float64 key ``key * bins + bin + BAD_OFFSET * bad`` and its ``len``, ``sum(p)``,
    ``sum(y)``, run by the streaming engine (its state: one row per cell).

    The bin is ``calibr._kernels.binned._bin_right_closed``'s arithmetic (``m =
    floor(v B + 1/2)``, one comparison with ``m * (1/B)``, the clamp), on ``p``
    clamped to [0, 1]; a missing ``p`` has bin 0 and a NaN one a NaN key, both
    marked bad. Not ``ceil(p B) - 1``: ``p B`` rounds across a break (0.6 with 5
    bins: ``ceil(3.0000000000000004) - 1 = 3``, R's bin 2; docs/engines.md)."""
    import polars as pl

    from ._lazy import BAD_OFFSET

    x = pl.col(p).cast(pl.Float64)
    yv = pl.col(y).cast(pl.Float64)
    m = (x * float(bins) + 0.5).floor()
    b = (m - 1.0 + (x > m * (1.0 / bins)).cast(pl.Float64)).clip(0.0, float(bins - 1))
    valid = ((x >= 0.0) & (x <= 1.0) & (yv * (1.0 - yv) == 0.0)).fill_null(False)
    k = b.fill_null(0.0) + (~valid).cast(pl.Float64) * BAD_OFFSET
    if key is not None:
        k = pl.col(key).cast(pl.Float64) * float(bins) + k
    return lf.group_by(k.alias("__k")).agg(pl.len().alias("__count"), x.sum().alias("__sp"),
                                           yv.sum().alias("__sy"))


ENGINE = Engine(name="polars", what="a polars LazyFrame", collect="lf.collect()",
                is_source=_is_source, cells=_cells)

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
