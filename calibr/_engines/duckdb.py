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
    (``calibr._engines._lazy._engine_cells`` reads it): the DOUBLE key ``key * bins +
    bin + BAD_OFFSET * bad`` and ``COUNT(*)``, ``SUM(p)``, ``SUM(y)``, nothing else.

    The bin is ``calibr._kernels.binned._bin_right_closed``'s arithmetic (``m =
    floor(v B + 1/2)``, one comparison with ``m * (1/B)``, ``GREATEST``/``LEAST``
    as the clamp), every literal a DOUBLE (a bare ``0.1`` is a DECIMAL in DuckDB).
    ``p`` is not clamped first (the one engine-side cost measured to matter:
    benchmarks/README.md, "Engines"): a bad ``p`` (infinite, huge, NaN, which
    ``LEAST`` orders above every number) gets some bin in [0, B - 1] and is marked
    bad; a missing one gets bin 0 (``COALESCE``), marked bad. Not ``ceil(p B) - 1``:
    ``p B`` rounds across a break (docs/engines.md). The column names are those of
    ``calibr._engines._lazy._query_frame`` (``c0``, ``c1``, ...), quoted anyway."""
    from ._lazy import BAD_OFFSET

    def lit(v: float) -> str:
        return f"CAST({float(v)!r} AS DOUBLE)"

    x = f'CAST("{p}" AS DOUBLE)'
    yv = f'CAST("{y}" AS DOUBLE)'
    m = f"FLOOR({x} * {lit(bins)} + {lit(0.5)})"
    b = (f"COALESCE(LEAST(GREATEST({m} - {lit(1)} + CAST({x} > {m} * {lit(1.0 / bins)} AS "
         f"DOUBLE), {lit(0)}), {lit(bins - 1)}), {lit(0)})")
    # y (1 - y) = 0 exactly when y is 0 or 1 (no product of a double other than
    # those underflows to 0): one comparison instead of two and an OR
    valid = f"COALESCE({x} >= 0 AND {x} <= 1 AND {yv} * (1 - {yv}) = 0, FALSE)"
    k = f"{b} + CAST(NOT {valid} AS DOUBLE) * {lit(BAD_OFFSET)}"
    if key is not None:
        k = f'CAST("{key}" AS DOUBLE) * {lit(bins)} + {k}'
    return rel.query("__calibr_source", f"SELECT {k} AS __k, COUNT(*) AS __count, "
                     f"SUM({x}) AS __sp, SUM({yv}) AS __sy FROM __calibr_source GROUP BY 1")


ENGINE = Engine(name="duckdb", what="a DuckDB relation", collect="rel.arrow()",
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
