"""The pytest plugin of calibr: the fixture ``calibration_regression``, a
calibration snapshot test (``docs/regression_gate.md`` has every definition and
decision).

Registered through the ``pytest11`` entry point ``calibr``, so that any project
with calibr installed can ask for the fixture::

    def test_model_calibration(calibration_regression):
        calibration_regression.check(predictions, p="p", y="y", by="model",
                                     metrics=["ece", "mce"], tolerance=1e-6)

It is built on pytest-regressions (``perform_regression_check``, its
``--force-regen`` and ``--regen-all`` options, and pytest-datadir's data folder
beside the test): the first run writes a tidy CSV snapshot and fails saying so;
later runs compare every metric of every group against it.

This module imports only the standard library and pytest: pytest loads it at
start-up in every project where calibr is installed, so numpy, pandas, numba
and pytest-regressions are imported inside the fixture, when a test uses it.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._input import InputError, InputTypeError, renamed  # the standard library only

if TYPE_CHECKING:  # imported when a test uses the fixture
    import pandas as pd

__all__ = ["CalibrationRegressionFixture", "calibration_regression"]

#: The modes of :meth:`CalibrationRegressionFixture.check`.
MODES = ("absolute", "statistical")
#: The absolute mode's default tolerance: differences of rounding only (the
#: snapshot holds 17 significant digits, which read back exactly).
DEFAULT_TOLERANCE = 1e-10
#: The statistical mode's defaults.
DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 999
DEFAULT_SEED = 0
#: The bootstrap interval of the statistical mode (calibr.bootstrap's default).
METHOD = "percentile"
#: The columns of a snapshot after the group keys.
VALUE_COLUMNS = ("metric", "n", "value")
INTERVAL_COLUMNS = ("low", "high", "level", "method", "n_resamples", "seed")
#: How the failure tables show numbers.
SHOWN = "{:.6g}"


# --------------------------------------------------------------------------
# the snapshot: a tidy table, one row per group and metric


def _atomic_write(text: str, path: Path) -> None:
    """Write ``text`` to ``path`` through a temporary file in its folder, renamed
    over it at the end: an interrupted run never leaves half a snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _read(path: Path, keys: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of a snapshot: every cell as text, the numbers as Python floats
    (exact: the file holds round-trip text), so that both files of a comparison
    are read alike."""
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in (*keys, *VALUE_COLUMNS) if c not in frame.columns]
    if missing:
        raise AssertionError(
            f"The snapshot {path} has no column {missing[0]!r}; its columns are "
            f"{', '.join(map(repr, frame.columns))}.\n"
            "To update the snapshot, use --force-regen option."
        )
    rows = frame.to_dict("records")
    for row in rows:
        for col in ("value", "n", "low", "high", "level"):
            if col in row:
                row[col] = float(row[col]) if row[col] != "" else math.nan
    return rows


def _key_text(row: dict[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(f"{k}={row[k]}" for k in keys) if keys else "(all rows)"


class CalibrationRegressionFixture:
    """The ``calibration_regression`` fixture: calibration metrics per group,
    checked against a snapshot (a CSV file beside the test).

    Made by the fixture of the same name; see :meth:`check`.
    """

    def __init__(self, datadir: Path, original_datadir: Path,
                 request: pytest.FixtureRequest) -> None:
        self.datadir = datadir
        self.original_datadir = original_datadir
        self.request = request

    # ------------------------------------------------------------------
    @renamed(level="confidence_level")
    def check(
        self,
        data: pd.DataFrame,
        p: Hashable | Sequence[Hashable],
        y: Hashable,
        metrics: Any = None,
        *,
        by: Hashable | Sequence[Hashable] | None = None,
        classes: Sequence | None = None,
        mode: str = "absolute",
        tolerance: float | None = None,
        confidence_level: float | None = None,
        n_resamples: int | None = None,
        rng: int | None = None,
        min_n: int | None = None,
        basename: str | None = None,
        fullpath: os.PathLike[str] | str | None = None,
    ) -> None:
        """Check the calibration of predictions against the test's snapshot.

        The first run writes the snapshot (a tidy CSV file: one row per group
        and metric) into the test's data folder and fails, saying that it
        created the file, as pytest-regressions does. Later runs compute the
        same table and compare it with the snapshot; ``--force-regen``
        rewrites a snapshot that differs (the test still fails once), and
        ``--regen-all`` rewrites every snapshot (the tests pass).

        Parameters
        ----------
        data : DataFrame
            The predictions, one row per observation.
        p : str or list of str
            The probability column (binary: P(y = 1)), or one column per class.
        y : str
            The label column.
        metrics : str, callable, Metric, list or dict, default ("ece", "mce")
            As in :func:`calibr.summarise`: names (``"ece"``), callables or
            ``calibr.metric("mce", bins=2)`` specs; a list names each after its
            metric (``"mce(bins=2)"``), a dict gives the names.
        by : str or list of str, optional, keyword-only
            Grouping columns; every group is checked (rows with a missing key
            form their own group).
        classes : sequence, optional, keyword-only
            The label of each probability column (as for the metrics).
        mode : {"absolute", "statistical"}, default "absolute", keyword-only
            ``"absolute"``: every value must equal the snapshot's within
            ``tolerance`` (either way: a snapshot test). ``"statistical"``: a
            value fails only when it is worse (larger) than the upper end of
            the snapshot's bootstrap interval (a gate).
        tolerance : float, default 1e-10, keyword-only
            Absolute mode only: the largest absolute difference
            ``|new - snapshot|`` that passes.
        confidence_level : float, default 0.95, keyword-only
            Statistical mode only: the confidence level of the snapshot's
            two-sided percentile bootstrap interval (``level``, its old name,
            still works and warns).
        n_resamples : int, default 999, keyword-only
            Statistical mode only: the bootstrap replicates.
        rng : int, default 0, keyword-only
            Statistical mode only: the seed of the bootstrap (stored in the
            snapshot, so it must be an integer).
        min_n : int, default 100, keyword-only
            Statistical mode only: the least rows of a group that can fail the
            check (``calibr._defaults.GATE_MIN_N``, as ``calibr compare
            --min-n``); a smaller group, here or in the snapshot, is listed in
            a ``UserWarning`` and never fails; 0 checks every group.
        basename, fullpath : optional, keyword-only
            The snapshot's file name (without ``.csv``) in the data folder, or
            its full path, as in pytest-regressions (default: the test's name).

        Raises
        ------
        ValueError
            (``calibr.InputError``) for a bad argument, named in the message,
            before anything is computed or written; and the metrics' own input
            errors (ending with the group, e.g. ``[group model='a']``).
        TypeError
            (``calibr.InputTypeError``) for arguments of the wrong type.
        AssertionError
            (the test fails) when the snapshot is created or regenerated, or
            when a value is outside what the mode accepts: the message has a
            table of each failing group and metric (snapshot, obtained,
            difference, and the interval or tolerance).

        Notes
        -----
        The values are those of :func:`calibr.summarise` on
        ``data.groupby(by, sort=True, dropna=False)``. In the statistical mode
        the snapshot also stores, per group and metric, the percentile
        interval of ``calibr.bootstrap(p_g, y_g, metric, n_resamples=...,
        confidence_level=confidence_level, rng=seed)`` on the group's rows (the same seed
        for every group and metric, so one call reproduces a row), with the
        level, method, resamples and seed. The check fails when

            new value > high (the snapshot's upper end),

        a new value equal to it passes, and a smaller value always passes. A
        snapshot made with another level, number of resamples or seed than the
        check asks for fails (regenerate it with ``--force-regen``). A group of fewer
        than ``min_n`` rows, in the new data or in the snapshot, is never failed:
        its values are listed in a ``UserWarning`` instead
        (``docs/regression_gate.md``, "Small groups").
        ``docs/regression_gate.md`` gives the false-alarm and detection rates.

        Examples
        --------
        In a test module (the fixture comes with calibr)::

            def test_calibration(calibration_regression, predictions):
                calibration_regression.check(predictions, p="p", y="y",
                                             by="model", tolerance=1e-6)

            def test_calibration_gate(calibration_regression, predictions):
                calibration_regression.check(predictions, p="p", y="y",
                                             metrics="ece", mode="statistical",
                                             confidence_level=0.95, n_resamples=999,
                                             rng=0)
        """
        __tracebackhide__ = True
        import pandas as pd

        settings = self._settings(mode, tolerance, confidence_level, n_resamples, rng, min_n)
        if not isinstance(data, pd.DataFrame):
            raise InputTypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.",
                                 param="data")
        keys = self._keys(data, by)
        if basename is not None and fullpath is not None:
            raise InputError("Give the snapshot by `basename` or by `fullpath`, not both.",
                             param="basename")
        if basename is not None and (not isinstance(basename, str) or not basename):
            raise InputError(f"`basename` must be a non-empty string; got {basename!r}.",
                             param="basename")
        table = self._table(data, p, y, metrics, keys, classes, settings)
        # numbers as the shortest text that reads back as the same double (0.95, not
        # 0.94999999999999996): exact, and readable in a diff of the snapshot
        text = table.to_csv(index=False, lineterminator="\n")

        from pytest_regressions.common import perform_regression_check

        source = self._source(basename, fullpath)

        def dump(path: Path) -> None:
            _atomic_write(text, Path(path))

        def check(obtained: Path, expected: Path) -> None:
            __tracebackhide__ = True
            self._compare(obtained, expected, source, [str(k) for k in keys], settings)

        perform_regression_check(
            datadir=self.datadir, original_datadir=self.original_datadir,
            request=self.request, check_fn=check, dump_fn=dump, extension=".csv",
            basename=basename, fullpath=fullpath,
        )

    def _source(self, basename: str | None, fullpath: Any) -> Path:
        """The snapshot's own path (for messages), as pytest-regressions resolves it."""
        try:
            from pytest_regressions.common import resolve_check_paths
        except ImportError:  # pytest-regressions before 2.6: its rule, without class names
            import re

            if fullpath is not None:
                return Path(fullpath)
            name = basename or re.sub(r"[\W]", "_", self.request.node.name)
            return Path(self.original_datadir) / (name + ".csv")
        return resolve_check_paths(self.datadir, self.original_datadir, self.request, ".csv",
                                   basename, fullpath).source

    # ------------------------------------------------------------------
    # arguments

    @staticmethod
    def _settings(mode: Any, tolerance: Any, level: Any, n_resamples: Any,
                  rng: Any, min_n: Any = None) -> dict[str, Any]:
        from ._input import LEVEL, Integer, fmt, real_value

        if not isinstance(mode, str) or mode not in MODES:
            raise InputError(
                f'`mode` must be "absolute" or "statistical"; got {fmt(mode)}.', param="mode")
        if mode == "absolute":
            for name, value in (("confidence_level", level), ("n_resamples", n_resamples),
                                ("rng", rng), ("min_n", min_n)):
                if value is not None:
                    raise InputError(
                        f'`{name}` applies to mode="statistical"; the absolute mode compares '
                        "with `tolerance`.", param=name)
            if tolerance is None:
                tolerance = DEFAULT_TOLERANCE
            real = None if isinstance(tolerance, bool) else real_value(tolerance)
            if real is None or not math.isfinite(real) or real < 0:
                raise InputError(
                    f"`tolerance` must be a finite number >= 0; got {fmt(tolerance)}.",
                    param="tolerance")
            return {"mode": mode, "tolerance": real}
        if tolerance is not None:
            raise InputError(
                '`tolerance` applies to mode="absolute"; the statistical mode compares with '
                "the snapshot's bootstrap interval (`confidence_level`).", param="tolerance")
        level = LEVEL(DEFAULT_LEVEL if level is None else level, "confidence_level")
        from ._input import MAX_RESAMPLES

        n_resamples = Integer(1, MAX_RESAMPLES)(
            DEFAULT_RESAMPLES if n_resamples is None else n_resamples, "n_resamples")
        seed = DEFAULT_SEED if rng is None else rng
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InputTypeError(
                "`rng` must be an integer seed >= 0 (the snapshot stores it); got "
                f"{type(seed).__name__}.", param="rng")
        if seed < 0:
            raise InputError(f"`rng` must be an integer seed >= 0; got {seed}.", param="rng")
        from ._defaults import GATE_MIN_N

        min_n = Integer(0, what="a nonnegative integer")(
            GATE_MIN_N if min_n is None else min_n, "min_n")
        return {"mode": mode, "level": level, "n_resamples": n_resamples, "seed": int(seed),
                "min_n": int(min_n)}

    @staticmethod
    def _keys(data: pd.DataFrame, by: Any) -> list[Hashable]:
        if by is None:
            return []
        keys = [by] if isinstance(by, str) or not isinstance(by, Sequence) else list(by)
        for key in keys:
            if not isinstance(key, Hashable) or key not in data.columns:
                raise InputError(f"`by` must name columns of `data`; {key!r} is not one.",
                                 param="by")
            if str(key) in (*VALUE_COLUMNS, *INTERVAL_COLUMNS):
                raise InputError(
                    f"`by`: the column {key!r} has the name of a column of the snapshot; "
                    "rename it in the data.", param="by")
        if len({str(k) for k in keys}) != len(keys):
            raise InputError(f"`by` must name each column once; got {keys!r}.", param="by")
        return keys

    # ------------------------------------------------------------------
    # the table: values (and intervals) per group and metric

    def _table(self, data: pd.DataFrame, p: Any, y: Any, metrics: Any, keys: list,
               classes: Any, settings: dict[str, Any]) -> pd.DataFrame:
        import pandas as pd

        from ._registry import higher_is_better
        from .frame import metric_columns, summarise

        columns = metric_columns(metrics, {})
        names = [name for name, _, _ in columns]
        # the columns where larger is better (auroc): worse is below the interval
        settings["higher"] = {name for name, _, func in columns if higher_is_better(func)}
        specs = {name: spec for name, spec, _ in columns}
        grouped = data.groupby(keys, sort=True, dropna=False, observed=True) if keys else None
        values = summarise(data if grouped is None else grouped, p, y, metrics=specs,
                           classes=classes)
        sizes = [len(data)] if grouped is None else grouped.size().to_numpy().tolist()
        frames = [data] if grouped is None else [g for _, g in grouped]
        rows = []
        for g, frame in enumerate(frames):
            head = {str(k): values[k].iloc[g] for k in keys}
            for name in names:
                row = {**head, "metric": name, "n": sizes[g], "value": values[name].iloc[g]}
                if settings["mode"] == "statistical":
                    row.update(self._interval(frame, p, y, specs[name], classes, settings,
                                              _key_text(head, [str(k) for k in keys]), name))
                rows.append(row)
        cols = [str(k) for k in keys] + list(VALUE_COLUMNS)
        if settings["mode"] == "statistical":
            cols += list(INTERVAL_COLUMNS)
        return pd.DataFrame(rows, columns=cols)

    @staticmethod
    def _interval(frame: pd.DataFrame, p: Any, y: Any, spec: Any, classes: Any,
                  settings: dict[str, Any], where: str, name: str) -> dict[str, Any]:
        from ._inference.bootstrap import bootstrap
        from ._input import extended

        cols = list(p) if isinstance(p, (list, tuple)) else p
        try:
            res = bootstrap(frame[cols], frame[y], spec.func, n_resamples=settings["n_resamples"],
                            confidence_level=settings["level"], method=METHOD,
                            rng=settings["seed"], classes=classes, **spec.options)
        except (InputError, InputTypeError) as err:
            raise extended(err, f" [metric {name!r}; group {where}]") from None

        return {"low": res.confidence_interval.low, "high": res.confidence_interval.high,
                "level": settings["level"], "method": METHOD,
                "n_resamples": settings["n_resamples"], "seed": settings["seed"]}

    # ------------------------------------------------------------------
    # the comparison

    def _compare(self, obtained: Path, expected: Path, source: Path, keys: list[str],
                 settings: dict[str, Any]) -> None:
        __tracebackhide__ = True
        new = _read(obtained, keys)
        old = _read(expected, keys)

        def ident(row: dict[str, Any]) -> tuple:
            return (*(row[k] for k in keys), row["metric"])

        old_by = {ident(r): r for r in old}
        new_by = {ident(r): r for r in new}
        regen = "To update the snapshot, use --force-regen option."
        gone = [r for r in old if ident(r) not in new_by]
        added = [r for r in new if ident(r) not in old_by]
        if gone or added:
            lines = ["The groups or metrics differ from the snapshot.", regen, "",
                     f"snapshot: {source}"]
            lines += [f"- only in the snapshot: {_key_text(r, keys)}, metric {r['metric']}"
                      for r in gone]
            lines += [f"- only in the new data: {_key_text(r, keys)}, metric {r['metric']}"
                      for r in added]
            raise AssertionError("\n".join(lines))
        if settings["mode"] == "statistical":
            self._check_settings(old, source, settings, regen)
        failing, small = [], []
        for row in new:
            ref = old_by[ident(row)]
            now, then = row["value"], ref["value"]
            if math.isnan(now) and math.isnan(then):
                continue
            if settings["mode"] == "statistical" and min(row["n"], ref["n"]) < settings["min_n"]:
                small.append(row)  # reported, never gates (docs/regression_gate.md)
                continue
            if settings["mode"] == "absolute":
                bad = not abs(now - then) <= settings["tolerance"]
            else:
                # NaN fails: it cannot be shown not to be worse
                bad = (not now >= ref["low"] if row["metric"] in settings.get("higher", ())
                       else not now <= ref["high"])
            if bad:
                failing.append((row, ref))
        if small:
            import warnings

            shown = "; ".join(f"{_key_text(r, keys)}, metric {r['metric']} (n = {r['n']:g})"
                              for r in small)
            warnings.warn(
                f"calibration_regression: {len(small)} value(s) of groups under min_n = "
                f"{settings['min_n']} rows (here or in the snapshot) are not checked: a "
                f"bootstrap of so few rows says nothing about the population: {shown}.",
                UserWarning, stacklevel=2)
        if not failing:
            return
        raise AssertionError(self._message(failing, keys, settings, source, regen))

    def _check_settings(self, old: list[dict[str, Any]], source: Path,
                        settings: dict[str, Any], regen: str) -> None:
        __tracebackhide__ = True
        if old and not all(c in old[0] for c in INTERVAL_COLUMNS):
            raise AssertionError(
                f"The snapshot {source} has no bootstrap intervals (it was "
                'made by mode="absolute"); mode="statistical" needs them.\n' + regen)
        for row in old:
            stored = (row["level"], int(row["n_resamples"]), int(row["seed"]), row["method"])
            asked = (settings["level"], settings["n_resamples"], settings["seed"], METHOD)
            if stored != asked:
                raise AssertionError(
                    f"The snapshot {source} was made with confidence_level={stored[0]}, "
                    f"n_resamples={stored[1]}, rng={stored[2]}, method={stored[3]!r}; the "
                    f"check asks for confidence_level={asked[0]}, n_resamples={asked[1]}, "
                    f"rng={asked[2]}, method={asked[3]!r}.\n" + regen)

    def _message(self, failing: list, keys: list[str], settings: dict[str, Any],
                 source: Path, regen: str) -> str:
        import pandas as pd

        def shown(v: float) -> str:
            return SHOWN.format(v)

        rows = []
        for row, ref in failing:
            out = {k: row[k] for k in keys}
            out.update(metric=row["metric"], snapshot=shown(ref["value"]),
                       obtained=shown(row["value"]), diff=shown(row["value"] - ref["value"]))
            if settings["mode"] == "statistical":
                out.update(low=shown(ref["low"]), high=shown(ref["high"]))
            else:
                out.update(tolerance=shown(settings["tolerance"]))
            rows.append(out)
        table = pd.DataFrame(rows).to_string(index=False)
        if settings["mode"] == "statistical":
            pct = f"{100 * settings['level']:g}%"
            higher = sorted(settings.get("higher", ()))
            head = (f"Calibration is worse than the snapshot: {len(failing)} value(s) above "
                    f"the upper end (high) of the snapshot's {pct} bootstrap interval "
                    f"[low, high] (mode=\"statistical\"; diff = obtained - snapshot; "
                    "lower is better" + (
                        f"; {', '.join(higher)}: below its lower end (low), higher is better"
                        if higher else "") + ").")
        else:
            head = (f"Calibration differs from the snapshot: {len(failing)} value(s) "
                    f"further than the tolerance from it (mode=\"absolute\"; diff = obtained - "
                    "snapshot; lower is better).")
        return "\n".join([head, regen, "", f"snapshot: {source}", "", table])


@pytest.fixture
def calibration_regression(request: pytest.FixtureRequest) -> CalibrationRegressionFixture:
    """Calibration metrics per group, checked against a snapshot beside the test.

    ``calibration_regression.check(df, p="p", y="y", by="model")`` writes the
    snapshot on the first run (and fails saying so) and compares with it on
    later runs: within ``tolerance`` (``mode="absolute"``), or failing only
    when a value is worse than the snapshot's bootstrap interval
    (``mode="statistical"``). ``--force-regen`` rewrites a snapshot that
    differs. Needs pytest-regressions (``pip install pytest-regressions``).

    Parameters
    ----------
    request : pytest.FixtureRequest
        The requesting test (pytest passes it); the data folders are
        pytest-datadir's ``lazy_datadir`` and ``original_datadir``.

    Returns
    -------
    CalibrationRegressionFixture
        Call its :meth:`~CalibrationRegressionFixture.check`.
    """
    if not _available("pytest_regressions") or not _available("pytest_datadir"):
        pytest.fail("The fixture calibration_regression needs pytest-regressions: "
                    "pip install pytest-regressions", pytrace=False)
    return CalibrationRegressionFixture(request.getfixturevalue("lazy_datadir"),
                                        request.getfixturevalue("original_datadir"), request)


def _available(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(module) is not None
