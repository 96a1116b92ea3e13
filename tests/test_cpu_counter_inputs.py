"""rooflab likwid / perf: standard input (`-`), perf's text --per-socket/-A columns, and
hostile inputs (empty, binary, a region without metrics, <not counted>, duplicated events,
a decimal-comma locale, CRLF line ends): each a clear error naming the file and line, or a
warning/note, never a traceback or a silent wrong number.

Files are laid out as tests/test_likwid.py and tests/test_perf_stat.py lay them out (from
likwid.lua's printcsv, perf-stat.txt's CSV FORMAT and builtin-stat.c's sample output); the
--per-socket text columns as perf's stat-display.c print_aggr_id_std prints them
("S%-5d %4d " in perf 5.x: the socket, then the CPUs aggregated)."""

from __future__ import annotations

import io
import json
import re

import pytest
from test_likwid import MEM_DP, _info, _pad
from test_perf_stat import BYTES, CSV, FLOP, MIB, TEXT

from rooflab.cli.main import main
from rooflab.errors import InputError, ParseError
from rooflab.files import STDIN_NAME, with_stdin
from rooflab.ingest.likwid import load_likwid
from rooflab.ingest.perf_stat import load_perf_stat


def _write(tmp_path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, newline="")     # CRLF kept as written
    return str(p)


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))


def _kernels(out: str) -> dict:
    return {k["name"]: k for k in json.loads(out)["kernels"]}


# --- 1. `-`: standard input -------------------------------------------------------------

def test_perf_reads_standard_input(monkeypatch, capsys):
    """`perf stat ... ./triad 2>&1 | rooflab perf -`: the same 4.02e8 FLOP, 2304 MiB and
    0.5 s as the file (test_perf_stat's hand count), the file named <stdin>."""
    _stdin(monkeypatch, TEXT.encode())
    assert main(["perf", "-", "--on", "EPYC 9654", "--json"]) == 0
    k = _kernels(capsys.readouterr().out)["triad 10000000"]
    assert k["flop"] == {"fp64": FLOP} and k["bytes"] == {"DRAM": BYTES}
    assert k["seconds"] == 0.5 and k["meta"]["file"] == STDIN_NAME


def test_likwid_reads_standard_input(monkeypatch, capsys):
    """`likwid-perfctr ... -O ./app | rooflab likwid -`: triad 4.02e8 FLOP, 2.4 GB, 0.5 s."""
    _stdin(monkeypatch, MEM_DP.encode())
    assert main(["likwid", "-", "--on", "EPYC 9654", "--json"]) == 0
    k = _kernels(capsys.readouterr().out)["triad"]
    assert k["flop"] == {"fp64": 4.02e8} and k["bytes"] == {"DRAM": 2.4e9}
    assert k["seconds"] == 0.5 and k["meta"]["file"] == STDIN_NAME


def test_likwid_whole_run_from_stdin_is_named_stdin():
    text = MEM_DP.replace("Region triad,", "").replace("TABLE,Region dgemm", "TABLE,Region d")
    imp = load_likwid([STDIN_NAME], stdin=text)
    assert "stdin (whole run)" in [k.name for k in imp.kernels]


@pytest.mark.parametrize("verb, data, message", [
    ("perf", b"", "<stdin>: is empty: nothing came through the pipe (perf stat writes its "
                  "counts to stderr"),
    ("likwid", b"", "<stdin>: is empty"),
    ("perf", b"\x00\x01garbage\xff\xfe" * 40, "<stdin>:1: holds binary data"),
    ("perf", b"hello world\n", "<stdin>:1: 'hello world' is not a perf stat -x line"),
], ids=["perf-empty", "likwid-empty", "perf-binary", "perf-prose"])
def test_stdin_errors_name_stdin(monkeypatch, capsys, verb, data, message):
    _stdin(monkeypatch, data)
    assert main([verb, "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and "Traceback" not in err


def test_stdin_twice_or_a_terminal_is_refused(monkeypatch):
    with pytest.raises(InputError, match="- given twice"):
        with_stdin(["-", "a.csv", "-"], io.StringIO(""))

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    with pytest.raises(InputError, match="terminal"):
        with_stdin(["-"], Tty())
    assert with_stdin(["a.csv"]) == (["a.csv"], None)


# --- 2. perf's text output with --per-socket / -A -----------------------------------------

# --per-socket -a, two sockets of 8 CPUs: S0 ran the 1e8 256-bit + 2e6 scalar DP
# instructions (4.02e8 FLOP); each socket's IMC moved 768 + 384 MiB: 2304 MiB in all; 0.5 s.
PER_SOCKET = """\

 Performance counter stats for 'system wide':

S0        8        100,000,000      fp_arith_inst_retired.256b_packed_double
S0        8          2,000,000      fp_arith_inst_retired.scalar_double
S0        8             768.00 MiB  uncore_imc/cas_count_read/
S0        8             384.00 MiB  uncore_imc/cas_count_write/
S1        8                  0      fp_arith_inst_retired.256b_packed_double
S1        8                  0      fp_arith_inst_retired.scalar_double
S1        8             768.00 MiB  uncore_imc/cas_count_read/
S1        8             384.00 MiB  uncore_imc/cas_count_write/

       0.500000000 seconds time elapsed
"""


def test_text_per_socket_reads_socket_and_count_columns(tmp_path):
    (k,) = load_perf_stat(_write(tmp_path, "sock.txt", PER_SOCKET)).kernels
    assert k.flop == {"fp64": FLOP} and k.bytes == {"DRAM": BYTES}
    assert k.seconds == 0.5 and k.meta["sockets"] == 2
    assert any(n.startswith("counted on 2 sockets (S0, S1)") for n in k.meta["notes"])


def test_text_per_die_and_per_cpu_columns(tmp_path):
    """--per-die ("S1-D0   4 "): socket 1 counted; -A ("CPU3 ", no count column): the
    CPUs' lines add up, 2 x 1000 256-bit instructions = 8000 FLOP."""
    die = PER_SOCKET.replace("S0        8", "S0-D0     4").replace("S1        8", "S1-D0     4")
    (k,) = load_perf_stat(_write(tmp_path, "die.txt", die)).kernels
    assert k.meta["sockets"] == 2 and k.flop == {"fp64": FLOP}
    per_cpu = "\n".join([
        "CPU0              1,000      fp_arith_inst_retired.256b_packed_double",
        "CPU1              1,000      fp_arith_inst_retired.256b_packed_double",
        "CPU0             512.00 MiB  uncore_imc/cas_count_read/",
        "", "       0.001000000 seconds time elapsed", ""])
    (k,) = load_perf_stat(_write(tmp_path, "cpu.txt", per_cpu)).kernels
    assert k.flop == {"fp64": 8000.0} and k.bytes == {"DRAM": 512 * MIB}


def test_text_interval_with_socket_column_is_refused(tmp_path):
    text = "     1.000097680 S0        4          5,788,785 cycles\n"
    with pytest.raises(ParseError, match=r":1: interval output"):
        load_perf_stat(_write(tmp_path, "iv.txt", text))


# --- 3. hostile inputs -------------------------------------------------------------------

@pytest.mark.parametrize("verb", ["perf", "likwid"])
@pytest.mark.parametrize("data, message", [
    (b"", "is empty: nothing to read"),
    (b"\n  \n\n", "is empty: nothing to read"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, "holds binary data"),
], ids=["empty", "blank", "binary"])
def test_empty_and_binary_files_are_named_errors(tmp_path, capsys, verb, data, message):
    p = _write(tmp_path, "bad.out", data)
    assert main([verb, p]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}") and message in err and "Traceback" not in err
    assert "\ufffd" not in err                      # no mojibake quoted back


def test_likwid_region_without_its_metrics_is_a_line_numbered_error(tmp_path, capsys):
    text = _pad(_info() + ["TABLE,Region triad,Group 1 Raw,MEM_DP,1",
                           "Region Info,HWThread 0", "RDTSC Runtime [s],0.5", "call count,1",
                           "Event,Counter,HWThread 0", "INSTR_RETIRED_ANY,FIXC0,100"])
    p = _write(tmp_path, "nometric.csv", text)
    assert main(["likwid", p]) == 2
    err = capsys.readouterr().err
    assert f"{p}:5: no usable region: region 'triad' skipped: no bytes" in err


def test_perf_not_counted_everywhere_is_warned_not_zero(tmp_path, capsys):
    text = TEXT.replace("       100,000,000      fp_arith", "     <not counted>      fp_arith") \
        .replace("         2,000,000      fp_arith", "   <not supported>      fp_arith")
    p = _write(tmp_path, "nc.txt", text)
    imp = load_perf_stat(p)
    assert [s.line for s in imp.skips] == [4, 5]
    (k,) = imp.kernels
    assert k.flop == {} and k.bytes == {"DRAM": BYTES}        # unknown FLOP, not 0 FLOP
    assert any(n.startswith("not counted: fp_arith_inst_retired.256b_packed_double")
               for n in k.meta["notes"])


@pytest.mark.parametrize("name, text, line", [
    ("dup.txt", TEXT.replace(
        "         2,000,000      fp_arith_inst_retired.scalar_double\n",
        "         2,000,000      fp_arith_inst_retired.scalar_double\n" * 2), 6),
    ("dup.csv", CSV + "2000000,,fp_arith_inst_retired.scalar_double,500012000,100.00,,\n", 9),
], ids=["text", "csv"])
def test_perf_event_given_twice_is_counted_once(tmp_path, name, text, line):
    """`-e ...scalar_double,...scalar_double`: perf prints it twice; added, FLOP read
    4.04e8 instead of 4.02e8."""
    imp = load_perf_stat(_write(tmp_path, name, text))
    assert imp.kernels[0].flop == {"fp64": FLOP}
    assert imp.skips[0].line == line and "appears twice" in imp.skips[0].reason


def test_likwid_event_twice_on_core_counters_is_counted_once(tmp_path):
    """FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE on PMC2 and again on PMC4: one event, not
    two; triad stays 4.02e8 FLOP (was 8.02e8). CAS_COUNT_RD on MBOX0C0 and MBOX1C0 (two
    memory controllers) are still added (test_likwid's hand count of DRAM)."""
    row = "FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE,PMC2,50000000,50000000"
    lines = MEM_DP.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(row))
    lines.insert(at + 1, lines[at].replace("PMC2", "PMC4"))
    metric = next(i for i, ln in enumerate(lines) if ln.startswith("Runtime (RDTSC) [s],"))
    lines.insert(metric + 1, lines[metric])             # the runtime metric twice
    imp = load_likwid(_write(tmp_path, "dup.csv", "\n".join(lines) + "\n"))
    triad = next(k for k in imp.kernels if k.name == "triad")
    assert triad.flop == {"fp64": 4.02e8} and triad.seconds == 0.5
    assert triad.bytes == {"DRAM": 2.4e9}
    assert [s.line for s in imp.skips] == [at + 2, metric + 2]
    assert all("appears twice" in s.reason for s in imp.skips)


# de_DE: perf groups with '.' and writes a decimal comma, the footer too (%.9f)
GERMAN = TEXT.replace("100,000,000", "100.000.000").replace("2,000,000", "2.000.000") \
    .replace("1,536.00", "1.536,00").replace("768.00", "768,00") \
    .replace("0.500000000 seconds time", "0,500000000 seconds time")


# fr_FR (glibc): a narrow no-break space groups, the decimal mark is a comma
FRENCH = GERMAN.replace("100.000.000", "100\u202f000\u202f000") \
    .replace("2.000.000", "2\u202f000\u202f000").replace("1.536,00", "1\u202f536,00")


@pytest.mark.parametrize("text", [GERMAN, FRENCH], ids=["de_DE", "fr_FR"])
def test_perf_decimal_comma_locale_is_read(tmp_path, text):
    (k,) = load_perf_stat(_write(tmp_path, "de.txt", text)).kernels
    assert k.flop == {"fp64": FLOP} and k.bytes == {"DRAM": BYTES} and k.seconds == 0.5
    assert any("decimal comma" in n for n in k.meta["notes"])


def test_perf_decimal_comma_seconds_are_not_read_as_500_million(tmp_path):
    """Counts under 1000 carry no separator; '0,500000000 seconds' read as C gave 5e8 s."""
    text = "\n".join(["   512,00 MiB  uncore_imc/cas_count_read/",
                      "   256,00 MiB  uncore_imc/cas_count_write/", "",
                      "       0,500000000 seconds time elapsed", ""])
    (k,) = load_perf_stat(_write(tmp_path, "de.txt", text)).kernels
    assert k.seconds == 0.5 and k.bytes == {"DRAM": 768 * MIB}


@pytest.mark.parametrize("name, text, line, message", [
    # '.' thousands with a C footer: one file, two locales; 1000x off either way
    ("mixed.txt", TEXT.replace("100,000,000", "100.000.000"), 4,
     "'100.000.000' is not a number as this file writes them (1,234,567.89)"),
    # '1,23': no locale groups so; read as 123 before
    ("grp.txt", TEXT.replace("2,000,000", "2,00"), 5, "'2,00' is not a number"),
    # -x, in de_DE: "1536,00,MiB,..." split in two
    ("de.csv", CSV.replace("1536.00,MiB", "1536,00,MiB"), 7, "decimal comma"),
], ids=["mixed", "grouping", "split-by-x"])
def test_perf_number_in_the_wrong_locale_is_a_line_numbered_error(tmp_path, capsys, name,
                                                                   text, line, message):
    p = _write(tmp_path, name, text)
    with pytest.raises(ParseError, match=f"{re.escape(p)}:{line}: .*{re.escape(message)}"):
        load_perf_stat(p)
    assert main(["perf", p]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_perf_semicolon_csv_with_decimal_comma_is_read(tmp_path):
    """-x\\; in de_DE: '1536,00;MiB;...' is 1536 MiB (was read as 153600)."""
    text = CSV.replace(",", ";").replace("1536.00", "1536,00").replace("768.00", "768,00") \
        .replace(";3072.0;", ";3072,0;").replace(";1536.0;", ";1536,0;")
    (k,) = load_perf_stat(_write(tmp_path, "de.csv", text)).kernels
    assert k.bytes == {"DRAM": BYTES} and k.flop == {"fp64": FLOP}


@pytest.mark.parametrize("verb, name, text", [
    ("perf", "crlf.txt", TEXT), ("perf", "crlf.csv", CSV), ("likwid", "crlf.csv", MEM_DP)],
    ids=["perf-text", "perf-csv", "likwid"])
def test_crlf_line_ends_read_as_lf(tmp_path, verb, name, text):
    load = load_perf_stat if verb == "perf" else load_likwid
    lf = load(_write(tmp_path, "lf", text)).kernels
    crlf = load(_write(tmp_path, name, text.replace("\n", "\r\n"))).kernels
    assert [(k.flop, k.bytes, k.seconds) for k in crlf] == \
        [(k.flop, k.bytes, k.seconds) for k in lf]


def test_perf_csv_metric_line_is_not_an_event_or_a_repeat(tmp_path):
    """perf -x prints an event's second metric on a line of its own with empty leading
    fields (",,,,,1.23,insn per cycle"): left out with a warning, twice is no 'repeat'."""
    text = CSV + ",,,,,1.23,insn per cycle\n" * 2
    imp = load_perf_stat(_write(tmp_path, "metric.csv", text))
    assert imp.kernels[0].flop == {"fp64": FLOP} and imp.kernels[0].bytes == {"DRAM": BYTES}
    assert all("is not a number (left out)" in s.reason for s in imp.skips)


@pytest.mark.parametrize("verb, text", [("perf", CSV), ("perf", TEXT), ("likwid", MEM_DP)],
                         ids=["perf-csv", "perf-text", "likwid"])
def test_byte_order_mark_is_not_part_of_the_first_line(tmp_path, verb, text):
    """A file saved by a Windows editor starts with U+FEFF: perf's CSV read it as part of
    '# started on ...' and refused line 1."""
    load = load_perf_stat if verb == "perf" else load_likwid
    plain = load(_write(tmp_path, "plain", text)).kernels
    bom = load(_write(tmp_path, "bom", "\ufeff" + text)).kernels
    assert [(k.flop, k.bytes, k.seconds) for k in bom] == \
        [(k.flop, k.bytes, k.seconds) for k in plain]
