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
the number of pairs with ``x_j - x_i <= t`` is one O(n) two-pointer sweep
(rounding is monotone, so ``fl(x_j - x_i)`` is monotone in j and in i). The
k-th smallest difference is found by a randomised bracketing selection in the
spirit of Johnson & Mizoguchi (1978) / Croux & Rousseeuw (1992): keep a value
bracket (A, B) that holds the answer and, per row i, the range of columns j
whose difference lies inside it; draw a uniform sample of the candidates,
take two sample quantiles around the target rank as pivots, count exactly,
shrink; once few candidates remain, collect them and select with
``numpy.partition``. The sample only steers; every count is exact, so the
answer is exactly a computed difference ``x_j - x_i`` (as R's ``dist``/
``outer`` computes it), whatever the random draws.

Canonical form
--------------
O(n^2 K) over the pairs i < j in square tiles of ``block`` rows, Euclidean
distances computed directly as ``sqrt(sum_k (p_ik - p_jk)^2)`` in column
order (as R's ``dist()`` does, so the distances are bit-identical), no n x n
matrix, both cores (tile rows are paired so that every work item has the same
number of tiles). The median heuristic is exact with bounded memory: a blocked
pass histograms the positive distances of a value bracket (count, min and max
per bin); the bin holding the middle rank becomes the next bracket, and once
it holds at most ``COLLECT_CAP`` distances they are collected and selected
exactly. Two neighbouring middle ranks in different bins are the max of the
one and the min of the next, known from the histogram.

``exp`` in the inner loops is a vectorisable Cody-Waite/Taylor ``exp``
(about 1 ulp, checked against ``numpy.exp`` in the tests), which lets LLVM
vectorise the tiles; ``exp(0)`` is exactly 1.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import intrinsic

__all__ = [
    "canonical_median",
    "canonical_pair_sum",
    "canonical_ul",
    "estimate_from_sums",
    "median_oracle",
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
#: Bins of one histogram pass of the canonical median.
MEDIAN_BINS = 1 << 15
#: At most this many distances (8 bytes each) are collected for the final exact
#: selection of a median (canonical: 32 MB).
COLLECT_CAP = 1 << 22


# ---------------------------------------------------------------------------
# readable oracles (the formulas of r-docs/skce.txt, O(n^2) memory on purpose)


def _distance_matrix(x: np.ndarray) -> np.ndarray:
    """|x_i - x_j| for scalars, ||x_i - x_j||_2 for the rows of a matrix."""
    if x.ndim == 1:
        return np.abs(x[:, None] - x[None, :])
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))


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


@njit(cache=True, inline="always")
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _pack_keys(x, c):  # pragma: no cover - compiled
    """uint64 keys (bits(x) << 1) | c, monotone in x for 0 <= x <= 1."""
    n = x.shape[0]
    keys = np.empty(n, np.uint64)
    for i in range(n):
        b = _f64_as_i64(x[i]) & 0x7FFFFFFFFFFFFFFF  # -0.0 -> +0.0
        keys[i] = np.uint64((b << 1) | (1 if c[i] != 0 else 0))
    return keys


@njit(cache=True)
def _sorted_pair_sum(keys, h):  # pragma: no cover - compiled
    """(T, sum e^2) from sorted keys; e = c - x."""
    n = keys.shape[0]
    w = np.empty(max(n - 1, 0))
    for i in range(n - 1):  # vectorises: gaps and their kernel weights
        lo = _i64_as_f64(np.int64(keys[i] >> np.uint64(1)))
        hi = _i64_as_f64(np.int64(keys[i + 1] >> np.uint64(1)))
        w[i] = _vexp(-(hi - lo) / h)
    s = 0.0
    total = 0.0
    diag = 0.0
    e_next = 0.0
    for i in range(n - 1, -1, -1):
        key = keys[i]
        x = _i64_as_f64(np.int64(key >> np.uint64(1)))
        e = (1.0 if (key & np.uint64(1)) else 0.0) - x
        if i < n - 1:
            s = w[i] * (e_next + s)
            total += e * s
        diag += e * e
        e_next = e
    return total, diag


def _sorted_keys(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    keys = _pack_keys(x, c)
    keys.sort()
    return keys


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _tie_pairs(x):  # pragma: no cover - compiled
    """Pairs i < j with x_i == x_j (x sorted)."""
    n = x.shape[0]
    z = 0
    run = 1
    for i in range(1, n + 1):
        if i < n and x[i] == x[i - 1]:
            run += 1
        else:
            z += run * (run - 1) // 2
            run = 1
    return z


@njit(cache=True)
def _ptr_gt(x, t, out):  # pragma: no cover - compiled
    """out[i] = first j > i with x_j - x_i > t; returns #pairs with x_j - x_i <= t."""
    n = x.shape[0]
    j = 1
    cnt = 0
    for i in range(n):
        if j < i + 1:
            j = i + 1
        xi = x[i]
        while j < n and x[j] - xi <= t:
            j += 1
        out[i] = j
        cnt += j - i - 1
    return cnt


@njit(cache=True)
def _ptr_ge(x, t, out):  # pragma: no cover - compiled
    """out[i] = first j > i with x_j - x_i >= t; returns #pairs with x_j - x_i < t."""
    n = x.shape[0]
    j = 1
    cnt = 0
    for i in range(n):
        if j < i + 1:
            j = i + 1
        xi = x[i]
        while j < n and x[j] - xi < t:
            j += 1
        out[i] = j
        cnt += j - i - 1
    return cnt


@njit(cache=True)
def _collect(x, lo_ptr, hi_ptr, total):  # pragma: no cover - compiled
    out = np.empty(total)
    m = 0
    for i in range(x.shape[0]):
        xi = x[i]
        for j in range(lo_ptr[i], hi_ptr[i]):
            out[m] = x[j] - xi
            m += 1
    return out


@njit(cache=True)
def _sample(x, lo_ptr, hi_ptr, ranks):  # pragma: no cover - compiled
    """Differences of the candidates with the given sorted ranks (row-major order)."""
    out = np.empty(ranks.shape[0])
    start = 0  # rank of the first candidate of row i
    r = 0
    for i in range(x.shape[0]):
        stop = start + (hi_ptr[i] - lo_ptr[i])
        while r < ranks.shape[0] and ranks[r] < stop:
            out[r] = x[lo_ptr[i] + (ranks[r] - start)] - x[i]
            r += 1
        start = stop
    return out


@njit(cache=True)
def _min_gt(x, t):  # pragma: no cover - compiled
    """The smallest difference x_j - x_i (i < j) that is > t; inf if none."""
    n = x.shape[0]
    j = 1
    best = np.inf
    for i in range(n):
        if j < i + 1:
            j = i + 1
        xi = x[i]
        while j < n and x[j] - xi <= t:
            j += 1
        if j < n:
            d = x[j] - xi
            if d < best:
                best = d
    return best


def _select_pair_difference(x: np.ndarray, k: int, zeros: int) -> float:
    """k-th smallest (1-based) of all x_j - x_i, i < j, on sorted x (k > zeros)."""
    n = x.shape[0]
    lo_ptr = np.empty(n, np.int64)
    le_a = _ptr_gt(x, 0.0, lo_ptr)  # bracket (A, B) with A = 0: #(d <= A) = zeros < k
    assert le_a == zeros
    hi_ptr = np.full(n, n, dtype=np.int64)  # B = +inf
    tmp = np.empty(n, np.int64)
    cap = max(n, 1 << 16)
    m = 1 << 16
    rng = np.random.default_rng(20190429)
    while True:
        counts = hi_ptr - lo_ptr
        cand = int(counts.sum())
        local = k - le_a  # 1-based rank of the answer among the candidates
        if cand <= cap:
            vals = _collect(x, lo_ptr, hi_ptr, cand)
            return float(np.partition(vals, local - 1)[local - 1])
        ranks = np.sort(rng.integers(0, cand, size=m))
        s = np.sort(_sample(x, lo_ptr, hi_ptr, ranks))
        q = local / cand
        delta = 3.0 * math.sqrt(m * q * (1.0 - q)) + 2.0
        pivots = []
        i_lo = math.floor(q * m - delta) - 1
        i_hi = math.ceil(q * m + delta)
        if i_lo >= 0:
            pivots.append(float(s[i_lo]))
        if i_hi < m:
            pivots.append(float(s[i_hi]))
        if not pivots:  # the sample cannot narrow it: take its median as a pivot
            pivots.append(float(s[m // 2]))
        a_val = -math.inf
        b_val = math.inf
        for piv in pivots:
            if not (a_val < piv < b_val):
                continue
            le = _ptr_gt(x, piv, tmp)
            if le < k:  # the answer is above piv
                lo_ptr, tmp = tmp, lo_ptr
                le_a = le
                a_val = piv
                continue
            lt = _ptr_ge(x, piv, tmp)
            if lt < k:  # #(d < piv) < k <= #(d <= piv)
                return piv
            hi_ptr, tmp = tmp, hi_ptr
            b_val = piv


def scalar_median(x: np.ndarray, presorted: bool = False) -> float:
    """Exact R ``median(d[d > 0])`` of ``d = |x_i - x_j|``, i < j; NaN if no d > 0."""
    xs = np.ascontiguousarray(x, dtype=np.float64) if presorted else np.sort(x)
    n = xs.shape[0]
    zeros = int(_tie_pairs(xs))
    npos = n * (n - 1) // 2 - zeros
    if npos <= 0:
        return math.nan
    if npos % 2 == 1:
        return _select_pair_difference(xs, zeros + (npos + 1) // 2, zeros)
    k = zeros + npos // 2
    v1 = _select_pair_difference(xs, k, zeros)
    le = _ptr_gt(xs, v1, np.empty(n, np.int64))
    v2 = v1 if le >= k + 1 else float(_min_gt(xs, v1))
    return (v1 + v2) / 2.0


# ---------------------------------------------------------------------------
# canonical kernels


@njit(cache=True, inline="always")
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


@njit(cache=True, parallel=True)
def _canonical_pair_sum(pt, et, h, block):  # pragma: no cover - compiled
    K, n = pt.shape
    nb = (n + block - 1) // block
    npairs = (nb + 1) // 2
    partial = np.zeros(npairs)
    for t in prange(npairs):
        d2 = np.empty(block)
        g = np.empty(block)
        acc = np.zeros(block)
        for which in range(2):
            bi = t if which == 0 else nb - 1 - t
            if which == 1 and bi == t:
                break
            i0 = bi * block
            i1 = min(n, i0 + block)
            for bj in range(bi, nb):
                j1 = min(n, (bj + 1) * block)
                for i in range(i0, i1):
                    j0 = max(bj * block, i + 1)
                    m = j1 - j0
                    if m <= 0:
                        continue
                    _tile_dist2(pt, i, j0, m, d2)
                    for jj in range(m):
                        g[jj] = 0.0
                    for k in range(K):
                        eik = et[k, i]
                        for jj in range(m):
                            g[jj] += et[k, j0 + jj] * eik
                    for jj in range(m):
                        acc[jj] += _vexp(-np.sqrt(d2[jj]) / h) * g[jj]
        partial[t] = acc.sum()
    return partial.sum()


@njit(cache=True)
def _residuals_t(p, codes):  # pragma: no cover - compiled
    """p.T and (onehot(y) - p).T as C-contiguous (K, n) arrays, and sum ||e_i||^2."""
    n, K = p.shape
    pt = np.empty((K, n))
    et = np.empty((K, n))
    diag = 0.0
    for i in range(n):
        for k in range(K):
            v = p[i, k]
            e = (1.0 if codes[i] == k else 0.0) - v
            pt[k, i] = v
            et[k, i] = e
            diag += e * e
    return pt, et, diag


def canonical_pair_sum(
    p: np.ndarray, codes: np.ndarray, h: float | str, block: int = BLOCK
) -> tuple[float, float, float]:
    """Exact ``(T, sum_i ||e_i||^2, h)`` for the canonical form, e_i = onehot(y_i) - p_i.

    ``h``: a bandwidth or ``"median"`` (resolved here; NaN when all rows are equal).
    """
    pt, et, diag = _residuals_t(p, codes)
    if h == "median":
        h = _canonical_median_t(pt, block)
        if math.isnan(h):
            return math.nan, math.nan, h
    total = _canonical_pair_sum(pt, et, float(h), block)
    return float(total), float(diag), float(h)


@njit(cache=True)
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


@njit(cache=True, parallel=True)
def _canonical_hist(pt, lo, hi, nbins, block, nchunks):  # pragma: no cover - compiled
    """Per work chunk: #(0 < d < lo), and count/min/max per bin of lo <= d <= hi.

    Bin of d: min(nbins - 1, floor((d - lo) * scale)), monotone in d.
    """
    K, n = pt.shape
    nb = (n + block - 1) // block
    npairs = (nb + 1) // 2
    scale = nbins / (hi - lo) if hi > lo else 0.0
    below = np.zeros(nchunks, np.int64)
    cnt = np.zeros((nchunks, nbins), np.int64)
    vmin = np.full((nchunks, nbins), np.inf)
    vmax = np.full((nchunks, nbins), -np.inf)
    for c in prange(nchunks):
        d2 = np.empty(block)
        for t in range(c, npairs, nchunks):
            for which in range(2):
                bi = t if which == 0 else nb - 1 - t
                if which == 1 and bi == t:
                    break
                i0 = bi * block
                i1 = min(n, i0 + block)
                for bj in range(bi, nb):
                    j1 = min(n, (bj + 1) * block)
                    for i in range(i0, i1):
                        j0 = max(bj * block, i + 1)
                        m = j1 - j0
                        if m <= 0:
                            continue
                        _tile_dist2(pt, i, j0, m, d2)
                        for jj in range(m):
                            d = np.sqrt(d2[jj])
                            if d <= 0.0 or d > hi:
                                continue
                            if d < lo:
                                below[c] += 1
                                continue
                            b = min(nbins - 1, np.int64((d - lo) * scale))
                            cnt[c, b] += 1
                            if d < vmin[c, b]:
                                vmin[c, b] = d
                            if d > vmax[c, b]:
                                vmax[c, b] = d
    return below, cnt, vmin, vmax


@njit(cache=True, parallel=True)
def _canonical_collect(pt, lo, hi, block, nchunks, offsets, total):  # pragma: no cover
    """All distances with lo <= d <= hi (lo > 0); chunk c writes from offsets[c]."""
    K, n = pt.shape
    nb = (n + block - 1) // block
    npairs = (nb + 1) // 2
    out = np.empty(total)
    for c in prange(nchunks):
        d2 = np.empty(block)
        pos = offsets[c]
        for t in range(c, npairs, nchunks):
            for which in range(2):
                bi = t if which == 0 else nb - 1 - t
                if which == 1 and bi == t:
                    break
                i0 = bi * block
                i1 = min(n, i0 + block)
                for bj in range(bi, nb):
                    j1 = min(n, (bj + 1) * block)
                    for i in range(i0, i1):
                        j0 = max(bj * block, i + 1)
                        m = j1 - j0
                        if m <= 0:
                            continue
                        _tile_dist2(pt, i, j0, m, d2)
                        for jj in range(m):
                            d = np.sqrt(d2[jj])
                            if lo <= d <= hi:
                                out[pos] = d
                                pos += 1
    return out


def _canonical_median_t(pt: np.ndarray, block: int = BLOCK) -> float:
    """Exact R ``median(d[d > 0])`` of the Euclidean distances between columns of pt."""
    k_cols, n = pt.shape
    nchunks = max(1, min(8, ((n + block - 1) // block + 1) // 2))
    lo = 5e-324  # the smallest positive double: lo <= d  <=>  d > 0
    hi = math.sqrt(k_cols) * (1 + 1e-12)  # |p_ik - p_jk| <= 1
    targets = None  # 1-based ranks of the middle value(s) among the positive distances
    previous = -1
    while True:
        below, cnt, vmin, vmax = _canonical_hist(pt, lo, hi, MEDIAN_BINS, block, nchunks)
        below_total = int(below.sum())  # positive distances below the bracket
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
            vals = _canonical_collect(
                pt, float(bmin[b]), float(bmax[b]), block, nchunks, offsets, size
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


def num_threads() -> int:
    """Threads numba uses for the canonical kernels."""
    return numba.get_num_threads()
