"""Every compiled path of calibr's public API, as named calls (for
``test_cache_processes.py``).

Run as a script, ``python compiled_paths.py NAME [NAME ...]`` prints one JSON
object: each name mapped to the ``repr`` of what its call returned, or to
``"raise <ExceptionType>: <message>"``. Run in the test process,
:func:`run` gives the same mapping. Values are compared as ``repr`` strings,
so "equal" means bit-identical floats.

Paths are plain functions of no arguments; each builds its own seeded input, so
that any subset runs in any order in any process.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import numpy as np
import pandas as pd

import calibr
from calibr import torchmetrics as ctm
from calibr._kernels import scalar_median as smed
from calibr._kernels import vexp

PATHS: dict[str, Callable[[], object]] = {}


def path(func: Callable[[], object]) -> Callable[[], object]:
    PATHS[func.__name__] = func
    return func


def _binary(n: int = 200, seed: int = 1, dtype=np.int64):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(dtype)
    return p, y


def _multi(n: int = 150, k: int = 4, seed: int = 2):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), n)
    u = rng.random((n, 1))
    y = np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), k - 1) + 1  # R codes 1..K
    return p, y


def _frame(value: pd.DataFrame) -> str:
    return repr(value.to_dict("list"))


# --------------------------------------------------------------------------
# binned metrics: every label dtype of the binary kernel, both multiclass forms,
# the threaded path of large inputs


@path
def ece_binary_int64():
    return calibr.ece(*_binary())


@path
def ece_binary_bool():
    return calibr.ece(*_binary(dtype=bool), bins=7)


@path
def ece_binary_float64():
    return calibr.mce(*_binary(dtype=np.float64), bins=5)


@path
def ece_binary_uint8():
    return calibr.ece(*_binary(dtype=np.uint8), bins=3)


@path
def ece_binary_int8():
    return calibr.mce(*_binary(dtype=np.int8), bins=12)


@path
def ece_classwise():
    return calibr.ece(*_multi(), bins=6)


@path
def mce_confidence():
    return calibr.mce(*_multi(), bins=4, type="confidence")


@path
def ece_binary_threaded():
    return calibr.ece(*_binary(n=(1 << 20) + 17, seed=3))


@path
def ece_multiclass_threaded():
    p, y = _multi(n=1 << 18, k=3, seed=4)
    return (calibr.ece(p, y), calibr.mce(p, y, type="confidence"))


@path
def calibration_table_binary():
    return _frame(calibr.calibration_table(*_binary(), bins=5))


@path
def calibration_table_classwise():
    return _frame(calibr.calibration_table(*_multi(), bins=3))


@path
def summarise_grouped():
    p, y = _binary(n=300)
    df = pd.DataFrame({"g": np.repeat(["a", "b", "c"], 100), "p": p, "y": y})
    return _frame(calibr.summarise(df.groupby("g"), "p", "y", metrics=["ece", "mce", "skce"]))


# --------------------------------------------------------------------------
# skce / mmce: every form, estimator and bandwidth kind


def _skce_paths():
    for form in ("binary", "canonical", "confidence", "classwise"):
        for estimator in ("uq", "ul", "biased"):
            for bw in ("fixed", "median"):
                name = f"skce_{form}_{estimator}_{bw}"

                def call(form=form, estimator=estimator, bw=bw):
                    p, y = _binary(n=101) if form == "binary" else _multi(n=101)
                    h = 0.3 if bw == "fixed" else "median"
                    kind = "canonical" if form == "binary" else form
                    return calibr.skce(p, y, estimator=estimator, bandwidth=h, type=kind)

                call.__name__ = name
                path(call)


_skce_paths()


@path
def mmce_fixed():
    return calibr.mmce(*_binary(), bandwidth=0.1)


@path
def mmce_median_multiclass():
    return calibr.mmce(*_multi(), bandwidth="median")


@path
def skce_median_large():
    # the scalar median's selection beyond the first (histogram) round
    return calibr.skce(*_binary(n=20_000, seed=5), bandwidth="median")


@path
def skce_median_sampled():
    # the sampled pivots of the scalar median (no histogram round)
    saved = smed.SELECT_HIST_BINS
    smed.SELECT_HIST_BINS = 0
    try:
        return calibr.skce(*_binary(n=5_000, seed=6), bandwidth="median")
    finally:
        smed.SELECT_HIST_BINS = saved


@path
def skce_median_next_above():
    # a median of an even number of distances whose middle value is a pivot
    return (smed.scalar_median(np.array([0.0, 0.25, 0.5, 1.0])),
            smed._next_above(np.array([0.0, 0.5, 1.0, np.inf]), 3, 0.5, 2))


@path
def skce_canonical_large():
    p, y = _multi(n=700, k=3, seed=7)
    return (calibr.skce(p, y), calibr.skce(p, y, bandwidth="median"))


@path
def vexp_array():
    return repr(vexp.vexp_array(np.linspace(-800.0, 0.0, 33)).tolist())


@path
def median_bandwidth_every_form():
    p, y = _binary(n=300, seed=17)
    pm, ym = _multi(n=200, k=3, seed=18)
    return (calibr.median_bandwidth(p), calibr.median_bandwidth(p, y, na_rm=True),
            calibr.median_bandwidth(pm), calibr.median_bandwidth(pm, ym, "confidence"),
            calibr.median_bandwidth(pm, type="classwise").tolist())


# --------------------------------------------------------------------------
# failing inputs: the error paths of the kernels and the scans


@path
def fail_median_all_equal():
    return calibr.skce(np.full(5, 0.3), [0, 1, 0, 1, 1], bandwidth="median")


@path
def fail_canonical_median_all_equal():
    p = np.tile([0.2, 0.3, 0.5], (4, 1))
    return calibr.skce(p, [1, 2, 3, 1], bandwidth="median")


@path
def fail_classwise_median_constant_column():
    p = np.array([[0.5, 0.5, 0.0], [0.3, 0.7, 0.0], [0.6, 0.4, 0.0]])
    return calibr.skce(p, [1, 2, 1], bandwidth="median", type="classwise")


@path
def fail_median_bandwidth_constant_column():
    p = np.array([[0.5, 0.5, 0.0], [0.3, 0.7, 0.0], [0.6, 0.4, 0.0]])
    return calibr.median_bandwidth(p, type="classwise")


@path
def fail_p_out_of_range():
    return calibr.ece([0.2, 1.5, 0.3], [0, 1, 1])


@path
def fail_y_not_binary():
    return calibr.ece([0.2, 0.5, 0.3], [0, 2, 1])


@path
def fail_row_sums():
    return calibr.ece([[0.5, 0.4], [0.3, 0.7]], [1, 2])


@path
def fail_p_out_of_range_threaded():
    p, y = _binary(n=(1 << 20) + 3, seed=8)
    p[-1] = 2.0
    return calibr.ece(p, y)


# --------------------------------------------------------------------------
# calibr.torchmetrics


@path
def tm_binary_float32():
    p, y = _binary(n=500, seed=9)
    return repr(ctm.binary_calibration_error(p.astype(np.float32), y, n_bins=10))


@path
def tm_binary_float64_l2():
    p, y = _binary(n=500, seed=10)
    return repr(ctm.binary_calibration_error(p, y, norm="l2", ignore_index=-1))


@path
def tm_binary_logits():
    rng = np.random.default_rng(11)
    x = rng.normal(size=300)
    y = rng.integers(0, 2, 300)
    return (repr(ctm.binary_calibration_error(x.astype(np.float32), y)),
            repr(ctm.binary_calibration_error(x, y, norm="max")))


@path
def tm_binary_unchecked():
    p, y = _binary(n=100, seed=12)
    return repr(ctm.binary_calibration_error(p, y, validate_args=False))


@path
def tm_multiclass():
    p, y = _multi(n=400, k=5, seed=13)
    return (repr(ctm.multiclass_calibration_error(p, y - 1, num_classes=5)),
            repr(ctm.multiclass_calibration_error(p.astype(np.float32), y - 1, 5, norm="l2")))


@path
def tm_multiclass_logits():
    rng = np.random.default_rng(14)
    x = rng.normal(size=(200, 4))
    y = rng.integers(0, 4, 200)
    return (repr(ctm.multiclass_calibration_error(x.astype(np.float32), y, 4)),
            repr(ctm.multiclass_calibration_error(x, y, 4, ignore_index=2, validate_args=False)))


@path
def tm_streaming():
    p, y = _binary(n=300, seed=15)
    a = ctm.BinaryCalibrationError(n_bins=8)
    a.update(p[:100], y[:100])
    b = ctm.BinaryCalibrationError(n_bins=8)
    b.update(p[100:], y[100:])
    a.merge(b)
    pm, ym = _multi(n=300, k=3, seed=16)
    m = ctm.MulticlassCalibrationError(3, n_bins=8)
    m.update(pm, ym - 1)
    return (repr(a.compute()), repr(m.compute()))


@path
def tm_fail_target():
    return ctm.binary_calibration_error([0.2, 0.4], [0, 3])


@path
def tm_fail_nan():
    return ctm.multiclass_calibration_error(np.array([[np.nan, 0.5], [0.5, 0.5]]), [0, 1], 2)


def _call(func: Callable[[], object]) -> str:
    try:
        value = func()
    except Exception as err:  # noqa: BLE001 - the outcome itself is the datum
        return f"raise {type(err).__name__}: {err}"
    return repr(value)


def run(names: list[str]) -> dict[str, str]:
    """The outcome of each named path, in the given order, in this process."""
    return {name: _call(PATHS[name]) for name in names}


def kernel_stats() -> dict[str, dict[str, int]]:
    """For every compiled function of calibr (``calibr._kernels.*``, except those
    inlined into their callers): how many signatures it has in this process, and
    how many of them numba loaded from its cache (hits) or compiled (misses)."""
    from numba.core.registry import CPUDispatcher

    out = {}
    for modname, module in sorted(sys.modules.items()):
        if not modname.startswith("calibr._kernels") or module is None:
            continue
        for attr, obj in vars(module).items():
            if not isinstance(obj, CPUDispatcher) or obj.__module__ != modname:
                continue
            if obj.targetoptions.get("inline", "never") != "never":
                continue
            stats = obj.stats
            out[f"{modname}.{attr}"] = {
                "signatures": len(obj.signatures),
                "hits": int(sum(stats.cache_hits.values())),
                "misses": int(sum(stats.cache_misses.values())),
            }
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--stats":
        names = list(PATHS) if args[1:] == ["all"] else args[1:]
        json.dump({"values": run(names), "stats": kernel_stats()}, sys.stdout)
    else:
        json.dump(run(args), sys.stdout)
