"""Oracles of the calibration numbers that LLM evaluation tools report
(``docs/conventions.md``, "LLM evaluation tools"), each written from the tool's
source as read (cited per function) and rewritten here, not copied, and not from calibr's code.

* Humanity's Last Exam (centerforaisafety/hle, ``hle_eval/run_judge_results.py``,
  ``calib_err``, itself copied from hendrycks/outlier-exposure
  ``utils/calibration_tools.py``): the text read in the tool library's copies of it
  (identical in the ports that cite it, e.g. a simple-evals ``HLEEval`` citing
  ``run_judge_results.py#L97``); :func:`hle_calib_err` with ``keep_last=False``.
  The ports that keep the last bin (e.g. Harbor's HLE adapter
  ``compute_calibration.py``: ``for i in range(len(bins))``):
  ``keep_last=True``.
* lm-eval (EleutherAI/lm-evaluation-harness pull request 3913, commit
  b782e062ec725411a94cbce375d9e1b7a093cb48, ``lm_eval/api/metrics.py``; not in
  lm-eval 0.4.13): :func:`lm_eval_pr3913_ce`.
* HELM's battery is uncertainty-calibration's functions, which the tests call
  themselves (the package ``calibration``, a test dependency);
  :func:`helm_calibration_stats` is HELM's ``compute_calibration_metrics``
  (stanford-crfm/helm ``src/helm/benchmark/metrics/basic_metrics.py``, commit
  63754d05db6f874e41a395880fb573890a13e791) on plain lists.
"""

from __future__ import annotations

import numpy as np

__all__ = ["helm_calibration_stats", "hle_calib_err", "lm_eval_pr3913_ce"]


def hle_calib_err(confidence, correct, p="2", beta=100, *, keep_last=False,
                  kind="quicksort"):
    """HLE's ``calib_err`` as its source computes it (rewritten here, not copied):
    ``numpy.argsort`` of the confidences (``kind``: HLE uses the default), bins
    of ``beta`` consecutive ranks with the remainder in the last, per bin
    ``|nanmean(confidence) - nanmean(correct)|``; ``"2"`` the root of the sum of
    ``len(bin) / n`` times its square, ``"1"`` that sum of the gaps,
    ``"infty"`` the largest gap. The original's loop stops before the last bin;
    ``keep_last`` (the ports) includes it."""
    conf = np.asarray(confidence, dtype=np.float64)
    hit = np.asarray(correct)
    order = np.argsort(conf, kind=kind)
    conf, hit = conf[order], hit[order]
    n = conf.shape[0]
    nbins = n // beta
    edges = [b * beta for b in range(nbins)] + [n]  # the last bin runs to n
    used = nbins if keep_last else nbins - 1
    squares, gaps, largest = 0.0, 0.0, 0.0
    for b in range(used):
        lo, hi = edges[b], edges[b + 1]
        gap = abs(float(np.nanmean(conf[lo:hi])) - float(np.nanmean(hit[lo:hi])))
        squares += (hi - lo) / n * gap * gap
        gaps += (hi - lo) / n * gap
        largest = max(largest, gap)
    if p == "2":
        return float(np.sqrt(squares))
    if p == "1":
        return gaps
    if p in ("infty", "infinity", "max"):
        return largest
    raise ValueError("p must be '1', '2' or 'infty'")


def lm_eval_pr3913_ce(items, n_bins=10, *, rms=False):
    """lm-eval pull request 3913's ``ece`` (``rms=False``) and ``rms_calibration_error``
    (the aggregation ``rms_ce``) over ``(gold, probability)`` pairs, as its source
    computes them (rewritten here): the probabilities clipped to [0, 1]; the edges
    ``numpy.linspace(0, 1, n_bins + 1)``; each bin ``lo <= p < hi``, the last
    ``lo <= p <= 1``; the weighted mean of ``|acc - conf|`` (its square, then the
    root, for ``rms``) over the non-empty bins."""
    gold = np.array([g for g, _ in items], dtype=int)
    prob = np.clip(np.array([q for _, q in items], dtype=float), 0.0, 1.0)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    total = 0.0
    for b in range(n_bins):
        lo, hi = edges[b], edges[b + 1]
        inside = (prob >= lo) & ((prob <= hi) if hi == 1.0 else (prob < hi))
        k = int(inside.sum())
        if k:
            gap = gold[inside].mean() - prob[inside].mean()
            total += k / prob.shape[0] * (gap * gap if rms else abs(gap))
    return float(np.sqrt(total)) if rms else float(total)


def helm_calibration_stats(max_probs, correct) -> dict[str, float]:
    """HELM's ``compute_calibration_metrics`` after it has collected ``max_probs``
    and ``correct`` (0/1): the uncertainty-calibration calls, by name."""
    import calibration as cal

    max_probs = [float(v) for v in max_probs]
    correct = [int(v) for v in correct]
    stats = {
        "ece_10_bin": cal.get_ece_em(max_probs, correct, num_bins=10),
        "ece_1_bin": cal.get_ece(max_probs, correct, num_bins=1),
    }
    area, acc10 = cal.get_selective_stats(max_probs, correct)
    stats["selective_cov_acc_area"] = area
    stats["selective_acc@10"] = acc10
    if np.sum(correct) == 0 or np.sum(correct) == len(correct):
        stats["platt_ece_10_bin"] = 0.0
        stats["platt_ece_1_bin"] = 0.0
    else:
        platt_scaler, _ = cal.get_platt_scaler(np.array(max_probs), np.array(correct),
                                               get_clf=True)
        cal_max_probs = platt_scaler(np.array(max_probs))
        stats["platt_ece_10_bin"] = cal.get_ece_em(cal_max_probs, correct, num_bins=10)
        stats["platt_ece_1_bin"] = cal.get_ece(cal_max_probs, correct, num_bins=1)
    return {k: float(v) for k, v in stats.items()}
