"""A platform engineer sizing a multi-GPU deployment from a measured link: the cluster
profile of `rooflab probe --comm` fed to `rooflab scale` (as --on and as --link-from),
checked by hand. The profiles are built from fake timings that follow t = alpha + S/beta
exactly, so the fit returns alpha and beta and every number below is arithmetic."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.cli.probe_comm import notes
from rooflab.errors import InputError
from rooflab.hardware.profile import MachineProfile, load_profile, profile_to_dict, save_profile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.link_fits import extrapolation_note, measured_links
from rooflab.model.parallel import link_from_profile
from rooflab.probe.comm.cluster import merge
from rooflab.probe.comm.collectives import CollectiveResult, SizeResult

SIZES = tuple(1024 * 4**i for i in range(9))          # 1 KiB .. 64 MiB, as --quick
FP32 = 100e9                                           # each rank's fp32 roof, FLOP/s


def rows(alpha: float, beta: float, spread: tuple[float, ...] = (1.0, 1.0, 1.0)):
    """One SizeResult per size with samples t x spread (t = alpha + S/beta)."""
    return tuple(SizeResult(s, 1, tuple((alpha + s / beta) * f for f in spread))
                 for s in SIZES)


def rank_record(rank: int, host: str) -> dict:
    roof = Roof(f"cpu{rank}", "measured",
                compute=(Ceiling(FP32, precision="fp32", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(20e9, level="DRAM", provenance="measured"),))
    prof = MachineProfile(host={"name": "cpu"}, measured=roof)
    return {"rank": rank, "hostname": host, "local_rank": rank, "device": "cpu",
            "profile": profile_to_dict(prof)}


def cluster(path, *, hosts=("vm", "vm"), ar=(600e-6, 1e9), p2p=(100e-6, 4e9),
            p2p_spread=(1.0, 1.0, 1.0)):
    """A cluster profile file: an all-reduce over every rank with the given (alpha, beta)
    and a send/recv 0->1 inside the first host."""
    n = len(hosts)
    multi = len(set(hosts)) > 1
    results = [CollectiveResult("all_reduce", n, rows(*ar)),
               CollectiveResult("send_recv", n, rows(*p2p, p2p_spread), pair=(0, 1),
                                link="intra-node")]
    levels = {"world": "network" if multi else "loopback", "intra-node": "loopback",
              "inter-node": "network"}
    prof = merge([rank_record(r, h) for r, h in enumerate(hosts)], results, backend="gloo",
                 backend_why="test", mode="quick", levels=levels, wall_s=1.0)
    save_profile(str(path), prof)
    return str(path)


# h = 1024, one block: 12 h^2 = 12,582,912 parameters, fp32 gradients 4 B each, in 4
# layers (4 all-reduces per step); 512 tokens: 6 x 512 x 12 h^2 FLOP on 100 GFLOP/s.
PARAMS = 12 * 1024**2
GRAD_BYTES = 4 * PARAMS                                # 50,331,648 B per step
COMPUTE_S = 6 * 512 * PARAMS / FP32                    # 0.38654705 s
ARGS = ["--hidden", "1024", "--blocks", "1", "--tokens", "512", "--dtype", "fp32",
        "--no-overlap", "--json"]


def scale_json(capsys, *args) -> dict:
    assert main(["scale", *args, *ARGS]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_cluster_profile_as_on_uses_its_measured_all_reduce(tmp_path, capsys):
    # `rooflab scale --on comm.json` took the roof's loopback ceiling (the best send/recv
    # sample, 3.98 GB/s here) with no latency, ignoring the all-reduce fit in the same file.
    path = cluster(tmp_path / "comm.json")
    best = SIZES[-1] / (100e-6 + SIZES[-1] / 4e9)          # 64 MiB send/recv: 3.98 GB/s
    assert load_profile(path).measured.find_memory("loopback").value == pytest.approx(best)
    doc = scale_json(capsys, "--on", path)
    intra = doc["links"]["intra"]
    # ring link from the fit at n0 = 2: bus = beta x 2(n0-1)/n0 = 1 GB/s,
    # hop = alpha / 2(n0-1) = 300 us
    assert intra["bus_bytes_per_s"] == pytest.approx(1e9, rel=1e-9)
    assert intra["hop_latency_s"] == pytest.approx(300e-6, rel=1e-9)
    assert "measured all-reduce fit over 2 ranks" in intra["source"]
    assert "--on" in intra["source"]
    pts = {p["gpus"]: p for p in doc["points"]}
    # n = 2: 4 all-reduces x 2(n-1) x 300 us + 2(n-1)/n x 50.33 MB / 1 GB/s
    comm2 = 4 * 2 * 300e-6 + GRAD_BYTES / 1e9          # 0.0527316 s
    assert pts[2]["comm_s"] == pytest.approx(comm2, rel=1e-9)
    assert pts[2]["compute_s"] == pytest.approx(COMPUTE_S, rel=1e-9)
    # no overlap: efficiency = compute / (compute + exposed comm)
    assert pts[2]["efficiency"] == pytest.approx(COMPUTE_S / (COMPUTE_S + comm2), rel=1e-9)
    assert pts[2]["exposed_comm_s"] == pytest.approx(comm2, rel=1e-9)
    # n = 4: 4 x 6 x 300 us + 1.5 x 50.33 MB / 1 GB/s = 7.2 ms + 75.5 ms
    assert pts[4]["comm_s"] == pytest.approx(4 * 6 * 300e-6 + 1.5 * GRAD_BYTES / 1e9,
                                             rel=1e-9)


def test_link_from_gives_the_same_link_as_on(tmp_path, capsys):
    path = cluster(tmp_path / "comm.json")
    on = scale_json(capsys, "--on", path)
    given = scale_json(capsys, "--on", path, "--link-from", path)
    assert on["points"] == given["points"]


def test_rows_past_the_measured_ranks_are_called_extrapolated(tmp_path, capsys):
    path = cluster(tmp_path / "comm.json")
    doc = scale_json(capsys, "--on", path)
    (note,) = [n for n in doc["notes"] if "extrapolate" in n]
    assert note.startswith("the links were measured over 2 ranks on 1 host (gloo); the rows "
                           "past 2 devices extrapolate them with the ring model (hop latency "
                           "300 us x 2(n-1), bus bandwidth 1 GB/s whatever n); past 8 "
                           "devices per node the ring crosses an inter-node link that was "
                           "not measured but assumed")
    # the table says it too
    assert main(["scale", "--on", path, *ARGS[:-1]]) == 0
    assert "note: the links were measured over 2 ranks" in " ".join(
        capsys.readouterr().out.split())


def test_no_extrapolation_note_within_the_measured_ranks(tmp_path):
    links = measured_links(load_profile(cluster(tmp_path / "c.json",
                                                hosts=("a",) * 4)).extras)
    assert extrapolation_note(links, 4, 8, False) is None
    assert extrapolation_note(links, 8, 8, False).startswith(
        "the links were measured over 4 ranks on 1 host")
    # an --inter-bw the user gave is not "assumed"
    assert "assumed" not in extrapolation_note(links, 16, 8, True)


def test_a_gloo_link_applied_to_gpus_is_said(tmp_path, capsys):
    path = cluster(tmp_path / "comm.json")
    doc = scale_json(capsys, "--on", "H100 SXM", "--link-from", path)
    assert any(n.startswith("the link was measured with gloo between CPU processes "
                            "(loopback), not between NVIDIA H100 SXM devices")
               for n in doc["notes"])
    assert doc["links"]["intra"]["bus_bytes_per_s"] == pytest.approx(1e9, rel=1e-9)


def test_a_profile_across_hosts_gives_the_measured_network(tmp_path, capsys):
    # 2 hosts x 2 ranks: the world all-reduce (alpha 1 ms, beta 2 GB/s over 4 ranks) ran
    # at the network's pace; the default inter-node link was an assumed 50 GB/s NIC, and
    # the network's fit was used as the link *inside* a node.
    path = cluster(tmp_path / "two.json", hosts=("a", "a", "b", "b"), ar=(1e-3, 2e9),
                   p2p=(20e-6, 10e9))
    doc = scale_json(capsys, "--on", path, "--per-node", "2")
    intra, inter = doc["links"]["intra"], doc["links"]["inter"]
    # inside a host: the send/recv fit, one send per ring step
    assert intra["bus_bytes_per_s"] == pytest.approx(10e9, rel=1e-9)
    assert intra["hop_latency_s"] == pytest.approx(20e-6, rel=1e-9)
    # between hosts: bus = 2 GB/s x 2(4-1)/4 = 3 GB/s, hop = 1 ms / 2(4-1)
    assert inter["level"] == "network"
    assert inter["bus_bytes_per_s"] == pytest.approx(3e9, rel=1e-9)
    assert inter["hop_latency_s"] == pytest.approx(1e-3 / 6, rel=1e-9)
    pts = {p["gpus"]: p for p in doc["points"]}
    assert pts[2]["comm_s"] == pytest.approx(4 * 2 * 20e-6 + GRAD_BYTES / 10e9, rel=1e-9)
    # 4 devices span 2 nodes: the flat ring runs at its slowest hop, the network
    assert pts[4]["link"] == "network"
    # 4 all-reduces x 2(4-1) hops x 1/6 ms + 2(4-1)/4 x 50.33 MB / 3 GB/s = 4 + 25.2 ms
    assert pts[4]["comm_s"] == pytest.approx(4 * 6 * 1e-3 / 6 + 1.5 * GRAD_BYTES / 3e9,
                                             rel=1e-9)
    assert not any("not measured but assumed" in n for n in doc["notes"])
    (note,) = [n for n in doc["notes"] if "extrapolate" in n]
    assert ("measured over 4 ranks on 2 hosts (gloo); the rows past 4 devices extrapolate "
            "them with the ring model (hop latency 20 us x 2(n-1), bus bandwidth 10 GB/s "
            "whatever n inside a node; between nodes 167 us and 3 GB/s)") in note
    # --inter-bw still overrides it
    given = scale_json(capsys, "--on", path, "--per-node", "2", "--inter-bw", "25GB/s")
    assert given["links"]["inter"]["bus_bytes_per_s"] == 25e9


@pytest.mark.parametrize("flag", ["--link-bw", "--inter-bw"])
def test_a_bare_small_number_is_a_unit_left_out(flag, capsys):
    # `--link-bw 450` was taken as 450 B/s: every all-reduce took days, without a word
    assert main(["scale", "--on", "H100 SXM", flag, "450"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {flag} 450 would be 450 bytes/s (a bare number is "
                          f"bytes/s), slower than any link; give the unit, e.g. {flag} "
                          f"450GB/s")
    assert "Traceback" not in err
    # bytes/s written out in full stay accepted
    doc = scale_json(capsys, "--on", "H100 SXM", flag, "4.5e11")
    key = "intra" if flag == "--link-bw" else "inter"
    assert doc["links"][key]["bus_bytes_per_s"] == 4.5e11


def test_link_from_a_compute_profile_says_what_it_is(tmp_path, capsys):
    prof = MachineProfile(host={"name": "cpu"}, measured=Roof(
        "cpu", "measured", compute=(Ceiling(FP32, precision="fp32", unit="vector"),),
        memory=(Ceiling(20e9, level="DRAM"),)))
    save_profile(str(tmp_path / "me.json"), prof)
    assert main(["scale", "--on", "H100 SXM", "--link-from", str(tmp_path / "me.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --link-from {tmp_path / 'me.json'}: not a cluster "
                          f"profile from `rooflab probe --comm`")
    assert "rooflab probe --comm --nproc 2 -o comm.json" in err and "--link-bw" in err
    # as --on it is a compute roof without a link: says how to get one
    assert main(["scale", "--on", str(tmp_path / "me.json")]) == 2
    err = capsys.readouterr().err
    assert "has no link ceiling" in err and "--link-from comm.json" in err


def test_a_cluster_profile_without_an_all_reduce_fit_is_not_called_a_compute_one(tmp_path):
    path = cluster(tmp_path / "comm.json")
    raw = json.loads(open(path).read())
    for c in raw["extras"]["comm"]["collectives"]:
        c["fit"] = None
    with pytest.raises(InputError) as e:
        link_from_profile(raw["extras"], where="--link-from c.json")
    assert str(e.value).startswith("--link-from c.json: the cluster profile's all-reduce "
                                   "has no alpha/beta fit")


def test_probe_notes_say_when_link_samples_vary(tmp_path):
    # docs/comm.md promises `note: loopback bandwidth: samples vary (...)` under the table;
    # the warning was stored in the profile but never printed.
    path = cluster(tmp_path / "comm.json", p2p_spread=(1.0, 1.3, 1.6, 1.1, 1.45))
    text = notes(load_profile(path))
    # the median of the spread (x1.3 of the best time): 3.98 / 1.3 = 3.06 GB/s (review r3 F3)
    assert text[0].startswith("loopback ceiling: 3.06 GB/s (send/recv 0->1 over 2 ranks")
    assert text[1].startswith("loopback bandwidth: samples vary (interquartile range")
    steady = notes(load_profile(cluster(tmp_path / "steady.json")))
    assert not any("samples vary" in n for n in steady)


def test_an_analysis_file_as_on_still_serves_its_roof(tmp_path, capsys):
    # --on is read for a comm block first; a file that is no profile at all (an analysis
    # JSON with a roof) must still reach load_roof, not fail as "not a rooflab profile"
    assert main(["ai", "matmul", "64", "64", "64", "--on", "T4", "--json"]) == 0
    path = tmp_path / "ai.json"
    path.write_text(capsys.readouterr().out)
    doc = scale_json(capsys, "--on", str(path), "--link-bw", "100GB/s")
    assert doc["device"] == "NVIDIA T4" and doc["links"]["intra"]["bus_bytes_per_s"] == 100e9
    assert not any("measured" in n for n in doc["notes"])


def test_a_given_link_on_a_cluster_profile_keeps_the_measured_level(tmp_path, capsys):
    # `--on comm.json --link-bw 10GB/s` on a gloo cluster was labelled NVLink ("binds:
    # NVLink" on two CPU processes)
    path = cluster(tmp_path / "comm.json")
    doc = scale_json(capsys, "--on", path, "--link-bw", "10GB/s")
    assert doc["links"]["intra"]["level"] == "loopback"
    assert doc["links"]["intra"]["bus_bytes_per_s"] == 10e9
    assert doc["notes"] == []          # a given link: nothing measured to extrapolate
