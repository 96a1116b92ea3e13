"""Run a user's script as `__main__`: the one way `rooflab torch --run` and `rooflab bench
--run` do it.

The script runs in this process with `sys.argv = [script, *args]` and its folder first on
`sys.path` (both restored after, whatever happens), its prints sent to stderr when asked (so
`--json` output stays clean). A failure is the script's: `script_error` turns its exception
into 'script.py:12: the script raised ValueError: ...' (the deepest line of the script in
the traceback), a compile error into 'script.py:2: the script does not compile: ...', and
can add the traceback frames of the script's own files (rooflab's, runpy's and the
libraries' frames left out). It sits in bench/ (layer 5) so that bench.user_script and
ingest.torch_run (layer 6) both import it downward, as ../shared/design/ARCHITECTURE.md
("Layers") orders them.
"""

from __future__ import annotations

import contextlib
import runpy
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, ProbeError


def check_script(script: str) -> None:
    """InputError unless `script` is a file (a folder and a missing path are told apart)."""
    if not Path(script).is_file():
        what = "a folder, not a script" if Path(script).is_dir() else "no such script"
        raise InputError(f"--run {script}: {what}; give the path of a Python file")


def run_as_main(script: str, args: Sequence[str] = (), *, quiet_stdout: bool = False,
                frames: bool = True) -> bool:
    """Run `script` once as `__main__`; True when it ended with `sys.exit(0)` (or None).

    quiet_stdout: send the script's prints to stderr. ProbeError when the script raises
    (`script_error`, with the script's frames when `frames`) or exits with a non-zero
    status; KeyboardInterrupt passes through.
    """
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [script, *args]
    sys.path.insert(0, str(Path(script).resolve().parent))
    redirect = (contextlib.redirect_stdout(sys.stderr) if quiet_stdout
                else contextlib.nullcontext())
    try:
        with redirect:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:   # a script may end with sys.exit(0)
        if exc.code not in (None, 0):
            raise ProbeError(f"{script} exited with status {exc.code}; nothing to "
                             f"analyse") from None
        return True
    except Exception as exc:   # the user's code failed
        raise script_error(exc, script, frames=frames) from None
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
    return False


def _own_frames(exc: BaseException, script: str) -> list[traceback.FrameSummary]:
    """The traceback frames in the script or in files beside it (the user's modules)."""
    home = Path(script).resolve().parent
    # is_file: runpy's own frames are named '<frozen runpy>', which resolves into the cwd
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if Path(f.filename).is_file() and Path(f.filename).resolve().parent == home]


def script_error(exc: BaseException, script: str, *, frames: bool = True) -> ProbeError:
    """'script.py:12: the script raised ValueError: ...' (the deepest frame of the script
    itself), or 'script.py:2: the script does not compile: ...' with the offending line;
    then, when `frames`, the traceback frames of the script's own files."""
    own = _own_frames(exc, script)
    mine = [f for f in own if Path(f.filename).resolve() == Path(script).resolve()]
    where = f"{script}:{mine[-1].lineno}" if mine else script
    text = f"{where}: the script raised {type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError) and not own:
        # raised while compiling: no frame of the script; the error itself has the line
        # (none for a file with NUL bytes, a binary file: review s34 E)
        where = f"{exc.filename or script}" + (f":{exc.lineno}" if exc.lineno else "")
        text = f"{where}: the script does not compile: {type(exc).__name__}: {exc.msg}"
        if exc.text:
            text += f"\n    {exc.text.rstrip()}"
    if own and frames:
        lines = "".join(traceback.format_list(own)).rstrip()
        text += f"\nTraceback (the script's frames):\n{lines}"
    return ProbeError(text)
