"""The package's layers, read from its source with ``ast``.

The layers point one way: the kernels (``calibr._kernels``) <- the input layer
<- the metrics <- the metric registry (``calibr._registry``) <- the verbs, the
table and the plots <- the backends (the Dask backend, ``calibr._engines.dask``) <- the
command line (``calibr.cli``); :data:`LAYERS` places every module. So:

- no module imports a module of a layer above its own, and none imports a
  private name (``_x``) of a module in another layer;

- the import graph of calibr's modules has no cycle (imports anywhere in a
  module count, also inside functions; imports only for type checkers, under
  ``if TYPE_CHECKING:``, do not run and do not count here);
- nothing outside ``calibr.cli`` imports it: a backend reads no file and
  prints nothing;
- the kernels import nothing of calibr outside ``calibr._kernels``;
- the Dask backend imports no private name of another module: what it needs
  of the core is that module's internal API.

Where a rule is broken today for a reason outside this file, the exception is
listed below with the reason; each list may only shrink (a test fails when an
entry is no longer needed).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import require

import calibr

PACKAGE = Path(calibr.__file__).parent

#: Imports that close a cycle, allowed until their reason is gone: (importer,
#: imported) -> why. Empty: the metrics and verbs hand a lazy input to its backend
#: through the input layer's table (calibr._input.backends), not by importing it.
#: A new entry needs a reason, and the test below removes it once it is stale.
KNOWN_CYCLE_EDGES: dict[tuple[str, str], str] = {}

#: Private names that the Dask backend may import, allowed until their reason is
#: gone: name -> why. Empty.
KNOWN_PRIVATE_IMPORTS_OF_DASK: dict[str, str] = {}

#: The layers, from the bottom: a module may import its own layer and those below it,
#: never one above. Each entry is a folder of the package (a subpackage: every module
#: in it belongs to its layer, so a module added to a folder is placed by its folder)
#: or one of the few modules kept at the package root (:data:`ROOT_MODULES`). The
#: registry is above the metrics (it names their functions) and below everything that
#: takes a metric by name; the package itself (``calibr/__init__.py``, which reads the
#: registry) is the registry's.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kernels", ("calibr._kernels",)),
    # the input layer, the defaults and shared docstrings, and how results show (the
    # number formats and ``_repr_html_`` of calibr._display, used by the metrics'
    # results and by the report alike)
    ("input", ("calibr._input", "calibr._display", "calibr._defaults", "calibr._docs",
               "calibr.datasets")),
    # the bin rules: breaks, the bin of each value, the per-bin sums
    ("binning", ("calibr._binning",)),
    ("metrics", ("calibr._metrics", "calibr.torchmetrics")),
    ("registry", ("calibr._registry", "calibr")),
    # intervals and tests over the registered metrics; p_adjust; multicalibration
    ("inference", ("calibr._inference",)),
    ("verbs", ("calibr.frame", "calibr.table", "calibr.plot", "calibr.pytest_plugin")),
    # the HTML report: a page drawn from the verbs' results (summarise, calibration_table)
    ("report", ("calibr._html",)),
    # calibr in other tools, each behind its extra: scikit-learn scorers, an inspect-ai
    # metric, lm-eval metrics, and calibr.mlflow, which logs the verbs' results and the
    # report to an MLflow run
    ("tools", ("calibr.sklearn", "calibr.inspect", "calibr.lm_eval", "calibr.mlflow")),
    # Dask and the lazy engines (polars LazyFrame, DuckDB, Spark): reached from the
    # metrics and verbs through calibr._input.backends, never imported by them
    ("backends", ("calibr._engines",)),
    ("cli", ("calibr.cli", "calibr.__main__")),  # python -m calibr runs calibr.cli
)

#: The modules at the package root besides its folders: the public modules (where
#: users import them), the package's ``__init__``, the registry, the defaults and the
#: shared docstrings. Everything else lives in a layer's folder.
ROOT_MODULES = ("calibr", "calibr.frame", "calibr.table", "calibr.plot", "calibr.torchmetrics",
                "calibr.pytest_plugin", "calibr.sklearn", "calibr.inspect", "calibr.lm_eval",
                "calibr.mlflow", "calibr._registry", "calibr._defaults",
                "calibr._docs", "calibr.__main__")

#: Private names (``_x``) that a module may import from a module of another layer:
#: (importer, imported, name) -> why. Empty: what a layer needs of another is that
#: module's internal API, names without an underscore.
KNOWN_PRIVATE_IMPORTS_ACROSS_LAYERS: dict[tuple[str, str, str], str] = {}


@dataclass(frozen=True)
class Import:
    """One import statement's target in calibr."""

    importer: str
    module: str  # the calibr module it imports (a package: its __init__)
    names: tuple[str, ...]  # the names taken from it (``from m import a, b``), else ()
    line: int
    typing_only: bool  # under ``if TYPE_CHECKING:``: never run


def _module_names() -> dict[str, Path]:
    """Every module of calibr by its dotted name (a package by its own name)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _module_names()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for stmt in node.body:
                    inside.update(id(n) for n in ast.walk(stmt))
    return inside


def imports_of(name: str) -> list[Import]:
    """The imports of calibr modules in module ``name``, wherever they are."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        found: list[tuple[str, tuple[str, ...]]] = []
        if isinstance(node, ast.Import):
            found = [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            found = [(sub, ()) for sub in subs]  # ``from . import _dask``: the submodule
            names = tuple(a.name for a in node.names if f"{base}.{a.name}" not in MODULES)
            if names:
                found.append((base, names))
        for module, names in found:
            if module in MODULES:
                out.append(Import(name, module, names, node.lineno, id(node) in typing_only))
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, list[Import]]]:
    """importer -> imported -> the imports (run-time ones only)."""
    edges: dict[str, dict[str, list[Import]]] = {name: {} for name in MODULES}
    for name in MODULES:
        for imp in imports_of(name):
            if not imp.typing_only and imp.module != name:
                edges[name].setdefault(imp.module, []).append(imp)
    return edges


def components(edges: dict[str, dict]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's
    algorithm): the modules that import each other, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(set(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(components, key=min)


def cycles(edges: dict[str, dict]) -> list[list[str]]:
    """One cycle (a path a -> ... -> a) through each of the :func:`components`: the
    shortest way back to its first module."""
    out = []
    for component in components(edges):
        start = min(component)
        paths = {start: [start]}
        frontier = [start]
        while frontier and start not in {w for v in frontier for w in edges[v]}:
            nxt = []
            for v in frontier:
                for w in sorted(edges[v]):
                    if w in component and w not in paths:
                        paths[w] = paths[v] + [w]
                        nxt.append(w)
            frontier = nxt
        last = next(v for v in frontier if start in edges[v])
        out.append(paths[last] + [start])
    return sorted(out)


def _without(edges: dict[str, dict], removed) -> dict[str, dict]:
    return {v: {w: imps for w, imps in ws.items() if (v, w) not in removed}
            for v, ws in edges.items()}


def _where(edges: dict[str, dict], cycle: list[str]) -> str:
    steps = []
    for a, b in zip(cycle, cycle[1:], strict=False):
        imp = edges[a][b][0]
        steps.append(f"{a} -> {b} ({MODULES[a].relative_to(PACKAGE.parent)}:{imp.line})")
    return "\n    ".join(steps)


def test_the_import_graph_has_no_cycle(graph):
    edges = _without(graph, KNOWN_CYCLE_EDGES)
    found = [(sorted(m), c) for m, c in zip(components(edges), cycles(edges), strict=True)]
    assert not found, "import cycles among calibr's modules:\n" + "\n".join(
        f"  {len(m)} modules: {', '.join(m)}; e.g. {' -> '.join(c)}\n    {_where(graph, c)}"
        for m, c in found)


def test_each_known_cycle_edge_still_closes_a_cycle(graph):
    """The list of allowed cycles only shrinks: an entry whose import is gone, or no
    longer closes a cycle, must be removed (a loop, not a parametrisation, so that an
    empty list is a pass and not a skip)."""
    for importer, imported in sorted(KNOWN_CYCLE_EDGES):
        assert imported in graph[importer], f"{importer} no longer imports {imported}: remove it"
        seen, todo = {imported}, [imported]
        while todo:
            for w in graph[todo.pop()]:
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        assert importer in seen, f"{importer} -> {imported} closes no cycle any more: remove it"


def test_cycles_are_found_and_reported(graph):
    """The test above would see a cycle: the old dispatch of a Dask input by import
    (ece() importing calibr._engines.dask, which imports calibr._metrics.binned) closes one,
    and a cycle planted by hand is found with the lines of its imports."""
    old = {k: dict(v) for k, v in graph.items()}
    old["calibr._metrics.binned"]["calibr._engines.dask"] = [
        Import("calibr._metrics.binned", "calibr._engines.dask", (), 1, False)]
    assert any("calibr._engines.dask" in c and "calibr._metrics.binned" in c for c in cycles(old))
    planted = {"a": {"b": [Import("a", "b", (), 3, False)]},
               "b": {"c": [Import("b", "c", (), 5, False)]},
               "c": {"a": [Import("c", "a", (), 7, False)], "d": []}, "d": {}}
    assert cycles(planted) == [["a", "b", "c", "a"]]
    assert cycles(_without(planted, {("c", "a")})) == []


def test_the_import_reader_sees_every_kind_of_import():
    """Relative, absolute, submodule and function-level imports, and those that only
    type checkers see."""
    by_target = {(i.module, i.names): i for i in imports_of("calibr.cli._report")}
    assert ("calibr.frame", ("summarise",)) in by_target  # from ..frame import summarise
    assert ("calibr.plot", ("reliability_diagram",)) in by_target  # inside a function
    dask = {(i.module, i.names): i for i in imports_of("calibr._engines.dask")}
    assert ("calibr._binning", ()) in dask  # from . import _binning, inside a function
    binned = {(i.module, i.names): i for i in imports_of("calibr._metrics.binned")}
    assert ("calibr._binning", ()) in binned  # from . import _binning
    args = {(i.module, i.names): i for i in imports_of("calibr.cli._args")}
    assert ("calibr", ("__version__",)) in args  # from .. import __version__
    assert args[("calibr.frame", ("CalibrationTest", "Metric"))].typing_only


def test_only_the_command_line_imports_the_command_line():
    """A backend (``calibr._engines.dask``) or a verb reads no file and prints no report:
    nothing outside ``calibr.cli`` imports it, not even for type checkers."""
    wrong = [f"{i.importer} imports {i.module} ({MODULES[i.importer].name}:{i.line})"
             for name in MODULES if not _in(name, "calibr.cli") and name != "calibr.__main__"
             for i in imports_of(name) if _in(i.module, "calibr.cli")]
    assert wrong == []


def test_importing_the_dask_backend_imports_no_command_line():
    """The same at run time, dynamic imports included: a fresh process that imports
    ``calibr._engines.dask`` has no ``calibr.cli`` module."""
    require("dask")
    code = ("import sys, calibr._engines.dask; "
            "print(sorted(m for m in sys.modules if m.startswith('calibr.cli')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)})
    assert (proc.returncode, proc.stdout) == (0, "[]\n"), proc.stderr


def test_the_kernels_import_only_kernels():
    wrong = [f"{i.importer} imports {i.module} (line {i.line})"
             for name in MODULES if _in(name, "calibr._kernels")
             for i in imports_of(name) if not _in(i.module, "calibr._kernels")]
    assert wrong == []


def test_the_dask_backend_imports_no_private_name():
    """What the backend needs of the core is that module's internal API (names
    without an underscore): it can change only with the core."""
    private = sorted({n for i in imports_of("calibr._engines.dask") for n in i.names
                      if n.startswith("_") and not n.startswith("__")})
    assert [n for n in private if n not in KNOWN_PRIVATE_IMPORTS_OF_DASK] == []
    stale = [n for n in KNOWN_PRIVATE_IMPORTS_OF_DASK if n not in private]
    assert stale == [], f"no longer imported: remove {stale} from the list"


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_folder(entry: str) -> bool:
    return entry in MODULES and MODULES[entry].name == "__init__.py" and entry != "calibr"


def layer_of(module: str) -> int:
    """The position in :data:`LAYERS` of ``module``: the layer of its folder, or of its
    own entry for a module kept at the root (:data:`ROOT_MODULES`; the entry
    ``calibr`` is the package's ``__init__`` alone, so that a new module is placed by
    its folder, not by default)."""
    found = [i for i, (_, entries) in enumerate(LAYERS) for entry in entries
             if (_in(module, entry) if _is_folder(entry) else module == entry)]
    assert found, f"{module} is in no layer of LAYERS: put it in a layer's folder"
    assert len(found) == 1, f"{module} is in two layers of LAYERS"
    return found[0]


def test_every_module_has_a_layer():
    for name in MODULES:
        layer_of(name)
    assert layer_of("calibr._kernels.grouped") == 0 and layer_of("calibr") == 4
    assert layer_of("calibr.cli._args") == len(LAYERS) - 1
    assert layer_of("calibr._metrics.binned") == layer_of("calibr._metrics.kernel")


def test_the_layers_are_folders_and_the_root_modules():
    """Each entry of LAYERS is a folder of the package or one of ROOT_MODULES, and
    each of ROOT_MODULES is in a layer: the tree is the map."""
    entries = [entry for _, es in LAYERS for entry in es]
    assert len(entries) == len(set(entries))
    assert [e for e in entries if not _is_folder(e) and e not in ROOT_MODULES] == []
    assert [m for m in ROOT_MODULES if m not in entries] == []


def test_the_package_root_holds_the_public_modules_and_the_layer_folders():
    """``calibr/`` holds :data:`ROOT_MODULES` and the layers' folders, nothing else: a
    module added at the root (``calibr/_new.py``) fails here and in
    :func:`layer_of`, until it goes into the folder of its layer."""
    folders = {e.rpartition(".")[2] for _, es in LAYERS for e in es if _is_folder(e)}
    files = {m.rpartition(".")[2] + ".py" for m in ROOT_MODULES if m != "calibr"}
    found = {p.name for p in PACKAGE.iterdir()
             if p.name not in ("__pycache__", "__init__.py") and (p.is_dir() or p.suffix == ".py")}
    assert found == folders | files
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("calibr._new")
    assert layer_of("calibr._metrics.new") == layer_of("calibr._metrics.binned")


def test_imports_point_down_the_layers(graph):
    """A module imports only its own layer and the layers below (run-time imports;
    the registry's functions are imported by name, ``importlib``, so they do not
    count)."""
    wrong = [f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]}), "
             f"{MODULES[a].name}:{imps[0].line}"
             for a, targets in graph.items() for b, imps in targets.items()
             if layer_of(b) > layer_of(a)]
    assert wrong == []


def test_no_private_name_is_imported_across_layers():
    found = {(i.importer, i.module, n): i.line for name in MODULES for i in imports_of(name)
             if layer_of(i.importer) != layer_of(i.module)
             for n in i.names if n.startswith("_") and not n.startswith("__")}
    wrong = [f"{a} imports {n} from {b} (line {line})"
             for (a, b, n), line in sorted(found.items())
             if (a, b, n) not in KNOWN_PRIVATE_IMPORTS_ACROSS_LAYERS]
    assert wrong == []
    stale = [k for k in KNOWN_PRIVATE_IMPORTS_ACROSS_LAYERS if k not in found]
    assert stale == [], f"no longer imported: remove {stale} from the list"


def test_the_layer_checks_see_a_violation():
    """An import up the layers and a private name across them are found."""
    planted = {"calibr._metrics.binned": {"calibr.frame": [
        Import("calibr._metrics.binned", "calibr.frame", ("_resolve",), 1, False)]}}
    up = [(a, b) for a, t in planted.items() for b in t if layer_of(b) > layer_of(a)]
    assert up == [("calibr._metrics.binned", "calibr.frame")]
    assert layer_of("calibr._metrics.binned") != layer_of("calibr.frame")
