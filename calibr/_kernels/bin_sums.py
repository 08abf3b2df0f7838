"""Per-bin sums over any breaks, compiled: the bins of ``calibr._binning.bin_index``
(``numpy.searchsorted`` of each value among the breaks, clipped to the bins)
and the sums of ``calibr._binning.bin_sums`` (``numpy.bincount``: each bin's
values added in row order from 0.0), bit for bit, in one pass over the rows
(``docs/definitions.md``, "Binning options").

numpy's two steps cost a binary search per value with numpy's per-value
overhead, an index array of n int64, and three ``bincount`` passes; here a
lookup table of the breaks over ``[0, 1]`` starts each value's search in its
cell (equal-width breaks: the right bin at once), a short binary search inside
the cell and a check of the neighbours give the count ``numpy.searchsorted``
gives, and the three sums are added as the row is read.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["bin_sums"]

#: At most this many cells in the lookup table (equal-mass breaks crowded into
#: one cell are found by the binary search inside it).
_MAX_CELLS = 1 << 16


@jit(nogil=True, inline="always")
def _below(b, v, right):  # pragma: no cover - compiled
    """Whether break ``b`` counts below the value ``v``: ``b < v`` for
    ``searchsorted(side="left")`` (right-closed bins), ``b <= v`` for ``"right"``."""
    return b < v if right else b <= v


@jit(nogil=True, inline="always")
def _rows(x, c, w, breaks, lut, cells, right, weighted, counts, count, conf,
          hit):  # pragma: no cover - compiled
    """Add each row into its bin (``breaks`` padded with an infinite break).
    Inlined with ``right`` and ``weighted`` as constants (one copy of the loop
    each, without a test per row)."""
    nb = breaks.shape[0] - 2
    for i in range(x.shape[0]):
        v = x[i]
        if v != v:  # NaN sorts after every break
            g = nb + 1
        else:
            if not v > 0.0:
                t = 0
            elif v >= 1.0:
                t = cells - 1
            else:
                t = min(int(v * cells), cells - 1)
            g = lut[t]
            hi = lut[t + 1]
            if hi - g <= 1:  # at most one break in the cell (equal-width): no branch
                g += np.int64(_below(breaks[g], v, right))
            else:
                while g < hi:  # the first break of the cell not below v
                    mid = (g + hi) // 2
                    if _below(breaks[mid], v, right):
                        g = mid + 1
                    else:
                        hi = mid
            while g > 0 and not _below(breaks[g - 1], v, right):  # a rounded cell edge
                g -= 1
            while _below(breaks[g], v, right):
                g += 1
        j = min(max(g - 1, 0), nb - 1)
        if weighted:
            wi = w[i]
            count[j] += wi
            conf[j] += wi * v
            hit[j] += wi * c[i]
        else:
            counts[j] += 1
            conf[j] += v
            hit[j] += c[i]


@jit(nogil=True)
def bin_sums(x, c, w, breaks, right):  # pragma: no cover - compiled
    """Per-bin ``(count, sum of x, sum of c)`` (weighted: of ``w``, ``w x``,
    ``w c``) of the values ``x`` among ``breaks``.

    Parameters
    ----------
    x, c : (n,) float64
        The values and their outcomes (0/1 as floats).
    w : (n,) or (0,) float64
        The weights, or an empty array for none.
    breaks : (B + 1,) float64
        Nondecreasing breaks.
    right : bool
        Bin ``j`` holds ``breaks[j] < v <= breaks[j + 1]`` (the first bin also
        its lower break), else ``breaks[j] <= v < breaks[j + 1]``: ``j`` is
        ``searchsorted(breaks, v, "left" if right else "right") - 1`` clipped to
        ``[0, B - 1]``, as ``calibr._binning.bin_index``.

    Returns
    -------
    count, conf, hit : (B,) float64
        Counts (exact) or sums of weights, and the sums, each bin's in row order.
    """
    nb = breaks.shape[0] - 1
    cells = min(2 * nb + 2, _MAX_CELLS)
    padded = np.empty(nb + 2)  # an infinite break after the last: a search stops there
    padded[:nb + 1] = breaks
    padded[nb + 1] = np.inf
    # lut[t]: the breaks below t / cells (a start for the values of cell t)
    lut = np.empty(cells + 1, np.int64)
    g = 0
    for t in range(cells + 1):
        edge = t / cells
        while g <= nb and _below(breaks[g], edge, right):
            g += 1
        lut[t] = g
    counts = np.zeros(nb, np.int64)
    count = np.zeros(nb)
    conf = np.zeros(nb)
    hit = np.zeros(nb)
    if w.shape[0] > 0:
        if right:
            _rows(x, c, w, padded, lut, cells, True, True, counts, count, conf, hit)
        else:
            _rows(x, c, w, padded, lut, cells, False, True, counts, count, conf, hit)
        return count, conf, hit
    if right:
        _rows(x, c, w, padded, lut, cells, True, False, counts, count, conf, hit)
    else:
        _rows(x, c, w, padded, lut, cells, False, False, counts, count, conf, hit)
    for j in range(nb):
        count[j] = float(counts[j])
    return count, conf, hit
