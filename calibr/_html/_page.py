"""The HTML page: one self-contained file (styles, script and figures inline; no
network at view time), from a :class:`Page` that the builders fill in
(``_report`` for ``calibr report`` and :func:`calibr.html_report`, ``_compare``
for ``calibr compare``).

What a reader sees, top to bottom: the title and a header table of what was
measured; for ``compare`` the verdict in words; the overview table of every
group (click a column's heading to sort by it; each group's name links to its
section); notes on the marks; how to read the diagrams, said once; then one
section per group, collapsed with ``<details>`` when there are many, each with
its reliability diagram, per-bin table and what differs in it from the others.
The overview fits the window: its headings and intervals wrap rather than
scroll sideways.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from .._display.format import esc

#: A tag in a heading's HTML (the heading's text is its label in a narrow layout).
_TAG = re.compile(r"<[^>]*>")

#: With more groups than this, every group's section starts collapsed (a report of
#: 1,000 groups lays out only the overview until a section is opened).
OPEN_AT_MOST = 6


@dataclass
class Cell:
    """A table cell: its HTML, the value it sorts by (a number as text, or None to
    sort by its text) and its CSS classes."""

    html: str
    sort: str | None = None
    cls: str = ""


@dataclass
class Table:
    """A table: the headings (HTML, a tooltip that says what the column is, and
    "k" for a column of keys, aligned left) and the rows of cells."""

    head: list[tuple[str, str, str]]
    rows: list[list[Cell]]
    sortable: bool = False
    cls: str = ""


@dataclass
class Section:
    """One group: its heading (text), the facts shown beside it when collapsed
    (HTML), its figure (an ``<svg>``), its per-bin table and notes (below them, and
    ``lead`` above them: what a reader must know before reading the figure)."""

    anchor: str
    title: str
    facts: str
    figure: str
    table: Table
    notes: list[str] = field(default_factory=list)
    lead: list[str] = field(default_factory=list)  # HTML: notes above the figure


@dataclass
class Page:
    """Everything one report shows."""

    title: str
    header: list[tuple[str, str]]  # (what, text), escaped when rendered
    overview: Table
    sections: list[Section]
    notes: list[str] = field(default_factory=list)  # HTML
    verdict: tuple[str, str] | None = None  # ("ok" or "worse", HTML)
    figure: str = ""  # an <svg> under the overview (compare's differences)
    kind: str = "report"
    rows_are: tuple[str, str] = ("group", "groups")  # what a row of the overview is
    legend: list[str] = field(default_factory=list)  # HTML: how to read every diagram, once


_CSS = """
:root{--fg:#1d2733;--muted:#5b6675;--line:#d7dde4;--soft:#f3f5f8;--accent:#0072b2;
--warn:#a15c00;--warnbg:#fff4e0;--bad:#b3261e;--badbg:#fdecea;--ok:#1e6b35;--okbg:#e8f5ec}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",
Arial,sans-serif;color:var(--fg);background:#fff}
main{max-width:1360px;margin:0 auto;padding:22px 24px 60px;overflow-wrap:break-word}
h1{font-size:24px;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:18px;margin:28px 0 10px}
.sub{color:var(--muted);margin:0 0 16px}
table{border-collapse:collapse}
.meta{margin:0 0 8px;font-size:13px}
.meta th{text-align:left;font-weight:600;padding:2px 16px 2px 0;vertical-align:top;
color:var(--muted);white-space:nowrap}
.meta td{padding:2px 0;overflow-wrap:anywhere}
.grid{font-size:13px;font-variant-numeric:tabular-nums}
.grid th,.grid td{padding:5px 10px;border-bottom:1px solid var(--line);text-align:right;
white-space:nowrap}
.grid th.k,.grid td.k{text-align:left}
.grid .tl{display:inline-grid;text-align:left}
.grid .tl::before,.grid .tl::after{content:attr(data-w);grid-area:1/1;visibility:hidden;
height:0;font-weight:700}.grid .tl::after{content:attr(data-x)}.grid .tl>span{grid-area:1/1}
.grid .al,.grid .v>.flag:first-of-type{display:inline-block;width:1ch;text-align:left;
font-weight:700}
.grid thead th{background:var(--soft);font-weight:600;position:sticky;top:0;z-index:1;
border-bottom:2px solid var(--line)}
.grid tbody tr:hover{background:#f7fafd}
.sortable thead th button{all:unset;cursor:pointer;padding-right:12px;position:relative}
.sortable thead th button:focus-visible{outline:2px solid var(--accent)}
.sortable thead th button::after{content:"\\2195";position:absolute;right:0;color:#a8b1bc;
font-size:11px}
.sortable thead th[aria-sort=ascending] button::after{content:"\\2191";color:var(--fg)}
.sortable thead th[aria-sort=descending] button::after{content:"\\2193";color:var(--fg)}
.wrap{overflow-x:auto;max-width:100%;width:fit-content;border:1px solid var(--line);
border-radius:6px}
.wrap.tall{max-height:70vh}
.ci{color:var(--muted);font-size:12px;display:block}
.overview th,.overview td{padding:5px 8px}
.overview thead th{white-space:normal;vertical-align:bottom;min-width:3.5em}
.overview thead th button{display:inline-block}
div.legend{font-size:13px;margin:6px 0 10px;color:var(--muted)}
div.legend .notes{margin-top:2px}
.flag{color:var(--warn);font-weight:600}
td.few,tr.few td{background:var(--warnbg)}
td.worst{background:var(--badbg)}
.sig{color:var(--bad);font-weight:600}
.tag{display:inline-block;font-size:11px;font-weight:600;border-radius:3px;padding:0 5px;
margin-left:6px;vertical-align:1px}
.tag.few{background:var(--warnbg);color:var(--warn)}.tag.worst{background:var(--badbg);
color:var(--bad)}
.notes{color:var(--muted);font-size:13px;margin:8px 0 0;padding-left:18px}
p.lead{font-size:13px;margin:0;padding:10px 14px;background:var(--warnbg);
border-bottom:1px solid var(--line)}
.verdict{border-radius:6px;padding:12px 16px;margin:12px 0 6px;font-size:15px}
.verdict.ok{background:var(--okbg);border-left:5px solid var(--ok)}
.verdict.worse{background:var(--badbg);border-left:5px solid var(--bad)}
details.group{border:1px solid var(--line);border-radius:6px;margin:10px 0}
details.group>summary{cursor:pointer;padding:9px 14px;background:var(--soft);
border-radius:6px;list-style-position:inside}
details.group[open]>summary{border-bottom:1px solid var(--line);border-radius:6px 6px 0 0}
summary .name{font-weight:600}summary .facts{color:var(--muted);margin-left:10px;
font-variant-numeric:tabular-nums}
.body{display:flex;flex-wrap:wrap;gap:18px;padding:14px;align-items:flex-start}
.body .wrap{flex:0 1 auto}
.bins{font-size:12px}.bins td,.bins th{padding:3px 7px}
.tools{margin:6px 0}.tools button{font:inherit;font-size:12px;padding:2px 10px;
margin-right:6px;border:1px solid var(--line);border-radius:4px;background:#fff;
cursor:pointer}
svg{font-family:inherit}svg.rd{flex:0 0 auto}
svg .grid{stroke:#e8ecf0;stroke-width:1;fill:none}
svg .frame{fill:none;stroke:#9aa4af;stroke-width:1}
svg .diag{stroke:#7d8894;stroke-dasharray:4 3;fill:none}
svg .band{opacity:.18}
svg .band.several{opacity:1;fill-opacity:.07;stroke-width:1;stroke-opacity:.55;
stroke-dasharray:3 2}
svg .ci{stroke-width:1.4;fill:none;opacity:.75}
svg .curve{stroke-width:1.6;fill:none}
svg .smooth{stroke-width:2;fill:none;stroke-dasharray:6 3;opacity:.9}
svg .smooth.few{opacity:.28;stroke-width:1.5}
svg .pt.few{fill:#fff;stroke-width:1.6}
svg .worst{fill:none;stroke:#b3261e;stroke-width:1.6}
svg .hist{opacity:.55}
svg .zero{stroke:#7d8894;stroke-dasharray:4 3}
svg .tick{font-size:10px;fill:#5b6675}svg .label{font-size:11px;fill:#3a4552}
svg .legend{font-size:11px;fill:#1d2733}
footer{color:var(--muted);font-size:12px;margin-top:36px;border-top:1px solid var(--line);
padding-top:10px}
svg.rd,svg.diff{max-width:100%;height:auto}
@media print{details.group{break-inside:avoid}.tools{display:none}}
@media (max-width:640px){
main{padding:14px 12px 40px}
.meta th,.meta td{display:block;padding:0}.meta th{padding-top:6px}
.wrap,.wrap.tall{overflow:visible;max-height:none;width:auto;border:0;border-radius:0}
.grid,.grid tbody,.grid tr,.grid td{display:block}
.grid thead tr{display:flex;flex-wrap:wrap;gap:4px 6px;padding:6px 0}
.grid thead th{position:static;border:0;background:none;min-width:0;padding:0;
white-space:nowrap}
.sortable thead th button{padding:2px 18px 2px 8px;border:1px solid var(--line);
border-radius:4px;background:var(--soft);font-size:12px}
.sortable thead th button::after{right:5px;top:3px}
.grid:not(.sortable) thead{position:absolute;width:1px;height:1px;overflow:hidden;
clip:rect(0 0 0 0)}
.grid tbody tr{border:1px solid var(--line);border-radius:6px;margin:0 0 8px;padding:4px 0}
.grid th,.grid td,.overview th,.overview td{white-space:normal}
.grid td{display:flex;justify-content:space-between;align-items:baseline;gap:12px;
border:0;padding:2px 10px;text-align:right}
.grid td::before{content:attr(data-label);color:var(--muted);font-weight:600;
text-align:left;flex:0 1 auto}
.grid td>.v{flex:0 1 auto;min-width:0;overflow-wrap:anywhere}
.grid td[data-label=""]::before{content:none}.grid td:empty{display:none}
.grid .al,.grid .tl::before,.grid .tl::after{display:none}
.body{padding:8px;gap:10px}.body>.wrap{flex:1 1 100%}
svg.rd{flex:1 1 auto}
details.group>summary{padding:8px 10px}
}
"""

# Sorting: a heading's button sorts its table's rows by the cells' data-sort
# (numbers; missing ones last) or text; a link to a group opens its section.
_JS = """
(function(){
function key(row,i){var c=row.cells[i];if(!c)return[2,""];var s=c.getAttribute("data-sort");
if(s!==null){var v=parseFloat(s);return isNaN(v)?[1,0]:[0,v];}
return[0,c.textContent.trim().toLowerCase()];}
document.querySelectorAll("table.sortable").forEach(function(t){
var ths=t.tHead.rows[0].cells;
Array.prototype.forEach.call(ths,function(th,i){var b=th.querySelector("button");if(!b)return;
b.addEventListener("click",function(){
var asc=th.getAttribute("aria-sort")!=="ascending";
Array.prototype.forEach.call(ths,function(h){h.removeAttribute("aria-sort");});
th.setAttribute("aria-sort",asc?"ascending":"descending");
var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
rows.sort(function(a,b){var x=key(a,i),y=key(b,i);if(x[0]!==y[0])return x[0]-y[0];
if(x[1]<y[1])return asc?-1:1;if(x[1]>y[1])return asc?1:-1;
return a.getAttribute("data-i")-b.getAttribute("data-i");});
var frag=document.createDocumentFragment();rows.forEach(function(r){frag.appendChild(r);});
body.appendChild(frag);});});});
function reveal(){var id=decodeURIComponent(location.hash.slice(1));if(!id)return;
var d=document.getElementById(id);if(d&&d.tagName==="DETAILS"){d.open=true;d.scrollIntoView();}}
window.addEventListener("hashchange",reveal);reveal();
document.querySelectorAll("[data-all]").forEach(function(b){b.addEventListener("click",
function(){var open=b.getAttribute("data-all")==="open";
document.querySelectorAll("details.group").forEach(function(d){d.open=open;});});});
})();
"""


#: A cell that starts with a number: the number's element, its text, and the mark
#: right after it.
_LEAD = re.compile(r'^(<data [^>]*>)([^<]*)</data>(<span class="flag"[^>]*>[^<]*</span>)?')

#: A digit: digits are tabular (one width), so a tail's shape is its digits as 0s.
_DIGIT = re.compile(r"[0-9]")


def _shape(tail: str) -> str:
    return _DIGIT.sub("0", tail)


def aligned(rows: list[list[Cell]]) -> list[list[Cell]]:
    """``rows`` with the numbers of each column aligned on the decimal point.

    A right-aligned cell that starts with a number is split at its point: the
    part from the point on ("tail", "" for a number without one) sits in a box
    as wide as the widest tail of its column, left-aligned. The box's width comes
    from the browser itself: the column's widest fixed-point and widest scientific
    tails (digits as 0s, tabular) are laid out, hidden and bold, in the same grid
    cell (``data-w``, ``data-x``), so the font's own widths of "e" and "-" count and
    a bold (significant) number's box is as wide as the others'.
    A cell without the mark (* or a dagger) that others in its column carry gets a
    blank as wide as the mark. Layout only: the number's text is unchanged
    (``docs/cli.md``, "The HTML report")."""
    found: dict[int, list[tuple[int, str, str, bool]]] = {}
    for i, row in enumerate(rows):
        for j, c in enumerate(row):
            lead = None if "k" in c.cls.split() else _LEAD.match(c.html)
            if lead is not None:
                whole, point, after = lead.group(2).partition(".")
                found.setdefault(j, []).append((i, whole, point + after,
                                                lead.group(3) is not None))
    out = [list(row) for row in rows]
    for j, cells in found.items():
        tails = [_shape(tail) for _, _, tail, _ in cells]
        fixed = max((t for t in tails if "e" not in t), key=len, default="")
        sci = max((t for t in tails if "e" in t), key=len, default="")
        marked = any(mark for *_, mark in cells)
        for i, whole, tail, mark in cells:
            c = out[i][j]
            lead = _LEAD.match(c.html)
            number = (f'{lead.group(1)}{whole}<span class="tl" data-w="{fixed}" '
                      f'data-x="{sci}"><span>{tail}</span></span></data>')
            blank = '<span class="al"></span>' if marked and not mark else ""
            out[i][j] = Cell(number + (lead.group(3) or "") + blank + c.html[lead.end():],
                             c.sort, c.cls)
    return out


def _table(t: Table) -> str:
    cls = " ".join(c for c in ("grid", "sortable" if t.sortable else "", t.cls) if c)
    # each cell names its column (data-label) and holds its content in one span, so
    # that a narrow screen lays a row out as a card of "column: value" lines
    labels = [esc(html.unescape(_TAG.sub("", label))) for label, _, _ in t.head]
    head = []
    for label, tip, kind in t.head:
        title = f' title="{esc(tip)}"' if tip else ""
        inner = f'<button type="button">{label}</button>' if t.sortable else label
        k = f' class="{kind}"' if kind else ""
        head.append(f'<th scope="col"{k}{title}>{inner}</th>')
    rows = []
    for i, row in enumerate(aligned(t.rows)):
        cells = []
        for j, c in enumerate(row):
            attrs = (f' data-sort="{esc(c.sort)}"' if c.sort is not None else "") + (
                f' class="{c.cls}"' if c.cls else "")
            label = labels[j] if j < len(labels) else ""
            cells.append(f'<td data-label="{label}"{attrs}><span class="v">{c.html}</span></td>'
                         if c.html else f'<td data-label="{label}"{attrs}></td>')
        rows.append(f'<tr data-i="{i}">{"".join(cells)}</tr>')
    return (f'<table class="{cls}"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _section(s: Section, open_: bool) -> str:
    notes = "".join(f"<li>{n}</li>" for n in s.notes)
    return (f'<details class="group" id="{esc(s.anchor)}"{" open" if open_ else ""}>'
            f'<summary><span class="name">{esc(s.title)}</span>'
            f'<span class="facts">{s.facts}</span></summary>'
            + "".join(f'<p class="lead">{x}</p>' for x in s.lead)
            + f'<div class="body">{s.figure}<div class="wrap">{_table(s.table)}</div></div>'
            + (f'<ul class="notes">{notes}</ul>' if notes else "") + "</details>")


def render(page: Page) -> str:
    """The whole HTML document of ``page``."""
    from .. import __version__

    meta = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>'
                   for k, v in page.header)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="calibr {esc(__version__)}">',
        f"<title>{esc(page.title)}</title><style>{_CSS}</style></head>",
        f'<body><main class="{esc(page.kind)}">',
        f"<h1>{esc(page.title)}</h1>",
        f'<table class="meta"><tbody>{meta}</tbody></table>',
    ]
    if page.verdict is not None:
        parts.append(f'<div class="verdict {esc(page.verdict[0])}" role="status">'
                     f"{page.verdict[1]}</div>")
    n = len(page.overview.rows)
    parts.append(f"<h2>Overview of {n} {page.rows_are[n != 1]}</h2>")
    parts.append('<p class="sub">Click a column heading to sort by it; a group\'s name '
                 "leads to its reliability diagram and per-bin table.</p>")
    tall = " tall" if n > 20 else ""
    parts.append(f'<div class="wrap{tall}">{_table(page.overview)}</div>')
    if page.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{x}</li>" for x in page.notes)
                     + "</ul>")
    if page.figure:
        parts.append(f'<div class="wrap">{page.figure}</div>')
    if page.sections:
        open_ = len(page.sections) <= OPEN_AT_MOST
        parts.append("<h2>Groups</h2>")
        parts.append('<div class="tools"><button type="button" data-all="open">open all'
                     '</button><button type="button" data-all="close">close all</button></div>')
        if page.legend:
            parts.append('<div class="legend"><strong>Reading the diagrams.</strong>'
                         '<ul class="notes">' + "".join(f"<li>{x}</li>" for x in page.legend)
                         + "</ul></div>")
        parts += [_section(s, open_) for s in page.sections]
    parts.append(f"<footer>Written by calibr {esc(__version__)}; the file is self-contained "
                 "(figures as inline SVG, styles and script in the page) and loads nothing "
                 "from the network.</footer>")
    parts.append(f"</main><script>{_JS}</script></body></html>")
    return "".join(parts) + "\n"
