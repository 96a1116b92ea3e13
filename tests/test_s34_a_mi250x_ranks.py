"""`rooflab train` on an MI250X (the catalog's package of 2 GCDs, each a device to ROCm):
one rank per die (session 34, helper A; workloads/llm/train_dies.py).

Before, `train llama-2-7b --on MI250X --batch 1 --seq 4096 --dp 4` timed the step on the
package's ceilings (539 ms), rang the all-reduce over 8 dies, yet counted 4 x 4096 tokens
per step and judged DDP's 108 GB of states per rank against the package's 128 GB ("fits").
Now every die is a rank running --batch on one die's roof (the package's / 2), --dp and
--tp count packages, and tokens, MFU, the floor, the memory and the ring all follow.

By hand, llama-2-7b: P = 6 738 415 616 parameters (32 layers x 202 383 360 + the embedding
and the untied lm_head, 2 x 32 000 x 4096, + the final norm's 4096). One die: 128 GB / 2 =
64 GB, bf16 tensor 383 / 2 = 191.5 TFLOP/s.
  --dp 4: 4 packages x 2 dies = 8 ranks; tokens 8 x 4096 = 32 768 per optimizer step;
    DDP states per rank 16 P = (2 + 2 + 12) x P = 107 814 649 856 B > 64e9: does not fit
    (old: "127 GB of 128 GB ... fits");
    --zero 1 over 8: (2 + 2 + 12/8) P = 5.5 P = 37 061 285 888 B, optimizer 12P/8 =
      10 107 623 424 (old: 12P/4 over the 4 packages: 20 215 246 848);
    --zero 2: (2 + 14/8) P = 3.75 P = 25 269 058 560; --zero 3: 16P/8 = 2P = 13 476 831 232.
  The work floor on one die is exactly 2x the package's: every ceiling is halved, each
  kernel's max(FLOP / P, bytes / B) doubles.
  --dp 1 (the default): the package's 2 dies are 2 ranks on their 4 die links (4 x 50 =
    200 GB/s per direction): all-reduce 2 x 1/2 x 2P = 13 476 831 232 B / 200e9 = 67.384 ms;
    tokens 2 x 4096 = 8192 (old: no all-reduce, 4096 tokens, 128 GB).
  --tp 2: a TP group of 4 dies, each 1/4 of every layer: per layer 4096^2 x 4 + 3 x 4096 x
    11 008 = 202 375 168 / 4 = 50 593 792 + the norms' 8192 replicated = 50 601 984, x 32 =
    1 619 263 488, + (embedding + lm_head) / 4 = 65 536 000, + 4096: 1 684 803 584
    parameters per die, weights 2 x that = 3 369 607 168 B of 64 GB (old: 1/2 of the model,
    6 738 677 760 B, of 128 GB).
"""

import json

import pytest

from rooflab.cli.main import main

P = 6_738_415_616
DIE = 64e9


def _train(capsys, *args) -> dict:
    assert main(["-q", "train", "llama-2-7b", "--on", "MI250X", "--batch", "1", "--seq",
                 "4096", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["train"]


def test_dp4_counts_eight_ranks_of_tokens_and_judges_one_die(capsys):
    t = _train(capsys, "--dp", "4")
    assert t["setup"]["dp"] == 4 and t["setup"]["dp_ranks"] == 8 and t["setup"]["dies"] == 2
    assert t["dp"]["n"] == 4 and t["dp"]["ring_ranks"] == 8
    assert t["tokens_per_s"] == pytest.approx(8 * 4096 / t["floor_s"])
    assert t["peak_flop_per_s"] == pytest.approx(191.5e12)
    mem = t["memory"]
    assert mem["device_bytes"] == pytest.approx(DIE)
    assert mem["states_bytes"] == pytest.approx(16 * P)         # 107.8 GB > 64 GB
    assert mem["fits"] is False


def test_the_floor_is_one_die_s_twice_the_package_s(capsys):
    from dataclasses import replace

    from rooflab.hardware.resolve import load_roof
    from rooflab.model.dies import without_note
    from rooflab.workloads.llm import load_config
    from rooflab.workloads.llm.train import TrainSetup, run_train

    # the package's figures as one device: its note left out, else run_train takes one
    # die of it, as the CLI does (train_dies.rank_roof, s35 A)
    whole = load_roof("MI250X")
    package = run_train(load_config("llama-2-7b"),
                        replace(whole, notes=without_note(whole.notes)),
                        TrainSetup(batch=1, seq=4096))
    t = _train(capsys, "--dp", "4")
    compute = t["floor_s"] - t["dp"]["exposed_s"]
    assert compute == pytest.approx(2 * package.timing.floor_s, rel=1e-9)
    assert t["mfu_at_floor"] == pytest.approx(t["model_flop"] / t["floor_s"] / 191.5e12)


@pytest.mark.parametrize("zero, states, optimizer", [
    (1, 5.5 * P, 12 * P / 8),       # (2 + 2 + 12/8) B/param
    (2, 3.75 * P, 12 * P / 8),      # (2 + 14/8)
    (3, 2 * P, 12 * P / 8),         # 16/8
])
def test_zero_shards_over_the_eight_ranks(capsys, zero, states, optimizer):
    mem = _train(capsys, "--dp", "4", "--zero", str(zero))["memory"]
    assert mem["states_bytes"] == pytest.approx(states)
    assert mem["optimizer_bytes"] == pytest.approx(optimizer)
    assert mem["device_bytes"] == pytest.approx(DIE) and mem["fits"] is True


def test_default_is_the_package_s_two_dies_on_their_links(capsys):
    t = _train(capsys)
    assert t["setup"]["dp_ranks"] == 2
    assert t["tokens_per_s"] == pytest.approx(2 * 4096 / t["floor_s"])
    assert t["dp"]["link"]["bus_bytes_per_s"] == pytest.approx(200e9)
    assert t["dp"]["comm_s"] == pytest.approx(2 * P / 200e9)       # 67.384 ms
    assert t["memory"]["device_bytes"] == pytest.approx(DIE)


def test_tp2_is_a_group_of_four_dies(capsys):
    t = _train(capsys, "--tp", "2")
    assert t["setup"]["tp"] == 2 and t["setup"]["tp_ranks"] == 4
    assert t["memory"]["weights_bytes"] == 2 * 1_684_803_584
    assert t["memory"]["device_bytes"] == pytest.approx(DIE)
    layers = next(c for c in t["tp"]["collectives"] if c["name"] == "tp.allreduce.layers")
    assert layers["seconds_each"] == pytest.approx(2 * 3 / 4 * 33_554_432 / 50e9)


def test_tp_must_divide_the_heads_in_ranks(capsys):
    # tinyllama: 32 heads, 4 KV heads; --tp 4 packages = 8 dies, which 4 KV heads cannot
    # split (old: 4 packages split them 4 ways on the package roof, no error)
    assert main(["-q", "train", "tinyllama-1.1b", "--on", "MI250X", "--tp", "4"]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "--tp 4 on a package of 2 dies is a tensor-parallel group of 8 ranks" in err
    assert "give --tp 1 or 2" in err


def test_words_say_ranks_tokens_and_the_die(capsys):
    assert main(["train", "llama-2-7b", "--on", "MI250X", "--batch", "1", "--seq", "4096",
                 "--dp", "4", "--zero", "1"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("(32768 tokens per optimizer step: 8 ranks (--dp 4 packages x 2 dies, one rank "
            "each) x 4096 tokens per step)") in text
    assert "of 64 GB on one die (a rank's device) (fits; ZeRO-1" in text
    assert "states 37.1 GB per rank" in text
    assert "A training process (one rank) runs on one die, so this step is one rank's" in text


def test_choose_times_the_mi250x_as_train_does(capsys, tmp_path):
    # choose ranks one die (model.dies.one_die); the file's step is now one die's too, so
    # choose's MI250X time is train's floor (old: train 690 ms, choose 1.08 s)
    f = tmp_path / "t.json"
    t = _train(capsys, "--dp", "4", "-o", str(f))
    assert main(["-q", "choose", str(f), "--among", "MI250X,H100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["devices"]
    mi = next(d for d in rows if "MI250X" in d["name"])
    assert mi["ranked_s"] == pytest.approx(t["with_launches_s"], rel=1e-6)
