"""calibr.inspect: calibr's metrics as an inspect-ai metric (docs/tools.md, "inspect-ai").

End to end: a small inspect-ai task runs offline against inspect-ai's mock model
(``mockllm/model``, whose replies a function gives: an answer and a stated
confidence per question), a scorer parses each reply, marks it against the
target and puts the confidence in the score's metadata, and the metric's value
in the eval log is checked against calibr called by hand on the planned
confidences and correctness (not on what the metric read). The missing-key error
is checked as the eval reports it: once, naming the key.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    PARTIAL,
    SampleScore,
    Score,
    Target,
    accuracy,
    scorer,
)
from inspect_ai.solver import TaskState, generate

import calibr
from calibr import InputError
from calibr.inspect import METRICS, calibration

N = 30
RNG = np.random.default_rng(7)
#: what the mock model says for question i in its first and second reply (epochs)
PLAN = [(RNG.integers(20, 101, N), RNG.random(N) < 0.6) for _ in range(2)]


def _mock_model():
    """``mockllm/model`` replying "Answer: A|B / Confidence: c%" from PLAN, the first
    reply to a question from PLAN[0], the second from PLAN[1]. Each reply carries
    its token usage, so that the mock model counts no tokens (which would fetch a
    tokenizer)."""
    asked: dict[int, int] = {}

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        i = int(re.search(r"question (\d+)", messages[-1].text).group(1))
        k = asked.get(i, 0)
        asked[i] = k + 1
        conf, right = PLAN[k]
        out = ModelOutput.from_content(
            "mockllm/model", f"Answer: {'A' if right[i] else 'B'}\nConfidence: {conf[i]}%")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=reply)


@scorer(metrics=[accuracy()])
def judged(key: str = "confidence", every: int = 0):
    """HLE's way: the reply's answer against the target; its stated confidence (a
    percentage) as a fraction in the score's metadata, except for every
    ``every``-th sample (0: none left out)."""
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        answer = re.search(r"Answer: (\w)", text).group(1)
        conf = int(re.search(r"Confidence: (\d+)%", text).group(1)) / 100
        keep = not every or int(state.sample_id) % every != 0
        return Score(value=CORRECT if answer == target.text else INCORRECT,
                     metadata={key: conf} if keep else None)
    return score


def _run(tmp_path, metrics, epochs=1, **scorer_args):
    dataset = MemoryDataset([Sample(input=f"question {i}", target="A", id=i)
                             for i in range(N)])
    task = Task(dataset=dataset, solver=generate(), scorer=judged(**scorer_args),
                metrics=metrics, epochs=epochs)
    return eval(task, model=_mock_model(), log_dir=str(tmp_path / "logs"), display="none")[0]


def _values(log) -> dict[str, float]:
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def test_an_eval_reports_calibrs_numbers(tmp_path):
    """Two epochs: each epoch's reply is a row (the metric reads the unreduced
    scores), so the metric is calibr's on the 2N planned rows."""
    log = _run(tmp_path, epochs=2, metrics=[
        accuracy(),
        calibration(),
        calibration("calibration_error", bins=5, norm="l2"),
        calibration("fixed_size_ce", size=20, last_bin="skip"),
    ])
    assert log.status == "success", log.error
    conf = np.concatenate([PLAN[0][0], PLAN[1][0]]) / 100
    right = np.concatenate([PLAN[0][1], PLAN[1][1]])
    got = [(s.name, s.reducer, m.name, m.params, m.value)
           for s in log.results.scores for m in s.metrics.values()]
    calibrs = [g for g in got if g[2].endswith("calibration")]
    assert [g[3] for g in calibrs] == [{}, {"metric": "calibration_error", "bins": 5,
                                            "norm": "l2"},
                                       {"metric": "fixed_size_ce", "size": 20,
                                        "last_bin": "skip"}]
    assert all(g[1] is None for g in calibrs)  # inspect-ai's unreduced scores
    want = [calibr.ece(conf, right),
            calibr.calibration_error(conf, right, 5, norm="l2"),
            calibr.fixed_size_ce(conf, right, 20, last_bin="skip")]
    assert [g[4] for g in calibrs] == pytest.approx(want, rel=1e-12)
    assert _values(log)["accuracy"] == pytest.approx(right.reshape(2, N).mean(0).mean())


def test_a_score_without_the_confidence_is_one_error_naming_the_key(tmp_path):
    log = _run(tmp_path, metrics=[calibration(confidence="stated")], key="stated", every=7)
    assert log.status == "error"
    message = log.error.message
    lacking = [i for i in range(N) if i % 7 == 0]
    assert message.count("metadata key 'stated'") == 1
    assert f"{len(lacking)} of {N} scores lack (samples 0, 7, 14, 21, 28)" in message


def _scores(values, confs) -> list[SampleScore]:
    return [SampleScore(score=Score(value=v, metadata=None if c is None else {"confidence": c}),
                        sample_id=i) for i, (v, c) in enumerate(zip(values, confs, strict=True))]


def test_the_metric_on_scores_directly():
    conf = [0.9, 0.8, 0.55, 0.3, 0.95, 0.6]
    values = [CORRECT, INCORRECT, CORRECT, INCORRECT, True, 0]
    right = [1, 0, 1, 0, 1, 0]
    assert calibration(bins=3)(_scores(values, conf)) == pytest.approx(
        calibr.ece(conf, right, 3), rel=1e-15)
    assert calibration("brier")(_scores(values, conf)) == pytest.approx(
        calibr.brier(conf, right), rel=1e-15)
    assert set(METRICS) == {*calibr._registry.METRICS, "fixed_size_ce"}


def test_a_set_the_metric_refuses_is_nan_and_says_why(caplog):
    """inspect-ai computes the metrics on the first scores while the eval runs: a
    refusal of the set as a whole (fewer rows than ``size``) is NaN, logged once."""
    scores = _scores([CORRECT, INCORRECT, CORRECT], [0.9, 0.8, 0.7])
    metric = calibration("fixed_size_ce", size=5)
    with caplog.at_level("WARNING", logger="calibr.inspect"):
        assert np.isnan(metric(scores))
        assert np.isnan(metric(scores))
    assert [r.getMessage() for r in caplog.records] == [
        "calibr's fixed_size_ce of 3 scores is NaN: `size` must be at most the number of "
        "rows (3), so that there is at least one bin of `size` rows; got 5."]
    assert metric(scores * 2) == pytest.approx(
        calibr.fixed_size_ce([0.9, 0.8, 0.7] * 2, [1, 0, 1] * 2, 5))


def test_refusals():
    with pytest.raises(InputError, match=r"`metric` must name a calibr metric \(.*'ece'.*"
                                         r"'fixed_size_ce'\); got 'ECE'"):
        calibration("ECE")
    with pytest.raises(InputError, match=r"The metric 'ece' has no option 'n_bins'; its "
                                         r"options are bins, type"):
        calibration(n_bins=10)
    with pytest.raises(InputError, match=r"The metric 'fixed_size_ce' has no option 'bins'"):
        calibration("fixed_size_ce", bins=10)
    with pytest.raises(InputError, match=r"The confidences in the scores' metadata key "
                                         r"'confidence': .*`p`") as err:
        calibration()(_scores([CORRECT, INCORRECT], [85, 0.2]))
    assert err.value.param == "confidence"
    with pytest.raises(InputError, match=r"The score values must each be correct or "
                                         r"incorrect") as err:
        calibration()(_scores([CORRECT, PARTIAL], [0.85, 0.2]))
    assert err.value.param == "to_float"
    with pytest.raises(InputError, match=r"1 of 2 scores lack \(samples 1\)"):
        calibration()(_scores([CORRECT, INCORRECT], [0.85, None]))


def test_the_missing_samples_shown_are_the_first_five():
    """Up to five samples without the confidence are named; from six on, the first
    five and "..."."""
    for lacking, shown in [(5, "0, 1, 2, 3, 4"), (6, "0, 1, 2, 3, 4, ...")]:
        confs = [None] * lacking + [0.5, 0.5]
        with pytest.raises(InputError, match=rf"{lacking} of {lacking + 2} scores lack "
                                             rf"\(samples {re.escape(shown)}\)\."):
            calibration()(_scores([CORRECT] * (lacking + 2), confs))
