"""Boundary cases of the input layer that survived ``scripts/mutate.py``.

Each test fails on a mutant the rest of the suite let through (the mutant is in
the test's docstring); together they pin where each limit lies, not only that
a limit exists.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import require

import calibr
from calibr import InputError

P3 = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])


def test_integers_are_shown_up_to_30_digits():
    """Mutant: the 30-digit limit of a shown integer moved to 31."""
    with pytest.raises(InputError, match=r"got 1(0){29}\.$"):
        calibr.ece([0.2, 0.4], [0, 1], bins=10**29)  # 30 digits: shown
    with pytest.raises(InputError, match=r"got an integer of 31 digits\.$"):
        calibr.ece([0.2, 0.4], [0, 1], bins=10**30)


def test_a_float_bins_of_exactly_one_is_one_bin():
    """Mutant: ``b >= 1`` changed to ``b > 1`` for float ``bins``."""
    assert calibr.ece([0.2, 0.4], [0, 1], bins=1.0) == calibr.ece([0.2, 0.4], [0, 1], bins=1)
    with pytest.raises(InputError, match="`bins` must be a single positive integer"):
        calibr.ece([0.2, 0.4], [0, 1], bins=0.999)


@pytest.mark.parametrize("k", [10, 11])
def test_ten_class_labels_are_listed_then_an_ellipsis(k):
    """Mutant: the number of labels listed in the message moved from 10 to 11."""
    cols = [f"c{i}" for i in range(k)]
    p = pd.DataFrame(np.full((2, k), 1 / k), columns=cols)
    listed = ", ".join(repr(c) for c in cols[:10]) + (", ..." if k > 10 else "")
    with pytest.raises(InputError, match=re.escape(f"one of the class labels ({listed});")):
        calibr.ece(p, ["c0", "zz"])


def test_codes_beyond_int64_keep_code_one_valid():
    """Mutant: ``1 <= v <= k`` changed to ``2 <= v <= k`` on the path for object
    integers too large for int64: only the huge code is wrong, not the 1."""
    with pytest.raises(InputError, match=r"1 value does not, the first at position 3 "
                                         r"\(an integer of 31 digits\)"):
        calibr.ece(P3, np.array([1, 2, 3, 10**30], dtype=object))


def test_the_smallest_allowed_integer_option_is_allowed():
    """Mutant: ``value < low`` changed to ``value <= low`` in the Integer rule."""
    require("matplotlib").use("Agg")
    from calibr.plot import reliability_diagram

    table = calibr.calibration_table([0.2, 0.6, 0.7], [0, 1, 1], bins=2)
    reliability_diagram(table, ncols=1)
    with pytest.raises(InputError, match=r"`ncols` must be a single positive integer; got 0\."):
        reliability_diagram(table, ncols=0)
