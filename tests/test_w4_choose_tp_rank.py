"""Review W4: `rooflab choose` on an `llm --tp` document ranks on the shard + each
device's TP link (the all-reduces and logits gather `rooflab llm --on DEVICE --tp N` adds),
one ranking, not the shard alone with a second one below."""

import json

import pytest

from rooflab.cli.main import main

# 160 all-reduces + the embedding's, each ring moves 2 x 7/8 x 1,048,576 B = 1,835,008 B;
# the logits gather 7/8 x 64 x 128256 x 2 B = 14,364,672 B: 309,800,960 B per step
LINK_BYTES = 161 * 1835008 + 14364672


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["llm", "llama-3-70b", "--on", "H100", "--tp", "8", "--batch", "64",
                     "--json"]) == 0
    path = tmp_path_factory.mktemp("w4") / "d70.json"
    path.write_text(out.getvalue())
    return str(path)


def test_the_link_moves_the_ranking(doc, capsys):
    assert main(["choose", doc, "--among", "H100 NVL,H100,H200,A100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["devices"]
    # shard alone (with launches): H200 7.48, H100 NVL 8.18, H100 SXM 8.92, A100 12.6 ms.
    # + link: H100 NVL's 8 cards talk over PCIe Gen5 x16 beyond its bridged pair, 16 x 32
    # GT/s x 128/130 / 8 = 63.0 GB/s: 309.8 MB / 63.0e9 = 4.92 ms -> 13.1 ms; the SXM's
    # NVLink 4 450 GB/s: 688 us -> 9.61 ms (`llm --on H100 --tp 8 --batch 64`: with
    # launches 9.61 ms); H200 8.17 ms; A100 NVLink 3 300 GB/s: 1.03 ms -> 13.6 ms
    names = [r["name"] for r in rows]
    assert names == ["NVIDIA H200 SXM", "NVIDIA H100 SXM", "NVIDIA H100 NVL",
                     "NVIDIA A100 80GB SXM"]
    by = {r["name"]: r for r in rows}
    nvl, sxm = by["NVIDIA H100 NVL"], by["NVIDIA H100 SXM"]
    assert nvl["tp_link_s"] == pytest.approx(LINK_BYTES / (16 * 32e9 * 128 / 130 / 8))
    assert sxm["tp_link_s"] == pytest.approx(LINK_BYTES / 450e9)
    for r in rows:   # the rank's measure: with launches + link; relative against its best
        assert r["ranked_s"] == pytest.approx(r["with_launches_s"] + r["tp_link_s"])
        assert r["relative_with_launches"] == pytest.approx(r["ranked_s"] / rows[0]["ranked_s"])
    # the TPOT floors `rooflab llm --on X --tp 8 --batch 64` prints: 4.98, 6.84, 11.1 ms
    assert by["NVIDIA H200 SXM"]["tp_tpot_floor_s"] == pytest.approx(4.98e-3, abs=5e-6)
    assert sxm["tp_tpot_floor_s"] == pytest.approx(6.84e-3, abs=5e-6)
    assert by["NVIDIA A100 80GB SXM"]["tp_tpot_floor_s"] == pytest.approx(11.1e-3, abs=5e-5)


def test_the_table_says_it_ranks_with_the_link(doc, capsys):
    assert main(["choose", doc, "--among", "H100 NVL,H100"]) == 0
    out = capsys.readouterr().out
    assert "ranked by the time with launches + TP link" in out
    # one ranking: the table's first row is the H100 SXM at 9.61 ms (8.92 + 0.688)
    first = next(line for line in out.splitlines() if line.startswith("│ 1 "))
    assert "H100 SXM" in first and "9.61 ms" in first
    assert "fastest first:" not in out   # no second ranking below the table
