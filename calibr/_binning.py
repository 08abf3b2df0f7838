"""Bins of the binned metrics beyond R's default: the breaks from the options and
the data, the bin of each value, and the per-bin sums (``docs/definitions.md``,
"Binning options").

The internal API (used by ``ece()``, ``mce()``, ``calibration_table()`` and the
plots; meant for any other binned estimator, e.g. a debiased L2 / Lp error):

* :func:`breaks` ``(x, bins, binning, right, weights=None) -> ndarray``: the
  sorted breaks ``b_0 = 0 <= b_1 <= ... <= b_B = 1`` of one column of values;
* :func:`bin_index` ``(x, breaks, right) -> ndarray``: the 0-based bin of each
  value (int64, the shape of ``x``);
* :func:`bin_sums` ``(j, x, c, w, nbins)``: per-bin ``(count, sum_x, sum_c)``;
* :func:`is_default` ``(bins, binning, right)``: whether the options are R's
  (equal-width, right-closed, a number of bins), which the compiled kernels of
  ``calibr._kernels.binned`` serve bit for bit as before;
* :func:`stats` ``(p, y, w, binary, bins, type, binning, right)``: the per-bin
  statistics of a form and its breaks, for validated input;
  :func:`column_breaks` ``(edges, col)`` the breaks of one column of them.

R's default is never computed here: its kernels are untouched. Everything here is
vectorised numpy (one ``searchsorted`` per value, then ``numpy.bincount``), also
with weights.
"""

from __future__ import annotations

import numpy as np

from ._input import InputError, check_bin_cells
from ._kernels.binned import breaks as _linspace_breaks
from ._kernels.top_label import top_label

__all__ = ["BINNINGS", "bin_index", "bin_sums", "breaks", "column_breaks", "equal_mass_breaks",
           "is_default", "stats"]

#: The choices of ``binning``, R's (equal-width) first.
BINNINGS = ("equal-width", "equal-mass")


def is_default(bins: int | np.ndarray, binning: str, right: bool) -> bool:
    """True for R's bins: a number of equal-width bins, closed on the right."""
    return isinstance(bins, int) and binning == "equal-width" and right is True


def _cut_points(xs: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The midpoints ``(xs[s - 1] + xs[s]) / 2`` at the first rank ``s`` of each
    group but the first (``xs`` sorted)."""
    return (xs[starts - 1] + xs[starts]) / 2.0


def _group_starts(n: int, bins: int) -> np.ndarray:
    """The first rank of groups 2..B of ``numpy.array_split(range(n), bins)``: the first
    ``n % bins`` groups have ``n // bins + 1`` members, the others ``n // bins``."""
    q, r = divmod(n, bins)
    i = np.arange(1, bins, dtype=np.int64)
    return i * q + np.minimum(i, r)


def equal_mass_breaks(x: np.ndarray, bins: int, right: bool = True,
                      weights: np.ndarray | None = None) -> np.ndarray:
    """Equal-mass breaks of the values ``x`` (1-d, in [0, 1]): the rule of
    uncertainty-calibration's ``get_equal_bins`` (Kumar, Liang & Ma 2019).

    Sort the n values; split them into ``B = min(bins, n)`` groups of nearly
    equal size, as ``numpy.array_split`` does (the first ``n % B`` groups one
    larger); put a cut point at the midpoint ``(a + b) / 2`` between the last
    value ``a`` of each group and the first value ``b`` of the next. Closed on
    the right (``right=True``), the breaks are 0 followed by the distinct cut
    points and 1 (a cut point equal to 1 merges with it); closed on the left,
    0 and the distinct cut points (a cut point equal to 0 merges with it)
    followed by 1. Ties: a value equal to a cut point belongs to the bin the
    closure gives it (the lower bin for ``right=True``, as ``bisect_left``),
    so tied values are never split between two bins; a group's worth of values
    tied at 0 (right-closed) or 1 (left-closed) makes a bin ``[0, 0]`` or
    ``[1, 1]`` of its own.

    With whole-number ``weights`` the groups are those of the sample in which
    each value is repeated ``w`` times (``n = sum w``), without repeating it.
    Real, non-whole weights have no repeated sample and are refused.

    One ``numpy.sort`` (a vectorised sort, faster than ``numpy.partition`` at
    the 2 (B - 1) ranks needed; see ``docs/definitions.md``).
    """
    if weights is None:
        xs = np.sort(x)
        n = xs.shape[0]
        b = min(bins, n)
        cuts = _cut_points(xs, _group_starts(n, b))
    else:
        if not np.all(weights == np.floor(weights)):
            raise InputError(
                '`weights` must be whole numbers for binning = "equal-mass": its groups '
                "are those of the sample with each row repeated w times, which a "
                "fractional weight does not define.",
                param="weights"
            )
        total = float(np.sum(weights))
        if total >= 2.0**53:
            raise InputError(
                '`weights` must total less than 2**53 for binning = "equal-mass" (so '
                f"that the ranks are exact); got {total:g}.",
                param="weights"
            )
        order = np.argsort(x, kind="stable")
        xs = x[order]
        cum = np.cumsum(weights[order])  # exact: whole numbers below 2**53
        n = int(total)
        b = min(bins, n)
        s = _group_starts(n, b)
        # the value at rank r (0-based) of the repeated sample
        last = xs[np.searchsorted(cum, s - 1, side="right")]
        first = xs[np.searchsorted(cum, s, side="right")]
        cuts = (last + first) / 2.0
    if right:
        return np.concatenate(([0.0], np.unique(np.append(cuts, 1.0))))
    return np.append(np.unique(np.append(0.0, cuts)), 1.0)


def breaks(x: np.ndarray | None, bins: int | np.ndarray, binning: str = "equal-width",
           right: bool = True, weights: np.ndarray | None = None) -> np.ndarray:
    """The breaks of one column of values ``x`` (1-d float64 in [0, 1]).

    Parameters
    ----------
    x : ndarray or None
        The values to bin (only ``"equal-mass"`` reads them).
    bins : int or ndarray
        A number of bins, or the breaks themselves (checked by
        ``calibr._input.BIN_SPEC``: float64, strictly increasing, 0 to 1),
        returned as they are.
    binning : {"equal-width", "equal-mass"}
        ``"equal-width"``: R's ``seq(0, 1, length.out = bins + 1)``
        (``numpy.linspace``); ``"equal-mass"``: :func:`equal_mass_breaks`.
    right : bool
        The closure (only ``"equal-mass"`` depends on it, see there).
    weights : ndarray, optional
        Frequency weights (``"equal-mass"`` only).

    Returns
    -------
    ndarray
        ``B + 1`` nondecreasing breaks, the first 0 and the last 1.
    """
    if not isinstance(bins, int):
        return bins
    if binning == "equal-width":
        return _linspace_breaks(bins)
    return equal_mass_breaks(x, bins, right, weights)


def bin_index(x: np.ndarray, breaks: np.ndarray, right: bool = True) -> np.ndarray:
    """The 0-based bin of each value of ``x`` (any shape) among ``breaks``.

    ``right=True`` (R's ``cut(right = TRUE, include.lowest = TRUE)``): bin ``b``
    holds ``breaks[b] < v <= breaks[b + 1]``, and 0 is in the first bin.
    ``right=False``: bin ``b`` holds ``breaks[b] <= v < breaks[b + 1]``, and 1
    is in the last bin (``numpy.histogram``). With a zero-width bin (equal
    breaks, from ``"equal-mass"``) the value on it belongs to it.
    """
    last = breaks.shape[0] - 2
    if right:
        j = np.searchsorted(breaks, x, side="left") - 1
    else:
        j = np.searchsorted(breaks, x, side="right") - 1
    return np.clip(j, 0, last)


def bin_sums(j: np.ndarray, x: np.ndarray, c: np.ndarray, w: np.ndarray | None,
             nbins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin ``(count, sum of x, sum of c)`` (weighted: of ``w``, ``w x``, ``w c``)
    of the values with bin ``j``, by ``numpy.bincount`` (row order)."""
    c = np.asarray(c, dtype=np.float64)
    if w is None:
        count = np.bincount(j, minlength=nbins).astype(np.float64)
        return count, np.bincount(j, weights=x, minlength=nbins), np.bincount(
            j, weights=c, minlength=nbins)
    return (np.bincount(j, weights=w, minlength=nbins),
            np.bincount(j, weights=w * x, minlength=nbins),
            np.bincount(j, weights=w * c, minlength=nbins))


def column_breaks(edges: np.ndarray, col: int) -> np.ndarray:
    """The breaks of column ``col`` of :func:`stats`' breaks (the same 1-d breaks for
    every column, or a row of the padded 2-d breaks of classwise equal-mass bins)."""
    if edges.ndim == 1:
        return edges
    row = edges[col]
    return row[~np.isnan(row)]


def stats(p: np.ndarray, y: np.ndarray, w: np.ndarray | None, binary: bool,
          bins: int | np.ndarray, type: str, binning: str, right: bool):
    """Per-bin ``(count, sum_conf, sum_hit)`` and the breaks, for validated input.

    Shapes as ``calibr._kernels.binned.bin_stats`` (``(K, B)`` for a classwise
    matrix), and the breaks ``(B + 1,)``, or ``(K, B + 1)`` for classwise
    equal-mass bins (each column its own breaks; a column with fewer distinct
    cut points is padded with empty bins at the end, whose breaks are NaN:
    :func:`column_breaks` drops them).
    """
    if binary or type == "confidence":
        if binary:
            x, c = p, y
        else:
            x, c = top_label(p, y)
        edges = breaks(x, bins, binning, right, w)
        nb = edges.shape[0] - 1
        return (*bin_sums(bin_index(x, edges, right), x, c, w, nb), edges)
    n, k = p.shape
    if binning == "equal-width" or not isinstance(bins, int):
        edges = breaks(None, bins, "equal-width", right)
        nb = edges.shape[0] - 1
        check_bin_cells(nb, k, True)
        cells = bin_index(p, edges, right) + np.arange(k) * nb  # class k's bins at k * nb
        if w is None:
            count = np.bincount(cells.ravel(), minlength=k * nb).astype(np.float64)
            conf = np.bincount(cells.ravel(), weights=p.ravel(), minlength=k * nb)
            hit = np.bincount(cells[np.arange(n), y], minlength=k * nb).astype(np.float64)
        else:
            count = np.bincount(cells.ravel(), weights=np.repeat(w, k), minlength=k * nb)
            conf = np.bincount(cells.ravel(), weights=(w[:, None] * p).ravel(),
                               minlength=k * nb)
            hit = np.bincount(cells[np.arange(n), y], weights=w, minlength=k * nb)
        return count.reshape(k, nb), conf.reshape(k, nb), hit.reshape(k, nb), edges
    # classwise, equal-mass: each column its own breaks
    cols = []
    for col in range(k):
        x = np.ascontiguousarray(p[:, col])
        edges = breaks(x, bins, binning, right, w)
        j = bin_index(x, edges, right)
        cols.append((*bin_sums(j, x, y == col, w, edges.shape[0] - 1), edges))
    nb = max(e.shape[0] - 1 for *_, e in cols)
    out = np.zeros((3, k, nb))
    edges = np.full((k, nb + 1), np.nan)
    for col, (count, conf, hit, e) in enumerate(cols):
        m = e.shape[0] - 1
        out[0, col, :m], out[1, col, :m], out[2, col, :m] = count, conf, hit
        edges[col, :m + 1] = e
    return out[0], out[1], out[2], edges
