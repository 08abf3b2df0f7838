"""The top-label calibration error (``type="top-label"``; ``docs/definitions.md``,
"Top-label calibration error", Gupta & Ramdas 2022): against MAPIE 1.6.0 itself,
against the readable oracle of ``tests/oracles/top_label.py``, hand-worked exact
cases, refusals, and every path that reaches it (the table, ``summarise``, the
bootstrap, consistency resampling, a lazy engine, the command line; Dask is in
``tests/test_dask.py``)."""

from __future__ import annotations

import io
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import polars as pl
import pytest
from mapie.metrics.calibration import top_label_ece
from oracles.top_label import cells_oracle, predicted_oracle, top_label_metric_oracle
from tolerances import MAPIE_RTOL, ORACLE_ATOL, ORACLE_RTOL

import calibr
from calibr import InputError
from calibr.cli import main

TL = "top-label"


def _multi(n: int, k: int, seed: int, alpha: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """Dirichlet probabilities and labels drawn from them (0-based codes)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, alpha), n)
    u = rng.random((n, 1))
    y = np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), k - 1)
    return p, y


def _adversarial(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """K = 4: ties of the maximum (to the first column), confidences exactly on R's
    breaks of 10 bins and at 1, a class never predicted (3), a class predicted once
    (2), and random rows predicted 0 or 1."""
    rng = np.random.default_rng(seed)
    edges = np.linspace(0.0, 1.0, 11)
    rows = []
    for e in edges[5:]:  # on the breaks 0.5, 0.6000000000000001, ..., 1
        rows.append([e, 1.0 - e, 0.0, 0.0])
        rows.append([(1.0 - e) / 3, e, (1.0 - e) / 3, (1.0 - e) / 3])
    rows += [[0.4, 0.4, 0.2, 0.0], [0.3, 0.3, 0.3, 0.1], [0.35, 0.35, 0.0, 0.3],
             [0.25, 0.25, 0.25, 0.25], [0.1, 0.2, 0.6, 0.1]]  # ties; class 2 once
    for _ in range(40):
        q = rng.dirichlet([1.0, 1.0, 0.3, 0.3])
        if q[2] > max(q[0], q[1]) or q[3] > max(q[0], q[1]):
            q[[0, 2]] = q[[2, 0]] if q[2] >= q[3] else q[[0, 2]]
            q[[0, 3]] = q[[3, 0]] if q[3] > q[0] else q[[0, 3]]
        rows.append(list(q))
    p = np.array(rows)
    y = rng.integers(0, 4, p.shape[0])
    return p, y


def _cases():
    out = [("adversarial", *_adversarial(1), 10), ("adversarial bins=4", *_adversarial(2), 4)]
    for seed, (n, k, b) in enumerate([(300, 3, 10), (500, 5, 15), (60, 10, 7), (1000, 2, 20)]):
        out.append((f"random n={n} K={k}", *_multi(n, k, seed), b))
    return out


CASES = _cases()


# --------------------------------------------------------------------------
# MAPIE 1.6.0


@pytest.mark.parametrize(("name", "p", "y", "bins"), CASES, ids=[c[0] for c in CASES])
def test_each_class_term_is_mapies_top_label_ece_of_that_class(name, p, y, bins):
    k = p.shape[1]
    pred = np.argmax(p, axis=1)
    classes = np.unique(pred)
    if name.startswith("adversarial"):
        assert 3 not in classes and (pred == 2).sum() == 1  # never and once
        assert (p[pred == 0, 0] == p[pred == 0, 1]).any()  # a tie went to the first column
    terms, shares = [], []
    for c in classes:
        mine = pred == c
        # MAPIE's "uniform" edges linspace(0, 1, N), digitize(right=True): N - 1 bins
        theirs = top_label_ece(y[mine], p[mine], num_bins=bins + 1, split_strategy="uniform")
        ours = calibr.ece(p[mine], y[mine], bins=bins, type=TL, classes=range(k))
        assert ours == pytest.approx(theirs, rel=MAPIE_RTOL, abs=1e-15), c
        terms.append(theirs)
        shares.append(mine.sum() / p.shape[0])
    whole = calibr.ece(p, y, bins=bins, type=TL, classes=range(k))
    assert whole == pytest.approx(float(np.dot(shares, terms)), rel=MAPIE_RTOL)
    # the documented difference: MAPIE averages the predicted classes' ECEs unweighted
    mapie = top_label_ece(y, p, num_bins=bins + 1)
    assert mapie == pytest.approx(float(np.mean(terms)), rel=MAPIE_RTOL)
    if name.startswith("adversarial"):
        assert not math.isclose(mapie, whole, rel_tol=1e-6)  # the weighting matters here


def test_mapie_counts_a_class_predicted_once_as_much_as_the_others():
    # two rows predicted 0, perfectly calibrated; one row predicted 1, gap 0.4
    p = np.array([[0.5, 0.5], [0.5, 0.5], [0.4, 0.6]])
    y = np.array([0, 1, 0])
    assert top_label_ece(y, p, num_bins=11) == pytest.approx(0.3, rel=1e-15)  # (0 + .6) / 2
    assert calibr.ece(p, y, bins=10, type=TL, classes=[0, 1]) == pytest.approx(0.2, rel=1e-15)


# --------------------------------------------------------------------------
# the oracle

ORACLE_OPTIONS = [
    {},
    {"bins": 7},
    {"bins": 5, "right": False},
    {"bins": [0.0, 0.45, 0.5, 0.8, 1.0]},
    {"bins": [0.0, 0.45, 0.5, 0.8, 1.0], "right": False},
    {"bins": 4, "binning": "equal-mass"},
    {"bins": 3, "binning": "equal-mass", "right": False},
]


def _oracle_kw(opts: dict) -> dict:
    return {"bins": opts.get("bins", 10), "binning": opts.get("binning", "equal-width"),
            "right": opts.get("right", True)}


def _close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=ORACLE_RTOL, abs_tol=ORACLE_ATOL)


@pytest.mark.parametrize("opts", ORACLE_OPTIONS, ids=str)
@pytest.mark.parametrize(("name", "p", "y", "bins"), CASES, ids=[c[0] for c in CASES])
def test_metrics_equal_the_oracle(name, p, y, bins, opts):
    opts = {"bins": bins, **opts}
    kw = dict(classes=range(p.shape[1]), **opts)
    okw = _oracle_kw(opts)
    for metric, fn in (("ece", calibr.ece), ("mce", calibr.mce)):
        assert _close(fn(p, y, type=TL, **kw), top_label_metric_oracle(metric, p, y, **okw))
    for norm, debias in (("l1", False), ("l2", False), ("max", False), ("l2", True)):
        got = calibr.calibration_error(p, y, type=TL, norm=norm, debias=debias, **kw)
        want = top_label_metric_oracle("calibration_error", p, y, norm=norm, debias=debias,
                                       **okw)
        assert _close(got, want), (norm, debias)


@pytest.mark.parametrize("opts", [{}, {"bins": 4, "right": False},
                                  {"bins": 3, "binning": "equal-mass"}], ids=str)
def test_weights_equal_the_oracle(opts):
    p, y = _multi(400, 4, 11)
    w = np.random.default_rng(12).integers(0, 4, 400).astype(np.float64)
    w[:30] = 0.0
    okw = _oracle_kw(opts)
    for metric, fn in (("ece", calibr.ece), ("mce", calibr.mce)):
        got = fn(p, y, type=TL, classes=range(4), weights=w, **opts)
        assert _close(got, top_label_metric_oracle(metric, p, y, weights=w, **okw))
        # whole-number weights are repeated rows
        rep = np.repeat(np.arange(400), w.astype(np.int64))
        assert _close(got, fn(p[rep], y[rep], type=TL, classes=range(4), **opts))


def test_the_cells_are_the_oracles():
    from calibr._binning import BinSpec, top_label_stats

    p, y = _adversarial(3)
    for opts in ({"bins": 10}, {"bins": 4, "binning": "equal-mass", "right": False}):
        spec = BinSpec.from_options(opts["bins"], opts.get("binning", "equal-width"),
                                    opts.get("right", True))
        count, conf, hit, edges = top_label_stats(p, y, None, False, spec)
        nb = edges.shape[-1] - 1
        assert count.shape == (4 * nb,)
        got = [(c // nb, c % nb, count[c], conf[c] / count[c], hit[c] / count[c])
               for c in np.flatnonzero(count > 0)]
        want = cells_oracle(p, y, **_oracle_kw(opts))
        assert [g[:3] for g in got] == [w[:3] for w in want]
        assert all(_close(g[3], w[3]) and g[4] == w[4] for g, w in zip(got, want, strict=True))


def test_labels_classes_and_na_rm():
    p, y = _multi(200, 3, 21)
    names = np.array(["cat", "dog", "eel"])
    frame = pd.DataFrame(p, columns=names)
    want = top_label_metric_oracle("ece", p, y)
    assert _close(calibr.ece(p, names[y], type=TL, classes=names), want)
    assert _close(calibr.ece(frame, names[y], type=TL), want)  # labels are the columns
    assert _close(calibr.ece(p, y + 1, type=TL), want)  # R's codes 1..K
    assert _close(calibr.ece(p, pd.Categorical.from_codes(y, names), type=TL), want)
    holes = p.copy()
    holes[::7, 1] = np.nan
    ys = pd.array(y + 1, dtype="Int64")
    ys[::11] = pd.NA
    kept = ~(np.isnan(holes).any(axis=1) | np.asarray(pd.isna(ys)))
    for fn, metric in ((calibr.ece, "ece"), (calibr.mce, "mce")):
        assert _close(fn(holes, ys, type=TL, na_rm=True),
                      top_label_metric_oracle(metric, p[kept], y[kept]))
    with pytest.raises(InputError, match=r"^`p` must not contain missing values"):
        calibr.ece(holes, y + 1, type=TL)


def test_isotonic_and_data_chosen_bins_are_each_classs_own():
    # each class's term is the binary metric of its rows' (confidence, hit)
    p, y = _multi(300, 3, 31)
    cls, h, hit = predicted_oracle(p, y)
    for opts in ({"binning": "isotonic"}, {"bins": "sweep"}, {"bins": "auto"},
                 {"bins": "auto", "binning": "equal-mass"}):
        want = sum((cls == c).mean() * calibr.ece(h[cls == c], hit[cls == c], **opts)
                   for c in np.unique(cls))
        assert _close(calibr.ece(p, y + 1, type=TL, **opts), want), opts
        worst = max(calibr.mce(h[cls == c], hit[cls == c], **opts) for c in np.unique(cls))
        assert calibr.mce(p, y + 1, type=TL, **opts) == worst


# --------------------------------------------------------------------------
# a vector p: the two columns (1 - p, p)


def test_a_vector_is_the_two_column_matrix():
    rng = np.random.default_rng(41)
    p = np.concatenate([rng.random(300), [0.5, 0.5, 0.0, 1.0, 0.25, 0.75]])
    y = (rng.random(p.shape[0]) < p).astype(np.int64)
    two = np.column_stack((1.0 - p, p))
    for opts in ({}, {"bins": 4, "right": False}, {"bins": 3, "binning": "equal-mass"}):
        for fn in (calibr.ece, calibr.mce):
            assert fn(p, y, type=TL, **opts) == fn(two, y + 1, type=TL, **opts)
        assert (calibr.calibration_error(p, y, type=TL, **opts)
                == calibr.calibration_error(two, y + 1, type=TL, **opts))
    # a tie p = 1 - p = 0.5 goes to class 0, the first column
    assert calibr.calibration_table([0.5], [1], type=TL)["class"].tolist() == [0]
    # not the binary ECE of p (which type ignores for the other forms)
    assert calibr.ece(p, y, type=TL) != calibr.ece(p, y, type="confidence")
    assert calibr.ece(p, y, type="confidence") == calibr.ece(p, y)
    # the oracle, and the labels of classes=
    assert _close(calibr.ece(p, y, type=TL), top_label_metric_oracle("ece", p, y))
    tab = calibr.calibration_table(p, np.where(y == 1, "yes", "no"), type=TL,
                                   classes=["no", "yes"])
    assert set(tab["class"]) == {"no", "yes"}


# --------------------------------------------------------------------------
# hand-worked, exact


def test_hand_worked_rows():
    # bins = 5: breaks .2, .4, .6000000000000001, .8, 1
    p = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    y = [1, 3, 3, 2]
    # class 1: .7 right (gap .3), .6 wrong (gap .6, bin (.4, .6000000000000001]);
    # class 2: .5 wrong (.5); class 3: .8 right (.2): each a cell of 1 row of 4
    exact = (Fraction(3, 10) + Fraction(6, 10) + Fraction(5, 10) + Fraction(2, 10)) / 4
    assert calibr.ece(p, y, bins=5, type=TL) == pytest.approx(float(exact), rel=1e-15)
    assert calibr.mce(p, y, bins=5, type=TL) == pytest.approx(0.6, rel=1e-15)
    l2 = math.sqrt(float((Fraction(9, 100) + Fraction(36, 100) + Fraction(25, 100)
                          + Fraction(4, 100)) / 4))
    assert calibr.calibration_error(p, y, bins=5, type=TL) == pytest.approx(l2, rel=1e-15)
    # one bin: class 1's two rows share a cell (conf .65, acc .5): 2/4 * .15 + ...
    one = Fraction(2, 4) * Fraction(15, 100) + Fraction(1, 4) * (Fraction(5, 10)
                                                                 + Fraction(2, 10))
    assert calibr.ece(p, y, bins=1, type=TL) == pytest.approx(float(one), rel=1e-15)
    # the pooled confidence form puts .5 and .6 in one bin: another number
    assert calibr.mce(p, y, bins=5, type="confidence") == pytest.approx(0.55, rel=1e-15)
    # debiased: only class 1's cell has 2 rows: .15^2 - .5 * .5 / 1 < 0, clipped at 0
    assert calibr.calibration_error(p, y, bins=1, type=TL, debias=True) == 0.0


def test_a_single_row_every_p_equal_and_one_class():
    assert calibr.ece([[0.7, 0.2, 0.1]], [1], type=TL) == pytest.approx(0.3, rel=1e-15)
    assert calibr.mce([[0.7, 0.2, 0.1]], [2], type=TL) == 0.7
    # every row the same uniform p: class 1 predicted, confidence 1/3
    p = np.full((6, 3), 1.0 / 3.0)
    y = np.array([1, 1, 2, 3, 3, 3])
    assert calibr.ece(p, y, type=TL) == pytest.approx(abs(2 / 6 - 1 / 3), abs=1e-16)
    assert calibr.mce(p, y, type=TL) == calibr.ece(p, y, type=TL)
    # y all one class: every cell's gap has one sign, so the TL-ECE is mean |hit - h|
    q, _ = _multi(500, 4, 51)
    cls, h, hit = predicted_oracle(q, np.full(500, 2))
    assert _close(calibr.ece(q, np.full(500, 3), type=TL), float(np.mean(np.abs(hit - h))))


# --------------------------------------------------------------------------
# the table


def test_the_table_has_a_row_per_predicted_class_and_bin():
    p, y = _adversarial(4)
    names = ["a", "b", "c", "d"]
    labels = np.array(names)[y]
    for opts in ({}, {"bins": 4, "binning": "equal-mass"}, {"bins": 6, "right": False}):
        tab = calibr.calibration_table(p, labels, type=TL, classes=names, **opts)
        assert list(tab.columns[:2]) == ["class", "bin"]
        assert set(tab["class"]) == {"a", "b", "c"}  # "d" is never predicted
        ece = float((tab["n"] * tab["gap"]).sum() / tab["n"].sum())
        assert _close(ece, calibr.ece(p, labels, type=TL, classes=names, **opts))
        assert tab["gap"].max() == calibr.mce(p, labels, type=TL, classes=names, **opts)
        cells = cells_oracle(p, y, **_oracle_kw(opts))
        assert tab["n"].tolist() == [t for *_, t, _, _ in cells]
        assert [names.index(c) for c in tab["class"]] == [c for c, *_ in cells]


def test_the_grouped_table_is_each_groups_table():
    p, y = _multi(300, 3, 61)
    df = pd.DataFrame(p, columns=["p_0", "p_1", "p_2"]).assign(
        y=y, g=np.random.default_rng(62).choice(["x", "y", "z"], 300))
    got = calibr.calibration_table(None, "y", data=df.groupby("g"), p_prefix="p_", type=TL)
    for key, sub in df.groupby("g"):
        want = calibr.calibration_table(None, "y", data=sub, p_prefix="p_", type=TL)
        part = got[got["g"] == key].drop(columns="g").reset_index(drop=True)
        pd.testing.assert_frame_equal(part, want, check_exact=True)


def test_the_consistency_band_of_the_top_label():
    p, y = _multi(300, 3, 71)
    tab = calibr.calibration_table(p, y + 1, type=TL, consistency=0.9, n_resamples=200, rng=1)
    assert (tab["consistency_lower"] <= tab["consistency_upper"]).all()
    again = calibr.calibration_table(p, y + 1, type=TL, consistency=0.9, n_resamples=200, rng=1)
    pd.testing.assert_frame_equal(tab, again, check_exact=True)
    # a calibrated model (labels drawn from p): most bins' frequencies inside their band
    inside = tab["observed_frequency"].between(tab["consistency_lower"], tab["consistency_upper"])
    assert inside.mean() > 0.7
    # a vector p, and each predicted class's own equal-mass bins
    q = p[:, 0]
    hits = (np.random.default_rng(72).random(300) < q).astype(int)
    for opts in ({}, {"bins": 3, "binning": "equal-mass"}):
        band = calibr.calibration_table(q, hits, type=TL, consistency=0.9, n_resamples=100,
                                        rng=2, **opts)
        plain = calibr.calibration_table(q, hits, type=TL, **opts)
        pd.testing.assert_frame_equal(band[plain.columns], plain, check_exact=True)
        assert band["consistency_lower"].notna().all()


# --------------------------------------------------------------------------
# refusals


def test_type_is_refused_where_it_does_not_apply_and_nothing_is_mutated():
    p, y = _multi(100, 3, 81)
    frame = pd.DataFrame(p, columns=["a", "b", "c"])
    labels = pd.Series(np.array(["a", "b", "c"])[y])
    before = (p.copy(), y.copy(), frame.copy(), labels.copy())
    with pytest.raises(InputError, match=r"^`type` must be one of 'canonical', 'confidence', "
                       r"'classwise'; got 'top-label'\.$"):
        calibr.skce(p, y + 1, type=TL)
    with pytest.raises(InputError, match=r"^`type` must be one of 'confidence', 'classwise'; "
                       r"got 'top-label'\.$"):
        calibr.smece(p, y + 1, type=TL)
    with pytest.raises(InputError, match=r"^`type` must be one of 'classwise', 'confidence', "
                       r"'top-label'; got 'top_label'\.$"):
        calibr.ece(frame, labels, type="top_label")
    for method in ("skce", "skce_block", "ks", "spiegelhalter"):
        with pytest.raises(InputError, match=r'^`type = "top-label"` is a form of the binned '
                           r'metrics \("ece", "mce", "calibration_error"\): it applies to '
                           rf'`method = "consistency"` only; got `method = "{method}"`\.$') as e:
            calibr.calibration_test(p, y + 1, method, type=TL)
        assert e.value.param == "type"
    for metric in ("skce", "mmce", "smece"):
        with pytest.raises(InputError, match=r'^`type = "top-label"` is a form of the binned '
                           rf'metrics .*; `metric = "{metric}"` has no top-label form\.$'):
            calibr.calibration_test(p, y + 1, "consistency", metric=metric, type=TL)
    with pytest.raises(InputError, match=r'^`bins` times the number of classes must be at '
                       r'most 10,000,000 for type = "top-label" \(one set of bins per class\)'):
        calibr.ece(np.full((2, 20), 0.05), [1, 2], bins=1_000_000, type=TL)
    with pytest.raises(InputError, match=r"^`type` must be one of 'classwise', 'confidence'; "
                       r"got 'top-label'\.$"):
        calibr.html_report(frame.assign(y=labels), p=["a", "b", "c"], y="y", type=TL)
    calibr.ece(frame, labels, type=TL)
    calibr.calibration_table(frame, labels, type=TL, bins=3, binning="equal-mass")
    after = (p, y, frame, labels)
    np.testing.assert_array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[1], before[1])
    pd.testing.assert_frame_equal(after[2], before[2])
    pd.testing.assert_series_equal(after[3], before[3])


# --------------------------------------------------------------------------
# the paths: summarise, bootstrap, consistency resampling, a lazy engine, the CLI


def _grouped_frame(n: int = 600, seed: int = 91) -> pd.DataFrame:
    p, y = _multi(n, 3, seed)
    rng = np.random.default_rng(seed + 1)
    return pd.DataFrame(p, columns=["p_0", "p_1", "p_2"]).assign(
        y=y, g=rng.choice(["a", "b", "c", "d"], n), w=rng.integers(0, 3, n).astype(float),
        q=rng.random(n))


def test_summarise_is_the_metric_on_each_group_bit_for_bit():
    df = _grouped_frame()
    metrics = {"ece": calibr.metric("ece", type=TL),
               "mce": calibr.metric("mce", type=TL, bins=4),
               "em": calibr.metric("ece", type=TL, binning="equal-mass", bins=3),
               "l2": calibr.metric("calibration_error", type=TL, debias=True),
               "plain": "ece"}
    got = calibr.summarise(df.groupby("g"), p_prefix="p_", y="y", metrics=metrics)
    weighted = calibr.summarise(df.groupby("g"), p_prefix="p_", y="y", weights="w",
                                metrics={k: metrics[k] for k in ("ece", "mce")})
    for i, (key, sub) in enumerate(df.groupby("g")):
        pc = sub[["p_0", "p_1", "p_2"]].to_numpy()
        cl = {"classes": [0, 1, 2]}
        assert got["ece"].iloc[i] == calibr.ece(pc, sub["y"], type=TL, **cl), key
        assert got["mce"].iloc[i] == calibr.mce(pc, sub["y"], type=TL, bins=4, **cl)
        assert got["em"].iloc[i] == calibr.ece(pc, sub["y"], type=TL, binning="equal-mass",
                                               bins=3, **cl)
        assert got["l2"].iloc[i] == calibr.calibration_error(pc, sub["y"], type=TL,
                                                             debias=True, **cl)
        assert got["plain"].iloc[i] == calibr.ece(pc, sub["y"], **cl)
        assert weighted["ece"].iloc[i] == calibr.ece(pc, sub["y"], type=TL, weights=sub["w"],
                                                     **cl)
        assert weighted["mce"].iloc[i] == calibr.mce(pc, sub["y"], type=TL, bins=4,
                                                     weights=sub["w"], **cl)


def test_summarise_of_a_binary_column():
    df = _grouped_frame()
    df["hit"] = (df["y"] == 0).astype(int)
    got = calibr.summarise(df.groupby("g"), p="q", y="hit", metrics=calibr.metric("ece", type=TL))
    for i, (_, sub) in enumerate(df.groupby("g")):
        assert got.iloc[i, 1] == calibr.ece(sub["q"], sub["hit"], type=TL)


@pytest.mark.parametrize("metric", ["ece", "mce"])
def test_bootstrap_from_the_cell_sums_equals_the_metric_on_each_resample(metric):
    p, y = _multi(300, 3, 101)
    fn = getattr(calibr, metric)
    for opts in ({}, {"bins": 4, "right": False}, {"bins": 3, "binning": "equal-mass"}):
        got = calibr.bootstrap(p, y + 1, metric=metric, type=TL, n_resamples=60, rng=5, **opts)
        def direct(a, b, opts=opts, **kw):
            return fn(a, b, type=TL, **opts, **kw)

        want = calibr.bootstrap(p, y + 1, metric=direct, n_resamples=60, rng=5)
        assert got.estimate == fn(p, y + 1, type=TL, **opts)
        np.testing.assert_allclose(got.bootstrap_distribution, want.bootstrap_distribution,
                                   rtol=ORACLE_RTOL, atol=ORACLE_ATOL)
    # BCa: the jackknife from the cell sums (labels unrelated to p, so that the
    # estimate lies inside the replicates)
    noise = np.random.default_rng(102).integers(1, 4, 300)
    bca = calibr.bootstrap(p, noise, metric=metric, type=TL, n_resamples=60, rng=5,
                           method="bca")
    slow = calibr.bootstrap(p, noise, metric=lambda a, b, **kw: fn(a, b, type=TL, **kw),
                            n_resamples=60, rng=5, method="bca")
    assert bca.confidence_interval.low <= bca.confidence_interval.high
    np.testing.assert_allclose(bca.confidence_interval, slow.confidence_interval, rtol=1e-9)
    # a vector p: its two columns, in the replicates too
    q = p[:, 0]
    hits = (y == 0).astype(int)
    got = calibr.bootstrap(q, hits, metric=metric, type=TL, n_resamples=40, rng=2)
    want = calibr.bootstrap(np.column_stack((1 - q, q)), hits + 1, metric=metric, type=TL,
                            n_resamples=40, rng=2)
    np.testing.assert_allclose(got.bootstrap_distribution, want.bootstrap_distribution,
                               rtol=ORACLE_RTOL, atol=ORACLE_ATOL)


def test_consistency_resampling_in_the_top_label_form():
    p, y = _multi(200, 3, 111)
    res = calibr.calibration_test(p, y + 1, "consistency", metric="ece", type=TL,
                                  n_resamples=50, rng=7)
    assert res.type == TL and res.statistic == calibr.ece(p, y + 1, type=TL)
    # the null distribution: the metric in this form on each consistency resample
    gen = np.random.default_rng(7)
    n = p.shape[0]
    null = []
    for _ in range(50):
        ps = p[np.minimum((n * gen.random(n)).astype(np.int64), n - 1)]
        cum = np.cumsum(ps, axis=1)
        v = gen.random(n) * cum[:, -1]
        labels = np.minimum(np.count_nonzero(cum <= v[:, None], axis=1), 2)
        null.append(calibr.ece(ps, labels + 1, type=TL))
    np.testing.assert_array_equal(res.null_distribution, null)
    binary = calibr.calibration_test(p[:, 0], (y == 0), "consistency", metric="mce", type=TL,
                                     n_resamples=20, rng=3)
    assert binary.type == TL and binary.statistic == calibr.mce(p[:, 0], y == 0, type=TL)
    lp = calibr.calibration_test(p, y + 1, "consistency", metric="calibration_error", type=TL,
                                 n_resamples=10, rng=3)
    assert lp.statistic == calibr.calibration_error(p, y + 1, type=TL)


def test_a_lazy_polars_source_is_collected():
    df = _grouped_frame(300)
    df["hit"] = (df["y"] == 0).astype(int)
    lf = pl.from_pandas(df).lazy()
    assert (calibr.ece(lf.select("q", "hit"), "hit", type=TL, bins=4)
            == calibr.ece(df["q"], df["hit"], type=TL, bins=4))
    assert (calibr.mce(lf.select("p_0", "p_1", "p_2", "y"), "y", type=TL, classes=[0, 1, 2])
            == calibr.mce(df[["p_0", "p_1", "p_2"]], df["y"], type=TL, classes=[0, 1, 2]))
    got = calibr.summarise(lf, "q", "hit", metrics=calibr.metric("ece", type=TL),
                           by="g").to_pandas()
    want = calibr.summarise(df.groupby("g"), "q", "hit", metrics=calibr.metric("ece", type=TL))
    pd.testing.assert_frame_equal(got, want, check_exact=True, check_dtype=False)
    tab = calibr.calibration_table("q", "hit", data=lf, type=TL).to_pandas()
    pd.testing.assert_frame_equal(tab, calibr.calibration_table("q", "hit", data=df, type=TL),
                                  check_exact=True, check_dtype=False)


def test_the_command_line_reports_the_top_label(capsys, tmp_path):
    df = _grouped_frame(400)
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out.csv"
    assert main(["report", str(path), "--prob-prefix", "p_", "--label", "y", "-g", "g",
                 "--type", TL, "-o", str(out)]) == 0
    got = pd.read_csv(out)
    assert (got["form"] == TL).all()
    for i, (_, sub) in enumerate(df.groupby("g")):
        pc = sub[["p_0", "p_1", "p_2"]]
        assert got["ece"].iloc[i] == pytest.approx(calibr.ece(pc, sub["y"], type=TL,
                                                              classes=[0, 1, 2]), rel=1e-12)
        assert got["mce"].iloc[i] == pytest.approx(calibr.mce(pc, sub["y"], type=TL,
                                                              classes=[0, 1, 2]), rel=1e-12)
    capsys.readouterr()
    assert main(["report", str(path), "--prob-prefix", "p_", "--label", "y", "--type", TL,
                 "--per-bin", "-f", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    want = calibr.calibration_table(None, "y", data=df, p_prefix="p_", type=TL)
    assert table["n"].tolist() == want["n"].tolist()
    assert table["class"].astype(str).tolist() == want["class"].astype(str).tolist()
    code = main(["report", str(path), "--prob-prefix", "p_", "--label", "y", "--type", TL,
                 "--plot", str(tmp_path / "fig.png")])
    err = capsys.readouterr().err
    assert code != 0 and "--plot has no top-label form yet" in err
    assert not (tmp_path / "fig.png").exists()
    code = main(["report", str(path), "--prob-prefix", "p_", "--label", "y", "--type", TL,
                 "--html", str(tmp_path / "r.html")])
    assert code != 0 and "--html has no top-label form yet" in capsys.readouterr().err
    # one probability column: read as (1 - p, p), so the form is not "binary"
    df["hit"] = (df["y"] == 0).astype(int)
    df.to_csv(path, index=False)
    assert main(["report", str(path), "--prob", "q", "--label", "hit", "--type", TL,
                 "-f", "csv"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert got["form"].tolist() == [TL]
    assert got["ece"].iloc[0] == pytest.approx(calibr.ece(df["q"], df["hit"], type=TL),
                                               rel=1e-12)
