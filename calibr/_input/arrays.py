"""Reading the caller's objects into numpy: lists, tuples, numpy arrays and
pandas objects, never consumed, never modified, with calibr's errors.

What is read, beyond plain lists and arrays:

* any real dtype of numpy or pandas (float16 to float128, integers of either
  byte order, nullable and Arrow-backed columns) is converted to float64 by
  :func:`as_float_array`;
* generators, iterators, sets, dicts and strings are refused, never consumed:
  they have no length or no order, or are one value rather than a vector;
* masked arrays are refused when a value is masked (numpy would read the
  value under the mask).
"""

from __future__ import annotations

import decimal
import math
import numbers
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set, Sized
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError, InputTypeError, arg
from .frames import eager
from .messages import bad_values_message, count_phrase, fmt, position_text

__all__ = ["as_array", "as_float_array", "refuse_non_array"]

_PANDAS = (pd.DataFrame, pd.Series, pd.Index, pd.api.extensions.ExtensionArray)
_ARRAY_LIKE = "an array-like (a list, tuple, numpy array or pandas object)"


def refuse_non_array(values: Any, name: str, what: str) -> None:
    """Refuse what numpy would turn into a 0-d object array, a string or a
    silently wrong array: generators and iterators (which would also be
    consumed), sets (no order), dicts, strings and masked arrays with masked
    values."""
    if isinstance(values, np.ma.MaskedArray):
        if np.ma.getmaskarray(values).any():
            raise InputTypeError(
                f"`{name}` must not be a masked array with masked values (calibr would read "
                f"the values under the mask); fill them with NaN ({name}.filled(np.nan)) "
                f"and pass {arg('na_rm', 'hint', True)} to drop them.",
                param=name
            )
        return
    if isinstance(values, (np.ndarray, *_PANDAS)):
        return
    if isinstance(values, (str, bytes)):
        raise InputTypeError(f"`{name}` must be {what}; got a string ({fmt(values)}).", param=name)
    if isinstance(values, types.GeneratorType):
        kind = "a generator"
    elif isinstance(values, Iterator):
        kind = f"an iterator ({type(values).__name__})"
    elif isinstance(values, (Set, Mapping)):
        kind = f"a {type(values).__name__}"
    else:
        return
    raise InputTypeError(f"`{name}` must be {_ARRAY_LIKE}; got {kind}.", param=name)


def _ragged_text(values: Any) -> str | None:
    """"row i has m values, row 0 has n" for a sequence whose rows differ in length."""
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)) or not values:
        return None

    def length(row: Any) -> int | None:
        if isinstance(row, Sized) and not isinstance(row, (str, bytes)):
            return len(row)
        return None

    def text(n: int | None) -> str:
        return "is a single value" if n is None else f"has {count_phrase(n, 'value', 'values')}"

    first = length(values[0])
    for i, row in enumerate(values):
        n = length(row)
        if n != first:
            return f"row {i} {text(n)}, row 0 {text(first)}"
    return None


def as_array(values: Any, name: str, what: str) -> np.ndarray:
    """``np.asarray(values)`` for a caller's object, with calibr's errors."""
    refuse_non_array(values, name, what)
    try:
        arr = np.asarray(values)
    except Exception as err:  # noqa: BLE001 - numpy cannot read the caller's object
        ragged = _ragged_text(values)
        if ragged is not None:
            raise InputError(
                f"`{name}` must be {what}; got a ragged sequence ({ragged}).",
                param=name
            ) from None
        raise InputTypeError(
            f"`{name}` must be {what}; got a {type(values).__name__} that numpy cannot read "
            f"as an array ({type(err).__name__}: {err}).",
            param=name
        ) from None
    if arr.ndim == 0 and arr.dtype == object and isinstance(values, Iterable):
        # a collection numpy does not unpack (e.g. dict.values()): one opaque object
        raise InputTypeError(f"`{name}` must be {_ARRAY_LIKE}; got a {type(values).__name__}.",
                             param=name)
    return arr


def _first_present(values: np.ndarray) -> int | None:
    """Flat index of the first value that is not missing, or None."""
    flat = values.ravel()
    try:
        missing = np.asarray(pd.isna(flat), dtype=bool)
    except Exception:  # noqa: BLE001 - a dtype pandas cannot test: nothing is missing
        missing = np.zeros(flat.size, dtype=bool)
    (present,) = np.nonzero(~missing)
    return int(present[0]) if present.size else None


def _is_real_dtype(dtype: Any) -> bool:
    """Real numbers: numpy/pandas integer and float dtypes, not bool or complex."""
    return (
        pd.api.types.is_numeric_dtype(dtype)
        and not pd.api.types.is_bool_dtype(dtype)
        and not pd.api.types.is_complex_dtype(dtype)
    )


def _is_real_or_missing(v: Any) -> bool:
    """A real number or a missing value. A ``decimal.Decimal`` is a real number
    (read as its nearest double, as every engine casts a Decimal column;
    docs/engines.md, "Types"); a signalling NaN is not."""
    return v is None or v is pd.NA or (
        isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
    ) or (isinstance(v, decimal.Decimal) and not v.is_snan())


def _overflows(v: Any) -> bool:
    """Whether a real number is too large for a float64 (a Decimal becomes inf
    without an error: a finite one that does overflows)."""
    try:
        f = float(v)
    except OverflowError:
        return True
    return isinstance(v, decimal.Decimal) and v.is_finite() and math.isinf(f)


def _object_to_float(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array of real numbers and missing values (None, pd.NA, NaN) as float64.

    Anything else (strings, booleans, complex numbers, dates) is a TypeError:
    calibr never guesses a number from it. Integers too large for a float64
    are an error that gives their position.
    """
    flat = arr.ravel()
    ok = np.fromiter((_is_real_or_missing(v) for v in flat), dtype=bool, count=flat.size)
    if not ok.all():
        (bad,) = np.nonzero(~ok)
        first = int(bad[0])
        raise InputTypeError(
            f"`{name}` must hold real numbers; {count_phrase(bad.size, 'value', 'values')} "
            f"{'is' if bad.size == 1 else 'are'} not, the first at "
            f"{position_text(first, arr.shape)} ({fmt(flat[first])} of type "
            f"{type(flat[first]).__name__}).",
            param=name
        )
    values = [np.nan if v is None or v is pd.NA else v for v in flat]
    try:
        out = np.array(values, dtype=np.float64)
        big = None
        if any(isinstance(v, decimal.Decimal) for v in values) and np.isinf(out).any():
            big = np.fromiter((_overflows(v) for v in values), dtype=bool, count=len(values))
    except OverflowError:
        big = np.fromiter((_overflows(v) for v in values), dtype=bool, count=len(values))
    if big is not None and big.any():
        raise InputError(
            bad_values_message(name, "hold real numbers that fit in a float64", big, arr),
            param=name
        ) from None
    return out.reshape(arr.shape)


def _not_numeric(name: str, found: str, values: np.ndarray, column: int | None = None) -> str:
    """"`p` must be numeric (integer or float); got <found>, the first value at <pos> (<v>)."

    ``values`` is the refused array (or the refused column, at ``column``).
    """
    msg = f"`{name}` must be numeric (integer or float); got {found}"
    first = _first_present(values) if values.ndim >= 1 else None
    if first is None:
        return msg + "."
    if column is None:
        where = position_text(first, values.shape)
    else:
        where = f"row {first}, column {column}"
    return msg + f", the first value at {where} ({fmt(values.ravel()[first])})."


def _pandas_to_float(values: pd.Series | pd.DataFrame, name: str) -> np.ndarray:
    if isinstance(values, pd.Series):
        if pd.api.types.is_object_dtype(values.dtype):
            return _object_to_float(values.to_numpy(dtype=object), name)
        if not _is_real_dtype(values.dtype):
            raise InputTypeError(
                _not_numeric(name, f"dtype {values.dtype}", values.to_numpy(dtype=object)),
                param=name
            )
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    dtypes = list(values.dtypes)
    refused = [j for j, d in enumerate(dtypes) if not (
        _is_real_dtype(d) or pd.api.types.is_object_dtype(d))]
    if refused:
        firsts = []
        for j in refused:
            first = _first_present(values.iloc[:, j].to_numpy(dtype=object))
            firsts.append((np.inf if first is None else first, j))
        _, j = min(firsts)
        found = ", ".join(sorted({str(dtypes[c]) for c in refused}))
        raise InputTypeError(
            _not_numeric(name, f"columns of dtype {found}",
                         values.iloc[:, j].to_numpy(dtype=object), column=j),
            param=name
        )
    if any(pd.api.types.is_object_dtype(d) for d in dtypes):
        return _object_to_float(values.to_numpy(dtype=object), name)
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def as_float_array(
    values: Any, name: str, what: str = "a vector or a matrix", ndims: tuple[int, ...] = (1, 2)
) -> np.ndarray:
    """float64 ndarray of real-valued ``values``; missing values (None, pd.NA) become NaN.

    Only real numbers are accepted: numpy or pandas integer and float dtypes
    (nullable and Arrow-backed ones too, either byte order, float16 to
    float128), or object arrays holding real numbers. Booleans, strings,
    complex numbers, categories and dates are a TypeError, never converted.
    The number of dimensions must be one of ``ndims`` (checked first, so that
    positions in messages are well defined).
    """
    values = eager(values, name)  # polars / Arrow: numpy or pandas (frames.py)
    if isinstance(values, (pd.DataFrame, pd.Series)):
        try:
            return _pandas_to_float(values, name)
        except (InputError, InputTypeError):
            raise
        except Exception as err:  # noqa: BLE001 - pandas cannot convert the caller's column
            raise InputTypeError(
                f"`{name}` must be numeric (integer or float); pandas cannot convert it to "
                f"float64 ({type(err).__name__}: {err}).",
                param=name
            ) from None
    if isinstance(values, (pd.Index, pd.api.extensions.ExtensionArray)):
        # read as a column, so that categories, booleans and dates are refused alike
        return as_float_array(pd.Series(values, copy=False), name, what, ndims)
    arr = as_array(values, name, what)
    if arr.dtype.kind in "US" and not isinstance(values, np.ndarray):
        # numpy turns [0.5, "a"] into strings: look at the caller's values instead
        try:
            as_object = np.array(values, dtype=object)
        except Exception:  # noqa: BLE001 - keep numpy's reading
            as_object = None
        if as_object is not None and as_object.shape == arr.shape:
            arr = as_object
    if arr.ndim not in ndims:
        if arr.ndim == 0:
            raise InputError(f"`{name}` must be {what}; got a scalar.", param=name)
        raise InputError(f"`{name}` must be {what}; got an array of shape {arr.shape}.", param=name)
    if arr.dtype == np.float64 and arr.dtype.isnative:
        return arr
    if arr.dtype.kind in "iuf":
        return arr.astype(np.float64)  # native float64; float16/32 and integers exactly
    if arr.dtype.kind == "O":
        return _object_to_float(arr, name)
    raise InputTypeError(_not_numeric(name, f"dtype {arr.dtype}", arr), param=name)
