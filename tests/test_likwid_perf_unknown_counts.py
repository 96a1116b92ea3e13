"""Review 15v F-h, F-l, F-e, F-i, F-j: likwid / perf stat counts that are unknown stay
unknown, counts from two sockets are said to be, and the words about left-off points and
hints match what was measured. Files are written the way likwid-perfctr -O and
`perf stat -x,` write them (see tests/test_likwid.py, tests/test_perf_stat.py); numbers by
hand."""

from __future__ import annotations

import csv
import io
import json

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.ingest.likwid import load_likwid
from rooflab.ingest.perf_stat import load_perf_stat
from rooflab.model.analysis import analyze
from rooflab.model.kernel import Kernel

VOLUME = "Memory data volume [GBytes]"


def _likwid(dram: tuple[str, str], fp: tuple[str, str] = ("500000000", "500000000"),
            rate: tuple[str, str] | None = None, cas: tuple[str, str] | None = None,
            l3: str | None = None, cpu: str = "AMD EPYC 9654 96-Core Processor") -> str:
    """A whole-run MEM_DP file on 2 hardware threads, 1 s each. FLOP: 2 x 5e8 256-bit DP
    instructions x 4 = 4e9. DRAM: the two threads' data volume (GB), summed; optional CAS
    counts (64 B each), a DP [MFLOP/s] metric, and an L3 group (1 s, its volume on thread 0)."""
    raw = [("FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE", "PMC2", fp)]
    if cas is not None:
        raw += [("CAS_COUNT_RD", "MBOX0C0", (cas[0], "0")),
                ("CAS_COUNT_WR", "MBOX0C1", (cas[1], "0"))]
    metrics = [("Runtime (RDTSC) [s]", ("1.000000", "1.000000")), (VOLUME, dram)]
    if rate is not None:
        metrics.append(("DP [MFLOP/s]", rate))
    lines = ["STRUCT,Info,3,,", f"CPU name:,{cpu},,,",
             f"TABLE,Group 1 Raw,MEM_DP,{len(raw)},",
             "Event,Counter,HWThread 0,HWThread 1,"]
    lines += [f"{e},{c},{a},{b}," for e, c, (a, b) in raw]
    lines += [f"TABLE,Group 1 Metric,MEM_DP,{len(metrics)},", "Metric,HWThread 0,HWThread 1,,"]
    lines += [f"{m},{a},{b},," for m, (a, b) in metrics]
    if l3 is not None:
        lines += ["TABLE,Group 2 Metric,L3,2,", "Metric,HWThread 0,HWThread 1,,",
                  "Runtime (RDTSC) [s],1.000000,1.000000,,",
                  f"L3 data volume [GBytes],{l3},0,,"]
    return "\n".join(lines) + "\n"


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# --- F-h: a volume every thread reports as unknown is not 0 bytes -------------------------

def test_all_nan_volume_is_dropped_with_a_warning_not_read_as_0(tmp_path, capsys):
    """DRAM nan on both threads, L3 8 GB: the old code gave DRAM 0 B (AI inf, 'latency');
    now DRAM is left out with a warning at the volume's line (line 9) and the L3 point
    stays: AI 4e9 / 8e9 = 0.5."""
    p = _write(tmp_path, "lknan.csv", _likwid(("nan", "nan"), l3="8.0000"))
    imp = load_likwid(p)
    (k,) = imp.kernels
    assert k.bytes == {"L3": 8e9}
    assert k.flop == {"fp64": 4e9}
    (skip,) = imp.skips
    assert skip.line == 9 and skip.reason.startswith(f"{VOLUME}: no thread has a value")
    assert main(["likwid", p, "--on", "EPYC 9654", "--json"]) == 0
    io_ = capsys.readouterr()
    assert f"warning: {p}:9: {VOLUME}: no thread has a value (2 x '-' or 'nan')" in io_.err
    data = json.loads(io_.out)
    assert data["kernels"][0]["bytes"] == {"L3": 8e9}
    assert "latency" not in io_.out


def test_all_dash_volume_falls_through_to_the_cas_counts(tmp_path):
    """'-' on both threads: DRAM from the CAS counts, 64 B x (1.5e8 + 1e8) = 1.6e10 B, not
    0 (the old code took the 0 from the volume and never looked at the CAS counts)."""
    p = _write(tmp_path, "lkdash.csv", _likwid(("-", "-"), cas=("150000000", "100000000")))
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 64.0 * 2.5e8}
    assert k.bytes["DRAM"] == 1.6e10
    # AI = 4e9 / 1.6e10 = 0.25
    assert k.flop["fp64"] / k.bytes["DRAM"] == 0.25


def test_minus_nan_is_read_as_nan(tmp_path):
    """glibc prints '-nan': once an error ('must be >= 0 and finite'), now unknown; thread
    1's 16 GB is the volume (one uncore thread per socket)."""
    p = _write(tmp_path, "lkmnan.csv", _likwid(("16.0000", "-nan")))
    (k,) = load_likwid(p).kernels
    assert k.bytes == {"DRAM": 16e9}


def test_only_unknown_bytes_is_a_clear_error(tmp_path, capsys):
    """No level left: the file is refused (exit 2) with where and why, not a 0-byte point."""
    p = _write(tmp_path, "lkonly.csv", _likwid(("nan", "-nan")))
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    assert f"line 9: {VOLUME}: no thread has a value" in err
    assert "no bytes at any level" in err


def test_all_nan_fp_event_falls_through_to_the_rate_metric(tmp_path, capsys):
    """FP event nan on both threads: the old code counted 0 FLOP from it; now it is left
    out (warning at line 5) and the DP [MFLOP/s] metric gives 2 x 1500 MFLOP/s x 1 s
    = 3e9 FLOP. DRAM 12 GB: AI 0.25."""
    p = _write(tmp_path, "lkfp.csv", _likwid(("12.0000", "0"), fp=("nan", "nan"),
                                             rate=("1500.0000", "1500.0000")))
    imp = load_likwid(p)
    (k,) = imp.kernels
    assert k.flop == {"fp64": 3e9}
    assert k.flop["fp64"] / k.bytes["DRAM"] == 0.25
    assert [s.line for s in imp.skips] == [5]
    assert "FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE: no thread has a value" in \
        imp.skips[0].reason


# --- F-l: counts from two sockets are said to be -------------------------------------------

def test_likwid_two_uncore_threads_is_two_sockets(tmp_path, capsys):
    """Threads 0 and 1 both read the memory controllers (10 + 6 GB = 16 GB): two sockets;
    the note says the catalog roof is per socket. One uncore thread: 1 socket, no note."""
    two = load_likwid(_write(tmp_path, "two.csv", _likwid(("10.0000", "6.0000")))).kernels[0]
    assert two.bytes == {"DRAM": 16e9} and two.meta["sockets"] == 2
    assert any(n.startswith("counted on 2 sockets: a catalog CPU's ceilings are per socket")
               for n in two.meta["notes"])
    one = load_likwid(_write(tmp_path, "one.csv", _likwid(("16.0000", "0")))).kernels[0]
    assert one.meta["sockets"] == 1
    assert not any("sockets" in n for n in one.meta["notes"])


PER_SOCKET = "\n".join([
    "S0,96,1000000000,ns,duration_time,1000000000,100.00,,",
    "S0,96,2000000000,,fp_arith_inst_retired.256b_packed_double,1000000000,100.00,,",
    "S1,96,2000000000,,fp_arith_inst_retired.256b_packed_double,1000000000,100.00,,",
    "S0,96,10000.00,MiB,uncore_imc/cas_count_read/,1000000000,100.00,,",
    "S1,96,10000.00,MiB,uncore_imc/cas_count_read/,1000000000,100.00,,",
    "S0,96,5000.00,MiB,uncore_imc/cas_count_write/,1000000000,100.00,,",
    "S1,96,5000.00,MiB,uncore_imc/cas_count_write/,1000000000,100.00,,"]) + "\n"


def test_perf_per_socket_s0_s1_is_two_sockets(tmp_path, capsys):
    """The review's ps.csv: 2 x 2e9 256-bit DP instructions x 4 = 1.6e10 FLOP, 30000 MiB
    = 31.46 GB, 1 s. Against one EPYC 9654 socket (460.8 GB/s) that is 6.83 % of roof; the
    file counted S0 and S1, and the output says so."""
    p = _write(tmp_path, "ps.csv", PER_SOCKET)
    (k,) = load_perf_stat(p).kernels
    assert k.flop == {"fp64": 1.6e10} and k.bytes == {"DRAM": 30000 * 2.0 ** 20}
    assert k.meta["sockets"] == 2
    note = ("counted on 2 sockets (S0, S1): a catalog CPU's ceilings are per socket, so "
            "against one the % of roof reads up to 2x high")
    assert any(n.startswith(note) for n in k.meta["notes"])
    assert main(["perf", p, "--on", "EPYC 9654"]) == 0
    out = capsys.readouterr()
    assert "counted on 2 sockets (S0, S1)" in out.out + out.err


def test_perf_one_socket_has_no_socket_note(tmp_path):
    text = "\n".join(ln for ln in PER_SOCKET.splitlines() if not ln.startswith("S1")) + "\n"
    (k,) = load_perf_stat(_write(tmp_path, "s0.csv", text)).kernels
    assert k.meta["sockets"] == 1
    assert not any("sockets" in n for n in k.meta["notes"])


# --- F-e: "no L2 point" is about the roof, the CSV/JSON keep the bytes ---------------------

def test_no_level_point_note_says_the_exports_keep_it(tmp_path, capsys):
    """L3 8 GB on a roof without L3 (EPYC 9654: DRAM only): the note says the point is off
    the roof and the CSV keeps the L3 row (AI 4e9 / 8e9 = 0.5)."""
    p = _write(tmp_path, "lk.csv", _likwid(("16.0000", "0"), l3="8.0000"))
    out_csv = tmp_path / "out.csv"
    assert main(["likwid", p, "--on", "EPYC 9654", "-o", str(out_csv)]) == 0
    text = " ".join("".join(capsys.readouterr()).split())
    assert ("roof 'AMD EPYC 9654' has no L3 ceiling, so no L3 point on the roof (the "
            "CSV/JSON keep its bytes)") in text
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    l3 = [r for r in rows if "L3" in r.values()]
    assert len(l3) == 1 and "0.5" in l3[0].values()


# --- F-i: CPU kernels without --on are told a CPU roof ------------------------------------

def test_cpu_kernels_without_on_get_a_cpu_hint(tmp_path, capsys):
    """A CPU the catalog does not know, no --on: the envelope roof's hint names a CPU."""
    p = _write(tmp_path, "whole.csv", _likwid(("16.0000", "0"), cpu="Acme Q9 CPU @ 2.0GHz"))
    assert main(["likwid", p]) == 0
    text = " ".join("".join(capsys.readouterr()).split())   # the roof line wraps
    assert "roof: none known" in text
    assert "pass --on CPU (a catalog name such as 'EPYC 9654', or a profile of this " \
           "machine: `rooflab probe -o me.json`, then --on me.json)" in text
    assert "--on GPU" not in text


def test_cpu_kernels_without_bytes_and_flop_error_names_a_cpu(tmp_path, capsys):
    """perf without IMC events: no bytes, so no envelope roof: the error asks for a CPU."""
    text = "1000000000,ns,duration_time,1000000000,100.00,,\n" \
           "2000000000,,fp_arith_inst_retired.256b_packed_double,1000000000,100.00,,\n"
    p = _write(tmp_path, "nobytes.csv", text)
    assert main(["perf", p]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "pass --on CPU (a catalog name such as 'EPYC 9654'" in err
    assert "--on GPU" not in err


# --- F-j: --level that sets the kernel's levels aside says so ------------------------------

def test_level_option_is_named_as_the_reason():
    """DRAM 16 GB, L3 8 GB, --level L3 on EPYC 9654 (no L3): the reason is --level, and the
    kernel's DRAM bytes are named; without --level the DRAM point is there: AI 0.25,
    0.25 x 460.8 GB/s = 115.2 GFLOP/s attainable, 4 GFLOP/s achieved = 3.47 %."""
    roof = load_roof("EPYC 9654")
    k = Kernel(name="stream", flop={"fp64": 4e9}, bytes={"DRAM": 16e9, "L3": 8e9},
               seconds=1.0)
    (u,) = analyze(roof, [k], levels=["L3"]).unplaced
    assert u.reason == ("--level L3: roof 'AMD EPYC 9654' has no L3 ceiling (it has: DRAM); "
                        "this kernel also has DRAM bytes, set aside by --level")
    assert u.fix == "drop --level (or use --level DRAM), or give a roof with an L3 ceiling"
    (pt,) = analyze(roof, [k]).points
    assert pt.level == "DRAM" and abs(pt.percent_of_roof - 4e9 / 115.2e9 * 100) < 1e-9


def test_level_only_at_missing_levels_keeps_the_old_words():
    """A kernel whose bytes are only at L3 is still told to add DRAM bytes."""
    roof = load_roof("EPYC 9654")
    k = Kernel(name="l3only", flop={"fp64": 4e9}, bytes={"L3": 8e9}, seconds=1.0)
    (u,) = analyze(roof, [k], levels=["L3"]).unplaced
    assert u.reason.startswith("its bytes are at L3 only")
    assert u.fix.endswith("or add DRAM bytes")


def test_level_cli_text(tmp_path, capsys):
    p = _write(tmp_path, "lk.csv", _likwid(("16.0000", "0"), l3="8.0000"))
    assert main(["likwid", p, "--on", "EPYC 9654", "--level", "L3"]) == 0
    text = " ".join("".join(capsys.readouterr()).split())
    assert "--level L3: roof 'AMD EPYC 9654' has no L3 ceiling" in text
    assert "this kernel also has DRAM bytes" in text
    assert "its bytes are at L3 only" not in text


def test_perf_per_socket_duration_time_is_the_wall_time_not_a_sum(tmp_path):
    """duration_time on both sockets' lines (1 s each) is one 1 s run, not 2 s: 1.6e10
    FLOP / 1 s = 16 GFLOP/s."""
    text = "S1,96,1000000000,ns,duration_time,1000000000,100.00,,\n" + PER_SOCKET
    (k,) = load_perf_stat(_write(tmp_path, "ps2.csv", text)).kernels
    assert k.seconds == 1.0
    assert k.flop["fp64"] / k.seconds == 1.6e10
