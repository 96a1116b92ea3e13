"""benchmarks/gpu_check.py loaded as a module, for the tests of its checks and table (it is
a script, not part of the package)."""

from __future__ import annotations

from benchmark_script import load_benchmark


def load_gpu_check(name: str = "gpu_check"):
    """A fresh module of the script (each call executes it anew: monkeypatches stay local)."""
    return load_benchmark("gpu_check", name)
