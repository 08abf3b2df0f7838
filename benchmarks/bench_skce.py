"""Speed of calibr.skce() / calibr.mmce() against numpy.sort, the R reference
(through rpy2) and naive dense numpy implementations, on the same data in one run.

Usage::

    python benchmarks/bench_skce.py            # everything (the dense baseline at
                                               # n = 20,000 needs ~10 GB and ~1 min)
    python benchmarks/bench_skce.py --quick    # skip n = 20,000 dense and n = 100,000
                                               # canonical, fewer runs at n = 1e6
    python benchmarks/bench_skce.py --compile  # also the first-call compile time with
                                               # an empty numba cache

The targets are in benchmarks/README.md ("Kernel metrics"), printed with each ratio.

Timings are medians of repeated runs, interleaved between the contenders; on a
shared machine they are noisy, so run it a few times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# The environment before embedded R (rpy2) changes it: R puts its own
# LD_LIBRARY_PATH in place, with which a child Python may load another libpython.
CLEAN_ENV = dict(os.environ)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from calibr._kernels._threads import num_threads  # noqa: E402
from calibr._kernels.scalar_sums import scalar_pair_sum  # noqa: E402
from calibr._metrics.kernel import median_bandwidth, mmce, skce  # noqa: E402


def median_times(fns: dict, repeat: int, cpu: dict | None = None) -> dict:
    """Median wall time of each callable over ``repeat`` consecutive calls after a
    warm-up call (steady state: compiled, caches warm); the contenders take turns
    in three rounds so that a slow phase of a shared machine hits all of them.
    With ``cpu`` (a dict), also the median process CPU time of each, into it."""
    times = {name: [] for name in fns}
    cpus = {name: [] for name in fns}
    rounds = 3
    for _ in range(rounds):
        for name, f in fns.items():
            f()
            for _ in range(max(1, repeat // rounds)):
                c0 = time.process_time()
                t0 = time.perf_counter()
                f()
                times[name].append(time.perf_counter() - t0)
                cpus[name].append(time.process_time() - c0)
    if cpu is not None:
        cpu.update({name: float(np.median(t)) for name, t in cpus.items()})
    return {name: float(np.median(t)) for name, t in times.items()}


def dense_scalar_uq(p: np.ndarray, y: np.ndarray, h: float) -> float:
    """Naive dense numpy: the n x n kernel and residual matrices."""
    e = y - p
    H = np.exp(-np.abs(p[:, None] - p[None, :]) / h) * np.outer(e, e)
    n = p.shape[0]
    return float((H.sum() - np.trace(H)) / (n * (n - 1)))


def dense_canonical_uq(P: np.ndarray, codes: np.ndarray, h: float) -> float:
    """Naive dense numpy for the canonical form, with in-place operations so that
    it fits in memory at n = 20,000 (three n x n float64 matrices, ~9.6 GB)."""
    n, k = P.shape
    D = np.zeros((n, n))
    for c in range(k):
        t = np.subtract.outer(P[:, c], P[:, c])
        np.square(t, out=t)
        D += t
        del t
    np.sqrt(D, out=D)
    D /= -h
    np.exp(D, out=D)
    E = np.eye(k)[codes] - P
    G = E @ E.T
    G *= D
    del D
    return float((G.sum() - np.trace(G)) / (n * (n - 1)))


def fmt(t: float) -> str:
    return f"{t * 1e3:10.2f} ms" if t < 10 else f"{t:10.2f} s "


def check(label: str, ok: bool) -> str:
    return f"{label}: {'met' if ok else 'NOT MET'}"


def bench_binary(repeat: int) -> None:
    n = 10**6
    rng = np.random.default_rng(1)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    hits = y.astype(np.uint8)
    t = median_times(
        {
            "numpy.sort(p)": lambda: np.sort(p),
            'skce(p, y, "uq")': lambda: skce(p, y),
            "kernel only (uq)": lambda: scalar_pair_sum(p, hits, 0.2),
            'skce(p, y, bandwidth="median")': lambda: skce(p, y, bandwidth="median"),
            "kernel only (median)": lambda: scalar_pair_sum(p, hits, "median"),
            "mmce(p, y)": lambda: mmce(p, y),
        },
        repeat,
    )
    base = t["numpy.sort(p)"]
    print(f"\n== binary, n = {n:,} (median of {repeat}) ==")
    for name, v in t.items():
        print(f"  {name:34s} {fmt(v)}   {v / base:6.2f} x numpy.sort")
    print("  " + check("uq <= 5x numpy.sort", t['skce(p, y, "uq")'] <= 5 * base))
    print(
        "  " + check("median <= 10x numpy.sort", t['skce(p, y, bandwidth="median")'] <= 10 * base)
    )
    print(
        "  (skce() includes the input checks of calibr._input.prepare(); the\n"
        "   'kernel only' rows are the SKCE computation itself on checked arrays)"
    )


def bench_median_every_n(repeat: int, quick: bool) -> None:
    """skce(bandwidth="median") against skce() with a fixed bandwidth (both with the
    same input checks) and numpy.sort(p), binary, at every n of the target."""
    print("\n== binary, bandwidth=\"median\" at every n (median of runs; CPU time in "
          "brackets) ==")
    print(f"  {'n':>9} {'sort(p)':>10} {'fixed h':>10} {'median':>10}   "
          "median/fixed  median/sort")
    for n in (100, 300, 1_000, 10_000, 100_000, 1_000_000):
        rng = np.random.default_rng(7)
        p = rng.random(n)
        y = (rng.random(n) < p).astype(np.int64)
        reps = repeat * 10 if n <= 10_000 else (repeat if n <= 100_000 else max(3, repeat // 3))
        if quick and n == 1_000_000:
            reps = 3
        cpu: dict = {}
        t = median_times(
            {
                "sort": lambda p=p: np.sort(p),
                "fixed": lambda p=p, y=y: skce(p, y),
                "median": lambda p=p, y=y: skce(p, y, bandwidth="median"),
            },
            reps,
            cpu,
        )
        r_fixed = t["median"] / t["fixed"]
        r_sort = t["median"] / t["sort"]
        line = (f"  {n:>9,} {fmt(t['sort'])} {fmt(t['fixed'])} {fmt(t['median'])}   "
                f"{r_fixed:6.2f} ({cpu['median'] / cpu['fixed']:5.2f})  "
                f"{r_sort:6.1f} ({cpu['median'] / max(cpu['sort'], 1e-9):5.1f})   ")
        checks = [check("<= 4x fixed", r_fixed <= 4)]
        if n >= 100_000:
            checks.append(check("<= 10x sort", r_sort <= 10))
        print(line + "; ".join(checks))
    print("  (the targets are on wall time; CPU time is process time, which a loaded\n"
          "   machine inflates less; time.process_time() ticks coarsely at small n)")


def bench_classwise_median() -> None:
    """Classwise median bandwidth with many columns: one compiled loop over them."""
    n, K = 1_000, 1_000
    rng = np.random.default_rng(8)
    P = rng.dirichlet(np.ones(K), n)
    lab = rng.integers(1, K + 1, n)
    cpu: dict = {}
    t = median_times(
        {
            'skce(P, y, "uq", "median", "classwise")':
                lambda: skce(P, lab, bandwidth="median", type="classwise"),
            'median_bandwidth(P, type="classwise")':
                lambda: median_bandwidth(P, type="classwise"),
            'skce(P, y, type="classwise") (fixed h)': lambda: skce(P, lab, type="classwise"),
        },
        3,
        cpu,
    )
    print(f"\n== classwise median, K = {K:,}, n = {n:,} (median of 3; CPU time in brackets) ==")
    for name, v in t.items():
        print(f"  {name:42s} {fmt(v)}  ({fmt(cpu[name]).strip()})")
    print("  " + check("<= 1 s", t['skce(P, y, "uq", "median", "classwise")'] <= 1.0))


def bench_n4000(repeat: int) -> None:
    n = 4000
    rng = np.random.default_rng(2)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    fns = {
        "calibr skce(p, y)": lambda: skce(p, y),
        "naive dense numpy": lambda: dense_scalar_uq(p, y.astype(float), 0.2),
    }
    try:
        import rref

        r = rref.load()
        fns["R reference (rpy2)"] = lambda: r.skce(p, y)
    except Exception as exc:  # noqa: BLE001
        print(f"  (R reference not available: {exc})")
    t = median_times(fns, repeat)
    print(f"\n== binary uq, n = {n:,} (median of {repeat}) ==")
    ours = t["calibr skce(p, y)"]
    for name, v in t.items():
        print(f"  {name:34s} {fmt(v)}   calibr is {v / ours:9.0f} x faster")
    for name in ("naive dense numpy", "R reference (rpy2)"):
        if name in t:
            print("  " + check(f">= 1000x faster than {name}", t[name] >= 1000 * ours))
    values = {"calibr": skce(p, y), "dense": dense_scalar_uq(p, y.astype(float), 0.2)}
    if "R reference (rpy2)" in fns:
        values["R"] = fns["R reference (rpy2)"]()
    print("  values: " + ", ".join(f"{k} {v:.15g}" for k, v in values.items()))

    # canonical at the same n, for information
    K = 10
    P = rng.dirichlet(np.ones(K), n)
    lab = rng.integers(1, K + 1, n)
    fns = {
        "calibr canonical": lambda: skce(P, lab),
        "naive dense numpy canonical": lambda: dense_canonical_uq(P, lab - 1, 0.2),
    }
    if "R reference (rpy2)" in t:
        fns["R reference canonical"] = lambda: r.skce(P, lab)
    t = median_times(fns, max(3, repeat // 3))
    print(f"  -- canonical, K = {K}, n = {n:,}")
    ours = t["calibr canonical"]
    for name, v in t.items():
        print(f"  {name:34s} {fmt(v)}   calibr is {v / ours:9.1f} x faster")


_MEMORY_CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, {root!r})
from calibr._kernels import canonical as kern

def rss_kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1])

n, K, h = {n}, {k}, {h!r}
rng = np.random.default_rng(3)
P = rng.dirichlet(np.ones(K), n)
codes = rng.integers(0, K, n)
kern.canonical_pair_sum(P[:300], codes[:300], 0.2)   # compile / load the cache
kern.canonical_pair_sum(P[:300], codes[:300], "median")
before = rss_kb("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:          # reset the peak RSS
    f.write("5")
t0 = time.perf_counter()
kern.canonical_pair_sum(P, codes, h)
dt = time.perf_counter() - t0
peak = rss_kb("VmHWM:")
print(json.dumps({{"seconds": dt, "extra_mb": (peak - before) / 1024}}))
"""


def canonical_child(n: int, k: int, h) -> dict:
    code = _MEMORY_CHILD.format(root=str(ROOT), n=n, k=k, h=h)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=CLEAN_ENV
    )
    if out.returncode != 0:
        raise RuntimeError(f"measuring process failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_canonical(quick: bool) -> None:
    n, K = 20_000, 10
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(K), n)
    lab = rng.integers(1, K + 1, n)
    print(f"\n== canonical, n = {n:,}, K = {K} ==")
    t = median_times({"calibr": lambda: skce(P, lab)}, 3)["calibr"]
    print(f"  calibr skce(P, y)                  {fmt(t)}")
    if not quick:
        t0 = time.perf_counter()
        dense = dense_canonical_uq(P, lab - 1, 0.2)
        td = time.perf_counter() - t0
        print(f"  naive dense numpy (1 run)          {fmt(td)}   calibr is {td / t:6.1f} x faster")
        print("  " + check(">= 10x faster than naive dense numpy", td >= 10 * t))
        print(f"  values: calibr {skce(P, lab):.15g}, dense {dense:.15g}")
    for h in (0.2, "median"):
        m = canonical_child(n, K, h)
        print(
            f"  peak extra memory, bandwidth={h!r}: {m['extra_mb']:.1f} MB "
            f"(kernel {m['seconds']:.2f} s, fresh process)"
        )
        if h == 0.2:
            print("  " + check("peak extra memory < 100 MB", m["extra_mb"] < 100))
    if not quick:
        m = canonical_child(100_000, K, 0.2)
        print(
            f"  n = 100,000, K = {K}: {m['seconds']:.1f} s "
            f"(peak extra memory {m['extra_mb']:.1f} MB)"
        )


_COMPILE_CHILD = r"""
import sys, time
import numpy as np
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import calibr._metrics.kernel as M
t_import = time.perf_counter() - t0
rng = np.random.default_rng(0)
p = rng.random(50); y = (rng.random(50) < p).astype(int)
P = rng.dirichlet(np.ones(3), 50); lab = rng.integers(1, 4, 50)
calls = [
    ("binary uq", lambda: M.skce(p, y)),
    ("binary median", lambda: M.skce(p, y, bandwidth="median")),
    ("binary ul", lambda: M.skce(p, y, "ul")),
    ("canonical", lambda: M.skce(P, lab)),
    ("canonical median", lambda: M.skce(P, lab, bandwidth="median")),
    ("canonical ul", lambda: M.skce(P, lab, "ul")),
    ("confidence / mmce", lambda: M.mmce(P, lab)),
]
print(f"import: {{t_import:.2f}} s")
total = 0.0
for name, f in calls:
    t0 = time.perf_counter(); f(); dt = time.perf_counter() - t0
    total += dt
    print(f"first call, {{name}}: {{dt:.2f}} s")
print(f"total first calls: {{total:.2f}} s")
"""


def bench_compile() -> None:
    print("\n== first-call (numba) compile time ==")
    env = dict(CLEAN_ENV)
    env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="calibr-numba-")
    code = _COMPILE_CHILD.format(root=str(ROOT))
    for label in ("empty numba cache", "the same cache, in a second process"):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        print(f"  -- {label}")
        for line in out.stdout.strip().splitlines():
            print("  " + line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the largest runs")
    ap.add_argument("--compile", action="store_true", help="measure first-call compile time")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    print(f"numba threads: {num_threads()}, numpy {np.__version__}, "
          f"load average {', '.join(f'{v:.2f}' for v in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs")
    if args.compile:
        bench_compile()
    bench_binary(args.repeat)
    bench_median_every_n(args.repeat, args.quick)
    bench_classwise_median()
    bench_n4000(max(5, args.repeat // 2))
    bench_canonical(args.quick)
    print(f"\nload average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
