"""Review s22 r3 F5-F7: the consoles and where `wrote FILE` goes.
- TERM=dumb folded every table at 80 columns whatever COLUMNS said (rich takes a dumb
  terminal for 80x25 unless given a height too);
- at COLUMNS=40, compare/whatif/choose/scale cut numbers to '1.…': cells fold now;
- `wrote FILE` went to stdout in half the verbs: stderr in all of them now, so stdout holds
  the verb's data only."""

from __future__ import annotations

import json
from pathlib import Path

from rooflab.cli.common import console, err_console
from rooflab.cli.main import main

CSV = "name,flop,bytes,seconds,precision\n"
QWEN = Path(__file__).parent / "data" / "llm_configs" / "qwen3-8b.json"


def test_dumb_terminal_keeps_columns(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("FORCE_COLOR", "1")   # a terminal to rich, as Emacs' shell is
    monkeypatch.setenv("COLUMNS", "200")
    out, err = console(), err_console()
    assert out.is_dumb_terminal and out.size.width == 200 and err.size.width == 200


def test_narrow_terminal_never_cuts_a_number(tmp_path, monkeypatch, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(CSV + "gemm_kernel_long,1e12,1e9,2.5e-3,fp32\nsoftmax,1e9,1e9,1.2e-3,fp32\n")
    b.write_text(CSV + "gemm_kernel_long,1e12,1e9,1.5e-3,fp32\nsoftmax,1e9,1e9,1.3e-3,fp32\n")
    monkeypatch.setenv("COLUMNS", "40")
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    # gemm 2.5 ms -> 1.5 ms: 1.67x, -40.0 %, each folded over lines but whole
    cells = "".join(line.split("│")[4].strip() for line in out.splitlines()
                    if line.count("│") > 5)
    assert cells.startswith("1.67x")


def test_wrote_goes_to_stderr_in_every_verb(tmp_path, capsys):
    out = tmp_path / "l.json"
    assert main(["llm", str(QWEN), "--on", "h100-sxm", "-o", str(out)]) == 0
    said = capsys.readouterr()
    assert "wrote" not in said.out and said.err.endswith(f"wrote {out}\n")
    assert json.loads(out.read_text())["schema_version"]
    roof = tmp_path / "roof.json"
    assert main(["specs", "import", "--dram", "1TB/s", "--fp32", "10TFLOP/s", "--name", "r",
                 "-o", str(roof)]) == 0
    said = capsys.readouterr()
    assert said.out == "" and said.err.startswith(f"wrote {roof}: r (nominal): ")


def test_console_guards_names_that_reach_it_as_markup(monkeypatch, capsys):
    # `choose --among roof.json` put a roof named '[/] evil' in a table cell as markup:
    # MarkupError, exit 70; '[link=...]' was a live OSC-8 link on a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = console()
    out.print("[/] evil")
    out.print("[link=http://evil]GPU[/link] [bold]ok[/]")
    printed = capsys.readouterr().out
    assert "[/] evil" in printed and "GPU" in printed and "\x1b[1mok" in printed
    assert "\x1b]8;" not in printed and "http://evil" not in printed
