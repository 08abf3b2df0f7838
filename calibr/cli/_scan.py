"""The command line's files through polars or DuckDB (``docs/engines.md``,
"The command line"): Parquet files, directories and globs, and DuckDB tables
(``duckdb:PATH.db::TABLE``), scanned lazily and collected into one pandas frame
of the columns the report reads, in the files' order (sorted names, each file's
rows in order), so that the report is that of one CSV holding the same rows.

The scan is lazy: ``polars.scan_parquet`` / DuckDB's ``read_parquet`` read only
the columns asked for (when every one of them exists; otherwise all, so that
the report's message about a missing column lists the file's columns as for a
CSV). An engine's failure (a file that is not Parquet, a missing table, a
schema that differs between files) is one line, a ``CLIError`` (exit 2), raised
before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import CLIError

__all__ = ["DUCKDB_PREFIX", "ENGINES", "EngineRead", "duckdb_path", "engine_module",
           "is_duckdb_table", "read"]

#: The engines of ``--engine`` that read files here (``dask`` is calibr/cli/_engine.py).
ENGINES = ("polars", "duckdb")

#: A FILE naming a table of a DuckDB database: ``duckdb:PATH::TABLE``.
DUCKDB_PREFIX = "duckdb:"

_INSTALL = {"polars": "pip install 'polars==2.1.0'", "duckdb": "pip install 'duckdb==2.0.0'"}


@dataclass
class EngineRead:
    """Where a source was read (the report's ``engine:`` line)."""

    engine: str
    what: str  # "3 Parquet files", "the table t of preds.db"
    columns: int  # how many columns were read

    def header(self) -> str:
        return (f"engine: {self.engine}, {self.what} scanned lazily ({self.columns} "
                f"column{'s' if self.columns != 1 else ''} read), collected into this process")


def is_duckdb_table(file: str | None) -> bool:
    return isinstance(file, str) and file.startswith(DUCKDB_PREFIX)


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    text = text if len(text) <= 300 else text[:297] + "..."
    return text.rstrip(".")


def engine_module(engine: str) -> Any:
    """The module of ``engine`` (polars or duckdb), or a CLIError saying how to
    install it."""
    try:
        return __import__(engine)
    except ImportError as err:
        raise CLIError(f"--engine {engine} needs {engine} ({_one_line(err)}); install it "
                       f"with `{_INSTALL[engine]}`.") from None


def _wanted(schema: Sequence[str], columns: Sequence[str] | None,
            prefix: str | None) -> list[str]:
    """The columns to read: those asked for and those starting with ``prefix``, in
    the file's order; all when one asked for is missing (or nothing is asked)."""
    names = list(schema)
    if columns is None:
        return names
    if any(c not in names for c in columns):
        return names
    keep = set(columns)
    return [c for c in names if c in keep or (prefix is not None and c.startswith(prefix))]


def _split(file: str) -> tuple[str, str] | None:
    """``(PATH, TABLE)`` of ``duckdb:PATH::TABLE``, or None if FILE is not so."""
    path, sep, table = file[len(DUCKDB_PREFIX):].rpartition("::")
    return (path, table) if sep and path and table else None


def duckdb_path(file: str) -> str | None:
    """The database file of the DuckDB table FILE (``duckdb:PATH::TABLE``), or None
    if FILE is not written so."""
    split = _split(file)
    return None if split is None else split[0]


def _duckdb_table(file: str) -> tuple[str, str]:
    split = _split(file)
    if split is None:
        raise CLIError(f"{file}: a DuckDB table is given as duckdb:PATH::TABLE, e.g. "
                       "duckdb:predictions.db::scores.")
    path, table = split
    if not os.path.isfile(path):
        raise CLIError(f"{file}: no such file {path!r}.")
    return path, table


def read(file: str, names: list[str] | None, engine: str, columns: Sequence[str] | None,
         prefix: str | None) -> tuple[Any, EngineRead]:
    """The pandas frame of the Parquet files ``names`` (of FILE: one file, a
    directory or a glob) or of the DuckDB table FILE, read by ``engine``; the
    columns ``columns`` (and those starting with ``prefix``) only, when they all
    exist."""
    if is_duckdb_table(file):
        return _read_table(file, columns, prefix)
    what = f"{len(names)} Parquet file{'s' if len(names) != 1 else ''}"
    if engine == "polars":
        pl = engine_module("polars")
        try:
            lf = pl.scan_parquet(names)
            cols = _wanted(lf.collect_schema().names(), columns, prefix)
            frame = lf.select(cols).collect(engine="streaming").to_pandas()
        except (pl.exceptions.PolarsError, OSError, ValueError) as err:
            raise CLIError(f"{file}: polars cannot read it: {_one_line(err)}.") from None
        return frame, EngineRead("polars", what, len(cols))
    duckdb = engine_module("duckdb")
    try:
        con = duckdb.connect()
        try:
            rel = con.read_parquet(names)
            cols = _wanted(rel.columns, columns, prefix)
            frame = rel.select(*[duckdb.ColumnExpression(c) for c in cols]).df()
        finally:
            con.close()
    except (duckdb.Error, OSError, ValueError) as err:
        raise CLIError(f"{file}: DuckDB cannot read it: {_one_line(err)}.") from None
    return frame, EngineRead("duckdb", what, len(cols))


def _read_table(file: str, columns: Sequence[str] | None,
                prefix: str | None) -> tuple[Any, EngineRead]:
    path, table = _duckdb_table(file)
    duckdb = engine_module("duckdb")
    try:
        con = duckdb.connect(path, read_only=True)
        try:
            rel = con.table(table)
            cols = _wanted(rel.columns, columns, prefix)
            frame = rel.select(*[duckdb.ColumnExpression(c) for c in cols]).df()
        finally:
            con.close()
    except (duckdb.Error, OSError, ValueError) as err:
        raise CLIError(f"{file}: DuckDB cannot read it: {_one_line(err)}.") from None
    return frame, EngineRead("duckdb", f"the table {table} of {os.path.basename(path)}",
                             len(cols))
