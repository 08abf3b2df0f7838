"""The calibration error over bins of a fixed number of rows: Humanity's Last Exam's
``calib_err`` (``docs/conventions.md``, "LLM evaluation tools").

Its bins are runs of ranks, not intervals of values: the rows sorted by
confidence, cut every ``size`` rows, the remainder joined to the last bin. Tied
confidences can straddle a cut, so these bins cannot be written as breaks
(``calibr._binning``), and the number depends on the order of tied rows: here the
stable order (ties keep their input order), so the number is reproducible.
Not in the registry (``calibr._registry``): a metric there must not depend on the
order of the rows, which the lazy engines do not keep.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._docs import shared_docs
from .._input import FLAG, InputError, Options, prepare, validate_params
from .._input.params import Integer

__all__ = ["LAST_BIN", "NORMS", "fixed_size_ce"]

#: The norms, as ``calibration_error``'s: HLE's ``p="1"``, ``"2"``, ``"infty"``.
NORMS = ("l2", "l1", "max")

#: What happens to the last bin (which holds the remainder): counted (``"keep"``,
#: the ports) or left out of the sum, its rows still in ``n`` (``"skip"``, HLE's
#: original loop ``for i in range(len(bins) - 1)``).
LAST_BIN = ("keep", "skip")


@validate_params(size=Integer(1, what="a positive whole number of rows"),
                 norm=Options(*NORMS), last_bin=Options(*LAST_BIN), na_rm=FLAG)
@shared_docs
def fixed_size_ce(
    p: Any,
    y: Any,
    size: int = 100,
    *,
    norm: str = "l2",
    last_bin: str = "keep",
    classes: Sequence | None = None,
    na_rm: bool = False,
) -> float:
    r"""Calibration error over bins of ``size`` rows sorted by confidence
    (Humanity's Last Exam's ``calib_err(confidence, correct, p, beta)``).

    Parameters
    ----------
    p : array-like or pandas Series
        Confidences in [0, 1], one per row (an LLM's stated confidence, or the
        probability of its answer).
    y : array-like or pandas Series
        Whether each answer is correct: 0/1 or booleans.
    size : int, default 100
        The number of rows of each bin (HLE's ``beta``): the rows sorted by
        ``p`` are cut every ``size`` rows, and the last bin also holds the
        remaining ``n % size`` rows. At most ``n``.
    norm : {"l2", "l1", "max"}, default "l2", keyword-only
        HLE's ``p="2"`` (the root of the weighted mean squared gap, HLE's
        default and the number it reports), ``p="1"`` (an ECE) and
        ``p="infty"`` (the largest gap).
    last_bin : {"keep", "skip"}, default "keep", keyword-only
        ``"keep"``: every bin counts (the ports of ``calib_err`` that loop over
        every bin). ``"skip"``: the last bin, the most confident ``size + n %
        size`` rows, is left out of the sum while ``n`` still counts them (HLE's
        original, ``for i in range(len(bins) - 1)``); then ``n`` must be at
        least ``2 * size``.
    <calibr:classes>
    <calibr:na_rm>

    Returns
    -------
    float
        In [0, 1]; lower is better. A fraction, where HLE prints
        ``100 * round(calib_err(...), 2)``.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for ``size`` larger than ``n`` (no full bin;
        HLE's original raises IndexError), ``last_bin="skip"`` with ``n`` below
        ``2 * size`` (every row would be skipped; HLE's original returns 0),
        a matrix ``p``, and bad values of any argument.
    TypeError
        (``calibr.InputTypeError``) for arguments of a kind calibr does not read.

    Notes
    -----
    Sort the rows by ``p`` (stably: tied rows keep their input order); bin
    :math:`b` holds ranks :math:`b \cdot s` to :math:`(b + 1) s - 1` for
    :math:`b < B - 1` and the rest for :math:`b = B - 1`, with :math:`B =
    \lfloor n / s \rfloor`. With :math:`n_b` rows, mean confidence
    :math:`\bar p_b` and share correct :math:`\bar y_b`, over the bins
    :math:`b` counted (all, or all but the last),

    .. math::

        \mathrm{CE}_2 = \Big(\sum_b \frac{n_b}{n} (\bar p_b - \bar y_b)^2\Big)^{1/2},
        \quad \mathrm{CE}_1 = \sum_b \frac{n_b}{n} |\bar p_b - \bar y_b|,
        \quad \mathrm{CE}_\infty = \max_b |\bar p_b - \bar y_b|.

    HLE sorts with ``numpy.argsort``'s default, which is not stable: where
    tied confidences straddle a cut, its number depends on numpy's sort
    (``docs/conventions.md``, "LLM evaluation tools").

    References
    ----------
    Phan, L., et al. (2025). Humanity's Last Exam. arXiv:2501.14249.

    Examples
    --------
    >>> import numpy as np, calibr
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.2, 1.0, 250)
    >>> correct = rng.random(250) < conf - 0.1
    >>> round(calibr.fixed_size_ce(conf, correct, 100), 4)
    0.1563
    >>> round(calibr.fixed_size_ce(conf, correct, 100, last_bin="skip"), 4)
    0.123
    """
    prep = prepare(p, y, classes=classes, na_rm=na_rm)
    if not prep.binary:
        raise InputError(
            "`p` must be a vector of confidences, one per row, for fixed_size_ce; "
            f"got a matrix of {prep.k} columns (pass the confidence of each answer, "
            "e.g. the row maxima, and y = whether that answer is correct).",
            param="p"
        )
    n = prep.n
    full = n // size
    if full == 0:
        raise InputError(
            f"`size` must be at most the number of rows ({n:,}), so that there is at "
            f"least one bin of `size` rows; got {size:,}.",
            param="size"
        )
    counted = full if last_bin == "keep" else full - 1
    if counted == 0:
        raise InputError(
            f'`size` must be at most half the number of rows ({n:,}) with last_bin = '
            f'"skip": the last bin, which is skipped, holds every row; got {size:,}.',
            param="size"
        )
    order = np.argsort(prep.p, kind="stable")
    conf = prep.p[order]
    hit = prep.y[order].astype(np.float64)
    starts = np.arange(full, dtype=np.int64) * size
    counts = np.diff(np.append(starts, n))[:counted].astype(np.float64)
    gap = np.abs(np.add.reduceat(conf, starts)[:counted] / counts
                 - np.add.reduceat(hit, starts)[:counted] / counts)
    if norm == "max":
        return float(gap.max())
    if norm == "l1":
        return float(np.sum(counts / n * gap))
    return float(np.sqrt(np.sum(counts / n * gap ** 2)))
