"""One kernel at one memory level on a roof: its Point, the bound that classifies it
(memory, compute, overhead, latency), and which level binds a kernel placed at several.
Also the same kernel placed on another roof (held_on, point_on: the report's nominal
column). analysis.analyze places every kernel with analyze_point. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .ceiling import Ceiling, KernelCeiling, Roof
from .display import point_text, pretty
from .gpu_time import gpu_side_time
from .grid_fill import few_blocks, grid_reason
from .held_unit import held_ceiling, top_ceiling
from .kernel import Kernel
from .roofline import attainable, ridge, time_floor

# A kernel is `latency`-bound when it reaches less than this fraction of its attainable
# roof and no launch/dispatch floor explains it (seed 000 §6.2, misreading two). A kernel
# with no FLOP (a copy, a sort) has no FLOP/s to compare: the fraction of the level's
# bandwidth it reaches stands in (a copy at 0.5 % of DRAM bandwidth is no "memory" bound).
LATENCY_FRACTION = 0.10
# Fewer blocks than half the SMs makes a kernel latency-bound only while it also runs below
# what a well-tuned kernel reaches (80 % of its roof, the advice's target, seed 000 §6.4): a
# small grid at 94 % of DRAM is held by DRAM, not by its idle SMs (s21 x3 F2; the GPP
# reduction's 4 blocks on 24 SMs at 16 % stays latency).
IDLE_SMS_FRACTION = 0.80
# A kernel is `overhead`-bound when the calls x dispatch floor is larger than its work
# floor and explains at least this fraction of the measured time (seed 004: RMSNorm). A
# time below calls x the floor does not contain it (a profiler's GPU-side duration, or
# overlapping launches: 1000 calls in 1 ms on a 5 us floor), so the floor is left out
# and the work floor alone decides (sanity.check_launch_floor says so).
OVERHEAD_SHARE = 0.5
# A point this close to its ridge (relative) is on it, and on the ridge compute binds (AI >=
# ridge). Without it, rounding decided the side: a kernel that set both ceilings of a
# lower-bound roof (peak = FLOP/t, bandwidth = bytes/t) read "memory" at DRAM and "compute"
# at L2 from one file.
RIDGE_TOLERANCE = 1e-9


def left_of_ridge(ai: float, ridge: float) -> bool:
    """Whether AI is left of the ridge (the memory-bound side), beyond rounding."""
    return ai < ridge * (1.0 - RIDGE_TOLERANCE)

# A level's point under another level's binding roof (binds_elsewhere): the tables print
# "not binding (DRAM binds)", the JSON "bound": "not binding" with "binding_level": "DRAM"
NOT_BINDING = "not binding"


# slots: two Points a kernel, 37 fields each; without a __dict__ each, whatif's terminal
# report at 100,000 kernels peaks at 551 MB rather than 812 (fixer s26 fB, measured)
@dataclass(frozen=True, slots=True)
class Point:
    """One kernel at one memory level on one roof. kernel is the kernel's name (for
    people: two kernels may share one); kernel_index is its position in the
    Analysis.kernels it was placed for (-1: a point built outside analyze), the link
    Analysis.kernel_of and points_of follow."""

    kernel: str
    precision: str
    unit: str | None
    level: str
    flop: float
    bytes: float
    seconds: float | None
    calls: int
    ai: float
    peak_flop_per_s: float
    bytes_per_s: float
    ridge: float
    attainable_flop_per_s: float
    achieved_flop_per_s: float | None
    percent_of_roof: float | None
    binding: str                 # label of the ceiling that binds at this AI
    bound: str                   # memory | compute | overhead | latency
    floor_s: float               # max(FLOP/P, bytes/B), per all calls
    overhead_floor_s: float | None
    floor_ratio: float | None    # measured / floor
    time_share: float | None
    below_roof: float | None     # distance 1: attainable / achieved (overhead + efficiency)
    along_slope: float           # distance 2: ridge / AI when left of the ridge, else 1
    roof_headroom: float         # distance 3: best peak of its family (float/int) / this peak
    note: str = ""
    kernel_index: int = -1
    # the compute ceiling's own precision ("" on a point built outside analyze_point), and
    # whether that ceiling stands in for one the roof lacks (Roof.compute_for: an fp32
    # kernel held to fp16 tensor); precision and unit alone read "fp32 tensor", a ceiling
    # no GPU has (review 18 leftovers; markdown.precision_cell words it)
    ceiling_precision: str = ""
    fallback: bool = False
    # the ceilings it was judged by, as analyze_point was given them (review s19 r2 F16: a
    # CPU kernel's real-traffic DRAM bytes are judged by "DRAM (real traffic)", not the
    # roof's "DRAM", and `level` alone sent a script to the wrong roof.memory[] entry):
    # their labels (roof.memory[]'s level, the compute label the binding names) and kinds
    # (provenance). "" on a point built outside analyze_point.
    memory_ceiling: str = ""
    memory_ceiling_kind: str = ""
    compute_ceiling: str = ""
    compute_ceiling_kind: str = ""
    # its time is a profiler's GPU-side duration (gpu_time.gpu_side_time), which never holds
    # the CPU launch cost: the launch floor is left out of its class, gain and advice
    gpu_side: bool = False
    # why the grid makes it latency-bound ('grid of 4 blocks x 256 threads on 24 SMs: 17 %
    # of SMs get a block': grid_fill.few_blocks); '' where the grid does not decide it
    grid: str = ""
    # the kind of the roof it was placed on (Roof.kind: nominal, measured, derived): a
    # ceiling's own provenance defaults to nominal on a hand-built measured roof, so both
    # say whether the roof is a datasheet's (above_roof_words); "" outside analyze_point
    roof_kind: str = ""

    # a notebook shows its Analysis row, not 30 fields on one line (repr() keeps them)
    _repr_pretty_ = pretty(point_text)

    @property
    def memory_bound_side(self) -> bool:
        return left_of_ridge(self.ai, self.ridge)


def kernel_key(p: Point) -> int | str:
    """What ties a point to its kernel: its index, else (a point built outside analyze)
    its name."""
    return p.kernel_index if p.kernel_index >= 0 else p.kernel


def primary_points(points: Iterable[Point]) -> dict[int | str, Point]:
    """Each kernel's binding point (the level with the lowest attainable), by kernel_key."""
    best: dict[int | str, Point] = {}
    for p in points:
        cur = best.get(kernel_key(p))
        if cur is None or p.attainable_flop_per_s < cur.attainable_flop_per_s:
            best[kernel_key(p)] = p
    return best


def binds_elsewhere(p: Point, binding: Point | None) -> str | None:
    """The level that binds p's kernel when p reads "latency" only because that other
    level's lower roof holds the kernel (review 16a H: a stencil at 65 % of DRAM had its
    L1 point "latency" at 4.7 %); None when p's own bound stands (memory, compute and
    overhead are what they say at every level). diagnose_evidence.level_bound words it, the JSON
    writes it (schema.point_to_dict)."""
    if p.bound != "latency" or binding is None or binding.level == p.level:
        return None
    return binding.level


def classify(*, ai: float, ridge_ai: float, work_floor_s: float, seconds: float | None,
             overhead_floor_s: float | None, fraction_of_roof: float | None,
             idle_sms: bool = False) -> str:
    """The bound class of one point; see LATENCY_FRACTION and OVERHEAD_SHARE.
    fraction_of_roof: achieved / attainable FLOP/s (for a kernel with no FLOP, achieved
    bytes/s over the level's bandwidth). The launch floor counts only where the measured
    time holds it (overhead_floor_s <= seconds); an untimed point is `overhead` where
    calls x the launch floor exceeds its work floor. idle_sms: a timed kernel whose
    recorded grid leaves more than half the SMs without a block (grid_fill.few_blocks) is
    `latency` below IDLE_SMS_FRACTION of its roof (LATENCY_FRACTION without the grid)."""
    side = "memory" if left_of_ridge(ai, ridge_ai) else "compute"
    if seconds is None:
        # Untimed (counted FLOP and bytes: `rooflab llm`, `ai`): it takes max(work floor,
        # calls x launch floor), the "with launches" floor llm's launch-dominated list
        # uses, so the larger decides (rope in a decode step: 99 ns of work, 22 launches
        # of 5 us = 110 us; review 11b #6)
        if overhead_floor_s is not None and overhead_floor_s > work_floor_s:
            return "overhead"
        return side
    if (overhead_floor_s is not None and overhead_floor_s > work_floor_s
            and OVERHEAD_SHARE * seconds <= overhead_floor_s <= seconds):
        return "overhead"
    frac = fraction_of_roof
    if frac is not None and (frac < LATENCY_FRACTION or (idle_sms and frac < IDLE_SMS_FRACTION)):
        return "latency"
    return side


def analyze_point(roof: Roof, kernel: Kernel, level: str, compute: Ceiling, memory: Ceiling,
                  total_seconds: float, note: str = "", compute_label: str | None = None,
                  kernel_index: int = -1) -> Point:
    """Place one kernel at one memory level on the roof. compute_label names the compute
    ceiling where it binds (default compute.label; a mixed kernel's weighted ceiling says
    "weighted fp16 tensor + fp32 vector"). kernel_index: its position in the analysis."""
    flop = kernel.total_flop
    nbytes = float(kernel.bytes[level])
    peak, bw = compute.value, memory.value
    ai = flop / nbytes if nbytes > 0 else math.inf
    ridge_ai = ridge(peak, bw)
    att = attainable(ai, peak, bw)
    work_floor = time_floor(flop, nbytes, peak, bw)
    overhead_floor = roof.overhead_s * kernel.calls if roof.overhead_s is not None else None
    gpu_side = gpu_side_time(kernel)
    fill = few_blocks(kernel.meta) if kernel.seconds is not None else None
    seconds = kernel.seconds
    achieved = flop / seconds if seconds else None
    frac = achieved / att if achieved is not None and att > 0 else None
    # no FLOP, no FLOP/s: the bandwidth fraction reached is how close to its roof it runs
    reached = (nbytes / seconds / bw if frac is None and flop <= 0 and seconds and bw > 0
               else frac)
    # a GPU-side duration holds no launch cost, so the floor cannot make it overhead-bound
    bound = classify(ai=ai, ridge_ai=ridge_ai, work_floor_s=work_floor, seconds=seconds,
                     overhead_floor_s=None if gpu_side else overhead_floor,
                     fraction_of_roof=reached, idle_sms=fill is not None)
    binding = memory.label if left_of_ridge(ai, ridge_ai) else (compute_label or compute.label)
    return Point(
        kernel=kernel.name, precision=kernel.precision, unit=compute.unit, level=level,
        flop=flop, bytes=nbytes, seconds=seconds, calls=kernel.calls, ai=ai,
        peak_flop_per_s=peak, bytes_per_s=bw, ridge=ridge_ai, attainable_flop_per_s=att,
        achieved_flop_per_s=achieved,
        percent_of_roof=100.0 * frac if frac is not None else None,
        binding=binding, bound=bound, floor_s=work_floor, overhead_floor_s=overhead_floor,
        floor_ratio=seconds / work_floor if seconds and work_floor > 0 else None,
        time_share=seconds / total_seconds if seconds and total_seconds > 0 else None,
        below_roof=att / achieved if achieved else None,
        along_slope=ridge_ai / ai if left_of_ridge(ai, ridge_ai) and ai > 0 else 1.0,
        roof_headroom=top_ceiling(roof, kernel).value / peak,
        note=note, kernel_index=kernel_index, ceiling_precision=compute.precision,
        fallback=_fell_back(kernel, compute),
        memory_ceiling=memory.label, memory_ceiling_kind=memory.provenance,
        compute_ceiling=compute_label or compute.label,
        compute_ceiling_kind=compute.provenance, gpu_side=gpu_side,
        grid=grid_reason(kernel.meta, *fill) if fill is not None and bound == "latency" else "",
        roof_kind=roof.kind,
    )


def _fell_back(kernel: Kernel, compute: Ceiling) -> bool:
    """Whether the ceiling is another precision's or unit's than the kernel's own; a mixed
    kernel's weighted ceiling is its own (its label names the mix)."""
    if kernel.mixed:
        return False
    return compute.precision != kernel.precision or (
        kernel.unit is not None and compute.unit != kernel.unit)


def held_on(roof: Roof, point: Point, kernel: Kernel | None = None) -> KernelCeiling:
    """The compute ceiling `point`'s kernel is held to on another roof (the nominal one
    beside the measured roof that judged it): a kernel with FLOP in several precisions its
    weighted ceiling (kernel_ceiling, as on the judging roof: A100 9e9 fp16 tensor + 1e9
    fp32 is 124.8 TFLOP/s, not fp16 tensor's 312); one precision the unit the judging roof
    held it to. Without the kernel, the point's precision and unit."""
    if kernel is not None and kernel.mixed:
        return held_ceiling(roof, kernel)
    found, note = roof.compute_for(point.precision, point.unit)
    return KernelCeiling(found, found.label, (note,) if note else ())


def point_on(roof: Roof, point: Point, kernel: Kernel) -> Point | None:
    """The same kernel at the same level placed on another roof (its attainable FLOP/s and
    time floor there: the nominal column of the report's record table), with its ceiling
    from held_on; None where that roof has no ceiling for the point's level. No time share:
    it is not part of that roof's analysis."""
    memory = roof.find_memory(point.level)
    if memory is None or kernel.bytes.get(point.level) is None:
        return None
    held = held_on(roof, point, kernel)
    return analyze_point(roof, kernel, point.level, held.ceiling, memory, 0.0,
                         compute_label=held.label, kernel_index=point.kernel_index)

