"""Review 13v F-A, F-M, F-D: whatif reads a kernel's kind as report does, --hardware is like
for like both ways, and the torch trace rules count matrix-vector products.

Each test fails on the code before the fix: a name-only elementwise kernel was all weights
(int4 3.98x, batch 8 "no extra time"), a catalog T4 -> the T4's own profile read 0.83x, and
aten::mv / addmv / dot / vdot had no rule ("without a FLOP formula (not drawn)").
"""

from __future__ import annotations

import json

import pytest
from test_torch_ops_formulas import _trace
from test_torch_trace import _event

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof, load_roofs
from rooflab.ingest.torch_ops import op_work, work_or_reason
from rooflab.ingest.torch_ops_base import OpCall
from rooflab.ingest.torch_trace import load_torch_trace
from rooflab.model.efficiency_basis import efficiency_basis
from rooflab.model.kernel import Kernel
from rooflab.model.whatif import change_batch, quantize_weights
from rooflab.model.whatif_weights import weight_share
from rooflab.workloads import ops


def _run(capsys, *args) -> str:
    code = main(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _kfile(tmp_path, kernels, name="k.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    return str(path)


# --- F-A: the kind off the name ------------------------------------------------------------

# review 13v's ew3.json: PyTorch's own kernel names, no `op`
TORCH_NAMES = ("void at::native::vectorized_elementwise_kernel<4, "
               "at::native::CUDAFunctor_add<c10::Half>>", "void at::native::reduce_kernel<512, 1>",
               "softmax_warp_forward", "residual_add", "rmsnorm_kernel")


@pytest.mark.parametrize("name", TORCH_NAMES)
def test_a_name_only_streaming_kernel_has_no_weights(name):
    k = Kernel(name, {"fp16": 1e8}, {"DRAM": 6e8}, seconds=2.5e-3)
    assert weight_share(k, None) == 0.0          # was 1.0: all weights


def test_kinds_that_read_weights_keep_them():
    def share(name, flop, nbytes, precision="fp16", **meta):
        return weight_share(Kernel(name, {precision: flop}, {"DRAM": nbytes}, meta=meta), None)

    assert share("volta_sgemm_128x64_nn", 2e9, 1e7) == 1.0       # gemm by its name
    assert share("gemv2T_kernel", 2e6, 2e6) == 1.0                 # gemv by its name
    assert share("decode b=1", 2.2e9, 2.2e9) == 1.0                # 'decode' word
    # no kind anywhere: an fp32 GEMV reaches AI 2 / 4 = 0.5 (not taken as activations) ...
    assert share("fc", 2 * 4096 * 4096, 4 * 4096 * 4096, "fp32") == 1.0
    # ... an fp16 `y = x + 1` 1 FLOP per 4 bytes = 0.25 < 1 / 2 is a streaming pass
    assert share("x + 1", 1e8, 4e8) == 0.0
    # meta's op still decides first: 'residual_add' named, but the file says matmul
    assert share("residual_add", 1e8, 6e8, op="matmul") == 1.0


EW2 = [{"name": "residual_add", "flop": {"fp16": 1e8}, "bytes": {"DRAM": 6e8},
        "seconds": 2.5e-3},
       {"name": "silu_mul", "op": "elementwise", "flop": {"fp16": 1e8},
        "bytes": {"DRAM": 6e8}, "seconds": 2.5e-3}]


def test_int4_leaves_a_residual_add_alone(tmp_path, capsys):
    data = json.loads(_run(capsys, "whatif", _kfile(tmp_path, EW2), "--on", "T4",
                           "--quantize", "int4", "--json"))
    rows = {r["kernel"]: r for r in data["moves"]}
    # no weights: 2.5 ms stays 2.5 ms (was 629 us, 3.98x), as the op-tagged silu_mul
    assert rows["residual_add"]["after_s"] == pytest.approx(2.5e-3)
    assert rows["residual_add"]["speedup"] == pytest.approx(1.0)
    assert data["speedup"] == pytest.approx(1.0)                  # was 1.60x


def test_batch_8_moves_8x_a_residual_adds_bytes():
    roof = load_roof("T4")
    ks = [Kernel(d["name"], d["flop"], d["bytes"], seconds=d["seconds"],
                 meta={k: v for k, v in d.items() if k == "op"}) for d in EW2]
    w = change_batch(roof, ks, 8)
    (ra_old, ra), (_, silu) = w.moves
    assert ra.bytes["DRAM"] == pytest.approx(8 * 6e8)             # was 6e8: "weights"
    assert ra.flop["fp16"] == pytest.approx(8e8)
    # the same kernel as silu_mul, so the same time: 8 sequences, 8x the bytes
    assert ra.seconds == pytest.approx(silu.seconds)
    assert ra.seconds == pytest.approx(8 * ra_old.seconds, rel=0.01)   # ~20 ms, was 2.5 ms


def test_int4_on_pytorch_kernel_names_is_1x(tmp_path, capsys):
    ew3 = [{"name": TORCH_NAMES[0], "flop": {"fp16": 1e8}, "bytes": {"DRAM": 6e8},
            "seconds": 0.35e-3},
           {"name": TORCH_NAMES[1], "flop": {"fp16": 1e8}, "bytes": {"DRAM": 2e8},
            "seconds": 0.15e-3},
           {"name": TORCH_NAMES[2], "flop": {"fp16": 4e8}, "bytes": {"DRAM": 2e8},
            "seconds": 0.15e-3}]
    data = json.loads(_run(capsys, "whatif", _kfile(tmp_path, ew3), "--on", "A100",
                           "--quantize", "int4", "--json"))
    # 650 us -> 650 us (was 174 us, 3.74x: 3.84x, 3.64x, 3.64x)
    assert data["total_before_s"] == pytest.approx(650e-6)
    assert data["total_after_s"] == pytest.approx(650e-6)
    assert [r["speedup"] for r in data["moves"]] == pytest.approx([1.0, 1.0, 1.0])


def test_a_gemm_named_kernel_still_quantizes():
    # a profiler's GEMM with no op: its bytes are weights, int4 shrinks them 4x (fp16 2 B
    # -> 0.5 B per weight): 6e8 B -> 1.5e8 B
    k = Kernel("ampere_fp16_s16816gemm_fp16_128x64", {"fp16": 1e8}, {"DRAM": 6e8},
               seconds=2.5e-3)
    (_, new), = quantize_weights(load_roof("T4"), [k], "int4").moves
    assert new.bytes["DRAM"] == pytest.approx(1.5e8)


# --- F-M: --hardware, a profile holding both roofs ------------------------------------------

# review 12a's t4prof.json: the catalog T4 (nominal) and a probe of it (measured)
T4PROF = {"schema_version": 1, "host": {"name": "colab T4"},
          "nominal": {"name": "T4", "kind": "nominal",
                      "compute": [{"precision": "fp16", "unit": "tensor",
                                   "flop_per_s": 65e12, "kind": "nominal"}],
                      "memory": [{"level": "DRAM", "bytes_per_s": 320e9, "kind": "nominal"}],
                      "overhead_s": 5e-6},
          "measured": {"name": "T4", "kind": "measured",
                       "compute": [{"precision": "fp16", "unit": "tensor",
                                    "flop_per_s": 50e12, "kind": "measured"}],
                       "memory": [{"level": "DRAM", "bytes_per_s": 270e9,
                                   "kind": "measured"}],
                       "overhead_s": 5e-6}}
PTS = [{"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
        "seconds": 0.015},
       {"name": "matmul 4096", "flop": {"fp16": 137438953472}, "bytes": {"DRAM": 100663296},
        "seconds": 0.00274877906944}]


@pytest.fixture
def t4prof(tmp_path):
    path = tmp_path / "t4prof.json"
    path.write_text(json.dumps(T4PROF))
    return str(path)


def test_catalog_t4_to_its_own_profile_is_1x(tmp_path, capsys, t4prof):
    pts = _kfile(tmp_path, PTS)
    data = json.loads(_run(capsys, "whatif", pts, "--on", "T4", "--hardware", t4prof,
                           "--json"))
    # was 15 ms -> 17.8 ms (6.875 / 15 of the nominal roof applied to the measured 8.15 ms
    # floor) and 2.75 ms -> 3.57 ms (x 65 / 50): total 0.83x
    assert [r["speedup"] for r in data["moves"]] == pytest.approx([1.0, 1.0])
    assert data["speedup"] == pytest.approx(1.0)
    assert data["efficiency_basis"] == {"name": "NVIDIA T4", "kind": "nominal",
                                        "target_kind": "nominal"}
    out = _run(capsys, "whatif", pts, "--on", "T4", "--hardware", t4prof)
    flat = " ".join(out.split())
    assert "the --hardware profile's nominal roof rather than its measured one" in flat
    assert "like for like" in flat and "not like for like" not in flat


def test_profile_to_the_same_profile_stays_measured(tmp_path, capsys, t4prof):
    data = json.loads(_run(capsys, "whatif", _kfile(tmp_path, PTS), "--on", t4prof,
                           "--hardware", t4prof, "--json"))
    assert data["efficiency_basis"]["kind"] == data["efficiency_basis"]["target_kind"] == (
        "measured")
    # matmul 4096 ran at the measured 50 T (2.749 ms): with the 5 us launch it sits 0.18 %
    # above that roof, so its efficiency is capped at 1 and it reads 0.998x
    assert [r["speedup"] for r in data["moves"]] == pytest.approx([1.0, 1.0], rel=0.002)


def test_efficiency_basis_picks_the_target_roof_of_the_basis_kind(t4prof):
    measured, nominal = load_roofs(t4prof)
    catalog = load_roof("T4")
    basis, target, line = efficiency_basis((catalog,), (measured, nominal))
    assert (basis, target) == (catalog, nominal)
    assert "like for like" in line
    # a single target roof (a catalog name) keeps the old answer: profile -> H100
    h100 = load_roof("H100")
    basis, target, line = efficiency_basis((measured, nominal), h100)
    assert (basis, target) == (nominal, h100)
    # no roof of one kind on both sides: the judging roofs, said as a mix
    basis, target, line = efficiency_basis((measured,), (h100,))
    assert (basis, target) == (measured, h100) and "not like for like" in line


# --- F-D: aten::mv, addmv, dot, vdot -------------------------------------------------------

def test_mv_addmv_dot_count_as_ai_gemv():
    f32 = ("float", "float")
    mv = op_work(OpCall("aten::mv", ((1024, 4096), (4096,)), f32))
    g = ops.gemv(1024, 4096, "fp32")
    # 2mn = 8,388,608 FLOP; 4 (mn + n + m) = 16,797,696 B; the vector unit
    assert (mv.flop, mv.bytes, mv.unit, mv.precision) == (8_388_608, 16_797_696, "vector",
                                                           "fp32")
    assert (mv.flop, mv.bytes) == (g.flop, g.bytes) and mv.op == "gemv"
    addmv = op_work(OpCall("aten::addmv", ((1024,), (1024, 4096), (4096,), (), ()),
                           ("float",) * 3 + ("Scalar", "Scalar"), ("", "", "", "1", "1")))
    # 2mn + m FLOP; the bias (m floats) read too
    assert (addmv.flop, addmv.bytes) == (8_388_608 + 1024, 16_797_696 + 4 * 1024)
    # beta 0 (what aten::mv calls): the bias is not read, nothing added
    addmv0 = op_work(OpCall("aten::addmv_", ((1024,), (1024, 4096), (4096,), (), ()),
                            ("float",) * 3 + ("Scalar", "Scalar"), ("", "", "", "0", "1")))
    assert (addmv0.flop, addmv0.bytes) == (8_388_608, 16_797_696)
    half = ("c10::Half", "c10::Half")
    for name in ("aten::dot", "aten::vdot"):
        dot = op_work(OpCall(name, ((4096,), (4096,)), half))
        # 2n = 8,192 FLOP; 2 (n + n + 1) = 16,386 B = ops.gemv(1, n)
        assert (dot.flop, dot.bytes, dot.unit) == (8_192, 16_386, "vector")
        assert dot.bytes == ops.gemv(1, 4096, "fp16").bytes


def test_complex_mv_and_mismatched_lengths():
    cx = op_work(OpCall("aten::mv", ((64, 128), (128,)), ("c10::complex<float>",) * 2))
    # 8 real FLOP per complex multiply-add, 8-byte elements
    assert (cx.flop, cx.bytes, cx.precision) == (8 * 64 * 128, 8 * (64 * 128 + 128 + 64),
                                                 "fp32")
    why = work_or_reason(OpCall("aten::mv", ((64, 128), (127,)), ("float", "float")))
    assert isinstance(why, str) and "lengths disagree" in why


def test_a_traced_mv_is_one_gemv_kernel(tmp_path):
    # the structure of a real CPU trace (review 12d's tr1.py): aten::mv calls
    # aten::addmv_(out, A, x, beta 0, alpha 1), which is part of it, not a second count
    f3 = ["float", "float", "float", "Scalar", "Scalar"]
    events = []
    for i in range(3):
        t = 1000 * i
        events += [
            _event("aten::mv", t, 850, 10 * i + 1, [[1024, 4096], [4096]], ["float", "float"]),
            _event("aten::empty", t + 20, 1, 10 * i + 2, [[]], ["ScalarList"]),
            _event("aten::addmv_", t + 31, 820, 10 * i + 3,
                   [[1024], [1024, 4096], [4096], [], []], f3,
                   concrete=["", "", "", "0", "1"]),
        ]
    imp = load_torch_trace(_trace(tmp_path, events))
    (k,) = imp.kernels
    assert k.name == "aten::mv [1024x4096, 4096]" and k.calls == 3
    assert k.flop == {"fp32": 3 * 8_388_608}
    assert k.bytes == {"DRAM": 3 * 16_797_696}
    assert k.unit == "vector" and k.meta["op"] == "gemv"
    assert k.seconds == pytest.approx(3 * 850e-6)
    assert not any("aten::mv" in n for n in imp.notes if "without a FLOP formula" in n)
