"""R's ``lowess()``: Cleveland's (1979) locally weighted scatterplot smoother.

A port of the C function ``clowess`` behind R's ``stats::lowess`` (R's
``src/library/stats/src/lowess.c``), written to do the same floating-point
operations in the same order, so that it reproduces R's numbers to the last
few bits (see ``docs/val_prob.md``, "Tolerances"):

* the points are sorted by ``x`` with a stable sort (R's ``order()``), so tied
  ``x`` keep their order and every sum runs over the same terms in the same
  order;
* the sums of ``lowest()`` are sequential, left to right, as in C
  (``np.add.accumulate``, never numpy's pairwise ``sum``);
* the comparisons that choose the neighbourhood (``d1 > d2``, ``r <= 0.999 h``,
  ``x > cut``) are made on the same computed differences as in C; where C scans
  a run of indices one by one, this port finds the same index by binary
  search on the same monotone predicate.

Only :func:`calibr._metrics.valprob.val_prob` uses it (``lowess(p, y, iter = 0)``, as
``rms::val.prob`` does), with R's defaults ``f = 2/3`` and
``delta = 0.01 * diff(range(x))``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["lowess"]


def lowess(
    x: np.ndarray,
    y: np.ndarray,
    f: float = 2.0 / 3.0,
    iter: int = 3,
    delta: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """R's ``lowess(x, y, f, iter, delta)``: sorted ``x`` and the smoothed ``y``.

    Parameters
    ----------
    x, y : ndarray
        Finite float64 vectors of the same positive length (the caller checks).
    f : float, default 2/3
        The smoother span: the share of points in each local fit.
    iter : int, default 3
        The number of robustifying iterations.
    delta : float, optional
        Points closer than ``delta`` to the last fitted point are interpolated
        instead of fitted; R's default ``0.01 * diff(range(x))``.

    Returns
    -------
    (ndarray, ndarray)
        ``x`` sorted (R's ``order(x)``, stable) and the fitted values in that
        order, as R's ``lowess()`` returns ``list(x, y)``.

    Examples
    --------
    >>> xs, ys = lowess(np.array([3.0, 1.0, 2.0, 4.0]), np.array([1.0, 0.0, 2.0, 3.0]))
    >>> xs.tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    if delta is None:
        delta = 0.01 * (float(xs[-1]) - float(xs[0]))
    return xs, _clowess(xs, y[order], float(f), int(iter), float(delta))


def _lowest(
    x: np.ndarray,
    y: np.ndarray,
    xs: float,
    nleft: int,
    nright: int,
    rw: np.ndarray | None,
) -> float | None:
    """C's ``lowest()``: the local weighted linear fit at ``xs`` (0-based indices).

    ``rw`` are the robustness weights (None in the first pass). Returns None
    when every weight is zero (C's ``ok = FALSE``).
    """
    n = x.shape[0]
    range_ = x[n - 1] - x[0]
    h = max(xs - x[nleft], x[nright] - xs)
    h9 = 0.999 * h
    h1 = 0.001 * h
    # C scans j = nleft, nleft + 1, ... and stops at the first point right of
    # xs that is farther than h9 ("pick up all ties on right"). For x[j] > xs,
    # fabs(x[j] - xs) = x[j] - xs grows with j, so the stop is a binary search.
    lo, hi = nleft, n  # the stop index is in [nleft, n]; n means "ran off the end"
    while lo < hi:
        mid = (lo + hi) // 2
        xm = x[mid]
        if xm > xs and abs(xm - xs) > h9:
            hi = mid
        else:
            lo = mid + 1
    nrt = lo  # one past the rightmost point considered
    xw = x[nleft:nrt]
    r = xw - xs
    np.abs(r, out=r)
    if h > 0.0:
        # C's fcube(1 - fcube(r / h)), fcube(v) = v * v * v, in place
        q = r / h
        w = q * q
        w *= q
        np.subtract(1.0, w, out=w)
        q = w * w
        q *= w
        w = q
    else:
        w = np.ones_like(r)
    w[r <= h1] = 1.0
    w[r > h9] = 0.0
    if rw is not None:
        w *= rw[nleft:nrt]
    a = _seqsum(w)
    if not a > 0.0:
        return None
    w /= a
    if h > 0.0:
        a = _seqsum(w * xw)
        b = xs - a
        d = xw - a
        dd = d * d
        dd *= w
        c = _seqsum(dd)
        if math.sqrt(c) > 0.001 * range_:
            b = b / c
            d *= b
            d += 1.0
            w *= d
    w *= y[nleft:nrt]
    return _seqsum(w)


def _seqsum(values: np.ndarray) -> float:
    """Left-to-right float64 sum, as C's ``s += v[j]`` loop (not pairwise)."""
    if values.shape[0] == 0:
        return 0.0
    return float(np.add.accumulate(values)[-1])


def _clowess(x: np.ndarray, y: np.ndarray, f: float, nsteps: int, delta: float) -> np.ndarray:
    """C's ``clowess()`` on sorted ``x`` (0-based indices throughout)."""
    n = x.shape[0]
    ys = np.empty(n)
    if n < 2:
        ys[:] = y
        return ys
    # at least two, at most n points (C's int cast truncates toward zero)
    ns = max(2, min(n, int(f * n + 1e-7)))
    rw: np.ndarray | None = None
    iteration = 1
    while iteration <= nsteps + 1:
        nleft = 0
        nright = ns - 1
        last = -1  # index of the previous fitted point
        i = 0  # index of the current point
        while True:
            if nright < n - 1:
                # move nleft, nright to the right while the radius decreases:
                # d1 = x[i] - x[nleft] falls and d2 = x[nright + 1] - x[i] rises
                # with each move, so the moves stop at the first k where
                # d1 <= d2 (a binary search; C moves one step at a time).
                xi = x[i]
                lo, hi = 0, n - 1 - nright  # number of moves, in [0, n - 1 - nright]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if xi - x[nleft + mid] > x[nright + 1 + mid] - xi:
                        lo = mid + 1
                    else:
                        hi = mid
                nleft += lo
                nright += lo
            fitted = _lowest(x, y, x[i], nleft, nright, rw)
            ys[i] = y[i] if fitted is None else fitted
            if last < i - 1:
                # skipped points: interpolate between the last two fits
                denom = x[i] - x[last]
                js = np.arange(last + 1, i)
                alpha = (x[js] - x[last]) / denom
                ys[js] = alpha * ys[i] + (1.0 - alpha) * ys[last]
            last = i
            # points within delta of the last fit are skipped, except ties of
            # x[last], which get its value
            cut = x[last] + delta
            beyond = int(np.searchsorted(x, cut, side="right"))  # first x > cut
            ties_end = int(np.searchsorted(x, x[last], side="right"))
            if ties_end > last + 1:
                ys[last + 1:ties_end] = ys[last]
                last = ties_end - 1
            i = max(last + 1, beyond - 1)
            if last >= n - 1:
                break
        res = y - ys
        if iteration > nsteps:
            break
        sc = _seqsum(np.abs(res)) / n
        # robustness weights: bisquare of the residuals over 6 * median |res|
        r = np.abs(res)
        srt = np.sort(r)
        m1 = n // 2
        if n % 2 == 0:
            cmad = 3.0 * (srt[m1] + srt[n - m1 - 1])
        else:
            cmad = 6.0 * srt[m1]
        if cmad < 1e-7 * sc:  # effectively zero
            break
        c9 = 0.999 * cmad
        c1 = 0.001 * cmad
        with np.errstate(divide="ignore", invalid="ignore"):  # cmad = 0: no r <= c9 > 0
            u = r / cmad
        v = 1.0 - u * u
        rw = np.where(r <= c1, 1.0, np.where(r <= c9, v * v, 0.0))
        iteration += 1
    return ys
