"""Session 38 H: `rooflab train --dp 4 --on comm.json -o FILE` on a cluster profile gives
the ring row its own ceiling, so `whatif FILE` re-times it on the link train timed it on.

Hand figures: comm.json (test_scale_measured_link.cluster) fits its all-reduce at alpha
600 us over 2 ranks, beta 1 GB/s: a ring link of 1 GB/s and 600 us / 2(2-1) = 300 us a hop;
its roof's `loopback` ceiling is the best send/recv, 3.98 GB/s. tinyllama-1.1b --dp 4
(DDP) sends 2 x 3/4 x 2.2 GB = 3.3 GB per device; 46 all-reduce launches of 6 hops:
3.3 GB / 1 GB/s + 46 x 6 x 300 us = 3.30 + 0.083 = 3.38 s whole. Old code: the row's bytes
on the roof's one `loopback` ceiling, so `whatif FILE --bytes-scale 1` timed them at 3.98
GB/s: 3.3 GB / 3.98 GB/s = 830 ms + 83 ms of hops = 913 ms whole, 58.4 ms exposed, where
train printed 3.38 s and 227 ms.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from cli_inproc import run_cli
from test_scale_measured_link import cluster

from rooflab.cli.main import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("h38")
    prof = cluster(tmp / "comm.json", ar=(600e-6, 1e9), p2p=(100e-6, 4e9))
    out = {"prof": prof}
    for key, args in {"dp": ["--dp", "4"], "tp": ["--dp", "2", "--tp", "2"]}.items():
        out[key] = tmp / f"{key}.json"
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            assert main(["train", "tinyllama-1.1b", *args, "--on", prof,
                         "-o", str(out[key])]) == 0
    return out


def _row(path, name: str = "comm.allreduce") -> tuple[dict, dict]:
    doc = json.loads(path.read_text())
    k = next(k for k in doc["kernels"] if k["name"] == name)
    return k, {m["level"]: m["bytes_per_s"] for m in doc["roof"]["memory"]}


def test_the_ring_row_has_its_own_ceiling(files):
    """The row's bytes on `loopback (--dp ring)` at 1 GB/s; the profile's 3.98 GB/s
    `loopback` ceiling stays for what the profile measured."""
    k, ceilings = _row(files["dp"])
    assert list(k["bytes"]) == ["loopback (--dp ring)"]
    assert ceilings["loopback (--dp ring)"] == pytest.approx(1e9, rel=1e-9)
    assert ceilings["loopback"] == pytest.approx(3.98e9, rel=1e-3)
    sent = k["bytes"]["loopback (--dp ring)"]
    launches = k["meta"]["collectives"][0]["launches_each"]
    assert k["meta"]["comm_s"] == pytest.approx(sent / 1e9 + launches * 6 * 300e-6, rel=1e-9)
    assert k["meta"]["comm_s"] == pytest.approx(3.383, abs=1e-3)


def test_whatif_of_the_file_says_trains_figures(files):
    """`whatif FILE --bytes-scale 1`: whole 3.38 s, exposed 227 ms, train's (old: 913 ms
    whole, 58.4 ms exposed, at the 3.98 GB/s ceiling)."""
    k, _ = _row(files["dp"])
    done = run_cli("whatif", str(files["dp"]), "--bytes-scale", "1", "--json")
    assert done.returncode == 0, done.stderr
    (move,) = [m for m in json.loads(done.stdout)["moves"] if "before_exposed_s" in m]
    assert move["before_exposed_s"] == pytest.approx(k["meta"]["exposed_s"], rel=1e-9)
    assert move["before_exposed_s"] == pytest.approx(0.227, abs=1e-3)
    text = run_cli("whatif", str(files["dp"]), "--bytes-scale", "1").stdout
    assert "comm.allreduce: 227 ms -> 227 ms of its whole 3.38 s -> 3.38 s" in text


def test_the_tp_group_has_its_own_ceiling_too(files):
    """--dp 2 --tp 2 on the profile: the --tp group's link, the same 1 GB/s fit, is
    `loopback (--tp group)` and the ring's `loopback (--dp ring)`, each at 1 GB/s (old:
    both rows on the 3.98 GB/s `loopback`)."""
    _, ceilings = _row(files["tp"])
    tp, _ = _row(files["tp"], "comm.tp")
    assert list(tp["bytes"]) == ["loopback (--tp group)"]
    assert ceilings["loopback (--tp group)"] == pytest.approx(1e9, rel=1e-9)
    assert ceilings["loopback (--dp ring)"] == pytest.approx(1e9, rel=1e-9)


def test_whatif_keeps_the_tp_rows_hops(files):
    """The --tp row pays 2(2-1) = 2 hops of 300 us per all-reduce: 755 MB / 1 GB/s + 93 x
    2 x 300 us = 755 + 55.8 = 811 ms, train's; whatif read 755 ms (the hops scaled with
    the bandwidth, none kept apart), 190 ms at the 3.98 GB/s ceiling before that."""
    k, _ = _row(files["tp"], "comm.tp")
    calls = sum(c["calls"] for c in k["meta"]["collectives"])
    assert all(c["latency_s_each"] == pytest.approx(600e-6, rel=1e-9)
               for c in k["meta"]["collectives"])
    assert k["meta"]["comm_s"] == pytest.approx(
        k["bytes"]["loopback (--tp group)"] / 1e9 + calls * 600e-6, rel=1e-9)
    done = run_cli("whatif", str(files["tp"]), "--bytes-scale", "1", "--json")
    assert done.returncode == 0, done.stderr
    moves = {m["kernel"]: m for m in json.loads(done.stdout)["moves"]
             if "before_exposed_s" in m}
    assert moves["comm.tp"]["before_exposed_s"] == pytest.approx(k["meta"]["comm_s"],
                                                                 rel=1e-9)
    assert moves["comm.tp"]["before_exposed_s"] == pytest.approx(0.811, abs=1e-3)


def test_tp_hops_are_kept_under_a_precision_change(tmp_path):
    """llama-2-7b --tp 2 --hop-latency-us 10 on H100: 133 all-reduces, each 2(2-1) = 2 hops
    of 10 us, 2.66 ms of train's 12.4 ms. whatif --bytes-scale 1 keeps them (old: 9.69 ms,
    the hops scaled with the bandwidth); --precision fp32 doubles the activations' 9.66 ms
    and keeps the hops: train --dtype fp32's 22.0 ms (old: 19.4 ms)."""
    base = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096",
            "--tp", "2", "--hop-latency-us", "10"]
    paths = {d: tmp_path / f"{d}.json" for d in ("bf16", "fp32")}
    for dtype, path in paths.items():
        done = run_cli(*base, "--dtype", dtype, "-o", str(path))
        assert done.returncode == 0, done.stderr
    want = {d: _row(p, "comm.tp")[0]["meta"]["comm_s"] for d, p in paths.items()}
    calls = sum(c["calls"] for c in _row(paths["bf16"], "comm.tp")[0]["meta"]["collectives"])
    assert calls == 133
    for args, key in ((["--bytes-scale", "1"], "bf16"), (["--precision", "fp32"], "fp32")):
        done = run_cli("whatif", str(paths["bf16"]), *args, "--json")
        assert done.returncode == 0, done.stderr
        (move,) = [m for m in json.loads(done.stdout)["moves"] if m["kernel"] == "comm.tp"]
        assert move["after_exposed_s"] == pytest.approx(want[key], rel=1e-6), key
    assert want["bf16"] * 1e3 == pytest.approx(12.35, abs=0.01)
    assert want["fp32"] * 1e3 == pytest.approx(22.0, abs=0.05)
