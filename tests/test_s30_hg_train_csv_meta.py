"""A train step written as CSV reads like the same step written as JSON (s30 hg).

`train -o x.csv` writes each kernel's meta model_dtype_parts (the bytes_split parts that
keep the model dtype under 8-bit activations: norms, RoPE, the residual add, SwiGLU) in one
cell, and the reader makes the row's weight_bytes / activations_bytes its bytes_split, so
`whatif --precision fp8` keeps those parts at bf16 on the CSV as on the JSON (148 ms for
llama-2-7b --dp 8 --zero 1 on an H100, where the CSV gave 132 ms).

Hand check of the small file: a norm of 4e9 B, all activations, marked "activations
weights", stays 4e9 B under fp8 (it was 2e9 B, halved, without the mark); a q_proj of
1e9 B weights + 2e9 B activations (no mark) moves to 1 byte an element: 1.5e9 B.
"""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.ingest.kernelfile_csv import kernels_from_csv
from rooflab.model.kernel import Kernel
from rooflab.model.whatif_batch import batched_moves
from rooflab.model.whatif_precision import change_precision

HEADER = ("name,train_part,calls,flop,bytes,level,precision,unit,op,batch,weight_bytes,"
          "activations_bytes,model_dtype_parts\n")
ROWS = ("norm,forward,1,3e9,4e9,DRAM,bf16,vector,rmsnorm,1,0,4e9,activations weights\n"
        "q_proj,forward,1,1e12,3e9,DRAM,bf16,tensor,linear,1,1e9,2e9,\n")


def test_model_dtype_parts_cell_reads_as_the_json_meta():
    norm, q = kernels_from_csv(HEADER + ROWS, "t.csv")
    assert norm.meta["model_dtype_parts"] == ["activations", "weights"]
    assert norm.meta["bytes_split"] == {"weights": 0.0, "activations": 4e9}
    # a row that names no parts keeps the columns as before, no bytes_split
    assert "bytes_split" not in q.meta and q.meta["weight_bytes"] == 1e9


def test_fp8_keeps_the_marked_parts_wide():
    roof = load_roof("H100 SXM")
    w = change_precision(roof, kernels_from_csv(HEADER + ROWS, "t.csv"), "fp8")
    after = {k.name: k for k in w.after.kernels}
    assert after["norm"].bytes["DRAM"] == pytest.approx(4e9)        # kept at bf16
    assert after["q_proj"].bytes["DRAM"] == pytest.approx(1.5e9)    # 3e9 x 1/2
    bare = ROWS.replace(",activations weights\n", ",\n")
    w = change_precision(roof, kernels_from_csv(HEADER + bare, "t.csv"), "fp8")
    assert {k.name: k for k in w.after.kernels}["norm"].bytes["DRAM"] == pytest.approx(2e9)


STEP = ("llama-2-7b", "--batch", "1", "--seq", "4096", "--dp", "8", "--zero", "1",
        "--on", "H100 SXM", "-q")


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    d = tmp_path_factory.mktemp("hg")
    for name in ("t.json", "t.csv"):
        assert main(["train", *STEP, "-o", str(d / name)]) == 0
    return d


def _whatif(path, change, capsys) -> dict:
    capsys.readouterr()
    assert main(["whatif", str(path), "--on", "H100 SXM", *change, "--json", "-q"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("change", [("--precision", "fp8"), ("--precision", "fp32"),
                                    ("--quantize", "int4")])
def test_whatif_on_the_csv_gives_the_json_floor(step, capsys, change):
    j = _whatif(step / "t.json", change, capsys)
    c = _whatif(step / "t.csv", change, capsys)
    assert c["total_after_work_floor_s"] == pytest.approx(j["total_after_work_floor_s"],
                                                          rel=1e-9)
    if change[1] == "fp8":       # 149 ms (148 with 25 MiB buckets), not the CSV's old 132
        assert 0.148 < c["total_after_work_floor_s"] < 0.150


def test_batch_2_differs_by_the_embedding_rows_only(step, capsys):
    """The JSON's embedding shape (4096 tokens of a 32,000-row table) grows the rows it
    gathers with the batch; the CSV has no shape and holds its weights: 30 us of 426 ms."""
    j = _whatif(step / "t.json", ("--batch", "2"), capsys)
    c = _whatif(step / "t.csv", ("--batch", "2"), capsys)
    assert c["total_after_work_floor_s"] == pytest.approx(j["total_after_work_floor_s"],
                                                          rel=1e-4)


def _k(name: str, part: str, **meta) -> Kernel:
    return Kernel(name=name, flop={"bf16": 1e9}, bytes={"DRAM": 1e9},
                  meta={"train_part": part, **meta})


def test_batched_moves_leave_out_the_held_parts():
    """An old train file at batch 4: its comm row has no batch (read as 1)."""
    fwd, comm = _k("q_proj", "forward", batch=4), _k("comm.zero1", "comm")
    moves = [(fwd, fwd), (comm, comm)]
    assert batched_moves(moves) == [(fwd, fwd)]
    assert batched_moves([(comm, comm)]) == [(comm, comm)]   # none else: all


def test_old_train_file_keeps_the_per_sequence_line(tmp_path, capsys):
    """train --batch 2 as written before the comm row carried its batch: the line says
    batch 2 -> 4 (it was dropped: batches {1, 2} before)."""
    new = tmp_path / "b2.json"
    assert main(["train", *STEP, "--batch", "2", "-o", str(new)]) == 0
    doc = json.loads(new.read_text())
    comm = [k for k in doc["kernels"] if k["meta"].get("train_part") == "comm"]
    assert len(comm) == 1 and comm[0]["meta"].pop("batch") == 2
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["whatif", str(old), "--on", "H100 SXM", "--batch", "4"]) == 0
    assert "per sequence on the work floor (batch 2 -> 4 sequences" in capsys.readouterr().out
