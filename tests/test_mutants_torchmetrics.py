"""Tests that fail on mutants of ``calibr/torchmetrics.py`` that ``scripts/mutate.py``
let through with its parity tests (test_torchmetrics_contract, _compat,
test_mutants and test_boundaries).

Each test names in its docstring the mutants it kills (line of
``calibr/torchmetrics.py`` at the commit the mutants were made from, and the
change). The expected values are worked by hand (binned by the bins of
``torch.linspace(0, 1, n_bins + 1)``, away from their edges), and every message
is pinned, so that a mutant which only swaps one error for another is caught.
Tests that need torch take it through ``conftest.require`` (a failure, not a
skip, in CI).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import require

from calibr import InputError
from calibr.torchmetrics import (
    BinaryCalibrationError,
    InputRuntimeError,
    binary_calibration_error,
    multiclass_calibration_error,
)

#: p = 0.2, 0.7, 0.4 with y = 0, 1, 1: three bins of 15, gaps 0.2, 0.3, 0.6
P3, Y3, ECE3 = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1]), 1.1 / 3


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# --------------------------------------------------------------------------
# input conversion


def test_a_repr_of_81_characters_is_too_long_to_show():
    """103 (``len(text) > 80`` -> ``> 81``): a repr of 81 characters (a string of
    79) is named by its type, one of 80 (a string of 78) is shown."""
    for bad, shown in (("x" * 79, "an object of type str"), ("x" * 78, "'" + "x" * 78 + "'")):
        with pytest.raises(InputError, match=r"^`norm` must be one of 'l1', 'l2', 'max'; "
                                             rf"got {shown}\.$"):
            binary_calibration_error(P3, Y3, norm=bad)


def test_complex_tensor_is_refused_as_complex():
    """246 (``raise`` -> ``pass`` for a complex tensor): refused as not real, not
    converted and then refused for its numpy dtype."""
    torch = require("torch")
    with pytest.raises(InputError, match=r"^`preds` must hold real numbers; got a tensor of "
                                         r"dtype torch\.complex64\.$"):
        binary_calibration_error(torch.tensor([0.2 + 0j, 0.7 + 0j]), torch.tensor([0, 1]))


def test_nullable_pandas_booleans_become_float_with_nan():
    """265 (``not is_complex_dtype(d)`` -> ``is_complex_dtype(d)``): a nullable
    "boolean" Series with a missing value, which pandas gives numpy as an object
    array, is read as float64 with NaN (so refused as a missing label, at its
    position), not refused as an object array; without the missing value it is
    read as 0 and 1."""
    target = pd.Series([False, None, True], dtype="boolean")
    assert target.to_numpy().dtype == object  # what the conversion has to handle
    with pytest.raises(InputError, match=r"^`target` must not contain NaN \(a missing label\); "
                                         r"1 value does, the first at position 1\.$"):
        binary_calibration_error(P3, target)
    got = binary_calibration_error(P3, pd.Series(Y3.astype(bool), dtype="boolean"))
    assert got == pytest.approx(ECE3, rel=1e-12)


def test_a_bfloat16_default_dtype_is_refused_for_lists():
    """315 (``raise`` -> ``pass`` when torch's default dtype is bfloat16): a list of
    Python floats would be bfloat16 in torch, which calibr does not reproduce."""
    torch = require("torch")
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with pytest.raises(InputError, match=r"^`preds` is a list, and torch's default dtype "
                                             r"is bfloat16, which calibr does not reproduce"):
            binary_calibration_error([0.2, 0.7], [0, 1])
    finally:
        torch.set_default_dtype(before)


def test_list_dtypes_are_promoted_as_torch_tensor_does():
    """332 (``a.kind == "b"`` -> ``!=`` in ``_promote``), 335 (``max`` -> ``min`` of
    two float widths) and 376 (``dtypes[1:]`` -> ``dtypes[2:]``): a list of a Python
    float and an int is float32 (torch: float32 wins over int64), and one of a numpy
    float64 and a Python float (float32) is float64, the wider.

    By hand, two bins: 0.25 has gap 0.25 and 1.0 its own bin with gap 0 (ECE 0.125);
    0.25 and 0.75 both have gap 0.25 (ECE 0.25)."""
    got = binary_calibration_error([0.25, 1], [0, 1], n_bins=2)
    assert got.dtype == np.float32 and got == pytest.approx(0.125, rel=1e-6)
    for preds in ([np.float64(0.25), 0.75], [0.25, np.float64(0.75)]):
        got = binary_calibration_error(preds, [0, 1], n_bins=2)
        assert got.dtype == np.float64 and got == pytest.approx(0.25, rel=1e-12)


def test_nested_lists_take_the_dtype_of_their_elements():
    """367 (``if not nested: break`` -> ``if nested: break``): the dtype of a nested
    list is that of its innermost elements, not the default float: nested ints are
    label preds (refused), nested numpy float64 give a float64 result."""
    with pytest.raises(InputError, match=r"^`preds` must be a float array of probabilities or "
                                         r"logits; got dtype int64\.$"):
        binary_calibration_error([[0, 1]], [[0, 1]])
    got = binary_calibration_error([[np.float64(0.25)], [np.float64(0.75)]], [[0], [1]], n_bins=2)
    assert got.dtype == np.float64 and got == pytest.approx(0.25, rel=1e-12)


# --------------------------------------------------------------------------
# targets


def test_uint64_targets_beyond_int64_are_refused():
    """396 (``kind == "u"`` -> ``!=``) and 398 (``over.any()`` -> ``.all()``): a uint64
    target above 2**63 - 1 is refused where it is, even when the others fit (it
    would wrap to a negative code)."""
    target = np.array([0, 2**63], dtype=np.uint64)
    with pytest.raises(InputError, match=r"^`target` must hold integers within the int64 range "
                                         r"\(torch's class labels are int64\); 1 value does not, "
                                         r"the first at position 1 \(9223372036854775808\)\.$"):
        binary_calibration_error(np.array([0.2, 0.7]), target)


def test_ignore_index_with_bool_and_narrow_integer_targets():
    """406 (``kind in "iu"`` -> ``not in``), 419 (``info.min <= ignore_index <=
    info.max`` with ``.max`` -> ``.min``, or either ``<=`` -> ``<``) and 426
    (``hit.any()`` -> ``.all()``): an ``ignore_index`` is checked against integer
    targets only (a bool target has no integer range), one that fits the dtype (its
    two ends included) is compared as it is, and one that torch would wrap onto a
    target value is refused even if only one target has it.

    By hand: bool targets as 0/1 give ECE3; with 5 ignored, 0.2 and 0.7 are left
    (gaps 0.2 and 0.3, ECE 0.25)."""
    got = binary_calibration_error(P3, Y3.astype(bool), ignore_index=-1)
    assert got == pytest.approx(ECE3, rel=1e-12)
    for dtype in (np.int8, np.uint8, np.int32):
        got = binary_calibration_error(P3, np.array([0, 1, 5], dtype=dtype), ignore_index=5)
        assert got == pytest.approx(0.25, rel=1e-12)
    # both ends of the dtype's range fit too (419, either ``<=`` -> ``<``)
    for dtype in (np.int8, np.uint8, np.int16, np.int32):
        for end in sorted({int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)} - {0}):
            got = binary_calibration_error(P3, np.array([0, 1, end], dtype=dtype),
                                           ignore_index=end)
            assert got == pytest.approx(0.25, rel=1e-12), (dtype, end)
    # uint8's lower end is 0: 0.2 is dropped, 0.7 and 0.4 have gaps 0.3 and 0.6
    got = binary_calibration_error(P3, np.array([0, 1, 1], dtype=np.uint8), ignore_index=0)
    assert got == pytest.approx(0.45, rel=1e-12)
    with pytest.raises(InputError, match=r"^`ignore_index` \(-1\) does not fit `target`'s dtype "
                                         r"uint8, so torch would compare it as 255 and ignore the "
                                         r"1 target equal to 255 \(the first at position 2\), "):
        binary_calibration_error(P3, np.array([0, 1, 255], dtype=np.uint8), ignore_index=-1)


@pytest.mark.parametrize(("ignore_index", "wrapped"), [(300, 44), (383, 127), (-129, 127),
                                                       (128, -128)])
def test_ignore_index_wraps_into_a_signed_dtype_as_torch_does(ignore_index, wrapped):
    """423 (``info.min < 0 and wrapped > info.max`` with ``and`` -> ``or`` and ``>`` ->
    ``>=``): for int8, 300 wraps to 44 (no sign change: below 127), 383 to 127 (the
    top value itself), -129 to 127 and 128 to -128; the target holding the wrapped
    value is named. torch itself compares them so."""
    torch = require("torch")
    target = np.array([0, 1, wrapped], dtype=np.int8)
    assert (torch.from_numpy(target) == ignore_index).tolist() == [False, False, True]
    with pytest.raises(InputError, match=rf"^`ignore_index` \({ignore_index}\) does not fit "
                                         rf"`target`'s dtype int8, so torch would compare it as "
                                         rf"{wrapped} and ignore the 1 target equal to {wrapped} "
                                         r"\(the first at position 2\)"):
        binary_calibration_error(P3, target, ignore_index=ignore_index)


def test_nan_targets_are_refused_before_the_binary_check():
    """444 (``nan.any()`` -> ``.all()``): one NaN among valid float targets is refused
    as a missing label (not reported as a value other than 0 and 1)."""
    with pytest.raises(InputError, match=r"^`target` must not contain NaN \(a missing label\); "
                                         r"1 value does, the first at position 1\.$"):
        binary_calibration_error(P3, np.array([0.0, np.nan, 1.0]))


def test_float_targets_must_be_whole_and_below_their_exact_range():
    """453 (``np.abs(values) < 2.0**bits`` -> ``<=``) and 454 (``exact.all()`` ->
    ``.any()``): float32 holds the integers below 2**24 exactly, so 2**24 - 1 is a
    class label (a miss here) and 2**24 is refused; 0.5 is refused next to whole
    numbers.

    By hand: top labels 0 (0.8, right, gap 0.2) and 1 (0.7, wrong, gap 0.7): ECE 0.45."""
    p = np.array([[0.8, 0.2], [0.3, 0.7]])
    ok = np.array([0, 2**24 - 1], dtype=np.float32)
    assert multiclass_calibration_error(p, ok, num_classes=2) == pytest.approx(0.45, rel=1e-6)
    for value, shown, bits in ((2**24, "16777216.0", 24), (0.5, "0.5", 24)):
        with pytest.raises(InputError, match=rf"^`target` holds float32 values, so they must be "
                                             rf"whole numbers \(class labels\) smaller than "
                                             rf"2\*\*{bits} in magnitude, which float32 holds "
                                             rf"exactly; 1 value does not, the first at "
                                             rf"position 1 \({shown}\)\.$"):
            multiclass_calibration_error(p, np.array([0, value], dtype=np.float32), num_classes=2)


def test_a_message_shows_at_most_ten_distinct_target_values():
    """510 (``shown[:10]`` -> ``shown[:11]``) and 488 (``len(shape) <= 1`` -> ``<``: a
    1-D input has positions, not index tuples): of 11 distinct targets, the first
    ten are shown, then "..."; a 2-D one has an index."""
    p = np.linspace(0.05, 0.95, 11)
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 9 values "
                                                r"do not, the first at position 2 \(2\)\. Its "
                                                r"distinct values are \[0, 1, 2, 3, 4, 5, 6, 7, "
                                                r"8, 9, \.\.\.\]\.$"):
        binary_calibration_error(p, np.arange(11))
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 1 value "
                                                r"does not, the first at index \(1, 0\) \(3\)\."):
        binary_calibration_error(P3[:2].reshape(2, 1), np.array([[0], [3]]))


# --------------------------------------------------------------------------
# binary batches


def test_float16_preds_have_their_own_message():
    """476 (``preds.dtype == np.float16`` -> ``!=``)."""
    with pytest.raises(InputError, match=r"^`preds` must be float32 or float64; got float16\. "
                                         r"torchmetrics' float16 path sums counts in float16"):
        binary_calibration_error(P3.astype(np.float16), Y3)


def test_without_validation_only_the_sizes_must_agree():
    """522 (``p.size != t.size`` -> ``==``): with ``validate_args=False`` preds (2, 2)
    and target (4,) are flattened (as torchmetrics does), and different sizes are
    refused; with validation the shapes must be equal.

    By hand: 0.2, 0.7, 0.4, 0.9 with y = 0, 1, 1, 1 fall in four bins of 15, gaps
    0.2, 0.3, 0.6, 0.1: ECE 0.3."""
    p, y = np.array([[0.2, 0.7], [0.4, 0.9]]), np.array([0, 1, 1, 1])
    assert binary_calibration_error(p, y, validate_args=False) == pytest.approx(0.3, rel=1e-12)
    with pytest.raises(InputRuntimeError, match=r"^`preds` and `target` must have the same "
                                                r"shape; got \(2, 2\) and \(4,\)\.$"):
        binary_calibration_error(p, y)
    with pytest.raises(InputRuntimeError, match=r"^`preds` and `target` must have the same "
                                                r"shape; got \(3,\) and \(4,\)\.$"):
        binary_calibration_error(P3, y, validate_args=False)


def test_label_preds_are_checked_then_refused():
    """531 (``np.isin(p, (0, 1)).all()`` -> ``.any()``) and 536 (the final ``raise`` ->
    ``pass``): integer preds with a value other than 0 and 1 fail torchmetrics'
    check (a RuntimeError); valid ones, or any without validation, are refused as
    not float."""
    with pytest.raises(InputRuntimeError, match=r"^`preds` holds the values \[0, 1, 2\], but as "
                                                r"a label \(non-float\) array it may hold only 0 "
                                                r"and 1\.$"):
        binary_calibration_error(np.array([0, 1, 2]), Y3)
    for validate_args in (True, False):
        with pytest.raises(InputError, match=r"^`preds` must be a float array of probabilities "
                                             r"or logits; got dtype int64\.$"):
            binary_calibration_error(np.array([0, 1, 1]), Y3, validate_args=validate_args)


def test_logits_without_validation_keep_any_target():
    """553 (``status == 2`` -> ``!=``): with ``validate_args=False`` a logit batch is
    not target-checked: a target of 2 adds 2 to its bin's accuracy (torchmetrics).

    By hand: 2.0 lies outside [0, 1], so both values are logits: sigmoid 0.5 (bin 7
    of 15, y = 2: gap 1.5) and sigmoid(2) = 0.8808 (bin 13, y = 1)."""
    want = (1.5 + (1.0 - _sigmoid(2.0))) / 2
    got = binary_calibration_error(np.array([0.0, 2.0]), np.array([2, 1]), validate_args=False)
    assert got == pytest.approx(want, rel=1e-12)
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 1 value "
                                                r"does not, the first at position 0 \(2\)\."):
        binary_calibration_error(np.array([0.0, 2.0]), np.array([2, 1]))


def test_binary_nan_at_the_first_position_is_refused():
    """558 (``first_nan >= 0`` -> ``> 0``): a NaN at position 0 is refused."""
    with pytest.raises(InputError, match=r"^`preds` must not contain NaN; 1 value does, the "
                                         r"first at position 0\. "):
        binary_calibration_error(np.array([np.nan, 0.5]), np.array([0, 1]))


def test_binary_logits_drop_the_ignored_samples():
    """564 (``keep = codes != ignore`` -> ``==`` on the logit path): the sigmoid is
    binned for the kept samples only.

    By hand: 2.0 (kept) makes the batch logits; 5.0 is ignored; sigmoid 0.5 (y = 1,
    gap 0.5) and sigmoid(2) (y = 1, gap 1 - 0.8808)."""
    want = (0.5 + (1.0 - _sigmoid(2.0))) / 2
    got = binary_calibration_error(np.array([0.0, 2.0, 5.0]), np.array([1, 1, -1]),
                                   ignore_index=-1)
    assert got == pytest.approx(want, rel=1e-12)


# --------------------------------------------------------------------------
# multiclass batches


def test_multiclass_one_dimensional_preds_need_a_sample_axis():
    """591 (``raise`` -> ``pass`` for ``p.ndim < 2`` with a 0-d target)."""
    with pytest.raises(InputError, match=r"^`preds` must have shape \(N, C, \.\.\.\) and "
                                         r"`target` shape \(N, \.\.\.\); got \(2,\) and \(\)\.$"):
        multiclass_calibration_error(np.array([0.2, 0.8]), np.array(0), num_classes=2)


def test_multiclass_extra_dimensions_are_samples():
    """605 (``p.shape[2:]`` -> ``p.shape[3:]``) and 648 (each ``1`` of
    ``np.moveaxis(p, 1, -1).reshape(-1, p.shape[1])`` made 2): preds (N, C, K) are
    N * K rows of C classes, sample (n, k) being ``p[n, :, k]``.

    By hand, N = 1, C = 2, K = 3, every target 0: rows (0.7, 0.3) right (gap
    0.3), (0.38, 0.62) wrong (0.62), (0.1, 0.9) wrong (0.9), in bins 10, 9 and 13
    of 15: ECE 1.82 / 3."""
    rows = np.array([[0.7, 0.3], [0.38, 0.62], [0.1, 0.9]])
    p = rows.T[np.newaxis]  # (1, 2, 3)
    got = multiclass_calibration_error(p, np.zeros((1, 3), dtype=int), num_classes=2)
    assert got == pytest.approx(1.82 / 3, rel=1e-6)


def test_multiclass_same_dimensions_messages():
    """621 (``p.shape != t.shape`` -> ``==``), 627 (``validate_args and
    p.dtype.kind != "f"`` -> ``or``) and 631 (the distinct-value ``raise`` ->
    ``pass``): preds with as many dimensions as target must have its shape; the
    distinct-value check (a RuntimeError in torchmetrics) is for label preds with
    validation only; float preds of target's shape are refused as lacking C."""
    with pytest.raises(InputError, match=r"^`preds` and `target` must have the same shape when "
                                         r"they have the same number of dimensions; got \(2, 3\) "
                                         r"and \(3, 2\)\.$"):
        multiclass_calibration_error(np.full((2, 3), 0.5), np.zeros((3, 2), dtype=int),
                                     num_classes=3)
    lacking_c = r"^`preds` must have shape \(N, C, \.\.\.\) with one dimension more than `target`"
    with pytest.raises(InputError, match=lacking_c):  # 4 distinct targets, 2 classes
        multiclass_calibration_error(np.array([0.1, 0.2, 0.3, 0.4]), np.arange(4), num_classes=2)
    with pytest.raises(InputError, match=r"^`preds` must be a float array of probabilities or "
                                         r"logits; got dtype int64\.$"):
        multiclass_calibration_error(np.arange(4), np.arange(4), num_classes=2,
                                     validate_args=False)
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold at most 2 distinct values "
                                                r"\(`num_classes`, plus one for `ignore_index` if "
                                                r"given\); found 3\.$"):
        multiclass_calibration_error(np.array([0, 1, 1]), np.array([0, 1, 2]), num_classes=2)


def test_multiclass_logits_in_the_first_row():
    """661 and 669 (``multiclass_accumulate(...) < 0`` -> ``<= 0``, for probabilities
    and for logits) and 666 (``first_nan >= 0`` -> ``>= 1``): the refused row is
    row 0, which is a row number, not "no refusal".

    By hand: row 0 (2, 0) makes the batch logits: softmax (0.8808, 0.1192), right
    (gap 1 - 0.8808); row 1 (0, 0) has softmax (0.5, 0.5), top label 0, right (gap
    0.5). A +inf in row 0 leaves it without a softmax; a NaN there is a NaN."""
    got = multiclass_calibration_error(np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([0, 0]),
                                       num_classes=2)
    assert got == pytest.approx(((1.0 - _sigmoid(2.0)) + 0.5) / 2, rel=1e-6)
    with pytest.raises(InputError, match=r"^`preds` holds logits, so every row must have a "
                                         r"softmax \(no \+inf, and not -inf only\); 1 row does "
                                         r"not, the first at position 0\.$"):
        multiclass_calibration_error(np.array([[np.inf, 0.0], [0.0, 0.0]]), np.array([0, 0]),
                                     num_classes=2)
    with pytest.raises(InputError, match=r"^`preds` must not contain NaN; 1 row does, the first "
                                         r"at position 0\. "):
        multiclass_calibration_error(np.array([[np.nan, 0.5], [0.3, 0.7]]), np.array([0, 0]),
                                     num_classes=2)


# --------------------------------------------------------------------------
# the classes and the defaults


def test_n_samples_counts_the_kept_samples():
    """758 (``0 if self._count is None`` -> ``is not``): a fresh metric has 0
    samples, then as many as were kept."""
    m = BinaryCalibrationError(ignore_index=-1)
    assert m.n_samples == 0
    assert repr(m) == "BinaryCalibrationError(n_bins=15, norm='l1', ignore_index=-1) with 0 samples"
    m.update(P3, np.array([0, -1, 1]))
    assert m.n_samples == 2


def test_merge_adds_an_updated_metric_and_ignores_a_fresh_one():
    """802 (``if not other._updated: return self`` -> ``if other._updated``): merging
    an updated metric adds its batches; merging a fresh one changes nothing (a
    fresh metric stays without samples).

    By hand: 0.2 (y = 0) then 0.7, 0.4 (y = 1, 1): ECE3; 0.7 and 0.4 alone: 0.45."""
    a, b = BinaryCalibrationError(), BinaryCalibrationError()
    a.update(P3[:1], Y3[:1])
    b.update(P3[1:], Y3[1:])
    assert a.merge(b).compute() == pytest.approx(ECE3, rel=1e-12)
    assert BinaryCalibrationError().merge(b).compute() == pytest.approx(0.45, rel=1e-12)
    fresh = BinaryCalibrationError().merge(BinaryCalibrationError())
    with pytest.raises(InputError, match=r"^compute\(\) was called before any update\(\)"):
        fresh.compute()


def test_the_binary_class_validates_by_default():
    """870 (the default ``validate_args=True`` of BinaryCalibrationError made False)."""
    m = BinaryCalibrationError()
    assert m.validate_args is True
    with pytest.raises(InputRuntimeError, match=r"^`target` must hold only 0 and 1; 1 value "
                                                r"does not, the first at position 1 \(2\)\."):
        m.update(P3, np.array([0, 2, 1]))


def test_binary_function_defaults_to_fifteen_bins():
    """949 (the default ``n_bins=15`` of binary_calibration_error made 16): 0.47 and
    0.52 share the bin [7/15, 8/15) of 15 (gap |0.5 - 0.495|), and fall in two of 16
    (gaps 0.53 and 0.52)."""
    p, y = np.array([0.47, 0.52]), np.array([1, 0])
    assert binary_calibration_error(p, y) == pytest.approx(0.005, abs=1e-12)
    assert binary_calibration_error(p, y, n_bins=16) == pytest.approx(0.525, abs=1e-12)
