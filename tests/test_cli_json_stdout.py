"""What a CI script reads from rooflab: `--json` stdout that is JSON and nothing else, the
same bytes for the same input, no escape codes in a pipe, `python -m rooflab` the same.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rooflab.cli.main import main

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-7](;[0-9]+)*m")     # an ANSI foreground colour
ESCAPE = "\x1b["


def _gpp(name: str) -> str:
    path = GPP / name
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} absent (CI lays ../shared beside the clone)")
    return str(path)


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True,
                          text=True, env=full, timeout=120)


@pytest.mark.parametrize("args, warns", [
    # a failed launch's file is skipped with a warning, named in the JSON's `skipped`
    (["ncu", "{output1.csv}", "{output8.csv}", "--json"], "(file skipped)"),
    # plot warns about the compute capability and the ceilings it leaves out
    (["plot", "{output1.csv}", "--on", "H200 SXM", "--json"], "compute capability 8.9"),
    (["report", "{output1.ncu-rep}", "--json"], None),
    (["whatif", "{output1.csv}", "--on", "H200 SXM", "--precision", "fp32", "--json"], None),
    (["ai", "matmul", "256", "256", "256", "--on", "T4", "--json"], None),
    (["specs", "show", "H200 SXM", "--json"], None),
])
def test_json_stdout_is_one_document_and_warnings_go_to_stderr(capsys, args, warns, tmp_path,
                                                               monkeypatch):
    args = [_gpp(a[1:-1]) if a.startswith("{") else a for a in args]
    monkeypatch.chdir(tmp_path)      # `plot` without -o writes roofline.png here
    assert main(args) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["schema_version"] == 2
    if warns:
        assert cap.err.startswith("warning: ") and warns in cap.err
    else:
        assert cap.err == ""


def test_a_skipped_file_is_in_the_json_too(capsys):
    assert main(["ncu", _gpp("output1.csv"), _gpp("output8.csv"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (skipped,) = doc["skipped"]
    assert "output8.csv" in skipped and "failed launch" in skipped
    assert [k["name"] for k in doc["kernels"]] == ["sigma_gpp_gpu_34"]


def test_an_error_in_json_mode_is_the_error_document_only(capsys):
    assert main(["ncu", _gpp("output8.csv"), "--json"]) == 2
    cap = capsys.readouterr()
    error = json.loads(cap.out)["error"]
    assert (error["kind"], error["exit_code"]) == ("parse", 2)
    assert error["path"] == _gpp("output8.csv")
    assert cap.err.startswith("error: ") and "failed launch" in cap.err


# One child per hash seed runs both verbs through the CLI's main (what `python -m rooflab`
# runs): two processes instead of four, started together so the second core is used.
SEPARATOR = "\n=== ncu (exit 0) ===\n"
_TWO_VERBS = """
import sys
from rooflab.cli.main import main
rc = main(sys.argv[1:5])
sys.stdout.write("\\n=== ncu (exit %d) ===\\n" % rc)
sys.stdout.flush()
raise SystemExit(main(sys.argv[5:]))
"""


def test_same_input_same_bytes_in_every_process():
    # dict order, set order (string hashing) and float formatting: a git diff of two
    # nightly runs on the same recordings must be empty
    args = ["compare", _gpp("output1.ncu-rep"), _gpp("output5.ncu-rep"), "--json",
            "ncu", _gpp("output1.ncu-rep"), "--json"]
    procs = [subprocess.Popen([sys.executable, "-c", _TWO_VERBS, *args], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONHASHSEED": seed}) for seed in ("1", "2")]
    runs = [(*p.communicate(timeout=240), p.returncode) for p in procs]
    assert [rc for _, _, rc in runs] == [0, 0], [err[-2000:] for _, err, _ in runs]
    assert all(out.count(SEPARATOR) == 1 for out, _, _ in runs)   # compare exited 0 too
    (compare, ncu), (compare2, ncu2) = (out.split(SEPARATOR) for out, _, _ in runs)
    assert compare == compare2 and ncu == ncu2
    doc = json.loads(compare)
    assert doc["matches"][0]["before_s"] == pytest.approx(30.4926, rel=1e-4)
    assert doc["speedup"] == pytest.approx(sum(m["before_s"] for m in doc["matches"])
                                           / sum(m["after_s"] for m in doc["matches"]))
    assert json.loads(ncu)["kernels"] and '"created"' not in ncu


def test_python_m_rooflab_is_the_cli(capsys):
    args = ["compare", _gpp("output5.csv"), _gpp("output4.csv"), "--json",
            "--fail-if-slower", "5"]
    proc = _run(args)
    assert main(args) == 1
    cap = capsys.readouterr()
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, cap.out, cap.err)


def _on_a_terminal(args: list[str], **env: str) -> str:
    """stdout of `python -m rooflab ARGS` on a pseudo-terminal, escape codes and all."""
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    full = {**os.environ, "COLUMNS": "120", **env}
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):   # rich's overrides
        full.pop(name, None)
    if "NO_COLOR" not in env:
        full.pop("NO_COLOR", None)
    with subprocess.Popen([sys.executable, "-m", "rooflab", *args], stdout=follower,
                          stderr=subprocess.DEVNULL, env=full) as proc:
        os.close(follower)
        chunks = []
        while select.select([leader], [], [], 120)[0]:   # a hung child fails, not hangs
            try:
                data = os.read(leader, 65536)
            except OSError:          # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=10)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_colour_on_a_terminal_none_with_no_color_nothing_with_term_dumb():
    args = ["compare", _gpp("output5.csv"), _gpp("output4.csv"), "--fail-if-slower", "5"]
    # three processes (the variables are read at start-up), run side by side
    with ThreadPoolExecutor(3) as pool:
        tty, no_color, dumb = pool.map(lambda env: _on_a_terminal(args, **env), [
            {"TERM": "xterm-256color"}, {"TERM": "xterm-256color", "NO_COLOR": "1"},
            {"TERM": "dumb"}])
    assert COLOUR.search(tty) and "+113.8 %" in tty      # the regression in red
    assert not COLOUR.search(no_color) and "+113.8 %" in no_color
    assert ESCAPE not in dumb and "+113.8 %" in dumb


def test_a_pipe_gets_no_escape_codes():
    proc = _run(["compare", _gpp("output5.csv"), _gpp("output4.csv"), "--fail-if-slower",
                 "5"], TERM="xterm-256color")
    assert proc.returncode == 1 and "+113.8 %" in proc.stdout
    assert ESCAPE not in proc.stdout and ESCAPE not in proc.stderr


@pytest.mark.parametrize("argv", [[], ["ai"], ["specs"]])
def test_a_bare_verb_prints_its_help_on_stdout_and_exits_2(capsys, argv):
    # the help was on stdout and a stray blank line on stderr
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert "Usage: rooflab" in cap.out and cap.err == ""
