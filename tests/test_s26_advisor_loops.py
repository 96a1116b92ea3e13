"""Review s26 r2 F6: no reader for Intel Advisor's per-loop results; a survey CSV got
"missing column(s) name, flop, bytes" with no word of Advisor. `rooflab report loops.csv`
now reads `advisor --report=survey --format=csv` (ingest/advisor_survey.py)."""

from __future__ import annotations

import json
import warnings

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.kernelfile import load_kernels


def run(*args) -> int:
    return main([str(a) for a in args])


# The file as Advisor 2023.0 writes it: `sep=,`, a blank line, the two-line banner in one
# quoted cell, the version line, a blank line, then the header (the layout a public Advisor
# pipeline's parser documents from a real run). Column names as Advisor writes them (that
# parser; waggyz/femera-mini-app perf/femera-advisor-survey-csv.sh lists ID, Self Time,
# Self Elapsed Time, Self GFLOPS, Self AI, Self GFLOP, Self Memory GB, Self GB/s).
# Numbers: a public Advisor walk-through's 400x400 fp32 matrix power, inner loop before
# and after a loop interchange: Self GFLOP 12.800, Self Memory GB 76.800 (12 B and 2 FLOP
# a multiply-add), Self Time 2.150 s / 0.340 s, Self GFLOPS 5.954 / 37.651, Self AI 0.167.
SURVEY = """\
sep=,

"Intel(R) Advisor Command Line Tool
Copyright (C) 2009-2023 Intel Corporation. All rights reserved."
"Survey Data version=1.1.0","delimiter=,"

"ID","Function Call Sites and Loops","Self Time","Self Elapsed Time","Self GFLOP",\
"Self Memory GB","Self GFLOPS","Self GB/s","Self AI","Data Types","Source Location"
"3","[loop in multiply at solution.cpp:32]","2.150s","2.150s","12.800","76.800","5.954",\
"35.721","0.167","Float32","solution.cpp:32"
"6","[loop in multiply at solution.cpp:39]","0.340s","0.340s","12.800","76.800","37.651",\
"225.906","0.167","Float32","solution.cpp:39"
"9","[loop in main at solution.cpp:60]","< 0.001s","< 0.001s","0.000","0.000","","","",\
"","solution.cpp:60"
"""


def _write(tmp_path, text, name="loops.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_real_layout_read_in_si_units(tmp_path):
    path = _write(tmp_path, SURVEY)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        before, after = load_kernels(path)
    assert before.name == "[loop in multiply at solution.cpp:32]"
    # GFLOP and GB are decimal: 12.800 GFLOP = 1.28e10 FLOP, 76.800 GB = 7.68e10 bytes at L1
    # (the loads and stores the loop ran: Advisor's CARM bytes)
    assert dict(before.flop) == {"fp32": 1.28e10}
    assert dict(before.bytes) == {"L1": 7.68e10}
    assert before.seconds == 2.15 and after.seconds == 0.34
    assert before.provenance["flop"] == "counted" and before.provenance["seconds"] == "measured"
    assert before.meta["source"] == "solution.cpp:32" and before.meta["advisor_id"] == "3"
    # by hand: 1.28e10 / 2.15 = 5.953 GFLOP/s (Advisor 5.954), 1.28e10 / 0.34 = 37.65
    assert before.total_flop / before.seconds == pytest.approx(5.954e9, rel=1e-3)
    assert after.total_flop / after.seconds == pytest.approx(37.651e9, rel=1e-3)
    said = " | ".join(str(w.message) for w in got)
    # the '< 0.001s' row: no rate to place, said with its line; no given-value mismatch
    assert "loops.csv:10: '[loop in main at solution.cpp:60]': skipped" in said
    assert "below Advisor's resolution" in said and "Self GFLOPS" not in said


# `--csv-delimiter=tab` (femera's script), the memory-level columns of a run with
# --enable-cache-simulation (Self L2 GB, Self L3 GB, Self DRAM GB: the public pipeline's
# real header) and Data Types 'Float64; UInt64' (a real EP loop's); one loop at two call
# sites, as Advisor lists it.
LEVELS = "\t".join(["ID", "Function Call Sites and Loops", "Self Elapsed Time",
                    "Self GFLOP", "Self Memory GB", "Self L2 GB", "Self L3 GB",
                    "Self DRAM GB", "Data Types"]) + "\n" + "\n".join("\t".join(r) for r in (
    ["4", "[loop in vranlc_ at randi8.f90:59]", "1.250s", "2.000", "16.000", "4.000",
     "2.000", "0.500", "Float64; UInt64"],
    ["8", "[loop in vranlc_ at randi8.f90:59]", "0.500s", "0.800", "6.400", "", "", "",
     "Float64; UInt64"])) + "\n"


def test_tab_delimited_levels_precision_and_call_sites(tmp_path):
    with pytest.warns(Warning, match="once per call site"):
        first, second = load_kernels(_write(tmp_path, LEVELS))
    assert dict(first.flop) == {"fp64": 2.0e9}
    assert dict(first.bytes) == {"L1": 16e9, "L2": 4e9, "L3": 2e9, "DRAM": 5e8}
    assert second.name == "[loop in vranlc_ at randi8.f90:59] #2"
    assert dict(second.bytes) == {"L1": 6.4e9}   # empty level cells: not collected


def test_report_on_a_roof_from_advisor_loops(tmp_path, capsys):
    """`rooflab report loops.csv --on roof.json`: the reviewer's stencil loop (Self GFLOP
    2.622, Self Memory GB 20.975, Self Elapsed Time 0.7556, fp64) on a typed L1 800 GB/s,
    fp64 257 GFLOP/s roof: AI 0.125006, attainable 800e9 x 0.125006 = 100.0 GFLOP/s,
    achieved 2.622e9 / 0.7556 = 3.4701 GFLOP/s: 3.470 % of roof."""
    loops = _write(tmp_path, "Function Call Sites and Loops,Self Elapsed Time,Self GFLOP,"
                             "Self Memory GB,Self GFLOPS,Self GB/s,Self AI,Data Types\n"
                             "[loop in compute at roofline.cpp:42],0.7556,2.622,20.975,3.47,"
                             "27.76,0.125,Float64\n")
    roof = tmp_path / "roof.json"
    assert run("specs", "import", "--l1", "800GB/s", "--fp64", "257GFLOP/s", "--measured",
               "-o", roof) == 0
    capsys.readouterr()
    assert run("report", loops, "--on", roof, "--json") == 0
    out = capsys.readouterr()
    (point,) = json.loads(out.out)["analysis"]
    assert point["precision"] == "fp64" and point["level"] == "L1"
    assert point["attainable_flop_per_s"] == pytest.approx(100.005e9, rel=1e-4)
    assert point["percent_of_roof"] == pytest.approx(3.470, rel=1e-3)
    assert "precision not given" not in out.err   # Data Types said fp64


def test_missing_column_names_advisor_and_the_export(tmp_path, capsys):
    path = _write(tmp_path, "Function Call Sites and Loops,Self Time,Self GFLOP,Self GFLOPS\n"
                            "[loop in f at a.c:3],1.0s,2.0,2.0\n")
    with pytest.raises(ParseError, match="Intel Advisor survey CSV without column"):
        load_kernels(path)
    assert run("report", path, "--on", "H100") == 2
    err = capsys.readouterr().err
    assert "Self Memory GB" in err and "advisor --report=survey --format=csv" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "missing column(s) name" not in err   # the old, Advisor-blind error


def test_time_column_at_odds_with_advisors_rate_is_warned(tmp_path):
    # Self Time only, 4x the elapsed time Advisor's Self GFLOPS was worked out from (a
    # loop on 4 threads): 2.0 / 4.0 = 0.5 GFLOP/s here, Advisor says 2.0
    path = _write(tmp_path, "Function Call Sites and Loops,Self Time,Self GFLOP,"
                            "Self Memory GB,Self GFLOPS,Data Types\n"
                            "[loop in f at a.c:3],4.000s,2.0,8.0,2.0,Float64\n")
    with pytest.warns(Warning, match=r"Self GFLOPS 2 but Self GFLOP / Self Time = 0\.5"):
        (k,) = load_kernels(path)
    assert k.seconds == 4.0 and k.meta["seconds_column"] == "Self Time"


def test_survey_given_as_a_roof_is_named(tmp_path, capsys):
    loops = _write(tmp_path, SURVEY)
    assert run("report", loops, "--on", loops) == 2
    err = capsys.readouterr().err
    assert "Intel Advisor's survey (per-loop) CSV, a kernel file" in err


def test_mixed_data_types_held_to_fp64_and_said(tmp_path):
    # 'Float64; Float32': Advisor's Self GFLOP is one count for both (its FAQ: SP and DP
    # are not counted apart), so the lower peak, fp64, with a warning
    path = _write(tmp_path, "Function Call Sites and Loops,Self Elapsed Time,Self GFLOP,"
                            "Self Memory GB,Data Types\n"
                            "[loop in g at b.c:9],0.5,1.0,4.0,Float64; Float32\n")
    with pytest.warns(Warning, match="both Float64 and Float32"):
        (k,) = load_kernels(path)
    assert dict(k.flop) == {"fp64": 1e9} and "precision" not in k.provenance
