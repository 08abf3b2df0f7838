"""Kernels of the squared kernel calibration error (SKCE) and the MMCE: the map.

The definitions are in ``docs/definitions.md``, "Kernel metrics"; the readable
O(n^2) numpy oracles the tests check these kernels against are in
``tests/oracles/skce.py``.

Notation: ``x`` is what the kernel sees (scalar confidences, or probability
vectors in the canonical form), ``e`` the residuals, ``h`` the bandwidth, and
``h_ij = exp(-d(x_i, x_j) / h) * <e_i, e_j>`` the kernel terms. Every estimator
is a function of the pair sum ``T = sum_{i<j} h_ij``, of the diagonal
``sum_i ||e_i||^2`` (biased) or of the disjoint pairs (``"ul"``):

* biased: ``(2 T + sum_i ||e_i||^2) / n^2``
* uq:     ``T / C(n, 2)``
* ul:     ``mean_{i < n/2} h_{2i, 2i+1}`` (0-based, pairs in the given order)

The kernels, each exact (no approximation, no n x n matrix):

* :mod:`.scalar_sums` -- binary, confidence and classwise forms: ``T`` by a
  running sum along the sorted confidences, O(n log n); the ``"ul"`` estimate;
* :mod:`.scalar_median` -- the median bandwidth of scalars: an exact selection
  of the middle positive pairwise difference, about six O(n) sweeps;
* :mod:`.canonical` -- the canonical form: ``T``, ``"ul"`` and the median of the
  Euclidean distances, in blocked parallel tiles, O(n^2 K) time, O(n) memory;
* :mod:`.vexp` -- the vectorisable ``exp`` of their inner loops;
* :mod:`.top_label` -- the confidence form's top-label confidence and hit.
"""

from __future__ import annotations

__all__ = ["estimate_from_sums"]


def estimate_from_sums(estimator: str, n: int, pair_sum: float, diag: float) -> float:
    """biased or uq estimate from ``T = sum_{i<j} h_ij`` and ``sum_i ||e_i||^2``."""
    if estimator == "biased":
        return (2.0 * pair_sum + diag) / (float(n) * float(n))
    return pair_sum / (n * (n - 1) / 2)
