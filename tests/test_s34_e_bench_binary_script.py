"""Review s34 E: `bench --run` given a binary file (a compiled program, a .pyc, a zip) as its
script. Before: 'error: x.py: the script raised SyntaxError: ...' (it raised nothing: it
does not compile, and Python's error has no line for a file with NUL bytes). Now it says
the script does not compile, as a syntax error with a line does; exit 2, no traceback."""

from __future__ import annotations

from rooflab.cli.main import main


def test_a_binary_script_does_not_compile(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {script}: the script does not compile: SyntaxError: ")
    assert "null bytes" in err and "Traceback" not in err
