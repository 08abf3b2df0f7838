"""The pieces of the HTML report's text: escaping, the words for the bins,
numbers as the report shows them (each inside ``<data value="...">`` with every
digit, so that a reader's tool, and the tests, can read the exact number behind
what is shown), and the Holm adjustment of the tests' p-values over the groups."""

from __future__ import annotations

import html
import math
import re
from typing import Any

import numpy as np

#: Significant digits of the numbers shown (the terminal report's, ``calibr.cli._render``).
DIGITS = 4

#: An analytic p-value below this (the machine epsilon) is shown as "< 2.2e-16",
#: as R prints a test and as the terminal report does.
PVALUE_FLOOR = float(np.finfo(np.float64).eps)


#: The characters an HTML page cannot carry as text: the C0 controls but tab, line
#: feed and form feed (a carriage return is read as a line feed), DEL and the C1
#: controls, the noncharacters (U+FDD0 to U+FDEF, and the last two code points of
#: every plane), and lone surrogates (which UTF-8 cannot encode).
_UNCARRIED = re.compile("[\x00-\x08\x0b\x0d-\x1f\x7f-\x9f\ufdd0-\ufdef\ud800-\udfff"
                        + "".join(chr(plane + 0xFFFE) + chr(plane + 0xFFFF)
                                  for plane in range(0, 0x110000, 0x10000)) + "]")


def _visible(match: re.Match) -> str:
    """A character the page cannot carry, as Python writes it in a string."""
    code = ord(match.group())
    return (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF
            else f"\\U{code:08x}")


def esc(value: Any) -> str:
    """``value`` as text safe in HTML content and in quoted attributes: markup
    characters escaped, and each character the page cannot carry (a NUL, another
    control character, a noncharacter, a lone surrogate) written as Python writes
    it in a string, ``\\x00``, so that it shows and the file stays valid UTF-8.
    Every text of the page goes through here (``docs/cli.md``, "The HTML report")."""
    return html.escape(_UNCARRIED.sub(_visible, str(value)), quote=True)


def key_text(value: Any) -> str:
    """A group key as the report shows it (a missing key as "(missing)")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "(missing)"
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return "(missing)"
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return str(value)


def number_text(v: float) -> str:
    """``v`` to DIGITS significant digits, trailing zeros dropped (0.0186, 0.2, 1):
    fixed point from 1e-4 to 1e6, else scientific (1.5e-05)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    exponent = math.floor(math.log10(abs(v)))
    rounded = float(f"{v:.{DIGITS - 1}e}")  # the exponent after rounding (0.99995 -> 1.000)
    if rounded != 0:
        exponent = math.floor(math.log10(abs(rounded)))
    if -4 <= exponent < 6:
        text = f"{v:.{max(0, DIGITS - 1 - exponent)}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, power = f"{v:.{DIGITS - 1}e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{power}"


def num(v: Any, cls: str = "") -> str:
    """A number for the page: ``<data value="repr">shown</data>``."""
    v = float(v)
    attr = f' class="{cls}"' if cls else ""
    return f'<data value="{esc(repr(v))}"{attr}>{esc(number_text(v))}</data>'


def count(v: Any) -> str:
    """A count (rows, or a total weight) as it is, integers without decimals."""
    v = float(v)
    shown = str(int(v)) if v.is_integer() else number_text(v)
    return f'<data value="{esc(repr(v))}">{esc(shown)}</data>'


def pvalue(v: Any, n_resamples: int | None, *, bound: bool = False) -> str:
    """A p-value: as other numbers, except one below the resolution, ``< 1/B`` for
    a p-value from B resamples and ``< 2.2e-16`` for an analytic one; ``bound``: the
    value is an upper bound (the adjusted value of a p-value below its resolution),
    ``< value`` (a bound of 1 says nothing: shown as 1)."""
    v = float(v)
    if bound and v < 1.0:
        return f'<data value="{esc(repr(v))}">&lt; {esc(number_text(v))}</data>'
    floor = PVALUE_FLOOR if n_resamples is None else 1.0 / n_resamples
    if v < floor:
        text = "2.2e-16" if n_resamples is None else f"{floor:.{DIGITS}g}"
        return f'<data value="{esc(repr(v))}">&lt; {esc(text)}</data>'
    return num(v)


def pvalue_at_resolution(v: Any, n_resamples: int | None) -> float:
    """The value a p-value is read as (bold, "worse"): one below the resolution
    ``1 / n_resamples`` as the resolution itself (``docs/calibration_tests.md``,
    "Resolution of a resampled p-value"); an analytic one (None) as it is."""
    v = float(v)
    return v if n_resamples is None else max(v, 1.0 / n_resamples)


def bins_words(bins: Any, binning: str, right: bool) -> str:
    """The header's words for the bins, e.g. "10 equal-width bins on [0, 1], closed on
    the right ((a, b], 0 in the first bin)": a number, breaks, or a rule that chooses
    the number from the data (``"sweep"``, ``"auto"``, ``docs/definitions.md``)."""
    if isinstance(bins, str):  # a rule that chooses each group's number from its data
        what = {"sweep": "the monotonic sweep's number of bins (the largest number whose "
                         "observed frequencies still rise with the predictions)",
                "auto": "the cube-root rule's number of bins (the cube root of the rows, "
                        "rounded up)"}[bins]
        what += f", {binning}, chosen from each group's and class's own data"
    elif isinstance(bins, (int, np.integer)):
        what = f"{int(bins)} {binning} bins" + (" on [0, 1]" if binning == "equal-width" else
                                                 " (each group's and class's own breaks)")
    else:
        what = "the breaks " + ", ".join(f"{float(b):g}" for b in np.asarray(bins).ravel())
    side = ("closed on the right, (a, b] with 0 in the first bin" if right
            else "closed on the left, [a, b) with 1 in the last bin")
    return f"{what}; {side}"
