"""The counter-based Poisson(1) generator of ``bootstrap(scheme="poisson")``
(``docs/bootstrap.md``, "The Poisson scheme"), in numpy.

The count of row ``i`` in replicate ``r`` is a function of three integers only: the
seed, ``r`` and the row's key. Nothing depends on the order of the rows or on
how they are partitioned, so the same counts are drawn by this module (the
pandas path) and by the engines' expressions (``calibr/_engines/_poisson.py``),
which write the same arithmetic in polars, DuckDB SQL and Spark SQL.

Every step is integer arithmetic on values below ``2**56``, which every engine
computes exactly in a signed 64-bit integer without overflow (DuckDB and Spark's
ANSI mode raise on a 64-bit overflow; none wraps the same way): 32-bit words, a
32-bit product taken as two products by the halves of the constant (each below
``2**48``), shifts written as a product or a floor division by a power of 2 of a
nonnegative value, ``&`` and ``xor``.

1. The words: the seed ``s`` (``0 <= s < 2**64``) gives four constants
   ``s1 .. s4`` (:func:`seed_words`); a row key ``k`` (a signed 64-bit integer)
   its low and high words ``lo = k & M``, ``hi = ((k - lo) / 2**32) & M`` with
   ``M = 2**32 - 1``.
2. The row's state, once per row: ``a = f(f(lo ^ s1) ^ hi ^ s2)`` and
   ``b = f(f(hi ^ s3) ^ lo ^ s4) | 1``, where ``f`` is MurmurHash3's 32-bit
   finaliser (``fmix32``), a bijection of 32-bit words: for keys below
   ``2**32`` (``hi = 0``), distinct keys have distinct ``a``.
3. Replicate ``r`` (``1 <= r <= 2**31``): the uniform word
   ``h = f((a + r b) & M)`` (a Weyl sequence with the row's own odd step, mixed).
4. The count: the number of thresholds ``T_0 < T_1 < ...`` (:data:`THRESHOLDS`,
   ``T_j = ceil(2**32 F(j))`` for the Poisson(1) distribution function ``F``) that
   ``h`` reaches: ``P(count = j) = (T_j - T_{j-1}) / 2**32``, the Poisson(1)
   probability to within ``2**-32``; the largest count is 12.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

__all__ = ["MASK", "MAX_SEED", "THRESHOLDS", "MURMUR", "counts", "row_state", "seed_words",
           "split_key", "uniform_words"]

MASK = 0xFFFFFFFF
#: Seeds are integers ``0 <= seed < MAX_SEED``.
MAX_SEED = 2**64
#: MurmurHash3's finaliser constants (fmix32).
MURMUR = (0x85EBCA6B, 0xC2B2AE35)
#: The constants xored into the seed's words before mixing (the first four
#: words of the fractional digits of pi, as in many hash functions).
_SALT = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)


def _thresholds() -> tuple[int, ...]:
    """``ceil(2**32 F(j))`` for the Poisson(1) distribution function F, while below
    2**32, computed in 50-digit decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 50
        e_inv = Decimal(-1).exp()
        out, term, cdf, j = [], e_inv, e_inv, 0
        while True:
            t = int((cdf * 2**32).to_integral_value(rounding="ROUND_CEILING"))
            if t >= 2**32:
                return tuple(out)
            out.append(t)
            j += 1
            term /= j
            cdf += term


#: The count of a uniform word ``h`` is the number of these that ``h`` is at least.
THRESHOLDS: tuple[int, ...] = _thresholds()


def fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser of uint64 words below 2**32 (exact: every
    product is below 2**64)."""
    h = h ^ (h >> np.uint64(16))
    h = (h * np.uint64(MURMUR[0])) & np.uint64(MASK)
    h = h ^ (h >> np.uint64(13))
    h = (h * np.uint64(MURMUR[1])) & np.uint64(MASK)
    return h ^ (h >> np.uint64(16))


def _fmix_int(h: int) -> int:
    return int(fmix32(np.array([h], dtype=np.uint64))[0])


def seed_words(seed: int) -> tuple[int, int, int, int]:
    """The four 32-bit constants of a seed ``0 <= seed < 2**64``."""
    lo, hi = seed & MASK, seed >> 32
    return (_fmix_int(lo ^ _SALT[0]), _fmix_int(hi ^ _SALT[1]),
            _fmix_int(_fmix_int(lo ^ _SALT[2]) ^ hi), _fmix_int(_fmix_int(hi ^ _SALT[3]) ^ lo))


def split_key(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low and high 32-bit words of int64 row keys, as uint64."""
    u = np.asarray(keys, dtype=np.int64).view(np.uint64)
    return u & np.uint64(MASK), u >> np.uint64(32)


def row_state(seed: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` of each row (uint64 words below 2**32; ``b`` odd)."""
    s1, s2, s3, s4 = (np.uint64(s) for s in seed_words(seed))
    lo, hi = split_key(keys)
    a = fmix32(fmix32(lo ^ s1) ^ hi ^ s2)
    b = fmix32(fmix32(hi ^ s3) ^ lo ^ s4) | np.uint64(1)
    return a, b


def uniform_words(a: np.ndarray, b: np.ndarray, r: int) -> np.ndarray:
    """The uniform 32-bit word of each row in replicate ``r`` (1-based)."""
    return fmix32((a + np.uint64(r) * b) & np.uint64(MASK))


_EDGES = np.array(THRESHOLDS, dtype=np.uint64)


def counts(a: np.ndarray, b: np.ndarray, r: int) -> np.ndarray:
    """The Poisson(1) count of each row in replicate ``r`` (int64)."""
    return np.searchsorted(_EDGES, uniform_words(a, b, r), side="right").astype(np.int64)
