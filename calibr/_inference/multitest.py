"""``p_adjust()``: p-values adjusted for multiple comparisons, R's ``p.adjust``
(``docs/definitions.md``, "Multiple comparisons: `p_adjust()`").

Each method is one function of the sorted p-values (a table, as R's ``switch``),
with R's arithmetic in R's order, so that the numbers are R's to the last bits
or within a few ulps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._input import (
    InputError,
    Integer,
    Optional,
    Options,
    as_float_array,
    fmt,
    real_value,
    validate_params,
)

__all__ = ["P_ADJUST_METHODS", "p_adjust"]

#: R's ``p.adjust.methods``, in R's order ("holm" is the default); "fdr" is "BH".
P_ADJUST_METHODS = ("holm", "hochberg", "hommel", "bonferroni", "BH", "BY", "fdr", "none")


def _bonferroni(p: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(1.0, n * p)


def _holm(p: np.ndarray, n: int) -> np.ndarray:
    # R: i <- seq_len(lp); o <- order(p); pmin(1, cummax((n + 1L - i) * p[o]))[ro]
    o = np.argsort(p, kind="stable")
    i = np.arange(1, p.shape[0] + 1)
    out = np.empty_like(p)
    out[o] = np.minimum(1.0, np.maximum.accumulate((n + 1 - i) * p[o]))
    return out


def _decreasing(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R's ``o <- order(p, decreasing = TRUE)`` (stable) and ``i <- lp:1``."""
    o = np.argsort(-p, kind="stable")
    return o, np.arange(p.shape[0], 0, -1)


def _hochberg(p: np.ndarray, n: int) -> np.ndarray:
    # R: pmin(1, cummin((n + 1L - i) * p[o]))[ro]
    o, i = _decreasing(p)
    out = np.empty_like(p)
    out[o] = np.minimum(1.0, np.minimum.accumulate((n + 1 - i) * p[o]))
    return out


def _bh(p: np.ndarray, n: int) -> np.ndarray:
    # R: pmin(1, cummin(n/i * p[o]))[ro]
    o, i = _decreasing(p)
    out = np.empty_like(p)
    out[o] = np.minimum(1.0, np.minimum.accumulate(n / i * p[o]))
    return out


def _harmonic(n: int, chunk: int = 1 << 22) -> float:
    """R's ``sum(1/(1L:n))``, summed in chunks so that memory stays bounded for an
    ``n`` up to R's largest integer."""
    return math.fsum(float(np.sum(1.0 / np.arange(start, min(start + chunk, n + 1),
                                                  dtype=np.float64)))
                     for start in range(1, n + 1, chunk))


def _by(p: np.ndarray, n: int) -> np.ndarray:
    # R: q <- sum(1/(1L:n)); pmin(1, cummin(q * n/i * p[o]))[ro]
    o, i = _decreasing(p)
    q = _harmonic(n)
    out = np.empty_like(p)
    out[o] = np.minimum(1.0, np.minimum.accumulate(q * n / i * p[o]))
    return out


def _hommel(p: np.ndarray, n: int) -> np.ndarray:
    """R's ``hommel`` branch, transcribed (O(n^2) time, O(n) memory)."""
    lp = p.shape[0]
    if n == 2:  # R: if (n == 2 && method == "hommel") method <- "hochberg"
        return _hochberg(p, n)
    if n > lp:
        p = np.concatenate([p, np.ones(n - lp)])
    i = np.arange(1, n + 1)
    o = np.argsort(p, kind="stable")
    p = p[o]
    ro = np.argsort(o, kind="stable")
    q = np.full(n, np.min(n * p / i))
    pa = q.copy()
    for m in range(n - 1, 1, -1):
        i1 = slice(0, n - m + 1)  # seq_len(n - m + 1L)
        i2 = slice(n - m + 1, n)  # (n - m + 2L):n, 0-based
        q1 = np.min(m * p[i2] / np.arange(2, m + 1))
        q[i1] = np.minimum(m * p[i1], q1)
        q[i2] = q[n - m]
        pa = np.maximum(pa, q)
    return np.maximum(pa, p)[ro[:lp]]


#: Dispatch by table: one function per method (``"fdr"`` is ``"BH"``).
_METHODS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "holm": _holm,
    "hochberg": _hochberg,
    "hommel": _hommel,
    "bonferroni": _bonferroni,
    "BH": _bh,
    "BY": _by,
    "fdr": _bh,
    "none": lambda p, n: p.copy(),
}


def below_resolution(p: Any, resolution: float | None) -> np.ndarray:
    """Whether each p-value is below the ``resolution`` of its resamples (None: an
    analytic p-value, never): such a p-value is known only as "< resolution", and
    its adjusted value is an upper bound, the adjusted value of the resolution
    (``docs/calibration_tests.md``, "Resolution of a resampled p-value")."""
    p = np.asarray(p, dtype=np.float64)
    if resolution is None:
        return np.zeros(p.shape, dtype=bool)
    return p < resolution  # NaN is not


def adjust_array(p: np.ndarray, method: str, n: int | None = None,
                 resolution: float | None = None) -> np.ndarray:
    """:func:`p_adjust` of a checked 1-d float64 array (NaN kept out of ``n``): a
    p-value below ``resolution`` counts as the resolution."""
    if resolution is not None:
        p = np.where(below_resolution(p, resolution), resolution, p)
    present = ~np.isnan(p)
    kept = p[present]
    lp = kept.shape[0]
    n = lp if n is None else n
    if n < lp:
        raise InputError(f"`n` must be at least the number of non-missing p-values ({lp}); "
                         f"got {n}.", param="n")
    out = p.copy()
    if n <= 1:  # R returns p unchanged
        return out
    out[present] = _METHODS[method](kept, n)
    return out


def _resolution(value: Any, name: str) -> float:
    """A resolution: a real number in (0, 1]."""
    real = real_value(value)
    if real is not None and 0.0 < real <= 1.0:
        return real
    raise InputError(f"`{name}` must be a number in (0, 1], the smallest step of the "
                     f"resampled p-values (1 / n_resamples); got {fmt(value)}.", param=name)


#: ``n`` is an integer as in R (``.Machine$integer.max``): a count of comparisons beyond
#: it is refused, not overflowed in the float arithmetic of the methods.
R_MAX_INTEGER = 2**31 - 1


@validate_params(method=Options(*P_ADJUST_METHODS), n=Optional(Integer(1, R_MAX_INTEGER)),
                 resolution=Optional(_resolution))
def p_adjust(p: Any, method: str = "holm", *, n: int | None = None,
             resolution: float | None = None) -> Any:
    """Adjust p-values for multiple comparisons (R's ``p.adjust``).

    Parameters
    ----------
    p : array-like or pandas Series
        The p-values, a 1-d sequence of numbers in [0, 1]; NaN (or None,
        ``pd.NA``) marks a missing one, which stays missing and does not count
        in ``n`` (as in R).
    method : {"holm", "hochberg", "hommel", "bonferroni", "BH", "BY", "fdr", "none"}, \
default "holm"
        R's names (``p.adjust.methods``), case-sensitive: Holm (1979),
        Hochberg (1988), Hommel (1988), Bonferroni, Benjamini & Hochberg (1995)
        (``"BH"``, and its alias ``"fdr"``), Benjamini & Yekutieli (2001)
        (``"BY"``), and ``"none"``. The first four control the family-wise
        error rate, ``"BH"`` and ``"BY"`` the false discovery rate.
    n : int, optional, keyword-only
        The number of comparisons (R's ``n``), at least the number of
        non-missing p-values and at most 2,147,483,647 (R's largest integer);
        default that number.
    resolution : float, optional, keyword-only
        For p-values from resampling: the smallest step they can take,
        ``1 / n_resamples`` for calibr's (a share of ``n_resamples``
        resamples), in (0, 1]. A p-value below it (0 of calibr's) is known
        only as "< resolution", so it is adjusted as the resolution itself,
        and its adjusted value is an upper bound: the adjusted value of
        ``resolution`` (see Notes). Default None: the p-values are exact
        (analytic), adjusted as they are.

    Returns
    -------
    numpy.ndarray or pandas.Series
        The adjusted p-values (float64) in the order of ``p``; a Series (same
        index and name) for a Series ``p``.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for an unknown ``method``, p-values outside
        [0, 1] or infinite, ``n`` smaller than the number of p-values or
        larger than R's largest integer.
    TypeError
        (``calibr.InputTypeError``) for non-numeric ``p``.

    Notes
    -----
    With the ``m`` non-missing p-values sorted, ``p_(1) <= ... <= p_(m)``, and
    ``n`` comparisons (``docs/definitions.md``, "Multiple comparisons"):
    Bonferroni ``min(1, n p)``; Holm ``min(1, max_{j <= i} (n - j + 1) p_(j))``;
    Hochberg ``min(1, min_{j >= i} (n - j + 1) p_(j))``; BH
    ``min(1, min_{j >= i} n / j p_(j))``; BY as BH times ``sum_{k=1}^n 1/k``;
    Hommel as R computes it. Checked against R's ``p.adjust`` (rpy2) and
    statsmodels' ``multipletests``.

    With ``resolution`` r the result is R's ``p.adjust(pmax(p, r), method)``.
    Every method is nondecreasing in each p-value, so for a p-value below r
    the true adjusted value is at most the one returned (an upper bound, shown
    "< value" by calibr's reports), and for the others the one returned is
    conservative (``docs/calibration_tests.md``, "Resolution of a resampled
    p-value"). Without it, 60 groups whose resampled p-value is 0 would be
    adjusted to 0, a resolution that 1,000 resamples do not have: with
    ``resolution=0.001`` Holm gives 0.06 for the first of them.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    Scandinavian Journal of Statistics 6, 65-70. Benjamini, Y., & Hochberg, Y.
    (1995). Controlling the false discovery rate. JRSS B 57, 289-300.

    Examples
    --------
    >>> import calibr
    >>> calibr.p_adjust([0.01, 0.04, 0.03], "holm").round(12)
    array([0.03, 0.06, 0.06])
    >>> calibr.p_adjust([0.01, 0.04, 0.03], "BH").round(12)
    array([0.03, 0.04, 0.04])
    >>> calibr.p_adjust([0.01, float("nan"), 0.03], "bonferroni")
    array([0.02,  nan, 0.06])

    Resampled p-values from 1,000 resamples, the first 0 ("< 0.001"):

    >>> calibr.p_adjust([0.0, 0.004, 0.2], "holm", resolution=0.001).round(12)
    array([0.003, 0.008, 0.2  ])
    """
    import pandas as pd

    values = as_float_array(p, "p", "a vector of p-values", ndims=(1,))
    finite = np.isnan(values) | ((values >= 0.0) & (values <= 1.0))
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise InputError(
            f"`p` must hold p-values in [0, 1] (or NaN for a missing one); {bad.shape[0]} "
            f"value{'s do' if bad.shape[0] != 1 else ' does'} not, the first at position "
            f"{int(bad[0])} ({fmt(values[bad[0]])}).",
            param="p"
        )
    out = adjust_array(values, method, n, resolution)
    if isinstance(p, pd.Series):
        return pd.Series(out, index=p.index, name=p.name)
    return out
