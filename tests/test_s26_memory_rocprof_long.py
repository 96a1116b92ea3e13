"""Session 26 fB: rocprofv3's long layout (a row per dispatch and counter) grouped by kernel
as it is read (ingest/rocprof_stream._long_rows), as the wide layout already was: each
dispatch a Launch once the next dispatch's first row is read, not a dict per dispatch for
the whole file (376 MB for a 125 MB file). The same kernels, skips, notes and errors as
reading it whole; a dispatch whose rows come apart is still read whole."""

from __future__ import annotations

import csv
import io
import random

import pytest
from test_s23_fh_rocprof_stream import _facts  # what a reader's result says, to compare

from rooflab.files import csv_reader
from rooflab.ingest import rocprof_stream
from rooflab.ingest.rocprof import _plan
from rooflab.ingest.skips import SkipLog

# rocprofv3's *_counter_collection.csv columns (benchmarks/rocprof_parse.py's LONG_HEADER)
HEADER = ["Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id",
          "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size",
          "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name",
          "Counter_Value", "Start_Timestamp", "End_Timestamp"]
COUNTERS = ("SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_FMA_F32", "SQ_INSTS_VALU_MUL_F64",
            "TCC_EA0_RDREQ", "TCC_EA0_RDREQ_32B", "TCC_EA0_WRREQ", "TCC_EA0_WRREQ_64B")
NAMES = ["void triad<float>(float*, float const*, float const*, float) [clone .kd]",
         "Cijk_Alik_Bljk_HHS_BH_MT128x128", "scale_f64"]


def _dispatches(n: int, seed: int = 0) -> list[list[list[str]]]:
    """n dispatches, each its rows (one per counter), as rocprofv3 writes them."""
    r = random.Random(seed).randrange
    out, t = [], 1000
    for k in range(1, n + 1):
        d = r(5000, 50000)
        # the 32-B reads and 64-B writes are parts of all reads and writes
        vals = {c: r(50000, 99999) for c in COUNTERS}
        vals["TCC_EA0_RDREQ_32B"], vals["TCC_EA0_WRREQ_64B"] = r(0, 999), r(1000, 9999)
        out.append([[str(k), str(k), "Agent 4", "1", "312", "312", "1048576", str(k % 3),
                     NAMES[k % 3], "64", "0", "0", "8", "0", "16", c, str(vals[c]),
                     str(t), str(t + d)] for c in COUNTERS])
        t += d + 100
    return out


def _write(path, rows, header=HEADER) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    path.write_text(buf.getvalue())
    return str(path)


def _flat(dispatches) -> list[list[str]]:
    return [row for rows in dispatches for row in rows]


def _variants(tmp_path) -> dict[str, str]:
    ds = _dispatches(300)
    out = {"clean": _write(tmp_path / "clean.csv", _flat(ds))}
    na = [[list(r) for r in rows] for rows in ds]
    for i in (4, 9, 200):            # an n/a DRAM read counter: DRAM dropped for its kernel
        na[i][3][16] = "n/a"
    out["n/a"] = _write(tmp_path / "na.csv", _flat(na))
    bad = [[list(r) for r in rows] for rows in ds]
    bad[6][0][16] = "abc"            # not a number: unknown, said
    bad[7] = [r[:18] + [r[17]] for r in bad[7]]               # zero time: skipped, said
    bad[9][2] = bad[9][2][:10]       # a short row
    out["bad cells"] = _write(tmp_path / "bad.csv", _flat(bad))
    neg = [[list(r) for r in rows] for rows in ds]
    neg[250][1][16] = "-5"
    out["negative"] = _write(tmp_path / "neg.csv", _flat(neg))
    inf = [[list(r) for r in rows] for rows in neg]
    inf[30][1][16] = "1e307"         # group_counts' error (inf FLOP), before the -5
    out["inf then negative"] = _write(tmp_path / "inf.csv", _flat(inf))
    # a dispatch's rows apart (dispatch 21's last counter after dispatch 50's rows)
    rows = _flat(ds)
    moved = rows.pop(20 * len(COUNTERS) + len(COUNTERS) - 1)
    rows.insert(50 * len(COUNTERS), moved)
    out["rows apart"] = _write(tmp_path / "apart.csv", rows)
    # per-channel counters named on the rows (TCC_EA_RDREQ[0], [1]): summed per dispatch
    chan = [[r[:15] + [c, v, r[17], r[18]]
             for c, v in (("SQ_INSTS_VALU_FMA_F32", "100"), ("TCC_EA_RDREQ[0]", "10"),
                          ("TCC_EA_RDREQ[1]", "20"), ("TCC_EA_WRREQ[0]", "5"))]
            for r in (rows[0] for rows in ds[:40])]
    out["channels"] = _write(tmp_path / "chan.csv", _flat(chan))
    return out


def test_long_layout_grouped_as_read_gives_what_reading_whole_gives(tmp_path, monkeypatch):
    files = _variants(tmp_path)
    wholes: list[str] = []
    real = rocprof_stream.read_rocprof_csv

    def whole_read(path, log, mi300=None):
        wholes.append(path)
        return real(path, log, mi300)

    monkeypatch.setattr(rocprof_stream, "read_rocprof_csv", whole_read)
    new = {name: _facts(p) for name, p in files.items()}
    # read whole only where it must be: a dispatch's rows apart (the inf goes either way:
    # the -5 is the error both ways)
    assert files["rows apart"] in wholes
    assert not {files[n] for n in ("clean", "n/a", "bad cells", "negative", "channels")
                } & set(wholes)

    def whole(path, log, mi300, missing):
        raise rocprof_stream._Whole

    monkeypatch.setattr(rocprof_stream, "_groups", whole)
    old = {name: _facts(p) for name, p in files.items()}
    assert new == old
    # by hand: 300 dispatches in three kernels; the rows apart are still one dispatch
    assert sum(k[4] for k in new["clean"][0]) == 300
    assert sum(k[4] for k in new["rows apart"][0]) == 300
    # the bad cells: one zero time and one short row skipped, the "abc" said
    assert sum(k[4] for k in new["bad cells"][0]) == 299
    assert len(new["bad cells"][1]) == 3
    # an n/a read count leaves its dispatch no bytes (DRAM is its only level): skipped, said
    assert sum(k[4] for k in new["n/a"][0]) == 297
    # dispatches 5, 10 and 201, said at their first row: line 2 + (k - 1) x 7
    assert [s.split(": ", 1)[0] for s in new["n/a"][1]] == [
        f"{files['n/a']}:{line}" for line in (30, 65, 1402)]
    kernel = NAMES[251 % 3]
    # dispatch 251's FMA row (its second): line 2 + 250 x 7 + 1
    assert new["negative"] == ("error", f"{files['negative']}:1753: counter "
                               f"'SQ_INSTS_VALU_FMA_F32' of '{kernel}' is -5: a count "
                               f"cannot be negative; check the export (or leave the "
                               f"counter out)")
    assert new["inf then negative"][1].startswith(f"{files['inf then negative']}:1753: ")
    # channels summed per dispatch: 10 + 20 reads of 64 B and 5 writes of 32 B (no _32B /
    # _64B split), 100 FMA x 2 FLOP x 64 lanes; 14 of the 40 dispatches are Cijk's (k % 3)
    one = next(k for k in new["channels"][0] if k[0].startswith("Cijk"))
    assert one[4] == 14
    assert one[2]["DRAM"] == pytest.approx(14 * ((10 + 20) * 64 + 5 * 32))
    assert one[1] == {"fp32": 14 * 100 * 2 * 64}


def test_a_dispatch_arrives_before_the_file_is_read(tmp_path):
    """The first dispatch is a Launch, with all its counters, once dispatch 2's first row
    is read: the rows after it are not read yet."""
    path = _write(tmp_path / "long.csv", _flat(_dispatches(50)))
    read = [0]

    def counting(rows):
        for row in rows:
            read[0] += 1
            yield row

    with open(path) as fh:
        rows = counting(csv_reader(fh))
        plan = _plan(path, rows)
        launches = rocprof_stream._launches(path, rows, SkipLog(path), plan)
        first = next(launches)
        assert read[0] == 1 + len(COUNTERS) + 1   # the header, its rows, the next one's first
        assert first.id == "1" and first.line == 2
        assert {"SQ_INSTS_VALU_FMA_F32", "TCC_EA0_WRREQ_64B"} <= set(first.metrics)
        assert sum(1 for _ in launches) == 49     # the rest, one Launch a dispatch
