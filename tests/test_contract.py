"""The exception contract and the invariances of every public function.

In the spirit of scikit-learn's ``test_common.py``: a registry of every public
function of calibr (``calibr.__all__``, ``reliability_diagram`` of ``calibr.plot``
among them, ``calibr.table.wilson_interval`` and the ``calibr.datasets`` loaders;
the rest of ``calibr.plot``, ``calibr.cli`` and ``calibr.torchmetrics`` have their
own tests), each with a valid call, drives

* the contract: hypothesis corrupts ONE argument of a valid call at a time
  (dtypes, shapes, containers, values, wrong option types and values). Only
  ``calibr.InputError`` or ``calibr.InputTypeError`` may escape, with a message
  that names an argument and a ``param`` that is the corrupted one; an input
  that is unusual but valid may succeed, and then the result is a finite float,
  a DataFrame (or what the function returns for valid input); and no input is
  changed, whatever happened;
* invariances: list, ndarray, Series, DataFrame and Categorical inputs, float32
  and float64 (the reference computed on the float32-rounded values, then
  exactly equal), C and F order, read-only and strided arrays give the same
  number; row-permuted inputs the same number up to summation order, where the
  metric does not depend on the order (``estimator="ul"`` does);
* the bound on ``bins`` times the number of classes, checked before any per-bin
  memory is allocated, by every function that takes ``bins``;
* arrays of other libraries: every function that takes arrays, given torch
  tensors (plain, requiring grad, strided views), JAX arrays (float64 and its
  default float32), array-api-strict arrays, a mix of them, or a GPU array as
  DLPack shows one, returns bit for bit what it returns for numpy arrays of the
  same values and dtype; Arrow PyCapsule columns and frames (objects with only
  ``__arrow_c_stream__`` or ``__arrow_c_array__``) what pandas gives
  (``docs/definitions.md``, "Arrays of other libraries").

Everything is deterministic (``derandomize=True``, fixed seeds).
"""

from __future__ import annotations

import atexit
import copy
import decimal
import fractions
import inspect
import math
import shutil
import tempfile
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from conftest import require
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.api.typing import DataFrameGroupBy
from tolerances import ORACLE_ATOL, ORACLE_RTOL

import calibr
from calibr import InputError, InputTypeError
from calibr._registry import METRICS
from calibr.datasets import load_breast_cancer_predictions, load_digits_predictions
from calibr.table import wilson_interval

#: calibr's own computations must not leak numpy's RuntimeWarnings either.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

SETTINGS = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# ------------------------------------------------------------------ valid inputs

_RNG = np.random.default_rng(20240611)
N = 24
P_BIN = np.round(_RNG.random(N), 3)
Y_BIN = (_RNG.random(N) < P_BIN).astype(np.int64)
P_MC = _RNG.dirichlet(np.ones(3), N)
Y_MC = _RNG.integers(1, 4, N)
LABELS = np.array(["cat", "dog", "emu"])


def _binary_frame() -> pd.DataFrame:
    return pd.DataFrame({"g": np.tile(["a", "b"], N // 2), "p": P_BIN.copy(), "y": Y_BIN.copy()})


def _segment_frame() -> pd.DataFrame:
    df = _binary_frame()
    df["x"] = np.round(_RNG.normal(size=N), 1)
    return df


def _multiclass_frame() -> pd.DataFrame:
    df = pd.DataFrame(P_MC.copy(), columns=[f"p_{c}" for c in LABELS])
    df["y"] = LABELS[Y_MC - 1]
    df["g"] = np.tile(["a", "b"], N // 2)
    return df


@dataclass
class Entry:
    """A public function with a valid call.

    ``args`` makes fresh valid keyword arguments; ``arrays`` names those that
    hold data (corrupted with the array strategies), ``frame_columns`` the
    columns of ``data`` that do; ``result`` checks what a successful call returns.
    ``order_free``: the value does not depend on the order of the rows.
    """

    name: str
    func: Callable[..., Any]
    args: Callable[[], dict[str, Any]]
    arrays: tuple[str, ...] = ()
    positional: tuple[str, ...] = ()
    frame_columns: tuple[str, ...] = ()
    result: str = "float"
    order_free: bool = True
    extra_options: dict[str, Any] = field(default_factory=dict)
    #: options left out of the corruptions: any value in range is valid and only
    #: costs time (n_resamples = 10**6 is minutes); their bounds are tested beside
    #: the function (tests/test_calibration_tests.py, test_option_errors)
    costly_options: tuple[str, ...] = ()
    #: the argument that names a column of ``frame_columns`` other than by its own
    #: name (the segment columns of multicalibration: ``segments``)
    column_params: dict[str, str] = field(default_factory=dict)


#: The calls of each metric of calibr's registry (``calibr._registry.METRICS``), binary
#: and multiclass: its defaults and option sets that reach each of its code paths (a
#: metric not listed is called with its defaults).
METRIC_FORMS: dict[str, list[dict[str, Any]]] = {
    "ece": [{}, {"type": "confidence"}],
    "mce": [{}, {"type": "confidence"}],
    "skce": [{}, {"estimator": "biased", "type": "classwise"},
             {"bandwidth": "median", "type": "confidence"}, {"estimator": "ul"}],
    "mmce": [{}, {"bandwidth": "median"}],
    "calibration_error": [{"debias": True},
                          {"type": "confidence", "norm": "l1", "binning": "equal-mass"}],
    "smece": [{}, {"bandwidth": 0.1, "type": "classwise"}],
    "log_loss": [{}, {"eps": 1e-15}],
    "auroc": [{}, {"type": "confidence"}, {"average": "weighted"}],
    # the data hold p of 0 and 1, which the temperature and Platt maps refuse
    "recalibration_gain": [{"score": "brier", "method": "isotonic"},
                           {"score": "brier", "method": "isotonic", "cv": 2}],
}

#: Metrics whose number depends on the order of the rows (their folds are dealt in it).
ORDER_DEPENDENT = {"recalibration_gain"}


def _metric_entries() -> list[Entry]:
    """An entry per metric of the registry and form (a test below checks that every
    registered metric has its forms here)."""
    out = []
    for name, info in METRICS.items():
        func = info.function
        for kw in METRIC_FORMS.get(name, [{}]):  # a new metric: its defaults
            tag = ",".join(f"{k}={v}" for k, v in kw.items())
            order_free = kw.get("estimator") != "ul" and name not in ORDER_DEPENDENT
            out.append(Entry(f"{name}/binary[{tag}]", func,
                             lambda kw=kw: {"p": P_BIN.copy(), "y": Y_BIN.copy(), **kw},
                             arrays=("p", "y"), order_free=order_free))
            out.append(Entry(f"{name}/multiclass[{tag}]", func,
                             lambda kw=kw: {"p": P_MC.copy(), "y": Y_MC.copy(), **kw},
                             arrays=("p", "y"), order_free=order_free))
    return out


REGISTRY: list[Entry] = [
    *_metric_entries(),
    Entry("calibration_table/binary", calibr.calibration_table,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy(), "bins": 5},
          arrays=("p", "y"), result="frame"),
    Entry("calibration_table/multiclass", calibr.calibration_table,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "bins": 4, "type": "classwise"},
          arrays=("p", "y"), result="frame"),
    Entry("calibration_table/data", calibr.calibration_table,
          lambda: {"p": "p", "y": "y", "data": _binary_frame().groupby("g")},
          frame_columns=("p", "y"), result="frame"),
    Entry("calibration_table/data-prefix", calibr.calibration_table,
          lambda: {"p": None, "y": "y", "p_prefix": "p_", "data": _multiclass_frame()},
          frame_columns=("p_cat", "y"), result="frame"),
    Entry("risk_coverage/binary", calibr.risk_coverage,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy()}, arrays=("p", "y"), result="frame"),
    Entry("risk_coverage/multiclass[weights]", calibr.risk_coverage,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "weights": np.arange(len(Y_MC)) % 3},
          arrays=("p", "y", "weights"), result="frame"),
    Entry("risk_coverage/data", calibr.risk_coverage,
          lambda: {"p": "p", "y": "y", "data": _binary_frame().groupby("g")},
          frame_columns=("p", "y"), result="frame"),
    Entry("calibration_gain/binary[platt]", calibr.calibration_gain,
          lambda: {"p": np.clip(P_BIN, 0.01, 0.99), "y": Y_BIN.copy(), "score": "brier",
                   "method": "platt", "cv": 2}, arrays=("p", "y"), result="calibration_gain",
          order_free=False),
    Entry("recalibrate/multiclass[isotonic]", calibr.recalibrate,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "method": "isotonic", "cv": 2},
          arrays=("p", "y"), result="array", order_free=False),
    Entry("summarise/grouped", calibr.summarise,
          lambda: {"data": _binary_frame().groupby("g"), "p": "p", "y": "y",
                   "metrics": ["ece", "skce"]},
          frame_columns=("p", "y"), result="frame"),
    Entry("summarise/prefix", calibr.summarise,
          lambda: {"data": _multiclass_frame(), "y": "y", "p_prefix": "p_",
                   "metrics": [calibr.metric("mce", bins=3, type="confidence"), "mmce"]},
          frame_columns=("p_cat", "y"), result="frame"),
    Entry("multicalibration", calibr.multicalibration,
          lambda: {"data": _segment_frame(), "p": "p", "y": "y", "segments": ["g", "x"],
                   "min_samples": 2},
          frame_columns=("p", "y", "g", "x"), result="multicalibration",
          column_params={"g": "segments", "x": "segments"}),
    # its number depends on the order of tied rows where they straddle a cut of the
    # bins; on these data none does (tests/test_llm_conventions.py has a case that does)
    Entry("fixed_size_ce/binary", calibr.fixed_size_ce,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy(), "size": 7}, arrays=("p", "y")),
    Entry("fixed_size_ce/binary[skip,l1]", calibr.fixed_size_ce,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy(), "size": 7, "last_bin": "skip",
                   "norm": "l1"}, arrays=("p", "y")),
    Entry("ecce/binary", calibr.ecce,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy(), "kind": "kuiper"}, arrays=("p", "y")),
    Entry("ecce/multiclass[scale=sigma]", calibr.ecce,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "scale": "sigma"}, arrays=("p", "y")),
    Entry("calibration_test/ks", calibr.calibration_test,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy(), "method": "ks"},
          arrays=("p", "y"), result="test", costly_options=("n_resamples",)),
    Entry("p_adjust", calibr.p_adjust,
          lambda: {"p": np.array([0.01, 0.2, np.nan, 0.04]), "method": "BH"},
          arrays=("p",), result="pvalues"),
    Entry("median_bandwidth/binary", calibr.median_bandwidth,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy()}, arrays=("p", "y"), result="bandwidth"),
    Entry("median_bandwidth/multiclass", calibr.median_bandwidth,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy()}, arrays=("p", "y"), result="bandwidth"),
    Entry("median_bandwidth/multiclass[type=confidence]", calibr.median_bandwidth,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "type": "confidence"},
          arrays=("p", "y"), result="bandwidth"),
    Entry("val_prob", calibr.val_prob,
          lambda: {"p": np.clip(P_BIN, 0.01, 0.99), "y": Y_BIN.copy()}, arrays=("p", "y"),
          result="series"),
    Entry("calibration_test/skce-binary", calibr.calibration_test,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy(), "rng": 1, "n_resamples": 50},
          arrays=("p", "y"), result="test", costly_options=("n_resamples",)),
    Entry("calibration_test/consistency-multiclass", calibr.calibration_test,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "method": "consistency", "rng": 2,
                   "n_resamples": 20, "type": "confidence"},
          arrays=("p", "y"), result="test", costly_options=("n_resamples",)),
    Entry("calibration_test/hosmer_lemeshow", calibr.calibration_test,
          lambda: {"p": np.clip(P_BIN, 0.01, 0.99), "y": Y_BIN.copy(),
                   "method": "hosmer_lemeshow", "groups": 5},
          arrays=("p", "y"), result="test", costly_options=("n_resamples",)),
    Entry("bootstrap/binary", calibr.bootstrap,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy(), "rng": 1, "n_resamples": 30},
          arrays=("p", "y"), result="bootstrap", costly_options=("n_resamples",),
          extra_options={"bins": 4}),
    Entry("bootstrap/multiclass-skce", calibr.bootstrap,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "metric": "skce", "type": "classwise",
                   "rng": 2, "n_resamples": 20, "method": "basic"},
          arrays=("p", "y"), result="bootstrap", costly_options=("n_resamples",),
          extra_options={"bandwidth": 0.3}),
    Entry("paired_bootstrap", calibr.paired_bootstrap,
          lambda: {"p_a": P_BIN.copy(), "p_b": np.sqrt(P_BIN), "y": Y_BIN.copy(), "rng": 3,
                   "n_resamples": 30, "metric": "mce"},
          arrays=("p_a", "p_b", "y"), result="bootstrap", costly_options=("n_resamples",)),
    Entry("metric", calibr.metric, lambda: {"func": "ece"}, positional=("func",),
          result="metric", extra_options={"bins": 2}),
    Entry("test", calibr.test, lambda: {"method": "consistency"}, positional=("method",),
          result="test_spec", extra_options={"metric": "mce", "n_resamples": 10}),
    Entry("wilson_interval", wilson_interval,
          lambda: {"successes": np.array([0.0, 3.0, 5.0]), "n": np.array([4.0, 10.0, 5.0]),
                   "confidence_level": 0.9},
          arrays=("successes", "n"), result="interval"),
    Entry("smece_curve", calibr.smece_curve,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "points": 50}, arrays=("p", "y"),
          result="smooth_curve"),
    Entry("decompose/binary", calibr.decompose,
          lambda: {"p": P_BIN.copy(), "y": Y_BIN.copy()}, arrays=("p", "y"),
          result="decomposition"),
    Entry("decompose/binary[log_loss,weights]", calibr.decompose,
          lambda: {"p": np.clip(P_BIN, 0.01, 0.99), "y": Y_BIN.copy(), "score": "log_loss",
                   "weights": np.arange(N, dtype=float) % 3},
          arrays=("p", "y", "weights"), result="decomposition"),
    Entry("decompose/multiclass[equal-mass]", calibr.decompose,
          lambda: {"p": P_MC.copy(), "y": Y_MC.copy(), "binning": "equal-mass", "bins": 4},
          arrays=("p", "y"), result="decomposition"),
    Entry("reliability_diagram", calibr.reliability_diagram,
          lambda: {"table": calibr.calibration_table(P_MC, Y_MC, bins=4), "show_ece": True},
          result="figure"),
    Entry("html_report", calibr.html_report,
          lambda: {"data": _binary_frame().groupby("g"), "p": "p", "y": "y", "bins": 4,
                   "n_resamples": 20, "consistency_resamples": 20},
          frame_columns=("p", "y"), result="html",
          costly_options=("n_resamples", "consistency_resamples")),
    Entry("load_breast_cancer_predictions", load_breast_cancer_predictions, dict,
          result="frame"),
    Entry("load_digits_predictions", load_digits_predictions, dict, result="frame"),
]
IDS = [e.name for e in REGISTRY]


def test_every_registered_metric_has_its_entries():
    assert set(METRIC_FORMS) <= set(METRICS)
    assert {e.name.partition("/")[0] for e in REGISTRY} >= set(METRICS)


def test_registry_covers_every_public_function():
    public = {
        name for name in calibr.__all__
        if callable(getattr(calibr, name)) and not isinstance(getattr(calibr, name), type)
        and not inspect.ismodule(getattr(calibr, name))
    }
    covered = {e.func.__name__ for e in REGISTRY}
    assert public <= covered, public - covered
    loaders = {name for name in calibr.datasets.__all__ if name.startswith("load_")}
    assert loaders <= covered
    assert "wilson_interval" in covered


# ------------------------------------------------------------------ corruptions

_MEMMAP_DIR = Path(tempfile.mkdtemp(prefix="calibr-contract-"))
atexit.register(shutil.rmtree, _MEMMAP_DIR, ignore_errors=True)


def _memmap(a: np.ndarray) -> np.ndarray:
    path = _MEMMAP_DIR / f"m{len(list(_MEMMAP_DIR.iterdir()))}.dat"
    m = np.memmap(path, dtype=a.dtype, mode="w+", shape=a.shape)
    m[...] = a
    m.flush()
    return np.memmap(path, dtype=a.dtype, mode="r", shape=a.shape)


def _gen(a):
    return (v for v in np.asarray(a).tolist())


def _readonly(a):
    b = np.array(a, copy=True)
    b.flags.writeable = False
    return b


def _with_value(a: np.ndarray, i: int, value: Any) -> Any:
    """A copy of ``a`` with one value replaced (as an object array when it does not fit)."""
    flat = np.array(a, copy=True).ravel()
    i = i % max(flat.size, 1)
    try:
        with np.errstate(all="ignore"):
            flat[i] = value
            if not (flat[i] == value or (isinstance(value, float) and math.isnan(value))):
                raise TypeError
    except Exception:  # noqa: BLE001 - does not fit the dtype: hold it in an object array
        flat = flat.astype(object)
        flat[i] = value
    return flat.reshape(np.shape(a))


DTYPES = ["float16", "float32", ">f8", ">f4", "longdouble", "int64", ">i4", "int8", "uint8",
          "uint64", "bool", "complex128", "object", "datetime64[ns]", "timedelta64[ns]", "U8",
          "S8"]


def _astype(a, dt):
    try:
        with np.errstate(all="ignore"):
            return np.asarray(a).astype(dt)
    except Exception:  # noqa: BLE001 - no such conversion: the value itself
        return np.asarray(a).astype(object)


def _pandas(a, kind):
    import pyarrow as pa

    a = np.asarray(a)
    if a.ndim != 1:
        frame = pd.DataFrame(a)
        if kind.startswith("polars"):
            return pl.from_pandas(frame.set_axis([str(c) for c in frame.columns], axis=1))
        if kind.startswith("arrow"):
            return pa.Table.from_pandas(frame.set_axis([str(c) for c in frame.columns], axis=1))
        if kind == "Int64":
            return frame.round().astype("Int64")
        return frame.astype("Float64") if kind.startswith("Float64") else frame
    makers = {
        "Series": lambda: pd.Series(a),
        "Int64": lambda: pd.Series(a).astype("Float64").round().astype("Int64"),
        "Float64": lambda: pd.Series(a, dtype="Float64"),
        "Float64-NA": lambda: pd.Series(a, dtype="Float64").mask(np.arange(a.size) == 1),
        "boolean": lambda: pd.Series(a != 0, dtype="boolean"),
        "string": lambda: pd.Series(a.astype(str), dtype="string"),
        "arrow-float": lambda: pd.Series(a.astype(float), dtype=pd.ArrowDtype(pa.float64())),
        "arrow-string": lambda: pd.Series(a.astype(str), dtype=pd.ArrowDtype(pa.string())),
        "Categorical": lambda: pd.Categorical(a),
        "category-Series": lambda: pd.Series(pd.Categorical(a)),
        "sparse": lambda: pd.Series(pd.arrays.SparseArray(a.astype(float))),
        "shifted-index": lambda: pd.Series(a, index=np.arange(a.size) + 7),
        "Index": lambda: pd.Index(a),
        # the same values as polars and Arrow columns (calibr/_input/frames.py)
        "polars": lambda: pl.Series(a),
        "polars-null": lambda: pl.Series(a.astype(float)).scatter(1, None),
        "polars-string": lambda: pl.Series(a.astype(str)),
        "polars-categorical": lambda: pl.Series(a.astype(str), dtype=pl.Categorical),
        "arrow": lambda: pa.array(a),
        "arrow-chunked-null": lambda: pa.chunked_array([a[:1], pa.array([None]), a[2:]]),
        "arrow-dictionary": lambda: pa.array(a.astype(str)).dictionary_encode(),
    }
    try:
        return makers[kind]()
    except Exception:  # noqa: BLE001 - pandas cannot make this kind of these values
        return pd.Series(a)


PANDAS_KINDS = ["Series", "Int64", "Float64", "Float64-NA", "boolean", "string", "arrow-float",
                "arrow-string", "Categorical", "category-Series", "sparse", "shifted-index",
                "Index", "polars", "polars-null", "polars-string", "polars-categorical", "arrow",
                "arrow-chunked-null", "arrow-dictionary"]

SHAPES = {
    "0-d": lambda a: np.asarray(a).ravel()[0],
    "0-d array": lambda a: np.asarray(np.asarray(a).ravel()[0]),
    "3-d": lambda a: np.asarray(a).reshape(np.shape(a) + (1,)),
    "(n, 1)": lambda a: np.asarray(a).reshape(len(a), -1)[:, :1],
    "(0, K)": lambda a: np.asarray(a)[:0],
    "transposed": lambda a: np.asarray(a).T,
    "ragged": lambda a: [list(np.atleast_1d(r)) for r in np.asarray(a)][:-1] + [[0.5, 0.5, 0.1]],
    "short": lambda a: np.asarray(a)[:-1],
    "empty list": lambda a: [],
    "nested list": lambda a: [np.asarray(a).tolist()],
}

CONTAINERS = {
    "list": lambda a: np.asarray(a).tolist(),
    "tuple": lambda a: tuple(np.asarray(a).tolist()),
    "generator": _gen,
    "iterator": lambda a: iter(np.asarray(a).tolist()),
    "set": lambda a: set(np.asarray(a).ravel().tolist()),
    "dict": lambda a: dict(enumerate(np.asarray(a).ravel().tolist())),
    "dict values": lambda a: dict(enumerate(np.asarray(a).ravel().tolist())).values(),
    "string": lambda a: "0.5",
    "bytes": lambda a: b"01",
    "None": lambda a: None,
    "memmap": lambda a: _memmap(np.asarray(a)),
    "read-only": _readonly,
    "strided": lambda a: np.repeat(np.asarray(a), 2, axis=0)[::2],
    "F-order": lambda a: np.asfortranarray(a),
    "masked": lambda a: np.ma.masked_array(a, mask=np.arange(np.size(a)).reshape(np.shape(a)) == 1),
    "masked-none": lambda a: np.ma.masked_array(a),
    "matrix-of-objects": lambda a: np.asarray(a, dtype=object),
}

VALUES = [np.nan, np.inf, -np.inf, -0.0, 2.0, -0.5, 1e300, 5e-324, 10**400, 2**64 - 1, -1, 3,
          "x", None, True, 1j, pd.NaT, pd.NA, np.datetime64("2020-01-01"),
          decimal.Decimal("0.5"), fractions.Fraction(1, 3), [0.5], b"x", (1,)]

BAD_OPTIONS = [None, "x", "", np.nan, np.inf, -np.inf, -1, 0, 2.5, 1e300, 10**400, True, False,
               [1], (1,), {1}, {"a": 1}, np.array([1, 2]), 1j, np.float16(3), np.uint64(2**64 - 1),
               b"x", 5e-324, 1 - 2**-53, np.str_("classwise"), pd.NA, object(),
               decimal.Decimal("2"), fractions.Fraction(7, 2), range(3), "median",
               "confidence", "classwise", "uq", "biased", "p", "y", "g", "p_"]


def array_corruptions(a) -> st.SearchStrategy:
    """(label, corrupted value) of the valid array ``a``."""
    return st.one_of(
        st.sampled_from(DTYPES).map(lambda dt: (f"dtype {dt}", _astype(a, dt))),
        st.sampled_from(PANDAS_KINDS).map(lambda k: (f"pandas {k}", _pandas(a, k))),
        st.sampled_from(sorted(SHAPES)).map(lambda s: (f"shape {s}", SHAPES[s](a))),
        st.sampled_from(sorted(CONTAINERS)).map(lambda c: (f"container {c}", CONTAINERS[c](a))),
        st.tuples(st.integers(0, 10**6), st.sampled_from(range(len(VALUES)))).map(
            lambda iv: (f"value {VALUES[iv[1]]!r}", _with_value(a, iv[0], VALUES[iv[1]]))),
    )


def option_corruptions() -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from(range(len(BAD_OPTIONS))).map(lambda i: BAD_OPTIONS[i]),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=4),
        st.lists(st.integers(-2, 4), max_size=4),
    ).map(lambda v: (f"option {v!r}", v))


# ------------------------------------------------------------------ snapshots


def _snapshot(x: Any) -> Any:
    """What must not change about ``x``: values, dtype, shape, flags."""
    if inspect.isgenerator(x):
        return ("generator", inspect.getgeneratorstate(x))
    if isinstance(x, np.ma.MaskedArray):
        return ("masked", _snapshot(np.ma.getdata(x)), np.ma.getmaskarray(x).tobytes())
    if isinstance(x, np.ndarray):
        raw = x.tolist() if x.dtype == object else x.tobytes()
        return ("ndarray", type(x), x.dtype.str, x.shape, x.strides, x.flags.writeable, raw)
    if isinstance(x, DataFrameGroupBy):
        return ("groupby", x.obj.copy(deep=True), x.ngroup().to_numpy().tobytes())
    if isinstance(x, (pd.DataFrame, pd.Series, pd.Index)):
        return ("pandas", x.copy(deep=True))
    if isinstance(x, pd.Categorical):
        return ("categorical", x.copy())
    if hasattr(x, "__length_hint__") and not isinstance(x, (list, tuple, dict, set, str, bytes)):
        return ("iterator", x.__length_hint__())
    try:
        copied = copy.deepcopy(x)
    except Exception:  # noqa: BLE001 - cannot be copied: compare its identity only
        return ("id", id(x))
    if not _same(copied, x):  # no value equality (e.g. object()): identity only
        return ("id", id(x))
    return ("copy", copied)


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - e.g. pd.NA: compare the representation
        return repr(a) == repr(b)


def _assert_unchanged(x: Any, before: Any) -> None:
    now = _snapshot(x)
    kind = before[0]
    assert now[0] == kind
    if kind in ("pandas", "groupby"):
        ref = before[1]
        got = x.obj if kind == "groupby" else x
        if isinstance(ref, pd.DataFrame):
            pd.testing.assert_frame_equal(got, ref, check_exact=True)
        elif isinstance(ref, pd.Series):
            pd.testing.assert_series_equal(got, ref, check_exact=True)
        else:
            pd.testing.assert_index_equal(got, ref, exact=True)
        if kind == "groupby":
            assert now[2] == before[2]
    elif kind == "categorical":
        pd.testing.assert_extension_array_equal(x, before[1])
    elif kind == "copy":
        assert _same(now[1], before[1])
    else:
        assert _same(list(now), list(before)), (now, before)


# ------------------------------------------------------------------ the contract


def _check_result(entry: Entry, out: Any) -> None:
    if entry.result == "float":
        # +inf only from log_loss: a p of 0 or 1 contradicted by y (docs/definitions.md,
        # "Log loss")
        assert type(out) is float and (math.isfinite(out) or (
            out == math.inf and entry.func is calibr.log_loss)), out
    elif entry.result == "frame":
        assert isinstance(out, pd.DataFrame)
    elif entry.result == "metric":
        assert isinstance(out, calibr.Metric)
    elif entry.result == "test_spec":
        assert isinstance(out, calibr.frame.CalibrationTest)
    elif entry.result == "series":  # val_prob: R's 18 statistics
        assert isinstance(out, pd.Series) and out.dtype == np.float64 and len(out) == 18
        assert np.isfinite(out.drop("D:p")).any()
    elif entry.result == "test":  # calibration_test
        assert isinstance(out, calibr.CalibrationTestResult)
        # +inf only where no null value reaches it (ecce: a p of 0 or 1 contradicted)
        assert (math.isfinite(out.statistic) or (out.statistic == math.inf
                and out.pvalue == 0.0)) and 0.0 <= out.pvalue <= 1.0, out
    elif entry.result == "bootstrap":  # bootstrap, paired_bootstrap
        assert isinstance(out, (calibr.BootstrapResult, calibr.PairedBootstrapResult))
        low, high = out.confidence_interval
        assert math.isfinite(out.estimate) and (low <= high or math.isnan(low)), out
    elif entry.result == "bandwidth":  # a float, or one per column for type="classwise"
        assert type(out) is float or (isinstance(out, np.ndarray) and out.dtype == np.float64)
        assert np.all(np.isfinite(out)) and np.all(np.asarray(out) > 0), out
    elif entry.result == "figure":  # reliability_diagram
        from matplotlib.figure import Figure

        assert isinstance(out, Figure) and out.axes, out
    elif entry.result == "decomposition":  # decompose
        assert isinstance(out, calibr.Decomposition), out
        for name in ("score", "mcb", "dsc", "unc"):
            value = getattr(out, name)
            assert (type(value) is float if out.classes is None
                    else value.dtype == np.float64), out
            assert np.all(np.isfinite(value)), out
    elif entry.result == "calibration_gain":
        assert isinstance(out, calibr.CalibrationGain), out
        assert math.isfinite(out.loss) and math.isfinite(out.refinement), out
    elif entry.result == "array":  # recalibrate
        assert isinstance(out, np.ndarray) and out.dtype == np.float64
        assert np.all((out >= 0) & (out <= 1)), out
    elif entry.result == "multicalibration":
        assert isinstance(out, calibr.MulticalibrationResult)
        assert out.statistic >= 0 and 0.0 <= out.pvalue <= 1.0, out
        assert isinstance(out.segments, pd.DataFrame) and out.n_segments == len(out.segments)
    elif entry.result == "html":  # html_report
        assert isinstance(out, str) and out.startswith("<!DOCTYPE html>"), out[:80]
    elif entry.result == "smooth_curve":  # smece_curve
        assert isinstance(out, calibr.SmoothCurve)
        assert math.isfinite(out.smece) and out.bandwidth > 0, out
        assert np.isfinite(out.density).all() and out.x.shape == out.y.shape
    elif entry.result == "pvalues":  # p_adjust (a Series for a Series): NaN where p is missing
        assert isinstance(out, (np.ndarray, pd.Series)) and out.dtype == np.float64
        out = np.asarray(out)
        present = out[~np.isnan(out)]
        assert ((present >= 0) & (present <= 1)).all(), out
    else:
        lo, hi = out
        assert np.isfinite(lo).all() and np.isfinite(hi).all()


def _call(entry: Entry, args: dict[str, Any]) -> Any:
    kwargs = dict(args)
    positional = [kwargs.pop(name) for name in entry.positional]
    return entry.func(*positional, **kwargs)


#: Corrupting one argument may break a rule stated about another: ``classes``
#: decides which labels ``y`` may hold, and the verbs take the probability
#: columns by ``p`` or by ``p_prefix`` (giving both is one error of the two).
# p_prefix gives the class labels (the rest of each column name), which the labels
# in y must match: as for classes, the error may name y
_PARAM_OF_CORRUPTED = {"classes": {"classes", "y"}, "p": {"p", "p_prefix"},
                       "p_prefix": {"p", "p_prefix", "y"}}


def _expected_params(entry: Entry, corrupted: str) -> set[str]:
    """What ``err.param`` may be when ``corrupted`` was corrupted: that argument
    (the column of ``data`` names its own argument: ``p_cat`` is one of the
    columns of ``p_prefix``, read as ``p``), or for a data argument any other
    data argument of the call (rules relate them: same lengths, ``successes`` in
    [0, n], the same rows for ``p_a`` and ``p_b``)."""
    if corrupted.startswith("data:"):
        column = corrupted[len("data:"):]
        return {entry.column_params.get(column, "p" if column == "p_cat" else column)}
    if corrupted in entry.arrays:
        return set(entry.arrays)
    return _PARAM_OF_CORRUPTED.get(corrupted, {corrupted})


def _call_and_check(entry: Entry, args: dict[str, Any], what: str, corrupted: str) -> None:
    befores = {k: _snapshot(v) for k, v in args.items()}
    try:
        out = _call(entry, args)
    except (InputError, InputTypeError) as err:
        msg = str(err)
        assert "`" in msg or "metric" in msg, f"{entry.name}, {what}: no argument named: {msg}"
        assert "\n" not in msg
        # the error names the corrupted argument in `param`, not only in its words
        assert err.param in _expected_params(entry, corrupted), (
            f"{entry.name}, {what}: param={err.param!r}: {msg}")
    except Exception as err:  # noqa: BLE001 - the assertion is the point
        pytest.fail(f"{entry.name}, {what}: {type(err).__module__}.{type(err).__name__} "
                    f"escaped: {err}")
    else:
        _check_result(entry, out)
    for k, v in args.items():
        _assert_unchanged(v, befores[k])


def _options(entry: Entry) -> list[str]:
    sig = inspect.signature(entry.func)
    names = [n for n, prm in sig.parameters.items()
             if prm.kind in (prm.POSITIONAL_OR_KEYWORD, prm.KEYWORD_ONLY)]
    return [n for n in names if n not in entry.arrays and n not in entry.costly_options] + list(
        entry.extra_options)


@pytest.mark.parametrize("entry", [e for e in REGISTRY if e.arrays], ids=lambda e: e.name)
@SETTINGS
@given(data=st.data())
def test_corrupted_arrays_raise_calibr_errors_and_change_nothing(entry, data):
    args = entry.args()
    name = data.draw(st.sampled_from(entry.arrays), label="argument")
    what, value = data.draw(array_corruptions(args[name]), label="corruption")
    args[name] = value
    _call_and_check(entry, args, f"{name} <- {what}", name)


@pytest.mark.parametrize("entry", [e for e in REGISTRY if _options(e)], ids=lambda e: e.name)
@SETTINGS
@given(data=st.data())
def test_corrupted_options_raise_calibr_errors_and_change_nothing(entry, data):
    args = entry.args()
    name = data.draw(st.sampled_from(_options(entry)), label="argument")
    what, value = data.draw(option_corruptions(), label="corruption")
    args[name] = value
    _call_and_check(entry, args, f"{name} <- {what}", name)


@pytest.mark.parametrize("entry", [e for e in REGISTRY if e.frame_columns], ids=lambda e: e.name)
@SETTINGS
@given(data=st.data())
def test_corrupted_columns_of_data_raise_calibr_errors_and_change_nothing(entry, data):
    args = entry.args()
    data_arg = args["data"]
    frame = data_arg.obj if isinstance(data_arg, DataFrameGroupBy) else data_arg
    column = data.draw(st.sampled_from(entry.frame_columns), label="column")
    what, value = data.draw(array_corruptions(frame[column].to_numpy()), label="corruption")
    corrupted = frame.copy()
    try:
        corrupted[column] = value
    except Exception:  # noqa: BLE001 - pandas itself refuses this column: nothing to test
        return
    args["data"] = corrupted.groupby("g") if isinstance(data_arg, DataFrameGroupBy) else corrupted
    _call_and_check(entry, args, f"data[{column!r}] <- {what}", f"data:{column}")


@pytest.mark.parametrize("entry", [e for e in REGISTRY if e.args()], ids=lambda e: e.name)
def test_valid_calls_succeed_and_change_nothing(entry):
    args = entry.args()
    befores = {k: _snapshot(v) for k, v in args.items()}
    _check_result(entry, _call(entry, args))
    for k, v in args.items():
        _assert_unchanged(v, befores[k])


@pytest.mark.parametrize("entry", [e for e in REGISTRY if not e.args()], ids=lambda e: e.name)
def test_loaders_return_a_fresh_frame(entry):
    first = entry.func()
    first.iloc[:, -1] = np.nan
    del first[first.columns[0]]
    second = entry.func()
    assert second.notna().all().all()
    pd.testing.assert_frame_equal(second, entry.func())


# ------------------------------------------------------------------ the reproducers


def _two_rows_bca(function: Callable[..., Any]) -> Any:
    """BCa of the "uq" SKCE on two rows: without one row it is undefined."""
    p = [0.2, 0.8]
    data = (p, p) if function is calibr.paired_bootstrap else (p,)
    return function(*data, [0, 1], "skce", method="bca", n_resamples=20, rng=0)


#: What a callable metric is refused for returning.
_NOT_REAL = (r"^`metric` must return a real number \(a float, an int or a numpy scalar\); "
             r"it returned ")

ESCAPED_BEFORE = [
    # (call, exception or None for success[, message]) of inputs that escaped as other
    # exceptions before; RuntimeWarning: a NaN interval with that warning. bins=10**6 with
    # K=1000 (a MemoryError, or worse) is in the last test
    (lambda: calibr.ece([0.1, 0.9], np.array([0, 1], np.float16)), None),
    (lambda: calibr.ece([0.1, 0.9], np.array([0, 1], ">i4")), None),
    (lambda: calibr.skce(np.array([0.1, 0.9], ">f8"), np.array([0, 1], ">i8")), None),
    (lambda: calibr.ece((v for v in [0.1, 0.9]), [0, 1]), InputTypeError),
    (lambda: calibr.ece(np.array([0, 10**400], object), [0, 1]), InputError),
    (lambda: calibr.calibration_table([0.1, 0.9], [0, 1], confidence_level=1 - 2**-53), None),
    (lambda: calibr.ece([[0.5, 0.5], [1.0]], [1, 2]), InputError),
    (lambda: calibr.ece([0.1, 0.9], "01"), InputTypeError),
    (lambda: calibr.skce([0.1, 0.9], [0, 1], bandwidth=10**400), InputError),
    (lambda: wilson_interval([1], [2], 1.5), InputError),
    (lambda: calibr.summarise(pd.DataFrame({"size": ["a", "b"], "p": [0.2, 0.6], "y": [0, 1]})
                              .groupby("size", as_index=False), "p", "y"), None),
    # ZeroDivisionError in the jackknife kernel
    (lambda: _two_rows_bca(calibr.bootstrap), RuntimeWarning, r"^The BCa confidence interval "
     r"cannot be calculated: .* undefined \(as for \"uq\" on 2 rows\); the interval is NaN\.$"),
    (lambda: _two_rows_bca(calibr.paired_bootstrap), RuntimeWarning, r"^The BCa confidence "),
    # ZeroDivisionError: the acceleration's (sum U^2)^1.5 underflowed to 0.0
    (lambda: calibr.bootstrap(P_BIN, Y_BIN, lambda p, y: 1e-110 * calibr.ece(p, y),
                              method="bca", n_resamples=30, rng=0), None),
    # TypeError or ValueError from float()
    (lambda: calibr.bootstrap(P_BIN, Y_BIN, lambda p, y: None, n_resamples=5, rng=0),
     InputError, _NOT_REAL + r"None \(NoneType\)\.$"),
    (lambda: calibr.bootstrap(P_BIN, Y_BIN, lambda p, y: 1j, n_resamples=5, rng=0),
     InputError, _NOT_REAL + r"1j \(complex\)\.$"),
    (lambda: calibr.paired_bootstrap(P_BIN, P_BIN, Y_BIN, lambda p, y: np.ones(2),
                                     n_resamples=5, rng=0),
     InputError, _NOT_REAL + r"an array of shape \(2,\) \(ndarray\)\.$"),
    (lambda: calibr.summarise(_binary_frame().groupby("g"), "p", "y", f=lambda p, y: "x"),
     InputError, r"^The metric 'f' must return a real number .*; it returned 'x' \(str\)\. "
     r"\[metric 'f'; group g='a'\]$"),
]


@pytest.mark.parametrize("case", range(len(ESCAPED_BEFORE)))
def test_reproducers_of_escaped_exceptions(case):
    call, exc, *match = ESCAPED_BEFORE[case]
    if exc is None:
        out = call()
        if isinstance(out, calibr.BootstrapResult):
            assert all(map(math.isfinite, out.confidence_interval)), out
        else:
            assert isinstance(out, pd.DataFrame) or math.isfinite(out)
    elif exc is RuntimeWarning:
        with pytest.warns(RuntimeWarning, match=match[0]):
            out = call()
        assert all(map(math.isnan, out.confidence_interval)), out
    else:
        with pytest.raises(exc, match=match[0] if match else None):
            call()


# ------------------------------------------------------------------ invariances


def _float_metric_entries() -> list[Entry]:
    """The entries whose valid call returns one float (the metrics, and the median
    bandwidth of the forms that have one)."""
    return [e for e in REGISTRY if e.result in ("float", "bandwidth")]


def _is_multiclass(entry: Entry) -> bool:
    return np.ndim(entry.args()["p"]) == 2


def _value(entry: Entry, **override: Any) -> Any:
    return entry.func(**{**entry.args(), **override})


def _forms(p: np.ndarray, y: np.ndarray, multiclass: bool) -> dict[str, tuple[Any, Any, dict]]:
    """The same data as list, ndarray, pandas and Categorical inputs, with the
    ``classes=`` each needs."""
    forms: dict[str, tuple[Any, Any, dict]] = {
        "list": (p.tolist(), y.tolist(), {}),
        "tuple": (tuple(p.tolist()), tuple(y.tolist()), {}),
        "C": (np.ascontiguousarray(p), y, {}),
        "F": (np.asfortranarray(p), y, {}),
        "read-only": (_readonly(p), _readonly(y), {}),
        "strided": (np.repeat(p, 2, axis=0)[::2], np.repeat(y, 2)[::2], {}),
        "memmap": (_memmap(p), _memmap(y), {}),
        "int32 labels": (p, y.astype(np.int32), {}),
        "float labels": (p, y.astype(np.float64), {}),
    }
    if multiclass:
        names = LABELS[y - 1]
        frame = pd.DataFrame(p, columns=LABELS)
        forms.update({
            "DataFrame + names": (frame, names, {}),
            "DataFrame + Series": (frame, pd.Series(names), {}),
            "DataFrame + Categorical": (frame, pd.Categorical(names, categories=LABELS[::-1]), {}),
            "matrix + Categorical": (p, pd.Categorical(names, categories=LABELS), {}),
            "0-based + classes": (p, y - 1, {"classes": range(3)}),
            "names + classes": (p, names.tolist(), {"classes": list(LABELS)}),
            "Index classes": (p, names, {"classes": pd.Index(LABELS)}),
            "polars DataFrame + Series": (pl.from_pandas(frame), pl.Series(names), {}),
            "polars + Categorical": (pl.from_pandas(frame),
                                     pl.Series(names, dtype=pl.Categorical), {}),
            "Arrow Table + array": (pa.Table.from_pandas(frame), pa.array(names), {}),
            "Arrow + dictionary": (pa.Table.from_pandas(frame),
                                   pa.array(names).dictionary_encode(), {}),
        })
    else:
        forms.update({
            "Series": (pd.Series(p), pd.Series(y), {}),
            "Float64 + Int64": (pd.Series(p, dtype="Float64"), pd.Series(y, dtype="Int64"), {}),
            "bool labels": (p, y.astype(bool), {}),
            "Categorical labels": (p, pd.Categorical(y), {}),
            "named labels": (p, np.where(y == 1, "yes", "no"), {"classes": ("no", "yes")}),
            "polars": (pl.Series(p), pl.Series(y), {}),
            "polars bool labels": (pl.Series(p), pl.Series(y.astype(bool)), {}),
            "polars Float32 of float64": (pl.Series(p), pl.Series(y, dtype=pl.Float32), {}),
            "Arrow": (pa.array(p), pa.array(y), {}),
            "Arrow chunked": (pa.chunked_array([p[:5], p[5:]]),
                              pa.chunked_array([y[:3], y[3:]]), {}),
        })
    return forms


@pytest.mark.parametrize("entry", _float_metric_entries(), ids=lambda e: e.name)
def test_same_value_for_every_form_of_the_same_data(entry):
    args = entry.args()
    p, y = args.pop("p"), args.pop("y")
    want = entry.func(p, y, **args)
    for form, (pp, yy, extra) in _forms(p, y, _is_multiclass(entry)).items():
        assert entry.func(pp, yy, **args, **extra) == want, form


@pytest.mark.parametrize("entry", _float_metric_entries(), ids=lambda e: e.name)
def test_float32_equals_float64_of_the_rounded_values(entry):
    args = entry.args()
    p, y = args.pop("p"), args.pop("y")
    p32 = p.astype(np.float32)
    if p32.ndim == 2:  # rows must still sum to 1 within 1e-6 after rounding: they do
        assert np.all(np.abs(p32.astype(np.float64).sum(axis=1) - 1) <= 1e-6)
    want = entry.func(p32.astype(np.float64), y, **args)
    assert entry.func(p32, y, **args) == want
    assert entry.func(pd.DataFrame(p32) if p32.ndim == 2 else pd.Series(p32), y,
                      **args, **({"classes": range(1, 4)} if p32.ndim == 2 else {})) == want
    frame32 = pd.DataFrame(p32).set_axis(list("abc")[:p32.shape[1]], axis=1) if p32.ndim == 2 \
        else None
    for lib32 in (pl.from_pandas, pa.Table.from_pandas):  # polars and Arrow Float32
        p_lib = lib32(frame32) if p32.ndim == 2 else (pl.Series(p32) if lib32 is pl.from_pandas
                                                      else pa.array(p32))
        assert entry.func(p_lib, y, **args,
                          **({"classes": range(1, 4)} if p32.ndim == 2 else {})) == want


@pytest.mark.parametrize("entry", _float_metric_entries(), ids=lambda e: e.name)
def test_row_permutations(entry):
    args = entry.args()
    p, y = args.pop("p"), args.pop("y")
    want = entry.func(p, y, **args)
    perm = np.random.default_rng(3).permutation(len(y))
    got = entry.func(p[perm], y[perm], **args)
    if entry.order_free:  # the same sums in another order
        assert got == pytest.approx(want, rel=ORACLE_RTOL, abs=ORACLE_ATOL)
    else:  # "ul" pairs (1, 2), (3, 4), ...: the order is part of the estimator
        assert got != want


def test_frames_and_tables_are_invariant_too():
    df = _binary_frame()
    perm = np.random.default_rng(5).permutation(len(df))
    shuffled = df.iloc[perm].reset_index(drop=True)
    a = calibr.summarise(df.groupby("g"), "p", "y", metrics=["ece", "mmce"])
    b = calibr.summarise(shuffled.groupby("g"), "p", "y", metrics=["ece", "mmce"])
    pd.testing.assert_frame_equal(a, b, rtol=ORACLE_RTOL, atol=ORACLE_ATOL)
    # polars and Arrow frames with by=: the caller's frame type, pandas' numbers bit for bit
    got_pl = calibr.summarise(pl.from_pandas(shuffled), "p", "y", metrics=["ece", "mmce"], by="g")
    got_pa = calibr.summarise(pa.Table.from_pandas(shuffled), "p", "y", metrics=["ece", "mmce"],
                              by=["g"])
    assert isinstance(got_pl, pl.DataFrame) and isinstance(got_pa, pa.Table)
    for got in (got_pl.to_pandas(), got_pa.to_pandas()):
        pd.testing.assert_frame_equal(got, b, check_exact=True, check_dtype=False)
    ta = calibr.calibration_table(P_MC, Y_MC, bins=4)
    for pp, yy in ((np.asfortranarray(P_MC), Y_MC), (_readonly(P_MC), Y_MC.tolist()),
                   (pd.DataFrame(P_MC, columns=LABELS), LABELS[Y_MC - 1])):
        tb = calibr.calibration_table(pp, yy, bins=4)
        pd.testing.assert_frame_equal(ta.drop(columns="class"), tb.drop(columns="class"),
                                      check_exact=True)
    lo, hi = wilson_interval([0, 3, 5], [4, 10, 5], 0.9)
    for xs, ns in (([0.0, 3.0, 5.0], (4, 10, 5)), (pd.Series([0, 3, 5]), np.array([4, 10, 5]))):
        lo2, hi2 = wilson_interval(xs, ns, 0.9)
        np.testing.assert_array_equal(lo, lo2)
        np.testing.assert_array_equal(hi, hi2)


# ------------------------------------------------------------------ the bins x K bound


_BINNED = [name for name, info in METRICS.items() if info.kind == "binned"]


@pytest.mark.parametrize("call", [
    *(lambda p, y, f=METRICS[name].function: f(p, y, bins=10**6, type="classwise")
      for name in _BINNED),
    lambda p, y: calibr.calibration_table(p, y, bins=10**6),
    *(lambda p, y, name=name: calibr.summarise(
        pd.DataFrame(p).assign(y=y), list(range(p.shape[1])), "y",
        classes=range(1, p.shape[1] + 1), metrics=calibr.metric(name, bins=10**6))
      for name in _BINNED),
], ids=[*_BINNED, "calibration_table", *(f"summarise-{name}" for name in _BINNED)])
def test_bins_times_classes_is_checked_before_anything_is_allocated(monkeypatch, call):
    from calibr._kernels import binned

    def kernel_ran(*args, **kwargs):  # pragma: no cover - reached only if the bound is missing
        raise AssertionError("the per-bin kernels ran before the bound was checked")

    monkeypatch.setattr(binned, "bin_stats", kernel_ran)
    p = np.full((20, 1000), 1e-3)
    y = np.ones(20, dtype=np.int64)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"^`bins` times the number of classes must be at "
                           r"most 10,000,000"):
            call(p, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20, peak  # a few copies of the 160 kB input, not 24 GB of bins


# ------------------------------------------------------------------ arrays of other libraries


class _Stream:
    """Nothing but the Arrow PyCapsule stream interface of a pyarrow object."""

    def __init__(self, native: Any) -> None:
        self._native = native

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._native.__arrow_c_stream__(requested_schema)


class _ArrowArray:
    """Nothing but the Arrow PyCapsule array interface of a pyarrow array."""

    def __init__(self, native: Any) -> None:
        self._native = native

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        return self._native.__arrow_c_array__(requested_schema)


class _DeviceArray:
    """A GPU array as DLPack shows one (no GPU here): its device is 2 (``kDLCUDA``),
    and its memory is handed over only as a host copy asked for through DLPack
    1.0's ``dl_device`` (what ``np.from_dlpack(x, device="cpu", copy=True)``, the
    array API's way, asks for). Each copy is logged."""

    def __init__(self, host: np.ndarray, log: list) -> None:
        self._host = host
        self._log = log

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: Any = None) -> Any:
        if dl_device is None or tuple(dl_device) != (1, 0) or copy is False:
            raise BufferError("device memory cannot be read by the host in place")
        self._log.append(self)
        return self._host.copy().__dlpack__(max_version=max_version)


def _array_libraries() -> dict[str, Callable[[np.ndarray, list], tuple[Any, np.ndarray]]]:
    """Each library's form of a numpy array ``a``: ``(the foreign array, the numpy
    array of the values and dtype it holds)``; the second is the reference."""
    torch = require("torch")
    jax = require("jax")
    jnp = require("jax.numpy")
    xs = require("array_api_strict")

    def jax64(a: np.ndarray, log: list) -> tuple[Any, np.ndarray]:
        with jax.enable_x64(True):
            return jnp.asarray(a), a

    def jax32(a: np.ndarray, log: list) -> tuple[Any, np.ndarray]:
        j = jnp.asarray(a)  # JAX's default: float32 and int32
        assert j.dtype != a.dtype
        return j, a.astype(np.dtype(j.dtype))

    def torch_grad(a: np.ndarray, log: list) -> tuple[Any, np.ndarray]:
        t = torch.tensor(a, requires_grad=a.dtype.kind == "f")
        log.append(t)
        return t, a

    return {
        "torch": lambda a, log: (torch.from_numpy(a.copy()), a),
        "torch requires_grad": torch_grad,
        "torch strided view": lambda a, log: (torch.from_numpy(np.repeat(a, 2, axis=0))[::2], a),
        "jax float64": jax64,
        "jax float32": jax32,
        "array-api-strict": lambda a, log: (xs.asarray(a), a),
        "GPU (DLPack device 2)": lambda a, log: (_DeviceArray(a, log), a),
    }


_LIBRARIES = ("torch", "torch requires_grad", "torch strided view", "jax float64",
              "jax float32", "array-api-strict", "GPU (DLPack device 2)", "mixed")
#: the library of each array argument in turn, for "mixed" (a torch p with a JAX y, ...)
_MIXED = ("torch", "jax float64", "array-api-strict")


def _outcome(func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        return func(**kwargs)
    except (InputError, InputTypeError) as err:
        return (type(err), str(err))


def _assert_same(got: Any, want: Any, where: str = "result") -> None:
    """``got`` is ``want`` bit for bit: the same types, floats, arrays and frames."""
    assert type(got) is type(want), (where, type(got), type(want))
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
    elif isinstance(want, pd.Series):
        pd.testing.assert_series_equal(got, want, check_exact=True)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype, where
        np.testing.assert_array_equal(got, want, strict=True, err_msg=where)
    elif isinstance(want, float):
        assert got == want or (math.isnan(got) and math.isnan(want)), (where, got, want)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_same(g, w, f"{where}[{i}]")
    elif hasattr(want, "__dataclass_fields__"):
        for name in want.__dataclass_fields__:
            _assert_same(getattr(got, name), getattr(want, name), f"{where}.{name}")
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("lib", _LIBRARIES)
@pytest.mark.parametrize("entry", [e for e in REGISTRY if e.arrays], ids=lambda e: e.name)
def test_arrays_of_other_libraries_give_the_numbers_of_numpy_bit_for_bit(entry, lib):
    """Every function that takes arrays, every metric of the registry in each of
    its forms among them: torch (the pinned CPU build), JAX (CPU) and
    array-api-strict arrays give the numbers of numpy arrays of the same values
    and dtype, bit for bit, and the same message when those are refused."""
    libraries = _array_libraries()
    args = entry.args()
    reference, foreign = dict(args), dict(args)
    log: list = []
    arrays = [name for name in entry.arrays if isinstance(args[name], np.ndarray)]
    assert arrays, entry.name
    for i, name in enumerate(arrays):
        form = _MIXED[i % len(_MIXED)] if lib == "mixed" else lib
        foreign[name], reference[name] = libraries[form](args[name], log)
    want = _outcome(entry.func, reference)
    got = _outcome(entry.func, foreign)
    _assert_same(got, want)
    if lib == "GPU (DLPack device 2)":  # each array copied to the host once per call
        assert sorted(map(id, log)) == sorted(id(foreign[name]) for name in arrays)
    if lib == "torch requires_grad":  # the graph is left as it was
        for t in log:
            assert t.grad is None and t.requires_grad == t.is_floating_point()


def _capsule_frame_calls() -> list[Entry]:
    return [e for e in REGISTRY if e.frame_columns and e.result in ("frame", "multicalibration")]


@pytest.mark.parametrize("entry", _capsule_frame_calls(), ids=lambda e: e.name)
def test_arrow_pycapsule_frames_give_the_numbers_of_pandas(entry):
    """A verb's ``data`` given as an object with only ``__arrow_c_stream__`` (a
    pyarrow Table behind it): pandas' numbers, bit for bit, in an Arrow Table."""
    args = entry.args()
    data = args.pop("data")
    want = entry.func(data=data, **args)
    frame, by = (data.obj, data.keys) if isinstance(data, DataFrameGroupBy) else (data, None)
    got = entry.func(data=_Stream(pa.Table.from_pandas(frame, preserve_index=False)),
                     **args, **({"by": by} if by is not None else {}))
    if entry.result == "frame":
        assert isinstance(got, pa.Table)
        pd.testing.assert_frame_equal(got.to_pandas(), want.reset_index(drop=True),
                                      check_exact=True, check_dtype=False)
    else:
        _assert_same(got, want)


@pytest.mark.parametrize("entry", _float_metric_entries(), ids=lambda e: e.name)
def test_arrow_pycapsule_columns_give_the_numbers_of_numpy(entry):
    """``p`` and ``y`` as objects with only ``__arrow_c_stream__`` (a column, or a
    frame of class columns) or ``__arrow_c_array__``: numpy's numbers, bit for bit."""
    args = entry.args()
    p, y = args.pop("p"), args.pop("y")
    want = entry.func(p, y, **args)
    if p.ndim == 2:
        names = LABELS[y - 1]
        forms = [(_Stream(pa.Table.from_pandas(pd.DataFrame(p, columns=LABELS))),
                  _ArrowArray(pa.array(names))),
                 (_Stream(pa.Table.from_pandas(pd.DataFrame(p, columns=LABELS))),
                  _Stream(pa.chunked_array([names[:7], names[7:]])))]
    else:
        forms = [(_Stream(pa.chunked_array([p[:5], p[5:]])), _ArrowArray(pa.array(y))),
                 (_ArrowArray(pa.array(p)), _Stream(pa.chunked_array([y])))]
    for pp, yy in forms:
        assert entry.func(pp, yy, **args) == want
