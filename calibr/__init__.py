"""calibr: calibration-error metrics for probabilistic classifiers.

The Python port of an R package: ``ece()``, ``mce()``, ``mmce()`` and ``skce()``
with R's signatures, defaults and numbers, ``median_bandwidth()`` (the bandwidth
that ``bandwidth="median"`` resolves to), ``val_prob()`` (the statistics of
R's ``rms::val.prob``), ``calibration_test()`` (is a model miscalibrated at
all? SKCE, consistency resampling, Spiegelhalter and Hosmer-Lemeshow tests),
``ecce()`` (the cumulative calibration error, without bins; its tests are
``calibration_test(method="ks" | "kuiper")``), ``decompose()`` (how much of a
Brier score or log loss is miscalibration: the CORP decomposition),
``brier()``, ``log_loss()`` and ``auroc()`` (the scores reported beside a
calibration error),
``p_adjust()`` (p-values adjusted for multiple comparisons, R's ``p.adjust``),
``html_report()`` (a self-contained HTML report a person reads),
``bootstrap()`` and ``paired_bootstrap()`` (confidence intervals of a metric, and
of the difference between two models on the same rows),
plus pandas verbs (``summarise()``, ``calibration_table()``).

Submodules imported on demand: ``calibr.datasets`` (bundled example
predictions), ``calibr.plot`` (reliability diagrams; needs matplotlib, imported
only when one is drawn; ``calibr.reliability_diagram`` is its function) and
``calibr.torchmetrics`` (torchmetrics-compatible calibration error without torch).

``import calibr`` itself imports none of numpy, pandas or numba: each public name
is imported from its module the first time it is used (``calibr.ece`` or
``from calibr import ece``), so a program pays only for what it calls.
"""

from importlib import import_module as _import_module
from importlib.util import find_spec as _find_spec
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: Each public name and the module that defines it (imported on first use).
_SOURCES = {
    "InputError": "._input",
    "InputTypeError": "._input",
    "BootstrapResult": "._inference.bootstrap",
    "CalibrationTestResult": "._inference.calibration_tests",
    "Decomposition": "._metrics.decompose",
    "Metric": ".frame",
    "PairedBootstrapResult": "._inference.bootstrap",
    "bootstrap": "._inference.bootstrap",
    "calibration_error": "._metrics.lp",
    "CalibrationGain": "._metrics.recalibration",
    "calibration_gain": "._metrics.recalibration",
    "recalibrate": "._metrics.recalibration",
    "calibration_table": ".table",
    "calibration_test": "._inference.calibration_tests",
    "decompose": "._metrics.decompose",
    "html_report": "._html",
    "ece": "._metrics.binned",
    "fixed_size_ce": "._metrics.fixed_size",
    "mce": "._metrics.binned",
    "median_bandwidth": "._metrics.kernel",
    "metric": ".frame",
    "mmce": "._metrics.kernel",
    "multicalibration": "._inference.multicalibration",
    "p_adjust": "._inference.multitest",
    "MulticalibrationResult": "._inference.multicalibration",
    "paired_bootstrap": "._inference.bootstrap",
    "reliability_diagram": ".plot",
    "risk_coverage": "._metrics.selective",
    "skce": "._metrics.kernel",
    "smece": "._metrics.smooth",
    "smece_curve": "._metrics.smooth",
    "SmoothCurve": "._metrics.smooth",
    "summarise": ".frame",
    "test": ".frame",
    "val_prob": "._metrics.valprob",
}

__all__ = [
    "BootstrapResult",
    "CalibrationGain",
    "CalibrationTestResult",
    "Decomposition",
    "InputError",
    "InputTypeError",
    "Metric",
    "MulticalibrationResult",
    "PairedBootstrapResult",
    "SmoothCurve",
    "__version__",
    "auroc",
    "bootstrap",
    "brier",
    "calibration_error",
    "calibration_gain",
    "calibration_table",
    "calibration_test",
    "datasets",
    "decompose",
    "ecce",
    "ece",
    "fixed_size_ce",
    "html_report",
    "log_loss",
    "mce",
    "median_bandwidth",
    "metric",
    "mmce",
    "multicalibration",
    "p_adjust",
    "paired_bootstrap",
    "recalibrate",
    "reliability_diagram",
    "risk_coverage",
    "skce",
    "smece",
    "smece_curve",
    "summarise",
    "test",
    "val_prob",
]

# every metric of the registry is public, from its entry alone (a metric added there
# needs no line here; the registry imports only the standard library)
from . import _registry as _registry  # noqa: E402

for _info in _registry.METRICS.values():
    _SOURCES.setdefault(_info.name, _info.module.removeprefix(__name__))
    if _info.name not in __all__:
        __all__.append(_info.name)
del _info

if TYPE_CHECKING:  # what the names are, for type checkers and IDEs
    from . import datasets
    from ._html import html_report
    from ._inference.bootstrap import (
        BootstrapResult,
        PairedBootstrapResult,
        bootstrap,
        paired_bootstrap,
    )
    from ._inference.calibration_tests import CalibrationTestResult, calibration_test
    from ._inference.multicalibration import MulticalibrationResult, multicalibration
    from ._inference.multitest import p_adjust
    from ._input import InputError, InputTypeError
    from ._metrics.binned import ece, mce
    from ._metrics.cumulative import ecce
    from ._metrics.decompose import Decomposition, decompose
    from ._metrics.fixed_size import fixed_size_ce
    from ._metrics.kernel import median_bandwidth, mmce, skce
    from ._metrics.lp import calibration_error
    from ._metrics.recalibration import CalibrationGain, calibration_gain, recalibrate
    from ._metrics.scores import auroc, brier, log_loss
    from ._metrics.selective import risk_coverage
    from ._metrics.smooth import SmoothCurve, smece, smece_curve
    from ._metrics.valprob import val_prob
    from .frame import Metric, metric, summarise, test
    from .plot import reliability_diagram
    from .table import calibration_table


def __getattr__(name: str) -> object:
    """Import a public name, or a submodule (``calibr.table``), on first use (PEP 562)."""
    if name in _SOURCES:
        value = getattr(_import_module(_SOURCES[name], __name__), name)
    elif not name.startswith("__") and _find_spec(f"{__name__}.{name}"):
        value = _import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later uses do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
