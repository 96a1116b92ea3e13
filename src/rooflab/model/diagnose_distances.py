"""Seed 004's three distances of a point ("读图:一个点的三段距离"): below the roof at its
own AI (overhead and kernel efficiency), along the slope to the ridge (the intensity it
lacks) and up to the roof's fastest ceiling (precision, unit, hardware), each a factor
with words naming what closes it on this kind of machine. Split out of diagnose.py,
which uses them. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..sides import ai_apart, factor_text
from ..units import fmt_factor, fmt_fraction, fmt_rate, fmt_seconds, si
from .above_roof_words import above_nominal, nominal_binding
from .advice_core import TARGET_EFFICIENCY, Efficiency, efficiency_of, pct
from .advice_tiling import reuse_limit
from .ceiling import Ceiling, Roof, is_float
from .kernel import Kernel
from .machine import Machine
from .opkind import (
    is_matrix,
    is_resample,
    is_sparse,
    is_stencil,
    is_streaming,
    kernel_kind,
    kind_word,
)
from .placement import Point
from .sanity_finding import ABOVE_TOLERANCE
from .weight_traffic import weight_size


@dataclass(frozen=True)
class Distance:
    """One of seed 004's three distances: a factor (1 = no distance) and what it means."""

    name: str              # "below roof" | "along slope" | "roof"
    factor: float | None
    words: str


# the headroom past which a kernel is flagged (diagnose.FLAG_HEADROOM, which imports this
# module): the line the "below roof" factor is printed off (sides.factor_text)
BELOW_ROOF_LINE = 2.0


def factor_words(x: Distance) -> str:
    """A distance's factor as the report heads it, with the figures that keep it off its
    line: 'below roof (2.002x)' for a flagged kernel (> 2x), not '(2x)'; 'along slope
    (1.0004x)' beside the ridge, not '(1x)' (review s22 r4 F3)."""
    return factor_text(x.factor, BELOW_ROOF_LINE if x.name == "below roof" else 1.0)


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


# The roof distance's cure for work its kind keeps off tensor (matrix) units: pooling, norms,
# elementwise passes (held_unit); "tensor cores" would send a pool where it cannot run.
VECTOR_KIND_CURE = ("a narrower precision on the vector units (its kind of work cannot run "
                    "on tensor units) or other hardware")


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
              narrow: str = "", step: bool = False, fma: str = "",
              vector_kind: bool = False) -> tuple[Distance, ...]:
    """Seed 004's three distances for one point (`n_compute`: how many compute ceilings
    the roof lists; 1 means the roof cannot see past the kernel's own ceiling).
    `compute_label`: the name of the compute ceiling the kernel is held to where it is not
    its precision's own (a mixed kernel's "weighted fp16 tensor + fp32 vector").
    `beyond`: a faster ceiling of the other family (int4 math for a float kernel), named
    but not counted as the kernel's roof. `reuse`: what limits the kernel's reuse
    (_slope_levers: True, False or "streams_weights", "compulsory", "stream", "unknown",
    "sparse", "stencil"; "sparse" also names the gather's below-roof cure).
    `narrow`: where the weights are already 4-bit or narrower, what says so
    (_narrow_weights): quantization is then no lever.
    `step`: a whole decode step timed as one point, one launch assumed
    (retime.one_launch_step): its launches are unknown, not negligible (_launch_split).
    `fma`: the no-FMA ceiling of its instruction mix (fma_ceiling.mix_words), said beside
    the compute side's efficiency cure. `vector_kind`: its op kind holds it to the vector
    units (held_unit.top_ceiling): the top is the fastest vector ceiling and tensor units
    are no cure."""
    launch_cure, memory_cure, compute_cure, roof_cure = cures(machine, p.precision)
    if vector_kind:
        roof_cure = VECTOR_KIND_CURE
    if reuse == "sparse":
        memory_cure = GATHER_CURE   # an SpMV's x[col[k]] gather is no unit stride (16a L4)
    if fma:
        compute_cure = f"{compute_cure}; {fma}"
    return (_below_roof(p, machine, launch_cure, memory_cure, compute_cure, step),
            _along_slope(p, reuse, narrow),
            _beyond(_to_top_roof(p, top_label, top_value, n_compute, roof_cure,
                                 compute_label, ("float " if beyond else "")
                                 + ("vector " if vector_kind else "")), p, beyond))


def _beyond(d: Distance, p: Point, beyond: Ceiling | None) -> Distance:
    """Name the other family's faster ceiling without holding the kernel to it."""
    if beyond is None or p.flop <= 0:
        return d
    return replace(d, words=(
        f"{d.words} Integer math ({beyond.label}, {fmt_rate(beyond.value, beyond.precision)}) goes "
        f"higher still, for a kernel quantized end to end (weights and activations); "
        f"this distance does not count it."))


# The share of the gap below the roof the launch floor must explain for "mostly launch
# overhead" alone; between half and this, launches and kernel efficiency are both named.
MOSTLY_LAUNCH = 0.8


def _below_roof(p: Point, machine: Machine | None, launch_cure: str, memory_cure: str,
                compute_cure: str, step: bool = False) -> Distance:
    """How far the point sits below the roof at its own AI (overhead, kernel efficiency)."""
    e = efficiency_of(p)
    if p.seconds is None:
        return Distance("below roof", None, "no measured time: the point's height is unknown")
    f = p.seconds / p.floor_s if p.floor_s > 0 else None
    if f and f < 1 / (1 + ABOVE_TOLERANCE) and nominal_binding(p):
        return Distance(
            "below roof", f,
            f"none: the point is {fmt_factor(1 / f)} above the roof at its AI; "
            f"{above_nominal(p)}.")
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
            f"none: at the roof ({fmt_factor(f)}, within the {fmt_fraction(ABOVE_TOLERANCE)} "
            f"tolerance): no gap below the roof at its AI for overhead or kernel efficiency "
            f"to close.")
    # At or above the roof (seconds <= floor_s) there is no gap for the launch floor to
    # explain: 0 > 0.5 x 0 held and a point 5 % above its roof got the dispatch cure beside
    # "dispatch overhead is negligible here" (review 11a F-G).
    if step:
        # seed 004: "点到斜线的垂直距离,就是 overhead 加 kernel 效率损失" (its Q3 answer: CUDA
        # graphs / torch.compile, or better kernels); the shares are unknown here
        cure = ("launch overhead and kernel efficiency, in shares one point cannot tell: "
                "fewer launches (CUDA graphs, torch.compile, fused kernels) and better "
                "kernels close it")
    elif e.launch_s > 0.5 * (p.seconds - p.floor_s) and (
            p.floor_s / p.seconds >= TARGET_EFFICIENCY):
        # at or past what a well-tuned kernel reaches: no launch cure to chase, whatever
        # share of the small gap one launch floor could explain (review s21 r3: a 169 us
        # softmax at 95 % of DRAM read "mostly launch overhead: CUDA graphs ... close it")
        cure = (f"little to close: it runs at {pct(p.floor_s / p.seconds)} of the roof, "
                f"at or past the {pct(TARGET_EFFICIENCY)} a well-tuned kernel reaches "
                f"(seed 000 §6.4)")
    elif e.launch_s > 0.5 * (p.seconds - p.floor_s):
        # the launch floor is an upper bound on the launches' share: "mostly launch
        # overhead" where it is most of the gap (MOSTLY_LAUNCH) or the work without it is
        # well tuned; else both causes, each with its cure
        rest = memory_cure if p.memory_bound_side else compute_cure
        cure = (launch_cure if e.launch_s >= MOSTLY_LAUNCH * (p.seconds - p.floor_s)
                or e.efficiency >= TARGET_EFFICIENCY else
                f"launch overhead (up to {fmt_seconds(e.launch_s)} of the "
                f"{fmt_seconds(p.seconds - p.floor_s)} gap: CUDA graphs, fusion and fewer "
                f"launches close it) and {rest.replace(' close it', ' close the rest')}"
                if machine is None or machine.kind != "cpu" else launch_cure)
    elif p.bound == "latency":
        # far from both roofs: latency or synchronisation, not the memory side's access
        # pattern (seed 000 §6.2 误判二; review 19a N12: conv2d_3x3 got the memory cure)
        cure = ("parallelism: more independent work in flight (occupancy, ILP) and fewer "
                "synchronisations close it")
    elif p.memory_bound_side:
        cure = memory_cure
    else:
        cure = compute_cure
    return Distance(
        "below roof", f,
        f"{factor_text(f, BELOW_ROOF_LINE)} below the roof at its AI: overhead and kernel "
        f"efficiency, not AI; "
        f"{cure}. Batching does not close it (it moves the point right, not up)."
        + _launch_split(p, e, machine, step) if f else "-")


# A GPU point lasting longer than this with one launch counted may be a whole step (19a
# N13); a CPU's dispatch floor is no launch per kernel of a step.
LONG_POINT_S = 1e-3


def _launch_split(p: Point, e: Efficiency, machine: Machine | None,
                  step: bool = False) -> str:
    """How much of the measured time the launch (GPU) or dispatch (CPU) floor explains.
    `step`: a whole decode step with one launch assumed, whose launches are not counted, so
    not "negligible" (review 18a F2: seed 004's 15 ms step read "5 us of the 15 ms")."""
    launch = "dispatch overhead" if machine and machine.kind == "cpu" else "launch overhead"
    if step:
        from .retime import STEP_CALLS_HINT

        return (f" One launch assumed (`calls` absent), so the {fmt_seconds(e.launch_s)} "
                f"launch floor counted here is not the step's: a whole step timed as one "
                f"point holds dozens of launches and the host time between them (seed 004: "
                f"about half of such a gap); {STEP_CALLS_HINT}.")
    gpu = not (machine and machine.kind == "cpu")
    if 0 < e.launch_s < 0.01 * p.seconds and p.seconds > LONG_POINT_S and gpu:
        # one launch counted on a point lasting milliseconds: a whole step under another
        # name may hide behind it (review 19a N13: "TPOT b=1" read "all kernel efficiency")
        return (f" If this is one kernel, {launch} is negligible here "
                f"({fmt_seconds(e.launch_s)} of the {fmt_seconds(p.seconds)}); if it is a "
                f"whole step (many launches), set the point's `calls` or meta "
                f"`whole_step: true`.")
    if 0 < e.launch_s < 0.01 * p.seconds:
        return (f" {launch.capitalize()} is negligible here ({fmt_seconds(e.launch_s)} "
                f"of the {fmt_seconds(p.seconds)}): it is all kernel efficiency.")
    if e.launch_s > 0:
        # the launch floor is what the launches take at most, so the work's efficiency
        # lies between the whole time's and the work-only figure (review s21 r3: "the
        # work itself runs at 100%" for a GEMV at 80 % of its roof)
        low = p.floor_s / p.seconds if p.floor_s > 0 else e.efficiency
        runs = (pct(e.efficiency) if pct(low) == pct(e.efficiency) else
                f"{pct(low)} (launches in the time: none) to {pct(e.efficiency)} (all "
                f"{fmt_seconds(e.launch_s)})")
        return (f" Of the {fmt_seconds(p.seconds)}, {launch} explains up to "
                f"{fmt_seconds(e.launch_s)}; the work itself runs at {runs} of the roof "
                f"(kernel efficiency).")
    return ""


def _slope_levers(reuse: bool | str, narrow: str = "") -> tuple[str, str]:
    """(what climbs the slope, with its verb; an aside on what does not). `reuse`: True or
    "tileable" (tiles can still cut its bytes); False or "streams_weights" for a
    weight-streaming op (a GEMV, a decode step, a GEMM of a GEMV's shape or AI, or mostly
    weights at its compulsory AI); "compulsory" for a GEMM whose traffic is already its
    shape's compulsory bytes, weights a minority (advice_tiling.reuse_limit); "stream" for
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
    reading it comes from (weight_traffic.weight_size: meta weight_dtype, a W4A16/AWQ/GPTQ
    name); '' otherwise (the advice offers int4 weights to the same kernels only)."""
    size, src = weight_size(kernel, precision)
    return src if size is not None and size <= 0.5 else ""


def _along_slope(p: Point, reuse: bool | str = True, narrow: str = "") -> Distance:
    """How far left of the ridge the point's AI is (the intensity it lacks)."""
    if p.along_slope > 1:
        levers, aside = _slope_levers(reuse, narrow)
        # figures that keep the AI off its ridge: AI 9.996 under a ridge of 10 read 'AI 10
        # is 1x left of the ridge 10 ... up to 1x more' (sides.py; review s22 r4 F3)
        ai, ridge = ai_apart(p.ai, p.ridge)
        factor = factor_text(p.along_slope)
        return Distance(
            "along slope", p.along_slope,
            f"AI {ai} is {factor} left of the ridge {ridge}: "
            f"the 'not enough arithmetic intensity' part. {levers} "
            f"the slope, up to {factor} more attainable FLOP/s"
            f"{aside}.")
    if p.flop <= 0:
        # A copy/transpose/gather does no FLOP: there is no slope to climb (analysis sets
        # along_slope to 1 for AI 0), only bytes to move or to avoid moving.
        return Distance("along slope", 1.0,
                        "AI 0 (no FLOP: pure data movement): there is no slope to climb; "
                        "its time is bytes / bandwidth, so only moving fewer bytes "
                        "(fusion, smaller dtypes, avoiding the copy) shortens it.")
    ai, ridge = ai_apart(p.ai, p.ridge)   # 'AI 10.004 ... ridge 10', not 'AI 10 ... 10'
    return Distance("along slope", 1.0,
                    f"AI {ai} is at or right of the ridge {ridge}: "
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


def _reuse(kernel: Kernel, p: Point) -> str:
    """What climbs the kernel's slope (_slope_levers), by the rules the advice uses
    (advice_tiling.reuse_limit): "streams_weights" for a weight-streaming op (a GEMV, a
    decode step, a GEMM of a GEMV's shape or AI, review 12a #1), "compulsory" for a GEMM
    at its shape's compulsory AI (review 14b F11); "stream" for a streaming kind or an op
    under 1 FLOP/B of no matrix kind (12a #4) or a pool or resample at any AI, "unknown"
    when that op names no kind at all (review 16a C); "sparse" for an SpMV, "stencil" for
    a stencil; else "tileable"."""
    kind = kernel_kind(kernel)[0]
    if is_sparse(kind) or is_stencil(kind):
        return "sparse" if is_sparse(kind) else "stencil"
    limit = reuse_limit(kind, kernel, p.ai, p.precision)
    if limit != "tileable":
        return limit
    if is_streaming(kind) or is_resample(kind):   # a pool's AI can pass 1 (avg 5x5: 6.25)
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
