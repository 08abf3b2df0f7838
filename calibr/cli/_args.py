"""The command line: the parser of ``calibr report`` with its help, and the
``--metrics`` lists ("ece,mce(bins=5),skce(estimator=ul)")."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .. import __version__
from .._defaults import (
    BINNED_TYPE_DEFAULT,
    BINNING_DEFAULT,
    BINS_DEFAULT,
    BOOTSTRAP_RESAMPLES_DEFAULT,
    RIGHT_DEFAULT,
)
from .._registry import BATTERY, BINNED, DEFAULT_METRICS, METRICS
from ._errors import EXIT_BROKEN_PIPE, CLIError, _cli_message

if TYPE_CHECKING:
    from ..frame import CalibrationTest, Metric

# The parser imports nothing of calibr's numerics (numpy, pandas, numba), so that
# `calibr --help`, `--version` and a mistyped option answer at once; the metric
# lists import calibr.frame when they are read.

#: An MCE that comes from a bin with fewer samples than this is marked in the
#: table output (a gap measured on so few samples is mostly noise).
MCE_MIN_BIN_COUNT = 10

#: --renormalize divides each row by its sum only if every row sums to 1 within this.
RENORMALIZE_TOL = 1e-3

_METRIC_WORDS = ", ".join(METRICS)
_BINNED_WORDS = ", ".join(BINNED)
_FORMATS = ("table", "csv", "json")

_DESCRIPTION = """\
Compute calibration metrics per group from a CSV or Parquet file of predictions
and print them as a table, CSV or JSON (one row per group, one column per metric,
and the number n of rows used).

Without FILE the report uses calibr's bundled example data: the out-of-fold
predictions of three scikit-learn classifiers (naive Bayes, logistic regression,
a random forest) on the breast cancer data (binary, column p) and on the digits
data (10 classes, columns p_0..p_9), grouped by dataset and model. --example
picks one of the two data sets instead.
"""

_EPILOG = f"""\
tests: --test adds a calibration test per group (calibr.calibration_test): skce,
skce_block, consistency, spiegelhalter, hosmer_lemeshow (these two binary only),
ks or kuiper (the cumulative tests of calibr.ecce), each optionally with
options in parentheses, e.g. "consistency(metric=mce,n_resamples=500)"; --test
is repeatable and takes comma-separated lists. Each test adds the columns <test>_statistic and
<test>_pvalue (and <test>_n_resamples for skce and consistency) and the column
seed; the table output says which tests ran. Resampling uses --seed (default 0,
so that a report is reproducible), with its own random stream per group.

intervals: --confidence-level LEVEL adds the bootstrap confidence interval (calibr.bootstrap) of
every metric per group, as the columns <metric>_low and <metric>_high after each
metric, and the columns ci_level, ci_method, ci_resamples and seed; the table
output says how they were computed. Each group resamples its rows --n-resamples
times (default 9999) with --seed; --ci-method is percentile (default), basic or
bca. Not with --per-bin or --weights.

metrics: a comma-separated list of metrics ({_METRIC_WORDS}), each optionally with
options in parentheses, as in R: "ece,mce(bins=5),skce(estimator=ul,bandwidth=0.1)".
--bins, --type, --binning and --right apply to the binned metrics ({_BINNED_WORDS}; and
the per-bin table and the plot) unless a metric sets them itself, e.g.
"ece(binning=equal-mass,bins=15,right=false)". The columns form and bins say which
form and bins the ece and mce columns without their own options use: binary (one
probability column), or for multiclass data classwise (ece: the mean over the classes of each
class's one-vs-rest ECE; mce: the largest gap of any class) or confidence (each
row's highest probability against whether its class is the label), or with --type
top-label the top-label calibration error of Gupta & Ramdas (each predicted class's
own bins; ece: the share-weighted gaps of every (class, bin) cell, mce: the
largest), for one probability column too (as the columns 1 - p and p).

mce_bin_n: each mce column is followed by the number of samples in the bin that
gives the MCE (classwise: the bin of the largest gap over all classes). The table
output marks an MCE from a bin of fewer than {MCE_MIN_BIN_COUNT} samples with *.

column lists: --prob and --by take several columns as a comma-separated list
(--by model,fold), by repeating the option (--by model --by fold) or separated by
spaces (--by model fold); the names are exact (nothing is stripped; a name that
holds a comma cannot be given) and each appears once. A list separated by spaces
takes every word up to the next option, so put FILE first (calibr report
preds.csv --by model fold) or end the list with -- (calibr report --by model fold
-- preds.csv); without FILE, a list that ends in the name of a file (preds.csv,
data/, "parts/*.parquet", -) is an error that says so.

multiclass: with --prob-prefix p_ the columns p_<label> hold the probability of
each class; numeric labels match the columns whose suffix is that integer (the
label 3 is the class of p_3). With --prob a b c, numeric labels match columns
numbered after one prefix in the same way (--prob p_0,p_1,p_2: the label 2 is the
class of p_2); other labels must equal the column names, or --classes must give
the label of each column (e.g. --classes 1,2,3 for R's 1-based codes). Each row of
probabilities must sum to 1 within 1e-6 (as in R); --renormalize fixes rows that
were rounded (e.g. saved with 6 decimals).

weights: --weights COL names a column of frequency weights (one nonnegative number
per row; a whole number w counts its row w times): every metric, the per-bin table
and the plot are weighted, and n, mce_bin_n and the per-bin n are total weights.
--test takes them for ks and kuiper only (the other calibration tests have no weights);
not with --confidence-level (the bootstrap's resamples are weights themselves), nor with
skce(estimator=ul) or bandwidth=median.

rows: "data row N" in a message is the N-th row after the header of FILE.

numbers: the table output shows every computed number to 4 significant digits,
in one notation per column (fixed point, or scientific where that is narrower);
counts and group keys as they are. A p-value from B resamples that is 0 shows as
< 1/B (e.g. < 0.001 for 1000 resamples), an analytic one below 2.2e-16 as
< 2.2e-16. CSV and JSON keep every digit.

exit status: 0 on success; 2 for bad input (one line on stderr, nothing written);
1 for an internal error (a bug in calibr: run again with --debug and report it;
calibr compare has its own statuses, see calibr compare --help);
{EXIT_BROKEN_PIPE} when the reader of the output closed the pipe early (e.g. | head).
"""


# --------------------------------------------------------------------------
# column lists: --prob, --by (and compare's --p-baseline, --p-candidate)

#: The names of the files calibr reads (``_io._read``): CSV, TSV, Parquet, compressed CSV.
_DATA_NAME = re.compile(r"\.(csv|txt|tsv|parquet|pq)(\.(gz|bz2|xz|zip|zst))?$", re.IGNORECASE)

#: How a value that names an input is described: (one value, several values).
_PATH_WORDS = {
    "file": ("it is a file", "they are files"),
    "directory": ("it is a directory", "they are directories"),
    "glob": ("it is a glob of files", "they are globs of files"),
    "name": ("it looks like a file name", "they look like file names"),
    "stdin": ("it is standard input", "they are standard input"),
}


class _ColumnList(argparse.Action):
    """A list of column names: space-separated (``--by model fold``), comma-separated
    (``--by model,fold``) or repeated (``--by model --by fold``), each name once.

    Each use is recorded in the namespace (``_column_lists``), so that a FILE that a
    space-separated list took can be named (:func:`_refuse_swallowed`)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        option = self.option_strings[-1]
        names = list(getattr(namespace, self.dest, None) or [])
        for value in values:
            parts = value.split(",")
            if not all(parts):
                raise CLIError(f"{option}: empty column name in {value!r}; a list of columns "
                               "is written a,b,c.")
            for name in parts:
                if name in names:
                    if _path_kind(name) is None:
                        raise CLIError(f"{option} names the column {name!r} twice.")
                    # FILE given twice after a list that took both: said once parsed
                    # (_refuse_swallowed names the files), else this message
                    namespace._repeated = f"{option} names the column {name!r} twice."
                    continue
                names.append(name)
        setattr(namespace, self.dest, names)
        uses = getattr(namespace, "_column_lists", [])
        namespace._column_lists = [*uses, (option, list(values))]


def _path_kind(value: str) -> str | None:
    """What ``value`` is if it names an input (a key of ``_PATH_WORDS``), else None: the
    name of a file calibr reads (existing or not), a directory given as a path, a glob
    that matches files, or ``-``. A bare word (``model``) is a column even if a file
    or directory of that name exists."""
    import glob
    import os

    if value == "-":
        return "stdin"
    path = Path(value)
    if any(c in value for c in "*?[") and glob.glob(value):
        return "glob"
    if _DATA_NAME.search(value):
        return "file" if path.is_file() else "directory" if path.is_dir() else "name"
    if path.is_dir() and ("/" in value or os.sep in value):
        return "directory"
    return None


def _refuse_swallowed(parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> None:
    """Refuse a command line whose FILE (or BASELINE, CANDIDATE) a space-separated
    column list took as column names: when a positional argument is missing and the
    last values of a list name inputs (docs/cli.md, "Column lists")."""
    import shlex

    positionals = [a for a in parser._actions if not a.option_strings and a.nargs in (None, "?")]
    given = [getattr(namespace, a.dest) for a in positionals
             if getattr(namespace, a.dest, None) is not None]
    missing = [a.metavar for a in positionals if getattr(namespace, a.dest, None) is None]
    if not missing:
        return
    for option, values in getattr(namespace, "_column_lists", []):
        kinds = []
        for value in reversed(values):
            kind = _path_kind(value)
            if kind is None:
                break
            kinds.insert(0, kind)
        if not kinds:
            continue
        files, columns = values[len(values) - len(kinds):], values[: len(values) - len(kinds)]
        one = len(files) == 1
        what = (_PATH_WORDS[kinds[0]][not one] if len(set(kinds)) == 1
                else "they name inputs")
        lost = missing[: len(files)]
        lost_words = " and ".join(lost) + (" is" if len(lost) == 1 else " are")
        shown = " ".join(shlex.quote(f) for f in files)
        listed = " ".join(shlex.quote(c) for c in columns) or "COL"
        before = " ".join(shlex.quote(g) for g in given)
        first = " ".join(filter(None, [parser.prog, before, shown, option, listed]))
        last = " ".join(filter(None, [parser.prog, before, option, listed, "--", shown]))
        raise CLIError(
            f"{option} took {' and '.join(repr(f) for f in files)} as "
            f"{'a column name' if one else 'column names'}, but {what}, and {lost_words} "
            f"missing; put {'it' if one else 'them'} before the options ({first}) or end the "
            f"list with -- ({last})."
        )


class _Parser(argparse.ArgumentParser):
    """One-line errors, and a FILE taken by a column list named as such."""

    _filling: argparse.Namespace | None = None

    def parse_known_args(self, args=None, namespace=None):  # noqa: D102 - argparse's
        self._filling = argparse.Namespace() if namespace is None else namespace
        parsed, extras = super().parse_known_args(args, self._filling)
        _refuse_swallowed(self, parsed)  # FILE is optional: the bundled data
        if getattr(parsed, "_repeated", None):
            raise CLIError(parsed._repeated)
        return parsed, extras

    def error(self, message: str) -> NoReturn:  # one line, not usage + message
        if (message.startswith("the following arguments are required")
                and self._filling is not None):
            _refuse_swallowed(self, self._filling)  # BASELINE is required
            if getattr(self._filling, "_repeated", None):
                raise CLIError(self._filling._repeated)
        raise CLIError(f"{message} (see `{self.prog} --help`)")


_DEBUG_HELP = "on an error, show Python's full traceback (to report a bug in calibr)"


def _build_parser(*commands: Callable[[Any], Any]) -> argparse.ArgumentParser:
    """The parser of ``calibr`` and its ``report`` command; ``commands``: functions
    that add another command's parser to the subparsers, after ``report``'s (such
    as ``calibr.cli._compare.add_parser``, whose module imports this one)."""
    parser = _Parser(
        prog="calibr",
        description="Calibration-error metrics (ECE, MCE, MMCE, SKCE) for probabilistic "
        "classifiers.",
    )
    parser.add_argument("--version", action="version", version=f"calibr {__version__}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    rep = sub.add_parser(
        "report",
        help="calibration metrics per group from a CSV or Parquet file",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument(
        "file", nargs="?", metavar="FILE",
        help="predictions: .csv (optionally compressed: .csv.gz, .csv.bz2, .csv.xz, .csv.zip), "
        ".tsv (tab-separated), .parquet or .pq, or - for CSV on stdin; default: the bundled "
        "example data",
    )
    rep.add_argument(
        "--example", choices=("all", "breast_cancer", "digits"),
        help="without FILE: which bundled data set to report (default: all)",
    )
    rep.add_argument(
        "--sep", metavar="CHAR",
        help="the field separator of CSV input (default: ,), e.g. ';'; 'tab' or '\\t' for "
        "tab-separated files",
    )
    rep.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="a directory or glob FILE (Parquet or CSV files) is read with Dask and computed "
        "on the Dask scheduler at ADDRESS (default: threads in this process, or a local "
        "cluster if the files take more than 25%% of the available memory); see docs/dask.md",
    )
    rep.add_argument("--engine", choices=ENGINE_CHOICES, help=ENGINE_HELP)
    # also after `report` (calibr report --debug ...); SUPPRESS keeps `calibr --debug report`
    rep.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    cols = rep.add_argument_group("columns")
    cols.add_argument(
        "-p", "--prob", nargs="+", action=_ColumnList, metavar="COL",
        help="probability column: one (binary, P(y = 1)) or one per class, e.g. p_0,p_1,p_2 "
        "(default: p; see column lists: below)",
    )
    cols.add_argument(
        "--prob-prefix", metavar="PREFIX",
        help="multiclass: every column starting with PREFIX is a class probability",
    )
    cols.add_argument("-y", "--label", metavar="COL", help="label column (default: y)")
    cols.add_argument(
        "-g", "--by", nargs="+", action=_ColumnList, metavar="COL", default=None,
        help="grouping columns, e.g. model,fold (rows with a missing key form their own "
        "group; see column lists: below)",
    )
    cols.add_argument(
        "--classes", metavar="LABELS",
        help="multiclass: comma-separated label of each probability column, in order",
    )
    cols.add_argument(
        "--weights", metavar="COL",
        help="column of frequency weights, one nonnegative number per row (a whole number "
        "w counts its row w times; see weights: below)",
    )
    cols.add_argument(
        "--na-rm", action="store_true",
        help="drop rows with a missing probability or label (default: an error)",
    )
    cols.add_argument(
        "--renormalize", action="store_true",
        help="multiclass: divide each row of the probability columns by its sum, if every "
        "row sums to 1 within 1e-3 (e.g. probabilities saved with 6 decimals); otherwise "
        "an error",
    )
    met = rep.add_argument_group("metrics")
    met.add_argument(
        "-m", "--metrics", default=None, metavar="LIST",
        help='comma-separated metrics with options, e.g. "ece,mce(bins=5)" '
        f"(default: {','.join(DEFAULT_METRICS)}; with --battery: none)",
    )
    met.add_argument(
        "--battery", action="store_true",
        help=f"add the evaluation battery, {','.join(BATTERY)}, after the metrics of "
        "--metrics (those not among them already)",
    )
    # the defaults are ece()'s (calibr._defaults: the parser imports no numerics)
    met.add_argument("--bins", type=int, default=None, metavar="B",
                     help=f"number of bins for {_BINNED_WORDS}, --per-bin and --plot, of the "
                     "kind --binning says: B bins of equal width on [0, 1], or with --binning "
                     f"equal-mass B groups of nearly equal size (default: {BINS_DEFAULT})")
    met.add_argument("--type", choices=("classwise", "confidence", "top-label"), default=None,
                     help=f"multiclass form of {_BINNED_WORDS}, --per-bin and --plot "
                     f"(default: {BINNED_TYPE_DEFAULT}; --plot and --html draw the confidence "
                     "diagram for more than 3 classes); top-label: Gupta & Ramdas's top-label "
                     "calibration error, bins per predicted class (one probability column "
                     "too, as the columns 1 - p and p; not with --plot or --html)")
    met.add_argument("--binning", choices=("equal-width", "equal-mass"), default=None,
                     help=f"bins of {_BINNED_WORDS}, --per-bin and --plot: equal-width (R's"
                     f"{_the_default('equal-width', BINNING_DEFAULT)}) or equal-mass (B groups "
                     "of nearly equal size, each group's and class's own breaks"
                     f"{_the_default('equal-mass', BINNING_DEFAULT)})")
    met.add_argument("--right", choices=("true", "false"), default=None,
                     help="bins closed on the right, (a, b] with 0 in the first bin (true, R's"
                     f"{' default' if RIGHT_DEFAULT else ''}), or on the left, [a, b) with 1 "
                     f"in the last bin (false{_the_default(False, RIGHT_DEFAULT)})")
    tst = rep.add_argument_group("calibration tests")
    tst.add_argument(
        "--test", action="append", default=None, metavar="LIST",
        help='calibration tests per group, with options, e.g. "skce,spiegelhalter" or '
        '"consistency(metric=mce,n_resamples=500)"; repeatable (see tests: below)',
    )
    tst.add_argument(
        "--seed", type=int, default=0, metavar="N",
        help="seed of the random numbers of --test and --confidence-level, a nonnegative "
        "integer "
        "(default: 0)",
    )
    renamed_option(
        tst, "--confidence-level", "--ci", dest="ci", type=float, default=None,
        metavar="LEVEL",
        help="add a bootstrap confidence interval at LEVEL (e.g. 0.95) of every metric, per "
        "group: columns <metric>_low and <metric>_high (see intervals: below)",
    )
    tst.add_argument(
        "--ci-method", choices=("percentile", "basic", "bca"), default="percentile",
        help="the interval of --confidence-level (default: percentile)",
    )
    renamed_option(
        tst, "--n-resamples", "--ci-resamples", dest="ci_resamples", type=int,
        default=BOOTSTRAP_RESAMPLES_DEFAULT, metavar="B",
        help="bootstrap resamples per group for --confidence-level "
             f"(default: {BOOTSTRAP_RESAMPLES_DEFAULT})",
    )
    out = rep.add_argument_group("output")
    out.add_argument(
        "--per-bin", action="store_true",
        help="print the per-bin calibration table (bins, counts, gaps, Wilson 95%% "
        "intervals) instead of the metrics",
    )
    out.add_argument(
        "-f", "--format", choices=_FORMATS, default=None,
        help="output format (default: from the extension of --output, else table)",
    )
    out.add_argument("-o", "--output", metavar="PATH",
                     help="write to PATH (default: stdout), in the format of its extension: "
                     ".csv, .json, .parquet or .pq (needs pyarrow); .txt or none: --format")
    out.add_argument(
        "--plot", metavar="PATH",
        help="also write reliability diagrams to PATH (.png, .pdf, .svg): one panel per "
        "group, in the bins of ece and mce and the form of --type (multiclass: classwise, a "
        "curve per class, for up to 3 classes; the confidence diagram for more, unless --type "
        "classwise), with the ECE of what is drawn in each panel's title; needs "
        "matplotlib (pip install matplotlib)",
    )
    out.add_argument(
        "--html", metavar="PATH",
        help="also write a self-contained HTML report to PATH (calibr.html_report): the "
        "overview of every group, sortable, with the intervals and test p-values (Holm-"
        "adjusted over the groups), and per group the reliability diagram with its counts "
        "and consistency band and the per-bin table; opens offline (docs/cli.md)",
    )
    out.add_argument(
        "--smooth", action="store_true",
        help="with --html: also draw each group's smooth reliability curve "
        "(calibr.smece_curve; binary and confidence diagrams, the top label's probability "
        "against whether it is right)",
    )
    for add_parser in commands:
        add_parser(sub)
    return parser


# --------------------------------------------------------------------------
# renamed options (docs/definitions.md, "One name per idea")


class _OldSpelling(argparse.Action):
    """The old spelling of a renamed option: it still works, and says on stderr
    that it is deprecated and what it is now."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        import sys

        from .._input import RENAMED_SINCE

        sys.stderr.write(f"calibr: warning: {option_string} is deprecated; use {self.new} "
                         f"(renamed in calibr {RENAMED_SINCE}).\n")
        if getattr(namespace, f"_given_{self.dest}", False):
            raise CLIError(f"{option_string} is the old name of {self.new}; give {self.new} "
                           "only (got both).")
        setattr(namespace, f"_given_{self.dest}", True)
        setattr(namespace, self.dest, values)


class _NewSpelling(argparse.Action):
    """The new spelling of a renamed option (refused together with the old one)."""

    def __init__(self, option_strings, dest, old: str = "", **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.old = old

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if getattr(namespace, f"_given_{self.dest}", False):
            raise CLIError(f"{self.old} is the old name of {option_string}; give "
                           f"{option_string} only (got both).")
        setattr(namespace, f"_given_{self.dest}", True)
        setattr(namespace, self.dest, values)


def renamed_option(group, new: str, old: str, **kwargs) -> None:
    """``new`` as an option of ``group``, and ``old``, its former spelling, hidden from
    --help, still accepted with a warning on stderr; both at once are an error."""
    group.add_argument(new, action=_NewSpelling, old=old, **kwargs)
    hidden = {k: v for k, v in kwargs.items() if k not in ("help", "default")}
    group.add_argument(old, action=_OldSpelling, new=new, help=argparse.SUPPRESS,
                       default=argparse.SUPPRESS, **hidden)


# --------------------------------------------------------------------------
# metric lists: "ece,mce(bins=5),skce(estimator=ul)"

_SPEC = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*")

#: Arguments of the metrics that the command sets for all metrics, and the options that do.
_DATA_OPTIONS = {"p": "--prob", "y": "--label", "classes": "--classes", "na_rm": "--na-rm",
                 "weights": "--weights"}


def _split_top(text: str, option: str = "--metrics") -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise CLIError(f"{option}: unbalanced parentheses in {text!r}.")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise CLIError(f"{option}: unbalanced parentheses in {text!r}.")
    parts.append("".join(cur))
    return parts


_BOOLS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False,
          "false": False}


def _value(text: str) -> Any:
    """An option value: a quoted string, True/False (R's TRUE/FALSE), a number, else a string."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in _BOOLS:
        return _BOOLS[text]
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _metric_options(name: str) -> list[str]:
    """The options of a named metric (its keyword arguments other than the data's:
    --weights sets the weights of all metrics)."""
    return list(METRICS[name].options)


def _read_options(part: str, args: str | None, flag: str, kind: str, known: list[str],
                  reserved: dict[str, str]) -> dict[str, Any]:
    """The ``name=value`` options of one entry ``part`` of ``flag`` (``--metrics`` or
    ``--test``), each a known option of the ``kind`` (metric or test); ``reserved``
    maps the options set for all entries by another flag to that flag."""
    options: dict[str, Any] = {}
    if args is None or not args.strip():
        return options
    for item in _split_top(args, flag):
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise CLIError(
                f"{flag}: options are written name=value; got {item.strip()!r} "
                f"in {part.strip()!r}."
            )
        if key in reserved:
            raise CLIError(
                f"{flag}: {key!r} is not an option of a {kind} ({part.strip()!r}); "
                f"{reserved[key]} sets it for all {kind}s."
            )
        if key not in known:
            raise CLIError(
                f"{flag}: the {kind} {part.strip()!r} has no option {key!r}; its "
                f"options are {', '.join(known)}."
            )
        if key in options:
            raise CLIError(f"{flag}: {part.strip()!r} sets {key!r} twice.")
        options[key] = _value(val)
    return options

def parse_metrics(text: str) -> list[tuple[str, Metric]]:
    """``[(column name, Metric)]`` from a --metrics string.

    Examples
    --------
    >>> parse_metrics("ece,skce(estimator=ul, bandwidth=median)")
    [('ece', Metric(func='ece', options={})), ('skce(estimator=ul, bandwidth=median)', \
Metric(func='skce', options={'estimator': 'ul', 'bandwidth': 'median'}))]
    """
    from .._input import InputError, InputTypeError
    from ..frame import metric

    out = []
    for part in _split_top(text):
        if not part.strip():
            raise CLIError(f"--metrics: empty entry in {text!r}.")
        m = _SPEC.fullmatch(part)
        if m is None:
            raise CLIError(f"--metrics: cannot read {part.strip()!r}; write e.g. mce(bins=5).")
        name, args = m.group(1), m.group(2)
        if name not in METRICS:
            raise CLIError(
                f"--metrics: unknown metric {name!r}; the metrics are "
                f"{', '.join(METRICS)}."
            )
        options = _read_options(part, args, "--metrics", "metric", _metric_options(name),
                                _DATA_OPTIONS)
        try:
            spec = metric(name, **options)
        except (InputError, InputTypeError) as err:  # pragma: no cover - checked above
            raise CLIError(f"--metrics: {_cli_message(err)}") from None
        col = part.strip() if options else name
        if any(col == c for c, _ in out):
            raise CLIError(f"--metrics: {col!r} appears twice.")
        out.append((col, spec))
    return out


def report_metrics(metrics: str | None, battery: bool) -> str:
    """The ``--metrics`` string of ``calibr report``: ``--metrics`` (default
    :data:`calibr._registry.DEFAULT_METRICS`), and with ``--battery`` the metrics of
    :data:`calibr._registry.BATTERY` whose names it does not list (without
    ``--metrics``: the battery alone).

    Examples
    --------
    >>> report_metrics(None, False)
    'ece,mce'
    >>> report_metrics("ece(bins=5),mce", True).startswith("ece(bins=5),mce,brier,log_loss,auroc")
    True
    """
    if not battery:
        return ",".join(DEFAULT_METRICS) if metrics is None else metrics
    if metrics is None:
        return ",".join(BATTERY)
    listed = {_SPEC.fullmatch(part).group(1) if _SPEC.fullmatch(part) else part.strip()
              for part in _split_top(metrics)}
    return ",".join([metrics, *(name for name in BATTERY if name not in listed)])


def parse_tests(texts: list[str] | None) -> list[tuple[str, CalibrationTest]]:
    """``[(column prefix, CalibrationTest)]`` from the --test options (each a
    comma-separated list); the prefix is the method, or the entry as written when
    it has options.

    Examples
    --------
    >>> parse_tests(["skce", "consistency(metric=mce, n_resamples=50),spiegelhalter"])
    [('skce', CalibrationTest(method='skce', options={})), ('consistency(metric=mce, \
n_resamples=50)', CalibrationTest(method='consistency', options={'metric': 'mce', \
'n_resamples': 50})), ('spiegelhalter', CalibrationTest(method='spiegelhalter', options={}))]
    """
    from .._input import InputError, InputTypeError
    from ..frame import TESTS, known_test_options, test

    out: list[tuple[str, CalibrationTest]] = []
    known = known_test_options()
    for text in texts or []:
        for part in _split_top(text, "--test"):
            if not part.strip():
                raise CLIError(f"--test: empty entry in {text!r}.")
            m = _SPEC.fullmatch(part)
            if m is None:
                raise CLIError(
                    f"--test: cannot read {part.strip()!r}; write e.g. consistency(metric=mce)."
                )
            name, args = m.group(1), m.group(2)
            if name not in TESTS:
                raise CLIError(f"--test: unknown test {name!r}; the tests are {', '.join(TESTS)}.")
            options = _read_options(part, args, "--test", "test", known,
                                    {**_DATA_OPTIONS, "rng": "--seed"})
            try:
                spec = test(name, **options)
            except (InputError, InputTypeError) as err:  # a bad value, e.g. n_resamples=0
                raise CLIError(f"--test: {part.strip()!r}: {_cli_message(err)}") from None

            col = part.strip() if options else name
            if any(col == c for c, _ in out):
                raise CLIError(f"--test: {col!r} appears twice.")
            out.append((col, spec))
    return out


def _the_default(choice: Any, default: Any) -> str:
    """", the default" after the choice that is the default in a help text."""
    return ", the default" if choice == default else ""


def check_seed(seed: int) -> int:
    """--seed: a nonnegative integer (argparse has made it an int)."""
    if seed < 0:
        raise CLIError(f"--seed must be a nonnegative integer; got {seed}.")
    return seed


@dataclass(frozen=True)
class _Column:
    """One metric column: its name, the spec with the defaults of --bins and --type,
    and whether it takes bins and form from --bins and --type."""

    name: str
    spec: Metric
    default_bins: bool
    default_type: bool


def _with_defaults(specs, bins, type_, binning=None, right=None) -> list[_Column]:
    """The metric columns with the defaults of --bins, --type, --binning and --right
    (``right`` a bool or None) for the binned metrics that do not set them."""
    from ..frame import Metric

    out = []
    for col, spec in specs:
        own_bins, own_type = "bins" in spec.options, "type" in spec.options
        if spec.func in BINNED:
            extra = {}
            if bins is not None and not own_bins:
                extra["bins"] = bins
            if type_ is not None and not own_type:
                extra["type"] = type_
            if binning is not None and "binning" not in spec.options:
                extra["binning"] = binning
            if right is not None and "right" not in spec.options:
                extra["right"] = right
            spec = Metric(spec.func, {**spec.options, **extra})
        binned = spec.func in BINNED
        out.append(_Column(col, spec, binned and not own_bins, binned and not own_type))
    return out


#: ``--engine`` of report and compare (calibr/cli/_io.py, ``_engine_of``).
ENGINE_CHOICES = ("dask", "polars", "duckdb")
ENGINE_HELP = (
    "what reads a directory or glob FILE of Parquet files (or one Parquet file): dask "
    "(the default for a directory or glob when installed: the report from merged sums, "
    "rows never all in memory; see docs/dask.md), polars or duckdb (scan only the columns "
    "the report uses, lazily, and collect them; see docs/engines.md). A DuckDB table, "
    "duckdb:PATH.db::TABLE, is read by DuckDB")


def _sep(text: str | None) -> str | None:
    if text is None:
        return None
    sep = {"tab": "\t", "\\t": "\t"}.get(text, text)
    if len(sep) != 1 or sep in "\r\n\"":
        raise CLIError(f"--sep must be one character (or 'tab'); got {text!r}.")
    return sep

