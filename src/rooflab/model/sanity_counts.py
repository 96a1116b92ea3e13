"""Sanity checks on a kernel's counts: AI too high for its op kind (writes left out, FLOP
counted twice), AI too low (cache traffic counted as DRAM), and DRAM bytes that a CPU's
last-level cache serves instead (cache-resident). Pure: no I/O.
"""

from __future__ import annotations

from ..units import fmt_ai, fmt_fraction, fmt_pct, fmt_seconds, fmt_times, si
from .above_roof_words import cache_reuse_cause, nominal_memory
from .ceiling import Roof
from .element_dtype import element_bytes
from .kernel import Kernel
from .machine import Machine
from .opkind import is_streaming, kernel_kind, kind_word, name_words
from .placement import Point
from .provenance import has_counter_bytes
from .sanity_finding import ABOVE_TOLERANCE, Finding, kind_of

# The most AI a correctly counted streaming op (opkind.is_streaming) reaches, so above it
# the counts are wrong (check_ai_high). An elementwise op, a norm or a softmax reads and
# writes each element once for a few FLOP: y = x + 1 in fp16 is 0.25, an fp16 layernorm
# (7 FLOP per 2 + 2 bytes) 1.75, an fp8 one 3.5. The highest is a GEMV of int4 weights
# (weight-only W4A16 decode): 2 FLOP per 0.5-byte weight = 4, 3.88 with GPTQ's fp16 scale
# per 128 weights (seed 004's W4A16 lm_head: 3.876). A 2- or 3-bit GEMV (llama.cpp Q2_K,
# Q3_K: ~2.6 and ~3.4 bits a weight, AI ~6 and ~4.7) passes it and is flagged wrongly.
STREAMING_MAX_AI = 4.0
# Kinds that name no op, only the shape of the work ("reads and writes each element once"):
# their FLOP per element is whatever the function does. A 64-step Horner polynomial is
# elementwise at AI 8 in fp64 (128 FLOP per 16 B), GELU-tanh, erf and exp series at 1-10
# (review r5 F4: ai_high took its correct hand count for a miscount and dropped the fp32
# lever, measured 2.01x). A named op (add, mul, exp, relu: ELEMENTWISE_OPS), by meta.op or
# by a word of its name, has the few FLOP per element rooflab's rule counts, and counted
# FLOP (torch's count, a profiler's) are that rule's or the hardware's: a high AI stays a
# miscount there.
GENERIC_ELEMENTWISE = ("elementwise", "activation")
# FLOP provenances that are rooflab's or a tool's count, not the user's own
COUNTED_FLOP = ("counted", "derived", "measured")


def check_ai_high(kernel: Kernel, points: tuple[Point, ...]) -> Finding | None:
    """AI too high for what the kernel is: bytes missing (writes) or FLOP overcounted. The
    kind is meta's, else the one its name says (kernel_kind, as the advice reads it: seed
    000's own table names its kernels elementwise_add, softmax; review 12a #3)."""
    kind, guessed = kernel_kind(kernel)
    if not is_streaming(kind):
        return None
    worst = max((p for p in points if p.ai == p.ai), key=lambda p: p.ai, default=None)
    if worst is None or worst.ai <= STREAMING_MAX_AI:
        return None
    if (not guessed and kind_word(kind) in GENERIC_ELEMENTWISE
            and str(kernel.provenance.get("flop", "given")) not in COUNTED_FLOP
            and not _names_an_op(kernel.name)):
        return _many_flop(kernel, worst, kind)
    return Finding(
        kernel=kernel.name, check="ai_high", severity="warning", level=worst.level,
        message=(f"AI {fmt_ai(worst.ai)} FLOP/B at {worst.level} is abnormally high for "
                 f"{_article(kind)} {kind} op ("
                 + (f"kind read off the name '{kernel.name}'; " if guessed else "")
                 + "it reads and writes each element about once: AI <~ 1; "
                   "y = x + 1 in fp16 is 0.25)"),
        causes=("bytes missing: the writes were not counted (seed 004: y = x + 1 moves "
                "4n bytes, not 2n; leaving out writes doubles AI)",
                "FLOP overcounted: an FMA counted as 2 and then doubled again, or "
                "index/address arithmetic counted as FLOP"),
        fix="count reads + writes of every input and output; count one multiply-add as 2 FLOP, "
            "once (check the SASS: fadd + fmul + 2 x ffma)",
    )


def _names_an_op(name: str) -> bool:
    """Whether a kernel's name names a few-FLOP op ('add', 'elementwise_add', 'relu_out'):
    rooflab's rule then gives its FLOP per element, and a high AI is a miscount."""
    return any(is_streaming(w) and kind_word(w) not in GENERIC_ELEMENTWISE
               for w in name_words(name))


def _many_flop(kernel: Kernel, worst: Point, kind: str) -> Finding:
    """An op meta calls only 'elementwise' whose own FLOP count gives a high AI: a note,
    not a miscount (GENERIC_ELEMENTWISE): right where the function does that many FLOP
    per element; the compute levers stand."""
    size = element_bytes(kernel, worst.precision)
    per = (f"{worst.ai * size:.3g} FLOP per {size:g}-byte element moved" if size else
           f"{fmt_ai(worst.ai)} FLOP per byte moved")
    return Finding(
        kernel=kernel.name, check="flop_per_element", severity="info", level=worst.level,
        message=(f"AI {fmt_ai(worst.ai)} FLOP/B at {worst.level} is high for "
                 f"{_article(kind)} {kind} op: right where it does {per} (a polynomial, an "
                 f"erf/exp series, an activation chain: 64 FMAs per fp64 element read and "
                 f"written is AI 8); for a few FLOP per element, the writes were not "
                 f"counted"),
        causes=("a function of many FLOP per element (the count is then right)",
                "bytes missing: the writes were not counted (seed 004: y = x + 1 moves "
                "4n bytes, not 2n; leaving out writes doubles AI)"),
        fix="name the op (meta.op: add, mul, exp ...) to have a few-FLOP op's count checked")


def _article(word: str) -> str:
    """'an' before a vowel sound ('an elementwise op', 'an rmsnorm op'), else 'a'."""
    return "an" if word[:1] in "aeiou" or word.startswith("rms") else "a"


# Where DRAM and cache bytes come from, by machine kind (ncu metrics on a GPU; the memory
# controller's counters on a CPU: perf's uncore IMC events, likwid's MEM group).
COUNTERS = {
    "gpu": ("take DRAM bytes from dram__bytes.sum (read + write) and L2 from lts__t_bytes.sum",
            "distinguish DRAM (dram__bytes) from L2 (lts__t_bytes) metrics",
            "L2 traffic counted as DRAM (lts__t_bytes taken for dram__bytes)"),
    "cpu": ("take DRAM bytes from the memory controller's counters (perf stat uncore_imc "
            "cas_count_read/write, or likwid-perfctr -g MEM) and cache traffic from the "
            "L2/L3 miss counters",
            "distinguish DRAM bytes (memory-controller counters) from cache traffic (L2/L3 "
            "fills)",
            "cache traffic counted as DRAM (L2/L3 fills taken for memory-controller bytes)"),
}
COUNTERS[""] = COUNTERS["gpu"]
COUNTERS["accelerator"] = COUNTERS["gpu"]


def check_ai_low(kernel: Kernel, points: tuple[Point, ...],
                 machine: Machine | None = None, roof: Roof | None = None) -> Finding | None:
    """AI too low: more DRAM bytes than L2 traffic, or bytes moving faster than DRAM can."""
    fix_split, fix_level, cause = COUNTERS.get(machine.kind if machine else "", COUNTERS[""])
    dram = kernel.bytes.get("DRAM")
    l2 = kernel.bytes.get("L2")
    if dram and l2 and dram > l2 * (1 + ABOVE_TOLERANCE):
        return Finding(
            kernel=kernel.name, check="ai_low", severity="warning", level="DRAM",
            message=(f"{si(dram, 'B')} counted as DRAM but only {si(l2, 'B')} as L2: every "
                     f"DRAM byte passes through L2, so DRAM AI "
                     f"{fmt_ai(kernel.total_flop / dram)} is abnormally low"),
            causes=(cause, "an FMA counted once (AI halves: 2 FLOP per multiply-add)"),
            fix=fix_split,
        )
    for p in points:
        if p.level == "DRAM" and p.seconds and p.bytes / p.seconds > p.bytes_per_s * 1.5:
            if nominal_memory(p):
                return _ai_low_nominal(kernel, p, machine, roof, fix_level, cause)
            return Finding(
                kernel=kernel.name, check="ai_low", severity="warning", level="DRAM",
                message=(f"{si(p.bytes, 'B')} in {fmt_seconds(p.seconds)} is "
                         f"{si(p.bytes / p.seconds, 'B/s')}, "
                         f"{fmt_times(p.bytes / p.seconds / p.bytes_per_s)} the DRAM bandwidth: "
                         f"either the DRAM roof is too low for it or the DRAM bytes are "
                         f"too many (AI {fmt_ai(p.ai)} too low)"),
                # an exact count of a 4x-LLC read-modify-write stream (np.add(o, y, out=o):
                # no write-allocate) ran at 1.6x a loaded probe's DRAM roof: the roof was
                # the low side, not the bytes (review r5 F7); a working set that fits a
                # cache is served from it, which leads then (review s18 r2 F3: a 16 kB dot)
                causes=resident_cause(kernel, p, machine, roof) + (
                        "the measured DRAM roof is too low (a loaded probe; a read-modify-"
                        "write stream moves no write-allocate reads, so it beats the "
                        "triad-derived ceiling)",
                        "L2 traffic counted as DRAM (cache hits counted as memory traffic)",
                        "an FMA counted once (AI halves)"),
                fix=fix_level,
            )
    return None


def _ai_low_nominal(kernel: Kernel, p: Point, machine: Machine | None, roof: Roof | None,
                    fix_level: str, cause: str) -> Finding:
    """check_ai_low's finding on a datasheet DRAM roof: nothing was measured, so the roof is
    not the low side and no loaded probe is to blame; the counted bytes are not DRAM
    traffic (cache reuse: review s21 r3 F4, a stencil's 1 GB in 200 us on an A100)."""
    rate = p.bytes / p.seconds
    return Finding(
        kernel=kernel.name, check="ai_low", severity="warning", level="DRAM",
        message=(f"{si(p.bytes, 'B')} in {fmt_seconds(p.seconds)} is {si(rate, 'B/s')}, "
                 f"{fmt_times(rate / p.bytes_per_s)} the DRAM bandwidth (the datasheet's "
                 f"{si(p.bytes_per_s, 'B/s')}, which no DRAM exceeds): the DRAM bytes are "
                 f"too many (AI {fmt_ai(p.ai)} too low)"),
        causes=resident_cause(kernel, p, machine, roof) + (
            cache_reuse_cause("DRAM", fix_level), cause,
            "an FMA counted once (AI halves)"),
        fix=fix_level,
    )


def resident_cause(kernel: Kernel, p: Point, machine: Machine | None,
                   roof: Roof | None = None) -> tuple[str, ...]:
    """The cause "served from a cache" where a CPU kernel's bytes (not counters') per call
    fit one (smallest_cache_holding), as check_cache_resident judges, with that level's
    ceiling on `roof` and the point's rate against it; () otherwise. Above the DRAM roof it
    leads (review s18 r2 F3: a 16 kB dot at 2x a loaded probe's DRAM roof was blamed on the
    roof, while it fits the L1 and moved 41 % of the L1's 39 GB/s)."""
    if machine is None or machine.kind != "cpu" or has_counter_bytes(kernel.provenance):
        return ()
    ws = working_set_of(kernel, p)
    held = smallest_cache_holding(machine, ws)
    if held is None or p.level == held[0]:
        return ()
    level = held[0]
    rate = p.bytes / p.seconds if p.seconds else None
    ceiling = roof.find_memory(level) if roof is not None else None
    within = ""
    if ceiling is not None and ceiling.value > 0:
        within = f"; the {level} ceiling is {si(ceiling.value, 'B/s')}"
        if rate is not None:
            share = rate / ceiling.value
            within = (f"; its {si(rate, 'B/s')} is {fmt_fraction(share)} of the {level} ceiling "
                      f"{si(ceiling.value, 'B/s')}"
                      + (", so the roof is not the low side" if share <= 1 + ABOVE_TOLERANCE
                         else ""))
    return (f"the working set ({si(ws, 'B')} per call) fits in the {level} "
            f"({si(held[1], 'B')}), so repeated calls are served from it, not from "
            f"{p.level}{within}",)


# The share of the last-level cache a working set may fill and still count as staying
# there between calls (report's finding and bench's flag share it). Not all of it: the LLC
# also holds code, stacks, page tables and other processes' lines, and a loop sweeping a
# set as large as an LRU-like cache evicts each line before it comes round again, so a set
# the whole LLC's size (sort_fp64's 2 x 8 B x 2^21 = 32 MiB on a 32 MiB L3) is not
# cache-resident and its DRAM floor stands. Three quarters, not half: a user's 24 MB numpy
# add (72 % of a 32 MiB Zen 4 L3) was measured at 0.17x its DRAM floor, i.e. served from
# the L3 (tests/test_measure_byte_levels.py).
LLC_RESIDENT_SHARE = 0.75
# A kernel's own timing noise (interquartile range / median) above this is flagged noisy


def working_set_of(kernel: Kernel, p: Point) -> float:
    """One call's working set: the kernel's meta 'working_set_bytes' when it states one, else
    at a DRAM point its bytes per call (compulsory traffic: each byte read once, written
    once, so at least the working set; a rooflab.measure kernel's count)."""
    stated = float(kernel.meta.get("working_set_bytes", 0.0) or 0.0)
    if stated or p.level != "DRAM" or p.calls <= 0:
        return stated
    return p.bytes / p.calls


def cache_resident(p: Point, working_set: float, llc: float | None) -> bool:
    """Whether a DRAM point's working set fits in the last-level cache, so repeated calls
    reuse it there and the DRAM floor does not bind. Only where the DRAM slope binds: a
    compute-bound kernel's floor ignores bytes anyway (`rooflab bench`'s cache-resident
    flag and report's finding share this rule)."""
    return (bool(llc) and p.level == "DRAM" and p.memory_bound_side
            and 0 < working_set <= float(llc))


def last_level_cache(machine: Machine | None) -> tuple[str, float] | None:
    """The largest cache level the host (or catalog) gave, and its size; None when unknown."""
    caches = {lv: float(v) for lv, v in (machine.caches if machine else {}).items() if v}
    if not caches:
        return None
    level = max(caches, key=lambda lv: caches[lv])
    return level, caches[level]


def smallest_cache_holding(machine: Machine | None, working_set: float,
                           share: float = LLC_RESIDENT_SHARE) -> tuple[str, float] | None:
    """The smallest cache level (and its size) that holds `working_set` within `share` of
    its size: where repeated calls are served from (review s18 r2 F3: a 16 kB dot fits
    L1, not only the L3); None when none does or no sizes are known."""
    caches = sorted(((float(v), lv) for lv, v in (machine.caches if machine else {}).items()
                     if v), key=lambda c: c[0])
    return next(((lv, size) for size, lv in caches if 0 < working_set <= size * share), None)


def check_cache_resident(kernel: Kernel, p: Point,
                         machine: Machine | None = None) -> Finding | None:
    """A timed CPU kernel whose DRAM bytes per call fit in the last-level cache: repeated
    calls are served from L2/L3, so its DRAM point sits at or above the roof (a 2.4 MB
    triad at 105-200 % of a Zen 4's DRAM roof) and no DRAM lever applies. DRAM bytes
    counted by hardware counters (ncu, rocprof, perf stat, likwid-perfctr; provenance
    "counted", or the old "measured") are real traffic at the memory controller, whatever
    the working set, and a GPU's DRAM counts come from its profiler or from compulsory
    counts of a whole model (`rooflab llm`), so only CPU roofs and bytes given or derived
    (a user's count, `rooflab.measure`'s, the zoo's) are judged."""
    if (p.seconds is None or kind_of(machine) != "cpu"
            or has_counter_bytes(kernel.provenance)):
        return None
    llc = last_level_cache(machine)
    ws = working_set_of(kernel, p)
    if llc is None or not cache_resident(p, ws, llc[1] * LLC_RESIDENT_SHARE):
        return None
    at = f" ({fmt_pct(p.percent_of_roof)} of the DRAM roof)" if p.percent_of_roof else ""
    # the smallest level that holds it is the one it is served from (16 kB: L1, not L3)
    level, size = smallest_cache_holding(machine, ws) or llc
    return Finding(
        kernel=kernel.name, check="cache_resident", severity="warning", level=p.level,
        message=(f"cache-resident: {si(ws, 'B')} per call fits in the {level} "
                 f"({si(size, 'B')} on this host, {fmt_fraction(LLC_RESIDENT_SHARE)} of which a "
                 f"working set keeps between calls), so repeated calls are served from the "
                 f"caches and the DRAM floor does not bind{at}"),
        causes=("the timing loop calls the kernel again and again on the same data, which "
                "stays in cache after the first call",),
        fix=("give bytes at L2/L3 (the level the data is served from) or a larger size "
             "(a working set > 4x the last-level cache)"))

