"""`rooflab scale`: the data-parallel what-if verb, checked by hand."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def test_scale_json_by_hand(capsys):
    code = main(["scale", "--on", "H100 SXM", "--hidden", "1024", "--blocks", "1",
                 "--tokens", "1024", "--json"])
    assert code in (0, None)
    out = json.loads(capsys.readouterr().out)
    pts = {p["gpus"]: p for p in out["points"]}
    assert sorted(pts) == [2**i for i in range(11)]
    # one block = 12 h^2 = 12 x 1024^2 = 12_582_912 bf16 gradients = 25_165_824 B
    # 2 GPUs on NVLink 4 (900 GB/s both ways -> 450 GB/s): 2 x 1/2 x 25_165_824 / 450e9
    assert out["links"]["intra"]["bus_bytes_per_s"] == 450e9
    assert pts[2]["comm_s"] == pytest.approx(25_165_824 / 450e9)
    # 16 GPUs cross the network: 8 NICs of 50 GB/s per node, one ring per NIC (review 11b
    # #5): 2 x 15/16 x 25_165_824 / 400e9 = 117.9648 us
    assert out["links"]["inter"]["bus_bytes_per_s"] == 400e9
    assert pts[16]["comm_s"] == pytest.approx(117.9648e-6)
    assert pts[1]["efficiency"] == 1.0 and pts[1]["comm_s"] == 0
    # compute: 6 x 1024 tokens x 12_582_912 params = 77_309_411_328 FLOP at the H100's
    # 989.5 TFLOP/s bf16 = 78.13 us (every layer is compute-bound at 1024 tokens)
    assert pts[2]["compute_s"] == pytest.approx(77_309_411_328 / 989.5e12)
    # 4 GPUs: 2 x 3/4 x 25_165_824 / 450e9 = 83.89 us > 78.13 us: the link binds from 4
    assert pts[2]["binding"] == "bf16 tensor" and pts[4]["binding"] == "NVLink"
    assert out["comm_binds_at"] == 4 and pts[16]["binding"] == "network"


def test_scale_table_and_bad_link(capsys):
    assert main(["scale", "--on", "H100 SXM", "--blocks", "2", "--link-bw", "100GB/s",
                 "--no-overlap"]) in (0, None)
    text = capsys.readouterr().out
    assert "1024" in text and "given (--link-bw)" in text and "no overlap" in text
    assert main(["scale", "--on", "H100 SXM", "--link-bw", "fast"]) == 2
    assert "error:" in capsys.readouterr().err
