"""`rooflab choose --json` as the first releases wrote it (e6d1b50, 2026-11-29: a bare list
of ranked devices, {'devices': [...]} since 9212cb5) is a hardware ranking to every kernel
reader, refused in today's words, not read as one timed kernel per device (review s21 r1
F2: report said "2 kernel(s) ... 2 not placed", whatif drew a table of devices, exit 0)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.document_parts import document_kind

# two rows of that file, as it wrote them (the first: AMD EPYC 9755 on demo kernels)
RANKING = [
    {"rank": 1, "name": "AMD EPYC 9755", "seconds": 0.0010711348278356482, "relative": 1.0,
     "binding": "DRAM", "binding_share": 0.8158823616880144, "tdp_w": 500.0,
     "flop_per_joule": 4307333006.17494, "energy_j": 0.5355674139178241, "notes": [],
     "kernels": [{"kernel": "triad_fp64", "seconds": 0.00032768, "binding": "DRAM"}]},
    {"rank": 2, "name": "NVIDIA H100 SXM", "seconds": 0.0012, "relative": 1.12,
     "binding": "launch", "binding_share": 0.9, "tdp_w": 700.0, "notes": [],
     "kernels": [{"kernel": "triad_fp64", "seconds": 0.0004, "binding": "launch"}]},
]
SAID = ("this is a hardware ranking (`rooflab choose` output), not a list of kernels; pass "
        "the kernel files it ranked")


def test_bare_list_ranking_is_a_choose_document():
    assert document_kind(RANKING) == "choose"
    assert document_kind({"devices": RANKING}) == "choose"
    # kernels stay kernels, a "rank" field among them or not
    assert document_kind([{"name": "k", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8},
                           "seconds": 1e-3, "rank": 1, "relative": 1.0}]) == "kernels"
    assert document_kind([]) == "kernels"


@pytest.mark.parametrize("verb", [
    ["report", "{f}", "--on", "A100"],
    ["report", "{f}"],
    ["whatif", "{f}", "--on", "A100", "--precision", "fp16"],
    ["plot", "{f}", "--on", "A100", "-o", "{d}/x.png"],
    ["choose", "{f}", "--among", "h100,h200"],
])
def test_kernel_readers_refuse_it(verb, tmp_path, capsys):
    f = tmp_path / "choose.json"
    f.write_text(json.dumps(RANKING))
    argv = [a.format(f=f, d=tmp_path) for a in verb]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"error: {f}: {SAID}" in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()
