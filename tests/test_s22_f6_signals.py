"""Review s22 r2 F1, F6, F7: SIGTERM takes Ctrl-C's path (cleanup, one line, exit 143);
an interrupted command names the files it had already written; demo's rename loop and
torch --run's trace export leave no temporary behind when interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rooflab import files
from rooflab.cli import demo
from rooflab.cli.main import main

K_JSON = str(Path(__file__).resolve().parents[1] / "examples" / "seeds" / "k.json")


def test_sigterm_while_reading_stdin_is_one_line_exit_143_and_no_temp_left(tmp_path):
    # `sleep 40 | timeout -s TERM 15 rooflab report - --on t4` died silently (-15) and
    # left /tmp/rooflab-stdin-*; now: "error: terminated; nothing was written", 143, clean
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONWARNINGS": "ignore"}
    code = "import sys; from rooflab.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "report", "-", "--on", "t4"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)
    deadline = time.monotonic() + 20
    while not list(tmp_path.glob("rooflab-stdin-*")) and time.monotonic() < deadline:
        time.sleep(0.02)   # the folder appears just before standard input is read
    assert list(tmp_path.glob("rooflab-stdin-*")), "never reached the read of stdin"
    time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    proc.stdin.close()
    assert proc.returncode == 143
    assert err.strip().splitlines() == ["error: terminated; nothing was written"]
    assert out == ""
    assert list(tmp_path.iterdir()) == []   # the stdin copy's folder removed


def test_comm_launcher_sigterm_is_remembered_as_terminated():
    # probe --comm turned SIGTERM into KeyboardInterrupt, answered 130 like Ctrl-C
    from rooflab import interrupts
    from rooflab.probe.comm.launch import _terminate_as_interrupt

    restore = _terminate_as_interrupt()
    try:
        assert not interrupts.terminated()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)   # the handler runs at the next bytecode
        assert interrupts.terminated()
    finally:
        restore()
    assert signal.getsignal(signal.SIGTERM) is not interrupts._raise_interrupt


def test_interrupt_after_a_file_landed_names_it(tmp_path, monkeypatch, capsys):
    # probe -o p.json --chart c.png interrupted during the chart said "nothing was
    # written" with p.json there: simulated by Ctrl-C right after report's -o landed
    out = tmp_path / "r.json"
    real = files.note_written

    def landed_then_ctrl_c(path):
        real(path)
        raise KeyboardInterrupt

    monkeypatch.setattr(files, "note_written", landed_then_ctrl_c)
    rc = main(["report", K_JSON, "--on", "t4", "-o", str(out)])
    assert rc == 130
    assert out.is_file()
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1] == (f"error: interrupted; {out} was written before it stopped, "
                         f"nothing after")


def test_demo_interrupted_between_renames_leaves_no_temp_and_names_the_one_renamed(
        tmp_path, monkeypatch, capsys):
    outdir = tmp_path / "dmo"
    outdir.mkdir()
    for name in demo.FILES:
        (outdir / name).write_text("old\n")
    calls = []
    real_replace = os.replace

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(demo.os, "replace", replace)
    data = {name: f"new {name}\n" for name in demo.FILES}
    files.written(clear=True)
    with pytest.raises(KeyboardInterrupt):
        demo.write_files(outdir, data)
    first = list(demo.FILES)[0]
    assert sorted(p.name for p in outdir.iterdir()) == sorted(demo.FILES)   # no .tmp
    assert (outdir / first).read_text() == f"new {first}\n"
    assert [(outdir / n).read_text() for n in list(demo.FILES)[1:]] == ["old\n"] * 3
    assert files.written() == [outdir / first]
    from rooflab.cli.main import _interrupted

    assert _interrupted() == 130
    assert capsys.readouterr().err.strip() == (
        f"error: interrupted; {outdir / first} was written before it stopped, nothing after")
    files.written(clear=True)


class _Prof:
    """torch.profiler's export_chrome_trace: writes part of a trace, then Ctrl-C."""

    def __init__(self, fail: bool):
        self.fail = fail

    def export_chrome_trace(self, path):
        Path(path).write_text('{"traceEvents": [' if self.fail else '{"traceEvents": []}')
        if self.fail:
            raise KeyboardInterrupt


def test_torch_run_export_interrupted_leaves_no_trace(tmp_path, monkeypatch):
    from rooflab.ingest import torch_run

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with pytest.raises(KeyboardInterrupt):
        torch_run._export(_Prof(True), None)
    assert list((tmp_path / "tmp").iterdir()) == []   # was a 135 MB rooflab-trace-*.json
    saved = tmp_path / "saved.json"
    with pytest.raises(KeyboardInterrupt):
        torch_run._export(_Prof(True), str(saved))
    assert sorted(tmp_path.iterdir()) == [tmp_path / "tmp"]   # no half saved.json
    files.written(clear=True)
    assert torch_run._export(_Prof(False), str(saved)) == str(saved)
    assert saved.read_text() == '{"traceEvents": []}'
    assert files.written(clear=True) == [saved]
