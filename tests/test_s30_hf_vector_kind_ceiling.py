"""A kernel without a unit whose op kind is known to be no matrix op (pooling, norms,
elementwise, stencils...) is held to its precision's vector ceiling, not the tensor one
(model/held_unit.py). Hand figures from the A100 80GB SXM catalog roof: fp16 vector
78 TFLOP/s, fp16 tensor 312 TFLOP/s, DRAM 2.039 TB/s."""

from __future__ import annotations

import pytest

from rooflab import load_roof
from rooflab.model.analysis import analyze
from rooflab.model.held_unit import VECTOR_KIND_NOTE, held_unit
from rooflab.model.kernel import Kernel

A100 = "A100 80GB SXM"
BW = 2.039e12


def _k(name: str, **kw) -> Kernel:
    # 1e9 FLOP over 1e8 bytes: AI 10 FLOP/B; 1e-4 s: 10 TFLOP/s achieved
    return Kernel(name, flop={"fp16": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-4, **kw)


def _point(analysis, name):
    return next(p for p in analysis.points if p.kernel == name)


def test_pool_held_to_fp16_vector():
    roof = load_roof(A100)
    p = _point(analyze(roof, [_k("max_pool_forward_nchw")]), "max_pool_forward_nchw")
    assert p.peak_flop_per_s == pytest.approx(78e12)
    assert p.unit == "vector"
    # ridge 78e12 / 2.039e12 = 38.25 FLOP/B, not 312e12 / 2.039e12 = 153
    assert p.ridge == pytest.approx(78e12 / BW)
    assert p.ridge == pytest.approx(38.25, abs=0.01)
    # AI 10 < 38.25: memory-bound, attainable 10 x 2.039e12 = 20.39 TFLOP/s
    assert p.attainable_flop_per_s == pytest.approx(20.39e12)


def test_matrix_and_unknown_kinds_keep_the_fastest():
    roof = load_roof(A100)
    a = analyze(roof, [_k("volta_h884gemm"), _k("custom_kernel")])
    for name in ("volta_h884gemm", "custom_kernel"):
        p = _point(a, name)
        assert p.peak_flop_per_s == pytest.approx(312e12)
        assert p.ridge == pytest.approx(312e12 / BW)   # 153.0
    assert not any(VECTOR_KIND_NOTE in n for n in a.notes)


def test_given_unit_wins_and_meta_op_counts():
    roof = load_roof(A100)
    # a pool the user says runs on tensor units stays there; a name rooflab cannot read
    # with meta op 'softmax' goes to vector
    pool_t = _k("max_pool_forward_nchw", unit="tensor")
    soft = _k("my_kernel_3", meta={"op": "softmax"})
    assert held_unit(roof, pool_t) == "tensor"
    assert held_unit(roof, soft) == "vector"
    a = analyze(roof, [pool_t, soft])
    assert _point(a, "max_pool_forward_nchw").peak_flop_per_s == pytest.approx(312e12)
    assert _point(a, "my_kernel_3").peak_flop_per_s == pytest.approx(78e12)


def test_note_said_once_naming_the_kernels():
    roof = load_roof(A100)
    a = analyze(roof, [_k("max_pool_forward_nchw"), _k("layernorm_fwd"), _k("sgemm_nn")])
    said = [n for n in a.notes if VECTOR_KIND_NOTE in n]
    assert said == [f"max_pool_forward_nchw, layernorm_fwd: {VECTOR_KIND_NOTE}"]
    assert "vector work cannot use tensor units" in said[0]


def test_fp32_norm_on_fp32_vector_not_tf32():
    roof = load_roof(A100)
    k = Kernel("rmsnorm_kernel", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-4)
    p = analyze(roof, [k]).points[0]
    # fp32 vector 19.5 TFLOP/s (not tf32 tensor 156): ridge 19.5e12 / 2.039e12 = 9.56
    assert p.peak_flop_per_s == pytest.approx(19.5e12)
    assert p.ridge == pytest.approx(9.56, abs=0.01)
    assert p.bound == "compute"   # AI 10 > 9.56


def test_cpu_roof_without_tensor_units_unchanged():
    # a roof with no tensor ceiling: the fastest unit is the vector one already, no note
    roof = load_roof("EPYC 9654")
    k = Kernel("softmax_fwd", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-4)
    assert not any(c.unit == "tensor" for c in roof.compute)
    assert held_unit(roof, k) is None
    assert not any(VECTOR_KIND_NOTE in n for n in analyze(roof, [k]).notes)


def _roof_words(name: str, precision: str) -> tuple[float, str]:
    from rooflab.model.diagnose import diagnose

    roof = load_roof(A100)
    k = Kernel(name, flop={precision: 1e9}, bytes={"DRAM": 1e8}, seconds=1e-4)
    (d,) = diagnose(analyze(roof, [k]))
    (roof_d,) = [x for x in d.distances if x.name == "roof"]
    return roof_d.factor, roof_d.words


def test_the_roof_distance_of_a_vector_kind_stops_at_the_vector_ceilings():
    # an fp32 pool: fp32 vector 19.5 -> the fastest vector ceiling, fp16 vector 78: 4x
    # (not fp16 tensor 312: 16x, cured by "tensor cores" a pool cannot use)
    factor, words = _roof_words("max_pool_forward_nchw", "fp32")
    assert factor == pytest.approx(78e12 / 19.5e12)
    assert "the fastest vector ceiling on this roof (fp16 vector, 78 TFLOP/s) is 4.00x" in words
    assert "tensor cores" not in words and "Integer math" not in words
    assert "a narrower precision on the vector units" in words
    # an fp16 one is at the top already
    factor, words = _roof_words("layernorm_fwd", "fp16")
    assert factor == pytest.approx(1.0)
    assert words.startswith("it is held to the highest vector ceiling on this roof (78 TFLOP/s)")
    # a GEMM keeps the tensor roof and its cure
    factor, words = _roof_words("volta_sgemm_128x64", "fp32")
    assert factor == pytest.approx(312e12 / 19.5e12)
    assert "tensor cores" in words


def test_json_roof_headroom_follows_the_vector_top():
    roof = load_roof(A100)
    k = Kernel("max_pool_forward_nchw", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-4)
    assert _point(analyze(roof, [k]), k.name).roof_headroom == pytest.approx(4.0)
