"""Review r3_comm: fit quality shown and carried (F1), the link ceiling from medians (F3),
at least 3 calls per sample (F4), both per-hop readings compared (F7)."""

from types import SimpleNamespace

from rooflab.cli.probe_comm import notes, summary_rows
from rooflab.model.link_fits import link_from_p2p, link_from_profile
from rooflab.probe.comm import collectives
from rooflab.probe.comm.cluster import link_ceilings
from rooflab.probe.comm.collectives import CollectiveResult, SizeResult, get_plan, sweep

MiB = 1 << 20


def _entry(collective, alpha_s, beta, resid, ranks=2, pair=None, link=""):
    # beta (bus) at 2 ranks: all-reduce x 2(2-1)/2 = x 1, send/recv x 1
    return {"collective": collective, "label": collective.replace("_", "-"), "ranks": ranks,
            "pair": pair, "link": link, "stopped": "",
            "fit": {"alpha_s": alpha_s, "beta_bytes_per_s": beta,
                    "beta_bus_bytes_per_s": beta, "max_rel_residual": resid},
            "rows": [{"bytes": 1024, "busbw_bytes_per_s": 1e6},
                     {"bytes": 16 * MiB, "busbw_bytes_per_s": 0.9e9}]}


def _extras(*entries):
    return {"comm": {"collectives": list(entries), "levels": {"world": "loopback"},
                     "world_size": 2, "backend": "gloo", "mode": "quick"}}


# the reviewer's comm2.json (review r3 F1/F7): all-reduce alpha 424.3 us, beta 0.962 GB/s,
# worst residual 0.49; send/recv 0->1 alpha 296.6 us, beta 1.30 GB/s, worst residual 0.67
AR = _entry("all_reduce", 424.3e-6, 0.962e9, 0.49)
P2P = _entry("send_recv", 296.6e-6, 1.30e9, 0.67, pair=[0, 1], link="intra-node")


def test_probe_table_has_resid_column_flagged_past_25_percent():
    good = _entry("all_gather", 100e-6, 1e9, 0.10)
    prof = SimpleNamespace(extras=_extras(AR, good),
                           measured=SimpleNamespace(memory=(), compute=(), notes=()))
    rows = summary_rows(prof)
    assert rows[0][4] == "49 % !"     # 0.49 > 0.25
    assert rows[1][4] == "10 %"       # 0.10 <= 0.25: no flag
    said = " ".join(notes(prof))
    assert "all-reduce 49 %" in said and "all-gather" not in said


def test_fit_doubt_carried_to_the_links_that_use_it():
    link = link_from_profile(_extras(AR))
    assert "! the fit misses its own samples by up to 49 %" in link.source
    p2p = link_from_p2p(P2P, "loopback")
    assert "up to 67 %" in p2p.source
    # a fit within 25 % of its samples says nothing
    quiet = link_from_profile(_extras(_entry("all_reduce", 424.3e-6, 0.962e9, 0.2)))
    assert "misses" not in quiet.source


def test_both_hop_readings_printed_and_flagged_past_1_5x():
    # comm2.json: 424.3 us / 2(2-1) = 212.15 us per hop vs 296.6 us: ratio 1.40, no flag
    link = link_from_profile(_extras(AR, P2P))
    assert abs(link.hop_latency_s - 212.15e-6) < 1e-9
    assert "per hop 212 us from the all-reduce" in link.source
    assert "297 us from send/recv" in link.source
    assert "differ by more than" not in link.source
    # docs/comm.md's quick run: 779 us / 2 = 389.5 us vs 142 us: ratio 2.74 > 1.5, flagged
    far = link_from_profile(_extras(_entry("all_reduce", 779e-6, 1.2e9, 0.1),
                                    _entry("send_recv", 142e-6, 5e9, 0.1, pair=[0, 1],
                                           link="intra-node")))
    assert "390 us from the all-reduce" in far.source and "142 us from send/recv" in far.source
    assert "! they differ by more than 1.5x" in far.source


def test_link_ceiling_is_highest_median_not_best_sample():
    # 16 MiB: samples 5.1, 10.2, 23.6 ms -> median 10.2 ms = 1.645 GB/s, best 3.29 GB/s
    # 4 MiB: samples 2.0, 2.1, 2.2 ms -> median 2.1 ms = 1.997 GB/s (the highest median)
    big = SizeResult(16 * MiB, 3, (5.1e-3, 10.2e-3, 23.6e-3))
    mid = SizeResult(4 * MiB, 3, (2.0e-3, 2.1e-3, 2.2e-3))
    res = CollectiveResult("send_recv", 2, (mid, big), pair=(0, 1), link="intra-node")
    (ceil,) = link_ceilings([res], {"intra-node": "loopback", "world": "loopback"})
    assert abs(ceil.value - 4 * MiB / 2.1e-3) < 1.0          # 1.997e9 B/s
    assert "highest median" in ceil.method
    assert "best single sample 3.29 GB/s" in ceil.method     # 16 MiB / 5.1 ms


class _FakeComm:
    """A comm whose clock advances by what each fake call costs: size / 1 GB/s."""

    world = 2

    def __init__(self):
        self.t = 0.0

    def clock(self):
        return self.t

    def barrier(self):
        pass

    def sync(self):
        pass

    def agree_max(self, values):
        return list(values)


def test_quick_mode_times_at_least_three_calls_per_sample(monkeypatch):
    comm = _FakeComm()

    def fake_op(c, collective, size, pair=None):
        def op():
            c.t += size / 1e9
        return op, size
    monkeypatch.setattr(collectives, "make_op", fake_op)
    plan = get_plan("quick")
    assert plan.min_iters >= 3
    res = sweep(comm, "all_reduce", plan)
    # 64 MiB at 1 GB/s = 67 ms a call, above sample_s 10 ms: 1 call before, 3 now
    big = [r for r in res.rows if r.nbytes >= 16 * MiB]
    assert big and all(r.iters >= 3 for r in big)


def test_hop_latency_weight_of_a_tp_step_by_hand():
    from rooflab.model.comm_link import Link
    from rooflab.workloads.llm.parallel import TPResult

    # llama-3-70b --tp 8 --batch 64: 160 per-layer all-reduces + the embedding's, 14 hops
    # each, + a logits gather of 7 hops: 161 x 14 + 7 = 2261 hops, x 1 us = 2.261 ms
    tpr = TPResult(8, 6.15e-3, 64 * 8192 * 2, 160, Link("NVLink", 450e9),
                   gather_bytes=64 * 128256 * 2, embedding_bytes=64 * 8192 * 2)
    assert abs(tpr.hop_latency_step_s() - 2261e-6) < 1e-12


def test_tp_line_shows_what_the_bandwidth_only_floor_leaves_out(capsys):
    from rooflab.cli.main import main

    base = ["llm", "llama-3-70b", "--on", "H100", "--tp", "8", "--batch", "64"]
    assert main(base) == 0
    out = capsys.readouterr().out
    # 6.84 ms bandwidth-only (the review's hand check) + 2.26 ms at 1 us per hop = 9.1 ms
    assert "TPOT floor 6.84 ms (bandwidth only; at 1 us per hop: +2.26 ms -> 9.1 ms" in out
    assert main(base + ["--hop-latency-us", "1"]) == 0
    out = capsys.readouterr().out
    assert "-> TPOT floor 9.1 ms" in out and "bandwidth only" not in out


def test_the_json_carries_the_tpot_at_1us_per_hop(capsys):
    import json

    from rooflab.cli.main import main

    base = ["llm", "llama-3-70b", "--on", "H100", "--tp", "8", "--batch", "64", "--json"]
    assert main(base) == 0
    par = json.loads(capsys.readouterr().out)["llm"]["parallel"]
    # the bandwidth-only floor + 2261 hops x 1 us, = what --hop-latency-us 1 computes
    assert abs(par["tpot_s_at_1us_per_hop"] - par["tpot_s"] - 2261e-6) < 1e-12
    assert main(base + ["--hop-latency-us", "1"]) == 0
    with_hops = json.loads(capsys.readouterr().out)["llm"]["parallel"]["tpot_s"]
    assert abs(with_hops - par["tpot_s_at_1us_per_hop"]) < 1e-12


def test_gh200_tp_link_is_the_gpu_nvlink_not_c2c():
    from rooflab.hardware.catalog import lookup
    from rooflab.model.comm_link import link_from_device

    for name in ("GH200", "GH200 144GB"):
        dev = lookup(name)
        link = link_from_device(dev)
        # NVLink 4: 900 GB/s both directions / 2 = 450 GB/s per direction
        assert link.bus_bytes_per_s == 450e9
        assert "C2C" not in link.source and "GPU-GPU" in link.source
        assert any("--link-bw 50GB/s" in n for n in dev.notes)


def test_choose_on_a_tp_document_adds_each_devices_link(tmp_path, capsys):
    import json

    from rooflab.cli.main import main

    assert main(["llm", "llama-3-70b", "--on", "H100", "--tp", "8", "--batch", "64",
                 "--json"]) == 0
    doc = tmp_path / "d70.json"
    doc.write_text(capsys.readouterr().out)
    assert main(["choose", str(doc), "--among", "H100,A100", "--json"]) == 0
    rows = {d["name"]: d for d in json.loads(capsys.readouterr().out)["devices"]}
    # H100, 450 GB/s: 161 all-reduces x 2 x 7/8 x 1,048,576 B / 450e9 = 656.5 us, + the
    # gather 7/8 x 64 x 128256 x 2 B / 450e9 = 31.9 us: 688.4 us (as `rooflab llm` adds)
    h100 = rows["NVIDIA H100 SXM"]
    assert abs(h100["tp_link_s"] - (161 * 1835008 + 14364672) / 450e9) < 1e-9
    # A100 80GB SXM, NVLink 3 600 / 2 = 300 GB/s: the same bytes, 1.5x the time
    a100 = rows["NVIDIA A100 80GB SXM"]
    assert abs(a100["tp_link_s"] - (161 * 1835008 + 14364672) / 300e9) < 1e-9
    assert h100["tp_tpot_floor_s"] == h100["seconds"] + h100["tp_link_s"]
    assert main(["choose", str(doc), "--among", "H100"]) == 0
    out = capsys.readouterr().out
    # the same TPOT floor `rooflab llm --on H100 --tp 8 --batch 64` prints
    assert "NVIDIA H100 SXM: + 688 us on 450 GB/s: TPOT floor 6.84 ms" in out
