"""ingest.script_run: the one way `rooflab torch --run` and `rooflab bench --run` run a script."""

import sys
from pathlib import Path

import pytest

from rooflab.bench.script_run import check_script, run_as_main
from rooflab.errors import InputError, ProbeError


def test_argv_and_path_restored_after_a_script_that_raises(tmp_path, capsys):
    helper = tmp_path / "helper.py"
    helper.write_text("def boom(arg):\n    raise ValueError(f'bad {arg}')\n")
    script = tmp_path / "bad.py"
    script.write_text("import sys\nimport helper\nprint('hello')\nhelper.boom(sys.argv[1])\n")
    argv, path = list(sys.argv), list(sys.path)
    with pytest.raises(ProbeError) as info:
        run_as_main(str(script), ["x"], quiet_stdout=True)
    assert sys.argv == argv and sys.path == path
    sys.modules.pop("helper", None)
    text = str(info.value)
    # the deepest line of the script itself, then the frames of the script's folder only
    assert text.startswith(f"{script}:4: the script raised ValueError: bad x")
    assert "line 4, in <module>" in text and "line 2, in boom" in text
    assert "runpy" not in text and "script_run.py" not in text
    with pytest.raises(ProbeError) as info:
        run_as_main(str(script), ["x"], frames=False)
    assert "Traceback" not in str(info.value)
    sys.modules.pop("helper", None)
    out = capsys.readouterr()
    assert out.err.startswith("hello") and out.out == "hello\n"   # quiet_stdout: to stderr


def test_exit_status_and_missing_script(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys\nsys.exit(int(sys.argv[1]))\n")
    assert run_as_main(str(script), ["0"]) is True
    with pytest.raises(ProbeError, match="exited with status 3; nothing to analyse"):
        run_as_main(str(script), ["3"])
    script.write_text("x = 1\n")
    assert run_as_main(str(script)) is False
    with pytest.raises(InputError, match="a folder, not a script"):
        check_script(str(tmp_path))
    with pytest.raises(InputError, match="no such script"):
        check_script(str(Path(tmp_path, "nope.py")))
