"""What each probe mode measures and for how long (issue 3: quick <= 10 s, default <= 45 s
on a 2-core machine, full takes minutes)."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError
from ..timer import TimingPlan


@dataclass(frozen=True)
class ModeSpec:
    name: str
    plan: TimingPlan               # bandwidth points, GEMM, intensity sweep
    peak_plan: TimingPlan          # clock and FMA peak: many short samples, best kept
    sweep_step: float              # ratio between neighbouring working-set sizes
    sweep_lo_bytes: float          # smallest per-thread working set
    llc_multiple: float            # largest total working set, in last-level caches (12:
                                   # each of triad's 3 arrays >= 4x LLC, STREAM's rule)
    stream_levels: tuple[str, ...]  # levels where copy/scale/add/sum are also measured
    gemm_sizes: tuple[int, ...]
    intensity_ks: tuple[int, ...]
    low_precision: bool            # bf16/fp16/int8 through torch (imports torch: ~1 s)
    intensity_ws_fraction: float = 1.0  # of the DRAM working set, for the intensity sweep


# Short samples and the best of many: on a shared machine other load arrives in scheduler
# time slices of a few milliseconds, so some short samples run undisturbed and the best
# of them is the machine's rate; long samples would all average the disturbance in.
_QUICK = TimingPlan(warmup_s=0.005, sample_s=0.002, budget_s=0.04, min_samples=5)
_QUICK_PEAK = TimingPlan(warmup_s=0.01, sample_s=0.001, budget_s=0.15, min_samples=10,
                         max_samples=500)
_DEFAULT = TimingPlan(warmup_s=0.01, sample_s=0.002, budget_s=0.25, min_samples=8,
                      max_samples=500)
_DEFAULT_PEAK = TimingPlan(warmup_s=0.02, sample_s=0.001, budget_s=0.5, min_samples=20,
                           max_samples=1000)
_FULL = TimingPlan(warmup_s=0.05, sample_s=0.002, budget_s=1.0, min_samples=10,
                   max_samples=2000)
_FULL_PEAK = TimingPlan(warmup_s=0.1, sample_s=0.001, budget_s=2.0, min_samples=50,
                        max_samples=4000)

MODES = {m.name: m for m in (
    ModeSpec("quick", _QUICK, _QUICK_PEAK, 2.0, 4096, 12, ("DRAM",), (512,),
             (1, 4, 16, 64, 256), False, 0.5),
    ModeSpec("default", _DEFAULT, _DEFAULT_PEAK, 1.25, 4096, 12, ("L1", "L2", "L3", "DRAM"),
             (256, 512, 1024), (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256), True, 1.0),
    ModeSpec("full", _FULL, _FULL_PEAK, 1.1, 2048, 16, ("L1", "L2", "L3", "DRAM"),
             (256, 512, 1024, 2048),
             (1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256, 384),
             True, 1.0),
)}


def get_mode(name: str) -> ModeSpec:
    try:
        return MODES[name]
    except KeyError:
        raise InputError(f"probe mode must be one of {', '.join(MODES)}; got '{name}'") from None
