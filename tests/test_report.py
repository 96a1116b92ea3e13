"""Reports: Markdown, self-contained HTML, terminal summary and the `rooflab report` CLI."""

import json
import re
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.markdown import markdown_report, record_rows, step_rows

NERSC = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"

# Seed 004's T4: nominal 65 TFLOP/s fp16 tensor, 320 GB/s; measured (its example) 50 and 270.
NOMINAL = Roof("T4", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
               memory=(Ceiling(320e9, level="DRAM"),))
MEASURED = Roof("T4 measured", kind="measured",
                compute=(Ceiling(50e12, precision="fp16", unit="tensor", provenance="measured"),),
                memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
PROFILE = MachineProfile(host={"name": "t4"}, nominal=NOMINAL, measured=MEASURED)
# Seed 004's points: decode b=1 (2.2 GFLOP, 2.2 GB, 15 ms) and matmul 4096 at the roof.
DECODE = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015,
                provenance={"flop": "derived", "bytes": "derived", "seconds": "measured"})
MATMUL = Kernel("matmul 4096", {"fp16": 2 * 4096**3}, {"DRAM": 6 * 4096**2},
                seconds=2 * 4096**3 / 50e12, unit="tensor")
ANALYSIS = analyze(MEASURED, [DECODE, MATMUL])


def test_markdown_report_numbers():
    md = markdown_report(ANALYSIS, PROFILE, title="T4 decode")
    assert md.startswith("# T4 decode")
    # decode: 2.2e9 / 0.015 = 147 GFLOP/s at AI 1 under a 270 GFLOP/s slope: 54 % of roof.
    assert "| decode b=1 | fp16 tensor | DRAM | 1 | 147 GFLOP/s | 270 GFLOP/s | 54 % |" in md
    # Seed 004's TPOT row: nominal floor 2.2e9 / 320e9 = 6.88 ms ("6.9 (下限)"), 15 ms is
    # 2.18x it ("2.2 倍"); the floor on the measured roof 2.2e9 / 270e9 = 8.15 ms, 1.84x.
    assert "| decode b=1: time | 6.88 ms (floor) | 15 ms | 2.18x the floor; 1.84x the " \
           "8.15 ms floor of the measured roof |" in md
    for section in ("## Record table", "## Top kernels to work on", "## Diagnosis per kernel"):
        assert section in md
    assert "along slope" in md and "assumption" in md


def test_record_table_matches_seed_004():
    rows = {r[0]: r for r in record_rows(ANALYSIS, PROFILE)}
    # B: 270 / 320 = 84 %; P: 50 / 65 = 77 %; ridge 203 -> 185 (91 %).
    assert rows["DRAM bandwidth"][1:] == ("320 GB/s", "270 GB/s", "84 %")
    assert rows["fp16 tensor peak"][3] == "77 %"
    assert rows["ridge fp16 / DRAM"][1:3] == ("203", "185")
    # Workload row: decode at the nominal slope 320 GFLOP/s vs 147 measured.
    assert rows["decode b=1: FLOP/s"][1:3] == ("320 GFLOP/s", "147 GFLOP/s")


def test_html_report_is_self_contained():
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.report.html import html_report

    page = html_report(ANALYSIS, PROFILE)
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=", page, re.I)
    assert "Plotly.newPlot" in page                     # plotly.js inlined, chart drawn
    assert "decode b=1" in page and "147 GFLOP/s" in page
    # Hover carries provenance; both roofs are legend entries (toggleable).
    assert "(fp16; derived)" in page
    # plotly escapes "/" as \u002f in its JSON.
    assert "measured DRAM 270 GB\\u002fs" in page and "nominal DRAM 320 GB\\u002fs" in page


def _kernel_file(tmp_path):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
         "seconds": 0.015}]}))
    prof = tmp_path / "t4.json"
    prof.write_text(json.dumps(profile_to_dict(PROFILE)))
    return str(path), str(prof)


def test_cli_report_outputs(tmp_path, capsys):
    kernels, prof = _kernel_file(tmp_path)
    assert main(["report", kernels, "--on", prof]) == 0
    out = capsys.readouterr().out
    assert "decode b=1" in out and "memory" in out and "1.84x" in out
    md = tmp_path / "r.md"
    assert main(["report", kernels, "--on", prof, "-o", str(md)]) == 0
    assert "## Record table" in md.read_text()
    capsys.readouterr()
    assert main(["report", kernels, "--on", prof, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["diagnosis"][0]["bound"] == "memory"
    assert data["diagnosis"][0]["headroom"] == pytest.approx(0.015 / (2.2e9 / 270e9))


def test_cli_report_errors(tmp_path, capsys):
    kernels, prof = _kernel_file(tmp_path)
    assert main(["report", kernels]) == 2
    assert "error: no roof" in capsys.readouterr().err
    assert main(["report", kernels, "--on", prof, "-o", str(tmp_path / "r.txt")]) == 2
    assert "must end in .html, .md or .json" in capsys.readouterr().err


@pytest.mark.skipif(not NERSC.is_dir(), reason="NERSC GPP recordings not in ../shared/fixtures")
def test_nersc_gpp_steps(tmp_path, capsys):
    files = sorted(str(p) for p in NERSC.glob("output*.csv"))
    md = tmp_path / "gpp.md"
    assert main(["report", *files, "-o", str(md), "--top", "2"]) == 0
    text = md.read_text()
    assert "## Optimisation steps" in text
    # output4 -> output5: 26.29 s -> 12.29 s = 2.14x (the step that halved the FLOP).
    assert "| output5 | sigma_gpp_gpu_34 | 12.3 s | 2.14x |" in text
    # The failed launch of output8 is reported, not plotted.
    assert "output8.csv" in text and "LaunchFailed" in text
    # The trend across steps: FLOP/s flat (85.2..88.9 GFLOP/s), DRAM cuts bought nothing.
    assert "between 85.2 GFLOP/s and 88.9 GFLOP/s" in text
    assert "output3 -> output4: no faster (1.01x)" in text
    assert "fewer DRAM bytes do not help" in text
    assert "output4 -> output5: 2.14x faster; FLOP x0.47" in text


def test_step_rows_need_two_steps():
    assert step_rows(ANALYSIS) == []


# --- the page in a real browser ------------------------------------------------------------
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


@pytest.mark.browser
@pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                    reason="needs /usr/bin/chromium and /usr/bin/chromedriver "
                           "(apt-get install chromium chromium-driver)")
def test_html_renders_in_headless_chromium(tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    kernels, prof = _kernel_file(tmp_path)
    page = tmp_path / "report.html"
    assert main(["report", kernels, "--on", prof, "-o", str(page)]) == 0
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    try:
        driver.set_page_load_timeout(30)
        driver.get(page.as_uri())
        WebDriverWait(driver, 20).until(
            lambda d: d.execute_script("return document.querySelectorAll('.main-svg').length"))
        points = driver.execute_script(
            "return document.querySelectorAll('.scatterlayer .point').length")
        assert points >= 1                               # the kernel's marker was drawn
        body = driver.find_element("tag name", "body").text
        assert "decode b=1" in body and "147 GFLOP/s" in body and "54 %" in body
    finally:
        driver.quit()


# A CPU profile as `rooflab probe` writes it: the nominal roof is derived from the core count
# and clock (no DRAM figure: vendors do not publish one per socket configuration), the
# measured one has samples. Triad: 2e7 FLOP, 2.4e8 B in 20 ms on one thread.
CPU_NOMINAL = Roof("AMD EPYC (Zen 4, 2 cores @ 3.68 GHz)", compute=(
    Ceiling(118e9, precision="fp64", unit="vector", provenance="derived",
            method="2 cores x 3.68 GHz x 8 lanes x 2 FMA pipes x 2 (Zen 4)"),
    Ceiling(236e9, precision="fp32", unit="vector", provenance="derived")))
CPU_MEASURED = Roof("AMD EPYC measured (2 threads)", kind="measured",
                    source="rooflab probe (numba kernels, this machine)",
                    compute=(Ceiling(118e9, precision="fp64", unit="vector",
                                     provenance="measured"),),
                    memory=(Ceiling(23.5e9, level="DRAM", provenance="measured",
                                    samples=(16e9, 18e9, 20e9, 23.5e9, 22e9)),),
                    overhead_s=421e-9)
CPU_PROFILE = MachineProfile(
    host={"name": "AMD EPYC", "kind": "cpu", "flags": ["avx2", "fma", "avx512f", "avx512_bf16"],
          "caches": {"l1d": 32768, "l2": 1048576, "l3": 33554432}},
    nominal=CPU_NOMINAL, measured=CPU_MEASURED)
TRIAD = Kernel("triad", {"fp64": 2e7}, {"DRAM": 2.4e8}, seconds=0.02,
               meta={"op": "elementwise", "note": "numpy ufuncs run on one thread"})
CPU_ANALYSIS = analyze(CPU_MEASURED, [TRIAD])


def test_cpu_record_table_says_not_published():
    rows = {r[0]: r for r in record_rows(CPU_ANALYSIS, CPU_PROFILE)}
    assert rows["DRAM bandwidth"][1:3] == ("not published", "23.5 GB/s")
    assert rows["ridge fp64 / DRAM"][1:3] == ("not published (no nominal DRAM)", "5.02")
    assert rows["fp64 vector peak"][1:] == ("118 GFLOP/s", "118 GFLOP/s", "100 %")
    # No nominal slope: only the peak bounds the nominal height; no nominal floor either.
    assert rows["triad: FLOP/s"][1] == "<= 118 GFLOP/s (peak; DRAM not published)"
    # Floor on the measured roof: 2.4e8 / 23.5e9 = 10.2 ms; 20 ms is 1.96x it.
    assert rows["triad: time"][1:] == ("not published (no nominal DRAM)", "20 ms",
                                       "1.96x the 10.2 ms floor of the measured roof")


def test_cpu_report_reads_as_a_cpu():
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.report.html import html_report

    md = markdown_report(CPU_ANALYSIS, CPU_PROFILE)
    assert "Machine: a CPU (AVX-512, AVX2, FMA, AVX512-BF16); caches L1 32 KiB, L2 1 MiB, " \
           "L3 32 MiB (L1/L2 per core)" in md
    assert "- **Kernel note**: numpy ufuncs run on one thread" in md
    assert "Measured ceilings whose samples spread more than 5 % (IQR / median): " \
           "DRAM bandwidth" in md
    low = md.lower()
    for gpu_word in ("cuda", "tensor core", "occupancy", "coalesce", "warp"):
        assert gpu_word not in low, gpu_word
    assert "full-width SIMD loads on every core" in md
    page = html_report(CPU_ANALYSIS, CPU_PROFILE)
    assert "Machine: a CPU" in page and "not published" in page
    assert "Kernel note</b>: numpy ufuncs run on one thread" in page


def test_gpu_report_keeps_gpu_words():
    md = markdown_report(ANALYSIS, PROFILE)
    assert "Machine: a GPU" in md and "coalesce" in md


def test_disturbed_probe_and_points_above_the_roof_are_called_out():
    # A probe that measured fp64 at 12.5 GFLOP/s (11 % of the nominal 118) and a BLAS GEMM
    # that then runs at 94 GFLOP/s: 7.5x above the roof it is judged by.
    measured = Roof("AMD EPYC measured (2 threads)", kind="measured",
                    compute=(Ceiling(12.5e9, precision="fp64", unit="vector",
                                     provenance="measured"),),
                    memory=(Ceiling(23e9, level="DRAM", provenance="measured"),))
    profile = MachineProfile(host={"kind": "cpu"}, nominal=CPU_NOMINAL, measured=measured)
    gemm = Kernel("gemm", {"fp64": 2 * 1024**3}, {"DRAM": 3 * 8 * 1024**2},
                  seconds=2 * 1024**3 / 94e9, meta={"op": "matmul"})
    md = markdown_report(analyze(measured, [gemm]), profile)
    assert "1 kernel(s) run faster than the roof allows: gemm (7.52x above)" in md
    # a CPU's derived peak at its measured clock: a quiet probe reaches 85-100 % of it (the
    # 70-90 % of seed 004 is a GPU datasheet's; session 9)
    assert "Measured ceilings far below nominal (a quiet probe reaches 85-100 % (nominal " \
           "at the clock measured in this run) of a nominal compute peak): " \
           "fp64 vector peak 11 %" in md
    assert "| 0.13x (above roof) |" in md
    assert "the measured roof is too low" in md          # the above_roof finding's first cause
    assert "none: it runs 7.52x faster than its roof allows" in md


def test_html_chart_draws_untimed_kernels_hollow_at_their_attainable():
    # As the PNG does: a kernel with counts but no time sits at min(P, AI x B), hollow.
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.report.html import figure

    gemv = Kernel("gemv", {"fp16": 2 * 4096 * 4096}, {"DRAM": 2 * 4096 * 4096})   # AI 1
    fig = figure(analyze(MEASURED, [DECODE, gemv]), PROFILE)
    (pred,) = [t for t in fig.data if t.name == "predicted @ DRAM (no measured time)"]
    assert list(pred.text) == ["gemv"] and pred.marker.symbol == "circle-open"
    assert pred.x[0] == pytest.approx(1.0) and pred.y[0] == pytest.approx(270e9)
    (timed,) = [t for t in fig.data if t.name == "kernels @ DRAM"]
    assert list(timed.text) == ["decode b=1"]
