"""The ``calibr`` command: calibration reports from CSV or Parquet files.

::

    calibr report                                  # the bundled example data
    calibr report preds.csv --prob p --label y --by model
    calibr report preds.parquet --prob-prefix p_ --label y --by model fold \\
        --metrics "ece,mce(bins=5),skce(estimator=ul)" --format csv -o report.csv
    calibr report preds.csv --per-bin --plot reliability.png

Bad input (a missing file or column, bad probabilities or labels, an unknown
metric or option) prints one line to stderr and exits with status 2, and no
file is written. Every output is computed before anything is written.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from . import __version__
from ._validation import InputError, check_bins
from .frame import Metric, _classes_from_names, metric, resolve_columns, summarise
from .table import TABLE_COLUMNS, calibration_table

__all__ = ["main"]

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

_EPILOG = """\
metrics: a comma-separated list of ece, mce, skce and mmce, each optionally with
options in parentheses, as in R: "ece,mce(bins=5),skce(estimator=ul,bandwidth=0.1)".
--bins and --type apply to ece and mce (and the per-bin table) unless a metric
sets them itself.

multiclass: with --prob-prefix p_ the columns p_<label> hold the probability of
each class; numeric labels match the columns whose suffix is that integer (the
label 3 is the class of p_3). With --prob a b c, labels must equal the column
names, or --classes must give the label of each column (e.g. --classes 1,2,3 for
R's 1-based codes).

exit status: 0 on success, 2 for bad input (one line on stderr, nothing written).
"""


class CLIError(Exception):
    """Bad command-line input: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not usage + message
        raise CLIError(f"{message} (see `{self.prog} --help`)")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="calibr",
        description="Calibration-error metrics (ECE, MCE, MMCE, SKCE) for probabilistic "
        "classifiers.",
    )
    parser.add_argument("--version", action="version", version=f"calibr {__version__}")
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
        ".parquet or .pq, or - for CSV on stdin; default: the bundled example data",
    )
    rep.add_argument(
        "--example", choices=("all", "breast_cancer", "digits"),
        help="without FILE: which bundled data set to report (default: all)",
    )
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
    met = rep.add_argument_group("metrics")
    met.add_argument(
        "-m", "--metrics", default="ece,mce", metavar="LIST",
        help='comma-separated metrics with options, e.g. "ece,mce(bins=5)" (default: ece,mce)',
    )
    met.add_argument("--bins", type=int, default=None, metavar="B",
                     help="number of equal-width bins for ece, mce and --per-bin (default: 10)")
    met.add_argument("--type", choices=("classwise", "confidence"), default=None,
                     help="multiclass form of ece, mce and --per-bin (default: classwise)")
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
        help="also write reliability diagrams (one panel per group; multiclass: the "
        "top-label confidence unless --type classwise, which draws a curve per class) to "
        "PATH (.png, .pdf, .svg); needs matplotlib (pip install matplotlib)",
    )
    return parser


# --------------------------------------------------------------------------
# metric lists: "ece,mce(bins=5),skce(estimator=ul)"

_SPEC = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*")


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


def parse_metrics(text: str) -> list[tuple[str, Metric]]:
    """``[(column name, Metric)]`` from a --metrics string."""
    out = []
    for part in _split_top(text):
        if not part.strip():
            raise CLIError(f"--metrics: empty entry in {text!r}.")
        m = _SPEC.fullmatch(part)
        if m is None:
            raise CLIError(f"--metrics: cannot read {part.strip()!r}; write e.g. mce(bins=5).")
        name, args = m.group(1), m.group(2)
        options = {}
        if args is not None and args.strip():
            for item in _split_top(args):
                key, eq, val = item.partition("=")
                if not eq or not key.strip().isidentifier():
                    raise CLIError(
                        f"--metrics: options are written name=value; got {item.strip()!r} "
                        f"in {part.strip()!r}."
                    )
                options[key.strip()] = _value(val)
        spec = metric(name, **options)
        col = part.strip() if options else name
        if any(col == c for c, _ in out):
            raise CLIError(f"--metrics: {col!r} appears twice.")
        out.append((col, spec))
    return out


def _with_defaults(specs, bins, type_) -> list[tuple[str, Metric]]:
    out = []
    for col, spec in specs:
        if spec.func in _BINNED:
            extra = {}
            if bins is not None and "bins" not in spec.options:
                extra["bins"] = bins
            if type_ is not None and "type" not in spec.options:
                extra["type"] = type_
            spec = Metric(spec.func, {**spec.options, **extra})
        out.append((col, spec))
    return out


# --------------------------------------------------------------------------
# input


def _read(file: str) -> pd.DataFrame:
    if file == "-":
        return _read_csv(sys.stdin, "-")
    path = Path(file)
    if not path.exists():
        raise CLIError(f"{file}: no such file.")
    if path.is_dir():
        raise CLIError(f"{file}: is a directory, not a file.")
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        try:
            return pd.read_parquet(path)
        except ImportError:
            raise CLIError(
                "reading Parquet needs pyarrow; install it with `pip install pyarrow`."
            ) from None
    if re.search(r"\.(csv|txt)(\.(gz|bz2|xz|zip|zst))?$", name):
        return _read_csv(path, file)
    raise CLIError(
        f"{file}: cannot tell the format from the extension; use .csv or .parquet."
    )


def _read_csv(source: Any, file: str) -> pd.DataFrame:
    """pd.read_csv, with the file named in the message when it cannot be read."""
    try:
        return pd.read_csv(source)
    except UnicodeDecodeError as err:
        raise CLIError(
            f"{file}: cannot read it as CSV: it is not UTF-8 text (it has the byte "
            f"0x{err.object[err.start]:02x})."
        ) from None
    except ValueError as err:  # pandas' ParserError and EmptyDataError
        raise CLIError(f"{file}: cannot read it as CSV: {str(err).rstrip('.')}.") from None


def _datasets(args) -> list[tuple[str | None, pd.DataFrame, dict[str, Any]]]:
    """(dataset name or None, frame, column arguments) for each input."""
    colargs = {"p": args.prob, "p_prefix": args.prob_prefix, "y": args.label, "by": args.by}
    if args.file is not None:
        if args.example is not None:
            raise CLIError("--example picks bundled data; it cannot be used with FILE.")
        frame = _read(args.file)
        if colargs["p"] is None and colargs["p_prefix"] is None:
            colargs["p"] = ["p"]
        colargs["y"] = colargs["y"] or "y"
        return [(None, frame, colargs)]
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
        out.append((name, loader(), ca))
    return out


def _columns(frame: pd.DataFrame, ca: dict[str, Any], classes_text: str | None):
    p = ca["p"]
    if p is not None and len(p) == 1:
        p = p[0]
    for col in ca["by"] or []:
        if col not in frame.columns:
            raise CLIError(f"--by: no column {col!r} in the data.")
    classes = None
    if classes_text is not None:
        labels = [s.strip() for s in classes_text.split(",")]
        y = ca["y"]
        if y not in frame.columns:
            raise CLIError(f"--label: no column {y!r} in the data.")
        try:
            classes = _classes_from_names(labels, frame[y], "--classes")
        except ValueError:
            raise CLIError(
                f"--classes: the labels in {y!r} are numbers, so the classes must be integers; "
                f"got {classes_text!r}."
            ) from None
        if len(set(labels)) != len(labels):
            raise CLIError(f"--classes must not repeat a label; got {classes_text!r}.")
    # check the columns now, for a message that names the option
    try:
        resolve_columns(frame, p, ca["y"], ca["p_prefix"], classes)
    except ValueError as err:
        raise CLIError(_cli_words(str(err))) from None
    return p, classes


#: The Python arguments named in calibr's messages, and the options that set them.
_OPTION_WORDS = (
    ("the column names of the DataFrame `p`", "the names of the --prob columns"),
    ("`p_prefix`", "--prob-prefix"),
    ("`p`", "--prob"),
    ("`y`", "--label"),
    ("`classes`", "--classes"),
    ("classes=(negative, positive)", "--classes NEGATIVE,POSITIVE"),
    ("classes= ", "--classes "),
    ("na_rm=True", "--na-rm"),
)


def _cli_words(msg: str) -> str:
    """A message of calibr's Python API with its argument names as command-line options."""
    for python, option in _OPTION_WORDS:
        msg = msg.replace(python, option)
    return msg


def _check_key_names(by: list | None, outputs: Sequence[str], what: str) -> None:
    """Grouping columns must not have the name of a column the report adds."""
    for col in by or []:
        if col in outputs:
            raise CLIError(
                f"--by: the column {col!r} has the name of {what}; rename it in the data."
            )


# --------------------------------------------------------------------------
# output


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in df.to_dict(orient="records"):
        clean = {}
        for k, v in rec.items():
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            elif v is pd.NA or v is pd.NaT:
                v = None
            clean[str(k)] = v
        out.append(clean)
    return out


def _render(df: pd.DataFrame, fmt: str) -> str:
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return json.dumps(_records(df), indent=2) + "\n"
    return df.to_string(index=False) + "\n"


def _format(args) -> str:
    if args.format is not None:
        return args.format
    if args.output is not None:
        suffix = Path(args.output).suffix.lower()
        if suffix in (".csv", ".json"):
            return suffix[1:]
    return "table"


def _check_destination(path: str, option: str) -> None:
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise CLIError(f"{option} {path}: the directory {str(parent)!r} does not exist.")
    if Path(path).is_dir():
        raise CLIError(f"{option} {path}: is a directory.")


def _write_all(outputs: list[tuple[str, bytes]]) -> None:
    """Write every file, or (on an OS error) remove the ones this call created."""
    created = []
    try:
        for path, data in outputs:
            existed = os.path.exists(path)
            with open(path, "wb") as fh:
                if not existed:
                    created.append(path)
                fh.write(data)
    except OSError:
        for path in created:
            try:
                os.remove(path)
            except OSError:
                pass
        raise


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
    fmt = _format(args)
    for path, option in ((args.output, "--output"), (args.plot, "--plot")):
        if path is not None:
            _check_destination(path, option)
    if args.output is not None and args.plot is not None:
        if Path(args.output).resolve() == Path(args.plot).resolve():
            raise CLIError("--output and --plot must be different files.")
    specs = _with_defaults(parse_metrics(args.metrics), args.bins, args.type)

    results, tables, plot_tables = [], [], []
    for name, frame, ca in _datasets(args):
        p, classes = _columns(frame, ca, args.classes)
        by = ca["by"]
        if not args.per_bin:
            _check_key_names(by, ["n"], "the report's row count")
            _check_key_names(by, [col for col, _ in specs], "a metric column of the report")
        if args.per_bin or args.plot:
            _check_key_names(by, TABLE_COLUMNS, "a column of the per-bin table")
        # missing keys form their own group, so that no row is dropped silently
        data = frame.groupby(by, sort=True, dropna=False, observed=True) if by else frame
        common = {"p_prefix": ca["p_prefix"], "classes": classes, "na_rm": args.na_rm}
        if args.per_bin:
            tab = calibration_table(
                p, ca["y"], bins=args.bins or 10, type=args.type or "classwise",
                data=data, **common,
            )
            tables.append(_tag(tab, name))
        if args.plot:
            # ten one-vs-rest curves per panel are unreadable: the plot shows the
            # top-label confidence unless --type classwise asks for the classes
            tab = calibration_table(
                p, ca["y"], bins=args.bins or 10, type=args.type or "confidence",
                data=data, **common,
            )
            plot_tables.append(_tag(tab, name))
        if not args.per_bin:
            res = summarise(data, p, ca["y"], metrics={"n": _count, **dict(specs)}, **common)
            res["n"] = res["n"].astype("int64")
            results.append(_tag(res, name))

    table = _stack_tables(tables) if tables else None
    result = table if args.per_bin else pd.concat(results, ignore_index=True)
    text = _render(result, fmt)

    outputs = []
    if args.plot is not None:
        outputs.append((args.plot, _plot(_stack_tables(plot_tables), args.plot)))
    if args.output is not None:
        outputs.insert(0, (args.output, text.encode("utf-8")))
    _write_all(outputs)
    if args.output is None:
        sys.stdout.write(text)
    return 0


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


def _plot(table: pd.DataFrame, path: str) -> bytes:
    try:
        from .plot import reliability_diagram

        cols = list(table.columns)
        groups = [c for c in cols[: cols.index("bin")] if c != "class"]
        fig = reliability_diagram(table, by=groups)
        buf = io.BytesIO()
        fmt = Path(path).suffix.lower().lstrip(".") or "png"
        fig.savefig(buf, format=fmt)
    except ImportError:
        raise CLIError(
            "--plot needs matplotlib; install it with `pip install matplotlib`."
        ) from None
    return buf.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``calibr`` command; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 for bad input (after one line on stderr).

    Examples
    --------
    >>> from calibr.cli import main
    >>> main(["report", "--example", "breast_cancer", "--metrics", "ece"])
          dataset         model   n      ece
    breast_cancer      logistic 569 0.018601
    breast_cancer   naive_bayes 569 0.062108
    breast_cancer random_forest 569 0.027742
    0
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise CLIError("missing command; try `calibr report` (see `calibr --help`)")
        return _report(args)
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except (OverflowError, MemoryError) as err:  # e.g. a huge number of bins
        what = "a number is too large" if isinstance(err, OverflowError) else "out of memory"
        detail = f" ({err})" if str(err) else ""
        msg = f"{what} for this computation{detail}; check --bins and the metric options."
    except (CLIError, ValueError, TypeError, KeyError, OSError, ImportError) as err:
        msg = str(err) if not isinstance(err, KeyError) else f"missing column {err}"
        if isinstance(err, OSError) and getattr(err, "filename", None):
            msg = f"{err.filename}: {err.strerror or err}"
        elif isinstance(err, (ValueError, TypeError)) and not isinstance(err, CLIError):
            msg = _cli_words(msg)
    msg = " ".join(msg.split())  # one line
    print(f"calibr: error: {msg}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
