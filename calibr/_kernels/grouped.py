"""Every group of a split in one pass: the kernels behind ``calibr.summarise()`` and
``calibr.calibration_table()`` over a grouping.

The input is the group layer's :class:`calibr._input.groups.Split`: the canonical
arrays in the frame's order with the group of each row (``ids``), and the
offsets of the groups once the rows are sorted by group (``start``: group ``g``
is the sorted rows ``start[g]:start[g + 1]``; :func:`by_group` sorts, stably,
in one pass). Each kernel walks the groups in one compiled loop and writes one
result per group, so that thousands of small groups cost one call, not one
Python-level call each.

Each group's number must be the bits of the metric called on the group alone, so
each kernel repeats, per group, exactly the arithmetic of the per-call kernel:

* binned metrics: per-(group, bin) sums. Binary and confidence forms
  (:func:`binary_stat_batches`): ``binned.binary_rows``, the per-call kernel's
  routine for one chunk, on each group's rows; classwise
  (:func:`classwise_stat_batches`): one pass over the rows in the frame's order,
  so that each (group, class, bin) adds its values in the order of the group's
  rows from 0.0, as the per-call kernel does. Both as the per-call kernel treats
  an input below ``binned.PARALLEL_MIN_N`` rows (one chunk); a group of at least
  that many rows is cut into chunks by the per-call kernel itself, on its rows.
  :func:`ece_mce` then reduces the ``(groups, bins)`` arrays over their last
  axis with the numpy reductions of ``binned.ece_from_stats`` and
  ``binned.mce_from_stats`` (numpy reduces each row of a C-ordered array over
  its contiguous last axis as it reduces the row alone; ``tests/test_grouped.py``
  checks it);
* scalar SKCE/MMCE (:func:`scalar_pair_sums`, :func:`scalar_ul`): the packed
  sort keys of ``scalar_sums`` sorted by (group, key) (:func:`sorted_by_group`),
  then the running sum of ``scalar_sums._sorted_pair_sum`` restarted at each
  group; the median bandwidth of each group from its sorted segment
  (``scalar_median.median_of_sorted``, exact, so the same value as the per-call
  median);
* canonical SKCE (:func:`canonical_pair_sums`, :func:`canonical_ul`): the
  canonical kernels' own routines per group (``_by_class``, one work chunk of
  ``_pair_sum_chunk``, ``_canonical_ul``) in one compiled loop, for groups that
  the per-call kernel does in one work chunk (at most ``2 * canonical.BLOCK``
  rows); the per-call kernel itself, called from Python, for larger ones (their
  O(n^2 K) cost dwarfs one Python call). The median of the Euclidean distances
  of a small group is selected exactly from its collected distances (the same
  column-ordered sums as ``canonical._tile_dist2`` and R's ``dist()``);
* the scores (:func:`binary_brier_groups`, :func:`matrix_brier_groups`,
  :func:`lane_sum_groups`, :func:`auc_groups`): the per-call kernels of
  ``calibr._kernels.scores`` on each group's rows; the log loss's probabilities
  are picked and logged for all rows at once by the caller (a row's pick and
  numpy's logarithm of it do not depend on the other rows), and summed per group
  in ``lane_sum``'s order, that of the per-call chunks.

Results do not depend on threads: groups are split among threads whole, and
each writes only its own groups' slots. The tests check every kernel against
the per-group calls (``==``) and against readable oracles (``tests/oracles/``).
"""

from __future__ import annotations

import numpy as np

from . import binned, canonical
from ._jit import jit, read_only
from ._threads import chunk_bounds, num_threads, run_chunks
from .binned import _bin_right_closed
from .scalar_median import median_of_sorted
from .scalar_sums import SUM_BLOCK, _keys_values, _pack_keys, _scalar_ul, _sorted_pair_sum
from .scores import (
    auc_sorted_keys,
    binary_keys,
    checked_binary_brier,
    checked_matrix_brier,
    lane_sum,
)

__all__ = [
    "auc_groups",
    "binary_brier_groups",
    "binary_stat_batches",
    "canonical_pair_sums",
    "canonical_ul",
    "classwise_stat_batches",
    "ece_mce",
    "estimate",
    "by_group",
    "lane_sum_groups",
    "matrix_brier_groups",
    "scalar_pair_sums",
    "scalar_ul",
    "sorted_by_group",
]

#: Bytes of per-(group, bin) sums computed at once: more groups are done in batches.
GROUP_MEMORY = 1 << 25
#: Splits of the groups among threads when there is enough work (at least
#: ``binned.PARALLEL_MIN_N`` rows; see ``_group_splits``); each a range of whole groups.
GROUP_CHUNKS = 8


# --------------------------------------------------------------------------
# the rows sorted by group


@jit(nogil=True)
def _non_decreasing(ids):  # pragma: no cover - compiled
    for i in range(1, ids.shape[0]):
        if ids[i] < ids[i - 1]:
            return False
    return True


@jit(nogil=True)
def _scatter(src, ids, pos, dst):  # pragma: no cover - compiled
    """dst = src (values, or rows of a matrix) sorted by group, stably: row i goes to
    row pos[ids[i]] of dst, which then advances (pos: the groups' first rows)."""
    if src.ndim == 1:
        for i in range(src.shape[0]):
            g = ids[i]
            dst[pos[g]] = src[i]
            pos[g] += 1
    else:
        for i in range(src.shape[0]):
            g = ids[i]
            q = pos[g]
            for j in range(src.shape[1]):
                dst[q, j] = src[i, j]
            pos[g] += 1
    return 0


def _bits(a: np.ndarray) -> np.ndarray:
    """``a`` seen as unsigned integers of its item size (C-contiguous ``a``): moving
    values needs only their bits, so the kernels that move them compile once per
    item size (and number of dimensions), not once per dtype."""
    size = a.dtype.itemsize
    return a.view(np.dtype(f"u{size}")) if size in (1, 2, 4, 8) else a


def by_group(a: np.ndarray, ids: np.ndarray, start: np.ndarray) -> np.ndarray:
    """``a`` (a value or a row per row of the frame) with its rows
    sorted by group, stably (each group's rows in the frame's order), as a new
    array (C-contiguous); ``a`` itself if ``ids`` is already sorted and ``a`` is
    C-contiguous. ``ids`` in [0, groups) with ``start`` their offsets
    (``start[g + 1] - start[g]`` rows of group g)."""
    a = np.ascontiguousarray(a)
    ids = read_only(np.ascontiguousarray(ids, dtype=np.int64))
    if _non_decreasing(ids):
        return a
    out = np.empty_like(a)
    _scatter(read_only(_bits(a)), ids, np.array(start[:-1], dtype=np.int64), _bits(out))
    return out


def _group_splits(cum: np.ndarray, g0: int = 0, g1: int | None = None,
                  nsplits: int = GROUP_CHUNKS) -> list[tuple[int, int]]:
    """Ranges of whole groups from g0 to g1 for the threads, by the cumulative
    work ``cum`` (``cum[g]``: the work of the groups before g; the row offsets
    ``start`` for work in proportion to rows): one range below
    ``binned.PARALLEL_MIN_N`` units of work (or with one thread), else
    ``nsplits`` ranges of about equal work. (Each group's result is the same
    whichever range computes it.)"""
    g1 = cum.shape[0] - 1 if g1 is None else g1
    lo, hi = int(cum[g0]), int(cum[g1])
    if hi - lo < binned.PARALLEL_MIN_N or num_threads() == 1 or g1 - g0 < 2:
        return [(g0, g1)]
    edges = [g0]
    for a, _ in chunk_bounds(hi - lo, nsplits)[1:]:
        g = int(np.searchsorted(cum, lo + a, side="left"))
        edges.append(min(g1, max(edges[-1], g)))
    edges.append(g1)
    return [(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True) if a < b]


def _run_groups(kernel, cum: np.ndarray, *args) -> None:
    """``kernel(*args, g0, g1)`` over ranges of whole groups (split by the cumulative
    work ``cum``, see :func:`_group_splits`), in threads."""
    calls = [(*args, g0, g1) for g0, g1 in _group_splits(cum)]
    for _ in run_chunks(kernel, calls):
        pass


def _pair_work(start: np.ndarray) -> np.ndarray:
    """The cumulative work of pairwise kernels: n^2 / 16 per group of n rows (so that
    a group of 2048 rows is worth as much as 2048 * 128 rows of a one-pass kernel)."""
    sizes = np.diff(start)
    return np.concatenate([[0], np.cumsum(sizes * sizes // 16)])


# --------------------------------------------------------------------------
# binned metrics: per-(group, bin) sums


@jit(nogil=True)
def _binary_groups(p, y, start, skip, bins, nlanes, count, conf, hit, base, g0, g1, counts,
                   sums, idx):  # pragma: no cover - compiled
    """Per group g0 <= g < g1 (rows sorted by group; not those marked in ``skip``):
    ``binned.binary_rows`` of its rows into row g - base of the (groups, bins) sums
    (``counts``, ``sums``, ``idx``: its scratch). Returns the number of groups that
    routine refused (0 for validated input)."""
    refused = 0
    for g in range(g0, g1):
        a = start[g]
        b = start[g + 1]
        if a == b or skip[g]:
            continue
        r = g - base
        if not binned.binary_rows(p, y, a, b, bins, nlanes, counts, sums, idx,
                                  count[r], conf[r], hit[r]):
            refused += 1
    return refused


def _binary_groups_scratch(p, y, start, skip, bins, nlanes, count, conf, hit, base, g0, g1):
    """:func:`_binary_groups` with its scratch, allocated by numpy (an allocation
    in compiled code compiles numba's code for it too)."""
    return _binary_groups(p, y, start, skip, bins, nlanes, count, conf, hit, base, g0, g1,
                          np.empty(2 * nlanes * bins, np.int64), np.empty(nlanes * bins),
                          np.empty(binned.BLOCK, np.uint32))


@jit(nogil=True)
def _classwise_groups(p, codes, ids, skip, bins, step, count, conf, hit, base,
                      g0, g1):  # pragma: no cover - compiled
    """The rows of groups g0 <= g < g1 (not those marked in ``skip``) into row
    g - base of the (groups, K, bins) sums, in the frame's order, so that each
    (group, class, bin) adds its values in the order of the group's rows, from
    0.0, as the per-call classwise kernel does."""
    k = p.shape[1]
    for i in range(p.shape[0]):
        g = ids[i]
        if g < g0 or g >= g1 or skip[g]:
            continue
        r = g - base
        for c in range(k):
            v = p[i, c]
            j = _bin_right_closed(v, bins, step)
            count[r, c, j] += 1.0
            conf[r, c, j] += v
        yi = codes[i]
        hit[r, yi, _bin_right_closed(p[i, yi], bins, step)] += 1.0
    return 0


def _batches(start: np.ndarray, cells: int):
    """Consecutive ranges of groups whose (K x) 3 x bins sums fit ``GROUP_MEMORY``."""
    n_groups = start.shape[0] - 1
    per_batch = max(1, GROUP_MEMORY // (24 * cells))
    for g0 in range(0, n_groups, per_batch):
        yield g0, min(n_groups, g0 + per_batch)


def binary_stat_batches(x: np.ndarray, y: np.ndarray, start: np.ndarray, bins: int):
    """Yield ``(g0, g1, count, sum_conf, sum_hit)`` for consecutive ranges of groups,
    arrays of shape ``(g1 - g0, bins)``; row ``g - g0`` is ``binned.binary_stats``
    of group g's rows, bit for bit (zeros for a group without rows).

    ``x``: float64 in [0, 1] and ``y``: uint8 0/1 hits (binary, or the top-label
    confidence and its correctness), C-contiguous, rows sorted by group.
    """
    large = np.diff(start) >= binned.PARALLEL_MIN_N  # the per-call kernel cuts these in chunks
    nlanes = binned.lanes(bins)
    x, y = read_only(x), read_only(y)
    for g0, g1 in _batches(start, bins):
        count, conf, hit = (np.zeros((g1 - g0, bins)) for _ in range(3))
        calls = [(x, y, start, large, bins, nlanes, count, conf, hit, g0, a, b)
                 for a, b in _group_splits(start, g0, g1)]
        if any(refused for refused in run_chunks(_binary_groups_scratch, calls)):
            raise RuntimeError("calibr: a binned kernel refused input that calibr had validated.")
        for g in np.flatnonzero(large[g0:g1]) + g0:
            a, b = start[g], start[g + 1]
            for out, s in zip((count, conf, hit), binned.binary_stats(x[a:b], y[a:b], bins),
                              strict=True):
                out[g - g0] = s
        yield g0, g1, count, conf, hit


def classwise_stat_batches(p: np.ndarray, codes: np.ndarray, ids: np.ndarray,
                           start: np.ndarray, bins: int):
    """As :func:`binary_stat_batches` for the classwise form, arrays of shape
    ``(g1 - g0, K, bins)`` equal to ``binned.classwise_stats`` of each group's rows.

    ``p`` (n, K) and int64 ``codes`` in the frame's order, ``ids`` the group of
    each row; ``start`` the offsets of the groups.
    """
    k = p.shape[1]
    step = 1.0 / bins
    large = np.diff(start) >= binned.PARALLEL_MIN_N
    p, codes, ids = read_only(p), read_only(codes), read_only(ids)
    for g0, g1 in _batches(start, bins * k):
        count, conf, hit = (np.zeros((g1 - g0, k, bins)) for _ in range(3))
        # (each call reads every row and keeps its groups' ones: one call per thread)
        calls = [(p, codes, ids, large, bins, step, count, conf, hit, g0, a, b)
                 for a, b in _group_splits(start, g0, g1, num_threads())]
        for _ in run_chunks(_classwise_groups, calls):
            pass
        for g in np.flatnonzero(large[g0:g1]) + g0:
            rows = np.flatnonzero(ids == g)  # the group's rows, in order
            stats = binned.classwise_stats(p[rows], codes[rows], bins)
            for out, s in zip((count, conf, hit), stats, strict=True):
                out[g - g0] = s
        yield g0, g1, count, conf, hit


def ece_mce(count: np.ndarray, conf: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group, ``binned.ece_from_stats`` and ``binned.mce_from_stats`` of its
    ``(bins,)`` (or classwise ``(K, bins)``) sums, as arrays over the first axis.

    Groups without rows give NaN.
    """
    nonempty = count > 0
    safe = np.where(nonempty, count, 1.0)
    gap = np.abs(hit / safe - conf / safe)
    with np.errstate(invalid="ignore", divide="ignore"):  # groups without rows: 0 / 0
        per = np.sum(np.where(nonempty, count * gap, 0.0), axis=-1) / np.sum(count, axis=-1)
    ece = np.mean(per, axis=-1) if per.ndim == 2 else per
    axes = tuple(range(1, count.ndim))
    mce = np.max(np.where(nonempty, gap, -np.inf), axis=axes)
    mce[~nonempty.any(axis=axes)] = np.nan
    return ece, mce


# --------------------------------------------------------------------------
# scalar SKCE and MMCE: rows sorted by (group, x)


@jit(nogil=True)
def _rows_into(keys, start, groups, buf):  # pragma: no cover - compiled
    """Row r of buf = the keys of group groups[r], the rest of the row left as it is
    (the padding)."""
    for r in range(groups.shape[0]):
        g = groups[r]
        a = start[g]
        for q in range(a, start[g + 1]):
            buf[r, q - a] = keys[q]
    return 0


@jit(nogil=True)
def _rows_from(buf, start, groups, out):  # pragma: no cover - compiled
    """out[start[g]:start[g+1]] = the first values of row r of buf, g = groups[r]."""
    for r in range(groups.shape[0]):
        g = groups[r]
        a = start[g]
        for q in range(a, start[g + 1]):
            out[q] = buf[r, q - a]
    return 0


def sorted_by_group(keys: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The uint64 ``keys`` (rows sorted by group) sorted within each group: the
    rows sorted by (group, key).

    Groups of similar size share a padded matrix (one row per group, the
    padding the largest key, which sorts last) sorted along its rows by numpy,
    so that every sort is numpy's, on all groups of a size class at once; at
    most twice the keys are held at once.
    """
    sizes = np.diff(start)
    out = np.empty_like(keys)
    width = np.zeros(sizes.shape, np.int64)
    width[sizes > 0] = 1 << np.ceil(np.log2(sizes[sizes > 0])).astype(np.int64)
    for w in np.unique(width[sizes > 0]):
        groups = np.flatnonzero(width == w)
        buf = np.full((groups.shape[0], int(w)), np.iinfo(np.uint64).max, np.uint64)
        _rows_into(keys, start, groups, buf)
        if w > 1:
            buf.sort(axis=1)
        _rows_from(buf, start, groups, out)
    return out


@jit(nogil=True)
def _median_groups(keys, start, h, g0, g1):  # pragma: no cover - compiled
    """h[g] = the median bandwidth of group g from its sorted keys (NaN: none)."""
    for g in range(g0, g1):
        a = start[g]
        b = start[g + 1]
        if a < b:
            h[g] = median_of_sorted(_keys_values(keys[a:b]))
    return 0


@jit(nogil=True)
def _pair_sum_groups(keys, start, h, total, diag, g0, g1):  # pragma: no cover - compiled
    """Per group (keys sorted within each group): the running sum of
    ``_sorted_pair_sum`` restarted at the group, with bandwidth h[g] (NaN: none,
    and its sums stay NaN)."""
    for g in range(g0, g1):
        a = start[g]
        b = start[g + 1]
        if a == b or np.isnan(h[g]):
            continue
        # the block only sets how many weights are computed at once, not the sums
        t, d = _sorted_pair_sum(keys[a:b], h[g], min(SUM_BLOCK, max(1, b - a - 1)))
        total[g] = t
        diag[g] = d
    return 0


def _bandwidths(keys: np.ndarray, start: np.ndarray, h: float | str) -> np.ndarray:
    """Each group's bandwidth: ``h``, or with ``"median"`` its median (NaN: none);
    ``keys`` sorted by (group, key)."""
    n_groups = start.shape[0] - 1
    if h != "median":
        return np.full(n_groups, float(h))
    hs = np.full(n_groups, np.nan)
    _run_groups(_median_groups, start, keys, start, hs)
    return hs


def scalar_pair_sums(x: np.ndarray, c: np.ndarray, start: np.ndarray, h: float | str
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group, ``scalar_sums.scalar_pair_sum`` of its rows: ``(T, sum e^2, h)``
    arrays (NaN for a group without rows, or without a median bandwidth).

    ``x``: float64 in [0, 1], ``c``: uint8 0/1, both C-contiguous, rows sorted by
    group (group g: rows ``start[g]:start[g + 1]``).
    """
    n_groups = start.shape[0] - 1
    keys = sorted_by_group(_pack_keys(read_only(x), read_only(c)), start)
    hs = _bandwidths(keys, start, h)
    total = np.full(n_groups, np.nan)
    diag = np.full(n_groups, np.nan)
    _run_groups(_pair_sum_groups, start, keys, start, hs, total, diag)
    return total, diag, hs


@jit(nogil=True)
def _ul_groups(x, c, start, h, out, g0, g1):  # pragma: no cover - compiled
    """Per group of at least 2 rows: ``_scalar_ul`` of its rows with bandwidth h[g]
    (NaN: none, and its value stays NaN)."""
    for g in range(g0, g1):
        a = start[g]
        b = start[g + 1]
        if b - a < 2 or np.isnan(h[g]):
            continue
        out[g] = _scalar_ul(x[a:b], c[a:b], h[g])
    return 0


def scalar_ul(x: np.ndarray, c: np.ndarray, start: np.ndarray, h: float | str) -> np.ndarray:
    """Per group, ``scalar_sums.scalar_ul`` of its rows (NaN: fewer than 2 rows, or
    no median bandwidth); arguments as for :func:`scalar_pair_sums`."""
    n_groups = start.shape[0] - 1
    x, c = read_only(x), read_only(c)
    if h == "median":
        keys = sorted_by_group(_pack_keys(x, read_only(np.zeros(x.shape[0], np.uint8))), start)
        hs = _bandwidths(keys, start, h)
    else:
        hs = np.full(n_groups, float(h))
    out = np.full(n_groups, np.nan)
    _run_groups(_ul_groups, start, x, c, start, hs, out)
    return out


# --------------------------------------------------------------------------
# canonical SKCE


@jit()
def _median_of_rows(p):  # pragma: no cover - compiled
    """R's ``median(d[d > 0])`` of the Euclidean distances between the rows of p
    (each summed in column order, as ``canonical._tile_dist2`` and R's ``dist()``);
    NaN if none is positive. O(n^2) memory: for small groups."""
    n, k = p.shape
    d = np.empty(n * (n - 1) // 2)
    m = 0
    for i in range(n):
        for j in range(i + 1, n):
            d2 = 0.0
            for q in range(k):
                diff = p[j, q] - p[i, q]
                d2 += diff * diff
            v = np.sqrt(d2)
            if v > 0.0:
                d[m] = v
                m += 1
    if m == 0:
        return np.nan
    half = (m + 1) // 2
    part = np.partition(d[:m], half - 1)
    if m % 2 == 1:
        return part[half - 1]
    return (part[half - 1] + part[half:].min()) / 2.0


@jit(nogil=True)
def _canonical_groups(p, codes, start, todo, median, h, total, diag, block,
                      g0, g1):  # pragma: no cover - compiled
    """For each group with todo[g]: its class-grouped rows and the pair sum of its
    one work chunk (``canonical._pair_sum_chunk``), with h[g] (or its median)."""
    for g in range(g0, g1):
        if not todo[g]:
            continue
        a = start[g]
        b = start[g + 1]
        if median:
            h[g] = _median_of_rows(p[a:b])
            if np.isnan(h[g]):
                continue
        pt, e, sorted_codes, run_end, sq, dg = canonical._by_class(p[a:b], codes[a:b])
        # chunk 0 of 1, as run-time integers: the literals 0 and 1 would compile the
        # chunk kernel a second time beside the per-call kernel's signature
        total[g] = canonical._pair_sum_chunk(pt, e, sorted_codes, run_end, sq, h[g], block,
                                             np.int64(0), np.int64(1))
        diag[g] = dg
    return 0


def _one_chunk(sizes: np.ndarray) -> np.ndarray:
    """Which groups the per-call canonical kernels do in one work chunk."""
    one = {int(s): canonical._chunks(int(s), canonical.BLOCK) == 1 for s in np.unique(sizes)}
    return np.array([one[int(s)] for s in sizes], dtype=bool)


def canonical_pair_sums(p: np.ndarray, codes: np.ndarray, start: np.ndarray,
                        h: float | str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group, ``canonical.canonical_pair_sum`` of its rows: ``(T, sum ||e||^2,
    h)`` arrays (NaN for a group without rows, or without a median bandwidth).
    ``p`` (n, K, C-contiguous) and int64 ``codes``, rows sorted by group."""
    n_groups = start.shape[0] - 1
    sizes = np.diff(start)
    median = h == "median"
    hs = np.full(n_groups, np.nan if median else float(h))
    total = np.full(n_groups, np.nan)
    diag = np.full(n_groups, np.nan)
    small = _one_chunk(sizes) & (sizes > 0)
    _run_groups(_canonical_groups, _pair_work(start), p, codes, start, small, median, hs,
                total, diag, canonical.BLOCK)
    total += 0.0  # the per-call kernel's math.fsum of one chunk turns -0.0 into 0.0
    for g in np.flatnonzero(~small & (sizes > 0)):
        a, b = start[g], start[g + 1]
        total[g], diag[g], hs[g] = canonical.canonical_pair_sum(p[a:b], codes[a:b], h)
    return total, diag, hs


@jit(nogil=True)
def _canonical_ul_groups(p, codes, start, todo, median, h, out,
                         g0, g1):  # pragma: no cover - compiled
    for g in range(g0, g1):
        a = start[g]
        b = start[g + 1]
        if b - a < 2 or not todo[g]:
            continue
        if median:
            h[g] = _median_of_rows(p[a:b])
            if np.isnan(h[g]):
                continue
        out[g] = canonical._canonical_ul(p[a:b], codes[a:b], h[g])
    return 0


def canonical_ul(p: np.ndarray, codes: np.ndarray, start: np.ndarray,
                 h: float | str) -> np.ndarray:
    """Per group, ``canonical.canonical_ul`` of its rows (NaN: fewer than 2 rows, or
    no median bandwidth); arguments as for :func:`canonical_pair_sums`."""
    n_groups = start.shape[0] - 1
    sizes = np.diff(start)
    median = h == "median"
    hs = np.full(n_groups, np.nan if median else float(h))
    out = np.full(n_groups, np.nan)
    # with a median, large groups take the per-call median (O(n) memory)
    todo = _one_chunk(sizes) | (not median)
    _run_groups(_canonical_ul_groups, _pair_work(start) if median else start, p, codes, start,
                todo, median, hs, out)
    for g in np.flatnonzero(~todo & (sizes >= 2)):
        a, b = start[g], start[g + 1]
        out[g] = canonical.canonical_ul(p[a:b], codes[a:b], h)
    return out


# --------------------------------------------------------------------------
# estimators


def estimate(estimator: str, n: np.ndarray, pair_sum: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """``skce.estimate_from_sums`` of each group (``n``: int64 row counts)."""
    if estimator == "biased":
        nf = n.astype(np.float64)
        return (2.0 * pair_sum + diag) / (nf * nf)
    with np.errstate(invalid="ignore", divide="ignore"):  # groups of fewer than 2 rows
        return pair_sum / (n * (n - 1) / 2)


# --------------------------------------------------------------------------
# the scores (brier, log_loss, auroc): the per-call kernels of calibr._kernels.scores
# on each group's rows, so that each group gets the bits of the call on its rows


@jit(nogil=True)
def binary_brier_groups(p, y, start, out):  # pragma: no cover - compiled
    """``out[g]``: the Brier score of group g of a vector ``p`` and 0/1 ``y``
    (``scores.checked_binary_brier`` on its rows, over its count); empty groups
    are left alone."""
    for g in range(start.shape[0] - 1):
        s = start[g]
        e = start[g + 1]
        if e > s:
            total, _ = checked_binary_brier(p[s:e], y[s:e])
            out[g] = total / (e - s)
    return 0


@jit(nogil=True)
def matrix_brier_groups(p, codes, start, out):  # pragma: no cover - compiled
    """:func:`binary_brier_groups` of a matrix ``p`` and 0-based class codes
    (``scores.checked_matrix_brier``)."""
    for g in range(start.shape[0] - 1):
        s = start[g]
        e = start[g + 1]
        if e > s:
            total, _ = checked_matrix_brier(p[s:e], codes[s:e], np.int64(0), np.inf)
            out[g] = total / (e - s)
    return 0


@jit(nogil=True)
def lane_sum_groups(x, start, out):  # pragma: no cover - compiled
    """``out[g]``: ``scores.lane_sum`` of group g's values from 0.0 (the order of
    ``log_loss``'s chunks over the group's rows); empty groups are left alone."""
    for g in range(start.shape[0] - 1):
        s = start[g]
        e = start[g + 1]
        if e > s:
            out[g] = lane_sum(x[s:e], 0.0)
    return 0


@jit(nogil=True)
def auc_groups(x, c, start, out):  # pragma: no cover - compiled
    """``out[g]``: the AUROC of group g's scores ``x`` in [0, 1] and 0/1 outcomes
    ``c``: its packed keys (``scores.binary_keys``) sorted, counted by
    ``scores.auc_sorted_keys``; NaN where the group has one outcome only. Empty
    groups are left alone."""
    largest = 0
    for g in range(start.shape[0] - 1):
        largest = max(largest, start[g + 1] - start[g])
    scratch = np.empty(largest, dtype=np.uint64)
    for g in range(start.shape[0] - 1):
        s = start[g]
        e = start[g + 1]
        if e == s:
            continue
        keys = scratch[:e - s]
        binary_keys(x[s:e], c[s:e], keys)
        keys.sort()
        twice, npos, nneg = auc_sorted_keys(keys)
        if npos == 0 or nneg == 0:
            out[g] = np.nan
        else:
            out[g] = twice / (2.0 * npos * nneg)
    return 0
