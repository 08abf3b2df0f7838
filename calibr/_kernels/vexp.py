"""Bit casts between float64 and int64, and a vectorisable ``exp`` for x <= 0.

The kernel metrics evaluate ``exp(-d / h)`` in their inner loops. numba's
``math.exp`` calls libm, which keeps LLVM from vectorising those loops; ``vexp``
below is branch-free, so they vectorise. It is about 1 ulp from a correctly
rounded exp (checked against ``numpy.exp`` in ``tests/test_skce.py``), and
``exp(0)`` is exactly 1.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import intrinsic

from ._jit import jit

__all__ = ["f64_as_i64", "i64_as_f64", "vexp", "vexp_array"]


@intrinsic
def i64_as_f64(typingctx, v):  # pragma: no cover - compile-time helper
    """The float64 whose IEEE bits are the int64 ``v``."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return sig, codegen


@intrinsic
def f64_as_i64(typingctx, v):  # pragma: no cover - compile-time helper
    """The IEEE bits of the float64 ``v`` as an int64."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return sig, codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # fdlibm split: k * _LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10


@jit(inline="always")
def vexp(x):  # pragma: no cover - compiled
    """exp(x) for x <= 0 (or -inf), ~1 ulp, branch-free so that loops vectorise.

    x = k ln2 + r with |r| <= ln2/2; exp(r) by its Taylor polynomial of degree 14
    (truncation < 1e-18); 2**k applied as two normal powers of two so that
    results down to the subnormal range come out right (exp(-746) rounds to 0).
    """
    x = max(x, -746.0)
    kf = np.floor(x * _LOG2E + 0.5)
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
    p = 1.0 / 87178291200.0
    p = 1.0 / 6227020800.0 + r * p
    p = 1.0 / 479001600.0 + r * p
    p = 1.0 / 39916800.0 + r * p
    p = 1.0 / 3628800.0 + r * p
    p = 1.0 / 362880.0 + r * p
    p = 1.0 / 40320.0 + r * p
    p = 1.0 / 5040.0 + r * p
    p = 1.0 / 720.0 + r * p
    p = 1.0 / 120.0 + r * p
    p = 1.0 / 24.0 + r * p
    p = 1.0 / 6.0 + r * p
    p = 0.5 + r * p
    p = 1.0 + r * p
    p = 1.0 + r * p
    k = np.int64(kf)
    k1 = k >> 1
    k2 = k - k1
    return (p * i64_as_f64((k1 + 1023) << 52)) * i64_as_f64((k2 + 1023) << 52)


@jit()
def _vexp_array(x):  # pragma: no cover - compiled
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = vexp(x[i])
    return out


def vexp_array(x: np.ndarray) -> np.ndarray:
    """:func:`vexp` of each value of an array of values <= 0 (for the tests)."""
    return _vexp_array(np.ascontiguousarray(x, dtype=np.float64))
