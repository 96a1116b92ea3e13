"""The cache-aware roofline (CARM, Ilic et al. 2014; Intel Advisor's default CPU view) and the
other readings `--level` picks (review s26 r2 F4). Pure.

The hierarchical roofline (Nsight Compute's, rooflab's default) gives each level its own
point: FLOP / that level's bytes against that level's ceiling. CARM gives a loop one AI,
FLOP / the bytes its loads and stores move between the core and L1, and holds that dot
against every level's ceiling at that AI: the lowest roof above the dot binds. The stencil
of docs/plot.md (2.622e9 FLOP, 2.0975e10 L1 bytes, 0.7556 s; DRAM 42.6 GB/s) reads 3.5 %
of its L1 slope but 65 % of the DRAM slope CARM holds it to, as Advisor says.
"""

from __future__ import annotations

from .ceiling import Ceiling, Roof
from .kernel import Kernel

# nearest the core first (level_order.LEVELS): CARM's bytes are the innermost level's
LEVELS = ("L1", "L2", "L3", "DRAM")
CARM_LEVEL = LEVELS[0]
ALL = "all"


def is_carm(level: str | None) -> bool:
    """Whether `--level LEVEL` asks for the CARM reading (the innermost level's bytes)."""
    return level == CARM_LEVEL


def reading_name(level: str | None) -> str:
    """CARM (L1), per-level (L2, L3, a link), DRAM (the classic roofline), hierarchical
    (all, and the default: each kernel at the level that binds it)."""
    if level is None or level == ALL:
        return "hierarchical"
    if is_carm(level):
        return "CARM"
    return "DRAM" if level == "DRAM" else "per-level"


def reading_words(level: str | None) -> str:
    """One sentence saying which roofline the numbers are read on (no ': ' in it: it is an
    analysis note, and notes read the text before ': ' as a kernel's name)."""
    if level is None:
        return ("hierarchical reading (the default), each kernel judged at the memory level "
                "that binds it hardest (FLOP / that level's bytes against that level's "
                "ceiling); --level L1 gives the cache-aware (CARM) reading")
    if level == ALL:
        return ("hierarchical reading (--level all, Nsight Compute's chart), one row per "
                "kernel and memory level, FLOP / that level's bytes against that level's "
                "ceiling; the level that binds hardest is the one the advice acts on")
    if is_carm(level):
        return ("CARM reading (--level L1, the cache-aware roofline Intel Advisor draws "
                "for CPUs), AI = FLOP / L1 bytes (every load and store between the core "
                "and L1), held to the lowest roof above the kernel's dot at that AI, of "
                "every memory level's ceiling (L1 to DRAM) and its compute ceiling")
    if level == "DRAM":
        return ("DRAM reading (--level DRAM, the classic roofline), AI = FLOP / DRAM bytes "
                "against the DRAM ceiling alone")
    return (f"per-level reading (--level {level}), AI = FLOP / {level} bytes against the "
            f"{level} ceiling alone (one level of the hierarchical roofline)")


def carm_memory(roof: Roof, kernel: Kernel, peak: float) -> tuple[Ceiling | None, str]:
    """The memory ceiling CARM holds the kernel's L1 bytes to, and a note saying which and
    why: at AI = FLOP / L1 bytes each level's roof is min(peak, AI x bandwidth); the lowest
    one at or above the achieved FLOP/s binds (the dot sits under it). Above every roof
    (bytes counted low, or a roof measured low) the highest binds, over 100 %. Untimed, no
    dot picks a roof: the L1 ceiling, the core-side one, judges it. (None, "") where the
    roof has no cache or DRAM ceiling or the kernel no L1 bytes."""
    from ..units import fmt_ai, si

    nbytes = kernel.bytes.get(CARM_LEVEL)
    found = [c for c in (roof.find_memory(lv) for lv in LEVELS) if c is not None]
    if not found or nbytes is None or nbytes <= 0:
        return None, ""
    refused = carm_refusal(roof)
    if refused:   # L1 bytes under the DRAM slope alone: 391 % "of roof" (review s26 v2 F5)
        return None, refused
    flop = kernel.total_flop
    ai = flop / nbytes
    roofs = [(min(peak, ai * c.value), c) for c in found]
    seen = ", ".join(f"{c.level} {si(a, 'FLOP/s')}" for a, c in roofs)
    if not kernel.seconds:
        own = roof.find_memory(CARM_LEVEL) or found[0]
        return own, (f"CARM reading, untimed, so no dot to pick the roof above it; judged "
                     f"against {own.level} {si(own.value, 'B/s')} at AI {fmt_ai(ai)} "
                     f"(roofs there {seen})")
    achieved = flop / kernel.seconds
    above = [(a, c) for a, c in roofs if a >= achieved]
    # ties (compute binds at several levels): the slowest level, the one nearest the dot
    att, c = (min(above, key=lambda r: (r[0], r[1].value)) if above
              else max(roofs, key=lambda r: (r[0], r[1].value)))
    where = ("held by the lowest roof above its dot" if above
             else "above every roof, so held by the highest")
    held = (f"{c.level} {si(c.value, 'B/s')} x AI {fmt_ai(ai)} = {si(att, 'FLOP/s')}"
            if att < peak else f"the compute peak {si(peak, 'FLOP/s')}")
    return c, (f"CARM reading, AI {fmt_ai(ai)} on its L1 bytes, achieved "
               f"{si(achieved, 'FLOP/s')}, {where}, {held} "
               f"(roofs at that AI {seen}){_side_by_side(roof, kernel, peak, achieved)}")


def carm_refusal(roof: Roof) -> str:
    """Why CARM cannot read on this roof, or '': a roof with no L1 ceiling (every catalog
    GPU and CPU: DRAM only) would hold the L1 AI under the DRAM slope alone, a roof far
    below CARM's, and call a cache-friendly kernel "above the roof" (review s26 v2 F5).
    No ': ' before the reason: the analysis reads the text before one as a kernel name."""
    if roof.find_memory(CARM_LEVEL) is not None:
        return ""
    have = ", ".join(c.level for c in roof.memory) or "none"
    return (f"--level L1 (CARM) needs a roof with each memory level's bandwidth, and roof "
            f"'{roof.name}' has no L1 bandwidth (it has {have}); use a probed CPU "
            f"profile (`rooflab probe -o me.json`, --on me.json), an Advisor or ERT import "
            f"(`rooflab specs import`), or an ncu report's recorded peaks, or leave --level "
            f"out for each kernel's binding level")


def _side_by_side(roof: Roof, kernel: Kernel, peak: float, achieved: float) -> str:
    """'; hierarchical reading L1 3.5 %, DRAM 24 % of their own roofs': the per-level
    figures the report gives without --level, beside the CARM one (review s26 r2 F4)."""
    from ..sides import pct_text

    flop, said = kernel.total_flop, []
    for lv in LEVELS:
        c, nbytes = roof.find_memory(lv), kernel.bytes.get(lv)
        if c is not None and nbytes and nbytes > 0:
            att = min(peak, flop / nbytes * c.value)
            if att > 0:
                said.append(f"{lv} {pct_text(100 * achieved / att)}")
    return (f"; hierarchical reading (no --level) {', '.join(said)} of their own roofs"
            if said else "")


def carm_evidence(p, roof: Roof) -> str:
    """A memory-bound CARM point's position in words, or '' for any other point (the
    diagnosis' own words stand). The diagnosis says "held by L1" of a point at L1 and its
    bytes/s as a share of the ceiling that holds it; under CARM the L1 bytes are held by
    another level's roof, and what they move is a share of the L1 bandwidth."""
    from ..sides import ai_apart, factor_text, pct_text
    from ..units import fmt_rate, si

    if (p.level != CARM_LEVEL or p.bound != "memory" or not p.memory_bound_side
            or p.ai <= 0 or not p.memory_ceiling):
        return ""
    ai, ridge = ai_apart(p.ai, p.ridge)
    att = fmt_rate(p.attainable_flop_per_s, p.precision)
    ach = fmt_rate(p.achieved_flop_per_s, p.precision)
    l1 = roof.find_memory(CARM_LEVEL)
    moved = ""
    if p.seconds and l1 is not None and l1.value > 0:
        bps = p.bytes / p.seconds
        moved = (f"; its loads and stores move {si(bps, 'B/s')} = "
                 f"{pct_text(100 * bps / l1.value)} of L1 bandwidth {si(l1.value, 'B/s')}")
    return (f"CARM, AI {ai} FLOP/B on its L1 bytes < ridge {ridge} "
            f"({factor_text(p.ridge / p.ai)} left of it): held by {p.memory_ceiling} at "
            f"{si(p.bytes_per_s, 'B/s')}, the lowest roof above its dot, attainable {att}; "
            f"achieved {ach} = {pct_text(p.percent_of_roof)} of roof{moved}")
