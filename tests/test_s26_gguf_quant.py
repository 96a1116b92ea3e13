"""--weights q4_k / q8_0 / q6_k ... on a config.json: the ggml type's bytes per weight from
its block struct (gguf.GGML_QUANT_SIZES), every matrix and the table in it."""

from __future__ import annotations

import pytest

from rooflab.errors import InputError
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.footprint import weight_bytes
from rooflab.workloads.llm.settings import settings_for
from rooflab.workloads.llm.stored_weights import GGML_BLOCKS

# TinyLlama-1.1B: 65,536,000 table + 65,536,000 lm_head + 22 layers x (q 4,194,304 +
# k 524,288 + v 524,288 + o 4,194,304 + 3 x 2048 x 5632) = 1,099,956,224 matrix weights;
# (2 x 22 + 1) x 2048 = 92,160 norm weights at bf16 (2 B)
TINY_MATRIX, TINY_VECTOR = 1_099_956_224, 92_160


@pytest.mark.parametrize(("name", "per_weight"), [
    ("q4_k", 144 / 256), ("Q4_K", 0.5625), ("q5_k", 176 / 256), ("q6_k", 210 / 256),
    ("q8_0", 34 / 32), ("q4_0", 18 / 32), ("q2_k", 84 / 256), ("iq4_xs", 136 / 256)])
def test_a_ggml_type_is_its_blocks_bytes(name, per_weight):
    cfg = load_config("tinyllama-1.1b")
    s = settings_for(cfg, name)
    assert s.weight_bytes == per_weight
    assert weight_bytes(cfg, s) == TINY_MATRIX * per_weight + TINY_VECTOR * 2


def test_q4_k_by_hand():
    # 1,099,956,224 x 9/16 + 92,160 x 2 = 618,725,376 + 184,320
    cfg = load_config("tinyllama-1.1b")
    assert weight_bytes(cfg, settings_for(cfg, "q4_k")) == 618_909_696
    s = settings_for(cfg, "q4_k")
    assert s.weights == "int4" and s.weight_format == "q4_k"
    assert "144 B per block of 256 weights: 0.5625 B, 4.5 bits per weight" in s.describe()


def test_the_table_matches_the_gguf_package():
    gguf = pytest.importorskip("gguf")
    known = gguf.GGMLQuantizationType.__members__     # gguf 0.10 has no TQ1_0/TQ2_0 yet
    assert {"Q4_0", "Q8_0", "Q2_K", "Q4_K", "Q6_K", "IQ4_XS"} <= set(known)
    for name, blocks in GGML_BLOCKS.items():
        if name in known:
            assert gguf.GGML_QUANT_SIZES[known[name]] == blocks, name


def test_a_mix_name_and_a_group_are_refused_with_the_fix():
    cfg = load_config("tinyllama-1.1b")
    with pytest.raises(InputError, match="q4_k_m: a llama.cpp mix .* give the .gguf file"):
        settings_for(cfg, "q4_k_m")
    with pytest.raises(InputError, match="--group 64 with --weights q6_k: a ggml type's "
                                         "block size is fixed"):
        settings_for(cfg, "q6_k", 64)


def test_the_cli_takes_a_ggml_type(capsys):
    from cli_inproc import json_of

    d = json_of(capsys, ["llm", "tinyllama-1.1b", "--on", "H100", "--weights", "q8_0",
                         "--json"])["llm"]
    assert d["settings"]["ggml"]["format"] == "q8_0"
    assert d["footprint"]["weights_bytes"] == TINY_MATRIX * 34 / 32 + TINY_VECTOR * 2


def test_whatif_levers_on_llama_cpp_weights_are_its_types():
    from rooflab.workloads.llm.whatif import standard_variants

    cfg = load_config("tinyllama-1.1b")
    rows = standard_variants(settings_for(cfg, "q4_k"))
    assert [k for k in rows if k.startswith("weights")] == ["weights q8_0", "weights q6_k"]
    assert rows["weights q8_0"].weight_bytes == 34 / 32
    assert weight_bytes(cfg, rows["weights q6_k"]) == TINY_MATRIX * 210 / 256 + TINY_VECTOR * 2


def test_settings_take_a_ggml_type_in_python():
    from rooflab.workloads.llm import Settings

    s = Settings(weights="q6_k")
    assert (s.weights, s.weight_format, s.weight_bytes) == ("int6", "q6_k", 210 / 256)
    assert Settings().with_(weights="q8_0").weight_bytes == 34 / 32
