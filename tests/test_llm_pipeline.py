"""Pipeline parallelism (`rooflab llm --pp N`): stage split, per-device memory, TPOT with
stage-to-stage transfers, throughput with micro-batches. Expected values are hand-derived."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.model.parallel import Link
from rooflab.model.pipeline import PPStep, Stage, p2p_seconds, pp_step, split_layers
from rooflab.workloads.llm import Request, Settings, analyze_llm, load_config, weight_bytes
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.pipeline import pipeline_parallel, stage_config
from rooflab.workloads.llm.timing import time_step

H200_NVLINK = 450e9        # catalog: NVLink 4 900 GB/s both directions, half per direction
NDR = 50e9                 # rooflab scale's 400 Gb/s InfiniBand NIC per GPU

# llama-3.1-405b (meta-llama/Llama-3.1-405B config.json, architecture fields); not bundled
LLAMA_405B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
              "hidden_size": 16384, "intermediate_size": 53248, "num_attention_heads": 128,
              "num_hidden_layers": 126, "num_key_value_heads": 8,
              "max_position_embeddings": 131072, "vocab_size": 128256,
              "torch_dtype": "bfloat16"}


def llm(capsys, *args):
    code = main(["llm", *args])
    out, err = capsys.readouterr()
    return code, out, err


def llm_json(capsys, *args) -> dict:
    code, out, err = llm(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)["llm"]


# --- the stage split ------------------------------------------------------------------------
def test_split_even_and_uneven_first_stages_take_one_more():
    assert split_layers(80, 2) == (range(0, 40), range(40, 80))
    assert [len(r) for r in split_layers(80, 3)] == [27, 27, 26]
    assert split_layers(10, 4) == (range(0, 3), range(3, 6), range(6, 8), range(8, 10))
    assert split_layers(5, 1) == (range(0, 5),)


@pytest.mark.parametrize("pp", [0, -2, 81])
def test_split_refuses_bad_stage_counts(pp):
    with pytest.raises(InputError, match="--pp"):
        split_layers(80, pp)


# --- the pipeline arithmetic ------------------------------------------------------------------
def _stages(*ms):
    return [Stage(i, range(i, i + 1), (), m * 1e-3) for i, m in enumerate(ms)]


def test_tpot_is_the_sum_of_stages_plus_transfers():
    link = Link("network", 10e9, 2e-6, "test")
    # batch 4 x hidden 1000 x 2 B = 8000 B -> 0.8 us on 10 GB/s + 2 us latency = 2.8 us
    step = pp_step(_stages(3, 5), batch=4, hidden=1000, act_bytes=2, link=link)
    assert step.transfer_bytes == 8000
    assert step.hop_s == pytest.approx(2.8e-6)
    assert step.tpot_s == pytest.approx(8e-3 + 2.8e-6)
    # full pipeline (2 micro-batches of 4): the 5 ms stage sets the pace, round = 10 ms
    assert step.micro_batches == 2
    assert step.round_s == pytest.approx(10e-3)
    assert step.tokens_per_s == pytest.approx(800.0)
    assert step.tokens_per_s_per_gpu == pytest.approx(400.0)
    assert step.bubble == 0.0


def test_fewer_micro_batches_than_stages_leave_a_bubble():
    link = Link("NVLink", 1e12, 0.0, "test")
    # even stages of 4 ms, 1 micro-batch: round = TPOT = 8 ms + 2 ns, each stage idle ~half
    one = pp_step(_stages(4, 4), batch=2, hidden=1000, act_bytes=1, link=link, micro_batches=1)
    assert one.round_s == pytest.approx(8e-3 + 2e-9)
    assert one.bubble == pytest.approx(1 - 4 / 8.000002)
    assert one.tokens_per_s == pytest.approx(2 / 8.000002e-3)
    # 4 stages, 2 micro-batches: bubble 1 - 2/4
    two = pp_step(_stages(1, 1, 1, 1), batch=1, hidden=10, act_bytes=1, link=link,
                  micro_batches=2)
    assert two.bubble == pytest.approx(0.5, rel=1e-6)
    assert two.tokens_per_s == pytest.approx(2 / 4e-3, rel=1e-6)


def test_a_slow_link_sets_the_pace_when_a_transfer_outlasts_a_stage():
    link = Link("network", 1e9, 0.0, "test")        # 1 MB per hop -> 1 ms
    step = pp_step(_stages(0.5, 0.5), batch=1, hidden=500_000, act_bytes=2, link=link)
    assert step.period_s == pytest.approx(1e-3)
    assert step.tpot_s == pytest.approx(2e-3)
    assert step.round_s == pytest.approx(2e-3)      # max(2 x 1 ms, 1 ms + 1 ms)


def test_p2p_and_micro_batch_validation():
    assert p2p_seconds(0, Link("NVLink", 1e9, 5e-6)) == 0.0
    with pytest.raises(InputError, match="--micro-batches"):
        PPStep(tuple(_stages(1)), 1, 10.0, Link("NVLink", 1e9), 0)


# --- LLM stages ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def h200():
    return load_roof("H200")


@pytest.mark.parametrize("name,pp", [("llama-3-70b", 3), ("gemma-2-9b", 4),
                                     ("deepseek-v2-lite", 2), ("mixtral-8x7b", 5)])
def test_stage_times_add_up_to_the_one_device_step(h200, name, pp):
    """Sliding-window (gemma-2 alternates) and MoE (deepseek's dense first layer) patterns
    survive the split: the stages' kernels are the whole step's, so their floors add up."""
    cfg, s = load_config(name), Settings()
    whole = time_step(decode_step(cfg, s, 2, 700), h200).floor_s
    link = Link("NVLink", H200_NVLINK)
    step = pipeline_parallel(cfg, s, h200, pp=pp, batch=2, context=700, prompt=64, link=link)
    assert step.stages_s == pytest.approx(whole, rel=1e-12)
    moe = sum(stage_config(cfg, st.layers).moe_layers for st in step.stages)
    assert moe == cfg.moe_layers
    sliding = sum(len(stage_config(cfg, st.layers).sliding_layers) for st in step.stages)
    assert sliding == len(cfg.sliding_layers)


def test_stage_weights_add_up_and_tied_tables_are_copied(h200):
    s, link = Settings(), Link("NVLink", H200_NVLINK)
    llama = load_config("llama-3-70b")
    st = pipeline_parallel(llama, s, h200, pp=3, batch=1, context=8, prompt=8, link=link)
    assert sum(x.weights_bytes for x in st.stages) == pytest.approx(weight_bytes(llama, s))
    gemma = load_config("gemma-2-9b")                 # tied: the last stage keeps a copy
    st = pipeline_parallel(gemma, s, h200, pp=2, batch=1, context=8, prompt=8, link=link)
    table = gemma.vocab * gemma.hidden * 2
    assert sum(x.weights_bytes for x in st.stages) == pytest.approx(
        weight_bytes(gemma, s) + table)


def test_llama_3_70b_pp2_per_device_weights_by_hand(h200):
    h, kv, inter, vocab = 8192, 1024, 28672, 128256
    layer = 2 * h * h + 2 * h * kv + 3 * h * inter          # q,o + k,v + gate,up,down
    stage0 = 40 * layer * 2 + vocab * h * 2 + 40 * 2 * h * 2   # + embedding + 2 norms/layer
    stage1 = 40 * layer * 2 + vocab * h * 2 + (40 * 2 + 1) * h * 2   # lm_head, final norm
    assert stage1 == 70_553_714_688                           # 70.6 GB
    r = analyze_llm(load_config("llama-3-70b"), h200, Settings(pp=2), Request(),
                    device_bytes=141e9)
    assert r.footprint.weights == stage1                      # the heaviest stage
    assert r.footprint.fits is True
    step = pipeline_parallel(load_config("llama-3-70b"), Settings(), h200, pp=2, batch=1,
                             context=576, prompt=512, link=Link("NVLink", H200_NVLINK))
    assert [x.weights_bytes for x in step.stages] == [stage0, stage1]


# --- the command line --------------------------------------------------------------------------
def test_cli_llama_3_70b_pp2_tpot_is_the_floor_plus_one_transfer(capsys):
    d = llm_json(capsys, "llama-3-70b", "--on", "H200", "--pp", "2", "--batch", "1")
    p, t = d["pipeline"], d["totals"]
    assert p["transfer_bytes"] == 8192 * 2                    # batch x hidden x fp16
    assert p["link"]["bytes_per_s"] == H200_NVLINK
    assert p["transfer_s"] == pytest.approx(16384 / 450e9)    # 36.4 ns
    assert p["stages_s"] == pytest.approx(d["decode"]["floor_s"], rel=1e-12)
    assert t["tpot_s"] == pytest.approx(d["decode"]["floor_s"] + 16384 / 450e9, rel=1e-12)
    assert t["tokens_per_s_per_gpu"] == pytest.approx(1 / t["tpot_s"] / 2)
    slow = max(x["seconds"] for x in p["stages"])
    rnd = max(2 * slow, t["tpot_s"])
    assert p["throughput"]["tokens_per_s"] == pytest.approx(2 / rnd)
    assert d["footprint"]["weights_bytes"] == 70_553_714_688
    assert d["settings"]["pp"] == 2


def test_cli_link_latency_applies_to_the_stage_link_without_tp(capsys):
    d = llm_json(capsys, "llama-3-70b", "--on", "H200", "--pp", "2", "--link-latency", "5")
    assert d["pipeline"]["transfer_s"] == pytest.approx(16384 / 450e9 + 5e-6)
    d = llm_json(capsys, "llama-3-70b", "--on", "H200", "--pp", "4", "--link-bw", "100GB/s",
                 "--micro-batches", "2")
    assert d["pipeline"]["transfer_s"] == pytest.approx(3 * 16384 / 100e9)
    assert d["pipeline"]["micro_batches"] == 2
    # 2 micro-batches for 4 stages: the slowest stage (the last: 20 layers + lm_head) is
    # busy 2 x its time per round (= TPOT), so idle about half of it
    p = d["pipeline"]
    slow = max(x["seconds"] for x in p["stages"])
    assert p["throughput"]["slowest_stage"] == 3
    assert p["throughput"]["round_s"] == pytest.approx(p["tpot_s"])
    assert p["throughput"]["bubble"] == pytest.approx(1 - 2 * slow / p["tpot_s"])
    assert 0.45 < p["throughput"]["bubble"] < 0.5


def _405b(tmp_path):
    path = tmp_path / "llama-3.1-405b.json"
    path.write_text(json.dumps(LLAMA_405B))
    return str(path)


def test_cli_405b_tp8_pp2_over_two_nodes(capsys, tmp_path):
    d = llm_json(capsys, _405b(tmp_path), "--on", "H200", "--tp", "8", "--pp", "2")
    h, inter, vocab = 16384, 53248 // 8, 128256 // 8         # per TP rank
    layer = 2 * h * (128 // 8 * 128) + 2 * h * 128 + 3 * h * inter
    last = 63 * layer * 2 + vocab * h * 2 + (63 * 2 + 1) * h * 2
    assert d["footprint"]["weights_bytes"] == last            # 50.7 GB per GPU
    assert d["footprint"]["fits"] is True
    p = d["pipeline"]
    assert (p["gpus"], [x["layers"] for x in p["stages"]]) == (16, [63, 63])
    assert p["link"]["bytes_per_s"] == NDR                    # 16 GPUs leave one node
    assert p["transfer_s"] == pytest.approx(16384 * 2 / NDR)  # 655 ns
    # each stage carries its 63 layers' share of the TP all-reduces; the last one also the
    # logits gather (review 18d E): 128,256 x 2 B, 7/8 of it at 450 GB/s = 499 ns
    gather = 7 / 8 * 128_256 * 2 / 450e9
    assert d["parallel"]["logits_gather_s"] == pytest.approx(gather)
    # and the first one the embedding's all-reduce (H1): 16,384 x 2 B, 2 x 7/8 of it at
    # 450 GB/s = 127.4 ns; the stages differ by 498.8 - 127.4 = 371.3 ns
    embedding = 2 * 7 / 8 * 16384 * 2 / 450e9
    assert d["parallel"]["embedding_allreduce_s"] == pytest.approx(embedding)
    assert p["stages"][1]["comm_s"] - p["stages"][0]["comm_s"] == pytest.approx(
        gather - embedding)
    assert sum(x["comm_s"] for x in p["stages"]) == pytest.approx(
        d["parallel"]["comm_s"] + embedding + gather)
    assert d["totals"]["tpot_s"] == pytest.approx(d["parallel"]["tpot_s"] + p["transfer_s"])
    # --link-bw stays the TP link's; --pp-link-bw sets the stage link
    d = llm_json(capsys, _405b(tmp_path), "--on", "H200", "--tp", "8", "--pp", "2",
                 "--link-bw", "300GB/s", "--pp-link-bw", "25GB/s", "--pp-link-latency", "4")
    assert d["parallel"]["link_bytes_per_s"] == 300e9
    assert d["pipeline"]["link"]["bytes_per_s"] == 25e9
    assert d["pipeline"]["transfer_s"] == pytest.approx(32768 / 25e9 + 4e-6)


def test_cli_pp_makes_405b_fit_on_one_node(capsys, tmp_path):
    code, out, _ = llm(capsys, _405b(tmp_path), "--on", "H200", "--tp", "4",
                       "--phase", "decode")
    assert code == 0 and "does NOT fit" in out
    code, out, _ = llm(capsys, _405b(tmp_path), "--on", "H200", "--tp", "4", "--pp", "2",
                       "--phase", "decode")
    assert code == 0
    assert "memory per device (context 639, its heaviest stage)" in out and "(fits)" in out
    assert "pipeline parallel x2 (x TP 4 = 8 GPUs)" in out
    assert "does not cut single-stream latency" in out
    assert "450 GB/s" in out                                  # 8 GPUs: one node, NVLink


@pytest.mark.parametrize("args,needle", [
    (["--pp", "0"], "--pp must be >= 1"),
    (["--pp", "81"], "more stages than the model's 80 layers"),
    (["--micro-batches", "2"], "add --pp N"),
    (["--pp", "2", "--micro-batches", "0"], "--micro-batches must be >= 1"),
    (["--pp", "2", "--whatif"], "drop --tp/--pp"),
    (["--pp", "2", "--pp-link-latency", "-1"], "--pp-link-latency must be >= 0"),
])
def test_cli_bad_pp_input(capsys, args, needle):
    code, _, err = llm(capsys, "llama-3-70b", "--on", "H200", *args)
    assert code == 2
    assert "error:" in err and needle in err


def test_docs_quote_the_run(capsys):
    """docs/llm.md's --pp example is this run's output, line for line."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "llm.md").read_text()
    code, out, _ = llm(capsys, "llama-3-70b", "--on", "H200", "--pp", "2", "--batch", "1",
                       "--phase", "decode")
    assert code == 0
    lines = [x for x in out.splitlines() if x.startswith(("TPOT", "memory", "pipeline"))]
    assert len(lines) == 6      # with the throughput view's memory (review 11b #2)
    for line in lines:
        assert line in doc, line


def test_bundled_llama_3_1_405b_has_its_published_parameter_count():
    # the published config: 126 layers of hidden 16384, FFN 53248, GQA 128/8, vocab 128256
    from rooflab.workloads.llm.config import load_config
    from rooflab.workloads.llm.params import count_params

    cfg = load_config("llama-3.1-405b")
    assert (cfg.layers, cfg.hidden, cfg.intermediate, cfg.kv_heads) == (126, 16384, 53248, 8)
    # q, o 16384^2 each; k, v 16384 x (8 x 128); gate, up, down; two RMSNorms per layer
    layer = 2 * 16384 * 16384 + 2 * 16384 * 1024 + 3 * 16384 * 53248 + 2 * 16384
    hand = 126 * layer + 2 * 128256 * 16384 + 16384    # untied embedding and head; final norm
    assert count_params(cfg).total == hand == 405_853_388_800   # "405B" (Meta: 405.85 B)
