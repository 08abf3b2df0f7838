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
``classes``, ``weights``) are not options: :func:`calibr._input.prepare` checks them.

The bounds that several functions share live here too (``MAX_BINS``,
``MAX_BIN_CELLS``, ``MAX_RESAMPLES``), next to the rules that read them.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .errors import InputError, InputTypeError, arg
from .messages import fmt

__all__ = [
    "BANDWIDTH",
    "BINNING",
    "BINS",
    "BIN_SPEC",
    "FLAG",
    "Integer",
    "LEVEL",
    "MAX_BINS",
    "MAX_BIN_CELLS",
    "MAX_RESAMPLES",
    "OPTIONAL_STRING",
    "Optional",
    "Options",
    "RIGHT",
    "RNG",
    "Rule",
    "check_bandwidth",
    "check_bin_cells",
    "check_binning",
    "check_bins",
    "check_choice",
    "check_flag",
    "check_options",
    "defaults",
    "metric_value",
    "real_value",
    "resolved_options",
    "validate_params",
]

#: A rule: ``rule(value, name)`` returns the canonical value or raises.
Rule = Callable[[Any, str], Any]


# --------------------------------------------------------------------------
# scalar checks (the rules below use them; a few functions call them directly)


def real_value(value: Any) -> float | None:
    """``value`` as a float if it is a real number (not a bool), else None.

    Integers too large for a float become +-inf, so that a finiteness check
    refuses them instead of ``float()`` raising OverflowError.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):  # a Real subclass that cannot convert
        return None


def metric_value(value: Any, what: str = "`metric`", finite: bool = False,
                 param: str = "metric") -> float:
    """What a callable metric returned, as a float: a real number (a Python or
    numpy integer or float, or a 0-d array of one; NaN and, unless ``finite``,
    infinities are numbers too). None, booleans, complex numbers, strings and
    arrays of any other shape are refused: ``float()`` would raise on some and
    quietly read others (``"0.5"``, ``True``). ``what`` names the metric in the
    message, ``param`` the argument that gave it.
    """
    number = real_value(value[()] if isinstance(value, np.ndarray) and value.ndim == 0
                         else value)
    if number is None:
        raise InputError(
            f"{what} must return a real number (a float, an int or a numpy scalar); it "
            f"returned {fmt(value)} ({type(value).__name__}).",
            param=param,
        )
    if finite and math.isinf(number):
        raise InputError(
            f"{what} must return a finite number or NaN here (quantiles of infinite "
            f"values are undefined); it returned {fmt(value)}.",
            param=param,
        )
    return number


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (R's ``match.arg``, without
    partial matching), else raise.

    Examples
    --------
    >>> check_choice("confidence", "type", ("classwise", "confidence"))
    'confidence'
    """
    if isinstance(value, str) and value in choices:
        return str(value)
    options = ", ".join(repr(c) for c in choices)
    raise InputError(f"`{name}` must be one of {options}; got {fmt(value)}.", param=name)


def check_flag(value: Any, name: str) -> bool:
    """Return ``value`` as a bool if it is True or False (numpy booleans too)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"`{name}` must be True or False; got {fmt(value)}.", param=name)


#: Upper bound for ``bins``: the kernels keep per-bin sums (per class and per
#: thread), so a count in the billions would exhaust memory instead of failing
#: clearly. R has no such bound; no equal-width binning needs more.
MAX_BINS = 1_000_000

#: Upper bound for ``bins`` times the number of classes with their own bins
#: (K for ``type="classwise"``, 1 otherwise). The binned kernels keep three
#: float64 sums per bin and class, so this caps them at 240 MB, and the few
#: temporaries of that size that ece()/mce() and the table make, instead of
#: letting ``bins=10**6`` with 1,000 classes ask for 24 GB. Checked before
#: anything is allocated for the bins. R has no such bound.
MAX_BIN_CELLS = 10_000_000


def check_bins(bins: Any) -> int:
    """Return ``bins`` as an int if it is a single positive integer (at most ``MAX_BINS``).

    Integral floats (``10.0``) are accepted because R's ``bins = 10`` is a double;
    booleans, fractions, arrays and strings are not.
    """
    ok = False
    if isinstance(bins, numbers.Integral) and not isinstance(bins, (bool, np.bool_)):
        ok = int(bins) >= 1
    else:
        b = real_value(bins)
        ok = b is not None and math.isfinite(b) and b >= 1 and b == math.floor(b)
    if not ok:
        raise InputError(f"`bins` must be a single positive integer; got {fmt(bins)}.",
                         param="bins")
    value = int(bins)  # exact: an integer, or an integral finite float
    if value > MAX_BINS:
        raise InputError(
            f"`bins` must be a single positive integer no larger than {MAX_BINS:,}; "
            f"got {fmt(bins)}.",
            param="bins"
        )
    return value


def check_bin_cells(bins: int, k: int, classwise: bool, type: str = "classwise") -> None:
    """Raise unless ``bins`` times the classes with their own bins is at most
    ``MAX_BIN_CELLS``; call it before any per-bin array is allocated.

    The classwise form of a multiclass ``p`` and the top-label form keep one set of
    bins per class (``classwise=True``; ``type`` names the form in the message); the
    binary and confidence forms keep one set (bounded by ``MAX_BINS``).
    """
    if classwise and bins * k > MAX_BIN_CELLS:
        raise InputError(
            f"`bins` times the number of classes must be at most {MAX_BIN_CELLS:,} for "
            f'type = "{type}" (one set of bins per class); got bins = {bins:,} with '
            f"K = {k:,} classes ({bins * k:,} bins). Use fewer bins, or "
            'type = "confidence".',
            param="bins"
        )


def check_bandwidth(bandwidth: Any) -> float | str:
    """Return a positive finite bandwidth as float, or the string ``"median"``."""
    if isinstance(bandwidth, str):
        if bandwidth == "median":
            return "median"
    else:
        h = real_value(bandwidth)
        if h is not None and math.isfinite(h) and h > 0:
            return h
    raise InputError(
        f'`bandwidth` must be a positive finite number or "median"; got {fmt(bandwidth)}.',
        param="bandwidth"
    )


#: At most this many resamples (bootstraps, consistency resampling): a p-value
#: resolution of 1e-7 is past any use, and an accidental 10**12 would otherwise
#: run for days instead of being refused.
MAX_RESAMPLES = 10**7

_RNG_EXPECTED = "None, a nonnegative integer seed or a numpy.random.Generator"


def _rng(value: Any, name: str) -> Any:
    """``rng``: None, an integer seed >= 0 or a ``numpy.random.Generator`` (used as
    is, so its state advances, as in scipy)."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        if int(value) < 0:
            raise InputError(f"`{name}` must be {_RNG_EXPECTED}; got {fmt(value)}.", param=name)
        return int(value)
    raise InputTypeError(f"`{name}` must be {_RNG_EXPECTED}; got {type(value).__name__}.",
                         param=name)


# --------------------------------------------------------------------------
# rules


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


def _breaks(value: Any, name: str) -> np.ndarray:
    """Explicit breaks (R's ``cut(x, breaks = ...)``): a sequence of at least 2
    finite real numbers, strictly increasing, the first 0 and the last 1; returned
    as a new read-only float64 array.

    The messages say both readings of ``bins``: "`bins` must be a single positive
    integer; got [10]; as breaks (R's cut(x, breaks = ...)) it must hold at least
    2 values; it has 1."
    """
    head = (f"`{name}` must be a single positive integer; got {fmt(value)}; as breaks "
            "(R's cut(x, breaks = ...)) it must")
    arr = value if isinstance(value, np.ndarray) else np.asarray(
        value.to_numpy() if hasattr(value, "to_numpy") else list(value), dtype=object)
    if arr.ndim != 1:
        raise InputError(f"{head} be a 1-d sequence of numbers; it has {arr.ndim} dimensions.",
                         param=name)
    if arr.shape[0] > MAX_BINS + 1:
        raise InputError(f"{head} hold at most {MAX_BINS + 1:,} values (at most {MAX_BINS:,} "
                         f"bins); it has {arr.shape[0]:,}.", param=name)
    if arr.dtype.kind not in "iuf":
        for i, v in enumerate(arr.tolist()):
            if real_value(v) is None:
                raise InputTypeError(f"{head} be real numbers; the value at position {i} is "
                                     f"{fmt(v)}.", param=name)
        arr = np.array([real_value(v) for v in arr.tolist()], dtype=np.float64)
    out = np.array(arr, dtype=np.float64)
    if out.shape[0] < 2:
        raise InputError(f"{head} hold at least 2 values (one bin); it has {out.shape[0]}.",
                         param=name)
    bad = ~np.isfinite(out)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{head} be finite numbers; the value at position {i} is "
                         f"{fmt(out[i])}.", param=name)
    if out[0] != 0.0 or out[-1] != 1.0:
        raise InputError(f"{head} start at 0 and end at 1; it runs from {fmt(out[0])} to "
                         f"{fmt(out[-1])}.", param=name)
    down = np.flatnonzero(np.diff(out) <= 0)
    if down.shape[0]:
        i = int(down[0]) + 1
        raise InputError(f"{head} be strictly increasing (as R's cut() requires); the value "
                         f"at position {i} ({fmt(out[i])}) is not above the one before "
                         f"({fmt(out[i - 1])}).", param=name)
    out.flags.writeable = False
    return out


#: The rules of ``bins`` that choose the number of bins from the data
#: (``calibr._binning.sweep``): the monotonic sweep, the cube-root rule, and the sweep by
#: caltrain's rules.
BIN_RULES = ("sweep", "auto", "sweep-caltrain")
#: The rule of ``bins`` that reproduces google-research caltrain's ``em_ece_sweep`` /
#: ``ew_ece_sweep`` (``docs/definitions.md``, "Binning options").
CALTRAIN = BIN_RULES[2]


def _bin_spec(value: Any, name: str) -> int | str | np.ndarray:
    """``bins``: a number of bins (the BINS rule), explicit breaks (a list, tuple,
    range, 1-d array or pandas Series/Index; not a set, dict or iterator), or one of
    ``BIN_RULES``."""
    import pandas as pd

    from .frames import eager

    value = eager(value, name)  # torch, JAX, Arrow...: numpy by the input edge's rule
    if isinstance(value, str):
        if value in BIN_RULES:
            return value
        raise InputError(
            f"`{name}` must be a single positive integer; got {fmt(value)}. The strings it "
            "takes are 'sweep' (the monotonic sweep), 'auto' (the cube-root rule) and "
            "'sweep-caltrain' (the sweep as google-research caltrain computes it).",
            param=name
        )
    if isinstance(value, np.ndarray) and value.ndim > 0 or isinstance(
            value, (list, tuple, range, pd.Series, pd.Index)):
        return _breaks(value, name)
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes, np.ndarray)):
        raise InputTypeError(f"`{name}` must be a single positive integer or a sorted "
                             "sequence of breaks from 0 to 1 (a list, tuple or array); got a "
                             f"{type(value).__name__}.", param=name)
    return _bins(value, name)


def _right(value: Any, name: str) -> bool:
    return check_flag(value, name)


def check_binning(bins: int | np.ndarray, binning: str) -> None:
    """``binning`` applies to a number of bins: explicit breaks are their own bins."""
    if not isinstance(bins, int) and binning != "equal-width":
        raise InputError(
            f"`binning` must be 'equal-width' (the default) when {arg('bins')} gives the breaks; "

            f"got {binning!r} with {bins.shape[0]} breaks. Pass a number of bins for "
            "equal-mass bins.",
            param="binning"
        )


def _flag(value: Any, name: str) -> bool:
    return check_flag(value, name)


def _bandwidth(value: Any, name: str) -> float | str:
    if name != "bandwidth":
        raise ValueError(f"the BANDWIDTH rule is for `bandwidth`, not `{name}`")
    return check_bandwidth(value)


def _level(value: Any, name: str) -> float:
    """A real number strictly between 0 and 1 (a confidence level)."""
    real = None if isinstance(value, (bool, np.bool_)) else real_value(value)
    if real is not None and math.isfinite(real) and 0.0 < real < 1.0:
        return real
    raise InputError(f"`{name}` must be a number strictly between 0 and 1; got {fmt(value)}.",
                     param=name)


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
            real = real_value(value)
            ok = real is not None and math.isfinite(real) and real == math.floor(real)
        what = self.what or (
            f"an integer of at least {self.low:,}" if self.high is None
            else f"an integer from {self.low:,} to {self.high:,}"
        )
        if not ok:
            raise InputError(f"`{name}` must be {what}; got {fmt(value)}.", param=name)
        out = int(value)
        if out < self.low or (self.high is not None and out > self.high):
            raise InputError(f"`{name}` must be {what}; got {fmt(value)}.", param=name)
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
    raise InputTypeError(f"`{name}` must be a string or None; got {type(value).__name__}.",
                         param=name)


#: ``bins``: a single positive integer (integral floats too, as R's ``10`` is a
#: double), at most ``MAX_BINS``.
BINS: Rule = _bins
#: ``bins`` of the binned metrics: a number of bins (as BINS), explicit breaks
#: (R's ``cut(x, breaks = ...)``), a sequence from 0 to 1, strictly increasing, or
#: ``"sweep"`` / ``"auto"`` (the number chosen from the data: ``calibr._binning.sweep``).
BIN_SPEC: Rule = _bin_spec
#: ``binning``: R's equal-width bins (the default), equal-mass bins, or the blocks
#: of the isotonic fit of the outcomes (``docs/definitions.md``, "Binning options").
BINNING: Rule = Options("equal-width", "equal-mass", "isotonic")
#: ``right``: bins closed on the right (R's ``cut(right = TRUE)``, the default) or left.
RIGHT: Rule = _right
#: A boolean option (``na_rm``, ...): True or False, numpy booleans too.
FLAG: Rule = _flag
#: ``bandwidth``: a positive finite number or ``"median"``.
BANDWIDTH: Rule = _bandwidth
#: A confidence level strictly between 0 and 1.
LEVEL: Rule = _level
#: A string or None (a title, a label); anything else is a TypeError.
OPTIONAL_STRING: Rule = _optional_string
#: ``rng``: None, a nonnegative integer seed or a ``numpy.random.Generator``.
RNG: Rule = _rng


def check_options(rules: dict[str, Rule], values: dict[str, Any]) -> dict[str, Any]:
    """Check ``values`` against ``rules`` in the order of ``rules``; return the
    canonical values (a new dict; names without a rule pass unchanged)."""
    out = dict(values)
    for name, rule in rules.items():
        if name in out:
            out[name] = rule(out[name], name)
    return out


def defaults(func: Callable[..., Any]) -> dict[str, Any]:
    """The default of each parameter of ``func`` that has one, read from its
    signature (through ``validate_params``' wrapper): the one place a default is
    written; code that needs a function's default reads it here instead of
    restating it.

    Examples
    --------
    >>> from calibr._input import defaults
    >>> def f(p, y, bins=10, *, right=True):
    ...     pass
    >>> defaults(f)
    {'bins': 10, 'right': True}
    """
    return {name: prm.default for name, prm in inspect.signature(func).parameters.items()
            if prm.default is not prm.empty}


def resolved_options(func: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """What a call ``func(p, y, **options)`` uses: ``func``'s defaults, overridden by
    ``options`` checked by its rules (``__calibr_rules__``; canonical values)."""
    out = defaults(func)
    out.update(check_options(getattr(func, "__calibr_rules__", {}), options))
    return out


def _collect_lazy(name: str, positional: list[str], args: list, kwargs: dict) -> None:
    """A lazy source as ``p`` of a function that its engine does not compute
    (``docs/engines.md``, "The rule"): ``p``, ``y`` and ``weights`` become the
    collected columns (in place), when the source has at most the engine's
    collect limit of rows; the engine refuses above it. Functions the engine
    computes itself (``ece``, ``mce``, ...) and Dask collections pass unchanged."""
    from .backends import lazy_backend

    def get(arg: str) -> Any:
        pos = positional.index(arg) if arg in positional else -1
        return args[pos] if 0 <= pos < len(args) else kwargs.get(arg)

    def put(arg: str, value: Any) -> None:
        pos = positional.index(arg) if arg in positional else -1
        if 0 <= pos < len(args):
            args[pos] = value
        else:
            kwargs[arg] = value

    backend = lazy_backend(get("p"))
    if backend is None or not hasattr(backend, "collect_arguments") or hasattr(backend, name):
        return
    p, y, weights = backend.collect_arguments(get("p"), get("y"), get("weights"),
                                              f"calibr.{name}")
    put("p", p)
    put("y", y)
    if weights is not None:
        put("weights", weights)


def validate_params(**rules: Rule) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: check the named parameters of each call with their rules (in
    the order given here) and pass on their canonical values.

    The rules are recorded on the function as ``__calibr_rules__`` (the tests
    read them to check every option).

    Examples
    --------
    >>> from calibr._input import BINS, validate_params
    >>> @validate_params(bins=BINS)
    ... def nbins(bins=10):
    ...     return bins
    >>> nbins(5.0)
    5
    >>> nbins(2.5)
    Traceback (most recent call last):
    ...
    calibr.InputError: `bins` must be a single positive integer; got 2.5.
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
            if "p" in positional:
                _collect_lazy(func.__name__, positional, args, kwargs)
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
