"""Command-line errors: one line on stderr and an exit status, in the words of
the command line rather than of the Python API."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._input import InputError, InputTypeError, Term

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
#: option: a message's terms that name them (`y`, `method = "skce"`, the hint
#: na_rm=True) are written with it (--label, --test skce, --na-rm). `p` is --prob
#: or --prob-prefix 'PREFIX', which the caller knows. `bins`, `type`, `binning` and
#: `right` stay as they are: they are also the options of a metric in --metrics,
#: which their message is about as often (a caller that knows it means --bins
#: says so, see _cli_message).
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

#: The command line's words for the phrases of a message that describe a Python
#: object (by the form of the term, see calibr._input.arg): the command line has
#: columns where the API has a vector or a DataFrame `p` (given by --prob, even
#: where --prob-prefix gave the columns), no callables, and a report where the
#: API has summarise().
_PHRASES = {
    "vector": "a single --prob column",
    "columns": "{value} probability columns",
    "frame": "the names of the --prob columns",
    "python": "",
}
_FUNCTIONS = {"summarise": "the report"}


def _hint_value(value: str) -> str:
    """The command-line form of a hint's value: a flag's True is the option alone,
    placeholders are upper case (NEGATIVE,POSITIVE), a range is its labels."""
    if value in ("", "True"):
        return ""
    if value.startswith("range("):
        return " " + ",".join(str(k) for k in range(*map(int, value[6:-1].split(","))))
    return " " + ",".join(word.strip().upper() for word in value.strip("()").split(","))


def _spell(term: Term, words: dict[str, str]) -> str:
    """A term of a library message in the words of the command line (``words``:
    argument -> option), or as the API writes it where no option sets it."""
    if term.form == "function":
        return _FUNCTIONS.get(term.name, str(term))
    if term.form == "python" or (term.form in _PHRASES and term.name == "p"):
        return _PHRASES[term.form].format(value=term.value)
    flag = "--prob" if term.form == "use" and term.name == "p" else words.get(term.name)
    if flag is None:
        return str(term)
    if term.form == "setting":
        return f"{flag} {term.value}"
    if term.form == "hint":
        return flag + _hint_value(term.value)
    return term.words(flag)


def _cli_message(err: InputError | InputTypeError, p_word: str = "--prob",
                 names: dict[str, str] | None = None,
                 text: Callable[[str], str] | None = None) -> str:
    """The message of an error of calibr's Python API in the words of the command
    line: each argument it names (``err.parts``' terms) as its option
    (:data:`OPTIONS`, ``p`` as ``p_word``, and ``names`` for the arguments that
    are options in the caller's context only: ``{"bins": "--bins"}`` where the
    message is about --bins, not a metric's option). The text between the terms
    stays (``text``, if given, rewrites it), so a value the message shows is never
    taken for an argument."""
    words = {**OPTIONS, "p": p_word, **(names or {})}
    return "".join((part if text is None else text(part)) if isinstance(part, str)
                   else _spell(part, words) for part in err.parts)


def _detail(err: BaseException) -> str:
    return " ".join(str(err).split()).rstrip(".") or type(err).__name__


def _library(func, p_word: str, *args: Any, **kwargs: Any) -> Any:
    """Call calibr's Python API; its input errors become command-line errors."""
    from .._input import InputError, InputTypeError  # imported by the API already

    try:
        return func(*args, **kwargs)
    except (InputError, InputTypeError) as err:
        raise CLIError(_cli_message(err, p_word)) from None
