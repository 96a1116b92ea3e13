"""What makes the suite's collection cheaper (session 33, CI time), checked where it acts.

1. tests/conftest.py raises the cyclic collector's thresholds while pytest collects: the
   assert rewriting of ~750 test files makes millions of short-lived AST nodes, and at
   CPython's default (700, 10, 10) ~55 full collections walked the whole heap (torch,
   numpy): ~11 CPU-s of a worker's ~40 s of collection. This module is imported during
   collection, so what it reads at import is what collection ran under.
2. pyproject's addopts block the pytest plugins that other packages install and no test
   uses (hypothesis's, pytest-benchmark's, anyio's): ~0.7 CPU-s a pytest process."""

from __future__ import annotations

import gc
import subprocess
import sys

AT_COLLECTION = gc.get_threshold()   # read while pytest imports this module: collecting


def test_collection_runs_under_raised_thresholds_and_tests_under_the_default():
    # old: (700, 10, 10) at collection too, CPython's default
    assert AT_COLLECTION == (100_000, 50, 100)
    default = subprocess.run([sys.executable, "-c", "import gc; print(gc.get_threshold())"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # restored once collection finished: the tests' own allocations see the default
    assert str(gc.get_threshold()) == default


def test_plugins_no_test_uses_are_blocked(pytestconfig):
    # old: loaded in each pytest process (and their modules assert-rewritten)
    for name in ("hypothesispytest", "benchmark", "anyio"):
        assert pytestconfig.pluginmanager.is_blocked(name), name
        assert pytestconfig.pluginmanager.get_plugin(name) is None, name
