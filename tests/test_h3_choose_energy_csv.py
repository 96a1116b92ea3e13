"""`rooflab choose`: energy at the time it ranks by, on every GPU a row stands for, and
the CSV carries what the rank sorts on (ranked_s).

llama-3-70b --tp 8 --batch 64 on an H200 SXM (700 W TDP, catalog): the rank's time is
with launches 7.48 ms + the TP link 688 us = 8.17 ms; the step runs on 8 GPUs, each
waiting on the link, so energy = 8 x 700 W x 8.17 ms = 45.7 J (it read 700 W x 7.48 ms =
5.23 J: one GPU, link left out) and FLOP/J = 8 shards' FLOP / 45.7 J = 197 GFLOP/J (215).
"""

import contextlib
import csv
import io
import json
import re
from pathlib import Path

import pytest

from rooflab.cli.main import main

DOCS = Path(__file__).resolve().parent.parent / "docs"
# 160 all-reduces + the embedding's, each ring moves 2 x 7/8 x 1,048,576 B = 1,835,008 B;
# the logits gather 7/8 x 64 x 128256 x 2 B = 14,364,672 B, on NVLink 4's 450 GB/s a way
LINK_S = (161 * 1835008 + 14364672) / 450e9
H200_TDP = 700.0


def _run(*argv) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def d70(tmp_path_factory):
    path = tmp_path_factory.mktemp("h3") / "d70.json"
    path.write_text(_run("llm", "llama-3-70b", "--on", "H100", "--tp", "8", "--batch", "64",
                         "--json"))
    return path


def _shard_flop(path) -> float:
    """The document's kernels' FLOP (one GPU's 1/8 shard): ~ 2 x 70.6e9 params x 64 / 8."""
    return sum(sum(k["flop"].values()) for k in json.loads(path.read_text())["kernels"])


def _row(path, device="H200"):
    (row,) = json.loads(_run("choose", str(path), "--among", device, "--json"))["devices"]
    return row


def test_tp_energy_is_eight_gpus_at_tdp_over_the_ranked_time(d70):
    row = _row(d70)
    assert row["tp_link_s"] == pytest.approx(LINK_S)   # 688 us
    ranked = row["with_launches_s"] + LINK_S
    assert row["ranked_s"] == pytest.approx(ranked)
    assert ranked == pytest.approx(8.17e-3, abs=5e-6)
    assert row["energy_j"] == pytest.approx(8 * H200_TDP * ranked)   # 45.7 J
    assert row["energy_j"] == pytest.approx(45.7, abs=0.05)
    flop = 8 * _shard_flop(d70)
    assert _shard_flop(d70) == pytest.approx(2 * 70.6e9 * 64 / 8, rel=0.01)
    assert row["flop_per_joule"] == pytest.approx(flop / row["energy_j"])   # 197 GFLOP/J
    assert row["flop_per_joule"] == pytest.approx(196.8e9, rel=1e-3)
    # at the work floor the link stays (CUDA graphs remove launches, not all-reduces):
    # 8 x 700 W x (4.29 + 0.688 = 4.98 ms, llm --on H200's TPOT floor) = 27.9 J
    assert row["work_floor_energy_j"] == pytest.approx(8 * H200_TDP * row["tp_tpot_floor_s"])
    assert row["work_floor_energy_j"] == pytest.approx(27.9, abs=0.05)
    assert row["work_floor_flop_per_joule"] == pytest.approx(flop / row["work_floor_energy_j"])


def test_tp_table_flop_per_joule_is_the_json_figure(d70):
    out = _run("choose", str(d70), "--among", "H200")
    first = next(line for line in out.splitlines() if line.startswith("│ 1 "))
    assert "8.17 ms" in first and "197 GFLOP/J" in first
    assert "215 GFLOP/J" not in out   # one GPU at its time without the link
    flat = " ".join(out.split())
    assert "(TDP x the time with launches + TP link)" in flat
    assert "the same per GPU and on all 8" in flat


def test_pp_energy_counts_every_stage_gpu(tmp_path):
    # --pp 2: the kernels are the whole model, stage after stage; both GPUs are powered
    # for the step: 2 x 700 W x the time with launches (no TP link)
    doc = tmp_path / "p2.json"
    doc.write_text(_run("llm", "llama-3-8b", "--on", "H100", "--pp", "2", "--json"))
    row = _row(doc, "H100")
    assert row["ranked_s"] == row["with_launches_s"]
    assert row["energy_j"] == pytest.approx(2 * 700.0 * row["with_launches_s"])
    assert row["flop_per_joule"] == pytest.approx(_shard_flop(doc) / row["energy_j"])
    assert row["work_floor_energy_j"] == pytest.approx(2 * 700.0 * row["work_floor_s"])


def test_csv_has_the_rank_measure_and_the_tp_columns(d70, tmp_path):
    path = tmp_path / "r.csv"
    _run("choose", str(d70), "--among", "H100,H200", "-o", str(path))
    rows = list(csv.DictReader(path.open()))
    ranking = json.loads(_run("choose", str(d70), "--among", "H100,H200", "--json"))
    for got, want in zip(rows, ranking["devices"], strict=True):
        for key in ("ranked_s", "tp_link_s", "tp_tpot_floor_s", "energy_j", "least_bytes"):
            assert float(got[key]) == pytest.approx(want[key]), key
        assert (int(got["tp"]), int(got["pp"]), int(got["gpus"])) == (8, 1, 8)
    # a reader sorts by ranked_s and gets choose's order: H200 8.17 ms, H100 9.61 ms
    assert [r["name"] for r in sorted(rows, key=lambda r: float(r["ranked_s"]))] == \
        ["NVIDIA H200 SXM", "NVIDIA H100 SXM"]
    assert float(rows[1]["ranked_s"]) == pytest.approx(9.61e-3, abs=5e-6)


def test_plain_kernels_seconds_stays_the_work_floor(tmp_path):
    # no --tp: ranked_s is the time with launches, seconds the work floor (as before), and
    # energy one device's: 1 GFLOP over 2 GB on an H100 SXM: 2e9 / 3.35e12 = 597 us, above
    # the 5 us launch, so 700 W x 597 us = 0.418 J
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": [
        {"name": "stream", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 2e9}}]}))
    row = _row(k, "H100 SXM")
    t = 2e9 / 3.35e12
    assert row["seconds"] == row["work_floor_s"] == pytest.approx(t)
    assert row["ranked_s"] == row["with_launches_s"] == pytest.approx(t)
    assert row["energy_j"] == pytest.approx(700.0 * t)
    assert row["flop_per_joule"] == pytest.approx(1e9 / (700.0 * t))
    path = tmp_path / "r.csv"
    _run("choose", str(k), "--among", "H100 SXM", "-o", str(path))
    (got,) = csv.DictReader(path.open())
    assert float(got["ranked_s"]) == pytest.approx(t)


def test_docs_say_what_seconds_and_ranked_s_are():
    flat = " ".join((DOCS / "json.md").read_text().split())
    assert "ranked by `ranked_s`" in flat
    assert "`seconds` (the work floor, = `work_floor_s`; not the rank's time)" in flat
    assert "8 x TDP x `ranked_s`" in flat
    report = " ".join((DOCS / "report.md").read_text().split())
    listed = re.search(r"columns (`rank`.*?`gpus`)\)", report).group(1)
    assert "`ranked_s`" in listed and "`tp_link_s`" in listed
    assert "8 x 700 W x 8.17 ms = 45.7 J" in report
