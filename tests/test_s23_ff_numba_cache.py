"""Review s23 r2 F1: with no writable folder for numba's cache (a read-only install, HOME
not writable) `cache=True` raised "cannot cache function 'copy': no locator available" while
probe/cpu/kernels.py was imported, and `rooflab probe` / `demo` ended in a traceback (exit
70). Now the kernels are compiled without the disk cache, with one warning naming
NUMBA_CACHE_DIR (probe/cpu/numba_cache.py).

The read-only install is reproduced without root tricks: a copy of the package whose
probe/cpu/__pycache__ is a plain file (numba cannot create its in-tree cache folder there),
run with HOME=/dev/null (no ~/.cache/numba) and neither NUMBA_CACHE_DIR nor XDG_CACHE_HOME.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

import rooflab  # noqa: E402

SCRIPT = """
import numpy as np
from rooflab.probe.cpu import kernels as K, kernels_scalar as KS
a, b = np.zeros(64), np.arange(64.0)
print("copy", K.copy(a, b, 2), a[63])
print("cache", K.CACHE)
"""


def _readonly_copy(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    shutil.copytree(Path(rooflab.__file__).parent, root / "rooflab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "rooflab" / "probe" / "cpu" / "__pycache__").write_text("not a folder\n")
    return root


def _env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(HOME="/dev/null", PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    return env


def test_kernels_compile_and_run_without_a_writable_cache_folder(tmp_path):
    site = _readonly_copy(tmp_path)
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=_env(site), cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "no locator available" not in run.stderr
    # the kernel ran: a = b copied, returned a[0] = 0.0, a[63] = 63.0
    assert "copy 0.0 63.0" in run.stdout
    assert "cache False" in run.stdout
    # said once, naming the way out
    assert run.stderr.count("NumbaCacheWarning") == 1
    assert "NUMBA_CACHE_DIR" in run.stderr
    assert "rooflab/probe/cpu/kernels.py" in run.stderr


def test_the_cli_says_it_as_one_warning_line(tmp_path):
    """Under the CLI (warnings shown as `warning:` lines, cli/main.py), the same import
    gives one `warning: numba has no writable folder ...` line, no Python warning form."""
    site = _readonly_copy(tmp_path)
    script = ("import sys, warnings\n"
              "from rooflab.cli.main import _show_warning\n"
              "from rooflab.errors import InputWarning\n"
              "warnings.simplefilter('default', InputWarning)\n"
              "warnings.showwarning = _show_warning\n"
              "from rooflab.probe.cpu import kernels\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=_env(site), cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("warning: numba has no writable folder for its compiled-code "
                               "cache")
    assert "export NUMBA_CACHE_DIR=" in lines[0]


def test_numba_cache_dir_given_keeps_the_cache(tmp_path):
    """NUMBA_CACHE_DIR, as docs/install.md says, puts the cache there: no warning, the
    compiled kernel written into that folder."""
    site = _readonly_copy(tmp_path)
    env = _env(site)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "nc")
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cache True" in run.stdout and "NumbaCacheWarning" not in run.stderr
    assert list((tmp_path / "nc").rglob("kernels.copy-*.nbi"))


def test_disk_cache_answers_true_where_numba_has_a_folder():
    from rooflab.errors import InputWarning
    from rooflab.probe.cpu import kernels
    from rooflab.probe.cpu.numba_cache import NumbaCacheWarning, disk_cache

    assert issubclass(NumbaCacheWarning, InputWarning)   # the CLI's `warning:` form
    # this checkout's __pycache__ (or ~/.cache/numba) is writable here
    assert disk_cache(kernels._this_file) is True and kernels.CACHE is True
