"""``y``: labels as exact 0/1 values (binary) or 0-based int64 class codes
(multiclass), with the label of each class kept for messages
(``docs/definitions.md``, section "Inputs").

For a matrix ``p`` the labels are resolved by :func:`multiclass_labels`, with
this precedence: ``classes=``; else the column names of a DataFrame ``p``
(matched by name, never by position); else a Categorical's categories (the
columns, in order); else R's integer codes 1..K.
"""

from __future__ import annotations

import decimal
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._kernels import scans
from .arrays import as_array, refuse_non_array
from .errors import InputError, InputTypeError, arg, extended
from .frames import eager
from .messages import bad_values_message, count_phrase, fmt, position_text

__all__ = [
    "binary_labels",
    "class_list",
    "convert_y",
    "infer_object_labels",
    "multiclass_labels",
    "native_labels",
    "missing_labels",
]


def _all_binary(y: np.ndarray) -> bool:
    """A fast scan: is every label 0 or 1?"""
    return scans.count_not_binary(y) == 0


def convert_y(y: Any, binary: bool):
    """``(values, categories, codes, index)`` of the labels: a 1-d ndarray of
    native numbers (float64 for any float) or objects, and a Categorical's
    categories and codes (else None), and a Series' index (else None)."""
    y = eager(y, "y")  # polars / Arrow: numpy or pandas (frames.py)
    refuse_non_array(y, "y", "a vector of labels")
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
                f"({type(err).__name__}: {err}).",
                param="y"
            ) from None
    else:
        y_values = as_array(y, "y", "a vector of labels")
        if y_values.dtype.kind in "US" and not isinstance(y, np.ndarray) and y_values.ndim == 1:
            # numpy turns [0, 1, "1"] into strings: keep the caller's values instead
            as_object = np.empty(len(y_values), dtype=object)
            as_object[:] = list(y)
            if not all(isinstance(v, str) for v in as_object):
                y_values = as_object
    if y_values.ndim != 1:
        if y_values.ndim == 0:
            raise InputError(
                f"`y` must be a vector of labels; got a scalar ({fmt(y_values[()])}).",
                param="y"
            )
        raise InputError(f"`y` must be a vector of labels; got an array of shape {y_values.shape}.",
                         param="y")
    return native_labels(y_values), categories, codes, y_index


def native_labels(y: np.ndarray) -> np.ndarray:
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
                    bad_values_message("y", "hold labels that a float64 holds exactly", lost, y),
                    param="y"
                )
        y = as64
    return y


def missing_labels(y_values: np.ndarray, codes: np.ndarray | None) -> np.ndarray | None:
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


def infer_object_labels(y_values: np.ndarray) -> np.ndarray:
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


def class_list(classes: Any) -> list:
    """``classes=`` as a list: an ordered sequence of distinct labels.

    Sets and strings are refused: a set has no column order (the result would
    depend on hashing) and a string is one label, not a sequence of them.
    """
    ordered = isinstance(classes, (Sequence, np.ndarray, pd.Index, pd.Series))
    if not ordered or isinstance(classes, (str, bytes)):
        raise InputError(
            "`classes` must be an ordered sequence of labels (a list, tuple, range, array "
            f"or pandas Index), one per column of {arg('p')}; got a {type(classes).__name__}.",
            param="classes"
        )
    if isinstance(classes, np.ndarray) and classes.ndim != 1:
        raise InputError(
            f"`classes` must be a vector of labels; got an array of shape {classes.shape}.",
            param="classes"
        )
    labels = list(classes)
    unhashable = [v for v in labels if not _hashable(v)]
    if unhashable:
        raise InputTypeError(
            f"`classes` must hold labels that can be compared (hashable values); got "
            f"{fmt(unhashable[0])} of type {type(unhashable[0]).__name__}.",
            param="classes"
        )
    if not pd.Index(labels, tupleize_cols=False).is_unique:
        raise InputError(f"`classes` must be unique to identify the classes; got {labels!r}.",
                         param="classes")
    return labels


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def binary_labels(
    y_values: np.ndarray, classes: Sequence | None, rows: np.ndarray | None
) -> np.ndarray:
    if classes is not None:
        classes = class_list(classes)
        if len(classes) != 2:
            raise InputError(
                "`classes` must name the two labels (negative, positive) for "
                f"{arg('p', 'vector')}; got {len(classes)}.",

                param="classes"
            )
        return _labels_against(y_values, classes, rows)
    kind = y_values.dtype.kind
    if kind == "b":
        return y_values
    if kind in "iuf":
        if not _all_binary(y_values):
            raise InputError(
                bad_values_message(
                    "y", f"be 0/1 or boolean for {arg('p', 'vector')}",
                    (y_values != 0) & (y_values != 1), y_values, rows,
                ),
                param="y"
            )
        return y_values
    # object / strings: accept Python bools and numbers (Decimals too, as every
    # engine reads a Decimal column) that are exactly 0 or 1
    if kind == "O":
        ok = np.fromiter(
            (isinstance(v, (bool, np.bool_, numbers.Real, decimal.Decimal)) and v in (0, 1)
             for v in y_values),
            dtype=bool, count=y_values.size,
        )
        if ok.all():
            return y_values.astype(np.float64)
    else:
        ok = np.zeros(y_values.size, dtype=bool)
    raise InputError(
        bad_values_message("y", f"be 0/1 or boolean for {arg('p', 'vector')}", ~ok, y_values,
                           rows)
        + f" Pass {arg('classes', 'hint', '(negative, positive)')} to name other labels.",
        param="y"
    )


def _labels_text(labels: Sequence) -> str:
    shown = ", ".join(fmt(v) for v in list(labels)[:10])
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
            f"{count_phrase(bad.size, 'value', 'values')} {'is' if bad.size == 1 else 'are'} "
            f"not, the first at {position_text(first, y_values.shape, rows)} "
            f"({fmt(y_values[first])} of type {type(y_values[first]).__name__}).",
            param="y"
        ) from None
    bad = codes < 0
    if bad.any():
        raise InputError(
            bad_values_message(
                "y", f"be one of the class labels ({_labels_text(labels)})", bad, y_values, rows
            ),
            param="y"
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
            bad_values_message(
                "y", f"be one of the class labels ({_labels_text(columns)})", bad, y_values, rows
            ),
            param="y"
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
        f"`y` is ambiguous for a DataFrame {arg('p')} whose columns are named 0..{k - 1}: its "
        f"labels are integers with no 0, so they may be 0-based labels matched to these column "
        f"names (label 1 is column 1) or R's 1-based codes 1..{k} (label 1 is column 0). Pass "
        f"{arg('classes', 'hint', f'range({k})')} for 0-based labels matched to these columns, "
        f"or {arg('classes', 'hint', f'range(1, {k + 1})')} for R's 1-based codes.",
        param="y"
    )


def _r_codes(y_values: np.ndarray, k: int, rows: np.ndarray | None) -> np.ndarray:
    """R's integer class codes 1..K as 0-based codes."""
    expected = f"hold integer class codes in 1..{k} for {arg('p', 'columns', k)}"
    kind = y_values.dtype.kind
    if kind in "iuf":
        integral = np.isfinite(y_values) & (y_values == np.floor(y_values)) if kind == "f" else True
        bad = ~((y_values >= 1) & (y_values <= k) & integral)
    elif kind == "O" and all(_is_integer_label(v) for v in y_values):  # beyond int64
        bad = np.fromiter((not 1 <= v <= k for v in y_values), dtype=bool, count=y_values.size)
    elif kind == "b":
        raise InputError(f"`y` must {expected}; got booleans.", param="y")
    else:
        integral = np.fromiter((_is_integer_label(v) for v in y_values), dtype=bool,
                               count=y_values.size) if kind == "O" else np.zeros(1, dtype=bool)
        first = int(np.argmin(integral))  # the first value that is not an integer
        where = "" if first == 0 else f", at {position_text(first, y_values.shape, rows)}"
        raise InputError(
            f"`y` must {expected}; got values of dtype {y_values.dtype} (first "
            f"{fmt(y_values[first])}{where}). Pass {arg('classes', 'hint')} to give the label of "
            "each column.",
            param="y"
        )
    if bad.any():
        msg = bad_values_message("y", expected, bad, y_values, rows)
        if bool(np.any(y_values == 0)):
            msg += (" Codes are 1-based as in R; for 0-based labels pass "
                    f"{arg('classes', 'hint', f'range({k})')}.")
        raise InputError(msg, param="y")
    return y_values.astype(np.int64) - 1


def multiclass_labels(
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
        classes = class_list(classes)
        if len(classes) != k:
            raise InputError(
                f"`classes` must give one label per column of {arg('p')} ({k}); got "
                f"{len(classes)}.",
                param="classes"
            )
        return _labels_against(y_values, classes, rows), tuple(classes)
    if columns is not None:
        if not columns.is_unique:
            raise InputError(
                f"The columns of {arg('p')} must be unique to identify the classes; got "
                f"{list(columns)!r}. Pass {arg('classes', 'hint')} to give the label of each "
                "column.",
                param="p"
            )
        _check_not_r_codes_by_name(y_values, categories, cat_codes, columns, k)
        try:
            if categories is not None:
                codes = _categorical_against(y_values, categories, cat_codes, columns, rows)
            else:
                codes = _labels_against(y_values, columns, rows)
        except InputError as err:
            raise extended(
                err, f" Labels are matched to {arg('p', 'frame')}; pass "
                f"{arg('classes', 'hint')} to give the label of each column."
            ) from None
        return codes, tuple(columns)
    if categories is not None:
        if len(categories) != k:
            raise InputError(
                f"`y` is categorical with {len(categories)} categories, but {arg('p')} has {k} "
                "columns; they must be equal (the categories are the columns, in order).",
                param="y"
            )
        return cat_codes.astype(np.int64), tuple(categories)
    return _r_codes(y_values, k, rows), tuple(range(1, k + 1))
