"""Session 36 O: perf and likwid name another verb's file with its verb (ncu_csv.other_kind,
the one wrong-kind helper); a one-line counter file without its final line break gets no
'file cut short?' warning; rocprof's split-counter error spells MI300's TCC_EA0_ names."""

from __future__ import annotations

import pytest
from cli_inproc import run_cli

from rooflab.errors import ParseError
from rooflab.ingest.rocprof import load_rocprof

KERNELS_JSON = '[{"name": "k", "flop": 1e9, "bytes": 1e6, "seconds": 1e-3}]\n'
KERNELS_CSV = "name,flop,bytes,seconds\nk,1e9,1e6,1e-3\n"


@pytest.mark.parametrize("verb, says", [
    ("perf", "no perf stat counter line found (value, [unit,] event); "),
    ("likwid", "no likwid-perfctr table (a 'TABLE,Group 1 Raw,...' line) found; "),
])
def test_a_kernel_csv_points_to_report(tmp_path, verb, says):
    """A kernel file's header has name and flop: other_kind names `rooflab report`. Old:
    how to collect perf stat / likwid-perfctr output, which the user did not want."""
    f = tmp_path / "k.csv"
    f.write_text(KERNELS_CSV)
    done = run_cli(verb, str(f))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: {f}:1: {says}it is a kernel file (name,flop,bytes,...); put it on a roof "
        f"with `rooflab report FILE --on DEVICE`")


@pytest.mark.parametrize("verb", ["perf", "likwid"])
def test_a_kernel_json_points_to_report(tmp_path, verb):
    """A JSON list: other_kind's JSON hint (a kernel list to `rooflab report FILE`)."""
    f = tmp_path / "k.json"
    f.write_text(KERNELS_JSON)
    done = run_cli(verb, str(f))
    assert done.returncode == 2
    assert "a kernel list to `rooflab report FILE` or `rooflab plot FILE`" in done.stderr
    assert "collect with" not in done.stderr


def test_a_torch_trace_given_to_perf_names_the_torch_verb(tmp_path):
    """{"traceEvents": ...} read by perf as -j lines: no counter in them; now named."""
    f = tmp_path / "t.json"
    f.write_text('{"traceEvents": []}\n')
    done = run_cli("perf", str(f))
    assert "it is a PyTorch profiler trace; read it with `rooflab torch FILE`" in done.stderr


def test_a_one_line_perf_file_that_parses_is_not_called_cut(tmp_path):
    """'1.5,,duration_time' with no final break: a file of that one line is hand-written
    or pasted, and it parses (1.5 s read); old: 'the file ends inside this line' warning.
    Either way the run then stops at 'no roof' (no FP event), exit 2."""
    f = tmp_path / "one.csv"
    f.write_text("1.5,,duration_time")
    done = run_cli("perf", str(f))
    assert "ends inside this line" not in done.stderr
    assert "no FP event" in done.stderr


def test_a_last_line_without_its_break_after_others_still_warns(tmp_path):
    """Two lines, the last without its break: a file cut short may have cut its last
    number ('62500' of '6250000'), so the warning stays (line 2). A guard: passes on the
    old code too."""
    f = tmp_path / "two.csv"
    f.write_text("1.5,,duration_time\n2e9,,fp_arith_inst_retired.scalar_double")
    done = run_cli("perf", str(f))
    assert f"warning: {f}:2: the file ends inside this line" in done.stderr


def test_mi300_split_error_uses_its_tcc_ea0_spelling(tmp_path):
    """TCC_EA0_RDREQ_32B 200 > TCC_EA0_RDREQ 100 on an MI300 file (its TCC_EA0_ names):
    the 32-B reads are a part of all reads, so the counts are not of one dispatch. Old:
    'TCC_EA_RDREQ_32B 200 > TCC_EA_RDREQ 100', names rocprofv3 does not know there."""
    counts = {"TCC_EA0_RDREQ_sum": 100, "TCC_EA0_RDREQ_32B_sum": 200,
              "TCC_EA0_WRREQ_sum": 100, "TCC_EA0_WRREQ_64B_sum": 50}
    p = tmp_path / "results.csv"
    p.write_text("Index,KernelName,gpu-id,queue-id,BeginNs,EndNs," + ",".join(counts)
                 + "\n0,k,2,0,1000,11000," + ",".join(str(v) for v in counts.values()) + "\n")
    with pytest.raises(ParseError) as err:
        load_rocprof(str(p))
    assert "TCC_EA0_RDREQ_32B 200 > TCC_EA0_RDREQ 100, the reads they are a part of" \
        in str(err.value)


def test_mi300_write_split_error_uses_its_spelling(tmp_path):
    """TCC_EA0_WRREQ_64B 300 > TCC_EA0_WRREQ 100: the 64-B writes are a part of all."""
    counts = {"TCC_EA0_RDREQ_sum": 100, "TCC_EA0_RDREQ_32B_sum": 10,
              "TCC_EA0_WRREQ_sum": 100, "TCC_EA0_WRREQ_64B_sum": 300}
    p = tmp_path / "results.csv"
    p.write_text("Index,KernelName,gpu-id,queue-id,BeginNs,EndNs," + ",".join(counts)
                 + "\n0,k,2,0,1000,11000," + ",".join(str(v) for v in counts.values()) + "\n")
    with pytest.raises(ParseError, match=r"TCC_EA0_WRREQ_64B 300 > TCC_EA0_WRREQ 100, the "
                                         r"writes it is a part of"):
        load_rocprof(str(p))
