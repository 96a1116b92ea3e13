"""Advice by bound (seed 000 §5) with predicted points worked out by hand.

Toy roof without a launch floor (so efficiency = floor / time): fp32 vector 1e12 FLOP/s,
tf32 tensor 4e12, fp16 tensor 8e12, DRAM 1e11 B/s, L2 4e11 B/s. Ridge fp32/DRAM = 10.
The model: new time = max(FLOP / P, bytes / B) / efficiency (efficiency kept unless the
advice is about efficiency, which moves it to 80 %).
"""

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.model.advice_core import TARGET_EFFICIENCY, efficiency_of

ROOF = Roof("toy", compute=(Ceiling(1e12, precision="fp32", unit="vector"),
                            Ceiling(4e12, precision="tf32", unit="tensor"),
                            Ceiling(8e12, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e11, level="DRAM"), Ceiling(4e11, level="L2")))


def advice_for(kernel, roof=ROOF):
    p = analyze(roof, [kernel]).primary()[0]
    return p, {a.action.split(" ")[0]: a for a in advise(p, roof, kernel)}


def test_memory_bound():
    # AI 0.1, floor 1e10 / 1e11 = 0.1 s, measured 0.25 s -> efficiency 0.4.
    p, a = advice_for(Kernel("stream", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.25))
    assert p.bound == "memory" and efficiency_of(p).efficiency == pytest.approx(0.4)
    # Fuse with one neighbour: bytes / 2 -> floor 0.05 s / 0.4 = 0.125 s: 2x, AI 0.2.
    assert a["fuse"].speedup == pytest.approx(2.0) and a["fuse"].new_ai == pytest.approx(0.2)
    # No tiling: an op of no known matrix kind under 1 FLOP/B streams, each element read
    # and written once (review 12a #4; this test offered "tile ... 4x" at AI 0.1 before).
    assert "tile" not in a
    # Lower precision fp32 -> fp16 (the roof's fp16 tensor ceiling): bytes / 2 -> 2x.
    assert a["use"].speedup == pytest.approx(2.0) and "fp16" in a["use"].action
    # Coalescing: the same point at 80 % instead of 40 %: 0.1 / 0.8 = 0.125 s -> 2x.
    assert a["coalesce"].speedup == pytest.approx(0.25 / (0.1 / TARGET_EFFICIENCY))
    assert a["coalesce"].shrinks == "below roof"
    # L2 residency is not offered: one call moves 10 GB, far more than an L2.
    assert "keep" not in a
    # Every piece says what it assumes and gives a predicted point.
    assert all(x.assumption and x.new_flop_per_s > 0 for x in a.values())


def test_memory_bound_small_working_set_gets_l2():
    # 1e7 B per call fits a 50 MB L2: served at 4e11 B/s -> floor 1e7 / 4e11 = 2.5e-5 s,
    # at the current efficiency 0.4 (1e-4 s floor, 2.5e-4 s measured): 6.25e-5 s -> 4x.
    p, a = advice_for(Kernel("small", {"fp32": 1e6}, {"DRAM": 1e7}, seconds=2.5e-4))
    assert a["keep"].speedup == pytest.approx(4.0)


def test_elementwise_gets_no_tiling():
    _, a = advice_for(Kernel("add", {"fp32": 1e9}, {"DRAM": 8e9}, seconds=0.16,
                             meta={"op": "elementwise"}))
    assert "tile" not in a and "fuse" in a


def test_compute_bound():
    # AI 1000, floor 1e12 / 1e12 = 1 s, measured 2 s -> efficiency 0.5.
    p, a = advice_for(Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=2.0,
                             meta={"op": "matmul"}))
    assert p.bound == "compute"
    # Tensor cores (tf32 4e12): floor 0.25 s / 0.5 = 0.5 s -> 4x.
    by_action = {x.action: x for x in a.values()}
    tc = next(x for x in by_action.values() if "tensor cores" in x.action)
    assert tc.speedup == pytest.approx(4.0) and tc.shrinks == "roof"
    # Occupancy/ILP: 80 % instead of 50 %: 1 / 0.8 = 1.25 s -> 1.6x.
    assert a["raise"].speedup == pytest.approx(1.6)


def test_compute_bound_lower_precision():
    # fp32 -> fp16 tensor 8e12 and bytes / 2: floor max(0.125, 0.005) = 0.125 s / 0.5 -> 8x.
    p = analyze(ROOF, [Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=2.0)]).points[0]
    low = [x for x in advise(p, ROOF, Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}))
           if x.action.startswith("use fp16")]
    assert low and low[0].speedup == pytest.approx(8.0)
    assert low[0].new_ai == pytest.approx(2000.0)     # 1e12 / 5e8


def test_overhead_bound():
    roof = Roof("toy", compute=ROOF.compute, memory=ROOF.memory, overhead_s=5e-6)
    # 100 calls x 5 us = 0.5 ms launch of a 1 ms total; work 0.5 ms for a 1e-7 s floor.
    p, a = advice_for(Kernel("tiny", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=1e-3, calls=100),
                      roof)
    assert p.bound == "overhead"
    # CUDA graph: launch removed, work as now: 0.5 ms -> 2x.
    assert a["capture"].speedup == pytest.approx(2.0)
    # Fuse into a neighbour: no launch and half the bytes: 0.25 ms -> 4x.
    assert a["fuse"].speedup == pytest.approx(4.0)
    # Batch the 100 calls: one 5 us launch + 0.5 ms work -> 1e-3 / 5.05e-4.
    assert a["batch"].speedup == pytest.approx(1e-3 / 5.05e-4)


def test_latency_bound():
    # floor 0.1 s, measured 2 s: 5 % of roof. More parallelism to 80 %: 0.125 s -> 16x.
    p, a = advice_for(Kernel("slow", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=2.0))
    assert p.bound == "latency"
    assert a["expose"].speedup == pytest.approx(16.0)


def test_sorted_best_first():
    p = analyze(ROOF, [Kernel("s", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.25)]).points[0]
    out = advise(p, ROOF, Kernel("s", {"fp32": 1e9}, {"DRAM": 1e10}))
    assert [x.speedup for x in out] == sorted((x.speedup for x in out), reverse=True)


def test_decode_gemv_gets_batching_and_int4():
    # Seed 004's decode b=1 on a 320 GB/s roof: 2.2e9 FLOP and bytes (AI 1), 15 ms;
    # floor 2.2e9 / 3.2e11 = 6.875 ms -> efficiency 0.458.
    roof = Roof("T4", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
                memory=(Ceiling(320e9, level="DRAM"),))
    k = Kernel("decode", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015, meta={"op": "gemv"})
    p, a = advice_for(k, roof)
    # Batch 8: 8x the FLOP for the same weight bytes (AI 8, still far below the ridge 203):
    # same time, 8 requests -> 8x per request.
    assert a["batch"].new_ai == pytest.approx(8.0) and a["batch"].speedup == pytest.approx(8.0)
    # int4 weights: 2 -> 0.5 byte: AI 4 (seed 004), bytes / 4 -> 4x.
    assert a["store"].new_ai == pytest.approx(4.0) and a["store"].speedup == pytest.approx(4.0)


# --- machine kind: CPU roofs get CPU levers, GPU roofs keep theirs ---------------------------
from rooflab.model.machine import Machine, machine_of  # noqa: E402

GPU_WORDS = ("cuda", "tensor core", "occupancy", "coalesce", "warp", "shared memory")
# A probe-like CPU roof: fp64 118 GFLOP/s, fp32 236, L2 235 GB/s, L3 186, DRAM 23.5.
CPU = Roof("AMD EPYC measured (2 threads)", kind="measured",
           source="rooflab probe (numba kernels, this machine)",
           compute=(Ceiling(118e9, precision="fp64", unit="vector"),
                    Ceiling(236e9, precision="fp32", unit="vector")),
           memory=(Ceiling(235e9, level="L2"), Ceiling(186e9, level="L3"),
                   Ceiling(23.5e9, level="DRAM")), overhead_s=421e-9)
HOST = {"kind": "cpu", "flags": ["avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni"],
        "caches": {"l1d": 32768, "l2": 1048576, "l3": 33554432}}


def _text(items):
    return " ".join(f"{a.action} {a.detail} {a.assumption}" for a in items).lower()


def test_machine_kind_of_every_catalog_roof():
    from rooflab.hardware.catalog import _index

    devices = _index().devices
    assert len(devices) > 10
    # From the roof alone (names, sources, derivations), as `rooflab report --on NAME` has it.
    assert [d.name for d in devices if machine_of(d.roof).kind != d.kind] == []
    xeon = machine_of(next(d for d in devices if "8480" in d.name).roof)
    assert {"amx", "avx512_bf16", "vnni", "avx512"} <= xeon.features


def test_machine_from_probe_host():
    m = machine_of(CPU, HOST)
    assert m.kind == "cpu" and m.simd == "AVX-512"
    assert {"avx512_bf16", "vnni", "fma"} <= m.features and "amx" not in m.features
    assert m.caches == {"L1": 32768.0, "L2": 1048576.0, "L3": 33554432.0}
    assert machine_of(ROOF).kind == "gpu"           # tf32 tensor cores, no CPU evidence
    assert machine_of(Roof("bare", compute=(Ceiling(1e12, precision="fp32"),),
                           memory=(Ceiling(1e11, level="DRAM"),))).kind == ""
    assert machine_of(CPU, {"backend": "cuda"}).kind == "gpu"   # the host has the last word


def test_cpu_roof_gets_cpu_levers_and_the_same_gains():
    cpu, gpu = machine_of(CPU, HOST), Machine("gpu")
    # Compute-bound matmul: AI 2e9 / 1e7 = 200 > ridge 5; floor 2e9 / 118e9 = 16.9 ms,
    # measured 80 ms -> efficiency 0.212; at 80 %: 421 ns + 21.2 ms -> 3.78x.
    gemm = Kernel("gemm", {"fp64": 2e9}, {"DRAM": 1e7}, seconds=0.08, meta={"op": "matmul"})
    # Memory-bound stream: 1.2e8 B / 23.5e9 = 5.1 ms floor, measured 15 ms.
    stream = Kernel("triad", {"fp64": 1e7}, {"DRAM": 1.2e8}, seconds=0.015,
                    meta={"op": "elementwise"})
    tiny = Kernel("tiny", {"fp64": 1e3}, {"DRAM": 1e4}, seconds=6e-4, calls=1000)
    for k in (gemm, stream, tiny):
        p = analyze(CPU, [k]).primary()[0]
        on_cpu, on_gpu = advise(p, CPU, k, machine=cpu), advise(p, CPU, k, machine=gpu)
        assert not any(w in _text(on_cpu) for w in GPU_WORDS), _text(on_cpu)
        # Same model, same numbers: only the words differ.
        assert sorted(a.speedup for a in on_cpu) == pytest.approx(
            sorted(a.speedup for a in on_gpu))
    p = analyze(CPU, [gemm]).primary()[0]
    best = advise(p, CPU, gemm, machine=cpu)[0]
    assert "BLAS" in best.action and "AVX-512" in best.action
    assert best.speedup == pytest.approx(0.08 / (421e-9 + 2e9 / 118e9 / TARGET_EFFICIENCY))
    p = analyze(CPU, [stream]).primary()[0]
    assert any("SIMD" in a.action and "NUMA" in a.action
               for a in advise(p, CPU, stream, machine=cpu))
    p = analyze(CPU, [tiny]).primary()[0]
    assert p.bound == "overhead"
    # 1000 calls x 421 ns = 421 us of the 600 us: without it 179 us -> 3.35x.
    cut = next(a for a in advise(p, CPU, tiny, machine=cpu) if "Python/framework" in a.action)
    assert cut.speedup == pytest.approx(6e-4 / (6e-4 - 1000 * 421e-9))


def test_cpu_no_cache_blocking_into_a_level_the_working_set_fits():
    # 1e6 B per call fits the 1 MiB L2: a repeated call is served from L2 already, so
    # "block the working set into L2" (10x, the bandwidth ratio) offered a gain the kernel
    # has (review 11a F-G; this test asserted that 10x before). The sanity check says
    # it is cache-resident instead (tests/test_diagnose_findings.py).
    from dataclasses import replace

    roof = replace(CPU, overhead_s=None)
    k = Kernel("blocked", {"fp64": 1e4}, {"DRAM": 1e6}, seconds=1e-4)
    p = analyze(roof, [k]).primary()[0]
    for machine in (machine_of(roof, HOST), None):
        actions = [x.action for x in advise(p, roof, k, machine=machine)]
        assert not any(x.startswith("block the working set") for x in actions), actions


def test_cpu_amx_and_bf16_levers_where_the_roof_has_them():
    from rooflab.hardware.catalog import lookup

    xeon = lookup("Xeon 8480").roof
    bf16_amx = xeon.find_compute("bf16", "tensor").value          # 56 x 2 GHz x 1024
    fp32 = xeon.find_compute("fp32", "vector").value
    # fp32 matmul at half its roof: AI 1e12 / 1e9 = 1000 (compute side).
    k = Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=2 * 1e12 / fp32,
               meta={"op": "matmul"})
    p = analyze(xeon, [k]).primary()[0]
    amx = next(a for a in advise(p, xeon, k) if "AMX" in a.action)
    assert amx.action == "use bf16 instead of fp32 on AMX tiles"
    # floor max(1e12 / bf16_amx, 5e8 / B) at efficiency 0.5.
    bw = xeon.bandwidth("DRAM").value
    assert amx.speedup == pytest.approx(
        (2 * 1e12 / fp32) / (max(1e12 / bf16_amx, 5e8 / bw) / 0.5))


def test_gpu_l2_residency_uses_the_device_l2():
    # 1e7 B per call: fits the 50 MB assumed by default (4x, as above), not a T4's 4 MiB.
    k = Kernel("small", {"fp32": 1e6}, {"DRAM": 1e7}, seconds=2.5e-4)
    p = analyze(ROOF, [k]).primary()[0]
    assert any(a.action.startswith("keep") for a in advise(p, ROOF, k))
    t4ish = Machine("gpu", caches={"L2": 4 * 2**20})
    assert not any(a.action.startswith("keep") for a in advise(p, ROOF, k, machine=t4ish))


def test_a_kernel_with_no_bytes_gets_advice_without_a_traceback(tmp_path, capsys):
    # 1 GFLOP in 1 ms and no bytes: AI infinite, compute side; lowering the precision has
    # no bytes to shrink, so that advice is left out (it divided by zero before).
    from rooflab.cli.main import main

    path = tmp_path / "z.csv"
    path.write_text("name,flop,bytes,seconds\nzero_b,1e9,0,0.001\n")
    assert main(["report", str(path), "--on", "T4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "AI inf" in out and "use fp16 instead" not in out
