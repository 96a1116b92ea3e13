"""`rooflab whatif` on an MI250X `train` file judges its kernels on one die, as `rooflab
train --on MI250X` times them (session 35 A): --on MI250X was the package's roof.

Hand figures (llama-2-7b, --batch 1 --seq 4096):
  gate_proj: 2 x 4096 x 4096 x 11008 FLOP per layer x 32 layers = 11,819,749,998,592 FLOP;
    one die's bf16 tensor 383 / 2 = 191.5 TFLOP/s: 61.72 ms (the package's 383: 30.86 ms);
    onto an H100 SXM (its bf16 tensor P) the speed-up per rank is P / 191.5e12 (5.17x),
    not P / 383e12 (2.58x), like for like: both are datasheet figures (the die's / 2).
  --dp 4 (8 ranks): the all-reduce sends 2 x 7/8 x 13,476,831,232 B = 23,584,454,656 B on
    the 50 GB/s inter-package xGMI hop: 471.7 ms, of which the file's exposed part
    (10.5 ms since s38 B: the tensor-filled buckets each ready when the backward has
    written them, the last ones queued behind each other (s37: the last of 225 equal
    shares, 2.06 ms, 11.2 ms; 505 equal ones, 0.916 ms, before), and the embedding's
    gradient bucket after the backward, 2 x 7/8 x 262,144,000 B / 50 GB/s = 9.18 ms, s35
    M; 916 us before) is counted; on the package's faster backward 151 ms read exposed.
  --dp 1 (the package's 2 dies): 2 x 1/2 x 13,476,831,232 B / 200 GB/s (4 die links) =
    67.38 ms, as train says; whatif read 270 ms (a ring of 2 packages' 50 GB/s hop). Its
    exposed part: the embedding's 262,144,000 B bucket, 1.3107 ms, after layer 0's
    q_proj bucket, ready at the backward's end (s38 B), (67.38 - 1.31) ms x 33,554,432 /
    13,214,687,232 B = 0.1678 ms: 1.48 ms (an equal 225th, s37 B: 0.294 ms, 1.6 ms).
  --hardware H100 on the --dp 1 file: one H100 has no collective (`train --on H100` at
    --dp 1 sends none), so the row is left out, as --on H100 leaves it: the floor after is
    train --on H100's, exactly."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

G = 6_738_415_616 * 2                     # bf16 gradients, B
GATE_FLOP = 2 * 4096 * 4096 * 11008 * 32  # 11.82 TFLOP
DIE_BF16 = 383e12 / 2                     # 191.5 TFLOP/s
BASE = ["llama-2-7b", "--batch", "1", "--seq", "4096"]


def _train(tmp, name: str, *args: str) -> tuple[str, dict]:
    path = tmp / name
    assert main(["train", *BASE, *args, "-o", str(path)]) == 0
    return str(path), json.loads(path.read_text())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("a35w")
    return {"dp4": _train(tmp, "dp4.json", "--on", "MI250X", "--dp", "4"),
            "dp1": _train(tmp, "dp1.json", "--on", "MI250X"),
            "h100": _train(tmp, "h100.json", "--on", "H100 SXM")}


def _whatif(capsys, *args) -> tuple[dict, str]:
    capsys.readouterr()
    assert main(["whatif", *args, "--json"]) == 0
    got = capsys.readouterr()
    return json.loads(got.out), got.err


def _move(doc: dict, name: str) -> dict:
    return next(m for m in doc["moves"] if m["kernel"] == name)


def test_work_floors_are_one_die_s(files, capsys):
    path, train = files["dp4"]
    doc, _ = _whatif(capsys, path, "--on", "MI250X", "--precision", "fp16")
    gate = _move(doc, "gate_proj")
    assert gate["before_floor_s"] == pytest.approx(GATE_FLOP / DIE_BF16, rel=1e-9)  # 61.7 ms
    comm = _move(doc, "comm.allreduce")
    assert comm["before_floor_s"] == pytest.approx(2 * 7 / 8 * G / 50e9, rel=1e-9)  # 472 ms
    # the exposed part train's step floor counts (11.2 ms since s37), not the package's 151 ms
    assert comm["before_exposed_s"] == pytest.approx(train["train"]["dp"]["exposed_s"],
                                                     rel=1e-6)
    assert doc["total_before_floor_s"] == pytest.approx(train["train"]["floor_s"], rel=1e-6)


def test_hardware_h100_is_per_rank_and_like_for_like(files, capsys):
    from rooflab.hardware.resolve import load_roof

    path, _ = files["dp4"]
    doc, _ = _whatif(capsys, path, "--on", "MI250X", "--hardware", "H100 SXM")
    h100 = load_roof("H100 SXM").compute_for("bf16", "tensor")[0].value
    gate = _move(doc, "gate_proj")
    assert gate["before_floor_s"] / gate["after_floor_s"] == pytest.approx(h100 / DIE_BF16,
                                                                          rel=1e-9)
    assert h100 / DIE_BF16 == pytest.approx(5.17, abs=0.005)
    assert doc["efficiency_basis"]["name"] == "AMD Instinct MI250X, one die"
    assert doc["assumption"].endswith(
        "efficiency taken against AMD Instinct MI250X, one die (derived: the package's / 2),"
        " applied to NVIDIA H100 SXM (nominal): like for like")


def test_dp1_file_rings_its_dies_on_their_die_links(files, capsys):
    path, train = files["dp1"]
    doc, _ = _whatif(capsys, path, "--on", "MI250X", "--bytes-scale", "1")
    comm = _move(doc, "comm.allreduce")
    assert comm["before_floor_s"] == pytest.approx(G / 200e9, rel=1e-9)     # 67.4 ms
    assert comm["before_floor_s"] == pytest.approx(train["train"]["dp"]["comm_s"], rel=1e-9)


def test_hardware_onto_a_ring_of_one_leaves_the_row_out_as_on_does(files, capsys):
    path, train = files["dp1"]
    _, h100 = files["h100"]
    doc, _ = _whatif(capsys, path, "--on", "MI250X", "--hardware", "H100 SXM")
    assert not [m for m in doc["moves"] if m["kernel"].startswith("comm.")]
    assert doc["total_after_floor_s"] == pytest.approx(h100["train"]["floor_s"], rel=1e-9)
    exposed = train["train"]["dp"]["exposed_s"]
    assert doc["total_before_floor_s"] == pytest.approx(train["train"]["floor_s"] - exposed,
                                                        rel=1e-9)
    said = " ".join(doc["after"]["notes"])
    assert "comm.allreduce" in said and "left out on both sides" in said
    # --on H100 leaves it out too: both agree on the H100's floor
    on, _ = _whatif(capsys, path, "--on", "H100 SXM", "--bytes-scale", "1")
    assert on["total_after_floor_s"] == pytest.approx(doc["total_after_floor_s"], rel=1e-9)
    assert [n for n in on["notes"] if n.startswith("comm.allreduce")] == [
        "comm.allreduce (1.48 ms exposed in the file) left out: `rooflab train ... --on "
        "H100 SXM --dp 1` is one device, with no collective to send"]
