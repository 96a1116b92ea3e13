"""Read the chart like an expert (seed 000 §4.4; seed 004 "读图:一个点的三段距离").

For each kernel: its position (memory-, compute-, overhead- or latency-bound) with the
evidence in numbers; the headroom to its attainable roof (more than 2x is flagged, seed 000
§4.4 "差距超过 2 倍的 kernel 列为重点优化对象"); its time share; a priority that weighs both
(the seconds it would save at the roof, as a share of the total); the three distances of
seed 004 as factors and in words; the sanity findings; and advice with predicted gains.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cached_property

from ..units import fmt_ai, fmt_factor, fmt_rate, fmt_seconds, si
from .advice import advise
from .advice_core import Advice, Efficiency, efficiency_of, pct
from .advice_memory import reuse_limit, weight_size
from .analysis import LATENCY_FRACTION, OVERHEAD_SHARE, Analysis, Point
from .ceiling import Ceiling, Roof, is_float, kernel_ceiling
from .kernel import Kernel
from .machine import Machine, machine_of
from .opkind import is_matrix, is_sparse, is_stencil, is_streaming, kernel_kind, kind_word
from .sanity import (
    ABOVE_TOLERANCE,
    Finding,
    applicable_launch_s,
    check_kernel,
)

# Kernels further than this from their roof are flagged (seed 000 §4.4).
FLAG_HEADROOM = 2.0


@dataclass(frozen=True)
class Distance:
    """One of seed 004's three distances: a factor (1 = no distance) and what it means."""

    name: str              # "below roof" | "along slope" | "roof"
    factor: float | None
    words: str


@dataclass(frozen=True)
class Diagnosis:
    kernel: str
    point: Point                     # the binding point (the level with the lowest roof)
    bound: str
    evidence: str
    headroom: float | None           # measured time / time at the roof (= attainable / achieved)
    flagged: bool                    # headroom > FLAG_HEADROOM
    time_share: float | None
    gain_s: float | None             # seconds saved if it ran at its roof
    priority: float                  # gain_s / total measured seconds (0 without a time)
    rank: int
    distances: tuple[Distance, ...]
    findings: tuple[Finding, ...]
    advice: tuple[Advice, ...]
    notes: tuple[str, ...] = ()      # what the kernel's source says about it (meta "note")
    reachable_s: float | None = None  # least time at the roof: max(work floor, launch floor)

    @property
    def best_advice(self) -> Advice | None:
        return self.advice[0] if self.advice else None

    @property
    def reachable(self) -> float:
        """reachable_s, or computed from the point when the diagnosis was built without it."""
        return reachable_s(self.point) if self.reachable_s is None else self.reachable_s

    @property
    def gain_speedup(self) -> float | None:
        """Measured time / reachable time: the gain's speed-up (None without a time or a
        reachable time; under 1 for a kernel above its roof)."""
        reach = self.reachable
        if self.point.seconds is None or reach <= 0:
            return None
        return self.point.seconds / reach

    @property
    def write_allocate(self) -> bool:
        """Whether sanity's write_allocate finding explains why it is above its roof:
        counter bytes over a STREAM-counted DRAM roof (sanity.check_write_allocate)."""
        return any(f.check == "write_allocate" for f in self.findings)

    @property
    def gain_words(self) -> str:
        if self.gain_s is None or self.headroom is None:
            return "no measured time: position only"
        if self.headroom < 1 / (1 + ABOVE_TOLERANCE) and self.write_allocate:
            return (f"none: it runs {1 / self.headroom:.2f}x above the STREAM-counted DRAM "
                    f"roof, as far as the write-allocate reads its counters include explain "
                    f"(up to 32/24 = 1.33x; see the sanity checks): at its roof")
        if self.headroom < 1 / (1 + ABOVE_TOLERANCE):
            return (f"none: it runs {1 / self.headroom:.2f}x faster than its roof allows, so "
                    f"the roof is too low for it or its counts are wrong (see the sanity "
                    f"checks)")
        # The speed-up over the same floor the saved time is taken against: an RMSNorm of
        # 6 us over a 5 us launch floor is 1.2x from its roof, not the 156x its 38 ns work
        # floor alone would say (headroom keeps that: it is the point's height).
        reach = self.reachable
        speedup = self.gain_speedup or self.headroom
        launch = applicable_launch_s(self.point) > self.point.floor_s
        if speedup < 1.0 + 1e-9 or self.gain_s <= 0:
            # at its roof within the tolerance (up to 5 % above it): no gain, and no "0.97x
            # faster" (a slowdown) either
            return (f"none: it runs at its {fmt_seconds(reach)} launch/dispatch floor"
                    if launch else
                    f"none: it runs at its roof ({fmt_seconds(reach)}; up to "
                    f"{ABOVE_TOLERANCE:.0%} above it is within the tolerance)")
        return (f"{fmt_seconds(self.gain_s)} saved ({self.priority:.0%} of the total) if it "
                f"reached its roof ({speedup:.1f}x faster"
                + (f"; the {fmt_seconds(reach)} launch/dispatch floor stays" if launch else "")
                + ")")


def level_bound(p: Point, binding: Point | None) -> str:
    """A point's bound as the tables print it. A kernel's bound is its binding point's
    (the level with the lowest roof: Analysis.primary); another level's point sits under
    a higher roof, so its % of roof is low because that level does not bind, not because
    of latency (review 16a H: a stencil at 65 % of DRAM had its L1 point "latency" at
    4.7 %). Such a point reads "not binding (DRAM binds)"; memory, compute and overhead
    are what they say at every level and stay."""
    if p.bound != "latency" or binding is None or binding.level == p.level:
        return p.bound
    return f"not binding ({binding.level} binds)"


def level_bounds(analysis: Analysis) -> tuple[str, ...]:
    """level_bound of every point of the analysis, in its order."""
    primary = {_kernel_key(p): p for p in analysis.primary()}
    return tuple(level_bound(p, primary.get(_kernel_key(p))) for p in analysis.points)


def _kernel_key(p: Point) -> int | str:
    # as Analysis.primary keys its points: by kernel index, else by name
    return p.kernel_index if p.kernel_index >= 0 else p.kernel


def evidence(p: Point, machine: Machine | None = None) -> str:
    """Why this bound class, in numbers."""
    floor = "dispatch floor" if machine is not None and machine.kind == "cpu" else "launch floor"
    pc = pct(p.percent_of_roof / 100) if p.percent_of_roof is not None else "-"
    ach = fmt_rate(p.achieved_flop_per_s, p.precision)
    att = fmt_rate(p.attainable_flop_per_s, p.precision)
    if p.bound == "overhead" and p.seconds is None:
        return (f"{p.calls} call(s) x {fmt_seconds((p.overhead_floor_s or 0) / p.calls)} "
                f"{floor} = {fmt_seconds(p.overhead_floor_s)} is more than the work floor "
                f"{fmt_seconds(p.floor_s)} (max of FLOP/P, bytes/B): untimed, it takes at "
                f"least the larger (with launches), so the launches bound it")
    if p.bound == "overhead":
        return (f"{p.calls} call(s) x {fmt_seconds((p.overhead_floor_s or 0) / p.calls)} "
                f"{floor} = {fmt_seconds(p.overhead_floor_s)}, >= "
                f"{OVERHEAD_SHARE:.0%} of the measured {fmt_seconds(p.seconds)} and more than "
                f"the work floor {fmt_seconds(p.floor_s)} (max of FLOP/P, bytes/B)")
    if p.bound == "latency":
        if p.overhead_floor_s is None:
            known = f"no {floor} is known for this roof, so launches are not ruled out"
        elif p.seconds is not None and p.seconds < p.overhead_floor_s:
            known = (f"calls x the {floor} ({fmt_seconds(p.overhead_floor_s)}) is more than "
                     f"the measured time, so it is not in it (see the sanity findings)")
        else:
            known = f"the {floor} {fmt_seconds(p.overhead_floor_s)} does not explain it"
        if p.flop <= 0 and p.seconds:
            # no FLOP/s to compare: the bandwidth it reaches is its fraction of the roof
            bps = p.bytes / p.seconds
            return (f"no FLOP (AI 0): moves only {si(bps, 'B/s')} = "
                    f"{pct(bps / p.bytes_per_s)} (< {LATENCY_FRACTION:.0%}) of {p.level} "
                    f"bandwidth {si(p.bytes_per_s, 'B/s')}, and {known}: latency, "
                    f"synchronisation, too little parallelism or work that is no FLOP "
                    f"(comparisons, index arithmetic)")
        return (f"achieved {ach} is only {pc} (< {LATENCY_FRACTION:.0%}) of the {att} "
                f"attainable at AI {fmt_ai(p.ai)}, and {known}: latency, "
                f"synchronisation or too little parallelism")
    if p.memory_bound_side:
        moved = ""
        if p.seconds:
            bps = p.bytes / p.seconds
            moved = (f"; moves {si(bps, 'B/s')} = {pct(bps / p.bytes_per_s)} of "
                     f"{p.level} bandwidth")
        where = (f"{fmt_factor(p.ridge / p.ai)} left of it" if p.ai > 0 else
                 "no FLOP: pure data movement")
        return (f"AI {fmt_ai(p.ai)} FLOP/B < ridge {fmt_ai(p.ridge)} ({where}): "
                f"held by {p.level} at {si(p.bytes_per_s, 'B/s')}, attainable {att}; "
                f"achieved {ach} = {pc} of roof{moved}")
    return (f"AI {fmt_ai(p.ai)} FLOP/B >= ridge {fmt_ai(p.ridge)}: held by {p.binding} at "
            f"{fmt_rate(p.peak_flop_per_s, p.precision)}; achieved {ach} = {pc} of roof")


# What closes each distance, by kind of machine (seed 004 names the GPU levers).
CURES = {
    "gpu": ("mostly launch overhead: CUDA graphs, fusion and fewer launches close it",
            "kernel efficiency: coalesced, vectorised accesses and enough bytes in flight "
            "close it",
            "kernel efficiency: FMA instead of separate multiply and add, occupancy, ILP and "
            "fewer non-FLOP instructions close it",
            "another precision or unit (tensor cores; bf16, fp8 or int8 where the GPU has them), "
            "sparsity or other hardware"),
    "cpu": ("mostly per-call dispatch (Python / framework): fewer, larger calls, fusion and "
            "torch.compile close it",
            "kernel efficiency: unit-stride SIMD loads, hardware prefetch and every core "
            "streaming (threads, NUMA first-touch) close it",
            "kernel efficiency: full-width {simd} FMA, unrolling for ILP, cache/register "
            "blocking and every core busy close it",
            "another precision or unit ({units}) or other hardware"),
    "": ("mostly launch/dispatch overhead: fewer, larger launches (CUDA graphs on a GPU) and "
         "fusion close it",
         "kernel efficiency: contiguous, vectorised accesses and enough bytes in flight "
         "close it",
         "kernel efficiency: FMA instead of separate multiply and add, vector/parallel units "
         "kept busy, ILP and fewer non-FLOP instructions close it",
         "another precision or unit (matrix units, lower precision), sparsity or other "
         "hardware"),
}


def _cpu_units(m: Machine, precision: str = "") -> str:
    names = [n for f, n in (("amx", "AMX"), ("avx512_bf16", "AVX512-BF16"), ("vnni", "VNNI"))
             if f in m.features] or ["bf16/int8 dot-product instructions"]
    return ", ".join((["fp32 instead of fp64"] if precision == "fp64" else []) + names)


# What closes an SpMV's distance below the roof: its matrix streams, its x is gathered.
GATHER_CURE = ("kernel efficiency: the matrix streamed by every core (rows split by "
               "nonzeros, NUMA first-touch) and a vectorised gather of x (SELL-C-sigma, "
               "blocked CSR) close it; the gather itself cannot be unit stride")


def cures(machine: Machine | None, precision: str = "") -> tuple[str, str, str, str]:
    m = machine or Machine()
    got = CURES.get(m.kind, CURES[""])
    return tuple(x.format(simd=m.simd, units=_cpu_units(m, precision)) for x in got)


def distances(p: Point, top_label: str, top_value: float,
              machine: Machine | None = None, n_compute: int = 0,
              compute_label: str | None = None,
              beyond: Ceiling | None = None, reuse: bool | str = True,
              narrow: str = "") -> tuple[Distance, ...]:
    """Seed 004's three distances for one point (`n_compute`: how many compute ceilings
    the roof lists; 1 means the roof cannot see past the kernel's own ceiling).
    `compute_label`: the name of the compute ceiling the kernel is held to where it is not
    its precision's own (a mixed kernel's "weighted fp16 tensor + fp32 vector").
    `beyond`: a faster ceiling of the other family (int4 math for a float kernel), named
    but not counted as the kernel's roof. `reuse`: what limits the kernel's reuse
    (_slope_levers: True, False or "streams_weights", "compulsory", "stream", "unknown",
    "sparse", "stencil"; "sparse" also names the gather's below-roof cure).
    `narrow`: where the weights are already 4-bit or narrower, what says so
    (_narrow_weights): quantization is then no lever."""
    launch_cure, memory_cure, compute_cure, roof_cure = cures(machine, p.precision)
    if reuse == "sparse":
        memory_cure = GATHER_CURE   # an SpMV's x[col[k]] gather is no unit stride (16a L4)
    return (_below_roof(p, machine, launch_cure, memory_cure, compute_cure),
            _along_slope(p, reuse, narrow),
            _beyond(_to_top_roof(p, top_label, top_value, n_compute, roof_cure,
                                 compute_label, "float " if beyond else ""), p, beyond))


def _beyond(d: Distance, p: Point, beyond: Ceiling | None) -> Distance:
    """Name the other family's faster ceiling without holding the kernel to it."""
    if beyond is None or p.flop <= 0:
        return d
    return replace(d, words=(
        f"{d.words} Integer math ({beyond.label}, {fmt_rate(beyond.value, beyond.precision)}) goes "
        f"higher still, for a kernel quantized end to end (weights and activations); "
        f"this distance does not count it."))


def _below_roof(p: Point, machine: Machine | None, launch_cure: str, memory_cure: str,
                compute_cure: str) -> Distance:
    """How far the point sits below the roof at its own AI (overhead, kernel efficiency)."""
    e = efficiency_of(p)
    if p.seconds is None:
        return Distance("below roof", None, "no measured time: the point's height is unknown")
    f = p.seconds / p.floor_s if p.floor_s > 0 else None
    if f and f < 1 / (1 + ABOVE_TOLERANCE):
        return Distance(
            "below roof", f,
            f"none: the point is {fmt_factor(1 / f)} above the roof at its AI, which a correct "
            f"roof and correct counts rule out; the roof is too low (a disturbed probe, "
            f"the wrong memory level or precision) or the FLOP/bytes/time are off.")
    if f and f <= 1:
        # above the roof within the tolerance (or on it): no gap to close, so not "0.976x
        # below the roof" with a cure for it
        return Distance(
            "below roof", f,
            f"none: at the roof ({fmt_factor(f)}, within the {ABOVE_TOLERANCE:.0%} "
            f"tolerance): no gap below the roof at its AI for overhead or kernel efficiency "
            f"to close.")
    # At or above the roof (seconds <= floor_s) there is no gap for the launch floor to
    # explain: 0 > 0.5 x 0 held and a point 5 % above its roof got the dispatch cure beside
    # "dispatch overhead is negligible here" (review 11a F-G).
    if p.seconds > p.floor_s and e.launch_s > 0.5 * (p.seconds - p.floor_s):
        cure = launch_cure
    elif p.memory_bound_side:
        cure = memory_cure
    else:
        cure = compute_cure
    return Distance(
        "below roof", f,
        f"{fmt_factor(f)} below the roof at its AI: overhead and kernel efficiency, not AI; "
        f"{cure}. Batching does not close it (it moves the point right, not up)."
        + _launch_split(p, e, machine) if f else "-")


def _launch_split(p: Point, e: Efficiency, machine: Machine | None) -> str:
    """How much of the measured time the launch (GPU) or dispatch (CPU) floor explains."""
    launch = "dispatch overhead" if machine and machine.kind == "cpu" else "launch overhead"
    if 0 < e.launch_s < 0.01 * p.seconds:
        return (f" {launch.capitalize()} is negligible here ({fmt_seconds(e.launch_s)} "
                f"of the {fmt_seconds(p.seconds)}): it is all kernel efficiency.")
    if e.launch_s > 0:
        return (f" Of the {fmt_seconds(p.seconds)}, {launch} explains up to "
                f"{fmt_seconds(e.launch_s)}; the work itself runs at {pct(e.efficiency)} "
                f"of the roof (kernel efficiency).")
    return ""


def _slope_levers(reuse: bool | str, narrow: str = "") -> tuple[str, str]:
    """(what climbs the slope, with its verb; an aside on what does not). `reuse`: True or
    "tileable" (tiles can still cut its bytes); False or "streams_weights" for a
    weight-streaming op (a GEMV, a decode step, a GEMM of a GEMV's shape or AI, or mostly
    weights at its compulsory AI); "compulsory" for a GEMM whose traffic is already its
    shape's compulsory bytes, weights a minority (advice_memory.reuse_limit); "stream" for
    a streaming op (elementwise, a norm; any op under 1 FLOP/B of no matrix kind),
    "unknown" for one of no kind at all under 1 FLOP/B (it may stream, or be a stencil),
    "sparse" for an SpMV (a read-once matrix), "stencil" for a stencil (blocking levers).
    `narrow`: the weights are already 4-bit or narrower (_narrow_weights), so narrower
    weights are not offered again."""
    if reuse == "compulsory":
        # review 14b F11: a 256^3 GEMM uses each element of B 256 times; tiling cannot help
        # because every operand already moves once, not because weights are used once
        return ("Only a larger problem per call, fusion with a neighbour or fewer bytes "
                "per element (narrower data) climb",
                "; tiling cannot: its traffic is already compulsory (each operand moved "
                "once)")
    if reuse == "stream":
        # seed 004: y = x + 1 "永远在斜线上": each element is read and written once
        return ("Fusion (the intermediate never reaches memory) and fewer bytes per element "
                "climb",
                "; tiling and batching cannot (each element is read and written once "
                "whatever the tiles)")
    if reuse == "unknown":
        # review 16a C/E: a stencil or an SpMV under 1 FLOP/B is no y = x + 1
        return ("If it streams (each element read and written once, as y = x + 1), fusion "
                "(the intermediate never reaches memory) and fewer bytes per element climb",
                "; its op kind is unknown, so whether tiling, blocking or batching can "
                "raise its AI is not known: name it with meta.op (elementwise, stencil, "
                "spmv, gemv, matmul...) for its own levers")
    if reuse == "sparse":
        # review 16a C: the matrix is read once per product whatever the tiles or neighbours
        return ("Several right-hand sides per matrix read (SpMM, block Krylov) and fewer "
                "bytes per nonzero (narrower values; integer indices stay) climb",
                "; tiling and fusion cannot cut the matrix (values and indices are read "
                "once per product whatever the tiles or the neighbouring passes)")
    if reuse == "stencil":
        # review 16a E: the grid is reused across neighbouring planes and across sweeps
        return ("Temporal blocking (wavefront or diamond: t sweeps per pass through memory, "
                "AI x t), spatial blocking (until the layer condition holds: the 2r + 1 "
                "planes a point's neighbours span stay in L2/L3, so each element comes from "
                "memory once a sweep), non-temporal stores (no write-allocate read) and "
                "fewer bytes per point climb", "")
    already = f"; quantization is no lever left: {narrow}" if narrow else ""
    if reuse is True or reuse == "tileable":
        return (("Batching, data reuse (tiling), fusion and fewer bytes per activation climb"
                 if narrow else "Batching, data reuse (tiling), fusion and fewer bytes per "
                 "element (quantization) climb"), already)
    # seed 004: decode at batch 1 reads each weight once per token; only more requests
    # per weight read (batching) or fewer bytes per weight (quantization) move it right
    if narrow:
        return ("Only batching (more requests per weight read) climbs",
                f"{already}; tiling and fusion cannot (each weight is used once per request)")
    return ("Batching (more requests per weight read) and fewer bytes per weight "
            "(quantization) climb", "; tiling and fusion cannot (each weight is used once "
                                    "per request)")


def _narrow_weights(kernel: Kernel, precision: str) -> str:
    """Where a kernel's weights are already 4-bit or narrower, its weight dtype and the
    reading it comes from (advice_memory.weight_size: meta weight_dtype, a W4A16/AWQ/GPTQ
    name); '' otherwise (the advice offers int4 weights to the same kernels only)."""
    size, src = weight_size(kernel, precision)
    return src if size is not None and size <= 0.5 else ""


def _along_slope(p: Point, reuse: bool | str = True, narrow: str = "") -> Distance:
    """How far left of the ridge the point's AI is (the intensity it lacks)."""
    if p.along_slope > 1:
        levers, aside = _slope_levers(reuse, narrow)
        return Distance(
            "along slope", p.along_slope,
            f"AI {fmt_ai(p.ai)} is {fmt_factor(p.along_slope)} left of the ridge "
            f"{fmt_ai(p.ridge)}: "
            f"the 'not enough arithmetic intensity' part. {levers} "
            f"the slope, up to {fmt_factor(p.along_slope)} more attainable FLOP/s"
            f"{aside}.")
    if p.flop <= 0:
        # A copy/transpose/gather does no FLOP: there is no slope to climb (analysis sets
        # along_slope to 1 for AI 0), only bytes to move or to avoid moving.
        return Distance("along slope", 1.0,
                        "AI 0 (no FLOP: pure data movement): there is no slope to climb; "
                        "its time is bytes / bandwidth, so only moving fewer bytes "
                        "(fusion, smaller dtypes, avoiding the copy) shortens it.")
    return Distance("along slope", 1.0,
                    f"AI {fmt_ai(p.ai)} is at or right of the ridge {fmt_ai(p.ridge)}: "
                    f"more AI buys nothing; the flat roof binds.")


def _to_top_roof(p: Point, top_label: str, top_value: float, n_compute: int,
                 roof_cure: str, compute_label: str | None = None, family: str = ""
                 ) -> Distance:
    """How far the kernel's own ceiling is below the roof's fastest one."""
    if p.flop <= 0:
        # A copy or a comparison-only op (relu counts 0 FLOP) is held by bandwidth alone:
        # no compute ceiling, high or low, bears on it.
        return Distance("roof", 1.0,
                        f"no FLOP: no compute ceiling holds it, only the {p.level} bandwidth "
                        f"({si(p.bytes_per_s, 'B/s')}); a faster memory level or fewer bytes "
                        f"shortens it, a faster compute unit does not.")
    r = top_value / p.peak_flop_per_s
    if r > 1.0 + 1e-9:
        # left of the ridge the binding label is the memory's; the compute ceiling is the
        # precision's own, unless the roof has none and a stand-in holds it (fp64 on a
        # Jetson: fp32's 2.08 TFLOP/s is not "fp64 peaks at"), or a mixed kernel's weighted
        # one (A100 9e9 fp16 + 1e9 fp32: 124.8 TFLOP/s is not "fp16 peaks at")
        own = (compute_label if compute_label else
               f"its stand-in ceiling (no {p.precision} one on this roof)"
               if f"no {p.precision} " in p.note else p.precision)
        words = (f"{p.binding if not p.memory_bound_side else own} peaks at "
                 f"{fmt_rate(p.peak_flop_per_s, p.precision)}; the fastest {family}ceiling on "
                 f"this roof ({top_label}, {fmt_rate(top_value, p.precision)}) is "
                 f"{fmt_factor(r)} higher. Only {roof_cure} raises it.")
    elif n_compute == 1:
        # A roof built from the peaks a profile recorded (an .ncu-rep's fp64 section only)
        # knows one ceiling: "only other hardware" would hide that fp32 runs 64x faster on
        # a GeForce part.
        words = (f"it is held to the only compute ceiling this roof lists ({top_label}, "
                 f"{fmt_rate(p.peak_flop_per_s, p.precision)}); the roof cannot tell what "
                 f"{roof_cure} would give: judge it on the full machine (--on a catalog "
                 f"name or a probed profile).")
    else:
        words = (f"it is held to the highest {family}ceiling on this roof "
                 f"({fmt_rate(p.peak_flop_per_s, p.precision)}); only other hardware raises it.")
    return Distance("roof", r, words)


def diagnose_kernel(analysis: Analysis, kernel: Kernel, p: Point, total_s: float,
                    machine: Machine | None = None) -> Diagnosis:
    top = analysis.roof.top_compute_for(kernel.precision)
    machine = machine if machine is not None else machine_of(analysis.roof)
    note = kernel.meta.get("note")
    headroom = p.seconds / p.floor_s if p.seconds and p.floor_s > 0 else None
    reachable = reachable_s(p)
    gain = max(0.0, p.seconds - reachable) if p.seconds is not None else None
    return Diagnosis(
        kernel=kernel.name, point=p, bound=p.bound, evidence=_latency_evidence(p, machine,
                                                                                 kernel),
        headroom=headroom,
        flagged=headroom is not None and headroom > FLAG_HEADROOM, time_share=p.time_share,
        gain_s=gain, priority=gain / total_s if gain is not None and total_s > 0 else 0.0,
        rank=0, distances=distances(p, top.label, top.value, machine,
                                    len(analysis.roof.compute),
                                    _weighted_label(analysis, kernel),
                                    _other_family_top(analysis.roof, top),
                                    _reuse(kernel, p),
                                    _narrow_weights(kernel, p.precision)),
        findings=check_kernel(analysis, kernel, machine),
        advice=advise(p, analysis.roof, kernel, machine=machine),
        notes=(note,) if isinstance(note, str) and note else (), reachable_s=reachable)


def _latency_evidence(p: Point, machine: Machine | None, kernel: Kernel) -> str:
    """evidence(), and for a latency-bound kernel what the profile recorded that tells
    which it is (a grid smaller than the SMs, low occupancy and its limiter, pipes)."""
    from .advice_compute import latency_detail

    said = evidence(p, machine)
    detail = latency_detail(kernel) if p.bound == "latency" else ""
    return f"{said}; the profile says: {detail}" if detail else said


def _reuse(kernel: Kernel, p: Point) -> str:
    """What climbs the kernel's slope (_slope_levers), by the rules the advice uses
    (advice_memory.reuse_limit): "streams_weights" for a weight-streaming op (a GEMV, a
    decode step, a GEMM of a GEMV's shape or AI, review 12a #1), "compulsory" for a GEMM
    at its shape's compulsory AI (review 14b F11); "stream" for a streaming kind or an op
    under 1 FLOP/B of no matrix kind (12a #4), "unknown" when that op names no kind at all
    (review 16a C); "sparse" for an SpMV, "stencil" for a stencil; else "tileable"."""
    kind = kernel_kind(kernel)[0]
    if is_sparse(kind) or is_stencil(kind):
        return "sparse" if is_sparse(kind) else "stencil"
    limit = reuse_limit(kind, kernel, p.ai, p.precision)
    if limit != "tileable":
        return limit
    if is_streaming(kind):
        return "stream"
    if not is_matrix(kind) and 0 < p.ai < 1:
        return "stream" if kind_word(kind) else "unknown"   # none, or one rooflab lacks
    return limit


def _other_family_top(roof: Roof, top: Ceiling) -> Ceiling | None:
    """The fastest ceiling of the other family where it beats the kernel's family top
    (A100: int4 tensor 1.25 POP/s over fp16 tensor 312 TFLOP/s); only named for a float
    kernel, since an integer kernel's float stand-ins are not faster math."""
    if not is_float(top.precision):
        return None
    other = [c for c in roof.compute if not is_float(c.precision) and c.value > top.value]
    return max(other, key=lambda c: c.value) if other else None


def _weighted_label(analysis: Analysis, kernel: Kernel) -> str | None:
    """The name of a kernel's weighted ceiling ("weighted fp16 tensor + fp32 vector":
    ceiling.kernel_ceiling, as analyze holds it); None for one held to a roof ceiling."""
    held = kernel_ceiling(analysis.roof, kernel.flop, kernel.unit, kernel.precision)
    return held.label if held.weighted else None


def reachable_s(p: Point) -> float:
    """The least time a point can reach at its roof. Reaching the roof does not remove the
    launches: it is the larger of the work floor and calls x the launch floor (graphs and
    fusion cut the latter; their advice predicts that gain separately), the floor left out
    where the measured time is below it (sanity.applicable_launch_s)."""
    return max(p.floor_s, applicable_launch_s(p))


def diagnose(analysis: Analysis, machine: Machine | None = None) -> tuple[Diagnosis, ...]:
    """One diagnosis per kernel that has a point, the biggest gain at the roof first.

    `machine` (model.machine.machine_of) names the levers of a CPU or a GPU; by default it
    is read off the analysis' roof."""
    total = sum(k.seconds for k in analysis.kernels if k.seconds)
    machine = machine if machine is not None else machine_of(analysis.roof)
    analysis = _ByName.of(analysis)
    # each kernel's own hardest-binding point (as Analysis.primary, but two kernels of one
    # name keep their own numbers)
    primary = {id(k): min(pts, key=lambda p: p.attainable_flop_per_s)
               for k in analysis.kernels if (pts := analysis.points_of(k))}
    out = [diagnose_kernel(analysis, k, primary[id(k)], total, machine)
           for k in analysis.kernels if id(k) in primary]
    # Untimed kernels (analytic counts) have no gain; the longest floor goes first.
    out.sort(key=lambda d: (-d.priority, -(d.time_share or 0.0), -d.point.floor_s, d.kernel))
    from dataclasses import replace

    return tuple(replace(d, rank=i + 1) for i, d in enumerate(out))


@dataclass(frozen=True)
class _ByName(Analysis):
    """An Analysis whose for_kernel looks its points up by name: Analysis.for_kernel scans
    every point, and diagnose asks once or twice per kernel (its primary point, then the
    sanity checks), which made `rooflab report` quadratic (20 000 kernels: 20 s)."""

    @classmethod
    def of(cls, analysis: Analysis) -> _ByName:
        return cls(**{f.name: getattr(analysis, f.name) for f in fields(analysis)})

    @cached_property
    def _by_name(self) -> dict[str, tuple[Point, ...]]:
        out: dict[str, list[Point]] = {}
        for p in self.points:
            out.setdefault(p.kernel, []).append(p)
        return {name: tuple(pts) for name, pts in out.items()}

    def for_kernel(self, name: str) -> tuple[Point, ...]:
        return self._by_name.get(name, ())


def top(diagnoses: tuple[Diagnosis, ...], n: int) -> tuple[Diagnosis, ...]:
    """The n kernels most worth working on."""
    return diagnoses[:n]


def diagnosis_to_dict(d: Diagnosis) -> dict:
    """The JSON shape of one diagnosis (SI numbers, unit-named fields)."""
    return {
        "kernel": d.kernel, "rank": d.rank, "bound": d.bound, "level": d.point.level,
        "evidence": d.evidence, "headroom": d.headroom, "flagged": d.flagged,
        "time_share": d.time_share, "gain_s": d.gain_s, "priority": d.priority,
        # the gain's floor and speed-up (the report's "1.2x faster"): time at the roof
        # with the launches kept, and measured / that time
        "reachable_s": d.reachable, "gain_speedup": d.gain_speedup,
        "distances": [{"name": x.name, "factor": x.factor, "words": x.words}
                      for x in d.distances],
        "findings": [{"check": f.check, "severity": f.severity, "level": f.level,
                      "message": f.message, "causes": list(f.causes), "fix": f.fix}
                     for f in d.findings],
        "advice": [{"action": a.action, "detail": a.detail, "shrinks": a.shrinks,
                    "new_ai": a.new_ai if a.new_ai != float("inf") else None,
                    "new_flop_per_s": a.new_flop_per_s, "new_seconds": a.new_seconds,
                    "speedup": a.speedup, "assumption": a.assumption} for a in d.advice],
        "notes": list(d.notes),
    }
