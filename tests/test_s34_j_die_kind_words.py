"""One die of an MI250X made in memory (dies.recorded_roof, as `rooflab rocprof --on MI250X`
builds it) reads "derived" wherever a roof's kind is printed: the profile-import roof line,
the HTML report's header, hover and legend, the Markdown report (session 34 J). Before, these
formatted roof.kind, the package's "nominal", over halved (derived) ceilings."""

from __future__ import annotations

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model.analysis import analyze
from rooflab.model.dies import recorded_roof
from rooflab.model.kernel import Kernel
from rooflab.report.html import html_report
from rooflab.report.html_roofs import legend_name
from rooflab.report.markdown import markdown_report

# the rocprof v1 wide CSV of tests/test_rocprof.py: one triad launch (10 us)
WIDE = """\
Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,\
TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,TCC_EA_WRREQ_64B_sum
0,triad,2,0,1000,11000,16384,32768,0,16384,16384
"""

WORDS = "(derived: the package's / 2)"


def _die():
    die, said = recorded_roof(load_roof("MI250X"))
    assert die.name == "AMD Instinct MI250X, one die" and die.kind == "nominal" and said
    return die


def test_rocprof_on_mi250x_roof_line_says_derived(tmp_path, capsys):
    p = tmp_path / "results.csv"
    p.write_text(WIDE)
    assert main(["rocprof", str(p), "--on", "MI250X"]) == 0
    out = capsys.readouterr().out
    assert f"roof: AMD Instinct MI250X, one die {WORDS}, from --on MI250X" in out
    assert "one die (nominal)" not in out


def test_html_and_markdown_of_an_in_memory_die_say_derived():
    die = _die()
    # 2 x 64 x 16384 FLOP over 64 x 48 KiB-ish of DRAM: any placed kernel will do
    k = Kernel("triad", flop={"fp32": 2 * 64 * 16384}, bytes={"DRAM": 64 * 49152},
               seconds=10e-6)
    a = analyze(die, [k])
    page = html_report(a)
    assert "Roof: AMD Instinct MI250X, one die (derived: the package&#x27;s / 2)" in page
    assert "one die (nominal)" not in page
    md = markdown_report(a)
    assert f"Roof: **AMD Instinct MI250X, one die** {WORDS}" in md
    # a die ceiling's own provenance is derived (the package's 3.28 TB/s / 2 = 1.64 TB/s),
    # as its roof's label now: no "(nominal roof)" beside it when several roofs are drawn
    dram = next(c for c in die.memory if c.level == "DRAM")
    assert dram.value == 3.2768e12 / 2 and dram.provenance == "derived"
    assert legend_name(dram, die, "DRAM 1.64 TB/s", roofs=True) == "derived DRAM 1.64 TB/s"
