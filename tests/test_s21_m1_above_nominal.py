"""Review s21 r3 F4 (rest): a point above a datasheet (nominal) DRAM roof is cache reuse or
miscounted bytes, never "the measured DRAM roof is too low (a loaded probe)": nothing was
measured. Hand numbers: stencil_above, 2 GFLOP fp32 and 1 GB of DRAM bytes in 200 us =
5 TB/s, 5e12 / 2.039e12 = 2.45x the A100's datasheet DRAM bandwidth. On a measured roof
(a probe's 2.039 TB/s) the loaded-probe cause stays.
"""

from __future__ import annotations

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.sanity_counts import check_ai_low
from rooflab.report.read_with_care import trust_warnings

STENCIL = Kernel("stencil_above", {"fp32": 2e9}, {"DRAM": 1e9}, seconds=2e-4,
                 meta={"op": "stencil"})
PROBE = "loaded probe"


def _roof(kind: str) -> Roof:
    return Roof("A100-like", kind,
                compute=(Ceiling(19.5e12, precision="fp32", unit="vector", provenance=kind),),
                memory=(Ceiling(2.039e12, level="DRAM", provenance=kind),), overhead_s=5e-6)


def _one(kind: str):
    a = analyze(_roof(kind), [STENCIL])
    (d,) = diagnose(a)
    return a, d


def test_ai_low_on_a_datasheet_roof_blames_cache_reuse_not_a_probe():
    a, _ = _one("nominal")
    f = check_ai_low(STENCIL, a.points)
    assert f is not None and "2.45x the DRAM bandwidth (the datasheet's 2.04 TB/s" in f.message
    assert f.causes[0].startswith("cache reuse: the counted bytes are not all DRAM traffic")
    assert not any(PROBE in c for c in f.causes)
    assert "too low for it" not in f.message


def test_ai_low_on_a_measured_roof_keeps_the_probe_cause():
    a, _ = _one("measured")
    f = check_ai_low(STENCIL, a.points)
    assert f is not None and any(PROBE in c for c in f.causes)


def test_gain_distance_and_read_with_care_on_a_datasheet_roof():
    _, d = _one("nominal")
    assert d.gain_words.startswith("none: it runs 2.45x faster than its roof allows; its "
                                   "DRAM roof is a datasheet's, so not too low: cache reuse")
    below = d.distances[0].words
    assert "2.45x above the roof" in below and "cache reuse" in below
    assert "disturbed probe" not in below and "roof is too low" not in below
    (line,) = [w for w in trust_warnings([d]) if "faster than the roof" in w]
    assert "stencil_above (2.45x above)" in line and "cache reuse" in line
    assert "The roof is too low" not in line


def test_measured_roof_keeps_the_roof_too_low_words():
    _, d = _one("measured")
    assert "the roof is too low for it" in d.gain_words
    assert "disturbed probe" in d.distances[0].words
    (line,) = [w for w in trust_warnings([d]) if "faster than the roof" in w]
    assert "The roof is too low for them" in line


def test_above_a_datasheet_compute_roof_names_the_unit():
    # 4e10 FLOP fp32 in 1 ms = 40 TFLOP/s on a 19.5 TFLOP/s fp32 vector roof (2.05x), AI 400
    conv = Kernel("conv", {"fp32": 4e10}, {"DRAM": 1e8}, seconds=1e-3, meta={"op": "conv2d"})
    (d,) = diagnose(analyze(_roof("nominal"), [conv]))
    assert "2.05x faster" in d.gain_words and "tensor cores, TF32" in d.gain_words
    (line,) = [w for w in trust_warnings([d]) if "faster than the roof" in w]
    assert "datasheet compute roof" in line and "The roof is too low" not in line
