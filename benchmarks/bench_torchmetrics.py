"""calibr.torchmetrics against torchmetrics 1.9 itself: speed, memory, agreement.

Run: ``python benchmarks/bench_torchmetrics.py`` (needs torch and torchmetrics).

* speed: the same data through both libraries' functions in one run (default
  ``validate_args=True`` on both, torch's default thread count), median of
  ``--repeat`` runs after a warm-up (the two libraries in turn in each round),
  and the ratio torchmetrics / calibr (targets in ``benchmarks/README.md``);
* memory: ``BinaryCalibrationError`` streaming ``--stream-n`` samples in batches
  of ``--stream-batch`` (in a fresh subprocess: tracemalloc peak and the growth of
  the peak RSS over the baseline after imports);
* agreement at large n: the absolute difference from torchmetrics in float32
  and float64 (the tests pin n <= 1e5; this reports beyond).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np


def _interleaved(cal, tm, repeat: int) -> tuple[float, float]:
    """Median times of ``cal`` and ``tm``, run in turn in every round, so that a
    change in the machine's load hits both alike."""
    cal()
    tm()
    t_cal, t_tm = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        cal()
        t1 = time.perf_counter()
        tm()
        t2 = time.perf_counter()
        t_cal.append(t1 - t0)
        t_tm.append(t2 - t1)
    return statistics.median(t_cal), statistics.median(t_tm)


def bench_speed(repeat: int) -> list[dict]:
    import torch
    from torchmetrics.functional.classification import (
        binary_calibration_error as tm_binary,
    )
    from torchmetrics.functional.classification import (
        multiclass_calibration_error as tm_multiclass,
    )

    from calibr.torchmetrics import binary_calibration_error, multiclass_calibration_error

    rng = np.random.default_rng(2026)
    rows = []
    for dtype in (np.float32, np.float64):
        n = 10_000_000
        p = rng.random(n).astype(dtype)
        y = (rng.random(n) < p).astype(np.int64)
        tp, ty = torch.from_numpy(p), torch.from_numpy(y)
        t_cal, t_tm = _interleaved(lambda p=p, y=y: binary_calibration_error(p, y),
                                   lambda tp=tp, ty=ty: tm_binary(tp, ty), repeat)
        diff = abs(float(binary_calibration_error(p, y)) - tm_binary(tp, ty).item())
        rows.append(_row(f"binary n=1e7 {np.dtype(dtype).name}", t_cal, t_tm, diff, ">= 3"))
    n = 10_000_000
    logits = rng.normal(scale=3.0, size=n).astype(np.float32)
    y = (rng.random(n) < 0.5).astype(np.int64)
    tl, ty = torch.from_numpy(logits), torch.from_numpy(y)
    t_cal, t_tm = _interleaved(lambda: binary_calibration_error(logits, y),
                               lambda: tm_binary(tl, ty), repeat)
    diff = abs(float(binary_calibration_error(logits, y)) - tm_binary(tl, ty).item())
    rows.append(_row("binary n=1e7 float32 logits", t_cal, t_tm, diff))
    for dtype in (np.float32, np.float64):
        n, k = 1_000_000, 10
        P = rng.dirichlet(np.full(k, 0.5), n).astype(dtype)
        t = rng.integers(0, k, n)
        tP, tt = torch.from_numpy(P), torch.from_numpy(t)
        t_cal, t_tm = _interleaved(lambda P=P, t=t, k=k: multiclass_calibration_error(P, t, k),
                                   lambda tP=tP, tt=tt, k=k: tm_multiclass(tP, tt, k), repeat)
        diff = abs(float(multiclass_calibration_error(P, t, k)) - tm_multiclass(tP, tt, k).item())
        rows.append(_row(f"multiclass n=1e6 K=10 {np.dtype(dtype).name}", t_cal, t_tm, diff,
                         ">= 3"))
    L = rng.normal(scale=3.0, size=(1_000_000, 10)).astype(np.float32)
    tL = torch.from_numpy(L)
    t_cal, t_tm = _interleaved(lambda: multiclass_calibration_error(L, t, 10),
                               lambda: tm_multiclass(tL, tt, 10), repeat)
    diff = abs(float(multiclass_calibration_error(L, t, 10)) - tm_multiclass(tL, tt, 10).item())
    rows.append(_row("multiclass n=1e6 K=10 float32 logits", t_cal, t_tm, diff))
    return rows


def _row(name: str, t_cal: float, t_tm: float, diff: float, target: str = "") -> dict:
    return {
        "case": name,
        "target": target,
        "calibr_s": t_cal,
        "torchmetrics_s": t_tm,
        "ratio": t_tm / t_cal,
        "abs_diff": diff,
    }


def agreement() -> list[dict]:
    """|calibr - torchmetrics| at growing n, float32 and float64, both tasks, every norm."""
    import torch
    from torchmetrics.functional.classification import (
        binary_calibration_error as tm_binary,
    )
    from torchmetrics.functional.classification import (
        multiclass_calibration_error as tm_multiclass,
    )

    from calibr.torchmetrics import binary_calibration_error, multiclass_calibration_error

    rng = np.random.default_rng(7)
    out = []
    for n in (10**5, 10**6, 10**7):
        for dtype in (np.float32, np.float64):
            p = rng.beta(2, 5, n).astype(dtype)
            y = (rng.random(n) < p).astype(np.int64)
            for norm in ("l1", "l2", "max"):
                a = float(binary_calibration_error(p, y, norm=norm))
                b = tm_binary(torch.from_numpy(p), torch.from_numpy(y), norm=norm).item()
                out.append(
                    {
                        "task": "binary",
                        "n": n,
                        "dtype": np.dtype(dtype).name,
                        "norm": norm,
                        "abs_diff": abs(a - b),
                    }
                )
            if n <= 10**6:
                P = rng.dirichlet(np.full(10, 0.3), n).astype(dtype)
                t = rng.integers(0, 10, n)
                for norm in ("l1", "l2", "max"):
                    a = float(multiclass_calibration_error(P, t, 10, norm=norm))
                    b = tm_multiclass(
                        torch.from_numpy(P), torch.from_numpy(t), 10, norm=norm
                    ).item()
                    out.append(
                        {
                            "task": "multiclass",
                            "n": n,
                            "dtype": np.dtype(dtype).name,
                            "norm": norm,
                            "abs_diff": abs(a - b),
                        }
                    )
    return out


def _batches(total: int, batch: int, dtype, seed: int = 1):
    rng = np.random.default_rng(seed)
    for _ in range(total // batch):
        p = rng.random(batch, dtype=dtype)
        yield p, (rng.random(batch, dtype=dtype) < p).astype(np.int8)


def _vm_hwm_mb() -> float:
    """Peak resident set of this process (VmHWM; unlike ru_maxrss, not inherited on exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stream_child(total: int, batch: int, dtype_name: str, compare: bool) -> dict:
    """Runs in a subprocess: stream through calibr, report memory (and torchmetrics)."""
    import tracemalloc

    from calibr.torchmetrics import BinaryCalibrationError

    dtype = np.dtype(dtype_name).type
    metric = BinaryCalibrationError()
    metric.update(np.array([0.5], dtype=dtype), np.array([1]))  # compile before measuring
    metric.reset()
    rss0 = _vm_hwm_mb()
    tracemalloc.start()
    t0 = time.perf_counter()
    for p, y in _batches(total, batch, dtype):
        metric.update(p, y)
    value = metric.compute()
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = _vm_hwm_mb()
    out = {
        "n": total,
        "batch": batch,
        "dtype": dtype_name,
        "seconds": elapsed,
        "tracemalloc_peak_MB": peak / 2**20,
        "rss_peak_growth_MB": rss1 - rss0,
        "rss_peak_MB": rss1,
        "batch_bytes_MB": batch * (np.dtype(dtype).itemsize + 1) / 2**20,
        "value": float(value),
        "n_samples": metric.n_samples,
    }
    if compare:
        import torch
        from torchmetrics.classification import BinaryCalibrationError as TM

        tm = TM()
        t0 = time.perf_counter()
        for p, y in _batches(total, batch, dtype):
            tm.update(torch.from_numpy(p), torch.from_numpy(y))
        theirs = tm.compute().item()
        out["torchmetrics_seconds"] = time.perf_counter() - t0
        out["torchmetrics_value"] = theirs
        out["abs_diff"] = abs(theirs - float(value))
        out["torchmetrics_rss_peak_MB"] = _vm_hwm_mb()
    return out


def bench_stream(total: int, batch: int, dtype_name: str, compare: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", str(total), str(batch), dtype_name]
    if compare:
        cmd.append("--compare")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stream-n", type=int, default=100_000_000)
    parser.add_argument("--stream-batch", type=int, default=1_000_000)
    parser.add_argument(
        "--compare-stream",
        action="store_true",
        help="also feed torchmetrics' class the same batches (needs ~2 GB)",
    )
    parser.add_argument("--skip-agreement", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("N", "BATCH", "DTYPE"))
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if args.child:
        n, b, d = args.child
        print(json.dumps(stream_child(int(n), int(b), d, args.compare)))
        return

    import numba
    import torch
    import torchmetrics

    print(
        f"torch {torch.__version__} ({torch.get_num_threads()} threads, "
        f"{torch.backends.cpu.get_cpu_capability()}), torchmetrics {torchmetrics.__version__}, "
        f"numpy {np.__version__}, numba {numba.__version__} ({numba.get_num_threads()} "
        "threads for calibr's multiclass rows)"
    )
    print(f"median of {args.repeat} interleaved runs; the machine may be shared, so timings are "
          "noisy")
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}\n".format(*os.getloadavg()))
    print(f"{'case':38s} {'calibr s':>10s} {'torchm. s':>10s} {'ratio':>7s} {'|diff|':>9s} "
          "target (torchmetrics/calibr)")
    for r in bench_speed(args.repeat):
        print(
            f"{r['case']:38s} {r['calibr_s']:10.4f} {r['torchmetrics_s']:10.4f} "
            f"{r['ratio']:6.1f}x {r['abs_diff']:9.2e} {r['target']}"
        )
    print("load average after the timings: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))

    for dtype_name in ("float32", "float64"):
        s = bench_stream(args.stream_n, args.stream_batch, dtype_name, args.compare_stream)
        print(
            f"\nstreaming {s['n']:.0e} binary {dtype_name} samples in batches of "
            f"{s['batch']:.0e}: {s['seconds']:.1f} s (data generation included), "
            f"tracemalloc peak {s['tracemalloc_peak_MB']:.1f} MB, peak RSS growth "
            f"{s['rss_peak_growth_MB']:.1f} MB over the baseline after imports (process peak "
            f"{s['rss_peak_MB']:.0f} MB; one batch of preds+target: "
            f"{s['batch_bytes_MB']:.1f} MB); value {s['value']:.9g}, "
            f"n_samples {s['n_samples']}"
        )
        if "torchmetrics_value" in s:
            print(
                f"  torchmetrics' class on the same batches: {s['torchmetrics_seconds']:.1f} s, "
                f"value {s['torchmetrics_value']:.9g}, |diff| {s['abs_diff']:.2e}, "
                f"process peak RSS {s['torchmetrics_rss_peak_MB']:.0f} MB"
            )

    if not args.skip_agreement:
        print("\nagreement with torchmetrics at larger n (max |diff| over the norms):")
        worst: dict[tuple, float] = {}
        for r in agreement():
            key = (r["task"], r["n"], r["dtype"])
            worst[key] = max(worst.get(key, 0.0), r["abs_diff"])
        for (task, n, dtype), d in sorted(worst.items()):
            print(f"  {task:10s} n={n:.0e} {dtype}: {d:.2e}")


if __name__ == "__main__":
    main()
