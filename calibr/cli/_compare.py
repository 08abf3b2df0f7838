"""The ``compare`` command: is a candidate model's calibration worse than the
baseline's on the same rows? A release gate for CI (``docs/regression_gate.md``).

::

    calibr compare baseline.csv candidate.csv --key id --by segment
    calibr compare preds.csv --p-baseline p_old --p-candidate p_new --metrics "ece,mce(bins=5)"

For each metric and group, :func:`calibr.paired_bootstrap` of the difference
candidate - baseline on the same rows, with ``alternative="greater"`` (the
alternative hypothesis: the candidate's error is larger; ``"less"`` for a metric
where larger is better, ``auroc``: ``calibr._registry.higher_is_better``). Exit status 0: no
significant worsening; 1: a significant worsening at ``--confidence-level`` (p-value below
1 - level) in some metric and group; 2: bad input (one line on stderr, nothing
written to stdout); 3: an internal error (``calibr.cli.main``).

The parser part (:func:`add_parser`) imports nothing of calibr's numerics, as
the rest of the command line's parser; :func:`run` imports them.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .._defaults import BOOTSTRAP_RESAMPLES_DEFAULT, GATE_MIN_N
from .._registry import DEFAULT_METRIC, higher_is_better
from ._args import ENGINE_CHOICES, ENGINE_HELP, _ColumnList, renamed_option
from ._errors import EXIT_INPUT, CLIError, _cli_message

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EXIT_WORSE", "add_parser", "run"]

#: Exit status when the candidate is significantly worse (0: it is not; 2: bad input).
EXIT_WORSE = 1
DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = BOOTSTRAP_RESAMPLES_DEFAULT
#: The metric compared when --metrics is not given: bootstrap()'s (the registry's).
DEFAULT_METRICS = DEFAULT_METRIC
#: The columns of the result after the group keys.
RESULT_COLUMNS = ("metric", "n", "small_n", "baseline", "candidate", "difference", "ci_low",
                  "ci_high", "pvalue", "worse")
#: The columns --p-adjust adds after pvalue.
ADJUSTED_COLUMNS = ("pvalue_adjusted", "pvalue_below_resolution")
#: The methods of --p-adjust: R's p.adjust names (calibr.p_adjust; kept equal to
#: calibr._inference.multitest.P_ADJUST_METHODS by the tests, so the parser imports no numerics).
P_ADJUST_CHOICES = ("holm", "hochberg", "hommel", "bonferroni", "BH", "BY", "fdr", "none")
#: Keys shown in a "not matched" message before "...".
_KEYS_SHOWN = 3

_DESCRIPTION = """\
Compare the calibration of a candidate model with a baseline on the same rows:
for each metric and group, the paired bootstrap of the difference candidate -
baseline (calibr.paired_bootstrap, alternative "greater": the alternative
hypothesis is that the candidate's error is larger). Every calibr metric is an
error, lower is better, except auroc: higher is better, tested with alternative
"less".

Either two files, BASELINE and CANDIDATE, with the predictions of each model for
the same rows (in the same order, or matched by --key), or one file with both
models' probability columns (--p-baseline and --p-candidate).
"""

_EPILOG = """\
exit status: 0 when no metric of any group is significantly worse; 1 when one is
(its p-value is below 1 - --confidence-level, e.g. p < 0.05 at the default 0.95), so that a CI
job can gate a release on it; 2 for bad input (one line on stderr, nothing on
stdout); 3 for an internal error (a bug in calibr: never read as a verdict). Each
metric and group is its own test at --confidence-level, unless --p-adjust METHOD
adjusts the p-values of all comparisons together (calibr.p_adjust, R's p.adjust
names: holm, hochberg, hommel, bonferroni, BH, BY, fdr, none): the column
pvalue_adjusted follows pvalue, and "worse" (and the exit status) then reads
it. Without --p-adjust there is no correction for multiple comparisons: with
several, the chance of a false alarm grows. A p-value of 0 is "< 1/B" (B =
--n-resamples), read as 1/B: it is adjusted as 1/B, its adjusted value is an
upper bound (shown "< x"; the column pvalue_below_resolution says which), and
"worse" reads that bound.

small groups: a group of fewer than --min-n rows (default 100) is shown, marked
small_n (the table's worse column reads "n < 100"), and never gates: its
p-value is not read, it is left out of --p-adjust's family (pvalue_adjusted
NaN), and it cannot make the exit status 1. On fewer rows the bootstrap
resamples a sample that need not resemble the population (four rows all y = 0
make every resample agree), and in simulation the gate's false alarms exceed
the level (docs/regression_gate.md, "Small groups"). --min-n 0 gates every
group.

p-value: the share of bootstrap replicates whose difference is <= 0 (it inverts
the percentile interval); ci_low is the one-sided lower bound of the difference
at --confidence-level (ci_high is infinite). Resampling draws the rows (the label and both
models' predictions together) with --seed (default 0), the same seed for each
group and metric.

numbers: the table output shows the numbers to 4 significant digits (as calibr
report does) and a p-value of 0 as < 1/B (< 0.0001 for the default 9999
resamples); CSV and JSON keep every digit.

column lists: --prob, --p-baseline, --p-candidate and --by take a
comma-separated list (p_0,p_1,p_2), repeats or words separated by spaces; the
files go first (calibr compare a.csv b.csv --prob p) or after -- (calibr compare
--prob p -- a.csv b.csv).
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``calibr compare`` and its options.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The object ``parser.add_subparsers(dest="command")`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The parser of the ``compare`` command (its ``run`` default is
        :func:`run`).
    """
    cmp = subparsers.add_parser(
        "compare",
        help="is a candidate model worse calibrated than a baseline? (a CI gate)",
        description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmp.add_argument("baseline", metavar="BASELINE",
                     help="predictions of the baseline model (.csv, .tsv, .parquet), or of "
                     "both models with --p-baseline and --p-candidate")
    cmp.add_argument("candidate", metavar="CANDIDATE", nargs="?",
                     help="predictions of the candidate model for the same rows")
    cmp.add_argument("--engine", choices=ENGINE_CHOICES, help=ENGINE_HELP)
    cmp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                     help="on an error, show Python's full traceback")
    cols = cmp.add_argument_group("columns")
    cols.add_argument("-p", "--prob", nargs="+", action=_ColumnList, metavar="COL",
                      help="two files: the probability column(s) of each (default: p; a "
                      "list as in calibr report: p_0,p_1,p_2)")
    cols.add_argument("--p-baseline", nargs="+", action=_ColumnList, metavar="COL",
                      help="one file: the baseline's probability column(s)")
    cols.add_argument("--p-candidate", nargs="+", action=_ColumnList, metavar="COL",
                      help="one file: the candidate's probability column(s)")
    cols.add_argument("-y", "--label", metavar="COL", default="y",
                      help="label column (default: y), read from BASELINE (if CANDIDATE has "
                      "it too, it must agree)")
    cols.add_argument("--key", metavar="COL",
                      help="two files: the column that identifies a row in both; rows are "
                      "matched by it (each key once in each file, the same keys in both)")
    cols.add_argument("-g", "--by", nargs="+", action=_ColumnList, metavar="COL",
                      help="grouping columns of BASELINE (rows with a missing key form their "
                      "own group)")
    cols.add_argument("--classes", metavar="LABELS",
                      help="multiclass: comma-separated label of each probability column")
    cols.add_argument("--sep", metavar="CHAR", help="the field separator of CSV input")
    test = cmp.add_argument_group("test")
    test.add_argument("-m", "--metrics", default=DEFAULT_METRICS, metavar="LIST",
                      help='comma-separated metrics with options, e.g. "ece,mce(bins=5)" '
                      f"(default: {DEFAULT_METRICS})")
    renamed_option(test, "--confidence-level", "--level", dest="level", type=float,
                   default=DEFAULT_LEVEL, metavar="L",
                   help="confidence level: a worsening is significant when its "
                   f"p-value < 1 - L (default: {DEFAULT_LEVEL})")
    test.add_argument("--n-resamples", type=int, default=DEFAULT_RESAMPLES, metavar="B",
                      help=f"bootstrap replicates (default: {DEFAULT_RESAMPLES})")
    test.add_argument("--p-adjust", choices=P_ADJUST_CHOICES, default=None, metavar="METHOD",
                      help="adjust the p-values of all comparisons (metrics and groups) "
                      "together: " + ", ".join(P_ADJUST_CHOICES) + " (calibr.p_adjust; "
                      "default: no adjustment)")
    test.add_argument("--min-n", type=int, default=GATE_MIN_N, metavar="N",
                      help="the least rows of a group that can gate: a smaller group is "
                      f"shown, marked small_n, and never gates (default: {GATE_MIN_N}; 0: "
                      "every group gates)")
    test.add_argument("--seed", type=int, default=0, metavar="N",
                      help="seed of the bootstrap, a nonnegative integer (default: 0)")
    cmp.add_argument("-f", "--format", choices=("table", "csv", "json"), default="table",
                     help="output format (default: table)")
    cmp.add_argument("--html", metavar="PATH",
                     help="also write a self-contained HTML report to PATH: the verdict and "
                     "the exit status in words, baseline against candidate per group and "
                     "metric with the paired difference and its bound, and each group's "
                     "reliability diagrams (docs/cli.md)")
    cmp.set_defaults(run=run)
    return cmp


def run(args: argparse.Namespace) -> int:
    """Run ``calibr compare`` with the parsed arguments; return the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments of the parser made by :func:`add_parser`.

    Returns
    -------
    int
        0: no metric of any group is significantly worse; 1: one is (p-value
        below ``1 - args.level``); 2: bad input, after one line
        ``calibr: error: ...`` on stderr (nothing is written to stdout);
        141 when stdout is a pipe closed early.
    """
    from .._input import InputError, InputTypeError

    try:
        return _run(args)
    except CLIError as err:
        message = str(err)
    except (InputError, InputTypeError) as err:
        message = _cli_message(err)
    print(f"calibr: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_INPUT


# --------------------------------------------------------------------------
# the options


def _options(args: argparse.Namespace) -> tuple[float, int, int, int]:
    import math

    from .._input import MAX_RESAMPLES

    level = args.level
    if not (math.isfinite(level) and 0.0 < level < 1.0):
        raise CLIError("--confidence-level must be a number strictly between 0 and 1; got "
                       f"{level!r}.")
    if not 1 <= args.n_resamples <= MAX_RESAMPLES:
        raise CLIError(f"--n-resamples must be an integer from 1 to {MAX_RESAMPLES:,}; got "
                       f"{args.n_resamples}.")
    if args.seed < 0:
        raise CLIError(f"--seed must be a nonnegative integer; got {args.seed}.")
    min_n = getattr(args, "min_n", GATE_MIN_N)
    if min_n < 0:
        raise CLIError(f"--min-n must be a nonnegative integer; got {min_n}.")
    return level, args.n_resamples, args.seed, min_n


def _layout(args: argparse.Namespace) -> tuple[list, list]:
    """The probability columns of the baseline and of the candidate."""
    if args.candidate is not None:
        for option, value in (("--p-baseline", args.p_baseline),
                              ("--p-candidate", args.p_candidate)):
            if value is not None:
                raise CLIError(f"{option} names a column of the one file that holds both "
                               "models; with BASELINE and CANDIDATE, give --prob.")
        cols = args.prob or ["p"]
        return list(cols), list(cols)
    if args.prob is not None:
        raise CLIError("--prob names the column of each of two files; with one file, give "
                       "--p-baseline and --p-candidate.")
    if args.p_baseline is None or args.p_candidate is None:
        raise CLIError("one file holds both models: give --p-baseline COL and --p-candidate "
                       "COL (or give two files, BASELINE and CANDIDATE).")
    if args.key is not None:
        raise CLIError("--key matches the rows of two files; with one file, the rows are "
                       "those of the file.")
    if len(args.p_baseline) != len(args.p_candidate):
        raise CLIError(f"--p-baseline and --p-candidate must name as many columns; got "
                       f"{len(args.p_baseline)} and {len(args.p_candidate)}.")
    if set(args.p_baseline) & set(args.p_candidate):
        raise CLIError("--p-baseline and --p-candidate must name different columns.")
    return list(args.p_baseline), list(args.p_candidate)


# --------------------------------------------------------------------------
# the rows


def _need(frame: pd.DataFrame, column: Any, option: str, label: str) -> None:
    if column not in frame.columns:
        shown = ", ".join(repr(c) for c in list(frame.columns)[:10])
        more = f", ... ({len(frame.columns)} in all)" if len(frame.columns) > 10 else ""
        raise CLIError(f"{option}: no column {column!r} in {label}; its columns are "
                       f"{shown or 'none'}{more}.")


def _shown_keys(values: list) -> str:
    text = ", ".join(repr(v) for v in values[:_KEYS_SHOWN])
    return text + (", ..." if len(values) > _KEYS_SHOWN else "")


def _unique_keys(frame: pd.DataFrame, key: str, label: str) -> None:
    col = frame[key]
    if col.isna().any():
        row = int(col.isna().to_numpy().nonzero()[0][0]) + 1
        raise CLIError(f"--key {key!r}: {label} has a missing key at data row {row}; each row "
                       "needs a key.")
    dup = col[col.duplicated(keep=False)]
    if len(dup):
        first = dup.iloc[0]
        rows = (col == first).to_numpy().nonzero()[0][:2] + 1
        count = int(col.duplicated().sum())
        raise CLIError(
            f"--key {key!r}: the key {first!r} appears more than once in {label} (data rows "
            f"{rows[0]} and {rows[1]}; {count} repeated key{'s' if count != 1 else ''} in "
            "all); each row needs its own key.")


def _match(base: pd.DataFrame, cand: pd.DataFrame, key: str | None, labels: tuple[str, str]
           ) -> Any:
    """The position in ``cand`` of each row of ``base`` (numpy array)."""
    import numpy as np
    import pandas as pd

    if key is None:
        if len(base) != len(cand):
            raise CLIError(
                f"{labels[0]} has {len(base)} data rows and {labels[1]} {len(cand)}; they must "
                "hold the same rows (give --key COL to match them by a key column).")
        return np.arange(len(base))
    for frame, label in zip((base, cand), labels, strict=True):
        _need(frame, key, "--key", label)
        _unique_keys(frame, key, label)
    where = pd.Index(cand[key]).get_indexer(base[key])
    if (where < 0).any():
        missing = base[key][where < 0].tolist()
        raise CLIError(
            f"--key {key!r}: {len(missing)} key{'s' if len(missing) != 1 else ''} of "
            f"{labels[0]} {'are' if len(missing) != 1 else 'is'} not in {labels[1]} "
            f"({_shown_keys(missing)}); both files must hold the same rows.")
    if len(cand) != len(base):
        extra = cand[key][~cand[key].isin(base[key])].tolist()
        raise CLIError(
            f"--key {key!r}: {len(extra)} key{'s' if len(extra) != 1 else ''} of {labels[1]} "
            f"{'are' if len(extra) != 1 else 'is'} not in {labels[0]} ({_shown_keys(extra)}); "
            "both files must hold the same rows.")
    return where


def _validate_side(frame: pd.DataFrame, p: list, y: Any, classes: Any, label: str,
                   two_files: bool) -> None:
    """Check every row of one model's probabilities, naming the data row of its file."""
    from .._input import InputError, InputTypeError
    from .._input.groups import resolve_columns
    from ._columns import _check_row_sums, _validate

    word = "--prob" if two_files else ("--p-baseline" if "baseline" in label else
                                       "--p-candidate")
    p_word = f"{word} of {label}" if two_files else word
    try:
        cols = resolve_columns(frame, p[0] if len(p) == 1 else p, y, None, classes)
    except (InputError, InputTypeError) as err:
        raise CLIError(_cli_message(err, p_word)) from None
    _check_row_sums(frame, cols, p_word)
    _validate(frame, cols, False, p_word)


def _check_html(args: argparse.Namespace) -> None:
    """--html: a file that can be written, and no file of either input (checked
    first, ``calibr.cli._io.check_outputs``)."""
    from ._io import check_outputs

    two = args.candidate is not None
    check_outputs([(args.html, "--html")],
                  [("BASELINE" if two else "FILE", args.baseline), ("CANDIDATE", args.candidate)])


def _run(args: argparse.Namespace) -> int:
    level, n_resamples, seed, min_n = _options(args)
    p_base, p_cand = _layout(args)
    html = getattr(args, "html", None)
    if html is not None:
        _check_html(args)
    from .._input import InputError, InputTypeError
    from ._args import _sep, parse_metrics

    metrics = parse_metrics(args.metrics)
    sep = _sep(args.sep)

    import numpy as np
    import pandas as pd

    from .._inference.bootstrap import paired_bootstrap
    from .._input.groups import classes_from_names, numbered_classes
    from ._io import _read, _write_stdout
    from ._render import _render

    two = args.candidate is not None
    names = ("BASELINE", "CANDIDATE") if two else ("FILE", "FILE")
    labels = ((f"BASELINE {args.baseline}", f"CANDIDATE {args.candidate}") if two
              else (args.baseline, args.baseline))
    engine = getattr(args, "engine", None)
    base = _read(args.baseline, sep, engine)
    cand = _read(args.candidate, sep, engine) if two else base
    if len(base) == 0:
        raise CLIError(f"{labels[0]} has no data rows, only a header.")
    y = args.label
    _need(base, y, "--label", labels[0])
    for col in p_base:
        _need(base, col, "--p-baseline" if not two else "--prob", labels[0])
    for col in p_cand:
        _need(cand, col, "--p-candidate" if not two else "--prob", labels[1])
    by = list(args.by or [])
    for col in by:
        _need(base, col, "--by", labels[0])
        if col in RESULT_COLUMNS:
            raise CLIError(f"--by: the column {col!r} has the name of a column of the "
                           "result; rename it in the data.")
    where = _match(base, cand, args.key, labels) if two else np.arange(len(base))
    classes = None
    if args.classes is not None:
        wanted = [s.strip() for s in args.classes.split(",")]
        try:
            classes = classes_from_names(wanted, base[y], "--classes")
        except InputError:
            raise CLIError(f"--classes: the labels in {y!r} are numbers, so the classes must "
                           f"be integers; got {args.classes!r}.") from None
    elif len(p_base) > 1:
        # numeric labels match the columns numbered after one prefix (p_0, p_1, ... or 0,
        # 1, ...), as in report; else the metrics say what is wrong, and suggest --classes
        classes = numbered_classes([str(c) for c in p_base], base[y])

    # the candidate's labels (its own column if it has one, else the baseline's) in its order
    if two:
        cand_y = np.empty(len(cand), dtype=object)
        cand_y[where] = base[y].to_numpy(dtype=object)
        if y in cand.columns:
            mine = cand[y].to_numpy(dtype=object)[where]
            theirs = base[y].to_numpy(dtype=object)
            differ = ~((mine == theirs) | (pd.isna(mine) & pd.isna(theirs)))
            if differ.any():
                row = int(differ.nonzero()[0][0])
                raise CLIError(
                    f"--label {y!r} differs between the files: data row {row + 1} of "
                    f"{names[0]} has {theirs[row]!r}, the same row of {names[1]} "
                    f"{mine[row]!r}; the files must hold the same rows (--key matches rows "
                    "by a key column).")
        cand_frame = cand[p_cand].copy()
        cand_frame[y] = pd.Series(cand_y, index=cand.index).infer_objects()
        _validate_side(base, p_base, y, classes, labels[0], True)
        _validate_side(cand_frame, p_cand, y, classes, labels[1], True)
    else:
        _validate_side(base, p_base, y, classes, "the baseline", False)
        _validate_side(base, p_cand, y, classes, "the candidate", False)

    pb = base[p_base].reset_index(drop=True)
    pc = cand[p_cand].iloc[where].reset_index(drop=True)
    pc.columns = pb.columns  # one file: the candidate's columns stand for the same classes
    labels_y = base[y].reset_index(drop=True)
    keys = base[by].reset_index(drop=True) if by else None
    if keys is not None:
        grouped = keys.groupby(by, sort=True, dropna=False, observed=True)
        parts = [(key if isinstance(key, tuple) else (key,), g.index.to_numpy())
                 for key, g in grouped]
    else:
        parts = [((), np.arange(len(base)))]

    rows = []
    alpha = 1.0 - level
    # a p-value of 0 is "< 1/B": it is worse only if 1/B is below alpha, and adjusted
    # as 1/B (docs/calibration_tests.md, "Resolution of a resampled p-value")
    resolution = 1.0 / n_resamples
    for key, idx in parts:
        for name, spec in metrics:
            p1 = pc.iloc[idx] if len(p_cand) > 1 else pc.iloc[idx, 0]
            p0 = pb.iloc[idx] if len(p_base) > 1 else pb.iloc[idx, 0]
            # the worse direction: larger for an error, smaller for auroc (calibr._registry)
            alternative = "less" if higher_is_better(spec.func) else "greater"
            try:
                res = paired_bootstrap(p1, p0, labels_y.iloc[idx], spec.func,
                                       n_resamples=n_resamples, confidence_level=level,
                                       alternative=alternative, rng=seed, classes=classes,
                                       **spec.options)
            except (InputError, InputTypeError) as err:
                group = ", ".join(f"{c}={v!r}" for c, v in zip(by, key, strict=True))
                msg = _cli_message(err, names={"p_a": "the candidate's probabilities",
                                               "p_b": "the baseline's probabilities"})

                raise CLIError(f"--metrics {name}: {msg}"
                               + (f" [group {group}]" if group else "")) from None
            small = res.n < min_n  # shown, never gates (docs/regression_gate.md)
            rows.append({**dict(zip(by, key, strict=True)), "metric": name, "n": res.n,
                         "small_n": small, "baseline": res.estimate_b, "candidate": res.estimate_a,
                         "difference": res.estimate, "ci_low": res.confidence_interval.low,
                         "ci_high": res.confidence_interval.high, "pvalue": res.pvalue,
                         "worse": bool(max(res.pvalue, resolution) < alpha) and not small})
    result = pd.DataFrame(rows, columns=[*by, *RESULT_COLUMNS])
    method = getattr(args, "p_adjust", None)
    if method is not None:
        from .._inference.multitest import adjust_array, below_resolution

        for col in ADJUSTED_COLUMNS:
            if col in by:
                raise CLIError(f"--by: the column {col!r} has the name of a column of "
                               "the result with --p-adjust; rename it in the data.")
        # the family is the comparisons that can gate: a small group's p-value is not read
        gates = ~result["small_n"].to_numpy(dtype=bool)
        raw = result["pvalue"].to_numpy(dtype=np.float64)
        adjusted = np.full(len(result), np.nan)
        adjusted[gates] = adjust_array(raw[gates], method, resolution=resolution)
        at = result.columns.get_loc("pvalue") + 1
        result.insert(at, "pvalue_adjusted", adjusted)
        result.insert(at + 1, "pvalue_below_resolution",
                      gates & below_resolution(raw, resolution))
        result["worse"] = gates & (adjusted < alpha)
    worse = result[result["worse"]]
    small = int(result["small_n"].sum())
    higher = [name for name, spec in metrics if higher_is_better(spec.func)]
    header = [
        (f"calibr compare of {labels[0]} (baseline) and {labels[1]} (candidate)" if two else
         f"calibr compare of {args.baseline}: {', '.join(p_base)} (baseline) and "
         f"{', '.join(p_cand)} (candidate)"),
        f"rows: {len(base)}" + (f", matched by --key {args.key!r}" if args.key else
                                ", in the same order" if two else ""),
        "difference = candidate - baseline (" + (
            "every metric is an error: larger is worse)" if not higher else
            f"larger is worse, except for {', '.join(higher)}: smaller is worse)"),
        "method: paired bootstrap (calibr.paired_bootstrap, alternative=\"greater\""
        + (f", \"less\" for {', '.join(higher)}" if higher else "")
        + f": the candidate is worse), percentile, {n_resamples} resamples, seed {seed} "
        "(the same for each group and metric)",
        f"worse: {'adjusted ' if method else ''}p-value < {alpha:.6g} (--confidence-level "
        f"{level:g}); ci_low = one-sided {level:.6g} lower bound of the difference"
        + (f" (ci_high: its upper bound, for {', '.join(higher)})" if higher else ""),
    ]
    header.append(f"gate: groups of at least {min_n} rows (--min-n {min_n}); a smaller group "
                  "is shown, marked small_n, and never gates: a bootstrap of so few rows "
                  "says nothing about the population")
    if method is not None:
        header.append(f"p-values adjusted by {method!r} over the {len(result) - small} "
                      "comparisons that can gate (calibr.p_adjust, R's p.adjust); a p-value "
                      f"below 1/B = {resolution:g} counts as 1/B, and its adjusted value, < x, "
                      "is an upper bound")
    shown = result.copy()
    shown["worse"] = np.where(result["worse"], "yes",
                              np.where(result["small_n"], f"n < {min_n}", "no"))
    shown["small_n"] = np.where(result["small_n"], "yes", "no")
    if args.format == "table":
        pvalues = {"pvalue": n_resamples}
        bounds = {}
        if method is not None:
            pvalues["pvalue_adjusted"] = n_resamples
            bounds["pvalue_adjusted"] = result["pvalue_below_resolution"].to_numpy()
            shown = shown.drop(columns="pvalue_below_resolution")
        text = _render(shown, "table", header, exact=[*by, "n"], pvalues=pvalues,
                       bounds=bounds)
        note = (f"; {small} comparison{'s' if small != 1 else ''} of groups under {min_n} "
                f"rows shown, not gating (--min-n)" if small else "")
        if len(worse):
            which = "; ".join(
                f"{r['metric']}" + (" (" + ", ".join(f"{c}={r[c]!r}" for c in by) + ")"
                                    if by else "") for _, r in worse.iterrows())
            text += (f"\nresult: the candidate is significantly worse in {len(worse)} of "
                     f"{len(result)} comparison{'s' if len(result) != 1 else ''}: {which} "
                     f"(exit status {EXIT_WORSE}){note}\n")
        else:
            text += (f"\nresult: no significant worsening in {len(result)} comparison"
                     f"{'s' if len(result) != 1 else ''} (exit status 0){note}\n")
    else:
        text = _render(result, args.format, header)
    if html is not None:  # the page of calibr._html, written before the table is printed
        from .._html._compare import compare_html
        from ._io import _commit, _Output

        page = compare_html(result, by, header, parts, pb, pc, labels_y, classes, level,
                            n_resamples, EXIT_WORSE, method, min_n)
        _commit([_Output(html, "--html", page.encode("utf-8"))])
    status = _write_stdout(text)
    if status:
        return status
    return EXIT_WORSE if len(worse) else 0
