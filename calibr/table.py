"""The per-bin table behind ``ece()`` and ``mce()``, as a tidy DataFrame.

The table and the Wilson interval are defined in ``docs/definitions.md``,
section "The per-bin table"; with ``data=``, the groups are those of the
group layer (``calibr._input.groups``), as for :func:`calibr.summarise`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from . import _binning
from ._defaults import BINNED_TYPE_DEFAULT, BINNING_DEFAULT, BINS_DEFAULT, RIGHT_DEFAULT
from ._docs import shared_docs
from ._input import (
    BIN_SPEC,
    BINNING,
    FLAG,
    LEVEL,
    MAX_RESAMPLES,
    RIGHT,
    RNG,
    InputError,
    Integer,
    Optional,
    Options,
    arg,
    as_float_array,
    bad_values_message,
    lazy_backend,
    prepare,
    renamed,
    validate_params,
)
from ._input.frames import frame_verb, lazy_grouping
from ._input.groups import (
    Groups,
    Split,
    group_seeds,
    groups_of,
    resolve_columns,
    split,
    weights_column,
)
from ._kernels import binned, grouped
from ._kernels.top_label import top_label
from ._metrics.kernel import as_hits

__all__ = ["calibration_table", "wilson_interval", "TABLE_COLUMNS", "CONSISTENCY_COLUMNS",
           "CONSISTENCY_RESAMPLES"]

#: The columns of every table, after the group keys and (multiclass classwise) ``class``.
TABLE_COLUMNS = (
    "bin", "lower", "upper", "n", "mean_confidence", "observed_frequency", "gap",
    "ci_lower", "ci_upper",
)

#: The columns ``consistency=`` adds after ``ci_upper``.
CONSISTENCY_COLUMNS = ("consistency_lower", "consistency_upper")

#: Resamples of the consistency band when ``n_resamples`` is not given.
CONSISTENCY_RESAMPLES = 1000

_TYPES = _binning.TYPES


@renamed(level="confidence_level")
@validate_params(confidence_level=LEVEL)
def wilson_interval(
    successes: Any, n: Any, confidence_level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    r"""Wilson score interval for a binomial proportion (no continuity correction).

    Parameters
    ----------
    successes, n : array-like
        Success counts and trial counts: real numbers with
        ``0 <= successes <= n`` and ``n > 0``, of shapes that broadcast.
    confidence_level : float, default 0.95
        Confidence level in (0, 1) (``level``, its old name, still works and
        warns).

    Returns
    -------
    (lower, upper) : tuple of float64 arrays

    Raises
    ------
    ValueError
        (``calibr.InputError``) for a level outside (0, 1), counts that are
        missing, infinite, negative or above ``n``, ``n <= 0``, or shapes that
        do not broadcast.
    TypeError
        (``calibr.InputTypeError``) for counts that are not real numbers.

    Notes
    -----
    With :math:`\hat p = x / n` and :math:`z` the :math:`1 - (1 - \mathrm{level})/2`
    normal quantile,

    .. math:: \frac{\hat p + \frac{z^2}{2n} \pm z \sqrt{\frac{\hat p (1 - \hat p)}{n}
              + \frac{z^2}{4 n^2}}}{1 + z^2 / n},

    R's ``prop.test(x, n, correct = FALSE)$conf.int``. The bounds are exactly 0
    when x = 0 and exactly 1 when x = n.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Examples
    --------
    >>> from calibr.table import wilson_interval
    >>> lo, hi = wilson_interval([3], [10])
    >>> round(float(lo[0]), 7), round(float(hi[0]), 7)
    (0.1077913, 0.6032219)
    """
    z = _z(confidence_level)
    what = "a count or an array of counts"
    x = as_float_array(successes, "successes", what, ndims=(0, 1, 2, 3))
    m = as_float_array(n, "n", what, ndims=(0, 1, 2, 3))
    try:
        x, m = np.broadcast_arrays(x, m)
    except ValueError:
        raise InputError(
            f"`successes` and `n` must have shapes that broadcast; got {x.shape} and {m.shape}.",
            param="successes"
        ) from None
    for name, values in (("successes", x), ("n", m)):
        bad = ~np.isfinite(values)
        if bad.any():
            raise InputError(bad_values_message(name, "be finite numbers", bad, values), param=name)
    if (m <= 0).any():
        raise InputError(bad_values_message("n", "be positive", m <= 0, m), param="n")
    bad = (x < 0) | (x > m)
    if bad.any():
        raise InputError(bad_values_message("successes", "lie in [0, n]", bad, x),
                         param="successes")
    return _wilson(x, m, z)


def _wilson(x: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson bounds of valid float64 counts for the normal quantile ``z``."""
    z2 = z * z
    phat = x / n
    denom = 1.0 + z2 / n
    center = (phat + z2 / (2.0 * n)) / denom
    with np.errstate(over="ignore"):  # n near 1e154 and up: z2 / inf is the 0 it should be
        half = z / denom * np.sqrt(phat * (1.0 - phat) / n + z2 / (4.0 * n * n))
    lower = np.where(x == 0, 0.0, center - half)
    upper = np.where(x == n, 1.0, center + half)
    return lower, upper


def _z(level: float) -> float:
    """The 1 - (1 - level)/2 normal quantile (R's ``qnorm((1 + conf.level)/2)``).

    For the largest levels below 1, ``1 - (1 - level)/2`` rounds to 1.0 (whose
    quantile is infinite); the quantile is then taken by symmetry from the
    lower tail, ``-inv_cdf((1 - level)/2)``, which is exact there.
    """
    half_alpha = (1.0 - level) / 2.0
    upper = 1.0 - half_alpha
    if upper < 1.0:
        return NormalDist().inv_cdf(upper)
    return -NormalDist().inv_cdf(half_alpha)


def _rows(
    p: np.ndarray, y: np.ndarray, binary: bool, spec: _binning.BinSpec, type: str, z: float,
    w: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The table's columns for one group's canonical arrays (non-empty bins only).

    The statistics are those of ``ece()``/``mce()``: the same kernels on the
    same arrays (``calibr._binning.validated_stats``: with weights ``w``, the
    weighted sums of ``ece(weights=)``; with options other than R's, the numpy
    sums). ``"_class"`` holds 0-based class positions (classwise only);
    ``"_edges"`` the breaks (for the consistency band).
    """
    *stats, edges = _binning.validated_stats(p, y, w, binary, spec, type)
    top = type == _binning.TOP_LABEL
    out = _stats_rows(stats, edges, z, top or (not binary and type == "classwise"),
                      w is not None, top)
    out["_edges"] = edges
    return out


def _stats_rows(stats: tuple, edges: np.ndarray, z: float, classwise: bool,
                weighted: bool, top_label: bool = False) -> dict[str, np.ndarray]:
    """The table's columns of one group's per-(class, bin) sums ``(count, sum_conf,
    sum_hit)`` (each of shape (bins,) or (K, bins); ``top_label``: the flat (K *
    bins,) cells of ``calibr._binning.top_label_stats``, class by class): its
    non-empty bins."""
    if top_label:  # one row of cells per predicted class
        nb = edges.shape[-1] - 1
        stats = tuple(np.reshape(s, (-1, nb)) for s in stats)
    count, sum_conf, sum_hit = (np.atleast_2d(s) for s in stats)
    cls, b = np.nonzero(count > 0)  # row-major: by class, then by bin
    return _columns(cls, b, count[cls, b], sum_conf[cls, b], sum_hit[cls, b],
                    edges, z, classwise, weighted=weighted)


def table_from_stats(stats: list[tuple], edges: np.ndarray, confidence_level: float,
                     classwise: bool, weighted: bool, classes: tuple | None,
                     top_label: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    """The table of groups given by their per-(class, bin) sums, for a backend
    that adds the sums of the parts of the data (``calibr._engines.dask``).

    ``stats``: each group's ``(count, sum_conf, sum_hit)`` (the binned kernels'
    statistics; counts are total weights when ``weighted``), in the table's order
    of the groups, at least one (a backend answers "no group" itself: the lazy
    engines by the pandas path, ``calibr._engines.dask`` by its empty table);
    ``edges``: the breaks (the same for every group); ``classes``: the class
    labels of a classwise table; ``top_label``: the sums are the flat
    cells of the top-label form (a ``class`` column of the predicted class, whose
    labels ``classes`` are). Returns the table (no key columns) and,
    for each of its rows, the position in ``stats`` of its group. The numbers are
    those of :func:`calibration_table` on the groups' rows with the same sums.
    """
    z = _z(confidence_level)
    parts = [_stats_rows(s, edges, z, classwise or top_label, weighted, top_label)
             for s in stats]
    owner = np.concatenate([np.full(len(part["bin"]), g, dtype=np.int64)
                            for g, part in enumerate(parts)])
    return _frame(parts, classes), owner


def _columns(cls: np.ndarray, b: np.ndarray, n: np.ndarray, sum_conf: np.ndarray,
             sum_hit: np.ndarray, edges: np.ndarray, z: float,
             classwise: bool, weighted: bool = False) -> dict[str, np.ndarray]:
    """The table's columns of the non-empty bins ``b`` (0-based) of classes ``cls``,
    from their counts (total weights when ``weighted``) and sums."""
    conf = sum_conf / n
    freq = sum_hit / n
    lo, hi = _wilson(sum_hit, n, z)  # weighted: the total weight as the count
    out = {
        "bin": b.astype(np.int64) + 1,
        "lower": edges[b] if edges.ndim == 1 else edges[cls, b],
        "upper": edges[b + 1] if edges.ndim == 1 else edges[cls, b + 1],
        "n": n.astype(np.float64 if weighted else np.int64),
        "mean_confidence": conf,
        "observed_frequency": freq,
        "gap": np.abs(freq - conf),
        "ci_lower": lo,
        "ci_upper": hi,
    }
    if classwise:
        out["_class"] = cls
    return out


def _group_rows(
    sp: Split, bins: int, type: str, z: float
) -> tuple[list[dict[str, np.ndarray]], list[np.ndarray]]:
    """The table's columns of every group at once (per-(group, bin) sums in one
    pass, ``calibr._kernels.grouped``), with the group of each row: the rows of
    :func:`_rows` called on each group's slice, bit for bit, in pandas' order of
    the groups."""
    classwise = not sp.binary and type == "classwise"
    if classwise:  # one pass over the rows in the frame's order
        batches = grouped.classwise_stat_batches(sp.rows_p, sp.rows_y, sp.ids, sp.start, bins)
    else:  # the binary kernel on the rows sorted by group
        if sp.binary:
            x, c = sp.p, as_hits(sp.y)
        else:
            x, c = top_label(sp.rows_p, sp.rows_y)
            x, c = sp.by_group(x), sp.by_group(c)
        batches = grouped.binary_stat_batches(x, np.ascontiguousarray(c), sp.start, bins)
    edges = binned.breaks(bins)
    parts, owner = [], []
    for g0, _, *stats in batches:
        count, sum_conf, sum_hit = (s if classwise else s[:, None, :] for s in stats)
        g, cls, b = np.nonzero(count > 0)  # row-major: by group, class, then bin
        parts.append(_columns(cls, b, count[g, cls, b], sum_conf[g, cls, b],
                              sum_hit[g, cls, b], edges, z, classwise))
        owner.append(g + g0)
    return parts, owner


# --------------------------------------------------------------------------
# consistency bands (docs/definitions.md, "Consistency bands")


def _resampled_frequencies(p: np.ndarray, binary: bool, edges: np.ndarray, right: bool,
                           type: str, gen: np.random.Generator) -> np.ndarray:
    """One consistency resample of a group: the observed frequency of every bin
    (shape (K, bins), NaN where the resample leaves a bin empty).

    The draws, in this order: ``gen.integers(0, n, size=n)`` (the rows, with
    replacement), then ``gen.random(n)`` (``u``). Binary and top label: the
    event of resampled row i happens when ``u_i < p_i`` (``Bernoulli(p_i)``); a
    matrix row draws the label ``j`` with ``cumsum(p_i)[j-1] <= u_i <
    cumsum(p_i)[j]`` (the last class when rounding leaves ``u_i`` above the sum).
    The bins are the table's: ``edges`` its breaks (``calibr._binning.bin_index``
    with closure ``right``; R's bins for the defaults).
    """
    n = p.shape[0]
    bins = edges.shape[-1] - 1
    rows = gen.integers(0, n, size=n)
    u = gen.random(n)
    ps = p[rows]
    if type == _binning.TOP_LABEL:
        return _resampled_top_label(ps, u, binary, edges, right)
    if binary:
        x, hit, k = ps, u < ps, 1
    else:
        k = ps.shape[1]
        label = np.minimum((u[:, None] >= np.cumsum(ps, axis=1)).sum(axis=1), k - 1)
        if type == "confidence":
            x, hit, k = ps.max(axis=1), label == ps.argmax(axis=1), 1
    if k == 1:
        cell = _binning.bin_index(x, edges, right)
        count = np.bincount(cell, minlength=bins).astype(np.float64)
        hits = np.bincount(cell, weights=hit.astype(np.float64), minlength=bins)
    else:  # classwise: class j's bins are the cells j * bins .. j * bins + bins - 1
        if edges.ndim == 1:
            cells = _binning.bin_index(ps, edges, right) + np.arange(k) * bins
        else:  # classwise equal-mass bins: each column its own breaks
            cells = np.stack([_binning.bin_index(ps[:, j], _binning.column_breaks(edges, j),
                                                 right) for j in range(k)], axis=1)
            cells += np.arange(k) * bins
        count = np.bincount(cells.ravel(), minlength=k * bins).astype(np.float64)
        hits = np.bincount(cells[np.arange(n), label], minlength=k * bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = np.where(count > 0, hits / count, np.nan)
    return freq.reshape(k, bins)


def _resampled_top_label(ps: np.ndarray, u: np.ndarray, binary: bool, edges: np.ndarray,
                         right: bool) -> np.ndarray:
    """:func:`_resampled_frequencies` of the top-label form, from the resampled rows
    ``ps`` and their uniforms ``u``: each row's label drawn as there (for a vector
    ``p``, the class 1 when ``u < p``), its predicted class and confidence those of
    ``calibr._binning.top_label_columns``, binned in its class's bins."""
    if binary:
        label = (u < ps).astype(np.int64)
    else:
        k = ps.shape[1]
        label = np.minimum((u[:, None] >= np.cumsum(ps, axis=1)).sum(axis=1), k - 1)
    h, hit, cls, k = _binning.top_label_columns(ps, label, binary)
    bins = edges.shape[-1] - 1
    if edges.ndim == 1:
        cells = cls * bins + _binning.bin_index(h, edges, right)
    else:  # each predicted class its own breaks
        cells = np.empty(h.shape[0], dtype=np.int64)
        for c in range(k):
            rows = np.flatnonzero(cls == c)
            cells[rows] = c * bins + _binning.bin_index(
                h[rows], _binning.column_breaks(edges, c), right)
    count = np.bincount(cells, minlength=k * bins).astype(np.float64)
    hits = np.bincount(cells, weights=hit.astype(np.float64), minlength=k * bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = np.where(count > 0, hits / count, np.nan)
    return freq.reshape(k, bins)


def _consistency_band(p: np.ndarray, binary: bool, edges: np.ndarray, right: bool, type: str,
                      part: dict[str, np.ndarray], level: float, n_resamples: int,
                      gen: np.random.Generator) -> dict[str, np.ndarray]:
    """The band of the table rows ``part`` of one group: the ``(1 - level)/2`` and
    ``(1 + level)/2`` quantiles (numpy's default, linear interpolation: R's type 7)
    of each bin's observed frequency over the resamples that leave it non-empty."""
    b = part["bin"] - 1
    cls = part.get("_class", np.zeros_like(b))
    freq = np.empty((n_resamples, b.shape[0]))
    for r in range(n_resamples):
        freq[r] = _resampled_frequencies(p, binary, edges, right, type, gen)[cls, b]
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():  # a bin no resample fills: NaN, without the warning
        warnings.filterwarnings("ignore", message="All-NaN slice encountered")
        lo, hi = np.nanquantile(freq, [alpha, 1.0 - alpha], axis=0)
    return {**part, "consistency_lower": lo, "consistency_upper": hi}


def _frame(parts: list[dict[str, np.ndarray]], classes: tuple | None) -> pd.DataFrame:
    names = list(TABLE_COLUMNS)
    if parts and CONSISTENCY_COLUMNS[0] in parts[0]:
        names += CONSISTENCY_COLUMNS
    cols = {c: np.concatenate([part[c] for part in parts]) for c in names}
    if parts and "_class" in parts[0]:
        codes = np.concatenate([part["_class"] for part in parts])
        return pd.DataFrame({"class": pd.Index(list(classes)).take(codes), **cols})
    return pd.DataFrame(cols)


@renamed(ci_level="confidence_level")
@frame_verb  # polars / Arrow frames and by= (calibr/_input/frames.py)
@validate_params(bins=BIN_SPEC, type=Options(*_TYPES), confidence_level=LEVEL, na_rm=FLAG,
                 consistency=Optional(LEVEL), n_resamples=Optional(Integer(1, MAX_RESAMPLES)),
                 rng=RNG, binning=BINNING, right=RIGHT)
@shared_docs
def calibration_table(
    p: Any,
    y: Any,
    bins: int = BINS_DEFAULT,
    type: str = BINNED_TYPE_DEFAULT,
    *,
    classes: Sequence | None = None,
    na_rm: bool = False,
    confidence_level: float = 0.95,
    data: pd.DataFrame | DataFrameGroupBy | None = None,
    p_prefix: str | None = None,
    weights: Any = None,
    consistency: float | None = None,
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    binning: str = BINNING_DEFAULT,
    right: bool = RIGHT_DEFAULT,
    by: Any = None,
) -> pd.DataFrame:
    """The per-bin statistics behind ``ece()`` and ``mce()``, as a tidy DataFrame.

    Parameters
    ----------
    <calibr:p>
        With ``data``: the name of the probability column, or a list of
        names (one per class), or None with ``p_prefix``.
    <calibr:y>
        With ``data``: the name of the label column.
    <calibr:binned_bins>
    type : {"classwise", "confidence", "top-label"}, default "classwise"
        Multiclass form (ignored for binary input, but ``"top-label"``): one set
        of bins per class (one-vs-rest), the top-label confidence and its
        correctness, or the same split by predicted class, one set of bins per
        predicted class (Gupta & Ramdas 2022; a vector ``p`` is read as the
        columns ``(1 - p, p)``).
    <calibr:classes>
    <calibr:na_rm>
    confidence_level : float, default 0.95, keyword-only
        Confidence level of the interval for the observed frequency
        (``ci_level``, its old name, still works and warns).
    data : DataFrame or DataFrameGroupBy, optional, keyword-only
        Take ``p`` and ``y`` from the columns of this frame (``p`` and ``y``
        name them, as for :func:`calibr.summarise`); grouped, one table per
        group (pandas' ``observed=``/``dropna=`` semantics), stacked. Also a
        polars DataFrame or an Arrow Table (the table is then of that type), or
        a lazy source (``docs/engines.md``).
    p_prefix : str, optional, keyword-only
        With ``data``: the probability columns are those starting with this
        prefix (see :func:`calibr.summarise` for how class labels are derived).
    weights : array-like or str, optional, keyword-only
        Frequency weights, one nonnegative finite number per observation, as
        for :func:`calibr.ece` (``docs/definitions.md``, "Frequency weights");
        with ``data``, the name of the weights column. ``n`` is then each
        bin's total weight (float64), ``mean_confidence`` and
        ``observed_frequency`` weighted means, a bin of total weight 0 is left
        out, and the Wilson interval takes the total weight as its count
        (see Notes).
    consistency : float, optional, keyword-only
        A level in (0, 1), e.g. 0.9: add the consistency band of each bin
        (Bröcker & Smith 2007), the range of observed frequencies that a
        calibrated model with these predictions would show, as the columns
        ``consistency_lower`` and ``consistency_upper`` (see Notes). Not with
        ``weights``, nor with ``binning="isotonic"``.
    n_resamples : int, optional, keyword-only
        The consistency resamples (default 1000), from 1 to 10,000,000; only
        with ``consistency``.
    rng : None, int or numpy.random.Generator, keyword-only
        The random numbers of the consistency resampling: a seed (the same
        seed gives the same table), a Generator, or None for fresh entropy;
        only with ``consistency``.
    <calibr:binning>
        With ``data``, each group's own bins.
    <calibr:right>
    by : str or list of str, optional, keyword-only
        With ``data`` (a DataFrame of any supported kind): one table per group
        of these columns, as ``data.groupby(by)`` (keys sorted, rows with a
        missing key in no group).

    Returns
    -------
    DataFrame
        A new frame with a default index and the columns, in this order: the
        group keys (with a grouped ``data``); ``class`` (multiclass
        ``"classwise"``: the class label; ``"top-label"``: the predicted class,
        for a vector ``p`` 0 and 1 or the labels of ``classes``); ``bin``
        (1-based); ``lower`` and
        ``upper`` (the bin's edges: R's ``seq(0, 1, length.out = bins + 1)`` by
        default, else the breaks of ``binning`` or ``bins``);
        ``n`` (members; with ``weights`` their total weight); ``mean_confidence``;
        ``observed_frequency`` (the share of members whose outcome is 1, or
        whose class is the column's, or whose top label is right); ``gap`` (``|observed_frequency -
        mean_confidence|``); ``ci_lower`` and ``ci_upper`` (the Wilson score
        interval of the observed frequency, see :func:`wilson_interval`).
        Only non-empty bins appear, as the metrics ignore empty bins. With
        ``consistency``, then ``consistency_lower`` and ``consistency_upper``.

    Raises
    ------
    ValueError
        (``calibr.InputError``) for bad values, as the metrics.
    TypeError
        For a non-numeric ``p`` or a ``data`` that is not a DataFrame or DataFrameGroupBy.

    Notes
    -----
    Bin membership is that of :func:`calibr.ece` with the same ``bins``,
    ``binning`` and ``right`` (by default R's: closed on the right, 0 in the
    first bin), and the statistics come from the same kernels, so per group
    (and per class for ``"classwise"``)

    - ``(n * gap).sum() / n.sum()`` is the binary ECE (for ``"classwise"``,
      ``ece()`` is the mean of it over the classes);
    - ``gap.max()`` is the MCE (for ``"classwise"``, over all classes).

    For ``"top-label"``, ``(n * gap).sum() / n.sum()`` and ``gap.max()`` over all
    the rows of a group (every predicted class) are the top-label ECE and MCE.

    With ``weights`` the same holds for the weighted ``ece()`` and ``mce()``.
    The Wilson interval of a weighted bin is that of ``x = sum w_i c_i``
    successes in ``n = sum w_i`` trials: for whole-number weights the interval
    of the repeated rows; real weights are read as counts too, so the interval
    narrows when every weight is multiplied by a constant (the metrics do
    not change).

    **Consistency bands** (``docs/definitions.md``, "Consistency bands"):
    each of ``n_resamples`` resamples of a group draws ``n`` of its rows with
    replacement (``gen.integers(0, n, size=n)``) and a label for each from its
    own predicted distribution (``gen.random(n)``: Bernoulli(p) for a binary
    ``p``; for a matrix a class from the row, whose top label or one-vs-rest
    indicators are then taken as the table's ``type`` says), bins them with the
    table's bins and takes each bin's observed frequency; the band is the
    ``(1 - consistency)/2`` and ``(1 + consistency)/2`` quantiles of these
    over the resamples in which the bin is non-empty (numpy's default
    quantile, R's type 7; NaN if none is). The table of the group in position
    g (pandas' order, counting unobserved groups; 0 without groups) draws from
    ``numpy.random.default_rng(numpy.random.SeedSequence(rng).spawn(G)[g])``
    with G groups (for a Generator ``rng``, its seed sequence's ``spawn``), as
    :func:`calibr.summarise` draws for its tests.

    For the table of each group of a DataFrame, chain with ``.pipe()``:
    ``df.groupby("model").pipe((calibration_table, "data"), "p", "y")``.

    <calibr:dask_verb>

    References
    ----------
    Bröcker, J. & Smith, L. A. (2007). Increasing the reliability of
    reliability diagrams. Weather and Forecasting 22, 651-661.

    Examples
    --------
    >>> from calibr.table import calibration_table
    >>> tab = calibration_table([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], bins=2)
    >>> print(tab.round(4).to_string())
       bin  lower  upper  n  mean_confidence  observed_frequency   gap  ci_lower  ci_upper
    0    1    0.0    0.5  2             0.15                 0.0  0.15    0.0000    0.6576
    1    2    0.5    1.0  2             0.85                 1.0  0.15    0.3424    1.0000
    """
    spec = _binning.BinSpec.from_options(bins, binning, right)
    lazy = lazy_backend(p, y, data, weights)
    if lazy is not None:  # a lazy source: docs/dask.md, docs/engines.md
        data, grouping = lazy_grouping(lazy, data, by)
        return lazy.calibration_table(
            p, y, bins, type, classes=classes, na_rm=na_rm, confidence_level=confidence_level,
            data=data, p_prefix=p_prefix, weights=weights, consistency=consistency,
            n_resamples=n_resamples, rng=rng, binning=binning, right=right, **grouping)
    nb = spec.nbins
    z = _z(confidence_level)
    band = _band_options(consistency, n_resamples, rng, weights)
    if band is not None and spec.binning == "isotonic":
        raise InputError(
            "`consistency` cannot be combined with binning = 'isotonic': the band keeps the "
            "table's bins fixed, and isotonic bins are chosen from the outcomes, so the band "
            "would be too narrow (docs/definitions.md, \"Binning options\").",
            param="consistency"
        )
    if data is None:
        if p_prefix is not None:
            raise InputError(f"`p_prefix` needs {arg('data')}: it selects columns of a data frame.",
                             param="p_prefix")
        prep = prepare(p, y, classes=classes, na_rm=na_rm, weights=weights)
        _binning.check_cells(nb, prep.binary, prep.k, type)
        part = _rows(prep.p, prep.y, prep.binary, spec, type, z, prep.weights)
        if band is not None:
            seeds, bitgen = group_seeds(band[2], 1)
            part = _consistency_band(prep.p, prep.binary, part["_edges"], right, type, part,
                                     band[0], band[1],
                                     np.random.Generator(bitgen(seeds[0])))
        return _frame([part], _labels(prep.binary, prep.classes, classes, type))

    groups = groups_of(data)
    cols = resolve_columns(groups.frame, p, y, p_prefix, classes)
    weights = weights_column(groups.frame, weights)
    sp = split(groups, cols, na_rm, weights)
    top = type == _binning.TOP_LABEL
    if sp.rows_p is None:  # no observed group
        return _empty(groups, top or (not cols.binary and type == "classwise"),
                      band is not None)
    _binning.check_cells(nb, sp.binary, sp.k, type)
    sp.raise_if_emptied()  # a group whose rows na_rm=True dropped: its error
    if band is not None:  # each group's rows and its resamples, group by group
        parts, owner = [], []
        seeds, bitgen = group_seeds(band[2], groups.n_groups)
        for part in sp.parts():
            rows = _rows(part.p, part.y, sp.binary, spec, type, z)
            parts.append(_consistency_band(part.p, sp.binary, rows["_edges"], right, type,
                                           rows, band[0],
                                           band[1], np.random.Generator(bitgen(seeds[part.g]))))
            owner.append(np.full(len(rows["bin"]), part.g, dtype=np.int64))
    elif weights is None and spec.is_default and not top:
        parts, owner = _group_rows(sp, bins, type, z)
    else:  # weighted, bins other than R's, or the top-label form: group by group
        parts, owner = [], []
        for part in sp.parts():
            parts.append(_rows(part.p, part.y, sp.binary, spec, type, z, part.w))
            owner.append(np.full(len(parts[-1]["bin"]), part.g, dtype=np.int64))
    table = _frame(parts, _labels(sp.binary, sp.classes, classes, type))
    if groups.keys is None:
        return table
    keys = groups.keys.take(np.concatenate(owner)).reset_index(drop=True)
    check_group_keys(keys.columns, table.columns)
    return pd.concat([keys, table], axis=1)


def check_group_keys(keys: Sequence, columns: Sequence) -> None:
    """Refuse a group key named like a column of the table (``n``, ``bin``, ``class``,
    ...): the table would hold two columns of one name. The one rule of every
    path (pandas, polars, Arrow, the lazy engines, Dask; docs/engines.md, "Names").

    Raises
    ------
    InputError
        Naming the first such key.
    """
    clash = [c for c in keys if c in set(columns)]
    if clash:
        raise InputError(
            f"The group key {clash[0]!r} has the name of a column of the table; rename it.",
            param="data"
        )


def _labels(binary: bool, labels: tuple | None, classes: Sequence | None,
            type: str) -> tuple | None:
    """The labels of the table's ``class`` column: the classes of a matrix ``p``; for
    the top-label form of a vector ``p`` (read as the columns ``(1 - p, p)``) those
    of ``classes`` (negative, positive) if given, else 0 and 1."""
    if binary and type == _binning.TOP_LABEL:
        return (0, 1) if classes is None else tuple(classes)
    return labels


def _band_options(consistency: float | None, n_resamples: int | None, rng: Any,
                  weights: Any) -> tuple[float, int, Any] | None:
    """``(level, n_resamples, rng)`` of the consistency band, or None without one."""
    if consistency is None:
        for name, value in (("n_resamples", n_resamples), ("rng", rng)):
            if value is not None:
                raise InputError(
                    f"`{name}` applies to the consistency band only; pass `consistency` "
                    f"(a level, e.g. 0.9) too, or leave {arg(name)} out.",

                    param=name
                )
        return None
    if weights is not None:
        raise InputError(
            f"`consistency` cannot be combined with {arg('weights')}: the consistency resampling "

            "draws rows of an unweighted sample. Pass the rows repeated (numpy.repeat) for "
            "whole-number weights.",
            param="consistency"
        )
    return consistency, CONSISTENCY_RESAMPLES if n_resamples is None else n_resamples, rng


def _empty(groups: Groups, with_class: bool, band: bool = False) -> pd.DataFrame:
    """The table of a grouping with no observed group: the columns, no rows."""
    columns = (["class"] if with_class else []) + list(TABLE_COLUMNS) + (
        list(CONSISTENCY_COLUMNS) if band else [])
    keys = list(groups.keys.columns) if groups.keys is not None else []
    check_group_keys(keys, columns)
    return pd.DataFrame({c: [] for c in keys + columns})
