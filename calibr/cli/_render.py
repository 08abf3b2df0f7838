"""The output: the table with its header lines, marks and footnotes, CSV and JSON."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._io import _Source


def _json_value(v: Any) -> Any:
    """A JSON value: numbers and strings as they are, missing values as null, dates,
    times and durations as ISO 8601 strings."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v) if not np.isnat(v) else None
    elif isinstance(v, np.timedelta64):
        v = pd.Timedelta(v) if not np.isnat(v) else None
    elif isinstance(v, np.generic):
        v = v.item()
    if v is None:
        return None
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, pd.Period):
        # ISO 8601 time interval: start/end (the end is the next period's start)
        return f"{v.start_time.isoformat()}/{(v + 1).start_time.isoformat()}"
    if isinstance(v, (pd.Timestamp, dt.datetime, dt.date, dt.time, pd.Timedelta)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return pd.Timedelta(v).isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="backslashreplace")
    return str(v)


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    cols = [str(c) for c in df.columns]
    return [
        {k: _json_value(v) for k, v in zip(cols, row, strict=True)}
        for row in df.itertuples(index=False, name=None)
    ]

_FORM_WORDS = {
    "binary": "binary = one probability column",
    "classwise": "classwise = one-vs-rest per class (ece: the mean over the classes, "
                 "mce: the largest gap of any class)",
    "confidence": "confidence = the top-label probability against whether the top label "
                  "is right",
    "top-label": "top-label = the top-label probability against whether the top label is "
                 "right, in each predicted class's own bins (Gupta & Ramdas; ece: the "
                 "share-weighted gaps of every (class, bin) cell, mce: the largest gap)",
}


def _header(sources: list[_Source], bins: int | None, forms: list[str], what: str) -> list[str]:
    bundled = [s.tag for s in sources if s.tag is not None]
    source = (f"bundled example data {', '.join(bundled)}" if bundled
              else ", ".join(s.label for s in sources))
    lines = [f"calibr {what} of {source}"]
    if bins is not None:
        lines.append(f"bins: {bins} equal-width bins on [0, 1]")
    if forms:
        lines.append("form: " + "; ".join(_FORM_WORDS[f] for f in dict.fromkeys(forms)))
    return lines


_TEST_WORDS = {
    # the statistic n/(n-1) SKCE_uq - SKCE_b (docs/calibration_tests.md) is often
    # negative, also for a badly miscalibrated group: its sign says nothing on its own
    "skce": "asymptotic SKCE test, {n} bootstrap resamples (statistic n/(n-1) SKCE_uq - "
            "SKCE_b, often negative, also when miscalibrated: read its p-value, not its "
            "sign)",
    "skce_block": "asymptotic block SKCE test (z test, no resampling)",
    "consistency": "consistency resampling of {metric}, {n} resamples",
    "spiegelhalter": "Spiegelhalter's z test",
    "hosmer_lemeshow": "Hosmer-Lemeshow test",
    "ks": "cumulative calibration test, Kolmogorov-Smirnov (sigma-scaled ECCE, analytic)",
    "kuiper": "cumulative calibration test, Kuiper (sigma-scaled ECCE range, analytic)",
}


def _tests_header(tests: list, seed: int, several: bool) -> list[str]:
    """The header lines of --test (``[(name, spec, n_resamples)]``): each test, how it
    was run, and the seed."""
    from .._inference.calibration_tests import calibration_test
    from .._input import defaults

    metric = defaults(calibration_test)["metric"]  # of consistency resampling
    words = []
    for name, spec, n in tests:
        text = _TEST_WORDS[spec.method].format(n=n, metric=spec.options.get("metric", metric))
        words.append(f"{name} = {text}")
    from .._inference.calibration_tests import MIN_N

    where = "of each data set " if several else ""
    least = ", ".join(f"{name} {MIN_N[spec.method]}" for name, spec, _ in tests)
    return [
        "tests: " + "; ".join(words),
        f"seed: {seed} (group g {where}draws from numpy.random.SeedSequence({seed})"
        ".spawn(groups)[g]; null hypothesis: calibrated)",
        f"small_n: True where a group has fewer rows than its test holds its level from "
        f"({least}; docs/calibration_tests.md, \"Small samples\"): its p-value rejects a "
        "calibrated model too often",
    ]


# --------------------------------------------------------------------------
# numbers in the table output (docs/cli.md, "Numbers in the table"); CSV and JSON
# keep every digit

#: Significant digits of the numbers in the table output.
TABLE_DIGITS = 4
#: An analytic p-value below this (the machine epsilon) is shown as "< 2.2e-16", as R
#: prints a test (format.pval): calibr computes such tails (erfc), but no asymptotic
#: approximation is accurate there.
PVALUE_FLOOR = float(np.finfo(np.float64).eps)
_PVALUE_FLOOR_TEXT = "2.2e-16"


def _places(v: float) -> tuple[int, int]:
    """The decimals that show ``v`` to TABLE_DIGITS significant digits, trailing zeros
    dropped: (in fixed point, in the mantissa of scientific notation)."""
    mantissa, exponent = f"{v:.{TABLE_DIGITS - 1}e}".split("e")
    digits = len(mantissa.lstrip("-").replace(".", "").rstrip("0")) or 1
    return max(0, digits - 1 - int(exponent)), digits - 1


def _special(v: float) -> str:
    return "NaN" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _number_cells(values: Any) -> list[str]:
    """One column of numbers as R's ``format(x, digits = 4)`` prints it: the fewest
    decimals that show every value to TABLE_DIGITS significant digits (the smallest
    value has exactly that many), in fixed point unless scientific notation is
    narrower, one notation for the whole column so that it stays aligned.

    Examples
    --------
    >>> _number_cells([0.018601, 0.062108, 0.354615])
    ['0.01860', '0.06211', '0.35462']
    >>> _number_cells([7.17e-06, 0.001338, float("nan")])
    ['7.170e-06', '1.338e-03', 'NaN']
    >>> _number_cells([0.5, 1.0, 12345.678])
    ['0.5', '1.0', '12345.7']
    """
    v = np.asarray(values, dtype=np.float64) + 0.0  # -0.0 is 0
    finite = [float(x) for x in v if math.isfinite(x)]
    if not finite:
        return [_special(float(x)) for x in v]
    places = [_places(x) for x in finite]
    fixed, sci = max(p[0] for p in places), max(p[1] for p in places)
    wide = (max(len(f"{x:.{fixed}f}") for x in finite)
            > max(len(f"{x:.{sci}e}") for x in finite))
    spec = f".{sci}e" if wide else f".{fixed}f"
    return [format(float(x), spec) if math.isfinite(x) else _special(float(x)) for x in v]


def _pvalue_cells(values: Any, n_resamples: int | None, bound: Any = None) -> list[str]:
    """A column of p-values: as other numbers, except values below the resolution,
    ``< 1/B`` for a p-value from B resamples (a share of resamples: only 0 is below)
    and ``< 2.2e-16`` for an analytic one (``n_resamples`` None); ``bound`` marks the
    values that are upper bounds (adjusted p-values of a p-value below its
    resolution), shown ``< value`` (a bound of 1 says nothing: shown as 1).

    Examples
    --------
    >>> _pvalue_cells([0.0, 0.25], 1000)
    ['< 0.001', '0.25']
    >>> _pvalue_cells([0.06, 0.25, 1.0], 1000, [True, False, True])
    ['< 0.06', '0.25', '1.00']
    """
    v = np.asarray(values, dtype=np.float64)
    if bound is not None:
        bound = np.asarray(bound, dtype=bool) & (v < 1.0)
        cells = _number_cells(v)
        return [f"< {c}" if b else c for b, c in zip(bound, cells, strict=True)]
    floor = PVALUE_FLOOR if n_resamples is None else 1.0 / n_resamples
    text = _PVALUE_FLOOR_TEXT if n_resamples is None else f"{floor:.{TABLE_DIGITS}g}"
    below = v < floor  # NaN is not
    cells = _number_cells(np.where(below, np.nan, v))
    return [f"< {text}" if b else c for b, c in zip(below, cells, strict=True)]


def _table_text(df: pd.DataFrame, header: list[str], marks: dict[str, np.ndarray],
                notes: list[str], exact: Sequence[str] = (),
                pvalues: dict[str, int | None] | None = None,
                bounds: dict[str, Any] | None = None,
                symbols: dict[str, str] | None = None) -> str:
    """The table output: a header that says what was computed, the rows (values marked
    with * where ``marks`` says so, or the column's mark in ``symbols``) and the
    footnotes of the marks.

    Float columns are shown by :func:`_number_cells`, the columns of ``pvalues``
    (name -> the resamples of its p-values, None for analytic ones) by
    :func:`_pvalue_cells`, with ``bounds`` (name -> which values are upper bounds);
    the ``exact`` columns (group keys, counts) as pandas shows them."""
    shown = df.copy()
    pvalues, bounds = pvalues or {}, bounds or {}
    for col in df.columns:
        if col in pvalues:
            shown[col] = _pvalue_cells(df[col], pvalues[col], bounds.get(col))
        elif col not in exact and df[col].dtype.kind == "f":
            shown[col] = _number_cells(df[col])
    for col, mark in marks.items():
        # the mark, or a space to keep the digits aligned
        cells = shown[[col]].to_string(index=False, header=False).splitlines()
        symbol = (symbols or {}).get(col, "*")
        shown[col] = [c.strip() + (symbol if m else " ") for c, m in zip(cells, mark,
                                                                            strict=True)]
    body = shown.to_string(index=False)
    parts = ["\n".join(header), body]
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts) + "\n"


def _render(df: pd.DataFrame, fmt: str, header: list[str],
            marks: dict[str, np.ndarray] | None = None, notes: list[str] | None = None,
            exact: Sequence[str] = (), pvalues: dict[str, int | None] | None = None,
            bounds: dict[str, Any] | None = None, symbols: dict[str, str] | None = None,
            hidden: Sequence[str] = ()) -> str:
    """The output in ``fmt``: CSV and JSON with every digit (repr, which round-trips),
    the table as :func:`_table_text` says, without the ``hidden`` columns (those its
    marks show)."""
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return json.dumps(_records(df), indent=2) + "\n"
    return _table_text(df.drop(columns=list(hidden)), header, marks or {}, notes or [], exact,
                       pvalues, bounds, symbols)
