"""The two exceptions of bad input: :class:`InputError` (a bad value) and
:class:`InputTypeError` (a kind of object calibr does not read).

Bad input to any public function of calibr raises one of them, and nothing
else escapes; any other exception is a bug in calibr. Each names the argument
it is about in ``param``, so that code that handles it (the command line, the
Dask backend) reads that attribute instead of the wording of the message.

This module imports nothing but the standard library, so that the command line
can catch the errors without importing numpy.
"""

from __future__ import annotations

__all__ = ["InputError", "InputTypeError", "reworded"]


class InputError(ValueError):
    """Raised for an argument with a bad value (a ``ValueError``).

    Parameters
    ----------
    message : str
        What is wrong, naming the argument (e.g. "`bins` must be a single
        positive integer; got 2.5.").
    param : str, optional
        The name of the argument the message is about (``"y"``, ``"weights"``,
        ``"bins"``), as the function's signature spells it.
    code : str, optional
        A short name of the rule broken, for the few callers that handle one
        rule differently: ``"zero_total"`` (weights whose total is 0; the Dask
        backend adds nothing for such a partition) and ``"row_sums"`` (rows of
        ``p`` that do not sum to 1; the command line names its own fix).

    Examples
    --------
    >>> import calibr
    >>> try:
    ...     calibr.ece([0.2, 0.8], [0, 1], bins=0)
    ... except calibr.InputError as err:
    ...     print(err.param)
    bins
    """

    def __init__(self, message: str = "", *, param: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.code = code


class InputTypeError(TypeError):
    """Raised for an argument of a type calibr does not accept (a ``TypeError``).

    Bad input to any public function of calibr raises :class:`InputError` or
    this; any other exception is a bug in calibr. ``param`` and ``code`` are
    those of :class:`InputError`.
    """

    def __init__(self, message: str = "", *, param: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.code = code


# Shown as calibr.InputError in tracebacks and doctests (the public name);
# pickle finds them there too (calibr resolves the name on first use), and
# restores param and code from the instance's __dict__.
InputError.__module__ = InputTypeError.__module__ = "calibr"


def reworded(err: BaseException, message: str, *, param: str | None = None) -> Exception:
    """``err`` with another message: the same type, and for calibr's errors the
    same ``code`` and ``param`` (or ``param``, where the caller renames the
    argument). An exception whose constructor takes other arguments becomes
    an :class:`InputTypeError` (for a ``TypeError``) or an :class:`InputError`.
    """
    if isinstance(err, (InputError, InputTypeError)):
        return type(err)(message, param=param or err.param, code=err.code)
    try:
        return type(err)(message)
    except Exception:  # noqa: BLE001 - an exception type with another constructor
        kind = InputTypeError if isinstance(err, TypeError) else InputError
        return kind(message, param=param)
