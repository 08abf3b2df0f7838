"""The exact median bandwidth of scalars: R's ``median(d[d > 0])`` over the
pairwise differences ``|x_i - x_j|``, i < j (``docs/definitions.md``, "Kernel
metrics", median bandwidth), without forming the n^2 differences.

On sorted values the number of pairs with ``x_j - x_i <= t`` is one O(n)
merge-like sweep (rounding is monotone, so ``fl(x_j - x_i)`` is monotone in j
and in i); it runs as four interleaved branch-free sweeps. The k-th smallest
difference is found by a bracketing selection in the spirit of Johnson &
Mizoguchi (1978) / Croux & Rousseeuw (1992): keep a value bracket (A, B) that
holds the answer and, per row i, the range of columns j whose difference lies
inside it; pick two pivots on either side of the target rank, count exactly at
them, shrink; once at most max(n, ``SELECT_CAP``) candidates remain, collect
them and select with ``numpy.partition``. The first pivots come from the
autocorrelation (by FFT) of a histogram of x, later ones from a weighted random
sample of the candidates. Pivots only steer: every count is exact, so the
answer is exactly a computed difference ``x_j - x_i`` (as R's
``outer``/``abs`` computes it), whatever the pivots. About six O(n) sweeps
after the sort in practice.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = ["scalar_median"]

#: Collect the candidates once at most max(n, SELECT_CAP) remain; before that,
#: steer with pivots from a sample of SELECT_SAMPLE candidates ...
SELECT_CAP = 1 << 16
SELECT_SAMPLE = 1 << 16
#: ... and the first pivots from the autocorrelation of a histogram of x with this
#: many bins (0: sample from the start).
SELECT_HIST_BINS = 1 << 16


@jit()
def _tie_runs(x, out):  # pragma: no cover - compiled
    """out[i] = end of the run of values equal to x_i (x sorted), i.e. the first
    j with x_j - x_i > 0; returns the number of tied pairs i < j."""
    n = x.shape[0]
    z = 0
    start = 0
    for i in range(1, n + 1):
        if i == n or x[i] != x[i - 1]:
            run = i - start
            z += run * (run - 1) // 2
            for r in range(start, i):
                out[r] = i
            start = i
    return z


@jit(inline="always")
def _first_above(xp, n, i, t):  # pragma: no cover - compiled
    """The first j in [0, n] with x_j - x_i > t (binary search; x_n = +inf)."""
    lo = 0
    hi = n
    xi = xp[i]
    while lo < hi:
        mid = (lo + hi) >> 1
        if xp[mid] - xi <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit()
def _ptr_pass(xp, n, t, out):  # pragma: no cover - compiled
    """out[i] = #{j : x_j - x_i <= t}; returns #{i < j : x_j - x_i <= t}.

    ``xp`` is the sorted x followed by +inf; needs t >= 0, so that out[i] > i. A
    strict count (``< t``) is this count at the largest double below t (see
    :func:`_count_below`). For fixed t the pointer is monotone in i (rounding is
    monotone), so this is a merge; it runs as four interleaved branch-free merges
    over segments with equal step counts (a step advances i or the pointer), which
    hides the latency and avoids branch mispredictions.
    """
    # steps(a) = a + out[a] is monotone: split [0, n) into 4 segments of equal steps
    bnd = np.empty(5, np.int64)
    bnd[0] = 0
    bnd[4] = n
    base = _first_above(xp, n, 0, t)
    total = (n - 1) + _first_above(xp, n, n - 1, t)
    for s in range(1, 4):
        target = base + (total - base) * s // 4
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if mid + _first_above(xp, n, mid, t) < target:
                lo = mid + 1
            else:
                hi = mid
        bnd[s] = max(lo, bnd[s - 1])
    i0, i1, i2, i3 = bnd[0], bnd[1], bnd[2], bnd[3]
    e0, e1, e2, e3 = bnd[1], bnd[2], bnd[3], bnd[4]
    j0 = _first_above(xp, n, i0, t) if i0 < e0 else 0
    j1 = _first_above(xp, n, i1, t) if i1 < e1 else 0
    j2 = _first_above(xp, n, i2, t) if i2 < e2 else 0
    j3 = _first_above(xp, n, i3, t) if i3 < e3 else 0
    while i0 < e0 and i1 < e1 and i2 < e2 and i3 < e3:
        out[i0] = j0
        out[i1] = j1
        out[i2] = j2
        out[i3] = j3
        a0 = xp[j0] - xp[i0] <= t
        a1 = xp[j1] - xp[i1] <= t
        a2 = xp[j2] - xp[i2] <= t
        a3 = xp[j3] - xp[i3] <= t
        j0 += a0
        i0 += 1 - a0
        j1 += a1
        i1 += 1 - a1
        j2 += a2
        i2 += 1 - a2
        j3 += a3
        i3 += 1 - a3
    for s in range(4):  # the (short) remainders, one segment at a time
        if s == 0:
            i, j, e = i0, j0, e0
        elif s == 1:
            i, j, e = i1, j1, e1
        elif s == 2:
            i, j, e = i2, j2, e2
        else:
            i, j, e = i3, j3, e3
        while i < e:
            out[i] = j
            a = xp[j] - xp[i] <= t
            j += a
            i += 1 - a
    cnt = 0
    for i in range(n):
        cnt += out[i] - i - 1
    return cnt


def _count_at_most(xp: np.ndarray, n: int, t: float, out: np.ndarray) -> int:
    """#{i < j : x_j - x_i <= t} (t >= 0); out[i] = #{j : x_j - x_i <= t}."""
    return int(_ptr_pass(xp, n, t, out))


def _count_below(xp: np.ndarray, n: int, t: float, out: np.ndarray) -> int:
    """#{i < j : x_j - x_i < t} (t > 0); out[i] = #{j : x_j - x_i < t}.

    For doubles, ``d < t`` is exactly ``d <= nextafter(t, -inf)``.
    """
    return int(_ptr_pass(xp, n, math.nextafter(t, -math.inf), out))


@jit()
def _collect(x, lo_ptr, hi_ptr, total):  # pragma: no cover - compiled
    out = np.empty(total)
    m = 0
    for i in range(x.shape[0]):
        xi = x[i]
        for j in range(lo_ptr[i], hi_ptr[i]):
            out[m] = x[j] - xi
            m += 1
    return out


@jit()
def _sample(x, lo_ptr, hi_ptr, rows, u):  # pragma: no cover - compiled
    """For each drawn row r (uniform) and u in [0, 1): a uniform candidate of row r,
    as (difference, weight = number of candidates of row r)."""
    m = rows.shape[0]
    vals = np.empty(m)
    wts = np.empty(m)
    for s in range(m):
        r = rows[s]
        c = hi_ptr[r] - lo_ptr[r]
        if c > 0:
            j = lo_ptr[r] + min(c - 1, np.int64(u[s] * c))
            vals[s] = x[j] - x[r]
        else:
            vals[s] = np.inf
        wts[s] = c
    return vals, wts


def _select_pair_differences(
    xp: np.ndarray, n: int, k: int, lo_ptr: np.ndarray, zeros: int
) -> tuple[float, float]:
    """The k-th and (k+1)-th smallest (1-based) of all x_j - x_i, i < j, on sorted x.

    Needs zeros = #(d = 0) < k <= C(n, 2) (the (k+1)-th is NaN when it does not
    exist); ``xp`` is the sorted x followed by +inf, ``lo_ptr`` the end of each
    row's tie run (from ``_tie_runs``; it is overwritten).

    The state is a value bracket (A, B) that holds the k-th value, with
    #(d <= A) = le_a < k <= lt_b = #(d < B), and per row i the candidate columns
    lo_ptr[i] <= j < hi_ptr[i] whose difference lies in (A, B). Each round picks
    two pivots on either side of the target rank and counts exactly at them: the
    first round from the pair differences of a histogram of x (its
    autocorrelation, by FFT), the later ones from a sample of the candidates
    (uniform rows, weighted by their candidate counts). Pivots only steer: every
    count is exact, so the result is exact whatever they are.
    """
    npairs = n * (n - 1) // 2
    x = xp[:n]
    le_a = zeros  # A = 0
    a_val = 0.0
    hi_ptr = np.full(n, n, dtype=np.int64)  # B = +inf
    lt_b = npairs
    b_val = math.inf
    tmp = np.empty(n, np.int64)
    cap = max(n, SELECT_CAP)
    m = SELECT_SAMPLE
    rng = np.random.default_rng(20190429)
    first = True
    while True:
        cand = lt_b - le_a
        local = k - le_a  # 1-based rank of the answer among the candidates
        if cand <= cap:
            vals = _collect(x, lo_ptr, hi_ptr, cand)
            if local < cand:
                vals.partition(local - 1)  # then the next rank is the minimum above it
                return float(vals[local - 1]), float(vals[local:].min())
            v1 = float(np.partition(vals, local - 1)[local - 1])
            return v1, _next_above(xp, n, v1, k)
        if first and SELECT_HIST_BINS > 0:
            p_lo, p_hi = _histogram_pivots(x, k, SELECT_HIST_BINS)
        else:
            p_lo, p_hi = _sample_pivots(x, lo_ptr, hi_ptr, local, cand, m, rng)
        first = False
        if p_lo is not None and a_val < p_lo < b_val:  # expected below: count d <= p_lo
            le = _count_at_most(xp, n, p_lo, tmp)
            if le < k:
                lo_ptr, tmp = tmp, lo_ptr
                le_a, a_val = le, p_lo
            else:
                lt = _count_below(xp, n, p_lo, tmp)
                if lt < k:  # p_lo is the k-th value
                    return p_lo, (p_lo if le > k else _next_above(xp, n, p_lo, k))
                hi_ptr, tmp = tmp, hi_ptr
                lt_b, b_val = lt, p_lo
        if p_hi is not None and a_val < p_hi < b_val:  # expected above: count d < p_hi
            lt = _count_below(xp, n, p_hi, tmp)
            if lt >= k:
                hi_ptr, tmp = tmp, hi_ptr
                lt_b, b_val = lt, p_hi
            else:
                le = _count_at_most(xp, n, p_hi, tmp)
                if le >= k:  # p_hi is the k-th value
                    return p_hi, (p_hi if le > k else _next_above(xp, n, p_hi, k))
                lo_ptr, tmp = tmp, lo_ptr
                le_a, a_val = le, p_hi


@jit()
def _bin_counts(x, nbins):  # pragma: no cover - compiled
    """Counts of the sorted x in nbins equal bins over [x_0, x_{n-1}]."""
    n = x.shape[0]
    width = (x[n - 1] - x[0]) / nbins
    scale = nbins / (x[n - 1] - x[0])
    counts = np.zeros(nbins)
    for i in range(n):
        b = np.int64((x[i] - x[0]) * scale)
        counts[max(0, min(b, nbins - 1))] += 1.0
    return counts, width


def _histogram_pivots(x: np.ndarray, k: int, nbins: int):
    """Pivots around the k-th pair difference from a histogram of x.

    Pairs whose bins are delta apart differ by about delta bin widths (within one),
    and the number of such pairs is the autocorrelation of the bin counts.
    """
    spread = float(x[-1] - x[0])
    if not math.isfinite(nbins / spread):  # (a spread below ~1e-304: sample instead)
        return None, None
    counts, width = _bin_counts(x, nbins)
    fourier = np.fft.rfft(counts, 2 * nbins)
    auto = np.rint(np.fft.irfft(fourier.real**2 + fourier.imag**2, 2 * nbins)[:nbins])
    auto[0] = (auto[0] - x.shape[0]) / 2  # pairs within a bin, each once
    delta = int(np.searchsorted(np.cumsum(auto), k))  # first offset reaching rank k
    p_lo = (delta - 2) * width if delta >= 3 else None
    return p_lo, (delta + 2) * width


def _sample_pivots(x, lo_ptr, hi_ptr, local, cand, m, rng):
    """Pivots around the local-th candidate from a weighted sample of the candidates."""
    n = x.shape[0]
    rows = np.sort(rng.integers(0, n, size=m))  # sorted: the gathers then stream
    vals, wts = _sample(x, lo_ptr, hi_ptr, rows, rng.random(m))
    if np.count_nonzero(wts) < m // 16:  # few rows still have candidates: draw from those
        active = np.flatnonzero(hi_ptr > lo_ptr)
        rows = np.sort(active[rng.integers(0, active.size, size=m)])
        vals, wts = _sample(x, lo_ptr, hi_ptr, rows, rng.random(m))
    order = np.argsort(vals)
    vals = vals[order]
    cum = np.cumsum(wts[order])
    wsum = float(cum[-1])
    if wsum == 0.0:  # no drawn row has candidates: take any candidate
        i = int(np.flatnonzero(hi_ptr > lo_ptr)[0])
        return None, float(x[lo_ptr[i]] - x[i])
    m_eff = wsum * wsum / float(np.sum(wts * wts))
    q = local / cand
    delta = 3.0 * math.sqrt(q * (1.0 - q) / m_eff) + 2.0 / m_eff
    i_lo = int(np.searchsorted(cum, (q - delta) * wsum)) - 1
    i_hi = int(np.searchsorted(cum, (q + delta) * wsum))
    p_lo = float(vals[i_lo]) if i_lo >= 0 else None
    p_hi = float(vals[i_hi]) if i_hi < m and vals[i_hi] < math.inf else None
    if p_lo is None and p_hi is None:
        p_hi = float(vals[int(np.searchsorted(cum, q * wsum))])
    return p_lo, p_hi


def _next_above(xp: np.ndarray, n: int, v: float, k: int) -> float:
    """The (k+1)-th smallest difference when the k-th is v and #(d <= v) == k."""
    if k >= n * (n - 1) // 2:
        return math.nan
    return float(_min_above(xp, n, v))


@jit()
def _min_above(xp, n, t):  # pragma: no cover - compiled
    """The smallest difference x_j - x_i (i < j) that is > t (t >= 0)."""
    ptr = np.empty(n, np.int64)
    _ptr_pass(xp, n, t, ptr)
    best = np.inf
    for i in range(n):
        j = ptr[i]
        if j < n:
            d = xp[j] - xp[i]
            if d < best:
                best = d
    return best


def scalar_median(x: np.ndarray, presorted: bool = False) -> float:
    """Exact R ``median(d[d > 0])`` of ``d = |x_i - x_j|``, i < j; NaN if no d > 0."""
    n = x.shape[0]
    xp = np.empty(n + 1)
    if presorted:
        xp[:n] = x
    else:
        xp[:n] = np.sort(x)
    xp[n] = np.inf
    runs = np.empty(n, np.int64)
    zeros = int(_tie_runs(xp[:n], runs))
    npos = n * (n - 1) // 2 - zeros
    if npos <= 0:
        return math.nan
    v1, v2 = _select_pair_differences(xp, n, zeros + (npos + 1) // 2, runs, zeros)
    if npos % 2 == 1:
        return v1
    return (v1 + v2) / 2.0
