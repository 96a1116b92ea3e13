"""The lazy `import rooflab` and the lazy CLI tree, against what they replaced.

- review s20 x2 F9: `import rooflab; rooflab.model` was an AttributeError once the model
  became lazy (it was bound on import before, with `units`); every subpackage is now an
  attribute, imported on first use, and `import rooflab` alone still imports no numpy.
- review s20 x2 F12: cli/verbs.py is the one verb list (app.VERB_MODULES is derived from
  it), and the tree users run (lazy_command) is walked and compared with build_app's."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import types

import typer
import typer.main

import rooflab


def _fresh(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_every_subpackage_is_an_attribute_after_import_rooflab():
    got = _fresh(
        "import json, sys, types, rooflab\n"
        "light = 'numpy' not in sys.modules\n"
        "roof = rooflab.model.Roof\n"
        "print(json.dumps({'light': light, 'roof': roof.__module__,\n"
        "    'same': rooflab.model.Kernel is rooflab.Kernel,\n"
        "    'units': rooflab.units.__name__, 'resolve': rooflab.hardware.__name__,\n"
        "    'subs': sorted(k for k in rooflab._SUBPACKAGES\n"
        "                   if isinstance(getattr(rooflab, k), types.ModuleType))}))")
    assert got["light"] is True                      # the import itself stays numpy-free
    assert got["roof"] == "rooflab.model.ceiling" and got["same"] is True
    assert (got["units"], got["resolve"]) == ("rooflab.units", "rooflab.hardware")
    packages = {m.name for m in pkgutil.iter_modules(rooflab.__path__) if m.ispkg}
    assert packages == {"bench", "cli", "hardware", "ingest", "model", "probe", "report",
                        "workloads"}
    assert set(got["subs"]) == packages | {"units"}
    for name in packages | {"units"}:
        assert name in dir(rooflab)


def test_the_verb_modules_are_the_verb_lists():
    from rooflab.cli import app
    from rooflab.cli.verbs import VERBS

    assert app.VERB_MODULES == (
        "demo", "probe", "bench", "plot", "report", "ncu", "torch_cmd", "rocprof", "llm",
        "compare", "whatif", "choose", "scale", "train", "likwid", "perf", "docs_cmd", "specs",
        "ai")
    assert app.VERB_MODULES == tuple(module for module, _ in VERBS.values())


def test_a_verb_added_to_verbs_py_alone_reaches_both_trees(capsys):
    # a new verb is one entry in cli/verbs.py: build_app (the tree tests walk) gets it as
    # the CLI does (before, build_app read its own list and missed it)
    from rooflab.cli import app, verbs

    fake = types.ModuleType("rooflab.cli._n3_fake_verb")

    def register(a) -> None:
        @a.command("n3fake")
        def n3fake(n: int = typer.Option(2, "--n")) -> None:
            """A verb for this test."""
            print(n * 21)

    fake.register = register
    sys.modules[fake.__name__] = fake
    verbs.VERBS["n3fake"] = ("_n3_fake_verb", "A verb for this test.")
    try:
        mod = importlib.reload(app)
        eager = typer.main.get_command(mod.build_app())
        assert "n3fake" in eager.commands
        lazy = mod.lazy_command()
        assert "n3fake" in list(lazy.commands)
        lazy.main(["n3fake", "--n", "2"], prog_name="rooflab", standalone_mode=False)
        assert capsys.readouterr().out.strip() == "42"
    finally:
        del verbs.VERBS["n3fake"]
        del sys.modules[fake.__name__]
        importlib.reload(app)


def _walk(command, path=()):
    """(path, sorted option strings, help) for a command and every subcommand."""
    yield path, sorted(o for p in command.params for o in (*p.opts, *p.secondary_opts)), \
        command.help
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


def test_the_lazy_tree_users_run_is_the_eager_tree_plus_quiet():
    from rooflab.cli.app import build_app, lazy_command
    from rooflab.cli.verbs import VERBS

    eager = typer.main.get_command(build_app())
    lazy = lazy_command()
    lazy_rows, eager_rows = [], []
    for verb in VERBS:
        lazy_rows += list(_walk(lazy.commands[verb], (verb,)))
        eager_rows += list(_walk(eager.commands[verb], (verb,)))
    assert [r[0] for r in lazy_rows] == [r[0] for r in eager_rows]
    assert len(lazy_rows) >= 17 + 3 + 3          # the verbs, specs' and ai's subcommands
    for (path, lazy_opts, lazy_help), (_, eager_opts, eager_help) in zip(
            lazy_rows, eager_rows, strict=True):
        # every command the user runs takes -q/--quiet (the verb's own or the root's)
        assert {"-q", "--quiet"} <= set(lazy_opts), path
        assert set(lazy_opts) - {"-q", "--quiet"} == set(eager_opts) - {"-q", "--quiet"}, path
        assert lazy_help == eager_help, path
