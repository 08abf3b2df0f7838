"""Command-line errors: one line on stderr and an exit status, in the words of
the command line rather than of the Python API."""

from __future__ import annotations

import re
from typing import Any

#: Exit statuses.
EXIT_INTERNAL = 1
#: ``calibr compare``'s internal errors: its 1 means "significantly worse".
EXIT_COMPARE_INTERNAL = 3
EXIT_INPUT = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for `cat big | head -1`
EXIT_INTERRUPTED = 130  # 128 + SIGINT


class CLIError(Exception):
    """Bad command-line input: one line on stderr, exit status 2."""

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
    ("`tests`", "--test"),
    ("`rng`", "--seed"),
    ("`weights`", "--weights"),
)


def _cli_words(msg: str, p_word: str = "--prob") -> str:
    """A message of calibr's Python API with its argument names as command-line options."""
    msg = re.sub(r"\ba (\d+)-column `p`", r"\1 probability columns", msg)
    msg = re.sub(r'`method = "(\w+)"`', r"--test \1", msg)
    msg = re.sub(
        r"classes=range\((\d+)\)",
        lambda m: "--classes " + ",".join(str(k) for k in range(int(m.group(1)))),
        msg,
    )
    for python, option in _PYTHON_WORDS:
        msg = msg.replace(python, option)
    return msg.replace("`p`", p_word)


def _detail(err: BaseException) -> str:
    return " ".join(str(err).split()).rstrip(".") or type(err).__name__


def _library(func, p_word: str, *args: Any, **kwargs: Any) -> Any:
    """Call calibr's Python API; its input errors become command-line errors."""
    from .._input import InputError, InputTypeError  # imported by the API already

    try:
        return func(*args, **kwargs)
    except (InputError, InputTypeError) as err:
        raise CLIError(_cli_words(str(err), p_word)) from None
