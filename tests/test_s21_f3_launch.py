"""Review s21 r3 F1: the launch floor is no part of a GPU-side kernel duration (Nsight
Compute's gpu__time_duration, rocprof's, the torch profiler's CUDA kernel time), and the
launches take at most the time above the work floor. Hand numbers from the catalog: A100
80GB SXM DRAM 2.039 TB/s, fp32 vector 19.5 TFLOP/s; H100 SXM DRAM 3.35 TB/s; 5 us a launch.
"""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice_core import efficiency_of
from rooflab.model.sanity_ceilings import applicable_launch_s

A100_BW, H100_BW, LAUNCH = 2.039e12, 3.35e12, 5e-6
GRAPH = "capture in a CUDA graph"
INST = "sm__sass_thread_inst_executed_op"


def _ncu_csv(path, ns: str, launches: int = 200) -> None:
    """`ncu --csv` details rows: `launches` launches of small_kernel, 4 MB of DRAM bytes,
    500 000 FFMA (1 MFLOP) and `ns` nanoseconds of gpu__time_duration each, CC 8.0."""
    rows = [["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
             "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
             "Metric Name", "Metric Unit", "Metric Value"]]
    for i in range(launches):
        for name, unit, val in (("dram__bytes.sum", "byte", "4,000,000"),
                                ("gpu__time_duration.sum", "nsecond", ns),
                                (f"{INST}_fadd_pred_on.sum", "inst", "0"),
                                (f"{INST}_fmul_pred_on.sum", "inst", "0"),
                                (f"{INST}_ffma_pred_on.sum", "inst", "500,000")):
            rows.append([str(i), "1", "app", "h", "small_kernel", "1", "7", "(256, 1, 1)",
                         "(4096, 1, 1)", "0", "8.0", "Command line profiler metrics", name,
                         unit, val])
    with open(path, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)


def _diag(capsys, argv) -> dict:
    assert main([*argv, "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)["diagnosis"]
    return d


@pytest.mark.parametrize("ns", ["4,900", "5,100", "8,000"])
def test_ncu_launches_keep_their_class_and_gain_across_the_launch_floor(tmp_path, capsys, ns):
    # 200 x 4 MB = 800 MB at 2.039 TB/s: work floor 392.35 us (the 200 MFLOP take 10 us at
    # 19.5 TFLOP/s). At 5.1 us a launch (1.02 ms) the old model took 200 x 5 us = 1 ms out
    # as launch cost: "overhead", gain 20 us, "CUDA graph 2.60x"; at 4.9 us (below the
    # floor) memory, gain 588 us. A GPU-side time never holds the launches: memory at
    # every length, gain = time - 392.35 us, and no CUDA-graph lever.
    path = tmp_path / "small.csv"
    _ncu_csv(path, ns)
    d = _diag(capsys, ["report", str(path), "--on", "A100 80GB SXM"])
    seconds = 200 * float(ns.replace(",", "")) * 1e-9
    floor = 200 * 4e6 / A100_BW
    assert d["bound"] == "memory"
    assert d["gain_s"] == pytest.approx(seconds - floor, rel=1e-6)
    assert d["headroom"] == pytest.approx(seconds / floor, rel=1e-6)
    assert not any(a["action"].startswith(GRAPH) for a in d["advice"])
    assert not any("merge the 200 calls" in a["action"] for a in d["advice"])


def test_ncu_at_5_1_us_coalescing_is_priced_on_the_whole_time(tmp_path, capsys):
    # no launch inside the GPU-side time: 80 % of the roof takes 392.35 us / 0.8 =
    # 490.4 us of the 1.02 ms, 2.08x (the old model, overhead-bound, priced graphs only)
    path = tmp_path / "small.csv"
    _ncu_csv(path, "5,100")
    d = _diag(capsys, ["report", str(path), "--on", "A100 80GB SXM"])
    got = {a["action"]: a["speedup"] for a in d["advice"]}
    coalesce = next(v for k, v in got.items() if k.startswith("coalesce"))
    assert coalesce == pytest.approx(1.02e-3 / (200 * 4e6 / A100_BW / 0.8), rel=1e-6)


def _trace(path, calls: int = 100, kernel_us: float = 8.0) -> None:
    """An H100 torch trace: `calls` aten::add on 1M fp32, each linked by External id to an
    8 us CUDA kernel."""
    events = []
    for i in range(calls):
        events.append({"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "name": "aten::add",
                       "ts": 50 * i, "dur": 20,
                       "args": {"Input Dims": [[1048576], [1048576], []],
                                "Input type": ["float", "float", "Scalar"],
                                "External id": i + 1, "Concrete Inputs": ["", "", "1"]}})
        events.append({"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel<add>",
                       "pid": 0, "tid": 7, "ts": 50 * i + 5, "dur": kernel_us,
                       "args": {"External id": i + 1}})
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                                 "totalGlobalMem": 85029158912, "computeMajor": 9,
                                 "computeMinor": 0, "warpSize": 32, "numSms": 132}],
           "traceEvents": events}
    path.write_text(json.dumps(doc))


def test_torch_trace_cuda_time_is_no_launch_overhead(tmp_path, capsys):
    # 100 x (2 reads + 1 write of 1M fp32 = 12 582 912 B) at 3.35 TB/s: floor 375.6 us;
    # measured 100 x 8 us = 800 us: 47 % of the roof, headroom 2.13x, gain 424.4 us. The
    # old model took 100 x 5 us out: "overhead-bound ... the work runs at 100 %", graph 2.13x
    path = tmp_path / "trace.json"
    _trace(path)
    d = _diag(capsys, ["report", str(path)])
    floor = 100 * 3 * 4 * 1048576 / H100_BW
    assert d["bound"] == "memory"
    assert d["headroom"] == pytest.approx(800e-6 / floor, rel=1e-6)
    assert d["headroom"] == pytest.approx(2.13, abs=0.005)
    assert d["gain_s"] == pytest.approx(800e-6 - floor, rel=1e-6)
    assert not any(a["action"].startswith(GRAPH) for a in d["advice"])


ROOF = Roof("test GPU", "nominal", compute=(Ceiling(100e12, precision="fp16"),),
            memory=(Ceiling(H100_BW, level="DRAM"),), overhead_s=LAUNCH)


def test_gpu_side_point_leaves_the_launch_floor_out():
    k = Kernel("k", {"fp16": 1e6}, {"DRAM": 4e6}, seconds=1e-3, calls=100,
               meta={"source": "ncu"})
    (p,) = analyze(ROOF, [k]).points
    assert p.gpu_side and p.overhead_floor_s == pytest.approx(100 * LAUNCH)
    assert applicable_launch_s(p) == 0.0 and p.bound != "overhead"
    # the same time from a wall clock keeps its 500 us of launches: overhead-bound
    (q,) = analyze(ROOF, [Kernel("k", {"fp16": 1e6}, {"DRAM": 4e6}, seconds=1e-3,
                                 calls=100)]).points
    assert not q.gpu_side and applicable_launch_s(q) == pytest.approx(500e-6)
    assert q.bound == "overhead"
    # a CPU-only torch trace times host ops (launch cost inside): not GPU-side
    cpu = Kernel("k", {"fp16": 1e6}, {"DRAM": 4e6}, seconds=1e-3, calls=100,
                 meta={"source": "torch.profiler", "time": "cpu op"})
    (c,) = analyze(ROOF, [cpu]).points
    assert not c.gpu_side


def test_gemv_launch_share_is_capped_at_the_time_above_its_floor(capsys, tmp_path):
    # gemv_decode: 33 570 816 B at 3.35 TB/s = 10.021 us of floor, measured 12.5 us. The
    # launch takes at most 12.5 - 10.021 = 2.479 us (was 5 us: the work then "ran" at
    # 7.5 us, faster than the roof, clamped to 100 %)
    k = Kernel("gemv_decode", {"fp16": 3.3554432e7}, {"DRAM": 3.3570816e7}, seconds=12.5e-6,
               meta={"op": "gemv"})
    (p,) = analyze(ROOF, [k]).points
    e = efficiency_of(p)
    floor = 3.3570816e7 / H100_BW
    assert e.launch_s == pytest.approx(12.5e-6 - floor, rel=1e-9)
    assert e.work_s == pytest.approx(floor, rel=1e-9) and e.efficiency == pytest.approx(1.0)
    # batching 8 vectors per matrix read: 8 x the FLOP (8 x 33.6 MFLOP at the
    # fp16 vector 134 TFLOP/s = 2.0 us) on the same bytes, so the batched kernel is 2.479 us
    # + 10.021 us = 12.5 us for 8 requests: 8.00x per request (was 6.66x: a batched kernel
    # of 15 us, longer than the 12.5 us measured for the same bytes)
    f = tmp_path / "g.json"
    f.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "gemv_decode", "flop": {"fp16": 3.3554432e7}, "bytes": {"DRAM": 3.3570816e7},
         "seconds": 12.5e-6, "meta": {"op": "gemv", "shape": {"m": 4096, "n": 4096}}}]}))
    d = _diag(capsys, ["report", str(f), "--on", "H100 SXM"])
    batch = next(a for a in d["advice"] if a["action"].startswith("batch 8 vectors"))
    assert batch["speedup"] == pytest.approx(8.0, rel=1e-3)
