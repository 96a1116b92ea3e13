"""Review s26 r1 F1: the probe kernels' `cache=True` wrote numba's compiled code into the
`__pycache__` beside probe/cpu/kernels.py -- inside site-packages for an installed rooflab.
pip does not track those files: `pip uninstall rooflab` left 31 of them, and `import rooflab`
then gave an empty namespace package. Now, unless NUMBA_CACHE_DIR is set, the kernels cache
in a per-user folder ($XDG_CACHE_HOME/rooflab/numba, else ~/.cache/rooflab/numba), and with
none writable they compile without a disk cache (one warning), never into the install.

Each case runs in a subprocess on a writable copy of the package (so numba *could* write
beside the source, as it did into a pip install), with HOME / XDG_CACHE_HOME in tmp_path.
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
from rooflab.probe.cpu import numba_cache  # noqa: E402

SCRIPT = """
import numpy as np
from numba.core import config
from rooflab.probe.cpu import kernels as K, kernels_scalar as KS
a, b = np.zeros(64), np.arange(64.0)
print("copy", K.copy(a, b, 2), a[63])
print("cache", K.CACHE)
print("numba CACHE_DIR after", repr(config.CACHE_DIR))
"""


def _package_copy(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(Path(rooflab.__file__).parent, site / "rooflab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _run(tmp_path: Path, **env_set: str) -> tuple[subprocess.CompletedProcess, Path]:
    site = _package_copy(tmp_path)
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1", **env_set)
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "copy 0.0 63.0" in run.stdout      # the kernel ran: a = b
    return run, site


def _numba_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_kernels_cache_under_xdg_cache_home_not_in_the_package(tmp_path):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    run, site = _run(tmp_path, HOME=str(home), XDG_CACHE_HOME=str(xdg))
    assert "cache True" in run.stdout and "NumbaCacheWarning" not in run.stderr
    assert _numba_files(site) == []                       # nothing beside the source
    assert not (site / "rooflab" / "probe" / "cpu" / "__pycache__").exists()
    cached = _numba_files(xdg / "rooflab" / "numba")
    assert any(p.name.startswith("kernels.copy-") and p.suffix == ".nbi" for p in cached)
    assert _numba_files(home) == []                       # XDG_CACHE_HOME wins over ~/.cache
    # only rooflab's kernels were pointed there: numba's own setting is back as it was,
    # so a user's cache=True functions in the same process keep numba's defaults
    assert "numba CACHE_DIR after ''" in run.stdout


def test_without_xdg_cache_home_the_cache_is_in_home_dot_cache(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    run, site = _run(tmp_path, HOME=str(home))
    assert "cache True" in run.stdout
    assert _numba_files(site) == []
    assert list((home / ".cache" / "rooflab" / "numba").rglob("kernels.copy-*.nbi"))


def test_unwritable_home_compiles_without_a_cache_and_writes_nothing_into_the_package(
        tmp_path):
    """HOME=/dev/null (no folder can be made under it), no XDG_CACHE_HOME: numba would have
    fallen back to the package's own __pycache__ (writable here, as in a user-owned venv);
    now no disk cache, said once with the folder it tried and the way out."""
    run, site = _run(tmp_path, HOME="/dev/null")
    assert "cache False" in run.stdout
    assert _numba_files(site) == []
    assert run.stderr.count("NumbaCacheWarning") == 1
    assert "/dev/null/.cache/rooflab/numba not writable" in run.stderr
    assert "export NUMBA_CACHE_DIR=" in run.stderr


def test_numba_cache_dir_set_by_the_user_is_respected(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    run, site = _run(tmp_path, HOME=str(home), NUMBA_CACHE_DIR=str(tmp_path / "nc"))
    assert "cache True" in run.stdout
    assert list((tmp_path / "nc").rglob("kernels.copy-*.nbi"))
    assert _numba_files(home) == [] and _numba_files(site) == []
    assert f"numba CACHE_DIR after {str(tmp_path / 'nc')!r}" in run.stdout


def test_an_unwritable_numba_cache_dir_does_not_send_the_cache_into_the_package(tmp_path):
    # numba falls back to the __pycache__ beside the kernels when NUMBA_CACHE_DIR cannot
    # be written (/proc/nope, even as root): the install again (review s26 v3 F3)
    home = tmp_path / "home"
    home.mkdir()
    run, site = _run(tmp_path, HOME=str(home), NUMBA_CACHE_DIR="/proc/nope")
    assert "cache True" in run.stdout
    assert _numba_files(site) == []
    assert list((home / ".cache" / "rooflab" / "numba").rglob("kernels.copy-*.nbi"))
    assert "NUMBA_CACHE_DIR=/proc/nope is not writable" in run.stderr


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG layout: Linux/BSD")
@pytest.mark.parametrize("xdg, expected", [
    ("/x/cache", "/x/cache/rooflab/numba"),
    ("", "/h/.cache/rooflab/numba"),
    ("relative/cache", "/h/.cache/rooflab/numba"),   # XDG: a relative path is ignored
])
def test_user_cache_dir_follows_xdg(monkeypatch, xdg, expected):
    monkeypatch.setenv("HOME", "/h")
    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert numba_cache.user_cache_dir() == Path(expected)
