"""Every long option of every verb and subcommand, for the sweeps that give each the same bad
text (tests/test_s34_c_bad_numbers.py: 'x'; tests/test_s34_f_finite_options.py: inf/nan)."""

from __future__ import annotations


def _leaves(cmd, path):
    subs = getattr(cmd, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _leaves(sub, [*path, name])
    else:
        yield path, cmd


def long_options():
    """(verb path, '--option', click parameter) for each parameter with a long option name."""
    import typer.main

    from rooflab.cli.app import build_app

    root = typer.main.get_command(build_app())
    for path, cmd in _leaves(root, []):
        for p in cmd.params:
            opts = [o for o in getattr(p, "opts", ()) if o.startswith("--")]
            if opts:
                yield path, opts[0], p
