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

import contextlib
import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Iterator

__all__ = ["RENAMED_SINCE", "Counted", "CountedRuntimeWarning", "CountedWarning",
           "GroupWarnings", "renamed", "warn"]

#: calibr's directory with a trailing separator, spelled as the code objects of
#: its modules spell their files (all imported from the same path entry).
_CALIBR_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "")


class Counted(Warning):
    """A warning about some ``count`` units of the data (``unit``: ``("row",
    "rows")``, ``("resample", "resamples")``) that do what ``what`` says,
    ``(singular, plural)`` phrases ("gives its ...", "give their ...").
    Raised as :class:`CountedWarning` (a ``UserWarning``) or
    :class:`CountedRuntimeWarning` (a ``RuntimeWarning``).

    A verb that runs a metric group by group (``summarise()``) gathers these
    (:class:`GroupWarnings`) instead of passing on one per group, and warns once
    per metric and unit with the count and the groups, as it does for a metric
    undefined on some groups (``docs/definitions.md``, "Log loss").

    Examples
    --------
    >>> from calibr._input.warning import CountedWarning
    >>> w = CountedWarning("f: 2 rows ...", count=2, what=("is odd", "are odd"))
    >>> w.count, w.unit, str(w), isinstance(w, UserWarning)
    (2, ('row', 'rows'), 'f: 2 rows ...', True)
    """

    def __init__(self, message: str, *, count: int, what: tuple[str, str],
                 unit: tuple[str, str] = ("row", "rows")) -> None:
        super().__init__(message)
        self.count = count
        self.what = what
        self.unit = unit


class CountedWarning(Counted, UserWarning):
    """A :class:`Counted` ``UserWarning``."""


class CountedRuntimeWarning(Counted, RuntimeWarning):
    """A :class:`Counted` ``RuntimeWarning``."""


class GroupWarnings:
    """What metrics run group by group say about some of the groups, said once per
    metric (``summarise()``): the groups where a metric is undefined
    (:meth:`undefined`; NaN there) and the :class:`Counted` warnings of a metric
    (:meth:`gathering`), added over the groups, with the groups named (at most
    :data:`GroupWarnings.SHOWN`, then their count)."""

    SHOWN = 5

    def __init__(self) -> None:
        self._undefined: dict[str, list[int]] = {}
        self._counted: dict[tuple[str, tuple[str, str]], list[tuple[int, Counted]]] = {}

    def undefined(self, name: str, g: int) -> None:
        """The metric ``name`` is undefined on group ``g``."""
        self._undefined.setdefault(name, []).append(g)

    @contextlib.contextmanager
    def gathering(self, name: str, g: int, units: tuple[str, ...] | None = None
                  ) -> Iterator[None]:
        """Run the metric ``name`` on group ``g``: its :class:`Counted` warnings (of
        ``units``, plural; default all) are kept for :meth:`warn`, the others of
        that class dropped (said elsewhere); any other warning passes on as it
        came."""
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            yield
        for w in seen:
            if isinstance(w.message, Counted):
                if units is None or w.message.unit[1] in units:
                    self._counted.setdefault((name, w.message.unit), []).append(
                        (g, w.message))
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno,
                                       source=w.source)

    def warn(self, describe: Callable[[int], str], verb: str = "summarise") -> None:
        """One warning per metric (and unit), naming the groups (``describe(g)``;
        "all rows" for the one group of an ungrouped frame)."""
        def named(items: list[tuple[int, str]]) -> str:
            shown = "; ".join((describe(g) or "all rows") + extra
                              for g, extra in items[:self.SHOWN])
            more = len(items) - self.SHOWN
            return shown + (f" and {more:,} more" if more > 0 else "")

        for name, gs in self._undefined.items():
            groups, get = ("group", "gets") if len(gs) == 1 else ("groups", "get")
            warn(f"{verb}: the metric {name!r} is undefined on {len(gs):,} {groups} (e.g. "
                 f"one class only), which {get} NaN: {named([(g, '') for g in gs])}.",
                 RuntimeWarning)
        for (name, unit), seen in self._counted.items():
            total = sum(w.count for _, w in seen)
            groups = "group" if len(seen) == 1 else "groups"
            first = seen[0][1]
            warn(type(first)(  # the category of the metric's own warning
                f"{verb}: the metric {name!r}: {total:,} {unit[total != 1]} in "
                f"{len(seen):,} {groups} {first.what[total != 1]}: "
                f"{named([(g, f' ({w.count:,})') for g, w in seen])}.",
                count=total, what=first.what, unit=unit))


def warn(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` pointing at the first frame outside
    calibr (the line of the user's code that called calibr). A ``Warning``
    instance as ``message`` is its own category."""
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
