"""Review s26 v2 F4, F5 and F8 (the reading/CARM part): one meaning of `--level L1`.

F4: `rooflab ncu FILE --level L1` filtered the hierarchical table to the L1 row (the
reduction of output1.ncu-rep at 3 % of its L1 slope, "not binding") where `report` and
`plot --level L1` give the CARM reading (DRAM 256 GB/s x AI 0.0846 = 21.6 GFLOP/s, 24 %),
and its --json had no "reading". Now the profiler verbs read --level L1 as CARM too.

F5: CARM on a roof without an L1 ceiling (every catalog GPU) held the L1 AI under the DRAM
slope alone: the reviewer's gemmish (1e12 FLOP, 1e12 L1 bytes, 1 s on the RTX 4060
Laptop's 256 GB/s) read "391 % of roof ... measure the L1 bytes" (1 TFLOP/s / (1 x 256
GB/s)). Now refused, as --level L2 on a roof without L2 is; and the note's garbled "held
by above every roof" reads "above every roof, so held by the highest".

F8: a CARM point's JSON says level "L1" with DRAM's bytes_per_s; "reading" now names the
ceiling that binds and the L1 bandwidth share the text prints. The stencil of docs/report.md
by hand: 2.0975e10 L1 bytes / 0.7556 s = 27.759 GB/s = 3.470 % of L1's 800 GB/s; held by
DRAM 42.6 GB/s x AI 0.1250 = 5.325 GFLOP/s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.level_carm import carm_memory
from rooflab.model.level_reading import reading_dict

FLOP, L1_B, DRAM_B, T = 2.622e9, 2.0975e10, 7.866e9, 0.7556
ROOF = Roof("turin2", "measured",
            compute=(Ceiling(257e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(800e9, level="L1"), Ceiling(360e9, level="L2"),
                    Ceiling(200e9, level="L3"), Ceiling(42.6e9, level="DRAM")))
DRAM_ONLY = Roof("gpu", "nominal", compute=(Ceiling(14.6e12, precision="fp32"),),
                 memory=(Ceiling(256e9, level="DRAM"),))
GEMMISH = Kernel(name="gemmish", flop={"fp32": 1e12}, bytes={"L1": 1e12, "DRAM": 1e10},
                 seconds=1.0)


def _stencil(seconds: float = T) -> Kernel:
    return Kernel(name="stencil", flop={"fp64": FLOP}, bytes={"L1": L1_B, "DRAM": DRAM_B},
                  seconds=seconds)


def _json(capsys, verb: str, *args) -> dict:
    capsys.readouterr()
    assert main([verb, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- F4: ncu --level L1 is report's CARM reading ----------------------------------------

def test_ncu_level_l1_is_the_carm_reading_report_gives(capsys):
    rep = str(gpp_recording("output1.ncu-rep"))
    ncu = _json(capsys, "ncu", rep, "--level", "L1")
    report = _json(capsys, "report", rep, "--level", "L1")
    assert ncu["reading"]["model"] == "CARM" and ncu["reading"]["level"] == "L1"

    def pct(doc):
        return {a["kernel"]: (a["percent_of_roof"], a["binding"]) for a in doc["analysis"]}

    assert pct(ncu) == pct(report)   # the same analysis: the same floats
    red = next(a for a in ncu["analysis"] if a["kernel"] == "sigma_gpp_gpu_34_gpu__red")
    # CARM: held by DRAM (256 GB/s x AI 0.0846 = 21.6 GFLOP/s), 5.15 / 21.6 = 24 %, not
    # the L1 row's 3 % against the L1 ceiling alone
    assert red["binding"] == "DRAM" and red["ai"] == pytest.approx(0.0846, abs=5e-4)
    assert red["attainable_flop_per_s"] == pytest.approx(red["ai"] * 255.776e9, rel=1e-4)
    assert red["percent_of_roof"] == pytest.approx(23.8, abs=0.1)
    (c,) = [c for c in ncu["reading"]["ceilings"] if c["kernel"] == red["kernel"]]
    assert c["ceiling_level"] == "DRAM"


def test_ncu_level_l1_table_says_carm(capsys):
    rep = str(gpp_recording("output1.ncu-rep"))
    capsys.readouterr()
    assert main(["ncu", rep, "--level", "L1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "CARM reading (--level L1" in out and "24 %" in out
    assert "not binding" not in out


def test_ncu_level_l2_stays_the_per_level_row(capsys):
    rep = str(gpp_recording("output1.ncu-rep"))
    doc = _json(capsys, "ncu", rep, "--level", "L2")
    assert doc["reading"]["model"] == "per-level" and "ceilings" not in doc["reading"]
    red = next(a for a in doc["analysis"] if a["kernel"] == "sigma_gpp_gpu_34_gpu__red")
    assert (red["bound"], red["binding_level"]) == ("not binding", "DRAM")


def test_profiler_view_reads_l1_as_carm():
    from rooflab.cli.level_view import analyze_in_view

    got, full = analyze_in_view(ROOF, [_stencil()], "L1")
    (p,) = got.points
    assert full is None and p.memory_ceiling == "DRAM"
    assert p.percent_of_roof == pytest.approx(100 * (FLOP / T) / (FLOP / L1_B * 42.6e9))


# --- F5: CARM refused on a roof without an L1 ceiling -------------------------------------

def test_carm_on_a_roof_without_l1_places_nothing_and_says_why():
    c, why = carm_memory(DRAM_ONLY, GEMMISH, 14.6e12)
    assert c is None and "has no L1 bandwidth (it has DRAM)" in why
    got = analyze(DRAM_ONLY, [GEMMISH], levels=["L1"], carm=True)
    assert got.points == () and [u.kernel for u in got.unplaced] == ["gemmish"]
    assert any("no L1 bandwidth" in n for n in got.notes)


@pytest.fixture
def gemmish_csv(tmp_path) -> str:
    g = tmp_path / "g.csv"
    g.write_text("kernel,level,precision,flop,bytes,seconds\n"
                 "gemmish,L1,fp32,1e12,1e12,1.0\ngemmish,DRAM,fp32,1e12,1e10,1.0\n")
    return str(g)


@pytest.mark.parametrize("verb", ["report", "plot"])
def test_cli_refuses_carm_on_a_catalog_gpu(verb, gemmish_csv, tmp_path, capsys):
    png = tmp_path / "q.png"
    capsys.readouterr()
    args = [verb, gemmish_csv, "--on", "RTX 4060 Laptop GPU", "--level", "L1"]
    assert main(args + (["-o", str(png)] if verb == "plot" else [])) == 2
    got = capsys.readouterr()
    err = " ".join(got.err.split())
    assert "has no L1 bandwidth (it has DRAM)" in err
    assert "a probed CPU profile" in err and "Advisor or ERT import" in err
    assert "391" not in got.out + got.err and "measure the L1 bytes" not in got.out
    assert "Traceback" not in err and not png.exists()


def test_above_every_roof_note_is_not_garbled():
    # 150 GFLOP/s over every roof at AI 0.125 (L1's 100 GFLOP/s the highest)
    _, note = carm_memory(ROOF, _stencil(FLOP / 150e9), 257e9)
    assert "above every roof, so held by the highest, L1 800 GB/s x AI 0.125" in note
    assert "held by above" not in note


def test_compute_held_note_says_the_peak_once():
    k = Kernel(name="gemm", flop={"fp64": 1e12}, bytes={"L1": 1e9}, seconds=10.0)
    _, note = carm_memory(ROOF, k, 257e9)
    assert "the compute peak 257 GFLOP/s (roofs" in note and "= 257 GFLOP/s (" not in note


# --- F8: the reading's ceilings in --json, and documented ---------------------------------

def test_reading_names_the_binding_ceiling_and_the_l1_share():
    got = analyze(ROOF, [_stencil()], levels=["L1"], carm=True)
    (c,) = reading_dict("L1", got)["ceilings"]
    assert c["ceiling_level"] == "DRAM" and c["ceiling_bytes_per_s"] == 42.6e9
    assert c["l1_bytes_per_s"] == 800e9
    assert c["achieved_bytes_per_s"] == pytest.approx(L1_B / T)           # 27.76 GB/s
    assert c["percent_of_l1_bandwidth"] == pytest.approx(3.470, abs=1e-3)
    assert c["attainable_flop_per_s"] == pytest.approx(FLOP / L1_B * 42.6e9)
    assert "ceilings" not in reading_dict("L2", got) and reading_dict(None, got) is None


@pytest.fixture
def files(tmp_path):
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,level,precision\n"
                 f"stencil,{FLOP},{L1_B},{T},L1,fp64\nstencil,{FLOP},{DRAM_B},{T},DRAM,fp64\n")
    roof = tmp_path / "roof.json"
    assert main(["specs", "import", "--l1", "800GB/s", "--l2", "360GB/s", "--l3", "200GB/s",
                 "--dram", "42.6GB/s", "--fp64", "257GFLOP/s", "--measured", "-o",
                 str(roof)]) == 0
    return str(k), str(roof)


@pytest.mark.parametrize("verb", ["report", "plot"])
def test_report_and_plot_json_carry_the_ceilings(verb, files, tmp_path, capsys):
    k, roof = files
    extra = ["-o", str(tmp_path / "c.png")] if verb == "plot" else []
    doc = _json(capsys, verb, k, "--on", roof, "--level", "L1", *extra)
    (c,) = doc["reading"]["ceilings"]
    assert (c["kernel"], c["ceiling_level"]) == ("stencil", "DRAM")
    assert c["percent_of_l1_bandwidth"] == pytest.approx(3.470, abs=1e-3)


def test_json_doc_documents_the_reading():
    text = (Path(__file__).parent.parent / "docs" / "json.md").read_text()
    assert "**`reading`**" in text and "ceiling_level" in text
    assert "percent_of_l1_bandwidth" in text
