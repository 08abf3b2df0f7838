"""torchmetrics-compatible calibration error, without torch.

The functions and classes here give the numbers of torchmetrics 1.9's
``binary_calibration_error`` / ``multiclass_calibration_error`` and of its
``BinaryCalibrationError`` / ``MulticlassCalibrationError`` classes, quirks
included, from numpy arrays, pandas objects, lists or (when torch happens to be
installed) torch tensors. torch is never imported here.

The quirks reproduced (see ``docs/torchmetrics.md`` for the comparison with
``calibr.ece``):

* ``n_bins + 1`` boundaries equal to ``torch.linspace(0, 1, n_bins + 1)`` in the
  computation dtype (not ``numpy.linspace``); bins closed on the left,
  ``boundaries[b] <= conf < boundaries[b + 1]``; a confidence of exactly 1.0 in
  an extra bin of its own;
* any kept value outside [0, 1] means logits: sigmoid (binary) or softmax over
  the classes (multiclass) is applied to every kept value (per ``update()``
  batch in the classes);
* binary works in the dtype of ``preds`` (float32 or float64, and so does the
  result); multiclass takes the top-label confidence in float32;
* per-bin counts and sums accumulate one element after another in that dtype,
  as ``torch.Tensor.scatter_add_`` does on a CPU; the sums over the bins follow
  ``torch.sum``'s order. So on probabilities l1 and max give torchmetrics' bits,
  and l2 can differ by an ulp (torch's CPU sqrt is not correctly rounded);
* logits are normalised with a plain ``exp`` in torch's order of operations and
  dtype, each value within a few ulps of torch's sigmoid or softmax, so the
  result agrees with torchmetrics to float rounding, not bit for bit (see
  ``docs/torchmetrics.md``, "Logits");
* ``norm="l2"`` returns ``numpy.int64(0)`` when the weighted sum of squared gaps
  is not positive (torchmetrics returns ``torch.tensor(0)``), and ``"l1"``
  returns NaN when no sample is left after ``ignore_index``;
* multiclass targets are 0-based and never checked, as in torchmetrics 1.9 (its
  distinct-value check on ``target`` is skipped for float ``preds`` by operator
  precedence): a target outside ``0..num_classes-1`` is simply a miss.

What calibr refuses where torchmetrics would compute something (the full list is
in ``docs/torchmetrics.md``): NaN ``preds``; a target value that int64 cannot
hold exactly (a uint64 above 2**63 - 1, a float that is NaN, not whole or beyond
its dtype's exact integers), which torch would wrap or compare approximately; an
``ignore_index`` that torch would wrap into the target's integer dtype where that
changes which samples are dropped; ``n_bins`` above 1,000,000 (as ``calibr.ece``'s ``bins``); bools
for the integer arguments and anything but a bool for ``validate_args``.

Errors: bad input raises :class:`calibr.InputError` (a ``ValueError``) or
:class:`calibr.InputTypeError` (a ``TypeError``), naming the argument. Where
torchmetrics raises a ``RuntimeError``, calibr raises :class:`InputRuntimeError`,
which is both an ``InputError`` and a ``RuntimeError``. Inputs are only read:
numpy arrays, pandas objects and tensors are never written to.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._input import MAX_BINS, InputError, InputTypeError, host_array, validate_params
from ._kernels import torchmetrics_kernels as _k

__all__ = [
    "binary_calibration_error",
    "multiclass_calibration_error",
    "BinaryCalibrationError",
    "MulticlassCalibrationError",
]

_NORMS = ("l1", "l2", "max")
_SUPPORTED_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: Float dtypes a target may have (numpy and torch share them; the values convert exactly).
_TARGET_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_INT64_MIN = int(np.iinfo(np.int64).min)
_INT64_MAX = int(np.iinfo(np.int64).max)


class InputRuntimeError(InputError, RuntimeError):
    """Bad input where torchmetrics raises a ``RuntimeError``.

    Both a :class:`calibr.InputError` (so a ``ValueError``) and a ``RuntimeError``,
    so that code written against either library catches it. Raised for a shape
    mismatch in the binary case, ``N`` differing between ``preds`` and ``target``
    in the multiclass case, a binary ``target`` value other than 0, 1 and
    ``ignore_index``, and label (non-float) ``preds`` with bad values.
    """


# --------------------------------------------------------------------------
# argument checks (always run: they cost nothing): the rules of the options,
# declared once per function and constructor with ``validate_params``


def _is_int(value: Any) -> bool:
    # torchmetrics tests isinstance(value, int), which admits bool; calibr admits numpy
    # integers and refuses bools (n_bins=True would silently mean one bin).
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _show(value: Any) -> str:
    """``repr`` of an argument for a message (short; bools flagged as such)."""
    text = repr(value)
    if "\n" in text or len(text) > 80:
        text = f"an object of type {type(value).__name__}"
    if isinstance(value, (bool, np.bool_)):
        text += " (a bool, not an integer)"
    return text


def _n_bins_rule(n_bins: Any, name: str = "n_bins") -> int:
    """``n_bins``: an integer from 1 to ``MAX_BINS`` (not a bool)."""
    if not _is_int(n_bins) or n_bins < 1:
        raise InputError(f"`n_bins` must be an integer larger than 0; got {_show(n_bins)}.",
                         param="n_bins")
    if n_bins > MAX_BINS:
        raise InputError(
            f"`n_bins` must be an integer larger than 0 and at most {MAX_BINS:,} (calibr's "
            f"bound, checked before anything is allocated); got {_show(n_bins)}.",
            param="n_bins"
        )
    return int(n_bins)


def _norm_rule(norm: Any, name: str = "norm") -> str:
    """``norm``: one of "l1", "l2", "max"."""
    if not isinstance(norm, str) or norm not in _NORMS:
        raise InputError(f"`norm` must be one of 'l1', 'l2', 'max'; got {_show(norm)}.",
                         param="norm")
    return str(norm)


def _ignore_index_rule(ignore_index: Any, name: str = "ignore_index") -> int | None:
    """``ignore_index``: None, or an integer within the int64 range (not a bool)."""
    if ignore_index is None:
        return None
    if not _is_int(ignore_index):
        raise InputError(f"`ignore_index` must be None or an integer; got {_show(ignore_index)}.",
                         param="ignore_index")
    value = int(ignore_index)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise InputError(
            "`ignore_index` must be None or an integer within the int64 range (torch compares "
            f"it with the targets as one); got {value}.",
            param="ignore_index"
        )
    return value


def _num_classes_rule(num_classes: Any, name: str = "num_classes") -> int:
    """``num_classes``: an integer of at least 2 (not a bool)."""
    if not _is_int(num_classes) or num_classes < 2:
        raise InputError(
            f"`num_classes` must be an integer larger than 1; got {_show(num_classes)}.",
            param="num_classes"
        )
    return int(num_classes)


def _validate_args_rule(validate_args: Any, name: str = "validate_args") -> bool:
    """``validate_args``: True or False (numpy bools too)."""
    # torchmetrics takes any truthy value; calibr refuses e.g. the string "False".
    if isinstance(validate_args, (bool, np.bool_)):
        return bool(validate_args)
    raise InputError(f"`validate_args` must be True or False; got {_show(validate_args)}.",
                     param="validate_args")


#: The options of every function and class of this module (``num_classes`` too
#: for multiclass), in the order they are checked.
_RULES = {
    "n_bins": _n_bins_rule,
    "norm": _norm_rule,
    "ignore_index": _ignore_index_rule,
    "validate_args": _validate_args_rule,
}


# --------------------------------------------------------------------------
# input conversion (never imports torch; never writes to the caller's object)

_ACCEPTED = (
    "a numpy array, a pandas Series or DataFrame, a (nested) list or tuple, or a torch tensor"
)


def _describe(x: Any) -> str:
    if x is None:
        return "None"
    if isinstance(x, (str, bytes)):
        return f"a {type(x).__name__} ({_show(x)})"
    return f"a {type(x).__name__}"


def _as_array(x: Any, name: str) -> np.ndarray:
    """A numpy view or copy of ``x`` in native byte order; the caller's object is never
    written to.

    Accepted: numpy arrays (memory-maps, read-only and strided ones too; masked arrays
    without masked values), numpy and Python scalars, pandas objects (nullable and
    Arrow-backed numeric dtypes; missing values become NaN), (nested) lists and tuples,
    torch tensors, JAX, CuPy and any DLPack or array-API arrays (read by the input
    layer's rule, ``docs/definitions.md``, "Arrays of other libraries": detached,
    in place on the CPU, copied once from a GPU) and other objects numpy reads
    through ``__array__``. Generators, sets, dicts, strings and None are a type error.
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        arr = _tensor_to_numpy(torch, x, name)
    elif isinstance(x, (pd.Series, pd.DataFrame, pd.Index)):
        arr = _pandas_to_numpy(x, name)
    elif isinstance(x, pd.api.extensions.ExtensionArray):
        arr = _pandas_to_numpy(pd.Series(x, copy=False), name)
    elif isinstance(x, (list, tuple, range)):
        arr = _list_to_numpy(list(x) if isinstance(x, range) else x, name)
    elif isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        arr = _list_to_numpy([x], name).reshape(())  # a Python scalar: as torch.tensor(x)
    elif isinstance(x, np.ma.MaskedArray):
        arr = _unmasked(x, name)
    elif not isinstance(x, (np.ndarray, np.generic)) and (
            hasattr(type(x), "__dlpack__") or hasattr(type(x), "__array_namespace__")):
        arr = host_array(x, name)  # JAX, CuPy, any DLPack or array-API array: one rule
    elif isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "__array__"):
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError, RuntimeError, NotImplementedError, OverflowError) as err:
            raise InputTypeError(
                f"`{name}` must be {_ACCEPTED}; numpy could not read {_describe(x)} "
                f"({type(err).__name__}: {err}).",
                param=name
            ) from None
    else:
        raise InputTypeError(f"`{name}` must be {_ACCEPTED}; got {_describe(x)}.", param=name)
    if arr.dtype.kind not in "biuf":
        raise InputError(f"`{name}` must hold numbers; got an array of dtype {arr.dtype}.",
                         param=name)
    if not arr.dtype.isnative:  # e.g. big-endian data read from a file: same values
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _tensor_to_numpy(torch: Any, x: Any, name: str) -> np.ndarray:
    """The values of a tensor as numpy (detached; the tensor itself is not touched)."""
    if x.layout != torch.strided or getattr(x, "is_nested", False):
        raise InputTypeError(
            f"`{name}` must be a dense tensor; got a tensor with layout {x.layout}"
            f"{' (nested)' if getattr(x, 'is_nested', False) else ''}. Convert it with "
            ".to_dense() first.",
            param=name
        )
    if x.dtype == torch.bfloat16:
        if name == "preds":
            raise InputError(
                "`preds` must be float32 or float64; got a bfloat16 tensor. "
                "Convert it with .float() first.",
                param="preds"
            )
        raise InputError(
            f"`{name}` must be a bool, integer, float16, float32 or float64 tensor; got a "
            "bfloat16 tensor, which numpy cannot hold. Convert it with .long() first.",
            param=name
        )
    if x.is_complex():
        raise InputError(f"`{name}` must hold real numbers; got a tensor of dtype {x.dtype}.",
                         param=name)
    if x.device.type == "meta":
        raise InputError(f"`{name}` is a tensor on the meta device, which holds no values.",
                         param=name)
    try:
        # the input layer's rule (docs/definitions.md, "Arrays of other libraries"):
        # detached, read in place on the CPU, copied once from a GPU
        return host_array(x.resolve_conj().resolve_neg(), name)
    except InputTypeError as err:
        cause = err.__cause__
        raise InputTypeError(
            f"`{name}` must be a tensor numpy can read; got a tensor of dtype {x.dtype} "
            f"({type(cause).__name__}: {cause}).",
            param=name
        ) from None


def _pandas_to_numpy(x: Any, name: str) -> np.ndarray:
    """``to_numpy()``; nullable or Arrow-backed numbers with missing values become float NaN."""
    dtypes = list(x.dtypes) if isinstance(x, pd.DataFrame) else [x.dtype]
    try:
        arr = x.to_numpy()
        if arr.dtype == object and all(
            (pd.api.types.is_numeric_dtype(d) or pd.api.types.is_bool_dtype(d))
            and not pd.api.types.is_complex_dtype(d)
            for d in dtypes
        ):
            arr = x.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as err:
        raise InputTypeError(
            f"`{name}` must be {_ACCEPTED}; pandas could not convert it to numpy "
            f"({type(err).__name__}: {err}).",
            param=name
        ) from None
    return arr


def _unmasked(x: np.ma.MaskedArray, name: str) -> np.ndarray:
    """The data of a masked array that has no masked value (calibr never drops data)."""
    mask = np.ma.getmaskarray(x)
    if mask.any():
        where = np.flatnonzero(mask)
        raise InputError(
            f"`{name}` is a masked array with {where.size} masked "
            f"value{'s' if where.size > 1 else ''}, the first at "
            f"{_position(int(where[0]), x.shape)}; calibr never drops data silently: remove "
            "those samples (or fill them) first.",
            param=name
        )
    return np.asarray(np.ma.getdata(x))


def _list_to_numpy(x: list | tuple, name: str) -> np.ndarray:
    """A (nested) list or tuple in the dtype ``torch.tensor(x)`` would give it."""
    dtype = _list_dtype(x, name)
    try:
        # a float beyond float32's range becomes +-inf, as in torch.tensor(x) (which is
        # silent): then it is a logit, as torchmetrics reads it. The overflow is the
        # intended conversion, so numpy's warning about it is noise.
        with np.errstate(over="ignore"):
            return np.asarray(x, dtype=dtype)
    except OverflowError as err:
        raise InputError(
            f"`{name}` must hold integers within the int64 range, as torch.tensor needs; "
            f"got a larger one ({err}).",
            param=name
        ) from None
    except (ValueError, TypeError, RuntimeError, NotImplementedError) as err:
        raise InputError(
            f"`{name}` must be a rectangular (nested) list of numbers, as torch.tensor "
            f"needs; numpy could not read it ({err}).",
            param=name
        ) from None


def _default_float(name: str) -> np.dtype:
    """The dtype ``torch.tensor`` gives Python floats: torch's default dtype (float32)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return np.dtype(np.float32)
    default = str(torch.get_default_dtype()).removeprefix("torch.")
    if default == "bfloat16":
        raise InputError(
            f"`{name}` is a list, and torch's default dtype is bfloat16, which calibr does not "
            "reproduce; pass a float32 or float64 array or tensor instead.",
            param=name
        )
    return np.dtype(default)


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types for the bool, integer and float dtypes numpy has.

    A float wins over any integer or bool and keeps its own width (torch:
    int64 with float32 is float32, where numpy makes float64); two floats give the
    wider; integers promote as in numpy (which agrees with torch where torch
    defines the result).
    """
    if a == b or b.kind == "b":
        return a
    if a.kind == "b":
        return b
    if a.kind == "f" or b.kind == "f":
        return max((d for d in (a, b) if d.kind == "f"), key=lambda d: d.itemsize)
    return np.promote_types(a, b)


def _list_dtype(x: list | tuple, name: str) -> np.dtype | None:
    """The dtype ``torch.tensor(x)`` infers for a (nested) list or tuple.

    torch gives each element a dtype (Python bool: bool; int: int64; float:
    torch's default dtype, float32; a numpy scalar or array: its own dtype) and
    promotes them with ``torch.promote_types``; an empty list is the default float.
    None when an element is of another kind (then numpy decides, and a non-numeric
    result is refused).
    """
    found: set[np.dtype] = set()
    level: list | tuple = x
    while len(level):
        nested = False
        for tp in set(map(type, level)):
            if issubclass(tp, np.generic):  # before float: np.float64 subclasses float
                found.add(np.dtype(tp))
            elif issubclass(tp, bool):  # before int: bool subclasses int
                found.add(np.dtype(np.bool_))
            elif issubclass(tp, int):
                found.add(np.dtype(np.int64))
            elif issubclass(tp, float):
                found.add(_default_float(name))
            elif issubclass(tp, np.ndarray):
                found.update(a.dtype for a in level if isinstance(a, np.ndarray))
            elif issubclass(tp, (list, tuple)):
                nested = True
            else:
                return None
        if not nested:
            break
        level = [v for item in level if isinstance(item, (list, tuple)) for v in item]
    if not found:
        return _default_float(name)
    dtypes = sorted(found, key=str)
    if any(d.kind not in "biuf" for d in dtypes):
        return None
    out = dtypes[0]
    for d in dtypes[1:]:
        out = _promote(out, d)
    return out


def _target_codes(t: np.ndarray, ignore_index: int | None, check_binary: bool) -> np.ndarray:
    """``target`` as flat int64 codes, refusing every value a cast would change.

    Integers must fit in int64 (a uint64 above 2**63 - 1 would wrap to a negative
    code, and could even equal ``ignore_index``). Floats must be whole numbers that
    their dtype holds exactly (below 2**11, 2**24 or 2**53 in magnitude for float16,
    float32 and float64), and not NaN: torchmetrics compares float targets by value,
    so 0.5 or NaN would be a silent miss. With ``check_binary`` the binary values
    (0, 1, ``ignore_index``) are checked first, on the values as given.
    """
    shape = t.shape
    flat = t.reshape(-1)
    kind = t.dtype.kind
    if kind == "f":
        return _float_target_codes(flat, t.dtype, shape, ignore_index, check_binary)
    if kind == "u" and t.dtype.itemsize >= 8 and flat.size:
        over = flat > _INT64_MAX
        if over.any():
            where = np.flatnonzero(over)
            first = int(where[0])
            raise InputError(
                "`target` must hold integers within the int64 range (torch's class labels are "
                f"int64); {_count_text(where.size, 'value')} not, the first at "
                f"{_position(first, shape)} ({flat[first].item()}).",
                param="target"
            )
    if kind in "iu" and ignore_index is not None:
        _check_ignore_fits(flat, t.dtype, shape, ignore_index)
    return np.ascontiguousarray(flat, dtype=np.int64)


def _check_ignore_fits(flat: np.ndarray, dtype: np.dtype, shape, ignore_index: int) -> None:
    """Refuse an ``ignore_index`` that torch would wrap into the target's integer dtype.

    torch compares an integer tensor with a Python int in the tensor's dtype: for a
    uint8 target, ignore_index=-1 is compared as 255. calibr compares exactly, so the
    two would differ on the targets equal to the wrapped value.
    """
    info = np.iinfo(dtype)
    if dtype.itemsize >= 8 or info.min <= ignore_index <= info.max:
        return  # int64 is compared exactly; uint64 too (torch does not wrap it)
    bits = 8 * dtype.itemsize
    wrapped = ignore_index % (1 << bits)
    if info.min < 0 and wrapped > info.max:
        wrapped -= 1 << bits
    hit = flat == wrapped
    if hit.any():
        where = np.flatnonzero(hit)
        raise InputError(
            f"`ignore_index` ({ignore_index}) does not fit `target`'s dtype {dtype.name}, so "
            f"torch would compare it as {wrapped} and ignore the {where.size} "
            f"target{'s' if where.size > 1 else ''} equal to {wrapped} (the first at "
            f"{_position(int(where[0]), shape)}), where calibr compares exactly; "
            f"pass `target` as int64, or ignore_index={wrapped}, to say which you mean.",
            param="ignore_index"
        )


def _float_target_codes(flat, dtype, shape, ignore_index, check_binary) -> np.ndarray:
    if dtype not in _TARGET_FLOATS:
        raise InputError(
            f"`target` must be bool, integer, float16, float32 or float64; got {dtype}.",
            param="target"
        )
    values = np.asarray(flat, dtype=np.float64)  # exact for these dtypes
    nan = np.isnan(values)
    if nan.any():
        where = np.flatnonzero(nan)
        raise InputError(
            f"`target` must not contain NaN (a missing label); {_count_text(where.size, 'value')}"
            f", the first at {_position(int(where[0]), shape)}.",
            param="target"
        )
    if check_binary:
        _binary_target_check(values, *_ignore_args(ignore_index), shape, ignore_index)
    bits = np.finfo(dtype).nmant + 1
    exact = (np.abs(values) < 2.0**bits) & (np.floor(values) == values)
    if not exact.all():
        where = np.flatnonzero(~exact)
        first = int(where[0])
        raise InputError(
            f"`target` holds {dtype.name} values, so they must be whole numbers (class labels) "
            f"smaller than 2**{bits} in magnitude, which {dtype.name} holds exactly; "
            f"{_count_text(where.size, 'value')} not, the first at {_position(first, shape)} "
            f"({values[first].item()!r}).",
            param="target"
        )
    return values.astype(np.int64)


def _ignore_args(ignore_index: int | None) -> tuple[bool, np.int64]:
    """(has_ignore, ignore) for the kernels; ``ignore_index`` is within int64 (checked)."""
    if ignore_index is None:
        return False, np.int64(0)
    return True, np.int64(ignore_index)


def _check_float_dtype(preds: np.ndarray) -> None:
    if preds.dtype in _SUPPORTED_FLOATS:
        return
    if preds.dtype == np.float16:
        raise InputError(
            "`preds` must be float32 or float64; got float16. torchmetrics' float16 path sums "
            "counts in float16 and is not reproduced: cast to float32 first.",
            param="preds"
        )
    raise InputError(
        f"`preds` must be float32 or float64; got {preds.dtype}, which torch has no tensor "
        "for: cast to float64 first.",
        param="preds"
    )


def _position(flat: int, shape: tuple[int, ...]) -> str:
    if len(shape) <= 1:
        return f"position {flat}"
    return f"index {tuple(int(i) for i in np.unravel_index(flat, shape))}"


def _count_text(count: int, what: str) -> str:
    """'1 value does' / '3 values do' (``what`` is singular)."""
    return f"{count} {what} does" if count == 1 else f"{count} {what}s do"


def _nan_error(bad: np.ndarray, shape: tuple[int, ...], what: str = "value") -> InputError:
    """The NaN message for the flat mask ``bad`` over ``shape`` (values, or rows of classes)."""
    where = np.flatnonzero(bad)
    return InputError(
        f"`preds` must not contain NaN; {_count_text(where.size, what)}, the first at "
        f"{_position(int(where[0]), shape)}. (torchmetrics would return a number: it bins NaN "
        "with the confidences of 1.0.)",
        param="preds"
    )


def _unique_text(values: np.ndarray) -> str:
    shown = np.unique(values)
    text = ", ".join(repr(v.item()) for v in shown[:10])
    return f"[{text}{', ...' if shown.size > 10 else ''}]"


# --------------------------------------------------------------------------
# one batch into a per-bin state


def _binary_batch(preds, target, ignore_index: int | None, validate_args: bool):
    """Convert one binary batch and run the O(1) checks; returns the ``_binary_fill`` inputs."""
    p = _as_array(preds, "preds")
    t = _as_array(target, "target")
    if p.shape != t.shape and (validate_args or p.size != t.size):
        raise InputRuntimeError(
            f"`preds` and `target` must have the same shape; got {p.shape} and {t.shape}."
        )
    codes = _target_codes(t, ignore_index, check_binary=validate_args)
    has_ignore, ignore = _ignore_args(ignore_index)
    if p.dtype.kind != "f":
        if validate_args:
            _binary_target_check(codes, has_ignore, ignore, p.shape, ignore_index)
            if not np.isin(p, (0, 1)).all():
                raise InputRuntimeError(
                    f"`preds` holds the values {_unique_text(p)}, but as a label (non-float) "
                    "array it may hold only 0 and 1."
                )
        raise InputError(
            f"`preds` must be a float array of probabilities or logits; got dtype {p.dtype}.",
            param="preds"
        )
    _check_float_dtype(p)
    flat = np.ascontiguousarray(p).reshape(-1)
    return flat, codes, p.shape, has_ignore, ignore, ignore_index, validate_args


def _binary_fill(flat, codes, shape, has_ignore, ignore, ignore_index, validate_args, *state):
    """Add one batch into the per-bin ``state``; raises (leaving it unchanged) on bad data.

    Probabilities take one checked pass; a kept value outside [0, 1] means logits:
    then the whole batch is checked again, and the sigmoid of every kept value binned.
    """
    status, _ = _k.binary_accumulate_checked(flat, codes, has_ignore, ignore, validate_args, *state)
    if status == 0:
        return
    if status == 2:
        _binary_target_check(codes, has_ignore, ignore, shape, ignore_index)
    first_nan, first_bad = _k.binary_scan(flat, codes, has_ignore, ignore, validate_args)
    if first_bad >= 0:
        _binary_target_check(codes, has_ignore, ignore, shape, ignore_index)
    if first_nan >= 0:
        nan = np.isnan(flat)
        if has_ignore:
            nan &= codes != ignore
        raise _nan_error(nan, shape)
    if has_ignore:  # logits: sigmoid on every kept value
        keep = codes != ignore
        flat, codes = flat[keep], codes[keep]
    _k.binary_accumulate(_k.sigmoid(flat), codes, False, ignore, *state)


def _binary_target_check(codes, has_ignore, ignore, shape, ignore_index) -> None:
    bad = (codes != 0) & (codes != 1)
    if has_ignore:
        bad &= codes != ignore
    if bad.any():
        where = np.flatnonzero(bad)
        first = int(where[0])
        allowed = "0 and 1" + ("" if ignore_index is None else f" (and {ignore_index}, ignored)")
        raise InputRuntimeError(
            f"`target` must hold only {allowed}; {_count_text(where.size, 'value')} not, "
            "the first at "
            f"{_position(first, shape)} ({codes[first].item()!r}). Its distinct values are "
            f"{_unique_text(codes)}."
        )


def _multiclass_batch(preds, target, num_classes: int, ignore_index, validate_args: bool):
    """Check one multiclass batch (O(1) checks) and bring it to (M, C) rows."""
    p = _as_array(preds, "preds")
    t = _as_array(target, "target")
    if p.ndim == t.ndim + 1:
        if p.ndim < 2:  # a 0-d target: there is no N
            raise InputError(
                "`preds` must have shape (N, C, ...) and `target` shape (N, ...); "
                f"got {p.shape} and {t.shape}.",
                param="preds"
            )
        if p.dtype.kind != "f":
            raise InputError(
                "`preds` must be a float array of probabilities or logits when it has one "
                f"dimension more than `target`; got dtype {p.dtype}.",
                param="preds"
            )
        if validate_args and p.shape[1] != num_classes:
            raise InputError(
                f"`preds.shape[1]` must equal `num_classes` ({num_classes}); "
                f"got `preds` of shape {p.shape}.",
                param="num_classes"
            )
        if p.shape[2:] != t.shape[1:]:
            raise InputError(
                "`preds` must have shape (N, C, ...) and `target` shape (N, ...); "
                f"got {p.shape} and {t.shape}.",
                param="preds"
            )
        if p.shape[1] == 0:
            raise InputError(
                "`preds` must have at least one class: shape (N, C, ...) with C >= 1; "
                f"got {p.shape}.",
                param="preds"
            )
        if p.shape[0] != t.shape[0]:
            raise InputRuntimeError(
                f"`preds` and `target` must have the same number of samples N; got "
                f"{p.shape[0]} and {t.shape[0]}."
            )
    elif p.ndim == t.ndim:
        if p.shape != t.shape:
            raise InputError(
                "`preds` and `target` must have the same shape when they have the same number "
                f"of dimensions; got {p.shape} and {t.shape}.",
                param="preds"
            )
        check_value = num_classes + (ignore_index is not None)
        if validate_args and p.dtype.kind != "f":  # torchmetrics checks only label preds
            for arr, name in ((t, "target"), (p, "preds")):
                n_unique = np.unique(arr, equal_nan=False).size
                if n_unique > check_value:
                    raise InputRuntimeError(_too_many_message(name, n_unique, check_value))
        if p.dtype.kind != "f":
            raise InputError(
                f"`preds` must be a float array of probabilities or logits; got dtype {p.dtype}.",
                param="preds"
            )
        raise InputError(
            "`preds` must have shape (N, C, ...) with one dimension more than `target` (N, ...); "
            f"got {p.shape} and {t.shape}. (torchmetrics accepts this in its checks and then "
            "fails with an IndexError or RuntimeError.)",
            param="preds"
        )
    else:
        raise InputError(
            "`preds` must have shape (N, C, ...) and `target` shape (N, ...); "
            f"got {p.shape} and {t.shape}.",
            param="preds"
        )
    _check_float_dtype(p)
    if p.ndim > 2:
        p = np.moveaxis(p, 1, -1).reshape(-1, p.shape[1])
    rows = np.ascontiguousarray(p)
    codes = _target_codes(t, ignore_index, check_binary=False)
    has_ignore, ignore = _ignore_args(ignore_index)
    return rows, codes, t.shape, has_ignore, ignore


def _multiclass_fill(rows, codes, t_shape, has_ignore, ignore, *state):
    """Add one batch into the per-bin ``state``; raises (leaving it unchanged) on bad data.

    Probabilities take one checked pass; a kept value outside [0, 1] means logits:
    then the softmax of every kept row is binned.
    """
    if _k.multiclass_accumulate(rows, codes, has_ignore, ignore, *state,
                                mode=_k.PROBABILITIES) < 0:
        return
    first_nan = _k.multiclass_scan(rows, codes, has_ignore, ignore)
    keep = codes != ignore if has_ignore else np.ones(codes.size, dtype=bool)
    if first_nan >= 0:
        raise _nan_error(np.isnan(rows).any(axis=1) & keep, t_shape, "row")
    # logits: the softmax over the classes of every kept row
    if _k.multiclass_accumulate(rows, codes, has_ignore, ignore, *state, mode=_k.LOGITS) < 0:
        return
    with np.errstate(invalid="ignore", over="ignore"):  # for the message: every row refused
        undefined = np.isnan(_k.softmax(rows[keep])).any(axis=1)
    bad = np.zeros(keep.size, dtype=bool)
    bad[np.flatnonzero(keep)[undefined]] = True  # back to positions in the batch
    where = np.flatnonzero(bad)
    raise InputError(
        "`preds` holds logits, so every row must have a softmax (no +inf, and not -inf "
        f"only); {_count_text(where.size, 'row')} not, the "
        f"first at {_position(int(where[0]), t_shape)}.",
        param="preds"
    )


def _too_many_message(name: str, found: int, allowed: int) -> str:
    return (
        f"`{name}` must hold at most {allowed} distinct values (`num_classes`, plus one for "
        f"`ignore_index` if given); found {found}."
    )


# --------------------------------------------------------------------------
# streaming classes


class _CalibrationErrorBase:
    """Per-bin state shared by the two streaming classes (O(n_bins) memory)."""

    _dtype: np.dtype | None

    def __init__(self, n_bins, norm, ignore_index, validate_args) -> None:
        # checked by the subclasses' constructors (validate_params)
        self._n_bins = n_bins
        self._norm = norm
        self._ignore_index = ignore_index
        self._validate_args = validate_args
        self.reset()

    # The settings are read-only: the per-bin state is sized and checked by them, so
    # changing one after an update() would mix incompatible states.

    @property
    def n_bins(self) -> int:
        """Number of equal-width bins (read-only)."""
        return self._n_bins

    @property
    def norm(self) -> str:
        """ "l1", "l2" or "max" (read-only)."""
        return self._norm

    @property
    def ignore_index(self) -> int | None:
        """The target value whose samples are dropped, or None (read-only)."""
        return self._ignore_index

    @property
    def validate_args(self) -> bool:
        """Whether ``update()`` checks the data values (read-only)."""
        return self._validate_args

    def reset(self) -> None:
        """Forget every batch: back to the state right after construction."""
        self._dtype = self._fixed_dtype()
        self._count = self._conf_sum = self._acc_sum = None
        self._updated = False

    def _fixed_dtype(self) -> np.dtype | None:
        return None

    def _alloc(self, dtype: np.dtype, source: str = "`preds` of this batch is") -> None:
        if self._count is None:
            self._dtype = np.dtype(dtype)
            self._count = np.zeros(self.n_bins + 1, dtype=dtype)
            self._conf_sum = np.zeros(self.n_bins + 1, dtype=dtype)
            self._acc_sum = np.zeros(self.n_bins + 1, dtype=dtype)
        elif np.dtype(dtype) != self._dtype:
            raise InputError(
                f"{source} {np.dtype(dtype)}, but earlier batches were {self._dtype}; keep "
                "one dtype per metric (torchmetrics would recompute everything in float64).",
                param="preds"
            )

    @property
    def n_samples(self) -> int:
        """Number of samples accumulated so far (after ``ignore_index``).

        Read from the per-bin counts, which are float32 for float32 input as in
        torchmetrics, so a bin stops counting at 2**24 samples.
        """
        return 0 if self._count is None else int(self._count.sum(dtype=np.float64))

    def _config(self) -> tuple:
        return (self.n_bins, self.norm, self.ignore_index)

    def compute(self):
        """The calibration error of every sample seen since the last ``reset()``.

        Returns
        -------
        numpy.floating or numpy.int64
            As the module functions: float32 for multiclass, the ``preds`` dtype for
            binary, and ``numpy.int64(0)`` for ``norm="l2"`` when the sum is not positive.

        Raises
        ------
        calibr.InputError
            If ``update()`` has not been called (torchmetrics: "No samples to concatenate").
        """
        if not self._updated:
            raise InputError("compute() was called before any update(); there are no samples.",
                             param=None)
        return _k.finalize(self._count, self._conf_sum, self._acc_sum, self.norm)

    def merge(self, other):
        """Add the state of ``other`` (same class and settings) into this one; returns self.

        Use it to combine accumulators built on different partitions or processes.
        ``other`` is left unchanged. In float64 the result equals one accumulator fed
        every batch to rounding (1e-12); in float32 the per-bin sums are added as
        partial sums, so they can differ from torchmetrics' single sequential float32
        pass by float32 rounding.
        """
        if type(other) is not type(self):
            raise InputTypeError(
                f"can only merge a {type(self).__name__} with another; got `other` of type "
                f"{type(other).__name__}.",
                param="other"
            )
        if other._config() != self._config():
            mine = ", ".join(f"{k}={v!r}" for k, v in self._settings().items())
            theirs = ", ".join(f"{k}={v!r}" for k, v in other._settings().items())
            raise InputError(
                f"cannot merge metrics with different settings: this one has {mine}, "
                f"`other` has {theirs}.",
                param="other"
            )
        if not other._updated:
            return self
        if other._count is not None:
            self._alloc(other._dtype, "`other` holds batches of")
            self._count += other._count
            self._conf_sum += other._conf_sum
            self._acc_sum += other._acc_sum
        self._updated = True
        return self

    def _add(self, dtype, fill, *batch) -> None:
        """Run ``fill(*batch, *state)``; on an error a fresh metric stays fresh."""
        fresh = self._count is None
        self._alloc(dtype)
        boundaries = _k.torch_linspace(self.n_bins + 1, dtype)
        try:
            fill(*batch, boundaries, self._count, self._conf_sum, self._acc_sum)
        except Exception:
            if fresh:
                self._count = self._conf_sum = self._acc_sum = None
                self._dtype = self._fixed_dtype()
            raise
        self._updated = True

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self._settings().items())
        return f"{type(self).__name__}({settings}) with {self.n_samples} samples"

    def _settings(self) -> dict:
        return {"n_bins": self.n_bins, "norm": self.norm, "ignore_index": self.ignore_index}


class BinaryCalibrationError(_CalibrationErrorBase):
    """Streaming binary calibration error, as torchmetrics' ``BinaryCalibrationError``.

    The state is O(``n_bins``): per-bin counts and sums in the dtype of ``preds``,
    not every prediction as torchmetrics keeps, so any number of samples streams
    in flat memory.

    Parameters
    ----------
    n_bins, norm, ignore_index, validate_args
        As in :func:`binary_calibration_error`.

    Notes
    -----
    The logit rule applies per ``update()`` batch, as in torchmetrics' class.
    Every batch must have the dtype of the first (float32 or float64).
    ``compute()`` equals torchmetrics' ``compute()`` after the same batches: the
    per-bin sums accumulate in the same order and dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from calibr.torchmetrics import BinaryCalibrationError
    >>> metric = BinaryCalibrationError(n_bins=2)
    >>> metric.update(np.array([0.25, 0.25, 0.55]), np.array([0, 0, 1]))
    >>> metric.update(np.array([0.75, 0.75]), np.array([1, 1]))
    >>> print(f"{metric.compute():.4f}")
    0.2900
    """

    @validate_params(**_RULES)
    def __init__(
        self,
        n_bins: int = 15,
        norm: Literal["l1", "l2", "max"] = "l1",
        ignore_index: int | None = None,
        validate_args: bool = True,
    ) -> None:
        super().__init__(n_bins, norm, ignore_index, validate_args)

    def update(self, preds: Any, target: Any) -> None:
        """Add one batch: ``preds`` (N, ...) floats, ``target`` (N, ...) of 0 and 1."""
        batch = _binary_batch(preds, target, self.ignore_index, self.validate_args)
        self._add(batch[0].dtype, _binary_fill, *batch)


class MulticlassCalibrationError(_CalibrationErrorBase):
    """Streaming top-label calibration error, as torchmetrics' ``MulticlassCalibrationError``.

    The state is O(``n_bins``): per-bin float32 counts and sums, not every
    prediction as torchmetrics keeps.

    Parameters
    ----------
    num_classes, n_bins, norm, ignore_index, validate_args
        As in :func:`multiclass_calibration_error`.

    Notes
    -----
    The logit rule (softmax when a kept value lies outside [0, 1]) applies per
    ``update()`` batch, as in torchmetrics' class.

    Examples
    --------
    >>> import numpy as np
    >>> from calibr.torchmetrics import MulticlassCalibrationError
    >>> metric = MulticlassCalibrationError(num_classes=3, n_bins=3)
    >>> metric.update(np.array([[0.25, 0.20, 0.55], [0.55, 0.05, 0.40]]), np.array([0, 1]))
    >>> metric.update(np.array([[0.10, 0.30, 0.60], [0.90, 0.05, 0.05]]), np.array([2, 0]))
    >>> print(f"{metric.compute():.4f}")
    0.2000
    """

    @validate_params(num_classes=_num_classes_rule, **_RULES)
    def __init__(
        self,
        num_classes: int,
        n_bins: int = 15,
        norm: Literal["l1", "l2", "max"] = "l1",
        ignore_index: int | None = None,
        validate_args: bool = True,
    ) -> None:
        self._num_classes = num_classes
        super().__init__(n_bins, norm, ignore_index, validate_args)

    @property
    def num_classes(self) -> int:
        """Number of classes C (read-only)."""
        return self._num_classes

    def _fixed_dtype(self) -> np.dtype:
        return np.dtype(np.float32)

    def _config(self) -> tuple:
        return (self.num_classes, *super()._config())

    def _settings(self) -> dict:
        return {"num_classes": self.num_classes, **super()._settings()}

    def update(self, preds: Any, target: Any) -> None:
        """Add one batch: ``preds`` (N, C, ...) floats, ``target`` (N, ...) 0-based classes."""
        batch = _multiclass_batch(
            preds, target, self.num_classes, self.ignore_index, self.validate_args
        )
        self._add(np.float32, _multiclass_fill, *batch)


# --------------------------------------------------------------------------
# functions


@validate_params(**_RULES)
def binary_calibration_error(
    preds: Any,
    target: Any,
    n_bins: int = 15,
    norm: Literal["l1", "l2", "max"] = "l1",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> np.floating | np.integer:
    """Calibration error for binary tasks, as torchmetrics' ``binary_calibration_error``.

    Parameters
    ----------
    preds : array-like of float, shape (N, ...)
        Probabilities of the positive class, or logits: if any kept value lies
        outside [0, 1], the sigmoid is applied to all of them. float32 or float64
        (numpy arrays, pandas objects, torch tensors). A list or tuple takes the
        dtype ``torch.tensor(list)`` gives it: float32 for Python floats (torch's
        default dtype), float64 for numpy float64 scalars, the wider float when
        they are mixed. Extra dimensions are flattened.
    target : array-like, shape (N, ...)
        0 or 1 (bool, integer or float), or ``ignore_index``. Every value must be
        one int64 holds exactly: integers within the int64 range, floats whole
        numbers below 2**24 (float32), 2**53 (float64) or 2**11 (float16) in
        magnitude, never NaN (so no soft labels, even with ``validate_args=False``).
    n_bins : int, default 15
        Number of equal-width bins on [0, 1] (plus the extra bin for 1.0); at most
        1,000,000, the bound ``calibr.ece`` puts on ``bins``.
    norm : {"l1", "l2", "max"}, default "l1"
        "l1": expected calibration error ``sum_b prop_b |acc_b - conf_b|``;
        "l2": ``sqrt(sum_b prop_b (acc_b - conf_b)^2)``; "max": ``max_b |acc_b - conf_b|``
        over all ``n_bins + 1`` bins (an empty bin counts as a gap of 0).
    ignore_index : int, optional
        Samples whose target equals it are dropped before anything else. Within the
        int64 range; compared exactly (where torch would wrap it into a narrow
        integer ``target`` dtype and so drop other samples, that is an error).
    validate_args : bool, default True
        Check the target values (torchmetrics' ``torch.unique`` checks). With False
        they are skipped and a target of, say, 2 adds 2 to its bin's accuracy, as in
        torchmetrics. Argument and shape checks always run.

    Returns
    -------
    numpy.float32 or numpy.float64 or numpy.int64
        In the dtype of ``preds``; ``numpy.int64(0)`` for ``norm="l2"`` when the
        weighted sum is not positive; NaN for ``norm="l1"`` when no sample is left.

    Raises
    ------
    calibr.InputError
        (a ``ValueError``) for a bad ``n_bins``, ``norm``, ``ignore_index`` or
        ``validate_args``, non-float ``preds``, a dtype other than float32/float64,
        NaN in ``preds``, or a ``target`` value int64 cannot hold exactly.
    calibr.torchmetrics.InputRuntimeError
        (an ``InputError`` and a ``RuntimeError``, the kind torchmetrics raises) if
        the shapes differ, or (with ``validate_args``) ``target`` holds a value other
        than 0, 1 and ``ignore_index``.
    calibr.InputTypeError
        (a ``TypeError``) if ``preds`` or ``target`` is not array-like (a generator,
        set, dict, string or None) or is a tensor numpy cannot read.

    Notes
    -----
    Mirrors ``torchmetrics.functional.classification.binary_calibration_error``
    (torchmetrics 1.9). Boundaries are ``torch.linspace(0, 1, n_bins + 1)`` in the
    dtype of ``preds``, bins are closed on the left, and a confidence of exactly 1.0
    has a bin of its own; counts and sums accumulate sequentially in that dtype.
    torchmetrics returns NaN-binned values as a number; calibr refuses NaN.

    Examples
    --------
    >>> from calibr.torchmetrics import binary_calibration_error
    >>> preds = [0.25, 0.25, 0.55, 0.75, 0.75]
    >>> target = [0, 0, 1, 1, 1]
    >>> for norm in ("l1", "l2", "max"):
    ...     print(norm, f"{binary_calibration_error(preds, target, n_bins=2, norm=norm):.4f}")
    l1 0.2900
    l2 0.2918
    max 0.3167
    """
    metric = BinaryCalibrationError(n_bins, norm, ignore_index, validate_args)
    metric.update(preds, target)
    return metric.compute()


@validate_params(num_classes=_num_classes_rule, **_RULES)
def multiclass_calibration_error(
    preds: Any,
    target: Any,
    num_classes: int,
    n_bins: int = 15,
    norm: Literal["l1", "l2", "max"] = "l1",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> np.floating | np.integer:
    """Top-label calibration error, as torchmetrics' ``multiclass_calibration_error``.

    Parameters
    ----------
    preds : array-like of float, shape (N, C, ...)
        Probabilities, or logits: if any kept value lies outside [0, 1], the
        softmax over the classes is applied to every kept row. float32 or float64;
        a pandas DataFrame has one column per class; a nested list takes the dtype
        ``torch.tensor`` gives it (see :func:`binary_calibration_error`). Extra
        dimensions are flattened into the samples.
    target : array-like of int, shape (N, ...)
        0-based classes ``0..num_classes-1``, or ``ignore_index``; values as in
        :func:`binary_calibration_error` (int64-exact, no NaN).
    num_classes : int
        Number of classes C (at least 2).
    n_bins, norm, ignore_index
        As in :func:`binary_calibration_error`.
    validate_args : bool, default True
        Check ``preds.shape[1] == num_classes``, as torchmetrics. As in
        torchmetrics 1.9, the target values are not checked (its distinct-value
        check is skipped for float ``preds``): a class outside ``0..C-1`` is a miss.

    Returns
    -------
    numpy.float32 or numpy.int64
        float32 (torchmetrics casts the confidences to float32), or
        ``numpy.int64(0)`` for ``norm="l2"`` when the weighted sum is not positive.

    Raises
    ------
    calibr.InputError
        (a ``ValueError``) for bad arguments or shapes (as torchmetrics), non-float
        ``preds``, a dtype other than float32/float64, NaN in ``preds``, logits
        whose softmax is undefined, or a ``target`` value int64 cannot hold exactly.
    calibr.torchmetrics.InputRuntimeError
        (an ``InputError`` and a ``RuntimeError``) if N differs between ``preds`` and
        ``target`` (torchmetrics fails the same way), or for integer ``preds`` with too
        many distinct values (its check).
    calibr.InputTypeError
        (a ``TypeError``) if ``preds`` or ``target`` is not array-like.

    Notes
    -----
    Mirrors ``torchmetrics.functional.classification.multiclass_calibration_error``
    (torchmetrics 1.9): the confidence is the row maximum (the first maximal column
    wins ties), cast to float32, and binned as in the binary case.

    Examples
    --------
    >>> import numpy as np
    >>> from calibr.torchmetrics import multiclass_calibration_error
    >>> preds = np.array([[0.25, 0.20, 0.55],
    ...                   [0.55, 0.05, 0.40],
    ...                   [0.10, 0.30, 0.60],
    ...                   [0.90, 0.05, 0.05]])
    >>> target = np.array([0, 1, 2, 0])
    >>> for norm in ("l1", "l2", "max"):
    ...     ce = multiclass_calibration_error(preds, target, num_classes=3, n_bins=3, norm=norm)
    ...     print(norm, f"{ce:.4f}")
    l1 0.2000
    l2 0.2082
    max 0.2333
    """
    metric = MulticlassCalibrationError(num_classes, n_bins, norm, ignore_index, validate_args)
    metric.update(preds, target)
    return metric.compute()
