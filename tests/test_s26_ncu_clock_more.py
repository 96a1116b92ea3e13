"""Review s26 v2: the clock-scaled catalog roof, consistent across verbs and round trips.

NERSC GPP output1 ran at 1.62 GHz (ncu locks base clocks); the RTX 4060 Laptop GPU's catalog
peaks assume 2.37 GHz, so its fp64 vector 228 GFLOP/s is judged as 228 x 1.62/2.37 = 155.5
GFLOP/s (ncu's own 96 FLOP/cycle x 1.62 GHz). F1: `ncu --precision each -o` wrote one kernel's
precisions as kernels (45.5 s for a 22.8 s launch read back). F2: `whatif --hardware` the
same GPU read 1.46x (= 2.37/1.62, the clock alone). F3: two runs at 1.62 and 2.20 GHz were
both judged at a 1.79 GHz blend. F6: the kernel CSV lost the device name, so L4's roof was
scaled to the 4060's clock (23 % where the .ncu-rep reads 18 %). F7: a profile's nominal
side read 62 % of boost in the record table, 90 % of the scaled 156 in the chart.
"""

from __future__ import annotations

import json
import re

import pytest

from rooflab.cli.main import main

ON = "RTX 4060 Laptop GPU"
NCU_FP64 = 155.5e9            # 96 FLOP/cycle x 1.62 GHz (ncu's peak of output1)
CATALOG_FP64 = 14.56e12 / 64  # 228 GFLOP/s, the boost-clock datasheet figure


def _json(capsys, *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _point(doc: dict, name: str = "sigma_gpp_gpu_34") -> dict:
    return next(p for p in doc["analysis"] if p["kernel"] == name and p["level"] == "DRAM")


# --- F1: --precision each is a view, not a kernel file ---------------------------------

@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_precision_each_refuses_a_kernel_file(gpp, tmp_path, capsys, suffix):
    out = tmp_path / f"e{suffix}"
    code = main(["ncu", str(gpp / "output.csv"), "--on", ON, "--precision", "each",
                 "-o", str(out)])
    err = " ".join(capsys.readouterr().err.split())
    # old: written (exit 0), read back as 2 kernels, 45.5 s for the 22.8 s measured
    assert code == 2 and not out.exists()
    assert "--precision each" in err and "(fp32, fp64)" in err
    assert "save without --precision" in err and "Traceback" not in err


def test_one_precision_and_a_chart_still_written(gpp, tmp_path, capsys):
    one = tmp_path / "one.json"
    assert main(["ncu", str(gpp / "output.csv"), "--on", ON, "--precision", "fp64",
                 "-o", str(one)]) == 0
    chart = tmp_path / "each.png"
    assert main(["ncu", str(gpp / "output.csv"), "--on", ON, "--precision", "each",
                 "-o", str(chart)]) == 0
    capsys.readouterr()
    assert one.stat().st_size > 0 and chart.stat().st_size > 0


# --- F2: whatif --hardware the same GPU is like for like --------------------------------

def _total(out: str) -> str:
    return re.search(r"total: .*?\(([\d.]+)x\)", out).group(1)


def test_whatif_hardware_same_gpu_is_one(gpp, capsys):
    assert main(["whatif", str(gpp / "output1.csv"), "--on", ON, "--hardware", ON]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert _total(out) == "1.00"            # old: 1.46 (= 2.37 / 1.62, the clock alone)
    assert "target compute ceilings derived at SM 1.62 GHz" in out


def test_whatif_hardware_from_the_report_same_gpu_is_one(gpp, capsys):
    # the .ncu-rep's own peaks (at 1.62 GHz) -> the catalog GPU it names, at 1.62 GHz too
    assert main(["whatif", str(gpp / "output1.ncu-rep"), "--hardware", ON]) == 0
    assert _total(" ".join(capsys.readouterr().out.split())) == "1.00"   # old: 1.46


def test_whatif_hardware_at_boost_is_accepted_and_says_the_clock(gpp, capsys):
    code = main(["whatif", str(gpp / "output1.csv"), "--on", ON,
                 "--hardware", f"{ON}@boost"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0                         # old: refused ('@boost' read as a thread count)
    assert _total(out) == "1.46"
    assert "1.46x of the gain is that clock alone" in out


def test_whatif_hardware_another_gpu_at_its_own_clock(gpp, capsys):
    # L4 runs at its own clock: its listed 473 GFLOP/s fp64 is not scaled to the 4060's
    doc = _json(capsys, "whatif", str(gpp / "output1.ncu-rep"), "--hardware", "L4")
    assert "derived at SM" not in json.dumps(doc)


# --- F3: no blend of clocks none ran at -------------------------------------------------

def _at_clock(src, dst, hz: str) -> None:
    text = src.read_text()
    new = re.sub(r",1619\d*\.\d+,8\.9,", f",{hz},8.9,", text)
    assert new != text
    dst.write_text(new)


def test_two_files_at_different_clocks_judged_at_listed_peaks(gpp, tmp_path, capsys):
    one, five = tmp_path / "k1.csv", tmp_path / "k5.csv"
    assert main(["ncu", str(gpp / "output1.csv"), "-o", str(one)]) == 0
    assert main(["ncu", str(gpp / "output5.csv"), "-o", str(five)]) == 0
    fast = tmp_path / "k5fast.csv"
    _at_clock(five, fast, "2200000000.0")      # the same run recorded at 2.20 GHz
    capsys.readouterr()
    doc = _json(capsys, "report", str(one), str(fast), "--on", ON)
    peaks = [p["peak_flop_per_s"] for p in doc["analysis"] if p["level"] == "DRAM"]
    # old: both at a 1.79 GHz blend, fp64 172 GFLOP/s (49.7 % and 52 %)
    assert peaks == [pytest.approx(CATALOG_FP64)] * 2
    text = " ".join(" ".join(doc["notes"]).split())
    assert "ran at different SM clocks: 1.62 GHz" in text and "2.20 GHz" in text
    assert "give each file alone" in text
    assert not any("derived at SM" in n for n in doc["notes"])
    # alone, each file is judged at its own clock
    alone = _json(capsys, "report", str(fast), "--on", ON)
    assert _point(alone)["peak_flop_per_s"] == pytest.approx(CATALOG_FP64 * 2.2e9 / 2.3698e9,
                                                             rel=2e-3)


def test_clocks_within_one_percent_are_one():
    from rooflab.ingest.profile_checks import kernels_clock
    from rooflab.model import Kernel

    ks = [Kernel("a", 1e9, 1e8, seconds=3.0, meta={"sm_clock_hz": 1.62e9}),
          Kernel("b", 1e9, 1e8, seconds=1.0, meta={"sm_clock_hz": 1.61e9})]
    assert kernels_clock(ks) == pytest.approx((3 * 1.62e9 + 1.61e9) / 4)
    far = [ks[0], Kernel("c", 1e9, 1e8, seconds=1.0, meta={"sm_clock_hz": 2.2e9})]
    assert kernels_clock(far) is None        # old: the 1.77 GHz blend


# --- F6: the kernel CSV keeps the device name -------------------------------------------

def test_kernel_csv_keeps_the_device_so_another_gpu_is_seen(gpp, tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["ncu", str(gpp / "output1.ncu-rep"), "-o", str(out)]) == 0
    capsys.readouterr()
    header, row = out.read_text().splitlines()[:2]
    cols = dict(zip(header.split(","), row.split(","), strict=True))
    assert cols["device"] == "NVIDIA GeForce RTX 4060 Laptop GPU"
    doc = _json(capsys, "report", str(out), "--on", "L4")
    p = _point(doc)
    # old: L4's 473 GFLOP/s scaled to the 4060's clock (376), 23 %; the .ncu-rep reads 18 %
    assert p["peak_flop_per_s"] == pytest.approx(473e9, rel=0.01)
    assert round(p["percent_of_roof"]) == 18
    assert any("another GPU" in n for n in doc["notes"])


def test_raw_page_device_index_is_not_a_device_name(gpp, tmp_path, capsys):
    # output1.csv's raw page records the device index '0', not a name: no device column
    out = tmp_path / "k.csv"
    assert main(["ncu", str(gpp / "output1.csv"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert "device" not in out.read_text().splitlines()[0].split(",")


# --- F7: a profile's nominal side as judged ---------------------------------------------

def test_profile_nominal_side_at_the_recorded_clock(gpp, tmp_path, capsys):
    prof = tmp_path / "p.json"
    assert main(["specs", "import", "--from", ON, "--dram", "230GB/s", "--fp64",
                 "140GFLOP/s", "--l1", "2TB/s", "-o", str(prof)]) == 0
    capsys.readouterr()
    assert main(["report", str(gpp / "output1.ncu-rep"), "--on", str(prof)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    row = re.search(r"fp64 vector peak │ (\S+ \S+) │ (\S+ \S+) │ (\d+) %", out)
    # old: 228 GFLOP/s and 62 % (low); the chart drew 156 at 1.62 GHz
    assert row.groups() == ("156 GFLOP/s", "140 GFLOP/s", "90")
    assert "62 % of 228" not in out


# --- F8: roof_kind says the compute ceilings were derived -------------------------------

def _roof_kinds(path) -> set[str]:
    import csv

    with open(path, newline="") as fh:
        return {row["roof_kind"] for row in csv.DictReader(fh)}


def test_kernel_csv_roof_kind_derived_at_the_recorded_clock(gpp, tmp_path, capsys):
    scaled, boost = tmp_path / "k.csv", tmp_path / "kb.csv"
    assert main(["ncu", str(gpp / "output1.csv"), "--on", ON, "-o", str(scaled)]) == 0
    assert main(["ncu", str(gpp / "output1.csv"), "--on", f"{ON}@boost",
                 "-o", str(boost)]) == 0
    capsys.readouterr()
    # old: "nominal" for the 155.5 GFLOP/s fp64 ceiling, nominal 228 x 1.62/2.37
    assert _roof_kinds(scaled) == {"derived"}
    assert _roof_kinds(boost) == {"nominal"}      # the datasheet's peaks, as listed
