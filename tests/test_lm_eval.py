"""calibr.lm_eval: calibr's metrics registered in lm-eval (docs/tools.md, "lm-eval").

Through lm-eval's own registry (``get_metric``, ``get_metric_aggregation``,
``get_aggregation``, ``is_higher_better``) and end to end through
``lm_eval.evaluator.evaluate``: a multiple-choice task on a local JSON file (read by
the ``datasets`` JSON builder, nothing downloaded), answered by an ``LM`` subclass
whose log-likelihoods are fixed numbers (no model), its value checked against
calibr called by hand on the softmax of those numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from lm_eval import evaluator
from lm_eval.api.model import LM
from lm_eval.api.registry import (
    get_aggregation,
    get_metric,
    get_metric_aggregation,
    is_higher_better,
    metric_registry,
)
from lm_eval.api.task import ConfigurableTask
from oracles.llm import lm_eval_pr3913_ce

import calibr
from calibr import InputError
from calibr._registry import METRICS
from calibr.lm_eval import REGISTERED, aggregate, register


def _softmax(ll: np.ndarray) -> np.ndarray:
    e = np.exp(ll - ll.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_every_calibr_metric_is_in_lm_evals_registry():
    for name, info in METRICS.items():
        key = f"calibr_{name}"
        assert REGISTERED[key] == (name, {})
        items = ["an item"]
        assert get_metric(key)(items) is items  # a pass-through, as brier_score's
        assert get_metric_aggregation(key) is get_aggregation(key)
        assert is_higher_better(key) is info.higher_is_better
    assert {"acc", "acc_norm", "brier_score"} <= set(metric_registry)  # lm-eval's own


def test_importing_the_adapter_first_keeps_lm_evals_own_metrics():
    """lm-eval's registry imports its own metrics only while it is empty: the adapter
    imports them before registering calibr's (a fresh interpreter, nothing else
    imported before)."""
    code = ("import calibr.lm_eval; from lm_eval.api.registry import get_metric; "
            "print(get_metric('acc').__name__, get_metric('calibr_ece').__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["acc_fn", "_passthrough"]


def test_the_two_forms_of_items():
    rng = np.random.default_rng(3)
    P = _softmax(rng.normal(0, 1.5, (500, 4)))
    y = rng.integers(0, 4, 500)
    items = [(int(g), p) for g, p in zip(y, P, strict=True)]
    # (gold, probabilities): the answer's confidence against whether it is right,
    # which is calibr's type="confidence" of the matrix
    assert get_aggregation("calibr_ece")(items) == pytest.approx(
        calibr.ece(P, y, type="confidence", classes=range(4)), rel=1e-12)
    assert aggregate(items, "brier") == pytest.approx(
        calibr.brier(P.max(1), P.argmax(1) == y), rel=1e-12)
    # choices of different numbers per question
    ragged = [(0, [0.6, 0.4]), (1, [0.2, 0.5, 0.3]), (2, [0.1, 0.2, 0.3, 0.4])]
    assert aggregate(ragged, bins=2) == pytest.approx(
        calibr.ece([0.6, 0.5, 0.4], [1, 1, 0], 2), rel=1e-15)
    # (correct, confidence): lm-eval pull request 3913's items and its numbers
    p = rng.integers(0, 101, 500) / 100
    c = (rng.random(500) < p).astype(int)
    pairs = list(zip(c.tolist(), p.tolist(), strict=True))
    register("pr3913_ece", "ece", right=False)
    register("pr3913_rms_ce", "calibration_error", norm="l2", right=False)
    assert get_metric_aggregation("pr3913_ece")(pairs) == pytest.approx(
        lm_eval_pr3913_ce(pairs), rel=1e-12)
    assert get_metric_aggregation("pr3913_rms_ce")(pairs) == pytest.approx(
        lm_eval_pr3913_ce(pairs, rms=True), rel=1e-12)


def test_register_refusals():
    assert register("calibr_ece_15", "ece", bins=15) == "calibr_ece_15"
    assert register("calibr_ece_15", "ece", bins=15) == "calibr_ece_15"  # again: nothing
    with pytest.raises(InputError, match=r"lm-eval already has a metric or aggregation "
                                         r"'calibr_ece_15' \(calibr's ece with \{'bins': 15\}\)"):
        register("calibr_ece_15", "ece", bins=10)
    with pytest.raises(InputError, match=r"lm-eval already has a metric or aggregation 'acc';"):
        register("acc", "ece")
    with pytest.raises(InputError, match=r"`metric` must name a calibr metric .*got 'ECE'"):
        register("x", "ECE")
    with pytest.raises(InputError, match=r"The metric 'ece' has no option 'n_bins'"):
        register("x", "ece", n_bins=10)
    assert "x" not in metric_registry


def test_item_refusals():
    with pytest.raises(InputError, match=r"must all be \(gold, probabilities\) pairs or all "
                                         r"\(correct, confidence\) pairs; got both"):
        aggregate([(0, [0.6, 0.4]), (1, 0.7)])
    with pytest.raises(InputError, match=r"must be a pair"):
        aggregate([(0, 0.6, 1)])
    with pytest.raises(InputError, match=r"no items"):
        aggregate([])
    with pytest.raises(InputError, match=r"`p`"):
        aggregate([(1, 1.2), (0, 0.3)])


class _FixedLM(LM):
    """An lm-eval model whose log-likelihood of choice k for question i is LL[i, k]."""

    def __init__(self, ll: np.ndarray) -> None:
        super().__init__()
        self.ll = ll

    def loglikelihood(self, requests):
        out = []
        for request in requests:
            context, continuation = request.args
            i, k = int(context.split()[1]), "ABC".index(continuation.strip())
            out.append((float(self.ll[i, k]), False))
        return out

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError

    def generate_until(self, requests):
        raise NotImplementedError


def _process_results(doc, results):
    """The task's own results: lm-eval's acc, and calibr_ece's (gold, probabilities)
    pair, built as lm-eval builds brier_score's."""
    ll = np.array([r[0] for r in results])
    return {"acc": float(np.argmax(ll) == doc["gold"]),
            "calibr_ece": (doc["gold"], _softmax(ll))}


def test_an_lm_eval_run_reports_calibrs_number(tmp_path):
    rng = np.random.default_rng(11)
    n = 60
    gold = rng.integers(0, 3, n)
    ll = rng.normal(0, 1.5, (n, 3))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"q": f"question {i}", "choices": ["A", "B", "C"],
                                        "gold": int(gold[i])}) + "\n" for i in range(n)))
    task = ConfigurableTask(config=dict(
        task="calibr_demo", dataset_path="json", test_split="test",
        dataset_kwargs={"data_files": {"test": str(data)}, "cache_dir": str(tmp_path / "hf")},
        output_type="multiple_choice", doc_to_text="{{q}}", doc_to_choice="{{choices}}",
        doc_to_target="{{gold}}", process_results=_process_results,
        metric_list=[{"metric": "acc"}, {"metric": "calibr_ece"}]))
    results = evaluator.evaluate(lm=_FixedLM(ll), task_dict={"calibr_demo": task})
    got = results["results"]["calibr_demo"]
    P = _softmax(ll)
    assert got["calibr_ece,none"] == pytest.approx(
        calibr.ece(P, gold, type="confidence", classes=range(3)), rel=1e-12)
    assert got["acc,none"] == pytest.approx(np.mean(P.argmax(1) == gold))
