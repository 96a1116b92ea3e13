"""What one GPU-probe run shares: the device, its timer, sizes per mode, and how a timed
measurement becomes a measured Ceiling (raw samples kept, spread warning attached)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError
from ...model.ceiling import Ceiling
from ...units import fmt_rate, si
from ..stats import rates, rates_warning, slowdown_warning
from ..timer import Timing, TimingPlan
from .timing import DeviceTimer

MODES = ("quick", "default", "full")
MiB = 1 << 20


@dataclass(frozen=True)
class Sizes:
    """Problem sizes and timing plans of one mode on one kind of device."""

    stream_bytes: int            # bytes per array for copy and triad
    sweep_lo: int
    sweep_hi_l2: float           # the sweep ends at this many times the largest cache
    sweep_step: float
    sweep_call_bytes: float      # bytes one sweep call reads (re-reads of the set)
    host_bytes: int              # host<->device transfer size
    matmul_sizes: tuple[int, ...]
    fma_iters: int
    launch_calls: int            # kernels per timed region for launch overheads
    plan: TimingPlan
    sweep_plan: TimingPlan


# On an H200 the default run is sized to finish in well under a minute with Triton's
# compilations included (issue 4: default <= 60 s, --quick <= 20 s).
CUDA_SIZES = {
    "quick": Sizes(stream_bytes=256 * MiB, sweep_lo=4 * MiB, sweep_hi_l2=6.0, sweep_step=1.6,
                   sweep_call_bytes=512 * MiB, host_bytes=64 * MiB, matmul_sizes=(4096, 8192),
                   fma_iters=2048, launch_calls=200,
                   plan=TimingPlan(warmup_s=0.01, budget_s=0.04, min_samples=5, max_samples=100),
                   sweep_plan=TimingPlan(warmup_s=0.002, budget_s=0.01, min_samples=3,
                                         max_samples=20)),
    "default": Sizes(stream_bytes=1024 * MiB, sweep_lo=2 * MiB, sweep_hi_l2=8.0, sweep_step=1.25,
                     sweep_call_bytes=2048 * MiB, host_bytes=256 * MiB,
                     matmul_sizes=(2048, 4096, 8192), fma_iters=4096, launch_calls=500,
                     plan=TimingPlan(warmup_s=0.025, budget_s=0.12, min_samples=10,
                                     max_samples=200),
                     sweep_plan=TimingPlan(warmup_s=0.005, budget_s=0.02, min_samples=5,
                                           max_samples=40)),
    "full": Sizes(stream_bytes=2048 * MiB, sweep_lo=1 * MiB, sweep_hi_l2=10.0, sweep_step=1.15,
                  sweep_call_bytes=4096 * MiB, host_bytes=1024 * MiB,
                  matmul_sizes=(2048, 4096, 8192, 16384), fma_iters=8192, launch_calls=1000,
                  plan=TimingPlan(warmup_s=0.1, budget_s=0.5, min_samples=20, max_samples=500),
                  sweep_plan=TimingPlan(warmup_s=0.01, budget_s=0.05, min_samples=10,
                                        max_samples=100)),
}

# PyTorch's CPU device is a dry run of the same code on a shared host: small and short.
# No host<->device transfers (host_bytes 0) and no Triton kernels (fma_iters 0) there.
CPU_SIZES = {
    "quick": Sizes(stream_bytes=4 * MiB, sweep_lo=64 << 10, sweep_hi_l2=2.0, sweep_step=2.0,
                   sweep_call_bytes=16 * MiB, host_bytes=0, matmul_sizes=(96,), fma_iters=0,
                   launch_calls=200,
                   plan=TimingPlan(warmup_s=0.002, budget_s=0.02, min_samples=3, max_samples=30),
                   sweep_plan=TimingPlan(warmup_s=0.001, budget_s=0.005, min_samples=3,
                                         max_samples=10)),
    "default": Sizes(stream_bytes=16 * MiB, sweep_lo=32 << 10, sweep_hi_l2=3.0, sweep_step=1.6,
                     sweep_call_bytes=64 * MiB, host_bytes=0, matmul_sizes=(128, 256),
                     fma_iters=0, launch_calls=500,
                     plan=TimingPlan(warmup_s=0.005, budget_s=0.06, min_samples=5,
                                     max_samples=50),
                     sweep_plan=TimingPlan(warmup_s=0.002, budget_s=0.01, min_samples=3,
                                           max_samples=20)),
    "full": Sizes(stream_bytes=64 * MiB, sweep_lo=16 << 10, sweep_hi_l2=4.0, sweep_step=1.3,
                  sweep_call_bytes=256 * MiB, host_bytes=0, matmul_sizes=(256, 512, 1024),
                  fma_iters=0, launch_calls=1000,
                  plan=TimingPlan(warmup_s=0.02, budget_s=0.25, min_samples=10, max_samples=200),
                  sweep_plan=TimingPlan(warmup_s=0.005, budget_s=0.03, min_samples=5,
                                        max_samples=50)),
}


def sizes_for(kind: str, mode: str) -> Sizes:
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}; got '{mode}'")
    return (CUDA_SIZES if kind == "cuda" else CPU_SIZES)[mode]


@dataclass
class Context:
    """Shared state of one probe run; `record` collects raw measurements for extras."""

    torch: Any
    dev: Any
    timer: DeviceTimer           # flushes the cache before each timed call
    sizes: Sizes
    host: Mapping[str, Any]
    source: str
    record: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None
    # Run the Triton kernels? None: on CUDA only. True on PyTorch's CPU device needs
    # TRITON_INTERPRET=1 (Triton's interpreter): how tests cover the Triton path without a GPU.
    triton: bool | None = None
    # Reads the device's clocks, power and throttle reasons now (identity.read_clocks): taken
    # right after the judged measurements (bf16 matmul, copy), under their load.
    clocks: Callable[[], dict] | None = None

    @property
    def is_cuda(self) -> bool:
        return self.dev.type == "cuda"

    @property
    def uses_triton(self) -> bool:
        return self.is_cuda if self.triton is None else self.triton

    def triton_kernels(self):
        """The Triton kernels module, or None with the reason kept in `skipped`."""
        if not self.uses_triton:
            self.skipped.setdefault("triton", "Triton kernels run on CUDA devices only")
            return None
        try:
            from . import kernels
        except ImportError as exc:
            self.skipped.setdefault("triton", f"triton is not importable ({exc}); Triton-kernel "
                                              f"figures are missing: {_triton_install()}")
            return None
        return kernels

    def clocks_now(self) -> dict:
        """The clocks now, {} without a reader; a failing read is recorded, never raised."""
        if self.clocks is None:
            return {}
        try:
            return dict(self.clocks())
        except Exception as exc:  # noqa: BLE001 — a reading must not cost the measurement
            return {"error": f"{type(exc).__name__}: {exc}"}

    def say(self, stage: str) -> None:
        if self.progress:
            self.progress(stage)

    def sync(self) -> None:
        self.timer.sync()

    def keep(self, name: str, timing: Timing, work: float, work_unit: str, **meta: Any) -> None:
        """Store one measurement's raw per-call seconds and its work per call."""
        st = timing.stats
        self.record[name] = {"work_per_call": work, "work_unit": work_unit,
                             "seconds": list(timing.samples), "inner": timing.inner,
                             "median_s": st.median, "best_s": st.minimum,
                             "spread": st.spread, **meta}


def clocks_seen(clocks: Mapping[str, Any] | None) -> str:
    """What a clock reading taken right after a measurement says of throttling ("" when
    nothing): the SM clock below its maximum, and the limiting clock-event reasons."""
    from .load import LIMITING, decode_reasons

    if not clocks:
        return ""
    parts = []
    sm, top = clocks.get("sm_clock_mhz"), clocks.get("max_sm_clock_mhz")
    if isinstance(sm, (int, float)) and isinstance(top, (int, float)) and 0 < sm < top:
        parts.append(f"the SM clock read {sm:g} of {top:g} MHz right after")
    reasons = clocks.get("clock_event_reasons")
    limiting = [w for w in decode_reasons(reasons if isinstance(reasons, int) else None)
                if w in LIMITING]
    if limiting:
        parts.append(f"clock event reasons: {', '.join(limiting)}")
    return "; ".join(parts)


def measured_ceiling(work: float, timing: Timing, *, method: str, source: str,
                     precision: str | None = None, unit: str | None = None,
                     level: str | None = None, clocks: Mapping[str, Any] | None = None
                     ) -> Ceiling:
    """A measured ceiling from per-call times: samples as rates, value = best sample.
    Warnings: samples that disagree (the CPU probe's test, stats.rates_warning: the
    interquartile range or the median's gap to the best above 5 %; not (max - min) /
    median, which one disturbed call among a hundred makes large: review s20 r2 F4), and
    their slowing during the run (in the order taken); `clocks`, read right after the
    measurement, is named in the slowdown warning when it shows the clock held down, so
    one line says both."""
    samples = rates(work, timing.samples)
    label = f"{precision} {unit}" if precision else str(level)
    fmt = (lambda v: fmt_rate(v, precision)) if precision else (lambda v: si(v, "B/s"))
    warns = (rates_warning(label, samples),
             slowdown_warning(label, samples, fmt, clocks_seen(clocks)))
    return Ceiling(value=max(samples), precision=precision, unit=unit, level=level,
                   provenance="measured", source=source, method=method, samples=samples,
                   warnings=tuple(w for w in warns if w))


def _triton_install() -> str:
    """The command that installs Triton here: the `gpu` extra carries triton on Linux only
    (Triton publishes Linux wheels; review s23 r3 F7), Windows has the `triton-windows` port."""
    if sys.platform == "win32":
        return "pip install triton-windows (Triton's Windows port)"
    return "pip install 'rooflab[gpu]'"
