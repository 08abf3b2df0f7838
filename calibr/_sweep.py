"""Numbers of bins chosen from the data: ``bins="sweep"`` (the monotonic sweep of
Roelofs, Cain, Shlens & Mozer 2022) and ``bins="auto"`` (the cube-root rule)
(``docs/definitions.md``, "Binning options").

:func:`sweep_bins` sorts the values once (with their outcomes packed into the
sort keys when there are no weights, as ``calibr.ecce`` does), keeps running
sums of the weights and outcomes, and then checks each number of bins
``b = 2, 3, ...`` from the breaks alone: the rows of a bin are a range of the
sorted values (``searchsorted`` of its breaks), so its total and its mean
outcome are differences of the running sums, O(b log n) per ``b`` instead of
a pass over the n rows. The sweep stops at the first ``b`` whose mean outcomes
are not nondecreasing.
"""

from __future__ import annotations

import math

import numpy as np

from ._equal_mass import equal_mass_breaks
from ._input import MAX_BINS
from ._input.params import BIN_RULES
from ._kernels import binned

__all__ = ["BIN_RULES", "cube_root_bins", "sweep_bins"]


def cube_root_bins(total: float) -> int:
    """``ceil(total^(1/3))``, at least 1 (exact for whole numbers: the smallest
    ``B`` with ``B^3 >= total``), at most ``MAX_BINS``."""
    if not total > 1.0:
        return 1
    b = max(1, int(round(total ** (1.0 / 3.0))))
    while b ** 3 < total:
        b += 1
    while b > 1 and (b - 1) ** 3 >= total:
        b -= 1
    return min(b, MAX_BINS)


def _sorted(x: np.ndarray, hits: np.ndarray, weights: np.ndarray | None):
    """``(xs, cum_w, cum_c)``: the values sorted, and the running sums (a leading 0)
    of the weights (counts without weights) and of the weighted outcomes."""
    if weights is None:
        bits = x.view(np.uint64).copy()
        bits[bits == np.uint64(1) << np.uint64(63)] = 0  # -0.0 sorts as 0.0
        keys = (bits << np.uint64(1)) | (np.asarray(hits) != 0).astype(np.uint64)
        keys.sort()  # p, then the outcome: one integer sort, no argsort
        cs = (keys & np.uint64(1)).astype(np.float64)
        xs = (keys >> np.uint64(1)).view(np.float64)
        cum_w = np.arange(x.shape[0] + 1, dtype=np.float64)
    else:
        order = np.argsort(x, kind="stable")
        xs = x[order]
        w = weights[order]
        cs = w * (np.asarray(hits)[order] != 0)
        cum_w = np.concatenate(([0.0], np.cumsum(w)))
    cum_c = np.concatenate(([0.0], np.cumsum(cs)))
    return xs, cum_w, cum_c


def _monotone(cum_w: np.ndarray, cum_c: np.ndarray, bounds: np.ndarray) -> bool:
    """Whether the mean outcomes of the non-empty bins ``[bounds[i], bounds[i+1])``
    of the sorted rows are nondecreasing."""
    w = cum_w[bounds[1:]] - cum_w[bounds[:-1]]
    c = cum_c[bounds[1:]] - cum_c[bounds[:-1]]
    full = w > 0
    acc = c[full] / w[full]
    return bool(np.all(acc[1:] >= acc[:-1]))


def sweep_bins(x: np.ndarray, hits: np.ndarray, binning: str, right: bool,
               weights: np.ndarray | None = None) -> int:
    """The number of bins of the monotonic sweep: the largest ``b`` such that the
    bins of every ``b' <= b`` (the breaks of ``calibr._binning.breaks`` with
    ``binning``, equal-width or equal-mass, and ``right``) have nondecreasing
    mean outcomes over their non-empty bins; ``b`` runs from 1 to the number of
    rows (the total weight with weights), at most ``MAX_BINS``.

    If the mean outcomes of the distinct values are already nondecreasing, every
    binning is (a bin's mean lies between those of its first and last values), so
    the sweep ends at the largest ``b`` without checking.
    """
    xs, cum_w, cum_c = _sorted(x, hits, weights)
    n = xs.shape[0]
    total = float(cum_w[-1])
    largest = int(min(MAX_BINS, max(1, n if weights is None else math.floor(total))))
    side = "right" if right else "left"
    ends = np.flatnonzero(np.append(xs[1:] != xs[:-1], True)) + 1  # each distinct value
    if _monotone(cum_w, cum_c, np.concatenate(([0], ends))):
        return largest
    best = 1
    for b in range(2, largest + 1):
        edges = (binned.breaks(b) if binning == "equal-width" else
                 equal_mass_breaks(None, b, right, weights, presorted=(xs, cum_w[1:])))
        bounds = np.concatenate(([0], np.searchsorted(xs, edges[1:-1], side=side), [n]))
        if not _monotone(cum_w, cum_c, bounds):
            break
        best = b
    return best
