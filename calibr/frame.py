"""Data-frame verbs: calibration metrics per group, as a tidy DataFrame.

The rules are stated in ``docs/definitions.md``, section "Data-frame verbs".
R users write::

    df |> group_by(model) |> summarise(ece = ece(p, y), mce2 = mce(p, y, bins = 2))

With calibr and pandas::

    calibr.summarise(df.groupby("model"), p="p", y="y",
                     ece="ece", mce2=calibr.metric("mce", bins=2))

The grouping is pandas' own (a ``DataFrameGroupBy`` with any keys and its
``observed=``, ``dropna=`` and ``sort=``), the result is a fresh DataFrame with
the group keys as columns, one column per metric, one row per group and a
default index, and the numbers are those of calling each metric on each
group's rows. The groups, the columns and the validation of every row at once
are the group layer's (``calibr._groups``); this module holds the metric
specifications and the verb.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from ._binned_metrics import ece, mce
from ._docs import shared_docs
from ._groups import groups_of, resolve_columns, split
from ._kernel_metrics import mmce, skce
from ._params import FLAG, validate_params
from ._validation import InputError, _fmt

__all__ = ["Metric", "metric", "summarise", "METRICS"]

#: The metrics that can be named by a string.
METRICS: dict[str, Callable[..., Any]] = {"ece": ece, "mce": mce, "skce": skce, "mmce": mmce}

#: Arguments that belong to the data, not to a metric: summarise() sets them.
_DATA_ARGS = ("p", "y", "classes", "na_rm")


# --------------------------------------------------------------------------
# metric specifications


@dataclass(frozen=True)
class Metric:
    """A metric with its options, as one column of :func:`summarise`.

    Made by :func:`metric`; ``Metric("mce", {"bins": 2})`` is R's
    ``mce(p, y, bins = 2)``.

    Attributes
    ----------
    func : str or callable
        A name from :data:`METRICS` (``"ece"``, ``"mce"``, ``"skce"``,
        ``"mmce"``) or a callable with calibr's metric signature.
    options : dict
        Keyword arguments passed on every call (e.g. ``{"bins": 2}``).
    """

    func: str | Callable[..., Any]
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def default_name(self) -> str:
        """The column name when none is given: ``"mce"`` or ``"mce(bins=2)"``."""
        base = self.func if isinstance(self.func, str) else _callable_name(self.func)
        if not self.options:
            return base
        args = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{base}({args})"


def metric(func: str | Callable[..., Any], /, **options: Any) -> Metric:
    """A metric with options, for :func:`summarise` (R's ``mce(p, y, bins = 2)``).

    Parameters
    ----------
    func : str or callable
        ``"ece"``, ``"mce"``, ``"skce"`` or ``"mmce"``, or a callable with
        calibr's metric signature (such as ``calibr.mce`` itself, or your own
        function; see :func:`summarise` for what it receives).
    **options
        The metric's options, e.g. ``bins=2``, ``type="confidence"``,
        ``estimator="ul"``. The data arguments (``p``, ``y``, ``classes``,
        ``na_rm``) are set by :func:`summarise` and cannot be given here.

    Returns
    -------
    Metric

    Raises
    ------
    ValueError
        (``calibr.InputError``) for an unknown metric name or an option the
        metric does not have.

    Examples
    --------
    >>> from calibr.frame import metric
    >>> metric("mce", bins=2)
    Metric(func='mce', options={'bins': 2})
    >>> metric("mce", bins=2).default_name
    'mce(bins=2)'
    """
    spec = Metric(func, dict(options))
    _resolve(spec)  # unknown names and options fail here, before any data is read
    return spec


def _callable_name(func: Callable[..., Any]) -> str:
    if isinstance(func, functools.partial):
        inner = _callable_name(func.func)
        if func.keywords:
            args = ", ".join(f"{k}={v!r}" for k, v in func.keywords.items())
            return f"{inner}({args})"
        return inner
    return getattr(func, "__name__", type(func).__name__)


def _unknown_metric(value: Any, specs: bool = False) -> InputError:
    """The error for a ``metrics`` entry that is not a calibr metric."""
    return InputError(
        "`metrics` must name calibr metrics ("
        + ", ".join(repr(m) for m in METRICS)
        + ") or be callables"
        + (" or calibr.metric(...) specs" if specs else "")
        + f"; got {_fmt(value)}."
    )


def _resolve(spec: Metric) -> Callable[..., Any]:
    """The function of ``spec``, after checking its name and option names."""
    if isinstance(spec.func, str):
        if spec.func not in METRICS:
            raise _unknown_metric(spec.func)
        func = METRICS[spec.func]
    elif callable(spec.func):
        func = spec.func
    else:
        raise _unknown_metric(spec.func)
    clash = [k for k in spec.options if k in _DATA_ARGS]
    if clash:
        raise InputError(
            f"The option {clash[0]!r} of metric {spec.default_name!r} is set by the data "
            "arguments of summarise(); pass it there instead."
        )
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # some builtins have no signature: let the call decide
        return func
    try:
        sig.bind_partial(None, None, **spec.options)
    except TypeError:
        known = [
            n for n, prm in list(sig.parameters.items())[2:]
            if prm.kind in (prm.POSITIONAL_OR_KEYWORD, prm.KEYWORD_ONLY) and n not in _DATA_ARGS
        ]
        bad = [k for k in spec.options if k not in sig.parameters]
        raise InputError(
            f"The metric {spec.default_name!r} has no option {bad[0] if bad else '?'!r}; "
            f"its options are {', '.join(known) if known else 'none'}."
        ) from None
    return func


def _as_spec(value: Any) -> Metric:
    if isinstance(value, Metric):
        return value
    if isinstance(value, str) or callable(value):
        return Metric(value)
    raise _unknown_metric(value, specs=True)


def _metric_columns(
    metrics: Any, named: Mapping[str, Any]
) -> list[tuple[str, Metric, Callable[..., Any]]]:
    """``[(column name, spec, function)]`` from ``metrics=`` and ``**named``."""
    items: list[tuple[str, Metric]] = []
    if metrics is None and not named:
        metrics = ("ece", "mce")
    if metrics is not None:
        if isinstance(metrics, Mapping):
            items += [(str(k), _as_spec(v)) for k, v in metrics.items()]
        elif isinstance(metrics, (str, Metric)) or callable(metrics):
            spec = _as_spec(metrics)
            items.append((spec.default_name, spec))
        elif isinstance(metrics, Sequence):
            for m in metrics:
                spec = _as_spec(m)
                items.append((spec.default_name, spec))
        else:
            raise InputError(
                "`metrics` must be a metric, a list of metrics or a dict of them; "
                f"got {type(metrics).__name__}."
            )
    items += [(k, _as_spec(v)) for k, v in named.items()]
    if not items:
        raise InputError("`metrics` must name at least one metric; got none.")
    names = [name for name, _ in items]
    dup = [n for n in names if names.count(n) > 1]
    if dup:
        raise InputError(
            f"Metric column names must be unique; {dup[0]!r} appears {names.count(dup[0])} "
            "times. Name the columns with a dict or keyword arguments, e.g. "
            "mce2=calibr.metric('mce', bins=2)."
        )
    return [(name, spec, _resolve(spec)) for name, spec in items]


# --------------------------------------------------------------------------
# the verb


@validate_params(na_rm=FLAG)
@shared_docs
def summarise(
    data: pd.DataFrame | DataFrameGroupBy,
    p: Hashable | Sequence[Hashable] | None = None,
    y: Hashable | None = None,
    metrics: Any = None,
    *,
    p_prefix: str | None = None,
    classes: Sequence | None = None,
    na_rm: bool = False,
    **named_metrics: Any,
) -> pd.DataFrame:
    """Calibration metrics per group, as a tidy DataFrame (R's ``summarise()``).

    Parameters
    ----------
    data : DataFrame or DataFrameGroupBy
        The predictions, whole or grouped by ``df.groupby(keys, ...)`` with any
        number of keys. The grouping's ``observed=``, ``dropna=`` and ``sort=``
        act as in pandas: with ``observed=False`` an unobserved category
        combination gets a row of NaN (like pandas' ``mean()``); with
        ``dropna=True`` (pandas' default) rows with a missing key belong to no
        group; with ``dropna=False`` they form their own group.
    p : str or list of str, optional
        The probability column: one column name for binary problems (P(y = 1)),
        or a list of column names, one per class. Labels in ``y`` are then
        matched to the column names (as the metrics match them for a DataFrame
        ``p``), unless ``classes=`` gives the label of each column: for R's
        1-based codes ``y + 1``, pass ``classes=range(1, K + 1)``.
    y : str
        The label column.
    metrics : str, callable, Metric, list or dict, default ("ece", "mce")
        The metrics, one column each. A name (``"ece"``, ``"mce"``,
        ``"skce"``, ``"mmce"``), a callable, or :func:`calibr.metric` with
        options (``calibr.metric("mce", bins=2)``). A list names each column
        after its metric (``"mce"``, or ``"mce(bins=2)"`` with options); a dict
        maps column names to metrics.
    p_prefix : str, optional, keyword-only
        Instead of ``p``: every column whose name starts with this prefix is a
        probability column, in the frame's order, and the rest of each name is
        its class label. If the labels in ``y`` are numbers and every rest is a
        plain decimal integer, the class labels are those integers (``y == 3``
        is the class of column ``p_3``); otherwise they are the strings, and
        numeric labels with non-integer names are an error (pass ``classes=``).
    classes : sequence, optional, keyword-only
        The label of each probability column (as for the metrics); overrides
        the labels derived from ``p_prefix``.
    <calibr:na_rm>
    **named_metrics
        More metrics as ``column=metric``, e.g. ``ece="ece"`` or
        ``mce2=calibr.metric("mce", bins=2)`` (R's
        ``summarise(mce2 = mce(p, y, bins = 2))``).

    Returns
    -------
    DataFrame
        A new frame: the group keys as columns (none for an ungrouped
        DataFrame), then one float column per metric, one row per group in
        pandas' group order, and a default RangeIndex.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for unknown columns, metrics or options, and
        for bad probabilities or labels. Errors found in a group end with the
        group and the metric in brackets, e.g. ``[metric 'ece'; group model='a']``.
    TypeError
        If ``data`` is not a DataFrame or DataFrameGroupBy, or ``p`` is not numeric.

    Notes
    -----
    Each number equals calling the metric on the group's rows, e.g.
    ``calibr.mce(g["p"], g["y"], bins=2)``. The rows are validated once and
    each metric is then called on each group's slice of the validated arrays.
    A callable metric is called as ``f(p, y, **options)``: ``p`` is a float64
    array of shape ``(n,)`` or ``(n, K)``, ``y`` holds 0/1 values (binary) or
    0-based class codes, with ``classes=range(K)`` added for multiclass input
    (the calling convention of calibr's metrics).

    ``data`` is never modified. The verb takes ``data`` first, so it chains
    with ``.pipe()``: ``df.groupby("model").pipe(calibr.summarise, p="p", y="y")``.

    Examples
    --------
    R's ``summarise(mce = mce(p, y, bins = 2))`` from the help page of ``mce()``
    (``r_reference/calibrRef/man/mce.Rd``):

    >>> import pandas as pd
    >>> from calibr.frame import metric, summarise
    >>> predictions = pd.DataFrame({"p": [0.10, 0.20, 0.80, 0.90], "y": [0, 0, 1, 1]})
    >>> summarise(predictions, p="p", y="y", mce=metric("mce", bins=2)).round(12)
        mce
    0  0.15

    Per group, several metrics:

    >>> df = pd.DataFrame({
    ...     "model": ["a", "a", "a", "a", "b", "b", "b", "b"],
    ...     "p": [0.1, 0.2, 0.8, 0.9, 0.3, 0.6, 0.7, 0.4],
    ...     "y": [0, 0, 1, 1, 1, 0, 1, 0],
    ... })
    >>> df.groupby("model").pipe(
    ...     summarise, p="p", y="y", metrics=["ece", metric("mce", bins=2)]
    ... ).round(4)
      model   ece  mce(bins=2)
    0     a  0.15         0.15
    1     b  0.50         0.15
    """
    columns = _metric_columns(metrics, named_metrics)
    groups = groups_of(data)
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)

    # unobserved groups (observed=False) keep their NaN, as in pandas' mean()
    values = np.full((groups.n_groups, len(columns)), np.nan)
    sp = split(groups, cols, na_rm)
    extra = {} if sp.binary else {"classes": range(sp.k)}
    for part in sp.parts():
        for j, (name, spec, func) in enumerate(columns):
            with part.errors(f"metric {name!r}"):
                values[part.g, j] = func(part.p, part.y, **spec.options, **extra)

    result = pd.DataFrame(values, columns=[name for name, _, _ in columns])
    if groups.keys is None:
        return result
    clash = [c for c in result.columns if c in groups.keys.columns]
    if clash:
        raise InputError(
            f"The metric column {clash[0]!r} has the name of a group key; name it "
            "differently with a dict or a keyword argument."
        )
    keys = groups.keys.reset_index(drop=True)
    return pd.concat([keys, result], axis=1)

