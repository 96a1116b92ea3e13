"""`rooflab torch --run` and model construction (review s28 R3 F4): the parameter
initialisation before the first forward op is left out, and a record_function("rooflab")
range counts only what it holds. Layers built with torch.nn."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from rooflab.cli.main import main  # noqa: E402

SCRIPT = """
import torch, torch.nn as nn
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()).eval()
x = torch.randn(2, 3, 16, 16)
with torch.no_grad():
    {body}
"""


def _run(tmp_path, capsys, body):
    script = tmp_path / "s.py"
    script.write_text(SCRIPT.format(body=body))
    assert main(["torch", "-q", "--json", "--run", str(script)]) == 0
    return json.loads(capsys.readouterr().out)


def _names(doc):
    return [k["name"].split(" [")[0] for k in doc["kernels"]]


def test_construction_is_left_out_and_said(tmp_path, capsys):
    doc = _run(tmp_path, capsys, "net(x)")
    names = _names(doc)
    assert "aten::convolution" in names
    # nn.init's uniform_ and BatchNorm's fill_ / zero_ ran before the first conv: gone
    assert not {"aten::uniform_", "aten::fill_", "aten::zero_"} & set(names)
    notes = " ".join(doc["import_notes"])
    assert "model construction left out" in notes
    assert 'record_function("rooflab")' in notes


def test_a_marked_range_counts_only_its_ops(tmp_path, capsys):
    body = ("net(x)\n    with torch.profiler.record_function('rooflab'):\n"
            "        net(x)\n        net(x)")
    doc = _run(tmp_path, capsys, body)
    conv = next(k for k in doc["kernels"] if k["name"].startswith("aten::convolution"))
    assert conv["calls"] == 2   # the warm-up forward outside the range is left out
    assert "only the ops inside record_function" in " ".join(doc["import_notes"])


def test_init_ops_after_the_first_forward_stay(tmp_path, capsys):
    # a fill_ after the forward is the work's, not construction's
    doc = _run(tmp_path, capsys, "net(x)\n    torch.zeros(1000).fill_(2.0)")
    assert "aten::fill_" in _names(doc)
