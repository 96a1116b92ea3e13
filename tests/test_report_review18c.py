"""Review 18c's report findings: the HTML report without JavaScript (F2), its chart's
colours and ridge points (F3), size, sorting, print, ticks, long names, banner (F15), and the
loaded probe's note said once (F16)."""

import base64
import math
import re

import pytest

from rooflab.hardware.profile import MachineProfile
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.report.chart_parts import COMPUTE_BOUND_COLOR, MEMORY_BOUND_COLOR

pytest.importorskip("plotly")

# A 2-core EPYC measured at 118 GFLOP/s fp64 and 26.7 GB/s DRAM (the demo's profile):
# ridge 118e9 / 26.7e9 = 4.42 FLOP/B.
EPYC = Roof("EPYC measured", kind="measured",
            compute=(Ceiling(118e9, precision="fp64", unit="vector", provenance="measured"),),
            memory=(Ceiling(26.7e9, level="DRAM", provenance="measured"),))
# triad: AI 2e6 / 24e6 = 0.083, left of the ridge; gemm: 2 x 1024^3 FLOP on 25 MB, AI 85.9,
# right of it (the demo's gemm_fp64_1024, 50 % of roof: compute-bound).
TRIAD = Kernel("triad_fp64", {"fp64": 2e6}, {"DRAM": 24e6}, seconds=1.2e-3)
GEMM = Kernel("gemm_fp64_1024", {"fp64": 2 * 1024**3}, {"DRAM": 25e6}, seconds=0.0364)
ANALYSIS = analyze(EPYC, [TRIAD, GEMM])
# The probe's own words (probe/cpu/flags.py machine_load_notes), 170 characters.
LOAD_NOTE = ("other processes used 60% of the CPUs while the probe ran (and the load average "
             "was 2.7 on 2 CPUs before it started): measured ceilings read low; rerun on a "
             "quiet machine")
LOAD = {"notes": [LOAD_NOTE], "other_cpu_share": 0.6}
LOADED = MachineProfile(host={"name": "epyc", "kind": "cpu", "machine_load": LOAD},
                        measured=EPYC, extras={"machine_load": LOAD})
# A PyTorch symbol as an nsys/ncu export names it (~190 characters); the _N tells apart
# the five instances.
TORCH = ("void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4, "
         "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::"
         "MulFunctor<float>>, at::detail::Array<char*, 3>>(int, T2, T3)_{}")


@pytest.fixture(scope="module")
def page():
    from rooflab.report.html import html_report

    return html_report(ANALYSIS)


def _static_svg(page: str) -> str:
    m = re.search(r"<noscript><img class='static-chart' src='data:image/svg\+xml;base64,"
                  r"([A-Za-z0-9+/=]+)' alt='([^']*)'", page)
    assert m, "no static chart inside <noscript>"
    return base64.b64decode(m.group(1)).decode("utf-8")


# --- F2: without JavaScript -----------------------------------------------------------

def test_without_javascript_the_chart_is_a_static_svg_with_alt_text(page):
    svg = _static_svg(page)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    alt = re.search(r"alt='([^']*)'", page[page.index("<noscript><img"):]).group(1)
    # roof, kernels per side, the ridge (118 / 26.7 = 4.42) and the top kernel
    assert alt.startswith("Roofline chart on EPYC measured (measured): 2 kernels, "
                          "1 compute-bound side, 1 memory-bound side; ridge AI*=4.42 "
                          "(fp64 vector / DRAM); top kernel to work on: ")
    # the plotly chart carries the same words; its 620-px box and "hover" hide without JS
    assert re.search(r"<figure class='chart' aria-label='Roofline chart on EPYC", page)
    assert "<noscript><style>.js-only,.js-chart{display:none}</style></noscript>" in page
    assert "<div class='js-chart'><div" in page


def test_hover_is_said_only_where_scripts_run(page):
    hover = page.index("Hover or tap a point")
    assert page.rfind("<span class='js-only'>", 0, hover) > page.rfind("</span>", 0, hover)
    assert "<noscript>The chart is a static image (JavaScript is off)" in page


# --- F3: colours by side, ridge points ---------------------------------------------------

def test_points_are_coloured_by_their_side_of_the_ridge():
    from rooflab.report.html import figure

    fig = figure(ANALYSIS)
    (pts,) = [t for t in fig.data if t.name == "kernels @ DRAM"]
    colours = dict(zip(pts.hovertext, pts.marker.color, strict=True))
    by_kernel = {re.match(r"<b>([^<]+)</b>", h).group(1): c for h, c in colours.items()}
    # the PNG's colours: triad (AI 0.083 < 4.42) blue, gemm (AI 85.9 > 4.42) orange
    assert by_kernel == {"triad_fp64": MEMORY_BOUND_COLOR, "gemm_fp64_1024": COMPUTE_BOUND_COLOR}
    assert pts.marker.symbol == "circle"       # the level stays in the symbol
    # the legend says which colour is which side, in the same colours
    assert fig.layout.legend.title.text == (
        f"click to toggle<br><sub><span style='color:{MEMORY_BOUND_COLOR}'>●</span> / "
        f"memory-bound side (left of its ridge)  <span style='color:{COMPUTE_BOUND_COLOR}'>"
        f"●</span> – compute-bound side (right of its ridge)</sub>")


def test_the_ridge_point_is_marked_with_its_ai():
    from rooflab.report.html import figure

    fig = figure(ANALYSIS)
    (ridge,) = [t for t in fig.data if t.name and t.name.startswith("ridge points")]
    assert ridge.marker.symbol == "diamond"
    assert ridge.x[0] == pytest.approx(118e9 / 26.7e9) and ridge.y[0] == pytest.approx(118e9)
    # its AI beside it (an annotation: a trace's text would read as a kernel's name),
    # below right as the PNG writes it, where that is free
    (note,) = [a for a in fig.layout.annotations if (a.name or "").startswith("ridge:")]
    assert note.text == "AI*=4.42"
    assert (note.x, note.y) == (pytest.approx(math.log10(118e9 / 26.7e9)),
                                pytest.approx(math.log10(118e9)))
    assert (note.xanchor, note.yanchor) == ("left", "top")


# --- F15: ticks, names, tables, print, size, banner ------------------------------------

def test_rate_ticks_read_as_rooflab_writes_rates():
    from rooflab.report.html_figure import rate_ticks

    # an A100's range, 1e12..1e15.3 on 150 px (45 px a decade): decades only, and
    # "1 PFLOP/s" where plotly wrote "10^15"
    ticks = rate_ticks((12.0, 15.3), 150.0)
    assert ticks["ticktext"] == ["1 TFLOP/s", "10 TFLOP/s", "100 TFLOP/s", "1 PFLOP/s"]
    assert ticks["tickvals"] == pytest.approx([1e12, 1e13, 1e14, 1e15])
    # one decade on 420 px has room for 2 and 5 (where plotly wrote bare "2" and "5"),
    # labelled with their unit
    assert rate_ticks((9.0, 10.0), 420.0)["ticktext"] == [
        "1 GFLOP/s", "2 GFLOP/s", "5 GFLOP/s", "10 GFLOP/s"]


def test_the_plotly_axis_uses_rate_ticks():
    from rooflab.report.html import figure

    y = figure(ANALYSIS).layout.yaxis
    assert y.tickmode == "array" and y.exponentformat is None
    assert all(t.endswith("FLOP/s") for t in y.ticktext)


def test_long_kernel_names_are_shortened_and_kept_apart():
    from rooflab.report.html_figure import chart_name
    from rooflab.report.label_names import LABEL_CHARS

    names = [chart_name(TORCH.format(i)) for i in range(5)]
    assert len(TORCH.format(0)) > 190 and LABEL_CHARS == 40
    assert all(len(n) <= 40 and n.startswith("at::native::") for n in names)
    assert [n[-2:] for n in names] == ["_0", "_1", "_2", "_3", "_4"]
    assert chart_name("gemm_fp64_1024") == "gemm_fp64_1024"


def test_long_names_get_names_on_the_chart():
    """review 18c: long.html named 0 of 5 kernels (no room for 190 characters)."""
    from rooflab.report.html import figure

    kernels = [Kernel(TORCH.format(i), {"fp32": 2e12 + i * 1e11}, {"DRAM": 4e9 + i * 1e8},
                      seconds=0.02 + i * 1e-3) for i in range(5)]
    fig = figure(analyze(EPYC, kernels))
    (pts,) = [t for t in fig.data if t.name == "kernels @ DRAM"]
    named = [t for t in pts.text if t]
    assert named and all(t.startswith("at::native::vectori…") for t in named)
    assert all(h.startswith("<b>void at::native::") for h in pts.hovertext)   # whole


def test_tables_are_sortable_and_the_page_prints(page):
    from rooflab.report.html_page import SORT_SCRIPT

    assert "<table class='sortable' aria-labelledby=" in page
    assert f"<script>{SORT_SCRIPT}</script>" in page
    assert "document.querySelectorAll('table.sortable')" in SORT_SCRIPT
    assert "@media print{" in page and "break-inside:avoid" in page


def test_the_page_says_what_makes_it_big(page):
    from plotly.offline import get_plotlyjs

    mb = len(get_plotlyjs().encode("utf-8")) / 1e6
    assert f"plotly.js ({mb:.1f} MB of it) is inlined" in page
    assert page.count(get_plotlyjs()[:2000]) == 1      # once


def test_a_long_list_of_kernels_folds_under_its_cause_and_count():
    from rooflab.report.html_page import care_html

    names = ", ".join(f"k{i}_elementwise (AI {i + 5})" for i in range(81))
    w = (f"81 kernel(s) have an AI too high for their op: {names}. Their FLOP or bytes are "
         f"most likely miscounted.")
    out = care_html([w, "1 kernel(s) run faster than the roof allows: a (1.33x above). "
                        "The roof is too low."])
    assert out.count("<li>") == 2 and out.count("<details>") == 1
    assert ("<summary><span class='flag'>81 kernel(s) have an AI too high for their op"
            "</span>. Their FLOP or bytes are most likely miscounted.</summary>") in out
    assert "k80_elementwise (AI 85)" in out.split("</summary>")[1]
    # a short list stays as it was written
    assert "<li>1 kernel(s) run faster than the roof allows: a (1.33x above). The roof is " \
           "too low.</li>" in out
    assert care_html([]) == ""


# --- F16: the loaded probe said once ------------------------------------------------------

def _terminal_text(analysis, profile) -> str:
    from rich.console import Console

    from rooflab.report.markdown import machine_for
    from rooflab.report.terminal import terminal_summary

    console = Console(record=True, width=400, color_system=None)
    diags = diagnose(analysis, machine_for(analysis, profile))
    console.print(terminal_summary(analysis, diags, profile=profile))
    return console.export_text()


def test_the_load_note_is_said_once_in_the_terminal_report():
    text = _terminal_text(ANALYSIS, LOADED)
    assert text.count(LOAD_NOTE) == 1
    assert "It makes the advice for 2 kernel(s) uncertain (marked 'uncertain (loaded " \
           "probe, see top)' there)." in text
    assert "uncertain (loaded probe, see top)" in text.split(LOAD_NOTE)[1]
    assert "the roof's probe shared the machine (60 % other load; see top)" in text


def test_the_load_note_is_said_once_in_markdown_and_html():
    from rooflab.report.html import html_report
    from rooflab.report.markdown import markdown_report

    md = markdown_report(ANALYSIS, LOADED)
    # the read-with-care line only; no advice row repeats it
    assert md.count(LOAD_NOTE) == 1
    assert md.count("uncertain (loaded probe, see top)") >= 2
    page = html_report(ANALYSIS, LOADED)
    assert page.count(LOAD_NOTE) == 1


def test_short_doubt_keeps_the_other_reasons():
    from rooflab.report.markdown import short_doubt

    noisy = ("the work reaches 80% of the roof; uncertain: its timing samples spread 35% "
             f"(IQR / median, over 5%); the roof's probe shared the machine (60% other load: "
             f"{LOAD_NOTE})")
    assert short_doubt(noisy) == ("the work reaches 80% of the roof; uncertain: its timing "
                                  "samples spread 35% (IQR / median, over 5%); the roof's "
                                  "probe shared the machine (60% other load; see top)")
    assert short_doubt(f"x; uncertain: the roof's probe shared the machine (60% other load: "
                       f"{LOAD_NOTE})") == "x; uncertain (loaded probe, see top)"
    assert short_doubt("nothing to shorten") == "nothing to shorten"
