"""Benchmark of the binned metrics: calibr.ece() against numpy.sum and
torchmetrics, on the same data in one run. Prints times and ratios.

Run:  python benchmarks/bench_binned.py [--repeat 7]

The targets are in benchmarks/README.md ("Binned metrics"). Public functions
are timed end to end, validation included. torch and torchmetrics are optional
(pip install torch==2.13.0 torchmetrics==1.9.0).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import calibr


def best_of(f, repeat):
    f()  # warm-up (numba compile / cache load, torch init)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def interleaved(fns, repeat):
    """Median time of each function, the functions run in turn in every round (so
    that a change in the machine's load hits all of them alike)."""
    for f in fns.values():
        f()  # warm-up
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}


_MEM_CHILD = r"""
import json, sys
import numpy as np
import calibr

def hwm_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024

kind = sys.argv[1]
rng = np.random.default_rng(0)
if kind == "binary":
    p = rng.random(10**7); y = (rng.random(p.size) < p).astype(np.int64)
    args = (p, y); kw = {}
else:
    p = rng.dirichlet(np.ones(10), size=10**6); y = rng.integers(1, 11, 10**6)
    args = (p, y); kw = {"type": kind}
calibr.ece(*args, **kw)  # compile / load the cache outside the measurement
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak resident set size to the current one
before = hwm_mb()
calibr.ece(*args, **kw)
print(json.dumps({"input_mb": (p.nbytes + y.nbytes) / 2**20, "extra_peak_mb": hwm_mb() - before}))
"""


def extra_memory(kind):
    out = subprocess.run([sys.executable, "-c", _MEM_CHILD, kind], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)

    try:
        import torch
        from torchmetrics.functional.classification import (
            binary_calibration_error,
            multiclass_calibration_error,
        )
        have_torch = True
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    except ImportError:
        have_torch = False
        print("torch/torchmetrics not installed: their columns are skipped")
    import numba

    print(f"numpy {np.__version__}, numba {numba.__version__} ({numba.get_num_threads()} threads),"
          f" calibr {calibr.__version__}")
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}; medians of {} interleaved rounds\n"
          .format(*os.getloadavg(), args.repeat))

    # ---- binary, n = 1e7, every label dtype against numpy.sum in the same rounds
    n = 10**7
    p = rng.random(n)
    hits = rng.random(n) < p
    labels = {name: hits.astype(name) for name in ("bool", "int8", "int64", "float64")}
    fns = {"sum": lambda: np.sum(p)}
    for name, y in labels.items():
        fns[name] = lambda y=y: calibr.ece(p, y)
    t = interleaved(fns, args.repeat)
    for name in labels:
        print(f"binary n=1e7 y {name:7s} numpy.sum {t['sum'] * 1e3:8.2f} ms | calibr.ece "
              f"{t[name] * 1e3:8.2f} ms | ece/sum = {t[name] / t['sum']:5.2f}  (target <= 4)")
    y = labels["int64"]
    t_ece = t["int64"]
    if have_torch:
        tp, ty = torch.from_numpy(p), torch.from_numpy(y)
        t_tm = best_of(lambda: binary_calibration_error(tp, ty, n_bins=10),
                       max(3, args.repeat // 2))
        print(f"                  torchmetrics binary_calibration_error {t_tm * 1e3:8.2f} ms"
              f" | torchmetrics/calibr = {t_tm / t_ece:6.1f}x  (target >= 10)")

    # ---- multiclass, n = 1e6, K = 10
    n, k = 10**6, 10
    P = rng.dirichlet(np.ones(k), size=n)
    codes = rng.integers(1, k + 1, n)
    fns = {"confidence": lambda: calibr.ece(P, codes, type="confidence"),
           "classwise": lambda: calibr.ece(P, codes, type="classwise")}
    if have_torch:
        tP, tt = torch.from_numpy(P), torch.from_numpy(codes - 1)
        fns["torchmetrics"] = lambda: multiclass_calibration_error(tP, tt, num_classes=k,
                                                                    n_bins=10)
    t = interleaved(fns, args.repeat)
    t_conf, t_cw = t["confidence"], t["classwise"]
    print(f"\nmulticlass n=1e6 K=10  confidence {t_conf * 1e3:8.2f} ms"
          f" | classwise {t_cw * 1e3:8.2f} ms"
          f" | classwise/confidence = {t_cw / t_conf:4.2f}  (target <= 3)")
    if have_torch:
        t_tmc = t["torchmetrics"]
        print(f"                  torchmetrics multiclass_calibration_error {t_tmc * 1e3:8.2f} ms"
              f" | torchmetrics/calibr(confidence) = {t_tmc / t_conf:5.1f}x  (target >= 3)")

    # ---- memory
    print("\nload average (1, 5, 15 min) after the timings: {:.2f} {:.2f} {:.2f}\n".format(
        *os.getloadavg()))
    for kind in ("binary", "confidence", "classwise"):
        m = extra_memory(kind)
        print(f"extra peak memory, {kind:10s}: {m['extra_peak_mb']:7.1f} MB for "
              f"{m['input_mb']:.0f} MB of input ({m['extra_peak_mb'] / m['input_mb']:.2f}x)")


if __name__ == "__main__":
    main()
