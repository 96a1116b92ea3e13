"""`rooflab ai attention --help` on an 80-column terminal (s36 A): --causal-align's metavar
`bottom-right|top-left` (21 characters) squeezed the help column to 20, so rich cut
"(num_attention_heads)" and "(num_key_value_heads;" to "(num_attention_hea…" and
"(num_key_value_hea…": the Hugging Face config keys a user looks for. The metavar is ALIGN
now (the help text names both values); the column is 29 wide and nothing is cut."""

from __future__ import annotations

from cli_inproc import run_cli


def test_ai_attention_help_fits_80_columns(monkeypatch):
    """Every line at most 80 wide, no ellipsis, the config keys whole."""
    monkeypatch.setenv("COLUMNS", "80")
    done = run_cli("ai", "attention", "--help")
    assert done.returncode == 0
    text = done.stdout
    assert "…" not in text
    assert "(num_attention_heads)" in text and "(num_key_value_heads;" in text
    assert "--causal-align" in text and "ALIGN" in text
    assert "bottom-right" in text and "top-left" in text   # the values, in its help
    assert max(len(line) for line in text.splitlines()) <= 80


def test_choose_help_says_what_it_ranks_without_among(monkeypatch):
    """`rooflab choose k.json` with neither --among nor --kind ranks every catalog device
    (its table's top 15 of 89); the help said nothing of that default."""
    monkeypatch.setenv("COLUMNS", "200")
    text = run_cli("choose", "--help").stdout
    assert "(default: every catalog device, or --kind's)" in text
    assert "(default: all kinds)" in text


def test_help_says_the_defaults_of_level_link_and_memory(monkeypatch):
    """Options that take a value and did not say what happens without one: the profiler
    verbs' --level (every level: ncu output4.csv prints a DRAM, an L2 and an L1 row), llm's
    --link-bw (the measured or catalog link), --memory (the catalog's: 80 GB on H100) and
    --gpu-mem-util (the whole memory, vLLM's 0.9 only when given)."""
    monkeypatch.setenv("COLUMNS", "250")
    ncu = " ".join(run_cli("ncu", "--help").stdout.split())
    assert "(default: every level the file has, one row each)" in ncu
    llm = " ".join(run_cli("llm", "--help").stdout.split())
    assert "default: the link --link-from, or --on a cluster profile, measured" in llm
    assert "e.g. 16GB (default: the catalog's, or the profile's)" in llm
    assert "where the catalog has it (default: the whole memory)" in llm
