"""calibr in MLflow (the optional extra ``mlflow``).

:func:`log_calibration` logs a calibration summary to the active MLflow run: the
metrics of every group (the evaluation battery by default, ``calibr._registry.BATTERY``)
and its row count as MLflow metrics, under names MLflow accepts (the rule is
:func:`metric_key`), and as artifacts the summary and the per-bin table (CSV), the
reliability diagram (PNG) and the HTML report. :func:`make_metric` makes a metric
of the registry an ``EvaluationMetric`` for ``mlflow.models.evaluate`` that reads
a probability column (or one per class) of the evaluation data or of the model's
output.

The decisions (the names, the files, what is left out) and an example are in
``docs/tools.md``. MLflow is imported here only, never by ``import calibr``.
"""

from __future__ import annotations

import keyword
import posixpath
import re
import tempfile
import warnings
from collections.abc import Hashable, Sequence
from inspect import Parameter, Signature
from pathlib import Path
from typing import Any

import mlflow
import numpy as np
import pandas as pd
from mlflow.models import EvaluationMetric
from pandas.core.groupby import DataFrameGroupBy

from . import _registry
from ._defaults import BINNED_TYPE_DEFAULT, BINS_DEFAULT
from ._html import html_report
from ._input import InputError, InputTypeError
from .frame import Metric, metric_columns, summarise
from .plot import reliability_diagram
from .table import calibration_table

__all__ = ["ARTIFACTS", "key_part", "log_calibration", "make_metric", "metric_key"]

#: The files that ``log_calibration()`` writes under its ``artifact_path``: what each holds.
ARTIFACTS = {
    "summary.csv": "the metrics of every group and its rows (n), as logged",
    "calibration_table.csv": "calibr.calibration_table(): the per-bin table of every group",
    "reliability_diagram.png": "calibr.reliability_diagram() of that table",
    "report.html": "calibr.html_report(): the self-contained page",
}

#: The characters kept in a metric name's parts: those MLflow accepts on every
#: system (letters, digits, ``_``, ``-``, ``.``, space), without ``/`` (calibr's
#: separator of the parts) and ``:`` (refused on Windows).
_KEPT = re.compile(r"[^\w.\- ]")

#: MLflow's longest metric name (``mlflow.utils.validation.MAX_ENTITY_KEY_LENGTH``).
_MAX_KEY = 250

#: The names MLflow gives a metric function's parameters itself (``predictions``,
#: ``targets``, ``metrics``): a column cannot have them here.
_RESERVED = ("predictions", "targets", "metrics")


def key_part(value: Any) -> str:
    """A part of a metric name: ``str(value)`` with every character MLflow may refuse
    or calibr uses as a separator (anything but letters, digits, ``_``, ``-``, ``.``
    and space) replaced by ``_``.

    Examples
    --------
    >>> key_part("gpt-4o (mini)"), key_part(3), key_part("mce(bins=2)")
    ('gpt-4o _mini_', '3', 'mce_bins_2_')
    """
    return _KEPT.sub("_", str(value))


def metric_key(metric: str, group: Sequence[tuple[Hashable, Any]] = ()) -> str:
    """The MLflow name of a metric of a group: ``metric`` alone for all the rows, else
    ``metric/key_value`` for each of the group's keys in order, each part through
    :func:`key_part` (MLflow refuses ``=``, so ``ece/model_a`` stands for
    ``ece`` of ``model='a'``).

    Parameters
    ----------
    metric : str
        The metric's column name in :func:`calibr.summarise` (``"ece"``, ``"n"``).
    group : sequence of (key, value)
        The group's keys and values, e.g. ``[("model", "a"), ("fold", 1)]``.

    Returns
    -------
    str

    Examples
    --------
    >>> metric_key("ece"), metric_key("ece", [("model", "a"), ("fold", 1)])
    ('ece', 'ece/model_a/fold_1')
    """
    return "/".join([key_part(metric), *(f"{key_part(k)}_{key_part(v)}" for k, v in group)])


def _check_key(key: str, metric: str, group: Sequence[tuple[Hashable, Any]]) -> None:
    """Refuse a name MLflow would refuse after calibr's rule: empty, ``.``/``..``
    parts (which MLflow reads as paths), or longer than 250 characters."""
    where = _where(metric, group)
    if posixpath.normpath(key) != key or key.startswith(("/", "..")) or key == ".":
        raise InputError(
            f"The MLflow name of {where}, {key!r}, is not a name MLflow accepts (an empty "
            "part, or '.' or '..'); rename the metric column or the group.",
            param="metrics"
        )
    if len(key) > _MAX_KEY:
        raise InputError(
            f"The MLflow name of {where} has {len(key)} characters; MLflow takes at most "
            f"{_MAX_KEY}. Shorten the names of the metric, the group keys or their values.",
            param="by"
        )


def _where(metric: str, group: Sequence[tuple[Hashable, Any]]) -> str:
    """``metric 'ece' of group model='a'``, for messages."""
    return f"metric {metric!r}" + (
        " of group " + ", ".join(f"{k}={v!r}" for k, v in group) if group else "")


def _rows(p: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None,
          **_: Any) -> float:
    """The ``n`` of a group: its rows, or with frequency weights their total weight (the
    count that a whole-number weight stands for; the HTML report's ``n`` too)."""
    return float(len(y)) if weights is None else float(np.sum(weights))


def log_calibration(
    data: pd.DataFrame | DataFrameGroupBy,
    p: Hashable | Sequence[Hashable] | None = None,
    y: Hashable | None = None,
    metrics: Any = None,
    *,
    p_prefix: str | None = None,
    classes: Sequence | None = None,
    by: Hashable | Sequence[Hashable] | None = None,
    weights: Hashable | None = None,
    bins: int = BINS_DEFAULT,
    type: str = BINNED_TYPE_DEFAULT,
    artifact_path: str = "calibr",
    step: int | None = None,
) -> dict[str, float]:
    """Log the calibration of every group of ``data`` to the active MLflow run.

    Metrics: each metric of every group, and the group's rows as ``n``, named by
    :func:`metric_key` (``ece`` without groups; ``ece/model_a``, ``n/model_a`` with
    ``by="model"``). Artifacts, under ``artifact_path``: ``summary.csv`` (the
    metrics, as :func:`calibr.summarise` gives them, and ``n``),
    ``calibration_table.csv`` (:func:`calibr.calibration_table`),
    ``reliability_diagram.png`` (:func:`calibr.reliability_diagram` of that table)
    and ``report.html`` (:func:`calibr.html_report`).

    Parameters
    ----------
    data : DataFrame or DataFrameGroupBy
        The predictions (pandas), whole or grouped, as for :func:`calibr.summarise`.
    p, y, metrics, p_prefix, classes, by, weights
        As for :func:`calibr.summarise`; ``metrics`` defaults to the evaluation
        battery (``ece``, ``brier``, ``log_loss``, ``auroc``, ``aurc``).
    bins : int, default 10, keyword-only
        The bins of the binned metrics that do not set their own, of the table and of
        the diagram.
    type : {"classwise", "confidence"}, default "classwise", keyword-only
        The multiclass form, likewise.
    artifact_path : str, default "calibr", keyword-only
        The folder of the run's artifacts that receives the files; none of them may
        be there already (nothing is overwritten).
    step : int, optional, keyword-only
        The metrics' step (MLflow's ``log_metrics(step=)``).

    Returns
    -------
    dict
        The metrics logged: MLflow name -> value.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for what the verbs refuse; for an ``artifact_path``
        that is not a relative folder or already holds one of the files; for two
        metrics or groups whose names are the same after :func:`key_part`, a metric
        column named ``n``, or a name MLflow refuses (empty, ``.`` or ``..`` parts,
        more than 250 characters). Nothing is logged then.
    TypeError
        (``calibr.InputTypeError``) for a ``data`` that is not a pandas DataFrame or
        DataFrameGroupBy.

    Notes
    -----
    The run is MLflow's active run; if there is none, MLflow starts one as its own
    ``log_metrics`` does (and it stays active). Every number is computed, and every
    name checked, before anything is logged.
    """
    if not isinstance(data, (pd.DataFrame, DataFrameGroupBy)):
        raise InputTypeError(
            "`data` must be a pandas DataFrame or DataFrameGroupBy (df.groupby(...)); "
            f"got {data.__class__.__name__}.",
            param="data"
        )
    if (not isinstance(artifact_path, str) or not artifact_path
            or posixpath.normpath(artifact_path) != artifact_path
            or artifact_path.startswith(("/", "..")) or artifact_path == "."):
        raise InputError(
            "`artifact_path` must be a relative folder of the run's artifacts, such as "
            f"'calibr' or 'eval/test'; got {artifact_path!r}.",
            param="artifact_path"
        )
    binned = set(_registry.BINNED)
    specs: dict[str, Metric] = {}
    for name, spec, _ in metric_columns(
            _registry.BATTERY if metrics is None else metrics, {}):
        func = spec.func if isinstance(spec.func, str) else getattr(spec.func, "__name__", "")
        if func in binned:
            spec = Metric(spec.func, {"bins": bins, "type": type, **spec.options})
        specs[name] = spec
    if "n" in specs:
        raise InputError(
            "A metric column is named 'n', the name of the rows logged with each group; "
            "name it otherwise (metrics={'my_n': ...}).",
            param="metrics"
        )
    common = {"p_prefix": p_prefix, "classes": classes, "weights": weights, "by": by}
    frame = data.obj if isinstance(data, DataFrameGroupBy) else data
    count = "n"
    while count in specs or count in frame.columns:
        count = "_" + count
    summary = summarise(data, p, y, metrics={**specs, count: _rows}, **common)
    keys = list(summary.columns[:-len(specs) - 1])
    if "n" in keys:
        raise InputError(
            "A group key is named 'n', the name of the rows logged with each group; "
            "rename the column.",
            param="by"
        )
    summary = summary.rename(columns={count: "n"})
    values: dict[str, float] = {}
    origin: dict[str, tuple[str, list]] = {}
    for row in summary.itertuples(index=False, name=None):
        group = list(zip(keys, row[:len(keys)], strict=True))
        for name, value in zip([*specs, "n"], row[len(keys):], strict=True):
            key = metric_key(name, group)
            _check_key(key, name, group)
            if key in values:
                first, first_group = origin[key]
                raise InputError(
                    f"The {_where(first, first_group)} and the {_where(name, group)} have "
                    f"the same MLflow name {key!r} (calibr.mlflow.key_part replaces every "
                    "character but letters, digits, '_', '-', '.' and space by '_'); "
                    "rename one of them.",
                    param="by" if first == name else "metrics"
                )
            values[key], origin[key] = float(value), (name, group)
    table = calibration_table(p, y, bins=bins, type=type, data=data, **common)
    figure = reliability_diagram(table)
    with warnings.catch_warnings():
        # the report computes the same metrics and tables again: its warnings are those
        # that summarise and calibration_table gave above, said once
        warnings.simplefilter("ignore")
        page = html_report(data, p, y, metrics=specs, bins=bins, type=type, **common)

    run = mlflow.active_run() or mlflow.start_run()
    client = mlflow.MlflowClient()
    there = {posixpath.basename(f.path) for f in
             client.list_artifacts(run.info.run_id, artifact_path)}
    clash = sorted(there & set(ARTIFACTS))
    if clash:
        raise InputError(
            f"The run's artifacts already hold {artifact_path}/{clash[0]}; calibr does not "
            "overwrite it. Pass another `artifact_path`.",
            param="artifact_path"
        )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        summary.to_csv(folder / "summary.csv", index=False)
        table.to_csv(folder / "calibration_table.csv", index=False)
        figure.savefig(folder / "reliability_diagram.png", dpi=100)
        (folder / "report.html").write_text(page, encoding="utf-8")
        mlflow.log_metrics(values, step=step)
        mlflow.log_artifacts(tmp, artifact_path)
    return values


class _EvalFn:
    """The ``eval_fn`` of :func:`make_metric`: MLflow passes it the columns its
    parameters name (the probability columns, ``targets``, the weights column), as
    pandas Series; it returns the metric, a float. ``__signature__`` is what MLflow
    reads to find the columns."""

    def __init__(self, metric: str, p: list[str], weights: str | None, classes: Any,
                 options: dict[str, Any]) -> None:
        self.__name__ = metric
        self.metric, self.p, self.weights = metric, p, weights
        self.classes, self.options, self.single = classes, options, len(p) == 1
        params = [*p, "targets", *([weights] if weights is not None else [])]
        self.__signature__ = Signature(
            [Parameter(name, Parameter.POSITIONAL_OR_KEYWORD) for name in params])

    def __call__(self, *columns: pd.Series) -> float | None:
        k = len(self.p)
        probs = [np.asarray(c) for c in columns[:k]]
        y = np.asarray(columns[k])
        prob = probs[0] if self.single else np.column_stack(probs)
        options = dict(self.options)
        if self.weights is not None:
            options["weights"] = np.asarray(columns[k + 1])
        if self.classes is not None:
            options["classes"] = self.classes
        metric = _registry.METRICS[self.metric].function
        if len(y) != 1:
            return float(metric(prob, y, **options))
        # One label: MLflow's probe of the first row before the real call (its
        # _test_first_row, which passes a model's other output columns whole). A metric
        # undefined there (an AUROC of one row), or a probe of mismatched lengths, gives
        # None, which MLflow skips with its warning ("returned None"); docs/tools.md.
        try:
            return float(metric(prob, y, **options))
        except (InputError, InputTypeError):
            return None


def make_metric(
    metric: str,
    /,
    p: str | Sequence[str],
    *,
    classes: Sequence | None = None,
    weights: str | None = None,
    name: str | None = None,
    **options: Any,
) -> EvaluationMetric:
    """A calibr metric for ``mlflow.models.evaluate(extra_metrics=[...])``.

    MLflow hands a metric function the columns its parameters name, from the
    evaluation data or the model's output; this metric reads the probability
    column(s) ``p``, the labels (``targets``) and, with ``weights``, a weights
    column, and returns calibr's number, e.g. ``calibr.ece(p, y, bins=15)``.

    Parameters
    ----------
    metric : str
        A metric of the registry by name (``"ece"``, ``"brier"``, ``"auroc"``, ...).
    p : str or list of str
        The probability column: P(y = 1) for a binary model, or one column per
        class. Each must be a Python identifier other than ``predictions``,
        ``targets`` and ``metrics`` (MLflow finds a column by the name of the
        parameter); map another name to it with
        ``evaluator_config={"col_mapping": {"prob": "P(yes)"}}`` and ``p="prob"``.
    classes : sequence, optional, keyword-only
        The label of each column (as for the metrics); for binary, (negative,
        positive).
    weights : str, optional, keyword-only
        A column of frequency weights (metrics that take weights), under the same
        rule as ``p``.
    name : str, optional, keyword-only
        The metric's name in MLflow (default: ``metric``).
    **options
        The metric's options (``bins=15``, ``type="confidence"``, ``na_rm=True``).

    Returns
    -------
    mlflow.models.EvaluationMetric
        With ``greater_is_better`` from the registry (False for an error or a loss).

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a name that is not a registry metric, an option
        the metric does not have, ``p``/``weights`` that are not identifiers or are
        MLflow's own names, or ``weights`` for a metric that takes none.

    Examples
    --------
    >>> from calibr.mlflow import make_metric
    >>> make_metric("ece", p="prob", bins=10).greater_is_better
    False
    """
    info = _registry.METRICS.get(metric) if isinstance(metric, str) else None
    if info is None:
        raise InputError(
            "`metric` must name a calibr metric ("
            + ", ".join(repr(m) for m in _registry.METRICS) + f"); got {metric!r}.",
            param="metric"
        )
    columns = [p] if isinstance(p, str) else list(p) if isinstance(p, Sequence) else None
    if not columns:
        raise InputError(
            "`p` must name the probability column, or list one column per class; "
            f"got {p!r}.",
            param="p"
        )
    for param, col in [*(("p", c) for c in columns), ("weights", weights)]:
        if col is None:
            continue
        if (not isinstance(col, str) or not col.isidentifier() or keyword.iskeyword(col)
                or col in _RESERVED):
            raise InputError(
                f"`{param}` must name columns by Python identifiers other than "
                f"{', '.join(_RESERVED)} (MLflow passes a column to the parameter of its "
                f"name); got {col!r}. Map a name to the column with evaluator_config="
                "{'col_mapping': {name: column}}.",
                param=param
            )
    if len(set(columns + ([weights] if weights else []))) != len(columns) + bool(weights):
        raise InputError(f"`p` and `weights` must name distinct columns; got {p!r} and "
                         f"{weights!r}.", param="p")
    if weights is not None and not info.weights:
        raise InputError(f"The metric {metric!r} takes no weights; got weights={weights!r}.",
                         param="weights")
    unknown = [k for k in options if k not in info.options and k != "na_rm"]
    if unknown:
        raise InputError(
            f"The metric {metric!r} has no option {unknown[0]!r}; its options are "
            f"{', '.join(info.options) if info.options else 'none'} (and na_rm).",
            param=unknown[0]
        )
    fn = _EvalFn(info.name, columns, weights, classes, options)
    return mlflow.models.make_metric(eval_fn=fn, greater_is_better=info.higher_is_better,
                                     name=name or info.name)
