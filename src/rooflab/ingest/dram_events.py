"""The memory controllers' events and metrics rooflab reads DRAM bytes from, by vendor
(Intel's uncore IMC, AMD's UMC and data fabric) and by tool (likwid's names, perf's)."""

from __future__ import annotations

import re

# one CAS command, data-fabric beat or cache line moves 64 B
LINE_BYTES = 64.0

# likwid: the groups' metrics (GBytes), in the order tried, per memory level
VOLUMES = {"DRAM": ("Memory data volume [GBytes]",), "L2": ("L2 data volume [GBytes]",),
           "L3": ("L3 data volume [GBytes]",)}
READ_WRITE = ("Memory read data volume [GBytes]", "Memory write data volume [GBytes]")
# likwid's raw counts, each LINE_BYTES: Intel's CAS_COUNT_RD/WR (on the MBOX or, Xeon Max,
# HBM boxes), DRAM_READS/WRITES, AMD Zen 4's UMC CAS_CMD_RD/WR (groups/zen4/MEM.txt: "Memory
# data volume [GBytes] 1.0E-09*(SUM(CAS_CMD_RD)+SUM(CAS_CMD_WR))*64.0") and CAS_CMD_ANY (both
# directions; read only where the group has no CAS_CMD_RD/WR, which it would count again)
CAS = re.compile(r"^(CAS_COUNT_(RD|WR)|DRAM_READS|DRAM_WRITES|CAS_CMD_(RD|WR|ANY))$")
CAS_ANY = "CAS_CMD_ANY"
# AMD Zen 3 has 8 DRAM channels and 4 data-fabric counters, so likwid splits them in two
# groups (perfgroups/zen3/MEM1.txt: "Memory data volume (channels 0-3) [GBytes]" =
# 1.0E-09*(DFC0+DFC1+DFC2+DFC3)*64.0 over DRAM_CHANNEL_0..3; MEM2.txt: channels 4-7):
# each group's bytes are part of the region's, added up over its groups
CHANNELS = re.compile(r"^Memory data volume \(channels (\d+)-(\d+)\) \[GBytes\]$")
DRAM_CHANNEL = re.compile(r"^DRAM_CHANNEL_(\d+)$")
ZEN3_CHANNELS = 8   # likwid's zen3 MEM1 + MEM2
# likwid's perfgroups: zen3/ has MEM1 + MEM2 and no MEM/MEM_DP; zen4/ has MEM (12 UMCs'
# CAS_CMD_RD/WR, every channel of an EPYC 9004) besides MEM1 + MEM2 (DRAM_CHANNEL_0..7 only);
# zen2/ has MEM, MEM_DP. ZEN_MEM: the hint when the Zen generation is not known
ZEN3_MEM = "on AMD Zen 3 measure -g MEM1 -g MEM2 (likwid has no MEM or MEM_DP group there)"
ZEN4_MEM = ("on AMD Zen 4 measure -g MEM (all 12 channels' CAS_CMD_RD/WR; MEM1 + MEM2 count "
            "channels 0-7 only)")
ZEN_MEM = ("on AMD Zen 4 measure -g MEM (all 12 channels); on Zen 3 -g MEM1 -g MEM2 (likwid "
           "has no MEM or MEM_DP group there)")

# perf: one source per vendor's counters: (what it is, read pattern, write pattern).
# Each count is LINE_BYTES where perf gives no unit. AMD Zen 4's data fabric counts "read
# data beats (64 bytes) for local processor at Coherent Station N" (Linux perf, tools/perf/
# pmu-events/arch/x86/amdzen4/data-fabric.json; its dram_read_data_for_local_processor
# metric sums cs0..cs11); Linux 6.x's amd_umc PMU counts each memory controller's 64-B
# CAS commands. The sources count the same traffic: only the first one found is read.
# Granite Rapids and Sierra Forest count each DDR5 sub-channel apart (perf's graniterapids/
# sierraforest uncore-memory.json: UNC_M_CAS_COUNT_SCH0.RD "CAS count for SubChannel 0, all
# reads", SCH1.RD, SCH0.WR, SCH1.WR; its memory_bandwidth_read metric adds SCH0.RD + SCH1.RD):
# both sub-channels are added. `\b` keeps out the sub-counts of the same traffic (.RD_REG,
# .RD_PRE_REG, .RD_UNDERFILL, .WR_NONPRE: a word character follows 'rd'/'wr').
DRAM_SOURCES = (
    ("uncore IMC",
     re.compile(r"(?:imc|unc_m).*(?:cas_count(?:_sch\d)?[_.]?(?:read|rd)\b|data_reads?\b)"),
     re.compile(r"(?:imc|unc_m).*(?:cas_count(?:_sch\d)?[_.]?(?:write|wr)\b|data_writes?\b)")),
    ("AMD UMC CAS", re.compile(r"umc_cas_cmd[._]rd\b"), re.compile(r"umc_cas_cmd[._]wr\b")),
    ("AMD data fabric", re.compile(r"local_processor_read_data_beats_cs\d+"),
     re.compile(r"local_processor_write_data_beats_cs\d+")),
)
INTEL_DRAM = ("uncore_imc/cas_count_read/, cas_count_write/, or data_reads/data_writes; "
              "Granite Rapids, Sierra Forest: UNC_M_CAS_COUNT_SCH0.RD, UNC_M_CAS_COUNT_SCH1.RD, "
              "UNC_M_CAS_COUNT_SCH0.WR, UNC_M_CAS_COUNT_SCH1.WR")
# the DDR5 sub-channels of one memory controller Granite Rapids / Sierra Forest count apart
SUB_CHANNELS = ("0", "1")
AMD_DRAM = ("amd_df/local_processor_read_data_beats_cs0/ ... _cs11/ and "
            "local_processor_write_data_beats_csN/ (Zen 4), or amd_umc_N/umc_cas_cmd.rd/ and "
            "umc_cas_cmd.wr/ (Linux 6.x)")


def is_dram_event(event: str) -> bool:
    """Whether perf's event is one of DRAM_SOURCES'."""
    return any(p.search(event) for _, *pair in DRAM_SOURCES for p in pair)


def span(chans: tuple[int, ...]) -> str:
    """(0, 1, 2, 3) -> '0-3'; (0, 2) -> '0, 2'."""
    if len(chans) > 1 and list(chans) == list(range(chans[0], chans[-1] + 1)):
        return f"{chans[0]}-{chans[-1]}"
    return ", ".join(map(str, chans))
