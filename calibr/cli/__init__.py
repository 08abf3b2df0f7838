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
* No file is lost: an output that is any file an input reads (or would read:
  in an input directory, matching an input glob) is refused, and every
  output is written to a temporary file in its directory and renamed over the
  target only when all of them are written, so a failed run leaves every
  existing file as it was.
* The table output shows numbers to 4 significant digits (``_render``); CSV and
  JSON keep every digit.
* A column list separated by spaces (``--by model fold``) never takes FILE: a
  list that ends in the name of a file while FILE is missing is an input error.
* A pipe closed early (``calibr report | head -1``) ends the command quietly
  with status 141, as for a process killed by SIGPIPE.
* A warning about the input (an infinite log loss, a one-class group's AUROC,
  ...) is one line ``calibr: warning: ...`` on stderr, without Python's file,
  line and category (``_show_warning``); ``--debug`` keeps Python's own form, and
  a library's deprecation is left to Python.

The package, one module per job: ``_args`` (the parser and the ``--metrics``
lists), ``_io`` (reading the input, the format of the output, writing every
output or none), ``_engine`` (where Dask computes a directory or glob),
``_columns`` (the columns of the input and their checks), ``_report`` (the
``report`` command), ``_render`` (table, CSV and JSON) and ``_errors`` (the
command line's errors and exit statuses). ``python -m calibr.cli`` runs
:func:`main`.

Importing this package and parsing the arguments import nothing of calibr's
numerics (numpy, pandas, numba): ``calibr --help``, ``--version`` and a
mistyped option answer at once, and ``_report`` (with everything a report
needs) is imported once the arguments are read.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from importlib import import_module
from importlib.util import find_spec

from .._input import InputError, InputTypeError
from ._args import MCE_MIN_BIN_COUNT, RENORMALIZE_TOL, _build_parser, parse_metrics
from ._compare import add_parser as _add_compare_parser
from ._errors import (
    EXIT_BROKEN_PIPE,
    EXIT_COMPARE_INTERNAL,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    CLIError,
    _cli_message,
    _detail,
)
from ._io import _silence_stdout

__all__ = ["main", "parse_metrics", "MCE_MIN_BIN_COUNT", "RENORMALIZE_TOL"]


def __getattr__(name: str) -> object:
    """The submodules imported on demand (``calibr.cli._report``), and ``report``."""
    if name == "report":
        return import_module("._report", __name__).report
    if not name.startswith("__") and find_spec(f"{__name__}.{name}"):
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------
# errors: the user's input (exit 2) or a bug in calibr (exit 1)


def _one_line(text: str, limit: int | None = None) -> str:
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _user_paths(args: argparse.Namespace | None) -> set[str]:
    """The absolute paths of the user's files (and of the directories of the outputs,
    where the temporary files go), for telling a file error from an internal one."""
    paths: set[str] = set()
    for name in ("file", "output", "plot", "html"):
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
    if isinstance(err, (InputError, InputTypeError)):  # calibr's input errors
        return _cli_message(err)

    if isinstance(err, MemoryError):  # e.g. a file too large for this machine
        detail = f" ({err})" if str(err) else ""
        return (f"out of memory for this computation{detail}; check the size of the input, "
                "--bins and the metric options.")
    return None


#: The API's name of the verb a warning comes from, at the start of its message:
#: the command line has a report where the API has ``summarise``.
_API_PREFIXES = ("summarise: ",)
#: What showed a warning before :func:`main` (Python's form, or a test runner's).
_PYTHON_SHOWWARNING = warnings.showwarning


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: object = None, line: str | None = None) -> None:
    """``warnings.showwarning`` for the command line: a warning about the input
    (calibr's counted warnings, a plain user or runtime warning) is ``calibr:
    warning: ...``, one line on stderr, without the file and line of the Python code
    that warned, which mean nothing to a user of the command. Any other category (a
    library's ``DeprecationWarning`` or ``FutureWarning``) is for developers: it is
    shown as Python shows it (by Python's filters, which hide a deprecation outside
    ``__main__``)."""
    if not (issubclass(category, (UserWarning, RuntimeWarning))
            and category.__module__ in ("builtins", "calibr._input.warning")):
        _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)
        return
    text = str(message)
    for prefix in _API_PREFIXES:
        text = text.removeprefix(prefix)
    print(f"calibr: warning: {_one_line(text)}", file=sys.stderr)


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
          dataset         model   form  bins   n     ece
    breast_cancer      logistic binary    10 569 0.01860
    breast_cancer   naive_bayes binary    10 569 0.06211
    breast_cancer random_forest binary    10 569 0.02774
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--debug" in argv:  # Python's own form of a warning, with its file and line
        return _main(argv)
    global _PYTHON_SHOWWARNING
    with warnings.catch_warnings():  # the filters (-W, PYTHONWARNINGS) are kept
        _PYTHON_SHOWWARNING = warnings.showwarning
        warnings.showwarning = _show_warning
        return _main(argv)


def _main(argv: list[str]) -> int:
    debug = "--debug" in argv  # until the arguments are parsed
    parser = _build_parser(_add_compare_parser)
    args = None
    try:
        args = parser.parse_args(argv)
        debug = bool(getattr(args, "debug", False))
        if args.command is None:
            raise CLIError("missing command; try `calibr report` (see `calibr --help`)")
        if args.command == "compare":
            from ._compare import run

            return run(args)
        from ._report import report  # numpy, pandas and the metrics: only now

        return report(args)
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
            # compare's 1 means "significantly worse": a crash there must not look like it
            compare = getattr(args, "command", None) == "compare"
            return EXIT_COMPARE_INTERNAL if compare else EXIT_INTERNAL
        if debug:
            traceback.print_exc()
        print(f"calibr: error: {_one_line(msg)}", file=sys.stderr)
        return EXIT_INPUT
