"""Review s24 r3 F5: a Point (`a.points[0]`), an OpCount (`ops.matmul(...)`) and a Ceiling
(`t4.compute[0]`) display in a notebook as one short line (model/display.point_text,
model/display_values.py), not the dataclass repr on one 250-760 character line.

Each test failed before: the three had no _repr_pretty_, so IPython printed repr(). What a
notebook shows is IPython.lib.pretty.pretty(obj) (text/plain). Values are hand-made;
the numbers in the comments are hand calculations. repr() stays the dataclass repr.
"""

from __future__ import annotations

import pytest

from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.placement import Point
from rooflab.workloads.count import OpCount

try:
    from IPython.lib.pretty import pretty
except ImportError:    # CI has no IPython: call the protocol it calls, with a printer of ours
    def pretty(obj) -> str:
        out: list[str] = []

        class Printer:
            def text(self, s: str) -> None:
                out.append(s)

        obj._repr_pretty_(Printer(), False)
        return "".join(out)


def _point(**changes) -> Point:
    """docs/python.md §2's kernel on the T4 by hand: 2.2e9 fp16 FLOP and 2.2e9 DRAM bytes in
    15 ms: AI 1; attainable min(65 TFLOP/s, 320 GB/s x 1) = 320 GFLOP/s; achieved
    2.2e9 / 0.015 = 146.7 GFLOP/s = 45.83 % of it; floor 2.2e9 / 320e9 = 6.875 ms."""
    fields = dict(kernel="decode b=1", precision="fp16", unit="tensor", level="DRAM",
                  flop=2.2e9, bytes=2.2e9, seconds=0.015, calls=1, ai=1.0,
                  peak_flop_per_s=65e12, bytes_per_s=320e9, ridge=203.125,
                  attainable_flop_per_s=320e9, achieved_flop_per_s=2.2e9 / 0.015,
                  percent_of_roof=100 * (2.2e9 / 0.015) / 320e9, binding="DRAM",
                  bound="memory", floor_s=6.875e-3, overhead_floor_s=5e-6,
                  floor_ratio=0.015 / 6.875e-3, time_share=1.0, below_roof=320e9 / (2.2e9 / 0.015),
                  along_slope=203.125, roof_headroom=1.0)
    fields.update(changes)
    return Point(**fields)


# --- Point: its Analysis row, with the precision ------------------------------------------

def test_a_timed_point_shows_its_analysis_row_with_the_precision():
    assert pretty(_point()) == ("Point 'decode b=1' (fp16)  DRAM  15 ms  AI 1  147 GFLOP/s of "
                                "320 GFLOP/s  46 % of roof  memory-bound (DRAM)")


def test_the_point_line_is_the_analysis_row_of_the_same_kernel():
    import rooflab

    t4 = rooflab.load_roof("T4")
    k = rooflab.Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)
    a = rooflab.analyze(t4, [k])
    row = pretty(a).splitlines()[1]
    assert pretty(a.points[0]) == "Point 'decode b=1' (fp16)" + row.removeprefix("  decode b=1")


def test_an_untimed_fp32_point_held_to_fp16_tensor_shows_its_floor_and_its_stand_in_note():
    # 1e9 FLOP, 1e8 B: AI 10; 320 GB/s x 10 = 3.2 TFLOP/s under 65; floor 1e8 / 320e9 = 312.5 us
    p = _point(kernel="c", precision="fp32", flop=1e9, bytes=1e8, seconds=None, ai=10.0,
               attainable_flop_per_s=3.2e12, achieved_flop_per_s=None, percent_of_roof=None,
               floor_s=312.5e-6, floor_ratio=None, time_share=None, below_roof=None,
               along_slope=20.3125, note="roof 'T4' has no fp32 tensor ceiling; using fp16 "
               "tensor", fallback=True)
    assert pretty(p).splitlines() == [
        "Point 'c' (fp32)  DRAM  floor 312 us  AI 10  attainable 3.2 TFLOP/s  memory-bound "
        "(DRAM)",
        "  note: roof 'T4' has no fp32 tensor ceiling; using fp16 tensor"]


def test_a_compute_bound_point_names_its_ceiling():
    # AI 1365.3 right of the ridge 203: held by fp16 tensor, 65 TFLOP/s; 137.4 GFLOP in
    # 2.6 ms = 52.9 TFLOP/s = 81.3 % of it
    flop = 2 * 4096 ** 3
    p = _point(kernel="mm", flop=float(flop), bytes=3 * 4096 ** 2 * 2.0, seconds=2.6e-3,
               ai=flop / (3 * 4096 ** 2 * 2), attainable_flop_per_s=65e12,
               achieved_flop_per_s=flop / 2.6e-3, percent_of_roof=100 * flop / 2.6e-3 / 65e12,
               binding="fp16 tensor", bound="compute")
    assert pretty(p) == ("Point 'mm' (fp16)  DRAM  2.6 ms  AI 1365  52.9 TFLOP/s of 65 TFLOP/s  "
                         "81 % of roof  compute-bound (fp16 tensor)")


# --- OpCount: one line, FLOP / bytes / AI in SI ------------------------------------------

def test_an_opcount_is_one_line_of_flop_bytes_and_ai():
    # 2 x 4096^3 = 137.4 GFLOP; 3 x 4096^2 x 2 B = 100.7 MB; AI 4096 x 2 / 6 = 1365.3
    op = OpCount(name="matmul_4096x4096x4096_fp16", op="matmul", flop=2.0 * 4096 ** 3,
                 bytes=3.0 * 4096 ** 2 * 2, precision="fp16", unit="tensor")
    assert pretty(op) == ("OpCount 'matmul_4096x4096x4096_fp16': 137 GFLOP fp16 tensor, "
                          "101 MB, AI 1365 FLOP/B (derived; compulsory traffic)")


def test_ops_matmul_displays_the_same_and_keeps_its_repr():
    from rooflab.workloads import ops

    mm = ops.matmul(4096, 4096, 4096, dtype="fp16")
    assert pretty(mm) == ("OpCount 'matmul_4096x4096x4096_fp16': 137 GFLOP fp16 tensor, "
                          "101 MB, AI 1365 FLOP/B (derived; compulsory traffic)")
    assert repr(mm).startswith("OpCount(name='matmul_4096x4096x4096_fp16', op='matmul', "
                               "flop=137438953472.0, bytes=100663296.0, precision='fp16'")


def test_an_opcount_without_a_unit_or_flop_names_its_own_byte_model():
    # a copy: 0 FLOP, 1e6 read + 1e6 written = 2 MB, AI 0
    op = OpCount(name="copy", op="copy", flop=0.0, bytes=2e6, precision="fp32",
                 byte_model="input read once, output written once")
    assert pretty(op) == ("OpCount 'copy': 0 FLOP fp32, 2 MB, AI 0 FLOP/B "
                          "(derived; input read once, output written once)")


# --- Ceiling: one line, value, label, provenance -----------------------------------------

def test_a_nominal_ceiling_is_one_line_without_its_source_url():
    c = Ceiling(65e12, "fp16", "tensor", source="https://example.com/t4-datasheet.pdf")
    assert pretty(c) == "Ceiling fp16 tensor: 65 TFLOP/s (nominal); see .source"
    assert pretty(Ceiling(130e12, "int8", "tensor")) == "Ceiling int8 tensor: 130 TOP/s (nominal)"
    assert repr(c).startswith("Ceiling(value=65000000000000.0, precision='fp16', unit='tensor', "
                              "level=None, provenance='nominal', source='https://example.com/")


def test_a_measured_memory_ceiling_shows_its_samples_spread_and_warnings():
    # sorted 13.9, 14.0, 14.1, 14.2, 14.2 GB/s: inclusive quartiles 14.0 and 14.2, median
    # 14.1: IQR 0.2 / 14.1 = 1.42 %
    c = Ceiling(14.2e9, level="dram", provenance="measured", method="STREAM triad",
                samples=(14.0e9, 14.1e9, 14.2e9, 13.9e9, 14.2e9), warnings=("noisy",))
    assert pretty(c) == ("Ceiling DRAM: 14.2 GB/s (measured), 5 samples, IQR 1.4 %, 1 warning "
                         "(.warnings); see .method, .samples")


def test_two_samples_give_their_range():
    # (1e12 - 0.95e12) / median 0.975e12 = 5.13 %
    c = Ceiling(1e12, "fp64", "vector", provenance="measured", samples=(1e12, 0.95e12))
    assert pretty(c) == ("Ceiling fp64 vector: 1 TFLOP/s (measured), 2 samples, range 5.1 %; "
                         "see .samples")


def test_a_roofs_ceilings_tuple_shows_one_line_each():
    pytest.importorskip("IPython", reason="a tuple is laid out by IPython's own printer")
    r = Roof("box", compute=(Ceiling(1e12, "fp32", "vector"),),
             memory=(Ceiling(1e11, level="L2"), Ceiling(5e10, level="DRAM")))
    assert pretty(r.memory) == "(Ceiling L2: 100 GB/s (nominal), Ceiling DRAM: 50 GB/s (nominal))"


def test_a_latency_bound_point_says_why_its_grid_holds_it():
    # 2.2e9 FLOP in 0.15 s: 14.7 GFLOP/s = 4.58 % of 320 GFLOP/s
    p = _point(seconds=0.15, achieved_flop_per_s=2.2e9 / 0.15,
               percent_of_roof=100 * (2.2e9 / 0.15) / 320e9, bound="latency",
               grid="grid of 4 blocks x 256 threads on 40 SMs: 10 % of SMs get a block")
    assert pretty(p).splitlines() == [
        "Point 'decode b=1' (fp16)  DRAM  150 ms  AI 1  14.7 GFLOP/s of 320 GFLOP/s  4.6 % of "
        "roof  latency-bound (DRAM)",
        "  grid of 4 blocks x 256 threads on 40 SMs: 10 % of SMs get a block"]
