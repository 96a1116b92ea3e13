"""Whether numba can keep the probe kernels' compiled code on disk (`cache=True`).

numba looks for a writable cache folder when a `cache=True` function is decorated: the
folder NUMBA_CACHE_DIR names, the `__pycache__` beside the source, then the user's cache
(~/.cache/numba). With none of them writable -- rooflab installed into a read-only
site-packages or container image, run by a user whose HOME is not writable -- numba
raises RuntimeError("cannot cache function ...: no locator available") while kernels.py
is imported, and `rooflab probe` / `demo` ended in a traceback (review s23 r2 F1). The
kernels run the same without the disk cache; only their compile is repeated on every run,
so that is what happens then, said once.
"""

from __future__ import annotations

import warnings

from ...errors import InputWarning


class NumbaCacheWarning(InputWarning):
    """The probe kernels are compiled without numba's disk cache. An InputWarning so the
    CLI prints it as one `warning:` line (as chart_fonts.MissingGlyphsWarning), not as
    Python's warning form with a source line."""


NO_CACHE = ("numba has no writable folder for its compiled-code cache (NUMBA_CACHE_DIR "
            "unset or not writable, a read-only __pycache__ beside {file}, no writable "
            "~/.cache/numba): the probe kernels are compiled without the disk cache, so "
            "every run compiles them again before measuring. To keep them, set "
            "NUMBA_CACHE_DIR to a writable folder, e.g. `export "
            "NUMBA_CACHE_DIR=/tmp/numba-cache`")


def disk_cache(py_func) -> bool:
    """True when numba finds a cache folder for the functions of py_func's source file
    (the same search numba makes when `cache=True` decorates them), else False after one
    NumbaCacheWarning. Any function of the file stands for all of its kernels: numba's
    locators go by the file and its folder, not the function."""
    from numba.core.caching import FunctionCache

    try:
        FunctionCache(py_func)
    except RuntimeError as exc:   # "cannot cache function ...: no locator available"
        if "no locator" not in str(exc):
            raise
        warnings.warn(NO_CACHE.format(file=_short(py_func.__code__.co_filename)),
                      NumbaCacheWarning, stacklevel=2)
        return False
    return True


def _short(path: str) -> str:
    """rooflab/probe/cpu/kernels.py: where it sits in the package (the install prefix is
    the user's, and the message is long enough)."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-4:]) if "rooflab" in parts[-4:-3] else path
