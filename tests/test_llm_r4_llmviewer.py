"""Review r4 (rooflab `llm` cross-checked against LLM-Viewer): naive prefill FLOP dense like
its bytes (F1), a bare family name says which card it picked (F2), the bound column keeps
the roofline side of a launch-sized kernel (F3), the setup line says --weights quantizes
lm_head and the embedding too (F4). Hand numbers: Llama-2-7B (32 heads of 128, hidden
4096), Llama-3-8B (8 KV heads, vocab 128256)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rooflab.cli.main import main
from rooflab.workloads.llm import Settings, decode_step, load_config, prefill_step

P, HEADS, HD = 512, 32, 128


def _ops(step):
    return {o.op.name: o.op for o in step.ops}


# --- F1: an eager (naive) kernel computes the dense, masked P x P scores -------------------

def test_naive_prefill_attention_flop_are_dense_like_its_bytes():
    cfg = load_config("llama-2-7b")
    naive = _ops(prefill_step(cfg, Settings(attn="naive"), 1, P))
    dense = 2 * HEADS * P * P * HD                      # 2.147 GFLOP per layer
    assert dense == 2_147_483_648
    assert naive["attn_scores"].flop == naive["attn_values"].flop == dense
    # its bytes were dense already: Q 4.19 MB + scores 16.8 MB + K 4.19 MB = 25.2 MB
    assert naive["attn_scores"].bytes == P * 4096 * 2 * 2 + HEADS * P * P * 2 == 25_165_824
    assert naive["attn_scores"].flop / naive["attn_scores"].bytes == pytest.approx(85.333, abs=1e-3)
    assert naive["softmax"].flop == 4 * HEADS * P * P     # dense, as before
    # flash keeps the causal half: 4 x 32 x 128 x P(P+1)/2 (a block-skipping kernel's work)
    flash = _ops(prefill_step(cfg, Settings(attn="flash"), 1, P))
    assert flash["attention"].flop == 4 * HEADS * HD * (P * (P + 1) // 2) == 2_151_677_952


def test_naive_prefill_step_flop_and_floor(capsys):
    assert main(["llm", "llama-2-7b", "--on", "A100 80GB SXM", "--attn", "naive", "--phase",
                 "prefill", "--prompt", "512", "--json"]) == 0
    pre = json.loads(capsys.readouterr().out)["llm"]["prefill"]
    # was 6.703 T (causal matmuls beside a dense softmax); + 32 x 2 x (2.147 - 1.076) G
    assert pre["flop"] == pytest.approx(6.7718e12, rel=1e-4)
    k = {x["name"]: x for x in pre["kernels"]}
    assert k["attn_scores"]["ai"] == pytest.approx(85.333, abs=1e-3)
    assert k["attn_scores"]["bound"] == "memory"          # below the ridge (153): the floor
    assert pre["floor_s"] == pytest.approx(24.16e-3, rel=1e-3)   # did not move


def test_naive_decode_is_unchanged():
    cfg = load_config("llama-2-7b")
    ops = _ops(decode_step(cfg, Settings(attn="naive"), 1, 1024))
    assert ops["attn_scores"].flop == 2 * HEADS * 1024 * HD


# --- F2: a bare family name picks one of several sizes or boards, and says so -------------

def test_name_note_says_which_card_a_family_name_is():
    from rooflab.hardware.resolve import name_note

    assert name_note("A100") == (
        "'A100' is NVIDIA A100 80GB SXM (also: A100 40GB PCIe, A100 40GB SXM, "
        "A100 80GB PCIe; name one to choose)")
    # LLM-Viewer's key, whose numbers are the 40 GB card's
    assert name_note("nvidia_A100").startswith("'nvidia_A100' is NVIDIA A100 80GB SXM (also:")
    assert name_note("h100") == ("'h100' is NVIDIA H100 SXM (also: H100 PCIe, H100 NVL; "
                                 "name one to choose)")
    assert name_note("A100 SXM") == ("'A100 SXM' is NVIDIA A100 80GB SXM (also: A100 40GB "
                                     "SXM; name one to choose)")
    assert "Jetson Orin NX 8GB" in name_note("jetson-orin-nx")
    # a name that says which, one entry of its kind, a file, an unknown name: nothing
    for spec in ("A100 40GB PCIe", "NVIDIA A100 80GB SXM", "A100-SXM4-80GB", "H200 SXM", "T4",
                 "RTX 4060", "me.json", "me.json@1t", "no-such-gpu", ""):
        assert name_note(spec) == "", spec


# --- F3: 'overhead' keeps the roofline side -------------------------------------------------

def test_bound_cell_keeps_the_roofline_side():
    from rooflab.cli.llm_render import bound_cell

    assert bound_cell(SimpleNamespace(bound="overhead", memory_bound_side=True)) == \
        "overhead (memory)"
    assert bound_cell(SimpleNamespace(bound="overhead", memory_bound_side=False)) == \
        "overhead (compute)"
    assert bound_cell(SimpleNamespace(bound="memory", memory_bound_side=True)) == "memory"


def test_llm_table_k_proj_launch_sized_but_memory_bound(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["llm", "llama-3-8b", "--on", "A100 80GB SXM", "--batch", "16", "--context",
                 "1024", "--phase", "decode"]) == 0
    out = capsys.readouterr().out
    row = next(x for x in out.splitlines() if "k_proj" in x)
    # 2 x 16 x 4096 x 1024 = 134 MFLOP over 8.55 MB (AI 15.7): 4.19 us of DRAM time < 5 us
    assert "15.7" in row and "4.19 us" in row and "overhead (memory)" in row
    q = next(x for x in out.splitlines() if "q_proj" in x)
    assert "│ memory " in q and "overhead" not in q
    # the JSON keeps its keys and values: bound 'overhead', binding the DRAM ceiling
    assert main(["llm", "llama-3-8b", "--on", "A100 80GB SXM", "--batch", "16", "--context",
                 "1024", "--phase", "decode", "--json"]) == 0
    k = {x["name"]: x for x in json.loads(capsys.readouterr().out)["llm"]["decode"]["kernels"]}
    assert (k["k_proj"]["bound"], k["k_proj"]["binding"]) == ("overhead", "DRAM")


# --- F4: --weights by hand quantizes lm_head and the embedding: the setup line says so ----

HEAD_WORDS = ("lm_head and embedding at int4 too; AWQ/GPTQ/fp8 checkpoints keep them at "
              "16-bit: give the checkpoint's config.json")


def _setup(capsys, *args) -> str:
    assert main(["llm", *args, "--on", "A100 80GB SXM", "--phase", "decode",
                 "--context", "1024"]) == 0
    return next(x for x in capsys.readouterr().out.splitlines() if x.startswith("setup:"))


def test_setup_line_says_lm_head_is_quantized_too(capsys, tmp_path):
    line = _setup(capsys, "llama-3-8b", "--weights", "int4")
    assert HEAD_WORDS in line
    assert "lm_head" not in _setup(capsys, "llama-3-8b")
    # lm_head at int4: 4096 x 128256 x (0.5 + 2/128) B = 271 MB, 1.05 GB at bf16
    assert main(["llm", "llama-3-8b", "--on", "A100 80GB SXM", "--weights", "int4",
                 "--phase", "decode", "--context", "1024", "--json"]) == 0
    k = {x["name"]: x for x in json.loads(capsys.readouterr().out)["llm"]["decode"]["kernels"]}
    assert k["lm_head"]["bytes_split"]["weights"] == 4096 * 128256 * (0.5 + 2 / 128)
    # an AWQ checkpoint's config keeps both at bf16 and says so: no such words
    from pathlib import Path

    import rooflab.workloads as w

    cfg = json.loads((Path(w.__file__).parent / "configs" / "llama-3-8b.json").read_text())
    cfg["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128,
                                  "zero_point": True}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    line = _setup(capsys, str(path))
    assert "embedding, lm_head kept at bf16" in line and "lm_head and embedding at" not in line
    # --weights over that config: the words point back at the config
    line = _setup(capsys, str(path), "--weights", "int4")
    assert line.count("lm_head and embedding at int4 too") == 1
    assert "drop --weights to count the config's quantization_config" in line
