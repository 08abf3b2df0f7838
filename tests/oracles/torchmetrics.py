"""Oracles of ``calibr.torchmetrics`` (``docs/torchmetrics.md``): torchmetrics'
bins and per-bin sums with numpy, and the sigmoid and softmax of logits in exact
arithmetic where it is cheap.

The boundaries (``torch.linspace``) and the order of additions of ``torch.sum``
have no oracle here: the tests compare those with torch itself.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = [
    "accumulate_oracle",
    "bin_index_oracle",
    "sigmoid_oracle",
    "softmax_oracle",
    "top_label_oracle",
]


def bin_index_oracle(conf: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """``bucketize(conf, boundaries, right=True) - 1``: bins closed on the left, 1.0 alone."""
    return np.searchsorted(boundaries, conf, side="right") - 1


def accumulate_oracle(conf, acc, boundaries, count, conf_sum, acc_sum) -> None:
    """Add ``conf``/``acc`` into the per-bin state, one element after another (in place),
    in the state's dtype, as ``scatter_add_`` does on a CPU."""
    dtype = count.dtype
    idx = bin_index_oracle(conf.astype(dtype), boundaries)
    np.add.at(count, idx, dtype.type(1.0))
    np.add.at(conf_sum, idx, conf.astype(dtype))
    np.add.at(acc_sum, idx, acc.astype(dtype))


def top_label_oracle(probs: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Top-label confidence (as float32) and hit (first maximal column on ties)."""
    pred = np.argmax(probs, axis=1)
    conf = probs[np.arange(probs.shape[0]), pred].astype(np.float32)
    return conf, (pred == target).astype(np.float32)


def sigmoid_oracle(x: np.ndarray) -> np.ndarray:
    """``1 / (exp(-x) + 1)`` with ``exp(-x)`` rounded to the dtype of ``x`` (where it
    overflows, as in torch's float32 kernel, the sigmoid is 0) and the rest in
    float64 (``math.exp``, correct to about 1 ulp), rounded once to the dtype.

    For float64 input this is the same formula as the kernel's (a second
    transcription, not an independent oracle); the tests compare both dtypes with
    torch as well.
    """
    out = []
    for v in np.asarray(x, dtype=np.float64).ravel():
        e = math.exp(-v) if -v < 709.0 else math.inf
        with np.errstate(over="ignore"):
            e = float(x.dtype.type(e))  # inf where exp(-x) overflows in the dtype
        out.append(1.0 / (e + 1.0))
    return np.array(out, dtype=x.dtype).reshape(x.shape)


def softmax_oracle(x: np.ndarray) -> np.ndarray:
    """Softmax of each row: ``d = x - max`` in the dtype of ``x`` (as torch computes
    it; the rounding of this difference is part of the definition), then
    ``exp(d) / sum(exp(d))`` in exact rational arithmetic on float64 exponentials
    (``math.exp``, correct to about 1 ulp), rounded once to the dtype."""
    rows = []
    for row in np.asarray(x):
        diff = (row - row.max()).astype(np.float64)  # in x's dtype, then exact
        e = [Fraction(math.exp(v)) for v in diff]
        total = sum(e)
        rows.append([float(v / total) for v in e])
    return np.array(rows, dtype=x.dtype)
