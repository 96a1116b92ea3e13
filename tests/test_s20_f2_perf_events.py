"""rooflab perf, review s20 r1 F5-F8: Granite Rapids' per-sub-channel CAS counts, `perf stat
-j` JSON lines, events one copy of which was not counted (hybrid cpu_atom, --per-socket),
and Ice Lake-SP / Sapphire Rapids' combined fp_arith_inst_retired.scalar/.4_flops/.8_flops.
The inputs follow perf's own layouts (stat-display.c; graniterapids uncore-memory.json);
every expected number is worked by hand in the comments."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.perf_stat import load_perf_stat

MIB = 2.0 ** 20


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _notes(k) -> list[str]:
    return list(k.meta["notes"])


# --- F5: Granite Rapids / Sierra Forest count each DDR5 sub-channel apart -------------------
# perf's graniterapids uncore-memory.json: UNC_M_CAS_COUNT_SCH0.RD "CAS count for SubChannel
# 0, all reads" (and SCH1, .WR); its memory_bandwidth_read metric is (SCH0.RD + SCH1.RD) x 64.
GNR = """\

 Performance counter stats for 'system wide':

     1,001,234,567 ns   duration_time
       400,000,000      fp_arith_inst_retired.512b_packed_double
        10,000,000      UNC_M_CAS_COUNT_SCH0.RD
        10,000,000      UNC_M_CAS_COUNT_SCH1.RD
         5,000,000      UNC_M_CAS_COUNT_SCH0.WR
         5,000,000      UNC_M_CAS_COUNT_SCH1.WR

       1.001234567 seconds time elapsed

"""
# bytes: 64 B x (1e7 + 1e7 + 5e6 + 5e6) CAS = 64 x 3e7 = 1.92e9 B; FLOP: 8 x 4e8 = 3.2e9
GNR_BYTES = 64 * (10_000_000 + 10_000_000 + 5_000_000 + 5_000_000)


def test_gnr_sub_channel_cas_counts_are_dram_bytes(tmp_path):
    (k,) = load_perf_stat(_write(tmp_path, "gnr.txt", GNR)).kernels
    assert GNR_BYTES == 1.92e9
    assert k.bytes == {"DRAM": 1.92e9}
    assert k.flop == {"fp64": 8 * 400_000_000} == {"fp64": 3.2e9}
    assert k.seconds == pytest.approx(1.001234567)
    assert not any(n.startswith(("not read", "no memory-controller")) for n in _notes(k))


def test_gnr_without_on_gets_a_point_not_a_roof_error(tmp_path, capsys):
    """Before: FLOP only, so 'no roof: ... no kernel has both FLOP and bytes'."""
    assert main(["perf", _write(tmp_path, "gnr.txt", GNR), "--json"]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    assert k["bytes"] == {"DRAM": 1.92e9}


def test_gnr_sub_counts_of_the_same_reads_are_not_added(tmp_path):
    """.RD_REG (regular reads) is a part of .RD: adding it would count those reads twice."""
    text = GNR.replace("         5,000,000      UNC_M_CAS_COUNT_SCH0.WR\n",
                       "         5,000,000      UNC_M_CAS_COUNT_SCH0.WR\n"
                       "         9,000,000      UNC_M_CAS_COUNT_SCH0.RD_REG\n")
    (k,) = load_perf_stat(_write(tmp_path, "gnr_reg.txt", text)).kernels
    assert k.bytes == {"DRAM": 1.92e9}
    (unread,) = [n for n in _notes(k) if n.startswith("not read")]
    assert unread.endswith(": unc_m_cas_count_sch0.rd_reg")


def test_gnr_one_sub_channel_only_is_said(tmp_path):
    """SCH0 alone: 64 x (1e7 + 5e6) = 9.6e8 B, about half the traffic, and a note says so."""
    text = "".join(ln for ln in GNR.splitlines(keepends=True) if "SCH1" not in ln)
    (k,) = load_perf_stat(_write(tmp_path, "sch0.txt", text)).kernels
    assert k.bytes == {"DRAM": 64 * 15_000_000} == {"DRAM": 9.6e8}
    (half,) = [n for n in _notes(k) if "sub-channel" in n]
    assert half.startswith("DRAM bytes from sub-channel 0 only") and "SCH1.RD" in half


def test_only_sub_counts_name_the_right_events_and_the_ones_found(tmp_path):
    """No total read/write count: the hint names Granite Rapids' events and says which of
    the file's memory-controller events it did not read, instead of 'no memory-controller
    event' beside a 'not read' list of them."""
    text = "".join(ln for ln in GNR.splitlines(keepends=True) if "UNC_M" not in ln) \
        .replace(" 1.001234567 seconds", "         9,000,000      UNC_M_CAS_COUNT_SCH0.RD_REG"
                 "\n\n       1.001234567 seconds")
    (k,) = load_perf_stat(_write(tmp_path, "reg.txt", text)).kernels
    assert k.bytes == {}
    (hint,) = [n for n in _notes(k) if n.startswith("no memory-controller event")]
    assert "UNC_M_CAS_COUNT_SCH0.RD, UNC_M_CAS_COUNT_SCH1.RD" in hint
    assert "the file's unc_m_cas_count_sch0.rd_reg is not among them" in hint


# --- F6: perf stat -j, one JSON object per line (stat-display.c print_counter_value_json) --
JSON_LINES = """\
{"counter-value" : "2001234567.000000", "unit" : "ns", "event" : "duration_time", "event-runtime" : 2001234567, "pcnt-running" : 100.00, "metric-value" : "0.000000", "metric-unit" : ""}
{"counter-value" : "12345678.000000", "unit" : "", "event" : "fp_arith_inst_retired.scalar_double", "event-runtime" : 1333000000, "pcnt-running" : 66.61, "metric-value" : "0.000000", "metric-unit" : ""}
{"counter-value" : "250000000.000000", "unit" : "", "event" : "fp_arith_inst_retired.512b_packed_double", "event-runtime" : 1333000000, "pcnt-running" : 66.72, "metric-value" : "0.000000", "metric-unit" : ""}
{"counter-value" : "1234.560000", "unit" : "MiB", "event" : "uncore_imc/cas_count_read/", "event-runtime" : 2001234567, "pcnt-running" : 100.00, "metric-value" : "0.000000", "metric-unit" : ""}
{"counter-value" : "567.890000", "unit" : "MiB", "event" : "uncore_imc/cas_count_write/", "event-runtime" : 2001234567, "pcnt-running" : 100.00, "metric-value" : "0.000000", "metric-unit" : ""}
"""  # noqa: E501


def test_json_lines_are_read_as_the_csv_fields(tmp_path):
    """FLOP 12345678 + 8 x 2.5e8 = 2.012345678e9; bytes (1234.56 + 567.89) MiB =
    1802.45 x 2^20 = 1.8900058112e9 B; time: duration_time 2001234567 ns (no footer)."""
    (k,) = load_perf_stat(_write(tmp_path, "run.json", JSON_LINES)).kernels
    assert k.flop == {"fp64": 12_345_678 + 8 * 250_000_000} == {"fp64": 2.012345678e9}
    assert k.bytes == {"DRAM": pytest.approx(1802.45 * MIB)}
    assert k.bytes["DRAM"] == pytest.approx(1.8900058112e9)
    assert k.seconds == pytest.approx(2.001234567)
    notes = _notes(k)
    assert "time = duration_time (perf -j prints no 'seconds time elapsed')" in notes
    assert any(n.startswith("fp_arith_inst_retired.scalar_double counted 66.61 % of the time")
               for n in notes)


def test_json_per_socket_with_a_metric_line_and_a_header(tmp_path):
    """--per-socket -j: "socket" and "aggregate-number" keys; a metric's own line (no
    counter-value) is not a count; -o's '# started on' header is a comment. FLOP 2 x 5e7
    scalar = 1e8; bytes (30 + 20) MiB; time 1e9 ns, not added across sockets (S1's
    <not counted> duration_time is perf printing the wall time once)."""
    row = ('{{"socket" : "{s}", "aggregate-number" : 8, "counter-value" : "{v}", '
           '"unit" : "{u}", "event" : "{e}", "event-runtime" : 1000000000, '
           '"pcnt-running" : 100.00, "metric-value" : "0.000000", "metric-unit" : ""}}\n')
    text = ("# started on Tue Dec  1 18:00:00 2026\n\n"
            + row.format(s="S0", v="1000000000.000000", u="ns", e="duration_time")
            + row.format(s="S0", v="50000000.000000", u="",
                         e="fp_arith_inst_retired.scalar_double")
            + '{"socket" : "S0", "aggregate-number" : 8, "metric-value" : "0.050000", '
              '"metric-unit" : "GFLOPS"}\n'
            + row.format(s="S0", v="30.000000", u="MiB", e="uncore_imc/cas_count_read/")
            + row.format(s="S1", v="<not counted>", u="ns", e="duration_time")
            + row.format(s="S1", v="50000000.000000", u="",
                         e="fp_arith_inst_retired.scalar_double")
            + row.format(s="S1", v="20.000000", u="MiB", e="uncore_imc/cas_count_write/"))
    imp = load_perf_stat(_write(tmp_path, "sock.json", text))
    (k,) = imp.kernels
    assert k.flop == {"fp64": 1e8} and k.bytes == {"DRAM": 50 * MIB}
    assert k.seconds == 1.0 and k.meta["sockets"] == 2
    assert imp.skips == ()
    assert not any("not counted" in n for n in _notes(k))


@pytest.mark.parametrize("line, words", [
    ('{"interval" : 1.000123456, "counter-value" : "5.000000", "unit" : "", '
     '"event" : "cycles", "event-runtime" : 1, "pcnt-running" : 100.00}', "interval output"),
    # de_DE: perf's %f and %.2f write a decimal comma, which breaks its own JSON
    ('{"counter-value" : "1234,560000", "unit" : "MiB", "event" : '
     '"uncore_imc/cas_count_read/", "event-runtime" : 1, "pcnt-running" : 100,00}',
     "LC_ALL=C"),
], ids=["interval", "decimal-comma"])
def test_json_that_cannot_be_read_is_a_line_numbered_error(tmp_path, line, words):
    p = _write(tmp_path, "bad.json", line + "\n")
    with pytest.raises(ParseError, match=words) as err:
        load_perf_stat(p)
    assert err.value.line == 1


# --- F7: <not counted> on one copy, counted on another ---------------------------------------
HYBRID = """\

 Performance counter stats for './stream' (5 runs):

       250,000,000      cpu_core/fp_arith_inst_retired.256b_packed_double/          ( +-  0.01% )
   <not supported>      cpu_atom/fp_arith_inst_retired.256b_packed_double/
            640.00 MiB  uncore_imc_free_running/data_read/                          ( +-  1.20% )
            320.00 MiB  uncore_imc_free_running/data_write/                         ( +-  2.10% )

           1.00123 +- 0.00456 seconds time elapsed  ( +-  0.46% )

"""
HYBRID_CSV = """\
1001234567,ns,duration_time,1001234567,100.00,0.12,,
250000000,,cpu_core/fp_arith_inst_retired.256b_packed_double/,1001234567,100.00,0.01,,
<not supported>,,cpu_atom/fp_arith_inst_retired.256b_packed_double/,0,100.00,,,
640.00,MiB,uncore_imc_free_running/data_read/,1001234567,100.00,1.20,,
320.00,MiB,uncore_imc_free_running/data_write/,1001234567,100.00,2.10,,
"""


@pytest.mark.parametrize("name, text, seconds", [("hybrid.txt", HYBRID, 1.00123),
                                                 ("hybrid.csv", HYBRID_CSV, 1.001234567)],
                         ids=["text", "csv"])
def test_hybrid_atom_copy_not_supported_is_no_not_counted_note(tmp_path, name, text, seconds):
    """cpu_core counted 2.5e8 256-bit DP = 1e9 FLOP; cpu_atom has no such event. The FLOP
    are not 'missing' (no 'not counted ... FLOP or bytes read low', no warning); a note says
    only what ran on the atom cores is not in the count. Bytes (640 + 320) MiB."""
    imp = load_perf_stat(_write(tmp_path, name, text))
    (k,) = imp.kernels
    assert k.flop == {"fp64": 4 * 250_000_000} and k.bytes == {"DRAM": 960 * MIB}
    assert k.seconds == pytest.approx(seconds)
    assert imp.skips == ()
    assert not any(n.startswith("not counted") for n in _notes(k))
    (part,) = [n for n in _notes(k) if "not counted on cpu_atom" in n]
    assert part.startswith("fp_arith_inst_retired.256b_packed_double read from the copies")


def test_hybrid_with_only_core_events_counted_is_no_no_pmu_error(tmp_path):
    """Every hardware event counted on cpu_core, <not supported> on cpu_atom: the machine
    has a PMU. Before: 'every hardware event is <not supported>' (exit 2)."""
    text = "".join(ln + "\n" for ln in HYBRID_CSV.splitlines() if "uncore" not in ln)
    (k,) = load_perf_stat(_write(tmp_path, "core_only.csv", text)).kernels
    assert k.flop == {"fp64": 1e9} and k.bytes == {}


PER_SOCKET = """\

 Performance counter stats for 'system wide':

S0        1              27.01 MiB  uncore_imc/cas_count_write/
S0        1              30.22 MiB  uncore_imc/cas_count_read/
S0        1      1,001,102,293 ns   duration_time
S0       20         50,000,000      fp_arith_inst_retired.scalar_double
S1        1              20.10 MiB  uncore_imc/cas_count_write/
S1        1              32.74 MiB  uncore_imc/cas_count_read/
S1        0      <not counted> ns   duration_time
S1       20         50,000,000      fp_arith_inst_retired.scalar_double

       1.001102293 seconds time elapsed

"""


def test_per_socket_duration_time_not_counted_on_s1_is_no_warning(tmp_path):
    """perf prints the wall time on S0 only. FLOP 2 x 5e7 = 1e8; bytes 27.01 + 30.22 +
    20.10 + 32.74 = 110.07 MiB; time 1.001102293 s. Before: a warning and 'not counted:
    duration_time (... FLOP or bytes read low)'."""
    imp = load_perf_stat(_write(tmp_path, "sock.txt", PER_SOCKET))
    (k,) = imp.kernels
    assert k.flop == {"fp64": 1e8}
    assert k.bytes == {"DRAM": pytest.approx(110.07 * MIB)}
    assert k.seconds == pytest.approx(1.001102293)
    assert imp.skips == ()
    assert not any("duration_time" in n and "counted" in n for n in _notes(k))


def test_per_socket_hardware_event_not_counted_on_one_socket_is_said(tmp_path):
    """A count missing on S1 only: read from S0 (5e7 FLOP) with a note naming S1."""
    text = PER_SOCKET.replace("S1       20         50,000,000      fp_arith",
                              "S1       20      <not counted>      fp_arith")
    (k,) = load_perf_stat(_write(tmp_path, "s1.txt", text)).kernels
    assert k.flop == {"fp64": 5e7}
    assert any("not counted on S1" in n for n in _notes(k))


# --- F8: fp_arith_inst_retired.scalar / .4_flops / .8_flops ----------------------------------
# intel/perfmon: .SCALAR = scalar single + double (1 FLOP each), .4_FLOPS = 128-bit packed
# single + 256-bit packed double (4 each), .8_FLOPS = 256-bit packed single + 512-bit packed
# double (8 each); an FMA counts twice, as in the per-precision events.
ICX = """\
1000000000,ns,duration_time,1000000000,100.00,,
1000,,fp_arith_inst_retired.scalar,1000000000,100.00,,
5000,,fp_arith_inst_retired.4_flops,1000000000,100.00,,
7000,,fp_arith_inst_retired.8_flops,1000000000,100.00,,
64.00,MiB,uncore_imc/cas_count_read/,1000000000,100.00,,
0.00,MiB,uncore_imc/cas_count_write/,1000000000,100.00,,
"""
# 1 x 1000 + 4 x 5000 + 8 x 7000 = 1000 + 20000 + 56000 = 77000 FLOP over 64 MiB
ICX_FLOP = 77_000


@pytest.mark.parametrize("precision, kind", [(None, "fp64"), ("fp32", "fp32")])
def test_combined_events_are_read_with_their_weights(tmp_path, precision, kind):
    (k,) = load_perf_stat(_write(tmp_path, "icx.csv", ICX), precision=precision).kernels
    assert ICX_FLOP == 1 * 1000 + 4 * 5000 + 8 * 7000
    assert k.flop == {kind: ICX_FLOP} and k.bytes == {"DRAM": 64 * MIB}
    notes = _notes(k)
    assert not any(n.startswith(("no FP event", "not read")) for n in notes)
    (mixed,) = [n for n in notes if "count fp64 and fp32 instructions together" in n]
    assert "4_flops: 256b_packed_double or 128b_packed_single, 4 FLOP each" in mixed
    assert not any("not applied" in n for n in notes)


def test_combined_event_less_its_known_part_is_the_other_precision(tmp_path):
    """4_flops 5000 with 256b_packed_double 3000 in the file: the other 2000 are 128-bit
    packed single. fp64 = 4 x 3000 = 12000, fp32 = 4 x 2000 = 8000 (not 4 x 5000 more)."""
    text = ICX.replace("1000,,fp_arith_inst_retired.scalar,1000000000,100.00,,\n", "") \
        .replace("7000,,fp_arith_inst_retired.8_flops,1000000000,100.00,,\n",
                 "3000,,fp_arith_inst_retired.256b_packed_double,1000000000,100.00,,\n")
    (k,) = load_perf_stat(_write(tmp_path, "part.csv", text)).kernels
    assert k.flop == {"fp64": 12_000, "fp32": 8_000}
    assert any("read as fp_arith_inst_retired.128b_packed_single" in n for n in _notes(k))


def test_combined_event_with_both_parts_is_not_counted_again(tmp_path):
    """8_flops 7000 = 512b_packed_double 4000 + 256b_packed_single 3000: fp64 8 x 4000 =
    32000, fp32 8 x 3000 = 24000; 8 x 7000 on top would double them."""
    text = ICX.replace("1000,,fp_arith_inst_retired.scalar,1000000000,100.00,,\n", "") \
        .replace("5000,,fp_arith_inst_retired.4_flops,1000000000,100.00,,\n",
                 "4000,,fp_arith_inst_retired.512b_packed_double,1000000000,100.00,,\n"
                 "3000,,fp_arith_inst_retired.256b_packed_single,1000000000,100.00,,\n")
    (k,) = load_perf_stat(_write(tmp_path, "both.csv", text)).kernels
    assert k.flop == {"fp64": 32_000, "fp32": 24_000}
    assert any(n.startswith("fp_arith_inst_retired.8_flops left out") for n in _notes(k))
