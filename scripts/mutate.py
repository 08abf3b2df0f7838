"""Mutation check of calibr's pure-Python layers.

Makes one small change at a time ("a mutant") to a module of the package, runs
the tests that cover that module, and reports every mutant no test caught::

    python scripts/mutate.py                      # every target module
    python scripts/mutate.py calibr/table.py      # one module
    python scripts/mutate.py --list calibr/frame.py   # show the mutants only
    python scripts/mutate.py calibr/plot.py --lines 360-383,400   # some lines only
    python scripts/mutate.py --rev 22c3b42 calibr/table.py   # another commit than HEAD
    python scripts/mutate.py --with-r calibr/_metrics/lowess.py   # the R tests too

The mutants are made on the syntax tree (``ast``), one operator at a time:

* comparisons: ``<`` and ``<=``, ``>`` and ``>=``, ``==`` and ``!=``, ``is`` and
  ``is not``, ``in`` and ``not in`` swapped;
* ``and`` and ``or`` swapped; ``not x`` becomes ``x``;
* arithmetic: ``+`` and ``-``, ``*`` and ``/``, ``//`` and ``/`` swapped;
* numbers: an integer ``k`` becomes ``k + 1``, a float ``x`` becomes ``2 x``
  (``0.0`` becomes ``1.0``); ``True`` and ``False`` swapped;
* ``.any`` and ``.all``, ``.min`` and ``.max``, ``min`` and ``max`` swapped;
* ``raise ...`` becomes ``pass`` (is the check tested?).

Strings, docstrings and annotations are left alone. Every run works in one
copy of the committed tree (``git archive HEAD``, or of the commit ``--rev``,
whose id the results record) (``--workdir``) with its own numba cache, so the
compiled kernels are compiled once and then loaded from the cache. Each mutant
runs its tests in a process forked from a parent that has already imported
numpy, pandas, numba and pytest, so a mutant costs only its tests. ``PYTHONPATH``
names the copy, so the Python processes a test starts import the mutant too, not
an installed calibr.

The tests run with ``CALIBR_REQUIRE_R=1`` and ``CALIBR_REQUIRE_TORCH=1`` set,
whatever the caller's environment, as in CI: a test whose dependency is missing
(torch for calibr/torchmetrics.py, matplotlib, pyarrow, the peers of
tests/test_binning.py) fails instead of skipping. A skipped test would kill no
mutant, so a module with a missing dependency would look fully survived; instead
its unmutated tests fail, the module is reported as NOT CHECKED and the exit
status is 1. (The R tests, marked ``r``, are deselected, so R is not needed.)

``--with-r`` keeps the R tests for the modules whose reference is R
(``R_REFERENCE``: the lowess smoother and val.prob, checked against R's
``lowess`` and rms's ``val.prob`` through rpy2), where they are the tests that
pin the numbers: without them a mutant that only the R parity catches survives.
R, rpy2 and rms are then needed (a missing one fails the unmutated run, as
above), and each mutant costs the R start-up of its forked test process. The
other modules' runs are unchanged by it.

The result (killed, survived, timed out, per module) is printed and written to
``<workdir>/mutants.json``; a survivor is either a gap in the tests (add a test
that fails on it, in the test file of the behaviour it protects: one of the
module's files in ``TARGETS``) or equivalent (it cannot change behaviour: say
why in the report).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The pure-Python modules and the test files of their behaviour, which hold the
#: tests that kill their mutants (everything but the R tests, marked ``r``, which
#: ``--with-r`` keeps for the modules of ``R_REFERENCE``; torch only for
#: calibr/torchmetrics.py, whose parity tests compare with torchmetrics itself). A
#: test written to kill a survivor goes into one of these files, next to the
#: behaviour it protects (tests/test_repository.py refuses a file named after a
#: mutation run); a module whose behaviour is tested in another file gets that file
#: here too.
TARGETS: dict[str, list[str]] = {
    "calibr/_input/arrays.py": ["tests/test_validation.py"],
    "calibr/_input/canonical.py": ["tests/test_validation.py", "tests/test_weights.py"],
    "calibr/_input/labels.py": ["tests/test_validation.py"],
    "calibr/_input/messages.py": ["tests/test_validation.py"],
    # the options of the bins and the collected arguments of the engines are checked
    # by params.py, and tested where those are (the mutation run of 2026-12-06)
    "calibr/_input/params.py": ["tests/test_validation.py", "tests/test_contract.py",
                                "tests/test_binning.py", "tests/test_engines.py"],
    "calibr/_input/probabilities.py": ["tests/test_validation.py"],
    "calibr/_input/weights.py": ["tests/test_validation.py", "tests/test_weights.py"],
    "calibr/_input/groups.py": ["tests/test_frame.py", "tests/test_table.py",
                                "tests/test_grouped.py", "tests/test_weights_verbs.py"],
    "calibr/frame.py": ["tests/test_frame.py", "tests/test_verbs_tests.py",
                        "tests/test_top_label.py"],
    "calibr/table.py": ["tests/test_table.py", "tests/test_top_label.py",
                        "tests/test_consistency_bands.py", "tests/test_engines.py",
                        "tests/test_binning.py", "tests/test_weights_verbs.py"],
    "calibr/plot.py": ["tests/test_plot.py"],
    "calibr/_metrics/binned.py": ["tests/test_binned.py", "tests/test_weights.py",
                                  "tests/test_top_label.py"],
    "calibr/_metrics/kernel.py": ["tests/test_skce.py", "tests/test_weights.py"],
    "calibr/torchmetrics.py": ["tests/test_torchmetrics_compat.py",
                               "tests/test_torchmetrics_contract.py"],
    "calibr/_metrics/valprob.py": ["tests/test_val_prob.py"],
    "calibr/cli/_args.py": ["tests/test_cli.py", "tests/test_verbs_tests.py"],
    "calibr/cli/_io.py": ["tests/test_cli.py"],
    "calibr/cli/_columns.py": ["tests/test_cli.py"],
    "calibr/cli/_report.py": ["tests/test_cli.py", "tests/test_verbs_tests.py",
                              "tests/test_top_label.py"],
    "calibr/cli/_render.py": ["tests/test_cli.py", "tests/test_verbs_tests.py"],
    "calibr/cli/_errors.py": ["tests/test_cli.py"],
    "calibr/cli/__init__.py": ["tests/test_cli.py"],
    "calibr/_binning/__init__.py": ["tests/test_binning.py", "tests/test_binned.py",
                           "tests/test_weights.py", "tests/test_consistency_bands.py",
                           "tests/test_top_label.py", "tests/test_sweep.py",
                           "tests/test_decompose.py"],
    "calibr/_metrics/lp.py": ["tests/test_calibration_error.py", "tests/test_top_label.py"],
    "calibr/_metrics/smooth.py": ["tests/test_smece.py"],
    "calibr/_inference/bootstrap.py": ["tests/test_bootstrap.py", "tests/test_top_label.py",
                                       "tests/test_poisson.py"],
    "calibr/_engines/_poisson.py": ["tests/test_poisson.py", "tests/test_engines_spark.py"],
    "calibr/cli/_compare.py": ["tests/test_regression_gate.py"],
    "calibr/pytest_plugin.py": ["tests/test_regression_gate.py"],
    "calibr/sklearn.py": ["tests/test_sklearn.py"],
    "calibr/_metrics/fixed_size.py": ["tests/test_llm_conventions.py"],
    "calibr/inspect.py": ["tests/test_inspect.py"],
    "calibr/lm_eval.py": ["tests/test_lm_eval.py"],
    "calibr/mlflow.py": ["tests/test_mlflow.py"],
    "calibr/_inference/calibration_tests.py": ["tests/test_calibration_tests.py",
                                     "tests/test_top_label.py"],
    "calibr/_metrics/decompose.py": ["tests/test_decompose.py"],
    "calibr/_inference/multicalibration.py": ["tests/test_multicalibration.py"],
    "calibr/_metrics/smooth_relplot.py": ["tests/test_smece.py"],
    "calibr/_metrics/lowess.py": ["tests/test_val_prob.py"],
    "calibr/_defaults.py": ["tests/test_binned.py", "tests/test_frame.py", "tests/test_cli.py"],
    "calibr/_engines/dask.py": ["tests/test_dask.py"],
    "calibr/_input/errors.py": ["tests/test_validation.py", "tests/test_cli.py"],
    "calibr/_input/warning.py": ["tests/test_validation.py", "tests/test_names.py"],
    "calibr/_input/backends.py": ["tests/test_validation.py", "tests/test_dask.py"],
    "calibr/cli/_engine.py": ["tests/test_cli.py", "tests/test_dask.py"],
    "calibr/datasets/__init__.py": ["tests/test_datasets.py"],
    "calibr/_registry.py": ["tests/test_registry.py", "tests/test_frame.py"],
    "calibr/_metrics/cumulative.py": ["tests/test_ecce.py", "tests/test_bootstrap.py"],
    "calibr/_metrics/selective.py": ["tests/test_selective.py", "tests/test_registry.py"],
    "calibr/_metrics/recalibration.py": ["tests/test_calibration_gain.py"],
    "calibr/_binning/sweep.py": ["tests/test_sweep.py"],
    "calibr/_binning/equal_mass.py": ["tests/test_binning.py", "tests/test_sweep.py"],
    "calibr/_inference/multitest.py": ["tests/test_p_adjust.py"],
    "calibr/_input/frames.py": ["tests/test_engines.py", "tests/test_validation.py"],
    "calibr/_engines/_lazy.py": ["tests/test_engines.py", "tests/test_top_label.py"],
    "calibr/_engines/_pushdown.py": ["tests/test_engines.py", "tests/test_engines_spark.py"],
    "calibr/_engines/polars.py": ["tests/test_engines.py"],
    "calibr/_engines/duckdb.py": ["tests/test_engines.py"],
    "calibr/_engines/spark.py": ["tests/test_engines_spark.py"],
    "calibr/_engines/_cells.py": ["tests/test_engines.py", "tests/test_engines_spark.py"],
    "calibr/cli/_scan.py": ["tests/test_engines_cli.py"],
    "calibr/_html/__init__.py": ["tests/test_html.py"],
    "calibr/_html/_cli.py": ["tests/test_html.py"],
    "calibr/_html/_compare.py": ["tests/test_html.py"],
    "calibr/_display/format.py": ["tests/test_html.py"],
    "calibr/_html/_page.py": ["tests/test_html.py"],
    "calibr/_html/_report.py": ["tests/test_html.py"],
    "calibr/_display/repr.py": ["tests/test_html.py"],
    "calibr/_html/_svg.py": ["tests/test_html.py"],
    "calibr/_metrics/scores.py": ["tests/test_scores.py"],
}

#: Modules with nothing to mutate, each with the reason (tests/test_repository.py checks
#: that every other module of the package is a target). The compiled kernels
#: (calibr/_kernels/) are tested against the oracles in tests/oracles/ instead: a mutant
#: of a numba kernel would be compiled again for every test process.
NOT_TARGETS: dict[str, str] = {
    "calibr/__init__.py": "the table of public names, imported lazily",
    "calibr/_input/__init__.py": "re-exports only",
    "calibr/_docs.py": "docstring paragraphs (text, which the mutants leave alone)",
    "calibr/cli/__main__.py": "calls calibr.cli.main",
    "calibr/__main__.py": "calls calibr.cli.main (python -m calibr)",
    "calibr/_engines/__init__.py": "a docstring only (the rule of what is pushed down)",
    "calibr/_metrics/__init__.py": "a docstring only (the layer's map)",
    "calibr/_inference/__init__.py": "a docstring only (the layer's map)",
    "calibr/_display/__init__.py": "a docstring only (the layer's map)",
}

#: Set to 1 for every run (as .ci/run sets them): a skip becomes a failure.
REQUIRE_VARIABLES = ("CALIBR_REQUIRE_R", "CALIBR_REQUIRE_TORCH")

PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "--no-header", "-W", "ignore"]

#: Deselects the R tests (the default run, which needs no R).
NOT_R = ["-m", "not r"]

#: The modules whose reference is R: ``--with-r`` keeps their R tests (marked ``r``).
R_REFERENCE = ("calibr/_metrics/lowess.py", "calibr/_metrics/valprob.py")

_COMPARE_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
                 ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
                 ast.In: ast.NotIn, ast.NotIn: ast.In}
_BINOP_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
               ast.FloorDiv: ast.Div}
_NAME_SWAP = {"any": "all", "all": "any", "min": "max", "max": "min"}


@dataclass
class Mutant:
    module: str
    index: int
    line: int
    description: str
    status: str = "pending"
    seconds: float = 0.0
    commit: str = ""


class _Points(ast.NodeVisitor):
    """Numbers the mutation points of a tree in a fixed order."""

    def __init__(self) -> None:
        self.points: list[tuple[ast.AST, str, int]] = []  # (node, kind, line)

    def _skip_annotations(self, node: ast.AST) -> None:
        for field, value in ast.iter_fields(node):
            if field in ("annotation", "returns"):
                continue
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    visit_arg = visit_AnnAssign = _skip_annotations

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # noqa: N802
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for stmt in body:
            self.visit(stmt)
        self.visit(node.args)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:  # noqa: N802
        return  # messages: left alone

    def visit_Compare(self, node: ast.Compare) -> None:  # noqa: N802
        for i, op in enumerate(node.ops):
            if type(op) in _COMPARE_SWAP:
                self.points.append((node, f"compare:{i}", node.lineno))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:  # noqa: N802
        self.points.append((node, "boolop", node.lineno))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:  # noqa: N802
        if isinstance(node.op, ast.Not):
            self.points.append((node, "not", node.lineno))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:  # noqa: N802
        if type(node.op) in _BINOP_SWAP and not (
            isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
        ):
            self.points.append((node, "binop", node.lineno))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:  # noqa: N802
        if isinstance(node.value, bool) or (
            isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        ):
            self.points.append((node, "constant", node.lineno))

    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        if node.attr in _NAME_SWAP:
            self.points.append((node, "attr", node.lineno))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802
        if node.id in ("min", "max") and isinstance(node.ctx, ast.Load):
            self.points.append((node, "name", node.lineno))

    def visit_Raise(self, node: ast.Raise) -> None:  # noqa: N802
        if node.exc is not None:
            self.points.append((node, "raise", node.lineno))
        self.generic_visit(node)


def _apply(node: ast.AST, kind: str) -> str:
    """Mutate ``node`` in place; return a description."""
    if kind.startswith("compare:"):
        i = int(kind.split(":")[1])
        old = node.ops[i]
        node.ops[i] = _COMPARE_SWAP[type(old)]()
        return f"{type(old).__name__} -> {type(node.ops[i]).__name__}"
    if kind == "boolop":
        old = node.op
        node.op = ast.Or() if isinstance(old, ast.And) else ast.And()
        return f"{type(old).__name__} -> {type(node.op).__name__}"
    if kind == "binop":
        old = node.op
        node.op = _BINOP_SWAP[type(old)]()
        return f"{type(old).__name__} -> {type(node.op).__name__}"
    if kind == "constant":
        old = node.value
        if isinstance(old, bool):
            node.value = not old
        elif isinstance(old, int):
            node.value = old + 1
        else:
            node.value = old * 2 if old else 1.0
        return f"{old!r} -> {node.value!r}"
    if kind == "attr":
        old = node.attr
        node.attr = _NAME_SWAP[old]
        return f".{old} -> .{node.attr}"
    if kind == "name":
        old = node.id
        node.id = _NAME_SWAP[old]
        return f"{old} -> {node.id}"
    raise AssertionError(kind)


class _ReplaceRaise(ast.NodeTransformer):
    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit_Raise(self, node: ast.Raise) -> ast.AST:  # noqa: N802
        return ast.Pass() if node is self.target else node


def _unary_not(tree: ast.AST, target: ast.AST) -> None:
    class _Drop(ast.NodeTransformer):
        def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:  # noqa: N802
            self.generic_visit(node)
            return node.operand if node is target else node

    _Drop().visit(tree)


def mutants_of(source: str, module: str) -> list[tuple[Mutant, str]]:
    """Every mutant of ``source``: (the mutant, its source)."""
    out = []
    count = len(_collect(ast.parse(source)))
    for index in range(count):
        tree = ast.parse(source)
        node, kind, line = _collect(tree)[index]
        if kind == "raise":
            _ReplaceRaise(node).visit(tree)
            desc = "raise -> pass"
        elif kind == "not":
            _unary_not(tree, node)
            desc = "not x -> x"
        else:
            desc = _apply(node, kind)
        ast.fix_missing_locations(tree)
        out.append((Mutant(module, index, line, desc), ast.unparse(tree)))
    return out


def _collect(tree: ast.AST) -> list[tuple[ast.AST, str, int]]:
    points = _Points()
    points.visit(tree)
    return points.points


def _commit(rev: str) -> str:
    """The full id of the commit ``rev``."""
    return subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout.strip()


def _copy_repo(workdir: Path, commit: str) -> None:
    """The committed tree of ``commit`` in ``workdir`` (so commit your changes first)."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(workdir)], input=archive, check=True)


def _run_tests(tests: list[str], timeout: float, with_r: bool = False) -> tuple[str, float]:
    """Run ``tests`` in a forked child (with the R tests if ``with_r``); "killed",
    "survived" or "timeout"."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: fresh calibr and test modules, then pytest
        try:
            import pytest

            for name in list(sys.modules):
                top = name.split(".")[0]
                if (top == "calibr" and not name.startswith("calibr._kernels")) or top in (
                    "conftest", "oracles", "tolerances", "rref", "compiled_paths",
                ) or top.startswith("test_"):
                    del sys.modules[name]
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = pytest.main([*tests, *PYTEST_ARGS, *([] if with_r else NOT_R)])
            os._exit(int(code))
        except BaseException:  # noqa: BLE001
            os._exit(99)
    deadline = start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            break
        if time.perf_counter() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.perf_counter() - start
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    if code == 0:
        return "survived", seconds
    if code in (1, 3):  # tests failed, or an error inside a test
        return "killed", seconds
    return f"error({code})", seconds


def _line_set(text: str):
    """``"375,456-481,900-"``: a test of whether a line is chosen."""
    ranges = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        first = int(low) if low else 1
        last = (int(high) if high else sys.maxsize) if dash else first
        ranges.append((first, last))
    return lambda line: any(first <= line <= last for first, last in ranges)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: all targets)")
    parser.add_argument("--workdir", default="/tmp/calibr-mutate", type=Path)
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--timeout-factor", type=float, default=3.0)
    parser.add_argument("--sample", type=float, default=1.0,
                        help="run this fraction of each module's mutants (a fixed sample)")
    parser.add_argument("--rev", default="HEAD",
                        help="the commit whose tree is mutated (default: HEAD)")
    parser.add_argument("--lines", type=_line_set, default=None,
                        help="only the mutants on these lines, e.g. 375,456-481,900- "
                             "(before --sample)")
    parser.add_argument("--with-r", action="store_true",
                        help="keep the R tests (marked r) for the modules whose reference "
                             f"is R: {', '.join(R_REFERENCE)}")
    args = parser.parse_args(argv)

    modules = args.modules or list(TARGETS)
    unknown = [m for m in modules if m not in TARGETS]
    if unknown:
        parser.error(f"not a target: {unknown[0]} (targets: {', '.join(TARGETS)})")
    commit = _commit(args.rev)
    if args.list:
        for module in modules:
            source = subprocess.run(["git", "show", f"{commit}:{module}"], cwd=ROOT, check=True,
                                    capture_output=True, text=True).stdout
            for mutant, _ in mutants_of(source, module):
                if args.lines is not None and not args.lines(mutant.line):
                    continue
                print(f"{module}:{mutant.line}: {mutant.description}")
        return 0

    workdir: Path = args.workdir
    _copy_repo(workdir, commit)
    print(f"mutating commit {commit}", flush=True)
    os.environ["NUMBA_CACHE_DIR"] = str(workdir / ".numba-cache")
    # As in CI: a test that cannot run (torch, matplotlib, a peer missing) fails
    # instead of skipping, so the unmutated run fails and the module is reported as
    # not checked, rather than every mutant "surviving" behind a skip.
    for var in REQUIRE_VARIABLES:
        os.environ[var] = "1"
    os.environ.setdefault("MPLBACKEND", "Agg")
    # The tests' own processes (sys.executable -c ..., the command line in a real
    # process) import the copy, mutant included, not whatever calibr is installed
    # (an editable install points at another checkout, which would run unmutated
    # code, or code of another commit than the tests').
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(workdir), *filter(None, [os.environ.get("PYTHONPATH")])])
    # No bytecode cache in the workdir: a .pyc is trusted when the source's size
    # and mtime (whole seconds) match, and two mutants of one module often have the
    # same size, so a mutant written within a second of the last would run the
    # last one's cached code.
    sys.dont_write_bytecode = True
    os.chdir(workdir)
    sys.path[:0] = [str(workdir), str(workdir / "tests")]
    import numba  # noqa: F401  - imported once, shared by every forked child
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pytest  # noqa: F401

    results: list[Mutant] = []
    unchecked: list[str] = []
    for module in modules:
        tests = TARGETS[module]
        with_r = args.with_r and module in R_REFERENCE
        # also fills the numba cache
        status, base = _run_tests(tests, timeout=1800, with_r=with_r)
        if status != "survived":
            marks = "" if with_r else " -m 'not r'"
            print(f"{module}: NOT CHECKED: the unmutated tests do not pass ({status}); a "
                  "missing test dependency fails them too. Run "
                  f"CALIBR_REQUIRE_R=1 CALIBR_REQUIRE_TORCH=1 python -m pytest {' '.join(tests)}"
                  f"{marks} to see why.", flush=True)
            unchecked.append(module)
            continue
        # warm: the time a mutant should take
        _, base = _run_tests(tests, timeout=1800, with_r=with_r)
        print(f"{module}: tests pass unmutated in {base:.1f} s"
              f"{' (R tests included)' if with_r else ''}", flush=True)
        path = workdir / module
        original = path.read_text()
        try:
            everything = mutants_of(original, module)
            if args.lines is not None:
                everything = [(m, src) for m, src in everything if args.lines(m.line)]
            if not everything:
                print(f"{module}: no mutants on the chosen lines", flush=True)
                continue
            keep = max(1, round(args.sample * len(everything)))
            # a fixed, evenly spread sample: the same mutants on every run
            chosen = [everything[round(i * len(everything) / keep)] for i in range(keep)]
            for mutant, source in chosen:
                path.write_text(source)
                mutant.commit = commit
                mutant.status, mutant.seconds = _run_tests(
                    tests, timeout=args.timeout_factor * base + 10, with_r=with_r)
                results.append(mutant)
                if mutant.status != "killed":
                    print(f"{module}:{mutant.line}: {mutant.description}: {mutant.status}",
                          flush=True)
        finally:
            path.write_text(original)
        mine = [m for m in results if m.module == module]
        killed = sum(m.status == "killed" for m in mine)
        print(f"{module}: {killed}/{len(mine)} killed (tests {base:.1f} s)", flush=True)
        # written after every module too, so an interrupted run keeps what it found
        (workdir / "mutants.json").write_text(json.dumps([asdict(m) for m in results], indent=1))

    killed = sum(m.status == "killed" for m in results)
    print(f"total: {killed}/{len(results)} killed, "
          f"{len(results) - killed} not ({(len(results) - killed) / max(len(results), 1):.1%})")
    (workdir / "mutants.json").write_text(json.dumps([asdict(m) for m in results], indent=1))
    if unchecked:
        print(f"not checked (their tests fail unmutated): {', '.join(unchecked)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
