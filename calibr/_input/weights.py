"""``weights``: frequency weights, one per row (``docs/definitions.md``,
"Frequency weights"): finite and nonnegative, never missing, with a positive
finite total over the rows kept; whole numbers where they count repeated rows."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .arrays import as_float_array
from .errors import InputError, arg
from .frames import eager
from .messages import bad_values_message, count_phrase, fmt

__all__ = [
    "MAX_COUNT_TOTAL",
    "check_kernel_weights",
    "check_weight_total",
    "check_weight_values",
    "convert_weights",
]

#: Whole-number weights must total less than this where they are counts of a
#: repeated sample (``"uq"``): its size ``N = sum(weights)`` and ``N (N - 1) / 2``
#: are then exact in float64.
MAX_COUNT_TOTAL = 2.0**53

_WEIGHTS_WHAT = "a vector of nonnegative numbers, one per observation"


def convert_weights(weights: Any, p: Any, n: int) -> np.ndarray:
    """``weights`` as a float64 vector of length ``n`` (values checked by
    :func:`check_weight_values`); never the caller's memory written to."""
    weights = eager(weights, "weights")  # polars / Arrow: numpy or pandas (frames.py)
    w = as_float_array(weights, "weights", _WEIGHTS_WHAT, ndims=(1,))
    if (
        isinstance(weights, pd.Series)
        and isinstance(p, (pd.Series, pd.DataFrame))
        and not p.index.equals(weights.index)
    ):
        raise InputError(
            f"`weights` and {arg('p')} are pandas objects with different indexes; calibr pairs "
            "them by position, so pass aligned objects (e.g. columns of one DataFrame) or arrays.",
            param="weights"
        )
    if w.shape[0] != n:
        raise InputError(
            f"`weights` must have one value per observation ({n}); got {w.shape[0]}.",
            param="weights"
        )
    return w


def check_weight_values(w: np.ndarray, counts_for: str | None) -> None:
    """Every weight the caller gave (before ``na_rm`` drops rows): finite,
    nonnegative, never missing; whole numbers when ``counts_for`` is set."""
    if not np.isfinite(w).all():
        missing = np.isnan(w)
        if missing.any():
            (positions,) = np.nonzero(missing)
            verb = "is" if positions.size == 1 else "are"
            raise InputError(
                f"`weights` must not contain missing values; "
                f"{count_phrase(positions.size, 'value', 'values')} {verb} missing, the first "
                f"at position {int(positions[0])}. {arg('na_rm', 'hint', True)} drops "
                f"observations with a missing {arg('p')} or {arg('y')}, never a missing weight.",
                param="weights"
            )
        raise InputError(bad_values_message("weights", "be finite", np.isinf(w), w),
                         param="weights")
    negative = w < 0
    if negative.any():
        raise InputError(bad_values_message("weights", "be nonnegative", negative, w),
                         param="weights")
    if counts_for is not None:
        fractional = w != np.floor(w)
        if fractional.any():
            raise InputError(
                bad_values_message(
                    "weights", f"be whole numbers (counts of repeated rows) for {counts_for}",
                    fractional, w,
                )
                + ' Real-valued weights are accepted by estimator = "biased", mmce(), ece() '
                "and mce().",
                param="weights"
            )


def check_weight_total(w: np.ndarray, counts_for: str | None, dropped: bool) -> None:
    """The total weight of the rows kept: positive and finite (and for counts,
    from 2 to below ``MAX_COUNT_TOTAL``)."""
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if not math.isfinite(total):
        raise InputError("`weights` must have a finite total; their sum overflows a float64.",
                         param="weights")
    if total == 0.0:
        kept = f" (of the observations kept by {arg('na_rm', 'hint', True)})" if dropped else ""
        raise InputError(
            f"`weights` must have a positive total; all {w.size:,} weights{kept} are 0.",
            param="weights", code="zero_total"
        )
    if counts_for is not None:
        if total < 2.0:
            raise InputError(
                f"`weights` must total at least 2 for {counts_for} (the size of the repeated "
                f"sample); got {fmt(total)}.",
                param="weights"
            )
        if total >= MAX_COUNT_TOTAL:
            raise InputError(
                f"`weights` must total less than 2**53 for {counts_for} (the size of the "
                f"repeated sample, exact in a float64); got {fmt(total)}.",
                param="weights"
            )


def check_kernel_weights(estimator: str, bandwidth: float | str) -> None:
    """Refuse the kernel options that ``weights`` cannot be combined with
    (``docs/definitions.md``, "Frequency weights"); call it only when weights are given."""
    if estimator == "ul":
        raise InputError(
            '`weights` cannot be used with estimator = "ul": its disjoint pairs (1, 2), '
            "(3, 4), ... depend on the order of the rows, which weights do not give; use "
            'estimator = "uq" or "biased".',
            param="weights"
        )
    if bandwidth == "median":
        raise InputError(
            '`weights` cannot be used with bandwidth = "median"; pass a positive number as '
            "`bandwidth`, e.g. calibr.median_bandwidth() of the repeated rows "
            "(np.repeat(p, weights, axis=0) for whole-number weights).",
            param="weights"
        )
