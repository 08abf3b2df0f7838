"""DuckDB relations: the rule of :mod:`calibr._engines` in DuckDB's SQL,
through narwhals (``docs/engines.md``). A verb's result is an Arrow
``Table`` (what DuckDB's ``.arrow()`` gives)."""

from __future__ import annotations

from typing import Any

from ._lazy import Engine, bind
from ._poisson import bind_bootstrap
from ._poisson import summarise as poisson_summarise
from ._pushdown import bind_pushdown, group_values


def _is_source(value: Any) -> bool:
    import duckdb

    return isinstance(value, duckdb.DuckDBPyRelation)


#: DuckDB's integer and boolean types: a label of these is a whole number, so
#: ``y (y - 1)`` is 0 for 0/1 and at least 2 for any other label.
_WHOLE = {"BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
          "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"}


def _cells(rel: Any, key: str | None, p: str, y: str, bins: int) -> Any:
    """The cells of clean, unweighted data in R's ``bins`` as one SQL ``GROUP BY``
    (``calibr._engines._lazy._shifted_cells`` reads it): the DOUBLE key ``key + j *
    CELL_SHIFT + CELL_BAD * t`` and ``COUNT(*)``, ``SUM(p)``, ``SUM(y)``, nothing else.

    ``j = m + [p > m (1/B)]`` with ``m = FLOOR(p B + 1/2)``:
    ``calibr._kernels.binned._bin_right_closed``'s arithmetic without its ``- 1`` and
    its clamp, every literal a DOUBLE (a bare ``0.1`` is a DECIMAL in DuckDB). No
    clamp, no COALESCE, no validity flag (each cost 0.1 to 0.35 s of 1.9 at 1e8
    rows: benchmarks/README.md, "Engines at their floor"): a bad ``p`` shows in
    ``j`` or in the cell's sum, read on the driver. ``t``, the label's term: ``y (y -
    1)`` for an integer label (0, or at least 2), ``y (y - 1) <> 0`` for any other
    (a fraction's product can be as small as 5e-324); and
    ``p > 1`` when ``bins (1/bins)`` rounds below 1
    (``calibr._engines._lazy.top_break_below_one``). Not ``ceil(p B) - 1``: ``p B``
    rounds across a break (docs/engines.md). The column names are those of
    ``calibr._engines._lazy._query_frame`` (``c0``, ``c1``, ...), quoted anyway."""
    from ._lazy import CELL_BAD, CELL_SHIFT, top_break_below_one

    def lit(v: float) -> str:
        return f"CAST({float(v)!r} AS DOUBLE)"

    x = f'CAST("{p}" AS DOUBLE)'
    yv = f'CAST("{y}" AS DOUBLE)'
    m = f"FLOOR({x} * {lit(bins)} + {lit(0.5)})"
    k = f"({m} + CAST({x} > {m} * {lit(1.0 / bins)} AS DOUBLE)) * {lit(CELL_SHIFT)}"
    if key is not None:
        k = f'CAST("{key}" AS DOUBLE) + {k}'
    y_type = str(dict(zip(rel.columns, rel.types, strict=True))[y])
    if y_type in _WHOLE:  # a missing label makes the key missing too
        k += f" + {yv} * ({yv} - {lit(1)}) * {lit(CELL_BAD)}"
    else:
        k += f" + CAST({yv} * ({yv} - {lit(1)}) <> {lit(0)} AS DOUBLE) * {lit(CELL_BAD)}"
    if top_break_below_one(bins):
        k += f" + CAST({x} > {lit(1)} AS DOUBLE) * {lit(CELL_BAD)}"
    return rel.query("__calibr_source", f"SELECT {k} AS __k, COUNT(*) AS __count, "
                     f"SUM({x}) AS __sp, SUM({yv}) AS __sy FROM __calibr_source GROUP BY 1")


ENGINE = Engine(name="duckdb", what="a DuckDB relation", collect="rel.arrow()",
                is_source=_is_source, cells=_cells, cells_layout="shifted")

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
