"""``_repr_html_`` of calibr's result objects: what a notebook (Jupyter, VS Code)
shows for a ``BootstrapResult``, ``PairedBootstrapResult``,
``CalibrationTestResult``, ``Decomposition`` or ``MulticalibrationResult``: a
table of its fields, the numbers to 4 significant digits (each in ``<data
value="...">`` with every digit), arrays by their length, tables as pandas
shows them. ``calibration_table()`` returns a DataFrame, which pandas shows."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .format import esc, num

#: Rows of a table field (``MulticalibrationResult.segments``) shown in a notebook.
TABLE_ROWS = 10

_STYLE = ("<style>.calibr-result{border-collapse:collapse;font-variant-numeric:tabular-nums}"
          ".calibr-result th{text-align:left;padding:2px 12px 2px 0;font-weight:600}"
          ".calibr-result td{text-align:right;padding:2px 0}"
          ".calibr-result caption{text-align:left;font-weight:600;padding-bottom:4px}</style>")


def value_html(value: Any) -> str:
    """One field's value as HTML."""
    import pandas as pd

    if value is None:
        return "None"
    if isinstance(value, (bool, np.bool_)):
        return esc(bool(value))
    if isinstance(value, (int, np.integer)):
        return f'<data value="{int(value)}">{int(value)}</data>'
    if isinstance(value, (float, np.floating)):
        return num(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # ConfidenceInterval
        return "[" + ", ".join(value_html(v) for v in value) + "]"
    if isinstance(value, np.ndarray):
        if value.ndim == 1 and len(value) <= 12:
            return "[" + ", ".join(value_html(v.item()) for v in value) + "]"
        return esc(f"array of {value.size:,} values")
    if isinstance(value, tuple):
        return esc(", ".join(str(v) for v in value))
    if isinstance(value, pd.DataFrame):
        more = (f"<p>the first {TABLE_ROWS} of {len(value):,} rows</p>"
                if len(value) > TABLE_ROWS else "")
        return value.head(TABLE_ROWS).to_html(index=False, escape=True) + more
    return esc(value)


def result_html(result: Any) -> str:
    """A result object's fields as an HTML table (its ``_repr_html_``)."""
    rows = []
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        rows.append(f'<tr><th scope="row">{esc(f.name)}</th><td>{value_html(value)}</td></tr>')
    extra = ""
    frame = getattr(result, "to_frame", None)
    if callable(frame) and getattr(result, "classes", None) is not None:
        extra = frame().to_html(index=False, escape=True)
    return (f'{_STYLE}<table class="calibr-result"><caption>{esc(type(result).__name__)}'
            f"</caption><tbody>{''.join(rows)}</tbody></table>{extra}")
