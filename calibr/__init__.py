"""calibr: calibration-error metrics for probabilistic classifiers.

The Python port of an R package: ``ece()``, ``mce()``, ``mmce()`` and ``skce()``
with R's signatures, defaults and numbers.
"""

from ._binned_metrics import ece, mce
from ._validation import InputError

__version__ = "0.1.0"

__all__ = [
    "InputError",
    "__version__",
    "ece",
    "mce",
]
