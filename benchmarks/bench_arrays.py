"""Peak memory of a metric on arrays of other libraries against numpy input.

Run: ``python benchmarks/bench_arrays.py`` (needs torch, jax and array-api-strict,
the test extra's pins); ``--n`` rows (default 1e7), ``--runs`` fresh processes
per case (default 3), ``--metric`` (default ``ece``).

Each case runs in a fresh subprocess: it makes ``p`` (float64, or float32) and
``y`` (int64, or JAX's int32) of ``--n`` rows in its library, calls the metric
once on 1,000 rows (numba's compile and cache load are not counted), then resets
the process's peak resident set (``/proc/self/clear_refs``, value 5) and calls the
metric on all rows. Two measures:

* the extra peak resident memory of the call: ``VmHWM`` after it minus ``VmRSS``
  before it (``/proc/self/status``); it counts every allocation, numpy's, torch's
  and XLA's alike;
* the peak of ``tracemalloc`` during the call (numpy's allocations are traced):
  a copy of the input made by numpy would show here.

The ratio compared with the target (``benchmarks/README.md``: within 10% of
numpy input) is the call's peak memory for its data, the input (``p`` and ``y``)
plus the extra, over the same for numpy arrays of the same dtypes (the baseline's
smallest extra over its runs). A copy of a float64 ``p`` would add ``8 n`` bytes
(80 MB at n = 1e7): a ratio of 1.5 with int64 labels.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: case -> (the library's code that makes p and y of n rows, the baseline case,
#: environment variables of the child, the bytes of p and y per row)
CASES = {
    "numpy float64": ("""
import numpy as np
gen = np.random.default_rng(0)
p = gen.random(n)
y = (gen.random(n) < p).astype(np.int64)
""", None, {}, 16),
    "torch float64": ("""
import torch
g = torch.Generator().manual_seed(0)
p = torch.rand(n, generator=g, dtype=torch.float64)
y = (torch.rand(n, generator=g, dtype=torch.float64) < p).to(torch.int64)
""", "numpy float64", {}, 16),
    "torch float64 requires_grad": ("""
import torch
g = torch.Generator().manual_seed(0)
p = torch.rand(n, generator=g, dtype=torch.float64).requires_grad_()
y = (torch.rand(n, generator=g, dtype=torch.float64) < p.detach()).to(torch.int64)
""", "numpy float64", {}, 16),
    "jax float64": ("""
import jax
k1, k2 = jax.random.split(jax.random.key(0))
p = jax.random.uniform(k1, (n,), dtype="float64")
y = (jax.random.uniform(k2, (n,), dtype="float64") < p).astype("int64")
p.block_until_ready(); y.block_until_ready()
""", "numpy float64", {"JAX_ENABLE_X64": "1", "JAX_PLATFORMS": "cpu"}, 16),
    "array-api-strict float64": ("""
import numpy as np, array_api_strict as xs
gen = np.random.default_rng(0)
p = xs.asarray(gen.random(n))
y = xs.asarray((gen.random(n) < np.asarray(p._array)).astype(np.int64))
""", "numpy float64", {}, 16),
    "numpy float32": ("""
import numpy as np
gen = np.random.default_rng(0)
p = gen.random(n, dtype=np.float32)
y = (gen.random(n) < p).astype(np.int32)
""", None, {}, 8),
    "jax float32 (its default)": ("""
import jax
k1, k2 = jax.random.split(jax.random.key(0))
p = jax.random.uniform(k1, (n,))
y = (jax.random.uniform(k2, (n,)) < p).astype("int32")
p.block_until_ready(); y.block_until_ready()
""", "numpy float32", {"JAX_PLATFORMS": "cpu"}, 8),
}

CHILD = """
import gc, json, sys, time, tracemalloc
n, metric = int(float(sys.argv[1])), sys.argv[2]
{make}
import calibr
f = getattr(calibr, metric)
f(p[:1000], y[:1000])  # numba: compiled or loaded from the cache, not counted

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
gc.collect()
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")  # reset the peak resident set (VmHWM) to the current one
before = status("VmRSS")
tracemalloc.start()
t0 = time.perf_counter()
value = f(p, y)
seconds = time.perf_counter() - t0
_, traced = tracemalloc.get_traced_memory()
tracemalloc.stop()
extra = status("VmHWM") - before
print(json.dumps({{"extra": extra, "traced": traced, "seconds": seconds,
                   "value": float(value)}}))
"""


def run_case(case: str, n: float, metric: str) -> dict:
    make, _, env, _ = CASES[case]
    code = CHILD.format(make=make)
    out = subprocess.run([sys.executable, "-c", code, str(n), metric], check=True,
                         capture_output=True, text=True, env={**os.environ, **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e7)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--metric", default="ece")
    args = parser.parse_args()
    results: dict[str, list[dict]] = {case: [] for case in CASES}
    for _ in range(args.runs):  # case after case in each run: the machine's load hits all
        for case in CASES:
            results[case].append(run_case(case, args.n, args.metric))
    mb = 2**20
    print(f"{args.metric}(), n = {args.n:.0e}, {args.runs} fresh processes per case")
    print(f"{'case':30} {'extra peak RSS (MB)':>22} {'tracemalloc peak (MB)':>22} "
          f"{'peak / numpy':>16} {'seconds':>14}")
    for case, runs in results.items():
        extra = [r["extra"] / mb for r in runs]
        traced = [r["traced"] / mb for r in runs]
        secs = [r["seconds"] for r in runs]
        base = CASES[case][1]
        if base is None:
            ratio = "1 (baseline)"
        else:
            data = CASES[case][3] * args.n
            ref = data + min(r["extra"] for r in results[base])
            ratios = [(data + r["extra"]) / ref for r in runs]
            ratio = f"{min(ratios):.3f}-{max(ratios):.3f}"
        print(f"{case:30} {min(extra):10.1f}-{max(extra):<11.1f} "
              f"{min(traced):10.1f}-{max(traced):<11.1f} {ratio:>16} "
              f"{min(secs):6.3f}-{max(secs):<7.3f}")
        assert len({r["value"] for r in runs}) == 1
    values = {case: runs[0]["value"] for case, runs in results.items()}
    print("values:", json.dumps(values))


if __name__ == "__main__":
    main()
