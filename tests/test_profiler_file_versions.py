"""Audit 5: profiler files of other tool versions (synthetic rows with the documented headers).

Sources of each layout are cited where the reader handles it (src/rooflab/ingest/*).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.ncu_files import load_ncu
from rooflab.ingest.rocprof import load_rocprof
from rooflab.ingest.torch_trace import load_torch_trace

# --- Nsight Compute: counts collected as rates (nvprof's dram_read_throughput maps to
# dram__bytes_read.sum.per_second in NVIDIA's nvprof-to-ncu metric table) -----------------

_ID = ('"0","1","app","h","saxpy","1","7","(256, 1, 1)","(4096, 1, 1)","0","8.0",'
       '"Command line profiler metrics"')
RATES_DETAILS = "\n".join([
    "==PROF== Connected to process 1 (/app)",
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"',
    _ID + ',"dram__bytes_read.sum.per_second","Gbyte/second","1,200.50"',
    _ID + ',"dram__bytes_write.sum.per_second","Gbyte/second","600.25"',
    _ID + ',"gpu__time_duration.sum","usecond","10.00"',
    _ID + ',"sm__sass_thread_inst_executed_op_ffma_pred_on.sum","inst","1,048,576"',
    "==PROF== Disconnected from process 1", ""])

RATES_RAW = "\n".join([
    '"ID","Kernel Name","dram__bytes.sum.per_second","gpu__time_duration.sum",'
    '"lts__t_bytes.sum.per_second","sm__sass_thread_inst_executed_op_dfma_pred_on.sum"',
    '"","","Tbyte/second","msecond","Tbyte/second","inst"',
    '"0","stream","1.5","2.00","3.0","1,000,000"', ""])


def test_ncu_details_rates_become_totals(tmp_path):
    # read 1200.5 GB/s and write 600.25 GB/s for 10 us: 12.005 MB + 6.0025 MB = 18.0075 MB;
    # 1,048,576 FFMA x 2 = 2,097,152 FLOP. Before: "no bytes" and exit 2.
    p = tmp_path / "rates.csv"
    p.write_text(RATES_DETAILS)
    k = load_ncu([str(p)]).kernels[0]
    assert k.seconds == pytest.approx(10e-6)
    assert k.bytes["DRAM"] == pytest.approx(18.0075e6)
    assert k.flop["fp32"] == pytest.approx(2_097_152)


def test_ncu_raw_page_rates_and_scaled_units(tmp_path, capsys):
    # 1.5 TB/s x 2 ms = 3 GB DRAM, 3 TB/s x 2 ms = 6 GB L2, 2e6 FLOP fp64
    p = tmp_path / "raw.csv"
    p.write_text(RATES_RAW)
    assert main(["ncu", str(p), "--json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    assert k["bytes"]["DRAM"] == pytest.approx(3e9)
    assert k["bytes"]["L2"] == pytest.approx(6e9)
    assert k["seconds"] == pytest.approx(2e-3)
    assert k["flop"]["fp64"] == pytest.approx(2e6)


# `ncu --set full --csv --page raw`: the roofline sections' metrics are rates per cycle
FULL_RAW = "\n".join([
    '"ID","Kernel Name","device__attribute_display_name","dram__bytes.sum.per_second",'
    '"gpu__time_duration.sum","sm__cycles_elapsed.avg.per_second",'
    '"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed",'
    '"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"',
    '"","","","Gbyte/second","msecond","cycle/nsecond","inst/cycle","inst/cycle"',
    '"0","dgemm","NVIDIA A100-SXM4-40GB","100","2.00","1.41","10","32"', ""])


def test_ncu_full_set_raw_page_per_cycle_rates(tmp_path):
    # dfma: 10 inst/cycle x 1.41e9 cycle/s x 2 ms = 2.82e7 inst = 5.64e7 FLOP; DRAM
    # 100 GB/s x 2 ms = 2e8 B; the recorded fp64 peak 2 x 32 x 1.41e9 = 90.24 GFLOP/s
    p = tmp_path / "full.csv"
    p.write_text(FULL_RAW)
    imp = load_ncu([str(p)])
    k = imp.kernels[0]
    assert k.flop["fp64"] == pytest.approx(5.64e7)
    assert k.bytes["DRAM"] == pytest.approx(2e8)
    assert imp.peaks.compute["fp64"] == pytest.approx(90.24e9)


def test_ncu_sector_metrics_are_32_byte_sectors(tmp_path):
    # nvprof's dram_read_transactions -> dram__sectors_read.sum (NVIDIA's metric table):
    # DRAM (1000 + 500) x 32 = 48,000 B, L2 4,000 x 32 = 128,000 B. Before: "no bytes".
    rows = [RATES_DETAILS.splitlines()[1]] + [
        _ID + f',"{m}","{u}","{v}"' for m, u, v in (
            ("dram__sectors_read.sum", "sector", "1,000"),
            ("dram__sectors_write.sum", "sector", "500"),
            ("lts__t_sectors.sum", "Ksector", "4"),
            ("gpu__time_duration.sum", "nsecond", "2,000"),
            ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst", "96,000"))]
    p = tmp_path / "sectors.csv"
    p.write_text("\n".join(rows) + "\n")
    k = load_ncu([str(p)]).kernels[0]
    assert k.bytes == {"DRAM": 48_000, "L2": 128_000}
    assert k.flop["fp32"] == 96_000 and k.seconds == pytest.approx(2e-6)
    assert any("32-byte sectors" in n for n in k.meta.get("notes", ()))


# --- rocprof ---------------------------------------------------------------------------

# rocprof v1 with `pmc: TCC_EA_RDREQ[0] TCC_EA_RDREQ[1] ...`: one column per TCC channel
V1_INSTANCES = (
    "Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,"
    "sgpr,wave_size,sig,obj,SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ[0],TCC_EA_RDREQ[1],"
    "TCC_EA_RDREQ_32B[0],TCC_EA_RDREQ_32B[1],TCC_EA_WRREQ[0],TCC_EA_WRREQ[1],"
    "TCC_EA_WRREQ_64B[0],TCC_EA_WRREQ_64B[1],DispatchNs,BeginNs,EndNs,CompleteNs\n"
    '0,"triad(float*, float const*, float const*) [clone .kd]",0,0,0,10,10,1048576,256,0,0,8,0,'
    "16,64,0x0,0x7f,16384,100,100,10,0,50,50,50,40,1000,2000,12000,13000\n")


def test_rocprof_v1_per_channel_counters_are_summed(tmp_path):
    # RDREQ 200 (10 of 32 B): 32*10 + 64*190 = 12,480 B; WRREQ 100 (90 of 64 B):
    # 64*90 + 32*10 = 6,080 B; DRAM 18,560 B. FLOP 64 x 2 x 16384 = 2,097,152; 10 us.
    # Before: "no byte counters" and exit 2.
    p = tmp_path / "results.csv"
    p.write_text(V1_INSTANCES)
    k = load_rocprof(str(p)).kernels[0]
    assert k.bytes["DRAM"] == pytest.approx(18_560)
    assert k.flop["fp32"] == pytest.approx(2_097_152)
    assert k.seconds == pytest.approx(10e-6)


def test_rocprof_total_column_wins_over_channels(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("KernelName,BeginNs,EndNs,SQ_INSTS_VALU_ADD_F64,TCC_EA_RDREQ,TCC_EA_RDREQ[0]\n"
                 "k,0,1000,10,7,3\n")
    k = load_rocprof(str(p)).kernels[0]
    assert k.bytes["DRAM"] == pytest.approx(64 * 7)


STATS_V1 = ('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
            '"saxpy(int, float const*, int, float*, int) [clone .kd]",1,4800,4800,100.0\n')
STATS_V3 = ('"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"\n'
            '"JacobiIterationKernel",1000,517647434,517647.434,42.56,510404,527365,2907.32\n')
TRACE_V3 = ('"Kind","Agent_Id","Queue_Id","Kernel_Id","Kernel_Name","Correlation_Id",'
            '"Start_Timestamp","End_Timestamp"\n'
            '"KERNEL_DISPATCH",1,1,3,"saxpy(int, float, float*)",1,1000,5800\n')


@pytest.mark.parametrize("text,expect", [
    (STATS_V1, "kernel-time summary"), (STATS_V3, "kernel-time summary"),
    (TRACE_V3, "no hardware counter column")], ids=["v1-stats", "v3-stats", "v3-trace"])
def test_rocprof_time_only_files_say_what_to_collect(tmp_path, capsys, text, expect):
    p = tmp_path / "x.csv"
    p.write_text(text)
    with pytest.raises(ParseError, match=expect):
        load_rocprof(str(p))
    assert main(["rocprof", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--pmc" in err and "Traceback" not in err


# --- torch.profiler traces of torch 1.8 (categories Operator / Kernel / Memcpy) ------------

def _old_trace():
    op = {"ph": "X", "cat": "Operator", "pid": 1, "tid": "1"}
    dev = {"ph": "X", "pid": 0, "tid": "stream 7"}
    return {"schemaVersion": 1, "traceEvents": [
        {**op, "name": "ProfilerStep#1", "ts": 0, "dur": 500, "args": {"External id": 1}},
        {**op, "name": "aten::to", "ts": 10, "dur": 40,
         "args": {"Input Dims": [[64, 128]], "External id": 2}},
        {**op, "name": "aten::mm", "ts": 100, "dur": 50,
         "args": {"Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"],
                  "External id": 3}},
        {**dev, "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "ts": 20,
         "dur": 10, "args": {"correlation": 7, "external id": 2}},
        {**dev, "cat": "Kernel", "name": "volta_sgemm_32x32_sliced1x4_nn", "ts": 120,
         "dur": 20, "args": {"correlation": 8, "external id": 3, "device": 0}},
        {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": "1",
         "ts": 110, "dur": 5, "args": {"correlation": 8, "external id": 3}},
    ]}


def test_torch_18_operator_and_kernel_categories(tmp_path):
    # mm 64x128 @ 128x32: 2*64*128*32 = 524,288 FLOP, 4*(8192+4096+2048) = 57,344 B, and the
    # 20 us of the Kernel event linked by its lowercase 'external id' (not the op's 50 us).
    # Before: "the trace holds no cpu_op events".
    p = tmp_path / "old.json"
    p.write_text(json.dumps(_old_trace()))
    imp = load_torch_trace(str(p))
    (k,) = imp.kernels
    assert k.name == "aten::mm [64x128, 128x32]"
    assert k.flop["fp32"] == 524_288 and k.bytes["DRAM"] == 57_344
    assert k.seconds == pytest.approx(20e-6)
    assert "GPU kernels linked" in " ".join(imp.notes)
    # the Memcpy under aten::to is a host copy: the copies note names the op that launched it
    assert "aten::to 10 us" in " ".join(imp.notes)


@pytest.mark.parametrize("name,packed", [("trace.json", True), ("trace.json.gz", False)])
def test_torch_trace_gzip_by_content_not_name(tmp_path, name, packed):
    # a gzipped trace renamed to .json (or a plain one named .gz) read the same; before:
    # "cannot read trace: 'utf-8' codec can't decode byte 0x8b" / "Not a gzipped file"
    import gzip

    new = {"Operator": "cpu_op", "Kernel": "kernel", "Memcpy": "gpu_memcpy"}   # torch >= 1.9
    trace = _old_trace()
    for e in trace["traceEvents"]:
        e["cat"] = new.get(e["cat"], e["cat"])
    text = json.dumps(trace).encode()
    p = tmp_path / name
    p.write_bytes(gzip.compress(text) if packed else text)
    (k,) = load_torch_trace(str(p)).kernels
    assert k.flop["fp32"] == 524_288


def test_torch_truncated_gzip_is_a_clear_error(tmp_path, capsys):
    import gzip

    p = tmp_path / "cut.pt.trace.json.gz"
    p.write_bytes(gzip.compress(json.dumps(_old_trace()).encode())[:40])
    assert main(["torch", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}: cannot read trace") and "Traceback" not in err


# rocprofv3 -i input.txt with two `pmc:` lines: one folder per pass (rocprofiler-sdk docs:
# "pass_1/312_counter_collection.csv"), FLOP counters in one, byte counters in the other
_V3_HEAD = ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id",'
            '"Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size","LDS_Block_Size",'
            '"Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Counter_Name",'
            '"Counter_Value","Start_Timestamp","End_Timestamp"\n')


def _v3_rows(counters, times):
    return "".join(f'{d},{d},"Agent 4",1,312,312,1048576,10,"scale(double*, int)",64,0,0,8,0,'
                   f'16,"{name}",{value},{t0},{t1}\n'
                   for d, (t0, t1) in enumerate(times, start=1) for name, value in counters)


def test_rocprofv3_passes_of_one_run_are_joined(tmp_path, capsys):
    # per dispatch: FLOP 64 x 2 x 1000 = 128,000 (pass 1); DRAM 64 x 500 + 32 x 250 =
    # 40,000 B (pass 2); time from pass 1, 2 us. Two dispatches: 256,000 FLOP, 80,000 B, 4 us.
    # Before: two steps, each "no byte counters" / "no FLOP counters", exit 2.
    (tmp_path / "pass_1").mkdir()
    (tmp_path / "pass_2").mkdir()
    p1 = tmp_path / "pass_1" / "312_counter_collection.csv"
    p2 = tmp_path / "pass_2" / "313_counter_collection.csv"
    p1.write_text(_V3_HEAD + _v3_rows([("SQ_INSTS_VALU_FMA_F64", 1000)],
                                      [(1000, 3000), (5000, 7000)]))
    p2.write_text(_V3_HEAD + _v3_rows([("TCC_EA0_RDREQ", 500), ("TCC_EA0_WRREQ", 250)],
                                      [(1100, 3300), (5200, 7400)]))
    (k,) = load_rocprof([str(p1), str(p2)]).kernels
    assert k.calls == 2
    assert k.flop == {"fp64": 256_000}
    assert k.bytes["DRAM"] == 80_000
    assert k.seconds == pytest.approx(4e-6)
    assert k.meta.get("step") is None   # one run, not two steps
    assert main(["rocprof", str(p1), str(p2), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kernels"][0]["bytes"]["DRAM"] == 80_000


def test_rocprofv3_sqlite_and_json_outputs_are_named(tmp_path, capsys):
    import sqlite3

    db = tmp_path / "312_results.db"
    sqlite3.connect(db).close()
    con = sqlite3.connect(db)
    con.execute("create table t(x)")
    con.commit()
    con.close()
    js = tmp_path / "312_results.json"
    js.write_text('{"rocprofiler-sdk-tool": []}')
    for p, what in ((db, "SQLite database"), (js, "JSON file")):
        assert main(["rocprof", str(p)]) == 2
        err = capsys.readouterr().err
        assert what in err and "--output-format csv" in err


def test_torch_kernel_linked_through_its_launch_call(tmp_path):
    # a kernel event without 'External id' is linked by its 'correlation' to the launch call
    # (cuda_runtime) that carries the op's External id - the pair kineto joins with an "ac2g"
    # flow arrow. Before: the kernel was dropped and, with no linked kernel left, the op was
    # timed by its CPU duration (50 us, the launch cost) with no word about it.
    trace = _old_trace()
    new = {"Operator": "cpu_op", "Kernel": "kernel", "Memcpy": "gpu_memcpy",
           "Runtime": "cuda_runtime"}
    for e in trace["traceEvents"]:
        e["cat"] = new.get(e["cat"], e["cat"])
        if e["cat"] in ("kernel", "gpu_memcpy"):
            del e["args"]["external id"]
        elif e["cat"] == "cuda_runtime":
            e["args"] = {"External id": 3, "correlation": 8}
    trace["traceEvents"].append({"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0,
                                 "tid": "stream 7", "ts": 300, "dur": 5,
                                 "args": {"correlation": 99}})
    p = tmp_path / "t.json"
    p.write_text(json.dumps(trace))
    imp = load_torch_trace(str(p))
    (k,) = imp.kernels
    assert k.seconds == pytest.approx(20e-6)
    notes = " ".join(imp.notes)
    assert "GPU kernels linked" in notes
    # the memcpy (correlation 7, no launch call) and the orphan kernel: 10 + 5 us
    assert "2 GPU kernel/memcpy event(s), 15 us, are linked to no op" in notes


def test_files_given_to_the_other_vendors_verb_say_which_verb(tmp_path, capsys):
    # before: "no rocprof header ... found" / "no ncu CSV header ... found", nothing more
    ncu = tmp_path / "out.csv"
    ncu.write_text(RATES_DETAILS)
    roc = tmp_path / "results.csv"
    roc.write_text(V1_INSTANCES)
    assert main(["rocprof", str(ncu)]) == 2
    assert "Nsight Compute CSV" in capsys.readouterr().err
    assert main(["ncu", str(roc)]) == 2
    assert "looks like a rocprof CSV: read it with `rooflab rocprof FILE`" in \
        capsys.readouterr().err


def test_ncu_print_summary_table_is_named(tmp_path, capsys):
    # `ncu --import r.ncu-rep --csv --print-summary per-kernel` (header as NVIDIA prints it);
    # before: "details page without column(s) ID, Metric Value"
    p = tmp_path / "summary.csv"
    p.write_text('"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size",'
                 '"Device","CC","Invocations","Section Name","Metric Name","Metric Unit",'
                 '"Minimum","Maximum","Average"\n'
                 '"1","app","h","saxpy","(256, 1, 1)","(4096, 1, 1)","0","8.0","14",'
                 '"Command line profiler metrics","gpu__time_duration.sum","usecond","1.0",'
                 '"3.0","2.0"\n')
    assert main(["ncu", str(p)]) == 2
    err = capsys.readouterr().err
    assert "per-kernel summary (ncu --print-summary" in err and ".ncu-rep" in err


def test_compare_reads_gzipped_traces(tmp_path, capsys):
    # report/compare/plot take torch traces; before, a *.pt.trace.json.gz was refused there
    # ("is a gzip archive, not a text file") though `rooflab torch` read it
    import gzip

    before = tmp_path / "before.pt.trace.json.gz"
    before.write_bytes(gzip.compress(json.dumps(_old_trace()).encode()))
    faster = _old_trace()
    faster["traceEvents"][4]["dur"] = 10          # the mm kernel: 20 us -> 10 us
    after = tmp_path / "after.json"
    after.write_text(json.dumps(faster))
    assert main(["compare", str(before), str(after), "--json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)["matches"]
    assert m["speedup"] == pytest.approx(2.0)
