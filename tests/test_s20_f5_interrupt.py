"""Ctrl-C while rooflab starts (review s20 r5 F7): `error: interrupted; nothing was written`
and exit 130, no traceback, also during the imports and the building of the command tree.
It printed 12-56 lines of `Traceback ... KeyboardInterrupt` in the first ~1.5 s: inside
numpy's import under `import rooflab`, and in cli/main.py's build of the app, which ran
before the try that answers Ctrl-C.

The SIGINT is sent from inside the import of a named module (an import hook in a fresh
interpreter running what the `rooflab` script runs), so the test is the same on a loaded
machine as on a quiet one."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

ONE_LINE = "error: interrupted; nothing was written\n"

RUNNER = textwrap.dedent("""
    import importlib.abc, os, signal, sys

    TARGET = sys.argv[1]

    class CtrlC(importlib.abc.MetaPathFinder):
        sent = False

        def find_spec(self, name, path, target=None):
            if name == TARGET and not CtrlC.sent:   # the user presses Ctrl-C once
                CtrlC.sent = True
                os.kill(os.getpid(), signal.SIGINT)
            return None

    sys.meta_path.insert(0, CtrlC())
    sys.argv = ["rooflab", *sys.argv[2:]]
    from rooflab.cli.main import main   # as the console script does
    sys.exit(main())
""")


def _interrupted_at(module: str, *argv: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUNNER, module, *argv], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("module", [
    "typer",                 # the command tree's first import (cli/main.py _command)
    "rooflab.cli.app",       # the app module
    "rooflab.cli.llm",       # the verb's module, imported when `llm` is looked up
    "rooflab.workloads.llm.analysis",  # the verb's work (was numpy, which llm no longer loads)
])
def test_ctrl_c_during_an_import_is_one_line_and_130(module, tmp_path):
    out = tmp_path / "out.json"
    done = _interrupted_at(module, "llm", "llama-3-8b", "--on", "T4", "-o", str(out),
                           cwd=tmp_path)
    assert done.returncode == 130, done.stderr
    assert done.stderr == ONE_LINE
    assert not out.exists() and list(tmp_path.iterdir()) == []   # nothing written


def test_ctrl_c_during_help_is_one_line_and_130():
    done = _interrupted_at("rich.console", "--help")
    assert (done.returncode, done.stderr) == (130, ONE_LINE)


def test_under_json_the_interrupted_document_is_printed_too():
    done = _interrupted_at("typer", "llm", "llama-3-8b", "--on", "T4", "--json")
    assert (done.returncode, done.stderr) == (130, ONE_LINE)
    doc = json.loads(done.stdout)
    assert doc["error"]["kind"] == "interrupted" and doc["error"]["exit_code"] == 130


def test_before_main_only_the_standard_library_and_the_error_types_are_imported():
    # what the console script imports before main() runs, where no try can answer Ctrl-C
    code = ("import sys; before = set(sys.modules); import rooflab.cli.main; "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    new = set(done.stdout.split())
    ours = {m for m in new if m.split(".")[0] == "rooflab"}
    # stdout_guard: main()'s own stdout wrapper, the standard library only (s24 r3 F1)
    assert ours == {"rooflab", "rooflab.errors", "rooflab.cli", "rooflab.cli.main",
                    "rooflab.cli.exit_codes", "rooflab.cli.stdout_guard"}
    others = {m.split(".")[0] for m in new - ours}
    assert others <= set(sys.stdlib_module_names) | {"_distutils_hack"}, sorted(
        others - set(sys.stdlib_module_names))
