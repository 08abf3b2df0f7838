"""calibr.bootstrap() and calibr.paired_bootstrap().

The references, each independent of the fast kernels:

* every replicate value against the public metric (R-checked elsewhere) called
  on the rows the replicate drew, ``p[idx], y[idx]``, with ``idx`` recomputed
  here from the documented scheme (``floor(n * rng.random(n))`` per replicate);
* every jackknife value (BCa) against the metric called without that row;
* every interval against ``scipy.stats.bootstrap`` itself, given the same
  bootstrap distribution (``bootstrap_result=``) and its own jackknife, which
  calls the metric on each leave-one-out sample;
* hand-worked values for the p-value and the one-sided intervals.
"""

from __future__ import annotations

import fractions
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import require

import calibr
from calibr import InputError, InputTypeError
from calibr._inference import bootstrap as bt

RTOL = 1e-12  # replicate == metric on the drawn rows, to 1e-12 (docs/bootstrap.md)

_GEN = np.random.default_rng(20261201)
N = 240
P = np.round(_GEN.random(N), 2)  # many ties and values on the bin edges
P[:6] = [0.0, 1.0, 0.1, 0.2, 0.5, 0.3]
Y = (_GEN.random(N) < P**2).astype(np.int64)  # overconfident: metrics well above 0
PM = _GEN.dirichlet(np.full(4, 0.7), N)
YM = np.array([_GEN.choice(4, p=r**2 / np.sum(r**2)) for r in PM])  # sharper than PM

CASES = [
    ("ece", {}), ("ece", {"bins": 7}), ("mce", {}), ("mce", {"bins": 3}),
    ("skce", {}), ("skce", {"estimator": "biased"}), ("skce", {"estimator": "ul"}),
    ("skce", {"bandwidth": 0.05}), ("skce", {"bandwidth": "median"}),
    ("mmce", {}), ("mmce", {"bandwidth": "median"}),
]
MC_CASES = [
    ("ece", {}), ("ece", {"type": "confidence"}), ("mce", {}), ("mce", {"type": "confidence"}),
    ("skce", {"type": "classwise"}), ("skce", {"type": "confidence"}),
    ("skce", {"type": "classwise", "estimator": "biased"}),
    ("skce", {"type": "confidence", "estimator": "ul"}),
    ("skce", {"type": "classwise", "estimator": "ul"}),
    ("skce", {"type": "canonical"}), ("skce", {"type": "canonical", "estimator": "ul"}),
    ("skce", {"type": "confidence", "bandwidth": "median"}),
    ("mmce", {}),
]


def _rows(seed: int, n: int, count: int) -> list[np.ndarray]:
    """The rows of each replicate, by the documented scheme: min(16, count) chunks
    of consecutive replicates, chunk c drawing from the c-th child of the seed."""
    chunks = min(16, count)
    seeds = np.random.SeedSequence(seed).spawn(chunks)
    rows = []
    for c in range(chunks):
        gen = np.random.default_rng(seeds[c])
        for _ in range(c * count // chunks, (c + 1) * count // chunks):
            rows.append(np.minimum((n * gen.random(n)).astype(np.int64), n - 1))
    return rows


def _metric(name):
    return getattr(calibr, name)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-300)


# ------------------------------------------------------------------ replicates


@pytest.mark.parametrize(("name", "opts"), CASES, ids=[f"{m}{o}" for m, o in CASES])
def test_binary_replicates_equal_the_metric_on_the_drawn_rows(name, opts):
    res = calibr.bootstrap(P, Y, name, n_resamples=25, rng=7, **opts)
    fn = _metric(name)
    assert res.estimate == fn(P, Y, **opts)
    for b, idx in enumerate(_rows(7, N, 25)):
        want = fn(P[idx], Y[idx], **opts)
        assert _close(res.bootstrap_distribution[b], want), (b, res.bootstrap_distribution[b],
                                                             want)


@pytest.mark.parametrize(("name", "opts", "kind"), [
    ("ece", {"right": False}, "binned"),
    ("mce", {"bins": np.array([0.0, 0.25, 0.3, 1.0]), "right": False}, "binned"),
    ("ece", {"bins": [0.0, 0.5, 0.7, 1.0]}, "binned"),
    ("ece", {"binning": "equal-mass", "bins": 5}, "generic"),
    ("mce", {"binning": "equal-mass", "bins": 4, "right": False}, "generic"),
], ids=["left-closed", "breaks-left", "breaks", "equal-mass", "equal-mass-left"])
def test_binning_options_replicates_equal_the_metric_on_the_drawn_rows(name, opts, kind):
    """The metric's binning options pass through: fixed bins on the fast path,
    equal-mass bins (placed on each resample) by calling the metric."""
    res = calibr.bootstrap(P, Y, name, n_resamples=20, rng=8, **opts)
    fn = _metric(name)
    assert res.estimate == fn(P, Y, **opts)
    checked, _, opts_c = bt.check_metric(name, opts, "bootstrap")
    assert bt._Plan(checked, fn, opts_c, calibr._input.prepare(P, Y)).kind == kind
    for b, idx in enumerate(_rows(8, N, 20)):
        assert _close(res.bootstrap_distribution[b], fn(P[idx], Y[idx], **opts)), b


@pytest.mark.parametrize(("name", "opts"), MC_CASES, ids=[f"{m}{o}" for m, o in MC_CASES])
def test_multiclass_replicates_equal_the_metric_on_the_drawn_rows(name, opts):
    n = 120
    p, y = PM[:n], YM[:n]
    res = calibr.bootstrap(p, y + 1, name, n_resamples=12, rng=3, **opts)
    fn = _metric(name)
    assert res.estimate == fn(p, y + 1, **opts)
    for b, idx in enumerate(_rows(3, n, 12)):
        want = fn(p[idx], y[idx], classes=range(4), **opts)
        assert _close(res.bootstrap_distribution[b], want), (b, res.bootstrap_distribution[b],
                                                             want)


ECCE_OPTIONS = [{"kind": k, "scale": s} for k in ("ks", "kuiper")
                for s in ("probability", "sigma")]


@pytest.mark.parametrize("opts", ECCE_OPTIONS, ids=lambda o: f"{o['kind']}-{o['scale']}")
@pytest.mark.parametrize("data", ["ties", "continuous", "multiclass", "tiny"])
def test_ecce_replicates_are_the_call_on_each_resample_bit_for_bit(opts, data):
    """ecce's O(n) replicates (the rows sorted once, a count per sorted row) are the
    numbers of ecce(p[idx], y[idx]) with the same draws, bit for bit: the same
    additions in the same order (p rounded to 2 decimals: blocks of ties with
    both outcomes; a matrix: the top-label confidence)."""
    gen = np.random.default_rng(31)
    p, y, kw = {"ties": (P, Y, {}),
                "continuous": (gen.random(300), None, {}),
                "multiclass": (PM, YM, {"classes": range(4)}),
                "tiny": (np.array([0.3, 0.3, 0.8]), np.array([1, 0, 1]), {})}[data]
    if y is None:
        y = (gen.random(p.shape[0]) < p).astype(np.int64)
    n = p.shape[0]
    res = calibr.bootstrap(p, y, "ecce", n_resamples=33, rng=9, **kw, **opts)
    checked, fn, opts_c = bt.check_metric("ecce", opts, "bootstrap")
    assert bt._Plan(checked, fn, opts_c, calibr._input.prepare(p, y, **kw)).kind == \
        "cumulative"
    want = [calibr.ecce(p[idx], y[idx], **kw, **opts) for idx in _rows(9, n, 33)]
    assert res.bootstrap_distribution.tobytes() == np.array(want).tobytes()
    generic = calibr.bootstrap(p, y, lambda a, b, **o: calibr.ecce(a, b, **o),
                               n_resamples=33, rng=9, **kw, **opts)
    assert res.bootstrap_distribution.tobytes() == generic.bootstrap_distribution.tobytes()
    assert res.estimate == calibr.ecce(p, y, **kw, **opts)


@pytest.mark.parametrize("opts", ECCE_OPTIONS, ids=lambda o: f"{o['kind']}-{o['scale']}")
def test_ecce_replicates_are_the_resampling_counts_as_frequency_weights(opts):
    """A replicate is ecce of the sample with its resampling counts as frequency
    weights (``docs/definitions.md``, "Frequency weights"), to rounding: the
    weighted path multiplies a row's step by its count where the replicate adds
    it count times. (bootstrap() itself takes no weights: docs/bootstrap.md.)"""
    res = calibr.bootstrap(P, Y, "ecce", n_resamples=20, rng=12, **opts)
    for b, idx in enumerate(_rows(12, N, 20)):
        counts = np.bincount(idx, minlength=N).astype(np.float64)
        want = calibr.ecce(P, Y, weights=counts, **opts)
        assert _close(res.bootstrap_distribution[b], want), (b, want)


def test_ecce_is_the_same_number_for_the_rows_in_any_order():
    """Every sum of ecce runs in the sorted order, so a permutation of the rows
    gives the same bits (what makes the replicates exact)."""
    gen = np.random.default_rng(13)
    for p, y in ((P, Y), (gen.random(500), (gen.random(500) < 0.5).astype(int))):
        perm = gen.permutation(p.shape[0])
        for opts in ECCE_OPTIONS:
            assert calibr.ecce(p[perm], y[perm], **opts) == calibr.ecce(p, y, **opts)


def test_many_chunks_and_many_classes():
    """34 replicates in 16 chunks (2 or 3 each, on every thread), K = 10."""
    gen = np.random.default_rng(5)
    n = 400
    p = gen.dirichlet(np.ones(10), n)
    y = gen.integers(0, 10, n)
    for name, opts in [("ece", {}), ("mce", {"type": "confidence"}),
                       ("skce", {"type": "classwise"}), ("skce", {"type": "confidence",
                                                                  "estimator": "ul"})]:
        res = calibr.bootstrap(p, y, name, n_resamples=34, rng=11, classes=range(10), **opts)
        fn = _metric(name)
        for b, idx in enumerate(_rows(11, n, 34)):
            want = fn(p[idx], y[idx], classes=range(10), **opts)
            assert _close(res.bootstrap_distribution[b], want), (name, b)


def test_tiny_samples():
    # n = 1: every replicate is the sample itself
    res = calibr.bootstrap([0.3], [1], "ece", n_resamples=5, rng=0)
    assert list(res.bootstrap_distribution) == [0.7] * 5
    assert res.confidence_interval == (0.7, 0.7)
    # n = 2, uq: a replicate that draws one row twice is the kernel of that row with
    # itself, e^2 (h_ii = k(x, x) e^2 = e^2)
    res = calibr.bootstrap([0.25, 0.5], [1, 0], "skce", n_resamples=40, rng=1)
    values = set(np.round(res.bootstrap_distribution, 15))
    both = round(0.75 * -0.5 * math.exp(-0.25 / 0.2), 15)
    assert values <= {round(0.75**2, 15), round(0.5**2, 15), both}
    assert len(values) == 3


def test_same_rng_same_result_and_generators_advance():
    a = calibr.bootstrap(P, Y, n_resamples=30, rng=4)
    b = calibr.bootstrap(P, Y, n_resamples=30, rng=4)
    assert np.array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    assert a.confidence_interval == b.confidence_interval
    gen = np.random.default_rng(4)
    c = calibr.bootstrap(P, Y, n_resamples=30, rng=gen)
    d = calibr.bootstrap(P, Y, n_resamples=30, rng=gen)  # the state advanced
    assert np.array_equal(c.bootstrap_distribution, a.bootstrap_distribution)
    assert not np.array_equal(d.bootstrap_distribution, a.bootstrap_distribution)
    e = calibr.bootstrap(P, Y, n_resamples=30, rng=5)
    assert not np.array_equal(e.bootstrap_distribution, a.bootstrap_distribution)
    assert not a.bootstrap_distribution.flags.writeable


def test_result_fields():
    res = calibr.bootstrap(P, Y, "mce", n_resamples=99, rng=0, confidence_level=0.9,
                           method="basic", bins=4)
    assert (res.metric, res.method, res.n_resamples, res.n) == ("mce", "basic", 99, N)
    assert res.confidence_level == 0.9
    assert res.standard_error == float(np.std(res.bootstrap_distribution, ddof=1))
    assert res.estimate == calibr.mce(P, Y, bins=4)
    assert calibr.bootstrap(P, Y, n_resamples=30, rng=0, method="BCa").method == "bca"


def test_na_rm_and_pandas_input():
    p = pd.Series(np.r_[P[:50], np.nan])
    y = pd.Series(np.r_[Y[:50], 1])
    with pytest.raises(InputError, match="`p`"):
        calibr.bootstrap(p, y, n_resamples=3)
    res = calibr.bootstrap(p, y, n_resamples=20, rng=2, na_rm=True)
    ref = calibr.bootstrap(P[:50], Y[:50], n_resamples=20, rng=2)
    assert np.array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)
    assert res.n == 50
    frame = pd.DataFrame(PM[:60], columns=list("abcd"))
    labels = np.array(list("abcd"))[YM[:60]]
    res = calibr.bootstrap(frame, labels, "ece", n_resamples=10, rng=1, type="confidence")
    ref = calibr.bootstrap(PM[:60], YM[:60] + 1, "ece", n_resamples=10, rng=1,
                           type="confidence")
    assert np.array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)


def test_callable_metric():
    def brier(p, y):
        return float(np.mean((np.asarray(p) - np.asarray(y)) ** 2))

    res = calibr.bootstrap(P, Y, brier, n_resamples=15, rng=9)
    assert res.metric == "brier"
    for b, idx in enumerate(_rows(9, N, 15)):
        assert res.bootstrap_distribution[b] == brier(P[idx], Y[idx])


# ------------------------------------------------------------------ jackknife


@pytest.mark.parametrize(("name", "opts", "multiclass"), [
    *[(m, o, False) for m, o in CASES if o.get("estimator") != "ul" and
      o.get("bandwidth") != "median"],
    ("ece", {}, True), ("ece", {"type": "confidence"}, True), ("mce", {}, True),
    ("mce", {"type": "confidence"}, True), ("skce", {"type": "classwise"}, True),
    ("skce", {"type": "confidence", "estimator": "biased"}, True), ("mmce", {}, True),
])
def test_fast_jackknife_equals_the_metric_without_each_row(name, opts, multiclass):
    p, y = (PM[:90], YM[:90]) if multiclass else (P[:90], Y[:90])
    kw = {"classes": range(4)} if multiclass else {}
    fn = _metric(name)
    checked, _, opts_c = bt.check_metric(name, opts, "bootstrap")
    plan = bt._Plan(checked, fn, opts_c, calibr._input.prepare(p, y, **kw))
    assert plan.kind in ("binned", "scalar")
    jack = plan.jackknife()
    for i in range(p.shape[0]):
        keep = np.arange(p.shape[0]) != i
        want = fn(p[keep], y[keep], **kw, **opts)
        assert math.isclose(jack[i], want, rel_tol=1e-11, abs_tol=1e-15), (i, jack[i], want)


def test_mce_jackknife_when_the_largest_gap_is_removed():
    # bins of 2: the largest gap is the lone row at 0.9 with y = 0 (gap 0.9); without
    # it the MCE is the other bin's gap
    p = np.array([0.9, 0.2, 0.3, 0.4])
    y = np.array([0, 0, 1, 1])
    res = calibr.bootstrap(p, y, "mce", bins=2, n_resamples=5, rng=0, method="bca")
    assert res.estimate == pytest.approx(0.9)
    plan = bt._Plan("mce", calibr.mce, {"bins": 2}, calibr._input.prepare(p, y))
    jack = plan.jackknife()
    assert jack[0] == pytest.approx(abs(2 / 3 - 0.3))
    for i in range(1, 4):
        assert jack[i] == pytest.approx(0.9)


# ------------------------------------------------------------------ intervals vs scipy


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
@pytest.mark.parametrize(("name", "opts"), [("ece", {}), ("mce", {}), ("skce", {}),
                                            ("mmce", {}), ("skce", {"estimator": "ul"})])
@pytest.mark.parametrize("level", [0.95, 0.8])
def test_intervals_equal_scipy(method, name, opts, level):
    st = require("scipy.stats")
    n = 150
    p, y = P[:n], Y[:n]
    res = calibr.bootstrap(p, y, name, n_resamples=400, rng=13, method=method,
                           confidence_level=level, **opts)
    fn = _metric(name)

    def statistic(i):
        i = i.astype(np.int64)
        return fn(p[i], y[i], **opts)

    ref = st.bootstrap((np.arange(n),), statistic, n_resamples=0, vectorized=False,
                       bootstrap_result=res, method=method, confidence_level=level)
    assert np.allclose(res.confidence_interval, ref.confidence_interval, rtol=1e-12, atol=0)
    assert res.standard_error == pytest.approx(float(ref.standard_error), rel=1e-14)


def test_paired_intervals_equal_scipy():
    st = require("scipy.stats")
    n = 150
    p, y = P[:n], Y[:n]
    q = np.sqrt(p)
    for method, alternative in [("BCa", "two-sided"), ("percentile", "less"),
                                ("basic", "greater")]:
        res = calibr.paired_bootstrap(p, q, y, "ece", n_resamples=300, rng=2, method=method,
                                      alternative=alternative)

        def statistic(i):
            i = i.astype(np.int64)
            return calibr.ece(p[i], y[i]) - calibr.ece(q[i], y[i])

        ref = st.bootstrap((np.arange(n),), statistic, n_resamples=0, vectorized=False,
                           bootstrap_result=res, method=method, alternative=alternative)
        assert np.allclose(res.confidence_interval, ref.confidence_interval, rtol=1e-12,
                           atol=0), (method, alternative)


def test_degenerate_bca_warns_and_gives_nan():
    with pytest.warns(RuntimeWarning, match="BCa"):
        res = calibr.bootstrap([0.3], [1], n_resamples=5, rng=0, method="bca")
    assert math.isnan(res.confidence_interval.low) and math.isnan(res.confidence_interval.high)


_BCA_NAN = (r"^The BCa confidence interval cannot be calculated: the estimate lies outside "
            r"the bootstrap distribution \(every replicate above it, or every one below\), or "
            r"the jackknife values \(the metric without each row\) are all equal or undefined "
            r"\(as for \"uq\" on 2 rows\); the interval is NaN\.$")


@pytest.mark.parametrize(("p", "y", "opts"), [
    ([0.2, 0.8], [0, 1], {}),  # the scalar kernels' jackknife
    ([0.2, 0.8], [0, 1], {"estimator": "ul"}),  # the metric without each row
    (PM[:2], YM[:2], {"type": "classwise", "classes": range(4)}),
    (PM[:2], YM[:2], {"type": "confidence", "classes": range(4)}),
    (PM[:2], YM[:2], {"type": "canonical", "classes": range(4)}),
])
def test_bca_on_two_rows_of_skce_warns_and_gives_nan(p, y, opts):
    # without one of 2 rows "uq" and "ul" are undefined (they need 2): so is the jackknife,
    # and BCa, as where every replicate lies on one side of the estimate
    with pytest.warns(RuntimeWarning, match=_BCA_NAN):
        res = calibr.bootstrap(p, y, "skce", n_resamples=50, rng=0, method="bca", **opts)
    assert math.isnan(res.confidence_interval.low) and math.isnan(res.confidence_interval.high)
    assert res.estimate == calibr.skce(p, y, **opts)
    with pytest.warns(RuntimeWarning, match=_BCA_NAN):
        paired = calibr.paired_bootstrap(p, p, y, "skce", n_resamples=50, rng=0, method="bca",
                                         **opts)
    assert math.isnan(paired.confidence_interval.low)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the other intervals are defined
        res = calibr.bootstrap(p, y, "skce", n_resamples=50, rng=0, **opts)
    assert res.confidence_interval.low <= res.confidence_interval.high


@pytest.mark.parametrize("scale", [1e-110, 1e-300, 1e150])
def test_bca_acceleration_does_not_underflow_or_overflow(scale):
    # BCa's levels do not change when the metric is multiplied by a constant, and its
    # bounds are the replicates' quantiles: c times those of the metric. The sums of
    # U^2 and U^3 at 1e-110 underflowed to 0.0 (a ZeroDivisionError), at 1e-300 gave a
    # NaN interval, and at 1e150 overflowed
    p, y = P[:60], Y[:60]

    def scaled(p, y):
        return scale * calibr.ece(p, y)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = calibr.bootstrap(p, y, scaled, n_resamples=200, rng=3, method="bca")
    want = calibr.bootstrap(p, y, "ece", n_resamples=200, rng=3, method="bca")
    assert np.allclose(np.array(got.confidence_interval) / scale, want.confidence_interval,
                       rtol=1e-12, atol=0)
    # by hand: U = 2 (mean - jack) = (8/3, 2/3, -10/3), sum U^3 = -160/9, sum U^2 = 56/3
    jack = np.array([1.0, 2.0, 4.0])
    assert bt._acceleration(jack) == pytest.approx(-160 / 9 / (6 * (56 / 3) ** 1.5), rel=1e-14)
    assert bt._acceleration(jack * scale) == pytest.approx(bt._acceleration(jack), rel=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf is NaN, and no numpy warning
        for undefined in ([2.0, 2.0, 2.0], [1.0, np.nan, 2.0], [1.0, np.inf, 2.0],
                          [1e308, -1e308, 1e308]):
            assert math.isnan(bt._acceleration(np.array(undefined))), undefined


_NOT_REAL = ("`metric` must return a real number (a float, an int or a numpy scalar); it "
             "returned {}.")


@pytest.mark.parametrize(("value", "shown"), [
    (None, "None (NoneType)"), (1j, "1j (complex)"), (np.complex128(1), "(1+0j) (complex128)"),
    (np.array([1.0, 2.0]), "an array of shape (2,) (ndarray)"),
    (np.array([0.5]), "an array of shape (1,) (ndarray)"), ([0.5], "[0.5] (list)"),
    ("0.5", "'0.5' (str)"), (True, "True (bool)"), (np.bool_(False), "False (bool)"),
])
def test_a_callable_metric_must_return_a_real_number(value, shown):
    p, y = P[:20], Y[:20]
    with pytest.raises(InputError, match="^" + re.escape(_NOT_REAL.format(shown)) + "$"):
        calibr.bootstrap(p, y, lambda p, y: value, n_resamples=5, rng=0)
    with pytest.raises(InputError, match="^" + re.escape(_NOT_REAL.format(shown)) + "$"):
        calibr.paired_bootstrap(p, p, y, lambda p, y: value, n_resamples=5, rng=0)
    # a bad value on a resample (the first call is on the data), or without one row
    # (BCa's jackknife, where a metric's InputError means NaN), is as bad as on the data
    calls = []

    def on_resamples(p, y):
        calls.append(len(p))
        return 0.5 if len(calls) == 1 else value

    with pytest.raises(InputError, match="^" + re.escape(_NOT_REAL.format(shown)) + "$"):
        calibr.bootstrap(p, y, on_resamples, n_resamples=5, rng=0)
    assert calls == [20, 20]
    without_a_row = lambda p, y: value if len(p) == 19 else 0.5  # noqa: E731
    with pytest.raises(InputError, match="^" + re.escape(_NOT_REAL.format(shown)) + "$"):
        calibr.bootstrap(p, y, without_a_row, n_resamples=5, rng=0, method="bca")


def test_a_callable_metric_may_return_any_real_number_or_nan_but_not_infinity():
    p, y = P[:20], Y[:20]
    for value in (np.float32(0.25), np.int8(2), np.array(0.5), 3, fractions.Fraction(1, 4)):
        res = calibr.bootstrap(p, y, lambda p, y, v=value: v, n_resamples=5, rng=0)
        assert type(res.estimate) is float and res.estimate == float(value)
        assert res.confidence_interval == (float(value), float(value))
    res = calibr.bootstrap(p, y, lambda p, y: np.nan, n_resamples=5, rng=0)
    assert math.isnan(res.estimate) and math.isnan(res.confidence_interval.low)
    for value, shown in [(math.inf, "inf"), (-np.inf, "-inf"),
                         (10**400, "an integer of 401 digits")]:
        with pytest.raises(InputError, match="^" + re.escape(
                "`metric` must return a finite number or NaN here (quantiles of infinite "
                f"values are undefined); it returned {shown}.") + "$"):
            calibr.bootstrap(p, y, lambda p, y, v=value: v, n_resamples=5, rng=0)


def test_interval_arithmetic_by_hand():
    dist = np.arange(1.0, 102.0)  # 1 .. 101: quantile q is 1 + 100 q
    def approx(pair):
        return pytest.approx(pair, rel=1e-12)

    assert bt._interval(dist, 40.0, 0.9, "percentile", None) == approx((6.0, 96.0))
    assert bt._interval(dist, 40.0, 0.9, "basic", None) == approx((80.0 - 96.0, 80.0 - 6.0))
    low, high = bt._interval(dist, 40.0, 0.9, "percentile", None, "greater")
    assert low == pytest.approx(11.0, rel=1e-12) and high == math.inf
    low, high = bt._interval(dist, 40.0, 0.9, "percentile", None, "less")
    assert low == -math.inf and high == pytest.approx(91.0, rel=1e-12)
    # BCa with a symmetric jackknife (a = 0) and the estimate at the median (z0 = 0)
    # is the percentile interval
    ci = bt._interval(dist, 51.0, 0.9, "bca", lambda: np.array([1.0, 2.0, 3.0]))
    assert ci == pytest.approx((6.0, 96.0), rel=1e-12)


#: a smaller sample (80 rows), for the BCa tests below and the defaults and limits
_GEN80 = np.random.default_rng(20261202)
P80 = np.round(_GEN80.random(80), 2)
Y80 = (_GEN80.random(80) < P80**2).astype(np.int64)


def _scipy_interval(res, p, y, metric, method="BCa", **kw):
    from scipy import stats as st

    def statistic(i):
        i = i.astype(np.int64)
        return metric(p[i], y[i])

    return st.bootstrap((np.arange(len(p)),), statistic, n_resamples=0, vectorized=False,
                        bootstrap_result=res, method=method, **kw).confidence_interval


def test_bca_with_replicates_equal_to_the_estimate_is_scipys():
    """The BCa bias correction z0 counts a replicate equal to the estimate as half, as
    scipy's ``percentileofscore`` does: with a metric of few values (the mean label),
    many replicates equal the estimate, and the interval is scipy's."""
    p, y = P80[:30], Y80[:30]

    def rate(p, y):
        return float(np.mean(y))

    res = calibr.bootstrap(p, y, rate, n_resamples=300, rng=4, method="bca")
    assert np.count_nonzero(res.bootstrap_distribution == res.estimate) >= 20
    want = _scipy_interval(res, p, y, rate)
    assert np.allclose(res.confidence_interval, want, rtol=1e-12, atol=0)


def test_bca_of_two_rows_is_scipys():
    """Two rows are enough for BCa's jackknife (the metric of each row alone) where
    the metric takes one row: the interval is scipy's from the same replicates.
    ECE of [0.2, 0.7] against [0, 1] (10 bins): 0.25, and 0.2 or 0.3 on one row."""
    p, y = np.array([0.2, 0.7]), np.array([0, 1])

    def gap(p, y):
        return float(np.mean(np.abs(p - y)))

    for metric, call in [("ece", calibr.ece), (gap, gap)]:
        res = calibr.bootstrap(p, y, metric, n_resamples=200, rng=3, method="bca")
        assert res.estimate == pytest.approx(0.25, rel=1e-15)
        want = _scipy_interval(res, p, y, call)
        assert np.isfinite(want).all()
        assert np.allclose(res.confidence_interval, want, rtol=1e-12, atol=0)


def test_bca_with_every_replicate_on_one_side_is_nan():
    """Every replicate above (below) the estimate gives z0 = -inf (+inf): a NaN interval
    with its warning, not statistics' error for inv_cdf(0) or inv_cdf(1)."""
    p, y = np.linspace(0.05, 0.95, 12), Y80[:12]

    def distinct(p, y):  # a resample has fewer distinct rows than the sample (almost surely)
        return float(np.unique(p).size)

    def minus_distinct(p, y):
        return -distinct(p, y)

    for metric in (distinct, minus_distinct):
        with pytest.warns(RuntimeWarning, match="^The BCa confidence interval cannot be "
                                                "calculated") as got:
            res = calibr.bootstrap(p, y, metric, n_resamples=50, rng=2, method="bca")
        assert np.all(np.abs(res.bootstrap_distribution) < 12) and len(got) == 1
        assert math.isnan(res.confidence_interval.low)
        assert math.isnan(res.confidence_interval.high)


# ------------------------------------------------------------------ paired


def test_paired_missing_values_are_an_error_unless_na_rm():
    """paired_bootstrap's na_rm defaults to False, as every function's: a missing
    prediction is an error naming the model's argument; with na_rm=True the rows
    complete in both models are used."""
    p_a, p_b, y = [0.1, np.nan, 0.5, 0.8], [0.2, 0.3, 0.4, 0.9], [0, 1, 1, 1]
    with pytest.raises(InputError, match=re.escape(
            "`p_a` must not contain missing values; 1 value is missing, the first at "
            "position 1. Pass na_rm=True to drop incomplete observations.")):
        calibr.paired_bootstrap(p_a, p_b, y, "brier", n_resamples=5, rng=0)
    res = calibr.paired_bootstrap(p_a, p_b, y, "brier", n_resamples=5, rng=0, na_rm=True)
    assert res.estimate_a == pytest.approx((0.1**2 + 0.5**2 + 0.2**2) / 3, rel=1e-15)
    assert res.estimate_b == pytest.approx((0.2**2 + 0.6**2 + 0.1**2) / 3, rel=1e-15)


def test_paired_distribution_is_the_difference_on_the_same_rows():
    q = np.clip(P + 0.1, 0, 1)
    res = calibr.paired_bootstrap(P, q, Y, "skce", n_resamples=40, rng=6)
    a = calibr.bootstrap(P, Y, "skce", n_resamples=40, rng=6)
    b = calibr.bootstrap(q, Y, "skce", n_resamples=40, rng=6)
    assert np.array_equal(res.bootstrap_distribution,
                          a.bootstrap_distribution - b.bootstrap_distribution)
    assert res.estimate_a == calibr.skce(P, Y) and res.estimate_b == calibr.skce(q, Y)
    assert res.estimate == res.estimate_a - res.estimate_b


def test_paired_pvalue_by_hand(monkeypatch):
    """The p-values of a known replicate distribution: -1, 0, 1, ..., 7 (9 values)."""
    dist = np.arange(-1.0, 8.0)

    def fake(plans, rng, n_resamples):
        return [dist, np.zeros(9)]

    monkeypatch.setattr(bt, "_replicates", fake)
    kw = dict(n_resamples=9, rng=0)
    assert calibr.paired_bootstrap(P, P, Y, alternative="greater", **kw).pvalue == 2 / 9
    assert calibr.paired_bootstrap(P, P, Y, alternative="less", **kw).pvalue == 8 / 9
    assert calibr.paired_bootstrap(P, P, Y, **kw).pvalue == 4 / 9


def test_paired_detects_the_worse_model():
    gen = np.random.default_rng(8)
    n = 4000
    p = gen.random(n)
    y = gen.random(n) < p  # p calibrated
    res = calibr.paired_bootstrap(p**1.5, p, y, n_resamples=999, rng=1, alternative="greater")
    assert res.estimate > 0 and res.pvalue == 0.0 and res.confidence_interval.low > 0
    same = calibr.paired_bootstrap(p, p, y, n_resamples=99, rng=1)
    assert np.all(same.bootstrap_distribution == 0) and same.pvalue == 1.0


def test_paired_na_rm_drops_the_same_rows():
    p = P[:40].copy()
    q = np.sqrt(P[:40])
    p[3] = np.nan
    q[7] = np.nan
    res = calibr.paired_bootstrap(p, q, Y[:40], n_resamples=20, rng=0, na_rm=True)
    keep = np.ones(40, bool)
    keep[[3, 7]] = False
    ref = calibr.paired_bootstrap(p[keep], q[keep], Y[:40][keep], n_resamples=20, rng=0)
    assert res.n == 38
    assert np.array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"metric": "bogus"}, InputError, "`metric`"),
    ({"metric": 3}, InputTypeError, "`metric`"),
    ({"bins": 3, "metric": "skce"}, InputTypeError, "`bins`"),
    ({"estimator": "uq"}, InputTypeError, "`estimator`"),
    ({"bins": 0}, InputError, "`bins`"),
    ({"weights": np.ones(N)}, InputError, "`weights`"),
    ({"n_resamples": 0}, InputError, "`n_resamples`"),
    ({"n_resamples": 10**8}, InputError, "`n_resamples`"),
    ({"n_resamples": 2.0}, InputError, "`n_resamples`"),
    ({"confidence_level": 1.0}, InputError, "`confidence_level`"),
    ({"confidence_level": "0.9"}, InputError, "`confidence_level`"),
    ({"method": "normal"}, InputError, "`method`"),
    ({"rng": -1}, InputError, "`rng`"),
    ({"rng": 1.5}, InputTypeError, "`rng`"),
    ({"type": "canonical"}, InputError, "`type`"),
    ({"metric": "skce", "bandwidth": -1}, InputError, "`bandwidth`"),
])
def test_bad_arguments(kwargs, error, match):
    p, y = P.copy(), Y.copy()
    with pytest.raises(error, match=match):
        calibr.bootstrap(p, y, **kwargs)
    assert np.array_equal(p, P) and np.array_equal(y, Y)


def test_bad_paired_arguments():
    with pytest.raises(InputError, match="same rows"):
        calibr.paired_bootstrap(P, P[:-1], Y, n_resamples=3)
    with pytest.raises(InputError, match="`alternative`"):
        calibr.paired_bootstrap(P, P, Y, n_resamples=3, alternative="two_sided")
    with pytest.raises(InputError, match="same kind for the same rows; got a vector"):
        calibr.paired_bootstrap(P, np.column_stack([1 - P, P]), Y, n_resamples=3,
                                classes=(0, 1))
    with pytest.raises(InputError, match="^`p_b` must"):
        calibr.paired_bootstrap(P, P + 2, Y, n_resamples=3)
    with pytest.raises(InputError, match="`p_a`"):
        calibr.paired_bootstrap(P - 2, P, Y, n_resamples=3)


def test_paired_messages_rename_the_argument_not_the_values_shown():
    """paired_bootstrap's messages from the checks of ``p`` name ``p_a`` or ``p_b``
    (``err.param`` too) where they name the argument ``p``, including the
    phrases about it, and leave a value that looks like it (a label "`p`") as it is."""
    with pytest.raises(InputError) as caught:
        calibr.paired_bootstrap([0.2, 0.7], [0.3, 0.6], [0, 2], n_resamples=3)
    assert str(caught.value) == ("`y` must be 0/1 or boolean for a vector `p_a`; 1 value does "
                                 "not, the first at position 1 (2).")
    with pytest.raises(InputError) as caught:
        calibr.paired_bootstrap([0.2, 0.7], [0.3, 1.6], [0, 1], n_resamples=3)
    assert caught.value.param == "p_b"
    assert str(caught.value).startswith("`p_b` must lie in [0, 1]; 1 value does not")
    with pytest.raises(InputError) as caught:
        calibr.paired_bootstrap([0.2, 0.7, 0.4], [0.3, 0.6, 0.5], ["no", "yes", "`p`"],
                                classes=["no", "yes"], n_resamples=3)
    assert caught.value.param == "y"
    assert str(caught.value) == ("`y` must be one of the class labels ('no', 'yes'); 1 value "
                                 "does not, the first at position 2 ('`p`').")


def test_bad_data_is_the_metric_s_message():
    with pytest.raises(InputError) as got:
        calibr.bootstrap([0.2, 1.5], [0, 1], n_resamples=3)
    with pytest.raises(InputError) as want:
        calibr.ece([0.2, 1.5], [0, 1])
    assert str(got.value) == str(want.value)


def test_canonical_cost_warning(monkeypatch):
    monkeypatch.setattr(bt, "CANONICAL_WARN_COST", 1e5)
    with pytest.warns(UserWarning, match="O\\(n\\^2 K\\) per replicate"):
        calibr.bootstrap(PM[:40], YM[:40] + 1, "skce", n_resamples=20, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calibr.bootstrap(PM[:40], YM[:40] + 1, "skce", n_resamples=20, rng=0,
                         type="confidence")


# ------------------------------------------------------------------ defaults, limits and results


def test_bootstrap_takes_at_most_max_rows_observations():
    """The bootstrap takes at most MAX_ROWS observations (2**31 - 1: the kernels count in
    int32); with the limit lowered to 3, 3 rows are taken and 4 refused."""
    assert bt.MAX_ROWS == np.iinfo(np.int32).max
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(bt, "MAX_ROWS", 3)
        assert calibr.bootstrap([0.2, 0.4, 0.9], [0, 1, 1], n_resamples=3, rng=0).n == 3
        with pytest.raises(InputError, match=r"^The bootstrap takes at most 3 observations; "
                                             r"got 4\.$"):
            calibr.bootstrap([0.2, 0.4, 0.9, 0.5], [0, 1, 1, 0], n_resamples=3, rng=0)
    finally:
        mp.undo()


def test_bootstrap_results_are_frozen_and_compared_by_identity():
    """Bootstrap results are frozen (a field cannot be reassigned) and compare by identity
    (compared field by field, their arrays would make == an error)."""
    import dataclasses

    a = calibr.bootstrap(P80, Y80, n_resamples=5, rng=0)
    b = calibr.bootstrap(P80, Y80, n_resamples=5, rng=0)
    pa = calibr.paired_bootstrap(P80, P80**2, Y80, n_resamples=5, rng=0)
    pb = calibr.paired_bootstrap(P80, P80**2, Y80, n_resamples=5, rng=0)
    assert a == a and (a == b) is False and (pa == pb) is False
    for res in (a, pa):
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.estimate = 0.0


def test_bootstrap_standard_error_of_one_and_two_replicates():
    """One resample is allowed and has a NaN standard error, without numpy's warning; two
    have the standard error |d1 - d2| / sqrt(2)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = calibr.bootstrap(P80, Y80, n_resamples=1, rng=0)
        assert math.isnan(one.standard_error) and one.n_resamples == 1
        two = calibr.bootstrap(P80, Y80, n_resamples=2, rng=0)
    d = two.bootstrap_distribution
    assert two.standard_error == pytest.approx(abs(d[0] - d[1]) / math.sqrt(2), rel=1e-12)


def test_bootstrap_defaults():
    """The documented defaults: 9999 resamples, level 0.95, the percentile interval (the
    quantiles of the replicates) and, for paired_bootstrap(), the two-sided alternative."""
    p, y = P80[:20], Y80[:20]
    res = calibr.bootstrap(p, y, rng=1)
    assert (res.n_resamples, res.confidence_level, res.method) == (9999, 0.95, "percentile")
    assert res.bootstrap_distribution.shape == (9999,)
    alpha = (1 - 0.95) / 2
    lo, hi = np.quantile(res.bootstrap_distribution, [alpha, 1 - alpha])
    assert res.confidence_interval == pytest.approx((lo, hi), rel=1e-15)
    pr = calibr.paired_bootstrap(p, p**2, y, rng=1)
    assert (pr.n_resamples, pr.confidence_level, pr.method, pr.alternative) == (
        9999, 0.95, "percentile", "two-sided")


def test_canonical_skce_warns_above_its_cost_threshold(monkeypatch):
    """The bootstrap of the canonical SKCE warns once when its cost, n^2 K (B + 1) kernel
    evaluations (twice that for paired_bootstrap()), exceeds CANONICAL_WARN_COST, and is
    silent at the threshold."""
    pm = np.random.default_rng(3).dirichlet(np.ones(4), 30)
    ym = np.arange(30) % 4
    cost = 30**2 * 4 * (7 + 1)
    kw = dict(n_resamples=7, rng=0, classes=range(4))
    monkeypatch.setattr(bt, "CANONICAL_WARN_COST", cost)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calibr.bootstrap(pm, ym, "skce", **kw)
    monkeypatch.setattr(bt, "CANONICAL_WARN_COST", cost - 1)
    with pytest.warns(UserWarning, match=r"about 2\.9e\+04 kernel evaluations") as got:
        calibr.bootstrap(pm, ym, "skce", **kw)
    assert len(got) == 1
    monkeypatch.setattr(bt, "CANONICAL_WARN_COST", 2 * cost - 1)
    with pytest.warns(UserWarning, match=r"about 5\.8e\+04 kernel evaluations"):
        calibr.paired_bootstrap(pm, pm, ym, "skce", **kw)


def test_paired_na_rm_drops_rows_with_one_missing_column():
    """paired_bootstrap(na_rm=True) drops each row missing in either model (a matrix row
    with one missing value included) and is the bootstrap of the complete rows; the same
    for vectors given as lists."""
    gen = np.random.default_rng(5)
    pa = gen.dirichlet(np.ones(3), 40)
    pb = gen.dirichlet(np.ones(3), 40)
    y = np.arange(40) % 3
    pa[3, 1] = np.nan
    pb[7, 2] = np.nan
    res = calibr.paired_bootstrap(pa, pb, y, n_resamples=20, rng=0, na_rm=True,
                                  classes=range(3))
    keep = np.ones(40, bool)
    keep[[3, 7]] = False
    ref = calibr.paired_bootstrap(pa[keep], pb[keep], y[keep], n_resamples=20, rng=0,
                                  classes=range(3))
    assert res.n == 38
    assert np.array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)
    # lists, one missing value in each model's vector
    a = [0.2, math.nan, 0.7, 0.4, 0.9]
    b = [0.3, 0.5, 0.6, math.nan, 0.8]
    res = calibr.paired_bootstrap(a, b, [0, 1, 1, 0, 1], n_resamples=10, rng=0, na_rm=True)
    ref = calibr.paired_bootstrap([0.2, 0.7, 0.9], [0.3, 0.6, 0.8], [0, 1, 1],
                                  n_resamples=10, rng=0)
    assert res.n == 3
    assert np.array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)


def test_bootstrap_fixed_bins_take_the_whole_cell_bound():
    """The bootstrap bins as the metric does: 10,000 bins x 1,000 classes, the bound of
    10,000,000 cells itself, are taken, and one more bin is refused, as ece() refuses
    it.

    Two rows of equal probabilities 1/1000: the top label (the first column) is right
    for neither, every class column's rows share a bin, and the classwise ECE is the
    mean over the columns of |hits / 2 - 0.001| (0.499 for the two classes that occur
    once each, 0.001 for the others).
    """
    k = 1000
    p = np.full((2, k), 1.0 / k)
    y = np.array([2, 3])  # 1-based codes: classes 2 and 3
    res = calibr.bootstrap(p, y, "ece", bins=10_000, n_resamples=1, rng=0)
    assert res.estimate == pytest.approx((2 * 0.499 + (k - 2) * 0.001) / k, rel=1e-9)
    with pytest.raises(InputError, match=r"must be at most 10,000,000 for type = "
                                         r"\"classwise\""):
        calibr.bootstrap(p, y, "ece", bins=10_001, n_resamples=1, rng=0)


def test_bootstrap_warnings_point_at_the_callers_line(monkeypatch):
    """The BCa and canonical-cost warnings name the user's file, not calibr's parameter
    wrapper (the stacklevel counts validate_params)."""
    monkeypatch.setattr(bt, "CANONICAL_WARN_COST", 1.0)
    pm = np.random.default_rng(3).dirichlet(np.ones(4), 30)
    ym = np.arange(30) % 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        calibr.bootstrap(pm, ym, "skce", n_resamples=3, rng=0, classes=range(4))
        calibr.bootstrap([0.3], [1], n_resamples=5, rng=0, method="bca")
    kinds = sorted(w.category.__name__ for w in caught)
    assert kinds == ["RuntimeWarning", "UserWarning"]
    assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]


# ------------------------------------------------------------------ coverage (small)


def _simulation():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "validation" / "simulate_bootstrap.py"
    spec = importlib.util.spec_from_file_location("simulate_bootstrap", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_coverage_of_the_population_ece_small_simulation():
    """The small version of validation/simulate_bootstrap.py (fixed seeds, so it
    cannot flake): 80 datasets of n = 2,000. The 95% percentile and BCa intervals
    cover the exact population ECE (1/6) in a share inside the binomial 99.9% band;
    on a calibrated model (population ECE 0) no percentile interval covers 0, the
    documented upward bias of the ECE."""
    sim = _simulation()
    half = 3.29 * math.sqrt(0.95 * 0.05 / 80)
    for method in ("percentile", "bca"):
        share, _ = sim.coverage("overconfident", "ece", method, 80, 2000, 199, 0.95)
        assert 0.95 - half <= share <= 1.0, (method, share)
    share, _ = sim.coverage("calibrated", "ece", "percentile", 20, 2000, 199, 0.95)
    assert share == 0.0


@pytest.mark.parametrize(("name", "opts"), [("ece", {}), ("mce", {"bins": 4}),
                                            ("ece", {"type": "confidence"}), ("skce", {}),
                                            ("skce", {"type": "classwise"}), ("mmce", {}),
                                            ("ecce", {}), ("ecce", {"type": "confidence",
                                                                    "scale": "sigma"})])
def test_counts_past_the_uint8_range(monkeypatch, name, opts):
    """The kernels count draws in uint8 and carry multiples of COUNT_BASE (256) into
    int32: with the base lowered to 2 every replicate carries, and the replicates
    are unchanged."""
    multiclass = opts.get("type") is not None
    p, y = (PM, YM + 1) if multiclass else (P, Y)
    want = calibr.bootstrap(p, y, name, n_resamples=20, rng=4, **opts)
    monkeypatch.setattr(bt, "COUNT_BASE", 2)
    got = calibr.bootstrap(p, y, name, n_resamples=20, rng=4, **opts)
    assert np.array_equal(got.bootstrap_distribution, want.bootstrap_distribution)


def test_tally_and_carry_directly():
    from calibr._kernels import bootstrap as kb

    for draws in (255, 256, 300, 700):
        counts = np.zeros(1, np.uint8)  # n = 1: every draw is row 0 (the kernels draw
        carry = np.zeros(1, np.int32)   # n rows from n; here n draws of 1 row, in a loop)
        ok = True
        for _ in range(draws):
            ok &= kb._tally(np.random.default_rng(0), 1, 256, counts, carry)
        assert ok == (draws < 256)
        assert counts[0] + 256 * carry[0] == draws
        # the cells' sums read the carry when told so, and reset it
        x, cells, c = np.array([[0.25]]), np.zeros((1, 1), np.int32), np.ones((1, 1), np.uint8)
        count, conf, hit = np.empty(1), np.empty(1), np.empty(1)
        kb._binned_from_counts(counts, carry, 256, not ok, x, cells, c, count, conf, hit)
        assert (count[0], conf[0], hit[0]) == (draws, 0.25 * draws, draws)
        assert carry[0] == 0


# ------------------------------------------------------------------ summarise(confidence_level=...)


def _frame(seed=21, sizes=(60, 1, 90, 40)):
    gen = np.random.default_rng(seed)
    g = np.repeat(list("abcd"[:len(sizes)]), sizes)
    n = g.shape[0]
    p = np.round(gen.random(n), 2)
    return pd.DataFrame({"g": g, "p": p, "y": (gen.random(n) < p**2).astype(int)})


def _group_gen(seed, n_groups, g):
    child = np.random.SeedSequence(seed).spawn(n_groups)[g].spawn(1)[0]
    return np.random.default_rng(child)


def test_summarise_intervals_are_the_bootstrap_of_each_group():
    df = _frame(sizes=(60, 30, 90, 40))
    metrics = {"ece": "ece", "mce3": calibr.metric("mce", bins=3),
               "skce": calibr.metric("skce", bandwidth=0.1), "mmce": "mmce"}
    out = calibr.summarise(df.groupby("g"), "p", "y", metrics=metrics, confidence_level=0.8,
                           n_resamples=50, rng=5, ci_method="basic")
    assert list(out.columns) == ["g", "ece", "ece_low", "ece_high", "mce3", "mce3_low",
                                 "mce3_high", "skce", "skce_low", "skce_high", "mmce",
                                 "mmce_low", "mmce_high"]
    for g, (key, part) in enumerate(df.groupby("g")):
        for name, (metric, opts) in {"ece": ("ece", {}), "mce3": ("mce", {"bins": 3}),
                                     "skce": ("skce", {"bandwidth": 0.1}),
                                     "mmce": ("mmce", {})}.items():
            res = calibr.bootstrap(part["p"].to_numpy(), part["y"].to_numpy(), metric,
                                   confidence_level=0.8, n_resamples=50, method="basic",
                                   rng=_group_gen(5, 4, g), **opts)
            row = out.iloc[g]
            assert row["g"] == key
            assert (row[f"{name}_low"], row[f"{name}_high"]) == res.confidence_interval
            assert row[name] == res.estimate


def test_summarise_intervals_multiclass_callables_and_unobserved_groups():
    gen = np.random.default_rng(4)
    n = 200
    df = pd.DataFrame(gen.dirichlet(np.ones(3), n), columns=["p_0", "p_1", "p_2"])
    df["y"] = gen.integers(0, 3, n)
    df["g"] = pd.Categorical(np.repeat(["x", "y"], n // 2), categories=["x", "y", "z"])

    def brier(p, y, classes):
        onehot = np.eye(len(classes))[y]
        return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))

    out = calibr.summarise(df.groupby("g", observed=False), y="y", p_prefix="p_",
                           metrics={"e": calibr.metric("ece", type="confidence"),
                                    "b": brier}, confidence_level=0.9, n_resamples=30, rng=2)
    assert out["e_low"].isna().tolist() == [False, False, True]
    for g, key in enumerate(["x", "y"]):
        part = df[df["g"] == key]
        p = part[["p_0", "p_1", "p_2"]].to_numpy()
        y = part["y"].to_numpy()
        res = calibr.bootstrap(p, y, "ece", type="confidence", classes=range(3),
                               confidence_level=0.9, n_resamples=30, rng=_group_gen(2, 3, g))
        assert (out["e_low"][g], out["e_high"][g]) == res.confidence_interval
        res = calibr.bootstrap(p, y, brier, classes=range(3), confidence_level=0.9,
                               n_resamples=30, rng=_group_gen(2, 3, g))
        assert (out["b_low"][g], out["b_high"][g]) == res.confidence_interval


def test_summarise_intervals_leave_the_tests_unchanged():
    df = _frame(sizes=(60, 30, 90, 40))
    kw = dict(metrics="ece", tests=["skce", "consistency"], rng=8)
    with_ci = calibr.summarise(df.groupby("g"), "p", "y", confidence_level=0.95, n_resamples=20,
                               **kw)
    without = calibr.summarise(df.groupby("g"), "p", "y", **kw)
    pd.testing.assert_frame_equal(with_ci[without.columns], without)


def test_summarise_interval_errors():
    df = _frame()
    grouped = df.groupby("g")
    with pytest.raises(InputError,
                       match="`confidence_level` must be a number strictly between 0 and 1"):
        calibr.summarise(grouped, "p", "y", confidence_level=1.5)
    with pytest.raises(InputError, match="`ci_method`"):
        calibr.summarise(grouped, "p", "y", confidence_level=0.9, ci_method="normal")
    with pytest.raises(InputError, match="`n_resamples`"):
        calibr.summarise(grouped, "p", "y", confidence_level=0.9, n_resamples=0)
    with pytest.raises(InputError, match="`weights` cannot be combined with `confidence_level`"):
        calibr.summarise(df.assign(w=1.0), "p", "y", confidence_level=0.9, weights="w")
    with pytest.raises(InputError, match="interval column 'ece_low'"):
        calibr.summarise(df, "p", "y", metrics={"ece": "ece", "ece_low": "mce"},
                         confidence_level=0.9)
    # a group the metric refuses names the group (group 'b' has one row: uq needs 2)
    with pytest.raises(InputError, match=r"group g='b'"):
        calibr.summarise(grouped, "p", "y", metrics="skce", confidence_level=0.9, n_resamples=5)
    before = df.copy()
    calibr.summarise(grouped, "p", "y", confidence_level=0.9, n_resamples=5, rng=0)
    pd.testing.assert_frame_equal(df, before)


# ------------------------------------------------------------- calibr report --confidence-level


def _cli(capsys, *argv):
    from calibr.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_ci_equals_summarise(tmp_path, capsys):
    import io

    df = _frame(sizes=(60, 30, 90, 40))
    path = tmp_path / "pred.csv"
    df.to_csv(path, index=False)
    code, out, err = _cli(capsys, "report", str(path), "--by", "g", "-m", "ece,mce(bins=4)",
                          "--confidence-level", "0.9", "--n-resamples", "40", "--seed", "3",
                          "--ci-method", "bca", "-f", "csv")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    want = calibr.summarise(df.groupby("g"), "p", "y",
                            metrics={"ece": "ece", "mce(bins=4)": calibr.metric("mce", bins=4)},
                            confidence_level=0.9, n_resamples=40, ci_method="bca", rng=3)
    for col in ["ece", "ece_low", "ece_high", "mce(bins=4)", "mce(bins=4)_low",
                "mce(bins=4)_high"]:
        assert got[col].tolist() == want[col].tolist(), col
    assert got[["ci_level", "ci_method", "ci_resamples", "seed"]].iloc[0].tolist() == [
        0.9, "bca", 40, 3]
    cols = list(got.columns)
    assert cols.index("ece_low") == cols.index("ece") + 1
    assert cols.index("mce(bins=4)_high") == cols.index("mce(bins=4)") + 2
    code, out, _ = _cli(capsys, "report", str(path), "--by", "g", "--confidence-level", "0.9",
                        "--n-resamples", "40")
    assert code == 0
    assert ("intervals: 0.9 percentile bootstrap intervals of every metric (calibr.bootstrap), "
            "40 resamples of each group's rows; seed: 0") in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--confidence-level", "1.5"],
     "--confidence-level must be a number strictly between 0 and 1; got 1.5."),
    (["--confidence-level", "0.9", "--n-resamples", "0"],
     "--n-resamples must be an integer from 1 to"),
    (["--confidence-level", "0.9", "--per-bin"],
     "--confidence-level adds columns to the report of the metrics"),
    (["--confidence-level", "0.9", "--weights", "w"],
     "--weights cannot be combined with --confidence-level"),
])
def test_report_ci_errors(tmp_path, capsys, argv, message):
    path = tmp_path / "pred.csv"
    _frame().assign(w=1).to_csv(path, index=False)
    out_file = tmp_path / "out.csv"
    code, out, err = _cli(capsys, "report", str(path), "-o", str(out_file), *argv)
    assert code == 2 and message in err and out == ""
    assert not out_file.exists()


def test_weighted_pair_sum_of_uint8_counts_is_that_of_float_weights_bit_for_bit():
    """The replicates' uint8 counts and int32 sort positions give the bits of float64
    weights and int64 positions (one kernel, any dtype)."""
    from calibr._kernels import weighted_sums as ws

    gen = np.random.default_rng(9)
    n = 5000
    p = np.round(gen.random(n), 3)
    y = (gen.random(n) < p).astype(np.uint8)
    order, xs, e = ws.sorted_scalars(p, y)
    g = ws.gap_factors(xs, 0.15)
    counts = gen.poisson(1.0, n).astype(np.uint8)
    want = ws.weighted_pair_sum(e, counts.astype(np.float64), order, g)
    assert ws.weighted_pair_sum(e, counts, order.astype(np.int32), g) == want
    assert ws.weighted_pair_sum(e[:0], counts, order[:0].astype(np.int32), g[:0]) == (0, 0, 0)


@pytest.mark.parametrize("which", ["p_a", "p_b"])
def test_paired_na_rm_leaves_a_non_numeric_model_to_the_input_layer(which):
    """With na_rm, the rows missing in either model are dropped only when both are
    arrays of numbers; when one is not (strings, or an array of 3 dimensions), the
    input layer's message names that model, whichever it is."""
    y = np.array([0, 1, 0, 1])
    p = np.array([0.1, 0.7, np.nan, 0.8])
    for bad, err, says in ((["a", "b", "c", "d"], calibr.InputTypeError,
                            "must hold real numbers"),
                           (np.ones((4, 1, 1)), calibr.InputError, "must be a vector or a")):
        models = {"p_a": p, "p_b": p, which: bad}
        with pytest.raises(err, match=f"^`{which}` {says}"):
            calibr.paired_bootstrap(models["p_a"], models["p_b"], y, "ece", na_rm=True,
                                    n_resamples=10, rng=0)
