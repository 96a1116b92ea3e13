"""Session 38 C: `whatif` on a `rooflab train --dp` file says the communication row's whole
time as `rooflab train` does, its ring hops included, on the link train picks.

Hand figures: tinyllama-1.1b --dp 4 (DDP), each device sends 2 x 3/4 of its bf16
gradients; comm.json is a cluster profile (test_scale_measured_link.cluster) whose
all-reduce fit (alpha 600 us over 2 ranks, beta 1 GB/s) makes a ring link of 1 GB/s bus
and 600 us / 2(2-1) = 300 us a hop, while its roof's loopback ceiling is the best
send/recv, 3.98 GB/s. An all-reduce launch over 4 pays 2(4-1) = 6 hops, so the row's whole
time is sent / 1e9 + launches x 6 x 300 us (train: 3.3 GB / 1 GB/s + 46 x 1.8 ms = 3.38
s). Old code: the roof's 3.98 GB/s ceiling (830 ms), and the whole time without the hops
(3.3 s; 44.9 ms where train says 58.5 ms for llama-2-7b on H100 with 10 us hops).
"""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
from cli_inproc import run_cli
from test_scale_measured_link import cluster

from rooflab.cli.main import main

STEP = ["tinyllama-1.1b", "--dp", "4"]


def _comm(path) -> dict:
    doc = json.loads(path.read_text())
    doc = doc.get("after", doc)
    return next(k["meta"] for k in doc["kernels"] if k["meta"].get("train_part") == "comm")


def _quiet(*args) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(list(args)) == 0


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("c38")
    prof = cluster(tmp / "comm.json", ar=(600e-6, 1e9), p2p=(100e-6, 4e9))
    out = {"prof": prof}
    for key, args in {"t": ["--on", "H100 SXM"], "train": ["--on", prof],
                      "hop": ["--on", "H100 SXM", "--hop-latency-us", "10"]}.items():
        out[key] = tmp / f"{key}.json"
        _quiet("train", *STEP, *args, "-o", str(out[key]))
    return out


def _whole_line(stdout: str) -> tuple[str, str]:
    (line,) = [x for x in stdout.splitlines() if x.startswith("comm.allreduce: ")]
    m = re.search(r"of its whole (\S+ \S+) -> (\S+ \S+)$", line)
    return m[1], m[2]


def _hand_whole(meta: dict, bus: float, hop: float) -> float:
    """sent / bus + each all-reduce launch's 6 hops."""
    (c,) = meta["collectives"]
    return c["sent_bytes_each"] / bus + c["launches_each"] * 6 * hop


def test_hardware_onto_a_cluster_profile_is_trains_row(files):
    want = _comm(files["train"])
    assert want["comm_s"] == pytest.approx(_hand_whole(want, 1e9, 300e-6), rel=1e-9)
    assert want["comm_s"] == pytest.approx(3.383, abs=1e-3)
    w = files["t"].with_name("w.json")
    done = run_cli("whatif", str(files["t"]), "--hardware", files["prof"], "-o", str(w))
    assert done.returncode == 0, done.stderr
    got = _comm(w)
    assert got["comm_s"] == pytest.approx(want["comm_s"], rel=1e-9)
    assert got["exposed_s"] == pytest.approx(want["exposed_s"], rel=1e-9)
    # the text: whole 3.38 s (old: 830 ms, 3.3 GB at the send/recv ceiling, no hops)
    assert _whole_line(done.stdout)[1] == "3.38 s"
    assert "3.38 s" in next(x for x in done.stdout.splitlines() if "comm.allreduce (" in x)


def test_on_a_cluster_profile_pays_its_hops(files):
    """`--on comm.json`: the H100 file's row on that link, as train --on it (old: the
    file's no hops, 3.3 s whole)."""
    want = _comm(files["train"])
    done = run_cli("whatif", str(files["t"]), "--on", files["prof"], "--bytes-scale", "1",
                   "--json")
    assert done.returncode == 0, done.stderr
    (move,) = [m for m in json.loads(done.stdout)["moves"] if "before_exposed_s" in m]
    assert move["before_exposed_s"] == pytest.approx(want["exposed_s"], rel=1e-9)


def test_the_whole_time_counts_the_files_own_hops(files):
    """An H100 file of --hop-latency-us 10 on its own link: whole = 2 x 3/4 x 2.2 GB /
    450 GB/s + launches x 6 x 10 us, train's comm_s (old: the bandwidth part alone)."""
    meta = _comm(files["hop"])
    assert meta["comm_s"] == pytest.approx(_hand_whole(meta, 450e9, 10e-6), rel=1e-9)
    done = run_cli("whatif", str(files["hop"]), "--bytes-scale", "1")
    assert done.returncode == 0, done.stderr
    from rooflab.units import fmt_seconds

    assert _whole_line(done.stdout) == (fmt_seconds(meta["comm_s"]),) * 2


def test_a_file_without_hop_rounds_prices_what_it_can_and_says_the_rest(files, tmp_path):
    """A --zero 1 file with no by_zero hop_rounds (before s37 B) and no hop latency: ZeRO-1's
    rounds come from its collectives, ZeRO-2's too (the same DeepSpeed buckets), each
    x (4-1) x 300 us; DDP's and ZeRO-3's cannot be, and a note says so. Old: ZeRO-2 kept
    its bandwidth time alone, and nothing was said."""
    z1, old, w = tmp_path / "z1.json", tmp_path / "old.json", tmp_path / "w.json"
    _quiet("train", *STEP, "--zero", "1", "--on", "H100 SXM", "-o", str(z1))
    doc = json.loads(z1.read_text())
    for k in doc["kernels"]:
        for v in k["meta"].get("by_zero", {}).values():
            v.pop("hop_rounds")
    old.write_text(json.dumps(doc))
    done = run_cli("whatif", str(old), "--hardware", files["prof"], "-o", str(w))
    assert done.returncode == 0, done.stderr
    meta, stages = _comm(z1), _comm(w)["by_zero"]
    rounds = sum(c["launches_each"] for c in meta["collectives"])    # reduce-scatter + gather
    sent2 = meta["by_zero"]["2"]["bytes"]
    assert stages["2"]["comm_s"] == pytest.approx(sent2 / 1e9 + rounds * 3 * 300e-6, rel=1e-9)
    assert stages["3"]["comm_s"] == pytest.approx(meta["by_zero"]["3"]["bytes"] / 1e9,
                                                  rel=1e-9)
    assert ("note: comm.zero1: the file's by_zero gives no hop_rounds (a file from before "
            "session 37) and it had no hop latency to scale, so its DDP, ZeRO-3 times") \
        in " ".join(done.stdout.split())
