"""``p``: probabilities as a float64 vector (binary) or a C-contiguous float64
matrix with one column per class, each value in [0, 1] and each row summing to 1
(``docs/definitions.md``, section "Inputs")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._kernels import scans
from .arrays import as_float_array
from .errors import InputError
from .frames import eager
from .messages import bad_values_message, count_phrase, fmt

__all__ = [
    "ROUNDED_HINT",
    "ROUNDED_SUM_TOL",
    "ROW_SUM_TOL",
    "any_outside_unit",
    "check_p_values",
    "check_row_sums",
    "convert_p",
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


def any_outside_unit(x: np.ndarray) -> bool:
    """A fast scan: is any value NaN, infinite or outside [0, 1]?"""
    return scans.count_outside_unit(x.reshape(-1)) > 0


def convert_p(p: Any) -> tuple[np.ndarray, pd.Index | None]:
    """Return (float64 array, DataFrame columns or None)."""
    p = eager(p, "p")  # polars / Arrow: numpy or pandas (frames.py)
    columns = None
    if isinstance(p, pd.DataFrame):
        columns = p.columns
    arr = as_float_array(p, "p")
    if arr.ndim == 2:
        if arr.shape[1] < 2:
            raise InputError(
                "`p` must have at least two columns (one per class), or be a vector "
                f"for binary problems; got {arr.shape[1]} column."
                if arr.shape[1] == 1
                else f"`p` must have at least two columns (one per class); got {arr.shape[1]}.",
                param="p"
            )
        arr = np.ascontiguousarray(arr)
    return arr, columns


def check_p_values(arr: np.ndarray, rows: np.ndarray | None) -> None:
    """Raise for non-finite or out-of-range probabilities (missing values handled before)."""
    inf = np.isinf(arr)
    if inf.any():
        raise InputError(bad_values_message("p", "be finite", inf, arr, rows), param="p")
    raise InputError(bad_values_message("p", "lie in [0, 1]", (arr < 0) | (arr > 1), arr, rows),
                     param="p")


#: The fix suggested when every bad row sum is within ROUNDED_SUM_TOL of 1.
ROUNDED_HINT = "If the probabilities were rounded when saved, divide each row by its sum."


def check_row_sums(arr: np.ndarray, rows: np.ndarray | None) -> None:
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
            f"{count_phrase(bad_rows.size, 'row', 'rows')} {verb}, the first at row "
            f"{first if rows is None else int(rows[first])} (sum {fmt(sums[first])}, "
            f"{fmt(dist[first])} away from 1).{hint}",
            param="p", code="row_sums"
        )
