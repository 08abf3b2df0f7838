"""The entry point of the input layer: :func:`prepare` turns a metric's ``p``,
``y`` (and ``weights``) into the canonical :class:`Prepared` arrays, in two
halves that a kernel checking values in its own pass can split:
:func:`convert` (types, shapes, lengths) and :func:`finish` (the values)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError, arg
from .labels import (
    binary_labels,
    convert_y,
    infer_object_labels,
    missing_labels,
    multiclass_labels,
    native_labels,
)
from .messages import missing_message
from .params import check_flag
from .probabilities import any_outside_unit, check_p_values, check_row_sums, convert_p
from .weights import check_weight_total, check_weight_values, convert_weights

__all__ = ["Converted", "Prepared", "convert", "finish", "prepare"]


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
    kept : ndarray or None
        The positions in the input of the rows kept by ``na_rm=True`` when it
        dropped any, else ``None`` (every row kept): what follows a row by its
        input position (the row keys of ``bootstrap(scheme="poisson")``).
    """

    p: np.ndarray
    y: np.ndarray
    binary: bool
    classes: tuple | None
    weights: np.ndarray | None = None
    kept: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    @property
    def k(self) -> int:
        return 1 if self.binary else int(self.p.shape[1])

    def scalar_view(self) -> tuple[np.ndarray, np.ndarray]:
        """``(x, c)``: one value and one 0/1 outcome per row, the form the scalar
        metrics read (ECCE, the scalar SKCE, the AUROC and the selective curve's
        multiclass input): a vector ``p`` and ``y`` as they are; a matrix, each
        row's top-label confidence and whether its top label (the first maximal
        column) is ``y`` (``calibr._kernels.top_label``)."""
        if self.binary:
            return self.p, self.y
        from .._kernels.top_label import top_label

        return top_label(self.p, self.y)


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

    arr, columns = convert_p(p)

    # y: keep categories (R factor), never modify the caller's object
    y_values, categories, codes, y_index = convert_y(y, arr.ndim == 1)

    if isinstance(p, (pd.Series, pd.DataFrame)) and y_index is not None:
        if not p.index.equals(y_index):
            raise InputError(
                f"{arg('p')} and {arg('y')} are pandas objects with different indexes; calibr "
                "pairs them by position, so pass aligned objects (e.g. columns of one DataFrame) "
                "or arrays.",
                param="y"
            )

    n = arr.shape[0]
    if y_values.shape[0] != n:
        raise InputError(f"{arg('p')} and {arg('y')} must have the same length; got {n} and "
                         f"{y_values.shape[0]}.", param="y")
    if n == 0:
        raise InputError(f"`p` and {arg('y')} must not be empty; got 0 observations.", param="p")
    w = None if weights is None else convert_weights(weights, p, n)
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
        ``classes``. See :func:`calibr._input.labels.multiclass_labels` for the
        precedence and for the one ambiguity refused.
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
        check_weight_values(weights, conv.counts_for)

    # missing values
    kept = None  # positions of the rows kept by na_rm=True, for messages
    suspicious = any_outside_unit(arr)  # NaN, inf or out of range: look closer
    p_missing = np.isnan(arr) if suspicious else None
    if p_missing is not None and not p_missing.any():
        p_missing = None
    if p_missing is not None and not binary:
        p_missing_rows = p_missing.any(axis=1)
    else:
        p_missing_rows = p_missing
    y_missing = missing_labels(y_values, codes)
    if y_missing is not None and not y_missing.any():
        y_missing = None
    if p_missing_rows is not None or y_missing is not None:
        if not na_rm:
            if p_missing is not None:
                raise InputError(missing_message("p", p_missing, arr.shape), param="p")
            raise InputError(missing_message("y", y_missing, y_values.shape), param="y")
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
                f"`p` and {arg('y')} have no complete observations: "
                f"{arg('na_rm', 'hint', True)} dropped all {n}.",
                param="p"
            )

    if suspicious and (p_missing is None or any_outside_unit(arr)):
        check_p_values(arr, kept)
    if y_values.dtype.kind == "O" and categories is None:
        y_values = infer_object_labels(y_values)

    if binary:
        if categories is not None and classes is None:
            y_values = native_labels(np.asarray(y_values))
        y_out = binary_labels(y_values, classes, kept)
        if weights is not None:
            check_weight_total(weights, conv.counts_for, kept is not None)
        return Prepared(p=arr, y=y_out, binary=True, classes=None, weights=weights, kept=kept)

    check_row_sums(arr, kept)
    y_codes, labels = multiclass_labels(
        y_values, categories, codes, conv.columns, arr.shape[1], classes, kept
    )
    if weights is not None:
        check_weight_total(weights, conv.counts_for, kept is not None)
    return Prepared(p=arr, y=y_codes, binary=False, classes=labels, weights=weights,
                    kept=kept)
