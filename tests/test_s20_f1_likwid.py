"""likwid-perfctr / likwid-mpirun CSV read as likwid writes it (review s20 r1, F1-F4, F9,
F10): exact values before 4-decimal metrics, Sapphire Rapids' fp16 events, Zen 4's 12
channels and its UMC CAS events, Xeon Max's HBM groups, likwid-mpirun's call count.

The inputs are format excerpts built from likwid's own printer (src/applications/likwid.lua
printOutput: Region Info "%.6f", raw counts as integers, metrics through num2str "%.4f";
likwid-mpirun.lua printMpiOutput: "Region calls,CTR,...") and its perf groups
(groups/SPR/MEM_HP.txt, FLOPS_HP.txt, HBM_DP.txt, groups/zen4/MEM.txt, MEM1.txt, MEM2.txt).
Every expected number is worked out by hand in the test's docstring."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.ingest.likwid import load_likwid


def _write(tmp_path, name: str, lines: list[str]) -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def _analysis(capsys, args: list[str]) -> dict:
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)["analysis"][0]


SKX = ["STRUCT,Info,3,,", "CPU name:,Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz,,,",
       "CPU type:,Intel Skylake SP processor,,,", "CPU clock:,2.39 GHz,,,"]
SPR = ["STRUCT,Info,3,,", "CPU name:,Intel(R) Xeon(R) Platinum 8480+,,,",
       "CPU type:,Intel SapphireRapids processor,,,", "CPU clock:,2.00 GHz,,,"]
ZEN4 = ["STRUCT,Info,3,,", "CPU name:,AMD EPYC 9654 96-Core Processor,,,",
        "CPU type:,AMD K19 (Zen4) architecture,,,", "CPU clock:,2.40 GHz,,,"]
ZEN3 = ["STRUCT,Info,3,,", "CPU name:,AMD EPYC 7763 64-Core Processor,,,",
        "CPU type:,AMD K19 (Zen3) architecture,,,", "CPU clock:,2.45 GHz,,,"]

# --- F1: Region Info's time and the raw CAS counts, not the 4-decimal metrics ----------------

SMALL = SKX + [
    "TABLE,Region small,Group 1 Raw,MEM_DP,8,",
    "Region Info,HWThread 0,,,",
    "RDTSC Runtime [s],0.000149,,,",
    "call count,1,,,",
    "Event,Counter,HWThread 0,,",
    "FP_ARITH_INST_RETIRED_512B_PACKED_DOUBLE,PMC3,1000000,,",
    "CAS_COUNT_RD,MBOX0C0,2000,,",
    "CAS_COUNT_WR,MBOX0C1,330,,",
    "TABLE,Region small,Group 1 Metric,MEM_DP,3,",
    "Metric,HWThread 0,,,",
    "Runtime (RDTSC) [s],0.0001,,,",
    "DP [MFLOP/s],53691.2752,,,",
    "Memory data volume [GBytes],0.0001,,,",
]


def test_small_region_takes_region_info_time_and_raw_cas_bytes(tmp_path, capsys):
    """FLOP 8 x 1e6 = 8e6; bytes 64 x (2000 + 330) = 149,120 B (the metric's 0.0001 GB
    would be 1e5); t = 0.000149 s (the metric's 0.0001 would be 1.49x short). So 8e6 /
    0.000149 = 53.69 GFLOP/s (likwid's own DP [MFLOP/s] 53691.2752) and AI 8e6 / 149120 =
    53.648."""
    p = _write(tmp_path, "small.csv", SMALL)
    (k,) = load_likwid(p).kernels
    assert k.flop == {"fp64": 8e6}
    assert k.bytes == {"DRAM": 149_120.0}
    assert k.seconds == 0.000149
    assert not any("4 decimals" in n for n in k.meta["notes"])
    a = _analysis(capsys, ["likwid", p, "--json"])
    assert a["ai"] == pytest.approx(53.648, rel=1e-4)
    assert a["achieved_flop_per_s"] == pytest.approx(53.6913e9, rel=1e-5)


WHOLE_RUN = SKX + [
    "TABLE,Group 1 Raw,MEM_DP,3,",
    "Event,Counter,HWThread 0,,",
    "FP_ARITH_INST_RETIRED_512B_PACKED_DOUBLE,PMC3,1000000,,",
    "CAS_COUNT_RD,MBOX0C0,2000,,",
    "CAS_COUNT_WR,MBOX0C1,330,,",
    "TABLE,Group 1 Metric,MEM_DP,3,",
    "Metric,HWThread 0,,,",
    "Runtime (RDTSC) [s],0.0012,,,",
    "DP [MFLOP/s],6666.6667,,,",
    "Memory data volume [GBytes],0.0001,,,",
]


def test_a_4_decimal_metric_time_with_few_digits_gets_a_note(tmp_path):
    """No marker API: only the Metric table has the time, '0.0012' (likwid's %.4f), which
    is known to +-0.00005 / 0.0012 = +-4.2 %: a note says so. The bytes are still the raw
    CAS counts: 64 x 2330 = 149,120 B, not the metric's 0.0001 GB."""
    (k,) = load_likwid(_write(tmp_path, "run.csv", WHOLE_RUN)).kernels
    assert k.seconds == 0.0012 and k.bytes == {"DRAM": 149_120.0}
    (note,) = [n for n in k.meta["notes"] if "4 decimals" in n]
    assert note.startswith("the time from 'Runtime (RDTSC) [s]' = 0.0012") and "+-4 %" in note


def test_a_4_decimal_volume_metric_with_few_digits_gets_a_note(tmp_path):
    """Without the raw CAS rows, 'Memory data volume [GBytes]' = 0.0001 is the DRAM bytes:
    1e5 B, known to +-0.00005 / 0.0001 = +-50 %: a note says so."""
    text = [ln for ln in WHOLE_RUN if not ln.startswith("CAS_COUNT")]
    (k,) = load_likwid(_write(tmp_path, "vol.csv", text)).kernels
    assert k.bytes == {"DRAM": 1e5}
    assert any(n.startswith("DRAM bytes from 'Memory data volume [GBytes]' = 0.0001") and
               "+-50 %" in n for n in k.meta["notes"])


def test_zen3_channels_from_raw_counts_not_the_4_decimal_metric(tmp_path):
    """MEM1 + MEM2 on an EPYC 7763 (8 channels, all counted): 8 x 1234 beats x 64 B =
    631,808 B from the raw DRAM_CHANNEL_N; the metrics' 0.0003 + 0.0003 GB would be
    600,000. No 'only channels' note: a Zen 3 EPYC has 8."""
    def mem(group: int, name: str, first: int) -> list[str]:
        return [f"TABLE,Group {group} Raw,{name},5,", "Event,Counter,HWThread 0,,",
                "ACTUAL_CPU_CLOCK,FIXC1,1000,,"] + \
               [f"DRAM_CHANNEL_{c},DFC{c - first},1234,," for c in range(first, first + 4)] + \
               [f"TABLE,Group {group} Metric,{name},2,", "Metric,HWThread 0,,,",
                "Runtime (RDTSC) [s],0.0100,,,",
                f"Memory data volume (channels {first}-{first + 3}) [GBytes],0.0003,,,"]
    p = _write(tmp_path, "zen3.csv", ZEN3 + mem(1, "MEM1", 0) + mem(2, "MEM2", 4))
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 631_808.0}
    assert not any(n.startswith("only channels") for n in k.meta["notes"])


# --- F2: Sapphire Rapids' half-precision events and HP metric -------------------------------

MEM_HP = SPR + [
    "TABLE,Region gemm_fp16,Group 1 Raw,MEM_HP,10,",
    "Region Info,HWThread 0,,,",
    "RDTSC Runtime [s],1.000000,,,",
    "call count,1,,,",
    "Event,Counter,HWThread 0,,",
    "INSTR_RETIRED_ANY,FIXC0,1000000000,,",
    "FP_ARITH_INST_RETIRED2_128B_PACKED_HALF,PMC0,0,,",
    "FP_ARITH_INST_RETIRED2_SCALAR_HALF,PMC1,1000,,",
    "FP_ARITH_INST_RETIRED2_256B_PACKED_HALF,PMC2,0,,",
    "FP_ARITH_INST_RETIRED2_512B_PACKED_HALF,PMC3,100000000,,",
    "CAS_COUNT_RD,MBOX0C0,10000000,,",
    "CAS_COUNT_WR,MBOX0C1,5000000,,",
    "TABLE,Region gemm_fp16,Group 1 Metric,MEM_HP,4,",
    "Metric,HWThread 0,,,",
    "Runtime (RDTSC) [s],1.0000,,,",
    "HP [MFLOP/s],3200.0010,,,",
    "Memory data volume [GBytes],0.9600,,,",
]


def test_mem_hp_counts_fp16_flop_with_likwids_weights(tmp_path, capsys):
    """groups/SPR/MEM_HP.txt: HP FLOP = 8 x 128B + SCALAR + 16 x 256B + 32 x 512B =
    32 x 1e8 + 1000 = 3.200001e9 fp16; bytes 64 x 1.5e7 = 9.6e8; 1 s: 3.2 GFLOP/s, AI
    3.200001e9 / 9.6e8 = 3.3333."""
    p = _write(tmp_path, "hp.csv", MEM_HP)
    (k,) = load_likwid(p).kernels
    assert k.flop == {"fp16": 3_200_001_000.0}
    assert k.bytes == {"DRAM": 9.6e8} and k.seconds == 1.0
    assert not any("no FLOP counted" in n for n in k.meta["notes"])
    a = _analysis(capsys, ["likwid", p, "--on", "Xeon Platinum 8480+", "--json"])
    assert a["ai"] == pytest.approx(3.333334, rel=1e-6)
    assert a["achieved_flop_per_s"] == pytest.approx(3.200001e9)


def test_flops_hp_scalar_event_and_the_hp_metric(tmp_path):
    """FLOPS_HP.txt counts scalar half as FP_ARITH_INST_RETIRED2_SCALAR (x 1): 7 + 8 x 5 +
    16 x 3 = 95 FLOP. Without raw FP events, 'HP [MFLOP/s]' x Region Info's time: 3200.0010
    x 1e6 x 1.0 s = 3.200001e9 fp16."""
    raw = SPR + ["TABLE,Group 1 Raw,FLOPS_HP,4,", "Event,Counter,HWThread 0,,",
                 "Runtime (RDTSC) [s],TSC,1.000000e+00,,",
                 "FP_ARITH_INST_RETIRED2_SCALAR,PMC0,7,,",
                 "FP_ARITH_INST_RETIRED2_128B_PACKED_HALF,PMC1,5,,",
                 "FP_ARITH_INST_RETIRED2_256B_PACKED_HALF,PMC2,3,,",
                 "CAS_COUNT_RD,MBOX0C0,100,,"]
    (k,) = load_likwid(_write(tmp_path, "flops_hp.csv", raw)).kernels
    assert k.flop == {"fp16": 95.0}
    rate = [ln for ln in MEM_HP if not ln.startswith("FP_ARITH")]
    (k,) = load_likwid(_write(tmp_path, "rate.csv", rate)).kernels
    assert k.flop == {"fp16": pytest.approx(3.200001e9)}


# --- F3: Zen 4's MEM1 + MEM2 see 8 of an EPYC 9004's 12 channels ----------------------------

def _zen_mem(group: int, name: str, first: int, beats: int) -> list[str]:
    """zen4/MEM1.txt (channels 0-3) or MEM2.txt (4-7): DRAM_CHANNEL_N on DFC0-3."""
    return [f"TABLE,Group {group} Raw,{name},6,", "Event,Counter,HWThread 0,,",
            "ACTUAL_CPU_CLOCK,FIXC1,1000,,"] + \
           [f"DRAM_CHANNEL_{c},DFC{c - first},{beats},," for c in range(first, first + 4)] + \
           [f"TABLE,Group {group} Metric,{name},2,", "Metric,HWThread 0,,,",
            "Runtime (RDTSC) [s],1.0000,,,",
            f"Memory data volume (channels {first}-{first + 3}) [GBytes],"
            f"{4 * beats * 64e-9:.4f},,,"]


def test_zen4_mem1_mem2_say_four_of_twelve_channels_are_missing(tmp_path):
    """EPYC 9654: 12 channels; MEM1 + MEM2 count 0-7: 8 x 1e6 x 64 B = 5.12e8 B with a note
    that 8/12 were counted and -g MEM counts them all (the bytes are left as counted)."""
    p = _write(tmp_path, "zen4.csv",
               ZEN4 + _zen_mem(1, "MEM1", 0, 1_000_000) + _zen_mem(2, "MEM2", 4, 1_000_000))
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 5.12e8}
    (note,) = [n for n in k.meta["notes"] if n.startswith("only channels 0-7 counted")]
    assert "has 12" in note and "8/12" in note and "on AMD Zen 4 measure -g MEM" in note


def test_zen4_without_a_memory_group_is_sent_to_mem_not_told_there_is_none(tmp_path, capsys):
    """The skip hint on Zen 4 names -g MEM (likwid's zen4 has it); Zen 3's stays MEM1/MEM2."""
    flops = ["TABLE,Group 1 Raw,FLOPS_DP,2,", "Event,Counter,HWThread 0,,",
             "Runtime (RDTSC) [s],TSC,1.000000e+00,,",
             "RETIRED_SSE_AVX_FLOPS_ALL,PMC0,2000000000,,"]
    p = _write(tmp_path, "flops4.csv", ZEN4 + flops)
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err
    assert "on AMD Zen 4 measure -g MEM (" in err and "no MEM or MEM_DP group" not in err
    p = _write(tmp_path, "flops3.csv", ZEN3 + flops)
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 2
    assert "on AMD Zen 3 measure -g MEM1 -g MEM2" in capsys.readouterr().err


# --- F4: Zen 4's UMC CAS_CMD_RD / CAS_CMD_WR ------------------------------------------------

def _custom(cas: list[str]) -> list[str]:
    return ZEN4 + ["TABLE,Group 1 Raw,Custom,4,", "Event,Counter,HWThread 0,,",
                   "Runtime (RDTSC) [s],TSC,1.000000e+00,,",
                   "RETIRED_SSE_AVX_FLOPS_ALL,PMC0,2000000000,,"] + cas


def test_zen4_cas_cmd_rd_wr_are_dram_bytes(tmp_path):
    """64 x (1e7 + 5e6) = 9.6e8 B; FLOP 2e9 (read as the group's fp64); 1 s."""
    p = _write(tmp_path, "cas.csv", _custom(["CAS_CMD_RD,UMC0C0,10000000,,",
                                             "CAS_CMD_WR,UMC0C1,5000000,,"]))
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 9.6e8} and k.flop == {"fp64": 2e9} and k.seconds == 1.0


def test_zen4_mem_group_sums_its_umcs(tmp_path):
    """zen4/MEM.txt puts CAS_CMD_RD/WR on every UMC: two UMCs, 64 x (1e7 + 2e7 + 5e6 + 5e6)
    = 2.56e9 B."""
    p = _write(tmp_path, "mem.csv", _custom(["CAS_CMD_RD,UMC0C0,10000000,,",
                                             "CAS_CMD_WR,UMC0C1,5000000,,",
                                             "CAS_CMD_RD,UMC1C0,20000000,,",
                                             "CAS_CMD_WR,UMC1C1,5000000,,"]))
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 2.56e9}


def test_cas_cmd_any_alone_counts_and_beside_rd_wr_is_not_counted_again(tmp_path):
    """CAS_CMD_ANY alone: 64 x 1.5e7 = 9.6e8 B. Beside CAS_CMD_RD + WR (the same CAS
    again): 64 x (1e7 + 5e6) = 9.6e8, not 1.92e9."""
    (k,) = load_likwid(_write(tmp_path, "any.csv",
                              _custom(["CAS_CMD_ANY,UMC0C0,15000000,,"]))).kernels
    assert k.bytes == {"DRAM": 9.6e8}
    (k,) = load_likwid(_write(tmp_path, "all.csv", _custom(
        ["CAS_CMD_RD,UMC0C0,10000000,,", "CAS_CMD_WR,UMC0C1,5000000,,",
         "CAS_CMD_ANY,UMC0C2,15000000,,"]))).kernels
    assert k.bytes == {"DRAM": 9.6e8}


# --- F9: Xeon Max's HBM_DP group ------------------------------------------------------------

XEON_MAX = ["STRUCT,Info,3,,", "CPU name:,Intel(R) Xeon(R) CPU Max 9480,,,",
            "CPU type:,Intel SapphireRapids processor,,,", "CPU clock:,1.90 GHz,,,"]
HBM_DP = XEON_MAX + [
    "TABLE,Group 1 Raw,HBM_DP,5,",
    "Event,Counter,HWThread 0,,",
    "FP_ARITH_INST_RETIRED_512B_PACKED_DOUBLE,PMC3,100000000,,",
    "CAS_COUNT_RD,HBM0C0,10000000,,",
    "CAS_COUNT_WR,HBM0C1,5000000,,",
    "CAS_COUNT_RD,HBM1C0,10000000,,",
    "CAS_COUNT_WR,HBM1C1,5000000,,",
    "TABLE,Group 1 Metric,HBM_DP,3,",
    "Metric,HWThread 0,,,",
    "Runtime (RDTSC) [s],1.0000,,,",
    "DP [MFLOP/s],800.0000,,,",
    "HBM data volume [GBytes],1.9200,,,",
]


def test_hbm_dp_bytes_say_they_are_hbm(tmp_path):
    """64 x (1e7 + 5e6) x 2 HBM stacks = 1.92e9 B, FLOP 8 x 1e8 = 8e8, with a note that
    these are HBM bytes; with the raw counts unknown ('-'), the 'HBM data volume' metric
    (1.92 GB) is read instead, with the same note. A DDR MBOX group has no such note."""
    (k,) = load_likwid(_write(tmp_path, "hbm.csv", HBM_DP)).kernels
    assert k.bytes == {"DRAM": 1.92e9} and k.flop == {"fp64": 8e8}
    assert any(n.startswith("HBM group: these DRAM bytes are Xeon Max's HBM traffic")
               for n in k.meta["notes"])
    unknown = [ln.replace(",10000000,,", ",-,,").replace(",5000000,,", ",-,,")
               for ln in HBM_DP]
    imp = load_likwid(_write(tmp_path, "hbm_metric.csv", unknown))
    (k,) = imp.kernels
    assert k.bytes == {"DRAM": 1.92e9}
    assert any("CAS_COUNT_RD: no thread has a value" in s.reason for s in imp.skips)
    assert any(n.startswith("HBM group:") for n in k.meta["notes"])
    (k,) = load_likwid(_write(tmp_path, "ddr.csv", SMALL)).kernels
    assert not any("HBM" in n for n in k.meta["notes"])


# --- F10: likwid-mpirun's Region calls ------------------------------------------------------

MPIRUN = [
    "TABLE,Region triad,Group 1 Raw,MEM_DP,8,,",
    "Event,Counter,node1:0:0,node1:1:18,",
    "Runtime (RDTSC) [s],TSC,0.8,0.9,",
    "Region calls,CTR,100,100,",
    "FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE,PMC2,100000000,100000000,",
    "CAS_COUNT_RD,MBOX0C0,20000000,20000000,",
    "CAS_COUNT_WR,MBOX0C1,10000000,10000000,",
]


def test_mpirun_region_calls_row_is_the_call_count(tmp_path):
    """printMpiOutput's Raw row 'Region calls,CTR,100,100': calls 100. FLOP 2 ranks x 4 x
    1e8 = 8e8; bytes 64 x (2 x 2e7 + 2 x 1e7) = 3.84e9; t = the longest rank's 0.9 s."""
    (k,) = load_likwid(_write(tmp_path, "mpi.csv", MPIRUN)).kernels
    assert k.calls == 100
    assert k.flop == {"fp64": 8e8} and k.bytes == {"DRAM": 3.84e9} and k.seconds == 0.9
