"""The input layer (calibr._input): conversions, labels, and every error, pinned."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import require

import calibr
from calibr._input import (
    BANDWIDTH,
    BINS,
    LEVEL,
    InputError,
    InputTypeError,
    Integer,
    Options,
    check_bandwidth,
    check_bins,
    check_choice,
    check_options,
    prepare,
    validate_params,
)

P3 = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])


# ----------------------------------------------------------------- conversions


@pytest.mark.parametrize(
    "p",
    [
        [0.1, 0.9, 0.5],
        np.array([0.1, 0.9, 0.5]),
        pd.Series([0.1, 0.9, 0.5]),
        pd.Series([0.1, 0.9, 0.5], dtype="Float64"),
    ],
)
def test_binary_p_forms(p):
    prep = prepare(p, [0, 1, 1])
    assert prep.binary and prep.k == 1 and prep.n == 3
    assert prep.p.dtype == np.float64
    np.testing.assert_array_equal(prep.p, [0.1, 0.9, 0.5])


def test_prepare_keeps_missing_values_an_error_by_default():
    """prepare() drops rows with missing values only when told (na_rm=False by default,
    as every public function's na_rm)."""
    with pytest.raises(InputError, match=r"^`p` must not contain missing values; 1 value is "
                                         r"missing, the first at position 1\."):
        prepare([0.1, np.nan, 0.5], [0, 1, 1])


@pytest.mark.parametrize(
    "y",
    [
        [0, 1, 1],
        [False, True, True],
        np.array([0.0, 1.0, 1.0]),
        np.array([0, 1, 1], dtype=np.uint8),
        pd.Series([0, 1, 1], dtype="Int64"),
        pd.Series([False, True, True], dtype="boolean"),
        pd.Categorical([0, 1, 1]),
        np.array([0, 1, 1], dtype=object),
    ],
)
def test_binary_y_forms(y):
    prep = prepare([0.1, 0.9, 0.5], y)
    np.testing.assert_array_equal(np.asarray(prep.y, dtype=float), [0, 1, 1])


@pytest.mark.parametrize(
    "p",
    [
        [0, 1, 1],
        np.array([0, 1, 1]),
        np.array([0, 1, 1], dtype=np.uint8),
        np.array([0, 1, 1], dtype=">i2"),
        pd.Series([0, 1, 1], dtype="Int64"),
    ],
    ids=["list", "int64", "uint8", "big-endian", "Int64"],
)
def test_integer_probabilities_are_read_as_floats(p):
    """0 and 1 of an integer dtype are probabilities (R: a numeric vector)."""
    prep = prepare(p, [0, 1, 0])
    assert prep.p.dtype == np.float64
    np.testing.assert_array_equal(prep.p, [0.0, 1.0, 1.0])
    # bins 1 (0 right) and 10 (two at 1, one right): |0.5 - 1| * 2/3
    assert calibr.ece(p, [0, 1, 0]) == calibr.ece([0.0, 1.0, 1.0], [0, 1, 0]) == 1 / 3
    assert calibr.skce(p, [0, 1, 0]) == calibr.skce([0.0, 1.0, 1.0], [0, 1, 0])
    onehot = np.array([[1, 0], [0, 1], [1, 0]])
    assert calibr.ece(onehot, [1, 2, 2]) == calibr.ece(onehot.astype(float), [1, 2, 2]) == 1 / 3


@pytest.mark.parametrize(
    "y",
    [
        np.array([False, True, False], dtype=object),
        np.array([np.False_, np.True_, np.False_], dtype=object),
        np.array([0.0, 1.0, 0.0], dtype=object),
        np.array([0, True, 0.0], dtype=object),
        pd.Series([False, True, False], dtype=object),
    ],
    ids=["bools", "numpy-bools", "floats", "mixed", "Series"],
)
def test_object_labels_of_booleans_and_floats(y):
    """Object arrays of booleans or of 0.0/1.0 (e.g. from a nullable or mixed column)
    are binary labels, with the numbers of the same labels as integers."""
    p = [0.2, 0.7, 0.4]
    np.testing.assert_array_equal(np.asarray(prepare(p, y).y, dtype=float), [0, 1, 0])
    for metric in (calibr.ece, calibr.mce, calibr.skce, calibr.mmce):
        assert metric(p, y) == metric(p, [0, 1, 0]), metric.__name__
    missing = pd.Series([False, True, None, False], dtype=object)
    assert calibr.ece([0.2, 0.7, 0.5, 0.4], missing, na_rm=True) == calibr.ece(
        [0.2, 0.7, 0.4], [0, 1, 0])


def test_object_labels_that_are_not_zero_or_one():
    with pytest.raises(InputError, match=r"^`y` must be 0/1 or boolean for a vector `p`; 1 value "
                       r"does not, the first at position 2 \(2\.0\)\. Pass "
                       r"classes=\(negative, positive\) to name other labels\.$"):
        calibr.ece([0.2, 0.7, 0.4], np.array([0, True, 2.0], dtype=object))
    with pytest.raises(InputError, match=r"^`y` must be 0/1 or boolean for a vector `p`; 1 value "
                       r"does not, the first at position 1 \(0\.5\)\.$"):
        calibr.ece([0.2, 0.7, 0.4], np.array([0.0, 0.5, 1.0], dtype=object))
    assert calibr.ece(P3, np.array([1.0, 2.0, 3.0, 3.0], dtype=object)) == calibr.ece(
        P3, [1, 2, 3, 3])


def test_binary_classes_names_negative_and_positive():
    prep = prepare([0.1, 0.9, 0.5], ["no", "yes", "yes"], classes=("no", "yes"))
    np.testing.assert_array_equal(prep.y, [0, 1, 1])
    assert calibr.ece([0.1, 0.9, 0.5], ["no", "yes", "yes"], classes=("no", "yes")) == (
        calibr.ece([0.1, 0.9, 0.5], [0, 1, 1])
    )


def test_multiclass_codes_are_one_based():
    prep = prepare(P3, [1, 2, 3, 3])
    np.testing.assert_array_equal(prep.y, [0, 1, 2, 2])
    assert prep.classes == (1, 2, 3)
    assert prep.p.flags.c_contiguous


def test_multiclass_integral_float_codes():
    np.testing.assert_array_equal(prepare(P3, [1.0, 2.0, 3.0, 3.0]).y, [0, 1, 2, 2])


def test_multiclass_classes_keyword_for_zero_based_labels():
    np.testing.assert_array_equal(prepare(P3, [0, 1, 2, 2], classes=range(3)).y, [0, 1, 2, 2])
    prep = prepare(P3, ["a", "b", "c", "c"], classes=["a", "b", "c"])
    np.testing.assert_array_equal(prep.y, [0, 1, 2, 2])
    assert prep.classes == ("a", "b", "c")


def test_categorical_categories_are_the_columns_in_order():
    y = pd.Categorical(["x", "y", "z", "z"], categories=["x", "y", "z"])
    np.testing.assert_array_equal(prepare(P3, y).y, [0, 1, 2, 2])
    # the category order, not the order of appearance, decides the column
    y2 = pd.Categorical(["z", "y", "x", "x"], categories=["z", "y", "x"])
    np.testing.assert_array_equal(prepare(P3, y2).y, [0, 1, 2, 2])
    # a Series of category dtype is the same
    np.testing.assert_array_equal(prepare(P3, pd.Series(y)).y, [0, 1, 2, 2])


def test_dataframe_columns_are_the_class_labels():
    df = pd.DataFrame(P3, columns=["cat", "dog", "eel"])
    prep = prepare(df, ["cat", "dog", "eel", "eel"])
    np.testing.assert_array_equal(prep.y, [0, 1, 2, 2])
    assert prep.classes == ("cat", "dog", "eel")
    # a Categorical with the same categories in another order is matched by name
    y = pd.Categorical(["cat", "dog", "eel", "eel"], categories=["eel", "dog", "cat"])
    np.testing.assert_array_equal(prepare(df, y).y, [0, 1, 2, 2])


def test_dataframe_and_matrix_give_the_same_number():
    df = pd.DataFrame(P3, columns=["a", "b", "c"])
    y = ["a", "b", "c", "c"]
    for type_ in ("classwise", "confidence"):
        assert calibr.ece(df, y, bins=3, type=type_) == calibr.ece(P3, [1, 2, 3, 3], bins=3,
                                                                     type=type_)


def test_inputs_are_not_modified():
    p = np.array([0.1, np.nan, 0.9, 0.4])
    y = pd.Series([0, 1, 1, None], dtype="Int64")
    p_before, y_before = p.copy(), y.copy()
    calibr.ece(p, y, na_rm=True)
    np.testing.assert_array_equal(p, p_before)
    pd.testing.assert_series_equal(y, y_before)
    df = pd.DataFrame(P3, columns=["a", "b", "c"])
    df_before = df.copy()
    calibr.mce(df, ["a", "b", "c", "c"])
    pd.testing.assert_frame_equal(df, df_before)


def test_na_rm_drops_incomplete_rows():
    p = np.array([0.1, np.nan, 0.9, 0.4, 0.6])
    y = pd.Series([0, 1, 1, None, 1], dtype="Int64")
    prep = prepare(p, y, na_rm=True)
    np.testing.assert_array_equal(prep.p, [0.1, 0.9, 0.6])
    assert calibr.ece(p, y, na_rm=True) == calibr.ece([0.1, 0.9, 0.6], [0, 1, 1])
    # multiclass: a NaN anywhere in the row drops it; a missing factor level too
    P = P3.copy()
    P[1, 2] = np.nan
    y = pd.Categorical(["a", "b", None, "c"], categories=["a", "b", "c"])
    prep = prepare(P, y, na_rm=True)
    np.testing.assert_array_equal(prep.p, P3[[0, 3]])
    np.testing.assert_array_equal(prep.y, [0, 2])


# ----------------------------------------------------------------- errors, pinned

ERRORS = [
    # (p, y, kwargs, exception, message regex)
    ([0.1, 1.2, 0.5, 1.5], [0, 1, 1, 0], {}, InputError,
     r"^`p` must lie in \[0, 1\]; 2 values do not, the first at position 1 \(1\.2\)\.$"),
    ([0.1, -0.2], [0, 1], {}, InputError,
     r"^`p` must lie in \[0, 1\]; 1 value does not, the first at position 1 \(-0\.2\)\.$"),
    ([0.1, np.inf], [0, 1], {}, InputError,
     r"^`p` must be finite; 1 value does not, the first at position 1 \(inf\)\.$"),
    ([0.1, -np.inf, np.inf], [0, 1, 0], {}, InputError,
     r"^`p` must be finite; 2 values do not, the first at position 1 \(-inf\)\.$"),
    ([0.1, np.nan, 0.3, np.nan], [0, 1, 1, 0], {}, InputError,
     r"^`p` must not contain missing values; 2 values are missing, the first at position 1\. "
     r"Pass na_rm=True to drop incomplete observations\.$"),
    ([0.1, 0.3], pd.Series([0, None], dtype="Int64"), {}, InputError,
     r"^`y` must not contain missing values; 1 value is missing, the first at position 1\. "
     r"Pass na_rm=True to drop incomplete observations\.$"),
    ([0.1, np.nan], [0, 1], {"na_rm": "yes"}, InputError,
     r"^`na_rm` must be True or False; got 'yes'\.$"),
    ([np.nan, np.nan], [0, 1], {"na_rm": True}, InputError,
     r"^`p` and `y` have no complete observations: na_rm=True dropped all 2\.$"),
    ([0.1, 0.2, 0.3], [0, 1], {}, InputError,
     r"^`p` and `y` must have the same length; got 3 and 2\.$"),
    ([], [], {}, InputError, r"^`p` and `y` must not be empty; got 0 observations\.$"),
    (0.5, [1], {}, InputError, r"^`p` must be a vector or a matrix; got a scalar\.$"),
    (np.zeros((2, 2, 2)), [1, 1], {}, InputError,
     r"^`p` must be a vector or a matrix; got an array of shape \(2, 2, 2\)\.$"),
    # a refused value is shown with its position (row and column for a matrix)
    (["a", "b"], [0, 1], {}, TypeError,
     r"^`p` must hold real numbers; 2 values are not, the first at position 0 \('a' of type "
     r"str\)\.$"),
    ([True, False], [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype bool, the first value at position 0 "
     r"\(True\)\.$"),
    (pd.DataFrame({"a": ["x", "y"], "b": [0.5, 0.5]}), ["a", "b"], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got columns of dtype str, the first value at "
     r"row 0, column 0 \('x'\)\.$"),
    # pandas data that numpy would refuse are refused too, never converted
    (pd.Series(["0.1", "0.9"]), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype str, the first value at position 0 "
     r"\('0\.1'\)\.$"),
    (pd.Series([True, False]), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype bool, the first value at position 0 "
     r"\(True\)\.$"),
    (pd.Series([True, False], dtype="boolean"), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype boolean, the first value at "
     r"position 0 \(True\)\.$"),
    (pd.Series(pd.to_timedelta([0, 0])), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype timedelta64\[ns\], the first value "
     r"at position 0 \(Timedelta\('0 days 00:00:00'\)\)\.$"),
    (pd.Series([0.1 + 0j, 0.9 + 0j]), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype complex128, the first value at "
     r"position 0 \(\(0\.1\+0j\)\)\.$"),
    (pd.Series(pd.Categorical([0.1, 0.9])), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype category, the first value at "
     r"position 0 \(0\.1\)\.$"),
    (np.array([0.1, "0.9", 0.8], dtype=object), [0, 1, 1], {}, TypeError,
     r"^`p` must hold real numbers; 1 value is not, the first at position 1 \('0\.9' of "
     r"type str\)\.$"),
    ([0.1, 0.2], [[0, 1]], {}, InputError,
     r"^`y` must be a vector of labels; got an array of shape \(1, 2\)\.$"),
    ([0.1, 0.2, 0.3], [0, 2, 3], {}, InputError,
     r"^`y` must be 0/1 or boolean for a vector `p`; 2 values do not, the first at position 1 "
     r"\(2\)\.$"),
    ([0.1, 0.2], [0, 0.5], {}, InputError,
     r"^`y` must be 0/1 or boolean for a vector `p`; 1 value does not, the first at position 1 "
     r"\(0\.5\)\.$"),
    ([0.1, 0.2], ["no", "yes"], {}, InputError,
     r"^`y` must be 0/1 or boolean for a vector `p`; 2 values do not, the first at position 0 "
     r"\('no'\)\. Pass classes=\(negative, positive\) to name other labels\.$"),
    # a Categorical of integers reads as integers (no hint to name other labels)
    ([0.1, 0.6, 0.7, 0.2], pd.Categorical([0, 1, 2, 0]), {}, InputError,
     r"^`y` must be 0/1 or boolean for a vector `p`; 1 value does not, the first at position 2 "
     r"\(2\)\.$"),
    ([0.1, 0.2], ["no", "yes"], {"classes": ["no", "yes", "maybe"]}, InputError,
     r"^`classes` must name the two labels \(negative, positive\) for a vector `p`; got 3\.$"),
    ([0.1, 0.2], ["no", "perhaps"], {"classes": ["no", "yes"]}, InputError,
     r"^`y` must be one of the class labels \('no', 'yes'\); 1 value does not, the first at "
     r"position 1 \('perhaps'\)\.$"),
    ([0.1, 0.2], ["a", "a"], {"classes": ("a", "a")}, InputError,
     r"^`classes` must be unique to identify the classes; got \['a', 'a'\]\.$"),
    ([0.1, 0.2], ["a", "b"], {"classes": "ab"}, InputError,
     r"^`classes` must be an ordered sequence of labels \(a list, tuple, range, array or "
     r"pandas Index\), one per column of `p`; got a str\.$"),
    (P3, ["a", "b", "c", "c"], {"classes": {"a", "b", "c"}}, InputError,
     r"^`classes` must be an ordered sequence of labels \(a list, tuple, range, array or "
     r"pandas Index\), one per column of `p`; got a set\.$"),
    (P3, ["a", "b", "c", "c"], {"classes": np.array([["a", "b"], ["c", "d"]])}, InputError,
     r"^`classes` must be a vector of labels; got an array of shape \(2, 2\)\.$"),
    ([0.1, 0.2, 0.3, 0.4], [0, 1, "1", 0], {}, InputError,
     r"^`y` must be 0/1 or boolean for a vector `p`; 1 value does not, the first at "
     r"position 2 \('1'\)\."),
    (pd.DataFrame([[0.5, 0.5], [0.3, 0.7]], columns=["a", "a"]), ["a", "a"], {}, InputError,
     r"^The columns of `p` must be unique to identify the classes; got \['a', 'a'\]\. Pass "
     r"classes= to give the label of each column\.$"),
    # after na_rm=True drops rows, positions still refer to the caller's data
    ([np.nan, 0.5, 1.5, 0.2], [0, 1, 1, 0], {"na_rm": True}, InputError,
     r"^`p` must lie in \[0, 1\]; 1 value does not, the first at position 2 \(1\.5\)\.$"),
    ([np.nan, 0.5, 0.5, 0.2], [0, 1, 2, 0], {"na_rm": True}, InputError,
     r"^`y` must be 0/1 or boolean for a vector `p`; 1 value does not, the first at position 2 "
     r"\(2\)\.$"),
    ([[np.nan, 0.5], [0.5, 0.5], [0.3, 0.7]], [1, 1, 5], {"na_rm": True}, InputError,
     r"^`y` must hold integer class codes in 1\.\.2 for a 2-column `p`; 1 value does not, the "
     r"first at position 2 \(5\)\.$"),
    ([[np.nan, 0.5], [0.5, 0.5], [0.3, 0.6]], [1, 1, 2], {"na_rm": True}, InputError,
     r"^`p` rows must sum to 1 \(within 1e-06\); 1 row does not, the first at row 2 "),
    ([[0.5, 0.5], [0.3, 0.7], [0.2, 1.2]], pd.Series([1, None, 2], dtype="Int64"),
     {"na_rm": True}, InputError,
     r"^`p` must lie in \[0, 1\]; 1 value does not, the first at row 2, column 1 \(1\.2\)\.$"),
    (np.array([[1.0], [1.0]]), [1, 1], {}, InputError,
     r"^`p` must have at least two columns \(one per class\), or be a vector for binary "
     r"problems; got 1 column\.$"),
    (np.zeros((2, 0)), [1, 1], {}, InputError,
     r"^`p` must have at least two columns \(one per class\); got 0\.$"),
    ([[0.5, 0.5], [0.2, 0.7], [0.3, 0.3]], [1, 2, 1], {}, InputError,
     r"^`p` rows must sum to 1 \(within 1e-06\); 2 rows do not, the first at row 1 "
     r"\(sum 0\.8999999999999999, 0\.10000000000000009 away from 1\)\.$"),
    ([[0.5, 0.5], [1.2, -0.2]], [1, 2], {}, InputError,
     r"^`p` must lie in \[0, 1\]; 2 values do not, the first at row 1, column 0 \(1\.2\)\.$"),
    ([[0.5, 0.5], [np.inf, 0.0]], [1, 2], {}, InputError,
     r"^`p` must be finite; 1 value does not, the first at row 1, column 0 \(inf\)\.$"),
    ([[0.5, 0.5], [np.nan, 0.0]], [1, 2], {}, InputError,
     r"^`p` must not contain missing values; 1 value is missing, the first at row 1, "
     r"column 0\. Pass na_rm=True"),
    (P3, [0, 1, 2, 2], {}, InputError,
     r"^`y` must hold integer class codes in 1\.\.3 for a 3-column `p`; 1 value does not, the "
     r"first at position 0 \(0\)\. Codes are 1-based as in R; for 0-based labels pass "
     r"classes=range\(3\)\.$"),
    (P3, [1, 2, 4, 1.5], {}, InputError,
     r"^`y` must hold integer class codes in 1\.\.3 for a 3-column `p`; 2 values do not, the "
     r"first at position 2 \(4\.0\)\.$"),
    (P3, [True, False, True, True], {}, InputError,
     r"^`y` must hold integer class codes in 1\.\.3 for a 3-column `p`; got booleans\.$"),
    (P3, ["a", "b", "c", "c"], {}, InputError,
     r"^`y` must hold integer class codes in 1\.\.3 for a 3-column `p`; got values of dtype "
     r"<U1 \(first 'a'\)\. Pass classes= to give the label of each column\.$"),
    (P3, [1, 2, 3, 3], {"classes": ["a", "b"]}, InputError,
     r"^`classes` must give one label per column of `p` \(3\); got 2\.$"),
    (P3, ["a", "b", "c", "d"], {"classes": ["a", "b", "c"]}, InputError,
     r"^`y` must be one of the class labels \('a', 'b', 'c'\); 1 value does not, the first at "
     r"position 3 \('d'\)\.$"),
    (P3, ["a", "b", "c", "c"], {"classes": ["a", "a", "c"]}, InputError,
     r"^`classes` must be unique to identify the classes; got \['a', 'a', 'c'\]\.$"),
    (P3, pd.Categorical(["a", "b", "a", "b"]), {}, InputError,
     r"^`y` is categorical with 2 categories, but `p` has 3 columns; they must be equal "
     r"\(the categories are the columns, in order\)\.$"),
    (pd.DataFrame(P3, columns=["a", "b", "c"]), [1, 2, 3, 3], {}, InputError,
     r"^`y` must be one of the class labels \('a', 'b', 'c'\); 4 values do not, the first at "
     r"position 0 \(1\)\. Labels are matched to the column names of the DataFrame `p`; pass "
     r"classes= to give the label of each column\.$"),
    (pd.Series([0.1, 0.2], index=[5, 6]), pd.Series([0, 1]), {}, InputError,
     r"^`p` and `y` are pandas objects with different indexes; calibr pairs them by position, "
     r"so pass aligned objects \(e\.g\. columns of one DataFrame\) or arrays\.$"),
]


@pytest.mark.parametrize("metric", [calibr.ece, calibr.mce])
@pytest.mark.parametrize("p, y, kwargs, exc, match", ERRORS)
def test_errors_are_pinned(metric, p, y, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        metric(p, y, **kwargs)


def test_input_error_is_a_value_error():
    assert issubclass(InputError, ValueError)
    assert calibr.InputError is InputError


@pytest.mark.parametrize(
    "bins, shown",
    [(2.5, "2.5"), (0, "0"), (-3, "-3"), (True, "True"), ("10", "'10'"), (None, "None"),
     (np.nan, "nan"), (np.inf, "inf"), ([10], r"\[10\]"),
     (np.array([10, 20]), r"an array of shape \(2,\)")],
)
def test_bins_errors(bins, shown):
    msg = rf"^`bins` must be a single positive integer; got {shown}"
    with pytest.raises(InputError, match=msg):
        calibr.ece([0.1, 0.9], [0, 1], bins=bins)


@pytest.mark.parametrize("bins, shown", [(1_000_001, "1000001"), (2**40, "1099511627776"),
                                          (1e20, r"1e\+20")])
def test_bins_has_an_upper_bound(bins, shown):
    msg = rf"^`bins` must be a single positive integer no larger than 1,000,000; got {shown}\.$"
    with pytest.raises(InputError, match=msg):
        calibr.ece([0.1, 0.9], [0, 1], bins=bins)
    assert calibr.ece([0.1, 0.9], [0, 1], bins=1_000_000) == pytest.approx(0.1)


def test_classes_accepts_ordered_sequences():
    y = ["b", "a", "c", "c"]
    ref = calibr.ece(P3, y, classes=["b", "a", "c"])
    for classes in (("b", "a", "c"), np.array(["b", "a", "c"]), pd.Index(["b", "a", "c"]),
                    pd.Series(["b", "a", "c"])):
        assert calibr.ece(P3, y, classes=classes) == ref


def test_bins_accepts_integral_numbers_like_r():
    assert check_bins(10) == 10
    assert check_bins(10.0) == 10  # R's `bins = 10` is a double
    assert check_bins(np.int32(7)) == 7


@pytest.mark.parametrize("type_", ["conf", "Classwise", "", None, 1])
def test_type_errors(type_):
    with pytest.raises(InputError, match=r"^`type` must be one of 'classwise', 'confidence', "
                       r"'top-label'; got "):
        calibr.ece(P3, [1, 2, 3, 3], type=type_)


def test_type_is_checked_for_binary_input_too():
    with pytest.raises(InputError, match="`type` must be one of"):
        calibr.mce([0.1, 0.9], [0, 1], type="canonical")


def test_check_choice_and_bandwidth():
    assert check_choice("uq", "estimator", ("uq", "ul", "biased")) == "uq"
    assert check_bandwidth("median") == "median"
    assert check_bandwidth(0.2) == 0.2
    for bad in (0, -1, np.nan, np.inf, "mean", True, None):
        with pytest.raises(InputError, match=re.escape('`bandwidth` must be a positive finite '
                                                       'number or "median"; got ')):
            check_bandwidth(bad)


def test_bad_input_leaves_caller_objects_unchanged():
    p = np.array([0.1, 1.5, np.nan])
    y = [0, 1, 1]
    before = p.copy()
    with pytest.raises(InputError):
        calibr.ece(p, y, na_rm=True)
    np.testing.assert_array_equal(p, before)
    assert y == [0, 1, 1]


def test_integers_are_shown_up_to_30_digits():
    """A refused integer is shown in the message up to 30 digits; a longer one is described
    by its number of digits."""
    with pytest.raises(InputError, match=r"got 1(0){29}\.$"):
        calibr.ece([0.2, 0.4], [0, 1], bins=10**29)  # 30 digits: shown
    with pytest.raises(InputError, match=r"got an integer of 31 digits\.$"):
        calibr.ece([0.2, 0.4], [0, 1], bins=10**30)


@pytest.mark.parametrize("k", [10, 11])
def test_ten_class_labels_are_listed_then_an_ellipsis(k):
    """A message lists at most ten class labels, then "..."."""
    cols = [f"c{i}" for i in range(k)]
    p = pd.DataFrame(np.full((2, k), 1 / k), columns=cols)
    listed = ", ".join(repr(c) for c in cols[:10]) + (", ..." if k > 10 else "")
    with pytest.raises(InputError, match=re.escape(f"one of the class labels ({listed});")):
        calibr.ece(p, ["c0", "zz"])


def test_object_codes_beyond_int64_are_refused_alone():
    """Object integer labels too large for int64 are checked on a path of their own; there
    too only the huge code is outside 1..K, and the code 1 stays valid."""
    p = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    with pytest.raises(InputError, match=r"1 value does not, the first at position 3 "
                                         r"\(an integer of 31 digits\)"):
        calibr.ece(p, np.array([1, 2, 3, 10**30], dtype=object))


def test_long_values_are_shortened_in_messages():
    """A value whose repr is longer than 80 characters is shown cut to 77 characters and
    "..."."""
    with pytest.raises(InputError) as info:
        calibr.ece([0.1, 0.2], [0, 1], type="x" * 200)
    assert "'" + "x" * 76 + "..." in str(info.value)


class _Unreadable:
    """A sequence numpy cannot read (its ``__array__`` raises), not ragged."""

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("boom")

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return 0.5


def test_an_object_numpy_cannot_read_is_a_type_error():
    """An object numpy cannot read as an array is an InputTypeError whose message names
    numpy's own error."""
    with pytest.raises(calibr.InputTypeError, match=r"^`p` must be a vector or a matrix; got a "
                       r"_Unreadable that numpy cannot read as an array \(RuntimeError: boom\)\.$"):
        calibr.ece(_Unreadable(), [0, 1])


class _UnconvertibleSeries(pd.Series):
    """A numeric pandas column that pandas fails to convert (its ``to_numpy`` raises)."""

    @property
    def _constructor(self):
        return _UnconvertibleSeries

    def to_numpy(self, *args, **kwargs):
        raise RuntimeError("boom")


def test_a_column_pandas_cannot_convert_is_a_type_error():
    """A pandas column whose conversion to float64 fails is an InputTypeError whose message
    names pandas' own error, not that error escaping nor a missing value."""
    with pytest.raises(calibr.InputTypeError, match=r"^`p` must be numeric \(integer or float\); "
                       r"pandas cannot convert it to float64 \(RuntimeError: boom\)\.$"):
        calibr.ece(_UnconvertibleSeries([0.2, 0.8]), [0, 1])


@pytest.mark.parametrize("dtype", ["string", "category"])
def test_a_non_numeric_column_of_missing_values_only_names_its_dtype(dtype):
    """A non-numeric column of missing values only has no value to show: the message ends
    after its dtype."""
    with pytest.raises(calibr.InputTypeError, match=rf"^`p` must be numeric \(integer or float\); "
                                                    rf"got dtype {dtype}\.$"):
        calibr.ece(pd.Series([None, None], dtype=dtype), [0, 1])


def test_the_refused_column_shown_is_the_one_with_the_earliest_value():
    """Of several refused columns the message shows the first present value by row (then by
    column); a column of missing values only is shown last of all."""
    x = [0.2, 0.3]
    flags = pd.array([pd.NA, True], dtype="boolean")  # first value at row 1
    words = pd.array(["u", "v"], dtype="string")  # first value at row 0
    msg = r"^`p` must be numeric \(integer or float\); got columns of dtype boolean, string, "
    with pytest.raises(calibr.InputTypeError, match=msg + r"the first value at row 0, column 2 "
                                                          r"\('u'\)\.$"):
        calibr.ece(pd.DataFrame({"x": x, "a": flags, "b": words}), [0, 1])
    none = pd.array([pd.NA, pd.NA], dtype="string")
    with pytest.raises(calibr.InputTypeError, match=msg + r"the first value at row 1, column 1 "
                                                          r"\(True\)\.$"):
        calibr.ece(pd.DataFrame({"x": x, "a": flags, "b": none}), [0, 1])


def test_out_of_range_probabilities_are_those_below_0_or_above_1():
    """0 and 1 are in range; values below 0 and above 1 are counted together, and the first
    by position is shown (in a vector and in a matrix)."""
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]; 2 values do not, the "
                                         r"first at position 3 \(1\.5\)\.$"):
        calibr.ece([0.0, 1.0, 0.5, 1.5, -0.5], [0, 1, 1, 0, 1])
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]; 2 values do not, the "
                                         r"first at row 1, column 0 \(-0\.25\)\.$"):
        calibr.ece([[0.0, 1.0], [-0.25, 1.25]], [1, 0])


# ----------------------------------------------------------------- no silent mismatch

PETS = pd.DataFrame(P3, columns=["cat", "dog", "bird"])
#: categories only partly overlap the columns (no "dog" category, an unused "fish")
PET_LABELS = pd.Categorical(["cat", "bird", "bird", "cat"], categories=["bird", "cat", "fish"])


def test_categorical_values_are_matched_to_dataframe_columns_by_name():
    # Matched by position (the old behaviour), "bird" (code 0) was scored against
    # the "cat" column: 0.5333. By name, the labels are columns 0, 2, 2, 0.
    # bins=10, classwise: every value is alone in its bin, so each class's ECE is
    # the mean of |1{y = k} - p_k|:
    #   cat  (.7, .2, .1, .3 vs 1, 0, 0, 1): (.3 + .2 + .1 + .7) / 4 = 1.3 / 4
    #   dog  (.2, .5, .1, .3 vs 0, 0, 0, 0): (.2 + .5 + .1 + .3) / 4 = 1.1 / 4
    #   bird (.1, .3, .8, .4 vs 0, 1, 1, 0): (.1 + .7 + .2 + .4) / 4 = 1.4 / 4
    by_hand = (1.3 / 4 + 1.1 / 4 + 1.4 / 4) / 3  # 0.31666...
    got = calibr.ece(PETS, PET_LABELS)
    assert got == pytest.approx(by_hand, rel=1e-15)
    assert round(got, 4) == 0.3167
    np.testing.assert_array_equal(prepare(PETS, PET_LABELS).y, [0, 2, 2, 0])
    assert prepare(PETS, PET_LABELS).classes == ("cat", "dog", "bird")
    # the same as plain string labels, and as the codes of a bare matrix
    for metric in (calibr.ece, calibr.mce, calibr.skce, calibr.mmce):
        assert metric(PETS, PET_LABELS) == metric(PETS, ["cat", "bird", "bird", "cat"])
        assert metric(PETS, PET_LABELS) == metric(P3, [1, 3, 3, 1])
    # a Series of category dtype is the same
    assert calibr.ece(PETS, pd.Series(PET_LABELS)) == got


@pytest.mark.r
def test_categorical_values_are_matched_to_tuple_column_names_of_any_length():
    # the names stay an Index of tuples: a MultiIndex of these ragged tuples cannot match them
    cols = pd.Index([("a",), ("b", 2), ("c", 3, 4)], tupleize_cols=False)
    y = pd.Categorical.from_codes([0, 1, 2, 2], cols)
    assert calibr.ece(pd.DataFrame(P3, columns=cols), y) == calibr.ece(P3, [1, 2, 3, 3])


def test_categorical_by_name_agrees_with_r(rref):
    """R's factor is matched by position, so R is given the factor whose levels are
    the columns of P in order: the labels' names decide, as in calibr."""
    from tolerances import R_ATOL, R_RTOL

    factor = pd.Categorical(np.asarray(PET_LABELS), categories=list(PETS.columns))
    for metric in ("ece", "mce"):
        for type_ in ("classwise", "confidence"):
            want = getattr(rref, metric)(P3, factor, bins=10, type=type_)
            got = getattr(calibr, metric)(PETS, PET_LABELS, bins=10, type=type_)
            assert got == pytest.approx(want, rel=R_RTOL, abs=R_ATOL), (metric, type_)
    assert rref.ece(P3, factor) == pytest.approx(0.31666666666666665, rel=R_RTOL)


def test_categorical_value_that_is_not_a_column_is_an_error():
    y = pd.Categorical(["cat", "fish", "bird", "cat"], categories=["bird", "cat", "fish"])
    with pytest.raises(InputError, match=(
        r"^`y` must be one of the class labels \('cat', 'dog', 'bird'\); 1 value does not, the "
        r"first at position 1 \('fish'\)\. Labels are matched to the column names of the "
        r"DataFrame `p`; pass classes= to give the label of each column\.$"
    )):
        calibr.ece(PETS, y)
    # categories that share no name with the columns are no longer matched by position
    with pytest.raises(InputError, match=r"^`y` must be one of the class labels \('cat', "):
        calibr.ece(PETS, pd.Categorical(["x", "y", "z", "z"]))
    # classes= still says which label each column has
    assert calibr.ece(PETS, pd.Categorical(["x", "y", "z", "z"]), classes=["x", "y", "z"]) == (
        calibr.ece(P3, [1, 2, 3, 3]))
    # with a bare matrix the categories are the columns, in order (R's factor)
    assert calibr.ece(P3, PET_LABELS) == calibr.ece(P3, [2, 1, 1, 2])


def test_categorical_missing_and_dropped_values_by_name():
    y = pd.Categorical(["cat", None, "bird", "cat"], categories=["bird", "cat", "fish"])
    with pytest.raises(InputError, match=r"^`y` must not contain missing values; 1 value is "
                       r"missing, the first at position 1\."):
        calibr.ece(PETS, y)
    assert calibr.ece(PETS, y, na_rm=True) == calibr.ece(P3[[0, 2, 3]], [1, 3, 1])


DEFAULT_COLS = pd.DataFrame(P3)  # columns 0, 1, 2
AMBIGUOUS = (
    r"^`y` is ambiguous for a DataFrame `p` whose columns are named 0\.\.2: its labels are "
    r"integers with no 0, so they may be 0-based labels matched to these column names \(label "
    r"1 is column 1\) or R's 1-based codes 1\.\.3 \(label 1 is column 0\)\. Pass "
    r"classes=range\(3\) for 0-based labels matched to these columns, or "
    r"classes=range\(1, 4\) for R's 1-based codes\.$"
)


@pytest.mark.parametrize("y", [
    [1, 2, 2, 1],  # R's codes without code 3: matched by name, silently shifted before
    [1, 2, 3, 3],  # code 3 was an error ("not one of the class labels") before
    np.array([1.0, 2.0, 2.0, 1.0]),
    pd.Series([1, 2, 2, 1], dtype="Int64"),
    pd.Categorical([1, 2, 2, 1], categories=[0, 1, 2]),
    np.array([2, 2, 2, 2], dtype=np.uint8),
])
def test_integer_labels_without_zero_against_default_columns_are_refused(y):
    with pytest.raises(InputError, match=AMBIGUOUS):
        calibr.ece(DEFAULT_COLS, y)
    with pytest.raises(InputError, match=AMBIGUOUS):
        calibr.skce(DEFAULT_COLS, y)


def test_one_integer_label_without_zero_is_ambiguous_too():
    with pytest.raises(InputError, match=AMBIGUOUS):
        calibr.ece(DEFAULT_COLS.iloc[:1], [2])


def test_integer_labels_against_default_columns_with_classes_or_a_zero():
    y = [1, 2, 2, 1]
    # each reading, when classes= says which
    assert calibr.ece(DEFAULT_COLS, y, classes=range(3)) == calibr.ece(P3, [2, 3, 3, 2])
    assert calibr.ece(DEFAULT_COLS, y, classes=range(1, 4)) == calibr.ece(P3, [1, 2, 2, 1])
    # a 0 among the labels makes them 0-based: matched by name, as before
    y0 = [0, 2, 2, 1]
    assert calibr.ece(DEFAULT_COLS, y0) == calibr.ece(P3, [1, 3, 3, 2])
    np.testing.assert_array_equal(prepare(DEFAULT_COLS, y0).y, [0, 2, 2, 1])
    assert calibr.ece(DEFAULT_COLS, pd.Categorical(y0)) == calibr.ece(P3, [1, 3, 3, 2])
    # columns that are not exactly 0..K-1 in order, or labels that are not integers,
    # are matched by name as before
    shuffled = pd.DataFrame(P3, columns=[2, 0, 1])
    assert calibr.ece(shuffled, [2, 0, 1, 1]) == calibr.ece(P3, [1, 2, 3, 3])
    with pytest.raises(InputError, match=r"^`y` must be one of the class labels \(0, 1, 2\); 1 "
                       r"value does not, the first at position 1 \(1\.5\)\."):
        calibr.ece(DEFAULT_COLS, [1.0, 1.5, 2.0, 2.0])


def test_mixed_object_labels_are_not_taken_for_r_codes():
    """Object labels 1, "2", 2, 1 against columns named 0..2 are not "integers without a 0"
    (the R-codes ambiguity): the string "2" is simply not a class label. The all-integer
    object labels 1, 2, 2, 1 are ambiguous."""
    p = pd.DataFrame([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    with pytest.raises(InputError, match=r"^`y` must be one of the class labels \(0, 1, 2\); 1 "
                                         r"value does not, the first at position 1 \('2'\)\."):
        calibr.ece(p, np.array([1, "2", 2, 1], dtype=object))
    with pytest.raises(InputError, match=r"^`y` is ambiguous for a DataFrame `p` whose columns "
                                         r"are named 0\.\.2"):
        calibr.ece(p, np.array([1, 2, 2, 1], dtype=object))


# ----------------------------------------------------------------- one exception contract


def test_float16_and_big_endian_labels_and_probabilities():
    p = np.array([0.1, 0.4, 0.35, 0.8])
    y = np.array([0, 0, 1, 1])
    ref = calibr.ece(p, y)
    for yy in (y.astype(np.float16), y.astype(">i4"), y.astype(">f8"), y.astype(">i8"),
               y.astype(np.float32), y.astype(np.longdouble)):
        for metric in (calibr.ece, calibr.mce, calibr.skce, calibr.mmce):
            assert metric(p, yy) == metric(p, y), (metric.__name__, yy.dtype)
        assert calibr.ece(p, yy) == ref
    # float16 probabilities convert exactly to float64: the number of the converted values
    p16 = p.astype(np.float16)
    assert calibr.ece(p16, y) == calibr.ece(p16.astype(np.float64), y)
    assert calibr.skce(p.astype(">f8"), y) == calibr.skce(p, y)
    assert calibr.ece(P3.astype(">f8"), np.array([1, 2, 3, 3], dtype=">i4")) == (
        calibr.ece(P3, [1, 2, 3, 3]))
    assert calibr.skce(P3, np.array([1, 2, 3, 3], dtype=np.float16)) == (
        calibr.skce(P3, [1, 2, 3, 3]))


def test_labels_that_float64_cannot_hold_exactly_are_refused():
    y = np.array([0, 1, 1, 1], dtype=np.longdouble)
    y[1] += np.longdouble(2.0) ** -60
    if y[1] == 1:  # pragma: no cover - longdouble is float64 on this platform: exact
        assert calibr.ece([0.1, 0.2, 0.3, 0.4], y) == calibr.ece([0.1, 0.2, 0.3, 0.4], [0, 1, 1, 1])
        return
    with pytest.raises(InputError, match=r"^`y` must hold labels that a float64 holds exactly; 1 "
                       r"value does not, the first at position 1 "):
        calibr.ece([0.1, 0.2, 0.3, 0.4], y)


@pytest.mark.parametrize("name", ["p", "y"])
def test_generators_sets_dicts_and_strings_are_refused_unconsumed(name):
    def gen():
        yield from [0.1, 0.9] if name == "p" else [0, 1]

    g = gen()
    args = {"p": [0.1, 0.9], "y": [0, 1]}
    msg = rf"^`{name}` must be an array-like \(a list, tuple, numpy array or pandas object\); got "
    with pytest.raises(InputTypeError, match=msg + r"a generator\.$"):
        calibr.ece(**{**args, name: g})
    assert next(g) in (0.1, 0)  # not consumed
    with pytest.raises(InputTypeError, match=msg + r"a set\.$"):
        calibr.ece(**{**args, name: {0.1, 0.9}})
    with pytest.raises(InputTypeError, match=msg + r"a dict\.$"):
        calibr.ece(**{**args, name: {0: 0.1, 1: 0.9}})
    with pytest.raises(InputTypeError, match=msg + r"an iterator \(list_iterator\)\.$"):
        calibr.ece(**{**args, name: iter([0.1, 0.9])})
    with pytest.raises(InputTypeError, match=msg + r"a dict_values\.$"):
        calibr.ece(**{**args, name: {0: 0.1, 1: 0.9}.values()})


def test_strings_scalars_and_ragged_sequences_name_the_argument():
    with pytest.raises(InputTypeError, match=r"^`y` must be a vector of labels; got a string "
                       r"\('01'\)\.$"):
        calibr.ece([0.1, 0.9], "01")
    with pytest.raises(InputTypeError, match=r"^`p` must be a vector or a matrix; got a string "
                       r"\('0\.5'\)\.$"):
        calibr.ece("0.5", [1])
    with pytest.raises(InputError, match=r"^`y` must be a vector of labels; got a scalar \(1\)\.$"):
        calibr.ece([0.9], 1)
    with pytest.raises(InputError, match=r"^`p` must be a vector or a matrix; got a ragged "
                       r"sequence \(row 1 has 1 value, row 0 has 2 values\)\.$"):
        calibr.ece([[0.5, 0.5], [1.0]], [1, 2])
    with pytest.raises(InputError, match=r"^`y` must be a vector of labels; got a ragged "
                       r"sequence \(row 1 has 2 values, row 0 is a single value\)\.$"):
        calibr.ece([0.5, 0.5], [1, [0, 1]])


def test_values_beyond_float64_and_int64_give_position_and_value():
    with pytest.raises(InputError, match=r"^`p` must hold real numbers that fit in a float64; 1 "
                       r"value does not, the first at position 1 \(an integer of 401 digits\)\.$"):
        calibr.ece(np.array([0, 10**400], dtype=object), [0, 1])
    with pytest.raises(InputError, match=r"^`y` must be 0/1 or boolean for a vector `p`; 1 value "
                       r"does not, the first at position 1 \(an integer of 401 digits\)\."):
        calibr.ece([0.1, 0.2], np.array([0, 10**400], dtype=object))
    with pytest.raises(InputError, match=r"^`y` must hold integer class codes in 1\.\.3 for a "
                       r"3-column `p`; 1 value does not, the first at position 2 "
                       r"\(18446744073709551615\)\.$"):
        calibr.ece(P3, np.array([1, 2, 2**64 - 1, 3], dtype=np.uint64))
    with pytest.raises(InputError, match=r"more than 4300 digits"):
        calibr.ece([0.1, 0.2], [0, 1], bins=10**5000)


def test_non_numeric_probabilities_give_row_column_and_value():
    frame = pd.DataFrame({"a": [0.5, 0.5, 0.2], "b": ["0.5", "0.5", "0.8"]})
    with pytest.raises(InputTypeError, match=r"^`p` must be numeric \(integer or float\); got "
                       r"columns of dtype str, the first value at row 0, column 1 \('0\.5'\)\.$"):
        calibr.ece(frame, ["a", "b", "b"])
    mixed = pd.DataFrame({"a": [0.5, 0.5, 0.2], "b": np.array([0.5, "x", 0.8], dtype=object)})
    with pytest.raises(InputTypeError, match=r"^`p` must hold real numbers; 1 value is not, the "
                       r"first at row 1, column 1 \('x' of type str\)\.$"):
        calibr.ece(mixed, ["a", "b", "b"])
    # an object column of numbers is read like a float column
    numbers_ = pd.DataFrame({"a": [0.5, 0.5, 0.2], "b": np.array([0.5, 0.5, 0.8], dtype=object)})
    assert calibr.ece(numbers_, ["a", "b", "b"]) == calibr.ece(numbers_.astype(float),
                                                               ["a", "b", "b"])
    with pytest.raises(InputTypeError, match=r"^`p` must hold real numbers; 1 value is not, the "
                       r"first at row 1, column 1 \('x' of type str\)\.$"):
        calibr.ece([[0.5, 0.5], [0.5, "x"]], [1, 2])


def test_masked_arrays_with_masked_values_are_refused():
    p = np.ma.masked_array([0.1, 7.0, 0.3], mask=[False, True, False])
    with pytest.raises(InputTypeError, match=r"^`p` must not be a masked array with masked values "
                       r"\(calibr would read the values under the mask\); fill them with NaN "
                       r"\(p\.filled\(np\.nan\)\) and pass na_rm=True to drop them\.$"):
        calibr.ece(p, [0, 1, 1])
    assert calibr.ece(p.filled(np.nan), [0, 1, 1], na_rm=True) == calibr.ece([0.1, 0.3], [0, 1])
    assert calibr.ece(np.ma.masked_array([0.1, 0.3]), [0, 1]) == calibr.ece([0.1, 0.3], [0, 1])


def test_unhashable_labels_and_classes():
    with pytest.raises(InputTypeError, match=r"^`y` must hold labels that can be compared "
                       r"\(hashable values\); 1 value is not, the first at position 1 \(\[1\] of "
                       r"type list\)\.$"):
        calibr.ece(PETS, np.array(["cat", [1], "dog", "dog"], dtype=object))
    with pytest.raises(InputTypeError, match=r"^`classes` must hold labels that can be compared "
                       r"\(hashable values\); got \[1\] of type list\.$"):
        calibr.ece(P3, [1, 2, 3, 3], classes=[[1], 2, 3])


def test_numbers_too_large_for_a_float_in_options():
    with pytest.raises(InputError, match=r'^`bandwidth` must be a positive finite number or '
                       r'"median"; got an integer of 401 digits\.$'):
        calibr.skce([0.1, 0.9], [0, 1], bandwidth=10**400)


# ----------------------------------------------------------------- the bins x K bound


def test_bins_times_classes_is_bounded_before_any_allocation(monkeypatch):
    import tracemalloc

    from calibr._kernels import binned

    p = np.full((20, 1000), 1e-3)
    y = np.ones(20, dtype=np.int64)
    msg = (r'^`bins` times the number of classes must be at most 10,000,000 for type = '
           r'"classwise" \(one set of bins per class\); got bins = 1,000,000 with K = 1,000 '
           r'classes \(1,000,000,000 bins\)\. Use fewer bins, or type = "confidence"\.$')

    def no_kernel(*args, **kwargs):  # pragma: no cover - reached only if the bound is missing
        raise AssertionError("the per-bin kernels ran before the bound was checked")

    monkeypatch.setattr(binned, "bin_stats", no_kernel)
    tracemalloc.start()
    try:
        for metric in (calibr.ece, calibr.mce):
            with pytest.raises(InputError, match=msg):
                metric(p, y, bins=10**6)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20  # the 24 GB of per-bin sums were never asked for
    with pytest.raises(InputError, match=r"got bins = 1,000,000 with K = 100 classes"):
        calibr.ece(np.full((20, 100), 1e-2), y, bins=10**6)
    monkeypatch.undo()
    # at the bound, and in the confidence form (one set of bins), it computes
    assert calibr.ece(np.full((20, 1000), 1e-3), y, bins=10_000) >= 0
    assert calibr.ece(p, y, bins=10**6, type="confidence") == pytest.approx(1 - 1e-3)


def test_the_bin_cell_bound_is_inclusive():
    """Exactly MAX_BIN_CELLS bins x classes are allowed; one bin more is refused."""
    from calibr._input import MAX_BIN_CELLS, check_bin_cells

    check_bin_cells(MAX_BIN_CELLS // 4, 4, True)  # 10,000,000 cells: allowed
    with pytest.raises(InputError, match=r"got bins = 2,500,001 with K = 4 classes"):
        check_bin_cells(MAX_BIN_CELLS // 4 + 1, 4, True)


def test_a_zero_dimensional_array_is_not_read_as_breaks():
    """Breaks are a 1-d sequence; a 0-d array (what a scalar tensor becomes) is a
    number that is not a Python or numpy scalar, and is refused as one."""
    for bins in (np.array(10), np.array(0.5)):
        with pytest.raises(InputError, match=r"^`bins` must be a single positive integer; got "
                                             r"an array of shape \(\)\.$"):
            calibr.ece([0.1, 0.5, 0.9], [0, 1, 1], bins=bins)


def test_explicit_breaks_give_at_most_a_million_bins():
    """Breaks are bounded as a number of bins is (MAX_BINS = 1,000,000): 1,000,001
    breaks are taken, one more is refused before any bin is made."""
    p, y = [0.1, 0.4, 0.8], [0, 1, 1]
    # 10**6 bins of width 1e-6: each row alone in its bin, so the ECE is sum |p - y| / n
    assert calibr.ece(p, y, bins=np.linspace(0.0, 1.0, 10**6 + 1)) == pytest.approx(
        (0.1 + 0.6 + 0.2) / 3, rel=1e-12)
    with pytest.raises(InputError, match=(
            r"^`bins` must be a single positive integer; got an array of shape \(1000002,\); "
            r"as breaks \(R's cut\(x, breaks = \.\.\.\)\) it must hold at most 1,000,001 "
            r"values \(at most 1,000,000 bins\); it has 1,000,002\.$")):
        calibr.ece(p, y, bins=np.linspace(0.0, 1.0, 10**6 + 2))


def test_every_n_resamples_is_at_most_ten_million():
    """docs/bootstrap.md: ``n_resamples`` is at most 10,000,000 in every function that
    takes it; one more is refused by its declared rule, before anything is resampled."""
    ruled = {
        (name, option): rule
        for name in calibr.__all__
        for option, rule in getattr(getattr(calibr, name), "__calibr_rules__", {}).items()
        if option.endswith("n_resamples") or option == "consistency_resamples"
    }
    assert {name for name, _ in ruled} >= {"bootstrap", "paired_bootstrap", "calibration_test",
                                           "summarise", "calibration_table", "html_report"}
    for (_, option), rule in ruled.items():
        assert rule(10**7, option) == 10**7
        with pytest.raises(InputError, match=rf"^`{option}` must be an integer from 1 to "
                                             r"10,000,000; got 10000001\.$"):
            rule(10**7 + 1, option)


def test_a_metric_value_may_be_infinite_unless_finite_is_asked():
    """metric_value(finite=True) refuses infinities (the bootstrap's replicates, whose
    quantiles they would make undefined); without it they are numbers."""
    from calibr._input import metric_value

    assert metric_value(np.float32(-np.inf)) == -math.inf
    assert math.isnan(metric_value(np.array(np.nan), finite=True))
    with pytest.raises(InputError, match=re.escape(
            "`metric` must return a finite number or NaN here (quantiles of infinite values "
            "are undefined); it returned inf.")):
        metric_value(math.inf, finite=True)


# ----------------------------------------------------------------- row sums


def test_row_sum_message_shows_the_distance_and_suggests_renormalising():
    six = np.round(np.array([[1 / 3, 1 / 3, 1 / 3], [0.2, 0.3, 0.5]]), 6)  # sums 0.999999, 1
    with pytest.raises(InputError, match=(
        r"^`p` rows must sum to 1 \(within 1e-06\); 1 row does not, the first at row 0 \(sum "
        r"0\.999999, 1\.0000000000287557e-06 away from 1\)\. If the probabilities were rounded "
        r"when saved, divide each row by its sum\.$"
    )):
        calibr.ece(six, [1, 3])
    # the suggested fix works, and the tolerance stays R's 1e-6
    assert calibr.ece(six / six.sum(axis=1, keepdims=True), [1, 3]) >= 0
    assert calibr.ece(np.array([[0.5, 0.5 - 1e-6]]), [1]) >= 0
    # far from 1 is not rounding: no suggestion
    with pytest.raises(InputError, match=r"\(sum 0\.9, 0\.09999999999999998 away from 1\)\.$"):
        calibr.ece([[0.5, 0.4]], [1])
    # one rounded row among bad rows far from 1 is not rounding either: no suggestion
    with pytest.raises(InputError, match=r"^`p` rows must sum to 1 \(within 1e-06\); 2 rows "
                       r"do not, the first at row 0 \(sum 0\.99998999.*e-05 away from 1\)\.$"):
        calibr.ece([[0.5, 0.49999], [0.5, 0.4]], [1, 2])


# ----------------------------------------------------------------- the parameter table


def test_the_options_of_the_verbs_table_and_plots_are_declared_once():
    """calibr._input.validate_params: each public function lists the rule of each
    of its options, checked in this order before anything else runs."""
    from calibr.plot import reliability_diagram
    from calibr.table import wilson_interval

    assert list(calibr.summarise.__calibr_rules__) == ["na_rm", "rng", "confidence_level",
                                                       "ci_method", "n_resamples", "p_adjust",
                                                       "scheme"]
    assert list(calibr.calibration_table.__calibr_rules__) == [
        "bins", "type", "confidence_level", "na_rm", "consistency", "n_resamples", "rng", "binning",
        "right"]
    assert list(wilson_interval.__calibr_rules__) == ["confidence_level"]
    assert list(reliability_diagram.__calibr_rules__) == [
        "ncols", "histogram", "intervals", "panel_size", "title", "show_ece", "consistency",
        "smooth", "count_scale", "ece_label"]
    # the functions receive the canonical values, also for positional arguments
    p, y = [0.1, 0.4, 0.8, 0.9], [0, 1, 1, 1]
    want = calibr.calibration_table(p, y, 4, "classwise", na_rm=False)
    pd.testing.assert_frame_equal(calibr.calibration_table(p, y, 4.0, na_rm=np.False_), want)
    frame = pd.DataFrame({"p": [0.1, np.nan, 0.8], "y": [0, 1, 1]})
    pd.testing.assert_frame_equal(calibr.summarise(frame, "p", "y", na_rm=np.True_),
                                  calibr.summarise(frame, "p", "y", na_rm=True))
    # the checks run before the data is read
    with pytest.raises(InputError, match=r"^`confidence_level` must be a number strictly between 0 "
                       r"and 1; got 0\.$"):
        calibr.calibration_table(None, None, confidence_level=0)


def test_optional_and_string_rules():
    from calibr._input import OPTIONAL_STRING, Integer, Optional, validate_params

    rule = Optional(Integer(1, what="a single positive integer"))
    assert rule(None, "ncols") is None and rule(np.int64(3), "ncols") == 3
    for bad, shown in ((0, "0"), (2.5, "2.5"), (True, "True"), ("2", "'2'")):
        with pytest.raises(InputError, match=rf"^`ncols` must be a single positive integer; "
                           rf"got {shown}\.$"):
            rule(bad, "ncols")
    assert OPTIONAL_STRING("t", "title") == "t" and OPTIONAL_STRING(None, "title") is None
    with pytest.raises(InputTypeError, match=r"^`title` must be a string or None; got bytes\.$"):
        OPTIONAL_STRING(b"t", "title")
    with pytest.raises(TypeError, match=r"has no parameter 'nbins'"):
        validate_params(nbins=rule)(lambda bins=10: bins)


def test_the_bins_and_bandwidth_rules_refuse_other_parameters():
    """The BINS and BANDWIDTH rules check only a parameter of their own name (their
    messages name it); given another, they raise a ValueError (a bug in calibr), not an
    InputError."""
    with pytest.raises(ValueError, match="the BINS rule is for `bins`, not `nbins`"):
        BINS(5, "nbins")
    with pytest.raises(ValueError, match="the BANDWIDTH rule is for `bandwidth`, not `h`"):
        BANDWIDTH(1.0, "h")
    assert BINS(5.0, "bins") == 5 and BANDWIDTH("median", "bandwidth") == "median"


def test_a_level_is_strictly_between_zero_and_one():
    """The LEVEL rule takes numbers strictly between 0 and 1: 0 and 1 themselves are
    refused, also as calibration_table's ``confidence_level``."""
    for bad in (0.0, 1.0, 0, 1):
        with pytest.raises(InputError, match=r"strictly between 0 and 1"):
            LEVEL(bad, "level")
    assert LEVEL(0.5, "level") == 0.5
    with pytest.raises(InputError, match=r"^`confidence_level` must be a number strictly between 0 "
                       r"and 1; got 1\.$"):
        calibr.calibration_table([0.2, 0.7], [0, 1], confidence_level=1)


def test_integer_rule_takes_integral_floats_only_when_allowed():
    """The Integer rule refuses floats unless ``integral_float=True``; then it takes whole
    floats (as an int) and still refuses 2.5, NaN, inf and booleans.
    reliability_diagram's ``ncols`` takes no float."""
    strict = Integer(1, 5)
    with pytest.raises(InputError, match=r"^`n` must be an integer from 1 to 5; got 2\.0\.$"):
        strict(2.0, "n")
    loose = Integer(1, 5, integral_float=True)
    assert loose(3.0, "n") == 3 and type(loose(3.0, "n")) is int
    assert loose(np.float64(5.0), "n") == 5
    for bad in (2.5, math.nan, math.inf, True, np.True_):
        with pytest.raises(InputError, match=r"^`n` must be an integer from 1 to 5; got "):
            loose(bad, "n")
    # public: reliability_diagram's ncols takes no float
    require("matplotlib").use("Agg")
    from calibr.plot import reliability_diagram

    table = calibr.calibration_table([0.2, 0.6, 0.7], [0, 1, 1], bins=2)
    with pytest.raises(InputError, match=r"^`ncols` must be a single positive integer; "
                       r"got 1\.0\.$"):
        reliability_diagram(table, ncols=1.0)


def test_integer_rule_bounds_are_inclusive_and_named():
    """The Integer rule's bounds are inclusive, and its message states them: "from 2 to 4"
    with both, "of at least 1,000" with a lower bound only."""
    rule = Integer(2, 4)
    assert [rule(v, "n") for v in (2, 3, 4)] == [2, 3, 4]
    for bad in (1, 5):
        with pytest.raises(InputError, match=rf"^`n` must be an integer from 2 to 4; got {bad}\.$"):
            rule(bad, "n")
    with pytest.raises(InputError, match=r"^`n` must be an integer of at least 1,000; got 999\.$"):
        Integer(1000)(999, "n")
    assert Integer(1000)(1000, "n") == 1000


def test_the_lower_bound_of_an_integer_option_is_allowed():
    """reliability_diagram's ``ncols`` of 1, the rule's lower bound, is taken; 0 is
    refused."""
    require("matplotlib").use("Agg")
    from calibr.plot import reliability_diagram

    table = calibr.calibration_table([0.2, 0.6, 0.7], [0, 1, 1], bins=2)
    reliability_diagram(table, ncols=1)
    with pytest.raises(InputError, match=r"`ncols` must be a single positive integer; got 0\."):
        reliability_diagram(table, ncols=0)


def test_a_float_bins_of_exactly_one_is_one_bin():
    """A float ``bins`` of exactly 1.0 is one bin, as the integer 1; 0.999 is refused."""
    assert calibr.ece([0.2, 0.4], [0, 1], bins=1.0) == calibr.ece([0.2, 0.4], [0, 1], bins=1)
    with pytest.raises(InputError, match="`bins` must be a single positive integer"):
        calibr.ece([0.2, 0.4], [0, 1], bins=0.999)


def test_check_options_checks_the_given_names_only():
    """check_options() applies the rules of the options given and passes the others
    through; an option not given is not read."""
    rules = {"bins": BINS, "type": Options("classwise", "confidence")}
    assert check_options(rules, {"bins": 5.0, "other": "x"}) == {"bins": 5, "other": "x"}
    assert check_options(rules, {}) == {}
    with pytest.raises(InputError, match=r"`bins` must be a single positive integer"):
        check_options(rules, {"bins": 2.5})


def test_a_ruled_first_positional_parameter_is_checked():
    """validate_params checks a ruled parameter passed by position, the first one included,
    as well as one passed by keyword."""

    @validate_params(bins=BINS)
    def nbins(bins=10):
        return bins

    assert nbins(5.0) == 5 and type(nbins(5.0)) is int
    with pytest.raises(InputError, match=r"`bins` must be a single positive integer; got 2\.5"):
        nbins(2.5)
    assert nbins() == 10 and nbins(bins=3.0) == 3


# ----------------------------------------------------------------- convert, finish, direct
#
# prepare() is convert() then finish(); the binned metrics take convert()'s
# direct() arrays and check the values in their own pass. direct() must only
# offer what finish() would return unchanged (up to the class-code offset).


def _direct_cases():
    rng = np.random.default_rng(8)
    p = rng.random(40)
    y = (rng.random(40) < p).astype(np.int64)
    P = rng.dirichlet(np.ones(3), 40)
    codes = rng.integers(1, 4, 40)
    cat = pd.Categorical.from_codes(codes - 1, categories=["a", "b", "c"])
    direct = [  # (p, y, kwargs): direct() is not None
        (p, y, {}), (p, y.astype(bool), {}), (p, y.astype(np.int8), {}),
        (p, y.astype(np.float32), {}), (p, y.astype(np.uint64), {}), (list(p), list(y), {}),
        (pd.Series(p), pd.Series(y), {}), (P, codes, {}), (P, codes.astype(np.float64), {}),
        (P, codes.astype(np.uint8), {}), (P, cat, {}), (P, codes, {"na_rm": True}),
    ]
    full = [  # the labels need the input layer: direct() is None
        (p, y, {"classes": [0, 1]}), (p, y.astype(object), {}),
        (p, np.array(["n", "y"])[y], {"classes": ["n", "y"]}),
        (p, pd.Categorical(y), {}), (P, codes, {"classes": [1, 2, 3]}), (P, codes.astype(bool), {}),
        (pd.DataFrame(P, columns=list("abc")), np.array(list("abc"))[codes - 1], {}),
        (P, codes.astype(object), {}), (P, pd.Categorical.from_codes(codes - 1, list("abcd")), {}),
    ]
    return direct, full


def test_prepare_is_convert_then_finish_and_direct_offers_only_what_finish_returns():
    from calibr._input import convert, finish

    direct, full = _direct_cases()
    for p, y, kw in direct + full:
        conv = convert(p, y, **kw)
        try:
            prep = prepare(p, y, **kw)
        except InputError as err:  # the same refusal from finish()
            with pytest.raises(InputError, match=re.escape(str(err))):
                finish(conv)
            continue
        again = finish(conv)
        np.testing.assert_array_equal(again.p, prep.p)
        np.testing.assert_array_equal(again.y, prep.y)
        assert (again.binary, again.classes) == (prep.binary, prep.classes)
        d = conv.direct()
        if d is None:
            continue
        dp, dy, offset = d
        assert dp.flags.c_contiguous and dy.flags.c_contiguous
        np.testing.assert_array_equal(dp, prep.p)
        np.testing.assert_array_equal(dy.astype(np.float64) - offset, prep.y)
    for p, y, kw in direct:
        assert convert(p, y, **kw).direct() is not None
    for p, y, kw in full:
        assert convert(p, y, **kw).direct() is None, (type(y), kw)


def test_convert_raises_what_needs_no_pass_over_the_values():
    """Types, shapes, lengths and indexes are refused by convert() with prepare()'s
    messages; bad values pass convert() and are refused by finish()."""
    from calibr._input import convert, finish

    with pytest.raises(InputError, match=r"^`p` and `y` must have the same length; got 3 and 2"):
        convert([0.1, 0.2, 0.3], [0, 1])
    with pytest.raises(InputError, match=r"^`p` and `y` must not be empty; got 0 observations"):
        convert([], [])
    with pytest.raises(InputError, match=r"^`na_rm` must be True or False; got 1\.$"):
        convert([0.1], [0], na_rm=1)
    conv = convert([0.1, 1.5], [0, 1])
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, the "
                       r"first at position 1 \(1\.5\)\.$"):
        finish(conv)


# ----------------------------------------------------------------- the layer itself

_INPUT_DIR = Path(calibr.__file__).parent / "_input"


def _imported_modules(path):
    """(level, module) of each import statement of a source file."""
    import ast

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((0, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or ""


def test_the_input_layer_imports_only_the_kernels_numpy_pandas_and_the_stdlib():
    """calibr._input sits below every other part of calibr: it imports its own
    modules, calibr._kernels (the one-pass scans), numpy, pandas and the standard
    library, never a metric, a verb or the command line."""
    import sys

    # narwhals, polars and pyarrow: imported by frames.py only for their own objects
    allowed = set(sys.stdlib_module_names) | {"numpy", "pandas", "narwhals", "polars", "pyarrow"}
    files = sorted(_INPUT_DIR.glob("*.py"))
    assert len(files) >= 9
    for path in files:
        for level, module in _imported_modules(path):
            if level == 1:
                continue  # a module of the layer
            if level == 2:
                assert module.split(".")[0] == "_kernels", (path.name, module)
                continue
            assert level == 0 and module.split(".")[0] in allowed, (path.name, module)


def test_the_input_layer_exports_each_modules_names_once():
    """``calibr._input`` lists each public name of its modules (their ``__all__``)
    and resolves it to that module's object; nothing else is exported."""
    import importlib

    import calibr._input as layer

    seen = {}
    for path in sorted(_INPUT_DIR.glob("*.py")):
        if path.stem == "__init__":
            continue
        module = importlib.import_module(f"calibr._input.{path.stem}")
        for name in module.__all__:
            assert name not in seen, (name, seen.get(name), path.stem)
            seen[name] = path.stem
            assert getattr(layer, name) is getattr(module, name)
    assert layer._SOURCES == seen
    assert sorted(layer.__all__) == sorted(seen)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        layer.nope  # noqa: B018


# ----------------------------------------------------------------- the errors


def _error_calls(path):
    """(line, has param=) of each InputError(...) / InputTypeError(...) call in a file."""
    import ast

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in ("InputError", "InputTypeError"):
                yield node.lineno, any(k.arg == "param" for k in node.keywords)


def test_every_error_calibr_raises_names_its_argument_in_param():
    """Each InputError and InputTypeError made anywhere in calibr passes ``param=``
    (the argument it is about, or an explicit None for an error of no argument),
    so that code handling it reads the attribute, never the wording."""
    root = Path(calibr.__file__).parent
    calls = {f"{path.relative_to(root)}:{line}": ok
             for path in sorted(root.rglob("*.py")) for line, ok in _error_calls(path)}
    assert len(calls) > 200  # the scan sees calibr's raises
    assert [where for where, ok in calls.items() if not ok] == []


@pytest.mark.parametrize("call, param", [
    (lambda: calibr.ece([0.2, 0.8], [0, 1], bins=0), "bins"),
    (lambda: calibr.ece([0.2, 1.8], [0, 1]), "p"),
    (lambda: calibr.ece([0.2, 0.8], [0, 2]), "y"),
    (lambda: calibr.ece([0.2, 0.8], [0, 1, 1]), "y"),
    (lambda: calibr.ece([0.2, 0.8], [0, 1], weights=[1, -1]), "weights"),
    (lambda: calibr.ece([0.2, 0.8], [0, 1], na_rm="yes"), "na_rm"),
    (lambda: calibr.ece(P3, ["a", "b", "c", "a"], classes=["a", "b", "b"]), "classes"),
    (lambda: calibr.ece(pd.DataFrame(P3, columns=["a", "b", "c"]), ["a", "b", "c", "d"]), "y"),
    (lambda: calibr.ece(iter([0.2]), [0]), "p"),
    (lambda: calibr.skce([0.2, 0.8], [0, 1], bandwidth=-1), "bandwidth"),
    (lambda: calibr.bootstrap([0.2, 0.8], [0, 1], rng=-1), "rng"),
    (lambda: calibr.paired_bootstrap([0.2, 0.8], [0.1], [0, 1]), "p_b"),
    (lambda: calibr.paired_bootstrap([0.2, 1.8], [0.1, 0.3], [0, 1]), "p_a"),
    (lambda: calibr.summarise(pd.DataFrame({"p": [0.2], "y": [0]}), "p", "y", metrics="nope"),
     "metrics"),
    (lambda: calibr.summarise(pd.DataFrame({"p": [0.2], "y": [0]}), "p", "z"), "y"),
])
def test_errors_carry_the_argument_and_survive_pickling(call, param):
    """``err.param`` is the argument the message is about; a pickled error keeps
    its message, ``param`` and ``code`` (errors cross process boundaries: Dask's
    workers, multiprocessing), and shows as calibr's public name."""
    import pickle

    with pytest.raises((InputError, InputTypeError)) as caught:
        call()
    err = caught.value
    assert err.param == param, str(err)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err)
    assert (back.param, back.code, back.parts) == (err.param, err.code, err.parts)

    assert type(err).__module__ == "calibr" and getattr(calibr, type(err).__name__) is type(err)


def test_zero_total_weights_have_a_code_and_reworded_errors_keep_it():
    """The one rule a caller handles apart (the Dask backend: a partition whose kept
    weights are all 0 adds nothing) has ``code="zero_total"``; a reworded error
    (a group or partition named in its message) keeps type, param and code."""
    from calibr._input import reworded

    with pytest.raises(InputError, match=r"^`weights` must have a positive total") as caught:
        calibr.ece([0.2, 0.8], [0, 1], weights=[0, 0])
    assert (caught.value.param, caught.value.code) == ("weights", "zero_total")
    again = reworded(caught.value, f"{caught.value} [group g='a']")
    assert type(again) is InputError and (again.param, again.code) == ("weights", "zero_total")
    assert str(again).endswith("[group g='a']")
    renamed = reworded(InputTypeError("`p` must ...", param="p"), "`p_a` must ...", param="p_a")
    assert type(renamed) is InputTypeError and renamed.param == "p_a"
    with pytest.raises(InputError) as other:  # a negative weight: another rule
        calibr.ece([0.2, 0.8], [0, 1], weights=[1, -1])
    assert other.value.code is None
    assert type(reworded(KeyError("k"), "m")) is KeyError  # other exceptions: their type

    class Picky(TypeError):
        def __init__(self, a, b):
            super().__init__(a, b)

    assert type(reworded(Picky(1, 2), "m")) is InputTypeError


def test_messages_keep_the_arguments_they_name_as_terms():
    """A message is text and terms (``err.parts``): its subject ``param`` and the
    arguments written with ``arg``. ``renamed`` renames terms and ``param`` only,
    never the text (a value shown, such as the label "`p`"), and ``extended``
    (a group appended) keeps the terms."""
    from calibr._input import Term, arg, extended

    err = InputError(f"`p` and {arg('y')} disagree; got '`p`'. Pass "
                     f"{arg('na_rm', 'hint', True)}.", param="p", code="c")
    assert str(err) == "`p` and `y` disagree; got '`p`'. Pass na_rm=True."
    assert err.parts == (Term("p"), " and ", Term("y"), " disagree; got '`p`'. Pass ",
                         Term("na_rm", "hint", "True"), ".")
    renamed = err.renamed({"p": "p_a"})
    assert type(renamed) is InputError and (renamed.param, renamed.code) == ("p_a", "c")
    assert str(renamed) == "`p_a` and `y` disagree; got '`p`'. Pass na_rm=True."
    grouped = extended(renamed, f" [group {arg('y')}='a']")
    assert str(grouped) == "`p_a` and `y` disagree; got '`p`'. Pass na_rm=True. [group `y`='a']"
    assert grouped.parts[-2:] == (Term("y"), "='a']") and grouped.param == "p_a"
    assert str(extended(ValueError("k"), f" {arg('y')}")) == "k `y`"  # others: text only
    with pytest.raises(ValueError, match="unknown form"):
        arg("p", "nope")
    # the delimiters of a term without the rest of it (not made by arg(): a column
    # name shown as is) are text, not a term, and the error is still made
    for stray in ("\ue000name\ue001q", "\ue000q\ue002", "\ue000name\ue002"):
        err = InputError(f"`p` has {stray} r.", param="p")
        assert [t for t in err.parts if isinstance(t, Term)] == [Term("p")]
        assert str(err).startswith("`p` has ") and str(err).endswith(" r.")


# ----------------------------------------------------------------- warnings

_PM = np.random.default_rng(3).dirichlet(np.ones(4), 30)
_YM = np.arange(30) % 4
_ONE = pd.DataFrame({"p": [0.3], "y": [1]})
_BLOCK = pd.DataFrame({"p": [0.0, 1.0, 0.0, 1.0, 0.0], "y": [0, 1, 0, 1, 1]})
_SPIEGEL = pd.DataFrame({"p": [0.5, 0.5, 0.0], "y": [1, 0, 0]})
_MULTI = pd.DataFrame(_PM, columns=[f"p_{k}" for k in range(4)]).assign(y=_YM)
_SEPARATES = "`p` separates the outcomes"
_BCA = "The BCa confidence interval cannot be calculated"
_COST = r"The canonical SKCE costs O\(n\^2 K\) per replicate"
_TEST_COST = r"calibration_test: the canonical SKCE test costs"
_BLOCK_NAN = "the block statistic is 0/0"
_SPIEGEL_NAN = "so Spiegelhalter's statistic is 0/0"

#: Every warning calibr emits, by each public path that reaches it, as a one-line
#: call (its line is where the warning must point).
_WARNINGS = {
    "val_prob variance 0": (lambda: calibr.val_prob([0.5, 0.5, 0.5], [0, 1, 1]), RuntimeWarning, "variance 0"),  # noqa: E501
    "val_prob separation": (lambda: calibr.val_prob([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]), RuntimeWarning, _SEPARATES),  # noqa: E501
    "bootstrap BCa": (lambda: calibr.bootstrap([0.3], [1], n_resamples=5, rng=0, method="bca"), RuntimeWarning, _BCA),  # noqa: E501
    "paired_bootstrap BCa": (lambda: calibr.paired_bootstrap([0.3], [0.4], [1], n_resamples=5, rng=0, method="bca"), RuntimeWarning, _BCA),  # noqa: E501
    "summarise BCa": (lambda: calibr.summarise(_ONE, "p", "y", "ece", confidence_level=0.9, ci_method="BCa", n_resamples=5, rng=0), RuntimeWarning, _BCA),  # noqa: E501
    "bootstrap cost": (lambda: calibr.bootstrap(_PM, _YM, "skce", n_resamples=3, rng=0, classes=range(4)), UserWarning, _COST),  # noqa: E501
    "paired_bootstrap cost": (lambda: calibr.paired_bootstrap(_PM, _PM[::-1], _YM, "skce", n_resamples=3, rng=0, classes=range(4)), UserWarning, _COST),  # noqa: E501
    "calibration_test cost": (lambda: calibr.calibration_test(_PM, _YM + 1, rng=1, n_resamples=10), UserWarning, _TEST_COST),  # noqa: E501
    "summarise test cost": (lambda: calibr.summarise(_MULTI, y="y", p_prefix="p_", metrics="ece", tests="skce", rng=1, classes=range(4)), UserWarning, _TEST_COST),  # noqa: E501
    "calibration_test block": (lambda: calibr.calibration_test(_BLOCK["p"], _BLOCK["y"], "skce_block"), RuntimeWarning, _BLOCK_NAN),  # noqa: E501
    "summarise block": (lambda: calibr.summarise(_BLOCK, "p", "y", "ece", tests="skce_block"), RuntimeWarning, _BLOCK_NAN),  # noqa: E501
    "calibration_test spiegelhalter": (lambda: calibr.calibration_test(_SPIEGEL["p"], _SPIEGEL["y"], "spiegelhalter"), RuntimeWarning, _SPIEGEL_NAN),  # noqa: E501
    "summarise spiegelhalter": (lambda: calibr.summarise(_SPIEGEL, "p", "y", "ece", tests="spiegelhalter"), RuntimeWarning, _SPIEGEL_NAN),  # noqa: E501
}


@pytest.mark.parametrize("case", list(_WARNINGS), ids=list(_WARNINGS))
def test_every_warning_points_at_the_callers_line(case, monkeypatch):
    """calibr._input.warn names the first frame outside calibr: the line that
    called the public function, whatever wrappers (validate_params), verbs
    (summarise running a test or an interval) and helpers lie between."""
    import calibr._inference.bootstrap as bt
    import calibr._inference.calibration_tests as ct

    monkeypatch.setattr(bt, "CANONICAL_WARN_COST", 1.0)
    monkeypatch.setattr(ct, "CANONICAL_WARN_COST", 1e4)
    call, category, match = _WARNINGS[case]
    with pytest.warns(category, match=match) as caught:
        call()
    ours = [w for w in caught if re.search(match, str(w.message))]
    assert ours and all(w.filename == __file__ for w in ours), [w.filename for w in ours]
    assert {w.lineno for w in ours} == {call.__code__.co_firstlineno}


def test_warn_names_the_first_frame_outside_calibr():
    """A warning from calibr's own frames only would name a frame in calibr; one
    frame of another file in between is the one named (a user's callable that a
    verb calls, which then calls calibr)."""
    from calibr._input import warn

    with pytest.warns(UserWarning, match="^here$") as caught:
        warn("here")
    assert caught[0].filename == __file__
    with pytest.warns(RuntimeWarning) as caught:
        calibr.bootstrap([0.3], [1], lambda p, y: calibr.val_prob([0.5, 0.5, 0.5], [0, 1, 1])["Brier"], n_resamples=2, rng=0)  # noqa: E501
    assert {w.filename for w in caught if "variance 0" in str(w.message)} == {__file__}


def test_warn_with_no_frame_outside_calibr_names_the_outermost(monkeypatch):
    """When every frame is calibr's (a file of the package run as a script), the
    warning names the outermost frame, the one that started the stack; here every
    file counts as calibr's."""
    import calibr._input.warning as warning

    monkeypatch.setattr(warning, "_CALIBR_DIR", "")
    outermost = sys._getframe()
    while outermost.f_back is not None:
        outermost = outermost.f_back
    with pytest.warns(UserWarning, match="^here$") as caught:
        warning.warn("here")
    assert (caught[0].filename, caught[0].lineno) == (outermost.f_code.co_filename,
                                                     outermost.f_lineno)


# ----------------------------------------------------------------- lazy backends


def test_lazy_values_go_to_the_backend_of_their_engine(monkeypatch):
    """Each metric and verb asks calibr._input.lazy_backend for the backend of a lazy
    value, found by the module of its type in one table: an engine added to the
    table gets every function, and eager values (lists, numpy, pandas, None) none."""
    import sys
    import types

    from calibr._input import backends as table
    from calibr._input import lazy_backend

    assert lazy_backend([0.2], np.array([0]), pd.Series([1]), pd.DataFrame(), None) is None

    class Lazy:  # a value of a lazy engine "lazyengine"
        pass

    Lazy.__module__ = "lazyengine.frame"
    called = []
    engine = types.ModuleType("calibr_test_engine")
    for name in ("ece", "mce", "skce", "mmce", "summarise", "calibration_table"):
        setattr(engine, name, lambda *a, name=name, **k: called.append(name) or name)
    monkeypatch.setitem(sys.modules, "calibr_test_engine", engine)
    monkeypatch.setitem(table.BACKENDS, "lazyengine", "calibr_test_engine")
    assert lazy_backend([0.2], Lazy()) is engine
    assert calibr.ece(Lazy(), [0]) == "ece" and calibr.mce([0.2], Lazy()) == "mce"
    assert calibr.skce([0.2], [0], weights=Lazy()) == "skce"
    assert calibr.mmce(Lazy(), [0]) == "mmce"
    assert calibr.summarise(Lazy(), "p", "y") == "summarise"
    assert calibr.calibration_table("p", "y", data=Lazy()) == "calibration_table"
    assert called == ["ece", "mce", "skce", "mmce", "summarise", "calibration_table"]
    assert table.BACKENDS["dask"] == "calibr._engines.dask"


def test_eager_polars_and_arrow_columns_are_read_as_numpy_or_pandas():
    """calibr/_input/frames.py: a numeric or boolean column without nulls is handed over
    as a numpy array (a float64 column's own buffer, no copy); one with nulls as a
    pandas Series whose nulls are pandas' missing values."""
    import polars as pl
    import pyarrow as pa

    from calibr._input.frames import eager

    clean = pl.Series([0.2, 0.7, 0.4])
    got = eager(clean, "p")
    assert isinstance(got, np.ndarray) and np.shares_memory(got, clean.to_numpy())
    for column in (pl.Series([1, 0, 1]), pl.Series([True, False, True]),
                   pa.chunked_array([[0.2, 0.7], [0.4]]), pa.array([True, False])):
        assert isinstance(eager(column, "y"), np.ndarray), column
    for column in (pl.Series([0.2, None, 0.4]), pl.Series([True, None, False]),
                   pa.chunked_array([[1, None, 0]])):
        got = eager(column, "y")
        assert isinstance(got, pd.Series), column
        assert got.isna().tolist() == [False, True, False]


def test_the_verbs_return_the_callers_frame_with_the_columns_of_pandas():
    """A verb given a polars or Arrow frame returns one of that type with exactly the
    pandas result's columns and values (no index column added on the way back)."""
    import polars as pl
    import pyarrow as pa

    df = pd.DataFrame({"g": list("aabbb"), "p": [0.2, 0.7, 0.4, 0.9, 0.5],
                       "y": [0, 1, 0, 1, 1]})
    for verb in (lambda d: calibr.summarise(d, "p", "y", by="g"),
                 lambda d: calibr.calibration_table("p", "y", data=d, by="g")):
        want = verb(df)
        for data, kind in ((pl.from_pandas(df), pl.DataFrame),
                           (pa.Table.from_pandas(df, preserve_index=False), pa.Table)):
            got = verb(data)
            assert type(got) is kind
            names = got.columns if kind is pl.DataFrame else got.column_names
            assert list(names) == list(want.columns)
            pd.testing.assert_frame_equal(got.to_pandas(), want, check_dtype=False)


def test_a_polars_object_that_is_not_a_column_or_frame_is_refused():
    """A polars GroupBy (dplyr's group_by, as a polars user writes it) is refused with
    the way to group; another polars object by its type."""
    import polars as pl

    df = pl.DataFrame({"g": list("aabb"), "p": [0.2, 0.7, 0.4, 0.9], "y": [0, 1, 0, 1]})
    for call in (lambda: calibr.summarise(df.group_by("g"), "p", "y"),
                 lambda: calibr.calibration_table("p", "y", data=df.group_by("g"))):
        with pytest.raises(calibr.InputTypeError, match=re.escape(
                "`data` is a polars GroupBy; pass the DataFrame itself and name its groups "
                'with `by` (e.g. by="g"): calibr groups polars data itself.')) as info:
            call()
        assert info.value.param == "data"
    with pytest.raises(calibr.InputTypeError, match=re.escape(
            "`p` must be a column or a frame; got a polars.series.string.StringNameSpace.")):
        calibr.ece(pl.Series(["a"]).str, [1])


def test_an_arrow_object_that_is_not_a_column_is_refused():
    """A pyarrow scalar is neither a column nor a frame: a TypeError naming the
    argument and the type, before anything is read."""
    import pyarrow as pa

    for value, name in ((pa.scalar(0.5), "DoubleScalar"), (pa.scalar(True), "BooleanScalar")):
        with pytest.raises(calibr.InputTypeError, match=re.escape(
                f"`p` must be a column or a frame; got a pyarrow {name}.")) as info:
            calibr.ece(value, [1])
        assert info.value.param == "p"


@pytest.mark.parametrize("by, message", [
    (True, "`by` must be a column name or a non-empty list of column names; got True."),
    (0.5, "`by` must be a column name or a non-empty list of column names; got 0.5."),
    ([], "`by` must be a column name or a non-empty list of column names; got []."),
    (["g", "g"], "`by` must name each column once; 'g' appears 2 times."),
])
def test_by_names_columns_once(by, message):
    """A verb's ``by``: a column name (not a bool or a float) or a non-empty list of
    them, each once; the same for pandas and polars data."""
    import polars as pl

    df = pd.DataFrame({"p": [0.2, 0.7, 0.4, 0.9], "y": [0, 1, 0, 1], "g": list("aabb")})
    for data in (df, pl.from_pandas(df)):
        for call in (lambda d=data: calibr.summarise(d, "p", "y", metrics=["ece"], by=by),
                     lambda d=data: calibr.calibration_table("p", "y", data=d, by=by)):
            with pytest.raises(calibr.InputError, match=f"^{re.escape(message)}$") as info:
                call()
            assert info.value.param == "by"


# ----------------------------------------------------------------- arrays of other libraries


def test_cpu_arrays_of_other_libraries_are_read_in_place():
    """A CPU torch tensor, JAX array or array-api-strict array of float64 (and
    int64 labels, float64 weights) reaches the metrics as a view of its own
    memory: no copy (docs/definitions.md, "Arrays of other libraries")."""
    torch = require("torch")
    jax = require("jax")
    xs = require("array_api_strict")
    gen = np.random.default_rng(11)
    p = gen.random(1000)
    y = (gen.random(1000) < p).astype(np.int64)
    w = gen.random(1000)
    pm = gen.dirichlet(np.ones(3), 1000)
    ym = gen.integers(1, 4, 1000)

    t, tw, tm = torch.from_numpy(p.copy()), torch.from_numpy(w.copy()), torch.from_numpy(pm.copy())
    prep = prepare(t, torch.from_numpy(y), weights=tw)
    assert np.shares_memory(prep.p, t.numpy()) and np.shares_memory(prep.weights, tw.numpy())
    assert np.shares_memory(prepare(tm, torch.from_numpy(ym)).p, tm.numpy())
    graph = torch.tensor(p, requires_grad=True)  # read through detach(): still a view
    assert prepare(graph, y).p.ctypes.data == graph.data_ptr()

    with jax.enable_x64(True):
        j, jm = jax.numpy.asarray(p), jax.numpy.asarray(pm)
    assert prepare(j, y).p.ctypes.data == j.unsafe_buffer_pointer()
    assert prepare(jm, ym).p.ctypes.data == jm.unsafe_buffer_pointer()

    x = xs.asarray(p)
    assert np.shares_memory(prepare(x, xs.asarray(y)).p, x._array)  # its numpy buffer


def test_a_tensor_that_requires_grad_is_read_outside_its_graph():
    """Reading a tensor in an autograd graph (a leaf and a result of it) leaves
    the graph, ``.grad`` and the tensors' versions as they were, and the
    gradient computed afterwards is the one without calibr."""
    torch = require("torch")
    gen = np.random.default_rng(12)
    p = gen.random(50)
    y = (gen.random(50) < p).astype(np.int64)
    leaf = torch.tensor(p, requires_grad=True)
    scaled = leaf * 0.5  # not a leaf: it has a grad_fn
    loss = (scaled * scaled).sum()
    fn, versions = scaled.grad_fn, (leaf._version, scaled._version)
    assert calibr.ece(leaf, y) == calibr.ece(p, y)
    assert calibr.mce(scaled, torch.from_numpy(y)) == calibr.mce(p * 0.5, y)
    assert leaf.grad is None and leaf.requires_grad and leaf.is_leaf
    assert scaled.grad_fn is fn and scaled.requires_grad
    assert (leaf._version, scaled._version) == versions
    loss.backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), 2 * 0.5 * (p * 0.5))


class _Device:
    """An array on a DLPack device that is not the CPU (no GPU here: the path a
    CUDA tensor or a CuPy array takes). ``dlpack_1`` producers hand over a host
    copy when asked through DLPack 1.0's ``dl_device``; older ones take no
    keywords and offer a method (``to_host``: "cpu" as torch, "get" as CuPy)."""

    def __init__(self, host: np.ndarray, dlpack_1: bool, to_host: str | None = None):
        self.host, self.dlpack_1, self.copies = host, dlpack_1, 0
        if to_host is not None:
            setattr(self, to_host, self._to_host)

    def _to_host(self) -> np.ndarray:
        self.copies += 1
        return self.host.copy()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)

    def __dlpack__(self, **kwargs):
        if not self.dlpack_1:
            if kwargs.keys() - {"stream"}:
                raise TypeError(f"__dlpack__() got unexpected keywords {sorted(kwargs)}")
            raise BufferError("device memory cannot be read by the host in place")
        if kwargs.get("dl_device") is None or tuple(kwargs["dl_device"]) != (1, 0):
            raise BufferError("device memory cannot be read by the host in place")
        self.copies += 1
        return self.host.copy().__dlpack__(max_version=kwargs.get("max_version"))


@pytest.mark.parametrize("dlpack_1, to_host", [(True, None), (False, "cpu"), (False, "get")],
                         ids=["dl_device", "cpu()", "get()"])
def test_a_gpu_array_is_copied_to_the_host_once(dlpack_1, to_host):
    from calibr._input.frames import host_array

    p = np.array([0.1, 0.6, 0.8, 0.3])
    y = np.array([0, 1, 1, 0])
    dev = _Device(p, dlpack_1, to_host)
    arr = host_array(dev, "p")
    np.testing.assert_array_equal(arr, p, strict=True)
    assert dev.copies == 1 and not np.shares_memory(arr, p)
    dev = _Device(p, dlpack_1, to_host)
    assert calibr.ece(dev, y) == calibr.ece(p, y) and dev.copies == 1


def test_a_gpu_array_that_cannot_reach_the_host_is_refused():
    with pytest.raises(InputTypeError, match=re.escape(
            "`p` is a test_validation._Device on DLPack device 2 (not the CPU) that calibr "
            "cannot copy to the host (TypeError: __dlpack__() got unexpected keywords "
            "['copy', 'dl_device', 'max_version']); copy it to the CPU first (e.g. x.cpu() "
            "or x.get()).")) as info:
        calibr.ece(_Device(np.array([0.5, 0.5]), dlpack_1=False), [0, 1])
    assert info.value.param == "p"


def test_dtypes_numpy_lacks_go_through_the_array_api_or_are_refused():
    """bfloat16: a JAX array (an array-API namespace) is cast to float32, which
    holds each value exactly; a torch tensor (no namespace) is refused with the
    fix, never guessed at."""
    torch = require("torch")
    jnp = require("jax.numpy")
    from calibr._input.frames import host_array

    p = np.array([2.0**-30, 0.5, 0.75, 0.9375])  # exact in bfloat16 (2**-30 is 0 in float16)
    y = [0, 1, 1, 1]
    read = host_array(jnp.asarray(p, dtype=jnp.bfloat16), "p")
    assert read.dtype == np.float32 and np.array_equal(read, p)
    assert calibr.ece(jnp.asarray(p, dtype=jnp.bfloat16), y) == calibr.ece(p, y)
    with pytest.raises(InputTypeError, match=re.escape(
            "`p` is a torch.Tensor of dtype torch.bfloat16 that numpy cannot read (TypeError: "
            "Got unsupported ScalarType BFloat16); convert it to float32 or float64 (or "
            "integer labels) first.")):
        calibr.ece(torch.tensor(p, dtype=torch.bfloat16), y)
    with pytest.raises(InputTypeError, match=r"^`y` is a torch\.Tensor of dtype torch\.bfloat16"):
        calibr.ece(p, torch.tensor(y, dtype=torch.bfloat16))
    # what numpy reads but calibr refuses gets the message of a numpy array of it
    with pytest.raises(InputTypeError, match=re.escape(
            "`p` must be numeric (integer or float); got dtype complex128, the first value "
            "at position 0")):
        calibr.ece(torch.tensor(p, dtype=torch.complex128), y)
    with pytest.raises(InputError, match=re.escape(
            "`p` must be a vector or a matrix; got an array of shape (2, 2, 1).")):
        calibr.ece(torch.zeros(2, 2, 1, dtype=torch.float64), [0, 1])


def test_an_arrow_pycapsule_object_pyarrow_cannot_import_is_refused():
    class Broken:
        def __arrow_c_stream__(self, requested_schema=None):
            raise ValueError("stream already consumed")

    with pytest.raises(InputTypeError, match=re.escape(
            "`y` is a test_validation.Broken with the Arrow PyCapsule interface that pyarrow "
            "cannot import (ValueError: stream already consumed).")) as info:
        calibr.ece([0.5, 0.5], Broken())
    assert info.value.param == "y"


def test_a_torch_p_with_a_jax_y_is_read_as_two_arrays():
    """Mixed libraries in one call: each argument is read by the one rule on its
    own (no device is moved to another's), and the number is numpy's."""
    torch = require("torch")
    jax = require("jax")
    xs = require("array_api_strict")
    gen = np.random.default_rng(13)
    p = gen.random(40)
    y = (gen.random(40) < p).astype(np.int64)
    w = gen.random(40)
    with jax.enable_x64(True):
        jy = jax.numpy.asarray(y)
    assert (calibr.ece(torch.from_numpy(p), jy, weights=xs.asarray(w))
            == calibr.ece(p, y, weights=w))
    with pytest.raises(InputError, match=re.escape(
            "`p` and `y` must have the same length; got 40 and 39.")):
        calibr.ece(torch.from_numpy(p), jy[:39])


def test_breaks_given_as_an_array_of_another_library_are_numpys_breaks():
    """``bins=`` breaks are read by the same rule as ``p``: a torch tensor (one
    that requires grad too), a JAX or array-api-strict array or an Arrow array of
    breaks gives the number of the numpy breaks."""
    torch = require("torch")
    jax = require("jax")
    xs = require("array_api_strict")
    pa = require("pyarrow")
    gen = np.random.default_rng(14)
    p = gen.random(200)
    y = (gen.random(200) < p).astype(np.int64)
    breaks = np.array([0.0, 0.3, 0.55, 1.0])
    want = calibr.ece(p, y, bins=breaks)
    assert want != calibr.ece(p, y, bins=3)
    with jax.enable_x64(True):
        jbreaks = jax.numpy.asarray(breaks)
    for b in (torch.from_numpy(breaks.copy()), torch.tensor(breaks, requires_grad=True),
              jbreaks, xs.asarray(breaks), pa.array(breaks)):
        assert calibr.ece(p, y, bins=b) == want, type(b)
        assert calibr.calibration_table(p, y, bins=b).equals(
            calibr.calibration_table(p, y, bins=breaks))


def test_calibr_torchmetrics_reads_arrays_by_the_same_rule():
    """calibr.torchmetrics (its own dtype rules, torchmetrics') reads tensors and
    other libraries' arrays through the input layer's rule: a GPU array is copied
    once, a JAX or array-api-strict array gives the numbers of its numpy values."""
    torch = require("torch")
    jax = require("jax")
    xs = require("array_api_strict")
    from calibr.torchmetrics import binary_calibration_error

    gen = np.random.default_rng(15)
    p = gen.random(300)
    y = (gen.random(300) < p).astype(np.int64)
    want = binary_calibration_error(p, y)
    dev = _Device(p, dlpack_1=True)
    assert binary_calibration_error(dev, y) == want and dev.copies == 1
    with jax.enable_x64(True):
        jp = jax.numpy.asarray(p)
    assert binary_calibration_error(jp, y) == want
    assert binary_calibration_error(xs.asarray(p), xs.asarray(y)) == want
    leaf = torch.tensor(p, requires_grad=True)
    assert binary_calibration_error(leaf, torch.from_numpy(y)) == want
    assert leaf.grad is None and leaf.requires_grad
