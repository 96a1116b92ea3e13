"""An ML inference engineer's first hour with `rooflab llm`, `specs`, `choose`: the
rough edges found, each pinned with hand-computed numbers."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.workloads.llm.config import load_config, parse_config

# Mixtral-8x7B's published fields (HF config.json), written by hand as a user would.
MIXTRAL = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
           "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
           "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000}


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, name, d):
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return str(p)


# --- hand-written config.json: odd fields are named, never a traceback ------------------

@pytest.mark.parametrize("field, value", [
    ("num_key_value_heads", "eight"),     # was: ValueError traceback from int()
    ("num_key_value_heads", "8"),         # was: silently read as 8
    ("num_key_value_heads", -4),          # was: "n must be a positive whole number; got -512"
    ("head_dim", "x"),                    # was: traceback
    ("sliding_window", "abc"),            # was: traceback
    ("num_experts_per_tok", 2.5),
    ("first_k_dense_replace", "x"),       # was: traceback
    ("moe_intermediate_size", -1),
])
def test_bad_integer_field_names_file_and_field(capsys, tmp_path, field, value):
    path = write(tmp_path, "config.json", {**MIXTRAL, field: value})
    code, out, err = run(capsys, "llm", path, "--on", "H100", "--phase", "decode")
    assert code == 2
    assert "Traceback" not in err
    line = err.strip()
    assert line.startswith("error: ") and "\n" not in line
    assert path in line and f"'{field}'" in line and repr(value) in line


def test_tie_word_embeddings_as_string_is_refused(tmp_path):
    # bool("false") is True: the string would have tied the embeddings and dropped
    # lm_head's 32000 x 4096 x 2 B = 262 MB from the weights without a word.
    with pytest.raises(InputError, match=r"tie_word_embeddings.*true or false.*'false'"):
        parse_config({**MIXTRAL, "tie_word_embeddings": "false"}, where="c.json")


def test_top_k_above_expert_count_is_refused():
    # 16 of 8 experts per token gave "37 G parameters, 71.7 G active": active > total.
    with pytest.raises(InputError, match=r"num_experts_per_tok 16 is more than the 8 experts "
                                         r"\(num_local_experts\)"):
        parse_config({**MIXTRAL, "num_experts_per_tok": 16}, where="c.json")


def test_hand_written_mixtral_counts_like_the_published_model():
    cfg = parse_config(MIXTRAL, name="mixtral")
    assert cfg.moe.experts == 8 and cfg.moe.top_k == 2 and cfg.kv_heads == 8
    # Per layer: attention 4096 x (4096 + 2 x 1024 + 4096) = 41.9 M, 8 experts x 3 x
    # 4096 x 14336 = 1409 M, router 32.8 k, norms 8.2 k; x 32 = 46.43 G; embedding and
    # lm_head 2 x 32000 x 4096 = 262 M; final norm 4 k: 46.70 G (published: 46.7 B).
    from rooflab.workloads.llm.params import count_params

    assert count_params(cfg).total == pytest.approx(46_702_792_704, rel=1e-9)


def test_valid_optional_fields_still_read():
    # Zeros mean "none" in HF configs (first_k_dense_replace 0, n_shared_experts 0);
    # floats that are whole numbers (4096.0) are integers.
    cfg = parse_config({**MIXTRAL, "first_k_dense_replace": 0, "n_shared_experts": 0,
                        "sliding_window": 4096.0, "tie_word_embeddings": False,
                        "head_dim": 128})
    assert cfg.moe.first_dense == 0 and cfg.moe.shared == 0
    assert cfg.sliding_window == 4096 and isinstance(cfg.sliding_window, int)
    assert cfg.head_dim == 128 and not cfg.tied_embeddings


# --- tensor parallel past one node -------------------------------------------------------

def test_tp_beyond_one_node_runs_on_infiniband_not_nvlink(capsys):
    # NVLink joins the 8 GPUs of an HGX node; --tp 16 all-reduces cross the NICs: one
    # ring per NIC, 8 x 50 GB/s = 400 GB/s across nodes (review 11b #5).
    # llama-2-7b decode, batch 1: 64 all-reduces of 4096 x 2 B = 8192 B; ring bytes
    # 2 x 15/16 x 8192 = 15360 B at 400 GB/s = 38.4 ns each, 2.46 us per step.
    code, out, _ = run(capsys, "llm", "llama-2-7b", "--on", "H100", "--tp", "16",
                       "--phase", "decode", "--json")
    assert code == 0
    par = json.loads(out)["llm"]["parallel"]
    assert par["link_bytes_per_s"] == 400e9
    assert "spans more than one 8-GPU node" in par["link"]
    assert par["comm_s"] == pytest.approx(64 * 2 * 15 / 16 * 8192 / 400e9, rel=1e-9)


def test_tp_within_one_node_keeps_nvlink(capsys):
    # --tp 8: 64 x 2 x 7/8 x 8192 B / 450 GB/s = 2.04 us.
    code, out, _ = run(capsys, "llm", "llama-2-7b", "--on", "H100", "--tp", "8",
                       "--phase", "decode", "--json")
    assert code == 0
    par = json.loads(out)["llm"]["parallel"]
    assert par["link_bytes_per_s"] == 450e9
    assert par["comm_s"] == pytest.approx(64 * 2 * 7 / 8 * 8192 / 450e9, rel=1e-9)


# --- specs compare takes the comma list the other verbs take ------------------------------

def test_specs_compare_accepts_commas(capsys):
    code, out, err = run(capsys, "specs", "compare", "H100,H200", "MI300X", "--json")
    assert code == 0, err
    devices = json.loads(out)["devices"]
    assert [d["name"] for d in devices] == ["NVIDIA H100 SXM", "NVIDIA H200 SXM",
                                            "AMD Instinct MI300X"]


# --- a batch no split can hold is not told to "combine" --tp and --pp ----------------------

def test_batch_too_big_for_any_split_says_lower_the_batch(capsys):
    # llama-2-7b on T4 at batch 60000, context 639 (512 + 128 - 1): KV 2 x 32 x 32 x 128 x
    # 639 x 2 B = 335.0 MB per sequence -> 20.1 TB; at --tp 32 --pp 32 each device holds 1/1024 of
    # it, 19.7 GB > 16 GB.
    code, out, _ = run(capsys, "llm", "llama-2-7b", "--on", "T4", "--batch", "60000",
                       "--phase", "decode")
    assert code == 0
    assert "KV 20.1 TB" in out
    assert "no split fits batch 60000, not even --tp 32 --pp 32: lower --batch" in out
    assert "combine them" not in out


def test_batch_that_a_split_holds_still_names_it(capsys):
    # llama-3-70b fp16 weights 141 GB > 80 GB: one H100 holds none; --tp 2 or --pp 2 do.
    code, out, _ = run(capsys, "llm", "llama-3-70b", "--on", "H100", "--phase", "decode")
    assert code == 0
    assert "batch 1 fits with --pp 2 or --tp 2" in out


# --- Hugging Face repo ids resolve to the bundled base config ----------------------------

@pytest.mark.parametrize("repo_id, bundled", [
    ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
    ("meta-llama/Llama-2-70b-chat-hf", "llama-2-70b"),     # the longest name, not 7b
    ("meta-llama/Meta-Llama-3-8B", "llama-3-8b"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
    ("mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"),
    ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "tinyllama-1.1b"),
])
def test_repo_id_reads_the_bundled_config_and_says_so(repo_id, bundled):
    cfg = load_config(repo_id)
    assert cfg.name == bundled
    assert any(f"'{repo_id}' read as the bundled {bundled}" in n for n in cfg.notes)


def test_repo_id_with_another_architecture_is_not_guessed():
    # Llama-3.1-8B differs from Llama-3-8B (131072 positions, RoPE scaling): no match.
    with pytest.raises(InputError, match=r"'meta-llama/Llama-3.1-8B' is not a file or a "
                                         r"bundled config \(closest: llama-3-8b"):
        load_config("meta-llama/Llama-3.1-8B")


def test_repo_id_on_the_command_line(capsys):
    # llama-2-7b fp16 on H100 SXM, batch 1, context 576: weights read 13.2 GB
    # (6.74 G params less the 262 MB embedding table) + KV 2 x 32 x 32 x 128 x 576 x 2 B
    # = 302 MB, over 3.35 TB/s: 4.04 ms.
    code, out, _ = run(capsys, "llm", "meta-llama/Llama-2-7b-hf", "--on", "H100",
                       "--phase", "decode")
    assert code == 0
    assert "model: llama-2-7b (llama-like), 6.74 G parameters" in out
    assert "TPOT floor 4.04 ms" in out
    assert "read as the bundled llama-2-7b" in out


# --- a --tp sweep counts the all-reduces, which grow with the batch -----------------------

def test_tp_sweep_adds_the_allreduces_per_batch(capsys):
    # llama-3-70b --tp 8 on H100 (NVLink 450 GB/s per direction), 160 all-reduces per
    # step of batch x 8192 x 2 B. At batch 256: 4.19 MB x 2 x 7/8 / 450 GB/s = 16.3 us
    # each, 2.61 ms per step, on top of the table's 9.05 ms (tokens/s 28299 -> ~21960).
    code, out, _ = run(capsys, "llm", "llama-3-70b", "--on", "H100", "--tp", "8",
                       "--batch", "1,256", "--phase", "decode", "--json")
    assert code == 0
    llm = json.loads(out)["llm"]
    table = {p["batch"]: p["tpot_s"] for p in llm["sweep"]["points"]}
    rows = {row["batch"]: row for row in llm["parallel"]["sweep"]}
    comm_256 = 160 * 2 * 7 / 8 * 256 * 8192 * 2 / 450e9
    assert rows[256]["allreduce_s"] == pytest.approx(comm_256, rel=1e-9)
    assert comm_256 == pytest.approx(2.61e-3, rel=1e-3)
    # + the logits gather (review 18d E): 256 x 128,256 x 2 B = 65.7 MB, 7/8 of it over
    # 450 GB/s = 128 us
    gather_256 = 7 / 8 * 256 * 128_256 * 2 / 450e9
    assert rows[256]["logits_gather_s"] == pytest.approx(gather_256, rel=1e-9)
    assert gather_256 == pytest.approx(127.7e-6, rel=1e-3)
    # + the vocab-parallel embedding's one all-reduce (H1) of the same 4.19 MB: 16.3 us
    embedding_256 = 2 * 7 / 8 * 256 * 8192 * 2 / 450e9
    assert rows[256]["embedding_allreduce_s"] == pytest.approx(embedding_256, rel=1e-9)
    assert embedding_256 == pytest.approx(16.31e-6, rel=1e-3)
    step_256 = table[256] + comm_256 + embedding_256 + gather_256
    assert rows[256]["tpot_s"] == pytest.approx(step_256, rel=1e-12)
    assert rows[256]["tokens_per_s"] == pytest.approx(256 / step_256)
    # the tabled batch's row is the TPOT line's number
    assert rows[1]["tpot_s"] == pytest.approx(llm["parallel"]["tpot_s"], rel=1e-12)


def test_tp_sweep_line_in_the_text(capsys):
    code, out, _ = run(capsys, "llm", "llama-3-70b", "--on", "H100", "--tp", "8",
                       "--batch", "1,256", "--phase", "decode")
    assert code == 0
    assert ("the sweep's TPOT floors are one device's kernels; with --tp 8's 160 "
            "all-reduces per step, its embedding all-reduce and its logits gather"
            ) in " ".join(out.split())
    # 9.05 ms + 2.61 ms all-reduces + 16.3 us embedding all-reduce + 128 us logits gather
    # = 11.80 ms
    assert "b=256 11.8 ms" in out


# --- small option mistakes ----------------------------------------------------------------

def test_empty_compare_is_refused(capsys):
    code, _, err = run(capsys, "llm", "llama-2-7b", "--on", "H100", "--compare", ",")
    assert code == 2
    assert "error: --compare takes device names separated by commas" in err


def test_group_zero_names_the_option(capsys):
    code, _, err = run(capsys, "llm", "llama-2-7b", "--on", "H100", "--weights", "int4",
                       "--group", "0")
    assert code == 2
    assert "error: --group (int4/int8 quantization group size) must be >= 1" in err


# --- configs that are no decoder-only LM ---------------------------------------------------

def test_encoder_only_config_is_refused_by_name(capsys, tmp_path):
    # BERT has every field a decoder needs; it used to be counted as a 160 M "decoder"
    # with a TPOT, which BERT does not have.
    bert = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 768,
            "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
            "vocab_size": 30522}
    path = write(tmp_path, "bert.json", bert)
    code, _, err = run(capsys, "llm", path, "--on", "H100")
    assert code == 2 and "Traceback" not in err
    assert f"error: {path}: 'BertForMaskedLM' is an encoder-only model" in err
    assert "rooflab ai matmul" in err


def test_encoder_decoder_config_is_refused_by_name():
    t5 = {"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "d_model": 512,
          "num_layers": 6, "num_heads": 8, "vocab_size": 32128, "is_encoder_decoder": True}
    with pytest.raises(InputError, match=r"'T5ForConditionalGeneration' is an "
                                         r"encoder-decoder model"):
        parse_config(t5, where="t5.json")


def test_multimodal_wrapper_counts_the_language_model_and_says_so():
    # LLaVA-1.5-7B's text_config is Llama-2-7B's with 32064 tokens: 6.74 G parameters
    # (6,738,415,616 + 2 x 64 x 4096 = 6,738,939,904).
    llava = {"model_type": "llava", "text_config": {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
        "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 32064}}
    cfg = parse_config(llava, name="llava")
    from rooflab.workloads.llm.params import count_params

    assert count_params(cfg).total == 6_738_415_616 + 2 * 64 * 4096
    assert any("'llava' config: counted its text_config" in n for n in cfg.notes)


def test_launch_range_with_equal_ends_is_one_number(capsys):
    # TPU v5e's catalog launch floor is 10 us, the top of seed 004's 5-10 us range:
    # 451 launches x 10 us = 4.51 ms (it printed "10 us-10 us = 4.51 ms-4.51 ms").
    # Work floor: (13.2 GB weights + 302 MB KV + 10.9 MB act) / 819 GB/s = 16.5 ms.
    code, out, _ = run(capsys, "llm", "llama-2-7b", "--on", "TPU v5e", "--phase", "decode")
    assert code == 0
    assert ("x 10 us = 4.51 ms per step vs a 16.5 ms work floor") in out
    assert "10 us-10 us" not in out


def test_model_folder_without_config_json(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my-model").mkdir()
    code, _, err = run(capsys, "llm", "my-model", "--on", "H100")
    assert code == 2
    assert "error: my-model: is a directory with no config.json in it" in err
    # a folder named like a bundled config does not hide it
    (tmp_path / "gpt2").mkdir()
    code, out, _ = run(capsys, "llm", "gpt2", "--on", "H100", "--phase", "decode")
    assert code == 0 and "model: gpt2 (gpt2-like), 124 M parameters" in out


# --- whatif --batch on an llm document: the step slows, the tokens/s rise ------------------

def test_whatif_batch_says_time_per_token(capsys, tmp_path):
    doc = tmp_path / "decode.json"
    code, _, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--context", "500",
                     "--phase", "decode", "-o", str(doc))
    assert code == 0
    code, out, err = run(capsys, "whatif", str(doc), "--on", "T4", "--batch", "16")
    assert code == 0, err
    text = " ".join(out.split())          # undo the console's wrapping
    # work floors (llm's TPOT floor) 6.51 ms -> 7.21 ms; per token 6.51 ms / 1 -> 7.21 ms
    # / 16 = 451 us: 16 x 6.51 / 7.21 = 14.45 (14.4x: 3 figures) the tokens/s.
    assert "work floor: 6.51 ms -> 7.21 ms (0.90x)" in text
    # the line names the floor it divides (review r8 F8a)
    assert ("per token on the work floor (batch 1 -> 16 sequences per step): 6.51 ms -> "
            "451 us, 14.4x the tokens/s") in text
    code, out, _ = run(capsys, "whatif", str(doc), "--on", "T4", "--quantize", "int4")
    assert code == 0 and "per token" not in out


# --- Qwen3-MoE, written by hand from its published config.json ----------------------------

QWEN3_MOE = {"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
             "moe_intermediate_size": 768, "num_hidden_layers": 48,
             "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
             "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
             "mlp_only_layers": [], "vocab_size": 151936, "tie_word_embeddings": False}


def test_qwen3_moe_counts_and_is_checked():
    from rooflab.workloads.llm.params import count_params

    cfg = parse_config(QWEN3_MOE, name="qwen3-30b-a3b")
    # per layer: q 2048 x 4096 + k, v 2 x 2048 x 512 + o 4096 x 2048 = 18.87 M; experts
    # 128 x 3 x 2048 x 768 = 604 M; router 2048 x 128; 2 norms; Qwen3's per-head q/k
    # norms 2 x 128. x 48 + 2 x 151936 x 2048 + 2048 = 30,532,122,624 (transformers' count;
    # 12,288 fewer before the q/k norms were counted, review 11b #14).
    total = 48 * (18_874_368 + 128 * 3 * 2048 * 768 + 2048 * 128 + 2 * 2048 + 2 * 128) \
        + 2 * 151936 * 2048 + 2048
    assert count_params(cfg).total == total == 30_532_122_624
    assert not cfg.notes     # no "not one rooflab has checked" note


def test_qwen_moe_layer_pattern_is_read():
    # mlp_only_layers [0, 1] of 48: layers 0 and 1 dense, the other 46 MoE
    cfg = parse_config({**QWEN3_MOE, "mlp_only_layers": [0, 1]})
    assert cfg.moe_layers == 46 and not cfg.is_moe_layer(0) and cfg.is_moe_layer(2)


def test_tpu_pod_interconnect_is_not_cut_at_8_chips(capsys):
    # TPU v5e chips share ICI across a 256-chip pod: --tp 16 stays on ICI, 200 GB/s per
    # direction (Google: 400 GB/s bidirectional): 64 x 2 x 15/16 x 8192 B / 200 GB/s = 4.92 us.
    code, out, _ = run(capsys, "llm", "llama-2-7b", "--on", "TPU v5e", "--tp", "16",
                       "--phase", "decode", "--json")
    assert code == 0
    par = json.loads(out)["llm"]["parallel"]
    assert par["link_bytes_per_s"] == 200e9 and "ICI" in par["link"]
    assert par["comm_s"] == pytest.approx(64 * 2 * 15 / 16 * 8192 / 200e9, rel=1e-9)


def test_specs_compare_with_only_commas(capsys):
    code, _, err = run(capsys, "specs", "compare", ",")
    assert code == 2 and "error: specs compare takes device names" in err


def test_deepseek_moe_without_expert_width_is_refused():
    # DeepSeek-V2-Lite's experts are 1408 wide, its dense MLP 10944: without
    # moe_intermediate_size the experts would be counted 7.8x too big.
    d = json.loads((resources.files("rooflab.workloads") / "configs"
                    / "deepseek-v2-lite.json").read_text())
    assert parse_config(d).moe.intermediate == 1408
    del d["moe_intermediate_size"]
    with pytest.raises(InputError, match=r"c.json: a deepseek_v2 MoE config needs "
                                         r"'moe_intermediate_size'.*intermediate_size 10944"):
        parse_config(d, where="c.json")


@pytest.mark.parametrize("name, closest", [
    # DeepSeek-V2 is 236 B; it used to load DeepSeek-V2-Lite (15.7 B) without a word
    ("deepseek-ai/DeepSeek-V2", "deepseek-v2-lite"),
    # GPT-2 medium is 355 M with 1024 wide layers: another size, not a tune of gpt2
    ("openai-community/gpt2-medium", "gpt2"),
    ("gpt2-xl", "gpt2"),
])
def test_another_model_or_size_is_not_read_as_a_bundled_one(name, closest):
    with pytest.raises(InputError, match=rf"'{name}' is not a file or a bundled config "
                                         rf"\(closest: {closest}"):
        load_config(name)


@pytest.mark.parametrize("name, bundled", [("tinyllama", "tinyllama-1.1b"),
                                           ("Mixtral", "mixtral-8x7b"),
                                           ("TinyLlama-1.1B", "tinyllama-1.1b")])
def test_a_name_without_its_size_still_finds_the_one_size(name, bundled):
    assert load_config(name).name == bundled
