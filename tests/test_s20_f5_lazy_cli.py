"""`rooflab --help` and `rooflab VERB --help` import no verb they do not show (review s20
r5 F6): the root help cost 1.0 s of CPU and each verb's 1.1-1.5 s, as cli/app.py imported
all 17 verb modules and `import rooflab` imported the model with numpy. Asserted by what
a fresh interpreter has imported (sys.modules), not by timing."""

from __future__ import annotations

import json

import typer.main
from fresh_modules import modules_after

import rooflab
from rooflab.cli.app import build_app

HEAVY = ("numpy", "rooflab.model", "rooflab.workloads", "rooflab.workloads.llm")


_imported_after = modules_after


def test_import_rooflab_and_the_cli_app_leave_numpy_and_the_workloads_out():
    for code in ("import rooflab", "import rooflab.cli.app", "import rooflab.cli.main"):
        mods = _imported_after(code)
        assert not mods & set(HEAVY), (code, sorted(mods & set(HEAVY)))


def test_root_help_imports_no_verb_module():
    from rooflab.cli.verbs import VERBS

    mods = _imported_after("from rooflab.cli.main import main; assert main(['--help']) == 0")
    assert not mods & set(HEAVY)
    verbs = {f"rooflab.cli.{module}" for module, _ in VERBS.values()}
    assert not mods & verbs, sorted(mods & verbs)


def test_a_verbs_help_imports_that_verb_only():
    from rooflab.cli.verbs import VERBS

    for verb, module in (("llm", "llm"), ("scale", "scale"), ("choose", "choose"),
                         ("specs", "specs")):
        mods = _imported_after(f"from rooflab.cli.main import main; "
                               f"assert main(['{verb}', '--help']) == 0")
        assert f"rooflab.cli.{module}" in mods
        assert not mods & set(HEAVY), (verb, sorted(mods & set(HEAVY)))
        others = {f"rooflab.cli.{m}" for m, _ in VERBS.values() if m != module}
        assert not mods & others, (verb, sorted(mods & others))


def test_the_static_verb_list_is_the_eager_apps():
    # cli/verbs.py lists each verb with its module and the line `rooflab --help` shows:
    # the same names, order and lines as the app with every module imported
    from rooflab.cli.verbs import VERBS

    eager = typer.main.get_command(build_app())
    names = eager.list_commands(None)
    assert list(VERBS) == names
    for name in names:
        cmd = eager.commands[name]
        line = cmd.short_help or " ".join(cmd.help.split("\n\n")[0].split())
        assert VERBS[name][1] == line, name
        assert name in {i.name for i in _registered(VERBS[name][0])}, name


def _registered(module: str):
    import importlib

    app = typer.Typer()
    importlib.import_module(f"rooflab.cli.{module}").register(app)
    return [*app.registered_commands, *app.registered_groups]


def test_root_help_reads_as_before(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    from rooflab.cli.main import main

    assert main(["--help"]) == 0
    lazy = capsys.readouterr().out
    eager = typer.main.get_command(build_app())
    try:
        eager.main(["--help"], prog_name="rooflab", standalone_mode=False)
    except SystemExit:
        pass
    assert lazy == capsys.readouterr().out
    assert "│ choose   Rank devices for a kernel set" in lazy and "│ ai " in lazy


def test_each_verb_is_built_once_and_a_typo_still_gets_did_you_mean(capsys):
    from rooflab.cli.app import lazy_command
    from rooflab.cli.main import _command, main
    from rooflab.cli.verbs import VERBS

    root = _command()
    assert main(["ai", "matmul", "64", "64", "64", "--json"]) == 0
    capsys.readouterr()
    first = root.commands["ai"]
    assert main(["ai", "matmul", "64", "64", "64", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["flop"] == 2 * 64**3                # 2 FLOP per multiply-add
    assert root.commands["ai"] is first
    assert "lm" not in root.commands and "llm" in root.commands
    assert main(["lm"]) == 2
    assert "No such command 'lm'. Did you mean 'llm'?" in capsys.readouterr().err
    # a fresh tree lists every verb without building one
    fresh = lazy_command()
    assert list(fresh.commands) == list(VERBS)
    assert not any(fresh.commands.made(v) for v in VERBS)


def test_the_public_api_is_unchanged():
    from rooflab import Kernel, Roof, analyze, load_roof, measure  # noqa: F401

    names = dir(rooflab)
    assert len(rooflab.__all__) == len(set(rooflab.__all__))
    for name in rooflab.__all__:
        assert name in names
        assert getattr(rooflab, name) is not None
    # the README's kernel: 2.2 GFLOP and 2.2 GB in 15 ms on a T4 (320 GB/s): 146.7 GB/s
    # of 320 = 45.8 % of its roof
    k = Kernel("step", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)
    assert round(analyze(load_roof("T4"), [k]).points[0].percent_of_roof, 1) == 45.8
    assert isinstance(load_roof("T4"), Roof)
