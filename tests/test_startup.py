"""Start-up: what ``import calibr`` and each public call import, compile and load.

Each test runs a fresh Python process (``sys.modules`` and numba's in-memory
state are per process) with its own numba cache directory, and reads what the
process reports about itself: the modules in ``sys.modules``, and numba's
per-kernel statistics (how many signatures each of calibr's kernels has, and
how many it loaded from the cache or compiled). No wall-clock time is asserted;
``benchmarks/bench_startup.py`` measures the times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import calibr

#: What ``import calibr`` must not import (each costs from tens of milliseconds
#: to seconds, and most calls need none of them).
LAZY = ["numpy", "pandas", "numba", "llvmlite", "scipy", "pyarrow", "matplotlib", "torch",
        "torchmetrics", "rpy2", "sklearn", "inspect_ai", "lm_eval", "mlflow"]

#: What no metric, verb or CLI report imports unless asked (plots, torch, R).
NEVER = ["matplotlib", "torch", "torchmetrics", "rpy2", "sklearn", "inspect_ai", "lm_eval",
         "mlflow"]

_KERNEL_STATS = """
def _kernel_stats():
    # {kernel: [signatures, cache hits (loaded), cache misses (compiled)]}
    out = {}
    if "numba" not in sys.modules:
        return out
    from numba.core.registry import CPUDispatcher
    for modname, mod in sorted(sys.modules.items()):
        if not modname.startswith("calibr._kernels") or mod is None:
            continue
        for attr, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == modname:
                s = obj.stats
                out[modname + "." + attr] = [len(obj.signatures), sum(s.cache_hits.values()),
                                             sum(s.cache_misses.values())]
    return out
"""


def _env(cache: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(cache)
    env.pop("NUMBA_DEBUG_CACHE", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    env.update(extra)
    return env


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; it must succeed. The working directory is
    the (temporary) parent of the cache, so that calibr is imported from where this
    process imports it, not from a ``calibr`` directory that happens to be there."""
    cwd = Path(env["NUMBA_CACHE_DIR"]).parent
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, cwd=cwd, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def _report(code: str, env: dict[str, str], result: Path) -> dict:
    """Run ``code`` (which writes JSON to the path ``RESULT``) in a fresh interpreter."""
    _python(f"RESULT = {str(result)!r}\n" + code, env)
    return json.loads(result.read_text())


def _cache_files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


# --------------------------------------------------------------------------
# imports


_IMPORTS = """
import json, sys
{statement}
json.dump({{"modules": sorted(m for m in {lazy!r} if m in sys.modules)}}, open(RESULT, "w"))
"""


@pytest.mark.parametrize("statement", [
    "import calibr",
    "import calibr; calibr.__version__; calibr.__all__; dir(calibr)",
    "import calibr.datasets",
    "import calibr.cli",
    # the CLI answers --version, --help and a mistyped option without the numerics
    "from calibr.cli import main\nfor a in (['--version'], ['--help'], ['report', '--help'],"
    " ['report', '--nope']):\n    main(a)",
])
def test_import_calibr_imports_nothing_heavy(tmp_path, statement):
    got = _report(_IMPORTS.format(statement=statement, lazy=LAZY), _env(tmp_path / "cache"),
                  tmp_path / "out.json")
    assert got["modules"] == [], f"{statement!r} imported {got['modules']}"
    assert not (tmp_path / "cache").exists(), "the numba cache was touched"


def test_public_names_resolve_to_their_modules():
    """Each name of ``__all__`` has its module in ``calibr._SOURCES`` (a new public
    name needs an entry there), and ``calibr.X`` is that module's own object, as is
    ``from calibr import X``; ``dir()`` lists them before their first use."""
    import importlib

    assert set(calibr.__all__) == {*calibr._SOURCES, "__version__", "datasets"}
    assert calibr._SOURCES["ece"] == "._metrics.binned"  # a spot check of the table
    for name, module in calibr._SOURCES.items():
        assert getattr(calibr, name) is getattr(importlib.import_module(module, "calibr"), name)
    from calibr import datasets, ece

    assert ece is sys.modules["calibr._metrics.binned"].ece
    assert calibr.datasets is datasets is sys.modules["calibr.datasets"]
    assert set(calibr.__all__) <= set(dir(calibr))
    with pytest.raises(AttributeError, match="module 'calibr' has no attribute 'nope'"):
        calibr.nope  # noqa: B018
    with pytest.raises(ImportError, match="cannot import name 'nope' from 'calibr'"):
        from calibr import nope  # noqa: F401


def test_names_and_submodules_on_first_use_in_a_fresh_process(tmp_path):
    """``import calibr`` alone, then each public name and a submodule by attribute
    (``calibr.table``, as before the imports became lazy); a star import gives
    every name of ``__all__``."""
    code = """
import json, sys
import calibr
names = {n: type(getattr(calibr, n)).__name__ for n in calibr.__all__}
wilson = calibr.table.wilson_interval.__name__
ns = {}
exec("from calibr import *", ns)
json.dump({"names": names, "wilson": wilson, "star": sorted(k for k in ns if k != "__builtins__")},
          open(RESULT, "w"))
"""
    got = _report(code, _env(tmp_path / "cache"), tmp_path / "out.json")
    assert got["names"]["ece"] == "function" and got["names"]["datasets"] == "module"
    assert got["names"]["InputError"] == "type" and got["names"]["__version__"] == "str"
    assert got["wilson"] == "wilson_interval"
    assert got["star"] == sorted(calibr.__all__)


_PLOT_NAME = """
import json, sys
sys.modules["matplotlib"] = None  # as without matplotlib: `import matplotlib` fails
import calibr
from calibr import reliability_diagram
plot = sys.modules["calibr.plot"]
same = reliability_diagram is calibr.reliability_diagram is plot.reliability_diagram
try:
    reliability_diagram(calibr.calibration_table([0.2, 0.8], [0, 1]))
    error = None
except ImportError as exc:
    error = str(exc)
json.dump({"same": same, "error": error,
           "modules": sorted(m for m in ["torch", "torchmetrics", "rpy2"] if m in sys.modules)},
          open(RESULT, "w"))
"""


def test_reliability_diagram_is_a_name_of_calibr_that_needs_matplotlib_only_to_draw(tmp_path):
    """``calibr.reliability_diagram`` (as the README writes it) is ``calibr.plot``'s,
    imported on first use; without matplotlib the name resolves and a call says how
    to install it."""
    got = _report(_PLOT_NAME, _env(tmp_path / "cache"), tmp_path / "out.json")
    assert got["same"] is True
    assert got["error"] == ("reliability_diagram() needs matplotlib, which is an optional "
                            "dependency of calibr; install it with `pip install matplotlib`.")
    assert got["modules"] == []
    got = _report(_IMPORTS.format(statement="import calibr; calibr.reliability_diagram",
                                  lazy=NEVER), _env(tmp_path / "cache"), tmp_path / "out.json")
    assert got["modules"] == [], "calibr.reliability_diagram imported " + str(got["modules"])


_EVERY_MODULE = """
import json, pkgutil, importlib, sys
import calibr
for info in pkgutil.walk_packages(calibr.__path__, "calibr."):
    if not info.name.endswith(".__main__"):  # python -m calibr.cli: runs the command
        importlib.import_module(info.name)
""" + _KERNEL_STATS + """
json.dump({"stats": _kernel_stats(),
           "modules": sorted(m for m in ["matplotlib", "torch", "torchmetrics", "rpy2"]
                             if m in sys.modules)}, open(RESULT, "w"))
"""


def test_importing_every_module_compiles_and_loads_no_kernel(tmp_path):
    """Importing all of calibr (every module, every kernel) compiles nothing, loads
    nothing from the cache and does not touch the cache directory."""
    got = _report(_EVERY_MODULE, _env(tmp_path / "cache"), tmp_path / "out.json")
    assert got["stats"], "no kernel found: the test would pass vacuously"
    used = {k: v for k, v in got["stats"].items() if v != [0, 0, 0]}
    assert not used, f"compiled or loaded at import: {used}"
    assert not (tmp_path / "cache").exists(), list((tmp_path / "cache").rglob("*"))
    assert got["modules"] == []


# --------------------------------------------------------------------------
# first calls: cold, then warm


_SETUP = """
import numpy as np
rng = np.random.default_rng(0)
p = rng.random(300)
y = (rng.random(300) < p).astype(np.int64)
P = rng.dirichlet(np.ones(4), 300)
Y = rng.integers(1, 5, 300)
"""

#: Each public call with compiled code behind it (the names are the test ids).
CALLS = {
    "ece": "calibr.ece(p, y)",
    "mce": "calibr.mce(p, y, bins=5)",
    "ece_classwise": "calibr.ece(P, Y)",
    "mce_confidence": "calibr.mce(P, Y, type='confidence')",
    "skce_scalar": "calibr.skce(p, y, bandwidth=0.2)",
    "skce_scalar_median": "calibr.skce(p, y, bandwidth='median')",
    "skce_canonical": "calibr.skce(P, Y, bandwidth=0.2)",
    "skce_canonical_median": "calibr.skce(P, Y, bandwidth='median')",
    "mmce": "calibr.mmce(p, y, bandwidth=0.2)",
    "median_bandwidth": "calibr.median_bandwidth(p)",
    "calibration_table": "calibr.calibration_table(p, y)",
    "decompose": "calibr.decompose(p, y)",
    "ecce": ("calibr.ecce(p, y)\ncalibr.ecce(p, y, weights=np.ones(len(p)))\n"
             "calibr.calibration_test(p, y, 'ks')\ncalibr.calibration_test(p, y, 'kuiper')"),
    "summarise": ("import pandas as pd\n"
                  "df = pd.DataFrame({'g': np.arange(300) % 3, 'p': p, 'y': y})\n"
                  "calibr.summarise(df.groupby('g'), 'p', 'y', "
                  "metrics=['ece', 'mce', 'skce', 'mmce'])"),
    "val_prob": "calibr.val_prob(p, y)",
    "multicalibration": ("import pandas as pd\n"
                         "df = pd.DataFrame({'g': np.arange(300) % 3, 'p': p, 'y': y})\n"
                         "calibr.multicalibration(df, 'p', 'y', ['g'])"),
    # the input scans run compiled from scans.NUMPY_MAX_N values on (numpy below)
    "input_scans": ("from calibr._kernels.scans import NUMPY_MAX_N\n"
                    "calibr.mmce(np.resize(p, NUMPY_MAX_N), np.resize(y, NUMPY_MAX_N), "
                    "bandwidth=0.2)"),
    "torchmetrics_binary": ("import calibr.torchmetrics as ctm\n"
                            "ctm.binary_calibration_error(p, y)"),
    "torchmetrics_multiclass": ("import calibr.torchmetrics as ctm\n"
                                "ctm.multiclass_calibration_error(P, Y - 1, num_classes=4)"),
    "cli_report": ("from calibr.cli import main\n"
                   "assert main(['report', '--example', 'breast_cancer', '-o', "
                   "RESULT + '.csv']) == 0"),
}

#: Calls that run no compiled code at all on these small inputs (none today: val_prob
#: runs rms's binning kernels of calibr/_kernels/rms.py; the input scans are numpy's
#: below scans.NUMPY_MAX_N values).
NO_KERNELS: set[str] = set()

_CALL = """
import json, sys
import calibr
""" + _SETUP + _KERNEL_STATS + """
CALL
json.dump({"stats": _kernel_stats(),
           "modules": sorted(m for m in NEVER if m in sys.modules)}, open(RESULT, "w"))
"""


def _digest(tmp: Path) -> str:
    """The digest of calibr's kernel sources (the cache's freshness stamp) as the
    processes of these tests see them."""
    code = "from calibr._kernels._jit import _source_digest\nprint(_source_digest())"
    return _python(code, _env(tmp / "cache")).stdout.strip()


@pytest.fixture(scope="module")
def warm_cache_digest(tmp_path_factory) -> str:
    """The digest before the cache is filled: an edit of calibr's kernels while the
    tests run would make them compile."""
    return _digest(tmp_path_factory.mktemp("digest"))


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory, warm_cache_digest) -> Path:
    """A cache filled by one process that made every call of CALLS."""
    root = tmp_path_factory.mktemp("startup")
    cache = root / "cache"
    code = f"RESULT = {str(root / 'cold')!r}\nimport calibr\n" + _SETUP + "\n".join(CALLS.values())
    _python(code, _env(cache))
    assert list(cache.rglob("*.nbc"))
    return cache


def _call(name: str, cache: Path, result: Path, debug: bool = False) -> tuple[dict, str]:
    code = f"NEVER = {NEVER!r}\n" + _CALL.replace("\nCALL\n", f"\n{CALLS[name]}\n")
    env = _env(cache, **({"NUMBA_DEBUG_CACHE": "1"} if debug else {}))
    out = _python(f"RESULT = {str(result)!r}\n" + code, env)
    return json.loads(result.read_text()), out.stdout


def test_warm_cache_process_compiles_nothing_for_each_public_call(warm_cache, warm_cache_digest,
                                                                 tmp_path):
    """With the cache warm, a fresh process per public call loads every kernel it
    runs from the cache: numba counts no cache miss (a compilation) for any of
    them, NUMBA_DEBUG_CACHE reports loads and no save, and no cache file changes
    (the calls of NO_KERNELS load nothing: they run no compiled code).
    None of these calls imports matplotlib, torch, torchmetrics or rpy2."""
    before = _cache_files(warm_cache)

    def one(name: str) -> tuple[str, dict, str]:
        got, debug = _call(name, warm_cache, tmp_path / f"{name}.json", debug=True)
        return name, got, debug

    with ThreadPoolExecutor(max_workers=2) as pool:  # two cores
        results = list(pool.map(one, CALLS))
    problems = {}
    for name, got, debug in results:
        stats = got["stats"]
        compiled = {k: v for k, v in stats.items() if v[2]}
        loaded = {k: v for k, v in stats.items() if v[1]}
        # every signature a kernel has came from the cache (or, wrongly, from numba)
        unexplained = {k: v for k, v in stats.items() if v[0] != v[1] + v[2]}
        saved = [line for line in debug.splitlines() if "saved" in line]
        reported = debug.count("data loaded")
        if (compiled or (not loaded) != (name in NO_KERNELS) or unexplained or saved
                or got["modules"]
                or reported != sum(v[1] for v in stats.values())):
            problems[name] = {"compiled": compiled, "loaded": sorted(loaded),
                              "unexplained": unexplained, "saved": saved,
                              "loads reported": reported, "imported": got["modules"]}
    assert _digest(tmp_path) == warm_cache_digest, (
        "calibr/_kernels changed while the test ran: run it again")
    assert not problems, problems
    assert _cache_files(warm_cache) == before


_SIGNATURES = """
import json, sys
import calibr
""" + _SETUP + """
CALL
from numba.core.registry import CPUDispatcher
sigs = {}
for modname, mod in sorted(sys.modules.items()):
    if modname.startswith("calibr._kernels") and mod is not None:
        for attr, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == modname and obj.signatures:
                sigs[modname + "." + attr] = [[str(t) for t in sig] for sig in obj.signatures]
json.dump(sigs, open(RESULT, "w"))
"""

#: Calls that each run many kernels, some of them from several places.
_ONE_SIGNATURE_CALLS = {
    "bootstrap_ece": "calibr.bootstrap(p, y, 'ece', n_resamples=50, method='bca')",
    "bootstrap_skce": "calibr.bootstrap(p, y, 'skce', n_resamples=50, method='bca')",
    "paired_bootstrap_mmce": "calibr.paired_bootstrap(p ** 2, p, y, 'mmce', n_resamples=50)",
    "skce_scalar_median": CALLS["skce_scalar_median"],
    "summarise": CALLS["summarise"],
    "summarise_median": (
        "import pandas as pd\n"
        "df = pd.DataFrame({'g': np.arange(300) % 3, 'p': p, 'y': y})\n"
        "calibr.summarise(df.sort_values('g').groupby('g'), 'p', 'y', "
        "ul=calibr.metric('skce', estimator='ul', bandwidth='median'))\n"
        "calibr.summarise(df.groupby('g'), 'p', 'y', "
        "uq=calibr.metric('skce', bandwidth='median'), ece='ece')"),
    "summarise_canonical_median": (
        "import pandas as pd\n"
        "df = pd.DataFrame(P, columns=[f'p_{k}' for k in range(1, 5)])\n"
        "df['y'], df['g'] = Y, np.arange(300) % 2\n"
        "calibr.summarise(df.groupby('g'), y='y', p_prefix='p_', "
        "skce=calibr.metric('skce', bandwidth='median'))"),
    "cli_report": CALLS["cli_report"],
    "isotonic_every_form": (
        "calibr.decompose(p, y, 'log_loss', weights=np.arange(300) % 3)\n"
        "calibr.decompose(P, Y, binning='equal-mass')\n"
        "calibr.decompose(P, Y)\n"
        "calibr.calibration_table(P, Y, binning='isotonic', type='confidence')\n"
        "calibr.ece(p, y, binning='isotonic', right=False)"),
}


@pytest.mark.parametrize("name", list(_ONE_SIGNATURE_CALLS))
def test_cold_process_compiles_each_kernel_once(tmp_path, name):
    """A cold call compiles each kernel it runs for one signature: numba compiles a
    kernel again for every new combination of argument types, and a literal
    constant (``False``, ``0``), a read-only array beside a writable one, or the
    rare path's int32 counts beside the common uint8 ones would each double that
    kernel's compile time. Only the kernel that moves rows by group has one
    signature per item size (and dimension) of what it moves. The checks of
    these small inputs compile no scan kernel at all."""
    code = _SIGNATURES.replace("\nCALL\n", f"\n{_ONE_SIGNATURE_CALLS[name]}\n")
    sigs = _report(code, _env(tmp_path / "cache"), tmp_path / "sigs.json")
    assert sigs
    several = {}
    for kernel, found in sigs.items():
        if kernel == "calibr._kernels.grouped._scatter":
            # the bits that it moves: read-only unsigned integers of the item size
            # (one signature each), whatever the dtype
            sources = [t[0] for t in found]
            if all(a.startswith("readonly array(uint") for a in sources):
                continue
        if len(found) > 1:
            several[kernel] = found
    assert not several, several
    # and a small input's checks are numpy's, not compiled scans
    scans = [k for k in sigs if k.rsplit(".", 1)[1] in ("_count_outside_unit",
                                                        "_count_not_binary")]
    assert not scans, scans


def test_cold_process_compiles_only_what_the_call_runs(tmp_path):
    """With an empty cache, ``ece()`` on a binary vector compiles (and saves) its
    own kernels and none of the kernel metrics' or torchmetrics' ones; the next
    process loads some of those (the ones called from Python: a cached kernel holds
    the code of the kernels it calls) and compiles none."""
    cache = tmp_path / "cache"
    cold, _ = _call("ece", cache, tmp_path / "cold.json")
    compiled = {k for k, v in cold["stats"].items() if v[2]}
    assert compiled
    assert all(v[1] == 0 for v in cold["stats"].values())
    foreign = [k for k in compiled
               if k.split(".")[2] in ("canonical", "scalar_sums", "scalar_median", "vexp",
                                      "torchmetrics_kernels")]
    assert not foreign, f"ece() compiled kernels it does not run: {foreign}"
    warm, _ = _call("ece", cache, tmp_path / "warm.json")
    # the kernels called from Python; those they call are inside their cached code
    loaded = {k for k, v in warm["stats"].items() if v[1]}
    assert loaded and loaded <= compiled
    assert not any(v[2] for v in warm["stats"].values())
