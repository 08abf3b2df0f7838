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
          f" calibr {calibr.__version__}\n")

    # ---- binary, n = 1e7
    n = 10**7
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    t_sum = best_of(lambda: np.sum(p), args.repeat)
    t_ece = best_of(lambda: calibr.ece(p, y), args.repeat)
    print(f"binary n=1e7      numpy.sum {t_sum * 1e3:8.2f} ms | calibr.ece {t_ece * 1e3:8.2f} ms"
          f" | ece/sum = {t_ece / t_sum:5.2f}  (target <= 5)")
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
    t_conf = best_of(lambda: calibr.ece(P, codes, type="confidence"), args.repeat)
    t_cw = best_of(lambda: calibr.ece(P, codes, type="classwise"), args.repeat)
    print(f"\nmulticlass n=1e6 K=10  confidence {t_conf * 1e3:8.2f} ms"
          f" | classwise {t_cw * 1e3:8.2f} ms"
          f" | classwise/confidence = {t_cw / t_conf:4.2f}  (target <= 3)")
    if have_torch:
        tP, tt = torch.from_numpy(P), torch.from_numpy(codes - 1)
        t_tmc = best_of(lambda: multiclass_calibration_error(tP, tt, num_classes=k, n_bins=10),
                        max(3, args.repeat // 2))
        print(f"                  torchmetrics multiclass_calibration_error {t_tmc * 1e3:8.2f} ms"
              f" | torchmetrics/calibr(confidence) = {t_tmc / t_conf:5.1f}x  (target >= 2)")

    # ---- memory
    print()
    for kind in ("binary", "confidence", "classwise"):
        m = extra_memory(kind)
        print(f"extra peak memory, {kind:10s}: {m['extra_peak_mb']:7.1f} MB for "
              f"{m['input_mb']:.0f} MB of input ({m['extra_peak_mb'] / m['input_mb']:.2f}x)")


if __name__ == "__main__":
    main()
