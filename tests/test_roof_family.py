"""Seed 004's third distance (to the top roof) stays within the kernel's family: a float
kernel is held to the fastest float ceiling, never to int4 math (A100 datasheet: fp16/bf16
tensor 312 TFLOP/s, int8 624 TOPS, int4 1248 TOPS, fp32 vector 19.5 TFLOP/s)."""

import pytest

import rooflab
from rooflab.model.diagnose import diagnose

N = 4096


def _gemm(name: str, precision: str, unit: str, rate: float) -> rooflab.Kernel:
    flop = 2 * N**3
    size = {"fp16": 2, "fp32": 4, "int8": 1}[precision]
    return rooflab.Kernel(name, flop={precision: flop}, bytes={"DRAM": 3 * size * N * N},
                          seconds=flop / rate, unit=unit)


@pytest.fixture(scope="module")
def a100():
    return rooflab.load_roof("A100")


def test_family_top_is_fastest_of_same_family(a100):
    assert a100.top_compute_for("fp32").value == pytest.approx(312e12)
    assert a100.top_compute_for("int8").value == pytest.approx(1248e12)
    assert a100.top_compute.value == pytest.approx(1248e12)   # int4: the old reference


@pytest.mark.parametrize("precision,unit,headroom", [
    ("fp16", "tensor", 1.0),            # 312 / 312: already on the fastest float ceiling
    ("fp32", "vector", 312 / 19.5),     # 16x: tensor cores in a lower precision
    ("int8", "tensor", 1248 / 624),     # integer kernels may still go to int4
])
def test_roof_headroom_per_family(a100, precision, unit, headroom):
    k = _gemm("gemm", precision, unit, 100e12 if unit == "tensor" else 15e12)
    p = rooflab.analyze(a100, [k]).points[0]
    assert p.roof_headroom == pytest.approx(headroom)


def test_roof_distance_names_integer_math_without_counting_it(a100):
    k = _gemm("gemm_fp16", "fp16", "tensor", 250e12)
    d = diagnose(rooflab.analyze(a100, [k]))[0]
    roof = next(x for x in d.distances if x.name == "roof")
    assert roof.factor == pytest.approx(1.0)
    assert "highest float ceiling" in roof.words
    assert "Integer math (int4 tensor, 1.25 POP/s) goes higher still" in roof.words
    assert "this distance does not count it" in roof.words


def test_integer_kernel_gets_no_integer_aside(a100):
    k = _gemm("gemm_int8", "int8", "tensor", 500e12)
    d = diagnose(rooflab.analyze(a100, [k]))[0]
    roof = next(x for x in d.distances if x.name == "roof")
    assert roof.factor == pytest.approx(2.0)
    assert "Integer math" not in roof.words


# --- advice: vector work stays on vector units; a dominant part is not advised twice ----

def _actions(roof, kernel):
    d = diagnose(rooflab.analyze(roof, [kernel]))[0]
    return [a.action for a in d.advice]


def test_vector_kernel_lower_precision_priced_at_vector_rate(a100):
    # 1e10 fp32 FLOP, 1e8 B: AI 100, compute side of fp32 vector (ridge 19.5e12/2039e9 =
    # 9.6). fp16 vector 78 TFLOP/s (whitepaper) is the fastest lower vector rate; the old
    # rule priced bf16 *tensor* 312 TFLOP/s, which elementwise work cannot use.
    # (not named gelu: AI 100 is abnormally high for an elementwise op, which sanity's
    # ai_high flags from the name since review 12a #3, and whose advice it withholds)
    k = rooflab.Kernel("poly_fp32", flop={"fp32": 1e10}, bytes={"DRAM": 1e8},
                       seconds=1e-3, unit="vector")
    d = diagnose(rooflab.analyze(a100, [k]))[0]
    (low,) = [a for a in d.advice if a.action.startswith("use fp16 instead of fp32")]
    assert "tensor" not in low.action
    # efficiency 10 / 19.5 kept; new time = 1e10 / (78e12 * 10/19.5) = 0.25 ms -> 4x
    assert low.speedup == pytest.approx(4.0, rel=0.02)


def test_tensor_kernel_lower_precision_still_on_tensor_cores(a100):
    k = _gemm("gemm_fp32", "fp32", "tensor", 100e12)
    assert any(a.startswith("use bf16 instead of fp32 on tensor cores")
               for a in _actions(a100, k))


def test_three_way_mix_dominant_slow_part_advised_once(a100):
    # fp64 40 % + fp32 30 % + fp16 30 %, all vector: fp64 (9.7 TFLOP/s) is the slowest part
    # and the dominant one though under half the FLOP. The lower-precision advice moves it
    # (fp64 -> fp32); "move the fp64 vector part" repeated it.
    k = rooflab.Kernel("mix3", flop={"fp64": 4e9, "fp32": 3e9, "fp16": 3e9},
                       bytes={"DRAM": 1e7}, seconds=2e-3, unit="vector")
    acts = _actions(a100, k)
    assert not any(a.startswith("move the fp64") for a in acts)
    assert any(a.startswith("use fp32 instead of fp64") for a in acts)


def test_decode_slope_levers_leave_out_tiling_and_fusion():
    # seed 004: a batch-1 decode step reads each weight once per token; its slope is climbed
    # by batching and quantization only (the advice already leaves tiling/fusion out)
    t4 = rooflab.load_roof("T4")
    k = rooflab.Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9},
                       seconds=0.015, meta={"op": "decode"})
    (slope,) = [x for x in diagnose(rooflab.analyze(t4, [k]))[0].distances
                if x.name == "along slope"]
    assert slope.factor == pytest.approx(65e12 / 320e9)        # ridge 203 / AI 1
    assert "Batching (more requests per weight read) and fewer bytes per weight" in slope.words
    assert "tiling and fusion cannot (each weight is used once per request)" in slope.words
    g = rooflab.Kernel("gemm", flop={"fp16": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-3,
                       meta={"op": "matmul"})
    (slope,) = [x for x in diagnose(rooflab.analyze(t4, [g]))[0].distances
                if x.name == "along slope"]
    assert "data reuse (tiling), fusion" in slope.words
