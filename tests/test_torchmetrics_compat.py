"""calibr.torchmetrics against torchmetrics 1.9 itself.

Tolerances (``tolerances.py``): on probabilities, l1 and max are the same bits
as torchmetrics' and l2 agrees to ``TORCHMETRICS_ATOL64`` / ``TORCHMETRICS_ATOL32``
(torch's sqrt is not correctly rounded); on logits every norm agrees to those
tolerances, and calibr's sigmoid and softmax are within ``LOGIT_ULPS`` of
torch's (``docs/torchmetrics.md``, "Logits"). Tests that need torch use the
``torchmetrics_mod`` fixture and the ``torch`` mark; the rest run anywhere.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import require
from oracles.torchmetrics import (
    accumulate_oracle,
    sigmoid_oracle,
    softmax_oracle,
    top_label_oracle,
)
from tolerances import LOGIT_ULPS, TORCHMETRICS_ATOL32, TORCHMETRICS_ATOL64

from calibr import InputError, InputTypeError
from calibr._kernels import torchmetrics_kernels as K
from calibr._kernels.top_label import first_max
from calibr.torchmetrics import (
    BinaryCalibrationError,
    InputRuntimeError,
    MulticlassCalibrationError,
    binary_calibration_error,
    multiclass_calibration_error,
)

TOL64 = TORCHMETRICS_ATOL64
TOL32 = TORCHMETRICS_ATOL32

NORMS = ("l1", "l2", "max")


# --------------------------------------------------------------------------
# helpers


def _tm_fn(tm, name):
    return getattr(tm.functional.classification, name)


def _tensor(a):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a))


def _same(ours, theirs, dtype, context="", exact=False):
    """Same value within the dtype's tolerance (or bit for bit), same dtype."""
    import torch

    if theirs.dtype == torch.int64:
        assert isinstance(ours, np.int64) and ours == theirs.item() == 0, context
        return
    assert ours.dtype == np.dtype(str(theirs.dtype).removeprefix("torch.")), context
    t = theirs.item()
    if np.isnan(t):
        assert np.isnan(ours), context
        return
    if exact:
        assert float(ours) == t, f"{context}: calibr {float(ours)!r} torchmetrics {t!r}"
    tol = TOL64 if ours.dtype == np.float64 else TOL32
    assert abs(float(ours) - t) <= tol, f"{context}: calibr {float(ours)!r} torchmetrics {t!r}"


def _bitwise_expected(p, y, ignore, norm, multiclass=False):
    """Bit-for-bit equality is expected for norm l1 or max on probabilities.

    The per-bin sums, the elementwise steps and the sums over the bins follow torch's
    order exactly. Not so for l2 (torch's CPU sqrt comes from MKL's vector library and
    is not correctly rounded: 1 ulp off for about 20% of float32 and 1% of float64
    values), nor for logits (calibr's sigmoid and softmax use libm's exp, torch's
    SLEEF's: a few ulps apart).
    """
    if norm == "l2":
        return False
    if multiclass:
        kept = np.moveaxis(p, 1, -1)[y != ignore] if ignore is not None else p
    else:
        kept = p[y != ignore] if ignore is not None else p
    return bool(((kept >= 0) & (kept <= 1)).all())


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in ulps between two float arrays of one dtype (same sign or zero)."""
    assert a.dtype == b.dtype
    as_int = np.int32 if a.dtype == np.float32 else np.int64
    return np.abs(a.view(as_int).astype(np.int64) - b.view(as_int).astype(np.int64))


def _random_binary_case(rng, dtype):
    """One random binary case: shape, values (probabilities, logits or boundaries)."""
    n_bins = int(rng.integers(1, 101))
    shape = (int(rng.integers(1, 60)),)
    if rng.random() < 0.25:
        shape = (int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    n = int(np.prod(shape))
    kind = int(rng.integers(0, 4))
    if kind == 0:
        p = rng.random(n)
    elif kind == 1:  # logits
        p = rng.normal(scale=4.0, size=n)
    elif kind == 2:  # exactly on torch's boundaries, upper half included
        p = K.torch_linspace(n_bins + 1, dtype)[rng.integers(0, n_bins + 1, n)]
    else:  # 0, 1 and a few coarse values
        p = rng.choice([0.0, 1.0, 0.5, 0.25, 0.75, 1 / 3], n)
    p = p.astype(dtype).reshape(shape)
    y = rng.integers(0, 2, shape)
    ignore = None
    if rng.random() < 0.3:
        ignore = int(rng.choice([-100, -1, 2, 255]))
        y[rng.random(shape) < rng.random()] = ignore
    return p, y, n_bins, ignore


def _random_multiclass_case(rng, dtype):
    n_bins = int(rng.integers(1, 101))
    k = int(rng.integers(2, 8))
    n = int(rng.integers(1, 60))
    extra = () if rng.random() < 0.75 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    kind = int(rng.integers(0, 4))
    if kind == 0:
        p = rng.dirichlet(np.ones(k), size=(n, *extra))
    elif kind == 1:  # logits
        p = rng.normal(scale=3.0, size=(n, *extra, k))
    elif kind == 2:  # coarse probabilities: ties in the argmax, confidences on boundaries
        p = rng.integers(0, 3, size=(n, *extra, k)).astype(float)
        p[..., 0] += p.sum(axis=-1) == 0
        p /= p.sum(axis=-1, keepdims=True)
    else:  # a confidence of exactly 1.0 or exact boundaries
        p = np.zeros((n, *extra, k))
        top = rng.integers(0, k, size=(n, *extra))
        np.put_along_axis(p, top[..., None], 1.0, axis=-1)
        q = K.torch_linspace(n_bins + 1, np.float32)[rng.integers(0, n_bins + 1, (n, *extra))]
        mix = rng.random((n, *extra)) < 0.5
        p[mix] = np.where(np.arange(k) == 0, q[mix][:, None], (1 - q[mix][:, None]) / (k - 1))
    p = np.moveaxis(p.astype(dtype), -1, 1)  # (N, C, ...)
    y = rng.integers(0, k, size=(n, *extra))
    ignore = None
    if rng.random() < 0.3:
        ignore = int(rng.choice([-100, -1, k, 255]))
        y[rng.random(y.shape) < rng.random()] = ignore
    return p, y, k, n_bins, ignore


# --------------------------------------------------------------------------
# torch.linspace


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linspace_equals_torch_for_1_to_1000_bins(torchmetrics_mod, dtype):
    import torch

    tdt = torch.float32 if dtype == np.float32 else torch.float64
    numpy_differs = 0
    for n_bins in range(1, 1001):
        theirs = torch.linspace(0, 1, n_bins + 1, dtype=tdt).numpy()
        ours = K.torch_linspace(n_bins + 1, dtype)
        assert ours.dtype == dtype
        np.testing.assert_array_equal(ours, theirs, err_msg=f"n_bins={n_bins}")
        numpy_differs += not np.array_equal(np.linspace(0, 1, n_bins + 1).astype(dtype), theirs)
    assert numpy_differs > 900  # numpy.linspace is not a substitute


def test_linspace_quirk_without_torch():
    # 10 bins in float64: torch's 7th and 8th boundaries are 1 - 0.1 * 4 and 1 - 0.1 * 3,
    # each rounded once: exactly the doubles 0.6 and 0.7. numpy.linspace gives
    # 6 * 0.1 = 0.6000000000000001 and 0.7000000000000001.
    ours = K.torch_linspace(11, np.float64)
    assert ours[6] == 0.6 and ours[7] == 0.7
    assert np.linspace(0, 1, 11)[6] == 0.6000000000000001
    assert ours[0] == 0 and ours[-1] == 1 and not ours.flags.writeable
    # so 0.6 opens bin 6 and shares it with 0.65: one bin, conf 0.625, acc 0.5
    ce = binary_calibration_error(np.array([0.6, 0.65]), np.array([1, 0]), n_bins=10)
    assert ce == pytest.approx(0.125, abs=1e-15)
    # 15 bins in float32 differ from numpy's rounded float64 in both halves
    ours = K.torch_linspace(16, np.float32)
    theirs = np.linspace(0, 1, 16).astype(np.float32)
    np.testing.assert_array_equal(np.flatnonzero(ours != theirs), [3, 6, 7, 8, 9, 10])


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_torch_sum_order_equals_torch(torchmetrics_mod, dtype):
    import torch

    rng = np.random.default_rng(31)
    sizes = [*range(0, 300), 511, 512, 513, 1001, 4096, 4097, 20_000, 32_768]
    for n in sizes:
        x = (rng.random(n) * 10.0 ** rng.uniform(-4, 4, n)).astype(dtype)
        ours = K.torch_sum(x)
        assert ours.dtype == dtype
        assert ours == dtype(torch.sum(torch.from_numpy(x)).item()), f"n={n}"


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_softmax_are_within_ulps_of_torch(torchmetrics_mod, dtype):
    """No skip on any CPU: calibr no longer reproduces torch's vectorised exp
    (docs/torchmetrics.md, "Logits"), so the bound holds whatever torch runs."""
    import torch

    rng = np.random.default_rng(41)
    special = [0.0, -0.0, 88.0, 89.0, 100.0, 101.0, -103.0, -104.0, -105.0, 700.0, 710.0]
    special += [-745.0, -1000.0, -1001.0, np.inf, -np.inf]
    for n in [1, 7, 31, 32, 33, 1000, 32_768, 32_769, 100_003]:
        x = np.concatenate([rng.normal(size=n) * rng.choice([0.1, 3.0, 30.0, 300.0]), special])
        x = x.astype(dtype)
        theirs = torch.sigmoid(torch.from_numpy(x)).numpy()
        ours = K.sigmoid(x)
        assert ours.dtype == dtype
        assert _ulps(ours, theirs).max() <= LOGIT_ULPS, f"n={n}"
    for k in [2, 3, 8, 9, 10, 15, 16, 17, 33, 100]:
        x = (rng.normal(size=(500, k)) * rng.choice([0.5, 3.0, 20.0])).astype(dtype)
        theirs = torch.softmax(torch.from_numpy(x), dim=1).numpy()
        ours = K.softmax(x)
        assert ours.dtype == dtype
        assert _ulps(ours, theirs).max() <= LOGIT_ULPS, f"k={k}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_softmax_are_within_ulps_of_their_oracles(dtype):
    """Against ``tests/oracles/torchmetrics.py``: the sigmoid in float64 rounded once,
    the softmax in exact rational arithmetic (after the subtraction of the row
    maximum in the dtype, which torch does too); also where torch is not installed."""
    rng = np.random.default_rng(42)
    x = np.concatenate([rng.normal(size=20_000) * rng.choice([0.1, 3.0, 30.0], 20_000),
                        [0.0, -0.0, 80.0, -80.0, 700.0, -700.0, np.inf, -np.inf]]).astype(dtype)
    assert _ulps(K.sigmoid(x), sigmoid_oracle(x)).max() <= LOGIT_ULPS
    for k in [2, 5, 8, 16, 17, 40]:
        m = (rng.normal(size=(300, k)) * 4).astype(dtype)
        assert _ulps(K.softmax(m), softmax_oracle(m)).max() <= LOGIT_ULPS
    # rows whose softmax is undefined come out NaN (the caller refuses them)
    bad = np.array([[np.inf, 0.0], [-np.inf, -np.inf], [0.0, -np.inf]], dtype=dtype)
    out = K.softmax(bad)
    assert np.isnan(out[:2]).all(axis=1).all() and np.array_equal(out[2], [1.0, 0.0])


@pytest.mark.torch
def test_top_label_rule_is_torchs_max(torchmetrics_mod):
    """torch.max(dim=1), which torchmetrics' top label is, returns the first maximal
    column on a CPU (ties and signed zeros too): the rule of ``first_max``, shared by
    every calibr kernel that takes a top label."""
    import numba
    import torch

    @numba.njit(cache=False)
    def first_max_rows(p):  # pragma: no cover - compiled
        out = np.empty(p.shape[0], np.int64)
        for i in range(p.shape[0]):
            out[i] = first_max(p, i)[1]
        return out

    rng = np.random.default_rng(43)
    for dtype in (np.float32, np.float64):
        for k in (2, 3, 5, 8, 9, 16, 17, 33):
            p = rng.integers(0, 3, size=(5000, k)).astype(dtype) / 2
            p[rng.random(p.shape) < 0.1] = -0.0
            _, theirs = torch.from_numpy(p).max(dim=1)
            np.testing.assert_array_equal(first_max_rows(p), theirs.numpy())
            np.testing.assert_array_equal(first_max_rows(p), np.argmax(p, axis=1))


# --------------------------------------------------------------------------
# thousands of random cases


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_random_cases_match_torchmetrics(torchmetrics_mod, dtype):
    fn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    rng = np.random.default_rng(20261130 + (dtype == np.float64))
    for case in range(1200):
        p, y, n_bins, ignore = _random_binary_case(rng, dtype)
        norm = NORMS[case % 3]
        theirs = fn(_tensor(p), _tensor(y), n_bins=n_bins, norm=norm, ignore_index=ignore)
        ours = binary_calibration_error(p, y, n_bins=n_bins, norm=norm, ignore_index=ignore)
        _same(
            ours,
            theirs,
            dtype,
            f"case {case}: n_bins={n_bins} norm={norm} ignore={ignore}",
            exact=_bitwise_expected(p, y, ignore, norm),
        )


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multiclass_random_cases_match_torchmetrics(torchmetrics_mod, dtype):
    fn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    rng = np.random.default_rng(4 + (dtype == np.float64))
    for case in range(900):
        p, y, k, n_bins, ignore = _random_multiclass_case(rng, dtype)
        norm = NORMS[case % 3]
        theirs = fn(_tensor(p), _tensor(y), k, n_bins=n_bins, norm=norm, ignore_index=ignore)
        ours = multiclass_calibration_error(p, y, k, n_bins=n_bins, norm=norm, ignore_index=ignore)
        _same(
            ours,
            theirs,
            np.float32,
            f"case {case}: k={k} n_bins={n_bins} norm={norm}",
            exact=_bitwise_expected(p, y, ignore, norm, multiclass=True),
        )


def _moved_bins(ours_conf, theirs_conf, n_bins, dtype) -> int:
    """How many confidences fall in another bin with calibr's normalisation than
    with torch's (same torchmetrics boundaries)."""
    edges = K.torch_linspace(n_bins + 1, dtype)
    a = np.searchsorted(edges, ours_conf.astype(dtype), side="right")
    b = np.searchsorted(edges, theirs_conf.astype(dtype), side="right")
    return int(np.count_nonzero(a != b))


def logit_agreement(cases: int, seed: int = 123) -> dict:
    """How calibr's results on logits compare with torchmetrics' (torch needed).

    For each dtype and task, ``cases`` random batches of logits (n from 5 to
    50,000, scales from 0.3 to 30, 1 to 100 bins, 2 to 11 classes, every norm):
    how many results are the same bits (l1 and max; l2 separately, as torch's
    sqrt is not correctly rounded), in how many cases some confidence fell in a
    neighbouring bin (calibr's sigmoid/softmax value and torch's on either side of
    a boundary), and the largest absolute difference without and with those. The
    numbers in docs/torchmetrics.md ("Logits") are ``logit_agreement(3000)``.
    """
    import torch
    from torchmetrics.functional.classification import (
        binary_calibration_error as tm_binary,
    )
    from torchmetrics.functional.classification import (
        multiclass_calibration_error as tm_multiclass,
    )

    out = {}
    for dtype in (np.float32, np.float64):
        rng = np.random.default_rng(seed)
        for task in ("binary", "multiclass"):
            row = {"same bits l1/max": 0, "cases l1/max": 0, "same bits l2": 0, "cases l2": 0,
                   "cases with a moved value": 0, "largest difference, none moved": 0.0,
                   "largest difference": 0.0}
            for case in range(cases):
                n_bins, norm = int(rng.integers(1, 101)), NORMS[case % 3]
                n = int(rng.choice([5, 50, 500, 5000, 50_000]))
                scale = float(rng.choice([0.3, 1.0, 3.0, 10.0, 30.0]))
                if task == "binary":
                    x = (rng.normal(size=n) * scale).astype(dtype)
                    y = rng.integers(0, 2, n)
                    ours = binary_calibration_error(x, y, n_bins, norm)
                    theirs = tm_binary(torch.from_numpy(x), torch.from_numpy(y), n_bins, norm)
                    conf_dtype = dtype
                    mine, torchs = K.sigmoid(x), torch.sigmoid(torch.from_numpy(x)).numpy()
                else:
                    k = int(rng.integers(2, 12))
                    x = (rng.normal(size=(n, k)) * scale).astype(dtype)
                    y = rng.integers(0, k, n)
                    ours = multiclass_calibration_error(x, y, k, n_bins, norm)
                    theirs = tm_multiclass(torch.from_numpy(x), torch.from_numpy(y), k, n_bins,
                                           norm)
                    conf_dtype = np.float32
                    mine = K.softmax(x).max(axis=1)
                    torchs = torch.softmax(torch.from_numpy(x), dim=1).numpy().max(axis=1)
                key = "l2" if norm == "l2" else "l1/max"
                row[f"cases {key}"] += 1
                row[f"same bits {key}"] += float(ours) == theirs.item()
                diff = abs(float(ours) - theirs.item())
                row["largest difference"] = max(row["largest difference"], diff)
                if _moved_bins(mine, torchs, n_bins, conf_dtype):
                    row["cases with a moved value"] += 1
                else:
                    row["largest difference, none moved"] = max(
                        row["largest difference, none moved"], diff)
            out[(np.dtype(dtype).name, task)] = row
    return out


@pytest.mark.torch
def test_logits_agree_with_torchmetrics_within_the_documented_tolerance(torchmetrics_mod):
    """Logits give torchmetrics' numbers to float rounding (not bit for bit) unless a
    value lies within a few ulps of a bin boundary and falls on its other side: the
    measurement behind docs/torchmetrics.md, "Logits", on fewer cases."""
    for (dtype, task), row in logit_agreement(150).items():
        result_dtype = "float32" if task == "multiclass" else dtype
        tol = TOL64 if result_dtype == "float64" else TOL32
        assert row["largest difference, none moved"] <= tol, (dtype, task, row)
        # how many are the same bits depends on the CPU's exp against torch's SLEEF
        # kernels (97-100% on an AVX512 Xeon, 80-85% for float32 multiclass on an AVX2
        # EPYC: docs/torchmetrics.md); most must be, or the arithmetic changed
        assert row["same bits l1/max"] >= 0.5 * row["cases l1/max"], (dtype, task, row)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_larger_random_inputs_match_torchmetrics(torchmetrics_mod, dtype):
    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    rng = np.random.default_rng(99)
    n = 100_000
    p = rng.beta(2, 5, n).astype(dtype)
    y = (rng.random(n) < p).astype(np.int64)
    P = rng.dirichlet(np.full(10, 0.3), n).astype(dtype)
    t = rng.integers(0, 10, n)
    for norm in NORMS:
        for n_bins in (1, 10, 15, 100):
            _same(
                binary_calibration_error(p, y, n_bins, norm),
                bfn(_tensor(p), _tensor(y), n_bins, norm),
                dtype,
            )
            _same(
                multiclass_calibration_error(P, t, 10, n_bins, norm),
                mfn(_tensor(P), _tensor(t), 10, n_bins, norm),
                np.float32,
            )


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_bin_state_is_the_same_bits_as_torchmetrics(torchmetrics_mod, dtype):
    """acc, conf and prop per bin from calibr's state equal torchmetrics' _binning_bucketize."""
    import torch
    from torchmetrics.functional.classification.calibration_error import _binning_bucketize

    rng = np.random.default_rng(21)
    for n, n_bins in [(1, 1), (50, 3), (1000, 15), (200_000, 15), (200_000, 100)]:
        p = rng.beta(0.5, 0.5, n).astype(dtype)
        p[rng.random(n) < 0.01] = 1.0
        y = (rng.random(n) < p).astype(np.int64)
        m = BinaryCalibrationError(n_bins)
        m.update(p, y)
        tp = torch.from_numpy(p)
        edges = torch.linspace(0, 1, n_bins + 1, dtype=tp.dtype)
        acc, conf, prop = (t.numpy() for t in _binning_bucketize(tp, torch.from_numpy(y), edges))
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(np.nan_to_num(m._acc_sum / m._count), acc)
            np.testing.assert_array_equal(np.nan_to_num(m._conf_sum / m._count), conf)
            np.testing.assert_array_equal(m._count / m._count.sum(), prop)


# --------------------------------------------------------------------------
# hand-made edge cases


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_bins", [1, 2, 3, 7, 10, 15, 33, 100])
def test_binary_every_boundary_zero_and_one(torchmetrics_mod, dtype, n_bins):
    fn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    edges = K.torch_linspace(n_bins + 1, dtype)
    below = np.nextafter(edges, dtype(-1))[1:]
    above = np.nextafter(edges, dtype(2))[:-1]
    p = np.concatenate([edges, below, above, [0.0, 1.0, 1.0]]).astype(dtype)
    rng = np.random.default_rng(n_bins)
    for _ in range(5):
        y = rng.integers(0, 2, p.size)
        for norm in NORMS:
            _same(
                binary_calibration_error(p, y, n_bins, norm),
                fn(_tensor(p), _tensor(y), n_bins, norm),
                dtype,
                f"n_bins={n_bins} norm={norm}",
            )


@pytest.mark.torch
def test_the_largest_n_bins_is_accepted_and_matches_torchmetrics(torchmetrics_mod):
    """``n_bins`` may be calibr's bound itself (MAX_BINS, docs/definitions.md), in the
    functions and the modules; the value is torchmetrics's."""
    from calibr._input import MAX_BINS
    from calibr.torchmetrics import BinaryCalibrationError

    fn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    rng = np.random.default_rng(5)
    p, y = rng.random(40), rng.integers(0, 2, 40)
    for norm in NORMS:
        _same(binary_calibration_error(p, y, MAX_BINS, norm),
              fn(_tensor(p), _tensor(y), MAX_BINS, norm), np.float64, f"norm={norm}")
    metric = BinaryCalibrationError(n_bins=MAX_BINS)
    metric.update(p, y)
    assert metric.compute() == binary_calibration_error(p, y, MAX_BINS)


@pytest.mark.torch
def test_python_scalars_are_read_as_torch_tensor_reads_them(torchmetrics_mod):
    """A Python float ``preds`` and int or bool ``target`` (a single sample) are read as
    ``torch.tensor(x)`` reads them: float32, int64, bool; the value is torchmetrics's."""
    import torch

    fn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    for p, y in ((0.7, 1), (0.3, 0), (0.6, True)):
        for norm in NORMS:
            _same(binary_calibration_error(p, y, 4, norm),
                  fn(torch.tensor(p), torch.tensor(y), 4, norm), np.float32, f"{p} {y}")


class _DLPackOnly:
    """An array known only through the DLPack protocol (no ``__array__``, no
    ``__array_namespace__``), as some GPU or accelerator libraries expose theirs."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_an_array_known_only_through_dlpack_is_read():
    """The input layer's rule reads any DLPack array (docs/definitions.md, "Arrays of
    other libraries"), not only those that also speak the array API."""
    p = np.array([0.2, 0.7, 0.9, 0.4], dtype=np.float32)
    y = np.array([0, 1, 1, 1])
    for norm in NORMS:
        assert (binary_calibration_error(_DLPackOnly(p), _DLPackOnly(y), 3, norm)
                == binary_calibration_error(p, y, 3, norm))


def test_uint64_target_up_to_the_int64_maximum_is_read():
    """A uint64 target is refused only above 2**63 - 1 (where a cast to int64 would
    wrap): 2**63 - 1 itself is a label, here the one ignored."""
    top = 2**63 - 1
    p = np.array([0.2, 0.7, 0.9, 0.4])
    y = np.array([0, 1, 1, top], dtype=np.uint64)
    assert (binary_calibration_error(p, y, 3, ignore_index=top)
            == binary_calibration_error(p[:3], y[:3].astype(np.int64), 3))
    with pytest.raises(InputError, match=r"^`target` must hold integers within the int64 "):
        binary_calibration_error(p, y + np.uint64(1), 3, ignore_index=top)


def test_hand_worked_bins_without_torch():
    # n_bins=2, float64: boundaries 0, 0.5, 1; bins [0, .5), [.5, 1) and {1.0}.
    p = np.array([0.0, 0.5, 1.0, 1.0])
    y = np.array([0, 0, 1, 0])
    # bin 0: conf 0, acc 0; bin 1: conf .5, acc 0; bin 2: conf 1, acc .5
    assert binary_calibration_error(p, y, 2, "l1") == pytest.approx(0.25 * 0.5 + 0.5 * 0.5)
    assert binary_calibration_error(p, y, 2, "max") == 0.5
    assert binary_calibration_error(p, y, 2, "l2") == pytest.approx(np.sqrt(0.25 * 0.25 + 0.125))
    # calibr.ece-style right-closed bins would put 0.5 with 0 and 1.0 with 0.5.


@pytest.mark.torch
def test_single_bin_all_ignored_and_l2_zero(torchmetrics_mod):
    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    p = np.array([0.2, 0.9, 0.4])
    y = np.array([7, 7, 7])
    P = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]], dtype=np.float32)
    for norm in NORMS:
        # all samples ignored: l1 NaN, l2 int64 0, max 0.0
        ours = binary_calibration_error(p, y, 1, norm, ignore_index=7)
        _same(ours, bfn(_tensor(p), _tensor(y), 1, norm, ignore_index=7), np.float64)
        ours = multiclass_calibration_error(P, y, 2, 4, norm, ignore_index=7)
        _same(ours, mfn(_tensor(P), _tensor(y), 2, 4, norm, ignore_index=7), np.float32)
        # empty input
        e = np.array([], dtype=np.float32)
        _same(
            binary_calibration_error(e, e.astype(int), norm=norm),
            bfn(_tensor(e), _tensor(e.astype(int)), norm=norm),
            np.float32,
        )
    assert np.isnan(binary_calibration_error(p, y, 1, "l1", ignore_index=7))
    assert isinstance(binary_calibration_error(p, y, 1, "l2", ignore_index=7), np.int64)
    # perfectly calibrated: the l2 sum is 0, so torchmetrics returns tensor(0) (int64)
    perfect = binary_calibration_error(np.array([0.0, 1.0]), np.array([0, 1]), norm="l2")
    assert isinstance(perfect, np.int64) and perfect == 0
    _same(perfect, bfn(_tensor(np.array([0.0, 1.0])), _tensor(np.array([0, 1])), norm="l2"), None)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logit_detection_and_dtypes(torchmetrics_mod, dtype):
    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    # one value of 1.0000001 / -0.1 turns everything into logits
    for bad in (-0.1, 1.5, np.inf, -np.inf):
        p = np.array([0.1, 0.6, 0.9, bad], dtype=dtype)
        y = np.array([0, 1, 1, 0])
        for norm in NORMS:
            _same(
                binary_calibration_error(p, y, 5, norm), bfn(_tensor(p), _tensor(y), 5, norm), dtype
            )
    # the outside value is ignored: the rest stays probabilities
    p = np.array([0.1, 0.6, 0.9, 3.0], dtype=dtype)
    y = np.array([0, 1, 1, -1])
    _same(
        binary_calibration_error(p, y, 5, ignore_index=-1),
        bfn(_tensor(p), _tensor(y), 5, ignore_index=-1),
        dtype,
    )
    assert binary_calibration_error(p, y, 5, ignore_index=-1) == binary_calibration_error(
        p[:3], y[:3], 5
    )
    P = np.array([[2.0, 1.0, 0.5], [0.1, 0.2, 0.7], [0.3, 0.3, 0.4]], dtype=dtype)
    t = np.array([0, 2, 1])
    for norm in NORMS:
        ours = multiclass_calibration_error(P, t, 3, 4, norm)
        assert ours.dtype == np.float32
        _same(ours, mfn(_tensor(P), _tensor(t), 3, 4, norm), np.float32)
        _same(
            multiclass_calibration_error(P, t, 3, 4, norm, ignore_index=0),
            mfn(_tensor(P), _tensor(t), 3, 4, norm, ignore_index=0),
            np.float32,
        )


@pytest.mark.torch
def test_argmax_ties_take_first_column(torchmetrics_mod):
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    P = np.array([[0.4, 0.4, 0.2], [0.3, 0.35, 0.35], [0.25, 0.25, 0.5], [0.5, 0.5, 0.0]])
    for t in ([0, 1, 2, 0], [1, 2, 2, 1], [0, 2, 0, 1]):
        t = np.array(t)
        for norm in NORMS:
            _same(
                multiclass_calibration_error(P, t, 3, 3, norm),
                mfn(_tensor(P), _tensor(t), 3, 3, norm),
                np.float32,
            )
    # first column wins: rows 0 and 3 predict class 0, row 1 class 1
    assert multiclass_calibration_error(P, np.array([0, 1, 2, 0]), 3, 1, "l1") == pytest.approx(
        abs(1.0 - np.float32(np.mean([0.4, 0.35, 0.5, 0.5]))), abs=1e-7
    )


@pytest.mark.torch
def test_float64_confidence_rounds_to_one_in_float32(torchmetrics_mod):
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    eps = 1e-9  # 1 - 1e-9 is float32 1.0: the extra bin
    P = np.array([[1 - eps, eps], [0.3, 0.7]])
    t = np.array([1, 1])
    for norm in NORMS:
        _same(
            multiclass_calibration_error(P, t, 2, 10, norm),
            mfn(_tensor(P), _tensor(t), 2, 10, norm),
            np.float32,
        )


@pytest.mark.torch
def test_validate_args_false_matches_torchmetrics(torchmetrics_mod):
    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    p = np.array([0.2, 0.7, 0.4, 0.9], dtype=np.float32)
    y = np.array([0, 2, 1, 1])  # a 2 counts as accuracy 2
    _same(
        binary_calibration_error(p, y, 3, validate_args=False),
        bfn(_tensor(p), _tensor(y), 3, validate_args=False),
        np.float32,
    )
    # same size, other shape: flattened
    _same(
        binary_calibration_error(p.reshape(2, 2), y % 2, 3, validate_args=False),
        bfn(_tensor(p.reshape(2, 2)), _tensor(y % 2), 3, validate_args=False),
        np.float32,
    )
    P = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    t = np.array([5, 0, 9, -3])  # out of range: misses; 4 distinct values > 3
    _same(
        multiclass_calibration_error(P, t, 3, 4, validate_args=False),
        mfn(_tensor(P), _tensor(t), 3, 4, validate_args=False),
        np.float32,
    )
    # num_classes is not checked against preds.shape[1] without validation
    _same(
        multiclass_calibration_error(P, t, 2, 4, validate_args=False),
        mfn(_tensor(P), _tensor(t), 2, 4, validate_args=False),
        np.float32,
    )
    # with validation too: torchmetrics 1.9 skips its distinct-value check on `target`
    # for float preds (operator precedence), so any target values pass and miss
    for t in ([5, 5, 0, 0], [0, 1, 2, 3], [7, -5, 2, 100]):
        t = np.array(t)
        _same(
            multiclass_calibration_error(P, t, 3, 4), mfn(_tensor(P), _tensor(t), 3, 4), np.float32
        )
        _same(
            multiclass_calibration_error(P, t, 3, 4, ignore_index=-5),
            mfn(_tensor(P), _tensor(t), 3, 4, ignore_index=-5),
            np.float32,
        )


# --------------------------------------------------------------------------
# streaming and merging


def _splits(rng, n, max_parts=8):
    cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(0, max_parts))))
    return np.split(np.arange(n), cuts)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_streaming_equals_torchmetrics_class(torchmetrics_mod, dtype):
    TM = torchmetrics_mod.classification.BinaryCalibrationError
    rng = np.random.default_rng(7)
    for case in range(120):
        p, y, n_bins, ignore = _random_binary_case(rng, dtype)
        p, y = p.reshape(-1), y.reshape(-1)
        norm = NORMS[case % 3]
        ours = BinaryCalibrationError(n_bins, norm, ignore)
        theirs = TM(n_bins, norm, ignore)
        for idx in _splits(rng, p.size):
            ours.update(p[idx], y[idx])
            theirs.update(_tensor(p[idx]), _tensor(y[idx]))
        _same(ours.compute(), theirs.compute(), dtype, f"case {case}")


@pytest.mark.torch
def test_multiclass_streaming_equals_torchmetrics_class(torchmetrics_mod):
    TM = torchmetrics_mod.classification.MulticlassCalibrationError
    rng = np.random.default_rng(8)
    for case in range(120):
        dtype = (np.float32, np.float64)[case % 2]
        p, y, k, n_bins, ignore = _random_multiclass_case(rng, dtype)
        norm = NORMS[case % 3]
        ours = MulticlassCalibrationError(k, n_bins, norm, ignore)
        theirs = TM(k, n_bins, norm, ignore)
        for idx in _splits(rng, p.shape[0]):
            ours.update(p[idx], y[idx])
            theirs.update(_tensor(p[idx]), _tensor(y[idx]))
        _same(ours.compute(), theirs.compute(), np.float32, f"case {case}")


@pytest.mark.torch
def test_logit_rule_is_per_batch(torchmetrics_mod):
    TM = torchmetrics_mod.classification.BinaryCalibrationError
    batches = [(np.array([0.2, 0.8]), np.array([0, 1])), (np.array([-1.0, 2.0]), np.array([0, 1]))]
    ours, theirs = BinaryCalibrationError(n_bins=4), TM(n_bins=4)
    for p, y in batches:
        ours.update(p, y)
        theirs.update(_tensor(p), _tensor(y))
    _same(ours.compute(), theirs.compute(), np.float64)
    whole = binary_calibration_error(
        np.concatenate([b[0] for b in batches]), np.concatenate([b[1] for b in batches]), n_bins=4
    )
    assert whole != ours.compute()  # one batch: everything would be logits


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_merge_partitions_in_random_orders(dtype):
    rng = np.random.default_rng(11)
    for case in range(60):
        p, y, n_bins, ignore = _random_binary_case(rng, dtype)
        p = np.clip(p, 0, 1)  # probabilities: logits would make the split matter
        p, y = p.reshape(-1), y.reshape(-1)
        norm = NORMS[case % 3]
        whole = binary_calibration_error(p, y, n_bins, norm, ignore)
        parts = []
        for idx in _splits(rng, p.size):
            m = BinaryCalibrationError(n_bins, norm, ignore)
            m.update(p[idx], y[idx])
            parts.append(m)
        rng.shuffle(parts)
        total = BinaryCalibrationError(n_bins, norm, ignore)
        for m in parts:
            before = m.n_samples
            assert total.merge(m) is total
            assert m.n_samples == before  # other unchanged
        merged = total.compute()
        if isinstance(whole, np.int64) or isinstance(merged, np.int64):
            assert float(merged) == pytest.approx(float(whole), abs=1e-6)
            continue
        assert merged.dtype == whole.dtype
        tol = TOL64 if dtype == np.float64 else TOL32
        assert np.isnan(whole) == np.isnan(merged)
        if not np.isnan(whole):
            assert abs(float(merged) - float(whole)) <= tol


def test_multiclass_merge_and_reset():
    rng = np.random.default_rng(12)
    for _ in range(40):
        p, y, k, n_bins, ignore = _random_multiclass_case(rng, np.float64)
        p = np.moveaxis(p, 1, -1).reshape(-1, k)
        p = np.abs(p) / np.abs(p).sum(axis=1, keepdims=True)  # probabilities
        y = y.reshape(-1)
        whole = multiclass_calibration_error(p, y, k, n_bins, ignore_index=ignore)
        parts = []
        for idx in _splits(rng, p.shape[0]):
            m = MulticlassCalibrationError(k, n_bins, ignore_index=ignore)
            m.update(p[idx], y[idx])
            parts.append(m)
        rng.shuffle(parts)
        total = parts[0]
        for m in parts[1:]:
            total.merge(m)
        merged = total.compute()
        assert np.isnan(merged) == np.isnan(whole)
        if not np.isnan(whole):
            assert abs(float(merged) - float(whole)) <= TOL32
    total.reset()
    assert total.n_samples == 0
    with pytest.raises(InputError, match=r"compute\(\) was called before any update\(\)"):
        total.compute()


def test_streaming_state_is_o_n_bins():
    m = BinaryCalibrationError(n_bins=15)
    rng = np.random.default_rng(0)
    for _ in range(5):
        m.update(rng.random(10_000), rng.integers(0, 2, 10_000))
    assert m.n_samples == 50_000
    assert {a.size for a in (m._count, m._conf_sum, m._acc_sum)} == {16}
    assert "50000 samples" in repr(m)


# --------------------------------------------------------------------------
# the fast kernels against the readable oracles


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_binary_kernel_equals_oracle(dtype):
    rng = np.random.default_rng(3)
    for _ in range(200):
        p, y, n_bins, ignore = _random_binary_case(rng, dtype)
        p = np.clip(p, 0, 1).reshape(-1)
        y = y.reshape(-1).astype(np.int64)
        b = K.torch_linspace(n_bins + 1, dtype)
        fast = [np.zeros(n_bins + 1, dtype) for _ in range(3)]
        slow = [np.zeros(n_bins + 1, dtype) for _ in range(3)]
        K.binary_accumulate(p, y, ignore is not None, np.int64(ignore or 0), b, *fast)
        keep = y != ignore if ignore is not None else np.ones(y.size, bool)
        accumulate_oracle(p[keep], y[keep], b, *slow)
        for f, s in zip(fast, slow, strict=True):
            np.testing.assert_array_equal(f, s)


def test_fast_multiclass_kernel_equals_oracle():
    rng = np.random.default_rng(5)
    for _ in range(200):
        p, y, k, n_bins, _ = _random_multiclass_case(rng, np.float64)
        p = np.ascontiguousarray(np.moveaxis(p, 1, -1).reshape(-1, k))
        p = np.abs(p)
        y = y.reshape(-1).astype(np.int64)
        b = K.torch_linspace(n_bins + 1, np.float32)
        fast = [np.zeros(n_bins + 1, np.float32) for _ in range(3)]
        slow = [np.zeros(n_bins + 1, np.float32) for _ in range(3)]
        K.multiclass_accumulate(p, y, False, np.int64(0), b, *fast)
        conf, hit = top_label_oracle(p, y)
        accumulate_oracle(conf, hit, b, *slow)
        for f, s in zip(fast, slow, strict=True):
            np.testing.assert_array_equal(f, s)


# --------------------------------------------------------------------------
# inputs: numpy, pandas, lists, tensors; nothing changed; torch never imported


@pytest.mark.torch
def test_pandas_lists_and_tensors_agree(torchmetrics_mod):
    import torch

    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    p = [0.25, 0.25, 0.55, 0.75, 0.75]
    y = [0, 0, 1, 1, 1]
    ref = bfn(torch.tensor(p), torch.tensor(y), n_bins=2)  # float32, as torch.tensor(list)
    for pp, yy in [
        (p, y),
        (np.array(p, dtype=np.float32), np.array(y)),
        (pd.Series(p, dtype="float32"), pd.Series(y)),
        (torch.tensor(p), torch.tensor(y)),
        (torch.tensor(p, requires_grad=True), torch.tensor(y)),
    ]:
        ours = binary_calibration_error(pp, yy, n_bins=2)
        assert ours.dtype == np.float32
        _same(ours, ref, np.float32)
    P = pd.DataFrame(
        {"a": [0.25, 0.55, 0.1, 0.9], "b": [0.2, 0.05, 0.3, 0.05], "c": [0.55, 0.4, 0.6, 0.05]}
    )
    t = pd.Series([0, 1, 2, 0])
    ref = mfn(torch.tensor(P.to_numpy()), torch.tensor(t.to_numpy()), 3, 3)
    _same(multiclass_calibration_error(P, t, 3, 3), ref, np.float32)
    _same(multiclass_calibration_error(P.to_numpy().tolist(), t.tolist(), 3, 3), ref, np.float32)


_RNG_LISTS = np.random.default_rng(7)
_VALS = _RNG_LISTS.random(40)
_YS = _RNG_LISTS.integers(0, 2, 40)

#: list inputs and the dtype torch.tensor(list) gives them (torch 2.13, default dtype float32)
LIST_CASES = {
    "python floats": ([float(v) for v in _VALS], np.float32),
    "np.float64 scalars": (list(_VALS), np.float64),
    "np.float32 scalars": (list(_VALS.astype(np.float32)), np.float32),
    "tuple of python floats": (tuple(float(v) for v in _VALS), np.float32),
    "python floats and ints": ([0, 1, *(float(v) for v in _VALS[2:])], np.float32),
    "np.float64 and python floats": ([_VALS[0], *(float(v) for v in _VALS[1:])], np.float64),
    "np.float32 and python floats": (
        [np.float32(_VALS[0]), *(float(v) for v in _VALS[1:])],
        np.float32,
    ),
    "np.float32 and np.float64": (
        [np.float32(_VALS[0]), *_VALS[1:]],
        np.float64,
    ),
    "np.int64 and python floats": ([np.int64(1), *(float(v) for v in _VALS[1:])], np.float32),
    "np.float32 and ints": ([np.float32(_VALS[0]), 1, *_VALS[2:].astype(np.float32)], np.float32),
    "bools and python floats": ([True, False, *(float(v) for v in _VALS[2:])], np.float32),
    "bools and np.float64": ([True, False, *_VALS[2:]], np.float64),
}

#: targets as lists: torch.tensor gives int64, bool, float32 (Python floats) or float64
TARGET_CASES = {
    "ints": ([int(v) for v in _YS], np.int64),
    "bools": ([bool(v) for v in _YS], np.bool_),
    "python floats": ([float(v) for v in _YS], np.float32),
    "np.float64 scalars": (list(_YS.astype(np.float64)), np.float64),
    "ints and bools": ([True, *(int(v) for v in _YS[1:])], np.int64),
    "np.int32 scalars": (list(_YS.astype(np.int32)), np.int32),
}


@pytest.mark.parametrize("case", list(LIST_CASES))
def test_list_dtypes_follow_torch_tensor_without_torch(case):
    from calibr.torchmetrics import _as_array

    values, dtype = LIST_CASES[case]
    assert _as_array(values, "preds").dtype == dtype
    assert _as_array([values[:20], values[20:]], "preds").dtype == dtype  # nested: the same
    ours = binary_calibration_error(values, [int(v) for v in _YS])
    assert ours.dtype == dtype


@pytest.mark.torch
@pytest.mark.parametrize("case", list(LIST_CASES))
def test_list_preds_match_torchmetrics_dtype_and_value(torchmetrics_mod, case):
    import torch

    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    values, dtype = LIST_CASES[case]
    target = [int(v) for v in _YS]
    assert torch.tensor(values).dtype == getattr(torch, np.dtype(dtype).name)  # the table is right
    for norm in NORMS:
        ours = binary_calibration_error(values, target, n_bins=7, norm=norm)
        _same(ours, bfn(torch.tensor(values), torch.tensor(target), 7, norm), dtype, case)
    # as a (20, 2) multiclass list of rows (multiclass works in float32 throughout)
    rows = [list(values[i : i + 2]) for i in range(0, 40, 2)]
    t = target[:20]
    ours = multiclass_calibration_error(rows, t, 2, n_bins=5)
    _same(ours, mfn(torch.tensor(rows), torch.tensor(t), 2, 5), np.float32, case)


@pytest.mark.torch
@pytest.mark.parametrize("case", list(TARGET_CASES))
def test_list_targets_match_torchmetrics(torchmetrics_mod, case):
    import torch

    from calibr.torchmetrics import _as_array

    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    target, dtype = TARGET_CASES[case]
    assert _as_array(target, "target").dtype == dtype
    assert torch.tensor(target).dtype == getattr(torch, np.dtype(dtype).name)
    p = _VALS.astype(np.float32)
    _same(binary_calibration_error(p, target), bfn(_tensor(p), torch.tensor(target)), np.float32)


@pytest.mark.torch
def test_list_dtype_inference_equals_torch_on_every_small_mix(torchmetrics_mod):
    import warnings

    import torch

    from calibr.torchmetrics import _as_array

    elements = [True, 1, 0.5, np.float64(0.5), np.float32(0.5), np.float16(0.5), np.int64(1)]
    elements += [np.int32(1), np.int8(1), np.uint8(1), np.bool_(True)]
    checked = 0
    for size in (1, 2, 3):
        for combo in itertools.product(elements, repeat=size):
            values = list(combo)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected = str(torch.tensor(values).dtype).removeprefix("torch.")
            except (TypeError, RuntimeError):  # torch refuses e.g. np.bool_ with ints
                continue
            assert _as_array(values, "preds").dtype == np.dtype(expected), values
            assert _as_array([values, values], "preds").dtype == np.dtype(expected), values
            checked += 1
    assert checked > 1000
    assert _as_array([], "preds").dtype == np.float32 == np.dtype(str(torch.tensor([]).dtype)[6:])


@pytest.mark.torch
def test_list_of_python_floats_follows_torchs_default_dtype(torchmetrics_mod):
    import torch

    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    values, target = [float(v) for v in _VALS], [int(v) for v in _YS]
    before = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        ours = binary_calibration_error(values, target)
        theirs = bfn(torch.tensor(values), torch.tensor(target))
        _same(ours, theirs, np.float64)
        torch.set_default_dtype(torch.bfloat16)
        with pytest.raises(
            InputError,
            match=r"`preds` is a list, and torch's default dtype is bfloat16, which calibr does "
            r"not reproduce; pass a float32 or float64 array or tensor instead\.",
        ):
            binary_calibration_error(values, target)
    finally:
        torch.set_default_dtype(before)
    assert binary_calibration_error(values, target).dtype == np.float32


#: Lists with Python floats beyond float32's range: torch.tensor makes them +-inf
#: (silently), and so logits.
_BEYOND_FLOAT32 = {
    "binary 1e300": ([1e300, 0.5], [0, 1]),
    "binary -1e300": ([-1e300, 0.5, 0.2], [0, 1, 1]),
    "binary 3.5e38": ([0.1, 3.5e38], [1, 1]),
    "multiclass -1e300": ([[-1e300, 0.5, 0.0], [0.2, 0.3, 0.5]], [1, 2]),
}


def _beyond_float32_values(values, target):
    """calibr's number for one case, under numpy warnings as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if isinstance(values[0], list):
            m = MulticlassCalibrationError(num_classes=3)
            m.update(values, target)
            return multiclass_calibration_error(values, target, 3), m.compute()
        m = BinaryCalibrationError()
        m.update(values, target)
        return binary_calibration_error(values, target), m.compute()


@pytest.mark.parametrize("case", list(_BEYOND_FLOAT32))
def test_floats_beyond_float32_in_a_list_become_infinite_logits_without_a_warning(case):
    # the cast to float32 overflows on purpose (numpy warned "overflow encountered in
    # cast"): the result is that of the float32 array with the infinities
    values, target = _BEYOND_FLOAT32[case]
    with np.errstate(over="ignore"):
        as_float32 = np.array(values, dtype=np.float32)
    assert np.isinf(as_float32).any()
    fn = multiclass_calibration_error if as_float32.ndim == 2 else binary_calibration_error
    want = fn(as_float32, target, *([3] if as_float32.ndim == 2 else []))
    for got in _beyond_float32_values(values, target):
        assert got.dtype == np.float32 and got == want


@pytest.mark.torch
@pytest.mark.parametrize("case", list(_BEYOND_FLOAT32))
def test_floats_beyond_float32_in_a_list_match_torchmetrics(torchmetrics_mod, case):
    import torch

    values, target = _BEYOND_FLOAT32[case]
    multiclass = isinstance(values[0], list)
    fn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error" if multiclass
                else "binary_calibration_error")
    theirs = fn(torch.tensor(values), torch.tensor(target), *([3] if multiclass else []))
    for ours in _beyond_float32_values(values, target):
        _same(ours, theirs, np.float32, case)


def test_unreadable_lists_are_refused():
    with pytest.raises(
        InputError,
        match=r"`preds` must be a rectangular \(nested\) list of numbers, as torch\.tensor needs; "
        r"numpy could not read it \(.*inhomogeneous",
    ):
        binary_calibration_error([[0.1, 0.2], [0.3]], [[0, 1], [1]])
    with pytest.raises(
        InputError,
        match=r"`target` must hold integers within the int64 range, as torch\.tensor needs; "
        r"got a larger one \(",
    ):
        binary_calibration_error([0.1, 0.2], [0, 2**70])
    with pytest.raises(InputError, match=r"`preds` must hold numbers; got an array of dtype <U1"):
        binary_calibration_error(["a", "b"], [0, 1])


def test_inputs_are_not_modified():
    p = np.array([-1.0, 0.5, 2.0, 0.3])
    y = np.array([0, 1, -1, 1])
    P = np.array([[2.0, -1.0], [0.3, 0.7], [5.0, 1.0]])
    t = np.array([0, 1, 1])
    copies = [a.copy() for a in (p, y, P, t)]
    binary_calibration_error(p, y, ignore_index=-1)
    multiclass_calibration_error(P, t, 2)
    multiclass_calibration_error(P[None].transpose(1, 2, 0), t[:, None], 2)
    for a, c in zip((p, y, P, t), copies, strict=True):
        np.testing.assert_array_equal(a, c)


def test_torch_is_never_imported():
    code = textwrap.dedent(
        """
        import sys
        import numpy as np, pandas as pd
        from calibr.torchmetrics import (binary_calibration_error, multiclass_calibration_error,
                                         BinaryCalibrationError, MulticlassCalibrationError)
        binary_calibration_error(np.array([0.2, 0.8]), np.array([0, 1]))
        multiclass_calibration_error(pd.DataFrame({"a": [0.2, 0.9], "b": [0.8, 0.1]}), [1, 0], 2)
        m = BinaryCalibrationError(); m.update([0.1, 3.0], [0, 1]); m.compute()
        assert "torch" not in sys.modules, "torch was imported"
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --------------------------------------------------------------------------
# errors: every message pinned, and the same kind of error as torchmetrics

P3 = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])
T3 = np.array([0, 2])
PB = np.array([0.2, 0.7])
TB = np.array([0, 1])

_NOT_ARRAY = (
    r"`preds` must be a numpy array, a pandas Series or DataFrame, a \(nested\) list or tuple, "
    r"or a torch tensor; "
)

# (function, args, kwargs, exception, match, torchmetrics raises the same kind)
ERROR_CASES = [
    (
        "m",
        (np.full((2, 2, 3), np.nan), np.zeros((2, 3), dtype=int), 2),
        {},
        InputError,
        r"`preds` must not contain NaN; 6 rows do, the first at index \(0, 0\)\. "
        r"\(torchmetrics would return a number",
        None,
    ),
    (
        "m",
        (np.linspace(0, 1, 8).reshape(2, 4), np.zeros((2, 4), dtype=int), 3),
        {},
        InputError,
        r"must have shape \(N, C, \.\.\.\) with one dimension more than `target`",
        False,
    ),
    (
        "m",
        (np.array([[0, 1, 2], [0, 1, 3]]), np.array([[0, 1, 2], [0, 1, 2]]), 3),
        {},
        InputRuntimeError,
        r"`preds` must hold at most 3 distinct values \(`num_classes`, plus one for "
        r"`ignore_index` if given\); found 4\.",
        True,
    ),
    (
        "b",
        (pd.Series([0.2, None], dtype="Float64"), pd.Series([0, 1], dtype="Int64")),
        {},
        InputError,
        r"`preds` must not contain NaN; 1 value does, the first at position 1\.",
        None,
    ),
    (
        "b",
        (PB, TB),
        {"n_bins": 0},
        InputError,
        r"`n_bins` must be an integer larger than 0; got 0\.",
        True,
    ),
    (
        "b",
        (PB, TB),
        {"n_bins": 2.0},
        InputError,
        r"`n_bins` must be an integer .* got 2\.0\.",
        True,
    ),
    (
        "b",
        (PB, TB),
        {"norm": "l3"},
        InputError,
        r"`norm` must be one of 'l1', 'l2', 'max'; got 'l3'\.",
        True,
    ),
    (
        "b",
        (PB, TB),
        {"ignore_index": 1.5},
        InputError,
        r"`ignore_index` must be None or an integer; got 1\.5\.",
        True,
    ),
    (
        "b",
        (PB, np.array([0, 1, 1])),
        {},
        InputRuntimeError,
        r"`preds` and `target` must have the same shape; got \(2,\) and \(3,\)\.",
        True,
    ),
    (
        "b",
        (PB[None], TB),
        {},
        InputRuntimeError,
        r"must have the same shape; got \(1, 2\) and \(2,\)\.",
        True,
    ),
    (
        "b",
        (PB, np.array([0, 2])),
        {},
        InputRuntimeError,
        r"`target` must hold only 0 and 1; 1 value does not, the first at position 1 \(2\)\. "
        r"Its distinct values are \[0, 2\]\.$",
        True,
    ),
    (
        "b",
        (PB, np.array([-1, 2])),
        {"ignore_index": -1},
        InputRuntimeError,
        r"`target` must hold only 0 and 1 \(and -1, ignored\); 1 value does not, the first "
        r"at position 1 \(2\)\. Its distinct values are \[-1, 2\]\.$",
        True,
    ),
    (
        "b",
        (np.array([0.2, 0.7, 0.4, 0.9]), np.array([0.0, 0.5, 2.0, 1.0])),
        {},
        InputRuntimeError,
        r"`target` must hold only 0 and 1; 2 values do not, the first at position 1 \(0\.5\)\. "
        r"Its distinct values are \[0\.0, 0\.5, 1\.0, 2\.0\]\.$",
        True,
    ),
    (
        "b",
        (np.array([0, 2]), TB),
        {},
        InputRuntimeError,
        r"`preds` holds the values \[0, 2\], but as a label \(non-float\) array",
        True,
    ),
    (
        "b",
        (np.array([0, 1]), TB),
        {},
        InputError,
        r"`preds` must be a float array of probabilities or logits; got dtype int64\.",
        True,
    ),
    ("b", (np.array([True, False]), TB), {}, InputError, r"got dtype bool\.", True),
    (
        "b",
        (PB.astype(np.float16), TB),
        {},
        InputError,
        r"`preds` must be float32 or float64; got float16\.",
        False,
    ),
    (
        "b",
        (np.array([0.2, np.nan, 0.5, np.nan, np.nan]), np.array([0, 1, 1, 0, -1])),
        {"ignore_index": -1},
        InputError,
        r"`preds` must not contain NaN; 2 values do, the first at position 1\.",
        False,
    ),
    (
        "b",
        (np.array(["a", "b"]), TB),
        {},
        InputError,
        r"`preds` must hold numbers; got an array of dtype <U1\.",
        None,
    ),
    (
        "m",
        (P3, T3, 1),
        {},
        InputError,
        r"`num_classes` must be an integer larger than 1; got 1\.",
        True,
    ),
    (
        "m",
        (P3, T3, 3.0),
        {},
        InputError,
        r"`num_classes` must be an integer larger than 1; got 3\.0\.",
        True,
    ),
    (
        "m",
        (P3, T3, 3),
        {"n_bins": -2},
        InputError,
        r"`n_bins` must be an integer larger than 0; got -2\.",
        True,
    ),
    ("m", (P3, T3, 3), {"norm": None}, InputError, r"`norm` must be one of .* got None\.", True),
    (
        "m",
        (P3, T3, 3),
        {"ignore_index": "x"},
        InputError,
        r"`ignore_index` must be None or an integer; got 'x'\.",
        True,
    ),
    (
        "m",
        (P3, T3, 4),
        {},
        InputError,
        r"`preds.shape\[1\]` must equal `num_classes` \(4\); got `preds` of shape \(2, 3\)\.",
        True,
    ),
    (
        "m",
        (P3.astype(int), T3, 3),
        {},
        InputError,
        r"must be a float array of probabilities or logits when it has one dimension more",
        True,
    ),
    (
        "m",
        (np.repeat(P3[:, :, None], 2, axis=2), T3[:, None].repeat(3, 1)),
        {"num_classes": 3},
        InputError,
        r"`preds` must have shape \(N, C, \.\.\.\) and `target` shape \(N,"
        r" \.\.\.\); got \(2, 3, 2\) and \(2, 3\)\.",
        True,
    ),
    (
        "m",
        (P3[:, :, None], T3[:, None, None]),
        {"num_classes": 3},
        InputError,
        r"must have the same shape when they have the same number of"
        r" dimensions; got \(2, 3, 1\) and \(2, 1, 1\)\.",
        True,
    ),
    (
        "m",
        (P3[:, :, None], T3[:, None].repeat(2, 1)),
        {"num_classes": 3},
        InputError,
        r"got \(2, 3, 1\) and \(2, 2\)\.",
        True,
    ),
    (
        "m",
        (P3, T3[None]),
        {"num_classes": 3},
        InputError,
        r"must have the same shape when they have the same number of"
        r" dimensions; got \(2, 3\) and \(1, 2\)\.",
        True,
    ),
    (
        "m",
        (P3, np.array([0, 1, 2])),
        {"num_classes": 3},
        InputRuntimeError,
        r"must have the same number of samples N; got 2 and 3\.",
        True,
    ),
    (
        "m",
        (np.array([0.2, 0.3]), T3, 3),
        {},
        InputError,
        r"must have shape \(N, C, \.\.\.\) with one dimension more than `target`",
        False,
    ),
    (
        "m",
        (np.array([0, 1]), T3, 3),
        {},
        InputError,
        r"`preds` must be a float array of probabilities or logits; got dtype int64\.",
        True,
    ),
    (
        "m",
        (np.array([0, 1, 2, 3]), np.array([0, 1, 2, 3]), 3),
        {},
        InputRuntimeError,
        r"`target` must hold at most 3 distinct values",
        True,
    ),
    (  # ignore_index allows one distinct value more: 4 targets pass the count for 3 classes
        "m",
        (np.array([0, 1, 2, 0]), np.array([0, 1, 2, -1]), 3),
        {"ignore_index": -1},
        InputError,
        r"^`preds` must be a float array of probabilities or logits; got dtype int64\.$",
        True,
    ),
    (
        "m",
        (np.array([[0.2, np.nan], [0.5, 0.5]]), np.array([0, 1]), 2),
        {},
        InputError,
        r"`preds` must not contain NaN; 1 row does, the first at position 0\.",
        False,
    ),
    (
        "m",
        (np.array([[np.inf, 1.0], [0.5, 0.5]]), np.array([0, 1]), 2),
        {},
        InputError,
        r"`preds` holds logits, so every row must have a softmax \(no \+inf, and not -inf "
        r"only\); 1 row does not, the first at position 0\.$",
        False,
    ),
    (
        "m",
        (
            np.array([[0.2, 0.8], [np.inf, 1.0], [np.inf, 0.0], [5.0, np.inf], [-np.inf, -np.inf]]),
            np.array([0, 9, 1, 0, 1]),
            2,
        ),
        {"ignore_index": 9},
        InputError,
        r"every row must have a softmax .*; 3 rows do not, the first at position 2\.$",
        False,
    ),
    (
        "m",
        (
            np.full((2, 2, 3), 7.0) + np.array([0.0, np.inf])[None, :, None],
            np.zeros((2, 3), int),
            2,
        ),
        {},
        InputError,
        r"every row must have a softmax .*; 6 rows do not, the first at index \(0, 0\)\.$",
        False,
    ),
    # --- hostile input: each of these escaped, or passed silently, before ---
    (
        "b",
        (PB, np.array([0, 2**64 - 1], dtype=np.uint64)),
        {"ignore_index": -1},
        InputError,
        r"`target` must hold integers within the int64 range \(torch's class labels are "
        r"int64\); 1 value does not, the first at position 1 \(18446744073709551615\)\.$",
        None,
    ),
    (
        "m",
        (P3, np.array([[0, 2**64 - 1]], dtype=np.uint64).T[:, 0]),
        {"num_classes": 3, "ignore_index": -1},
        InputError,
        r"`target` must hold integers within the int64 range .* \(18446744073709551615\)\.$",
        None,
    ),
    (
        "m",
        (P3, np.array([0.0, 0.5])),
        {"num_classes": 3},
        InputError,
        r"`target` holds float64 values, so they must be whole numbers \(class labels\) smaller "
        r"than 2\*\*53 in magnitude, which float64 holds exactly; 1 value does not, the first "
        r"at position 1 \(0\.5\)\.$",
        None,
    ),
    (
        "m",
        (P3, np.array([0.0, 2.0**24], dtype=np.float32)),
        {"num_classes": 3, "validate_args": False},
        InputError,
        r"`target` holds float32 values, so they must be whole numbers \(class labels\) smaller "
        r"than 2\*\*24 .*\(16777216\.0\)\.$",
        None,
    ),
    (
        "m",
        (P3, np.array([np.nan, 1.0])),
        {"num_classes": 3},
        InputError,
        r"`target` must not contain NaN \(a missing label\); 1 value does, the first at "
        r"position 0\.$",
        None,
    ),
    (
        "b",
        (PB, np.array([0.0, 0.5])),
        {"validate_args": False},
        InputError,
        r"`target` holds float64 values, so they must be whole numbers",
        None,
    ),
    (
        "b",
        (PB, pd.Series([1, None], dtype="Int64")),
        {"validate_args": False},
        InputError,
        r"`target` must not contain NaN \(a missing label\); 1 value does, the first at "
        r"position 1\.$",
        None,
    ),
    (
        "m",
        (P3, np.array([0, 255], dtype=np.uint8)),
        {"num_classes": 3, "ignore_index": -1},
        InputError,
        r"`ignore_index` \(-1\) does not fit `target`'s dtype uint8, so torch would compare it "
        r"as 255 and ignore the 1 target equal to 255 \(the first at position 1\), where "
        r"calibr compares exactly; pass `target` as int64, or ignore_index=255, to say which "
        r"you mean\.$",
        None,
    ),
    (
        "b",
        (PB, np.array([127, 0], dtype=np.int8)),
        {"ignore_index": -129, "validate_args": False},
        InputError,
        r"`ignore_index` \(-129\) does not fit `target`'s dtype int8, so torch would compare "
        r"it as 127",
        None,
    ),
    (
        "b",
        (PB, TB),
        {"ignore_index": 2**70},
        InputError,
        r"`ignore_index` must be None or an integer within the int64 range \(torch compares "
        r"it with the targets as one\); got 1180591620717411303424\.$",
        False,
    ),
    (
        "b",
        (PB, TB),
        {"ignore_index": True},
        InputError,
        r"`ignore_index` must be None or an integer; got True \(a bool, not an integer\)\.$",
        False,
    ),
    (
        "b",
        (PB, TB),
        {"n_bins": True},
        InputError,
        r"`n_bins` must be an integer larger than 0; got True \(a bool, not an integer\)\.$",
        False,
    ),
    (
        "b",
        (PB, TB),
        {"n_bins": 10**12},
        InputError,
        r"`n_bins` must be an integer larger than 0 and at most 1,000,000 \(calibr's bound, "
        r"checked before anything is allocated\); got 1000000000000\.$",
        None,
    ),
    (
        "m",
        (P3, T3, 3),
        {"n_bins": 1_000_001},
        InputError,
        r"`n_bins` must be an integer larger than 0 and at most 1,000,000 .* got 1000001\.$",
        None,
    ),
    (
        "b",
        (PB, TB),
        {"validate_args": "False"},
        InputError,
        r"`validate_args` must be True or False; got 'False'\.$",
        False,
    ),
    (
        "b",
        (PB, TB),
        {"validate_args": np.array([True, False])},
        InputError,
        r"`validate_args` must be True or False; got array\(\[ True, False\]\)\.$",
        None,
    ),
    (
        "m",
        (np.array([0.2, 0.8]), np.array(1), 2),
        {},
        InputError,
        r"`preds` must have shape \(N, C, \.\.\.\) and `target` shape \(N, \.\.\.\); "
        r"got \(2,\) and \(\)\.$",
        None,
    ),
    (
        "m",
        (np.zeros((2, 0)), np.array([0, 1]), 2),
        {"validate_args": False},
        InputError,
        r"`preds` must have at least one class: shape \(N, C, \.\.\.\) with C >= 1; got "
        r"\(2, 0\)\.$",
        None,
    ),
    (
        "b",
        (np.ma.masked_array([0.2, 0.7, 0.4], mask=[0, 1, 1]), np.array([0, 1, 1])),
        {},
        InputError,
        r"`preds` is a masked array with 2 masked values, the first at position 1; calibr "
        r"never drops data silently: remove those samples \(or fill them\) first\.$",
        None,
    ),
    (
        "b",
        (PB.astype(np.longdouble), TB),
        {},
        InputError,
        r"`preds` must be float32 or float64; got float128, which torch has no tensor for: "
        r"cast to float64 first\.$",
        None,
    ),
    (
        "b",
        (PB, np.array([0, 1], dtype=np.longdouble)),
        {},
        InputError,
        r"`target` must be bool, integer, float16, float32 or float64; got float128\.$",
        None,
    ),
    ("b", ((x for x in PB), TB), {}, InputTypeError, _NOT_ARRAY + r"got a generator\.$", None),
    ("b", ({0.2, 0.7}, TB), {}, InputTypeError, _NOT_ARRAY + r"got a set\.$", None),
    ("m", ({0: 0.2, 1: 0.8}, T3, 3), {}, InputTypeError, _NOT_ARRAY + r"got a dict\.$", None),
    ("b", (None, TB), {}, InputTypeError, _NOT_ARRAY + r"got None\.$", None),
    (
        "b",
        (PB, "01"),
        {},
        InputTypeError,
        r"`target` must be a numpy array, .* got a str \('01'\)\.$",
        None,
    ),
]


@pytest.mark.parametrize(
    ("which", "args", "kwargs", "exc", "match", "torch_same"),
    ERROR_CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(ERROR_CASES)],
)
def test_errors_are_pinned(which, args, kwargs, exc, match, torch_same):
    fn = binary_calibration_error if which == "b" else multiclass_calibration_error
    with pytest.raises(exc, match=match) as info:
        fn(*args, **kwargs)
    # calibr's contract: only its own input errors escape (InputRuntimeError is one)
    assert isinstance(info.value, (InputError, InputTypeError)), type(info.value)


@pytest.mark.torch
@pytest.mark.parametrize(
    ("which", "args", "kwargs", "exc", "match", "torch_same"),
    [c for c in ERROR_CASES if c[5]],
    ids=[f"{c[0]}-{i}" for i, c in enumerate(ERROR_CASES) if c[5]],
)
def test_torchmetrics_raises_the_same_kind(
    torchmetrics_mod, which, args, kwargs, exc, match, torch_same
):
    name = "binary_calibration_error" if which == "b" else "multiclass_calibration_error"
    fn = _tm_fn(torchmetrics_mod, name)
    targs = [_tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    kind = RuntimeError if issubclass(exc, RuntimeError) else ValueError
    with pytest.raises(kind) as info:
        fn(*targs, **kwargs)
    if kind is ValueError:
        assert not isinstance(info.value, RuntimeError)


def test_class_errors_are_pinned():
    with pytest.raises(InputError, match=r"`n_bins` must be an integer larger than 0; got 0\."):
        BinaryCalibrationError(n_bins=0)
    with pytest.raises(InputError, match=r"`num_classes` must be an integer larger than 1"):
        MulticlassCalibrationError(num_classes=1)
    m = BinaryCalibrationError()
    with pytest.raises(InputError, match=r"compute\(\) was called before any update\(\)"):
        m.compute()
    m.update(np.array([0.2], dtype=np.float32), np.array([1]))
    with pytest.raises(InputError, match=r"`preds` of this batch is float64, but earlier batches"):
        m.update(np.array([0.2]), np.array([1]))
    with pytest.raises(TypeError, match=r"can only merge a BinaryCalibrationError with another"):
        m.merge(MulticlassCalibrationError(3))
    with pytest.raises(InputError, match=r"cannot merge metrics with different settings"):
        m.merge(BinaryCalibrationError(n_bins=10))
    other = BinaryCalibrationError()
    other.update(np.array([0.3]), np.array([0]))
    with pytest.raises(
        InputError,
        match=r"`other` holds batches of float64, but earlier batches were float32; keep one "
        r"dtype per metric",
    ):
        m.merge(other)


@pytest.mark.torch
def test_bfloat16_tensor_is_refused(torchmetrics_mod):
    import torch

    with pytest.raises(InputError, match=r"`preds` must be float32 or float64; got a bfloat16"):
        binary_calibration_error(torch.tensor([0.2, 0.4], dtype=torch.bfloat16), [0, 1])


def test_state_pickles_for_merging_across_processes():
    import pickle

    rng = np.random.default_rng(2)
    p, y = rng.random(1000), rng.integers(0, 2, 1000)
    a, b = BinaryCalibrationError(n_bins=7, norm="l2"), BinaryCalibrationError(n_bins=7, norm="l2")
    a.update(p[:400], y[:400])
    b.update(p[400:], y[400:])
    merged = pickle.loads(pickle.dumps(a)).merge(pickle.loads(pickle.dumps(b)))
    assert merged.compute() == pytest.approx(binary_calibration_error(p, y, 7, "l2"), abs=TOL64)


def test_float32_counts_saturate_at_2_pow_24_as_torchmetrics():
    # torchmetrics counts in float32 (scatter_add_ of ones): 2**24 + 1 == 2**24.
    m = BinaryCalibrationError(n_bins=2)
    batch = np.full(2**20, 0.25, dtype=np.float32)
    target = np.zeros(2**20, dtype=np.int64)
    for _ in range(17):
        m.update(batch, target)
    assert m._count[0] == 2**24 and m.n_samples == 2**24
    f64 = BinaryCalibrationError(n_bins=2)
    f64.update(batch.astype(np.float64), target)
    f64.merge(f64.__class__(n_bins=2))
    assert f64.n_samples == 2**20


def test_a_failing_update_changes_nothing():
    m = BinaryCalibrationError(n_bins=4)
    with pytest.raises(RuntimeError, match=r"`target` must hold only 0 and 1"):
        m.update(np.array([0.2, 0.9]), np.array([0, 3]))
    m.update(np.array([0.2], dtype=np.float32), np.array([1]))  # the failed float64 batch
    before = [a.copy() for a in (m._count, m._conf_sum, m._acc_sum)]  # fixed no dtype
    for p, y in [
        (np.array([0.1, 0.5, 0.7], dtype=np.float32), np.array([0, 1, 2])),  # bad target late
        (np.array([0.1, 5.0, np.nan], dtype=np.float32), np.array([0, 1, 1])),  # NaN logits
    ]:
        with pytest.raises((RuntimeError, InputError)):
            m.update(p, y)
        for a, b in zip((m._count, m._conf_sum, m._acc_sum), before, strict=True):
            np.testing.assert_array_equal(a, b)
    mc = MulticlassCalibrationError(3, n_bins=4)
    mc.update(np.array([[0.2, 0.3, 0.5]]), np.array([2]))
    before = [a.copy() for a in (mc._count, mc._conf_sum, mc._acc_sum)]
    with pytest.raises(InputError, match="must not contain NaN"):
        mc.update(np.array([[0.2, 0.3, 0.5], [np.nan, 0.1, 0.1]]), np.array([0, 1]))
    for a, b in zip((mc._count, mc._conf_sum, mc._acc_sum), before, strict=True):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# hostile input: accepted where the values are unambiguous, refused otherwise


def test_non_native_byte_order_is_read_as_native():
    rng = np.random.default_rng(17)
    p, y = rng.random(40), rng.integers(0, 2, 40)
    P, t = rng.dirichlet(np.ones(3), 40), rng.integers(0, 3, 40)
    big_p, big_y = p.astype(">f8"), y.astype(">i4")
    assert not big_p.dtype.isnative
    for norm in NORMS:
        ours = binary_calibration_error(big_p, big_y, 7, norm, ignore_index=-1)
        assert ours == binary_calibration_error(p, y, 7, norm, ignore_index=-1)
        assert ours.dtype == np.float64
        ours = multiclass_calibration_error(P.astype(">f4"), t.astype(">i8"), 3, 5, norm)
        assert ours == multiclass_calibration_error(P.astype(np.float32), t, 3, 5, norm)
    m = BinaryCalibrationError()
    m.update(p.astype("<f8").astype(">f8"), y)  # a big-endian batch, then a native one
    m.update(p, y)
    assert m._dtype == np.float64


def test_float_targets_are_compared_as_the_whole_numbers_they_hold():
    rng = np.random.default_rng(18)
    P, t = rng.dirichlet(np.ones(4), 60), rng.integers(0, 4, 60)
    t[:5] = -100
    for dtype in (np.float16, np.float32, np.float64):
        assert multiclass_calibration_error(
            P, t.astype(dtype), 4, ignore_index=-100
        ) == multiclass_calibration_error(P, t, 4, ignore_index=-100)
    p, y = rng.random(60), rng.integers(0, 2, 60)
    assert binary_calibration_error(p, y.astype(np.float32)) == binary_calibration_error(p, y)
    # the largest whole number each float dtype holds exactly is accepted (a miss)
    big = np.array([2.0**24 - 1, 0.0], dtype=np.float32)
    assert np.isfinite(multiclass_calibration_error(P[:2], big, 4))
    with pytest.raises(InputError, match=r"smaller than 2\*\*11 .* \(2048\.0\)\.$"):
        multiclass_calibration_error(P[:2], np.array([2048.0, 0.0], dtype=np.float16), 4)
    with pytest.raises(InputError, match=r"the first at index \(1, 0\) \(-inf\)\.$"):
        multiclass_calibration_error(
            np.repeat(P[:2, :, None], 2, axis=2), np.array([[0.0, 1.0], [-np.inf, 2.0]]), 4
        )


def test_ignore_index_that_fits_or_matches_nothing_is_exact():
    rng = np.random.default_rng(19)
    P, t = rng.dirichlet(np.ones(3), 50), rng.integers(0, 3, 50)
    # -1 does not fit uint8, but no target equals its wrapped value 255: same as int64
    assert multiclass_calibration_error(
        P, t.astype(np.uint8), 3, ignore_index=-1
    ) == multiclass_calibration_error(P, t, 3, ignore_index=-1)
    # uint64 targets within int64 are fine, and int64 targets compare exactly
    assert binary_calibration_error(
        P[:, 0], (t % 2).astype(np.uint64), ignore_index=-1
    ) == binary_calibration_error(P[:, 0], t % 2, ignore_index=-1)


def test_settings_of_the_classes_are_read_only():
    m = BinaryCalibrationError(n_bins=4)
    m.update(np.array([0.2, 0.9]), np.array([0, 1]))
    for name, value in [("n_bins", 100), ("norm", "max"), ("ignore_index", 1)]:
        with pytest.raises(AttributeError):
            setattr(m, name, value)
    with pytest.raises(AttributeError):
        MulticlassCalibrationError(3).num_classes = 4
    assert (m.n_bins, m.norm, m.ignore_index, m.validate_args) == (4, "l1", None, True)
    assert m._count.size == 5


@pytest.mark.torch
def test_requires_grad_tensors_are_detached_and_match_torchmetrics(torchmetrics_mod):
    import torch

    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    rng = np.random.default_rng(20)
    p = torch.tensor(rng.random(30), requires_grad=True)
    y = torch.tensor(rng.integers(0, 2, 30))
    P = torch.tensor(rng.normal(size=(30, 4)), dtype=torch.float32, requires_grad=True)
    t = torch.tensor(rng.integers(0, 4, 30))
    before = [x.detach().clone() for x in (p, P)]
    for norm in NORMS:
        _same(binary_calibration_error(p, y, 6, norm), bfn(p, y, 6, norm), np.float64)
        _same(multiclass_calibration_error(P, t, 4, 6, norm), mfn(P, t, 4, 6, norm), np.float32)
    m = MulticlassCalibrationError(4, 6)
    m.update(P, t)
    _same(m.compute(), mfn(P, t, 4, 6), np.float32)
    for x, b in zip((p, P), before, strict=True):
        assert x.requires_grad and x.grad is None and x.grad_fn is None
        assert torch.equal(x.detach(), b)


@pytest.mark.torch
def test_hostile_tensors_are_refused_with_input_errors(torchmetrics_mod):
    import torch

    p, y = torch.tensor([0.2, 0.7]), torch.tensor([0, 1])
    cases = [
        (
            (p, y.to(torch.bfloat16)),
            InputError,
            r"`target` must be a bool, integer, float16, float32 or float64 tensor; got a "
            r"bfloat16 tensor, which numpy cannot hold\. Convert it with \.long\(\) first\.$",
        ),
        (
            (p.to_sparse(), y),
            InputTypeError,
            r"`preds` must be a dense tensor; got a tensor with layout torch\.sparse_coo\. "
            r"Convert it with \.to_dense\(\) first\.$",
        ),
        (
            (torch.empty(2, device="meta"), y),
            InputError,
            r"`preds` is a tensor on the meta device, which holds no values\.$",
        ),
        (
            (p.to(torch.complex64), y),
            InputError,
            r"`preds` must hold real numbers; got a tensor of dtype torch\.complex64\.$",
        ),
        (
            (p.to(torch.float8_e4m3fn), y),
            InputTypeError,
            r"`preds` must be a tensor numpy can read; got a tensor of dtype "
            r"torch\.float8_e4m3fn \(TypeError: ",
        ),
        (
            (p.to(torch.float16), y),
            InputError,
            r"`preds` must be float32 or float64; got float16\. torchmetrics' float16 path",
        ),
    ]
    for args, exc, match in cases:
        with pytest.raises(exc, match=match):
            binary_calibration_error(*args)
    # a negated view (numpy() refuses its neg bit) is read with its values, unchanged
    neg = torch.tensor([-0.2, -0.7])._neg_view()
    assert neg.is_neg()
    assert binary_calibration_error(neg, y) == binary_calibration_error(p, y)
    assert neg.is_neg() and neg.tolist() == pytest.approx([0.2, 0.7])


@pytest.mark.torch
def test_where_calibr_refuses_torchmetrics_differs_or_fails(torchmetrics_mod):
    """The refusals above are not gratuitous: torchmetrics wraps, miscounts or crashes."""
    import torch

    bfn = _tm_fn(torchmetrics_mod, "binary_calibration_error")
    mfn = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")
    P = torch.tensor([[0.2, 0.8], [0.7, 0.3], [0.4, 0.6]])
    # torch compares ignore_index=-1 with a uint8 target as 255: the 255 is dropped
    t8 = torch.tensor([1, 0, 255], dtype=torch.uint8)
    assert mfn(P, t8, 2, ignore_index=-1).item() == pytest.approx(
        mfn(P[:2], t8[:2].long(), 2).item()
    )
    with pytest.raises(InputError, match=r"would compare it as 255 and ignore the 1 target"):
        multiclass_calibration_error(P, t8, 2, ignore_index=-1)
    # a target of 0.5 or NaN is a silent miss in torchmetrics
    half = torch.tensor([1.0, 0.5, 1.0])
    assert mfn(P, half, 2).item() == pytest.approx(mfn(P, torch.tensor([1, 9, 1]), 2).item())
    with pytest.raises(InputError, match=r"must be whole numbers"):
        multiclass_calibration_error(P, half, 2)
    # a 0-d target crashes torchmetrics with an IndexError
    with pytest.raises(IndexError):
        mfn(torch.tensor([0.2, 0.8]), torch.tensor(1), 2)
    with pytest.raises(InputError, match=r"`target` shape \(N, \.\.\.\); got \(2,\) and \(\)"):
        multiclass_calibration_error(torch.tensor([0.2, 0.8]), torch.tensor(1), 2)
    # an ignore_index beyond int64 is an OverflowError in torch
    p0 = P[:, 0].contiguous()
    with pytest.raises(OverflowError):
        bfn(p0, torch.tensor([0, 1, 1]), ignore_index=2**70)
    # torchmetrics accepts n_bins=True as one bin
    assert bfn(p0, torch.tensor([0, 1, 1]), n_bins=True).item() == pytest.approx(
        bfn(p0, torch.tensor([0, 1, 1]), n_bins=1).item()
    )


# --------------------------------------------------------------------------
# multiclass: the costly phase in threads, the sums in input order


def _multiclass_batch_case(rng, n, k, dtype, logits):
    if logits:
        p = rng.normal(scale=3.0, size=(n, k)).astype(dtype)
    else:
        p = rng.dirichlet(np.full(k, 0.5), n)
        coarse = rng.random(n) < 0.2  # ties in the argmax and confidences on boundaries
        p[coarse] = rng.integers(0, 3, size=(coarse.sum(), k))
        p[coarse, 0] += p[coarse].sum(axis=1) == 0
        p[coarse] /= p[coarse].sum(axis=1, keepdims=True)
        p[rng.random(n) < 0.05] = np.eye(k)[0]  # confidences of exactly 1.0
        p = p.astype(dtype)
    y = rng.integers(0, k, n)
    y[rng.random(n) < 0.1] = -100
    return np.ascontiguousarray(p), y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("logits", [False, True])
def test_multiclass_threaded_rows_equal_one_sequential_pass(dtype, logits):
    """Above MULTICLASS_PARALLEL_MIN_N rows the top labels are found in threads, and
    added into the state in input order afterwards: the state is the oracle's
    element-by-element accumulation, bit for bit (on top of an earlier batch)."""
    rng = np.random.default_rng(91 + logits + 2 * (dtype == np.float64))
    n, k, n_bins = K.MULTICLASS_PARALLEL_MIN_N + 17, 5, 15
    p, y = _multiclass_batch_case(rng, n, k, dtype, logits)
    b = K.torch_linspace(n_bins + 1, np.float32)
    start = [np.zeros(n_bins + 1, np.float32) for _ in range(3)]
    p0, y0 = _multiclass_batch_case(rng, 50, k, dtype, False)
    assert K.multiclass_accumulate(p0, y0, True, np.int64(-100), b, *start,
                                   mode=K.PROBABILITIES) == -1
    fast = [s.copy() for s in start]
    slow = [s.copy() for s in start]
    mode = K.LOGITS if logits else K.PROBABILITIES
    assert K.multiclass_accumulate(p, y, True, np.int64(-100), b, *fast, mode=mode) == -1
    keep = y != -100
    rows = K.softmax(p[keep]) if logits else p[keep]
    conf, hit = top_label_oracle(rows, y[keep])
    accumulate_oracle(conf, hit, b, *slow)
    for f, s in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(f, s)
    # through the public function: the same as one batch of the unthreaded size at a time
    metric = MulticlassCalibrationError(k, n_bins, ignore_index=-100)
    step = K.MULTICLASS_PARALLEL_MIN_N - 1
    for lo in range(0, n, step):
        metric.update(p[lo:lo + step], y[lo:lo + step])
    assert multiclass_calibration_error(p, y, k, n_bins, ignore_index=-100) == metric.compute()


def test_counts_are_float32_additions_of_one():
    """The counts and hits, counted as integers, enter the float32 state as that many
    additions of 1.0 would: exact below 2**24, then stuck (rounding to even)."""
    starts = [0.0, 5.0, 2.0**24 - 3, 2.0**24 - 1, 2.0**24, 2.0**24 + 2, 2.0**24 + 4, 2.0**25,
              3.0e7]
    for dtype in (np.float32, np.float64):
        exact = dtype(2.0 ** (np.finfo(dtype).nmant + 1))
        for x0 in starts + ([2.0**53 - 2, 2.0**53, 2.0**53 + 2] if dtype == np.float64 else []):
            for m in (0, 1, 2, 3, 4, 7):
                count = np.array([x0], dtype=dtype)
                acc = np.array([x0], dtype=dtype)
                K._merge_rows(np.empty(0, np.int32), np.empty(0, np.float32),
                              np.array([m, m], np.int64), dtype(1), exact, count,
                              np.zeros(1, dtype), acc)
                want = dtype(x0)
                for _ in range(m):
                    want = dtype(want + dtype(1))
                assert count[0] == want and acc[0] == want, (dtype, x0, m)
    count = np.zeros(1, np.float32)
    K._merge_rows(np.empty(0, np.int32), np.empty(0, np.float32),
                  np.array([2**24 + 5, 0], np.int64), np.float32(1), np.float32(2**24), count,
                  np.zeros(1, np.float32), np.zeros(1, np.float32))
    assert count[0] == 2**24


@pytest.mark.parametrize("where", ["first", "last"])
def test_multiclass_refusals_in_any_chunk_leave_the_state_unchanged(where):
    rng = np.random.default_rng(17)
    n, k = 2 * K.MULTICLASS_PARALLEL_MIN_N + 3, 3
    p, y = _multiclass_batch_case(rng, n, k, np.float32, logits=True)
    rows = [1, 7] if where == "first" else [n - 9, n - 1]
    p[rows[0], 1] = np.inf
    p[rows[1]] = -np.inf
    metric = MulticlassCalibrationError(k, 10, ignore_index=-100)
    metric.update(rng.dirichlet(np.ones(k), 10).astype(np.float32), np.zeros(10, np.int64))
    before = [a.copy() for a in (metric._count, metric._conf_sum, metric._acc_sum)]
    y[rows] = 0
    with pytest.raises(InputError, match=(
            r"^`preds` holds logits, so every row must have a softmax \(no \+inf, and not -inf "
            rf"only\); 2 rows do not, the first at position {rows[0]}\.$")):
        metric.update(p, y)
    p[rows] = 0.5
    p[rows[1], 0] = np.nan
    with pytest.raises(InputError, match=rf"^`preds` must not contain NaN; 1 row does, the first "
                       rf"at position {rows[1]}\."):
        metric.update(p, y)
    for a, b in zip((metric._count, metric._conf_sum, metric._acc_sum), before, strict=True):
        np.testing.assert_array_equal(a, b)
    y[rows[1]] = -100  # an ignored row may hold anything
    metric.update(p, y)
    assert metric.n_samples == 10 + int(np.sum(y != -100))


# --------------------------------------------------------------------------
# hand-worked values and pinned messages: input conversion


#: p = 0.2, 0.7, 0.4 with y = 0, 1, 1: three bins of 15, gaps 0.2, 0.3, 0.6
PB3, Y3, ECE3 = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1]), 1.1 / 3


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_torchmetrics_messages_show_a_multiline_or_long_value_by_its_type():
    """A value whose repr spans lines (a 2-D array) or is longer than 80 characters is
    named by its type; a short one-line repr is shown."""
    p, y = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1])
    for bad, shown in ((np.array([[1, 2], [3, 4]]), "an object of type ndarray"),
                       ("x" * 81, "an object of type str"), ("x" * 78, "'" + "x" * 78 + "'")):
        with pytest.raises(InputError, match=r"^`n_bins` must be an integer larger than 0; "
                                             rf"got {shown}\.$"):
            binary_calibration_error(p, y, n_bins=bad)


def test_a_repr_of_81_characters_is_too_long_to_show():
    """The limit of a shown repr is 80 characters: a repr of 81 (a string of 79) is named
    by its type, one of 80 (a string of 78) is shown."""
    for bad, shown in (("x" * 79, "an object of type str"), ("x" * 78, "'" + "x" * 78 + "'")):
        with pytest.raises(InputError, match=r"^`norm` must be one of 'l1', 'l2', 'max'; "
                                             rf"got {shown}\.$"):
            binary_calibration_error(PB3, Y3, norm=bad)


def test_torchmetrics_names_what_it_cannot_read():
    """The message for an unreadable ``preds`` names None as None and any other object by
    its type (a str with its repr)."""
    head = (r"^`preds` must be a numpy array, a pandas Series or DataFrame, a \(nested\) list "
            r"or tuple, or a torch tensor; got ")
    for x, shown in ((None, "None"), ({0.5}, "a set"), ("ab", r"a str \('ab'\)")):
        with pytest.raises(InputTypeError, match=head + shown + r"\.$"):
            binary_calibration_error(x, [0, 1])


@pytest.mark.torch
def test_torchmetrics_refuses_a_sparse_tensor_by_its_layout():
    """A sparse tensor is refused as not dense, by its layout, before numpy is asked; made
    dense, it is taken."""
    torch = require("torch")

    sparse = torch.tensor([0.2, 0.7]).to_sparse()
    with pytest.raises(InputTypeError, match=r"^`preds` must be a dense tensor; got a "
                       r"tensor with layout torch\.sparse_coo\. Convert it with \.to_dense\(\)"):
        binary_calibration_error(sparse, torch.tensor([0, 1]))
    assert float(binary_calibration_error(sparse.to_dense(), torch.tensor([0, 1]))) == (
        pytest.approx(0.25, rel=1e-6))  # gaps 0.2 and 0.3 in two bins


@pytest.mark.torch
def test_complex_tensor_is_refused_as_complex():
    """A complex tensor is refused as not real, naming its dtype, before any conversion."""
    torch = require("torch")
    with pytest.raises(InputError, match=r"^`preds` must hold real numbers; got a tensor of "
                                         r"dtype torch\.complex64\.$"):
        binary_calibration_error(torch.tensor([0.2 + 0j, 0.7 + 0j]), torch.tensor([0, 1]))


def test_nullable_pandas_booleans_become_float_with_nan():
    """A nullable "boolean" Series with a missing value, which pandas gives numpy as an
    object array, is read as float64 with NaN (so refused as a missing label, at its
    position), not refused as an object array; without the missing value it is read as 0
    and 1."""
    target = pd.Series([False, None, True], dtype="boolean")
    assert target.to_numpy().dtype == object  # what the conversion has to handle
    with pytest.raises(InputError, match=r"^`target` must not contain NaN \(a missing label\); "
                                         r"1 value does, the first at position 1\.$"):
        binary_calibration_error(PB3, target)
    got = binary_calibration_error(PB3, pd.Series(Y3.astype(bool), dtype="boolean"))
    assert got == pytest.approx(ECE3, rel=1e-12)


@pytest.mark.torch
def test_a_bfloat16_default_dtype_is_refused_for_lists():
    """With torch's default dtype bfloat16 a list of Python floats, which torch would make
    bfloat16, is refused: calibr does not reproduce bfloat16."""
    torch = require("torch")
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with pytest.raises(InputError, match=r"^`preds` is a list, and torch's default dtype "
                                             r"is bfloat16, which calibr does not reproduce"):
            binary_calibration_error([0.2, 0.7], [0, 1])
    finally:
        torch.set_default_dtype(before)


def test_list_dtypes_are_promoted_as_torch_tensor_does():
    """A list has the dtype torch.tensor() would give it: a Python float and an int make
    float32 (float32 wins over int64), and a numpy float64 with a Python float (float32)
    makes float64, the wider, in either order.

    By hand, two bins: 0.25 has gap 0.25 and 1.0 its own bin with gap 0 (ECE 0.125);
    0.25 and 0.75 both have gap 0.25 (ECE 0.25).
    """
    got = binary_calibration_error([0.25, 1], [0, 1], n_bins=2)
    assert got.dtype == np.float32 and got == pytest.approx(0.125, rel=1e-6)
    for preds in ([np.float64(0.25), 0.75], [0.25, np.float64(0.75)]):
        got = binary_calibration_error(preds, [0, 1], n_bins=2)
        assert got.dtype == np.float64 and got == pytest.approx(0.25, rel=1e-12)


def test_nested_lists_take_the_dtype_of_their_elements():
    """The dtype of a nested list is that of its innermost elements, not the default float:
    nested ints are label preds (refused), nested numpy float64 give a float64 result."""
    with pytest.raises(InputError, match=r"^`preds` must be a float array of probabilities or "
                                         r"logits; got dtype int64\.$"):
        binary_calibration_error([[0, 1]], [[0, 1]])
    got = binary_calibration_error([[np.float64(0.25)], [np.float64(0.75)]], [[0], [1]], n_bins=2)
    assert got.dtype == np.float64 and got == pytest.approx(0.25, rel=1e-12)


# --------------------------------------------------------------------------
# hand-worked values and pinned messages: targets


def test_torchmetrics_ignore_index_takes_the_whole_int64_range():
    """``ignore_index`` may be any int64, both ends of the range included; one past either
    end is refused. By hand: p = 0.2, 0.7, 0.4 (y = 0, 1, 1) fall in three bins of 15,
    gaps 0.2, 0.3 and 0.6: ECE 1.1 / 3."""
    p, y = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1])
    for ok in (-(2**63), 2**63 - 1):
        assert binary_calibration_error(p, y, ignore_index=ok) == pytest.approx(1.1 / 3,
                                                                                rel=1e-12)
    for bad in (-(2**63) - 1, 2**63):
        with pytest.raises(InputError, match=rf"within the int64 range .*; got {bad}\.$"):
            binary_calibration_error(p, y, ignore_index=bad)


def test_uint64_targets_beyond_int64_are_refused():
    """A uint64 target above 2**63 - 1 is refused where it is, even when the others fit (it
    would wrap to a negative code)."""
    target = np.array([0, 2**63], dtype=np.uint64)
    with pytest.raises(InputError, match=r"^`target` must hold integers within the int64 range "
                                         r"\(torch's class labels are int64\); 1 value does not, "
                                         r"the first at position 1 \(9223372036854775808\)\.$"):
        binary_calibration_error(np.array([0.2, 0.7]), target)


def test_ignore_index_with_bool_and_narrow_integer_targets():
    """An ``ignore_index`` is checked against integer targets only (a bool target has no
    integer range); one that fits the target's dtype (both ends included) is compared as
    it is, and one that torch would wrap onto a target value is refused, even if only
    one target has that value.

    By hand: bool targets as 0/1 give ECE3; with 5 ignored, 0.2 and 0.7 are left (gaps
    0.2 and 0.3, ECE 0.25).
    """
    got = binary_calibration_error(PB3, Y3.astype(bool), ignore_index=-1)
    assert got == pytest.approx(ECE3, rel=1e-12)
    for dtype in (np.int8, np.uint8, np.int32):
        got = binary_calibration_error(PB3, np.array([0, 1, 5], dtype=dtype), ignore_index=5)
        assert got == pytest.approx(0.25, rel=1e-12)
    # both ends of the dtype's range fit too
    for dtype in (np.int8, np.uint8, np.int16, np.int32):
        for end in sorted({int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)} - {0}):
            got = binary_calibration_error(PB3, np.array([0, 1, end], dtype=dtype),
                                           ignore_index=end)
            assert got == pytest.approx(0.25, rel=1e-12), (dtype, end)
    # uint8's lower end is 0: 0.2 is dropped, 0.7 and 0.4 have gaps 0.3 and 0.6
    got = binary_calibration_error(PB3, np.array([0, 1, 1], dtype=np.uint8), ignore_index=0)
    assert got == pytest.approx(0.45, rel=1e-12)
    with pytest.raises(InputError, match=r"^`ignore_index` \(-1\) does not fit `target`'s dtype "
                                         r"uint8, so torch would compare it as 255 and ignore the "
                                         r"1 target equal to 255 \(the first at position 2\), "):
        binary_calibration_error(PB3, np.array([0, 1, 255], dtype=np.uint8), ignore_index=-1)


@pytest.mark.torch
@pytest.mark.parametrize(("ignore_index", "wrapped"), [(300, 44), (383, 127), (-129, 127),
                                                       (128, -128)])
def test_ignore_index_wraps_into_a_signed_dtype_as_torch_does(ignore_index, wrapped):
    """For int8 targets, 300 wraps to 44 (no sign change: below 127), 383 to 127 (the top
    value itself), -129 to 127 and 128 to -128, as torch compares them; the target
    holding the wrapped value is named."""
    torch = require("torch")
    target = np.array([0, 1, wrapped], dtype=np.int8)
    assert (torch.from_numpy(target) == ignore_index).tolist() == [False, False, True]
    with pytest.raises(InputError, match=rf"^`ignore_index` \({ignore_index}\) does not fit "
                                         rf"`target`'s dtype int8, so torch would compare it as "
                                         rf"{wrapped} and ignore the 1 target equal to {wrapped} "
                                         r"\(the first at position 2\)"):
        binary_calibration_error(PB3, target, ignore_index=ignore_index)


def test_nan_targets_are_refused_before_the_binary_check():
    """One NaN among valid float targets is refused as a missing label, not reported as a
    value other than 0 and 1."""
    with pytest.raises(InputError, match=r"^`target` must not contain NaN \(a missing label\); "
                                         r"1 value does, the first at position 1\.$"):
        binary_calibration_error(PB3, np.array([0.0, np.nan, 1.0]))


def test_float_targets_must_be_whole_and_below_their_exact_range():
    """float32 holds the integers below 2**24 exactly, so 2**24 - 1 is a class label and
    2**24 is refused; 0.5 is refused next to whole numbers.

    By hand: top labels 0 (0.8, right, gap 0.2) and 1 (0.7, wrong, gap 0.7): ECE 0.45.
    """
    p = np.array([[0.8, 0.2], [0.3, 0.7]])
    ok = np.array([0, 2**24 - 1], dtype=np.float32)
    assert multiclass_calibration_error(p, ok, num_classes=2) == pytest.approx(0.45, rel=1e-6)
    for value, shown, bits in ((2**24, "16777216.0", 24), (0.5, "0.5", 24)):
        with pytest.raises(InputError, match=rf"^`target` holds float32 values, so they must be "
                                             rf"whole numbers \(class labels\) smaller than "
                                             rf"2\*\*{bits} in magnitude, which float32 holds "
                                             rf"exactly; 1 value does not, the first at "
                                             rf"position 1 \({shown}\)\.$"):
            multiclass_calibration_error(p, np.array([0, value], dtype=np.float32), num_classes=2)


def test_a_message_shows_at_most_ten_distinct_target_values():
    """Of 11 distinct targets the message shows the first ten, then "..."; a 1-D input has
    positions, a 2-D one index tuples."""
    p = np.linspace(0.05, 0.95, 11)
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 9 values "
                                                r"do not, the first at position 2 \(2\)\. Its "
                                                r"distinct values are \[0, 1, 2, 3, 4, 5, 6, 7, "
                                                r"8, 9, \.\.\.\]\.$"):
        binary_calibration_error(p, np.arange(11))
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 1 value "
                                                r"does not, the first at index \(1, 0\) \(3\)\."):
        binary_calibration_error(PB3[:2].reshape(2, 1), np.array([[0], [3]]))


# --------------------------------------------------------------------------
# hand-worked values and pinned messages: binary batches


def test_float16_preds_have_their_own_message():
    """float16 preds are refused with a message of their own (torchmetrics sums their
    counts in float16)."""
    with pytest.raises(InputError, match=r"^`preds` must be float32 or float64; got float16\. "
                                         r"torchmetrics' float16 path sums counts in float16"):
        binary_calibration_error(PB3.astype(np.float16), Y3)


def test_without_validation_only_the_sizes_must_agree():
    """With ``validate_args=False`` preds (2, 2) and target (4,) are flattened (as
    torchmetrics does), and different sizes are refused; with validation the shapes must
    be equal.

    By hand: 0.2, 0.7, 0.4, 0.9 with y = 0, 1, 1, 1 fall in four bins of 15, gaps 0.2,
    0.3, 0.6, 0.1: ECE 0.3.
    """
    p, y = np.array([[0.2, 0.7], [0.4, 0.9]]), np.array([0, 1, 1, 1])
    assert binary_calibration_error(p, y, validate_args=False) == pytest.approx(0.3, rel=1e-12)
    with pytest.raises(InputRuntimeError, match=r"^`preds` and `target` must have the same "
                                                r"shape; got \(2, 2\) and \(4,\)\.$"):
        binary_calibration_error(p, y)
    with pytest.raises(InputRuntimeError, match=r"^`preds` and `target` must have the same "
                                                r"shape; got \(3,\) and \(4,\)\.$"):
        binary_calibration_error(PB3, y, validate_args=False)


def test_label_preds_are_checked_then_refused():
    """Integer preds with a value other than 0 and 1 fail torchmetrics' check (a
    RuntimeError); valid ones, or any without validation, are refused as not float."""
    with pytest.raises(InputRuntimeError, match=r"^`preds` holds the values \[0, 1, 2\], but as "
                                                r"a label \(non-float\) array it may hold only 0 "
                                                r"and 1\.$"):
        binary_calibration_error(np.array([0, 1, 2]), Y3)
    for validate_args in (True, False):
        with pytest.raises(InputError, match=r"^`preds` must be a float array of probabilities "
                                             r"or logits; got dtype int64\.$"):
            binary_calibration_error(np.array([0, 1, 1]), Y3, validate_args=validate_args)


def test_logits_without_validation_keep_any_target():
    """With ``validate_args=False`` a logit batch is not target-checked: a target of 2 adds
    2 to its bin's accuracy (as in torchmetrics); with validation it is refused.

    By hand: 2.0 lies outside [0, 1], so both values are logits: sigmoid 0.5 (bin 7 of
    15, y = 2: gap 1.5) and sigmoid(2) = 0.8808 (bin 13, y = 1).
    """
    want = (1.5 + (1.0 - _sigmoid(2.0))) / 2
    got = binary_calibration_error(np.array([0.0, 2.0]), np.array([2, 1]), validate_args=False)
    assert got == pytest.approx(want, rel=1e-12)
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 1 value "
                                                r"does not, the first at position 0 \(2\)\."):
        binary_calibration_error(np.array([0.0, 2.0]), np.array([2, 1]))


def test_binary_nan_at_the_first_position_is_refused():
    """A NaN at position 0 is refused, at position 0."""
    with pytest.raises(InputError, match=r"^`preds` must not contain NaN; 1 value does, the "
                                         r"first at position 0\. "):
        binary_calibration_error(np.array([np.nan, 0.5]), np.array([0, 1]))


def test_binary_logits_drop_the_ignored_samples():
    """On the logit path the sigmoid is binned for the kept samples only.

    By hand: 2.0 (kept) makes the batch logits; 5.0 is ignored; sigmoid 0.5 (y = 1, gap
    0.5) and sigmoid(2) (y = 1, gap 1 - 0.8808).
    """
    want = (0.5 + (1.0 - _sigmoid(2.0))) / 2
    got = binary_calibration_error(np.array([0.0, 2.0, 5.0]), np.array([1, 1, -1]),
                                   ignore_index=-1)
    assert got == pytest.approx(want, rel=1e-12)


# --------------------------------------------------------------------------
# hand-worked values and pinned messages: multiclass batches


def test_torchmetrics_two_classes_are_enough():
    """multiclass_calibration_error takes ``num_classes=2`` and refuses 1. By hand: the top
    labels of (0.8, 0.2), (0.3, 0.7), (0.6, 0.4) have confidences 0.8, 0.7, 0.6 (three
    bins of 15) and are right, right, wrong (targets 0, 1, 1): ECE 1.1 / 3."""
    p, y = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]), np.array([0, 1, 1])
    assert multiclass_calibration_error(p, y, num_classes=2) == pytest.approx(1.1 / 3, rel=1e-6)
    with pytest.raises(InputError, match=r"^`num_classes` must be an integer larger than 1; "
                                         r"got 1\.$"):
        multiclass_calibration_error(p, y, num_classes=1)


def test_multiclass_one_dimensional_preds_need_a_sample_axis():
    """1-D preds with a 0-d target are refused: preds need the shape (N, C, ...)."""
    with pytest.raises(InputError, match=r"^`preds` must have shape \(N, C, \.\.\.\) and "
                                         r"`target` shape \(N, \.\.\.\); got \(2,\) and \(\)\.$"):
        multiclass_calibration_error(np.array([0.2, 0.8]), np.array(0), num_classes=2)


def test_multiclass_extra_dimensions_are_samples():
    """preds (N, C, K) are N * K rows of C classes, sample (n, k) being ``p[n, :, k]``.

    By hand, N = 1, C = 2, K = 3, every target 0: rows (0.7, 0.3) right (gap 0.3),
    (0.38, 0.62) wrong (0.62), (0.1, 0.9) wrong (0.9), in bins 10, 9 and 13 of 15: ECE
    1.82 / 3.
    """
    rows = np.array([[0.7, 0.3], [0.38, 0.62], [0.1, 0.9]])
    p = rows.T[np.newaxis]  # (1, 2, 3)
    got = multiclass_calibration_error(p, np.zeros((1, 3), dtype=int), num_classes=2)
    assert got == pytest.approx(1.82 / 3, rel=1e-6)


def test_multiclass_same_dimensions_messages():
    """preds with as many dimensions as target must have its shape; the distinct-value
    check (a RuntimeError in torchmetrics) is for label preds with validation only;
    float preds of target's shape are refused as lacking C."""
    with pytest.raises(InputError, match=r"^`preds` and `target` must have the same shape when "
                                         r"they have the same number of dimensions; got \(2, 3\) "
                                         r"and \(3, 2\)\.$"):
        multiclass_calibration_error(np.full((2, 3), 0.5), np.zeros((3, 2), dtype=int),
                                     num_classes=3)
    lacking_c = r"^`preds` must have shape \(N, C, \.\.\.\) with one dimension more than `target`"
    with pytest.raises(InputError, match=lacking_c):  # 4 distinct targets, 2 classes
        multiclass_calibration_error(np.array([0.1, 0.2, 0.3, 0.4]), np.arange(4), num_classes=2)
    with pytest.raises(InputError, match=r"^`preds` must be a float array of probabilities or "
                                         r"logits; got dtype int64\.$"):
        multiclass_calibration_error(np.arange(4), np.arange(4), num_classes=2,
                                     validate_args=False)
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold at most 2 distinct values "
                                                r"\(`num_classes`, plus one for `ignore_index` if "
                                                r"given\); found 3\.$"):
        multiclass_calibration_error(np.array([0, 1, 1]), np.array([0, 1, 2]), num_classes=2)


def test_multiclass_logits_in_the_first_row():
    """A refusal in row 0 is reported at row 0, for probabilities and for logits.

    By hand: row 0 (2, 0) makes the batch logits: softmax (0.8808, 0.1192), right (gap 1
    - 0.8808); row 1 (0, 0) has softmax (0.5, 0.5), top label 0, right (gap 0.5). A +inf
    in row 0 leaves it without a softmax; a NaN there is a NaN.
    """
    got = multiclass_calibration_error(np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([0, 0]),
                                       num_classes=2)
    assert got == pytest.approx(((1.0 - _sigmoid(2.0)) + 0.5) / 2, rel=1e-6)
    with pytest.raises(InputError, match=r"^`preds` holds logits, so every row must have a "
                                         r"softmax \(no \+inf, and not -inf only\); 1 row does "
                                         r"not, the first at position 0\.$"):
        multiclass_calibration_error(np.array([[np.inf, 0.0], [0.0, 0.0]]), np.array([0, 0]),
                                     num_classes=2)
    with pytest.raises(InputError, match=r"^`preds` must not contain NaN; 1 row does, the first "
                                         r"at position 0\. "):
        multiclass_calibration_error(np.array([[np.nan, 0.5], [0.3, 0.7]]), np.array([0, 0]),
                                     num_classes=2)


# --------------------------------------------------------------------------
# hand-worked values and pinned messages: the classes and the defaults


def test_n_samples_counts_the_kept_samples():
    """A fresh metric has 0 samples (its repr says so), then as many as were kept."""
    m = BinaryCalibrationError(ignore_index=-1)
    assert m.n_samples == 0
    assert repr(m) == "BinaryCalibrationError(n_bins=15, norm='l1', ignore_index=-1) with 0 samples"
    m.update(PB3, np.array([0, -1, 1]))
    assert m.n_samples == 2


def test_merge_adds_an_updated_metric_and_ignores_a_fresh_one():
    """Merging an updated metric adds its batches; merging a fresh one changes nothing (a
    fresh metric stays without samples).

    By hand: 0.2 (y = 0) then 0.7, 0.4 (y = 1, 1): ECE3; 0.7 and 0.4 alone: 0.45.
    """
    a, b = BinaryCalibrationError(), BinaryCalibrationError()
    a.update(PB3[:1], Y3[:1])
    b.update(PB3[1:], Y3[1:])
    assert a.merge(b).compute() == pytest.approx(ECE3, rel=1e-12)
    assert BinaryCalibrationError().merge(b).compute() == pytest.approx(0.45, rel=1e-12)
    fresh = BinaryCalibrationError().merge(BinaryCalibrationError())
    with pytest.raises(InputError, match=r"^compute\(\) was called before any update\(\)"):
        fresh.compute()


def test_the_binary_class_validates_by_default():
    """BinaryCalibrationError validates its arguments by default."""
    m = BinaryCalibrationError()
    assert m.validate_args is True
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 1 value "
                                                r"does not, the first at position 1 \(2\)\."):
        m.update(PB3, np.array([0, 2, 1]))


def test_the_multiclass_class_validates_by_default(torchmetrics_mod):
    """MulticlassCalibrationError validates its arguments by default, as torchmetrics'
    class: preds with 4 columns for num_classes=3 are refused by both."""
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    y = np.array([0, 2])
    m = MulticlassCalibrationError(num_classes=3)
    assert m.validate_args is True
    with pytest.raises(InputError, match=r"^`preds.shape\[1\]` must equal `num_classes` \(3\); "
                                         r"got `preds` of shape \(2, 4\)\.$"):
        m.update(p, y)
    tm = torchmetrics_mod.classification.MulticlassCalibrationError(num_classes=3)
    with pytest.raises(ValueError, match=r"`preds.shape\[1\]` should be equal to number of "
                                         r"classes"):
        tm.update(_tensor(p), _tensor(y))


def test_binary_function_defaults_to_fifteen_bins():
    """binary_calibration_error uses 15 bins by default: 0.47 and 0.52 share the bin [7/15,
    8/15) of 15 (gap |0.5 - 0.495|), and fall in two of 16 (gaps 0.53 and 0.52)."""
    p, y = np.array([0.47, 0.52]), np.array([1, 0])
    assert binary_calibration_error(p, y) == pytest.approx(0.005, abs=1e-12)
    assert binary_calibration_error(p, y, n_bins=16) == pytest.approx(0.525, abs=1e-12)


def test_multiclass_function_defaults_to_fifteen_bins(torchmetrics_mod):
    """multiclass_calibration_error uses 15 bins by default, as torchmetrics': the top-label
    confidences 0.47 (right) and 0.52 (wrong) share the bin [7/15, 8/15) of 15 (gap
    |0.5 - 0.495|), and fall in two of 16 (gaps 0.53 and 0.52)."""
    p = np.array([[0.47, 0.33, 0.20], [0.28, 0.52, 0.20]])
    y = np.array([0, 0])
    got = multiclass_calibration_error(p, y, 3)
    assert got == pytest.approx(0.005, abs=1e-6)
    assert multiclass_calibration_error(p, y, 3, n_bins=16) == pytest.approx(0.525, abs=1e-6)
    theirs = _tm_fn(torchmetrics_mod, "multiclass_calibration_error")(_tensor(p), _tensor(y), 3)
    _same(got, theirs, np.float32, "default n_bins", exact=True)
