"""The grouped kernels (calibr._kernels.grouped): every group of a summary or a
per-bin table in one pass, each value the bits of the metric called on the group.

Two kinds of checks:

* the verbs: ``summarise()`` and ``calibration_table()`` over random groupings
  (many small groups, a few large ones, groups of 1 and 2 rows, groups above
  the threaded threshold, unobserved groups with ``observed=False``, ``na_rm``)
  equal the per-group calls of every metric, form, estimator and bandwidth
  kind, with ``==``;
* the kernels: their per-group sums, estimates and medians equal a readable
  oracle (a loop over the groups calling ``tests/oracles``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.binned import binary_stats_oracle, classwise_stats_oracle, top_label_oracle
from oracles.skce import median_oracle, skce_oracle
from tolerances import ORACLE_ATOL, ORACLE_RTOL, SKCE_ATOL, SKCE_RTOL

import calibr
from calibr._kernels import binned, canonical, grouped
from calibr.frame import metric, summarise

ESTIMATORS = ("uq", "ul", "biased")
BANDWIDTHS = (0.3, "median")


# --------------------------------------------------------------------------
# data: random groupings


def sizes_of(rng, small=60, large=(700,), tiny=True):
    """Group sizes: ``small`` groups of 3..40 rows, the ``large`` ones, and (with
    ``tiny``) groups of 1 and 2 rows."""
    sizes = list(rng.integers(3, 41, small)) + list(large)
    if tiny:
        sizes += [1, 2, 1, 2]
    return np.array(sizes)


def frame_of(rng, sizes, k=None, ties=0.1, categories=0):
    """Rows of groups of the given sizes, interleaved at random; ``k`` classes
    (None: binary); ``ties``: the share of rows set to a repeated value;
    ``categories``: extra unobserved categories of the key."""
    g = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    n = g.shape[0]
    names = [f"g{i:03d}" for i in range(len(sizes) + categories)]
    key = pd.Categorical(np.array(names)[g], categories=names)
    if k is None:
        p = rng.random(n)
        p[rng.random(n) < ties] = 0.5
        df = pd.DataFrame({"g": key, "p": p, "y": (rng.random(n) < p).astype(np.int64)})
        return df
    p = rng.dirichlet(np.ones(k), n)
    p[rng.random(n) < ties] = np.eye(k)[1]
    df = pd.DataFrame(p, columns=[f"p_{c}" for c in range(k)])
    df.insert(0, "y", rng.integers(0, k, n))
    df.insert(0, "g", key)
    return df


def pcols(df):
    cols = [c for c in df.columns if str(c).startswith("p_")]
    return cols if cols else "p"


def per_group(df, gb, specs, kw=None):
    """The reference: each metric called on each observed group's rows."""
    kw = kw or {}
    cols = pcols(df)
    out = []
    for _, sub in gb:
        if len(sub) == 0:
            out.append([np.nan] * len(specs))
            continue
        row = []
        for spec in specs.values():
            func = getattr(calibr, spec.func)
            row.append(func(sub[cols], sub["y"], **spec.options, **kw))
        out.append(row)
    return np.array(out, dtype=np.float64)


def assert_equal_to_per_group(df, specs, observed=True, na_rm=False):
    gb = df.groupby("g", observed=observed)
    cols = pcols(df)
    kw = {} if isinstance(cols, str) else {"classes": range(len(cols))}
    got = summarise(gb, cols, "y", metrics=specs, na_rm=na_rm, **kw)
    want = per_group(df, gb, specs, {"na_rm": na_rm, **kw})
    values = got[list(specs)].to_numpy()
    same = (values == want) | (np.isnan(values) & np.isnan(want))
    assert same.all(), {name: np.flatnonzero(~same[:, j]).tolist()
                        for j, name in enumerate(specs) if not same[:, j].all()}
    return got


# --------------------------------------------------------------------------
# numpy reduces each row of a (groups, bins) array as it reduces the row alone


@pytest.mark.parametrize("bins", [1, 2, 3, 7, 8, 9, 10, 15, 16, 17, 31, 100, 127, 128, 129,
                                  1000, 4096, 9000, 20_000])
def test_row_reductions_equal_reductions_of_each_row(bins):
    rng = np.random.default_rng(bins)
    groups = 7
    a = rng.random((groups, bins)) * rng.choice([1e-3, 1.0, 1e3], (groups, bins))
    for g in range(groups):
        assert np.sum(a, axis=-1)[g] == np.sum(a[g])
        assert np.mean(a, axis=-1)[g] == np.mean(a[g])
    c = rng.random((groups, 3, bins))
    per = np.sum(c, axis=-1)
    for g in range(groups):
        assert np.array_equal(per[g], np.sum(c[g], axis=-1))
        assert np.mean(per, axis=-1)[g] == np.mean(np.sum(c[g], axis=-1))
        # classwise SKCE: the mean of a list of per-class values
        assert np.mean(per, axis=-1)[g] == np.mean([float(v) for v in per[g]])


@pytest.mark.parametrize("classwise", [False, True])
@pytest.mark.parametrize("bins", [1, 2, 10, 33, 1000])
def test_ece_mce_of_all_groups_equal_the_per_call_reductions(classwise, bins):
    rng = np.random.default_rng(bins + classwise)
    shape = (25, 4, bins) if classwise else (25, bins)
    count = rng.integers(0, 4, shape).astype(np.float64)
    count[..., rng.integers(0, bins)] += 1.0  # every class of a group has rows ...
    count[3] = 0.0  # ... but in a group without rows
    conf = count * rng.random(shape)
    hit = np.floor(count * rng.random(shape))
    ece, mce = grouped.ece_mce(count, conf, hit)
    for g in range(shape[0]):
        if g == 3:
            assert np.isnan(ece[g]) and np.isnan(mce[g])
            continue
        assert ece[g] == binned.ece_from_stats(count[g], conf[g], hit[g])
        assert mce[g] == binned.mce_from_stats(count[g], conf[g], hit[g])


# --------------------------------------------------------------------------
# the group layer: a stable counting sort


def test_by_group_is_the_stable_sort_by_group():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 50, 1000)
    start = np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=53))])
    order = np.argsort(ids, kind="stable")
    for a in (rng.random(1000), rng.integers(0, 2, 1000).astype(np.uint8), rng.random((1000, 3)),
              np.arange(1000)):
        got = grouped.by_group(a, ids, start)
        assert got.dtype == a.dtype and np.array_equal(got, a[order])
    assert np.array_equal(grouped.by_group(ids, ids, start), np.sort(ids))
    ordered = np.sort(ids)
    a = rng.random(1000)
    assert grouped.by_group(a, ordered, start) is a  # already sorted: no copy


def test_group_splits_cover_every_group_once(monkeypatch):
    rng = np.random.default_rng(2)
    start = np.concatenate([[0], np.cumsum(rng.integers(0, 9, 400))])
    monkeypatch.setattr(binned, "PARALLEL_MIN_N", 10)
    monkeypatch.setattr(grouped, "num_threads", lambda: 2)
    for g0, g1 in [(0, 400), (0, 1), (17, 230), (399, 400)]:
        parts = grouped._group_splits(start, g0, g1)
        covered = [g for a, b in parts for g in range(a, b)]
        assert covered == list(range(g0, g1))
    assert len(grouped._group_splits(start)) > 1


# --------------------------------------------------------------------------
# summarise() == per-group calls: binned metrics


@pytest.mark.parametrize("bins", [1, 2, 10, 17])
def test_binary_binned_equal_per_group_calls(bins):
    rng = np.random.default_rng(10 + bins)
    df = frame_of(rng, sizes_of(rng), categories=3)
    specs = {"e": metric("ece", bins=bins), "m": metric("mce", bins=bins)}
    for observed in (True, False):
        assert_equal_to_per_group(df, specs, observed=observed)


@pytest.mark.parametrize("type_", ["classwise", "confidence"])
@pytest.mark.parametrize("bins", [1, 3, 10])
def test_multiclass_binned_equal_per_group_calls(type_, bins):
    rng = np.random.default_rng(20 + bins)
    df = frame_of(rng, sizes_of(rng), k=4, categories=2)
    specs = {"e": metric("ece", bins=bins, type=type_), "m": metric("mce", bins=bins, type=type_)}
    for observed in (True, False):
        assert_equal_to_per_group(df, specs, observed=observed)


def test_binned_groups_above_the_threaded_threshold():
    """Groups of at least binned.PARALLEL_MIN_N rows take the per-call kernel's
    chunks; the others the one-pass kernel, in the same call."""
    rng = np.random.default_rng(30)
    big = binned.PARALLEL_MIN_N
    sizes = sizes_of(rng, small=20, large=(big + 3, big), tiny=True)
    df = frame_of(rng, sizes, ties=0.0)
    specs = {"e": metric("ece"), "m": metric("mce", bins=7)}
    assert_equal_to_per_group(df, specs)


@pytest.mark.parametrize("k", [None, 3])
def test_threaded_splits_and_large_groups_with_a_low_threshold(monkeypatch, k):
    """With the threshold lowered, small data takes every threaded path: the
    groups split among threads, and the per-call chunks of 'large' groups."""
    monkeypatch.setattr(binned, "PARALLEL_MIN_N", 64)
    rng = np.random.default_rng(31)
    df = frame_of(rng, sizes_of(rng, small=80, large=(300, 65, 64, 63)), k=k)
    specs = {"e": metric("ece"), "m": metric("mce", bins=4)}
    if k is not None:
        specs["c"] = metric("ece", type="confidence")
        specs["s"] = metric("skce", type="classwise", estimator="biased")
    else:
        specs["s"] = metric("skce", estimator="biased", bandwidth=0.4)
    got = assert_equal_to_per_group(df, specs)
    monkeypatch.setattr(grouped, "num_threads", lambda: 1)
    one = summarise(df.groupby("g"), pcols(df), "y", metrics=specs,
                    **({} if k is None else {"classes": range(k)}))
    pd.testing.assert_frame_equal(got, one, check_exact=True)


def test_binned_with_na_rm():
    rng = np.random.default_rng(32)
    df = frame_of(rng, sizes_of(rng, tiny=False))
    df.loc[rng.choice(len(df), 40, replace=False), "p"] = np.nan
    df.loc[rng.choice(len(df), 10, replace=False), "y"] = np.nan
    specs = {"e": metric("ece"), "m": metric("mce"), "s": metric("skce"), "mm": metric("mmce")}
    assert_equal_to_per_group(df, specs, na_rm=True)


# --------------------------------------------------------------------------
# summarise() == per-group calls: kernel metrics


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("bandwidth", BANDWIDTHS)
def test_binary_skce_mmce_equal_per_group_calls(estimator, bandwidth):
    rng = np.random.default_rng(40)
    # groups of 2 rows and up (uq and ul need 2); distinct values (the median needs them)
    df = frame_of(rng, sizes_of(rng, large=(700, 1500), tiny=False), ties=0.05, categories=2)
    df = pd.concat([df, pd.DataFrame({"g": pd.Categorical(["two"] * 2), "p": [0.2, 0.7],
                                      "y": [0, 1]})], ignore_index=True)
    df["g"] = df["g"].astype("category")
    specs = {"s": metric("skce", estimator=estimator, bandwidth=bandwidth)}
    if estimator == "biased":
        specs["m"] = metric("mmce", bandwidth=bandwidth)
    for observed in (True, False):
        assert_equal_to_per_group(df, specs, observed=observed)


@pytest.mark.parametrize("type_", ["canonical", "confidence", "classwise"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("bandwidth", BANDWIDTHS)
def test_multiclass_skce_equal_per_group_calls(type_, estimator, bandwidth):
    rng = np.random.default_rng(50)
    # 512 rows: the canonical kernels' one work chunk; 513: two (the per-call path)
    large = (512, 513) if type_ == "canonical" else (700,)
    df = frame_of(rng, sizes_of(rng, small=40, large=large, tiny=False), k=3, ties=0.05,
                  categories=1)
    specs = {"s": metric("skce", estimator=estimator, bandwidth=bandwidth, type=type_)}
    if type_ == "confidence" and estimator == "biased":
        specs["m"] = metric("mmce", bandwidth=bandwidth)
    for observed in (True, False):
        assert_equal_to_per_group(df, specs, observed=observed)


def test_biased_estimators_accept_groups_of_one_row():
    rng = np.random.default_rng(60)
    df = frame_of(rng, sizes_of(rng, small=30))
    specs = {"b": metric("skce", estimator="biased"), "m": metric("mmce"),
             "e": metric("ece")}
    assert_equal_to_per_group(df, specs)
    mc = frame_of(rng, sizes_of(rng, small=30), k=3)
    specs = {t: metric("skce", estimator="biased", type=t)
             for t in ("canonical", "confidence", "classwise")}
    assert_equal_to_per_group(mc, specs)


def test_scalar_skce_group_above_the_threaded_threshold():
    rng = np.random.default_rng(61)
    df = frame_of(rng, sizes_of(rng, small=10, large=(binned.PARALLEL_MIN_N + 1,), tiny=False))
    assert_equal_to_per_group(df, {"s": metric("skce"), "m": metric("mmce", bandwidth=0.05)})


def test_the_metric_functions_themselves_take_the_grouped_path(monkeypatch):
    """calibr.ece (the function, not its name) is computed for all groups at once;
    any other callable is called once per observed group."""
    rng = np.random.default_rng(62)
    df = frame_of(rng, sizes_of(rng, small=20, tiny=False), categories=2)
    calls = []

    def count(p, y, **kw):
        calls.append(len(p))
        return float(len(p))

    gb = df.groupby("g", observed=False)
    got = summarise(gb, "p", "y", metrics={"n": count, "e": calibr.ece, "s": calibr.skce})
    ref = summarise(gb, "p", "y", metrics={"n": count, "e": "ece", "s": "skce"})
    pd.testing.assert_frame_equal(got, ref, check_exact=True)
    sizes = gb.size().to_numpy()
    assert calls == [s for s in sizes if s > 0] * 2
    assert np.array_equal(got["n"].to_numpy(), np.where(sizes > 0, sizes, np.nan),
                          equal_nan=True)


# --------------------------------------------------------------------------
# errors still name the group (and the metric), as the per-group loop does


def test_errors_name_the_group_and_the_metric():
    df = pd.DataFrame({"g": ["a", "a", "b", "c", "c"], "p": [0.1, 0.2, 0.3, 0.4, 0.4],
                       "y": [0, 1, 1, 0, 1]})
    gb = df.groupby("g")
    with pytest.raises(ValueError, match=r'^`estimator = "uq"` needs at least 2 observations; '
                       r"got 1\. \[metric 'skce'; group g='b'\]$"):
        summarise(gb, "p", "y", metrics=["ece", "skce"])
    with pytest.raises(ValueError, match=r'^`estimator = "ul"` needs at least 2 observations; '
                       r"got 1\. \[metric 'u'; group g='b'\]$"):
        summarise(gb, "p", "y", u=metric("skce", estimator="ul"))
    with pytest.raises(ValueError, match=r'^`bandwidth = "median"` needs at least two distinct '
                       r"predictions; all pairwise distances are 0\. \[metric 'm'; group "
                       r"g='b'\]$"):
        summarise(gb, "p", "y", m=metric("mmce", bandwidth="median"))
    two = df[df["g"] != "b"]
    with pytest.raises(ValueError, match=r'^`bandwidth = "median"` needs at least two distinct '
                       r"predictions; all pairwise distances are 0\. \[metric 'm'; group "
                       r"g='c'\]$"):
        summarise(two.groupby("g"), "p", "y", m=metric("skce", bandwidth="median"))
    with pytest.raises(ValueError, match=r"^`bins` must be a single positive integer; got 2\.5\. "
                       r"\[metric 'e'; group g='a'\]$"):
        summarise(gb, "p", "y", e=metric("ece", bins=2.5))
    with pytest.raises(ValueError, match=r"^`bandwidth` must be a positive finite number or "
                       r'"median"; got -1\. \[metric \'s\'; group g=\'a\'\]$'):
        summarise(gb, "p", "y", s=metric("skce", bandwidth=-1))
    with pytest.raises(ValueError, match=r"^`type` must be one of .*; got 'top'\. \[metric 'e'; "
                       r"group g='a'\]$"):
        summarise(gb, "p", "y", e=metric("ece", type="top"))


def test_first_failing_group_and_metric_win_as_in_the_per_group_loop():
    """A callable failing in an earlier group is raised before a named metric that
    fails in a later one, and the first failing metric of a group before the next."""
    df = pd.DataFrame({"g": ["a", "a", "b", "c", "c"], "p": [0.1, 0.2, 0.3, 0.4, 0.5],
                       "y": [0, 1, 1, 0, 1]})

    def fails_on_a(p, y):
        if len(p) == 2 and p[0] == 0.1:
            raise ValueError("not for a")
        return 0.0

    with pytest.raises(ValueError, match=r"^not for a \[metric 'f'; group g='a'\]$"):
        summarise(df.groupby("g"), "p", "y", s="skce", f=fails_on_a)
    with pytest.raises(ValueError, match=r"needs at least 2 observations; got 1\. \[metric "
                       r"'s'; group g='b'\]$"):
        summarise(df.groupby("g"), "p", "y", e="ece", s="skce", u=metric("skce", estimator="ul"))


def test_a_group_emptied_by_na_rm_is_an_error_naming_it():
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "p": [0.2, 0.3, np.nan, np.nan],
                       "y": [0, 1, 1, 0]})
    for verb in (lambda d: summarise(d, "p", "y", na_rm=True),
                 lambda d: calibr.calibration_table("p", "y", data=d, na_rm=True)):
        with pytest.raises(ValueError, match=r"no complete observations: na_rm=True dropped all "
                           r"2\. \[group g='b'\]$"):
            verb(df.groupby("g"))


# --------------------------------------------------------------------------
# calibration_table() over groups == the per-group tables, stacked


def per_group_tables(df, gb, **kw):
    cols = pcols(df)
    extra = {} if isinstance(cols, str) else {"classes": range(len(cols))}
    keys = list(gb.keys) if isinstance(gb.keys, list) else [gb.keys]
    parts = []
    for key, sub in gb:
        if len(sub) == 0:
            continue
        tab = calibr.calibration_table(sub[cols], sub["y"], **kw, **extra)
        key = key if isinstance(key, tuple) else (key,)
        for name, value in zip(keys, key, strict=True):
            tab.insert(0, name, value)
        parts.append(tab)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("k,type_", [(None, "classwise"), (4, "classwise"), (4, "confidence")])
@pytest.mark.parametrize("bins", [1, 5, 10])
def test_grouped_table_equals_the_per_group_tables(k, type_, bins, monkeypatch):
    rng = np.random.default_rng(70 + bins)
    df = frame_of(rng, sizes_of(rng, small=40), k=k, categories=2)
    gb = df.groupby("g", observed=False)
    cols = pcols(df)
    extra = {} if k is None else {"classes": range(k)}
    got = calibr.calibration_table(cols, "y", bins=bins, type=type_, data=gb, **extra)
    want = per_group_tables(df, gb, bins=bins, type=type_)
    got["g"] = got["g"].astype(str)
    want["g"] = want["g"].astype(str)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # the threaded splits and the per-call chunks of large groups (for both sides)
    monkeypatch.setattr(binned, "PARALLEL_MIN_N", 50)
    got = calibr.calibration_table(cols, "y", bins=bins, type=type_, data=gb, **extra)
    want = per_group_tables(df, gb, bins=bins, type=type_)
    got["g"] = got["g"].astype(str)
    want["g"] = want["g"].astype(str)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_grouped_table_with_na_rm():
    rng = np.random.default_rng(80)
    df = frame_of(rng, sizes_of(rng, tiny=False))
    df.loc[rng.choice(len(df), 30, replace=False), "p"] = np.nan
    gb = df.groupby("g", observed=True)
    got = calibr.calibration_table("p", "y", data=gb, na_rm=True)
    want = per_group_tables(df, gb, na_rm=True)
    got["g"] = got["g"].astype(str)
    want["g"] = want["g"].astype(str)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


# --------------------------------------------------------------------------
# the kernels against readable oracles (a loop over the groups)


def groups_split(rng, sizes, k=None):
    """(p, y, ids, start) of random rows sorted by group, as the kernels read them
    (group g: rows start[g]:start[g + 1])."""
    df = frame_of(rng, sizes, k=k, ties=0.05)
    ids = df["g"].cat.codes.to_numpy().astype(np.int64)
    order = np.argsort(ids, kind="stable")
    cols = pcols(df)
    p = np.ascontiguousarray(df[cols].to_numpy(dtype=np.float64)[order])
    y = df["y"].to_numpy()[order]
    start = np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=len(sizes)))])
    return p, y, ids[order], start


def rows(ids, g):
    return np.flatnonzero(ids == g)


@pytest.mark.parametrize("bins", [1, 10, 37])
def test_binned_kernels_equal_the_oracle(bins):
    rng = np.random.default_rng(90)
    sizes = sizes_of(rng, small=30)
    p, y, ids, start = groups_split(rng, sizes)
    hits = (y != 0).astype(np.uint8)
    stats = list(grouped.binary_stat_batches(p, hits, start, bins))
    assert len(stats) == 1 and stats[0][:2] == (0, len(sizes))
    _, _, count, conf, hit = stats[0]
    for g in range(len(sizes)):
        r = rows(ids, g)
        want = binary_stats_oracle(p[r], y[r].astype(np.float64), bins)
        assert np.array_equal(count[g], want[0]) and np.array_equal(hit[g], want[2])
        np.testing.assert_allclose(conf[g], want[1], rtol=ORACLE_RTOL, atol=ORACLE_ATOL)

    pm, ym, ids, start = groups_split(rng, sizes, k=4)
    perm = rng.permutation(len(ids))  # the classwise kernel reads rows in any order
    (_, _, count, conf, hit), = grouped.classwise_stat_batches(pm[perm], ym[perm], ids[perm],
                                                                start, bins)
    for g in range(len(sizes)):
        r = rows(ids, g)
        want = classwise_stats_oracle(pm[r], ym[r], bins)
        assert np.array_equal(count[g], want[0]) and np.array_equal(hit[g], want[2])
        np.testing.assert_allclose(conf[g], want[1], rtol=ORACLE_RTOL, atol=ORACLE_ATOL)


def test_binned_batches_bound_their_memory(monkeypatch):
    monkeypatch.setattr(grouped, "GROUP_MEMORY", 24 * 10 * 7)  # 7 groups of 10 bins at once
    rng = np.random.default_rng(91)
    sizes = sizes_of(rng, small=30)
    p, y, ids, start = groups_split(rng, sizes)
    hits = (y != 0).astype(np.uint8)
    batches = list(grouped.binary_stat_batches(p, hits, start, 10))
    assert [(g0, g1) for g0, g1, *_ in batches] == [
        (g0, min(len(sizes), g0 + 7)) for g0 in range(0, len(sizes), 7)]
    whole = np.concatenate([b[2] for b in batches])
    monkeypatch.undo()
    (_, _, count, _, _), = grouped.binary_stat_batches(p, hits, start, 10)
    assert np.array_equal(whole, count)


def residuals(p, y):
    if p.ndim == 1:
        return p, y - p
    return p, np.eye(p.shape[1])[y] - p


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("bandwidth", BANDWIDTHS)
def test_scalar_kernels_equal_the_oracle(estimator, bandwidth):
    rng = np.random.default_rng(100)
    sizes = sizes_of(rng, small=30, large=(300,), tiny=False)
    p, y, ids, start = groups_split(rng, sizes)
    hits = (y != 0).astype(np.uint8)
    if estimator == "ul":
        got = grouped.scalar_ul(p, hits, start, bandwidth)
    else:
        total, diag, hs = grouped.scalar_pair_sums(p, hits, start, bandwidth)
        got = grouped.estimate(estimator, np.diff(start), total, diag)
    for g in range(len(sizes)):
        x, e = residuals(p[rows(ids, g)], y[rows(ids, g)].astype(np.float64))
        want = skce_oracle(x, e, estimator, bandwidth)
        assert got[g] == pytest.approx(want, rel=SKCE_RTOL, abs=SKCE_ATOL)
        if bandwidth == "median" and estimator != "ul":
            assert hs[g] == median_oracle(x)  # exact: a difference, or the mean of two


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("bandwidth", BANDWIDTHS)
def test_canonical_kernels_equal_the_oracle(estimator, bandwidth):
    rng = np.random.default_rng(110)
    sizes = sizes_of(rng, small=20, large=(2 * canonical.BLOCK + 1,), tiny=False)
    p, y, ids, start = groups_split(rng, sizes, k=3)
    if estimator == "ul":
        got = grouped.canonical_ul(p, y, start, bandwidth)
    else:
        total, diag, hs = grouped.canonical_pair_sums(p, y, start, bandwidth)
        got = grouped.estimate(estimator, np.diff(start), total, diag)
    for g in range(len(sizes)):
        x, e = residuals(p[rows(ids, g)], y[rows(ids, g)])
        want = skce_oracle(x, e, estimator, bandwidth)
        assert got[g] == pytest.approx(want, rel=SKCE_RTOL, abs=SKCE_ATOL)
        if bandwidth == "median" and estimator != "ul":
            assert hs[g] == median_oracle(x)


def test_confidence_inputs_are_the_oracle_top_label():
    rng = np.random.default_rng(120)
    p, y, *_ = groups_split(rng, sizes_of(rng, small=10), k=5)
    p[::7] = np.eye(5)[2]  # ties of the top value
    p[1::7] = [0.4, 0.4, 0.1, 0.05, 0.05]
    from calibr._kernels.top_label import top_label

    rho, hit = top_label(p, y)
    want_r, want_c = top_label_oracle(p, y)
    assert np.array_equal(rho, want_r) and np.array_equal(hit, want_c)


def test_median_of_rows_equals_the_oracle_with_ties():
    rng = np.random.default_rng(130)
    for n in (1, 2, 3, 4, 5, 30):
        p = rng.dirichlet(np.ones(3), n)
        p[::2] = p[0]  # repeated rows: zero distances are left out
        want = median_oracle(p)
        got = grouped._median_of_rows(p)
        assert got == want or (np.isnan(got) and np.isnan(want))


# --------------------------------------------------------------------------
# random groupings, random metrics (hypothesis)


_SPECS = [metric("ece", bins=3), metric("mce"), metric("ece", type="confidence", bins=4),
          metric("mce", type="confidence"), metric("skce", estimator="biased"),
          metric("skce", estimator="biased", type="classwise", bandwidth=0.7),
          metric("skce", estimator="biased", type="confidence"), metric("mmce"),
          metric("mmce", bandwidth=0.05)]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(1, 12), k=st.sampled_from([None, 3]),
       grid=st.sampled_from([None, 2, 10]), observed=st.booleans(), na_rm=st.booleans())
def test_property_grouped_equals_per_group(seed, n_groups, k, grid, observed, na_rm):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 25, n_groups)
    df = frame_of(rng, sizes, k=k, categories=int(rng.integers(0, 3)))
    if grid is not None:  # values on bin edges and ties
        cols = pcols(df)
        if k is None:
            df["p"] = rng.integers(0, grid + 1, len(df)) / grid
        else:
            q = rng.integers(0, grid + 1, (len(df), k)).astype(np.float64) + 1e-9
            df[cols] = q / q.sum(axis=1, keepdims=True)
    if na_rm:
        df.loc[rng.random(len(df)) < 0.05, "y"] = np.nan
    specs = {f"m{i}": s for i, s in enumerate(_SPECS)
             if k is not None or s.options.get("type") is None}
    try:
        assert_equal_to_per_group(df, specs, observed=observed, na_rm=na_rm)
    except ValueError as err:  # na_rm emptied a group: the per-group loop's error
        assert "no complete observations" in str(err)


def test_every_form_in_one_summary():
    rng = np.random.default_rng(140)
    df = frame_of(rng, sizes_of(rng, small=25, tiny=False), k=3)
    specs = {}
    for i, (est, bw, t) in enumerate(itertools.product(
            ESTIMATORS, BANDWIDTHS, ("canonical", "confidence", "classwise"))):
        specs[f"s{i}"] = metric("skce", estimator=est, bandwidth=bw, type=t)
    specs.update({"e": metric("ece"), "ec": metric("ece", type="confidence"),
                  "m": metric("mmce"), "mm": metric("mmce", bandwidth="median")})
    assert_equal_to_per_group(df, specs)
