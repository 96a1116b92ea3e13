"""`rooflab report` of an `rooflab llm -o` file closes with the notes llm closed its text
with (the file's llm.notes), each once, in the terminal, Markdown and HTML reports (s35 E;
it showed none of them). The HTML report reads the same notes; at 3.5 s a report it is
checked by hand, not here.

`rooflab llm llama-2-7b --on MI250X --tp 2 -o d.json` writes four notes: tensor
parallelism's per-device tables, the all-reduce time without latency ("each of the 64
all-reduces per step": 2 per layer x 32 layers), the fallback of the vector kernels to fp32
vector (the MI250X lists no fp16 vector peak) and the package of 2 dies. The report says
the fallback per kernel already ("embedding: roof 'AMD Instinct MI250X' has no fp16 vector
ceiling; ..."), so llm's once-for-all form "(for embedding, rope, ...)" is left out; the
other three are said once each.
"""

from __future__ import annotations

import pytest

from rooflab.cli.main import main

TP = "note: tensor parallel over 2 devices: tables are per device; all-reduce traffic is in"
LATENCY = "each of the 64 all-reduces per step also pays the collective's latency"
DIES = "AMD Instinct MI250X is 2 devices to software"


@pytest.fixture(scope="module")
def llm_file(tmp_path_factory) -> str:
    import contextlib
    import io

    path = str(tmp_path_factory.mktemp("s35e") / "d.json")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["llm", "llama-2-7b", "--on", "MI250X", "--tp", "2", "-o", path]) == 0
    return path


def test_terminal_report_says_each_llm_note_once(llm_file, capsys):
    assert main(["report", llm_file]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert text.count(TP) == 1
    assert text.count(LATENCY) == 1
    assert text.count(DIES) == 1
    # the fallback: the report's own per-kernel words, not llm's "(for ...)" form again
    assert "note: embedding: roof 'AMD Instinct MI250X' has no fp16 vector ceiling" in text
    assert "(for embedding, rope" not in text


def test_markdown_report_holds_them(llm_file, tmp_path, capsys):
    """The .md (the .html renders the same notes: 3.5 s a report, checked by hand)."""
    md = str(tmp_path / "r.md")
    assert main(["report", llm_file, "-o", md]) == 0
    capsys.readouterr()
    with open(md) as f:
        md_text = " ".join(f.read().split())
    assert md_text.count("tensor parallel over 2 devices: tables are per device") == 1
    assert md_text.count(LATENCY) == 1
    assert md_text.count(DIES) == 1
