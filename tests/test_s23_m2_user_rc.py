"""An unwritable matplotlib cache folder no longer hides the user's matplotlibrc
(review s23 h2 F3): rooflab's quiet MPLCONFIGDIR moved the config folder too, so the
font families a user named there (a CJK font) were dropped."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
from rooflab.report import chart_rc
moved = chart_rc.quiet_config_dir()
import matplotlib
print(moved is not None)
print(matplotlib.rcParams['font.sans-serif'][0])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG folders: Linux")
def test_user_rc_read_when_only_the_cache_is_unwritable(tmp_path):
    cfg = tmp_path / "cfg" / "matplotlib"
    cfg.mkdir(parents=True)
    (cfg / "matplotlibrc").write_text("font.sans-serif: STIXGeneral, DejaVu Sans\n",
                                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "MATPLOTLIBRC")}
    # /proc refuses every mkdir, root's included: the cache folder cannot be made
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               XDG_CACHE_HOME="/proc/nonexistent/cache")
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120, check=True)
    moved, family = run.stdout.splitlines()
    assert moved == "True"             # still redirected: no "mkdir -p failed" lines
    assert "mkdir" not in run.stderr
    assert family == "STIXGeneral"     # was DejaVu Sans: the user's rc went unread
