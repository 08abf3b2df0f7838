"""SKCE kernels of the canonical form: the pair sum, ``"ul"`` and the exact median
bandwidth over the Euclidean distances between probability vectors.

O(n^2 K) over the pairs i < j in square tiles of ``block`` rows, no n x n
matrix, all cores: a fixed number of work chunks (``CHUNKS``, whatever the
number of threads, so the results are the same on every machine), each a set of
tile rows paired with their mirrors so that every chunk has the same number of
tiles; the chunk results are combined in chunk order (``_threads.run_chunks``).
Euclidean distances are computed directly as ``sqrt(sum_k (p_ik - p_jk)^2)``,
summed in column order as R's ``dist()`` does, so they are bit-identical to R's.
Rows are grouped by class first (the pair sum does not depend on the order), so
that ``<e_i, e_j> = e_i[y_j] - p_j[y_i] + <p_i, p_j>`` needs no gather
(``e_i[y_j]`` is constant along a class) and
``<p_i, p_j> = (||p_i||^2 + ||p_j||^2 - d_ij^2) / 2`` reuses the distance: this
only feeds the inner product, whose absolute error stays at a few ulps of 1
(the kernel's distances are never taken from the Gram identity).

The median bandwidth is exact with bounded memory: a blocked pass histograms
the positive distances of a value bracket (count, min and max per bin); the bin
holding the middle rank becomes the next bracket, and once it holds at most
``COLLECT_CAP`` distances they are collected and selected exactly. Two
neighbouring middle ranks in different bins are the max of the one and the min
of the next, known from the histogram.

``exp`` is :func:`calibr._kernels.vexp.vexp`, which lets LLVM vectorise the
tiles. The tiles multiply by ``-1/h`` instead of dividing by ``h`` (one rounding
more in the argument: relative error below 745 * 2**-52 in a kernel value that
is not below 1e-308).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from ._threads import run_chunks
from .vexp import vexp

__all__ = ["canonical_median", "canonical_pair_sum", "canonical_ul"]

#: Tile edge of the canonical kernels (rows of p per tile).
BLOCK = 256
#: Work chunks of the canonical kernels, run on up to ``num_threads()`` threads. A
#: fixed number, so that the results do not depend on the number of threads.
CHUNKS = 16
#: Bins of one histogram pass of the canonical median: about one per
#: MEDIAN_PAIRS_PER_BIN pairs, at least MEDIAN_MIN_BINS, at most MEDIAN_BINS (so
#: that the histogram's cost scales with the pairs at small n).
MEDIAN_BINS = 1 << 15
MEDIAN_MIN_BINS = 16
MEDIAN_PAIRS_PER_BIN = 8
#: At most this many distances (8 bytes each, 32 MB) are collected for the final
#: exact selection of the median.
COLLECT_CAP = 1 << 22


def _chunks(n: int, block: int) -> int:
    """Work chunks for n rows in tiles of ``block``: ``CHUNKS`` (fewer when there are
    fewer tile-row pairs), never the number of threads, so that every machine splits
    the work, and sums it, in the same way."""
    npairs = ((n + block - 1) // block + 1) // 2
    return max(1, min(CHUNKS, npairs))


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
def _pair_sum_chunk(pt, e, codes, run_end, sq, h, block, c, nchunks):  # pragma: no cover
    """Work chunk c of nchunks of sum_{i<j} exp(-||p_i - p_j|| / h) <e_i, e_j>.

    ``pt``: p.T (K, n); ``e``: residuals (n, K); ``codes`` sorted; ``run_end[c]``:
    end of the rows of class c; ``sq[i] = ||p_i||^2``. The inner product is
    ``<e_i, e_j> = e_i[y_j] - p_j[y_i] + <p_i, p_j>`` with
    ``<p_i, p_j> = (||p_i||^2 + ||p_j||^2 - d_ij^2) / 2``: along a run of one class
    ``e_i[y_j]`` is a constant (filled in without a gather), so the inner loops
    are plain vector loops.
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
                    acc[q] += vexp(-np.sqrt(d2[q]) / h) * g
            else:
                for q in range(m):
                    j = j0 + q
                    g = ey[q] - pt[yi, j] + (half_si + 0.5 * sq[j] - 0.5 * d2[q])
                    acc[q] += vexp(np.sqrt(d2[q]) * scale) * g
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
    p: np.ndarray, codes: np.ndarray, h: float | str, block: int | None = None
) -> tuple[float, float, float]:
    """Exact ``(T, sum_i ||e_i||^2, h)`` for the canonical form, e_i = onehot(y_i) - p_i.

    ``h``: a bandwidth or ``"median"`` (resolved here; NaN when all rows are equal).
    Neither the pair sum nor the median depends on the order of the rows, so the
    rows are first grouped by class. ``block``: the tile edge (default ``BLOCK``).
    """
    block = BLOCK if block is None else block
    pt, e, sorted_codes, run_end, sq, diag = _by_class(p, codes)
    if h == "median":
        h = _median_t(pt, block)
        if math.isnan(h):
            return math.nan, math.nan, h
    n = pt.shape[1]
    nchunks = _chunks(n, block)
    calls = [(pt, e, sorted_codes, run_end, sq, float(h), block, c, nchunks)
             for c in range(nchunks)]
    return math.fsum(run_chunks(_pair_sum_chunk, calls)), float(diag), float(h)


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
        total += vexp(-np.sqrt(d2) / h) * g
    return total / m


def canonical_ul(
    p: np.ndarray, codes: np.ndarray, h: float | str, block: int | None = None
) -> float:
    """The ``"ul"`` estimate of the canonical form (n >= 2)."""
    if h == "median":
        h = canonical_median(p, block)
        if math.isnan(h):
            return math.nan
    return float(_canonical_ul(p, codes, float(h)))


# --- exact median with bounded memory


@jit(nogil=True)
def _hist_chunk(pt, lo, hi, block, c, nchunks, cnt, vmin, vmax):  # pragma: no cover
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
def _collect_chunk(pt, lo, hi, block, c, nchunks, out, pos):  # pragma: no cover
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


def _median_t(pt: np.ndarray, block: int) -> float:
    """Exact R ``median(d[d > 0])`` of the Euclidean distances between columns of pt."""
    k_cols, n = pt.shape
    nchunks = _chunks(n, block)
    lo = 5e-324  # the smallest positive double: lo <= d  <=>  d > 0
    hi = math.sqrt(k_cols) * (1 + 1e-12)  # |p_ik - p_jk| <= 1
    targets = None  # 1-based ranks of the middle value(s) among the positive distances
    previous = -1
    npairs = n * (n - 1) // 2
    nbins = min(MEDIAN_BINS, max(MEDIAN_MIN_BINS, npairs // MEDIAN_PAIRS_PER_BIN))
    cnt = np.empty((nchunks, nbins), np.int64)
    vmin = np.empty((nchunks, nbins))
    vmax = np.empty((nchunks, nbins))
    while True:
        cnt[:] = 0
        vmin[:] = np.inf
        vmax[:] = -np.inf
        calls = [(pt, lo, hi, block, c, nchunks, cnt[c], vmin[c], vmax[c])
                 for c in range(nchunks)]
        below_total = int(sum(run_chunks(_hist_chunk, calls)))  # positive, below the bracket
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
            calls = [(pt, b_lo, b_hi, block, c, nchunks, vals, offsets[c])
                     for c in range(nchunks)]
            for _ in run_chunks(_collect_chunk, calls):
                pass
            ranks = [t - before - 1 for t in local]
            vals.partition(ranks)
            return float(sum(vals[r] for r in ranks)) / len(ranks)
        previous = size
        lo, hi = float(bmin[b]), float(bmax[b])


def canonical_median(p: np.ndarray, block: int | None = None) -> float:
    """Exact R ``median(d[d > 0])`` of the Euclidean distances between rows of p; NaN if none."""
    pt = np.ascontiguousarray(p.T)
    return _median_t(pt, BLOCK if block is None else block)
