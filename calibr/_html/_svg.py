"""The report's figures, drawn as inline SVG by calibr itself (no matplotlib): a
reliability diagram with its count histogram, Wilson intervals, consistency band
and smooth curve, and the chart of compare's paired differences.

A figure is a few kilobytes of paths (one path per kind of mark, not an element
per bin), so that a report of 1,000 groups stays a few megabytes and opens at
once; ``calibr.plot`` draws the same diagram with matplotlib for print.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._display.format import esc, number_text

#: The colours of the curves of one diagram, in order (colour-blind safe: Okabe-Ito).
COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9")

#: The colour of a panel's single smooth curve (a curve per class keeps its class's).
SMOOTH = "#1d2733"

#: The geometry of a reliability diagram (pixels): its plot square, the count
#: histogram beneath it, and the margins for the axes' labels.
WIDTH, LEFT, RIGHT_MARGIN = 340, 48, 12
TOP, PLOT, GAP, HIST, BOTTOM = 10, 260, 10, 60, 36
HEIGHT = TOP + PLOT + GAP + HIST + BOTTOM

#: A bin of fewer samples than this is drawn as an open circle (its gap is mostly noise).
FEW = 10

#: The smooth curve is drawn faded where fewer rows than this lie within one bandwidth
#: of the prediction (:func:`local_rows`): the same count as an open point's.
SMOOTH_FEW = FEW


@dataclass
class Curve:
    """One curve of a diagram: its per-bin rows (``calibration_table`` columns), its
    label (None for a panel's single curve) and its smooth curve, if any."""

    rows: pd.DataFrame
    label: str | None = None
    smooth: Any = None  # a calibr.SmoothCurve
    key: str | None = None  # the curve's cell in the per-bin table (its class, its model)


def _x(v: float) -> float:
    return LEFT + PLOT * v


def _y(v: float) -> float:
    return TOP + PLOT * (1.0 - v)


def _f(v: float) -> str:
    return f"{v:.1f}"


def _pts(xs: Sequence[float], ys: Sequence[float]) -> str:
    """A polyline's path data; NaN values break the line."""
    parts, pen = [], "M"
    for x, y in zip(xs, ys, strict=True):
        if not (math.isfinite(x) and math.isfinite(y)):
            pen = "M"
            continue
        parts.append(f"{pen}{_f(_x(x))} {_f(_y(min(max(y, 0.0), 1.0)))}")
        pen = "L"
    return "".join(parts)


def local_rows(curve: Any, n: float) -> np.ndarray:
    """About how many of a group's ``n`` rows lie within one bandwidth of each point
    of its smooth curve: ``n * density(x) * 2 * bandwidth`` (the curve's density
    integrates to 1), the rows its value at ``x`` rests on."""
    return n * np.asarray(curve.density, dtype=np.float64) * 2.0 * float(curve.bandwidth)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The runs of True in ``mask`` as (first, last) positions."""
    out, start = [], None
    for i, m in enumerate(mask):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i - 1))
            start = None
    if start is not None:
        out.append((start, len(mask) - 1))
    return out


def smooth_paths(x: np.ndarray, y: np.ndarray, supported: np.ndarray) -> tuple[str, str]:
    """The path data of a smooth curve: through its supported points (drawn as the
    curve), and through its other points (drawn faded), each faded run joined to its
    neighbours so that the line is unbroken."""
    strong = "".join(_pts(x[a:b + 1], y[a:b + 1]) for a, b in _runs(supported) if b > a)
    faded = "".join(_pts(x[max(a - 1, 0):b + 2], y[max(a - 1, 0):b + 2])
                    for a, b in _runs(~supported))
    return strong, faded


def _axes(xlabel: str, ylabel: str) -> list[str]:
    """The frame, grid, ticks and labels of the plot square."""
    ticks = [i / 5 for i in range(6)]
    grid = "".join(f"M{_f(_x(t))} {_f(_y(0))}V{_f(_y(1))}M{_f(_x(0))} {_f(_y(t))}H{_f(_x(1))}"
                   for t in ticks[1:-1])
    out = [
        f'<path class="grid" d="{grid}"/>',
        f'<rect class="frame" x="{_f(_x(0))}" y="{_f(_y(1))}" width="{PLOT}" height="{PLOT}"/>',
        f'<path class="diag" d="M{_f(_x(0))} {_f(_y(0))}L{_f(_x(1))} {_f(_y(1))}"/>',
    ]
    for t in ticks:
        out.append(f'<text class="tick" x="{_f(_x(0) - 5)}" y="{_f(_y(t) + 3.5)}" '
                   f'text-anchor="end">{t:g}</text>')
    hist_bottom = TOP + PLOT + GAP + HIST
    for t in ticks:
        out.append(f'<text class="tick" x="{_f(_x(t))}" y="{hist_bottom + 13}" '
                   f'text-anchor="middle">{t:g}</text>')
    out.append(f'<text class="label" x="{_f(_x(0.5))}" y="{hist_bottom + 29}" '
               f'text-anchor="middle">{esc(xlabel)}</text>')
    out.append(f'<text class="label" transform="translate(13 {_f(_y(0.5))}) rotate(-90)" '
               f'text-anchor="middle">{esc(ylabel)}</text>')
    return out


def _histogram(curves: list[Curve]) -> list[str]:
    """The count histogram beneath the plot, on a log scale from half the smallest
    count (at most 0.5) to twice the largest, as ``calibr.plot`` draws it."""
    top = TOP + PLOT + GAP
    bottom = top + HIST
    out = [f'<rect class="frame" x="{_f(_x(0))}" y="{top}" width="{PLOT}" height="{HIST}"/>']
    counts = np.concatenate([c.rows["n"].to_numpy(dtype=np.float64) for c in curves])
    counts = counts[counts > 0]
    if not len(counts):
        return out
    lo, hi = min(0.5, counts.min() / 2), 2 * counts.max()
    span = math.log(hi) - math.log(lo)
    share = 1.0 / len(curves)
    for j, c in enumerate(curves):
        d = []
        for lower, upper, n in zip(c.rows["lower"], c.rows["upper"], c.rows["n"], strict=True):
            if not n > 0:
                continue
            h = HIST * (math.log(n) - math.log(lo)) / span
            width = (float(upper) - float(lower)) * PLOT
            x = _x(float(lower)) + width * share * j
            d.append(f"M{_f(x)} {_f(bottom)}v{_f(-h)}h{_f(width * share)}v{_f(h)}z")
        out.append(f'<path class="hist" fill="{COLOURS[j % len(COLOURS)]}" d="{"".join(d)}"/>')
    out.append(f'<text class="tick" x="{_f(_x(0) - 5)}" y="{top + 9}" text-anchor="end">'
               f'{esc(_count_text(float(counts.max())))}</text>')
    out.append(f'<text class="label" transform="translate(13 {_f(top + HIST / 2)}) rotate(-90)" '
               'text-anchor="middle">n (log)</text>')
    return out


def _count_text(v: float) -> str:
    return str(int(v)) if v.is_integer() else number_text(v)


def _band(rows: pd.DataFrame, colour: str) -> str:
    """The consistency band of a curve: the region between the bins' bounds at their
    mean confidence (a bar for a single bin), bins with a missing bound left out."""
    if "consistency_lower" not in rows:
        return ""
    keep = rows["consistency_lower"].notna() & rows["consistency_upper"].notna()
    sub = rows[keep.to_numpy()]
    if not len(sub):
        return ""
    x = sub["mean_confidence"].to_numpy(dtype=np.float64)
    lo = sub["consistency_lower"].to_numpy(dtype=np.float64)
    hi = sub["consistency_upper"].to_numpy(dtype=np.float64)
    if len(sub) == 1:
        half = 0.02
        d = (f"M{_f(_x(x[0] - half))} {_f(_y(lo[0]))}H{_f(_x(x[0] + half))}"
             f"V{_f(_y(hi[0]))}H{_f(_x(x[0] - half))}z")
    else:
        d = _pts(x, hi) + _pts(x[::-1], lo[::-1]).replace("M", "L", 1) + "z"
    return f'<path class="band" fill="{colour}" d="{d}"/>'


def _marks(c: Curve, colour: str, worst: int | None) -> list[str]:
    rows = c.rows
    x = rows["mean_confidence"].to_numpy(dtype=np.float64)
    y = rows["observed_frequency"].to_numpy(dtype=np.float64)
    n = rows["n"].to_numpy(dtype=np.float64)
    lo = pd.to_numeric(rows["ci_lower"], errors="coerce").to_numpy(dtype=np.float64)
    hi = pd.to_numeric(rows["ci_upper"], errors="coerce").to_numpy(dtype=np.float64)
    bars = "".join(f"M{_f(_x(a))} {_f(_y(b))}V{_f(_y(t))}"
                   for a, b, t in zip(x, lo, hi, strict=True)
                   if math.isfinite(b) and math.isfinite(t))
    out = []
    if bars:
        out.append(f'<path class="ci" stroke="{colour}" d="{bars}"/>')
    out.append(f'<path class="curve" stroke="{colour}" d="{_pts(x, y)}"/>')
    if c.smooth is not None:
        stroke = SMOOTH if c.label is None else colour
        sx, sy = np.asarray(c.smooth.x), np.asarray(c.smooth.y)
        strong, faded = smooth_paths(sx, sy, local_rows(c.smooth, float(n.sum())) >= SMOOTH_FEW)
        if faded:
            out.append(f'<path class="smooth few" stroke="{stroke}" d="{faded}"/>')
        if strong:
            out.append(f'<path class="smooth" stroke="{stroke}" d="{strong}"/>')
    full = "".join(f"M{_f(_x(a) - 3.2)} {_f(_y(b))}a3.2 3.2 0 1 0 6.4 0a3.2 3.2 0 1 0 -6.4 0z"
                   for a, b, k in zip(x, y, n, strict=True) if k >= FEW)
    few = "".join(f"M{_f(_x(a) - 3.2)} {_f(_y(b))}a3.2 3.2 0 1 0 6.4 0a3.2 3.2 0 1 0 -6.4 0z"
                  for a, b, k in zip(x, y, n, strict=True) if k < FEW)
    if full:
        out.append(f'<path class="pt" fill="{colour}" d="{full}"/>')
    if few:
        out.append(f'<path class="pt few" stroke="{colour}" d="{few}"/>')
    if worst is not None:
        a, b = x[worst], y[worst]
        out.append(f'<path class="worst" d="M{_f(_x(a) - 7)} {_f(_y(b))}a7 7 0 1 0 14 0'
                   f'a7 7 0 1 0 -14 0z"/>')
    return out


#: A diagram of several curves (classes, or two models) is drawn larger, by this
#: factor (its viewBox is the same: marks and text scale together), with its key
#: beneath the plot rather than over the curves.
SEVERAL_SCALE = 1.3

#: The key of a diagram of several curves: items per row, a row's height.
KEY_PER_ROW, KEY_ROW = 3, 16


def _band_of(rows: pd.DataFrame, colour: str, several: bool) -> str:
    """:func:`_band`; with several curves also its edges in its colour, fainter
    filled, so that overlapping bands stay apart."""
    band = _band(rows, colour)
    return band.replace('class="band"', f'class="band several" stroke="{colour}"') \
        if several else band


def reliability_svg(curves: list[Curve], title: str, *, worst: tuple[int, int] | None = None,
                    band: bool = True) -> str:
    """A reliability diagram of ``curves`` as an inline ``<svg>`` element.

    ``worst`` is (curve, row) of the bin with the largest gap, ringed; ``title``
    names the figure for screen readers (``aria-label`` and ``<title>``). With
    several labelled curves the figure is :data:`SEVERAL_SCALE` times larger, the
    bands are outlined and the key is a row under the axis, off the curves."""
    labelled = [(j, c) for j, c in enumerate(curves) if c.label is not None]
    rows = -(-len(labelled) // KEY_PER_ROW)
    height = HEIGHT + KEY_ROW * rows
    scale = SEVERAL_SCALE if labelled else 1.0
    cls = "rd several" if labelled else "rd"
    parts = [f'<svg class="{cls}" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH * scale:g}" '
             f'height="{height * scale:g}" role="img" aria-label="{esc(title)}">',
             f"<title>{esc(title)}</title>"]
    parts += _axes("mean predicted probability (bin)", "observed frequency")
    for j, c in enumerate(curves):
        if band:
            parts.append(_band_of(c.rows, COLOURS[j % len(COLOURS)], len(curves) > 1))
    for j, c in enumerate(curves):
        parts += _marks(c, COLOURS[j % len(COLOURS)],
                        worst[1] if worst is not None and worst[0] == j else None)
    parts += _histogram(curves)
    width = (WIDTH - LEFT - RIGHT_MARGIN) / KEY_PER_ROW
    for i, (j, c) in enumerate(labelled):
        colour = COLOURS[j % len(COLOURS)]
        x = LEFT + width * (i % KEY_PER_ROW)
        y = HEIGHT + KEY_ROW * (i // KEY_PER_ROW) + 11
        parts.append(f'<path class="curve" stroke="{colour}" d="M{_f(x)} {_f(y - 4)}h16"/>'
                     f'<text class="legend" x="{_f(x + 21)}" y="{_f(y)}">'
                     f"{esc(c.label)}</text>")
    parts.append("</svg>")
    return "".join(p for p in parts if p)


def _nice_ticks(lo: float, hi: float) -> list[float]:
    """About five round ticks (steps of 1, 2 or 5 times a power of ten) in [lo, hi]."""
    span = hi - lo or abs(hi) or 1.0
    raw = span / 4
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


#: The geometry of the chart of paired differences: a row per comparison, its label
#: above its bar, so that the chart is narrow enough for a phone (it scales with its
#: container, never wider than this) and a long label takes the whole width.
DIFF_WIDTH, DIFF_MARGIN, DIFF_ROW = 400, 12, 34

#: A longer label is cut to this many characters (with "…"; the whole label is its
#: tooltip, and the table above the chart has it): 11 px text in the chart's width.
DIFF_LABEL_CHARS = 60


def difference_svg(labels: list[str], estimates: Sequence[float], bounds: Sequence[float],
                   worse: Sequence[bool], level: float,
                   higher: Sequence[bool] | None = None) -> str:
    """compare's differences (candidate - baseline) with their one-sided bound at
    ``level``: a row per comparison (its label, then its point and a bar from the
    bound to the edge on the side of "worse"), 0 marked; rows significantly worse in
    the candidate's colour. ``higher``: per row, whether the metric is better when
    higher (``calibr._registry.higher_is_better``): its bound is the upper one and
    its bar runs to the left edge; otherwise (the default) the lower bound and the
    right edge."""
    est = np.asarray(estimates, dtype=np.float64)
    low = np.asarray(bounds, dtype=np.float64)
    up = np.zeros(est.shape[0], dtype=bool) if higher is None else np.asarray(higher, bool)
    finite = np.concatenate([est[np.isfinite(est)], low[np.isfinite(low)], [0.0]])
    lo, hi = float(finite.min()), float(finite.max())
    pad = 0.08 * (hi - lo or 1.0)
    lo, hi = lo - pad, hi + pad
    plot_w = DIFF_WIDTH - 2 * DIFF_MARGIN
    height = DIFF_ROW * len(labels) + 44

    def x(v: float) -> float:
        return DIFF_MARGIN + plot_w * (v - lo) / (hi - lo)

    parts = [f'<svg class="diff" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {DIFF_WIDTH} {height}" width="{DIFF_WIDTH}" height="{height}" '
             'role="img" aria-label="paired differences, candidate minus baseline">',
             "<title>paired differences, candidate minus baseline</title>",
             f'<path class="zero" d="M{_f(x(0))} 4V{height - 30}"/>']
    for i, (label, e, b, w, u) in enumerate(zip(labels, est, low, worse, up, strict=True)):
        yc = 24 + DIFF_ROW * i
        colour = COLOURS[1] if w else COLOURS[0]
        shown = label if len(label) <= DIFF_LABEL_CHARS else label[:DIFF_LABEL_CHARS - 1] + "…"
        parts.append(f'<text class="legend" x="{DIFF_MARGIN}" y="{yc - 9}">'
                     f"<title>{esc(label)}</title>{esc(shown)}</text>")
        if math.isfinite(b):  # the bar runs from the bound to the side of "worse"
            parts.append(f'<path class="ci" stroke="{colour}" d="M{_f(x(b))} {yc}'
                         f'H{_f(x(lo if u else hi))}M{_f(x(b))} {yc - 5}v10"/>')
        if math.isfinite(e):
            parts.append(f'<path class="pt" fill="{colour}" d="M{_f(x(e) - 4)} {yc}'
                         'a4 4 0 1 0 8 0a4 4 0 1 0 -8 0z"/>')
    axis_y = height - 28
    parts.append(f'<path class="frame" d="M{DIFF_MARGIN} {axis_y}H{DIFF_MARGIN + plot_w}"/>')
    for t in _nice_ticks(lo + pad, hi - pad):
        parts.append(f'<text class="tick" x="{_f(x(t))}" y="{axis_y + 12}" '
                     f'text-anchor="middle">{esc(number_text(float(t)))}</text>')
    parts.append(f'<text class="label" x="{DIFF_WIDTH / 2:g}" y="{axis_y + 25}" '
                 f'text-anchor="middle">difference (bar: one-sided {level:g} bound)</text>')
    parts.append("</svg>")
    return "".join(parts)
