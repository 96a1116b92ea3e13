"""`rooflab llm --tpot-ms` and `--ttft-ms`: the measured line (the point on the roof, MBU
and MFU) and the gap line, seed 004's split of a measured TPOT's distance above the work
floor into kernel launches and the rest (split out of cli/llm_render.py, which prints
them)."""

from __future__ import annotations

from ..units import fmt_pct_range, fmt_seconds
from .llm_words import span


def measured_lines(run) -> list[str]:
    """The measured lines of a study (workloads.llm.study.LlmRun): --ttft-ms's, then
    --tpot-ms's with seed 004's decode band and the gap above the floor it is placed
    against (the floor with all-reduces and stage transfers under --tp/--pp)."""
    from ..workloads.llm.eager import eager_estimate_missing
    from .llm_band import band_line

    r = run.result
    out = []
    for m in run.measured_prefill:
        out += [measured_line(m), prefill_faster_line(m, r.request, floor_words(m))]
    for m in run.measured:
        out += [measured_line(m), band_line(m.percent_of_roof, r.roof.kind, r.decode.bound)]
        out.append(gap_line(m.gap_s, r.decode, run.measured_launches,
                            eager_estimate_missing(r.config, r.settings), floor_words(m)))
    return [line for line in out if line]


def floor_words(m) -> str:
    """The floor a measured step's ratio and gap are against: 'the floor', 'the floor with
    all-reduces' under --tp/--pp."""
    return f"the floor with {m.link_words}" if m.parallel else "the floor"


def prefill_faster_line(m, request, floor: str = "the floor") -> str:
    """A measured TTFT below its floor, said as a TPOT's is (gap_line): 'faster than the
    floor by 6.55 ms: ...' with what it usually means for a prefill (s34 I: 0.79x the floor
    and MFU 112 % stood unexplained); '' at or above the floor."""
    if m.gap_s >= 0:
        return ""
    tokens = (f"the prompt was shorter than the {request.prompt} tokens counted (--prompt)"
              if request.batch == 1 else
              f"the prompts were fewer or shorter than the {request.batch} x "
              f"{request.prompt} tokens counted (--batch, --prompt)")
    return (f"faster than {floor} by {fmt_seconds(-m.gap_s)}: no prefill can beat "
            f"max(FLOP / P, bytes / B), so the roof is below the device's real peak (a "
            f"disturbed probe? clocks above the nominal?), {tokens}, or cached prefixes "
            f"skipped part of it (prefix caching); check these before reading the point")


def measured_line(m) -> str:
    """A measured step on the roof (workloads.llm.whatif.MeasuredStep): 'measured TPOT 15
    ms: 144 GFLOP/s at AI 1.04 = 43 % of the roof, 2.30x the floor; MBU 43 % (...), MFU
    0.22 % (...)'; a prefill's is 'measured TTFT', with MFU first, what a compute-bound
    prefill is judged by."""
    from ..sides import times_text
    from ..units import fmt_ai, fmt_pct, fmt_rate

    prefill = m.kernel.meta.get("op") == "prefill_step"
    head = (f"measured {'TTFT' if prefill else 'TPOT'} {fmt_seconds(m.kernel.seconds)}"
            f"{parallel_scope(m)}: {fmt_rate(m.achieved_flop_per_s, m.point.precision)} at AI "
            f"{fmt_ai(m.point.ai)} = {fmt_pct(m.percent_of_roof)} of ")
    # 10x the floor is the 10 % latency line: 10.03x, not '10.0x' (s28 R2 F4); fmt_times's
    # rule otherwise ('1.84x', '33.5x')
    if not m.parallel:
        return (f"{head}the roof, {times_text(m.floor_ratio, 10.0)} the floor; "
                f"{utilization(m, prefill)}")
    total, compute = (times_text(m.floor_ratio, 10.0),
                      times_text(m.compute_floor_ratio, 10.0))
    # the compute floor's ratio where it reads otherwise (a pipeline's 291 ns transfer
    # moves neither)
    beside = (f"; {compute} the compute floor {fmt_seconds(m.floor_s)}"
              if compute != total else "")
    return (f"{head}one device's roof, {total} the floor with {m.link_words} "
            f"({fmt_seconds(m.total_floor_s)}{beside}); {utilization(m, prefill)}"
            f"{floor_cap(m, prefill)}")


def parallel_scope(m) -> str:
    """What the measured point is under --tp/--pp: ' (one device's shard of 4)', ' (2
    stages in turn)'; '' on one device."""
    parts = ([f"one device's shard of {m.devices}"] if m.devices > 1 else []) + (
        [f"{m.stages} stages in turn"] if m.stages > 1 else [])
    return f" ({', '.join(parts)})" if parts else ""


def floor_cap(m, prefill: bool) -> str:
    """Where the link term is 1 % of the floor or more: the most MBU (a prefill's MFU)
    the floor with it allows, '; the floor with all-reduces allows at most MFU 71 %'; one
    stage works at a time under --pp, so its cap is about 1/pp."""
    from ..units import fmt_fraction

    if m.link_s < 0.01 * m.total_floor_s and m.stages == 1:
        return ""
    name, cap = ("MFU", m.mfu_at_floor) if prefill else ("MBU", m.mbu_at_floor)
    if m.stages > 1:
        return (f"; one stage works at a time, so even at the floor {name} per GPU is "
                f"{fmt_fraction(cap)}")
    return f"; the floor with {m.link_words} allows at most {name} {fmt_fraction(cap)}"


def utilization(m, mfu_first: bool = False) -> str:
    """A measured step's MBU and MFU (workloads.llm.whatif.MeasuredStep), the two numbers
    serving benchmarks quote: 'MBU 43 % (139 GB/s of DRAM 320 GB/s), MFU 0.22 % (of fp16
    tensor 65 TFLOP/s)' (review s33 E: the line gave only the percent of the roof);
    mfu_first: MFU, then MBU (a prefill's)."""
    from ..units import fmt_pct, fmt_rate, si

    pt = m.point
    memory = pt.memory_ceiling or pt.level
    compute = pt.compute_ceiling or pt.precision
    per = " per GPU" if m.parallel else ""
    # under --pp the achieved rate is the stages' in turn, over the stages' devices
    over = f" x {m.stages} GPUs" if m.stages > 1 else ""
    mbu = (f"MBU{per} {fmt_pct(100 * m.mbu)} ({si(m.achieved_bytes_per_s, 'B/s')} of "
           f"{memory} {si(pt.bytes_per_s, 'B/s')}{over})")
    mfu = (f"MFU{per} {fmt_pct(100 * m.mfu)} (of {compute} "
           f"{fmt_rate(pt.peak_flop_per_s, pt.precision)}{over})")
    return f"{mfu}, {mbu}" if mfu_first else f"{mbu}, {mfu}"


def shares(lo: float, hi: float, whole: float) -> str:
    """'18-37 %', '0.15-0.3 %': a range as shares of `whole` (units.fmt_pct_range: a 0.15 %
    share is not '0 %', review s28 R2 F4), one share when both ends print alike."""
    return fmt_pct_range(100 * lo / whole, 100 * hi / whole)


def gap_line(gap_s: float, d, launches: int | None = None, no_eager: str = "",
             floor: str = "the floor") -> str:
    """Seed 004's split of a measured TPOT's distance below the slope: the step's kernel
    launches (launches x 5-10 us) explain part of the gap above the work floor; the rest is
    host-side logic (Python, generate) and kernel efficiency. `launches` is the measured
    run's count (--launches); without it the split uses the fused count and adds eager HF
    generate's estimated share (review 18a F4: a fused count under-explains an eager run),
    unless `no_eager` says why that estimate does not hold (kernels.eager_estimate_missing).
    `floor`: the floor gap_s is above, 'the floor with all-reduces' under --tp."""
    if gap_s < 0:
        return (f"faster than {floor} by {fmt_seconds(-gap_s)}: no step can beat "
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
        line = (f"gap above {floor} {fmt_seconds(gap_s)}, less than the {n} "
                f"{word} take ({span(lo, hi)}): they overlap the work "
                f"here, and what is left is at most launch cost (CUDA graphs, fusion), not AI")
    else:
        rest_lo, rest_hi = gap_s - min(hi, gap_s), gap_s - lo
        line = (f"gap above {floor} {fmt_seconds(gap_s)}: {n} {word} explain "
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
