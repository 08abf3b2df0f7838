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


def _cells(rel: Any, keys: list, p: str, y: str, bins: int) -> Any:
    """The cells of clean, unweighted data in R's ``bins`` as one SQL ``GROUP BY``
    (``calibr._engines._lazy._engine_cells`` reads it): the DOUBLE key ``key + j *
    CELL_SHIFT + CELL_BAD * t`` of ``calibr._engines._cells.cell_exprs`` and
    ``COUNT(*)``, ``SUM(p)``, ``SUM(y)``, nothing else. One integer key of at most
    32 bits (``calibr._engines._lazy._one_key``) is folded into that key; any
    other keys are grouped as they are, beside it. The column names are those of
    ``calibr._engines._lazy._query_frame`` (``c0``, ``c1``, ...), quoted anyway."""
    import narwhals as nw

    from ._cells import KeySql, cell_exprs, whole_label
    from ._lazy import _one_key

    frame = nw.from_native(rel)
    R = KeySql("duckdb")
    fold = _one_key(frame, keys, bins)
    e = cell_exprs(R, keys[0] if fold else None, p, y, bins,
                   whole_label(frame.collect_schema()[y]))
    apart = "".join(f"{R.col(k)}, " for k in ([] if fold else keys))
    groups = ", ".join(str(i + 1) for i in range(len(keys) + 1 - fold))
    return rel.query("__calibr_source", f"SELECT {apart}{e['__k']} AS __k, "
                     f"COUNT(*) AS __count, SUM({e['__sp']}) AS __sp, "
                     f"SUM({e['__sy']}) AS __sy FROM __calibr_source GROUP BY {groups}")


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
