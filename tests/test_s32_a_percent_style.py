"""Every percent rooflab prints for people takes the SI space, '54 %', '2.9 %', '0.07 %'
(session 32 A): before, one page mixed both ('IQR 2.9 %' in the probe table, 'interquartile
range 2.9% of the median' in the notes under it, '36%' in the reference kernel table).
CSV and JSON keep their numbers; the CLI still reads '--min-share 1%' and '--carveout 50%'."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from rooflab import Ceiling, Kernel, Roof, analyze

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "examples" / "seeds"
PTS, T4P = str(SEEDS / "pts.json"), str(SEEDS / "t4p.json")
# a digit right against the sign: the old style ('54%', '0.26%', '100.0%')
BARE = re.compile(r"\d%")


def _run(monkeypatch, *args: str):
    from cli_inproc import run_cli

    monkeypatch.setenv("COLUMNS", "250")    # no wrap between a number and its sign
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    return r


def _bare(text: str) -> list[str]:
    return [text[max(0, m.start() - 40):m.end() + 10] for m in BARE.finditer(text)]


@pytest.mark.parametrize("call,want", [
    (("fmt_pct", 54.44), "54 %"),          # decode b=1: 147 / 270 GFLOP/s
    (("fmt_pct", 0.0712), "0.071 %"),      # two figures under 1 %
    (("fmt_pct", 9.996), "9.996 %"),       # kept on its side of the 10 % latency line
    (("fmt_pct", 1492537.0), "1.49e+06 %"),
    (("fmt_pct", 4e-5), "<0.001 %"),
    (("share_text", 87.34), "87.3 %"),
    (("pct_text", 49.95), "49.95 %"),      # not '50 %': the 50 % flag line
])
def test_the_percent_formatters_print_the_space(call, want):
    from rooflab import sides, units

    name, x = call
    fn = getattr(units, name, None) or getattr(sides, name)
    assert fn(x) == want          # was '54%', '0.071%', ... (space=False by default)


def test_reference_kernel_table_percent_of_roof_cells():
    """`rooflab bench`/`demo`'s table. Roof 1 TFLOP/s fp32, 100 GB/s DRAM. 'triad': AI
    1e7 / 1e8 = 0.1, attainable 0.1 x 100 GB/s = 10 GFLOP/s; 1e7 FLOP in 2.5 ms = 4 GFLOP/s
    = 40 % of it. 'slow': 7e5 FLOP in 1 ms = 0.7 GFLOP/s of 1 TFLOP/s = 0.07 %."""
    from rooflab.bench.table import zoo_table

    roof = Roof("toy", compute=(Ceiling(1e12, "fp32", "vector"),),
                memory=(Ceiling(1e11, level="DRAM"),))
    kernels = [Kernel("triad", flop={"fp32": 1e7}, bytes={"DRAM": 1e8}, seconds=2.5e-3),
               Kernel("slow", flop={"fp32": 7e5}, bytes={"DRAM": 1e3}, seconds=1e-3)]
    console = Console(width=200, record=True)
    console.print(zoo_table(analyze(roof, kernels)))
    text = console.export_text()
    cells = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
             for line in text.splitlines() if line.startswith("│")}
    assert cells["triad"][6] == "40 %"           # was '40%'
    assert cells["slow"][6] == "0.07 %"          # was '0.07%'
    assert not _bare(text)


def test_report_position_gain_and_advice_lines(monkeypatch):
    """Seed 004's decode b=1 on the measured T4 (examples/seeds): 147 GFLOP/s at AI 1 under
    270 GB/s = 54 % of the roof; at the roof it takes 8.15 ms instead of 15 ms, 6.85 ms of
    the 19.2 ms of the three kernels (15 + 2.75 + 1.48) = 35.6 % (as the table's cell);
    the advice assumes 80 % of the roof (advice_core.TARGET_EFFICIENCY, seed 000 §6.4)."""
    r = _run(monkeypatch, "report", PTS, "--on", T4P)
    assert "achieved 147 GFLOP/s = 54 % of roof; moves 147 GB/s = 54 % of DRAM bandwidth" \
        in r.stdout
    assert "gain: 6.85 ms saved (35.6 % of the total)" in r.stdout
    advice = [x for x in r.stdout.splitlines() if x.lstrip().startswith("->")]
    assert any("coalesce accesses" in x and "reach 80 % of the roof" in x for x in advice)
    assert not _bare(r.stdout + r.stderr)        # the old text had 9 such, '54%' first


def test_probe_samples_vary_note():
    """Rates 10, 9, 8, 7, 6: inclusive quartiles 7 and 9 around the median 8, IQR 2 / 8 =
    25.0 %; the median 1 - 8 / 10 = 20.0 % below the best (the demo's note under its probe
    table said 'interquartile range 2.9% of the median' beside the table's 'IQR 2.9 %')."""
    from rooflab.model.spread_warnings import samples_vary

    note = samples_vary("fp64 peak", [10, 9, 8, 7, 6])
    assert note.startswith("fp64 peak: samples vary (interquartile range 25.0 % of the "
                           "median, median 20.0 % below the best); ")
    assert not _bare(note)


def test_chart_label_in_an_svg(monkeypatch, tmp_path):
    """The point label under decode b=1's name: '54 % of roof' (147 / 270), as the report
    says it; the SVG keeps its text as text."""
    out = tmp_path / "p.svg"
    _run(monkeypatch, "plot", PTS, "--on", T4P, "-o", str(out))
    svg = out.read_text()
    assert "54 % of roof" in svg                 # was '54% of roof'
    assert not _bare(svg)


def test_train_table_share_column(monkeypatch):
    """tinyllama-1.1b's step on the H100: the optimizer's 9.19 ms of the 26.3 ms floor =
    34.9 % ('35 %'), the step row 100 %."""
    r = _run(monkeypatch, "train", "tinyllama-1.1b", "--on", "H100")
    rows = {line.split("│")[1].strip(): line.split("│")[-2].strip()
            for line in r.stdout.splitlines() if line.startswith("│")}
    assert rows["optimizer.adamw"] == "35 %" and rows["step"] == "100 %"    # '35%', '100%'
    assert "the optimizer is 35 % of the floor" in r.stdout + r.stderr
    assert not _bare(r.stdout + r.stderr)        # the old text had 44


def test_llm_gap_line_range(monkeypatch):
    """Seed 004: 15 ms measured TPOT, 6.51 ms floor, gap 8.49 ms; 311 launches x 5-10 us =
    1.56-3.11 ms of it, 18.3 % to 36.6 %: '(18-37 %; ...' (was '(18%-37%')."""
    r = _run(monkeypatch, "llm", "tinyllama-1.1b", "--on", "T4", "--context", "500",
             "--phase", "decode", "--tpot-ms", "15")
    assert "explain 1.56 ms-3.11 ms of it (18-37 %; CUDA graphs, fusion)" in r.stdout
    assert not _bare(r.stdout + r.stderr)


def test_ncu_table_on_a_recording(monkeypatch, output4):
    """NERSC GPP step 4 on the H200: one kernel, 100.0 % of the time, 88.3 GFLOP/s of the
    fp64 vector peak 34 TFLOP/s = 0.26 % (was '100.0%' and '0.26%')."""
    r = _run(monkeypatch, "ncu", output4, "--on", "h200")
    row = next(line for line in r.stdout.splitlines() if line.startswith("│ sigma_gpp"))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[3] == "100.0 %" and cells[8] == "0.26 %"
    assert not _bare(r.stdout + r.stderr)
