"""A `rooflab train --dp 4 --tp 8` file read back by whatif and choose (s32 J): the --dp
row is timed as train times it, on the ring of all dp x tp = 32 devices (past a node) with
the node's network shared by its 8 tensor-parallel ranks' rings, not on a 4-device ring in
the node (train_dp_words.train_ring, the one function all three use).

Hand check, llama-2-7b, --batch 1 --seq 4096, H100 SXM: one --tp 8 device holds 842,534,912
parameters (tests/test_s32_c_train_tp.py), so its bf16 gradients are 1,685,069,824 B and
its ring all-reduce over 4 sends 2 x 3/4 of them, 2,527,604,736 B. The ring leaves the node
(32 > 8 devices): its slowest hop is the network, 8 x 400 Gb/s NICs = 400 GB/s per node,
1/8 to each of the 8 rings: 50 GB/s, so 2,527,604,736 / 50e9 = 50.552 ms (read back before:
on a 4-device NVLink ring at 450 GB/s, 5.617 ms, and choose's H100 row said 54.9 ms for
train's 86 ms: 37.9 ms compute + 31.2 ms exposed + 17 ms tensor-parallel).
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import json_of

from rooflab.cli.main import main

SENT = 2 * 3 / 4 * 2 * 842_534_912     # 2,527,604,736 B each device sends per step
NET_SHARE = 400e9 / 8                  # the node's network, one eighth per --dp ring
NVLINK = 450e9
STEP = ("llama-2-7b", "--seq", "4096", "--tp", "8", "--dp", "4", "-q")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("j")
    out = {"h100": d / "h100.json", "h100_b2": d / "h100_b2.json", "h200": d / "h200.json"}
    for name, extra in (("h100", ("--on", "H100 SXM", "--batch", "1")),
                        ("h100_b2", ("--on", "H100 SXM", "--batch", "2")),
                        ("h200", ("--on", "H200 SXM", "--batch", "1"))):
        assert main(["train", *STEP, *extra, "-o", str(out[name])]) == 0
    return out


def _train(path):
    return json.loads(path.read_text())["train"]


def test_train_ring_is_the_one_link():
    from rooflab.cli.train_dp_words import dp_link

    shared = dp_link("H100 SXM", 4, None, 8)        # 32 devices: past the node, 1/8 of it
    assert (shared.level, shared.bus_bytes_per_s) == ("network", NET_SHARE)
    alone = dp_link("H100 SXM", 4, None)            # no --tp: 4 devices in one node
    assert (alone.level, alone.bus_bytes_per_s) == ("NVLink", NVLINK)
    inside = dp_link("H100 SXM", 2, None, 4)        # 8 devices: the ring stays in the node
    assert (inside.level, inside.bus_bytes_per_s) == ("NVLink", NVLINK)


def test_train_file_holds_the_hand_check(files):
    t = _train(files["h100"])
    assert t["dp"]["link"]["bus_bytes_per_s"] == NET_SHARE
    assert t["dp"]["comm_s"] == pytest.approx(SENT / NET_SHARE, rel=1e-12)   # 50.552 ms
    assert t["floor_s"] == pytest.approx(0.0860, abs=5e-4)


def test_choose_rows_time_the_dp_ring_as_train(files, capsys):
    doc = json_of(capsys, ["choose", str(files["h100"]), "--among", "H100 SXM,H200 SXM",
                         "--json"])
    rows = {r["name"]: r for r in doc["devices"]}
    for name, own in (("NVIDIA H100 SXM", "h100"), ("NVIDIA H200 SXM", "h200")):
        r, t = rows[name], _train(files[own])
        dp, tp = r["comm_rows"]
        assert dp["name"] == "comm.allreduce" and tp["name"] == "comm.tp"
        assert dp["link"]["bus_bytes_per_s"] == NET_SHARE
        assert dp["comm_s"] == pytest.approx(SENT / NET_SHARE, rel=1e-12)   # not 5.62 ms
        assert dp["comm_s"] == pytest.approx(t["dp"]["comm_s"], rel=1e-12)
        assert dp["exposed_s"] == pytest.approx(t["dp"]["exposed_s"], rel=1e-9)
        assert tp["link"]["bus_bytes_per_s"] == NVLINK
        assert tp["comm_s"] == pytest.approx(t["tp"]["comm_s"], rel=1e-9)
        assert r["dp_step_floor_s"] == pytest.approx(t["floor_s"], rel=1e-9)
    # 37.9 + 31.2 + 17.0 = 86 ms on H100 (54.9 ms before); 82.7 ms on H200 (50.3 before)
    assert rows["NVIDIA H100 SXM"]["dp_step_floor_s"] == pytest.approx(0.0860, abs=5e-4)
    assert rows["NVIDIA H200 SXM"]["dp_step_floor_s"] == pytest.approx(0.0827, abs=5e-4)


def test_choose_terminal_names_each_rows_link(files, capsys):
    assert main(["choose", str(files["h100"]), "--among", "H100 SXM"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # s37 B: DDP's buckets filled tensor by tensor (48.1 ms exposed, 86 ms by bytes); s38
    # B: each ready when the backward has written its gradients (lm_head's slice, the
    # first, after its bytes' 2 % of the backward, not an equal 225th): 31.23 -> 31.25 ms
    assert ("NVIDIA H100 SXM: 67.5 ms (comm.allreduce 50.6 ms on network 50 GB/s, 31.3 ms "
            "exposed; comm.tp 17 ms on NVLink 450 GB/s, 17 ms exposed), 48.2 ms exposed: "
            "step floor 37.9 ms compute + 48.2 ms = 86.1 ms (as train prints it)") in out


@pytest.mark.parametrize("on", [("--on", "H100 SXM"), ()])
def test_whatif_batch_2_is_trains_floor(files, capsys, on):
    doc = json_of(capsys, ["whatif", str(files["h100"]), *on, "--batch", "2", "--json"])
    (m,) = [m for m in doc["moves"] if m["kernel"] == "comm.allreduce"]
    assert m["after_work_floor_s"] == pytest.approx(SENT / NET_SHARE, rel=1e-9)   # held
    assert doc["total_before_work_floor_s"] == pytest.approx(_train(files["h100"])["floor_s"],
                                                             rel=1e-9)            # 86 ms
    # train --batch 2's floor: 114 ms (--on H100 read 103 ms before)
    assert doc["total_after_work_floor_s"] == pytest.approx(
        _train(files["h100_b2"])["floor_s"], rel=1e-9)
    assert doc["total_after_work_floor_s"] == pytest.approx(0.1145, abs=5e-4)   # s37 B


def test_whatif_hardware_times_both_rows_on_the_targets_links(files, capsys):
    doc = json_of(capsys, ["whatif", str(files["h100"]), "--on", "H100 SXM", "--hardware",
                         "H200 SXM", "--json"])
    moves = {m["kernel"]: m for m in doc["moves"]}
    assert moves["comm.allreduce"]["after_work_floor_s"] == pytest.approx(SENT / NET_SHARE,
                                                                          rel=1e-9)
    assert moves["comm.tp"]["after_work_floor_s"] == pytest.approx(
        _train(files["h200"])["tp"]["comm_s"], rel=1e-9)       # on NVLink, not the network
    assert doc["total_after_work_floor_s"] == pytest.approx(_train(files["h200"])["floor_s"],
                                                            rel=1e-9)   # 82.7 ms
