"""The exact median bandwidth of scalars: R's ``median(d[d > 0])`` over the
pairwise differences ``|x_i - x_j|``, i < j (``docs/definitions.md``, "Kernel
metrics", median bandwidth), without forming the n^2 differences, in compiled
code whose every step scales with n.

**Definition on sorted values.** For x sorted ascending and i < j, R's
``abs(x_i - x_j)`` is ``d_ij = fl(x_j - x_i)`` (rounding is symmetric, so
``fl(x_i - x_j) = -fl(x_j - x_i)``). Let N = n(n - 1)/2 be the number of pairs,
Z the number of tied pairs (d = 0) and P = N - Z the number of positive ones.
The median of the positive d is the k-th smallest of all N differences with
k = Z + ceil(P / 2), and for even P the mean ``(v_k + v_{k+1}) / 2`` with the
(k+1)-th: R's ``median()`` of the P positive values. Z is one pass over the runs
of equal values.

**Counting.** Rounding is monotone, so ``d_ij`` is nondecreasing in j and
nonincreasing in i. Hence, for any t >= 0, the first column
``f_t(i) = min{j : d_ij > t}`` is nondecreasing in i, and
``#{i < j : d_ij <= t} = sum_i (f_t(i) - i - 1)`` is one merge-like pass of at
most 2n steps (:func:`_ptr_pass`). A strict count is this count at the largest
double below t (for doubles, ``d < t`` is exactly ``d <= nextafter(t, -inf)``).

**Selection.** The state is a value bracket (A, B) that holds the k-th value,
with ``le_a = #(d <= A) < k <= #(d < B) = lt_b``, and per row i the candidate
columns ``lo[i] <= j < hi[i]`` whose difference lies in (A, B)
(``lo = f_A``, ``hi = f_{prev(B)}``); there are ``lt_b - le_a`` candidates and
the answer is the ``(k - le_a)``-th smallest of them. It starts at A = 0
(``lo`` = the end of each row's tie run) and B = +inf. Each round takes two
pivots and counts exactly at each:

* ``#(d <= p) < k``: the k-th is above p; p becomes A.
* else ``#(d < p) >= k``: the k-th is below p; p becomes B.
* else ``#(d < p) < k <= #(d <= p)``: p *is* the k-th value (heavy ties end the
  search here). The (k+1)-th is p again when ``#(d <= p) > k``, else the
  smallest difference above p, which the pointers of that count give (row i's
  smallest difference above p is at column ``f_p(i)``).

The pivots of a round are two order statistics of a uniform random sample of
the candidates (:func:`_sample_band`), a few standard deviations of the sample
rank below and above the target's quantile. From n = ``SUBSAMPLE_MIN`` on,
the first round's pivots come instead from the same selection run on a
systematic subsample y of every ``SUBSAMPLE_STEP``-th value: the differences of
y's pairs estimate the quantiles of x's to about 0.5 / |y| (much better than a
random sample of pairs of the same cost), and that selection stops at a bracket
about ``SUBSAMPLE_Z`` of those errors wide on either side, whose ends are the
pivots. Once at most ``COLLECT_PER_ROW * n + COLLECT_MIN`` candidates remain,
they are collected and the rank and the next one are selected among them
(:func:`_two_ranks`); when the k-th is the last candidate, the (k+1)-th is the
smallest difference at or above B (``hi[i]`` is row i's first column with
d >= B).

**Exactness.** The samples, the subsample and the pivots only steer: every
decision is taken on exact counts of x's differences, and every value returned
is a computed difference ``fl(x_j - x_i)`` whose rank among all N is
established by those counts (a pivot is returned only when the counts at it
straddle k; a collected value only by its rank among the candidates, whose
count below them is exact). The answer is therefore exactly R's, whatever the
random numbers, which come from a fixed seed so that the work done is
reproducible too. Every round counts at least one pivot that is a candidate
(a sampled one) or shrinks the bracket, so the search ends.

**Cost.** Nothing has a cost independent of n. Counting is O(n) (two counts a
round), sampling and selecting the pivots O(m) for a sample of m, collecting
and the final selection O(n). With pivots from m candidates the candidates
shrink by about ``z / sqrt(m)`` per round; the sample of a round is the
smallest that shares the shrinking (to half the collection cap) evenly over
the rounds still needed at the largest sample (``SAMPLE_PER_ROW * n``, at most
``SAMPLE_CAP``). With the subsample's first pivots, that is two rounds at
n = 1e5 and 1e6 (the subsample's own selection costs about an eighth of the
rest), at most three or four at small n, where the counts are cheap.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = ["median_of_sorted", "median_of_sorted_rows", "scalar_median"]

#: Collect the candidates once at most COLLECT_PER_ROW * n + COLLECT_MIN remain.
COLLECT_PER_ROW = 1.0
COLLECT_MIN = 1024
#: Candidates drawn per round: at least SAMPLE_MIN, at most SAMPLE_PER_ROW * n
#: and SAMPLE_CAP ...
SAMPLE_MIN = 64
SAMPLE_PER_ROW = 0.25
SAMPLE_CAP = 1 << 17
#: ... and pivots this many standard deviations of the sample rank away from
#: the target quantile.
PIVOT_Z = 2.0
#: First pivots (n >= SUBSAMPLE_MIN): from the same selection on every
#: SUBSAMPLE_STEP-th value, SUBSAMPLE_Z standard deviations of the rank apart.
SUBSAMPLE_STEP = 8
SUBSAMPLE_MIN = 256
SUBSAMPLE_Z = 3.0
#: Seed of the sampling (the answer does not depend on it, only the work).
SEED = 20190429
#: All of it, in the order of :func:`_median_tuned` (a tuple of floats: a
#: compile-time constant of the kernels).
TUNING = tuple(float(v) for v in (
    COLLECT_PER_ROW, COLLECT_MIN, SAMPLE_MIN, SAMPLE_PER_ROW, SAMPLE_CAP, PIVOT_Z,
    SUBSAMPLE_STEP, SUBSAMPLE_MIN, SUBSAMPLE_Z, SEED))


# --- random numbers (splitmix64: a counter through a bijective mixer)


@jit(inline="always")
def _mix(z):  # pragma: no cover - compiled
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@jit(inline="always")
def _uniform(state):  # pragma: no cover - compiled
    """(u uniform in [0, 1), the next state)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    bits = np.int64(_mix(state) >> np.uint64(11))  # 53 bits (a signed conversion is cheap)
    return np.float64(bits) * (1.0 / 9007199254740992.0), state


@jit(inline="always")
def _uniform2(state):  # pragma: no cover - compiled
    """(u, v uniform in [0, 1) with 32 bits each, the next state): one mix."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    r = _mix(state)
    u = np.float64(np.int64(r >> np.uint64(32))) * (1.0 / 4294967296.0)
    v = np.float64(np.int64(r & np.uint64(0xFFFFFFFF))) * (1.0 / 4294967296.0)
    return u, v, state


# --- counting


@jit()
def _tie_runs(x, out):  # pragma: no cover - compiled
    """out[i] = the end of the run of values equal to x_i (x sorted): the first
    j with x_j - x_i > 0; returns the number of tied pairs i < j."""
    n = x.shape[0]
    end = n
    z = 0
    for i in range(n - 1, -1, -1):
        if i + 1 < n and x[i] != x[i + 1]:
            end = i + 1
        out[i] = end
        z += end - i - 1
    return z


@jit()
def _first_above(x, i, t):  # pragma: no cover - compiled
    """The first j in [0, n] with x_j - x_i > t (binary search; n if none)."""
    lo = 0
    hi = x.shape[0]
    xi = x[i]
    while lo < hi:
        mid = (lo + hi) >> 1
        if x[mid] - xi <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit()
def _ptr_pass(x, t, out):  # pragma: no cover - compiled
    """out[i] = f_t(i) = #{j : x_j - x_i <= t}; returns #{i < j : x_j - x_i <= t}.

    Needs t >= 0 (so that out[i] > i). The rows from the first one whose
    difference to the last value is <= t have f_t(i) = n; the others are a merge
    (f_t is nondecreasing), in which the pointer never passes f_t(i) < n (so
    no sentinel is needed). The merge runs as four interleaved branch-free merges
    over segments with equal step counts (a step advances i or the pointer),
    which hides the latency and avoids branch mispredictions.
    """
    n = x.shape[0]
    lo = 0
    hi = n
    while lo < hi:  # rows >= r_end have f_t = n
        mid = (lo + hi) >> 1
        if x[n - 1] - x[mid] <= t:
            hi = mid
        else:
            lo = mid + 1
    r_end = lo
    for i in range(r_end, n):
        out[i] = n
    # steps(a) = a + f_t(a) is monotone: split [0, r_end) into 4 of equal steps
    bnd = np.zeros(5, np.int64)
    bnd[4] = r_end
    ptr = np.zeros(5, np.int64)
    if r_end > 0:
        base = _first_above(x, np.int64(0), t)
        total = (r_end - 1) + _first_above(x, r_end - 1, t)
        for s in range(1, 4):
            target = base + (total - base) * s // 4
            lo = 0
            hi = r_end
            while lo < hi:
                mid = (lo + hi) >> 1
                if mid + _first_above(x, mid, t) < target:
                    lo = mid + 1
                else:
                    hi = mid
            bnd[s] = max(lo, bnd[s - 1])
        for s in range(4):
            if bnd[s] < bnd[s + 1]:
                ptr[s] = _first_above(x, bnd[s], t)
    i0, i1, i2, i3 = bnd[0], bnd[1], bnd[2], bnd[3]
    e0, e1, e2, e3 = bnd[1], bnd[2], bnd[3], bnd[4]
    j0, j1, j2, j3 = ptr[0], ptr[1], ptr[2], ptr[3]
    while i0 < e0 and i1 < e1 and i2 < e2 and i3 < e3:
        out[i0] = j0
        out[i1] = j1
        out[i2] = j2
        out[i3] = j3
        a0 = x[j0] - x[i0] <= t
        a1 = x[j1] - x[i1] <= t
        a2 = x[j2] - x[i2] <= t
        a3 = x[j3] - x[i3] <= t
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
            a = x[j] - x[i] <= t
            j += a
            i += 1 - a
    cnt = 0
    for i in range(n):
        cnt += out[i] - i - 1
    return cnt


@jit()
def _min_at(x, ptr):  # pragma: no cover - compiled
    """min_i x[ptr[i]] - x_i over the rows with ptr[i] < n (+inf if none): the
    smallest difference above t when ptr[i] is row i's first column above t."""
    n = x.shape[0]
    best = np.inf
    for i in range(n):
        j = ptr[i]
        if j < n:
            d = x[j] - x[i]
            if d < best:
                best = d
    return best


# --- sampling and selecting the pivots


@jit()
def _sample_band(x, lo, hi, cand, m, state, out):  # pragma: no cover - compiled
    """About m uniform random candidates (column lo[i] <= j < hi[i] of row i,
    m <= cand) into out (size >= 2m); returns their number and the next state.

    Rejection sampling with the rows in order: attempt t draws row
    floor((t + u) * n / T) (stratified, so the arrays are read in order) and v
    uniform in [0, cmax), cmax the largest row count; it is accepted when
    v < c_r = hi[r] - lo[r] (then floor(v) is uniform on 0 .. c_r - 1), so each
    candidate is drawn with the same probability. T = m / acceptance. When less
    than one attempt in 8 would be accepted, a stratified pass over the rows
    instead: the s-th draw is the candidate of global rank
    floor((s + u_s) * cand / m) in row-by-row order.
    """
    n = x.shape[0]
    cmax = 0
    for i in range(n):
        cmax = max(cmax, hi[i] - lo[i])
    room = out.shape[0]
    if 8.0 * cand >= float(n) * cmax:
        attempts = np.int64(m * (float(n) * cmax / cand)) + 1
        step = n / attempts
        s = 0
        for t in range(attempts):
            u, v, state = _uniform2(state)
            r = min(n - 1, np.int64((t + u) * step))
            v = v * cmax
            c = hi[r] - lo[r]
            if v < c and s < room:
                out[s] = x[lo[r] + np.int64(v)] - x[r]
                s += 1
        if s > 0:
            return s, state
    step = cand / m  # branch: stratified sample
    s = 0
    u, state = _uniform(state)
    r = min(cand - 1, np.int64(u * step))
    base = 0
    for i in range(n):
        c = hi[i] - lo[i]
        if c <= 0:
            continue
        end = base + c
        xi = x[i]
        while r < end:
            out[s] = x[lo[i] + (r - base)] - xi
            s += 1
            if s == m:
                return s, state
            u, state = _uniform(state)
            r = min(cand - 1, np.int64((s + u) * step))
        base = end
    return s, state  # pragma: no cover - not reached (every rank is < cand)


@jit()
def _kth(a, n, k, s1, s2, state):  # pragma: no cover - compiled
    """(the k-th smallest of a[:n] (0-based), the next random state); a is left
    unchanged, s1 and s2 (size >= n) are scratch.

    Quickselect around the median of three random elements. Each partition
    writes every element to both ends of the other scratch array and advances
    one end (no branch, no store-to-load dependency): ``< p | >= p``, and when
    that leaves the range unchanged (p is its minimum: ties), ``<= p | > p``,
    which ends the search when the rank is among the values equal to p.
    """
    src = s1
    dst = s2
    for t in range(n):
        src[t] = a[t]
    lo = 0
    hi = n
    ties = False  # the last pivot was the minimum of the range: split off its ties
    p = 0.0
    while hi - lo > 24:
        if not ties:
            u, state = _uniform(state)
            v1 = src[lo + np.int64(u * (hi - lo))]
            u, state = _uniform(state)
            v2 = src[lo + np.int64(u * (hi - lo))]
            u, state = _uniform(state)
            v3 = src[lo + np.int64(u * (hi - lo))]
            p = max(min(v1, v2), min(max(v1, v2), v3))
        wl = lo
        wr = hi - 1
        for r in range(lo, hi):
            v = src[r]
            dst[wl] = v
            dst[wr] = v
            c = (v < p) | (ties & (v == p))
            wl += c
            wr -= 1 - c
        src, dst = dst, src
        if ties:
            if k < wl:  # src[lo:wl] are all p
                return p, state  # branch: quickselect on ties
            lo = wl
            ties = False
        elif k < wl:
            hi = wl
        elif wl > lo:
            lo = wl
        else:  # nothing below p
            ties = True
    for r in range(lo + 1, hi):  # insertion sort of the last few
        v = src[r]
        s = r - 1
        while s >= lo and src[s] > v:
            src[s + 1] = src[s]
            s -= 1
        src[s + 1] = v
    return src[k], state


@jit()
def _two_ranks(a, n, r1, r2, z, state, s1, s2):  # pragma: no cover - compiled
    """(the r1-th, the r2-th smallest of a[:n] (0-based, r1 <= r2 < n), the next
    random state); a is left unchanged, s1 and s2 (size >= n) are scratch.

    Floyd & Rivest's idea: the order statistics of a random subsample of about
    n^(2/3) elements, z standard deviations outside r1 and r2, bracket them; one
    pass counts the elements below the bracket and gathers those inside, and
    the ranks are selected among the gathered. When the bracket misses a rank
    (rarely), both are selected from all elements.
    """
    src = a
    m = n
    below = 0
    if n > 256:
        g = max(64, np.int64(n ** (2.0 / 3.0)))
        sub = np.empty(g)
        for t in range(g):
            u, state = _uniform(state)
            sub[t] = a[min(n - 1, np.int64(u * n))]
        q1 = (r1 + 0.5) / n
        q2 = (r2 + 0.5) / n
        j1 = np.int64(math.floor(q1 * g - z * math.sqrt(g * q1 * (1.0 - q1)))) - 1
        j2 = np.int64(math.ceil(q2 * g + z * math.sqrt(g * q2 * (1.0 - q2))))
        b_lo = -np.inf
        b_hi = np.inf
        for t in range(2):
            j = j1 if t == 0 else j2
            if 0 <= j < g:
                v, state = _kth(sub, g, j, s1, s2, state)
                if t == 0:
                    b_lo = v
                else:
                    b_hi = v
        w = 0
        for t in range(n):
            v = a[t]
            s1[w] = v
            below += v < b_lo
            w += (v >= b_lo) & (v <= b_hi)
        if below <= r1 and r2 < below + w:
            if b_lo == b_hi:  # the gathered are all equal (ties)
                return b_lo, b_lo, state  # branch: gathered all equal
            src = np.empty(w)
            for t in range(w):
                src[t] = s1[t]
            m = w
        else:
            below = 0  # branch: gathering missed a rank
    v1 = 0.0
    v2 = 0.0
    for t in range(2):
        r = r1 if t == 0 else r2
        if t == 1 and r2 == r1:
            v2 = v1
            break
        v, state = _kth(src, m, r - below, s1, s2, state)
        if t == 0:
            v1 = v
        else:
            v2 = v
    return v1, v2, state


@jit(inline="always")
def _pivots(buf, m, local, cand, z, state, s1, s2):  # pragma: no cover - compiled
    """Pivots around the local-th of cand candidates from a sample buf[:m] of
    them: the sample order statistics z standard deviations of the sample rank
    below and above its quantile (-inf / +inf: none; at least one exists)."""
    q = local / cand
    pos = q * m
    sd = z * math.sqrt(m * q * (1.0 - q))
    i_lo = np.int64(math.floor(pos - sd)) - 1
    i_hi = np.int64(math.ceil(pos + sd))
    if i_lo < 0 and i_hi >= m:  # too small a sample for two: one near the rank
        i_hi = min(m - 1, np.int64(pos))  # branch: one pivot
    r1 = i_lo if i_lo >= 0 else i_hi
    r2 = i_hi if i_hi < m else i_lo
    p_lo, p_hi, state = _two_ranks(buf, m, r1, r2, z, state, s1, s2)
    if i_lo < 0:
        p_lo = -np.inf
    if i_hi >= m:
        p_hi = np.inf
    return p_lo, p_hi, state


@jit()
def _collect(x, lo, hi, out):  # pragma: no cover - compiled
    """The candidates x_j - x_i, lo[i] <= j < hi[i], into out (row by row; out
    has 4 places of slack).

    A row of at most 4 candidates (the common case once they are few) is copied
    as 4 values without a branch on its count; longer rows, and rows near the
    end of x, in a loop.
    """
    n = x.shape[0]
    w = 0
    for i in range(n):
        a = lo[i]
        c = hi[i] - a
        xi = x[i]
        if c <= 4 and a + 4 <= n:
            out[w] = x[a] - xi
            out[w + 1] = x[a + 1] - xi
            out[w + 2] = x[a + 2] - xi
            out[w + 3] = x[a + 3] - xi
        else:
            for t in range(c):
                out[w + t] = x[a + t] - xi
        w += c


# --- the selection


@jit()
def _rounds(x, k, need_next, cap, sample_min, sample_max, z, state, lo, hi, tmp,
            le_a, a_val, lt_b, b_val, p_lo0, p_hi0):  # pragma: no cover - compiled
    """Rounds of two pivots and exact counts around the k-th difference, from the
    bracket (a_val, b_val) with ``le_a = #(d <= a_val) < k <= #(d < b_val) = lt_b``
    and its row pointers lo and hi, until at most cap candidates remain or a
    pivot is the k-th value.

    The first round counts at p_lo0 and p_hi0 when they are given (not NaN);
    the others at order statistics of a random sample of the candidates, sized
    to leave about cap / 2.
    Returns (hit, v, w, lo, hi, tmp, le_a, lt_b, state): on a hit v is the
    pivot, the k-th value, and w (when need_next) the (k+1)-th; else (v, w) is
    the bracket.
    """
    room = 2 * sample_max + 2
    fws = np.empty(3 * room)
    buf = fws[:room]
    s1 = fws[room:2 * room]
    s2 = fws[2 * room:]
    given = not (math.isnan(p_lo0) and math.isnan(p_hi0))
    growth = math.sqrt(sample_max) / max(z, 0.5)  # shrink of a round at the largest sample
    while True:
        cand = lt_b - le_a
        local = k - le_a  # 1-based rank of the answer among the candidates
        if cand <= cap:
            return False, a_val, b_val, lo, hi, tmp, le_a, lt_b, state
        if given:
            given = False
            p_lo = p_lo0
            p_hi = p_hi0
        else:
            # the sample that shares the shrinking to cap / 2 evenly over the rounds
            ratio = 2.0 * cand / cap
            rounds = 1.0
            if growth > 2.0:
                rounds = max(1.0, math.ceil(math.log(ratio) / math.log(growth)))
            want = z * ratio ** (1.0 / rounds)
            m = max(1, min(sample_max, max(sample_min, np.int64(min(want * want, 1e15))), cand))
            m, state = _sample_band(x, lo, hi, cand, m, state, buf)
            p_lo, p_hi, state = _pivots(buf, m, local, cand, z, state, s1, s2)
        if a_val < p_lo < b_val:  # expected below the answer: count d <= p_lo
            le = _ptr_pass(x, p_lo, tmp)
            if le < k:
                lo, tmp = tmp, lo
                le_a = le
                a_val = p_lo
            else:
                lt = _ptr_pass(x, np.nextafter(p_lo, -np.inf), tmp)
                if lt < k:  # p_lo is the k-th value
                    nxt = p_lo  # branch: hit low
                    if need_next and le == k:  # the (k+1)-th is the smallest above p_lo
                        _ptr_pass(x, p_lo, tmp)  # branch: hit low, next above
                        nxt = _min_at(x, tmp)
                    return True, p_lo, nxt, lo, hi, tmp, le_a, lt_b, state
                hi, tmp = tmp, hi  # branch: low pivot above
                lt_b = lt
                b_val = p_lo
        if a_val < p_hi < b_val:  # expected above the answer: count d < p_hi
            lt = _ptr_pass(x, np.nextafter(p_hi, -np.inf), tmp)
            if lt >= k:
                hi, tmp = tmp, hi
                lt_b = lt
                b_val = p_hi
            else:
                le = _ptr_pass(x, p_hi, tmp)
                if le >= k:  # p_hi is the k-th value
                    nxt = p_hi  # branch: hit high
                    if need_next and le == k:  # the (k+1)-th is the smallest above p_hi
                        nxt = _min_at(x, tmp)  # branch: hit high, next above
                    return True, p_hi, nxt, lo, hi, tmp, le_a, lt_b, state
                lo, tmp = tmp, lo  # branch: high pivot below
                le_a = le
                a_val = p_hi


@jit(inline="always")
def _collected(x, lo, hi, cand, r1, r2, z, state):  # pragma: no cover - compiled
    """The r1-th and r2-th smallest (1-based) of the cand candidates of lo, hi."""
    size = cand + 4
    fin = np.empty(3 * size)
    vals = fin[:size]
    _collect(x, lo, hi, vals)
    return _two_ranks(vals, cand, r1 - 1, r2 - 1, z, state, fin[size:2 * size], fin[2 * size:])


@jit(inline="always")
def _subsample_pivots(x, k, tune, state):  # pragma: no cover - compiled
    """First pivots around the k-th difference of x from a systematic subsample y
    of p = n / tune[6] values (random offset).

    The differences of y's pairs estimate x's quantiles to about 0.5 / p (the
    rank error, as a fraction of the pairs). The same rounds of selection, run on
    y for the same quantile, stop once at most 4 * half of y's pairs remain,
    half = tune[8] such errors: the ends of that bracket (about tune[8] errors
    on either side) are the pivots, or twice the pivot that hit y's quantile.
    (NaN, NaN) when y's quantile is a tie (zero)."""
    n = x.shape[0]
    p = max(2, np.int64(n / tune[6]))
    u, state = _uniform(state)
    off = np.int64(u * n)
    y = np.empty(p)
    for t in range(p):
        y[t] = x[(t * n + off) // p]
    ptrs = np.empty(3 * p, np.int64)
    lo = ptrs[:p]
    hi = ptrs[p:2 * p]
    tmp = ptrs[2 * p:]
    zeros = _tie_runs(y, lo)
    for i in range(p):
        hi[i] = p
    npairs = p * (p - 1) // 2
    k_y = min(npairs, max(1, np.int64(k / (n * (n - 1) / 2.0) * npairs + 0.5)))
    if k_y <= zeros:
        return np.nan, np.nan, state  # branch: subsample quantile tied
    half = max(1, np.int64(tune[8] * 0.5 * npairs / p))  # rank half-width in y
    sample_max = max(tune[2], min(tune[4], np.int64(tune[3] * p)))
    hit, v, w, lo, hi, tmp, le_a, lt_b, state = _rounds(
        y, k_y, np.bool_(False), 4 * half, np.int64(tune[2]), np.int64(sample_max), tune[5], state,
        lo, hi, tmp, zeros, 0.0, npairs, np.inf, np.nan, np.nan)
    if hit:
        return v, v, state  # branch: subsample hit
    return v, w, state  # branch: subsample bracket


@jit(inline="always")
def _select(x, k, need2, zeros, tune, ptrs):  # pragma: no cover - compiled
    """The k-th smallest of all N differences and, when need2, the (k+1)-th.

    Needs zeros = #(d = 0) < k <= N, and k < N when need2; ``ptrs``: 3n int64
    of workspace whose first n are the ends of the tie runs (from
    :func:`_tie_runs`).
    """
    n = x.shape[0]
    lo = ptrs[:n]  # A = 0
    hi = ptrs[n:2 * n]  # B = +inf
    tmp = ptrs[2 * n:]
    for i in range(n):
        hi[i] = n
    state = np.uint64(tune[9])
    cap = max(1, np.int64(tune[0] * n + tune[1]))
    sample_max = max(tune[2], min(tune[4], np.int64(tune[3] * n)))
    p_lo0 = np.nan
    p_hi0 = np.nan
    if n >= tune[7]:
        p_lo0, p_hi0, state = _subsample_pivots(x, k, tune, state)
    hit, v1, v2, lo, hi, tmp, le_a, lt_b, state = _rounds(
        x, k, need2, cap, np.int64(tune[2]), np.int64(sample_max), tune[5], state,
        lo, hi, tmp, zeros, 0.0, n * (n - 1) // 2, np.inf, p_lo0, p_hi0)
    if hit:
        return v1, v2
    cand = lt_b - le_a
    local = k - le_a
    last = need2 and local == cand  # then the next is the smallest at or above B
    r2 = local + 1 if need2 and not last else local
    z = tune[5]  # branch: collect
    v1, v2, state = _collected(x, lo, hi, cand, local, r2, z, state)
    if last:
        v2 = _min_at(x, hi)  # branch: last candidate, next at or above B
    return v1, v2


@jit(inline="always")
def _median(xs, tune):  # pragma: no cover - compiled
    n = xs.shape[0]
    if n < 2:
        return np.nan
    ptrs = np.empty(3 * n, np.int64)  # one allocation: the row pointers of the bracket
    zeros = _tie_runs(xs, ptrs[:n])
    npos = n * (n - 1) // 2 - zeros
    if npos <= 0:
        return np.nan
    k = zeros + (npos + 1) // 2
    need2 = npos % 2 == 0
    v1, v2 = _select(xs, k, need2, zeros, tune, ptrs)
    if need2:
        return (v1 + v2) / 2.0
    return v1


@jit()
def median_of_sorted(xs):  # pragma: no cover - compiled
    """R's ``median(d[d > 0])`` of ``d = x_j - x_i``, i < j, for ``xs`` sorted
    ascending (float64, no NaN); NaN when no d > 0. Callable from compiled code."""
    return _median(xs, TUNING)


@jit()
def median_of_sorted_rows(xs):  # pragma: no cover - compiled
    """:func:`median_of_sorted` of each row of a 2-D array whose rows are sorted."""
    out = np.empty(xs.shape[0])
    for r in range(xs.shape[0]):
        out[r] = _median(xs[r], TUNING)
    return out


@jit()
def _median_tuned(xs, tune):  # pragma: no cover - compiled
    """:func:`median_of_sorted` with its tuning as a tuple of 10 floats (the tests
    force every branch with tiny caps and samples): COLLECT_PER_ROW,
    COLLECT_MIN, SAMPLE_MIN, SAMPLE_PER_ROW, SAMPLE_CAP, PIVOT_Z,
    SUBSAMPLE_STEP, SUBSAMPLE_MIN, SUBSAMPLE_Z, SEED."""
    return _median(xs, tune)


def scalar_median(x: np.ndarray, presorted: bool = False) -> float:
    """Exact R ``median(d[d > 0])`` of ``d = |x_i - x_j|``, i < j; NaN if no d > 0.

    ``x``: float64 values without NaN; ``presorted``: x is sorted ascending.
    """
    xs = np.ascontiguousarray(x, dtype=np.float64) if presorted else np.sort(x)
    return float(median_of_sorted(xs))
