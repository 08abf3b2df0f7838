"""calibr on Dask input (``docs/dask.md``), on a real cluster of worker processes.

Every number is compared with the pandas path on the same rows (``ddf.compute()``):
binned results from merged per-bin sums agree to ``MERGED_RTOL`` (bit for bit with
one partition), gathered results (kernel metrics, equal-mass bins, tests) bit for bit.
The partitionings include empty partitions, a single-row partition, a boundary
inside a run of tied values and groups split over partitions. Faults: a worker
process killed in the middle of a computation (Dask recomputes; the result is
unchanged) and a worker that exceeds its memory limit (Dask's ``KilledWorker``,
not a hang).
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import require

dask = require("dask")
distributed = require("distributed")
dd = require("dask.dataframe")
cloudpickle = require("cloudpickle")

import calibr  # noqa: E402

# the partition builders below run on the workers: send them by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

from tolerances import DASK_MERGED_RTOL as MERGED_RTOL  # noqa: E402
from tolerances import DASK_SCAN_RTOL as SCAN_RTOL  # noqa: E402
from tolerances import DASK_SORTED_RTOL as SORTED_RTOL  # noqa: E402

SEED = 20261201


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.scheduler.allowed-failures": 3}):
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                           dashboard_address=None, host="127.0.0.1")
        with cluster, distributed.Client(cluster) as cl:
            yield cl


# --------------------------------------------------------------------------
# data and partitionings


def _frame(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    p = np.round(rng.random(n) * 20) / 20  # a grid of 21 values: many ties
    probs = rng.dirichlet([1.0, 2.0, 3.0], n)
    df = pd.DataFrame({
        "m": rng.choice(["a", "b", "c"], n),
        "p": p,
        "y": (rng.random(n) < p).astype(np.int64),
        "w": rng.integers(0, 4, n).astype(np.float64),
        "c": rng.integers(0, 3, n),
    })
    for k in range(3):
        df[f"p_{k}"] = probs[:, k]
    df = df.sort_values("p", kind="stable").reset_index(drop=True)
    return df


def _slice(frame: pd.DataFrame, bounds: tuple[int, int]) -> pd.DataFrame:
    return frame.iloc[bounds[0]:bounds[1]]


def partitioned(frame: pd.DataFrame, cuts: list[int]) -> dd.DataFrame:
    """``frame`` cut at the row positions ``cuts`` (empty partitions allowed)."""
    bounds = list(zip(cuts[:-1], cuts[1:], strict=True))
    return dd.from_map(_slice, [frame] * len(bounds), bounds, meta=frame.iloc[:0],
                       enforce_metadata=False)


DF = _frame()
N = len(DF)
#: A position from 137 on inside a run of tied values of the sorted p.
TIE = next(i for i in range(137, N) if DF["p"].iloc[i - 1] == DF["p"].iloc[i])

PARTITIONINGS = {
    "one": [0, N],
    "adversarial": [0, 0, 1, 50, 50, TIE, 250, N, N],
    "even": list(range(0, N + 1, 57)) + [N],
}


def test_the_partitionings_are_adversarial():
    assert DF["p"].iloc[TIE - 1] == DF["p"].iloc[TIE]  # a boundary inside a run of ties
    cuts = PARTITIONINGS["adversarial"]
    sizes = np.diff(cuts)
    assert (sizes == 0).sum() >= 2 and (sizes == 1).sum() == 1
    ddf = partitioned(DF, cuts)
    assert ddf.npartitions == len(cuts) - 1
    # the same rows (Dask reads the strings as Arrow strings: only the dtype differs)
    pd.testing.assert_frame_equal(ddf.compute(), DF, check_exact=True, check_dtype=False)


def test_import_calibr_does_not_import_dask():
    code = ("import sys, calibr; calibr.ece([0.2], [0]); calibr.summarise; "
            "assert 'dask' not in sys.modules, sorted(m for m in sys.modules if 'dask' in m)")
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------
# the metrics


PC = ["p_0", "p_1", "p_2"]

BINNED_CASES = [
    ("binary", {}),
    ("binary", {"bins": 7}),
    ("binary", {"bins": np.array([0.0, 0.3, 0.35, 0.9, 1.0])}),
    ("binary", {"bins": 5, "right": False}),
    ("binary", {"weights": True}),
    ("binary", {"binning": "equal-mass", "bins": 6}),  # gathered
    ("multi", {"type": "classwise"}),
    ("multi", {"type": "confidence", "bins": 4}),
    ("multi", {"type": "classwise", "weights": True, "bins": 3}),
    ("multi", {"type": "classwise", "binning": "equal-mass"}),  # gathered
    # the top-label form: the flat (predicted class, bin) cells merge as the bins do
    ("multi", {"type": "top-label"}),
    ("multi", {"type": "top-label", "bins": 4, "right": False, "weights": True}),
    ("binary", {"type": "top-label", "bins": 5}),  # p read as (1 - p, p)
    ("multi", {"type": "top-label", "binning": "equal-mass", "bins": 3}),  # gathered
]

KERNEL_CASES = (
    [("binary", {"estimator": e, "bandwidth": h}) for e in ("uq", "ul", "biased")
     for h in (0.2, "median")]
    + [("multi", {"estimator": e, "bandwidth": h, "type": t})
       for e in ("uq", "ul", "biased") for h in (0.3, "median")
       for t in ("canonical", "confidence", "classwise")]
    + [("binary", {"estimator": "biased", "weights": True}),
       ("binary", {"estimator": "uq", "weights": True}),
       ("multi", {"estimator": "biased", "type": "canonical", "weights": True})]
)


#: brier and log_loss: per-partition row sums, merged.
SCORE_CASES = [("binary", {}), ("binary", {"weights": True}), ("binary", {"eps": 0.05}),
               ("multi", {}), ("multi", {"weights": True, "eps": 1e-3})]


def _args(frame, kind: str, opts: dict):
    opts = dict(opts)
    if opts.pop("weights", False):
        opts["weights"] = frame["w"]
    if kind == "binary":
        return (frame["p"], frame["y"]), opts
    return (frame[PC], frame["c"]), {"classes": range(3), **opts}


def _close(a: float, b: float, exact: bool, rtol: float = MERGED_RTOL) -> bool:
    return a == b if exact else math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)


def _sorted_path(kind: str, opts: dict) -> bool:
    """Does skce() take the exact distributed path (docs/dask.md)?"""
    return (not opts.get("weights") and opts.get("estimator", "uq") in ("uq", "biased")
            and opts.get("bandwidth", 0.2) != "median"
            and (kind == "binary" or opts.get("type") == "confidence"))


@pytest.mark.parametrize("cuts", list(PARTITIONINGS), ids=list(PARTITIONINGS))
def test_every_metric_equals_the_pandas_path(client, cuts):
    ddf = partitioned(DF, PARTITIONINGS[cuts])
    lazy, want, exact, rtol = [], [], [], []
    for kind, opts in BINNED_CASES:
        (p, y), kw = _args(DF, kind, opts)
        (dp, dy), dkw = _args(ddf, kind, opts)
        gathered = opts.get("binning") == "equal-mass"
        for f in (calibr.ece, calibr.mce):
            want.append(f(p, y, **kw))
            lazy.append(f(dp, dy, **dkw))
            exact.append(gathered or cuts == "one")
            rtol.append(MERGED_RTOL)
    for kind, opts in KERNEL_CASES:
        (p, y), kw = _args(DF, kind, opts)
        (dp, dy), dkw = _args(ddf, kind, opts)
        want.append(calibr.skce(p, y, **kw))
        lazy.append(calibr.skce(dp, dy, **dkw))
        exact.append(not _sorted_path(kind, opts) or cuts == "one")
        rtol.append(SORTED_RTOL)
    for h in (0.2, "median"):
        for kind in ("binary", "multi"):
            (p, y), kw = _args(DF, kind, {})
            (dp, dy), dkw = _args(ddf, kind, {})
            want.append(calibr.mmce(p, y, bandwidth=h, **kw))
            lazy.append(calibr.mmce(dp, dy, bandwidth=h, **dkw))
            exact.append(h == "median" or cuts == "one")
            rtol.append(SORTED_RTOL)
    for kind, opts in SCORE_CASES:  # the row sums merged
        (p, y), kw = _args(DF, kind, opts)
        (dp, dy), dkw = _args(ddf, kind, opts)
        for f in (calibr.brier, calibr.log_loss):
            extra = {"eps": opts["eps"]} if "eps" in opts and f is calibr.log_loss else {}
            kw.pop("eps", None), dkw.pop("eps", None)
            want.append(f(p, y, **kw, **extra))
            lazy.append(f(dp, dy, **dkw, **extra))
            exact.append(cuts == "one")
            rtol.append(MERGED_RTOL)
    assert all(type(v).__name__ == "Delayed" for v in lazy)  # lazy, as Dask's convention
    got = dask.compute(*lazy)
    bad = [(i, g, w) for i, (g, w, e, r) in enumerate(zip(got, want, exact, rtol, strict=True))
           if not _close(g, w, e, r)]
    assert not bad
    # the merged sums are not a different algorithm: they move only the last bits
    assert sum(g != w for g, w in zip(got, want, strict=True)) <= len(want)


def test_a_dropped_partition_would_be_caught(client):
    """The comparison's tolerance is far below what losing a partition changes."""
    ddf = partitioned(DF, PARTITIONINGS["adversarial"])
    got = calibr.ece(ddf["p"], ddf["y"]).compute()
    assert not _close(got, calibr.ece(DF["p"].iloc[TIE:], DF["y"].iloc[TIE:]), False)
    assert _close(got, calibr.ece(DF["p"], DF["y"]), False)


def test_na_rm_with_a_partition_of_missing_rows(client):
    df = DF.copy()
    df.loc[50:TIE - 1, "p"] = np.nan  # partition 4 of "adversarial": every row missing
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    for f in (calibr.ece, calibr.mce, calibr.skce, calibr.mmce):
        assert _close(f(ddf["p"], ddf["y"], na_rm=True).compute(),
                      f(df["p"], df["y"], na_rm=True), False, SORTED_RTOL)
    assert (calibr.skce(ddf["p"], ddf["y"], "ul", na_rm=True).compute()
            == calibr.skce(df["p"], df["y"], "ul", na_rm=True))  # gathered: bit for bit
    with pytest.raises(calibr.InputError, match=r"`p` must not contain missing values; "
                       r"\d+ values are missing, the first at position 0\. .*\[Dask partition 4"):
        calibr.ece(ddf["p"], ddf["y"]).compute()


def test_errors_name_the_argument_and_the_partition(client):
    df = DF.copy()
    df.loc[TIE + 3, "p"] = 1.5
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    with pytest.raises(calibr.InputError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, "
                       r"the first at position 3 \(1\.5\)\. \[Dask partition 5; positions count"):
        calibr.ece(ddf["p"], ddf["y"]).compute()
    with pytest.raises(calibr.InputError, match=r"`p` must lie in \[0, 1\]; 1 value does not, "
                       rf"the first at position {TIE + 3} \(1\.5\)"):  # gathered: global
        calibr.skce(ddf["p"], ddf["y"], "ul").compute()
    with pytest.raises(calibr.InputError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, "
                       r"the first at position 3 \(1\.5\)\. \[Dask partition 5"):  # sorted
        calibr.skce(ddf["p"], ddf["y"]).compute()
    other = partitioned(DF, PARTITIONINGS["one"])
    with pytest.raises(calibr.InputError, match=r"^`y` must have the partitions of `p`"):
        calibr.ece(ddf["p"], other["y"])
    with pytest.raises(calibr.InputTypeError, match=r"^`y` must be a Dask Series when one"):
        calibr.mce(ddf["p"], DF["y"].to_numpy())
    with pytest.raises(calibr.InputTypeError, match=r"^`p` must be a Dask Series or DataFrame"):
        calibr.skce(DF["p"], ddf["y"])
    with pytest.raises(calibr.InputError, match=r"^`bins` must be a single positive integer"):
        calibr.ece(ddf["p"], ddf["y"], bins=2.5)  # options: checked at once, not lazily


def test_a_partition_whose_weights_are_all_zero_adds_nothing(client):
    """A partition whose kept weights are all 0 adds nothing to the merged sums (its
    error says so by ``code="zero_total"``, not by its wording); any other weights
    error of a partition stays an error; weights all 0 are refused on the merged
    total."""
    df = DF.copy()
    df.loc[50:TIE - 1, "w"] = 0.0  # partition 4 of "adversarial"
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    for f in (calibr.ece, calibr.mce, calibr.brier, calibr.log_loss):
        assert _close(f(ddf["p"], ddf["y"], weights=ddf["w"]).compute(),
                      f(df["p"], df["y"], weights=df["w"]), False)
    df.loc[50, "w"] = -1.0  # the same partition, with a negative weight
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    with pytest.raises(calibr.InputError, match=r"^`weights` must be nonnegative; 1 value does "
                       r"not, the first at position 0 \(-1\.0\)\. \[Dask partition 4"):
        calibr.ece(ddf["p"], ddf["y"], weights=ddf["w"]).compute()
    ddf = partitioned(df.assign(w=0.0), PARTITIONINGS["adversarial"])
    for f in (calibr.mce, calibr.brier):
        with pytest.raises(calibr.InputError, match=r"^`weights` must have a positive total; "
                           r"all the weights of the rows kept are 0\.$") as caught:
            f(ddf["p"], ddf["y"], weights=ddf["w"]).compute()
        assert (caught.value.param, caught.value.code) == ("weights", "zero_total")


def test_the_scores_merge_row_sums_and_count_impossible_rows_once(client):
    """brier and log_loss of Dask input: each partition's row sums (no task holds all
    the rows), merged; the log loss's rows of probability 0 for their outcome, in
    several partitions, give inf and one warning with their total count, as the
    pandas path; in summarise, one warning naming the groups, as pandas says it."""
    df = DF.copy()
    wrong = [0, 60, 300]  # partitions 2, 4 and 6 of "adversarial"
    df.loc[wrong, "p"] = 1.0 - df.loc[wrong, "y"]
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    lazy = calibr.log_loss(ddf["p"], ddf["y"])
    names = {str(k[0] if isinstance(k, tuple) else k).split("-")[0]
             for k in dict(lazy.__dask_graph__())}
    assert "_concat" not in names and "_gathered_metric" not in names
    assert "_loss_part" in names and "_finish_loss" in names
    with pytest.warns(UserWarning, match=r"^log_loss: 3 rows give their observed outcome "
                                         r"probability 0, so the log loss is inf"):
        assert lazy.compute(scheduler="synchronous") == math.inf
    assert calibr.log_loss(ddf["p"], ddf["y"], eps=0.01).compute() == pytest.approx(
        calibr.log_loss(df["p"], df["y"], eps=0.01), rel=MERGED_RTOL, abs=0)
    for data in (lambda d: d.groupby("m"), lambda d: d):
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = calibr.summarise(data(ddf.compute()), "p", "y",
                                    metrics=["log_loss", "brier"])
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = calibr.summarise(data(ddf), "p", "y", metrics=["log_loss", "brier"]
                                   ).compute(scheduler="synchronous")
        assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
        assert len(want_w) == 1 and "3 rows in" in str(want_w[0].message)
        pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=MERGED_RTOL, atol=0)


# --------------------------------------------------------------------------
# ecce: the global sort by the keys and the prefix scan


#: Rows in no order, p on a grid of 11 values (blocks of ties larger than a
#: partition after the sort), p = 0 and 1, and a matrix for the top-label form.
ECCE_DF = DF.sample(frac=1.0, random_state=3).reset_index(drop=True).assign(
    q=lambda d: np.round(d["p"] * 10) / 10)
ECCE_CASES = [("p", {}), ("q", {}), ("p", {"weights": True}), ("q", {"weights": True}),
              ("multi", {}), ("multi", {"weights": True})]


def _ecce_args(frame, col: str, opts: dict):
    kw = {"weights": frame["w"]} if opts.get("weights") else {}
    if col == "multi":
        return frame[PC], frame["c"], {"classes": range(3), **kw}
    return frame[col], frame["y"], kw


@pytest.mark.parametrize("cuts", list(PARTITIONINGS), ids=list(PARTITIONINGS))
def test_ecce_on_the_cluster_equals_the_pandas_path(client, cuts):
    """calibr.ecce of Dask input is lazy and computed on the cluster (no gather):
    both kinds and scales, ties, weights, the top-label form, empty and one-row
    partitions; bit for bit with one partition and no weights (the weighted pandas
    path leaves tied rows in numpy.argsort's order), else to rounding."""
    ddf = partitioned(ECCE_DF, PARTITIONINGS[cuts])
    lazy, want, exact = [], [], []
    for col, opts in ECCE_CASES:
        p, y, kw = _ecce_args(ECCE_DF, col, opts)
        dp, dy, dkw = _ecce_args(ddf, col, opts)
        for kind in ("ks", "kuiper"):
            for scale in ("probability", "sigma"):
                want.append(calibr.ecce(p, y, kind, scale=scale, **kw))
                lazy.append(calibr.ecce(dp, dy, kind, scale=scale, **dkw))
                exact.append(cuts == "one" and not opts.get("weights"))
    assert all(type(v).__name__ == "Delayed" for v in lazy)
    got = dask.compute(*lazy)
    bad = [(i, g, w) for i, (g, w, e) in enumerate(zip(got, want, exact, strict=True))
           if not _close(g, w, e, SCAN_RTOL)]
    assert not bad


def test_ecce_does_not_gather_the_rows(client):
    """The graph sorts and scans: no task holds all the rows (the gathered path's
    concatenation is absent), and the sort spreads the keys over the partitions."""
    ddf = partitioned(ECCE_DF, PARTITIONINGS["even"])
    lazy = calibr.ecce(ddf["p"], ddf["y"])
    names = {str(k[0] if isinstance(k, tuple) else k).split("-")[0]
             for k in dict(lazy.__dask_graph__())}
    assert "_concat" not in names and "_gathered_metric" not in names
    assert "_ecce_part_sums" in names and "_finish_ecce" in names


@pytest.mark.parametrize("seed", range(4))
def test_the_prefix_scan_reads_a_block_of_ties_once_across_partitions(seed):
    """_finish_ecce of the sorted keys cut anywhere (inside blocks of ties, a block
    over three pieces, empty pieces) is ecce's number to rounding: a partition's
    last block is read only where the next partition starts with another p."""
    from calibr._engines import dask as cdask
    from calibr._kernels.cumulative import fill_keys

    rng = np.random.default_rng(seed)
    n = 300
    p = np.round(rng.random(n) * 4) / 4  # 5 values: blocks of about 60 rows
    y = (rng.random(n) < p).astype(np.int64)
    w = rng.integers(0, 3, n).astype(np.float64)
    keys = np.empty(n, np.uint64)
    fill_keys(p, p.view(np.uint64), y, keys)
    order = np.argsort(keys, kind="stable")
    for weights in (None, w):
        frame = pd.DataFrame({"k": keys[order]} | ({} if weights is None
                                                   else {"w": weights[order]}))
        cuts = np.sort(np.concatenate([[0, n, 5, 5], rng.integers(0, n, 6)]))
        pieces = [frame.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        sums = [cdask._ecce_part_sums(piece) for piece in pieces]
        for kind in ("ks", "kuiper"):
            for scale in ("probability", "sigma"):
                got = cdask._finish_ecce(sums[::-1], kind, scale, False)  # any order
                want = calibr.ecce(p, y, kind, scale=scale, weights=weights)
                assert math.isclose(got, want, rel_tol=SCAN_RTOL), (kind, scale, got, want)


def test_ecce_refusals_on_dask(client):
    df = ECCE_DF.copy()
    df.loc[7, "p"] = 1.5
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    with pytest.raises(calibr.InputError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, "
                       r"the first at position 6 \(1\.5\)\. \[Dask partition 2"):
        calibr.ecce(ddf["p"], ddf["y"]).compute()
    zero = partitioned(ECCE_DF.assign(w=0.0), PARTITIONINGS["adversarial"])
    with pytest.raises(calibr.InputError, match=r"^`weights` must have a positive total"):
        calibr.ecce(zero["p"], zero["y"], weights=zero["w"]).compute()
    some = ECCE_DF.copy()
    some.loc[50:TIE - 1, "w"] = 0.0  # partition 4: every kept weight 0, which adds nothing
    sd = partitioned(some, PARTITIONINGS["adversarial"])
    assert _close(calibr.ecce(sd["p"], sd["y"], weights=sd["w"]).compute(),
                  calibr.ecce(some["p"], some["y"], weights=some["w"]), False, SCAN_RTOL)
    with pytest.raises(calibr.InputError, match=r"^`kind` must be"):
        calibr.ecce(ddf["p"], ddf["y"], "max")  # options: checked at once


# --------------------------------------------------------------------------
# summarise and calibration_table


def _same_frame(lazy, want: pd.DataFrame, exact: bool, exact_columns: tuple = ()) -> None:
    """The lazy frame computes to ``want`` (to ``MERGED_RTOL`` unless ``exact``; the
    ``exact_columns`` bit for bit in any case), with ``want``'s dtypes before it is
    computed."""
    assert isinstance(lazy, dd.DataFrame)
    assert dict(lazy.dtypes) == dict(want.dtypes)  # the lazy frame's meta is the result's
    got = lazy.compute()
    pd.testing.assert_frame_equal(got, want, check_exact=exact,
                                  **({} if exact else {"rtol": MERGED_RTOL, "atol": 0.0}))
    for col in exact_columns:
        assert got[col].equals(want[col]), col


SUMMARY_CASES = [
    ({"p": "p", "y": "y"}, {}),
    ({"p": "p", "y": "y", "metrics": ["ece", calibr.metric("mce", bins=3),
                                      calibr.metric("ece", bins=np.array([0, 0.5, 1.0]))]}, {}),
    ({"p": "p", "y": "y", "weights": "w"}, {}),
    ({"p_prefix": "p_", "y": "c", "metrics": ["ece", calibr.metric("mce", type="confidence")]},
     {}),
    ({"p_prefix": "p_", "y": "c", "metrics": [calibr.metric("ece", type="top-label"),
                                             calibr.metric("mce", type="top-label", bins=4)]},
     {}),
    ({"p": "p", "y": "y"}, {"sort": False}),
    ({"p": "p", "y": "y", "na_rm": True}, {"dropna": False}),
    # the scores' row sums, merged as the bins' sums, with groups and weights
    ({"p": "p", "y": "y", "metrics": ["brier", "ece", "log_loss"], "weights": "w"}, {}),
    ({"p_prefix": "p_", "y": "c", "metrics": [
        "log_loss", "brier", calibr.metric("log_loss", eps=1e-3)], "weights": "w"}, {}),
    ({"p": "p", "y": "y", "metrics": ["brier", "log_loss"], "na_rm": True},
     {"dropna": False}),
]

def _count(p, y, **_):
    return float(len(p))


#: summarise() cases with metrics computed group by group (buckets of groups: the
#: pandas path on each group's rows, bit for bit; the columns named second), or,
#: with tests, on all rows gathered to one worker.
GATHERED_SUMMARY_CASES = [
    ({"p": "p", "y": "y", "metrics": ["ece", "skce", "mmce"]}, ("skce", "mmce")),
    ({"p": "p", "y": "y", "metrics": {"s": calibr.metric("skce", estimator="ul",
                                                         bandwidth="median"), "n": _count}},
     ("s", "n")),
    ({"p_prefix": "p_", "y": "c", "metrics": [calibr.metric("skce", type="classwise")]},
     ("skce(type='classwise')",)),
    ({"p": "p", "y": "y", "metrics": calibr.metric("ece", binning="equal-mass")},
     ("ece(binning='equal-mass')",)),
    ({"p": "p", "y": "y", "metrics": ["ece", "skce"], "weights": "w"}, ("skce",)),
    ({"p": "p", "y": "y", "metrics": "ece", "tests": "spiegelhalter", "rng": 3},
     ("ece", "spiegelhalter_statistic", "spiegelhalter_pvalue")),
]


def _with_missing_keys(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["m"] = df["m"].astype(object)
    df.loc[::17, "m"] = None
    df.loc[TIE:TIE + 40, "p"] = np.nan
    return df


@pytest.mark.parametrize("cuts", ["one", "adversarial"])
def test_summarise_equals_the_pandas_path(client, cuts):
    for kwargs, group_opts in SUMMARY_CASES:
        df = _with_missing_keys(DF) if "dropna" in group_opts else DF
        ddf = partitioned(df, PARTITIONINGS[cuts])
        want = calibr.summarise(ddf.compute().groupby("m", **group_opts), **kwargs)
        _same_frame(calibr.summarise(ddf.groupby("m", **group_opts), **kwargs), want,
                    cuts == "one")
    ddf = partitioned(DF, PARTITIONINGS[cuts])
    _same_frame(calibr.summarise(ddf, p="p", y="y"),
                calibr.summarise(ddf.compute(), p="p", y="y"), cuts == "one")
    for kwargs, exact_columns in GATHERED_SUMMARY_CASES:
        want = calibr.summarise(ddf.compute().groupby("m"), **kwargs)
        _same_frame(calibr.summarise(ddf.groupby("m"), **kwargs), want, cuts == "one",
                    exact_columns)
    # ungrouped, with a kernel metric: gathered to one worker
    _same_frame(calibr.summarise(ddf, p="p", y="y", metrics=["ece", "skce"]),
                calibr.summarise(ddf.compute(), p="p", y="y", metrics=["ece", "skce"]), True)


def test_summarise_with_categorical_keys_and_unobserved_groups(client):
    df = DF.copy()
    df["m"] = pd.Categorical(df["m"], categories=["a", "b", "c", "z"])
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    for observed in (True, False):
        want = calibr.summarise(ddf.compute().groupby("m", observed=observed), p="p", y="y")
        _same_frame(calibr.summarise(ddf.groupby("m", observed=observed), p="p", y="y"), want,
                    False)
    assert want["ece"].isna().sum() == 1  # "z": NaN, as pandas' mean()


def test_summarise_errors_name_the_group(client):
    df = DF.copy()
    df.loc[df.index[df["m"] == "b"][5], "p"] = -0.5
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    with pytest.raises(calibr.InputError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, "
                       r".*\[group m='b'\] \[Dask partition"):
        calibr.summarise(ddf.groupby("m"), p="p", y="y").compute()
    df = DF.copy()
    df.loc[df["m"] == "c", "p"] = np.nan
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    with pytest.raises(calibr.InputError, match=r"no complete observations: na_rm=True dropped "
                       rf"all {(DF['m'] == 'c').sum()}\. \[group m='c'\]"):
        calibr.summarise(ddf.groupby("m"), p="p", y="y", na_rm=True).compute()
    with pytest.raises(calibr.InputError, match=r"`y` must name a column of the data"):
        calibr.summarise(ddf.groupby("m"), p="p", y="nope")  # at once: from the meta
    with pytest.raises(calibr.InputError, match=r"^`prob='p'` was taken as an output column "
                       r"named 'prob' .*; did you mean `p=`\?$"):
        calibr.summarise(ddf.groupby("m"), prob="p", y="y")  # at once, as in pandas
    # a group's error in the group-by-group path: the pandas path's message
    df = DF.copy()
    df.loc[TIE, "m"] = "z"  # a group of one row: too few for "uq"
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    with pytest.raises(calibr.InputError) as want:
        calibr.summarise(ddf.compute().groupby("m"), p="p", y="y", metrics="skce")
    assert str(want.value).endswith("[metric 'skce'; group m='z']")
    with pytest.raises(calibr.InputError, match="^" + re.escape(str(want.value)) + "$"):
        calibr.summarise(ddf.groupby("m"), p="p", y="y", metrics=["ece", "skce"]).compute()
    # two failing groups in two buckets: the error of the first in pandas' order
    df.loc[3, "m"] = "zb"  # early in the frame, late in pandas' (sorted) order
    df.loc[TIE + 5, "m"] = "t"  # first in pandas order, not in the first bucket
    from calibr._engines.dask import _stats_and_pieces, n_buckets
    from calibr._input.groups import resolve_columns

    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    _, *pieces = _stats_and_pieces(0, df, ["m"], True, resolve_columns(df, "p", "y", None, None),
                                   [], False, None, ["m", "p", "y"], {"m": df["m"].dtype},
                                   n_buckets(ddf.npartitions))
    where = {m: r for r, piece in enumerate(pieces) for m in set(piece["m"])}
    assert len({where["t"], where["z"], where["zb"]}) == 3  # three buckets,
    assert where["t"] > where["z"]  # and not the first of them that fails
    with pytest.raises(calibr.InputError) as want:
        calibr.summarise(ddf.compute().groupby("m"), p="p", y="y", metrics="skce")
    assert str(want.value).endswith("group m='t']")
    with pytest.raises(calibr.InputError, match="^" + re.escape(str(want.value)) + "$"):
        calibr.summarise(ddf.groupby("m"), p="p", y="y", metrics=["ece", "skce"]).compute()


TABLE_CASES = [
    {"p": "p", "y": "y"},
    {"p": "p", "y": "y", "bins": 4, "weights": "w"},
    {"p": PC, "y": "c", "classes": range(3)},
    {"p": PC, "y": "c", "classes": range(3), "type": "confidence", "right": False},
    {"p": PC, "y": "c", "classes": range(3), "type": "top-label", "bins": 4},
    {"p": "p", "y": "y", "type": "top-label", "weights": "w"},
]


@pytest.mark.parametrize("cuts", ["one", "adversarial"])
def test_calibration_table_equals_the_pandas_path(client, cuts):
    ddf = partitioned(DF, PARTITIONINGS[cuts])
    cdf = ddf.compute()
    for kwargs in TABLE_CASES:
        for data, cdata in ((ddf.groupby("m"), cdf.groupby("m")), (ddf, cdf)):
            _same_frame(calibr.calibration_table(data=data, **kwargs),
                        calibr.calibration_table(data=cdata, **kwargs), cuts == "one")
    # Series, not data=
    _same_frame(calibr.calibration_table(ddf[PC], ddf["c"], classes=range(3)),
                calibr.calibration_table(cdf[PC], cdf["c"], classes=range(3)), cuts == "one")
    # gathered: equal-mass bins and consistency bands
    for kwargs in ({"binning": "equal-mass"}, {"consistency": 0.9, "n_resamples": 20, "rng": 1}):
        _same_frame(calibr.calibration_table("p", "y", data=ddf.groupby("m"), **kwargs),
                    calibr.calibration_table("p", "y", data=cdf.groupby("m"), **kwargs), True)


def test_the_table_counts_are_exact(client):
    """n, observed_frequency and the Wilson bounds come from integer sums: bit for bit."""
    ddf = partitioned(DF, PARTITIONINGS["adversarial"])
    got = calibr.calibration_table("p", "y", data=ddf.groupby("m")).compute()
    want = calibr.calibration_table("p", "y", data=DF.groupby("m"))
    for col in ("bin", "n", "observed_frequency", "ci_lower", "ci_upper"):
        assert got[col].equals(want[col]), col


# --------------------------------------------------------------------------
# faults


def _slow_slice(frame: pd.DataFrame, bounds: tuple[int, int]) -> pd.DataFrame:
    time.sleep(0.25)  # reading a file, say
    return frame.iloc[bounds[0]:bounds[1]]


def test_a_worker_killed_mid_computation_is_recomputed(client):
    cuts = list(range(0, N + 1, 20))
    bounds = list(zip(cuts[:-1], cuts[1:], strict=True))
    ddf = dd.from_map(_slow_slice, [DF] * len(bounds), bounds, meta=DF.iloc[:0],
                      enforce_metadata=False)
    want = calibr.summarise(ddf.compute().groupby("m"), p="p", y="y")
    future = client.compute(calibr.summarise(ddf.groupby("m"), p="p", y="y"))
    deadline = time.monotonic() + 30
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # some partitions done, others running
    assert not future.done()
    victim = sorted(client.run(os.getpid).items())[0][1]
    os.kill(victim, signal.SIGKILL)
    got = future.result(timeout=120)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=MERGED_RTOL, atol=0.0)
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()  # the nanny started a new process


def _big_slice(frame: pd.DataFrame, bounds: tuple[int, int]) -> pd.DataFrame:
    """A partition far larger than the worker's memory limit, read in pieces."""
    pieces = []
    for _ in range(60):  # 60 x 32 MB
        pieces.append(np.ones(4_000_000))
        time.sleep(0.02)
    return frame.iloc[bounds[0]:bounds[1]].assign(pad=float(sum(a[0] for a in pieces)))


def test_a_partition_beyond_the_memory_limit_fails_clearly():
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1,
                                           dashboard_address=None, host="127.0.0.1",
                                           memory_limit="600MiB")
        with cluster, distributed.Client(cluster) as cl:
            meta = DF.iloc[:0].assign(pad=0.0)
            ddf = dd.from_map(_big_slice, [DF], [(0, N)], meta=meta, enforce_metadata=False)
            future = cl.compute(calibr.ece(ddf["p"], ddf["y"]))
            with pytest.raises(distributed.scheduler.KilledWorker):
                future.result(timeout=120)


# --------------------------------------------------------------------------
# the command line: a directory or glob of files is read with Dask


@pytest.fixture(scope="module")
def parquet_dir(tmp_path_factory):
    """A partitioned Parquet dataset (and the same rows in one file and in CSV parts)."""
    root = tmp_path_factory.mktemp("data")
    parts = root / "parts"
    parts.mkdir()
    frame = DF[["m", "p", "y", "w", "c", *PC]]
    for i, (a, b) in enumerate(zip([0, 1, TIE, 250], [1, TIE, 250, N], strict=True)):
        frame.iloc[a:b].to_parquet(parts / f"part-{i}.parquet")
        frame.iloc[a:b].to_csv(root / f"part-{i}.csv", index=False)
    (parts / "_SUCCESS").write_text("")
    frame.to_parquet(root / "all.parquet")
    return root


@pytest.fixture(scope="module")
def wide_parquet(tmp_path_factory):
    """Eight Parquet files with wide columns beside p and y: Dask reads a narrow
    column of them several files at a time (8 files, 3 partitions), so
    ``ddf["p"]`` and ``ddf["y"]`` optimised apart need not be cut alike."""
    root = tmp_path_factory.mktemp("wide")
    rng = np.random.default_rng(SEED + 1)
    frames = []
    for i in range(8):
        n = 50
        p = rng.random(n)
        frame = pd.DataFrame({"a": rng.random(n), "b": rng.random(n), "p": p,
                              "y": rng.random(n) < p, "w": rng.integers(0, 3, n) * 1.0})
        frame.to_parquet(root / f"part-{i}.parquet", index=False)
        frames.append(frame)
    return root, pd.concat(frames, ignore_index=True)


def test_columns_of_one_parquet_frame_are_paired_when_dask_combines_files(client,
                                                                          wide_parquet):
    root, df = wide_parquet
    ddf = dd.read_parquet(root)
    assert len(ddf["p"].to_delayed()) < ddf.npartitions  # Dask combines the files
    p, y, w = ddf["p"], ddf["y"], ddf["w"]
    assert calibr.ece(p, y).compute() == pytest.approx(calibr.ece(df["p"], df["y"]),
                                                        rel=MERGED_RTOL)
    assert calibr.mce(p, y, weights=w).compute() == pytest.approx(
        calibr.mce(df["p"], df["y"], weights=df["w"]), rel=MERGED_RTOL)
    for estimator in ("uq", "biased", "ul"):
        assert calibr.skce(p, y, estimator).compute() == pytest.approx(
            calibr.skce(df["p"], df["y"], estimator), rel=SORTED_RTOL)
    assert calibr.mmce(p, y).compute() == pytest.approx(calibr.mmce(df["p"], df["y"]),
                                                        rel=SORTED_RTOL)
    got = calibr.calibration_table(p, y, weights=w).compute()
    want = calibr.calibration_table(df["p"], df["y"], weights=df["w"])
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=MERGED_RTOL)


def _report(capsys, *argv: str) -> tuple[int, str, str]:
    from calibr.cli import main

    status = main(["report", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _body(text: str) -> list[str]:
    """The table output after the line that names the input and the engine's line."""
    return [line for line in text.splitlines()[1:] if not line.startswith("engine: ")]


def _engine_line(text: str) -> str:
    """The header line that says where Dask computed the report (the second line)."""
    line = text.splitlines()[1]
    assert line.startswith("engine: "), text
    return line


@pytest.mark.parametrize("options", [
    ["--by", "m"],
    ["--by", "m", "--metrics", "ece,mce(bins=4),ece(bins=3)", "--weights", "w"],
    ["--by", "m", "--per-bin", "--bins", "5"],
    ["--prob-prefix", "p_", "--label", "c", "--type", "confidence", "--by", "m"],
    ["--metrics", "ece,skce,mmce"],
])
def test_report_of_a_directory_equals_the_report_of_one_file(client, parquet_dir, capsys,
                                                              options):
    address = ["--scheduler", client.scheduler.address]
    status, out, err = _report(capsys, str(parquet_dir / "parts"), *address, *options)
    assert status == 0, err
    status, want, _ = _report(capsys, str(parquet_dir / "all.parquet"), *options)
    assert status == 0
    assert out.splitlines()[0].endswith(str(parquet_dir / "parts"))
    assert _engine_line(out) == f"engine: dask, the scheduler at {address[1]} (--scheduler)"
    assert not want.splitlines()[1].startswith("engine: ")  # one file: pandas
    assert _body(out) == _body(want)  # printed at 6 digits: merged sums agree


def _no_cluster(monkeypatch):
    """Make starting a local cluster, or a client of one, fail the test. Subclasses,
    not functions: Dask's scheduler lookup calls ``distributed.Client.current()``
    (a function in its place failed the tests that ran first, before a fixture
    had started a real client)."""
    class RefusedCluster(distributed.LocalCluster):
        def __init__(self, *args, **kwargs):
            raise AssertionError("a Dask cluster was started")

    class RefusedClient(distributed.Client):
        def __init__(self, *args, **kwargs):
            raise AssertionError("a Dask client was started")

    monkeypatch.setattr(distributed, "LocalCluster", RefusedCluster)
    monkeypatch.setattr(distributed, "Client", RefusedClient)


@pytest.mark.parametrize("options", [["--by", "m"], ["--by", "m", "--per-bin"],
                                     ["--test", "skce", "--by", "m"]])
def test_a_directory_is_computed_in_this_process_without_a_cluster(parquet_dir, capsys,
                                                                    monkeypatch, options):
    """No local cluster to start (seconds of worker processes): Dask's threads in
    this process, said in the header; the report of one file with the same rows."""
    from dask.system import CPU_COUNT

    _no_cluster(monkeypatch)
    for files in ("parts", "part-*.csv"):
        status, out, err = _report(capsys, str(parquet_dir / files), *options)
        assert status == 0, err
        _, want, _ = _report(capsys, str(parquet_dir / "all.parquet"), *options)
        assert _engine_line(out) == (f"engine: dask, {CPU_COUNT} threads in this process "
                                     "(no cluster)")
        assert _body(out) == _body(want)
    status, out, err = _report(capsys, str(parquet_dir / "parts"), "--by", "m", "-f", "csv")
    assert status == 0 and "engine" not in out  # the rows only


def test_the_engine_follows_the_size_of_the_files(parquet_dir, monkeypatch):
    """A local cluster when the files take more than MEMORY_SHARE of the available
    memory, threads in this process up to it, --scheduler whatever the size."""
    from calibr.cli import _engine

    files = sorted(str(f) for f in (parquet_dir / "parts").glob("*.parquet"))
    size = sum(os.path.getsize(f) for f in files)
    assert _engine.MEMORY_SHARE == 0.25
    assert _engine.available_memory() > 0
    for available, kind in ((4 * size, "threads"), (4 * size - 1, "cluster"), (None, "threads")):
        monkeypatch.setattr(_engine, "available_memory", lambda a=available: a)
        engine = _engine.choose(files, None)
        assert (engine.kind, engine.size, engine.available) == (kind, size, available)
        assert _engine.choose(files, "tcp://x:1").kind == "scheduler"


def test_files_beyond_the_memory_share_are_computed_on_a_local_cluster(parquet_dir, capsys,
                                                                       monkeypatch):
    from calibr.cli import _engine

    size = sum(os.path.getsize(f) for f in (parquet_dir / "parts").glob("*.parquet"))
    monkeypatch.setattr(_engine, "available_memory", lambda: 2 * size)
    status, out, err = _report(capsys, str(parquet_dir / "parts"), "--by", "m")
    assert status == 0, err
    _, want, _ = _report(capsys, str(parquet_dir / "all.parquet"), "--by", "m")
    assert re.fullmatch(r"engine: dask, a local cluster of [1-9]\d* worker processes \(the files, "
                        rf"{size / 1000:.1f} KB on disk, are more than 25% of the "
                        rf"{2 * size / 1000:.1f} KB of available memory\)", _engine_line(out))
    assert _body(out) == _body(want)


def test_the_sizes_in_the_engine_line_change_unit_at_1000():
    """Bytes below 1000, then KB, MB, GB with one decimal; GB is the last unit."""
    from calibr.cli._engine import _size

    assert [_size(n) for n in (None, 0, 999, 1000, 1_500_000, 2_000_000_000, 5 * 10**12)] == [
        "0 bytes", "0 bytes", "999 bytes", "1.0 KB", "1.5 MB", "2.0 GB", "5000.0 GB"]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:  # a port nothing listens on once it is closed
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_scheduler_is_an_input_error(parquet_dir, capsys, monkeypatch):
    from calibr.cli import _engine

    assert _engine.SCHEDULER_TIMEOUT == 10  # the documented wait (docs/cli.md)
    monkeypatch.setattr(_engine, "SCHEDULER_TIMEOUT", 1)  # distributed retries until then
    address = f"tcp://127.0.0.1:{_free_port()}"
    status, out, err = _report(capsys, str(parquet_dir / "parts"), "--scheduler", address)
    assert (status, out) == (2, "")
    assert err == (f"calibr: error: --scheduler: could not reach the Dask scheduler at {address} "
                   "within 1 s: is it running?\n")
    status, out, err = _report(capsys, str(parquet_dir / "parts"), "--scheduler", "nowhere")
    assert (status, out) == (2, "")
    assert err == ("calibr: error: --scheduler nowhere: not the address of a Dask scheduler "
                   "(missing port number in address 'nowhere'); write e.g. "
                   "tcp://scheduler-host:8786.\n")


@pytest.mark.parametrize("options", [
    ("--test", "skce", "--seed", "5"),
    ("--confidence-level", "0.9", "--n-resamples", "99", "--seed", "3", "--by", "m"),
    ("--prob-prefix", "p_", "--label", "c", "--renormalize", "--test", "spiegelhalter"),
], ids=["test", "ci", "renormalize"])
def test_report_of_a_directory_with_tests_intervals_renormalize(client, parquet_dir, capsys,
                                                                 options):
    """Gathered to the client, then the pandas path: the report of one file
    holding the same rows, digit for digit (the same rows in the same order, so
    the same random numbers)."""
    if "--renormalize" in options:  # spiegelhalter is for binary outcomes only
        options = tuple(o for o in options if o not in ("--test", "spiegelhalter"))
    address = ["--scheduler", client.scheduler.address]
    status, out, err = _report(capsys, str(parquet_dir / "parts"), *address, *options)
    assert status == 0, err
    status, want, err = _report(capsys, str(parquet_dir / "all.parquet"), *options)
    assert status == 0, err
    assert _body(out) == _body(want)
    assert len(_body(out)) >= 2


def test_report_plot_of_a_directory_draws_what_the_pandas_path_draws(client, tmp_path,
                                                                      capsys, monkeypatch):
    """--plot of a directory: for five classes without --type the top label (as the
    pandas path), beside the classwise --per-bin table that is printed."""
    import calibr.plot

    require("matplotlib")
    rng = np.random.default_rng(SEED + 2)
    k = 5
    frame = pd.DataFrame(rng.dirichlet(np.ones(k), 300), columns=[f"q_{j}" for j in range(k)])
    frame["c"] = rng.integers(0, k, 300)
    frame["m"] = rng.choice(["a", "b"], 300)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, (a, b) in enumerate(((0, 1), (1, 140), (140, 300))):
        frame.iloc[a:b].to_parquet(parts / f"part-{i}.parquet")
    frame.to_parquet(tmp_path / "all.parquet")
    seen = []
    monkeypatch.setattr(calibr.plot, "reliability_diagram",
                        lambda table, **kw: seen.append((table, kw)) or FakeFigure())
    address = ["--scheduler", client.scheduler.address]
    common = ["--prob-prefix", "q_", "--label", "c", "--by", "m", "--plot"]
    for options in ([], ["--per-bin"]):
        status, out, err = _report(capsys, str(parts), *address, *options, *common,
                                   str(tmp_path / "d.png"))
        assert status == 0, err
        status, want, err = _report(capsys, str(tmp_path / "all.parquet"), *options, *common,
                                    str(tmp_path / "f.png"))
        assert status == 0, err
        assert _body(out) == _body(want)
        (got, got_kw), (ref, ref_kw) = seen[-2:]
        assert list(got.columns) == ["m", *calibr.table.TABLE_COLUMNS]  # no class column
        pd.testing.assert_frame_equal(got.astype({"m": object}), ref.astype({"m": object}),
                                      check_exact=False, rtol=MERGED_RTOL)  # Dask's strings
        assert got_kw == ref_kw and got_kw["ece_label"] == "confidence ECE"
    assert "class" in out  # the printed --per-bin table is classwise


class FakeFigure:
    def savefig(self, buf, format):  # noqa: A002 - matplotlib's name
        buf.write(b"fake " + format.encode())


def test_a_worker_that_dies_is_an_error_of_the_environment(client, parquet_dir, capsys,
                                                           monkeypatch):
    """KilledWorker (a worker over its memory limit: see
    test_a_partition_beyond_the_memory_limit_fails_clearly) is exit 2, as out of memory
    in this process is, not a bug in calibr."""
    from types import SimpleNamespace

    def killed(*args, **kwargs):
        worker = SimpleNamespace(address="tcp://127.0.0.1:1")  # a WorkerState's address
        raise distributed.scheduler.KilledWorker(("read_parquet", 0), worker, 3)

    monkeypatch.setattr(dask, "compute", killed)
    status, out, err = _report(capsys, str(parquet_dir / "parts"), "--by", "m",
                               "--scheduler", client.scheduler.address)
    assert (status, out) == (2, "")
    assert err == ("calibr: error: a Dask worker died while computing the report (distributed's "
                   "KilledWorker), e.g. out of memory; use smaller files, or a cluster with more "
                   "memory per worker (--scheduler).\n")


def test_report_of_a_directory_refuses_bad_input(client, parquet_dir, capsys):
    address = ["--scheduler", client.scheduler.address]
    status, _, err = _report(capsys, str(parquet_dir / "nothing-*.parquet"))
    assert status == 2 and "no files match" in err
    status, _, err = _report(capsys, str(parquet_dir / "parts"), "--sep", ";")
    assert (status, err) == (2, "calibr: error: --sep applies to CSV input; FILE holds Parquet "
                                "files.\n")
    status, _, err = _report(capsys, str(parquet_dir / "parts"), *address, "--label", "nope")
    assert status == 2 and "--label: no column 'nope'" in err


def test_summarise_by_two_keys_with_missing_keys_group_by_group(client):
    df = _with_missing_keys(DF)
    ddf = partitioned(df, PARTITIONINGS["adversarial"])
    kwargs = {"p": "p", "y": "y", "metrics": ["ece", "skce", "mmce"], "na_rm": True}
    for opts in ({"dropna": False}, {"dropna": True, "sort": False}):
        want = calibr.summarise(ddf.compute().groupby(["m", "c"], **opts), **kwargs)
        _same_frame(calibr.summarise(ddf.groupby(["m", "c"], **opts), **kwargs), want, False,
                    ("skce", "mmce"))
    assert want["m"].isna().sum() == 0 and len(want) == 9
