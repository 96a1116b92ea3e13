"""Several torch traces read one at a time (ingest.profile_files.load_profiles) are
labelled by file where their ranks do not tell them apart (s21 d1 item 3): two traces of
rank 0, or of no rank, showed two rows of one name in `report a.json b.json`, and no
reader could tell which file a row came from. The labels are `rooflab torch a b`'s
(torch_trace_ranks.trace_labels over the files' step labels); distinct ranks keep theirs.
"""

from __future__ import annotations

import json

import pytest

from rooflab.ingest.profile_files import load_profiles
from rooflab.ingest.torch_trace_ranks import labelled_by_file

MM = "aten::mm [1024x1024, 1024x1024]"
H100 = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017444352,
         "computeMajor": 9, "computeMinor": 0}]


def _trace(tmp_path, name: str, kernel_us: float, rank: int | None = None) -> str:
    """One aten::mm (1024^3 fp32: 2.147e9 FLOP) whose GPU kernel ran `kernel_us`, as
    kineto writes it; `rank` of a world of 2 (distributedInfo) or none."""
    mm = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10,
          "dur": 20, "args": {"External id": 2, "Input Dims": [[1024, 1024], [1024, 1024]],
                              "Input type": ["float", "float"],
                              "Concrete Inputs": ["", ""]}}
    k = {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 100,
         "dur": kernel_us, "args": {"External id": 2}}
    doc = {"traceEvents": [mm, k], "deviceProperties": H100}
    if rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _rows(paths, label=True) -> list[tuple[str, float, object]]:
    imp = load_profiles(paths, label_traces=label)
    return sorted((k.name, round(k.seconds * 1e6, 3), k.meta.get("trace")) for k in imp.kernels)


@pytest.mark.parametrize("rank", [0, None], ids=["same-rank", "no-rank"])
def test_traces_that_ranks_do_not_tell_apart_get_their_file(tmp_path, rank):
    a = _trace(tmp_path, "run_a.pt.trace.json", 100.0, rank)
    b = _trace(tmp_path, "run_b.pt.trace.json", 150.0, rank)
    # each row says its file, and its time is that file's own (100 us, 150 us)
    assert _rows([a, b]) == [(f"{MM} [run_a.pt.trace]", 100.0, "run_a.pt.trace"),
                             (f"{MM} [run_b.pt.trace]", 150.0, "run_b.pt.trace")]
    # unasked (compare's chart, plot --trajectory join one op across files): as read
    own = f"{MM} [rank0]" if rank == 0 else MM
    assert _rows([a, b], label=False) == [(own, 100.0, None), (own, 150.0, None)]


def test_distinct_ranks_and_one_trace_keep_their_names(tmp_path):
    a = _trace(tmp_path, "w0.json", 100.0, 0)
    b = _trace(tmp_path, "w1.json", 150.0, 1)
    assert _rows([a, b]) == [(f"{MM} [rank0]", 100.0, None), (f"{MM} [rank1]", 150.0, None)]
    assert _rows([a]) == [(f"{MM} [rank0]", 100.0, None)]


def test_one_rank_beside_a_trace_of_none(tmp_path):
    a = _trace(tmp_path, "w0.json", 100.0, 0)
    b = _trace(tmp_path, "single.json", 150.0)
    assert _rows([a, b]) == [(f"{MM} [single]", 150.0, "single"),
                             (f"{MM} [w0]", 100.0, "w0")]


def test_two_files_of_one_stem_are_told_apart_by_their_folder(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    a = _trace(tmp_path / "x", "trace.json", 100.0)
    b = _trace(tmp_path / "y", "trace.json", 150.0)
    assert [n for n, _, _ in _rows([a, b])] == [f"{MM} [x/trace.json]", f"{MM} [y/trace.json]"]


def test_labelled_by_file_leaves_one_list_alone():
    assert labelled_by_file(["a.json"], [[]]) == [[]]
