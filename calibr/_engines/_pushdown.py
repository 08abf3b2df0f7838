"""The row sums and the sorted sums of the lazy engines (``docs/engines.md``,
"Pushed down: the scores and the cumulative measures"): ``brier``, ``log_loss``,
``auroc``, ``ecce`` and ``calibration_test(method="spiegelhalter" |
"hosmer_lemeshow" | "ks" | "kuiper")`` of a binary ``p``, per group, in the
engine's own queries, with no row collected and no row cap (Hosmer-Lemeshow:
:meth:`_Query.hosmer_lemeshow`).

Each call is two or three queries of :func:`calibr._engines._lazy._query_frame`
(the used columns under generated names):

1. **the check**: the binned path's cheap query of one bin (``_lazy._fast_stats``:
   a count of invalid rows per group); when a row is not valid, the counters of bad
   values per group of ``_lazy._stats``, read by the rule of the binned path
   (``_lazy._bad``): a bad value, a
   missing value without ``na_rm`` or a group left empty runs the pandas path on
   the collected columns for its message (below the collect limit) or raises
   from the counts (above it);
2. **the row sums** (``brier``, ``log_loss``, ``spiegelhalter``): one
   ``group_by(keys).agg(sum)`` over the kept rows: the count, the total weight,
   ``sum w (p - y)^2``, ``sum w log q`` (``q`` the probability of the observed
   outcome, clipped as ``eps`` says; a ``q`` of 0 is counted, not logged),
   ``sum (y - p)(1 - 2p)`` and ``sum (1 - 2p)^2 p (1 - p)``;
3. **the sorted sums** (``ecce``, ``ks``, ``kuiper``, ``auroc``): the kept rows
   summed per (keys, ``p``), so that a block of tied ``p`` is one row, then a
   running sum over ``p`` within each group (a window ``cum_sum().over(keys,
   order_by=p)``), then per group its maximum and minimum and the sums: the
   running sum read at the end of each block of tied ``p``, which is calibr's
   tie rule (``calibr._kernels.cumulative``), and the AUROC's midranks (a
   positive counts the negatives below its value and half of those tied with
   it). On polars, for no group key or one integer key (of any width), the
   same sums by one sort of ``p`` streamed into a compiled kernel instead
   (``Engine.sorted_rows``, ``calibr._engines.polars._sorted_rows``).

The driver receives one row per group and finishes with the pandas path's
functions (``spiegelhalter_from_sums``, ``ecce_pvalue``, ``log_loss_value``'s
rule for an impossible prediction). A sum differs from the pandas path's only in
the order of its additions (``ENGINE_RTOL``); the AUROC's unweighted counts are
integers, exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from .._input import InputError
from ._lazy import (
    _ONE_BIN,
    _ONE_EDGES,
    Engine,
    _bad,
    _collect,
    _collected,
    _column,
    _EagerResult,
    _explain,
    _fast_stats,
    _groups,
    _metric_columns,
    _pushable,
    _query_frame,
    _source,
    _stats,
)

__all__ = ["PUSHED_TESTS", "bind_pushdown", "group_values", "observed_probability"]

#: The methods of ``calibration_test`` the engines compute from their sums.
PUSHED_TESTS = ("spiegelhalter", "hosmer_lemeshow", "ks", "kuiper")


class _Query:
    """The checked source of one call: the query frame, its keys and columns, and
    the groups (pandas' order) that the check found."""

    def __init__(self, engine: Engine, lf: Any, keys: list, cols: Any,
                 weights: Hashable | None, na_rm: bool, eager: Callable[[Any], Any]) -> None:
        from .._input.groups import Columns

        used = [*keys, cols.p, cols.y, *([] if weights is None else [weights])]
        q, new = _query_frame(engine, lf, used)
        self.engine = engine
        self.keys = keys
        self.qkeys = [new[k] for k in keys]
        self.cols = Columns(p=new[cols.p], y=new[cols.y], classes=None)
        self.w = None if weights is None else new[weights]
        # clean data: the binned path's cheap query (a count of invalid rows) suffices
        fast = _fast_stats(q, self.qkeys, self.cols, self.w, _ONE_BIN, _ONE_EDGES, na_rm)
        gr = None if fast is None else _groups(fast, self.qkeys, 1)
        if gr is None or not np.all(gr.count.sum(axis=1) > 0):
            st = _stats(q, self.qkeys, self.cols, self.w, _ONE_BIN, _ONE_EDGES, na_rm)
            if st.empty:
                _explain(engine, lf, used, None, na_rm, eager)
            gr = _groups(st, self.qkeys, 1)
            if _bad(gr, na_rm, weights is not None):
                _explain(engine, lf, used, gr, na_rm, eager)
        if gr.keys is not None and len(gr.keys) == 0:  # every key missing: pandas' answer
            _explain(engine, lf, used, gr, na_rm, eager)
        self.group_keys = None if gr.keys is None else gr.keys.set_axis(keys, axis=1)
        self.count = gr.count.sum(axis=1)  # the kept rows (their weight, weighted)
        self.n_groups = 1 if gr.keys is None else len(gr.keys)
        x = nw.col(self.cols.p).cast(nw.Float64)
        yv = nw.col(self.cols.y).cast(nw.Float64)
        # after the check, a row is kept when p and y are there (na_rm's drop)
        kept = ~(x.is_null() | x.is_nan() | yv.is_null() | yv.is_nan())
        # + 0.0: -0.0 is 0.0 (the key of calibr._kernels.cumulative.fill_keys)
        self.frame = q.filter(kept).select(*self.qkeys, __x=x + 0.0, __y=yv,
                                           __w=(nw.lit(1.0) if self.w is None
                                                else nw.col(self.w).cast(nw.Float64)))

    def ordered(self, out: pd.DataFrame) -> pd.DataFrame:
        """One row per group of the engine's result, in pandas' group order (the rows
        of a missing key dropped, as ``groupby(dropna=True)`` drops them)."""
        for c in out.columns:
            if c not in self.qkeys:
                out[c] = out[c].astype(np.float64)
        if not self.qkeys:
            return out.reset_index(drop=True)
        out = out.dropna(subset=self.qkeys)
        gid = out.groupby(self.qkeys, sort=True, dropna=True, observed=True).ngroup()
        out = out.assign(__g=gid.to_numpy()).sort_values("__g").reset_index(drop=True)
        if len(out) != self.n_groups:  # pragma: no cover - the check found these groups
            raise RuntimeError("calibr: the engine's queries disagree on the groups.")
        return out

    def row_sums(self, eps: float | None) -> pd.DataFrame:
        """Per group: ``n``, ``W``, ``brier``, ``logsum``, ``zeros``, ``snum``, ``svar``."""
        x, yv, w = nw.col("__x"), nw.col("__y"), nw.col("__w")
        picked = observed_probability(x, yv, eps)
        zero = (picked == 0.0) & (w > 0.0)
        a = 1.0 - 2.0 * x
        aggs = [nw.len().alias("n"), w.sum().alias("W"),
                (w * ((x - yv) ** 2)).sum().alias("brier"),
                (w * nw.when(picked > 0.0).then(picked).otherwise(1.0).log()).sum()
                .alias("logsum"),
                zero.cast(nw.Float64).sum().alias("zeros"),
                ((yv - x) * a).sum().alias("snum"),
                (a * a * x * (1.0 - x)).sum().alias("svar")]
        if self.qkeys:
            query = self.frame.group_by(*self.qkeys, drop_null_keys=False).agg(*aggs)
        else:
            query = self.frame.select(*aggs)
        return self.ordered(_collect(query).to_pandas())

    def running_extremes(self) -> pd.DataFrame:
        """Per group: ``high``, ``low``, ``var``, ``W``, ``n`` of :meth:`sorted_sums`
        without the AUROC's sums. On DuckDB and Spark one window with a RANGE frame
        (``sum(...) OVER (PARTITION BY keys ORDER BY p RANGE BETWEEN UNBOUNDED
        PRECEDING AND CURRENT ROW)``: a row's frame holds every row of its group up to
        the last of its block of tied ``p``, so each row reads the running sum at the
        end of its block, calibr's tie rule, in one sort and no aggregation per
        ``(group, p)``; benchmarks/README.md, "Engines"); on polars, whose windows have
        no RANGE frame, :meth:`sorted_sums` (its stream of the rows sorted by ``p``,
        or the window over the blocks)."""
        native = self.frame.to_native()
        module = type(native).__module__
        if module.startswith("duckdb"):
            keys = ", ".join(f'"{k}"' for k in self.qkeys)
            lead = f"{keys}, " if keys else ""
            part = f"PARTITION BY {keys} " if keys else ""
            sql = (f"SELECT {lead}max(__run) AS high, min(__run) AS low, sum(__v) AS var, "
                   f"sum(__w) AS W, count(*) AS n FROM (SELECT {lead}__w, "
                   f"sum(__w * (__y - __x)) OVER ({part}ORDER BY __x RANGE BETWEEN "
                   f"UNBOUNDED PRECEDING AND CURRENT ROW) AS __run, "
                   f"__w * (__x * (1.0 - __x)) AS __v FROM calibr_rows)"
                   + (f" GROUP BY {keys}" if keys else ""))
            out = native.query("calibr_rows", sql)
        elif module.startswith("pyspark"):
            from pyspark.sql import Window
            from pyspark.sql import functions as F

            order = (Window.partitionBy(*self.qkeys) if self.qkeys else Window).orderBy("__x")
            frame = order.rangeBetween(Window.unboundedPreceding, Window.currentRow)
            w, x, yv = F.col("__w"), F.col("__x"), F.col("__y")
            rows = native.select(*self.qkeys, w, F.sum(w * (yv - x)).over(frame).alias("__run"),
                                 (w * (x * (1.0 - x))).alias("__v"))
            aggs = [F.max("__run").alias("high"), F.min("__run").alias("low"),
                    F.sum("__v").alias("var"), F.sum("__w").alias("W"),
                    F.count(F.lit(1)).alias("n")]
            out = rows.groupBy(*self.qkeys).agg(*aggs) if self.qkeys else rows.agg(*aggs)
        else:
            return self.sorted_sums(auroc=False)
        out = self.ordered(_collect(nw.from_native(out)).to_pandas())
        out["high"] = np.maximum(out["high"], 0.0)  # C_0 = 0
        out["low"] = np.minimum(out["low"], 0.0)
        return out

    def hosmer_lemeshow(self, groups: int, ddof: int) -> Any:
        """The Hosmer-Lemeshow test of the kept rows (unweighted, ungrouped): R's type-7
        quantiles of ``p`` from the order statistics at their ranks only (as the
        equal-mass breaks, ``_lazy._equal_mass_edges``), then per quantile group the
        rows and the sums of ``y``, ``p``, ``1 - y`` and ``1 - p`` in one query; the
        test from them by the pandas path's ``hosmer_lemeshow_result``."""
        from types import SimpleNamespace

        from .._inference.calibration_tests import (
            hosmer_lemeshow_probs,
            hosmer_lemeshow_result,
            quantile_ranks,
            r_quantile7,
        )
        from ._lazy import _bin_expr

        n = int(self.count[0])
        probs = hosmer_lemeshow_probs(groups)
        lo, hi = quantile_ranks(n, probs)
        ranks = sorted(set(lo.tolist()) | set(hi.tolist()))
        got = (self.frame.select("__x").with_row_index("__r", order_by="__x")
               .filter(nw.col("__r").is_in(ranks)))
        got = _collect(got).to_pandas()
        value = dict(zip(got["__r"].astype(np.int64).tolist(),
                         got["__x"].astype(np.float64).tolist(), strict=True))
        breaks = np.unique(r_quantile7(lambda i: np.array([value[r] for r in i.tolist()]),
                                       n, probs))
        right = SimpleNamespace(is_default=False, right=True)  # breaks[g] < p <= breaks[g+1]
        b = (_bin_expr(nw.col("__x"), right, breaks) if breaks.size > 1 else nw.lit(0.0))
        x, yv = nw.col("__x"), nw.col("__y")
        query = (self.frame.select(__b=b.cast(nw.Int64), __x=x, __y=yv)
                 .group_by("__b").agg(nw.len().alias("size"), yv.sum().alias("obs1"),
                                      x.sum().alias("exp1"), (1.0 - yv).sum().alias("obs0"),
                                      (1.0 - x).sum().alias("exp0")))
        out = _collect(query).to_pandas()
        nb = max(breaks.size - 1, 1)
        at = out["__b"].to_numpy(dtype=np.int64)
        sums = {}
        for c in ("size", "obs1", "exp1", "obs0", "exp0"):
            a = np.zeros(nb)
            a[at] = out[c].to_numpy(dtype=np.float64)
            sums[c] = a

        def distinct() -> int:
            return int(_collect(self.frame.select(nw.col("__x").n_unique().alias("k")))
                       .to_pandas()["k"].iloc[0])

        return hosmer_lemeshow_result(sums["size"], sums["obs1"], sums["exp1"], sums["obs0"],
                                      sums["exp0"], n, groups, ddof, distinct)

    def streamed(self) -> pd.DataFrame | None:
        """:meth:`sorted_sums` by the engine's ``sorted_rows`` (with every column), or
        None: the engine has none, the keys are not one integer column (whose range
        the check's groups give), or the engine declines."""
        if self.engine.sorted_rows is None or len(self.qkeys) > 1:
            return None
        key, low, high = None, 0, 0
        if self.qkeys:
            key = self.qkeys[0]
            if not self.frame.collect_schema()[key].is_integer():
                return None
            values = self.group_keys.iloc[:, 0]
            low, high = int(values.min()), int(values.max())
        out = self.engine.sorted_rows(self.frame.to_native(), key, self.w is not None,
                                      low, high)
        # one row per group in ascending key order, pandas' order (high, low: C_0 included)
        return out

    def sorted_sums(self, auroc: bool = True) -> pd.DataFrame:
        """Per group: ``high``, ``low`` (of the running sum of ``w (y - p)``, read at
        the end of each block of tied ``p``; 0 included), ``var`` (``sum w p (1 -
        p)``), ``W``, ``n``, and (``auroc``) the AUROC's ``num`` (``sum`` over
        positives of ``w`` times the weight of the negatives below plus half of those
        tied: twice it without weights), ``wpos``, ``wneg``; without ``auroc``, the
        blocks carry no class sums and the query has one window, not two. An engine
        with its own route (``Engine.sorted_rows``: polars' sort by ``p`` streamed
        into a compiled kernel) takes it first, for no group key or one integer key
        (:meth:`streamed`)."""
        streamed = self.streamed()
        return self.window_sums(auroc) if streamed is None else streamed

    def window_sums(self, auroc: bool) -> pd.DataFrame:
        """:meth:`sorted_sums` by the engine's window query over the blocks."""
        x, yv, w = nw.col("__x"), nw.col("__y"), nw.col("__w")
        pos = (yv != 0.0).cast(nw.Float64)
        sums = [nw.len().alias("__n"), w.sum().alias("__wt"),
                (w * (yv - x)).sum().alias("__step"), (w * (x * (1.0 - x))).sum().alias("__var")]
        if auroc:
            sums += [(w * pos).sum().alias("__wpos"), (w * (1.0 - pos)).sum().alias("__wneg")]
        blocks = self.frame.group_by(*self.qkeys, "__x", drop_null_keys=False).agg(*sums)
        over = dict(order_by="__x")
        run = nw.col("__step").cum_sum().over(*self.qkeys, **over)
        aggs = [nw.col("__run").max().alias("high"), nw.col("__run").min().alias("low"),
                nw.col("__var").sum().alias("var"), nw.col("__wt").sum().alias("W"),
                nw.col("__n").sum().alias("n")]
        if auroc:
            below = nw.col("__wneg").cum_sum().over(*self.qkeys, **over) - nw.col("__wneg")
            scale = 1.0 if self.w is not None else 2.0  # unweighted: twice, in integers
            half = 0.5 if self.w is not None else 1.0
            blocks = blocks.with_columns(
                __run=run, __num=nw.col("__wpos") * (scale * below + half * nw.col("__wneg")))
            aggs += [nw.col("__num").sum().alias("num"), nw.col("__wpos").sum().alias("wpos"),
                     nw.col("__wneg").sum().alias("wneg")]
        else:
            blocks = blocks.with_columns(__run=run)
        if self.qkeys:
            query = blocks.group_by(*self.qkeys, drop_null_keys=False).agg(*aggs)
        else:
            query = blocks.select(*aggs)
        out = self.ordered(_collect(query).to_pandas())
        out["high"] = np.maximum(out["high"], 0.0)  # C_0 = 0
        out["low"] = np.minimum(out["low"], 0.0)
        return out


def observed_probability(x: Any, yv: Any, eps: float | None) -> Any:
    """The probability of the observed outcome, ``p`` clipped to ``[eps, 1 - eps]``
    when ``eps`` is given (the log loss's ``q``; its log is taken where it is
    positive, a 0 is counted)."""
    clip = 0.0 if eps is None else float(eps)
    v = x if clip == 0.0 else nw.min_horizontal(nw.max_horizontal(x, nw.lit(clip)),
                                                nw.lit(1.0 - clip))
    return nw.when(yv != 0.0).then(v).otherwise(1.0 - v)


# --------------------------------------------------------------------------
# the numbers from the sums, as the pandas path computes them


def _brier(s: pd.Series) -> float:
    return float(s["brier"] / s["W"])


def _log_loss(s: pd.Series) -> float:
    from .._metrics.scores import log_loss_value

    return log_loss_value(float(s["logsum"]), int(s["zeros"]), float(s["W"]))


def _ecce_stats(s: pd.Series) -> Any:
    from .._metrics.cumulative import EcceStats

    high, low, total = float(s["high"]), float(s["low"]), float(s["W"])
    return EcceStats(ks=max(high, -low) / total, kuiper=(high - low) / total,
                     sigma=float(np.sqrt(float(s["var"]))) / total)


def _auroc(s: pd.Series, weighted: bool) -> float:
    from .._metrics.scores import one_class_error

    wpos, wneg = float(s["wpos"]), float(s["wneg"])
    if wpos == 0.0 or wneg == 0.0:
        raise one_class_error("`y` has one value only (among the rows of positive weight)"
                         if weighted else "`y` has one value only", "outcomes 0 and 1")
    if weighted:
        return float(s["num"] / (wpos * wneg))
    return float(s["num"] / (2.0 * wpos * wneg))


#: The functions of ``summarise()``'s pushed-down columns: which sums, and the
#: number of one group from them (``options``: the column's resolved options).
_COLUMNS: dict[str, tuple[str, Callable[[pd.Series, dict, bool], float]]] = {
    "brier": ("row", lambda s, o, wt: _brier(s)),
    "log_loss": ("row", lambda s, o, wt: _log_loss(s)),
    "ecce": ("sorted", lambda s, o, wt: _ecce_stats(s).value(o["kind"], o["scale"])),
    "auroc": ("sorted", lambda s, o, wt: _auroc(s, wt)),
}


def group_values(engine: Engine, lf: Any, keys: list, cols: Any, weights: Hashable | None,
                 na_rm: bool, plan: list, eager: Callable[[Any], Any]
                 ) -> tuple[pd.DataFrame | None, dict[str, np.ndarray]]:
    """The pushed-down columns of ``summarise()`` that are not binned: ``plan`` is
    ``[(column, metric name, resolved options)]``; returns the groups' keys (pandas'
    order; None ungrouped) and each column's values. A group where the AUROC is
    undefined gets NaN and one warning per column, as the pandas path gives."""
    from .._input import GroupWarnings
    from .._metrics.scores import UNDEFINED

    qr = _Query(engine, lf, keys, cols, weights, na_rm, eager)
    sums: dict[str, pd.DataFrame] = {}
    values: dict[str, np.ndarray] = {}
    for name, which, options in plan:
        kind, func = _COLUMNS[which]
        if kind == "sorted" and "auroc" not in [w for _, w, _ in plan]:
            kind = "running"  # the ecce columns alone: one RANGE window (running_extremes)
        if kind not in sums:
            sums[kind] = (qr.row_sums(None) if kind == "row" else
                          qr.sorted_sums() if kind == "sorted" else qr.running_extremes())
        if kind == "row" and which == "log_loss" and options.get("eps") is not None:
            table = qr.row_sums(options["eps"])
        else:
            table = sums[kind]
        out = np.empty(len(table))
        said = GroupWarnings()  # pandas' words: one warning per column
        for i, s in enumerate(table.to_dict("records")):  # (iterrows: 0.1 ms a group)
            try:
                out[i] = func(s, options, weights is not None)
            except InputError as err:
                if err.code != UNDEFINED:
                    raise
                out[i] = math.nan
                said.undefined(name, i)
        said.warn(lambda g: _describe(qr.group_keys, g))
        values[name] = out
    return qr.group_keys, values


def _describe(keys: pd.DataFrame | None, g: int) -> str:
    """A group as ``calibr.frame``'s warning names it (``Groups.describe``)."""
    from .._input import fmt

    if keys is None:
        return "all rows"
    return ", ".join(f"{k}={fmt(v)}" for k, v in keys.iloc[g].items())


# --------------------------------------------------------------------------
# the public functions, for one engine


def bind_pushdown(engine: Engine) -> dict[str, Callable[..., Any]]:
    """The pushed-down functions of ``engine`` beside :func:`._lazy.bind`'s, by name."""

    def call(which: str, p: Any, y: Any, weights: Any, classes: Any, na_rm: bool,
             options: dict, finish: Callable[[_Query], Any], pushable: bool = True) -> Any:
        import calibr

        lf = _source(engine, p, "p")
        cols = _metric_columns(engine, lf, y, weights)

        def eager(frame: Any) -> Any:
            w = {} if weights is None else {"weights": _column(frame, weights)}
            return getattr(calibr, which)(_column(frame, cols.p), _column(frame, cols.y),
                                          classes=classes, na_rm=na_rm, **options, **w)

        if not (pushable and _pushable(lf, cols, weights, classes)):
            used = [*(cols.p if isinstance(cols.p, list) else [cols.p]), cols.y,
                    *([] if weights is None else [weights])]
            return eager(_collected(engine, lf, used, f"calibr.{which}", "p"))
        try:
            return finish(_Query(engine, lf, [], cols, weights, na_rm, eager))
        except _EagerResult as done:
            return done.value

    def brier(p, y, *, classes, na_rm, weights):
        return call("brier", p, y, weights, classes, na_rm, {},
                    lambda qr: _brier(qr.row_sums(None).iloc[0]))

    def log_loss(p, y, eps, *, classes, na_rm, weights):
        return call("log_loss", p, y, weights, classes, na_rm, {"eps": eps},
                    lambda qr: _log_loss(qr.row_sums(eps).iloc[0]))

    def auroc(p, y, type, average, *, classes, na_rm, weights):
        return call("auroc", p, y, weights, classes, na_rm, {"type": type, "average": average},
                    lambda qr: _auroc(qr.sorted_sums().iloc[0], weights is not None))

    def ecce(p, y, kind, scale, type, classes, na_rm, weights):
        return call("ecce", p, y, weights, classes, na_rm,
                    {"kind": kind, "scale": scale, "type": type},
                    lambda qr: _ecce_stats(qr.running_extremes().iloc[0]).value(kind, scale))

    def calibration_test(p, y, method, options: dict):
        """``calibration_test`` of a lazy source: ``spiegelhalter``, ``ks`` and
        ``kuiper`` of a binary ``p`` from the engine's sums; the other methods on
        the collected columns (``options``: every other argument of the call)."""
        from .._inference.calibration_tests import CalibrationTestResult, spiegelhalter_result
        from .._metrics.cumulative import ecce_pvalue

        opts = {k: v for k, v in options.items() if k not in ("classes", "na_rm", "weights")}
        opts["method"] = method

        def finish(qr: _Query) -> Any:
            if method == "hosmer_lemeshow":
                return qr.hosmer_lemeshow(options["groups"], options["ddof"])
            if method == "spiegelhalter":
                s = qr.row_sums(None).iloc[0]
                return spiegelhalter_result(float(s["snum"]), float(s["svar"]), int(s["n"]))
            s = qr.running_extremes().iloc[0]
            stats = _ecce_stats(s)
            statistic = stats.value(method, "sigma")
            return CalibrationTestResult(
                statistic=statistic, pvalue=float(ecce_pvalue(statistic, method)[0]),
                estimate=stats.value(method), method=method, n=int(s["n"]), type="binary")

        pushable = method in PUSHED_TESTS  # of a binary p (_pushable), which ignores type
        return call("calibration_test", p, y, options.get("weights"), options.get("classes"),
                    options.get("na_rm", False), opts, finish, pushable)

    return dict(brier=brier, log_loss=log_loss, auroc=auroc, ecce=ecce,
                calibration_test=calibration_test)

