"""`rooflab whatif` on a `rooflab train --zero N/--tp N` file moves the step onto the
target device's own rank, recomputed from the file's train.setup, as `rooflab choose`
does since s35 E (cli/choose_train_own.py); it kept the file's rank (s35 H).

llama-2-7b, --batch 1 --seq 4096, bf16, AdamW, P = 6,738,415,616 parameters.
  * --dp 4 --zero 1: an MI250X is 2 dies, so 8 ranks and a ZeRO-1 shard of
    ceil(P / 8) = 842,301,952 parameters; 4 H100s are 4 ranks, ceil(P / 4) =
    1,684,603,904. The optimizer passes 28 B a parameter of its shard: 28 x 842,301,952 =
    23,584,454,656 B more on the H100's own rank, / 3.35 TB/s = 7.04 ms, so the floor after
    is 211.0 ms compute + 23.9 ms exposed = 234.5 ms, `train --on H100 --dp 4 --zero 1`'s
    step floor (23.9 ms: the all-gather's 22.46 + the last of DeepSpeed's 14 buckets of 5e8
    elements filled tensor by tensor, 891,305,984 of 13,476,831,232 B, 1.49 ms, s38 H; 24.1
    with equal 1/14 shares, s36 H; 22.9 with DDP's 25 MiB buckets, s35 M).
  * --tp 4: the MI250X's group is 8 dies, each 1/8 of every layer; 4 H100s hold 1/4 each,
    twice the per-rank FLOP and bytes of every split layer: 83.1 ms, `train --on H100
    --tp 4`'s step floor (52.4 ms with the file's 1/8 rank).
  * --on H100 judges the file on an H100: the floor before is the same 234.5 ms; and
    --on H100 --hardware MI250X goes back from the H100's rank to the MI250X's, `train
    --on MI250X --dp 4 --zero 1`'s 1.21 s (it kept the H100's 1/4 shard and re-rang the
    H100's 4-rank row as if it were the file's 8: 1.19 s)."""

from __future__ import annotations

import json

import pytest
from cli_inproc import quiet_out as _quiet

BASE = ["llama-2-7b", "--batch", "1", "--seq", "4096"]
ZERO = ["--dp", "4", "--zero", "1"]




@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("s35h")
    out = {}
    for key, args in (("zero", ZERO), ("tp", ["--tp", "4"])):
        path = str(tmp / f"{key}.json")
        _quiet(["train", *BASE, "--on", "MI250X", *args, "-o", path])
        h100 = json.loads(_quiet(["train", *BASE, "--on", "H100", *args, "--json"]))
        out[key] = path, h100["train"]
    return out


def _whatif(*args: str) -> dict:
    return json.loads(_quiet(["whatif", *args, "--json"]))


def test_hardware_h100_on_a_zero1_file_is_trains_step_floor(files):
    path, h100 = files["zero"]
    doc = _whatif(path, "--hardware", "H100")
    assert doc["total_after_work_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)
    assert doc["total_after_work_floor_s"] == pytest.approx(0.23453, abs=1e-5)
    opt = next(k for k in doc["after"]["kernels"] if k["name"] == "optimizer.adamw")
    assert opt["bytes"]["DRAM"] == 28 * 1_684_603_904      # the H100's 1/4 shard
    said = " ".join(doc["after"]["notes"])
    assert "its own rank's, recomputed from the file's train.setup" in said
    assert "4 data- x 1 tensor-parallel ranks there, 8 x 1 in the file" in said


def test_hardware_h100_on_a_tp4_file_is_trains_step_floor(files):
    path, h100 = files["tp"]
    doc = _whatif(path, "--hardware", "H100")
    assert doc["total_after_work_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)
    assert doc["total_after_work_floor_s"] == pytest.approx(0.08311, abs=1e-5)


def test_on_h100_judges_the_h100_s_own_rank(files):
    path, h100 = files["zero"]
    doc = _whatif(path, "--on", "H100", "--precision", "bf16")
    assert doc["total_before_work_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)


def test_on_h100_then_hardware_mi250x_is_the_mi250x_s_own_step(files):
    path, _ = files["zero"]
    back = json.loads(_quiet(["train", *BASE, "--on", "MI250X", *ZERO, "--json"]))["train"]
    doc = _whatif(path, "--on", "H100", "--hardware", "MI250X")
    assert doc["total_after_work_floor_s"] == pytest.approx(back["floor_s"], rel=1e-9)


def test_the_ring_rule_has_a_public_name():
    from rooflab.cli import choose_train_comm

    assert hasattr(choose_train_comm, "ring_of")
    assert not hasattr(choose_train_comm, "_ring_of")
