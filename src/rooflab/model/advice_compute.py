"""Advice for a kernel bound by its FLOP, its launches or its latency, and the
're-time on a quiet machine' advice for a kernel whose timing is unsure. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from ..units import fmt_rate, fmt_seconds, fmt_share, fmt_times, si
from .advice_core import Advice, Efficiency, _advice, _efficiency, keeps_words, pct, work_pct
from .advice_fusion import activation_share
from .advice_kind import known_non_matrix
from .advice_memory import memory_advice
from .advice_precision import _lower_precision
from .advice_threads import per_thread_words, split_threads
from .advice_vectorize import CHAIN_SHARE, scalar_fit, vectorize_advice
from .analysis import Point
from .ceiling import Roof, iqr_over_median
from .fma_ceiling import fma_share_of, mix_ceiling
from .grid_fill import grid_size as grid_blocks
from .kernel import Kernel
from .machine import Machine, words
from .occupancy_words import occupancy_pct, occupancy_words  # occupancy_words re-exported
from .opkind import is_matrix, is_streaming
from .sample_groups import ALONE, busy_calls, contention
from .sample_spread import NOISY_IQR
from .sanity_ceilings import roof_threads

# Calls shorter than this may be mostly launch/dispatch cost (a CUDA launch is ~5 us, a
# PyTorch eager op on a CPU ~10 us): say so when the roof has no floor to test it against.
SHORT_CALL_S = 100e-6
# What one parallel region's fork/join costs on a multi-core CPU, used as the least work per
# call worth spreading over threads when the roof has no dispatch floor: a few microseconds
# (PyTorch does not split an op under at::internal::GRAIN_SIZE = 32768 elements at all).
# An 8 kB eager `x + b` (36 ns of work at DRAM speed, 3.9 us a call) was told to "spread
# the work over every core: 87.92x" (review 13v F-L): threads cannot beat their own spawn.
THREAD_FORK_S = 5e-6
# The lever of a grid with fewer blocks than SMs (_idle_sms): no tuning inside the kernel
# reaches the SMs that get no block.
GRID_LEVER = "launch at least one block per SM (smaller blocks, or split the work)"


def compute_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                   machine: Machine | None = None,
                   kernel: Kernel | None = None) -> list[Advice]:
    out: list[Advice] = []
    streaming = is_streaming(kind)
    matrix = is_matrix(kind)
    cpu = machine is not None and machine.kind == "cpu"
    # at or under the CPU's scalar (no SIMD) ceiling: the lever is SIMD (advice_vectorize)
    vec = vectorize_advice(p, e, roof, machine, kernel)
    if vec is not None:
        out.append(vec)
    # tensor cores only for matrix-shaped work (or an unknown kind, hedged): a stencil or
    # an n-body loop is no matmul (review s21 r3 F2)
    if p.unit != "tensor" and not streaming and not cpu and not known_non_matrix(kind):
        alt = "tf32" if p.precision == "fp32" else p.precision
        tc = roof.find_compute(p.precision, "tensor") or roof.find_compute(alt, "tensor")
        if tc is not None and tc.value > p.peak_flop_per_s:
            out.append(_advice(
                p, e, f"use tensor cores / matrix units ({tc.label})",
                f"{tc.label} peaks at {fmt_rate(tc.value, tc.precision)}, "
                f"{fmt_times(tc.value / p.peak_flop_per_s)} the "
                f"{fmt_rate(p.peak_flop_per_s, p.precision)} "
                f"it is held to now", "roof", flop=p.flop, nbytes=p.bytes, peak=tc.value,
                bw=p.bytes_per_s,
                assumption="the work is matrix-shaped (matmul, conv, attention) with layouts "
                           "and sizes the tensor cores accept; "
                           + ("efficiency unchanged" if not e.above else keeps_words(p, e))))
    low = _lower_precision(p, e, roof, kind, machine, kernel,
                           nominal=machine.nominal if machine is not None else None)
    if low is not None:
        out.append(low)
    action, why = words(machine, "issue_matrix" if cpu and matrix else "issue")
    occupancy = occupancy_words(kernel.meta) if kernel is not None and not cpu else ""
    if occupancy:   # "raise occupancy" with the figure the profiler recorded for it
        why += f"; the profile says: occupancy {occupancy}"
    # the mix caps the FLOP rate: only where the compute roof binds (right of the ridge); a
    # reduction of dadd alone at AI 0.1 is held by bandwidth, not by its 50 % mix ceiling
    share = (fma_share_of(kernel.meta, p.precision)
             if kernel is not None and p.unit != "tensor" and p.ai >= p.ridge else None)
    eff = _efficiency(p, e, action, why, mix=None if share is None else mix_ceiling(share))
    # where the scalar-ceiling line fires, it is the one vectorise line: the generic
    # 'vectorise with FMA (unroll for ILP)' beside it read as a second, larger, unexplained
    # vectorise gain (6.14x beside 3.99x, review s19 r4 F5), and the ILP it adds is the
    # 'independent accumulators' the scalar-ceiling line names
    if eff is not None and vec is None:
        out.append(eff)
    return out


def overhead_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                    machine: Machine | None = None,
                    kernel: Kernel | None = None) -> list[Advice]:
    per = roof.overhead_s or 0.0
    act = activation_share(kernel, kind) * p.bytes   # what a fused neighbour keeps on chip
    dispatch, why = words(machine, "dispatch")
    chip, unit = words(machine, "chip")
    out = [
        _advice(p, e, dispatch,
                f"{p.calls} launch(es) x {fmt_seconds(per)} = {fmt_seconds(e.launch_s)} of "
                f"the {fmt_seconds(e.seconds)} is launch/dispatch cost", "below roof",
                flop=p.flop, nbytes=p.bytes, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
                launch_s=0.0, assumption=why),
        _advice(p, e, f"fuse into the neighbouring {unit}",
                f"its work floor is {fmt_seconds(p.floor_s)}; run inside a neighbour it pays "
                f"no launch of its own and its intermediate stays {chip}", "below roof",
                flop=p.flop, nbytes=p.bytes - act / 2, peak=p.peak_flop_per_s,
                bw=p.bytes_per_s, launch_s=0.0,
                assumption=f"the work moves into an adjacent {unit} (no launch of its own) and "
                           + (f"half its bytes stay {chip}" if act >= p.bytes else
                              f"half its activation bytes ({si(act, 'B')} of "
                              f"{si(p.bytes, 'B')}) stay {chip}")),
    ]
    if p.calls > 1:
        out.append(_advice(
            p, e, f"batch the {p.calls} calls into one launch",
            f"one launch instead of {p.calls}", "below roof", flop=p.flop, nbytes=p.bytes,
            peak=p.peak_flop_per_s, bw=p.bytes_per_s, launch_s=per,
            assumption=f"the calls are independent and fit one launch (a batched {unit})"))
    return [_kernel_local(a, e) for a in out]


def _kernel_local(a: Advice, e: Efficiency) -> Advice:
    """A launch-bound kernel's speed-up is a ratio of its own tiny times (a decode rope:
    110 us of launches over 317 ns of work, 347x), not the run's: say the seconds it
    saves, the most the run gains (review 12a #13)."""
    saved = max(0.0, e.seconds - a.new_seconds)
    local = (f"the {fmt_times(a.speedup)} is of this kernel's own time, {fmt_seconds(e.seconds)} "
             f"-> {fmt_seconds(a.new_seconds)}, saving {fmt_seconds(saved)} (the most the "
             f"whole run gains)")
    return replace(a, detail=f"{a.detail}; {local}",
                   assumption=f"nothing else changes: {local}; {a.assumption}")


def latency_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                   machine: Machine | None = None,
                   kernel: Kernel | None = None, calls_bound: bool = False,
                   l2_bytes: float | None = None) -> list[Advice]:
    """Parallelism first, then the AI/roof levers held by after_latency; `calls_bound`: the
    kernel's time is per-call cost (advice_calls.many_calls), so its levers wait for the
    calls to be merged, not for the latency to be fixed, and hold_call_cost holds them.
    `l2_bytes`: the device's L2, else the machine's own (review s18 r4 F1: the memory side
    fell back to an assumed 50 MB, so 40 MB 'fit' a 32 MiB L2)."""
    out = []
    action, why = words(machine, "parallel")
    per_call = p.seconds / p.calls if p.seconds else None
    if not roof.overhead_s and per_call is not None and per_call < SHORT_CALL_S:
        why += (f"; at {fmt_seconds(per_call)} per call, launch/dispatch cost may be most of "
                f"it, and this roof has no launch/dispatch floor to tell (`rooflab probe` "
                f"measures one)")
    detail = latency_detail(kernel)
    if detail:
        why += f"; the profile says: {detail}"
    if kernel is not None and _idle_sms(kernel.meta):
        # the grid itself leaves SMs without a block: no tuning inside the kernel helps
        action = GRID_LEVER
    busy = every_core_busy(kernel, roof)
    cpu = machine is not None and machine.kind == "cpu"
    if busy and cpu:
        action, why = per_thread_lever(kind, busy, kernel)
    # far from both roofs: the lever is parallelism or fewer synchronisations, not AI
    why += ("; far from both roofs, so the direction is more parallelism or fewer "
            "synchronisations, not more AI (seed 000 §6.2 误判二)" if not busy else
            "; far from both roofs (seed 000 §6.2 误判二)")
    # the mix caps the FLOP rate: only where the compute roof binds (right of the ridge); a
    # reduction of dadd alone at AI 0.1 is held by bandwidth, not by its 50 % mix ceiling
    share = (fma_share_of(kernel.meta, p.precision)
             if kernel is not None and p.unit != "tensor" and p.ai >= p.ridge else None)
    eff = _efficiency(p, e, action, why, mix=None if share is None else mix_ceiling(share))
    if eff is not None:
        eff = spread_floor(eff, p, e, roof, machine)
        # threads give at most roof threads / the kernel's; the rest is per thread (r6 F2)
        out += split_threads(eff, p, e, roof, kernel, kind) if cpu and not busy else [eff]
    l2 = l2_bytes or (machine.caches.get("L2") if machine is not None else None)
    side = (memory_advice(p, e, roof, kind, l2, machine=machine, kernel=kernel)
            if p.memory_bound_side else compute_advice(p, e, roof, kind, machine, kernel))
    # 'vectorise' is no AI lever waiting for the latency: a scalar loop is slow for want
    # of SIMD, so it stands as it is, beside the parallelism lever
    vec = None if p.memory_bound_side else vectorize_advice(p, e, roof, machine, kernel)
    if vec is not None:
        out = _at_scalar_ceiling(out, vec, p, roof, machine, kernel, kind)
    side = [a for a in side if a.shrinks != "below roof" and (vec is None
                                                              or a.action != vec.action)]
    return out + (side if calls_bound else [after_latency(a, p, e) for a in side])


def _at_scalar_ceiling(out: list[Advice], vec: Advice, p: Point, roof: Roof,
                       machine: Machine | None, kernel: Kernel | None,
                       kind: str) -> list[Advice]:
    """The latency levers of a loop that reads 'latency' (under 10 % of the vector roof)
    with the vectorise advice beside them. At CHAIN_SHARE of its threads' scalar ceiling
    or more it is held by its scalar FMA issue, not by latency: the per-thread lever
    ('block for cache', 'cut per-thread latency', priced at 80 % of the vector roof, SIMD
    included) gives way to the vectorise one, which leads; threads, where the kernel is not
    on every core, stay (review s19 r4 F4: an L1-resident scalar loop at 52 % of its scalar
    ceiling was led by "block for cache: 12.29x", its measured 7.85x lever second). The
    bound stays placement's (shared with the GPU and every report): this is the order."""
    fit = scalar_fit(p, roof, machine, kernel)
    if fit is None or fit.share < CHAIN_SHARE:
        return out + [vec]
    lever = per_thread_words(kind, kernel)[0]
    vec = replace(vec, detail=f"{vec.detail}; at {pct(fit.share)} of its scalar ceiling it "
                              f"is held by its scalar FMA issue, not by latency: this "
                              f"is its per-thread lever")
    return [vec] + [a for a in out if a.action != lever]


def every_core_busy(kernel: Kernel | None, roof: Roof) -> int | None:
    """The kernel's thread count (meta 'threads') when it is at least the count the probed
    roof was measured with (sanity_ceilings.roof_threads): every core is busy already, so
    'spread the work over every core' has nothing left to spread (review r4 F3: a
    parallel numba matmul on both of 2 cores was told so at 465.69x); None otherwise."""
    n = kernel.meta.get("threads") if kernel is not None else None
    have = roof_threads(roof)
    if not isinstance(n, (int, float)) or isinstance(n, bool) or have is None:
        return None
    return int(n) if n >= have else None


def per_thread_lever(kind: str, threads: int,
                     kernel: Kernel | None = None) -> tuple[str, str]:
    """What is left for a latency-bound kernel already on every core: the work each thread
    does (advice_threads.per_thread_words: for a matrix or stencil op, its loop order and
    cache blocking; review r4 F3 measured a blocked matmul 7.9-9.4x faster, where more
    threads had nothing to give)."""
    action, why = per_thread_words(kind, kernel)
    return action, (f"it already runs on {threads} threads, every core the roof was measured "
                    f"with: more threads have nothing left to give; the time goes inside "
                    f"each thread; {why}")


def after_latency(a: Advice, p: Point, e: Efficiency) -> Advice:
    """A lever that moves AI or the roof, for a latency-bound kernel, held to the kernel's
    headroom (measured time / the larger of its work floor at its AI and its launch
    floor, which no AI lever removes). It predicts the kernel keeping its
    share of a higher roof; but a kernel that sits at 6 % for latency or synchronisation
    reasons does not take a fraction of its bytes' time (that is what latency-bound means),
    so the lever's gain comes only after the latency is fixed, and no lever that leaves the
    latency alone beats the headroom (review 18a F1: conv2d_3x3 'tile for data reuse:
    20.74x' over a 15.88x headroom, seed 000 §6.2 误判二)."""
    least = max(p.floor_s, e.launch_s)   # the launch floor stays (review 19a N11)
    headroom = e.seconds / least if least > 0 and not e.untimed else None
    if headroom is None:
        return a
    if a.speedup <= headroom:
        # below the cap the same model still assumes the latency is gone (19a N11)
        # it keeps its current share of the roof, which a latency-bound kernel keeps
        # only once its time tracks the roof: "then tracks its roof" beside "keeps its
        # current efficiency (0.85% of roof)" read as two contradicting claims (r5 F6b)
        note = ("only after the latency is fixed: the gain holds the kernel at its current "
                "share of a higher roof, which a latency-bound kernel keeps only once its "
                "time follows the roof (seed 000 §6.2 误判二)")
        return replace(a, assumption=f"{note}; {a.assumption}")
    note = (f"only after the latency is fixed: AI-raising levers assume the kernel then "
            f"tracks its roof; capped at its {fmt_times(headroom)} headroom (the model gave "
            f"{fmt_times(a.speedup)} keeping its {work_pct(p, e)} of a higher roof, which a "
            f"latency-bound kernel does not keep: seed 000 §6.2 误判二)")
    t = e.seconds / headroom
    return replace(a, new_seconds=t, speedup=headroom, new_flop_per_s=p.flop / t,
                   detail=f"{a.detail}; {note}", assumption=f"{note}; {a.assumption}")


# A grid under this many waves (blocks / (SMs x blocks per SM)) leaves SMs idle for a
# visible share of the kernel: ncu's launch-statistics rule names grids smaller than the SMs.
FEW_WAVES = 2.0


def grid_words(m) -> str:
    """'grid of 4 blocks x 256 threads on 24 SMs: 17 % of SMs get a block' when the grid
    (meta grid, block, sms) is under FEW_WAVES waves, else ''. A wave is SMs x the blocks
    one SM holds (the profile's occupancy limit, else 1)."""
    blocks, threads = grid_blocks(m.get("grid")), grid_blocks(m.get("block"))
    sms = m.get("sms")
    if not blocks or not isinstance(sms, int) or sms <= 0:
        return ""
    per_sm = m.get("occupancy_limit_blocks")
    per_sm = int(per_sm) if isinstance(per_sm, (int, float)) and per_sm >= 1 else 1
    waves = blocks / (sms * per_sm)
    shape = (f"grid of {blocks} blocks" + (f" x {threads} threads" if threads else "")
             + f" on {sms} SMs" + (f" ({m['sms_source']})" if m.get("sms_source") else ""))
    if blocks < sms:
        return f"{shape}: {fmt_share(blocks / sms)} of SMs get a block"
    if waves < FEW_WAVES:
        return (f"{shape}: {waves:.2f} waves of {sms * per_sm} blocks ({per_sm} per SM): "
                f"the last wave leaves SMs idle")
    return ""


def _idle_sms(m) -> bool:
    """Whether the recorded grid has fewer blocks than the device has SMs."""
    blocks, sms = grid_blocks(m.get("grid")), m.get("sms")
    return bool(blocks) and isinstance(sms, int) and blocks < sms


def grid_advice(p: Point, e: Efficiency, kernel: Kernel) -> Advice | None:
    """GRID_LEVER for a memory- or compute-bound kernel whose grid leaves SMs without a
    block, with the grid fact in its words: a 4-block reduction on 24 SMs at 16 % of DRAM
    was told to "coalesce accesses" first, and `report` never said that 20 SMs were idle
    (review s18 r4 F3; a latency-bound one gets the lever in latency_advice)."""
    if not _idle_sms(kernel.meta):
        return None
    grid = grid_words(kernel.meta)
    why = (f"the profile says: {grid}; the SMs without a block add no bandwidth or FLOP/s, "
           f"whatever the access pattern")
    eff = _efficiency(p, e, GRID_LEVER, why)
    return None if eff is None else replace(eff, assumption=f"{eff.assumption}; {why}")


def latency_detail(kernel: Kernel | None) -> str:
    """What the profiler recorded that explains a kernel far under its roof (review 14d C):
    'grid of 4 blocks x 256 threads on 24 SMs: 17 % of SMs get a block; achieved occupancy
    17 % of a theoretical 100 % (limit: warps per SM (block size)); pipes busy: fma 8 %'.
    From Kernel.meta (grid, block, sms, occupancy_*, pipe_busy); '' when none is there."""
    if kernel is None:
        return ""
    m = kernel.meta
    grid = grid_words(m)
    said = [grid] if grid else []
    got, most = m.get("occupancy_achieved"), m.get("occupancy_theoretical")
    limit = m.get("occupancy_limiter")
    # occupancy (% of warp slots) in its one style, as occupancy_words says it; pipe-busy
    # figures are the profiler's own metric, whole percents (no % of a roof: not fmt_pct)
    if isinstance(got, (int, float)):
        said.append(f"achieved occupancy {occupancy_pct(got)}"
                    + (f" of a theoretical {occupancy_pct(most)}"
                       if isinstance(most, (int, float)) else "")
                    + (f" (limit: {limit})" if limit else ""))
    elif isinstance(most, (int, float)) and m.get("occupancy_from"):
        # rocprof without SQ_ACCUM_PREV_HIRES (ingest/rocprof_achieved) has no achieved
        # occupancy: the theoretical one its registers allow
        said.append(f"theoretical occupancy {occupancy_pct(most)}"
                    + (f" (limit: {limit})" if limit else ""))
    pipes = m.get("pipe_busy")
    if isinstance(pipes, dict) and pipes:
        said.append("pipes busy: " + ", ".join(f"{p} {v:.0f} %"
                                               for p, v in list(pipes.items())[:3]))
    return "; ".join(said)


def spread_floor(a: Advice, p: Point, e: Efficiency, roof: Roof,
                 machine: Machine | None) -> Advice:
    """The parallelism advice's time held to what spreading costs per call: the roof's
    launch/dispatch floor, plus on a CPU a parallel region's fork/join (THREAD_FORK_S). A
    call whose work is far below that gains nothing from more threads (review 13v F-L)."""
    cpu = machine is not None and machine.kind == "cpu"
    per_call = (roof.overhead_s or 0.0) + (THREAD_FORK_S if cpu else 0.0)
    least = p.calls * per_call
    if a.new_seconds >= least:
        return a
    note = (f"spreading one call costs at least {fmt_seconds(per_call)} ("
            + ("a parallel region's fork/join, " if cpu else "")
            + ("the roof's launch/dispatch floor" if roof.overhead_s else
               "no launch/dispatch floor known") + f"), more than its "
            f"{fmt_seconds(p.floor_s / max(p.calls, 1))} of work: the time cannot fall "
            f"below {fmt_seconds(least)}")
    return replace(a, new_seconds=least, speedup=e.seconds / least if least > 0 else 1.0,
                   new_flop_per_s=p.flop / least if least > 0 else 0.0,
                   detail=f"{a.detail}; {note}", assumption=f"{a.assumption}; {note}")


def timing_noise(kernel: Kernel) -> float | None:
    """The kernel's own timing noise, IQR / median: meta 'iqr_rel' (measure, bench, demo),
    else from 4 or more raw samples; None when neither is there."""
    iqr = kernel.meta.get("iqr_rel")
    if isinstance(iqr, (int, float)) and not isinstance(iqr, bool):
        return float(iqr)
    return iqr_over_median(kernel.samples) if len(kernel.samples) >= 4 else None


def _quiet_advice(p: Point, e: Efficiency, kernel: Kernel,
                  machine: Machine | None) -> Advice | None:
    """'Re-time on a quiet machine' when a timed kernel's samples are noisy (its 'noisy'
    flag, or IQR / median over NOISY_IQR) or the roof's probe recorded other load on the
    machine: a numpy GEMM at 36 % of a roof probed with 54 % other CPU use was told to
    'run it as a tuned BLAS' (2.19x), though it is one (review 11a F-E). No speed-up is
    predicted for it (1.00x): it tells whether the others' gains are there at all."""
    if p.seconds is None:
        return None
    iqr = timing_noise(kernel)
    flags = kernel.meta.get("flags") or ()
    noisy = (iqr is not None and iqr > NOISY_IQR) or (
        isinstance(flags, (list, tuple)) and "noisy" in flags)
    load = machine.load_notes if machine is not None else ()
    if not noisy and not load:
        return None
    why = []
    if noisy:
        why.append(f"its timing samples spread {pct(iqr)} (IQR / median, over "
                   f"{pct(NOISY_IQR)})" if iqr is not None else
                   "its timing samples are flagged noisy")
    if load:
        share = machine.other_load if machine is not None else None
        why.append(f"the roof's probe shared the machine ({pct(share)} other load: "
                    f"{load[0]})" if share is not None else
                    f"the roof's probe shared the machine ({load[0]})")
    busy = busy_calls(kernel)
    if busy:   # its own calls crowded each other: a quiet machine would not help
        why.insert(0, contention(busy, kernel.meta.get("calling_threads")))
    action = (f"{ALONE} (the advice below is uncertain)" if busy else
              "re-time on a quiet machine (the advice below is uncertain)")
    return Advice(
        kernel=p.kernel, action=action,
        detail="; ".join(why), shrinks="below roof", new_ai=p.ai,
        new_flop_per_s=p.achieved_flop_per_s or 0.0, new_seconds=e.seconds, speedup=1.0,
        assumption=("no speed-up is predicted: calls that ran at once slow each other, so "
                    "its % of roof and every gain below may be contention, not the code"
                    if busy else
                    "no speed-up is predicted: other load slows the kernel and the probe "
                    "alike, so its % of roof and every gain below may be load, not the code; "
                    "time it (and probe the roof) with nothing else running"))
