"""Files: reading the input (CSV, compressed CSV, TSV, Parquet, stdin, the
bundled data, a directory or glob of files through Dask, polars or DuckDB, a
DuckDB table: ``calibr/cli/_scan.py``), the format of the
output (from the extension of --output), refusing an output that is any file of an input,
and writing every output or none (temporary files renamed over the targets at
the end)."""

from __future__ import annotations

import contextlib
import io
import lzma
import os
import re
import secrets
import shutil
import stat
import sys
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._args import _sep
from ._errors import EXIT_BROKEN_PIPE, CLIError, _detail

if TYPE_CHECKING:  # pandas is imported by the readers (see _args: the parser is cheap)
    import pandas as pd

    from ._engine import Engine
    from ._scan import EngineRead


@dataclass
class _Source:
    """One input: the data, where it came from and its column arguments."""

    tag: str | None  # the value of the `dataset` column (bundled data), else None
    label: str  # for messages and the report's header
    frame: pd.DataFrame
    colargs: dict[str, Any]
    # a directory or glob: where Dask computes its report, or where polars / DuckDB read it
    engine: Engine | EngineRead | None = None


def _many(file: str) -> bool:
    """Whether FILE is a directory or a glob: many files, read with Dask (docs/dask.md)."""
    return file != "-" and (any(c in file for c in "*?[") or Path(file).is_dir())


def _list_files(file: str) -> tuple[list[str], str]:
    """The files of a directory or a glob (sorted; hidden files and those starting
    with ``_``, such as ``_SUCCESS`` and ``_metadata``, left out) and their kind,
    ``"parquet"`` or ``"csv"``. Every reader of them (Dask, polars, DuckDB) then
    checks that they agree (:func:`_check_same_columns`)."""
    import glob

    if os.path.isdir(file):
        names = sorted(os.path.join(file, f) for f in os.listdir(file)
                       if not f.startswith((".", "_")) and os.path.isfile(os.path.join(file, f)))
    else:
        names = sorted(glob.glob(file))
    if not names:
        where = "in the directory" if os.path.isdir(file) else "match"
        raise CLIError(f"{file}: no files {where}.")
    lower = [n.lower() for n in names]
    parquet = [n for n, low in zip(names, lower, strict=True) if low.endswith((".parquet", ".pq"))]
    csv = [n for n, low in zip(names, lower, strict=True)
           if low.endswith((".csv", ".tsv", ".txt", ".csv.gz", ".csv.bz2", ".csv.xz"))]
    if parquet and csv:
        raise CLIError(f"{file}: holds both Parquet and CSV files; give a glob that selects one "
                       "kind, e.g. 'DIR/*.parquet'.")
    if not parquet and not csv:
        raise CLIError(f"{file}: cannot tell the format of its files from their extensions "
                       f"(e.g. {os.path.basename(names[0])!r}); use .csv or .parquet.")
    return (parquet, "parquet") if parquet else (csv, "csv")


def _check_same_columns(file: str, names: list[str], kind: str, sep: str | None) -> None:
    """A CLIError unless the files ``names`` of the directory or glob FILE have the
    same columns and (Parquet) each column one kind of type in every file: every
    engine (Dask, polars, DuckDB) then reads them alike (``docs/cli.md``, "Datasets
    of many files"). CSV: from each file's header; Parquet: from its schema."""
    first: dict[str, tuple[str | None, str]] = {}  # column -> (kind of type, its file)
    columns: list[str] | None = None
    for name in names:
        schema = _schema(name, kind, sep)
        if columns is None:
            columns = list(schema)
        elif set(schema) != set(columns):
            raise CLIError(f"{file}: the files do not have the same columns: {names[0]} has "
                           f"{_quoted(columns)}, {name} has {_quoted(list(schema))}; every file "
                           "of a directory or glob must have the same columns.")
        for column, type_ in schema.items():
            seen, where = first.get(column, (None, name))
            if seen is None:
                first[column] = (type_, name)
            elif type_ is not None and type_ != seen:
                raise CLIError(f"{file}: the column {column!r} holds {seen} in {where} but "
                               f"{type_} in {name}; every file of a directory or glob must "
                               "store a column with one type.")


def _quoted(columns: list[str]) -> str:
    return ", ".join(repr(c) for c in columns)


def _schema(name: str, kind: str, sep: str | None) -> dict[str, str | None]:
    """The columns of the file ``name`` and the kind of each one's type (Parquet;
    None for a CSV file, whose types are known once it is read, and for a column
    of nulls only, which takes any type)."""
    import pandas as pd

    if kind == "csv":
        try:
            header = pd.read_csv(name, sep=sep or ("\t" if name.lower().endswith(".tsv")
                                                  else ","), nrows=0, encoding="utf-8")
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, lzma.LZMAError) as err:
            raise CLIError(f"{name}: cannot read it as CSV: {_detail(err)}.") from None
        return dict.fromkeys(header.columns)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CLIError("reading Parquet needs pyarrow; install it with `pip install pyarrow`."
                       ) from None
    try:
        schema = pq.read_schema(name)
    except (OSError, ValueError, *_pyarrow_errors()) as err:
        raise CLIError(f"{name}: cannot read it as Parquet: {_detail(err)}.") from None
    return {field.name: _type_kind(field.type) for field in schema}


def _type_kind(type_: Any) -> str | None:
    """The kind of an Arrow type, in words: a width or an encoding is not a kind
    (int32 and int64 are integers, string and large_string text)."""
    import pyarrow as pa

    if pa.types.is_dictionary(type_):
        type_ = type_.value_type
    for test, words in ((pa.types.is_null, None), (pa.types.is_boolean, "booleans"),
                        (pa.types.is_integer, "integers"),
                        (pa.types.is_floating, "floating-point numbers"),
                        (pa.types.is_decimal, "decimal numbers"),
                        (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "text")):
        if test(type_):
            return words
    return f"values of type {type_}"


def _read_many(file: str, names: list[str], kind: str, sep: str | None) -> Any:
    """The files ``names`` of the directory or glob FILE (:func:`_list_files` lists
    them), all Parquet or all CSV (``kind``), as one Dask DataFrame: the verbs take
    it to calibr's Dask backend (``docs/dask.md``)."""
    try:
        import dask.dataframe as dd
    except ImportError as err:  # dask, or the pyarrow of its dataframes, is not installed
        from ._engine import DASK_INSTALL

        raise CLIError(f"{file}: reading a directory or a glob of files needs Dask "
                       f"({_detail(err)}); install it with `{DASK_INSTALL}`.") from None
    if kind == "parquet" and sep is not None:
        raise CLIError("--sep applies to CSV input; FILE holds Parquet files.")
    _check_same_columns(file, names, kind, sep)
    try:
        if kind == "parquet":
            return dd.read_parquet(names)
        if sep is None and all(n.lower().endswith(".tsv") for n in names):
            sep = "\t"
        return dd.read_csv(names, sep=sep or ",", encoding="utf-8", blocksize=None)
    except (OSError, ValueError) as err:
        raise CLIError(f"{file}: cannot read it: {_detail(err)}.") from None


def _compute(file: str, frame: Any) -> pd.DataFrame:
    """The Dask DataFrame of the files of FILE as one pandas frame, its rows in the
    files' order (numbered from 0), computed by threads in this process."""
    import dask

    try:
        with dask.config.set(scheduler="threads"):
            return frame.compute().reset_index(drop=True)
    except (OSError, ValueError) as err:  # e.g. a CSV file that cannot be parsed
        raise CLIError(f"{file}: cannot read it: {_detail(err)}.") from None


def _installed(name: str) -> bool:
    """Whether the package ``name`` can be imported (without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken install or a finder that refuses it
        return False


def _engine_of(file: str, engine: str | None) -> str | None:
    """The engine that reads FILE (``--engine``; docs/engines.md, "The command line"):
    DuckDB for a DuckDB table; for a directory or glob Dask by default (it computes
    the report from merged sums, never holding all rows: docs/dask.md), polars or
    DuckDB when Dask is not installed or when asked; None for one file (pandas)
    unless ``--engine polars`` or ``duckdb`` asks for it."""
    from ._scan import is_duckdb_table

    if is_duckdb_table(file):
        if engine not in (None, "duckdb"):
            raise CLIError(f"--engine {engine}: {file} is a DuckDB table, read by DuckDB; drop "
                           "--engine.")
        return "duckdb"
    if engine is None and _many(file):
        for name in ("dask", "polars", "duckdb"):
            if _installed(name):
                return name
        return "dask"  # its message says what to install
    return None if engine == "dask" and not _many(file) else engine


def _read_engine(file: str, engine: str, sep: str | None, columns=None, prefix=None):
    """FILE (Parquet: one file, a directory, a glob; or a DuckDB table) read by polars
    or DuckDB: ``(frame, calibr.cli._scan.EngineRead)``."""
    from . import _scan as files

    names = None
    if not files.is_duckdb_table(file):
        if _many(file):
            names, kind = _list_files(file)
        elif not Path(file).is_file():
            raise CLIError(f"{file}: no such file.")
        else:
            names = [file]
            kind = "parquet" if file.lower().endswith((".parquet", ".pq")) else "csv"
        if kind != "parquet":
            raise CLIError(f"--engine {engine} reads Parquet files; {file} is CSV: drop "
                           "--engine.")
        if sep is not None:
            raise CLIError("--sep applies to CSV input; FILE holds Parquet files.")
        files.engine_module(engine)  # its message first if it is not installed
        if names is not None and len(names) > 1:
            _check_same_columns(file, names, kind, None)
    elif sep is not None:
        raise CLIError("--sep applies to CSV input; FILE is a DuckDB table.")
    return files.read(file, names, engine, columns, prefix)


def _read(file: str, sep: str | None, engine: str | None = None) -> pd.DataFrame:
    chosen = _engine_of(file, engine) if file != "-" else None
    if chosen in ("polars", "duckdb"):
        return _read_engine(file, chosen, sep)[0]
    if file == "-":
        # bytes, so that non-UTF-8 input gets the same message as a file
        return _read_csv(getattr(sys.stdin, "buffer", sys.stdin), "-", sep)
    if _many(file):  # compare: every row in this process (its bootstrap resamples rows)
        return _compute(file, _read_many(file, *_list_files(file), sep))
    path = Path(file)
    if not path.exists():
        raise CLIError(f"{file}: no such file.")
    if path.is_dir():
        raise CLIError(f"{file}: is a directory, not a file.")
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        if sep is not None:
            raise CLIError("--sep applies to CSV input; FILE is a Parquet file.")
        return _read_parquet(path, file)
    if re.search(r"\.(csv|txt|tsv)(\.(gz|bz2|xz|zip|zst))?$", name):
        if sep is None and re.search(r"\.tsv(\.\w+)?$", name):
            sep = "\t"
        return _read_csv(path, file, sep)
    raise CLIError(
        f"{file}: cannot tell the format from the extension; use .csv or .parquet."
    )


def _pyarrow_errors() -> tuple[type[BaseException], ...]:
    try:
        import pyarrow
    except ImportError:
        return ()
    return (pyarrow.ArrowException,)


def _read_parquet(path: Path, file: str) -> pd.DataFrame:
    import pandas as pd

    try:
        return pd.read_parquet(path)
    except ImportError:
        raise CLIError(
            "reading Parquet needs pyarrow; install it with `pip install pyarrow`."
        ) from None
    except (OSError, ValueError, *_pyarrow_errors()) as err:  # a file that is not Parquet
        raise CLIError(f"{file}: cannot read it as Parquet: {_detail(err)}.") from None


def _read_csv(source: Any, file: str, sep: str | None) -> pd.DataFrame:
    """pd.read_csv, with the file named in the message when it cannot be read."""
    import pandas as pd

    try:
        return pd.read_csv(source, sep=sep or ",", encoding="utf-8")
    except UnicodeDecodeError as err:
        raise CLIError(
            f"{file}: cannot read it as CSV: it is not UTF-8 text (it has the byte "
            f"0x{err.object[err.start]:02x})."
        ) from None
    except ImportError as err:  # e.g. .csv.zst without zstandard
        raise CLIError(f"{file}: cannot read it: {_detail(err)}.") from None
    except (ValueError, EOFError, zipfile.BadZipFile, lzma.LZMAError) as err:
        # pandas' ParserError and EmptyDataError; truncated or corrupt compression
        raise CLIError(f"{file}: cannot read it as CSV: {_detail(err)}.") from None
    except OSError as err:
        raise CLIError(f"{file}: cannot read it: {err.strerror or _detail(err)}.") from None


def _sources(args) -> list[_Source]:
    colargs = {"p": args.prob, "p_prefix": args.prob_prefix, "y": args.label, "by": args.by}
    if args.file is not None:
        if args.example is not None:
            raise CLIError("--example picks bundled data; it cannot be used with FILE.")
        engine = None
        chosen = None if args.file == "-" else _engine_of(args.file,
                                                           getattr(args, "engine", None))
        if chosen in ("polars", "duckdb"):
            if getattr(args, "scheduler", None) is not None:
                raise CLIError(f"--scheduler is Dask's; --engine {chosen} reads the files "
                               "in this process.")
            used = [*(colargs["p"] or []), *(colargs["by"] or []),
                    colargs["y"] or "y", *([args.weights] if args.weights else [])]
            if colargs["p"] is None and colargs["p_prefix"] is None:
                used.append("p")
            frame, engine = _read_engine(args.file, chosen, _sep(args.sep), used,
                                         colargs["p_prefix"])
        elif _many(args.file):
            from ._engine import choose

            names, kind = _list_files(args.file)
            engine = choose(names, getattr(args, "scheduler", None))
            frame = _read_many(args.file, names, kind, _sep(args.sep))
        else:
            frame = _read(args.file, _sep(args.sep))
        if colargs["p"] is None and colargs["p_prefix"] is None:
            colargs["p"] = ["p"]
        colargs["y"] = colargs["y"] or "y"
        label = "standard input" if args.file == "-" else args.file
        return [_Source(None, label, frame, colargs, engine)]
    if args.sep is not None:
        raise CLIError("--sep applies to CSV input; give FILE.")
    from .. import datasets

    which = args.example or "all"
    names = list(datasets.DATASETS) if which == "all" else [which]
    given = [f"--{k}" for k, v in (("prob", args.prob), ("prob-prefix", args.prob_prefix),
                                      ("label", args.label), ("classes", args.classes))
             if v is not None]
    if given and len(names) > 1:
        raise CLIError(
            f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} FILE or --example: "
            "the two bundled data sets have different columns."
        )
    loaders = {
        "breast_cancer": (datasets.load_breast_cancer_predictions,
                          {"p": ["p"], "p_prefix": None}),
        "digits": (datasets.load_digits_predictions, {"p": None, "p_prefix": "p_"}),
    }
    out = []
    for name in names:
        loader, preset = loaders[name]
        ca = dict(colargs)
        if ca["p"] is None and ca["p_prefix"] is None:
            ca.update(preset)
        ca["y"] = ca["y"] or "y"
        ca["by"] = ca["by"] if ca["by"] is not None else ["model"]
        out.append(_Source(name, f"bundled example data {name}", loader(), ca))
    return out


# --------------------------------------------------------------------------
# the format of the output: what the extension of --output says

#: The extensions of --output and the format each is written in; a path without an
#: extension, or .txt, is written in any text format (--format; default: the table).
OUTPUT_EXTENSIONS = {".csv": "csv", ".json": "json", ".parquet": "parquet", ".pq": "parquet",
                     ".txt": None, "": None}


def _output_format(args) -> str:
    """The format of the output: --format, or that of the extension of --output
    (which must agree with --format), else the table. Parquet needs pyarrow."""
    if args.output is None:
        return args.format or "table"
    suffix = Path(args.output).suffix.lower()
    if suffix not in OUTPUT_EXTENSIONS:
        raise CLIError(
            f"--output {args.output}: calibr does not write {suffix} files; use .csv, .json, "
            ".parquet or .pq, or .txt or no extension for the table (or --format)."
        )
    fmt = OUTPUT_EXTENSIONS[suffix]
    if fmt is None:
        return args.format or "table"
    if args.format is not None and args.format != fmt:
        raise CLIError(
            f"--format {args.format} contradicts the extension of --output {args.output} "
            f"({'Parquet' if fmt == 'parquet' else fmt.upper()}); drop --format or change the "
            "extension."
        )
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CLIError(f"--output {args.output}: writing Parquet needs pyarrow; install it "
                           "with `pip install pyarrow`.") from None
    return fmt


def _parquet_bytes(df: pd.DataFrame, path: str) -> bytes:
    """The rows of the report (the columns of its CSV) as a Parquet file."""
    buf = io.BytesIO()
    try:
        df.to_parquet(buf, engine="pyarrow", index=False)
    except _pyarrow_errors() as err:  # a column Arrow has no type for
        raise CLIError(f"--output {path}: cannot write the report as Parquet: {_detail(err)}; "
                       "write it as .csv or .json.") from None
    return buf.getvalue()


# --------------------------------------------------------------------------
# outputs: never an input

#: What an output that is an input is told.
_NEVER = "calibr never overwrites its input: choose another path."


def check_outputs(outputs: Sequence[tuple[str | None, str]],
                  inputs: Sequence[tuple[str, str | None]]) -> None:
    """The one rule for every file the command writes (``docs/cli.md``, "No file
    is lost"): each output ``(path, option)`` (``path`` None: not given) must be
    writable (its directory exists, it is not a directory), must not be any file
    an input ``(name, value)`` reads (one file, stdin, every file of a directory or
    every match of a glob, the database of a DuckDB table), nor lie in an input
    directory or match an input glob (it would be read next time), and two
    outputs must be different files. Paths are compared resolved (symbolic links,
    ``..``) and, where both exist, as files (``os.path.samefile``: hard links).
    Checked before anything is read or written; a CLIError names the option."""
    given = [(path, option) for path, option in outputs if path is not None]
    for path, option in given:
        _check_destination(path, option)
        for name, value in inputs:
            if value is None:
                continue
            why = _input_overlap(path, name, value)
            if why is not None:
                raise CLIError(f"{option} {path} {why}; {_NEVER}")
    for i, (path, option) in enumerate(given):
        for other, other_option in given[i + 1:]:
            if _same_path(path, other):
                raise CLIError(f"{option} and {other_option} must be different files.")


def _check_destination(path: str, option: str) -> None:
    """A CLIError if ``path`` cannot be an output: its directory does not exist, or
    it is a directory."""
    parent = Path(path).resolve().parent
    if parent.exists() and not parent.is_dir():
        raise CLIError(f"{option} {path}: {str(parent)!r} is not a directory.")
    if not parent.is_dir():
        raise CLIError(f"{option} {path}: the directory {str(parent)!r} does not exist.")
    if Path(path).is_dir():
        raise CLIError(f"{option} {path}: is a directory.")


def _input_overlap(path: str, name: str, value: str) -> str | None:
    """How the output ``path`` overlaps the input ``value`` (the argument ``name``,
    e.g. FILE), in words for the message, or None if it does not."""
    from ._scan import duckdb_path, is_duckdb_table

    if value == "-":
        return "is the input on stdin" if _is_stdin(path) else None
    if is_duckdb_table(value):
        database = duckdb_path(value)
        if database is None:
            return None  # not duckdb:PATH::TABLE: reading it says so
        for file in (database, database + ".wal"):  # DuckDB's write-ahead log too
            if _same_path(path, file):
                return f"is the database of the input {name} {value}"
        return None
    if os.path.isdir(value):
        if _inside(path, value):
            return f"is in the input directory {name} {value}, whose files are all read"
        if os.path.exists(path) and any(os.path.samefile(path, f) for f in _walk(value)):
            return f"is a file of the input directory {name} {value}"
        return None
    if _many(value):  # a glob
        import glob

        if any(_same_path(path, f) for f in glob.glob(value)) or _matches(path, value):
            return f"is matched by the input glob {name} {value}"
        return None
    if _same_path(path, value):
        return f"is the input {name}"
    return None


def _is_stdin(path: str) -> bool:
    """Whether ``path`` is the regular file on stdin."""
    try:
        stdin_stat = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. in tests)
        return False
    return (stat.S_ISREG(stdin_stat.st_mode) and os.path.exists(path)
            and os.path.samestat(stdin_stat, os.stat(path)))


def _inside(path: str, directory: str) -> bool:
    """Whether ``path`` (resolved) is in ``directory`` (resolved) or below it."""
    real, top = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([real, top]) == top


def _walk(directory: str) -> Iterator[str]:
    """Every file under ``directory``."""
    for root, _, files in os.walk(directory):
        for file in files:
            yield os.path.join(root, file)


def _matches(path: str, pattern: str) -> bool:
    """Whether ``path`` would be a match of the glob ``pattern`` (each part of the
    path matched by that of the pattern, as ``glob`` does), as given or resolved."""
    import fnmatch

    want = Path(os.path.abspath(pattern)).parts
    for candidate in {os.path.abspath(path), os.path.realpath(path)}:
        parts = Path(candidate).parts
        if len(parts) == len(want) and all(
                fnmatch.fnmatchcase(part, pat) for part, pat in zip(parts, want, strict=True)):
            return True
    return False


def _same_path(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` are one file: the same file where both
    exist (links too), else the same resolved path."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


# --------------------------------------------------------------------------
# writing: temporary files, renamed over the targets only at the end


def _temp_name(target: str, what: str) -> str:
    head, tail = os.path.split(target)
    return os.path.join(head, f".{tail}.{secrets.token_hex(4)}.calibr-{what}")


def _write_temp(target: str, data: bytes) -> str:
    """Write ``data`` to a new file next to ``target``; return its path."""
    while True:
        tmp = _temp_name(target, "tmp")
        try:  # the mode of a new file (umask applies), or the target's
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:  # pragma: no cover - a random name taken
            continue
        break
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _backup(target: str) -> str:
    """A second name (a hard link, else a copy) of ``target``, to restore it."""
    name = _temp_name(target, "old")
    try:
        os.link(target, name)
    except OSError:  # no hard links on this file system
        shutil.copy2(target, name)
    return name


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


@dataclass
class _Output:
    path: str  # as given
    option: str
    data: bytes


def _commit(outputs: list[_Output]) -> None:
    """Write every output, or none: each goes to a temporary file in its target's
    directory, and the temporary files are renamed over the targets at the end. If a
    rename fails, the targets already replaced get their old contents back (or are
    removed if they did not exist). Targets that are not regular files (a device such
    as /dev/stdout, a FIFO) cannot be replaced; they are written last, directly."""
    staged: list[tuple[_Output, str, str]] = []  # (output, real target, temp file)
    direct: list[tuple[_Output, str]] = []
    done: list[tuple[str, str | None]] = []  # (target, backup of its old contents)
    current = outputs[0] if outputs else None
    try:
        for out in outputs:
            current = out
            if os.path.exists(out.path) and not os.path.isfile(out.path):
                direct.append((out, out.path))  # e.g. /dev/stdout, /dev/null, a FIFO
            else:
                target = os.path.realpath(out.path)  # a symlink keeps pointing at the output
                staged.append((out, target, _write_temp(target, out.data)))
        for out, target, tmp in staged:
            current = out
            backup = _backup(target) if os.path.exists(target) else None
            done.append((target, backup))
            os.replace(tmp, target)
        for out, target in direct:
            current = out
            with open(target, "wb") as fh:
                fh.write(out.data)
    except BaseException as err:
        for target, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.replace(backup, target)
                else:
                    os.remove(target)
        if isinstance(err, OSError) and current is not None:
            why = err.strerror or _detail(err)
            raise CLIError(f"{current.option} {current.path}: cannot write it: {why}.") from None
        raise
    finally:
        for _, _, tmp in staged:
            _remove(tmp)
        for _, backup in done:
            if backup is not None:
                _remove(backup)


#: stdout is written in pieces of this many characters, each flushed: a reader that
#: closes the pipe early is then seen at the next piece (one large write may end
#: early without an error, and the rest would be lost silently).
_STDOUT_PIECE = 1 << 16


def _write_stdout(text: str) -> int:
    """Write ``text`` to stdout; 141 if the reader closed the pipe, a CLIError if
    stdout cannot be written (e.g. a full disk)."""
    try:
        for start in range(0, len(text), _STDOUT_PIECE):
            sys.stdout.write(text[start:start + _STDOUT_PIECE])
            sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as err:
        _silence_stdout()  # Python's final flush would fail again
        raise CLIError(f"cannot write the output to stdout: {err.strerror or _detail(err)}."
                       ) from None
    return 0


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null, so that Python's final flush
    does not print "Exception ignored ... BrokenPipeError"."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
