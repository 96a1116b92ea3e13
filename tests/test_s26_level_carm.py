"""Review s26 r2 F4: the cache-aware roofline (CARM, Intel Advisor's default CPU view) and
`rooflab report --level L1|L2|L3|DRAM|all`.

Before: `report` had no --level ("No such option"), and `plot --level L1`, the chart
docs/plot.md offered as the CARM substitute, labelled the stencil "3 % of roof" (its L1
point against the L1 slope) where CARM's binding DRAM slope gives 65 %.

The stencil of docs/plot.md, every number by hand: 2.622e9 FLOP, L1 bytes 2.0975e10, DRAM
bytes 7.866e9, 0.7556 s; the reviewer's typed-in roof: L1 800, L2 360, L3 200, DRAM 42.6
GB/s, fp64 257 GFLOP/s.
- CARM AI = 2.622e9 / 2.0975e10 = 0.1250060; achieved = 2.622e9 / 0.7556 = 3.470090 GFLOP/s
- roofs at that AI: L1 100.0, L2 45.0, L3 25.0, DRAM 5.325254 GFLOP/s (all under 257)
- the dot is under all four: DRAM binds, 3.470090 / 5.325254 = 65.16 %, headroom 1.5346x
  (the reviewer's "1.54x" is 5.33 / 3.47 rounded)
- the DRAM point (the default, --level DRAM): AI 1/3, attainable 14.2 GFLOP/s, 24.44 %,
  headroom 4.092x; the L1 point on its own slope: 3.470090 / 100.0048 = 3.470 %
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.level_carm import carm_memory, reading_name
from rooflab.model.level_reading import analyze_at, checked_reading

FLOP, L1_B, DRAM_B, T = 2.622e9, 2.0975e10, 7.866e9, 0.7556
AI_L1 = FLOP / L1_B                       # 0.1250060
ACHIEVED = FLOP / T                       # 3.470090e9
CARM_ATT = AI_L1 * 42.6e9                 # 5.325254e9
CARM_PCT = 100 * ACHIEVED / CARM_ATT      # 65.163
DRAM_PCT = 100 * ACHIEVED / (FLOP / DRAM_B * 42.6e9)   # 24.437
L1_PCT = 100 * ACHIEVED / (AI_L1 * 800e9)              # 3.470

ROOF = Roof("turin2", "measured",
            compute=(Ceiling(257e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(800e9, level="L1"), Ceiling(360e9, level="L2"),
                    Ceiling(200e9, level="L3"), Ceiling(42.6e9, level="DRAM")))


def _stencil(seconds: float | None = T) -> Kernel:
    return Kernel(name="stencil", flop={"fp64": FLOP}, bytes={"L1": L1_B, "DRAM": DRAM_B},
                  seconds=seconds)


def test_hand_numbers():
    assert AI_L1 == pytest.approx(0.125006, rel=1e-5)
    assert CARM_ATT == pytest.approx(5.325254e9, rel=1e-6)
    assert CARM_PCT == pytest.approx(65.16, abs=0.01)
    assert CARM_ATT / ACHIEVED == pytest.approx(1.5346, abs=1e-4)
    assert DRAM_PCT == pytest.approx(24.44, abs=0.01)


def test_carm_holds_the_l1_dot_to_the_lowest_roof_above_it():
    (p,) = analyze(ROOF, [_stencil()], levels=["L1"], carm=True).points
    assert p.level == "L1" and p.bytes == L1_B and p.ai == pytest.approx(AI_L1)
    assert p.memory_ceiling == "DRAM" and p.binding == "DRAM" and p.bound == "memory"
    assert p.attainable_flop_per_s == pytest.approx(CARM_ATT, rel=1e-9)
    assert p.percent_of_roof == pytest.approx(CARM_PCT, rel=1e-9)
    assert p.below_roof == pytest.approx(CARM_ATT / ACHIEVED, rel=1e-9)


def test_carm_note_gives_both_readings_side_by_side():
    (note,) = [n for n in analyze(ROOF, [_stencil()], levels=["L1"], carm=True).notes
               if "CARM" in n]
    assert "DRAM 42.6 GB/s x AI 0.125 = 5.33 GFLOP/s" in note
    assert "L1 100 GFLOP/s, L2 45 GFLOP/s, L3 25 GFLOP/s, DRAM 5.33 GFLOP/s" in note
    # the per-level figures beside it: L1 3.470 %, DRAM 24.44 % (two figures under 10 %)
    assert "hierarchical reading (no --level) L1 3.5 %, DRAM 24 % of their own roofs" in note


def test_without_carm_the_l1_point_stays_on_its_own_slope():
    # the hierarchical view (Nsight Compute's, the default): each level's own ceiling
    pts = {p.level: p for p in analyze(ROOF, [_stencil()]).points}
    assert pts["L1"].memory_ceiling == "L1"
    assert pts["L1"].percent_of_roof == pytest.approx(L1_PCT, rel=1e-9)
    assert pts["DRAM"].percent_of_roof == pytest.approx(DRAM_PCT, rel=1e-9)


@pytest.mark.parametrize(("seconds", "level"), [
    # 30 GFLOP/s: above DRAM's 5.33 and L3's 25.0, under L2's 45.0 -> L2 holds it
    (FLOP / 30e9, "L2"),
    # 20 GFLOP/s: between DRAM and L3 -> L3 (served from L3)
    (FLOP / 20e9, "L3"),
    # 150 GFLOP/s: above every roof (L1 100) -> the highest, over 100 %
    (FLOP / 150e9, "L1"),
])
def test_carm_binding_roof_follows_the_dot(seconds, level):
    c, note = carm_memory(ROOF, _stencil(seconds), 257e9)
    assert c.level == level and "CARM reading" in note


def test_carm_above_every_roof_reads_over_100():
    (p,) = analyze(ROOF, [_stencil(FLOP / 150e9)], levels=["L1"], carm=True).points
    assert p.percent_of_roof == pytest.approx(100 * 150.0 / (AI_L1 * 800), rel=1e-9)   # 150 %


def test_untimed_carm_kernel_is_judged_at_l1_and_says_so():
    c, note = carm_memory(ROOF, _stencil(None), 257e9)
    assert c.level == "L1" and "untimed" in note


def test_compute_side_carm_is_held_by_the_peak():
    # 1e12 FLOP on 1e9 L1 bytes: AI 1000, every roof at the 257 GFLOP/s peak
    k = Kernel(name="gemm", flop={"fp64": 1e12}, bytes={"L1": 1e9}, seconds=10.0)
    (p,) = analyze(ROOF, [k], levels=["L1"], carm=True).points
    assert p.bound == "compute" and p.attainable_flop_per_s == pytest.approx(257e9)
    assert p.percent_of_roof == pytest.approx(100 * 1e11 / 257e9)


def test_readings_are_named():
    assert [reading_name(x) for x in ("L1", "L2", "L3", "DRAM", "all", None)] == [
        "CARM", "per-level", "per-level", "DRAM", "hierarchical", "hierarchical"]
    assert checked_reading("l1") == "L1" and checked_reading("ALL") == "all"
    assert checked_reading("hbm") == "DRAM"


def test_level_without_bytes_is_noted_and_a_level_none_has_is_an_error():
    from rooflab.errors import InputError

    other = Kernel(name="copy", flop={"fp64": 1e9}, bytes={"DRAM": 8e9}, seconds=1.0)
    got = analyze_at(ROOF, [_stencil(), other], "L1")
    assert [p.kernel for p in got.points] == ["stencil"]
    assert any(n.startswith("copy: no L1 bytes") for n in got.notes)
    with pytest.raises(InputError, match="no kernel here has L2 bytes"):
        analyze_at(ROOF, [_stencil()], "L2")


# --- the CLI: the reviewer's commands ---------------------------------------------------

@pytest.fixture
def files(tmp_path):
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,level,precision\n"
                 f"stencil,{FLOP},{L1_B},{T},L1,fp64\n"
                 f"stencil,{FLOP},{DRAM_B},{T},DRAM,fp64\n")
    roof = tmp_path / "roof.json"
    assert main(["specs", "import", "--l1", "800GB/s", "--l2", "360GB/s", "--l3", "200GB/s",
                 "--dram", "42.6GB/s", "--fp64", "257GFLOP/s", "--measured", "-o",
                 str(roof)]) == 0
    return str(k), str(roof)


def _report_json(capsys, *args) -> dict:
    capsys.readouterr()
    assert main(["report", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_report_level_l1_gives_the_carm_numbers(files, capsys):
    k, roof = files
    doc = _report_json(capsys, k, "--on", roof, "--level", "L1")
    assert doc["reading"]["model"] == "CARM" and doc["reading"]["level"] == "L1"
    (a,) = doc["analysis"]
    assert a["level"] == "L1" and a["binding"] == "DRAM"
    assert a["percent_of_roof"] == pytest.approx(CARM_PCT, rel=1e-6)
    assert doc["diagnosis"][0]["headroom"] == pytest.approx(CARM_ATT / ACHIEVED, rel=1e-6)


def test_report_level_l1_terminal_says_carm_and_65(files, capsys):
    k, roof = files
    capsys.readouterr()
    assert main(["report", k, "--on", roof, "--level", "L1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "CARM reading (--level L1" in out
    assert "held by DRAM at 42.6 GB/s, the lowest roof above its dot" in out
    assert "= 65 % of roof" in out and "1.53x" in out and "(>2x)" not in out
    assert "3.5 % of L1 bandwidth 800 GB/s" in out


def test_report_default_unchanged_and_level_dram_is_the_classic(files, capsys):
    k, roof = files
    default = _report_json(capsys, k, "--on", roof)
    assert "reading" not in default
    assert {a["level"] for a in default["analysis"]} == {"L1", "DRAM"}
    assert default["diagnosis"][0]["headroom"] == pytest.approx(100 / DRAM_PCT, rel=1e-6)
    dram = _report_json(capsys, k, "--on", roof, "--level", "DRAM")
    assert dram["reading"]["model"] == "DRAM"
    (a,) = dram["analysis"]
    assert a["percent_of_roof"] == pytest.approx(DRAM_PCT, rel=1e-6)


def test_report_level_all_prints_every_level(files, capsys):
    k, roof = files
    capsys.readouterr()
    assert main(["report", k, "--on", roof, "--level", "all"]) == 0
    out = capsys.readouterr().out
    assert "Every level (hierarchical roofline)" in out
    assert "not binding (DRAM binds)" in out and "24 %" in out


def test_report_level_errors(files, capsys):
    k, roof = files
    capsys.readouterr()
    assert main(["report", k, "--on", roof, "--level", "L2"]) == 2
    err = capsys.readouterr().err
    assert "no kernel here has L2 bytes (they have DRAM, L1)" in err and "Traceback" not in err
    assert main(["report", k, "--on", roof, "--level", "L9"]) == 2
    assert "or all" in capsys.readouterr().err


def test_plot_level_l1_labels_the_carm_percent(files, tmp_path, capsys):
    k, roof = files
    capsys.readouterr()
    png = tmp_path / "carm.png"
    assert main(["plot", k, "--on", roof, "--level", "L1", "-o", str(png), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (p,) = doc["drawn"]["points"]
    assert p["level"] == "L1" and "65 % of roof" in p["label"]
    assert p["percent_of_roof"] == pytest.approx(CARM_PCT, rel=1e-6)
    assert doc["reading"]["model"] == "CARM"
    assert doc["reading"]["analysis"][0]["percent_of_roof"] == pytest.approx(CARM_PCT, rel=1e-6)
    assert png.stat().st_size > 0


def test_plot_without_level_is_still_hierarchical(files, tmp_path, capsys):
    k, roof = files
    capsys.readouterr()
    assert main(["plot", k, "--on", roof, "-o", str(tmp_path / "h.png"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pct = {p["level"]: p["percent_of_roof"] for p in doc["drawn"]["points"]}
    assert pct["L1"] == pytest.approx(L1_PCT, rel=1e-6)
    assert pct["DRAM"] == pytest.approx(DRAM_PCT, rel=1e-6)
    assert "reading" not in doc
