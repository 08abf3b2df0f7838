"""Lazy collections: which backend computes a public function on them.

A metric or verb given a lazy collection (a Dask Series or DataFrame) returns a
lazy result computed by a backend module (``docs/dask.md``). The metrics ask
:func:`lazy_backend` which, if any, instead of importing a backend themselves:
the backend imports the metrics, not the other way round, and neither it nor
its engine is imported until such a value is passed (``import calibr`` imports
no dask). A new engine (polars' lazy frames, DuckDB, Spark) is one entry of
:data:`BACKENDS`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["BACKENDS", "lazy_backend"]

#: The start of the module name of a value's type, and the backend module that
#: computes on such values (imported on first use). ``"dask"`` also covers
#: ``dask_expr``, the module of Dask's collections from Dask 2024. polars' lazy
#: frames, DuckDB relations and Spark DataFrames go to ``calibr/_engines/``
#: (``docs/engines.md``); eager polars and Arrow objects are read by
#: ``calibr/_input/frames.py`` instead.
BACKENDS = {
    "dask": "calibr._engines.dask",
    "polars.lazyframe": "calibr._engines.polars",
    "duckdb": "calibr._engines.duckdb",
    "_duckdb": "calibr._engines.duckdb",
    "pyspark.sql": "calibr._engines.spark",
}


def lazy_backend(*values: Any) -> ModuleType | None:
    """The backend module of the first of ``values`` that is a lazy collection,
    or None when none is (the eager path: numpy, pandas, lists, None).

    Examples
    --------
    >>> from calibr._input import lazy_backend
    >>> lazy_backend([0.2, 0.8], None) is None
    True
    """
    if not values:
        return None
    for value in values:
        module = value.__class__.__module__
        for prefix, backend in BACKENDS.items():
            if module.startswith(prefix):
                return importlib.import_module(backend)
    return None
