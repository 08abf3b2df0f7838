"""SKCE pair sums of scalars (binary, confidence and classwise forms).

Sort the points by x: ``x_0 <= ... <= x_{n-1}``. Because
``|x_j - x_i| = sum_{m=i}^{j-1} (x_{m+1} - x_m)`` for ``i < j``, the Laplacian
kernel factorises along the sorted order and
``S_i = sum_{j>i} e_j exp(-(x_j - x_i)/h)`` obeys ``S_{n-1} = 0`` and
``S_i = w_i (e_{i+1} + S_{i+1})`` with ``w_i = exp(-(x_{i+1} - x_i) / h)``; then
``T = sum_i e_i S_i``. This is exact (no truncation), O(n) after an
O(n log n) sort, and needs no special case for ties (``w_i = 1``). Accuracy:
``w_i`` only ever multiplies, all factors lie in [0, 1], so nothing overflows;
a factor that underflows to 0 is below 1e-308 relative to the terms it cuts
off. The relative error of a chained product ``w_i ... w_{j-1}`` is about
``eps * (j - i + |x_j - x_i| / h)``, the same order as that of
``exp(-fl(x_j - x_i) / h)`` computed directly (the argument itself carries
``eps * |x_j - x_i| / h``).

The sort key packs the label into the bit pattern: for ``0 <= x <= 1`` the
IEEE bits of ``x`` read as an integer are monotone and below 2**62, so
``(bits << 1) | c`` sorts by x exactly and carries ``c`` along (one
vectorised ``numpy.sort`` of uint64, no argsort and no gather).

Notation and estimators: :mod:`calibr._kernels.skce`.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit, read_only
from .scalar_median import scalar_median
from .vexp import f64_as_i64, i64_as_f64, vexp

__all__ = ["scalar_pair_sum", "scalar_ul"]

#: Gaps whose kernel weights are computed together (a loop that vectorises)
#: before the running sum goes through them.
SUM_BLOCK = 4096


@jit()
def _pack_keys(x, c):  # pragma: no cover - compiled
    """uint64 keys (bits(x) << 1) | c, monotone in x for 0 <= x <= 1."""
    n = x.shape[0]
    keys = np.empty(n, np.uint64)
    for i in range(n):
        b = f64_as_i64(x[i]) & 0x7FFFFFFFFFFFFFFF  # -0.0 -> +0.0
        keys[i] = np.uint64((b << 1) | (1 if c[i] != 0 else 0))
    return keys


@jit()
def _sorted_pair_sum(keys, h, nblk):  # pragma: no cover - compiled
    """(T, sum e^2) from sorted keys; e = c - x.

    Walks down from the top in blocks of ``nblk`` gaps: the kernel weights of a
    block's gaps are computed in a loop that vectorises, then the running sum
    goes through them.
    """
    n = keys.shape[0]
    w = np.empty(nblk)
    one = np.uint64(1)
    s = 0.0
    total = 0.0
    diag = 0.0
    key = keys[n - 1]
    e_next = (1.0 if (key & one) else 0.0) - i64_as_f64(np.int64(key >> one))
    diag += e_next * e_next
    hi = n - 1  # gaps i = lo .. hi - 1 (between points i and i + 1)
    while hi > 0:
        lo = max(0, hi - nblk)
        for i in range(lo, hi):
            a = i64_as_f64(np.int64(keys[i] >> one))
            b = i64_as_f64(np.int64(keys[i + 1] >> one))
            w[i - lo] = vexp(-(b - a) / h)
        for i in range(hi - 1, lo - 1, -1):
            key = keys[i]
            e = (1.0 if (key & one) else 0.0) - i64_as_f64(np.int64(key >> one))
            s = w[i - lo] * (e_next + s)
            total += e * s
            diag += e * e
            e_next = e
        hi = lo
    return total, diag


@jit()
def _keys_values(keys):  # pragma: no cover - compiled
    out = np.empty(keys.shape[0])
    for i in range(keys.shape[0]):
        out[i] = i64_as_f64(np.int64(keys[i] >> np.uint64(1)))
    return out


def scalar_pair_sum(x: np.ndarray, c: np.ndarray, h: float | str) -> tuple[float, float, float]:
    """Exact ``(T, sum_i e_i^2, h)`` for the scalar Laplacian kernel, e = c - x.

    ``x``: float64 in [0, 1]; ``c``: 0/1 values; ``h``: a bandwidth or
    ``"median"`` (resolved here; NaN when all x are equal). O(n log n).
    """
    keys = _pack_keys(read_only(x), read_only(c))
    keys.sort()
    if h == "median":
        h = scalar_median(_keys_values(keys), presorted=True)
        if math.isnan(h):
            return math.nan, math.nan, h
    total, diag = _sorted_pair_sum(keys, float(h), SUM_BLOCK)
    return float(total), float(diag), float(h)


@jit()
def _scalar_ul(x, c, h):  # pragma: no cover - compiled
    m = x.shape[0] // 2
    total = 0.0
    for i in range(m):
        a = x[2 * i]
        b = x[2 * i + 1]
        ea = (1.0 if c[2 * i] != 0 else 0.0) - a
        eb = (1.0 if c[2 * i + 1] != 0 else 0.0) - b
        total += ea * eb * vexp(-abs(a - b) / h)
    return total / m


def scalar_ul(x: np.ndarray, c: np.ndarray, h: float | str) -> float:
    """The ``"ul"`` estimate for the scalar kernel (n >= 2); O(n), O(n log n) with "median"."""
    if h == "median":
        h = scalar_median(x)
        if math.isnan(h):
            return math.nan
    return float(_scalar_ul(read_only(x), read_only(c), float(h)))
