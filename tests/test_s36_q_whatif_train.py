"""whatif on a `rooflab train --dp -o T.json` file gives what `rooflab train` gives with the
changed setting (s36 Q): the comm row's per-ZeRO-stage table (meta by_zero) under
--precision, and a whatif of a whatif's output reading the gradients' width as the first
one left it. tinyllama-1.1b on H100, --dp 4, --batch 2 --seq 1024 (bf16, 1.10 G params)."""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

BASE = ("tinyllama-1.1b", "--on", "H100", "--batch", "2", "--seq", "1024", "--dp", "4")


def _write(tmp, name: str, *args: str) -> str:
    path = str(tmp / name)
    done = run_cli(*args, "-o", path, "-q")
    assert done.returncode == 0, done.stderr
    return path


def _comm(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    doc = doc.get("after", doc)     # a whatif -o .json holds the after state under after
    return next(k for k in doc["kernels"] if k["name"].startswith("comm"))["meta"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("q36")
    t = _write(tmp, "T.json", "train", *BASE)
    t32 = _write(tmp, "T32.json", "train", *BASE, "--dtype", "fp32")
    w32 = _write(tmp, "W32.json", "whatif", t, "--precision", "fp32")
    back = _write(tmp, "back.json", "whatif", w32, "--precision", "bf16")
    return {"T": t, "T32": t32, "W32": w32, "back": back, "tmp": tmp}


def test_by_zero_follows_precision(files):
    """bf16 -> fp32 doubles every stage's bytes, as train --dtype fp32 writes them:
    stage 0 all-reduces 2 x 3/4 x 1.100 G x 4 B = 6.600 GB (3.300 GB at bf16), stage 3
    9.507 GB, at 450 GB/s 14.67 ms and 21.13 ms (old code: the file's 3.300 GB, 7.33 ms,
    so report's advice offered --zero 0 at half the bytes of --zero 0)."""
    got, want = _comm(files["W32"])["by_zero"], _comm(files["T32"])["by_zero"]
    assert want["0"]["bytes"] == pytest.approx(6.600290304e9)
    for stage in "0123":
        assert got[stage]["bytes"] == pytest.approx(want[stage]["bytes"], rel=1e-9)
        assert got[stage]["comm_s"] == pytest.approx(want[stage]["comm_s"], rel=1e-9)


def test_chained_precision_returns(files):
    """fp32 then back to bf16 is the file again: 3.300 GB all-reduced, grad_bytes 2, and
    q_proj.bwd_dw's gradient 22 layers x 2048 x 2048 x 2 B = 184.5 MB (its bytes_split
    weights) as in T (old code: the fp32 output said grad_bytes 2 beside 4 B gradients
    under fp32, read as held apart, so 6.600 GB and 369.1 MB stayed)."""
    comm = _comm(files["back"])
    assert comm["grad_bytes"] == 2
    assert comm["by_zero"]["0"]["bytes"] == pytest.approx(3.300145152e9)
    with open(files["back"], encoding="utf-8") as f:
        after = {k["name"]: k for k in json.load(f)["after"]["kernels"]}
    with open(files["T"], encoding="utf-8") as f:
        before = {k["name"]: k for k in json.load(f)["kernels"]}
    for name in ("comm.allreduce", "q_proj.bwd_dw", "embedding.bwd"):
        assert sum(after[name]["bytes"].values()) == pytest.approx(
            sum(before[name]["bytes"].values()), rel=1e-9), name


def test_held_gradients_stay_held_through_a_chain(files):
    """--grad-dtype fp32 under bf16: gradients held at 4 B. fp32 then fp8 reads them held
    (the marker grads_held), as fp8 at once does: q_proj.bwd_dw's gradient part of
    bytes_split stays 738.2 MB (22 x 2048 x 2048 x 4 B, read and written) in both, and
    the all-reduce 6.600 GB (old code: fp32's output read 4 B under fp32 as following the math,
    so fp8 halved the dW gradients to 2 B)."""
    tmp = files["tmp"]
    tg = _write(tmp, "TG.json", "train", *BASE, "--grad-dtype", "fp32")
    once = _write(tmp, "G8.json", "whatif", tg, "--precision", "fp8")
    first = _write(tmp, "G32.json", "whatif", tg, "--precision", "fp32")
    twice = _write(tmp, "G32_8.json", "whatif", first, "--precision", "fp8")
    docs = []
    for p in (once, twice):
        with open(p, encoding="utf-8") as f:
            docs.append({k["name"]: k for k in json.load(f)["after"]["kernels"]})
    for name in ("q_proj.bwd_dw", "down_proj.bwd_dw", "comm.allreduce"):
        a, b = (sum(d[name]["bytes"].values()) for d in docs)
        assert a == pytest.approx(b, rel=1e-9), name
    assert docs[1]["q_proj.bwd_dw"]["meta"]["grad_bytes"] == 4
    assert docs[1]["comm.allreduce"]["meta"]["by_zero"]["0"]["bytes"] == pytest.approx(
        6.600290304e9)


def test_zero2_hop_latency_stages(tmp_path):
    """--zero 2 --accumulate 2 --hop-latency-us 10: each stage's comm_s is its bytes at
    450 GB/s plus its hops, which DeepSpeed's element buckets and FSDP's units keep: stage
    3 at fp32 19.01 GB / 450 GB/s = 42.25 ms + 4.08 ms = 46.33 ms as train --dtype fp32
    writes it (in proportion it was 50.4 ms; old code: the bf16 file's 25.2 ms). Stage 0
    (DDP, its hops x the width: 46 tensor-filled buckets x 2 = 92 where train --dtype fp32
    fills 90, s37 B) within two buckets' 60 us."""
    args = (*BASE, "--zero", "2", "--accumulate", "2", "--hop-latency-us", "10")
    z = _write(tmp_path, "Z.json", "train", *args)
    want = _comm(_write(tmp_path, "Z32.json", "train", *args, "--dtype", "fp32"))["by_zero"]
    got = _comm(_write(tmp_path, "WZ.json", "whatif", z, "--precision", "fp32"))["by_zero"]
    assert want["3"]["comm_s"] == pytest.approx(0.04633428, rel=1e-6)
    for stage in "123":
        assert got[stage]["comm_s"] == pytest.approx(want[stage]["comm_s"], rel=1e-9)
    assert got["0"]["comm_s"] == pytest.approx(want["0"]["comm_s"], abs=121e-6)
    for stage in "0123":
        assert got[stage]["bytes"] == pytest.approx(want[stage]["bytes"], rel=1e-9)

