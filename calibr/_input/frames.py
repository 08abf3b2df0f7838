"""polars and pyarrow at the input edge: eager columns and frames read as the
pandas path reads their values (``docs/engines.md``).

Two jobs:

* :func:`eager` turns a polars ``Series``/``DataFrame`` or a pyarrow
  ``Array``/``ChunkedArray``/``Table``/``RecordBatch`` given as ``p``, ``y`` or
  ``weights`` into what the rest of the input layer reads: a numpy array for a
  numeric or boolean column without nulls (polars and Arrow hand over their
  buffer, no copy for float64), a pandas object otherwise (nulls become
  pandas' missing values, strings strings, categoricals and dictionaries
  Categoricals, a frame a DataFrame with the same column names). The values
  reach the kernels as the same doubles as from pandas, so every number is bit
  for bit that of the pandas path, and every message that of the pandas path on
  the same values.
* :func:`eager_frame` does the same for the verbs' ``data`` (polars or Arrow
  frames) and :func:`to_callers_frame` turns the verb's pandas result back into
  the caller's frame type.

The conversion goes through narwhals (``narwhals.from_native``), imported only
when such a value is passed: a value is recognised by the module of its type
(``polars``, ``pyarrow``), so numpy and pandas input costs one string test.
Lazy sources (polars ``LazyFrame``, DuckDB relations, Spark DataFrames) are not
read here: :func:`calibr._input.lazy_backend` hands them to their engine
(``calibr/_engines/``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable
from typing import Any

import pandas as pd

from .errors import InputError, InputTypeError, arg
from .messages import fmt

__all__ = ["eager", "eager_frame", "foreign_kind", "frame_verb", "grouped", "lazy_grouping",
           "to_callers_frame"]

#: The module prefixes of the eager objects read here, and their library's name.
_EAGER = (("polars.series", "polars"), ("polars.dataframe", "polars"), ("pyarrow", "pyarrow"))


def foreign_kind(value: Any) -> str | None:
    """``"polars"`` or ``"pyarrow"`` for an eager object of those libraries, else None."""
    module = type(value).__module__
    for prefix, lib in _EAGER:
        if module.startswith(prefix):
            return lib
    return None


#: The module prefixes of the lazy sources of calibr/_engines/, and how a message names them.
_LAZY = (("polars.lazyframe", "a polars LazyFrame"), ("duckdb", "a DuckDB relation"),
         ("_duckdb", "a DuckDB relation"), ("pyspark.sql", "a Spark DataFrame"))


def _lazy_what(value: Any) -> str | None:
    module = type(value).__module__
    for prefix, what in _LAZY:
        if module.startswith(prefix):
            return what
    return None


def eager(value: Any, name: str) -> Any:
    """``value`` as numpy or pandas if it is an eager polars or pyarrow object
    (see the module docstring), else ``value`` itself, untouched."""
    if foreign_kind(value) is None:
        lazy = _lazy_what(value)
        if lazy is not None:
            raise InputTypeError(
                f"`{name}` is {lazy}: this function reads it as values, not as a lazy "
                "source; collect the columns it needs first (e.g. lf.collect(), "
                f"rel.arrow(), sdf.toPandas()). The functions of {arg('p')} and {arg('y')} "
                f"take a lazy source as {arg('p')} with {arg('y')} naming its label column, "
                f"and the verbs as {arg('data')} (docs/engines.md).", param=name)
        return value
    import narwhals as nw

    native = value
    if type(value).__module__.startswith("pyarrow"):
        import pyarrow as pa

        if isinstance(value, pa.RecordBatch):
            native = pa.Table.from_batches([value])
        elif isinstance(value, pa.Array):
            native = pa.chunked_array([value])
        elif not isinstance(value, (pa.ChunkedArray, pa.Table)):
            raise InputTypeError(
                f"`{name}` must be a column or a frame; got a pyarrow "
                f"{type(value).__name__}.", param=name)
    if hasattr(native, "column_names") and len(set(native.column_names)) < native.num_columns:
        # an Arrow Table with two columns of one name (narwhals refuses it): pandas
        # holds it as it is, and the pandas path decides (its message if a used
        # column's name is one of them)
        return native.to_pandas()
    try:
        obj = nw.from_native(native, eager_only=True, allow_series=True)
    except TypeError:
        if type(value).__module__.startswith("polars.dataframe.group_by"):
            raise InputTypeError(
                f"`{name}` is a polars GroupBy; pass the DataFrame itself and name its "
                f"groups with {arg('by')} (e.g. by=\"g\"): calibr groups polars data "
                "itself.", param=name) from None
        raise InputTypeError(
            f"`{name}` must be a column or a frame; got a {type(value).__module__}."
            f"{type(value).__name__}.", param=name) from None
    if isinstance(obj, nw.Series):
        dtype = obj.dtype
        if (dtype.is_numeric() or dtype == nw.Boolean) and obj.null_count() == 0:
            return obj.to_numpy()
        return obj.to_pandas()
    return obj.to_pandas()


def eager_frame(data: Any) -> tuple[Any, str | None]:
    """``(pandas DataFrame, library)`` of an eager polars or Arrow frame given as a
    verb's ``data``; ``(data, None)`` for anything else (untouched)."""
    lib = foreign_kind(data)
    if lib is None:
        return data, None
    frame = eager(data, "data")
    if not isinstance(frame, pd.DataFrame):
        raise InputTypeError(
            f"`data` must be a DataFrame or DataFrameGroupBy; got a {lib} "
            f"{type(data).__name__}.", param="data")
    return frame, lib


def to_callers_frame(result: Any, lib: str | None) -> Any:
    """The verb's pandas ``result`` as a frame of ``lib`` (``"polars"``: a polars
    DataFrame, ``"pyarrow"``: an Arrow Table), or unchanged (``None``, or a result
    that is not a DataFrame: a page, a result object)."""
    if lib is None or not isinstance(result, pd.DataFrame):
        return result
    if lib == "polars":
        import polars as pl

        return pl.from_pandas(result)
    import pyarrow as pa

    return pa.Table.from_pandas(result, preserve_index=False)



def _by_list(by: Any) -> list:
    if isinstance(by, (list, tuple)):
        keys = list(by)
    elif isinstance(by, Hashable) and not isinstance(by, (bool, float)) and by is not None:
        keys = [by]
    else:
        keys = None
    if not keys or not all(isinstance(k, Hashable) and not isinstance(k, (list, tuple))
                           for k in keys):
        raise InputError(
            f"`by` must be a column name or a non-empty list of column names; got {fmt(by)}.",
            param="by")
    dup = [k for k in keys if keys.count(k) > 1]
    if dup:
        raise InputError(f"`by` must name each column once; {dup[0]!r} appears "
                         f"{keys.count(dup[0])} times.", param="by")
    return keys


def grouped(frame: Any, by: Any) -> Any:
    """``frame.groupby(by)`` (pandas' defaults: keys sorted, rows with a missing key
    in no group) for a pandas DataFrame, with ``by`` checked: a column name or a
    list of them, each a column of ``frame``."""
    if not isinstance(frame, pd.DataFrame):
        raise InputError(
            "`by` needs `data` to be a DataFrame (pandas, polars or Arrow), not a groupby "
            f"or other object; got a {type(frame).__name__}. Group by one or the other.",
            param="by")
    keys = _by_list(by)
    columns = list(frame.columns)
    missing = [k for k in keys if k not in columns]
    if missing:
        raise InputError(
            f"`by` names {fmt(missing[0])}, which is not a column of `data`; its columns "
            f"are {', '.join(map(repr, columns[:10]))}{', ...' if len(columns) > 10 else ''}.",
            param="by")
    return frame.groupby(keys)


def frame_verb(func: Callable[..., Any] | None = None, *,
               collect: bool = False) -> Any:
    """Decorator of a verb with a parameter ``data`` (and ``by``, if it has one):
    polars and Arrow frames are read as pandas frames (:func:`eager_frame`),
    ``by=`` groups them (:func:`grouped`), and a pandas DataFrame result is
    returned in the caller's frame type (:func:`to_callers_frame`; other results
    as they are). Plain pandas calls pass through unchanged, and so do lazy
    sources (the verb dispatches them to their engine), unless ``collect``: then
    a lazy source of the engines of ``calibr/_engines/`` is collected under their
    rule (``docs/engines.md``) and read as an eager frame, for a verb that the
    engines do not compute."""
    if func is None:
        return functools.partial(frame_verb, collect=collect)
    sig = inspect.signature(func)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .backends import lazy_backend

        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return func(*args, **kwargs)  # Python's own message for a bad call
        data = bound.arguments.get("data")
        by = bound.arguments.get("by")
        backend = lazy_backend(data)
        if collect and backend is not None and hasattr(backend, "collect_frame"):
            data = backend.collect_frame(data, f"calibr.{func.__name__}")
            bound.arguments["data"] = data
            backend = None
        lib = foreign_kind(data)
        if (lib is None and by is None) or backend is not None:
            return func(*bound.args, **bound.kwargs)
        frame, lib = eager_frame(data)
        bound.arguments["data"] = frame if by is None else grouped(frame, by)
        bound.arguments["by"] = None
        return to_callers_frame(func(*bound.args, **bound.kwargs), lib)

    return wrapper


def lazy_grouping(backend: Any, data: Any, by: Any) -> tuple[Any, dict]:
    """A lazy verb's ``data`` and the keywords of its grouping: ``by`` checked and
    passed on to the engines of ``calibr/_engines/`` (which group by column
    names, ``GROUPS_BY_NAME``), or turned into Dask's own ``data.groupby(by)``."""
    if by is None:
        return data, {}
    if data is None:
        raise InputError("`by` needs `data`: it names columns of a data frame.", param="by")
    keys = _by_list(by)
    if getattr(backend, "GROUPS_BY_NAME", False):
        return data, {"by": keys}
    if not hasattr(data, "groupby") or hasattr(data, "obj"):
        grouped(data, by)  # raises the message of a groupby given with by=
    return data.groupby(keys), {}
