"""Oracle of ``bins="sweep-caltrain"`` (``docs/definitions.md``, "Binning options"):
google-research caltrain's monotonic sweep, in numpy, line for line.

Provenance: repository google-research/google-research, file
``caltrain/calibration_metrics.py`` at commit
f944d3c7495f3c9c8c4c75156ca72a4df4373fbf, methods
``CalibrationMetric._compute_error_monotonic_sweep``, ``_calc_ece_postbin``,
``em_monotonic_sweep`` and ``ew_monotonic_sweep`` (Apache 2.0). Read there
and rewritten here as plain functions; nothing else of caltrain is used.

One change, the argument ``tie_order``: caltrain orders the rows by
``numpy.argsort(fx)``, an unstable sort, so the order of tied values (which
its equal-mass groups split) is numpy's choice, not the data's. The oracle
takes that order as an argument: ``"stable"`` (row order, ``kind="stable"``)
by default, or ``"outcome"`` (outcomes 0 before 1 among ties). With distinct
values the two are caltrain's order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["caltrain_bins", "caltrain_ece", "ties_split"]


def _calc_ece_postbin(n_bins, bins, fx, y, norm):
    """``_calc_ece_postbin``: the ECE of the bins, and whether the mean outcomes of
    the non-empty bins are nondecreasing."""
    ece = 0.0
    monotonic = True
    last_ym = -1000
    for i in range(n_bins):
        cur = bins == i
        if any(cur):
            fxm = np.mean(fx[cur])
            ym = np.mean(y[cur])
            if ym < last_ym:
                monotonic = False
            last_ym = ym
            n = np.sum(cur)
            ece += n * pow(np.abs(ym - fxm), norm)
    return pow(ece / fx.shape[0], 1.0 / norm), monotonic


def _sort_ix(fx, y, tie_order):
    if tie_order == "stable":
        return np.argsort(fx, kind="stable")
    return np.lexsort((y, fx))  # by fx, then outcome


def em_monotonic_sweep(fx, y, tie_order="stable", norm=1):
    """``em_monotonic_sweep``: each row's bin (0-based)."""
    sort_ix = _sort_ix(fx, y, tie_order)
    n_examples = fx.shape[0]
    bins = np.zeros((n_examples), dtype=int)
    prev_bins = np.zeros((n_examples), dtype=int)
    for n_bins in range(2, n_examples):
        bins[sort_ix] = np.minimum(
            n_bins - 1, np.floor((np.arange(n_examples) / n_examples) * n_bins)).astype(int)
        _, monotonic = _calc_ece_postbin(n_bins, bins, fx, y, norm)
        if not monotonic:
            return prev_bins
        prev_bins = np.copy(bins)
    return bins


def ew_monotonic_sweep(fx, y, norm=1):
    """``ew_monotonic_sweep``: each row's bin (0-based)."""
    n_examples = fx.shape[0]
    bins = np.zeros((n_examples), dtype=int)
    prev_bins = np.zeros((n_examples), dtype=int)
    for n_bins in range(2, n_examples):
        bins = np.minimum(n_bins - 1, np.floor(fx * n_bins)).astype(int)
        _, monotonic = _calc_ece_postbin(n_bins, bins, fx, y, norm)
        if not monotonic:
            return prev_bins
        prev_bins = np.copy(bins)
    return bins


def caltrain_bins(fx, y, binning: str, tie_order: str = "stable") -> np.ndarray:
    """Each row's bin under ``em_ece_sweep`` (``binning="equal-mass"``) or
    ``ew_ece_sweep`` (``"equal-width"``)."""
    fx = np.asarray(fx, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if binning == "equal-mass":
        return em_monotonic_sweep(fx, y, tie_order)
    return ew_monotonic_sweep(fx, y)


def caltrain_ece(fx, y, binning: str, norm: int = 1, tie_order: str = "stable") -> float:
    """``_compute_error_monotonic_sweep`` (NaN rows dropped, as there): the ECE of
    the swept bins in the ``norm`` (caltrain's ``CalibrationMetric`` default is 2)."""
    fx = np.squeeze(np.asarray(fx, dtype=np.float64))
    y = np.squeeze(np.asarray(y, dtype=np.float64))
    keep = np.logical_not(np.isnan(fx))
    fx, y = fx[keep], y[keep]
    bins = caltrain_bins(fx, y, binning, tie_order)
    n_bins = np.max(bins) + 1
    ece, _ = _calc_ece_postbin(n_bins, bins, fx, y, norm)
    return float(ece)


def ties_split(fx, y, binning: str, tie_order: str = "stable") -> bool:
    """Whether caltrain's sweep (with ``tie_order``) puts two rows of one value in
    different bins at any number of bins it tries: the only case in which its
    bins are not intervals of values, so no breaks (calibr's bins) can hold them."""
    fx = np.asarray(fx, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = fx.shape[0]
    if binning == "equal-width" or n < 3:
        return False
    order = _sort_ix(fx, y, tie_order)
    xs = fx[order]
    tied = xs[1:] == xs[:-1]
    final = em_monotonic_sweep(fx, y, tie_order)
    last = int(np.max(final)) + 1  # the bins it returned; it tried one more unless at n - 1
    for n_bins in range(2, min(last + 1, n - 1) + 1):
        group = np.minimum(n_bins - 1, np.floor((np.arange(n) / n) * n_bins))
        if np.any(tied & (group[1:] != group[:-1])):
            return True
    return False
