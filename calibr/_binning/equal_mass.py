"""Equal-mass breaks (``binning="equal-mass"``; ``docs/definitions.md``, "Binning
options"): the rule of uncertainty-calibration's ``get_equal_bins``.

Its own module, below ``calibr._binning`` (which gives every binning's breaks) and
``calibr._binning.sweep`` (which needs the breaks of many numbers of bins from one sort),
so that neither imports the other; the lazy engines (``calibr._engines``) write
the same ranks, :func:`group_starts`, in their query languages.
"""

from __future__ import annotations

import numpy as np

from .._defaults import RIGHT_DEFAULT
from .._input import InputError

__all__ = ["check_mass_weights", "cut_points", "equal_mass_breaks", "group_starts"]


def check_mass_weights(weights: np.ndarray) -> float:
    """The total of frequency ``weights`` that define equal-mass groups (whole numbers,
    totalling less than 2**53, so that every rank of the repeated sample is exact),
    else an ``InputError`` naming ``weights``. Checked before any rank is read, by
    :func:`equal_mass_breaks` and by the sweep (``calibr._binning.sweep.sweep``), whose
    loop counts the repeated rows in int64."""
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
    return total


def cut_points(xs: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The midpoints ``(xs[s - 1] + xs[s]) / 2`` at the first rank ``s`` of each
    group but the first (``xs`` sorted)."""
    return (xs[starts - 1] + xs[starts]) / 2.0


def group_starts(n: int, bins: int) -> np.ndarray:
    """The first rank of groups 2..B of ``numpy.array_split(range(n), bins)``: the first
    ``n % bins`` groups have ``n // bins + 1`` members, the others ``n // bins``."""
    q, r = divmod(n, bins)
    i = np.arange(1, bins, dtype=np.int64)
    return i * q + np.minimum(i, r)


def equal_mass_breaks(x: np.ndarray | None, bins: int, right: bool = RIGHT_DEFAULT,
                      weights: np.ndarray | None = None,
                      presorted: np.ndarray | None = None) -> np.ndarray:
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
    the 2 (B - 1) ranks needed; see ``docs/definitions.md``). ``presorted``:
    ``numpy.sort(x)`` already made, without weights (``calibr._binning.sweep.sweep``'s
    sort, for the breaks of the number it chose); then ``x`` is not read. With
    weights it is not read: the rows are sorted with their weights here.
    """
    if weights is None:
        xs = np.sort(x) if presorted is None else presorted
        n = xs.shape[0]
        b = min(bins, n)
        cuts = cut_points(xs, group_starts(n, b))
    else:
        total = check_mass_weights(weights)
        order = np.argsort(x, kind="stable")
        xs = x[order]
        cum = np.cumsum(weights[order])  # exact: whole numbers below 2**53
        n = int(total)
        b = min(bins, n)
        s = group_starts(n, b)
        # the value at rank r (0-based) of the repeated sample
        last = xs[np.searchsorted(cum, s - 1, side="right")]
        first = xs[np.searchsorted(cum, s, side="right")]
        cuts = (last + first) / 2.0
    if right:
        return np.concatenate(([0.0], np.unique(np.append(cuts, 1.0))))
    return np.append(np.unique(np.append(0.0, cuts)), 1.0)
