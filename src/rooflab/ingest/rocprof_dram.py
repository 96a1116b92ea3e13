"""One rocprof dispatch's HBM (DRAM) bytes: from the TCC_EA read and write requests by
rocprof-compute's formulas, else from rocprof's derived FETCH_SIZE / WRITE_SIZE (split from
rocprof_counters.py, which reads the other levels).

    reads  = 32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B)          gfx90a (MI200), gfx908
           = 128 x BUBBLE + 64 x (RDREQ - BUBBLE - RDREQ_32B)
             + 32 x RDREQ_32B                                   gfx942 (MI300: TCC_EA0_)
           = 128 x RDREQ_128B + 64 x RDREQ_64B + 32 x RDREQ_32B     gfx950 (MI350), where
             the file has the sized counters: TCC_BUBBLE is no 128-B read count there
    writes = 64 x WRREQ_64B + 32 x (WRREQ - WRREQ_64B)          all

(ROCm/rocprofiler-compute src/utils/roofline_calc.py `calc_ai`, its MI200 and MI300
branches; the gfx942 panel 0200_system-speed-of-light.yaml, "L2-Fabric Read BW"; for
gfx950 rocprofiler-sdk's counter_defs.yaml FETCH_SIZE, and rocprof-compute 3.5.0's
"corrected the formula for ... reads from L2 cache to HBM for ... MI350".)
"""

from __future__ import annotations

from collections.abc import Mapping

from .rocprof_arch import GFX950, bubble_note, ea_spelled

# rocprof's FETCH_SIZE on gfx942 differs by tool: rocprofiler-sdk's counter_defs.yaml
# (rocprofv3) adds 128 x TCC_BUBBLE, rocprofiler's derived_counters.xml (rocprof v1/v2,
# <gfx940>) is the 32/64-B formula alone, a 128-B read counted as 64 B
FETCH_MI300_NOTE = (
    "DRAM from FETCH_SIZE on MI300 (gfx942): rocprofv3's counts a 128-B read as 128 B, "
    "rocprof v1/v2's as 64 B (their gfx940 formula has no TCC_BUBBLE term), so from rocprof "
    "v1/v2 DRAM bytes read up to 2x low; collect TCC_EA0_RDREQ, TCC_EA0_RDREQ_32B, "
    "TCC_BUBBLE, TCC_EA0_WRREQ and TCC_EA0_WRREQ_64B for the bytes themselves")


def dram_bytes(num: Mapping[str, float], bubble: float | None, mi300: bool,
               said: tuple) -> tuple[float | None, list[str]]:
    """HBM bytes (None: no TCC_EA counter nor FETCH_SIZE/WRITE_SIZE) and notes on the
    sizes assumed. num: the dispatch's counters that are numbers (canonical names, TCC_EA_
    for MI300's TCC_EA0_ too); bubble: TCC_BUBBLE; mi300: read as MI300's; said: (the
    file's names, --on's GPU) for the note on an MI300 read without TCC_BUBBLE."""
    rd, wr = num.get("TCC_EA_RDREQ"), num.get("TCC_EA_WRREQ")
    sized = _sized_reads(num)
    if rd is None and wr is None and sized is None:
        dram, notes = _kib_sizes(num)
        if mi300 and num.get("FETCH_SIZE") and said[1] != GFX950:
            # (gfx950's FETCH_SIZE counts its reads by size, rocprofiler-sdk's
            # counter_defs.yaml: the gfx942 note and its TCC_BUBBLE advice are not its)
            notes.append(FETCH_MI300_NOTE)
        return dram, notes
    dram, notes = _requests(num, bubble, sized, mi300)
    if mi300 and bubble is None and rd and sized is None:
        # gfx942 counts a 128-B read once in RDREQ and once in TCC_BUBBLE; without BUBBLE
        # the formula takes it for 64 B (review r9 F2)
        notes.append(bubble_note(*said))
    return dram, notes


def _sized_reads(num: Mapping[str, float]) -> float | None:
    """gfx950's read bytes by request size (None: the file has neither TCC_EA0_RDREQ_64B
    nor _128B); a missing RDREQ_32B is the reads the sized counters leave of RDREQ. The
    gfx942 formula on gfx950 read a memcopy's reads half (TCC_BUBBLE counts no 128-B reads
    there), and its note asked for TCC_BUBBLE."""
    r64, r128 = num.get("TCC_EA_RDREQ_64B"), num.get("TCC_EA_RDREQ_128B")
    if r64 is None and r128 is None:
        return None
    r64, r128 = r64 or 0.0, r128 or 0.0
    rd, r32 = num.get("TCC_EA_RDREQ"), num.get("TCC_EA_RDREQ_32B")
    if r32 is None:
        r32 = max(rd - r64 - r128, 0.0) if rd is not None else 0.0
    return 128 * r128 + 64 * r64 + 32 * r32


def _requests(num: Mapping[str, float], bubble: float | None,
              sized: float | None = None, mi300: bool = False) -> tuple[float, list[str]]:
    """HBM bytes from the TCC_EA requests and notes on the sizes assumed for the requests
    whose split counter was not collected. rocprof-compute's formula assumes both split
    counters (it always collects them); rooflab's users often collect RDREQ and WRREQ alone,
    and then every read counts 64 B and every write 32 B (review 12b F). The counters are
    named as the GPU read (mi300) spells them (ea_spelled)."""
    get = num.get
    rd_n, rd32_n, wr_n, wr64_n = (ea_spelled(f"TCC_EA_{n}", mi300)
                                  for n in ("RDREQ", "RDREQ_32B", "WRREQ", "WRREQ_64B"))
    rd, rd32 = get("TCC_EA_RDREQ"), get("TCC_EA_RDREQ_32B")
    wr, wr64 = get("TCC_EA_WRREQ"), get("TCC_EA_WRREQ_64B")
    notes = []
    if (rd is None and sized is None) != (wr is None):
        # one direction collected: said, as ncu's "DRAM = reads only" (a file of
        # TCC_EA_RDREQ alone is common: a read-only kernel's counters)
        have, lack, what = ((rd_n, wr_n, "reads") if wr is None else (wr_n, rd_n, "writes"))
        notes.append(f"DRAM = {what} only: {have} without {lack} (add it to --pmc, or DRAM "
                     f"bytes may read low)")
    if rd32 is None and rd and sized is None:
        notes.append(f"{rd32_n} not collected: every DRAM read assumed 64 B (a 32-B "
                     f"read counts twice its size); add it to --pmc")
    if wr64 is None and wr:
        notes.append(f"{wr64_n} not collected: every DRAM write assumed 32 B (a 64-B "
                     f"write counts half its size); add it to --pmc")
    rd, rd32, wr, wr64, big = (v or 0.0 for v in (rd, rd32, wr, wr64, bubble))
    reads = 128 * big + 32 * rd32 + 64 * (rd - big - rd32) if sized is None else sized
    return reads + 64 * wr64 + 32 * (wr - wr64), notes


def _kib_sizes(num: Mapping[str, float]) -> tuple[float | None, list[str]]:
    """HBM bytes from rocprof's derived FETCH_SIZE / WRITE_SIZE (rocprofv3: FetchSize /
    WriteSize), when the TCC_EA requests were not collected: on gfx9 rocprof defines them
    as (32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B)) / 1024 and (32 x (WRREQ - WRREQ_64B) +
    64 x WRREQ_64B) / 1024 (ROCm/rocprofiler derived_counters.xml, "kilobytes fetched
    from / written to the video memory"): this module's formula in KiB, so x 1024."""
    fetch, write = num.get("FETCH_SIZE"), num.get("WRITE_SIZE")
    if fetch is None and write is None:
        return None, []
    notes = ["DRAM = 1024 x (FETCH_SIZE + WRITE_SIZE): rocprof's derived metrics, in KiB "
             "(the TCC_EA request formula rocprof applied)"]
    if (fetch is None) != (write is None):
        have, lack, what = (("FETCH_SIZE", "WRITE_SIZE", "reads") if write is None else
                            ("WRITE_SIZE", "FETCH_SIZE", "writes"))
        notes.append(f"DRAM = {what} only: {have} without {lack} (add it to --pmc, or DRAM "
                     f"bytes may read low)")
    return 1024.0 * ((fetch or 0.0) + (write or 0.0)), notes
