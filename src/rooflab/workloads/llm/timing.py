"""Time floors of a step on a roof: per-kernel floors (model.analyze) and launch overhead."""

from __future__ import annotations

from dataclasses import dataclass

from ...model.analysis import Analysis, Point, analyze, notes_by_text
from ...model.ceiling import Roof
from ...model.choose import with_launches_s
from ...model.roofline import time_floor
from .kernels import Step

# Seed 004: one CUDA kernel launch costs 5-10 us of host time when the GPU waits on the CPU.
# Used only when the roof carries no overhead floor of its own.
LAUNCH_S_RANGE = (5e-6, 10e-6)
LAUNCH_SOURCE = "seed 004: 5-10 us per CUDA kernel launch (eager PyTorch, no CUDA graphs)"


@dataclass(frozen=True)
class StepTiming:
    """One step on one roof. floor_s: the sum of per-kernel floors max(FLOP/P, bytes/B)
    (kernels run one after another); launch_s: launches x per-launch overhead."""

    step: Step
    analysis: Analysis

    @property
    def points(self) -> tuple[Point, ...]:
        return self.analysis.primary()

    @property
    def floor_s(self) -> float:
        return sum(p.floor_s for p in self.points)

    @property
    def fused_floor_s(self) -> float:
        """The floor if the whole step were one kernel: max(total FLOP/P, total bytes/B)."""
        if not self.points:
            return 0.0
        p = max(self.points, key=lambda q: q.flop)
        return time_floor(self.step.flop, self.step.bytes, p.peak_flop_per_s, p.bytes_per_s)

    @property
    def per_launch_s(self) -> tuple[float, float]:
        """(low, high) per launch: the roof's overhead floor when it has one (else 5 us) up
        to seed 004's 10 us."""
        per = self.analysis.roof.overhead_s
        lo = per if per else LAUNCH_S_RANGE[0]
        return lo, max(lo, LAUNCH_S_RANGE[1])

    @property
    def launch_s_range(self) -> tuple[float, float]:
        lo, hi = self.per_launch_s
        return self.step.launches * lo, self.step.launches * hi

    @property
    def launch_source(self) -> str:
        roof = self.analysis.roof
        if roof.overhead_s:
            src = roof.overhead_source or f"roof '{roof.name}' overhead floor"
            return f"low: {src}; high: {LAUNCH_SOURCE}"
        return LAUNCH_SOURCE

    @property
    def with_launches_s(self) -> float:
        """The step with its launches: each kernel at least max(its work floor, calls x the
        low per-launch cost), summed; `rooflab whatif` and `rooflab choose` give the same
        figure under the same name (model.choose.with_launches_s)."""
        lo = self.per_launch_s[0]
        return sum(with_launches_s(p.floor_s, p.calls, lo) for p in self.points)

    def launch_bound_kernels(self) -> tuple[str, ...]:
        """Kernels whose own floor per call is below one launch: launch dominates them."""
        lo = self.per_launch_s[0]
        return tuple(p.kernel for p in self.points if p.floor_s / p.calls < lo)

    @property
    def tokens_per_s(self) -> float:
        """Decode: batch / TPOT; prefill: prompt tokens / TTFT."""
        return self.step.batch * self.step.q_len / self.floor_s

    @property
    def achieved_flop_per_s_at_floor(self) -> float:
        return self.step.flop / self.floor_s

    @property
    def bound(self) -> str:
        """memory or compute, by which side carries more of the floor (work_split)."""
        mem, comp = work_split(self.points)
        return "memory" if mem >= comp else "compute"


def work_split(points: tuple[Point, ...]) -> tuple[float, float]:
    """(memory-side, compute-side) seconds of the points' work floors, each kernel on the
    side its own work floor puts it (bytes/B >= FLOP/P: left of the ridge). A launch-sized
    kernel (bound "overhead") counts where its work is: a batch-1 decode at AI ~1 is
    memory-bound, not compute-bound (review 18d A). The one rule for StepTiming.bound and
    parallel.tp_decode_step."""
    mem = sum(p.floor_s for p in points if p.memory_bound_side)
    return mem, sum(p.floor_s for p in points) - mem


def time_step(step: Step, roof: Roof) -> StepTiming:
    return StepTiming(step=step, analysis=analyze(roof, step.kernels(), levels=("DRAM",)))


def fallback_notes(*timings: StepTiming) -> tuple[str, ...]:
    """The steps' ceiling stand-ins, one line each with the kernels it covers ("roof
    'NVIDIA T4' has no bf16 ceiling; using fp16 tensor (for q_proj, ...)"): a bf16 or fp8
    model on a card without that math is timed on another one, and the reader must see it."""
    grouped = notes_by_text(n for t in timings for n in t.analysis.notes)
    by = {text: ks for text, who in grouped.items() if "ceiling; using" in text
          and (ks := [k for k in dict.fromkeys(who) if k])}
    return tuple(f"{text} (for {', '.join(ks[:6])}{' and more' if len(ks) > 6 else ''})"
                 for text, ks in by.items())
