"""The R reference implementation, driven through rpy2.

``load()`` imports the installed R package ``calibrRef`` (source in
``r_reference/calibrRef``; install it with ``R CMD INSTALL r_reference/calibrRef``)
and returns an :class:`RReference` whose methods mirror the R functions::

    rref = load()
    rref.ece(p, y, bins=10, type="classwise")  # -> float
    rref.mce(p, y, bins=10, type="classwise")
    rref.skce(p, y, estimator="uq", bandwidth=0.2, type="canonical")  # bandwidth: float or "median"
    rref.mmce(p, y, bandwidth=0.2)
    rref.RError  # raised when R signals an error (e.g. bad input)

``p`` is a float64 vector ``(n,)`` (binary) or matrix ``(n, K)``; ``y`` holds 0/1 for a
vector and the R class codes 1..K for a matrix (or a ``pandas.Categorical``, passed
as an R factor). Doubles are copied bit for bit into R (no text round trip), a
matrix keeps its shape (R is column-major, so it is copied in Fortran order), and
integer labels become an R integer vector. Anything else is passed through as is,
so that bad input reaches R's own checks.

Tests reach this through the ``rref`` fixture of ``tests/conftest.py``.

The committed reference data (``tests/data/r_reference``, made by
``r_reference/make_inputs.R`` and ``r_reference/make_reference.R``; columns in its
``PROVENANCE.md``) is read with :func:`read_cases`, :func:`read_case` and
:func:`read_reference`, which need neither R nor rpy2; :func:`call_reference_row`
replays one row of ``reference.csv`` through any object with the methods above.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

R_PACKAGE = "calibrRef"
DATA_DIR = Path(__file__).resolve().parent / "data" / "r_reference"


class RError(Exception):
    """R signalled an error; the message is R's condition message."""


class RWarning(UserWarning):
    """R wrote a warning (or other diagnostics) while computing a metric."""


class RReference:
    """Thin calls into the R package; see the module docstring."""

    RError = RError
    RWarning = RWarning

    def __init__(self) -> None:
        import rpy2.rinterface as ri
        from rpy2.rinterface_lib.embedded import RRuntimeError
        from rpy2.robjects.packages import importr

        self._ri = ri
        self._rruntime_error = RRuntimeError
        self._pkg = importr(R_PACKAGE)
        self._geterrmessage = ri.baseenv["geterrmessage"]
        self.r_version = str(ri.baseenv["R.version.string"][0])
        self.package_version = str(self._pkg.__version__)

    # ----------------------------------------------------------------- conversion

    def _p(self, p: Any) -> Any:
        arr = np.asarray(p)
        if arr.dtype.kind not in "biuf" or arr.ndim not in (1, 2):
            return p  # let R reject it (or robjects convert it)
        arr = arr.astype(np.float64, copy=False)
        if arr.ndim == 1:
            return self._ri.FloatSexpVector.from_memoryview(memoryview(np.ascontiguousarray(arr)))
        n, k = arr.shape
        # R matrices are column-major: the transpose's C order is p's Fortran order.
        flat = np.ascontiguousarray(arr.T).reshape(-1)
        vec = self._ri.FloatSexpVector.from_memoryview(memoryview(flat))
        vec.do_slot_assign("dim", self._ri.IntSexpVector([n, k]))
        return vec

    def _y(self, y: Any) -> Any:
        ri = self._ri
        if hasattr(y, "categories") and hasattr(y, "codes"):  # pandas.Categorical -> factor
            codes = np.asarray(y.codes, dtype=np.int64)
            ints = [ri.NA_Integer if c < 0 else int(c) + 1 for c in codes]
            vec = ri.IntSexpVector(ints)
            vec.do_slot_assign("levels", ri.StrSexpVector([str(c) for c in y.categories]))
            vec.do_slot_assign("class", ri.StrSexpVector(["factor"]))
            return vec
        if getattr(getattr(y, "dtype", None), "name", "") == "category" and hasattr(y, "array"):
            return self._y(y.array)  # a categorical pandas Series
        arr = np.asarray(y)
        if arr.ndim != 1:
            return y
        if arr.dtype.kind == "b" or (
            arr.dtype.kind in "iu"
            and (arr.size == 0 or (arr.min() >= -(2**31) + 1 and arr.max() < 2**31))
        ):
            ints = np.ascontiguousarray(arr, dtype=np.int32)
            return ri.IntSexpVector.from_memoryview(memoryview(ints))
        if arr.dtype.kind in "iuf":
            return ri.FloatSexpVector.from_memoryview(
                memoryview(np.ascontiguousarray(arr, dtype=np.float64))
            )
        return y

    def _option(self, value: Any) -> Any:
        """A scalar option for R: numpy scalars become Python ones, None becomes NULL."""
        if value is None:
            return self._ri.NULL
        if isinstance(value, np.generic):
            return value.item()
        return value

    def _call(self, name: str, *args: Any, **kwargs: Any) -> float:
        from rpy2.rinterface_lib import callbacks

        kwargs = {k: self._option(v) for k, v in kwargs.items()}
        stderr: list[str] = []  # R's error/warning console output, kept off the terminal
        try:
            with callbacks.obj_in_module(callbacks, "consolewrite_warnerror", stderr.append):
                out = getattr(self._pkg, name)(*args, **kwargs)
        except self._rruntime_error as exc:
            message = str(self._geterrmessage()[0]).strip()
            message = message.removeprefix("Error: ").removeprefix("Error in ")
            raise RError(message) from exc
        if stderr:
            warnings.warn(f"calibrRef::{name}: {''.join(stderr).strip()}", RWarning, stacklevel=3)
        if len(out) != 1:
            raise AssertionError(f"calibrRef::{name} returned {len(out)} values, not 1")
        return float(out[0])

    # -------------------------------------------------------------------- metrics

    def ece(self, p: Any, y: Any, bins: Any = 10, type: Any = "classwise") -> float:
        """``calibrRef::ece(p, y, bins, type)``."""
        return self._call("ece", self._p(p), self._y(y), bins=bins, type=type)

    def mce(self, p: Any, y: Any, bins: Any = 10, type: Any = "classwise") -> float:
        """``calibrRef::mce(p, y, bins, type)``."""
        return self._call("mce", self._p(p), self._y(y), bins=bins, type=type)

    def skce(
        self,
        p: Any,
        y: Any,
        estimator: Any = "uq",
        bandwidth: Any = 0.2,
        type: Any = "canonical",
    ) -> float:
        """``calibrRef::skce(p, y, estimator, bandwidth, type)``."""
        return self._call(
            "skce", self._p(p), self._y(y), estimator=estimator, bandwidth=bandwidth, type=type
        )

    def mmce(self, p: Any, y: Any, bandwidth: Any = 0.2) -> float:
        """``calibrRef::mmce(p, y, bandwidth)``."""
        return self._call("mmce", self._p(p), self._y(y), bandwidth=bandwidth)

    def __repr__(self) -> str:
        return f"<RReference {R_PACKAGE} {self.package_version} on {self.r_version}>"


_INSTANCE: RReference | None = None


def load() -> RReference:
    """Return the R reference, starting embedded R once per process.

    Raises
    ------
    ImportError
        If rpy2 (or R itself, which rpy2 needs) is missing.
    rpy2.robjects.packages.PackageNotInstalledError
        If the R package ``calibrRef`` is not installed.
    """
    global _INSTANCE
    if _INSTANCE is None:
        _INSTANCE = RReference()
    return _INSTANCE


# ------------------------------------------------------------- committed reference data


def read_cases() -> Any:
    """The manifest ``inputs/cases.csv``: case, kind, n, k, seed, description."""
    import pandas as pd

    return pd.read_csv(DATA_DIR / "inputs" / "cases.csv")


def read_case(case: str) -> tuple[np.ndarray, np.ndarray]:
    """``(p, y)`` of one committed input: p float64 ``(n,)`` or C-contiguous ``(n, K)``;
    y int64, 0/1 for a binary case and the R codes 1..K for a multiclass one."""
    import pandas as pd

    df = pd.read_csv(DATA_DIR / "inputs" / f"{case}.csv")
    y = df.pop("y").to_numpy(np.int64)
    p = df.to_numpy(np.float64)
    if p.shape[1] == 1:
        return np.ascontiguousarray(p[:, 0]), y
    return np.ascontiguousarray(p), y


def read_reference() -> Any:
    """``reference.csv`` with every column as text (empty string = not applicable)."""
    import pandas as pd

    return pd.read_csv(DATA_DIR / "reference.csv", keep_default_na=False, dtype=str)


def reference_bandwidth(text: str) -> float | str:
    """The ``bandwidth`` column as the value to pass: a float, or ``"median"``."""
    return text if text == "median" else float(text)


def call_reference_row(impl: Any, p: np.ndarray, y: np.ndarray, row: Any) -> float:
    """Replay one ``reference.csv`` row (a namedtuple from ``itertuples()``) on ``impl``."""
    if row.metric in ("ece", "mce"):
        return getattr(impl, row.metric)(p, y, bins=int(row.bins), type=row.type)
    if row.metric == "skce":
        return impl.skce(p, y, row.estimator, reference_bandwidth(row.bandwidth), row.type)
    if row.metric == "mmce":
        return impl.mmce(p, y, reference_bandwidth(row.bandwidth))
    raise ValueError(f"unknown metric {row.metric!r} in reference.csv")
