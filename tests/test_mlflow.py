"""calibr.mlflow: a calibration summary logged to an MLflow run, and calibr metrics in
``mlflow.models.evaluate`` (docs/tools.md).

Every run lives in a local tracking store in the test's temporary directory (MLflow's
file store; ``docs/tools.md``, "MLflow", says why not SQLite) and is read back through
``MlflowClient``: the metric names are written out by hand, and every value is
compared with calibr's metric called by hand on the group's rows (the metrics
themselves are checked against R and the peers in their own test files).
"""

from __future__ import annotations

import os

# MLflow decides at import whether to send usage telemetry: never from the tests
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import math  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import mlflow  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from mlflow import MlflowClient  # noqa: E402

import calibr  # noqa: E402
from calibr import InputError, InputTypeError  # noqa: E402
from calibr.mlflow import ARTIFACTS, key_part, log_calibration, make_metric, metric_key  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BATTERY = ("ece", "brier", "log_loss", "auroc", "aurc")


@pytest.fixture(autouse=True)
def tracking(tmp_path, monkeypatch):
    """A tracking store of this test alone, in its temporary directory."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3's file store
    uri = (tmp_path / "mlruns").as_uri()
    mlflow.set_tracking_uri(uri)
    yield uri
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


def _binary(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    return pd.DataFrame({"model": rng.choice(["a", "b/c"], n), "fold": rng.integers(1, 3, n),
                         "w": rng.integers(1, 4, n).astype(float),
                         "p": p, "y": (rng.random(n) < p).astype(int)})


def _multiclass(n: int = 300, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    prob = rng.dirichlet([2.0, 2.0, 2.0], n)
    y = np.array([rng.choice(3, p=row) for row in prob])
    return pd.DataFrame({"model": rng.choice(["m1", "m2"], n),
                         **{f"p_{k}": prob[:, k] for k in range(3)},
                         "y": np.array(["x", "y", "z"])[y]})


def _by_hand(name: str, p, y, **options) -> float:
    return float(getattr(calibr, name)(p, y, **options))


def _run_metrics(run_id: str) -> dict[str, float]:
    return MlflowClient().get_run(run_id).data.metrics


def _artifacts(run_id: str, path: str = "calibr") -> list[str]:
    return sorted(a.path for a in MlflowClient().list_artifacts(run_id, path))


# --- log_calibration: the metrics ---------------------------------------------------


def test_each_groups_battery_and_rows_are_logged_under_readable_names(tracking):
    df = _binary()
    with mlflow.start_run() as run:
        logged = log_calibration(df, "p", "y", by="model")
    got = _run_metrics(run.info.run_id)
    want = {}
    for value, part in (("a", "model_a"), ("b/c", "model_b_c")):
        g = df[df["model"] == value]
        want[f"n/{part}"] = float(len(g))
        for name in BATTERY:
            want[f"{name}/{part}"] = _by_hand(name, g["p"], g["y"])
    assert got == want
    assert logged == want
    assert run.info.artifact_uri.startswith(tracking)  # the store is the test's own


def test_two_keys_name_each_in_order_and_no_groups_name_the_metric_alone():
    df = _binary()
    with mlflow.start_run() as run:
        log_calibration(df.groupby(["fold", "model"]), "p", "y", metrics=["ece", "mce"],
                        bins=5)
    got = _run_metrics(run.info.run_id)
    g = df[(df["fold"] == 2) & (df["model"] == "b/c")]
    assert got["ece/fold_2/model_b_c"] == _by_hand("ece", g["p"], g["y"], bins=5)
    assert got["mce/fold_2/model_b_c"] == _by_hand("mce", g["p"], g["y"], bins=5)
    assert got["n/fold_2/model_b_c"] == len(g)
    assert len(got) == 3 * 4
    with mlflow.start_run() as run:
        log_calibration(df, "p", "y", metrics="ece")
    assert _run_metrics(run.info.run_id) == {"ece": _by_hand("ece", df["p"], df["y"]),
                                             "n": float(len(df))}


def test_multiclass_options_and_metric_columns_with_characters_mlflow_refuses():
    df = _multiclass()
    cols = ["p_0", "p_1", "p_2"]
    with mlflow.start_run() as run:
        log_calibration(df, cols, "y", by="model", classes=["x", "y", "z"], type="confidence",
                        metrics=["ece", calibr.metric("mce", bins=4), "brier"])
    got = _run_metrics(run.info.run_id)
    g = df[df["model"] == "m2"]
    P, opts = g[cols].to_numpy(), {"classes": ["x", "y", "z"]}
    assert got["ece/model_m2"] == _by_hand("ece", P, g["y"], type="confidence", **opts)
    # the bins of the metric win over log_calibration's; its column "mce(bins=4)"
    assert got["mce_bins_4_/model_m2"] == _by_hand("mce", P, g["y"], bins=4,
                                                   type="confidence", **opts)
    assert got["brier/model_m2"] == _by_hand("brier", P, g["y"], **opts)
    assert sorted(got) == sorted(f"{m}/model_{k}" for m in ("ece", "mce_bins_4_", "brier", "n")
                                 for k in ("m1", "m2"))


def test_weights_are_the_metrics_weights_and_n_their_total():
    df = _binary()
    with mlflow.start_run() as run:
        log_calibration(df, "p", "y", by="model", weights="w", metrics=["ece", "brier"])
    got = _run_metrics(run.info.run_id)
    g = df[df["model"] == "a"]
    assert got["ece/model_a"] == _by_hand("ece", g["p"], g["y"], weights=g["w"])
    assert got["brier/model_a"] == _by_hand("brier", g["p"], g["y"], weights=g["w"])
    assert got["n/model_a"] == g["w"].sum() != len(g)


def test_an_undefined_metric_is_logged_as_nan_and_step_is_mlflows():
    df = _binary()
    df.loc[df["model"] == "a", "y"] = 1  # one class: no AUROC
    with mlflow.start_run() as run, pytest.warns(RuntimeWarning) as caught:
        log_calibration(df, "p", "y", by="model", metrics=["auroc"], step=7)
    assert [str(w.message) for w in caught] == [  # once, not again by the report
        "summarise: the metric 'auroc' is undefined on 1 group (e.g. one class only), "
        "which gets NaN: model='a'."]
    got = _run_metrics(run.info.run_id)
    assert math.isnan(got["auroc/model_a"]) and not math.isnan(got["auroc/model_b_c"])
    assert [m.step for m in MlflowClient().get_metric_history(run.info.run_id,
                                                              "auroc/model_b_c")] == [7]


def test_the_name_rule_gives_names_mlflow_accepts():
    assert key_part("gpt-4o (mini)") == "gpt-4o _mini_"
    assert key_part("a=b:c/d@é") == "a_b_c_d_é"
    assert metric_key("ece", [("model", "x y"), ("fold", 1)]) == "ece/model_x y/fold_1"
    df = _binary().assign(model=lambda d: d["model"].map({"a": "é:1=2", "b/c": "(x)"}))
    with mlflow.start_run() as run:
        log_calibration(df, "p", "y", by="model", metrics="ece")
    assert sorted(_run_metrics(run.info.run_id)) == ["ece/model__x_", "ece/model_é_1_2",
                                                     "n/model__x_", "n/model_é_1_2"]


def test_a_run_is_started_when_none_is_active():
    assert mlflow.active_run() is None
    log_calibration(_binary(), "p", "y", metrics="ece")
    run = mlflow.active_run()
    assert run is not None and set(_run_metrics(run.info.run_id)) == {"ece", "n"}


# --- log_calibration: the artifacts --------------------------------------------------


def test_the_artifacts_are_the_verbs_results(tmp_path):
    df = _binary()
    with mlflow.start_run() as run:
        log_calibration(df, "p", "y", by="model", metrics=["ece", "mce"], bins=10)
    assert _artifacts(run.info.run_id) == sorted(f"calibr/{f}" for f in ARTIFACTS)
    local = Path(MlflowClient().download_artifacts(run.info.run_id, "calibr", str(tmp_path)))
    summary = pd.read_csv(local / "summary.csv")
    assert list(summary.columns) == ["model", "ece", "mce", "n"]
    for row in summary.itertuples():
        g = df[df["model"] == row.model]
        assert (row.ece, row.mce, row.n) == (_by_hand("ece", g["p"], g["y"], bins=10),
                                             _by_hand("mce", g["p"], g["y"], bins=10), len(g))
    table = calibr.calibration_table("p", "y", bins=10, data=df, by="model")
    pd.testing.assert_frame_equal(pd.read_csv(local / "calibration_table.csv"),
                                  table.reset_index(drop=True), check_dtype=False,
                                  rtol=1e-15, atol=0)
    png = (local / "reliability_diagram.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # 100 dots per inch (docs/tools.md): the IHDR chunk's width and height, big-endian
    size = calibr.reliability_diagram(table).get_size_inches() * 100
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == tuple(
        round(v) for v in size)
    page = calibr.html_report(df, "p", "y", metrics={"ece": calibr.metric("ece", bins=10),
                                                     "mce": calibr.metric("mce", bins=10)},
                              bins=10, by="model")
    assert (local / "report.html").read_text(encoding="utf-8") == page


def test_files_already_in_the_run_are_never_overwritten():
    df = _binary()
    with mlflow.start_run() as run:
        log_calibration(df, "p", "y", metrics="ece")
        first = (Path(MlflowClient().download_artifacts(run.info.run_id, "calibr/summary.csv"))
                 .read_bytes())
        with pytest.raises(InputError, match=r"already hold calibr/calibration_table\.csv; "
                                             r"calibr does not overwrite it"):
            log_calibration(df.iloc[:100], "p", "y", metrics="ece")
        # nothing was logged by the refused call: one value of each metric, same files
        assert len(MlflowClient().get_metric_history(run.info.run_id, "ece")) == 1
        again = (Path(MlflowClient().download_artifacts(run.info.run_id, "calibr/summary.csv"))
                 .read_bytes())
        assert again == first
        log_calibration(df.iloc[:100], "p", "y", metrics="ece", artifact_path="eval/head")
    assert _artifacts(run.info.run_id, "eval/head") == sorted(f"eval/head/{f}" for f in ARTIFACTS)


# --- log_calibration: bad input --------------------------------------------------------


@pytest.mark.parametrize("path", ["", "/abs", "../up", "a//b", "a/", ".", 3])
def test_an_artifact_path_must_be_a_relative_folder(path):
    with pytest.raises(InputError, match=r"`artifact_path` must be a relative folder"):
        log_calibration(_binary(), "p", "y", artifact_path=path)
    assert mlflow.active_run() is None  # refused before a run is started


def test_groups_or_metrics_with_the_same_name_are_refused_before_logging():
    df = _binary().assign(model=lambda d: d["model"].map({"a": "x_y", "b/c": "x/y"}))
    with mlflow.start_run() as run:
        with pytest.raises(InputError, match=r"The metric 'ece' of group model='x/y' and the "
                                             r"metric 'ece' of group model='x_y' have the "
                                             r"same MLflow name 'ece/model_x_y'") as err:
            log_calibration(df, "p", "y", by="model", metrics="ece")
        assert err.value.param == "by"
        with pytest.raises(InputError, match=r"have the same MLflow name 'a_b'") as err:
            log_calibration(df, "p", "y", metrics={"a=b": "ece", "a:b": "mce"})
        assert err.value.param == "metrics"
        with pytest.raises(InputError, match=r"A metric column is named 'n'"):
            log_calibration(df, "p", "y", metrics={"n": "ece"})
        with pytest.raises(InputError, match=r"A group key is named 'n'"):
            log_calibration(df.rename(columns={"fold": "n"}), "p", "y", by="n")
        with pytest.raises(InputError, match=r"is not a name MLflow accepts"):
            log_calibration(df, "p", "y", metrics={"..": "ece"})
        with pytest.raises(InputError, match=r"has 253 characters; MLflow takes at most 250"):
            log_calibration(df, "p", "y", metrics={"e" * 253: "ece"})
    assert _run_metrics(run.info.run_id) == {}
    assert _artifacts(run.info.run_id) == []


def test_bad_predictions_are_calibrs_error_and_nothing_is_logged():
    df = _binary()
    df.loc[3, "p"] = 1.5
    with mlflow.start_run() as run:
        with pytest.raises(InputError, match=r"`p` must lie in \[0, 1\]"):
            log_calibration(df, "p", "y")
    assert _run_metrics(run.info.run_id) == {} and _artifacts(run.info.run_id) == []
    with pytest.raises(InputTypeError, match=r"`data` must be a pandas DataFrame or "
                                             r"DataFrameGroupBy \(df.groupby\(...\)\); got dict"):
        log_calibration({"p": [0.5], "y": [1]}, "p", "y")


# --- make_metric: mlflow.models.evaluate ------------------------------------------------


def _evaluate(data, metrics, **kwargs):
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(data=data, extra_metrics=metrics, **kwargs)
    assert _run_metrics(run.info.run_id) == result.metrics
    return result.metrics


def test_evaluate_reads_the_probability_column_of_the_data():
    df = _binary()
    got = _evaluate(df, [make_metric("ece", p="p", bins=10), make_metric("brier", "p"),
                         make_metric("auroc", "p", name="auc")],
                    targets="y", predictions="p")
    assert got == {"ece": _by_hand("ece", df["p"], df["y"], bins=10),
                   "brier": _by_hand("brier", df["p"], df["y"]),
                   "auc": _by_hand("auroc", df["p"], df["y"])}


def test_evaluate_multiclass_with_string_labels_and_weights():
    df = _multiclass().assign(w=lambda d: np.arange(len(d)) % 3 + 1.0)
    cols, classes = ["p_0", "p_1", "p_2"], ["x", "y", "z"]
    got = _evaluate(df.assign(pred="x"), [
        make_metric("ece", cols, classes=classes, type="confidence", weights="w"),
        make_metric("log_loss", cols, classes=classes)], targets="y", predictions="pred")
    P = df[cols].to_numpy()
    assert got == {"ece": _by_hand("ece", P, df["y"], classes=classes, type="confidence",
                                   weights=df["w"]),
                   "log_loss": _by_hand("log_loss", P, df["y"], classes=classes)}


def test_evaluate_reads_the_probability_column_of_the_models_output():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = (X["a"] + rng.normal(size=300) > 0).map({True: "yes", False: "no"})
    model = LogisticRegression().fit(X, y)

    def predict(frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"label": model.predict(frame[["a", "b", "c"]]),
                             "prob": model.predict_proba(frame[["a", "b", "c"]])[:, 1]})

    got = _evaluate(X.assign(y=y), [make_metric("ece", "prob", classes=model.classes_)],
                    model=predict, targets="y", predictions="label")
    p = model.predict_proba(X)[:, 1]
    assert got == {"ece": _by_hand("ece", p, y.to_numpy(), classes=["no", "yes"])}


def test_a_column_name_that_is_no_identifier_is_reached_by_col_mapping():
    df = _binary().rename(columns={"p": "P(yes)"})
    got = _evaluate(df, [make_metric("ece", "prob")], targets="y", predictions="P(yes)",
                    evaluator_config={"col_mapping": {"prob": "P(yes)"}})
    assert got == {"ece": _by_hand("ece", df["P(yes)"], df["y"])}


def test_the_metric_says_which_way_is_better():
    assert make_metric("ece", "p").greater_is_better is False
    assert make_metric("auroc", "p").greater_is_better is True


def test_one_label_is_mlflows_probe_an_undefined_metric_there_is_none():
    # mlflow.models.evaluate first calls each metric on the first row alone (and with a
    # model's other output columns whole): a metric undefined there returns None
    auroc, brier = make_metric("auroc", "p").eval_fn, make_metric("brier", "p").eval_fn
    assert auroc(pd.Series([0.3]), pd.Series([1])) is None
    assert auroc(pd.Series([0.3, 0.6, 0.2]), pd.Series([1])) is None
    assert brier(pd.Series([0.3]), pd.Series([1])) == (1 - 0.3) ** 2
    with pytest.raises(InputError, match=r"`y` has one value only, so the AUROC is undefined"):
        auroc(pd.Series([0.3, 0.6]), pd.Series([1, 1]))  # more rows: calibr's error


@pytest.mark.parametrize(("args", "kwargs", "match", "param"), [
    (("eece", "p"), {}, r"`metric` must name a calibr metric \('ece', ", "metric"),
    (("ece", "P(yes)"), {}, r"`p` must name columns by Python identifiers other than "
                            r"predictions, targets, metrics .*got 'P\(yes\)'", "p"),
    (("ece", ["p_0", "targets"]), {}, r"got 'targets'", "p"),
    (("ece", "class"), {}, r"got 'class'", "p"),
    (("ece", []), {}, r"`p` must name the probability column", "p"),
    (("ece", "p"), {"weights": "w-1"}, r"`weights` must name columns", "weights"),
    (("ece", "p"), {"weights": "p"}, r"`p` and `weights` must name distinct columns", "p"),
    (("calibration_error", "p"), {"weights": "w"},
     r"The metric 'calibration_error' takes no weights", "weights"),
    (("ece", "p"), {"bin": 5}, r"The metric 'ece' has no option 'bin'", "bin"),
])
def test_make_metric_refuses_what_mlflow_could_not_use(args, kwargs, match, param):
    with pytest.raises(InputError, match=match) as err:
        make_metric(*args, **kwargs)
    assert err.value.param == param


# --- the page --------------------------------------------------------------------------


def test_docs_tools_python_blocks_run_and_print_what_the_page_shows(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_vignettes import run_python
    finally:
        sys.path.remove(str(ROOT / "tests"))
    namespace = run_python(ROOT / "docs" / "tools.md", tmp_path)
    assert namespace["logged"]["n/model_logistic"] == 569
