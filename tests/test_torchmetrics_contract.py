"""The exception contract of ``calibr.torchmetrics``, over every public entry point.

``REGISTRY`` holds every public function and method with one valid call. The
tests corrupt ONE argument at a time (a fixed catalogue, run exhaustively, and
hypothesis strategies over dtypes, shapes, containers and values) and check:

* the call succeeds or raises ``calibr.InputError`` / ``calibr.InputTypeError``
  (``InputRuntimeError`` is an ``InputError``): no other exception escapes;
* an error message names the corrupted argument, in backticks;
* no input is changed: arrays and tensors byte for byte, pandas objects, lists,
  the other metric of ``merge``; a generator is not even started.

The invariance test checks that the same data in another container or layout
give the same number. Tests that build tensors take the ``torchmetrics_mod``
fixture, which fails (not skips) under ``CALIBR_REQUIRE_TORCH=1``.
"""

from __future__ import annotations

import copy
import inspect
import tempfile
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import calibr.torchmetrics as ctm
from calibr import InputError, InputTypeError
from calibr._input import MAX_BINS
from calibr.torchmetrics import (
    BinaryCalibrationError,
    InputRuntimeError,
    MulticlassCalibrationError,
    binary_calibration_error,
    multiclass_calibration_error,
)

ALLOWED = (InputError, InputTypeError)

PB = np.array([0.1, 0.4, 0.8, 0.95, 0.3, 0.6])
TB = np.array([0, 0, 1, 1, 0, 1])
PM = np.array(
    [
        [0.2, 0.5, 0.3],
        [0.6, 0.3, 0.1],
        [0.1, 0.1, 0.8],
        [0.3, 0.4, 0.3],
        [0.5, 0.25, 0.25],
        [0.0, 1.0, 0.0],
    ]
)
TM = np.array([1, 0, 2, 2, 0, 1])


# --------------------------------------------------------------------------
# the registry: every public callable, one valid call each


def _updated_binary(dtype=np.float64) -> BinaryCalibrationError:
    m = BinaryCalibrationError(n_bins=5)
    m.update(PB.astype(dtype), TB)
    return m


def _updated_multiclass() -> MulticlassCalibrationError:
    m = MulticlassCalibrationError(3, n_bins=5)
    m.update(PM, TM)
    return m


def _binary_args() -> dict:
    return {
        "preds": PB.copy(),
        "target": TB.copy(),
        "n_bins": 5,
        "norm": "l1",
        "ignore_index": None,
        "validate_args": True,
    }


def _multiclass_args() -> dict:
    return {
        "preds": PM.copy(),
        "target": TM.copy(),
        "num_classes": 3,
        "n_bins": 5,
        "norm": "l1",
        "ignore_index": None,
        "validate_args": True,
    }


def _settings(args: dict) -> dict:
    return {k: v for k, v in args.items() if k not in ("preds", "target")}


def _data(args: dict) -> dict:
    return {k: args[k] for k in ("preds", "target")}


#: name -> (valid arguments, roles of the arguments, the call)
REGISTRY: dict[str, tuple[Callable[[], dict], dict[str, str], Callable[[dict], Any]]] = {
    "binary_calibration_error": (
        _binary_args,
        {"preds": "preds_b", "target": "target_b"},
        lambda a: binary_calibration_error(**a),
    ),
    "multiclass_calibration_error": (
        _multiclass_args,
        {"preds": "preds_m", "target": "target_m"},
        lambda a: multiclass_calibration_error(**a),
    ),
    "BinaryCalibrationError.__init__": (
        lambda: _settings(_binary_args()),
        {},
        lambda a: BinaryCalibrationError(**a),
    ),
    "MulticlassCalibrationError.__init__": (
        lambda: _settings(_multiclass_args()),
        {},
        lambda a: MulticlassCalibrationError(**a),
    ),
    "BinaryCalibrationError.update": (
        lambda: _data(_binary_args()),
        {"preds": "preds_b", "target": "target_b"},
        lambda a: BinaryCalibrationError(n_bins=5).update(**a),
    ),
    "BinaryCalibrationError.update (after a float64 batch)": (
        lambda: _data(_binary_args()),
        {"preds": "preds_b", "target": "target_b"},
        lambda a: _updated_binary().update(**a),
    ),
    "MulticlassCalibrationError.update": (
        lambda: _data(_multiclass_args()),
        {"preds": "preds_m", "target": "target_m"},
        lambda a: _updated_multiclass().update(**a),
    ),
    "BinaryCalibrationError.merge": (
        lambda: {"other": _updated_binary()},
        {"other": "other_b"},
        lambda a: _updated_binary().merge(**a),
    ),
    "MulticlassCalibrationError.merge": (
        lambda: {"other": _updated_multiclass()},
        {"other": "other_m"},
        lambda a: _updated_multiclass().merge(**a),
    ),
    "BinaryCalibrationError.compute": ({}, {}, lambda a: _updated_binary().compute()),
    "MulticlassCalibrationError.compute": ({}, {}, lambda a: _updated_multiclass().compute()),
    "BinaryCalibrationError.reset": ({}, {}, lambda a: _updated_binary().reset()),
    "MulticlassCalibrationError.reset": ({}, {}, lambda a: _updated_multiclass().reset()),
}
for _name, (_valid, _roles, _call) in list(REGISTRY.items()):
    if callable(_valid):
        for _arg in _valid():
            _roles.setdefault(_arg, _arg)  # n_bins, norm, ignore_index, validate_args, ...
    else:
        REGISTRY[_name] = (dict, _roles, _call)


def test_registry_covers_every_public_callable():
    public = set()
    for name in ctm.__all__:
        obj = getattr(ctm, name)
        if inspect.isclass(obj):
            public.add(f"{name}.__init__")
            public.update(
                f"{name}.{m}"
                for m, _ in inspect.getmembers(obj, inspect.isfunction)
                if not m.startswith("_")
            )
        else:
            public.add(name)
    assert public == {n.split(" (")[0] for n in REGISTRY}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_valid_call_succeeds(name):
    valid, _, call = REGISTRY[name]
    call(valid())


# --------------------------------------------------------------------------
# snapshots: "no input is changed"


def _snapshot(x: Any) -> Any:
    torch = _torch_or_none()
    if torch is not None and isinstance(x, torch.Tensor):
        if x.device.type == "meta":
            return ("meta tensor", x.dtype, tuple(x.shape))
        dense = x.to_dense() if x.layout != torch.strided else x
        raw = dense.detach().resolve_neg().resolve_conj().flatten().clone()
        if raw.numel() and (raw.dtype.is_floating_point or raw.dtype.is_complex):
            raw = raw.view(torch.uint8)  # bits, so that NaN equals NaN
        return (
            "tensor",
            x.dtype,
            tuple(x.shape),
            x.stride() if x.layout == torch.strided else None,
            x.requires_grad,
            x.grad,
            x.is_neg(),
            raw.tolist(),
        )
    if isinstance(x, np.ma.MaskedArray):
        return ("masked", _snapshot(np.ma.getdata(x)), np.ma.getmaskarray(x).tobytes())
    if isinstance(x, np.ndarray):
        return (
            "array",
            type(x),
            x.dtype.str,
            x.shape,
            x.strides,
            x.flags.writeable,
            x.flags.c_contiguous,
            x.tobytes(order="A") if x.dtype != object else repr(x),
        )
    if isinstance(x, (pd.Series, pd.DataFrame)):
        return (
            "pandas",
            type(x),
            repr(getattr(x, "dtypes", None)),
            repr(x.dtype) if isinstance(x, pd.Series) else None,
            x.copy(deep=True),
        )
    if inspect.isgenerator(x):
        return ("generator", inspect.getgeneratorstate(x))
    if isinstance(x, (BinaryCalibrationError, MulticlassCalibrationError)):
        state = [None if a is None else a.copy() for a in (x._count, x._conf_sum, x._acc_sum)]
        return ("metric", x._config(), x._dtype, x._updated, state)
    if isinstance(x, (list, tuple, dict, set)):
        return ("container", type(x), repr(x))
    return ("other", type(x), repr(x))


def _same_snapshot(a: Any, b: Any) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "pandas":
        return a[:4] == b[:4] and a[4].equals(b[4])
    if a[0] == "metric":
        return a[:4] == b[:4] and all(
            (x is None and y is None) or np.array_equal(x, y, equal_nan=True)
            for x, y in zip(a[4], b[4], strict=True)
        )
    return a == b


def _torch_or_none():
    import sys

    return sys.modules.get("torch")


def _check_contract(name: str, arg: str, value_factory: Callable[[], Any]) -> str:
    """Call entry ``name`` with ``arg`` replaced; check the contract. Returns the outcome."""
    valid, _, call = REGISTRY[name]
    args = valid()
    args[arg] = value_factory()
    before = {k: _snapshot(v) for k, v in args.items()}
    try:
        call(args)
        outcome = "ok"
    except ALLOWED as err:
        outcome = type(err).__name__
        assert f"`{arg}`" in str(err) or (
            arg in ("preds", "target") and ("`preds`" in str(err) or "`target`" in str(err))
        ), f"{name}({arg}=...): the message does not name the argument: {err}"
        if isinstance(err, RuntimeError):
            assert isinstance(err, InputRuntimeError)
    except Exception as err:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{name}({arg}=...): {type(err).__module__}.{type(err).__name__}: {err}")
    for k, v in args.items():
        assert _same_snapshot(before[k], _snapshot(v)), f"{name}: argument `{k}` was changed"
    return outcome


# --------------------------------------------------------------------------
# the catalogue of corruptions, by role


def _with(base: np.ndarray, position: int, value: Any, dtype=None) -> np.ndarray:
    out = base.astype(dtype or (float if isinstance(value, float) else base.dtype))
    out.flat[position] = value
    return out


def _readonly(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def _memmap(a: np.ndarray) -> np.memmap:
    mm = np.memmap(tempfile.TemporaryFile(), dtype=a.dtype, mode="w+", shape=a.shape)
    mm[...] = a
    return mm


def _matrix(a: np.ndarray) -> np.matrix:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.asmatrix(a if a.ndim == 2 else a[None])


def _array_corruptions(base: np.ndarray) -> dict[str, Callable[[], Any]]:
    """Corruptions of an array argument (some are valid on purpose: layouts, orders)."""
    n = base.shape[0]
    c: dict[str, Callable[[], Any]] = {
        # dtypes
        "float16": lambda: base.astype(np.float16),
        "float32": lambda: base.astype(np.float32),
        "longdouble": lambda: base.astype(np.longdouble),
        "big-endian": lambda: base.astype(base.dtype.newbyteorder(">")),
        "little-endian explicit": lambda: base.astype(base.dtype.newbyteorder("<")),
        "object of floats": lambda: base.astype(object),
        "object with a huge int": lambda: _with(base.astype(object), 0, 10**400, object),
        "complex": lambda: base.astype(np.complex128),
        "datetime": lambda: np.zeros(base.shape, "M8[ns]"),
        "timedelta": lambda: np.zeros(base.shape, "m8[s]"),
        "strings": lambda: base.astype(str),
        "bytes": lambda: base.astype("S8"),
        "bool": lambda: base.astype(bool),
        "int8": lambda: base.astype(np.int8),
        "uint8 255": lambda: np.full(base.shape, 255, np.uint8),
        "uint64 max": lambda: np.full(base.shape, 2**64 - 1, np.uint64),
        "uint64 2**63": lambda: _with(base.astype(np.uint64), 1, 2**63, np.uint64),
        "int64 min": lambda: _with(base.astype(np.int64), 1, -(2**63), np.int64),
        # shapes
        "0-d": lambda: np.asarray(base.flat[0]),
        "3-d": lambda: base.reshape(base.shape + (1, 1)),
        "one more dim": lambda: base[:, None],
        "transposed": lambda: base.T.copy(),
        "empty": lambda: base[:0].copy(),
        "one shorter": lambda: base[:-1].copy(),
        "ragged list": lambda: [list(map(float, np.atleast_1d(r))) for r in base][:-1] + [[0.5]],
        "3-d nested list": lambda: base.reshape(base.shape + (1,)).tolist(),
        # containers and layouts
        "list": lambda: base.tolist(),
        "tuple": lambda: tuple(base.tolist()),
        "range": lambda: range(n),
        "generator": lambda: (v for v in base.tolist()),
        "iterator": lambda: iter(base.tolist()),
        "set": lambda: set(base.ravel().tolist()),
        "frozenset": lambda: frozenset(base.ravel().tolist()),
        "dict": lambda: dict(enumerate(base.tolist())),
        "None": lambda: None,
        "str": lambda: "0101",
        "bytes object": lambda: b"\x00\x01",
        "bytearray": lambda: bytearray(b"\x00\x01"),
        "object()": object,
        "int scalar": lambda: 1,
        "float scalar": lambda: 0.5,
        "huge int scalar": lambda: 2**70,
        "numpy scalar": lambda: np.float64(0.5),
        "F-order": lambda: np.asfortranarray(base),
        "read-only": lambda: _readonly(base),
        "strided": lambda: np.repeat(base, 2, axis=0)[::2],
        "negative strides": lambda: base[::-1],
        "memory-map": lambda: _memmap(base),
        "masked, one masked": lambda: np.ma.masked_array(
            base, mask=(np.arange(base.size) == 1).reshape(base.shape)
        ),
        "masked, none masked": lambda: np.ma.masked_array(base),
        "matrix": lambda: _matrix(base),
        "list with a huge int": lambda: [2**70, *base.tolist()[1:]],
        "list with None": lambda: [None, *base.tolist()[1:]],
        "list with a string": lambda: ["a", *base.tolist()[1:]],
        "list with a complex": lambda: [1j, *base.tolist()[1:]],
        "list of arrays": lambda: list(base),
        # pandas
        "pandas": lambda: pd.DataFrame(base) if base.ndim == 2 else pd.Series(base),
        "pandas Float64 with NA": lambda: (
            pd.DataFrame(base).astype("Float64").mask(np.eye(n, base.shape[1], dtype=bool))
            if base.ndim == 2
            else pd.Series(base, dtype="Float64").mask(np.eye(1, n, dtype=bool)[0])
        ),
        "pandas Int64": lambda: (
            pd.DataFrame(base).round().astype("Int64")
            if base.ndim == 2
            else pd.Series(base.round(), dtype="Int64")
        ),
        "pandas Int64 with NA": lambda: pd.Series(
            [pd.NA, *base.ravel()[1:n].round()], dtype="Int64"
        ),
        "pandas boolean with NA": lambda: pd.Series([pd.NA] + [True] * (n - 1), dtype="boolean"),
        "pandas double[pyarrow] with NA": lambda: pd.Series(
            [None, *base.ravel()[1:n]], dtype="double[pyarrow]"
        ),
        "pandas int64[pyarrow]": lambda: pd.Series(
            base.ravel()[:n].round().astype(int), dtype="int64[pyarrow]"
        ),
        "pandas string[pyarrow]": lambda: pd.Series(["0"] * n, dtype="string[pyarrow]"),
        "pandas timestamp[pyarrow]": lambda: pd.Series(
            pd.date_range("2020-01-01", periods=n)
        ).astype("timestamp[ns][pyarrow]"),
        "pandas categorical strings": lambda: pd.Series(pd.Categorical(["a", "b"] * (n // 2))),
        "pandas categorical ints": lambda: pd.Series(pd.Categorical([0, 1] * (n // 2))),
        "pandas datetime": lambda: pd.Series(pd.date_range("2020-01-01", periods=n)),
        "pandas mixed DataFrame": lambda: pd.DataFrame({"a": [0.5] * n, "b": ["x"] * n}),
        "pandas Index": lambda: pd.Index(base.ravel()[:n]),
        # values
        "NaN": lambda: _with(base, 1, np.nan),
        "all NaN": lambda: np.full(base.shape, np.nan),
        "inf": lambda: _with(base, 1, np.inf),
        "-inf": lambda: _with(base, 1, -np.inf),
        "huge": lambda: _with(base, 1, 1e308),
        "tiny": lambda: _with(base, 1, 5e-324),
        "negative": lambda: _with(base, 1, -1.0),
        "out of range": lambda: _with(base, 1, 2.0),
        "one half": lambda: _with(base, 1, 0.5),
        "-100": lambda: _with(base.astype(np.int64), 1, -100),
        "huge int": lambda: _with(base.astype(np.int64), 1, 2**62),
    }
    return c


def _tensor_corruptions(base: np.ndarray) -> dict[str, Callable[[], Any]]:
    import torch

    t = torch.from_numpy(base.copy())
    return {
        "tensor": lambda: t.clone(),
        "tensor float32": lambda: t.float(),
        "tensor requires_grad": lambda: t.double().requires_grad_(True),
        "tensor bfloat16": lambda: t.to(torch.bfloat16),
        "tensor float16": lambda: t.to(torch.float16),
        "tensor float8": lambda: t.float().to(torch.float8_e4m3fn),
        "tensor int64": lambda: t.round().long() if t.is_floating_point() else t.long(),
        "tensor uint8": lambda: t.to(torch.uint8),
        "tensor bool": lambda: t.bool(),
        "tensor complex": lambda: t.to(torch.complex64),
        "tensor sparse": lambda: t.double().to_sparse(),
        "tensor meta": lambda: torch.empty(t.shape, device="meta"),
        "tensor non-contiguous": lambda: torch.repeat_interleave(t, 2, dim=0)[::2],
        "tensor transposed": lambda: t.T.clone() if t.dim() == 2 else t.clone(),
        "tensor 0-d": lambda: t.reshape(-1)[0].clone(),
        "tensor negative view": lambda: (-t.double())._neg_view(),
        "tensor NaN": lambda: torch.from_numpy(_with(base, 1, np.nan)),
        "list of requires_grad tensors": lambda: [
            torch.tensor(float(v), requires_grad=True) for v in base.ravel()
        ][: base.shape[0]],
        "list of tensors": lambda: [torch.tensor(float(v)) for v in base.ravel()][: base.shape[0]],
    }


_SCALAR_CORRUPTIONS: dict[str, list[Any]] = {
    "n_bins": [
        0,
        -1,
        2.5,
        15.0,
        True,
        np.bool_(True),
        "15",
        None,
        10**12,
        MAX_BINS + 1,
        2**70,
        np.uint64(2**64 - 1),
        float("nan"),
        float("inf"),
        [15],
        np.array(15),
        np.int64(15),
        np.int8(3),
        1j,
        1000,
    ],
    "norm": ["L1", "l3", "", None, 1, b"l1", ["l1"], np.str_("max"), "max", "l2"],
    "ignore_index": [
        True,
        1.5,
        "x",
        2**63,
        -(2**63) - 1,
        2**70,
        np.int64(-1),
        np.uint64(2**64 - 1),
        np.float64(1),
        [1],
        None,
        -1,
        255,
        1,
        0,
        -(2**63),
    ],
    "validate_args": [
        "no",
        "False",
        None,
        1,
        0,
        np.array([1, 2]),
        np.bool_(False),
        [True],
        1.0,
        False,
    ],
    "num_classes": [1, 0, -3, True, 3.0, "3", None, 10**30, np.int64(3), 2, 4, [3]],
}


def _other_corruptions(cls) -> dict[str, Callable[[], Any]]:
    if cls is BinaryCalibrationError:
        same = _updated_binary
        different = [
            lambda: BinaryCalibrationError(n_bins=6),
            lambda: _updated_binary(np.float32),
            lambda: BinaryCalibrationError(n_bins=5, ignore_index=1),
            lambda: BinaryCalibrationError(n_bins=5, norm="max"),
            lambda: BinaryCalibrationError(n_bins=5, validate_args=False),
            lambda: BinaryCalibrationError(n_bins=5),
            _updated_multiclass,
        ]
    else:
        same = _updated_multiclass
        different = [
            lambda: MulticlassCalibrationError(4, n_bins=5),
            lambda: MulticlassCalibrationError(3, n_bins=5),
            lambda: MulticlassCalibrationError(3, n_bins=7),
            _updated_binary,
        ]
    c = {f"metric {i}": f for i, f in enumerate(different)}
    c.update(
        {
            "int": lambda: 3,
            "None": lambda: None,
            "str": lambda: "metric",
            "array": lambda: np.zeros(6),
            "dict": lambda: same().__dict__.copy(),
            "class itself": lambda: type(same()),
        }
    )
    return c


def _catalogue(role: str, with_torch: bool) -> dict[str, Callable[[], Any]]:
    if role in _SCALAR_CORRUPTIONS:
        return {repr(v): (lambda v=v: copy.deepcopy(v)) for v in _SCALAR_CORRUPTIONS[role]}
    if role == "other_b":
        return _other_corruptions(BinaryCalibrationError)
    if role == "other_m":
        return _other_corruptions(MulticlassCalibrationError)
    base = {"preds_b": PB, "target_b": TB, "preds_m": PM, "target_m": TM}[role]
    return _tensor_corruptions(base) if with_torch else _array_corruptions(base)


def _cases(with_torch: bool) -> list[tuple[str, str, str]]:
    out = []
    for name, (_, roles, _) in REGISTRY.items():
        for arg, role in roles.items():
            if with_torch and role not in ("preds_b", "target_b", "preds_m", "target_m"):
                continue
            out.extend((name, arg, label) for label in _catalogue(role, with_torch))
    return out


CASES = _cases(with_torch=False)


def test_catalogue_without_torch_keeps_the_contract():
    outcomes: dict[str, int] = {}
    for name, arg, label in CASES:
        role = REGISTRY[name][1][arg]
        outcome = _check_contract(name, arg, _catalogue(role, False)[label])
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    # the catalogue exercises both sides: valid variants and every kind of refusal
    assert outcomes.get("ok", 0) > 100 and outcomes.get("InputError", 0) > 300
    assert outcomes.get("InputTypeError", 0) > 50 and outcomes.get("InputRuntimeError", 0) > 20


@pytest.mark.torch
def test_catalogue_of_tensors_keeps_the_contract(torchmetrics_mod):
    outcomes: dict[str, int] = {}
    for name, arg, label in _cases(with_torch=True):
        role = REGISTRY[name][1][arg]
        outcome = _check_contract(name, arg, _catalogue(role, True)[label])
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes.get("ok", 0) > 20 and outcomes.get("InputError", 0) > 20
    assert outcomes.get("InputTypeError", 0) > 5


# --------------------------------------------------------------------------
# hypothesis: random dtypes, shapes, containers and values for one argument

_DTYPES = [
    np.float64,
    np.float32,
    np.float16,
    np.int64,
    np.int32,
    np.uint8,
    np.uint64,
    np.int8,
    np.bool_,
    np.complex128,
    "M8[ns]",
    "m8[s]",
    np.longdouble,
]

_SPECIAL_FLOATS = [
    np.nan,
    np.inf,
    -np.inf,
    0.0,
    -0.0,
    1.0,
    0.5,
    -1.0,
    2.0,
    1e308,
    -1e308,
    5e-324,
    2.0**24,
    2.0**53,
    2.0**63,
    2.0**64,
    -(2.0**63),
]
_SPECIAL_INTS = [0, 1, -1, 2, 255, -100, 2**31, 2**62, 2**63 - 1, -(2**63), 2**64 - 1]


@st.composite
def _arrays(draw) -> np.ndarray:
    """A numpy array of a random dtype, shape (0-d to 3-d) and special values."""
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    if dtype.kind in "f":
        elements = st.sampled_from(_SPECIAL_FLOATS) | st.floats(0, 1, width=32)
        with np.errstate(over="ignore"):
            values = draw(
                st.lists(elements, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))
            )
            arr = np.array(values, dtype=np.float64).astype(dtype).reshape(shape)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        ints = [v for v in _SPECIAL_INTS if info.min <= v <= info.max]
        arr = draw(hnp.arrays(dtype, shape, elements=st.sampled_from(ints)))
    else:
        arr = draw(hnp.arrays(dtype, shape))
    if draw(st.booleans()) and arr.dtype.itemsize > 1 and arr.dtype.kind in "iufc":
        arr = arr.astype(arr.dtype.newbyteorder(">"))
    return arr


@st.composite
def _containers(draw, with_torch: bool) -> Callable[[], Any]:
    """A factory of one input: a random array in a random container or layout."""
    arr = draw(_arrays())
    kinds = [
        "ndarray",
        "list",
        "tuple",
        "F-order",
        "read-only",
        "strided",
        "memmap",
        "masked",
        "pandas",
        "object",
        "generator",
        "set",
        "dict",
    ]
    if with_torch:
        kinds += ["tensor", "tensor requires_grad", "tensor bfloat16"]
    kind = draw(st.sampled_from(kinds))

    def make() -> Any:
        a = arr.copy()
        if kind == "list":
            return a.tolist()
        if kind == "tuple":
            return tuple(a.tolist()) if a.ndim else a.tolist()
        if kind == "F-order":
            return np.asfortranarray(a)
        if kind == "read-only":
            return _readonly(a)
        if kind == "strided":
            return np.repeat(a, 2, axis=0)[::2] if a.ndim else a
        if kind == "memmap":
            return _memmap(a) if a.ndim and a.size and a.dtype.kind != "O" else a
        if kind == "masked":
            return np.ma.masked_array(a, mask=np.arange(a.size).reshape(a.shape) == 1)
        if kind == "pandas":
            if a.ndim == 1:
                return pd.Series(a.astype(a.dtype.newbyteorder("=")))
            if a.ndim == 2:
                return pd.DataFrame(a.astype(a.dtype.newbyteorder("=")))
            return a
        if kind == "object":
            return a.astype(object)
        if kind == "generator":
            return (v for v in a.ravel().tolist())
        if kind == "set":
            return set(a.ravel().tolist())
        if kind == "dict":
            return dict(enumerate(a.ravel().tolist()))
        if kind.startswith("tensor"):
            import torch

            native = a.astype(a.dtype.newbyteorder("="))
            if native.dtype.kind in "mMO" or native.dtype == np.longdouble:
                return native
            t = torch.from_numpy(native)
            if kind == "tensor requires_grad" and t.is_floating_point():
                return t.double().requires_grad_(True)
            if kind == "tensor bfloat16":
                return t.to(torch.bfloat16) if not t.is_complex() else t
            return t
        return a

    return make


_SCALARS = (
    st.integers(-(2**70), 2**70)
    | st.sampled_from([0, 1, 2, 3, 15, 1000, MAX_BINS + 1, -1, 255, 2**63, -(2**63)])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.none()
    | st.text(max_size=3)
    | st.sampled_from(["l1", "l2", "max", np.int64(4), np.bool_(True), np.float32(3.0)])
)


def _hypothesis_case(data, with_torch: bool) -> None:
    name = data.draw(st.sampled_from([n for n in REGISTRY if REGISTRY[n][1]]), label="entry")
    roles = REGISTRY[name][1]
    arg = data.draw(st.sampled_from(sorted(roles)), label="argument")
    role = roles[arg]
    if role.startswith(("preds", "target")):
        factory = data.draw(_containers(with_torch), label="value")
    elif role.startswith("other"):
        factory = data.draw(
            st.sampled_from(
                list(
                    _other_corruptions(
                        BinaryCalibrationError if role == "other_b" else MulticlassCalibrationError
                    ).values()
                )
            ),
            label="other",
        )
    else:
        value = data.draw(_SCALARS, label="value")
        factory = lambda: copy.deepcopy(value)  # noqa: E731
    _check_contract(name, arg, factory)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_random_corruptions_keep_the_contract(data):
    _hypothesis_case(data, with_torch=False)


@pytest.mark.torch
def test_random_corruptions_with_tensors_keep_the_contract(torchmetrics_mod):
    @settings(max_examples=150, deadline=None, derandomize=True, database=None)
    @given(data=st.data())
    def run(data):
        _hypothesis_case(data, with_torch=True)

    run()


# --------------------------------------------------------------------------
# invariance: the same data in another container or layout, the same number

#: float32-exact values (multiples of 1/64), so float32 and float64 bin alike.
_RNG = np.random.default_rng(2024)
_P = _RNG.integers(0, 65, 48) / 64
_Y = (_RNG.random(48) < _P).astype(np.int64)
_PM = _RNG.integers(1, 17, (48, 4)).astype(float)
_PM = np.round(_PM / _PM.sum(axis=1, keepdims=True) * 1024) / 1024  # float32-exact
_YM = _RNG.integers(0, 4, 48)


def _layouts(a: np.ndarray) -> dict[str, Any]:
    return {
        "ndarray": a,
        "F-order": np.asfortranarray(a),
        "read-only": _readonly(a),
        "strided": np.repeat(a, 3, axis=0)[::3],
        "memory-map": _memmap(a),
        "big-endian": a.astype(a.dtype.newbyteorder(">")),
        "pandas": pd.DataFrame(a) if a.ndim == 2 else pd.Series(a),
        "masked, none masked": np.ma.masked_array(a),
    }


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_same_value_for_every_container_and_layout(norm):
    for dtype in (np.float64, np.float32):
        ref_b = binary_calibration_error(_P.astype(dtype), _Y, 7, norm)
        ref_m = multiclass_calibration_error(_PM.astype(dtype), _YM, 4, 7, norm)
        for label, p in _layouts(_P.astype(dtype)).items():
            for y in _layouts(_Y).values():
                assert binary_calibration_error(p, y, 7, norm) == ref_b, label
        for label, p in _layouts(_PM.astype(dtype)).items():
            for y in _layouts(_YM).values():
                assert multiclass_calibration_error(p, y, 4, 7, norm) == ref_m, label
        # the streaming classes, in two batches, give the function's value
        m = MulticlassCalibrationError(4, 7, norm)
        m.update(_PM[:20].astype(dtype), _YM[:20])
        m.update(pd.DataFrame(_PM[20:].astype(dtype)), pd.Series(_YM[20:]))
        assert m.compute() == pytest.approx(ref_m, abs=1e-6)
    # float32 and float64: binary works in the dtype of preds (equal within float32
    # rounding); multiclass takes float32 confidences (equal to the bit here)
    b32 = binary_calibration_error(_P.astype(np.float32), _Y, 7, norm)
    b64 = binary_calibration_error(_P, _Y, 7, norm)
    assert b32.dtype == np.float32 and b64.dtype == np.float64
    assert float(b32) == pytest.approx(float(b64), abs=1e-6)
    assert multiclass_calibration_error(
        _PM.astype(np.float32), _YM, 4, 7, norm
    ) == multiclass_calibration_error(_PM, _YM, 4, 7, norm)
    # lists are read as torch.tensor reads them: Python floats are float32
    assert binary_calibration_error(_P.tolist(), _Y.tolist(), 7, norm) == b32
    assert multiclass_calibration_error(_PM.tolist(), _YM.tolist(), 4, 7, norm) == (
        multiclass_calibration_error(_PM.astype(np.float32), _YM, 4, 7, norm)
    )
    # targets of another integer or float dtype: the same classes
    for y in (_Y.astype(np.int8), _Y.astype(np.uint64), _Y.astype(np.float32), _Y.astype(bool)):
        assert binary_calibration_error(_P, y, 7, norm) == b64
    # rows in another order: the same bins, sums in another order (float64 rounding)
    order = _RNG.permutation(48)
    assert float(binary_calibration_error(_P[order], _Y[order], 7, norm)) == pytest.approx(
        float(b64), abs=1e-12
    )


@pytest.mark.torch
def test_same_value_for_tensors(torchmetrics_mod):
    import torch

    for dtype in (np.float64, np.float32):
        p, P = _P.astype(dtype), _PM.astype(dtype)
        ref_b = binary_calibration_error(p, _Y, 7)
        ref_m = multiclass_calibration_error(P, _YM, 4, 7)
        for tp in (
            torch.from_numpy(p),
            torch.from_numpy(p).requires_grad_(True),
            torch.from_numpy(np.repeat(p, 2))[::2],
        ):
            assert binary_calibration_error(tp, torch.from_numpy(_Y), 7) == ref_b
        for tP in (
            torch.from_numpy(P),
            torch.from_numpy(np.asfortranarray(P)),
            torch.from_numpy(P.T.copy()).T,
            torch.from_numpy(P).requires_grad_(True),
        ):
            assert multiclass_calibration_error(tP, torch.from_numpy(_YM), 4, 7) == ref_m
