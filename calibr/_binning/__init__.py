"""Binning: the bin specification of the binned functions, the breaks, the bin of
each value, and the per-bin sums (``docs/definitions.md``, "Binned metrics" and
"Binning options").

The internal API (used by ``ece()``, ``mce()``, ``calibration_error()``,
``calibration_table()``, the bootstrap, the plots and the Dask path; meant for any
other binned estimator):

* :class:`BinSpec`: the checked options ``bins``, ``binning`` and ``right`` as
  one frozen, hashable value (:meth:`BinSpec.from_options`), with
  :attr:`~BinSpec.is_default` (R's bins, which the compiled kernels of
  ``calibr._kernels.binned`` serve), :attr:`~BinSpec.nbins` and
  :meth:`~BinSpec.edges`;
* :func:`breaks` ``(x, bins, binning, right, weights=None, hits=None) -> ndarray``:
  the sorted breaks ``b_0 = 0 <= b_1 <= ... <= b_B = 1`` of one column of values
  (isotonic bins read the outcomes ``hits`` too);
* :func:`isotonic_blocks`: the blocks of the isotonic fit of outcomes on values
  (PAV, ties pooled), the bins of ``binning="isotonic"`` and of
  ``calibr.decompose``; :func:`isotonic_breaks` their breaks;
* :func:`bin_index` ``(x, breaks, right) -> ndarray``: the 0-based bin of each
  value (int64, the shape of ``x``): THE bin rule of each closure. The compiled
  kernels' ``calibr._kernels.binned._bin_right_closed`` is the same rule for R's
  equal-width breaks, computed arithmetically (the tests check that the two
  agree on every break and its neighbouring doubles);
* :func:`binned_stats` ``(p, y, spec, *, type, classes, na_rm, weights)``: the
  per-bin ``(count, sum_conf, sum_hit)`` of raw input, through the input layer;
* :func:`validated_stats`: the same, and the breaks, for validated arrays: the
  compiled kernels for R's bins without weights, :func:`stats` otherwise;
* :func:`stats`: the one numpy path of per-bin sums (weighted or not, every form
  and every binning), ``numpy.bincount`` in row order of ``1``, ``x``, ``c``
  (weighted: ``w``, ``w x``, ``w c``); :func:`bin_sums` of :func:`bin_index` is
  its one-column step, readable, and :func:`compiled_bin_sums` the same sums bit
  for bit in one compiled pass (what :func:`stats` runs); :func:`column_breaks`
  ``(edges, col)`` the breaks of one column of its classwise equal-mass breaks;
* :func:`top_label_stats`: the per-(predicted class, bin) sums of the top-label
  form (``type="top-label"``, Gupta & Ramdas 2022), flat: the ``K * B`` cells are
  one set of bins, so that the ECE and MCE of the flat sums
  (``calibr._kernels.binned.ece_from_stats``, ``mce_from_stats``) are the
  top-label ECE and MCE, and every consumer of per-bin sums (the bootstrap, the
  Dask merge, the Lp norms) takes them unchanged; :func:`cell_sets` the number of
  sets of bins of a form, and :func:`check_cells` the bound on bins times classes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._defaults import BINNING_DEFAULT, BINS_DEFAULT, RIGHT_DEFAULT
from .._input import (
    MAX_BIN_CELLS,
    ROW_SUM_TOL,
    InputError,
    arg,
    check_bin_cells,
    check_binning,
    convert,
    finish,
    fmt,
    prepare,
)
from .._input.params import CALTRAIN
from .._kernels import bin_sums as _bin_sums
from .._kernels import binned, isotonic
from .._kernels._jit import read_only
from .._kernels.top_label import top_label, top_label_class
from .equal_mass import equal_mass_breaks

__all__ = ["BINNINGS", "TOP_LABEL", "TYPES", "BinSpec", "Blocks", "bin_index", "bin_sums",
           "binned_stats", "breaks", "cell_sets", "check_cells", "column_breaks",
           "compiled_bin_sums", "equal_mass_breaks", "isotonic_blocks", "isotonic_breaks",
           "stats", "top_label_columns", "top_label_stats", "validated_stats"]

#: The choices of ``binning``, R's (equal-width) first.
BINNINGS = ("equal-width", "equal-mass", "isotonic")

#: The top-label form of the binned functions (``docs/definitions.md``, "Top-label
#: calibration error"): not R's, so last in :data:`TYPES`.
TOP_LABEL = "top-label"

#: The choices of ``type`` of the binned functions, R's default first.
TYPES = ("classwise", "confidence", TOP_LABEL)


@dataclass(frozen=True)
class BinSpec:
    """The bins of a binned function: its checked ``bins``, ``binning`` and ``right``.

    Made by :meth:`from_options`; frozen and hashable (explicit breaks are kept
    as a tuple of their doubles), so that it can key a cache.

    Attributes
    ----------
    bins : int, str or tuple of float
        A number of bins, the breaks themselves (strictly increasing, 0 to 1),
        or a rule that chooses the number from the data: ``"sweep"`` (the
        monotonic sweep), ``"auto"`` (the cube-root rule) or
        ``"sweep-caltrain"`` (caltrain's sweep and bins; ``right`` False).
    binning : {"equal-width", "equal-mass", "isotonic"}
        How a number of bins is placed (explicit breaks: always "equal-width");
        ``"isotonic"``: the blocks of the isotonic fit, whatever ``bins`` (which
        must be left at its default).
    right : bool
        Closed on the right (0 in the first bin) or on the left (1 in the last).
    """

    bins: int | str | tuple[float, ...]
    binning: str
    right: bool

    @classmethod
    def from_options(cls, bins: int | np.ndarray, binning: str, right: bool) -> BinSpec:
        """The spec of options that their rules have checked (``calibr._input.params``:
        ``BIN_SPEC``, ``BINNING``, ``RIGHT``); refuses ``binning`` with breaks, and
        ``bins`` other than the default with ``binning="isotonic"`` (whose bins come
        from the fit: a number of bins would be ignored, and so would ``"sweep"`` or
        ``"auto"``)."""
        if binning == "isotonic" and not (isinstance(bins, int) and bins == BINS_DEFAULT):
            shown = (f"{bins.shape[0]} breaks" if isinstance(bins, np.ndarray)
                     else f"bins = {fmt(bins)}")
            raise InputError(
                f"`bins` does not apply to binning = 'isotonic': its bins are the blocks of "
                f"the isotonic fit, one per fitted value; got {shown}. Leave {arg('bins')} out.",

                param="bins"
            )
        if isinstance(bins, str):  # "sweep" or "auto": a number for either placement
            if bins == CALTRAIN and right:
                raise InputError(
                    f"`right` must be False with bins = '{CALTRAIN}': caltrain's bins "
                    "are closed on the left (its equal-width bin of p is floor(p B)). Pass "
                    f"{arg('right', 'hint', False)}.",
                    param="right"
                )
            return cls(bins, binning, right)
        check_binning(bins, binning)
        if not isinstance(bins, int):
            bins = tuple(np.asarray(bins, dtype=np.float64).tolist())  # exact doubles
        return cls(bins, binning, right)

    @property
    def is_default(self) -> bool:
        """R's bins: a number of equal-width bins, closed on the right (the compiled
        kernels of ``calibr._kernels.binned`` and ``grouped``)."""
        return isinstance(self.bins, int) and self.binning == "equal-width" and self.right is True

    @property
    def data_free(self) -> bool:
        """Whether the breaks are known without the data (equal-width, or explicit;
        not ``bins="sweep"`` or ``"auto"``, whose number comes from the data)."""
        return self.binning == "equal-width" and not isinstance(self.bins, str)

    @property
    def nbins(self) -> int:
        """The number of bins; for equal-mass bins the most there can be (tied
        values merge cut points: ``edges`` may give fewer). For isotonic bins and
        the rules ``"sweep"`` and ``"auto"`` 1: their number comes from the data,
        so the bound on bins times classes (``check_bin_cells``) is checked on the
        bins made, before their per-bin sums are allocated (:func:`stats`)."""
        if self.binning == "isotonic" or isinstance(self.bins, str):
            return 1  # from the data: bounded once made
        return self.bins if isinstance(self.bins, int) else len(self.bins) - 1

    @functools.cached_property
    def _breaks(self) -> np.ndarray:
        out = np.array(self.bins, dtype=np.float64)
        out.flags.writeable = False
        return out

    def edges(self, x: np.ndarray | None = None, weights: np.ndarray | None = None,
              hits: np.ndarray | None = None) -> np.ndarray:
        """The breaks (:func:`breaks`); equal-mass bins need the values ``x`` (and
        their frequency ``weights``, if any), isotonic bins the outcomes ``hits`` too."""
        if not isinstance(self.bins, (int, str)):
            return self._breaks
        return breaks(x, self.bins, self.binning, self.right, weights, hits)


def breaks(x: np.ndarray | None, bins: int | str | np.ndarray,
           binning: str = BINNING_DEFAULT, right: bool = RIGHT_DEFAULT,
           weights: np.ndarray | None = None, hits: np.ndarray | None = None) -> np.ndarray:
    """The breaks of one column of values ``x`` (1-d float64 in [0, 1]).

    Parameters
    ----------
    x : ndarray or None
        The values to bin (only ``"equal-mass"`` and ``"isotonic"`` read them).
    bins : int, str or ndarray
        A number of bins, or the breaks themselves (checked by
        ``calibr._input.BIN_SPEC``: float64, strictly increasing, 0 to 1),
        returned as they are; or a rule that chooses the number of bins from the
        data (``calibr._binning.sweep``): ``"sweep"`` (the monotonic sweep, which reads
        the outcomes ``hits``), ``"auto"`` (the cube-root rule, of the number of
        rows, the total weight with weights), or ``"sweep-caltrain"``
        (caltrain's sweep, and its breaks ``calibr._binning.sweep.caltrain_breaks``).
    binning : {"equal-width", "equal-mass", "isotonic"}
        ``"equal-width"``: R's ``seq(0, 1, length.out = bins + 1)``
        (``numpy.linspace``); ``"equal-mass"``: :func:`equal_mass_breaks`;
        ``"isotonic"``: :func:`isotonic_breaks` (``bins`` is not read).
    right : bool
        The closure (``"equal-mass"`` and ``"isotonic"`` depend on it, see there).
    weights : ndarray, optional
        Frequency weights (``"equal-mass"`` and ``"isotonic"`` only).
    hits : ndarray, optional
        The outcomes, 0/1 (``"isotonic"`` and ``bins="sweep"``, which need them).

    Returns
    -------
    ndarray
        ``B + 1`` nondecreasing breaks, the first 0 and the last 1.
    """
    presorted = None  # the sweep's sort of x, for equal-mass breaks of its number
    if isinstance(bins, str):
        from .sweep import caltrain_breaks, cube_root_bins, sweep  # the rules that choose a number

        if bins == "auto":
            total = x.shape[0] if weights is None else float(np.sum(weights))
            bins = cube_root_bins(total)
        elif bins == CALTRAIN:  # caltrain's rule: its own breaks, closed on the left
            return caltrain_breaks(x, sweep(x, hits, binning, right, weights,
                                            caltrain=True)[0], binning)
        else:  # the sweep's sort serves the equal-mass breaks of its number
            bins, presorted = sweep(x, hits, binning, right, weights)
    if not isinstance(bins, int):
        return bins
    if binning == "equal-width":
        return binned.breaks(bins)
    if binning == "isotonic":
        return isotonic_breaks(x, hits, right, weights)
    return equal_mass_breaks(x, bins, right, weights, presorted)


@dataclass(frozen=True)
class Blocks:
    """The blocks of an isotonic fit (:func:`isotonic_blocks`), in increasing order
    of their values and of their fitted values.

    Attributes
    ----------
    weight, hits, conf : ndarray
        Each block's total weight (its count without weights), sum of outcomes
        and sum of values (weighted sums with weights).
    lowest, highest : ndarray
        The smallest and the largest value of each block (rows of weight 0 are
        in no block).
    """

    weight: np.ndarray
    hits: np.ndarray
    conf: np.ndarray
    lowest: np.ndarray
    highest: np.ndarray

    @property
    def fitted(self) -> np.ndarray:
        """The fitted value of each block, its mean outcome (strictly increasing)."""
        return self.hits / self.weight


def isotonic_blocks(x: np.ndarray, hits: np.ndarray,
                    weights: np.ndarray | None = None) -> Blocks:
    """The blocks of the isotonic (nondecreasing) least-squares fit of ``hits`` on
    ``x``, ties pooled (``docs/definitions.md``, "Score decompositions").

    One ``numpy.argsort`` of ``x`` (O(n log n)), then the pool-adjacent-violators
    pass of ``calibr._kernels.isotonic.pav_blocks`` (O(n)). Tied values are one
    group, so they share a block; rows of weight 0 are left out (they change no
    block's sums, and a group of them alone has no mean). The fit is the same
    for every strictly proper score, the Brier score and the log loss among
    them (it is the isotonic regression of the outcomes, Barlow et al. 1972).

    Parameters
    ----------
    x : ndarray
        1-d float64 values (predictions).
    hits : ndarray
        The outcomes of the same rows, 0/1 (bool, integer or float64).
    weights : ndarray, optional
        Nonnegative frequency weights with a positive total.

    Returns
    -------
    Blocks
    """
    x = np.asarray(x, dtype=np.float64)
    c = np.asarray(hits)
    w = np.empty(0)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        kept = w > 0
        if not kept.all():
            x, c, w = x[kept], c[kept], w[kept]
    order = np.argsort(x)
    x, c = x[order], c[order].astype(np.float64)  # gathered: the kernel reads in order
    if w.shape[0]:
        w = w[order]
    _, weight, sums, conf, lowest, highest = isotonic.pav_blocks(
        read_only(x), read_only(c), read_only(w))
    return Blocks(weight, sums, conf, lowest, highest)


def isotonic_breaks(x: np.ndarray, hits: np.ndarray, right: bool = RIGHT_DEFAULT,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """The breaks whose bins are the blocks of :func:`isotonic_blocks`.

    Right-closed: 0, the largest value of every block but the last, then 1 (bin b
    is ``(highest[b - 1], highest[b]]``); left-closed: 0, the smallest value of
    every block but the first, then 1 (bin b is ``[lowest[b], lowest[b + 1])``).
    The breaks are values of ``x`` themselves, so that :func:`bin_index` puts
    every row of a block in its bin exactly (a midpoint between two blocks could
    round onto one of them). A first block of values all 0 (right-closed) or a
    last of values all 1 (left-closed) is a zero-width bin ``[0, 0]`` or
    ``[1, 1]``, as for equal-mass bins.
    """
    blocks = isotonic_blocks(x, hits, weights)
    inner = blocks.highest[:-1] if right else blocks.lowest[1:]
    return np.concatenate(([0.0], inner, [1.0]))


def bin_index(x: np.ndarray, breaks: np.ndarray, right: bool = RIGHT_DEFAULT) -> np.ndarray:
    """The 0-based bin of each value of ``x`` (any shape) among ``breaks``.

    ``right=True`` (R's ``cut(right = TRUE, include.lowest = TRUE)``): bin ``b``
    holds ``breaks[b] < v <= breaks[b + 1]``, and 0 is in the first bin.
    ``right=False``: bin ``b`` holds ``breaks[b] <= v < breaks[b + 1]``, and 1
    is in the last bin (``numpy.histogram``). With a zero-width bin (equal
    breaks, from ``"equal-mass"``) the value on it belongs to it.
    """
    last = breaks.shape[0] - 2
    if right:
        j = np.searchsorted(breaks, x, side="left") - 1
    else:
        j = np.searchsorted(breaks, x, side="right") - 1
    return np.clip(j, 0, last)


def bin_sums(j: np.ndarray, x: np.ndarray, c: np.ndarray, w: np.ndarray | None,
             nbins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin ``(count, sum of x, sum of c)`` (weighted: of ``w``, ``w x``, ``w c``)
    of the values with bin ``j``, by ``numpy.bincount`` (row order)."""
    c = np.asarray(c, dtype=np.float64)
    if w is None:
        count = np.bincount(j, minlength=nbins).astype(np.float64)
        return count, np.bincount(j, weights=x, minlength=nbins), np.bincount(
            j, weights=c, minlength=nbins)
    return (np.bincount(j, weights=w, minlength=nbins),
            np.bincount(j, weights=w * x, minlength=nbins),
            np.bincount(j, weights=w * c, minlength=nbins))


def compiled_bin_sums(x: np.ndarray, c: np.ndarray, w: np.ndarray | None,
                      edges: np.ndarray, right: bool) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    """:func:`bin_sums` of :func:`bin_index`, bit for bit, in one compiled pass
    (``calibr._kernels.bin_sums``): the path of :func:`stats`."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    w = np.empty(0) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    return _bin_sums.bin_sums(read_only(x), read_only(c), read_only(w),
                              read_only(np.ascontiguousarray(edges, dtype=np.float64)),
                              bool(right))


def column_breaks(edges: np.ndarray, col: int) -> np.ndarray:
    """The breaks of column ``col`` of :func:`stats`' breaks (the same 1-d breaks for
    every column, or a row of the padded 2-d breaks of classwise equal-mass bins)."""
    if edges.ndim == 1:
        return edges
    row = edges[col]
    return row[~np.isnan(row)]


def cell_sets(binary: bool, k: int, type: str) -> int:
    """The sets of bins of a form: one per class (``K``) for a classwise matrix and
    for the top-label form (2 for a vector ``p``, read as two columns), else 1."""
    if type == TOP_LABEL:
        return 2 if binary else k
    return k if not binary and type == "classwise" else 1


def check_cells(nbins: int, binary: bool, k: int, type: str) -> None:
    """``check_bin_cells`` for the form ``type`` of ``p`` (binary or of ``k`` columns),
    before any per-bin array is allocated."""
    sets = cell_sets(binary, k, type)
    check_bin_cells(nbins, sets, sets > 1, type)


def top_label_columns(p: np.ndarray, y: np.ndarray, binary: bool) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, int]:
    """``(h, hit, cls, K)`` of validated input: each row's top-label confidence, its
    correctness (uint8) and its predicted class (0-based: the first maximal column,
    ``calibr._kernels.top_label``), and the number of classes.

    A vector ``p`` is read as the two columns ``(1 - p, p)`` of the classes 0 and 1
    (``docs/definitions.md``, "Top-label calibration error"): the same numbers as
    the matrix ``numpy.column_stack((1 - p, p))`` with labels 0/1.
    """
    if binary:
        p = np.column_stack((1.0 - p, p))  # C-contiguous
        y = (np.asarray(y) != 0).astype(np.int64)
    h, hit, cls = top_label_class(p, y)
    return h, hit, cls, int(p.shape[1])


def top_label_stats(p: np.ndarray, y: np.ndarray, w: np.ndarray | None, binary: bool,
                    spec: BinSpec):
    """Per-(predicted class, bin) ``(count, sum_conf, sum_hit)`` of the top-label form,
    flat (``K * B``: class c's bins are the cells ``c * B .. c * B + B - 1``), and the
    breaks.

    Each row's confidence ``h`` goes into the bins of its predicted class, with its
    correctness as the outcome (weighted: ``w``, ``w h``, ``w hit``). Breaks that do
    not depend on the data are the same for every class, ``(B + 1,)``; equal-mass,
    isotonic and ``"sweep"``/``"auto"`` bins are each predicted class's own, from
    its rows alone, ``(K, B + 1)`` padded with NaN as :func:`stats`' classwise
    breaks (a class predicted by no row, or only by rows of weight 0, has the one
    bin ``[0, 1]``, empty).
    """
    h, hit, cls, k = top_label_columns(p, y, binary)
    right = spec.right
    if spec.data_free:
        edges = spec.edges()
        nb = edges.shape[0] - 1
        check_bin_cells(nb, k, True, TOP_LABEL)
        cells = cls * nb + bin_index(h, edges, right)
        return (*bin_sums(cells, h, hit, w, k * nb), edges)
    own = []  # each class's rows and breaks
    for c in range(k):
        rows = np.flatnonzero(cls == c)
        wc = None if w is None else w[rows]
        if rows.shape[0] == 0 or (wc is not None and not np.any(wc > 0)):
            own.append((rows, np.array([0.0, 1.0])))
            continue
        own.append((rows, spec.edges(h[rows], wc, hit[rows])))
    nb = max(e.shape[0] - 1 for _, e in own)
    check_bin_cells(nb, k, True, TOP_LABEL)
    cells = np.empty(h.shape[0], dtype=np.int64)
    edges = np.full((k, nb + 1), np.nan)
    for c, (rows, e) in enumerate(own):
        cells[rows] = c * nb + bin_index(h[rows], e, right)
        edges[c, :e.shape[0]] = e
    return (*bin_sums(cells, h, hit, w, k * nb), edges)


def stats(p: np.ndarray, y: np.ndarray, w: np.ndarray | None, binary: bool, spec: BinSpec,
          type: str):
    """Per-bin ``(count, sum_conf, sum_hit)`` and the breaks, for validated input, by
    numpy: any bins, with or without weights.

    Shapes as ``calibr._kernels.binned.bin_stats`` (``(K, B)`` for a classwise
    matrix), and the breaks ``(B + 1,)``, or ``(K, B + 1)`` for classwise
    equal-mass and isotonic bins (each column its own breaks; a column with fewer distinct
    cut points is padded with empty bins at the end, whose breaks are NaN:
    :func:`column_breaks` drops them). The top-label form: :func:`top_label_stats`
    (for a vector ``p`` too).
    """
    if type == TOP_LABEL:
        return top_label_stats(p, y, w, binary, spec)
    right = spec.right
    if binary or type == "confidence":
        if binary:
            x, c = p, y
        else:
            x, c = top_label(p, y)
        edges = spec.edges(x, w, c)
        return (*compiled_bin_sums(x, c, w, edges, right), edges)
    n, k = p.shape
    if spec.data_free:
        edges = spec.edges()
        nb = edges.shape[0] - 1
        check_bin_cells(nb, k, True)
        cells = bin_index(p, edges, right) + np.arange(k) * nb  # class k's bins at k * nb
        if w is None:
            count = np.bincount(cells.ravel(), minlength=k * nb).astype(np.float64)
            conf = np.bincount(cells.ravel(), weights=p.ravel(), minlength=k * nb)
            hit = np.bincount(cells[np.arange(n), y], minlength=k * nb).astype(np.float64)
        else:
            count = np.bincount(cells.ravel(), weights=np.repeat(w, k), minlength=k * nb)
            conf = np.bincount(cells.ravel(), weights=(w[:, None] * p).ravel(),
                               minlength=k * nb)
            hit = np.bincount(cells[np.arange(n), y], weights=w, minlength=k * nb)
        return count.reshape(k, nb), conf.reshape(k, nb), hit.reshape(k, nb), edges
    # classwise, equal-mass or isotonic: each column its own breaks
    own = [spec.edges(np.ascontiguousarray(p[:, col]), w, y == col) for col in range(k)]
    nb = max(e.shape[0] - 1 for e in own)
    # the bins made (a number from the data: with weights, the sweep's can pass the
    # rows), padded to the most of any class, bounded as a number given is
    check_bin_cells(nb, k, True)
    cols = [(*compiled_bin_sums(np.ascontiguousarray(p[:, col]), y == col, w, e, right), e)
            for col, e in enumerate(own)]
    out = np.zeros((3, k, nb))
    edges = np.full((k, nb + 1), np.nan)
    for col, (count, conf, hit, e) in enumerate(cols):
        m = e.shape[0] - 1
        out[0, col, :m], out[1, col, :m], out[2, col, :m] = count, conf, hit
        edges[col, :m + 1] = e
    return out[0], out[1], out[2], edges


def validated_stats(p: np.ndarray, y: np.ndarray, w: np.ndarray | None, binary: bool,
                    spec: BinSpec, type: str):
    """Per-bin ``(count, sum_conf, sum_hit)`` and the breaks of validated input (the
    input layer's canonical arrays): R's bins without weights by the compiled
    kernels (``calibr._kernels.binned.bin_stats``), anything else (and the top-label
    form) by :func:`stats`. The caller has checked the number of bin cells
    (:func:`check_cells`)."""
    if spec.is_default and w is None and type != TOP_LABEL:
        return (*binned.bin_stats(p, y, binary, spec.bins, type), spec.edges())
    return stats(p, y, w, binary, spec, type)


def binned_stats(p, y, spec: BinSpec, *, type: str, classes=None, na_rm: bool = False,
                 weights=None):
    """The per-bin ``(count, sum_conf, sum_hit)`` of raw input ``p``, ``y`` (and
    ``weights``) in the bins ``spec``, for the checked option ``type`` (and the data
    arguments of the metrics, which the input layer checks).

    R's bins without weights are optimistic: input whose labels the kernels read
    directly is checked by the binning pass itself, so that valid input is read
    once. Anything else, and any input that pass refuses, goes through the input
    layer's own checks, which raise its message (or drop incomplete rows under
    ``na_rm=True``), and then :func:`validated_stats`: weighted input gives
    weighted sums (``docs/definitions.md``, "Frequency weights"), other bins the
    numpy path (``docs/definitions.md``, "Binning options"), and the top-label form
    :func:`top_label_stats`.
    """
    if spec.is_default and weights is None and type != TOP_LABEL:
        conv = convert(p, y, classes=classes, na_rm=na_rm)
        classwise = not conv.binary and type == "classwise"
        direct = conv.direct()
        if direct is not None and not (classwise and spec.bins * conv.k > MAX_BIN_CELLS):
            got = binned.checked_bin_stats(*direct, conv.binary, spec.bins, type, ROW_SUM_TOL)
            if got is not None:
                return got
        prep = finish(conv)
    else:
        prep = prepare(p, y, classes=classes, na_rm=na_rm, weights=weights)
    # before the per-bin sums are allocated: bins x K of them for "classwise" and
    # "top-label"
    check_cells(spec.nbins, prep.binary, prep.k, type)
    return validated_stats(prep.p, prep.y, prep.weights, prep.binary, spec, type)[:3]
