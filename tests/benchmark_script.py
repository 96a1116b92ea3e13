"""A script of benchmarks/ loaded as a module, for the tests of its checks and tables (the
scripts are not part of the package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(stem: str, name: str | None = None):
    """A fresh module of benchmarks/<stem>.py (each call executes it anew: monkeypatches
    stay local), registered in sys.modules under `name` (default: the stem), where its
    dataclasses look their module up."""
    name = name or stem
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
