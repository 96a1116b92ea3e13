"""rooflab: Roofline performance analysis.

`import rooflab` stays light: the error types only, no numpy, so the CLI's `--help` and
its Ctrl-C answer start fast. Every other public name (Kernel, analyze, measure,
load_roof, plot_roofline, ...) is imported from its module on first use (PEP 562), and
heavy parts (matplotlib, numba, torch, plotly) inside the functions that need them.

    roof = rooflab.load_roof("T4")                  # catalog name or a saved profile .json
    k = rooflab.Kernel("step", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)
    rooflab.analyze(roof, [k]).points[0].percent_of_roof     # 45.8
    rooflab.plot_roofline(roof, k)                  # a chart; Jupyter shows it inline

`rooflab docs python` prints the walk through the whole Python API (docs/python.md);
`python -m pydoc rooflab` lists it.
"""

from importlib import import_module
from typing import TYPE_CHECKING

# the exception and warning types docs/python.md §8 names, where a notebook looks for
# them (`except rooflab.HardwareNotFound:`); errors.py needs the standard library only
from .errors import (
    DeviceError,
    HardwareNotFound,
    InputError,
    InputWarning,
    MissingDependency,
    MissingFileError,
    OutputError,
    ParseError,
    ProbeError,
    RooflabError,
)

__version__ = "0.1.0"

# name -> module that defines it, imported on first use (PEP 562). The model pulls in
# numpy (0.5 s of CPU on a small VM): `rooflab --help` and the CLI's start need none of it.
_MODEL = ("Analysis", "Ceiling", "Kernel", "Point", "Roof", "analyze", "attainable", "ridge")
_LAZY = {
    **dict.fromkeys(_MODEL, "rooflab.model"),
    "measure": "rooflab.measuring",
    "load_roof": "rooflab.hardware.resolve",
    "load_roofs": "rooflab.hardware.resolve",
    "load_profile": "rooflab.hardware.profile",
    "save_profile": "rooflab.hardware.profile",
    "MachineProfile": "rooflab.hardware.profile",
    "load_kernels": "rooflab.ingest.kernelfile",
    "save_kernels": "rooflab.ingest.kernelfile",
    "plot_roofline": "rooflab.report.chart",
    "save_figure": "rooflab.report.chart",
}
if TYPE_CHECKING:
    # What type checkers and IDEs see for the lazy names (mypy, pyright/Pylance): the real
    # definitions, so their signatures and return types are known; at run time they are
    # still imported on first use (module __getattr__ below). Kept in step with _LAZY by
    # tests/test_python_api_review18b.py.
    from . import (  # noqa: F401
        bench,
        cli,
        hardware,
        ingest,
        model,
        probe,
        report,
        units,
        workloads,
    )
    from .hardware.profile import MachineProfile, load_profile, save_profile  # noqa: F401
    from .hardware.resolve import load_roof, load_roofs  # noqa: F401
    from .ingest.kernelfile import load_kernels, save_kernels  # noqa: F401
    from .measuring import measure  # noqa: F401
    from .model import (  # noqa: F401
        Analysis,
        Ceiling,
        Kernel,
        Point,
        Roof,
        analyze,
        attainable,
        ridge,
    )
    from .report.chart import plot_roofline, save_figure  # noqa: F401

# subpackages reachable as attributes after `import rooflab`, imported on first use: every
# subpackage, and units (before the lazy import, `import rooflab` bound model and units as
# it imported the model; `rooflab.model.Roof` in a notebook kept working, review s20 x2 F9)
_SUBPACKAGES = ("bench", "cli", "hardware", "ingest", "model", "probe", "report", "units",
                "workloads")

__all__ = [*_MODEL, "DeviceError", "HardwareNotFound", "InputError", "InputWarning",
           "MissingDependency", "MissingFileError", "OutputError", "ParseError", "ProbeError",
           "RooflabError", "__version__", *(name for name in _LAZY if name not in _MODEL)]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        return import_module(f"rooflab.{name}")   # binds rooflab.<name> as it imports
    raise AttributeError(f"module 'rooflab' has no attribute '{name}'")


def __dir__() -> list[str]:
    # tab completion in a notebook lists the lazy names too
    return sorted(set(globals()) | set(_LAZY) | set(_SUBPACKAGES))
