"""Mistral-7B windows every layer (4096): its memory line says the cache stops growing at
the window, and its decode attention row says it reads the window (review s19 r6 F2).
Mixed models (Gemma-2, gpt-oss) keep their words and rows."""

from rooflab.cli.main import main
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.kernels import decode_step, prefill_step
from rooflab.workloads.llm.settings import settings_for

PER_TOKEN = 32 * 2 * 8 * 128 * 2          # 32 layers x K,V x 8 KV heads x 128 x bf16


def _out(capsys, *args):
    assert main(["llm", *args]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_mistral_memory_line_says_the_cache_stops_growing(capsys):
    out = _out(capsys, "mistral-7b", "--on", "H100", "--phase", "decode", "--context", "32768")
    assert 4096 * PER_TOKEN == 536_870_912                 # the cap, at any context
    assert ("KV 537 MB (537 MB per sequence: 131 kB per token up to the 4096-token window, "
            "then the cache stops growing)") in out
    assert "only the full layers' cache grows" not in out


def test_mistral_decode_row_names_its_window():
    cfg = load_config("mistral-7b")
    st = decode_step(cfg, settings_for(cfg), 1, 32768)
    names = [o.op.name for o in st.ops]
    assert "attention" not in names
    att = st.op("attention (window 4096)")
    assert att.calls == 32
    assert att.op.bytes_split["kv"] == 4096 * 2 * 8 * 128 * 2    # 16.8 MB, not 32768 tokens
    # the projections keep their names and run in every layer
    assert st.op("q_proj").calls == st.op("o_proj").calls == 32
    assert names.index("attention (window 4096)") == names.index("o_proj") - 1
    # within the window nothing is capped: plain "attention"; prefill reads every prompt
    # token's K/V, so its row keeps the plain name too
    assert "attention" in [o.op.name for o in decode_step(cfg, settings_for(cfg), 1, 4000).ops]
    assert prefill_step(cfg, settings_for(cfg), 1, 8192).op("attention").calls == 32


def test_gemma_memory_line_keeps_the_mixed_words(capsys):
    out = _out(capsys, "gemma-2-9b", "--on", "H100", "--phase", "decode", "--context", "32768")
    assert "then only the full layers' cache grows" in out
