"""One rocprof dispatch's counters -> FLOP, bytes and seconds (Counts), by rocprof-compute's
roofline formulas (../shared/design/FACTS.md, "rocprof-compute"):

    vector FLOP (p = F16, F32, F64) = lanes x (ADD_p + MUL_p + 2 x FMA_p + TRANS_p)
                                      from SQ_INSTS_VALU_<op>_<p>  (lanes per wavefront:
                                      the file's wave size, else 64)
    matrix FLOP = 512 x SQ_INSTS_VALU_MFMA_MOPS_<p>          (p = F8, F16, BF16, F32, F64, I8)
    L1  bytes   = line x TCP_TOTAL_CACHE_ACCESSES
    L2  bytes   = line x TCP_TCC_READ_REQ + 64 x (TCP_TCC_WRITE_REQ
                  + TCP_TCC_ATOMIC_WITH_RET_REQ + TCP_TCC_ATOMIC_WITHOUT_RET_REQ)
                  or, without those, 128 x TCC_REQ      (its speed-of-light "L2 Cache BW")
                  line = 64 B (MI200), 128 B on MI300 (told by TCC_BUBBLE or the
                  TCC_EA0_ spelling in the file, or by the device named: arch_words)
    HBM bytes   (rocprof_dram.py; gfx950 by its RDREQ_64B/_128B counters there)
                = 32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B)
                + 64 x WRREQ_64B + 32 x (WRREQ - WRREQ_64B)   from TCC_EA(0)_RDREQ/WRREQ;
                  on MI300 (gfx942) TCC_BUBBLE counts the 128-B reads among RDREQ:
                  reads = 128 x BUBBLE + 64 x (RDREQ - BUBBLE - RDREQ_32B) + 32 x RDREQ_32B;
                  a missing split counter counts as 0 (reads 64 B, writes 32 B) with a note;
                  a counter that is not a number drops the level (never 0 bytes);
                  without TCC_EA counters, 1024 x (FETCH_SIZE + WRITE_SIZE): rocprof's
                  derived metrics, the same formula in KiB (rocprofv3: FetchSize, WriteSize)
    time        = EndNs - BeginNs (rocprof v1), End_Timestamp - Start_Timestamp (v2/v3,
                  rocprof-compute), or DurationNs

(ROCm/rocprofiler-compute: src/utils/roofline_calc.py `calc_ai`; for MI300 the gfx942
panels, src/rocprof_compute_soc/analysis_configs/gfx942/0200_system-speed-of-light.yaml and
1600_L1_cache.yaml, whose 128-B lines calc_ai does not apply yet.)

The file layouts these counters come from are read in rocprof.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from .aggregate import Launch
from .ncu_metrics import Counts
from .rocprof_arch import ARCH_NOTE, ea_spelled, mfma_note, read_as, spelled_mi300
from .rocprof_dram import dram_bytes

VECTOR = {"F16": "fp16", "F32": "fp32", "F64": "fp64"}
MATRIX = {"F8": "fp8", "F16": "fp16", "BF16": "bf16", "F32": "fp32", "F64": "fp64",
          "I8": "int8"}
# L1->L2 requests, the L2 traffic of rocprof-compute's roofline (read first)
TCP_TCC = ("TCP_TCC_READ_REQ", "TCP_TCC_WRITE_REQ", "TCP_TCC_ATOMIC_WITH_RET_REQ",
           "TCP_TCC_ATOMIC_WITHOUT_RET_REQ")


def _spellings(name: str) -> tuple[str, ...]:
    """A counter's spellings, in the order they are preferred: rocprof v1 names it bare,
    rocprof-compute with `_sum`, MI300 (and rocprofv3) TCC_EA0_ for TCC_EA_."""
    ea0 = name.replace("TCC_EA_", "TCC_EA0_")
    return tuple(dict.fromkeys((name, f"{name}_sum", ea0, f"{ea0}_sum")))


# every counter the formulas read, by canonical name
_NAMES = (*(f"SQ_INSTS_VALU_{op}_{p}" for op in ("ADD", "MUL", "FMA", "TRANS") for p in VECTOR),
          *(f"SQ_INSTS_VALU_MFMA_MOPS_{p}" for p in MATRIX),
          "TCC_EA_RDREQ", "TCC_EA_RDREQ_32B", "TCC_EA_WRREQ", "TCC_EA_WRREQ_64B", "TCC_BUBBLE",
          "TCC_EA_RDREQ_64B", "TCC_EA_RDREQ_128B",   # gfx950's reads by size
          *TCP_TCC, "TCP_TOTAL_CACHE_ACCESSES", "TCC_REQ", "FETCH_SIZE", "WRITE_SIZE")
# rocprof's derived HBM metrics, as rocprofv3 (rocprofiler-sdk) names them too
_ALIASES = {"FETCH_SIZE": ("FetchSize",), "WRITE_SIZE": ("WriteSize",)}
# spelling -> (canonical name, preference): built once, so a dispatch's counters are
# renamed by one pass over its keys (a 100,000-dispatch file once built 4 spellings with
# str.replace 65 times a dispatch, a third of the read: review r5 F1)
_SPELLING = {key: (name, rank) for name in _NAMES
             for rank, key in enumerate((*_spellings(name), *_ALIASES.get(name, ())))}


@lru_cache(maxsize=64)
def _plan(keys: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...],
                                          tuple[tuple[str, tuple[str, ...]], ...]]:
    """Where each counter of a dispatch with these metric names is: (canonical name, the
    one spelling present) and (canonical name, the spellings present, preferred first). A
    file's dispatches share their names, so this runs about once per file."""
    present: dict[str, list[tuple[int, str]]] = {}
    for key in keys:
        hit = _SPELLING.get(key)
        if hit is not None:
            present.setdefault(hit[0], []).append((hit[1], key))
    return (tuple((name, ks[0][1]) for name, ks in present.items() if len(ks) == 1),
            tuple((name, tuple(k for _, k in sorted(ks)))
                  for name, ks in present.items() if len(ks) > 1))


def canonical(m: Mapping[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """The formulas' counters of one dispatch under their canonical names (c): a counter's
    value under the first of its spellings that holds a number; nan when the file has the
    counter but not as a number (`n/a`, empty, `nan`: parse_number's nan); absent when the
    file lacks it. And those that are numbers (num: num.get(name) is None when a counter is
    absent or not a number); the same dict when all are, as they almost always are."""
    single, several = _plan(tuple(m))
    c = {name: m[key] for name, key in single}
    for name, keys in several:
        c[name] = next((v for k in keys if (v := m[k]) == v), math.nan)
    total = sum(c.values())   # nan when a value is (a count is never -inf)
    return c, (c if total == total else {name: v for name, v in c.items() if v == v})


# a clock reading, not a time since the dispatch began: rocprof's timestamps are ns of the
# system clock (since boot or 1970), past 1e12 (17 minutes) on any running machine
_CLOCK_NS = 1e12


def _seconds(m: Mapping[str, float]) -> float | None:
    """A timestamp of 0 beside a clock reading is one not recorded (rocprofv2's file plugin
    writes Start_Timestamp 0, End 140469300947216 in ROCm's own docs: once a 39-hour
    kernel, review r9 F5), and an end of 0 is never an end: no time. A 0 begin before a
    small end is a file written with times from 0 (hand-made ones are), and is kept."""
    for begin, end in (("BeginNs", "EndNs"), ("Start_Timestamp", "End_Timestamp")):
        b, e = m.get(begin), m.get(end)
        if b is not None and e is not None and b == b and e == e:
            if e == 0 or (b == 0 and e >= _CLOCK_NS):
                return None
            return (e - b) * 1e-9
    d = m.get("DurationNs")
    return d * 1e-9 if d is not None and d == d else None


def _unrecorded(m: Mapping[str, float]) -> str:
    """' (Start_Timestamp 0: not recorded)' when a timestamp of 0 is why there is no time."""
    zero = next((k for k in ("BeginNs", "EndNs", "Start_Timestamp", "End_Timestamp")
                 if m.get(k) == 0), None)
    return f" ({zero} 0: not recorded)" if zero else ""


def _negative_stamp(m: Mapping[str, float]) -> str:
    """'BeginNs -5000' for the first timestamp below 0, else '' (per dispatch: lookups only)."""
    get = m.get
    if min(get("BeginNs", 0.0), get("EndNs", 0.0), get("Start_Timestamp", 0.0),
           get("End_Timestamp", 0.0)) >= 0:
        return ""
    return next((f"{k} {m[k]:.0f}" for k in ("BeginNs", "EndNs", "Start_Timestamp",
                                             "End_Timestamp") if get(k, 0.0) < 0), "")


def _time_words(m: Mapping[str, float]) -> str:
    """The timestamps a dispatch's time came from, as 'EndNs 1000 < BeginNs 2000'."""
    for begin, end in (("BeginNs", "EndNs"), ("Start_Timestamp", "End_Timestamp")):
        b, e = m.get(begin), m.get(end)
        if b is not None and e is not None and b == b and e == e:
            sign = "<" if e < b else "=" if e == b else ">"
            return f"{end} {e:.0f} {sign} {begin} {b:.0f}"
    return f"DurationNs {m.get('DurationNs', math.nan):g}"


def _split_problem(num: Mapping[str, float], mi300: bool | str | None = None) -> str:
    """Why the HBM split counters cannot be of one dispatch ('' when they can): the 32-B
    reads (and MI300's 128-B TCC_BUBBLE reads) are a part of TCC_EA_RDREQ, the 64-B writes
    a part of TCC_EA_WRREQ. More parts than the whole made the formula's other term
    negative: RDREQ_32B 200 > RDREQ 100 gave 32 x 200 + 64 x (100 - 200) = 6 400 B. The
    counters are named as the GPU the file is read as spells them (mi300: read_as's
    answer; TCC_EA0_ on MI300, s36 O)."""
    get = num.get
    rd, rd32 = get("TCC_EA_RDREQ"), get("TCC_EA_RDREQ_32B")
    wr, wr64 = get("TCC_EA_WRREQ"), get("TCC_EA_WRREQ_64B")
    big = get("TCC_BUBBLE") or 0.0
    ea = {n: ea_spelled(n, mi300) for n in ("TCC_EA_RDREQ", "TCC_EA_RDREQ_32B",
                                             "TCC_EA_WRREQ", "TCC_EA_WRREQ_64B")}
    why = ("; these counts are not of one dispatch (counters joined from different runs "
           "or passes?): collect them together")
    if rd is not None and (rd32 or 0.0) + big > rd:
        parts = f"{ea['TCC_EA_RDREQ_32B']} {rd32 or 0:g}" + (f" + TCC_BUBBLE {big:g}"
                                                              if big else "")
        return f"{parts} > {ea['TCC_EA_RDREQ']} {rd:g}, the reads they are a part of{why}"
    if wr is not None and wr64 is not None and wr64 > wr:
        return (f"{ea['TCC_EA_WRREQ_64B']} {wr64:g} > {ea['TCC_EA_WRREQ']} {wr:g}, the "
                f"writes it is a part of{why}")
    return ""


# the counters of each level; one that is in the file but not a number makes the level
# unknown for that dispatch (never 0: a kernel whose reads are unknown is not write-only)
_LEVEL_COUNTERS = {
    "DRAM": ("TCC_EA_RDREQ", "TCC_EA_RDREQ_32B", "TCC_EA_WRREQ", "TCC_EA_WRREQ_64B",
             "TCC_BUBBLE", "TCC_EA_RDREQ_64B", "TCC_EA_RDREQ_128B"),   # the last two: gfx950
    "L2": TCP_TCC,
    "L1": ("TCP_TOTAL_CACHE_ACCESSES",),
}


def _dram_counters(c: Mapping[str, float]) -> tuple[str, ...]:
    """The counters the DRAM level is read from: FETCH_SIZE / WRITE_SIZE only without any
    TCC_EA request counter (an n/a FETCH_SIZE beside the requests drops nothing)."""
    raw = _LEVEL_COUNTERS["DRAM"]
    requests = (*raw[:4], *raw[5:])   # all but TCC_BUBBLE
    return raw if any(n in c for n in requests) else (*raw, "FETCH_SIZE", "WRITE_SIZE")


def _bytes(c: Mapping[str, float], num: Mapping[str, float], mi300: bool = False,
           said: tuple = (None, True)) -> tuple[dict[str, float], dict[str, str], list[str]]:
    """Bytes by level (c, num: canonical()), the levels whose counts are unknown ({level: why}:
    a counter in the file but not a number; no bytes for them),
    and notes on assumed request sizes. MI300 (gfx942) files carry TCC_BUBBLE, its 128-B
    HBM reads, which MI200's counters lack; its vector L1 line is 128 B, so rocprof-compute's
    gfx942 panels
    count 128 B per TCP_TOTAL_CACHE_ACCESSES and per TCP_TCC_READ_REQ (64 B per write and
    atomic) where its gfx90a ones count 64 ("vL1D Cache BW", "L1-L2 BW")."""
    nbytes: dict[str, float] = {}
    unknown: dict[str, str] = {}
    bubble = c.get("TCC_BUBBLE")
    line = 128.0 if mi300 or bubble is not None else 64.0
    for level, names in _LEVEL_COUNTERS.items() if c is not num else ():
        if level == "DRAM":
            names = _dram_counters(c)
        bad = next((n for n in names if (v := c.get(n)) is not None and v != v), None)
        if bad is not None:
            unknown[level] = f"{bad} is not a number (n/a)"
    dram, notes = dram_bytes(num, bubble, mi300, said)   # said: (the file's names, --on's)
    if dram is not None:
        nbytes["DRAM"] = dram
    l2_reqs = list(map(num.get, TCP_TCC))
    if l2_reqs.count(None) < len(TCP_TCC):
        nbytes["L2"] = line * (l2_reqs[0] or 0.0) + 64.0 * sum(v or 0.0 for v in l2_reqs[1:])
    elif (l2 := c.get("TCC_REQ")) is not None:
        if l2 == l2:
            nbytes["L2"] = 128.0 * l2
        elif "L2" not in unknown:
            unknown["L2"] = "TCC_REQ"
    if (l1 := num.get("TCP_TOTAL_CACHE_ACCESSES")) is not None:
        nbytes["L1"] = line * l1
    for level in unknown:
        nbytes.pop(level, None)
    return nbytes, unknown, notes


def _wave_size(m: Mapping[str, float]) -> float:
    """Lanes per wavefront: the file's wave size (rocprof v1 `wave_size`, rocprofv2
    `Wave_Size`; RDNA runs wave32), else 64, CDNA's and rocprof-compute's constant.
    SQ_INSTS_VALU_* count per-wavefront instructions, so FLOP scale with it."""
    for key in ("wave_size", "Wave_Size", "WaveSize"):
        v = m.get(key)
        if v is not None and v in (32.0, 64.0):
            return v
    return 64.0


_OPS = ("ADD", "MUL", "FMA", "TRANS")
_VECTOR_NAMES = {p: tuple(f"SQ_INSTS_VALU_{op}_{p}" for op in _OPS) for p in VECTOR}
_MATRIX_NAMES = tuple((f"SQ_INSTS_VALU_MFMA_MOPS_{p}", precision)
                      for p, precision in MATRIX.items())


def _vector_flop(num: Mapping[str, float], lanes: float
                 ) -> tuple[dict[str, float], list[tuple[bool, str]], bool]:
    """Vector FLOP by precision, notes on precisions counted from some of their
    ADD/MUL/FMA/TRANS counters only (as ncu's _partial_note), each with whether that
    precision counted any FLOP, and whether any counter was found."""
    flop: dict[str, float] = {}
    notes: list[tuple[bool, str]] = []
    found = False
    get = num.get
    for suffix, precision in VECTOR.items():
        parts = list(map(get, _VECTOR_NAMES[suffix]))
        if parts.count(None) < 4:
            found = True
            add, mul, fma, trans = (p or 0.0 for p in parts) if None in parts else parts
            if add + mul + fma + trans:
                flop[precision] = lanes * (add + mul + 2.0 * fma + trans)
            if None in parts:
                notes.append((precision in flop,
                              _partial_note(suffix, tuple(p is None for p in parts))))
    return flop, notes, found


@lru_cache(maxsize=64)
def _partial_note(suffix: str, lacking: tuple[bool, ...]) -> str:
    """The note on a precision counted from some of its counters (written once per file,
    not once per dispatch: every dispatch of a file lacks the same ones)."""
    have = [op for op, no in zip(_OPS, lacking, strict=True) if not no]
    lack = [f"SQ_INSTS_VALU_{op}_{suffix}" for op, no in zip(_OPS, lacking, strict=True) if no]
    return (f"{VECTOR[suffix]} FLOP from {', '.join(have)} only: {', '.join(lack)} not "
            f"collected or not a number (add {'it' if len(lack) == 1 else 'them'} to --pmc, "
            f"or the FLOP may read low)")


def _matrix_flop(c: Mapping[str, float], num: Mapping[str, float], flop: dict[str, float],
                 notes: list[str], found: bool) -> tuple[float, bool]:
    """Add the MFMA FLOP (512 per MOP) to `flop`; (the tensor FLOP, whether any FLOP
    counter was found). A MOPS counter in the file but not a number is said in `notes`:
    its FLOP once vanished without a word, an fp8 GEMM read as 0 fp32 FLOP (review s34 E)."""
    tensor = 0.0
    for name, precision in _MATRIX_NAMES:
        mops = num.get(name)
        if mops is None and name in c:
            notes.append(f"{name} is not a number (n/a): no {precision} MFMA FLOP counted, "
                         f"so the FLOP may read low")
        elif mops is not None:
            found = True
            if mops:
                flop[precision] = flop.get(precision, 0.0) + 512.0 * mops
                tensor += 512.0 * mops
    return tensor, found


def rocprof_counted(m: Mapping[str, float], mi300: bool | None = None
                    ) -> tuple[Counts, dict[str, str]]:
    """FLOP by precision, bytes by level and seconds of one dispatch, and the levels it
    could not count ({level: why}, for _with_known_levels, which once ran _bytes a second
    time for them: review r5 F1). A level whose counter is in the file but not a number
    gets no bytes (_bytes); a dispatch left with none has a problem naming the counter.
    mi300: whether the GPU is an MI300 as the user's device or folder says (None: unsaid);
    the file's own counter names say it first (rocprof_arch)."""
    c, num = canonical(m)
    file_says = spelled_mi300(tuple(m))
    spelled, arch_said = read_as(file_says, mi300)   # the file's names first, then --on
    lanes = _wave_size(m)
    flop, partial, found = _vector_flop(num, lanes)
    notes: list[str] = []
    if lanes != 64.0:
        notes.append(f"vector FLOP at {lanes:.0f} lanes per wavefront (the file's wave size)")
    tensor, found = _matrix_flop(c, num, flop, notes, found)
    # a precision counted from some of its counters is named where it did that math, or
    # where the dispatch counted no FLOP at all (the missing counters may be why): not a
    # bf16 MFMA kernel whose FMA_F32 reads 0 (its FLOP are the MFMA's; review s33 F)
    notes[:0] = [note for counted, note in partial if counted or not flop]
    if mfma := mfma_note(m):
        notes.append(mfma)
    if arch_said:
        notes.append(arch_said)
    nbytes, unknown, bnotes = _bytes(c, num, bool(spelled), (file_says, mi300))
    if "DRAM" not in unknown:   # (bnotes are about DRAM requests)
        notes += bnotes
    if spelled is None and ("L1" in nbytes or num.get("TCP_TCC_READ_REQ")):
        notes.append(ARCH_NOTE)
    seconds = _seconds(m)
    split = _split_problem(num, spelled)
    if seconds is None:
        problem = ("no time" + _unrecorded(m) + ": needs BeginNs/EndNs, "
                   "Start_Timestamp/End_Timestamp or DurationNs (rocprof v1: add "
                   "`--timestamp on`; rocprofv3 and rocprof-compute write them)")
    elif (stamp := _negative_stamp(m)) or seconds < 0:
        # a clock reading below 0 is no time at all: -5000 once added 5 us to the launch
        problem = (f"negative timestamp ({stamp}): a clock reading cannot be below 0; check "
                   f"the export" if stamp else
                   f"negative time ({_time_words(m)}): the end is before the begin")
    elif seconds == 0:
        problem = f"zero time ({_time_words(m)})"
    elif split:
        problem = split
    elif not nbytes and unknown:
        problem = "no bytes: " + "; ".join(f"{why}, so no {level} bytes"
                                           for level, why in unknown.items())
    elif not nbytes:
        problem = ("no byte counters (TCC_EA_RDREQ/WRREQ, MI300: TCC_EA0_RDREQ/WRREQ; "
                   "TCP_TCC_*_REQ, TCC_REQ, TCP_TOTAL_CACHE_ACCESSES, FETCH_SIZE/WRITE_SIZE)")
    elif not found:
        problem = ("no FLOP counters (SQ_INSTS_VALU_*_F16/F32/F64, SQ_INSTS_VALU_MFMA_MOPS_*)"
                   + (f"; {mfma}" if mfma else ""))
    else:
        problem = ""
    return Counts(flop, nbytes, seconds, tuple(notes), problem, tensor_flop=tensor), unknown


def _with_known_levels(items: list[tuple[Launch, tuple[Counts, dict[str, str]]]]
                       ) -> list[tuple[Launch, Counts]]:
    """Dispatches (with rocprof_counted's counts and unknown levels) with every level dropped
    that some dispatch of the same kernel could not count (a counter `n/a`): the others'
    bytes over the kernel's whole time would read low. The first dispatch of the kernel
    carries a note naming the counter and the dispatches."""
    missing: dict[str, dict[str, tuple[str, list[str]]]] = {}
    for launch, (counts, unknown) in items:
        missing_levels(missing, launch, counts, unknown)
    if not missing:
        return [(launch, counts) for launch, (counts, _) in items]
    noted: set[str] = set()
    return [(launch, known_levels(launch, counts, missing, noted))
            for launch, (counts, _) in items]


def missing_levels(missing: dict, launch: Launch, counts: Counts,
                   unknown: dict[str, str]) -> None:
    """Add to `missing` (identity -> level -> (why, dispatch ids)) the levels this dispatch
    could not count."""
    if counts.problem:   # skipped whole (time too): the others stay consistent
        return
    for level, why in unknown.items():
        entry = missing.setdefault(launch.identity, {}).setdefault(level, (why, []))
        entry[1].append(launch.id)


def known_levels(launch: Launch, counts: Counts, missing: dict, noted: set[str]) -> Counts:
    """One dispatch's counts without the levels `missing` says some dispatch of its kernel
    could not count; the kernel's first (in `noted` after it) carries the note."""
    drop = missing.get(launch.identity)
    if not drop or counts.problem:
        return counts
    nbytes = {lv: v for lv, v in counts.bytes.items() if lv not in drop}
    notes = counts.notes
    if launch.identity not in noted:
        noted.add(launch.identity)
        notes += tuple(_unknown_note(level, counter, ids)
                       for level, (counter, ids) in drop.items())
    problem = "" if nbytes else "no bytes: " + "; ".join(
        f"{why} in dispatch {ids[0]} of this kernel, so no {lv} bytes"
        for lv, (why, ids) in drop.items())
    return replace(counts, bytes=nbytes, notes=notes, problem=problem)


def _unknown_note(level: str, why: str, ids: list[str]) -> str:
    more = f" (and {len(ids) - 1} more)" if len(ids) > 1 else ""
    return (f"{why} in dispatch {ids[0]}{more}: no {level} point (an unknown count is not "
            f"0 bytes)")
