"""The one input layer of calibr.

Every metric turns its arguments into canonical arrays here (spec section 4):

* ``p`` becomes a float64 vector (binary) or a C-contiguous float64 matrix with
  one column per class;
* ``y`` becomes exact 0/1 values (binary) or 0-based int64 class codes
  (multiclass), with the class labels kept for messages.

No metric validates its inputs in any other way. The caller's objects are never
modified: arrays are read, and copied only when a conversion or a row filter
(``na_rm=True``) needs new memory.

Every error names the argument, says what was expected and what was found, and
for bad values gives their count and the first (0-based) position, e.g.
"`p` must lie in [0, 1]; 3 values do not, the first at position 17 (1.2)."
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._kernels import scans

__all__ = [
    "InputError",
    "InputTypeError",
    "MAX_BINS",
    "Prepared",
    "ROW_SUM_TOL",
    "check_bandwidth",
    "check_bins",
    "check_choice",
    "check_flag",
    "prepare",
]

#: Rows of a probability matrix must sum to 1 within this absolute tolerance
#: (the R help pages: "rows summing to one within absolute tolerance 1e-6").
ROW_SUM_TOL = 1e-6


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
    """

    p: np.ndarray
    y: np.ndarray
    binary: bool
    classes: tuple | None

    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    @property
    def k(self) -> int:
        return 1 if self.binary else int(self.p.shape[1])


# --------------------------------------------------------------------------
# message helpers


def _fmt(value: Any) -> str:
    """Show a value in a message (floats with repr precision, strings quoted)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return repr(value)


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
    if len(shape) == 1:
        return f"position {flat_index if rows is None else int(rows[flat_index])}"
    row, col = divmod(flat_index, shape[1])
    return f"row {row if rows is None else int(rows[row])}, column {col}"


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (R's ``match.arg``, without
    partial matching), else raise.

    Examples
    --------
    >>> check_choice("confidence", "type", ("classwise", "confidence"))
    'confidence'
    """
    if isinstance(value, str) and value in choices:
        return value
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


def check_bins(bins: Any) -> int:
    """Return ``bins`` as an int if it is a single positive integer (at most ``MAX_BINS``).

    Integral floats (``10.0``) are accepted because R's ``bins = 10`` is a double;
    booleans, fractions, arrays and strings are not.
    """
    ok = False
    if isinstance(bins, (bool, np.bool_)):
        ok = False
    elif isinstance(bins, numbers.Integral):
        ok = int(bins) >= 1
    elif isinstance(bins, numbers.Real):
        b = float(bins)
        ok = math.isfinite(b) and b >= 1 and b == math.floor(b)
    if not ok:
        raise InputError(f"`bins` must be a single positive integer; got {_fmt(bins)}.")
    if bins > MAX_BINS:
        raise InputError(
            f"`bins` must be a single positive integer no larger than {MAX_BINS:,}; "
            f"got {_fmt(bins)}."
        )
    return int(bins)


def check_bandwidth(bandwidth: Any) -> float | str:
    """Return a positive finite bandwidth as float, or the string ``"median"``."""
    if isinstance(bandwidth, str):
        if bandwidth == "median":
            return "median"
    elif isinstance(bandwidth, numbers.Real) and not isinstance(bandwidth, (bool, np.bool_)):
        h = float(bandwidth)
        if math.isfinite(h) and h > 0:
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
# p


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


def _object_to_float(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array of real numbers and missing values (None, pd.NA, NaN) as float64.

    Anything else (strings, booleans, complex numbers, dates) is a TypeError:
    calibr never guesses a number from it.
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
    return np.array([np.nan if v is None or v is pd.NA else v for v in flat],
                    dtype=np.float64).reshape(arr.shape)


def _as_float_array(values: Any, name: str) -> np.ndarray:
    """float64 ndarray of real-valued ``values``; missing values (None, pd.NA) become NaN.

    Only real numbers are accepted: numpy or pandas integer and float dtypes
    (nullable ones too), or object arrays holding real numbers. Booleans,
    strings, complex numbers, categories and dates are a TypeError, never
    converted.
    """
    if isinstance(values, (pd.DataFrame, pd.Series)):
        dtypes = list(values.dtypes) if isinstance(values, pd.DataFrame) else [values.dtype]
        if all(pd.api.types.is_object_dtype(d) for d in dtypes):
            return _object_to_float(values.to_numpy(dtype=object), name)
        bad = [str(d) for d in dtypes if not _is_real_dtype(d)]
        if bad:
            what = "columns of dtype" if isinstance(values, pd.DataFrame) else "dtype"
            raise InputTypeError(
                f"`{name}` must be numeric (integer or float); got {what} "
                f"{', '.join(sorted(set(bad)))}."
            )
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    arr = np.asarray(values)
    if arr.dtype == np.float64:
        return arr
    if arr.dtype.kind in "iuf":
        return arr.astype(np.float64)
    if arr.dtype.kind == "O":
        return _object_to_float(arr, name)
    raise InputTypeError(f"`{name}` must be numeric (integer or float); got dtype {arr.dtype}.")


def _convert_p(p: Any) -> tuple[np.ndarray, pd.Index | None]:
    """Return (float64 array, DataFrame columns or None)."""
    columns = None
    if isinstance(p, pd.DataFrame):
        columns = p.columns
    arr = _as_float_array(p, "p")
    if arr.ndim == 0:
        raise InputError("`p` must be a vector or a matrix; got a scalar.")
    if arr.ndim > 2:
        raise InputError(f"`p` must be a vector or a matrix; got an array of shape {arr.shape}.")
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


def _check_row_sums(arr: np.ndarray, rows: np.ndarray | None) -> None:
    if scans.count_bad_row_sums(arr, ROW_SUM_TOL) == 0:
        return
    sums = arr.sum(axis=1)
    bad = np.abs(sums - 1.0) > ROW_SUM_TOL
    if bad.any():
        (bad_rows,) = np.nonzero(bad)
        first = int(bad_rows[0])
        verb = "does not" if bad_rows.size == 1 else "do not"
        raise InputError(
            f"`p` rows must sum to 1 (within {ROW_SUM_TOL:g}); "
            f"{_count_phrase(bad_rows.size, 'row', 'rows')} {verb}, the first at row "
            f"{first if rows is None else int(rows[first])} (sum {_fmt(sums[first])})."
        )


# --------------------------------------------------------------------------
# y


def _y_missing(y_values: np.ndarray, codes: np.ndarray | None) -> np.ndarray | None:
    """Boolean mask of missing labels, or None when none can be missing."""
    if codes is not None:
        return codes < 0
    kind = y_values.dtype.kind
    if kind in "biu":
        return None
    if kind == "f":
        return np.isnan(y_values)
    return np.asarray(pd.isna(y_values), dtype=bool)


def _infer_object_labels(y_values: np.ndarray) -> np.ndarray:
    """Give an object array of numbers or booleans (e.g. from a nullable pandas
    column) its natural numpy dtype; leave other labels (strings, mixed) alone."""
    inferred = pd.api.types.infer_dtype(y_values, skipna=False)
    if inferred == "boolean":
        return y_values.astype(bool)
    if inferred == "integer":
        return y_values.astype(np.int64)
    if inferred in ("floating", "mixed-integer-float"):
        return y_values.astype(np.float64)
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
    labels = list(classes)
    if not pd.Index(labels).is_unique:
        raise InputError(f"`classes` must be unique to identify the classes; got {labels!r}.")
    return labels


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


def _labels_against(
    y_values: np.ndarray, labels: Sequence, rows: np.ndarray | None
) -> np.ndarray:
    """Map labels to the 0-based position of the equal entry of ``labels`` (unique)."""
    codes = pd.Index(list(labels)).get_indexer(y_values)
    bad = codes < 0
    if bad.any():
        shown = ", ".join(_fmt(v) for v in list(labels)[:10])
        more = ", ..." if len(labels) > 10 else ""
        raise InputError(
            _bad_values_message(
                "y", f"be one of the class labels ({shown}{more})", bad, y_values, rows
            )
        )
    return codes.astype(np.int64)


def _multiclass_labels(
    y_values: np.ndarray,
    categories: pd.Index | None,
    cat_codes: np.ndarray | None,
    columns: pd.Index | None,
    k: int,
    classes: Sequence | None,
    rows: np.ndarray | None,
) -> tuple[np.ndarray, tuple]:
    if classes is not None:
        classes = _class_list(classes)
        if len(classes) != k:
            raise InputError(
                f"`classes` must give one label per column of `p` ({k}); got {len(classes)}."
            )
        return _labels_against(y_values, classes, rows), tuple(classes)
    if columns is not None and not columns.is_unique:
        raise InputError(
            "The columns of `p` must be unique to identify the classes; got "
            f"{list(columns)!r}. Pass classes= to give the label of each column."
        )
    if categories is not None:
        if columns is not None and set(categories) == set(columns):
            return _labels_against(y_values, columns, rows), tuple(columns)
        if len(categories) != k:
            raise InputError(
                f"`y` is categorical with {len(categories)} categories, but `p` has {k} "
                "columns; they must be equal (the categories are the columns, in order)."
            )
        return cat_codes.astype(np.int64), tuple(categories)
    if columns is not None:
        try:
            return _labels_against(y_values, columns, rows), tuple(columns)
        except InputError as err:
            raise InputError(
                f"{err} Labels are matched to the column names of the DataFrame `p`; "
                "pass classes= to give the label of each column."
            ) from None
    # R-style integer codes 1..K
    kind = y_values.dtype.kind
    if kind in "iu" or (kind == "f"):
        integral = np.isfinite(y_values) & (y_values == np.floor(y_values)) if kind == "f" else True
        bad = ~((y_values >= 1) & (y_values <= k) & integral)
        if bad.any():
            msg = _bad_values_message(
                "y", f"hold integer class codes in 1..{k} for a {k}-column `p`", bad, y_values,
                rows,
            )
            if (y_values == 0).any():
                msg += (
                    f" Codes are 1-based as in R; for 0-based labels pass classes=range({k})."
                )
            raise InputError(msg)
        return y_values.astype(np.int64) - 1, tuple(range(1, k + 1))
    if kind == "b":
        raise InputError(
            f"`y` must hold integer class codes in 1..{k} for a {k}-column `p`; got booleans."
        )
    raise InputError(
        f"`y` must hold integer class codes in 1..{k} for a {k}-column `p`; got values of "
        f"dtype {y_values.dtype} (first {_fmt(y_values[0])}). Pass classes= to give the "
        "label of each column."
    )


# --------------------------------------------------------------------------
# the entry point


def prepare(
    p: Any, y: Any, *, classes: Sequence | None = None, na_rm: bool = False
) -> Prepared:
    """Validate and convert ``p`` and ``y`` (spec section 4).

    Parameters
    ----------
    p : array-like, pandas Series or DataFrame
        A vector of P(y = 1), or a matrix with one column per class.
    y : array-like, pandas Series or Categorical
        0/1 or booleans (vector ``p``); integer codes 1..K, a Categorical whose
        categories are the columns, labels equal to the columns of a DataFrame
        ``p``, or labels listed in ``classes`` (matrix ``p``).
    classes : sequence, optional
        The label of each column of ``p`` (multiclass), or (negative, positive)
        for a vector ``p``.
    na_rm : bool, default False
        Drop rows with a missing value in ``p`` or ``y`` instead of raising.

    Returns
    -------
    Prepared

    Raises
    ------
    InputError
        For any bad value (a ``ValueError``).
    TypeError
        For a non-numeric ``p``.
    """
    na_rm = check_flag(na_rm, "na_rm")

    arr, columns = _convert_p(p)
    binary = arr.ndim == 1

    # y: keep categories (R factor), never modify the caller's object
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
        y_values = y.to_numpy()
    else:
        y_values = np.asarray(y)
        if y_values.dtype.kind in "US" and not isinstance(y, np.ndarray):
            # numpy turns [0, 1, "1"] into strings: keep the caller's values instead
            as_object = np.empty(len(y_values), dtype=object)
            as_object[:] = list(y)
            if not all(isinstance(v, str) for v in as_object):
                y_values = as_object
    if y_values.ndim != 1:
        raise InputError(f"`y` must be a vector of labels; got an array of shape {y_values.shape}.")

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
            y_values = np.asarray(y_values)
        y_out = _binary_labels(y_values, classes, kept)
        return Prepared(p=arr, y=y_out, binary=True, classes=None)

    _check_row_sums(arr, kept)
    y_codes, labels = _multiclass_labels(
        y_values, categories, codes, columns, arr.shape[1], classes, kept
    )
    return Prepared(p=arr, y=y_codes, binary=False, classes=labels)


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
