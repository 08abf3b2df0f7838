"""The shifted cell key of DuckDB's and Spark's own cells query, defined once
(``docs/engines.md``, "Pushed down"; read back by
``calibr._engines._lazy._shifted_cells``).

The key ``key + j CELL_SHIFT + CELL_BAD t`` is written once, as a small tree of
operations (:func:`cell_exprs`), and rendered as SQL text by the renderer of the
Poisson generator (``_Sql`` in calibr/_engines/_poisson.py), extended here by
the few operations the key needs (:class:`KeySql`). DuckDB runs the text as one
``GROUP BY`` query (calibr/_engines/duckdb.py); Spark reads each expression with
``F.expr`` (calibr/_engines/spark.py). The two dialects differ only where the
engines do: Spark's ``floor`` is a 64-bit integer (so ``p`` is first bounded to
[-1, 2], and the floor is cast back to a double), a column is quoted with
backticks, and a literal is a double literal (``0.1D``).
"""

from __future__ import annotations

from typing import Any

import narwhals as nw

from ._lazy import CELL_BAD, CELL_SHIFT, top_break_below_one
from ._poisson import _Sql

__all__ = ["WHOLE_LABELS", "KeySql", "cell_exprs", "whole_label"]

#: The label types that hold whole numbers only (every engine's integers and
#: booleans, as narwhals names them): for such a label ``y (y - 1)`` is 0 for 0/1
#: and at least 2 for any other, so the key's label term is that product itself; a
#: label of any other type (a float, a decimal) needs ``y (y - 1) <> 0``, since a
#: fraction's product can be as small as 5e-324.
WHOLE_LABELS = (nw.Boolean, nw.Int8, nw.Int16, nw.Int32, nw.Int64, nw.Int128, nw.UInt8,
                nw.UInt16, nw.UInt32, nw.UInt64, nw.UInt128)


def whole_label(dtype: Any) -> bool:
    """Whether a label column of the narwhals type ``dtype`` holds whole numbers
    only (:data:`WHOLE_LABELS`)."""
    return dtype.base_type() in WHOLE_LABELS


class KeySql(_Sql):
    """calibr/_engines/_poisson.py's SQL renderer (``"duckdb"`` or ``"spark"``) with
    the operations of the cell key: double literals and casts, ``floor``,
    comparisons, ``least``/``greatest``, quoted columns."""

    def __init__(self, dialect: str) -> None:
        super().__init__(dialect)
        #: Spark's ``floor`` returns a 64-bit integer, and its ANSI mode raises
        #: ARITHMETIC_OVERFLOW on the floor of an infinite or huge value.
        self.integer_floor = dialect == "spark"

    def col(self, name: str) -> str:
        return f"`{name}`" if self.dialect == "spark" else f'"{name}"'

    def lit(self, v: float) -> str:
        """A DOUBLE literal (a bare ``0.1`` is a DECIMAL in both dialects); Spark's
        ``D`` suffix is parsed as Java parses a double, correctly rounded."""
        return f"{float(v)!r}D" if self.dialect == "spark" else f"CAST({float(v)!r} AS DOUBLE)"

    def double(self, a: Any) -> str:
        return f"CAST({a} AS DOUBLE)"

    def floor(self, a: Any) -> str:
        return f"CAST(FLOOR({a}) AS DOUBLE)" if self.integer_floor else f"FLOOR({a})"

    def gt(self, a: Any, b: Any) -> str:
        return f"({a} > {b})"

    def ne(self, a: Any, b: Any) -> str:
        return f"({a} <> {b})"

    def least(self, a: Any, b: Any) -> str:
        return f"least({a}, {b})"

    def greatest(self, a: Any, b: Any) -> str:
        return f"greatest({a}, {b})"


def cell_exprs(R: KeySql, key: str | None, p: str, y: str, bins: int, whole: bool
               ) -> dict[str, str]:
    """The cell query's grouping key ``__k`` and its summed values ``__sp`` (``p``)
    and ``__sy`` (``y``), rendered by ``R``, for the columns ``key`` (None:
    ungrouped), ``p`` and ``y`` and R's ``bins``; ``whole``: the label's type is one
    of :data:`WHOLE_LABELS`.

    ``j = m + [p > m (1/B)]`` with ``m = floor(p B + 1/2)``:
    ``calibr._kernels.binned._bin_right_closed``'s arithmetic without its ``- 1``
    and its clamp. No clamp, no COALESCE, no validity flag (each cost 0.1 to 0.35 s
    of 1.9 at 1e8 rows on DuckDB: benchmarks/README.md, "Engines at their floor"):
    a bad ``p`` shows in ``j`` or in the cell's sum, read on the driver. ``t``, the
    label's term: ``y (y - 1)`` for a whole label (a missing label makes the key
    missing), ``y (y - 1) <> 0`` for any other (NaN <> 0, and NULL for a missing
    label); and ``p > 1`` when ``bins (1/bins)`` rounds below 1
    (:func:`calibr._engines._lazy.top_break_below_one`). Not ``ceil(p B) - 1``:
    ``p B`` rounds across a break (docs/engines.md).

    Where the floor is an integer (Spark), ``p`` is first bounded to [-1, 2]
    (``least(greatest(p, -1), 2)`` sends NaN, Spark's largest value, and the
    infinities to 2 or -1: a ``j`` outside [0, B + 1], so still bad; a ``p`` in
    [0, 1] unchanged). The sum is of ``p`` itself."""
    x = R.double(R.col(p))
    yv = R.double(R.col(y))
    v = R.least(R.greatest(x, R.lit(-1.0)), R.lit(2.0)) if R.integer_floor else x
    m = R.floor(R.add(R.mul(v, R.lit(bins)), R.lit(0.5)))
    k = R.mul(R.add(m, R.double(R.gt(v, R.mul(m, R.lit(1.0 / bins))))), R.lit(CELL_SHIFT))
    if key is not None:
        k = R.add(R.double(R.col(key)), k)
    product = R.mul(yv, R.sub(yv, R.lit(1.0)))
    t = product if whole else R.double(R.ne(product, R.lit(0.0)))
    k = R.add(k, R.mul(t, R.lit(CELL_BAD)))
    if top_break_below_one(bins):
        k = R.add(k, R.mul(R.double(R.gt(v, R.lit(1.0))), R.lit(CELL_BAD)))
    return {"__k": k, "__sp": x, "__sy": yv}
