"""Make the parts of calibr's site that follow the package, at build time.

Connected to Sphinx's ``builder-inited`` (before the sources are read), it
writes into the site's source folder:

- ``api/``: one page per public name. The names are read from the package
  itself: ``calibr.__all__``, and for every public submodule (a module whose
  dotted name has no part that starts with ``_``) its ``__all__`` (or, without
  one, the public names it defines). A name of a submodule that is the same
  object as a name of ``calibr`` links to that page instead of repeating it.
  The ``calibr.cli`` page also shows the ``calibr`` command's ``--help`` of
  every subcommand, run at build time.
- ``topics/`` and ``guide/``: copies of ``docs/*.md`` and ``vignettes/*.md``.
- ``_generated/readme.md``: README.md after its first rule (``---``), the
  overview that ``index.md`` includes.
- ``_generated/gallery/``: the figure of every ``gallery/*.py`` script, run on
  the bundled data (each script leaves a matplotlib Figure in ``fig``), and the
  screenshot of the HTML report (``_generated/report/report.html``, made by
  ``calibr report --html`` on the bundled data) by headless Chromium.

On every page (``doctree-resolved``), a code span that is the path of a chapter
(`` `docs/definitions.md` ``) or a documented name of calibr
(`` `calibr.summarise()` ``) becomes a link to it. Math (``:math:``) is written
as MathML at build time, so that no page loads MathJax from elsewhere.

These folders belong to this extension: a file in them that it did not write
in this build is deleted, so a name that leaves the package leaves the site.
Files are rewritten only when their text changes, so that Sphinx's incremental
builds stay incremental.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import runpy
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

PACKAGE = "calibr"
#: The folders of the site's source that this extension owns (see above).
OWNED = ("api", "topics", "guide", "_generated")
#: Where each folder of the repository's Markdown goes in the site.
CHAPTERS = {"docs": "topics", "vignettes": "guide"}
#: The module whose ``main`` is the ``calibr`` command (pyproject's [project.scripts]).
CLI_MODULE = "calibr.cli"
#: The width of the command's --help, as in a terminal of 88 columns.
HELP_COLUMNS = "88"


# --------------------------------------------------------------------------
# the public API, read from the package


@dataclass
class Entry:
    """One public name of a module: its object, and the page that documents it."""

    module: str
    name: str
    obj: Any
    page: str  # the dotted name whose page documents it (its own, or calibr's)

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def kind(self) -> str:
        return kind_of(self.obj)


@dataclass
class ModuleDoc:
    name: str
    module: ModuleType
    entries: list[Entry] = field(default_factory=list)


def kind_of(obj: Any) -> str:
    """``"module"``, ``"exception"``, ``"class"``, ``"function"`` or ``"data"``."""
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "data"


def public_names(module: ModuleType) -> list[str]:
    """A module's ``__all__``, or the public names it defines itself."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return sorted(
        name for name, obj in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(obj)
        and getattr(obj, "__module__", module.__name__) == module.__name__
    )


def public_submodules(package: ModuleType) -> list[str]:
    """The dotted names of a package's public submodules, depth first; a name
    with any part that starts with ``_`` is private and left out (with what is
    under it)."""
    found = []
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name.rsplit(".", 1)[1].startswith("_"):
            continue
        found.append(info.name)
        if info.ispkg:
            found.extend(public_submodules(importlib.import_module(info.name)))
    return found


def public_api() -> list[ModuleDoc]:
    """Every public module of calibr (the package first) and its public names."""
    package = importlib.import_module(PACKAGE)
    top = ModuleDoc(PACKAGE, package)
    shared: dict[int, str] = {}  # id of a function, class or module of calibr -> its page
    for name in public_names(package):
        obj = getattr(package, name)
        page = f"{PACKAGE}.{name}"
        top.entries.append(Entry(PACKAGE, name, obj, page))
        if kind_of(obj) != "data":  # data (a str, an int) is never "the same object"
            shared[id(obj)] = page
    docs = [top]
    for modname in public_submodules(package):
        module = importlib.import_module(modname)
        doc = ModuleDoc(modname, module)
        for name in public_names(module):
            obj = getattr(module, name)
            own = f"{modname}.{name}"
            page = shared.get(id(obj), own) if kind_of(obj) != "data" else own
            doc.entries.append(Entry(modname, name, obj, page))
        docs.append(doc)
    return docs


# --------------------------------------------------------------------------
# the API pages


def _escape(text: str) -> str:
    """Text as literal reStructuredText (``calibr.__version__`` is not a link)."""
    return re.sub(r"([\\`*_|])", r"\\\1", text)


def _title(text: str, underline: str = "=") -> str:
    text = _escape(text)
    return f"{text}\n{underline * len(text)}\n"


def _directive(entry: Entry) -> str:
    kind = entry.kind
    if kind == "function":
        return f".. autofunction:: {entry.qualname}\n"
    if kind == "class":
        # no bases shown (a private base class has no page), but what the class
        # inherits from calibr's own bases is its API too; not what it has from
        # the builtins (a NamedTuple's count and index)
        foreign = sorted({b.__name__ for b in inspect.getmro(entry.obj)[1:]
                          if not b.__module__.startswith(PACKAGE)})
        return (f".. autoclass:: {entry.qualname}\n   :members:\n"
                f"   :inherited-members: {', '.join(foreign)}\n")
    if kind == "exception":  # the builtin it is (ValueError, TypeError), and what it
        # has from calibr's private base (renamed, extended), not the builtins'
        foreign = sorted({b.__name__ for b in inspect.getmro(entry.obj)[1:]
                          if not b.__module__.startswith(PACKAGE)})
        return (f".. autoexception:: {entry.qualname}\n   :members:\n"
                f"   :inherited-members: {', '.join(foreign)}\n   :show-inheritance:\n")
    return f".. autodata:: {entry.qualname}\n"


def _relative(name: str, module: str) -> str:
    """``name`` as autosummary wants it on ``module``'s page (where automodule
    made ``module`` the current module): relative when it is inside."""
    return name.removeprefix(module + ".")


def _summary(entries: list[Entry], module: str) -> str:
    """An autosummary table of entries, grouped by kind."""
    out = []
    labels = [("module", "Modules"), ("function", "Functions"), ("class", "Classes"),
              ("exception", "Exceptions"), ("data", "Data")]
    for kind, label in labels:
        group = [e for e in entries if e.kind == kind]
        if not group:
            continue
        out.append(f"{_title(label, '-')}\n.. autosummary::\n\n")
        out.extend(f"   {_relative(e.page, module)}\n" for e in group)
        out.append("\n")
    return "".join(out)


def _toctree(pages: list[str]) -> str:
    if not pages:
        return ""
    lines = "".join(f"   {p}\n" for p in pages)
    return f".. toctree::\n   :hidden:\n\n{lines}\n"


def command_help() -> dict[str, str]:
    """``calibr --help`` and each subcommand's ``--help``, as a user sees them."""
    env = dict(os.environ, COLUMNS=HELP_COLUMNS)
    root = str(Path(importlib.import_module(PACKAGE).__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", CLI_MODULE, *args, "--help"],
                              capture_output=True, text=True, env=env, check=True)
        return done.stdout.rstrip() + "\n"

    main = run()
    # the subcommands are the lines indented under the COMMAND metavar
    commands = re.findall(r"^ {4}([a-z][\w-]*)(?: {2,}|\n)", main, flags=re.M)
    helps = {"calibr": main}
    helps.update({f"calibr {c}": run(c) for c in commands})
    return helps


def _literal(text: str) -> str:
    return ".. code-block:: text\n\n" + "".join(
        f"   {line}\n" if line else "\n" for line in text.splitlines()) + "\n"


def module_page(doc: ModuleDoc, docs: list[ModuleDoc]) -> str:
    """The page of a module: its docstring and a table of its public names (for
    calibr itself, also of every public module), each name's page in its toctree."""
    own = [e.page for e in doc.entries if e.page == e.qualname and e.kind != "module"]
    entries = [e for e in doc.entries if e.kind != "module"]
    if doc.name == PACKAGE:
        head = _title("API reference") + (
            "\nEvery public name of calibr with its docstring: the functions and classes "
            "of the package, then its public modules and theirs.\n")
        modules = [d.name for d in docs if d.name != PACKAGE]
    else:
        head = _title(doc.name)
        modules = [e.page for e in doc.entries if e.kind == "module"]
    text = [head, f"\n.. automodule:: {doc.name}\n   :no-members:\n\n", _summary(entries, doc.name)]
    if modules:
        text.append(_title("Modules", "-") + "\n.. autosummary::\n\n")
        text.extend(f"   {_relative(m, doc.name)}\n" for m in modules)
        text.append("\n")
    if doc.name == CLI_MODULE:
        text.append(_title("The calibr command", "-"))
        text.append("\nWhat each ``--help`` prints (``docs/cli.md`` explains the "
                    "decisions behind each option).\n\n")
        for command, help_text in command_help().items():
            text.append(_title(command, "~") + "\n" + _literal(help_text))
    text.append(_toctree(own + modules))
    return "".join(text)


def name_page(entry: Entry) -> str:
    return "".join([_title(entry.qualname), "\n", _directive(entry)])


def api_pages() -> dict[str, str]:
    """Page name (without suffix) -> reStructuredText, for the ``api/`` folder:
    ``index`` (calibr), one per public module and one per name documented here."""
    docs = public_api()
    ALIASES.clear()
    ALIASES.update({e.qualname: e.page for d in docs for e in d.entries if e.page != e.qualname})
    pages = {}
    for doc in docs:
        pages["index" if doc.name == PACKAGE else doc.name] = module_page(doc, docs)
        for entry in doc.entries:
            if entry.page == entry.qualname and entry.kind != "module":
                pages[entry.qualname] = name_page(entry)
    return pages


def _doc_comment(module: str, attr: str, depth: int = 0) -> list[str]:
    """The ``#:`` comment above ``attr`` where it is defined: in ``module``, or
    in the module ``module`` imports it from (``calibr.cli`` takes
    ``MCE_MIN_BIN_COUNT`` from ``calibr.cli._args``)."""
    import ast
    from importlib.util import find_spec, resolve_name

    from sphinx.pycode import ModuleAnalyzer

    try:
        comments = ModuleAnalyzer.for_module(module).find_attr_docs()
    except Exception:  # noqa: BLE001 - no source to read: no comment
        return []
    if ("", attr) in comments:
        return list(comments[("", attr)])
    spec = find_spec(module)
    if depth > 3 or spec is None or spec.origin is None:
        return []
    package = module if spec.submodule_search_locations else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(Path(spec.origin).read_text())):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                if (alias.asname or alias.name) == attr:
                    source = resolve_name("." * node.level + node.module, package) \
                        if node.level else node.module
                    return _doc_comment(source, alias.name, depth + 1)
    return []


def data_docstring(app: Any, what: str, name: str, obj: Any, options: Any,
                   lines: list[str]) -> None:
    """A constant's documentation is its ``#:`` comment, never its type's
    docstring (``int([x]) -> integer``), which autodoc falls back to when the
    constant is documented under a name of the module that imports it."""
    if what not in ("data", "attribute") or inspect.isclass(obj) or callable(obj):
        return
    if " ".join(lines).split() == (type(obj).__doc__ or "").split():
        module, _, attr = name.rpartition(".")
        lines[:] = _doc_comment(module, attr)


# --------------------------------------------------------------------------
# chapters: the repository's Markdown


def chapters(root: Path) -> dict[str, str]:
    """Site path (``topics/definitions.md``) -> text of each chapter, as it is."""
    return {f"{section}/{path.name}": path.read_text()
            for folder, section in CHAPTERS.items()
            for path in sorted((root / folder).glob("*.md"))}


def overview(root: Path) -> str:
    """README.md after its first rule (``---``): what calibr is and does."""
    text = (root / "README.md").read_text()
    parts = re.split(r"^---\s*$", text, maxsplit=1, flags=re.M)
    if len(parts) != 2:
        raise RuntimeError("README.md has no rule (---) before its overview")
    return parts[1].lstrip("\n")


# --------------------------------------------------------------------------
# links: a mention of a chapter or of a documented name becomes a link


#: A name of calibr's that a page mentions as code, or a call of it:
#: ``calibr.summarise``, ``calibr.summarise()``, ``calibr.ece(p, y, bins=2)``.
_NAME = re.compile(r"(calibr(?:\.\w+)+)(?:\(.*\))?", re.S)
#: A file of the repository that is a chapter of the site: ``docs/definitions.md``.
_CHAPTER = re.compile(r"(docs|vignettes)/([\w.-]+)\.md")
#: Each public name documented on another name's page -> that name (filled
#: when the pages are made): ``calibr.plot.reliability_diagram`` ->
#: ``calibr.reliability_diagram``.
ALIASES: dict[str, str] = {}


def link_mentions(app: Any, doctree: Any, docname: str) -> None:
    """Make each code span that is exactly a chapter's path (`` `docs/x.md` ``),
    a documented name or a call of one (`` `calibr.ece` ``, `` `calibr.ece(p, y)` ``)
    a link to it, in every page: the chapters, README's overview, the docstrings."""
    from docutils import nodes

    env, builder = app.env, app.builder
    objects = env.get_domain("py").objects
    for node in list(doctree.findall(nodes.literal)):
        if isinstance(node.parent, (nodes.reference, nodes.title)) or node.get("classes") \
                and "xref" in node["classes"]:
            continue
        text = node.astext()
        target = None
        if m := _CHAPTER.fullmatch(text):
            doc = f"{CHAPTERS[m.group(1)]}/{m.group(2)}"
            if doc in env.all_docs and doc != docname:
                target = builder.get_relative_uri(docname, doc)
        elif m := _NAME.fullmatch(text):
            name = ALIASES.get(m.group(1), m.group(1))
            entry = objects.get(name)
            if entry is not None and entry.docname != docname:
                target = builder.get_relative_uri(docname, entry.docname) + "#" + entry.node_id
        if target is not None:
            ref = nodes.reference("", "", internal=True, refuri=target)
            node.replace_self(ref)
            ref.append(node)


# --------------------------------------------------------------------------
# the gallery


def gallery_figures(srcdir: Path) -> dict[str, bytes]:
    """``_generated/gallery/<script>.png`` -> PNG bytes of each gallery script's
    ``fig``, drawn from the bundled data."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    images = {}
    for script in sorted((srcdir / "gallery").glob("*.py")):
        namespace = runpy.run_path(str(script), run_name="__gallery__")
        fig = namespace.get("fig")
        if fig is None or not hasattr(fig, "savefig"):
            raise RuntimeError(f"{script.name} must leave a matplotlib Figure in `fig`")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=96)
        images[f"_generated/gallery/{script.stem}.png"] = buf.getvalue()
    return images


#: The gallery's HTML report: README's first command with ``--html``, ``calibr report --html``
#: on the bundled data; its page is offered for download and its screenshot shown.
REPORT_PAGE = "_generated/report/report.html"
REPORT_SHOT = "_generated/gallery/html_report.png"
#: The screenshot's window: desktop width, the header, overview and first group.
REPORT_WINDOW = "1280,1500"


def _chromium() -> str | None:
    import shutil

    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


def html_report_files() -> dict[str, bytes]:
    """The page of ``calibr report --html`` on the bundled data and its screenshot
    by headless Chromium (Debian's ``chromium``, which ``.ci/install`` installs;
    without it the screenshot is missing, a warning, so an error under -W)."""
    import contextlib
    import io
    import tempfile

    from sphinx.util import logging

    from calibr.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        with contextlib.redirect_stdout(io.StringIO()):
            status = main(["report", "--html", str(page)])
        if status != 0:
            raise RuntimeError(f"calibr report --html exited with status {status}")
        files = {REPORT_PAGE: page.read_bytes()}
        browser = _chromium()
        if browser is None:
            logging.getLogger(__name__).warning(
                "the gallery's screenshot of the HTML report needs Chromium "
                "(apt-get install chromium; .ci/install installs it)")
            return files
        shot = Path(tmp) / "shot.png"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--no-first-run", "--disable-extensions",
                        "--disable-background-networking", f"--user-data-dir={tmp}/profile",
                        f"--window-size={REPORT_WINDOW}", f"--screenshot={shot}",
                        page.as_uri()], capture_output=True, timeout=120, check=True)
        files[REPORT_SHOT] = shot.read_bytes()
    return files


# --------------------------------------------------------------------------
# math as MathML, made at build time


#: LaTeX commands of calibr's docstrings that docutils' converter spells otherwise.
MATH_ALIASES = {r"\dots": r"\ldots"}


def mathml(tex: str, block: bool) -> str:
    """MathML for the LaTeX of a ``:math:`` role or ``.. math::`` block.

    docutils' own converter: the browser draws MathML natively, so the page
    loads no MathJax (which Sphinx would fetch from a CDN) and no fonts. A
    command it does not know is a warning (an error under -W), never a silent
    gap. A block of several equations (separated by blank lines) is one aligned
    table, as Sphinx's MathJax renderer does.
    """
    from docutils.utils.math import latex2mathml

    # \big, \Big, \bigg, \Bigg: a delimiter of a size, as in LaTeX (docutils
    # knows only the paired \Bigl ... \Bigr, which group what is between them)
    for size, name in enumerate(("big", "Big", "bigg", "Bigg"), start=1):
        latex2mathml.bigdelimiters.setdefault(name, size)
    for command, alias in MATH_ALIASES.items():
        tex = re.sub(re.escape(command) + r"(?![A-Za-z])", alias.replace("\\", "\\\\"), tex)
    if block:
        parts = [part.strip() for part in tex.split("\n\n") if part.strip()]
        tex = r" \\ ".join(parts)
    return latex2mathml.tex2mathml(tex, as_block=block)


def _render_math(self: Any, node: Any, block: bool) -> None:
    from docutils import nodes
    from sphinx.util import logging

    try:
        markup = mathml(node.astext(), block)
    except Exception as exc:  # noqa: BLE001 - docutils raises several kinds
        logging.getLogger(__name__).warning(
            "math that docutils cannot convert to MathML: %s (%s)", node.astext(), exc,
            location=node)
        markup = f"<code>{self.encode(node.astext())}</code>"
    if block:
        self.body.append(self.starttag(node, "div", CLASS="math"))
        self.body.append(markup + "</div>\n")
    else:
        self.body.append(self.starttag(node, "span", CLASS="math") + markup + "</span>")
    raise nodes.SkipNode


def visit_math(self: Any, node: Any) -> None:
    _render_math(self, node, block=False)


def visit_math_block(self: Any, node: Any) -> None:
    _render_math(self, node, block=True)


# --------------------------------------------------------------------------
# writing


def _write(path: Path, data: str | bytes) -> None:
    """Write ``data`` unless the file holds it already (then Sphinx sees no change)."""
    raw = data.encode() if isinstance(data, str) else data
    if path.is_file() and path.read_bytes() == raw:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(raw)
    tmp.replace(path)


def generate(srcdir: Path) -> dict[str, str | bytes]:
    """Every file this extension owns, by path relative to ``srcdir``."""
    root = srcdir.resolve().parents[1]
    files: dict[str, str | bytes] = {}
    files.update({f"api/{name}.rst": text for name, text in api_pages().items()})
    files.update(chapters(root))
    files["_generated/readme.md"] = overview(root)
    files.update(gallery_figures(srcdir))
    files.update(html_report_files())
    return files


def on_builder_inited(app: Any) -> None:
    srcdir = Path(app.srcdir)
    files = generate(srcdir)
    for rel, data in files.items():
        _write(srcdir / rel, data)
    for folder in OWNED:  # what this build did not write is stale
        for path in sorted((srcdir / folder).rglob("*"), reverse=True):
            rel = path.relative_to(srcdir).as_posix()
            if path.is_file() and rel not in files:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()


def public_bases(app: Any, name: str, obj: Any, options: Any, bases: list) -> None:
    """The bases an exception's page shows: its public ones (``InputError`` is a
    ``ValueError``), not calibr's private mixins, which have no page."""
    bases[:] = [b for b in bases if not b.__name__.startswith("_")]


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", on_builder_inited)
    app.connect("autodoc-process-bases", public_bases)
    app.connect("doctree-resolved", link_mentions)
    # before numpydoc reformats the docstring (priority 500)
    app.connect("autodoc-process-docstring", data_docstring, priority=400)
    app.add_html_math_renderer("mathml", inline_renderers=(visit_math, None),
                               block_renderers=(visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
