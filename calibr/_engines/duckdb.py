"""DuckDB relations: the rule of :mod:`calibr._engines` in DuckDB's SQL,
through narwhals (``docs/engines.md``). A verb's result is an Arrow
``Table`` (what DuckDB's ``.arrow()`` gives)."""

from __future__ import annotations

from typing import Any

from ._lazy import Engine, bind
from ._poisson import bind_bootstrap


def _is_source(value: Any) -> bool:
    import duckdb

    return isinstance(value, duckdb.DuckDBPyRelation)


ENGINE = Engine(name="duckdb", what="a DuckDB relation", collect="rel.arrow()",
                is_source=_is_source)

#: The verbs take ``by=`` column names (calibr._input.frames.lazy_grouping).
GROUPS_BY_NAME = True

_FUNCTIONS = bind(ENGINE)
ece = _FUNCTIONS["ece"]
mce = _FUNCTIONS["mce"]
calibration_error = _FUNCTIONS["calibration_error"]
skce = _FUNCTIONS["skce"]
mmce = _FUNCTIONS["mmce"]
summarise = _FUNCTIONS["summarise"]
calibration_table = _FUNCTIONS["calibration_table"]
collect_arguments = _FUNCTIONS["collect_arguments"]
collect_frame = _FUNCTIONS["collect_frame"]
bootstrap = bind_bootstrap(ENGINE)

__all__ = ["ENGINE", "GROUPS_BY_NAME", "bootstrap", "calibration_error", "calibration_table",
           "collect_arguments", "collect_frame", "ece", "mce", "mmce", "skce", "summarise"]
