"""relplot 1.0.3's discretisation of the smooth ECE, for ``smece(method="relplot")``
and ``smece_curve(method="relplot")`` (``docs/smece.md``, "method="relplot"").

relplot's ``smooth_ece(f, y, sigma)`` (``relplot/metrics.py``) and its
``ReflectedGaussianKernel`` (``relplot/kernels.py``), with its defaults
(``config.smECE_mesh_pts = 200``, ``config.use_logit_scaling = False``),
repeated operation by operation in numpy, so that the numbers are relplot's to
rounding and the bandwidth search takes relplot's path:

1. linear binning of the residuals and of unit masses onto ``nodes`` points
   ``j / (nodes - 1)``, ``nodes = max(2000, round(20 / sigma)) // 2 + 1``
   (calibr's compiled pass, which adds the same terms in the same order as
   relplot's ``numpy.add.at``; once per grid, where relplot bins four times
   per bandwidth);
2. the grid reflected at both ends without repeating the end nodes, convolved
   (``numpy.convolve``, as relplot) with the Gaussian density sampled at
   ``linspace(0, 1, nodes) - 0.5``;
3. linear interpolation to an evaluation mesh, ``1e-4`` added to the smoothed
   counts, and ``sum(|A / D| D) / sum(D)`` over the mesh of
   ``max(200, round(10 / sigma))`` points.

relplot computes in float64 and uses no randomness in these functions.
"""

from __future__ import annotations

import numpy as np

from .._kernels.smooth import bin_residuals

__all__ = ["RelplotGrids", "relplot_curve", "relplot_smece_at"]

#: relplot's ``config.smECE_mesh_pts``: the fewest points of its evaluation mesh.
MESH_POINTS = 200
#: relplot's ``eps`` of ``BaseKernelMixin.smooth``, added to the smoothed counts.
DENSITY_EPS = 1e-4


def grid_nodes(sigma: float) -> int:
    """relplot's grid for bandwidth ``sigma``: ``max(2000, round(20 / sigma)) // 2 + 1``
    nodes (1001 for ``sigma >= 0.01``)."""
    return max(2000, round(20 / sigma)) // 2 + 1


class RelplotGrids:
    """The linearly binned residuals ``y - x`` and unit masses of one sample on
    relplot's grids, one compiled pass per grid size."""

    def __init__(self, x: np.ndarray, hits: np.ndarray) -> None:
        self.x = np.ascontiguousarray(x, dtype=np.float64)
        self.hits = hits
        self.n = self.x.shape[0]
        self.grids: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        if nodes not in self.grids:
            self.grids[nodes] = bin_residuals(self.x, self.hits, nodes - 1)
        return self.grids[nodes]

    def outcomes(self, nodes: int) -> np.ndarray:
        """The binned outcomes ``y`` (relplot's ``smooth_round_to_grid(f, y)``):
        the binned unit masses of the rows with ``y = 1``, added in the same
        order (relplot's other rows add exact zeros)."""
        events = self.hits == 1
        return bin_residuals(self.x[events], self.hits[events], nodes - 1)[1]


def _kernel(nodes: int, sigma: float) -> np.ndarray:
    """``GaussianKernel.kernel_ev``: the normal density of scale ``sigma`` at
    ``linspace(0, 1, nodes) - 0.5``, unnormalised on the grid."""
    t = np.linspace(0, 1, nodes)
    var = sigma**2
    res = np.exp(-(t - 0.5) * (t - 0.5) / (2 * var))
    res /= np.sqrt(2 * np.pi) * sigma
    return res


def _reflected(values: np.ndarray, ker: np.ndarray, nodes: int) -> np.ndarray:
    """``ReflectedGaussianKernel.convolve``: one reflection at each end, the end
    nodes not repeated, and the middle ``nodes`` values of the convolution."""
    ext = np.concatenate([np.flip(values)[:-1], values, np.flip(values)[1:]])
    return np.convolve(ext, ker, "valid")[nodes // 2: nodes // 2 + nodes]


def _interpolate(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """relplot's ``interpolate``: the piecewise-linear function through
    ``(i / (len(y) - 1), y[i])`` at ``t``."""
    buckets_cnt = len(y)
    bucket_size = 1 / (buckets_cnt - 1)
    inds = (t * (buckets_cnt - 1)).astype(int).clip(0, buckets_cnt - 2)
    residual = (t - inds * bucket_size) / bucket_size
    return y[inds] * (1 - residual) + y[inds + 1] * residual


def _sums(grids: RelplotGrids, sigma: float, mesh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """relplot's kernel sums of the residuals ``y - x`` and of the counts at
    ``mesh`` (``GaussianKernel.apply``), before its ``1e-4``."""
    nodes = grid_nodes(sigma)
    residuals, counts = grids(nodes)
    ker = _kernel(nodes, sigma)
    return (_interpolate(mesh, _reflected(residuals, ker, nodes)),
            _interpolate(mesh, _reflected(counts, ker, nodes)))


def relplot_smece_at(grids: RelplotGrids, sigma: float) -> float:
    """``relplot.smECE_sigma(x, hits, sigma)`` (relplot's ``smooth_ece``).

    relplot smooths ``f - y``, calibr bins ``y - f``: every sum is then exactly
    the negative of relplot's, and the absolute values equal.
    """
    mesh = np.linspace(0, 1, max(round(10 / sigma), MESH_POINTS))
    residual, count = _sums(grids, sigma, mesh)
    density = count + DENSITY_EPS
    rs = residual / density
    return float(np.sum(np.abs(rs) * density) / np.sum(density))


def relplot_curve(grids: RelplotGrids, sigma: float,
                  mesh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean outcome, density) at ``mesh`` as relplot's ``prepare_rel_diagram``
    computes them without bagging (``plot_confidence_band=False``): its main
    line ``KernelSmoother(ReflectedGaussianKernel(sigma))`` fit on ``(f, y)``,
    ``Y / (D + 1e-4)`` with ``Y`` the kernel sum of the outcomes, and its
    ``kde``, ``D / n``."""
    nodes = grid_nodes(sigma)
    ker = _kernel(nodes, sigma)
    _, counts = grids(nodes)
    outcome = _interpolate(mesh, _reflected(grids.outcomes(nodes), ker, nodes))
    count = _interpolate(mesh, _reflected(counts, ker, nodes))
    return outcome / (count + DENSITY_EPS), count / grids.n
