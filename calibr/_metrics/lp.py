"""``calibration_error()``: the plug-in Lp calibration error over a binning, and the
debiased L2 calibration error of Kumar, Liang & Ma (2019), in the marginal
(classwise) and top-label (confidence) forms (``docs/definitions.md``,
"Lp calibration error").

A thin public function over the per-bin statistics of :func:`calibr.ece` (the
same bins, every binning option), so one pass over the data after the breaks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._binning import TYPES, BinSpec, binned_stats
from .._defaults import BINNED_TYPE_DEFAULT, BINNING_DEFAULT, BINS_DEFAULT, RIGHT_DEFAULT
from .._docs import shared_docs
from .._input import (
    BIN_SPEC,
    BINNING,
    FLAG,
    RIGHT,
    InputError,
    Options,
    lazy_backend,
    validate_params,
)

__all__ = ["calibration_error", "per_row"]

_NORMS = ("l2", "l1", "max")
_TYPES = TYPES
_POWER = {"l1": 1.0, "l2": 2.0}


def per_row(count: np.ndarray, conf: np.ndarray, hit: np.ndarray, norm: str,
             debias: bool) -> np.ndarray:
    """The error of each row of (K, B) per-bin statistics (one row: binary,
    confidence, or the flat (predicted class, bin) cells of the top-label form)."""
    count, conf, hit = (np.atleast_2d(a) for a in (count, conf, hit))
    nonempty = count > 0
    safe = np.where(nonempty, count, 1.0)
    accuracy = hit / safe
    gap = np.abs(accuracy - conf / safe)
    if norm == "max":
        return np.max(np.where(nonempty, gap, -np.inf), axis=1)
    share = count / np.sum(count, axis=1, keepdims=True)
    if debias:  # Kumar et al.: each bin's squared gap minus its label variance
        two = count >= 2
        variance = accuracy * (1.0 - accuracy) / np.where(two, count - 1.0, 1.0)
        terms = np.where(two, gap * gap - variance, 0.0)
        return np.sqrt(np.maximum(np.sum(share * terms, axis=1), 0.0))
    power = _POWER[norm]
    return np.sum(share * np.where(nonempty, gap**power, 0.0), axis=1) ** (1.0 / power)


@validate_params(bins=BIN_SPEC, type=Options(*_TYPES), norm=Options(*_NORMS), debias=FLAG,
                 binning=BINNING, right=RIGHT, na_rm=FLAG)
@shared_docs
def calibration_error(
    p: Any,
    y: Any,
    bins: int = BINS_DEFAULT,
    type: str = BINNED_TYPE_DEFAULT,
    *,
    norm: str = "l2",
    debias: bool = False,
    binning: str = BINNING_DEFAULT,
    right: bool = RIGHT_DEFAULT,
    classes: Sequence | None = None,
    na_rm: bool = False,
) -> float:
    r"""The Lp calibration error over a binning, plug-in or debiased (Kumar et al.).

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    <calibr:bins>
        Or the breaks themselves, as for :func:`calibr.ece`.
    type : {"classwise", "confidence", "top-label"}, default "classwise"
        Multiclass form, ignored for a vector ``p`` (but ``"top-label"``, which
        reads it as the two columns ``(1 - p, p)``): ``"classwise"`` is Kumar
        et al.'s marginal calibration error, ``"confidence"`` their top-label
        one (the top-label probability pooled over the classes), ``"top-label"``
        Gupta & Ramdas's, over the (predicted class, bin) cells.
    norm : {"l2", "l1", "max"}, default "l2", keyword-only
        The p of the Lp error: ``"l1"`` is the ECE, ``"max"`` the MCE (over
        every bin of every class for ``"classwise"``).
    debias : bool, default False, keyword-only
        ``norm="l2"`` only: the debiased estimate of the squared error (each
        bin's squared gap minus the variance of its mean label), Kumar et al.'s
        ``unbiased_l2_ce``; the plug-in estimate otherwise.
    <calibr:binning>
    <calibr:right>
    <calibr:classes>
    <calibr:na_rm>

    Returns
    -------
    float

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument, and
        ``debias=True`` with a norm other than ``"l2"``.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    Notes
    -----
    With the bins of :func:`calibr.ece` (the same options), :math:`n_b` rows in
    bin b, mean prediction :math:`\bar p_b` and mean outcome :math:`\bar y_b`:

    .. math::

        \mathrm{CE}_q = \Big(\sum_{b: n_b > 0} \frac{n_b}{n}
            |\bar y_b - \bar p_b|^q\Big)^{1/q}, \qquad
        \mathrm{CE}_\infty = \max_{b: n_b > 0} |\bar y_b - \bar p_b|,

    and the debiased L2 error

    .. math::

        \widehat{\mathrm{CE}}_2 = \Big(\max\Big(0, \sum_{b: n_b \ge 2}
            \frac{n_b}{n}\Big[(\bar y_b - \bar p_b)^2 -
            \frac{\bar y_b (1 - \bar y_b)}{n_b - 1}\Big]\Big)\Big)^{1/2}.

    ``"classwise"`` (marginal) combines the K one-vs-rest errors as
    :math:`(\frac1K \sum_k \mathrm{CE}_{q,k}^q)^{1/q}` (the maximum for
    ``"max"``); ``"confidence"`` (top-label) is the binary error of the
    top-label confidence against whether the top label (the first maximal
    column) is correct; ``"top-label"`` (Gupta & Ramdas 2022) sums over the
    cells (c, b) of the rows predicted c whose top-label confidence is in
    bin b of class c's bins, with weights :math:`n_{cb} / n`, as the binary
    error sums over the bins (the maximum and the debiasing likewise per
    cell: ``docs/definitions.md``, "Top-label calibration error"). These are the definitions of the
    ``uncertainty-calibration`` package (``calibration.lower_bound_scaling_ce``
    and ``get_calibration_error``), which the tests match to 1e-12 relative:
    its ``get_calibration_error(p, y)`` on continuous predictions is
    ``calibration_error(p, y, bins=15, binning="equal-mass", debias=True)``
    (``mode="top-label"``: ``type="confidence"``). Its debiasing for other
    norms is a random normal resampling, which calibr does not offer.

    References
    ----------
    Kumar, A., Liang, P., & Ma, T. (2019). Verified uncertainty calibration.
    NeurIPS 32.

    Gupta, C., & Ramdas, A. (2022). Top-label calibration and
    multiclass-to-binary reductions. ICLR.

    Examples
    --------
    >>> import calibr
    >>> p, y = [0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]
    >>> round(calibr.calibration_error(p, y, bins=2, norm="l1"), 12)
    0.15
    >>> round(calibr.calibration_error(p, y, bins=2), 12)   # l2: sqrt(0.15^2)
    0.15
    """
    if debias and norm != "l2":
        raise InputError(
            f'`debias = True` is defined for `norm = "l2"` only (Kumar et al.); got '
            f'`norm = "{norm}"`.',
            param="debias"
        )
    lazy = lazy_backend(p, y)
    if lazy is not None and hasattr(lazy, "calibration_error"):  # docs/engines.md
        return lazy.calibration_error(p, y, bins, type, norm=norm, debias=debias,
                                      binning=binning, right=right, classes=classes,
                                      na_rm=na_rm)
    count, conf, hit = binned_stats(p, y, BinSpec.from_options(bins, binning, right), type=type,
                                    classes=classes, na_rm=na_rm)
    per = per_row(count, conf, hit, norm, debias)
    if per.shape[0] == 1:
        return float(per[0])
    if norm == "max":
        return float(np.max(per))
    power = _POWER[norm]
    return float(np.mean(per**power) ** (1.0 / power))
