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
from pathlib import Path

import numba
from numba.core import caching, config
from numba.core.dispatcher import Dispatcher
from numba.misc.appdirs import AppDirs

__all__ = ["cache_dir", "jit", "read_only"]

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


class _Locator(caching._CacheLocator):
    """calibr's cache directory, with the package digest as the freshness stamp."""

    def __init__(self, py_func, py_file):
        self._lineno = py_func.__code__.co_firstlineno
        # one subdirectory per installed copy of calibr (as numba does per source dir)
        sub = self.get_suitable_cache_subpath(py_file)
        self._cache_path = str(cache_dir() / sub)

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
            sub = _Locator.get_suitable_cache_subpath(self._py_func.__code__.co_filename)
            return str(cache_dir() / sub)
        return self._cache.cache_path

    def load_overload(self, sig, target_context):
        return self._get().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        return self._get().save_overload(sig, data)

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
