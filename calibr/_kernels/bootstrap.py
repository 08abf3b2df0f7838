"""Bootstrap replicates and jackknife values of calibr's metrics, O(n) each.

A replicate draws n rows with replacement: its rows are ``floor(n * u_t)`` for
n uniform numbers ``u_t = gen.random()`` drawn one after another from a
``numpy.random.Generator`` inside the kernel (numba calls numpy's own bit
generator, so the numbers are those of ``gen.random(n)`` in Python); the
replicates of a chunk draw from the chunk's generator in turn. Every metric
here is a function of sums over the drawn rows, so a replicate is one pass over
its draws after one preparation of the sample (``calibr/_inference/bootstrap.py`` has the map):

* **binned** (:func:`binned_replicates`): each row carries, per column k of
  what is binned (1 column for the binary and confidence forms, K classwise),
  its value ``x``, its cell ``k * bins + bin`` and its 0/1 outcome ``c``. A
  replicate counts how often it draws each row (uint8 counts: the random
  increments touch n bytes, which stay in the cache), then adds the counts into
  the per-cell ``(count, sum x, sum c)`` in one pass over the rows in order, and
  turns them into ECE or MCE as
  :func:`calibr._kernels.binned.ece_from_stats` / ``mce_from_stats`` do.
* **scalar SKCE** (:func:`scalar_replicates`): the resampling counts are
  frequency weights of the sample sorted once per kernel, and
  :func:`calibr._kernels.weighted_sums.weighted_pair_sum` gives the sums of the
  repeated sample in O(n) (``docs/definitions.md``, "Frequency weights").
* **"ul"** (:func:`ul_replicates`): the disjoint pairs of the drawn sequence
  in draw order, as ``skce(p[idx], y[idx], "ul")`` takes them.
* **ECCE** (:func:`cumulative_replicates`): the rows sorted once by their
  packed key (``p``, then ``y``: ``calibr._kernels.cumulative.fill_keys``); a
  resample's sorted keys are those keys, each repeated as often as its row is
  drawn, so its running sum adds each sorted row's ``y - p`` that many times, in
  that order, and is read at the end of each block of tied ``p``: the additions
  of ``ecce(p[idx], y[idx])`` one by one, bit for bit, O(n) per replicate (the
  variance ``sum p (1 - p)`` too, which ``ecce`` adds in the sorted order).

The jackknife (leave one row out) of the binned and scalar metrics, for BCa
intervals, is O(1) per row for each column: removing a row changes one cell per
column (binned), or the pair sum by that row's row sum (scalar SKCE).

Replicates are cut into chunks whose bounds depend only on their number; each
chunk has its own generator and runs in one thread, so the results do not
depend on the threads.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from .vexp import vexp
from .weighted_sums import pair_sum_of_counts, weighted_pair_sum

__all__ = [
    "KS",
    "KUIPER",
    "binned_jackknife",
    "binned_replicates",
    "cumulative_replicates",
    "scalar_jackknife",
    "scalar_replicates",
    "ul_replicates",
]

#: Metric codes of the compiled kernels.
ECE, MCE = 0, 1
UQ, BIASED, MMCE = 0, 1, 2
KS, KUIPER = 0, 1


@jit(nogil=True, inline="always")
def _draw(gen, n):  # pragma: no cover - compiled
    """The next drawn row: ``floor(n * u)`` of the generator's next uniform, below n."""
    return min(int(n * gen.random()), n - 1)


@jit(nogil=True, inline="always")
def _binned_value(count, conf, hit, ncols, bins, metric):  # pragma: no cover - compiled
    """ECE (mean over the columns) or MCE (max over every cell) of per-cell sums."""
    if metric == ECE:
        total = 0.0
        for k in range(ncols):
            s = 0.0
            nk = 0.0
            for j in range(k * bins, (k + 1) * bins):
                cnt = count[j]
                if cnt > 0:
                    s += cnt * abs(hit[j] / cnt - conf[j] / cnt)
                nk += cnt
            total += s / nk
        return total / ncols
    best = -1.0
    for j in range(ncols * bins):
        cnt = count[j]
        if cnt > 0:
            gap = abs(hit[j] / cnt - conf[j] / cnt)
            if gap > best:
                best = gap
    return best


#: Counts of draws per row are kept in uint8 (the random increments touch n
#: bytes, which stay in the cache) up to ``COUNT_BASE - 1``; the multiples of
#: ``COUNT_BASE`` go to an int32 carry (rare: a row drawn 256 times).
COUNT_BASE = 256


@jit(nogil=True, inline="always")
def _tally(gen, n, base, counts, carry):  # pragma: no cover - compiled
    """Count the rows of the next replicate (n draws): row i is drawn
    ``counts[i] + base * carry[i]`` times (``counts`` uint8, ``carry`` int32,
    ``base <= 256``). Returns False if a carry was used."""
    ok = True
    for _ in range(n):
        i = _draw(gen, n)
        c = counts[i] + 1
        if c == base:
            counts[i] = 0
            carry[i] += 1
            ok = False
        else:
            counts[i] = c
    return ok


@jit(nogil=True, inline="always")
def _add_row(i, fw, x, cells, c, count, conf, hit):  # pragma: no cover - compiled
    """Add ``fw``, ``fw x_i`` and ``fw c_i`` (row i drawn fw times) into row i's cells."""
    for k in range(x.shape[1]):
        cell = cells[i, k]
        count[cell] += fw
        conf[cell] += fw * x[i, k]
        hit[cell] += fw * c[i, k]


@jit(nogil=True, inline="always")
def _binned_from_counts(counts, carry, base, carried, x, cells, c, count, conf,
                        hit):  # pragma: no cover - compiled
    """Add ``C_i``, ``C_i x_i`` and ``C_i c_i`` into the cells, rows in order (a
    row drawn 0 times adds exact zeros: no branch), ``C_i = counts[i] + base *
    carry[i]``; the carry is read (and reset) only when the replicate ``carried``.

    One signature for both cases (the carry is rare, and a second compiled copy
    of the replicate kernel for int32 counts would double its compile time),
    with the test on ``carried`` outside the loops (inside, it keeps the
    compiler from optimising the common loop: 3x slower).
    """
    n = x.shape[0]
    count[:] = 0.0
    conf[:] = 0.0
    hit[:] = 0.0
    if carried:
        for i in range(n):  # the exact floats of the integers counts[i] + base * carry[i]
            _add_row(i, float(counts[i]) + float(base * carry[i]), x, cells, c, count,
                     conf, hit)
        carry[:] = 0
    else:
        for i in range(n):
            _add_row(i, float(counts[i]), x, cells, c, count, conf, hit)


@jit(nogil=True)
def _binned_replicates(gen, base, x, cells, c, bins, metric, lo, hi, out, small,
                       carry):  # pragma: no cover - compiled
    n, ncols = x.shape
    ncells = ncols * bins
    # allocated here, not passed in: the compiler then knows that the three do not
    # overlap each other or x, which makes the loop that adds into them 20% faster
    count = np.empty(ncells)
    conf = np.empty(ncells)
    hit = np.empty(ncells)
    for b in range(lo, hi):
        carried = not _tally(gen, n, base, small, carry)
        _binned_from_counts(small, carry, base, carried, x, cells, c, count, conf, hit)
        small[:] = 0
        out[b] = _binned_value(count, conf, hit, ncols, bins, metric)
    return 0


def binned_replicates(gen, base, x, cells, c, bins, metric, lo, hi, out):
    """Replicates ``lo .. hi - 1`` of ECE/MCE into ``out``.

    ``x``, ``cells``, ``c``: (n, ncols) values, cells ``k * bins + bin`` and 0/1
    outcomes (uint8). A replicate counts its draws per row (the resampling
    counts ``C_i``, :func:`_tally`), then
    adds ``C_i``, ``C_i x_i`` and ``C_i c_i`` into the cells in one pass over
    the rows in order: the weighted sums of
    :mod:`calibr._kernels.weighted_metrics` with the counts as weights.
    The counts (uint8, and the int32 carry) are allocated here, by numpy:
    ``np.zeros`` of each dtype in compiled code would compile numba's own code
    for it (a third of the kernel's compile time).
    """
    n = x.shape[0]
    return _binned_replicates(gen, base, x, cells, c, bins, metric, lo, hi, out,
                              np.zeros(n, np.uint8), np.zeros(n, np.int32))


@jit(nogil=True)
def binned_stats(x, cells, c, bins):  # pragma: no cover - compiled
    """The per-cell ``(count, sum x, sum c)`` of the sample itself."""
    n, ncols = x.shape
    ncells = ncols * bins
    count = np.zeros(ncells)
    conf = np.zeros(ncells)
    hit = np.zeros(ncells)
    for i in range(n):
        for k in range(ncols):
            cell = cells[i, k]
            count[cell] += 1.0
            conf[cell] += x[i, k]
            hit[cell] += c[i, k]
    return count, conf, hit


@jit(nogil=True, inline="always")
def _cell_term(cnt, cf, ht):  # pragma: no cover - compiled
    """A cell's ECE term ``count * gap`` (0 when empty) and its gap (-1 when empty)."""
    if cnt > 0:
        gap = abs(ht / cnt - cf / cnt)
        return cnt * gap, gap
    return 0.0, -1.0


@jit(nogil=True)
def binned_jackknife(x, cells, c, bins, metric):  # pragma: no cover - compiled
    """ECE or MCE of the sample without row i, for every row: O(n ncols) after
    the per-cell sums (MCE: cells sorted by gap once, then at most ncols + 1
    of them looked at per row)."""
    n, ncols = x.shape
    ncells = ncols * bins
    count, conf, hit = binned_stats(x, cells, c, bins)
    term = np.empty(ncells)
    gap = np.empty(ncells)
    for j in range(ncells):
        term[j], gap[j] = _cell_term(count[j], conf[j], hit[j])
    col_sum = np.zeros(ncols)
    col_n = np.zeros(ncols)
    for k in range(ncols):
        for j in range(k * bins, (k + 1) * bins):
            col_sum[k] += term[j]
            col_n[k] += count[j]
    by_gap = np.argsort(-gap)  # cells, largest gap first (empty cells last)
    mark = np.zeros(ncells, np.bool_)
    out = np.empty(n)
    for i in range(n):
        if metric == ECE:
            total = 0.0
            for k in range(ncols):
                cell = cells[i, k]
                t_new, _ = _cell_term(count[cell] - 1.0, conf[cell] - x[i, k],
                                      hit[cell] - c[i, k])
                total += (col_sum[k] - term[cell] + t_new) / (col_n[k] - 1.0)
            out[i] = total / ncols
        else:
            best = -1.0
            for k in range(ncols):
                cell = cells[i, k]
                mark[cell] = True
                _, g_new = _cell_term(count[cell] - 1.0, conf[cell] - x[i, k],
                                      hit[cell] - c[i, k])
                if g_new > best:
                    best = g_new
            for q in range(ncells):
                j = by_gap[q]
                if not mark[j]:
                    if gap[j] > best:
                        best = gap[j]
                    break
            for k in range(ncols):
                mark[cells[i, k]] = False
            out[i] = best
    return out


@jit(nogil=True, inline="always")
def _skce_value(pair, d1, d2, n, estimator):  # pragma: no cover - compiled
    """uq, biased (rounding-level negatives as 0) or mmce of the weighted sums of
    a sample of n rows."""
    fn = float(n)
    if estimator == UQ:
        return (pair + (d2 - d1) / 2.0) / (fn * (fn - 1.0) / 2.0)
    v = (2.0 * pair + d2) / (fn * fn)
    v = v if v > 0.0 else 0.0
    return math.sqrt(v) if estimator == MMCE else v


@jit(nogil=True, inline="always")
def _scalar_from_counts(counts, carry, base, carried, order, e, g,
                        estimator):  # pragma: no cover - compiled
    """The mean over the kernels of the estimate whose weights are the counts
    (original row order, ``counts + base * carry``), read through each kernel's
    sort; resets the carry."""
    nk, n = e.shape
    total = 0.0
    for k in range(nk):
        pair, d1, d2 = pair_sum_of_counts(e[k], counts, carry, base, carried, order[k], g[k])
        total += _skce_value(pair, d1, d2, n, estimator)
    if carried:
        carry[:] = 0
    return total / nk


@jit(nogil=True)
def _scalar_replicates(gen, base, order, e, g, estimator, lo, hi, out, small,
                       carry):  # pragma: no cover - compiled
    n = order.shape[1]
    for b in range(lo, hi):
        carried = not _tally(gen, n, base, small, carry)
        out[b] = _scalar_from_counts(small, carry, base, carried, order, e, g, estimator)
        small[:] = 0
    return 0


def scalar_replicates(gen, base, order, e, g, estimator, lo, hi, out):
    """Replicates ``lo .. hi - 1`` of the scalar SKCE (mean over the kernels) or
    MMCE into ``out``. For kernel k, ``order[k]`` sorts the rows by its x, and
    ``e[k]``, ``g[k]`` are the residuals and gap factors in that order
    (:func:`calibr._kernels.weighted_sums.sorted_scalars`, ``gap_factors``).
    The draws are counted per row as in :func:`binned_replicates`; the counts,
    read through the sort, are the weights of
    :func:`calibr._kernels.weighted_sums.weighted_pair_sum`."""
    n = order.shape[1]
    return _scalar_replicates(gen, base, order, e, g, estimator, lo, hi, out,
                              np.zeros(n, np.uint8), np.zeros(n, np.int32))


@jit(nogil=True)
def scalar_jackknife(order, e, g, r, estimator):  # pragma: no cover - compiled
    """The scalar SKCE or MMCE without row i (original order), for every row:
    the pair sum loses ``r_i - e_i^2`` (``r``: the row sums of
    :func:`calibr._kernels.weighted_sums.weighted_row_sums`, the diagonal
    included), the diagonal ``e_i^2``. O(n) per kernel."""
    nk, n = e.shape
    ones = np.ones(n)
    out = np.zeros(n)
    for k in range(nk):
        pair, d1, _ = weighted_pair_sum(e[k], ones, order[k], g[k])
        for s in range(n):
            ei2 = e[k, s] * e[k, s]
            p_i = pair - (r[k, s] - ei2)
            d_i = d1 - ei2
            out[order[k, s]] += _skce_value(p_i, d_i, d_i, n - 1, estimator)
    for i in range(n):
        out[i] /= nk
    return out


@jit(nogil=True)
def _ul_replicates(gen, x, e, h, lo, hi, out, rows):  # pragma: no cover - compiled
    nk, n = x.shape
    m = n // 2
    for b in range(lo, hi):
        for t in range(n):
            rows[t] = _draw(gen, n)
        total = 0.0
        for k in range(nk):
            s = 0.0
            for q in range(m):
                i = rows[2 * q]
                j = rows[2 * q + 1]
                s += e[k, i] * e[k, j] * vexp(-abs(x[k, i] - x[k, j]) / h[k])
            total += s / m
        out[b] = total / nk
    return 0


def ul_replicates(gen, x, e, h, lo, hi, out):
    """Replicates ``lo .. hi - 1`` of the ``"ul"`` SKCE (mean over the kernels):
    the pairs (draw 0, draw 1), (draw 2, draw 3), ... of each replicate.
    ``x[k]``, ``e[k]``: the kernel's values and residuals in the original order."""
    return _ul_replicates(gen, x, e, h, lo, hi, out, np.empty(x.shape[1], np.int64))


@jit(nogil=True, inline="always")
def _ecce_value(high, low, variance, n, kind, sigma_scale):  # pragma: no cover - compiled
    """``calibr._metrics.cumulative.EcceStats.value`` of the extremes and the variance of
    n rows."""
    total = float(n)
    out = (max(high, -low) if kind == KS else high - low) / total
    if not sigma_scale:
        return out
    sigma = math.sqrt(variance) / total
    if sigma == 0.0:
        return math.inf if out > 0.0 else 0.0
    return out / sigma


@jit(nogil=True, inline="always")
def _add_copies(run, variance, high, low, step, term, times,
                end):  # pragma: no cover - compiled
    """Add ``step`` to the running sum and ``term`` to the variance ``times``
    times, one addition each (the copies of one sorted key), and read the sum if
    the key ends a block."""
    for _ in range(times):
        run += step
        variance += term
    if end:
        high = max(high, run)
        low = min(low, run)
    return run, variance, high, low


@jit(nogil=True)
def _cumulative_replicates(gen, base, order, steps, terms, ends, kind, sigma_scale, lo, hi,
                           out, counts, carry):  # pragma: no cover - compiled
    n = order.shape[0]
    for b in range(lo, hi):
        carried = not _tally(gen, n, base, counts, carry)
        run = 0.0
        variance = 0.0
        high = 0.0
        low = 0.0
        if not carried:
            for j in range(n):
                run, variance, high, low = _add_copies(
                    run, variance, high, low, steps[j], terms[j], counts[order[j]], ends[j])
        else:  # rare: a row drawn base times or more
            for j in range(n):
                i = order[j]
                run, variance, high, low = _add_copies(
                    run, variance, high, low, steps[j], terms[j], counts[i] + base * carry[i],
                    ends[j])
            carry[:] = 0
        counts[:] = 0
        out[b] = _ecce_value(high, low, variance, n, kind, sigma_scale)
    return 0


def cumulative_replicates(gen, base, order, steps, terms, ends, kind, sigma_scale, lo, hi,
                          out):
    """Replicates ``lo .. hi - 1`` of the ECCE (``kind``: :data:`KS` or
    :data:`KUIPER`, on the scale of p or divided by sigma) into ``out``.

    ``order[j]``: the row of the j-th sorted key; ``steps[j]``, ``terms[j]``: what
    its copies add to the running sum (``y - p``) and to the variance (``p (1 -
    p)``); ``ends[j]``: whether it ends a block of tied ``p``
    (``calibr._metrics.cumulative.sorted_rows``). The draws are counted per row as in
    :func:`binned_replicates` (uint8 counts in the cache, the int32 carry), then
    read in sorted order."""
    n = order.shape[0]
    return _cumulative_replicates(gen, base, order, steps, terms, ends, kind, sigma_scale,
                                  lo, hi, out, np.zeros(n, np.uint8), np.zeros(n, np.int32))
