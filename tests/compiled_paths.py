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
def ece_top_label():  # the top label with its class (calibr._kernels.top_label)
    p, y = _multi()
    return calibr.ece(p, y, type="top-label")


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


@path
def summarise_polars_lazy_cells():
    """polars' cells summed by calibr's kernel over its streamed batches
    (calibr/_engines/polars.py, ``_cells``: ``key_range`` and ``cell_rows``)."""
    import polars as pl

    # p a multiple of 1/1024: every sum is exact in any order, so the numbers do not
    # depend on how polars cuts the rows into batches (which varies from process to
    # process; docs/engines.md, "Exactness")
    p, y = _binary(n=300)
    p = np.round(p * 1024) / 1024
    lf = pl.LazyFrame({"g": pl.Series(np.repeat([3, -1, 7], 100), dtype=pl.Int32), "p": p,
                       "y": pl.Series(y, dtype=pl.Int8)})
    out = calibr.summarise(lf, "p", "y", by="g", metrics=["ece", "mce"])
    return _frame(out.to_pandas())


@path
def summarise_polars_lazy_sorted():
    """polars' sorted sums (ecce, auroc) of an integer key, its rows sorted by p and
    streamed into calibr's kernel (calibr/_engines/polars.py, ``_sorted_rows``:
    ``group_running`` and ``group_close``), unweighted and weighted."""
    import polars as pl

    # p a multiple of 1/64 and small integer weights: every sum is exact in any
    # order, so the numbers do not depend on how polars orders tied rows
    p, y = _binary(n=300, seed=9)
    p = np.round(p * 64) / 64
    lf = pl.LazyFrame({"g": pl.Series(np.repeat([3, -1, 7], 100), dtype=pl.Int32), "p": p,
                       "y": pl.Series(y, dtype=pl.Int8), "w": np.arange(300) % 4})
    metrics = ["ecce", calibr.metric("ecce", kind="kuiper", scale="sigma"), "auroc"]
    out = [calibr.summarise(lf, "p", "y", by="g", metrics=metrics, weights=w).to_pandas()
           for w in (None, "w")]
    return [_frame(o) for o in out]


@path
def fail_polars_lazy_cells_bad_label():
    """A bad row met by ``cell_rows``: the counting query's message."""
    import polars as pl

    lf = pl.LazyFrame({"g": pl.Series([1, 1, 2], dtype=pl.Int32), "p": [0.2, 0.5, 0.3],
                       "y": pl.Series([0, 2, 1], dtype=pl.Int8)})
    return calibr.summarise(lf, "p", "y", by="g", metrics=["ece"])


# --------------------------------------------------------------------------
# the isotonic fit: decompose() and binning="isotonic"


@path
def decompose_isotonic():
    p, y = _binary(n=300, seed=40)
    d = calibr.decompose(np.round(p, 2), y, "log_loss", weights=np.arange(300) % 4)
    m = calibr.decompose(*_multi(n=120, seed=41))
    return (d.score, d.mcb, d.dsc, d.unc, m.mcb.tolist())


@path
def calibration_table_isotonic():
    return _frame(calibr.calibration_table(*_multi(n=200, seed=42), binning="isotonic"))


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
    # the scalar median's selection with the subsample's first pivots
    return calibr.skce(*_binary(n=20_000, seed=5), bandwidth="median")


@path
def skce_median_sampled():
    # the sampled pivots of the scalar median (no subsample round)
    p = np.sort(_binary(n=5_000, seed=6)[0])
    tune = list(smed.TUNING)
    tune[7] = 1e18  # SUBSAMPLE_MIN
    return smed._median_tuned(p, tuple(tune))


@path
def skce_median_next_above():
    # a median of an even number of distances whose middle value is a pivot
    tiny = (0.0, 1.0, 2.0, 0.0, 4.0, 1.0, 2.0, 1e18, 1.0, 7.0)
    return (smed.scalar_median(np.array([0.0, 0.25, 0.5, 1.0])),
            smed._median_tuned(np.array([0.0, 0.1, 0.5, 0.6, 1.0]), tiny))


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
def scans_of_a_large_input():
    # the input scans run compiled from scans.NUMPY_MAX_N values on
    gen = np.random.default_rng(8)
    p = gen.random(1 << 16)
    return calibr.skce(p, (gen.random(1 << 16) < p).astype(np.int64), bandwidth=0.2)


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



# --------------------------------------------------------------------------
# GROUPED helper: the kernels that compute every group at once
# (calibr._kernels.grouped), behind summarise() and calibration_table() over groups.
# (Placed before the runner below, so that the script mode sees these paths too.)


def _grouped_frame(k: int | None = None, seed: int = 30, sizes=(2, 3, 7, 40, 600)):
    rng = np.random.default_rng(seed)
    g = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))  # interleaved groups
    n = g.shape[0]
    if k is None:
        p = rng.random(n)
        return pd.DataFrame({"g": g, "p": p, "y": (rng.random(n) < p).astype(np.int64)})
    df = pd.DataFrame(rng.dirichlet(np.ones(k), n), columns=[f"p_{c}" for c in range(k)])
    df["y"] = rng.integers(0, k, n)
    df["g"] = g
    return df


@path
def grouped_binned_binary():
    df = _grouped_frame()
    return _frame(calibr.summarise(df.groupby("g"), "p", "y",
                                   metrics=["ece", calibr.metric("mce", bins=3)]))


@path
def grouped_binned_multiclass():
    df = _grouped_frame(k=3, seed=31)
    return _frame(calibr.summarise(df.groupby("g"), y="y", p_prefix="p_", metrics=[
        "ece", calibr.metric("mce", type="confidence", bins=4)]))


@path
def grouped_table():
    df = _grouped_frame(seed=32)
    mc = _grouped_frame(k=3, seed=33)
    return (_frame(calibr.calibration_table("p", "y", bins=4, data=df.groupby("g"))),
            _frame(calibr.calibration_table(None, "y", bins=3, data=mc.groupby("g"),
                                            p_prefix="p_")),
            _frame(calibr.calibration_table(None, "y", type="confidence",
                                            data=mc.groupby("g"), p_prefix="p_")))


@path
def grouped_skce_scalar():
    df = _grouped_frame(seed=34)
    metrics = {f"{e}_{h}": calibr.metric("skce", estimator=e, bandwidth=h)
               for e in ("uq", "ul", "biased") for h in (0.3, "median")}
    metrics["mmce"] = calibr.metric("mmce", bandwidth="median")
    return _frame(calibr.summarise(df.groupby("g"), "p", "y", metrics=metrics))


@path
def grouped_skce_multiclass():
    df = _grouped_frame(k=3, seed=35)
    metrics = {f"{t}_{e}_{h}": calibr.metric("skce", estimator=e, bandwidth=h, type=t)
               for t in ("canonical", "confidence", "classwise")
               for e in ("uq", "ul", "biased") for h in (0.3, "median")}
    return _frame(calibr.summarise(df.groupby("g"), y="y", p_prefix="p_", metrics=metrics))


@path
def grouped_fail_one_row():
    df = _grouped_frame(seed=36, sizes=(3, 1, 4))
    return calibr.summarise(df.groupby("g"), "p", "y", metrics=["ece", "skce"])

# --------------------------------------------------------------------------
# CALIBRATION TESTS helper: calibr.calibration_test and the frequency-weighted
# kernels (calibr._kernels.weighted_sums). (Placed before the runner below, so
# that the script mode sees these paths too.)


def _ctest(*args, **kwargs):
    from calibr._inference.calibration_tests import calibration_test

    res = calibration_test(*args, **kwargs)
    return (res.statistic, res.pvalue, res.estimate)


@path
def ctest_skce_binary():
    return _ctest(*_binary(n=300, seed=40), rng=1, n_resamples=40)


@path
def ctest_skce_scalar_forms():
    p, y = _multi(n=120, seed=41)
    return (_ctest(p, y, type="confidence", bandwidth="median", rng=2, n_resamples=30),
            _ctest(p, y, type="classwise", rng=3, n_resamples=30))


@path
def ctest_skce_canonical():
    return _ctest(*_multi(n=90, seed=42), rng=4, n_resamples=20)


@path
def ctest_other_methods():
    p, y = _binary(n=200, seed=43)
    return (_ctest(p, y, "skce_block"), _ctest(p, y, "consistency", rng=5, n_resamples=20),
            _ctest(p, y, "spiegelhalter"), _ctest(p, y, "hosmer_lemeshow"))


@path
def weighted_sums_direct():
    from calibr._kernels import weighted_sums as ws

    p, y = _binary(n=50, seed=44)
    order, xs, e = ws.sorted_scalars(p, y)
    g = ws.gap_factors(xs, 0.3)
    w = np.arange(50, dtype=np.float64) % 3  # frequency weights, original row order
    return (ws.weighted_pair_sum(e, w, order, g), ws.weighted_row_sums(e, w[order], g).tolist())


@path
def ctest_fail_hosmer_lemeshow_groups():
    return _ctest([0.2, 0.2, 0.7, 0.7], [0, 1, 1, 0], "hosmer_lemeshow")



# --------------------------------------------------------------------------
# BINNING helper: the one-pass checked kernels of ece()/mce() (label dtypes the
# fast path reads as they are, lanes and no lanes, refusals), and the threaded
# multiclass phase of calibr.torchmetrics


@path
def ece_checked_threaded_bool_and_many_bins():
    p, y = _binary(n=(1 << 18) + 5, seed=19, dtype=bool)
    return (calibr.ece(p, y), calibr.mce(p, y, bins=5000))


@path
def ece_multiclass_categorical_and_float_codes():
    p, y = _multi(n=300, k=3, seed=20)
    cat = pd.Categorical.from_codes(y - 1, categories=["a", "b", "c"])
    return (calibr.ece(p, cat, type="confidence"), calibr.mce(p, cat, bins=4),
            calibr.ece(p, y.astype(np.float64)),
            calibr.mce(p, y.astype(np.int8), type="confidence"))


@path
def fail_multiclass_code_in_the_fast_path():
    p, y = _multi(n=50, k=3, seed=21)
    y[7] = 4
    return calibr.ece(p, y, type="confidence")


@path
def tm_multiclass_threaded():
    rng = np.random.default_rng(22)
    n = (1 << 15) + 3
    p = rng.dirichlet(np.ones(4), n)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = rng.integers(0, 4, n)
    return (repr(ctm.multiclass_calibration_error(p, y, 4)),
            repr(ctm.multiclass_calibration_error(p.astype(np.float32), y, 4, norm="max")),
            repr(ctm.multiclass_calibration_error(x, y, 4, ignore_index=3)))


@path
def tm_fail_undefined_softmax():
    x = np.array([[0.5, 2.0], [np.inf, 1.0], [-np.inf, -np.inf]], dtype=np.float32)
    return ctm.multiclass_calibration_error(x, [0, 1, 1], 2)


# --------------------------------------------------------------------------
# BOOTSTRAP: calibr.bootstrap / paired_bootstrap (calibr._kernels.bootstrap):
# binned, scalar and "ul" replicates, and the jackknives of BCa


def _boot(*args, **kwargs):
    res = calibr.bootstrap(*args, **kwargs)
    return (res.estimate, res.confidence_interval, res.bootstrap_distribution.tolist())


@path
def bootstrap_binned_every_form():
    p, y = _binary(n=120, seed=50)
    pm, ym = _multi(n=90, seed=51)
    return (_boot(p, y, "ece", n_resamples=20, rng=1, method="bca"),
            _boot(p, y, "mce", n_resamples=20, rng=2, method="bca", bins=4),
            _boot(pm, ym, "ece", n_resamples=10, rng=3, method="bca", type="confidence"),
            _boot(pm, ym, "mce", n_resamples=10, rng=4, method="bca"))


@path
def bootstrap_kernel_every_form():
    p, y = _binary(n=120, seed=52)
    pm, ym = _multi(n=90, seed=53)
    return (_boot(p, y, "skce", n_resamples=20, rng=1, method="bca"),
            _boot(p, y, "mmce", n_resamples=20, rng=2, method="bca"),
            _boot(p, y, "skce", n_resamples=20, rng=3, estimator="ul"),
            _boot(pm, ym, "skce", n_resamples=10, rng=4, type="classwise"),
            _boot(pm, ym, "skce", n_resamples=10, rng=5, type="confidence", estimator="ul"))


@path
def bootstrap_counts_carried():
    """The kernels' int32 carry of counts past uint8 (reached with the base lowered)."""
    from calibr._inference import bootstrap as bt

    p, y = _binary(n=80, seed=55)
    old = bt.COUNT_BASE
    bt.COUNT_BASE = 2
    try:
        return (_boot(p, y, "ece", n_resamples=4, rng=1), _boot(p, y, "skce", n_resamples=4,
                                                                  rng=2))
    finally:
        bt.COUNT_BASE = old


@path
def paired_bootstrap_binary():
    p, y = _binary(n=150, seed=54)
    res = calibr.paired_bootstrap(p, np.sqrt(p), y, "ece", n_resamples=30, rng=6)
    return (res.estimate, res.pvalue, res.confidence_interval)


# --------------------------------------------------------------------------
# MEDIAN helper: the compiled median of sorted values (callable from other
# kernels), its per-column loop (classwise), its tuned form, the canonical
# median's histogram scaled to the pairs at small n


@path
def median_of_sorted_direct():
    p, _ = _binary(n=5_000, seed=23)
    return (float(smed.median_of_sorted(np.sort(p))),
            float(smed.median_of_sorted(np.array([0.5]))),
            float(smed.median_of_sorted(np.array([0.2, 0.2, 0.2]))))


@path
def median_classwise_many_columns():
    p, y = _multi(n=120, k=40, seed=24)
    return (calibr.median_bandwidth(p, type="classwise").tolist(),
            calibr.skce(p, y, bandwidth="median", type="classwise"))


@path
def median_tuned_tiny_rounds():
    rng = np.random.default_rng(25)
    x = np.sort(np.round(rng.random(60), 1))
    return smed._median_tuned(x, (0.0, 1.0, 2.0, 0.05, 6.0, 0.0, 3.0, 6.0, 0.5, 25.0))


@path
def median_canonical_small_n():
    p, y = _multi(n=12, k=3, seed=26)
    return (calibr.median_bandwidth(p), calibr.skce(p, y, bandwidth="median"))


# --------------------------------------------------------------------------
# frequency weights (calibr._kernels.weighted_metrics over the compiled
# recurrence of calibr._kernels.weighted_sums, float64 weights; the top label)


def _counts(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).choice([0, 1, 2, 7], n).astype(np.int64)


@path
def weighted_binned_every_form():
    p, y = _binary()
    pm, ym = _multi()
    return (calibr.ece(p, y, weights=_counts(len(y), 40)),
            calibr.mce(pm, ym, type="confidence", weights=_counts(len(ym), 41) * 0.5),
            calibr.ece(pm, ym, weights=_counts(len(ym), 42)))


@path
def weighted_skce_every_form():
    p, y = _binary()
    pm, ym = _multi()
    w, wm = _counts(len(y), 43), _counts(len(ym), 44)
    out = [calibr.skce(p, y, est, weights=w) for est in ("uq", "biased")]
    for form in ("canonical", "confidence", "classwise"):
        out += [calibr.skce(pm, ym, est, type=form, weights=wm) for est in ("uq", "biased")]
    return out


@path
def weighted_mmce_real():
    pm, ym = _multi()
    w = np.random.default_rng(45).exponential(1.0, len(ym))
    return (calibr.mmce(*_binary(), weights=np.linspace(0.0, 3.0, 200)),
            calibr.mmce(pm, ym, weights=w))


@path
def fail_weighted_uq_fraction():
    return calibr.skce(*_binary(), weights=np.full(200, 0.5))



# --------------------------------------------------------------------------
# SMOOTH ECE: the linear binning of calibr._kernels.smooth (uint8 hits from
# every form: binary, top label, classwise columns), fixed and automatic
# bandwidths, and the curve


@path
def smece_every_form():
    p, y = _binary(n=300, seed=60)
    pm, ym = _multi(n=200, k=3, seed=61)
    curve = calibr.smece_curve(p, y.astype(bool), bandwidth=0.1, points=7)
    return (calibr.smece(p, y), calibr.smece(p, y, bandwidth=0.05),
            calibr.smece(pm, ym), calibr.smece(pm, ym, type="classwise", bandwidth=0.2),
            curve.y.tolist(), curve.density.tolist(), curve.smece)


# --------------------------------------------------------------------------
# VAL_PROB: rms's Fortran arithmetic (calibr._kernels.rms) of method="rms"


@path
def val_prob_rms():
    p, y = _binary(n=300, seed=62)
    return calibr.val_prob(np.clip(p, 0.01, 0.99), y).tolist()



@path
def ecce_keys_sorted_and_tails():
    # every kernel of calibr/_kernels/cumulative.py: the packed keys of (p, y)
    # and their pass, the weighted pass, both tails
    p, y = _binary(n=300, seed=11)
    return (calibr.ecce(np.round(p, 2), y), calibr.ecce(p, y, "kuiper", weights=np.ones(300)),
            calibr.calibration_test(p, y, "ks").pvalue,
            calibr.calibration_test(p, y, "kuiper").pvalue)


@path
def sweep_every_way_and_bin_sums():
    # calibr/_kernels/sweep.py (the keys unpacked, every bin and the descents,
    # weighted equal-mass breaks) and calibr/_kernels/bin_sums.py (both closures,
    # with and without weights)
    from calibr._binning.sweep import sweep_bins
    from calibr._kernels import sweep as sk

    p, y = _binary(n=300, seed=12)
    w = np.random.default_rng(12).integers(1, 3, 300).astype(np.float64)
    ys = (p > 0.5).astype(np.int64)
    ys[np.argmin(np.abs(p - 0.5))] ^= 1
    return ([sweep_bins(p, ys, b, r, None, m) for b in ("equal-width", "equal-mass")
             for r in (True, False) for m in (sk.AUTO, sk.EVERY_BIN, sk.DESCENTS)],
            sweep_bins(p, ys, "equal-mass", True, w, sk.DESCENTS),
            calibr.ece(p, y, bins="sweep", binning="equal-mass", right=False),
            calibr.mce(p, y, bins=7, binning="equal-mass", weights=w))


@path
def sweep_caltrain_every_way():
    # calibr/_kernels/sweep.py with caltrain's breaks (_floor_break, _rank_start),
    # each way of checking a b
    from calibr._binning.sweep import sweep_bins
    from calibr._kernels import sweep as sk

    p, _ = _binary(n=300, seed=14)
    ys = (p > 0.5).astype(np.int64)
    ys[np.argmin(np.abs(p - 0.5))] ^= 1
    return ([sweep_bins(p, ys, b, False, None, m, caltrain=True)
             for b in ("equal-width", "equal-mass")
             for m in (sk.AUTO, sk.EVERY_BIN, sk.DESCENTS)],
            calibr.ece(p, ys, bins="sweep-caltrain", binning="equal-mass", right=False))


@path
def scores_every_kernel():
    # calibr/_kernels/scores.py: the checked Brier and picked-probability passes of a
    # vector and a matrix, the AUROC's packed keys, unweighted and weighted
    p, y = _binary(n=300, seed=15)
    pm, ym = _multi(n=120, k=3, seed=16)
    w = np.arange(1.0, 301.0) % 4
    return (calibr.brier(p, y), calibr.brier(pm, ym), calibr.log_loss(p, y),
            calibr.log_loss(p, y, eps=0.01), calibr.log_loss(pm, ym),
            calibr.auroc(p, y), calibr.auroc(p, y, weights=w), calibr.auroc(pm, ym))


@path
def selective_areas():
    # calibr/_kernels/selective.py: a vector's keys, a matrix's (cumulative.fill_keys),
    # the areas' pass over more points than one part of its sums, and tied points
    p, y = _binary(n=2500, seed=17)
    pm, ym = _multi(n=300, k=3, seed=18)
    return (calibr.aurc(p, y), calibr.augrc(p, y, rule="step"), calibr.e_aurc(pm, ym),
            calibr.aurc(np.round(p, 2), y, rule="step"), calibr.augrc(pm, ym))


@path
def summarise_scores_grouped():
    # the scores' grouped kernels of calibr/_kernels/grouped.py: a vector's and a
    # matrix's Brier sums, the log loss's sums per group, the AUROC's sort per group
    p, y = _binary(n=300, seed=19)
    df = pd.DataFrame({"g": np.repeat(["a", "b", "c"], 100), "p": p, "y": y})
    pm, ym = _multi(n=120, k=3, seed=20)
    dm = pd.DataFrame(pm, columns=["p_1", "p_2", "p_3"]).assign(g=np.arange(120) % 2, y=ym)
    return (_frame(calibr.summarise(df.groupby("g"), "p", "y",
                                    metrics=["brier", "log_loss", "auroc"])),
            _frame(calibr.summarise(dm.groupby("g"), y="y", p_prefix="p_", classes=[1, 2, 3],
                                    metrics=["brier", "log_loss", "auroc"])))


@path
def bootstrap_ecce_sorted_once():
    # the ECCE replicates of calibr/_kernels/bootstrap.py and key_steps of
    # calibr/_kernels/cumulative.py (tied p)
    p, y = _binary(n=200, seed=13)
    return calibr.bootstrap(np.round(p, 2), y, "ecce", kind="kuiper", scale="sigma",
                            n_resamples=9, rng=2).bootstrap_distribution.tolist()


@path
def ecce_partition_pass():
    # partial_extremes of calibr/_kernels/cumulative.py (a partition of ecce's global
    # sort on Dask), with and without weights
    from calibr._kernels.cumulative import fill_keys, partial_extremes

    p, y = _binary(n=150, seed=14)
    p = np.round(p, 1)
    keys = np.empty(150, np.uint64)
    fill_keys(p, p.view(np.uint64), y, keys)
    keys.sort()
    return (partial_extremes(keys, np.empty(0)), partial_extremes(keys, np.full(150, 2.0)))


@path
def multicalibration_tied_and_weighted():
    # both kernels of calibr/_kernels/multicalibration.py; tied p (the blocks of
    # ties), weights, and the threads of several combinations of features
    rng = np.random.default_rng(11)
    n = 400
    df = pd.DataFrame({"p": np.round(rng.random(n), 2), "g": rng.choice(list("abcd"), n),
                       "x": rng.normal(size=n), "w": rng.integers(1, 4, n).astype(float)})
    df["y"] = (rng.random(n) < df["p"]).astype(np.int64)
    plain = calibr.multicalibration(df, "p", "y", ["g", "x"], min_samples=5)
    weighted = calibr.multicalibration(df, "p", "y", ["g", "x"], weights="w")
    return [repr((r.statistic, r.pvalue, r.mce, r.mde)) +
            _frame(r.segments.drop(columns="conditions")) for r in (plain, weighted)]


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
