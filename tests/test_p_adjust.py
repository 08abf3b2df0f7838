"""``calibr.p_adjust``: R's ``p.adjust`` (``docs/definitions.md``, "Multiple
comparisons: `p_adjust()`").

Checked against R's ``p.adjust`` through rpy2 (every method, random p-values,
ties, missing values, ``n`` larger than the count) and statsmodels'
``multipletests``, on hand-worked cases, and for its refusals.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import _restore_library_path, unavailable
from statsmodels.stats.multitest import multipletests

import calibr
from calibr._inference.multitest import P_ADJUST_METHODS

#: calibr vs R and statsmodels: the same products and running extremes; R's
#: sum(1 / (1:n)) of "BY" accumulates in long double, numpy pairwise.
P_ADJUST_RTOL = 1e-14

#: calibr's names and statsmodels' names of the same methods.
STATSMODELS = {"holm": "holm", "hochberg": "simes-hochberg", "hommel": "hommel",
               "bonferroni": "bonferroni", "BH": "fdr_bh", "BY": "fdr_by", "fdr": "fdr_bh"}


def _pvalues(n: int, seed: int, ties: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.random(n - n // 4), rng.random(n // 4) * 0.01])
    if ties:
        p = np.round(p, 2)
    return rng.permutation(p)


class _R:
    def __init__(self) -> None:
        import rpy2.robjects as ro

        self.ro = ro

    def p_adjust(self, p: np.ndarray, method: str, n: int | None = None) -> np.ndarray:
        vec = self.ro.FloatVector([self.ro.NA_Real if math.isnan(v) else v for v in p])
        call = self.ro.r["p.adjust"]
        out = call(vec, method=method) if n is None else call(vec, method=method, n=n)
        return np.array([math.nan if v is self.ro.NA_Real else v for v in out], dtype=float)


@pytest.fixture(scope="module")
def r_base() -> _R:
    try:
        session = _R()
    except Exception as exc:  # noqa: BLE001 - any failure to reach R is reported alike
        unavailable(f"R not available through rpy2: {type(exc).__name__}: {exc}")
        raise  # pragma: no cover - unavailable() raised
    finally:
        _restore_library_path()
    return session


@pytest.mark.r
@pytest.mark.parametrize("method", P_ADJUST_METHODS)
@pytest.mark.parametrize(("n", "seed", "ties"), [(1, 0, False), (2, 1, False), (3, 2, False),
                                                 (10, 3, False), (57, 4, True),
                                                 (400, 5, False), (400, 6, True)])
def test_equals_r(r_base, method, n, seed, ties):
    p = _pvalues(n, seed, ties)
    np.testing.assert_allclose(calibr.p_adjust(p, method), r_base.p_adjust(p, method),
                               rtol=P_ADJUST_RTOL, atol=0)


@pytest.mark.r
@pytest.mark.parametrize("method", P_ADJUST_METHODS)
def test_missing_values_and_n_equal_r(r_base, method):
    p = _pvalues(30, 7)
    p[[0, 5, 17]] = np.nan
    got = calibr.p_adjust(p, method)
    want = r_base.p_adjust(p, method)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(p))
    np.testing.assert_allclose(got, want, rtol=P_ADJUST_RTOL, atol=0)
    # NaN out of n: the same as adjusting the 27 present values alone
    np.testing.assert_allclose(got[~np.isnan(p)], calibr.p_adjust(p[~np.isnan(p)], method),
                               rtol=0, atol=0)
    np.testing.assert_allclose(calibr.p_adjust(p, method, n=50),
                               r_base.p_adjust(p, method, n=50), rtol=P_ADJUST_RTOL, atol=0)


@pytest.mark.parametrize("method", sorted(STATSMODELS))
@pytest.mark.parametrize(("n", "seed", "ties"), [(5, 8, False), (200, 9, False),
                                                 (200, 10, True)])
def test_equals_statsmodels(method, n, seed, ties):
    p = _pvalues(n, seed, ties)
    _, want, _, _ = multipletests(p, method=STATSMODELS[method])
    np.testing.assert_allclose(calibr.p_adjust(p, method), want, rtol=P_ADJUST_RTOL, atol=0)


def test_hand_worked():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005, 0.01, 0.03, 0.04; n = 4
    # holm: 4*0.005, 3*0.01, 2*0.03, 1*0.04 -> cummax 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(calibr.p_adjust(p), [0.03, 0.06, 0.06, 0.02], rtol=1e-15)
    # hochberg: from the top, cummin of 0.04, 2*0.03, 3*0.01, 4*0.005 -> 0.04, 0.04, 0.03, 0.02
    np.testing.assert_allclose(calibr.p_adjust(p, "hochberg"), [0.03, 0.04, 0.04, 0.02],
                               rtol=1e-15)
    # BH: 4/4*0.04, 4/3*0.03, 4/2*0.01, 4/1*0.005 -> cummin 0.04, 0.04, 0.02, 0.02
    np.testing.assert_allclose(calibr.p_adjust(p, "BH"), [0.02, 0.04, 0.04, 0.02], rtol=1e-15)
    np.testing.assert_allclose(calibr.p_adjust(p, "BY"),
                               np.array([0.02, 0.04, 0.04, 0.02]) * (1 + 1 / 2 + 1 / 3 + 1 / 4),
                               rtol=1e-15)
    np.testing.assert_allclose(calibr.p_adjust(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02],
                               rtol=1e-15)
    np.testing.assert_array_equal(calibr.p_adjust(p, "none"), p)
    # a single p-value, and every p-value equal
    assert calibr.p_adjust([0.2], "bonferroni").tolist() == [0.2]
    np.testing.assert_allclose(calibr.p_adjust([0.1] * 3, "holm"), [0.3] * 3, rtol=1e-15)
    np.testing.assert_allclose(calibr.p_adjust([0.1] * 3, "BH"), [0.1] * 3, rtol=1e-15)
    # 1 stays 1, never above
    assert calibr.p_adjust([1.0, 0.9], "bonferroni").tolist() == [1.0, 1.0]
    # n above the number of p-values (R's n: comparisons whose p-values are not given)
    for method, want in (("holm", [0.04, 0.06]), ("hochberg", [0.04, 0.06]),
                         ("BH", [0.04, 0.04]), ("bonferroni", [0.04, 0.08])):
        np.testing.assert_allclose(calibr.p_adjust([0.01, 0.02], method, n=4), want,
                                   rtol=1e-15)
    for method in ("holm", "hochberg", "hommel", "BH", "BY", "bonferroni"):
        # every product above 1 (BH: 4/2 x 0.6 and 4/1 x 0.3), capped at 1
        assert calibr.p_adjust([0.3, 0.6], method, n=4).tolist() == [1.0, 1.0], method
    assert calibr.p_adjust([], "holm").shape == (0,)
    assert np.isnan(calibr.p_adjust([np.nan, np.nan], "holm")).all()


@pytest.mark.r
@pytest.mark.parametrize("method", P_ADJUST_METHODS)
def test_resolution_adjusts_a_p_value_below_it_as_the_resolution_as_r(r_base, method):
    """``resolution=r`` is R's ``p.adjust(pmax(p, r))``: resampled p-values from
    B = 1000 resamples, a fifth of them 0 ("< 0.001"), NaN out of n."""
    rng = np.random.default_rng(11)
    p = rng.integers(0, 40, 60) / 1000.0
    p[rng.permutation(60)[:12]] = 0.0
    p[[3, 30]] = np.nan
    got = calibr.p_adjust(p, method, resolution=0.001)
    want = r_base.p_adjust(np.where(p < 0.001, 0.001, p), method)
    np.testing.assert_allclose(got, want, rtol=P_ADJUST_RTOL, atol=0)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(p))
    # p-values at or above the resolution are exact: as without it
    np.testing.assert_array_equal(calibr.p_adjust(np.where(p == 0, 0.5, p), method,
                                                  resolution=0.001),
                                  calibr.p_adjust(np.where(p == 0, 0.5, p), method))


def test_resolution_hand_worked():
    # 60 groups, each p-value 0 of 1,000 resamples: "< 0.001", adjusted "< 0.06", not 0
    assert calibr.p_adjust(np.zeros(60), "holm").tolist() == [0.0] * 60
    np.testing.assert_allclose(calibr.p_adjust(np.zeros(60), "holm", resolution=0.001),
                               [0.06] * 60, rtol=1e-15)
    np.testing.assert_allclose(calibr.p_adjust(np.zeros(60), "BH", resolution=0.001),
                               [0.001] * 60, rtol=1e-15)
    # sorted 0 (as 0.001), 0.004, 0.2; holm: 3 x 0.001, 2 x 0.004, 1 x 0.2
    np.testing.assert_allclose(calibr.p_adjust([0.2, 0.0, 0.004], "holm", resolution=0.001),
                               [0.2, 0.003, 0.008], rtol=1e-15)
    # a bound that reaches 1 is capped as any adjusted p-value
    assert calibr.p_adjust([0.0, 0.0], "bonferroni", resolution=0.6).tolist() == [1.0, 1.0]
    for bad in (0, -0.1, 1.5, np.nan, True, "0.001"):
        with pytest.raises(calibr.InputError, match=r"`resolution` must be a number in "
                                                    r"\(0, 1\], the smallest step of the "
                                                    r"resampled p-values \(1 / n_resamples\); "
                                                    r"got "):
            calibr.p_adjust([0.1], "holm", resolution=bad)


def test_a_series_keeps_its_index_and_name_and_is_not_modified():
    s = pd.Series([0.01, 0.04, np.nan], index=["a", "b", "c"], name="pv")
    before = s.copy()
    out = calibr.p_adjust(s, "holm")
    assert isinstance(out, pd.Series) and list(out.index) == ["a", "b", "c"]
    assert out.name == "pv"
    pd.testing.assert_series_equal(s, before)


def test_refusals():
    with pytest.raises(calibr.InputError, match=r"`method` must be one of 'holm', 'hochberg', "
                                                r"'hommel', 'bonferroni', 'BH', 'BY', 'fdr', "
                                                r"'none'; got 'bh'\."):
        calibr.p_adjust([0.1], "bh")
    with pytest.raises(calibr.InputError, match=r"`p` must hold p-values in \[0, 1\] \(or NaN "
                                                r"for a missing one\); 2 values do not, the "
                                                r"first at position 1 \(1\.5\)\."):
        calibr.p_adjust([0.1, 1.5, -1.0], "holm")
    with pytest.raises(calibr.InputError, match=r"`p` must hold p-values in \[0, 1\].*inf"):
        calibr.p_adjust([np.inf], "holm")
    with pytest.raises(calibr.InputError, match=r"`n` must be at least the number of "
                                                r"non-missing p-values \(2\); got 1\."):
        calibr.p_adjust([0.1, 0.2], "holm", n=1)
    with pytest.raises(calibr.InputError, match=r"`n` must be an integer from 1 to "
                                                r"2,147,483,647; got 0"):
        calibr.p_adjust([0.1], "holm", n=0)
    for huge in (2**31, 2**70, 10**400):  # beyond R's integers: refused, never overflowed
        with pytest.raises(calibr.InputError, match=r"`n` must be an integer from 1 to "
                                                    r"2,147,483,647; got "):
            calibr.p_adjust([0.1], "holm", n=huge)
    with pytest.raises(calibr.InputTypeError, match=r"`p` must hold real numbers; 1 value is not"):
        calibr.p_adjust(["a"], "holm")
    with pytest.raises(calibr.InputError, match=r"`p` must be a vector of p-values; got an "
                                                r"array of shape \(1, 2\)\."):
        calibr.p_adjust([[0.1, 0.2]], "holm")


# --------------------------------------------------------------------------
# summarise(tests=..., p_adjust=...)


def _groups_frame(n: int = 600, groups: int = 6, seed: int = 20) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    p = rng.random(n)
    y = (rng.random(n) < p ** (1 + 0.2 * g)).astype(int)
    return pd.DataFrame({"g": pd.Categorical(g, categories=range(groups + 1)), "p": p, "y": y})


@pytest.mark.parametrize("method", ["holm", "BH", "hommel"])
def test_summarise_adjusts_each_test_across_groups(method):
    df = _groups_frame()
    grouped = df.groupby("g", observed=False)  # category 6 is unobserved: NaN, out of n
    tests = {"sp": "spiegelhalter", "ku": "kuiper"}
    plain = calibr.summarise(grouped, "p", "y", "ece", tests=tests, rng=1)
    out = calibr.summarise(grouped, "p", "y", "ece", tests=tests, rng=1, p_adjust=method)
    assert list(out.columns) == ["g", "ece", "sp_statistic", "sp_pvalue", "sp_pvalue_adjusted",
                                 "sp_small_n", "ku_statistic", "ku_pvalue",
                                 "ku_pvalue_adjusted", "ku_small_n"]
    pd.testing.assert_frame_equal(out.drop(columns=["sp_pvalue_adjusted", "ku_pvalue_adjusted"]),
                                  plain)
    for name in tests:
        raw = plain[f"{name}_pvalue"].to_numpy()
        assert np.isnan(raw[-1])
        np.testing.assert_array_equal(out[f"{name}_pvalue_adjusted"].to_numpy(),
                                      calibr.p_adjust(raw, method))
        np.testing.assert_array_equal(out[f"{name}_pvalue_adjusted"].to_numpy()[:-1],
                                      calibr.p_adjust(raw[:-1], method))


def test_summarise_adjusts_a_resampled_p_value_at_its_resolution():
    """A resampling test's p-value of 0 is "< 1/B": adjusted as 1/B, flagged in
    ``<name>_pvalue_below_resolution``; an analytic test's is adjusted as it is."""
    rng = np.random.default_rng(12)
    n, groups = 1200, 12
    g = np.repeat(np.arange(groups), n // groups)
    p = rng.random(n)
    # half the groups far from calibrated (p-value 0 of 100 resamples), half calibrated
    y = (rng.random(n) < np.where(g % 2 == 0, p ** 4, p)).astype(int)
    df = pd.DataFrame({"g": g, "p": p, "y": y})
    tests = {"c": calibr.test("consistency", n_resamples=100), "sp": "spiegelhalter"}
    out = calibr.summarise(df.groupby("g"), "p", "y", "ece", tests=tests, rng=3,
                           p_adjust="holm")
    assert list(out.columns) == ["g", "ece", "c_statistic", "c_pvalue", "c_pvalue_adjusted",
                                 "c_pvalue_below_resolution", "c_small_n", "sp_statistic",
                                 "sp_pvalue", "sp_pvalue_adjusted", "sp_small_n"]
    raw = out["c_pvalue"].to_numpy()
    assert (raw[::2] == 0).all() and (raw[1::2] > 0).all()
    np.testing.assert_array_equal(out["c_pvalue_below_resolution"], raw == 0)
    np.testing.assert_array_equal(out["c_pvalue_adjusted"],
                                  calibr.p_adjust(raw, "holm", resolution=0.01))
    # the first zero: 12 x 0.01, not 0
    assert out["c_pvalue_adjusted"].min() == pytest.approx(0.12, rel=1e-15)
    np.testing.assert_array_equal(out["sp_pvalue_adjusted"],
                                  calibr.p_adjust(out["sp_pvalue"], "holm"))


def test_summarise_refusals():
    df = _groups_frame()
    with pytest.raises(calibr.InputError, match=r"`p_adjust` adjusts the p-values of `tests`, "
                                                r"and there are none; got p_adjust = 'holm'"):
        calibr.summarise(df, "p", "y", "ece", p_adjust="holm")
    with pytest.raises(calibr.InputError, match=r"`p_adjust` must be one of 'holm', "):
        calibr.summarise(df, "p", "y", "ece", tests="kuiper", p_adjust="Holm")
    with pytest.raises(calibr.InputError, match=r"The column 'ku_pvalue_adjusted' of p_adjust "
                                                r"exists already"):
        calibr.summarise(df.groupby("g", observed=True), "p", "y",
                         {"ku_pvalue_adjusted": "ece"}, tests={"ku": "kuiper"}, p_adjust="BH")


def test_summarise_on_dask_adjusts_the_gathered_groups():
    import dask.dataframe as dd
    df = _groups_frame().assign(g=lambda d: d["g"].astype(int))
    want = calibr.summarise(df.groupby("g"), "p", "y", "ece", tests="kuiper", rng=2,
                            p_adjust="BY")
    lazy = calibr.summarise(dd.from_pandas(df, npartitions=3).groupby("g"), "p", "y", "ece",
                            tests="kuiper", rng=2, p_adjust="BY")
    got = lazy.compute(scheduler="synchronous").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    # by= instead of a groupby: the same groups (it was once dropped: one row of all)
    lazy = calibr.summarise(dd.from_pandas(df, npartitions=3), "p", "y", "ece", by="g",
                            tests="kuiper", rng=2, p_adjust="BY")
    got = lazy.compute(scheduler="synchronous").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_summarise_on_a_lazy_engine_adjusts_the_groups():
    """A polars LazyFrame (docs/engines.md): the tests are collected, the adjusted
    p-values those of the pandas path, in the caller's frame type."""
    import polars as pl
    df = _groups_frame().assign(g=lambda d: d["g"].astype(int))
    want = calibr.summarise(df.groupby("g"), "p", "y", "ece", tests="kuiper", rng=2,
                            p_adjust="holm")
    got = calibr.summarise(pl.from_pandas(df).lazy(), "p", "y", "ece", by="g",
                           tests="kuiper", rng=2, p_adjust="holm")
    assert isinstance(got, pl.DataFrame)
    pd.testing.assert_frame_equal(got.to_pandas(), want, check_exact=True)


# --------------------------------------------------------------------------
# calibr compare --p-adjust


def _compare_cli(capsys, *argv) -> tuple[int, str, str]:
    import argparse

    from calibr.cli import _compare

    parser = argparse.ArgumentParser(prog="calibr")
    _compare.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["compare", *map(str, argv)])
    status = args.run(args)
    out, err = capsys.readouterr()
    return status, out, err


def _compare_file(tmp_path, n: int = 2000, seed: int = 30):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    y = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    frame = pd.DataFrame({"seg": rng.choice(list("abcd"), n), "y": y,
                          "p_old": 1 / (1 + np.exp(-(x + 0.3 * rng.standard_normal(n)))),
                          "p_new": 1 / (1 + np.exp(-1.15 * (x + 0.3 * rng.standard_normal(n))))})
    frame.to_csv(tmp_path / "both.csv", index=False)
    return tmp_path / "both.csv"


def test_compare_p_adjust_adds_the_adjusted_column_and_gates_on_it(tmp_path, capsys):
    import io

    from calibr.cli._compare import P_ADJUST_CHOICES, RESULT_COLUMNS

    assert P_ADJUST_CHOICES == P_ADJUST_METHODS  # the parser's copy of the names
    path = _compare_file(tmp_path)
    common = [path, "--p-baseline", "p_old", "--p-candidate", "p_new", "--by", "seg",
              "-m", "ece,mce(bins=5)", "--n-resamples", "499", "-f", "csv"]
    status, out, err = _compare_cli(capsys, *common)
    plain = pd.read_csv(io.StringIO(out))
    assert list(plain.columns) == ["seg", *RESULT_COLUMNS]
    for method in ("holm", "BH"):
        status_adj, out, err = _compare_cli(capsys, *common, "--p-adjust", method)
        assert err == ""
        got = pd.read_csv(io.StringIO(out))
        cols = list(RESULT_COLUMNS)
        cols[cols.index("pvalue") + 1:cols.index("pvalue") + 1] = ["pvalue_adjusted",
                                                                   "pvalue_below_resolution"]
        assert list(got.columns) == ["seg", *cols]
        np.testing.assert_array_equal(got["pvalue"], plain["pvalue"])
        want = calibr.p_adjust(plain["pvalue"].to_numpy(), method, resolution=1 / 499)
        np.testing.assert_allclose(got["pvalue_adjusted"], want, rtol=1e-15)
        assert (got["pvalue_below_resolution"] == (plain["pvalue"] == 0)).all()
        assert (got["worse"] == (want < 0.05)).all()
        assert status_adj == (1 if got["worse"].any() else 0)
    # with holm at least as few worse comparisons as without adjustment
    assert got["worse"].sum() <= plain["worse"].sum()
    status, out, _ = _compare_cli(capsys, *common[:-2], "--p-adjust", "holm")
    assert "p-values adjusted by 'holm' over the 8 comparisons" in out
    assert "worse: adjusted p-value < 0.05" in out


def test_compare_adjusted_p_value_of_a_zero_is_a_bound_that_gates_honestly(tmp_path, capsys):
    """Every comparison's p-value 0 of 200 resamples ("< 0.005"): over 20 groups Holm's
    honest statement is "< 0.1" (not 0), which is not below 0.05, so nothing is worse."""
    import io

    rng = np.random.default_rng(31)
    n = 20 * 150
    p = rng.random(n)
    frame = pd.DataFrame({"seg": np.repeat([f"s{i:02d}" for i in range(20)], 150),
                          "y": (rng.random(n) < p).astype(int), "p_old": p,
                          "p_new": 0.95 + 0.04 * p})
    frame.to_csv(tmp_path / "both.csv", index=False)
    common = [tmp_path / "both.csv", "--p-baseline", "p_old", "--p-candidate", "p_new",
              "--by", "seg", "--n-resamples", "200"]
    status, out, _ = _compare_cli(capsys, *common, "-f", "csv")
    plain = pd.read_csv(io.StringIO(out))
    assert (plain["pvalue"] == 0).all() and plain["worse"].all() and status == 1
    status, out, _ = _compare_cli(capsys, *common, "-f", "csv", "--p-adjust", "holm")
    got = pd.read_csv(io.StringIO(out))
    np.testing.assert_allclose(got["pvalue_adjusted"], 20 * 0.005, rtol=1e-15)
    assert got["pvalue_below_resolution"].all() and not got["worse"].any() and status == 0
    status, out, _ = _compare_cli(capsys, *common, "--p-adjust", "holm")
    row = next(line for line in out.splitlines() if line.startswith("s07"))
    assert row.split()[-6:] == ["inf", "<", "0.005", "<", "0.1", "no"], row
    assert "a p-value below 1/B = 0.005 counts as 1/B, and its adjusted value, < x, is an " \
           "upper bound" in out
    assert "no significant worsening in 20 comparisons (exit status 0)" in out and status == 0


def test_compare_reads_an_unadjusted_zero_at_its_resolution(tmp_path, capsys):
    """Without --p-adjust: a p-value 0 of 10 resamples is "< 0.1", not below 0.05, so
    not worse; of 100 resamples ("< 0.01") it is."""
    import io

    rng = np.random.default_rng(32)
    p = rng.random(300)
    pd.DataFrame({"y": (rng.random(300) < p).astype(int), "p_old": p,
                  "p_new": 0.95 + 0.04 * p}).to_csv(tmp_path / "one.csv", index=False)
    common = [tmp_path / "one.csv", "--p-baseline", "p_old", "--p-candidate", "p_new",
              "-f", "csv", "--n-resamples"]
    status, out, _ = _compare_cli(capsys, *common, "10")
    got = pd.read_csv(io.StringIO(out))
    assert got["pvalue"].tolist() == [0.0] and got["worse"].tolist() == [False]
    assert status == 0
    status, out, _ = _compare_cli(capsys, *common, "100")
    got = pd.read_csv(io.StringIO(out))
    assert got["pvalue"].tolist() == [0.0] and got["worse"].tolist() == [True]
    assert status == 1


def test_compare_p_adjust_refuses_unknown_names(tmp_path, capsys):
    path = _compare_file(tmp_path, n=100)
    with pytest.raises(SystemExit):
        _compare_cli(capsys, path, "--p-baseline", "p_old", "--p-candidate", "p_new",
                     "--p-adjust", "bh")
    assert "invalid choice: 'bh'" in capsys.readouterr().err


def test_by_sums_the_harmonic_number_in_bounded_chunks():
    """BY's ``sum(1/(1:n))`` is summed in chunks (memory bounded up to R's largest
    integer): the same number as the one sum, for chunks that do and do not divide n."""
    from calibr._inference.multitest import _harmonic

    exact = float(np.sum(1.0 / np.arange(1, 1001)))
    for chunk in (1, 7, 1000, 4096):
        assert _harmonic(1000, chunk=chunk) == pytest.approx(exact, rel=1e-15)
    assert _harmonic(1) == 1.0
    n = 3 * 10**6  # several default chunks
    assert calibr.p_adjust([1e-9], "BY", n=n)[0] == pytest.approx(
        float(np.sum(1.0 / np.arange(1, n + 1))) * n * 1e-9, rel=1e-13)
