"""Third audit, report side: the optimisation-steps table holds one row per step, and says
when the steps profiled a different number of launches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.markdown import step_findings, step_rows

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
ROOF = Roof("gpu", compute=(Ceiling(156e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(256e9, level="DRAM"),))


def _k(name, step, idx, seconds, flop, nbytes, calls=1):
    return Kernel(name=f"{name} [{step}]", flop={"fp64": flop}, bytes={"DRAM": nbytes},
                  seconds=seconds, calls=calls,
                  meta={"full_name": name, "step": step, "step_index": idx})


def test_one_row_per_step_with_its_longest_kernel():
    # each step: the main kernel and a 1 ms reduction (OpenACC's '<name>_gpu__red')
    kernels = [_k("main", "s0", 0, 10.0, 1e12, 1e11), _k("red", "s0", 0, 1e-3, 5e5, 4e6),
               _k("main", "s1", 1, 5.0, 5e11, 1e11), _k("red", "s1", 1, 1e-3, 5e5, 4e6)]
    rows = step_rows(analyze(ROOF, kernels))
    # before: four rows, the reduction read as a 10,000x speed-up over the main kernel
    assert [r[:5] for r in rows] == [
        ("s0", "main (+1 other kernel, 1 ms)", "10 s", "-", "1.00x"),
        ("s1", "main (+1 other kernel, 1 ms)", "5 s", "2.00x", "2.00x")]
    found = step_findings(analyze(ROOF, kernels))
    assert any(f.startswith("s0 -> s1: 2.00x faster; FLOP x0.50, DRAM bytes x1.00") for f in found)
    assert not any("s0 -> s0" in f or "s1 -> s1" in f for f in found)


def test_steps_with_different_launch_counts_say_per_launch():
    kernels = [_k("main", "s0", 0, 30.5, 2.6e12, 5.4e11),
               _k("main", "s1", 1, 24.6, 2.19e12, 3.56e11, calls=2)]
    found = step_findings(analyze(ROOF, kernels))
    assert ("s0 -> s1: 1 -> 2 launch(es) profiled; per launch 30.5 s -> 12.3 s (2.48x); the "
            "speed-ups compare totals.") in found


def test_two_ncu_reports_as_steps(tmp_path):
    if not (GPP / "output5.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    pytest.importorskip("ncu_report")
    md = tmp_path / "two.md"
    assert main(["report", str(GPP / "output1.ncu-rep"), str(GPP / "output5.ncu-rep"),
                 "-o", str(md)]) == 0
    text = md.read_text()
    table = [line for line in text.splitlines() if line.startswith("| output")]
    assert len(table) == 2
    assert table[0].startswith("| output1 | sigma_gpp_gpu_34 (+1 other kernel, 102 us) | 30.5 s |")
    assert table[1].startswith("| output5 | sigma_gpp_gpu_34 (+1 other kernel, 201 us) | 24.6 s "
                               "| 1.24x | 1.24x |")
    assert "per launch 30.5 s -> 12.3 s (2.47x)" in text
    assert "299554" not in text


def test_html_trajectory_joins_each_steps_longest_kernel():
    pytest.importorskip("plotly")
    import re

    from rooflab.report.html import html_report

    kernels = [_k("main", "s0", 0, 10.0, 1e12, 1e11), _k("red", "s0", 0, 1e-3, 5e5, 4e6),
               _k("main", "s1", 1, 5.0, 5e11, 2e10), _k("red", "s1", 1, 1e-3, 5e5, 4e6)]
    page = html_report(analyze(ROOF, kernels), None, "steps")
    m = re.search(r'"name":\s*"optimisation steps[^"]*"[^{}]*?"x":\s*\[([^\]]*)\]', page)
    # before: 10 -> 0.125 -> 25 -> 0.125, a zig-zag through the reductions
    assert [float(x) for x in m.group(1).split(",")] == [10.0, 25.0]


def test_report_json_has_the_steps_table(tmp_path, capsys):
    import json

    if not (GPP / "output4.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    files = [str(GPP / f"output{i}.csv") for i in (4, 5, 6)]
    assert main(["report", *files, "--on", "h200", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # before: no 'steps' in --json, only in the .md/.html tables
    assert [s["step"] for s in data["steps"]] == ["output4", "output5", "output6"]
    s4, s5, _ = data["steps"]
    assert s5["speedup_vs_previous"] == pytest.approx(26.29 / 12.294, rel=1e-3)
    # output5.csv: fp64 FLOP / dram__bytes.sum = 1.0932e12 / 164,753,066,112 B
    assert s5["ai"]["DRAM"] == pytest.approx(
        (49_509_059_847 + 307_294_104_053 + 2 * 368_184_303_796) / 164_753_066_112)
    assert s4["speedup_vs_previous"] is None and s4["speedup_vs_first"] == 1.0
    assert any(f.startswith("output4 -> output5: 2.14x faster") for f in data["step_findings"])


def test_labelled_point_is_drawn_over_the_other_levels():
    pytest.importorskip("matplotlib")
    from rooflab.report.chart import plot_roofline
    from rooflab.report.chart_draw import draw

    roof = Roof("gpu", compute=(Ceiling(156e9, precision="fp64", unit="vector"),),
                memory=(Ceiling(256e9, level="DRAM"), Ceiling(1.66e12, level="L2")))
    # output1.ncu-rep's reduction: AI 0.125 at DRAM (memory side), 0.124 at L2 (compute side
    # of the L2 ridge 0.094): the two markers overlap
    red = Kernel(name="red", flop={"fp64": 524_288}, bytes={"DRAM": 4.206e6, "L2": 4.24e6},
                 seconds=101.8e-6)
    d = plot_roofline([roof], [red])
    _, ax = draw(d, None)
    marks = {ln.get_marker(): ln for ln in ax.get_lines() if ln.get_linestyle() == "None"}
    dram, l2 = marks["o"], marks["s"]
    # Okabe-Ito blue / orange (were #2b53d8 / #b26a12)
    assert dram.get_markerfacecolor() == "#0072B2" and l2.get_markerfacecolor() == "#E69F00"
    assert dram.get_zorder() > l2.get_zorder()       # before: both 5, L2 drawn last, on top


def test_report_warns_when_on_names_a_gpu_of_another_capability(tmp_path, capsys):
    if not (GPP / "output1.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    md = tmp_path / "h.md"
    # the GPP steps ran on a compute capability 8.9 GPU; `rooflab ncu --on h200` warns,
    # `rooflab report --on h200` said nothing
    assert main(["report", str(GPP / "output1.csv"), "--on", "h200", "-o", str(md)]) == 0
    warning = ("the kernels were profiled on a compute capability 8.9 GPU, but NVIDIA H200 "
               "SXM is 9.0")
    assert warning in " ".join(capsys.readouterr().out.split()) and warning in md.read_text()
    assert main(["report", str(GPP / "output1.csv"), "--on", "RTX 4060 Laptop GPU"]) == 0
    assert "compute capability" not in capsys.readouterr().out


def test_report_counts_an_llm_step_apart_from_its_kernels(tmp_path, capsys):
    # `rooflab llm --tpot-ms` writes the step's 15 kernels (counted) and the measured
    # whole step beside them: the same work twice, so it is not a 16th kernel.
    from rooflab.cli.main import main

    doc = tmp_path / "d.json"
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--tpot-ms", "15",
                 "--json"]) == 0
    doc.write_text(capsys.readouterr().out)
    md = tmp_path / "r.md"
    assert main(["report", str(doc), "--on", "T4", "-o", str(md)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("15 kernel(s) and the measured whole step 'decode step b=1 (measured)'" in out)
    assert "16 kernel(s)" not in out
    assert "15 kernel(s) and the measured whole step" in " ".join(md.read_text().split())


def test_top_zero_means_all_as_in_ncu(tmp_path, capsys):
    from rooflab.cli.main import main

    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": f"k{i}", "flop": {"fp16": 1e9 * (i + 1)}, "bytes": {"DRAM": 1e8},
         "seconds": 1e-3} for i in range(7)]}))
    assert main(["report", str(path), "--on", "T4", "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert sum(line[:3] in {f"{i}. " for i in range(1, 8)} for line in out.splitlines()) == 7
    assert main(["choose", str(path), "--kind", "gpu", "--top", "0", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["devices"]) > 15
    assert main(["report", str(path), "--on", "T4", "--top", "-1"]) == 2
    assert "--top must be >= 0 (0: all)" in capsys.readouterr().err


def test_latest_step_under_one_percent_is_not_zero(tmp_path, capsys):
    # On a roof far above the kernel, the last step's percent keeps two figures (it read
    # "0 % of its roof ... 358x is left" on the GPP steps).
    slow = Roof("R", compute=(Ceiling(1e15, precision="fp64", unit="vector"),),
                memory=(Ceiling(1e13, level="DRAM"),))
    # (both steps name their kernel "k": the latest step's own point is the one read)
    ks = [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=s,
                 meta={"step": f"s{i}", "step_index": i}) for i, s in enumerate((0.2, 0.1))]
    lines = step_findings(analyze(slow, ks))
    last = next(ln for ln in lines if ln.startswith("Latest step"))
    # 1e9 FLOP in 0.1 s = 10 GFLOP/s; attainable at AI 10: 1e14 -> 0.01 %
    assert "at 0.01 % of its roof" in last and "10000x is left" in last
