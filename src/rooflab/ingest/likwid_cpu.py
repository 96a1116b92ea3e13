"""What a likwid file's header says about its CPU that changes how its memory traffic is
read: AMD or not, the Zen generation (which memory groups likwid has there) and how many
DRAM channels the part has (whether MEM1 + MEM2 saw them all)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .dram_events import ZEN3_CHANNELS, ZEN3_MEM, ZEN4_MEM, ZEN_MEM

# likwid's "CPU type:" line: "AMD K19 (Zen3) architecture", "AMD K19 (Zen4) architecture"
_ZEN_TYPE = re.compile(r"\bZen\s*(\d)\b", re.IGNORECASE)
# an EPYC's model number: the last digit is its generation (7763: Zen 3, 9654: Zen 4), the
# first its socket (AMD's EPYC 7003 / 9004 / 8004 / 4004 series)
_EPYC = re.compile(r"\bEPYC\s+(\d)\d\d(\d)[A-Z]*\b", re.IGNORECASE)
# DRAM channels per socket by EPYC series: SP3 (7xx1-7xx3) 8, SP5 (9004/9005) 12, SP6
# (8004, Siena) 6, AM5 (4004) 2
_EPYC_CHANNELS = {"7": 8, "9": 12, "8": 6, "4": 2}


@dataclass(frozen=True)
class LikwidCpu:
    """The CPU name and type lines of a likwid file ('' when it has none)."""

    name: str = ""
    type: str = ""

    @property
    def amd(self) -> bool:
        return "AMD" in f"{self.name} {self.type}".upper()

    @property
    def zen(self) -> int | None:
        """The Zen generation (3, 4, ...), None when the lines do not say."""
        hit = _ZEN_TYPE.search(self.type)
        if hit is not None:
            return int(hit[1])
        epyc = _EPYC.search(self.name)
        return int(epyc[2]) if epyc is not None else None

    @property
    def channels(self) -> int | None:
        """DRAM channels per socket of an EPYC (by its series), 2 for a Ryzen; None when the
        name does not say."""
        epyc = _EPYC.search(self.name)
        if epyc is not None:
            return _EPYC_CHANNELS.get(epyc[1])
        return 2 if re.search(r"\bRyzen\b(?!.*Threadripper)", self.name, re.I) else None

    def memory_hint(self) -> str:
        """Which likwid group counts this AMD CPU's DRAM traffic."""
        return {3: ZEN3_MEM, 4: ZEN4_MEM}.get(self.zen or 0, ZEN_MEM)

    def flop_hint(self) -> str:
        """What a likwid file of this AMD CPU lacked and the group that counts its FLOP."""
        zen = self.zen
        if zen in (3, 4):
            return f"{_AMD_NO_FLOP}; {_ZEN34_FLOP.format(zen=zen)}"
        if zen in (1, 2):
            return f"{_AMD_NO_FLOP}; {_ZEN12_FLOP.format(zen=zen)}"
        return f"{_AMD_NO_FLOP}; {_ZEN34_FLOP.format(zen='3/4')}; {_ZEN12_FLOP.format(zen='1/2')}"


# likwid's AMD FLOP counts (src/includes/perfmon_zen3_events.txt, perfmon_zen4_events.txt:
# RETIRED_SSE_AVX_FLOPS, umask ALL, "Must be used with MERGE"). Zen 3/4's FLOPS_DP/FLOPS_SP
# groups count RETIRED_SSE_AVX_FLOPS_ALL, every precision in one count; likwid has no MEM_DP
# or FLOPS_HP group there (review s20 x1 F5: the note named Intel's FP_ARITH events and
# MEM_DP / FLOPS_HP on a Zen 4). Zen 1/2's FLOPS_DP (groups/zen2/FLOPS_DP.txt) splits
# RETIRED_SSE_AVX_FLOPS_DOUBLE_FMA / _ADD_MULT_DIV and RETIRED_MMX_FP_INSTR_ALL into
# "DP [MFLOP/s] (scalar|SSE|AVX assumed)" guesses that rooflab does not read; their MEM_DP
# (MEM_SP) group counts RETIRED_SSE_AVX_FLOPS_(DOUBLE_)ALL beside DRAM (groups/zen2/MEM_DP.txt)
_AMD_NO_FLOP = ("no FLOP counted (no RETIRED_SSE_AVX_FLOPS_ALL, _DOUBLE_ALL or _SINGLE_ALL "
                "event or DP/SP [MFLOP/s] metric in its groups): a bytes-only point")
_ZEN34_FLOP = ("on AMD Zen {zen} add the FLOPS_DP (FLOPS_SP) group: its "
               "RETIRED_SSE_AVX_FLOPS_ALL counts every precision, so give --precision for "
               "code that computes in another (likwid has no MEM_DP or FLOPS_HP group there)")
_ZEN12_FLOP = ("on AMD Zen {zen} measure the MEM_DP (MEM_SP) group, which counts FLOP beside "
               "DRAM bytes (FLOPS_DP there gives only per-vector-width guesses, 'DP [MFLOP/s] "
               "(AVX assumed)', which rooflab does not read)")


def channels_note(cpu: LikwidCpu, seen: str, count: int) -> str | None:
    """The note on DRAM bytes from `count` channels (`seen`: '0-7') of the MEM1/MEM2 groups,
    None when they are all the CPU has."""
    have = cpu.channels
    if have is not None:
        if count >= have:
            return None
        return (f"only channels {seen} counted: this CPU ({cpu.name}) has {have}, so DRAM "
                f"bytes read low (about {count}/{have} of the traffic, if spread evenly) and "
                f"AI high; {cpu.memory_hint()}")
    if count >= ZEN3_CHANNELS:
        if cpu.zen is not None and cpu.zen >= 4:
            return (f"channels {seen} counted: an EPYC 9004 has 12, so DRAM bytes may read "
                    f"low and AI high; {ZEN4_MEM}")
        return None
    # likwid's zen3 MEM1/MEM2 split 8 channel counters in two; a client part (Ryzen: 2
    # channels) may have all its memory behind MEM1 (review 17a N9)
    return (f"only channels {seen} counted: a server Zen 3 (EPYC 7003) has 8, a Zen 4 (EPYC "
            f"9004) 12, so DRAM bytes read low and AI high ({cpu.memory_hint()}); a "
            f"2-channel part (Ryzen) is covered by MEM1")
