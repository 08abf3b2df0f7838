"""The report's page: the overview of every group (the summary that the terminal
report prints, with the same columns), and each group's section (its reliability
diagram and per-bin table), for ``calibr report --html`` and
:func:`calibr.html_report`.

Both build the summary in the terminal report's layout (group keys, ``form``,
``bins``, ``n``, each metric with ``<metric>_low``/``_high`` under ``--confidence-level`` and
``<mce>_bin_n`` after an MCE, ``<test>_statistic``/``_pvalue``) and the
:class:`Figures` of the groups; :func:`report_page` turns them into a
:class:`~calibr._html._page.Page`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._display.format import count, esc, key_text, num, pvalue, pvalue_at_resolution
from .._inference.multitest import below_resolution, p_adjust
from ..table import CONSISTENCY_RESAMPLES
from ._page import Cell, Page, Section, Table
from ._svg import FEW, SMOOTH_FEW, Curve, reliability_svg

#: An MCE from a bin of fewer samples than this is flagged, as the terminal report
#: flags it (``calibr.cli.MCE_MIN_BIN_COUNT``).
MIN_BIN_COUNT = FEW

#: The level below which an (adjusted) p-value is shown in bold: a cue, not a verdict.
SIGNIFICANT = 0.05
#: The mark of a test run on fewer rows than it holds its level from (``<test>_small_n``;
#: ``docs/calibration_tests.md``, "Small samples"): its p-value is never bold.
SMALL_N_MARK = "&sect;"

#: The report's default level of the consistency band (its resamples:
#: ``calibr.table.CONSISTENCY_RESAMPLES``).
CONSISTENCY = 0.9


def intervals_words(level: float, method: str, n_resamples: int) -> str:
    """The header's words for the bootstrap intervals."""
    return (f"{level:g} {method} bootstrap intervals of every metric (calibr.bootstrap), "
            f"{n_resamples} resamples of each group's rows")


def seed_words(rng: Any, *, band: bool, tests: bool, intervals: bool,
               several: bool = False) -> str:
    """The header's words for the seed: what draws random numbers from it (the
    consistency band, the tests that resample, the bootstrap intervals), and how
    (``docs/cli.md``, "The HTML report"); that it is unused when nothing does.
    ``several``: the groups of several data sets, each spawned on its own."""
    uses = [what for what, used in (("the consistency band", band),
                                    ("the tests' resamples", tests),
                                    ("the bootstrap intervals", intervals)) if used]
    if isinstance(rng, (int, np.integer)):
        seed, spawn = f"{int(rng)}", f"numpy.random.SeedSequence({int(rng)}).spawn(groups)[g]"
    elif rng is None:
        seed, spawn = "None (fresh entropy: another run draws other numbers)", \
            "a fresh numpy.random.SeedSequence().spawn(groups)[g]"
    else:
        seed, spawn = "a numpy.random.Generator", "its seed sequence's .spawn(groups)[g]"
    if not uses:
        return f"{seed}; unused: no consistency band, resampling test or interval here " \
               "draws random numbers"
    where = " of each data set" if several else ""
    what = ", ".join(uses[:-1]) + (" and " if len(uses) > 1 else "") + uses[-1]
    text = f"{seed}, for {what}: group g{where} draws from {spawn}"
    direct = " and ".join(w for w, used in (("the band", band), ("the tests", tests)) if used)
    if intervals and direct:
        text += f"; {direct} from it, the intervals from its first child (.spawn(1)[0])"
    elif intervals:
        text += " (the intervals from its first child, .spawn(1)[0])"
    return text


class _Missing:
    """Stands for a missing group key in the keys that match rows to groups."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def norm_key(key: Sequence[Any]) -> tuple:
    """A group key that can be compared and hashed: missing values (NaN, None,
    NA, NaT) all become one marker."""
    out = []
    for v in key:
        try:
            missing = bool(pd.isna(v))
        except (TypeError, ValueError):
            missing = False
        out.append(_MISSING if missing else v)
    return tuple(out)


@dataclass
class Figures:
    """What the sections of one input draw: its stacked per-bin table (group keys,
    ``class`` for a classwise table, then the columns of ``calibration_table``,
    with the consistency band's when there is one), the smooth curve of each group
    (by :func:`norm_key` of its keys) and notes that apply to all its groups."""

    table: pd.DataFrame
    smooth: dict[tuple, Any] = field(default_factory=dict)
    band: float | None = None
    right: bool = True
    ci_level: float = 0.95
    prefix: tuple = ()  # keys put before the table's own (the CLI's data set tag)
    notes: list[str] = field(default_factory=list)
    #: the number of classes when the diagrams are confidence diagrams of classwise metrics
    top_label: int | None = None


def figures(data: Any, p: Any, y: Any, *, bins: Any, type: str, binning: str, right: bool,
            classes: Any, na_rm: bool, weights: Any, rng: Any, smooth: bool,
            p_prefix: str | None = None, consistency: float | None = CONSISTENCY,
            n_resamples: int = CONSISTENCY_RESAMPLES) -> Figures:
    """The :class:`Figures` of ``data`` (a DataFrame or DataFrameGroupBy): its
    per-bin table of form ``type`` with the consistency band at level
    ``consistency`` (none with ``weights``, which the band does not take, or for
    isotonic bins), and with ``smooth`` each group's smooth curve
    (:func:`calibr.smece_curve`; binary or confidence tables only). The band's
    defaults are :func:`calibr.html_report`'s (``calibr report --html`` takes them)."""
    from .._input.groups import groups_of, resolve_columns
    from .._metrics.smooth import smece_curve
    from ..table import calibration_table

    notes = []
    band = consistency
    if band is not None and (weights is not None or binning == "isotonic"):
        notes.append("no consistency band: "
                     + ("it does not take frequency weights." if weights is not None else
                        "isotonic bins are chosen from the outcomes."))
        band = None
    options = {"consistency": band, "n_resamples": n_resamples, "rng": rng} if band else {}
    table = calibration_table(p, y, bins=bins, type=type, classes=classes, na_rm=na_rm,
                              data=data, p_prefix=p_prefix, weights=weights, binning=binning,
                              right=right, **options)
    curves: dict[tuple, Any] = {}
    if smooth:
        groups = groups_of(data)
        cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
        if weights is not None:
            notes.append("no smooth curve: calibr.smece_curve() takes no frequency weights.")
        elif not cols.binary and type == "classwise":
            notes.append("no smooth curve: it is drawn for binary and confidence diagrams "
                         "(calibr.smece_curve() reduces classes to the confidence).")
        else:
            key_cols = [] if groups.keys is None else list(groups.keys.columns)
            for g, rows in groups.rows():
                sub = groups.frame.iloc[rows]
                key = () if groups.keys is None else tuple(groups.keys.iloc[g][key_cols])
                curves[norm_key(key)] = smece_curve(sub[cols.p], sub[cols.y],
                                                    classes=cols.classes, na_rm=na_rm)
    return Figures(table, curves, band, right, 0.95, (), notes)


# --------------------------------------------------------------------------
# the page


@dataclass
class Spec:
    """The columns of a summary: its group keys, each metric (name, function name),
    each test (name, its p-value's resamples or None for an analytic one), the
    interval level of ``--confidence-level`` (None without) and its method."""

    keys: list[Hashable]
    metrics: list[tuple[str, str]]
    tests: list[tuple[str, int | None]] = field(default_factory=list)
    ci: float | None = None
    ci_method: str = "percentile"


def _groups_of_figures(figs: list[Figures]) -> dict[tuple, tuple[pd.DataFrame, Figures]]:
    """Each group's per-bin rows (by :func:`norm_key` of its full key) and figures."""
    out: dict[tuple, tuple[pd.DataFrame, Figures]] = {}
    for fig in figs:
        cols = list(fig.table.columns)
        keys = [c for c in cols[: cols.index("bin")] if c != "class"]
        if not keys:
            out[norm_key(fig.prefix)] = (fig.table, fig)
            continue
        for key, rows in fig.table.groupby(keys, sort=False, dropna=False, observed=True):
            key = key if isinstance(key, tuple) else (key,)
            out[norm_key((*fig.prefix, *key))] = (rows, fig)
    return out


def _curves(rows: pd.DataFrame, smooth: Any) -> list[Curve]:
    """The curves of one group's rows: one per class of a classwise table, else one."""
    if "class" in rows and rows["class"].notna().any():
        return [Curve(sub, f"class {key_text(c)}", None, key_text(c)) for c, sub in
                rows.groupby("class", sort=False, dropna=False, observed=True)]
    return [Curve(rows, None, smooth)]


def worst_bin(curves: list[Curve]) -> tuple[int, int] | None:
    """(curve, row) of the bin with the largest gap (ties: the largest count), the
    bin the MCE of these bins comes from."""
    best, where = None, None
    for j, c in enumerate(curves):
        for i, (gap, n) in enumerate(zip(c.rows["gap"], c.rows["n"], strict=True)):
            score = (float(gap), float(n))
            if best is None or score > best:
                best, where = score, (j, i)
    return where


def _interval(lo: Any, hi: Any) -> str:
    if pd.isna(lo) or pd.isna(hi):
        return "&ndash;"
    return f"[{num(lo)}, {num(hi)}]"


def _range(lower: float, upper: float, right: bool, first: bool, last: bool) -> str:
    left = "[" if (not right or first) else "("
    close = "]" if (right or last) else ")"
    return f"{left}{num(lower)}, {num(upper)}{close}"


def bin_table(curves: list[Curve], fig: Figures, worst: tuple[int, int] | None,
              what: tuple[str, str] = ("class", "the class (one-vs-rest)")) -> Table:
    """The per-bin table of a group's ``curves``: a row per bin (per curve: a column
    ``what`` names them), the bin with the largest gap and those of few samples
    tagged."""
    classes = any(c.key is not None for c in curves)
    band = fig.band is not None and "consistency_lower" in curves[0].rows
    head = [(what[0], what[1], "k")] if classes else []
    head += [("bin", "", "k"), ("range", "the bin's edges", "k"),
             ("n", "predictions in the bin", ""),
             ("mean predicted", "the mean predicted probability of the bin", ""),
             ("observed", "the share of the bin's outcomes that are 1 (the event)", ""),
             (f"Wilson {fig.ci_level:.0%}", "the Wilson score interval of the observed "
              "frequency", ""),
             ("gap", "|observed - mean predicted|", "")]
    if band:
        head.append((f"consistency {fig.band:.0%}", "the observed frequencies a calibrated "
                     "model with these predictions would show (Bröcker & Smith 2007)", ""))
    head.append(("", "", ""))
    rows = []
    for j, c in enumerate(curves):
        r = c.rows
        top = float(r["upper"].max())
        for i, row in enumerate(r.itertuples(index=False)):
            rec = row._asdict()
            few = float(rec["n"]) < MIN_BIN_COUNT
            is_worst = worst == (j, i)
            cells = [Cell(esc(c.key or ""), cls="k")] if classes else []
            cells += [Cell(str(int(rec["bin"])), cls="k"),
                      Cell(_range(rec["lower"], rec["upper"], fig.right, int(rec["bin"]) == 1,
                                  float(rec["upper"]) >= top), cls="k"),
                      Cell(count(rec["n"]), cls="few" if few else ""),
                      Cell(num(rec["mean_confidence"])), Cell(num(rec["observed_frequency"])),
                      Cell(_interval(rec["ci_lower"], rec["ci_upper"])), Cell(num(rec["gap"]))]
            if band:
                cells.append(Cell(_interval(rec["consistency_lower"], rec["consistency_upper"])))
            tags = ('<span class="tag worst">largest gap</span>' if is_worst else "") + (
                f'<span class="tag few">n &lt; {MIN_BIN_COUNT}</span>' if few else "")
            cells.append(Cell(tags, cls="k"))
            if is_worst:
                cells = [Cell(x.html, x.sort, f"{x.cls} worst".strip()) for x in cells]
            rows.append(cells)
    return Table(head, rows, cls="bins")


def _title(spec: Spec, row: dict) -> str:
    if not spec.keys:
        return "all rows"
    return ", ".join(f"{k} = {key_text(row[k])}" for k in spec.keys)


def excludes_estimate(estimate: Any, low: Any, high: Any) -> np.ndarray:
    """Whether each interval ``[low, high]`` leaves out its ``estimate`` (possible:
    see :data:`OUTSIDE_NOTE`); a missing value is not outside. The one rule of the
    HTML's dagger and the command line's mark and column (``docs/cli.md``)."""
    v, lo, hi = (np.asarray(x, dtype=np.float64) for x in (estimate, low, high))
    return (v < lo) | (v > hi)  # NaN compares False


def outside(row: dict, name: str) -> bool:
    """Whether the bootstrap interval of metric ``name`` in ``row`` leaves out its
    estimate (:func:`excludes_estimate`)."""
    lo, hi, v = row.get(f"{name}_low"), row.get(f"{name}_high"), row[name]
    if lo is None or hi is None or any(pd.isna(x) for x in (lo, hi, v)):
        return False
    return bool(excludes_estimate(v, lo, hi))


#: The mark of an interval that leaves out its estimate, and what it means.
OUTSIDE_MARK = "&dagger;"
OUTSIDE_NOTE = ("the interval does not contain the estimate. This can happen: the interval "
                "is read from the metric's values on resamples of the group's rows, and "
                "resampling adds noise that a binned error (a mean or maximum of absolute "
                "gaps) counts as miscalibration, so those values can all lie above a small "
                "estimate. The estimate is the metric of the rows as they are; the interval "
                "is the spread of the metric under resampling.")


def _metric_cell(row: dict, name: str, spec: Spec, flagged: bool) -> tuple[Cell, bool]:
    v = row[name]
    html = num(v) + ('<span class="flag" title="from a bin of fewer than '
                     f'{MIN_BIN_COUNT} samples">*</span>' if flagged else "")
    out = False
    if spec.ci is not None and f"{name}_low" in row:
        out = outside(row, name)
        mark = (f'<span class="flag" title="the interval does not contain the estimate">'
                f"{OUTSIDE_MARK}</span>" if out else "")
        html += (f'<span class="ci">{_interval(row[f"{name}_low"], row[f"{name}_high"])}'
                 f"{mark}</span>")
    return Cell(html, repr(float(v))), out


def bin_n_column(metric: str) -> str:
    """The column of the page's own that holds the count of the bin the MCE
    ``metric`` comes from."""
    return f"{metric}_bin_n"


def report_page(summary: pd.DataFrame, spec: Spec, figs: list[Figures], *,
                header: list[tuple[str, str]], title: str,
                own: pd.DataFrame | None = None) -> Page:
    """The page of a report: ``summary`` (one row per group, in the terminal
    report's layout; see the module's docstring), ``spec`` its columns, ``figs``
    the figures of each input.

    ``own``: the page's own columns, row for row with ``summary``: ``n``, and
    ``form``, ``bins`` and :func:`bin_n_column` of each MCE where there are. They
    live apart from the metrics' and tests' columns, whose names the user chooses,
    so that a metric named ``n`` or ``bins`` is shown as a metric and never in
    their place. None: read from ``summary`` (the terminal report's layout, whose
    metric names are the command line's, ``calibr report --metrics``)."""
    rows = summary.to_dict("records")
    own = summary if own is None else own
    owns = own.to_dict("records")
    several = len(rows) > 1
    # a p-value below the resolution 1/B of its resamples is adjusted as 1/B, and its
    # adjusted value is an upper bound (docs/calibration_tests.md)
    resolution = {t: None if n_res is None else 1.0 / n_res for t, n_res in spec.tests}
    adjusted = {t: p_adjust(summary[f"{t}_pvalue"].to_numpy(dtype=np.float64), "holm",
                            resolution=resolution[t]) for t, _ in spec.tests} if several else {}
    bound = {t: below_resolution(summary[f"{t}_pvalue"], resolution[t])
             for t, _ in spec.tests}
    show_form = "form" in own and own["form"].nunique(dropna=False) > 1
    show_bins = "bins" in own and own["bins"].nunique(dropna=False) > 1

    head = [(esc(k), "group key", "k") for k in spec.keys]
    head += [("form", "the form of the metrics", "k")] * show_form
    head += [("bins", "the bins of the metrics", "")] * show_bins
    head.append(("n", "rows of the group", ""))
    level = f" and its {spec.ci:g} interval" if spec.ci is not None else ""
    for name, func in spec.metrics:
        head.append((esc(name), f"{func}{level}", ""))
        if func == "mce":
            head.append((esc(f"{name} bin n"), "samples in the bin the MCE comes from", ""))
    for name, _ in spec.tests:
        head.append((esc(f"{name} p"), f"p-value of the test {name} (null hypothesis: "
                     "calibrated)", ""))
        if several:
            head.append((esc(f"{name} p (Holm)"), "the p-value adjusted by Holm's method over "
                         f"the {len(rows)} groups", ""))

    lookup = _groups_of_figures(figs)
    table_rows, sections, any_flag, any_outside, any_small = [], [], False, False, False
    for i, (row, mine) in enumerate(zip(rows, owns, strict=True)):
        anchor = f"g{i + 1}"
        key = norm_key([row[k] for k in spec.keys])
        label = _title(spec, row)
        # every key cell links to the group; each link is named by the whole label
        cells = [Cell(group_link(anchor, label, key_text(row[k])), cls="k") for k in spec.keys]
        if show_form:
            cells.append(Cell(esc(mine["form"]), cls="k"))
        if show_bins:
            cells.append(Cell(esc(mine["bins"]), repr(float(mine["bins"]))))
        cells.append(Cell(count(mine["n"]), repr(float(mine["n"]))))
        facts = [f"n {count(mine['n'])}"]
        # a confidence diagram under classwise metrics: the heading says which is which
        found = lookup.get(key)
        classwise = " (classwise)" if found is not None and found[1].top_label is not None \
            else ""
        for name, func in spec.metrics:
            bin_n = mine.get(bin_n_column(name)) if func == "mce" else None
            flagged = bin_n is not None and float(bin_n) < MIN_BIN_COUNT
            any_flag |= flagged
            cell, out = _metric_cell(row, name, spec, flagged)
            any_outside |= out
            cells.append(cell)
            facts.append(f"{esc(name)}{classwise} {num(row[name])}" + ("*" if flagged else ""))
            if func == "mce":
                cells.append(Cell(count(bin_n), repr(float(bin_n)), "few" if flagged else ""))
        for name, n_res in spec.tests:
            p = row[f"{name}_pvalue"]
            # bold on the value read at the resolution: "< 0.06" is not below 0.05
            shown = adjusted[name][i] if several else pvalue_at_resolution(p, n_res)
            small = row.get(f"{name}_small_n") is True or row.get(f"{name}_small_n") == 1
            any_small |= small
            mark = (f'<span class="flag" title="fewer rows than the test holds its level '
                    f'from">{SMALL_N_MARK}</span>' if small else "")
            bold = shown < SIGNIFICANT and not small
            cells.append(Cell(pvalue(p, n_res) + mark, repr(float(p)),
                              "" if several or not bold else "sig"))
            if several:
                cells.append(Cell(pvalue(shown, n_res, bound=bool(bound[name][i])) + mark,
                                  repr(float(shown)), "sig" if bold else ""))
            facts.append(f"{esc(name)} p {pvalue(p, n_res)}" + mark)
        table_rows.append(cells)
        sections.append(_section(anchor, label, " &middot; ".join(facts), row,
                                 spec, lookup.get(key)))

    notes = [_glossary(spec)] if _glossary(spec) else []
    if any_flag:
        notes.append(f"<span class=\"flag\">*</span> the MCE comes from a bin of fewer than "
                     f"{MIN_BIN_COUNT} samples (the bin n column): a gap measured on so few "
                     "samples is mostly noise.")
    if spec.tests and several:
        notes.append(f"p (Holm): each test's p-values adjusted over the {len(rows)} groups "
                     f"(Holm's step-down method, as R's p.adjust); bold below {SIGNIFICANT:g}."
                     + (" A p-value below the resolution of its resamples (&lt; 1/B) is "
                        "adjusted as 1/B: its adjusted value, &lt; x, is an upper bound."
                        if any(n_res is not None for _, n_res in spec.tests) else ""))
    elif spec.tests:
        notes.append(f"p-values below {SIGNIFICANT:g} are bold.")
    if spec.ci is not None:
        notes.append(f"Under each metric: its {spec.ci:g} {esc(spec.ci_method)} bootstrap "
                     "interval.")
    if any_outside:
        notes.append(f'<span class="flag">{OUTSIDE_MARK}</span> {OUTSIDE_NOTE}')
    if any_small:
        notes.append(f'<span class="flag">{SMALL_N_MARK}</span> the group has fewer rows than '
                     "the test holds its level from (docs/calibration_tests.md, \"Small "
                     "samples\"): on calibrated data it rejects more often than the level "
                     "says, so its p-value is not bold.")
    overview = Table(head, table_rows, sortable=True, cls="overview")
    return Page(title, header, overview, sections, notes, legend=legend(figs, spec))


def group_link(anchor: str, title: str, text: str) -> str:
    """A link to a group's section, showing ``text`` (a key) and named by the
    group's whole label ``title`` (screen readers and a list of links hear
    "dataset = breast_cancer, model = logistic", not "breast_cancer" three times)."""
    return f'<a href="#{esc(anchor)}" aria-label="{esc(title)}" title="{esc(title)}">' \
           f"{esc(text)}</a>"


#: What each metric measures, in a reader's words (``docs/definitions.md`` has the formulas).
METRIC_WORDS = {
    "ece": "the gap between predicted probability and observed frequency, averaged over "
           "the bins weighted by their counts (0: calibrated)",
    "mce": "the largest gap of any bin",
    "skce": "a kernel estimate of the squared calibration error (about 0 when calibrated)",
    "mmce": "the maximum mean calibration error, a kernel estimate (0 when calibrated)",
    "brier": "the mean squared difference between the predicted probabilities and the "
             "outcomes (0: perfect; it counts discrimination as well as calibration)",
    "log_loss": "the mean of minus the log of the probability given to the outcome "
                "(0: perfect; inf when an outcome was given probability 0)",
    "auroc": "the probability that a random positive is scored above a random negative "
             "(ties one half; 0.5: no discrimination, 1: perfect)",
    "calibration_error": "the Lp norm of the bins' gaps, plug-in or debiased (0: calibrated)",
    "smece": "the gap between prediction and outcome after a kernel smoothing of the "
             "predictions (0: calibrated)",
    "ecce": "the largest cumulative gap along the sorted predictions (0: calibrated)",
    "aurc": "the error rate of the most confident predictions, averaged over every share "
            "of them accepted (the area under the risk-coverage curve; lower is better)",
    "e_aurc": "the AURC minus the smallest AURC any confidence could give the same "
              "predictions (0: every correct prediction ranked above every error)",
    "augrc": "the share of the rows that are accepted and wrong, averaged over the share "
             "accepted (lower is better)",
    "selective_accuracy": "the accuracy of the most confident predictions at a coverage "
                          "(higher is better)",
    "recalibration_gain": "how much of a loss a cross-fitted recalibration of the "
                          "predictions removes (0: nothing to gain)",
}


def _glossary(spec: Spec) -> str:
    """The note that says what the overview's metrics and p-values are."""
    words = [f"<strong>{esc(name)}</strong>: {METRIC_WORDS[func]}"
             for name, func in spec.metrics if func in METRIC_WORDS]
    if spec.tests:
        words.append("<strong>p</strong>: a calibration test's p-value (the null hypothesis: "
                     "the predictions are calibrated); a small p-value is evidence of "
                     "miscalibration")
    if spec.ci is not None:
        words.append(f"<strong>interval</strong>: the {spec.ci:g} {esc(spec.ci_method)} "
                     "bootstrap interval of the metric over resamples of the group's rows; "
                     f"it need not contain the estimate ({OUTSIDE_MARK} where it does not)")
    return "; ".join(words) + "." if words else ""


def legend(figs: list[Figures], spec: Spec) -> list[str]:
    """How to read the diagrams, said once above the groups: what every diagram of
    the page draws (a group's own differences are its section's notes)."""
    fig = next((f for f in figs if len(f.table)), figs[0] if figs else None)
    if fig is None:
        return []
    what = ["points: each bin's observed frequency against its mean predicted probability "
            "(the dashed diagonal: calibrated)",
            f"bars: Wilson {fig.ci_level:.0%} intervals",
            f"open points: bins of fewer than {MIN_BIN_COUNT} samples",
            "red ring: the bin with the largest gap"]
    bands = sorted({f.band for f in figs if f.band is not None})
    if bands:
        what.append("shaded: the " + " or ".join(f"{b:.0%}" for b in bands)
                    + " consistency band, where a calibrated model's points would fall "
                    "(Bröcker & Smith 2007)")
    what.append("below: the count of each bin (log scale)")
    if any("class" in f.table and f.table["class"].notna().any() for f in figs):
        what.append("classwise: a curve per class, one-vs-rest (the key under the diagram; "
                    "each class's band outlined in its colour)")
    out = ["; ".join(what) + "."]
    if any(f.smooth for f in figs):
        out.append(SMOOTH_LEGEND)
    return out


#: The smooth curve's legend: the curve and its density cue (``docs/cli.md``, "The HTML
#: report").
SMOOTH_LEGEND = (f"dark dashed: the smooth reliability curve (calibr.smece_curve), drawn faded "
                 f"where fewer than {SMOOTH_FEW} rows lie within one bandwidth of the "
                 "prediction: there it follows a handful of outcomes and can swing between "
                 "0 and 1 without meaning much.")


def _top_label_note(k: int, curves: list[Curve], worst: tuple[int, int] | None, row: dict,
                    spec: Spec) -> str:
    """The note of a confidence diagram drawn while the metrics are classwise: both
    largest gaps, side by side, and why they differ. Shown above the diagram, where
    the section's heading has just given the classwise numbers."""
    text = (f"confidence diagram: with {k} classes the diagram and the per-bin table show "
            "each row's highest probability (its confidence) against whether its predicted "
            "class is the label")
    if worst is None:
        return text + "; the metrics in the heading are classwise (one-vs-rest for each class)."
    gap = curves[worst[0]].rows["gap"].iloc[worst[1]]
    text += (f". Their largest gap, {num(gap)}, is the confidence MCE (calibr.mce with "
             'type="confidence")')
    mces = [name for name, func in spec.metrics if func == "mce"]
    if mces:
        text += "; the " + ", ".join(f"{esc(name)} in the heading, {num(row[name])},"
                                     for name in mces)
        text += (" is classwise: the largest gap of any class, each class one-vs-rest in its "
                 "own bins. They measure different things and need not agree.")
    else:
        text += "; the metrics in the heading are classwise (one-vs-rest for each class)."
    return text


def _section(anchor: str, title: str, facts: str, row: dict, spec: Spec,
             found: tuple[pd.DataFrame, Figures] | None) -> Section:
    if found is None:  # an unobserved group (observed=False): no rows, nothing to draw
        return Section(anchor, title, facts, "", Table([], []),
                       ["This group has no rows: nothing to draw."])
    rows, fig = found
    key = norm_key([row[k] for k in spec.keys])
    smooth = fig.smooth.get(key[len(fig.prefix):]) if fig.smooth else None
    curves = _curves(rows.reset_index(drop=True), smooth)
    worst = worst_bin(curves)
    svg = reliability_svg(curves, f"Reliability diagram of {title}", worst=worst)
    notes = list(fig.notes)  # what differs from the legend above the groups
    lead = ([] if fig.top_label is None else
            [_top_label_note(fig.top_label, curves, worst, row, spec)])
    if smooth is not None:
        notes.append(f"smooth curve: bandwidth {num(smooth.bandwidth)}, smooth ECE "
                     f"{num(smooth.smece)}.")
    return Section(anchor, title, facts, svg, bin_table(curves, fig, worst), notes, lead)


def bin_count_of_mce(table: pd.DataFrame, keys: list) -> dict[tuple, float]:
    """Per group (by :func:`norm_key`): the count of the bin with the largest gap of
    ``table`` (over all classes; ties: the largest count), the bin of the MCE."""
    out: dict[tuple, float] = {}
    parts = ([((), table)] if not keys else
             table.groupby(keys, sort=False, dropna=False, observed=True))
    for key, rows in parts:
        key = key if isinstance(key, tuple) else (key,)
        gap = rows["gap"].to_numpy(dtype=np.float64)
        n = rows["n"].to_numpy(dtype=np.float64)
        best = np.lexsort((-n, -gap))[0]
        out[norm_key(key)] = float(n[best])
    return out

