"""`rooflab torch --run s.py -q` and `bench --run s.py -q`: the arguments after the script
are the script's, its -q too, as before every verb took -q (review s20 x2 F10: the
script silently lost its -q and rooflab went quiet). A -q before the script is rooflab's;
other rooflab options after the script (--json) stay rooflab's, as they always were."""

from __future__ import annotations

import pytest

from rooflab.cli import common
from rooflab.errors import InputError


@pytest.fixture
def script_calls(monkeypatch, tmp_path):
    """The script runners replaced: each records (args, rooflab quiet?, --json?) and stops
    with an error, so nothing runs."""
    calls = []

    def torch_run(script, args, *, trace_path=None, quiet_stdout=False):
        calls.append((list(args), common.is_quiet(), quiet_stdout))
        raise InputError("stopped by the test")

    def bench_run(script, args, *, on, output, json_out):
        calls.append((list(args), common.is_quiet(), json_out))
        raise InputError("stopped by the test")

    monkeypatch.setattr("rooflab.ingest.torch_run.run_script", torch_run)
    monkeypatch.setattr("rooflab.cli.bench.bench_script", bench_run)
    script = tmp_path / "s.py"
    script.write_text("import sys\nprint(sys.argv)\n")
    monkeypatch.chdir(tmp_path)
    return calls


@pytest.mark.parametrize("verb", ["torch", "bench"])
@pytest.mark.parametrize(("argv", "script_args", "quiet"), [
    (["--run", "s.py", "-q", "--steps", "3"], ["-q", "--steps", "3"], False),
    (["--run=s.py", "--steps", "3", "--quiet"], ["--steps", "3", "--quiet"], False),
    (["--run", "s.py", "-qv"], ["-qv"], False),
    (["-q", "--run", "s.py", "--steps", "3"], ["--steps", "3"], True),
    (["--run", "s.py", "--", "-q"], ["-q"], False),
])
def test_a_flag_after_the_script_is_the_scripts(verb, argv, script_args, quiet,
                                                script_calls, capsys):
    from rooflab.cli.main import main

    assert main([verb, *argv]) == 2
    assert capsys.readouterr().err.strip() == "error: stopped by the test"
    assert script_calls == [(script_args, quiet, False)]


def test_rooflab_options_after_the_script_stay_rooflabs(script_calls, capsys):
    from rooflab.cli.main import main

    assert main(["torch", "--run", "s.py", "-q", "--json", "--", "--steps", "3"]) == 2
    assert script_calls == [(["-q", "--steps", "3"], False, True)]


def test_quiet_on_a_trace_is_still_rooflabs(tmp_path, capsys):
    from rooflab.cli.main import main

    # no --run: -q anywhere is rooflab's (it is no script argument); the missing trace is
    # the error, not "unexpected arguments -q"
    assert main(["torch", str(tmp_path / "none.json"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "unexpected arguments" not in err and "none.json" in err
