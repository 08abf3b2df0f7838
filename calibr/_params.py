"""Options declared once: a rule per parameter, checked by one decorator.

In the spirit of scikit-learn's ``validate_params``: a public function states
the rule of each of its options in a table,

    @validate_params(bins=BINS, type=Options("classwise", "confidence"), na_rm=FLAG)
    def ece(p, y, bins=10, type="classwise", *, classes=None, na_rm=False): ...

and the decorator checks the bound arguments in the order the table lists them,
replaces each by its canonical value (``bins=10.0`` becomes ``10``), and calls
the function. A rule is a callable ``rule(value, name) -> canonical value`` that
raises :class:`calibr.InputError` or :class:`calibr.InputTypeError` with a
message naming the parameter; the rules below are the ones calibr uses, and
their messages are pinned in the tests. The data arguments (``p``, ``y``,
``classes``) are not options: ``calibr._validation.prepare()`` checks them.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from ._validation import (
    InputError,
    InputTypeError,
    _fmt,
    _real_value,
    check_bandwidth,
    check_bins,
    check_choice,
    check_flag,
)

__all__ = [
    "BANDWIDTH",
    "BINS",
    "FLAG",
    "Integer",
    "LEVEL",
    "OPTIONAL_STRING",
    "Optional",
    "Options",
    "Rule",
    "check_options",
    "validate_params",
]

#: A rule: ``rule(value, name)`` returns the canonical value or raises.
Rule = Callable[[Any, str], Any]


class Options:
    """One of a fixed set of strings, the first being the default (R's
    ``match.arg`` without partial matching)."""

    def __init__(self, *choices: str) -> None:
        self.choices = tuple(choices)

    def __call__(self, value: Any, name: str) -> str:
        return check_choice(value, name, self.choices)

    def __repr__(self) -> str:
        return f"Options{self.choices!r}"


def _bins(value: Any, name: str) -> int:
    if name != "bins":  # the rule's messages name `bins`
        raise ValueError(f"the BINS rule is for `bins`, not `{name}`")
    return check_bins(value)


def _flag(value: Any, name: str) -> bool:
    return check_flag(value, name)


def _bandwidth(value: Any, name: str) -> float | str:
    if name != "bandwidth":
        raise ValueError(f"the BANDWIDTH rule is for `bandwidth`, not `{name}`")
    return check_bandwidth(value)


def _level(value: Any, name: str) -> float:
    """A real number strictly between 0 and 1 (a confidence level)."""
    real = None if isinstance(value, (bool, np.bool_)) else _real_value(value)
    if real is not None and math.isfinite(real) and 0.0 < real < 1.0:
        return real
    raise InputError(f"`{name}` must be a number strictly between 0 and 1; got {_fmt(value)}.")


class Integer:
    """An integer in ``[low, high]`` (not a bool; integral floats only if allowed)."""

    def __init__(self, low: int, high: int | None = None, *, integral_float: bool = False,
                 what: str | None = None) -> None:
        self.low, self.high, self.integral_float = low, high, integral_float
        self.what = what

    def __call__(self, value: Any, name: str) -> int:
        ok = False
        if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
            ok = True
        elif self.integral_float and not isinstance(value, (bool, np.bool_)):
            real = _real_value(value)
            ok = real is not None and math.isfinite(real) and real == math.floor(real)
        what = self.what or (
            f"an integer of at least {self.low:,}" if self.high is None
            else f"an integer from {self.low:,} to {self.high:,}"
        )
        if not ok:
            raise InputError(f"`{name}` must be {what}; got {_fmt(value)}.")
        out = int(value)
        if out < self.low or (self.high is not None and out > self.high):
            raise InputError(f"`{name}` must be {what}; got {_fmt(value)}.")
        return out

    def __repr__(self) -> str:
        return f"Integer({self.low}, {self.high})"


class Optional:
    """None (the default: the function decides), or a value that passes ``rule``."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule

    def __call__(self, value: Any, name: str) -> Any:
        return None if value is None else self.rule(value, name)

    def __repr__(self) -> str:
        return f"Optional({self.rule!r})"


def _optional_string(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InputTypeError(f"`{name}` must be a string or None; got {type(value).__name__}.")


#: ``bins``: a single positive integer (integral floats too, as R's ``10`` is a
#: double), at most ``MAX_BINS``.
BINS: Rule = _bins
#: A boolean option (``na_rm``, ...): True or False, numpy booleans too.
FLAG: Rule = _flag
#: ``bandwidth``: a positive finite number or ``"median"``.
BANDWIDTH: Rule = _bandwidth
#: A confidence level strictly between 0 and 1.
LEVEL: Rule = _level
#: A string or None (a title, a label); anything else is a TypeError.
OPTIONAL_STRING: Rule = _optional_string


def check_options(rules: dict[str, Rule], values: dict[str, Any]) -> dict[str, Any]:
    """Check ``values`` against ``rules`` in the order of ``rules``; return the
    canonical values (a new dict; names without a rule pass unchanged)."""
    out = dict(values)
    for name, rule in rules.items():
        if name in out:
            out[name] = rule(out[name], name)
    return out


def validate_params(**rules: Rule) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: check the named parameters of each call with their rules (in
    the order given here) and pass on their canonical values.

    The rules are recorded on the function as ``__calibr_rules__`` (the tests
    read them to check every option).

    Examples
    --------
    >>> from calibr._params import BINS, validate_params
    >>> @validate_params(bins=BINS)
    ... def nbins(bins=10):
    ...     return bins
    >>> nbins(5.0)
    5
    >>> nbins(2.5)
    Traceback (most recent call last):
    ...
    calibr._validation.InputError: `bins` must be a single positive integer; got 2.5.
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(func)
        unknown = [name for name in rules if name not in sig.parameters]
        if unknown:
            raise TypeError(f"{func.__qualname__} has no parameter {unknown[0]!r}")
        # positions of the ruled parameters that can be passed positionally
        positional = [
            name for name, prm in sig.parameters.items()
            if prm.kind in (prm.POSITIONAL_ONLY, prm.POSITIONAL_OR_KEYWORD)
        ]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if len(args) > len(positional):  # let Python raise its own TypeError
                return func(*args, **kwargs)
            args = list(args)
            for name, rule in rules.items():
                if name in kwargs:
                    kwargs[name] = rule(kwargs[name], name)
                    continue
                pos = positional.index(name) if name in positional else -1
                if 0 <= pos < len(args):
                    args[pos] = rule(args[pos], name)
                # not given: the default, valid by construction
            return func(*args, **kwargs)

        wrapper.__calibr_rules__ = dict(rules)  # type: ignore[attr-defined]
        return wrapper

    return decorate
