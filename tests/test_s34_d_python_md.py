"""docs/python.md "runs top to bottom in one Python session or notebook": every ```python
block of the page, in order, in one namespace (the quick probe of §1 is the session's one
real quick probe; the files it writes go to a temp folder), with the figures its comments
and output blocks give where they are computed, not measured. Before, only §9 was run
(test_python_api_review19b); §1's roof of a probed machine lacked the scalar (no SIMD)
rows every probe now measures (session 34, helper D)."""
from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "python.md"


def _blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the page, in order."""
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(r"^```([a-z]*)\n(.*?)^```[ \t]*$", text, flags=re.S | re.M)


# the output blocks that are computed (catalog roofs, counted ops, errors, §9's displays),
# by their first line; the timed and probed ones differ run by run
COMPUTED = ("Roof 'NVIDIA T4'", "Analysis on 'NVIDIA T4'", "HardwareNotFound:", "WhatIf:",
            "Diagnosis #1", "Comparison:", "Choice 'A100'")


@pytest.fixture(scope="module")
def page_run(quick_cpu_probe, tmp_path_factory):
    """Every python block run in order, once for the module: (namespace, [(block, printed,
    shown output)], values as their own block left them: the decorated `step`'s kernel, §5's
    chart display `d`, which §9 reuses the name of)."""
    pytest.importorskip("torch", reason="§4 times torch.mm (pip install 'rooflab[torch]')")
    import matplotlib

    matplotlib.use("Agg")
    profile, _ = quick_cpu_probe
    blocks = _blocks()
    ns: dict = {}
    runs = []
    then: dict = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("rooflab.probe.cpu.probe_cpu", lambda mode="quick", **_kw: profile)
        mp.chdir(tmp_path_factory.mktemp("python_md"))
        for i, (lang, code) in enumerate(blocks):
            if lang != "python":
                continue
            shown = (blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == ""
                     else None)
            out = io.StringIO()
            with contextlib.redirect_stdout(out), warnings.catch_warnings():
                warnings.simplefilter("ignore")      # timing noise on a shared machine
                exec(compile(code, f"docs/python.md block {i}", "exec"), ns)
            runs.append((code, out.getvalue(), shown))
            if '@rooflab.measure(name="step")' in code:
                then["step"] = ns["step"].kernel      # a frozen value: as it was then
            if "plot_roofline(me" in code:
                then["chart"] = ns["d"]
        yield ns, runs, then, Path.cwd()


def test_every_python_block_runs_in_order_and_gives_its_numbers(page_run):
    ns, runs, then, folder = page_run
    step, chart = then["step"], then["chart"]
    assert len(runs) >= 20                       # §1-§9 and the four §9 displays
    rooflab = ns["rooflab"]
    # §1: 6.5e13 / 3.2e11 = 203.125; 320 GB/s x 100 = 3.2e13, under 65 TFLOP/s
    assert rooflab.ridge(ns["t4"]) == rooflab.ridge(ns["peak"], ns["bw"]) == 203.125
    assert rooflab.attainable(ns["t4"], 100) == 3.2e13
    # §2: AI 2.2e9 / 2.2e9 = 1; 2.2e9 / 0.015 s; 146.7 / 320 = 45.8 %; 2.2e9 / 3.2e11 s
    p = ns["p"]
    assert (p.ai, p.attainable_flop_per_s, p.bound) == (1.0, 320e9, "memory")
    assert p.achieved_flop_per_s == pytest.approx(2.2e9 / 0.015)
    assert p.percent_of_roof == pytest.approx(45.8333, abs=1e-3)
    assert p.floor_s == pytest.approx(6.875e-3)
    # §3: 2 x 4096^3 FLOP, 3 x 4096^2 x 2 B; attention 4096000 FLOP, 520192 B
    assert (ns["mm"].flop, ns["mm"].bytes) == (2 * 4096**3, 3 * 4096**2 * 2)
    assert (ns["att"].flop, ns["att"].bytes) == (4096000.0, 520192.0)
    # §4: torch.mm of 512 x 512 counted: 2 x 512^3 FLOP, 3 x 512^2 x 4 B
    kmm = ns["kmm"]
    assert (kmm.name, dict(kmm.flop), dict(kmm.bytes)) == ("mm", {"fp32": 268435456.0},
                                                            {"DRAM": 3145728.0})
    # 3 calls, the first (counted, not timed) left out
    assert (step.calls, dict(step.flop)) == (2, {"fp32": 536870912.0})
    assert list(step.meta["ops"]) == ["aten.mm", "aten.relu"]
    m = ns["m"].kernel
    assert (m.calls, len(m.samples), m.meta["seconds_stat"]) == (1, 1, "single run")
    assert [(k.name, k.calls) for k in ns["found"].kernels] == [("step", 2), ("mm", 1)]
    # §5, §6: the chart's points, the files written and read back
    assert [(q.kernel, q.level) for q in chart.points] == [("triad", "DRAM"), ("mm", "DRAM")]
    assert {"chart.png", "chart.svg", "chart.pdf", "kernels.json", "me.json",
            "mine.json"} <= {f.name for f in folder.iterdir()}
    assert rooflab.load_kernels(folder / "kernels.json") == (ns["tri"], kmm)
    assert rooflab.load_roof(folder / "mine.json") == ns["mine"]
    # §7: TinyLlama on the T4, the page's TPOT (2.07 GB of weights + 11 MB KV at 320 GB/s)
    assert ns["r"].tpot_s == pytest.approx(0.006512430425, rel=1e-6)
    assert ns["r"].decode.step.ai == pytest.approx(1.036, abs=5e-4)


def test_the_computed_output_blocks_are_what_the_code_prints(page_run):
    runs = page_run[1]
    checked = 0
    for code, printed, shown in runs:
        if shown is None or not shown.startswith(COMPUTED):
            continue
        assert printed.strip() == shown.strip(), code.splitlines()[0]
        checked += 1
    # §1's T4, §2's and §3's analyses, §8's errors, §9's four displays
    assert checked == 8


def test_section_1_names_every_row_of_a_probed_roof(page_run):
    # the display of a real quick probe: fp64/fp32 vector and scalar peaks, L1..DRAM, the
    # derived real-traffic DRAM and the launch floor; §1 showed no scalar rows
    runs = page_run[1]
    (printed,) = [out for code, out, _ in runs if "probe_cpu(" in code]
    rows = [re.match(r"\s*(.+?)\s+[\d.]+ ", ln).group(1) for ln in printed.splitlines()[1:]
            if ln.strip()]
    assert {"fp64 scalar", "fp32 scalar", "DRAM (real traffic)"} <= set(rows)
    text = PAGE.read_text(encoding="utf-8")
    section_1 = text[text.index("## 1. A roof"):text.index("## 2. ")]
    assert [r for r in rows if r not in section_1] == []


def test_the_lazy_imports_are_as_the_page_says():
    # python.md's opening: `import rooflab` loads no numpy, `rooflab.Kernel` loads the
    # model (a Kernel is plain Python), `rooflab.load_roof` the catalog and, since s36, no
    # numpy (roofline.attainable imports it only for arrays); numpy comes with an array
    # call. The page said "`rooflab.Kernel` loads the model and numpy"
    import subprocess
    import sys

    code = ("import sys, rooflab; a = 'numpy' in sys.modules; "
            "rooflab.Kernel('x', flop=1e9, bytes=1e8); b = 'numpy' in sys.modules; "
            "r = rooflab.load_roof('T4'); c = 'numpy' in sys.modules; "
            "rooflab.attainable(r, [0.5, 2.0]); print(a, b, c, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "False", "True"]
    assert ("(`rooflab.Kernel` loads the model, `rooflab.load_roof` the catalog; numpy only when a"
            " function\ntakes arrays" in PAGE.read_text(encoding="utf-8"))
