"""rocprof outputs as they are in the wild (review r9): rocprofv3 passes of several
processes, MI300 files without TCC_BUBBLE, MFMA instruction counters, FETCH_SIZE /
WRITE_SIZE, a 0 timestamp, the MI300 collect hint, a Perfetto trace. The files are minimal
excerpts in each format's real layout (rocprofv3's 19-column long header, rocprof v1's
results.csv, the rocprofv2 row of ROCm's docs); every number is worked out by hand."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.rocprof import COLLECT_HINT, load_rocprof

V3_HEADER = ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id",'
             '"Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size","LDS_Block_Size",'
             '"Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Counter_Name",'
             '"Counter_Value","Start_Timestamp","End_Timestamp"\n')


def v3_file(path, pid: int, kernel: str, counters: dict[str, float],
            start: int = 1000, end: int = 2000):
    """A rocprofv3 *_counter_collection.csv of one dispatch (Dispatch_Id 1)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = "".join(f'1,1,"Agent 2",1,{pid},{pid},1048576,7,"{kernel}",256,0,0,8,0,16,'
                   f'"{name}",{value},{start},{end}\n' for name, value in counters.items())
    path.write_text(V3_HEADER + rows)
    return path


V1_HEADER = ("Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,"
             "accum_vgpr,sgpr,wave_size,sig,obj,")


def v1_file(path, counters: dict[str, float], begin: int = 2000, end: int = 12000):
    """A rocprof v1 results.csv of one dispatch."""
    names = ",".join(counters)
    values = ",".join(f"{v:g}" for v in counters.values())
    path.write_text(V1_HEADER + names + ",DispatchNs,BeginNs,EndNs,CompleteNs\n"
                    + '0,"k(float*) [clone .kd]",2,0,0,1,1,1048576,256,0,0,8,0,16,64,0x0,0x7f,'
                    + f"{values},1000,{begin},{end},{end + 1000}\n")
    return path


def rocprof_json(capsys, *args) -> dict:
    assert main(["rocprof", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# ---- F1: rocprofv3 passes of several processes ---------------------------------------------

def two_ranks(root, pass2_pids=(200, 201)):
    """Rank A (FMA_F64 1000, RDREQ = WRREQ = 1000) and rank B (9000 each), each pass a run
    of its own: pass_1 holds the FLOP counters, pass_2 the bytes."""
    for pid, n in ((100, 1000), (101, 9000)):
        v3_file(root / "pass_1" / f"{pid}_counter_collection.csv", pid, "stencil(double*)",
                {"SQ_INSTS_VALU_FMA_F64": n})
    for pid, n in zip(pass2_pids, (1000, 9000), strict=True):
        v3_file(root / "pass_2" / f"{pid}_counter_collection.csv", pid, "stencil(double*)",
                {"TCC_EA0_RDREQ_sum": n, "TCC_EA0_WRREQ_sum": n})


def test_passes_of_several_processes_are_not_joined_across_processes(tmp_path, capsys):
    two_ranks(tmp_path)   # new pids each pass: which files are one process cannot be told
    assert main(["rocprof", str(tmp_path), "--on", "mi300x"]) == 2   # was AI 12, exit 0
    err = capsys.readouterr().err
    assert "pass_1/ holds 2 (100_counter_collection.csv, 101_counter_collection.csv)" in err
    assert "one process's files, one per pass folder" in err
    # one process's files given: joined, rank A's own AI (64 x 2 x 1000 / (64 + 32) x 1000)
    data = rocprof_json(capsys, tmp_path / "pass_1/100_counter_collection.csv",
                        tmp_path / "pass_2/200_counter_collection.csv", "--on", "mi300x")
    (k,) = data["kernels"]
    assert k["flop"] == {"fp64": 128_000} and k["bytes"]["DRAM"] == 96_000


def test_passes_paired_by_process_id_and_labelled_by_process(tmp_path):
    two_ranks(tmp_path, pass2_pids=(100, 101))   # the same pid in both passes: paired
    imp = load_rocprof(str(tmp_path))
    by_step = {k.meta["step"]: k for k in imp.kernels}
    assert set(by_step) == {"pid 100", "pid 101"}
    a, b = by_step["pid 100"], by_step["pid 101"]
    assert a.flop == {"fp64": 128_000} and a.bytes["DRAM"] == 96_000          # AI 1.33
    assert b.flop == {"fp64": 1_152_000} and b.bytes["DRAM"] == 864_000       # AI 1.33


# ---- F2: MI300 line sizes without TCC_BUBBLE ---------------------------------------------

def test_mi300_spelling_without_bubble_gets_128_byte_lines_and_a_note(tmp_path):
    p = v3_file(tmp_path / "9_counter_collection.csv", 9, "triad",
                {"SQ_INSTS_VALU_FMA_F32": 16384, "TCC_EA0_RDREQ_sum": 131072,
                 "TCC_EA0_RDREQ_32B_sum": 0, "TCC_EA0_WRREQ_sum": 65536,
                 "TCC_EA0_WRREQ_64B_sum": 65536, "TCP_TOTAL_CACHE_ACCESSES_sum": 49152},
                start=1000, end=11000)
    (k,) = load_rocprof(str(p)).kernels
    assert k.bytes["L1"] == 128 * 49152                     # was 64 x 49152
    assert k.bytes["DRAM"] == 64 * 131072 + 64 * 65536      # 128-B reads unknown: noted
    assert any("TCC_BUBBLE not collected on MI300" in n for n in k.meta.get("notes", ()))


def test_on_device_decides_the_line_when_the_file_does_not(tmp_path, capsys):
    # no TCC_EA_ / TCC_EA0_ counter: their spelling is the recording GPU's and decides
    # over --on (rocprof_arch.read_as, s36 F), so the file says nothing only without them
    p = v1_file(tmp_path / "results.csv",
                {"SQ_INSTS_VALU_FMA_F32": 1000, "FETCH_SIZE": 12.5,
                 "TCP_TOTAL_CACHE_ACCESSES_sum": 800,
                 "TCP_TCC_READ_REQ_sum": 300, "TCP_TCC_WRITE_REQ_sum": 50})
    on300 = rocprof_json(capsys, p, "--on", "mi300x")["kernels"][0]["bytes"]
    assert on300["L1"] == 128 * 800 and on300["L2"] == 128 * 300 + 64 * 50
    on250 = rocprof_json(capsys, p, "--on", "mi250x")["kernels"][0]["bytes"]
    assert on250["L1"] == 64 * 800 and on250["L2"] == 64 * 300 + 64 * 50
    assert on300["DRAM"] == on250["DRAM"] == 1024 * 12.5


def test_workload_folder_named_mi300_gets_128_byte_lines(tmp_path):
    folder = tmp_path / "workloads" / "app" / "MI300X_A1"
    folder.mkdir(parents=True)
    v1_file(folder / "pmc_perf.csv", {"SQ_INSTS_VALU_FMA_F32": 1000,
                                           "TCP_TOTAL_CACHE_ACCESSES_sum": 800})
    (k,) = load_rocprof(str(folder)).kernels
    assert k.bytes["L1"] == 128 * 800


def test_no_architecture_in_file_or_device_is_said(tmp_path):
    p = v1_file(tmp_path / "results.csv", {"SQ_INSTS_VALU_FMA_F32": 1000,
                                           "TCP_TOTAL_CACHE_ACCESSES_sum": 800})
    (k,) = load_rocprof(str(p)).kernels
    assert k.bytes["L1"] == 64 * 800
    notes = k.meta.get("notes", ())
    assert any(n.startswith("64-B L1 and L1->L2 read lines assumed (MI200)") for n in notes)
    (k,) = load_rocprof(str(p), device="mi250x").kernels    # told: no note
    assert not any("lines assumed" in n for n in k.meta.get("notes", ()))


# ---- F3: MFMA instruction counters -----------------------------------------------------

def test_mfma_instruction_counters_are_named_not_dropped_silently(tmp_path):
    p = v1_file(tmp_path / "results.csv",
                {"SQ_INSTS_VALU_ADD_F32": 1000, "SQ_INSTS_VALU_MUL_F32": 0,
                 "SQ_INSTS_VALU_FMA_F32": 2000, "SQ_INSTS_VALU_TRANS_F32": 0,
                 "SQ_INSTS_VALU_MFMA_BF16": 400000, "SQ_INSTS_MFMA": 400000,
                 "TCC_EA_RDREQ_sum": 100000, "TCC_EA_RDREQ_32B_sum": 0,
                 "TCC_EA_WRREQ_sum": 50000, "TCC_EA_WRREQ_64B_sum": 50000},
                begin=2000, end=102000)
    (k,) = load_rocprof(str(p)).kernels
    assert k.flop == {"fp32": 64 * (1000 + 2 * 2000)}          # the vector FLOP only
    assert k.bytes["DRAM"] == 64 * 100000 + 64 * 50000
    (note,) = [n for n in k.meta.get("notes", ()) if n.startswith("matrix-core instructions ran")]
    assert "SQ_INSTS_VALU_MFMA_BF16 400000" in note
    assert "collect SQ_INSTS_VALU_MFMA_MOPS_BF16" in note and "MI100" in note


def test_mfma_instructions_alone_say_which_counter_to_collect(tmp_path):
    p = v1_file(tmp_path / "results.csv", {"SQ_INSTS_VALU_MFMA_F16": 5000,
                                           "TCC_EA_RDREQ_sum": 100, "TCC_EA_WRREQ_sum": 100})
    with pytest.raises(ParseError, match=r"no FLOP counters .*collect "
                                         r"SQ_INSTS_VALU_MFMA_MOPS_F16"):
        load_rocprof(str(p))


# ---- F4: FETCH_SIZE / WRITE_SIZE ---------------------------------------------------------

def test_fetch_and_write_size_are_dram_kib(tmp_path):
    p = v1_file(tmp_path / "results.csv", {"FETCH_SIZE": 4096, "WRITE_SIZE": 4096,
                                           "SQ_INSTS_VALU_FMA_F32": 0})
    (k,) = load_rocprof(str(p)).kernels
    assert k.bytes == {"DRAM": 1024 * (4096 + 4096)}          # KiB: x 1024, not 1000
    assert k.seconds == pytest.approx(10e-6)
    notes = k.meta.get("notes", ())
    assert any(n.startswith("DRAM = 1024 x (FETCH_SIZE + WRITE_SIZE)") for n in notes)


def test_rocprofv3_fetchsize_writesize(tmp_path):
    p = v3_file(tmp_path / "7_counter_collection.csv", 7, "copy",
                {"SQ_INSTS_VALU_FMA_F32": 100, "FetchSize": 2048, "WriteSize": 1024})
    (k,) = load_rocprof(str(p)).kernels
    assert k.bytes == {"DRAM": 1024 * 3072} and k.flop == {"fp32": 64 * 2 * 100}


# ---- F5: a timestamp of 0 ----------------------------------------------------------------

def test_zero_start_timestamp_is_no_time_not_39_hours(tmp_path):
    p = tmp_path / "results_result.csv"   # the rocprofv2 file-plugin row of ROCm's docs
    p.write_text("Dispatch_ID,GPU_ID,Queue_ID,Queue_Index,PID,TID,GRD,WGR,LDS,SCR,Arch_VGPR,"
                 "ACCUM_VGPR,SGPR,Wave_Size,SIG,OBJ,Kernel_Name,Start_Timestamp,End_Timestamp,"
                 "Correlation_ID,SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ_sum,TCC_EA_WRREQ_sum\n"
                 '1,4,1,1,1584730,1584730,10,10,0,0,8,0,16,64,140464978048000,1,'
                 '"helloworld(char*, char*) (.kd)",0,140469300947216,33,100,1000,1000\n'
                 '2,4,1,1,1584730,1584730,10,10,0,0,8,0,16,64,140464978048000,1,'
                 '"other(char*) (.kd)",140469300947216,0,34,100,1000,1000\n'
                 '3,4,1,1,1584730,1584730,10,10,0,0,8,0,16,64,140464978048000,1,'
                 '"good(char*) (.kd)",140469300947216,140469300957216,35,100,1000,1000\n')
    imp = load_rocprof(str(p))
    (k,) = imp.kernels
    assert k.name.startswith("good") and k.seconds == pytest.approx(10e-6)
    reasons = "\n".join(str(s) for s in imp.skips)
    assert "no time (Start_Timestamp 0: not recorded)" in reasons
    assert "no time (End_Timestamp 0: not recorded)" in reasons


# ---- F6: the collect hint names MI300's spelling ----------------------------------------

def test_collect_hint_and_help_name_mi300_counters(capsys):
    assert "TCC_EA0_RDREQ_sum" in COLLECT_HINT and "TCC_BUBBLE_sum" in COLLECT_HINT
    assert main(["rocprof", "--help"]) == 0
    out = capsys.readouterr().out
    assert "TCC_EA0_RDREQ_sum" in out and "TCC_EA0_WRREQ_64B_sum" in out


# ---- F7: a Perfetto trace ----------------------------------------------------------------

def test_pftrace_names_the_csv_output_to_use(tmp_path, capsys):
    p = tmp_path / "4242_results.pftrace"
    p.write_bytes(b"\x0a\x8c\x01\x12\x05rocprofv3\x00\x01\x02")
    assert main(["rocprof", str(p)]) == 2
    err = capsys.readouterr().err
    assert "a Perfetto trace" in err and "--output-format csv" in err
    assert "*_counter_collection.csv" in err
