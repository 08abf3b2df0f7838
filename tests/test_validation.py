"""The input layer (calibr._validation): conversions, labels, and every error, pinned."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import calibr
from calibr._validation import (
    InputError,
    check_bandwidth,
    check_bins,
    check_choice,
    prepare,
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
    (["a", "b"], [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype <U1\.$"),
    ([True, False], [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype bool\.$"),
    (pd.DataFrame({"a": ["x", "y"], "b": [0.5, 0.5]}), ["a", "b"], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got columns of dtype str\.$"),
    # pandas data that numpy would refuse are refused too, never converted
    (pd.Series(["0.1", "0.9"]), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype str\.$"),
    (pd.Series([True, False]), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype bool\.$"),
    (pd.Series([True, False], dtype="boolean"), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype boolean\.$"),
    (pd.Series(pd.to_timedelta([0, 0])), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype timedelta64\[ns\]\.$"),
    (pd.Series([0.1 + 0j, 0.9 + 0j]), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype complex128\.$"),
    (pd.Series(pd.Categorical([0.1, 0.9])), [0, 1], {}, TypeError,
     r"^`p` must be numeric \(integer or float\); got dtype category\.$"),
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
     r"\(sum 0\.8999999999999999\)\.$"),
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
    with pytest.raises(InputError, match=r"^`type` must be one of 'classwise', 'confidence'; got "):
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
