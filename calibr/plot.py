"""Reliability diagrams drawn from a calibration table.

matplotlib is an optional dependency (``pip install matplotlib``, or
``pip install ".[plot]"`` from a checkout of calibr). It is
imported inside :func:`reliability_diagram` only, so ``import calibr`` and
``import calibr.plot`` work without it, and importing calibr never selects a
backend or changes matplotlib's global options.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from calibr._validation import InputError, InputTypeError, _count_phrase, _fmt

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.figure import Figure

__all__ = ["reliability_diagram"]

#: The subset the drawing needs.
_NEEDED = ("bin", "lower", "upper", "n", "mean_confidence", "observed_frequency",
           "ci_lower", "ci_upper")

#: Artist labels that identify the two kinds of axes (``Axes.get_label()``).
PANEL_LABEL = "reliability"
COUNTS_LABEL = "counts"


def _require_matplotlib():
    try:
        import matplotlib  # noqa: F401
        import matplotlib.figure
    except ImportError as exc:
        raise ImportError(
            "reliability_diagram() needs matplotlib, which is an optional dependency of "
            "calibr; install it with `pip install matplotlib`."
        ) from exc
    return matplotlib.figure


def _check_table(table: Any) -> list[str]:
    """Validate the table; return its grouping columns (those before ``bin``)."""
    if not isinstance(table, pd.DataFrame):
        raise InputTypeError(
            "`table` must be a pandas DataFrame from calibr.calibration_table(); "
            f"got {type(table).__name__}."
        )
    missing = [c for c in _NEEDED if c not in table.columns]
    if missing:
        raise InputError(
            "`table` must have the columns of calibr.calibration_table(); "
            f"missing: {', '.join(repr(c) for c in missing)}."
        )
    if len(table) == 0:
        raise InputError("`table` must have at least one row; got an empty table.")
    cols = list(table.columns)
    group_cols = cols[: cols.index("bin")]
    for name in ("lower", "upper", "n", "mean_confidence", "observed_frequency"):
        values = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"`table` column {name!r} must be finite numbers; "
                f"{_count_phrase(int(bad.sum()), 'value is', 'values are')} not, "
                f"the first at position {first} ({_fmt(table[name].iloc[first])})."
            )
    for name in ("ci_lower", "ci_upper"):
        values = pd.to_numeric(table[name], errors="coerce")
        bad = values.isna().to_numpy() & table[name].notna().to_numpy()
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"`table` column {name!r} must be numbers (or missing); "
                f"{_count_phrase(int(bad.sum()), 'value is', 'values are')} not, "
                f"the first at position {first} ({_fmt(table[name].iloc[first])})."
            )
    return group_cols


def _check_by(by: Any, group_cols: list[str]) -> list[str]:
    if by is None:
        return list(group_cols)
    if isinstance(by, str) or not isinstance(by, Sequence):
        by = [by]
    by = list(by)
    unknown = [b for b in by if b not in group_cols]
    if unknown:
        allowed = ", ".join(repr(c) for c in group_cols) if group_cols else "none"
        raise InputError(
            "`by` must name grouping columns of `table` (the columns before 'bin': "
            f"{allowed}); got {', '.join(repr(u) for u in unknown)}."
        )
    if len(set(by)) != len(by):
        raise InputError(f"`by` must not repeat a column; got {by!r}.")
    return by


def _groups(
    frame: pd.DataFrame, cols: list[Hashable]
) -> list[tuple[tuple[Hashable, ...], pd.DataFrame]]:
    """Split ``frame`` by ``cols`` in order of first appearance, keeping missing keys."""
    if not cols:
        return [((), frame)]
    grouped = frame.groupby(cols, sort=False, dropna=False)
    out = []
    for key, sub in grouped:
        out.append((key if isinstance(key, tuple) else (key,), sub))
    return out


def _describe(cols: list[str], key: tuple[Hashable, ...]) -> str:
    return ", ".join(f"{c} = {k}" for c, k in zip(cols, key, strict=True))


def reliability_diagram(
    table: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    *,
    ncols: int | None = None,
    histogram: bool = True,
    intervals: bool = True,
    panel_size: tuple[float, float] = (3.6, 3.6),
    title: str | None = None,
) -> Figure:
    """Draw a reliability diagram from a calibration table.

    Each panel plots the observed frequency of the event against the mean
    predicted confidence of every non-empty bin, with the diagonal of perfect
    calibration, the confidence interval of each observed frequency as a
    vertical bar, and (beneath it, on the same x axis) a histogram of the
    number of predictions per bin.

    Parameters
    ----------
    table : pandas.DataFrame
        A table as returned by ``calibr.calibration_table()``: optional grouping
        columns first (group keys, then ``class`` for a classwise multiclass
        table), then ``bin``, ``lower``, ``upper``, ``n``, ``mean_confidence``,
        ``observed_frequency``, ``gap``, ``ci_lower``, ``ci_upper``. Missing
        ``ci_lower``/``ci_upper`` values draw no bar.
    by : str or sequence of str, optional
        The grouping columns that get a panel each. The default (``None``) is
        every column before ``bin``, so a per-model classwise table gets one
        panel per (model, class). Grouping columns left out of ``by`` are drawn
        as separate curves inside each panel, with a legend; ``by=[]`` draws
        everything in one panel.
    ncols : int, optional
        Panels per row; by default ``min(number of panels, 4)``.
    histogram : bool, default True
        Draw the bin counts beneath each panel.
    intervals : bool, default True
        Draw the ``ci_lower``-``ci_upper`` bars.
    panel_size : (float, float), default (3.6, 3.6)
        Width and height in inches of one panel (histogram included).
    title : str, optional
        A title for the whole figure.

    Returns
    -------
    matplotlib.figure.Figure
        A new figure, not attached to pyplot (no window opens; save it with
        ``fig.savefig(...)``, or display it in a notebook). Its reliability
        axes have the label ``"reliability"`` and the count axes ``"counts"``
        (``Axes.get_label()``), in panel order.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install matplotlib``).
    TypeError
        If `table` is not a DataFrame.
    calibr._validation.InputError
        A ``ValueError``: if `table` lacks a column, is empty or holds non-finite values, if
        `by` names a column that is not a grouping column, or if `ncols` is
        not a positive integer.

    Notes
    -----
    The figure is built with ``matplotlib.figure.Figure`` directly, so it does
    not depend on the pyplot state or the interactive backend and leaves
    matplotlib's global options untouched.

    Examples
    --------
    >>> import pandas as pd
    >>> from calibr.plot import reliability_diagram
    >>> table = pd.DataFrame({
    ...     "bin": [1, 2], "lower": [0.0, 0.5], "upper": [0.5, 1.0], "n": [2, 2],
    ...     "mean_confidence": [0.15, 0.85], "observed_frequency": [0.0, 1.0],
    ...     "gap": [-0.15, 0.15], "ci_lower": [0.0, 0.34], "ci_upper": [0.66, 1.0]})
    >>> fig = reliability_diagram(table)
    >>> [ax.get_label() for ax in fig.axes]
    ['reliability', 'counts']
    """
    figure_mod = _require_matplotlib()
    group_cols = _check_table(table)
    panel_by = _check_by(by, group_cols)
    series_by = [c for c in group_cols if c not in panel_by]
    if ncols is not None and (
        isinstance(ncols, bool) or not isinstance(ncols, (int, np.integer)) or ncols < 1
    ):
        raise InputError(f"`ncols` must be a single positive integer; got {ncols!r}.")

    panels = _groups(table, panel_by)
    n_panels = len(panels)
    ncols = min(n_panels, 4) if ncols is None else min(int(ncols), n_panels)
    nrows = -(-n_panels // ncols)
    width, height = panel_size
    fig = figure_mod.Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    if title is not None:
        fig.suptitle(title)
    rows_per_panel = 2 if histogram else 1
    ratios = [3, 1] * nrows if histogram else [1] * nrows
    grid = fig.add_gridspec(nrows * rows_per_panel, ncols, height_ratios=ratios)

    for i, (key, sub) in enumerate(panels):
        r, c = divmod(i, ncols)
        ax = fig.add_subplot(grid[r * rows_per_panel, c], label=PANEL_LABEL)
        ax.plot([0, 1], [0, 1], linestyle="--", color="0.55", linewidth=1,
                label="perfect calibration")
        counts_ax = None
        if histogram:
            counts_ax = fig.add_subplot(grid[r * rows_per_panel + 1, c], sharex=ax,
                                        label=COUNTS_LABEL)
        curves = _groups(sub, series_by)
        for j, (skey, ssub) in enumerate(curves):
            ssub = ssub.sort_values("mean_confidence", kind="stable")
            color = f"C{j % 10}"
            name = _describe(series_by, skey) if series_by else "observed"
            x = ssub["mean_confidence"].to_numpy(dtype=float)
            yv = ssub["observed_frequency"].to_numpy(dtype=float)
            ax.plot(x, yv, marker="o", markersize=4, linewidth=1.5, color=color, label=name)
            if intervals:
                lo = pd.to_numeric(ssub["ci_lower"]).to_numpy(dtype=float)
                hi = pd.to_numeric(ssub["ci_upper"]).to_numpy(dtype=float)
                ok = np.isfinite(lo) & np.isfinite(hi)
                if ok.any():
                    ax.vlines(x[ok], lo[ok], hi[ok], color=color, linewidth=1, alpha=0.8)
            if counts_ax is not None:
                lower = ssub["lower"].to_numpy(dtype=float)
                upper = ssub["upper"].to_numpy(dtype=float)
                counts_ax.bar(lower, ssub["n"].to_numpy(dtype=float),
                              width=upper - lower, align="edge", color=color,
                              alpha=0.5 if len(curves) > 1 else 0.8,
                              edgecolor=color, linewidth=0.5)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("Observed frequency")
        if panel_by:
            ax.set_title(_describe(panel_by, key), fontsize="medium")
        if series_by:
            ax.legend(fontsize="x-small", loc="upper left")
        if counts_ax is not None:
            ax.tick_params(labelbottom=False)
            counts_ax.set_ylabel("Count")
            counts_ax.set_xlabel("Mean confidence")
        else:
            ax.set_xlabel("Mean confidence")
    return fig
