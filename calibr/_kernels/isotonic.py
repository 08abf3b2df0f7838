"""Isotonic regression by the pool-adjacent-violators algorithm (PAV), ties pooled:
the reliability curve of the CORP decomposition and of ``binning="isotonic"``
(``docs/definitions.md``, "Score decompositions").

:func:`pav_blocks` takes the values sorted (the caller sorts: one
``numpy.argsort``, O(n log n), and gathers the rows in that order) and makes
one O(n) pass: each run of equal values is one group (ties pooled: tied values
get one fitted value, the secondary approach of de Leeuw 1977, as in
Dimitriadis, Gneiting & Jordan 2021), pushed onto a stack of blocks; while the
block below has a mean outcome at least the top's, the two are merged (each
merge removes a block, so there are at most n - 1). The blocks left are the
maximal runs of groups with one fitted value, strictly increasing from block
to block.

The comparison of two means ``S_a / W_a >= S_b / W_b`` is made as
``S_a W_b >= S_b W_a`` (positive totals). With unit weights and 0/1 outcomes
both sides are integers below n**2, exact while n < 94 million, so that the
blocks of unweighted data are those of exact arithmetic (equal means are pooled,
not left side by side by a rounding).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["pav_blocks"]


@jit(nogil=True)
def pav_blocks(x, c, w):  # pragma: no cover - compiled
    """The PAV blocks of the outcomes ``c`` against the sorted values ``x``.

    Parameters (float64 arrays, C-contiguous)
    ----------
    x : (n,) float64
        The values (predictions), nondecreasing.
    c : (n,) float64
        The outcomes of the same rows (0/1 for calibr; any real numbers for the
        algorithm).
    w : (n,) or (0,) float64
        Positive weights of the same rows, or an empty array for unit weights.

    Returns
    -------
    stop : (B,) int64
        The end (exclusive) of each block among the positions; block b holds the
        positions ``stop[b - 1]`` (0 for b = 0) to ``stop[b] - 1``.
    weight, hits, conf : (B,) float64
        Each block's total weight, sum of ``w c`` and sum of ``w x``.
    lowest, highest : (B,) float64
        The smallest and the largest value ``x`` of each block.
    """
    n = x.shape[0]
    unit = w.shape[0] == 0
    stop = np.empty(n, np.int64)
    weight = np.empty(n)
    hits = np.empty(n)
    conf = np.empty(n)
    lowest = np.empty(n)
    top = -1
    i = 0
    while i < n:
        v = x[i]
        gw = 0.0
        gc = 0.0
        j = i
        while j < n and x[j] == v:  # the group of values equal to v
            wj = 1.0 if unit else w[j]
            gw += wj
            gc += wj * c[j]
            j += 1
        top += 1
        stop[top] = j
        weight[top] = gw
        hits[top] = gc
        conf[top] = gw * v
        lowest[top] = v
        # pool while the block below does not have a smaller mean outcome
        while top > 0 and hits[top - 1] * weight[top] >= hits[top] * weight[top - 1]:
            weight[top - 1] += weight[top]
            hits[top - 1] += hits[top]
            conf[top - 1] += conf[top]
            stop[top - 1] = stop[top]
            top -= 1
        i = j
    m = top + 1
    highest = np.empty(m)
    for b in range(m):
        highest[b] = x[stop[b] - 1]
    return (stop[:m].copy(), weight[:m].copy(), hits[:m].copy(), conf[:m].copy(),
            lowest[:m].copy(), highest)
