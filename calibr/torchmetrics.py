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
  ``torch.sum``'s order; sigmoid and softmax follow torch's kernels. So l1 and
  max give torchmetrics' bits for probabilities and logits, and
  l2 can differ by an ulp (torch's CPU sqrt is not correctly rounded);
* ``norm="l2"`` returns ``numpy.int64(0)`` when the weighted sum of squared gaps
  is not positive (torchmetrics returns ``torch.tensor(0)``), and ``"l1"``
  returns NaN when no sample is left after ``ignore_index``;
* multiclass targets are 0-based and never checked, as in torchmetrics 1.9 (its
  distinct-value check on ``target`` is skipped for float ``preds`` by operator
  precedence): a target outside ``0..num_classes-1`` is simply a miss.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._kernels import torchmetrics_kernels as _k
from ._validation import InputError, InputTypeError

__all__ = [
    "binary_calibration_error",
    "multiclass_calibration_error",
    "BinaryCalibrationError",
    "MulticlassCalibrationError",
]

_NORMS = ("l1", "l2", "max")
_SUPPORTED_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# --------------------------------------------------------------------------
# argument checks (always run: they cost nothing)


def _is_int(value: Any) -> bool:
    # torchmetrics tests isinstance(value, int), which admits bool; calibr also admits
    # numpy integers.
    return isinstance(value, (int, np.integer))


def _check_n_bins(n_bins: Any) -> int:
    if not _is_int(n_bins) or n_bins < 1:
        raise InputError(f"`n_bins` must be an integer larger than 0; got {n_bins!r}.")
    return int(n_bins)


def _check_norm(norm: Any) -> str:
    if not isinstance(norm, str) or norm not in _NORMS:
        raise InputError(f"`norm` must be one of 'l1', 'l2', 'max'; got {norm!r}.")
    return norm


def _check_ignore_index(ignore_index: Any) -> int | None:
    if ignore_index is not None and not _is_int(ignore_index):
        raise InputError(f"`ignore_index` must be None or an integer; got {ignore_index!r}.")
    return None if ignore_index is None else int(ignore_index)


def _check_num_classes(num_classes: Any) -> int:
    if not _is_int(num_classes) or num_classes < 2:
        raise InputError(f"`num_classes` must be an integer larger than 1; got {num_classes!r}.")
    return int(num_classes)


# --------------------------------------------------------------------------
# input conversion (never imports torch)


def _as_array(x: Any, name: str) -> np.ndarray:
    """A numpy view or copy of ``x``; the caller's object is never written to."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if x.dtype == torch.bfloat16:
            raise InputError(
                f"`{name}` must be float32 or float64; got a bfloat16 tensor. "
                "Convert it with .float() first."
            )
        return x.detach().cpu().numpy()
    if isinstance(x, (pd.Series, pd.DataFrame, pd.Index)):
        arr = x.to_numpy()
    elif isinstance(x, (list, tuple)):
        dtype = _list_dtype(x, name)
        try:
            arr = np.asarray(x, dtype=dtype)
        except OverflowError as err:
            raise InputError(
                f"`{name}` must hold integers within the int64 range, as torch.tensor needs; "
                f"got a larger one ({err})."
            ) from None
        except (ValueError, TypeError) as err:
            raise InputError(
                f"`{name}` must be a rectangular (nested) list of numbers, as torch.tensor "
                f"needs; numpy could not read it ({err})."
            ) from None
    else:
        arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise InputError(f"`{name}` must hold numbers; got an array of dtype {arr.dtype}.")
    return arr


def _default_float(name: str) -> np.dtype:
    """The dtype ``torch.tensor`` gives Python floats: torch's default dtype (float32)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return np.dtype(np.float32)
    default = str(torch.get_default_dtype()).removeprefix("torch.")
    if default == "bfloat16":
        raise InputError(
            f"`{name}` is a list, and torch's default dtype is bfloat16, which calibr does not "
            "reproduce; pass a float32 or float64 array or tensor instead."
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


def _target_codes(target: np.ndarray) -> np.ndarray:
    """Targets for the kernels: int64, or float64 for float input (values unchanged)."""
    if target.dtype.kind == "f":
        return np.ascontiguousarray(target, dtype=np.float64).reshape(-1)
    return np.ascontiguousarray(target, dtype=np.int64).reshape(-1)


def _ignore_args(ignore_index: int | None) -> tuple[bool, np.int64]:
    if ignore_index is None or not (-(2**63) <= ignore_index < 2**63):
        return False, np.int64(0)  # no int64 target can equal an out-of-range index
    return True, np.int64(ignore_index)


def _check_float_dtype(preds: np.ndarray) -> None:
    if preds.dtype not in _SUPPORTED_FLOATS:
        raise InputError(
            f"`preds` must be float32 or float64; got {preds.dtype}. torchmetrics' float16 "
            "path sums counts in float16 and is not reproduced: cast to float32 first."
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
        "with the confidences of 1.0.)"
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
        raise RuntimeError(
            f"`preds` and `target` must have the same shape; got {p.shape} and {t.shape}."
        )
    codes = _target_codes(t)
    has_ignore, ignore = _ignore_args(ignore_index)
    if p.dtype.kind != "f":
        if validate_args:
            _binary_target_check(codes, has_ignore, ignore, p.shape, ignore_index)
            if not np.isin(p, (0, 1)).all():
                raise RuntimeError(
                    f"`preds` holds the values {_unique_text(p)}, but as a label (non-float) "
                    "array it may hold only 0 and 1."
                )
        raise InputError(
            f"`preds` must be a float array of probabilities or logits; got dtype {p.dtype}."
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
    _, _, first_nan, first_bad = _k.binary_scan(flat, codes, has_ignore, ignore, validate_args)
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
        raise RuntimeError(
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
        if p.dtype.kind != "f":
            raise InputError(
                "`preds` must be a float array of probabilities or logits when it has one "
                f"dimension more than `target`; got dtype {p.dtype}."
            )
        if validate_args and p.shape[1] != num_classes:
            raise InputError(
                f"`preds.shape[1]` must equal `num_classes` ({num_classes}); "
                f"got `preds` of shape {p.shape}."
            )
        if p.shape[2:] != t.shape[1:]:
            raise InputError(
                "`preds` must have shape (N, C, ...) and `target` shape (N, ...); "
                f"got {p.shape} and {t.shape}."
            )
        if p.shape[0] != t.shape[0]:
            raise RuntimeError(
                f"`preds` and `target` must have the same number of samples N; got "
                f"{p.shape[0]} and {t.shape[0]}."
            )
    elif p.ndim == t.ndim:
        if p.shape != t.shape:
            raise InputError(
                "`preds` and `target` must have the same shape when they have the same number "
                f"of dimensions; got {p.shape} and {t.shape}."
            )
        check_value = num_classes + (ignore_index is not None)
        if validate_args and p.dtype.kind != "f":  # torchmetrics checks only label preds
            for arr, name in ((t, "target"), (p, "preds")):
                n_unique = np.unique(arr, equal_nan=False).size
                if n_unique > check_value:
                    raise RuntimeError(_too_many_message(name, n_unique, check_value))
        if p.dtype.kind != "f":
            raise InputError(
                f"`preds` must be a float array of probabilities or logits; got dtype {p.dtype}."
            )
        raise InputError(
            "`preds` must have shape (N, C, ...) with one dimension more than `target` (N, ...); "
            f"got {p.shape} and {t.shape}. (torchmetrics accepts this in its checks and then "
            "fails with an IndexError or RuntimeError.)"
        )
    else:
        raise InputError(
            "`preds` must have shape (N, C, ...) and `target` shape (N, ...); "
            f"got {p.shape} and {t.shape}."
        )
    _check_float_dtype(p)
    if p.ndim > 2:
        p = np.moveaxis(p, 1, -1).reshape(-1, p.shape[1])
    rows = np.ascontiguousarray(p)
    codes = _target_codes(t)
    has_ignore, ignore = _ignore_args(ignore_index)
    return rows, codes, t.shape, has_ignore, ignore


def _multiclass_fill(rows, codes, t_shape, has_ignore, ignore, *state):
    """Add one batch into the per-bin ``state``; raises (leaving it unchanged) on bad data.

    Probabilities take one checked pass; a kept value outside [0, 1] means logits:
    then the softmax of every kept row is binned.
    """
    if _k.multiclass_accumulate_checked(rows, codes, has_ignore, ignore, *state):
        return
    _, _, first_nan = _k.multiclass_scan(rows, codes, has_ignore, ignore)
    keep = codes != ignore if has_ignore else np.ones(codes.size, dtype=bool)
    if first_nan >= 0:
        raise _nan_error(np.isnan(rows).any(axis=1) & keep, t_shape, "row")
    if has_ignore:  # logits: softmax over the classes of every kept row
        rows, codes = rows[keep], codes[keep]
    with np.errstate(invalid="ignore", over="ignore"):
        rows = _k.softmax(rows)
    undefined = np.isnan(rows).any(axis=1)
    if undefined.any():
        bad = np.zeros(keep.size, dtype=bool)
        bad[np.flatnonzero(keep)[undefined]] = True  # back to positions in the batch
        where = np.flatnonzero(bad)
        raise InputError(
            "`preds` holds logits, so every row must have a softmax (no +inf, and not -inf "
            f"only); {_count_text(where.size, 'row')} not, the "
            f"first at {_position(int(where[0]), t_shape)}."
        )
    _k.multiclass_accumulate(rows, codes, False, ignore, *state)


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
        self.n_bins = _check_n_bins(n_bins)
        self.norm = _check_norm(norm)
        self.ignore_index = _check_ignore_index(ignore_index)
        self.validate_args = bool(validate_args)
        self.reset()

    def reset(self) -> None:
        """Forget every batch: back to the state right after construction."""
        self._dtype = self._fixed_dtype()
        self._count = self._conf_sum = self._acc_sum = None
        self._updated = False

    def _fixed_dtype(self) -> np.dtype | None:
        return None

    def _alloc(self, dtype: np.dtype) -> None:
        if self._count is None:
            self._dtype = np.dtype(dtype)
            self._count = np.zeros(self.n_bins + 1, dtype=dtype)
            self._conf_sum = np.zeros(self.n_bins + 1, dtype=dtype)
            self._acc_sum = np.zeros(self.n_bins + 1, dtype=dtype)
        elif np.dtype(dtype) != self._dtype:
            raise InputError(
                f"`preds` of this batch is {np.dtype(dtype)}, but earlier batches were "
                f"{self._dtype}; keep one dtype per metric (torchmetrics would recompute "
                "everything in float64)."
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
        ValueError
            If ``update()`` has not been called (torchmetrics: "No samples to concatenate").
        """
        if not self._updated:
            raise InputError("compute() was called before any update(); there are no samples.")
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
                f"can only merge a {type(self).__name__} with another; got {type(other).__name__}."
            )
        if other._config() != self._config():
            raise InputError(
                f"cannot merge metrics with different settings: {self._config()} and "
                f"{other._config()}."
            )
        if not other._updated:
            return self
        if other._count is not None:
            self._alloc(other._dtype)
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

    def __init__(
        self,
        num_classes: int,
        n_bins: int = 15,
        norm: Literal["l1", "l2", "max"] = "l1",
        ignore_index: int | None = None,
        validate_args: bool = True,
    ) -> None:
        self.num_classes = _check_num_classes(num_classes)
        super().__init__(n_bins, norm, ignore_index, validate_args)

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
        0 or 1 (bool, integer or float), or ``ignore_index``.
    n_bins : int, default 15
        Number of equal-width bins on [0, 1] (plus the extra bin for 1.0).
    norm : {"l1", "l2", "max"}, default "l1"
        "l1": expected calibration error ``sum_b prop_b |acc_b - conf_b|``;
        "l2": ``sqrt(sum_b prop_b (acc_b - conf_b)^2)``; "max": ``max_b |acc_b - conf_b|``
        over all ``n_bins + 1`` bins (an empty bin counts as a gap of 0).
    ignore_index : int, optional
        Samples whose target equals it are dropped before anything else.
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
    ValueError
        (``calibr.InputError``) for a bad ``n_bins``, ``norm`` or ``ignore_index``,
        non-float ``preds``, a dtype other than float32/float64, or NaN in ``preds``.
    RuntimeError
        If the shapes differ, or (with ``validate_args``) ``target`` holds a value
        other than 0, 1 and ``ignore_index``: the same kinds as torchmetrics.

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
        0-based classes ``0..num_classes-1``, or ``ignore_index``.
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
    ValueError
        (``calibr.InputError``) for bad arguments or shapes (as torchmetrics), non-float
        ``preds``, a dtype other than float32/float64, NaN in ``preds`` or logits
        whose softmax is undefined.
    RuntimeError
        If N differs between ``preds`` and ``target`` (torchmetrics fails the same
        way), or for integer ``preds`` with too many distinct values (its check).

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
