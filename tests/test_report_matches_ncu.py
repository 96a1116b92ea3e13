"""Review 13v F-B, F-C, F-F, F-G, F-H: `report` and `plot` say what `ncu` and `ai` say.

F-C: a 0-FLOP copy in report's "Kernels on the roof" (.md, .html, --json) shows the bytes/s it
moved and its percent of the level's bandwidth, as `rooflab ncu` does (one implementation).
F-G: the base-clock note of `ncu` in report (terminal, .md, .html, --json) and plot.
F-H: the hover of a launch-bound untimed point names both floors, as `ai` does.
F-B: the best-achieved envelope holds the kernel that set it at 100 %, labelled honestly.
F-F: kernel-file rows of one name that are not level rows of one kernel get distinct names.
"""

from __future__ import annotations

import json

import pytest
from test_profiler_assumption_notes import GPP_FP32, GPP_FP64, GPP_T, _gpp  # sigma_gpp_gpu_29

from rooflab.cli.main import main
from rooflab.errors import InputWarning
from rooflab.model import Kernel, analyze

# --- F-C: a copy kernel's bandwidth in report's kernel table ------------------------------

# seed t's copyKernel: 8e8 B in 450 us on A100 (DRAM 2.039 TB/s): 8e8 / 450e-6 = 1.778 TB/s,
# 1.778e12 / 2.039e12 = 87.19 %; beside an sgemm with FLOP
COPY_CSV = ("name,flop,bytes,seconds,precision,level\n"
            "sgemm,2147483648,20971520,1.1e-3,fp32,DRAM\n"
            "copyKernel,0,8e8,450e-6,fp32,DRAM\n")
COPY_BW = 8e8 / 450e-6
COPY_PCT = 100 * COPY_BW / 2.039e12


def _copy_file(tmp_path):
    p = tmp_path / "seedt.csv"
    p.write_text(COPY_CSV)
    return p


def test_copy_kernel_row_in_markdown_shows_its_bandwidth(tmp_path, capsys):
    out = tmp_path / "s.md"
    assert main(["report", str(_copy_file(tmp_path)), "--on", "A100", "-o", str(out)]) == 0
    text = out.read_text()
    assert round(COPY_PCT, 2) == 87.19
    # old: "| copyKernel | fp32 vector | DRAM | 0 | 0 FLOP/s | 0 FLOP/s | - | memory | ..."
    assert ("| copyKernel | fp32 vector | DRAM | 0 | 1.78 TB/s | 2.04 TB/s | 87 % | memory "
            "| DRAM | 450 us |") in text
    assert ("copyKernel: no FLOP, so achieved is the bytes/s it moved and % roof is of the "
            "DRAM bandwidth ceiling") in text
    assert "| copyKernel | fp32 vector | DRAM | 0 | 0 FLOP/s | 0 FLOP/s | - |" not in text


def test_copy_kernel_row_in_html_shows_its_bandwidth(tmp_path, capsys):
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    out = tmp_path / "s.html"
    assert main(["report", str(_copy_file(tmp_path)), "--on", "A100", "-o", str(out)]) == 0
    text = out.read_text()
    assert ("<th scope='row'>copyKernel</th><td>fp32 vector</td><td>DRAM</td><td>0</td>"
            "<td>1.78 TB/s</td><td>2.04 TB/s</td><td>87 %</td>") in text


def test_copy_kernel_in_report_json_has_percent_of_bandwidth(tmp_path, capsys):
    assert main(["report", str(_copy_file(tmp_path)), "--on", "A100", "--json"]) == 0
    points = {p["kernel"]: p for p in json.loads(capsys.readouterr().out)["analysis"]}
    copy = points["copyKernel"]
    assert copy["achieved_bytes_per_s"] == pytest.approx(COPY_BW)
    assert copy["percent_of_bandwidth"] == pytest.approx(COPY_PCT)     # old: no such key
    assert points["sgemm"]["percent_of_bandwidth"] is None


def test_ncu_and_report_share_one_bandwidth_helper(tmp_path):
    from rooflab.cli import profiled
    from rooflab.hardware.resolve import load_roof
    from rooflab.ingest.kernelfile import load_kernels
    from rooflab.model import bandwidth_reached

    assert profiled.bandwidth_of is bandwidth_reached.bandwidth_of
    an = analyze(load_roof("A100"), load_kernels(str(_copy_file(tmp_path))))
    row = next(r for r in profiled.table_rows(an) if r["kernel"] == "copyKernel")
    assert row["percent_of_bandwidth"] == pytest.approx(COPY_PCT)


# --- F-G: the base-clock note in report and plot ------------------------------------------

# judged at boost on request: without '@boost' the compute ceilings scale to the recorded
# clock (review s26 r2 F1; tests/test_s26_ncu_clock.py)
ON_4060 = "RTX 4060 Laptop GPU@boost"
CLOCK_WORDS = ("the kernels ran at 1.62 GHz", "assume 2.37 GHz (boost)", "at most 68 %")


@pytest.fixture
def output1(fixtures_dir):
    path = fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} is absent")
    return str(path)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_report_on_a_boost_catalog_roof_says_the_profiled_clock(output1, capsys):
    # 1.62 / 2.37 = 68 % (review 12b J, said by `ncu` only before)
    assert main(["report", output1, "--on", ON_4060]) == 0
    out = _flat(capsys.readouterr().out)
    assert all(w in out for w in CLOCK_WORDS)


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_report_files_say_the_profiled_clock(output1, tmp_path, capsys, suffix):
    out = tmp_path / f"g{suffix}"
    assert main(["report", output1, "--on", ON_4060, "-o", str(out)]) == 0
    text = _flat(out.read_text())
    assert all(w in text for w in CLOCK_WORDS)      # old: grep -c GHz = 0


def test_report_json_notes_say_the_profiled_clock(output1, capsys):
    assert main(["report", output1, "--on", ON_4060, "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(all(w in n for w in CLOCK_WORDS) for n in notes)


def test_plot_on_a_boost_catalog_roof_says_the_profiled_clock(output1, tmp_path, capsys):
    assert main(["plot", output1, "--on", ON_4060, "-o", str(tmp_path / "g.png")]) == 0
    err = _flat(capsys.readouterr().err)
    assert all(w in err for w in CLOCK_WORDS)


# --- F-H: the hover of a launch-bound untimed point names both floors ---------------------

def test_html_hover_names_the_launch_and_the_work_floor(tmp_path, capsys):
    # 12d's decode attention on H100: 4.096 MFLOP, work floor 155 ns; one launch 5 us binds
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    assert main(["ai", "attention", "--heads", "32", "--kv-heads", "4", "--q-len", "1",
                 "--kv-len", "500", "--head-dim", "64", "--on", "h100", "--json"]) == 0
    att = tmp_path / "att.json"
    att.write_text(capsys.readouterr().out)
    out = tmp_path / "att.html"
    assert main(["report", str(att), "--on", "h100", "-o", str(out)]) == 0
    text = out.read_text()
    # old: "bound: overhead; floor 155 ns"
    assert "bound: overhead; time floor 5 us (launch); work floor 155 ns" in text
    assert "bound: overhead; floor 155 ns" not in text


def test_hover_floor_of_a_work_bound_point_is_unchanged():
    from rooflab.hardware.resolve import load_roof
    from rooflab.report.html_hover import floor_words

    # 1e12 fp16 FLOP, 1e9 B on H100 (989.5 TFLOP/s tensor): work floor 1.01 ms >> 5 us
    (p,) = analyze(load_roof("h100"), [Kernel("mm", {"fp16": 1e12}, {"DRAM": 1e9},
                                              unit="tensor")]).points
    assert floor_words(p) == "floor 1.01 ms"


# --- F-B: the envelope holds the kernel that set it at 100 % ------------------------------

def test_envelope_holds_its_mixed_kernel_at_exactly_100_percent():
    from rooflab.ingest.profile_import import envelope_roof, envelope_words

    roof = envelope_roof([_gpp()])
    (c,) = roof.compute
    # (1.9638e12 + 4.908e10) / 22.765 s = 88.4 GFLOP/s (12b H's fp64 alone: 86.3, 102 %)
    assert c.value == pytest.approx((GPP_FP64 + GPP_FP32) / GPP_T)
    assert round(c.value / 1e9, 1) == 88.4
    (p,) = analyze(roof, [_gpp()]).points
    assert p.percent_of_roof == pytest.approx(100.0)
    assert p.floor_s == pytest.approx(GPP_T)
    assert envelope_words(roof) == [
        "fp64 vector 88.4 GFLOP/s (sigma_gpp_gpu_29's FLOP, fp32 included: fp64 alone "
        "86.3 GFLOP/s)"]


def test_envelope_with_a_minor_precision_on_its_own_ceiling():
    from rooflab.ingest.profile_import import envelope_roof

    # a: 2e9 fp64 + 1e9 fp32 in 1 s; b: 4e9 fp32 in 1 s sets fp32 at 4 GFLOP/s. a's fp32 takes
    # 1e9 / 4e9 = 0.25 s, so fp64 needs 2e9 / 0.75 s = 2.667 GFLOP/s (its own rate alone,
    # 2 GFLOP/s, put it at 3e9 / (3e9 / 1.25 s) = 125 %)
    a = Kernel("a", {"fp64": 2e9, "fp32": 1e9}, {"DRAM": 1e8}, seconds=1.0, unit="vector")
    b = Kernel("b", {"fp32": 4e9}, {"DRAM": 1e8}, seconds=1.0, unit="vector")
    roof = envelope_roof([a, b])
    ceilings = {c.precision: c.value for c in roof.compute}
    assert ceilings == pytest.approx({"fp64": 2e9 / 0.75, "fp32": 4e9})
    pcts = {p.kernel: p.percent_of_roof for p in analyze(roof, [a, b]).points}
    assert pcts == pytest.approx({"a": 100.0, "b": 100.0})


def test_single_precision_envelope_is_unchanged():
    from rooflab.ingest.profile_import import envelope_roof, envelope_words

    k = Kernel("k", {"fp64": 2e9}, {"DRAM": 1e8}, seconds=1.0)
    roof = envelope_roof([k])
    assert [c.value for c in roof.compute] == [2e9] and envelope_words(roof) == []


def test_report_of_the_gpp_kernel_without_a_roof_reads_100_percent(fixtures_dir, capsys):
    path = fixtures_dir / "ncu" / "nersc-gpp" / "output.csv"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} is absent")
    assert main(["report", str(path)]) == 0
    out = _flat(capsys.readouterr().out)
    assert "achieved 88.4 GFLOP/s = 100 % of roof" in out        # old: 86.3 roof, 102 %
    assert "102 %" not in out and "(23.3 s" not in out
    assert "fp64 alone 86.3 GFLOP/s" in out
    assert "│ 1.00x │" in out


# --- F-F: rows of one name that are not levels of one kernel -----------------------------

C2 = ("name,flop,bytes,seconds,precision,level\n"
      "gemm,1e9,1e8,1e-3,fp16,DRAM\n"
      "gemm,1e9,4e8,2e-3,fp16,L2\n")


def test_disagreeing_rows_of_one_name_get_distinct_names(tmp_path):
    from rooflab.ingest.kernelfile import load_kernels

    p = tmp_path / "c2.csv"
    p.write_text(C2)
    with pytest.warns(InputWarning) as got:
        ks = load_kernels(str(p))
    assert [(k.name, k.seconds, dict(k.bytes)) for k in ks] == [
        ("gemm", 1e-3, {"DRAM": 1e8}), ("gemm #2", 2e-3, {"L2": 4e8})]
    (w,) = [str(x.message) for x in got]
    assert w.startswith(f"{p}:3: kernel 'gemm': named 'gemm #2' (its first row: line 2)")


def test_level_rows_of_one_kernel_still_join(tmp_path):
    from rooflab.ingest.kernelfile import load_kernels

    p = tmp_path / "lv.csv"
    p.write_text("name,flop,bytes,seconds,precision,level\n"
                 "gemm,1e9,1e8,1e-3,fp16,DRAM\ngemm,1e9,4e8,1e-3,fp16,L2\n")
    (k,) = load_kernels(str(p))
    assert (k.name, dict(k.bytes)) == ("gemm", {"DRAM": 1e8, "L2": 4e8})


def test_json_repeats_get_distinct_names_without_taking_a_used_one(tmp_path):
    from rooflab.ingest.kernelfile import load_kernels

    p = tmp_path / "k.json"
    p.write_text(json.dumps({"kernels": [
        {"name": "gemm", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3},
        {"name": "gemm #2", "flop": {"fp16": 2e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3},
        {"name": "gemm", "flop": {"fp16": 3e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}))
    with pytest.warns(InputWarning, match=r"kernels\[2\] 'gemm': named 'gemm #3'"):
        ks = load_kernels(str(p))
    assert [k.name for k in ks] == ["gemm", "gemm #2", "gemm #3"]


def test_report_keeps_two_same_name_kernels_apart(tmp_path, capsys):
    p = tmp_path / "c2.csv"
    p.write_text(C2)
    assert main(["report", str(p), "--on", "a100"]) == 0
    captured = capsys.readouterr()
    out = _flat(captured.out)
    # 1 ms placed (33.3 %), 2 ms at L2 only unplaced (66.7 %): old "2 more than 2x below"
    # and the placed one printed twice
    assert "2 kernel(s), 3 ms measured; 1 more than 2x below their roof; 1 not placed" in out
    assert out.count("│ gemm │") == 1 and "│ 2 │" not in out
    assert "gemm #2 (2 ms, 66.7 % of the time)" in out
    assert "named 'gemm #2'" in captured.err


def test_report_json_has_both_kernels(tmp_path, capsys):
    p = tmp_path / "c2.csv"
    p.write_text(C2)
    assert main(["report", str(p), "--on", "a100", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [x["kernel"] for x in d["analysis"]] == ["gemm"]
    assert [u["kernel"] for u in d["unplaced"]] == ["gemm #2"]
    assert sum(x["flagged"] for x in d["diagnosis"]) == 1
