"""One name per idea (``docs/definitions.md``, "One name per idea"): each renamed
argument's old spelling still works, warns with a ``DeprecationWarning`` that names
the new one and points at the caller's line, gives the same numbers, and is an
error together with the new one."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import calibr
from calibr.table import wilson_interval

P = np.array([0.1, 0.3, 0.35, 0.6, 0.8, 0.9, 0.2, 0.55])
Y = np.array([0, 0, 1, 1, 1, 1, 0, 0])
FRAME = pd.DataFrame({"g": list("aabbaabb"), "p": P, "y": Y})

#: (function, the call with the new names, the old name -> the new name, its value)
RENAMED = [
    ("calibration_table", lambda **kw: calibr.calibration_table(P, Y, bins=3, **kw),
     "ci_level", "confidence_level", 0.9),
    ("wilson_interval", lambda **kw: wilson_interval([1.0, 3.0], [4.0, 5.0], **kw),
     "level", "confidence_level", 0.8),
    ("summarise", lambda **kw: calibr.summarise(FRAME.groupby("g"), "p", "y", rng=1,
                                                **{"confidence_level": 0.9, **kw}),
     "ci_resamples", "n_resamples", 30),
    ("summarise", lambda **kw: calibr.summarise(FRAME.groupby("g"), "p", "y", rng=1,
                                                **{"n_resamples": 30, **kw}),
     "ci", "confidence_level", 0.9),
]
IDS = [f"{f}-{old}" for f, _, old, _, _ in RENAMED]


def _same(a, b):
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    else:
        for x, z in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, z)


@pytest.mark.parametrize(("func", "call", "old", "new", "value"), RENAMED, ids=IDS)
def test_the_old_name_warns_and_gives_the_same_numbers(func, call, old, new, value):
    want = call(**{new: value})
    with pytest.warns(DeprecationWarning,
                      match=rf"^`{old}` is deprecated; use `{new}` \(renamed in calibr "
                            rf"{calibr.__version__}\)\.$") as seen:
        got = call(**{old: value})
    assert seen[0].filename == __file__  # the caller's line, not calibr's
    _same(got, want)


@pytest.mark.parametrize(("func", "call", "old", "new", "value"), RENAMED, ids=IDS)
def test_the_old_and_the_new_name_together_are_an_error(func, call, old, new, value):
    with pytest.raises(calibr.InputError,
                       match=rf"^`{old}` is the old name of `{new}`; give `{new}` only "
                             r"\(got both\)\.$") as err:
        call(**{old: value, new: value})
    assert err.value.param == new


def test_a_positional_new_name_with_the_old_keyword_is_an_error():
    with pytest.raises(calibr.InputError, match="old name of `confidence_level`"):
        wilson_interval([1.0], [4.0], 0.9, level=0.9)


def test_the_new_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _, call, _, new, value in RENAMED:
            call(**{new: value})


def test_signatures_show_only_the_new_names():
    import inspect

    for func, old, new in ((calibr.calibration_table, "ci_level", "confidence_level"),
                           (wilson_interval, "level", "confidence_level"),
                           (calibr.summarise, "ci", "confidence_level"),
                           (calibr.summarise, "ci_resamples", "n_resamples")):
        params = inspect.signature(func).parameters
        assert new in params and old not in params
        assert func.__calibr_renamed__[old] == new


def test_a_second_count_of_resamples_is_named_after_what_it_serves():
    """docs/definitions.md, "One name per idea": the count of resamples is
    ``n_resamples``; a function that draws two kinds (html_report: the bootstrap
    intervals and the consistency band) names the second ``<option>_resamples``
    after the option whose level it serves, and takes ``n_resamples`` too."""
    import inspect
    from pathlib import Path

    import calibr.plot

    functions = [getattr(calibr, n) for n in calibr.__all__
                 if callable(getattr(calibr, n)) and not isinstance(getattr(calibr, n), type)]
    functions.append(calibr.plot.reliability_diagram)
    seconds = []
    for fn in functions:
        params = inspect.signature(fn).parameters
        for name in params:
            if name.endswith("_resamples") and name != "n_resamples":
                what = name.removesuffix("_resamples")
                assert "n_resamples" in params and what in params, (fn.__name__, name)
                seconds.append(f"{fn.__name__}({what}=, {name}=)")
    assert seconds == ["html_report(consistency=, consistency_resamples=)"]
    table = (Path(__file__).resolve().parents[1] / "docs" / "definitions.md").read_text()
    assert "`html_report(consistency=, consistency_resamples=)`" in table


# --------------------------------------------------------------------------
# the command line


def _cli(capsys, *argv):
    from calibr.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("new", "old", "value", "command"), [
    ("--confidence-level", "--ci", "0.9", "report"),
    ("--n-resamples", "--ci-resamples", "30", "report"),
    ("--confidence-level", "--level", "0.9", "compare"),
])
def test_an_old_option_warns_and_gives_the_same_report(tmp_path, capsys, new, old, value,
                                                       command):
    path = tmp_path / "preds.csv"
    FRAME.assign(q=np.sqrt(P)).to_csv(path, index=False)
    if command == "report":
        base = ["report", str(path), "--by", "g", "-f", "csv", "--seed", "2"]
        base += [] if new == "--confidence-level" else ["--confidence-level", "0.9"]
        base += ["--n-resamples", "30"] if new == "--confidence-level" else []
    else:
        base = ["compare", str(path), "--p-baseline", "p", "--p-candidate", "q",
                "--n-resamples", "30", "-f", "csv"]
    code, want, err = _cli(capsys, *base, new, value)
    assert code in (0, 1) and err == ""
    code_old, got, err = _cli(capsys, *base, old, value)
    assert code_old == code
    assert got == want
    assert err == (f"calibr: warning: {old} is deprecated; use {new} (renamed in calibr "
                   f"{calibr.__version__}).\n")
    code, _, err = _cli(capsys, *base, old, value, new, value)
    assert code == 2
    assert err.endswith(f"calibr: error: {old} is the old name of {new}; give {new} only "
                        "(got both).\n")
    assert _cli(capsys, *base, new, value, old, value)[0] == 2


def test_the_old_options_are_not_in_the_help(capsys):
    code, out, _ = _cli(capsys, "report", "--help")
    assert code == 0 and "--confidence-level" in out and "--ci " not in out
    assert "--ci-resamples" not in out
    code, out, _ = _cli(capsys, "compare", "--help")
    assert code == 0 and "--confidence-level" in out and "--level" not in out
