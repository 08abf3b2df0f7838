"""The repository's own rules, checked so that they keep holding.

* Tests live in the file of the behaviour they protect: no test module is named
  after a mutation run or an issue (``scripts/mutate.py`` finds the gaps; the
  tests that close them go next to the behaviour).
* Comments and docstrings cite files of this repository (``docs/*.md``, the R
  help pages ``r_reference/calibrRef/man/*.Rd``), never a document outside it
  or an issue number.
* No test can pass in CI by skipping: optional packages go through
  ``conftest.require`` (a failure under CI's variables), not
  ``pytest.importorskip``.
* Every pytest marker declared in ``pyproject.toml`` is used.
* Every pure-Python module of the package is a target of ``scripts/mutate.py``
  (or excluded there with a reason).
* A default lives in one place: the signature that defines it (the bin options'
  in ``calibr/_defaults.py``, which the binned signatures read); code that needs
  a function's default reads it from the signature (``calibr._input.defaults``)
  instead of restating it.
* A constant is written once: no two modules of the package assign a literal to
  the same upper-case name, except the names in ``SAME_NAME_OTHER_IDEA``, each
  with the reason its definitions are different ideas.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()

#: Test modules named after how they came about rather than what they protect.
HISTORY_NAMES = re.compile(r"^test_(mutants?|mutation|issues?)(_|\.|\d)", re.IGNORECASE)

#: Citations of documents outside the repository, or of issues.
OUTSIDE = re.compile(
    r"spec sections? \d|spec §|\bsections? [\d-]+ of the spec\b|\b(?:pages|conventions) of the "
    r"spec\b|\bthe spec's\b|\br-docs/|\.\./shared/"
    r"|\(issues? \d+\)|\bissues? #?\d+\b|\bthe issue's\b",
    re.IGNORECASE,
)

#: Directories that are not the project's own text.
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache", ".venv",
              "build", "dist"}


def _text_files() -> list[Path]:
    """The tracked files (``git ls-files``), or, without git, every file of the tree
    outside caches and build folders."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True, timeout=60).stdout
        paths = [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        paths = [p for p in ROOT.rglob("*") if p.is_file()
                 and not _SKIP_DIRS.intersection(p.relative_to(ROOT).parts)]
    return [p for p in paths if p.is_file()]


def test_no_test_module_is_named_after_a_mutation_run_or_an_issue():
    named = sorted(p.name for p in (ROOT / "tests").rglob("test_*.py")
                   if HISTORY_NAMES.match(p.name))
    assert named == [], (f"{named}: put each test in the file of the behaviour it protects "
                         "(tests/test_<behaviour>.py), named for that behaviour")


def test_no_file_cites_a_document_outside_the_repository():
    found = []
    for path in _text_files():
        if path.resolve() == THIS:
            continue  # the patterns themselves
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], ("cite a file of this repository (docs/*.md, "
                         "r_reference/calibrRef/man/*.Rd) instead:\n" + "\n".join(found))


@pytest.mark.parametrize("folder", ["tests", "calibr"])
def test_no_test_skips_by_importorskip(folder):
    calls = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / folder).rglob("*.py"))
             if p.resolve() != THIS
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bimportorskip\s*\(", line)]
    assert calls == [], (f"{calls}: use conftest.require(name), which fails instead of "
                         "skipping under CALIBR_REQUIRE_R / CALIBR_REQUIRE_TORCH")


def _declared_markers() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^markers\s*=\s*\[(.*?)^\]", text, re.MULTILINE | re.DOTALL)
    assert block is not None, "pyproject.toml declares no markers"
    return re.findall(r'^\s*"(\w+)\s*:', block.group(1), re.MULTILINE)


def test_every_declared_marker_is_used():
    markers = _declared_markers()
    assert {"r", "torch"} <= set(markers)
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py")
                       if p.resolve() != THIS)
    unused = [m for m in markers if not re.search(rf"\bpytest\.mark\.{m}\b", source)]
    assert unused == [], (f"markers declared in pyproject.toml but used by no test: {unused}; "
                          "use them or remove the declaration")


# --------------------------------------------------------------------------
# every module is a mutation target


def _mutation_tables() -> tuple[dict, dict]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_mutate", ROOT / "scripts" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module.TARGETS, module.NOT_TARGETS


def test_every_pure_python_module_is_a_mutation_target():
    targets, excluded = _mutation_tables()
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "calibr").rglob("*.py")
               if "_kernels" not in p.parts}
    missing = sorted(modules - set(targets) - set(excluded))
    assert missing == [], (f"modules scripts/mutate.py does not mutate: {missing}; add each "
                           "to TARGETS with the test files of its behaviour, or to NOT_TARGETS "
                           "with the reason")
    gone = sorted((set(targets) | set(excluded)) - modules)
    assert gone == [], f"scripts/mutate.py names modules that do not exist: {gone}"
    absent = sorted({t for files in targets.values() for t in files
                     if not (ROOT / t).is_file()})
    assert absent == [], f"scripts/mutate.py names test files that do not exist: {absent}"


# --------------------------------------------------------------------------
# defaults written once

#: The bin options: every signature that takes one reads its default from
#: ``calibr/_defaults.py`` (``bins: int = BINS_DEFAULT``), never a literal.
BIN_OPTIONS = ("bins", "binning", "right")


def _option_names() -> set[str]:
    """The options (parameters with a default, not the data) of calibr's public
    metrics, verbs and tests: the names whose defaults the signatures define."""
    import calibr

    data = {"p", "y", "classes", "na_rm", "weights", "data", "p_prefix"}
    functions = [getattr(calibr, name) for name in ("ece", "mce", "calibration_error", "skce",
                                                    "mmce", "calibration_table", "summarise",
                                                    "calibration_test", "bootstrap",
                                                    "paired_bootstrap")]
    return {name for fn in functions for name, prm in inspect.signature(fn).parameters.items()
            if prm.default is not prm.empty and name not in data}


def restated_defaults(source: str, options: set[str], bins_default: int) -> list[str]:
    """The places in ``source`` (Python) that restate a default: a bin option with a
    literal default in a signature; ``options.get("bins", 10)`` (an option and a
    literal); ``args.type or "classwise"`` (an option's value, else a literal);
    ``bins=10`` / ``{"bins": 10}`` (the default number of bins as a literal); and a
    name of bins given the default as a literal (``COMPARE_BINS = 10``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs = [*zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True),
                     *((k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
                       if d is not None)]
            found += [f"{d.lineno}: {arg.arg}={d.value!r} in a signature"
                      for arg, d in pairs if arg.arg in BIN_OPTIONS
                      and isinstance(d, ast.Constant) and d.value is not None]
        elif isinstance(node, ast.Call):
            f, args = node.func, node.args
            if (isinstance(f, ast.Attribute) and f.attr == "get" and len(args) == 2
                    and all(isinstance(v, ast.Constant) for v in args)
                    and args[0].value in options):
                found.append(f"{node.lineno}: .get({args[0].value!r}, {args[1].value!r})")
            found += [f"{node.lineno}: bins={bins_default}" for kw in node.keywords
                      if kw.arg == "bins" and isinstance(kw.value, ast.Constant)
                      and kw.value.value == bins_default]
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            *first, last = node.values
            names = [v.attr if isinstance(v, ast.Attribute) else v.id for v in first
                     if isinstance(v, (ast.Attribute, ast.Name))]
            if isinstance(last, ast.Constant) and set(names) & options:
                found.append(f"{node.lineno}: {' or '.join(names)} or {last.value!r}")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            found += [f"{node.lineno}: {name} = {bins_default}" for name in names
                      if "bins" in name.lower() and isinstance(node.value, ast.Constant)
                      and node.value.value == bins_default]
        elif isinstance(node, ast.Dict):
            found += [f"{node.lineno}: {{'bins': {bins_default}}}"
                      for k, v in zip(node.keys, node.values, strict=True)
                      if isinstance(k, ast.Constant) and k.value == "bins"
                      and isinstance(v, ast.Constant) and v.value == bins_default]
    return found


def test_restated_defaults_are_found():
    """The scan finds each way of restating a default (and not reading one)."""
    from calibr._defaults import BINS_DEFAULT

    options = _option_names()
    assert {"bins", "type", "binning", "right", "bandwidth", "estimator", "n_resamples",
            "confidence_level"} <= options
    restated = f"""
def ece(p, y, bins={BINS_DEFAULT}, *, binning="equal-width", right=True): ...
bins = opts.get("bins", {BINS_DEFAULT})
bandwidth = opts.get("bandwidth", 0.2)
form = o.type or "classwise"
table(p, y, bins={BINS_DEFAULT})
spec = {{"bins": {BINS_DEFAULT}}}
COMPARE_BINS = {BINS_DEFAULT}
"""
    found = restated_defaults(restated, options, BINS_DEFAULT)
    assert len(found) == 9 and {int(f.split(":")[0]) for f in found} == set(range(2, 9))
    read = """
def ece(p, y, bins=BINS_DEFAULT, *, binning=BINNING_DEFAULT, right=RIGHT_DEFAULT): ...
bins = {**defaults(ece), **opts}["bins"]
form = o.type or defaults(fn)["type"]
table(p, y, bins=1)
spec = {"bins": BINS_DEFAULT + 1}
COMPARE_BINS = defaults(calibration_table)["bins"]
"""
    assert restated_defaults(read, options, BINS_DEFAULT) == []


def test_no_default_is_restated_outside_its_signature():
    """Changing a default touches one line: the number of bins is
    ``calibr._defaults.BINS_DEFAULT``, and nothing in calibr restates it or another
    option's default (the bootstrap, the CLI, the Dask path and the tests' runners
    read the signatures, ``calibr._input.defaults``)."""
    from calibr._defaults import BINS_DEFAULT

    options = _option_names()
    found = [f"{path.relative_to(ROOT)}:{where}"
             for path in sorted((ROOT / "calibr").rglob("*.py"))
             if path != ROOT / "calibr" / "_defaults.py"  # where the defaults are written
             for where in restated_defaults(path.read_text(encoding="utf-8"), options,
                                            BINS_DEFAULT)]
    assert found == [], ("read the default from the signature (calibr._input.defaults) or "
                         "calibr/_defaults.py instead:\n" + "\n".join(found))


#: Upper-case names given a literal in more than one module of calibr, each a
#: different idea in each module (the reason); any other repeated name is one
#: idea written twice, which must be written once and imported.
SAME_NAME_OTHER_IDEA = {
    "_SOURCES": "each package's table of its own lazily imported names",
    "_METHODS": "each function's own `method` choices",
    "_TYPES": "each function's own `type` choices",
    "_NORMS": "calibration_error's norms; torchmetrics' names, in its order",
    "KINDS": "the registry's metric kinds; ecce's `kind` option (ks, kuiper)",
    "GROUPS_BY_NAME": "each engine's own property",
    "CHUNKS": "each compiled kernel's own work split",
    "BLOCK": "each compiled kernel's own block of rows",
    "LANES": "each compiled kernel's own interleaved partial sums (per bin: 4; brier's: 8)",
    "_DESCRIPTION": "each subcommand's own help text",
    "DEFAULT_LEVEL": "calibr compare's --level; the regression gate's level",
}


def _constants(source: str) -> set[str]:
    """The upper-case names a module assigns a literal to at its top level."""
    out = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            try:
                ast.literal_eval(node.value)
            except ValueError:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {t.id for t in targets
                    if isinstance(t, ast.Name) and t.id.lstrip("_").isupper()}
    return out


def test_constants_are_found():
    assert _constants("A = 3\n_B: int = (1, 2)\nC = f(1)\nd = 4\nif x:\n    E = 5\n") == {
        "A", "_B"}


def test_a_constant_is_written_once():
    """One name per idea: a value two modules need is written in one and imported
    by the other (the consistency band's resamples, the canonical-SKCE cost
    warning and the chunks of replicates each once had two definitions)."""
    where: dict[str, list[str]] = {}
    for path in sorted((ROOT / "calibr").rglob("*.py")):
        for name in _constants(path.read_text(encoding="utf-8")):
            where.setdefault(name, []).append(str(path.relative_to(ROOT)))
    repeated = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert set(repeated) == set(SAME_NAME_OTHER_IDEA), (
        "write each of these once and import it, or give the reason they differ in "
        f"SAME_NAME_OTHER_IDEA: {repeated}")


#: Documented defaults that are not the signature's, with the reason.
DOCUMENTED_OTHERWISE = {
    ("summarise", "metrics"): 'None in the signature stands for ("ece", "mce")',
}


def _public_functions() -> list:
    import calibr
    import calibr.plot
    import calibr.table

    out = [getattr(calibr, name) for name in calibr.__all__]
    out = [f for f in out if callable(f) and not isinstance(f, type)]
    return out + [calibr.plot.reliability_diagram, calibr.table.wilson_interval]


def test_documented_defaults_are_the_signatures():
    """Each numpydoc line ``name : ..., default X`` of a public function says the
    default of its signature (the shared paragraphs of ``calibr/_docs.py`` format
    the bin options' from ``calibr/_defaults.py``), so that a changed default
    cannot leave its documentation behind."""
    from calibr._input import defaults

    wrong, seen, excused = [], set(), set()
    for fn in _public_functions():
        doc = fn.__doc__ or ""
        for name, value in defaults(fn).items():
            m = re.search(rf"^\s*(?:\w+, )*{name}(?:, \w+)* : [^\n]*?, default (.+?)"
                          r"(?:, keyword-only)?$", doc, re.MULTILINE)
            if m is None:
                continue
            seen.add((fn.__name__, name))
            said = f'"{value}"' if isinstance(value, str) else repr(value)
            if m.group(1) == said:
                continue
            if (fn.__name__, name) in DOCUMENTED_OTHERWISE:
                excused.add((fn.__name__, name))
            else:
                wrong.append(f"{fn.__name__}({name}): documented {m.group(1)}, signature {said}")
    assert wrong == []
    assert {("ece", "bins"), ("mce", "binning"), ("calibration_table", "right"),
            ("calibration_error", "bins"), ("calibration_test", "bins"),
            ("bootstrap", "n_resamples")} <= seen
    assert excused == set(DOCUMENTED_OTHERWISE)  # each exception still needed
