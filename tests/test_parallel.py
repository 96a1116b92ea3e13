"""Parallel step models against hand calculations (arithmetic in the comments)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rooflab.errors import InputError
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.comm_link import link_from_device, link_from_fit, link_from_roof
from rooflab.model.parallel import (
    Link,
    allreduce_link_bytes,
    comm_binds_at,
    dp_step,
    linear_layer,
    scale_dp,
)
from rooflab.workloads.llm.parallel import tp_decode_step

US = 1e-6
ROOF = Roof("toy", "nominal",
            compute=(Ceiling(1e14, precision="bf16", unit="tensor"),
                     Ceiling(6.5e13, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e12, level="DRAM"), Ceiling(5e10, level="NVLink")))


def fc():
    # t = k = n = 1024, 2-byte values:
    # FLOP 6 t k n = 6 x 1024^3 = 6_442_450_944
    # activations 3 x 2 x (t k + t n) = 12 x 1_048_576 = 12_582_912 B
    # weights 3 x 2 x k n = 6_291_456 B; gradients 2 x k n = 2_097_152 B
    return linear_layer("fc", 1024, 1024, 1024, dtype_bytes=2.0)


def test_linear_layer_counts():
    la = fc()
    assert la.flop == 6 * 1024**3 == 6_442_450_944
    assert la.act_bytes == 12_582_912 and la.weight_bytes == 6_291_456
    assert la.grad_bytes == 2_097_152 and la.bytes == 18_874_368


def test_ring_allreduce_time():
    link = Link("network", 10e9, 10 * US)
    # n = 4: latency 2 x 3 x 10 us = 60 us; bytes 2 x 3/4 x 2_097_152 = 3_145_728 B
    # -> 3_145_728 / 1e10 = 314.5728 us; total 374.5728 us
    assert allreduce_link_bytes(2_097_152, 4) == 3_145_728
    assert link.allreduce_s(2_097_152, 4) == pytest.approx(374.5728 * US)
    assert link.allreduce_s(2_097_152, 1) == 0.0


def test_dp_step_without_and_with_overlap():
    link = Link("network", 10e9, 10 * US)
    layers = [fc(), fc()]
    # per layer: compute 6.442e9 / 1e14 = 64.4245 us > memory 18.874e6 / 1e12 = 18.874 us
    # comm per layer (n = 4) 374.5728 us
    no = dp_step(layers, ROOF, link, 4, overlap=False)
    assert no.compute_s == pytest.approx(2 * 64.42450944 * US)
    assert no.comm_s == pytest.approx(2 * 374.5728 * US)
    # no overlap: 2 x (64.4245 + 374.5728) = 877.9946 us
    assert no.step_s == pytest.approx(877.99461888 * US)
    ov = dp_step(layers, ROOF, link, 4, overlap=True)
    # forward 1/3 of each floor: 2 x 21.4748 = 42.9497 us
    # backward layer 2 ends 42.9497 + 42.9497 = 85.8993 -> its all-reduce ends 460.4721
    # backward layer 1 ends 128.8490; link free at 460.4721 -> ends 835.0449 us
    assert ov.step_s == pytest.approx(835.04490 * US, rel=1e-6)
    assert ov.exposed_comm_s == pytest.approx((835.04490 - 128.84902) * US, rel=1e-6)
    assert ov.binding == no.binding == "network"
    # the communication point: AI over the link = FLOP / link bytes
    # 2 x 6.442e9 / (2 x 3_145_728) = 2048 FLOP/B
    assert ov.link_ai == pytest.approx(2048.0)
    k = ov.point()
    assert k.bytes["network"] == 2 * 3_145_728 and k.flop["bf16"] == 2 * 6_442_450_944
    assert any("ring all-reduce" in a for a in ov.assumptions)


def test_fast_link_leaves_compute_binding():
    step = dp_step([fc()], ROOF, Link("NVLink", 1e12), 8)
    # comm 2 x 7/8 x 2_097_152 / 1e12 = 3.67 us < compute 64.42 us
    assert step.binding == "bf16 tensor"
    one = dp_step([fc()], ROOF, None, 1)
    assert one.step_s == pytest.approx(64.42450944 * US) and one.link_bytes == 0
    with pytest.raises(InputError, match="no communication point"):
        one.point()
    with pytest.raises(InputError, match="need a link"):
        dp_step([fc()], ROOF, None, 2)


def test_links_from_fit_roof_device():
    # all-reduce fit at 2 ranks: alpha 40 us, beta 5 GB/s
    # bus bandwidth 5e9 x 2 x 1/2 = 5 GB/s; hop latency 40 us / (2 x 1) = 20 us
    link = link_from_fit("loopback", 40 * US, 5e9, 2)
    assert link.bus_bytes_per_s == pytest.approx(5e9)
    assert link.hop_latency_s == pytest.approx(20 * US)
    # the fit at its own rank count is reproduced: 1 MB -> 40 us + 1e6 / 5e9 = 240 us
    assert link.allreduce_s(1e6, 2) == pytest.approx(240 * US)
    # 8 ranks: 2 x 7 x 20 us + 2 x 7/8 x 1e6 / 5e9 = 280 + 350 = 630 us
    assert link.allreduce_s(1e6, 8) == pytest.approx(630 * US)
    assert link_from_roof(ROOF).level == "NVLink"
    with pytest.raises(InputError, match="no PCIe ceiling"):
        link_from_roof(ROOF, "PCIe")
    # NVLink 4 on H100: 900 GB/s both directions -> 450 GB/s per direction
    dev = SimpleNamespace(name="H100 SXM", interconnect="NVLink 4", interconnect_bytes_per_s=900e9)
    d = link_from_device(dev)
    assert d.level == "NVLink" and d.bus_bytes_per_s == 450e9


def test_scale_sweep_finds_where_the_link_binds():
    intra, inter = Link("NVLink", 100e9), Link("network", 10e9)
    pts = scale_dp([fc()], ROOF, intra, inter, gpus_per_node=8, counts=(1, 2, 8, 16, 1024))
    assert [p.n for p in pts] == [1, 2, 8, 16, 1024]
    assert pts[0].efficiency == 1.0 and pts[0].step.comm_s == 0
    # n = 8 on NVLink: 2 x 7/8 x 2_097_152 / 1e11 = 36.70 us < 64.42 us compute
    # one layer: its all-reduce starts after its backward -> step 64.4245 + 36.7002 us
    assert pts[2].step.step_s == pytest.approx((64.42450944 + 36.7001600) * US)
    assert pts[2].efficiency == pytest.approx(64.42450944 / 101.12466944)
    assert pts[2].step.binding == "bf16 tensor"
    # n = 16 crosses the network: 2 x 15/16 x 2_097_152 / 1e10 = 393.216 us > compute
    assert pts[3].step.comm_s == pytest.approx(393.216 * US)
    assert pts[3].step.binding == "network"
    assert comm_binds_at(pts) == 16
    assert pts[4].speedup == pytest.approx(1024 * pts[4].efficiency)


def test_tp_decode_uses_the_llm_all_reduces():
    from rooflab.workloads.llm import Settings, load_config

    cfg = load_config("tinyllama-1.1b")      # 22 layers, hidden 2048
    s = Settings()                           # fp16 activations: 2 B
    link = Link("PCIe", 10e9, 5 * US)
    step = tp_decode_step(cfg, s, ROOF, batch=1, context=512, tp=2, link=link)
    # 2 all-reduces per layer x 22 = 44; payload 1 x 2048 x 2 = 4096 B
    # each: 2 x 1 x 5 us + 2 x 1/2 x 4096 / 1e10 = 10.4096 us -> 44 x = 458.0224 us
    assert step.result.allreduces == 44 and step.result.allreduce_bytes == 4096
    assert step.result.comm_s == pytest.approx(458.0224 * US)
    # bytes over the link per device, the same account as the time (H1): 44 x 2 x 1/2 x
    # 4096 = 180,224 B of per-layer all-reduces + the embedding's one, 2 x 1/2 x 4096 =
    # 4096 B + 1/2 of the 1 x 32,000 x 2 = 64,000 B logits gather = 32,000 B:
    # 180,224 + 4096 + 32,000 = 216,320 B (was 180,224, the all-reduces alone)
    assert step.link_bytes == 216_320
    assert step.link_ai == pytest.approx(step.flop / 216_320)
    assert step.binding == "DRAM"            # batch-1 decode streams the weights
    slow = tp_decode_step(cfg, s, ROOF, batch=1, context=512, tp=2,
                          link=Link("PCIe", 1e6, 5 * US))
    # 44 x (4096 / 1e6 s + 10 us) = 44 x 4.106 ms = 180.7 ms: the link binds
    assert slow.result.comm_s == pytest.approx(44 * (4096 / 1e6 + 10 * US))
    assert slow.binding == "PCIe"
    assert slow.point().bytes == {"PCIe": 216_320}


def test_communication_point_lies_under_the_link_ceiling():
    from rooflab.report.chart import roofline_data

    link = Link("NVLink", 5e10)
    step = dp_step([fc(), fc()], ROOF, link, 4)
    data = roofline_data([ROOF], [step.point()], level="NVLink")
    (pt,) = [p for p in data.points if p.level == "NVLink"]
    # AI = 2 x 6_442_450_944 / (2 x 3_145_728) = 2048 FLOP/B on the NVLink ceiling;
    # attainable min(1e14, 5e10 x 2048 = 1.024e14) = 1e14: just right of the ridge (2000)
    assert pt.ai == pytest.approx(2048.0)
    assert any("NVLink" in line.label for line in data.lines)
