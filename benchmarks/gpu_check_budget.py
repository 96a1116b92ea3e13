"""How long benchmarks/gpu_check.py takes on one H200 SXM, stage by stage: an estimate
from the probe's own sizes and timing plans (rooflab.probe.gpu.context.CUDA_SIZES, the
call counts of timing.plan_counts) at half the catalog's rates, plus the fixed costs no
size sets (start-up, Triton compiles, the chart), each a named assumption below.

    PYTHONPATH=src python benchmarks/gpu_check_budget.py            # default mode
    PYTHONPATH=src python benchmarks/gpu_check_budget.py --mode quick

The device run has four minutes (issue 4). Half the nominal rate is the seeds' floor of a
healthy card (below it the probe itself says "far below nominal"): a slower call makes a
measurement of min_samples calls longer, so this errs long. The script also bounds itself:
the CLI runs get what is left of TOTAL_BUDGET_S, and past HANG_EXIT_S it exits with its
stacks; a lost CUDA context re-runs it once within what is left of HANG_EXIT_S (a line
gives that worst case). Imports rooflab (catalog and sizes) and nothing the device machine lacks.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import rooflab  # noqa: F401
except ImportError:  # run from the source tree without PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from rooflab.probe.gpu.context import CUDA_SIZES, Sizes  # noqa: E402
from rooflab.probe.gpu.timing import ESTIMATE_CALLS, plan_counts  # noqa: E402
from rooflab.probe.timer import QUICK, TimingPlan  # noqa: E402

# Achieved over nominal: the seeds' floor of a healthy card (compute 50 %, the probe's
# "far below nominal" note); errs long, since a slow call costs min_samples calls.
EFFICIENCY = 0.5
# Assumptions no size sets (seconds), each erring long:
START_S = 10.0        # python + import torch + CUDA context (RESULTS.md: ~10 s on CUDA)
COMPILE_S = 2.0       # one Triton kernel on a cold cache ("a second or so", kernels.py)
MEASURE_FIXED_S = 0.02   # per measurement: buffers, random fill, 2 x samples CUDA events
TORCH_LAUNCH_S = 10e-6   # an eager PyTorch launch (seed 004: 5-10 us)
TRITON_LAUNCH_S = 40e-6  # a Triton launch through its Python launcher
SYNC_S = 20e-6           # a synchronize's round trip
GRAPH_KERNEL_S = 2e-6    # one kernel of a replayed CUDA graph
PIN_S_PER_GIB = 0.5      # cudaHostAlloc of pinned host memory
CHART_S = 5.0            # matplotlib import and the roofline PNG (1.6-7 s on a 2-core VM)
NVML_READ_S = 0.1        # one NVML reading: nvmlInit, the queries, nvmlShutdown
# NVML readings of one probe: clocks before and after, load before and after, clocks right
# after each bf16 matmul size and each copy (compute.py, memory.py).
NVML_READS = {"quick": 8, "default": 9, "full": 10}
# Triton kernels compiled on a cold cache: gpu_check's own checks (copy, triad, 2 sweeps,
# 3 FMA dtypes, empty, int8 GEMM) then the default probe's 2 new L1-sweep blocks (1024,
# 512); a fresh `rooflab probe --quick` (copy, triad, .cg sweep, 3 FMA, int8, empty).
COMPILES = {"check": 9, "default": 2, "quick": 0, "full": 2}
CLI_COLD_COMPILES = 8
H200 = "NVIDIA H200 SXM"


@dataclass(frozen=True)
class Rates:
    """The rates one estimate runs at (per second): nominal x EFFICIENCY."""

    flop: dict          # precision -> FLOP/s of its matmul (tensor where there is one)
    vector: dict        # precision -> FLOP/s on the vector units
    dram: float         # B/s
    link: float         # host link B/s per direction
    l2_bytes: float
    sms: int


def h200_rates(efficiency: float = EFFICIENCY) -> Rates:
    from rooflab.hardware.catalog import lookup

    d = lookup(H200)
    roof = d.roof
    vector = {c.precision: c.value * efficiency for c in roof.compute if c.unit == "vector"}
    flop = {**vector, **{c.precision: c.value * efficiency for c in roof.compute
                         if c.unit == "tensor"}}
    flop["fp32"] = vector["fp32"]          # IEEE fp32 runs on the vector units
    link = d.host_link_ceiling
    link = link() if callable(link) else link
    return Rates(flop=flop, vector=vector, dram=roof.find_memory("DRAM").value * efficiency,
                 link=link.value * efficiency, l2_bytes=float(d.l2_bytes), sms=int(d.sms))


def measurement_s(call_s: float, plan: TimingPlan, flush_s: float = 0.0) -> float:
    """One time_calls: a first call, ESTIMATE_CALLS flushed calls, the warm-up calls and
    the timed ones (each flushed), as timing.time_calls runs them."""
    warmup, repeat = plan_counts(call_s + flush_s, plan)
    return (call_s + ESTIMATE_CALLS * (call_s + flush_s) + warmup * call_s
            + repeat * (call_s + flush_s) + MEASURE_FIXED_S)


def _matmul_s(s: Sizes, r: Rates, flush_s: float) -> float:
    total = sum(measurement_s(2.0 * n ** 3 / rate, s.plan, flush_s)
                for rate in r.flop.values() for n in s.matmul_sizes)
    n = max(s.matmul_sizes)          # the Triton int8 GEMM at the largest size
    return total + measurement_s(2.0 * n ** 3 / r.flop["int8"], s.plan, flush_s)


def _vector_s(s: Sizes, r: Rates) -> float:
    from rooflab.probe.gpu.compute import FMA_BLOCK, FMA_PROGRAMS_PER_SM

    flop = 2.0 * s.fma_iters * 8 * r.sms * FMA_PROGRAMS_PER_SM * FMA_BLOCK   # 8 chains
    return sum(measurement_s(flop / r.vector[p], s.plan) for p in ("fp64", "fp32", "fp16"))


def _sweep_s(s: Sizes, r: Rates) -> float:
    """Both sweeps, every set read at the DRAM rate (the slowest level: errs long)."""
    from rooflab.probe.gpu.identity import L1_PER_SM
    from rooflab.probe.gpu.memory import FP32, SWEEP_BLOCK, l1_sweep_sizes
    from rooflab.probe.gpu.sweep import sweep_sizes

    sizes = list(sweep_sizes(s.sweep_lo, s.sweep_hi_l2 * r.l2_bytes, s.sweep_step,
                             align=SWEEP_BLOCK * FP32))
    if s.sweep_step < 1.5:                       # cache_sweep's L1 sweep
        l1 = L1_PER_SM[(9, 0)] * r.sms
        sizes += l1_sweep_sizes(l1 / 16, l1 * 2, 1.5, r.sms)
    return sum(measurement_s(s.sweep_call_bytes / r.dram, s.sweep_plan) for _ in sizes)


def probe_stages(mode: str, r: Rates) -> dict[str, float]:
    """Seconds of each stage of probe_gpu(mode) on the device, compiles apart."""
    s = CUDA_SIZES[mode]
    flush_s = 2.0 * r.l2_bytes / r.dram          # probe_gpu's flush: 2 x the L2, written
    stream = s.stream_bytes
    calls = s.launch_calls
    return {
        "compute: matmul": _matmul_s(s, r, flush_s),
        "compute: vector": _vector_s(s, r),
        "memory: stream": 2 * measurement_s(2 * stream / r.dram, s.plan, flush_s)
        + 2 * measurement_s(3 * stream / r.dram, s.plan, flush_s),
        "memory: sweep": _sweep_s(s, r),
        "memory: host": 2 * s.host_bytes / 2**30 * PIN_S_PER_GIB
        + 2 * measurement_s(s.host_bytes / r.link, s.plan),
        "overhead": sum(measurement_s(calls * t, s.plan) + measurement_s(t + SYNC_S, s.plan)
                        for t in (TORCH_LAUNCH_S, TRITON_LAUNCH_S))
        + measurement_s(calls * GRAPH_KERNEL_S, s.plan),
        "NVML readings": NVML_READS[mode] * NVML_READ_S,
    }


def _references_s(mode: str, r: Rates) -> float:
    """bf16 matmul 8192^3, the copy and softmax 8192^2 through rooflab.measure's quick plan
    (9 samples at least, each >= its sample time)."""
    elems = (64 << 20) if mode == "quick" else (256 << 20)
    calls = (2.0 * 8192 ** 3 / r.flop["bf16"], 8.0 * elems / r.dram, 4.0 * 8192 ** 2 / r.dram)
    return sum(QUICK.warmup_s + max(QUICK.budget_s, 9 * max(QUICK.sample_s, t)) + t
               for t in calls)


def estimate(mode: str = "default", r: Rates | None = None) -> dict[str, float]:
    """Seconds of each stage of `gpu_check.py OUT --mode MODE` on an H200, in run order."""
    r = r or h200_rates()
    probe = probe_stages(mode, r)
    quick = sum(probe_stages("quick", r).values())
    return {
        "start (python, torch, CUDA)": START_S,
        "Triton compiles (checks + probe)": (COMPILES["check"] + COMPILES[mode]) * COMPILE_S,
        **{f"probe {k}": v for k, v in probe.items()},
        "references": _references_s(mode, r),
        "chart": CHART_S,
        "CLI --quick, empty Triton cache": START_S + CLI_COLD_COMPILES * COMPILE_S + quick,
        "CLI --quick, warm": START_S + quick,
    }


def rerun_worst_s(stages: dict[str, float]) -> float:
    """The whole check when the probe's last stage loses the CUDA context (the latest loss
    that re-runs: gpu_check_retry.py): the first try up to there, then the whole check
    again in a fresh process, its compiles counted again (Triton's disk cache would spare
    them: errs long)."""
    first = [v for k, v in stages.items()
             if k.startswith(("start", "Triton compiles", "probe "))]
    return sum(first) + sum(stages.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="default", choices=sorted(CUDA_SIZES))
    mode = ap.parse_args(argv).mode
    stages = estimate(mode)
    for name, sec in stages.items():
        print(f"{name:<36}{sec:>8.1f} s")
    total = sum(stages.values())
    print(f"{'total':<36}{total:>8.1f} s  ({math.ceil(total / 6) / 10:.1f} min; the device "
          f"run has 4 min)")
    print(f"{'with one re-run (CUDA context lost)':<36}{rerun_worst_s(stages):>8.1f} s  "
          f"(the worst: lost in the probe's last stage)")
    here = str(Path(__file__).resolve().parent)   # gpu_check.py sits beside this file
    if here not in sys.path:
        sys.path.insert(0, here)
    import gpu_check  # its own bounds, whatever the estimate

    print(f"bounds: the CLI runs end by {gpu_check.TOTAL_BUDGET_S:.0f} s after start (skipped "
          f"under {gpu_check.MIN_CLI_S:.0f} s left); a stuck run dumps its stacks and exits "
          f"at {gpu_check.HANG_EXIT_S:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
