"""rocprof-compute's roofline.csv (its empirical roofline benchmark) as a measured roof.

Format: ROCm/rocprofiler-compute src/utils/roofline_calc.py (`constuct_roof`: first column the
device id; HBMBw, L2Bw, L1Bw, LDSBw, FP32Flops, MFMAF16Flops, ... by name) and its benchmark's
`dump_csv` (MALLBw, FP16Flops, I8Ops, MFMAF8Flops, ..., each with <name>Low/<name>High), values
in GB/s and GFLOP/s per device.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.hardware.resolve import load_roof
from rooflab.hardware.rocprof_roofline import is_roofline_csv, load_roofline_csv
from rooflab.ingest.rocprof import load_rocprof

HEADER = ("device,HBMBw,HBMBwLow,HBMBwHigh,MALLBw,L2Bw,L1Bw,LDSBw,FP16Flops,FP32Flops,"
          "FP64Flops,I8Ops,MFMAF4Flops,MFMAF8Flops,MFMAF16Flops,MFMABF16Flops,MFMAF32Flops,"
          "MFMAF64Flops,MFMAI8Ops")
DEV0 = "0,4000,3990,4010,11000,14000,25000,57000,150000,80000,40000,0,0,1300000,700000," \
       "650000,120000,80000,1400000"
DEV1 = "1,4100,4090,4110,11100,14100,25100,57100,151000,81000,41000,0,0,1310000,710000," \
       "660000,121000,81000,1410000"

# pmc_perf.csv, MI200-style counters (64-B lines; no TCC_BUBBLE):
#  saxpy: 64 x 2 x 1e6 = 1.28e8 fp32 FLOP; DRAM 64 x 5e5 + 64 x 2.5e5 = 4.8e7 B; 20 us
#  hgemm: 512 x 1e6 = 5.12e8 fp16 tensor FLOP; DRAM 64 x 1e5 = 6.4e6 B; 4 us
PMC_PERF = """\
Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp,SQ_INSTS_VALU_FMA_F32,\
SQ_INSTS_VALU_MFMA_MOPS_F16,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,\
TCC_EA_WRREQ_64B_sum
0,saxpy,0,0,20000,1000000,0,500000,0,250000,250000
1,hgemm,0,30000,34000,0,1000000,100000,0,0,0
"""


def _workload(tmp_path, rows=(DEV0, DEV1), header=HEADER, sysinfo=None):
    folder = tmp_path / "workloads" / "app" / "MI300X_A1"
    folder.mkdir(parents=True)
    (folder / "pmc_perf.csv").write_text(PMC_PERF)
    (folder / "roofline.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    if sysinfo is not None:
        (folder / "sysinfo.csv").write_text(sysinfo)
    return folder


def test_ceilings_values_units_kinds_and_what_has_no_place(tmp_path):
    path = str(_workload(tmp_path) / "roofline.csv")
    assert is_roofline_csv(path) and not is_roofline_csv(path.replace("roofline", "pmc_perf"))
    roof = load_roofline_csv(path)
    assert roof.kind == "measured"
    # the folder (workloads/app/MI300X_A1) names the GPU: matched in the catalog
    assert roof.name == "AMD Instinct MI300X (rocprof-compute roofline, device 0)"
    # GB/s -> B/s; MALL (Infinity Cache) is L3; LDS has no level: left out, said
    assert {c.level: c.value for c in roof.memory} == {
        "DRAM": 4000e9, "L3": 11000e9, "L2": 14000e9, "L1": 25000e9}
    # GFLOP/s -> FLOP/s; VALU = vector, MFMA = tensor; I8Ops and MFMAF4Flops are 0 (the
    # benchmark skips what the architecture lacks): no ceiling
    assert {c.label: c.value for c in roof.compute} == {
        "fp16 vector": 150000e9, "fp32 vector": 80000e9, "fp64 vector": 40000e9,
        "fp8 tensor": 1300000e9, "fp16 tensor": 700000e9, "bf16 tensor": 650000e9,
        "fp32 tensor": 120000e9, "fp64 tensor": 80000e9, "int8 tensor": 1400000e9}
    for c in (*roof.compute, *roof.memory):
        assert c.provenance == "measured" and path in c.source
        assert c.method.startswith("rocprof-compute's empirical roofline benchmark, column ")
    hbm = roof.bandwidth("DRAM")
    assert "column HBMBw" in hbm.method and "95 % confidence 3990-4010" in hbm.method
    notes = " | ".join(roof.notes)
    assert "LDSBw 57 TB/s" in notes and "MALLBw" in notes
    assert "device(s) 1" in notes            # the other device row, not used
    assert not any(c.warnings for c in (*roof.compute, *roof.memory))   # all below nominal


def test_device_zero_by_its_id_not_its_row_and_first_row_without_it(tmp_path):
    path = str(_workload(tmp_path, rows=(DEV1, DEV0)) / "roofline.csv")
    assert load_roofline_csv(path).bandwidth("DRAM").value == 4000e9     # device 0's row
    assert load_roofline_csv(path, device="1").bandwidth("DRAM").value == 4100e9
    only1 = tmp_path / "b" / "roofline.csv"
    only1.parent.mkdir()
    only1.write_text(HEADER + "\n" + DEV1 + "\n")
    roof = load_roofline_csv(str(only1))
    assert roof.bandwidth("DRAM").value == 4100e9 and roof.name.endswith("device 1)")
    # no catalog match for the folder name 'b': the roof is named by it, no nominal check
    assert roof.name.startswith("b (rocprof-compute")


def test_missing_columns_are_named_with_the_file(tmp_path, capsys):
    bad = tmp_path / "roofline.csv"
    bad.write_text("device,L2Bw,L1Bw,LDSBw\n0,14000,25000,57000\n")
    with pytest.raises(ParseError) as err:
        load_roofline_csv(str(bad))
    msg = str(err.value)
    assert msg.startswith(f"{bad}:1: ") and "without HBMBw, a compute column (FP64Flops" in msg
    (tmp_path / "k.json").write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "k", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}))
    # the header still looks like a roofline's (L2Bw), so --on reads it and says what lacks
    assert main(["report", str(tmp_path / "k.json"), "--on", str(bad)]) == 2
    err_text = capsys.readouterr().err
    assert err_text.startswith(f"error: {bad}:1: ") and "HBMBw" in err_text


def test_bad_cells_duplicates_and_cut_rows(tmp_path):
    f = tmp_path / "roofline.csv"
    f.write_text(HEADER + "\n" + DEV0 + "\n" + DEV0 + "\n")
    with pytest.raises(ParseError, match="device id.s. 0 appear twice"):
        load_roofline_csv(str(f))
    f.write_text(HEADER + "\n" + DEV0.replace("4000,", "fast,", 1) + "\n")
    with pytest.raises(ParseError, match=r":2: column HBMBw: 'fast' is not a number"):
        load_roofline_csv(str(f))
    f.write_text(HEADER + "\n" + DEV0.rsplit(",", 1)[0] + "\n")
    with pytest.raises(ParseError, match=r":2: row has 18 cells, the header 19"):
        load_roofline_csv(str(f))
    # N/A and nan are dropped as rocprof-compute drops them
    f.write_text(HEADER + "\n" + DEV0.replace(",11000,", ",N/A,").replace(",150000,", ",nan,")
                 + "\n")
    roof = load_roofline_csv(str(f))
    assert "L3" not in roof.levels and roof.find_compute("fp16", "vector") is None


def test_measured_above_nominal_is_flagged_on_the_ceiling_and_the_roof_line(tmp_path, capsys):
    above = DEV0.replace("0,4000,", "0,5500,", 1)          # MI300X nominal HBM: 5.3 TB/s
    folder = _workload(tmp_path, rows=(above,))
    roof = load_roofline_csv(str(folder / "roofline.csv"))
    (warning,) = roof.bandwidth("DRAM").warnings
    assert "above the nominal 5.3 TB/s of 'AMD Instinct MI300X' (104 %)" in warning
    assert main(["rocprof", str(folder / "pmc_perf.csv"), "--on",
                 str(folder / "roofline.csv"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["notes"][0].startswith("warning: measured DRAM 5.5 TB/s is above the nominal "
                                       "5.3 TB/s")   # in notes, not roof_source (r1 F10)
    assert "warning" not in data["roof_source"]
    assert data["roof"]["memory"][0]["warnings"] == [warning]


def _pct(data: dict) -> dict:
    return {a["kernel"]: round(a["percent_of_roof"], 6) for a in data["analysis"]
            if a["level"] == "DRAM"}


def test_rocprof_on_roofline_csv_percent_of_the_files_peaks(tmp_path, capsys):
    folder = _workload(tmp_path)
    on = str(folder / "roofline.csv")
    assert main(["rocprof", str(folder / "pmc_perf.csv"), "--on", on, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["roof_source"] == (f"roof: AMD Instinct MI300X (rocprof-compute roofline, "
                                   f"device 0) (measured), from --on {on}")
    assert data["roof"]["kind"] == "measured"
    # saxpy: AI = 1.28e8 / 4.8e7 = 8/3; attainable = min(80 TFLOP/s fp32 vector,
    #   4.0 TB/s x 8/3 = 10.667 TFLOP/s); achieved 1.28e8 / 20 us = 6.4 TFLOP/s -> 60 %
    # hgemm: AI = 5.12e8 / 6.4e6 = 80; attainable = min(700 TFLOP/s fp16 MFMA,
    #   4.0 TB/s x 80 = 320 TFLOP/s); achieved 5.12e8 / 4 us = 128 TFLOP/s -> 40 %
    assert _pct(data) == {"saxpy": 60.0, "hgemm": 40.0}


def test_workload_folder_brings_its_roofline_csv_as_the_roof(tmp_path, capsys):
    folder = _workload(tmp_path, sysinfo="gpu_model,gpu_arch\nMI300X_A1,gfx942\n")
    assert load_rocprof(str(folder)).roof_file == str(folder / "roofline.csv")
    assert load_rocprof(str(folder / "pmc_perf.csv")).roof_file.endswith("roofline.csv")
    assert main(["rocprof", str(folder), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["roof_source"] == (
        f"roof: AMD Instinct MI300X (rocprof-compute roofline, device 0) (measured), from "
        f"{folder / 'roofline.csv'} (rocprof-compute's benchmark in the workload folder; "
        f"--on GPU for another roof)")
    assert _pct(data) == {"saxpy": 60.0, "hgemm": 40.0}
    # --on still wins: the catalog's 5.3 TB/s judges saxpy at 6.4 / (5.3 x 8/3) = 45.28 %
    assert main(["rocprof", str(folder), "--on", "mi300x", "--json"]) == 0
    assert _pct(json.loads(capsys.readouterr().out))["saxpy"] == pytest.approx(
        100 * 6.4 / (5.3 * 8 / 3), abs=1e-4)


def test_report_plot_and_load_roof_take_it(tmp_path, capsys):
    folder = _workload(tmp_path)
    on = str(folder / "roofline.csv")
    assert load_roof(on).kind == "measured"
    assert load_roof(str(folder)).bandwidth("DRAM").value == 4000e9   # --on FOLDER
    assert main(["rocprof", str(folder), "-o", str(tmp_path / "k.json")]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "k.json"), "--on", on, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert _pct(data) == {"saxpy": 60.0, "hgemm": 40.0}
    assert main(["plot", str(tmp_path / "k.json"), "--on", on, "-o",
                 str(tmp_path / "r.png")]) == 0
    assert (tmp_path / "r.png").stat().st_size > 0
