"""Review 18c, chart layout: long kernel names (F1), what a one-line label's % is (F6),
the chart's size and dpi (F11), SVG text and title (F13), and chart_layout split into
modules named for their parts."""

from __future__ import annotations

import io
import warnings

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import figure_bytes, plot_roofline
from rooflab.report.chart_layout_size import parse_dpi, parse_size, scale_for
from rooflab.report.label_names import LABEL_CHARS, chart_name, chart_names, middle_ellipsis

# A100's fp16 tensor and DRAM figures, as the built-in A100 roof (312 TFLOP/s, 2.04 TB/s)
A100 = Roof("A100", "nominal",
            compute=(Ceiling(312e12, precision="fp16", unit="tensor"),),
            memory=(Ceiling(2.039e12, level="DRAM"),))
# The everyday name of an elementwise kernel in an nsys/ncu export of PyTorch (review 18c
# long.csv, 212 characters with the `_3` that tells the five apart)
TORCH = ("void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4, "
         "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::"
         "MulFunctor<float>>, at::detail::Array<char*, 3>>(int, T2, T3)_3")
CUTLASS = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_3_128x128_32x3_nn_align4>(Params)"


def _axes_fraction(display) -> float:
    """The axes' width over the figure's, after the layout a written file gets."""
    figure_bytes(display, "png")
    return display.ax_.get_position().width   # a fraction of the figure's width


# --- F1: long names ------------------------------------------------------------------

def test_chart_name_cuts_a_torch_symbol_to_forty_characters_keeping_its_end():
    # without the return type, the anonymous namespace, the argument list and the template
    # arguments: 'at::native::vectorized_elementwise_kernel<…>_3' (46), then 19 + … + 20
    assert chart_name(TORCH) == "at::native::vectori…mentwise_kernel<…>_3"
    assert len(chart_name(TORCH)) == LABEL_CHARS == 40


def test_chart_name_keeps_a_cutlass_tile_and_short_names_whole():
    # a single template argument is the kernel's identity: cut in the middle, not dropped
    assert chart_name(CUTLASS) == "cutlass::Kernel<cut…x128_32x3_nn_align4>"
    assert chart_name("gemm_fp32_2048") == "gemm_fp32_2048"
    assert chart_name("void k(int)") == "void k(int)"   # fits: left as given
    assert middle_ellipsis("abcdefghij", 5) == "ab…ij"


def test_names_that_shorten_alike_are_cut_where_they_differ():
    # review 18c many.csv: 100 cutlass kernels told apart by `gemm_N` inside their tile
    # name; the middle cut gave all of them one label
    other = CUTLASS.replace("gemm_3_", "gemm_12_")
    assert chart_name(other) == chart_name(CUTLASS)
    got = chart_names([CUTLASS, other, "k1"])
    assert got == {CUTLASS: "cutlass::Kernel<…8gemm_3_128x128_32x3_n…",
                   other: "cutlass::Kernel<…8gemm_12_128x128_32x3_…", "k1": "k1"}


def test_a_212_character_name_leaves_the_axes_their_width():
    name = TORCH
    assert len(name) == 212
    kernels = [Kernel(name, {"fp16": 2e12}, {"DRAM": 4e9}, 0.02),
               Kernel(name + "b", {"fp16": 1e9}, {"DRAM": 4e9}, 0.01)]
    display = plot_roofline(A100, kernels)
    # old code: the axes squeezed to 2 % of the figure's width (a 30-px strip)
    assert _axes_fraction(display) >= 0.80
    first_lines = [p.text.split("\n")[0] for p in display.points if p.text]
    assert first_lines and all(len(t) <= LABEL_CHARS for t in first_lines)
    assert {p.kernel for p in display.points} == {name, name + "b"}   # full name kept


# --- F6: one-line labels say what the % is --------------------------------------------

def test_one_line_labels_say_percent_of_roof():
    # 9 kernels: more than FULL_LABELS (8), so one-line labels; k0 at 1 TFLOP/s, AI 1000
    # on a 312 TFLOP/s roof: 0.32 % of it
    kernels = [Kernel(f"k{i}", {"fp16": 1e12 * (i + 1)}, {"DRAM": 1e9}, 1.0)
               for i in range(9)]
    texts = {p.kernel: p.text for p in plot_roofline(A100, kernels).points}
    assert "\n" not in texts["k0"]
    assert texts["k0"].endswith("0.32 % of roof"), texts["k0"]


# --- F11: size and dpi -----------------------------------------------------------------

def test_size_and_dpi_set_the_png_pixels():
    from PIL import Image

    k = [Kernel("gemm", {"fp16": 2e12}, {"DRAM": 4e9}, 0.02)]
    png = figure_bytes(plot_roofline(A100, k, size=(7.0, 4.5)), "png", dpi=300)
    # 7 in at 300 dpi: 2100 px wide (the 9 x 6 in design scaled by 7/9 and 4.5/6 -> 0.75)
    assert Image.open(io.BytesIO(png)).size[0] == 2100
    assert scale_for((7.0, 4.5)) == 0.75
    default = figure_bytes(plot_roofline(A100, k), "png")
    assert Image.open(io.BytesIO(default)).size[0] == 1350   # 9 in at 150 dpi, as before


def test_size_sets_the_svg_page_size():
    k = [Kernel("gemm", {"fp16": 2e12}, {"DRAM": 4e9}, 0.02)]
    svg = figure_bytes(plot_roofline(A100, k, size=(7.0, 4.5)), "svg").decode()
    assert 'width="504.00pt"' in svg   # 7 in x 72


def test_size_and_dpi_errors():
    assert parse_size("7,4.5") == (7.0, 4.5)
    assert parse_size("page") == (7.0, 4.5)
    for bad in ("7", "7,x", "0.1,3", "1e3,2"):
        with pytest.raises(InputError, match="--size"):
            parse_size(bad)
    with pytest.raises(InputError, match="--dpi"):
        parse_dpi(0)


def test_cli_size_and_dpi(tmp_path, capsys):
    csv = tmp_path / "k.csv"
    csv.write_text("name,flop,bytes,seconds,precision\ngemm,2e12,4e9,0.02,fp16\n")
    png = tmp_path / "c.png"
    assert main(["plot", str(csv), "--on", "A100", "-o", str(png), "--size", "7,4.5",
                 "--dpi", "100"]) == 0
    from PIL import Image

    assert Image.open(png).size[0] == 700
    assert main(["plot", str(csv), "--on", "A100", "-o", str(png), "--size", "3.5,2.6"]) == 0
    # 3.5/9 of 7 pt: the warning says how small the text prints
    assert "2.7 pt" in capsys.readouterr().err
    assert main(["plot", str(csv), "--on", "A100", "-o", str(png), "--size", "3x"]) != 0
    assert "--size" in capsys.readouterr().err


# --- F13: SVG text and title -----------------------------------------------------------

def test_svg_keeps_text_as_text_and_is_titled():
    k = [Kernel("gemm_fp16", {"fp16": 2e12}, {"DRAM": 4e9}, 0.02)]
    svg = figure_bytes(plot_roofline(A100, k, title="my chart"), "svg").decode()
    assert svg.count("<text") >= 5   # old: 0, every glyph a path
    assert "gemm_fp16" in svg
    assert "<dc:title>my chart</dc:title>" in svg


def test_layout_warning_is_passed_on_in_rooflabs_words():
    from rooflab.report.chart import _layout_warnings

    with warnings.catch_warnings(record=True) as made:
        warnings.simplefilter("always")
        warnings.warn("constrained_layout not applied because axes sizes collapsed",
                      UserWarning, stacklevel=1)
    with warnings.catch_warnings(record=True) as out:
        warnings.simplefilter("always")
        _layout_warnings(made)
    assert len(out) == 1 and str(out[0].message).startswith("rooflab: the chart's")


# --- F18: a label's backing keeps the line behind it in its colour ----------------------

def test_label_backing_is_faint_and_the_glyphs_outlined():
    k = [Kernel("gemm_fp16", {"fp16": 2e12}, {"DRAM": 4e9}, 0.02)]
    d = plot_roofline(A100, k)
    backed = [t for t in d.ax_.texts if t.get_bbox_patch() is not None and t.get_text().strip()]
    assert any(t.get_text().startswith("gemm_fp16") for t in backed)
    for t in backed:
        # white at 0.3, not 0.65: a 0.2-grey roof line behind it reads 0.44 grey, not 0.72
        assert t.get_bbox_patch().get_alpha() == 0.3
        assert t.get_path_effects(), t.get_text()
