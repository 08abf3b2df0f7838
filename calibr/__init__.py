"""calibr: calibration-error metrics for probabilistic classifiers.

The Python port of an R package: ``ece()``, ``mce()``, ``mmce()`` and ``skce()``
with R's signatures, defaults and numbers, ``median_bandwidth()`` (the bandwidth
that ``bandwidth="median"`` resolves to), ``val_prob()`` (the statistics of
R's ``rms::val.prob``), plus pandas verbs (``summarise()``,
``calibration_table()``).

Submodules imported on demand: ``calibr.datasets`` (bundled example
predictions), ``calibr.plot`` (reliability diagrams; needs matplotlib) and
``calibr.torchmetrics`` (torchmetrics-compatible calibration error without torch).
"""

from . import datasets
from ._binned_metrics import ece, mce
from ._kernel_metrics import median_bandwidth, mmce, skce
from ._validation import InputError, InputTypeError
from ._valprob import val_prob
from .frame import Metric, metric, summarise
from .table import calibration_table

__version__ = "0.1.0"

__all__ = [
    "InputError",
    "InputTypeError",
    "Metric",
    "__version__",
    "calibration_table",
    "datasets",
    "ece",
    "mce",
    "median_bandwidth",
    "metric",
    "mmce",
    "skce",
    "summarise",
    "val_prob",
]
