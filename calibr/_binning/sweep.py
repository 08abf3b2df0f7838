"""Numbers of bins chosen from the data: ``bins="sweep"`` (the monotonic sweep of
Roelofs, Cain, Shlens & Mozer 2022) and ``bins="auto"`` (the cube-root rule)
(``docs/definitions.md``, "Binning options").

:func:`sweep_bins` sorts the values once (with their outcomes packed into the
sort keys when there are no weights, as ``calibr.ecce`` does), keeps running
sums of the weights and outcomes, and hands them to the compiled loop over
``b = 2, 3, ...`` of ``calibr._kernels.sweep``: the rows of a bin are a range of
the sorted values (a binary search of its breaks), so its total and its mean
outcome are differences of the running sums; with exact sums only the bins
around the descents of the distinct values' means are checked. The sweep stops
at the first ``b`` whose mean outcomes are not nondecreasing. :func:`sweep`
also hands its sort to the equal-mass breaks of its number.
``bins="sweep-caltrain"``: the same loop over google-research caltrain's bins
(:func:`caltrain_breaks`), to reproduce its ``em_ece_sweep``/``ew_ece_sweep``
(``docs/definitions.md`` lists where ``"sweep"`` departs from them).
"""

from __future__ import annotations

import math

import numpy as np

from .._input import MAX_BINS, InputError
from .._input.params import BIN_RULES, CALTRAIN
from .._kernels import cumulative as _ck
from .._kernels import sweep as _sk
from .._kernels._jit import read_only
from .equal_mass import check_mass_weights

__all__ = ["BIN_RULES", "CALTRAIN", "caltrain_breaks", "cube_root_bins", "sweep",
           "sweep_bins"]


def cube_root_bins(total: float) -> int:
    """``ceil(total^(1/3))``, at least 1 (exact for whole numbers: the smallest
    ``B`` with ``B^3 >= total``), at most ``MAX_BINS``. The cap comes first, so
    the correcting steps below start within a few units of the answer whatever
    the total (a total of 1e100 would otherwise start them near 2e33, a float's
    cube root off by about 1e17 units)."""
    if not total > 1.0:
        return 1
    if total > float(MAX_BINS) ** 3:  # 1e18, exact in float64
        return MAX_BINS
    b = max(1, int(round(total ** (1.0 / 3.0))))
    while b ** 3 < total:
        b += 1
    while b > 1 and (b - 1) ** 3 >= total:
        b -= 1
    return min(b, MAX_BINS)


def _sorted(x: np.ndarray, hits: np.ndarray, weights: np.ndarray | None):
    """``(xs, cum_w, cum_c)``: the values sorted, and the running sums (a leading 0)
    of the weights (None without weights: the running count) and of the weighted
    outcomes."""
    if weights is None:
        x = np.ascontiguousarray(x, dtype=np.float64)
        keys = np.empty(x.shape[0], dtype=np.uint64)
        _ck.fill_keys(read_only(x), read_only(x.view(np.uint64)),
                      read_only(np.ascontiguousarray(hits)), keys)
        keys.sort()  # p, then the outcome: one integer sort, no argsort
        cum_c = np.empty(x.shape[0] + 1)
        _sk.unpack_keys(read_only(keys), keys, cum_c)  # the values' bits over their keys
        xs = keys.view(np.float64)  # -0.0 sorts as 0.0
        return xs, None, cum_c
    order = np.argsort(x, kind="stable")
    xs = x[order]
    w = weights[order]
    cs = w * (np.asarray(hits)[order] != 0)
    cum_w = np.concatenate(([0.0], np.cumsum(w)))
    cum_c = np.concatenate(([0.0], np.cumsum(cs)))
    return xs, cum_w, cum_c


def _exact(total: float, weights: np.ndarray | None) -> bool:
    """Whether the running sums are exact integers below 2**31 (no weights, or
    whole weights): the products of two of them are then exact in int64."""
    if total >= 2.0**31:
        return False
    return weights is None or bool(np.all(weights == np.floor(weights)))


def sweep(x: np.ndarray, hits: np.ndarray, binning: str, right: bool,
          weights: np.ndarray | None = None, mode: int = _sk.AUTO,
          caltrain: bool = False) -> tuple[int, np.ndarray | None]:
    """:func:`sweep_bins`, and for equal-mass bins the sort it made, for the breaks
    of its number (``calibr._binning.equal_mass.equal_mass_breaks``, ``presorted``): the
    values sorted, when they are ``numpy.sort(x)`` (no weights, whose checks the
    breaks make, and no zero, which could be a -0.0 that the sort keys read as
    0.0); else None. ``caltrain``: the number of caltrain's rule
    (:func:`caltrain_breaks`, no weights; no sort handed on)."""
    if caltrain and weights is not None:
        raise InputError(
            f"`weights` do not apply to bins = '{CALTRAIN}': caltrain's sweep has no "
            "weights. Repeat the rows, or use bins = 'sweep' (whose weights are counts).",
            param="weights"
        )
    if binning == "equal-mass" and weights is not None:
        check_mass_weights(weights)  # before the loop counts the repeated rows in int64
    xs, cum_w, cum_c = _sorted(x, hits, weights)
    n = xs.shape[0]
    total = float(n if cum_w is None else cum_w[-1])
    # caltrain's loop stops at n - 1 bins; calibr's at n (the total weight)
    most = n - 1 if caltrain else (n if weights is None else math.floor(total))
    largest = int(min(MAX_BINS, max(1, most)))
    b = int(_sk.sweep_count(read_only(np.ascontiguousarray(xs)),
                            read_only(np.empty(0) if cum_w is None else cum_w),
                            read_only(cum_c), binning == "equal-mass", bool(right),
                            weights is not None, largest, _exact(total, weights), mode,
                            caltrain))
    if (caltrain or binning != "equal-mass" or weights is not None or n == 0
            or not xs[0] > 0.0):
        return b, None
    return b, xs


def caltrain_breaks(x: np.ndarray, bins: int, binning: str) -> np.ndarray:
    """The breaks of caltrain's ``bins`` bins of the values ``x`` (no weights),
    closed on the left (``right=False``), as its ``ew_monotonic_sweep`` and
    ``em_monotonic_sweep`` bin them (``docs/definitions.md``, "Binning options").

    Equal-width: the bin of ``v`` is ``min(bins - 1, floor(v * bins))`` in
    float64, so the break ``i`` is the smallest double ``v`` with
    ``v * bins >= i`` (``i / bins`` moved by an ulp or two; 0.3 is in bin 3 of
    10 here, in bin 2 of ``numpy.linspace``'s left-closed breaks). Equal-mass:
    the sorted row of rank ``r`` is in group ``min(bins - 1, floor((r / n) *
    bins))``, and each group but the first starts at its first value: a run of
    tied values that a group boundary would split goes wholly to the later
    group (caltrain splits it in the order its unstable sort leaves them).
    Repeated breaks are one.
    """
    if binning == "equal-width":
        i = np.arange(1, bins, dtype=np.float64)
        v = i / bins
        while np.any(low := v * bins < i):  # floor(v b) < i: up one ulp
            v = np.where(low, np.nextafter(v, np.inf), v)
        while np.any(ok := (down := np.nextafter(v, -np.inf)) * bins >= i):
            v = np.where(ok, down, v)  # the one below still in bin i: down one ulp
        inner = v
    else:
        xs = np.sort(x)
        n = xs.shape[0]
        group = np.minimum(bins - 1, np.floor((np.arange(n) / n) * bins))
        inner = xs[np.flatnonzero(np.diff(group)) + 1]
    return np.append(np.unique(np.append(0.0, inner)), 1.0)


def sweep_bins(x: np.ndarray, hits: np.ndarray, binning: str, right: bool,
               weights: np.ndarray | None = None, mode: int = _sk.AUTO,
               caltrain: bool = False) -> int:
    """The number of bins of the monotonic sweep: the largest ``b`` such that the
    bins of every ``b' <= b`` (the breaks of ``calibr._binning.breaks`` with
    ``binning``, equal-width or equal-mass, and ``right``) have nondecreasing
    mean outcomes over their non-empty bins; ``b`` runs from 1 to the number of
    rows (the total weight with weights), at most ``MAX_BINS``.

    If the mean outcomes of the distinct values are already nondecreasing, every
    binning is (a bin's mean lies between those of its first and last values), so
    the sweep ends at the largest ``b`` without checking. ``mode``: how each ``b``
    is checked (``calibr._kernels.sweep``; the same answer each way).
    ``caltrain``: caltrain's rule instead (:func:`caltrain_breaks`, ``b`` up to
    one less than the rows, no weights).
    """
    return sweep(x, hits, binning, right, weights, mode, caltrain)[0]
