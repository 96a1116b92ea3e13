"""s26 review v1: split GGUFs read whole (F1), damaged header lengths (F4), llama.cpp's
q8_0/q4_0 KV caches (F5), the notes after --act/--weights replace a file's types (F6)."""

from __future__ import annotations

import struct

import pytest
from s26_gguf_files import TINY_LAYER_BYTES, TINY_TOTAL_BYTES, write_tiny_llama

from rooflab.errors import InputError
from rooflab.workloads.llm import load_config


def test_a_split_gguf_counts_every_shard(tmp_path):
    """21 tensors in shards of 8: tiny-00001-of-00003.gguf .. -00003; the whole model's
    1,073,408 B (s26_gguf_files' hand count), output.weight (in shard 3) untied."""
    write_tiny_llama(tmp_path / "tiny.gguf", split_max_tensors=8)
    shards = sorted(p.name for p in tmp_path.iterdir())
    assert shards == [f"tiny-0000{k}-of-00003.gguf" for k in (1, 2, 3)]
    for name in (shards[0], shards[2]):        # any shard given reads all three
        cfg = load_config(str(tmp_path / name))
        assert cfg.name == "tiny"
        assert cfg.stored.file_bytes == TINY_TOTAL_BYTES
        assert cfg.stored.layer_bytes == TINY_LAYER_BYTES
        assert not cfg.tied_embeddings
        assert "and its 2 other shards" in cfg.notes[0]


def test_a_missing_shard_is_named(tmp_path):
    write_tiny_llama(tmp_path / "tiny.gguf", split_max_tensors=8)
    (tmp_path / "tiny-00002-of-00003.gguf").unlink()
    with pytest.raises(InputError, match="shard 2 of 3, tiny-00002-of-00003.gguf, is "
                                         "missing"):
        load_config(str(tmp_path / "tiny-00001-of-00003.gguf"))
    (tmp_path / "tiny-00001-of-00003.gguf").rename(tmp_path / "renamed.gguf")
    with pytest.raises(InputError, match="split into 3 files, but its name is not"):
        load_config(str(tmp_path / "renamed.gguf"))


def test_a_damaged_length_is_a_header_error_not_out_of_memory(tmp_path, capsys):
    """A 35 B file whose first key claims a 2**40 B string; an array of 2**61 uint8."""
    from cli_inproc import one_line_error

    bad = tmp_path / "badlen.gguf"
    bad.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**40) + b"abc")
    err = one_line_error(capsys, ["llm", str(bad), "--on", "T4"])
    assert str(bad) in err and "metadata entry 1 of 1 at byte 32 claims " \
        "1,099,511,627,776 B, more than the whole file's 35 B" in err
    arr = tmp_path / "badarr.gguf"
    arr.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 3) + b"abc"
                    + struct.pack("<IIQ", 9, 0, 2**61))
    with pytest.raises(InputError, match="metadata key 'abc' at byte 51 claims "
                                         "2,305,843,009,213,693,952 B"):
        load_config(str(arr))


def test_phi3_keeps_the_whole_context_as_llama_cpp_does(tmp_path):
    """llama.cpp's LLM_ARCH_PHI3 loader sets n_swa 0 ("Phi SWA is currently disabled"):
    at context 4000 every layer keeps 4000 tokens, not the header's 2047-token window. A
    llama with the same key keeps its window."""
    phi = load_config(str(write_tiny_llama(tmp_path / "phi.gguf", arch="phi3", window=2047)))
    assert not phi.sliding_window
    assert phi.kv_len(0, 4000) == phi.kv_len(1, 4000) == 4000
    assert any("phi3.attention.sliding_window (2047) is not applied" in n for n in phi.notes)
    llama = load_config(str(write_tiny_llama(tmp_path / "l.gguf", window=2047)))
    assert llama.sliding_window == 2047 and llama.kv_len(0, 4000) == 2047


def test_kv_q8_0_and_q4_0_count_llama_cpp_block_bytes():
    """llama.cpp's -ctk q8_0: block_q8_0 is 32 int8 + an fp16 scale, 34 B per 32 values;
    q4_0 18 B per 32. TinyLlama: 22 layers x 2 x 4 KV heads x 64 = 11,264 values a token,
    x 1.0625 = 11,968 B (--kv int8 counts 11,264), x 0.5625 = 6,336 B."""
    from rooflab.workloads.llm.settings import Settings, settings_for

    cfg = load_config("tinyllama-1.1b")
    assert cfg.layers * cfg.kv_elems_per_token() == 11_264
    q8 = settings_for(cfg, kv="q8_0")
    assert (q8.kv, q8.kv_format, q8.kv_bytes) == ("int8", "q8_0", 1.0625)
    assert 11_264 * q8.kv_bytes == 11_968
    assert 11_264 * settings_for(cfg, kv="q4_0").kv_bytes == 6_336
    assert settings_for(cfg, kv="int8").kv_bytes == 1.0
    assert "KV q8_0 (llama.cpp's ggml blocks of 32 with an fp16 scale: 1.0625 B a value" \
        in q8.describe()
    # a what-if's other cache type drops the block format with it
    assert Settings(kv="fp8", kv_format="q8_0").kv_bytes == 1.0
    with pytest.raises(InputError, match="int4, q8_0, q4_0, q4_1, iq4_nl"):
        settings_for(cfg, kv="q5_0")


def test_the_notes_follow_what_replaces_the_file(tmp_path, capsys):
    """--act nvfp4 and --weights int4 replace the Q4_K_M types: no 'totals are the file's
    bytes' note; --act nvfp4 says it replaced them; --kv drops the f16 default's clause."""
    from cli_inproc import json_of

    path = str(write_tiny_llama(tmp_path / "tiny.gguf"))

    def notes(*extra):
        argv = ["llm", path, "--on", "B200", "--phase", "decode", "--json", *extra]
        return json_of(capsys, argv)["llm"]["notes"]

    plain = notes()
    assert any(n.startswith("the layers are not stored alike") for n in plain)
    assert any("the KV cache at llama.cpp's default f16" in n for n in plain)
    for extra in (("--act", "nvfp4"), ("--weights", "int4")):
        got = notes(*extra)
        assert not any(n.startswith("the layers are not stored alike") for n in got)
        assert sum("replaces the GGUF file's tensor types (Q4_K_M" in n for n in got) == 1
    assert any(n.startswith("--act nvfp4 replaces the GGUF file's tensor types") for n in
               notes("--act", "nvfp4"))
    assert not any("default f16" in n for n in notes("--kv", "q8_0"))


def test_whatif_on_a_gguf_offers_llama_cpps_cache_type_not_fp8(tmp_path):
    # llama.cpp has no fp8 KV cache; its -ctk/-ctv q8_0 is the lever (review s26 v1 F5)
    import json

    from rooflab.cli.main import main

    path = write_tiny_llama(tmp_path / "t.gguf")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["llm", str(path), "--on", "EPYC 9654", "--whatif", "--json"]) == 0
    labels = [w["label"] for w in json.loads(out.getvalue())["llm"]["whatif"]]
    assert "KV q8_0" in labels and "KV fp8" not in labels
