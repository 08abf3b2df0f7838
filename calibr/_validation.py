"""The one input layer of calibr (the rules: ``docs/definitions.md``, section Inputs).

Every metric turns its arguments into canonical arrays here:

* ``p`` becomes a float64 vector (binary) or a C-contiguous float64 matrix with
  one column per class;
* ``y`` becomes exact 0/1 values (binary) or 0-based int64 class codes
  (multiclass), with the class labels kept for messages.

No metric validates its inputs in any other way. The caller's objects are never
modified: arrays are read, and copied only when a conversion or a row filter
(``na_rm=True``) needs new memory.

Bad input raises :class:`InputError` (a ``ValueError``: a bad value) or
:class:`InputTypeError` (a ``TypeError``: a kind of object calibr does not
read); nothing else escapes. Every message names the argument, says what was
expected and what was found, and for bad values gives their count and the
first (0-based) position, e.g.
"`p` must lie in [0, 1]; 3 values do not, the first at position 17 (1.2)."

What is read, beyond plain lists and arrays:

* any real dtype of numpy or pandas (float16 to float128, integers of either
  byte order, nullable and Arrow-backed columns) is converted to float64
  (probabilities) or to native numbers (labels) before any kernel sees it;
* generators, iterators, sets, dicts and strings are refused, never consumed:
  they have no length or no order, or are one value rather than a vector;
* masked arrays are refused when a value is masked (numpy would read the
  value under the mask).
"""

from __future__ import annotations

import math
import numbers
import sys
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set, Sized
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._kernels import scans

__all__ = [
    "InputError",
    "InputTypeError",
    "MAX_BINS",
    "MAX_BIN_CELLS",
    "Converted",
    "Prepared",
    "ROW_SUM_TOL",
    "check_bandwidth",
    "check_bin_cells",
    "check_bins",
    "check_choice",
    "check_flag",
    "check_kernel_weights",
    "convert",
    "finish",
    "metric_value",
    "prepare",
]

#: Rows of a probability matrix must sum to 1 within this absolute tolerance
#: (the R help pages, kept as r_reference/calibrRef/man/*.Rd: "rows summing to one
#: within absolute tolerance 1e-6"; docs/definitions.md, section "Inputs").
ROW_SUM_TOL = 1e-6

#: Rows that miss ROW_SUM_TOL but are this close to 1 look like probabilities
#: rounded when saved (6 decimals at K >= 3 give sums like 0.999999): the
#: message then suggests dividing each row by its sum. Farther rows are a
#: different mistake, for which that advice would hide a bug.
ROUNDED_SUM_TOL = 1e-3


class InputError(ValueError):
    """Raised for an argument with a bad value (a ``ValueError``)."""


class InputTypeError(TypeError):
    """Raised for an argument of a type calibr does not accept (a ``TypeError``).

    Bad input to any public function of calibr raises :class:`InputError` or
    this; any other exception is a bug in calibr.
    """


@dataclass(frozen=True)
class Prepared:
    """Canonical inputs of a metric.

    Attributes
    ----------
    p : ndarray
        float64, shape ``(n,)`` for binary input or C-contiguous ``(n, K)``.
    y : ndarray
        Binary: exact 0/1 values (dtype bool, an integer or float64).
        Multiclass: int64 0-based class codes in ``0..K-1``.
    binary : bool
        True when ``p`` is a vector.
    classes : tuple or None
        The label of each column (multiclass), or ``None`` (binary).
    weights : ndarray or None
        float64 frequency weights of the rows of ``p`` (finite, nonnegative,
        with a positive finite total), or ``None`` (every row counts once).
    """

    p: np.ndarray
    y: np.ndarray
    binary: bool
    classes: tuple | None
    weights: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    @property
    def k(self) -> int:
        return 1 if self.binary else int(self.p.shape[1])


# --------------------------------------------------------------------------
# message helpers

#: Longest shown text of one value in a message; longer reprs are cut.
_MAX_SHOWN = 80


def _fmt(value: Any) -> str:
    """Show a value in a message (floats with repr precision, strings quoted).

    Integers too long to print usefully are described by their length, and
    other long reprs are cut, so that a message stays one readable line.
    """
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return repr(value)  # .item() would turn nanoseconds into a bare integer
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            text = repr(value)
        except ValueError:  # more digits than Python converts to text
            return f"an integer of more than {sys.get_int_max_str_digits()} digits"
        digits = len(text.lstrip("-"))
        return text if digits <= 30 else f"an integer of {digits} digits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a caller's object whose repr fails
        return f"a {type(value).__name__}"
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _count_phrase(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _bad_values_message(
    name: str, expected: str, bad: np.ndarray, shown: np.ndarray, rows: np.ndarray | None = None
) -> str:
    """"`name` must <expected>; N values do not, the first at position i (v).

    ``rows`` maps positions in ``shown`` back to the caller's rows when some
    were dropped (``na_rm=True``), so positions always refer to the caller's data.
    """
    (positions,) = np.nonzero(bad.ravel())
    first = int(positions[0])
    verb = "does not" if positions.size == 1 else "do not"
    return (
        f"`{name}` must {expected}; {_count_phrase(positions.size, 'value', 'values')} {verb}, "
        f"the first at {_position_text(first, shown.shape, rows)} ({_fmt(shown.ravel()[first])})."
    )


def _position_text(
    flat_index: int, shape: tuple[int, ...], rows: np.ndarray | None = None
) -> str:
    """0-based position (vector) or row and column (matrix) in the caller's data."""
    if len(shape) <= 1:
        return f"position {flat_index if rows is None else int(rows[flat_index])}"
    if len(shape) > 2:
        return f"index {tuple(int(i) for i in np.unravel_index(flat_index, shape))}"
    row, col = divmod(flat_index, shape[1])
    return f"row {row if rows is None else int(rows[row])}, column {col}"


def _real_value(value: Any) -> float | None:
    """``value`` as a float if it is a real number (not a bool), else None.

    Integers too large for a float become +-inf, so that a finiteness check
    refuses them instead of ``float()`` raising OverflowError.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):  # a Real subclass that cannot convert
        return None


def metric_value(value: Any, what: str = "`metric`", finite: bool = False) -> float:
    """What a callable metric returned, as a float: a real number (a Python or
    numpy integer or float, or a 0-d array of one; NaN and, unless ``finite``,
    infinities are numbers too). None, booleans, complex numbers, strings and
    arrays of any other shape are refused: ``float()`` would raise on some and
    quietly read others (``"0.5"``, ``True``). ``what`` names the metric in the
    message.
    """
    number = _real_value(value[()] if isinstance(value, np.ndarray) and value.ndim == 0
                         else value)
    if number is None:
        raise InputError(
            f"{what} must return a real number (a float, an int or a numpy scalar); it "
            f"returned {_fmt(value)} ({type(value).__name__})."
        )
    if finite and math.isinf(number):
        raise InputError(
            f"{what} must return a finite number or NaN here (quantiles of infinite "
            f"values are undefined); it returned {_fmt(value)}."
        )
    return number


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (R's ``match.arg``, without
    partial matching), else raise.

    Examples
    --------
    >>> check_choice("confidence", "type", ("classwise", "confidence"))
    'confidence'
    """
    if isinstance(value, str) and value in choices:
        return str(value)
    options = ", ".join(repr(c) for c in choices)
    raise InputError(f"`{name}` must be one of {options}; got {_fmt(value)}.")


def check_flag(value: Any, name: str) -> bool:
    """Return ``value`` as a bool if it is True or False (numpy booleans too)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"`{name}` must be True or False; got {_fmt(value)}.")


#: Upper bound for ``bins``: the kernels keep per-bin sums (per class and per
#: thread), so a count in the billions would exhaust memory instead of failing
#: clearly. R has no such bound; no equal-width binning needs more.
MAX_BINS = 1_000_000

#: Upper bound for ``bins`` times the number of classes with their own bins
#: (K for ``type="classwise"``, 1 otherwise). The binned kernels keep three
#: float64 sums per bin and class, so this caps them at 240 MB, and the few
#: temporaries of that size that ece()/mce() and the table make, instead of
#: letting ``bins=10**6`` with 1,000 classes ask for 24 GB. Checked before
#: anything is allocated for the bins. R has no such bound.
MAX_BIN_CELLS = 10_000_000


def check_bins(bins: Any) -> int:
    """Return ``bins`` as an int if it is a single positive integer (at most ``MAX_BINS``).

    Integral floats (``10.0``) are accepted because R's ``bins = 10`` is a double;
    booleans, fractions, arrays and strings are not.
    """
    ok = False
    if isinstance(bins, numbers.Integral) and not isinstance(bins, (bool, np.bool_)):
        ok = int(bins) >= 1
    else:
        b = _real_value(bins)
        ok = b is not None and math.isfinite(b) and b >= 1 and b == math.floor(b)
    if not ok:
        raise InputError(f"`bins` must be a single positive integer; got {_fmt(bins)}.")
    value = int(bins)  # exact: an integer, or an integral finite float
    if value > MAX_BINS:
        raise InputError(
            f"`bins` must be a single positive integer no larger than {MAX_BINS:,}; "
            f"got {_fmt(bins)}."
        )
    return value


def check_bin_cells(bins: int, k: int, classwise: bool) -> None:
    """Raise unless ``bins`` times the classes with their own bins is at most
    ``MAX_BIN_CELLS``; call it before any per-bin array is allocated.

    Only the classwise form of a multiclass ``p`` keeps one set of bins per
    class; the binary and confidence forms keep one set (bounded by ``MAX_BINS``).
    """
    if classwise and bins * k > MAX_BIN_CELLS:
        raise InputError(
            f"`bins` times the number of classes must be at most {MAX_BIN_CELLS:,} for "
            f'type = "classwise" (one set of bins per class); got bins = {bins:,} with '
            f"K = {k:,} classes ({bins * k:,} bins). Use fewer bins, or "
            'type = "confidence".'
        )


def check_bandwidth(bandwidth: Any) -> float | str:
    """Return a positive finite bandwidth as float, or the string ``"median"``."""
    if isinstance(bandwidth, str):
        if bandwidth == "median":
            return "median"
    else:
        h = _real_value(bandwidth)
        if h is not None and math.isfinite(h) and h > 0:
            return h
    raise InputError(
        f'`bandwidth` must be a positive finite number or "median"; got {_fmt(bandwidth)}.'
    )


# --------------------------------------------------------------------------
# fast scans (one pass; the slow path builds the message)


def _any_outside_unit(x: np.ndarray) -> bool:
    return scans.count_outside_unit(x.reshape(-1)) > 0


def _all_binary(y: np.ndarray) -> bool:
    return scans.count_not_binary(y) == 0


# --------------------------------------------------------------------------
# reading the caller's objects

_PANDAS = (pd.DataFrame, pd.Series, pd.Index, pd.api.extensions.ExtensionArray)
_ARRAY_LIKE = "an array-like (a list, tuple, numpy array or pandas object)"


def _refuse_non_array(values: Any, name: str, what: str) -> None:
    """Refuse what numpy would turn into a 0-d object array, a string or a
    silently wrong array: generators and iterators (which would also be
    consumed), sets (no order), dicts, strings and masked arrays with masked
    values."""
    if isinstance(values, np.ma.MaskedArray):
        if np.ma.getmaskarray(values).any():
            raise InputTypeError(
                f"`{name}` must not be a masked array with masked values (calibr would read "
                f"the values under the mask); fill them with NaN ({name}.filled(np.nan)) "
                "and pass na_rm=True to drop them."
            )
        return
    if isinstance(values, (np.ndarray, *_PANDAS)):
        return
    if isinstance(values, (str, bytes)):
        raise InputTypeError(f"`{name}` must be {what}; got a string ({_fmt(values)}).")
    if isinstance(values, types.GeneratorType):
        kind = "a generator"
    elif isinstance(values, Iterator):
        kind = f"an iterator ({type(values).__name__})"
    elif isinstance(values, (Set, Mapping)):
        kind = f"a {type(values).__name__}"
    else:
        return
    raise InputTypeError(f"`{name}` must be {_ARRAY_LIKE}; got {kind}.")


def _ragged_text(values: Any) -> str | None:
    """"row i has m values, row 0 has n" for a sequence whose rows differ in length."""
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)) or not values:
        return None

    def length(row: Any) -> int | None:
        if isinstance(row, Sized) and not isinstance(row, (str, bytes)):
            return len(row)
        return None

    def text(n: int | None) -> str:
        return "is a single value" if n is None else f"has {_count_phrase(n, 'value', 'values')}"

    first = length(values[0])
    for i, row in enumerate(values):
        n = length(row)
        if n != first:
            return f"row {i} {text(n)}, row 0 {text(first)}"
    return None


def _asarray(values: Any, name: str, what: str) -> np.ndarray:
    """``np.asarray(values)`` for a caller's object, with calibr's errors."""
    _refuse_non_array(values, name, what)
    try:
        arr = np.asarray(values)
    except Exception as err:  # noqa: BLE001 - numpy cannot read the caller's object
        ragged = _ragged_text(values)
        if ragged is not None:
            raise InputError(
                f"`{name}` must be {what}; got a ragged sequence ({ragged})."
            ) from None
        raise InputTypeError(
            f"`{name}` must be {what}; got a {type(values).__name__} that numpy cannot read "
            f"as an array ({type(err).__name__}: {err})."
        ) from None
    if arr.ndim == 0 and arr.dtype == object and isinstance(values, Iterable):
        # a collection numpy does not unpack (e.g. dict.values()): one opaque object
        raise InputTypeError(f"`{name}` must be {_ARRAY_LIKE}; got a {type(values).__name__}.")
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
    return v is None or v is pd.NA or (
        isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
    )


def _overflows(v: Any) -> bool:
    try:
        float(v)
    except OverflowError:
        return True
    return False


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
            f"`{name}` must hold real numbers; {_count_phrase(bad.size, 'value', 'values')} "
            f"{'is' if bad.size == 1 else 'are'} not, the first at "
            f"{_position_text(first, arr.shape)} ({_fmt(flat[first])} of type "
            f"{type(flat[first]).__name__})."
        )
    values = [np.nan if v is None or v is pd.NA else v for v in flat]
    try:
        out = np.array(values, dtype=np.float64)
    except OverflowError:
        big = np.fromiter((_overflows(v) for v in values), dtype=bool, count=len(values))
        raise InputError(
            _bad_values_message(name, "hold real numbers that fit in a float64", big, arr)
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
        where = _position_text(first, values.shape)
    else:
        where = f"row {first}, column {column}"
    return msg + f", the first value at {where} ({_fmt(values.ravel()[first])})."


def _pandas_to_float(values: pd.Series | pd.DataFrame, name: str) -> np.ndarray:
    if isinstance(values, pd.Series):
        if pd.api.types.is_object_dtype(values.dtype):
            return _object_to_float(values.to_numpy(dtype=object), name)
        if not _is_real_dtype(values.dtype):
            raise InputTypeError(
                _not_numeric(name, f"dtype {values.dtype}", values.to_numpy(dtype=object))
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
                         values.iloc[:, j].to_numpy(dtype=object), column=j)
        )
    if any(pd.api.types.is_object_dtype(d) for d in dtypes):
        return _object_to_float(values.to_numpy(dtype=object), name)
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def _as_float_array(
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
    if isinstance(values, (pd.DataFrame, pd.Series)):
        try:
            return _pandas_to_float(values, name)
        except (InputError, InputTypeError):
            raise
        except Exception as err:  # noqa: BLE001 - pandas cannot convert the caller's column
            raise InputTypeError(
                f"`{name}` must be numeric (integer or float); pandas cannot convert it to "
                f"float64 ({type(err).__name__}: {err})."
            ) from None
    if isinstance(values, (pd.Index, pd.api.extensions.ExtensionArray)):
        # read as a column, so that categories, booleans and dates are refused alike
        return _as_float_array(pd.Series(values, copy=False), name, what, ndims)
    arr = _asarray(values, name, what)
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
            raise InputError(f"`{name}` must be {what}; got a scalar.")
        raise InputError(f"`{name}` must be {what}; got an array of shape {arr.shape}.")
    if arr.dtype == np.float64 and arr.dtype.isnative:
        return arr
    if arr.dtype.kind in "iuf":
        return arr.astype(np.float64)  # native float64; float16/32 and integers exactly
    if arr.dtype.kind == "O":
        return _object_to_float(arr, name)
    raise InputTypeError(_not_numeric(name, f"dtype {arr.dtype}", arr))


# --------------------------------------------------------------------------
# p


def _convert_p(p: Any) -> tuple[np.ndarray, pd.Index | None]:
    """Return (float64 array, DataFrame columns or None)."""
    columns = None
    if isinstance(p, pd.DataFrame):
        columns = p.columns
    arr = _as_float_array(p, "p")
    if arr.ndim == 2:
        if arr.shape[1] < 2:
            raise InputError(
                "`p` must have at least two columns (one per class), or be a vector "
                f"for binary problems; got {arr.shape[1]} column."
                if arr.shape[1] == 1
                else f"`p` must have at least two columns (one per class); got {arr.shape[1]}."
            )
        arr = np.ascontiguousarray(arr)
    return arr, columns


def _check_p_values(arr: np.ndarray, rows: np.ndarray | None) -> None:
    """Raise for non-finite or out-of-range probabilities (missing values handled before)."""
    inf = np.isinf(arr)
    if inf.any():
        raise InputError(_bad_values_message("p", "be finite", inf, arr, rows))
    raise InputError(_bad_values_message("p", "lie in [0, 1]", (arr < 0) | (arr > 1), arr, rows))


#: The fix suggested when every bad row sum is within ROUNDED_SUM_TOL of 1.
ROUNDED_HINT = "If the probabilities were rounded when saved, divide each row by its sum."


def _check_row_sums(arr: np.ndarray, rows: np.ndarray | None) -> None:
    """Rows must sum to 1 within ROW_SUM_TOL (R's rule). The message shows the
    first bad sum and its distance from 1 at full precision (a sum printed as
    0.999999 can be 1.0000000000287557e-06 away), and suggests renormalising
    when every bad row is close enough to 1 to be rounding."""
    if scans.count_bad_row_sums(arr, ROW_SUM_TOL) == 0:
        return
    sums = arr[:, 0].copy()  # summed in column order, as the scan does: the same verdicts
    for k in range(1, arr.shape[1]):
        sums += arr[:, k]
    dist = np.abs(sums - 1.0)
    bad = dist > ROW_SUM_TOL
    if bad.any():
        (bad_rows,) = np.nonzero(bad)
        first = int(bad_rows[0])
        verb = "does not" if bad_rows.size == 1 else "do not"
        hint = ""
        if bool(np.all(dist[bad_rows] <= ROUNDED_SUM_TOL)):
            hint = " " + ROUNDED_HINT
        raise InputError(
            f"`p` rows must sum to 1 (within {ROW_SUM_TOL:g}); "
            f"{_count_phrase(bad_rows.size, 'row', 'rows')} {verb}, the first at row "
            f"{first if rows is None else int(rows[first])} (sum {_fmt(sums[first])}, "
            f"{_fmt(dist[first])} away from 1).{hint}"
        )


# --------------------------------------------------------------------------
# y


def _convert_y(y: Any, binary: bool):
    """``(values, categories, codes, index)`` of the labels: a 1-d ndarray of
    native numbers (float64 for any float) or objects, and a Categorical's
    categories and codes (else None), and a Series' index (else None)."""
    _refuse_non_array(y, "y", "a vector of labels")
    categories = None
    codes = None
    y_index = y.index if isinstance(y, pd.Series) else None
    if isinstance(y, pd.Series) and isinstance(y.dtype, pd.CategoricalDtype):
        y = y.array
    if isinstance(y, pd.Categorical):
        categories = y.categories
        codes = np.asarray(y.codes)
        y_values = np.asarray(y, dtype=object) if not binary else np.asarray(y)
    elif isinstance(y, (pd.Series, pd.Index)):
        try:
            y_values = y.to_numpy()
        except Exception as err:  # noqa: BLE001 - pandas cannot convert the caller's column
            raise InputTypeError(
                f"`y` must be a vector of labels; pandas cannot convert it to an array "
                f"({type(err).__name__}: {err})."
            ) from None
    else:
        y_values = _asarray(y, "y", "a vector of labels")
        if y_values.dtype.kind in "US" and not isinstance(y, np.ndarray) and y_values.ndim == 1:
            # numpy turns [0, 1, "1"] into strings: keep the caller's values instead
            as_object = np.empty(len(y_values), dtype=object)
            as_object[:] = list(y)
            if not all(isinstance(v, str) for v in as_object):
                y_values = as_object
    if y_values.ndim != 1:
        if y_values.ndim == 0:
            raise InputError(
                f"`y` must be a vector of labels; got a scalar ({_fmt(y_values[()])})."
            )
        raise InputError(f"`y` must be a vector of labels; got an array of shape {y_values.shape}.")
    return _native_labels(y_values), categories, codes, y_index


def _native_labels(y: np.ndarray) -> np.ndarray:
    """Labels the kernels can read: native byte order, and float64 for any float
    dtype (float16 and float32 convert exactly; wider floats must, too)."""
    if y.dtype.kind in "biufcmMU" and not y.dtype.isnative:
        y = y.astype(y.dtype.newbyteorder("="))
    if y.dtype.kind == "f" and y.dtype != np.float64:
        as64 = y.astype(np.float64)
        if y.dtype.itemsize > 8:
            lost = ~((as64 == y) | np.isnan(y))
            if lost.any():
                raise InputError(
                    _bad_values_message("y", "hold labels that a float64 holds exactly", lost, y)
                )
        y = as64
    return y


def _y_missing(y_values: np.ndarray, codes: np.ndarray | None) -> np.ndarray | None:
    """Boolean mask of missing labels, or None when none can be missing."""
    if codes is not None:
        return codes < 0
    kind = y_values.dtype.kind
    if kind in "biuc":
        return None
    if kind == "f":
        return np.isnan(y_values)
    try:
        return np.asarray(pd.isna(y_values), dtype=bool)
    except Exception:  # noqa: BLE001 - a dtype pandas cannot test (structured): none missing
        return None


def _infer_object_labels(y_values: np.ndarray) -> np.ndarray:
    """Give an object array of numbers or booleans (e.g. from a nullable pandas
    column) its natural numpy dtype; leave other labels (strings, mixed, and
    integers too large for int64) alone."""
    inferred = pd.api.types.infer_dtype(y_values, skipna=False)
    try:
        if inferred == "boolean":
            return y_values.astype(bool)
        if inferred == "integer":
            return y_values.astype(np.int64)
        if inferred in ("floating", "mixed-integer-float"):
            return y_values.astype(np.float64)
    except (OverflowError, TypeError, ValueError):
        pass
    return y_values


def _class_list(classes: Any) -> list:
    """``classes=`` as a list: an ordered sequence of distinct labels.

    Sets and strings are refused: a set has no column order (the result would
    depend on hashing) and a string is one label, not a sequence of them.
    """
    ordered = isinstance(classes, (Sequence, np.ndarray, pd.Index, pd.Series))
    if not ordered or isinstance(classes, (str, bytes)):
        raise InputError(
            "`classes` must be an ordered sequence of labels (a list, tuple, range, array "
            f"or pandas Index), one per column of `p`; got a {type(classes).__name__}."
        )
    if isinstance(classes, np.ndarray) and classes.ndim != 1:
        raise InputError(
            f"`classes` must be a vector of labels; got an array of shape {classes.shape}."
        )
    labels = list(classes)
    unhashable = [v for v in labels if not _hashable(v)]
    if unhashable:
        raise InputTypeError(
            f"`classes` must hold labels that can be compared (hashable values); got "
            f"{_fmt(unhashable[0])} of type {type(unhashable[0]).__name__}."
        )
    if not pd.Index(labels, tupleize_cols=False).is_unique:
        raise InputError(f"`classes` must be unique to identify the classes; got {labels!r}.")
    return labels


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _binary_labels(
    y_values: np.ndarray, classes: Sequence | None, rows: np.ndarray | None
) -> np.ndarray:
    if classes is not None:
        classes = _class_list(classes)
        if len(classes) != 2:
            raise InputError(
                "`classes` must name the two labels (negative, positive) for a vector `p`; "
                f"got {len(classes)}."
            )
        return _labels_against(y_values, classes, rows)
    kind = y_values.dtype.kind
    if kind == "b":
        return y_values
    if kind in "iuf":
        if not _all_binary(y_values):
            raise InputError(
                _bad_values_message(
                    "y", "be 0/1 or boolean for a vector `p`",
                    (y_values != 0) & (y_values != 1), y_values, rows,
                )
            )
        return y_values
    # object / strings: accept Python bools and numbers that are exactly 0 or 1
    if kind == "O":
        ok = np.fromiter(
            (isinstance(v, (bool, np.bool_, numbers.Real)) and v in (0, 1) for v in y_values),
            dtype=bool, count=y_values.size,
        )
        if ok.all():
            return y_values.astype(np.float64)
    else:
        ok = np.zeros(y_values.size, dtype=bool)
    raise InputError(
        _bad_values_message("y", "be 0/1 or boolean for a vector `p`", ~ok, y_values, rows)
        + " Pass classes=(negative, positive) to name other labels."
    )


def _labels_text(labels: Sequence) -> str:
    shown = ", ".join(_fmt(v) for v in list(labels)[:10])
    return shown + (", ..." if len(labels) > 10 else "")


def _labels_against(
    y_values: np.ndarray, labels: Sequence, rows: np.ndarray | None
) -> np.ndarray:
    """Map labels to the 0-based position of the equal entry of ``labels`` (unique)."""
    index = pd.Index(list(labels), tupleize_cols=False)
    try:
        codes = index.get_indexer(y_values)
    except TypeError:  # an unhashable label (a list, a dict) in y
        ok = np.fromiter((_hashable(v) for v in y_values), dtype=bool, count=y_values.size)
        (bad,) = np.nonzero(~ok)
        if not bad.size:
            raise
        first = int(bad[0])
        raise InputTypeError(
            f"`y` must hold labels that can be compared (hashable values); "
            f"{_count_phrase(bad.size, 'value', 'values')} {'is' if bad.size == 1 else 'are'} "
            f"not, the first at {_position_text(first, y_values.shape, rows)} "
            f"({_fmt(y_values[first])} of type {type(y_values[first]).__name__})."
        ) from None
    bad = codes < 0
    if bad.any():
        raise InputError(
            _bad_values_message(
                "y", f"be one of the class labels ({_labels_text(labels)})", bad, y_values, rows
            )
        )
    return codes.astype(np.int64)


def _categorical_against(
    y_values: np.ndarray,
    categories: pd.Index,
    cat_codes: np.ndarray,
    columns: pd.Index,
    rows: np.ndarray | None,
) -> np.ndarray:
    """A Categorical's values matched to the column names (unused categories are fine)."""
    names = pd.Index(list(columns), tupleize_cols=False)
    column_of = names.get_indexer(pd.Index(list(categories), tupleize_cols=False))
    codes = column_of[cat_codes]
    bad = codes < 0
    if bad.any():
        raise InputError(
            _bad_values_message(
                "y", f"be one of the class labels ({_labels_text(columns)})", bad, y_values, rows
            )
        )
    return codes.astype(np.int64)


def _is_integer_label(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _are_positions(columns: pd.Index, k: int) -> bool:
    """Are the column names the integers 0..K-1, in order (pandas' default)?"""
    return all(_is_integer_label(c) and c == i for i, c in enumerate(columns)) and len(
        columns) == k


def _integers_without_zero(values: np.ndarray) -> bool:
    """Are the (non-missing) labels all integers (or integral floats), none of them 0?"""
    if values.size == 0:
        return False
    kind = values.dtype.kind
    if kind in "iu":
        pass
    elif kind == "f":
        if not bool(np.all(np.isfinite(values) & (values == np.floor(values)))):
            return False
    elif kind == "O":
        if not all(_is_integer_label(v) for v in values):
            return False
    else:
        return False
    return not bool(np.any(values == 0))


def _check_not_r_codes_by_name(
    y_values: np.ndarray,
    categories: pd.Index | None,
    cat_codes: np.ndarray | None,
    columns: pd.Index,
    k: int,
) -> None:
    """Refuse the common mistake of R's codes 1..K against pandas' default column
    names 0..K-1: matched by name, a sample without code K gives a shifted answer.

    The rule: the column names are the integers 0..K-1 in order, ``classes=``
    is not given, and the labels are integers (or integral floats) with no 0
    among them. A 0 among the labels makes them 0-based, matched by name.
    """
    if not _are_positions(columns, k):
        return
    if categories is not None:
        used = np.unique(cat_codes[cat_codes >= 0])
        values = categories.take(used).to_numpy()
    else:
        values = y_values
    if not _integers_without_zero(values):
        return
    raise InputError(
        f"`y` is ambiguous for a DataFrame `p` whose columns are named 0..{k - 1}: its labels "
        f"are integers with no 0, so they may be 0-based labels matched to these column names "
        f"(label 1 is column 1) or R's 1-based codes 1..{k} (label 1 is column 0). Pass "
        f"classes=range({k}) for 0-based labels matched to these columns, or "
        f"classes=range(1, {k + 1}) for R's 1-based codes."
    )


def _r_codes(y_values: np.ndarray, k: int, rows: np.ndarray | None) -> np.ndarray:
    """R's integer class codes 1..K as 0-based codes."""
    expected = f"hold integer class codes in 1..{k} for a {k}-column `p`"
    kind = y_values.dtype.kind
    if kind in "iuf":
        integral = np.isfinite(y_values) & (y_values == np.floor(y_values)) if kind == "f" else True
        bad = ~((y_values >= 1) & (y_values <= k) & integral)
    elif kind == "O" and all(_is_integer_label(v) for v in y_values):  # beyond int64
        bad = np.fromiter((not 1 <= v <= k for v in y_values), dtype=bool, count=y_values.size)
    elif kind == "b":
        raise InputError(f"`y` must {expected}; got booleans.")
    else:
        integral = np.fromiter((_is_integer_label(v) for v in y_values), dtype=bool,
                               count=y_values.size) if kind == "O" else np.zeros(1, dtype=bool)
        first = int(np.argmin(integral))  # the first value that is not an integer
        where = "" if first == 0 else f", at {_position_text(first, y_values.shape, rows)}"
        raise InputError(
            f"`y` must {expected}; got values of dtype {y_values.dtype} (first "
            f"{_fmt(y_values[first])}{where}). Pass classes= to give the label of each column."
        )
    if bad.any():
        msg = _bad_values_message("y", expected, bad, y_values, rows)
        if bool(np.any(y_values == 0)):
            msg += f" Codes are 1-based as in R; for 0-based labels pass classes=range({k})."
        raise InputError(msg)
    return y_values.astype(np.int64) - 1


def _multiclass_labels(
    y_values: np.ndarray,
    categories: pd.Index | None,
    cat_codes: np.ndarray | None,
    columns: pd.Index | None,
    k: int,
    classes: Sequence | None,
    rows: np.ndarray | None,
) -> tuple[np.ndarray, tuple]:
    """0-based class codes and the class labels.

    Precedence: ``classes=``; else the column names of a DataFrame ``p``
    (labels, and a Categorical's values, matched by name, never by position);
    else a Categorical's categories (the columns, in order); else R's codes 1..K.
    """
    if classes is not None:
        classes = _class_list(classes)
        if len(classes) != k:
            raise InputError(
                f"`classes` must give one label per column of `p` ({k}); got {len(classes)}."
            )
        return _labels_against(y_values, classes, rows), tuple(classes)
    if columns is not None:
        if not columns.is_unique:
            raise InputError(
                "The columns of `p` must be unique to identify the classes; got "
                f"{list(columns)!r}. Pass classes= to give the label of each column."
            )
        _check_not_r_codes_by_name(y_values, categories, cat_codes, columns, k)
        try:
            if categories is not None:
                codes = _categorical_against(y_values, categories, cat_codes, columns, rows)
            else:
                codes = _labels_against(y_values, columns, rows)
        except InputError as err:
            raise InputError(
                f"{err} Labels are matched to the column names of the DataFrame `p`; "
                "pass classes= to give the label of each column."
            ) from None
        return codes, tuple(columns)
    if categories is not None:
        if len(categories) != k:
            raise InputError(
                f"`y` is categorical with {len(categories)} categories, but `p` has {k} "
                "columns; they must be equal (the categories are the columns, in order)."
            )
        return cat_codes.astype(np.int64), tuple(categories)
    return _r_codes(y_values, k, rows), tuple(range(1, k + 1))


# --------------------------------------------------------------------------
# weights (docs/definitions.md, "Frequency weights")

#: Whole-number weights must total less than this where they are counts of a
#: repeated sample (``"uq"``): its size ``N = sum(weights)`` and ``N (N - 1) / 2``
#: are then exact in float64.
MAX_COUNT_TOTAL = 2.0**53

_WEIGHTS_WHAT = "a vector of nonnegative numbers, one per observation"


def _convert_weights(weights: Any, p: Any, n: int) -> np.ndarray:
    """``weights`` as a float64 vector of length ``n`` (values checked by
    :func:`_check_weight_values`); never the caller's memory written to."""
    w = _as_float_array(weights, "weights", _WEIGHTS_WHAT, ndims=(1,))
    if (
        isinstance(weights, pd.Series)
        and isinstance(p, (pd.Series, pd.DataFrame))
        and not p.index.equals(weights.index)
    ):
        raise InputError(
            "`weights` and `p` are pandas objects with different indexes; calibr pairs them "
            "by position, so pass aligned objects (e.g. columns of one DataFrame) or arrays."
        )
    if w.shape[0] != n:
        raise InputError(
            f"`weights` must have one value per observation ({n}); got {w.shape[0]}."
        )
    return w


def _check_weight_values(w: np.ndarray, counts_for: str | None) -> None:
    """Every weight the caller gave (before ``na_rm`` drops rows): finite,
    nonnegative, never missing; whole numbers when ``counts_for`` is set."""
    if not np.isfinite(w).all():
        missing = np.isnan(w)
        if missing.any():
            (positions,) = np.nonzero(missing)
            verb = "is" if positions.size == 1 else "are"
            raise InputError(
                f"`weights` must not contain missing values; "
                f"{_count_phrase(positions.size, 'value', 'values')} {verb} missing, the first "
                f"at position {int(positions[0])}. na_rm=True drops observations with a "
                "missing `p` or `y`, never a missing weight."
            )
        raise InputError(_bad_values_message("weights", "be finite", np.isinf(w), w))
    negative = w < 0
    if negative.any():
        raise InputError(_bad_values_message("weights", "be nonnegative", negative, w))
    if counts_for is not None:
        fractional = w != np.floor(w)
        if fractional.any():
            raise InputError(
                _bad_values_message(
                    "weights", f"be whole numbers (counts of repeated rows) for {counts_for}",
                    fractional, w,
                )
                + ' Real-valued weights are accepted by estimator = "biased", mmce(), ece() '
                "and mce()."
            )


def _check_weight_total(w: np.ndarray, counts_for: str | None, dropped: bool) -> None:
    """The total weight of the rows kept: positive and finite (and for counts,
    from 2 to below ``MAX_COUNT_TOTAL``)."""
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if not math.isfinite(total):
        raise InputError("`weights` must have a finite total; their sum overflows a float64.")
    if total == 0.0:
        kept = " (of the observations kept by na_rm=True)" if dropped else ""
        raise InputError(
            f"`weights` must have a positive total; all {w.size:,} weights{kept} are 0."
        )
    if counts_for is not None:
        if total < 2.0:
            raise InputError(
                f"`weights` must total at least 2 for {counts_for} (the size of the repeated "
                f"sample); got {_fmt(total)}."
            )
        if total >= MAX_COUNT_TOTAL:
            raise InputError(
                f"`weights` must total less than 2**53 for {counts_for} (the size of the "
                f"repeated sample, exact in a float64); got {_fmt(total)}."
            )


def check_kernel_weights(estimator: str, bandwidth: float | str) -> None:
    """Refuse the kernel options that ``weights`` cannot be combined with
    (``docs/definitions.md``, "Frequency weights"); call it only when weights are given."""
    if estimator == "ul":
        raise InputError(
            '`weights` cannot be used with estimator = "ul": its disjoint pairs (1, 2), '
            "(3, 4), ... depend on the order of the rows, which weights do not give; use "
            'estimator = "uq" or "biased".'
        )
    if bandwidth == "median":
        raise InputError(
            '`weights` cannot be used with bandwidth = "median"; pass a positive number as '
            "`bandwidth`, e.g. calibr.median_bandwidth() of the repeated rows "
            "(np.repeat(p, weights, axis=0) for whole-number weights)."
        )


# --------------------------------------------------------------------------
# the entry point


@dataclass(frozen=True)
class Converted:
    """``p`` and ``y`` read into numpy, their values not checked yet (:func:`convert`).

    :func:`finish` checks the values and gives the :class:`Prepared` arrays; a
    kernel that checks values in its own pass takes :meth:`direct` instead.
    """

    p: np.ndarray
    y: np.ndarray
    categories: pd.Index | None
    codes: np.ndarray | None
    columns: pd.Index | None
    classes: Sequence | None
    na_rm: bool
    weights: np.ndarray | None = None
    counts_for: str | None = None

    @property
    def binary(self) -> bool:
        return self.p.ndim == 1

    @property
    def k(self) -> int:
        return 1 if self.binary else int(self.p.shape[1])

    def direct(self) -> tuple[np.ndarray, np.ndarray, int] | None:
        """``(p, labels, offset)`` for a kernel that checks the values itself, or None.

        When this is not None, :func:`finish` would return ``p`` (C-contiguous)
        and ``labels`` unchanged (binary: 0/1 values of a bool, integer or float64
        dtype) or ``labels - offset`` (multiclass: R's codes 1..K, ``offset`` 1, or
        a Categorical's codes, ``offset`` 0), provided that the kernel's checks
        pass: every ``p`` in [0, 1], binary labels 0 or 1, matrix rows summing to 1
        within ``ROW_SUM_TOL``, ``labels - offset`` integers in 0..K-1. Every
        input those checks refuse (and any other kind of labels: ``classes=``,
        a DataFrame's column names, strings, objects) takes :func:`finish`, which
        gives the message, or drops rows under ``na_rm=True``. Weighted input
        (``weights``) always takes :func:`finish`.
        """
        if self.classes is not None or self.weights is not None:
            return None
        kind = self.y.dtype.kind
        if self.binary:
            if self.categories is not None or kind not in "biuf":
                return None
            return np.ascontiguousarray(self.p), np.ascontiguousarray(self.y), 0
        if self.columns is not None:
            return None
        if self.categories is not None:
            if len(self.categories) != self.k:
                return None
            return self.p, np.ascontiguousarray(self.codes), 0
        if kind not in "iuf":
            return None
        return self.p, np.ascontiguousarray(self.y), 1


def convert(
    p: Any, y: Any, *, classes: Sequence | None = None, na_rm: bool = False,
    weights: Any = None, counts_for: str | None = None,
) -> Converted:
    """The first half of :func:`prepare`: read ``p`` and ``y`` (and ``weights``)
    into numpy and check what does not need a pass over the values (types,
    shapes, lengths, indexes).

    Raises as :func:`prepare` for those; the values are checked by :func:`finish`.
    """
    na_rm = check_flag(na_rm, "na_rm")

    arr, columns = _convert_p(p)

    # y: keep categories (R factor), never modify the caller's object
    y_values, categories, codes, y_index = _convert_y(y, arr.ndim == 1)

    if isinstance(p, (pd.Series, pd.DataFrame)) and y_index is not None:
        if not p.index.equals(y_index):
            raise InputError(
                "`p` and `y` are pandas objects with different indexes; calibr pairs them by "
                "position, so pass aligned objects (e.g. columns of one DataFrame) or arrays."
            )

    n = arr.shape[0]
    if y_values.shape[0] != n:
        raise InputError(f"`p` and `y` must have the same length; got {n} and {y_values.shape[0]}.")
    if n == 0:
        raise InputError("`p` and `y` must not be empty; got 0 observations.")
    w = None if weights is None else _convert_weights(weights, p, n)
    return Converted(p=arr, y=y_values, categories=categories, codes=codes, columns=columns,
                     classes=classes, na_rm=na_rm, weights=w, counts_for=counts_for)


def prepare(
    p: Any, y: Any, *, classes: Sequence | None = None, na_rm: bool = False,
    weights: Any = None, counts_for: str | None = None,
) -> Prepared:
    """Validate and convert ``p`` and ``y`` (``docs/definitions.md``, section "Inputs").

    Parameters
    ----------
    p : array-like, pandas Series or DataFrame
        A vector of P(y = 1), or a matrix with one column per class.
    y : array-like, pandas Series or Categorical
        0/1 or booleans (vector ``p``); integer codes 1..K or a Categorical whose
        categories are the columns (matrix ``p``); labels, or a Categorical's
        values, equal to the column names (DataFrame ``p``); or labels listed in
        ``classes``. See :func:`_multiclass_labels` for the precedence and
        :func:`_check_not_r_codes_by_name` for the one ambiguity refused.
    classes : sequence, optional
        The label of each column of ``p`` (multiclass), or (negative, positive)
        for a vector ``p``.
    na_rm : bool, default False
        Drop rows with a missing value in ``p`` or ``y`` instead of raising
        (and their weights with them).
    weights : array-like, optional
        Frequency weights, one per row (``docs/definitions.md``, "Frequency
        weights"): finite and nonnegative, never missing, with a positive
        finite total over the rows kept.
    counts_for : str, optional
        When the weights must be counts, what needs them, for the messages
        (e.g. ``'estimator = "uq"'``): then they must be whole numbers whose
        total is at least 2 and at most 2**53 (the repeated sample's size,
        exact in float64).

    Returns
    -------
    Prepared

    Raises
    ------
    InputError
        For any bad value (a ``ValueError``).
    InputTypeError
        For an object calibr does not read (a ``TypeError``): a non-numeric
        ``p``, a generator, set, dict or string instead of a vector.
    """
    return finish(convert(p, y, classes=classes, na_rm=na_rm, weights=weights,
                          counts_for=counts_for))


def finish(conv: Converted) -> Prepared:
    """The second half of :func:`prepare`: check the values of converted input
    (missing values, the range of ``p``, labels, row sums) and build the
    canonical arrays."""
    arr, y_values, categories, codes = conv.p, conv.y, conv.categories, conv.codes
    classes, na_rm = conv.classes, conv.na_rm
    binary = conv.binary
    n = arr.shape[0]
    weights = conv.weights
    if weights is not None:  # never dropped: checked on every row the caller gave
        _check_weight_values(weights, conv.counts_for)

    # missing values
    kept = None  # positions of the rows kept by na_rm=True, for messages
    suspicious = _any_outside_unit(arr)  # NaN, inf or out of range: look closer
    p_missing = np.isnan(arr) if suspicious else None
    if p_missing is not None and not p_missing.any():
        p_missing = None
    if p_missing is not None and not binary:
        p_missing_rows = p_missing.any(axis=1)
    else:
        p_missing_rows = p_missing
    y_missing = _y_missing(y_values, codes)
    if y_missing is not None and not y_missing.any():
        y_missing = None
    if p_missing_rows is not None or y_missing is not None:
        if not na_rm:
            if p_missing is not None:
                raise InputError(_missing_message("p", p_missing, arr.shape))
            raise InputError(_missing_message("y", y_missing, y_values.shape))
        drop = np.zeros(n, dtype=bool)
        if p_missing_rows is not None:
            drop |= p_missing_rows
        if y_missing is not None:
            drop |= y_missing
        keep = ~drop
        kept = np.flatnonzero(keep)
        arr = arr[keep]
        y_values = y_values[keep]
        if codes is not None:
            codes = codes[keep]
        if weights is not None:
            weights = weights[keep]
        if arr.shape[0] == 0:
            raise InputError(
                f"`p` and `y` have no complete observations: na_rm=True dropped all {n}."
            )

    if suspicious and (p_missing is None or _any_outside_unit(arr)):
        _check_p_values(arr, kept)
    if y_values.dtype.kind == "O" and categories is None:
        y_values = _infer_object_labels(y_values)

    if binary:
        if categories is not None and classes is None:
            y_values = _native_labels(np.asarray(y_values))
        y_out = _binary_labels(y_values, classes, kept)
        if weights is not None:
            _check_weight_total(weights, conv.counts_for, kept is not None)
        return Prepared(p=arr, y=y_out, binary=True, classes=None, weights=weights)

    _check_row_sums(arr, kept)
    y_codes, labels = _multiclass_labels(
        y_values, categories, codes, conv.columns, arr.shape[1], classes, kept
    )
    if weights is not None:
        _check_weight_total(weights, conv.counts_for, kept is not None)
    return Prepared(p=arr, y=y_codes, binary=False, classes=labels, weights=weights)


def _missing_message(name: str, missing: np.ndarray, shape: tuple[int, ...]) -> str:
    flat = missing.ravel()
    (positions,) = np.nonzero(flat)
    first = int(positions[0])
    verb = "is" if positions.size == 1 else "are"
    count = _count_phrase(positions.size, "value", "values")
    return (
        f"`{name}` must not contain missing values; {count} "
        f"{verb} missing, the first at {_position_text(first, shape)}. "
        "Pass na_rm=True to drop incomplete observations."
    )
