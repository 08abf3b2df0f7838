"""The two exceptions of bad input: :class:`InputError` (a bad value) and
:class:`InputTypeError` (a kind of object calibr does not read).

Bad input to any public function of calibr raises one of them, and nothing
else escapes; any other exception is a bug in calibr. Each names the argument
it is about in ``param``, so that code that handles it (the command line, the
Dask backend) reads that attribute instead of the wording of the message.

A message is text and :class:`Term`\\ s, the arguments of calibr's API it names
(``err.parts``): its subject, ``param``, where the message begins with it (as
"`bins` must be ..." does), and each other name written by :func:`arg`. A caller
that calls the arguments otherwise re-renders the terms, never the text:
:meth:`InputError.renamed` (``paired_bootstrap``'s ``p_a`` for ``p``) and the
command line's flags (``--prob`` for ``p``), so that a value shown in a message
(a label "`p`", a group "na_rm=True") is never taken for an argument.

This module imports nothing but the standard library, so that the command line
can catch the errors without importing numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["InputError", "InputTypeError", "Term", "arg", "extended", "reworded"]

#: The delimiters of a term in a message being built (Unicode private-use
#: characters: repr(), and so fmt(), writes them as escapes, so no value shown
#: in a message contains them). InputError takes them out.
_OPEN, _SEP, _CLOSE = "\ue000", "\ue001", "\ue002"

#: How the Python API writes a term of each form; ``{arg}`` is the argument,
#: "`name`" unless the caller spells it otherwise (:meth:`Term.words`).
_API_WORDS = {
    "name": "{arg}",  # the argument: "`p` must lie in [0, 1]"
    "use": "{arg}",  # the argument to pass instead: "list the columns with `p` instead"
    "setting": '`{name} = "{value}"`',  # '`method = "skce"` is for binary outcomes only'
    "hint": "{name}={value}",  # "Pass na_rm=True to ...", "pass classes= to ..."
    "vector": "a vector {arg}",  # "for a vector `p`"
    "columns": "a {value}-column {arg}",  # "for a 3-column `p`"
    "frame": "the column names of the DataFrame {arg}",
    "function": "{name}()",  # "set by summarise()"
    "python": "{value}",  # words for Python callers only: " or be callables"
}


class Term(NamedTuple):
    """An argument of calibr's API named in a message: its ``name`` as the
    function's signature spells it, the ``form`` of the mention (one of
    ``"name"``, ``"use"``, ``"setting"``, ``"hint"``, ``"vector"``, ``"columns"``,
    ``"frame"``, ``"function"``, ``"python"``; see :func:`arg`) and a ``value``
    that some forms show (``"True"`` of the hint na_rm=True). ``str(term)`` is
    the text of the Python API."""

    name: str
    form: str = "name"
    value: str = ""

    def words(self, arg: str | None = None) -> str:
        """The API's words for the term, with the argument written ``arg``
        (default "`name`"): ``Term("p", "vector").words("A")`` is "a vector A"."""
        return _API_WORDS[self.form].format(
            arg=f"`{self.name}`" if arg is None else arg, name=self.name, value=self.value)

    def __str__(self) -> str:
        return self.words()


def arg(name: str, form: str = "name", value: object = "") -> str:
    """The argument ``name`` in a message being built; the error made from the
    message shows it as the API writes it and keeps it as a :class:`Term`.

    ``form`` is how the message names it: ``"name"`` ("`p`"), ``"use"`` ("`p`"
    as the argument to pass instead of another), ``"setting"`` ('`method =
    "skce"`', with ``value``), ``"hint"`` (na_rm=True, classes=(negative,
    positive), classes=: ``value`` after the "="), ``"vector"`` ("a vector
    `p`"), ``"columns"`` ("a 3-column `p`", ``value`` 3), ``"frame"`` ("the
    column names of the DataFrame `p`"), ``"function"`` ("summarise()") and
    ``"python"`` (``value``, words that only a Python caller can act on).

    The subject of a message that begins with its ``param`` needs no ``arg``.

    Examples
    --------
    >>> err = InputError(f"`y` must be 0/1 or boolean for {arg('p', 'vector')}.", param="y")
    >>> str(err)
    '`y` must be 0/1 or boolean for a vector `p`.'
    >>> err.parts
    (Term(name='y', form='name', value=''), ' must be 0/1 or boolean for ', \
Term(name='p', form='vector', value=''), '.')
    """
    if form not in _API_WORDS:
        raise ValueError(f"unknown form of a term: {form!r}")
    return f"{_OPEN}{form}{_SEP}{name}{_SEP}{value}{_CLOSE}"


def _parts(message: str, param: str | None = None) -> tuple[str | Term, ...]:
    """Text and terms of a message built with :func:`arg`; with ``param``, a
    message that begins with "`param`" has that subject as its first term."""
    text, *marked = message.split(_OPEN)
    parts: list[str | Term] = []
    subject = f"`{param}`"
    if param and text.startswith(subject):
        parts.append(Term(param))
        text = text[len(subject):]
    if text:
        parts.append(text)
    for piece in marked:
        term, close, text = piece.partition(_CLOSE)
        fields = term.split(_SEP)
        if close and len(fields) == 3 and fields[0] in _API_WORDS:
            parts.append(Term(fields[1], fields[0], fields[2]))
        else:  # not made by arg(): kept as text
            text = piece
        if text:
            parts.append(text)
    return tuple(parts)


def _text(parts: tuple[str | Term, ...]) -> str:
    return "".join(map(str, parts))


class _Structured(Exception):
    """What the two exceptions share: ``param``, ``code`` and the message's parts."""

    def __init__(self, message: str = "", *, param: str | None = None,
                 code: str | None = None) -> None:
        parts = _parts(message, param)
        super().__init__(_text(parts))
        self.param = param
        self.code = code
        #: The message as text and the :class:`Term`\ s it names, in order.
        self.parts = parts

    def _with(self, parts: tuple[str | Term, ...], param: str | None):
        err = type(self)(_text(parts), param=param, code=self.code)
        err.parts = parts
        return err

    def renamed(self, names: Mapping[str, str]):
        """The same error about other arguments: each term (and ``param``) whose
        name is a key of ``names`` names its value instead, e.g.
        ``err.renamed({"p": "p_a"})`` turns "`p` must lie in [0, 1]; ..." into
        "`p_a` must lie in [0, 1]; ...". Only terms change, never the text."""
        parts = tuple(p if isinstance(p, str) else p._replace(name=names.get(p.name, p.name))
                      for p in self.parts)
        return self._with(parts, names.get(self.param, self.param))


class InputError(_Structured, ValueError):
    """Raised for an argument with a bad value (a ``ValueError``).

    Parameters
    ----------
    message : str
        What is wrong, naming the argument (e.g. "`bins` must be a single
        positive integer; got 2.5."); other arguments it names are written
        with :func:`arg`.
    param : str, optional
        The name of the argument the message is about (``"y"``, ``"weights"``,
        ``"bins"``), as the function's signature spells it.
    code : str, optional
        A short name of the rule broken, for the few callers that handle one
        rule differently: ``"zero_total"`` (weights whose total is 0; the Dask
        backend adds nothing for such a partition) and ``"row_sums"`` (rows of
        ``p`` that do not sum to 1; the command line names its own fix).

    Attributes
    ----------
    parts : tuple of str and Term
        The message as text and the arguments it names.

    Examples
    --------
    >>> import calibr
    >>> try:
    ...     calibr.ece([0.2, 0.8], [0, 1], bins=0)
    ... except calibr.InputError as err:
    ...     print(err.param)
    bins
    """


class InputTypeError(_Structured, TypeError):
    """Raised for an argument of a type calibr does not accept (a ``TypeError``).

    Bad input to any public function of calibr raises :class:`InputError` or
    this; any other exception is a bug in calibr. ``param``, ``code`` and
    ``parts`` are those of :class:`InputError`.
    """


# Shown as calibr.InputError in tracebacks and doctests (the public name);
# pickle finds them there too (calibr resolves the name on first use), and
# restores param, code and parts from the instance's __dict__.
InputError.__module__ = InputTypeError.__module__ = "calibr"


def reworded(err: BaseException, message: str, *, param: str | None = None) -> Exception:
    """``err`` with another message: the same type, and for calibr's errors the
    same ``code`` and ``param`` (or ``param``, where the caller renames the
    argument). An exception whose constructor takes other arguments becomes
    an :class:`InputTypeError` (for a ``TypeError``) or an :class:`InputError`.
    """
    if isinstance(err, _Structured):
        return type(err)(message, param=param or err.param, code=err.code)
    try:
        return type(err)(message)
    except Exception:  # noqa: BLE001 - an exception type with another constructor
        kind = InputTypeError if isinstance(err, TypeError) else InputError
        return kind(message, param=param)


def extended(err: BaseException, text: str) -> Exception:
    """``err`` with ``text`` (which may name arguments with :func:`arg`) after its
    message, e.g. the group it is about: calibr's errors keep their type,
    ``param``, ``code`` and terms; others are :func:`reworded`."""
    if isinstance(err, _Structured):
        return err._with(err.parts + _parts(text), err.param)
    return reworded(err, f"{err}{_text(_parts(text))}")
