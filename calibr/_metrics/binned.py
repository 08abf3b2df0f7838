"""``ece()`` and ``mce()``: the binned calibration errors (``docs/definitions.md``,
"Binned metrics")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _binning
from .._defaults import BINNED_TYPE_DEFAULT, BINNING_DEFAULT, BINS_DEFAULT, RIGHT_DEFAULT
from .._docs import shared_docs
from .._input import (
    BIN_SPEC,
    BINNING,
    FLAG,
    RIGHT,
    Options,
    lazy_backend,
    validate_params,
)
from .._kernels import binned

__all__ = ["ece", "mce"]

_TYPES = _binning.TYPES


@validate_params(bins=BIN_SPEC, type=Options(*_TYPES), na_rm=FLAG, binning=BINNING,
                 right=RIGHT)
@shared_docs
def ece(
    p: Any,
    y: Any,
    bins: int = BINS_DEFAULT,
    type: str = BINNED_TYPE_DEFAULT,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
    binning: str = BINNING_DEFAULT,
    right: bool = RIGHT_DEFAULT,
) -> float:
    r"""Expected calibration error with binned confidences (R: equal-width bins).

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    <calibr:binned_bins>
        At most 1,000,000, and for ``type="classwise"`` with K classes at most
        10,000,000 / K (the per-bin sums must fit in memory).
    type : {"classwise", "confidence", "top-label"}, default "classwise"
        Multiclass form; ignored for a vector ``p``, except ``"top-label"``,
        which reads a vector ``p`` as the two columns ``(1 - p, p)``.
    <calibr:classes>
    <calibr:na_rm>
    <calibr:binned_weights>
    <calibr:binning>
    <calibr:right>

    Returns
    -------
    float

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument (``weights``:
        a length other than that of ``p``, missing, infinite or negative values,
        or a total of 0); the message names the argument, what was expected and
        what was found.
    TypeError
        (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
        set, dict or string where a vector is expected.

    Notes
    -----
    Mirrors R's ``ece(p, y, bins = 10, type = c("classwise", "confidence"))``
    (``docs/definitions.md``, "Binned metrics").
    The breaks are R's ``seq(0, 1, length.out = bins + 1)``; bins are closed on
    the right and 0 belongs to the first bin. For non-empty bins b with n_b
    members, conf(b) is the mean prediction and acc(b) the mean outcome:

    .. math:: \mathrm{ECE} = \sum_{b: n_b > 0} \frac{n_b}{n} |acc(b) - conf(b)|.

    ``"classwise"`` averages the binary ECE of each column against the
    indicator of its class; ``"confidence"`` takes the top-label probability
    against whether the top label (ties: the first maximal column) is correct.
    ``"top-label"`` is the top-label ECE of Gupta & Ramdas (2022): the rows are
    split by their predicted class c (the first maximal column), the top-label
    probability of each class's rows is binned on its own, and every (class,
    bin) cell counts with its share of all rows,

    .. math:: \mathrm{TL\text{-}ECE} = \sum_{c} \sum_{b: n_{cb} > 0}
              \frac{n_{cb}}{n} |acc(c, b) - conf(c, b)|

    (``docs/definitions.md``, "Top-label calibration error"; MAPIE's
    ``top_label_ece`` averages the classes' ECEs without their shares instead).

    With ``weights``, n_b is the total weight of bin b and conf(b), acc(b) the
    weighted means; n the total weight. R's ``ece()`` has no weights.

    ``binning``, ``right`` and explicit breaks (R's ``ece()`` has none of
    them) change only the bins; options other than R's are computed by a
    vectorised path (``calibr/_binning/__init__.py``). ``binning="equal-mass",
    type="confidence"`` with ``bins=15`` is uncertainty-calibration's
    ``get_ece_em`` (``docs/conventions.md`` lists the settings of other
    libraries and the calibr call that reproduces each).

    <calibr:dask_binned>

    References
    ----------
    Guo, Pleiss, Sun & Weinberger (2017). On calibration of modern neural
    networks. ICML. Kull et al. (2019). Beyond temperature scaling. NeurIPS.
    Gupta & Ramdas (2022). Top-label calibration and multiclass-to-binary
    reductions. ICLR.

    Examples
    --------
    >>> import calibr
    >>> round(calibr.ece([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], bins=2), 12)
    0.15
    >>> round(calibr.ece([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], bins=2, binning="equal-mass"), 12)
    0.4
    >>> round(calibr.ece([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], bins=[0, 0.25, 1]), 12)
    0.4
    >>> p = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]
    >>> round(calibr.ece(p, [1, 3, 3], bins=5, type="confidence"), 6)
    0.333333
    >>> p4 = p + [[0.6, 0.3, 0.1]]     # the rows predicted class 1: 0.7 right, 0.6 wrong
    >>> round(calibr.ece(p4, [1, 3, 3, 2], bins=5, type="top-label"), 12)
    0.4
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None:  # a lazy result: docs/dask.md
        return lazy.ece(p, y, bins, type, classes, na_rm, weights, binning, right)
    spec = _binning.BinSpec.from_options(bins, binning, right)
    return binned.ece_from_stats(*_binning.binned_stats(p, y, spec, type=type, classes=classes,
                                                            na_rm=na_rm, weights=weights))


@validate_params(bins=BIN_SPEC, type=Options(*_TYPES), na_rm=FLAG, binning=BINNING,
                 right=RIGHT)
@shared_docs
def mce(
    p: Any,
    y: Any,
    bins: int = BINS_DEFAULT,
    type: str = BINNED_TYPE_DEFAULT,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
    binning: str = BINNING_DEFAULT,
    right: bool = RIGHT_DEFAULT,
) -> float:
    r"""Maximum calibration error with binned confidences (R: equal-width bins).

    Parameters
    ----------
    <calibr:p>
    <calibr:y>
    <calibr:binned_bins>
        Bounded as for :func:`calibr.ece`.
    type : {"classwise", "confidence", "top-label"}, default "classwise"
        Multiclass form; ignored for a vector ``p``, except ``"top-label"``, as
        for :func:`calibr.ece`.
    <calibr:classes>
    <calibr:na_rm>
    <calibr:binned_weights>
    <calibr:binning>
    <calibr:right>

    Returns
    -------
    float

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values of any argument.
    TypeError
        (``calibr.InputTypeError``) as for :func:`calibr.ece`.

    Notes
    -----
    Mirrors R's ``mce(p, y, bins = 10, type = c("classwise", "confidence"))``:

    .. math:: \mathrm{MCE} = \max_{b: n_b > 0} |acc(b) - conf(b)|,

    with the bins of :func:`calibr.ece`. ``"classwise"`` takes the maximum over
    the one-vs-rest columns, ``"confidence"`` uses the top-label confidence,
    ``"top-label"`` takes the maximum over the non-empty (predicted class, bin)
    cells of :func:`calibr.ece`'s top-label form (Gupta & Ramdas 2022).

    With ``weights``, acc(b) and conf(b) are weighted means and a bin is empty
    (left out of the maximum) when its total weight is 0, e.g. when all its
    rows have weight 0. R's ``mce()`` has no weights.

    <calibr:dask_binned>

    References
    ----------
    Guo, Pleiss, Sun & Weinberger (2017). On calibration of modern neural
    networks. ICML. Gupta & Ramdas (2022). Top-label calibration and
    multiclass-to-binary reductions. ICLR.

    Examples
    --------
    The example of R's help page:

    >>> import calibr
    >>> round(calibr.mce([0.10, 0.20, 0.80, 0.90], [0, 0, 1, 1], bins=2), 12)
    0.15

    The top-label form keeps the classes apart: 0.5 (predicted class 2, wrong) and
    0.6 (predicted class 1, wrong) share a bin only in the confidence form.

    >>> p = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    >>> y = [1, 3, 3, 2]
    >>> round(calibr.mce(p, y, bins=5, type="top-label"), 12)
    0.6
    >>> round(calibr.mce(p, y, bins=5, type="confidence"), 12)
    0.55
    """
    lazy = lazy_backend(p, y, weights)
    if lazy is not None:  # a lazy result: docs/dask.md
        return lazy.mce(p, y, bins, type, classes, na_rm, weights, binning, right)
    spec = _binning.BinSpec.from_options(bins, binning, right)
    return binned.mce_from_stats(*_binning.binned_stats(p, y, spec, type=type, classes=classes,
                                                            na_rm=na_rm, weights=weights))
