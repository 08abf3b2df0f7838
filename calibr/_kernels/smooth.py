"""The one compiled pass of the smooth ECE (``docs/smece.md``): linear binning of
the predictions and their residuals onto a grid of [0, 1].

Everything else of :func:`calibr.smece` (the reflected Gaussian convolution on
the grid by FFT, the integral of its absolute value) is numpy on grid-sized
arrays, in ``calibr/_metrics/smooth.py``.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["bin_residuals"]


@jit(nogil=True)
def bin_residuals(x, hits, m):  # pragma: no cover - compiled
    """Linear binning ("cloud in cell") of the points ``x`` (float64 in [0, 1])
    onto the grid ``j / m``, ``j = 0..m``: a point at ``(a + u) / m``
    (``0 <= u < 1``) gives ``1 - u`` of its mass to node ``a`` and ``u`` to
    node ``a + 1``. Returns two float64 arrays of length ``m + 1``: the binned
    residuals ``hits_i - x_i`` and the binned counts (each point's mass 1).

    Node sums are accumulated in the row order, so the result does not depend
    on anything but the input (no threads).
    """
    wr = np.zeros(m + 1)
    wd = np.zeros(m + 1)
    for i in range(x.shape[0]):
        v = x[i]
        g = v * m
        a = int(g)
        if a >= m:  # v == 1 (and nothing above: the input layer checked [0, 1])
            a = m - 1
        u = g - a
        r = np.float64(hits[i]) - v
        wr[a] += (1.0 - u) * r
        wr[a + 1] += u * r
        wd[a] += 1.0 - u
        wd[a + 1] += u
    return wr, wd
