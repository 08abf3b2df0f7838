"""brier(), log_loss() and auroc() (``docs/definitions.md``, "Scores and
discrimination"): against their oracles (tests/oracles/scores.py), scikit-learn,
model-diagnostics, and R (pROC::auc, Hmisc::somers2, rms::val.prob's C), on
random and hand-worked data; the conventions of ``docs/conventions.md``; and their
bad input."""

from __future__ import annotations

import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from conftest import require, unavailable
from oracles.scores import auroc_exact, auroc_oracle, brier_oracle, log_loss_oracle

import calibr
from calibr import auroc, brier, log_loss

sk_metrics = require("sklearn.metrics")
md_scoring = require("model_diagnostics.scoring")

TOL = 1e-12


def _binary(n: int, seed: int, decimals: int | None = None):
    gen = np.random.default_rng(seed)
    p = gen.random(n)
    if decimals is not None:  # ties
        p = np.round(p, decimals)
    y = (gen.random(n) < p).astype(np.int64)
    return p, y


def _multiclass(n: int, k: int, seed: int, decimals: int | None = None):
    gen = np.random.default_rng(seed)
    p = gen.dirichlet(np.ones(k), n)
    if decimals is not None:  # ties: the first columns rounded, rows that stay in [0, 1]
        p = np.round(p, decimals)
        p[:, -1] = 1.0 - p[:, :-1].sum(axis=1)
        p = p[p[:, -1] >= 0]
    y = np.array([gen.choice(k, p=np.abs(row) / np.abs(row).sum()) for row in p])
    y[:k] = np.arange(k)  # every class present
    return p, y


# --------------------------------------------------------------------------
# oracles


@pytest.mark.parametrize("seed", range(4))
def test_the_scores_equal_their_oracles(seed):
    p, y = _binary(60, seed, decimals=1)
    p = np.clip(p, 0.05, 0.95)
    w = np.random.default_rng(seed).integers(0, 4, 60).astype(float)
    for weights in (None, w):
        assert brier(p, y, weights=weights) == pytest.approx(brier_oracle(p, y, weights),
                                                             abs=TOL)
        assert log_loss(p, y, weights=weights) == pytest.approx(
            log_loss_oracle(p, y, weights), abs=TOL)
        assert auroc(p, y, weights=weights) == pytest.approx(auroc_oracle(p, y, weights),
                                                             abs=TOL)
    pm, ym = _multiclass(50, 3, seed, decimals=1)
    pm = np.clip(pm, 0.0, 1.0)
    ok = np.abs(pm.sum(axis=1) - 1) < 1e-9
    pm, ym = pm[ok], ym[ok]
    assert brier(pm, ym + 1) == pytest.approx(brier_oracle(pm, ym), abs=TOL)
    picked = pm[np.arange(len(ym)), ym] > 0
    assert log_loss(pm[picked], ym[picked] + 1) == pytest.approx(
        log_loss_oracle(pm[picked], ym[picked]), abs=TOL)
    per = [auroc_oracle(pm[:, k], ym == k) for k in range(3)]
    assert auroc(pm, ym + 1) == pytest.approx(np.mean(per), abs=TOL)
    prevalence = np.bincount(ym, minlength=3) / len(ym)
    assert auroc(pm, ym + 1, average="weighted") == pytest.approx(np.dot(prevalence, per),
                                                                  abs=TOL)
    top = pm.argmax(axis=1)
    assert auroc(pm, ym + 1, type="confidence") == pytest.approx(
        auroc_oracle(pm.max(axis=1), top == ym), abs=TOL)


def test_hand_worked_cases():
    # Brier: (0.01 + 0.01 + 0.04 + 0.09) / 4; the multiclass example of scikit-learn
    assert brier([0.1, 0.9, 0.8, 0.3], [0, 1, 1, 0]) == pytest.approx(0.0375, abs=1e-15)
    assert brier([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.2, 0.2, 0.6]], [1, 2, 3]) == \
        pytest.approx((0.06 + 0.14 + 0.24) / 3, abs=1e-15)
    # log loss: log 2, and -(log 0.5 + log 0.25) / 2
    assert log_loss([0.5, 0.5], [0, 1]) == pytest.approx(math.log(2), abs=1e-15)
    assert log_loss([0.5, 0.75], [1, 0]) == pytest.approx(math.log(8) / 2, abs=1e-15)
    # AUROC: the tie at 0.5 counts one half: (2 + 1 + 4) / 8
    x, c = [0.2, 0.5, 0.5, 0.9], [0, 0, 1, 1]
    assert auroc_exact(x, c) == Fraction(7, 8)
    assert auroc(x, c) == 0.875
    x, c = [0.3, 0.3, 0.3, 0.7, 0.7, 0.1, 0.9], [0, 1, 1, 0, 1, 0, 1]
    assert auroc(x, c) == float(auroc_exact(x, c)) == 17 / 24


def test_every_p_equal_and_one_row_per_class():
    assert auroc([0.4] * 6, [0, 1, 0, 1, 1, 0]) == 0.5
    assert brier([0.4] * 4, [0, 1, 1, 0]) == pytest.approx((0.16 * 2 + 0.36 * 2) / 4)
    assert log_loss([0.4] * 2, [0, 1]) == pytest.approx(-(math.log(0.6) + math.log(0.4)) / 2)
    assert auroc([0.3, 0.6], [0, 1]) == 1.0
    assert auroc([0.6, 0.3], [0, 1]) == 0.0
    p = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]]
    assert auroc(p, [1, 2, 3]) == 1.0
    assert brier(p, [1, 2, 3]) == pytest.approx(brier_oracle(np.array(p), np.arange(3)))


@pytest.mark.parametrize("seed", range(3))
def test_weights_are_repeated_rows(seed):
    p, y = _binary(40, seed, decimals=2)
    p = np.clip(p, 0.01, 0.99)
    w = np.random.default_rng(seed + 10).integers(0, 4, 40)
    rp, ry = np.repeat(p, w), np.repeat(y, w)
    for f in (brier, log_loss, auroc):
        assert f(p, y, weights=w) == pytest.approx(f(rp, ry), abs=TOL), f.__name__
    pm, ym = _multiclass(40, 4, seed)
    w[:4] = 1  # keep every class
    rp, ry = np.repeat(pm, w, axis=0), np.repeat(ym, w)
    for f in (brier, log_loss, auroc):
        assert f(pm, ym + 1, weights=w) == pytest.approx(f(rp, ry + 1), abs=TOL), f.__name__
    for kw in ({"average": "weighted"}, {"type": "confidence"}):
        assert auroc(pm, ym + 1, weights=w, **kw) == pytest.approx(auroc(rp, ry + 1, **kw),
                                                                   abs=TOL)


def test_every_reading_of_the_labels_gives_the_same_number():
    """The kernels' direct read (0/1 of any dtype, R's codes) and the input layer's
    (classes=, Categorical, na_rm) agree."""
    p, y = _binary(200, 7, decimals=2)
    for f in (brier, log_loss, auroc):
        want = f(np.clip(p, 0.01, 0.99), y)
        q = np.clip(p, 0.01, 0.99)
        assert f(q, y.astype(bool)) == want
        assert f(q, y.astype(np.float64)) == want
        assert f(q, np.where(y == 1, "b", "a"), classes=["a", "b"]) == want
        qn = np.append(q, np.nan)
        assert f(qn, np.append(y, 1), na_rm=True) == want
        with pytest.raises(calibr.InputError, match=r"^`p` must not contain missing values; "
                                                   r"1 value is missing, .* Pass na_rm=True"):
            f(qn, np.append(y, 1))  # na_rm is False by default: nothing dropped silently
    pm, ym = _multiclass(100, 3, 8)
    cat = pd.Categorical.from_codes(ym, ["a", "b", "c"])
    for f in (brier, log_loss, auroc):
        want = f(pm, ym + 1)
        assert f(pm, cat) == want
        assert f(pm, np.array(["a", "b", "c"])[ym], classes=["a", "b", "c"]) == want
        assert f(pm, (ym + 1).astype(float)) == want


# --------------------------------------------------------------------------
# peers: scikit-learn and model-diagnostics


@pytest.mark.parametrize("seed", range(3))
def test_brier_equals_sklearn_and_model_diagnostics(seed):
    p, y = _binary(500, seed)
    w = np.random.default_rng(seed).random(500)
    assert brier(p, y) == pytest.approx(sk_metrics.brier_score_loss(y, p), abs=TOL)
    assert brier(p, y, weights=w) == pytest.approx(
        sk_metrics.brier_score_loss(y, p, sample_weight=w), abs=TOL)
    assert brier(p, y, weights=w) == pytest.approx(
        md_scoring.SquaredError()(y.astype(float), p, weights=w), abs=TOL)
    for k in (3, 5):
        pm, ym = _multiclass(300, k, seed)
        assert brier(pm, ym + 1) == pytest.approx(
            sk_metrics.brier_score_loss(ym, pm, labels=list(range(k))), abs=TOL)
    # a 2-column matrix: calibr sums over both classes, scikit-learn halves it by default
    two = np.column_stack([1 - p, p])
    assert brier(two, y + 1) == pytest.approx(
        sk_metrics.brier_score_loss(y, two, scale_by_half=False), abs=TOL)
    assert brier(two, y + 1) / 2 == pytest.approx(sk_metrics.brier_score_loss(y, two),
                                                  abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_log_loss_equals_sklearn_and_model_diagnostics(seed):
    p, y = _binary(500, seed)
    p = np.clip(p, 1e-6, 1 - 1e-6)  # scikit-learn clips at 2.2e-16 only
    w = np.random.default_rng(seed).random(500)
    assert log_loss(p, y) == pytest.approx(sk_metrics.log_loss(y, p), abs=TOL)
    assert log_loss(p, y, weights=w) == pytest.approx(
        sk_metrics.log_loss(y, p, sample_weight=w), abs=TOL)
    assert log_loss(p, y, weights=w) == pytest.approx(
        md_scoring.LogLoss()(y.astype(float), p, weights=w), abs=TOL)
    pm, ym = _multiclass(300, 4, seed)
    assert log_loss(pm, ym + 1) == pytest.approx(sk_metrics.log_loss(ym, pm), abs=TOL)
    # where scikit-learn clips (a p of 0 or 1), eps= gives its number
    p[:5] = 1.0 - y[:5]
    eps = float(np.finfo(float).eps)
    assert log_loss(p, y, eps=eps) == pytest.approx(sk_metrics.log_loss(y, p), abs=TOL)
    with pytest.warns(UserWarning, match="5 rows give their observed outcome probability 0"):
        assert log_loss(p, y) == math.inf


@pytest.mark.parametrize(("seed", "decimals"), [(0, None), (1, 2), (2, 1)])
def test_auroc_equals_sklearn(seed, decimals):
    p, y = _binary(700, seed, decimals)
    w = np.random.default_rng(seed).random(700)
    assert auroc(p, y) == pytest.approx(sk_metrics.roc_auc_score(y, p), abs=TOL)
    assert auroc(p, y, weights=w) == pytest.approx(
        sk_metrics.roc_auc_score(y, p, sample_weight=w), abs=TOL)
    pm, ym = _multiclass(400, 4, seed, decimals)
    w = w[:len(ym)]
    for average in ("macro", "weighted"):
        for weights in (None, w):
            assert auroc(pm, ym + 1, average=average, weights=weights) == pytest.approx(
                sk_metrics.roc_auc_score(ym, pm, multi_class="ovr", average=average,
                                         sample_weight=weights), abs=TOL)
    hit = pm.argmax(axis=1) == ym
    assert auroc(pm, ym + 1, type="confidence") == pytest.approx(
        sk_metrics.roc_auc_score(hit, pm.max(axis=1)), abs=TOL)


# --------------------------------------------------------------------------
# R: pROC::auc, Hmisc::somers2 (weights), rms::val.prob's C

_R_CODE = r"""
calibr_proc <- function(p, y) as.numeric(pROC::auc(pROC::roc(y, p, direction = "<",
                                                      levels = c(0, 1), quiet = TRUE)))
calibr_somers_w <- function(p, y, w) unname(Hmisc::somers2(p, y, weights = w)["C"])
calibr_rms_c <- function(p, y) unname(rms::val.prob(p, y, pl = FALSE)["C (ROC)"])
"""


@pytest.fixture(scope="module")
def r_auc():
    try:
        import rpy2.robjects as ro

        ro.r(_R_CODE)
        ro.r("suppressPackageStartupMessages({library(pROC); library(rms)})")
    except Exception as exc:  # noqa: BLE001 - any failure to reach R is reported alike
        unavailable(f"R with pROC, Hmisc and rms not available through rpy2: {exc}")
        raise  # pragma: no cover - unavailable() raised

    def call(name, *args):
        vecs = [ro.FloatVector(np.asarray(a, dtype=np.float64).tolist()) for a in args]
        return float(np.asarray(ro.r[name](*vecs))[0])

    return call


@pytest.mark.r
@pytest.mark.parametrize(("seed", "decimals"), [(0, 3), (1, 2), (2, 1)])
def test_auroc_equals_proc_somers2_and_rms(r_auc, seed, decimals):
    p, y = _binary(300, seed, decimals)
    w = np.random.default_rng(seed).integers(1, 5, 300).astype(float)
    ours = auroc(p, y)
    assert ours == pytest.approx(r_auc("calibr_proc", p, y), abs=TOL)
    # rms bins p at 0.0002 (rms < 6.9): exact when the distinct p are further apart; it
    # leaves out the rows with a p of 0 or 1 (docs/conventions.md)
    inner = (p > 0) & (p < 1)
    assert auroc(p[inner], y[inner]) == pytest.approx(
        r_auc("calibr_rms_c", p, y), abs=TOL)
    assert auroc(p[inner], y[inner]) == pytest.approx(
        calibr.val_prob(p[inner], y[inner])["C (ROC)"], abs=TOL)
    assert auroc(p, y, weights=w) == pytest.approx(r_auc("calibr_somers_w", p, y, w), abs=TOL)


# --------------------------------------------------------------------------
# bad input


def test_auroc_of_one_class_is_refused_naming_y():
    with pytest.raises(calibr.InputError, match=re.escape(
            "`y` has one value only, so the AUROC is undefined: it needs outcomes 0 and 1")) \
            as err:
        auroc([0.2, 0.7, 0.4], [1, 1, 1])
    assert err.value.param == "y" and err.value.code == "undefined"
    with pytest.raises(calibr.InputError, match=re.escape(
            "`y` has one value only (among the rows of positive weight)")):
        auroc([0.2, 0.7, 0.4], [1, 0, 1], weights=[1, 0, 1])
    p = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]
    with pytest.raises(calibr.InputError, match=re.escape(
            "class 2 has no row or every row, so the AUROC is undefined")):
        auroc(p, [1, 3, 3])
    with pytest.raises(calibr.InputError, match=re.escape(
            "every top label is right, or every one wrong, so the AUROC is undefined")):
        auroc(p, [1, 2, 3], type="confidence")


def test_unknown_options_are_refused_naming_them():
    with pytest.raises(calibr.InputError, match=r"^`type` must be one of 'ovr', "
                                                r"'confidence'; got 'ovo'") as err:
        auroc([0.2, 0.7], [0, 1], type="ovo")
    assert err.value.param == "type"
    with pytest.raises(calibr.InputError, match=r"^`average` must be one of") as err:
        auroc([0.2, 0.7], [0, 1], average="micro")
    assert err.value.param == "average"
    for bad in (0, 0.5, -1e-3, math.nan, "x", True):
        with pytest.raises(calibr.InputError, match=re.escape(
                "`eps` must be None or a number strictly between 0 and 0.5; got")):
            log_loss([0.2, 0.7], [0, 1], eps=bad)
    with pytest.raises(TypeError, match="unexpected keyword argument 'eps'"):
        brier([0.2, 0.7], [0, 1], eps=1e-15)


def test_bad_values_get_the_input_layers_messages():
    for f in (brier, log_loss, auroc):
        with pytest.raises(calibr.InputError, match=r"^`p` must lie in \[0, 1\]"):
            f([0.2, 1.5], [0, 1])
        with pytest.raises(calibr.InputError, match=r"`y`"):
            f([0.2, 0.5], [0, 2])
        with pytest.raises(calibr.InputError, match=r"sum to 1"):
            f([[0.2, 0.5], [0.5, 0.5]], [1, 2])


def test_log_loss_counts_the_impossible_rows():
    with pytest.warns(UserWarning, match=re.escape(
            "log_loss: 1 row gives its observed outcome probability 0, so the log loss is "
            "inf; pass eps= to clip")):
        assert log_loss([[1.0, 0.0], [0.5, 0.5]], [2, 1]) == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a row of weight 0 is no row
        assert log_loss([1.0, 0.5], [0, 1], weights=[0, 1]) == pytest.approx(math.log(2))


def _lane_sum_reference(x, total):
    """The order of ``calibr._kernels.scores.lane_sum``, read from its docstring."""
    from calibr._kernels.scores import BLOCK, LANES

    for b0 in range(0, len(x), BLOCK):
        acc = [0.0] * LANES
        for i in range(b0, min(len(x), b0 + BLOCK)):
            acc[(i - b0) % LANES] += float(x[i])
        for a in acc:
            total += a
    return total


@pytest.mark.parametrize("n", [0, 5, 4096, 4096 + 13, 3 * 4096 + 7])
def test_lane_sum_adds_in_its_documented_order(n):
    from calibr._kernels.scores import lane_sum

    x = np.random.default_rng(n).random(n) * 1e3 - 400.0
    assert lane_sum(x, 0.25) == _lane_sum_reference(x, 0.25)


def test_log_loss_in_chunks_is_the_sum_of_one_pass():
    """Past one chunk the running total carries over, so the chunks add up exactly
    as one pass over all rows would (the order ``summarise`` uses per group), and
    the clipped pass picks the same probabilities as numpy does."""
    from calibr._kernels.scores import BLOCK, lane_sum
    from calibr._metrics.scores import LOG_CHUNK

    assert LOG_CHUNK % BLOCK == 0
    gen = np.random.default_rng(21)
    n = 2 * LOG_CHUNK + 4099
    p = gen.random(n)
    y = (gen.random(n) < p).astype(np.int64)
    q = np.where(y == 1, p, 1.0 - p)
    assert log_loss(p, y) == -lane_sum(np.log(q), 0.0) / n
    c = np.clip(p, 0.01, 0.99)
    assert log_loss(p, y, eps=0.01) == -lane_sum(np.log(np.where(y == 1, c, 1.0 - c)), 0.0) / n
    assert log_loss(p, y) == pytest.approx(log_loss_oracle(p, y), rel=1e-12)


# --------------------------------------------------------------------------
# everywhere a metric goes: the paths the registry does not test itself


def _groups():
    gen = np.random.default_rng(3)
    df = pd.DataFrame({"g": np.repeat(["a", "b", "c", "d"], 40), "p": gen.random(160)})
    df["y"] = (gen.random(160) < df["p"]).astype(int)
    df.loc[df["g"] == "b", "y"] = 1
    df.loc[df["g"] == "d", "y"] = 0
    return df


def test_summarise_gives_nan_and_one_warning_for_groups_of_one_class():
    df = _groups()
    with pytest.warns(RuntimeWarning, match=re.escape(
            "summarise: the metric 'auroc' is undefined on 2 groups (e.g. one class only), "
            "which get NaN: g='b'; g='d'.")) as record:
        out = calibr.summarise(df.groupby("g"), "p", "y", metrics=["brier", "auroc"])
    assert len([w for w in record if "undefined" in str(w.message)]) == 1
    assert out["auroc"].isna().tolist() == [False, True, False, True]
    for g, row in zip("abcd", out.itertuples(), strict=True):
        part = df[df["g"] == g]
        assert row.brier == brier(part["p"], part["y"])
        if g in "ac":
            assert row.auroc == auroc(part["p"], part["y"])


def test_summarise_counts_the_impossible_rows_of_the_log_loss_once():
    """A log loss of inf on some groups is said once per summary, with the rows
    counted and the groups named (the rule of a metric undefined on some groups),
    not once per group; with intervals, their resamples once more."""
    df = _groups()
    impossible = [0, 1, 45]  # two rows of group a, one of b
    df.loc[impossible, "p"] = 1.0 - df.loc[impossible, "y"]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = calibr.summarise(df.groupby("g"), "p", "y", metrics=["log_loss", "brier"])
    assert [str(w.message) for w in record] == [
        "summarise: the metric 'log_loss': 3 rows in 2 groups give their observed outcome "
        "probability 0 (the log loss is inf): g='a' (2); g='b' (1)."]
    assert record[0].filename == __file__  # the caller's line
    assert out["log_loss"].tolist()[:2] == [math.inf, math.inf]
    for g in "cd":
        part = df[df["g"] == g]
        assert out.loc[out["g"] == g, "log_loss"].item() == log_loss(part["p"], part["y"])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = calibr.summarise(df.groupby("g"), "p", "y", metrics=["log_loss"],
                               confidence_level=0.9, n_resamples=50, rng=1)
    said = [str(w.message) for w in record]
    assert len(said) == 2 and said[0].startswith("summarise: the metric 'log_loss': 3 rows")
    assert re.fullmatch(r"summarise: the metric 'log_loss': [0-9]+ resamples in 2 groups give "
                        r"the metric NaN or inf, so the intervals are NaN: g='a' \([0-9]+\); "
                        r"g='b' \([0-9]+\)\.", said[1]), said[1]
    assert out["log_loss_low"].isna().tolist() == [True, True, False, False]
    # one group of all rows
    with pytest.warns(UserWarning, match=re.escape(
            "summarise: the metric 'log_loss': 3 rows in 1 group give their observed "
            "outcome probability 0 (the log loss is inf): all rows (3).")):
        calibr.summarise(df, "p", "y", metrics=["log_loss"])


def _scores_per_group(df, cols, metrics, **kw):
    """summarise's scores and the call on each group's rows, ``(got, want)``."""
    got = calibr.summarise(df.groupby("g"), cols, "y", metrics=metrics, **kw)
    want = []
    for _, part in df.groupby("g"):
        row = []
        for spec in metrics.values():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row.append(getattr(calibr, spec.func)(part[cols], part["y"],
                                                          **spec.options, **kw))
            except calibr.InputError:
                row.append(math.nan)
        want.append(row)
    return got[list(metrics)].to_numpy(), np.array(want)


def test_summarise_scores_every_group_at_once_bit_for_bit(monkeypatch):
    """Every group in the grouped kernels (no per-group call), each the bits of the
    call on its rows: groups of 1 row, of tied p, of more than one block of the sum
    and more than one chunk of the log loss (LOG_CHUNK), interleaved in the frame."""
    from calibr._input.groups import Split
    from calibr._metrics.scores import LOG_CHUNK

    gen = np.random.default_rng(30)
    sizes = {"one": 1, "small": 7, "tied": 300, "block": 4096 + 37, "big": LOG_CHUNK + 4099}
    g = gen.permutation(np.repeat(list(sizes), list(sizes.values())))
    p = gen.random(g.size)
    p[g == "tied"] = np.round(p[g == "tied"], 1)
    df = pd.DataFrame({"g": g, "p": p, "y": (gen.random(g.size) < p).astype(np.int64)})
    df.loc[df["g"] == "one", "y"] = 1
    metrics = {"brier": calibr.metric("brier"), "log_loss": calibr.metric("log_loss"),
               "clipped": calibr.metric("log_loss", eps=0.2), "auroc": calibr.metric("auroc")}
    monkeypatch.setattr(Split, "parts", lambda self: pytest.fail("a per-group call"))
    with pytest.warns(RuntimeWarning, match=r"'auroc' is undefined on 1 group .*: g='one'\.$"):
        got, want = _scores_per_group(df, "p", metrics)
    assert np.isnan(got[:, 3]).tolist() == [False, False, True, False, False]
    np.testing.assert_array_equal(got, want)  # NaN where NaN, else the same bits


def test_summarise_multiclass_scores_every_group_at_once_bit_for_bit(monkeypatch):
    from calibr._input.groups import Split

    gen = np.random.default_rng(31)
    p, y = _multiclass(900, 3, 32, decimals=1)
    g = gen.integers(0, 4, p.shape[0])
    df = pd.DataFrame(p, columns=["p_0", "p_1", "p_2"]).assign(g=g, y=y)
    df.loc[df["g"] == 3, "y"] = np.where(df.loc[df["g"] == 3, "p_1"] > 0.9, 1, 0)  # no class 2
    metrics = {"brier": calibr.metric("brier"), "log_loss": calibr.metric("log_loss", eps=1e-3),
               "macro": calibr.metric("auroc"),
               "weighted": calibr.metric("auroc", average="weighted"),
               "confidence": calibr.metric("auroc", type="confidence")}
    monkeypatch.setattr(Split, "parts", lambda self: pytest.fail("a per-group call"))
    with pytest.warns(RuntimeWarning, match=r"'macro' is undefined on 1 group"):
        got, want = _scores_per_group(df, ["p_0", "p_1", "p_2"], metrics, classes=range(3))
    assert np.isnan(got).sum(axis=0).tolist() == [0, 0, 1, 1, 0]
    np.testing.assert_array_equal(got, want)


def test_summarise_log_loss_of_an_impossible_row_is_inf_for_its_group_only():
    df = _groups()
    df.loc[0, "p"] = 0.0  # group a: a row of y = 1 given probability 0
    df.loc[0, "y"] = 1
    with pytest.warns(UserWarning, match=re.escape(
            "the metric 'log_loss': 1 row in 1 group gives its observed outcome probability "
            "0 (the log loss is inf): g='a' (1).")):
        got = calibr.summarise(df.groupby("g"), "p", "y", metrics=["log_loss", "brier"])
    assert got["log_loss"].tolist()[0] == math.inf
    for row, (_, part) in zip(got.itertuples(), df.groupby("g"), strict=True):
        if row.Index:
            assert row.log_loss == log_loss(part["p"], part["y"])
        assert row.brier == brier(part["p"], part["y"])


def test_intervals_abstain_where_the_auroc_is_undefined():
    df = _groups()
    with pytest.warns(RuntimeWarning, match="undefined on 2 groups"):
        out = calibr.summarise(df.groupby("g"), "p", "y", metrics=["auroc", "log_loss"],
                               confidence_level=0.9, n_resamples=200, rng=1)
    assert out["auroc_low"].isna().tolist() == [False, True, False, True]
    assert out["log_loss_low"].notna().all()
    # a direct bootstrap whose resamples sometimes have one class: the interval is NaN
    p, y = np.array([0.2, 0.3, 0.6, 0.9]), np.array([0, 0, 0, 1])
    with pytest.warns(RuntimeWarning, match=r"The metric is NaN or infinite \(undefined, e.g. "
                                            r"the AUROC of one class; .* on [0-9,]+ of the 200 "
                                            r"resamples"):
        res = calibr.bootstrap(p, y, "auroc", n_resamples=200, rng=0)
    assert math.isnan(res.confidence_interval.low) and res.estimate == 1.0


def test_the_battery_is_the_registered_part_of_its_list():
    from calibr._registry import BATTERY, METRICS

    assert BATTERY[:4] == ("ece", "brier", "log_loss", "auroc")
    assert set(BATTERY) <= set(METRICS)


# --------------------------------------------------------------------------
# the command line: --metrics and --battery


def test_report_battery_adds_the_battery(capsys):
    import io

    from calibr.cli import main

    def report(*extra):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # naive_bayes: log loss inf, and its warning
            code = main(["report", "--example", "breast_cancer", "-f", "csv", *extra])
        out, err = capsys.readouterr()
        assert code == 0, err
        return pd.read_csv(io.StringIO(out))

    got = report("--battery")
    names = ["ece", "brier", "log_loss", "auroc"]
    assert [c for c in got.columns if c in names + ["mce"]] == names
    df = calibr.datasets.load_breast_cancer_predictions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = calibr.summarise(df.groupby("model"), "p", "y", metrics=names)
    for name in names:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6)  # printed to 7 digits
    assert got["log_loss"].tolist()[1] == math.inf
    got = report("--metrics", "mce,ece(bins=5)", "--battery")
    assert [c for c in got.columns if c in names + ["mce", "ece(bins=5)"]] == [
        "mce", "ece(bins=5)", "brier", "log_loss", "auroc"]
    got = report("--metrics", "auroc(type=confidence)")
    assert "auroc(type=confidence)" in got.columns


# --------------------------------------------------------------------------
# the gates: larger AUROC is better (calibr._registry: higher_is_better)


def _models(tmp_path, noise: float):
    gen = np.random.default_rng(11)
    n = 600
    x = gen.standard_normal(n)
    y = (gen.random(n) < 1 / (1 + np.exp(-2 * x))).astype(int)
    p = 1 / (1 + np.exp(-2 * x))
    noisy = 1 / (1 + np.exp(-2 * x - noise * gen.standard_normal(n)))
    base, cand = tmp_path / "base.csv", tmp_path / "cand.csv"
    pd.DataFrame({"y": y, "p": p}).to_csv(base, index=False)
    pd.DataFrame({"y": y, "p": noisy}).to_csv(cand, index=False)
    return base, cand


def test_compare_calls_a_lower_auroc_worse(tmp_path, capsys):
    import io

    from calibr.cli import main

    base, cand = _models(tmp_path, noise=3.0)
    for first, second, worse in ((base, cand, True), (cand, base, False)):
        status = main(["compare", str(first), str(second), "-m", "auroc", "-f", "csv",
                       "--n-resamples", "199"])
        out, err = capsys.readouterr()
        got = pd.read_csv(io.StringIO(out))
        assert status == (1 if worse else 0), err
        row = got.iloc[0]
        assert bool(row["worse"]) is worse
        assert row["ci_low"] == -math.inf and math.isfinite(row["ci_high"])
        assert bool(row["difference"] < 0) is worse


pytest_plugins = ["pytester"]

_GATE_MODULE = '''
import numpy as np
import pandas as pd

def test_gate(calibration_regression):
    gen = np.random.default_rng(11)
    n = 800
    x = gen.standard_normal(n)
    y = (gen.random(n) < 1 / (1 + np.exp(-2 * x))).astype(int)
    p = 1 / (1 + np.exp(-2 * x - {noise} * gen.standard_normal(n)))
    calibration_regression.check(pd.DataFrame({{"p": p, "y": y}}), p="p", y="y",
                                 metrics=["auroc"], mode="statistical", n_resamples=199, rng=1)
'''


def test_the_statistical_gate_fails_a_lower_auroc_only(pytester):
    def run(noise):
        pytester.makepyfile(test_model=_GATE_MODULE.format(noise=noise))
        return pytester.runpytest_subprocess("-p", "no:cacheprovider")  # the entry point

    run(1.0).assert_outcomes(failed=1)  # the snapshot is written
    run(1.0).assert_outcomes(passed=1)
    run(0.0).assert_outcomes(passed=1)  # a better AUROC is no regression
    worse = run(3.0)
    worse.assert_outcomes(failed=1)
    worse.stdout.fnmatch_lines(["*auroc: below its lower end (low), higher is better*"])


def test_an_infinite_log_loss_gets_no_interval():
    p, y = np.array([0.0, 0.2, 0.7, 0.9, 0.4, 0.6]), np.array([1, 0, 1, 1, 0, 1])
    with pytest.warns(RuntimeWarning, match=r"The metric is NaN or infinite .* on [0-9,]+ of "
                                            r"the 99 resamples, so the confidence interval is "
                                            r"NaN"):
        res = calibr.bootstrap(p, y, "log_loss", n_resamples=99, rng=0)
    assert res.estimate == math.inf
    assert math.isnan(res.confidence_interval.low) and math.isnan(res.confidence_interval.high)
    finite = calibr.bootstrap(p[1:], y[1:], "log_loss", n_resamples=99, rng=0)
    assert math.isfinite(finite.confidence_interval.high)


def test_the_html_report_shows_the_battery(tmp_path, capsys):
    from calibr.cli import main

    page = tmp_path / "r.html"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # naive_bayes: log loss inf, and its warning
        assert main(["report", "--example", "breast_cancer", "--battery", "--html",
                     str(page)]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    overview = text[text.index("Overview of 3 groups"):text.index("Reading the diagrams")]
    for name in ("ece", "brier", "log_loss", "auroc"):
        assert f"<strong>{name}</strong>: " in overview, name
    assert "the probability that a random positive is scored above a random negative" in text
    assert 'log_loss <data value="inf">inf</data>' in text  # a group heading: inf as a number


def test_an_impossible_row_of_any_positive_weight_makes_the_log_loss_inf():
    """A row whose outcome has probability 0 counts for any weight above 0, a fraction
    too (the weight is a share of a row, not a threshold); a weight of 0 is no row."""
    with pytest.warns(UserWarning, match=r"log_loss: 1 row gives its observed outcome "
                                         r"probability 0, so the log loss is inf"):
        assert calibr.log_loss([0.0, 0.5], [1, 1], weights=[0.5, 1.0]) == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert calibr.log_loss([0.0, 0.5], [1, 1], weights=[0.0, 1.0]) == pytest.approx(
            math.log(2), rel=1e-15)


def test_the_auroc_of_a_class_without_rows_names_that_class():
    """One-vs-rest: the class with no row is named by its label (1-based when the labels
    are 1..K), so the user knows which class to look for."""
    p = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4], [0.6, 0.2, 0.2]])
    with pytest.raises(calibr.InputError, match=r"^class 3 has no row or every row, so the "
                                                r"AUROC is undefined"):
        calibr.auroc(p, [1, 2, 2, 1])
    with pytest.raises(calibr.InputError, match=r"^class 'c' has no row or every row"):
        calibr.auroc(p, ["a", "b", "b", "a"], classes=["a", "b", "c"])
