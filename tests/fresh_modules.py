"""The modules a fresh interpreter holds after running some code: the startup tests' probe
(which imports stay out of `rooflab --help`, an error path, `import rooflab`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after `code` (its stdout and stderr swallowed)."""
    probe = (f"import io, json, sys, contextlib\n"
             f"with contextlib.redirect_stdout(io.StringIO()), "
             f"contextlib.redirect_stderr(io.StringIO()):\n"
             f"    {code}\n"
             f"print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))
