"""Advice by bound and op kind (seed 000 §5, seed 004 "三段距离"), each with a predicted point.

Every piece of advice changes the kernel's FLOP, bytes, ceiling or efficiency in one stated
way and predicts the new point under the roofline model:

    time = calls x overhead_s  +  max(FLOP / P, bytes / B) / efficiency

where `efficiency` is the fraction of the roof the kernel's work reaches now (its work
floor over its measured time minus the launch floor) unless the advice is about efficiency
itself. The speed-up is the old time over the predicted time. Pure: no I/O.

This module picks the rules for a point and is the public face: the rules live in
advice_memory (memory-bound), advice_compute (compute, overhead, latency, quiet machine)
and advice_precision (lower-precision pricing, mixed-precision parts), on advice_core's
shared pieces; import those names from the module that owns them.
"""

from __future__ import annotations

from dataclasses import replace

from ..units import fmt_ai, fmt_seconds, fmt_times
from .advice_above import hold_above_slope
from .advice_calls import hold_call_cost, many_calls, merge_calls_advice
from .advice_compute import (
    GRID_LEVER,
    _quiet_advice,
    compute_advice,
    grid_advice,
    latency_advice,
    overhead_advice,
)
from .advice_core import Advice, Efficiency, above_roof_priced, efficiency_of
from .advice_memory import memory_advice
from .advice_optimizer import optimizer_advice
from .advice_precision import mixed_part_advice
from .advice_tensor_check import TENSOR_CHECK, hold_to_tiles, tensor_check_advice
from .advice_train import comm_advice, is_comm
from .analysis import Point
from .ceiling import Roof
from .held_unit import held_ceiling
from .kernel import Kernel
from .machine import Machine, machine_of, words
from .opkind import is_streaming, is_whole_step, kernel_kind
from .retime import STEP_CALLS_HINT, held_gap_s
from .sanity import check_ai_high
from .sanity_ceilings import roof_threads
from .sanity_counts import check_cache_resident

# Advice predicting at most this speed-up is dropped: a 1 % gain is within timing noise,
# and fusing a launch-bound kernel read 1.00x before its launches were counted (11b #6).
MIN_SPEEDUP = 1.01


def shown_speedup(x: float) -> float:
    """A speed-up at the two decimals the report prints it with ('1.01x')."""
    return float(f"{x:.2f}")


# This module's own public names; the rules and their pieces are imported above from the
# modules that own them (advice_core, advice_compute, advice_memory, advice_precision).
__all__ = ["MIN_SPEEDUP", "RULES", "advise"]


def gap_range(a: Advice, p: Point, e: Efficiency, kernel: Kernel | None = None,
              roof: Roof | None = None) -> Advice:
    """A lever that moves a whole step's AI or roof (opkind.is_whole_step: a decode step,
    TPOT or prefill timed as one point), predicted as a range: from its gap above the
    floor held fixed (launches + new work floor + the old gap: seed 004 Q6, quantization
    moves the point's AI, not the gap below the slope) to the gap scaled with the work (the
    model's usual prediction). The slow end is the figure, both ends are kept
    (seconds_range); the words give both (review 18a F2: int4 on seed 004's 15 ms step,
    4.00x scaled, 1.69x held). With `calls` given the launches are split off and the rest
    of the gap is still held (review 19a N1). A throughput lever (batching) leaves the
    step's bytes alone, so its gap does not matter; below-roof levers close the gap
    itself."""
    gap = held_gap_s(p)
    if (gap is None or e.untimed or a.shrinks == "below roof" or "(throughput)" in a.detail
            or e.efficiency <= 0):
        return a
    work = (a.new_seconds - e.launch_s) * e.efficiency   # the lever's new work floor
    held = e.launch_s + work + gap
    if held <= a.new_seconds * (1 + 1e-3):
        return a
    words = (f"a range, {fmt_times(e.seconds / held)}-{fmt_times(a.speedup)}: "
             f"{fmt_seconds(held)} with the step's {fmt_seconds(gap)} above its floor (the "
             f"gap below the roof) held fixed (seed 004 Q6: it moves the point's AI, not the "
             f"gap below the slope), "
             f"{fmt_seconds(a.new_seconds)} with the gap scaled with the work; "
             f"{step_words(kernel, roof)}")
    return replace(a, new_seconds=held, speedup=e.seconds / held,
                   new_flop_per_s=p.flop / held, detail=f"{a.detail}; {words}",
                   assumption=f"{words}; {a.assumption}",
                   seconds_range=(a.new_seconds, held))


def step_words(kernel: Kernel | None, roof: Roof | None) -> str:
    """What a whole step's launches are known as: its `calls` when given, else the hint to
    give them, on a roof with a launch floor only (review 19a N10: a CPU roof has none)."""
    if kernel is not None and kernel.calls > 1:
        return (f"a whole step timed as one point, its {kernel.calls} launches (`calls`) "
                f"split off and the rest of the gap held")
    if roof is not None and not roof.overhead_s:
        return "a whole step timed as one point"
    return f"a whole step timed as one point, one launch assumed: {STEP_CALLS_HINT}"


def _recount(p: Point, kernel: Kernel, kind: str) -> Advice | None:
    """'Recount FLOP and bytes' (1.00x) for a streaming op whose AI the sanity check calls
    abnormally high (sanity.check_ai_high): every other gain rests on those counts."""
    found = check_ai_high(kernel, (p,))
    if found is None or found.check != "ai_high" or not is_streaming(kind):
        return None   # flop_per_element: an 'elementwise' function's own count (r5 F4)
    e = efficiency_of(p)
    return Advice(
        kernel=p.kernel, action=f"recount FLOP and bytes (AI {fmt_ai(p.ai)} is too high "
                                f"for {'an' if kind[:1] in 'aeiou' else 'a'} {kind} op)",
        detail=found.message, shrinks="below roof", new_ai=p.ai,
        new_flop_per_s=p.achieved_flop_per_s or 0.0, new_seconds=e.seconds, speedup=1.0,
        assumption="no speed-up is predicted: such an op reads and writes each "
                   "element about once, so its bytes, not its FLOP, are its time; "
                   "compute-side advice (parallelism, tensor cores) is left out until "
                   "the counts are fixed (" + found.fix + ")")


RULES = {"memory": memory_advice, "compute": compute_advice, "overhead": overhead_advice,
         "latency": latency_advice}


def advise(p: Point, roof: Roof, kernel: Kernel, machine: Machine | None = None
           ) -> tuple[Advice, ...]:
    """Advice for one kernel's binding point, best predicted speed-up first.

    `machine` says whose levers to name (CPU or GPU); by default it is read off the roof
    (machine_of). The predicted gains do not depend on it, only the wording and which
    levers apply (tensor cores and L2 persistence on a GPU, cache blocking on a CPU).
    """
    e = above_roof_priced(p, efficiency_of(p))
    kind, guessed = kernel_kind(kernel)
    machine = machine if machine is not None else machine_of(roof)
    # The device's own L2 when the host or catalog gave it (a T4 has 4 MiB, not 50 MB).
    l2_bytes = machine.caches.get("L2")
    # many small calls whose time is per-call cost (review r5 F3)
    cost = many_calls(p, roof, machine, kernel)
    if p.bound == "memory":
        items = memory_advice(p, e, roof, kind, l2_bytes, machine, kernel)
    elif p.bound == "overhead":
        items = overhead_advice(p, e, roof, kind, machine, kernel)
    elif p.bound == "latency":   # per-call cost, not latency, holds a many-calls kernel
        items = latency_advice(p, e, roof, kind, machine, kernel=kernel,
                               calls_bound=cost is not None, l2_bytes=l2_bytes)
    else:   # the kernel's FLOP by precision: lower precision moves only its dominant part
        items = RULES[p.bound](p, e, roof, kind, machine, kernel=kernel)
    if is_comm(kernel):   # a training step's collectives: link levers (advice_train)
        items = comm_advice(p, e, kernel)
    # a training step's optimizer pass: fewer passes per token, fewer parameters per device
    items = [*items, *optimizer_advice(p, e, kernel)]
    # a matrix op under the fp32 CUDA-core rate: is it on tensor cores at all? (s21 r3 F7)
    check = tensor_check_advice(p, e, roof, kind, machine, kernel)
    if check is not None:
        items = hold_to_tiles(items, p, e, kind, kernel, words(machine, "parallel")[0])
        items.append(check)
    grid = grid_advice(p, e, kernel) if p.bound in ("memory", "compute") else None
    if grid is not None:   # it leads (the sort below), coalescing after it (r4 F3)
        items.append(grid)
    if p.bound in ("compute", "latency"):
        held = held_ceiling(roof, kernel)
        mixed = mixed_part_advice(p, e, roof, held)
        if mixed is not None:
            items.append(mixed)
    if cost is not None:
        # its time is per-call cost (review r5 F3): merging the calls is the lever, threads
        # cannot beat their own spawn, and a lever on the work keeps the per-call cost
        resident = check_cache_resident(kernel, p, machine) is not None
        items = [merge_calls_advice(p, cost, machine)] + [
            hold_call_cost(a, p, e, cost, resident) for a in items if a.shrinks != "below roof"]
    if kernel.provenance.get("bytes") == "derived":
        # rooflab's own counts (`ai`, `llm`) are compulsory traffic already: each byte
        # moves once, so better tiling cannot cut them (a decode GEMV reads each weight
        # once whatever the tiles); only a profiler's counted bytes hold reuse misses.
        tile = words(machine, "tile")[0]
        items = [a for a in items if a.action != tile]
    # compared as printed ('1.01x'): 1.0102 read "1.01x" and was kept (review s21 r3 F10)
    items = [a for a in items if shown_speedup(a.speedup) > MIN_SPEEDUP]
    # counted bytes faster than their level's roof: measure them before the AI levers
    items = hold_above_slope(p, e, items)
    recount = _recount(p, kernel, kind)
    if recount is not None:
        # Its FLOP or bytes are miscounted: a streaming op's time is its bytes, so nothing
        # on the compute side (parallelism, tensor cores, precision for speed) is real for it
        # (review 12a #3: 109x "expose parallelism" and "bf16 on tensor cores" for an add).
        items = [recount] + [a for a in items if p.memory_bound_side
                             and a.shrinks == "along slope" and not a.action.startswith("use ")]
    if guessed:
        # The kind decides which levers apply (no tiling for an elementwise op, batching for
        # a GEMV): say where it came from, so a wrong guess is seen and can be overridden.
        why = (f"; op kind '{kind}' read off the name '{kernel.name}' (give meta.op, a CSV "
               f"'op' column or a JSON 'op' field to set it)")
        items = [replace(a, assumption=a.assumption + why) for a in items]
    if roof_threads(roof) == 1:
        # a one-thread roof prices one core: "on every core" was not what was priced (the
        # 4.24x of a strided sum is the one-thread 80 %; review r5 F6d)
        items = [replace(a, action=a.action.replace(" on every core", "")) for a in items]
    if is_whole_step(kernel):   # a whole step timed as one point: a range (18a F2, 19a N1)
        items = [gap_range(a, p, e, kernel, roof) for a in items]
    # A latency-bound kernel's lever is parallelism or fewer synchronisations (seed 000 §6.2
    # 误判二): it leads, the AI-raising levers (held to the headroom) follow (review 18a F1).
    # A grid leaving SMs without a block leads whatever the bound: no lever inside the
    # kernel reaches the idle SMs (review s18 r4 F3).
    items = sorted(items, key=lambda a: (a.action != GRID_LEVER, a.action != TENSOR_CHECK,
                                         p.bound == "latency" and a.shrinks != "below roof",
                                         -a.speedup))
    quiet = _quiet_advice(p, e, kernel, machine)
    if quiet is None:
        return tuple(items)
    # re-timing leads; every other prediction rests on a time (or roof) it says is unsure
    doubt = f"; uncertain: {quiet.detail}"
    return (quiet, *(replace(a, assumption=a.assumption + doubt) for a in items))
