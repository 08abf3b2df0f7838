"""The metric registry (``calibr._registry``) and every path that reads it.

Each metric of the registry is checked on every path that takes a metric by name
against the direct call of its function: ``summarise`` per group (the grouped
kernels or one call per group) equals the function on that group's rows, bit for
bit; ``bootstrap(metric=name)`` (its O(n) path from sufficient statistics, or a
call per resample) equals the bootstrap of the function called on each resample;
consistency resampling's statistic is the function on the data; the command line's
``--metrics``; the Dask backend. The R-ported metrics per group equal the R
reference on that group's rows. Unknown names are refused everywhere. The
registry table of ``docs/definitions.md`` is the registry.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tolerances import ORACLE_ATOL, ORACLE_RTOL, R_ATOL, R_RTOL, SKCE_ATOL, SKCE_RTOL

import calibr
from calibr import _registry
from calibr._registry import METRICS

ROOT = Path(__file__).resolve().parents[1]
NAMES = list(METRICS)

#: The public callables that are not scalar metrics, each with what it returns
#: instead (the registry's module docstring says why they are not metrics).
NOT_METRICS = {
    "bootstrap": "an interval of a metric", "paired_bootstrap": "an interval of a difference",
    "calibration_table": "a per-bin table", "calibration_test": "a test",
    "decompose": "a Decomposition", "multicalibration": "a MulticalibrationResult",
    "val_prob": "a Series of statistics", "median_bandwidth": "a bandwidth",
    "smece_curve": "a curve", "reliability_diagram": "a figure", "metric": "a metric spec",
    "summarise": "a DataFrame", "test": "a test spec", "p_adjust": "adjusted p-values",
    "html_report": "an HTML page",
    "risk_coverage": "a curve, one row per threshold",
    "recalibrate": "recalibrated probabilities", "calibration_gain": "a CalibrationGain",
    "fixed_size_ce": "a number that depends on the order of tied rows (docs/conventions.md)",
}

#: Options of each metric other than its defaults, as a user would set them (a
#: metric not listed: its defaults only).
OPTIONS = {
    "ece": {"bins": 4, "type": "confidence"},
    "mce": {"bins": 3},
    "skce": {"estimator": "biased", "bandwidth": 0.3, "type": "classwise"},
    "mmce": {"bandwidth": 0.4},
    "calibration_error": {"bins": 5, "norm": "l1"},
    "smece": {"bandwidth": 0.1},
    "ecce": {"kind": "kuiper", "scale": "sigma"},
}


def _binary(n=120, seed=0):
    gen = np.random.default_rng(seed)
    p = np.round(gen.random(n), 3)
    y = (gen.random(n) < p ** 1.5).astype(np.int64)
    return pd.DataFrame({"g": np.repeat(["a", "b", "c"], n // 3), "p": p, "y": y})


def _multiclass(n=90, seed=1):
    gen = np.random.default_rng(seed)
    p = gen.dirichlet(np.ones(3), n)
    df = pd.DataFrame(p, columns=["p_0", "p_1", "p_2"])
    df["y"] = gen.integers(0, 3, n)
    df["g"] = np.tile(["a", "b"], n // 2)
    return df


# --------------------------------------------------------------------------
# the registry itself


def test_every_scalar_metric_of_the_package_is_registered():
    public = {n for n in calibr.__all__ if callable(getattr(calibr, n))
              and not isinstance(getattr(calibr, n), type)}
    assert public - set(NOT_METRICS) == set(METRICS)
    assert not set(NOT_METRICS) & set(METRICS)
    for name, info in METRICS.items():
        assert info.function is getattr(calibr, name)
        assert _registry.info_of(getattr(calibr, name)) is info
        assert _registry.info_of(name) is info


def test_options_and_weights_are_read_from_the_signature():
    for info in METRICS.values():
        params = inspect.signature(info.function).parameters
        assert info.options == tuple(n for n in params
                                     if n not in _registry.DATA_ARGS
                                     and params[n].kind is not params[n].VAR_KEYWORD)
        assert info.weights == ("weights" in params)
        assert set(info.consistency or ()) <= set(info.options)
        assert set(OPTIONS.get(info.name, {})) <= set(info.options)
    assert METRICS["ece"].options == ("bins", "type", "binning", "right")
    assert not METRICS["smece"].weights


def test_the_registry_is_read_only_and_entries_are_frozen():
    with pytest.raises(TypeError):
        METRICS["brier"] = METRICS["ece"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        METRICS["ece"].kind = "kernel"  # type: ignore[misc]


def test_an_entry_with_an_unknown_path_is_refused():
    with pytest.raises(ValueError, match="kind"):
        _registry.MetricInfo("x", "calibr", "histogram", "")
    with pytest.raises(ValueError, match="reduction"):
        _registry.MetricInfo("x", "calibr", "binned", "", stats=_registry.BIN_SUMS,
                             reduction="skce")
    with pytest.raises(ValueError, match="bootstrap"):
        _registry.MetricInfo("x", "calibr", "binned", "", bootstrap=_registry.BIN_SUMS)
    with pytest.raises(ValueError, match="dask"):
        _registry.MetricInfo("x", "calibr", "smooth", "", dask=_registry.MERGED_SUMS)
    with pytest.raises(ValueError, match="grouped"):
        _registry.MetricInfo("x", "calibr", "binned", "", grouped=_registry.BIN_SUMS)


def test_importing_the_registry_imports_no_numerics():
    import subprocess
    import sys
    code = ("import sys, calibr._registry as r; list(r.METRICS); "
            "print(sorted(m for m in ('numpy', 'pandas', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout == "[]\n"


# --------------------------------------------------------------------------
# summarise() and calibr.metric(): per group, the function on the group's rows


@pytest.mark.parametrize("name", NAMES)
def test_summarise_per_group_equals_the_function_on_the_groups_rows(name):
    fn = METRICS[name].function
    df = _binary()
    opts = OPTIONS.get(name, {})
    got = calibr.summarise(df.groupby("g"), "p", "y",
                           metrics={"plain": name, "opts": calibr.metric(name, **opts),
                                    "func": fn})
    for row, (_, g) in zip(got.itertuples(), df.groupby("g"), strict=True):
        assert row.plain == fn(g["p"], g["y"])
        assert row.func == fn(g["p"], g["y"])
        assert row.opts == fn(g["p"], g["y"], **OPTIONS.get(name, {}))


@pytest.mark.parametrize("name", NAMES)
def test_summarise_multiclass_per_group_equals_the_function(name):
    fn = METRICS[name].function
    df = _multiclass()
    cols = ["p_0", "p_1", "p_2"]
    opts = OPTIONS.get(name, {})
    got = calibr.summarise(df.groupby("g"), cols, "y", classes=range(3),
                           metrics={"plain": name, "opts": calibr.metric(name, **opts)})
    for row, (_, g) in zip(got.itertuples(), df.groupby("g"), strict=True):
        assert row.plain == fn(g[cols], g["y"], classes=range(3))
        assert row.opts == fn(g[cols], g["y"], classes=range(3), **OPTIONS.get(name, {}))


@pytest.mark.parametrize("name", [n for n in NAMES if METRICS[n].weights])
def test_weighted_summarise_equals_the_weighted_function(name):
    fn = METRICS[name].function
    df = _binary()
    df["w"] = np.arange(len(df)) % 3 + 0.5
    opts = {"bandwidth": 0.3, "estimator": "biased"} if name == "skce" else {}
    got = calibr.summarise(df.groupby("g"), "p", "y", metrics=calibr.metric(name, **opts),
                           weights="w")
    col = got.columns[-1]
    for value, (_, g) in zip(got[col], df.groupby("g"), strict=True):
        assert value == fn(g["p"], g["y"], weights=g["w"], **opts)


@pytest.mark.parametrize("name", [n for n in NAMES if not METRICS[n].weights])
def test_weights_are_refused_for_a_metric_without_them(name):
    with pytest.raises(calibr.InputError, match=rf"the metric {name!r} has no parameter "
                                                r"'weights'"):
        calibr.summarise(_binary().assign(w=1.0), "p", "y", metrics=name, weights="w")


def test_the_r_reference_per_group(rref):
    """The R-ported metrics per group equal R's function on the group's rows."""
    df = _binary(n=150, seed=7)
    r_calls = {
        "ece": lambda p, y: rref.ece(p, y, bins=10, type="classwise"),
        "mce": lambda p, y: rref.mce(p, y, bins=10, type="classwise"),
        "skce": lambda p, y: rref.skce(p, y, estimator="uq", bandwidth=0.2, type="canonical"),
        "mmce": lambda p, y: rref.mmce(p, y, bandwidth=0.2),
    }
    got = calibr.summarise(df.groupby("g"), "p", "y", metrics=list(r_calls))
    for row, (_, g) in zip(got.itertuples(), df.groupby("g"), strict=True):
        p, y = g["p"].to_numpy(), g["y"].to_numpy()
        for name, call in r_calls.items():
            rtol, atol = (SKCE_RTOL, SKCE_ATOL) if name in ("skce", "mmce") else (R_RTOL, R_ATOL)
            np.testing.assert_allclose(getattr(row, name), call(p, y), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------
# bootstrap(metric=name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "multiclass"])
def test_bootstrap_by_name_equals_the_function_on_each_resample(name, multiclass):
    """The registry's bootstrap path (O(n) per replicate from sufficient statistics,
    or a call per resample) gives the replicates of the function called on each
    resample (a lambda takes the generic path: the same draws)."""
    fn = METRICS[name].function
    if multiclass:
        df = _multiclass(n=40)
        p, y, kw = df[["p_0", "p_1", "p_2"]].to_numpy(), df["y"].to_numpy(), {
            "classes": range(3)}
    else:
        df = _binary(n=60)
        p, y, kw = df["p"].to_numpy(), df["y"].to_numpy(), {}
    opts = OPTIONS.get(name, {})
    res = calibr.bootstrap(p, y, name, n_resamples=25, rng=3, **kw, **opts)
    generic = calibr.bootstrap(p, y, lambda a, b, **o: fn(a, b, **o), n_resamples=25, rng=3,
                               **kw, **opts)
    assert res.estimate == fn(p, y, **kw, **opts)
    assert res.metric == name
    np.testing.assert_allclose(res.bootstrap_distribution, generic.bootstrap_distribution,
                               rtol=ORACLE_RTOL, atol=ORACLE_ATOL)


def test_the_bootstrap_paths_are_the_registrys():
    """ece/mce/skce/mmce/ecce take their O(n) kernels, the rest a call per resample."""
    from calibr._inference.bootstrap import _Plan
    from calibr._input import prepare

    df = _binary(n=30)
    prep = prepare(df["p"].to_numpy(), df["y"].to_numpy())
    kinds = {name: _Plan(name, info.function, {}, prep).kind for name, info in METRICS.items()}
    want = {"bin_sums": "binned", "pair_sums": "scalar", "sorted_sums": "cumulative",
            "recompute": "generic"}
    assert kinds == {name: want[info.bootstrap] for name, info in METRICS.items()}


# --------------------------------------------------------------------------
# calibration_test(method="consistency", metric=name)


@pytest.mark.parametrize("name", [n for n in NAMES if METRICS[n].consistency is not None])
def test_consistency_resampling_of_each_metric(name):
    fn = METRICS[name].function
    df = _multiclass(n=40)
    p, y = df[["p_0", "p_1", "p_2"]].to_numpy(), df["y"].to_numpy() + 1
    res = calibr.calibration_test(p, y, "consistency", metric=name, n_resamples=5, rng=0)
    assert res.statistic == fn(p, y)
    assert res.metric == name
    b = _binary(n=45)
    res = calibr.calibration_test(b["p"], b["y"], "consistency", metric=name, n_resamples=5,
                                  rng=0)
    assert res.statistic == fn(b["p"], b["y"])


# --------------------------------------------------------------------------
# unknown names, refused everywhere


def test_an_unknown_name_is_refused_everywhere():
    df = _binary(n=30)
    listed = ", ".join(repr(n) for n in METRICS)
    with pytest.raises(calibr.InputError, match=re.escape(f"calibr metrics ({listed})")):
        calibr.summarise(df, "p", "y", metrics="bogus")
    with pytest.raises(calibr.InputError, match=re.escape(f"calibr metrics ({listed})")):
        calibr.metric("bogus")
    quoted = ", ".join(f'"{n}"' for n in METRICS)
    with pytest.raises(calibr.InputError, match=re.escape(
            f"`metric` must be one of {quoted}, or a callable; got 'bogus'.")):
        calibr.bootstrap(df["p"], df["y"], "bogus")
    with pytest.raises(calibr.InputError, match=r"^`metric` must be one of 'ece'"):
        calibr.calibration_test(df["p"], df["y"], "consistency", metric="bogus")


# --------------------------------------------------------------------------
# the command line and the Dask backend


def test_the_command_line_takes_every_metric(tmp_path, capsys):
    import io

    from calibr.cli import main

    df = _binary()
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    spec = ",".join(f"{n}" for n in NAMES) + ",calibration_error(norm=l1),smece(bandwidth=0.1)"
    code = main(["report", str(path), "-g", "g", "-m", spec, "-f", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    want = calibr.summarise(df.groupby("g"), "p", "y", metrics=[
        *NAMES, calibr.metric("calibration_error", norm="l1"),
        calibr.metric("smece", bandwidth=0.1)])
    for name in NAMES:
        assert got[name].tolist() == want[name].tolist()
    assert got["calibration_error(norm=l1)"].tolist() == want[
        "calibration_error(norm='l1')"].tolist()
    assert got["smece(bandwidth=0.1)"].tolist() == want["smece(bandwidth=0.1)"].tolist()


def test_the_dask_backend_takes_every_metric():
    from conftest import require
    from tolerances import DASK_MERGED_RTOL

    dask = require("dask")
    dd = require("dask.dataframe")
    df = _binary(n=150)
    ddf = dd.from_pandas(df, npartitions=3)
    with dask.config.set(scheduler="synchronous"):
        for data, eager in ((ddf.groupby("g"), df.groupby("g")), (ddf, df)):
            got = calibr.summarise(data, "p", "y", metrics=NAMES).compute()
            want = calibr.summarise(eager, "p", "y", metrics=NAMES)
            for name in NAMES:  # merged per-bin sums to rounding, the rest bit for bit
                rtol = DASK_MERGED_RTOL if METRICS[name].dask == _registry.MERGED_SUMS else 0
                np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=0)


# --------------------------------------------------------------------------
# the docs


def _cell(value) -> str:
    if value in (None, ()):
        return "-"
    return ", ".join(value) if isinstance(value, tuple) else str(value)


def registry_table() -> list[str]:
    """The registry as the rows of the table of ``docs/definitions.md``."""
    rows = ["| metric | kind | options | weights | statistics | bootstrap | grouped | Dask "
            "| consistency |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for i in METRICS.values():
        stats = "-" if i.stats is None else f"{i.stats} ({i.reduction})"
        rows.append(f"| `{i.name}` | {i.kind} | {_cell(i.options)} | "
                    f"{'yes' if i.weights else 'no'} | {stats} | {i.bootstrap} | "
                    f"{_cell(i.grouped)} | {i.dask} | {_cell(i.consistency)} |")
    return rows


#: The words of each path in the backends' tables of the docs.
_LAZY_WORDS = {_registry.PUSHED_DOWN: "pushed down", _registry.COLLECTED: "collected"}
_DASK_WORDS = {  # (a direct call, a column of summarise)
    _registry.MERGED_SUMS: ("merged sums", "merged sums"),
    _registry.GLOBAL_SORT: ("global sort", "gathered, group by group"),
    _registry.GATHERED: ("not taken (use `summarise`)", "gathered, group by group"),
}


def engines_table() -> list[str]:
    """The registry's lazy-engine paths as the table of ``docs/engines.md``."""
    rows = ["| metric | a call on a lazy source | a column of `summarise` on a lazy source |",
            "| --- | --- | --- |"]
    rows += [f"| `{i.name}` | {_LAZY_WORDS[i.lazy_call]} | {_LAZY_WORDS[i.lazy_column]} |"
             for i in METRICS.values()]
    return rows


def dask_table() -> list[str]:
    """The registry's Dask paths as the table of ``docs/dask.md``."""
    rows = ["| metric | a call on Dask | a column of `summarise` on Dask |", "| --- | --- | --- |"]
    rows += [f"| `{i.name}` | {_DASK_WORDS[i.dask][0]} | {_DASK_WORDS[i.dask][1]} |"
             for i in METRICS.values()]
    return rows


def _docs_table(page: str, marker: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    start = text.index(f"<!-- the {marker}: tests/test_registry.py -->\n")
    end = text.index(f"<!-- end of the {marker} -->")
    return text[start:end].splitlines()[1:]


@pytest.mark.parametrize(("page", "marker", "table"), [
    ("engines.md", "engines' table", engines_table),
    ("dask.md", "Dask table", dask_table),
])
def test_the_backends_tables_of_the_docs_are_the_registry(page, marker, table):
    assert _docs_table(page, marker) == table()


def test_the_docs_table_is_the_registry():
    text = (ROOT / "docs" / "definitions.md").read_text(encoding="utf-8")
    start = text.index("<!-- the registry table: tests/test_registry.py -->\n")
    end = text.index("<!-- end of the registry table -->")
    got = text[start:end].splitlines()[1:]
    assert got == registry_table()
