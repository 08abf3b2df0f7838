"""``ecce()``: the cumulative calibration errors of Arrieta-Ibarra, Gujral, Tannen,
Tygert & Xu (2022), and their p-values (``docs/definitions.md``, "Cumulative
calibration errors: `ecce()`").

A thin public function over :mod:`calibr._kernels.cumulative`. Unweighted
data take one pass that packs each row's ``p`` and ``y`` into a uint64 key, one
in-place ``numpy.sort`` of the keys and one pass over them; weighted data one
``numpy.argsort``. Every sum is made in the sorted order, so a number depends on
the rows and not on their order (and the bootstrap's replicates, from the rows
sorted once, are those of the call on each resample: :func:`sorted_rows`).
:func:`ecce_pvalue` is the one place the p-values of the
sigma-scaled forms are computed (``calibration_test(method="ks" | "kuiper")``
and ``multicalibration()`` call it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._docs import shared_docs
from .._input import FLAG, Options, Prepared, lazy_backend, prepare, validate_params
from .._kernels import cumulative as _ck
from .._kernels._jit import read_only

__all__ = ["KINDS", "EcceStats", "SortedRows", "ecce", "ecce_pvalue",
           "ecce_stats", "sorted_rows"]

#: The choices of ``kind``: the maximum absolute cumulative difference
#: (Kolmogorov-Smirnov, the default) and its range (Kuiper).
KINDS = ("ks", "kuiper")
#: The choices of ``scale``: the scale of ``p``, or that of the standard deviation.
SCALES = ("probability", "sigma")

#: The null tail of each kind's sigma-scaled statistic.
_TAILS = {"ks": _ck.max_abs_sf, "kuiper": _ck.range_sf}


def ecce_pvalue(x: Any, kind: str) -> np.ndarray:
    """The asymptotic p-values of sigma-scaled ECCEs ``x`` (an array): for
    ``kind="ks"`` ``P(max |B| > x)``, for ``"kuiper"`` ``P(max B - min B > x)``,
    ``B`` standard Brownian motion on [0, 1] (``docs/definitions.md``)."""
    xs = np.ascontiguousarray(np.atleast_1d(np.asarray(x, dtype=np.float64)).ravel())
    return _TAILS[kind](read_only(xs))


@dataclass(frozen=True)
class EcceStats:
    """Both kinds of one data set: ``ks`` and ``kuiper`` on the scale of ``p``,
    ``sigma`` (the null standard deviation of ``C_n / W``) and ``n``."""

    ks: float
    kuiper: float
    sigma: float

    def value(self, kind: str, scale: str = "probability") -> float:
        """The ECCE of ``kind``, on the scale of ``p`` or divided by ``sigma``
        (``inf`` for a positive ECCE over a sigma of 0, 0 for 0 over 0)."""
        out = self.ks if kind == "ks" else self.kuiper
        if scale == "probability":
            return out
        if self.sigma == 0.0:
            return float("inf") if out > 0.0 else 0.0
        return out / self.sigma


def ecce_stats(prep: Prepared) -> EcceStats:
    """The ECCE of validated input (``calibr._input.prepare``), both kinds at once."""
    x, c = prep.scalar_view()
    if prep.weights is None:
        x = np.ascontiguousarray(x)
        keys = np.empty(x.shape[0], dtype=np.uint64)
        _ck.fill_keys(read_only(x), read_only(x.view(np.uint64)),
                      read_only(np.ascontiguousarray(c)), keys)
        keys.sort()  # in place: p, then y, in one integer sort
        high, low, variance = _ck.key_extremes(read_only(keys))
        total = float(x.shape[0])
    else:
        order = np.argsort(x)
        xs = np.ascontiguousarray(x[order])
        cs = np.ascontiguousarray(c[order], dtype=np.float64)
        ws = np.ascontiguousarray(prep.weights[order])
        high, low, variance, total = _ck.sorted_extremes(read_only(xs), read_only(cs),
                                                         read_only(ws))
    return EcceStats(ks=max(high, -low) / total, kuiper=(high - low) / total,
                     sigma=float(np.sqrt(variance)) / total)


@dataclass(frozen=True)
class SortedRows:
    """Unweighted rows in the order of ``ecce``'s sorted keys (``p``, then ``y``),
    for the bootstrap's O(n) replicates (``calibr._kernels.bootstrap``).

    Attributes
    ----------
    order : ndarray of int32
        The row of each sorted key.
    steps, terms : ndarray of float64
        What the running sum and the variance add for each sorted key, ``y - p``
        and ``p (1 - p)``.
    ends : ndarray of bool
        Whether each sorted key ends a block of tied ``p``.
    """

    order: np.ndarray
    steps: np.ndarray
    terms: np.ndarray
    ends: np.ndarray


def sorted_rows(x: np.ndarray, c: np.ndarray) -> SortedRows:
    """The :class:`SortedRows` of values ``x`` and 0/1 outcomes ``c`` (one stable
    ``argsort`` of the keys ``ecce_stats`` sorts)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    n = x.shape[0]
    keys = np.empty(n, dtype=np.uint64)
    _ck.fill_keys(read_only(x), read_only(x.view(np.uint64)),
                  read_only(np.ascontiguousarray(c)), keys)
    order = np.argsort(keys, kind="stable")
    steps = np.empty(n)
    terms = np.empty(n)
    ends = np.empty(n, dtype=np.bool_)
    _ck.key_steps(read_only(keys[order]), steps, terms, ends)
    return SortedRows(order=order.astype(np.int32), steps=steps, terms=terms, ends=ends)


@validate_params(kind=Options(*KINDS), scale=Options(*SCALES), type=Options("confidence"),
                 na_rm=FLAG)
@shared_docs
def ecce(
    p: Any,
    y: Any,
    kind: str = "ks",
    *,
    scale: str = "probability",
    type: str = "confidence",
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
) -> float:
    r"""Estimated cumulative calibration error: the largest deviation of the
    cumulative differences between outcomes and predictions, without bins.

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    kind : {"ks", "kuiper"}, default "ks"
        ``"ks"``: the maximum absolute value of the cumulative differences
        (Kolmogorov-Smirnov; Arrieta-Ibarra et al.'s ECCE-MAD); ``"kuiper"``:
        their range, maximum minus minimum (Kuiper; ECCE-R, mcgrad's ``ecce``).
    scale : {"probability", "sigma"}, default "probability", keyword-only
        ``"probability"``: on the scale of ``p``; ``"sigma"``: divided by the
        standard deviation of the last cumulative difference under perfect
        calibration (mcgrad's ``ecce_sigma``, MAPIE's statistics), the
        statistic whose p-value ``calibration_test(method=kind)`` gives.
    type : {"confidence"}, default "confidence", keyword-only
        Multiclass form, ignored for a vector ``p``: the top-label confidence
        against whether the top label (ties: the first maximal column) is
        correct.
    <calibr:classes>
    <calibr:na_rm>
    <calibr:weights>

    Returns
    -------
    float

    Raises
    ------
    <calibr:raises>

    Notes
    -----
    Sort the rows by ``p``; with weights ``w_i`` (1 without weights) and
    ``W = sum w_i``, the cumulative differences are :math:`C_0 = 0` and
    :math:`C_k = \frac1W \sum_{i \le k} w_i (y_i - p_i)`, read at the end of each
    block of tied ``p`` only (so the order of tied rows does not matter). Then

    .. math:: \mathrm{ECCE}_{KS} = \max_k |C_k|, \qquad
              \mathrm{ECCE}_{Kuiper} = \max_k C_k - \min_k C_k,

    and :math:`\sigma = \sqrt{\sum_i w_i p_i (1 - p_i)} / W`. Under perfect
    calibration :math:`C / \sigma` tends to standard Brownian motion on [0, 1];
    the p-values are in :func:`calibr.calibration_test` (``method="ks"``,
    ``"kuiper"``). The formulas, their sources and every difference from mcgrad
    and MAPIE are in ``docs/definitions.md``, "Cumulative calibration errors".

    O(n log n): one sort of n integer keys (``p`` and ``y`` packed; one
    ``argsort`` with weights), then one pass.

    References
    ----------
    Arrieta-Ibarra, I., Gujral, P., Tannen, J., Tygert, M., & Xu, C. (2022).
    Metrics of calibration for probabilistic predictions. JMLR 23(351), 1-54.

    Examples
    --------
    >>> import calibr
    >>> y = [0, 1, 0, 1, 0]
    >>> p = [0.1, 0.9, 0.21, 0.9, 0.5]
    >>> round(calibr.ecce(p, y), 12)
    0.162
    >>> round(calibr.ecce(p, y, scale="sigma"), 3)   # MAPIE's example
    0.978
    >>> round(calibr.ecce(p, y, "kuiper"), 12)
    0.162
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None:  # a lazy result: docs/dask.md
        return lazy.ecce(p, y, kind, scale, type, classes, na_rm, weights)
    prep = prepare(p, y, classes=classes, na_rm=na_rm, weights=weights)
    return ecce_stats(prep).value(kind, scale)
