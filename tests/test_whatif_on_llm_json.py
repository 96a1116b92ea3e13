"""Third audit of `rooflab llm` / `whatif` / `choose` as an ML inference engineer would use
them: an llm JSON fed to whatif, the launch floor in what-ifs, hand-checked numbers."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model.whatif import change_batch, quantize_weights
from rooflab.workloads.llm import Settings, decode_step, load_config
from rooflab.workloads.llm import whatif as wi

TINY = "tinyllama-1.1b"


def _llm_json(capsys, *args) -> dict:
    assert main(["llm", TINY, "--on", "T4", "--context", "500", "--phase", "decode",
                 *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _kernels(doc):
    from rooflab.model.schema import kernel_from_dict

    return [kernel_from_dict(k) for k in doc["kernels"]]


def test_whatif_batch_scales_from_the_llm_jsons_batch(capsys):
    # An llm JSON at batch 16 moved to batch 32 must land on llm's own batch-32 counts
    # (ratio 2), not on batch 16 x 32 (it used to assume batch 1: q_proj AI 15.8 -> 341).
    doc = _llm_json(capsys, "--batch", "16")
    w = change_batch(load_roof("T4"), _kernels(doc), 32)
    after = {new.name: new for _, new in w.moves}
    want = decode_step(load_config(TINY), Settings(), 32, 500)
    for k in want.kernels():
        if k.name == "embedding":       # gathered rows count as weights but grow with tokens
            continue
        assert after[k.name].total_flop == pytest.approx(k.total_flop, rel=1e-9), k.name
        assert after[k.name].bytes["DRAM"] == pytest.approx(k.bytes["DRAM"], rel=1e-9), k.name
    q = after["q_proj"]
    # 32 x 2 x 2048^2 FLOP per call over 2 x 2048^2 B of weights + 32 x 2 x 2 x 2048 B
    assert q.total_flop / q.bytes["DRAM"] == pytest.approx(
        32 * 2 * 2048**2 / (2 * 2048**2 + 32 * 2 * 2 * 2048), rel=1e-9)   # 31.0


def test_whatif_quantize_from_an_int4_llm_json_starts_at_int4():
    # llm --weights int4 kernels say their weight dtype: int4 -> int8 doubles the weight
    # bytes (it used to take them for fp16 and halve them).
    step = decode_step(load_config(TINY), Settings(weights="int4"), 1, 500)
    q = next(k for k in step.kernels() if k.name == "q_proj")
    assert q.meta["weight_dtype"] == "int4" and q.meta["batch"] == 1
    w = quantize_weights(load_roof("T4"), [q], "int8", group=128)
    (_, new), = w.moves
    wb = q.meta["bytes_split"]["weights"]
    # with --group 128, int4 and int8 both carry one fp16 scale per 128 weights (as llm
    # counts them):
    # 0.515625 -> 1.015625 B per weight, exactly what llm --weights int8 counts
    assert new.bytes["DRAM"] == pytest.approx(
        q.bytes["DRAM"] + wb * (1.015625 / 0.515625 - 1), rel=1e-9)
    int8 = decode_step(load_config(TINY), Settings(weights="int8"), 1, 500)
    want = next(k for k in int8.kernels() if k.name == "q_proj")
    assert new.bytes["DRAM"] == pytest.approx(want.bytes["DRAM"], rel=1e-9)


def test_whatif_quantize_leaves_norm_weights_alone(capsys):
    # RMSNorm's gamma stays fp16 under weight-only quantization (as in llm --weights int4):
    # decode norm AI stays 8192 / 12288 = 0.667 (it moved to 0.889).
    doc = _llm_json(capsys)
    w = quantize_weights(load_roof("T4"), _kernels(doc), "int4")
    moved = {old.name: (old, new) for old, new in w.moves}
    old, new = moved["norm"]
    assert new.bytes == old.bytes
    old, new = moved["q_proj"]          # 4.19 M weights x 0.5 B + 8.19 kB activations, x 22
    assert new.bytes["DRAM"] == pytest.approx(22 * (2048**2 * 0.5 + 8192), rel=1e-9)


def test_measured_step_quantizes_only_its_weights():
    # The measured step (seed 004: 15 ms) carries its split: int4 shrinks the 2.069 GB of
    # weights 4x and keeps KV 11.29 MB and activations 3.66 MB.
    cfg, roof = load_config(TINY), load_roof("T4")
    step = decode_step(cfg, Settings(), 1, 500)
    m = wi.measured_point(step, roof, 0.015)
    (_, new), = quantize_weights(roof, [m.kernel], "int4").moves
    s = step.bytes_split
    # K and V of 500 tokens read, the new token's written: 2 x 22 x 4 x 64 x 2 B x (500 + 1)
    assert s["kv"] == 2 * 22 * 4 * 64 * 2 * 501
    assert new.bytes["DRAM"] == pytest.approx(s["weights"] / 4 + s["kv"] + s["activations"],
                                              rel=1e-9)


def test_whatif_cli_sets_the_measured_step_apart(tmp_path, capsys):
    doc = _llm_json(capsys, "--tpot-ms", "15")
    path = tmp_path / "decode.json"
    path.write_text(json.dumps(doc))
    assert main(["whatif", str(path), "--on", "t4", "--quantize", "int4"]) == 0
    out = capsys.readouterr().out
    table, _, below = out.partition("└")
    assert "measured" not in table                      # not a row beside the kernels
    # the kernels' work floor, llm's TPOT floor: 2.087 GB / 320 GB/s = 6.51 ms
    assert "work floor: 6.51 ms ->" in below
    assert "decode step b=1 (measured): 15 ms ->" in " ".join(below.split())
    assert main(["whatif", str(path), "--on", "t4", "--quantize", "int4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["moves"]
    assert [r["kernel"] for r in rows if r["whole_step"]] == ["decode step b=1 (measured)"]
    assert sum(not r["whole_step"] for r in rows) == 15


def test_hardware_swap_says_when_launches_outlast_the_work(capsys):
    # TinyLlama batch 1 on an H200: 2.084 GB / 4.8 TB/s = 434 us of work but 311 launches
    # x 5 us = 1.56 ms; the 15x over a T4 holds only with CUDA graphs (seed 004).
    assert main(["llm", TINY, "--on", "T4", "--context", "500", "--phase", "decode",
                 "--compare", "H200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "launch-bound: NVIDIA H200 SXM (1.56 ms > 434 us)" in out
    assert "NVIDIA T4 (" not in out.split("launch-bound:")[1]
    doc = _llm_json(capsys, "--compare", "H200")
    hw = {h["roof"]: h for h in doc["llm"]["hardware"]}
    assert hw["NVIDIA H200 SXM"]["launch_s"] == pytest.approx(311 * 5e-6)
    assert hw["NVIDIA H200 SXM"]["launch_bound"] and not hw["NVIDIA T4"]["launch_bound"]


def test_tpot_ms_error_speaks_milliseconds(capsys):
    assert main(["llm", TINY, "--on", "T4", "--tpot-ms", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--tpot-ms must be a positive, finite time in milliseconds" in err and "got -1" in err


def test_csv_holds_the_batch_sweep(tmp_path, capsys):
    # -o sweep.csv with --batch 1,8,64 used to drop the sweep; one decode_sweep row per batch:
    # b=8 reads the 2.069 GB of weights once and 8 KV caches of 11.29 MB.
    out = tmp_path / "sweep.csv"
    assert main(["llm", TINY, "--on", "T4", "--context", "500", "--batch", "1,8,64",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    rows = [line.split(",") for line in out.read_text().splitlines()]
    head, sweep = rows[0], [r for r in rows if r[0] == "decode_sweep"]
    assert [r[1] for r in sweep] == ["step b=1", "step b=8", "step b=64"]
    b8 = dict(zip(head, sweep[1], strict=True))
    assert float(b8["kv_bytes"]) == 8 * 2 * 22 * 4 * 64 * 2 * 501
    assert float(b8["weights_bytes"]) == pytest.approx(2.069e9, rel=1e-3)
    assert float(b8["flop"]) / float(b8["bytes"]) == pytest.approx(float(b8["ai"]))
    assert int(b8["calls"]) == 311


def test_sweep_says_which_batches_do_not_fit(capsys):
    # TinyLlama on a 16 GB T4 at context 639 (512 + 128 - 1): (16e9 - 2,200,096,768 -
    # 13,759,488 of one prompt's activations) / (639 x 22,528 B KV + 32,000 x 4 B of fp32
    # decode logits, H1) = 13,786,143,744 / 14,523,392 = 949.2 -> 949 sequences (KV
    # alone 957.7); batch 1024 of the sweep does not fit.
    assert main(["llm", TINY, "--on", "T4", "--context", "500", "--phase", "decode",
                 "--batch", "1,1024"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("memory: at most batch 949 fits in 16 GB (context 639); too big: batch 1024 of "
            "this sweep") in out
    # Llama-3-8B's 16.1 GB of fp16 weights alone overflow the T4
    assert main(["llm", "llama-3-8b", "--on", "T4", "--phase", "decode", "--batch", "1,4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "memory: the weights alone (16.1 GB) do not fit in 16 GB" in out
    # nothing to say when every swept batch fits
    assert main(["llm", TINY, "--on", "T4", "--phase", "decode", "--batch", "1,4"]) == 0
    assert "too big" not in capsys.readouterr().out


def test_whatif_batch_recounts_the_experts_a_moe_batch_touches():
    # Mixtral, batch 1 -> 8 at context 1000: 8 tokens touch 8 x (1 - 0.75^8) = 7.20 of the
    # 8 experts, not the 2 of batch 1, so expert weight bytes grow 3.6x (they stayed put).
    cfg, roof = load_config("mixtral-8x7b"), load_roof("H100")
    b1 = decode_step(cfg, Settings(), 1, 1000).kernels()
    moved = {new.name: new for _, new in change_batch(roof, b1, 8).moves}
    want = {k.name: k for k in decode_step(cfg, Settings(), 8, 1000).kernels()}
    gate = moved["expert_gate_proj"]
    assert gate.bytes["DRAM"] == pytest.approx(want["expert_gate_proj"].bytes["DRAM"], rel=1e-9)
    weights = 32 * 4096 * 14336 * 2                         # one expert's gate_proj, 32 layers
    assert want["expert_gate_proj"].meta["bytes_split"]["weights"] == pytest.approx(
        8 * (1 - 0.75**8) * weights, rel=1e-9)
    # dense kernels are unchanged by it
    assert moved["q_proj"].bytes["DRAM"] == pytest.approx(want["q_proj"].bytes["DRAM"], rel=1e-9)


def test_choose_says_which_devices_cannot_hold_the_model(tmp_path, capsys):
    # Mixtral-8x7B in fp16: 46.7 G params x 2 B = 93.4 GB of weights + KV + activations
    # = 93.6 GB. An H100 (80 GB) ranks fast but cannot hold it; an H200 (141 GB) can.
    assert main(["llm", "mixtral-8x7b", "--on", "H100", "--context", "1000", "--phase",
                 "decode", "--json"]) == 0
    path = tmp_path / "mixtral.json"
    path.write_text(capsys.readouterr().out)
    assert main(["choose", str(path), "--among", "H100,H200", "--json"]) == 0
    by = {d["name"]: d for d in json.loads(capsys.readouterr().out)["devices"]}
    assert by["NVIDIA H100 SXM"]["fits"] is False and by["NVIDIA H200 SXM"]["fits"] is True
    assert by["NVIDIA H100 SXM"]["needs_bytes"] == pytest.approx(93.6e9, rel=1e-3)
    assert main(["choose", str(path), "--among", "H100,H200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "does not fit: the model needs 93.6 GB per device" in out
    assert "memory of NVIDIA H100 SXM (80 GB);" in out
    # TinyLlama (2.23 GB) fits both: nothing said
    doc = _llm_json(capsys)
    path.write_text(json.dumps(doc))
    assert main(["choose", str(path), "--among", "T4,H100"]) == 0
    assert "does not fit" not in capsys.readouterr().out


def test_hardware_swap_says_which_devices_cannot_hold_the_model(capsys):
    # Mixtral fp16 needs 93.6 GB: an H100 (80 GB) and an L4 (24 GB) are no swap for an H200.
    assert main(["llm", "mixtral-8x7b", "--on", "H200", "--context", "1000", "--phase",
                 "decode", "--compare", "H100,L4,MI300X"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("does not fit: 93.6 GB (weights + KV + activations) > the memory of NVIDIA H100 "
            "SXM (80 GB), NVIDIA L4 (24 GB);") in out
    assert main(["llm", "mixtral-8x7b", "--on", "H200", "--context", "1000", "--phase",
                 "decode", "--compare", "H100,MI300X", "--json"]) == 0
    hw = json.loads(capsys.readouterr().out)["llm"]["hardware"]
    assert [(h["label"], h["fits"]) for h in hw] == [
        ("NVIDIA H200 SXM", True), ("NVIDIA H100 SXM", False), ("AMD Instinct MI300X", True)]


def test_llm_list_json(capsys):
    # `rooflab llm list --json` printed the table; now the JSON vocabulary. Llama-2-7B by
    # hand: 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 2 x 32000 x 4096 + 4096.
    assert main(["llm", "list", "--json"]) == 0
    rows = {c["name"]: c for c in json.loads(capsys.readouterr().out)["configs"]}
    want = 32 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 2 * 32000 * 4096 + 4096
    assert rows["llama-2-7b"]["params"] == want == 6_738_415_616
    assert (rows["mixtral-8x7b"]["kv_heads"], rows["mixtral-8x7b"]["head_dim"]) == (8, 128)


def test_hardware_swap_under_tp_is_per_device(capsys):
    # llama-3-70b --tp 8 on an H200: the decode table is per device (17.4 GB of weights
    # read, 3.63 ms); the swap used to redo the whole unsharded model (141 GB, 29 ms).
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--phase", "decode",
                 "--compare", "H100", "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    base, h100 = llm["hardware"]
    assert base["tpot_s"] == pytest.approx(llm["decode"]["floor_s"], rel=1e-9)
    assert base["weights_bytes"] == pytest.approx(llm["footprint"]["weights_bytes"], rel=1e-9)
    assert base["weights_bytes"] == pytest.approx(70.55e9 * 2 / 8, rel=0.01)
    # same bytes on 3.35 TB/s instead of 4.8 TB/s (all memory-bound at batch 1)
    assert h100["tpot_s"] / base["tpot_s"] == pytest.approx(4.8 / 3.35, rel=0.01)


def test_a_bad_rate_is_answered_with_rate_examples(capsys):
    from rooflab.cli.main import main as cli

    assert cli(["scale", "--on", "H100", "--link-bw", "fast/s"]) == 2
    err = capsys.readouterr().err
    assert "--link-bw must be a positive rate such as 450GB/s" in err and "'fast/s'" in err
    assert "32MiB" not in err
