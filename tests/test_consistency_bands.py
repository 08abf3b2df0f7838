"""Consistency bands of ``calibration_table(consistency=...)`` (Bröcker & Smith
2007; ``docs/definitions.md``, "Consistency bands").

* the bands == an independent simulation written here with plain loops (the
  same random numbers: the seed scheme of the definitions), for every form and
  for groups;
* a fixed seed gives the same table, an int seed and the Generator made from it
  the same, and a group's band ignores the other groups' rows;
* a property: for calibrated predictions the observed frequency lies in the
  band in about LEVEL of the bins; for miscalibrated ones it mostly does not;
* every error, its message pinned.
"""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import pandas as pd
import pytest

import calibr
from calibr.table import CONSISTENCY_COLUMNS, TABLE_COLUMNS, calibration_table

LEVEL = 0.8
R = 60


# ------------------------------------------------------------------ the oracle


def quantile7(values: list[float], q: float) -> float:
    """R's quantile(type = 7) of a list, by its formula."""
    v = sorted(values)
    h = (len(v) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def bin_of(v: float, bins: int) -> int:
    """0-based bin: edges[b] < v <= edges[b + 1], 0 in the first bin."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    if v <= edges[1]:
        return 0
    for b in range(1, bins):
        if edges[b] < v <= edges[b + 1]:
            return b
    raise AssertionError(v)


def draw_label(row: np.ndarray, u: float) -> int:
    """The class j with cumsum[j-1] <= u < cumsum[j] (the last one if none)."""
    total = 0.0
    for j, pj in enumerate(row):
        total += pj
        if u < total:
            return j
    return len(row) - 1


def oracle_band(p, bins, type_, table_rows, gen, n_resamples, level):
    """(lower, upper) per row of ``table_rows`` (dicts with 'bin' and maybe 'class_pos')."""
    p = np.asarray(p, dtype=float)
    n = p.shape[0]
    per_row = [[] for _ in table_rows]
    for _ in range(n_resamples):
        rows = gen.integers(0, n, size=n)
        u = gen.random(n)
        # (curve, bin) -> [members, events]
        cells: dict[tuple[int, int], list[int]] = {}
        for i in range(n):
            pi = p[rows[i]]
            if p.ndim == 1:
                cell, event = (0, bin_of(pi, bins)), u[i] < pi
                cells.setdefault(cell, [0, 0])
                cells[cell][0] += 1
                cells[cell][1] += int(event)
                continue
            label = draw_label(pi, u[i])
            if type_ == "confidence":
                top = int(np.argmax(pi))
                cell = (0, bin_of(float(pi.max()), bins))
                cells.setdefault(cell, [0, 0])
                cells[cell][0] += 1
                cells[cell][1] += int(label == top)
            else:
                for k in range(p.shape[1]):
                    cell = (k, bin_of(float(pi[k]), bins))
                    cells.setdefault(cell, [0, 0])
                    cells[cell][0] += 1
                    cells[cell][1] += int(label == k)
        for j, row in enumerate(table_rows):
            got = cells.get((row["class_pos"], row["bin"] - 1))
            if got is not None:
                per_row[j].append(got[1] / got[0])
    a = (1 - level) / 2
    return ([quantile7(v, a) if v else math.nan for v in per_row],
            [quantile7(v, 1 - a) if v else math.nan for v in per_row])


def group_gen(seed, n_groups, g):
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(n_groups)[g])


def rows_of(table, classes=None):
    out = []
    for _, r in table.iterrows():
        pos = 0 if classes is None else classes.index(r["class"])
        out.append({"bin": int(r["bin"]), "class_pos": pos})
    return out


def binary_data(seed, n=70):
    rng = np.random.default_rng([7001, seed])
    p = np.round(rng.random(n), 2)
    p[:3] = [0.0, 1.0, 0.5]  # the edges of the bins
    y = (rng.random(n) < p).astype(int)
    return p, y


def multi_data(seed, n=50, k=3):
    rng = np.random.default_rng([7002, seed])
    p = rng.dirichlet(np.ones(k), n)
    y = np.array([rng.choice(k, p=row) for row in p]) + 1
    return p, y


# ------------------------------------------------------------------ the oracle agrees


@pytest.mark.parametrize("seed", range(3))
def test_binary_band_equals_the_simulation(seed):
    p, y = binary_data(seed)
    tab = calibration_table(p, y, bins=6, consistency=LEVEL, n_resamples=R, rng=seed)
    assert list(tab.columns) == [*TABLE_COLUMNS, *CONSISTENCY_COLUMNS]
    lo, hi = oracle_band(p, 6, None, rows_of(tab), group_gen(seed, 1, 0), R, LEVEL)
    np.testing.assert_allclose(tab["consistency_lower"], lo, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tab["consistency_upper"], hi, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("type_", ["classwise", "confidence"])
def test_multiclass_band_equals_the_simulation(type_):
    p, y = multi_data(1)
    tab = calibration_table(p, y, bins=4, type=type_, consistency=LEVEL, n_resamples=R, rng=3)
    classes = [1, 2, 3] if type_ == "classwise" else None
    lo, hi = oracle_band(p, 4, type_, rows_of(tab, classes), group_gen(3, 1, 0), R, LEVEL)
    np.testing.assert_allclose(tab["consistency_lower"], lo, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tab["consistency_upper"], hi, rtol=1e-12, atol=1e-15)


def test_grouped_bands_equal_the_simulation_of_each_group():
    p, y = binary_data(4, n=90)
    df = pd.DataFrame({"model": np.repeat(["a", "b", "c"], 30), "p": p, "y": y})
    df["model"] = pd.Categorical(df["model"], categories=["a", "z", "b", "c"])
    tab = calibration_table("p", "y", bins=5, data=df.groupby("model", observed=False),
                            consistency=LEVEL, n_resamples=R, rng=11)
    assert list(tab["model"].unique()) == ["a", "b", "c"]
    for g, key in ((0, "a"), (2, "b"), (3, "c")):  # positions count the unobserved 'z'
        sub = df[df["model"] == key]
        rows = tab[tab["model"] == key]
        lo, hi = oracle_band(sub["p"].to_numpy(), 5, None, rows_of(rows),
                             group_gen(11, 4, g), R, LEVEL)
        np.testing.assert_allclose(rows["consistency_lower"], lo, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(rows["consistency_upper"], hi, rtol=1e-12, atol=1e-15)
    # the rest of the table is the table without the band
    plain = calibration_table("p", "y", bins=5, data=df.groupby("model", observed=False))
    pd.testing.assert_frame_equal(tab.drop(columns=list(CONSISTENCY_COLUMNS)), plain)


# ------------------------------------------------------------------ seeds


def test_same_seed_same_table_and_generator_equals_its_seed():
    p, y = binary_data(5)
    kw = {"bins": 5, "consistency": 0.9, "n_resamples": 40}
    first = calibration_table(p, y, rng=123, **kw)
    pd.testing.assert_frame_equal(first, calibration_table(p, y, rng=123, **kw))
    pd.testing.assert_frame_equal(first, calibration_table(p, y, rng=np.random.default_rng(123),
                                                           **kw))
    other = calibration_table(p, y, rng=124, **kw)
    assert not first["consistency_lower"].equals(other["consistency_lower"])


def test_a_group_band_ignores_the_other_groups_rows():
    p, y = binary_data(6, n=80)
    df = pd.DataFrame({"g": np.repeat([0, 1], 40), "p": p, "y": y})
    changed = df.copy()
    changed.loc[changed["g"] == 0, "p"] = 0.5
    kw = {"bins": 4, "consistency": LEVEL, "n_resamples": 30, "rng": 9}
    a = calibration_table("p", "y", data=df.groupby("g"), **kw)
    b = calibration_table("p", "y", data=changed.groupby("g"), **kw)
    pd.testing.assert_frame_equal(a[a["g"] == 1].reset_index(drop=True),
                                  b[b["g"] == 1].reset_index(drop=True))


def test_default_resamples_is_1000():
    p, y = binary_data(7, n=200)
    default = calibration_table(p, y, bins=3, consistency=0.9, rng=1)
    explicit = calibration_table(p, y, bins=3, consistency=0.9, rng=1, n_resamples=1000)
    pd.testing.assert_frame_equal(default, explicit)
    fewer = calibration_table(p, y, bins=3, consistency=0.9, rng=1, n_resamples=100)
    assert not fewer.equals(default)


# ------------------------------------------------------------------ what the band says


def test_calibrated_frequencies_lie_in_the_band_about_level_of_the_time():
    rng = np.random.default_rng(2024)
    n, groups = 1500, 8
    p = rng.random(n * groups)
    y = (rng.random(n * groups) < p).astype(int)  # calibrated by construction
    df = pd.DataFrame({"g": np.repeat(range(groups), n), "p": p, "y": y})
    tab = calibration_table("p", "y", bins=15, data=df.groupby("g"), consistency=LEVEL,
                            n_resamples=200, rng=5)
    inside = ((tab["observed_frequency"] >= tab["consistency_lower"])
              & (tab["observed_frequency"] <= tab["consistency_upper"])).mean()
    assert len(tab) == 120
    assert 0.7 <= inside <= 0.92, inside
    # the band of a bin holds its mean confidence (a calibrated bin's centre)
    centre = ((tab["mean_confidence"] >= tab["consistency_lower"])
              & (tab["mean_confidence"] <= tab["consistency_upper"])).mean()
    assert centre >= 0.95


def test_miscalibrated_frequencies_fall_outside_the_band():
    rng = np.random.default_rng(2025)
    p = rng.random(3000)
    y = (rng.random(3000) < p**2).astype(int)  # overconfident
    tab = calibration_table(p, y, bins=10, consistency=0.9, n_resamples=200, rng=1)
    outside = ((tab["observed_frequency"] < tab["consistency_lower"])
               | (tab["observed_frequency"] > tab["consistency_upper"])).mean()
    assert outside >= 0.8


def test_a_bin_no_resample_fills_gets_nan():
    # bin 2 of 2 holds one row of 40: a resample misses it with probability
    # (39/40)^40 = 0.36, so with 1 resample and this seed it is empty
    p = np.r_[np.full(39, 0.1), 0.9]
    y = np.r_[np.zeros(39, int), 1]
    for seed in range(50):
        tab = calibration_table(p, y, bins=2, consistency=0.9, n_resamples=1, rng=seed)
        if np.isnan(tab["consistency_lower"][1]):
            assert np.isnan(tab["consistency_upper"][1])
            assert np.isfinite(tab["consistency_lower"][0])
            break
    else:  # pragma: no cover - (0.36)^-50 against
        pytest.fail("no seed left the bin empty")


def test_classwise_equal_mass_consistency_band_uses_each_columns_breaks():
    """The consistency band of classwise equal-mass bins reads each column's own breaks
    from the padded 2-d breaks, their NaN padding dropped; a calibrated sample's band
    then holds each bin's mean confidence (within 0.05)."""
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


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("kw", "exc", "message"),
    [
        ({"consistency": 1.0}, calibr.InputError,
         "`consistency` must be a number strictly between 0 and 1; got 1.0."),
        ({"consistency": True}, calibr.InputError,
         "`consistency` must be a number strictly between 0 and 1; got True."),
        ({"consistency": 0.9, "n_resamples": 0}, calibr.InputError,
         "`n_resamples` must be an integer from 1 to 10,000,000; got 0."),
        ({"consistency": 0.9, "rng": -1}, calibr.InputError,
         "`rng` must be None, a nonnegative integer seed or a numpy.random.Generator; got -1."),
        ({"consistency": 0.9, "rng": "seed"}, calibr.InputTypeError,
         "`rng` must be None, a nonnegative integer seed or a numpy.random.Generator; got str."),
        ({"n_resamples": 10}, calibr.InputError,
         "`n_resamples` applies to the consistency band only; pass `consistency` (a level, "
         "e.g. 0.9) too, or leave `n_resamples` out."),
        ({"rng": 1}, calibr.InputError,
         "`rng` applies to the consistency band only; pass `consistency` (a level, e.g. 0.9) "
         "too, or leave `rng` out."),
        ({"consistency": 0.9, "weights": [1, 1, 2, 1]}, calibr.InputError,
         "`consistency` cannot be combined with `weights`: the consistency resampling draws "
         "rows of an unweighted sample."),
    ],
)
def test_errors(kw, exc, message):
    p, y = np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 1, 0, 1])
    before = (p.copy(), y.copy())
    with pytest.raises(exc, match=re.escape(message)):
        calibration_table(p, y, bins=2, **kw)
    np.testing.assert_array_equal(p, before[0])
    np.testing.assert_array_equal(y, before[1])


def test_the_frame_is_unchanged():
    p, y = binary_data(8)
    df = pd.DataFrame({"p": p, "y": y})
    before = copy.deepcopy(df)
    calibration_table("p", "y", data=df, consistency=0.9, n_resamples=5, rng=0)
    pd.testing.assert_frame_equal(df, before)
