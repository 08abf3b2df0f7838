"""The kernels of the proper scores and the AUROC (``calibr._metrics.scores``).

Each ``checked_*`` kernel reads unchecked input once (the input layer's
``Converted.direct()``: ``p`` float64 and C-contiguous, labels of any real dtype)
and checks it in the same pass: every ``p`` in [0, 1] (NaN fails), binary labels
exactly 0 or 1, matrix rows summing to 1 within ``tol``, class codes
``labels - offset`` whole numbers in 0..K-1. It returns ``ok=False`` as soon as a
block holds a refused value; the caller then lets the input layer check again and
say what is wrong. The same kernels serve validated input (codes 0-based,
``tol=inf``).

Sums run in blocks of :data:`BLOCK` rows (a block's sum, then the sum of the
blocks): the error of the sum grows with the block size and the number of
blocks, not with n.

The AUROC's keys pack a row's value and its 0/1 outcome into one uint64 (for
``0 <= x <= 1`` the IEEE bits read as an integer are monotone, below 2**62):
``(bits(x) << 1) | c``. One in-place ``numpy.sort`` of the keys orders the rows by
``x``; :func:`auc_sorted_keys` walks the blocks of tied ``x`` and counts, for each
positive, the negatives below it (ties one half: midranks), in integers.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .vexp import f64_as_i64

__all__ = ["BLOCK", "LANES", "auc_sorted_keys", "auc_weighted_sorted", "binary_keys",
           "checked_binary_brier", "checked_binary_picked", "checked_matrix_brier",
           "checked_matrix_picked", "lane_sum"]

#: Rows summed together before their sum is added to the total.
BLOCK = 4096


@jit(nogil=True, inline="always")
def _code(v, offset, k):  # pragma: no cover - compiled
    """The 0-based class code of label ``v`` (``v - offset``), or -1 if it is not a
    whole number in 0..k-1 (NaN: -1)."""
    c = v - offset
    if c >= 0 and c < k and c == np.int64(c):
        return np.int64(c)
    return np.int64(-1)


#: Running sums of ``checked_binary_brier``: row i of a block adds to sum i mod LANES.
LANES = 8


@jit(nogil=True)
def checked_binary_brier(p, y):  # pragma: no cover - compiled
    """``(sum of (p - y)^2, ok)`` of a vector ``p`` and 0/1 labels ``y``. Each block
    keeps :data:`LANES` running sums (row i adds to sum i mod LANES), so that the
    additions do not wait on each other; the order of the additions is fixed by n
    alone."""
    n = p.shape[0]
    total = 0.0
    acc = np.empty(LANES)
    for b0 in range(0, n, BLOCK):
        b1 = min(n, b0 + BLOCK)
        acc[:] = 0.0
        bad = False
        i = b0
        while i + LANES <= b1:
            for k in range(LANES):
                v = p[i + k]
                c = y[i + k]
                bad |= (v < 0.0) | (v > 1.0) | ((c != 0) & (c != 1)) | (v != v)
                d = v - np.float64(c)
                acc[k] += d * d
            i += LANES
        while i < b1:
            v = p[i]
            c = y[i]
            bad |= (v < 0.0) | (v > 1.0) | ((c != 0) & (c != 1)) | (v != v)
            d = v - np.float64(c)
            acc[0] += d * d
            i += 1
        if bad:
            return total, False
        for k in range(LANES):
            total += acc[k]
    return total, True


@jit(nogil=True)
def checked_binary_picked(p, y, eps, lo, hi, out):  # pragma: no cover - compiled
    """The probability of the outcome of rows ``lo .. hi - 1`` (``p`` where ``y`` is
    1, ``1 - p`` where it is 0) into ``out[0 : hi - lo]``, clipped to
    ``[eps, 1 - eps]`` when ``eps > 0``; returns ``(some value is 0, ok)``.

    The loops read slices and fold the checks into one flag, so that they
    vectorise (indexing ``out[i - lo]`` and a running ``&=`` of the checks made
    this pass 5 to 6 times slower: it was most of ``log_loss``'s time)."""
    ps = p[lo:hi]
    ys = y[lo:hi]
    bad = False
    if eps > 0.0:
        top = 1.0 - eps
        for i in range(hi - lo):
            v = ps[i]
            c = ys[i]
            bad |= (v < 0.0) | (v > 1.0) | ((c != 0) & (c != 1)) | (v != v)
            v = min(max(v, eps), top)
            out[i] = v if c != 0 else 1.0 - v
        return False, not bad
    zero = False
    for i in range(hi - lo):
        v = ps[i]
        c = ys[i]
        bad |= (v < 0.0) | (v > 1.0) | ((c != 0) & (c != 1)) | (v != v)
        q = v if c != 0 else 1.0 - v
        zero |= q == 0.0
        out[i] = q
    return zero, not bad


@jit(nogil=True)
def lane_sum(x, total):  # pragma: no cover - compiled
    """``total`` plus the sum of ``x``: block by block of :data:`BLOCK` values
    (aligned to ``x``'s start), each block in :data:`LANES` running sums (value i
    adds to sum i mod LANES) added to the total in order. The order of the
    additions is fixed by the length of ``x`` alone, so chunks of a multiple of
    :data:`BLOCK` values, each given the running total, sum exactly as the whole
    (``log_loss`` in chunks, and per group in ``summarise``)."""
    n = x.shape[0]
    acc = np.empty(LANES)
    for b0 in range(0, n, BLOCK):
        b1 = min(n, b0 + BLOCK)
        acc[:] = 0.0
        i = b0
        while i + LANES <= b1:
            for k in range(LANES):
                acc[k] += x[i + k]
            i += LANES
        while i < b1:
            acc[(i - b0) % LANES] += x[i]
            i += 1
        for k in range(LANES):
            total += acc[k]
    return total


@jit(nogil=True)
def checked_matrix_brier(p, labels, offset, tol):  # pragma: no cover - compiled
    """``(sum over rows and classes of (p_ik - [y_i = k])^2, ok)`` of a matrix
    ``p`` and class labels ``labels - offset``."""
    n, k = p.shape
    total = 0.0
    for b0 in range(0, n, BLOCK):
        b1 = min(n, b0 + BLOCK)
        s = 0.0
        good = True
        for i in range(b0, b1):
            c = _code(labels[i], offset, k)
            good &= c >= 0
            row = 0.0
            rs = 0.0
            for j in range(k):
                v = p[i, j]
                rs += v
                good &= (v >= 0.0) & (v <= 1.0)
                d = v - (1.0 if j == c else 0.0)
                row += d * d
            good &= abs(rs - 1.0) <= tol
            s += row
        if not good:
            return total, False
        total += s
    return total, True


@jit(nogil=True)
def checked_matrix_picked(p, labels, offset, tol, eps, lo, hi, out):  # pragma: no cover
    """The probability of the class of rows ``lo .. hi - 1`` (``p[i, y_i]``) into
    ``out[0 : hi - lo]``, clipped to ``[eps, 1 - eps]`` when ``eps > 0``; returns
    ``(some value is 0, ok)``."""
    k = p.shape[1]
    zero = False
    good = True
    clip = eps > 0.0
    for i in range(lo, hi):
        c = _code(labels[i], offset, k)
        good &= c >= 0
        rs = 0.0
        for j in range(k):
            v = p[i, j]
            rs += v
            good &= (v >= 0.0) & (v <= 1.0)
        good &= abs(rs - 1.0) <= tol
        q = p[i, c] if c >= 0 else 0.0
        if clip:
            q = min(max(q, eps), 1.0 - eps)
        zero |= q == 0.0
        out[i - lo] = q
    return zero, good


@jit(nogil=True)
def binary_keys(x, c, keys):  # pragma: no cover - compiled
    """Fill ``keys`` with ``(bits(x) << 1) | c`` (``x`` in [0, 1], -0.0 as 0.0);
    returns False if some ``x`` is outside [0, 1] or some ``c`` is not 0 or 1."""
    n = x.shape[0]
    good = True
    for i in range(n):
        v = x[i]
        ci = c[i]
        good &= (v >= 0.0) & (v <= 1.0) & ((ci == 0) | (ci == 1))
        b = f64_as_i64(v) & 0x7FFFFFFFFFFFFFFF
        keys[i] = np.uint64((b << 1) | (1 if ci != 0 else 0))
    return good


@jit(nogil=True)
def auc_sorted_keys(keys):  # pragma: no cover - compiled
    """``(twice the Mann-Whitney count, positives, negatives)`` of sorted keys: for
    each positive, 2 x (negatives with a smaller x) + (negatives with the same x)."""
    n = keys.shape[0]
    one = np.uint64(1)
    twice = np.int64(0)
    below = np.int64(0)
    npos = np.int64(0)
    i = 0
    while i < n:
        x = keys[i] >> one
        pos = np.int64(0)
        neg = np.int64(0)
        while i < n and (keys[i] >> one) == x:
            if keys[i] & one:
                pos += 1
            else:
                neg += 1
            i += 1
        twice += pos * (2 * below + neg)
        below += neg
        npos += pos
    return twice, npos, below


@jit(nogil=True)
def auc_weighted_sorted(x, c, w):  # pragma: no cover - compiled
    """``(sum over positive-negative pairs of w_i w_j [x_i > x_j] + half of the tied
    pairs, total positive weight, total negative weight)`` of rows sorted by ``x``."""
    n = x.shape[0]
    num = 0.0
    below = 0.0
    wpos = 0.0
    i = 0
    while i < n:
        v = x[i]
        pos = 0.0
        neg = 0.0
        while i < n and x[i] == v:
            if c[i] != 0:
                pos += w[i]
            else:
                neg += w[i]
            i += 1
        num += pos * (below + 0.5 * neg)
        below += neg
        wpos += pos
    return num, wpos, below

