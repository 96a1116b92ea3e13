"""Where numba keeps the probe kernels' compiled code (`cache=True`), and what happens when
nothing is writable.

Left to itself, numba puts a `cache=True` function's compiled code in the `__pycache__`
beside its source -- for an installed rooflab, inside site-packages. Those ~30 files are not
in pip's RECORD: `pip uninstall rooflab` left them, and `import rooflab` then found a hollow
namespace package; a probe run by root wrote into a shared install (review s26 r1 F1). So,
unless the user chose a folder (NUMBA_CACHE_DIR, numba's own setting, respected as is), the
kernels are decorated with numba's CACHE_DIR pointed at a per-user cache folder, as
platformdirs would name it: $XDG_CACHE_HOME/rooflab/numba, else ~/.cache/rooflab/numba
(~/Library/Caches/rooflab/numba on macOS, %LOCALAPPDATA%\\rooflab\\Cache\\numba on
Windows). Only while decorating rooflab's kernels (`njit` below): numba reads CACHE_DIR once
per function, when `cache=True` decorates it, so the user's own numba functions in the same
process keep numba's defaults, and nothing leaks into os.environ or child processes.

With that folder not writable (a read-only or missing HOME: `docker run --read-only -u 1234`,
a service account with HOME=/nonexistent) the kernels are compiled without the disk cache,
again on every run, said once -- not written into the install instead. Before the cache
had a home of its own, numba raised "cannot cache function ...: no locator available" there
while kernels.py was imported, and `rooflab probe` / `demo` ended in a traceback (review s23
r2 F1).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import warnings
from pathlib import Path

from ...errors import InputWarning


class NumbaCacheWarning(InputWarning):
    """The probe kernels are compiled without numba's disk cache. An InputWarning so the
    CLI prints it as one `warning:` line (as chart_fonts.MissingGlyphsWarning), not as
    Python's warning form with a source line."""


NO_CACHE = ("numba has no writable folder for its compiled-code cache of {file} "
            "({where}): the probe kernels are compiled without the disk cache, so every run "
            "compiles them again before measuring. To keep them, set NUMBA_CACHE_DIR to a "
            "writable folder, e.g. `export NUMBA_CACHE_DIR=/tmp/numba-cache`")


def user_cache_dir() -> Path | None:
    """rooflab's per-user folder for numba's compiled kernels (platformdirs' user_cache_dir
    for "rooflab", plus /numba); None when the OS names no home to put it in. XDG says a
    relative $XDG_CACHE_HOME is to be ignored."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base, "rooflab", "Cache", "numba") if base else None
    try:
        home = Path.home()
    except RuntimeError:          # no HOME and no passwd entry
        return None
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "rooflab" / "numba"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else home / ".cache"
    return base / "rooflab" / "numba"


def _writable(folder: Path) -> bool:
    """Whether folder exists or can be made, and takes a file (numba's own test)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def kernel_cache_dir() -> str | None:
    """The folder rooflab points numba's cache at: '' when the user chose a writable one
    (numba's CACHE_DIR, from NUMBA_CACHE_DIR: theirs, left alone), else the per-user
    folder when it is writable, None when there is none (no disk cache). Asked once per
    process."""
    from numba.core import config

    if config.CACHE_DIR and _writable(Path(config.CACHE_DIR)):
        return ""
    folder = user_cache_dir()
    ours = str(folder) if folder is not None and _writable(folder) else None
    if config.CACHE_DIR:
        # numba itself would fall back to the __pycache__ beside the kernels: the install,
        # which `pip uninstall` leaves behind (review s26 v3 F3)
        warnings.warn(f"NUMBA_CACHE_DIR={config.CACHE_DIR} is not writable: rooflab's "
                      f"probe kernels cache in {ours or 'no folder (compiled every run)'}",
                      NumbaCacheWarning, stacklevel=2)
    return ours


@contextlib.contextmanager
def _pointed_at(folder: str):
    """numba's CACHE_DIR set to folder for the decorations inside, then put back."""
    from numba.core import config

    saved = config.CACHE_DIR
    config.CACHE_DIR = folder or saved
    try:
        yield
    finally:
        config.CACHE_DIR = saved


def disk_cache(py_func) -> bool:
    """True when the functions of py_func's source file get a disk cache, else False after
    one NumbaCacheWarning. Any function of the file stands for all of its kernels: numba's
    locators go by the file and its folder, not the function."""
    from numba.core.caching import FunctionCache

    folder = kernel_cache_dir()
    if folder is None:
        from numba.core import config

        tried = user_cache_dir()
        where = ("NUMBA_CACHE_DIR not writable, " if config.CACHE_DIR else
                 "NUMBA_CACHE_DIR unset, ") + (f"{tried} not writable" if tried else
                                               "no home folder")
        return _no_cache(py_func, where)
    try:
        with _pointed_at(folder):
            FunctionCache(py_func)
    except RuntimeError as exc:   # "cannot cache function ...: no locator available"
        if "no locator" not in str(exc):
            raise
        return _no_cache(py_func, "NUMBA_CACHE_DIR, the __pycache__ beside it and "
                                  "~/.cache/numba not writable")
    return True


def _no_cache(py_func, where: str) -> bool:
    warnings.warn(NO_CACHE.format(file=_short(py_func.__code__.co_filename), where=where),
                  NumbaCacheWarning, stacklevel=3)
    return False


def njit(*args, **options):
    """numba.njit, with a `cache=True` kernel's disk cache in kernel_cache_dir() (used as
    `@njit(**options)` or bare `@njit`); with no folder there (see disk_cache, which says
    so), compiled without one rather than into the install."""
    import numba

    if args and callable(args[0]):
        return njit(**options)(args[0])
    folder = kernel_cache_dir() if options.get("cache") else ""
    inner = numba.njit(*args, **{**options, "cache": folder is not None and
                                 bool(options.get("cache"))})

    def decorate(func):
        with _pointed_at(folder or ""):
            return inner(func)
    return decorate


def _short(path: str) -> str:
    """rooflab/probe/cpu/kernels.py: where it sits in the package (the install prefix is
    the user's, and the message is long enough)."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-4:]) if "rooflab" in parts[-4:-3] else path
