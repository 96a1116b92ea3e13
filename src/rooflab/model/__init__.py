"""The roofline model: pure values and functions, no I/O, no clocks, no plotting."""

from .analysis import Analysis, Point, analyze
from .ceiling import Ceiling, Roof
from .kernel import Kernel
from .placement import classify
from .roofline import attainable, cpu_peak_flop_per_s, ridge, time_floor

__all__ = ["Analysis", "Ceiling", "Kernel", "Point", "Roof", "analyze", "attainable",
           "classify", "cpu_peak_flop_per_s", "ridge", "time_floor"]
