"""rooflab train --tp N: Megatron-LM tensor parallelism (Shoeybi et al. 2019) and sequence
parallelism (Korthikanti et al. 2022) of a training step, checked against hand counts.

llama-2-7b: 32 layers, hidden 4096, 32 heads (32 KV heads), intermediate 11008, vocab 32000,
untied lm_head; 6 738 415 616 parameters. At --tp 8 one device holds per layer
4 x 4096 x 4096 / 8 = 8 388 608 attention and 3 x 4096 x 11008 / 8 = 16 908 288 MLP
parameters and its two norms whole (8192): 25 305 088; x 32 = 809 762 816; the embedding
and the lm_head 2 x 4000 x 4096 = 32 768 000; the final norm 4096: 842 534 912.
"""

from __future__ import annotations

import json

import pytest

from rooflab.errors import InputError
from rooflab.model.comm_link import Link
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.train import TrainSetup, build_train_step
from rooflab.workloads.llm.train_memory import train_memory
from rooflab.workloads.llm.train_tp import check_tp, tp_collectives

NVLINK = Link("NVLink", 450e9, 0.0, "test")
SBH = 4096 * 4096                       # s b h at --batch 1 --seq 4096
PER_DEVICE = 842_534_912


@pytest.fixture(scope="module")
def llama():
    return load_config("llama-2-7b")


def _by_name(colls):
    return {c.name: c for c in colls}


def test_allreduce_bytes_counts_and_ring_time(llama):
    # 1 x 4096 x 4096 x 2 B = 33 554 432 B per all-reduce; 32 layers x 4 = 128; ring:
    # 2 x 7/8 x 33 554 432 / 450e9 = 130.489 us each, 16.7027 ms for the 128
    c = _by_name(tp_collectives(llama, TrainSetup(batch=1, seq=4096, tp=8), NVLINK))
    lay = c["tp.allreduce.layers"]
    assert lay.nbytes == 33_554_432 and lay.calls == 128
    assert lay.seconds == pytest.approx(2 * 7 / 8 * 33_554_432 / 450e9)
    assert lay.seconds * lay.calls == pytest.approx(16.7027e-3, rel=1e-4)
    # the vocab-parallel embedding's forward all-reduce and the lm_head's input gradient
    assert c["tp.allreduce.embedding_lm_head"].calls == 2
    # vocab-parallel cross-entropy: 3 fp32 per token: 4096 x 4 B
    assert (c["tp.allreduce.loss"].nbytes, c["tp.allreduce.loss"].calls) == (16_384, 3)


def test_full_recompute_repeats_the_forward_two(llama):
    # 6 per layer under --recompute full: 32 x 6 = 192; --accumulate 4 multiplies by 4
    st = TrainSetup(batch=1, seq=4096, tp=8, recompute="full", accumulate=4)
    c = _by_name(tp_collectives(llama, st, NVLINK))
    assert c["tp.allreduce.layers"].calls == 192 * 4
    assert c["tp.allreduce.embedding_lm_head"].calls == 2 * 4


def test_sequence_parallel_is_reduce_scatter_plus_all_gather(llama):
    # each all-reduce a reduce-scatter + an all-gather: 7/8 x 33 554 432 / 450e9 = 65.24 us
    # each, together the all-reduce's 130.49 us
    st = TrainSetup(batch=1, seq=4096, tp=8, sequence_parallel=True)
    c = _by_name(tp_collectives(llama, st, NVLINK))
    rs, ag = c["tp.reduce_scatter.layers"], c["tp.all_gather.layers"]
    assert rs.calls == ag.calls == 128
    assert rs.seconds == pytest.approx(7 / 8 * 33_554_432 / 450e9)
    assert rs.sent + ag.sent == pytest.approx(2 * 7 / 8 * 33_554_432)


def test_hop_latency_is_paid_per_hop(llama):
    # 10 us per hop: an all-reduce over 8 pays 14 hops, 140 us more
    slow = Link("NVLink", 450e9, 10e-6, "test")
    c = _by_name(tp_collectives(llama, TrainSetup(batch=1, seq=4096, tp=8), slow))
    assert c["tp.allreduce.layers"].seconds == pytest.approx(
        140e-6 + 2 * 7 / 8 * 33_554_432 / 450e9)


def test_kernels_are_one_devices_slice(llama):
    one = {o.op.name: o.op for o in build_train_step(llama, TrainSetup(batch=1, seq=4096)).ops}
    tp8 = {o.op.name: o.op
           for o in build_train_step(llama, TrainSetup(batch=1, seq=4096, tp=8)).ops}
    # q_proj: 2 x 4096 x 4096 x 4096 = 137.4 G FLOP, / 8 = 17.18 G; its weights
    # 4096 x 512 x 2 B = 4 194 304 B
    assert tp8["q_proj"].flop == one["q_proj"].flop / 8 == 2 * 4096 * 4096 * 512
    assert tp8["q_proj"].bytes_split["weights"] == 4096 * 512 * 2
    # lm_head vocab-parallel: 2 x 4096 x 4096 x 4000
    assert tp8["lm_head"].flop == 2 * 4096 * 4096 * 4000
    # norms run whole on every device without sequence parallelism ...
    assert tp8["norm"].flop == one["norm"].flop
    sp = {o.op.name: o.op for o in build_train_step(
        llama, TrainSetup(batch=1, seq=4096, tp=8, sequence_parallel=True)).ops}
    # ... and on 1/8 of the tokens with it (activations 4096 x 4096 x 2 x 2 B / 8)
    assert sp["norm"].flop == pytest.approx(one["norm"].flop / 8)
    assert sp["norm"].bytes_split["activations"] == pytest.approx(2 * 2 * SBH / 8)
    # the optimizer steps one device's 842 534 912 parameters (28 B and 15 FLOP each)
    assert tp8["optimizer.adamw"].flop == 15 * PER_DEVICE


def test_memory_states_and_korthikanti_activations(llama):
    m1 = train_memory(llama, TrainSetup(batch=1, seq=4096), 80e9)
    m8 = train_memory(llama, TrainSetup(batch=1, seq=4096, tp=8), 80e9)
    assert m8.params == PER_DEVICE
    # 2 + 2 + 12 B per parameter (AdamW, mixed precision)
    assert (m8.weights, m8.grads, m8.optimizer) == (2 * PER_DEVICE, 2 * PER_DEVICE,
                                                    12 * PER_DEVICE)
    # per layer (no dropout, flash): replicated 2 B x sbh x (attention input, MLP input, 2
    # norms) = 8 sbh; split: Q, K, V, O 4 x 512 wide, 2 B: 4096 x 2048 x 2; MLP gate, up,
    # product 3 x 1376 x 2 B per token; logsumexp 4 B x 4 heads per token
    per_layer = (8 * SBH + 4096 * 2048 * 2 + 4096 * 3 * 1376 * 2 + 4096 * 4 * 4)
    assert per_layer == 184_877_056
    assert m8.per_layer == per_layer
    # outside: final norm and lm_head inputs 2 x 2 B x sbh + the loss's 12 B x 4096 x 4000
    assert m8.outside_layers == 4 * SBH + 12 * 4096 * 4000
    assert m8.activations == 32 * per_layer + 4 * SBH + 12 * 4096 * 4000  # 6.18 GB
    # the step that does not fit one H100 (127 GB) fits at --tp 8 (19.7 GB)
    assert m1.fits is False and m8.fits is True
    assert m8.total == pytest.approx(19.66e9, rel=1e-3)


def test_sequence_parallel_divides_the_replicated_terms(llama):
    m = train_memory(llama, TrainSetup(batch=1, seq=4096, tp=8, sequence_parallel=True),
                     None)
    # 184 877 056 - 8 sbh x 7/8 = 67 436 544 (Korthikanti: everything / t)
    assert m.per_layer == pytest.approx(184_877_056 - 8 * SBH * 7 / 8)
    # full recompute keeps the layer input, 2 B x sbh / 8, per layer
    r = train_memory(llama, TrainSetup(batch=1, seq=4096, tp=8, sequence_parallel=True,
                                       recompute="full"), None)
    assert r.per_layer == 2 * SBH / 8


def test_gpt3_shapes_give_korthikanti_table2():
    # Korthikanti Table 2 at GPT-3's shapes (4h MLP, ungated, MHA) with dropout, naive
    # attention: TP 10 sbh + 24 sbh / t + 5 a s^2 b / t; with SP 34 sbh / t + 5 a s^2 b / t
    from rooflab.workloads.llm.train_memory import _layer_full
    from rooflab.workloads.llm.train_tp import device_config, replicated_bytes

    cfg = load_config("gpt2")
    h, a, s, b, t = cfg.hidden, cfg.heads, 1024, 1, 4
    assert cfg.intermediate == 4 * h and not cfg.gated_mlp
    sbh = s * b * h
    dev = device_config(cfg, t)
    tp = _layer_full(dev, b, s, "naive", True, 2)
    assert tp == pytest.approx(10 * sbh + 24 * sbh / t + 5 * a * s * s * b / t)
    sp = tp - replicated_bytes(cfg, sbh, 2, True) * (1 - 1 / t)
    assert sp == pytest.approx(34 * sbh / t + 5 * a * s * s * b / t)


def test_refusals(llama):
    with pytest.raises(InputError, match="must divide the 32 attention heads"):
        check_tp(llama, 3)
    # llama-3-8b: 32 heads, 8 KV heads: --tp 16 divides the heads, not the KV heads
    with pytest.raises(InputError, match="must divide the 8 KV heads.*give --tp 2 or 4 or 8"):
        check_tp(load_config("llama-3-8b"), 16)
    with pytest.raises(InputError, match="--sequence-parallel"):
        TrainSetup(sequence_parallel=True)
    with pytest.raises(InputError, match="not vocab-parallel"):
        TrainSetup(tp=2, loss="fused")
    with pytest.raises(InputError, match="--tp must be an integer >= 1"):
        TrainSetup(tp=0)


class _Run:
    def __init__(self, code, out, err):
        self.exit_code, self.stdout, self.output = code, out, out + err


@pytest.fixture
def cli(capsys):
    from rooflab.cli.main import main

    def run(*args, verb=("train", "llama-2-7b", "--on", "H100")):
        code = main([*verb, *args])
        out, err = capsys.readouterr()
        return _Run(code, out, err)
    return run


def test_cli_refuses_a_group_past_the_node(cli):
    r = cli("--seq", "4096", "--tp", "16")
    assert r.exit_code != 0 and "wider than one 8-GPU node" in r.output
    assert "Traceback" not in r.output
    r = cli("--seq", "4096", "--tp-link-bw", "100GB/s")
    assert r.exit_code != 0 and "only with tensor parallelism" in r.output


def test_cli_json_tp_block_and_floor(cli):
    r = cli("--batch", "1", "--seq", "4096", "--tp", "8", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)["train"]
    tp = d["tp"]
    assert tp["degree"] == 8 and tp["sequence_parallel"] is False
    assert tp["link"]["bus_bytes_per_s"] == 450e9 and tp["link"]["kind"] == "catalog"
    lay = next(c for c in tp["collectives"] if c["name"] == "tp.allreduce.layers")
    assert (lay["bytes"], lay["calls"]) == (33_554_432, 128)
    # all of it exposed: the floor is the kernels' plus the collectives'
    assert d["floor_s"] == pytest.approx(tp["compute_floor_s"] + tp["comm_s"])
    assert d["parts_s"]["comm"] == pytest.approx(tp["comm_s"])
    # MFU per device: 1/8 of the model FLOPs
    assert d["mfu_at_floor"] == pytest.approx(
        d["model_flop"] / d["floor_s"] / d["peak_flop_per_s"])
    assert d["memory"]["params"] == PER_DEVICE
    assert d["model"]["params"] == 6_738_415_616


def test_cli_link_latency_per_allreduce(cli):
    # --link-latency 14 us per all-reduce over 8 = 1 us per hop (14 hops)
    r = cli("--batch", "1", "--seq", "4096", "--tp", "8", "--link-latency", "14", "--json")
    assert r.exit_code == 0, r.output
    link = json.loads(r.stdout)["train"]["tp"]["link"]
    assert link["hop_latency_s"] == pytest.approx(1e-6)
    assert link["latency_from"] == "--link-latency"


def test_dp_ring_shares_the_node_network_and_reduces_the_shard(cli):
    # --dp 2 --tp 8: each data-parallel ring crosses nodes, one per TP rank on a node's 8
    # NICs: 400 GB/s / 8 = 50 GB/s each; it reduces 1/8 of the gradients:
    # 842 534 912 x 2 B = 1 685 069 824 B
    r = cli("--batch", "1", "--seq", "4096", "--tp", "8", "--dp", "2", "--json")
    assert r.exit_code == 0, r.output
    dp = json.loads(r.stdout)["train"]["dp"]
    assert dp["link"]["bus_bytes_per_s"] == pytest.approx(50e9)
    assert dp["collectives"][0]["bytes"] == 2 * PER_DEVICE


def test_csv_has_the_column_and_report_reads_the_json(cli, tmp_path):
    csv = tmp_path / "step.csv"
    assert cli("--seq", "4096", "--tp", "8", "-o", str(csv)).exit_code == 0
    head, *rows = csv.read_text().splitlines()
    assert head.endswith(",tensor_parallel") and rows[-1].startswith("comm.tp,comm,133,")
    js = tmp_path / "step.json"
    assert cli("--seq", "4096", "--tp", "8", "-o", str(js)).exit_code == 0
    rep = cli(verb=("report", str(js)))
    assert rep.exit_code == 0, rep.output
    assert "comm.tp" in rep.output


def test_docs_worked_example_is_what_rooflab_prints(cli):
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "train.md").read_text()
    r = cli("--batch", "1", "--seq", "4096", "--tp", "8")
    assert r.exit_code == 0, r.output
    shown = [ln for ln in r.stdout.splitlines()
             if ln.startswith(("tensor-parallel communication", "memory:"))]
    assert len(shown) == 2
    for line in shown:
        assert f"    {line}\n" in doc, line
    assert "step floor 54.8 ms" in r.stdout and "MFU at the floor 43 %" in r.stdout


def test_file_verbs_time_the_tp_row(cli, tmp_path):
    # whatif --batch 2 on a --tp 8 file: the collectives grow with the activations (2 x
    # 16.96 ms), as `train --batch 2 --tp 8` counts them; its floor is train's
    js = tmp_path / "step.json"
    assert cli("--batch", "1", "--seq", "4096", "--tp", "8", "-o", str(js)).exit_code == 0
    two = cli("--batch", "2", "--seq", "4096", "--tp", "8", "--json")
    want = json.loads(two.stdout)["train"]
    assert want["tp"]["comm_s"] == pytest.approx(2 * 16.9638e-3, rel=1e-4)
    w = cli("--batch", "2", "--json", verb=("whatif", str(js)))
    assert w.exit_code == 0, w.output
    got = json.loads(w.stdout)
    assert "the --tp collectives move the b x s x h activations" in got["assumption"]
    assert "the --dp collectives" not in got["assumption"]
    assert got["total_after_work_floor_s"] == pytest.approx(want["floor_s"], rel=1e-3)
    # choose names the group it times: --tp 8, the NVLink ring of 8
    c = cli("--among", "H100,H200", verb=("choose", str(js)))
    assert c.exit_code == 0, c.output
    assert "with --tp 8's collectives (comm.tp" in c.stdout
    assert "17 ms on NVLink 450 GB/s" in c.stdout


def test_tp_link_given_or_missing(cli, tmp_path):
    # a roof with no link ceiling: the error names train's option for the TP link
    from rooflab.hardware.resolve import load_roof
    from rooflab.model.roof_schema import roof_to_dict

    box = tmp_path / "box.json"
    box.write_text(json.dumps({**roof_to_dict(load_roof("H100")), "name": "my box"}))
    verb = ("train", "tinyllama-1.1b", "--on", str(box))
    r = cli("--tp", "2", verb=verb)
    assert r.exit_code == 2 and "(--tp-link-bw)" in r.output and "Traceback" not in r.output
    # --tp-link-bw 100GB/s: tinyllama (hidden 2048) at --seq 2048: 2048 x 2048 x 2 B =
    # 8 388 608 B per all-reduce; over 2: 2 x 1/2 x 8 388 608 / 100e9 = 83.9 us
    r = cli("--tp", "2", "--seq", "2048", "--tp-link-bw", "100GB/s", "--json", verb=verb)
    assert r.exit_code == 0, r.output
    tp = json.loads(r.stdout)["train"]["tp"]
    assert tp["link"]["source"] == "given (--tp-link-bw)" and tp["link"]["kind"] == "given"
    lay = next(c for c in tp["collectives"] if c["name"] == "tp.allreduce.layers")
    assert lay["bytes"] == 8_388_608 and lay["calls"] == 22 * 4
    assert lay["seconds_each"] == pytest.approx(8_388_608 / 100e9)
