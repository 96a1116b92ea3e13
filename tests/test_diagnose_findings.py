"""Review 11a (F-M, F-G, F-E) and 11b (#6, #7, #14) fixes in the model layer, with the
reviews' hand numbers."""

from __future__ import annotations

import pytest
from rich.console import Console

from rooflab.hardware.catalog import lookup
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.machine import machine_of
from rooflab.model.sanity import check_kernel
from rooflab.report.terminal import diagnosis_text, priority_table

# --- 11a F-M: fp16 on a CPU roof falls back to fp32, not to bf16 dot products -------------


def test_fp16_matmul_on_zen4_is_held_to_fp32_not_bf16():
    # Zen 4 has no AVX512-FP16: fp16 is converted (F16C) and multiplied at the fp32 rate,
    # 96 x 3.55 GHz (all-core boost) x 8 lanes x 2 pipes x 2 = 10.9056 TFLOP/s; the 4096^3
    # floor is 2 x 4096^3 / 10.9056e12 = 12.60 ms (6.30 ms at bf16 vector 21.8 TFLOP/s).
    roof = lookup("EPYC 9654").roof
    used, note = roof.compute_for("fp16", "tensor")
    assert (used.precision, used.unit, used.value) == ("fp32", "vector", 10.9056e12)
    assert "using fp32 vector" in note
    assert roof.compute_for("fp16", "vector")[0].label == "fp32 vector"
    k = Kernel("mm", {"fp16": 2 * 4096**3}, {"DRAM": 3 * 2 * 4096**2}, unit="tensor",
               meta={"op": "matmul"})
    p = analyze(roof, [k]).primary()[0]
    assert p.floor_s == pytest.approx(12.6026e-3, rel=1e-4)
    # a bf16 kernel still takes the bf16 dot products (96 x 3.55 GHz x 64 = 21.8112 TFLOP/s)
    assert roof.compute_for("bf16", "tensor")[0].value == pytest.approx(21.8112e12)


def test_fp16_on_a_cpu_that_lists_fp16_keeps_it_and_a_measured_cpu_roof_agrees():
    # Sapphire Rapids lists AVX512-FP16 (fp16 vector 14.336 TFLOP/s): fp16 stays there.
    xeon = lookup("Xeon 8480").roof
    assert xeon.compute_for("fp16", "tensor")[0].label == "fp16 vector"
    # a probed CPU roof with bf16 measured too: fp16 still goes to fp32, as the catalog now
    measured = Roof("AMD EPYC 9654 measured (2 threads)", kind="measured", compute=(
        Ceiling(1.2e11, precision="fp64", unit="vector",
                method="rooflab probe (numba FMA chains)"),
        Ceiling(2.4e11, precision="fp32", unit="vector"),
        Ceiling(4.8e11, precision="bf16", unit="vector")),
        memory=(Ceiling(3e10, level="DRAM"),))
    assert measured.compute_for("fp16", "tensor")[0].label == "fp32 vector"


def test_gpu_fp16_fallback_is_unchanged():
    # a GPU roof with no fp16 figure keeps the bf16 stand-in (same tensor-core rate)
    gpu = Roof("NVIDIA test GPU", compute=(
        Ceiling(1e12, precision="fp32", unit="vector"),
        Ceiling(3.12e14, precision="bf16", unit="tensor")),
        memory=(Ceiling(2e12, level="DRAM"),))
    assert gpu.compute_for("fp16", "tensor")[0].label == "bf16 tensor"
    a100 = lookup("A100").roof
    assert a100.compute_for("fp16", "vector")[0].label == "fp16 vector"
    assert a100.compute_for("fp16", "tensor")[0].label == "fp16 tensor"


# --- 11a F-G: a cache-resident working set on a CPU DRAM roof ---------------------------

# the reviewer's host (me2.json): DRAM 29.6 GB/s, L3 193 GB/s, dispatch floor 196 ns;
# caches L2 1 MiB, L3 32 MiB
CPU = Roof("AMD EPYC measured (2 threads)", kind="measured", compute=(
    Ceiling(1.17e11, precision="fp64", unit="vector",
            method="rooflab probe (numba FMA chains)"),
    Ceiling(2.34e11, precision="fp32", unit="vector")),
    memory=(Ceiling(3e11, level="L2"), Ceiling(1.93e11, level="L3"),
            Ceiling(2.96e10, level="DRAM")),
    overhead_s=196e-9)
HOST = {"kind": "cpu", "caches": {"l1d": 32 * 2**10, "l2": 2**20, "l3": 32 * 2**20}}
# a 100 000-element triad: 2 FLOP and 24 B per element, 2.4 MB per call, 77.2 us
TRIAD = Kernel("triad_small", {"fp64": 2e5}, {"DRAM": 2.4e6}, seconds=77.2e-6,
               meta={"op": "elementwise"})


def test_cache_resident_triad_gets_a_finding_and_no_blocking_advice():
    machine = machine_of(CPU, HOST)
    a = analyze(CPU, [TRIAD])
    p = a.primary()[0]
    # floor 2.4e6 / 29.6e9 = 81.08 us > 77.2 us measured: 105.03 % of the DRAM roof (fmt_pct
    # keeps the digits that hold it above the 105 % line)
    assert p.floor_s == pytest.approx(81.081e-6, rel=1e-4)
    assert p.percent_of_roof == pytest.approx(105.03, rel=1e-3)
    found = {f.check: f for f in check_kernel(a, TRIAD, machine)}
    f = found["cache_resident"]
    assert f.message.startswith("cache-resident: 2.4 MB per call fits in the L3 (33.6 MB")
    assert "the DRAM floor does not bind" in f.message
    assert "(105.03 % of the DRAM roof)" in f.message
    assert "give bytes at L2/L3" in f.fix and "larger size" in f.fix
    actions = [x.action for x in advise(p, CPU, TRIAD, machine=machine)]
    assert not any("block the working set" in x for x in actions), actions   # was 6.11x
    # the same kernel at 100 M elements (2.4 GB per call) is no finding
    big = Kernel("triad", {"fp64": 2e8}, {"DRAM": 2.4e9}, seconds=0.1,
                 meta={"op": "elementwise"})
    ab = analyze(CPU, [big])
    assert "cache_resident" not in {f.check for f in check_kernel(ab, big, machine)}


def test_cache_resident_needs_a_cpu_and_uncounted_bytes():
    # a profiler's counted DRAM bytes are real traffic; a GPU roof is not judged
    counted = TRIAD.with_(provenance={"flop": "counted", "bytes": "counted"})
    a = analyze(CPU, [counted])
    assert "cache_resident" not in {f.check for f in check_kernel(a, counted,
                                                                  machine_of(CPU, HOST))}
    gpu = machine_of(CPU, {"kind": "gpu", "caches": {"l2": 50e6}})
    a = analyze(CPU, [TRIAD])
    assert "cache_resident" not in {f.check for f in check_kernel(a, TRIAD, gpu)}


def test_a_point_at_its_roof_does_not_get_the_dispatch_cure():
    # 0.97 x the 81.08 us floor = 78.65 us (within the 5 % tolerance above the roof):
    # seconds <= floor, so 196 ns of dispatch explains no gap; the old rule
    # (196 ns > 0.5 x max(78.65 - 81.08, 0) = 0) chose "mostly per-call dispatch (Python /
    # framework)" beside "Dispatch overhead is negligible here (196 ns of the 78.6 us)"
    k = TRIAD.with_(seconds=0.97 * 81.081e-6)
    d = diagnose(analyze(CPU, [k]), machine_of(CPU, HOST))[0]
    below = next(x for x in d.distances if x.name == "below roof")
    assert below.factor == pytest.approx(0.97, rel=1e-4)
    # at the roof within the tolerance: no gap, so no cure at all (audit 15: it read "0.97x
    # below the roof" with the kernel-efficiency cure)
    assert below.words.startswith("none: at the roof (0.970x, within the 5 % tolerance)")
    assert "per-call dispatch" not in below.words
    assert "below the roof at its AI:" not in below.words


# --- 11a F-E: noisy timing / loaded probe lead with "re-time on a quiet machine" -------

LOAD_NOTE = ("other processes used 54% of the CPUs while the probe ran: measured ceilings "
             "read low; rerun on a quiet machine")
# gemm_fp64_1024: 2 x 1024^3 FLOP at 42.8 GFLOP/s = 36.6 % of 117 GFLOP/s
GEMM = Kernel("gemm_fp64_1024", {"fp64": 2 * 1024**3}, {"DRAM": 3 * 8 * 1024**2},
              seconds=2 * 1024**3 / 42.8e9,
              meta={"op": "matmul", "backend": "numpy", "iqr_rel": 0.129, "flags": ["noisy"]})


def test_noisy_kernel_on_a_loaded_probe_leads_with_retime():
    from dataclasses import replace

    roof = replace(CPU, notes=(LOAD_NOTE,))
    machine = machine_of(roof, {"kind": "cpu"})
    assert machine.load_notes == (LOAD_NOTE,) and machine.other_load == pytest.approx(0.54)
    p = analyze(roof, [GEMM]).primary()[0]
    advice = advise(p, roof, GEMM, machine=machine)
    first = advice[0]
    assert first.action.startswith("re-time on a quiet machine")
    assert "13 %" in first.detail and "54 % other load" in first.detail
    assert first.speedup == 1.0
    # the BLAS advice stays, at 0.8 x 117 / 42.8 = 2.187x, marked uncertain
    blas = next(a for a in advice if "BLAS" in a.action)
    assert blas.speedup == pytest.approx(0.8 * 117 / 42.8, rel=1e-3)
    assert "uncertain: its timing samples spread 13 %" in blas.assumption


def test_load_alone_or_noise_alone_lead_and_a_quiet_kernel_does_not():
    from dataclasses import replace

    quiet = GEMM.with_(meta={"op": "matmul", "iqr_rel": 0.01})
    loaded = replace(CPU, notes=(LOAD_NOTE,))
    p = analyze(loaded, [quiet]).primary()[0]
    assert advise(p, loaded, quiet, machine=machine_of(loaded, {"kind": "cpu"}))[0] \
        .action.startswith("re-time")
    p = analyze(CPU, [GEMM]).primary()[0]
    assert advise(p, CPU, GEMM, machine=machine_of(CPU, HOST))[0].action.startswith("re-time")
    p = analyze(CPU, [quiet]).primary()[0]
    assert not any(a.action.startswith("re-time")
                   for a in advise(p, CPU, quiet, machine=machine_of(CPU, HOST)))
    # the profile's extras entry, when a caller passes it, gives the share directly
    m = machine_of(CPU, {"kind": "cpu", "machine_load": {
        "contended_share": 0.54, "notes": [LOAD_NOTE]}})
    assert m.other_load == pytest.approx(0.54)


# --- 11b #6/#7: untimed kernels on max(work floor, calls x launch floor) ----------------

GPU = Roof("NVIDIA A100 test", compute=(
    Ceiling(7.8e13, precision="fp16", unit="vector"),
    Ceiling(3.12e14, precision="fp16", unit="tensor"),
    Ceiling(1.95e13, precision="fp32", unit="vector")),
    memory=(Ceiling(2e12, level="DRAM"),), overhead_s=5e-6)


def test_untimed_launch_bound_kernel_is_overhead_with_launch_free_advice():
    # rope: 2e5 B at 2 TB/s = 100 ns of work over 22 calls; 22 x 5 us = 110 us of launches
    rope = Kernel("rope", {"fp16": 1e5}, {"DRAM": 2e5}, calls=22, meta={"op": "rope"})
    p = analyze(GPU, [rope]).primary()[0]
    assert p.floor_s == pytest.approx(100e-9) and p.bound == "overhead"   # was "memory"
    got = {a.action: a for a in advise(p, GPU, rope)}
    graph = next(a for k, a in got.items() if "CUDA graph" in k)
    assert graph.speedup == pytest.approx(110e-6 / 100e-9)          # 1100x, launches gone
    fuse = got["fuse into the neighbouring kernel"]
    assert fuse.speedup == pytest.approx(110e-6 / 50e-9)            # half the bytes too
    assert got["batch the 22 calls into one launch"].speedup == pytest.approx(22.0)
    assert all(a.speedup > 1.01 for a in got.values())              # no 1.00x advice
    d = diagnose(analyze(GPU, [rope]))[0]
    assert "22 call(s) x 5 us launch floor = 110 us is more than the work floor 100 ns" \
        in d.evidence


def test_untimed_int4_advice_uses_the_with_launches_floor():
    # gate_proj: 249 us of work (4.98e8 B at 2 TB/s), 22 launches = 110 us.
    # int4: 62.25 us of work -> with launches max(62.25, 110) = 110 us: 249 / 110 = 2.264x
    # (the old summed rule: (249 + 110) / (62.25 + 110) = 2.084x, review 11b #7's 2.08x)
    gate = Kernel("gate_proj", {"fp16": 4.98e8}, {"DRAM": 4.98e8}, calls=22,
                  meta={"op": "linear"})
    p = analyze(GPU, [gate]).primary()[0]
    assert p.bound == "memory" and p.floor_s == pytest.approx(249e-6)
    got = {a.action: a for a in advise(p, GPU, gate)}
    int4 = got["store weights in int4 (dequantize on the fly)"]
    assert int4.new_seconds == pytest.approx(110e-6)
    assert int4.speedup == pytest.approx(249 / 110)


# --- 11b #14: the batching gain is per request in the terminal ----------------------------


def test_terminal_says_the_batching_gain_is_per_request():
    gate = Kernel("gate_proj", {"fp16": 4.98e8}, {"DRAM": 4.98e8}, calls=22,
                  meta={"op": "linear"})
    d = diagnose(analyze(GPU, [gate]))[0]
    assert d.best_advice.action == "batch 8 requests per weight read"
    console = Console(width=200, record=True)
    console.print(priority_table([d]))
    console.print(diagnosis_text(d))
    text = console.export_text()
    assert "8.00x per request" in text
    assert ("-> batch 8 requests per weight read: 8.00x predicted per request (throughput; "
            "the latency of one request does not drop)") in text
