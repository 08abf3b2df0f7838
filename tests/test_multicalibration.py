"""``calibr.multicalibration()``: the multicalibration error of Guy et al. (2025)
(``docs/definitions.md``, "Multicalibration: `multicalibration()`").

Checked against mcgrad 0.1.5's ``MulticalibrationError`` at
``precision_dtype="float64"`` (every segment: its rows, its conditions, ECCE,
sigma, their ratio and p-value, and every summary number), against the oracle
``tests/oracles/multicalibration.py`` (ties, weights as repeated rows), on
hand-worked cases in exact fractions, and for its refusals.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from conftest import require
from oracles.multicalibration import (
    multicalibration_oracle,
    range_sf_oracle,
    repeat_rows,
)
from tolerances import (
    EXACT_RTOL,
    MULTICAL_PVALUE_ATOL,
    MULTICAL_RTOL,
    RANGE_SF_ATOL,
    RANGE_SF_RTOL,
)

import calibr
from calibr._inference.multicalibration import SEGMENT_COLUMNS, _weighted_quantiles
from calibr._kernels.cumulative import range_sf

# mcgrad 0.1.5 sorts in place, which pandas 3 deprecates
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword")


def _frame(n: int = 3000, seed: int = 0, *, ties: bool = False, nan: bool = True,
           weights: bool = False) -> pd.DataFrame:
    """Predictions with a miscalibrated corner, categorical and numeric columns
    (with missing values), a numeric column of few values and a boolean one."""
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    if ties:
        p = np.round(p, 2)
    df = pd.DataFrame({"p": p})
    df["c0"] = rng.choice(list("abcde"), n, p=[0.4, 0.25, 0.15, 0.12, 0.08])
    df["c1"] = rng.choice(["u", "v", None], n, p=[0.5, 0.3, 0.2]) if nan else rng.choice(
        ["u", "v"], n)
    df["x0"] = rng.normal(size=n)
    if nan:
        df.loc[rng.random(n) < 0.05, "x0"] = np.nan
    df["x1"] = rng.integers(0, 3, n)
    df["k"] = rng.integers(0, 6, n)  # integer codes: categorical on request
    df["b"] = rng.random(n) < 0.3
    bias = np.where((df["c0"] == "a") & (df["x0"] > 0), 0.15, 0.0)
    df["y"] = (rng.random(n) < np.clip(df["p"] + bias, 0, 1)).astype(int)
    if weights:
        df["w"] = rng.integers(1, 4, n).astype(float)
    return df


def _keys(result: calibr.MulticalibrationResult) -> dict[frozenset, pd.Series]:
    """The result's segments by the oracle's keys."""
    out = {}
    for _, row in result.segments.iterrows():
        key = []
        for column, op, value in row["conditions"]:
            if op == "==":
                key.append((column, ("value", value)))
            elif op == "is missing":
                key.append((column, ("missing",)))
            elif op == "not in":
                key.append((column, ("other",)))
            else:
                key.append((column, ("bin", value.left, value.right)))
        out[frozenset(key)] = row
    return out


def _check_oracle(result, oracle, *, n_column: str = "n") -> None:
    got = _keys(result)
    assert set(got) == set(oracle)
    for key, (rows, ecce, sigma) in oracle.items():
        row = got[key]
        assert row[n_column] == rows, key
        assert row["ecce"] == pytest.approx(ecce, rel=MULTICAL_RTOL, abs=1e-15), key
        assert row["sigma"] == pytest.approx(sigma, rel=MULTICAL_RTOL), key


# --------------------------------------------------------------------------
# mcgrad


def _mcgrad(df, categorical, numerical, weight=None, **options):
    require("mcgrad")
    from mcgrad.metrics import MulticalibrationError

    m = MulticalibrationError(df, "y", "p", weight, categorical_segment_columns=categorical,
                              numerical_segment_columns=numerical, precision_dtype="float64",
                              max_n_segments=None, **options)
    m.segments_ecce_pvalue  # noqa: B018 - computes every cached property
    return m


def _mcgrad_segments(m) -> tuple[np.ndarray, list[dict]]:
    """Rows per segment and each segment's {column: value}, in mcgrad's order."""
    masks = m._segments[0].reshape(-1, m._segments[0].shape[2])[: m.total_number_segments]
    values: list[dict] = [{} for _ in range(m.total_number_segments)]
    for column, value, idx in m._segments[1].itertuples(index=False):
        values[int(idx)][column] = value
    return masks.sum(axis=1), values


def _our_values(result) -> list[dict]:
    """Each segment's {column: value} in mcgrad's spelling: a bin by its number, a
    pooled value as "__OTHER" (numeric codes: the smallest minus 1), missing as
    "__NA" (NaN for a numeric column)."""
    segs = result.segments.sort_values("segment")
    edges: dict = {}
    for cond in segs["conditions"]:
        for column, op, value in cond:
            if op == "in":
                edges.setdefault(column, set()).add(value.left)
    edges = {c: sorted(v) for c, v in edges.items()}
    out = []
    for cond in segs["conditions"]:
        spelled = {}
        for column, op, value in cond:
            if op == "in":
                spelled[column] = edges[column].index(value.left)
            elif op == "not in":
                spelled[column] = "__OTHER"
            elif op == "is missing":
                spelled[column] = "__NA"
            else:
                spelled[column] = value
        out.append(spelled)
    return out


def _same_values(ours: dict, theirs: dict) -> bool:
    if ours.keys() != theirs.keys():
        return False
    for column, v in ours.items():
        t = theirs[column]
        if v == "__NA":
            if not (t == "__NA" or (isinstance(t, float) and math.isnan(t))):
                return False
        elif v == "__OTHER":
            if not (t == "__OTHER" or isinstance(t, (int, float, np.number))):
                return False
        elif v != t:
            return False
    return True


def _compare_with_mcgrad(result, m) -> None:
    segs = result.segments.sort_values("segment")
    assert result.n_segments == m.total_number_segments
    rows, values = _mcgrad_segments(m)
    np.testing.assert_array_equal(segs["n"].to_numpy(), rows)
    ours = _our_values(result)
    bad = [i for i in range(len(ours)) if not _same_values(ours[i], values[i])]
    assert not bad, [(ours[i], values[i]) for i in bad[:3]]
    rtol = MULTICAL_RTOL
    np.testing.assert_allclose(segs["ecce"], m.segments_ecce, rtol=rtol)
    np.testing.assert_allclose(segs["sigma"], m._segments_ecce_std, rtol=rtol)
    np.testing.assert_allclose(segs["ecce_sigma"], m.segments_ecce_sigma, rtol=rtol)
    np.testing.assert_allclose(segs["pvalue"], m.segments_ecce_pvalue, rtol=0,
                               atol=MULTICAL_PVALUE_ATOL)
    assert result.statistic == pytest.approx(m.mce_sigma, rel=rtol)
    assert result.pvalue == pytest.approx(m.mce_pvalue, rel=0, abs=MULTICAL_PVALUE_ATOL)
    assert result.mce == pytest.approx(m.mce, rel=rtol)
    assert result.mce_relative == pytest.approx(m.mce_relative, rel=rtol)
    assert result.mde == pytest.approx(m.mde, rel=rtol)
    assert result.mde_relative == pytest.approx(m.mde_relative, rel=rtol)
    assert result.global_ecce == pytest.approx(m.global_ecce, rel=rtol)
    assert result.global_sigma == pytest.approx(m._global_ecce_std, rel=rtol)


@pytest.mark.parametrize("seed", [0, 1])
def test_equals_mcgrad_on_every_segment_at_the_defaults(seed):
    df = _frame(seed=seed)
    m = _mcgrad(df, ["c0", "c1", "b"], ["x0", "x1"])
    result = calibr.multicalibration(df, "p", "y", ["c0", "c1", "b", "x0", "x1"])
    assert result.n_segments > 200
    _compare_with_mcgrad(result, m)


@pytest.mark.parametrize(("max_depth", "max_values", "min_samples"),
                         [(1, 3, 10), (2, 2, 1), (2, 5, 50), (3, 4, 25), (4, 1, 10)])
def test_equals_mcgrad_for_each_option(max_depth, max_values, min_samples):
    df = _frame(n=2000, seed=7)
    m = _mcgrad(df, ["c0", "c1"], ["x0", "x1"], max_depth=max_depth,
                max_values_per_segment_feature=max_values,
                min_samples_per_segment=min_samples)
    result = calibr.multicalibration(df, "p", "y", ["c0", "c1", "x0", "x1"], max_depth=max_depth,
                                     max_values=max_values, min_samples=min_samples)
    _compare_with_mcgrad(result, m)


def test_equals_mcgrad_for_numeric_columns_read_as_categorical():
    # integer codes with more values than max_values: pooled, never binned
    df = _frame(n=2000, seed=3, nan=False)
    m = _mcgrad(df, ["c0", "k"], ["x0"])
    result = calibr.multicalibration(df, "p", "y", ["c0", "k", "x0"], categorical=["k"])
    _compare_with_mcgrad(result, m)
    kept = [c for cond in result.segments["conditions"] for c in cond if c[0] == "k"]
    assert {op for _, op, _ in kept} == {"==", "not in"}


def test_one_categorical_column_may_be_named_alone():
    # a column's name is one column, not a sequence of one-letter names
    df = _frame(n=600, seed=4, nan=False)
    df = df.rename(columns={"k": "kind"})
    alone = calibr.multicalibration(df, "p", "y", ["c0", "kind"], categorical="kind")
    listed = calibr.multicalibration(df, "p", "y", ["c0", "kind"], categorical=["kind"])
    pd.testing.assert_frame_equal(alone.segments, listed.segments)
    assert any(c[0] == "kind" and c[1] in ("==", "not in")
               for cond in alone.segments["conditions"] for c in cond)


def test_a_categorical_dtype_equals_mcgrad_on_its_values():
    # mcgrad cannot pool the rare values of a pandas Categorical (it sets a new
    # category "__OTHER" and pandas raises), so it reads the plain values here
    df = _frame(n=2000, seed=4, nan=False)
    m = _mcgrad(df, ["c0", "c1"], ["x0"])
    df["c0"] = df["c0"].astype("category")
    result = calibr.multicalibration(df, "p", "y", ["c0", "c1", "x0"])
    _compare_with_mcgrad(result, m)


def test_ecce_with_weights_equals_mcgrad_whose_sigma_reads_weights_as_sampling_weights():
    # Where the segments are the same (few values, no pooling or bins, every
    # segment kept), each segment's ECCE and the base rate equal mcgrad's; the
    # sigma is that of frequency weights, sqrt(sum w p (1 - p)) / W, where
    # mcgrad's is sqrt(sum w^2 p (1 - p)) / W (docs/definitions.md).
    df = _frame(n=1500, seed=5, nan=False, weights=True)
    m = _mcgrad(df, ["c1", "b"], ["x1"], weight="w", min_samples_per_segment=1)
    result = calibr.multicalibration(df, "p", "y", ["c1", "b", "x1"], weights="w",
                                     min_samples=1)
    segs = result.segments.sort_values("segment")
    rows, values = _mcgrad_segments(m)
    np.testing.assert_array_equal(segs["n"].to_numpy(), rows)
    assert all(_same_values(a, b) for a, b in zip(_our_values(result), values, strict=True))
    np.testing.assert_allclose(segs["ecce"], m.segments_ecce, rtol=MULTICAL_RTOL)
    assert result.mde_relative / result.mde == pytest.approx(m.mde_relative / m.mde,
                                                             rel=MULTICAL_RTOL)
    masks = m._segments[0].reshape(-1, m._segments[0].shape[2])[: m.total_number_segments]
    mdf = m.df  # mcgrad's rows, sorted by p
    pw, ww = mdf["p"].to_numpy(), mdf["w"].to_numpy()
    for j, mask in enumerate(masks):
        v = pw[mask] * (1 - pw[mask])
        total = ww[mask].sum()
        assert m._segments_ecce_std[j] == pytest.approx(
            math.sqrt(np.sum(ww[mask] ** 2 * v)) / total, rel=MULTICAL_RTOL)
        assert segs["sigma"].iloc[j] == pytest.approx(
            math.sqrt(np.sum(ww[mask] * v)) / total, rel=MULTICAL_RTOL)


def test_tied_p_pools_each_block_so_the_ecce_is_at_most_mcgrads():
    # mcgrad reads the running sum after every row, in the order its unstable
    # sort leaves tied rows in; calibr reads it at the end of each block of tied
    # p, a subset of mcgrad's points with the same ends: never more.
    df = _frame(n=2000, seed=8, ties=True, nan=False)
    m = _mcgrad(df, ["c0"], ["x0"], max_depth=2)
    result = calibr.multicalibration(df, "p", "y", ["c0", "x0"], max_depth=2)
    rows, values = _mcgrad_segments(m)
    ours = _our_values(result)
    segs = result.segments.sort_values("segment")
    matched = 0
    for i, spelled in enumerate(ours):
        j = next(j for j, v in enumerate(values) if _same_values(spelled, v))
        assert segs["n"].iloc[i] == rows[j]
        assert segs["ecce"].iloc[i] <= m.segments_ecce[j] * (1 + MULTICAL_RTOL)
        assert segs["sigma"].iloc[i] == pytest.approx(m._segments_ecce_std[j], rel=MULTICAL_RTOL)
        matched += 1
    assert matched == m.total_number_segments
    assert (segs["ecce"].to_numpy() < m.segments_ecce.max()).any()


# --------------------------------------------------------------------------
# the oracle


@pytest.mark.parametrize(("seed", "ties", "max_depth", "max_values", "min_samples"),
                         [(0, False, 3, 3, 10), (1, True, 2, 4, 5), (2, True, 3, 2, 1),
                          (3, False, 1, 6, 30)])
def test_every_segment_equals_the_oracle(seed, ties, max_depth, max_values, min_samples):
    df = _frame(n=600, seed=seed, ties=ties)
    cols = ["c0", "c1", "x0", "x1", "k", "b"]
    result = calibr.multicalibration(df, "p", "y", cols, categorical=["k"], max_depth=max_depth,
                                     max_values=max_values, min_samples=min_samples)
    oracle = multicalibration_oracle(df, "p", "y", cols, categorical=("k",),
                                     max_depth=max_depth, max_values=max_values,
                                     min_samples=min_samples)
    _check_oracle(result, oracle)


def test_whole_number_weights_equal_the_repeated_rows():
    df = _frame(n=400, seed=11, ties=True, weights=True)
    cols = ["c0", "c1", "x0", "x1"]
    result = calibr.multicalibration(df, "p", "y", cols, weights="w", min_samples=20)
    repeated = repeat_rows(df, "w")
    oracle = multicalibration_oracle(repeated, "p", "y", cols, min_samples=20)
    _check_oracle(result, oracle, n_column="weight")
    plain = calibr.multicalibration(repeated, "p", "y", cols, min_samples=20)
    for field in ("statistic", "pvalue", "mce", "mce_relative", "mde", "mde_relative",
                  "global_ecce", "global_sigma", "n_segments"):
        assert getattr(result, field) == pytest.approx(getattr(plain, field), rel=MULTICAL_RTOL)
    assert result.n == df.shape[0] and plain.n == repeated.shape[0]


def test_rows_of_weight_zero_are_left_out_exactly():
    df = _frame(n=500, seed=12, weights=True)
    df.loc[df.index % 7 == 0, "w"] = 0.0
    cols = ["c0", "c1", "x0"]
    result = calibr.multicalibration(df, "p", "y", cols, weights="w")
    kept = df[df["w"] > 0]
    other = calibr.multicalibration(kept, "p", "y", cols, weights="w")
    pd.testing.assert_frame_equal(result.segments, other.segments)
    assert result.statistic == other.statistic and result.n == kept.shape[0]


def test_weighted_quantiles_are_numpys_of_the_repeated_sample_bit_for_bit():
    rng = np.random.default_rng(13)
    qs = np.linspace(0, 1, 6)
    for _ in range(200):
        m = int(rng.integers(1, 40))
        x = np.round(rng.normal(size=m), int(rng.integers(0, 4)))
        w = rng.integers(1, 5, m).astype(float)
        expected = np.quantile(np.repeat(x, w.astype(int)), qs)
        np.testing.assert_array_equal(_weighted_quantiles(x, w, qs), expected)


def test_weighted_quantiles_of_real_weights_run_from_the_minimum_to_the_maximum():
    rng = np.random.default_rng(15)
    qs = np.linspace(0, 1, 4)
    for _ in range(200):
        m = int(rng.integers(2, 30))
        x = rng.normal(size=m)
        w = rng.random(m) * float(rng.choice([0.01, 1.0, 10.0]))
        got = _weighted_quantiles(x, w, qs)
        assert got[0] == x.min() and got[-1] == x.max()
        assert (np.diff(got) >= 0).all()


def test_weights_that_sum_to_one_put_the_maximum_at_the_last_quantile_only():
    """Weights normalised to a total of exactly 1: as for any total of at most 1, the
    quantiles are the minimum up to the last, the maximum (by hand: the position
    (total - 1) q is 0 for every q), so the segment column is one bin, closed on both
    sides. Every quantile was the maximum, and multicalibration() an IndexError."""
    x = np.array([3.0, 1.0, 4.0, 2.0])
    np.testing.assert_array_equal(_weighted_quantiles(x, np.full(4, 0.25), np.linspace(0, 1, 4)),
                                  [1.0, 1.0, 1.0, 4.0])
    df = pd.DataFrame({"p": np.linspace(0.1, 0.8, 8), "y": [0, 1, 1, 0, 1, 0, 0, 1],
                       "age": [5.0, 1, 7, 3, 8, 2, 6, 4], "w": 0.125})
    res = calibr.multicalibration(df, "p", "y", ["age"], weights="w", min_samples=1)
    assert list(res.segments.sort_values("segment")["definition"]) == [
        "all rows", "age in [1.0, 8.0]"]
    assert list(res.segments["n"]) == [8, 8]


def test_results_compare_by_identity():
    """A result holds a DataFrame, whose == is elementwise: results compare (and hash)
    as objects, so == neither raises nor compares the frames."""
    df = pd.DataFrame({"p": np.linspace(0.1, 0.8, 8), "y": [0, 1, 1, 0, 1, 0, 0, 1],
                       "g": ["a", "b"] * 4})
    res = calibr.multicalibration(df, "p", "y", ["g"], min_samples=1)
    again = calibr.multicalibration(df, "p", "y", ["g"], min_samples=1)
    assert res == res and res != again and len({res, again}) == 2


def test_weights_decide_which_values_are_pooled():
    # a: 4 rows, b: 3 rows, c: 1 row of weight 5: by weight c is the most frequent
    df = pd.DataFrame({"p": np.linspace(0.1, 0.8, 8), "y": [0, 1] * 4,
                       "g": ["a", "b", "a", "c", "b", "a", "b", "a"],
                       "w": [1.0, 1, 1, 5, 1, 1, 1, 1]})
    res = calibr.multicalibration(df, "p", "y", ["g"], weights="w", max_values=2, min_samples=1)
    assert set(res.segments["definition"]) == {"all rows", "g == 'c'", "g not in {'c'}"}
    plain = calibr.multicalibration(df, "p", "y", ["g"], max_values=2, min_samples=1)
    assert set(plain.segments["definition"]) == {"all rows", "g == 'a'", "g not in {'a'}"}


def test_scaling_real_weights_scales_the_sigma_not_the_ecce():
    # w counts observations: twice the weights is every row twice, so the ECCE is
    # the same and each sigma shrinks by sqrt(2)
    df = _frame(n=800, seed=14, weights=True)
    df["w"] = df["w"] * 0.37
    one = calibr.multicalibration(df, "p", "y", ["c0", "x0"], weights="w", min_samples=1)
    df["w"] = df["w"] * 2
    two = calibr.multicalibration(df, "p", "y", ["c0", "x0"], weights="w", min_samples=1)
    a, b = one.segments.sort_values("segment"), two.segments.sort_values("segment")
    np.testing.assert_allclose(a["ecce"], b["ecce"], rtol=MULTICAL_RTOL)
    np.testing.assert_allclose(a["sigma"], b["sigma"] * math.sqrt(2), rtol=MULTICAL_RTOL)


# --------------------------------------------------------------------------
# the p-value


def test_range_tail_equals_the_40_digit_oracle():
    xs = np.concatenate([np.linspace(0.05, 0.99, 30), [1.0], np.linspace(1.01, 12, 60),
                         [20.0, 37.0]])
    got = range_sf(xs)
    for x, g in zip(xs, got, strict=True):
        want = range_sf_oracle(float(x))
        if x >= 1:
            assert g == pytest.approx(want, rel=RANGE_SF_RTOL), x
        else:
            assert g == pytest.approx(want, rel=0, abs=RANGE_SF_ATOL), x
    edge = range_sf(np.array([0.0, np.inf, np.nan, -1.0]))
    assert edge[0] == 1.0 and edge[1] == 0.0 and math.isnan(edge[2]) and edge[3] == 1.0


def test_range_tail_equals_mcgrads_distribution_function():
    require("mcgrad")
    from mcgrad.metrics import ecce_pvalue_from_sigma

    xs = np.linspace(0.01, 8.2, 300)
    np.testing.assert_allclose(range_sf(xs), ecce_pvalue_from_sigma(xs), rtol=0,
                               atol=MULTICAL_PVALUE_ATOL)


# --------------------------------------------------------------------------
# hand-worked cases


def _one(rows: list[tuple], **options) -> calibr.MulticalibrationResult:
    df = pd.DataFrame(rows, columns=["p", "y", "g"])
    return calibr.multicalibration(df, "p", "y", ["g"], min_samples=1, **options)


def _close(value: float, exact: Fraction | float) -> None:
    assert value == pytest.approx(float(exact), rel=EXACT_RTOL, abs=1e-300)


def test_a_single_row():
    res = _one([(0.25, 1, "a")])
    # the path 0, 3/4: ECCE 3/4, sigma sqrt(3/16), their ratio sqrt(3)
    assert res.n == 1 and res.n_segments == 2
    _close(res.global_ecce, Fraction(3, 4))
    _close(res.global_sigma, math.sqrt(3 / 16))
    _close(res.statistic, math.sqrt(3))
    _close(res.pvalue, range_sf_oracle(math.sqrt(3)))
    _close(res.mde, 5 * math.sqrt(3 / 16))
    assert res.mce_relative == math.inf  # y is all 1: no base rate
    assert list(res.segments["definition"]) == ["all rows", "g == 'a'"]


def test_tied_p_is_one_block_whatever_the_order_of_its_rows():
    # p = (0.2, 0.2, 0.6), y = (0, 1, 1): after each row the path would be
    # 0, -0.2, 0.6, 1.0 (range 1.2); pooled, 0, 0.6, 1.0 (range 1.0)
    rows = [(0.2, 0, "a"), (0.2, 1, "a"), (0.6, 1, "a")]
    res = _one(rows)
    _close(res.global_ecce, Fraction(1, 3))
    _close(res.global_sigma, math.sqrt(0.16 + 0.16 + 0.24) / 3)
    _close(res.statistic, 1.0 / math.sqrt(0.56))
    again = _one(rows[::-1])
    assert again.statistic == res.statistic


def test_every_p_equal():
    res = _one([(0.5, 1, "a"), (0.5, 1, "b"), (0.5, 1, "a"), (0.5, 0, "b")])
    # one block: ECCE |sum(y - p)| / n = 1/4, sigma sqrt(4/4) / 4 = 1/4
    _close(res.global_ecce, Fraction(1, 4))
    _close(res.global_sigma, Fraction(1, 4))
    got = {d: r for d, r in zip(res.segments["definition"], res.segments["ecce_sigma"],
                                strict=True)}
    _close(got["all rows"], 1.0)
    _close(got["g == 'a'"], math.sqrt(2))  # (1, 1): 1 / sqrt(1/2)
    assert got["g == 'b'"] == 0.0  # (1, 0): sums to 0
    _close(res.statistic, math.sqrt(2))
    balanced = _one([(0.5, 1, "a"), (0.5, 0, "a")])
    assert balanced.statistic == 0.0 and balanced.pvalue == 1.0


@pytest.mark.parametrize("label", [0, 1])
def test_y_all_one_value(label):
    res = _one([(0.2, label, "a"), (0.4, label, "a"), (0.4, label, "b")])
    sign = 1 if label else -1
    # y - p: sign (0.8, 0.6, 0.6) for y = 1, -(0.2, 0.4, 0.4) for y = 0
    total = sum(sign * (label - q) for q in (0.2, 0.4, 0.4))
    _close(res.global_ecce, abs(total) / 3)
    assert res.mce_relative == math.inf and res.mde_relative == math.inf


@pytest.mark.parametrize("label", [0, 1])
def test_y_all_one_value_predicted_exactly(label):
    # p = y everywhere: mce = 0 and mde = 0 (sigma 0) over a base rate of 0: 0 / 0
    res = _one([(float(label), label, "a"), (float(label), label, "b")])
    assert res.mce == 0.0 and res.mde == 0.0
    assert math.isnan(res.mce_relative) and math.isnan(res.mde_relative)


def test_p_of_zero_or_one():
    agree = _one([(0.0, 0, "a"), (1.0, 1, "a")])
    assert agree.statistic == 0.0 and agree.pvalue == 1.0 and agree.global_sigma == 0.0
    wrong = _one([(0.0, 1, "a"), (0.5, 1, "a")])
    got = dict(zip(wrong.segments["definition"], wrong.segments["ecce_sigma"], strict=True))
    _close(got["all rows"], 1.5 / math.sqrt(0.25))
    impossible = _one([(0.0, 1, "a"), (1.0, 1, "b")])
    assert impossible.statistic == math.inf and impossible.pvalue == 0.0


# --------------------------------------------------------------------------
# the result


def test_result_lists_every_segment_the_worst_first():
    df = _frame(n=3000, seed=21)
    res = calibr.multicalibration(df, "p", "y", ["c0", "c1", "x0"])
    segs = res.segments
    assert tuple(segs.columns) == SEGMENT_COLUMNS
    assert list(segs.index) == list(range(res.n_segments))
    ratio = segs["ecce_sigma"].to_numpy()
    assert (np.diff(ratio) <= 0).all()
    assert ratio[0] == res.statistic and segs["pvalue"].iloc[0] == pytest.approx(res.pvalue)
    whole = segs[segs["depth"] == 0].iloc[0]
    assert whole["definition"] == "all rows" and whole["n"] == 3000 and whole["segment"] == 0
    assert whole["ecce"] == res.global_ecce and whole["sigma"] == res.global_sigma
    assert res.mce == res.statistic * res.global_sigma and res.mde == 5 * res.global_sigma
    np.testing.assert_allclose(segs["ecce_sigma"], segs["ecce"] / segs["sigma"],
                               rtol=MULTICAL_RTOL)
    # the planted corner: c0 == 'a' and x0 above its median
    top = segs["definition"].iloc[0]
    assert "c0 == 'a'" in top and "x0 in (" in top
    assert sorted(segs["segment"]) == list(range(res.n_segments))
    assert set(segs["depth"]) == {0, 1, 2, 3}


def test_definitions_spell_each_kind_of_condition():
    df = pd.DataFrame({
        "p": np.linspace(0.05, 0.95, 12),
        "y": [0, 1] * 6,
        "c": ["a", "a", "a", "a", "b", "b", "b", None, None, "d", "e", "a"],
        "x": [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, np.nan],
    })
    res = calibr.multicalibration(df, "p", "y", ["c", "x"], max_depth=1, min_samples=1)
    got = sorted(res.segments["definition"])
    assert got == sorted([
        "all rows", "c == 'a'", "c == 'b'", "c not in {'a', 'b'}",
        "x in [1.0, 4.333333333333333]", "x in (4.333333333333333, 7.666666666666666]",
        "x in (7.666666666666666, 11.0]", "x is missing",
    ])
    cond = dict((d, c) for d, c in zip(res.segments["definition"], res.segments["conditions"],
                                       strict=True))
    assert cond["c not in {'a', 'b'}"] == (("c", "not in", ("a", "b")),)
    assert cond["x is missing"] == (("x", "is missing", None),)
    assert cond["x in [1.0, 4.333333333333333]"][0][2] == pd.Interval(
        1.0, 4.333333333333333, closed="both")
    with_missing = calibr.multicalibration(df, "p", "y", ["c"], max_depth=1, min_samples=1,
                                           max_values=4)
    assert "c not in {'a', 'b', missing}" in set(with_missing.segments["definition"])
    assert "c is missing" in set(with_missing.segments["definition"])


@pytest.mark.parametrize("first", ["b", "c"])
def test_values_first_met_in_one_block_of_ties_go_in_their_own_order(first):
    # b and c first occur in the block of tied p = 0.1 and are equally frequent at
    # the pooling boundary (a: 3, b: 2, c: 2, d: 1; two values kept): the smaller,
    # b, is kept and numbered first, whichever row of the block comes first
    second = "c" if first == "b" else "b"
    df = pd.DataFrame({"p": [0.1, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
                       "y": [1, 0, 0, 1, 0, 1, 1, 0],
                       "g": [first, second, "a", "a", "a", "b", "c", "d"]})
    res = calibr.multicalibration(df, "p", "y", ["g"], max_values=3, min_samples=1)
    got = list(res.segments.sort_values("segment")["definition"])
    assert got == ["all rows", "g == 'b'", "g not in {'b', 'a'}", "g == 'a'"]


def test_values_of_mixed_types_are_segments_too():
    df = pd.DataFrame({"p": np.linspace(0.1, 0.9, 6), "y": [0, 1, 1, 0, 1, 0],
                       "g": [1, "a", 1, "a", 2.5, None]})
    res = calibr.multicalibration(df, "p", "y", ["g"], max_values=4, min_samples=1)
    assert list(res.segments.sort_values("segment")["definition"]) == [
        "all rows", "g == 1", "g == 'a'", "g == 2.5", "g is missing"]
    huge = pd.DataFrame({"p": [0.2, 0.4, 0.6, 0.8], "y": [0, 1, 0, 1],
                         "g": [-1e308, 1e308, 1e308, 0.0]})
    res = calibr.multicalibration(huge, "p", "y", ["g"], categorical=["g"], min_samples=1)
    assert res.n_segments == 4


def test_row_order_does_not_matter():
    df = _frame(n=1000, seed=22)
    shuffled = df.sample(frac=1.0, random_state=3)
    a = calibr.multicalibration(df, "p", "y", ["c0", "c1", "x0"])
    b = calibr.multicalibration(shuffled, "p", "y", ["c0", "c1", "x0"])
    pd.testing.assert_frame_equal(a.segments, b.segments)  # no ties: the same bits
    tied = _frame(n=1000, seed=22, ties=True)
    a = calibr.multicalibration(tied, "p", "y", ["c0", "x0"])
    b = calibr.multicalibration(tied.sample(frac=1.0, random_state=4), "p", "y", ["c0", "x0"])
    assert a.n_segments == b.n_segments
    np.testing.assert_allclose(a.segments.sort_values("segment")["ecce"],
                               b.segments.sort_values("segment")["ecce"], rtol=MULTICAL_RTOL)


def test_na_rm_uses_the_complete_rows_and_missing_segment_values_are_values():
    df = _frame(n=800, seed=23)
    df.loc[[3, 50, 51], "p"] = np.nan
    df.loc[[7], "y"] = np.nan
    res = calibr.multicalibration(df, "p", "y", ["c0", "c1", "x0"], na_rm=True)
    complete = calibr.multicalibration(df.dropna(subset=["p", "y"]), "p", "y",
                                       ["c0", "c1", "x0"])
    pd.testing.assert_frame_equal(res.segments, complete.segments)
    assert res.n == 796
    assert any("c1 is missing" in d for d in res.segments["definition"])


def test_the_input_is_not_modified():
    df = _frame(n=300, seed=24, weights=True)
    before = df.copy(deep=True)
    calibr.multicalibration(df, "p", "y", ["c0", "x0"], weights="w")
    pd.testing.assert_frame_equal(df, before)


# --------------------------------------------------------------------------
# bad input


def _small() -> pd.DataFrame:
    return pd.DataFrame({"p": [0.1, 0.4, 0.8, 0.6], "y": [0, 1, 1, 0], "g": list("abab"),
                         "x": [1.0, 2.0, 3.0, 4.0], "none": [None] * 4,
                         "z": [1.0, np.inf, 2.0, 3.0], "q": [1j, 2j, 3j, 4j],
                         "w": [1.0, 2.0, 0.0, 1.5], "huge": [-1e308, 1e308, 0.0, 1.0],
                         "lists": [[1], [2], [1], [3]]})


@pytest.mark.parametrize(("kwargs", "kind", "message", "param"), [
    ({"max_depth": 0}, calibr.InputError, r"^`max_depth` must be an integer of at least 1; "
     r"got 0\.$", "max_depth"),
    ({"max_depth": 2.0}, calibr.InputError, r"^`max_depth` must be an integer of at least 1; "
     r"got 2\.0\.$", "max_depth"),
    ({"max_values": 0}, calibr.InputError, r"^`max_values` must be an integer of at least 1; "
     r"got 0\.$", "max_values"),
    ({"min_samples": 0}, calibr.InputError, r"^`min_samples` must be an integer of at least 1; "
     r"got 0\.$", "min_samples"),
    ({"min_samples": 5}, calibr.InputError, r"^`min_samples` must be at most the number of "
     r"observations \(4\); got 5\.$", "min_samples"),
    ({"min_samples": 5, "weights": "w"}, calibr.InputError, r"^`min_samples` must be at most "
     r"the total weight of the observations \(4\.5\); got 5\.$", "min_samples"),
    ({"segments": ["g", "nope"]}, calibr.InputError, r"^`segments` must name columns of the "
     r"data; 'nope' is not one\.$", "segments"),
    ({"segments": []}, calibr.InputError, r"^`segments` must name at least one column of the "
     r"data; got none\.$", "segments"),
    ({"segments": ["g", "g"]}, calibr.InputError, r"^`segments` names 'g' twice\.$",
     "segments"),
    ({"segments": ["g", "y"]}, calibr.InputError, r"^`segments` must not include the label "
     r"column 'y': a segment of one label has no calibration to measure\.$", "segments"),
    ({"segments": ["g", "none"]}, calibr.InputError, r"^`segments` column 'none' is missing in "
     r"every row: it defines no segments\.$", "segments"),
    ({"segments": ["z"]}, calibr.InputError, r"^`segments` must hold finite or missing values "
     r"in column 'z' \(its quantiles bin it\); 1 value does not, the first at position 1 "
     r"\(inf\)\.$", "segments"),
    ({"segments": ["q"]}, calibr.InputTypeError, r"^`segments` column 'q' holds complex "
     r"numbers, which have no quantiles; list it in `categorical` to use its values as they "
     r"are\.$", "segments"),
    ({"segments": ["huge"]}, calibr.InputError, r"^`segments` column 'huge' spans more than "
     r"the largest float \(-1e\+308 to 1e\+308\): its quantiles cannot be interpolated; list it "
     r"in `categorical` to use its values as they are\.$", "segments"),
    ({"segments": ["lists"]}, calibr.InputTypeError, r"^`segments` column 'lists' must hold "
     r"values that can be told apart \(hashable, as for pandas' groupby\); unhashable type: "
     r"'list'\.$", "segments"),
    ({"categorical": ["x", "w"]}, calibr.InputError, r"^`categorical` must name columns of "
     r"`segments`; 'w' is not one of them\.$", "categorical"),
    ({"p": "nope"}, calibr.InputError, r"^`p` must name a column of the data; got 'nope'\.$",
     "p"),
    ({"y": "nope"}, calibr.InputError, r"^`y` must name a column of the data; got 'nope'\.$",
     "y"),
    ({"p": ["p", "x"]}, calibr.InputError, r"^`p` must name one column \(P\(y = 1\)\): "
     r"multicalibration is for binary outcomes; got \['p', 'x'\]\.$", "p"),
    ({"weights": "nope"}, calibr.InputError, r"^`weights` must name a column of the data; "
     r"got 'nope'\.$", "weights"),
    ({"p": "x"}, calibr.InputError, r"^`p` must lie in \[0, 1\]", "p"),
])
def test_bad_input_is_refused_with_a_message(kwargs, kind, message, param):
    df = _small()
    before = df.copy(deep=True)
    args = {"p": "p", "y": "y", "segments": ["g", "x"], "min_samples": 1} | kwargs
    with pytest.raises(kind, match=message) as err:
        calibr.multicalibration(df, **args)
    assert err.value.param == param
    pd.testing.assert_frame_equal(df, before)


def test_data_must_be_a_data_frame():
    with pytest.raises(calibr.InputTypeError, match=r"^`data` must be a pandas DataFrame; got "
                       r"dict\.$") as err:
        calibr.multicalibration({"p": [0.5], "y": [1]}, "p", "y", ["g"])
    assert err.value.param == "data"


def test_missing_p_without_na_rm_is_refused():
    df = _small()
    df.loc[2, "p"] = np.nan
    with pytest.raises(calibr.InputError, match=r"^`p` must not contain missing values"):
        calibr.multicalibration(df, "p", "y", ["g"], min_samples=1)


def test_many_values_per_column_number_only_the_occupied_cells(monkeypatch):
    # 397 x 389 values at depth 2 and 3 would be 1.5e5 and 7.7e5 cells: only the
    # occupied ones are numbered, with the oracle's numbers and, segment for
    # segment, the order and bits of the cells indexed by their codes
    df = _frame(n=400, seed=31, nan=False)
    df["k1"] = np.arange(400) % 397
    df["k2"] = (np.arange(400) * 7) % 389
    cols = ["k1", "k2", "c0"]
    res = calibr.multicalibration(df, "p", "y", cols, categorical=cols, max_values=400,
                                  min_samples=1)
    oracle = multicalibration_oracle(df, "p", "y", cols, categorical=tuple(cols),
                                     max_values=400, min_samples=1)
    _check_oracle(res, oracle)
    monkeypatch.setattr(calibr._inference.multicalibration, "DENSE_CELLS", 10**6)
    dense = calibr.multicalibration(df, "p", "y", cols, categorical=cols, max_values=400,
                                    min_samples=1)
    pd.testing.assert_frame_equal(res.segments, dense.segments)


def test_max_depth_beyond_the_columns_and_large_max_values_are_cheap():
    df = _frame(n=300, seed=32)
    res = calibr.multicalibration(df, "p", "y", ["c0", "x0"], max_depth=10**9,
                                  max_values=10**12)
    same = calibr.multicalibration(df, "p", "y", ["c0", "x0"], max_depth=2, max_values=10**12)
    pd.testing.assert_frame_equal(res.segments, same.segments)
