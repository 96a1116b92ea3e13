"""`rooflab llm --tpot-ms` and `--ttft-ms`: the measured line (the point on the roof, MBU
and MFU) and the gap line, seed 004's split of a measured TPOT's distance above the work
floor into kernel launches and the rest (split out of cli/llm_render.py, which prints
them)."""

from __future__ import annotations

from ..units import fmt_pct_range, fmt_seconds
from .llm_words import span


def measured_line(m) -> str:
    """A measured step on the roof (workloads.llm.whatif.MeasuredStep): 'measured TPOT 15
    ms: 144 GFLOP/s at AI 1.04 = 43 % of the roof, 2.30x the floor; MBU 43 % (...), MFU
    0.22 % (...)'; a prefill's is 'measured TTFT', with MFU first, what a compute-bound
    prefill is judged by."""
    from ..sides import times_text
    from ..units import fmt_ai, fmt_pct, fmt_rate

    prefill = m.kernel.meta.get("op") == "prefill_step"
    # 10x the floor is the 10 % latency line: 10.03x, not '10.0x' (s28 R2 F4); fmt_times's
    # rule otherwise ('1.84x', '33.5x')
    return (f"measured {'TTFT' if prefill else 'TPOT'} {fmt_seconds(m.kernel.seconds)}: "
            f"{fmt_rate(m.achieved_flop_per_s, m.point.precision)} at AI "
            f"{fmt_ai(m.point.ai)} = {fmt_pct(m.percent_of_roof)} of the roof, "
            f"{times_text(m.floor_ratio, 10.0)} the floor; {utilization(m, prefill)}")


def utilization(m, mfu_first: bool = False) -> str:
    """A measured step's MBU and MFU (workloads.llm.whatif.MeasuredStep), the two numbers
    serving benchmarks quote: 'MBU 43 % (139 GB/s of DRAM 320 GB/s), MFU 0.22 % (of fp16
    tensor 65 TFLOP/s)' (review s33 E: the line gave only the percent of the roof);
    mfu_first: MFU, then MBU (a prefill's)."""
    from ..units import fmt_pct, fmt_rate, si

    pt = m.point
    memory = pt.memory_ceiling or pt.level
    compute = pt.compute_ceiling or pt.precision
    mbu = (f"MBU {fmt_pct(100 * m.mbu)} ({si(m.achieved_bytes_per_s, 'B/s')} of {memory} "
           f"{si(pt.bytes_per_s, 'B/s')})")
    mfu = (f"MFU {fmt_pct(100 * m.mfu)} (of {compute} "
           f"{fmt_rate(pt.peak_flop_per_s, pt.precision)})")
    return f"{mfu}, {mbu}" if mfu_first else f"{mbu}, {mfu}"


def shares(lo: float, hi: float, whole: float) -> str:
    """'18-37 %', '0.15-0.3 %': a range as shares of `whole` (units.fmt_pct_range: a 0.15 %
    share is not '0 %', review s28 R2 F4), one share when both ends print alike."""
    return fmt_pct_range(100 * lo / whole, 100 * hi / whole)


def gap_line(gap_s: float, d, launches: int | None = None, no_eager: str = "") -> str:
    """Seed 004's split of a measured TPOT's distance below the slope: the step's kernel
    launches (launches x 5-10 us) explain part of the gap above the work floor; the rest is
    host-side logic (Python, generate) and kernel efficiency. `launches` is the measured
    run's count (--launches); without it the split uses the fused count and adds eager HF
    generate's estimated share (review 18a F4: a fused count under-explains an eager run),
    unless `no_eager` says why that estimate does not hold (kernels.eager_estimate_missing)."""
    if gap_s < 0:
        return (f"faster than the floor by {fmt_seconds(-gap_s)}: no step can beat "
                f"max(FLOP / P, bytes / B), so the roof is too low (a disturbed probe?) or the "
                f"step moves fewer bytes than counted (weights quantized but --weights "
                f"not set?); check both before reading the point")
    if gap_s == 0:
        return ""
    n = launches or d.step.launches
    per_lo, per_hi = d.per_launch_s
    lo, hi = n * per_lo, n * per_hi
    given = " (--launches)" if launches else ""
    word = "launches" + given
    if lo >= gap_s:
        line = (f"gap above the floor {fmt_seconds(gap_s)}, less than the {n} "
                f"{word} take ({span(lo, hi)}): they overlap the work "
                f"here, and what is left is at most launch cost (CUDA graphs, fusion), not AI")
    else:
        rest_lo, rest_hi = gap_s - min(hi, gap_s), gap_s - lo
        line = (f"gap above the floor {fmt_seconds(gap_s)}: {n} {word} explain "
                f"{span(lo, min(hi, gap_s))} of it "
                f"({shares(lo, min(hi, gap_s), gap_s)}; CUDA graphs, fusion); the "
                f"rest, {span(rest_lo, rest_hi)}, is host-side logic "
                f"(Python, generate) and kernel efficiency (better kernels); batching closes "
                f"neither")
    return line if launches else line + eager_share(gap_s, d, no_eager)


def eager_share(gap_s: float, d, no_eager: str = "") -> str:
    """The gap line's second share: the fused count above against eager HF generate's."""
    from ..workloads.llm.eager import EAGER_HF_LAYER_KERNELS

    if no_eager:
        return (f". That is a fused implementation's count ({d.step.per_layer_kernels():.3g} "
                f"per layer); no eager HF generate estimate here ({no_eager}): give the "
                f"measured run's kernels per step as --launches N (nsys, torch.profiler)")

    n = d.step.eager_launches()
    per_lo, per_hi = d.per_launch_s
    lo, hi = n * per_lo, n * per_hi
    share = (f"{span(lo, hi)}, more than the whole gap" if lo >= gap_s else
             f"which would explain {span(lo, min(hi, gap_s))} "
             f"({shares(lo, min(hi, gap_s), gap_s)})")
    return (f". That is a fused implementation's count ({d.step.per_layer_kernels():.3g} per "
            f"layer); eager HF generate launches about {EAGER_HF_LAYER_KERNELS} per layer "
            f"(an estimate from HF's LlamaDecoderLayer), {n} per step, {share}; give the "
            f"measured run's kernels per step as --launches N (nsys, torch.profiler)")
