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


def _cells(rel: Any, key: str | None, p: str, y: str, bins: int) -> Any:
    """The cells of clean, unweighted data in R's ``bins`` as one SQL ``GROUP BY``
    (``calibr._engines._lazy._shifted_cells`` reads it): the DOUBLE key ``key + j *
    CELL_SHIFT + CELL_BAD * t`` of ``calibr._engines._cells.cell_exprs`` and
    ``COUNT(*)``, ``SUM(p)``, ``SUM(y)``, nothing else. The column names are those
    of ``calibr._engines._lazy._query_frame`` (``c0``, ``c1``, ...), quoted anyway."""
    import narwhals as nw

    from ._cells import KeySql, cell_exprs, whole_label

    whole = whole_label(nw.from_native(rel).collect_schema()[y])
    e = cell_exprs(KeySql("duckdb"), key, p, y, bins, whole)
    return rel.query("__calibr_source", f"SELECT {e['__k']} AS __k, COUNT(*) AS __count, "
                     f"SUM({e['__sp']}) AS __sp, SUM({e['__sy']}) AS __sy "
                     "FROM __calibr_source GROUP BY 1")


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
