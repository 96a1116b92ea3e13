"""The hop latency belongs to the link (s36 N): a `rooflab train --dp` file's collectives,
timed again on another device's link by `choose --among` or `whatif --hardware`, pay that
link's hops (a catalog link: none, as `rooflab train --on DEVICE` counts it), not the file's
--hop-latency-us; on the file's own link (same bandwidth, same ring) the file's stay.

Before: an H100 file of `--dp 4 --hop-latency-us 10` (506 buckets x 6 hops x 10 us = 30.4
ms of latency) read 89.2 ms exposed on an MI300X in choose, where `train --on MI300X --dp 4`
says 58.8 ms (the file's 30.4 ms kept on a link that has none)."""

from __future__ import annotations

import pytest
from cli_inproc import json_of

FILE_ARGS = ["train", "llama-2-7b", "--on", "H100 SXM", "--dp", "4", "--json"]


def _comm(doc: dict) -> dict:
    return next(k["meta"] for k in doc["kernels"] if k["meta"].get("train_part") == "comm")


@pytest.fixture(scope="module")
def h100_file(tmp_path_factory):
    import contextlib
    import io
    import json

    from rooflab.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main([*FILE_ARGS, "--hop-latency-us", "10"]) == 0
    path = tmp_path_factory.mktemp("n") / "h100.json"
    path.write_text(out.getvalue())
    return path, json.loads(out.getvalue())


def test_choose_times_each_device_with_its_own_links_latency(capsys, h100_file):
    """MI300X: `train --on MI300X --dp 4` (a catalog xGMI link, no hop latency) is the
    truth, 59.66 ms exposed: its link (105.29 ms) is slower than the backward (W = 46.55
    ms), so the queue is link-bound from the first bucket, lm_head's, ready after its
    bytes' share of the backward (s38 B), 262,144,000 / 13,214,687,232 x W = 0.92 ms, to
    105.29 + 0.92 - 46.55 = 59.66 ms (58.9 ms with an equal 225th of W, 0.21 ms, s37 B;
    58.8 ms before s37 B's tensor-filled buckets); the H100 keeps
    the file's own 10 us hops: its exposed_s. HEAD: the H100 scaled the latency with the
    bandwidth (0.645 ms); C's tree kept it on the MI300X (89.2 ms)."""
    path, doc = h100_file
    mi = _comm(json_of(capsys, ["train", "llama-2-7b", "--on", "MI300X", "--dp", "4",
                                "--json"]))
    got = {d["name"]: d for d in json_of(capsys, ["choose", str(path), "--among",
                                                  "MI300X,H100 SXM", "--json"])["devices"]}
    assert got["AMD Instinct MI300X"]["dp_exposed_s"] == pytest.approx(mi["exposed_s"],
                                                                       rel=1e-9)
    assert mi["exposed_s"] == pytest.approx(0.05966, abs=1e-4)
    assert got["NVIDIA H100 SXM"]["dp_exposed_s"] == pytest.approx(
        _comm(doc)["exposed_s"], rel=1e-9)
    # 1.349 ms: 226 buckets' 13.56 ms of hops in 58.5 ms, under the 62.31 ms backward,
    # each ready when its gradients are (s38 B): layer 0's gate_proj bucket (90.18 MB)
    # finds the link free, 360.59 us, then o, v, k, q (33.55 MB, 60 + 111.85 us each)
    # queue back to back, 687.4 us, then the embedding's 933.81 us, from 4 x 158.2 us of
    # backward before its end: 360.59 + 687.4 + 933.81 - 632.8 = 1349 us (1.19 ms with
    # equal shares, s37 B; 13.1 ms with 506 buckets' 30.4 ms, before it)
    assert _comm(doc)["exposed_s"] == pytest.approx(0.001349, abs=1e-6)


def test_whatif_hardware_takes_the_same_rule(capsys, h100_file):
    """whatif --hardware MI300X: the after side's exposed part is train --on MI300X's 59.66
    ms too, the before side the file's 1.349 ms."""
    path, doc = h100_file
    mi = _comm(json_of(capsys, ["train", "llama-2-7b", "--on", "MI300X", "--dp", "4",
                                "--json"]))
    moves = json_of(capsys, ["whatif", str(path), "--hardware", "MI300X", "--json"])
    row = next(m for m in _moves(moves) if "after_exposed_s" in m)
    assert row["after_exposed_s"] == pytest.approx(mi["exposed_s"], rel=1e-9)
    assert row["before_exposed_s"] == pytest.approx(_comm(doc)["exposed_s"], rel=1e-9)


def _moves(doc) -> list[dict]:
    """Every dict in the whatif document (its per-kernel rows, wherever they sit)."""
    out, todo = [], [doc]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            out.append(x)
            todo += list(x.values())
        elif isinstance(x, list):
            todo += x
    return out


def test_on_link_hand_calculation():
    """One all-reduce of 4 ranks, 10 buckets, 1 s of which 0.06 s latency (10 launches x 6
    hops x 1 ms), 0.1 s last bucket: on a link of 2 ms a hop and 9e11 B/s the latency is
    10 x 6 x 2 ms = 0.12 s, the bandwidth part 4.5e11 / 9e11 = 0.5 s (s36 R: it kept the
    file's 0.94 s), seconds_each 0.5 + 0.12 = 0.62, the last bucket (0.1 - 0.006) x 0.5 /
    0.94 + 0.012 = 0.062, comm_s 0.62; on the file's own bandwidth (bytes 4.5e11 / bus
    4.8787e11 = 0.94 s) it stays as it is."""
    from rooflab.model.kernel import Kernel
    from rooflab.model.train_comm import on_link

    c = {"name": "allreduce.grads", "kind": "all-reduce", "calls": 1, "seconds_each": 1.0,
         "buckets": 10, "launches_each": 10, "last_bucket_s_each": 0.1,
         "latency_s_each": 0.06, "window": "backward"}
    k = Kernel(name="comm.allreduce", bytes={"NVLink": 4.5e11}, calls=1,
               meta={"train_part": "comm", "devices": 4, "comm_s": 1.0, "collectives": [c]})
    moved = on_link(k, 9e11, 2e-3)
    got = moved.meta["collectives"][0]
    assert got["latency_s_each"] == pytest.approx(0.12)
    assert got["seconds_each"] == pytest.approx(0.62)
    assert got["last_bucket_s_each"] == pytest.approx(0.062)
    assert moved.meta["comm_s"] == pytest.approx(0.62)
    assert on_link(k, 4.5e11 / 0.94, 2e-3) is k
