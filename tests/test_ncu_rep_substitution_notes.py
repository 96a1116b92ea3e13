"""Audit 13, CLI output gaps: the 80-column bench table keeps its median/best caption (and
best/floor when it fits), and `rooflab report` / `rooflab plot` say an .ncu-rep's metric
substitutions as `rooflab ncu` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rooflab.cli.bench as bench_cli
from rooflab.bench.check import check_floors
from rooflab.cli.main import main
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
L2_NOTE = ("both kernels: L2 bytes from derived__lts__lts2xbar_bytes.sum, not "
           "lts__t_bytes.sum (not in the file): L2 AI differs from a file that has it")
L1_NOTE = ("both kernels: L1 bytes from derived__l1tex__lsu_writeback_bytes_mem_lg.sum, not "
           "l1tex__t_bytes.sum (not in the file)")


@pytest.fixture
def gpp() -> Path:
    if not (GPP / "output5.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    return GPP


# --- 1: the compact (80-column) bench table ----------------------------------------------
ROOF = Roof("demo measured", "measured",
            compute=(Ceiling(117e9, precision="fp64", unit="vector", provenance="measured"),
                     Ceiling(230e9, precision="fp32", unit="vector", provenance="measured")),
            memory=(Ceiling(37.5e9, level="DRAM", provenance="measured"),))


def _timed_kernels(sort_flags: tuple[str, ...] = ()) -> list[Kernel]:
    n = 4096
    # gemv_fp64 as in the demo (review 11a): 2 FLOP and 8 B per element of a 4096^2 matrix;
    # median 8.45 ms, best 7.07 ms
    gemv = Kernel("gemv_fp64", flop={"fp64": 2 * n * n}, bytes={"DRAM": 8 * n * n},
                  seconds=8.45e-3, samples=(7.07e-3, 8.45e-3, 8.6e-3),
                  meta={"best_s": 7.07e-3, "iqr_rel": 0.01})
    layernorm = Kernel("layernorm_fp32", flop={"fp32": 7 * n * n}, bytes={"DRAM": 8 * n * n},
                       seconds=0.0357, samples=(0.03, 0.0357, 0.036), meta={"best_s": 0.03})
    sort = Kernel("sort_fp64", bytes={"DRAM": 33.6e6}, seconds=0.12,
                  samples=(0.1, 0.12, 0.121), meta={"best_s": 0.1})
    kernels = list(check_floors(ROOF, (gemv, layernorm, sort)))
    if sort_flags:   # a flag as the zoo sets it (its text is what makes the table wide)
        from dataclasses import replace

        kernels[2] = replace(kernels[2], meta={**kernels[2].meta, "flags": sort_flags})
    return kernels


def _print_at_80(kernels, monkeypatch, capsys) -> list[str]:
    monkeypatch.setenv("COLUMNS", "80")
    bench_cli.print_results(analyze(ROOF, kernels), None)
    return capsys.readouterr().out.splitlines()


def test_compact_bench_table_keeps_best_floor_and_the_median_best_caption(monkeypatch,
                                                                          capsys):
    lines = _print_at_80(_timed_kernels(), monkeypatch, capsys)
    assert max(len(ln) for ln in lines) <= 80 and not any("…" in ln for ln in lines)
    text = "\n".join(lines)
    assert "measured/floor" not in text   # the compact table, not the full one
    header = next(ln for ln in lines if ln.startswith("kernel"))
    assert "x floor" in header and "x best" in header
    # floor 8 * 4096^2 B / 37.5 GB/s = 3.579 ms: median 8.45 ms -> 2.36x, best 7.07 -> 1.98x
    row = next(ln for ln in lines if ln.startswith("gemv_fp64"))
    assert "2.36x" in row and "1.98x" in row and "42 %" in row
    # layernorm: 134.2 MB / 37.5 GB/s = 3.579 ms; median 35.7 ms -> 9.97x, best 30 -> 8.38x
    row = next(ln for ln in lines if ln.startswith("layernorm_fp32"))
    assert "9.97x" in row and "8.38x" in row
    flat = " ".join(text.split())
    assert ("% roof and x floor use the kernel's median time, against ceilings that are each "
            "a best sample; x best is the kernel's best sample against the same floor (best "
            "with best, as likwid-bench and STREAM compare)") in flat


def test_compact_bench_table_without_room_for_best_floor_says_where_it_is(monkeypatch,
                                                                         capsys):
    # 'cache-resident' (14 characters, one word) leaves no room for 'x best' in 80 columns
    lines = _print_at_80(_timed_kernels(("cache-resident",)), monkeypatch, capsys)
    assert max(len(ln) for ln in lines) <= 80 and not any("…" in ln for ln in lines)
    header = next(ln for ln in lines if ln.startswith("kernel"))
    assert "x floor" in header and "x best" not in header
    row = next(ln for ln in lines if ln.startswith("gemv_fp64"))
    assert "2.36x" in row and "1.98x" not in row
    assert any(ln.startswith("sort_fp64") and "cache-resident" in ln for ln in lines)
    flat = " ".join(" ".join(lines).split())
    assert ("% roof and x floor use the kernel's median time, against ceilings that are each "
            "a best sample; best/floor (in -o table.csv or a wider terminal) is the kernel's "
            "best sample against the same floor") in flat


def test_compact_table_of_untimed_kernels_has_no_best_column_nor_caption(monkeypatch,
                                                                         capsys):
    # kernels given with one time (no samples): no best/floor to show, nothing to explain
    k = Kernel("given", flop={"fp64": 1e9}, bytes={"DRAM": 1e9}, seconds=0.2)
    table = bench_cli.compact_table(analyze(ROOF, list(check_floors(ROOF, (k,)))))
    assert table.caption is None
    assert [c.header for c in table.columns] == ["kernel", "AI", "time", "achieved",
                                                 "% roof", "bound", "x floor", "flags"]


# --- 2: .ncu-rep metric substitutions in report and plot ---------------------------------
def test_report_says_the_ncu_rep_metric_substitutions_once(gpp, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["report", str(gpp / "output5.ncu-rep")]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert flat.count("L2 bytes from derived__lts__lts2xbar_bytes.sum") == 1
    assert flat.count("L1 bytes from derived__l1tex__lsu_writeback_bytes_mem_lg.sum") == 1
    assert L2_NOTE in flat and L1_NOTE in flat
    # the CSV export has lts__t_bytes / l1tex__t_bytes: no substitution, nothing to say
    assert main(["report", str(gpp / "output5.csv")]) == 0
    assert "bytes from" not in capsys.readouterr().out


def test_report_json_and_markdown_carry_the_notes_with_the_ai_they_explain(gpp, tmp_path,
                                                                          capsys):
    md = tmp_path / "gpp.md"
    assert main(["report", str(gpp / "output5.ncu-rep"), "--json", "-o", str(md)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any(n.startswith(L2_NOTE) for n in data["notes"])
    assert any(n.startswith(L1_NOTE) for n in data["notes"])
    assert "derived__l1tex__lsu_writeback_bytes_mem_lg.sum" in md.read_text()
    # sigma_gpp_gpu_34, 2 launches in the report: 2.1863e12 FLOP over 1.3861e12 L1 bytes
    # (lsu writeback) = L1 AI 1.58; its CSV export (1 launch, l1tex__t_bytes): 1.0932e12 /
    # 4.5510e11 = 2.40, the difference the note explains
    k = max(data["kernels"], key=lambda k: k["seconds"])
    flop = sum(k["flop"].values())
    assert flop == pytest.approx(2.18634e12, rel=1e-4)
    assert k["bytes"]["L1"] == pytest.approx(1.38610e12, rel=1e-4)
    assert flop / k["bytes"]["L1"] == pytest.approx(1.577, abs=0.001)


def test_plot_says_the_ncu_rep_metric_substitutions_on_stderr(gpp, tmp_path, capsys):
    assert main(["plot", str(gpp / "output5.ncu-rep"), "-o", str(tmp_path / "a.png")]) == 0
    err = capsys.readouterr().err
    flat = " ".join(err.split())
    assert flat.count("L2 bytes from derived__lts__lts2xbar_bytes.sum") == 1
    assert f"note: {L2_NOTE}" in flat and f"note: {L1_NOTE}" in flat
    assert main(["plot", str(gpp / "output5.csv"), "-o", str(tmp_path / "b.png")]) == 0
    assert "bytes from" not in capsys.readouterr().err


def test_metric_notes_hold_only_ncu_kernels():
    from rooflab.cli.common import metric_notes  # one copy, shared by ncu/report/plot

    # report/plot mix profilers: a torch op's notes are not ncu metric substitutions, and
    # do not make 'both kernels' of one ncu kernel
    ncu = Kernel("k", flop={"fp64": 1.0}, bytes={"L2": 1.0}, seconds=1.0,
                 meta={"source": "ncu",
                       "notes": ["L2 bytes from derived__lts__lts2xbar_bytes.sum"]})
    op = Kernel("aten::mm", flop={"fp32": 1.0}, bytes={"DRAM": 1.0}, seconds=1.0,
                meta={"source": "torch.profiler", "notes": ["bytes estimated from shapes"]})
    (note,) = metric_notes([ncu, op])
    assert note.startswith("k: L2 bytes from derived__lts__lts2xbar_bytes.sum, not "
                           "lts__t_bytes.sum (not in the file)")
