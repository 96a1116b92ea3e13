"""Training communication: the overlap line worded by the sharding scheme, and `whatif
--precision` moving a comm row collective by collective (model/whatif_comm_parts.py).

Hand calculations (llama-2-7b on H100, batch 1 x 4096, bf16, NVLink 450 GB/s):

* --tp 2 --sequence-parallel: each layer/embedding collective moves b s h x 2 B = 4096 x
  4096 x 2 = 33,554,432 B, (N-1)/N = 1/2 of it sent: 16,777,216 B. 128 + 2 = 130
  reduce-scatters and 130 all-gathers: 2 x 130 x 16,777,216 = 4,362,076,160 B; the loss,
  3 all-reduces of 4096 x 4 B, 2(N-1)/N = 1: 49,152 B; the norms' fp32 gradients (65 norms
  x 4096 x 4 B = 1,064,960 B, x 1): 4,363,190,272 B in all.
  --precision fp8: the all-gathers (GEMM inputs) halve, 2,181,038,080 -> 1,090,519,040;
  the reduce-scatters (GEMM outputs) keep 2 B, the loss and the fp32 norm gradients stay:
  3,272,671,232 B (before: 4,363,190,272, unchanged: read as gradients of at least 2 B).
  --precision fp32: the activations double, 8,724,152,320, the loss and norm gradients
  stay: 8,725,266,432 B (before: 8,726,380,544, the norm gradients doubled too).
* --dp 8 --zero 3 --grad-dtype fp32: weights 6,738,415,616 x 2 B = 13,476,831,232 B,
  gradients x 4 B = 26,953,662,464 B, 7/8 sent. Forward all-gather 11,792,227,328 B, the
  backward's all-gather (less the FSDP root unit's 2 x 262,148,096 = 524,296,192 B, not
  resharded after the forward: s36 H) + reduce-scatter 7/8 x (12,952,535,040 +
  26,953,662,464) = 34,917,922,816 B: 46,710,150,144 B (47,168,909,312 with the root
  gathered again). --precision fp32 doubles the weights (4 B) and keeps the fp32
  gradients: 23,584,454,656 + (22,666,936,320 + 23,584,454,656) = 69,835,845,632 B, /
  450 GB/s = 155.19 ms (157.23 with the root; before: the row held whole, 104.8 ms).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

STEP = ["train", "llama-2-7b", "--on", "H100", "--batch", "1", "--seq", "4096"]


def _row(doc: dict, side: str, name: str) -> dict:
    """Kernel `name` of a whatif --json's `after` side, or of a file's own kernels."""
    kernels = doc["kernels"] if side == "kernels" else doc[side]["kernels"]
    return next(k for k in kernels if k["name"] == name)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("s35n")
    tp, z3 = d / "tp.json", d / "z3.json"
    assert main([*STEP, "--tp", "2", "--sequence-parallel", "-o", str(tp)]) == 0
    assert main([*STEP, "--dp", "8", "--zero", "3", "--grad-dtype", "fp32", "-o",
                 str(z3)]) == 0
    return {"tp": tp, "z3": z3, "dir": d}


def _whatif(capsys, path, precision: str) -> dict:
    capsys.readouterr()
    assert main(["whatif", str(path), "--on", "H100", "--precision", precision,
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_tp_fp8_halves_the_all_gathers_only(files, capsys):
    doc = _whatif(capsys, files["tp"], "fp8")
    assert _row(json.loads(files["tp"].read_text()), "kernels", "comm.tp")["bytes"] == {
        "NVLink": 4_363_190_272}
    assert _row(doc, "after", "comm.tp")["bytes"]["NVLink"] == pytest.approx(3_272_671_232)
    move = next(m for m in doc["moves"] if m["kernel"] == "comm.tp")
    assert move["after_floor_s"] == pytest.approx(3_272_671_232 / 450e9)


def test_tp_fp32_keeps_the_norm_gradients_and_the_loss(files, capsys):
    doc = _whatif(capsys, files["tp"], "fp32")
    after = _row(doc, "after", "comm.tp")
    assert after["bytes"]["NVLink"] == pytest.approx(8_725_266_432)
    norm = next(c for c in after["meta"]["collectives"] if c["name"].endswith("norm_grads"))
    assert norm["bytes"] == 1_064_960 and norm["element_bytes"] == {"gradients": 4.0}


def test_zero3_fp32_doubles_the_weight_all_gathers_not_the_fp32_grads(files, capsys):
    doc = _whatif(capsys, files["z3"], "fp32")
    assert _row(json.loads(files["z3"].read_text()), "kernels", "comm.zero3")["bytes"] == {
        "NVLink": 46_710_150_144}
    after = _row(doc, "after", "comm.zero3")
    assert after["bytes"]["NVLink"] == pytest.approx(69_835_845_632)
    move = next(m for m in doc["moves"] if m["kernel"] == "comm.zero3")
    assert move["after_floor_s"] == pytest.approx(0.15519, rel=1e-4)
    bwd = after["meta"]["collectives"][1]
    assert bwd["parts"] == pytest.approx({"weights": 25_905_070_080,
                                          "gradients": 26_953_662_464})


def test_a_file_without_parts_keeps_the_one_rule(files, capsys):
    """Guard (passes before and after): a row whose collectives list no parts (a file
    from before them) is moved as before: fp32 gradients held apart, the row whole."""
    doc = json.loads(files["z3"].read_text())
    for k in doc["kernels"]:
        for c in k.get("meta", {}).get("collectives", []):
            c.pop("parts", None)
            c.pop("element_bytes", None)
    old = files["dir"] / "z3_old.json"
    old.write_text(json.dumps(doc))
    got = _whatif(capsys, old, "fp32")
    assert _row(got, "after", "comm.zero3")["bytes"]["NVLink"] == 46_710_150_144


def test_overlap_line_names_the_scheme(capsys):
    capsys.readouterr()
    assert main([*STEP, "--dp", "8", "--zero", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # s36 H: one unit per transformer block (llama-2-7b's 32) and the root: 33
    assert "overlapped with the compute (ZeRO-3) by 33 FSDP units (one per transformer " \
           "block and the root" in out
    assert "(PyTorch DDP" not in out
    assert "the FSDP units' collectives are timed one block unit at a time" in out
    assert main([*STEP, "--dp", "8", "--zero", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # s36 H: DeepSpeed's reduce_bucket_size, 5e8 elements of bf16
    assert "gradients reduce-scattered in 1 GB buckets (DeepSpeed's reduce_bucket_size, " \
        "5e8 elements) during the backward (ZeRO-1/2" in out and "(PyTorch DDP" not in out


def test_zero1_row_note_names_zero_buckets(files):
    from rooflab.workloads.llm.train_dp import OVERLAP_WORDS

    assert OVERLAP_WORDS[1] == "ZeRO-1/2's bucketed reduce-scatter of the gradients"


def test_report_advice_on_a_zero1_no_overlap_step_says_reduce_scatter(files, capsys):
    path = files["dir"] / "z1n.json"
    assert main([*STEP, "--dp", "8", "--zero", "1", "--no-overlap", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["report", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    # s38 H: DeepSpeed's reduce_bucket_size is 5e8 elements, 1 GB at bf16, filled tensor
    # by tensor (the advice said DDP's "25 MB" for every scheme before)
    assert ("ZeRO-1/2 reduce-scatters the gradients in 1 GB buckets (DeepSpeed's "
            "reduce_bucket_size, 5e8 elements), filled tensor by tensor, as the backward "
            "produces them") in out
    assert "PyTorch DDP all-reduces" not in out
