"""Session 36 F: which GPU a rocprof file's counters are read as, and MI300's FETCH_SIZE.

The spelling of the HBM request counters is the recording GPU's own: rocprofiler's
derived_counters.xml defines TCC_EA_RDREQ_sum for gfx9/gfx908/gfx90a and only
TCC_EA0_RDREQ_sum for gfx940-942 (rocprofiler-sdk's counter_defs.yaml the same), and
rocprof-compute's calc_ai reads TCC_EA_ on MI200, TCC_EA0_ + TCC_BUBBLE on MI300. A
TCC_EA0_ file under --on MI250X was already read as MI300's (s35); a TCC_EA_ file under
--on MI300X was read as MI300's too: 128-B L1 and L1->L2 read lines and a TCC_BUBBLE note.

Hand numbers, one dispatch: TCP_TOTAL_CACHE_ACCESSES 800, TCP_TCC_READ_REQ 300,
TCP_TCC_WRITE_REQ 50, TCC_EA_RDREQ 100 (RDREQ_32B 0), TCC_EA_WRREQ 100 (WRREQ_64B 100):
  MI200 (64-B lines): L1 64 x 800 = 51,200 B; L2 64 x 300 + 64 x 50 = 22,400 B
  MI300 (128-B lines, the old reading): L1 102,400 B; L2 128 x 300 + 64 x 50 = 41,600 B
  HBM either way: 64 x 100 reads + 64 x 100 64-B writes = 12,800 B.

FETCH_SIZE 12.5 KiB + WRITE_SIZE 6.25 KiB: DRAM 1024 x 18.75 = 19,200 B. On gfx942
rocprofv3's FETCH_SIZE adds 128 x TCC_BUBBLE (counter_defs.yaml), rocprof v1/v2's does
not (derived_counters.xml <gfx940>): an MI300 file read from FETCH_SIZE now says so.
"""

from __future__ import annotations

import json

from rooflab.cli.main import main

HEAD = "Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,"
COUNTS = {"TCP_TOTAL_CACHE_ACCESSES_sum": 800, "TCP_TCC_READ_REQ_sum": 300,
          "TCP_TCC_WRITE_REQ_sum": 50, "TCC_EA_RDREQ_sum": 100, "TCC_EA_RDREQ_32B_sum": 0,
          "TCC_EA_WRREQ_sum": 100, "TCC_EA_WRREQ_64B_sum": 100}


def _file(tmp_path, counts: dict, name: str = "results.csv") -> str:
    p = tmp_path / name
    p.write_text(HEAD + ",".join(counts) + "\n0,k,2,0,1000,11000,1000,"
                 + ",".join(str(v) for v in counts.values()) + "\n")
    return str(p)


def _kernel(capsys, path: str, on: str) -> tuple[dict, list[str]]:
    assert main(["rocprof", path, "--on", on, "--json"]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    return k["bytes"], k["meta"].get("notes", [])


def test_mi200_spelling_keeps_64_byte_lines_under_an_mi300(tmp_path, capsys):
    """TCC_EA_ names under --on MI300X: 64-B lines (51,200 / 22,400 B, not 102,400 /
    41,600), no TCC_BUBBLE note (an MI200 has none), and a note naming the spelling."""
    nbytes, notes = _kernel(capsys, _file(tmp_path, COUNTS), "MI300X")
    assert nbytes == {"L1": 51_200, "L2": 22_400, "DRAM": 12_800}
    assert not any("TCC_BUBBLE" in n for n in notes)
    assert any(n.startswith("the TCC_EA_ counter names are MI100/MI200's (gfx908/gfx90a) "
                            "spelling") and "although --on names an MI300" in n for n in notes)


def test_the_same_file_under_an_mi200_is_read_alike_without_a_note(tmp_path, capsys):
    """--on MI250X agrees with the file: the same 51,200 / 22,400 / 12,800 B, no note on
    the spelling (the --on MI300X bytes above are now these)."""
    nbytes, notes = _kernel(capsys, _file(tmp_path, COUNTS), "MI250X")
    assert nbytes == {"L1": 51_200, "L2": 22_400, "DRAM": 12_800}
    assert not any("counter names are" in n for n in notes)


def test_mi300_spelling_under_an_mi200_still_reads_128_byte_lines(tmp_path, capsys):
    """The other way round is kept: TCC_EA0_ names under --on MI250X are MI300's, L1
    128 x 800 = 102,400 B, L2 128 x 300 + 64 x 50 = 41,600 B, with the s35 note."""
    mi300 = {k.replace("TCC_EA_", "TCC_EA0_"): v for k, v in COUNTS.items()}
    nbytes, notes = _kernel(capsys, _file(tmp_path, mi300), "MI250X")
    assert nbytes == {"L1": 102_400, "L2": 41_600, "DRAM": 12_800}
    assert any("TCC_EA0_ counter names are MI300's" in n for n in notes)


def test_fetch_size_on_an_mi300_says_which_tools_count_the_128_byte_reads(tmp_path, capsys):
    """FETCH_SIZE 12.5 + WRITE_SIZE 6.25 KiB = 19,200 B on either GPU; only the MI300's
    reading notes that rocprof v1/v2's FETCH_SIZE counts a 128-B read as 64 B."""
    path = _file(tmp_path, {"FETCH_SIZE": 12.5, "WRITE_SIZE": 6.25})
    on300, notes300 = _kernel(capsys, path, "MI300X")
    on250, notes250 = _kernel(capsys, path, "MI250X")
    assert on300 == on250 == {"DRAM": 19_200}
    said = [n for n in notes300 if n.startswith("DRAM from FETCH_SIZE on MI300 (gfx942)")]
    assert len(said) == 1 and "rocprof v1/v2's as 64 B" in said[0]
    assert "TCC_BUBBLE" in said[0]
    assert not any("FETCH_SIZE on MI300" in n for n in notes250)


def test_gfx950_reads_are_counted_by_their_sized_counters(tmp_path, capsys):
    """MI350 (gfx950) counts reads by size; TCC_BUBBLE is no 128-B read count there
    (rocprofiler-sdk counter_defs.yaml FETCH_SIZE for gfx950; rocprof-compute 3.5.0's MI350
    fix). RDREQ 1000 = 100 x 32 B + 300 x 64 B + 600 x 128 B = 3,200 + 19,200 + 76,800 =
    99,200 B of reads; writes 200 x 64 B = 12,800 B; DRAM 112,000 B. The gfx942 formula
    read 128 x 50 + 32 x 100 + 64 x (1000 - 50 - 100) + 12,800 = 76,800 B."""
    sized = {"TCC_EA0_RDREQ_sum": 1000, "TCC_EA0_RDREQ_32B_sum": 100,
             "TCC_EA0_RDREQ_64B_sum": 300, "TCC_EA0_RDREQ_128B_sum": 600,
             "TCC_BUBBLE_sum": 50, "TCC_EA0_WRREQ_sum": 200, "TCC_EA0_WRREQ_64B_sum": 200}
    nbytes, notes = _kernel(capsys, _file(tmp_path, sized), "MI350X")
    assert nbytes == {"DRAM": 112_000}
    # without TCC_BUBBLE nor RDREQ_32B: the 32-B reads are RDREQ's rest, 1000 - 900 = 100,
    # the same 112,000 B, and no note asking for TCC_BUBBLE
    del sized["TCC_BUBBLE_sum"], sized["TCC_EA0_RDREQ_32B_sum"]
    nbytes, notes = _kernel(capsys, _file(tmp_path, sized, "b.csv"), "MI350X")
    assert nbytes == {"DRAM": 112_000}
    assert not any("TCC_BUBBLE" in n or "RDREQ_32B" in n for n in notes)
