"""The calibration numbers LLM evaluation tools report, and the calibr call for each
(``docs/conventions.md``, "LLM evaluation tools").

* Humanity's Last Exam's ``calib_err`` (both variants: the original that skips the
  last bin, the ports that keep it) against the oracle ``tests/oracles/llm.py``,
  written from its source (HLE is a script, not a package), and on a case worked
  by hand; calibr's ``fixed_size_ce``.
* lm-eval's ``ece`` and ``rms_ce`` (pull request 3913, not in lm-eval 0.4.13)
  against the oracle written from that commit.
* HELM's ``ece_10_bin``, ``ece_1_bin``, ``platt_ece_10_bin``,
  ``selective_cov_acc_area`` and ``selective_acc@10`` against the
  uncertainty-calibration 0.1.4 functions HELM calls (installed).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles.llm import helm_calibration_stats, hle_calib_err, lm_eval_pr3913_ce
from tolerances import ORACLE_ATOL, ORACLE_RTOL

import calibr

NORMS = {"2": "l2", "1": "l1", "infty": "max"}


def _llm(n: int, seed: int, grid: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stated confidences and whether each answer is correct (overconfident: the
    answers are right less often than stated). ``grid``: confidences rounded to
    multiples of 1/grid, as a model that says "85%" (many ties)."""
    rng = np.random.default_rng(seed)
    conf = rng.beta(5, 1.5, n)
    if grid is not None:
        conf = np.round(conf * grid) / grid
    correct = rng.random(n) < 0.8 * conf
    return conf, correct


# --- Humanity's Last Exam ----------------------------------------------------------


@pytest.mark.parametrize("n, keep", [(n, keep) for n in (100, 199, 200, 250, 1000, 2500, 2599)
                                     for keep in (False, True) if keep or n >= 200])
@pytest.mark.parametrize("p", list(NORMS))
def test_hle_calib_err_both_variants_without_ties(n, p, keep):
    """(The original below n = 200 skips every row: refused, tested below.)"""
    conf, correct = _llm(n, seed=n)
    last_bin = "keep" if keep else "skip"
    want = hle_calib_err(conf, correct, p=p, beta=100, keep_last=keep)
    got = calibr.fixed_size_ce(conf, correct, 100, norm=NORMS[p], last_bin=last_bin)
    assert got == pytest.approx(want, rel=ORACLE_RTOL, abs=ORACLE_ATOL)


@pytest.mark.parametrize("beta", [1, 7, 50, 100])
def test_hle_other_bin_sizes_and_the_two_variants_differ(beta):
    conf, correct = _llm(530, seed=beta)
    skip = calibr.fixed_size_ce(conf, correct, beta, last_bin="skip")
    keep = calibr.fixed_size_ce(conf, correct, beta)
    assert skip == pytest.approx(hle_calib_err(conf, correct, beta=beta), rel=ORACLE_RTOL)
    assert keep == pytest.approx(hle_calib_err(conf, correct, beta=beta, keep_last=True),
                                 rel=ORACLE_RTOL)
    assert skip < keep  # the skipped bin holds the most confident, most overconfident rows


def test_hle_ties_follow_the_stable_order():
    """Stated confidences tie (a model says 90% again and again); a bin cut inside a
    block of ties puts some of its rows in each bin, so the number depends on the
    order of the tied rows. calibr's is the stable order: the oracle with
    ``kind="stable"`` (HLE's default argsort orders ties its own way)."""
    conf, correct = _llm(2537, seed=5, grid=20)
    assert len(np.unique(conf)) <= 21
    for last_bin, keep in (("skip", False), ("keep", True)):
        for p, norm in NORMS.items():
            want = hle_calib_err(conf, correct, p=p, keep_last=keep, kind="stable")
            got = calibr.fixed_size_ce(conf, correct, norm=norm, last_bin=last_bin)
            assert got == pytest.approx(want, rel=ORACLE_RTOL, abs=ORACLE_ATOL)
    # the rows in another order: another number (ties are cut by position)
    rng = np.random.default_rng(0)
    perm = rng.permutation(conf.shape[0])
    moved = calibr.fixed_size_ce(conf[perm], correct[perm])
    assert moved == pytest.approx(
        hle_calib_err(conf[perm], correct[perm], keep_last=True, kind="stable"),
        rel=ORACLE_RTOL)
    assert moved != calibr.fixed_size_ce(conf, correct)


def test_hle_by_hand():
    """Five rows, bins of 2: ranks {0, 1} and {2, 3, 4} (the remainder joins the last).
    Bin 1: confidences 0.1, 0.3 (mean 0.2), correct 0, 1 (0.5): gap 0.3. Bin 2:
    0.6, 0.7, 0.8 (0.7), correct 1, 1, 0 (2/3): gap 1/30."""
    conf = [0.8, 0.1, 0.6, 0.3, 0.7]
    correct = [0, 0, 1, 1, 1]
    g1, g2 = 0.3, 0.7 - 2 / 3
    keep = np.sqrt(2 / 5 * g1 ** 2 + 3 / 5 * g2 ** 2)
    assert calibr.fixed_size_ce(conf, correct, 2) == pytest.approx(keep, rel=1e-14)
    assert calibr.fixed_size_ce(conf, correct, 2, norm="l1") == pytest.approx(
        2 / 5 * g1 + 3 / 5 * g2, rel=1e-14)
    assert calibr.fixed_size_ce(conf, correct, 2, norm="max") == pytest.approx(g1, rel=1e-14)
    # HLE's original: bin 2 left out, its 3 rows still in n = 5
    assert calibr.fixed_size_ce(conf, correct, 2, last_bin="skip") == pytest.approx(
        np.sqrt(2 / 5) * g1, rel=1e-14)
    assert calibr.fixed_size_ce(conf, correct, 2, norm="max", last_bin="skip") == \
        pytest.approx(g1, rel=1e-14)


def test_hle_refusals():
    conf, correct = _llm(150, seed=1)
    with pytest.raises(calibr.InputError, match=r"`size` must be at most the number of rows "
                                                r"\(150\).*got 151"):
        calibr.fixed_size_ce(conf, correct, 151)
    with pytest.raises(calibr.InputError, match=r'at most half the number of rows \(150\) '
                                                r'with last_bin = "skip"'):
        calibr.fixed_size_ce(conf, correct, 100, last_bin="skip")
    with pytest.raises(calibr.InputError, match=r"`size` must be a positive whole number"):
        calibr.fixed_size_ce(conf, correct, 0)
    with pytest.raises(calibr.InputError, match=r"`last_bin` must be one of"):
        calibr.fixed_size_ce(conf, correct, 10, last_bin="drop")
    with pytest.raises(calibr.InputError, match=r"`p` must be a vector of confidences"):
        calibr.fixed_size_ce(np.column_stack([conf, 1 - conf]), correct.astype(int) + 1, 10)
    with pytest.raises(calibr.InputError, match=r"`p`"):
        calibr.fixed_size_ce(np.r_[conf[:-1], 1.5], correct, 10)


# --- lm-eval (pull request 3913) ---------------------------------------------------


@pytest.mark.parametrize("data", ["continuous", "grid"])
@pytest.mark.parametrize("n_bins", [10, 15])
def test_lm_eval_ece_and_rms_ce(data, n_bins):
    """Its bins are closed on the left and the last on both sides (numpy.histogram's):
    ``right=False``. The grid k/100 puts values on every edge."""
    rng = np.random.default_rng(n_bins)
    p = rng.random(3000) if data == "continuous" else rng.integers(0, 101, 3000) / 100
    y = (rng.random(3000) < p ** 1.3).astype(int)
    items = list(zip(y.tolist(), p.tolist(), strict=True))
    assert calibr.ece(p, y, n_bins, right=False) == pytest.approx(
        lm_eval_pr3913_ce(items, n_bins), rel=ORACLE_RTOL, abs=ORACLE_ATOL)
    assert calibr.calibration_error(p, y, n_bins, norm="l2", right=False) == pytest.approx(
        lm_eval_pr3913_ce(items, n_bins, rms=True), rel=ORACLE_RTOL, abs=ORACLE_ATOL)
    if data == "grid":  # calibr's default (R's bins, closed on the right) differs here
        # (the RMS: every gap here has one sign, so any ECE is |mean(p) - mean(y)|)
        assert calibr.calibration_error(p, y, n_bins) != pytest.approx(
            lm_eval_pr3913_ce(items, n_bins, rms=True), rel=1e-6)


# --- HELM ----------------------------------------------------------------------------


def _helm_calls(conf: np.ndarray, correct: np.ndarray) -> dict[str, float]:
    """The calibr call of each HELM number (``docs/conventions.md``)."""
    import calibration as cal

    n = conf.shape[0]
    # the selective numbers read the top-label confidence of a matrix: two columns
    # whose first, (1 + c) / 2, is the top one and ranks the rows as c does
    two = np.column_stack(((1 + conf) / 2, (1 - conf) / 2))
    wrong = (~correct).astype(int)  # the first column is right exactly when correct
    out = {
        "ece_10_bin": calibr.ece(conf, correct, 10, binning="equal-mass"),
        "ece_1_bin": calibr.ece(conf, correct, 1),
        "selective_cov_acc_area": 1 - calibr.aurc(two, wrong, rule="step",
                                                  classes=range(2)),
        "selective_acc@10": calibr.selective_accuracy(
            two, wrong, coverage=(int(0.1 * n) + 1) / n, classes=range(2)),
    }
    platt = cal.get_platt_scaler(conf, correct.astype(int))(conf)
    out["platt_ece_10_bin"] = calibr.ece(platt, correct, 10, binning="equal-mass")
    out["platt_ece_1_bin"] = calibr.ece(platt, correct, 1)
    return out


@pytest.mark.parametrize("n", [57, 300, 1000])
def test_helm_battery_equals_the_uncertainty_calibration_calls(n):
    conf, correct = _llm(n, seed=n)
    conf = conf * 0.9 + 0.05  # HELM's max_prob of a multiple-choice answer: also < 0.5
    conf[:5] = [0.05, 0.2, 0.3, 0.45, 0.5]
    want = helm_calibration_stats(conf, correct)
    got = _helm_calls(conf, correct)
    for name, value in got.items():
        assert value == pytest.approx(want[name], rel=ORACLE_RTOL, abs=ORACLE_ATOL), name


def test_helm_all_correct_reports_a_platt_ece_of_zero():
    """HELM skips the Platt fit when every answer is right (or every one wrong) and
    reports 0.0: no number of calibr's, which refuses to fit one class."""
    conf = np.linspace(0.3, 0.9, 50)
    assert helm_calibration_stats(conf, np.ones(50, dtype=int))["platt_ece_10_bin"] == 0.0
    with pytest.raises(calibr.InputError, match="one class"):
        calibr.recalibrate(conf, np.ones(50, dtype=int), "platt")
