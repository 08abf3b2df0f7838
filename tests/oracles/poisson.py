"""A pure-Python reference of the Poisson scheme's counter-based generator
(``docs/bootstrap.md``, "The Poisson scheme"), written from its definition with
Python's unbounded integers: MurmurHash3's fmix32 with true 32-bit products and
shifts, the thresholds from mpmath's Poisson(1) distribution function. Nothing
here is shared with ``calibr/_kernels/poisson.py`` or the engines' expressions.
"""

from __future__ import annotations

import mpmath

__all__ = ["count_oracle", "ece_of_counts_oracle", "thresholds_oracle"]

_M = 2**32 - 1
_SALT = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)


def _fmix32(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) % 2**32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) % 2**32
    h ^= h >> 16
    return h


def thresholds_oracle() -> list[int]:
    """``ceil(2**32 P(X <= j))`` for X ~ Poisson(1), while below 2**32 (mpmath, 60 digits)."""
    out = []
    with mpmath.workdps(60):
        cdf = mpmath.mpf(0)
        j = 0
        while True:
            cdf += mpmath.exp(-1) / mpmath.factorial(j)
            t = int(mpmath.ceil(cdf * 2**32))
            if t >= 2**32:
                return out
            out.append(t)
            j += 1


def count_oracle(seed: int, replicate: int, key: int) -> int:
    """The Poisson(1) count of the row of key ``key`` (a signed 64-bit integer) in
    replicate ``replicate`` (1-based) under ``seed``."""
    s_lo, s_hi = seed % 2**32, seed // 2**32
    k = key % 2**64  # two's complement
    k_lo, k_hi = k % 2**32, k // 2**32
    s1 = _fmix32(s_lo ^ _SALT[0])
    s2 = _fmix32(s_hi ^ _SALT[1])
    s3 = _fmix32(_fmix32(s_lo ^ _SALT[2]) ^ s_hi)
    s4 = _fmix32(_fmix32(s_hi ^ _SALT[3]) ^ s_lo)
    a = _fmix32(_fmix32(k_lo ^ s1) ^ k_hi ^ s2)
    b = _fmix32(_fmix32(k_hi ^ s3) ^ k_lo ^ s4) | 1
    h = _fmix32((a + replicate * b) % 2**32)
    return sum(1 for t in thresholds_oracle_cached() if h >= t)


_CACHE: list[int] = []


def thresholds_oracle_cached() -> list[int]:
    if not _CACHE:
        _CACHE.extend(thresholds_oracle())
    return _CACHE


def ece_of_counts_oracle(p: list[float], y: list[int], counts: list[int], bins: int) -> float:
    """The ECE (R's bins, right-closed) of the rows repeated ``counts`` times, by
    repeating them (``float('nan')`` for no rows)."""
    import numpy as np

    import calibr

    idx = [i for i, c in enumerate(counts) for _ in range(c)]
    if not idx:
        return float("nan")
    return calibr.ece(np.asarray(p)[idx], np.asarray(y)[idx], bins=bins)
