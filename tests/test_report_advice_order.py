"""Fresh-user audit of `report`/`ai`/`torch`: advice, ordering and labels, by hand.

Toy roof: fp32 vector 1e12 FLOP/s, fp16 tensor 8e12, DRAM 1e11 B/s (ridge fp32 = 10).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.ingest.torch_ops import op_work
from rooflab.ingest.torch_ops_base import OpCall
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.model.diagnose import diagnose

ROOF = Roof("toy", compute=(Ceiling(1e12, precision="fp32", unit="vector"),
                            Ceiling(8e12, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e11, level="DRAM"),))


def _actions(kernel):
    p = analyze(ROOF, [kernel]).primary()[0]
    return [a.action.split(" ")[0] for a in advise(p, ROOF, kernel)]


def test_no_tiling_advice_for_compulsory_counts():
    # A decode GEMV counted by rooflab (bytes 'derived' = compulsory traffic: each weight
    # read once) cannot be tiled below those bytes; a profiler's counted bytes can.
    gemv = dict(flop={"fp32": 2 * 4096 * 4096}, bytes={"DRAM": 4 * 4096 * 4096},
                seconds=2e-3, meta={"op": "linear"})
    counted = Kernel("q_proj", provenance={"bytes": "derived"}, **gemv)
    profiled = Kernel("q_proj", provenance={"bytes": "counted"}, **gemv)
    assert "tile" not in _actions(counted)
    # a profiler's counts of the same GEMV (AI 0.5 in fp32: 2 FLOP per 4-byte weight, M =
    # 1) get no tiling either since review 12a #1: a GEMM's AI is capped by its shape
    assert "tile" not in _actions(profiled)
    assert "batch" in _actions(counted)         # the real lever for a decode GEMV
    assert "batch" in _actions(profiled)
    # the same bytes with 8x the FLOP (AI 4 < ridge 10: no GEMV) are a profiled GEMM
    # with reuse misses: tiling stays
    gemm = dict(gemv, flop={"fp32": 8 * 2 * 4096 * 4096}, meta={"op": "matmul"})
    assert "tile" in _actions(Kernel("fc", provenance={"bytes": "counted"}, **gemm))


def test_untimed_kernels_rank_by_time_floor():
    # No times: no gain to rank by, so the longest floor first (not alphabetical).
    # floors: big 4e8 B / 1e11 = 4 ms, small 4e6 B / 1e11 = 40 us.
    ks = [Kernel("a_small", {"fp32": 1e6}, {"DRAM": 4e6}),
          Kernel("z_big", {"fp32": 1e8}, {"DRAM": 4e8})]
    order = [d.kernel for d in diagnose(analyze(ROOF, ks))]
    assert order == ["z_big", "a_small"]


def test_zero_flop_kernel_is_data_movement_not_right_of_the_ridge():
    # A copy: 0 FLOP, 1e8 B in 2 ms. AI 0 is left of every ridge, never "at or right".
    (d,) = diagnose(analyze(ROOF, [Kernel("copy", {"fp32": 0.0}, {"DRAM": 1e8},
                                          seconds=2e-3)]))
    slope = next(x for x in d.distances if x.name == "along slope")
    assert "no FLOP" in slope.words and "right of the ridge" not in slope.words
    assert "infx" not in d.evidence and "no FLOP" in d.evidence


def test_report_header_without_times(tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text("name,flop,bytes,precision\nk,1e9,1e8,fp32\n")
    assert main(["report", str(f), "--on", "T4"]) == 0
    out = capsys.readouterr().out
    assert "none timed" in out and "0 ns measured" not in out


def test_ai_names_the_fallback_ceiling(capsys):
    # H100 SXM has no int4 math: int4 is held to int8 tensor (1979 TFLOP/s dense).
    assert main(["ai", "matmul", "4096", "4096", "4096", "--dtype", "int4",
                 "--on", "H100 SXM"]) == 0
    out = capsys.readouterr().out
    ceilings = next(line for line in out.splitlines() if "ceilings" in line)
    assert "int8 tensor" in ceilings and "int4" not in ceilings
    assert main(["ai", "matmul", "4096", "4096", "4096", "--dtype", "int4",
                 "--on", "H100 SXM", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["compute_ceiling"] == "int8 tensor"
    assert d["analysis"][0]["peak_flop_per_s"] == pytest.approx(1979e12, rel=0.01)


def test_torch_relu_counts_zero_flop_like_ai_and_bench():
    # relu is a comparison (FMNMX): 0 FLOP, as `rooflab ai` and bench/torch_count count it;
    # bytes: 512 x 512 fp32 read + written = 2 x 1 MiB.
    w = op_work(OpCall("aten::relu", ((512, 512),), ("float",)))
    assert w.flop == 0 and w.bytes == 2 * 512 * 512 * 4
    add = op_work(OpCall("aten::add", ((512, 512), (512, 512)), ("float", "float")))
    assert add.flop == 512 * 512 and add.bytes == 3 * 512 * 512 * 4


def test_whatif_says_when_the_new_precision_has_no_ceiling(tmp_path, capsys):
    # An A100 has no fp8 math: the fp8 what-if is held to another ceiling, and says so.
    f = tmp_path / "k.csv"
    f.write_text("name,flop,bytes,seconds,precision\ngemm,2.1e9,1.2e7,5e-4,fp32\n")
    assert main(["whatif", str(f), "--on", "A100", "--precision", "fp8"]) == 0
    out = capsys.readouterr().out
    assert "has no fp8 ceiling" in out


def test_csv_extra_columns_reach_meta(tmp_path):
    # kernelfile's docstring promises it; an `op` column is how a CSV names the op kind:
    # y = x + 1 (elementwise, AI 0.25) gets fusion advice, not the tiling an unknown
    # kind would get (seed 000: elementwise AI cannot be raised by tiling).
    from rooflab.ingest.kernelfile import load_kernels

    f = tmp_path / "k.csv"
    f.write_text("name,flop,bytes,seconds,precision,op,weight_bytes\n"
                 "x + 1,1e8,4e8,8e-3,fp16,elementwise,0\n")
    (k,) = load_kernels(str(f))
    assert k.meta == {"op": "elementwise", "weight_bytes": 0.0}
    assert "tile" not in _actions(k) and "fuse" in _actions(k)


@pytest.mark.parametrize("memory, message", [
    ([], "has no memory ceilings"),
    ([{"level": "L2", "bytes_per_s": 5e12}], "has no DRAM ceiling (it has: L2)"),
])
@pytest.mark.parametrize("argv", [["ai", "matmul", "4", "4", "4"],
                                  ["llm", "tinyllama-1.1b"]])
def test_hand_written_roof_without_dram_is_an_error_not_a_traceback(
        tmp_path, capsys, memory, message, argv):
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"name": "r", "memory": memory, "compute": [
        {"precision": "fp16", "unit": "tensor", "flop_per_s": 1e14}]}))
    assert main([*argv, "--on", str(roof)]) == 2
    assert message in capsys.readouterr().err
