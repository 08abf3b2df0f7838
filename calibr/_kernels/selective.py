"""The compiled parts of the selective-prediction areas (``calibr._metrics.selective``;
``docs/definitions.md``, "Selective prediction").

* :func:`binary_miss_keys` -- the sort key of each row of a vector ``p`` with 0/1
  outcomes, in one pass: the bits of its confidence ``max(p, 1 - p)`` shifted left
  by one, and 1 in the last bit when its top label (1 when ``p > 0.5``) is wrong.
  The keys of ``calibr._kernels.cumulative.fill_keys`` (which a matrix's top-label
  confidences and misses get), without the confidence and hit arrays.
* :func:`sorted_areas` -- one pass over the sorted keys, from the highest
  confidence down, block by block of tied confidences (one point of the curve
  each), that integrates the AURC and the AUGRC under both rules at once.

With :math:`m_j` the rows of the j-th block (the highest confidence first),
:math:`n_j` and :math:`e_j` the rows and errors of the blocks 1..j and N the
rows in all, the areas of ``docs/definitions.md`` are

* AURC, trapezoid: :math:`\\sum_j m_j (r_j + r_{j-1}) / (2N)`, :math:`r_j = e_j /
  n_j`, :math:`r_0 = r_1`; step: :math:`\\sum_j m_j r_j / N`;
* AUGRC, trapezoid: :math:`\\sum_j m_j (e_j + e_{j-1}) / (2N^2)`, :math:`e_0 = 0`;
  step: :math:`\\sum_j m_j e_j / N^2`,

the coverage steps :math:`m_j / N` taken from the integer counts. Each sum adds
the terms of :data:`PART` points apart, then those parts in order, so that its
rounding error grows with ``PART + points / PART``, not with the points.
The readable oracle is ``tests/oracles/selective.py``.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .vexp import f64_as_i64

__all__ = ["AREAS", "PART", "binary_miss_keys", "sorted_areas"]

#: The order of :func:`sorted_areas`' numbers: (measure, rule) pairs, then the errors.
AREAS = (("aurc", "trapezoid"), ("aurc", "step"), ("augrc", "trapezoid"), ("augrc", "step"))


@jit(nogil=True)
def binary_miss_keys(p, y, keys):  # pragma: no cover - compiled
    """Fill ``keys`` (uint64) with ``bits(max(p, 1 - p)) << 1 | miss`` of validated
    ``p`` in [0, 1] and 0/1 ``y``: ``miss`` is 1 when ``(p > 0.5) != (y != 0)``.
    A confidence is at least 0.5, so its top bits are clear and the keys order as
    the confidences do."""
    for i in range(p.shape[0]):
        v = p[i]
        conf = max(v, 1.0 - v)
        miss = (v > 0.5) != (y[i] != 0)
        keys[i] = np.uint64((f64_as_i64(conf) << 1) | (1 if miss else 0))
    return 0


#: Points whose terms are summed apart before their sum joins the total.
PART = 1024


@jit(nogil=True)
def sorted_areas(keys):  # pragma: no cover - compiled
    """``(AURC trapezoid, AURC step, AUGRC trapezoid, AUGRC step, errors)`` of keys
    sorted in increasing order (:data:`AREAS`; the module docstring gives the sums).
    ``keys`` must not be empty."""
    one = np.uint64(1)
    n = keys.shape[0]
    rows = 0
    errors = 0
    prev_r = -1.0  # no point yet: the first point's risk stands in for r_0
    a_t, a_s, g_t, g_s = 0.0, 0.0, 0.0, 0.0  # the totals
    pa_t, pa_s, pg_t, pg_s = 0.0, 0.0, 0.0, 0.0  # the current part's sums
    points = 0
    i = n - 1
    while i >= 0:
        x = keys[i] >> one
        m = 0
        e = 0
        while i >= 0 and (keys[i] >> one) == x:
            e += np.int64(keys[i] & one)
            m += 1
            i -= 1
        before = errors
        rows += m
        errors += e
        r = errors / rows
        if prev_r < 0.0:
            prev_r = r
        dm = float(m)
        pa_t += dm * (r + prev_r)
        pa_s += dm * r
        pg_t += dm * float(errors + before)
        pg_s += dm * float(errors)
        prev_r = r
        points += 1
        if points == PART:
            a_t += pa_t
            a_s += pa_s
            g_t += pg_t
            g_s += pg_s
            pa_t, pa_s, pg_t, pg_s = 0.0, 0.0, 0.0, 0.0
            points = 0
    a_t += pa_t
    a_s += pa_s
    g_t += pg_t
    g_s += pg_s
    total = float(n)
    return (a_t / (2.0 * total), a_s / total, g_t / (2.0 * total * total),
            g_s / (total * total), errors)
