"""Frequency-weighted SKCE sums: the pair sums and row sums of scalars with a
weight per row, O(n) each after one sort; and the canonical form's quadratic
forms in blocked tiles.

A weight ``w_i`` is a frequency: an integer ``w_i`` gives exactly the sums of
the sample in which row ``i`` is repeated ``w_i`` times (a bootstrap
replicate's resampling counts are such weights). Notation as in
:mod:`calibr._kernels.skce`: ``h_ij = k(x_i, x_j) e_i e_j``, with the Laplacian
kernel ``k(x_i, x_j) = exp(-|x_i - x_j| / h)`` of scalars, ``h_ii = e_i^2``.
For the repeated sample (``N = sum_i w_i`` rows), with

* ``W  = sum_{i<j} w_i w_j h_ij`` (pairs of distinct rows),
* ``D1 = sum_i w_i h_ii`` and ``D2 = sum_i w_i^2 h_ii`` (the diagonal),

the pair sum over the ``C(N, 2)`` pairs of the repeated sample is
``W + (D2 - D1) / 2`` (a row repeated ``w`` times adds ``C(w, 2)`` pairs of
itself), and the sum over all ``N^2`` ordered pairs is ``2 W + D2``. So

* ``"uq"``:     ``(W + (D2 - D1) / 2) / C(N, 2)``,
* ``"biased"``: ``(2 W + D2) / N^2``.

**The recurrence** (that of :mod:`calibr._kernels.scalar_sums`, with weights).
Sort the rows by x. With the gap factors ``g_i = exp(-(x_{i+1} - x_i) / h)``
(computed once per sort and bandwidth by :func:`gap_factors`), the kernel
factorises along the sorted order, ``k(x_i, x_j) = g_i g_{i+1} ... g_{j-1}``
for ``i < j``, so ``S_i = sum_{j>i} w_j e_j k(x_i, x_j)`` obeys ``S_{n-1} = 0``,
``S_i = g_i (w_{i+1} e_{i+1} + S_{i+1})`` and ``W = sum_i w_i e_i S_i``; the
same recurrence run upwards gives ``sum_{j<i}``. Each pass is O(n) multiply-adds
with no ``exp``: a bootstrap replicate (new weights, same sort) costs O(n).
Exactness and accuracy are those of :mod:`calibr._kernels.scalar_sums`: the
gap factors are computed with the same operations (``vexp(-(b - a) / h)``), and
with unit weights :func:`weighted_pair_sum` performs the same floating-point
operations as its pair sum.

**The asymptotic SKCE test's bootstrap** (:func:`skce_test_replicates`). With
resampling counts ``C_i`` (``sum_i C_i = n``), the bootstrap statistic is
``T' = n^-2 sum_i C_i sum_j ((n/(n-1)) (C_j - delta_ij) - 2) h_ij``
(``docs/calibration_tests.md``), that is

    ``T' = n^-2 [ (n/(n-1)) (2 W + D2 - D1) - 2 sum_i C_i r_i ]``

with the weights ``w = C`` and the row sums ``r_i = sum_j h_ij`` of the
original sample (:func:`weighted_row_sums` with unit weights, once).

**Canonical form** (:func:`canonical_quadratic_forms`): the kernel of the
probability vectors does not factorise along any order, so the matrix
``H = (h_ij)`` is computed in blocks of rows (O(n^2 K) time, O(block * n)
memory, never n x n) and multiplied at once by the weight vectors of many
replicates: O(n^2) per replicate after the O(n^2 K) kernel evaluations.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .vexp import vexp

__all__ = [
    "canonical_quadratic_forms",
    "gap_factors",
    "skce_test_replicates",
    "sorted_scalars",
    "pair_sum_of_counts",
    "weighted_pair_sum",
    "weighted_row_sums",
]

#: Rows of the canonical kernel matrix computed together (a block of
#: ``CANONICAL_BLOCK * n`` float64 values, a few of them alive at once).
CANONICAL_BLOCK = 256


def sorted_scalars(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, x[order], c[order] - x[order])``: the rows sorted by ``x``
    (stable), and the residuals ``e = c - x`` in that order.

    ``x``: float64 in [0, 1]; ``c``: 0/1 values. ``order[i]`` is the original
    row at sorted position ``i``.
    """
    order = np.argsort(x, kind="stable")
    xs = np.ascontiguousarray(x[order], dtype=np.float64)
    es = np.asarray(c[order], dtype=np.float64) - xs
    return order, xs, es


@jit()
def gap_factors(xs, h):  # pragma: no cover - compiled
    """``g_i = exp(-(xs[i+1] - xs[i]) / h)`` for sorted ``xs``: n - 1 factors in
    [0, 1], computed as :mod:`calibr._kernels.scalar_sums` computes them."""
    n = xs.shape[0]
    g = np.empty(max(n - 1, 0))
    for i in range(n - 1):
        g[i] = vexp(-(xs[i + 1] - xs[i]) / h)
    return g


@jit(nogil=True, inline="always")
def _weight(w, carry, base, carried, j):  # pragma: no cover - compiled
    """Row j's weight as a float: ``w[j]``, plus ``base * carry[j]`` when ``carried``."""
    wj = float(w[j])
    if carried:
        wj += float(base * carry[j])
    return wj


@jit(nogil=True, inline="always")
def pair_sum_of_counts(e, w, carry, base, carried, order, g):  # pragma: no cover - compiled
    """:func:`weighted_pair_sum` with the weights ``w[j] + base * carry[j]``, the
    carry read only when ``carried`` (a bootstrap replicate's resampling counts,
    kept in uint8 with the rare multiples of ``base`` in an int32 carry:
    ``calibr._kernels.bootstrap``). The weights enter as the exact floats of
    those integers, so the sums are those of :func:`weighted_pair_sum` on the
    counts."""
    n = e.shape[0]
    s = 0.0
    total = 0.0
    d1 = 0.0
    d2 = 0.0
    if n == 0:
        return total, d1, d2
    we_next = _weight(w, carry, base, carried, order[n - 1]) * e[n - 1]
    d1 += we_next * e[n - 1]
    d2 += we_next * we_next
    for i in range(n - 2, -1, -1):
        we = _weight(w, carry, base, carried, order[i]) * e[i]
        s = g[i] * (we_next + s)
        total += we * s
        d1 += we * e[i]
        d2 += we * we
        we_next = we
    return total, d1, d2


@jit(nogil=True)
def weighted_pair_sum(e, w, order, g):  # pragma: no cover - compiled
    """``(W, D1, D2)``: ``W = sum_{i<j} w_i w_j e_i e_j k_ij``,
    ``D1 = sum_i w_i e_i^2``, ``D2 = sum_i w_i^2 e_i^2``, for residuals ``e``
    sorted by x with gap factors ``g`` (:func:`gap_factors`) and weights ``w``
    in the original row order, read through the sort (``w[order[i]]`` at
    sorted position i: a bootstrap replicate's resampling counts need no
    gathered copy). Any numeric dtype of ``w``. O(n)."""
    return pair_sum_of_counts(e, w, w, 0, False, order, g)


@jit()
def weighted_row_sums(e, w, g):  # pragma: no cover - compiled
    """``r_i = e_i sum_j w_j e_j k_ij`` (all j, i included) for rows sorted by
    x with gap factors ``g``: one pass down and one up, O(n)."""
    n = e.shape[0]
    r = np.empty(n)
    s = 0.0  # sum_{j>i} w_j e_j k_ij
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            s = g[i] * (w[i + 1] * e[i + 1] + s)
        r[i] = s
    s = 0.0  # sum_{j<i} w_j e_j k_ij
    for i in range(n):
        if i > 0:
            s = g[i - 1] * (w[i - 1] * e[i - 1] + s)
        r[i] = e[i] * (w[i] * e[i] + r[i] + s)
    return r


@jit(nogil=True)
def skce_test_replicates(u, order, e, g, r, alpha):  # pragma: no cover - compiled
    """The asymptotic SKCE test's bootstrap statistic for each row of ``u``.

    ``u``: (B, n) uniform numbers in [0, 1), one replicate per row, whose
    resampled rows (original order) are ``floor(n * u)``; for each of the
    ``K`` scalar kernels (one for the binary and confidence forms, one per
    column for the classwise form), ``order[k]`` sorts the rows by its x,
    ``e[k]`` are the residuals, ``g[k]`` the gap factors and ``r[k]`` the row
    sums of the original sample, all in that sorted order. ``alpha = n/(n-1)``.
    Returns the B values of ``T'``, each the mean over the K kernels
    (the classwise SKCE is the mean of the per-column ones). O(B n K).
    """
    nrep, n = u.shape
    nk = order.shape[0]
    counts = np.zeros(n)
    out = np.empty(nrep)
    fn = float(n)
    scale = 1.0 / (fn * fn)
    for b in range(nrep):
        counts[:] = 0.0
        for t in range(n):
            counts[min(int(fn * u[b, t]), n - 1)] += 1.0
        total = 0.0
        for k in range(nk):
            pair, d1, d2 = weighted_pair_sum(e[k], counts, order[k], g[k])
            lin = 0.0
            for i in range(n):
                lin += counts[order[k, i]] * r[k, i]
            total += (alpha * (2.0 * pair + d2 - d1) - 2.0 * lin) * scale
        out[b] = total / nk
    return out


def canonical_quadratic_forms(
    p: np.ndarray, e: np.ndarray, h: float, weights: np.ndarray, block: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(Q, r)`` for the canonical kernel ``h_ij = exp(-||p_i - p_j|| / h) <e_i, e_j>``:

    * ``Q[b] = sum_{i,j} weights[b, i] weights[b, j] h_ij`` for each row of
      ``weights`` (B, n), the diagonal included;
    * ``r[i] = sum_j h_ij``, the row sums.

    The matrix is computed in blocks of ``block`` rows (distances summed in
    column order, as R's ``dist()``), never whole: O(n^2 (K + B)) time,
    O(block * (n + B)) memory besides ``weights``.
    """
    block = CANONICAL_BLOCK if block is None else block
    n, K = p.shape
    nrep = weights.shape[0]
    q = np.zeros(nrep)
    r = np.empty(n)
    wt = np.ascontiguousarray(weights.T)  # (n, B)
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        d2 = np.zeros((i1 - i0, n))
        for k in range(K):
            diff = p[i0:i1, k, None] - p[None, :, k]
            d2 += diff * diff
        hb = np.exp(-np.sqrt(d2) / h)
        hb *= e[i0:i1] @ e.T
        r[i0:i1] = hb.sum(axis=1)
        q += np.einsum("ib,ib->b", wt[i0:i1], hb @ wt)
    return q, r
