"""The roofline model: pure values and functions, no I/O, no clocks, no plotting.

The names below are imported from their modules on first use (PEP 562), as in
rooflab/__init__.py: importing any one model module (`rooflab.model.ceiling`) runs this
file first, and an eager one imported roofline.py and with it numpy (0.3-0.5 s of CPU),
so `rooflab bench --help` and a usage error paid for arrays they never made.
"""

from importlib import import_module
from typing import TYPE_CHECKING

# name -> the module of this package that defines it
_LAZY = {
    # analyze: the notebook's entry, one die of a package as the CLI judges (analysis_api)
    "Analysis": "analysis", "Point": "analysis", "analyze": "analysis_api",
    "Ceiling": "ceiling", "Roof": "ceiling",
    "Kernel": "kernel",
    "classify": "placement",
    "attainable": "roofline", "cpu_peak_flop_per_s": "roofline", "ridge": "roofline",
    "time_floor": "roofline",
}
if TYPE_CHECKING:
    # what type checkers and IDEs see: the real definitions
    from .analysis import Analysis, Point  # noqa: F401
    from .analysis_api import analyze  # noqa: F401
    from .ceiling import Ceiling, Roof  # noqa: F401
    from .kernel import Kernel  # noqa: F401
    from .placement import classify  # noqa: F401
    from .roofline import attainable, cpu_peak_flop_per_s, ridge, time_floor  # noqa: F401

__all__ = ["Analysis", "Ceiling", "Kernel", "Point", "Roof", "analyze", "attainable",
           "classify", "cpu_peak_flop_per_s", "ridge", "time_floor"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
