"""Entry point: run the typer app; turn RooflabError into `error: ...` and exit 2.

Exit codes (cli/common.py, docs/json.md): 0 ok, 1 a `compare --fail-if-slower` regression,
2 a user error, 70 a bug in rooflab (traceback), 130 interrupted. Python's own exit code
for an uncaught exception is 1, which a CI gate would read as a regression: hence 70.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings

from ..errors import InputWarning, RooflabError
from .common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE

INTERRUPTED = "error: interrupted; nothing was written"


def main(argv: list[str] | None = None) -> int:
    with warnings.catch_warnings():
        # an InputWarning (a suspect field in a kernel file) is a `warning:` line, once per
        # message, not Python's "file:line: InputWarning:" form with a source line
        warnings.simplefilter("default", InputWarning)
        warnings.showwarning = _show_warning
        return _run(argv)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, InputWarning):
        print(f"warning: {message}", file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _run(argv: list[str] | None) -> int:
    from .app import build_app

    app = build_app()
    try:
        # In non-standalone mode click returns the code of `raise typer.Exit(code)`.
        rv = app(args=argv, prog_name="rooflab", standalone_mode=False)
        if rv == EXIT_INTERRUPTED:
            # typer turns Ctrl-C inside a verb into a silent exit 130; say what happened.
            # Every verb writes its files only at the end, each atomically.
            print(INTERRUPTED, file=sys.stderr)
        if isinstance(rv, int) and rv:
            return rv
    except RooflabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `rooflab ... | head` closed the pipe: not an error of ours.
        sys.stderr.close()
        return 0
    except SystemExit as exc:
        if exc.code == 1 and _pipe_closed():
            return 0
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # click usage errors land here in non-standalone mode
        return _click_error(exc)
    return 0


def _pipe_closed() -> bool:
    """Whether a SystemExit is how a closed stdout (`rooflab specs list | head -1`) was
    answered: rich exits 1 -- our regression code -- after pointing fd 1 at os.devnull,
    click after swapping sys.stdout for its PacifyFlushWrapper. The reader leaving is not
    an error of ours (as BrokenPipeError above)."""
    if type(sys.stdout).__name__ == "PacifyFlushWrapper":
        return True
    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError, AttributeError):
        return False
    return (out.st_dev, out.st_ino) == (null.st_dev, null.st_ino)


def _click_error(exc: Exception) -> int:
    """A click/typer usage error -> one `error:` line and the usage, exit 2; Abort -> 130;
    any other exception is a bug of ours: its traceback, one line saying so, exit 70."""
    # typer >= 0.22 raises its own vendored copies of click's exceptions, and newer
    # typers no longer install click at all (a core install has none): take each
    # family that is importable.
    aborts: tuple[type, ...] = ()
    usage: tuple[type, ...] = ()
    try:
        import click

        aborts, usage = (click.exceptions.Abort,), (click.ClickException,)
    except ImportError:
        pass
    try:
        from typer import exceptions as typer_exc
        from typer._click import exceptions as vendored

        aborts += (typer_exc.Abort,)
        usage += (vendored.ClickException,)
    except (ImportError, AttributeError):
        pass
    if isinstance(exc, aborts):
        print("error: aborted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if isinstance(exc, usage):
        if type(exc).__name__ == "NoArgsIsHelpError":   # `rooflab ai`: the help
            # typer's rich help printed itself (stdout, like --help) when the error was
            # made, leaving an empty message that exc.show() echoed to stderr as a stray
            # blank line; a plain-text help is in the message
            text = exc.format_message()
            if text.strip():
                print(text)
            return EXIT_USAGE
        # One `error:` line like every other error, then the usage as a hint.
        print(f"error: {exc.format_message()}", file=sys.stderr)
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            print(f"{ctx.get_usage()}\nsee `{ctx.command_path} --help`",
                  file=sys.stderr)
        return EXIT_USAGE
    return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    # The traceback is what a bug report needs; stdout stays empty (a `--json` reader gets
    # no half document), and the exit code is not 1, which means "regression" to a gate.
    traceback.print_exception(exc, file=sys.stderr)
    print(f"error: internal error in rooflab ({type(exc).__name__}): this is a bug, not a "
          f"problem with your input; please report it with the traceback above",
          file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
