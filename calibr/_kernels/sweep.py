"""The monotonic sweep of ``bins="sweep"`` (Roelofs, Cain, Shlens & Mozer 2022;
``docs/definitions.md``, "Binning options"), compiled: the number of bins ``B``
from the rows sorted once.

The caller (``calibr._binning.sweep``) sorts the values and gives their running sums
of weights and of weighted outcomes (a leading 0). The bins of every ``b``,
equal-width or equal-mass, either closure, are ranges of the sorted rows: a
break ``e`` ends at ``searchsorted(xs, e, side)`` (``side="right"`` for
right-closed bins), so a bin's weight and outcome sum are differences of the
running sums, and its mean outcome is their quotient. :func:`sweep_count`
checks ``b = 2, 3, ...`` and stops at the first whose means over the
non-empty bins decrease somewhere: the arithmetic (breaks, bounds, quotients,
comparisons) is that of the numpy loop it replaces, so ``B`` is the same.
With ``caltrain`` the breaks are google-research caltrain's
(``calibr._binning.sweep.caltrain_breaks``, ``bins="sweep-caltrain"``).

Two ways to check one ``b``, which give the same answer:

* **every bin**: the bins that hold rows, each bound by binary search,
  O(min(b, n) log(b n)): bounded by the rows, whatever ``b`` (which weights
  can make far larger than n);
* **the descents only**, when the running sums are exact (no weights, or whole
  weights, totals below 2**31): a *descent* is a pair of consecutive distinct
  values of positive weight whose mean outcomes decrease, found once in exact
  integer arithmetic. Two neighbouring non-empty bins whose rows hold no
  descent have nondecreasing means (each bin's mean lies between the means of
  its first and last values), exactly, and so do their correctly rounded
  quotients; only the one or two pairs of neighbouring bins around each
  descent can decrease. That is O(D log n) per ``b`` for ``D`` descents, and
  is used when ``D`` is small against ``b`` (outcomes almost sorted by the
  values, where the sweep runs to ``b`` near n).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["AUTO", "DESCENTS", "EVERY_BIN", "sweep_count", "unpack_keys"]

#: How :func:`sweep_count` checks a ``b``: the cheaper way (the default), every
#: bin, or the descents only (the tests compare the three).
AUTO, EVERY_BIN, DESCENTS = 0, 1, 2
#: The descents are checked instead of every bin when this many times their
#: number is below ``b`` (a descent costs a few binary searches, a bin one).
_DESCENT_COST = 8


@jit(nogil=True)
def unpack_keys(keys, bits, cum_c):  # pragma: no cover - compiled
    """From keys sorted in place (``calibr._kernels.cumulative.fill_keys``): the
    bits of each value (``keys >> 1``, to be seen as float64) and the running
    count of outcomes 1, ``cum_c[0] = 0``, ``cum_c[i + 1] = cum_c[i] + (keys[i] &
    1)`` (exact integers)."""
    one = np.uint64(1)
    run = 0.0
    cum_c[0] = 0.0
    for i in range(keys.shape[0]):
        k = keys[i]
        bits[i] = k >> one
        run += float(k & one)
        cum_c[i + 1] = run
    return 0


@jit(nogil=True, inline="always")
def _search(a, v, right, lo, hi):  # pragma: no cover - compiled
    """``numpy.searchsorted(a, v, side)`` within ``[lo, hi]`` (the answer must lie
    there): the first index whose value is above ``v`` (``right``), or at least
    ``v``; ``hi`` if none."""
    while lo < hi:
        mid = (lo + hi) // 2
        if (a[mid] <= v) if right else (a[mid] < v):
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit(nogil=True, inline="always")
def _floor_break(i, nb):  # pragma: no cover - compiled
    """The smallest double ``v`` with ``floor(v * nb) >= i`` in float64 (caltrain's
    equal-width bin of ``v`` is ``min(nb - 1, floor(v * nb))``, so its bins are
    closed on the left at these breaks): from ``i / nb``, a few steps of one ulp."""
    fb = float(nb)
    v = i / fb
    while np.floor(v * fb) < i:
        v = np.nextafter(v, np.inf)
    while np.floor(np.nextafter(v, -np.inf) * fb) >= i:
        v = np.nextafter(v, -np.inf)
    return v


@jit(nogil=True, inline="always")
def _rank_start(k, n, nb):  # pragma: no cover - compiled
    """The first rank ``i`` (0-based) of caltrain's equal-mass group ``k`` of ``n``
    sorted rows in ``nb`` groups: the smallest ``i`` with ``floor((i / n) * nb) >= k``
    in float64, as caltrain computes each rank's group."""
    fn = float(n)
    fb = float(nb)
    i = (k * n + nb - 1) // nb  # ceil(k n / nb), then the float64 rule's own rank
    while i > 0 and np.floor(((i - 1) / fn) * fb) >= k:
        i -= 1
    while np.floor((i / fn) * fb) < k:
        i += 1
    return i


@jit(nogil=True, inline="always")
def _edge(i, xs, cum_w, g):  # pragma: no cover - compiled
    """The inner break ``i`` (1-based) of the bins of one ``b``, ``g = (equal_mass,
    weighted, caltrain, step, q, r, b)``: equal-width ``numpy.linspace(0, 1, b +
    1)[i]`` (``i * step``, ``step = 1 / b``, as numpy computes it); equal-mass the
    cut point between the groups of ``numpy.array_split`` of the sorted rows
    (``calibr._binning.equal_mass.equal_mass_breaks``, ``presorted``), groups of ``q`` or
    ``q + 1`` rows (of the repeated rows with weights), the first ``r`` larger.
    caltrain's rule (``calibr._binning.sweep.caltrain_breaks``, closed on the left):
    :func:`_floor_break`, or the first value of its equal-mass group
    :func:`_rank_start` (no weights)."""
    equal_mass, weighted, caltrain, step, q, r, nb = g
    if not equal_mass:
        return _floor_break(i, nb) if caltrain else i * step
    if caltrain:
        return xs[_rank_start(i, xs.shape[0], nb)]
    s = i * q + min(i, r)
    if not weighted:
        return (xs[s - 1] + xs[s]) / 2.0
    n = xs.shape[0]
    # the rows at ranks s - 1 and s of the repeated sample: searchsorted(cum_w[1:],
    # rank, "right")
    last = _search(cum_w, float(s - 1), True, 1, n + 1) - 1
    first = _search(cum_w, float(s), True, 1, n + 1) - 1
    return (xs[last] + xs[first]) / 2.0


@jit(nogil=True, inline="always")
def _mean(cum_w, cum_c, lo, hi):  # pragma: no cover - compiled
    """The weight and the mean outcome of the sorted rows ``[lo, hi)`` (an empty
    ``cum_w``: every weight 1, the running count ``k`` at ``k``)."""
    w = float(hi - lo) if cum_w.shape[0] == 0 else cum_w[hi] - cum_w[lo]
    return w, ((cum_c[hi] - cum_c[lo]) / w if w > 0 else 0.0)


@jit(nogil=True)
def _bin_number(v, xs, cum_w, m, right, g):  # pragma: no cover - compiled
    """The bin (0-based) of the value ``v`` among ``m`` inner breaks: the count of
    breaks ``e`` with ``e < v`` (right-closed; ``e <= v`` left-closed), found by
    binary search over the breaks (they are nondecreasing)."""
    a, b = 0, m
    while a < b:
        mid = (a + b + 1) // 2
        e = _edge(mid, xs, cum_w, g)
        if (e < v) if right else (e <= v):
            a = mid
        else:
            b = mid - 1
    return a


@jit(nogil=True)
def _every_bin(xs, cum_w, cum_c, m, right, g):  # pragma: no cover - compiled
    """Whether the means of the non-empty bins of ``m`` inner breaks are
    nondecreasing, bin after bin. Only the bins that hold rows are visited: the
    next row's bin is the one after the last when its upper break lies above it
    (one break read, the usual case), else found by :func:`_bin_number` (a
    binary search over the breaks, past empty bins), and the bin's end by a
    binary search of the rows. So one ``b`` costs O(min(b, n) log(b n)):
    bounded by the rows, never by ``b`` (which weights can make far larger
    than n)."""
    n = xs.shape[0]
    lo = 0
    prev = 0.0
    seen = False
    k = _bin_number(xs[0], xs, cum_w, m, right, g) if n > 0 else m
    upper = _edge(k + 1, xs, cum_w, g) if k < m else 1.0  # bin k's upper break
    while lo < n:
        # xs[lo] lies in bin k, so its upper break is not below it: hi > lo
        hi = n if k == m else _search(xs, upper, right, lo + 1, n)
        w, acc = _mean(cum_w, cum_c, lo, hi)
        if w > 0:
            if seen and acc < prev:
                return False
            prev = acc
            seen = True
        lo = hi
        if lo < n:
            k += 1  # xs[lo] lies past bin k - 1: in bin k unless above its upper break
            if k < m:
                upper = _edge(k + 1, xs, cum_w, g)
                if (upper < xs[lo]) if right else (upper <= xs[lo]):
                    k = _bin_number(xs[lo], xs, cum_w, m, right, g)
                    if k < m:
                        upper = _edge(k + 1, xs, cum_w, g)
    return True


@jit(nogil=True)
def _bin_of(t, xs, cum_w, m, right, g):  # pragma: no cover - compiled
    """``(lo, hi)``: the sorted rows of the bin that holds row ``t``
    (:func:`_bin_number` of its value)."""
    n = xs.shape[0]
    a = _bin_number(xs[t], xs, cum_w, m, right, g)
    lo = 0 if a == 0 else _search(xs, _edge(a, xs, cum_w, g), right, 0, t + 1)
    hi = n if a == m else _search(xs, _edge(a + 1, xs, cum_w, g), right, t + 1, n)
    return lo, hi


@jit(nogil=True)
def _descents_hold(xs, cum_w, cum_c, last, first, m, right, g):  # pragma: no cover - compiled
    """Whether the pairs of neighbouring non-empty bins around each descent
    (``last[d]``: a row of its higher value, ``first[d]``: of the lower one after
    it) have nondecreasing means."""
    n = xs.shape[0]
    for d in range(last.shape[0]):
        lo, hi = _bin_of(last[d], xs, cum_w, m, right, g)
        w, acc = _mean(cum_w, cum_c, lo, hi)
        if first[d] >= hi:  # the two values in neighbouring bins (empty bins between)
            lo2, hi2 = _bin_of(first[d], xs, cum_w, m, right, g)
            _, acc2 = _mean(cum_w, cum_c, lo2, hi2)
            if acc2 < acc:
                return False
            continue
        # both in one bin: that bin against the non-empty bins before and after it
        # the last row of weight > 0 before lo is k - 1, the first from hi on k2 - 1
        unit = cum_w.shape[0] == 0
        k = lo if unit else _search(cum_w, cum_w[lo], False, 0, lo + 1)
        k2 = hi + 1 if unit else _search(cum_w, cum_w[hi], True, hi + 1, n + 1)
        if k > 0:
            lo0, hi0 = _bin_of(k - 1, xs, cum_w, m, right, g)
            _, acc0 = _mean(cum_w, cum_c, lo0, hi0)
            if acc < acc0:
                return False
        if k2 <= n:
            lo2, hi2 = _bin_of(k2 - 1, xs, cum_w, m, right, g)
            _, acc2 = _mean(cum_w, cum_c, lo2, hi2)
            if acc2 < acc:
                return False
    return True


@jit(nogil=True)
def _distinct_values(xs, cum_w, cum_c, exact, last, first):  # pragma: no cover - compiled
    """Whether the means of the distinct values of positive weight are
    nondecreasing (as the rounded quotients compare), and the number of descents
    between them (in exact integer arithmetic, when ``exact``); with room in
    ``last`` and ``first``, their rows are written there. The tests of the
    first pass (noisy outcomes: half of them true) are added, not branched on."""
    n = xs.shape[0]
    write = last.shape[0] > 0
    falls = 0
    prev = np.inf  # no value yet: nothing falls below it
    pw = np.int64(0)
    pc = np.int64(0)
    prow = 0
    count = 0
    start = 0
    for i in range(n):
        if i < n - 1 and xs[i + 1] == xs[i]:
            continue
        w, acc = _mean(cum_w, cum_c, start, i + 1)
        if w > 0:
            falls += np.int64(acc < prev) if prev != np.inf else 0
            prev = acc
            if exact:
                cw = np.int64(w)
                cc = np.int64(cum_c[i + 1] - cum_c[start])
                down = pc * cw > cc * pw  # pc / pw > cc / cw, exactly (0 / 0 first)
                if write and down:
                    last[count] = prow
                    first[count] = start
                count += np.int64(down)
                pw = cw
                pc = cc
                prow = i
        start = i + 1
    return falls == 0, count


@jit(nogil=True)
def sweep_count(xs, cum_w, cum_c, equal_mass, right, weighted, largest, exact,
                mode, caltrain=False):  # pragma: no cover - compiled
    """The number of bins of the monotonic sweep.

    Parameters
    ----------
    xs : (n,) float64
        The values, sorted.
    cum_w, cum_c : (n + 1,) float64
        The running sums (a leading 0) of the weights and of the weighted
        outcomes, in that order; an empty ``cum_w`` for no weights (the running
        count, ``cum_w[k] = k``, not stored).
    equal_mass, right, weighted : bool
        The placement, the closure, and whether there are weights (equal-mass
        breaks of the repeated rows).
    largest : int
        The largest ``b`` (the rows, or the whole total weight; at most
        ``MAX_BINS``; one less than the rows for caltrain's rule).
    exact : bool
        Whether the running sums are exact integers below 2**31 (no weights, or
        whole weights): then the descents may stand for every bin.
    mode : int
        :data:`AUTO`, :data:`EVERY_BIN` or :data:`DESCENTS` (the latter only
        when ``exact``).
    caltrain : bool
        caltrain's breaks (``bins="sweep-caltrain"``: :func:`_floor_break` and
        :func:`_rank_start`, closed on the left, no weights) instead of calibr's.

    Returns
    -------
    int
        The largest ``b <= largest`` such that the bins of every ``b' <= b``
        have nondecreasing means; ``largest`` at once when the distinct values
        do (every binning then does).
    """
    n = xs.shape[0]
    empty = np.empty(0, np.int64)
    monotone, count = _distinct_values(xs, cum_w, cum_c, exact, empty, empty)
    if monotone:
        return largest
    # the descents, if they can ever stand for every bin (b - 1 < largest inner breaks)
    exact = exact and (mode == DESCENTS or _DESCENT_COST * count < largest - 1)
    last = np.empty(count if exact else 0, np.int64)
    first = np.empty(count if exact else 0, np.int64)
    if exact:
        _distinct_values(xs, cum_w, cum_c, exact, last, first)
    nn = n if cum_w.shape[0] == 0 else int(cum_w[n])  # the rows of the repeated sample
    best = 1
    for b in range(2, largest + 1):
        q = 0
        r = 0
        m = b - 1
        if equal_mass and not caltrain:
            bb = min(b, nn)
            q = nn // bb
            r = nn % bb
            m = bb - 1
        g = (equal_mass, weighted, caltrain, 1.0 / b, q, r, b)
        # every bin costs one search per non-empty bin (at most n), a descent a few
        use_descents = exact and (mode == DESCENTS or (
            mode == AUTO and _DESCENT_COST * count < min(m, n)))
        if use_descents:
            ok = _descents_hold(xs, cum_w, cum_c, last, first, m, right, g)
        else:
            ok = _every_bin(xs, cum_w, cum_c, m, right, g)
        if not ok:
            break
        best = b
    return best
