"""Review 10, findings 9, 10 and 11: what the terminal says about ncu metric substitutions
and per-file shares, the CPU record table's derived "nominal", plot --json writing no
chart by default (and its launch caps), RooflineDisplay.savefig and its short repr."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from rich.console import Console

from rooflab.cli.main import main
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.cpu_nominal import rated_clock
from rooflab.hardware.host import Caches, HostInfo
from rooflab.hardware.profile import MachineProfile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.probe.cpu import assemble
from rooflab.report.tables import derived_note, profile_table

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


@pytest.fixture
def gpp() -> Path:
    if not (GPP / "output1.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    return GPP


def _json(argv: list[str], capsys) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


# --- finding 9: the .ncu-rep's metric substitutions are said under the table ----------
def test_ncu_rep_prints_its_byte_metric_substitutions_once(gpp, capsys):
    assert main(["ncu", str(gpp / "output1.ncu-rep")]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())          # the terminal folds long notes
    # two kernels hold each note; it is printed once, naming both
    assert flat.count("L2 bytes from derived__lts__lts2xbar_bytes.sum") == 1
    assert flat.count("L1 bytes from derived__l1tex__lsu_writeback_bytes_mem_lg.sum") == 1
    assert "both kernels: L2 bytes from derived__lts__lts2xbar_bytes.sum, not " \
           "lts__t_bytes.sum (not in the file)" in flat
    assert "not l1tex__t_bytes.sum" in flat and "L1 AI differs" in flat
    assert "1.74" in out                  # L1 AI of sigma_gpp_gpu_34 from the report

    # the CSV export has lts__t_bytes / l1tex__t_bytes: no substitution, nothing to say
    assert main(["ncu", str(gpp / "output1.csv")]) == 0
    out = capsys.readouterr().out
    assert "bytes from" not in out and "2.02" in out


def test_the_two_l1_ai_come_from_the_substituted_metric(gpp, capsys):
    # same FLOP (2.5967e12) and time; L1 bytes 1.2885e12 (CSV, l1tex__t_bytes) vs
    # 1.4885e12 (report, lsu writeback): L1 AI 2.02 vs 1.74, the note says why
    def top(path: Path) -> tuple[dict, dict]:
        data = _json(["ncu", str(path), "--json"], capsys)
        k = max(data["kernels"], key=lambda k: k["seconds"])
        return k, data
    k_csv, d_csv = top(gpp / "output1.csv")
    k_rep, d_rep = top(gpp / "output1.ncu-rep")
    flop = sum(k_csv["flop"].values())
    assert flop == pytest.approx(2.5967e12, rel=1e-4)
    assert sum(k_rep["flop"].values()) == pytest.approx(flop, rel=1e-3)
    assert k_csv["bytes"]["L1"] == pytest.approx(1.2885e12, rel=1e-4)
    assert k_rep["bytes"]["L1"] == pytest.approx(1.4885e12, rel=1e-4)
    assert flop / k_csv["bytes"]["L1"] == pytest.approx(2.015, abs=0.005)
    assert flop / k_rep["bytes"]["L1"] == pytest.approx(1.745, abs=0.005)
    assert any("derived__l1tex__lsu_writeback_bytes_mem_lg.sum" in n
               for n in d_rep["import_notes"])
    assert not any("bytes from" in n for n in d_csv.get("import_notes", []))


# --- finding 11: share within each file when the files are separate runs -----------------
def test_share_is_within_each_file_for_several_runs(gpp, capsys):
    data = _json(["ncu", str(gpp / "output1.ncu-rep"), str(gpp / "output5.ncu-rep"),
                  "--json"], capsys)
    seconds = {k["name"]: k["seconds"] for k in data["kernels"]}
    share = {p["kernel"]: p["time_share"] for p in data["analysis"] if p["level"] == "DRAM"}
    main1, red1 = "sigma_gpp_gpu_34 [output1]", "sigma_gpp_gpu_34_gpu__red [output1]"
    main5, red5 = "sigma_gpp_gpu_34 [output5]", "sigma_gpp_gpu_34_gpu__red [output5]"
    # 30.492203776 s / (30.492203776 + 0.000101792 s): its own run's time, not 55.1 s
    assert seconds[main1] == pytest.approx(30.492203776)
    assert share[main1] == pytest.approx(30.492203776 / (30.492203776 + 0.000101792))
    assert share[main1] > 0.9999          # old code: 30.49 / 55.14 = 0.553
    assert share[main5] == pytest.approx(seconds[main5] / (seconds[main5] + seconds[red5]))
    assert share[red1] + share[main1] == pytest.approx(1.0)
    assert share[red5] + share[main5] == pytest.approx(1.0)
    assert any("separate profiling runs" in n for n in data["import_notes"])

    assert main(["ncu", str(gpp / "output1.ncu-rep"), str(gpp / "output5.ncu-rep")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "share is of each kernel's own file: the 2 files are separate profiling runs" in out


def test_share_csv_matches_the_table_and_one_file_is_unchanged(gpp, tmp_path, capsys):
    out_csv = tmp_path / "k.csv"
    assert main(["ncu", str(gpp / "output1.ncu-rep"), str(gpp / "output5.ncu-rep"),
                 "-o", str(out_csv)]) == 0
    rows = [r for r in csv.DictReader(out_csv.open()) if r["level"] == "DRAM"]
    by = {r["kernel"]: float(r["time_share"]) for r in rows}
    assert by["sigma_gpp_gpu_34 [output1]"] == pytest.approx(0.99999666, abs=1e-7)
    capsys.readouterr()
    # one file: shares of that file's total, as before, and no note about runs
    data = _json(["ncu", str(gpp / "output1.ncu-rep"), "--json"], capsys)
    share = {p["kernel"]: p["time_share"] for p in data["analysis"] if p["level"] == "DRAM"}
    assert sum(share.values()) == pytest.approx(1.0)
    assert not any("separate profiling runs" in n for n in data.get("import_notes", []))


# --- finding 10: the CPU record table's "nominal" is derived at the measured clock --------
def _zen4_profile(cpu_model: str) -> MachineProfile:
    host = HostInfo(cpu_model=cpu_model, vendor="AuthenticAMD", family=0x19, model=0x11,
                    flags=frozenset("fpu sse2 avx avx2 fma avx512f".split()), cores=2,
                    threads=2, caches=Caches(32768, 2**20, 32 * 2**20),
                    memory_bytes=2**34, memory_available_bytes=2**33, hypervisor="KVM",
                    os="Linux", machine="x86_64")
    arch = detect_microarch("AuthenticAMD", 0x19, 0x11, host.flags, cpu_model)
    nominal, _ = assemble._nominal(host, arch, 3.686, 2)     # as the probe builds it
    measured = Roof("EPYC measured", "measured", compute=(
        Ceiling(117.92e9, precision="fp64", unit="vector", provenance="measured"),))
    return MachineProfile(host={"name": "AMD EPYC", "cpu_model": cpu_model},
                          nominal=nominal, measured=measured)


def _printed(table, width: int = 80) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return console.export_text()


def test_record_table_marks_the_derived_nominal_and_says_whose_clock():
    text = _printed(profile_table(_zen4_profile("AMD EPYC")))
    # 2 cores x 3.686 GHz x 4 lanes x 2 FMA pipes x 2 = 117.95 GFLOP/s, marked derived
    assert "118 GFLOP/s *" in text and "236 GFLOP/s *" in text
    flat = " ".join(text.split())
    assert ("* derived, not a datasheet figure: fp64 vector = 2 cores x 3.686 GHz x 4 lanes "
            "x 2 FMA pipes x 2 (Zen 4), at the probe's own measured clock, so meas/nom tests "
            "the FMA-pipe model, not the rated clock") in flat
    assert "rated clock: not known" in flat
    assert "100 %" in text                      # 117.92 / 117.95
    assert max(len(line) for line in text.splitlines()) <= 80


def test_rated_clock_from_the_catalog_or_the_name():
    flat = " ".join(derived_note(_zen4_profile("AMD EPYC 9654 96-Core Processor")).split())
    assert ("rated clock: base 2.4 GHz, boost 3.7 GHz (catalog: AMD EPYC 9654); Zen 4 also "
            "has 2 FADD pipes") in flat
    intel = rated_clock("Intel(R) Xeon(R) CPU @ 2.20GHz")
    assert (intel.base_ghz, intel.boost_ghz) == (2.2, None)
    assert rated_clock("AMD EPYC") is None


def test_a_datasheet_nominal_gets_no_mark():
    gpu = Roof("T4", "nominal", compute=(Ceiling(65e12, precision="fp16", unit="tensor",
                                                 source="https://nvidia.com/t4"),),
               memory=(Ceiling(320e9, level="DRAM", source="https://nvidia.com/t4"),))
    profile = MachineProfile(host={"name": "T4"}, nominal=gpu)
    text = _printed(profile_table(profile))
    assert "65 TFLOP/s" in text and "*" not in text
    assert derived_note(profile) is None


# --- finding 11: plot --json writes no chart unless -o; its JSON has the launch caps -------
def _kernels(tmp_path: Path) -> Path:
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        # 10 calls in 60 us hold their 10 x 5 us of launches (a time below that holds none,
        # and gets no cap): a bare FLOP number is fp32
        {"name": "tiny", "flop": 2e6, "bytes": {"DRAM": 8e6}, "seconds": 6e-5, "calls": 10},
        {"name": "gemm", "flop": 2.1e9, "bytes": {"DRAM": 25e6}, "seconds": 5e-4}]}))
    return path


def test_plot_json_alone_writes_no_chart(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    k = _kernels(tmp_path)
    data = _json(["plot", str(k), "--on", "A100", "--json"], capsys)
    assert not (tmp_path / "roofline.png").exists()
    assert data["chart"] is None
    # A100: launch floor 5 us; tiny: 2 MFLOP / (10 x 5 us) = 40 GFLOP/s, under 2x its
    # roof at AI 0.25 (2.039 TB/s x 0.25 = 510 GFLOP/s); gemm's cap is far above its roof
    caps = data["drawn"]["caps"]
    assert [c["kernel"] for c in caps] == ["tiny"]
    assert caps[0]["flop_per_s"] == pytest.approx(40e9)
    assert (caps[0]["calls"], caps[0]["overhead_s"], caps[0]["ai"]) == (10, 5e-6, 0.25)


def test_plot_json_with_o_writes_it_and_plain_plot_keeps_the_default(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    k = _kernels(tmp_path)
    data = _json(["plot", str(k), "--on", "A100", "--json", "-o", "c.svg"], capsys)
    assert data["chart"] == "c.svg" and (tmp_path / "c.svg").stat().st_size > 0
    assert main(["plot", str(k), "--on", "A100"]) == 0
    assert (tmp_path / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- finding 11: RooflineDisplay.savefig and a short repr ---------------------------------
def _display():
    import rooflab

    kernels = [Kernel(name="triad", flop={"fp64": 2e6}, bytes={"DRAM": 24e6}, seconds=1e-3),
               Kernel(name="gemm", flop={"fp64": 2e9}, bytes={"DRAM": 24e6}, seconds=1e-2)]
    return rooflab.plot_roofline([rooflab.load_roof("T4"), rooflab.load_roof("A100")],
                                 kernels)


def test_display_repr_is_one_short_line():
    d = _display()
    assert repr(d) == "RooflineDisplay(2 roofs, 2 kernels, 2 points; .plot(), .savefig(path))"


def test_display_savefig_by_suffix_atomic(tmp_path):
    d = _display()
    png = d.savefig(tmp_path / "c.png", dpi=50)
    assert Path(png) == tmp_path / "c.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = d.savefig(str(tmp_path / "c.svg"))
    assert svg.read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.png", "c.svg"]   # no temp left
    from rooflab.errors import InputError

    with pytest.raises(InputError, match=r"figure_\.savefig"):
        d.savefig(tmp_path / "c.pdf")
    # dpi reaches matplotlib: 50 dpi gives a smaller image than the default 150
    big = d.savefig(tmp_path / "big.png")
    assert big.stat().st_size > png.stat().st_size
