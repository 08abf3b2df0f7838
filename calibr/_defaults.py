"""The defaults of the bin options, shared by the signatures of every binned function
(``ece``, ``mce``, ``calibration_error``, ``calibration_table``, and ``bins`` of
``calibration_test``), and the bootstrap's resamples, shared by its callers: each
written once.

Each is R's (``docs/definitions.md``, "Binned metrics"): ``ece(p, y, bins = 10,
type = c("classwise", "confidence"))`` with the breaks ``seq(0, 1, length.out =
bins + 1)`` and ``cut(right = TRUE, include.lowest = TRUE)``; except the bins of
``decompose()``, the isotonic fit of the CORP decomposition. A signature reads
its default from here (``bins: int = BINS_DEFAULT``); everything else reads it
from the signature (``calibr._input.defaults``), or, where no signature can be
reached without importing the numerics (the command line's ``--help``, the shared
docstring paragraphs), from here. This module imports nothing.
"""

from __future__ import annotations

__all__ = ["BINNED_TYPE_DEFAULT", "BINNING_DEFAULT", "BINS_DEFAULT", "BOOTSTRAP_RESAMPLES_DEFAULT",
           "DECOMPOSE_BINNING_DEFAULT", "GATE_MIN_N", "RIGHT_DEFAULT"]

#: The number of bins (R's ``bins = 10``).
BINS_DEFAULT = 10
#: How the bins are placed: R's equal-width breaks.
BINNING_DEFAULT = "equal-width"
#: The closure: on the right, 0 in the first bin (R's ``cut(right = TRUE)``).
RIGHT_DEFAULT = True
#: The multiclass form of the binned metrics (R's ``type = c("classwise", ...)``).
BINNED_TYPE_DEFAULT = "classwise"
#: The bootstrap's resamples (``bootstrap``, ``paired_bootstrap``, the intervals of
#: ``summarise`` and ``html_report``, ``calibr report --n-resamples``, ``calibr compare``).
BOOTSTRAP_RESAMPLES_DEFAULT = 9999
#: The bins of ``decompose()``: the isotonic fit of the CORP decomposition (Dimitriadis,
#: Gneiting & Jordan 2021), not R's bins (``docs/definitions.md``, "Score decompositions").
DECOMPOSE_BINNING_DEFAULT = "isotonic"
#: The least group size that can fail a regression gate (``calibr compare --min-n``, the
#: ``min_n`` of the fixture's statistical mode): a smaller group is reported, marked,
#: and never gates, because a bootstrap of so few rows says nothing about the
#: population (``docs/regression_gate.md``, "Small groups").
GATE_MIN_N = 100
