"""Review 11b (an inference engineer's view): pipeline memory in flight (#2), the multi-node
ring on every NIC of a node (#5), whatif's legacy floor keys (#7), whatif/choose on a --tp
file (#8), --fuse totals on the whole step (#11), whatif --hardware's fit check (#13).

Hand numbers: llama-3-70b has 80 layers, hidden 8192, 8 KV heads of 128, so one token adds
2 x 8 x 128 x 2 B = 4096 B of fp16 KV per layer (81,920 B over a 20-layer stage)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def flat(text: str) -> str:
    return " ".join(text.split())


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def llm_json(capsys, tmp_path, name: str, *args: str) -> tuple[str, dict]:
    code, out, err = run(capsys, "llm", *args, "--json")
    assert code == 0, err
    path = tmp_path / name
    path.write_text(out)
    return str(path), json.loads(out)


# --- #2: --pp throughput keeps M x batch sequences of KV on every stage -------------------

def test_pipeline_counts_every_micro_batch_in_flight(capsys):
    code, out, err = run(capsys, "llm", "llama-3-70b", "--on", "H100", "--pp", "4",
                         "--batch", "300", "--phase", "decode", "--json")
    assert code == 0, err
    pipe = json.loads(out)["llm"]["pipeline"]
    assert pipe["micro_batches"] == 4 and pipe["in_flight_sequences"] == 1200
    st = pipe["stages"][3]
    # 4 micro-batches x 300 sequences x 639 tokens (512 + 128 - 1: the last token is never
    # cached) x 81,920 B = 62.8 GB (it said 15.7 GB)
    assert st["kv_bytes"] == pytest.approx(1200 * 639 * 81_920)
    assert st["kv_bytes_per_micro_batch"] == pytest.approx(300 * 639 * 81_920)
    # + 36.3 GB weights + one prompt's activations (67.6 MB) + the LM head stage's fp32
    # decode logits, 4 x 300 x 128,256 x 4 B = 4 x 153,907,200 = 615,628,800 B (H1):
    # 99,211,416,576 + 615,628,800 = 99,827,045,376 B = 99.8 GB > 80 GB
    assert st["decode_logits_bytes"] == 300 * 128_256 * 4 == 153_907_200
    assert st["total_bytes"] == pytest.approx(
        st["weights_bytes"] + st["kv_bytes"] + st["activations_bytes"]
        + 4 * st["decode_logits_bytes"])
    assert st["total_bytes"] == pytest.approx(99_827_045_376)
    assert pipe["device_bytes"] == 80e9
    assert pipe["fits_in_flight"] is False
    # the workspace is reserved once, not per sequence: by hand, stage 3 holds 20 layers
    # + lm_head + norm = 18,163,769,344 params x 2 B = 36,327,538,688 B, one prompt's
    # 512 x (8192 + 2 x 28672) x 2 B + 128,256 x 4 B = 67,621,888 B, and per sequence
    # 639 x 81,920 = 52,346,880 B of KV + 128,256 x 4 = 513,024 B of decode logits (H1), so
    # (80e9 - 36,327,538,688 - 67,621,888) / (4 x 52,859,904) = 43,604,839,424 /
    # 211,439,616 = 206.2 -> 206 (KV alone: / (4 x 52,346,880) = 208.2 -> 208)
    assert st["weights_bytes"] == pytest.approx(36_327_538_688)
    assert st["activations_bytes"] == pytest.approx(67_621_888)
    assert pipe["max_batch_per_micro_batch"] == 206
    code, out, _ = run(capsys, "llm", "llama-3-70b", "--on", "H100", "--pp", "4",
                       "--batch", "300", "--phase", "decode")
    text = flat(out)
    assert "NOT reachable: the micro-batches in flight do not fit" in text
    assert ("KV 62.8 GB (4 x 15.7 GB)" in text
            and "does NOT fit with 4 micro-batches in flight; at most 206 per micro-batch"
            in text)


def test_pipeline_that_fits_in_flight_says_so(capsys):
    # H200 --pp 2 --batch 1: 2 x 105 MB of KV per stage (639 tokens: 512 + 128 - 1),
    # 70.8 GB of 141 GB
    code, out, _ = run(capsys, "llm", "llama-3-70b", "--on", "H200", "--pp", "2",
                       "--batch", "1", "--phase", "decode", "--json")
    assert code == 0
    pipe = json.loads(out)["llm"]["pipeline"]
    assert pipe["fits_in_flight"] is True
    assert pipe["stages"][1]["kv_bytes"] == pytest.approx(2 * 639 * 40 * 4096)


# --- #5: a ring across nodes runs on all the node's NICs ---------------------------------

def test_scale_multi_node_ring_gets_the_node_nic_aggregate(capsys):
    code, out, _ = run(capsys, "scale", "--on", "H100 SXM", "--hidden", "4096", "--blocks",
                       "32", "--tokens", "4096", "--json")
    assert code == 0
    doc = json.loads(out)
    grads = 32 * 12 * 4096**2 * 2          # 12.9 GB of bf16 gradients
    pts = {p["gpus"]: p for p in doc["points"]}
    # 8 NICs x 50 GB/s = 400 GB/s: 2 x 15/16 x 12.9 GB / 400 GB/s = 60.4 ms (was 483 ms)
    assert doc["links"]["inter"]["bus_bytes_per_s"] == 400e9
    assert doc["links"]["nics_per_node"] == 8
    assert pts[16]["comm_s"] == pytest.approx(2 * 15 / 16 * grads / 400e9)
    assert pts[16]["comm_s"] == pytest.approx(60.4e-3, rel=1e-3)
    assert doc["comm_binds_at"] is None
    # one NIC per node: the old 483 ms, and the link binds at 16
    code, out, _ = run(capsys, "scale", "--on", "H100 SXM", "--hidden", "4096", "--blocks",
                       "32", "--tokens", "4096", "--nics-per-node", "1", "--json")
    doc = json.loads(out)
    pts = {p["gpus"]: p for p in doc["points"]}
    assert pts[16]["comm_s"] == pytest.approx(2 * 15 / 16 * grads / 50e9)
    assert doc["comm_binds_at"] == 16


def test_tp_16_ring_on_400_and_pp_hop_on_one_nic(capsys):
    code, out, _ = run(capsys, "llm", "llama-3-70b", "--on", "H100", "--tp", "16",
                       "--phase", "decode", "--json")
    par = json.loads(out)["llm"]["parallel"]
    assert par["link_bytes_per_s"] == 400e9
    # 160 all-reduces of 8192 x 2 B: 160 x 2 x 15/16 x 16,384 / 400e9 = 12.3 us
    assert par["comm_s"] == pytest.approx(160 * 2 * 15 / 16 * 16_384 / 400e9)
    # a stage-to-stage send is point to point: one NIC, 50 GB/s
    code, out, _ = run(capsys, "llm", "llama-3.1-405b", "--on", "H200", "--tp", "8",
                       "--pp", "2", "--phase", "decode", "--json")
    assert json.loads(out)["llm"]["pipeline"]["link"]["bytes_per_s"] == 50e9


# --- #7, #11: whatif's floors, one name per figure, fusion on the whole step --------------

def test_whatif_legacy_floor_keys_are_with_launches(tmp_path, capsys):
    doc, d = llm_json(capsys, tmp_path, "d.json", "tinyllama-1.1b", "--on", "A100")
    code, out, _ = run(capsys, "whatif", doc, "--on", "A100", "--quantize", "int4",
                       "--group", "128", "--json")
    w = json.loads(out)
    # 2.03 ms with launches, not 1.02 ms + 311 x 5 us = 2.58 ms
    assert w["total_before_floor_s"] == pytest.approx(
        d["llm"]["totals"]["tpot_with_launches_s"], rel=1e-9)
    assert w["total_before_floor_s"] == pytest.approx(2.03e-3, abs=0.005e-3)
    assert w["total_after_floor_s"] == w["total_after_with_launches_s"]
    q = next(m for m in w["moves"] if m["kernel"] == "q_proj")
    assert q["before_floor_s"] == q["before_with_launches_s"]


def test_fuse_totals_are_the_whole_step(tmp_path, capsys):
    doc, d = llm_json(capsys, tmp_path, "d.json", "tinyllama-1.1b", "--on", "A100")
    code, out, _ = run(capsys, "whatif", doc, "--on", "A100", "--fuse",
                       "rope,residual_add,norm", "--json")
    w = json.loads(out)
    step = d["llm"]["totals"]["tpot_with_launches_s"]
    # rope 22 + residual_add 44 + norm 44 launches x 5 us = 550 us -> one kernel of 44 calls
    # = 220 us: the step saves 330 us, 2.03 ms -> 1.70 ms = 1.19x (not the three's 2.50x)
    assert w["floor_scope"] == "whole step"
    assert w["total_before_with_launches_s"] == pytest.approx(step, rel=1e-9)
    assert w["total_after_with_launches_s"] == pytest.approx(step - 330e-6, rel=1e-6)
    assert w["with_launches_speedup"] == pytest.approx(1.19, abs=0.005)
    assert w["moved"]["before_with_launches_s"] == pytest.approx(550e-6)
    assert w["moved"]["after_with_launches_s"] == pytest.approx(220e-6)
    code, out, _ = run(capsys, "whatif", doc, "--on", "A100", "--fuse",
                       "rope,residual_add,norm")
    text = flat(out)
    assert "with launches (whole step): 2.03 ms -> 1.7 ms (1.19x)" in text
    assert "the fused kernels alone, with launches: 550 us -> 220 us (2.50x" in text


# --- #8: whatif / choose on an llm --tp file ----------------------------------------------

def test_whatif_on_tp_file_adds_the_all_reduces(tmp_path, capsys):
    doc, _ = llm_json(capsys, tmp_path, "t70.json", "llama-3-70b", "--on", "H100", "--tp",
                      "8", "--batch", "64")
    _, h200 = llm_json(capsys, tmp_path, "t70h.json", "llama-3-70b", "--on", "H200", "--tp",
                       "8", "--batch", "64")
    code, out, _ = run(capsys, "whatif", doc, "--on", "H100", "--hardware", "H200", "--json")
    par = json.loads(out)["parallel"]
    # 160 all-reduces of 64 x 8192 x 2 B: 160 x 2 x 7/8 x 1,048,576 / 450e9 = 652.45 us,
    # the vocab-parallel embedding's one all-reduce of the same 1,048,576 B (H1):
    # 2 x 7/8 x 1,048,576 / 450e9 = 4.08 us, and the logits gather (review 18d E:
    # 64 x 128,256 x 2 B, 7/8 of it over 450 GB/s = 31.9 us) on the same link:
    # 652.45 + 4.08 + 31.92 = 688.45 us (was 684.37 us without the embedding's)
    gather = 7 / 8 * 64 * 128_256 * 2 / 450e9
    embedding = 2 * 7 / 8 * 1_048_576 / 450e9
    comm = 160 * 2 * 7 / 8 * 1_048_576 / 450e9 + embedding + gather
    assert comm == pytest.approx(688.45e-6, abs=0.01e-6)
    assert h200["llm"]["parallel"]["logits_gather_s"] == pytest.approx(gather)
    assert h200["llm"]["parallel"]["embedding_allreduce_s"] == pytest.approx(embedding)
    assert par["comm_before_s"] == pytest.approx(comm)
    assert par["comm_after_s"] == pytest.approx(comm)
    # 4.29 ms of kernels + 688.45 us = `llm --on H200`'s TPOT floor (4.98 ms)
    assert par["total_after_tpot_s"] == pytest.approx(h200["llm"]["totals"]["tpot_s"],
                                                      rel=1e-6)
    code, out, _ = run(capsys, "whatif", doc, "--on", "H100", "--hardware", "H200")
    text = flat(out)
    assert "per device of 8, without the all-reduces" in text
    assert "`rooflab llm`'s TPOT floor" not in text
    assert "so the TPOT floor 6.84 ms -> 4.98 ms" in text   # llm --on H200: 4.98 ms
    code, out, _ = run(capsys, "choose", doc, "--among", "H100,H200")
    text = flat(out)
    # review W4: choose now ranks the shard + each device's TP link, and says so
    assert "summed (per GPU of 8, + TP link: its all-reduces" in text
    assert "`rooflab llm`'s TPOT floor" not in text


# --- #13: whatif --hardware checks the footprint as choose does ---------------------------

def test_whatif_hardware_says_does_not_fit(tmp_path, capsys):
    doc, d = llm_json(capsys, tmp_path, "l70.json", "llama-3-70b", "--on", "H100")
    need = d["llm"]["footprint"]["total_bytes"]       # 141 GB in fp16
    assert need > 141e9
    code, out, _ = run(capsys, "whatif", doc, "--on", "H100", "--hardware", "L4", "--json")
    fit = json.loads(out)["fit"]
    assert fit == {"device": "NVIDIA L4", "needs_bytes": need, "memory_bytes": 24e9,
                   "fits": False}
    code, out, _ = run(capsys, "whatif", doc, "--on", "H100", "--hardware", "L4")
    assert code == 0
    assert ("does not fit: the model needs 141 GB per device (weights + KV + activations, "
            "from the llm document) > the memory of NVIDIA L4 (24 GB)") in flat(out)
    # a device it fits: no such line
    code, out, _ = run(capsys, "whatif", doc, "--on", "H100", "--hardware", "MI300X")
    assert "does not fit" not in flat(out)
