"""Oracle of ``multicalibration()`` (``docs/definitions.md``, "Multicalibration:
`multicalibration()`"), written from the definition: pandas' own
``value_counts``, ``quantile`` and ``cut`` for the segments, one boolean mask per
segment, and each segment's ECCE from its own rows sorted by ``p``, the
cumulative sum read at the end of each block of tied ``p``. Weights are whole
numbers, read as counts: the rows are repeated (``numpy.repeat``).

Also the p-value, the upper tail of the range of standard Brownian motion, in
40-digit arithmetic (mpmath).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

__all__ = ["ecce_oracle", "multicalibration_oracle", "range_sf_oracle", "repeat_rows"]


def ecce_oracle(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``(ECCE, sigma)`` of one segment's rows: the range of ``0, C_1, ..., C_m``,
    ``C_j`` the sum of ``y - p`` over the rows whose ``p`` is at most the ``j``-th
    distinct value, over ``n``; ``sigma = sqrt(sum p (1 - p)) / n``."""
    values, block = np.unique(p, return_inverse=True)
    sums = np.array([np.sum(y[block == j] - p[block == j]) for j in range(values.shape[0])])
    path = np.concatenate([[0.0], np.cumsum(sums)])
    n = p.shape[0]
    return float((path.max() - path.min()) / n), float(math.sqrt(np.sum(p * (1 - p))) / n)


def repeat_rows(df: pd.DataFrame, weights: str) -> pd.DataFrame:
    """Each row repeated ``df[weights]`` times in place (whole numbers), the
    weights column dropped."""
    w = df[weights].to_numpy()
    assert np.all(w == np.floor(w)), "the oracle reads whole-number weights"
    return df.loc[np.repeat(df.index.to_numpy(), w.astype(np.int64))].drop(columns=weights)


def _keys(values: pd.Series, numeric: bool, max_values: int) -> list[tuple]:
    """The segment key of each row: ``("value", v)``, ``("missing",)``,
    ``("other",)`` or ``("bin", left, right)``."""
    if numeric:
        x = values.astype(float)
        if x.nunique() <= max_values:
            return [("missing",) if math.isnan(v) else ("value", v) for v in x]
        edges = pd.unique(x.quantile(np.linspace(0, 1, max_values + 1)).to_numpy())
        bins = pd.cut(x, bins=edges, labels=False, include_lowest=True, duplicates="drop")
        return [("missing",) if math.isnan(b) else ("bin", float(edges[int(b)]),
                                                    float(edges[int(b) + 1])) for b in bins]
    missing = object()
    filled = pd.Series([missing if pd.isna(v) else v for v in values], dtype=object)
    counts = filled.value_counts()  # most frequent first, ties in order of first occurrence
    rare = set(counts.index[max_values - 1:]) if counts.shape[0] > max_values else set()
    out = []
    for v in filled:
        if v in rare:
            out.append(("other",))
        elif v is missing:
            out.append(("missing",))
        else:
            out.append(("value", v.item() if isinstance(v, np.generic) else v))
    return out


def multicalibration_oracle(df: pd.DataFrame, p: str, y: str, segments: list[str], *,
                            categorical: tuple = (), max_depth: int = 3, max_values: int = 3,
                            min_samples: int = 10) -> dict[frozenset, tuple[int, float, float]]:
    """Every segment with at least ``min_samples`` rows: ``{frozenset((column, key),
    ...): (rows, ECCE, sigma)}``, the whole data under ``frozenset()``."""
    df = df.sort_values(p, kind="stable").reset_index(drop=True)
    pv, yv = df[p].to_numpy(float), df[y].to_numpy(float)
    keys = {}
    for col in segments:
        s = df[col]
        numeric = (pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
                   and col not in categorical)
        keys[col] = _keys(s, numeric, max_values)
    out = {}
    for depth in range(max_depth + 1):
        for combo in itertools.combinations(segments, depth):
            cells: dict[tuple, list[int]] = {}
            for i in range(df.shape[0]):
                cells.setdefault(tuple(keys[c][i] for c in combo), []).append(i)
            for cell, rows in cells.items():
                if len(rows) >= min_samples:
                    e, s = ecce_oracle(pv[rows], yv[rows])
                    out[frozenset(zip(combo, cell, strict=True))] = (len(rows), e, s)
    return out


def range_sf_oracle(x: float) -> float:
    """``P(R > x)`` for the range ``R`` of standard Brownian motion on [0, 1]:
    ``4 sum_{k >= 1} (-1)^(k-1) k erfc(k x / sqrt(2))`` (Feller 1951), summed in
    40-digit arithmetic until the terms vanish."""
    import mpmath

    with mpmath.workdps(40):
        v = mpmath.mpf(x)
        if v <= 0:
            return 1.0
        total = mpmath.mpf(0)
        k = 1
        while True:
            term = k * mpmath.erfc(k * v / mpmath.sqrt(2))
            total += term if k % 2 else -term
            if term < mpmath.mpf(10) ** -45 and k * v > 1:
                break
            k += 1
        return float(4 * total)
