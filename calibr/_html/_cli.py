"""The pages of the command line: ``calibr report --html`` from the summary the
terminal report prints, and its header lines; the command only writes the
string this returns (``calibr.cli._report``)."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ._page import render
from ._report import Figures, Spec, report_page

#: The terminal header's words before ": " and the header's names for them.
_LABELS = {"bins": "bins", "form": "form", "tests": "tests", "seed": "seed",
           "intervals": "intervals", "engine": "engine", "weights": "weights"}


#: The word before ": " of a header line of the form "what: text".
_WORD = re.compile(r"[a-z][a-z_ ]{0,19}")


def header_items(lines: list[str]) -> tuple[str, list[tuple[str, str]]]:
    """The terminal report's header (``calibr report of X``, ``bins: ...``) as the
    page's subtitle and its (what, text) items."""
    first, items = lines[0], []
    for line in lines[1:]:
        what, sep, text = line.partition(": ")
        if sep and _WORD.fullmatch(what):
            items.append((_LABELS.get(what, what), text))
            continue
        what, sep, text = line.partition(" = ")
        if sep and _WORD.fullmatch(what):  # "difference = candidate - baseline (...)"
            items.append((what, text))
        else:  # a sentence: every row of the header has a label
            items.append(("note", line))
    return first, items


def report_html(summary: pd.DataFrame, spec: Spec, figs: list[Figures], lines: list[str],
                data: list[tuple[str, int | None, str]], bins: str,
                consistency_resamples: int, seed: str, intervals: str | None) -> str:
    """The page of ``calibr report --html``.

    Parameters
    ----------
    summary : DataFrame
        The report's rows, as the terminal prints them (``spec`` names its columns).
    spec : Spec
    figs : list of Figures
        Each input's figures (the CLI's data set tag in ``prefix``).
    lines : list of str
        The terminal report's header lines.
    data : list of (label, rows, columns)
        Each input: its name, its number of data rows (None if not counted: a
        directory of files) and the words for its columns.
    bins : str
        The words for the bins and their closure.
    consistency_resamples : int
        The resamples of the consistency bands.
    seed : str
        The words for the seed and what draws from it
        (:func:`calibr._html._report.seed_words`): the page's one line on the seed,
        in place of the terminal's (which names only the tests' and intervals').
    intervals : str or None
        The words for the bootstrap intervals, without the terminal's seed clause.
    """
    from .. import __version__

    first, items = header_items(lines)
    items = [(k, bins if k == "bins" else intervals if k == "intervals" else
              v + "; null hypothesis: calibrated" if k == "tests" else v)
             for k, v in items if k != "seed"]
    if not any(k == "bins" for k, _ in items):
        items.insert(0, ("bins", bins))
    head = [("data", "; ".join(f"{label}: {rows} rows" if rows is not None else label
                               for label, rows, _ in data))]
    words = list(dict.fromkeys(words for _, _, words in data))
    if len(words) == 1:
        head.append(("columns", words[0]))
    else:
        head += [(f"columns of {label}", w) for label, _, w in data]
    band = next((f.band for f in figs if f.band is not None), None)
    if band is not None:
        items.append(("consistency band", f"{band:g}, {consistency_resamples} resamples per "
                      "group (Bröcker & Smith 2007)"))
    items.append(("seed", seed))
    items.append(("calibr", f"{__version__} (the same input and options write the same file)"))
    title = first.replace("calibr report of ", "Calibration report: ", 1)
    page = report_page(summary, spec, figs, header=head + items, title=title)
    return render(page)


def columns_words(p: Any, y: Any, by: Any, weights: Any) -> str:
    """The words for an input's columns: probabilities, label, groups, weights."""
    probs = ", ".join(map(str, p)) if isinstance(p, list) else str(p)
    words = f"probabilities {probs}; label {y}"
    if by:
        words += f"; groups by {', '.join(map(str, by))}"
    if weights is not None:
        words += f"; weights {weights}"
    return words
