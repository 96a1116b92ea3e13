"""Review s22 r2 F2-F5, r3 F1-F2, r1 F3: what -o may land on (not a FIFO or a device),
names near and past 255 bytes, pipes read once, text written as UTF-8 whatever the
locale, stdout that cannot encode a character, and spreadsheet formulas in CSV exports."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rooflab import files, files_kind
from rooflab.cli import main as cli_main
from rooflab.cli.main import main
from rooflab.errors import OutputError
from rooflab.ingest.kernelfile_csv import kernels_from_csv

K_JSON = Path(__file__).resolve().parents[1] / "examples" / "seeds" / "k.json"
LONG = "a" * 260   # past the usual NAME_MAX of 255 bytes


# --- F2: -o onto a FIFO, a device, or a symlink to one -----------------------------------

def test_output_onto_a_fifo_or_a_link_to_one_is_refused_and_the_node_kept(tmp_path):
    fifo = tmp_path / "ff.json"
    os.mkfifo(fifo)
    link = tmp_path / "dev.json"
    link.symlink_to(fifo)
    for path in (fifo, link):
        with pytest.raises(OutputError, match="is a named pipe \\(FIFO\\), not a regular file"):
            files.write_atomic(path, "{}\n")
        with pytest.raises(OutputError, match="named pipe"):
            files.check_writable(path)   # before any work, too
    assert fifo.is_fifo()   # was renamed over: a plain file, the reader left waiting
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.json", "ff.json"]


# --- F3 / F4: names past and near 255 bytes ----------------------------------------------

def test_names_past_255_bytes_are_one_error_line(tmp_path, capsys):
    long_png = tmp_path / f"{LONG}.png"
    assert files.is_directory(long_png) is False   # Path.is_dir raised ENAMETOOLONG
    assert files_kind.file_kind(str(long_png)) == "rooflab"
    with pytest.raises(OutputError, match="the name is 264 bytes\\); give a shorter file name"):
        files.check_writable(long_png)
    # -o (cli/common.py refuse_directory's is_dir) and an input (load_kernels' exists)
    for argv in (["report", str(K_JSON), "--on", "t4", "-o", str(tmp_path / f"{LONG}.json")],
                 ["report", str(tmp_path / f"{LONG}.json"), "--on", "t4"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert "File name too long" in err and "shorter" in err


def test_a_250_byte_name_the_filesystem_takes_is_written(tmp_path):
    path = tmp_path / ("a" * 245 + ".json")   # 250 bytes: the temp name was 264
    files.write_atomic(path, "{}\n")
    assert path.read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]   # no temp left
    cjk = tmp_path / ("矩" * 83 + ".md")   # 252 bytes, cut inside no character
    files.write_atomic(cjk, "x\n")
    assert cjk.read_text() == "x\n"


# --- F5: pipes given by name are read once -------------------------------------------------

def test_a_pipe_by_path_reads_as_the_file(tmp_path, capsys):
    # `rooflab report <(cat k.json)` / `cat k.json | rooflab report /dev/stdin`: "the file
    # is empty", the sniff having consumed the pipe
    data = K_JSON.read_bytes()
    r, w = os.pipe()
    os.write(w, data)   # a few kB: fits the pipe's buffer
    os.close(w)
    try:
        assert main(["report", f"/dev/fd/{r}", "--on", "t4", "--json"]) == 0
    finally:
        os.close(r)
    doc = json.loads(capsys.readouterr().out)
    ref = json.loads(K_JSON.read_text())
    assert len(doc["kernels"]) == len(ref["kernels"])


def test_a_named_fifo_reads_once_and_errors_name_it(tmp_path, capsys):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    done = threading.Event()

    def writer():
        with open(fifo, "w") as fh:
            fh.write("{oops\n")
        # the old code opened it a second time and waited forever for a writer: give it
        # an end of file, so the test fails instead of hanging
        while not done.wait(0.5):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        rc = main(["report", str(fifo), "--on", "t4"])
    finally:
        done.set()
        thread.join(5)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err == [f"error: {fifo}:1: invalid JSON: Expecting property name enclosed in "
                   f"double quotes (column 2)"]


# --- r3 F1 / F2: encodings ----------------------------------------------------------------

def test_stdout_that_cannot_encode_writes_escapes_not_a_crash(monkeypatch):
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    monkeypatch.setattr(sys, "__stdout__", ascii_out)
    cli_main._guard_stdout()
    sys.stdout.write("seed 000 §6.4 矩阵\n")   # UnicodeEncodeError, exit 70, before
    sys.stdout.flush()
    assert raw.getvalue() == b"seed 000 \\xa76.4 \\u77e9\\u9635\n"


def test_text_files_are_utf8_under_an_ascii_locale(tmp_path):
    # LC_ALL=C (or cp1252/cp936 on Windows): report.md crashed on rooflab's own em dash,
    # or was written in GB18030 under <meta charset='utf-8'>
    out = tmp_path / "w.md"
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    env.pop("PYTHONIOENCODING", None)
    code = ("import sys, locale; from rooflab.files import write_atomic; "
            "print(locale.getpreferredencoding(False)); "
            "write_atomic(sys.argv[1], 'a \\u2014 \\u77e9\\u9635\\r\\nb\\n')")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("ANSI_X3.4-1968", "ascii", "US-ASCII")   # the setup held
    assert out.read_bytes() == "a — 矩阵\r\nb\n".encode()


# --- r1 F3: CSV formula injection -----------------------------------------------------------

def test_csv_cells_that_start_a_formula_are_quoted_and_read_back_whole():
    cols = ["name", "flop", "bytes", "seconds", "precision"]
    names = ["=cmd|' /C calc'!A0", "+cmd", "-neg", "@SUM(1+1)", "\tx", "plain", "a=b"]
    rows = [{"name": n, "flop": 1e9 * (i + 1), "bytes": 1e8, "seconds": 1e-3,
             "precision": "fp32"} for i, n in enumerate(names)]
    rows.append({"name": "negative", "flop": -2.5, "bytes": None, "seconds": ["x", "-y"],
                 "precision": "fp32"})
    text = files.csv_text(rows, cols)
    lines = text.splitlines()
    assert lines[1] == "'=cmd|' /C calc'!A0,1000000000.0,100000000.0,0.001,fp32"
    assert [line.split(",")[0] for line in lines[2:8]] == [
        "'+cmd", "'-neg", "'@SUM(1+1)", "'\tx", "plain", "a=b"]
    assert lines[8] == "negative,-2.5,,x -y,fp32"   # a number stays a number
    # the kernel CSV reader takes the names back without the quote (and strips the
    # blanks around a name, as for any name)
    kernels = kernels_from_csv(files.csv_text(rows[:7], cols), "k.csv")
    assert [k.name for k in kernels] == [n.strip() for n in names]
    assert [k.flop for k in kernels][:2] == [{"fp32": 1e9}, {"fp32": 2e9}]


def test_files_kind_sits_with_files_below_every_layer():
    # file_kind moved to files_kind.py (files.py past 450 lines), re-exported by files.py
    import ast

    src = Path(files.__file__).with_name("files_kind.py").read_text()
    mods = {("rooflab." + n.module) if n.level else n.module
            for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)}
    assert {m for m in mods if m.startswith("rooflab")} <= {"rooflab.files",
                                                           "rooflab.files_decode"}
    from rooflab.ingest import profile_files

    assert files_kind.file_kind is profile_files.file_kind
