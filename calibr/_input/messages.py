"""The pieces of calibr's error messages, one style everywhere
(``docs/definitions.md``, section "Inputs"): a value shown in a message, a count
in words, and the position of the first bad value in the caller's data, e.g.
"`p` must lie in [0, 1]; 3 values do not, the first at position 17 (1.2)."
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .errors import arg

__all__ = [
    "bad_values_message",
    "count_phrase",
    "fmt",
    "missing_message",
    "position_text",
]

#: Longest shown text of one value in a message; longer reprs are cut.
_MAX_SHOWN = 80


def fmt(value: Any) -> str:
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


def count_phrase(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def bad_values_message(
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
        f"`{name}` must {expected}; {count_phrase(positions.size, 'value', 'values')} {verb}, "
        f"the first at {position_text(first, shown.shape, rows)} ({fmt(shown.ravel()[first])})."
    )


def position_text(
    flat_index: int, shape: tuple[int, ...], rows: np.ndarray | None = None
) -> str:
    """0-based position (vector) or row and column (matrix) in the caller's data."""
    if len(shape) <= 1:
        return f"position {flat_index if rows is None else int(rows[flat_index])}"
    if len(shape) > 2:
        return f"index {tuple(int(i) for i in np.unravel_index(flat_index, shape))}"
    row, col = divmod(flat_index, shape[1])
    return f"row {row if rows is None else int(rows[row])}, column {col}"


def missing_message(name: str, missing: np.ndarray, shape: tuple[int, ...]) -> str:
    flat = missing.ravel()
    (positions,) = np.nonzero(flat)
    first = int(positions[0])
    verb = "is" if positions.size == 1 else "are"
    count = count_phrase(positions.size, "value", "values")
    return (
        f"`{name}` must not contain missing values; {count} "
        f"{verb} missing, the first at {position_text(first, shape)}. "
        f"Pass {arg('na_rm', 'hint', True)} to drop incomplete observations."
    )
