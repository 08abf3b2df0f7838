"""Kernels of the squared kernel calibration error (SKCE) and the MMCE.

Two versions of everything (house style):

* readable numpy **oracles** (``*_oracle``) that are the formulas of
  ``r-docs/skce.txt`` written plainly, O(n^2) time and memory, used only by the
  tests;
* **fast exact** kernels used by ``calibr.skce()`` and ``calibr.mmce()``.

Notation: ``x`` is what the kernel sees (scalar confidences, or probability
vectors in the canonical form), ``e`` the residuals, ``h`` the bandwidth, and
``h_ij = exp(-d(x_i, x_j) / h) * <e_i, e_j>`` the kernel terms. Every estimator
is a function of the pair sum ``T = sum_{i<j} h_ij``, of the diagonal
``sum_i ||e_i||^2`` (biased) or of the disjoint pairs (``"ul"``):

* biased: ``(2 T + sum_i ||e_i||^2) / n^2``
* uq:     ``T / C(n, 2)``
* ul:     ``mean_{i < n/2} h_{2i, 2i+1}`` (0-based, pairs in the given order)

Scalar kernels (binary, confidence and classwise forms)
-------------------------------------------------------
Sort the points by x: ``x_0 <= ... <= x_{n-1}``. Because
``|x_j - x_i| = sum_{m=i}^{j-1} (x_{m+1} - x_m)`` for ``i < j``, the kernel
factorises along the sorted order and ``S_i = sum_{j>i} e_j exp(-(x_j - x_i)/h)``
obeys ``S_{n-1} = 0`` and ``S_i = w_i (e_{i+1} + S_{i+1})`` with
``w_i = exp(-(x_{i+1} - x_i) / h)``; then ``T = sum_i e_i S_i``. This is exact
(no truncation), O(n) after an O(n log n) sort, and needs no special case for
ties (``w_i = 1``). Accuracy: ``w_i`` only ever multiplies, all factors lie in
[0, 1], so nothing overflows; a factor that underflows to 0 is below 1e-308
relative to the terms it cuts off. The relative error of a chained product
``w_i ... w_{j-1}`` is about ``eps * (j - i + |x_j - x_i| / h)``, the same
order as that of ``exp(-fl(x_j - x_i) / h)`` computed directly (the argument
itself carries ``eps * |x_j - x_i| / h``).

The sort key packs the label into the bit pattern: for ``0 <= x <= 1`` the
IEEE bits of ``x`` read as an integer are monotone and below 2**62, so
``(bits << 1) | c`` sorts by x exactly and carries ``c`` along (one
vectorised ``numpy.sort`` of uint64, no argsort and no gather).

Median heuristic on scalars
---------------------------
R's ``median(d[d > 0])`` over the ``|x_i - x_j|`` (i < j). On sorted values
the number of pairs with ``x_j - x_i <= t`` is one O(n) merge-like sweep
(rounding is monotone, so ``fl(x_j - x_i)`` is monotone in j and in i); it
runs as four interleaved branch-free sweeps. The k-th smallest difference is
found by a bracketing selection in the spirit of Johnson & Mizoguchi (1978) /
Croux & Rousseeuw (1992): keep a value bracket (A, B) that holds the answer
and, per row i, the range of columns j whose difference lies inside it; pick
two pivots on either side of the target rank, count exactly at them, shrink;
once at most max(n, 2**16) candidates remain, collect them and select with
``numpy.partition``. The first pivots come from the autocorrelation (by FFT)
of a histogram of x, later ones from a weighted random sample of the
candidates. Pivots only steer: every count is exact, so the answer is exactly
a computed difference ``x_j - x_i`` (as R's ``outer``/``abs`` computes it),
whatever the pivots. About six O(n) sweeps after the sort in practice.

Canonical form
--------------
O(n^2 K) over the pairs i < j in square tiles of ``block`` rows, no n x n
matrix, all cores: a fixed number of work chunks (``CHUNKS``, whatever the
number of threads, so the results are the same on every machine), each a set of
tile rows paired with their mirrors so that every chunk has the same number of
tiles; the chunk results are combined in chunk order. ``nogil`` kernels in plain
threads rather than numba's OpenMP layer, which would break ``fork()``.
Euclidean distances are computed directly as
``sqrt(sum_k (p_ik - p_jk)^2)``, summed in column order as R's ``dist()``
does, so they are bit-identical to R's. Rows are grouped by class first (the
pair sum does not depend on the order), so that
``<e_i, e_j> = e_i[y_j] - p_j[y_i] + <p_i, p_j>`` needs no gather
(``e_i[y_j]`` is constant along a class) and
``<p_i, p_j> = (||p_i||^2 + ||p_j||^2 - d_ij^2) / 2`` reuses the distance:
this only feeds the inner product, whose absolute error stays at a few ulps of
1 (the kernel's distances are never taken from the Gram identity). The median
heuristic is exact with bounded memory: a blocked pass histograms the positive
distances of a value bracket (count, min and max per bin); the bin holding the
middle rank becomes the next bracket, and once it holds at most
``COLLECT_CAP`` distances they are collected and selected exactly. Two
neighbouring middle ranks in different bins are the max of the one and the min
of the next, known from the histogram.

``exp`` in the inner loops is a vectorisable Cody-Waite/Taylor ``exp``
(about 1 ulp, checked against ``numpy.exp`` in the tests), which lets LLVM
vectorise the tiles; ``exp(0)`` is exactly 1. The canonical tiles multiply by
``-1/h`` instead of dividing by ``h`` (one rounding more in the argument:
relative error below 745 * 2**-52 in a kernel value that is not below 1e-308).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import intrinsic

from ._jit import jit
from ._threads import in_threads, num_threads

__all__ = [
    "canonical_median",
    "canonical_pair_sum",
    "canonical_ul",
    "estimate_from_sums",
    "median_oracle",
    "num_threads",
    "scalar_median",
    "scalar_pair_sum",
    "scalar_ul",
    "skce_oracle",
    "top_label",
    "vexp",
]

ESTIMATORS = ("uq", "ul", "biased")

#: Tile edge of the canonical kernels (rows of p per tile).
BLOCK = 256
#: Work chunks of the canonical kernels, run on up to ``num_threads()`` threads. A
#: fixed number, so that the results do not depend on the number of threads.
CHUNKS = 16
#: Bins of one histogram pass of the canonical median.
MEDIAN_BINS = 1 << 15
#: At most this many distances (8 bytes each) are collected for the final exact
#: selection of a median (canonical: 32 MB).
COLLECT_CAP = 1 << 22
#: Scalar median: collect the candidates once at most max(n, SELECT_CAP) remain;
#: before that, steer with pivots from a sample of SELECT_SAMPLE candidates.
SELECT_CAP = 1 << 16
SELECT_SAMPLE = 1 << 16
#: ... and the first pivots from the autocorrelation of a histogram of x with this
#: many bins (0: sample from the start).
SELECT_HIST_BINS = 1 << 16


# ---------------------------------------------------------------------------
# readable oracles (the formulas of r-docs/skce.txt, O(n^2) memory on purpose)


def _distance_matrix(x: np.ndarray) -> np.ndarray:
    """|x_i - x_j| for scalars, ||x_i - x_j||_2 for the rows of a matrix."""
    if x.ndim == 1:
        return np.abs(x[:, None] - x[None, :])
    d2 = np.zeros((x.shape[0], x.shape[0]))
    for k in range(x.shape[1]):  # column by column, as R's dist() sums
        d2 += (x[:, None, k] - x[None, :, k]) ** 2
    return np.sqrt(d2)


def median_oracle(x: np.ndarray) -> float:
    """R's ``median(d[d > 0])`` of the pairwise distances ``d`` (i < j); NaN if none."""
    n = x.shape[0]
    d = _distance_matrix(x)[np.triu_indices(n, 1)]
    d = d[d > 0]
    return float(np.median(d)) if d.size else math.nan


def skce_oracle(x: np.ndarray, e: np.ndarray, estimator: str, h: float | str) -> float:
    """SKCE estimate from kernel inputs ``x`` and residuals ``e``.

    ``x``, ``e``: shape ``(n,)`` (scalar kernel) or ``(n, K)`` (canonical).
    ``h``: a bandwidth or ``"median"``.
    """
    n = x.shape[0]
    if h == "median":
        h = median_oracle(x)
    D = _distance_matrix(x)
    G = np.outer(e, e) if e.ndim == 1 else e @ e.T
    H = np.exp(-D / h) * G
    if estimator == "biased":
        return float(H.sum() / n**2)
    if estimator == "uq":
        return float(H[np.triu_indices(n, 1)].sum() / (n * (n - 1) / 2))
    if estimator == "ul":
        m = n // 2
        return float(H[2 * np.arange(m), 2 * np.arange(m) + 1].mean())
    raise ValueError(estimator)


# ---------------------------------------------------------------------------
# bit casts and a vectorisable exp


@intrinsic
def _i64_as_f64(typingctx, v):  # pragma: no cover - compile-time helper
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return sig, codegen


@intrinsic
def _f64_as_i64(typingctx, v):  # pragma: no cover - compile-time helper
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return sig, codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # fdlibm split: k * _LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10


@jit(inline="always")
def _vexp(x):  # pragma: no cover - compiled
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
    return (p * _i64_as_f64((k1 + 1023) << 52)) * _i64_as_f64((k2 + 1023) << 52)


@jit()
def _vexp_array(x):  # pragma: no cover - compiled
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = _vexp(x[i])
    return out


def vexp(x: np.ndarray) -> np.ndarray:
    """The kernels' exp on an array of values <= 0 (for tests)."""
    return _vexp_array(np.ascontiguousarray(x, dtype=np.float64))


# ---------------------------------------------------------------------------
# residuals


@jit()
def _top_label(p, codes):  # pragma: no cover - compiled
    n, k = p.shape
    rho = np.empty(n)
    hit = np.empty(n, np.uint8)
    for i in range(n):
        best = p[i, 0]
        arg = 0
        for j in range(1, k):
            if p[i, j] > best:  # ties go to the first maximal column
                best = p[i, j]
                arg = j
        rho[i] = best
        hit[i] = 1 if arg == codes[i] else 0
    return rho, hit


def top_label(p: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidence ``max_k p_ik`` and correctness ``1{first argmax == y_i}`` (uint8)."""
    return _top_label(p, codes)


def estimate_from_sums(estimator: str, n: int, pair_sum: float, diag: float) -> float:
    """biased or uq estimate from ``T = sum_{i<j} h_ij`` and ``sum_i ||e_i||^2``."""
    if estimator == "biased":
        return (2.0 * pair_sum + diag) / (float(n) * float(n))
    return pair_sum / (n * (n - 1) / 2)


# ---------------------------------------------------------------------------
# scalar kernels: pair sum by the sorted running sum


@jit()
def _pack_keys(x, c):  # pragma: no cover - compiled
    """uint64 keys (bits(x) << 1) | c, monotone in x for 0 <= x <= 1."""
    n = x.shape[0]
    keys = np.empty(n, np.uint64)
    for i in range(n):
        b = _f64_as_i64(x[i]) & 0x7FFFFFFFFFFFFFFF  # -0.0 -> +0.0
        keys[i] = np.uint64((b << 1) | (1 if c[i] != 0 else 0))
    return keys


@jit()
def _sorted_pair_sum(keys, h):  # pragma: no cover - compiled
    """(T, sum e^2) from sorted keys; e = c - x.

    Walks down from the top in blocks: the kernel weights of a block's gaps are
    computed in a loop that vectorises, then the running sum goes through them.
    """
    n = keys.shape[0]
    nblk = 4096
    w = np.empty(nblk)
    one = np.uint64(1)
    s = 0.0
    total = 0.0
    diag = 0.0
    key = keys[n - 1]
    e_next = (1.0 if (key & one) else 0.0) - _i64_as_f64(np.int64(key >> one))
    diag += e_next * e_next
    hi = n - 1  # gaps i = lo .. hi - 1 (between points i and i + 1)
    while hi > 0:
        lo = max(0, hi - nblk)
        for i in range(lo, hi):
            a = _i64_as_f64(np.int64(keys[i] >> one))
            b = _i64_as_f64(np.int64(keys[i + 1] >> one))
            w[i - lo] = _vexp(-(b - a) / h)
        for i in range(hi - 1, lo - 1, -1):
            key = keys[i]
            e = (1.0 if (key & one) else 0.0) - _i64_as_f64(np.int64(key >> one))
            s = w[i - lo] * (e_next + s)
            total += e * s
            diag += e * e
            e_next = e
        hi = lo
    return total, diag


def _sorted_keys(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    keys = _pack_keys(x, c)
    keys.sort()
    return keys


@jit()
def _keys_values(keys):  # pragma: no cover - compiled
    out = np.empty(keys.shape[0])
    for i in range(keys.shape[0]):
        out[i] = _i64_as_f64(np.int64(keys[i] >> np.uint64(1)))
    return out


def scalar_pair_sum(x: np.ndarray, c: np.ndarray, h: float | str) -> tuple[float, float, float]:
    """Exact ``(T, sum_i e_i^2, h)`` for the scalar Laplacian kernel, e = c - x.

    ``x``: float64 in [0, 1]; ``c``: 0/1 values; ``h``: a bandwidth or
    ``"median"`` (resolved here; NaN when all x are equal). O(n log n).
    """
    keys = _sorted_keys(x, c)
    if h == "median":
        h = scalar_median(_keys_values(keys), presorted=True)
        if math.isnan(h):
            return math.nan, math.nan, h
    total, diag = _sorted_pair_sum(keys, float(h))
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
        total += ea * eb * _vexp(-abs(a - b) / h)
    return total / m


def scalar_ul(x: np.ndarray, c: np.ndarray, h: float | str) -> float:
    """The ``"ul"`` estimate for the scalar kernel (n >= 2); O(n), O(n log n) with "median"."""
    if h == "median":
        h = scalar_median(x)
        if math.isnan(h):
            return math.nan
    return float(_scalar_ul(x, c, float(h)))


# ---------------------------------------------------------------------------
# exact median of the positive pairwise differences of scalars


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
def _first_fail(xp, n, i, t, strict):  # pragma: no cover - compiled
    """First j in [0, n] with not (x_j - x_i <= t) (strict: not (x_j - x_i < t))."""
    lo = 0
    hi = n
    xi = xp[i]
    while lo < hi:
        mid = (lo + hi) >> 1
        d = xp[mid] - xi
        ok = d < t if strict else d <= t
        if ok:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit()
def _ptr_pass(xp, n, t, strict, out):  # pragma: no cover - compiled
    """out[i] = #{j : x_j - x_i <= t} (strict: < t); returns #{i < j : same}.

    ``xp`` is the sorted x followed by +inf; needs t >= 0 (t > 0 if strict), so
    that out[i] > i. For fixed t the pointer is monotone in i (rounding is
    monotone), so this is a merge; it runs as four interleaved branch-free merges
    over segments with equal step counts (a step advances i or the pointer), which
    hides the latency and avoids branch mispredictions.
    """
    # steps(a) = a + out[a] is monotone: split [0, n) into 4 segments of equal steps
    bnd = np.empty(5, np.int64)
    bnd[0] = 0
    bnd[4] = n
    base = _first_fail(xp, n, 0, t, strict)
    total = (n - 1) + _first_fail(xp, n, n - 1, t, strict)
    for s in range(1, 4):
        target = base + (total - base) * s // 4
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if mid + _first_fail(xp, n, mid, t, strict) < target:
                lo = mid + 1
            else:
                hi = mid
        bnd[s] = max(lo, bnd[s - 1])
    i0, i1, i2, i3 = bnd[0], bnd[1], bnd[2], bnd[3]
    e0, e1, e2, e3 = bnd[1], bnd[2], bnd[3], bnd[4]
    j0 = _first_fail(xp, n, i0, t, strict) if i0 < e0 else 0
    j1 = _first_fail(xp, n, i1, t, strict) if i1 < e1 else 0
    j2 = _first_fail(xp, n, i2, t, strict) if i2 < e2 else 0
    j3 = _first_fail(xp, n, i3, t, strict) if i3 < e3 else 0
    if strict:
        while i0 < e0 and i1 < e1 and i2 < e2 and i3 < e3:
            out[i0] = j0
            out[i1] = j1
            out[i2] = j2
            out[i3] = j3
            a0 = xp[j0] - xp[i0] < t
            a1 = xp[j1] - xp[i1] < t
            a2 = xp[j2] - xp[i2] < t
            a3 = xp[j3] - xp[i3] < t
            j0 += a0
            i0 += 1 - a0
            j1 += a1
            i1 += 1 - a1
            j2 += a2
            i2 += 1 - a2
            j3 += a3
            i3 += 1 - a3
    else:
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
            d = xp[j] - xp[i]
            a = d < t if strict else d <= t
            j += a
            i += 1 - a
    cnt = 0
    for i in range(n):
        cnt += out[i] - i - 1
    return cnt


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
            le = _ptr_pass(xp, n, p_lo, False, tmp)
            if le < k:
                lo_ptr, tmp = tmp, lo_ptr
                le_a, a_val = le, p_lo
            else:
                lt = _ptr_pass(xp, n, p_lo, True, tmp)
                if lt < k:  # p_lo is the k-th value
                    return p_lo, (p_lo if le > k else _next_above(xp, n, p_lo, k))
                hi_ptr, tmp = tmp, hi_ptr
                lt_b, b_val = lt, p_lo
        if p_hi is not None and a_val < p_hi < b_val:  # expected above: count d < p_hi
            lt = _ptr_pass(xp, n, p_hi, True, tmp)
            if lt >= k:
                hi_ptr, tmp = tmp, hi_ptr
                lt_b, b_val = lt, p_hi
            else:
                le = _ptr_pass(xp, n, p_hi, False, tmp)
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
    spec = np.fft.rfft(counts, 2 * nbins)
    auto = np.rint(np.fft.irfft(spec.real**2 + spec.imag**2, 2 * nbins)[:nbins])
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
    _ptr_pass(xp, n, t, False, ptr)
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


# ---------------------------------------------------------------------------
# canonical kernels


@jit(inline="always")
def _tile_dist2(pt, i, j0, m, d2):  # pragma: no cover - compiled
    """d2[jj] = sum_k (p_ik - p_{j0+jj,k})^2 for jj < m, summed in column order."""
    K = pt.shape[0]
    for jj in range(m):
        d2[jj] = 0.0
    for k in range(K):
        pik = pt[k, i]
        for jj in range(m):
            diff = pt[k, j0 + jj] - pik
            d2[jj] += diff * diff


@jit()
def _chunk_tiles(n, block, c, nchunks):  # pragma: no cover - compiled
    """The one traversal of the pairs i < j: the tiles (bi, bj), bi <= bj, of work
    chunk c of nchunks, in the order the kernels visit them.

    Square tiles of ``block`` rows; chunk c takes the tile rows t = c, c + nchunks,
    ..., each paired with tile row nb - 1 - t so that all chunks have equal work.
    Within tile (bi, bj), row i meets the columns max(bj * block, i + 1) <= j <
    min(n, (bj + 1) * block). (An array, not a numba generator: numba's cache
    cannot reload a function that uses a generator compiled in another process.)
    """
    nb = (n + block - 1) // block
    npairs = (nb + 1) // 2
    count = 0
    for t in range(c, npairs, nchunks):
        count += nb - t
        if nb - 1 - t != t:
            count += t + 1
    tiles = np.empty((count, 2), np.int64)
    k = 0
    for t in range(c, npairs, nchunks):
        for which in range(2):
            bi = t if which == 0 else nb - 1 - t
            if which == 1 and bi == t:
                break
            for bj in range(bi, nb):
                tiles[k, 0] = bi
                tiles[k, 1] = bj
                k += 1
    return tiles


@jit(nogil=True)
def _canonical_pair_sum_chunk(pt, e, codes, run_end, sq, h, block, c, nchunks):  # pragma: no cover
    """Work chunk c of nchunks of sum_{i<j} exp(-||p_i - p_j|| / h) <e_i, e_j>.

    ``pt``: p.T (K, n); ``e``: residuals (n, K); ``codes`` sorted; ``run_end[c]``:
    end of the rows of class c; ``sq[i] = ||p_i||^2``. The inner product is
    ``<e_i, e_j> = e_i[y_j] - p_j[y_i] + <p_i, p_j>`` with
    ``<p_i, p_j> = (||p_i||^2 + ||p_j||^2 - d_ij^2) / 2``: along a run of one class
    ``e_i[y_j]`` is a constant (filled in without a gather), so the inner loops
    are plain vector loops. (The identity only feeds the inner product, whose
    absolute rounding error stays at a few ulps of 1; the distances in the kernel
    are computed directly.)
    """
    scale = -1.0 / h
    divide = not scale > -np.inf  # h < 2**-1024: 1/h overflows, divide instead
    d2 = np.empty(block)
    ey = np.empty(block)
    acc = np.zeros(block)
    n = pt.shape[1]
    tiles = _chunk_tiles(n, block, c, nchunks)
    for t in range(tiles.shape[0]):
        i0 = tiles[t, 0] * block
        i1 = min(n, i0 + block)
        j_lo = tiles[t, 1] * block
        j1 = min(n, j_lo + block)
        for i in range(i0, i1):
            j0 = max(j_lo, i + 1)
            m = j1 - j0
            if m <= 0:
                continue
            _tile_dist2(pt, i, j0, m, d2)
            yi = codes[i]
            half_si = 0.5 * sq[i]
            jj = 0
            while jj < m:  # e_i[y_j] is constant along a run of one class
                cls = codes[j0 + jj]
                stop = min(m, run_end[cls] - j0)
                eiy = e[i, cls]
                for q in range(jj, stop):
                    ey[q] = eiy
                jj = stop
            if divide:
                for q in range(m):
                    j = j0 + q
                    g = ey[q] - pt[yi, j] + (half_si + 0.5 * sq[j] - 0.5 * d2[q])
                    acc[q] += _vexp(-np.sqrt(d2[q]) / h) * g
            else:
                for q in range(m):
                    j = j0 + q
                    g = ey[q] - pt[yi, j] + (half_si + 0.5 * sq[j] - 0.5 * d2[q])
                    acc[q] += _vexp(np.sqrt(d2[q]) * scale) * g
    return acc.sum()


@jit()
def _by_class(p, codes):  # pragma: no cover - compiled
    """Rows grouped by class (counting sort): p.T (K, n), residuals (n, K), the
    sorted codes, the end of each class run, ||p_i||^2, and sum_i ||e_i||^2."""
    n, K = p.shape
    counts = np.zeros(K, np.int64)
    for i in range(n):
        counts[codes[i]] += 1
    run_end = np.cumsum(counts)
    pos = run_end - counts
    pt = np.empty((K, n))
    e = np.empty((n, K))
    sorted_codes = np.empty(n, np.int64)
    sq = np.empty(n)
    diag = 0.0
    for i in range(n):
        c = codes[i]
        r = pos[c]
        pos[c] += 1
        sorted_codes[r] = c
        s = 0.0
        for k in range(K):
            v = p[i, k]
            pt[k, r] = v
            ek = (1.0 if k == c else 0.0) - v
            e[r, k] = ek
            diag += ek * ek
            s += v * v
        sq[r] = s
    return pt, e, sorted_codes, run_end, sq, diag


def canonical_pair_sum(
    p: np.ndarray, codes: np.ndarray, h: float | str, block: int = BLOCK
) -> tuple[float, float, float]:
    """Exact ``(T, sum_i ||e_i||^2, h)`` for the canonical form, e_i = onehot(y_i) - p_i.

    ``h``: a bandwidth or ``"median"`` (resolved here; NaN when all rows are equal).
    Neither the pair sum nor the median depends on the order of the rows, so the
    rows are first grouped by class.
    """
    pt, e, sorted_codes, run_end, sq, diag = _by_class(p, codes)
    if h == "median":
        h = _canonical_median_t(pt, block)
        if math.isnan(h):
            return math.nan, math.nan, h
    n = pt.shape[1]
    nchunks = _chunks(n, block)
    parts = in_threads(
        _canonical_pair_sum_chunk, nchunks, pt, e, sorted_codes, run_end, sq, float(h), block
    )
    return math.fsum(parts), float(diag), float(h)


@jit()
def _canonical_ul(p, codes, h):  # pragma: no cover - compiled
    n, K = p.shape
    m = n // 2
    total = 0.0
    for t in range(m):
        a = 2 * t
        b = a + 1
        d2 = 0.0
        g = 0.0
        for k in range(K):
            diff = p[b, k] - p[a, k]
            d2 += diff * diff
            ea = (1.0 if codes[a] == k else 0.0) - p[a, k]
            eb = (1.0 if codes[b] == k else 0.0) - p[b, k]
            g += ea * eb
        total += _vexp(-np.sqrt(d2) / h) * g
    return total / m


def canonical_ul(p: np.ndarray, codes: np.ndarray, h: float | str, block: int = BLOCK) -> float:
    """The ``"ul"`` estimate of the canonical form (n >= 2)."""
    if h == "median":
        h = canonical_median(p, block)
        if math.isnan(h):
            return math.nan
    return float(_canonical_ul(p, codes, float(h)))


# --- exact canonical median with bounded memory


@jit(nogil=True)
def _canonical_hist_chunk(pt, lo, hi, block, c, nchunks, cnt, vmin, vmax):  # pragma: no cover
    """Work chunk c: count/min/max per bin of the distances lo <= d <= hi (into the
    given rows), and the number of distances 0 < d < lo (returned).

    Bin of d: min(nbins - 1, floor((d - lo) * scale)), monotone in d.
    """
    nbins = cnt.shape[0]
    scale = nbins / (hi - lo) if hi > lo else 0.0
    if not scale < np.inf:  # a bracket narrower than ~1e-304: one bin
        scale = 0.0
    d2 = np.empty(block)
    nbelow = 0
    n = pt.shape[1]
    tiles = _chunk_tiles(n, block, c, nchunks)
    for t in range(tiles.shape[0]):
        i0 = tiles[t, 0] * block
        i1 = min(n, i0 + block)
        j_lo = tiles[t, 1] * block
        j1 = min(n, j_lo + block)
        for i in range(i0, i1):
            j0 = max(j_lo, i + 1)
            m = j1 - j0
            if m <= 0:
                continue
            _tile_dist2(pt, i, j0, m, d2)
            for jj in range(m):  # vector loop
                d2[jj] = np.sqrt(d2[jj])
            for jj in range(m):
                d = d2[jj]
                if d < lo:
                    if d > 0.0:
                        nbelow += 1
                    continue
                if d > hi:
                    continue
                b = min(nbins - 1, np.int64((d - lo) * scale))
                cnt[b] += 1
                if d < vmin[b]:
                    vmin[b] = d
                if d > vmax[b]:
                    vmax[b] = d
    return nbelow


@jit(nogil=True)
def _canonical_collect_chunk(pt, lo, hi, block, c, nchunks, out, pos):  # pragma: no cover
    """Work chunk c: write the distances lo <= d <= hi (lo > 0) to out[pos:]."""
    d2 = np.empty(block)
    n = pt.shape[1]
    tiles = _chunk_tiles(n, block, c, nchunks)
    for t in range(tiles.shape[0]):
        i0 = tiles[t, 0] * block
        i1 = min(n, i0 + block)
        j_lo = tiles[t, 1] * block
        j1 = min(n, j_lo + block)
        for i in range(i0, i1):
            j0 = max(j_lo, i + 1)
            m = j1 - j0
            if m <= 0:
                continue
            _tile_dist2(pt, i, j0, m, d2)
            for jj in range(m):  # vector loop
                d2[jj] = np.sqrt(d2[jj])
            for jj in range(m):
                d = d2[jj]
                if lo <= d <= hi:
                    out[pos] = d
                    pos += 1
    return pos


def _canonical_median_t(pt: np.ndarray, block: int = BLOCK) -> float:
    """Exact R ``median(d[d > 0])`` of the Euclidean distances between columns of pt."""
    k_cols, n = pt.shape
    nchunks = _chunks(n, block)
    lo = 5e-324  # the smallest positive double: lo <= d  <=>  d > 0
    hi = math.sqrt(k_cols) * (1 + 1e-12)  # |p_ik - p_jk| <= 1
    targets = None  # 1-based ranks of the middle value(s) among the positive distances
    previous = -1
    cnt = np.empty((nchunks, MEDIAN_BINS), np.int64)
    vmin = np.empty((nchunks, MEDIAN_BINS))
    vmax = np.empty((nchunks, MEDIAN_BINS))
    while True:
        cnt[:] = 0
        vmin[:] = np.inf
        vmax[:] = -np.inf
        below = in_threads(
            lambda c, nc, lo=lo, hi=hi: _canonical_hist_chunk(
                pt, lo, hi, block, c, nc, cnt[c], vmin[c], vmax[c]
            ),
            nchunks,
        )
        below_total = int(sum(below))  # positive distances below the bracket
        counts = cnt.sum(axis=0)
        bmin = vmin.min(axis=0)
        bmax = vmax.max(axis=0)
        if targets is None:
            npos = below_total + int(counts.sum())
            if npos == 0:
                return math.nan
            half = (npos + 1) // 2
            targets = (half,) if npos % 2 == 1 else (half, half + 1)
        cum = np.cumsum(counts)
        local = [t - below_total for t in targets]
        bins = [int(np.searchsorted(cum, t)) for t in local]  # first bin with cum >= t
        if len(bins) == 2 and bins[0] != bins[1]:
            # neighbouring ranks in different bins: the max of one, the min of the next
            return (float(bmax[bins[0]]) + float(bmin[bins[1]])) / 2.0
        b = bins[0]
        before = int(cum[b - 1]) if b > 0 else 0
        if bmin[b] == bmax[b]:
            return float(bmin[b])
        size = int(counts[b])
        if size <= COLLECT_CAP or size == previous:  # (the latter: no progress possible)
            offsets = np.zeros(nchunks, np.int64)
            offsets[1:] = np.cumsum(cnt[:-1, b])
            vals = np.empty(size)
            b_lo, b_hi = float(bmin[b]), float(bmax[b])
            in_threads(
                lambda c, nc, lo=b_lo, hi=b_hi, out=vals, at=offsets: _canonical_collect_chunk(
                    pt, lo, hi, block, c, nc, out, at[c]
                ),
                nchunks,
            )
            ranks = [t - before - 1 for t in local]
            vals.partition(ranks)
            return float(sum(vals[r] for r in ranks)) / len(ranks)
        previous = size
        lo, hi = float(bmin[b]), float(bmax[b])


def canonical_median(p: np.ndarray, block: int = BLOCK) -> float:
    """Exact R ``median(d[d > 0])`` of the Euclidean distances between rows of p; NaN if none."""
    pt = np.ascontiguousarray(p.T)
    return _canonical_median_t(pt, block)


def _chunks(n: int, block: int) -> int:
    """Work chunks for n rows in tiles of ``block``: ``CHUNKS`` (fewer when there are
    fewer tile-row pairs), never the number of threads, so that every machine splits
    the work, and sums it, in the same way."""
    npairs = ((n + block - 1) // block + 1) // 2
    return max(1, min(CHUNKS, npairs))
