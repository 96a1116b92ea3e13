"""Entry point: run the typer app; turn RooflabError into `error: ...` and exit 2."""

from __future__ import annotations

import sys

from ..errors import RooflabError

INTERRUPTED = "error: interrupted; nothing was written"


def main(argv: list[str] | None = None) -> int:
    from .app import build_app

    app = build_app()
    try:
        # In non-standalone mode click returns the code of `raise typer.Exit(code)`.
        rv = app(args=argv, prog_name="rooflab", standalone_mode=False)
        if rv == 130:
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
        return 130
    except BrokenPipeError:
        # `rooflab ... | head` closed the pipe: not an error of ours.
        sys.stderr.close()
        return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # click usage errors land here in non-standalone mode
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
            return 130
        if isinstance(exc, usage):
            if type(exc).__name__ == "NoArgsIsHelpError":   # `rooflab ai`: the help
                exc.show()
                return 2
            # One `error:` line like every other error, then the usage as a hint.
            print(f"error: {exc.format_message()}", file=sys.stderr)
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                print(f"{ctx.get_usage()}\nsee `{ctx.command_path} --help`",
                      file=sys.stderr)
            return 2
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
