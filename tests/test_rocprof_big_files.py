"""rocprof CSVs at real sizes (review r5 F1, F2, F6): the same kernels from the wide and the
long layout, work done once per dispatch (not once per cell or twice per dispatch), the file
streamed (not held three times over), and one warning per kernel for a skip that repeats."""

from __future__ import annotations

import tracemalloc

import pytest

from rooflab.cli.main import main
from rooflab.ingest import rocprof, rocprof_cells, rocprof_counters
from rooflab.ingest.rocprof import load_rocprof
from rooflab.ingest.skips import SkipLog

LONG_HEAD = ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id",'
             '"Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size","LDS_Block_Size",'
             '"Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Counter_Name",'
             '"Counter_Value","Start_Timestamp","End_Timestamp"\n')
WIDE_HEAD = ("Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_ADD_F32,"
             "SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,"
             "TCC_EA_WRREQ_64B_sum\n")
# one dispatch's counters (the same for every dispatch) under rocprofv3's MI300 names
COUNTERS = {"SQ_INSTS_VALU_ADD_F32": 10, "SQ_INSTS_VALU_FMA_F32": 100, "TCC_EA0_RDREQ": 1000,
            "TCC_EA0_RDREQ_32B": 200, "TCC_EA0_WRREQ": 500, "TCC_EA0_WRREQ_64B": 100}
KERNELS = ('"void triad<float>(float*, float const*, float const*, float) [clone .kd]"',
           "scale_f32")
# by hand: 64 lanes x (ADD + 2 x FMA); HBM: 32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B)
# + 64 x WRREQ_64B + 32 x (WRREQ - WRREQ_64B)
FLOP = 64 * (10 + 2 * 100)                                    # 13,440
DRAM = 32 * 200 + 64 * 800 + 64 * 100 + 32 * 400              # 76,800


def long_rows(n: int, counters=COUNTERS, first: int = 1) -> list[str]:
    """rocprofv3's *_counter_collection.csv rows: n dispatches from id `first`, alternating
    two kernels, one row per counter, each dispatch 1000 ns long."""
    rows = []
    for d in range(first, first + n):
        t = 10_000 * d
        rows += [f'{d},{d},"Agent 4",1,312,312,1048576,{d % 2},{KERNELS[d % 2]},64,0,0,8,0,'
                 f'16,"{c}",{v},{t},{t + 1000}' for c, v in counters.items()]
    return rows


def long_file(path, n: int, newline="\n") -> None:
    rows = [LONG_HEAD.rstrip("\n"), *long_rows(n)]
    path.write_text(newline.join(rows) + newline, newline="")


def wide_file(path, n: int) -> None:
    """The same dispatches in rocprof v1's results.csv layout (one row each, `_sum`)."""
    c = COUNTERS
    with path.open("w") as fh:
        fh.write(WIDE_HEAD)
        for d in range(1, n + 1):
            t = 10_000 * d
            fh.write(f"{d},{KERNELS[d % 2]},2,0,{t},{t + 1000},{c['SQ_INSTS_VALU_ADD_F32']},"
                     f"{c['SQ_INSTS_VALU_FMA_F32']},{c['TCC_EA0_RDREQ']},"
                     f"{c['TCC_EA0_RDREQ_32B']},{c['TCC_EA0_WRREQ']},{c['TCC_EA0_WRREQ_64B']}\n")


def _numbers(imp):
    return sorted((k.name, k.calls, dict(k.flop), dict(k.bytes), k.seconds, k.samples,
                   k.unit) for k in imp.kernels)


def test_long_and_wide_layouts_give_the_hand_counted_kernels(tmp_path):
    long_p, wide_p = tmp_path / "run_counter_collection.csv", tmp_path / "results.csv"
    long_file(long_p, 400)
    wide_file(wide_p, 400)
    got = _numbers(load_rocprof(str(long_p)))
    assert got == _numbers(load_rocprof(str(wide_p)))
    assert [(name, calls) for name, calls, *_ in got] == [("scale_f32", 200), ("triad<…>", 200)]
    for _, _, flop, nbytes, seconds, samples, unit in got:
        assert flop == {"fp32": 200 * FLOP} and nbytes == {"DRAM": 200 * DRAM}
        assert seconds == pytest.approx(200 * 1000e-9)
        assert samples == pytest.approx((1e-6,) * 200)
        assert unit == "vector"


def test_a_long_dispatch_s_text_cell_is_tried_once_not_once_per_counter_row(tmp_path,
                                                                            monkeypatch):
    """'Agent 4' (Agent_Id) is not a number: it was parsed (and its ValueError raised and
    caught) on each of a dispatch's 6 counter rows, with every other identity cell."""
    p = tmp_path / "c_counter_collection.csv"
    long_file(p, 50)
    calls = []
    real = rocprof_cells.parse_number
    monkeypatch.setattr(rocprof_cells, "parse_number",
                        lambda text: calls.append(text) or real(text))
    imp = load_rocprof(str(p))
    assert sum(k.calls for k in imp.kernels) == 50
    assert calls == ["Agent 4"] * 50


def test_each_dispatch_s_bytes_are_counted_once(tmp_path, monkeypatch):
    """_with_known_levels ran _bytes a second time per dispatch for its unknown levels."""
    p = tmp_path / "results.csv"
    wide_file(p, 30)
    calls = []
    real = rocprof_counters._bytes
    monkeypatch.setattr(rocprof_counters, "_bytes",
                        lambda *a: calls.append(1) or real(*a))
    assert sum(k.calls for k in load_rocprof(str(p)).kernels) == 30
    assert len(calls) == 30


def test_long_file_is_streamed_not_held_three_times(tmp_path, monkeypatch):
    """The text, its lines and its parsed rows were all held at once: 10.4x the file size
    at the peak here (1.3 GB for a 126 MB file). Now the peak is what is kept, the
    dispatches' counters (2.3x here: 21 numbers a dispatch), and one chunk of the file."""
    p = tmp_path / "big_counter_collection.csv"
    long_file(p, 3000)
    size = p.stat().st_size
    monkeypatch.setattr(rocprof, "_CHUNK", 1 << 16)
    tracemalloc.start()
    try:
        launches = rocprof._dispatches(str(p), SkipLog(str(p)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(launches) == 3000 and size > 1_000_000
    assert peak < 3 * size, f"peak {peak / size:.1f}x the file"


TRICKY = ("a,b\r\nc,\"d\ne\"\r\r\nf\x0cg\u2028h,i\x85j\r\n\r\n\nk\rl\x1c\x1dm,n\v"
          "o\u2029p\r")


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_lines_read_a_chunk_at_a_time_are_splitlines(tmp_path, monkeypatch, chunk):
    """A \\r\\n split between two chunks is one line break, as in text.splitlines(); a line
    longer than many chunks is whole."""
    p = tmp_path / "t.csv"
    p.write_text(TRICKY + "q,r", newline="")
    monkeypatch.setattr(rocprof, "_CHUNK", chunk)
    for text in (TRICKY + "q,r", TRICKY, "z" * 1000 + "\r\n" + "w" * 300 + "\r"):
        p.write_text(text, newline="")
        with rocprof.open_text(str(p)) as fh:
            assert list(rocprof._lines(str(p), fh)) == text.splitlines()


def test_crlf_long_file_read_in_small_chunks_gives_the_same_kernels(tmp_path, monkeypatch):
    p = tmp_path / "crlf_counter_collection.csv"
    long_file(p, 40, newline="\r\n")
    whole = _numbers(load_rocprof(str(p)))
    monkeypatch.setattr(rocprof, "_CHUNK", 13)
    assert _numbers(load_rocprof(str(p))) == whole
    assert [(name, calls) for name, calls, *_ in whole] == [("scale_f32", 20), ("triad<…>", 20)]


def test_json_after_a_long_blank_start_is_still_refused(tmp_path, monkeypatch):
    p = tmp_path / "out_counter_collection.csv"
    p.write_text(" \n" * 50 + '{"rocprofiler-sdk-tool": []}')
    monkeypatch.setattr(rocprof, "_CHUNK", 8)
    with pytest.raises(Exception, match="a JSON file, not a CSV"):
        load_rocprof(str(p))


def test_a_skip_repeated_on_every_dispatch_is_one_warning_per_kernel(tmp_path, capsys):
    """Split counters joined from other passes (RDREQ_32B > RDREQ on every dispatch) gave
    one warning line per dispatch (12,500 lines for a 100,000-row file). The counters as
    this MI300 file spells them, TCC_EA0_ (s36 O)."""
    p = tmp_path / "mixed_counter_collection.csv"
    bad = {**COUNTERS, "TCC_EA0_RDREQ_32B": 2000}
    p.write_text("\n".join([LONG_HEAD.rstrip("\n"), *long_rows(100, bad),
                            *long_rows(2, first=101)]) + "\n")
    assert main(["rocprof", str(p), "--on", "mi300x", "--json"]) == 0
    warnings = [w for w in capsys.readouterr().err.splitlines() if "skipped" in w]
    # the first dispatch of each kernel named, with its own numbers, and how many more
    assert warnings == [
        f"warning: {p}:2: launch 1 of 'scale_f32' skipped: TCC_EA0_RDREQ_32B 2000 > "
        f"TCC_EA0_RDREQ 1000, the reads they are a part of; these counts are not of one "
        f"dispatch (counters joined from different runs or passes?): collect them together "
        f"(and 49 more launches like it)",
        f"warning: {p}:8: launch 2 of 'triad<…>' skipped: TCC_EA0_RDREQ_32B 2000 > "
        f"TCC_EA0_RDREQ 1000, the reads they are a part of; these counts are not of one "
        f"dispatch (counters joined from different runs or passes?): collect them together "
        f"(and 49 more launches like it)"]


def test_grouped_skips_say_one_more_in_the_singular():
    log = SkipLog("f.csv")
    log.add_grouped(5, "launch 3 of 'k' skipped: zero time (EndNs 7 = BeginNs 7)",
                    key="k zero", what="launches")
    log.add_grouped(9, "launch 4 of 'k' skipped: zero time (EndNs 9 = BeginNs 9)",
                    key="k zero", what="launches")
    log.add_grouped(2, "metric 'x' is not used", what="rows")
    assert [str(s) for s in log.skips()] == [
        "f.csv:2: metric 'x' is not used",
        "f.csv:5: launch 3 of 'k' skipped: zero time (EndNs 7 = BeginNs 7) (and 1 more "
        "launch like it)"]
