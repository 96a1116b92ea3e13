"""Review s26 r2 F5: Intel Advisor's roofs report was recognised by `specs import` but
refused, with a command to retype four of its figures that dropped the scalar, add,
single-threaded and int64 roofs; its text form got likwid-bench's advice. Both are now
imported as they stand (hardware/advisor_roofs.py)."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main
from rooflab.hardware.advisor_roofs import is_advisor_roofs, parse_advisor_roofs
from rooflab.hardware.resolve import load_roofs


def run(*args) -> int:
    return main([str(a) for a in args])


# `advisor --report=roofs --format=csv`: the rows are a real Advisor 2023.0 run on a Xeon
# Gold 5317 node, quoted in a public Advisor pipeline's design note (its parser reads the
# `Name` header row, then name, bytes/s or FLOP/s, memory|compute, device); the header as
# tests/test_s20_f7_roof_imports.py has it.
ROOFS_CSV = """\
Name,Bandwidth,Type,Device
DRAM Bandwidth (single node),85832856271,memory,CPU
DRAM Bandwidth,175273218366,memory,CPU
L3 Bandwidth,579993235472,memory,CPU
DP Vector FMA Peak,1349734446677,compute,CPU
DP Vector Add Peak,674784613608,compute,CPU
Scalar Add Peak,87528623391,compute,CPU
SP Vector FMA Peak,2699332504425,compute,CPU
"""

# `advixe-cl --report=roofs` (no --format): the text report of Advisor 2019 on a Broadwell
# E5-2695 v4, name, tab, value, tab, type, as reframe-hpc/reframe's cscs-checks/tools/
# profiling_and_debugging/intel_advisor_roofline.py quotes it (rows of that listing)
ROOFS_TEXT = """\
DRAM Bandwidth (single node)             \t   63206331080\t memory
DRAM Bandwidth                           \t  125993278750\t memory
DRAM Bandwidth (single-threaded)         \t   12715570803\t memory
L1 Bandwidth                             \t11360856466728\t memory
Scalar L1 Bandwidth                      \t 2648216636280\t memory
L1 bandwidth (single-threaded)           \t  315579346298\t memory
L2 Bandwidth                             \t 3102773429268\t memory
L2 bandwidth (single-threaded)           \t   86188150813\t memory
SP Vector FMA Peak                       \t 2759741518342\tcompute
DP Vector FMA Peak                       \t 1379752337990\tcompute
DP Vector FMA Peak (single-threaded)     \t   49563336304\tcompute
Scalar Add Peak                          \t   93438527464\tcompute
Scalar Add Peak (single-threaded)        \t    3289577753\tcompute
DP Vector Add Peak                       \t  344978547363\tcompute
Integer Scalar Add Peak                  \t  228677310757\tcompute
Int64 Vector Add Peak                    \t  747457604632\tcompute
Int32 Vector Add Peak                    \t 1494880413924\tcompute
"""


def _import(tmp_path, name, text, *at, capsys=None):
    src = tmp_path / name
    src.write_text(text)
    out = tmp_path / "roof.json"
    assert run("specs", "import", f"{src}{''.join(at)}", "-o", out) == 0
    return load_roofs(str(out))[0], src


def test_csv_imported_with_every_roof_rooflab_has_a_ceiling_for(tmp_path, capsys):
    roof, src = _import(tmp_path, "roofs.csv", ROOFS_CSV)
    err = capsys.readouterr().err
    assert roof.kind == "measured"
    # bytes/s and FLOP/s as written, no prefix
    assert {c.level: c.value for c in roof.memory} == {"L3": 579993235472,
                                                       "DRAM": 175273218366}
    assert {c.label: c.value for c in roof.compute} == {
        "fp64 vector": 1349734446677, "fp32 vector": 2699332504425,
        # Scalar Add Peak: x86's scalar adds run at one rate in fp64 and fp32
        "fp64 scalar": 87528623391, "fp32 scalar": 87528623391}
    for c in (*roof.compute, *roof.memory):
        assert c.provenance == "measured" and str(src) in c.source
        assert c.method.startswith("Advisor's '")
    assert "a scalar FMA loop can go up to 2x it" in roof.find_compute("fp64", "scalar").method
    # ridge fp64 / DRAM by hand: 1349734446677 / 175273218366 = 7.7007
    dp, dram = roof.find_compute("fp64", "vector"), roof.find_memory("DRAM")
    assert dp.value / dram.value == pytest.approx(7.7007, rel=1e-4)
    notes = " | ".join(roof.notes)
    # the Add peak, 674784613608 / 1349734446677 = 49.99 %: the no-FMA ceiling, said
    assert "'DP Vector Add Peak' 675 GFLOP/s is 50.0 % of its FMA peak" in notes
    # one NUMA node's DRAM has no rooflab level: kept with its value, not dropped unsaid
    assert "'DRAM Bandwidth (single node)' 85.8 GB/s" in notes
    assert "note: Advisor's 'DP Vector Add Peak'" in err and "Traceback" not in err


def test_text_report_all_threads_and_single_threaded_roofs(tmp_path, capsys):
    assert is_advisor_roofs(ROOFS_TEXT)
    rows = parse_advisor_roofs(ROOFS_TEXT)
    assert len(rows) == 17 and rows[3].name == "L1 Bandwidth" and rows[3].line == 4
    roof, src = _import(tmp_path, "roofs.txt", ROOFS_TEXT)
    assert {c.level: c.value for c in roof.memory} == {
        "L1": 11360856466728, "L2": 3102773429268, "DRAM": 125993278750}
    labels = {c.label: c.value for c in roof.compute}
    assert labels["fp64 vector"] == 1379752337990 and labels["fp32 vector"] == 2759741518342
    assert labels["fp64 scalar"] == 93438527464
    # the integer roofs: int64 / int32 vector adds, scalar integer adds for both widths
    assert labels["int64 vector"] == 747457604632 and labels["int32 vector"] == 1494880413924
    assert labels["int64 scalar"] == labels["int32 scalar"] == 228677310757
    notes = " | ".join(roof.notes)
    # Broadwell: one vector add port, two FMA ports: 344978547363 / 1379752337990 = 25.0 %
    assert "'DP Vector Add Peak' 345 GFLOP/s is 25.0 % of its FMA peak" in notes
    assert "'Scalar L1 Bandwidth' 2.65 TB/s" in notes
    assert f"{src}@1t" in notes and "single-threaded roofs (5," in notes
    capsys.readouterr()
    # '@1t': the single-threaded rows, a roof of one core
    one, _ = _import(tmp_path, "roofs.txt", ROOFS_TEXT, "@1t")
    assert one.name == "roofs (Intel Advisor, 1 thread)"
    assert {c.level: c.value for c in one.memory} == {
        "L1": 315579346298, "L2": 86188150813, "DRAM": 12715570803}
    assert {c.label: c.value for c in one.compute} == {
        "fp64 vector": 49563336304, "fp64 scalar": 3289577753, "fp32 scalar": 3289577753}


def test_one_thread_roof_judges_a_loop(tmp_path, capsys):
    """The reviewer's stencil loop (2.622 GFLOP, 20.975 GB, 0.7556 s) on the Broadwell's
    one-thread roof: AI 2.622 / 20.975 = 0.125006, L1 315.579 GB/s x 0.125006 = 39.449
    GFLOP/s attainable (the fp64 peak 49.56 is above it), achieved 2.622 / 0.7556 = 3.4701
    GFLOP/s: 8.796 % of roof."""
    import json

    _import(tmp_path, "roofs.txt", ROOFS_TEXT, "@1t")
    loops = tmp_path / "loops.csv"
    loops.write_text("name,flop,bytes,seconds,precision,level\n"
                     "stencil,2.622e9,2.0975e10,0.7556,fp64,L1\n")
    capsys.readouterr()
    assert run("report", loops, "--on", tmp_path / "roof.json", "--json") == 0
    (point,) = json.loads(capsys.readouterr().out)["analysis"]
    assert point["attainable_flop_per_s"] == pytest.approx(39.449e9, rel=1e-4)
    assert point["percent_of_roof"] == pytest.approx(8.796, rel=1e-3)


def test_bad_suffix_and_gpu_only_and_on_hint(tmp_path, capsys):
    src = tmp_path / "roofs.csv"
    src.write_text(ROOFS_CSV)
    assert run("specs", "import", f"{src}@L1", "-o", tmp_path / "r.json") == 2
    err = capsys.readouterr().err
    assert "'@1t' picks the file's single-threaded roofs" in err and err.count("\n") == 1
    # --on the report itself: the import line that now works, then --on roof.json
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,precision\nk,2e9,3.2e10,0.5,fp64\n")
    assert run("report", k, "--on", src) == 2
    err = capsys.readouterr().err
    assert f"`rooflab specs import {src} -o roof.json`" in err
    assert err.rstrip().endswith("then --on roof.json")
    # given as kernels: said what it is, not "missing column(s) name, flop, bytes"
    assert run("report", src, "--on", "H100") == 2
    err = capsys.readouterr().err
    assert "Intel Advisor's roofs report" in err and "missing column" not in err
    # an all-GPU report (`advisor --report=roofs --gpu`): no CPU roof to read, said
    gpu = tmp_path / "gpu.csv"
    gpu.write_text("Name,Bandwidth,Type,Device\nGTI Bandwidth,41000000000,memory,GPU\n"
                   "DP Vector FMA Peak,500000000000,compute,GPU\n")
    assert run("specs", "import", gpu, "-o", tmp_path / "g.json") == 2
    err = capsys.readouterr().err
    assert "no all-thread CPU roof" in err and "GTI Bandwidth" in err
    assert not (tmp_path / "g.json").exists()
