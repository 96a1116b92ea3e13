"""benchmarks/gpu_check.py loaded as a module, for the tests of its checks and table (it is
a script, not part of the package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"


def load_gpu_check(name: str = "gpu_check"):
    """A fresh module of the script (each call executes it anew: monkeypatches stay local)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
