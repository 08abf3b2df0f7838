"""The ``report`` command: the metrics per group (``calibr.summarise``), the
per-bin table (``calibr.calibration_table``) and the plot, for each input."""

from __future__ import annotations

import io
from collections.abc import Hashable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._defaults import BINNING_DEFAULT, RIGHT_DEFAULT
from .._inference.calibration_tests import BINARY_ONLY as BINARY_ONLY_TESTS
from .._inference.calibration_tests import RESAMPLING_TESTS, calibration_test
from .._inference.calibration_tests import WEIGHTED as WEIGHTED_TESTS
from .._input import BINS, InputError, defaults
from .._input.groups import by_columns, subframes
from .._metrics.binned import ece, mce
from .._registry import BINNED
from ..frame import summarise
from ..plot import FEW_CURVES
from ..table import TABLE_COLUMNS, calibration_table
from ._args import (
    MCE_MIN_BIN_COUNT,
    _Column,
    _sep,
    _with_defaults,
    check_seed,
    parse_metrics,
    parse_tests,
    report_metrics,
)
from ._columns import _check_key_names, _check_row_sums, _columns, _renormalize, _validate
from ._errors import CLIError, _cli_message, _library
from ._io import (
    _commit,
    _Output,
    _output_format,
    _parquet_bytes,
    _Source,
    _sources,
    _write_stdout,
    check_outputs,
)
from ._render import _header, _render, _tests_header

#: At most this many panels in a --plot figure (one per group).
MAX_PLOT_PANELS = 100
#: The boolean column after each metric's interval: the interval leaves out the estimate.
EXCLUDES_SUFFIX = "_interval_excludes_estimate"
#: Its mark in the table (the HTML report's dagger; the table is ASCII).
TEXT_OUTSIDE_MARK = "!"


class _Reported(NamedTuple):
    """What ``report`` gets from one input."""

    #: the summary, one row per group (None with --per-bin)
    res: pd.DataFrame | None
    #: the per-bin table of --per-bin (else None)
    tab: pd.DataFrame | None
    #: the per-bin table that --plot draws (else None)
    plot: pd.DataFrame | None
    #: the form of the metrics: "binary", "classwise", "confidence" or "top-label"
    form: str
    #: the form of the plot (the metrics', or the top label by default for many classes)
    plot_form: str
    #: per binned metric's column, the rows whose MCE comes from a tiny bin
    flags: dict[str, np.ndarray]
    #: the figures of --html (calibr._html.Figures), and the words for the columns
    html: Any = None


def _plot_form(type_arg: str | None, n_prob: int) -> str:
    """The form --plot draws for data of ``n_prob`` probability columns (1: binary)
    and ``--type type_arg`` (None if not given): --type's, else classwise for at most
    ``FEW_CURVES`` classes and the top label ("confidence") for more."""
    if n_prob == 1:
        return "binary"
    if type_arg is not None:
        return type_arg
    return "confidence" if n_prob > FEW_CURVES else "classwise"


def report(args) -> int:
    """Run ``calibr report`` with the parsed arguments; return the exit status."""
    if args.bins is not None:
        try:
            BINS(args.bins, "bins")
        except InputError as err:
            raise CLIError(_cli_message(err, names={"bins": "--bins"})) from None
    if args.prob is not None and args.prob_prefix is not None:
        raise CLIError("give the probability columns by --prob or by --prob-prefix, not both.")
    _sep(args.sep)
    fmt = _output_format(args)
    html = getattr(args, "html", None)
    check_outputs([(html, "--html"), (args.output, "--output"), (args.plot, "--plot")],
                  [("FILE", args.file)])
    _check_html(args)
    if args.type == "top-label":
        for path, option in ((args.plot, "--plot"), (html, "--html")):
            if path is not None:
                raise CLIError(
                    f"{option} has no top-label form yet (its diagrams and ECE are those of "
                    "one set of bins or one per class, not one per predicted class); use "
                    "--type confidence or classwise with it, or leave it out.")
    if args.plot is not None:
        plot_format = _plot_format(args.plot)
    binning = getattr(args, "binning", None)
    right = {None: None, "true": True, "false": False}[getattr(args, "right", None)]
    columns = _with_defaults(parse_metrics(report_metrics(args.metrics, args.battery)),
                             args.bins, args.type, binning, right)
    binning_options = {k: v for k, v in (("binning", binning), ("right", right))
                       if v is not None}
    tests = parse_tests(args.test)
    seed = check_seed(args.seed)
    if tests and args.per_bin:
        raise CLIError("--test adds columns to the report of the metrics; it does not apply "
                       "to --per-bin.")
    unweighted = [spec.method for _, spec in tests if spec.method not in WEIGHTED_TESTS]
    if unweighted and args.weights is not None:
        raise CLIError(f"--weights cannot be combined with --test {unweighted[0]}: of the "
                       "calibration tests only ks and kuiper take frequency weights.")
    _check_ci(args)
    metric_defaults = defaults(ece)  # --bins and --type default to ece()'s bins and type
    bins = metric_defaults["bins"] if args.bins is None else args.bins
    type_ = metric_defaults["type"] if args.type is None else args.type

    sources = _sources(args)
    results, tables, plots, forms, plot_forms, pages = [], [], [], [], [], []
    marks: dict[str, list[np.ndarray]] = {}
    for src in sources:
        got = _report_source(src, args, columns, tests, bins, type_, binning_options)
        forms.append(got.form)
        plot_forms.append(got.plot_form)
        if got.tab is not None:
            tables.append(_tag(got.tab, src.tag))
        if got.plot is not None:
            plots.append(_tag(got.plot, src.tag))
        if got.res is not None:
            results.append(_tag(got.res, src.tag))
        for col, flag in got.flags.items():
            marks.setdefault(col, []).append(flag)
        if got.html is not None:
            pages.append((src, *got.html))

    if args.per_bin:
        result = _stack_tables(tables)
        header = _bins_words(_header(sources, bins, forms, "per-bin table"), binning_options)
        header = _with_engine(header, sources) + _weights_header(args)
        cols = list(result.columns)
        text = "" if fmt == "parquet" else _render(
            result, fmt, header, exact=[*cols[: cols.index("bin") + 1], "n"])
    else:
        result = pd.concat(results, ignore_index=True)
        binned = [c for c in columns if c.spec.func in BINNED]
        header = _header(sources, bins if any(c.default_bins for c in binned) else None,
                         forms if any(c.default_type for c in binned) else [], "report")
        header = _with_engine(_bins_words(header, binning_options), sources)
        header += _weights_header(args)
        if tests:
            header += _tests_header([(name, spec, _n_resamples(spec)) for name, spec in tests],
                                    seed, len(sources) > 1)
        if args.ci is not None:
            header += _ci_header(args, seed, len(sources) > 1, bool(tests))
        flags = {col: np.concatenate(m) for col, m in marks.items()}
        flags = {col: m for col, m in flags.items() if m.any()}
        notes = [
            f"* the MCE comes from a bin of fewer than {MCE_MIN_BIN_COUNT} samples (see "
            f"{', '.join(_bin_n_column(col) for col in flags)}): a gap measured on so few "
            "samples is mostly noise."
        ] if flags else []
        missed = _missed_estimates(result, columns) if args.ci is not None else {}
        if missed:
            from .._html._report import OUTSIDE_NOTE

            notes.append(f"{TEXT_OUTSIDE_MARK} {OUTSIDE_NOTE[0].upper()}{OUTSIDE_NOTE[1:]} "
                         "The mark is on the bound beyond the estimate; in CSV, JSON and "
                         f"Parquet the column <metric>{EXCLUDES_SUFFIX} says it.")
        cols = list(result.columns)
        keys = cols[: min(cols.index(c) for c in ("form", "bins", "n") if c in cols)]
        counts = ["n", *(_bin_n_column(c.name) for c in columns if c.spec.func == "mce")]
        pvalues = {f"{name}_pvalue": _n_resamples(spec) if spec.method in RESAMPLING_TESTS
                   else None for name, spec in tests}
        hidden = [f"{c.name}{EXCLUDES_SUFFIX}" for c in columns] if args.ci is not None else []
        text = "" if fmt == "parquet" else _render(
            result, fmt, header, {**flags, **missed}, notes, exact=[*keys, *counts],
            pvalues=pvalues, symbols=dict.fromkeys(missed, TEXT_OUTSIDE_MARK), hidden=hidden)

    outputs = []
    if args.output is not None:
        data = _parquet_bytes(result, args.output) if fmt == "parquet" else text.encode("utf-8")
        outputs.append(_Output(args.output, "--output", data))
    if args.plot is not None:
        figure = _plot(_stack_tables(plots), plot_format, bins, sources, plot_forms,
                       [f != p for f, p in zip(forms, plot_forms, strict=True)],
                       binning_options)
        outputs.append(_Output(args.plot, "--plot", figure))
    if html is not None:
        page = _html_page(result, header, keys, columns, tests, args, pages, binning_options)
        outputs.append(_Output(html, "--html", page.encode("utf-8")))
    _commit(outputs)
    if args.output is None:
        return _write_stdout(text)
    return 0


def _report_source(
    src: _Source, args, columns: list[_Column], tests: list, bins: int, type_: str,
    binning_options: dict | None = None,
) -> _Reported:
    """One input's summary, per-bin tables and forms, and the MCEs from tiny bins.

    The frame of ``src`` is a pandas DataFrame (a file, stdin, the bundled data)
    or a Dask DataFrame (a directory or a glob: ``docs/dask.md``). The verbs take
    either; a Dask frame's results are lazy, and computed together where
    ``src.engine`` says (``calibr.cli._engine``), its rows checked by the verbs
    partition by partition. With --test, --confidence-level or --renormalize a Dask frame's rows
    are first gathered into this process (they must fit in its memory), and
    reported as a pandas frame's.
    """
    html = getattr(args, "html", None) is not None
    if _is_dask(src.frame) and (tests or args.ci is not None or args.renormalize or html):
        src = _gathered(src)
    lazy = _is_dask(src.frame)
    frame = src.frame
    cols, p_word = _columns(_Source(src.tag, src.label, frame._meta, src.colargs) if lazy
                            else src, args)
    if not lazy:
        if len(frame) == 0:
            raise CLIError(f"{src.label} has no data rows, only a header.")
        if args.renormalize:
            frame = _renormalize(frame, cols)
        _check_row_sums(frame, cols, p_word)
        _validate(frame, cols, args.na_rm, p_word, args.weights)
    # the top-label form reads one probability column as two, so it is not "binary"
    form = type_ if isinstance(cols.p, list) or type_ == "top-label" else "binary"
    drawn = _plot_form(args.type, len(cols.p) if isinstance(cols.p, list) else 1)
    for name, spec in tests:
        if spec.method in BINARY_ONLY_TESTS and isinstance(cols.p, list):
            raise CLIError(
                f"--test {name} is for binary outcomes only (one --prob column); "
                f"{src.label} has {len(cols.p)} probability columns."
            )

    by = src.colargs["by"]
    show_form = any(c.default_type for c in columns)
    show_bins = any(c.default_bins for c in columns)
    if not args.per_bin:
        added = [c.name for c in columns] + ["n"]
        added += [_bin_n_column(c.name) for c in columns if c.spec.func == "mce"]
        added += ["form"] * show_form + ["bins"] * show_bins
        added += [c for name, spec in tests for c in _test_columns(name, spec)]
        if args.ci is not None:
            added += [f"{c.name}_{end}" for c in columns
                      for end in ("low", "high", EXCLUDES_SUFFIX[1:])]
            added += ["ci_level", "ci_method", "ci_resamples"]
        added += ["seed"] * bool(tests or args.ci is not None)
        _check_key_names(by, added, "a column of the report")
    if args.per_bin or args.plot:
        _check_key_names(by, TABLE_COLUMNS, "a column of the per-bin table")
    data = _group(frame, by, src)
    common = {"classes": cols.classes, "na_rm": args.na_rm, "weights": args.weights}

    def per_bin(type_of: str) -> Any:
        return _library(calibration_table, p_word, cols.p, cols.y, bins=bins, type=type_of,
                        data=data, **common, **(binning_options or {}))

    # the verbs' results, in the order in which a pandas frame's are computed (and
    # raise); a Dask frame's are lazy until _computed()
    asked: dict[str, Any] = {}
    plot_type = type_ if drawn == "binary" else drawn
    if args.per_bin:
        asked["tab"] = per_bin(type_)
    if args.plot and not (args.per_bin and plot_type == type_):  # else it draws "tab"
        asked["plot"] = per_bin(plot_type)
    mces = [c for c in columns if c.spec.func == "mce"]
    if not args.per_bin:
        metrics = {c.name: c.spec for c in columns}
        if not lazy:
            metrics = {"n": _count, **metrics}
        asked["res"] = _library(summarise, p_word, data, cols.p, cols.y, metrics=metrics,
                                tests=dict(tests) or None, rng=args.seed, **common)
        if lazy:  # the callable _count would be computed group by group; one bin of the
            # top label has each group's kept rows (or total weight), from merged sums
            asked["n"] = _library(calibration_table, p_word, cols.p, cols.y, bins=1,
                                  type="confidence", data=data, **common)
        for j, c in enumerate(mces):
            asked[f"mce{j}"] = _library(calibration_table, p_word, cols.p, cols.y, data=data,
                                        **common, **_mce_bins(c.spec))
        if args.ci is not None:
            asked["ci"] = _library(summarise, p_word, data, cols.p, cols.y,
                                   metrics={c.name: c.spec for c in columns},
                                   confidence_level=args.ci, ci_method=args.ci_method,
                                   n_resamples=args.ci_resamples,
                                   rng=args.seed, **common)
    got = _computed(asked, src, p_word)

    for name in ("tab", "plot"):
        if name in got:  # total weights: integers when whole
            got[name]["n"] = _counts(got[name]["n"].to_numpy())
    tab = got.get("tab")
    plot = got.get("plot", tab if args.plot else None)  # the printed table, if the same
    res = None
    flags: dict[str, np.ndarray] = {}
    if not args.per_bin:
        res = got["res"]
        if lazy:
            res.insert(len(by or []), "n", got["n"]["n"].to_numpy())
        res["n"] = _counts(res["n"].to_numpy())
        for name, spec in tests:
            if spec.method in RESAMPLING_TESTS:
                res.insert(res.columns.get_loc(f"{name}_pvalue") + 1, f"{name}_n_resamples",
                           _n_resamples(spec))
        for j, c in enumerate(mces):
            counts = _mce_bin_counts(got[f"mce{j}"], list(by or []), len(res))
            res.insert(res.columns.get_loc(c.name) + 1, _bin_n_column(c.name), counts)
            flags[c.name] = counts < MCE_MIN_BIN_COUNT
        if args.ci is not None:
            res = _with_intervals(res, got["ci"], columns, args)
        if tests or args.ci is not None:
            res["seed"] = args.seed
        _insert_form_and_bins(res, show_form, form, show_bins, bins)
    page = None
    if html:  # the figures of the HTML report (calibr._html)
        from .._html import figures
        from .._html._cli import columns_words

        figs = _library(figures, p_word, data, cols.p, cols.y, bins=bins, type=plot_type,
                        binning=(binning_options or {}).get("binning", BINNING_DEFAULT),
                        right=(binning_options or {}).get("right", RIGHT_DEFAULT),
                        rng=args.seed, smooth=args.smooth, **common)
        figs.prefix = () if src.tag is None else (src.tag,)
        if drawn != form:
            figs.top_label = len(cols.p)
        page = (figs, columns_words(cols.p, cols.y, by, args.weights), len(frame))
    return _Reported(res, tab, plot, form, drawn, flags, page)


def _check_html(args) -> None:
    """--html and --smooth: what they cannot be combined with (its path is checked
    with the other outputs, ``calibr.cli._io.check_outputs``)."""
    html = getattr(args, "html", None)
    if getattr(args, "smooth", False) and html is None:
        raise CLIError("--smooth draws the smooth curve in the HTML report; give --html PATH.")
    if html is None:
        return
    if args.per_bin:
        raise CLIError("--html reports the metrics of each group (with its per-bin table); "
                       "it does not apply to --per-bin.")


def _html_page(result: pd.DataFrame, header: list[str], keys: list, columns: list[_Column],
               tests: list, args, pages: list, binning_options: dict) -> str:
    """The page of --html (``calibr._html``): the report's rows and header, and the
    figures of each input."""
    from .._html import Spec, bins_words
    from .._html._cli import report_html
    from .._html._report import intervals_words, seed_words
    from ..table import CONSISTENCY_RESAMPLES

    spec = Spec(list(keys), [(c.name, c.spec.func if isinstance(c.spec.func, str) else "")
                             for c in columns],
                [(name, _n_resamples(t) if t.method in RESAMPLING_TESTS else None)
                 for name, t in tests], args.ci, args.ci_method)
    band = any(figs.band is not None for _, figs, _, _ in pages)
    seed = seed_words(args.seed, band=band,
                      tests=any(t.method in RESAMPLING_TESTS for _, t in tests),
                      intervals=args.ci is not None, several=len(pages) > 1)
    intervals = (intervals_words(args.ci, args.ci_method, args.ci_resamples)
                 if args.ci is not None else None)
    options = {**_bin_defaults(), **binning_options}
    bins = args.bins if args.bins is not None else defaults(ece)["bins"]
    data = [(src.tag or src.label, rows, words) for src, _, words, rows in pages]
    return report_html(result, spec, [figs for _, figs, _, _ in pages], header, data,
                       bins_words(bins, options["binning"], options["right"]),
                       CONSISTENCY_RESAMPLES, seed, intervals)


def _is_dask(frame: Any) -> bool:
    """Whether ``frame`` is a Dask DataFrame (a directory or a glob of files)."""
    return frame.__class__.__module__.startswith("dask")


def _gathered(src: _Source) -> _Source:
    """A Dask frame's rows gathered into this process, as one pandas frame (in the
    files' order, numbered from 0: positions in messages count the rows of all files)."""
    with src.engine.compute():
        frame = src.frame.compute()
    return _Source(src.tag, src.label, frame.reset_index(drop=True), src.colargs)


def _computed(asked: dict[str, Any], src: _Source, p_word: str) -> dict[str, Any]:
    """The verbs' results of one input: a pandas frame's as they are, a Dask frame's
    computed in one pass over its files (``dask.compute``) on ``src.engine``."""
    if not _is_dask(src.frame):
        return asked
    import dask

    with src.engine.compute():
        (got,) = _library(dask.compute, p_word, asked)
    return got


def _mce_bins(spec) -> dict[str, Any]:
    """The bin options (``bins``, ``type``, ``binning``, ``right``) of an mce column:
    its own, else mce()'s defaults (the table of its bins counts the MCE's bin)."""
    opts = {**defaults(mce), **spec.options}
    return {k: opts[k] for k in ("bins", "type", "binning", "right")}


def _insert_form_and_bins(res: pd.DataFrame, show_form: bool, form: str, show_bins: bool,
                          bins: int) -> None:
    """The report's ``form`` and ``bins`` columns, before ``n`` (shown when a metric
    takes the default type or bins); in place."""
    at = res.columns.get_loc("n")
    if show_bins:
        res.insert(at, "bins", bins)
    if show_form:
        res.insert(at, "form", form)


def _check_ci(args) -> None:
    """--confidence-level LEVEL, --n-resamples B and what they cannot be combined with."""
    if args.ci is None:
        return
    from .._input import LEVEL, MAX_RESAMPLES, Integer

    try:
        LEVEL(args.ci, "ci")
        Integer(1, MAX_RESAMPLES)(args.ci_resamples, "ci_resamples")
    except InputError as err:
        raise CLIError(_cli_message(err, names={"ci": "--confidence-level",
                                                "ci_resamples": "--n-resamples"})) from None

    if args.per_bin:
        raise CLIError("--confidence-level adds columns to the report of the metrics; it does "
                       "not apply "
                       "to --per-bin.")
    if args.weights is not None:
        raise CLIError("--weights cannot be combined with --confidence-level: the bootstrap's "
                       "resamples are "
                       "frequency weights themselves; repeat the rows instead.")


def _with_intervals(res: pd.DataFrame, bounds: pd.DataFrame, columns: list[_Column],
                    args) -> pd.DataFrame:
    """The report with each metric's ``_low`` and ``_high`` columns after it (from
    ``bounds``, summarise(ci=...) on the same groups; the row count ``n`` has no
    interval), then the boolean ``<metric>_interval_excludes_estimate``."""
    from .._html._report import excludes_estimate

    for c in columns:
        for end in ("low", "high"):
            name = f"{c.name}_{end}"
            res.insert(res.columns.get_loc(c.name) + (1 if end == "low" else 2), name,
                       bounds[name].to_numpy())
        res.insert(res.columns.get_loc(c.name) + 3, f"{c.name}{EXCLUDES_SUFFIX}",
                   excludes_estimate(res[c.name], res[f"{c.name}_low"],
                                     res[f"{c.name}_high"]))
    res["ci_level"] = args.ci
    res["ci_method"] = args.ci_method
    res["ci_resamples"] = args.ci_resamples
    return res


def _missed_estimates(result: pd.DataFrame, columns: list[_Column]) -> dict[str, np.ndarray]:
    """The marks of the intervals that leave out their estimate: on ``<metric>_low``
    where it is above the estimate, on ``<metric>_high`` where it is below (only the
    columns with a mark)."""
    marks = {}
    for c in columns:
        v = result[c.name].to_numpy(dtype=np.float64)
        for end, beyond in (("low", np.greater), ("high", np.less)):
            col = f"{c.name}_{end}"
            mark = result[f"{c.name}{EXCLUDES_SUFFIX}"].to_numpy(dtype=bool) & beyond(
                result[col].to_numpy(dtype=np.float64), v)
            if mark.any():
                marks[col] = mark
    return marks


def _ci_header(args, seed: int, several: bool, tests: bool) -> list[str]:
    """The header line of --confidence-level: how the intervals were computed."""
    where = "of each data set " if several else ""
    line = (f"intervals: {args.ci:g} {args.ci_method} bootstrap intervals of every metric "
            f"(calibr.bootstrap), {args.ci_resamples} resamples of each group's rows")
    if not tests:
        line += (f"; seed: {seed} (group g {where}draws from "
                 f"numpy.random.SeedSequence({seed}).spawn(groups)[g].spawn(1)[0])")
    else:
        line += "; group g's intervals draw from the first child (.spawn(1)[0]) of its seed"
    return [line]


def _n_resamples(spec) -> int:
    """The resamples of a resampling test: its option, else calibration_test()'s default."""
    return int({**defaults(calibration_test), **spec.options}["n_resamples"])


def _test_columns(name: str, spec) -> list[str]:
    """The report's columns of one --test entry."""
    cols = [f"{name}_statistic", f"{name}_pvalue"]
    return cols + [f"{name}_n_resamples"] * (spec.method in RESAMPLING_TESTS) + [
        f"{name}_small_n"]


def _group(frame: pd.DataFrame, by: list | None, src: _Source) -> Any:
    """The grouped frame; missing keys form their own group, so that no row is dropped
    silently."""
    if not by:
        return frame
    grouped = frame.groupby(by, sort=True, dropna=False, observed=True)
    if _is_dask(frame):  # its keys are grouped when it is computed
        return grouped
    try:
        grouped.ngroups  # noqa: B018 - groups the keys now, to name a column that cannot be
    except TypeError:
        for col in by:
            for row, value in enumerate(frame[col], start=1):
                if not isinstance(value, Hashable):
                    raise CLIError(
                        f"--by: the column {col!r} of {src.label} holds values that cannot be "
                        f"grouped, the first at data row {row} (a {type(value).__name__}); "
                        "group by columns of numbers, strings or dates."
                    ) from None
        raise
    return grouped


def _count(p: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None,
           **_: Any) -> float:
    """The rows of a group, or with --weights their total weight."""
    return float(len(p)) if weights is None else float(np.sum(weights))


def _counts(n: np.ndarray) -> np.ndarray:
    """Counts (rows, or total weights) as integers when all are whole numbers (always
    without --weights), else as they are."""
    n = np.asarray(n, dtype=np.float64)
    return n.astype(np.int64) if bool(np.all(n == np.floor(n))) else n


def _with_engine(header: list[str], sources: list[_Source]) -> list[str]:
    """The header with the line that says where Dask computed a directory or glob
    input (``calibr.cli._engine``), after the line that names the input."""
    lines = [src.engine.header() for src in sources if src.engine is not None]
    return header[:1] + lines + header[1:]


def _weights_header(args) -> list[str]:
    if args.weights is None:
        return []
    return [f"weights: column {args.weights!r} (frequency weights; n is the total weight)"]


def _stack_tables(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Stack per-bin tables whose key columns may differ (``class`` only in some),
    keeping the key columns before ``bin`` and integer class labels integer."""
    keys: list = []
    for t in tables:
        keys += [c for c in t.columns if c not in TABLE_COLUMNS and c not in keys]
    if len(tables) > 1:
        tables = [
            t.astype({"class": "Int64"}) if "class" in t and t["class"].dtype.kind in "iu" else t
            for t in tables
        ]
    return pd.concat(tables, ignore_index=True)[keys + list(TABLE_COLUMNS)]


def _tag(df: pd.DataFrame, name: str | None) -> pd.DataFrame:
    if name is None:
        return df
    df = df.copy()
    df.insert(0, "dataset", name)
    return df


_NO_MATPLOTLIB = "--plot needs matplotlib; install it with `pip install matplotlib`."


def _plot_format(path: str) -> str:
    """The image format of --plot (checked before anything is computed)."""
    fmt = Path(path).suffix.lower().lstrip(".")
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise CLIError(_NO_MATPLOTLIB) from None
    known = FigureCanvasBase.get_supported_filetypes()
    if fmt not in known:
        raise CLIError(
            f"--plot {path}: cannot tell the image format from the extension "
            f"{'.' + fmt if fmt else '(none)'}; use .png, .pdf or .svg (or "
            f"{', '.join('.' + k for k in sorted(known) if k not in ('png', 'pdf', 'svg'))})."
        )
    return fmt


def _bin_defaults() -> dict[str, Any]:
    """``binning`` and ``right`` when --binning and --right are not given: ece()'s,
    as for --bins and --type."""
    opts = defaults(ece)
    return {"binning": opts["binning"], "right": opts["right"]}


def _bins_words(header: list[str], options: dict) -> list[str]:
    """The header's line of the bins, in the words of --binning and --right."""
    if not options:
        return header
    options = {**_bin_defaults(), **options}
    kind = options["binning"]
    side = ("closed on the right, 0 in the first bin" if options["right"]
            else "closed on the left, 1 in the last bin")
    own = " (each group's and class's own breaks)" if kind == "equal-mass" else ""
    return [f"{line.split(' equal-width bins')[0]} {kind} bins{own}, {side}"
            if line.startswith("bins: ") else line for line in header]


#: The forms of --plot in its title.
_PLOT_FORM_WORDS = {"binary": "binary", "classwise": "classwise",
                    "confidence": "confidence (each row's highest probability)"}


def _plot(table: pd.DataFrame, fmt: str, bins: int, sources: list[_Source],
          forms: list[str], switched: list[bool], binning_options: dict | None = None) -> bytes:
    """The figure of --plot: one panel per group of ``table`` (the sources' plot
    tables stacked), in each source's form (``forms``); ``switched`` marks the
    sources drawn as the top label although their metrics are classwise."""
    cols = list(table.columns)
    groups = [c for c in cols[: cols.index("bin")] if c != "class"]
    n_panels = by_columns(table, groups).ngroups if groups else 1
    if n_panels > MAX_PLOT_PANELS:
        raise CLIError(
            f"--plot draws one panel per group, and {n_panels} groups are too many for one "
            f"figure (at most {MAX_PLOT_PANELS}); use fewer --by columns."
        )
    words = [_PLOT_FORM_WORDS[f] for f in forms]
    if len(set(forms)) == 1:
        form = words[0]
    else:
        form = ", ".join(f"{w} ({s.tag or s.label})" for w, s in zip(words, sources, strict=True))
    curves = "; one curve per class" if "classwise" in forms else ""
    options = {**_bin_defaults(), **(binning_options or {})}
    kind = options["binning"]
    closed = "" if options["right"] else ", closed on the left"
    title = f"Reliability diagrams: {bins} {kind} bins{closed}; form: {form}{curves}"
    moved = [s for s, m in zip(sources, switched, strict=True) if m]
    if moved:
        who = (", ".join(s.tag or s.label for s in moved) + ": ") if len(sources) > 1 else ""
        title += (f"\n{who}more than {FEW_CURVES} classes, drawn as the confidence, "
                  "not in the classwise form of the metrics (--type classwise draws that)")
    # the panels of a multiclass confidence table name their ECE's form: the table
    # looks binary, and the printed ece may be classwise
    ece_label: str | dict = "confidence ECE" if forms[0] == "confidence" else "ECE"
    if len(sources) > 1:  # the first group column is the data set's tag
        top = {s.tag for s, f in zip(sources, forms, strict=True) if f == "confidence"}
        ece_label = {key: "confidence ECE" for key, sub in subframes(table, groups)
                     if sub["dataset"].iloc[0] in top}
    try:
        from ..plot import reliability_diagram

        fig = reliability_diagram(table, by=groups, title=title, show_ece=True,
                                  ece_label=ece_label)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt)
    except ImportError:
        raise CLIError(_NO_MATPLOTLIB) from None
    return buf.getvalue()


# --------------------------------------------------------------------------
# the MCE's bin

def _bin_n_column(name: str) -> str:
    return f"{name}_bin_n"


def _mce_bin_counts(table: pd.DataFrame, keys: list, n_groups: int) -> np.ndarray:
    """Per group (pandas' order): the sample count of the bin with the largest gap
    (over all classes for a classwise table; ties: the largest count)."""
    if keys:
        ids = by_columns(table, keys).ngroup().to_numpy()
    else:
        ids = np.zeros(len(table), dtype=np.int64)
    gap = table["gap"].to_numpy(dtype=np.float64)
    n = table["n"].to_numpy(dtype=np.float64)  # total weights with --weights
    order = np.lexsort((-n, -gap, ids))  # by group, then largest gap, then largest count
    first = np.unique(ids[order], return_index=True)[1]
    if len(first) != n_groups:  # pragma: no cover - the table and the summary disagree
        raise RuntimeError(
            f"the per-bin table has {len(first)} groups, the summary {n_groups}."
        )
    return _counts(n[order[first]])
