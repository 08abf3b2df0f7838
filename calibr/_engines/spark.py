"""PySpark DataFrames: the rule of :mod:`calibr._engines` in Spark SQL expressions,
through narwhals (``docs/engines.md``). A verb's result is an Arrow
``Table`` (``.to_pandas()`` gives pandas)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from ._lazy import Engine, bind
from ._poisson import bind_bootstrap
from ._poisson import summarise as poisson_summarise
from ._pushdown import bind_pushdown, group_values

#: pyspark 4.3 warns "PySpark does not yet fully support pandas >= 3.0.0" (a FutureWarning)
#: when its module pyspark.testing.utils is first imported: by a session's start, and else
#: by calibr's first query (converting a literal). calibr's Spark path never converts
#: through pandas (narwhals collects with toArrow), and tests/test_engines_spark.py checks
#: each result against the pandas path, so the warning says nothing about calibr's
#: numbers; calibr's calls ignore exactly this warning (docs/engines.md).
_PANDAS_3_WARNING = r"PySpark does not yet fully support pandas >= 3\.0\.0"


def _is_source(value: Any) -> bool:
    from pyspark.sql import DataFrame

    return isinstance(value, DataFrame)


def _project(sdf: Any, columns: list, names: list) -> Any:
    """The ``columns`` renamed ``names``, by position: Spark parses a column
    reference (a dot is a field, a backtick a quote), ``toDF`` does not; ``_0``,
    ``_1``, ... are names it reads as they are. A name held twice is the first
    column of that name (the verbs refuse it first, with the pandas message)."""
    held = list(sdf.columns)
    plain = [f"_{j}" for j in range(len(held))]
    return sdf.toDF(*plain).select(*[plain[held.index(c)] for c in columns]).toDF(*names)


def _cells(sdf: Any, keys: list, p: str, y: str, bins: int) -> Any:
    """The cells of clean, unweighted data in R's ``bins`` as one Spark ``groupBy``
    (``calibr._engines._lazy._engine_cells`` reads it): the double key ``key + j *
    CELL_SHIFT + CELL_BAD * t`` of ``calibr._engines._cells.cell_exprs`` (in Spark's
    dialect: ``p`` first bounded to [-1, 2], since Spark's ``floor`` is a 64-bit
    integer) and ``count(1)``, ``sum(p)``, ``sum(y)``, nothing else. One integer
    key of at most 32 bits (``calibr._engines._lazy._one_key``) is folded into
    that key; any other keys are grouped as they are, beside it. The column names
    are those of ``calibr._engines._lazy._query_frame`` (``c0``, ``c1``, ...)."""
    import narwhals as nw
    from pyspark.sql import functions as F

    from ._cells import KeySql, cell_exprs, whole_label
    from ._lazy import _one_key

    frame = nw.from_native(sdf)
    fold = _one_key(frame, keys, bins)
    e = cell_exprs(KeySql("spark"), keys[0] if fold else None, p, y, bins,
                   whole_label(frame.collect_schema()[y]))
    apart = [] if fold else [F.col(k) for k in keys]
    return sdf.groupBy(*apart, F.expr(e["__k"]).alias("__k")).agg(
        F.count(F.lit(1)).alias("__count"), F.sum(F.expr(e["__sp"])).alias("__sp"),
        F.sum(F.expr(e["__sy"])).alias("__sy"))


ENGINE = Engine(name="spark", what="a Spark DataFrame", collect="sdf.toPandas()",
                is_source=_is_source, project=_project, cells=_cells,
                cells_layout="shifted")

#: The verbs take ``by=`` column names (calibr._input.frames.lazy_grouping).
GROUPS_BY_NAME = True



def _without_pandas_3_warning(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with pyspark's warning about pandas 3 ignored while it runs."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_PANDAS_3_WARNING, category=FutureWarning)
            return func(*args, **kwargs)

    return run


_FUNCTIONS = {name: _without_pandas_3_warning(f)
              for name, f in {**bind(ENGINE, group_values, poisson_summarise),
                              **bind_pushdown(ENGINE)}.items()}
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
bootstrap = _without_pandas_3_warning(bind_bootstrap(ENGINE))

__all__ = ["ENGINE", "GROUPS_BY_NAME", "auroc", "bootstrap", "brier", "calibration_error",
           "calibration_table", "calibration_test", "collect_arguments", "collect_frame", "ece",
           "ecce", "log_loss", "mce", "mmce", "skce", "summarise"]
