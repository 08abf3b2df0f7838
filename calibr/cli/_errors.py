"""Command-line errors: one line on stderr and an exit status, in the words of
the command line rather than of the Python API."""

from __future__ import annotations

import functools
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

#: The arguments of calibr's Python API that a command-line option sets, and that
#: option: the names of a message (`y`), its `name = value` forms (`method =
#: "skce"` is --test skce) and its name=value hints (na_rm=True is --na-rm) are
#: written with it. `p` is --prob or --prob-prefix 'PREFIX', which the caller
#: knows. `bins`, `type`, `binning` and `right` stay as they are: they are also
#: the options of a metric in --metrics, which their message is about as often
#: (a caller that knows it means --bins says so, see _cli_words).
OPTIONS = {
    "y": "--label",
    "classes": "--classes",
    "na_rm": "--na-rm",
    "weights": "--weights",
    "rng": "--seed",
    "metrics": "--metrics",
    "tests": "--test",
    "method": "--test",  # calibration_test(method=...): one --test
    "p_prefix": "--prob-prefix",
}

#: The phrases that describe a Python object, not an argument, and their
#: command-line words (applied first, in this order). The command line has
#: columns where the API has a vector or a DataFrame `p`, no callables, and a
#: report where the API has summarise().
_PHRASES = (
    ("the column names of the DataFrame `p`", "the names of the --prob columns"),
    ("columns with `p`", "columns with --prob"),  # --prob, even after --prob-prefix
    ("for a vector `p`", "for a single --prob column"),
    (" or be callables", ""),
    ("summarise()", "the report"),
)


@functools.lru_cache(maxsize=16)
def _patterns(names: tuple[str, ...]) -> tuple[re.Pattern, re.Pattern]:
    """The two patterns of a message's argument names (longest names first):
    `name` and `name = value` (e.g. `method = "skce"`), and the name=value hints
    (na_rm=True, classes=(negative, positive), classes=range(3), and the bare
    name= of "pass classes= to ...")."""
    alternatives = "|".join(sorted(names, key=len, reverse=True))
    quoted = re.compile(r'`(' + alternatives + r')(?: = "?([^"`]*)"?)?`')
    hint = re.compile(r"(?<![\w.`])(" + alternatives
                      + r")=(True|\([a-z, ]+\)|range\(\d+(?:, \d+)?\)|)(?=[\s.,;)]|$)")
    return quoted, hint


def _hint_value(value: str) -> str:
    """The command-line form of a hint's value: a flag's True is the option alone,
    placeholders are upper case (NEGATIVE,POSITIVE), a range is its labels."""
    if value in ("", "True"):
        return ""
    if value.startswith("range("):
        return " " + ",".join(str(k) for k in range(*map(int, value[6:-1].split(","))))
    return " " + ",".join(word.strip().upper() for word in value.strip("()").split(","))


def _cli_words(msg: str, p_word: str = "--prob", names: dict[str, str] | None = None) -> str:
    """A message of calibr's Python API with its argument names in the words of
    the command line: :data:`OPTIONS`, ``p`` as ``p_word``, and ``names`` for the
    arguments that are options in the caller's context only (``{"bins": "--bins"}``
    where the message is about --bins, not a metric's option)."""
    words = {**OPTIONS, "p": p_word, **(names or {})}
    quoted, hint = _patterns(tuple(words))
    msg = re.sub(r"\ba (\d+)-column `p`", r"\1 probability columns", msg)
    for python, phrase in _PHRASES:
        msg = msg.replace(python, phrase)
    msg = quoted.sub(lambda m: words[m[1]] + (f" {m[2]}" if m[2] is not None else ""), msg)
    return hint.sub(lambda m: words[m[1]] + _hint_value(m[2]), msg)


def _detail(err: BaseException) -> str:
    return " ".join(str(err).split()).rstrip(".") or type(err).__name__


def _library(func, p_word: str, *args: Any, **kwargs: Any) -> Any:
    """Call calibr's Python API; its input errors become command-line errors."""
    from .._input import InputError, InputTypeError  # imported by the API already

    try:
        return func(*args, **kwargs)
    except (InputError, InputTypeError) as err:
        raise CLIError(_cli_words(str(err), p_word)) from None
