"""rooflab perf / likwid on AMD CPUs (review 16a B, M, L3): the data fabric's and the UMCs'
DRAM events of `perf stat`, likwid's Zen 3 MEM1/MEM2 groups, a VM without a PMU, and
--precision for AMD's FLOP events, which count every precision.

The hand case is review 16a's 7-point Jacobi stencil (N = 256, 20 sweeps): 254^3 x 20 =
3.2774e8 points x 8 FLOP = 2.62193e9 FLOP; DRAM 24 B/point (b read, a read + write-
allocated) = 7.8658e9 B; 0.754704 s. AI = 2.62193e9 / 7.8658e9 = 0.3333; achieved
2.62193e9 / 0.754704 s = 3.474 GFLOP/s. Files are laid out as tests/test_perf_stat.py (perf
-x, as perf-stat.txt's CSV FORMAT) and tests/test_likwid.py (likwid.lua's printcsv) lay
them out; event names as Linux perf's tools/perf/pmu-events/arch/x86/amdzen4 (data-fabric:
"Read data beats (64 bytes) for local processor at Coherent Station N"; memory-controller:
umc_cas_cmd.rd/.wr) and likwid's perfgroups/zen3/MEM1.txt, MEM2.txt name them."""

from __future__ import annotations

import json

import pytest
from test_likwid import _pad

from rooflab.cli.main import main
from rooflab.errors import InputError, ParseError
from rooflab.ingest.likwid import load_likwid
from rooflab.ingest.perf_stat import load_perf_stat

FLOP = 2_621_930_000
SECONDS = 0.754704
READ_BEATS, WRITE_BEATS = 81_935_325, 40_967_662
BYTES = (READ_BEATS + WRITE_BEATS) * 64            # 7,865,791,168 B
HEAD = "# started on Mon Nov 30 11:45:00 2026\n\n754704000,ns,duration_time,754704000,100.00,,\n"
AMD_FP = "2621930000,,fp_ret_sse_avx_ops.all,1509408000,100.00,,\n"


def _line(value, event: str, unit: str = "") -> str:
    return f"{value},{unit},{event},754704000,100.00,,\n"


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _analysis(capsys, args: list[str], code: int = 0) -> dict:
    assert main(args) == code
    return json.loads(capsys.readouterr().out)["analysis"][0]


# --- B: perf stat's AMD DRAM events ---------------------------------------------------

DF = HEAD + AMD_FP + _line(READ_BEATS, "amd_df/local_processor_read_data_beats_cs0/") + \
    _line(WRITE_BEATS, "amd_df/local_processor_write_data_beats_cs0/")


def test_amd_data_fabric_beats_are_64_bytes_each(tmp_path, capsys):
    """(81,935,325 + 40,967,662) beats x 64 B = 7.866e9 B: the stencil's point, AI 0.333,
    3.474 GFLOP/s, as the Intel IMC variant of the same run gives (review 16a B)."""
    p = _write(tmp_path, "perf_amd.csv", DF)
    (k,) = load_perf_stat(p).kernels
    assert k.flop == {"fp64": FLOP} and k.bytes == {"DRAM": BYTES}
    assert BYTES == 7_865_791_168
    a = _analysis(capsys, ["perf", p, "--on", "EPYC 9654", "--json"])
    assert a["ai"] == pytest.approx(0.33333, rel=1e-4)
    assert a["achieved_flop_per_s"] == pytest.approx(3.474e9, rel=1e-3)
    assert any("channels cs0" in n and "cs0-cs11" in n for n in k.meta["notes"])


def test_data_fabric_channels_add_up_and_names_without_the_pmu_are_read(tmp_path):
    """Two channels, one named `amd_df/.../`, one as `perf list` names the JSON event:
    (1e8 + 2e8) read + 5e7 write beats x 64 B = 2.24e10 B."""
    text = (HEAD + AMD_FP + _line(100_000_000, "amd_df/local_processor_read_data_beats_cs0/")
            + _line(200_000_000, "local_processor_read_data_beats_cs1")
            + _line(50_000_000, "amd_df/local_processor_write_data_beats_cs1/"))
    (k,) = load_perf_stat(_write(tmp_path, "two.csv", text)).kernels
    assert k.bytes == {"DRAM": 3.5e8 * 64}
    assert any("channels cs0, cs1" in n for n in k.meta["notes"])


def test_amd_umc_cas_commands_are_64_bytes_each_summed_over_controllers(tmp_path):
    """Linux 6.x amd_umc_N/umc_cas_cmd.rd/ and .wr/: (6e7 + 6e7) reads + 3e7 writes x 64 B
    = 9.6e9 B; the data fabric's beats of the same run count the same traffic: not added."""
    text = (HEAD + AMD_FP + _line(60_000_000, "amd_umc_0/umc_cas_cmd.rd/")
            + _line(60_000_000, "amd_umc_1/umc_cas_cmd.rd/")
            + _line(30_000_000, "amd_umc_0/umc_cas_cmd.wr/")
            + _line(READ_BEATS, "amd_df/local_processor_read_data_beats_cs0/"))
    (k,) = load_perf_stat(_write(tmp_path, "umc.csv", text)).kernels
    assert k.bytes == {"DRAM": 1.5e8 * 64} == {"DRAM": 9.6e9}
    assert any("AMD data fabric events left out" in n for n in k.meta["notes"])


def test_amd_fp_without_dram_names_the_amd_events_and_unread_ones(tmp_path, capsys):
    """The hint names amd_df / amd_umc, not Intel's uncore_imc; events rooflab does not read
    (remote beats, instructions) are listed in one note, not dropped without a word."""
    text = (HEAD + AMD_FP + _line(1234, "instructions")
            + _line(99, "amd_df/remote_processor_read_data_beats_cs0/"))
    p = _write(tmp_path, "nodram.csv", text)
    (k,) = load_perf_stat(p).kernels
    assert k.flop == {"fp64": FLOP} and k.bytes == {}
    (hint,) = [n for n in k.meta["notes"] if n.startswith("no memory-controller event")]
    assert "amd_df/local_processor_read_data_beats_cs0/" in hint and "umc_cas_cmd.rd" in hint
    assert "uncore_imc" not in hint
    (unread,) = [n for n in k.meta["notes"] if n.startswith("not read")]
    assert unread.endswith(": instructions, amd_df/remote_processor_read_data_beats_cs0/")


def test_a_machine_without_pmu_is_one_clear_line(tmp_path, capsys):
    """A KVM guest without vPMU: every hardware event <not supported>, only the software
    duration_time has a value: one error, exit 2, not five contradicting notes."""
    text = (HEAD.replace("754704000", "554407156")
            + "<not supported>,,instructions,0,100.00,,\n"
            + "<not supported>,,cycles,0,100.00,,\n")
    p = _write(tmp_path, "real.csv", text)
    assert main(["perf", p, "--on", "EPYC 9654"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"error: {p}: every hardware event is <not supported>: this machine exposes no PMU "
        f"(a VM without vPMU?); perf cannot count FLOP or bytes here"]
    with pytest.raises(ParseError, match="no PMU"):
        load_perf_stat(p)


def test_one_supported_hardware_event_is_not_a_missing_pmu(tmp_path):
    """cycles counted, only the uncore <not supported> (no -a rights): a PMU is there."""
    text = (HEAD + AMD_FP + "<not supported>,,amd_df/local_processor_read_data_beats_cs0/,"
            "0,100.00,,\n")
    (k,) = load_perf_stat(_write(tmp_path, "partial.csv", text)).kernels
    assert k.flop == {"fp64": FLOP}


# --- L3: --precision --------------------------------------------------------------------

def test_perf_precision_fp32_reads_amd_flop_as_fp32(tmp_path, capsys):
    """1e12 FLOP in 1 s, compute-bound on EPYC 9654 (96 cores x 3.55 GHz all-core boost x
    16 fp64 FLOP/cycle = 5.4528e12; fp32 10.9056e12): 18.3 % of the fp64 roof, 9.2 % of the
    fp32 one."""
    text = ("1000000000,ns,duration_time,1000000000,100.00,,\n"
            "1000000000000,,fp_ret_sse_avx_ops.all,1000000000,100.00,,\n"
            + _line(1_000_000, "amd_umc_0/umc_cas_cmd.rd/")
            + _line(1_000_000, "amd_umc_0/umc_cas_cmd.wr/"))
    p = _write(tmp_path, "fp32.csv", text)
    a64 = _analysis(capsys, ["perf", p, "--on", "EPYC 9654", "--json"])
    a32 = _analysis(capsys, ["perf", p, "--on", "EPYC 9654", "--json", "--precision", "fp32"])
    assert a64["precision"] == "fp64" and a32["precision"] == "fp32"
    assert a64["percent_of_roof"] == pytest.approx(100 / 5.4528, rel=1e-3)
    assert a32["percent_of_roof"] == pytest.approx(100 / 10.9056, rel=1e-3)
    (k,) = load_perf_stat(p, precision="FP32").kernels
    assert k.flop == {"fp32": 1e12}
    assert any("read as fp32 (--precision fp32)" in n for n in k.meta["notes"])


def test_precision_is_noted_where_the_events_say_the_precision(tmp_path):
    text = HEAD + _line(327_741_300, "fp_arith_inst_retired.512b_packed_double")
    (k,) = load_perf_stat(_write(tmp_path, "intel.csv", text), precision="fp32").kernels
    assert k.flop == {"fp64": 327_741_300 * 8}
    assert any(n.startswith("--precision fp32 not applied") for n in k.meta["notes"])


def test_an_unknown_precision_is_a_clear_error(tmp_path, capsys):
    p = _write(tmp_path, "perf_amd.csv", DF)
    assert main(["perf", p, "--on", "EPYC 9654", "--precision", "fp9"]) == 2
    err = capsys.readouterr().err
    assert "--precision fp9" in err and "fp64, fp32, fp16, bf16" in err
    assert "Traceback" not in err
    with pytest.raises(InputError):
        load_likwid(p, precision="double")


# --- M: likwid's Zen 3 MEM1 / MEM2 groups -------------------------------------------------

def _zen3_info() -> list[str]:
    return ["STRUCT,Info,3", "CPU name:,AMD EPYC 7763 64-Core Processor",
            "CPU type:,AMD K19 (Zen3) architecture", "CPU clock:,2.45 GHz"]


def _flops_dp(time: float = SECONDS) -> list[str]:
    """likwid's zen3 FLOPS_DP group: RETIRED_SSE_AVX_FLOPS_ALL, 2 threads x 1,310,965,000."""
    tag = "TABLE,Region jacobi,Group 1"
    return [f"{tag} Raw,FLOPS_DP,3", "Region Info,HWThread 0,HWThread 1",
            f"RDTSC Runtime [s],{time},{time}", "call count,20,20",
            "Event,Counter,HWThread 0,HWThread 1",
            "RETIRED_SSE_AVX_FLOPS_ALL,PMC2,1310965000,1310965000", "MERGE,PMC3,0,0",
            f"{tag} Metric,FLOPS_DP,2", "Metric,HWThread 0,HWThread 1",
            f"Runtime (RDTSC) [s],{time},{time}", "DP [MFLOP/s],1737.0600,1737.0600"]


def _mem(group: int, name: str, first: int, beats: int, time: float = SECONDS,
         metric: bool = True) -> list[str]:
    """MEM1 (channels 0-3) or MEM2 (4-7): DRAM_CHANNEL_N on the data fabric counters,
    counted by HWThread 0 (one per socket); volume = 1e-9 x sum x 64 (zen3/MEM1.txt)."""
    tag = f"TABLE,Region jacobi,Group {group}"
    chans = range(first, first + 4)
    out = [f"{tag} Raw,{name},5", "Region Info,HWThread 0,HWThread 1",
           f"RDTSC Runtime [s],{time},{time}", "call count,20,20",
           "Event,Counter,HWThread 0,HWThread 1", "ACTUAL_CPU_CLOCK,FIXC1,1,1"]
    out += [f"DRAM_CHANNEL_{c},DFC{c - first},{beats},0" for c in chans]
    if metric:
        span = f"(channels {first}-{first + 3})"
        out += [f"{tag} Metric,{name},3", "Metric,HWThread 0,HWThread 1",
                f"Runtime (RDTSC) [s],{time},{time}",
                f"Memory bandwidth {span} [MBytes/s],{4 * beats * 64 / time / 1e6:.4f},0",
                f"Memory data volume {span} [GBytes],{4 * beats * 64 * 1e-9:.4f},0"]
    return out


BEATS = 15_362_873    # per channel: 8 x 15,362,873 x 64 B = 7.8658e9 B


def test_zen3_mem1_and_mem2_add_up(tmp_path, capsys):
    """3.9329 + 3.9329 GB (MEM1 + MEM2, the metric's 4 decimals) = 7.8658e9 B with FLOPS_DP's
    2.62193e9 FLOP: AI 0.3333, 3.474 GFLOP/s, the same point as perf's (review 16a M)."""
    text = _pad(_zen3_info() + _flops_dp() + _mem(2, "MEM1", 0, BEATS) + _mem(3, "MEM2", 4, BEATS))
    p = _write(tmp_path, "zen3.csv", text)
    (k,) = load_likwid(p).kernels
    assert k.flop == {"fp64": FLOP}
    assert k.bytes == {"DRAM": 8 * BEATS * 64} and k.seconds == SECONDS
    assert any("channels 0-3 (group MEM1) + channels 4-7 (group MEM2)" in n
               for n in k.meta["notes"])
    a = _analysis(capsys, ["likwid", p, "--on", "EPYC 9654", "--json"])
    assert a["ai"] == pytest.approx(0.33333, rel=1e-4)
    assert a["achieved_flop_per_s"] == pytest.approx(3.474e9, rel=1e-3)


def test_raw_dram_channel_counts_are_64_bytes_each(tmp_path):
    """Raw tables only (no Metric table): 8 x 15,362,873 x 64 B = 7,865,790,976 B."""
    text = _pad(_zen3_info() + _flops_dp() + _mem(2, "MEM1", 0, BEATS, metric=False)
                + _mem(3, "MEM2", 4, BEATS, metric=False))
    (k,) = load_likwid(_write(tmp_path, "raw.csv", text)).kernels
    assert k.bytes == {"DRAM": 8 * BEATS * 64} == {"DRAM": 7_865_790_976}


def test_mem2_on_its_own_time_is_put_on_the_flop_groups(tmp_path):
    """MEM2 measured 0.377352 s (half the 0.754704 s of FLOPS_DP): its 3.9329 GB x 2."""
    text = _pad(_zen3_info() + _flops_dp() + _mem(2, "MEM1", 0, BEATS)
                + _mem(3, "MEM2", 4, BEATS, time=SECONDS / 2))
    (k,) = load_likwid(_write(tmp_path, "half.csv", text)).kernels
    assert k.bytes == {"DRAM": 4 * BEATS * 64 * 3}


def test_mem1_alone_says_the_other_channels_are_missing(tmp_path):
    text = _pad(_zen3_info() + _flops_dp() + _mem(2, "MEM1", 0, BEATS))
    (k,) = load_likwid(_write(tmp_path, "mem1.csv", text)).kernels
    assert k.bytes == {"DRAM": 4 * BEATS * 64}
    assert any(n.startswith("only channels 0-3 counted") and "-g MEM1 -g MEM2" in n
               for n in k.meta["notes"])


def test_zen3_without_memory_group_hints_at_mem1_mem2(tmp_path, capsys):
    """The error sends a Zen 3 user to MEM1 + MEM2, which likwid has there, not MEM_DP."""
    p = _write(tmp_path, "flops.csv", _pad(_zen3_info() + _flops_dp()))
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err
    assert "on AMD Zen 3 measure -g MEM1 -g MEM2" in err
    assert err.index("MEM1") < err.index("MEM_DP")


def test_likwid_precision_fp32_reads_retired_sse_avx_flops_as_fp32(tmp_path, capsys):
    text = _pad(_zen3_info() + _flops_dp() + _mem(2, "MEM1", 0, BEATS) + _mem(3, "MEM2", 4, BEATS))
    p = _write(tmp_path, "zen3.csv", text)
    (k,) = load_likwid(p, precision="fp32").kernels
    assert k.flop == {"fp32": FLOP}
    assert any("read as fp32 (--precision fp32)" in n for n in k.meta["notes"])
    a = _analysis(capsys, ["likwid", p, "--on", "EPYC 9654", "--json", "--precision", "fp32"])
    assert a["precision"] == "fp32"

