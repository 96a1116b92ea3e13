"""rooflab perf: `perf stat -x,` and plain `perf stat` output, laid out as perf-stat.txt's
"CSV FORMAT" and builtin-stat.c's sample output give them, numbers checked by hand."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.perf_stat import load_perf_stat

MIB = 2.0 ** 20
# triad, system wide (-a): 1e8 256-bit + 2e6 scalar DP instructions = 4 x 1e8 + 2e6
# = 4.02e8 FLOP; perf prints the IMC's CAS counts x 64 B in MiB: 1536 read + 768 written
# = 2304 MiB; duration_time 5e8 ns = 0.5 s. AI = 4.02e8 / (2304 MiB) = 0.1664.
CSV = """\
# started on Mon Nov 30 09:00:00 2026

500000000,ns,duration_time,500000000,100.00,,
100000000,,fp_arith_inst_retired.256b_packed_double,500012000,100.00,,
2000000,,fp_arith_inst_retired.scalar_double,500012000,100.00,,
0,,fp_arith_inst_retired.512b_packed_double,500012000,100.00,,
1536.00,MiB,uncore_imc/cas_count_read/,500100000,100.00,3072.0,MB/s
768.00,MiB,uncore_imc/cas_count_write/,500100000,100.00,1536.0,MB/s
"""
FLOP = 4 * 100_000_000 + 2_000_000
BYTES = 2304 * MIB

TEXT = """\

 Performance counter stats for './triad 10000000':

       100,000,000      fp_arith_inst_retired.256b_packed_double
         2,000,000      fp_arith_inst_retired.scalar_double
          1,536.00 MiB  uncore_imc/cas_count_read/
            768.00 MiB  uncore_imc/cas_count_write/

       0.500000000 seconds time elapsed

       3.912345000 seconds user
       0.012000000 seconds sys

"""


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_csv_by_hand(tmp_path):
    (k,) = load_perf_stat(_write(tmp_path, "triad.csv", CSV)).kernels
    assert k.flop == {"fp64": FLOP} and k.bytes == {"DRAM": BYTES}
    assert k.seconds == pytest.approx(0.5)
    assert k.flop["fp64"] / k.bytes["DRAM"] == pytest.approx(0.16640, abs=5e-5)
    assert k.name == "triad"                  # -x has no command line: the file's stem
    assert k.provenance == {"flop": "counted", "bytes": "counted", "seconds": "measured"}
    assert any("duration_time" in n for n in k.meta["notes"])


def test_plain_text_with_seconds_time_elapsed(tmp_path):
    (k,) = load_perf_stat(_write(tmp_path, "run.txt", TEXT)).kernels
    assert k.flop == {"fp64": FLOP} and k.bytes == {"DRAM": BYTES}
    assert k.seconds == 0.5 and k.name == "triad 10000000"
    assert any("seconds time elapsed" in n for n in k.meta["notes"])


def test_fp_arith_weights_and_bare_counts(tmp_path):
    """Each width once: 1+2+4+8 fp64 and 1+4+8+16 fp32 FLOP per count; per-CPU lines (-A)
    are added; a CAS count without a unit (the JSON name, no sysfs scale) is 64 B."""
    widths = ("scalar", "128b_packed", "256b_packed", "512b_packed")
    lines = [f"CPU{c},1000,,fp_arith_inst_retired.{w}_{p},1000,100.00,,"
             for c in (0, 1) for p in ("double", "single") for w in widths]
    lines += ["CPU0,1000000,ns,duration_time,1000000,100.00,,",
              "CPU0,3000,,unc_m_cas_count.rd,1000,100.00,,",
              "CPU0,1000,,unc_m_cas_count.wr,1000,100.00,,"]
    (k,) = load_perf_stat(_write(tmp_path, "w.csv", "\n".join(lines) + "\n")).kernels
    assert k.flop == {"fp64": 2 * 1000 * 15, "fp32": 2 * 1000 * 29}
    assert k.bytes == {"DRAM": 64 * 4000} and k.seconds == pytest.approx(1e-3)


def test_without_uncore_events_no_point_and_a_note(tmp_path, capsys):
    text = "\n".join(CSV.splitlines()[:5]) + "\n"      # duration_time and the FP events
    p = _write(tmp_path, "cpu_only.csv", text)
    (k,) = load_perf_stat(p).kernels
    assert k.flop == {"fp64": FLOP} and k.bytes == {}
    assert any("no memory-controller event" in n for n in k.meta["notes"])
    assert main(["perf", p, "--on", "EPYC 9654"]) == 0
    out = capsys.readouterr().out
    assert "not placed" in out and "no memory-controller event" in out


def test_reads_only_is_said(tmp_path):
    text = "\n".join(ln for ln in CSV.splitlines() if "cas_count_write" not in ln)
    (k,) = load_perf_stat(_write(tmp_path, "r.csv", text)).kernels
    assert k.bytes == {"DRAM": 1536 * MIB}
    assert any("DRAM = reads only" in n for n in k.meta["notes"])


def test_cli_text_json_and_csv(tmp_path, capsys):
    p = _write(tmp_path, "triad.csv", CSV)
    assert main(["perf", p, "--on", "EPYC 9654"]) == 0
    out = capsys.readouterr().out
    assert "roof: AMD EPYC 9654" in out and "triad" in out and "0.166" in out
    assert main(["perf", p, "--on", "EPYC 9654", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (pt,) = data["analysis"]
    assert pt["ai"] == pytest.approx(FLOP / BYTES)
    assert pt["achieved_flop_per_s"] == pytest.approx(FLOP / 0.5)      # 804 MFLOP/s
    assert data["kernels"][0]["meta"]["source"] == "perf"
    out_csv = tmp_path / "k.csv"
    assert main(["perf", p, "--on", "EPYC 9654", "-o", str(out_csv)]) == 0
    (row,) = csv.DictReader(io.StringIO(out_csv.read_text()))
    assert float(row["flop"]) == FLOP and float(row["bytes"]) == BYTES
    assert float(row["seconds"]) == pytest.approx(0.5)


def test_several_files_are_steps(tmp_path):
    a = _write(tmp_path, "v1.csv", CSV)
    b = _write(tmp_path, "v2.csv", CSV.replace("500000000,ns", "250000000,ns"))
    imp = load_perf_stat([a, b])
    assert {k.name: k.seconds for k in imp.kernels} == {"whole run [v1]": pytest.approx(0.5),
                                                         "whole run [v2]": pytest.approx(0.25)}


def test_not_counted_is_a_warning_not_zero(tmp_path, capsys):
    text = CSV.replace("768.00,MiB,uncore_imc/cas_count_write/,500100000,100.00,1536.0,MB/s",
                       "<not counted>,MiB,uncore_imc/cas_count_write/,0,0.00,,")
    p = _write(tmp_path, "nc.csv", text)
    imp = load_perf_stat(p)
    assert f"{p}:8: uncore_imc/cas_count_write/: <not counted>" in str(imp.skips[0])
    assert imp.kernels[0].bytes == {"DRAM": 1536 * MIB}      # reads only, and said
    notes = imp.kernels[0].meta["notes"]
    assert any(n.startswith("not counted: uncore_imc/cas_count_write/") for n in notes)
    assert any("DRAM = reads only" in n for n in notes)


@pytest.mark.parametrize("text, message, line", [
    ("#           time             counts unit events\n"
     "     1.001000000        123,456      cycles\n", "interval output (perf stat -I)", 1),
    ("1.001000000,123456,,cycles,1000,100.00,,\n", "interval output (perf stat -I)", 1),
    ("100,,fp_arith_inst_retired.scalar_double,1000,100.00,,\n", "no time", None),
    ("STRUCT,Info,3\nTABLE,Group 1 Raw,MEM,3\n", "read it with `rooflab likwid FILE`", 1),
    ("100,furlongs,uncore_imc/cas_count_read/,1000,100.00,,\n1,ns,duration_time,1,100.00,,\n",
     "unit 'furlongs' is not a byte unit", 1),
    ("hello world\n", "'hello world' is not a perf stat -x line", 1),
])
def test_bad_input_is_an_error(tmp_path, capsys, text, message, line):
    p = _write(tmp_path, "bad.csv", text)
    where = f"{re.escape(p)}:{line}: " if line else f"{re.escape(p)}: "
    with pytest.raises(ParseError, match=where + ".*" + re.escape(message)):
        load_perf_stat(p)
    assert main(["perf", p]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_per_socket_lines_and_multiplexing(tmp_path):
    """--per-socket: socket id and CPU count before the value; the two sockets' IMC lines
    add up. A counter that ran 50 % of the time (perf scaled it) gets a note."""
    text = "\n".join([
        "S0,8,500000000,ns,duration_time,500000000,100.00,,",
        "S0,8,100000000,,fp_arith_inst_retired.256b_packed_double,250000000,50.00,,",
        "S0,8,1024.00,MiB,uncore_imc/cas_count_read/,500000000,100.00,,",
        "S1,8,512.00,MiB,uncore_imc/cas_count_read/,500000000,100.00,,",
        "S0,8,768.00,MiB,uncore_imc/cas_count_write/,500000000,100.00,,"]) + "\n"
    (k,) = load_perf_stat(_write(tmp_path, "sock.csv", text)).kernels
    assert k.flop == {"fp64": 4e8} and k.bytes == {"DRAM": 2304 * MIB}
    assert any("counted 50 % of the time" in n for n in k.meta["notes"])
