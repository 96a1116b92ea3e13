"""`rooflab ARGS` run in this process, answered like subprocess.run(..., capture_output=True,
text=True): for tests about what the CLI prints and exits with, not about the process
itself (pipes, a terminal, `python -m`, interpreter start-up stay subprocesses). A
subprocess re-imports numpy, typer and rooflab, ~0.75 s CPU each (review s18 r1 F3)."""

from __future__ import annotations

import contextlib
import io
import subprocess

from rooflab.cli.main import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["rooflab", *args], code, out.getvalue(),
                                       err.getvalue())


def json_of(capsys, argv) -> dict:
    """The --json document `rooflab ARGV` prints (in this process), asserting exit 0."""
    import json

    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def one_line_error(capsys, argv) -> str:
    """The error `rooflab ARGV` says: exit 2, one `error:` line, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def json_error(capsys, argv: list[str]) -> tuple[dict, str]:
    """(the --json document's "error" object, the `error:` line on stderr) of `rooflab ARGV
    --json` (in this process), asserting exit 2."""
    import json

    assert main(argv + ["--json"]) == 2
    got = capsys.readouterr()
    (line,) = [x for x in got.err.splitlines() if x.startswith("error: ")]
    return json.loads(got.out)["error"], line


def quiet_out(args: list[str]) -> str:
    """What `rooflab ARGS` prints on stdout (in this process), asserting exit 0; its notes
    on stderr are dropped."""
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout
