"""calibr's metrics as scikit-learn scorers (the optional extra ``sklearn``).

:func:`make_scorer` turns any metric of the registry (``calibr._registry.METRICS``)
into a scorer for ``cross_validate``, ``GridSearchCV``, ``LogisticRegressionCV``
and pipelines; :func:`get_scorer` gives the scorers by name, among them the
names of scikit-learn's own proposal (``neg_l1_calibration_error``,
``neg_l2_calibration_error``, ``neg_max_calibration_error``), which are
:func:`calibr.calibration_error` with that ``norm``.

The scorer is scikit-learn's own (a ``sklearn.metrics.make_scorer`` scorer, so
its response method, positive-class column, metadata routing and caching are
scikit-learn's), with one addition: it passes the fitted estimator's
``classes_`` to calibr's ``classes=``. So

* ``predict_proba`` is called (an estimator without it raises scikit-learn's
  error);
* a binary estimator's probabilities are its positive class's column
  (``classes_[1]``), with ``classes=classes_`` as (negative, positive); a
  multiclass one's are the whole matrix, its columns labelled ``classes_``;
* the score is minus the metric (scikit-learn's ``neg_`` convention: a larger
  score is better) for every metric of the registry, which are all errors;
* ``sample_weight`` reaches the metric's ``weights=`` through metadata routing
  (``sklearn.set_config(enable_metadata_routing=True)`` and
  ``scorer.set_score_request(sample_weight=True)``), for the metrics that take
  weights.

The decisions and an example are in ``docs/tools.md``. scikit-learn is imported
here only, never by ``import calibr``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.metrics._scorer import _Scorer

from . import _registry
from ._input import InputError, InputTypeError

__all__ = ["SCORERS", "CalibrScorer", "get_scorer", "make_scorer"]

#: The arguments a scorer sets itself: the data (``p``, ``y``), the estimator's
#: ``classes_``, the rows' ``sample_weight`` (by routing) and ``na_rm``
#: (``predict_proba`` has no missing values to drop).
_SET_BY_SCORER = _registry.DATA_ARGS

#: The scorers by name, each as (metric, options): ``neg_`` and the name of each
#: metric of the registry, with its default options, and the names that scikit-learn
#: proposes for the three norms of ``calibr.calibration_error``.
SCORERS: dict[str, tuple[str, dict[str, Any]]] = {
    **{(name if info.higher_is_better else f"neg_{name}"): (name, {})
       for name, info in _registry.METRICS.items()},
    **{f"neg_{norm}_calibration_error": ("calibration_error", {"norm": norm})
       for norm in ("l1", "l2", "max")},
}


def _greater_is_better(info: _registry.MetricInfo) -> bool:
    """Whether a larger value of the metric is better: the registry's
    ``higher_is_better`` (an AUROC, an accuracy; an error or a loss is not), as the
    gates read it (``docs/tools.md``)."""
    return info.higher_is_better


class CalibrScorer(_Scorer):
    """A scikit-learn scorer of a calibr metric: ``sklearn.metrics.make_scorer``'s
    scorer that passes the estimator's ``classes_`` to the metric's ``classes=``.
    Made by :func:`make_scorer`; used as ``scorer(estimator, X, y)``."""

    def _score(self, method_caller: Callable[..., Any], estimator: Any, X: Any,
               y_true: Any, **kwargs: Any) -> float:
        classes = getattr(estimator, "classes_", None)
        if classes is None:
            raise InputError(
                f"A calibr scorer reads the labels of the columns of predict_proba from "
                f"the estimator's `classes_`, which {type(estimator).__name__} does not "
                "have (`classes`).",
                param="classes"
            )
        return super()._score(method_caller, estimator, X, y_true, classes=classes, **kwargs)


class _Score:
    """``score(y_true, y_proba, *, classes, **options)``: the metric ``name`` on
    scikit-learn's argument order (a class, not a closure, so that a scorer, and a
    fitted ``GridSearchCV`` holding one, pickles); an error of ``y`` against the
    estimator's labels is reported as the ``classes`` it could not match."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def _call(self, y_true: Any, y_proba: Any, classes: Any, options: dict[str, Any],
              weights: Any = None) -> float:
        if weights is not None:
            options = {**options, "weights": weights}
        try:
            return _registry.METRICS[self.__name__].function(y_proba, y_true,
                                                             classes=classes, **options)
        except (InputError, InputTypeError) as err:
            if err.param not in ("y", "classes"):
                raise
            raise InputError(
                f"The labels of y_true cannot be matched to the estimator's `classes` "
                f"({', '.join(map(repr, np.asarray(classes).tolist()))}): {err}",
                param="classes"
            ) from err

    def __call__(self, y_true: Any, y_proba: Any, *, classes: Any, **options: Any) -> float:
        if "sample_weight" in options:
            raise InputError(
                f"The metric {self.__name__!r} takes no weights, so its scorer cannot use "
                "the `sample_weight` routed to it; do not request it "
                "(set_score_request(sample_weight=False)).",
                param="sample_weight"
            )
        return self._call(y_true, y_proba, classes, options)


class _WeightedScore(_Score):
    """:class:`_Score` of a metric that takes weights: ``sample_weight`` (in its
    signature, so that scikit-learn's metadata routing can route it) is ``weights``."""

    def __call__(self, y_true: Any, y_proba: Any, *, classes: Any,  # type: ignore[override]
                 sample_weight: Any = None, **options: Any) -> float:
        return self._call(y_true, y_proba, classes, options, sample_weight)


def make_scorer(metric: str, /, **options: Any) -> CalibrScorer:
    """A scikit-learn scorer of a calibr metric, e.g. ``make_scorer("ece", bins=15)``.

    Parameters
    ----------
    metric : str
        A metric of the registry by name (``"ece"``, ``"mce"``, ``"skce"``,
        ``"mmce"``, ``"calibration_error"``, ``"smece"``, ``"ecce"``, ...).
    **options
        The metric's options (``bins=15``, ``norm="max"``, ...). The data
        arguments are the scorer's: ``p`` is ``predict_proba``'s (the positive
        class's column for a binary estimator), ``y`` the true labels,
        ``classes`` the estimator's ``classes_`` and ``weights`` the routed
        ``sample_weight``.

    Returns
    -------
    CalibrScorer
        A scorer, ``scorer(estimator, X, y)``, whose value is minus the metric (a
        larger score is better). ``set_score_request(sample_weight=True)`` routes
        weights to the metric's ``weights=`` (metrics that take weights).

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a name that is not a registry metric, an
        option the metric does not have, or a data argument given as an option.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_validate
    >>> from calibr.sklearn import make_scorer
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> scores = cross_validate(LogisticRegression(), X, y, cv=3,
    ...                         scoring={"ece": make_scorer("ece", bins=10)})
    >>> bool((scores["test_ece"] <= 0).all())
    True
    """
    info = _registry.METRICS.get(metric) if isinstance(metric, str) else None
    if info is None:
        raise InputError(
            "`metric` must name a calibr metric ("
            + ", ".join(repr(m) for m in _registry.METRICS) + f"); got {metric!r}.",
            param="metric"
        )
    clash = [k for k in options if k in _SET_BY_SCORER or k == "sample_weight"]
    if clash:
        raise InputError(
            f"The option {clash[0]!r} of a scorer is set from the estimator and the data "
            "(p: predict_proba, y: the true labels, classes: the estimator's classes_, "
            "weights: sample_weight through set_score_request); it cannot be given to "
            "make_scorer.",
            param=clash[0]
        )
    unknown = [k for k in options if k not in info.options]
    if unknown:
        raise InputError(
            f"The metric {metric!r} has no option {unknown[0]!r}; its options are "
            f"{', '.join(info.options) if info.options else 'none'}.",
            param=unknown[0]
        )
    score = (_WeightedScore if info.weights else _Score)(info.name)
    return CalibrScorer(score, 1 if _greater_is_better(info) else -1,
                        dict(options), response_method="predict_proba")


def get_scorer(name: str) -> CalibrScorer:
    """The scorer of one of the names of :data:`SCORERS` (a new scorer each call).

    Parameters
    ----------
    name : str
        ``neg_<metric>`` for a registry metric with its defaults (``"neg_ece"``),
        or ``"neg_l1_calibration_error"``, ``"neg_l2_calibration_error"``,
        ``"neg_max_calibration_error"``: :func:`calibr.calibration_error` with
        that ``norm``.

    Returns
    -------
    CalibrScorer

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a name that is not in :data:`SCORERS`.

    Examples
    --------
    >>> from calibr.sklearn import get_scorer
    >>> get_scorer("neg_max_calibration_error")._kwargs
    {'norm': 'max'}
    """
    if not isinstance(name, str) or name not in SCORERS:
        raise InputError(
            f"`name` must be one of calibr's scorers ({', '.join(map(repr, SCORERS))}); "
            f"got {name!r}.",
            param="name"
        )
    metric, options = SCORERS[name]
    return make_scorer(metric, **options)
