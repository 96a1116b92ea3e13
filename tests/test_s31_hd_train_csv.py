"""`rooflab train --dp -o step.csv` carries what its JSON's communication row and
embedding carry for the file verbs (s31 hd): the collectives (and overlap, accumulate,
grad_bytes, exposed_overlap_s, by_zero) that whatif times the overlap again from, and the
kernels' shape, from which whatif --batch grows the embedding's gathered rows. whatif on
the CSV now reads what it reads on the JSON, to the last digit; a CSV written before these
columns is still read (its exposed share kept, as before).

llama-2-7b on the H100 SXM (3.35 TB/s): the embedding gathers one 4096 x 2 B row per token,
2048 tokens at batch 1: 16,777,216 B of weights and 16,793,600 B of activations."""

from __future__ import annotations

import csv
import io
import json

import pytest

from rooflab.cli.main import main

ARGS = ("llama-2-7b", "--on", "H100 SXM", "--dp", "8", "--zero", "1")
DRAM = 3.35e12


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = {}
    for extra in ((), ("--no-overlap", "--accumulate", "2")):
        d = tmp_path_factory.mktemp("t")
        for suffix in ("json", "csv"):
            path = str(d / f"step.{suffix}")
            assert main(["train", *ARGS, *extra, "-o", path]) == 0
            out[extra, suffix] = path
    return out


def _whatif(capsys, path, *change) -> dict:
    code = main(["whatif", path, "--on", "H100 SXM", *change, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_the_csv_carries_the_comm_rows_collectives_and_the_shapes(files):
    doc = json.load(open(files[(), "json"]))
    meta = next(k["meta"] for k in doc["kernels"] if k["name"] == "comm.zero1")
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(open(files[(), "csv"]).read()))}
    comm = rows["comm.zero1"]
    assert json.loads(comm["collectives"]) == meta["collectives"]
    assert json.loads(comm["by_zero"]) == meta["by_zero"]
    assert (comm["overlap"], comm["accumulate"], comm["grad_bytes"]) == ("true", "1", "2")
    assert json.loads(rows["embedding"]["shape"]) == {"tokens": 2048, "hidden": 4096,
                                                      "vocab": 32000}
    # read back: the comm row's meta and the embedding's shape as the JSON's
    from rooflab.ingest.kernelfile import load_kernels

    read = {k.name: k for k in load_kernels(files[(), "csv"])}
    for key in ("collectives", "by_zero", "overlap", "accumulate", "grad_bytes",
                "exposed_overlap_s", "comm_s", "exposed_s"):
        assert read["comm.zero1"].meta[key] == meta[key], key
    assert read["embedding"].meta["shape"] == {"tokens": 2048, "hidden": 4096,
                                               "vocab": 32000}


@pytest.mark.parametrize("extra", [(), ("--no-overlap", "--accumulate", "2")])
@pytest.mark.parametrize("change", [("--batch", "2"), ("--hardware", "A100"), ()])
def test_whatif_reads_the_csv_as_the_json(files, capsys, extra, change):
    if not change:
        change = ("--bytes-scale", "0.5")
    a = _whatif(capsys, files[extra, "json"], *change)
    b = _whatif(capsys, files[extra, "csv"], *change)
    for key in ("total_before_floor_s", "total_after_floor_s"):
        assert a[key] == b[key], key
    comm = [m for m in b["moves"] if m["kernel"] == "comm.zero1"][0]
    assert "no collectives" not in comm.get("exposed_from", "")


def test_whatif_batch_grows_the_csvs_embedding_rows(files, capsys):
    # batch 2: 4096 rows gathered, 33,554,432 B of weights + 2 x 16,793,600 B of
    # activations = 67,141,632 B at 3.35 TB/s = 20.04 us (the CSV read 15.03 us: its
    # weights held as if read once)
    moves = {m["kernel"]: m for m in _whatif(capsys, files[(), "csv"], "--batch", "2")["moves"]}
    assert moves["embedding"]["after_floor_s"] == pytest.approx(67_141_632 / DRAM, rel=1e-12)
    # its backward: reads the activations' gradient, writes the table's (2 x the rows):
    # 2 x 16,793,600 + 2 x 33,554,432 = 100,696,064 B: 30.06 us (the CSV read 20.04 us)
    assert moves["embedding.bwd"]["after_floor_s"] == pytest.approx(100_696_064 / DRAM,
                                                                    rel=1e-12)


def test_an_older_csv_without_the_columns_is_still_read(files, tmp_path, capsys):
    text = open(files[(), "csv"]).read()
    rows = list(csv.DictReader(io.StringIO(text)))
    gone = ("overlap", "accumulate", "grad_bytes", "exposed_overlap_s", "collectives",
            "by_zero", "shape")
    cols = [c for c in rows[0] if c not in gone]
    old = tmp_path / "old.csv"
    with open(old, "w", newline="") as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    d = _whatif(capsys, str(old), "--hardware", "A100")
    comm = [m for m in d["moves"] if m["kernel"] == "comm.zero1"][0]
    assert "the file lists no collectives" in comm["exposed_from"]
    # the exposed share the file gives (50.1 % of the whole) is held
    assert comm["after_exposed_s"] / comm["after_floor_s"] == pytest.approx(
        comm["before_exposed_s"] / comm["before_floor_s"], rel=1e-9)
