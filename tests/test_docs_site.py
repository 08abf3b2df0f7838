"""The documentation site (``docs/site``; README.md, "Documentation") builds with
warnings as errors and without the network, and shows what it promises: a page
for every public name, the R-to-Python page with every function of the R
package, the gallery's figures drawn from the bundled data, no asset fetched
from elsewhere and no internal link that leads nowhere.

The site is built once for the module, into a temporary folder, with README's
command; without the network where ``unshare`` can take it away (as on CI, run
as root), and otherwise with every proxy variable pointing at a closed port.
"""

from __future__ import annotations

import ast
import html
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import require

import calibr

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "site"


def _readme_build_command() -> list[str]:
    """The sphinx-build line of README's "Documentation" section."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    line = next(ln for ln in re.findall(r"```sh\n(.+?)\n```", section, re.S)[0].splitlines()
                if ln.startswith("sphinx-build "))
    return line.split()


def _offline_prefix() -> list[str]:
    """``unshare`` into a network namespace of its own, where that works."""
    unshare = shutil.which("unshare")
    for prefix in (["--net"], ["--net", "--map-root-user"]):
        if unshare and subprocess.run([unshare, *prefix, "true"],
                                      capture_output=True).returncode == 0:
            return [unshare, *prefix]
    return []


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    require("sphinx")
    require("numpydoc")
    require("myst_parser")
    require("furo")
    require("matplotlib")
    command = _readme_build_command()
    assert command[:4] == ["sphinx-build", "-W", "--keep-going", "-b"], command
    assert Path(command[-2]) == Path("docs/site"), command
    out = tmp_path_factory.mktemp("site") / "html"
    doctrees = out.parent / "doctrees"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    closed = "http://127.0.0.1:9"  # the discard port: any fetch fails at once
    env.update({k: closed for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")})
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    done = subprocess.run(
        [*_offline_prefix(), sys.executable, "-m", "sphinx", *command[1:-2], "-d",
         str(doctrees), str(SITE), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"sphinx-build failed:\n{done.stdout[-3000:]}\n{done.stderr}"
    assert "build succeeded" in done.stdout and "warning" not in done.stderr.lower()
    return out


# --------------------------------------------------------------------------
# reading the built HTML


class _Page(HTMLParser):
    """The links, ids, assets, tables and text of one HTML page."""

    ASSETS = {"script": "src", "img": "src", "iframe": "src", "source": "src",
              "audio": "src", "video": "src", "embed": "src", "object": "data"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.assets: list[str] = []
        self.images: list[str] = []
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self.codes: list[list[list[str]]] = []  # the code spans of each cell of each row
        self._cells: list[str] | None = None
        self._cell: list[str] | None = None
        self._cell_codes: list[list[str]] = []
        self._code: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag in self.ASSETS and a.get(self.ASSETS[tag]):
            self.assets.append(a[self.ASSETS[tag]])
        if tag == "img":
            self.images.append(a["src"])
        if tag == "link" and a.get("href"):
            self.assets.append(a["href"])
        if tag == "tr":
            self._cells = []
            self._cell_codes = []
        if tag in ("td", "th") and self._cells is not None:
            self._cell = []
            self._cell_codes.append([])
        if tag == "code" and self._cell is not None:
            self._code = []

    def handle_endtag(self, tag):
        if tag == "code" and self._code is not None:
            self._cell_codes[-1].append("".join(self._code))
            self._code = None
        if tag in ("td", "th") and self._cell is not None:
            self._cells.append(" ".join("".join(self._cell).split()))
            self._cell = None
        if tag == "tr" and self._cells is not None:
            self.rows.append(self._cells)
            self.codes.append(self._cell_codes)
            self._cells = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._code is not None:
            self._code.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _text(path: Path) -> str:
    """A page's text, whitespace collapsed."""
    return " ".join("".join(_parse(path).text).split())


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


# --------------------------------------------------------------------------
# a page for every public name


def _summary_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _plain(rst: str) -> str:
    """A docstring's first paragraph as the page shows it (markup removed)."""
    rst = re.sub(r":\w+:`~?([^`]+)`", r"\1", rst)
    return rst.replace("``", "").replace("`", "")


def test_every_public_name_of_calibr_has_a_page(site):
    missing, wrong = [], []
    for name in calibr.__all__:
        page = site / "api" / f"calibr.{name}.html"
        if not page.is_file():
            missing.append(name)
            continue
        obj = getattr(calibr, name)
        text = _text(page).replace("()", "")  # Sphinx writes a function's role as f()
        expected = calibr.__version__ if name == "__version__" else _plain(_summary_line(obj))
        if expected.replace("()", "") not in text:
            wrong.append(f"{name}: {expected!r}")
    assert missing == [], f"no page for calibr.{missing}"
    assert wrong == [], "a page lacks the first line of its docstring:\n" + "\n".join(wrong)


def _public_submodules(package) -> list[str]:
    out = []
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if not info.name.rsplit(".", 1)[1].startswith("_"):
            out.append(info.name)
            if info.ispkg:
                out += _public_submodules(__import__(info.name, fromlist=["_"]))
    return out


def test_every_public_name_of_the_submodules_has_a_page(site):
    """calibr.plot, calibr.datasets, calibr.torchmetrics, calibr.cli and every
    other public module: a page of its own, and one per name of its ``__all__``
    (for a name that is calibr's own, as calibr.reliability_diagram, the
    module's page links to calibr's page)."""
    import importlib

    modules = _public_submodules(calibr)
    assert {"calibr.plot", "calibr.datasets", "calibr.torchmetrics", "calibr.cli"} <= set(modules)
    top = {id(getattr(calibr, n)): n for n in calibr.__all__
           if callable(getattr(calibr, n)) or inspect.ismodule(getattr(calibr, n))}
    missing = []
    for modname in modules:
        module = importlib.import_module(modname)
        page = site / "api" / f"{modname}.html"
        if not page.is_file():
            missing.append(modname)
            continue
        links = _parse(page).links
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if id(obj) in top and (callable(obj) or inspect.ismodule(obj)):
                target = f"calibr.{top[id(obj)]}.html"
                if not any(urlsplit(h).path == target for h in links):
                    missing.append(f"{modname}.{name} (a link to {target})")
            elif not (site / "api" / f"{modname}.{name}.html").is_file():
                missing.append(f"{modname}.{name}")
    assert missing == []


def test_the_cli_page_shows_each_commands_help(site):
    text = _text(site / "api" / "calibr.cli.html")
    for command in ("report", "compare"):
        out = subprocess.run([sys.executable, "-m", "calibr.cli", command, "--help"],
                             capture_output=True, text=True, check=True,
                             env=dict(os.environ, COLUMNS="88")).stdout
        assert f"usage: calibr {command}" in text
        options = set(re.findall(r"(?<![\w-])--[a-z][\w-]+", out))
        assert options and {o for o in options if o not in text} == set()


# --------------------------------------------------------------------------
# the R-to-Python page


def _r_page_rows(site: Path) -> list[list[str]]:
    """The rows of the R page's tables: [R, calibr], as their text."""
    rows = _parse(site / "r-to-python.html").rows
    return [r for r in rows if len(r) == 2 and r != ["R", "calibr"]]


def _r_page_calibr_code(site: Path) -> list[str]:
    """The code spans of the calibr column of the R page's tables."""
    page = _parse(site / "r-to-python.html")
    return [code for row, codes in zip(page.rows, page.codes, strict=True)
            if len(row) == 2 and row != ["R", "calibr"] for code in codes[1]]


def test_every_function_of_the_r_package_is_on_the_r_page(site):
    exports = re.findall(r"^export\((\w+)\)",
                         (ROOT / "r_reference/calibrRef/NAMESPACE").read_text(), re.M)
    assert {"ece", "mce", "mmce", "skce"} <= set(exports)
    r_cells = [r for r, _ in _r_page_rows(site)]
    for fn in exports:
        assert any(re.match(rf"{fn}\(", cell) for cell in r_cells), f"{fn}() has no row"
    # each help page documents one of the exported functions (and is on the page)
    for rd in (ROOT / "r_reference/calibrRef/man").glob("*.Rd"):
        name = re.search(r"\\name\{(\w+)\}", rd.read_text()).group(1)
        assert any(re.match(rf"{name}\(", cell) for cell in r_cells), rd.name


def _r_ports() -> dict[str, str]:
    """Each public function of calibr that ports an R function -> that function, as its
    docstring names it: in its first line (``(R's ``p.adjust``)``, ``as R's
    ``rms::val.prob```) or as "Mirrors R's ``ece(...)``"."""
    out = {}
    for name in calibr.__all__:
        obj = getattr(calibr, name)
        if not callable(obj) or isinstance(obj, type):
            continue
        doc = inspect.getdoc(obj) or ""
        first = " ".join(doc.split("\n\n", 1)[0].split())
        r_name = r"R's ``((?:\w+::)?[A-Za-z][\w.]*)"
        found = re.findall(r_name, first) + re.findall("Mirrors " + r_name, " ".join(doc.split()))
        if found:
            out[name] = found[0]
    return out


def test_every_port_of_an_r_function_is_on_the_r_page(site):
    """A calibr function that ports an R function (p_adjust is R's p.adjust) has a row
    whose R cell calls that function and whose calibr cell calls calibr's."""
    ports = _r_ports()
    assert {"ece", "mce", "mmce", "skce", "summarise", "p_adjust", "val_prob"} <= set(ports)
    rows = _r_page_rows(site)
    missing = [f"calibr.{py} (R's {r})" for py, r in ports.items()
               if not any(f"{r}(" in r_cell and f"calibr.{py}(" in py_cell
                          for r_cell, py_cell in rows)]
    assert missing == [], f"no row on docs/site/r-to-python.md for {missing}"


def test_the_r_page_holds_readmes_table(site):
    rows = {(r, c) for r, c in _r_page_rows(site)}
    readme = (ROOT / "README.md").read_text()
    table = re.search(r"^\| R \| calibr \|\n\| --- \| --- \|\n((?:\|.*\n)+)", readme, re.M)
    found = []
    for line in table.group(1).splitlines():
        cells = [c.strip().strip("`") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        found.append(tuple(c.replace("\\|", "|") for c in cells))
    assert found and [f for f in found if f not in rows] == []


def _calls(code: str) -> list[ast.Call]:
    """The calls in a code span: the whole span if it is a Python expression,
    else the longest expression from each ``calibr.`` in it
    (``try: calibr.ece(p, y)``)."""
    try:
        trees = [ast.parse(code, mode="eval")]
    except SyntaxError:
        trees = []
        for start in (m.start() for m in re.finditer(r"calibr\.", code)):
            for end in range(len(code), start, -1):
                try:
                    trees.append(ast.parse(code[start:end], mode="eval"))
                    break
                except SyntaxError:
                    continue
    return [n for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _resolve(func: ast.expr):
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not (isinstance(func, ast.Name) and func.id == "calibr"):
        return None
    obj = calibr
    for part in reversed(parts):
        obj = getattr(obj, part)
    return obj


def test_the_calibr_calls_on_the_r_page_name_real_arguments(site):
    """Each calibr call in the page's right column names a function that exists
    and only keyword arguments of its signature, so a renamed function or
    argument cannot leave the page behind."""
    checked, wrong = 0, []
    for code in _r_page_calibr_code(site):
        for call in _calls(code):
            fn = _resolve(call.func)
            if fn is None:
                continue
            params = inspect.signature(fn).parameters
            takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
            for kw in call.keywords:
                if kw.arg is not None and kw.arg not in params and not takes_any:
                    wrong.append(f"{ast.unparse(call)}: no argument {kw.arg!r}")
            checked += 1
    assert checked >= 20 and wrong == []


# --------------------------------------------------------------------------
# the gallery


def test_the_gallery_shows_every_scripts_figure_and_code(site):
    page = site / "gallery.html"
    parsed, text = _parse(page), _text(page)
    images = {Path(unquote(urlsplit(src).path)).name: src for src in parsed.images}
    scripts = sorted((SITE / "gallery").glob("*.py"))
    assert {s.stem for s in scripts} >= {"binary_models", "consistency_bands", "smooth_curve",
                                         "digits_top_label", "digits_classwise"}
    for script in scripts:
        src = images.get(f"{script.stem}.png")
        assert src is not None, f"no figure of {script.name}"
        png = (page.parent / unquote(urlsplit(src).path)).read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
        for line in script.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                assert " ".join(line.split()) in text, f"{script.name}: {line!r} not shown"


def test_the_gallery_shows_the_html_reports_screenshot(site):
    """The screenshot of `calibr report --html` on the bundled data, taken at build
    time by headless Chromium at desktop width, and the report itself to open."""
    page = site / "gallery.html"
    parsed = _parse(page)
    src = next(s for s in parsed.images if s.endswith("html_report.png"))
    png = (page.parent / unquote(urlsplit(src).path)).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 50_000
    assert int.from_bytes(png[16:20], "big") == 1280
    links = [h for h in parsed.links if Path(urlsplit(h).path).name == "report.html"]
    assert links, "no link to the report"
    report = (page.parent / unquote(urlsplit(links[0]).path)).read_text(encoding="utf-8")
    assert report.startswith("<!DOCTYPE html>") and report.count('<svg class="rd"') == 6
    assert "html-report.html" in _article_links(page)


# --------------------------------------------------------------------------
# nothing from elsewhere, no link to nowhere


def test_no_asset_comes_from_elsewhere(site):
    remote = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)
    found = [f"{p.relative_to(site)}: {a}" for p in _pages(site)
             for a in _parse(p).assets if remote.match(a)]
    for css in site.rglob("*.css"):
        for url in re.findall(r"(?:url\(|@import\s+)\s*['\"]?([^'\")\s;]+)", css.read_text()):
            if remote.match(url):
                found.append(f"{css.relative_to(site)}: {url}")
    assert found == []
    assert "mathjax" not in " ".join(p.read_text() for p in _pages(site)).lower()


def test_every_internal_link_resolves(site):
    ids: dict[Path, set[str]] = {}
    broken, checked = [], 0
    for page in _pages(site):
        for href in _parse(page).links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith("mailto:"):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {href}")
                continue
            if parts.fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = _parse(target).ids
                if unquote(parts.fragment) not in ids[target]:
                    broken.append(f"{page.relative_to(site)}: {href} (no such anchor)")
    assert checked > 1000 and broken == []


def test_chapters_are_the_repositorys_markdown(site):
    """Every page of docs/ and every vignette is a chapter, under its own title,
    and a mention of one in another page links to it."""
    for folder, section in (("docs", "topics"), ("vignettes", "guide")):
        for md in sorted((ROOT / folder).glob("*.md")):
            page = site / section / f"{md.stem}.html"
            assert page.is_file(), md
            title = re.search(r"^# (.+)$", md.read_text(), re.M).group(1).replace("`", "")
            assert html.unescape(title) in _text(page)
    # in the text of a page, not in the navigation that every page has
    assert "../topics/definitions.html" in _article_links(site / "api" / "calibr.ece.html")
    index = _article_links(site / "index.html")
    assert "guide/migrating-from-r.html" in index  # README: `vignettes/migrating-from-r.md`
    # the mention itself is the link (not only the navigation's "Migrating from R")
    article = (site / "index.html").read_text(encoding="utf-8")
    mentions = [html.unescape(re.sub(r"<[^>]+>", "", inner)) for inner in re.findall(
        r'<a [^>]*href="guide/migrating-from-r\.html"[^>]*>(.*?)</a>', article, re.S)]
    assert "vignettes/migrating-from-r.md" in mentions, mentions
    assert "api/calibr.summarise.html#calibr.summarise" in index  # `calibr.summarise(...)`


def test_the_readme_says_why_sphinx():
    """The issue asked to choose the documentation tool and say why: README's
    "Documentation" section (the site's index shows it) says it."""
    section = (ROOT / "README.md").read_text().split("\n## Documentation\n", 1)[1]
    section = " ".join(section.split("\n## ", 1)[0].split())
    assert "**Why Sphinx.**" in section
    for reason in ("numpydoc", "MyST", "offline", "MkDocs with mkdocstrings would need"):
        assert reason in section, reason


def _article_links(path: Path) -> list[str]:
    """The links of a page's own text (furo's <article>), without the navigation."""
    text = path.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text[text.index("<article"):text.index("</article>")])
    return page.links


def test_class_pages_show_their_methods(site):
    """A class's page documents each public method and property with a
    docstring that the class defines or inherits from a class of calibr (an
    anchor per member; the streaming metrics' compute() and merge() come from a
    private base), not only the class."""
    import importlib

    checked, missing = 0, []
    for page in sorted((site / "api").glob("calibr.*.html")):
        dotted = page.stem
        modname, _, name = dotted.rpartition(".")
        try:
            obj = getattr(importlib.import_module(modname), name)
        except (ImportError, AttributeError):
            continue  # a module's page
        if not inspect.isclass(obj):
            continue
        ids = _parse(page).ids
        members = {}
        for cls in reversed(inspect.getmro(obj)):
            if cls.__module__.startswith("calibr"):
                members.update(vars(cls))
        for member, value in members.items():
            if member.startswith("_") or not (inspect.getdoc(value) and (
                    inspect.isfunction(value) or isinstance(value, property))):
                continue
            checked += 1
            if f"{dotted}.{member}" not in ids:
                missing.append(f"{dotted}.{member}")
    assert checked >= 5 and missing == []


def _comment_above(name: str, module: str) -> str | None:
    """The ``#:`` comment above the assignment of ``name`` in calibr's source: in
    ``module``'s own file first (two modules may each have a constant of that
    name), then wherever it was imported from."""
    import importlib

    own = Path(importlib.import_module(module).__file__)
    for path in [own, *sorted((ROOT / "calibr").rglob("*.py"))]:
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if re.match(rf"{re.escape(name)}\s*(:[^=]*)?=", line):
                above = []
                while i > 0 and lines[i - 1].startswith("#:"):
                    i -= 1
                    above.insert(0, lines[i][2:].strip())
                if above:
                    return " ".join(above)
    return None


def test_constants_show_their_comment_not_their_types_docstring(site):
    """A constant's page and its row in its module's table show its ``#:``
    comment, never the docstring of its type (``int([x]) -> integer``), also
    where it is documented under the module that imports it (calibr.cli's)."""
    import importlib

    checked, wrong = 0, []
    for page in sorted((site / "api").glob("calibr.*.html")):
        modname, _, name = page.stem.rpartition(".")
        try:
            obj = getattr(importlib.import_module(modname), name)
        except (ImportError, AttributeError):
            continue
        if callable(obj) or inspect.ismodule(obj):
            continue
        module_page = site / "api" / ("index.html" if modname == "calibr" else f"{modname}.html")
        type_doc = " ".join((type(obj).__doc__ or "").split("\n")[0].split())
        comment = _comment_above(name, modname)
        for shown in (_text(page), _text(module_page)):
            checked += 1
            if type_doc and type_doc in shown:
                wrong.append(f"{page.stem}: shows {type_doc!r}")
            if comment and _plain(comment) not in shown:
                wrong.append(f"{page.stem}: lacks {comment!r}")
    assert checked >= 10 and wrong == []
