"""Session 35 B: a share of a total prints as units.fmt_share everywhere (one decimal, two
figures under 1 %, off 100 % where it is not all), a percent of a roof or peak as
units.fmt_pct (whole percents from 10 %, two figures under). Before, the weighted ceiling
note rounded its FLOP shares to whole percents ("97 % fp16 tensor + 3 % fp32 vector" beside
a "3.3 %" elsewhere), and so did the layer-weights line, the grid line and the unplaced
kernel's compute position its own ways.

Hand numbers:
* weighted: 29e9 FLOP fp16 + 1e9 fp32 on an A100 (fp16 tensor 312, fp32 vector 19.5
  TFLOP/s): shares 29 / 30 = 96.67 % and 1 / 30 = 3.33 %; the ceiling 30e9 / (29e9 / 312e12
  + 1e9 / 19.5e12) = 30e9 / 144.23e-6 s = 208 TFLOP/s.
* TinyLlama's layer: q and o 2048 x 2048, k and v 2048 x 256 (4 KV heads of 64) = 9.437e6
  parameters x 2 B = 18.87 MB; FFN 3 x 2048 x 5632 = 34.6e6 x 2 B = 69.21 MB; norms
  2 x 2048 x 2 B = 8.19 kB; the layer 88.09 MB: attention 21.4 %, FFN 78.6 %.
* a grid of 4 blocks on 24 SMs: 4 / 24 = 16.7 % of the SMs.
* a 12-core profile beside a 96-core EPYC 9654: 12 / 96 = 12.5 % of the cores.
* FLOP on two units, 99.95 tensor + 0.05 vector: 99.95 % and 0.05 % ('.3g' read '100 %').
* a compute-only kernel, 1 TFLOP/s of fp32 vector 19.5 TFLOP/s: 5.128 % -> fmt_pct '5.1 %'.
* T4 (DRAM 320 GB/s): 1e9 FLOP and 1e8 B in 1 ms, AI 10, attainable 3.2 TFLOP/s, achieved
  1 TFLOP/s = 31.25 % of roof: '31 %' in the notebook's point line as in every table (its
  own one decimal read '31.2 %').
* the kernel table's share column: 30.5 s of 30.5001 s = 99.9997 %, 102 us of it <0.001 %
  (the '.1f' column read 100.0 % and 0.0 %).
"""

from __future__ import annotations

from rich.console import Console

from rooflab.bench.torch_count import unit_note
from rooflab.cli.profiled_table import _kernels_table
from rooflab.cli.specs_tables import FileRoof, core_count_note
from rooflab.hardware.catalog import lookup
from rooflab.hardware.resolve import load_roof
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.display import analysis_text
from rooflab.model.grid_fill import grid_reason
from rooflab.model.kernel import Kernel
from rooflab.report.markdown import compute_only_words
from rooflab.workloads.llm import Settings, load_config
from rooflab.workloads.llm.layer_weights import layer_weights


def test_weighted_ceiling_shares_print_as_every_share():
    k = Kernel("mix", {"fp16": 29e9, "fp32": 1e9}, {"DRAM": 1e7}, seconds=1e-3,
               unit="tensor")
    notes = " ".join(analyze(load_roof("A100"), [k]).notes)
    assert ("mix: held to a weighted 208 TFLOP/s: 96.7 % fp16 tensor (312 TFLOP/s) + 3.3 % "
            "fp32 vector (19.5 TFLOP/s)") in notes


def test_layer_weights_line_prints_shares_with_one_decimal():
    (line, *_) = layer_weights(load_config("tinyllama-1.1b"), Settings()).describe()
    assert line.startswith("one layer's weights: 88.1 MB (attention 18.9 MB 21.4 %, "
                           "FFN 69.2 MB 78.6 %, norms 8.19 kB)")


def test_grid_and_core_shares():
    assert grid_reason({"block": "(256, 1, 1)"}, 4, 24) == (
        "grid of 4 blocks x 256 threads on 24 SMs: 16.7 % of SMs get a block")
    roof = Roof(name="me", kind="measured", memory=(Ceiling(
        value=50e9, level="DRAM", provenance="measured", source="hand"),))
    note = core_count_note([FileRoof("me.json", roof, cores=12), lookup("EPYC 9654")])
    assert "(its share of the cores: 12.5 %)" in note


def test_unit_shares_keep_off_100():
    assert unit_note({"tensor": 99.95, "vector": 0.05}).startswith(
        "FLOP on more than one unit (99.95 % tensor, 0.05 % vector)")


def test_a_percent_of_a_peak_prints_as_a_percent_of_roof():
    k = Kernel("c", {"fp32": 1e9}, {}, seconds=1e-3)
    (u,) = analyze(load_roof("A100"), [k]).unplaced
    assert compute_only_words(u) == "1 TFLOP/s = 5.1 % of fp32 vector 19.5 TFLOP/s"


def test_the_notebook_point_line_rounds_as_the_tables():
    k = Kernel("k", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1e-3)
    text = analysis_text(analyze(load_roof("T4"), [k]))
    assert "k  DRAM  1 ms  AI 10  1 TFLOP/s of 3.2 TFLOP/s  31 % of roof  memory-bound" in text


def test_kernel_table_share_column_is_fmt_share():
    rows = [{"kernel": name, "calls": 1, "seconds": s, "time_share": share, "level": "DRAM",
             "precision": "fp64", "ai": 5.0, "achieved_flop_per_s": 85e9,
             "percent_of_roof": 55.0, "bound": "compute"}
            for name, s, share in (("big", 30.5, 30.5 / 30.500102),
                                   ("red", 102e-6, 102e-6 / 30.500102))]
    console = Console(width=200, record=True)
    console.print(_kernels_table(rows, "t", narrow=True))
    text = console.export_text()
    assert "99.9997 %" in text and "<0.001 %" in text
    assert "100.0 %" not in text and " 0.0 %" not in text
