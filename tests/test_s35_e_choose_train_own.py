"""`rooflab choose` on a `rooflab train --on MI250X --dp 4 --zero 1` file ranks the H100 on
its own rank, recomputed from the file's train.setup, so its row is what `rooflab train
--on H100 --dp 4 --zero 1` prints (s35 E; choose kept the file's rank and said so in a
note: 226 ms vs train's 233 ms).

llama-2-7b, --batch 1 --seq 4096, bf16, AdamW, P = 6,738,415,616 parameters.
  * MI250X --dp 4: 8 ranks (2 dies a package), ZeRO-1 shard ceil(P / 8) = 842,301,952
    parameters; 4 H100s: 4 ranks, shard ceil(P / 4) = 1,684,603,904.
  * the optimizer's pass moves 28 B a parameter of its shard: 28 x 842,301,952 =
    23,584,454,656 B more on the H100's own rank, / 3.35 TB/s = 7.040 ms: the step's compute
    204.0 -> 211.0 ms, + 23.9 ms exposed of the 44.9 ms reduce-scatter + all-gather on
    NVLink = 234.5 ms; 23.9 = the all-gather's 22.46 + the last of DeepSpeed's 14
    reduce-scatter buckets of 5e8 elements, filled tensor by tensor (s38 H): 891,305,984 of
    13,476,831,232 B, 22.46 x that = 1.486 ms, the embedding's gradient inside it (24.1
    with 14 equal buckets, s36 H; 22.9 with DDP's 25 MiB buckets, the embedding's a bucket
    of its own, s35 M; 22.5 before).
  * memory per H100: weights 2P + grads 2P + optimizer 12 x 1,684,603,904 + activations
    18,903,728,128 = 26,953,662,464 + 20,215,246,848 + 18,903,728,128 = 66,072,637,440 B
    (the file's MI250X die holds 55,965,014,016 B: its optimizer shard is 1/8).
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import quiet_out as _quiet

COMMON = ["--batch", "1", "--seq", "4096", "--dp", "4", "--zero", "1"]
H100 = "NVIDIA H100 SXM"




@pytest.fixture(scope="module")
def ranked(tmp_path_factory) -> tuple[dict, str, dict]:
    path = str(tmp_path_factory.mktemp("s35e") / "t.json")
    _quiet(["train", "llama-2-7b", "--on", "MI250X", *COMMON, "-o", path])
    rows = {r["name"]: r for r in json.loads(
        _quiet(["choose", path, "--among", "MI250X,H100", "--json"]))["devices"]}
    text = " ".join(_quiet(["choose", path, "--among", "MI250X,H100"]).split())
    own = json.loads(_quiet(["train", "llama-2-7b", "--on", "H100", *COMMON, "--json"]))
    return rows, text, own["train"]


def test_h100_row_is_trains_step_floor(ranked):
    rows, _, h100 = ranked
    h = rows[H100]
    assert h["dp_step_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)      # 234.5 ms
    assert h["dp_step_floor_s"] == pytest.approx(0.23453, abs=1e-5)
    # the compute: 7.040 ms above the file's rank, the optimizer's 1/4 shard
    assert h["seconds"] == pytest.approx(h100["work_floor_s"] - h100["dp"]["exposed_s"],
                                         rel=1e-9)
    opt = next(k for k in h100["kernels"] if k["name"] == "optimizer.adamw")
    assert opt["bytes"] == 28 * 1_684_603_904


def test_h100_memory_need_is_its_own(ranked):
    rows, _, h100 = ranked
    assert rows[H100]["needs_bytes"] == 66_072_637_440 == h100["memory"]["total_bytes"]
    assert rows["AMD Instinct MI250X"]["needs_bytes"] == 55_965_014_016


def test_the_note_is_gone_and_the_line_says_why(ranked):
    _, text, _ = ranked
    assert "the file's 1/8 shard's" not in text
    assert ("step floor 211 ms compute + 23.9 ms = 235 ms (its own rank's kernels and "
            "memory, from the file's train.setup: as train prints it)") in text
