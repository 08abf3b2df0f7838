"""The ``calibr`` command: calibration reports from CSV or Parquet files.

::

    calibr report                                  # the bundled example data
    calibr report preds.csv --prob p --label y --by model
    calibr report preds.parquet --prob-prefix p_ --label y --by model fold \\
        --metrics "ece,mce(bins=5),skce(estimator=ul)" --format csv -o report.csv
    calibr report preds.csv --per-bin --plot reliability.png

The contract (``docs/cli.md`` explains each decision):

* Bad input (a missing file or column, bad probabilities or labels, an unknown
  metric or option, a missing optional dependency) prints one line
  ``calibr: error: ...`` to stderr and exits with status 2.
* Anything else is a bug in calibr: one line ``calibr: internal error: ...``
  and exit status 1; ``--debug`` shows the traceback.
* No file is lost: an output that is the input FILE is refused, and every
  output is written to a temporary file in its directory and renamed over the
  target only when all of them are written, so a failed run leaves every
  existing file as it was.
* A pipe closed early (``calibr report | head -1``) ends the command quietly
  with status 141, as for a process killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import decimal
import inspect
import io
import json
import lzma
import math
import os
import re
import secrets
import shutil
import stat
import sys
import traceback
import zipfile
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from . import __version__
from ._validation import (
    ROUNDED_HINT,
    ROW_SUM_TOL,
    InputError,
    InputTypeError,
    check_bins,
    prepare,
)
from .frame import METRICS, Columns, Metric, _classes_from_names, metric, resolve_columns, summarise
from .table import TABLE_COLUMNS, calibration_table

__all__ = ["main", "parse_metrics", "MCE_MIN_BIN_COUNT", "RENORMALIZE_TOL"]

#: An MCE that comes from a bin with fewer samples than this is marked in the
#: table output (a gap measured on so few samples is mostly noise).
MCE_MIN_BIN_COUNT = 10

#: --renormalize divides each row by its sum only if every row sums to 1 within this.
RENORMALIZE_TOL = 1e-3

#: Exit statuses.
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for `cat big | head -1`
EXIT_INTERRUPTED = 130  # 128 + SIGINT

#: At most this many panels in a --plot figure (one per group).
MAX_PLOT_PANELS = 100

#: Column names listed in a "no column" message before "...".
_COLUMNS_SHOWN = 10

_BINNED = ("ece", "mce")
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
metrics: a comma-separated list of ece, mce, skce and mmce, each optionally with
options in parentheses, as in R: "ece,mce(bins=5),skce(estimator=ul,bandwidth=0.1)".
--bins and --type apply to ece and mce (and the per-bin table and the plot) unless
a metric sets them itself. The columns form and bins say which form and bins the
ece and mce columns without their own options use: binary (one probability
column), or for multiclass data classwise (ece: the mean over the classes of each
class's one-vs-rest ECE; mce: the largest gap of any class) or confidence (the
top-label probability against whether the top label is right).

mce_bin_n: each mce column is followed by the number of samples in the bin that
gives the MCE (classwise: the bin of the largest gap over all classes). The table
output marks an MCE from a bin of fewer than {MCE_MIN_BIN_COUNT} samples with *.

multiclass: with --prob-prefix p_ the columns p_<label> hold the probability of
each class; numeric labels match the columns whose suffix is that integer (the
label 3 is the class of p_3). With --prob a b c, labels must equal the column
names, or --classes must give the label of each column (e.g. --classes 1,2,3 for
R's 1-based codes). Each row of probabilities must sum to 1 within 1e-6 (as in
R); --renormalize fixes rows that were rounded (e.g. saved with 6 decimals).

rows: "data row N" in a message is the N-th row after the header of FILE.

exit status: 0 on success; 2 for bad input (one line on stderr, nothing written);
1 for an internal error (a bug in calibr: run again with --debug and report it);
{EXIT_BROKEN_PIPE} when the reader of the output closed the pipe early (e.g. | head).
"""


class CLIError(Exception):
    """Bad command-line input: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not usage + message
        raise CLIError(f"{message} (see `{self.prog} --help`)")


_DEBUG_HELP = "on an error, show Python's full traceback (to report a bug in calibr)"


def _build_parser() -> argparse.ArgumentParser:
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
    # also after `report` (calibr report --debug ...); SUPPRESS keeps `calibr --debug report`
    rep.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    cols = rep.add_argument_group("columns")
    cols.add_argument(
        "-p", "--prob", nargs="+", metavar="COL",
        help="probability column: one (binary, P(y = 1)) or one per class (default: p)",
    )
    cols.add_argument(
        "--prob-prefix", metavar="PREFIX",
        help="multiclass: every column starting with PREFIX is a class probability",
    )
    cols.add_argument("-y", "--label", metavar="COL", help="label column (default: y)")
    cols.add_argument(
        "-g", "--by", nargs="+", metavar="COL", default=None,
        help="grouping columns (rows with a missing key form their own group)",
    )
    cols.add_argument(
        "--classes", metavar="LABELS",
        help="multiclass: comma-separated label of each probability column, in order",
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
        "-m", "--metrics", default="ece,mce", metavar="LIST",
        help='comma-separated metrics with options, e.g. "ece,mce(bins=5)" (default: ece,mce)',
    )
    met.add_argument("--bins", type=int, default=None, metavar="B",
                     help="number of equal-width bins for ece, mce, --per-bin and --plot "
                     "(default: 10)")
    met.add_argument("--type", choices=("classwise", "confidence"), default=None,
                     help="multiclass form of ece, mce, --per-bin and --plot "
                     "(default: classwise)")
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
    out.add_argument("-o", "--output", metavar="PATH", help="write to PATH (default: stdout)")
    out.add_argument(
        "--plot", metavar="PATH",
        help="also write reliability diagrams to PATH (.png, .pdf, .svg): one panel per "
        "group, in the form and bins of ece and mce (multiclass: classwise, a curve per "
        "class, unless --type confidence), with the ECE in each panel's title; needs "
        "matplotlib (pip install matplotlib)",
    )
    return parser


# --------------------------------------------------------------------------
# metric lists: "ece,mce(bins=5),skce(estimator=ul)"

_SPEC = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*")

#: Arguments of the metrics that the command sets for all metrics, and the options that do.
_DATA_OPTIONS = {"p": "--prob", "y": "--label", "classes": "--classes", "na_rm": "--na-rm"}


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise CLIError(f"--metrics: unbalanced parentheses in {text!r}.")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise CLIError(f"--metrics: unbalanced parentheses in {text!r}.")
    parts.append("".join(cur))
    return parts


_BOOLS = {"True": True, "TRUE": True, "False": False, "FALSE": False}


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
    """The options of a named metric (its keyword arguments other than the data's)."""
    params = list(inspect.signature(METRICS[name]).parameters.values())[2:]
    return [
        prm.name for prm in params
        if prm.kind in (prm.POSITIONAL_OR_KEYWORD, prm.KEYWORD_ONLY)
        and prm.name not in _DATA_OPTIONS
    ]


def parse_metrics(text: str) -> list[tuple[str, Metric]]:
    """``[(column name, Metric)]`` from a --metrics string.

    Examples
    --------
    >>> parse_metrics("ece,skce(estimator=ul, bandwidth=median)")
    [('ece', Metric(func='ece', options={})), ('skce(estimator=ul, bandwidth=median)', \
Metric(func='skce', options={'estimator': 'ul', 'bandwidth': 'median'}))]
    """
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
        known = _metric_options(name)
        options = {}
        if args is not None and args.strip():
            for item in _split_top(args):
                key, eq, val = item.partition("=")
                key = key.strip()
                if not eq or not key.isidentifier():
                    raise CLIError(
                        f"--metrics: options are written name=value; got {item.strip()!r} "
                        f"in {part.strip()!r}."
                    )
                if key in _DATA_OPTIONS:
                    raise CLIError(
                        f"--metrics: {key!r} is not an option of a metric ({part.strip()!r}); "
                        f"{_DATA_OPTIONS[key]} sets it for all metrics."
                    )
                if key not in known:
                    raise CLIError(
                        f"--metrics: the metric {part.strip()!r} has no option {key!r}; its "
                        f"options are {', '.join(known)}."
                    )
                if key in options:
                    raise CLIError(f"--metrics: {part.strip()!r} sets {key!r} twice.")
                options[key] = _value(val)
        try:
            spec = metric(name, **options)
        except (InputError, InputTypeError) as err:  # pragma: no cover - checked above
            raise CLIError(f"--metrics: {_cli_words(str(err))}") from None
        col = part.strip() if options else name
        if any(col == c for c, _ in out):
            raise CLIError(f"--metrics: {col!r} appears twice.")
        out.append((col, spec))
    return out


@dataclass(frozen=True)
class _Column:
    """One metric column: its name, the spec with the defaults of --bins and --type,
    and whether it takes bins and form from --bins and --type."""

    name: str
    spec: Metric
    default_bins: bool
    default_type: bool


def _with_defaults(specs, bins, type_) -> list[_Column]:
    out = []
    for col, spec in specs:
        own_bins, own_type = "bins" in spec.options, "type" in spec.options
        if spec.func in _BINNED:
            extra = {}
            if bins is not None and not own_bins:
                extra["bins"] = bins
            if type_ is not None and not own_type:
                extra["type"] = type_
            spec = Metric(spec.func, {**spec.options, **extra})
        binned = spec.func in _BINNED
        out.append(_Column(col, spec, binned and not own_bins, binned and not own_type))
    return out


# --------------------------------------------------------------------------
# input


@dataclass
class _Source:
    """One input: the data, where it came from and its column arguments."""

    tag: str | None  # the value of the `dataset` column (bundled data), else None
    label: str  # for messages and the report's header
    frame: pd.DataFrame
    colargs: dict[str, Any]


def _sep(text: str | None) -> str | None:
    if text is None:
        return None
    sep = {"tab": "\t", "\\t": "\t"}.get(text, text)
    if len(sep) != 1 or sep in "\r\n\"":
        raise CLIError(f"--sep must be one character (or 'tab'); got {text!r}.")
    return sep


def _read(file: str, sep: str | None) -> pd.DataFrame:
    if file == "-":
        # bytes, so that non-UTF-8 input gets the same message as a file
        return _read_csv(getattr(sys.stdin, "buffer", sys.stdin), "-", sep)
    path = Path(file)
    if not path.exists():
        raise CLIError(f"{file}: no such file.")
    if path.is_dir():
        raise CLIError(f"{file}: is a directory, not a file.")
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        if sep is not None:
            raise CLIError("--sep applies to CSV input; FILE is a Parquet file.")
        return _read_parquet(path, file)
    if re.search(r"\.(csv|txt|tsv)(\.(gz|bz2|xz|zip|zst))?$", name):
        if sep is None and re.search(r"\.tsv(\.\w+)?$", name):
            sep = "\t"
        return _read_csv(path, file, sep)
    raise CLIError(
        f"{file}: cannot tell the format from the extension; use .csv or .parquet."
    )


def _pyarrow_errors() -> tuple[type[BaseException], ...]:
    try:
        import pyarrow
    except ImportError:
        return ()
    return (pyarrow.ArrowException,)


def _read_parquet(path: Path, file: str) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except ImportError:
        raise CLIError(
            "reading Parquet needs pyarrow; install it with `pip install pyarrow`."
        ) from None
    except (OSError, ValueError, *_pyarrow_errors()) as err:  # a file that is not Parquet
        raise CLIError(f"{file}: cannot read it as Parquet: {_detail(err)}.") from None


def _read_csv(source: Any, file: str, sep: str | None) -> pd.DataFrame:
    """pd.read_csv, with the file named in the message when it cannot be read."""
    try:
        return pd.read_csv(source, sep=sep or ",", encoding="utf-8")
    except UnicodeDecodeError as err:
        raise CLIError(
            f"{file}: cannot read it as CSV: it is not UTF-8 text (it has the byte "
            f"0x{err.object[err.start]:02x})."
        ) from None
    except ImportError as err:  # e.g. .csv.zst without zstandard
        raise CLIError(f"{file}: cannot read it: {_detail(err)}.") from None
    except (ValueError, EOFError, zipfile.BadZipFile, lzma.LZMAError) as err:
        # pandas' ParserError and EmptyDataError; truncated or corrupt compression
        raise CLIError(f"{file}: cannot read it as CSV: {_detail(err)}.") from None
    except OSError as err:
        raise CLIError(f"{file}: cannot read it: {err.strerror or _detail(err)}.") from None


def _detail(err: BaseException) -> str:
    return " ".join(str(err).split()).rstrip(".") or type(err).__name__


def _sources(args) -> list[_Source]:
    colargs = {"p": args.prob, "p_prefix": args.prob_prefix, "y": args.label, "by": args.by}
    if args.file is not None:
        if args.example is not None:
            raise CLIError("--example picks bundled data; it cannot be used with FILE.")
        frame = _read(args.file, _sep(args.sep))
        if colargs["p"] is None and colargs["p_prefix"] is None:
            colargs["p"] = ["p"]
        colargs["y"] = colargs["y"] or "y"
        label = "standard input" if args.file == "-" else args.file
        return [_Source(None, label, frame, colargs)]
    if args.sep is not None:
        raise CLIError("--sep applies to CSV input; give FILE.")
    from . import datasets

    which = args.example or "all"
    names = list(datasets.DATASETS) if which == "all" else [which]
    given = [f"--{k}" for k, v in (("prob", args.prob), ("prob-prefix", args.prob_prefix),
                                      ("label", args.label), ("classes", args.classes))
             if v is not None]
    if given and len(names) > 1:
        raise CLIError(
            f"{', '.join(given)} need FILE or --example: the two bundled data sets have "
            "different columns."
        )
    loaders = {
        "breast_cancer": (datasets.load_breast_cancer_predictions,
                          {"p": ["p"], "p_prefix": None}),
        "digits": (datasets.load_digits_predictions, {"p": None, "p_prefix": "p_"}),
    }
    out = []
    for name in names:
        loader, preset = loaders[name]
        ca = dict(colargs)
        if ca["p"] is None and ca["p_prefix"] is None:
            ca.update(preset)
        ca["y"] = ca["y"] or "y"
        ca["by"] = ca["by"] if ca["by"] is not None else ["model"]
        out.append(_Source(name, f"bundled example data {name}", loader(), ca))
    return out


# --------------------------------------------------------------------------
# columns


def _column_list(frame: pd.DataFrame) -> str:
    cols = [repr(c) for c in frame.columns]
    if len(cols) > _COLUMNS_SHOWN:
        return f"{', '.join(cols[:_COLUMNS_SHOWN])}, ... ({len(cols)} in all)"
    return ", ".join(cols) if cols else "none"


def _separator_hint(frame: pd.DataFrame, sep: str | None) -> str:
    """A hint when a CSV file was read as one column whose name holds another separator."""
    if len(frame.columns) != 1 or not isinstance(frame.columns[0], str):
        return ""
    name = frame.columns[0]
    for char, shown in ((";", "';'"), ("\t", "tab"), ("|", "'|'")):
        if char in name and char != (sep or ","):
            return (
                f" The file seems to be {shown}-separated, but calibr read it as "
                f"{'comma' if sep is None else repr(sep)}-separated CSV: pass --sep {shown}."
            )
    return ""


def _no_column(option: str, name: Any, src: _Source, sep: str | None) -> CLIError:
    return CLIError(
        f"{option}: no column {name!r} in {src.label}; its columns are "
        f"{_column_list(src.frame)}.{_separator_hint(src.frame, sep)}"
    )


def _columns(src: _Source, args) -> tuple[Columns, str]:
    """The resolved columns and the words that name the probabilities in messages."""
    frame, ca = src.frame, src.colargs
    sep = _sep(args.sep)
    y = ca["y"]
    if y not in frame.columns:
        raise _no_column("--label", y, src, sep)
    p = ca["p"]
    if p is not None:
        for col in p:
            if col not in frame.columns:
                raise _no_column("--prob", col, src, sep)
        if len(p) == 1:
            p = p[0]
        p_word = "--prob"
    else:
        prefix = ca["p_prefix"]
        if not any(isinstance(c, str) and c.startswith(prefix) for c in frame.columns):
            raise CLIError(
                f"--prob-prefix: no column of {src.label} starts with {prefix!r}; its columns "
                f"are {_column_list(frame)}.{_separator_hint(frame, sep)}"
            )
        p_word = f"--prob-prefix {prefix!r}"
    for col in ca["by"] or []:
        if col not in frame.columns:
            raise _no_column("--by", col, src, sep)
    classes = None
    if args.classes is not None:
        labels = [s.strip() for s in args.classes.split(",")]
        try:
            classes = _classes_from_names(labels, frame[y], "--classes")
        except InputError:
            raise CLIError(
                f"--classes: the labels in {y!r} are numbers, so the classes must be integers; "
                f"got {args.classes!r}."
            ) from None
        if len(set(labels)) != len(labels):
            raise CLIError(f"--classes must not repeat a label; got {args.classes!r}.")
    try:
        cols = resolve_columns(frame, p, y, ca["p_prefix"], classes)
    except (InputError, InputTypeError) as err:
        raise CLIError(_cli_words(str(err), p_word)) from None
    return cols, p_word


#: Python words in calibr's messages, and the command-line words that replace them
#: (in this order; `p` itself becomes --prob or --prob-prefix 'PREFIX' at the end).
_PYTHON_WORDS = (
    ("the column names of the DataFrame `p`", "the names of the --prob columns"),
    ("columns with `p`", "columns with --prob"),
    ("for a vector `p`", "for a single --prob column"),
    ("`p_prefix`", "--prob-prefix"),
    ("p_prefix ", "--prob-prefix "),
    ("`y`", "--label"),
    ("`classes`", "--classes"),
    ("classes=(negative, positive)", "--classes NEGATIVE,POSITIVE"),
    ("classes= ", "--classes "),
    ("`na_rm`", "--na-rm"),
    ("na_rm=True", "--na-rm"),
    ("`metrics`", "--metrics"),
    (" or be callables", ""),
    ("summarise()", "the report"),
)


def _cli_words(msg: str, p_word: str = "--prob") -> str:
    """A message of calibr's Python API with its argument names as command-line options."""
    msg = re.sub(r"\ba (\d+)-column `p`", r"\1 probability columns", msg)
    msg = re.sub(
        r"classes=range\((\d+)\)",
        lambda m: "--classes " + ",".join(str(k) for k in range(int(m.group(1)))),
        msg,
    )
    for python, option in _PYTHON_WORDS:
        msg = msg.replace(python, option)
    return msg.replace("`p`", p_word)


def _data_rows(msg: str, cols: Columns) -> str:
    """Positions in a message about the whole frame, as data rows of the file (1-based)."""
    names = cols.p if isinstance(cols.p, list) else None

    def cell(m: re.Match) -> str:
        row, col = int(m.group(1)), int(m.group(2))
        where = repr(names[col]) if names is not None and col < len(names) else str(col)
        return f"at data row {row + 1}, column {where}"

    msg = re.sub(r"\bat row (\d+), column (\d+)", cell, msg)
    msg = re.sub(r"\bat (?:position|row) (\d+)", lambda m: f"at data row {int(m.group(1)) + 1}",
                 msg)
    if re.search(r"\b(?:position|row) \d", msg.replace("data row", "")):
        msg += " (positions count the data rows from 0)"
    return msg


def _check_key_names(by: list | None, outputs: Sequence[str], what: str) -> None:
    """Grouping columns must not have the name of a column the report adds."""
    for col in by or []:
        if col in outputs:
            raise CLIError(
                f"--by: the column {col!r} has the name of {what}; rename it in the data."
            )


# --------------------------------------------------------------------------
# probabilities: row sums, --renormalize, validation of the whole file


def _is_real(dtype: Any) -> bool:
    return (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            and not pd.api.types.is_complex_dtype(dtype))


def _prob_matrix(frame: pd.DataFrame, cols: Columns) -> tuple[np.ndarray, np.ndarray] | None:
    """The probability matrix (C order, as calibr checks it) and the rows that can be
    checked (finite values in [0, 1]); None when a column is not numeric (calibr's
    validation then says which)."""
    sub = frame[cols.p]
    if not all(_is_real(d) for d in sub.dtypes):
        return None
    arr = np.ascontiguousarray(sub.to_numpy(dtype=np.float64, na_value=np.nan))
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(arr).all(axis=1) & ((arr >= 0) & (arr <= 1)).all(axis=1)
    return arr, ok


def _renormalize(frame: pd.DataFrame, cols: Columns) -> pd.DataFrame:
    """A copy of ``frame`` whose probability rows are divided by their sums (--renormalize)."""
    if not isinstance(cols.p, list):
        raise CLIError(
            "--renormalize needs several probability columns (--prob A B ... or "
            "--prob-prefix); a single --prob column has no row sums."
        )
    got = _prob_matrix(frame, cols)
    if got is None:
        return frame  # not numbers: calibr's validation says where
    arr, ok = got
    sums = arr.sum(axis=1)
    bad = ok & ~(np.abs(sums - 1.0) <= RENORMALIZE_TOL)
    if bad.any():
        (rows,) = np.nonzero(bad)
        first = int(rows[0])
        verb = "does not" if rows.size == 1 else "do not"
        raise CLIError(
            f"--renormalize divides each row by its sum only if every row sums to 1 within "
            f"{RENORMALIZE_TOL:g} (rounding); {rows.size} row{'s' if rows.size != 1 else ''} "
            f"{verb}, the first at data row {first + 1} (sum {float(sums[first])!r})."
        )
    fixed = arr.copy()
    fixed[ok] /= sums[ok, None]  # rows with a missing or bad value are left to the checks
    out = frame.copy(deep=False)
    out[cols.p] = fixed
    return out


def _check_row_sums(frame: pd.DataFrame, cols: Columns, p_word: str) -> None:
    """R's rule (rows sum to 1 within 1e-6), with a message for the command line."""
    if not isinstance(cols.p, list):
        return
    got = _prob_matrix(frame, cols)
    if got is None:
        return
    arr, ok = got
    sums = arr.sum(axis=1)
    bad = ok & (np.abs(sums - 1.0) > ROW_SUM_TOL)
    if not bad.any():
        return
    (rows,) = np.nonzero(bad)
    first = int(rows[0])
    s = float(sums[first])
    verb = "does not" if rows.size == 1 else "do not"
    raise CLIError(
        f"the {p_word} columns must sum to 1 in each row (within {ROW_SUM_TOL:g}); "
        f"{rows.size} row{'s' if rows.size != 1 else ''} {verb}, the first at data row "
        f"{first + 1}: its sum {s!r} is {abs(s - 1.0)!r} away from 1. If the probabilities "
        "were rounded (e.g. saved with 6 decimals), pass --renormalize to divide each row "
        "by its sum."
    )


def _check_numbers(frame: pd.DataFrame, cols: Columns, p_word: str) -> None:
    """Text in a probability column (e.g. "unknown", or a decimal comma): the first cell
    that is not a number, by data row and column."""
    names = cols.p if isinstance(cols.p, list) else [cols.p]
    found = []  # (row, column, value, count)
    for name in names:
        col = frame[name]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            continue
        bad = (pd.to_numeric(col, errors="coerce").isna() & col.notna()).to_numpy()
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            found.append((first, name, col.iloc[first], int(bad.sum())))
    if not found:
        return
    row, name, value, _ = min(found, key=lambda f: (f[0], names.index(f[1])))
    count = sum(f[3] for f in found)
    where = f", column {name!r}" if len(names) > 1 else ""
    hint = ""
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d*,\d+\s*", value):
        hint = " (a decimal comma? calibr reads numbers with a decimal point)"
    raise CLIError(
        f"{p_word} must hold numbers; {count} value{'s' if count != 1 else ''} "
        f"{'are' if count != 1 else 'is'} not, the first at data row {row + 1}{where} "
        f"({value!r}){hint}."
    )


def _validate(frame: pd.DataFrame, cols: Columns, na_rm: bool, p_word: str) -> None:
    """Validate every row at once, so that a message gives the data row in the file
    (the metrics, per group, would count positions within the group)."""
    _check_numbers(frame, cols, p_word)
    try:
        prepare(frame[cols.p], frame[cols.y], classes=cols.classes, na_rm=na_rm)
    except (InputError, InputTypeError) as err:
        msg = _cli_words(_data_rows(str(err), cols), p_word)
        if "must sum to 1" in msg:
            # the library's own hint names Python's fix; the command's is an option
            msg = msg.replace(" " + ROUNDED_HINT, "")
            msg += (" If the probabilities were rounded (e.g. saved with 6 decimals), pass "
                    "--renormalize to divide each row by its sum.")
        raise CLIError(msg) from None


# --------------------------------------------------------------------------
# the MCE's bin


def _bin_n_column(name: str) -> str:
    return f"{name}_bin_n"


def _mce_bin_counts(table: pd.DataFrame, keys: list, n_groups: int) -> np.ndarray:
    """Per group (pandas' order): the sample count of the bin with the largest gap
    (over all classes for a classwise table; ties: the largest count)."""
    if keys:
        ids = table.groupby(keys, sort=False, dropna=False, observed=True).ngroup().to_numpy()
    else:
        ids = np.zeros(len(table), dtype=np.int64)
    gap = table["gap"].to_numpy(dtype=np.float64)
    n = table["n"].to_numpy(dtype=np.int64)
    order = np.lexsort((-n, -gap, ids))  # by group, then largest gap, then largest count
    first = np.unique(ids[order], return_index=True)[1]
    if len(first) != n_groups:  # pragma: no cover - the table and the summary disagree
        raise RuntimeError(
            f"the per-bin table has {len(first)} groups, the summary {n_groups}."
        )
    return n[order[first]]


# --------------------------------------------------------------------------
# output


def _json_value(v: Any) -> Any:
    """A JSON value: numbers and strings as they are, missing values as null, dates,
    times and durations as ISO 8601 strings."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v) if not np.isnat(v) else None
    elif isinstance(v, np.timedelta64):
        v = pd.Timedelta(v) if not np.isnat(v) else None
    elif isinstance(v, np.generic):
        v = v.item()
    if v is None:
        return None
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, pd.Period):
        # ISO 8601 time interval: start/end (the end is the next period's start)
        return f"{v.start_time.isoformat()}/{(v + 1).start_time.isoformat()}"
    if isinstance(v, (pd.Timestamp, dt.datetime, dt.date, dt.time, pd.Timedelta)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return pd.Timedelta(v).isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="backslashreplace")
    return str(v)


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    cols = [str(c) for c in df.columns]
    return [
        {k: _json_value(v) for k, v in zip(cols, row, strict=True)}
        for row in df.itertuples(index=False, name=None)
    ]


def _format(args) -> str:
    if args.format is not None:
        return args.format
    if args.output is not None:
        suffix = Path(args.output).suffix.lower()
        if suffix in (".csv", ".json"):
            return suffix[1:]
    return "table"


_FORM_WORDS = {
    "binary": "binary = one probability column",
    "classwise": "classwise = one-vs-rest per class (ece: the mean over the classes, "
                 "mce: the largest gap of any class)",
    "confidence": "confidence = the top-label probability against whether the top label "
                  "is right",
}


def _header(sources: list[_Source], bins: int | None, forms: list[str], what: str) -> list[str]:
    bundled = [s.tag for s in sources if s.tag is not None]
    source = (f"bundled example data {', '.join(bundled)}" if bundled
              else ", ".join(s.label for s in sources))
    lines = [f"calibr {what} of {source}"]
    if bins is not None:
        lines.append(f"bins: {bins} equal-width bins on [0, 1]")
    if forms:
        lines.append("form: " + "; ".join(_FORM_WORDS[f] for f in dict.fromkeys(forms)))
    return lines


def _table_text(df: pd.DataFrame, header: list[str], marks: dict[str, np.ndarray],
                notes: list[str]) -> str:
    """The table output: a header that says what was computed, the rows (values marked
    with * where ``marks`` says so) and the footnotes of the marks."""
    shown = df.copy()
    for col, mark in marks.items():
        # pandas' formatting of the column, then the mark (or a space, to keep the digits
        # aligned)
        cells = df[[col]].to_string(index=False, header=False).splitlines()
        shown[col] = [c.strip() + ("*" if m else " ") for c, m in zip(cells, mark, strict=True)]
    body = shown.to_string(index=False)
    parts = ["\n".join(header), body]
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts) + "\n"


def _render(df: pd.DataFrame, fmt: str, header: list[str],
            marks: dict[str, np.ndarray] | None = None, notes: list[str] | None = None) -> str:
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return json.dumps(_records(df), indent=2) + "\n"
    return _table_text(df, header, marks or {}, notes or [])


def _check_destination(path: str, option: str, args) -> None:
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise CLIError(f"{option} {path}: the directory {str(parent)!r} does not exist.")
    if Path(path).is_dir():
        raise CLIError(f"{option} {path}: is a directory.")
    if not os.path.exists(path):
        return
    if args.file is not None and args.file != "-" and os.path.exists(args.file):
        if os.path.samefile(path, args.file):
            raise CLIError(
                f"{option} {path} is the input FILE; calibr never overwrites its input: "
                "choose another path."
            )
    if args.file == "-":
        try:
            stdin_stat = os.fstat(sys.stdin.fileno())
        except (OSError, ValueError, AttributeError):  # not a real file (e.g. in tests)
            return
        if stat.S_ISREG(stdin_stat.st_mode) and os.path.samestat(stdin_stat, os.stat(path)):
            raise CLIError(
                f"{option} {path} is the input on stdin; calibr never overwrites its input: "
                "choose another path."
            )


def _same_path(a: str, b: str) -> bool:
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


# --------------------------------------------------------------------------
# writing: temporary files, renamed over the targets only at the end


def _temp_name(target: str, what: str) -> str:
    head, tail = os.path.split(target)
    return os.path.join(head, f".{tail}.{secrets.token_hex(4)}.calibr-{what}")


def _write_temp(target: str, data: bytes) -> str:
    """Write ``data`` to a new file next to ``target``; return its path."""
    while True:
        tmp = _temp_name(target, "tmp")
        try:  # the mode of a new file (umask applies), or the target's
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:  # pragma: no cover - a random name taken
            continue
        break
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _backup(target: str) -> str:
    """A second name (a hard link, else a copy) of ``target``, to restore it."""
    name = _temp_name(target, "old")
    try:
        os.link(target, name)
    except OSError:  # no hard links on this file system
        shutil.copy2(target, name)
    return name


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


@dataclass
class _Output:
    path: str  # as given
    option: str
    data: bytes


def _commit(outputs: list[_Output]) -> None:
    """Write every output, or none: each goes to a temporary file in its target's
    directory, and the temporary files are renamed over the targets at the end. If a
    rename fails, the targets already replaced get their old contents back (or are
    removed if they did not exist). Targets that are not regular files (a device such
    as /dev/stdout, a FIFO) cannot be replaced; they are written last, directly."""
    staged: list[tuple[_Output, str, str]] = []  # (output, real target, temp file)
    direct: list[tuple[_Output, str]] = []
    done: list[tuple[str, str | None]] = []  # (target, backup of its old contents)
    current = outputs[0] if outputs else None
    try:
        for out in outputs:
            current = out
            if os.path.exists(out.path) and not os.path.isfile(out.path):
                direct.append((out, out.path))  # e.g. /dev/stdout, /dev/null, a FIFO
            else:
                target = os.path.realpath(out.path)  # a symlink keeps pointing at the output
                staged.append((out, target, _write_temp(target, out.data)))
        for out, target, tmp in staged:
            current = out
            backup = _backup(target) if os.path.exists(target) else None
            done.append((target, backup))
            os.replace(tmp, target)
        for out, target in direct:
            current = out
            with open(target, "wb") as fh:
                fh.write(out.data)
    except BaseException as err:
        for target, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.replace(backup, target)
                else:
                    os.remove(target)
        if isinstance(err, OSError) and current is not None:
            why = err.strerror or _detail(err)
            raise CLIError(f"{current.option} {current.path}: cannot write it: {why}.") from None
        raise
    finally:
        for _, _, tmp in staged:
            _remove(tmp)
        for _, backup in done:
            if backup is not None:
                _remove(backup)


#: stdout is written in pieces of this many characters, each flushed: a reader that
#: closes the pipe early is then seen at the next piece (one large write may end
#: early without an error, and the rest would be lost silently).
_STDOUT_PIECE = 1 << 16


def _write_stdout(text: str) -> int:
    try:
        for start in range(0, len(text), _STDOUT_PIECE):
            sys.stdout.write(text[start:start + _STDOUT_PIECE])
            sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    return 0


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null, so that Python's final flush
    does not print "Exception ignored ... BrokenPipeError"."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


# --------------------------------------------------------------------------
# the command


def _report(args) -> int:
    if args.bins is not None:
        try:
            check_bins(args.bins)
        except InputError as err:
            raise CLIError(str(err).replace("`bins`", "--bins")) from None
    if args.prob is not None and args.prob_prefix is not None:
        raise CLIError("give the probability columns by --prob or by --prob-prefix, not both.")
    _sep(args.sep)
    fmt = _format(args)
    for path, option in ((args.output, "--output"), (args.plot, "--plot")):
        if path is not None:
            _check_destination(path, option, args)
    if args.output is not None and args.plot is not None:
        if _same_path(args.output, args.plot):
            raise CLIError("--output and --plot must be different files.")
    if args.plot is not None:
        plot_format = _plot_format(args.plot)
    columns = _with_defaults(parse_metrics(args.metrics), args.bins, args.type)
    bins = args.bins or 10
    type_ = args.type or "classwise"

    sources = _sources(args)
    results, tables, forms = [], [], []
    marks: dict[str, list[np.ndarray]] = {}
    for src in sources:
        res, tab, form, flags = _report_source(src, args, columns, bins, type_)
        forms.append(form)
        if tab is not None:
            tables.append(_tag(tab, src.tag))
        if res is not None:
            results.append(_tag(res, src.tag))
        for col, flag in flags.items():
            marks.setdefault(col, []).append(flag)

    if args.per_bin:
        result = _stack_tables(tables)
        header = _header(sources, bins, forms, "per-bin table")
        text = _render(result, fmt, header)
    else:
        result = pd.concat(results, ignore_index=True)
        binned = [c for c in columns if c.spec.func in _BINNED]
        header = _header(sources, bins if any(c.default_bins for c in binned) else None,
                         forms if any(c.default_type for c in binned) else [], "report")
        flags = {col: np.concatenate(m) for col, m in marks.items()}
        flags = {col: m for col, m in flags.items() if m.any()}
        notes = [
            f"* the MCE comes from a bin of fewer than {MCE_MIN_BIN_COUNT} samples (see "
            f"{', '.join(_bin_n_column(col) for col in flags)}): a gap measured on so few "
            "samples is mostly noise."
        ] if flags else []
        text = _render(result, fmt, header, flags, notes)

    outputs = []
    if args.output is not None:
        outputs.append(_Output(args.output, "--output", text.encode("utf-8")))
    if args.plot is not None:
        figure = _plot(_stack_tables(tables), plot_format, bins, sources, forms)
        outputs.append(_Output(args.plot, "--plot", figure))
    _commit(outputs)
    if args.output is None:
        return _write_stdout(text)
    return 0


def _report_source(
    src: _Source, args, columns: list[_Column], bins: int, type_: str
) -> tuple[pd.DataFrame | None, pd.DataFrame | None, str, dict[str, np.ndarray]]:
    """One input's summary (None with --per-bin), per-bin table (with --per-bin or
    --plot, else None), form, and the MCEs from tiny bins (column -> row flags)."""
    cols, p_word = _columns(src, args)
    frame = src.frame
    if len(frame) == 0:
        raise CLIError(f"{src.label} has no data rows, only a header.")
    if args.renormalize:
        frame = _renormalize(frame, cols)
    _check_row_sums(frame, cols, p_word)
    _validate(frame, cols, args.na_rm, p_word)
    form = type_ if isinstance(cols.p, list) else "binary"

    by = src.colargs["by"]
    show_form = any(c.default_type for c in columns)
    show_bins = any(c.default_bins for c in columns)
    if not args.per_bin:
        added = [c.name for c in columns] + ["n"]
        added += [_bin_n_column(c.name) for c in columns if c.spec.func == "mce"]
        added += ["form"] * show_form + ["bins"] * show_bins
        _check_key_names(by, added, "a column of the report")
    if args.per_bin or args.plot:
        _check_key_names(by, TABLE_COLUMNS, "a column of the per-bin table")
    data = _group(frame, by, src)
    common = {"classes": cols.classes, "na_rm": args.na_rm}
    tab = res = None
    flags: dict[str, np.ndarray] = {}
    if args.per_bin or args.plot:
        tab = _library(calibration_table, p_word, cols.p, cols.y, bins=bins, type=type_,
                       data=data, **common)
    if not args.per_bin:
        metrics = {"n": _count, **{c.name: c.spec for c in columns}}
        res = _library(summarise, p_word, data, cols.p, cols.y, metrics=metrics, **common)
        res["n"] = res["n"].astype("int64")
        for c in columns:
            if c.spec.func != "mce":
                continue
            mtab = _library(
                calibration_table, p_word, cols.p, cols.y,
                bins=c.spec.options.get("bins", 10),
                type=c.spec.options.get("type", "classwise"), data=data, **common,
            )
            counts = _mce_bin_counts(mtab, list(by or []), len(res))
            res.insert(res.columns.get_loc(c.name) + 1, _bin_n_column(c.name), counts)
            flags[c.name] = counts < MCE_MIN_BIN_COUNT
        at = res.columns.get_loc("n")
        if show_bins:
            res.insert(at, "bins", bins)
        if show_form:
            res.insert(at, "form", form)
    return res, tab, form, flags


def _group(frame: pd.DataFrame, by: list | None, src: _Source) -> Any:
    """The grouped frame; missing keys form their own group, so that no row is dropped
    silently."""
    if not by:
        return frame
    grouped = frame.groupby(by, sort=True, dropna=False, observed=True)
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


def _library(func, p_word: str, *args: Any, **kwargs: Any) -> Any:
    """Call calibr's Python API; its input errors become command-line errors."""
    try:
        return func(*args, **kwargs)
    except (InputError, InputTypeError) as err:
        raise CLIError(_cli_words(str(err), p_word)) from None


def _count(p: np.ndarray, y: np.ndarray, **_: Any) -> int:
    return len(p)


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


def _plot(table: pd.DataFrame, fmt: str, bins: int, sources: list[_Source],
          forms: list[str]) -> bytes:
    cols = list(table.columns)
    groups = [c for c in cols[: cols.index("bin")] if c != "class"]
    n_panels = len(table.groupby(groups, dropna=False, observed=True)) if groups else 1
    if n_panels > MAX_PLOT_PANELS:
        raise CLIError(
            f"--plot draws one panel per group, and {n_panels} groups are too many for one "
            f"figure (at most {MAX_PLOT_PANELS}); use fewer --by columns."
        )
    if len(set(forms)) == 1:
        form = forms[0]
    else:
        form = ", ".join(f"{f} ({s.tag or s.label})" for f, s in zip(forms, sources, strict=True))
    curves = "; one curve per class" if "classwise" in forms else ""
    title = f"Reliability diagrams: {bins} equal-width bins; form: {form}{curves}"
    try:
        from .plot import reliability_diagram

        fig = reliability_diagram(table, by=groups, title=title, show_ece=True)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt)
    except ImportError:
        raise CLIError(_NO_MATPLOTLIB) from None
    return buf.getvalue()


# --------------------------------------------------------------------------
# errors


def _one_line(text: str, limit: int | None = None) -> str:
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _user_paths(args: argparse.Namespace | None) -> set[str]:
    """The absolute paths of the user's files (and of the directories of the outputs,
    where the temporary files go), for telling a file error from an internal one."""
    paths: set[str] = set()
    for name in ("file", "output", "plot"):
        arg = getattr(args, name, None)
        if arg and arg != "-":
            full = os.path.abspath(arg)
            paths.update({full, os.path.realpath(full)})
            if name != "file":
                paths.update({os.path.dirname(full), os.path.dirname(os.path.realpath(full))})
    return paths


def _input_message(err: BaseException, paths: set[str]) -> str | None:
    """The one-line message of an error about the user's input, or None (a bug)."""
    if isinstance(err, CLIError):
        return str(err)
    if isinstance(err, OSError) and err.filename is not None:
        full = os.path.abspath(os.fsdecode(err.filename))
        if full in paths or os.path.dirname(full) in paths:  # a temporary output too
            return f"{os.fsdecode(err.filename)}: {err.strerror or _detail(err)}."
    if isinstance(err, (InputError, InputTypeError)):
        return _cli_words(str(err))
    if isinstance(err, MemoryError):  # e.g. a file too large for this machine
        detail = f" ({err})" if str(err) else ""
        return (f"out of memory for this computation{detail}; check the size of the input, "
                "--bins and the metric options.")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``calibr`` command; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success; 2 for bad input (after one line on stderr); 1 for an
        internal error (a bug in calibr; with ``--debug`` it is raised instead,
        so that Python prints the traceback); 141 when stdout is a pipe closed
        early by its reader.

    Examples
    --------
    >>> from calibr.cli import main
    >>> main(["report", "--example", "breast_cancer", "--metrics", "ece"])
    calibr report of bundled example data breast_cancer
    bins: 10 equal-width bins on [0, 1]
    form: binary = one probability column
    <BLANKLINE>
          dataset         model   form  bins   n      ece
    breast_cancer      logistic binary    10 569 0.018601
    breast_cancer   naive_bayes binary    10 569 0.062108
    breast_cancer random_forest binary    10 569 0.027742
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # until the arguments are parsed
    parser = _build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        debug = bool(getattr(args, "debug", False))
        if args.command is None:
            raise CLIError("missing command; try `calibr report` (see `calibr --help`)")
        return _report(args)
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_INPUT
    except BrokenPipeError:  # e.g. --output /dev/stdout into a closed pipe
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("calibr: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as err:  # noqa: BLE001 - sorted into input errors and bugs below
        msg = _input_message(err, _user_paths(args))
        if msg is None:  # a bug in calibr, never the user's fault
            if debug:
                raise
            what = _one_line(f"{type(err).__name__}: {err}" if str(err) else
                             type(err).__name__, 160)
            print(f"calibr: internal error ({what}). This is a bug in calibr, not a problem "
                  "with your input; run the command again with --debug to see the traceback.",
                  file=sys.stderr)
            return EXIT_INTERNAL
        if debug:
            traceback.print_exc()
        print(f"calibr: error: {_one_line(msg)}", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
