"""calibr's metrics as lm-eval metrics (the optional extra ``lm-eval``).

Importing this module registers, through lm-eval's own registry
(``lm_eval.api.registry.register_aggregation`` and ``register_metric``), a metric
``calibr_<name>`` for each metric of calibr's registry (``calibr_ece``,
``calibr_calibration_error``, ``calibr_brier``, ...) with calibr's defaults;
:func:`register` adds one with options (``register("calibr_ece_15", "ece",
bins=15)``). A task's YAML then lists it (``metric_list: - metric: calibr_ece``).

Each metric is, as lm-eval's own ``brier_score``, a pass-through of its items and
an aggregation over all of them. An item is a pair, either

* ``(gold, probabilities)``: the gold choice's index and the probability of each
  choice (``brier_score``'s item: lm-eval's ``(gold, softmax(loglikelihoods))``);
  the row is then the answer's confidence, the largest probability, and whether
  that answer (``numpy.argmax``, lm-eval's ``acc`` rule: the first of tied
  choices) is the gold one; or
* ``(correct, confidence)``: 0/1 and a probability (lm-eval pull request 3913's
  ``(gold_label, predicted_probability)``);

and the number is the calibr metric of the confidences against the
correctness (``docs/tools.md``, "lm-eval"). lm-eval 0.4.13's multiple-choice
results carry such pairs only for ``brier_score``: a task returns them for a
calibr metric from its own ``process_results``. lm-eval is imported here only,
never by ``import calibr``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# lm-eval's own metrics first: its registry imports them only while it is empty
import lm_eval.api.metrics  # noqa: F401
import numpy as np
from lm_eval.api.registry import (
    aggregation_registry,
    metric_registry,
    register_aggregation,
    register_metric,
)

from . import _registry
from ._input import InputError

__all__ = ["REGISTERED", "aggregate", "register"]

#: The metrics this module has registered in lm-eval: name -> (calibr metric, options).
REGISTERED: dict[str, tuple[str, dict[str, Any]]] = {}


def _rows(items: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) of the items: ``(gold, probabilities)`` or
    ``(correct, confidence)`` pairs, one form for all."""
    if len(items) == 0:
        raise InputError("lm-eval gave the calibr metric no items.", param="items")
    pairs = [tuple(item) for item in items]
    if any(len(pair) != 2 for pair in pairs):
        raise InputError(
            "Each item of a calibr metric must be a pair (gold, probabilities) or "
            f"(correct, confidence); got {items[0]!r} first.",
            param="items"
        )
    vectors = [np.ndim(second) == 1 for _, second in pairs]
    if all(vectors):
        conf, correct = [], []
        for gold, probs in pairs:
            probs = np.asarray(probs, dtype=np.float64)
            top = int(np.argmax(probs))
            conf.append(probs[top])
            correct.append(top == int(gold))
        return np.asarray(conf), np.asarray(correct)
    if any(vectors):
        raise InputError(
            "The items of a calibr metric must all be (gold, probabilities) pairs or all "
            "(correct, confidence) pairs; got both.",
            param="items"
        )
    return (np.asarray([second for _, second in pairs]),
            np.asarray([first for first, _ in pairs]))


def aggregate(items: Sequence[Any], metric: str = "ece", **options: Any) -> float:
    """The calibr metric ``metric`` of lm-eval items (what a registered aggregation
    computes).

    Parameters
    ----------
    items : sequence of pairs
        ``(gold, probabilities)`` (the gold choice's index and each choice's
        probability) or ``(correct, confidence)`` pairs; one form for all.
    metric : str, default "ece"
        A metric of calibr's registry.
    **options
        The metric's options (``bins=15``, ``norm="l1"``, ...).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        (``calibr.InputError``) for no items, items of neither form or of both,
        and what the metric refuses (probabilities outside [0, 1], ...).

    Examples
    --------
    >>> from calibr.lm_eval import aggregate
    >>> items = [(0, [0.7, 0.2, 0.1]), (2, [0.5, 0.3, 0.2]), (1, [0.1, 0.8, 0.1])]
    >>> round(aggregate(items, bins=2), 4)
    0.3333
    """
    conf, correct = _rows(items)
    return _registry.METRICS[metric].function(conf, correct, **options)


class _Aggregation:
    """The aggregation of one registered metric (a class, so that lm-eval's registry
    holds an object that says what it computes)."""

    def __init__(self, metric: str, options: dict[str, Any]) -> None:
        self.metric, self.options = metric, options
        self.__name__ = f"calibr_{metric}"

    def __call__(self, items: Sequence[Any]) -> float:
        return aggregate(items, self.metric, **self.options)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"calibr.lm_eval aggregation {self.metric}({shown})"


def _passthrough(items: Any) -> Any:
    """lm-eval's per-document metric: the item itself, aggregated by calibr."""
    return items


def register(name: str, metric: str = "ece", /, **options: Any) -> str:
    """Register a calibr metric in lm-eval under ``name`` (its metric and its
    aggregation), so that a task can list it in its ``metric_list``.

    Parameters
    ----------
    name : str
        The name in lm-eval (metric and aggregation).
    metric : str, default "ece"
        A metric of calibr's registry.
    **options
        Its options, fixed for this name (``bins=15``, ``norm="max"``, ...).

    Returns
    -------
    str
        ``name``. Registering the same name again with the same metric and
        options does nothing.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a metric that is not calibr's, an option it
        does not have, or a name lm-eval already has for something else.

    Examples
    --------
    >>> from lm_eval.api.registry import get_metric_aggregation
    >>> from calibr.lm_eval import register
    >>> register("calibr_ece_15", "ece", bins=15)
    'calibr_ece_15'
    >>> get_metric_aggregation("calibr_ece_15")
    calibr.lm_eval aggregation ece(bins=15)
    """
    info = _registry.METRICS.get(metric) if isinstance(metric, str) else None
    if info is None:
        raise InputError(
            "`metric` must name a calibr metric (" + ", ".join(map(repr, _registry.METRICS))
            + f"); got {metric!r}.",
            param="metric"
        )
    unknown = [k for k in options if k not in info.options]
    if unknown:
        raise InputError(
            f"The metric {metric!r} has no option {unknown[0]!r}; its options are "
            f"{', '.join(info.options) if info.options else 'none'}.",
            param=unknown[0]
        )
    if REGISTERED.get(name) == (metric, options):
        return name
    if name in REGISTERED or name in metric_registry or name in aggregation_registry:
        raise InputError(
            f"lm-eval already has a metric or aggregation {name!r}"
            + (f" (calibr's {REGISTERED[name][0]} with {REGISTERED[name][1]})"
               if name in REGISTERED else "")
            + "; register this one under another name.",
            param="name"
        )
    register_aggregation(name)(_Aggregation(metric, dict(options)))
    register_metric(metric=name, higher_is_better=info.higher_is_better,
                    output_type=["multiple_choice", "loglikelihood", "generate_until"],
                    aggregation=name)(_passthrough)
    REGISTERED[name] = (metric, dict(options))
    return name


for _metric in _registry.METRICS:  # calibr_<name> for each metric, with its defaults
    register(f"calibr_{_metric}", _metric)
del _metric
