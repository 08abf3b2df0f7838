"""Start-up cost of calibr: ``import calibr``, the first call of each public kernel
with an empty and with a warm numba cache, and ``calibr report`` end to end.

Usage::

    python benchmarks/bench_startup.py                 # 3 repeats of everything
    python benchmarks/bench_startup.py --repeat 5 --only import ece report
    # two copies of calibr (directories holding calibr/), taking turns, side by side:
    git archive HEAD calibr | tar -x -C /tmp/old
    python benchmarks/bench_startup.py --src before=/tmp/old --src after=.

Every measurement is a fresh Python process. "cold" is a process with an empty
numba cache directory of its own (``NUMBA_CACHE_DIR``, fresh per process);
"warm" is a second process on the directory the cold one just filled. Each
process prints what it measured itself (``perf_counter`` around the import and
around the first and second call) and what it found in ``sys.modules`` and in
numba's per-kernel statistics: how many kernel signatures it loaded from the
cache and how many it compiled. The CLI is timed from outside, as the wall
time of the whole ``python -m calibr.cli report --example breast_cancer``
process (and of ``report --help``). calibr's bytecode is compiled first (as
``pip install`` does), and the children write bytecode as Python does by
default even where ``PYTHONDONTWRITEBYTECODE`` is set, so that no process pays
for compiling Python source. The floors (an empty interpreter, ``import numpy``,
``pandas``, ``numba``) are measured the same way, for scale.

The cases take turns (each repeat runs every case once, cold then warm, for
each copy of calibr in turn), so a slow phase of a shared machine hits all of
them; the tables show the median and the range over the repeats. "import + 1st"
is what a user waits for: with the imports deferred to the first use, part of
the import's cost moves into the first call. Nothing here is a target: the
numbers go into benchmarks/README.md ("Start-up").
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Modules that calibr must import only for a call that uses them.
HEAVY = ["numba", "llvmlite", "scipy", "pandas", "pyarrow", "matplotlib", "torch",
         "torchmetrics", "rpy2"]

# --------------------------------------------------------------------------
# the child process: one case, timed from inside

_DATA = {
    "binary": (
        "rng = np.random.default_rng(0)\n"
        "p = rng.random(1000)\n"
        "y = (rng.random(1000) < p).astype(np.int64)\n"
    ),
    "multi": (
        "rng = np.random.default_rng(0)\n"
        "p = rng.dirichlet(np.ones(4), 1000)\n"
        "y = rng.integers(1, 5, 1000)\n"
    ),
    "predictions": (
        "from calibr.datasets import load_breast_cancer_predictions\n"
        "predictions = load_breast_cancer_predictions()\n"
    ),
}

#: The median-bandwidth block of vignettes/migrating-from-r.md ("Several grouping
#: columns"), as it stands there.
_VIGNETTE_MEDIAN = """by_fold = calibr.summarise(
    predictions.groupby(["model", "fold"]), p="p", y="y",
    ece15=calibr.metric("ece", bins=15),
    skce_ul=calibr.metric("skce", estimator="ul",
                          bandwidth="median"),
    mmce=calibr.metric("mmce", bandwidth=0.1),
)"""

#: name -> (module to import, data, the call). The call's names come from the import.
CALLS: dict[str, tuple[str, str, str]] = {
    "ece": ("calibr", "binary", "calibr.ece(p, y)"),
    "mce": ("calibr", "binary", "calibr.mce(p, y)"),
    "ece confidence": ("calibr", "multi", "calibr.ece(p, y, type='confidence')"),
    "skce scalar": ("calibr", "binary", "calibr.skce(p, y, bandwidth=0.2)"),
    "skce median": ("calibr", "binary", "calibr.skce(p, y, bandwidth='median')"),
    "skce canonical": ("calibr", "multi", "calibr.skce(p, y, bandwidth=0.2)"),
    "skce canonical median": ("calibr", "multi", "calibr.skce(p, y, bandwidth='median')"),
    "mmce": ("calibr", "binary", "calibr.mmce(p, y, bandwidth=0.2)"),
    "calibration_table": ("calibr", "binary", "calibr.calibration_table(p, y)"),
    "bootstrap ece": ("calibr", "binary", "calibr.bootstrap(p, y, 'ece')"),
    "bootstrap skce": ("calibr", "binary", "calibr.bootstrap(p, y, 'skce')"),
    "paired_bootstrap": ("calibr", "binary", "calibr.paired_bootstrap(p ** 2, p, y)"),
    "vignette median": ("calibr", "predictions", _VIGNETTE_MEDIAN),
    "torchmetrics binary": (
        "calibr.torchmetrics", "binary", "calibr.torchmetrics.binary_calibration_error(p, y)"),
    "torchmetrics multiclass": (
        "calibr.torchmetrics", "multi",
        "calibr.torchmetrics.multiclass_calibration_error(p, y - 1, num_classes=4)"),
}

_CHILD = """
import sys, time
t0 = time.perf_counter()
import {module}
t_import = time.perf_counter() - t0
after_import = sorted(m for m in {heavy!r} if m in sys.modules)
import numpy as np
{data}
t0 = time.perf_counter()
{call}
t_first = time.perf_counter() - t0
t0 = time.perf_counter()
{call}
t_second = time.perf_counter() - t0
kernels = {{}}
if "numba" in sys.modules:
    from numba.core.registry import CPUDispatcher
    for modname, mod in sorted(sys.modules.items()):
        if not modname.startswith("calibr._kernels") or mod is None:
            continue
        for attr, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == modname:
                s = obj.stats
                hits, misses = sum(s.cache_hits.values()), sum(s.cache_misses.values())
                if hits or misses:
                    kernels[modname.rsplit(".", 1)[1] + "." + attr] = [hits, misses]
import json
print(json.dumps({{
    "import": t_import, "first": t_first, "second": t_second,
    "after_import": after_import,
    "after_call": sorted(m for m in {heavy!r} if m in sys.modules),
    "kernels": kernels,
}}))
"""

_IMPORT_CHILD = """
import sys, time
t0 = time.perf_counter()
import calibr
t_import = time.perf_counter() - t0
import json
print(json.dumps({{"import": t_import,
                  "after_import": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""

#: Floors, for scale: the wall time of a process that imports only this.
FLOORS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import pandas": "import pandas",
    "import numba": "import numba",
}

REPORT = ["-m", "calibr.cli", "report", "--example", "breast_cancer"]
HELP = ["-m", "calibr.cli", "report", "--help"]


def _env(src: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["NUMBA_CACHE_DIR"] = str(cache)
    env.pop("NUMBA_DEBUG_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as for a user: bytecode is cached
    return env


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time and CPU time (user + system) of a fresh ``python *args`` process,
    and its stdout. The CPU time is what the process itself computed: on a shared
    machine it varies less than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                         cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise RuntimeError(f"{args} failed:\n{out.stderr[-3000:]}")
    return wall, cpu, out.stdout


def _child(name: str) -> list[str]:
    module, data, call = CALLS[name]
    code = _CHILD.format(module=module, heavy=HEAVY, data=_DATA[data], call=call)
    return ["-c", code]


def measure(sources: dict[str, Path], names: list[str], repeat: int) -> dict:
    """Every case ``repeat`` times for every source, taking turns (case by case, the
    sources one after the other); each cold run in a fresh cache directory."""
    rows: dict[str, dict[str, dict[str, list]]] = {label: {} for label in sources}

    def add(label: str, key: str, field: str, value) -> None:
        rows[label].setdefault(key, {}).setdefault(field, []).append(value)

    with tempfile.TemporaryDirectory(prefix="calibr-startup-") as tmp:
        for rep in range(repeat):
            for name in names:
                for i, (label, src) in enumerate(sources.items()):
                    cache = Path(tmp) / f"{rep}-{i}-{name.replace(' ', '_')}"
                    env = _env(src, cache)
                    if name in FLOORS:
                        wall, cpu, _ = _run(["-c", FLOORS[name]], env)
                        add(label, name, "wall", wall)
                        add(label, name, "cpu", cpu)
                    elif name == "import":
                        wall, cpu, out = _run(["-c", _IMPORT_CHILD.format(heavy=HEAVY)], env)
                        got = json.loads(out)
                        add(label, name, "wall", wall)
                        add(label, name, "cpu", cpu)
                        add(label, name, "import", got["import"])
                        add(label, name, "modules", got["after_import"])
                    elif name == "cli help":
                        wall, cpu, _ = _run(HELP, env)
                        add(label, name, "wall", wall)
                        add(label, name, "cpu", cpu)
                    elif name == "report":
                        for state in ("cold", "warm"):
                            wall, cpu, _ = _run(REPORT, env)
                            add(label, f"report {state}", "wall", wall)
                            add(label, f"report {state}", "cpu", cpu)
                    else:
                        for state in ("cold", "warm"):
                            wall, cpu, out = _run(_child(name), env)
                            got = json.loads(out)
                            key = f"{name} {state}"
                            add(label, key, "wall", wall)
                            add(label, key, "cpu", cpu)
                            for field in ("import", "first", "second"):
                                add(label, key, field, got[field])
                            add(label, key, "total", got["import"] + got["first"])
                            add(label, key, "modules", got["after_call"])
                            add(label, key, "kernels", got["kernels"])
    return rows


# --------------------------------------------------------------------------
# printing


def _ms(values: list[float]) -> str:
    med = statistics.median(values) * 1e3
    return f"{med:7.0f} ({min(values) * 1e3:.0f}-{max(values) * 1e3:.0f})"


def _summary(rows: dict) -> None:
    print(f"{'case':<30} {'import':>17} {'first call':>19} {'import + 1st':>19} "
          f"{'2nd call':>9} {'process':>19} {'process CPU':>19}  loaded/compiled")
    for key, r in rows.items():
        cells = [_ms(r[f]) if f in r else "" for f in ("import", "first", "total")]
        second = (f"{statistics.median(r['second']) * 1e3:9.2f}" if "second" in r else "")
        kern = ""
        if "kernels" in r:
            last = r["kernels"][-1]
            kern = f"{sum(h for h, _ in last.values())}/{sum(m for _, m in last.values())}"
        print(f"{key:<30} {cells[0]:>17} {cells[1]:>19} {cells[2]:>19} {second:>9} "
              f"{_ms(r['wall']):>19} {_ms(r['cpu']):>19}  {kern}")
    print()
    print("modules imported (last repeat; import: by the import, calls: by the end):")
    for key, r in rows.items():
        if "modules" in r:
            print(f"  {key:<28} {', '.join(r['modules'][-1]) or '-'}")
    print()
    print("kernels per call (warm process: [loaded from cache, compiled]):")
    for key, r in rows.items():
        if key.endswith(" warm") and "kernels" in r:
            names = ", ".join(f"{k} {v}" for k, v in sorted(r["kernels"][-1].items()))
            print(f"  {key[:-5]:<28} {names}")


def _compare(rows: dict) -> None:
    """Medians side by side: what a user waits for (in-process import + first call for
    the calls, the whole process for the floors, the import and the CLI), then each
    process's wall and CPU time."""
    labels = list(rows)
    first = rows[labels[0]]
    head = "".join(f"{label:>22}" for label in labels)
    for title, pick in (("", lambda r: "total" if "total" in r else "wall"),
                        ("process ", lambda r: "wall"), ("process CPU ", lambda r: "cpu")):
        print(f"{title + 'case (median ms, min-max)':<42}{head}{'ratio':>8}")
        for key, r in first.items():
            field = pick(r)
            what = {"total": "import + 1st call", "wall": "process", "cpu": "CPU"}[field]
            cells = [rows[label][key][field] for label in labels]
            meds = [statistics.median(c) for c in cells]
            ratio = meds[-1] / meds[0] if meds[0] else float("nan")
            body = "".join(f"{_ms(c):>22}" for c in cells)
            print(f"{key + ' (' + what + ')':<42}{body}{ratio:8.2f}")
        print()


# --------------------------------------------------------------------------
# --breakdown: what a cold process compiles, kernel by kernel

#: Prepended to a child: records numba's compile events (``numba.core.event``) and
#: writes, at exit, each compiled function's time (its own, without the functions it
#: compiles while typing its calls) and signatures to the file ``$CALIBR_BENCH_OUT``.
_RECORDER = """
import atexit, json, os, time
from numba.core import event as _event

_stack, _own, _sigs = [], {}, {}

class _Listener(_event.Listener):
    def on_start(self, ev):
        _stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        t0, inner = _stack.pop()
        took = time.perf_counter() - t0
        func = ev.data["dispatcher"].py_func
        mod = func.__module__ or "?"
        name = (mod.rsplit(".", 1)[1] + "." + func.__name__ if mod.startswith("calibr.")
                else "numba's " + mod.rsplit(".", 1)[-1] + " overloads")
        _own[name] = _own.get(name, 0.0) + took - inner
        _sigs.setdefault(name, set()).add(str(ev.data["args"]))
        if _stack:
            _stack[-1][1] += took

_event.register("numba:compile", _Listener())

@atexit.register
def _write():
    with open(os.environ["CALIBR_BENCH_OUT"], "w") as fh:
        json.dump({k: [_own[k], sorted(_sigs[k])] for k in _own}, fh)
"""

_REPORT_CHILD = """
import runpy, sys
sys.argv = ["calibr", "report", "--example", "breast_cancer"]
try:
    runpy.run_module("calibr.cli", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
"""


def breakdown(src: Path, names: list[str]) -> None:
    """One cold process per case; print each compiled function's own compile time
    (largest first) and its number of signatures, and the signatures where there
    are several."""
    with tempfile.TemporaryDirectory(prefix="calibr-breakdown-") as tmp:
        for name in names:
            if name == "report":
                code = _REPORT_CHILD
            elif name in CALLS:
                code = _child(name)[1]
            else:
                continue
            env = _env(src, Path(tmp) / name.replace(" ", "_"))
            env["CALIBR_BENCH_OUT"] = out = str(Path(tmp) / "out.json")
            wall, cpu, _ = _run(["-c", _RECORDER + code], env)
            got = json.loads(Path(out).read_text())
            total = sum(t for t, _ in got.values())
            nsig = sum(len(s) for _, s in got.values())
            print(f"\n== {name}: process {wall:.2f} s (CPU {cpu:.2f} s), compiling "
                  f"{total:.2f} s, {len(got)} functions, {nsig} signatures")
            for fname, (t, sigs) in sorted(got.items(), key=lambda kv: -kv[1][0]):
                print(f"  {t:6.2f} s  {len(sigs):2d}  {fname}")
                if len(sigs) > 1 and fname.startswith("numba's"):
                    continue
                for sig in sigs if len(sigs) > 1 else ():
                    print(f"{'':16}{sig}")


def _source(text: str) -> tuple[str, Path]:
    label, eq, path = text.partition("=")
    return (label, Path(path)) if eq else (Path(text).name, Path(text))


def main() -> None:
    cases = ["python -c pass", "import numpy", "import pandas", "import numba", "import",
             *CALLS, "cli help", "report"]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", action="append", type=_source, metavar="[LABEL=]DIR",
                    help="a directory holding the calibr package to time (default: this "
                    "repo); give it twice (e.g. before=/tmp/old after=.) to compare, "
                    "interleaved")
    ap.add_argument("--only", nargs="+", metavar="CASE",
                    help=f"a subset of the cases ({', '.join(repr(c) for c in cases)})")
    ap.add_argument("--json", type=Path, help="also write the raw numbers here")
    ap.add_argument("--breakdown", action="store_true",
                    help="instead of the timings: one cold process per call (and report) "
                    "that lists the functions numba compiles, each with its own compile "
                    "time and its signatures")
    args = ap.parse_args()
    names = cases if not args.only else [c for c in cases if c in args.only]
    if args.only and len(names) != len(args.only):
        ap.error(f"unknown case in {args.only}; the cases are {cases}")
    sources = dict(args.src or [("calibr", ROOT)])
    for label, src in list(sources.items()):
        sources[label] = src = src.resolve()
        if not (src / "calibr" / "__init__.py").is_file():
            ap.error(f"{src} does not hold calibr/__init__.py")
        # bytecode first, as ``pip install`` does: no process below pays for compiling
        # calibr's sources to bytecode (a setting of this shell must not either)
        compileall.compile_dir(src / "calibr", quiet=1)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if args.breakdown:
        for label, src in sources.items():
            print(f"{label}: calibr from {src}, load average {load:.2f} at start")
            breakdown(src, names)
        return
    print(f"{os.cpu_count()} cores, load average {load:.2f} at start; {args.repeat} repeats, "
          "median (min-max) in ms")
    for label, src in sources.items():
        print(f"  {label}: calibr from {src}")
    rows = measure(sources, names, args.repeat)
    if hasattr(os, "getloadavg"):
        print(f"load average {os.getloadavg()[0]:.2f} at the end")
    for label, r in rows.items():
        print(f"\n== {label}")
        _summary(r)
    if len(rows) > 1:
        print(f"\n== {' vs '.join(rows)} (ratio: {list(rows)[-1]} / {list(rows)[0]})")
        _compare(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
