"""whatif -o W.json on a `rooflab train --dp` file writes the communication row's own fields
as `rooflab train` writes them with the changed setting (s36 R): after --precision the row's
exposed_s (the move's after_exposed_s was right, the row kept the file's), after --hardware
its comm_s, by_zero and each collective's seconds_each on the target's link (they kept the
H100's NVLink), and grad_bytes an int as train writes it. tinyllama-1.1b, --dp 4, --batch 2
--seq 1024 (bf16, 1.100 G params: 2 x 3/4 x 2.200 GB = 3.300 GB all-reduced a step)."""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

BASE = ("tinyllama-1.1b", "--batch", "2", "--seq", "1024", "--dp", "4")


def _write(tmp, name: str, *args: str) -> str:
    path = str(tmp / name)
    done = run_cli(*args, "-o", path, "-q")
    assert done.returncode == 0, done.stderr
    return path


def _doc(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _comm(path: str) -> dict:
    doc = _doc(path)
    doc = doc.get("after", doc)     # a whatif -o .json holds the after state under after
    return next(k for k in doc["kernels"] if k["name"].startswith("comm"))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("r36")
    t = _write(tmp, "T.json", "train", *BASE, "--on", "H100")
    return {"T": t,
            "T32": _write(tmp, "T32.json", "train", *BASE, "--on", "H100", "--dtype", "fp32"),
            "W32": _write(tmp, "W32.json", "whatif", t, "--precision", "fp32"),
            "TM": _write(tmp, "TM.json", "train", *BASE, "--on", "MI300X"),
            "WM": _write(tmp, "WM.json", "whatif", t, "--hardware", "MI300X")}


def test_precision_row_exposed_is_trains(files):
    """bf16 -> fp32 doubles the all-reduce (6.600 GB, 14.67 ms on 450 GB/s NVLink); the
    step's fp32 backward hides less of it: train --dtype fp32 writes 1.000 ms exposed, the
    embedding's 262.1 MB bucket, 2 x 3/4 x 262,144,000 / 450e9 = 0.8738 ms, after layer
    0's o, v, k and q (16.8 + 2.1 + 2.1 + 16.8 = 37.75 MB, one bucket), ready at the
    backward's end (s38 B): 13.794 ms x 37,748,736 / 4,138,049,536 B = 0.1258 ms (1.03 ms
    with an equal share, s37 B; 0.961 ms before s37 B counted DDP's buckets tensor by
    tensor, 90 of them). The
    row's exposed_s (and exposed_overlap_s, the same under overlap) must say it, as the
    move's after_exposed_s does (old code: the file's 0.524 ms)."""
    got, want = _comm(files["W32"])["meta"], _comm(files["T32"])["meta"]
    assert want["exposed_s"] == pytest.approx(0.8738e-3 + 0.1258e-3, rel=1e-3)
    assert got["exposed_s"] == pytest.approx(want["exposed_s"], rel=1e-9)
    assert got["exposed_overlap_s"] == pytest.approx(want["exposed_overlap_s"], rel=1e-9)
    move = next(m for m in _doc(files["W32"])["moves"] if m["kernel"].startswith("comm"))
    assert move["after_exposed_s"] == pytest.approx(got["exposed_s"], rel=1e-12)


def test_grad_bytes_is_an_int(files):
    """train writes grad_bytes 4 (an int) under fp32 on the comm row and every dW row;
    whatif --precision fp32 wrote 4.0 (a script comparing the two files saw the type
    differ)."""
    assert _comm(files["T32"])["meta"]["grad_bytes"] == 4
    doc = _doc(files["W32"])["after"]
    widths = [k["meta"]["grad_bytes"] for k in doc["kernels"] if "grad_bytes" in k["meta"]]
    assert len(widths) > 5
    assert all(type(w) is int and w == 4 for w in widths), widths


def test_hardware_retimes_the_row_on_the_target_link(files):
    """H100 -> MI300X: the 3.300 GB all-reduce on MI300X's ring bus (train --on MI300X:
    17.19 ms, 3.300 GB / 192 GB/s) in place of NVLink's 7.33 ms (3.300 GB / 450 GB/s),
    in comm_s, each collective's seconds_each and the last bucket's, every ZeRO stage of
    by_zero (stage 3: 4.754 GB, 24.76 ms) and exposed_s, 9.78 ms: the link is slower
    than the 7.907 ms backward, so the queue runs from the first bucket, lm_head's 131.1
    MB, ready after its bytes' share of it (s38 B), 7.907 x 131.1 / 2069 = 0.501 ms, to
    17.188 + 0.501 - 7.907 = 9.782 ms (9.46 ms with an equal share, s37 B; 9.38 before
    s37 B's tensor-by-tensor buckets), so a `report` of
    W.json prices ZeRO on the right link (old code: 7.33 ms, 10.56 ms, 0.524 ms)."""
    got, want = _comm(files["WM"])["meta"], _comm(files["TM"])["meta"]
    assert want["comm_s"] == pytest.approx(17.188e-3, rel=1e-3)
    assert got["comm_s"] == pytest.approx(want["comm_s"], rel=1e-9)
    for stage in "0123":
        for key in ("bytes", "comm_s"):
            assert got["by_zero"][stage][key] == pytest.approx(want["by_zero"][stage][key],
                                                               rel=1e-9)
    for c, w in zip(got["collectives"], want["collectives"], strict=True):
        for key in ("seconds_each", "last_bucket_s_each", "sent_bytes_each"):
            assert c[key] == pytest.approx(w[key], rel=1e-9)
    assert got["exposed_s"] == pytest.approx(want["exposed_s"], rel=1e-9)
    assert want["exposed_s"] == pytest.approx(9.782e-3, rel=1e-3)
    # train's note on the row says the new times: 17.2 ms whole, 9.78 ms exposed
    assert "17.2 ms" in got["note"] and "9.78 ms" in got["note"]
    assert "7.33 ms" not in got["note"]


def test_hardware_drops_the_files_hop_latency_in_every_stage(tmp_path):
    """An H100 --zero 3 --hop-latency-us 10 file onto MI300X: the link's hop latency (0,
    as train --on MI300X counts) in every stage of by_zero, not only the row's own (old
    code: stage 3's 4.754 GB at 450 GB/s plus the file's hops; stage 0 the same)."""
    t = _write(tmp_path, "T.json", "train", *BASE, "--on", "H100", "--zero", "3",
               "--hop-latency-us", "10")
    w = _write(tmp_path, "W.json", "whatif", t, "--hardware", "MI300X")
    want = _comm(_write(tmp_path, "TM.json", "train", *BASE, "--on", "MI300X", "--zero",
                        "3"))["meta"]
    got = _comm(w)["meta"]
    for stage in "0123":
        assert got["by_zero"][stage]["comm_s"] == pytest.approx(
            want["by_zero"][stage]["comm_s"], rel=1e-9)
    assert got["comm_s"] == pytest.approx(want["comm_s"], rel=1e-9)
