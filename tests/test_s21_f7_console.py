"""s21 r7 (rooflab in CI): the console's width under COLUMNS=0 (F1), FORCE_COLOR in a pipe
(F2), a stdout closed at start (F5), and SVG/HTML charts the same bytes run to run (F10)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rooflab
from rooflab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
K_JSON = str(ROOT / "examples" / "seeds" / "k.json")   # gemm_ai190: 62.5 % of a T4's roof
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# a kernel name longer than an 80-column table leaves for it (ncu's names run to 100s)
LONG = "void_gemm_kernel_tile_128x256x64_stage3_warpspec"


def _run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture
def plain_env(monkeypatch):
    for name in ("COLUMNS", "FORCE_COLOR", "NO_COLOR", "TERM", "ROOFLAB_ON"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# --- F1: COLUMNS=0 (fish while it starts, a 0x0 pty) printed nothing, exit 0 ---------------

def test_columns_zero_still_prints_the_report_table(capsys, plain_env):
    plain_env.setenv("COLUMNS", "0")
    rc, out, _ = _run(capsys, "report", K_JSON, "--on", "t4")
    assert rc == 0
    # old code: rich took COLUMNS=0 as the width and printed 0 bytes
    assert "gemm_ai190" in out and "62 % of roof" in out
    # laid out as a pipe is (COLUMNS 0 counts as unset): no line past PIPE_WIDTH
    assert max(len(line) for line in out.splitlines()) <= 160


def test_columns_zero_specs_list_is_the_unset_listing(capsys, plain_env):
    rc, unset, _ = _run(capsys, "specs", "list")
    assert rc == 0 and unset
    plain_env.setenv("COLUMNS", "0")
    rc, zero, _ = _run(capsys, "specs", "list")
    assert rc == 0 and zero == unset   # old code: zero == ""


def test_columns_that_is_no_number_counts_as_unset():
    from rooflab.cli.common import columns

    for value, want in (("0", None), ("-5", None), ("abc", None), ("", None), (" 120 ", 120),
                        ("60", 60)):
        os.environ["COLUMNS"] = value
        try:
            assert columns() == want, value
        finally:
            del os.environ["COLUMNS"]


# --- F2: FORCE_COLOR made a pipe a terminal: 80-column fold, a progress bar in the log ------

def _long_kernel_csv(tmp_path) -> str:
    p = tmp_path / "long.csv"
    p.write_text(f"name,flop,bytes,seconds,precision\n{LONG},1e9,1e8,1e-3,fp32\n")
    return str(p)


def test_force_color_keeps_the_pipe_width(capsys, plain_env, tmp_path):
    plain_env.setenv("FORCE_COLOR", "1")
    rc, out, _ = _run(capsys, "report", _long_kernel_csv(tmp_path), "--on", "t4")
    assert rc == 0
    plain = ANSI.sub("", out)
    # old code: laid out 80 wide, the name split over the table's lines ("void_gemm_kernel"
    # / "_templated_on_a_" ...); the row holds it whole beside its time share
    assert any(LONG in line and "100.0 %" in line for line in plain.splitlines())
    assert max(len(line) for line in plain.splitlines()) <= 160


def test_force_color_draws_no_progress_bar_into_a_log(capsys, plain_env):
    from rooflab.cli.common import progress_bar

    plain_env.setenv("FORCE_COLOR", "1")
    capsys.readouterr()
    with progress_bar("ncu") as update:
        update("reading", 0.5)
        update("done", 1.0)
    err = capsys.readouterr().err
    # old code: "\x1b[?25l\r\x1b[2Kncu ━━━ ..." (cursor hidden, redrawn) in stderr
    assert err == ""


# --- F5: stdout closed when rooflab started (`>&-`): exit 70 "a bug", a traceback -----------

def _closed_stdout(*argv) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(rooflab.__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-m", "rooflab.cli.main", *argv],
                          stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=env, preexec_fn=lambda: os.close(1), timeout=120)


@pytest.mark.parametrize("argv", [("ai", "matmul", "8", "8", "8", "--json"),
                                  ("specs", "list")])
def test_a_closed_stdout_is_exit_74_and_one_line(argv):
    r = _closed_stdout(*argv)
    assert r.returncode == 74            # old: 70, "internal error in rooflab"
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot write to standard output")
    assert "closed" in lines[0]


# --- F10: matplotlib salted the SVG ids with a fresh uuid: other bytes on every run ---------

def test_the_same_svg_chart_is_the_same_bytes(capsys, plain_env, tmp_path):
    one, two = tmp_path / "one.svg", tmp_path / "two.svg"
    for path in (one, two):
        assert main(["plot", K_JSON, "--on", "t4", "-o", str(path)]) == 0
    # old code: 50 lines differed (marker and clip-path ids)
    assert one.read_bytes() == two.read_bytes()
    assert b'id="m' in one.read_bytes()   # the markers whose ids were salted are there


def test_the_same_html_report_is_the_same_bytes(capsys, plain_env, tmp_path):
    got = []
    for sub in ("a", "b"):
        folder = tmp_path / sub
        folder.mkdir()
        plain_env.chdir(folder)
        assert main(["report", K_JSON, "--on", "t4", "-o", "r.html"]) == 0
        got.append((folder / "r.html").read_bytes())
    assert got[0] == got[1]   # old code: the embedded SVG's ids differed
