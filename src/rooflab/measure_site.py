"""Where a warning about a decorated function's call points when no line of the user's
called it: a decorated function run as `threading.Thread(target=f)` or handed to a pool
(`pool.submit(f, x)`, `pool.map`) is called by the thread's own plumbing, so a fixed
`stacklevel` named threading.py or concurrent/futures/thread.py (review s26, left for
s27). There the warning names the decorated function's definition (its first decorator
line, the `@rooflab.measure(...)` the user wrote) instead. Python 3.12's
`skip_file_prefixes` would skip such frames, but the frame above them is Thread's
bootstrap, no better, and the package supports 3.11."""

from __future__ import annotations

import inspect
import linecache
import sys
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

# the modules whose code calls a thread's target or a pool's task: not the user's line
PLUMBING = frozenset({"threading", "concurrent.futures.thread", "multiprocessing.pool"})


def warn(message: str | Warning, category: type[Warning] | None = None,
         stacklevel: int = 1) -> None:
    """warnings.warn(message, category, stacklevel) as the caller would make it, except
    when the frame it names is a thread's plumbing and the frame that plumbing called is
    a decorated function's wrapper (measure_runs._Recorded.__call__): then the warning
    names the decorated function's definition, with its module's filters and registry."""
    site = _definition_site(stacklevel)
    if site is None:
        warnings.warn(message, category, stacklevel=stacklevel + 1)
        return
    if not isinstance(message, Warning) and category is None:
        category = UserWarning
    warnings.warn_explicit(message, category or type(message), site.filename, site.lineno,
                           module=site.module, registry=site.registry)


@dataclass(frozen=True)
class Site:
    """Where a decorated function is defined, as warnings.warn_explicit takes it. Without
    module_globals: given them, Python asks the module's loader for the whole source at
    every warning, shown or not (review s27 v2 F10: 30-45 µs a call of a short pool task),
    and a loader with none (a script read from stdin) raised ImportError out of the call;
    linecache is given them once instead, for the line a shown warning prints."""
    filename: str
    lineno: int
    module: str | None
    registry: dict


# each decorated function's Site, found at its first warning from a thread's plumbing
_SITES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _definition_site(stacklevel: int) -> Site | None:
    """The Site of the decorated function a thread's plumbing called, when the frame
    `stacklevel` up from warn's caller is that plumbing; None otherwise."""
    try:
        named = sys._getframe(stacklevel + 1)     # + this function's own frame
        called = sys._getframe(stacklevel)        # the frame the named one called
    except ValueError:   # fewer frames than that: warnings.warn copes
        return None
    if named.f_globals.get("__name__") not in PLUMBING \
            or called.f_globals.get("__name__") != "rooflab.measure_runs":
        return None
    wrapper = called.f_locals.get("self")
    fn = getattr(wrapper, "_fn", None)
    if fn is None:
        return None
    try:
        return _SITES[wrapper]
    except (KeyError, TypeError):   # TypeError: not weakly referable, found each time
        pass
    found = _code_site(fn)
    site = None
    if found is not None:
        filename, lineno, module_globals = found
        linecache.getline(filename, lineno, module_globals)   # a zip import's source too
        site = Site(filename, lineno, module_globals.get("__name__"),
                    module_globals.setdefault("__warningregistry__", {}))
    try:
        _SITES[wrapper] = site
    except TypeError:
        pass
    return site


def _code_site(fn: Any) -> tuple[str, int, dict] | None:
    """Where fn is defined: a function's (or a method's) code, through functools.wraps
    and partial; None for a callable with no Python code (a builtin, a module object)."""
    for _ in range(8):
        fn = inspect.unwrap(fn) if callable(fn) else fn
        code = getattr(fn, "__code__", None)
        module_globals = getattr(fn, "__globals__", None)
        if code is not None and isinstance(module_globals, dict):
            return code.co_filename, code.co_firstlineno, module_globals
        fn = getattr(fn, "func", None)   # functools.partial
        if fn is None:
            return None
    return None
