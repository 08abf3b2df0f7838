"""Reliability diagrams drawn from a calibration table.

matplotlib is an optional dependency (``pip install matplotlib``, or
``pip install ".[plot]"`` from a checkout of calibr). It is
imported inside :func:`reliability_diagram` only, so ``import calibr`` and
``import calibr.plot`` work without it, and importing calibr never selects a
backend or changes matplotlib's global options.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from calibr._input import (
    FLAG,
    OPTIONAL_STRING,
    InputError,
    InputTypeError,
    Integer,
    Optional,
    Options,
    count_phrase,
    fmt,
    validate_params,
)
from calibr._input.groups import subframes

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.figure import Figure

__all__ = ["reliability_diagram", "table_ece"]

#: The subset the drawing needs.
_NEEDED = ("bin", "lower", "upper", "n", "mean_confidence", "observed_frequency",
           "ci_lower", "ci_upper")

#: More curves than this crowd a panel: :func:`reliability_diagram` draws them
#: thinner with the legend beside, and the reports (``calibr report --plot`` without
#: ``--type``, :func:`calibr.html_report`) draw data of more classes as the top label.
FEW_CURVES = 3

#: Inches added to the figure's width for the legend beside the panels.
_LEGEND_WIDTH = 1.2

#: Panels per row by default: at most this many, the rows balanced.
_MAX_COLUMNS = 4

#: Inches of a panel's width taken by its y axis (ticks and label): a title wider
#: than the rest is wrapped.
_Y_AXIS_WIDTH = 0.75

#: Inches of the figure's width kept free beside its title.
_TITLE_MARGIN = 0.3

#: Inches added to the figure's height for each line of a title beyond those a
#: panel's height allows for (two of a panel's title, one of the figure's).
_LINE_HEIGHT = 0.2

#: The y scales of the count histogram (the first is the default): a log scale shows
#: the bins of a few predictions beside those of thousands.
_COUNT_SCALES = ("log", "linear")

#: The columns of a consistency band (``calibration_table(..., consistency=LEVEL)``).
_BAND = ("consistency_lower", "consistency_upper")

#: The label of the shaded consistency band of a curve (``Collection.get_label()``).
BAND_LABEL = "consistency band"

#: The opacity of the shaded band.
_BAND_ALPHA = 0.2

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
            f"got {type(table).__name__}.",
            param="table"
        )
    missing = [c for c in _NEEDED if c not in table.columns]
    if missing:
        raise InputError(
            "`table` must have the columns of calibr.calibration_table(); "
            f"missing: {', '.join(repr(c) for c in missing)}.",
            param="table"
        )
    if len(table) == 0:
        raise InputError("`table` must have at least one row; got an empty table.", param="table")
    cols = list(table.columns)
    group_cols = cols[: cols.index("bin")]
    for name in ("lower", "upper", "n", "mean_confidence", "observed_frequency"):
        values = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"`table` column {name!r} must be finite numbers; "
                f"{count_phrase(int(bad.sum()), 'value is', 'values are')} not, "
                f"the first at position {first} ({fmt(table[name].iloc[first])}).",
                param="table"
            )
    for name in ("ci_lower", "ci_upper"):
        values = pd.to_numeric(table[name], errors="coerce")
        bad = values.isna().to_numpy() & table[name].notna().to_numpy()
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"`table` column {name!r} must be numbers (or missing); "
                f"{count_phrase(int(bad.sum()), 'value is', 'values are')} not, "
                f"the first at position {first} ({fmt(table[name].iloc[first])}).",
                param="table"
            )
    return group_cols


def _consistency_rule(value: Any, name: str) -> bool | str:
    """``consistency``: True, False or ``"auto"``."""
    if isinstance(value, str) and value == "auto":
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"`{name}` must be True, False or 'auto'; got {fmt(value)}.", param=name)


def _draw_band(table: pd.DataFrame, consistency: bool | str) -> bool:
    """Whether to shade the consistency band (``consistency`` checked by its rule)."""
    present = all(c in table.columns for c in _BAND)
    if consistency is True and not present:
        raise InputError(
            "`consistency` needs the columns 'consistency_lower' and 'consistency_upper' of "
            "calibr.calibration_table(..., consistency=LEVEL); `table` has "
            + ("only one of them." if any(c in table.columns for c in _BAND) else "neither."),
            param="consistency"
        )
    if not (present and consistency):
        return False
    for name in _BAND:
        values = pd.to_numeric(table[name], errors="coerce")
        bad = values.isna() & table[name].notna()
        if bad.any():
            first = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"`table` column {name!r} must be numbers (or missing); "
                f"{count_phrase(int(bad.sum()), 'value is', 'values are')} not, "
                f"the first at position {first} ({fmt(table[name].iloc[first])}).",
                param="table"
            )
    return True


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
            f"{allowed}); got {', '.join(repr(u) for u in unknown)}.",
            param="by"
        )
    if len(set(by)) != len(by):
        raise InputError(f"`by` must not repeat a column; got {by!r}.", param="by")
    return by


def _describe(cols: list[str], key: tuple[Hashable, ...]) -> str:
    return ", ".join(f"{c} = {k}" for c, k in zip(cols, key, strict=True))


def _all_missing(key: tuple[Hashable, ...]) -> bool:
    """A curve key of missing values only (the binary rows of a stacked table have
    no class): drawn as the panel's single observed curve."""
    return bool(key) and all(pd.isna(k) for k in key)


def _panel_size(panel_size: Any, name: str) -> tuple[float, float]:
    """The rule of ``panel_size``: two positive finite numbers, as floats."""
    msg = (f"`{name}` must be two positive finite numbers (width, height) in inches; "
           f"got {fmt(panel_size)}.")
    if isinstance(panel_size, (str, bytes)) or not isinstance(panel_size, (Sequence, np.ndarray)):
        raise InputTypeError(msg, param=name)
    values = list(panel_size)
    if len(values) != 2:
        raise InputError(msg, param=name)
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                               np.floating)):
            raise InputTypeError(msg, param=name)
        if not (np.isfinite(v) and v > 0):
            raise InputError(msg, param=name)
    return float(values[0]), float(values[1])


_NOT_BINS = (
    "`show_ece` needs the bins of calibr.calibration_table() (consecutive bins from 0 to "
    "1): the columns 'bin', 'lower' and 'upper' of `table` do not describe them."
)


def _bins_of(table: pd.DataFrame) -> int | None:
    """The number of R's equal-width bins of a calibration table, from its bin edges;
    None if its edges are other bins (``binning=``, ``right=``, explicit breaks)."""
    bin_ = pd.to_numeric(table["bin"], errors="coerce").to_numpy(dtype=float)
    lower = table["lower"].to_numpy(dtype=float)
    upper = table["upper"].to_numpy(dtype=float)
    width = upper[0] - lower[0]
    bins = int(round(1.0 / width)) if width > 0 else 0
    ok = bins >= 1 and np.all(bin_ == np.floor(bin_)) and np.all((bin_ >= 1) & (bin_ <= bins))
    if ok:
        from calibr._kernels.binned import breaks  # R's breaks: calibration_table()'s

        edges = breaks(bins)
        b = bin_.astype(np.int64)
        ok = bool(np.array_equal(lower, edges[b - 1]) and np.array_equal(upper, edges[b]))
    return bins if ok else None


def _other_bins(curve: pd.DataFrame) -> int:
    """The bins of one curve of a table with bins other than R's: positive whole bin
    numbers, increasing, each ``[lower, upper]`` in [0, 1] and not overlapping the
    next (a table of ``binning=``, ``right=`` or explicit breaks); the largest bin
    number."""
    bin_ = pd.to_numeric(curve["bin"], errors="coerce").to_numpy(dtype=float)
    order = np.argsort(bin_, kind="stable")
    b = bin_[order]
    lower = curve["lower"].to_numpy(dtype=float)[order]
    upper = curve["upper"].to_numpy(dtype=float)[order]
    ok = bool(np.all(b == np.floor(b)) and np.all(b >= 1) and np.all(np.diff(b) > 0)
              and np.all((lower >= 0) & (lower <= upper) & (upper <= 1))
              and np.all(upper[:-1] <= lower[1:]))
    if not ok:
        raise InputError(_NOT_BINS, param="table")
    return int(b[-1])


def table_ece(table: pd.DataFrame, by: str | Sequence[str] | None = None) -> float:
    """The ECE of a calibration table's rows, exactly as :func:`calibr.ece` computes it.

    Parameters
    ----------
    table : pandas.DataFrame
        The rows of one group of ``calibr.calibration_table()`` (all of them for
        an ungrouped table).
    by : str or sequence of str, optional
        The columns that tell the curves apart, e.g. ``"class"`` for a classwise
        table; default: ``"class"`` if the table has it, else none.

    Returns
    -------
    float
        ``sum(n * gap) / sum(n)`` over the bins; with ``by``, the mean of that
        over the curves (for a classwise table, the classwise ECE). The sums
        run over all ``bins`` bins, empty ones as zeros, in the order of
        ``calibr.ece()``, so the result is bit-for-bit the same for R's bins;
        for the bins of ``binning=``, ``right=`` or explicit breaks, the same to
        rounding.

    Raises
    ------
    calibr.InputError
        If the table's ``bin``, ``lower`` and ``upper`` columns do not describe
        bins (positive bin numbers, ``0 <= lower <= upper <= 1``).

    Examples
    --------
    >>> import calibr
    >>> from calibr.plot import table_ece
    >>> p, y = [0.1, 0.2, 0.8, 0.9, 0.4], [0, 0, 1, 1, 1]
    >>> table_ece(calibr.calibration_table(p, y, bins=4)) == calibr.ece(p, y, bins=4)
    True
    """
    group_cols = _check_table(table)
    if by is None:
        by = ["class"] if "class" in group_cols else []
    by = _check_by(by, group_cols)
    return _table_ece(table, by)


def _table_ece(table: pd.DataFrame, series_by: list) -> float:
    bins = _bins_of(table)
    curves = subframes(table, series_by)
    if bins is None:  # other bins than R's: each curve's own (docs/definitions.md)
        bins = max(_other_bins(sub) for _, sub in curves)
    count = np.zeros((len(curves), bins))
    gap = np.zeros((len(curves), bins))
    for i, (_, sub) in enumerate(curves):
        b = sub["bin"].to_numpy(dtype=np.int64) - 1
        count[i, b] = sub["n"].to_numpy(dtype=float)
        # the table's gap, |observed_frequency - mean_confidence|, recomputed from the
        # two columns it was computed from (the same floats)
        gap[i, b] = np.abs(sub["observed_frequency"].to_numpy(dtype=float)
                           - sub["mean_confidence"].to_numpy(dtype=float))
    # the arithmetic of calibr.ece(): per-curve sums over all bins, then the mean
    nonempty = count > 0
    per = np.sum(np.where(nonempty, count * gap, 0.0), axis=-1) / np.sum(count, axis=-1)
    return float(np.mean(per))


def _shade(ax: Any, x: np.ndarray, rows: pd.DataFrame, color: str) -> Any:
    """The consistency band of one curve (its rows sorted by mean confidence); the
    artist drawn, or None without a bin with both bounds."""
    lo = pd.to_numeric(rows[_BAND[0]]).to_numpy(dtype=float)
    hi = pd.to_numeric(rows[_BAND[1]]).to_numpy(dtype=float)
    ok = np.isfinite(lo) & np.isfinite(hi)
    if ok.sum() >= 2:
        return ax.fill_between(x[ok], lo[ok], hi[ok], color=color, alpha=_BAND_ALPHA,
                               linewidth=0, label=BAND_LABEL)
    if ok.any():
        return ax.vlines(x[ok], lo[ok], hi[ok], color=color, alpha=_BAND_ALPHA, linewidth=8,
                         label=BAND_LABEL)
    return None


#: The legend label of the smoothed curve (``smooth=``), before its numbers.
SMOOTH_LABEL = "smoothed"


def _smooth_rule(value: Any, name: str) -> Any:
    """``smooth``: None, a SmoothCurve, or a mapping of panel keys to SmoothCurves."""
    from ._metrics.smooth import SmoothCurve

    if value is None or isinstance(value, SmoothCurve):
        return value
    if isinstance(value, Mapping) and all(
            v is None or isinstance(v, SmoothCurve) for v in value.values()):
        return dict(value)
    raise InputTypeError(
        f"`{name}` must be None, a calibr.SmoothCurve (calibr.smece_curve(p, y)) or a dict "
        f"of them by panel; got {type(value).__name__}.",
        param=name
    )


def _ece_label_rule(value: Any, name: str) -> str | dict:
    """``ece_label``: a string, or a mapping of panel keys to strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        return dict(value)
    raise InputTypeError(
        f"`{name}` must be a string or a dict of strings by panel; got {type(value).__name__}.",
        param=name
    )


def _grid(n_panels: int, ncols: int | None) -> tuple[int, int]:
    """(rows, columns) of the panels: ``ncols`` per row if given, else the fewest rows
    of at most ``_MAX_COLUMNS`` panels, balanced (six panels: two rows of three), so
    that fewer slots than rows are left empty."""
    if ncols is None:
        rows = -(-n_panels // _MAX_COLUMNS)
        ncols = -(-n_panels // rows)
    ncols = min(int(ncols), n_panels)
    return -(-n_panels // ncols), ncols


def _fit(text: str, width: float, size: Any) -> str:
    """``text`` wrapped to lines at most ``width`` inches wide in a font of ``size``
    (a size in points or a name, as ``Text.set_fontsize`` takes): broken after the
    ", " between group keys where it can, else after a space or an underscore, else
    inside a word. Its own line breaks are kept."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(size=size)
    limit = width * 72.0  # points

    def fits(s: str) -> bool:
        return text_to_path.get_text_width_height_descent(s.rstrip(), prop,
                                                          ismath=False)[0] <= limit

    def wrap(piece: str, separators: tuple[str, ...]) -> list[str]:
        """Lines of ``piece``: greedy, after the first separator that helps."""
        if fits(piece):
            return [piece]
        if not separators:  # a word too wide alone: its longest prefixes that fit
            lo, hi = 1, len(piece)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if fits(piece[:mid]) else (lo, mid)
            return [piece[:lo], *wrap(piece[lo:], separators)]
        lines, current = [], ""
        for part in re.split(f"(?<={re.escape(separators[0])})", piece):
            if fits(current + part):
                current += part
                continue
            if current:
                lines.append(current)
            *full, current = wrap(part, separators[1:])
            lines += full
        return [*lines, current]

    return "\n".join(line.rstrip() for raw in text.split("\n")
                     for line in wrap(raw, (", ", " ", "_")))


@validate_params(
    ncols=Optional(Integer(1, what="a single positive integer")),
    histogram=FLAG,
    intervals=FLAG,
    panel_size=_panel_size,
    title=OPTIONAL_STRING,
    show_ece=FLAG,
    consistency=_consistency_rule,
    smooth=_smooth_rule,
    count_scale=Options(*_COUNT_SCALES),
    ece_label=_ece_label_rule,
)
def reliability_diagram(
    table: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    *,
    ncols: int | None = None,
    histogram: bool = True,
    intervals: bool = True,
    panel_size: tuple[float, float] = (3.6, 3.6),
    title: str | None = None,
    show_ece: bool = False,
    consistency: bool | str = "auto",
    smooth: Any = None,
    count_scale: str = "log",
    ece_label: str | Mapping[Any, str] = "ECE",
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
        ``ci_lower``/``ci_upper`` values draw no bar. The form is the table's:
        a classwise table (``calibration_table(type="classwise")``, R's default)
        draws a panel or a curve per class, a top-label table
        (``type="confidence"``) one curve per group, which reads better for
        more than three classes.
    by : str or sequence of str, optional
        The grouping columns that get a panel each. The default (``None``) is
        every column before ``bin``, so a per-model classwise table gets one
        panel per (model, class): small multiples. Grouping columns left out of
        ``by`` are drawn as separate curves inside each panel, each in the same
        colour in every panel, with one legend for the figure; ``by=[]`` draws
        everything in one panel.
    ncols : int, optional
        Panels per row. By default the fewest rows of at most four panels,
        balanced: six panels are two rows of three, seven a row of four and one
        of three. Slots left over in the last row stay empty (no axes).
    histogram : bool, default True
        Draw the bin counts beneath each panel.
    intervals : bool, default True
        Draw the ``ci_lower``-``ci_upper`` bars.
    panel_size : (float, float), default (3.6, 3.6)
        Width and height in inches of one panel (histogram included); a
        legend beside the panels adds 1.2 inches to the figure's width, and
        each line of a title beyond two (a panel's) or one (the figure's)
        0.2 inches to its height.
    title : str, optional
        A title for the whole figure, wrapped to the panels' width.
    show_ece : bool, default False
        Add each panel's ECE to its title, computed from the panel's rows by
        :func:`table_ece` (equal to ``calibr.ece()`` on the same data, bins
        and form; for a classwise table drawn with the classes as curves, the
        classwise ECE: the mean over the classes). Needs one group per panel:
        the columns left out of `by` may only be ``class``.
    consistency : bool or "auto", default "auto"
        Shade each curve's consistency band (Bröcker & Smith 2007), the
        ``consistency_lower``-``consistency_upper`` range of the table (from
        ``calibr.calibration_table(..., consistency=LEVEL)``): the observed
        frequencies a calibrated model would show. ``"auto"`` shades it when
        the table has the two columns, True requires them, False never
        shades. Bins with a missing bound are left out of the band.
    smooth : SmoothCurve or mapping of panel key to SmoothCurve, optional
        Also draw the smoothed reliability curve of Błasiok & Nakkiran
        (:func:`calibr.smece_curve`, relplot's main line) in each panel: one
        curve for every panel, or a dict from each panel's key (the tuple of
        its ``by`` values, as ``table.groupby(by)`` names groups) to its
        curve; panels without a key in the dict get none. The panel's legend
        gives its bandwidth and smooth ECE.
    count_scale : {"log", "linear"}, default "log"
        The y scale of the count histogram. On the log scale (its label says
        so) a bin of a few predictions stays visible beside one of thousands,
        as in the peaked predictions of a good classifier; it runs from half
        the smallest count (at most 0.5) to twice the largest.
    ece_label : str or mapping of panel key to str, default "ECE"
        The name before the ECE in each panel's title (with `show_ece`), e.g.
        ``"confidence ECE"`` for a ``type="confidence"`` table of multiclass
        data, whose table looks like a binary one; or a dict from panel keys
        (as for `smooth`) to names, panels without a key getting ``"ECE"``.

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
    calibr.InputTypeError
        A ``TypeError``: if `table` is not a DataFrame, `panel_size` is not a
        pair of numbers, `title` is not a string or `ece_label` not a string or
        a dict of strings.
    calibr.InputError
        A ``ValueError``: if `table` lacks a column, is empty or holds non-finite values, if
        `by` names a column that is not a grouping column, if `ncols` is
        not a positive integer, `panel_size` not two positive finite numbers,
        `histogram`, `intervals` or `show_ece` not True or False, `count_scale`
        not ``"log"`` or ``"linear"``, or if
        `show_ece` is set and the panels mix groups or the bins are not those
        of ``calibration_table()``; if `consistency` is not True, False or
        ``"auto"``, or is True for a table without the band's columns. Every
        message names the argument.

    Notes
    -----
    The figure is built with ``matplotlib.figure.Figure`` directly, so it does
    not depend on the pyplot state or the interactive backend and leaves
    matplotlib's global options untouched. Its layout is matplotlib's
    constrained layout; the titles are wrapped to the width of a panel (after
    the ", " between group keys where they can) and of the panels, so that
    they neither run into each other nor leave the figure.

    The consistency band is drawn in the curve's colour at opacity 0.2,
    between the bins' bounds at their mean confidence (``fill_between``, with
    the label ``calibr.plot.BAND_LABEL``); a curve with a single bin gets a
    wide translucent bar instead.

    Named curves (the columns left out of `by`) get one legend for the whole
    figure, beside the panels (``Figure.legends``); a single panel of at most
    three curves keeps its legend inside. A panel with more than three curves
    (e.g. the ten classes of a classwise table) draws them with thinner lines
    and lighter interval bars; the count bars of several curves stand side
    by side within each bin, one per curve, in the curves' colours. Curves
    whose key is missing (the binary rows of a table stacked with classwise
    ones, whose ``class`` is empty) are drawn as the panel's single
    "observed" curve, in the first colour.

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
    >>> fig.axes[1].get_yscale()
    'log'
    """
    group_cols = _check_table(table)
    panel_by = _check_by(by, group_cols)
    series_by = [c for c in group_cols if c not in panel_by]
    width, height = panel_size  # checked and made floats by its rule
    if show_ece and [c for c in series_by if c != "class"]:
        raise InputError(
            "`show_ece` needs one group per panel: `by` must name every grouping column "
            f"except 'class'; {', '.join(repr(c) for c in series_by if c != 'class')} "
            "would mix groups in one panel.",
            param="show_ece"
        )
    band = _draw_band(table, consistency)
    figure_mod = _require_matplotlib()

    panels = [(key, sub, subframes(sub, series_by)) for key, sub in subframes(table, panel_by)]
    nrows, ncols = _grid(len(panels), ncols)
    # each named curve keeps one colour in every panel (by its first appearance)
    colours: dict[str, str] = {}
    for _, _, curves in panels:
        for skey, _ in curves:
            if series_by and not _all_missing(skey):
                colours.setdefault(_describe(series_by, skey), f"C{len(colours) % 10}")
    crowded_figure = any(len(curves) > FEW_CURVES for _, _, curves in panels)
    # one legend for the figure, beside the panels; a single panel of few curves
    # keeps its legend inside
    shared = bool(colours) and (len(panels) > 1 or crowded_figure)
    headings = [_fit(_heading(key, sub, curves, panel_by, series_by, show_ece, ece_label),
                     width - _Y_AXIS_WIDTH, "medium") for key, sub, curves in panels]
    if title is not None:
        title = _fit(title, width * ncols - _TITLE_MARGIN, "large")
    # room for the lines of the titles beyond the two (a panel's) and one (the
    # figure's) that a panel's height allows for
    lines = [max(h.count("\n") + 1 for h in headings[r * ncols:(r + 1) * ncols])
             for r in range(nrows)]
    extra = sum(max(k - 2, 0) for k in lines) * _LINE_HEIGHT
    extra += (title.count("\n") if title is not None else 0) * _LINE_HEIGHT
    fig_width = width * ncols + (_LEGEND_WIDTH if shared else 0.0)
    fig = figure_mod.Figure(figsize=(fig_width, height * nrows + extra), layout="constrained")
    if title is not None:  # centred over the panels, not over the legend beside them
        fig.suptitle(title, x=0.5 * width * ncols / fig_width)
    rows_per_panel = 2 if histogram else 1
    ratios = [3, 1] * nrows if histogram else [1] * nrows
    grid = fig.add_gridspec(nrows * rows_per_panel, ncols, height_ratios=ratios)

    handles: dict[str, Any] = {}  # the figure legend's entries, by label
    for i, (key, sub, curves) in enumerate(panels):
        r, c = divmod(i, ncols)
        ax = fig.add_subplot(grid[r * rows_per_panel, c], label=PANEL_LABEL)
        (diagonal,) = ax.plot([0, 1], [0, 1], linestyle="--", color="0.55", linewidth=1,
                              label="perfect calibration")
        own = []  # entries of this panel only (the smoothed curve's numbers)
        curve = smooth.get(key) if isinstance(smooth, Mapping) else smooth
        if curve is not None:  # NaN where there is no density: the line breaks
            own += ax.plot(curve.x, curve.y, color="0.15", linewidth=1.8, label=SMOOTH_LABEL
                           + f" (bandwidth {curve.bandwidth:.3g}, smECE {curve.smece:.3g})")
        counts_ax = None
        if histogram:
            counts_ax = fig.add_subplot(grid[r * rows_per_panel + 1, c], sharex=ax,
                                        label=COUNTS_LABEL)
        slots = len(curves)  # count bars side by side within each bin
        crowded = slots > FEW_CURVES  # thinner lines, lighter bars
        named = []
        for j, (skey, ssub) in enumerate(curves):
            ssub = ssub.sort_values("mean_confidence", kind="stable")
            is_named = bool(series_by) and not _all_missing(skey)
            name = _describe(series_by, skey) if is_named else "observed"
            color = colours[name] if is_named else "C0"
            x = ssub["mean_confidence"].to_numpy(dtype=float)
            yv = ssub["observed_frequency"].to_numpy(dtype=float)
            shaded = _shade(ax, x, ssub, color) if band else None
            if shaded is not None:
                handles.setdefault(BAND_LABEL, shaded)
            (line,) = ax.plot(x, yv, marker="o", markersize=3 if crowded else 4,
                              linewidth=1.0 if crowded else 1.5, color=color, label=name)
            if is_named:
                named.append(line)
                handles.setdefault(name, line)
            if intervals:
                lo = pd.to_numeric(ssub["ci_lower"]).to_numpy(dtype=float)
                hi = pd.to_numeric(ssub["ci_upper"]).to_numpy(dtype=float)
                ok = np.isfinite(lo) & np.isfinite(hi)
                if ok.any():
                    ax.vlines(x[ok], lo[ok], hi[ok], color=color, linewidth=0.8 if crowded else 1,
                              alpha=0.35 if crowded else 0.8)
            if counts_ax is not None:
                lower = ssub["lower"].to_numpy(dtype=float)
                upper = ssub["upper"].to_numpy(dtype=float)
                slot = (upper - lower) / slots
                counts_ax.bar(lower + j * slot, ssub["n"].to_numpy(dtype=float),
                              width=slot, align="edge", color=color, alpha=0.8,
                              edgecolor=color, linewidth=0.5)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("Observed frequency")
        if headings[i]:
            ax.set_title(headings[i], fontsize="medium")
        if named and not shared:  # a single panel of few curves
            shade = [handles[BAND_LABEL]] if BAND_LABEL in handles else []
            ax.legend(handles=[diagonal, *own, *named, *shade], fontsize="x-small",
                      loc="upper left")
        elif own:
            ax.legend(handles=own, fontsize="x-small", loc="lower right")
        if counts_ax is not None:
            _count_axis(counts_ax, sub["n"].to_numpy(dtype=float), count_scale)
            ax.tick_params(labelbottom=False)
            counts_ax.set_xlabel("Mean confidence")
        else:
            ax.set_xlabel("Mean confidence")
    if shared:  # the curves, then the band
        entries = [h for label, h in handles.items() if label != BAND_LABEL]
        entries += [handles[BAND_LABEL]] if BAND_LABEL in handles else []
        fig.legend(handles=[diagonal, *entries], fontsize="x-small", loc="outside right upper")
    return fig


def _heading(key: tuple, sub: pd.DataFrame, curves: list, panel_by: list, series_by: list,
             show_ece: bool, ece_label: str | dict) -> str:
    """A panel's title: its group keys, and with ``show_ece`` its ECE."""
    heading = [_describe(panel_by, key)] if panel_by else []
    if show_ece:
        value = _table_ece(sub, series_by)
        drawn = [k for k, _ in curves if not _all_missing(k)]
        mean = f" (mean over {len(drawn)} classes)" if len(drawn) > 1 else ""
        label = ece_label.get(key, "ECE") if isinstance(ece_label, dict) else ece_label
        heading.append(f"{label} = {value:.4g}{mean}")
    return "\n".join(heading)


def _count_axis(ax: Any, n: np.ndarray, scale: str) -> None:
    """The y axis of a count histogram: on a log scale from half the smallest
    positive count (or 0.5, whichever is less), so that a bin of one prediction
    is a visible bar, to twice the largest."""
    if scale == "log":
        ax.set_yscale("log")
        positive = n[n > 0]
        low = 0.5 * min(1.0, float(positive.min())) if positive.size else 0.5
        ax.set_ylim(low, max(2.0 * float(positive.max()), 2 * low) if positive.size else 1.0)
        ax.set_ylabel("Count\n(log)")
    else:
        ax.set_ylabel("Count")
