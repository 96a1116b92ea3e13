"""Review s27 v2 on `rooflab llm` (F3, F5, F7): MLA's absorbed kernels under llama.cpp's
weights are stored matrices that `whatif --quantize` moves; a GGUF file's layers are
sharded by --tp as its config.json twin's; a DeepSeek-V3 file's dense and MoE layers and
its router correction bias raise no notes. Files and hand counts: s27_gguf_arch_files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("gguf")

import s27_gguf_arch_files as files  # noqa: E402
from s27_gguf_arch_files import TINY_DS, TINY_DS_LAYERS, TINY_L4, V2_LITE, T  # noqa: E402

from rooflab.cli.main import main  # noqa: E402
from rooflab.hardware.resolve import load_roof  # noqa: E402
from rooflab.model.whatif_weights import quantize_weights  # noqa: E402
from rooflab.workloads.llm import decode_step, load_config  # noqa: E402
from rooflab.workloads.llm.settings import settings_for  # noqa: E402

F16 = {k: T.F16 for k in ("embd", "output", "attn", "kv_b", "ffn", "down", "exps",
                          "down_exps")}


def _by_name(kernels):
    return {k.name: k for k in kernels}


def _stages(capsys, path, tp: int) -> list[dict]:
    assert main(["llm", str(path), "--on", "H100", "--tp", str(tp), "--pp", "2",
                 "--batch", "1", "--context", "64", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]["pipeline"]["stages"]


# F3: --weights q4_k / a GGUF file: attn_k_b and attn_v_b are stored, not 16-bit copies ----

def test_q4_k_absorbed_kernels_are_quantized_as_every_matrix():
    """DeepSeek-V3 --weights q4_k: q_absorb holds 61 layers x 128 heads x 128 x 512 =
    511,705,088 weights at Q4_K's 144 B / 256 (287,834,112 B). --quantize int8 moves them
    as it moves q_b_proj (61 x 1,536 x 128 x 192 = 2,302,672,896 weights): the same bytes
    per weight after (the old marks left them at Q4_K, "vLLM keeps 16-bit copies")."""
    cfg = load_config(str(Path(__file__).parent / "data" / "llm_configs" / "deepseek-v3.json"))
    step = decode_step(cfg, settings_for(cfg, weights="q4_k"), 1, 4096)
    before = _by_name(step.kernels())
    for name in ("q_absorb", "v_absorb"):
        meta = before[name].meta
        assert meta["weight_bytes_per_param"] == 0.5625 and meta["weight_dtype"] == "int4"
        assert "held_unquantized" not in meta
        assert meta["bytes_split"]["weights"] == 287_834_112
    w = quantize_weights(load_roof("h200"), step.kernels(), "int8")
    after = _by_name(new for _, new in w.moves)
    per = after["q_b_proj"].meta["bytes_split"]["weights"] / 2_302_672_896
    for name in ("q_absorb", "v_absorb"):
        assert after[name].meta["bytes_split"]["weights"] == pytest.approx(511_705_088 * per,
                                                                           rel=1e-12)
        assert after[name].meta["weight_dtype"] == "int8"
    assert "held unquantized" not in w.assumption
    # vLLM's run of the config (no ggml type) still holds them at 16 bit (s26 r3 F4)
    bf16 = _by_name(decode_step(cfg, settings_for(cfg), 1, 4096).kernels())
    assert bf16["q_absorb"].meta["held_unquantized"]


def test_a_gguf_files_attn_k_b_is_marked_as_stored(tmp_path):
    """The tiny DeepSeek-2 file's attn_k_b / attn_v_b are Q8_0 (34 B per 32): q_absorb is
    read at that, and --quantize int4 narrows it (it stayed at Q8_0)."""
    files.deepseek2(tmp_path / "ds.gguf", **TINY_DS)
    cfg = load_config(str(tmp_path / "ds.gguf"))
    step = decode_step(cfg, settings_for(cfg), 1, 64)
    q = _by_name(step.kernels())["q_absorb"]
    assert q.meta["weight_bytes_per_param"] == 34 / 32 and "held_unquantized" not in q.meta
    # 2 layers x 2 heads x 128 x 256 weights x 34 / 32 B
    assert q.meta["bytes_split"]["weights"] == 2 * 2 * 128 * 256 * 34 / 32 == 139_264
    w = quantize_weights(load_roof("h200"), step.kernels(), "int4")
    after = _by_name(new for _, new in w.moves)["q_absorb"]
    assert after.meta["bytes_split"]["weights"] < 139_264 / 2


# F5: --tp shards a GGUF file's layers ----------------------------------------------------

def test_a_gguf_stage_holds_one_devices_share_under_tp(tmp_path, capsys):
    """The tiny DeepSeek-2 over --pp 2. One of 2 devices holds half of the heads' matrices
    (attn_q, attn_k_b, attn_v_b, attn_output), of the FFN and expert widths and of the
    vocabulary; the norms, attn_kv_a_mqa and the router whole:
      layer 0: 1,024 + 27,648 + 46,080 + 1,024 + 2 x 34,816 + 18,432 + 1,024
               + 2 x 36,864 + 53,760                                          = 292,352
      layer 1: attention and norms 164,864 + router 4,096 + gate/up_exps 2 x 73,728
               + down_exps 107,520 + gate/up_shexp 2 x 18,432 + down_shexp 26,880 = 487,680
      stage 0: + the table's half 73,728 = 366,080; stage 1: + output_norm 1,024 + the
      output's half 107,520 = 596,224 (at --tp 1: 683,008 and 1,138,176)."""
    path = tmp_path / "ds.gguf"
    files.deepseek2(path, **TINY_DS)
    one = _stages(capsys, path, 1)
    assert [s["weights_bytes"] for s in one] == [683_008, 1_138_176]
    assert one[0]["layer_kinds"][0]["weights_bytes_per_layer"] == [TINY_DS_LAYERS[0]] * 2
    two = _stages(capsys, path, 2)
    assert [s["weights_bytes"] for s in two] == pytest.approx([366_080, 596_224], rel=1e-12)
    assert [(k["mlp"], k["weights_bytes_per_layer"]) for s in two for k in s["layer_kinds"]] \
        == [("dense", pytest.approx([292_352] * 2)), ("MoE", pytest.approx([487_680] * 2))]


def test_a_v2_lite_gguf_shards_as_its_counted_shard(tmp_path, capsys):
    """An F16 V2-Lite-shaped file: its layers are the count's (norms and router F32), so
    under --tp 2 each stage's layer is the sharded config's counted layer, as the bundled
    config's is (dense 162 MB -> 82.2 MB there)."""
    from rooflab.workloads.llm import layer_weights
    from rooflab.workloads.llm.parallel import shard

    path = tmp_path / "lite.gguf"
    files.deepseek2(path, **V2_LITE, types=F16)
    g = load_config(str(path))
    mw = layer_weights(shard(g, 2), settings_for(g))
    want = {"dense": mw.dense_layer.total_bytes, "MoE": mw.layer.total_bytes}
    stages = _stages(capsys, path, 2)
    for st in stages:
        for k in st["layer_kinds"]:
            assert k["weights_bytes_per_layer"] == pytest.approx([want[k["mlp"]]] * 2,
                                                                 rel=1e-12)
    whole = layer_weights(g, settings_for(g))
    assert want["dense"] / whole.dense_layer.total_bytes == pytest.approx(0.5, abs=0.01)
    twin = _stages(capsys, "deepseek-v2-lite", 2)
    assert twin[0]["layer_kinds"][0]["weights_bytes_per_layer"] == [82_191_360] * 2


# F7: a DeepSeek-V3 file's notes ----------------------------------------------------------

def _v3_file(path, monkeypatch, wider_layer: int | None = None):
    """TINY_DS over 3 layers (1 dense, 2 MoE) with V3's sigmoid router: its header key and
    the blk.N.exp_probs_b.bias F32 (experts,) tensor real V3/R1 files carry (16 B a MoE
    layer); `wider_layer`: that layer's ffn_down_exps at Q8_0, not Q6_K."""
    orig = files.header_only

    def patched(p, arch, meta, tensors):
        meta = {**meta, "deepseek2.expert_gating_func": 2}
        out = []
        for name, shape, typ in tensors:
            if name == f"blk.{wider_layer}.ffn_down_exps.weight":
                typ = T.Q8_0
            out.append((name, shape, typ))
            if name.endswith("ffn_gate_inp.weight"):
                out.append((name.replace("ffn_gate_inp.weight", "exp_probs_b.bias"),
                            (shape[0],), T.F32))
        return orig(p, arch, meta, out)

    monkeypatch.setattr(files, "header_only", patched)
    files.deepseek2(path, **{**TINY_DS, "layers": 3, "q_rank": 256})
    return load_config(str(path))


def test_v3s_dense_and_moe_layers_and_its_bias_raise_no_notes(tmp_path, monkeypatch):
    cfg = _v3_file(tmp_path / "v3.gguf", monkeypatch)
    assert cfg.model_type == "deepseek_v3"
    assert not [n for n in cfg.notes if n.startswith("the layers are not stored alike")]
    assert not [n for n in cfg.notes if "differ from the file's" in n]


def test_moe_layers_of_different_types_are_still_said(tmp_path, monkeypatch):
    """A MoE layer of the V3 file: TINY_DS's 922,112 B, its attn_q (55,296 B) replaced by
    attn_q_a (256 x 256 Q4_K) 36,864 + attn_q_a_norm 1,024 + attn_q_b 55,296, and the bias
    16 B = 960,016 B. blk.2's ffn_down_exps at Q8_0 (262,144 weights: 278,528 B, not Q6_K's
    215,040) makes it 1,023,504 B; the dense blk.0 is no part of it."""
    cfg = _v3_file(tmp_path / "v3w.gguf", monkeypatch, wider_layer=2)
    (note,) = [n for n in cfg.notes if n.startswith("the layers are not stored alike")]
    assert "1 of 2 MoE layers hold wider types (blk.2: 1.02 MB, blk.1: 960 kB)" in note
    assert cfg.stored.layer_bytes[1:] == (TINY_DS_LAYERS[1] + 37_888 + 16, 1_023_504)


def test_llama4s_interleaved_dense_layers_raise_no_note(tmp_path):
    files.llama4(tmp_path / "l4.gguf", **TINY_L4)
    cfg = load_config(str(tmp_path / "l4.gguf"))
    assert 0 < cfg.moe_layers < cfg.layers
    assert not [n for n in cfg.notes if n.startswith("the layers are not stored alike")]
