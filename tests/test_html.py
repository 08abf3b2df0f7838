"""The HTML report: ``calibr.html_report()``, ``calibr report --html``,
``calibr compare --html`` and the ``_repr_html_`` of the result objects.

The pages are parsed (the standard library's ``html.parser``) and every number
shown is compared with the Python result of the same call: each number is a
``<data value="...">`` element whose value has every digit and whose text is that
value to 4 significant digits. Then headless Chromium (Debian's ``chromium``,
installed by ``.ci/install``) loads a page as a person would: no console
message, every figure drawn, the overview table sorts and fits a desktop window,
group labels are text in the DOM, and a screenshot at desktop width of the report
and of compare's page, kept for a person to look at: under ``$CALIBR_ARTEFACTS``
when it is set, else in ``artefacts/`` at the repository's root (ignored by git,
so never committed; CI's ``.ci/run`` sets no variable, so its screenshots are
there).
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import unavailable

import calibr
from calibr.cli import main
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions

# --------------------------------------------------------------------------
# a small DOM from html.parser

_VOID = {"meta", "br", "img", "input", "link", "hr", "col", "source", "wbr", "area", "base"}


@dataclass
class Node:
    tag: str
    attrs: dict
    children: list = field(default_factory=list)
    parent: Node | None = None

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag: str | None = None):
        for c in self.children:
            if isinstance(c, Node):
                if tag is None or c.tag == tag:
                    yield c
                yield from c.iter(tag)

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter(tag)
                if cls is None or cls in n.attrs.get("class", "").split()]

    def find(self, tag: str, cls: str | None = None) -> Node:
        found = self.find_all(tag, cls)
        assert found, (tag, cls)
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: (v if v is not None else "") for k, v in attrs}, parent=self.cur)
        self.cur.children.append(node)
        if tag not in _VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, dict(attrs), parent=self.cur))

    def handle_endtag(self, tag):
        node = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(page: str) -> Node:
    b = _Builder()
    b.feed(page)
    b.close()
    return b.root


def numbers(node: Node) -> list[float]:
    """The exact values of the numbers a node shows, in order."""
    return [float(d.attrs["value"]) for d in node.find_all("data")]


def check_shown(root: Node) -> int:
    """Every <data> element: its text is its value to 4 significant digits (or
    "< bound" for a p-value below the resolution, with the value below it)."""
    count = 0
    for d in root.find_all("data"):
        value, text = float(d.attrs["value"]), d.text().strip()
        count += 1
        if text.startswith("< "):  # a raw p-value below its bound, or an adjusted
            # one whose value is its bound (the adjusted value of the resolution)
            assert value <= float(text[2:]), (value, text)
            continue
        if not math.isfinite(value):
            assert text in ("NaN", "inf", "-inf"), (value, text)
            continue
        shown = float(text)
        assert shown == float(f"{value:.4g}") or math.isclose(shown, value, rel_tol=5e-4,
                                                              abs_tol=0), (value, text)
    return count


def overview(root: Node) -> tuple[list[str], list[list[Node]]]:
    table = root.find("table", "overview")
    heads = [th.text().strip() for th in table.find("thead").find_all("th")]
    rows = [tr.find_all("td") for tr in table.find("tbody").find_all("tr")]
    return heads, rows


def r_holm(p) -> np.ndarray:
    """R's ``p.adjust(p, "holm")`` (the ``rref`` fixture has started R)."""
    import rpy2.robjects as ro

    return np.array(ro.r["p.adjust"](ro.FloatVector(np.asarray(p, dtype=float)), "holm"))


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# --------------------------------------------------------------------------
# the library: calibr.html_report()


@pytest.fixture(scope="module")
def breast():
    return load_breast_cancer_predictions()


@pytest.fixture(scope="module")
def report_page(breast):
    """The report of the bundled binary data with a test, intervals and smooth curves."""
    page = calibr.html_report(breast.groupby("model"), "p", "y", tests="skce", confidence_level=0.9,
                              n_resamples=200, smooth=True, rng=3)
    return page, parse(page)


def test_every_number_in_the_overview_is_summarise(report_page, breast, rref):
    page, root = report_page
    assert check_shown(root) > 100
    data = breast.groupby("model")
    ref = calibr.summarise(data, "p", "y", tests="skce", rng=3)
    ci = calibr.summarise(data, "p", "y", confidence_level=0.9, n_resamples=200, rng=3)
    heads, rows = overview(root)
    assert heads == ["model", "n", "ece", "mce", "mce bin n", "skce p", "skce p (Holm)"]
    # a p-value below the resolution 1/B of its resamples is adjusted as 1/B
    b = calibr.calibration_test(breast["p"][:50], breast["y"][:50]).n_resamples
    holm = r_holm(np.maximum(ref["skce_pvalue"], 1 / b))
    for i, cells in enumerate(rows):
        cell = dict(zip(heads, cells, strict=True))
        assert cell["model"].text() == ref["model"][i]
        assert numbers(cell["n"]) == [float((breast["model"] == ref["model"][i]).sum())]
        for m in ("ece", "mce"):
            assert numbers(cell[m]) == [ref[m][i], ci[f"{m}_low"][i], ci[f"{m}_high"][i]]
        assert numbers(cell["skce p"]) == [ref["skce_pvalue"][i]]
        assert numbers(cell["skce p (Holm)"]) == pytest.approx([holm[i]], rel=1e-15)
        # the MCE's bin: the bin of the largest gap of mce()'s bins, its count
        tab = calibr.calibration_table("p", "y", data=breast[breast["model"] ==
                                                             ref["model"][i]])
        assert tab["gap"].max() == pytest.approx(ref["mce"][i], rel=1e-12)
        worst = tab.sort_values(["gap", "n"], ascending=False).iloc[0]
        assert numbers(cell["mce bin n"]) == [float(worst["n"])]
        flagged = "*" in cell["mce"].text()
        assert flagged == (worst["n"] < 10)


def test_the_overview_follows_the_bins_and_weights_given(breast):
    """The overview's MCE bin is that of the bins given (not the default's), and its
    n the total weight, fractional weights kept as they are."""
    df = breast[breast["model"] == sorted(breast["model"].unique())[0]].copy()
    df["w"] = np.where(np.arange(len(df)) % 2 == 0, 0.5, 1.25)
    root = parse(calibr.html_report(df, "p", "y", bins=4, weights="w", metrics=["mce"]))
    heads, (row,) = overview(root)
    cell = dict(zip(heads, row, strict=True))
    assert numbers(cell["n"]) == [float(df["w"].sum())] and df["w"].sum() % 1 != 0
    tab = calibr.calibration_table("p", "y", data=df, bins=4, weights="w")
    worst = tab.sort_values(["gap", "n"], ascending=False).iloc[0]
    assert numbers(cell["mce"])[0] == pytest.approx(worst["gap"], rel=1e-12)
    assert numbers(cell["mce bin n"]) == [float(worst["n"])]
    assert worst["n"] != calibr.calibration_table("p", "y", data=df, weights="w").sort_values(
        ["gap", "n"], ascending=False).iloc[0]["n"]  # the default bins would differ
    # one group of whole weights beside one of fractional ones: each n as it is
    two = breast.assign(w=np.where(breast["model"] == df["model"].iloc[0],
                                   np.where(np.arange(len(breast)) % 2 == 0, 0.5, 1.25), 2.0))
    root = parse(calibr.html_report(two.groupby("model"), "p", "y", weights="w",
                                    metrics=["ece"]))
    heads, rows = overview(root)
    totals = two.groupby("model")["w"].sum()
    assert [numbers(dict(zip(heads, r, strict=True))["n"]) for r in rows] == [
        [float(totals[m])] for m in sorted(totals.index)]
    assert sorted(set(totals % 1 != 0)) == [False, True]


def test_every_number_of_each_group_is_calibration_table(report_page, breast):
    page, root = report_page
    tab = calibr.calibration_table("p", "y", data=breast.groupby("model"), consistency=0.9,
                                   rng=3)
    sections = root.find_all("details", "group")
    models = sorted(breast["model"].unique())
    assert len(sections) == len(models)
    for model, sec in zip(models, sections, strict=True):
        assert sec.find("span", "name").text() == f"model = {model}"
        mine = tab[tab["model"] == model].reset_index(drop=True)
        body = sec.find("table", "bins").find("tbody").find_all("tr")
        assert len(body) == len(mine)
        for tr, (_, ref) in zip(body, mine.iterrows(), strict=True):
            tds = tr.find_all("td")
            assert tds[0].text() == str(ref["bin"])
            shown = numbers(tr)
            # the range's edges, then n, mean, observed, Wilson, gap, band
            expected = [ref["lower"], ref["upper"], *(float(ref[c]) for c in
                        ["n", "mean_confidence", "observed_frequency", "ci_lower", "ci_upper",
                         "gap", "consistency_lower", "consistency_upper"])]
            assert all(same(a, b) for a, b in zip(shown, expected, strict=True)), (shown,
                                                                                  expected)
            assert ("n < 10" in tr.text()) == (ref["n"] < 10)
        # the largest gap is tagged once, on the bin with the largest gap
        tagged = [tr for tr in body if "largest gap" in tr.text()]
        assert len(tagged) == 1
        assert numbers(tagged[0])[-3] == mine["gap"].max()
        # the smooth curve's bandwidth and smooth ECE are calibr.smece_curve()'s
        rows = breast[breast["model"] == model]
        curve = calibr.smece_curve(rows["p"], rows["y"])
        note = [li for li in sec.find_all("li") if "smooth curve:" in li.text()][0]
        assert numbers(note) == [curve.bandwidth, curve.smece]


def test_each_bin_says_which_end_it_holds(report_page, breast):
    """The bins' ranges as docs/definitions.md writes them: closed on the right,
    ``(a, b]`` with 0 in the first bin, ``[0, b]``; closed on the left, ``[a, b)``
    with 1 in the last bin, ``[a, 1]``."""
    page, root = report_page
    for right, first, middle, last in ((True, "[0, 0.1]", "(0.4, 0.5]", "(0.9, 1]"),
                                       (False, "[0, 0.1)", "[0.4, 0.5)", "[0.9, 1]")):
        if not right:
            root = parse(calibr.html_report(breast.groupby("model"), "p", "y", right=False,
                                            consistency=None))
        for sec in root.find_all("details", "group"):
            ranges = {tr.find_all("td")[0].text(): tr.find_all("td")[1].text()
                      for tr in sec.find("table", "bins").find("tbody").find_all("tr")}
            assert (ranges["1"], ranges["5"], ranges["10"]) == (first, middle, last), ranges


def test_multiclass_report_draws_the_top_label(rref):
    digits = load_digits_predictions()
    page = calibr.html_report(digits.groupby("model"), y="y", p_prefix="p_", bins=5)
    root = parse(page)
    check_shown(root)
    ref = calibr.summarise(digits.groupby("model"), y="y", p_prefix="p_",
                           metrics=[calibr.metric("ece", bins=5), calibr.metric("mce", bins=5)])
    heads, rows = overview(root)
    for i, cells in enumerate(rows):
        cell = dict(zip(heads, cells, strict=True))
        assert numbers(cell["ece"]) == [ref["ece(bins=5)"][i]]
    top = calibr.calibration_table(None, "y", p_prefix="p_", data=digits.groupby("model"),
                                   bins=5, type="confidence", consistency=0.9, rng=0)
    first = root.find_all("details", "group")[0]
    body = first.find("table", "bins").find("tbody").find_all("tr")
    mine = top[top["model"] == "logistic"]
    assert [numbers(tr)[2] for tr in body] == mine["n"].astype(float).tolist()
    assert "confidence diagram" in first.find("p", "lead").text()


def test_the_bin_options_reach_every_binned_metric(breast):
    """``bins`` (and ``type``, ``binning``, ``right``) apply to every metric the registry
    calls binned, not a hand-kept list: calibration_error with ``bins=5`` is computed
    with the 5 bins that the header names."""
    from calibr._registry import METRICS

    binned = [name for name, info in METRICS.items() if info.kind == "binned"]
    assert "calibration_error" in binned
    page = calibr.html_report(breast.groupby("model"), "p", "y", metrics=binned, bins=5,
                              right=False, consistency=None)
    root = parse(page)
    heads, rows = overview(root)
    for name in binned:
        ref = calibr.summarise(breast.groupby("model"), "p", "y",
                               metrics={name: calibr.metric(name, bins=5, right=False)})
        assert [numbers(dict(zip(heads, cells, strict=True))[name])[0] for cells in rows] \
            == ref[name].tolist(), name
    meta = {tr.find("th").text(): tr.find("td").text() for tr in root.find("table", "meta")
            .find_all("tr")}
    assert meta["bins"].startswith("5 equal-width bins")


def test_escaping_of_group_labels():
    labels = ['<script>alert("x")</script>', "a & b", 'say "hi"', "it's", "<b>bold</b>"]
    rng = np.random.default_rng(5)
    n = 60 * len(labels)
    p = rng.random(n)
    df = pd.DataFrame({"g": np.repeat(labels, 60), "p": p, "y": (rng.random(n) < p) * 1})
    page = calibr.html_report(df.groupby("g"), "p", "y", bins=4)
    root = parse(page)
    # one script element: the report's own; no label became an element
    assert len(root.find_all("script")) == 1
    assert not root.find_all("b")
    assert "<script>alert" not in page
    heads, rows = overview(root)
    shown = [cells[0].text() for cells in rows]
    assert shown == sorted(labels)
    titles = [s.find("span", "name").text() for s in root.find_all("details", "group")]
    assert titles == [f"g = {v}" for v in sorted(labels)]
    # the figures' accessible names hold the labels as text too
    names = [svg.attrs["aria-label"] for svg in root.find_all("svg", "rd")]
    assert names == [f"Reliability diagram of g = {v}" for v in sorted(labels)]


def test_labels_with_characters_html_cannot_carry():
    """A NUL, other control characters, a noncharacter and a lone surrogate in a label
    are written as Python writes them in a string (\\x00): the page holds none of them,
    encodes as UTF-8, and each label still shows apart from the others."""
    labels = ["a\x00b", "tab\there", "cr\rlf", "del\x7f", "c1\x85", "non\ufffe",
              "plane\U0010ffff", "é😀"]
    rng = np.random.default_rng(2)
    n = 20 * len(labels)
    p = rng.random(n)
    df = pd.DataFrame({"g": np.repeat(labels, 20), "p": p, "y": (rng.random(n) < p) * 1})
    # a lone surrogate in the title (pandas' Arrow strings cannot hold one in a key)
    page = calibr.html_report(df.groupby("g"), "p", "y", bins=3, consistency=None,
                              title="t\x00it\ud800le")
    bad = [c for c in page if ord(c) < 32 and c not in "\t\n\x0c" or 0x7f <= ord(c) <= 0x9f
           or 0xd800 <= ord(c) <= 0xdfff or (ord(c) & 0xFFFE) == 0xFFFE
           or 0xfdd0 <= ord(c) <= 0xfdef]
    assert bad == []
    page.encode("utf-8")  # no lone surrogate left
    root = parse(page)
    shown = [cells[0].text() for cells in overview(root)[1]]
    want = {"a\x00b": "a\\x00b", "tab\there": "tab\there", "cr\rlf": "cr\\x0dlf",
            "del\x7f": "del\\x7f", "c1\x85": "c1\\x85", "non\ufffe": "non\\ufffe",
            "plane\U0010ffff": "plane\\U0010ffff", "é😀": "é😀"}
    assert shown == [want[v] for v in sorted(labels)]
    assert root.find("title").text() == "t\\x00it\\ud800le"
    assert root.find("h1").text() == "t\\x00it\\ud800le"


@pytest.mark.parametrize("metrics", [{"n": "ece"}, {"bins": "ece"}, {"form": "ece"},
                                     {"mce": "mce", "mce_bin_n": "ece"}])
def test_metric_names_cannot_take_the_pages_own_columns(metrics):
    """The page's own columns (n, form, bins, an MCE's bin count) live apart from the
    metrics': a metric named like one is shown as that metric, beside the page's
    column, which keeps its number (20 rows; the MCE's bin count)."""
    rng = np.random.default_rng(4)
    p = rng.random(40)
    df = pd.DataFrame({"g": np.repeat(["a", "b"], 20), "p": p,
                       "y": (rng.random(40) < p) * 1})
    page = calibr.html_report(df.groupby("g"), "p", "y", metrics=metrics)
    root = parse(page)
    table = root.find("table", "overview")
    titles = [th.attrs.get("title", "") for th in table.find("thead").find_all("th")]
    rows = overview(root)[1]
    ref = calibr.summarise(df.groupby("g"), "p", "y",
                           metrics={k: calibr.metric(v, bins=10) for k, v in metrics.items()})
    count_at = titles.index("rows of the group")
    assert [numbers(cells[count_at]) for cells in rows] == [[20.0], [20.0]]
    for name, func in metrics.items():
        at = [i for i, t in enumerate(titles) if t == func
              and table.find("thead").find_all("th")[i].text() == name]
        assert len(at) == 1, (name, titles)
        assert [numbers(cells[at[0]])[0] for cells in rows] == ref[name].tolist()
    if "mce" in metrics:
        at = titles.index("samples in the bin the MCE comes from")
        tab = calibr.calibration_table("p", "y", data=df, by="g", bins=10)
        want = [float(t.sort_values(["gap", "n"], ascending=False)["n"].iloc[0])
                for _, t in tab.groupby("g")]
        assert [numbers(cells[at])[0] for cells in rows] == want
    # a bins column appears only for groups of different bins: not here
    assert "the bins of the metrics" not in titles and "the form of the metrics" not in titles


@pytest.mark.parametrize("rule, words", [("sweep", "the monotonic sweep's number of bins"),
                                         ("auto", "the cube-root rule's number of bins")])
def test_bins_chosen_from_the_data(breast, rule, words):
    """bins="sweep" or "auto": the header says the rule, the metrics are summarise's
    and each group's per-bin table has the bins the rule chose for it."""
    page = calibr.html_report(breast.groupby("model"), "p", "y", bins=rule, consistency=None)
    root = parse(page)
    assert meta_of(root)["bins"].startswith(words)
    heads, rows = overview(root)
    ref = calibr.summarise(breast.groupby("model"), "p", "y",
                           metrics={"ece": calibr.metric("ece", bins=rule),
                                    "mce": calibr.metric("mce", bins=rule)})
    for name in ("ece", "mce"):
        assert [numbers(cells[heads.index(name)])[0] for cells in rows] == ref[name].tolist()
    tab = calibr.calibration_table("p", "y", data=breast, by="model", bins=rule)
    for sec, (_, t) in zip(root.find_all("details", "group"), tab.groupby("model"),
                           strict=True):
        assert len(sec.find("table", "bins").find("tbody").find_all("tr")) == len(t)


def meta_of(root: Node) -> dict[str, str]:
    """The header's rows: what -> text."""
    return {tr.find("th").text(): tr.find("td").text()
            for tr in root.find("table", "meta").find_all("tr")}


@pytest.mark.parametrize("kwargs, draws", [
    ({"consistency": None}, []),
    ({}, ["consistency band"]),
    ({"consistency": None, "tests": "hosmer_lemeshow"}, []),  # analytic: draws nothing
    ({"consistency": None, "tests": "skce"}, ["tests' resamples"]),
    ({"confidence_level": 0.9, "n_resamples": 30}, ["consistency band", "intervals"]),
    ({"tests": "skce", "confidence_level": 0.9, "n_resamples": 30},
     ["consistency band", "tests' resamples", "intervals"]),
])
def test_the_seed_says_what_it_draws(breast, kwargs, draws):
    """The header's seed names what draws from it, in every case (not "the seed of
    the tests" when no test ran), and says so when nothing does."""
    page = calibr.html_report(breast.groupby("model"), "p", "y", rng=7, **kwargs)
    seed = meta_of(parse(page))["seed"]
    assert seed.startswith("7")
    assert ("unused" in seed) == (not draws)
    used = seed.split(": group", 1)[0] if draws else ""  # "7, for the consistency band"
    for what in ("consistency band", "tests' resamples", "intervals"):
        assert (what in used) == (what in draws), (what, seed)
    if draws:
        assert "numpy.random.SeedSequence(7).spawn(groups)[g]" in seed
    assert ".spawn(1)[0]" in seed if "intervals" in draws else ".spawn(1)" not in seed


def test_the_legend_is_said_once(report_page):
    """How to read the diagrams is said once, above the groups; a section's notes
    hold only what is its own (the smooth curve's bandwidth and smooth ECE)."""
    page, root = report_page
    legends = root.find_all("div", "legend")
    assert len(legends) == 1
    text = legends[0].text()
    assert "points: each bin's observed frequency" in text and "consistency band" in text
    assert "faded where fewer than 10 rows" in text  # smooth=True
    for sec in root.find_all("details", "group"):
        notes = [li.text() for li in sec.find_all("li")]
        assert len(notes) == 1 and notes[0].startswith("smooth curve: bandwidth"), notes
    assert page.count("points: each bin") == 1


def test_an_interval_that_leaves_out_its_estimate_is_marked():
    """A percentile interval need not contain its estimate (digits' logistic ECE: the
    resampled ECEs all lie above it): the cell is marked and a note says why, and
    the glossary says it whenever intervals are shown."""
    digits = load_digits_predictions()
    data = digits.groupby("model")
    page = calibr.html_report(data, y="y", p_prefix="p_", confidence_level=0.9,
                              n_resamples=100, consistency=None)
    root = parse(page)
    heads, rows = overview(root)
    ref = calibr.summarise(data, y="y", p_prefix="p_", confidence_level=0.9, n_resamples=100,
                           rng=0)
    marked = []
    for i, cells in enumerate(rows):
        cell = dict(zip(heads, cells, strict=True))
        for m in ("ece", "mce"):
            out = not ref[f"{m}_low"][i] <= ref[m][i] <= ref[f"{m}_high"][i]
            assert ("\u2020" in cell[m].text()) == out, (i, m)
            marked.append(out)
    assert any(marked) and not all(marked)
    notes = root.find("ul", "notes").text()
    assert "\u2020 the interval does not contain the estimate" in notes
    assert "it need not contain the estimate" in notes  # the glossary
    # no interval leaves out its estimate: no note, the glossary still says it can
    page = calibr.html_report(load_breast_cancer_predictions().groupby("model"), "p", "y",
                              metrics=["ece"], confidence_level=0.9, n_resamples=100,
                              consistency=None)
    notes = parse(page).find("ul", "notes").text()
    assert "does not contain the estimate" not in notes
    assert "it need not contain the estimate" in notes


def _path_points(d: str) -> list[tuple[float, float]]:
    import re

    return [(float(x), float(y)) for x, y in re.findall(r"[ML](-?[\d.]+) (-?[\d.]+)", d)]


def test_the_smooth_curve_is_faded_where_few_rows_hold_it(breast):
    """The smooth curve is drawn as a curve where at least 10 rows lie within one
    bandwidth of the prediction and faded elsewhere (docs/cli.md, "The HTML report"),
    so that its swings over a handful of rows do not alarm a reader."""
    from calibr._html import _svg

    page = calibr.html_report(breast.groupby("model"), "p", "y", smooth=True, consistency=None)
    root = parse(page)
    faded_anywhere = False
    for sec, model in zip(root.find_all("details", "group"), sorted(breast["model"].unique()),
                          strict=True):
        rows = breast[breast["model"] == model]
        curve = calibr.smece_curve(rows["p"], rows["y"])
        held = _svg.local_rows(curve, len(rows)) >= _svg.SMOOTH_FEW
        xs = [_svg._x(v) for v in curve.x]
        svg = sec.find("svg", "rd")
        strong = [p for p in svg.find_all("path", "smooth") if "few" not in p.attrs["class"]]
        faded = svg.find_all("path", "few")
        faded = [p for p in faded if "smooth" in p.attrs["class"]]
        # every vertex of the curve drawn in full is a point that enough rows hold
        for path in strong:
            for x, _ in _path_points(path.attrs["d"]):
                i = int(np.argmin([abs(x - v) for v in xs]))
                assert held[i], (model, x)
        assert bool(faded) == bool((~held).any())
        faded_anywhere |= bool(faded)
    assert faded_anywhere  # naive Bayes has few rows between 0.1 and 0.9


def test_top_label_diagrams_say_why_their_largest_gap_is_not_the_mce():
    """Digits drawn as the top label while the MCE is classwise: where the two numbers
    meet, the section gives both and says why they differ; the diagram's largest gap
    is calibr.mce(type="confidence")."""
    digits = load_digits_predictions()
    page = calibr.html_report(digits.groupby("model"), y="y", p_prefix="p_", consistency=None)
    root = parse(page)
    heads, rows = overview(root)
    for sec, cells in zip(root.find_all("details", "group"), rows, strict=True):
        model = sec.find("span", "name").text().split(" = ")[1]
        sub = digits[digits["model"] == model]
        probs = sub[[f"p_{k}" for k in range(10)]]
        top = calibr.mce(probs, sub["y"], type="confidence", classes=range(10))
        mce = numbers(dict(zip(heads, cells, strict=True))["mce"])[0]
        note = sec.find("p", "lead")  # above the diagram: read before it
        assert note.text().startswith("confidence diagram")
        # the heading's numbers say they are classwise
        facts = sec.find("span", "facts")
        assert "ece (classwise) " in facts.text() and "mce (classwise) " in facts.text()
        assert numbers(facts)[2] == mce  # n, ece, mce
        assert numbers(note) == pytest.approx([top, mce], rel=1e-12)
        assert "classwise" in note.text() and "need not agree" in note.text()
        tagged = [tr for tr in sec.find("table", "bins").find_all("tr")
                  if "largest gap" in tr.text()]
        assert numbers(tagged[0])[-1] == pytest.approx(top, rel=1e-12)  # its gap


def test_bad_input_names_the_argument(breast):
    with pytest.raises(calibr.InputError, match="`consistency`") as err:
        calibr.html_report(breast, "p", "y", consistency=1.5)
    assert err.value.param == "consistency"
    with pytest.raises(calibr.InputError) as err:
        calibr.html_report(breast, "p", "y", smooth="yes")
    assert err.value.param == "smooth"
    with pytest.raises(calibr.InputTypeError) as err:
        calibr.html_report(breast["p"], "p", "y")
    assert err.value.param == "data"
    before = breast.copy()
    calibr.html_report(breast, "p", "y", bins=3)
    pd.testing.assert_frame_equal(breast, before)


def test_up_to_6_groups_start_open():
    """docs/cli.md, "Many groups are collapsed": with at most 6 groups every section
    starts open, with more every one starts collapsed."""
    rng = np.random.default_rng(3)
    for groups in (6, 7):
        p = rng.random(40 * groups)
        df = pd.DataFrame({"g": np.repeat(np.arange(groups), 40), "p": p,
                           "y": (rng.random(p.size) < p) * 1})
        sections = parse(calibr.html_report(df.groupby("g"), "p", "y", consistency=None)
                         ).find_all("details", "group")
        assert len(sections) == groups
        assert [("open" in s.attrs) for s in sections] == [groups <= 6] * groups


def test_many_groups_stay_small():
    """1,000 groups: under 20 MB (the page opens at once: benchmarks/bench_html.py),
    every section but none open. Each group's consistency band is drawn (its size
    does not depend on the resamples, 10 here: the band's 1,000 x B resamples were
    most of this test's time, tests/README.md)."""
    rng = np.random.default_rng(7)
    n = 1000 * 40
    p = rng.random(n)
    df = pd.DataFrame({"g": np.repeat(np.arange(1000), 40), "p": p,
                       "y": (rng.random(n) < p) * 1})
    page = calibr.html_report(df.groupby("g"), "p", "y", consistency_resamples=10)
    assert page.count('class="band"') == 1000
    assert len(page.encode("utf-8")) < 20e6
    root = parse(page)
    sections = root.find_all("details", "group")
    assert len(sections) == 1000
    assert not any("open" in s.attrs for s in sections)
    assert page.count("points: each bin") == 1  # the legend once, not 1,000 times


def test_p_values_below_0_05_are_bold():
    """The overview's cue, as its note says: a p-value is bold below 0.05 (over several
    groups its Holm-adjusted value, the raw one never); 0.05 itself is not."""
    from calibr._html import Spec, render, report_page

    def bold(pvalues):
        summary = pd.DataFrame({"g": [f"g{i}" for i in range(len(pvalues))], "n": 10.0,
                                "ece": 0.1, "t_pvalue": pvalues})
        page = render(report_page(summary, Spec(["g"], [("ece", "ece")], [("t", None)]), [],
                                  header=[], title="t"))
        root = parse(page)
        heads, rows = overview(root)
        assert "below 0.05 are bold" in page or "bold below 0.05" in page
        at = heads.index("t p (Holm)" if len(pvalues) > 1 else "t p")
        if len(pvalues) > 1:  # the raw p-values are never bold
            assert not any("sig" in cells[at - 1].attrs.get("class", "") for cells in rows)
        return ["sig" in cells[at].attrs.get("class", "").split() for cells in rows]

    assert bold([0.049]) == [True]
    assert bold([0.05]) == [False]
    assert bold([0.07]) == [False]
    assert bold([0.02, 0.5]) == [True, False]  # Holm: 0.04
    assert bold([0.025, 0.5]) == [False, False]  # Holm: 2 x 0.025 = 0.05 exactly
    assert bold([0.03, 0.5]) == [False, False]  # Holm: 0.06


def test_an_adjusted_p_value_of_a_p_value_below_its_resolution_is_a_bound():
    """A p-value 0 of B resamples is "< 1/B": its Holm-adjusted value is the bound
    "< adjusted 1/B" (60 groups, B = 1000: "< 0.06", not "< 0.001"), and bold reads
    the bound (0.06 is not below 0.05), as does a lone group's raw "< 1/B"."""
    from calibr._html import Spec, render, report_page

    def cells(pvalues, n_resamples):
        summary = pd.DataFrame({"g": [f"g{i}" for i in range(len(pvalues))], "n": 10.0,
                                "ece": 0.1, "t_pvalue": pvalues})
        page = render(report_page(summary, Spec(["g"], [("ece", "ece")],
                                                [("t", n_resamples)]), [], header=[],
                                  title="t"))
        root = parse(page)
        check_shown(root)
        heads, rows = overview(root)
        at = heads.index("t p (Holm)" if len(pvalues) > 1 else "t p")
        return page, [(c[at].text(), numbers(c[at])[0], "sig" in c[at].attrs.get("class", ""))
                      for c in rows]

    page, got = cells([0.0] * 60, 1000)
    assert got == [("< 0.06", pytest.approx(0.06, rel=1e-15), False)] * 60
    assert "is adjusted as 1/B: its adjusted value, &lt; x, is an upper bound" in page
    # 0 and 0.5: Holm 2 x 0.001 (a bound, bold) and 0.5
    assert cells([0.0, 0.5], 1000)[1] == [("< 0.002", pytest.approx(0.002), True),
                                          ("0.5", 0.5, False)]
    # one group: the raw p-value, bold only if its resolution is below 0.05
    assert cells([0.0], 10)[1] == [("< 0.1", 0.0, False)]
    assert cells([0.0], 1000)[1] == [("< 0.001", 0.0, True)]
    # an analytic p-value (no resolution) is adjusted as it is
    assert cells([0.0, 0.5], None)[1] == [("< 2.2e-16", 0.0, True), ("0.5", 0.5, False)]


def test_a_p_value_below_its_resolution_says_so(breast):
    """A p-value of 0 from B resamples (skce) shows "< 1/B"; an analytic one
    (spiegelhalter) below the machine epsilon shows "< 2.2e-16", as R prints it."""
    page = calibr.html_report(breast.groupby("model"), "p", "y", metrics=["ece"],
                              tests=["skce", "spiegelhalter"], consistency=None)
    heads, rows = overview(parse(page))
    b = calibr.calibration_test(breast["p"], breast["y"]).n_resamples
    naive = dict(zip(heads, rows[1], strict=True))  # naive Bayes: far from calibrated
    assert numbers(naive["skce p"]) == [0.0]
    assert naive["skce p"].text() == f"< {1 / b:.4g}"
    assert numbers(naive["spiegelhalter p"])[0] < 2.2e-16
    assert naive["spiegelhalter p"].text() == "< 2.2e-16"


def test_an_interval_that_leaves_out_its_estimate_is_found_on_either_side():
    """``outside``: the estimate below the interval's low end or above its high end
    (the bootstrap's percentile interval can miss it); inside, on an end, or a
    missing value is not outside."""
    from calibr._html._report import outside

    def row(v, lo, hi):
        return {"ece": v, "ece_low": lo, "ece_high": hi}

    assert outside(row(0.1, 0.2, 0.3), "ece") and outside(row(0.4, 0.2, 0.3), "ece")
    for r in (row(0.25, 0.2, 0.3), row(0.2, 0.2, 0.3), row(0.3, 0.2, 0.3),
              row(0.1, float("nan"), 0.3), {"ece": 0.1}):
        assert not outside(r, "ece"), r


def test_numbers_are_shown_to_4_significant_digits():
    """docs/cli.md, "The HTML report": every number to 4 significant digits, trailing
    zeros dropped; fixed point from 1e-4 to below 1e6, scientific outside."""
    from calibr._display.format import number_text

    shown = {0.0186341: "0.01863", 0.2: "0.2", 1.0: "1", 0.99996: "1", -0.5: "-0.5",
             0.00012346: "0.0001235", 1.5e-5: "1.5e-05", 12345.67: "12346",
             123456.7: "123457", 999999.9: "1e+06", 1234567.0: "1.235e+06",
             0.0: "0", math.inf: "inf", -math.inf: "-inf", math.nan: "NaN"}
    assert {v: number_text(v) for v in shown} == shown


def _viewbox(svg: Node) -> tuple[float, float]:
    _, _, w, h = map(float, svg.attrs["viewbox"].split())
    # drawn at its viewBox's size, or larger by one factor (a diagram of several curves)
    scale = float(svg.attrs["width"]) / w
    assert float(svg.attrs["height"]) == pytest.approx(h * scale, rel=1e-9) and scale >= 1
    return w, h


def _path_vertices(d: str) -> list[tuple[float, float]]:
    """Every point a path's commands reach: M, L, H, V, A and their relative forms
    (the diagrams' paths use those and z), an arc by its end point."""
    import re

    args = {"m": 2, "l": 2, "h": 1, "v": 1, "a": 7, "z": 0}
    x = y = 0.0
    out = []
    for cmd, numbers in re.findall(r"([A-Za-z])([^A-Za-z]*)", d):
        vals = [float(v) for v in re.findall(r"-?[\d.]+(?:e-?\d+)?", numbers)]
        k = args[cmd.lower()]
        assert (len(vals) % k == 0) if k else not vals, (cmd, numbers)
        for i in range(0, len(vals), k or 1):
            a = vals[i:i + k]
            rel = cmd.islower()
            if cmd.lower() == "h":
                x = x + a[0] if rel else a[0]
            elif cmd.lower() == "v":
                y = y + a[0] if rel else a[0]
            else:  # m, l, a: the last two numbers are the point
                x, y = (x + a[-2], y + a[-1]) if rel else (a[-2], a[-1])
            out.append((x, y))
    return out


def test_path_vertices_reads_the_commands_the_diagrams_use():
    assert _path_vertices("M10 20v-5h3V40H1l2 2a4 4 0 1 0 8 0z") == [
        (10, 20), (10, 15), (13, 15), (13, 40), (1, 40), (3, 42), (11, 42)]


def check_inside(svg: Node) -> None:
    """Every point a path moves or draws to, every text and rectangle of ``svg``
    lies inside its viewBox (nothing drawn is cut off)."""
    w, h = _viewbox(svg)
    for path in svg.find_all("path"):
        for x, y in _path_vertices(path.attrs["d"]):
            assert 0 <= x <= w and 0 <= y <= h, (path.attrs["class"], x, y)
    for node in svg.find_all("text") + svg.find_all("rect"):
        if "x" in node.attrs:
            x, y = float(node.attrs["x"]), float(node.attrs["y"])
            right = x + float(node.attrs.get("width", 0))
            bottom = y + float(node.attrs.get("height", 0))
            assert 0 <= x <= right <= w and 0 <= y <= bottom <= h, (node.tag, node.attrs)


@pytest.mark.parametrize("smallest", [1, 3, 0.2])  # 0.2: the weight of one row
def test_the_reliability_diagram_is_drawn_to_its_scales(smallest):
    """A group's diagram (calibr/_html/_svg.py) against calibration_table: the
    histogram beneath the plot square, its bars on the log scale from half the
    smallest count (at most 0.5) to twice the largest (a bin of 1 row has a bar), the
    consistency band through each bin's bounds, the largest gap
    ringed once, nothing outside the figure."""
    from calibr._html import _svg

    rng = np.random.default_rng(5)
    # a bin of `smallest` rows (or of one row of that weight), one empty
    first = math.ceil(smallest)
    p = np.concatenate([[0.05] * first, rng.uniform(0.42, 1.0, 300)])
    df = pd.DataFrame({"p": p, "y": (rng.random(p.size) < p) * 1,
                       "w": np.where(np.arange(p.size) < first, smallest / first, 1.0)})
    w = {"weights": "w"} if smallest < 1 else {}
    root = parse(calibr.html_report(df, "p", "y", bins=5, rng=4, **w))
    svg = root.find("svg", "rd")
    band = {} if w else {"consistency": 0.9, "rng": 4}
    tab = calibr.calibration_table("p", "y", data=df, bins=5, **w, **band)
    check_inside(svg)
    plot, hist = svg.find_all("rect", "frame")
    assert float(hist.attrs["y"]) > float(plot.attrs["y"]) + float(plot.attrs["height"])
    bottom = float(hist.attrs["y"]) + float(hist.attrs["height"])
    import re

    bars = [tuple(map(float, b)) for b in re.findall(
        r"M([\d.]+) ([\d.]+)v(-[\d.]+)h([\d.]+)v", svg.find("path", "hist").attrs["d"])]
    n = tab["n"].to_numpy(dtype=float)
    assert n.min() == smallest and list(tab["bin"]) == [1, 3, 4, 5]  # the empty bin: no row
    lo, hi = min(0.5, n[n > 0].min() / 2), 2 * n.max()
    drawn = tab[n > 0]
    assert len(bars) == len(drawn)
    for (x, y0, h, width), (_, row) in zip(bars, drawn.iterrows(), strict=True):
        assert y0 == bottom
        assert x == pytest.approx(_svg._x(row["lower"]), abs=0.051)
        assert width == pytest.approx((row["upper"] - row["lower"]) * _svg.PLOT, abs=0.051)
        want = _svg.HIST * (math.log(row["n"]) - math.log(lo)) / (math.log(hi) - math.log(lo))
        assert -h == pytest.approx(want, abs=0.051)
    # the band (none with weights): along the upper bounds, back along the lower ones
    assert bool(svg.find_all("path", "band")) == (not w)
    if not w:
        kept = tab.dropna(subset=["consistency_lower", "consistency_upper"])
        assert len(kept) > 1
        x = [_svg._x(v) for v in kept["mean_confidence"]]
        want = ([(a, _svg._y(min(b, 1.0))) for a, b in zip(x, kept["consistency_upper"],
                                                             strict=True)]
                + [(a, _svg._y(b)) for a, b in zip(x[::-1], kept["consistency_lower"][::-1],
                                                   strict=True)])
        got = _path_points(svg.find("path", "band").attrs["d"])
        assert np.array(got) == pytest.approx(np.array(want), abs=0.051)
    # the largest gap: one ring, centred on its bin's point
    rings = svg.find_all("path", "worst")
    assert len(rings) == 1
    (cx, cy), = _path_points(rings[0].attrs["d"])
    worst = tab.loc[tab["gap"].idxmax()]
    assert (cx + 7, cy) == pytest.approx((_svg._x(worst["mean_confidence"]),
                                          _svg._y(worst["observed_frequency"])), abs=0.051)


def test_the_band_of_a_single_bin_is_a_bar_between_its_bounds():
    """One bin has no neighbour to draw the band to: a bar 0.04 wide (in p) at its
    mean confidence, from its lower consistency bound to its upper one."""
    from calibr._html import _svg

    rng = np.random.default_rng(3)
    p = rng.uniform(0.3, 0.7, 200)
    df = pd.DataFrame({"p": p, "y": (rng.random(200) < p) * 1})
    svg = parse(calibr.html_report(df, "p", "y", bins=1, rng=1)).find("svg", "rd")
    row = calibr.calibration_table(df["p"], df["y"], bins=1, consistency=0.9, rng=1).iloc[0]
    x, lo, hi = row["mean_confidence"], row["consistency_lower"], row["consistency_upper"]
    want = [(_svg._x(x - 0.02), _svg._y(lo)), (_svg._x(x + 0.02), _svg._y(lo)),
            (_svg._x(x + 0.02), _svg._y(hi)), (_svg._x(x - 0.02), _svg._y(hi))]
    got = _path_vertices(svg.find("path", "band").attrs["d"])
    assert np.array(got) == pytest.approx(np.array(want), abs=0.051)


@pytest.mark.parametrize(("lo", "hi", "ticks"), [
    (0.0, 1.0, [0.0, 0.5, 1.0]),  # a quarter of the span is 0.25: steps of 5 x 0.1
    (0.0, 0.4, [0.0, 0.1, 0.2, 0.3, 0.4]),  # 0.1 exactly: steps of 1 x 0.1
    (0.0, 0.3, [0.0, 0.1, 0.2, 0.3]),  # 0.075: steps of 10 x 0.01
    (-0.03, 0.012, [-0.02, 0.0]),  # 0.0105: steps of 2 x 0.01, from the first in range
    (0.0, 1000.0, [0.0, 500.0, 1000.0]),
    (2.0, 2.0, [2.0]),  # no span: a quarter of the value sets the step
])
def test_round_ticks_hand_worked(lo, hi, ticks):
    """The axes' ticks: the smallest step of 1, 2, 5 or 10 times a power of ten at
    least a quarter of the span, every multiple of it in [lo, hi]."""
    from calibr._html._svg import _nice_ticks

    assert _nice_ticks(lo, hi) == pytest.approx(ticks, abs=1e-12)


def test_every_diagram_of_a_report_rings_its_largest_gap_and_fits(report_page, breast):
    page, root = report_page
    from calibr._html import _svg

    tab = calibr.calibration_table("p", "y", data=breast.groupby("model"))
    for sec, model in zip(root.find_all("details", "group"), sorted(breast["model"].unique()),
                          strict=True):
        svg = sec.find("svg", "rd")
        check_inside(svg)
        mine = tab[tab["model"] == model]
        worst = mine.loc[mine["gap"].idxmax()]
        rings = svg.find_all("path", "worst")
        assert len(rings) == 1
        (cx, cy), = _path_points(rings[0].attrs["d"])
        assert (cx + 7, cy) == pytest.approx((_svg._x(worst["mean_confidence"]),
                                              _svg._y(worst["observed_frequency"])), abs=0.051)


@pytest.mark.parametrize("est, low", [
    ([0.012, 0.03, -0.004], [0.002, 0.011, -0.02]),
    ([-0.03, -0.01], [-0.05, -0.02]),
    ([0.2, 0.35, 0.3], [0.15, 0.3, math.nan]),
])
def test_the_chart_of_differences_is_drawn_to_its_scale(est, low):
    """compare's chart: round ticks (1, 2 or 5 times a power of ten, evenly spaced)
    over the range of the differences, their bounds and 0; every mark at its value on
    that one linear scale; 0 marked; nothing outside the figure."""
    from calibr._html import _svg

    labels = [f"segment {i}" for i in range(len(est))]
    svg = parse(_svg.difference_svg(labels, est, low, [e > 0 for e in est], 0.95)
                ).find("svg", "diff")
    check_inside(svg)
    ticks = svg.find_all("text", "tick")
    values = [float(t.text()) for t in ticks]
    xs = [float(t.attrs["x"]) for t in ticks]
    assert len(values) >= 3
    step = values[1] - values[0]
    assert np.diff(values) == pytest.approx(step, rel=1e-6)
    assert round(step / 10 ** math.floor(math.log10(step)), 6) in (1.0, 2.0, 5.0)
    data = [v for v in [*est, *low, 0.0] if math.isfinite(v)]
    assert min(data) - 1e-12 <= values[0] < min(data) + step
    assert max(data) - step < values[-1] <= max(data) + 1e-12
    (zero, _), = _path_points(svg.find("path", "zero").attrs["d"])
    scale = (xs[-1] - xs[0]) / (values[-1] - values[0])
    assert xs == pytest.approx([zero + scale * v for v in values], abs=0.06)
    points = [p for p in svg.find_all("path", "pt")]
    finite = [e for e in est if math.isfinite(e)]
    # the point, 0 and the ticks each written to 0.1 px; the scale read from the ticks
    assert [_path_points(p.attrs["d"])[0][0] + 4 for p in points] == pytest.approx(
        [zero + scale * e for e in finite], abs=0.12)


def test_a_long_label_of_the_chart_of_differences_is_cut_with_its_whole_as_tooltip():
    from calibr._html import _svg

    long = "ece (segment = " + "x" * 80 + ")"
    svg = parse(_svg.difference_svg(["ece", long], [0.1, 0.2], [0.0, 0.1], [False, True],
                                    0.95)).find("svg", "diff")
    texts = svg.find_all("text", "legend")
    assert [t.find("title").text() for t in texts] == ["ece", long]
    shown = texts[1].text()[len(long):]
    assert len(shown) == _svg.DIFF_LABEL_CHARS and shown == long[:59] + "…"


def test_the_overview_notes_say_what_every_metric_measures(breast):
    """Each metric of the registry has its one-line description, and the overview's
    notes give it for each metric of the page (the selective ones too)."""
    from calibr._html._report import METRIC_WORDS
    from calibr._registry import METRICS

    assert set(METRIC_WORDS) == set(METRICS)
    names = ["ece", "brier", "auroc", "aurc", "e_aurc", "augrc", "selective_accuracy"]
    page = calibr.html_report(breast.groupby("model"), "p", "y", metrics=names,
                              consistency=None)
    notes = " ".join(li.text() for li in parse(page).find("ul", "notes").find_all("li"))
    for name in names:
        assert f"{name}: {METRIC_WORDS[name]}" in notes, name


def test_classwise_curves_up_to_three_classes_then_the_top_label():
    """The diagrams of 2 or 3 classes draw a curve per class; of 4 or more, the top
    label (calibr.cli's --plot rule)."""
    rng = np.random.default_rng(8)
    for k, curves in ((3, 3), (4, 1)):
        probs = rng.dirichlet(np.ones(k), 300)
        df = pd.DataFrame(probs, columns=[f"p_{j}" for j in range(k)]).assign(
            y=[rng.choice(k, p=row) for row in probs])
        root = parse(calibr.html_report(df, y="y", p_prefix="p_", bins=4, consistency=None))
        svg = root.find("svg", "rd")
        assert len(svg.find_all("path", "curve")) == curves + (curves > 1) * curves
        assert [t.text() for t in svg.find_all("text", "legend")] == (
            [f"class {j}" for j in range(k)] if curves > 1 else [])
        assert ("the diagrams are confidence diagrams" in root.text()) == (curves == 1)
        assert len(svg.find_all("path", "worst")) == 1  # one largest gap, however many curves
        check_inside(svg)
        # several curves: a larger figure, the key in a row under the axis (off the
        # curves), the bands outlined in their colours
        from calibr._html import _svg

        width, _ = _viewbox(svg)
        assert float(svg.attrs["width"]) == width * (_svg.SEVERAL_SCALE if curves > 1 else 1)
        assert all(float(t.attrs["y"]) > _svg.HEIGHT for t in svg.find_all("text", "legend"))
    probs = rng.dirichlet(np.ones(3), 300)
    df = pd.DataFrame(probs, columns=["p_0", "p_1", "p_2"]).assign(
        y=[rng.choice(3, p=row) for row in probs])
    root = parse(calibr.html_report(df, y="y", p_prefix="p_", bins=4))
    bands = root.find("svg", "rd").find_all("path", "band")
    assert len(bands) == 3 and all("several" in b.attrs["class"] and b.attrs["stroke"]
                                   for b in bands)



# --------------------------------------------------------------------------
# _repr_html_


def test_repr_html_of_the_results():
    rng = np.random.default_rng(2)
    p = rng.random(200)
    y = (rng.random(200) < p) * 1
    boot = calibr.bootstrap(p, y, rng=1, n_resamples=40)
    root = parse(boot._repr_html_())
    check_shown(root)
    cells = {tr.find("th").text(): tr.find("td") for tr in root.find_all("tr")}
    assert numbers(cells["confidence_interval"]) == list(boot.confidence_interval)
    assert numbers(cells["estimate"]) == [boot.estimate]
    assert cells["bootstrap_distribution"].text() == "array of 40 values"
    pair = calibr.paired_bootstrap(p, np.sqrt(p), y, rng=1, n_resamples=40)
    cells = {tr.find("th").text(): tr.find("td") for tr in parse(pair._repr_html_())
             .find_all("tr")}
    assert numbers(cells["pvalue"]) == [pair.pvalue]
    test = calibr.calibration_test(p, y, rng=1, n_resamples=40)
    cells = {tr.find("th").text(): tr.find("td") for tr in parse(test._repr_html_())
             .find_all("tr")}
    assert numbers(cells["statistic"]) == [test.statistic]
    assert cells["method"].text() == "skce"
    dec = calibr.decompose(p, y)
    cells = {tr.find("th").text(): tr.find("td") for tr in parse(dec._repr_html_())
             .find_all("tr")}
    assert numbers(cells["mcb"]) == [dec.mcb]
    frame = pd.DataFrame({"p": p, "y": y, "g": rng.choice(["<a>", "b"], 200)})
    mc = calibr.multicalibration(frame, "p", "y", segments=["g"], min_samples=2)
    root = parse(mc._repr_html_())
    cells = {tr.find("th").text(): tr.find("td") for tr in root.find_all("tr")
             if tr.find_all("th") and tr.find_all("td") and tr.parent.parent.attrs.get(
                 "class") == "calibr-result"}
    assert numbers(cells["statistic"]) == [mc.statistic]
    assert "&lt;a&gt;" in mc._repr_html_()  # a segment's value, escaped
    assert not root.find_all("a")
    # a short array field: its values, each a number; a long one, its length
    from calibr._display.repr import value_html

    short = parse(f"<p>{value_html(np.array([0.25, 3.0]))}</p>")
    assert short.text() == "[0.25, 3]" and numbers(short) == [0.25, 3.0]
    assert numbers(parse(f"<p>{value_html(np.arange(12.0))}</p>")) == list(range(12))  # up to 12
    assert value_html(np.arange(13.0)) == "array of 13 values"
    # calibration_table returns a DataFrame, which pandas shows
    assert isinstance(calibr.calibration_table(p, y), pd.DataFrame)
    # a long table field: its first 10 rows in a notebook, and the count of the others
    import dataclasses

    for rows, shown in ((10, 10), (11, 10), (25, 10)):
        segments = pd.concat([mc.segments] * 25, ignore_index=True).head(rows)
        root = parse(dataclasses.replace(mc, segments=segments)._repr_html_())
        table = [t for t in root.find_all("table") if t.attrs.get("class") == "dataframe"][0]
        assert len(table.find("tbody").find_all("tr")) == shown
        note = f"the first 10 of {rows} rows"
        assert (note in root.text()) == (rows > 10)


# --------------------------------------------------------------------------
# the command line


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def preds(tmp_path):
    rng = np.random.default_rng(4)
    n = 400
    p = rng.random(n)
    df = pd.DataFrame({"model": rng.choice(["a & b", "<c>"], n), "p": p,
                       "y": (rng.random(n) < p ** 1.2) * 1})
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    return path, df


def test_report_html_numbers_are_the_csv(capsys, preds, tmp_path):
    path, df = preds
    html = tmp_path / "report.html"
    code, out, err = run(capsys, "report", path, "--by", "model", "--test", "spiegelhalter",
                         "--confidence-level", "0.9", "--n-resamples", "100", "--html", html)
    assert code == 0 and err == ""
    assert out.startswith("calibr report of")  # the table is printed as without --html
    code, csv, _ = run(capsys, "report", path, "--by", "model", "--test", "spiegelhalter",
                       "--confidence-level", "0.9", "--n-resamples", "100", "--format", "csv")
    ref = pd.read_csv(io.StringIO(csv))
    root = parse(html.read_text(encoding="utf-8"))
    check_shown(root)
    heads, rows = overview(root)
    assert heads == ["model", "n", "ece", "mce", "mce bin n", "spiegelhalter p",
                     "spiegelhalter p (Holm)"]
    for i, cells in enumerate(rows):
        cell = dict(zip(heads, cells, strict=True))
        assert cell["model"].text() == ref["model"][i]
        for m in ("ece", "mce"):
            assert numbers(cell[m]) == [ref[m][i], ref[f"{m}_low"][i], ref[f"{m}_high"][i]]
        assert numbers(cell["mce bin n"]) == [ref["mce_bin_n"][i]]
        assert numbers(cell["spiegelhalter p"]) == [ref["spiegelhalter_pvalue"][i]]
    meta = {tr.find("th").text(): tr.find("td").text() for tr in root.find("table", "meta")
            .find_all("tr")}
    assert meta["data"] == f"{path}: {len(df)} rows"
    assert meta["columns"] == "probabilities p; label y; groups by model"
    assert meta["bins"].startswith("10 equal-width bins on [0, 1]; closed on the right")
    assert meta["calibr"].startswith(calibr.__version__)
    # nothing but the page: no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preds.csv", "report.html"]


def test_report_html_says_the_bins_of_its_diagrams(capsys, preds, tmp_path):
    """The terminal header names the bins only for a binned metric; the page's diagrams
    are binned whatever the metrics, so its header says their bins (after the data and
    columns), and its title is the report's subject, the terminal's first line."""
    path, df = preds
    html = tmp_path / "report.html"
    code, out, err = run(capsys, "report", path, "--metrics", "skce", "--test",
                         "spiegelhalter", "--html", html)
    assert code == 0 and err == ""
    assert out.startswith(f"calibr report of {path}\n") and "bins:" not in out
    root = parse(html.read_text(encoding="utf-8"))
    assert root.find("title").text() == root.find("h1").text() == f"Calibration report: {path}"
    meta = {tr.find("th").text(): tr.find("td").text() for tr in root.find("table", "meta")
            .find_all("tr")}
    assert list(meta)[:4] == ["data", "columns", "bins", "tests"]
    assert meta["bins"].startswith("10 equal-width bins on [0, 1]; closed on the right")


def check_prose(root: Node) -> None:
    """The page's words: no doubled full stop ("network.."), the footer one sentence."""
    import re

    text = " ".join(root.text().split())
    assert not re.findall(r"[^.]\.\s*\.(?!\.)", text.replace("...", "")), \
        re.findall(r".{30}[^.]\.\s*\.(?!\.).{10}", text)
    footer = root.find("footer").text()
    assert footer.count(".") == footer.count(calibr.__version__ + ";") * \
        calibr.__version__.count(".") + 1, footer


def test_report_html_of_the_bundled_data(capsys, tmp_path):
    """README's first command with --html: calibr report --html report.html."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "`calibr report --html report.html`" in readme.split("\n## ", 1)[0]
    html = tmp_path / "report.html"
    code, out, err = run(capsys, "report", "--html", html)
    assert code == 0, err
    root = parse(html.read_text(encoding="utf-8"))
    heads, rows = overview(root)
    assert heads[:4] == ["dataset", "model", "form", "n"]
    assert len(rows) == 6 and len(root.find_all("svg", "rd")) == 6
    assert "confidence diagram" in root.find_all("details", "group")[3].text()
    check_group_links(root, 2)
    check_prose(root)
    # no test ran: the seed draws the consistency band, and says so
    seed = meta_of(root)["seed"]
    assert seed.startswith("0, for the consistency band: group g of each data set draws")
    assert "test" not in seed and "tests" not in meta_of(root)


def check_group_links(root: Node, n_keys: int) -> None:
    """Every key cell of the overview links to its row's group, each link named by the
    group's whole label (not three links that all read "breast_cancer")."""
    titles = {s.attrs["id"]: s.find("span", "name").text()
              for s in root.find_all("details", "group")}
    names = []
    for cells in overview(root)[1]:
        links = [c.find("a") for c in cells[:n_keys]]
        targets = {a.attrs["href"] for a in links}
        assert len(targets) == 1, targets
        title = titles[targets.pop().lstrip("#")]
        for cell, a in zip(cells[:n_keys], links, strict=True):
            assert a.text() == cell.text()  # the key, shown as it is
            assert a.attrs["aria-label"] == title
            assert a.text() in title
        names.append(title)
    assert len(set(names)) == len(titles)  # each group's row, named as its section


@pytest.mark.parametrize("options, draws", [
    ([], ["consistency band"]),
    (["--test", "spiegelhalter"], ["consistency band"]),  # an analytic test draws nothing
    (["--test", "skce", "--confidence-level", "0.9", "--n-resamples", "50"],
     ["consistency band", "tests' resamples", "intervals"]),
])
def test_report_html_states_the_seed_truthfully(capsys, preds, tmp_path, options, draws):
    """One line on the seed, naming what draws from it; never "the seed of the
    tests" when no test drew from it."""
    path, _ = preds
    html = tmp_path / "r.html"
    code, _, err = run(capsys, "report", path, "--by", "model", "--seed", "5", *options,
                       "--html", html)
    assert code == 0, err
    text = html.read_text(encoding="utf-8")
    assert "seed of the tests" not in text
    meta = meta_of(parse(text))
    used = meta["seed"].split(": group", 1)[0]
    assert used.startswith("5, for ")
    for what in ("consistency band", "tests' resamples", "intervals"):
        assert (what in used) == (what in draws), (what, meta["seed"])
    if "intervals" in draws:
        assert "seed" not in meta["intervals"] and "spawn" not in meta["intervals"]
    if options:
        assert meta["tests"].endswith("; null hypothesis: calibrated")


def test_smooth_needs_html(capsys, preds):
    path, _ = preds
    code, out, err = run(capsys, "report", path, "--smooth")
    assert code == 2 and out == ""
    assert err == "calibr: error: --smooth draws the smooth curve in the HTML report; give " \
                  "--html PATH.\n"


def _bad_destinations(tmp_path: Path, path: Path) -> list[tuple[str, str]]:
    folder = tmp_path / "folder"
    folder.mkdir()
    cases = [(str(folder), "is a directory"), (str(path), "is the input FILE"),
             (str(tmp_path / "missing" / "r.html"), "does not exist")]
    if os.geteuid() == 0:  # root writes anywhere a file system lets it: not /proc
        cases.append(("/proc/calibr-report.html", "cannot write it"))
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        cases.append((str(locked / "r.html"), "cannot write it"))
    return cases


def test_report_html_bad_destinations(capsys, preds, tmp_path):
    path, _ = preds
    before = path.read_bytes()
    for target, words in _bad_destinations(tmp_path, path):
        listing = sorted(p.name for p in tmp_path.rglob("*"))
        code, out, err = run(capsys, "report", path, "--html", target)
        assert code == 2, (target, err)
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("calibr: error: --html ")
        assert words in err, err
        assert sorted(p.name for p in tmp_path.rglob("*")) == listing
        assert path.read_bytes() == before


def test_report_html_refusals(capsys, preds, tmp_path):
    path, _ = preds
    out_csv = tmp_path / "r.csv"
    code, out, err = run(capsys, "report", path, "-o", out_csv, "--html", out_csv)
    assert code == 2 and err == "calibr: error: --html and --output must be different files.\n"
    code, out, err = run(capsys, "report", path, "--per-bin", "--html", tmp_path / "r.html")
    assert code == 2 and "--per-bin" in err and not (tmp_path / "r.html").exists()


@pytest.fixture
def both(tmp_path):
    df = load_breast_cancer_predictions()
    wide = df.pivot_table(index=["id", "y"], columns="model", values="p").reset_index()
    wide["segment"] = np.where(wide["id"] % 2 == 0, "even & <odd>", "odd")
    path = tmp_path / "both.csv"
    wide.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("baseline, candidate, status", [("logistic", "naive_bayes", 1),
                                                         ("naive_bayes", "logistic", 0)])
def test_compare_html(capsys, both, tmp_path, baseline, candidate, status):
    html = tmp_path / "compare.html"
    argv = ["compare", both, "--p-baseline", baseline, "--p-candidate", candidate, "--by",
            "segment", "--metrics", "ece,mce", "--n-resamples", "300"]
    code, out, err = run(capsys, *argv, "--html", html)
    assert code == status, err
    code2, csv, _ = run(capsys, *argv, "--format", "csv")
    assert code2 == status
    ref = pd.read_csv(io.StringIO(csv))
    root = parse(html.read_text(encoding="utf-8"))
    check_shown(root)
    heads, rows = overview(root)
    assert heads == ["segment", "metric", "n", "baseline", "candidate", "difference",
                     "bound (0.95)", "p-value", "worse"]
    for i, cells in enumerate(rows):
        cell = dict(zip(heads, cells, strict=True))
        assert cell["segment"].text() == ref["segment"][i]
        for col, name in (("baseline", "baseline"), ("candidate", "candidate"),
                          ("difference", "difference"), ("bound (0.95)", "ci_low"),
                          ("p-value", "pvalue")):
            assert numbers(cell[col]) == [ref[name][i]]
        assert cell["worse"].text() == ("yes" if ref["worse"][i] else "no")
    verdict = root.find("div", "verdict").text()
    assert f"calibr compare exits with status {status}" in verdict
    check_group_links(root, 1)
    # every row of the header has a label
    meta = [(tr.find("th").text(), tr.find("td").text()) for tr in root.find("table", "meta")
            .find_all("tr")]
    assert all(label for label, _ in meta), meta
    assert dict(meta)["difference"].startswith("candidate - baseline")
    check_prose(root)
    assert (("significantly worse" in verdict) == (status == 1))
    # each group's diagrams: the baseline's and the candidate's per-bin tables
    wide = pd.read_csv(both)
    for sec, seg in zip(root.find_all("details", "group"), sorted(wide["segment"].unique()),
                        strict=True):
        rows_ = wide[wide["segment"] == seg]
        body = sec.find("table", "bins").find("tbody").find_all("tr")
        for model, name in (("baseline", baseline), ("candidate", candidate)):
            tab = calibr.calibration_table(rows_[name], rows_["y"])
            mine = [tr for tr in body if tr.find_all("td")[0].text() == model]
            assert [numbers(tr)[3] for tr in mine] == tab["mean_confidence"].tolist()


def test_the_chart_of_differences_bounds_a_metric_where_higher_is_better(capsys, both,
                                                                         tmp_path):
    """A metric where higher is better (auroc, selective_accuracy) has the upper bound
    on the side of no change (its lower one is -inf): the chart draws its bar from
    that bound to the left edge, as the lower bound of an error runs to the right."""
    import re

    html = tmp_path / "compare.html"
    code, _, err = run(capsys, "compare", both, "--p-baseline", "logistic", "--p-candidate",
                       "naive_bayes", "--metrics", "ece,auroc,selective_accuracy",
                       "--n-resamples", "200", "--html", html)
    assert code == 1, err
    code, csv, _ = run(capsys, "compare", both, "--p-baseline", "logistic", "--p-candidate",
                       "naive_bayes", "--metrics", "ece,auroc,selective_accuracy",
                       "--n-resamples", "200", "--format", "csv")
    ref = pd.read_csv(io.StringIO(csv))
    assert np.isneginf(ref["ci_low"][1:]).all()  # why a lower bound draws nothing
    svg = parse(html.read_text(encoding="utf-8")).find("svg", "diff")
    bars = svg.find_all("path", "ci")
    assert len(bars) == 3
    ticks = svg.find_all("text", "tick")
    values = [float(t.text()) for t in ticks]
    xs = [float(t.attrs["x"]) for t in ticks]
    scale = (xs[-1] - xs[0]) / (values[-1] - values[0])
    (zero, _), = _path_points(svg.find("path", "zero").attrs["d"])
    for bar, bound, left in zip(bars, [ref["ci_low"][0], *ref["ci_high"][1:]],
                                [False, True, True], strict=True):
        d = bar.attrs["d"]
        start = _path_points(d)[0][0]
        end = float(re.search(r"H(-?[\d.]+)", d).group(1))
        assert start == pytest.approx(zero + scale * bound, abs=0.12)
        assert (end < start) == left
    root = parse(html.read_text(encoding="utf-8"))
    assert "left of 0 the candidate is worse" in root.text()
    # the verdict names what "worse" is for both kinds, not "worse calibrated"
    verdict = root.find("div", "verdict").text()
    assert "significantly worse" in verdict and "calibrated" not in verdict
    assert "a smaller score for a metric where higher is better" in verdict


def test_compare_html_shows_the_adjusted_p_value_and_its_bound(capsys, tmp_path):
    """--p-adjust: the page shows the adjusted p-value beside the raw one, "worse" reads
    it, and the adjusted value of a p-value 0 of 30 resamples is the bound
    "< 2 x 1/30" (Holm over 2 comparisons), not below 0.05."""
    html = tmp_path / "compare.html"
    rng = np.random.default_rng(7)
    p = rng.random(400)
    pd.DataFrame({"segment": np.repeat(["a", "b"], 200), "y": (rng.random(400) < p) * 1,
                  "p_old": p, "p_new": 0.95 + 0.04 * p}).to_csv(tmp_path / "b.csv", index=False)
    argv = ["compare", tmp_path / "b.csv", "--p-baseline", "p_old", "--p-candidate", "p_new",
            "--by", "segment", "--metrics", "ece", "--n-resamples", "30",
            "--p-adjust", "holm"]
    code, _, err = run(capsys, *argv, "--html", html)
    _, csv, _ = run(capsys, *argv, "--format", "csv")
    ref = pd.read_csv(io.StringIO(csv))
    assert (ref["pvalue"] == 0).all() and ref["pvalue_below_resolution"].all()
    assert code == 0, err
    root = parse(html.read_text(encoding="utf-8"))
    check_shown(root)
    heads, rows = overview(root)
    assert heads[-3:] == ["p-value", "p (holm)", "worse"]
    for cells in rows:
        cell = dict(zip(heads, cells, strict=True))
        assert cell["p-value"].text() == "< 0.03333"
        assert cell["p (holm)"].text() == "< 0.06667"
        assert numbers(cell["p (holm)"]) == [pytest.approx(2 / 30, rel=1e-15)]
        assert cell["worse"].text() == "no"
        assert not any("sig" in c.attrs.get("class", "") for c in cells)
    assert "No significant worsening" in root.find("div", "verdict").text()


def test_compare_html_charts_at_most_200_comparisons():
    """The chart of differences has a row per comparison: drawn for up to 200 of them,
    left out above (the table has every comparison)."""
    from calibr._html._compare import compare_html

    for n, chart in ((200, True), (201, False)):
        result = pd.DataFrame({"segment": [f"s{i}" for i in range(n)], "metric": "ece",
                               "n": 100, "baseline": 0.02, "candidate": 0.03,
                               "difference": 0.01, "ci_low": -0.01, "ci_high": 0.03,
                               "pvalue": 0.2, "worse": False})
        empty = pd.DataFrame({"p": np.array([], dtype=float)})
        page = compare_html(result, ["segment"], ["calibr compare of both.csv"], [], empty,
                            empty, pd.Series([], dtype=np.int64), None, 0.95, 300, 1)
        root = parse(page)
        assert len(overview(root)[1]) == n
        assert len(root.find_all("svg", "diff")) == chart
        assert ("The chart: each comparison's difference" in page) == chart


def test_report_html_of_a_directory_and_of_weights(capsys, preds, tmp_path):
    """A directory of files (Dask) is gathered for the page; with --weights the
    diagrams have no consistency band, and the page says so."""
    path, df = preds
    parts = tmp_path / "parts"
    parts.mkdir()
    df.iloc[:150].to_csv(parts / "a.csv", index=False)
    df.iloc[150:].to_csv(parts / "b.csv", index=False)
    one, many = tmp_path / "one.html", tmp_path / "many.html"
    assert run(capsys, "report", path, "--by", "model", "--html", one)[0] == 0
    code, _, err = run(capsys, "report", parts, "--by", "model", "--html", many)
    assert code == 0, err
    a, b = parse(one.read_text(encoding="utf-8")), parse(many.read_text(encoding="utf-8"))
    assert numbers(a.find("table", "overview")) == numbers(b.find("table", "overview"))
    meta = {tr.find("th").text(): tr.find("td").text() for tr in b.find("table", "meta")
            .find_all("tr")}
    assert meta["data"] == f"{parts}: {len(df)} rows"
    df.assign(w=np.arange(len(df)) % 3).to_csv(tmp_path / "w.csv", index=False)
    weighted = tmp_path / "weighted.html"
    code, _, err = run(capsys, "report", tmp_path / "w.csv", "--by", "model", "--weights", "w",
                       "--html", weighted)
    assert code == 0, err
    root = parse(weighted.read_text(encoding="utf-8"))
    ref = calibr.calibration_table("p", "y", data=df.assign(w=np.arange(len(df)) % 3)
                                   .groupby("model"), weights="w")
    first = root.find_all("details", "group")[0]
    rows = first.find("table", "bins").find("tbody").find_all("tr")
    mine = ref[ref["model"] == ref["model"].iloc[0]]
    assert [numbers(tr)[2] for tr in rows] == mine["n"].astype(float).tolist()
    assert "no consistency band" in first.text()


def test_compare_html_refuses_its_inputs(capsys, both, tmp_path):
    before = both.read_bytes()
    code, out, err = run(capsys, "compare", both, "--p-baseline", "logistic",
                         "--p-candidate", "naive_bayes", "--html", both)
    assert code == 2 and out == ""
    assert err.startswith("calibr: error: --html ") and "is the input FILE" in err
    assert err.count("\n") == 1
    assert both.read_bytes() == before
    for target, words in _bad_destinations(tmp_path, both):
        listing = sorted(p.name for p in tmp_path.rglob("*"))
        code, out, err = run(capsys, "compare", both, "--p-baseline", "logistic",
                             "--p-candidate", "naive_bayes", "--html", target)
        assert code == 2 and out == "", (target, err)
        assert err.count("\n") == 1 and err.startswith("calibr: error: --html ")
        assert words in err, err
        assert sorted(p.name for p in tmp_path.rglob("*")) == listing
    assert both.read_bytes() == before


# --------------------------------------------------------------------------
# in a browser: headless Chromium


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    unavailable("Chromium is not installed (apt-get install chromium; .ci/install does)")
    raise AssertionError  # pragma: no cover


#: Where the browser tests keep their screenshots when ``$CALIBR_ARTEFACTS`` is unset:
#: ``artefacts/`` at the repository's root, which .gitignore leaves out.
ARTEFACTS = Path(__file__).resolve().parents[1] / "artefacts"


def artefacts() -> Path:
    """The folder of the screenshots: ``$CALIBR_ARTEFACTS``, else :data:`ARTEFACTS`."""
    folder = Path(os.environ.get("CALIBR_ARTEFACTS") or ARTEFACTS)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_screenshots_have_a_default_place(monkeypatch):
    """Without $CALIBR_ARTEFACTS (as .ci/run) the screenshots go to artefacts/ at the
    repository's root, which git ignores."""
    monkeypatch.delenv("CALIBR_ARTEFACTS", raising=False)
    root = Path(__file__).resolve().parents[1]
    assert artefacts() == root / "artefacts"
    if shutil.which("git") and (root / ".git").exists():
        done = subprocess.run(["git", "check-ignore", "-q", "artefacts/html_report.png"],
                              cwd=root, check=False)
        assert done.returncode == 0, "artefacts/ is not in .gitignore"
    else:
        assert "/artefacts/" in (root / ".gitignore").read_text().splitlines()


def browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Chromium on ``page`` (file://), headless, with console messages on stderr."""
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", "--disable-background-networking",
           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
           "--virtual-time-budget=5000", *args, page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


#: Run after the page's own script: sorts the overview by a column's button twice and
#: measures every figure as the browser laid it out, into <pre id="probe">.
_PROBE = """<script>
(function(){
var out={};
var svgs=document.querySelectorAll("svg");out.svgs=svgs.length;
out.drawn=Array.prototype.map.call(svgs,function(s){
  var paths=s.querySelectorAll("path"),n=0;
  paths.forEach(function(p){var b=p.getBBox();
    if(p.getAttribute("d")&&(b.width>0||b.height>0))n++;});
  var r=s.getBoundingClientRect();return [n,paths.length,r.width,r.height];});
var t=document.querySelector("table.overview"),col=%d;
function order(){return Array.prototype.map.call(t.tBodies[0].rows,function(r){
  return r.cells[col].querySelector("data").getAttribute("value");});}
var b=t.tHead.rows[0].cells[col].querySelector("button");
out.before=order();b.click();out.asc=order();
out.aria=t.tHead.rows[0].cells[col].getAttribute("aria-sort");b.click();out.desc=order();
var pre=document.createElement("pre");pre.id="probe";pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);})();
</script>"""


def _probe(page_text: str, col: int, tmp_path: Path) -> dict:
    probed = tmp_path / "probed.html"
    probed.write_text(page_text.replace("</body>", _PROBE % col + "</body>"), encoding="utf-8")
    proc = browse(probed, tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console(proc.stderr) == [], console(proc.stderr)
    pre = parse(proc.stdout).find("pre")
    return json.loads(pre.text())


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_in_chromium_report(tmp_path, breast):
    page = calibr.html_report(breast.groupby("model"), "p", "y", tests="skce", smooth=True)
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    # the page as it is: no console message at all (errors, warnings, logs)
    proc = browse(path, tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0 and console(proc.stderr) == [], console(proc.stderr)
    assert "<svg" in proc.stdout
    heads = overview(parse(page))[0]
    got = _probe(page, heads.index("ece"), tmp_path)
    # every figure drawn: each path laid out with a non-empty box, the svg its full size
    assert got["svgs"] == 3
    for drawn, total, width, height in got["drawn"]:
        assert drawn == total and total >= 8
        assert width > 300 and height > 300
    values = [float(v) for v in got["before"]]
    assert [float(v) for v in got["asc"]] == sorted(values)
    assert [float(v) for v in got["desc"]] == sorted(values, reverse=True)
    assert got["aria"] == "ascending"
    shot = artefacts() / "html_report.png"
    shot.unlink(missing_ok=True)
    proc = browse(path, tmp_path / "profile", "--window-size=1280,2000", f"--screenshot={shot}")
    assert proc.returncode == 0 and console(proc.stderr) == []
    assert _png_size(shot) == (1280, 2000)


def test_in_chromium_compare(capsys, both, tmp_path):
    html = tmp_path / "compare.html"
    code, _, err = run(capsys, "compare", both, "--p-baseline", "logistic", "--p-candidate",
                       "naive_bayes", "--by", "segment", "--metrics", "ece,mce",
                       "--n-resamples", "200", "--html", html)
    assert code == 1, err
    page = html.read_text(encoding="utf-8")
    heads = overview(parse(page))[0]
    got = _probe(page, heads.index("p-value"), tmp_path)
    assert got["svgs"] == 3  # the chart of differences and a figure per segment
    for drawn, total, _, _ in got["drawn"]:
        assert drawn == total and total >= 4
    values = [float(v) for v in got["before"]]
    assert [float(v) for v in got["asc"]] == sorted(values)
    shot = artefacts() / "compare_report.png"
    proc = browse(html, tmp_path / "profile", "--window-size=1280,1600", f"--screenshot={shot}")
    assert proc.returncode == 0 and console(proc.stderr) == []
    assert _png_size(shot) == (1280, 1600)


#: Run after the page's own script: what the DOM holds, into <pre id="probe">: the
#: elements that a label could have injected, the labels as text, and the layout of
#: the overview at the window's width.
_DOM_PROBE = """<script>
(function(){
var out={};
out.scripts=document.querySelectorAll("script").length;
out.injected=["b","img","iframe","svg script","a[onclick]","[onerror]","[onload]"].map(
  function(s){return document.querySelectorAll(s).length;});
out.hacked=window.__calibr_hacked__===true;
out.title=document.title;
var t=document.querySelector("table.overview");
out.keys=Array.prototype.map.call(t.tBodies[0].rows,function(r){
  return r.cells[0].textContent;});
out.links=Array.prototype.map.call(t.querySelectorAll("tbody a"),function(a){
  return a.getAttribute("aria-label");});
out.names=Array.prototype.map.call(document.querySelectorAll("details.group summary .name"),
  function(n){return n.textContent;});
var wrap=t.parentElement,last=t.tHead.rows[0].cells[t.tHead.rows[0].cells.length-1];
out.width=window.innerWidth;out.scroll=[wrap.scrollWidth,wrap.clientWidth];
out.last=last.getBoundingClientRect().right;
var pre=document.createElement("pre");pre.id="probe";pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);})();
</script>"""


def _dom(page_text: str, tmp_path: Path, *args: str) -> dict:
    """Chromium's DOM of ``page_text`` as :data:`_DOM_PROBE` reads it."""
    head, tail = page_text.rsplit("</body>", 1)
    probed = tmp_path / "dom.html"
    probed.write_text(head + _DOM_PROBE + "</body>" + tail, encoding="utf-8")
    proc = browse(probed, tmp_path / "profile", *args, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console(proc.stderr) == [], console(proc.stderr)
    return json.loads(parse(proc.stdout).find("pre").text())


def test_in_chromium_group_labels_are_text(tmp_path):
    """Group labels that are markup, quotes and ampersands, fed to the page and read
    back from the browser's DOM: each is the text of its key cell, section heading and
    link name; no label became an element, an attribute or a script that ran."""
    labels = ['<script>window.__calibr_hacked__=true</script>', "a & b", 'say "hi"', "it's",
              "<b>bold</b>", '<img src=x onerror="window.__calibr_hacked__=true">',
              "&amp; &lt;", '"><svg onload="window.__calibr_hacked__=true">']
    rng = np.random.default_rng(5)
    n = 40 * len(labels)
    p = rng.random(n)
    df = pd.DataFrame({"g": np.repeat(labels, 40), "p": p, "y": (rng.random(n) < p) * 1})
    page = calibr.html_report(df.groupby("g"), "p", "y", bins=4, consistency=None,
                              title='<script>window.__calibr_hacked__=true</script>')
    got = _dom(page, tmp_path)
    assert got["scripts"] == 2  # the page's own and the probe
    assert got["injected"] == [0] * 7
    assert got["hacked"] is False
    assert got["title"] == "<script>window.__calibr_hacked__=true</script>"
    assert got["keys"] == sorted(labels)
    assert got["names"] == [f"g = {v}" for v in sorted(labels)]
    assert got["links"] == got["names"]


def test_in_chromium_the_overview_fits_a_desktop_window(tmp_path, breast):
    """A wide overview (two keys, three metrics with intervals, two resampling tests
    and their Holm columns) fits 1280 px: no sideways scroll, the last column (the
    Holm-adjusted consistency p-value) inside the window. Screenshot kept."""
    frame = breast.assign(dataset="breast_cancer")
    page = calibr.html_report(frame.groupby(["dataset", "model"]), "p", "y",
                              metrics=["ece", "mce", "skce"], tests=["skce", "consistency"],
                              confidence_level=0.9, n_resamples=50, consistency=None)
    heads = overview(parse(page))[0]
    assert heads[-1] == "consistency p (Holm)" and len(heads) == 11
    got = _dom(page, tmp_path, "--window-size=1280,1000")
    assert got["width"] == 1280
    scroll, client = got["scroll"]
    assert scroll <= client, got
    assert got["last"] <= 1280, got
    path = tmp_path / "wide.html"
    path.write_text(page, encoding="utf-8")
    shot = artefacts() / "html_report_wide.png"
    shot.unlink(missing_ok=True)
    proc = browse(path, tmp_path / "profile", "--window-size=1280,1000", f"--screenshot={shot}")
    assert proc.returncode == 0 and _png_size(shot) == (1280, 1000)



#: Run after the page's own script: per column of the overview, the x of the decimal
#: point of each row's number (its own left edge: a Range over the character), or of
#: the end of a number without one, into <pre id="probe">.
_POINT_PROBE = """<script>
(function(){
var t=document.querySelector("table.overview"),cols={};
Array.prototype.forEach.call(t.tBodies[0].rows,function(row){
  Array.prototype.forEach.call(row.cells,function(td,j){
    if(td.classList.contains("k"))return;var d=td.querySelector("data");if(!d)return;
    var w=document.createTreeWalker(d,NodeFilter.SHOW_TEXT),node,last=null,r=null;
    while((node=w.nextNode())){last=node;var at=node.textContent.indexOf(".");
      if(at>=0&&!r){r=document.createRange();r.setStart(node,at);r.setEnd(node,at+1);}}
    if(!r){r=document.createRange();var n=last.textContent.length;
      r.setStart(last,n);r.setEnd(last,n);}
    (cols[j]=cols[j]||[]).push([d.textContent,r.getBoundingClientRect().left]);});});
var pre=document.createElement("pre");pre.id="probe";pre.textContent=JSON.stringify(cols);
document.body.appendChild(pre);})();
</script>"""


def test_in_chromium_the_overview_aligns_numbers_on_the_point(tmp_path, breast):
    """In each column of the overview the decimal points line up (0.0186 above
    0.06211, 0.01 above 0.285, 1 above 0.5), with and without a mark (*) after the
    number: the pads are layout, the numbers' text is as it was."""
    frame = pd.concat([breast.assign(dataset=f"set_{i}") for i in range(2)])
    page = calibr.html_report(frame.groupby(["dataset", "model"]), "p", "y",
                              metrics=["ece", "mce", "skce"], tests=["skce", "consistency"],
                              n_resamples=50, consistency=None)
    check_shown(parse(page))
    head, tail = page.rsplit("</body>", 1)
    probed = tmp_path / "points.html"
    probed.write_text(head + _POINT_PROBE + "</body>" + tail, encoding="utf-8")
    proc = browse(probed, tmp_path / "profile", "--window-size=1280,1000", "--dump-dom")
    assert proc.returncode == 0 and console(proc.stderr) == [], console(proc.stderr)
    cols = json.loads(parse(proc.stdout).find("pre").text())
    assert len(cols) == 9  # n, ece, mce, mce bin n, skce, two p-values and their Holm
    digits = set()
    for column in cols.values():
        xs = [x for _, x in column]
        digits |= {len(text.partition(".")[2]) for text, _ in column}
        assert max(xs) - min(xs) < 0.5, column
    assert len(digits) > 3  # the columns hold numbers of several lengths
    # a column whose widest tail is scientific ("e" and "-" are not digit-wide), with
    # bold (significant) and plain numbers and a mark on one
    from calibr._display import format as _format
    from calibr._html import _page

    values = [1.234e-05, 0.5, 3.0, -0.0012, 0.25]
    rows = [[_page.Cell(_format.num(v) + ('<span class="flag">*</span>' if v == 3.0 else ""),
                        repr(v), "sig" if v < 0.3 else "")] for v in values]
    table = _page.Table([("x", "", "")], rows, sortable=True, cls="overview")
    page = _page.render(_page.Page("t", [], table, []))
    head, tail = page.rsplit("</body>", 1)
    probed.write_text(head + _POINT_PROBE + "</body>" + tail, encoding="utf-8")
    proc = browse(probed, tmp_path / "profile", "--window-size=1280,1000", "--dump-dom")
    column, = json.loads(parse(proc.stdout).find("pre").text()).values()
    assert [text for text, _ in column] == ["1.234e-05", "0.5", "3", "-0.0012", "0.25"]
    assert max(x for _, x in column) - min(x for _, x in column) < 0.5, column


# --------------------------------------------------------------------------
# on a phone: Chromium's device emulation over the DevTools protocol


class DevTools:
    """Headless Chromium driven over ``--remote-debugging-pipe`` (the standard library
    only: the protocol's JSON messages, each ended by a NUL byte, on the file
    descriptors 3, read by the browser, and 4, written by it)."""

    def __init__(self, profile: Path) -> None:
        to_browser, self._to = os.pipe()
        self._from, from_browser = os.pipe()

        def descriptors() -> None:  # in the child: the pipe's ends at 3 and 4
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.proc = subprocess.Popen(
            [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--no-first-run", "--disable-extensions", "--disable-background-networking",
             f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=descriptors, pass_fds=(3, 4))
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._id, self.events = b"", 0, []

    def _message(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from, 1 << 16)
            assert chunk, "Chromium closed the DevTools pipe"
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """Send a command (to a page's ``session``) and return its result."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to, json.dumps(message).encode() + b"\0")
        while True:
            got = self._message()
            if got.get("id") == self._id:
                assert "error" not in got, (method, got["error"])
                return got["result"]
            self.events.append(got)

    def wait(self, method: str) -> dict:
        """The first event ``method`` (kept or still to come)."""
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            got = self._message()
            if got.get("method") == method:
                return got
            self.events.append(got)

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:  # pragma: no cover - a browser that hangs
                self.proc.kill()
                self.proc.wait()
            os.close(self._to)
            os.close(self._from)


#: A phone's screen as Chromium's device emulation lays it out (CSS pixels).
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}

#: Run in the page on the phone: opens every group, then measures the layout (the
#: document's width, every number's and figure's box) and the console's errors.
_PHONE_PROBE = """(function(){
document.querySelectorAll("details.group").forEach(function(d){d.open=true;});
var vw=window.innerWidth,out={width:vw,scroll:document.documentElement.scrollWidth,
outside:[],hidden:0,numbers:0,figures:0};
function check(el,what){var r=el.getBoundingClientRect();
  if(r.width<=0||r.height<=0){out.hidden++;return;}
  if(r.left<-0.5||r.right>vw+0.5)out.outside.push([what,r.left,r.right]);}
document.querySelectorAll("data").forEach(function(d){out.numbers++;
  check(d,d.getAttribute("value")+" "+d.textContent);});
document.querySelectorAll("svg").forEach(function(s){out.figures++;check(s,"svg");
  s.querySelectorAll("text").forEach(function(t){check(t,"svg text "+t.textContent);});});
return JSON.stringify(out);})()"""


def on_a_phone(page: Path, profile: Path, shot: Path) -> dict:
    """``page`` on a 390 px phone (Chromium's device emulation: a mobile viewport of
    width 390 at 3 device pixels per CSS pixel, as a phone lays out a page with a
    viewport meta tag; ``--window-size`` would lay it out at 500 px): what
    :data:`_PHONE_PROBE` measures, and a screenshot of the whole page in ``shot``."""
    browser = DevTools(profile)
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target,
                               flatten=True)["sessionId"]
        browser.send("Page.enable", session)
        browser.send("Runtime.enable", session)
        browser.send("Emulation.setDeviceMetricsOverride", session, **PHONE)
        browser.send("Page.navigate", session, url=page.as_uri())
        browser.wait("Page.loadEventFired")
        got = json.loads(browser.send("Runtime.evaluate", session, expression=_PHONE_PROBE,
                                      returnByValue=True)["result"]["value"])
        got["console"] = [e["params"] for e in browser.events
                          if e.get("method") in ("Runtime.consoleAPICalled",
                                                 "Runtime.exceptionThrown")]
        height = json.loads(browser.send(
            "Runtime.evaluate", session, returnByValue=True,
            expression="JSON.stringify(document.documentElement.scrollHeight)")
            ["result"]["value"])
        png = browser.send("Page.captureScreenshot", session, format="png",
                           captureBeyondViewport=True,
                           clip={"x": 0, "y": 0, "width": PHONE["width"],
                                 "height": min(height, 5000), "scale": 1})["data"]
        shot.write_bytes(base64.b64decode(png))
    finally:
        browser.close()
    return got


def check_phone(got: dict) -> None:
    """No sideways scroll at 390 px, and every number and figure inside the screen."""
    assert got["width"] == PHONE["width"], got["width"]  # not widened to fit the content
    assert got["scroll"] <= PHONE["width"], got["scroll"]
    assert got["outside"] == [], got["outside"][:10]
    assert got["hidden"] == 0
    assert got["numbers"] > 100 and got["figures"] > 0
    assert got["console"] == []


def test_on_a_phone_the_report_fits(tmp_path, breast):
    """A report of 9 groups with two keys, three metrics with intervals and two tests
    with their Holm columns, on a 390 px phone: no sideways scroll, every number (the
    overview's, each group's per-bin table's) and every figure with its labels inside
    the screen. Screenshot kept (html_report_phone.png)."""
    frame = pd.concat([breast.assign(dataset=f"set_{i}") for i in range(3)])
    page = calibr.html_report(frame.groupby(["dataset", "model"]), "p", "y",
                              metrics=["ece", "mce", "skce"], tests=["skce", "consistency"],
                              confidence_level=0.9, n_resamples=50)
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    shot = artefacts() / "html_report_phone.png"
    shot.unlink(missing_ok=True)
    check_phone(on_a_phone(path, tmp_path / "profile", shot))
    assert _png_size(shot)[0] == PHONE["width"] * PHONE["deviceScaleFactor"]


def test_on_a_phone_the_comparison_fits(capsys, both, tmp_path):
    """compare's page on a 390 px phone: the overview, the chart of differences (it
    scales with the screen) and both models' diagrams and per-bin tables inside the
    screen. Screenshot kept (compare_report_phone.png)."""
    html = tmp_path / "compare.html"
    code, _, err = run(capsys, "compare", both, "--p-baseline", "logistic", "--p-candidate",
                       "naive_bayes", "--by", "segment", "--metrics", "ece,mce",
                       "--n-resamples", "200", "--html", html)
    assert code == 1, err
    shot = artefacts() / "compare_report_phone.png"
    shot.unlink(missing_ok=True)
    got = on_a_phone(html, tmp_path / "profile", shot)
    check_phone(got)
    assert got["figures"] == 3


def test_a_test_run_below_its_least_n_is_marked_and_never_bold():
    """A group of 4 rows is below the 5 rows from which Spiegelhalter's test holds its
    level (docs/calibration_tests.md, "Small samples"): its p-value, far below 0.05,
    carries the mark and is not bold, in both p columns; the group of 60 is bold and
    unmarked; the note says why; the header gives the least n."""
    gen = np.random.default_rng(5)
    big = gen.uniform(0.6, 0.95, 60)
    df = pd.DataFrame({"g": ["big"] * 60 + ["tiny"] * 4,
                       "p": np.concatenate([big, [0.9, 0.92, 0.95, 0.97]]),
                       "y": np.concatenate([(gen.random(60) < big - 0.4), [0, 0, 0, 0]])
                       .astype(int)})
    page = calibr.html_report(df.groupby("g"), "p", "y", metrics=["ece"],
                              tests="spiegelhalter", consistency=None)
    root = parse(page)
    heads, rows = overview(root)
    cells = [dict(zip(heads, r, strict=True)) for r in rows]
    for col in ("spiegelhalter p", "spiegelhalter p (Holm)"):
        big_cell, tiny_cell = cells[0][col], cells[1][col]
        assert numbers(tiny_cell)[0] < 0.05 and numbers(big_cell)[0] < 0.05
        assert tiny_cell.text().endswith("\u00a7") and "\u00a7" not in big_cell.text()
        assert "sig" not in tiny_cell.attrs.get("class", "").split()
        # several groups: the adjusted p is the bold one
        assert ("sig" in big_cell.attrs.get("class", "").split()) == col.endswith("(Holm)")
    assert ("the group has fewer rows than the test holds its level from "
            "(docs/calibration_tests.md, &quot;Small samples&quot;)" in page
            or "the group has fewer rows than the test holds its level from "
            "(docs/calibration_tests.md, \"Small samples\")" in page)
    assert "spiegelhalter (spiegelhalter, holds its level from 5 rows)" in page
