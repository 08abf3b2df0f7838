"""``jit``: numba's ``njit`` with calibr's own on-disk cache.

Every compiled kernel of calibr is made by :func:`jit`. It compiles exactly as
``numba.njit(cache=True, ...)`` would, but keeps the cache files in a place and
under a key that numba's default arrangement does not give:

* **Where.** Never beside the source. numba's default writes ``*.nbi``/``*.nbc``
  into ``__pycache__`` next to the module whenever that is writable, which for a
  ``pip install .`` is ``site-packages/calibr/``. pip does not own those files:
  ``pip uninstall`` leaves the directory behind, and a later editable install is
  shadowed by it (a ``calibr`` directory without ``__init__.py`` is a namespace
  package that wins over the editable finder). calibr's cache lives in
  ``$NUMBA_CACHE_DIR/calibr/`` when that variable is set (numba's own setting,
  so that a user who redirects numba's cache redirects calibr's too), else in
  the user's cache directory (``~/.cache/calibr/numba`` on Linux). If neither
  can be written, kernels are compiled in memory each time, as without a cache.
* **When it is fresh.** numba keys a function's cache by the contents of its
  own source file only. A cached kernel contains the code of every compiled
  function it calls, so when a callee in another file changes, numba would keep
  loading the stale caller. calibr keys every kernel by the digest of *all* of
  its compiled source files together (and calibr's and numba's versions, which
  numba already checks), so any change anywhere recompiles everything. For this
  to hold, every compiled function lives in ``calibr/_kernels/`` (:func:`jit`
  refuses any other).
* **Stale copies.** Each installed copy of calibr, at each version of its
  kernels, has a directory of its own, ``_kernels_<sha1 of the kernels'
  directory>-<16 hex digits of the digest>``, with a file ``source`` naming that
  directory. On its first compilation, a process removes the directories that
  the same copy made at other versions (and those of the layout before the
  digest was part of the name), and those whose copy of calibr no longer exists
  (e.g. after ``pip uninstall``); nothing else, and a failure to remove is
  ignored. Another process may still be using a removed directory (an older
  calibr still running): a load or save that fails on it only makes that
  process compile in memory instead.

Kernels must not be numba generators: numba cannot reload a function that
uses a generator compiled in another process (it fails with a ``KeyError`` on
the generator type in every process after the first). The cross-process tests
in ``tests/test_cache_processes.py`` run every compiled path in fresh
processes that share one cache, in several orders.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
from pathlib import Path

import numba
from numba.core import caching, config
from numba.core.dispatcher import Dispatcher
from numba.misc.appdirs import AppDirs

__all__ = ["cache_dir", "jit", "read_only", "remove_stale_caches"]

#: Every compiled function of calibr lives in this directory (``calibr/_kernels``).
_KERNELS = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def _source_digest() -> str:
    """sha256 of every ``.py`` file under ``calibr/_kernels`` (sorted by path)."""
    h = hashlib.sha256()
    for path in sorted(_KERNELS.rglob("*.py")):
        h.update(str(path.relative_to(_KERNELS)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def cache_dir() -> Path:
    """The root of calibr's kernel cache (it may not exist yet)."""
    if config.CACHE_DIR:
        return Path(config.CACHE_DIR) / "calibr"
    return Path(AppDirs(appname="calibr", appauthor=False).user_cache_dir) / "numba"


#: The name of a directory of calibr's cache: numba's name for a source directory
#: (``_kernels_`` and the sha1 of its path), then the start of the kernels' digest.
#: Directories without the digest are those of calibr before it was in the name.
_CACHE_DIR_NAME = re.compile(r"_kernels_(?P<copy>[0-9a-f]{40})(-[0-9a-f]{16})?")
#: The file in each directory that names the kernels' directory it caches.
_SOURCE_FILE = "source"


def _subdir(py_file: str) -> str:
    """The cache directory's name for this copy of calibr at this version: one per
    installed copy (as numba does per source directory) and version of the kernels."""
    return caching._CacheLocator.get_suitable_cache_subpath(py_file) + "-" + _source_digest()[:16]


def _is_stale(entry: Path, own: str) -> bool:
    """Whether ``entry`` (in calibr's cache root) is a directory that calibr made for
    another version of this copy, or for a copy of calibr that no longer exists."""
    match = _CACHE_DIR_NAME.fullmatch(entry.name)
    if match is None or entry.name == own or entry.is_symlink() or not entry.is_dir():
        return False
    if match["copy"] == _CACHE_DIR_NAME.fullmatch(own)["copy"]:
        return True  # this copy of calibr at another version
    try:
        source = (entry / _SOURCE_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False  # not known whose: kept
    return bool(source) and not os.path.isdir(source)


def remove_stale_caches(py_file: str) -> list[Path]:
    """Remove the stale directories of calibr's cache (see the module doc) next to
    the one of ``py_file``; returns those removed. Never raises."""
    removed = []
    try:
        own = _subdir(py_file)
        entries = list(cache_dir().iterdir())
    except OSError:
        return removed
    for entry in entries:
        try:
            if _is_stale(entry, own):
                shutil.rmtree(entry, ignore_errors=True)
                if not entry.exists():
                    removed.append(entry)
        except OSError:
            pass
    return removed


class _Locator(caching._CacheLocator):
    """calibr's cache directory, with the package digest as the freshness stamp."""

    def __init__(self, py_func, py_file):
        self._lineno = py_func.__code__.co_firstlineno
        self._source_dir = os.path.dirname(os.path.abspath(py_file))
        self._cache_path = str(cache_dir() / _subdir(py_file))

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return ("calibr", _source_digest())

    def get_disambiguator(self):
        return str(self._lineno)

    def ensure_cache_path(self):
        # numba probes the directory (makedirs and a temporary file) for every
        # function; once per directory and process is enough
        path = self.get_cache_path()
        if path not in _WRITABLE:
            super().ensure_cache_path()
            marker = os.path.join(path, _SOURCE_FILE)
            if not os.path.exists(marker):
                try:
                    with open(marker, "x", encoding="utf-8") as fh:
                        fh.write(self._source_dir + "\n")
                except OSError:  # written by another process meanwhile, or not at all
                    pass
            _WRITABLE.add(path)

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.isfile(py_file):  # e.g. "<doctest ...>": nothing to key on
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:  # not writable: no cache (compile in memory)
            return None
        return self


#: Cache directories found writable in this process.
_WRITABLE: set[str] = set()
#: Whether this process has removed the stale cache directories (on its first save).
_PRUNED = False


class _Impl(caching.CompileResultCacheImpl):
    _locator_classes = [_Locator]


class _FunctionCache(caching.FunctionCache):
    _impl_class = _Impl


class _LazyCache:
    """A dispatcher's cache, made when the dispatcher first loads or compiles.

    Importing a module of kernels then touches neither the file system nor
    numba's cache machinery, which matters because a call uses only a few of
    calibr's kernels. Dispatchers reach their cache only under numba's global
    compiler lock, so it is made once.
    """

    __slots__ = ("_cache", "_py_func")

    def __init__(self, py_func):
        self._py_func = py_func
        self._cache = None

    def _get(self) -> caching._Cache:
        if self._cache is None:
            try:
                self._cache = _FunctionCache(self._py_func)
            except RuntimeError:  # no locator: the directory cannot be written
                self._cache = caching.NullCache()
        return self._cache

    @property
    def cache_path(self):
        if self._cache is None:  # where it will be (numba's stats ask): no disk access
            return str(cache_dir() / _subdir(self._py_func.__code__.co_filename))
        return self._cache.cache_path

    def load_overload(self, sig, target_context):
        try:
            return self._get().load_overload(sig, target_context)
        except OSError:  # e.g. the directory removed by a newer calibr: compile instead
            return None

    def save_overload(self, sig, data):
        global _PRUNED
        if not _PRUNED:  # the first compilation of this process
            _PRUNED = True
            remove_stale_caches(self._py_func.__code__.co_filename)
        try:
            self._get().save_overload(sig, data)
        except OSError:  # the kernel stays compiled in memory
            pass

    def enable(self):
        self._get().enable()

    def disable(self):
        self._get().disable()

    def flush(self):
        self._get().flush()


def _attach_cache(dispatcher: Dispatcher) -> None:
    _source_digest()  # the stamp of the sources as imported, before any of them changes
    dispatcher._cache = _LazyCache(dispatcher.py_func)


def read_only(a):
    """A read-only view of the array ``a`` (no copy).

    numba compiles a kernel once per combination of argument types, and whether
    an array is writable is part of its type: an input that a kernel only reads
    is passed read-only, so that one compiled copy serves every caller (a
    pandas column's values are often read-only, a fresh numpy array is not).
    """
    view = a.view()
    view.flags.writeable = False
    return view


def jit(*, nogil: bool = False, inline: str = "never"):
    """``numba.njit(nogil=..., inline=...)`` with calibr's cache (see the module doc).

    Raises
    ------
    RuntimeError
        For a function outside ``calibr/_kernels/``: its source would not be part
        of the cache key.
    """

    def decorate(func):
        source = Path(func.__code__.co_filename).resolve()
        if source.parent != _KERNELS and _KERNELS not in source.parents:
            raise RuntimeError(  # a rule for calibr's own code, not a user error
                f"calibr kernels live in {_KERNELS}; {func.__qualname__} is in {source}."
            )
        dispatcher = numba.njit(nogil=nogil, inline=inline)(func)
        if isinstance(dispatcher, Dispatcher):  # not under NUMBA_DISABLE_JIT
            _attach_cache(dispatcher)
        return dispatcher

    return decorate
