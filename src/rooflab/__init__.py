"""rooflab: Roofline performance analysis.

`import rooflab` stays light: numpy only. Heavy parts (matplotlib, numba, torch, plotly)
are imported inside the functions that need them.
"""

from .errors import RooflabError
from .model import Analysis, Ceiling, Kernel, Point, Roof, analyze, attainable, ridge

__version__ = "0.1.0"

__all__ = ["Analysis", "Ceiling", "Kernel", "Point", "Roof", "RooflabError", "analyze",
           "attainable", "measure", "ridge", "__version__"]


def __getattr__(name: str):
    # measure() pulls in the timer (and torch when given torch callables): loaded on use.
    if name == "measure":
        from .measuring import measure

        return measure
    raise AttributeError(f"module 'rooflab' has no attribute '{name}'")
