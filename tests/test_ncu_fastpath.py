"""The details page's split of quoted lines (ingest/ncu_csv.py, _details) against csv.reader.

Rows of an ncu details page are split with str methods rather than csv.reader when the line
allows it (benchmarks/ncu_parse.py: 1.2 million rows). These tests read the same files both
ways, the split turned off through ncu_csv.SPLIT_QUOTED_LINES, and ask for the very same
result, compared through repr (metric order, every bit of every value, nan included): the
launches, the skipped rows with their lines, and the Kernels load_ncu makes of them.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rooflab.errors import ParseError
from rooflab.ingest import ncu_csv
from rooflab.ingest.ncu_files import load_ncu
from rooflab.ingest.skips import SkipLog

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
HEAD = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
        "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name",
        "Metric Unit", "Metric Value", "Rule Name", "Rule Type", "Rule Description",
        "Estimated Speedup Type", "Estimated Speedup"]
INST = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
METRICS = [("dram__bytes.sum", "Mbyte", "12.58"), ("lts__t_bytes.sum", "Kbyte", "25,170.5"),
           ("l1tex__t_bytes.sum", "byte", "50,331,648"),
           ("gpu__time_duration.sum", "usecond", "10.24"),
           (INST.format("ffma"), "inst", "1,048,576"), (INST.format("dfma"), "inst", "7"),
           (INST.format("fadd"), "inst", "n/a"),               # nan
           (INST.format("fmul"), "inst", "abc"),               # not a number: skipped
           ("sm__ops_path_tensor_src_fp16_dst_fp32.sum", "", "123,456"),
           ("device__attribute_display_name", "", "NVIDIA A100-SXM4-40GB"),   # text
           ("launch__grid_size", "", "4096"),                  # not used by rooflab
           ("dram__bytes_read.sum", "furlong", "5")]           # unknown unit


def quoted(fields: list[str]) -> str:
    """One row as ncu writes it: every field quoted, quotes inside doubled."""
    return ",".join('"' + f.replace('"', '""') + '"' for f in fields)


def launch(i: int, name: str = "void k<float, 2>(float const*, int)",
           metrics=METRICS) -> list[str]:
    ident = [str(i), "4242", "app", "host", name, "1", "7", "(256, 1, 1)", "(4096, 1, 1)",
             "0", "8.0", "Command line profiler metrics"]
    return [quoted(ident + [m, u, v, "", "", "", "", ""]) for m, u, v in metrics]


def awkward(eol: str) -> str:
    """A details page with everything that must leave the split for csv.reader."""
    rule = quoted(["1", "4242", "app", "host", "other(int)", "1", "7", "(1, 1, 1)",
                   "(1, 1, 1)", "0", "8.0", "SpeedOfLight", "", "", "", "SOLBottleneck",
                   "OPT", 'low, "quoted"', "global", "3"])
    lines = ["program output", "==PROF== Connected to process 4242 (app)", quoted(HEAD)]
    lines += launch(0)[:6] + launch(1, "other(int)") + [rule] + launch(0)[6:]   # interleaved
    lines += launch(2, 'k<"x", y>(a)') + launch(3, 'k","z(b)')    # quotes inside a field
    lines += launch(4, "k<\nfloat>(c)")                            # a line break inside one
    lines += ["==PROF== in the middle, with, commas", ""]
    lines += launch(5)[:3] + ["ID,cut,short"] + [launch(5)[3][:40]] + launch(5)[4:]
    lines += [line.replace('"', "", 2) for line in launch(6)[:2]]   # ID left unquoted
    lines += launch(7)[:2] + [launch(7)[2] + "\r\n" + launch(7)[3]] + launch(7)[4:]
    lines += launch(8)
    # PID unquoted and a quote in the name: as many quotes as a plain row, fields shifted
    lines += [line.replace('","4242","', '",4242,"') for line in launch(9, 'k<"q>(d)')]
    return eol.join(lines)   # no line ending after the last row


def both_ways(monkeypatch, path: Path) -> tuple[list[str], list[str], int]:
    """repr of (NcuCsv, skips, load_ncu's result or error) with the split on and off, and how
    many rows csv.reader read with the split on."""
    rows = [0]
    real = csv.reader

    class Counting:   # csv.reader, counting the rows it gives
        def __init__(self, *args, **kwargs):
            self.reader = real(*args, **kwargs)

        def __iter__(self):
            return self

        def __next__(self):
            row = next(self.reader)
            rows[0] += 1
            return row

        @property
        def line_num(self):
            return self.reader.line_num

    out = []
    for split in (True, False):
        monkeypatch.setattr(ncu_csv, "SPLIT_QUOTED_LINES", split)
        log = SkipLog(str(path))
        with monkeypatch.context() as patch:
            if split:
                patch.setattr(ncu_csv.csv, "reader", Counting)
            got = [repr(ncu_csv.read_ncu_csv(str(path), log)), repr(log.skips())]
        try:
            got.append(repr(load_ncu([str(path)])))
        except ParseError as exc:
            got.append(str(exc))
        out.append(got)
    return out[0], out[1], rows[0]


@pytest.mark.parametrize("name", ["output.csv"] + [f"output{i}.csv" for i in range(1, 9)])
def test_fixture_files_give_the_same_launches_and_kernels(monkeypatch, name):
    path = GPP / name
    if not path.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    split, reference, by_csv = both_ways(monkeypatch, path)
    assert split == reference
    assert by_csv <= 1   # only the header went through csv.reader: the rows were split


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_awkward_rows_give_what_csv_reader_gives(monkeypatch, tmp_path, eol):
    path = tmp_path / "awkward.csv"
    path.write_bytes(awkward(eol).encode())
    split, reference, by_csv = both_ways(monkeypatch, path)
    assert split == reference
    # csv.reader read the header, the 48 rows of launches 2-4 and 9 and the few odd lines;
    # the ~65 plain rows of launches 0, 1 and 5-8 were split
    assert 48 < by_csv < 62
    launches = ncu_csv.read_ncu_csv(str(path)).launches
    assert [la.id for la in launches] == [str(i) for i in range(10)]
    assert launches[9].name == 'k<"q>(d)' and len(launches[9].metrics) == 8
    four = launches[4]
    # its first row runs over lines 53-54; like csv.reader's line_num, the last is kept
    assert four.name == "k<\nfloat>(c)" and four.line == 54
    assert four.metrics["dram__bytes.sum"] == 12.58e6
    assert four.device == "NVIDIA A100-SXM4-40GB"
    zero = launches[0]   # its rows come in two runs, launch 1 between them
    assert list(zero.metrics) == [m for m, _, _ in METRICS[:9] if m != INST.format("fmul")]
    assert zero.metrics["lts__t_bytes.sum"] == 25170.5e3
    assert zero.metrics[INST.format("fadd")] != zero.metrics[INST.format("fadd")]   # nan


def test_split_rows_are_the_rows_csv_reader_reads():
    # the rule the split relies on: no quote inside a field, so '","' only between fields
    fields = ["0", "k<float, 2>(float const*, int)", "", "1,048,576", " spaced "]
    line = quoted(fields) + "\n"
    assert line.count('"') == 2 * len(fields)
    assert line[1:-2].split('","') == next(csv.reader([line])) == fields
