"""PyTorch's addmm (what nn.Linear records) is a matrix multiply, not the elementwise 'add'.

A kernel writer running `rooflab torch --run` on a model with nn.Linear got, for
aten::addmm [1024, 256x512, 512x1024] at AI 73.1, the sanity warning "abnormally high for
a addmm op (it reads and writes each element about once)" and no tensor-core advice: the
op kind 'addmm' was matched to 'add' by a bare prefix.
"""

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.model.opkind import is_streaming
from rooflab.model.sanity import check_kernel

# GPU-like toy roof: fp16 vector 1e13, fp16 tensor 1e14 FLOP/s, DRAM 1e12 B/s (ridge 10).
ROOF = Roof("toy-gpu", compute=(Ceiling(1e13, precision="fp16", unit="vector"),
                                Ceiling(1e14, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e12, level="DRAM"),))


def _addmm(seconds: float) -> Kernel:
    # unit "vector": as run now (say, fp16 math without tensor-core layouts)
    # addmm [1024, 256x512, 512x1024] in fp16: 2*256*512*1024 + 256*1024 = 268,697,600 FLOP;
    # bytes 2*(1024 + 256*512 + 512*1024 + 256*1024) = 1,837,056 -> AI 146.3 FLOP/B.
    return Kernel("aten::addmm [1024, 256x512, 512x1024]", {"fp16": 268_697_600.0},
                  {"DRAM": 1_837_056.0}, seconds=seconds, unit="vector", meta={"op": "addmm"})


def test_kind_matching_needs_a_word_boundary():
    assert not is_streaming("addmm") and not is_streaming("addbmm")
    assert is_streaming("add") and is_streaming("add_") and is_streaming("relu_")
    assert is_streaming("softmax_backward") and is_streaming("layernorm")
    assert not is_streaming("mm") and not is_streaming("")


def test_addmm_at_high_ai_is_not_flagged_but_an_elementwise_add_is():
    k = _addmm(seconds=1e-3)
    a = analyze(ROOF, [k])
    assert round(a.points[0].ai, 1) == 146.3
    assert "ai_high" not in {f.check for f in check_kernel(a, k)}
    # y = x + 1 with the writes left out: 1e6 FLOP over 1e5 B = AI 10 > 4, still caught
    add = Kernel("aten::add_", {"fp16": 1e6}, {"DRAM": 1e5}, meta={"op": "add_"})
    found = {f.check: f for f in check_kernel(analyze(ROOF, [add]), add)}
    assert "AI 10 FLOP/B" in found["ai_high"].message


def test_compute_bound_addmm_gets_tensor_core_advice():
    # 268.7 MFLOP in 1e-4 s = 2.69 TFLOP/s: compute-bound (AI 146 > ridge 10) on the
    # 1e13 vector roof, 26.9 % of it; the tensor roof is 10x higher.
    k = _addmm(seconds=1e-4)
    (p,) = [q for q in analyze(ROOF, [k]).points if q.level == "DRAM"]
    assert p.bound == "compute" and round(p.percent_of_roof, 1) == 26.9
    actions = [a.action for a in advise(p, ROOF, k)]
    assert any("tensor cores" in a for a in actions), actions


def test_zero_flop_op_is_not_said_to_be_held_by_a_compute_ceiling():
    # relu [256x1024] fp32 counts 0 FLOP (a comparison); 2 MiB read + 2 MiB write in 1 ms.
    # The report said "it is held to the highest ceiling on this roof (10 TFLOP/s); only
    # other hardware raises it" — a compute ceiling that does not bear on it.
    from rooflab.model.diagnose import diagnose

    k = Kernel("aten::relu [256x1024]", {"fp16": 0.0}, {"DRAM": 2 * 1_048_576.0},
               seconds=1e-3, meta={"op": "relu"})
    (d,) = diagnose(analyze(ROOF, [k]))
    roof = next(x for x in d.distances if x.name == "roof")
    assert roof.factor == 1.0
    assert "no compute ceiling holds it, only the DRAM bandwidth (1 TB/s)" in roof.words
    assert "highest ceiling" not in roof.words


def test_addmm_bytes_count_as_weights_in_a_quantisation_what_if():
    # nn.Linear records aten::addmm; `rooflab whatif trace.json --quantize` gave its bytes
    # a weight share of 0 (read as the elementwise 'add'), so quantising predicted nothing.
    from rooflab.model.whatif_weights import weight_share

    def share(op):
        return weight_share(Kernel("k", {"fp16": 1e9}, {"DRAM": 1e7}, meta={"op": op}), None)

    assert share("addmm") == 1.0 and share("mm") == 1.0
    assert share("add") == 0.0 and share("relu_") == 0.0
