"""Entry point: run the typer app; turn RooflabError into `error: ...` and exit 2.

Exit codes (cli/exit_codes.py, docs/json.md): 0 ok, 1 a failed gate (`compare
--fail-if-slower`, `report --fail-below`), 2 a user error, 70 a bug in rooflab (traceback),
74 standard output could not be written (a full disk, or closed when the process started:
the environment, neither the input nor rooflab), 130 interrupted. Python's
own exit code for an uncaught exception is 1, which a CI gate would read as a regression:
hence 70. Under `--json` an error (2, 70, 130) also prints one error document on stdout
(cli/json_errors.py).

Ctrl-C is one line and 130 from the moment main() runs: it builds the command tree and
imports every module past the standard library inside its try. What runs before it, the
interpreter's start and this module's imports (rooflab/__init__ keeps them to the error
types), is a few milliseconds.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import warnings
from collections.abc import Callable

from ..errors import InputError, InputWarning, RooflabError
from .exit_codes import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_IOERR, EXIT_USAGE
from .stdout_guard import StdoutWriteError, guard

INTERRUPTED = "error: interrupted; nothing was written"


def main(argv: list[str] | None = None) -> int:
    # SIGTERM (kill, timeout, a batch scheduler) takes Ctrl-C's path: cleanup, one line,
    # exit 143 (review s22 r2 F1); imported here, the standard library only, so that what
    # runs before main() stays the error types
    from ..interrupts import terminate_as_interrupt

    restore = terminate_as_interrupt()
    put_back = _nothing
    try:
        with warnings.catch_warnings():
            # an InputWarning (a suspect field in a kernel file) is a `warning:` line, once
            # per message, not Python's "file:line: InputWarning:" form with a source line
            warnings.simplefilter("default", InputWarning)
            warnings.showwarning = _show_warning
            put_back = _guard_stdout()
            return _run(argv)
    except KeyboardInterrupt:   # Ctrl-C before a verb ran: while rooflab was importing
        return _interrupted()
    finally:
        # sys.stdout as main() found it: its wrapper left in place closed the process's
        # stdout once the caller put sys.__stdout__ back (review s24 r3 F1)
        put_back()
        restore()


def _nothing() -> None:
    pass


@functools.cache
def _command():
    """The click command tree, built once per process, each verb when first named
    (cli/app.py lazy_command). typer's `app(...)` builds it again on every call (walking
    every verb's signature and type hints, ~50 ms), which each in-process main() -- a
    test, a notebook loop -- paid anew. Nothing in the tree depends
    on when it is built: environment variables (ROOFLAB_ON, COLUMNS) and the console are
    read when a verb runs, and callbacks look up their helpers by module name then. What
    registering captures by value (a verb's own function, the `load` given to
    options.profiler_verb) is fixed when the verb is first built: a test replacing one calls
    `_command.cache_clear()`."""
    from .app import lazy_command

    return lazy_command()


class _Version:
    """`rooflab --version` (or -V) alone, answered as the root's eager option answers it
    (cli/app.py _print_version), through _invoke's handling of stdout, without building
    the command tree: importing typer and its pydantic was ~70 of --version's ~130 ms CPU
    (benchmarks/cli_startup.py, session 38). With anything beside it, typer answers."""

    @staticmethod
    def main(args: list[str], prog_name: str, standalone_mode: bool) -> int:
        print_version()
        return 0


def print_version() -> None:
    """The one version line, `rooflab --version`'s both ways (_Version, cli/app.py)."""
    from .. import __version__

    print(f"rooflab {__version__}")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, InputWarning):
        from .common import say

        say("warning", _named(str(message)))
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _run(argv: list[str] | None) -> int:
    import shutil

    from . import json_errors  # the standard library only: watching from the start

    argv = list(sys.argv[1:] if argv is None else argv)
    folder = None
    try:
        with json_errors.watching(argv):
            try:
                # every document this command writes names it: the line as typed (`-` for
                # standard input, not the temporary file it is read from)
                from ..files import written
                from ..files_generator import set_generator

                set_generator(argv)
                from ..files_decode import LAST_READ

                LAST_READ[0] = None   # an earlier main()'s input is not this command's
                # first: a signal while the verb is set up must not name the files of an
                # earlier main() in this process (the Python API, a test run)
                written(clear=True)
                if argv in (["--version"], ["-V"]):   # alone: no command tree (_Version)
                    return _invoke(_Version, argv)
                app = _command()   # inside the try: Ctrl-C while it imports is one line
                _refuse_empty_outputs(argv)
                from .options import forget_env_on, refuse_repeated_on

                forget_env_on()   # an earlier main()'s ROOFLAB_ON is not this command's
                refuse_repeated_on(app, argv)
                from .file_args import read_once, refuse_empty_arguments, saved_inputs

                refuse_empty_arguments(app, argv)

                if read_once(argv):
                    import tempfile

                    folder = tempfile.mkdtemp(prefix="rooflab-stdin-")
                    argv = saved_inputs(app, argv, folder)
                return _invoke(app, argv)
            except RooflabError as exc:
                return _rooflab_error(exc)
            except KeyboardInterrupt:   # Ctrl-C while the verbs were built, or stdin read
                return _interrupted()
    finally:
        from ..files_generator import set_generator
        from .common import set_quiet

        set_generator(None)
        set_quiet(False)
        if folder is not None:
            from .file_args import forget

            shutil.rmtree(folder, ignore_errors=True)
            forget()


# Options naming an output file: an empty name (an unset $OUT) wrote nothing, silently.
_OUTPUT_OPTIONS = ("-o", "--output", "--chart")


def _refuse_empty_outputs(argv: list[str]) -> None:
    """`-o ""` (or `--output=`): refused by every verb, as `plot` already did."""
    for i, arg in enumerate(argv):
        option, eq, value = arg.partition("=")
        empty = (eq and option in _OUTPUT_OPTIONS[1:] and not value) or (
            arg in _OUTPUT_OPTIONS and i + 1 < len(argv) and argv[i + 1] == "")
        if empty:
            raise InputError(f"{option} '': the output file name is empty (an unset "
                             f"variable?); give a file name, or leave {option} out")


def _named(text: str) -> str:
    """A message with the file standard input (or a pipe) was saved to called by what it
    was read from: <stdin>, the pipe's name."""
    from .file_args import named

    return named(text)


def _invoke(app, argv: list[str]) -> int:
    try:
        # In non-standalone mode click returns the code of `raise typer.Exit(code)`.
        rv = app.main(args=argv, prog_name="rooflab", standalone_mode=False)
        if rv == EXIT_INTERRUPTED:
            # typer turns Ctrl-C inside a verb into a silent exit 130; say what happened.
            # Every verb writes its files only at the end, each atomically.
            rv = _interrupted()
        # what is still buffered fails here, inside the try, not in the interpreter's exit
        sys.stdout.flush()
        if isinstance(rv, int) and rv:
            return rv
    except RooflabError as exc:
        return _rooflab_error(exc)
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        # `rooflab ... | head` closed the pipe: not an error of ours. What is still
        # buffered goes to the null device, or the interpreter's flush at exit fails on it
        # again: exit 120 (seen on Windows' EINVAL, review s23 r3 F3)
        _drop_stdout()
        sys.stderr.close()
        return 0
    except SystemExit as exc:
        if exc.code == 1 and _pipe_closed():
            # what click's wrapper held back must not fail the interpreter's flush at exit
            # once main() has put the old stdout back: it goes to the null device
            _drop_stdout()
            return 0
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except StdoutWriteError as exc:
        # `--json > out.json` on a full disk: the environment, not a bug (review 12c N)
        if exc.errno == errno.EBADF:   # started with stdout closed (`>&-`, a cron job)
            print("error: cannot write to standard output (it is closed: the command was "
                  "started with `>&-` or without one); nothing was written there: "
                  "redirect it to a file or to /dev/null", file=sys.stderr)
        else:
            print(f"error: cannot write to standard output ({os.strerror(exc.errno)}); the "
                  f"output is incomplete: free space or write elsewhere", file=sys.stderr)
        _drop_stdout()
        return EXIT_IOERR
    except Exception as exc:  # click usage errors land here in non-standalone mode
        return _click_error(exc, argv)
    return 0


def _rooflab_error(exc: RooflabError) -> int:
    """A user error: one `error:` line (and under --json the document), its exit code."""
    from ..report.term_text import visible
    from . import json_errors
    from .options import env_file_error

    message = env_file_error(_named(str(exc)))
    # a path or name from a file may hold ESC: shown escaped, so it cannot repaint the
    # terminal or fake a line (review s22 r1 F7); the JSON document keeps it as it is
    print(f"error: {visible(message)}", file=sys.stderr)
    json_errors.emit(json_errors.of_exception(exc, message, exc.exit_code, _named))
    return exc.exit_code


def _interrupted(message: str = INTERRUPTED) -> int:
    """Ctrl-C (130) or SIGTERM (143, "terminated"): one line saying which files, if any,
    the command had written before it stopped (a profile saved before its chart, a trace
    kept by --save-trace: review s22 r2 F6)."""
    from ..interrupts import EXIT_TERMINATED, answered, answering, terminated

    done = answering()   # further signals ignored from here: never a second line (s22 h1 H6)
    if done is not None:
        return done
    code = EXIT_TERMINATED if terminated() else EXIT_INTERRUPTED
    answered(code)
    if message == INTERRUPTED:
        message = f"error: {'terminated' if terminated() else 'interrupted'}"
        message += _what_was_written()
    print(message, file=sys.stderr)
    try:
        from . import json_errors

        json_errors.emit(json_errors.document(message.removeprefix("error: "),
                                              json_errors.INTERRUPTED, code))
    except KeyboardInterrupt:   # pressed again while the document was made: the line said it
        pass
    return code


def _what_was_written() -> str:
    try:
        from ..files import written

        done = [_named(str(p)) for p in written()]
    except KeyboardInterrupt:
        done = []
    if not done:
        return "; nothing was written"
    return (f"; {', '.join(done)} {'was' if len(done) == 1 else 'were'} written before it "
            f"stopped, nothing after")


# Write errors that are the place written to, not the program: a full disk or quota, a
# file grown past its limit, a device error, a closed descriptor.
_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF}


def _as_stdout_error(exc: OSError) -> OSError:
    if exc.errno in _OUTPUT_ERRNOS:
        return StdoutWriteError(exc.errno, exc.strerror)
    if _closed_pipe(exc):
        # remembered: rich answers the pipe with SystemExit(1) after pointing fd 1 at the
        # null device, which _pipe_closed cannot recognise by inode on Windows
        _PIPE[0] = True
        if not isinstance(exc, BrokenPipeError):
            return BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
    return exc   # a closed pipe is BrokenPipeError (answered with exit 0)


# Whether a write to stdout met a closed pipe in this main() (reset by _guard_stdout).
_PIPE = [False]


def _windows() -> bool:
    return os.name == "nt"


def _closed_pipe(exc: OSError) -> bool:
    """A write to a pipe whose reader left (`| head`, `| more`): BrokenPipeError, or on
    Windows EINVAL, which its C runtime gives for a closed pipe (CPython issue #79935;
    review s23 r3 F3)."""
    return isinstance(exc, BrokenPipeError) or (_windows() and exc.errno == errno.EINVAL)


def _guard_stdout() -> Callable[[], None]:
    """stdout_guard.guard with this module's error translation (_windows is patched by
    tests); returns what puts the old sys.stdout back."""
    _PIPE[0] = False
    return guard(_as_stdout_error)


def _drop_stdout() -> None:
    """Point stdout at the null device, so the interpreter's own flush at exit does not
    fail again (and print "Exception ignored") with what is still buffered."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _pipe_closed() -> bool:
    """Whether a SystemExit is how a closed stdout (`rooflab specs list | head -1`) was
    answered: rich exits 1 -- our regression code -- after pointing fd 1 at os.devnull,
    click after swapping sys.stdout for its PacifyFlushWrapper. The reader leaving is not
    an error of ours (as BrokenPipeError above)."""
    if _PIPE[0] or type(sys.stdout).__name__ == "PacifyFlushWrapper":
        return True
    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError, AttributeError):
        return False
    return (out.st_dev, out.st_ino) == (null.st_dev, null.st_ino)


def _click_error(exc: Exception, argv: list[str]) -> int:
    """A click/typer usage error -> one `error:` line and the usage, exit 2; Abort -> 130;
    any other exception is a bug of ours: its traceback, one line saying so, exit 70."""
    # typer >= 0.22 raises its own vendored copies of click's exceptions, and newer
    # typers no longer install click at all (a core install has none): take each
    # family that is importable.
    from . import json_errors

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
        return _interrupted("error: aborted")
    if isinstance(exc, usage):
        if type(exc).__name__ == "NoArgsIsHelpError":   # `rooflab ai`: the help
            # typer's rich help printed itself (stdout, like --help) when the error was
            # made, leaving an empty message that exc.show() echoed to stderr as a stray
            # blank line; a plain-text help is in the message
            text = exc.format_message()
            if text.strip():
                print(text)
            return EXIT_USAGE
        # One `error:` line like every other error, then the usage as a hint; a bad
        # number in rooflab's words, not pydantic's (usage_words)
        from .usage_words import usage_message, value_words

        message = usage_message(exc)
        # a bad option value is an input error, as the verb's own check of it (value_words)
        kind = InputError.kind if value_words(exc) else json_errors.USAGE
        print(f"error: {message}", file=sys.stderr)
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            print(f"{ctx.get_usage()}\nsee `{ctx.command_path} --help`",
                  file=sys.stderr)
        json_errors.emit(json_errors.document(message, kind, EXIT_USAGE))
        return EXIT_USAGE
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        # a path past the system's limit (a name over 255 bytes), met by a Path.is_dir()
        # or exists() that raises for it: the user's path, not a bug (review s22 r2 F3)
        name = os.fsdecode(exc.filename) if exc.filename is not None else "a path"
        return _rooflab_error(InputError(
            f"{name}: {exc.strerror} ({len(os.fsencode(os.path.basename(name)))} bytes in "
            f"one name; most filesystems allow 255); give a shorter path"))
    if isinstance(exc, MemoryError):
        # not a bug: an input too large, or a measurement's working set (review s24 r2 F2)
        from .memory_error import out_of_memory

        return _rooflab_error(out_of_memory(argv, exc))
    return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    # The traceback is what a bug report needs (on stderr; under --json stdout gets the
    # error document, unless the verb had printed already: never a second document), and
    # the exit code is not 1, which means "regression" to a gate.
    import traceback

    from . import json_errors

    traceback.print_exception(exc, file=sys.stderr)
    message = (f"internal error in rooflab ({type(exc).__name__}): this is a bug, not a "
               f"problem with your input; please report it with the traceback above")
    print(f"error: {message}", file=sys.stderr)
    json_errors.emit(json_errors.document(message, json_errors.INTERNAL, EXIT_INTERNAL))
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
