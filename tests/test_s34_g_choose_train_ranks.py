"""`rooflab choose` on a `rooflab train --on MI250X` file re-rings each candidate's
communication as `rooflab train --on THAT` would (session 34, helper G;
cli/choose_train_ranks.py).

An MI250X is 2 dies, each a rank, so `train llama-2-7b --on MI250X --batch 1 --seq 4096
--dp 4` rings its all-reduce over 8 ranks. By hand, P = 6 738 415 616 parameters, bf16
gradients 2P = 13 476 831 232 B:
  MI250X, ring of 8: 2 x 7/8 x 2P = 23 584 454 656 B sent per device;
  H100,  ring of 4: 2 x 3/4 x 2P = 20 215 246 848 B, / 450 GB/s (NVLink 4, half of 900)
    = 44.92 ms, what `train --on H100 --dp 4` prints. choose kept the file's 23.6 GB:
    23 584 454 656 / 450e9 = 52.41 ms on the H100 (the old row).
  --dp 1 on MI250X: its 2 dies are a ring of 2 on their 4 die links (200 GB/s):
    2 x 1/2 x 2P / 200e9 = 67.38 ms; choose timed it on a 2-package ring (50 GB/s, 270 ms)
    and gave the H100, one device at --dp 1, the same collective (train: none).
  --zero 1: reduce-scatter + all-gather, (N-1)/N x 2P each: the same bytes as the
    all-reduce, so 44.92 ms on the H100 again; the optimizer's shard (1/8 in the file,
    1/4 on 4 H100s) and the memory are the H100's own since s35 E (choose_train_own).
  --tp 2: on MI250X a group of 4 dies; on H100 of 2: the TP all-reduces send
    2 x 1/2 of the activation instead of 2 x 3/4, so the H100 row's bytes are the file's
    x (1/2)/(3/4) = 2/3; train --on H100 --tp 2 prints 4 362 125 312 B, 9.694 ms.
"""

import json

import pytest

from rooflab.cli.main import main

P = 6_738_415_616
COMMON = ["--batch", "1", "--seq", "4096"]


def _train_file(tmp_path, capsys, *args) -> str:
    path = str(tmp_path / "t.json")
    assert main(["-q", "train", "llama-2-7b", "--on", "MI250X", *COMMON, *args, "-o",
                 path]) == 0
    capsys.readouterr()
    return path


def _train(capsys, on, *args) -> dict:
    assert main(["-q", "train", "llama-2-7b", "--on", on, *COMMON, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["train"]


def _choose(capsys, path, among="MI250X,H100") -> tuple[dict, str]:
    assert main(["-q", "choose", path, "--among", among, "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["devices"]}
    assert main(["choose", path, "--among", among]) == 0
    return rows, " ".join(capsys.readouterr().out.split())


H100, MI = "NVIDIA H100 SXM", "AMD Instinct MI250X"


def test_dp4_h100_row_is_train_on_h100(tmp_path, capsys):
    rows, text = _choose(capsys, _train_file(tmp_path, capsys, "--dp", "4"))
    h100 = _train(capsys, "H100", "--dp", "4")
    h, m = rows[H100], rows[MI]
    assert h["dp_sent_bytes"] == pytest.approx(2 * 3 / 4 * 2 * P)        # 20.2 GB
    assert h["dp_sent_bytes"] == pytest.approx(h100["dp"]["bytes_per_device"])
    assert h["dp_ring_ranks"] == 4 and m["dp_ring_ranks"] == 8
    assert h["dp_comm_s"] == pytest.approx(2 * 3 / 4 * 2 * P / 450e9)    # 44.92 ms, not 52.4
    assert h["dp_comm_s"] == pytest.approx(h100["dp"]["comm_s"])
    assert h["dp_exposed_s"] == pytest.approx(h100["dp"]["exposed_s"], rel=1e-6)
    assert h["dp_step_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)
    assert m["dp_sent_bytes"] == pytest.approx(2 * 7 / 8 * 2 * P)        # the file's 23.6 GB
    assert "NVIDIA H100 SXM (20.2 GB sent per device, a ring of 4 ranks" in text
    assert "44.9 ms on NVLink 450 GB/s" in text


def test_dp1_mi250x_file_h100_has_no_collective(tmp_path, capsys):
    rows, text = _choose(capsys, _train_file(tmp_path, capsys))
    h100 = _train(capsys, "H100")
    mi = _train(capsys, "MI250X")
    assert rows[H100]["dp_comm_s"] == 0.0 and rows[H100]["dp_ring_ranks"] == 1
    assert rows[H100]["dp_step_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)
    # the die ring on its 4 die links: 2 x 1/2 x 2P / 200 GB/s = 67.38 ms (not 270 ms)
    assert rows[MI]["dp_comm_s"] == pytest.approx(2 * P / 200e9)
    assert rows[MI]["dp_comm_s"] == pytest.approx(mi["dp"]["comm_s"])
    assert rows[MI]["dp_step_floor_s"] == pytest.approx(mi["floor_s"], rel=1e-9)
    assert "NVIDIA H100 SXM: no collectives" in text


def test_zero1_comm_agrees_and_the_shard_is_said(tmp_path, capsys):
    rows, text = _choose(capsys, _train_file(tmp_path, capsys, "--dp", "4", "--zero", "1"))
    h100 = _train(capsys, "H100", "--dp", "4", "--zero", "1")
    h = rows[H100]
    assert h["dp_comm_s"] == pytest.approx(2 * P * 2 * 3 / 4 / 450e9)
    assert h["dp_comm_s"] == pytest.approx(h100["dp"]["comm_s"])
    assert h["dp_exposed_s"] == pytest.approx(h100["dp"]["exposed_s"], rel=1e-6)
    # the optimizer's shard is train's 1/4 on 4 H100s, not the file's 1/8 (s35 E: the
    # H100's own rank is recomputed from train.setup; it kept the file's, below train's)
    assert h["dp_step_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)
    assert h["needs_bytes"] == h100["memory"]["total_bytes"]
    assert "the file's 1/8 shard's" not in text
    assert "train's own differs, the note below" not in text


def test_tp2_comm_agrees_and_the_layer_split_is_said(tmp_path, capsys):
    rows, text = _choose(capsys, _train_file(tmp_path, capsys, "--tp", "2"))
    h100 = _train(capsys, "H100", "--tp", "2")
    h = rows[H100]
    assert h["dp_sent_bytes"] == pytest.approx(h100["tp"]["bytes_per_device"])  # 4.36 GB
    assert h["dp_comm_s"] == pytest.approx(h100["tp"]["comm_s"])                # 9.69 ms
    assert h["dp_ring_ranks"] == 2 and rows[MI]["dp_ring_ranks"] == 4
    assert "with --tp 2's collectives" in text          # as given (packages), not --tp 4
    # each H100 holds 1/2 of every layer, as train --on H100 --tp 2 (s35 E: recomputed)
    assert h["dp_step_floor_s"] == pytest.approx(h100["floor_s"], rel=1e-9)
    assert "splits every layer over a group of 2 ranks, not the file's 4" not in text


def test_h100_file_is_unchanged(tmp_path, capsys):
    """A file whose device is one rank per device: every catalog GPU rings as it does."""
    path = str(tmp_path / "h.json")
    assert main(["-q", "train", "llama-2-7b", "--on", "H100", *COMMON, "--dp", "4", "-o",
                 path]) == 0
    capsys.readouterr()
    rows, text = _choose(capsys, path, "H100,MI300X")
    assert rows[H100]["dp_sent_bytes"] == pytest.approx(2 * 3 / 4 * 2 * P)
    assert "sent per device, a ring of" not in text and "note: NVIDIA" not in text


def test_global_step_tokens_counts_the_dies(capsys):
    """train.dp.global_step_tokens: 8 ranks x 4096 = 32768 (it said 4 x 4096)."""
    t = _train(capsys, "MI250X", "--dp", "4")
    assert t["dp"]["global_step_tokens"] == 8 * 4096
