"""`rooflab whatif` on an MI250X `train --dp 4` file sends the gradients' all-reduce on the
target device's own ring, as `rooflab train --on H100 --dp 4` and `rooflab choose` do
(choose_train_ranks.row_on; session 34 J). Before, it kept the file's 8-rank ring (the
MI250X's 2 dies per package are ranks): 23.6 GB, 52.4 ms on the H100's NVLink, where train
sends 20.2 GB in 44.9 ms.

Hand figures: llama-2-7b has 6,738,415,616 parameters; bf16 gradients, 2 B each:
G = 13,476,831,232 B. A ring of N ranks all-reduces 2 (N - 1)/N x G per device:
  8 ranks (the MI250X file): 2 x 7/8 x G = 23,584,454,656 B
  4 ranks (4 H100s):         2 x 3/4 x G = 20,215,246,848 B, on NVLink 4's 450 GB/s bus
                             bandwidth (900 GB/s both directions, half per direction):
                             20,215,246,848 / 450e9 = 44.92 ms."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

G = 6_738_415_616 * 2
FILE_BYTES = 2 * 7 / 8 * G          # 23.6 GB
H100_BYTES = 2 * 3 / 4 * G          # 20.2 GB


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("j34") / "t.json"
    assert main(["train", "llama-2-7b", "--on", "MI250X", "--batch", "1", "--seq", "4096",
                 "--dp", "4", "-o", str(path)]) == 0
    doc = json.loads(path.read_text())
    (row,) = [k for k in doc["kernels"] if k["name"] == "comm.allreduce"]
    assert sum(row["bytes"].values()) == pytest.approx(FILE_BYTES, rel=1e-12)
    return str(path)


def _whatif(capsys, *args) -> dict:
    capsys.readouterr()
    assert main(["whatif", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _row(doc: dict) -> tuple[dict, dict]:
    i = next(i for i, k in enumerate(doc["after"]["kernels"]) if k["name"] == "comm.allreduce")
    return doc["after"]["kernels"][i], next(m for m in doc["moves"]
                                            if m["kernel"] == "comm.allreduce")


def test_hardware_h100_sends_four_h100s_ring(train_file, capsys):
    doc = _whatif(capsys, train_file, "--hardware", "H100 SXM")
    row, move = _row(doc)
    assert row["bytes"] == {"NVLink": pytest.approx(H100_BYTES, rel=1e-9)}
    assert move["after_floor_s"] == pytest.approx(H100_BYTES / 450e9, rel=1e-9)  # 44.9 ms


def test_on_h100_sends_four_h100s_ring(train_file, capsys):
    doc = _whatif(capsys, train_file, "--on", "H100 SXM", "--bytes-scale", "1")
    row, move = _row(doc)
    assert row["bytes"] == {"NVLink": pytest.approx(H100_BYTES, rel=1e-9)}
    assert move["before_floor_s"] == pytest.approx(H100_BYTES / 450e9, rel=1e-9)
    # the file's own device: its 8 dies' ring, 23.6 GB as train wrote it
    doc = _whatif(capsys, train_file, "--on", "MI250X", "--bytes-scale", "1")
    row, _ = _row(doc)
    assert sum(row["bytes"].values()) == pytest.approx(FILE_BYTES, rel=1e-9)
