"""Readers' leftovers of the s35 audit (helper I): rocprof, ncu's long CSV, Advisor's roofs.

By hand:
- conftest's rocprofv3 folder: SQ_INSTS_VALU_MUL_F64 1000 x 64 lanes = 64 000 fp64 FLOP;
  DRAM 64 x 500 reads + 32 x 500 writes = 48 000 B; its TCC_EA0_ names are MI300's spelling,
  without TCC_BUBBLE: under --on MI250X the note said "on MI300", now it says what made the
  file MI300 (the names) and that --on names an older GPU.
- rocprof v1 results.csv, one dispatch: FMA_F32 16 384 x 64 lanes x 2 = 2 097 152 FLOP in
  EndNs - BeginNs = 11 000 - 1 000 ns = 10 us. With a second dispatch whose BeginNs is
  -5 000, that one read as 11 000 + 5 000 = 16 us (1 call + 16 us = 26 us, 2 calls); now it
  is skipped with FILE:2 and its field named: 1 call, 10 us.
- A NUL inside the header ('TCC_EA_WR\\0REQ_sum') made WRREQ "not collected" (DRAM = reads
  only); now the file is refused as binary, line 1, as files_decode.read_text refuses it;
  so is an ncu CSV with a NUL in its header (line 8 of nersc-gpp output1.csv).
- nersc-gpp output1.csv (ncu details page): launch 0's dram__bytes.sum 516 327 794 816 B on
  line 9; a copy with a second row 'dram__bytes.sum' = '1,000' on line 12 kept 1 000 B
  without a word; now a warning names launch 0, the metric, line 12 and the launch's line 9.
- An Advisor roofs text cut inside its 'DP Vector FMA Peak' row (line 6, no line break):
  four bandwidths and no Peak; the error said "the roof has no compute ceiling" without the
  file; now FILE:6 and what is missing (compute Peak roofs).
"""

from __future__ import annotations

import pytest

from rooflab.cli.main import main
from rooflab.ingest.ncu_files import load_ncu
from rooflab.ingest.rocprof import load_rocprof

HEAD = ("Index,KernelName,gpu-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ_sum,"
        "TCC_EA_WRREQ_sum\n")
ROW = "1,triad,0,1000,11000,16384,131072,65536\n"


def _run(capsys, *args) -> tuple[int, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_bubble_note_under_an_older_gpu_names_where_mi300_came_from(rocprofv3_folder, capsys):
    rc, text = _run(capsys, "report", rocprofv3_folder, "--on", "MI250X")
    assert rc == 0
    words = " ".join(text.split())
    assert "TCC_BUBBLE not collected on MI300" not in words
    assert ("the TCC_EA0_ counter names are MI300's (gfx942) spelling, so the file is read "
            "as MI300's although --on names an older GPU") in words
    (k,) = load_rocprof(rocprofv3_folder, device="MI250X").kernels
    assert k.flop == {"fp64": 64_000} and k.bytes["DRAM"] == 48_000


def test_bubble_note_under_mi300_is_unchanged(rocprofv3_folder):
    (k,) = load_rocprof(rocprofv3_folder, device="MI300X").kernels
    assert any(n.startswith("TCC_BUBBLE not collected on MI300: its 128-B DRAM reads")
               for n in k.meta.get("notes", ()))


def test_nul_in_the_rocprof_header_is_refused_as_binary(tmp_path, capsys):
    p = tmp_path / "results.csv"
    p.write_text(HEAD.replace("TCC_EA_WRREQ_sum", "TCC_EA_WR\x00REQ_sum") + ROW)
    rc, text = _run(capsys, "rocprof", str(p))
    assert rc == 2
    assert f"{p}:1: not a UTF-8 text file (binary data)" in text
    assert "not collected" not in text


def test_negative_begin_ns_is_skipped_naming_file_line_and_field(tmp_path, capsys):
    p = tmp_path / "results.csv"
    p.write_text(HEAD + "0,triad,0,-5000,11000,16384,131072,65536\n" + ROW)
    (k,) = load_rocprof(str(p)).kernels
    assert k.calls == 1 and k.seconds == pytest.approx(10e-6)        # was 2 calls, 26 us
    assert k.flop == {"fp32": 2_097_152}
    rc, text = _run(capsys, "rocprof", str(p))
    assert rc == 0
    assert (f"{p}:2: launch 0 of 'triad' skipped: negative timestamp (BeginNs -5000)"
            in " ".join(text.split()))


def test_a_file_of_negative_begin_ns_only_has_no_usable_dispatch(tmp_path, capsys):
    p = tmp_path / "results.csv"
    p.write_text(HEAD + "0,triad,0,-5000,11000,16384,131072,65536\n")
    rc, text = _run(capsys, "rocprof", str(p))
    assert rc == 2 and "negative timestamp (BeginNs -5000)" in text


def test_nul_in_an_ncu_header_is_refused_as_binary(fixtures_dir, tmp_path, capsys):
    """The header is line 8 of output1.csv; a NUL in 'Metric Unit' said the column was
    missing, as if the export lacked it."""
    text = (fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv").read_text()
    p = tmp_path / "nul.csv"
    p.write_text(text.replace('"Metric Unit"', '"Metric\x00Unit"'))
    rc, out = _run(capsys, "ncu", str(p))
    assert rc == 2 and f"{p}:8: not a UTF-8 text file (binary data)" in out


@pytest.fixture()
def ncu_twice(fixtures_dir, tmp_path):
    """nersc-gpp output1.csv with launch 0's dram__bytes.sum given again as 1,000 B."""
    lines = (fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv").read_text().splitlines(True)
    i = next(n for n, line in enumerate(lines) if "dram__bytes.sum" in line)
    assert i + 1 == 9
    lines.insert(i + 3, lines[i].replace('"516,327,794,816"', '"1,000"'))
    p = tmp_path / "twice.csv"
    p.write_text("".join(lines))
    return str(p)


def test_ncu_metric_twice_at_different_values_is_said(ncu_twice):
    imp = load_ncu([ncu_twice])
    (k,) = imp.kernels
    assert k.bytes["DRAM"] == 1000   # the last, as before: now said
    (skip,) = [s for s in imp.skips if "twice" in s.reason]
    assert skip.line == 12
    assert ("launch 0 of 'sigma_gpp_gpu_34' has metric 'dram__bytes.sum' twice with "
            "different values: 5.16328e+11 on line 9, then 1000 on line 12"
            in skip.reason)


def test_ncu_metric_twice_at_the_same_value_is_quiet(fixtures_dir, tmp_path):
    lines = (fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv").read_text().splitlines(True)
    i = next(n for n, line in enumerate(lines) if "dram__bytes.sum" in line)
    lines.insert(i + 3, lines[i])
    p = tmp_path / "same.csv"
    p.write_text("".join(lines))
    imp = load_ncu([str(p)])
    assert imp.kernels[0].bytes["DRAM"] == 516_327_794_816
    assert not [s for s in imp.skips if "twice" in s.reason]


ADVISOR = ("L1 bandwidth   \t  2315579346298\tmemory\nL2 bandwidth   \t  915579346298\tmemory\n"
           "L3 bandwidth   \t  415579346298\tmemory\nDRAM bandwidth \t  115579346298\tmemory\n"
           "L1 bandwidth (single-threaded)\t  315579346298\tmemory\n")


def test_cut_advisor_roofs_name_the_file_line_and_what_is_missing(tmp_path, capsys):
    p = tmp_path / "roofs.txt"
    p.write_text(ADVISOR + "DP Vector FMA Peak     \t  13")
    rc, text = _run(capsys, "specs", "import", str(p), "-o", str(tmp_path / "r.json"))
    assert rc == 2
    assert (f"{p}:6: Intel Advisor's roofs report has no all-thread compute (Peak) roof "
            f"rooflab reads: the file ends inside this line ('DP Vector FMA Peak 13'"
            in " ".join(text.split()))


def test_advisor_roofs_with_bandwidths_only_name_the_file(tmp_path, capsys):
    p = tmp_path / "roofs.txt"
    p.write_text(ADVISOR)
    rc, text = _run(capsys, "specs", "import", str(p), "-o", str(tmp_path / "r.json"))
    assert rc == 2
    assert f"the roof has no compute ceiling ({p} gave bandwidths only)" in text
