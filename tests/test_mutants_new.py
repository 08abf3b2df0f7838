"""Tests that fail on mutants ``scripts/mutate.py`` let through in the modules added
after ``tests/test_mutants.py``: ``calibr/_binning.py``, ``calibr/_lp.py``,
``calibr/_smooth.py``, ``calibr/_bootstrap.py``, ``calibr/cli/_compare.py`` and
``calibr/pytest_plugin.py``.

Each test names in its docstring the mutants it kills (module, line at the commit
the mutants were made from, and the change). The expected values are independent
of the code under test: worked by hand, exact rationals, recomputed here from the
published definitions, or the peers (uncertainty-calibration, relplot,
``scipy.stats.bootstrap``). Every random sample has a fixed seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import calibr
from calibr import InputError

# --------------------------------------------------------------------------
# calibr/_binning.py


def test_equal_mass_weights_total_below_two_to_the_53():
    """_binning 97: ``total >= 2.0**53`` mutated to ``>``, ``2.0`` -> ``4.0``,
    ``53`` -> ``54``, and its ``raise`` -> ``pass``: a total of exactly 2**53 must be
    refused, a total of 2**53 - 1 taken (the repeated sample's ranks are exact).

    Accepted: 2**52 copies of 0.2 (y 0) and 2**52 - 1 of 0.7 (y 1) in 2 equal-mass
    bins, whose cut is (0.2 + 0.7) / 2 = 0.45: gaps 0.2 and 0.3 with those weights.
    """
    p, y = [0.2, 0.7], [0, 1]
    with pytest.raises(InputError, match=r'^`weights` must total less than 2\*\*53 for '
                                         r'binning = "equal-mass" \(so that the ranks are '
                                         r"exact\); got 9\.0072e\+15\.$"):
        calibr.ece(p, y, 2, binning="equal-mass", weights=[2.0**52, 2.0**52])
    w = [2.0**52, 2.0**52 - 1]
    want = (w[0] * 0.2 + w[1] * 0.3) / (w[0] + w[1])
    assert calibr.ece(p, y, 2, binning="equal-mass", weights=w) == pytest.approx(want,
                                                                                   rel=1e-12)



def test_breaks_is_right_closed_by_default():
    """_binning 118: the default ``right=True`` of the internal ``breaks()`` changed
    (every caller passes it; the documented signature has it): values tied at 0 make
    the bin [0, 0] when closed on the right, and merge with the break 0 when closed
    on the left (``equal_mass_breaks``' rule)."""
    from calibr import _binning

    x = np.array([0.0, 0.0, 0.0, 0.0, 0.5, 0.9])
    assert _binning.breaks(x, 3, "equal-mass").tolist() == [0.0, 0.0, 0.25, 1.0]
    assert _binning.breaks(x, 3, "equal-mass", False).tolist() == [0.0, 0.25, 1.0]



def test_binning_stats_shapes_and_sums_by_hand():
    """_binning 205 and 210: ``nb = edges.shape[0] - 1`` -> ``+ 1`` or ``- 2`` (an
    extra or a missing empty bin: invisible in the metrics, but ``stats()`` documents
    the shapes of ``bin_stats``, B bins for B + 1 breaks).

    Left-closed 2 bins of [0, 0.5, 1]: 0.1 and 0.3 (y 0, 1) in bin 0, 0.5 and 1.0
    (y 1, 1) in bin 1."""
    from calibr import _binning

    p, y = np.array([0.1, 0.5, 0.3, 1.0]), np.array([0, 1, 1, 1])
    count, conf, hit, edges = _binning.stats(p, y, None, True, 2, "classwise",
                                             "equal-width", False)
    assert edges.tolist() == [0.0, 0.5, 1.0]
    assert count.tolist() == [2.0, 2.0] and hit.tolist() == [1.0, 2.0]
    assert conf.tolist() == pytest.approx([0.4, 1.5], rel=1e-15)
    pm = np.array([[0.7, 0.3], [0.2, 0.8], [0.4, 0.6]])
    count, conf, hit, edges = _binning.stats(pm, np.array([0, 1, 1]), None, False, 3,
                                             "confidence", "equal-width", False)
    assert count.shape == (3,) and edges.shape == (4,)
    # top labels 0.7, 0.8 (bin [2/3, 1]) and 0.6 (bin [1/3, 2/3)), all right
    assert count.tolist() == [0.0, 1.0, 2.0] and hit.tolist() == [0.0, 1.0, 2.0]
    # classwise: (K, B) for 2 classes and 3 left-closed bins (210 ``-`` -> ``+``)
    count, conf, hit, edges = _binning.stats(pm[:, :2] / pm[:, :2].sum(axis=1, keepdims=True),
                                             np.array([0, 1, 1]), None, False, 3, "classwise",
                                             "equal-width", False)
    assert count.shape == (2, 3) and edges.shape == (4,)
    assert count.sum(axis=1).tolist() == [3.0, 3.0] and hit.sum(axis=1).tolist() == [1.0, 2.0]
    # the last bins empty: still B of them (205 ``1`` -> ``2``)
    count, conf, hit, edges = _binning.stats(np.array([0.1, 0.2]), np.array([0, 1]), None,
                                             True, 4, "classwise", "equal-width", False)
    assert count.tolist() == [2.0, 0.0, 0.0, 0.0] and hit.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_classwise_equal_mass_consistency_band_uses_each_columns_breaks():
    """_binning 183: ``edges.ndim == 1`` -> ``!=`` in ``column_breaks`` (the padded
    2-d breaks of classwise equal-mass bins, read by the consistency band, returned
    whole). Each column's breaks are its own; their NaN padding is dropped."""
    from calibr import _binning

    edges = np.array([[0.0, 0.3, 1.0, np.nan], [0.0, 0.2, 0.6, 1.0]])
    assert _binning.column_breaks(edges, 0).tolist() == [0.0, 0.3, 1.0]
    assert _binning.column_breaks(edges, 1).tolist() == [0.0, 0.2, 0.6, 1.0]
    assert _binning.column_breaks(np.array([0.0, 0.5, 1.0]), 1).tolist() == [0.0, 0.5, 1.0]
    gen = np.random.default_rng(21)
    p = gen.dirichlet(np.ones(3), 300)
    y = np.array([gen.choice(3, p=row) for row in p])  # calibrated
    tab = calibr.calibration_table(p, y, 4, classes=range(3), binning="equal-mass",
                                   consistency=0.9, rng=3, n_resamples=100)
    assert len(tab) == 12
    assert (tab["consistency_lower"] <= tab["consistency_upper"]).all()
    inside = (tab["consistency_lower"] <= tab["mean_confidence"] + 0.05) & (
        tab["mean_confidence"] - 0.05 <= tab["consistency_upper"])
    assert inside.all()


# --------------------------------------------------------------------------
# calibr/_lp.py


def test_calibration_error_refuses_missing_values_by_default():
    """_lp 64: the default ``na_rm=False`` of calibration_error() changed to True (a
    NaN would be dropped silently).

    Dropped on request: 0.2 (y 0) and 0.7 (y 1) in 2 bins, gaps 0.2 and 0.3: the l2
    error sqrt((0.04 + 0.09) / 2).
    """
    p, y = [0.2, math.nan, 0.7], [0, 1, 1]
    with pytest.raises(InputError, match="missing"):
        calibr.calibration_error(p, y, bins=2)
    assert calibr.calibration_error(p, y, bins=2, na_rm=True) == pytest.approx(
        math.sqrt(0.065), rel=1e-14)



# --------------------------------------------------------------------------
# calibr/_bootstrap.py

_GEN = np.random.default_rng(20261202)
P = np.round(_GEN.random(80), 2)
Y = (_GEN.random(80) < P**2).astype(np.int64)


def test_bootstrap_row_limit():
    """_bootstrap 51 (``2**31 - 1``: the int32 counts of the kernels) and 216 (``>``
    -> ``>=``, the ``raise`` -> ``pass``), with the limit lowered to 3 rows."""
    from calibr import _bootstrap as bt

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
    """_bootstrap 66 and 102: ``frozen=True`` -> ``False`` (a result's fields could be
    reassigned) and ``eq=False`` -> ``True`` (two results compared field by field:
    their arrays make that an error)."""
    import dataclasses

    a = calibr.bootstrap(P, Y, n_resamples=5, rng=0)
    b = calibr.bootstrap(P, Y, n_resamples=5, rng=0)
    pa = calibr.paired_bootstrap(P, P**2, Y, n_resamples=5, rng=0)
    pb = calibr.paired_bootstrap(P, P**2, Y, n_resamples=5, rng=0)
    assert a == a and (a == b) is False and (pa == pb) is False
    for res in (a, pa):
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.estimate = 0.0


def test_bootstrap_standard_error_of_one_and_two_replicates():
    """_bootstrap 434: ``dist.shape[0] > 1`` -> ``>= 1`` (numpy's warning for one
    replicate) and ``1`` -> ``2`` (two replicates' standard error NaN); 454
    ``Integer(1, ...)`` -> ``Integer(2, ...)`` (one resample refused)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = calibr.bootstrap(P, Y, n_resamples=1, rng=0)
        assert math.isnan(one.standard_error) and one.n_resamples == 1
        two = calibr.bootstrap(P, Y, n_resamples=2, rng=0)
    d = two.bootstrap_distribution
    assert two.standard_error == pytest.approx(abs(d[0] - d[1]) / math.sqrt(2), rel=1e-12)


def test_bootstrap_defaults():
    """_bootstrap 476-478 and 627-630: the documented defaults (9999 resamples, level
    0.95, the percentile interval, the two-sided alternative)."""
    p, y = P[:20], Y[:20]
    res = calibr.bootstrap(p, y, rng=1)
    assert (res.n_resamples, res.confidence_level, res.method) == (9999, 0.95, "percentile")
    assert res.bootstrap_distribution.shape == (9999,)
    alpha = (1 - 0.95) / 2
    lo, hi = np.quantile(res.bootstrap_distribution, [alpha, 1 - alpha])
    assert res.confidence_interval == pytest.approx((lo, hi), rel=1e-15)
    pr = calibr.paired_bootstrap(p, p**2, y, rng=1)
    assert (pr.n_resamples, pr.confidence_level, pr.method, pr.alternative) == (
        9999, 0.95, "percentile", "two-sided")


def _scipy_interval(res, p, y, metric, method="BCa", **kw):
    from scipy import stats as st

    def statistic(i):
        i = i.astype(np.int64)
        return metric(p[i], y[i])

    return st.bootstrap((np.arange(len(p)),), statistic, n_resamples=0, vectorized=False,
                        bootstrap_result=res, method=method, **kw).confidence_interval


def test_bca_with_replicates_equal_to_the_estimate_is_scipys():
    """_bootstrap 391: ``dist < estimate`` -> ``<=`` and ``dist <= estimate`` -> ``<``
    (the bias correction z0 counts a tie as half, as scipy's ``percentileofscore``),
    and ``+`` -> ``-``: a metric with few values (the mean label), so many replicates
    equal the estimate."""
    p, y = P[:30], Y[:30]

    def rate(p, y):
        return float(np.mean(y))

    res = calibr.bootstrap(p, y, rate, n_resamples=300, rng=4, method="bca")
    assert np.count_nonzero(res.bootstrap_distribution == res.estimate) >= 20
    want = _scipy_interval(res, p, y, rate)
    assert np.allclose(res.confidence_interval, want, rtol=1e-12, atol=0)


def test_bca_with_every_replicate_on_one_side_is_nan():
    """_bootstrap 380 ``q <= 0.0`` -> ``<`` (and ``0.0`` -> ``1.0``) and 382 ``q >=
    1.0`` -> ``>``: every replicate above (below) the estimate gives z0 = -inf (+inf),
    a NaN interval with its warning, not statistics' error for inv_cdf(0) / (1)."""
    p, y = np.linspace(0.05, 0.95, 12), Y[:12]

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


def test_canonical_cost_warning_threshold(monkeypatch):
    """_bootstrap 443 (``(n_resamples + 1)`` -> ``- 1`` / ``+ 2``), 444 (``>`` ->
    ``>=``) and 343/344 (``n**2 * K`` -> ``/ K``): the cost of the canonical SKCE is
    ``n^2 K (B + 1)`` kernel evaluations."""
    import warnings

    from calibr import _bootstrap as bt

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
    """_bootstrap 749: ``np.isnan(arr).any(axis=1)`` -> ``.all`` (a row of a matrix
    with one missing value kept for the other model); 746/748 ``ndim == 1 / 2``."""
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
    """_bootstrap 259: ``bins = edges.shape[0] - 1`` -> ``+ 1`` (one more, empty, bin
    per class: the same values, but B + 1 bins times K classes checked against the
    bound of 10,000,000 cells). 10,000 bins x 1,000 classes is the bound itself:
    taken; one more bin is refused, as ece() refuses it.

    Two rows of equal probabilities 1/1000: the top label (the first column) is
    right for neither, every class column's rows share a bin, and the classwise ECE
    is the mean over the columns of |hits / 2 - 0.001| (0.499 for the two classes
    that occur once each, 0.001 for the others)."""
    k = 1000
    p = np.full((2, k), 1.0 / k)
    y = np.array([2, 3])  # 1-based codes: classes 2 and 3
    res = calibr.bootstrap(p, y, "ece", bins=10_000, n_resamples=1, rng=0)
    assert res.estimate == pytest.approx((2 * 0.499 + (k - 2) * 0.001) / k, rel=1e-9)
    with pytest.raises(InputError, match=r"must be at most 10,000,000 for type = "
                                         r"\"classwise\""):
        calibr.bootstrap(p, y, "ece", bins=10_001, n_resamples=1, rng=0)


# --------------------------------------------------------------------------
# calibr/_smooth.py


def test_smece_curve_density_floor_is_1e_8_of_the_maximum():
    """_smooth 46 (``1e-8`` -> ``2e-8``) and 462 (``>=`` -> ``>``, ``np.max`` ->
    ``np.min``): NaN exactly where the smoothed density is below 1e-8 of its maximum.

    One prediction at 0.2, sigma 0.05: the density is a Gaussian bump, at distance t
    ``exp(-t^2 / (2 sigma^2))`` of its peak; the mesh of 2001 points has points whose
    ratio lies in [1.2e-8, 1.9e-8), finite here and NaN with a floor of 2e-8.
    """
    curve = calibr.smece_curve([0.2], [1], bandwidth=0.05, points=2001)
    ratio = curve.density / np.max(curve.density)
    assert np.any((ratio >= 1.2e-8) & (ratio < 1.9e-8))
    assert np.all(np.isfinite(curve.y[ratio >= 1.01e-8]))
    assert np.all(np.isnan(curve.y[ratio < 0.99e-8]))
    assert np.isnan(curve.y).sum() > 900  # beyond 0.2 + 6 sigma


def test_smece_curve_points_bounds_and_default():
    """_smooth 379 (``Integer(2, 1_000_000)``: ``2`` -> ``3``, ``1_000_000`` ->
    ``1_000_001``) and 385 (the default ``points=200``)."""
    p, y = [0.2, 0.6, 0.7], [0, 1, 1]
    assert calibr.smece_curve(p, y, bandwidth=0.1).x.shape == (200,)
    assert calibr.smece_curve(p, y, bandwidth=0.1, points=2).x.tolist() == [0.0, 1.0]
    assert calibr.smece_curve(p, y, bandwidth=0.1, points=1_000_000).y.shape == (1_000_000,)
    with pytest.raises(InputError, match=r"^`points` must be an integer from 2 to 1,000,000; "
                                         r"got 1000001\.$"):
        calibr.smece_curve(p, y, bandwidth=0.1, points=1_000_001)


def test_smooth_curve_is_frozen():
    """_smooth 351: ``@dataclass(frozen=True)`` -> ``False``."""
    import dataclasses

    curve = calibr.smece_curve([0.2, 0.6], [0, 1], bandwidth=0.1, points=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        curve.bandwidth = 0.2


# --------------------------------------------------------------------------
# calibr/pytest_plugin.py: the settings, the keys, the snapshot and the comparison


def _fixture(request, tmp_path):
    from calibr.pytest_plugin import CalibrationRegressionFixture

    return CalibrationRegressionFixture(tmp_path / "copy", tmp_path / "data", request)


def _snapshot(path, rows, columns=("metric", "n", "value")):
    import pandas as pd

    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False, lineterminator="\n")
    return path


def test_plugin_settings_defaults_and_bounds():
    """pytest_plugin 42, 44, 45, 46: the documented defaults (tolerance 1e-10; level
    0.95, 999 resamples, seed 0) changed; 302 ``real < 0`` -> ``<=`` and ``0`` ->
    ``1`` (a tolerance of 0 or 0.5 refused); 313 ``Integer(1, ...)`` -> ``Integer(2,
    ...)`` (one resample refused); 316 ``or`` -> ``and`` (a bool seed taken)."""
    from calibr.pytest_plugin import CalibrationRegressionFixture as F

    assert F._settings("absolute", None, None, None, None) == {"mode": "absolute",
                                                               "tolerance": 1e-10}
    assert F._settings("absolute", 0, None, None, None)["tolerance"] == 0.0
    assert F._settings("absolute", 0.5, None, None, None)["tolerance"] == 0.5
    assert F._settings("statistical", None, None, None, None) == {
        "mode": "statistical", "level": 0.95, "n_resamples": 999, "seed": 0}
    assert F._settings("statistical", None, 0.5, 1, 7) == {
        "mode": "statistical", "level": 0.5, "n_resamples": 1, "seed": 7}
    with pytest.raises(calibr.InputTypeError, match=r"^`rng` must be an integer seed >= 0 "
                                                    r"\(the snapshot stores it\); got bool\.$"):
        F._settings("statistical", None, None, None, True)
    with pytest.raises(InputError, match=r'^`n_resamples` applies to mode="statistical"'):
        F._settings("absolute", None, None, 5, None)


def test_plugin_keys():
    """pytest_plugin 328 ``not isinstance(by, Sequence)`` -> ``isinstance`` (a list of
    keys taken as one key); 330 ``not isinstance(key, Hashable)`` -> ``isinstance``
    (an unhashable key reaches ``in data.columns``: TypeError, not the message); 336
    ``!=`` -> ``==`` and its ``raise`` -> ``pass`` (a column named twice)."""
    import pandas as pd

    from calibr.pytest_plugin import CalibrationRegressionFixture as F

    df = pd.DataFrame({"g": ["a"], 0: [1], "p": [0.5], "y": [1]})
    assert F._keys(df, None) == []
    assert F._keys(df, "g") == ["g"]
    assert F._keys(df, ["g", 0]) == ["g", 0]
    assert F._keys(df, ("g",)) == ["g"]
    assert F._keys(df, 0) == [0]
    with pytest.raises(InputError, match=r"^`by` must name columns of `data`; \['g'\] is not "
                                         r"one\.$"):
        F._keys(df, [["g"]])
    with pytest.raises(InputError, match=r"^`by` must name each column once; got "
                                         r"\['g', 'g'\]\.$"):
        F._keys(df, ["g", "g"])


def test_plugin_basename_must_be_a_non_empty_string(request, tmp_path):
    """pytest_plugin 243: ``not isinstance(basename, str)`` -> ``isinstance``, ``not
    basename`` -> ``basename``, ``or`` -> ``and`` and the ``raise`` -> ``pass``."""
    import pandas as pd

    fx = _fixture(request, tmp_path)
    df = pd.DataFrame({"p": [0.1, 0.8], "y": [0, 1]})
    for bad, shown in (("", "''"), (3, "3")):
        with pytest.raises(InputError, match=f"^`basename` must be a non-empty string; got "
                                             f"{shown}\\.$"):
            fx.check(df, p="p", y="y", basename=bad)
    assert not list(tmp_path.rglob("*.csv"))


def test_plugin_reads_empty_cells_as_nan_and_names_a_missing_column(tmp_path):
    """pytest_plugin 94 ``c not in frame.columns`` -> ``in`` and its ``raise`` ->
    ``pass``; 104 ``col in row`` -> ``not in``; 105 ``row[col] != ""`` -> ``==``."""
    from calibr.pytest_plugin import _read

    path = _snapshot(tmp_path / "s.csv", [["ece", 3, ""], ["mce", 3, 0.25]])
    rows = _read(path, [])
    assert math.isnan(rows[0]["value"]) and rows[1]["value"] == 0.25 and rows[1]["n"] == 3.0
    assert rows[0]["metric"] == "ece" and "low" not in rows[0]
    bad = _snapshot(tmp_path / "b.csv", [["ece", 3]], columns=("metric", "n"))
    with pytest.raises(AssertionError, match=r"^The snapshot .*b\.csv has no column 'value'; "
                                             r"its columns are 'metric', 'n'\."):
        _read(bad, [])
    with pytest.raises(AssertionError, match=r"has no column 'g'"):
        _read(path, ["g"])


def test_plugin_comparison_boundaries(request, tmp_path):
    """pytest_plugin 419 ``and`` -> ``or`` (a NaN value against a number skipped); 422
    ``<=`` -> ``<`` (a difference equal to the tolerance fails); 424 ``<=`` -> ``<``
    (a value equal to the snapshot's upper end fails): the documented boundaries."""
    fx = _fixture(request, tmp_path)
    absolute = {"mode": "absolute", "tolerance": 0.25}
    old = _snapshot(tmp_path / "old.csv", [["ece", 3, 0.5], ["mce", 3, ""]])
    same = _snapshot(tmp_path / "same.csv", [["ece", 3, 0.75], ["mce", 3, ""]])
    fx._compare(same, old, old, [], absolute)  # |0.75 - 0.5| = 0.25: passes
    for rows in ([["ece", 3, 0.75 + 2**-52], ["mce", 3, ""]], [["ece", 3, ""], ["mce", 3, ""]],
                 [["ece", 3, 0.5], ["mce", 3, 0.5]]):
        new = _snapshot(tmp_path / "new.csv", rows)
        with pytest.raises(AssertionError, match=r"^Calibration differs from the snapshot: "
                                                 r"1 value\(s\) further than the tolerance"):
            fx._compare(new, old, old, [], absolute)
    cols = ("metric", "n", "value", "low", "high", "level", "method", "n_resamples", "seed")
    stat = {"mode": "statistical", "level": 0.9, "n_resamples": 9, "seed": 1}
    old = _snapshot(tmp_path / "old.csv", [["ece", 3, 0.5, 0.25, 0.625, 0.9, "percentile", 9,
                                            1]], cols)
    at_high = _snapshot(tmp_path / "new.csv", [["ece", 3, 0.625, "", "", "", "", "", ""]],
                        cols)
    fx._compare(at_high, old, old, [], stat)
    for value in (0.625 + 2**-53, ""):
        new = _snapshot(tmp_path / "new.csv", [["ece", 3, value, "", "", "", "", "", ""]],
                        cols)
        with pytest.raises(AssertionError, match=r"^Calibration is worse than the snapshot: "
                                                 r"1 value\(s\) above the upper end"):
            fx._compare(new, old, old, [], stat)


def test_plugin_table_groups_sorted_with_missing_keys_and_observed_only(request, tmp_path):
    """pytest_plugin 352: ``sort=True`` -> ``False`` (the groups in order of
    appearance), ``dropna=False`` -> ``True`` (rows with a missing key dropped: the
    docstring says they form their own group), ``observed=True`` -> ``False`` (an
    unused category of a categorical key made a group)."""
    import pandas as pd

    fx = _fixture(request, tmp_path)
    settings = {"mode": "absolute", "tolerance": 0.0}
    df = pd.DataFrame({"g": ["b", "b", None, "a", "a"], "p": [0.1, 0.8, 0.3, 0.2, 0.6],
                       "y": [0, 1, 1, 0, 0]})
    table = fx._table(df, "p", "y", ["ece"], ["g"], None, settings)
    assert table["g"].iloc[:2].tolist() == ["a", "b"] and pd.isna(table["g"].iloc[2])
    assert table["n"].tolist() == [2, 2, 1]
    # a: |0 - 0.2| and |0 - 0.6| in two bins; b: 0.1 and 0.2 gaps; the lone 0.3 with y 1
    assert table["value"].tolist() == pytest.approx([0.4, 0.15, 0.7], rel=1e-12)
    df["g"] = pd.Categorical(df["g"], categories=["c", "b", "a"])
    table = fx._table(df, "p", "y", ["ece"], ["g"], None, settings)
    assert table["g"].iloc[:2].tolist() == ["b", "a"] and len(table) == 3


def test_plugin_snapshot_path_without_resolve_check_paths(request, tmp_path, monkeypatch):
    """pytest_plugin 274 ``fullpath is not None`` -> ``is None`` and 276 ``basename or
    ...`` -> ``and``: the rule used with a pytest-regressions older than 2.6 (no
    ``resolve_check_paths``): the full path as given, else the basename or the test's
    name (non-word characters as ``_``) with ``.csv`` in the original data folder."""
    import sys
    import types
    from pathlib import Path

    fx = _fixture(request, tmp_path)
    monkeypatch.setitem(sys.modules, "pytest_regressions.common",
                        types.ModuleType("pytest_regressions.common"))
    assert fx._source(None, "/x/y.csv") == Path("/x/y.csv")
    assert fx._source("snap", None) == tmp_path / "data" / "snap.csv"
    name = "test_plugin_snapshot_path_without_resolve_check_paths"
    assert fx._source(None, None) == tmp_path / "data" / f"{name}.csv"


# --------------------------------------------------------------------------
# calibr/cli/_compare.py


def _compare_cli(capsys, *argv):
    import argparse

    from calibr.cli import _compare

    parser = argparse.ArgumentParser(prog="calibr")
    _compare.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["compare", *map(str, argv)])
    status = args.run(args)
    out, err = capsys.readouterr()
    return status, out, err


def _two_files(tmp_path, n=60, seed=3, power=1.0, **extra):
    """A baseline and a candidate for the same rows (a key column ``id``)."""
    import pandas as pd

    gen = np.random.default_rng(seed)
    p = np.round(gen.random(n), 3)
    y = (gen.random(n) < p).astype(int)
    base = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "p": p, "y": y, **extra})
    cand = base.assign(p=np.round(p**power, 6))
    base.to_csv(tmp_path / "base.csv", index=False)
    cand.to_csv(tmp_path / "cand.csv", index=False)
    return base, cand


def _error(capsys, *argv):
    status, out, err = _compare_cli(capsys, *argv)
    assert (status, out) == (2, ""), err
    assert err.startswith("calibr: error: ") and err.count("\n") == 1, err
    return err[len("calibr: error: "):].rstrip("\n")


def test_compare_level_and_resamples_bounds(tmp_path, capsys, monkeypatch):
    """_compare 173: ``0.0 < level`` -> ``<=``, ``level < 1.0`` -> ``<=`` (0 or 1 passed
    on to the bootstrap, whose message names ``confidence_level``), ``and`` -> ``or``;
    175: ``1 <= n_resamples`` -> ``<``, ``1`` -> ``2``, ``<= MAX_RESAMPLES`` -> ``<``."""
    from calibr import _input

    _two_files(tmp_path)
    files = (tmp_path / "base.csv", tmp_path / "cand.csv")
    for level, shown in (("0", "0.0"), ("1", "1.0"), ("nan", "nan"), ("-0.5", "-0.5")):
        assert _error(capsys, *files, "--level", level) == (
            f"--level must be a number strictly between 0 and 1; got {shown}.")
    assert _compare_cli(capsys, *files, "--n-resamples", "1")[0] in (0, 1)
    monkeypatch.setattr(_input, "MAX_RESAMPLES", 5)
    assert _error(capsys, *files, "--n-resamples", "6") == (
        "--n-resamples must be an integer from 1 to 5; got 6.")
    status, out, _ = _compare_cli(capsys, *files, "--n-resamples", "5")
    assert status in (0, 1) and "percentile, 5 resamples, seed 0" in out


def test_compare_default_resamples_and_level(tmp_path, capsys):
    """_compare 35 and 36: the documented defaults, 9999 resamples at level 0.95."""
    _two_files(tmp_path)
    status, out, _ = _compare_cli(capsys, tmp_path / "base.csv", tmp_path / "cand.csv")
    assert status == 0
    assert "percentile, 9999 resamples, seed 0 (the same for each group and metric)" in out
    assert "worse: p-value < 0.05 (--level 0.95)" in out


def test_compare_layout_errors(tmp_path, capsys):
    """_compare 188 ``is not None`` -> ``is``, 193, 196 ``or`` -> ``and`` (one of the
    two columns given), 202 ``!=`` -> ``==`` and the ``raise`` -> ``pass`` of each."""
    import pandas as pd

    base, _ = _two_files(tmp_path)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    base.assign(q=base["p"]).to_csv(tmp_path / "both.csv", index=False)
    both = tmp_path / "both.csv"
    one = "one file holds both models: give --p-baseline COL and --p-candidate COL (or give " \
          "two files, BASELINE and CANDIDATE)."
    assert _error(capsys, both, "--p-baseline", "p") == one
    assert _error(capsys, both, "--p-candidate", "q") == one
    assert _error(capsys, both, "--p-baseline", "p", "y", "--p-candidate", "q") == (
        "--p-baseline and --p-candidate must name as many columns; got 2 and 1.")
    for option in ("--p-baseline", "--p-candidate"):
        assert _error(capsys, b, c, option, "p") == (
            f"{option} names a column of the one file that holds both models; with BASELINE "
            "and CANDIDATE, give --prob.")
    assert _error(capsys, both, "--prob", "p") == (
        "--prob names the column of each of two files; with one file, give --p-baseline and "
        "--p-candidate.")
    assert pd.read_csv(both).shape == (60, 4)


def test_compare_missing_columns_are_named(tmp_path, capsys):
    """_compare 216/217 (the first 10 columns, then "... (N in all)" past 10: ``>`` ->
    ``>=``, ``10`` -> ``11``); 321 and 323 ``not two`` -> ``two`` (one file: the
    option named is --p-baseline / --p-candidate, not --prob); 326 ``labels[0]`` ->
    ``labels[1]`` (a --by column missing from BASELINE said missing from CANDIDATE);
    316 ``== 0`` -> ``== 1`` and its raise (a file of a header only)."""
    import pandas as pd

    extra = {f"c{i}": 0 for i in range(7)}  # id, p, y + 7 = 10 columns
    base, _ = _two_files(tmp_path, **extra)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    shown = ", ".join(repr(col) for col in base.columns)
    assert _error(capsys, b, c, "-y", "nope") == (
        f"--label: no column 'nope' in BASELINE {b}; its columns are {shown}.")
    base.assign(c7=0).to_csv(tmp_path / "wide.csv", index=False)
    assert _error(capsys, tmp_path / "wide.csv", c, "-y", "nope") == (
        f"--label: no column 'nope' in BASELINE {tmp_path / 'wide.csv'}; its columns are "
        f"{shown}, ... (11 in all).")
    assert _error(capsys, b, c, "--by", "nope").startswith(
        f"--by: no column 'nope' in BASELINE {b}; its columns are 'id'")
    assert _error(capsys, b, "--p-baseline", "nope", "--p-candidate", "p").startswith(
        f"--p-baseline: no column 'nope' in {b}; its columns are 'id'")
    assert _error(capsys, b, "--p-baseline", "p", "--p-candidate", "nope").startswith(
        f"--p-candidate: no column 'nope' in {b}; its columns are 'id'")
    pd.DataFrame(columns=["p", "y"]).to_csv(tmp_path / "empty.csv", index=False)
    assert _error(capsys, tmp_path / "empty.csv", c) == (
        f"BASELINE {tmp_path / 'empty.csv'} has no data rows, only a header.")


def test_compare_key_messages(tmp_path, capsys):
    """_compare 223/224 (3 keys shown, then "...": ``>`` -> ``>=``, ``3`` -> ``4``);
    230 (the data row of a missing key: ``+ 1``); 236/237/240 (the rows and count of
    a repeated key, its plural); 263/264 and 269/270 (one key: singular)."""
    import pandas as pd

    base, cand = _two_files(tmp_path)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    for drop, shown in ((1, "1 key of BASELINE {b} is not in CANDIDATE {c} ('r59')"),
                        (3, "3 keys of BASELINE {b} are not in CANDIDATE {c} ('r57', 'r58', "
                            "'r59')"),
                        (4, "4 keys of BASELINE {b} are not in CANDIDATE {c} ('r56', 'r57', "
                            "'r58', ...)")):
        cand.iloc[:-drop].to_csv(c, index=False)
        assert _error(capsys, b, c, "--key", "id") == (
            "--key 'id': " + shown.format(b=b, c=c) + "; both files must hold the same rows.")
    base.iloc[:-1].to_csv(tmp_path / "short.csv", index=False)
    cand.to_csv(c, index=False)
    s = tmp_path / "short.csv"
    assert _error(capsys, s, c, "--key", "id") == (
        f"--key 'id': 1 key of CANDIDATE {c} is not in BASELINE {s} ('r59'); both files "
        "must hold the same rows.")
    base.iloc[:-2].to_csv(s, index=False)
    assert _error(capsys, s, c, "--key", "id") == (
        f"--key 'id': 2 keys of CANDIDATE {c} are not in BASELINE {s} ('r58', 'r59'); both "
        "files must hold the same rows.")
    missing = base.assign(id=base["id"].where(base.index != 2, None))
    missing.to_csv(tmp_path / "m.csv", index=False)
    assert _error(capsys, tmp_path / "m.csv", c, "--key", "id") == (
        f"--key 'id': BASELINE {tmp_path / 'm.csv'} has a missing key at data row 3; each "
        "row needs a key.")
    for ids, count in ((["r0", "r1", "r0"], "1 repeated key"),
                       (["r0", "r1", "r0", "r1", "r0"], "3 repeated keys")):
        dup = base.copy()
        dup.loc[: len(ids) - 1, "id"] = ids
        dup.to_csv(tmp_path / "d.csv", index=False)
        assert _error(capsys, tmp_path / "d.csv", c, "--key", "id") == (
            f"--key 'id': the key 'r0' appears more than once in BASELINE "
            f"{tmp_path / 'd.csv'} (data rows 1 and 3; {count} in all); each row needs its "
            "own key.")
    assert pd.read_csv(c).shape[0] == 60


def test_compare_label_difference_names_the_row(tmp_path, capsys):
    """_compare 355/357: the data row (``row + 1``) and the two labels named."""
    base, cand = _two_files(tmp_path)
    flipped = cand.copy()
    flipped.loc[4, "y"] = 1 - flipped.loc[4, "y"]
    flipped.to_csv(tmp_path / "cand.csv", index=False)
    assert _error(capsys, tmp_path / "base.csv", tmp_path / "cand.csv") == (
        f"--label 'y' differs between the files: data row 5 of BASELINE has "
        f"{int(base.loc[4, 'y'])}, the same row of CANDIDATE {int(flipped.loc[4, 'y'])}; the "
        "files must hold the same rows (--key matches rows by a key column).")


def test_compare_by_refuses_result_column_names(tmp_path, capsys):
    """_compare 327 (``in`` -> ``not in``) and its ``raise`` -> ``pass``."""
    _two_files(tmp_path, pvalue=1)
    assert _error(capsys, tmp_path / "base.csv", tmp_path / "cand.csv", "--by", "pvalue") == (
        "--by: the column 'pvalue' has the name of a column of the result; rename it in the "
        "data.")


def test_compare_one_file_validation_names_each_models_column(tmp_path, capsys):
    """_compare 282: ``"baseline" in label`` -> ``not in`` (the option of the other
    model named in the message of a bad probability)."""
    base, _ = _two_files(tmp_path)
    bad = base.assign(q=base["p"]).assign(p=base["p"].where(base.index != 4, 1.5))
    bad.to_csv(tmp_path / "both.csv", index=False)
    f = tmp_path / "both.csv"
    err = _error(capsys, f, "--p-baseline", "p", "--p-candidate", "q")
    assert err.startswith("--p-baseline") and "data row 5" in err, err
    err = _error(capsys, f, "--p-baseline", "q", "--p-candidate", "p")
    assert err.startswith("--p-candidate") and "data row 5" in err, err


def test_compare_groups_sorted_with_missing_keys_and_observed_only(tmp_path, capsys):
    """_compare 375: ``sort=True`` -> ``False`` (groups in order of appearance),
    ``dropna=False`` -> ``True`` (rows with a missing key dropped: the help says they
    form their own group), ``observed=True`` -> ``False`` (an unused category of a
    categorical key in a Parquet file made an empty group)."""
    import io

    import pandas as pd

    seg = np.array(["v"] * 20 + ["u"] * 20 + [None] * 20, dtype=object)
    base, _ = _two_files(tmp_path, seg=seg)
    b, c = tmp_path / "base.csv", tmp_path / "cand.csv"
    common = ("--by", "seg", "--n-resamples", "19", "-f", "csv")
    status, out, err = _compare_cli(capsys, b, c, *common)
    assert status == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert got["seg"].iloc[:2].tolist() == ["u", "v"] and pd.isna(got["seg"].iloc[2])
    assert got["n"].tolist() == [20, 20, 20]
    base.assign(seg=pd.Categorical(seg, categories=["w", "v", "u"])).to_parquet(
        tmp_path / "base.parquet")
    status, out, err = _compare_cli(capsys, tmp_path / "base.parquet", c, *common)
    assert status == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert got["seg"].iloc[:2].tolist() == ["v", "u"] and got["n"].tolist() == [20, 20, 20]


def test_compare_two_class_columns_and_a_column_named_one(tmp_path, capsys):
    """_compare 339 ``len(p_base) > 1`` -> ``>=`` (a binary column named "1" taken as
    the column of class 1) and ``1`` -> ``2`` (two columns named "0", "1" not matched
    to the labels 0, 1); 385/386 ``> 1`` -> ``>= 1`` / ``> 2`` (a two-column matrix
    passed as its first column)."""
    import io

    import pandas as pd

    gen = np.random.default_rng(11)
    n = 200
    p = gen.random(n)
    y = (gen.random(n) < p).astype(int)
    q = p**2
    pd.DataFrame({"0": 1 - p, "1": p, "y": y}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"0": 1 - q, "1": q, "y": y}).to_csv(tmp_path / "b.csv", index=False)
    status, out, err = _compare_cli(capsys, tmp_path / "a.csv", tmp_path / "b.csv", "--prob",
                                    "0", "1", "--n-resamples", "49", "-f", "csv")
    assert status in (0, 1), err
    want = calibr.paired_bootstrap(np.column_stack([1 - q, q]), np.column_stack([1 - p, p]),
                                   y, n_resamples=49, alternative="greater", rng=0,
                                   classes=[0, 1])
    got = pd.read_csv(io.StringIO(out))
    assert got["difference"].iloc[0] == pytest.approx(want.estimate, rel=1e-12)
    assert got["pvalue"].iloc[0] == want.pvalue
    status, out, err = _compare_cli(capsys, tmp_path / "a.csv", tmp_path / "b.csv", "--prob",
                                    "1", "--n-resamples", "49", "-f", "csv")
    assert status in (0, 1), err
    want = calibr.paired_bootstrap(q, p, y, n_resamples=49, alternative="greater", rng=0)
    assert pd.read_csv(io.StringIO(out))["difference"].iloc[0] == pytest.approx(
        want.estimate, rel=1e-12)


def test_compare_table_names_the_worse_groups(tmp_path, capsys):
    """_compare 424: the group of each worse comparison in the table's verdict line
    (the ``" (" + ... + ")"`` concatenation mutated to ``-``)."""
    seg = np.array(["u", "v"] * 200, dtype=object)
    _two_files(tmp_path, n=400, power=3.0, seg=seg)
    status, out, err = _compare_cli(capsys, tmp_path / "base.csv", tmp_path / "cand.csv",
                                    "--by", "seg", "--n-resamples", "199")
    assert status == 1, err
    assert out.endswith("\nresult: the candidate is significantly worse in 2 of 2 "
                        "comparisons: ece (seg='u'); ece (seg='v') (exit status 1)\n"), out


def test_grid_is_the_smallest_power_of_two_of_step_at_most_sigma_over_400():
    """_smooth 33 (``400`` -> ``401``), 35 (``1024`` -> ``1025``) and 68/69 (``max`` ->
    ``min``, ``target - 1`` -> ``+ 1``, ``1 <<`` -> ``2 <<``): ``nodes(sigma)`` is the
    smallest power of two m with 1/m <= sigma/400, and at least 1024 (docs/smece.md).

    400 / 1024 = 0.390625 needs exactly 1024 intervals; a bandwidth just below it
    needs 2048; 400 / 2**19 is the smallest bandwidth's grid."""
    from calibr import _smooth

    assert _smooth.nodes(0.390625) == 1024
    assert _smooth.nodes(0.390625 * (1 - 2**-40)) == 2048
    assert _smooth.nodes(400 / 2048) == 2048
    assert _smooth.nodes(1.0) == 1024 and _smooth.nodes(50.0) == 1024
    assert _smooth.nodes(400 / 2**19) == 2**19
    assert _smooth.nodes(1e-3) == 2**19


def test_bootstrap_warnings_point_at_the_callers_line(monkeypatch):
    """The BCa and canonical-cost warnings name the user's file, not calibr's
    parameter wrapper (stacklevel through validate_params)."""
    import warnings

    from calibr import _bootstrap as bt

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
