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
are the group layer's (``calibr._input.groups``); this module holds the metric
specifications and the verb.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from . import _binning, _registry
from ._defaults import BOOTSTRAP_RESAMPLES_DEFAULT
from ._docs import shared_docs
from ._inference.bootstrap import CI_METHODS, SCHEMES, bootstrap, poisson_seed
from ._inference.calibration_tests import (
    TEST_METHODS,
    WEIGHTED,
    calibration_test,
    pvalue_resolution,
)
from ._inference.multitest import P_ADJUST_METHODS, adjust_array, below_resolution
from ._input import (
    FLAG,
    LEVEL,
    MAX_RESAMPLES,
    RNG,
    InputError,
    Integer,
    Optional,
    Options,
    arg,
    check_bin_cells,
    check_options,
    fmt,
    lazy_backend,
    metric_value,
    renamed,
    resolved_options,
    validate_params,
)
from ._input.frames import eager_frame, foreign_kind, frame_verb, lazy_grouping, to_callers_frame
from ._input.groups import (
    Split,
    group_seeds,
    groups_of,
    resolve_columns,
    split,
    weights_column,
)
from ._input.warning import GroupWarnings
from ._kernels import grouped
from ._kernels import scores as _ks
from ._kernels.top_label import top_label
from ._metrics.kernel import ROUNDING_FLOOR, as_hits
from ._metrics.scores import UNDEFINED

__all__ = ["CalibrationTest", "Metric", "metric", "summarise", "test", "METRICS", "TESTS"]

class _MetricFunctions(Mapping):
    """The public function of each metric of the registry, by name: a read-only view
    of ``calibr._registry.METRICS`` (which has each metric's kind and paths)."""

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return _registry.METRICS[name].function

    def __iter__(self):
        return iter(_registry.METRICS)

    def __len__(self) -> int:
        return len(_registry.METRICS)

    def __repr__(self) -> str:
        return f"METRICS({', '.join(_registry.METRICS)})"


#: The metrics that can be named by a string: name -> public function, read-only
#: (the registry's, ``calibr._registry``).
METRICS: Mapping[str, Callable[..., Any]] = _MetricFunctions()

#: Arguments that belong to the data, not to a metric: summarise() sets them.
_DATA_ARGS = ("p", "y", "classes", "na_rm")

#: The methods of calibr.calibration_test() that summarise(tests=...) runs.
TESTS: tuple[str, ...] = TEST_METHODS

#: The option rules of calibration_test(), which test specs are checked with.
_TEST_RULES = calibration_test.__calibr_rules__

#: The columns each test adds, after its name: ``skce_statistic``, ``skce_pvalue``,
#: ``skce_small_n`` (the group has fewer rows than the least n from which the test
#: holds its level: ``calibr._inference.calibration_tests.MIN_N``).
TEST_FIELDS = ("statistic", "pvalue", "small_n")


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
        ``"mmce"``, ``"calibration_error"``, ``"smece"``) or a callable with
        calibr's metric signature.
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
        A calibr metric by name (:data:`METRICS`: ``"ece"``, ``"mce"``,
        ``"skce"``, ``"mmce"``, ``"calibration_error"``, ``"smece"``), or a
        callable with calibr's metric signature (such as ``calibr.mce`` itself, or your own
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
        + f"){arg('metrics', 'python', ' or be callables')}"
        + (" or calibr.metric(...) specs" if specs else "")
        + f"; got {fmt(value)}.",
        param="metrics"
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
    if "weights" in spec.options:  # one weight per row of the data, not per group
        raise InputError(
            f"The option 'weights' of metric {getattr(spec.func, '__name__', spec.func)!r} "
            "is one weight per row of the data; name the weights column with "
            "summarise(..., weights='column') instead, which gives each group its rows' weights.",
            param="metrics"
        )
    clash = [k for k in spec.options if k in _DATA_ARGS]
    if clash:
        raise InputError(
            f"The option {clash[0]!r} of metric {spec.default_name!r} is set by the data "
            f"arguments of {arg('summarise', 'function')}; pass it there instead.",
            param="metrics"
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
            if prm.kind in (prm.POSITIONAL_OR_KEYWORD, prm.KEYWORD_ONLY)
            and n not in (*_DATA_ARGS, "weights")
        ]
        bad = [k for k in spec.options if k not in sig.parameters]
        raise InputError(
            f"The metric {spec.default_name!r} has no option {bad[0] if bad else '?'!r}; "
            f"its options are {', '.join(known) if known else 'none'}.",
            param="metrics"
        ) from None
    return func


def _as_spec(value: Any) -> Metric:
    if isinstance(value, Metric):
        return value
    if isinstance(value, str) or callable(value):
        return Metric(value)
    raise _unknown_metric(value, specs=True)


#: The parameters of summarise() after ``data``, which a mistyped keyword may have meant.
_VERB_PARAMS = ("p", "y", "metrics", "p_prefix", "classes", "na_rm", "tests", "rng", "weights",
                "confidence_level", "ci_method", "n_resamples", "p_adjust")

#: Other words for those parameters (too far from them for difflib to find).
_ALIASES = {
    **dict.fromkeys(("prob", "probs", "proba", "probability", "probabilities", "pred", "preds",
                     "prediction", "predictions", "score", "scores"), "p"),
    **dict.fromkeys(("label", "labels", "target", "targets", "truth", "outcome", "outcomes",
                     "actual"), "y"),
    **dict.fromkeys(("prefix", "prob_prefix"), "p_prefix"),
    **dict.fromkeys(("seed", "random_state", "random_seed"), "rng"),
    **dict.fromkeys(("level", "conf_level", "confidence", "ci_level"), "confidence_level"),
    **dict.fromkeys(("resamples", "n_boot", "B"), "n_resamples"),
    **dict.fromkeys(("w", "weight", "sample_weight"), "weights"),
}

#: Keywords that ask for groups, which summarise() takes from ``by=`` or a DataFrameGroupBy.
_GROUP_WORDS = ("group", "groups", "group_by", "groupby", "keys")


def _named_spec(key: str, value: Any) -> Metric:
    """The spec of the keyword argument ``key=value`` of summarise(), which names a
    metric column. A value that is no metric is most likely meant for a parameter
    whose name was mistyped: the error says which parameter, if one is close."""
    if isinstance(value, Metric) or callable(value) or (isinstance(value, str)
                                                         and value in METRICS):
        return _as_spec(value)
    lower = key.lower()
    guess = _ALIASES.get(lower) or next(iter(difflib.get_close_matches(lower, _VERB_PARAMS,
                                                                      n=1)), None)
    if lower in _GROUP_WORDS:
        keys = fmt(value) if isinstance(value, (str, list, tuple)) else "keys"
        hint = (f"; for metrics per group, pass by={keys}, or data.groupby({keys}) as "
                "`data`.")
    elif guess is not None:
        hint = f"; did you mean `{guess}=`?"
    else:
        hint = "."
    raise InputError(
        f"`{key}={fmt(value)}` was taken as an output column named {key!r} (keyword "
        f"arguments of {arg('summarise', 'function')} that are not its parameters name metric "
        "columns), but "
        f"{fmt(value)} is not a calibr metric ({', '.join(repr(m) for m in METRICS)}), a "
        "callable or a calibr.metric(...) spec" + hint,
        param=key
    )


def metric_columns(
    metrics: Any, named: Mapping[str, Any]
) -> list[tuple[str, Metric, Callable[..., Any]]]:
    """``[(column name, spec, function)]`` from ``metrics=`` and ``**named``: the
    columns of :func:`summarise` (and of its Dask backend), checked and resolved."""
    items: list[tuple[str, Metric]] = []
    if metrics is None and not named:
        metrics = _registry.DEFAULT_METRICS
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
                f"got {type(metrics).__name__}.",
                param="metrics"
            )
    items += [(k, _named_spec(k, v)) for k, v in named.items()]
    if not items:
        raise InputError("`metrics` must name at least one metric; got none.", param="metrics")
    names = [name for name, _ in items]
    dup = [n for n in names if names.count(n) > 1]
    if dup:
        raise InputError(
            f"Metric column names must be unique; {dup[0]!r} appears {names.count(dup[0])} "
            "times. Name the columns with a dict or keyword arguments, e.g. "
            "mce2=calibr.metric('mce', bins=2).",
            param="metrics"
        )
    return [(name, spec, _resolve(spec)) for name, spec in items]


# --------------------------------------------------------------------------
# calibration-test specifications


@dataclass(frozen=True)
class CalibrationTest:
    """A calibration test with its options, as columns of :func:`summarise`
    (``tests=``). Made by :func:`test`.

    Attributes
    ----------
    method : str
        A method of :func:`calibr.calibration_test` (:data:`TESTS`).
    options : dict
        Keyword arguments of :func:`calibr.calibration_test` passed on every
        call (e.g. ``{"n_resamples": 500}``).
    """

    __test__ = False  # not a pytest test class, whatever module imports it

    method: str
    options: dict[str, Any] = field(default_factory=dict)


def known_test_options() -> list[str]:
    """The options a test spec may set: those of calibration_test() but the data's
    (the weights among them), the method and the random numbers (summarise() sets
    them)."""
    return list(_TEST_OPTIONS)


#: The options of calibration_test() that a test spec may set, in its order.
_TEST_OPTIONS = tuple(
    n for n in inspect.signature(calibration_test).parameters
    if n not in ("p", "y", "method", "rng", "weights", *_DATA_ARGS)
)


def test(method: str, /, **options: Any) -> CalibrationTest:
    """A calibration test with options, for ``summarise(tests=...)``.

    Parameters
    ----------
    method : {"skce", "skce_block", "consistency", "spiegelhalter", \
"hosmer_lemeshow", "ks", "kuiper"}
        The method of :func:`calibr.calibration_test`.
    **options
        Its options: ``n_resamples``, ``bandwidth``, ``type``, ``metric``,
        ``bins``, ``estimator``, ``groups``, ``ddof``, checked as
        :func:`calibr.calibration_test` checks them (and, as there, ignored by
        the methods they do not apply to). The data arguments (``p``, ``y``,
        ``classes``, ``na_rm``) and ``rng`` are set by :func:`summarise`.

    Returns
    -------
    CalibrationTest

    Raises
    ------
    ValueError
        (``calibr.InputError``) for an unknown method, an unknown option or a
        bad option value.

    Examples
    --------
    >>> import calibr
    >>> calibr.test("consistency", metric="mce", n_resamples=500)
    CalibrationTest(method='consistency', options={'metric': 'mce', 'n_resamples': 500})
    """
    spec = CalibrationTest(method, dict(options))
    _check_test(spec, "method")
    return spec


test.__test__ = False  # type: ignore[attr-defined] # not a pytest test function


def _check_test(spec: CalibrationTest, argument: str) -> None:
    """Check the method and the options of ``spec`` (nothing is computed)."""
    if not isinstance(spec.method, str) or spec.method not in TESTS:
        raise InputError(
            f"`{argument}` must name calibration tests ("
            + ", ".join(repr(m) for m in TESTS)
            + f"); got {fmt(spec.method)}.",
            param=argument
        )
    if not isinstance(spec.options, Mapping):
        raise InputError(
            f"The options of test {spec.method!r} must be a dict; got "
            f"{type(spec.options).__name__}.",
            param="tests"
        )
    known = known_test_options()
    for key in spec.options:
        if key in _DATA_ARGS or key in ("rng", "weights"):
            where = arg(key) if key in ("rng", "weights") else "its data arguments"
            raise InputError(
                f"The option {key!r} of test {spec.method!r} is set by "
                f"{arg('summarise', 'function')} "
                f"({where}); pass it there instead.",
                param="tests"
            )
        if key not in known:
            raise InputError(
                f"The test {spec.method!r} has no option {key!r}; its options are "
                f"{', '.join(known)}.",
                param="tests"
            )
    check_options(_TEST_RULES, spec.options)


def _as_test(value: Any) -> CalibrationTest:
    if isinstance(value, CalibrationTest):
        _check_test(value, "tests")
        return value
    if isinstance(value, str):
        spec = CalibrationTest(value)
        _check_test(spec, "tests")
        return spec
    raise InputError(
        "`tests` must hold calibration test names ("
        + ", ".join(repr(m) for m in TESTS)
        + f") or calibr.test(...) specs; got {fmt(value)}.",
        param="tests"
    )


def named_tests(tests: Any) -> list[tuple[str, CalibrationTest]]:
    """``[(name, spec)]`` from ``tests=``; each test adds the columns
    ``<name>_statistic`` and ``<name>_pvalue``."""
    if tests is None:
        return []
    if isinstance(tests, Mapping):
        items = []
        for k, v in tests.items():
            if not isinstance(k, str) or not k:
                raise InputError(f"`tests` must map non-empty strings to tests; got the key "
                                 f"{fmt(k)}.", param="tests")
            items.append((k, _as_test(v)))
    elif isinstance(tests, (str, CalibrationTest)):
        spec = _as_test(tests)
        items = [(spec.method, spec)]
    elif isinstance(tests, Sequence):
        items = [(spec.method, spec) for spec in map(_as_test, tests)]
    else:
        raise InputError(
            "`tests` must be a test name, a calibr.test(...) spec, a list or a dict of "
            f"them; got {type(tests).__name__}.",
            param="tests"
        )
    names = [name for name, _ in items]
    dup = [n for n in names if names.count(n) > 1]
    if dup:
        raise InputError(
            f"`tests` must name each test once; {dup[0]!r} appears {names.count(dup[0])} "
            "times. Name them with a dict, e.g. tests={'consistency_mce': "
            "calibr.test('consistency', metric='mce')}.",
            param="tests"
        )
    return items


def columns_of_tests(tests: list[tuple[str, CalibrationTest]]) -> list[str]:
    """The output columns of :func:`named_tests`' tests, in :func:`summarise`'s order."""
    return [f"{name}_{what}" for name, _ in tests for what in TEST_FIELDS]


# --------------------------------------------------------------------------
# the verb


@renamed(ci="confidence_level", ci_resamples="n_resamples")
@frame_verb  # polars / Arrow frames and by= (calibr/_input/frames.py)
@validate_params(na_rm=FLAG, rng=RNG, confidence_level=Optional(LEVEL),
                 ci_method=Options(*CI_METHODS, "BCa"), n_resamples=Integer(1, MAX_RESAMPLES),
                 p_adjust=Optional(Options(*P_ADJUST_METHODS)), scheme=Options(*SCHEMES))
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
    tests: Any = None,
    rng: int | np.random.Generator | None = None,
    weights: Hashable | None = None,
    confidence_level: float | None = None,
    ci_method: str = "percentile",
    n_resamples: int = BOOTSTRAP_RESAMPLES_DEFAULT,
    p_adjust: str | None = None,
    by: Hashable | Sequence[Hashable] | None = None,
    scheme: str = "multinomial",
    row_key: Hashable | None = None,
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
        group; with ``dropna=False`` they form their own group. Also a polars
        DataFrame or an Arrow Table (the result is then of that type), or a
        lazy source: a polars LazyFrame, a DuckDB relation, a Spark DataFrame
        (``docs/engines.md``).
    p : str or list of str, optional
        The probability column: one column name for binary problems (P(y = 1)),
        or a list of column names, one per class. Labels in ``y`` are then
        matched to the column names (as the metrics match them for a DataFrame
        ``p``), unless ``classes=`` gives the label of each column: for R's
        1-based codes ``y + 1``, pass ``classes=range(1, K + 1)``. Numeric
        labels and columns numbered after one prefix (``["p_0", "p_1",
        "p_2"]``) follow the rule of ``p_prefix``: the label 2 is the class of
        ``p_2``.
    y : str
        The label column.
    metrics : str, callable, Metric, list or dict, default ("ece", "mce")
        The metrics, one column each. A name (``"ece"``, ``"mce"``,
        ``"skce"``, ``"mmce"``, ``"calibration_error"``, ``"smece"``: the
        registry, ``calibr.frame.METRICS``), a callable, or :func:`calibr.metric` with
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
    tests : str, CalibrationTest, list or dict, optional, keyword-only
        Calibration tests (:func:`calibr.calibration_test`) to run on each
        group: a method name (``"skce"``, ``"skce_block"``, ``"consistency"``,
        ``"spiegelhalter"``, ``"hosmer_lemeshow"``, ``"ks"``, ``"kuiper"``),
        :func:`calibr.test` with
        options (``calibr.test("consistency", metric="mce")``), a list of these
        (each named after its method, which must then be unique) or a dict
        mapping names to them. Each test adds the float columns
        ``<name>_statistic`` and ``<name>_pvalue`` after the metric columns, and
        the boolean column ``<name>_small_n``: True where the group has fewer
        rows than the least n from which the test holds its level (the
        result's ``small_n``; ``docs/calibration_tests.md``, "Small samples"):
        its p-value is not to be relied on (True for an unobserved group too:
        0 rows).
    rng : None, int or numpy.random.Generator, keyword-only
        The random numbers of the tests (see Notes): a seed (the same seed
        gives the same frame), a Generator, or None for fresh entropy.
    weights : str, optional, keyword-only
        The name of a column of frequency weights, one nonnegative finite
        number per row (``docs/definitions.md``, "Frequency weights"): each
        group's metrics are those of the metric called on the group's rows
        with ``weights=`` their weights, so a whole-number weight w counts its
        row w times. Every weight of a row in a group is checked (also of a
        row ``na_rm=True`` drops: a missing weight is an error), and each
        group's kept weights must have a positive total. Metrics that refuse
        weights refuse them here (``estimator="ul"``, ``bandwidth="median"``;
        ``"uq"`` needs whole numbers); a callable metric must take a keyword
        ``weights``. Of the ``tests``, only ``"ks"`` and ``"kuiper"`` take
        weights (:func:`calibr.calibration_test`, the same frequency weights);
        the others are refused. A metric column named ``weights`` must be given
        by ``metrics={"weights": ...}``.
    confidence_level : float, optional, keyword-only
        A confidence level (strictly between 0 and 1; ``ci``, its old name,
        still works and warns): every metric column
        ``m`` is followed by ``m_low`` and ``m_high``, the bounds of its
        bootstrap interval in each group (:func:`calibr.bootstrap`; see
        Notes). Not with ``weights``.
    ci_method : {"percentile", "basic", "bca"}, default "percentile", keyword-only
        The interval of ``confidence_level`` (``method`` of
        :func:`calibr.bootstrap`; here ``method`` would read as a test's).
    n_resamples : int, default 9999, keyword-only
        Bootstrap resamples per group for ``confidence_level``, 1 to
        10,000,000 (``ci_resamples``, its old name, still works and warns);
        a test's own are ``calibr.test(method, n_resamples=...)``.
    p_adjust : str, optional, keyword-only
        Adjust each test's p-values for multiple comparisons across the groups
        (:func:`calibr.p_adjust`, R's method names: ``"holm"``, ``"hochberg"``,
        ``"hommel"``, ``"bonferroni"``, ``"BH"``, ``"BY"``, ``"fdr"``,
        ``"none"``): each ``<name>_pvalue`` column is followed by
        ``<name>_pvalue_adjusted``, the adjusted p-values of that test over the
        rows of the result (unobserved groups, NaN, do not count), at the
        resolution of a resampling test's p-values (see Notes). Each test is
        adjusted on its own. Needs ``tests``.
    by : str or list of str, optional, keyword-only
        Group ``data`` (a DataFrame of any supported kind) by these columns, as
        ``data.groupby(by)`` does in pandas: keys sorted, rows whose key is
        missing in no group (pandas' ``dropna=True``).
    scheme : {"multinomial", "poisson"}, default "multinomial", keyword-only
        The resampling of ``confidence_level``'s intervals (``scheme`` of
        :func:`calibr.bootstrap`): ``"poisson"`` resamples every group with one
        seed and the rows' keys (see Notes), and is computed on the engine for a
        lazy source (``docs/engines.md``, "Intervals on the engine"). Needs
        ``confidence_level``.
    row_key : str, optional, keyword-only
        With ``scheme="poisson"``: the column of ``data`` that keys each row
        (integers, none missing, no two equal in all of ``data``); default: the
        row's position in ``data`` (0, 1, ...). Required for a lazy source.
    **named_metrics
        More metrics as ``column=metric``, e.g. ``ece="ece"`` or
        ``mce2=calibr.metric("mce", bins=2)`` (R's
        ``summarise(mce2 = mce(p, y, bins = 2))``). A keyword whose value is
        not a metric is an error that names the parameter it may have been
        meant for (``prob="p_0"``: "did you mean `p=`?").

    Returns
    -------
    DataFrame
        A new frame: the group keys as columns (none for an ungrouped
        DataFrame), then one float column per metric, then two per test, one
        row per group in pandas' group order, and a default RangeIndex.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for unknown columns, metrics or options, and
        for bad probabilities, labels or weights (negative, missing,
        infinite, a group whose weights total 0), weights with ``tests`` or
        with a metric that refuses them. Errors found in a group end with the
        group and the metric in brackets, e.g. ``[metric 'ece'; group model='a']``.
    TypeError
        If ``data`` is not a DataFrame or DataFrameGroupBy, or ``p`` or the
        weights column is not numeric.

    Notes
    -----
    Each number equals calling the metric on the group's rows, e.g.
    ``calibr.mce(g["p"], g["y"], bins=2)``, bit for bit. The rows are
    validated once; calibr's own metrics (by name, or the functions
    themselves) are then computed for all groups at once by kernels that
    repeat, per group, the arithmetic of a call on the group. Any other
    callable is called on each group's slice of the validated arrays, as
    ``f(p, y, **options)``: ``p`` is a float64 array of shape ``(n,)`` or
    ``(n, K)``, ``y`` holds 0/1 values (binary) or 0-based class codes, with
    ``classes=range(K)`` added for multiclass input (the calling convention of
    calibr's metrics). It must return a real number (a Python or numpy int or
    float, or a 0-d array; NaN and infinities too); anything else, None
    included, is an error naming the metric and the group.

    **Weights.** With ``weights``, every metric is called per group on the
    group's validated rows with ``weights=`` their float64 weights (the
    all-groups kernels have no weights), so each number is bit for bit that
    of ``calibr.ece(g["p"], g["y"], weights=g["w"])``.

    **Intervals.** With ``confidence_level``, the bounds of metric ``m`` in a
    group are those of ``calibr.bootstrap(p, y, m,
    confidence_level=confidence_level, method=ci_method,
    n_resamples=n_resamples, rng=gen, **options)`` on the group's validated
    rows, with the generator ``gen`` made from the first child
    (``.spawn(1)[0]``) of the group's seed sequence described under
    **Tests**; every metric of a group starts a fresh generator from it, so
    all the metrics of a group are resampled on the same rows. With
    ``scheme="poisson"`` the bounds are those of ``calibr.bootstrap(p, y, m,
    scheme="poisson", row_key=keys, rng=seed, ...)`` on the group's validated
    rows and their keys, with one seed for every group: ``rng`` (an integer
    below 2**64), a Generator's next 64-bit integer, or fresh entropy
    (``docs/bootstrap.md``, "In the verbs").

    **Tests.** Each test's two numbers are those of
    ``calibr.calibration_test(p, y, method, rng=gen, **options)`` called on the
    group's validated rows (as a callable metric is called), with the random
    generator ``gen`` of the group: the group in row ``g`` of the result (pandas'
    group order, counting unobserved groups) has the seed sequence
    ``numpy.random.SeedSequence(rng).spawn(n_rows)[g]`` (for a Generator
    ``rng``: ``rng.bit_generator.seed_seq.spawn(n_rows)[g]``, which advances its
    spawn count), and every test of the group starts a fresh generator from it,
    ``numpy.random.default_rng(that)`` (the Generator's bit generator type).
    So with a seed a group's p-values do not depend on the order in which
    groups are computed, nor on the other tests asked for, nor on the rows of
    the other groups; they do depend on the group's position, so reproduce a
    group with the same grouping of the same data. Unobserved groups
    (``observed=False``) get NaN. A group that a test refuses (e.g.
    ``"hosmer_lemeshow"`` with fewer than 3 distinct risks, or a binary-only
    test on multiclass data) raises the test's error naming the group, e.g.
    ``[test 'hosmer_lemeshow'; group model='a']``; unknown tests and bad
    options raise before anything is computed.

    **Adjusted p-values.** With ``p_adjust``, ``<name>_pvalue_adjusted`` is
    ``calibr.p_adjust(result["<name>_pvalue"], p_adjust, resolution=r)``: each
    test adjusted across the groups of the result, the raw p-values kept beside
    it (``docs/definitions.md``, "Multiple comparisons"). ``r`` is None for an
    analytic test and ``1 / n_resamples`` for one that resamples (``"skce"``,
    ``"consistency"``), whose adjusted column is followed by the boolean
    ``<name>_pvalue_below_resolution``: True where the p-value is below its
    resolution (0 of ``n_resamples`` resamples), so that it is "< r" and its
    adjusted value an upper bound (``docs/calibration_tests.md``, "Resolution of
    a resampled p-value").

    ``data`` is never modified. The verb takes ``data`` first, so it chains
    with ``.pipe()``: ``df.groupby("model").pipe(calibr.summarise, p="p", y="y")``.

    <calibr:dask_verb>

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

    With a calibration test per group, reproducible by its seed:

    >>> out = df.groupby("model").pipe(
    ...     summarise, p="p", y="y", metrics="ece", tests="spiegelhalter", rng=0
    ... )
    >>> out.drop(columns="spiegelhalter_small_n").round(4)
      model   ece  spiegelhalter_statistic  spiegelhalter_pvalue
    0     a  0.15                  -0.8333                0.4047
    1     b  0.50                   0.6804                0.4962

    Two rows per group are fewer than the 5 from which Spiegelhalter's test holds
    its level (``docs/calibration_tests.md``, "Small samples"), and say so:

    >>> out["spiegelhalter_small_n"].tolist()
    [True, True]

    Adjusted for the two groups (Holm):

    >>> df.groupby("model").pipe(
    ...     summarise, p="p", y="y", metrics="ece", tests="spiegelhalter", p_adjust="holm"
    ... ).drop(columns=["spiegelhalter_statistic", "spiegelhalter_small_n"]).round(4)
      model   ece  spiegelhalter_pvalue  spiegelhalter_pvalue_adjusted
    0     a  0.15                0.4047                         0.8093
    1     b  0.50                0.4962                         0.8093
    """
    if p_adjust is not None:
        if tests is None:
            raise InputError(
                f"`p_adjust` adjusts the p-values of {arg('tests')}, and there are none; got "
                f"p_adjust = {p_adjust!r} without tests. Pass {arg('tests', 'hint')}..., or leave "
                "`p_adjust` out.",
                param="p_adjust"
            )
        adjusted = [(name, pvalue_resolution(spec.method, spec.options))
                    for name, spec in named_tests(tests)]
        out = summarise(data, p, y, metrics, p_prefix=p_prefix, classes=classes, na_rm=na_rm,
                        tests=tests, rng=rng, weights=weights,
                        confidence_level=confidence_level, ci_method=ci_method,
                        n_resamples=n_resamples, by=by, scheme=scheme, row_key=row_key,
                        **named_metrics)
        if isinstance(out, pd.DataFrame):
            return _adjusted(out, adjusted, p_adjust)
        kind = foreign_kind(out)
        if kind is not None:  # a lazy engine's result, collected: polars or Arrow
            return to_callers_frame(_adjusted(eager_frame(out)[0], adjusted, p_adjust), kind)
        # a lazy result (docs/dask.md): the adjustment reads every group, in one partition
        if out.npartitions != 1:
            out = out.repartition(npartitions=1)
        return out.map_partitions(_adjusted, adjusted, p_adjust,
                                  meta=_adjusted(out._meta, adjusted, p_adjust))
    if scheme == "poisson":
        if confidence_level is None:
            raise InputError(
                f'{arg("scheme", "setting", "poisson")} resamples the rows of the intervals of '
                "`confidence_level`, and there are none; pass confidence_level=..., or leave "
                "`scheme` out.", param="scheme")
        rng = poisson_seed(rng)  # one seed for every group (a bad seed: before any query)
    elif row_key is not None:
        raise InputError(
            f'`row_key` keys the rows of {arg("scheme", "setting", "poisson")}; the '
            "multinomial scheme draws rows by position.", param="row_key")
    lazy = lazy_backend(data)
    if lazy is not None:  # a lazy source: docs/dask.md, docs/engines.md
        data, grouping = lazy_grouping(lazy, data, by)
        poisson = {} if scheme == "multinomial" else dict(scheme=scheme, row_key=row_key)
        return lazy.summarise(data, p, y, metrics, p_prefix=p_prefix, classes=classes,
                              na_rm=na_rm, tests=tests, rng=rng, weights=weights,
                              confidence_level=confidence_level, ci_method=ci_method,
                              n_resamples=n_resamples,
                              named_metrics=named_metrics, **grouping, **poisson)
    columns = metric_columns(metrics, named_metrics)
    test_columns = named_tests(tests)
    _check_unique([name for name, _, _ in columns], columns_of_tests(test_columns))
    if confidence_level is not None:
        check_interval_names([name for name, _, _ in columns],
                              columns_of_tests(test_columns))
    if weights is not None:
        _check_weighted(columns, test_columns, confidence_level)
    groups = groups_of(data)
    if groups.keys is not None:
        clash = [c for c in columns_of_tests(test_columns) if c in groups.keys.columns]
        if clash:
            raise InputError(
                f"The test column {clash[0]!r} has the name of a group key; name the test "
                "differently with a dict, e.g. tests={'t': ...}.",
                param="tests"
            )
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
    weights = weights_column(groups.frame, weights)
    keys = None if scheme == "multinomial" else _row_keys(groups, cols, row_key, na_rm)

    # unobserved groups (observed=False) keep their NaN, as in pandas' mean()
    values = np.full((groups.n_groups, len(columns)), np.nan)
    sp = split(groups, cols, na_rm, weights)
    said = GroupWarnings()  # groups where a metric is undefined, rows it warns about
    # weighted: every metric per group (the all-groups kernels have no weights)
    done = _all_groups(sp, columns, values, said) if weights is None else set()
    extra = {} if sp.binary else {"classes": range(sp.k)}
    # callables, or every metric when a group fails (its error names the group)
    rest = [(j, c) for j, c in enumerate(columns) if done is None or j not in done]
    if done is None:
        said = GroupWarnings()  # the per-group loop finds them again
    if rest:
        for part in sp.parts():
            weighted = {} if part.w is None else {"weights": part.w}
            for j, (name, spec, func) in rest:
                with part.errors(f"metric {name!r}"):  # any error names the group
                    try:
                        with said.gathering(name, part.g):
                            value = func(part.p, part.y, **spec.options, **extra, **weighted)
                    except InputError as err:
                        if err.code != UNDEFINED:
                            raise
                        said.undefined(name, part.g)
                        continue  # NaN, and one warning below
                    values[part.g, j] = metric_value(value, f"The metric {name!r}",
                                                     param="metrics")
    said.warn(sp.groups.describe)

    result = pd.DataFrame(values, columns=[name for name, _, _ in columns])
    seeds = (group_seeds(rng, sp.groups.n_groups)
             if (test_columns or confidence_level is not None) else None)
    if confidence_level is not None:
        bounds = _run_intervals(sp, columns, seeds, extra,
                                dict(confidence_level=confidence_level, method=ci_method,
                                     n_resamples=n_resamples),
                                None if keys is None else (rng, sp.by_group(keys)))
        parts = []
        for j, (name, _, _) in enumerate(columns):
            parts += [result[[name]], pd.DataFrame(bounds[:, 2 * j:2 * j + 2],
                                                   columns=[f"{name}_low", f"{name}_high"])]
        result = pd.concat(parts, axis=1)
    if test_columns:
        tested = pd.DataFrame(_run_tests(sp, test_columns, seeds, extra),
                              columns=columns_of_tests(test_columns))
        for name, _ in test_columns:  # an unobserved group (0 rows, NaN) is below any n
            tested[f"{name}_small_n"] = tested[f"{name}_small_n"].fillna(1.0).astype(bool)
        result = pd.concat([result, tested], axis=1)
    if groups.keys is None:
        return result
    check_metric_names(result.columns, groups.keys.columns)
    keys = groups.keys.reset_index(drop=True)
    return pd.concat([keys, result], axis=1)


def check_metric_names(columns: Sequence, keys: Sequence) -> None:
    """Refuse a column of the summary named like a group key (the pandas, lazy and
    Dask paths' one rule; docs/engines.md, "Names").

    Raises
    ------
    InputError
        Naming the first such column.
    """
    clash = [c for c in columns if c in set(keys)]
    if clash:
        raise InputError(
            f"The metric column {clash[0]!r} has the name of a group key; name it "
            "differently with a dict or a keyword argument.",
            param="metrics"
        )


def _adjusted(result: pd.DataFrame, tests: list[tuple[str, float | None]],
              method: str) -> pd.DataFrame:
    """``result`` with ``<name>_pvalue_adjusted`` after each test's ``<name>_pvalue``:
    :func:`calibr.p_adjust` over the rows (the groups), NaN out of the count, at the
    test's resolution (None: analytic); a resampling test's adjusted column is
    followed by ``<name>_pvalue_below_resolution``. A new frame (``result`` is left
    as it is)."""
    result = result.copy()
    for name, resolution in tests:
        column = f"{name}_pvalue"
        added = [f"{column}_adjusted"] + [f"{column}_below_resolution"] * (resolution is not None)
        for new in added:
            if new in result.columns:
                raise InputError(
                    f"The column {new!r} of p_adjust exists already (a metric or a group "
                    "key); name the test differently with a dict, e.g. tests={'t': ...}.",
                    param="p_adjust"
                )
        raw = result[column].to_numpy(dtype=np.float64)
        at = result.columns.get_loc(column) + 1
        result.insert(at, added[0], adjust_array(raw, method, resolution=resolution))
        if resolution is not None:
            result.insert(at + 1, added[1], below_resolution(raw, resolution))
    return result


def _check_weighted(columns: list[tuple[str, Metric, Callable[..., Any]]],
                    tests: list[tuple[str, CalibrationTest]],
                    confidence_level: float | None) -> None:
    """``weights=`` needs metrics that take weights, no intervals, and only the tests
    that take weights (``"ks"``, ``"kuiper"``: calibration_test's ``WEIGHTED``)."""
    if confidence_level is not None:
        raise InputError(
            "`weights` cannot be combined with `confidence_level`: the bootstrap's replicates are "
            "resampling counts themselves; for whole-number weights, repeat the rows "
            "(numpy.repeat) instead.",
            param="weights"
        )
    unweighted = [name for name, spec in tests if spec.method not in WEIGHTED]
    if unweighted:
        raise InputError(
            f"`weights` cannot be combined with the test {unweighted[0]!r}: of "
            "calibr.calibration_test()'s methods only \"ks\" and \"kuiper\" take frequency "
            "weights. Run the others without weights, or on the rows repeated "
            "(numpy.repeat) for whole-number weights.",
            param="weights"
        )
    for name, _, func in columns:
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):  # no signature: let the call decide
            continue
        if not any(prm.name == "weights" or prm.kind is prm.VAR_KEYWORD for prm in params):
            raise InputError(
                f"`weights` needs metrics that take frequency weights; the metric {name!r} "
                "has no parameter 'weights'.",
                param="weights"
            )


def _check_unique(metric_names: list[str], test_names: list[str]) -> None:
    """The test columns must not repeat a metric column."""
    clash = [c for c in test_names if c in metric_names]
    if clash:
        raise InputError(
            f"The test column {clash[0]!r} has the name of a metric column; name the test "
            "differently with a dict, e.g. tests={'t': ...}.",
            param="tests"
        )


def check_interval_names(metric_names: list[str], test_names: list[str]) -> None:
    """The interval columns must not repeat a metric or test column."""
    taken = set(metric_names) | set(test_names)
    clash = [f"{m}_{end}" for m in metric_names for end in ("low", "high")
             if f"{m}_{end}" in taken]
    if clash:
        raise InputError(
            f"The interval column {clash[0]!r} of `confidence_level` has the name of a metric "
            "or test column; name the metrics differently with a dict.",
            param="confidence_level"
        )


def _row_keys(groups: Any, cols: Any, row_key: Hashable | None, na_rm: bool) -> np.ndarray:
    """The Poisson scheme's key of each kept row (the rows of :func:`split`, in the
    frame's order): the column ``row_key`` of the frame, checked over all its rows
    (integers, none missing, no two equal), or the row's position."""
    from ._inference.bootstrap import check_row_keys
    from ._input.groups import complete_rows

    frame = groups.frame
    if row_key is None:
        keys = np.arange(len(frame), dtype=np.int64)
    else:
        try:
            column = frame[row_key]
        except (KeyError, TypeError):
            column = None
        if not isinstance(column, pd.Series):
            raise InputError(f"`row_key` must name one column of `data`; got {fmt(row_key)}.",
                             param="row_key")
        keys = check_row_keys(column, len(frame))
    keep = groups.ids >= 0
    if na_rm:
        keep &= complete_rows(frame, cols)
    return keys[keep]


def _run_intervals(sp: Split, columns: list[tuple[str, Metric, Callable[..., Any]]],
                   seeds: tuple[list[np.random.SeedSequence], type], extra: dict[str, Any],
                   options: dict[str, Any],
                   poisson: tuple[int, np.ndarray] | None = None) -> np.ndarray:
    """``<name>_low`` and ``<name>_high`` of each metric (columns), each group
    (rows; NaN for unobserved groups), from bootstrap() on the group's validated
    rows with the group's interval generator (see summarise()); ``poisson``: the
    Poisson scheme's seed and the keys of the rows sorted by group (then every
    group resamples with that seed and its rows' keys)."""
    values = np.full((sp.groups.n_groups, 2 * len(columns)), np.nan)
    children, bitgen = seeds
    said = GroupWarnings()
    for part in sp.parts():
        child = children[part.g].spawn(1)[0]
        for j, (name, spec, func) in enumerate(columns):
            metric = metric_name(spec, func) or func
            # a fresh copy of the child for each metric: bootstrap() spawns from it
            fresh = np.random.SeedSequence(child.entropy, spawn_key=child.spawn_key,
                                           pool_size=child.pool_size)
            gen = np.random.Generator(bitgen(fresh))
            scheme: dict[str, Any] = {}
            if poisson is not None:
                a, b = sp.start[part.g], sp.start[part.g + 1]
                gen = poisson[0]
                scheme = dict(scheme="poisson", row_key=poisson[1][a:b])
            with part.errors(f"metric {name!r}"):  # any error names the group
                try:
                    # the rows were counted by the metric's column; the resamples here
                    with said.gathering(name, part.g, units=("resamples",)):
                        res = bootstrap(part.p, part.y, metric, rng=gen, **options,
                                        **extra, **spec.options, **scheme)
                except InputError as err:
                    if err.code != UNDEFINED:
                        raise
                    continue  # the metric is NaN for the group (and warned about): so
                    # is its interval
                values[part.g, 2 * j:2 * j + 2] = res.confidence_interval
    said.warn(sp.groups.describe)
    return values


def _run_tests(sp: Split, tests: list[tuple[str, CalibrationTest]],
               seeds: tuple[list[np.random.SeedSequence], type],
               extra: dict[str, Any]) -> np.ndarray:
    """``<name>_statistic``, ``<name>_pvalue`` and ``<name>_small_n`` (1.0 or 0.0)
    of each test (columns), each
    group (rows; NaN for unobserved groups), from calibration_test() on the
    group's validated rows with the group's own generator (see summarise())."""
    values = np.full((sp.groups.n_groups, len(TEST_FIELDS) * len(tests)), np.nan)
    seeds, bitgen = seeds
    for part in sp.parts():
        for j, (name, spec) in enumerate(tests):
            gen = np.random.Generator(bitgen(seeds[part.g]))
            weighted = {} if part.w is None else {"weights": part.w}
            with part.errors(f"test {name!r}"):
                res = calibration_test(part.p, part.y, spec.method, rng=gen,
                                       **spec.options, **extra, **weighted)
            width = len(TEST_FIELDS)
            values[part.g, width * j] = res.statistic
            values[part.g, width * j + 1] = res.pvalue
            values[part.g, width * j + 2] = float(res.small_n)
    return values


# --------------------------------------------------------------------------
# every group at once


def metric_name(spec: Metric, func: Callable[..., Any]) -> str | None:
    """The name of a calibr metric given by name or as the function itself; None for
    any other callable (which is called per group). For :func:`summarise` and its
    backends, which compute calibr's own metrics in their own ways."""
    if isinstance(spec.func, str):
        return spec.func
    info = _registry.info_of(func)
    return None if info is None else info.name


def _all_groups(sp: Split, columns: list[tuple[str, Metric, Callable[..., Any]]],
                values: np.ndarray, said: GroupWarnings) -> set[int] | None:
    """Fill the columns of calibr's own metrics for every group at once.

    Returns the positions of the columns filled, or None when some group would
    raise (bad options, too few rows, no median bandwidth, every row dropped by
    ``na_rm``): then the per-group loop runs, and raises the error of the first
    failing group and metric, naming them. The observed groups where a score of
    :data:`calibr._registry.GROUP_ROWS` is NaN (undefined there, as the AUROC of one
    class) are recorded in ``said`` under the column's name (one warning).
    """
    if sp.rows_p is None:
        return set()
    every = _AllGroups(sp)
    if (sp.observed & (every.sizes == 0)).any():  # every row dropped by na_rm=True
        return None
    done = set()
    for j, (column_name, spec, func) in enumerate(columns):
        name = metric_name(spec, func)
        if name is None:
            continue
        try:
            column = every.metric(name, func, spec.options)
        except (ValueError, TypeError):  # an option's error: the per-group loop raises it
            return None
        if column is _PER_GROUP:  # bins other than R's: the per-group loop computes it
            continue
        if column is None:
            return None
        values[sp.observed, j] = column[sp.observed]
        if _registry.METRICS[name].grouped == _registry.GROUP_ROWS:
            for g in np.flatnonzero(sp.observed & np.isnan(column)).tolist():
                said.undefined(column_name, g)
        done.add(j)
    return done


#: What :meth:`_AllGroups.metric` returns for a metric the all-groups kernels do not
#: compute (ece/mce with bins other than R's: ``docs/definitions.md``, "Binning options";
#: or of ``type="top-label"``).
_PER_GROUP = object()


class _AllGroups:
    """calibr's metrics for every group of a split at once (``calibr._kernels.grouped``);
    each value is the bits of the metric called on the group's rows. A method
    returns None when some observed group would raise instead."""

    def __init__(self, sp: Split) -> None:
        self.sp = sp
        self.sizes = sp.sizes
        self._binned: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._hits: np.ndarray | None = None
        self._top: tuple[np.ndarray, np.ndarray] | None = None

    def metric(self, name: str, func: Callable[..., Any], options: dict) -> Any:
        """The metric ``name`` with ``options`` (checked as the metric checks them);
        ``_PER_GROUP`` for a binned metric with bins other than R's."""
        info = _registry.METRICS[name]
        if info.grouped is None:  # no grouped kernels: the per-group loop calls it
            return _PER_GROUP
        opts = resolved_options(func, options)
        if info.grouped == _registry.BIN_SUMS:
            if not _binning.BinSpec.from_options(opts["bins"], opts["binning"],
                                                 opts["right"]).is_default:
                return _PER_GROUP  # the grouped kernels know R's bins only
            if opts["type"] == _binning.TOP_LABEL:
                return _PER_GROUP  # nor the top-label cells: the metric on each group
            return self.binned(info.reduction, opts["bins"], opts["type"])
        if info.grouped == _registry.GROUP_ROWS:  # the scores: their kernels per group
            return {"brier": self.brier, "log_loss": lambda: self.log_loss(opts["eps"]),
                    "auroc": lambda: self.auroc(opts["type"], opts["average"])}[name]()
        return {"skce": lambda: self.skce(opts["estimator"], opts["bandwidth"], opts["type"]),
                "mmce": lambda: self.mmce(opts["bandwidth"])}[info.reduction]()

    # the kernels' inputs, made once: 0/1 hits, the top label, sorted by group

    @property
    def hits(self) -> np.ndarray:
        """The binary labels as uint8 0/1, rows sorted by group."""
        if self._hits is None:
            self._hits = self.sp.by_group(np.ascontiguousarray(as_hits(self.sp.rows_y)))
        return self._hits

    @property
    def top(self) -> tuple[np.ndarray, np.ndarray]:
        """The top-label confidence and its correctness, rows sorted by group."""
        if self._top is None:
            rho, hit = top_label(self.sp.rows_p, self.sp.rows_y)
            self._top = (self.sp.by_group(rho), self.sp.by_group(hit))
        return self._top

    def stat_batches(self, bins: int, type: str):
        """The per-(group, bin) sums of the form (``grouped.*_stat_batches``)."""
        sp = self.sp
        if not sp.binary and type == "classwise":  # one pass in the frame's order
            return grouped.classwise_stat_batches(sp.rows_p, sp.rows_y, sp.ids, sp.start, bins)
        x, c = (sp.p, self.hits) if sp.binary else self.top
        return grouped.binary_stat_batches(x, c, sp.start, bins)

    # binned

    def binned(self, name: str, bins: int, type: str) -> np.ndarray | None:
        sp = self.sp
        classwise = not sp.binary and type == "classwise"
        try:
            check_bin_cells(bins, sp.k, classwise)
        except InputError:
            return None
        key = (bins, "binary" if sp.binary else type)
        if key not in self._binned:
            ece_all = np.full(len(self.sizes), np.nan)
            mce_all = np.full(len(self.sizes), np.nan)
            for g0, g1, *stats in self.stat_batches(bins, type):
                ece_all[g0:g1], mce_all[g0:g1] = grouped.ece_mce(*stats)
            self._binned[key] = (ece_all, mce_all)
        return self._binned[key][{"ece": 0, "mce": 1}[name]]  # grouped.ece_mce's order

    # the scores: the per-call kernels on each group's rows (NaN: undefined there)

    def brier(self) -> np.ndarray:
        sp = self.sp
        out = np.full(len(self.sizes), np.nan)
        if sp.binary:
            grouped.binary_brier_groups(sp.p, self.hits, sp.start, out)
        else:
            grouped.matrix_brier_groups(sp.p, np.ascontiguousarray(sp.y), sp.start, out)
        return out

    def log_loss(self, eps: float | None) -> Any:
        """Every row's probability of its outcome picked and logged at once, summed per
        group in the per-call order; ``_PER_GROUP`` when some row has probability 0
        (the per-group call warns for its group)."""
        sp = self.sp
        clip = 0.0 if eps is None else float(eps)
        q = np.empty(sp.p.shape[0])
        if sp.binary:
            zero, _ = _ks.checked_binary_picked(sp.p, self.hits, clip, 0, q.shape[0], q)
        else:
            zero, _ = _ks.checked_matrix_picked(sp.p, np.ascontiguousarray(sp.y), np.int64(0),
                                                np.inf, clip, 0, q.shape[0], q)
        if zero:
            return _PER_GROUP
        np.log(q, out=q)
        out = np.full(len(self.sizes), np.nan)
        grouped.lane_sum_groups(q, sp.start, out)
        return -out / self.sizes

    def auroc(self, type: str, average: str) -> np.ndarray:
        """NaN for a group where the AUROC is undefined (``_all_groups`` warns)."""
        sp = self.sp
        if sp.binary or type == "confidence":
            x, c = (sp.p, self.hits) if sp.binary else self.top
            return self._auc(x, c)
        per = np.empty((len(self.sizes), sp.k))
        for k in range(sp.k):
            per[:, k] = self._auc(np.ascontiguousarray(sp.p[:, k]), (sp.y == k).view(np.uint8))
        if average == "macro":
            return np.mean(per, axis=-1)  # the per-call mean over the classes (NaN: NaN)
        counts = np.bincount(sp.codes * sp.k + sp.y, minlength=len(self.sizes) * sp.k)
        counts = counts.reshape(len(self.sizes), sp.k)
        return np.array([float(np.dot(counts[g], per[g]) / np.sum(counts[g]))  # the call's
                         if self.sizes[g] else np.nan for g in range(len(self.sizes))])

    def _auc(self, x: np.ndarray, c: np.ndarray) -> np.ndarray:
        out = np.full(len(self.sizes), np.nan)
        grouped.auc_groups(x, c, self.sp.start, out)
        return out

    # kernel metrics

    def skce(self, estimator: str, h: float | str, type: str) -> np.ndarray | None:
        sp = self.sp
        if estimator != "biased" and (self.sizes[sp.observed] < 2).any():
            return None
        if sp.binary:
            return self.scalar(sp.p, self.hits, estimator, h)
        if type == "confidence":
            return self.scalar(*self.top, estimator, h)
        if type == "classwise":
            per = np.empty((len(self.sizes), sp.k))
            for k in range(sp.k):
                x = np.ascontiguousarray(sp.p[:, k])
                value = self.scalar(x, (sp.y == k).view(np.uint8), estimator, h)
                if value is None:
                    return None
                per[:, k] = value
            return np.mean(per, axis=-1)  # the per-call mean over the classes
        if estimator == "ul":
            value = grouped.canonical_ul(sp.p, sp.y, sp.start, h)
        else:
            total, diag, _ = grouped.canonical_pair_sums(sp.p, sp.y, sp.start, h)
            value = grouped.estimate(estimator, self.sizes, total, diag)
        return self.finish(value, estimator)

    def mmce(self, h: float | str) -> np.ndarray | None:
        x, c = (self.sp.p, self.hits) if self.sp.binary else self.top
        value = self.scalar(x, c, "biased", h)
        return None if value is None else np.sqrt(value)

    def scalar(self, x: np.ndarray, c: np.ndarray, estimator: str,
               h: float | str) -> np.ndarray | None:
        """The scalar kernels on ``x`` and ``c`` (rows sorted by group)."""
        sp = self.sp
        if estimator == "ul":
            value = grouped.scalar_ul(x, c, sp.start, h)
        else:
            total, diag, _ = grouped.scalar_pair_sums(x, c, sp.start, h)
            value = grouped.estimate(estimator, self.sizes, total, diag)
        return self.finish(value, estimator)

    def finish(self, value: np.ndarray, estimator: str) -> np.ndarray | None:
        """None if an observed group has no value (no median bandwidth); the biased
        estimate with rounding-level negatives as 0.0, as the metrics return it."""
        observed = value[self.sp.observed]
        if np.isnan(observed).any():
            return None
        if estimator == "biased":
            if (observed < -ROUNDING_FLOOR).any():  # pragma: no cover - a kernel bug
                return None  # the per-group call raises it
            value = np.where(value > 0.0, value, 0.0)
        return value
