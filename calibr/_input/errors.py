"""The two exceptions of bad input: :class:`InputError` (a bad value) and
:class:`InputTypeError` (a kind of object calibr does not read).

Bad input to any public function of calibr raises one of them, and nothing
else escapes; any other exception is a bug in calibr. This module imports
nothing but the standard library, so that the command line can catch them
without importing numpy.
"""

from __future__ import annotations

__all__ = ["InputError", "InputTypeError"]


class InputError(ValueError):
    """Raised for an argument with a bad value (a ``ValueError``)."""


class InputTypeError(TypeError):
    """Raised for an argument of a type calibr does not accept (a ``TypeError``).

    Bad input to any public function of calibr raises :class:`InputError` or
    this; any other exception is a bug in calibr.
    """


# Shown as calibr.InputError in tracebacks and doctests (the public name);
# pickle finds them there too (calibr resolves the name on first use).
InputError.__module__ = InputTypeError.__module__ = "calibr"
