"""--on <catalog GPU> keeps the L2/L1 points of a report that recorded their peaks (review
14d B): the catalog has DRAM only, the report's peaks complete the roof."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.ingest.profile_import import RecordedPeaks, with_recorded_levels
from rooflab.model.ceiling import Ceiling, Roof

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
ON = "RTX 4060 Laptop GPU"


def output5_with(tmp_path: Path, name: str, rows) -> Path:
    """output5.csv with extra metric rows (metric, unit, value) for its kernel's launch, each
    made from its dram__bytes.sum row: the metrics a newer collect recipe asks for."""
    src = GPP / "output5.csv"
    if not src.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    lines = src.read_text().splitlines()
    row = next(r for r in lines if '"dram__bytes.sum"' in r)
    old = '"dram__bytes.sum","byte","164,753,066,112"'
    extra = [row.replace(old, f'"{m}","{u}","{v}"') for m, u, v in rows]
    path = tmp_path / name
    path.write_text("\n".join(lines + extra) + "\n")
    return path


@pytest.fixture
def rep() -> Path:
    if not (GPP / "output1.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    pytest.importorskip("ncu_report")
    return GPP / "output1.ncu-rep"


def test_on_catalog_gpu_keeps_recorded_l2_l1(rep, capsys):
    assert main(["ncu", str(rep), "--on", ON, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    memory = {c["level"]: c for c in data["roof"]["memory"]}
    # the catalog's DRAM stays (256 GB/s, nominal); L2 = 1024 B/cycle x 1.6199 GHz (lts
    # clock) = 1.659 TB/s, L1 = 3072 B/cycle x 1.62 GHz = 4.977 TB/s, as recorded
    assert memory["DRAM"]["bytes_per_s"] == 256e9 and memory["DRAM"]["kind"] == "nominal"
    assert memory["L2"]["bytes_per_s"] == pytest.approx(1024 * 1.6199193e9, rel=1e-6)
    assert memory["L1"]["bytes_per_s"] == pytest.approx(3072 * 1.62e9, rel=1e-6)
    assert memory["L2"]["kind"] == "derived"
    assert "profiler peak" in memory["L2"]["method"]
    assert "output1.ncu-rep at 1.62 GHz" in memory["L2"]["source"]
    levels = {(p["kernel"], p["level"]) for p in data["analysis"]}
    assert ("sigma_gpp_gpu_34", "L2") in levels and ("sigma_gpp_gpu_34", "L1") in levels
    assert "L2/L1 ceilings from output1.ncu-rep's recorded peaks at 1.62 GHz" in \
        data["roof_source"]
    # the main kernel's L2 point: AI 3.89 (derived__lts__lts2xbar bytes), compute-bound
    l2 = next(p for p in data["analysis"]
              if p["kernel"] == "sigma_gpp_gpu_34" and p["level"] == "L2")
    assert l2["ai"] == pytest.approx(3.89, rel=2e-3)


def test_on_catalog_gpu_text_has_no_missing_level_note(rep, capsys):
    assert main(["ncu", str(rep), "--on", ON]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "has no L2 ceiling" not in text and "has no L1 ceiling" not in text


def test_roof_levels_never_replaced_only_completed():
    roof = Roof(name="x", compute=(Ceiling(1e12, precision="fp64"),),
                memory=(Ceiling(2e11, level="DRAM"), Ceiling(9e11, level="L2")))
    peaks = RecordedPeaks({}, {"DRAM": 1e11, "L2": 5e11, "L1": 3e12}, "/a/b/r.ncu-rep")
    done, note = with_recorded_levels(roof, peaks, 1.5e9)
    values = {c.level: c.value for c in done.memory}
    assert values == {"DRAM": 2e11, "L2": 9e11, "L1": 3e12}
    assert note == ("; L1 ceiling from r.ncu-rep's recorded peaks at 1.50 GHz (profiler "
                    "peak: x lists no L1 bandwidth; taken at the profiled clock, not the "
                    "roof's own)")
    assert with_recorded_levels(roof, None) == (roof, "")


def test_collect_recipe_lists_peak_metrics():
    from rooflab.cli.ncu import HELP

    doc = (Path(__file__).resolve().parents[1] / "docs" / "ingest.md").read_text()
    # --help spells peak_sustained as $P to stay within 80 columns
    for text in (HELP.replace("$P", "peak_sustained"), doc):
        for metric in ("dram__bytes.sum.peak_sustained", "lts__t_bytes.sum.peak_sustained",
                       "l1tex__t_bytes.sum.peak_sustained",
                       "sm__cycles_elapsed.avg.per_second", "lts__cycles_elapsed.avg.per_second",
                       "dfma_pred_on.sum.peak_sustained",
                       "sm__warps_active.avg.pct_of_peak_sustained_active"):
            assert metric in text, metric
    assert "P=peak_sustained" in HELP


def test_another_gpus_peaks_are_not_added(rep, capsys):
    # the report ran on an RTX 4060 Laptop GPU: its L2/L1 peaks say nothing of an H100's
    assert main(["ncu", str(rep), "--on", "H100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {c["level"] for c in data["roof"]["memory"]} == {"DRAM"}
    assert ("note: output1.ncu-rep recorded L2/L1 peaks of NVIDIA GeForce RTX 4060 Laptop "
            "GPU, not of NVIDIA H100 SXM: not added to its roof") in data["notes"]


def test_csv_with_recipe_peaks_keeps_l2_l1(tmp_path, capsys):
    # output5.csv plus the peak rows the collect recipe now asks for, with output1.ncu-rep's
    # figures: DRAM 32 B/cycle x 7.993 GHz, L2 1024 B/cycle and L1 3072 B/cycle x 1.62 GHz
    path = output5_with(tmp_path, "peaks.csv", (
        ("dram__bytes.sum.peak_sustained", "byte/cycle", "32"),
        ("lts__t_bytes.sum.peak_sustained", "byte/cycle", "1,024"),
        ("l1tex__t_bytes.sum.peak_sustained", "byte/cycle", "3,072"),
        ("dram__cycles_elapsed.avg.per_second", "hz", "7,993,000,000"),
        ("lts__cycles_elapsed.avg.per_second", "hz", "1,620,000,000"),
        ("l1tex__cycles_elapsed.avg.per_second", "hz", "1,620,000,000")))
    assert main(["ncu", str(path), "--on", ON, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    memory = {c["level"]: c["bytes_per_s"] for c in data["roof"]["memory"]}
    assert memory == pytest.approx({"DRAM": 256e9, "L2": 1024 * 1.62e9, "L1": 3072 * 1.62e9})
    # main kernel's L2 point: FLOP / lts__t_bytes = 6.64 x 164.75e9 / 226.97e9 = 4.82
    l2 = next(p for p in data["analysis"] if p["level"] == "L2")
    assert l2["ai"] == pytest.approx(6.64 * 164_753_066_112 / 226_973_098_304, rel=2e-3)
