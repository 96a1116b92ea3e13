"""rooflab likwid: likwid-perfctr CSV (-O) files written the way likwid.lua's printOutput and
printcsv write them (tables transposed, one line per event/metric, one column per hardware
thread, every line padded with commas to the widest table), numbers checked by hand."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.likwid import load_likwid

WIDTH = 6   # printcsv pads each line to maxLineFields: Raw STAT's Event,Counter,Sum,Min,Max,Avg


def _pad(lines: list[str]) -> str:
    return "".join(line + "," * (WIDTH - 1 - line.count(",")) + "\n" for line in lines)


def _info() -> list[str]:
    return ["STRUCT,Info,3", "CPU name:,Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz",
            "CPU type:,Intel Skylake SP processor", "CPU clock:,2.59 GHz"]


def _region(name: str, time: tuple[float, float], calls: int, fp: dict[str, tuple[int, int]],
            cas: tuple[int, int], gbytes: tuple[str, str], mflops: tuple[str, str]) -> list[str]:
    """One MEM_DP region on HWThread 0 and 1: Raw, Raw STAT, Metric, Metric STAT."""
    events = [("INSTR_RETIRED_ANY", "FIXC0", (1000000, 900000)),
              ("CPU_CLK_UNHALTED_CORE", "FIXC1", (1300000, 1200000)),
              ("CPU_CLK_UNHALTED_REF", "FIXC2", (1300000, 1200000)),
              *((f"FP_ARITH_INST_RETIRED_{w}_DOUBLE", c, fp.get(w, (0, 0)))
                for w, c in (("128B_PACKED", "PMC0"), ("SCALAR", "PMC1"),
                             ("256B_PACKED", "PMC2"), ("512B_PACKED", "PMC3"))),
              ("CAS_COUNT_RD", "MBOX0C0", (cas[0] // 2, 0)), ("CAS_COUNT_WR", "MBOX0C1",
                                                             (cas[1] // 2, 0)),
              ("CAS_COUNT_RD", "MBOX1C0", (cas[0] // 2, 0)), ("CAS_COUNT_WR", "MBOX1C1",
                                                             (cas[1] // 2, 0))]
    tag = f"TABLE,Region {name},Group 1"
    out = [f"{tag} Raw,MEM_DP,{len(events)}", "Region Info,HWThread 0,HWThread 1",
           f"RDTSC Runtime [s],{time[0]:.6f},{time[1]:.6f}", f"call count,{calls},{calls}",
           "Event,Counter,HWThread 0,HWThread 1"]
    out += [f"{e},{c},{a},{b}" for e, c, (a, b) in events]
    out += [f"{tag} Raw STAT,MEM_DP,{len(events)}", "Event,Counter,Sum,Min,Max,Avg"]
    out += [f"{e} STAT,{c},{a + b},{min(a, b)},{max(a, b)},{(a + b) / 2}"
            for e, c, (a, b) in events]
    metrics = [("Runtime (RDTSC) [s]", f"{time[0]:.6f}", f"{time[1]:.6f}"),
               ("CPI", "1.3000", "1.3333"), ("DP [MFLOP/s]", *mflops),
               ("Memory data volume [GBytes]", *gbytes)]
    out += [f"{tag} Metric,MEM_DP,{len(metrics)}", "Metric,HWThread 0,HWThread 1"]
    out += [",".join(m) for m in metrics]
    out += [f"{tag} Metric STAT,MEM_DP,{len(metrics)}", "Metric,Sum,Min,Max,Avg"]
    out += [f"{m} STAT,0,0,0,0" for m, *_ in metrics]   # not read: per-thread values are
    return out


# triad: 2 threads x (5e7 256-bit + 1e6 scalar) DP instructions = 2 x (4 x 5e7 + 1e6)
# = 4.02e8 FLOP; DRAM 2.4 GB (counted by thread 0, the socket's uncore); 0.5 s (the longer
# thread). AI = 4.02e8 / 2.4e9 = 0.1675; 8.04e8 FLOP/s.
# dgemm: 2 x 1e9 512-bit FMA instructions, counted twice by the hardware: 2 x 8 x 1e9
# = 1.6e10 FLOP; 0.8 GB; 2.0 s. AI 20, 8e9 FLOP/s.
MEM_DP = _pad(_info() + _region(
    "triad", (0.5, 0.4), 10, {"256B_PACKED": (50_000_000, 50_000_000),
                              "SCALAR": (1_000_000, 1_000_000)},
    (25_000_000, 12_500_000), ("2.4000", "-"), ("402.0000", "502.5000")) + _region(
    "dgemm", (2.0, 2.0), 1, {"512B_PACKED": (1_000_000_000, 1_000_000_000)},
    (8_333_334, 4_166_666), ("0.8000", "0"), ("4000.0000", "4000.0000")))


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_two_regions_by_hand(tmp_path):
    imp = load_likwid(_write(tmp_path, "run.csv", MEM_DP))
    ks = {k.name: k for k in imp.kernels}
    triad, dgemm = ks["triad"], ks["dgemm"]
    assert triad.flop == {"fp64": pytest.approx(2 * (4 * 50_000_000 + 1_000_000))}
    assert triad.bytes == {"DRAM": pytest.approx(2.4e9)}
    assert triad.seconds == 0.5 and triad.calls == 10
    assert triad.flop["fp64"] / triad.bytes["DRAM"] == pytest.approx(0.1675)
    assert dgemm.flop == {"fp64": pytest.approx(1.6e10)} and dgemm.seconds == 2.0
    assert dgemm.bytes == {"DRAM": pytest.approx(8e8)}
    assert [k.name for k in imp.kernels] == ["dgemm", "triad"]   # longest first
    # hardware counters, bytes too (the memory controllers' CAS counts): counted
    assert triad.provenance == {"flop": "counted", "bytes": "counted", "seconds": "measured"}
    assert triad.meta["device"] == "cpu" and triad.meta["threads"] == 2
    assert imp.devices == ("Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz",)
    assert any("longest of 2 threads" in n for n in imp.notes)


def test_fp_arith_weighting_from_raw_events(tmp_path):
    """A custom event set (no metrics: likwid puts Runtime (RDTSC) [s] on a TSC row): each
    width 10 counts -> 10 x (1+2+4+8) = 150 fp64 and 10 x (1+4+8+16) = 290 fp32 FLOP;
    DRAM 64 B x (100 + 50) CAS."""
    events = [f"FP_ARITH_INST_RETIRED_{w}_{p},PMC{i},10"
              for i, (w, p) in enumerate((w, p) for p in ("DOUBLE", "SINGLE")
                                         for w in ("SCALAR", "128B_PACKED", "256B_PACKED",
                                                   "512B_PACKED"))]
    text = _pad(_info() + ["TABLE,Group 1 Raw,Custom,11", "Event,Counter,HWThread 0",
                           "Runtime (RDTSC) [s],TSC,1.000000e-03", *events,
                           "CAS_COUNT_RD,MBOX0C0,100", "CAS_COUNT_WR,MBOX0C1,50"])
    (k,) = load_likwid(_write(tmp_path, "custom.csv", text)).kernels
    assert k.flop == {"fp64": 150.0, "fp32": 290.0}
    assert k.bytes == {"DRAM": 64.0 * 150} and k.seconds == 1e-3
    assert k.name == "custom (whole run)"          # no marker API: one kernel, the file's
    assert any("64 B x the memory controllers'" in n for n in k.meta["notes"])


def test_mem_group_only_is_a_bytes_only_point(tmp_path, capsys):
    text = _pad(_info() + [
        "TABLE,Group 1 Raw,MEM,3", "Event,Counter,HWThread 0",
        "INSTR_RETIRED_ANY,FIXC0,123", "CAS_COUNT_RD,MBOX0C0,1000000",
        "CAS_COUNT_WR,MBOX0C1,500000",
        "TABLE,Group 1 Metric,MEM,3", "Metric,HWThread 0", "Runtime (RDTSC) [s],0.010000",
        "Memory bandwidth [MBytes/s],9600.0000", "Memory data volume [GBytes],0.0960"])
    p = _write(tmp_path, "mem.csv", text)
    (k,) = load_likwid(p).kernels
    assert k.flop == {} and k.bytes == {"DRAM": pytest.approx(9.6e7)} and k.seconds == 0.01
    assert any("no FLOP counted" in n for n in k.meta["notes"])
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 0
    out = capsys.readouterr().out
    assert "no FLOP counted" in out and "9.6 GB/s" in out     # 9.6e7 B / 0.01 s


def test_groups_of_one_region_give_one_point_per_level(tmp_path):
    """-g MEM_DP -g L2 -g L3 (multiplexed): L2 measured over half the time -> scaled x2."""
    def group(i: int, name: str, t: float, metric: str, gb: str) -> list[str]:
        return [f"TABLE,Region loop,Group {i} Raw,{name},1", "Region Info,HWThread 0",
                f"RDTSC Runtime [s],{t:.6f}", "call count,4", "Event,Counter,HWThread 0",
                "INSTR_RETIRED_ANY,FIXC0,1",
                f"TABLE,Region loop,Group {i} Metric,{name},2", "Metric,HWThread 0",
                f"Runtime (RDTSC) [s],{t:.6f}", f"{metric},{gb}"]
    text = _pad(_info() + group(1, "MEM_DP", 1.0, "DP [MFLOP/s]", "1000.0000")
                + group(2, "L2", 0.5, "L2 data volume [GBytes]", "3.0000")
                + group(3, "L3", 1.0, "L3 data volume [GBytes]", "2.5000"))
    (k,) = load_likwid(_write(tmp_path, "levels.csv", text)).kernels
    assert k.flop == {"fp64": pytest.approx(1e9)}           # 1000 MFLOP/s x 1.0 s
    assert k.bytes == {"L2": pytest.approx(6e9), "L3": pytest.approx(2.5e9)}
    assert k.seconds == 1.0 and k.calls == 4
    assert any("L2 bytes from group L2 (measured over 0.5 s) scaled to the 1 s" in n
               for n in k.meta["notes"])


def test_cli_text_json_and_csv(tmp_path, capsys):
    p = _write(tmp_path, "run.csv", MEM_DP)
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 0
    out = capsys.readouterr().out
    assert "roof: AMD EPYC 9654" in out and "dgemm" in out and "triad" in out
    assert "0.168" in out or "0.1675" in out                  # triad's AI
    assert main(["likwid", p, "--on", "EPYC 9654", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    pts = {pt["kernel"]: pt for pt in data["analysis"]}
    assert pts["triad"]["ai"] == pytest.approx(0.1675)
    assert pts["triad"]["achieved_flop_per_s"] == pytest.approx(8.04e8)
    assert pts["dgemm"]["ai"] == pytest.approx(20.0)
    assert pts["dgemm"]["achieved_flop_per_s"] == pytest.approx(8e9)
    out_csv = tmp_path / "k.csv"
    assert main(["likwid", p, "--on", "EPYC 9654", "-o", str(out_csv)]) == 0
    assert f"wrote {out_csv}" in capsys.readouterr().err   # stderr, as every verb (s22 r3 F7)
    rows = {r["kernel"]: r for r in csv.DictReader(io.StringIO(out_csv.read_text()))}
    assert float(rows["triad"]["flop"]) == pytest.approx(4.02e8)
    assert float(rows["triad"]["bytes"]) == pytest.approx(2.4e9)
    assert float(rows["triad"]["seconds"]) == 0.5 and rows["triad"]["level"] == "DRAM"
    # the CSV reads back through `rooflab report`, the same AI
    assert main(["report", str(out_csv), "--on", "EPYC 9654", "--json"]) == 0
    back = {pt["kernel"]: pt for pt in json.loads(capsys.readouterr().out)["analysis"]}
    assert back["triad"]["ai"] == pytest.approx(0.1675)


def test_several_files_are_steps(tmp_path, capsys):
    a = _write(tmp_path, "v1.csv", MEM_DP)
    b = _write(tmp_path, "v2.csv", MEM_DP.replace("0.500000,0.400000", "0.250000,0.200000"))
    imp = load_likwid([a, b])
    names = {k.name for k in imp.kernels}
    assert {"triad [v1]", "triad [v2]"} <= names
    assert {k.name: k.seconds for k in imp.kernels}["triad [v2]"] == 0.25


@pytest.mark.parametrize("text, message, line", [
    ("Region triad, Group 1: MEM_DP\n+-------------+\n|  Region Info  | HWThread 0 |\n",
     "likwid-perfctr's table output", 1),
    (_pad(_info() + ["TABLE,Region triad,Group 1 Metric,MEM_DP,2", "Metric,HWThread 0",
                     "Runtime (RDTSC) [s],abc", "Memory data volume [GBytes],1.0"]),
     "'Runtime (RDTSC) [s]' = 'abc'", 7),
    (_pad(_info() + ["TABLE,Region triad,Group 1 Metric,MEM_DP,2"]), "file cut short", 5),
    (_pad(_info() + ["TABLE,Region x,Grupo 1 Metric,MEM_DP,2"]), "not a likwid table header",
     5),
    ("hello\n", "no likwid-perfctr table", 1),
])
def test_bad_input_is_a_line_numbered_error(tmp_path, capsys, text, message, line):
    p = _write(tmp_path, "bad.csv", text)
    with pytest.raises(ParseError, match=f"{re.escape(p)}:{line}: .*{re.escape(message)}"):
        load_likwid(p)
    assert main(["likwid", p]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert "Traceback" not in err


def test_region_without_bytes_is_skipped_with_a_warning(tmp_path, capsys):
    text = MEM_DP + _pad(["TABLE,Region empty,Group 1 Metric,FLOPS_DP,2", "Metric,HWThread 0",
                          "Runtime (RDTSC) [s],0.100000", "DP [MFLOP/s],10.0000"])
    p = _write(tmp_path, "run.csv", text)
    imp = load_likwid(p)
    assert [k.name for k in imp.kernels] == ["dgemm", "triad"]
    assert "region 'empty' skipped: no bytes" in str(imp.skips[0])
    assert main(["likwid", p, "--on", "EPYC 9654"]) == 0
    assert "warning:" in capsys.readouterr().err


def test_only_the_rows_read_are_checked(tmp_path):
    """A metric rooflab does not use (CPI) may hold anything; a negative volume it uses is
    an error naming its line."""
    p = _write(tmp_path, "cpi.csv", MEM_DP.replace("CPI,1.3000", "CPI,-1.3000"))
    assert len(load_likwid(p).kernels) == 2
    bad = MEM_DP.replace("Memory data volume [GBytes],2.4000", "Memory data volume [GBytes],-2")
    line = bad.splitlines().index("Memory data volume [GBytes],-2,-,,,") + 1
    p = _write(tmp_path, "neg.csv", bad)
    with pytest.raises(ParseError, match=f"{re.escape(p)}:{line}: .*must be >= 0"):
        load_likwid(p)


def test_one_group_twice_is_an_error(tmp_path):
    """Two runs of MEM_DP appended to one file: which one to read is not ours to guess."""
    p = _write(tmp_path, "twice.csv", MEM_DP + MEM_DP)
    line = len(MEM_DP.splitlines()) + 5            # the second copy's first TABLE line
    with pytest.raises(ParseError, match=f"{re.escape(p)}:{line}: table 'Region triad, "
                                         f"Group 1 Raw \\(MEM_DP\\)' appears twice"):
        load_likwid(p)


def test_flop_from_the_mflops_metric_when_no_raw_fp_event(tmp_path):
    """Without FP_ARITH rows: DP [MFLOP/s] x each thread's runtime, summed: triad's
    402 MFLOP/s x 0.5 s + 502.5 MFLOP/s x 0.4 s = 4.02e8, what the raw counts gave."""
    text = "".join(ln + "\n" for ln in MEM_DP.splitlines() if "FP_ARITH" not in ln)
    ks = {k.name: k for k in load_likwid(_write(tmp_path, "rate.csv", text)).kernels}
    assert ks["triad"].flop == {"fp64": pytest.approx(4.02e8)}
    assert ks["dgemm"].flop == {"fp64": pytest.approx(1.6e10)}    # 2 x 4000 MFLOP/s x 2 s
    assert any("'DP [MFLOP/s]' x 'Runtime (RDTSC) [s]'" in n for n in ks["triad"].meta["notes"])
