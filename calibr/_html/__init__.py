"""The HTML report: one self-contained file that a person reads (a clinician, a
reviewer, a release manager), made by :func:`calibr.html_report`, ``calibr report
--html`` and ``calibr compare --html`` (``docs/cli.md``, "The HTML report").

The library renders and the command line only writes. One job per module:

* :mod:`calibr._display.format` (shared with the results' ``_repr_html_``):
  escaping, the numbers shown (each in ``<data value=...>`` with every digit) and
  the Holm adjustment of p-values;
* :mod:`._svg`: the figures, inline SVG drawn by calibr (no matplotlib);
* :mod:`._page`: the page (styles, the sorting script, the sections);
* :mod:`._report`: the report's overview and per-group sections;
* :mod:`._compare`: compare's page;
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._defaults import (
    BINNED_TYPE_DEFAULT,
    BINNING_DEFAULT,
    BINS_DEFAULT,
    BOOTSTRAP_RESAMPLES_DEFAULT,
    RIGHT_DEFAULT,
)
from .._display.format import bins_words
from .._docs import shared_docs
from .._inference.calibration_tests import RESAMPLING_TESTS
from .._input import (
    BIN_SPEC,
    BINNING,
    FLAG,
    LEVEL,
    MAX_RESAMPLES,
    OPTIONAL_STRING,
    RIGHT,
    RNG,
    Integer,
    Optional,
    Options,
    validate_params,
)
from .._input.frames import frame_verb
from .._registry import BINNED, info_of
from ..plot import FEW_CURVES
from ._page import Page, render
from ._report import (
    CONSISTENCY,
    CONSISTENCY_RESAMPLES,
    Figures,
    Spec,
    bin_n_column,
    figures,
    intervals_words,
    report_page,
    seed_words,
)

__all__ = ["Figures", "Page", "Spec", "figures", "html_report", "render", "report_page"]

def _count(p: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None,
           **_: Any) -> float:
    """The rows of a group, or with weights their total weight."""
    return float(len(p)) if weights is None else float(np.sum(weights))


def _func_name(spec: Any) -> str:
    """The registry's name of a metric column's function (``calibr.ece`` -> "ece"), else
    the callable's name."""
    info = info_of(spec.func)
    if info is not None:
        return info.name
    return spec.func if isinstance(spec.func, str) else getattr(spec.func, "__name__", "metric")


@frame_verb(collect=True)  # polars / Arrow frames and by=; lazy sources collected
@validate_params(bins=BIN_SPEC, type=Options("classwise", "confidence"), binning=BINNING,
                 right=RIGHT, na_rm=FLAG, confidence_level=Optional(LEVEL),
                 ci_method=Options("percentile", "basic", "bca"),
                 n_resamples=Integer(1, MAX_RESAMPLES), consistency=Optional(LEVEL),
                 consistency_resamples=Integer(1, MAX_RESAMPLES), smooth=FLAG, rng=RNG,
                 title=OPTIONAL_STRING)
@shared_docs
def html_report(
    data: Any,
    p: Any = None,
    y: Any = None,
    metrics: Any = None,
    *,
    p_prefix: str | None = None,
    classes: Sequence | None = None,
    na_rm: bool = False,
    weights: Any = None,
    tests: Any = None,
    confidence_level: float | None = None,
    ci_method: str = "percentile",
    n_resamples: int = BOOTSTRAP_RESAMPLES_DEFAULT,
    bins: Any = BINS_DEFAULT,
    type: str = BINNED_TYPE_DEFAULT,
    binning: str = BINNING_DEFAULT,
    right: bool = RIGHT_DEFAULT,
    consistency: float | None = CONSISTENCY,
    consistency_resamples: int = CONSISTENCY_RESAMPLES,
    smooth: bool = False,
    rng: Any = 0,
    title: str | None = None,
    by: Any = None,
) -> str:
    """A self-contained HTML report of the calibration of every group of ``data``.

    The page that ``calibr report --html`` writes, as a string: a header of what
    was measured; an overview table of every group (sortable by any column) with
    each metric, its bootstrap interval (``confidence_level``), the tests' p-values (adjusted
    by Holm's method over the groups when there are several) and the MCEs that
    come from a bin of fewer than 10 samples flagged with their counts; then per
    group its reliability diagram (count histogram, Wilson intervals,
    consistency band, smooth curve with ``smooth``) and per-bin table. Figures,
    styles and the sorting script are inline: the file opens offline. Every
    number is shown to 4 significant digits inside ``<data value="...">``,
    whose value has all of its digits.

    Parameters
    ----------
    data : DataFrame or DataFrameGroupBy
        The predictions, whole or grouped, as for :func:`calibr.summarise`: a
        pandas, polars or Arrow frame (grouped with ``by``), a pandas groupby, or
        a lazy source (polars ``LazyFrame``, DuckDB relation, Spark DataFrame),
        collected under the rule of ``docs/engines.md``.
    p : str or list of str, optional
        The probability column, or one column per class (or ``p_prefix``).
    y : str
        The label column.
    metrics : str, Metric, list or dict, optional
        The metric columns, as for :func:`calibr.summarise` (default: ece and
        mce). ``bins``, ``type``, ``binning`` and ``right`` apply to the columns
        of the binned metrics (ece, mce, calibration_error) that do not set them.
    p_prefix : str, optional, keyword-only
        The probability columns are those starting with this prefix.
    <calibr:classes>
    <calibr:na_rm>
    weights : str, optional, keyword-only
        The name of a column of frequency weights (as for
        :func:`calibr.summarise`); not with ``tests`` or ``confidence_level``, and the
        diagrams then have no consistency band or smooth curve.
    tests : str, CalibrationTest, list or dict, optional, keyword-only
        Calibration tests per group, as for :func:`calibr.summarise`.
    confidence_level : float, optional, keyword-only
        A level in (0, 1): each metric's bootstrap interval per group
        (:func:`calibr.bootstrap`, ``ci_method``, ``n_resamples``).
    ci_method : {"percentile", "basic", "bca"}, default "percentile", keyword-only
    n_resamples : int, default 9999, keyword-only
    <calibr:binned_bins>
        Also the bins of the diagrams and per-bin tables; keyword-only.
    type : {"classwise", "confidence"}, default "classwise", keyword-only
        The multiclass form of ece and mce, and of the diagrams of at most 3
        classes (more classes are drawn as the confidence diagram: each row's
        highest probability against whether its predicted class is the label).
    <calibr:binning>
    <calibr:right>
    consistency : float or None, default 0.9, keyword-only
        The level of the consistency band of the diagrams
        (:func:`calibr.calibration_table`), or None for none.
    consistency_resamples : int, default 1000, keyword-only
        The band's resamples (``n_resamples`` of :func:`calibr.calibration_table`;
        named after the band here because ``n_resamples`` is the intervals',
        ``docs/definitions.md``, "One name per idea").
    smooth : bool, default False, keyword-only
        Also draw each group's smooth reliability curve
        (:func:`calibr.smece_curve`) in binary and confidence diagrams.
    rng : None, int or numpy.random.Generator, default 0, keyword-only
        The random numbers of the tests, the intervals and the bands (group g
        draws from ``numpy.random.SeedSequence(rng).spawn(groups)[g]``, as
        :func:`calibr.summarise`); the default 0 makes a report reproducible.
    title : str, optional, keyword-only
        The page's title (default "Calibration report").
    by : str or list of str, optional, keyword-only
        Group ``data`` (a DataFrame) by these columns, as :func:`calibr.summarise`.

    Returns
    -------
    str
        The HTML document.

    Raises
    ------
    calibr.InputError
        A ``ValueError`` for bad values, as the verbs it calls; every message
        names the argument.
    calibr.InputTypeError
        A ``TypeError`` for a ``data`` that is not a DataFrame or DataFrameGroupBy,
        or a non-numeric probability column.

    Notes
    -----
    The numbers are those of :func:`calibr.summarise` (metrics, tests and
    ``confidence_level``) and :func:`calibr.calibration_table` (the per-bin tables, with
    ``consistency``) on the same arguments; group labels are escaped, so a key
    such as ``<script>`` shows as text. The MCE's bin count is that of the bin
    with the largest gap in the MCE's own bins (ties: the largest count).

    Examples
    --------
    >>> import calibr
    >>> from calibr.datasets import load_breast_cancer_predictions
    >>> df = load_breast_cancer_predictions()
    >>> page = calibr.html_report(df.groupby("model"), "p", "y", bins=5)
    >>> page.startswith("<!DOCTYPE html>"), page.count('<details class="group"')
    (True, 3)
    """
    from .._inference.calibration_tests import calibration_test
    from .._input import defaults
    from .._input.groups import groups_of, resolve_columns
    from ..frame import Metric, metric_columns, named_tests, summarise
    from ..table import calibration_table
    from ._report import bin_count_of_mce, norm_key

    groups = groups_of(data)
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
    keys = [] if groups.keys is None else list(groups.keys.columns)
    k = 1 if cols.binary else len(cols.p)
    form = "binary" if cols.binary else type
    drawn = "binary" if cols.binary else type if k <= FEW_CURVES else "confidence"
    bin_opts = {"bins": bins, "type": type, "binning": binning, "right": right}
    specs = {}
    for name, spec, _ in metric_columns(metrics, {}):
        if _func_name(spec) in BINNED:
            spec = Metric(spec.func, {**bin_opts, **spec.options})
        specs[name] = spec
    common = {"p_prefix": p_prefix, "classes": classes, "na_rm": na_rm, "weights": weights}
    # the page's own columns (n, form, bins, each MCE's bin count) are kept apart from
    # the summary's, so that no metric name can take their place; the count runs as a
    # metric under a name that no metric, key or test column has
    test_specs = named_tests(tests)
    taken = {*map(str, specs), *map(str, keys),
             *(f"{t}_{end}" for t, _ in test_specs for end in ("statistic", "pvalue"))}
    n_name = "n"
    while n_name in taken:
        n_name = "_" + n_name
    summary = summarise(data, p, y, metrics={n_name: _count, **specs}, tests=tests, rng=rng,
                        **common)
    n = summary.pop(n_name).to_numpy(dtype=np.float64)
    own = pd.DataFrame({"form": form, "n": n.astype(np.int64)
                        if bool(np.all(n == np.floor(n))) else n}, index=summary.index)
    row_keys = [norm_key(r) for r in summary[keys].itertuples(index=False, name=None)] \
        if keys else [()]
    for name, spec in specs.items():
        if _func_name(spec) != "mce":
            continue
        opts = {**defaults(calibration_table), **{o: spec.options[o] for o in
                ("bins", "type", "binning", "right") if o in spec.options}}
        tab = calibration_table(p, y, data=data, bins=opts["bins"], type=opts["type"],
                                binning=opts["binning"], right=opts["right"], **common)
        counts = bin_count_of_mce(tab, keys)
        own[bin_n_column(name)] = [counts.get(key, np.nan) for key in row_keys]
    if confidence_level is not None:
        bounds = summarise(data, p, y, metrics=specs, confidence_level=confidence_level,
                           ci_method=ci_method, n_resamples=n_resamples, rng=rng, **common)
        for name in specs:
            at = summary.columns.get_loc(name)
            summary.insert(at + 1, f"{name}_low", bounds[f"{name}_low"].to_numpy())
            summary.insert(at + 2, f"{name}_high", bounds[f"{name}_high"].to_numpy())
    test_specs = named_tests(tests)
    n_default = defaults(calibration_test)["n_resamples"]
    spec = Spec(keys, [(name, _func_name(s)) for name, s in specs.items()],
                [(name, int(t.options.get("n_resamples", n_default))
                  if t.method in RESAMPLING_TESTS else None) for name, t in test_specs],
                confidence_level, ci_method)
    figs = figures(data, p, y, bins=bins, type="classwise" if drawn == "binary" else drawn,
                   binning=binning, right=right,
                   consistency=consistency, n_resamples=consistency_resamples, rng=rng,
                   smooth=smooth, **common)
    if drawn != form:
        figs.top_label = k

    header = [("data", f"{len(groups.frame)} rows"
               + (f", grouped by {', '.join(map(str, keys))} ({len(summary)} groups)"
                  if keys else ""))]
    p_names = str(cols.p) if cols.binary else ", ".join(map(str, cols.p))
    header.append(("columns", f"probabilities {p_names}"
                   f"; label {cols.y}" + (f"; weights {weights}" if weights is not None else "")))
    header.append(("form", {"binary": "binary: one probability column",
                            "classwise": f"classwise: one-vs-rest for each of {k} classes",
                            "confidence": "confidence: each row's highest probability "
                                          "against whether its class is the label"}[form]
                   + ("; the diagrams are confidence diagrams (each row's highest probability "
                      "against whether its predicted class is the label)"
                      if drawn != form else "")))
    header.append(("bins", bins_words(bins, binning, right)))
    if test_specs:
        from .._inference.calibration_tests import MIN_N

        header.append(("tests", ", ".join(f"{name} ({t.method}, holds its level from "
                                          f"{MIN_N[t.method]} rows)" for name, t in test_specs)
                       + "; null hypothesis: calibrated"))
    if confidence_level is not None:
        header.append(("intervals", intervals_words(confidence_level, ci_method, n_resamples)))
    if figs.band is not None:
        header.append(("consistency band", f"{figs.band:g}, {consistency_resamples} resamples "
                       "per group (Bröcker & Smith 2007)"))
    header.append(("seed", seed_words(rng, band=figs.band is not None,
                                      tests=any(t.method in RESAMPLING_TESTS
                                                for _, t in test_specs),
                                      intervals=confidence_level is not None)))
    header.append(("calibr", _version()))
    page = report_page(summary, spec, [figs], header=header,
                       title=title or "Calibration report", own=own)
    return render(page)


def _version() -> str:
    from .. import __version__

    return __version__

