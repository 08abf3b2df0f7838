"""The top label of a row of probabilities: its largest value and the first column
that holds it.

One rule everywhere (``docs/definitions.md``, "Binned metrics", confidence
form): ties go to the first maximal column, R's
``max.col(ties.method = "first")``. ``torch.max(dim=1)`` on a CPU follows the
same rule (checked against torch in ``tests/test_torchmetrics_compat.py``), so
the torchmetrics-compatible kernels use it too. Every kernel that needs a top
label calls :func:`first_max`, which is inlined into it.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["first_max", "top_label"]


@jit(nogil=True, inline="always")
def first_max(p, i):  # pragma: no cover - compiled
    """``(max_k p[i, k], the first k where it is reached)``; -0.0 equals 0.0.

    Never called with NaN: the input layers refuse it before any kernel runs.
    """
    best = p[i, 0]
    arg = 0
    for k in range(1, p.shape[1]):
        if p[i, k] > best:  # strict: a tie keeps the earlier column
            best = p[i, k]
            arg = k
    return best, arg


@jit()
def _top_label(p, codes):  # pragma: no cover - compiled
    n = p.shape[0]
    rho = np.empty(n)
    hit = np.empty(n, np.uint8)
    for i in range(n):
        best, arg = first_max(p, i)
        rho[i] = best
        hit[i] = 1 if arg == codes[i] else 0
    return rho, hit


def top_label(p: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidence ``max_k p_ik`` (float64) and correctness ``1{first argmax == y_i}``
    (uint8) of each row of the float64 matrix ``p``; ``codes`` are 0-based."""
    return _top_label(p, codes)
