"""Warnings that point at the caller's line: the first frame outside calibr.

``warnings.warn(msg, stacklevel=N)`` needs N counted by hand for each call
path, and one path through a wrapper (``validate_params``), a verb
(``summarise()`` running a test) or the pytest plugin makes the count wrong.
:func:`warn` walks the stack instead: the frames of files in calibr's
directory are calibr's own (every module, the wrappers of the rules, the
pytest plugin, whose helpers a test calls as it calls a metric), and the
warning names the first frame above them. A doctest of calibr's runs from a
``<doctest ...>`` file, outside calibr, so its warnings name its example.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings

__all__ = ["RENAMED_SINCE", "renamed", "warn"]

#: calibr's directory with a trailing separator, spelled as the code objects of
#: its modules spell their files (all imported from the same path entry).
_CALIBR_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "")


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` pointing at the first frame outside
    calibr (the line of the user's code that called calibr)."""
    frame = sys._getframe(1)  # the caller, in calibr
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_CALIBR_DIR):
        frame = frame.f_back
        level += 1
    if frame is None:  # no frame outside calibr: the outermost
        level -= 1
    warnings.warn(message, category, stacklevel=level)


#: The calibr version in which each old spelling of an argument was renamed
#: (``docs/definitions.md``, "One name per idea").
RENAMED_SINCE = "0.1.0"


def renamed(**old_to_new: str):
    """Decorator: keyword arguments renamed, their old names still accepted.

    A call with an old name warns (a ``DeprecationWarning`` that names the new one,
    pointing at the caller's line, :func:`warn`) and passes the value on under the
    new name; a call that gives both is an ``InputError`` (``param`` the new name).
    The wrapped function's signature is the new one (``inspect.signature`` follows
    ``__wrapped__``), so the old names appear nowhere else.

    Examples
    --------
    >>> import warnings
    >>> from calibr._input.warning import renamed
    >>> @renamed(level="confidence_level")
    ... def f(*, confidence_level=0.95):
    ...     return confidence_level
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     f(level=0.9)
    0.9
    >>> print(seen[0].message)
    `level` is deprecated; use `confidence_level` (renamed in calibr 0.1.0).
    """
    def decorate(func):
        sig = inspect.signature(func)
        positional = [n for n, prm in sig.parameters.items()
                      if prm.kind in (prm.POSITIONAL_ONLY, prm.POSITIONAL_OR_KEYWORD)]

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in old_to_new.items():
                if old not in kwargs:
                    continue
                if new in kwargs or new in positional[:len(args)]:
                    from .errors import InputError, arg

                    raise InputError(
                        f"{arg(old)} is the old name of {arg(new)}; give {arg(new, 'use')} "
                        "only (got both).", param=new)

                warn(f"`{old}` is deprecated; use `{new}` (renamed in calibr "
                     f"{RENAMED_SINCE}).", DeprecationWarning)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__calibr_renamed__ = dict(old_to_new)
        return wrapper

    return decorate
