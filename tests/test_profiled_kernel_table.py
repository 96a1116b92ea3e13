"""Review 12a #14 and 12b A, I, K: the profiler verbs' kernel table, their -o x.csv and
`compare` tell the whole story.

- 12b A: -o x.csv keeps a mixed-precision kernel's FLOP per precision (flop_<precision>
  columns) and every level it was measured at, so `rooflab report x.csv` reads back the
  kernel `rooflab ncu` analysed (it held the whole 2.2 GFLOP to fp32: 4 %, latency).
- 12a #14: a kernel without FLOP (a copy) shows the bandwidth it reached and its % of the
  level's bandwidth ceiling, not "0 FLOP/s" and "-".
- 12b K: a kernel with no point is listed below the table (not counted as cut by --top);
  a point above its roof gets report's "read with care" line.
- 12b I: compare shows the FLOP before -> after and the achieved FLOP/s change, and says
  when the work differs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
OP = "sm__sass_thread_inst_executed_op_"
HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
        '"Metric Value"')


def ncu_csv(path: Path, kernels: dict[str, dict[str, tuple[str, str]]], cc: str = "8.9"):
    """An `ncu --csv` details page: {kernel: {metric: (unit, value)}}."""
    lines = [HEAD]
    for i, (name, metrics) in enumerate(kernels.items()):
        for metric, (unit, value) in metrics.items():
            lines.append(f'"{i}","1","app","h","{name}","1","7","(256, 1, 1)","(1024, 1, 1)",'
                         f'"0","{cc}","Command line profiler metrics","{metric}","{unit}",'
                         f'"{value}"')
    path.write_text("\n".join(lines) + "\n")
    return path


def mixed(time_ns: str = "10,000,000") -> dict[str, tuple[str, str]]:
    """review 12b A's kernel: 5e8 DFMA + 6e8 FFMA (1e9 fp64 + 1.2e9 fp32 FLOP), 100 MB
    DRAM, 200 MB L2, 400 MB L1, 10 ms."""
    return {"dram__bytes.sum": ("byte", "100,000,000"),
            "lts__t_bytes.sum": ("byte", "200,000,000"),
            "l1tex__t_bytes.sum": ("byte", "400,000,000"),
            "gpu__time_duration.sum": ("nsecond", time_ns),
            f"{OP}dadd_pred_on.sum": ("inst", "0"), f"{OP}dmul_pred_on.sum": ("inst", "0"),
            f"{OP}dfma_pred_on.sum": ("inst", "500,000,000"),
            f"{OP}fadd_pred_on.sum": ("inst", "0"), f"{OP}fmul_pred_on.sum": ("inst", "0"),
            f"{OP}ffma_pred_on.sum": ("inst", "600,000,000")}


def copy_kernel() -> dict[str, tuple[str, str]]:
    """seed 000 §3.1's copy: 400 MB read + 400 MB written in 450 us, no FLOP."""
    return {f"{OP}fadd_pred_on.sum": ("inst", "0"), f"{OP}fmul_pred_on.sum": ("inst", "0"),
            f"{OP}ffma_pred_on.sum": ("inst", "0"),
            "dram__bytes_read.sum": ("byte", "400,000,000"),
            "dram__bytes_write.sum": ("byte", "400,000,000"),
            "gpu__time_duration.sum": ("msecond", "0.45")}


def run_json(capsys, args) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_text(capsys, monkeypatch, args) -> str:
    monkeypatch.setenv("COLUMNS", "220")
    capsys.readouterr()
    assert main(args) == 0
    return capsys.readouterr().out


def points(doc: dict) -> dict[tuple[str, str], tuple[float, str]]:
    return {(p["kernel"], p["level"]): (p["percent_of_roof"], p["bound"])
            for p in doc["analysis"]}


# --- 12b A: -o x.csv reads back as the same kernels --------------------------------------

def test_mixed_kernel_csv_reads_back_at_its_weighted_ceiling(tmp_path, capsys):
    src = ncu_csv(tmp_path / "mix.csv", {"mixk": mixed()})
    out = tmp_path / "mixk.csv"
    on = ["--on", "RTX 4060 Laptop GPU"]
    assert main(["ncu", str(src), *on, "-o", str(out)]) == 0
    rows = out.read_text().splitlines()
    head = rows[0].split(",")
    assert head[-2:] == ["flop_fp64", "flop_fp32"]
    # every level measured, although this catalog roof has only DRAM
    assert [r.split(",")[head.index("level")] for r in rows[1:]] == ["DRAM", "L2", "L1"]
    first = dict(zip(head, rows[1].split(","), strict=True))
    assert float(first["flop_fp64"]) == 1e9 and float(first["flop_fp32"]) == 1.2e9
    assert float(first["flop"]) == 2.2e9
    doc = run_json(capsys, ["report", str(out), *on])
    (p,) = doc["analysis"]
    # hand: compute floor 1e9 / 227.5 GFLOP/s + 1.2e9 / 14.56 TFLOP/s = 4.478 ms of 10 ms
    # (the old CSV held all 2.2e9 FLOP to fp32: 3.9 %, latency-bound)
    floor = 1e9 / 227.5e9 + 1.2e9 / 14.56e12
    assert p["percent_of_roof"] == pytest.approx(100 * floor / 10e-3, rel=1e-9)
    assert p["percent_of_roof"] == pytest.approx(44.78, abs=0.01)
    assert p["bound"] == "compute"
    assert points(doc) == points(run_json(capsys, ["ncu", str(src), *on]))


def test_round_trip_every_level_and_a_copy(tmp_path, capsys):
    # a roof with L2 and L1 ceilings: every level's point reads back the same
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"schema_version": 1, "roof": {
        "name": "three levels", "kind": "measured",
        "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 2e11,
                     "kind": "measured"},
                    {"precision": "fp32", "unit": "vector", "flop_per_s": 1e13,
                     "kind": "measured"}],
        "memory": [{"level": "DRAM", "bytes_per_s": 2.5e11, "kind": "measured"},
                   {"level": "L2", "bytes_per_s": 1e12, "kind": "measured"},
                   {"level": "L1", "bytes_per_s": 4e12, "kind": "measured"}]}}))
    src = ncu_csv(tmp_path / "two.csv", {"mixk": mixed(), "copyKernel": copy_kernel()})
    out = tmp_path / "two_k.csv"
    assert main(["ncu", str(src), "--on", str(roof), "-o", str(out)]) == 0
    before = points(run_json(capsys, ["ncu", str(src), "--on", str(roof)]))
    after = points(run_json(capsys, ["report", str(out), "--on", str(roof)]))
    assert after.keys() == before.keys() == {("mixk", "DRAM"), ("mixk", "L2"),
                                            ("mixk", "L1"), ("copyKernel", "DRAM")}
    for key, (pct, bound) in before.items():
        assert after[key][1] == bound
        # a 0-FLOP copy has no % of a FLOP roof on either side (its bandwidth is said)
        assert after[key][0] == (None if pct is None else pytest.approx(pct, rel=1e-12, abs=0))
    # hand: weighted fp64 + fp32 peak 2.2e9 / (1e9/2e11 + 1.2e9/1e13) = 429.7 GFLOP/s;
    # 220 GFLOP/s achieved = 51.2 % at every level (AI 22, 11, 5.5: all compute-bound)
    assert before[("mixk", "L2")] == (pytest.approx(100 * 220e9 / (2.2e9 / 5.12e-3)),
                                      "compute")


def test_old_kernel_csv_reads_as_before_and_a_wrong_split_is_refused(tmp_path, capsys):
    old = tmp_path / "old.csv"
    old.write_text("name,flop,bytes,seconds,precision\nk,2e9,1e8,0.01,fp64\n")
    doc = run_json(capsys, ["report", str(old), "--on", "RTX 4060 Laptop GPU"])
    assert doc["kernels"][0]["flop"] == {"fp64": 2e9}
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,precision,flop,bytes,seconds,flop_fp64,flop_fp32\n"
                   "k,fp32,3e9,1e8,0.01,1e9,1.2e9\n")
    capsys.readouterr()
    assert main(["report", str(bad), "--on", "RTX 4060 Laptop GPU"]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:2" in err and "field 'flop' is 3e+09" in err and "2.2e+09" in err
    assert "Traceback" not in err


# --- 12a #14: a copy kernel's bandwidth ----------------------------------------------------

def test_copy_kernel_shows_its_bandwidth_and_percent(tmp_path, capsys, monkeypatch):
    src = ncu_csv(tmp_path / "seedt.csv", {"copyKernel": copy_kernel()}, cc="8.0")
    text = run_text(capsys, monkeypatch, ["ncu", str(src), "--on", "A100"])
    row = next(line for line in text.splitlines() if "copyKernel" in line and "DRAM" in line)
    cells = [c.strip() for c in row.split("│")]
    # hand: 800 MB / 450 us = 1.78 TB/s; / 2.039 TB/s (A100 80GB SXM) = 87.2 %
    assert "1.78 TB/s" in cells and "87 %" in cells
    assert "0 FLOP/s" not in row
    assert "copyKernel: no FLOP, so achieved is the bytes/s it moved and % roof is of the " \
           "DRAM bandwidth ceiling" in " ".join(text.split())
    out = tmp_path / "c.csv"
    assert main(["ncu", str(src), "--on", "A100", "-o", str(out)]) == 0
    head, row = out.read_text().splitlines()[:2]
    r = dict(zip(head.split(","), row.split(","), strict=True))
    assert float(r["achieved_bytes_per_s"]) == pytest.approx(8e8 / 450e-6)
    assert float(r["percent_of_bandwidth"]) == pytest.approx(100 * 8e8 / 450e-6 / 2.039e12)


# --- 12b K: unplaced kernels and points above the roof -------------------------------------

def saxpy_l2_only() -> dict[str, tuple[str, str]]:
    """a saxpy with L2 and L1 bytes only: 1.05e6 FFMA (2.1 MFLOP), 10.5 us."""
    return {f"{OP}ffma_pred_on.sum": ("inst", "1,050,000"),
            "lts__t_bytes.sum": ("byte", "12,600,000"),
            "l1tex__t_bytes.sum": ("byte", "12,600,000"),
            "gpu__time_duration.sum": ("nsecond", "10,500")}


def test_unplaced_kernel_is_listed_below_the_table(tmp_path, capsys, monkeypatch):
    src = ncu_csv(tmp_path / "na.csv", {"mixk": mixed(), "saxpy": saxpy_l2_only()},
                  cc="8.0")
    text = " ".join(run_text(capsys, monkeypatch, ["ncu", str(src), "--on", "a100"]).split())
    # was "2 kernels, longest first (top 1)" and no word of saxpy
    assert "2 kernels, longest first; 1 not placed on this roof (below the table)" in text
    assert "(top " not in text
    assert "Not placed on this roof" in text
    assert ("saxpy (10.5 us, 0.1 % of the time): its bytes are at L2 and L1 only, and roof "
            "'NVIDIA A100 80GB SXM' has no L2 and L1 ceiling (it has: DRAM)") in text
    # --top 1 keeps the one placed kernel: nothing is cut, so no "(top 1)"
    text = " ".join(run_text(capsys, monkeypatch,
                             ["ncu", str(src), "--on", "a100", "--top", "1"]).split())
    assert "(top " not in text and "saxpy (10.5 us" in text


def test_top_counts_placed_kernels(tmp_path, capsys, monkeypatch):
    src = ncu_csv(tmp_path / "three.csv", {"mixk": mixed(), "slow": mixed("20,000,000"),
                                           "saxpy": saxpy_l2_only()}, cc="8.0")
    text = " ".join(run_text(capsys, monkeypatch,
                             ["ncu", str(src), "--on", "a100", "--top", "1"]).split())
    assert "3 kernels, longest first (top 1); 1 not placed on this roof" in text
    assert "│ slow" in text and "│ mixk" not in text


def test_nothing_placed_prints_no_empty_table(tmp_path, capsys, monkeypatch):
    src = ncu_csv(tmp_path / "l2.csv", {"saxpy": saxpy_l2_only()}, cc="8.0")
    text = run_text(capsys, monkeypatch, ["ncu", str(src), "--on", "a100"])
    # was "1 kernel, longest first (top 0)" over an empty table frame
    assert "1 kernel, longest first; 1 not placed on this roof (below)\n" in text
    assert "┏" not in text and "Not placed on this roof" in text


def test_above_roof_points_get_reports_read_with_care_line(tmp_path, capsys, monkeypatch):
    # 1e10 FFMA = 2e10 FLOP in 0.5 ms = 40 TFLOP/s on A100's 19.5 TFLOP/s fp32 vector:
    # 2e10 / 19.5e12 = 1.0256 ms floor, so 2.05x above the roof
    fast = {f"{OP}ffma_pred_on.sum": ("inst", "10,000,000,000"),
            "dram__bytes.sum": ("byte", "1,000,000"),
            "gpu__time_duration.sum": ("nsecond", "500,000")}
    src = ncu_csv(tmp_path / "fast.csv", {"fast": fast}, cc="8.0")
    text = " ".join(run_text(capsys, monkeypatch, ["ncu", str(src), "--on", "a100"]).split())
    # on a datasheet roof (s21 m1, r3 F4): the unit/precision or the count, not "roof too low"
    line = ("read with care: 1 kernel(s) run faster than the roof allows: fast (2.05x above). "
            "Above a datasheet compute roof, the kernel ran on a faster unit or precision than "
            "it is held to (tensor cores, TF32) or its FLOP are miscounted")
    assert line in text and "205 %" in text
    doc = run_json(capsys, ["ncu", str(src), "--on", "a100"])
    assert doc["read_with_care"][0].startswith("1 kernel(s) run faster than the roof allows: "
                                               "fast (2.05x above)")
    # the same words as `rooflab report` on the same file
    assert run_json(capsys, ["report", str(src), "--on", "a100"])["read_with_care"] == \
        doc["read_with_care"]
    # below the roof: no line
    assert "read_with_care" not in run_json(capsys, ["ncu", str(ncu_csv(
        tmp_path / "m.csv", {"mixk": mixed()})), "--on", "a100"])


# --- 12b I: compare says how the work changed ----------------------------------------------

def kernel_file(path: Path, flop: float, dram: float, seconds: float) -> Path:
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "k", "flop": {"fp32": flop}, "bytes": {"DRAM": dram}, "seconds": seconds}]}))
    return path


def test_compare_shows_work_and_rate(tmp_path, capsys, monkeypatch):
    # 1 GFLOP in 1 ms -> 0.4 GFLOP in 0.4 ms: 2.5x, all of it less work (rate 1 TFLOP/s both)
    b = kernel_file(tmp_path / "b.json", 1e9, 1e8, 1e-3)
    a = kernel_file(tmp_path / "a.json", 4e8, 1e8, 4e-4)
    doc = run_json(capsys, ["compare", str(b), str(a)])
    (m,) = doc["matches"]
    assert m["speedup"] == pytest.approx(2.5)
    assert (m["flop_before"], m["flop_after"]) == (1e9, 4e8)
    assert m["work_change_pct"] == pytest.approx(-60.0)
    assert (m["flop_per_s_before"], m["flop_per_s_after"]) == (pytest.approx(1e12),
                                                               pytest.approx(1e12))
    assert m["rate_change_pct"] == pytest.approx(0.0, abs=1e-9)
    assert doc["notes"] == ["k: 2.50x faster; FLOP x0.40, DRAM bytes x1.00: mostly less work "
                            "(FLOP); achieved FLOP/s +0.0 %: the runs did different work "
                            "(FLOP -60.0 %), so the speed-up is not the kernel's alone"]
    text = " ".join(run_text(capsys, monkeypatch, ["compare", str(b), str(a)]).split())
    assert "1 GFLOP -> 400 MFLOP (-60.0 %)" in text and "+0.0 %" in text
    main(["compare", str(b), str(a)])
    assert "mostly less work (FLOP)" in capsys.readouterr().err


def test_compare_narrow_terminal_puts_work_below_the_table(tmp_path, capsys, monkeypatch):
    # at 80 columns the work columns would fold the time change the gate reads: they move
    # to a line per kernel below the table
    b = kernel_file(tmp_path / "b.json", 1e9, 1e8, 1e-3)
    a = kernel_file(tmp_path / "a.json", 4e8, 1e8, 4e-4)
    monkeypatch.setenv("COLUMNS", "80")
    capsys.readouterr()
    assert main(["compare", str(b), str(a)]) == 0
    text = capsys.readouterr().out
    assert "FLOP/s change ┃" not in text and "-60.0 % │" in text
    assert "work: k: FLOP 1 GFLOP -> 400 MFLOP (-60.0 %), FLOP/s change +0.0 %" in text


def test_compare_same_work_has_no_note(tmp_path, capsys):
    # 1 GFLOP -> 1.04 GFLOP (+4 %, within the 5 % band): a faster kernel, no work note
    b = kernel_file(tmp_path / "b.json", 1e9, 1e8, 1e-3)
    a = kernel_file(tmp_path / "a.json", 1.04e9, 1e8, 5e-4)
    doc = run_json(capsys, ["compare", str(b), str(a)])
    (m,) = doc["matches"]
    assert m["work_change_pct"] == pytest.approx(4.0)
    assert m["rate_change_pct"] == pytest.approx(108.0)   # 1 -> 2.08 TFLOP/s
    assert doc["notes"] == []


def test_compare_gpp_steps_say_the_work_fell(capsys):
    if not (GPP / "output1.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    doc = run_json(capsys, ["compare", str(GPP / "output1.csv"), str(GPP / "output5.csv")])
    (m,) = doc["matches"]
    # review 12b I's hand numbers: FLOP 2.5967e12 -> 1.0932e12 (-57.9 %), 85.2 -> 88.9 GFLOP/s
    assert m["speedup"] == pytest.approx(2.48, abs=0.005)
    assert m["flop_before"] == pytest.approx(2.5967e12, rel=1e-4)
    assert m["flop_after"] == pytest.approx(1.0932e12, rel=1e-4)
    assert m["work_change_pct"] == pytest.approx(-57.9, abs=0.05)
    assert m["flop_per_s_before"] == pytest.approx(85.2e9, rel=1e-3)
    assert m["flop_per_s_after"] == pytest.approx(88.9e9, rel=1e-3)
    assert any("mostly less work (FLOP)" in n for n in doc["notes"])


def test_gpp_csv_round_trip(tmp_path, capsys):
    # review 12b A on a real recording: sigma_gpp_gpu_29 (fp64 + 4.9e10 fp32 FLOP) read
    # 37.9 % from ncu and 38.9 % from its own -o x.csv
    if not (GPP / "output.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    on = ["--on", "RTX 4060 Laptop GPU"]
    out = tmp_path / "k.csv"
    assert main(["ncu", str(GPP / "output.csv"), *on, "-o", str(out)]) == 0
    before = points(run_json(capsys, ["ncu", str(GPP / "output.csv"), *on]))
    after = points(run_json(capsys, ["report", str(out), *on]))
    assert after.keys() == before.keys()
    for key, (pct, bound) in before.items():
        assert after[key] == (pytest.approx(pct, rel=1e-12), bound)
