"""Review s20 x1 F5: a likwid file with no FLOP counted got Intel's words on AMD too: "no
FP_ARITH_INST_RETIRED_* events ... add the FLOPS_DP (FLOPS_SP, FLOPS_HP) group or use MEM_DP
(MEM_SP, MEM_HP)". On Zen 3/4 likwid's FLOP event is RETIRED_SSE_AVX_FLOPS_ALL
(src/includes/perfmon_zen3_events.txt, perfmon_zen4_events.txt: RETIRED_SSE_AVX_FLOPS, umask
ALL, used with MERGE), counted by its FLOPS_DP/FLOPS_SP groups; it has no MEM_DP or FLOPS_HP
group there. On Zen 1/2 the FLOPS_DP group (groups/zen2/FLOPS_DP.txt) gives only "DP
[MFLOP/s] (scalar|SSE|AVX assumed)" guesses over RETIRED_SSE_AVX_FLOPS_DOUBLE_FMA /
_ADD_MULT_DIV and RETIRED_MMX_FP_INSTR_ALL, which rooflab does not read, and MEM_DP
(groups/zen2/MEM_DP.txt: RETIRED_SSE_AVX_FLOPS_ALL beside DRAM_CHANNEL_0/1) is the group.

The files are format excerpts as likwid-perfctr -O writes them (the STRUCT,Info header, Raw
and Metric tables), in the layout of tests/test_s20_f1_likwid.py."""

from __future__ import annotations

from rooflab.cli.main import main
from rooflab.ingest.likwid import load_likwid

ZEN4 = ["STRUCT,Info,3,,", "CPU name:,AMD EPYC 9654 96-Core Processor,,,",
        "CPU type:,AMD K19 (Zen4) architecture,,,", "CPU clock:,2.40 GHz,,,"]
ZEN3 = ["STRUCT,Info,3,,", "CPU name:,AMD EPYC 7763 64-Core Processor,,,",
        "CPU type:,AMD K19 (Zen3) architecture,,,", "CPU clock:,2.45 GHz,,,"]
ZEN2 = ["STRUCT,Info,3,,", "CPU name:,AMD EPYC 7742 64-Core Processor,,,",
        "CPU type:,AMD K17 (Zen2) architecture,,,", "CPU clock:,2.25 GHz,,,"]
SKX = ["STRUCT,Info,3,,", "CPU name:,Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz,,,",
       "CPU type:,Intel Skylake SP processor,,,", "CPU clock:,2.39 GHz,,,"]
INTEL_WORDS = ("FP_ARITH_INST_RETIRED", "FLOPS_HP) group", "MEM_HP")


def _write(tmp_path, name: str, lines: list[str]) -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def _zen_mem(group: int, name: str, first: int) -> list[str]:
    """zen3/zen4 MEM1.txt (channels 0-3) or MEM2.txt (4-7): 1e6 beats per channel."""
    return [f"TABLE,Group {group} Raw,{name},6,", "Event,Counter,HWThread 0,,",
            "ACTUAL_CPU_CLOCK,FIXC1,1000,,"] + \
           [f"DRAM_CHANNEL_{c},DFC{c - first},1000000,," for c in range(first, first + 4)] + \
           [f"TABLE,Group {group} Metric,{name},2,", "Metric,HWThread 0,,,",
            "Runtime (RDTSC) [s],1.0000,,,",
            f"Memory data volume (channels {first}-{first + 3}) [GBytes],0.2560,,,"]


def _no_flop_note(path: str) -> str:
    (k,) = load_likwid(path).kernels
    assert k.flop == {}
    (note,) = [n for n in k.meta["notes"] if n.startswith("no FLOP counted")]
    return note


def test_zen4_note_names_amds_event_and_group(tmp_path, capsys):
    """EPYC 9654 (Zen 4), MEM1 + MEM2: 8 x 1e6 x 64 B = 5.12e8 B and no FLOP."""
    p = _write(tmp_path, "zen4.csv", ZEN4 + _zen_mem(1, "MEM1", 0) + _zen_mem(2, "MEM2", 4))
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 5.12e8}
    note = _no_flop_note(p)
    assert "RETIRED_SSE_AVX_FLOPS_ALL" in note
    assert "on AMD Zen 4 add the FLOPS_DP (FLOPS_SP) group" in note
    assert "give --precision" in note
    assert "likwid has no MEM_DP or FLOPS_HP group there" in note
    assert not any(w in note for w in INTEL_WORDS), note
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 0      # and the user reads it
    out = capsys.readouterr()
    assert "on AMD Zen 4 add the FLOPS_DP" in out.out + out.err


def test_zen3_note_names_zen3(tmp_path):
    p = _write(tmp_path, "zen3.csv", ZEN3 + _zen_mem(1, "MEM1", 0) + _zen_mem(2, "MEM2", 4))
    note = _no_flop_note(p)
    assert "on AMD Zen 3 add the FLOPS_DP (FLOPS_SP) group" in note
    assert not any(w in note for w in INTEL_WORDS), note


def test_zen2_flops_dp_guesses_are_not_read_and_mem_dp_is_named(tmp_path):
    """groups/zen2/FLOPS_DP.txt's events and metrics, with a MEM group: 2 x 1e6 x 64 B."""
    flops_dp = ["TABLE,Group 1 Raw,FLOPS_DP,6,", "Event,Counter,HWThread 0,,",
                "ACTUAL_CPU_CLOCK,FIXC1,1000,,", "MAX_CPU_CLOCK,FIXC2,1000,,",
                "RETIRED_INSTRUCTIONS,PMC0,5000,,",
                "RETIRED_SSE_AVX_FLOPS_DOUBLE_FMA,PMC1,1000000,,",
                "RETIRED_MMX_FP_INSTR_ALL,PMC2,1000000,,",
                "RETIRED_SSE_AVX_FLOPS_DOUBLE_ADD_MULT_DIV,PMC3,1000000,,",
                "TABLE,Group 1 Metric,FLOPS_DP,4,", "Metric,HWThread 0,,,",
                "Runtime (RDTSC) [s],1.0000,,,",
                "DP [MFLOP/s] (scalar assumed),3.5000,,,",
                "DP [MFLOP/s] (SSE assumed),4.0000,,,",
                "DP [MFLOP/s] (AVX assumed),5.0000,,,"]
    mem = ["TABLE,Group 2 Raw,MEM,3,", "Event,Counter,HWThread 0,,",
           "ACTUAL_CPU_CLOCK,FIXC1,1000,,", "DRAM_CHANNEL_0,DFC0,1000000,,",
           "DRAM_CHANNEL_1,DFC1,1000000,,",
           "TABLE,Group 2 Metric,MEM,2,", "Metric,HWThread 0,,,",
           "Runtime (RDTSC) [s],1.0000,,,", "Memory data volume [GBytes],0.1280,,,"]
    p = _write(tmp_path, "zen2.csv", ZEN2 + flops_dp + mem)
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 1.28e8}
    note = _no_flop_note(p)
    assert "on AMD Zen 2 measure the MEM_DP (MEM_SP) group" in note
    assert "(AVX assumed)" in note and "FLOPS_DP) group" not in note
    assert not any(w in note for w in INTEL_WORDS), note


def test_amd_of_unknown_generation_gets_both_zen_groups(tmp_path):
    """No CPU lines: AMD by its MEM1/MEM2 groups, the generation unknown."""
    p = _write(tmp_path, "anon.csv", _zen_mem(1, "MEM1", 0) + _zen_mem(2, "MEM2", 4))
    note = _no_flop_note(p)
    assert "on AMD Zen 3/4 add the FLOPS_DP (FLOPS_SP) group" in note
    assert "on AMD Zen 1/2 measure the MEM_DP (MEM_SP) group" in note
    assert not any(w in note for w in INTEL_WORDS), note


def test_intel_keeps_its_own_words(tmp_path):
    mem = ["TABLE,Group 1 Raw,MEM,3,", "Event,Counter,HWThread 0,,",
           "INSTR_RETIRED_ANY,FIXC0,123,,", "CAS_COUNT_RD,MBOX0C0,1000000,,",
           "CAS_COUNT_WR,MBOX0C1,500000,,",
           "TABLE,Group 1 Metric,MEM,2,", "Metric,HWThread 0,,,",
           "Runtime (RDTSC) [s],0.010000,,,", "Memory data volume [GBytes],0.0960,,,"]
    note = _no_flop_note(_write(tmp_path, "skx.csv", SKX + mem))
    assert note.startswith("no FLOP counted (no FP_ARITH_INST_RETIRED_* events")
    assert "add the FLOPS_DP (FLOPS_SP, FLOPS_HP) group or use MEM_DP (MEM_SP, MEM_HP)" in note
    assert "RETIRED_SSE_AVX" not in note
