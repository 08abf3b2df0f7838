"""The columns of the input: which hold the probabilities, labels and groups,
the row sums and ``--renormalize``, and the validation of every row at once, so
that a message names the data row of the file."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._input import ROUNDED_HINT, ROW_SUM_TOL, InputError, InputTypeError, prepare
from .._input.groups import Columns, classes_from_names, resolve_columns
from ._args import RENORMALIZE_TOL, _sep
from ._errors import CLIError, _cli_message
from ._io import _Source

#: Column names listed in a "no column" message before "...".
_COLUMNS_SHOWN = 10


def _column_list(frame: pd.DataFrame) -> str:
    cols = [repr(c) for c in frame.columns]
    if len(cols) > _COLUMNS_SHOWN:
        return f"{', '.join(cols[:_COLUMNS_SHOWN])}, ... ({len(cols)} in all)"
    return ", ".join(cols) if cols else "none"


def _separator_hint(frame: pd.DataFrame, sep: str | None) -> str:
    """A hint when a CSV file was read as one column whose name holds another separator."""
    if len(frame.columns) != 1 or not isinstance(frame.columns[0], str):
        return ""
    name = frame.columns[0]
    for char, shown in ((";", "';'"), ("\t", "tab"), ("|", "'|'")):
        if char in name and char != (sep or ","):
            return (
                f" The file seems to be {shown}-separated, but calibr read it as "
                f"{'comma' if sep is None else repr(sep)}-separated CSV: pass --sep {shown}."
            )
    return ""


def _file_hint(name: Any, src: _Source) -> str:
    """A hint when FILE is missing and a missing column has the name of a file or
    directory: a list separated by spaces took it (docs/cli.md, "Column lists")."""
    if src.tag is None or not isinstance(name, str) or not os.path.exists(name):
        return ""
    kind = "directory" if os.path.isdir(name) else "file"
    return (f" {name!r} is also a {kind}: if it is FILE, put it before the options or after "
            "--.")


def _no_column(option: str, name: Any, src: _Source, sep: str | None) -> CLIError:
    return CLIError(
        f"{option}: no column {name!r} in {src.label}; its columns are "
        f"{_column_list(src.frame)}.{_separator_hint(src.frame, sep)}{_file_hint(name, src)}"
    )


def _columns(src: _Source, args) -> tuple[Columns, str]:
    """The resolved columns and the words that name the probabilities in messages."""
    frame, ca = src.frame, src.colargs
    sep = _sep(args.sep)
    y = ca["y"]
    if y not in frame.columns:
        raise _no_column("--label", y, src, sep)
    p = ca["p"]
    if p is not None:
        for col in p:
            if col not in frame.columns:
                raise _no_column("--prob", col, src, sep)
        if len(p) == 1:
            p = p[0]
        p_word = "--prob"
    else:
        prefix = ca["p_prefix"]
        if not any(isinstance(c, str) and c.startswith(prefix) for c in frame.columns):
            raise CLIError(
                f"--prob-prefix: no column of {src.label} starts with {prefix!r}; its columns "
                f"are {_column_list(frame)}.{_separator_hint(frame, sep)}"
            )
        p_word = f"--prob-prefix {prefix!r}"
    for col in ca["by"] or []:
        if col not in frame.columns:
            raise _no_column("--by", col, src, sep)
    if args.weights is not None and args.weights not in frame.columns:
        raise _no_column("--weights", args.weights, src, sep)
    classes = None
    if args.classes is not None:
        labels = [s.strip() for s in args.classes.split(",")]
        try:
            classes = classes_from_names(labels, frame[y], "--classes")
        except InputError:
            raise CLIError(
                f"--classes: the labels in {y!r} are numbers, so the classes must be integers; "
                f"got {args.classes!r}."
            ) from None
        if len(set(labels)) != len(labels):
            raise CLIError(f"--classes must not repeat a label; got {args.classes!r}.")
    try:
        cols = resolve_columns(frame, p, y, ca["p_prefix"], classes)
    except (InputError, InputTypeError) as err:
        raise CLIError(_cli_message(err, p_word)) from None
    return cols, p_word


def _data_rows(err: InputError | InputTypeError, cols: Columns, p_word: str) -> str:
    """The message of an error about the whole frame in the words of the command
    line, its positions as data rows of the file (1-based)."""
    names = cols.p if isinstance(cols.p, list) else None

    def cell(m: re.Match) -> str:
        row, col = int(m.group(1)), int(m.group(2))
        where = repr(names[col]) if names is not None and col < len(names) else str(col)
        return f"at data row {row + 1}, column {where}"

    def rows(text: str) -> str:
        text = re.sub(r"\bat row (\d+), column (\d+)", cell, text)
        return re.sub(r"\bat (?:position|row) (\d+)",
                      lambda m: f"at data row {int(m.group(1)) + 1}", text)

    msg = _cli_message(err, p_word, text=rows)
    text = "".join(rows(part) for part in err.parts if isinstance(part, str))
    if re.search(r"\b(?:position|row) \d", text.replace("data row", "")):
        msg += " (positions count the data rows from 0)"
    return msg


def _check_key_names(by: list | None, outputs: Sequence[str], what: str) -> None:
    """Grouping columns must not have the name of a column the report adds."""
    for col in by or []:
        if col in outputs:
            raise CLIError(
                f"--by: the column {col!r} has the name of {what}; rename it in the data."
            )


# --------------------------------------------------------------------------
# probabilities: row sums, --renormalize, validation of the whole file


def _is_real(dtype: Any) -> bool:
    return (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            and not pd.api.types.is_complex_dtype(dtype))


def _prob_matrix(frame: pd.DataFrame, cols: Columns) -> tuple[np.ndarray, np.ndarray] | None:
    """The probability matrix (C order, as calibr checks it) and the rows that can be
    checked (finite values in [0, 1]); None when a column is not numeric (calibr's
    validation then says which)."""
    sub = frame[cols.p]
    if not all(_is_real(d) for d in sub.dtypes):
        return None
    arr = np.ascontiguousarray(sub.to_numpy(dtype=np.float64, na_value=np.nan))
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(arr).all(axis=1) & ((arr >= 0) & (arr <= 1)).all(axis=1)
    return arr, ok


def _renormalize(frame: pd.DataFrame, cols: Columns) -> pd.DataFrame:
    """A copy of ``frame`` whose probability rows are divided by their sums (--renormalize)."""
    if not isinstance(cols.p, list):
        raise CLIError(
            "--renormalize needs several probability columns (--prob A B ... or "
            "--prob-prefix); a single --prob column has no row sums."
        )
    got = _prob_matrix(frame, cols)
    if got is None:
        return frame  # not numbers: calibr's validation says where
    arr, ok = got
    sums = arr.sum(axis=1)
    bad = ok & ~(np.abs(sums - 1.0) <= RENORMALIZE_TOL)
    if bad.any():
        (rows,) = np.nonzero(bad)
        first = int(rows[0])
        verb = "does not" if rows.size == 1 else "do not"
        raise CLIError(
            f"--renormalize divides each row by its sum only if every row sums to 1 within "
            f"{RENORMALIZE_TOL:g} (rounding); {rows.size} row{'s' if rows.size != 1 else ''} "
            f"{verb}, the first at data row {first + 1} (sum {float(sums[first])!r})."
        )
    fixed = arr.copy()
    fixed[ok] /= sums[ok, None]  # rows with a missing or bad value are left to the checks
    out = frame.copy(deep=False)
    out[cols.p] = fixed
    return out


def _check_row_sums(frame: pd.DataFrame, cols: Columns, p_word: str) -> None:
    """R's rule (rows sum to 1 within 1e-6), with a message for the command line."""
    if not isinstance(cols.p, list):
        return
    got = _prob_matrix(frame, cols)
    if got is None:
        return
    arr, ok = got
    sums = arr.sum(axis=1)
    bad = ok & (np.abs(sums - 1.0) > ROW_SUM_TOL)
    if not bad.any():
        return
    (rows,) = np.nonzero(bad)
    first = int(rows[0])
    s = float(sums[first])
    verb = "does not" if rows.size == 1 else "do not"
    raise CLIError(
        f"the {p_word} columns must sum to 1 in each row (within {ROW_SUM_TOL:g}); "
        f"{rows.size} row{'s' if rows.size != 1 else ''} {verb}, the first at data row "
        f"{first + 1}: its sum {s!r} is {abs(s - 1.0)!r} away from 1. If the probabilities "
        "were rounded (e.g. saved with 6 decimals), pass --renormalize to divide each row "
        "by its sum."
    )


def _check_numbers(frame: pd.DataFrame, cols: Columns, p_word: str) -> None:
    """Text in a probability column (e.g. "unknown", or a decimal comma): the first cell
    that is not a number, by data row and column."""
    names = cols.p if isinstance(cols.p, list) else [cols.p]
    found = []  # (row, column, value, count)
    for name in names:
        col = frame[name]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            continue
        bad = (pd.to_numeric(col, errors="coerce").isna() & col.notna()).to_numpy()
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            found.append((first, name, col.iloc[first], int(bad.sum())))
    if not found:
        return
    row, name, value, _ = min(found, key=lambda f: (f[0], names.index(f[1])))
    count = sum(f[3] for f in found)
    where = f", column {name!r}" if len(names) > 1 else ""
    hint = ""
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d*,\d+\s*", value):
        hint = " (a decimal comma? calibr reads numbers with a decimal point)"
    raise CLIError(
        f"{p_word} must hold numbers; {count} value{'s' if count != 1 else ''} "
        f"{'are' if count != 1 else 'is'} not, the first at data row {row + 1}{where} "
        f"({value!r}){hint}."
    )


def _validate(frame: pd.DataFrame, cols: Columns, na_rm: bool, p_word: str,
              weights: str | None = None) -> None:
    """Validate every row at once (and the --weights column), so that a message gives
    the data row in the file (the metrics, per group, would count positions within
    the group)."""
    _check_numbers(frame, cols, p_word)
    try:
        prepare(frame[cols.p], frame[cols.y], classes=cols.classes, na_rm=na_rm,
                weights=None if weights is None else frame[weights])
    except (InputError, InputTypeError) as err:
        msg = _data_rows(err, cols, p_word)

        if err.code == "row_sums":
            # the library's own hint names Python's fix; the command's is an option
            msg = msg.replace(" " + ROUNDED_HINT, "")
            msg += (" If the probabilities were rounded (e.g. saved with 6 decimals), pass "
                    "--renormalize to divide each row by its sum.")
        raise CLIError(msg) from None
