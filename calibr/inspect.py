"""calibr's metrics as inspect-ai metrics (the optional extra ``inspect``).

:func:`calibration` is an inspect-ai metric factory (a ``@metric``): each score's
value says whether the answer is correct (``"C"``/``"I"``, booleans, 0/1, through
inspect-ai's ``value_to_float``), its metadata holds the confidence the model
stated (under the key ``confidence``, or the one given), and the metric is the
calibr metric named (``"ece"`` by default; any metric of the registry,
``calibr._registry.METRICS``, or ``"fixed_size_ce"``, Humanity's Last Exam's
number), computed on the confidences against the correctness of every scored
answer. For example, ``Task(..., scorer=my_scorer(), metrics=[accuracy(),
calibration(bins=10)])``, or on the scorer, ``@scorer(metrics=[calibration()])``.

The metric reads inspect-ai's unreduced scores (``scores="unreduced"``): with
several epochs, each epoch's answer is one row, with its own confidence. A score
without the confidence key is an error that names the key and the samples that
lack it, raised once for the whole list; so is a confidence outside [0, 1] or a
value that is not correct/incorrect. inspect-ai also computes the metrics on the
first scores while the eval runs (its progress display): where the calibr metric
refuses the set of scores as a whole (fewer rows than ``size``, one class for
``auroc``), the metric abstains with NaN and logs the reason once, instead of
ending the eval (``docs/tools.md``, "inspect-ai").
inspect-ai is imported here only, never by ``import calibr``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Value, metric, value_to_float

from . import _registry
from ._input import InputError, InputTypeError, prepare

__all__ = ["METRICS", "calibration"]

_log = logging.getLogger(__name__)

#: The metrics that ``calibration`` takes by name: those of the registry, and
#: ``"fixed_size_ce"`` (not a registry metric: it depends on the order of tied rows).
METRICS: tuple[str, ...] = (*_registry.METRICS, "fixed_size_ce")


def _function(name: str) -> Callable[..., float]:
    if name == "fixed_size_ce":
        from ._metrics.fixed_size import fixed_size_ce

        return fixed_size_ce
    return _registry.METRICS[name].function


def _read(scores: list[SampleScore], key: str,
          to_float: Callable[[Value], float]) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) of the scores; every score without ``key`` in its
    metadata reported in one error."""
    missing = [s.sample_id for s in scores
               if not s.score.metadata or key not in s.score.metadata]
    if missing:
        shown = ", ".join(repr(i) for i in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise InputError(
            f"calibr's calibration metric reads each score's confidence from its "
            f"metadata key {key!r}, which {len(missing):,} of {len(scores):,} scores lack "
            f"(samples {shown}). Have the scorer return Score(..., metadata={{{key!r}: "
            "<confidence in [0, 1]>}), or pass the key the scorer uses as "
            "calibration(confidence=...).",
            param="confidence"
        )
    conf = [s.score.metadata[key] for s in scores]  # type: ignore[index]
    correct = [to_float(s.score.value) for s in scores]
    return np.asarray(conf), np.asarray(correct, dtype=np.float64)


@metric(scores="unreduced")
def calibration(metric: str = "ece", *, confidence: str = "confidence",
                to_float: Callable[[Value], float] | None = None, **options: Any) -> Metric:
    """An inspect-ai metric: a calibr metric of the confidences in the scores'
    metadata against whether each answer is correct.

    Parameters
    ----------
    metric : str, default "ece"
        One of :data:`METRICS`: a calibr metric of the registry (``"ece"``,
        ``"calibration_error"``, ``"brier"``, ``"smece"``, ...) or
        ``"fixed_size_ce"`` (Humanity's Last Exam's ``calib_err``).
    confidence : str, default "confidence", keyword-only
        The key of each score's metadata that holds the confidence, in [0, 1].
    to_float : callable, optional, keyword-only
        How a score's value becomes 1 (correct) or 0 (incorrect); by default
        inspect-ai's ``value_to_float()`` (``"C"`` 1, ``"I"`` 0, booleans,
        numbers). A value it maps to anything but 0 or 1 (``"P"``: 0.5) is an
        error naming the score values.
    **options
        The metric's options (``bins=10``, ``norm="l1"``, ``size=100``, ...).

    Returns
    -------
    Metric
        ``metric(scores) -> float``: NaN, with the reason logged once (the
        logger ``calibr.inspect``), where the calibr metric refuses the set of
        scores as a whole (too few rows, one class).

    Raises
    ------
    ValueError
        (``calibr.InputError``) when the metric is made, for a name that is not
        in :data:`METRICS` or an option the metric does not have; when it is
        computed, for scores without the confidence key (one error naming the
        key and the samples), confidences outside [0, 1] and values that are
        not correct/incorrect.
    """
    if not isinstance(metric, str) or metric not in METRICS:
        raise InputError(
            "`metric` must name a calibr metric (" + ", ".join(map(repr, METRICS))
            + f"); got {metric!r}.",
            param="metric"
        )
    function = _function(metric)
    allowed = (_registry.METRICS[metric].options if metric in _registry.METRICS
               else ("size", "norm", "last_bin"))
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise InputError(
            f"The metric {metric!r} has no option {unknown[0]!r}; its options are "
            f"{', '.join(allowed) if allowed else 'none'}.",
            param=unknown[0]
        )
    to_float = value_to_float() if to_float is None else to_float

    def compute(scores: list[SampleScore]) -> float:
        conf, correct = _read(scores, confidence, to_float)
        try:  # what each score holds: refused, whatever the number of scores
            prep = prepare(conf, correct)
        except (InputError, InputTypeError) as err:
            if err.param == "p":
                raise InputError(f"The confidences in the scores' metadata key "
                                 f"{confidence!r}: {err}", param="confidence") from err
            if err.param == "y":
                raise InputError(
                    "The score values must each be correct or incorrect (1 or 0 after "
                    f"`to_float`): {err}", param="to_float") from err
            raise
        try:
            return function(prep.p, prep.y, **options)
        except InputError as err:  # what the set of scores lacks: no number at this n
            reason = str(err)
            if reason not in warned:
                warned.add(reason)
                _log.warning("calibr's %s of %d scores is NaN: %s", metric, len(scores),
                             reason)
            return math.nan

    warned: set[str] = set()
    return compute
