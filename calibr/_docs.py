"""Docstring paragraphs shared by several public functions, written once.

A public function's docstring holds a marker line ``<calibr:NAME>`` where a
shared paragraph goes; :func:`shared_docs` replaces it with ``PARAMS[NAME]``,
indented like the marker (scipy injects its ``_axis_nan_policy`` paragraphs the
same way). The paragraphs follow numpydoc: a ``name : type`` line and an
indented description.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

from ._defaults import BINNING_DEFAULT, BINS_DEFAULT, RIGHT_DEFAULT

__all__ = ["PARAMS", "shared_docs"]

F = TypeVar("F", bound=Callable[..., Any])

PARAMS: dict[str, str] = {
    "p": """\
p : array-like, pandas Series or DataFrame
    Predicted probabilities: a vector of P(y = 1) for binary problems, or a
    matrix (or DataFrame) with one column per class whose rows sum to 1
    within 1e-6.""",
    "y": """\
y : array-like, pandas Series or Categorical
    Outcomes: 0/1 or booleans for a vector ``p``; for a matrix, integer codes
    1..K (as in R), a Categorical whose categories are the columns, labels
    equal to the column names of a DataFrame ``p`` (matched by name), or
    labels listed in ``classes``.""",
    "bins": f"""\
bins : int, default {BINS_DEFAULT}
    Number of equal-width bins on [0, 1]; a single positive integer.""",
    "test_bins": f"""\
bins : int, default {BINS_DEFAULT}, keyword-only
    ``bins`` of ``ece``/``mce`` in consistency resampling.""",
    "binned_bins": f"""\
bins : int, sequence of float, "sweep", "auto" or "sweep-caltrain", default {BINS_DEFAULT}
    The number of bins B (a single positive integer), or the breaks
    themselves, as R's ``cut(x, breaks = ...)``: a sorted sequence from 0 to
    1, strictly increasing (``bins=[0, 0.5, 0.8, 1]``: three bins). Or B
    chosen from the data (each column's own in the classwise form):
    ``"sweep"``, the monotonic sweep of Roelofs et al. (2022), the largest B
    up to which every number of bins has nondecreasing mean outcomes; or
    ``"auto"``, the cube-root rule ``B = ceil(n^(1/3))``; both placed by
    ``binning``. ``"sweep-caltrain"``: the sweep as google-research caltrain's
    ``em_ece_sweep``/``ew_ece_sweep`` compute it (with ``right=False``, no
    weights; ``docs/definitions.md``, "Binning options", says where it
    differs from ``"sweep"``).""",
    "binning": f"""\
binning : {{"equal-width", "equal-mass", "isotonic"}}, default "{BINNING_DEFAULT}", keyword-only
    How B bins are placed: R's equal-width bins
    (``seq(0, 1, length.out = B + 1)``), or equal-mass bins, B groups of
    nearly equal size by the values (in the classwise form, each column's
    own), the breaks at the midpoints between groups, as
    uncertainty-calibration's ``get_equal_bins``; only with a number of
    ``bins``. Or ``"isotonic"``: the blocks of the isotonic regression of the
    outcomes on the values (PAV, ties pooled; each column's own), the bins of
    the CORP reliability diagram (Dimitriadis et al. 2021), whose number
    comes from the fit (leave ``bins`` at its default). ``docs/definitions.md``,
    "Binning options".""",
    "right": f"""\
right : bool, default {RIGHT_DEFAULT}, keyword-only
    Bins closed on the right, ``(a, b]`` with 0 in the first bin (R's
    ``cut(right = TRUE, include.lowest = TRUE)``), or with ``right=False``
    closed on the left, ``[a, b)`` with 1 in the last bin (``numpy.histogram``,
    netcal, relplot).""",
    "bandwidth": """\
bandwidth : float or "median", default 0.2
    Bandwidth h of the Laplacian kernel: a positive finite number, or
    ``"median"`` for the median of the positive pairwise distances of what
    the kernel sees (for ``"classwise"``, each column its own median).""",
    "classes": """\
classes : sequence, optional, keyword-only
    The label of each column of ``p`` (e.g. ``classes=range(K)`` for 0-based
    labels), or ``(negative, positive)`` for a vector ``p``.""",
    "na_rm": """\
na_rm : bool, default False, keyword-only
    Drop observations with a missing value instead of raising.""",
    "weights": """\
weights : array-like, optional, keyword-only
    Frequency weights, one per row: a whole-number weight counts the row
    that many times (``docs/definitions.md``, "Frequency weights").""",
    "raises": """\
ValueError
    (``calibr.InputError``) for bad values of any argument; the message
    names the argument.
TypeError
    (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
    set, dict or string where a vector is expected.""",
    "raises_type": """\
TypeError
    (``calibr.InputTypeError``) for a non-numeric ``p``, or a generator,
    set, dict or string where a vector is expected.""",
    "binned_weights": """\
weights : array-like, optional, keyword-only
    Frequency weights, one nonnegative finite number per observation (not
    missing; a positive total). A whole-number weight w counts the
    observation w times: the result equals that of the sample with each row
    repeated, to rounding; 0 drops the row. Real values are weighted counts.
    Rows that ``na_rm=True`` drops take their weights with them. See
    ``docs/definitions.md``, "Frequency weights".""",
    "dask_binned": """\
**Dask.** A Dask Series or DataFrame ``p`` (``y`` and ``weights`` Dask Series,
best columns of the same Dask DataFrame) gives a lazy
``dask.delayed.Delayed``; ``.compute()`` gives the float. Bins that do not
depend on the data (a number of equal-width bins or explicit breaks) are
computed on the cluster from per-partition bin sums, merged: <= 1e-12
relative to the pandas path on the same rows, bit for bit with one
partition. ``binning="equal-mass"`` gathers the rows to one worker and runs
the pandas path there (bit for bit; all rows must fit in its memory).
``docs/dask.md``.""",
    "dask_scores": """\
**Dask.** A Dask Series or DataFrame ``p`` (``y`` and ``weights`` Dask Series,
best columns of the same Dask DataFrame) gives a lazy
``dask.delayed.Delayed``; ``.compute()`` gives the float: each partition's
total weight, sum of the losses and count of impossible rows, merged (<= 1e-12
relative to the pandas path on the same rows, bit for bit with one partition).
``docs/dask.md``.""",
    "dask_kernel": """\
**Dask.** A Dask Series or DataFrame ``p`` (``y`` and ``weights`` Dask Series,
best columns of the same Dask DataFrame) gives a lazy
``dask.delayed.Delayed``; ``.compute()`` gives the float. Exact on the cluster
(Dask's global sort by the scalar, one pass per partition, the partitions
joined by the factorised kernel; <= 1e-11 relative to the pandas path in the
tests) for a vector ``p`` or ``type="confidence"`` with ``"uq"`` or
``"biased"``, a numeric ``bandwidth`` and no ``weights``. Every other case
(``"ul"``, ``bandwidth="median"``, the canonical and classwise forms, weights)
gathers the rows to one worker, in partition order, and runs the pandas path
there: bit for bit, but all rows must fit in that worker's memory.
``docs/dask.md``.""",
    "dask_verb": """\
**Dask.** A Dask DataFrame, or a Dask groupby by column names, gives a lazy
Dask DataFrame with the pandas result's columns and dtypes (``.compute()``
gives it). Binned metrics with bins that do not depend on the data come from
per-partition, per-group bin sums, merged (<= 1e-12 relative to pandas); other
metrics of a groupby from an exchange of the rows by group, the pandas path on
each group's rows in the frame's order (bit for bit; a group must fit in one
worker); ``tests``, ``ci``, consistency bands, or an ungrouped frame with
such a metric, gather the frame to one worker. ``docs/dask.md``.""",
}

_MARKER = re.compile(r"^(?P<indent>[ \t]*)<calibr:(?P<name>\w+)>[ \t]*$", re.MULTILINE)


def shared_docs(func: F) -> F:
    """Replace each ``<calibr:NAME>`` line of ``func.__doc__`` by ``PARAMS[NAME]``.

    Examples
    --------
    >>> from calibr._docs import shared_docs
    >>> @shared_docs
    ... def f(p, y):
    ...     '''Parameters
    ...     ----------
    ...     <calibr:na_rm>
    ...     '''
    >>> print(f.__doc__.splitlines()[2])
        na_rm : bool, default False, keyword-only
    """
    if func.__doc__:
        def fill(m: re.Match) -> str:
            return textwrap.indent(PARAMS[m["name"]], m["indent"])

        func.__doc__ = _MARKER.sub(fill, func.__doc__)
    return func
