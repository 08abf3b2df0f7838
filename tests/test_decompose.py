"""calibr.decompose: the CORP decomposition of the Brier score and the log loss, and
Murphy's over bins (``docs/definitions.md``, "Score decompositions: `decompose()`").

Against model-diagnostics 1.5.0 (``model_diagnostics.scoring.decompose``, its
documented example included), the readable oracles of ``tests/oracles/decompose.py``
(the isotonic fit in exact fractions, every score row by row), scikit-learn's
isotonic regression, and hand-worked cases in exact fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from conftest import require
from oracles.decompose import (
    corp_oracle,
    exact_brier_corp,
    fitted_oracle,
    murphy_oracle,
    pav_oracle,
)
from tolerances import (
    DECOMPOSE_IDENTITY_RTOL,
    EXACT_RTOL,
    MODEL_DIAGNOSTICS_ATOL,
    ORACLE_ATOL,
    ORACLE_RTOL,
    WEIGHTS_RTOL,
)

import calibr
from calibr import Decomposition, InputError, _binning
from calibr._metrics.decompose import _parts

md_scoring = require("model_diagnostics.scoring")
sk_isotonic = require("sklearn.isotonic")

SCORES = ("brier", "log_loss")
FIELDS = ("score", "mcb", "dsc", "unc")


def values(d: Decomposition) -> np.ndarray:
    return np.array([getattr(d, f) for f in FIELDS], dtype=float)


def model_diagnostics(p, y, score, w=None) -> np.ndarray:
    """model-diagnostics' (score, mcb, dsc, unc) of one column."""
    fn = md_scoring.SquaredError() if score == "brier" else md_scoring.LogLoss()
    row = md_scoring.decompose(y_obs=np.asarray(y, dtype=float), y_pred=np.asarray(p),
                               weights=w, scoring_function=fn).row(0, named=True)
    return np.array([row["score"], row["miscalibration"], row["discrimination"],
                     row["uncertainty"]])


def sample(n, seed, ties=False, skew=1.3, clip=1e-3):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    if ties:
        p = np.round(p, 2)
    p = np.clip(p, clip, 1 - clip)
    y = (rng.random(n) < p**skew).astype(np.int64)
    return p, y


def assert_identity(d: Decomposition) -> None:
    """score = mcb - dsc + unc, mcb >= 0 and dsc >= 0, to rounding."""
    v = np.atleast_1d
    tol = DECOMPOSE_IDENTITY_RTOL * np.maximum(1.0, np.abs(v(d.score)))
    assert np.all(np.abs(v(d.score) - (v(d.mcb) - v(d.dsc) + v(d.unc))) <= tol)
    assert np.all(v(d.mcb) >= -tol) and np.all(v(d.dsc) >= -tol)


# --------------------------------------------------------------------------
# model-diagnostics


def test_the_documented_example_of_model_diagnostics():
    # model_diagnostics.scoring.decompose's docstring: y = [0, 0, 1, 1],
    # pred = [-1, 1, 1, 2], SquaredError() -> 0.625, 0.125, 0.25, 0.75
    y, pred = [0, 0, 1, 1], [-1.0, 1.0, 1.0, 2.0]
    assert model_diagnostics(pred, y, "brier").tolist() == [0.75, 0.625, 0.125, 0.25]
    # calibr's decomposition of a column does not read the range of the values:
    # the same numbers (the public function refuses predictions outside [0, 1])
    spec = _binning.BinSpec.from_options(10, "isotonic", True)
    got = _parts(np.array(pred), np.array(y, dtype=bool), None, "brier", spec)
    assert got == (0.75, 0.625, 0.125, 0.25)
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]; 2 values do not, the "
                                         r"first at position 0 \(-1\.0\)\.$"):
        calibr.decompose(pred, y)


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("n", [2, 3, 10, 100, 1000, 100_000])
@pytest.mark.parametrize("ties", [False, True], ids=["continuous", "ties"])
def test_equals_model_diagnostics(score, n, ties):
    p, y = sample(n, seed=n + 7 * ties, ties=ties)
    got = values(calibr.decompose(p, y, score))
    np.testing.assert_allclose(got, model_diagnostics(p, y, score), rtol=0,
                               atol=MODEL_DIAGNOSTICS_ATOL)


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("ties", [False, True], ids=["continuous", "ties"])
def test_weighted_equals_model_diagnostics(score, ties):
    p, y = sample(3000, seed=11 + ties, ties=ties)
    w = np.random.default_rng(12).random(3000) * 3
    w[5::7] = 0.0  # weight 0 inside the range of the others (model-diagnostics: NaN outside)
    w[[np.argmin(p), np.argmax(p), 0]] = 1.0
    got = values(calibr.decompose(p, y, score, weights=w))
    np.testing.assert_allclose(got, model_diagnostics(p, y, score, w), rtol=0,
                               atol=MODEL_DIAGNOSTICS_ATOL)


@pytest.mark.parametrize("score", SCORES)
def test_each_class_equals_model_diagnostics_one_vs_rest(score):
    rng = np.random.default_rng(13)
    rows = rng.dirichlet(np.full(4, 0.7), 40)  # 40 distinct rows, each repeated: ties
    p = np.concatenate([rows[rng.integers(0, 40, 1000)], rng.dirichlet(np.ones(4), 1000)])
    y = np.array([rng.choice(4, p=row / row.sum()) for row in p])
    d = calibr.decompose(p, y + 1, score)
    assert d.classes == (1, 2, 3, 4)
    for k in range(4):
        want = model_diagnostics(p[:, k], (y == k).astype(int), score)
        np.testing.assert_allclose([getattr(d, f)[k] for f in FIELDS], want, rtol=0,
                                   atol=MODEL_DIAGNOSTICS_ATOL)


def test_model_diagnostics_pools_predictions_closer_than_1e_15():
    # docs/definitions.md, "Differences from model-diagnostics": scikit-learn's
    # _make_unique pools values within numpy.finfo(float64).resolution of the first
    # of their run; calibr pools equal values only
    p = np.array([0.7, np.nextafter(0.7, 1.0)])
    y = np.array([0, 1])
    md = model_diagnostics(p, y, "brier")
    assert md[1] == pytest.approx(0.04) and md[2] == 0.0  # one block: mean 0.5
    got = calibr.decompose(p, y)
    assert got.mcb == pytest.approx(0.29) and got.dsc == 0.25  # two blocks: 0 and 1
    assert np.allclose(values(got), corp_oracle(p, y), rtol=0, atol=1e-15)


# --------------------------------------------------------------------------
# the oracles: the fit in exact fractions, every score row by row


def adversarial(seed):
    """Samples with every kind of tie: few distinct values, the decimal grid,
    runs of equal outcomes, values at 0 and 1 (with outcomes that agree)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in (1, 2, 3, 5, 17, 60, 301):
        p = rng.integers(0, 11, n) / 10
        y = (rng.random(n) < p).astype(np.int64)
        out.append((p, y))
        p = rng.choice([0.2, 0.5, 0.55], n)
        out.append((p, rng.integers(0, 2, n)))
        p = np.sort(rng.random(n))
        out.append((p, (np.arange(n) % 3 == 0).astype(np.int64)))  # decreasing blocks
        out.append((rng.random(n), np.zeros(n, np.int64)))
        out.append((rng.random(n), np.ones(n, np.int64)))
        out.append((np.full(n, 0.3), rng.integers(0, 2, n)))
    return out


@pytest.mark.parametrize("case", range(42))
@pytest.mark.parametrize("score", SCORES)
def test_fast_equals_the_oracle(case, score):
    p, y = adversarial(5)[case]
    if score == "log_loss":  # 0 and 1 only where the outcome agrees
        p = np.where(p == 0.0, np.where(y == 1, 0.05, 0.0), p)
        p = np.where(p == 1.0, np.where(y == 0, 0.95, 1.0), p)
    d = calibr.decompose(p, y, score)
    np.testing.assert_allclose(values(d), corp_oracle(p, y, score), rtol=ORACLE_RTOL,
                               atol=ORACLE_ATOL)
    assert_identity(d)


@pytest.mark.parametrize("seed", range(6))
def test_blocks_are_the_exact_isotonic_fit_and_scikit_learns(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    p = np.round(rng.random(n), int(rng.integers(1, 4)))
    y = (rng.random(n) < p**2).astype(np.int64)
    w = None if seed % 2 else rng.integers(0, 4, n).astype(float)
    if w is not None and w.sum() == 0:
        w[0] = 1.0
    blocks = _binning.isotonic_blocks(p, y, w)
    groups, fitted = pav_oracle(p, y, w)
    assert blocks.lowest.tolist() == [g[0] for g in groups]
    assert blocks.highest.tolist() == [g[-1] for g in groups]
    np.testing.assert_allclose(blocks.fitted, [float(f) for f in fitted], rtol=EXACT_RTOL)
    assert np.all(np.diff(blocks.fitted) > 0)  # maximal blocks: strictly increasing
    iso = sk_isotonic.IsotonicRegression().fit(p, y, sample_weight=w)
    keep = slice(None) if w is None else w > 0
    np.testing.assert_allclose(fitted_oracle(p, y, w)[keep], iso.predict(p)[keep],
                               rtol=ORACLE_RTOL, atol=ORACLE_ATOL)


# --------------------------------------------------------------------------
# hand-worked cases, in exact fractions


HAND = {
    # ties: the two 0.5 are one group (mean 1/2): fit 0, 1/2, 1/2, 1
    "ties": (["0.1", "0.5", "0.5", "0.9"], [0, 0, 1, 1]),
    # a violation pooled all the way: one block of mean 1/2
    "pooled": (["0.2", "0.4", "0.6", "0.8"], [1, 0, 1, 0]),
    "single row": (["0.3"], [1]),
    "every p equal": (["0.3"] * 5, [0, 1, 0, 1, 1]),
    "y all 0": (["0.2", "0.6", "0.9"], [0, 0, 0]),
    "y all 1": (["0.2", "0.6", "0.9"], [1, 1, 1]),
    "already isotonic": (["0", "0.5", "0.5", "1"], [0, 0, 1, 1]),
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_worked_brier_in_exact_fractions(name):
    ps, y = HAND[name]
    d = calibr.decompose([float(Fraction(v)) for v in ps], y)
    want = exact_brier_corp(ps, y)
    for got, exact in zip(values(d), want, strict=True):
        assert got == pytest.approx(float(exact), rel=EXACT_RTOL, abs=1e-16)
    assert_identity(d)


def test_hand_worked_values():
    d = calibr.decompose([0.1, 0.5, 0.5, 0.9], [0, 0, 1, 1])
    assert values(d) == pytest.approx([0.13, 0.005, 0.125, 0.25], rel=EXACT_RTOL)
    # every p equal: one block of the mean outcome; DSC 0, MCB (p - ybar)^2
    d = calibr.decompose(np.full(5, 0.3), [0, 1, 0, 1, 1])
    assert d.dsc == 0.0 and d.mcb == pytest.approx(0.09, rel=EXACT_RTOL)
    assert d.unc == pytest.approx(0.24, rel=EXACT_RTOL)
    # y all 0 or all 1, a single row: no uncertainty, no discrimination
    for p, y in (([0.2, 0.6, 0.9], [0, 0, 0]), ([0.2, 0.6, 0.9], [1, 1, 1]), ([0.3], [1])):
        for score in SCORES:
            d = calibr.decompose(p, y, score)
            assert d.unc == 0.0 and d.dsc == 0.0 and d.mcb == d.score
            assert math.copysign(1.0, d.unc) == 1.0  # 0.0, not -0.0
    # the log loss of one pooled block of mean 1/2: UNC = log 2, DSC 0
    d = calibr.decompose([0.2, 0.4, 0.6, 0.8], [1, 0, 1, 0], "log_loss")
    assert d.unc == pytest.approx(math.log(2), rel=EXACT_RTOL) and d.dsc == 0.0
    want = -(math.log(0.2) + math.log(0.6) + math.log(0.6) + math.log(0.2)) / 4
    assert d.score == pytest.approx(want, rel=EXACT_RTOL)
    # a perfectly isotonic, perfectly sharp forecast: all of UNC is discrimination
    d = calibr.decompose([0.0, 0.0, 1.0], [0, 0, 1], "log_loss")
    assert (d.score, d.mcb) == (0.0, 0.0) and d.dsc == pytest.approx(d.unc, rel=EXACT_RTOL)


# --------------------------------------------------------------------------
# Murphy's decomposition over calibr's bins


MURPHY = [
    dict(binning="equal-width"),
    dict(binning="equal-width", bins=7, right=False),
    dict(binning="equal-mass", bins=5),
    dict(binning="equal-mass", bins=8, right=False),
    dict(binning="equal-width", bins=[0, 0.3, 0.35, 1]),
]


@pytest.mark.parametrize("opts", MURPHY, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("ties", [False, True], ids=["continuous", "ties"])
def test_murphy_equals_the_numpy_oracle(opts, score, ties):
    p, y = sample(500, seed=21 + ties, ties=ties, clip=1e-2)
    w = None if ties else np.random.default_rng(22).integers(0, 3, 500).astype(float)
    if w is not None and opts["binning"] == "equal-width":
        w = w + np.random.default_rng(23).random(500)  # real weights
    d = calibr.decompose(p, y, score, weights=w, **opts)
    spec = _binning.BinSpec.from_options(
        opts.get("bins", 10) if not isinstance(opts.get("bins"), list)
        else np.array(opts["bins"], dtype=float), opts["binning"], opts.get("right", True))
    keep = slice(None) if w is None else w > 0
    breaks = spec.edges(p[keep], None if w is None else w[keep])
    want = murphy_oracle(p, y, breaks, opts.get("right", True), score, w)
    np.testing.assert_allclose(values(d), want, rtol=ORACLE_RTOL, atol=ORACLE_ATOL)
    assert d.binning == opts["binning"]


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("weighted", [False, True])
def test_murphy_counts_a_bin_of_one_row(score, weighted):
    """A bin holding a single row (of any positive weight) is a bin like any other;
    empty bins (the second and third of ten) are left out."""
    rng = np.random.default_rng(26)
    p = np.concatenate([[0.05], rng.uniform(0.3, 0.95, 199)])
    y = (rng.random(200) < p).astype(np.int64)
    y[0] = 1  # the lone row far from its p: its bin's MCB term is large
    w = rng.integers(1, 4, 200).astype(float) if weighted else None
    for bins in (5, 10):
        d = calibr.decompose(p, y, score, weights=w, binning="equal-width", bins=bins)
        breaks = np.linspace(0, 1, bins + 1)
        assert np.sum((p > breaks[0]) & (p <= breaks[1])) == 1
        assert (bins == 10) == (np.sum((p > breaks[1]) & (p <= breaks[3])) == 0)
        want = murphy_oracle(p, y, breaks, True, score, w)
        np.testing.assert_allclose(values(d), want, rtol=ORACLE_RTOL, atol=ORACLE_ATOL)


@pytest.mark.parametrize("score", SCORES)
def test_murphy_is_exact_when_p_is_constant_within_each_bin(score):
    rng = np.random.default_rng(24)
    p = rng.choice([0.05, 0.25, 0.45, 0.65, 0.85], 400)  # one value per bin of 5
    y = (rng.random(400) < p).astype(np.int64)
    d = calibr.decompose(p, y, score, binning="equal-width", bins=5)
    assert_identity(d)
    # and then the bins are the tie groups: CORP's recalibrated score is the same
    # when the bin means increase, so DSC and UNC agree
    c = calibr.decompose(p, y, score)
    assert c.unc == d.unc


def test_murphy_is_not_an_exact_split_within_bins():
    p, y = sample(200, seed=25)
    d = calibr.decompose(p, y, binning="equal-width", bins=2)
    within = d.score - (d.mcb - d.dsc + d.unc)
    assert abs(within) > 1e-4  # the within-bin terms (Stephenson et al. 2008)


# --------------------------------------------------------------------------
# weights


@pytest.mark.parametrize("binning", ["isotonic", "equal-width", "equal-mass"])
@pytest.mark.parametrize("score", SCORES)
def test_whole_number_weights_are_repeated_rows(binning, score):
    p, y = sample(300, seed=31, ties=True)
    w = np.random.default_rng(32).integers(0, 4, 300)
    got = calibr.decompose(p, y, score, weights=w, binning=binning)
    want = calibr.decompose(np.repeat(p, w), np.repeat(y, w), score, binning=binning)
    np.testing.assert_allclose(values(got), values(want), rtol=WEIGHTS_RTOL, atol=1e-15)
    assert got.n == 300 and want.n == w.sum()


@pytest.mark.parametrize("score", SCORES)
def test_weight_zero_drops_the_row_and_scale_does_not_matter(score):
    p, y = sample(100, seed=33)
    w = np.random.default_rng(34).random(100)
    w[::4] = 0.0
    p0 = p.copy()
    if score == "log_loss":  # a row of weight 0 may give probability 0 to what happened
        p0[0] = 1.0 - y[0]
    got = values(calibr.decompose(p0, y, score, weights=w))
    keep = w > 0
    want = values(calibr.decompose(p[keep], y[keep], score, weights=w[keep]))
    np.testing.assert_allclose(got, want, rtol=WEIGHTS_RTOL, atol=1e-15)
    scaled = values(calibr.decompose(p0, y, score, weights=w * 1024.0))
    np.testing.assert_allclose(scaled, got, rtol=WEIGHTS_RTOL, atol=1e-15)


def test_unit_weights_are_no_weights():
    p, y = sample(500, seed=35, ties=True)
    np.testing.assert_allclose(values(calibr.decompose(p, y, weights=np.ones(500))),
                               values(calibr.decompose(p, y)), rtol=WEIGHTS_RTOL, atol=1e-16)


# --------------------------------------------------------------------------
# the result, the inputs it reads


def test_the_result():
    p, y = sample(50, seed=41)
    d = calibr.decompose(p, y, "log_loss")
    assert isinstance(d, Decomposition)
    assert all(type(getattr(d, f)) is float for f in FIELDS)
    assert (d.scoring, d.binning, d.n, d.classes) == ("log_loss", "isotonic", 50, None)
    frame = d.to_frame()
    assert list(frame.columns) == list(FIELDS) and frame.iloc[0].tolist() == values(d).tolist()
    with pytest.raises(AttributeError):
        d.mcb = 0.0  # frozen


def test_the_multiclass_result_has_one_value_per_class():
    rng = np.random.default_rng(42)
    p = rng.dirichlet(np.ones(3), 80)
    labels = np.array(["cat", "dog", "emu"])
    y = labels[rng.integers(0, 3, 80)]
    d = calibr.decompose(pd.DataFrame(p, columns=labels), y)
    assert d.classes == ("cat", "dog", "emu")
    for f in FIELDS:
        arr = getattr(d, f)
        assert arr.shape == (3,) and arr.dtype == np.float64 and not arr.flags.writeable
    for k, label in enumerate(labels):  # column k against its indicator
        one = calibr.decompose(p[:, k], (y == label).astype(int))
        assert [getattr(d, f)[k] for f in FIELDS] == values(one).tolist()
    frame = d.to_frame()
    assert frame["class"].tolist() == list(labels)
    assert frame.columns.tolist() == ["class", *FIELDS]
    # the Brier terms summed over the classes decompose the multiclass Brier score
    onehot = (y[:, None] == labels).astype(float)
    assert d.score.sum() == pytest.approx(np.mean(np.sum((p - onehot) ** 2, axis=1)),
                                          rel=EXACT_RTOL)
    assert_identity(d)


def test_inputs_in_every_form_give_the_same_numbers():
    p, y = sample(60, seed=43, ties=True)
    want = values(calibr.decompose(p, y))
    for pp, yy, kw in ((p.tolist(), y.tolist(), {}), (pd.Series(p), pd.Series(y), {}),
                       (p, y.astype(bool), {}), (p, np.where(y == 1, "yes", "no"),
                                                 {"classes": ("no", "yes")}),
                       (p[::-1], y[::-1], {})):
        np.testing.assert_allclose(values(calibr.decompose(pp, yy, **kw)), want,
                                   rtol=ORACLE_RTOL, atol=ORACLE_ATOL)


def test_na_rm_drops_incomplete_rows():
    p, y = sample(40, seed=44)
    pn = p.copy()
    pn[[3, 9]] = np.nan
    d = calibr.decompose(pn, y, na_rm=True)
    keep = ~np.isnan(pn)
    assert d.n == 38
    assert values(d).tolist() == values(calibr.decompose(p[keep], y[keep])).tolist()
    with pytest.raises(InputError, match=r"^`p` must not contain missing values; 2 values are "
                                         r"missing, the first at position 3\."):
        calibr.decompose(pn, y)


# --------------------------------------------------------------------------
# bad input: an InputError naming the argument, nothing changed


def test_an_infinite_log_loss_is_refused_naming_the_first_value():
    p = np.array([0.2, 1.0, 0.5, 0.0, 0.0])
    y = np.array([0, 0, 1, 1, 0])
    before = p.copy()
    with pytest.raises(InputError, match=(
            r"^`p` must not be 0 where `y` is 1 nor 1 where `y` is 0 for score = 'log_loss': "
            r"the log loss is infinite there, and calibr does not clip; 2 values do not, the "
            r"first at position 1 \(p = 1\.0, y = 0\)\.$")) as err:
        calibr.decompose(p, y, "log_loss")
    assert err.value.param == "p" and np.array_equal(p, before)
    # the Brier score is finite there; 0 and 1 that agree with y are fine
    assert math.isfinite(calibr.decompose(p, y).score)
    assert calibr.decompose([0.0, 1.0], [0, 1], "log_loss").score == 0.0
    # a row of weight 0 is not refused: it drops
    d = calibr.decompose(p, y, "log_loss", weights=[1, 0, 1, 0, 1])
    assert math.isfinite(d.score)


def test_an_infinite_log_loss_of_a_matrix_names_row_and_column():
    p = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])
    with pytest.raises(InputError, match=(
            r"^`p` must not be 0 in the column of the observed class nor 1 in another column "
            r"for score = 'log_loss': the log loss is infinite there, and calibr does not "
            r"clip; 2 values do not, the first at row 2, column 0 \(p = 0\.0, y = 1\)\.$")):
        calibr.decompose(p, [1, 3, 1], "log_loss")


def test_an_infinite_log_loss_after_na_rm_counts_the_complete_rows():
    p = np.array([np.nan, 0.3, 0.0])
    with pytest.raises(InputError, match=r"the first at position 1 of the 2 complete rows "
                                         r"\(na_rm=True dropped 1\) \(p = 0\.0, y = 1\)\.$"):
        calibr.decompose(p, [1, 1, 1], "log_loss", na_rm=True)


BAD = [
    (dict(score="mse"), "score", r"^`score` must be one of 'brier', 'log_loss'; got 'mse'\.$"),
    (dict(score=None), "score", r"^`score` must be one of 'brier', 'log_loss'; got None\.$"),
    (dict(binning="quantile"), "binning", r"^`binning` must be one of 'isotonic', "
                                          r"'equal-width', 'equal-mass'; got 'quantile'\.$"),
    (dict(bins=5), "bins", r"^`bins` does not apply to binning = 'isotonic': its bins are the "
                           r"blocks of the isotonic fit, one per fitted value; got bins = 5\. "
                           r"Leave `bins` out\.$"),
    (dict(bins=[0, 0.5, 1]), "bins", r"^`bins` does not apply to binning = 'isotonic'.*; got "
                                     r"3 breaks\."),
    (dict(bins=[0, 0.5, 1], binning="equal-mass"), "binning",
     r"^`binning` must be 'equal-width' \(the default\) when `bins` gives the breaks"),
    (dict(bins=0, binning="equal-width"), "bins",
     r"^`bins` must be a single positive integer; got 0\.$"),
    (dict(right="yes"), "right", r"^`right` must be True or False; got 'yes'\.$"),
    (dict(na_rm=1), "na_rm", r"^`na_rm` must be True or False; got 1\.$"),
    (dict(weights=[1, -1, 1]), "weights", r"^`weights` must be nonnegative; 1 value does not, "
                                          r"the first at position 1 \(-1\.0\)\.$"),
    (dict(weights=[1.5, 1, 1], binning="equal-mass"), "weights",
     r"^`weights` must be whole numbers for binning = \"equal-mass\""),
]


@pytest.mark.parametrize("kw,param,match", BAD, ids=[m[:30] for _, _, m in BAD])
def test_bad_options_are_input_errors_naming_the_argument(kw, param, match):
    p = np.array([0.1, 0.5, 0.9])
    y = np.array([0, 1, 1])
    before = p.copy(), y.copy()
    with pytest.raises(InputError, match=match) as err:
        calibr.decompose(p, y, **kw)
    assert err.value.param == param
    assert np.array_equal(p, before[0]) and np.array_equal(y, before[1])


def test_probabilities_only():
    with pytest.raises(InputError, match=r"^`p` must lie in \[0, 1\]; 1 value does not, the "
                                         r"first at position 1 \(1\.5\)\.$"):
        calibr.decompose([0.2, 1.5], [0, 1])
    with pytest.raises(InputError, match=r"^`y` must be 0/1 or boolean for a vector `p`; 1 "
                                         r"value does not, the first at position 1 \(2\)\.$"):
        calibr.decompose([0.2, 0.5], [0, 2])
