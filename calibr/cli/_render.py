"""The output: the table with its header lines, marks and footnotes, CSV and JSON."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
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
    "skce": "asymptotic SKCE test, {n} bootstrap resamples",
    "skce_block": "asymptotic block SKCE test (z test, no resampling)",
    "consistency": "consistency resampling of {metric}, {n} resamples",
    "spiegelhalter": "Spiegelhalter's z test",
    "hosmer_lemeshow": "Hosmer-Lemeshow test",
}


def _tests_header(tests: list, seed: int, several: bool) -> list[str]:
    """The header lines of --test (``[(name, spec, n_resamples)]``): each test, how it
    was run, and the seed."""
    words = []
    for name, spec, n in tests:
        text = _TEST_WORDS[spec.method].format(n=n, metric=spec.options.get("metric", "ece"))
        words.append(f"{name} = {text}")
    where = "of each data set " if several else ""
    return [
        "tests: " + "; ".join(words),
        f"seed: {seed} (group g {where}draws from numpy.random.SeedSequence({seed})"
        ".spawn(groups)[g]; null hypothesis: calibrated)",
    ]


def _table_text(df: pd.DataFrame, header: list[str], marks: dict[str, np.ndarray],
                notes: list[str]) -> str:
    """The table output: a header that says what was computed, the rows (values marked
    with * where ``marks`` says so) and the footnotes of the marks."""
    shown = df.copy()
    for col, mark in marks.items():
        # pandas' formatting of the column, then the mark (or a space, to keep the digits
        # aligned)
        cells = df[[col]].to_string(index=False, header=False).splitlines()
        shown[col] = [c.strip() + ("*" if m else " ") for c, m in zip(cells, mark, strict=True)]
    body = shown.to_string(index=False)
    parts = ["\n".join(header), body]
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts) + "\n"


def _render(df: pd.DataFrame, fmt: str, header: list[str],
            marks: dict[str, np.ndarray] | None = None, notes: list[str] | None = None) -> str:
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return json.dumps(_records(df), indent=2) + "\n"
    return _table_text(df, header, marks or {}, notes or [])
