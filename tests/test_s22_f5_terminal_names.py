"""Review s22 r1 F5, F7, F8: names from files reach the terminal as text. Rich markup in a
model_type, a roof name, a config file's name or an -o path crashed rich (exit 70) or made
a live link; ESC [ 2 J in a kernel name cleared the screen; a 4 MB kernel name held the
table for 50 s. They are shown escaped now, and cut past report.term_text.NAME_LIMIT."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from rooflab.cli.common import say
from rooflab.cli.main import main
from rooflab.report.term_text import NAME_LIMIT, cell, shown, visible

QWEN = Path(__file__).parent / "data" / "llm_configs" / "qwen3-8b.json"
ROOF = {"schema_version": 2, "name": "[/] evil", "kind": "nominal",
        "compute": [{"precision": "fp32", "unit": "vector", "flop_per_s": 1e13}],
        "memory": [{"level": "DRAM", "bytes_per_s": 1e12}]}
CSV = "name,flop,bytes,seconds,precision\n"


def test_control_characters_are_shown_as_escapes():
    assert visible("a\x1b[2Jb\u202ec") == "a\\x1b[2Jb\\u202ec"
    assert visible("line\nnext\ttab") == "line\nnext\ttab"          # layout kept
    assert shown("a\nb\rc\x9b") == "a\\x0ab\\x0dc\\x9b"              # one line in a cell
    assert cell("[/] x") == "\\[/] x"                                 # markup is text
    long = shown("k" * (NAME_LIMIT + 123))
    assert long.startswith("k" * NAME_LIMIT) and "123 more characters" in long


def test_kernel_name_with_escapes_cannot_clear_the_screen(tmp_path, capsys):
    f = tmp_path / "esc.csv"
    f.write_text(CSV + "\x1b[2J\x1b[31mFAKE error,1e9,1e8,1e-3,fp32\n")
    assert main(["report", str(f), "--on", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    # the table (folded at the kernel column) and the diagnosis heading show the escape
    assert "\\x1b[2J\\x1b[31mFAKE error" in out


def test_markup_in_names_from_files_is_text(tmp_path, capsys):
    cfg = json.loads(QWEN.read_text())
    cfg["model_type"] = "[/bold]"
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    assert main(["llm", str(tmp_path / "cfg.json"), "--on", "h100-sxm"]) == 0   # was 70
    assert "model_type '[/bold]' is not one rooflab has checked" in capsys.readouterr().out
    shutil.copy(QWEN, tmp_path / "qwen[instruct].json")
    assert main(["llm", str(tmp_path / "qwen[instruct].json"), "--on", "h100-sxm"]) == 0
    assert "model: qwen[instruct] (" in capsys.readouterr().out     # was "model: qwen"


def test_markup_in_a_roof_name_and_an_output_path(tmp_path, capsys):
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps(ROOF))
    k = tmp_path / "k.csv"
    k.write_text(CSV + "k1,1e9,1e8,1e-3,fp32\n")
    assert main(["whatif", str(k), "--on", "h100-sxm", "--hardware", str(roof)]) == 0
    assert "What if: on [/] evil" in capsys.readouterr().out
    out = tmp_path / "x[/].md"
    assert main(["report", str(k), "--on", "h100-sxm", "-o", str(out)]) == 0   # was 70
    assert out.is_file()
    assert f"wrote {out}" in capsys.readouterr().err


def test_megabyte_kernel_name_is_cut_on_the_terminal(tmp_path, capsys):
    f = tmp_path / "long.csv"
    f.write_text(CSV + "a" * 300_000 + ",1e9,1e8,1e-3,fp32\n")
    small = tmp_path / "small.csv"
    small.write_text(CSV + "k,1e9,1e8,1e-3,fp32\n")
    # the verb's first import (2-3 s on a loaded CI box) is not what the clock guards
    assert main(["-q", "report", str(small), "--on", "h100-sxm"]) == 0
    capsys.readouterr()
    start = time.perf_counter()
    assert main(["-q", "report", str(f), "--on", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    # a loose guard (wrapping costs about 10 s per MB: 4 MB held the table for 50 s)
    assert time.perf_counter() - start < 2.5
    assert f"{300_000 - NAME_LIMIT:,} more characters" in out
    assert "a" * 5000 not in out.replace("\n", "")


def test_warnings_show_escapes(capsys):
    say("warning", "model_type 'x\x1b[2J' is odd")
    assert capsys.readouterr().err == "warning: model_type 'x\\x1b[2J' is odd\n"
