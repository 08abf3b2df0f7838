"""The compiled parts of ``calibr.ecce`` and of the ECCE p-values
(``docs/definitions.md``, "Cumulative calibration errors: `ecce()`").

* :func:`fill_keys` and :func:`key_extremes` -- the extremes of the
  cumulative differences of unweighted binary data: each row's ``p`` and ``y``
  packed into one uint64 key (the bits of ``p`` shifted left by one, ``y`` in
  the last bit), the keys sorted in place by the caller (``numpy.sort`` of n
  integers: no ``argsort`` and no gather), then one pass over them, read at
  the end of each block of tied ``p``.
* :func:`key_steps` -- each sorted key's ``y - p`` and whether it ends a block
  of tied ``p`` (the bootstrap's resamples, ``calibr._kernels.bootstrap``).
* :func:`sorted_extremes` -- the same for weighted rows already sorted by ``p``.
* :func:`group_running` and :func:`group_close` -- per group, the running sums
  of rows streamed in batches sorted by ``p`` across all groups (polars'
  pushed-down ``ecce``/``auroc``, ``calibr._engines.polars``): the state of each
  group is carried from batch to batch, and each group's running sum is read at
  the end of each of its blocks of tied ``p``.
* :func:`partial_extremes` -- one piece of a longer run of sorted keys (a
  partition of Dask's global sort, ``calibr._engines.dask``): its sums and its extremes
  at the block ends before its last, which may go on in the next piece.
* :func:`max_abs_sf` -- ``P(max |B| > x)`` for standard Brownian motion ``B`` on
  [0, 1], the null distribution of the sigma-scaled Kolmogorov-Smirnov ECCE.
* :func:`range_sf` -- ``P(max B - min B > x)``, that of the sigma-scaled Kuiper
  ECCE (and of ``multicalibration()``).

The readable oracles of the tests are in ``tests/oracles/cumulative.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = ["GROUP_STATE", "fill_keys", "group_close", "group_running", "key_extremes",
           "key_steps", "max_abs_sf", "partial_extremes", "range_sf", "sorted_extremes"]


#: The bit pattern of -0.0 (a negative zero gets the key of 0.0).
_NEG_ZERO = np.uint64(1) << np.uint64(63)


@jit(nogil=True)
def fill_keys(x, bits, c, keys):  # pragma: no cover - compiled
    """Write the sort key of each row into ``keys`` (uint64).

    ``bits`` is ``x`` seen as uint64 (``x.view(numpy.uint64)``). For ``x`` in
    [0, 1] the bit pattern of a double has its two top bits clear and orders as
    the value does, so ``key = bits << 1 | 1{c != 0}`` loses nothing: sorting the
    keys sorts the rows by ``x``, tied rows with ``c = 0`` first, and both the
    value (``key >> 1``) and the outcome (``key & 1``) are read back from the key
    (:func:`key_extremes`). -0.0 gets the key of 0.0.
    """
    one = np.uint64(1)
    zero = np.uint64(0)
    for i in range(x.shape[0]):
        b = bits[i]
        if b == _NEG_ZERO:
            b = zero
        keys[i] = (b << one) | (one if c[i] != 0 else zero)
    return 0


@jit(nogil=True)
def key_extremes(keys):  # pragma: no cover - compiled
    """``(high, low, variance)`` of the cumulative differences from the sorted keys
    of :func:`fill_keys`.

    The running sum ``C`` adds ``y - p`` row by row in key order; it is read
    after the last row of each block of equal ``p`` (the next key's value
    differs), so the order of tied rows does not matter. ``high`` and ``low``
    are its largest and smallest value, the empty sum ``C_0 = 0`` included.
    ``variance`` is ``sum p (1 - p)``, added in key order too: the numbers
    depend on the rows, not on their order.
    """
    one = np.uint64(1)
    scratch = np.empty(1, dtype=np.uint64)
    value = scratch.view(np.float64)  # the bits of the key's value, as a double
    n = keys.shape[0]
    run = 0.0
    high = 0.0
    low = 0.0
    variance = 0.0
    for i in range(n):
        k = keys[i]
        b = k >> one
        scratch[0] = b
        v = value[0]
        run += float(k & one) - v
        variance += v * (1.0 - v)
        if i == n - 1 or (keys[i + 1] >> one) != b:
            high = max(high, run)
            low = min(low, run)
    return high, low, variance


@jit(nogil=True)
def key_steps(keys, steps, terms, ends):  # pragma: no cover - compiled
    """For sorted keys of :func:`fill_keys`, what :func:`key_extremes` adds for
    key i, computed as it computes it: ``steps[i]`` to the running sum (``y -
    p``), ``terms[i]`` to the variance (``p (1 - p)``); and ``ends[i]``, whether
    key i ends a block of equal ``p``."""
    one = np.uint64(1)
    scratch = np.empty(1, dtype=np.uint64)
    value = scratch.view(np.float64)
    n = keys.shape[0]
    for i in range(n):
        k = keys[i]
        b = k >> one
        scratch[0] = b
        v = value[0]
        steps[i] = float(k & one) - v
        terms[i] = v * (1.0 - v)
        ends[i] = i == n - 1 or (keys[i + 1] >> one) != b
    return 0


@jit(nogil=True)
def sorted_extremes(xs, cs, ws):  # pragma: no cover - compiled
    """``(high, low, variance, total)`` of weighted rows sorted by ``xs``.

    ``cs`` are the outcomes (0/1) and ``ws`` the weights of the same rows (an
    empty ``ws``: every weight 1). The running sum adds ``w (c - x)`` and is
    read at the end of each block of equal ``xs``; ``high`` and ``low`` include
    ``C_0 = 0``. ``variance`` is ``sum w x (1 - x)`` (frequency weights: a
    row of weight w counts w times), ``total`` is ``sum w``.
    """
    n = xs.shape[0]
    weighted = ws.shape[0] > 0
    run = 0.0
    high = 0.0
    low = 0.0
    variance = 0.0
    total = 0.0
    for i in range(n):
        x = xs[i]
        w = ws[i] if weighted else 1.0
        run += w * (cs[i] - x)
        variance += w * (x * (1.0 - x))
        total += w
        if i == n - 1 or xs[i + 1] != x:
            if run > high:
                high = run
            elif run < low:
                low = run
    return high, low, variance, total


#: The columns of :func:`group_running`'s state, one row per group: the ``p`` of
#: the group's open block, the running sum of ``w (y - p)``, its largest and
#: smallest value read at a block end (0 included), ``sum w p (1 - p)``, ``sum w``,
#: the row count, the weight of the negatives of the closed blocks, of the
#: positives and of the negatives of the open block, the AUROC's numerator and the
#: weight of the positives of the closed blocks. A group's row is 0 before its
#: first row (a first row of ``p = 0`` then opens no block, and closing the empty
#: one would change nothing).
GROUP_STATE = ("last", "run", "high", "low", "var", "W", "n", "below", "bpos", "bneg", "num",
               "wpos")


@jit(nogil=True)
def _close_block(s, k, scale, half):  # pragma: no cover - compiled
    """Close group ``k``'s open block: its running sum is read (calibr's tie rule),
    its positives count the negatives below and ``half`` of the block's own."""
    r = s[k, 1]
    if r > s[k, 2]:
        s[k, 2] = r
    if r < s[k, 3]:
        s[k, 3] = r
    s[k, 10] += s[k, 8] * (scale * s[k, 7] + half * s[k, 9])
    s[k, 7] += s[k, 9]
    s[k, 11] += s[k, 8]
    s[k, 8] = 0.0
    s[k, 9] = 0.0


@jit(nogil=True)
def group_running(g, x, c, ws, skip, scale, half, prev, s):  # pragma: no cover - compiled
    """Add one batch of rows sorted by ``x`` to the state ``s`` (float64, one row
    per group ``g``, a key already less the smallest, the columns of
    :data:`GROUP_STATE`; a new group's row is 0).

    ``c`` are the outcomes (0/1), ``ws`` the weights (empty: every weight 1); a row
    whose key is ``skip`` (a missing group key) is in no group. A row whose ``x``
    differs from its group's open block closes that block (:func:`_close_block`)
    and opens its own. ``prev[0]`` is the ``x`` of the stream's last row, carried
    to the next batch. Returns False, with the state incomplete, as soon as an
    ``x`` is below the one before it (the stream is not sorted) or a key is outside
    the state's rows: the caller then computes the sums otherwise."""
    weighted = ws.shape[0] > 0
    last = prev[0]
    for i in range(g.shape[0]):
        v = x[i]
        if v < last:
            return False
        last = v
        gi = g[i]
        if gi == skip:
            continue
        k = gi
        if k < 0 or k >= s.shape[0]:
            return False
        if v != s[k, 0]:
            _close_block(s, k, scale, half)
            s[k, 0] = v
        w = ws[i] if weighted else 1.0
        s[k, 1] += w * (c[i] - v)
        s[k, 4] += w * (v * (1.0 - v))
        s[k, 5] += w
        s[k, 6] += 1.0
        if c[i] != 0.0:
            s[k, 8] += w
        else:
            s[k, 9] += w
    prev[0] = last
    return True


@jit(nogil=True)
def group_close(s, scale, half):  # pragma: no cover - compiled
    """Close the open block of every group of :func:`group_running`'s state after
    the stream's last batch."""
    for k in range(s.shape[0]):
        _close_block(s, k, scale, half)
    return 0


@jit(nogil=True)
def partial_extremes(keys, ws):  # pragma: no cover - compiled
    """``(run, high, low, variance, total)`` of one piece of sorted keys (of
    :func:`fill_keys`), which may go on before and after it.

    ``run`` adds ``w (y - p)`` in key order from 0 (``ws`` empty: every weight 1,
    and ``y - p`` as :func:`key_extremes` computes it); ``high`` and ``low`` are
    the largest and smallest ``run`` at the block ends of the piece but its last
    (``-inf`` and ``inf`` if there are none): whether the last block ends here
    depends on the next piece. ``variance`` is ``sum w p (1 - p)``, ``total``
    ``sum w``, both in key order."""
    one = np.uint64(1)
    scratch = np.empty(1, dtype=np.uint64)
    value = scratch.view(np.float64)
    n = keys.shape[0]
    weighted = ws.shape[0] > 0
    run = 0.0
    high = -np.inf
    low = np.inf
    variance = 0.0
    total = 0.0
    for i in range(n):
        k = keys[i]
        b = k >> one
        scratch[0] = b
        v = value[0]
        if weighted:
            w = ws[i]
            run += w * (float(k & one) - v)
            variance += w * (v * (1.0 - v))
            total += w
        else:
            run += float(k & one) - v
            variance += v * (1.0 - v)
            total += 1.0
        if i < n - 1 and (keys[i + 1] >> one) != b:
            high = max(high, run)
            low = min(low, run)
    return run, high, low, variance, total


#: Below this x the theta-function series in exp(-1 / x^2) are used, from it on
#: those in erfc(k x / sqrt(2)); each needs at most a dozen terms for 1e-17 there.
_SF_SWITCH = 1.0


@jit(nogil=True)
def max_abs_sf(x):  # pragma: no cover - compiled
    """``P(M > x)`` for each ``x``, ``M = max_{0 <= t <= 1} |B_t|`` the maximum of
    the absolute value of standard Brownian motion on [0, 1] (the null
    distribution of the sigma-scaled Kolmogorov-Smirnov ECCE; Arrieta-Ibarra et
    al. 2022, Darling & Siegert 1953).

    For ``x >= 1``: ``2 sum_{k >= 1} (-1)^(k-1) erfc((2k - 1) x / sqrt(2))``
    (reflection; accurate relative to the value however small it is). Below:
    ``1 - F(x)`` with ``F(x) = (4 / pi) sum_{k >= 0} (-1)^k / (2k + 1)
    exp(-(2k + 1)^2 pi^2 / (8 x^2))`` (the series MAPIE evaluates everywhere), the
    p-value then being above 0.62. ``x <= 0`` gives 1, ``inf`` gives 0, NaN NaN.
    """
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        v = x[i]
        if math.isnan(v):
            out[i] = math.nan
        elif v <= 0.0:
            out[i] = 1.0
        elif math.isinf(v):
            out[i] = 0.0
        elif v < _SF_SWITCH:
            f = 0.0
            sign = 1.0
            for k in range(12):
                odd = 2.0 * k + 1.0
                term = math.exp(-odd * odd * math.pi * math.pi / (8.0 * v * v)) / odd
                f += sign * term
                sign = -sign
                if term == 0.0:
                    break
            out[i] = 1.0 - 4.0 / math.pi * f
        else:
            s = 0.0
            sign = 1.0
            for k in range(1, 60):
                term = math.erfc((2.0 * k - 1.0) * v / math.sqrt(2.0))
                s += sign * term
                sign = -sign
                if term <= 1e-17 * s:
                    break
            out[i] = 2.0 * s
    return out


@jit(nogil=True)
def range_sf(x):  # pragma: no cover - compiled
    """``P(R > x)`` for each ``x``, ``R`` the range (maximum minus minimum) of
    standard Brownian motion on [0, 1] (Arrieta-Ibarra et al. 2022; Feller 1951).

    For ``x >= 1``: ``4 sum_{k >= 1} (-1)^(k-1) k erfc(k x / sqrt(2))``, accurate
    relative to the value however small it is. Below: ``1 - F(x)`` with the
    distribution function ``F(x) = sum_{k >= 0} (8 / x^2 + 2 / (pi^2 (k + 1/2)^2))
    exp(-2 pi^2 (k + 1/2)^2 / x^2)`` (the series mcgrad evaluates everywhere), the
    p-value then being above 0.93. ``x = 0`` gives 1, ``inf`` gives 0, NaN NaN.
    """
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        v = x[i]
        if math.isnan(v):
            out[i] = math.nan
        elif v <= 0.0:
            out[i] = 1.0
        elif math.isinf(v):
            out[i] = 0.0
        elif v < _SF_SWITCH:
            f = 0.0
            for k in range(12):
                h = (k + 0.5) * (k + 0.5)
                term = (8.0 / (v * v) + 2.0 / (h * math.pi * math.pi)) * math.exp(
                    -2.0 * h * math.pi * math.pi / (v * v))
                f += term
                if term == 0.0:
                    break
            out[i] = 1.0 - f
        else:
            s = 0.0
            sign = 1.0
            for k in range(1, 60):
                term = k * math.erfc(k * v / math.sqrt(2.0))
                s += sign * term
                sign = -sign
                if term <= 1e-17 * s:
                    break
            out[i] = 4.0 * s
    return out
