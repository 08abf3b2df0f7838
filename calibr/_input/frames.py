"""Other libraries' objects at the input edge: arrays (torch, JAX, CuPy, any
DLPack or array-API array) read as numpy, and eager columns and frames (polars,
pyarrow, any Arrow PyCapsule object) read as the pandas path reads their values
(``docs/definitions.md``, "Arrays of other libraries"; ``docs/engines.md``).

Three jobs:

* :func:`eager` reads an array of another library given as ``p``, ``y``,
  ``weights`` or any other array argument as a numpy array, by one rule
  (:func:`host_array`): DLPack (``np.from_dlpack``) where numpy can hold the
  memory (a CPU array of a numpy dtype, any strides): a view, no copy; else the
  array API (``__array_namespace__``: a dtype numpy lacks, such as bfloat16, is
  cast to a float dtype that holds it exactly, a copy); a GPU array is copied
  to the host once; a torch tensor that requires grad is read through
  ``detach()``, a view outside its graph;
* :func:`eager` turns a polars ``Series``/``DataFrame``, a pyarrow
  ``Array``/``ChunkedArray``/``Table``/``RecordBatch``, or any object with the
  Arrow PyCapsule interface (``__arrow_c_stream__``, ``__arrow_c_array__``:
  imported by pyarrow, a struct stream as a table) given as ``p``, ``y`` or
  ``weights`` into what the rest of the input layer reads: a numpy array for a
  numeric or boolean column without nulls (polars and Arrow hand over their
  buffer, no copy for float64), a pandas object otherwise (nulls become
  pandas' missing values, strings strings, categoricals and dictionaries
  Categoricals, a frame a DataFrame with the same column names). The values
  reach the kernels as the same doubles as from pandas, so every number is bit
  for bit that of the pandas path, and every message that of the pandas path on
  the same values.
* :func:`eager_frame` does the same for the verbs' ``data`` (polars, Arrow or
  PyCapsule frames) and :func:`to_callers_frame` turns the verb's pandas result
  back into the caller's frame type (an Arrow ``Table`` for a PyCapsule frame).

The conversion goes through narwhals (``narwhals.from_native``), imported only
when such a value is passed: a value is recognised by the module of its type
(``polars``, ``pyarrow``) or by the protocol its type implements, so numpy and
pandas input costs an ``isinstance`` test.
Lazy sources (polars ``LazyFrame``, DuckDB relations, Spark DataFrames) are not
read here: :func:`calibr._input.lazy_backend` hands them to their engine
(``calibr/_engines/``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError, InputTypeError, arg
from .messages import fmt

__all__ = ["eager", "eager_frame", "foreign_kind", "frame_to_pandas", "frame_verb", "grouped",
           "host_array", "lazy_grouping", "to_callers_frame"]

#: narwhals' integer types that pandas' nullable integers hold (:func:`frame_to_pandas`).
_INTEGERS = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64")

#: The module prefixes of the eager objects read here, and their library's name.
_EAGER = (("polars.series", "polars"), ("polars.dataframe", "polars"), ("pyarrow", "pyarrow"))

#: What numpy and pandas objects are (read by the rest of the layer as they are;
#: pandas' frames and Series also have ``__arrow_c_stream__``, numpy's arrays
#: ``__dlpack__`` and its scalars ``__array_namespace__``).
_NATIVE = (np.ndarray, np.generic, pd.DataFrame, pd.Series, pd.Index,
           pd.api.extensions.ExtensionArray, list, tuple)

#: The module prefixes of the collections that ``calibr/_input/backends.py`` hands
#: to an engine (Dask's), never read here as arrays.
_ENGINE_MODULES = ("dask",)


def _is_arrow_capsule(value: Any) -> bool:
    """Whether ``value`` has the Arrow PyCapsule interface (a stream or an array)."""
    cls = type(value)
    return hasattr(cls, "__arrow_c_stream__") or hasattr(cls, "__arrow_c_array__")


def _is_array_object(value: Any) -> bool:
    """Whether ``value`` is an array of another library: DLPack or the array API."""
    cls = type(value)
    return hasattr(cls, "__dlpack__") or hasattr(cls, "__array_namespace__")


def foreign_kind(value: Any) -> str | None:
    """``"polars"`` or ``"pyarrow"`` for an eager object of those libraries,
    ``"arrow"`` for another object with the Arrow PyCapsule interface (read
    through pyarrow), else None."""
    module = type(value).__module__
    for prefix, lib in _EAGER:
        if module.startswith(prefix):
            return lib
    if (not isinstance(value, _NATIVE) and _lazy_what(value) is None
            and not module.startswith(_ENGINE_MODULES) and _is_arrow_capsule(value)):
        return "arrow"
    return None


# ------------------------------------------------------------ arrays of other libraries

#: DLPack's device type of host memory (``kDLCPU`` in DLPack's ``dlpack.h``):
#: numpy reads it in place. Every other device's memory is copied to the host.
_DLPACK_CPU = 1

#: The methods that copy a device array to the host, tried in this order when
#: its producer cannot export to the CPU through DLPack's ``dl_device``
#: (DLPack before 1.0): torch's ``Tensor.cpu()`` and CuPy's ``ndarray.get()``.
_TO_HOST = ("cpu", "get")


def _type_name(value: Any) -> str:
    cls = type(value)
    return f"{cls.__module__.partition('.')[0]}.{cls.__name__}"


def _dlpack_device(x: Any) -> int | None:
    """The DLPack device type of ``x`` (1 for the CPU), or None if it has none."""
    try:
        return int(x.__dlpack_device__()[0])
    except Exception:  # noqa: BLE001 - no DLPack device (an array-API array without DLPack)
        return None


def _copied_to_host(x: Any, value: Any, name: str, device: int) -> np.ndarray:
    """A device array copied to host memory once: the array API's way first
    (DLPack 1.0: ``np.from_dlpack(x, device="cpu", copy=True)`` asks the producer
    for a host copy through ``dl_device``), then the library's method (:data:`_TO_HOST`)."""
    try:
        return np.from_dlpack(x, device="cpu", copy=True)
    except Exception as err:  # noqa: BLE001 - a producer without DLPack 1.0's dl_device
        reason = err
    for method in _TO_HOST:
        to_host = getattr(x, method, None)
        if not callable(to_host):
            continue
        try:
            host = to_host()
            if isinstance(host, np.ndarray):
                return host
            if _dlpack_device(host) == _DLPACK_CPU:
                return np.from_dlpack(host)
        except Exception as err:  # noqa: BLE001 - try the next way
            reason = err
    raise InputTypeError(
        f"`{name}` is a {_type_name(value)} on DLPack device {device} (not the CPU) that "
        f"calibr cannot copy to the host ({type(reason).__name__}: {reason}); copy it to "
        "the CPU first (e.g. x.cpu() or x.get()).", param=name)


def host_array(value: Any, name: str) -> np.ndarray:
    """``value``, an array of another library (DLPack or the array API), as a
    numpy array (``docs/definitions.md``, "Arrays of other libraries").

    A CPU array whose dtype numpy has is read in place through DLPack (any
    strides; a view, never written to); another dtype (bfloat16, float8) is
    cast by its array namespace to the float dtype that holds it exactly (a
    copy); a GPU array is copied to the host once; a tensor that requires grad
    is read through ``detach()`` (a view of the same memory outside the
    autograd graph, which it leaves as it is: no ``.grad``, no version bump).

    Examples
    --------
    >>> import numpy as np
    >>> from calibr._input.frames import host_array
    >>> class Wrapped:  # a minimal DLPack producer over a numpy array
    ...     def __init__(self, a): self.a = a
    ...     def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
    ...     def __dlpack_device__(self): return self.a.__dlpack_device__()
    >>> a = np.array([0.25, 0.75])
    >>> np.shares_memory(host_array(Wrapped(a), "p"), a)
    True
    """
    x = value
    if getattr(x, "requires_grad", False) is True and callable(getattr(x, "detach", None)):
        x = x.detach()  # DLPack refuses a tensor in a graph; the view is outside it
    device = _dlpack_device(x)
    if device is not None and device != _DLPACK_CPU:
        return _copied_to_host(x, value, name, device)
    reason: Exception | None = None
    if device is not None:
        try:
            return np.from_dlpack(x)
        except Exception as err:  # noqa: BLE001 - a dtype or layout numpy cannot hold
            reason = err
    xp = None
    if hasattr(type(x), "__array_namespace__"):
        try:
            xp = x.__array_namespace__()
        except Exception as err:  # noqa: BLE001 - no namespace after all
            reason = err
    if xp is not None:
        try:
            if xp.isdtype(x.dtype, "real floating"):
                wide = xp.float32 if xp.finfo(x.dtype).bits <= 32 else xp.float64
                return np.from_dlpack(xp.astype(x, wide))  # exact: every value fits
        except Exception as err:  # noqa: BLE001 - fall back to numpy's own reading
            reason = err
    try:
        return np.asarray(x)  # the buffer protocol or __array__
    except Exception as err:  # noqa: BLE001 - nothing numpy can read
        reason = err
    dtype = getattr(x, "dtype", None)
    raise InputTypeError(
        f"`{name}` is a {_type_name(value)}{f' of dtype {dtype}' if dtype is not None else ''} "
        f"that numpy cannot read ({type(reason).__name__}: {reason}); convert it to "
        "float32 or float64 (or integer labels) first.", param=name) from reason


def _from_arrow_capsule(value: Any, name: str) -> Any:
    """A PyCapsule object imported by pyarrow: a struct stream or array (a
    frame) as a ``Table``, anything else as a column; the stream is read once."""
    try:
        import pyarrow as pa
    except ImportError:
        raise InputTypeError(
            f"`{name}` is a {_type_name(value)} read through its Arrow PyCapsule interface, "
            "which needs pyarrow: pip install \"calibr[arrow]\".", param=name) from None
    try:
        if hasattr(type(value), "__arrow_c_stream__"):
            column = pa.chunked_array(value)
            if pa.types.is_struct(column.type):
                return pa.Table.from_struct_array(column)
            return column
        array = pa.array(value)
        if pa.types.is_struct(array.type):
            return pa.Table.from_batches([pa.RecordBatch.from_struct_array(array)])
        return array
    except Exception as err:  # noqa: BLE001 - pyarrow cannot import the caller's object
        raise InputTypeError(
            f"`{name}` is a {_type_name(value)} with the Arrow PyCapsule interface that "
            f"pyarrow cannot import ({type(err).__name__}: {err}).", param=name) from None


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
    """``value`` as numpy or pandas if it is an array of another library, an
    eager polars or pyarrow object or an Arrow PyCapsule object (see the module
    docstring), else ``value`` itself, untouched."""
    if isinstance(value, _NATIVE):
        return value
    kind = foreign_kind(value)
    if kind is None:
        lazy = _lazy_what(value)
        if lazy is not None:
            raise InputTypeError(
                f"`{name}` is {lazy}: this function reads it as values, not as a lazy "
                "source; collect the columns it needs first (e.g. lf.collect(), "
                f"rel.arrow(), sdf.toPandas()). The functions of {arg('p')} and {arg('y')} "
                f"take a lazy source as {arg('p')} with {arg('y')} naming its label column, "
                f"and the verbs as {arg('data')} (docs/engines.md).", param=name)
        if _is_array_object(value) and not type(value).__module__.startswith(_ENGINE_MODULES):
            return host_array(value, name)
        return value
    import narwhals as nw

    native = _from_arrow_capsule(value, name) if kind == "arrow" else value
    if type(native).__module__.startswith("pyarrow"):
        import pyarrow as pa

        if isinstance(native, pa.RecordBatch):
            native = pa.Table.from_batches([native])
        elif isinstance(native, pa.Array):
            native = pa.chunked_array([native])
        elif not isinstance(native, (pa.ChunkedArray, pa.Table)):
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
    return frame_to_pandas(obj)


def frame_to_pandas(frame: Any) -> pd.DataFrame:
    """A narwhals eager frame as pandas: ``frame.to_pandas()``, except that an
    integer column (of at most 64 bits) holding a missing value becomes pandas'
    nullable integer of its type (``Int64``, ``UInt32``, ...), as pandas itself
    holds such a column, not the float64 that polars' and Arrow's conversions
    make of it (a group key 7 would be named and shown ``7.0``, and a key above
    2**53 rounded). The one conversion of a frame that may hold group keys: the
    verbs' ``data`` (:func:`eager`) and the engines' queries
    (``calibr/_engines/_lazy.py``)."""
    out = frame.to_pandas()
    for name, dtype in frame.schema.items():
        if str(dtype) not in _INTEGERS:
            continue
        column = frame.get_column(name)
        if column.null_count():
            values = column.fill_null(0).to_numpy().astype(str(dtype).lower())
            out[name] = pd.arrays.IntegerArray(values, column.is_null().to_numpy())
    return out


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
