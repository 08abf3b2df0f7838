"""The page of ``calibr compare --html``: the verdict and the exit status in
words, baseline against candidate per group and metric with the paired
difference and its one-sided bound, a chart of the differences, and per group
the two models' reliability diagrams in one figure with their per-bin tables."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._display.format import bins_words, count, esc, key_text, num, pvalue
from ._cli import header_items
from ._page import Cell, Page, Section, Table, render
from ._report import MIN_BIN_COUNT, Figures, bin_table, group_link, worst_bin
from ._svg import Curve, difference_svg, reliability_svg

#: Above this many comparisons the chart of differences is left out (the table has them).
CHART_AT_MOST = 200

#: The per-bin tables of compare's diagrams take calibration_table()'s default bins
#: (read from its signature, so that the default is written once, in calibr/_defaults.py),
#: and the confidence diagram for a multiclass model (one curve per model).


def _group_title(by: list, key: tuple) -> str:
    if not by:
        return "all rows"
    return ", ".join(f"{c} = {key_text(v)}" for c, v in zip(by, key, strict=True))


def verdict(result: pd.DataFrame, by: list, level: float, worse_status: int) -> tuple[str, str]:
    """The verdict box: ("ok" or "worse", its HTML)."""
    worse = result[result["worse"].to_numpy(dtype=bool)]
    n = len(result)
    many = "s" if n != 1 else ""
    alpha = 1.0 - level
    small = int(result["small_n"].sum()) if "small_n" in result else 0
    gating = " of a group that can gate" if small else ""
    if len(worse):
        which = "; ".join(
            esc(str(r["metric"])) + (" (" + esc(_group_title(by, tuple(r[c] for c in by)))
                                     + ")" if by else "") for _, r in worse.iterrows())
        return ("worse", f"<strong>The candidate is significantly worse</strong> in "
                f"{len(worse)} of {n} comparison{many}: {which}. Each is worse than the "
                "baseline's (a larger error, or a smaller score for a metric where higher is "
                f"better) with a one-sided p-value below {alpha:.6g} (level {level:g}). "
                f"<strong>calibr compare exits with status {worse_status}</strong>: a CI job "
                "that gates on it fails.")
    return ("ok", f"<strong>No significant worsening</strong> in {n} comparison{many} at level "
            f"{level:g}: no p-value{gating} is below {alpha:.6g}. <strong>calibr compare "
            "exits with "
            "status 0</strong>: a CI job that gates on it passes. (This does not show that the "
            "candidate is as well calibrated, only that the data do not show it worse.)")


def compare_html(result: pd.DataFrame, by: list, lines: list[str], parts: list,
                 p_base: Any, p_cand: Any, y: Any, classes: Any, level: float,
                 n_resamples: int, worse_status: int, p_adjust: str | None = None,
                 min_n: int = 0) -> str:
    """The page of ``calibr compare --html``.

    Parameters
    ----------
    result : DataFrame
        compare's result: the group keys ``by``, then ``metric``, ``n``,
        ``baseline``, ``candidate``, ``difference``, ``ci_low``, ``ci_high``,
        ``pvalue``, (with ``p_adjust``) ``pvalue_adjusted`` and
        ``pvalue_below_resolution``, ``worse``.
    lines : list of str
        compare's header lines.
    p_adjust : str, optional
        The method of ``--p-adjust`` (R's name), if the p-values were adjusted.
    parts : list of (key tuple, row positions)
        The groups.
    p_base, p_cand, y
        The baseline's and candidate's probability columns (DataFrames, the
        rows matched) and the labels (a Series).
    min_n : int, default 0
        ``--min-n``: a comparison of fewer rows (``small_n`` True in ``result``)
        is shown with its numbers and "n < min_n" in the worse column, and
        never gates.
    """
    from .. import __version__
    from .._input import defaults
    from .._registry import higher_is_better
    from ..table import calibration_table

    first, items = header_items(lines)
    opts = defaults(calibration_table)
    items.append(("diagrams", bins_words(opts["bins"], opts["binning"], opts["right"])
                  + "; a multiclass model's confidence diagram"))
    items.append(("calibr", f"{__version__} (the same input and options write the same file)"))
    head = [(esc(c), "group key", "k") for c in by]
    head += [("metric", "", "k"), ("n", "rows", ""), ("baseline", "the baseline's error", ""),
             ("candidate", "the candidate's error", ""),
             ("difference", "candidate - baseline (larger is worse; smaller for a metric "
              "where higher is better, auroc)", ""),
             (f"bound ({level:g})", "one-sided bound of the difference on the side of no "
              "change: its lower bound (upper for auroc)", ""),
             ("p-value", "of the alternative: the candidate is worse", "")]
    if p_adjust is not None:
        head.append((f"p ({esc(p_adjust)})", f"the p-value adjusted by {esc(p_adjust)!r} over "
                     f"the {len(result)} comparisons", ""))
    head.append(("worse", f"{'adjusted ' if p_adjust else ''}p-value below {1 - level:.6g}",
                 "k"))
    anchors = {}
    for i, (key, _) in enumerate(parts):
        anchors[tuple(key)] = f"g{i + 1}"
    rows = []
    records = result.to_dict("records")
    for r in records:
        key = tuple(r[c] for c in by)
        anchor = anchors.get(key, "")
        title = _group_title(by, key)
        cells = [Cell(group_link(anchor, title, key_text(r[c])) if anchor else
                      esc(key_text(r[c])), cls="k") for c in by]
        worse = bool(r["worse"])
        small = bool(r.get("small_n", False))
        bound = "ci_high" if higher_is_better(r["metric"].partition("(")[0]) else "ci_low"
        cells += [Cell(esc(r["metric"]), cls="k"), Cell(count(r["n"]), repr(float(r["n"]))),
                  Cell(num(r["baseline"]), repr(float(r["baseline"]))),
                  Cell(num(r["candidate"]), repr(float(r["candidate"]))),
                  Cell(num(r["difference"]), repr(float(r["difference"]))),
                  Cell(num(r[bound]), repr(float(r[bound]))),
                  Cell(pvalue(r["pvalue"], n_resamples), repr(float(r["pvalue"])),
                       "sig" if worse and p_adjust is None else "")]
        if p_adjust is not None:
            cells.append(Cell(pvalue(r["pvalue_adjusted"], n_resamples,
                                     bound=bool(r["pvalue_below_resolution"])),
                              repr(float(r["pvalue_adjusted"])), "sig" if worse else ""))
        cells.append(Cell("yes" if worse else (f"n &lt; {min_n}" if small else "no"),
                          "1" if worse else "0", "k sig" if worse else "k"))
        rows.append(cells)
    overview = Table(head, rows, sortable=True, cls="overview")
    figure = ""
    if len(records) <= CHART_AT_MOST:
        labels = [f"{r['metric']}" + (f" ({_group_title(by, tuple(r[c] for c in by))})"
                                      if by else "") for r in records]
        higher = [higher_is_better(r["metric"].partition("(")[0]) for r in records]
        bounds = [r["ci_high"] if h else r["ci_low"] for r, h in zip(records, higher,
                                                                    strict=True)]
        figure = difference_svg(labels, result["difference"].to_numpy(dtype=np.float64),
                                bounds, result["worse"].to_numpy(dtype=bool), level, higher)
    sections = []
    multi = isinstance(p_base, pd.DataFrame) and p_base.shape[1] > 1
    fig = Figures(pd.DataFrame(), band=None)
    for i, (key, idx) in enumerate(parts):
        curves = []
        for name, frame in (("baseline", p_base), ("candidate", p_cand)):
            p = frame.iloc[idx] if multi else frame.iloc[idx, 0]
            tab = calibration_table(p, y.iloc[idx], type="confidence", classes=classes)
            curves.append(Curve(tab, name, None, name))
        title = _group_title(by, tuple(key))
        mine = [r for r in records if tuple(r[c] for c in by) == tuple(key)]
        facts = " &middot; ".join(
            f"{esc(r['metric'])} {num(r['baseline'])} &rarr; {num(r['candidate'])}"
            + (' <span class="sig">worse</span>' if r["worse"] else "") for r in mine)
        worst = worst_bin(curves)
        svg = reliability_svg(curves, f"Reliability diagrams of the baseline and the "
                              f"candidate, {title}", worst=worst, band=False)
        sections.append(Section(f"g{i + 1}", title, facts, svg,
                                bin_table(curves, fig, worst, ("model", ""))))
    legend = ["blue: the baseline; orange: the candidate; points: each bin's observed "
              "frequency against its mean predicted probability (the dashed diagonal: "
              f"calibrated); bars: Wilson 95% intervals; open points: bins of fewer than "
              f"{MIN_BIN_COUNT} samples; red ring: the largest gap of either model; below: "
              "the count of each bin (log scale)."]
    if multi:
        legend.append("confidence diagram: each row's highest probability (its confidence) "
                      "against whether its predicted class is the label.")
    notes = [f"worse: the p-value is below {1 - level:.6g}; each metric and group is its own "
             "test (no correction for multiple comparisons)." if p_adjust is None else
             f"worse: the adjusted p-value is below {1 - level:.6g}; the p-values of the "
             f"{len(result)} comparisons adjusted together by {esc(p_adjust)!r} (calibr.p_adjust,"
             " as R's p.adjust)."]
    if p_adjust is not None:
        notes[0] += (f" A p-value below the resolution of its {n_resamples} resamples "
                     f"(&lt; {1 / n_resamples:g}) is adjusted as {1 / n_resamples:g}: its "
                     "adjusted value, &lt; x, is an upper bound.")
    if result.get("small_n", pd.Series(dtype=bool)).any():
        notes.append(f"n &lt; {min_n}: a group of fewer than {min_n} rows (--min-n) is shown "
                     "and never gates: a bootstrap of so few rows says nothing about the "
                     "population, so its p-value is not read.")
    if figure:
        notes.append("The chart: each comparison's difference (point) and its one-sided "
                     f"{level:g} lower bound (the bar runs from it to the right: the interval "
                     "is one-sided); right of the dashed 0 line the candidate is worse."
                     + (" Where higher is better (" + ", ".join(esc(m) for m in dict.fromkeys(
                         r["metric"] for r, h in zip(records, higher, strict=True) if h))
                        + "): the upper bound, the bar running to the left; left of 0 the "
                        "candidate is worse." if any(higher) else ""))
    title = "Calibration comparison: " + first.replace("calibr compare of ", "", 1)
    page = Page(title, items, overview, sections, notes, verdict(result, by, level, worse_status),
                figure, kind="compare", rows_are=("comparison", "comparisons"), legend=legend)
    return render(page)
