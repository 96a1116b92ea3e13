"""What the reader sees: the leftovers of reviews 17a (N11, N12, N13) and 17b (N5, #8, #12,
#13). Each test fails on the code before its fix."""

import textwrap

import pytest

from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.markdown import record_notes, record_rows

# --- 17a N13e / X1: a derived ceiling is "derived", not "not published" ----------------------

# Review 17a's q17.json: DRAM (triad, STREAM-counted) 19.65 GB/s; the real-traffic ceiling
# derived from it: 19.65 x 32/24 = 26.2 GB/s (triad's store adds a write-allocate read).
REAL_METHOD = ("derived from this run's measured DRAM rates: triad 19.65 GB/s x 4/3 = "
               "26.2 GB/s; real traffic at the memory controller")
CPU_NOMINAL = Roof("EPYC nominal", compute=(Ceiling(118e9, precision="fp64", unit="vector",
                                                    provenance="derived"),))
CPU_MEASURED = Roof(
    "EPYC measured", kind="measured",
    compute=(Ceiling(117e9, precision="fp64", unit="vector", provenance="measured"),),
    memory=(Ceiling(19.65e9, level="DRAM", provenance="measured"),
            Ceiling(19.65e9 * 4 / 3, level="DRAM (real traffic)", provenance="derived",
                    method=REAL_METHOD)))
CPU_PROFILE = MachineProfile(host={"name": "AMD EPYC", "kind": "cpu"}, nominal=CPU_NOMINAL,
                             measured=CPU_MEASURED)
TRIAD = Kernel("triad", {"fp64": 2e8}, {"DRAM": 3.2e9}, seconds=0.2)


def test_record_table_says_derived_with_its_method():
    rows = {r[0]: r for r in record_rows(analyze(CPU_MEASURED, [TRIAD]), CPU_PROFILE)}
    row = rows["DRAM (real traffic) bandwidth"]
    assert row[1:3] == ("derived from this run's measured DRAM rates", "26.2 GB/s (derived)")
    # a ceiling with no datasheet value that is measured keeps its words
    assert rows["DRAM bandwidth"][1:3] == ("not published", "19.6 GB/s")
    assert f"DRAM (real traffic) bandwidth (derived): {REAL_METHOD}" in record_notes(CPU_PROFILE)


def test_html_record_table_says_derived():
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.report.html import html_report

    page = html_report(analyze(CPU_MEASURED, [TRIAD]), CPU_PROFILE)
    row = page[page.index("<th scope='row'>DRAM (real traffic) bandwidth</th>"):][:200]
    assert "<td>derived from this run&#x27;s measured DRAM rates</td>" in row
    assert "26.2 GB/s (derived)" in row and "not published" not in row


def test_probe_table_marks_the_derived_measured_value():
    from rooflab.report.tables import profile_rows

    rows = {r.quantity: r.cells() for r in profile_rows(CPU_PROFILE)}
    assert rows["DRAM (real traffic) bandwidth"][2] == "26.2 GB/s (derived)"
    assert rows["DRAM bandwidth"][2] == "19.6 GB/s"


# --- 17b N5: plot names the 0-FLOP memory ops it cannot place --------------------------------

H100 = Roof("H100", compute=(Ceiling(67e12, precision="fp32", unit="vector"),),
            memory=(Ceiling(3.35e12, level="DRAM"),))
OPS = [Kernel("matmul", {"fp32": 2e9}, {"DRAM": 2e7}, seconds=1e-3),
       # 17b's training step: embedding 264,192 B, cat 2 x 4,096,000 B in 124 ms
       Kernel("aten::embedding", {}, {"DRAM": 264_192}, seconds=1e-4),
       Kernel("aten::cat", {}, {"DRAM": 8_192_000}, seconds=0.124)]
# cat: 8.192e6 / 0.124 = 66.1 MB/s = 0.00197 % of 3.35 TB/s; embedding 2.64 GB/s = 0.0789 %
NAMED = ("no FLOP, so not on the chart: aten::cat 66.1 MB/s = 0.002 % of DRAM; "
         "aten::embedding 2.64 GB/s = 0.079 % of DRAM (DRAM 3.35 TB/s)")


def test_chart_names_memory_ops_under_the_axis():
    from rooflab.report.chart import roofline_data
    from rooflab.report.chart_words import memory_ops

    display = roofline_data([H100], OPS)
    assert {p.kernel for p in display.points} == {"matmul"}
    assert memory_ops(display) == NAMED
    display.plot()
    assert "aten::cat 66.1 MB/s = 0.002 % of DRAM" in display.ax_.get_xlabel()
    assert memory_ops(roofline_data([H100], OPS[:1])) == ""


def test_html_chart_caption_names_memory_ops():
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.report.html import html_report

    page = html_report(analyze(H100, OPS))
    assert f"Chart: {NAMED}." in page


# --- 17b #8/#13: bench --run says how it timed and on how many threads -----------------------

def test_recipe_line_gives_plan_warmup_and_threads():
    from rooflab.bench.table import recipe_line
    from rooflab.measure_context import plan_meta
    from rooflab.probe.timer import QUICK

    k = Kernel("step", {"fp32": 1e6}, {"DRAM": 1e6}, seconds=1e-3,
               meta={"plan": plan_meta(QUICK), "warmup_calls": 4, "threads": 1,
                     "threads_from": "torch.get_num_threads()"})
    # QUICK: warm-up 0.01 s, samples 0.01 s, budget 0.08 s, 5..200 samples
    assert recipe_line([k]) == (
        "timing: plan quick (warm-up 10 ms, 10 ms samples, 80 ms budget, 5-200 samples); "
        "4 warm-up calls before the first timed sample; threads 1 (torch.get_num_threads())")
    assert recipe_line([Kernel("k", {"fp32": 1.0}, {"DRAM": 1.0}, seconds=1.0)]) is None


def test_bench_run_prints_the_recipe(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent("""
        import rooflab
        rooflab.measure(lambda: None, name="k", flop={"fp64": 10}, bytes={"DRAM": 80},
                        plan="quick")
    """))
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "timing: plan quick (warm-up 10 ms, 10 ms samples, 80 ms budget, 9-200 " \
           "samples);" in out
    assert "threads not known" in out


# --- 17b #12: ai conv2d fp32 on a GPU with TF32 says PyTorch runs it on TF32 -----------------

def test_ai_conv2d_fp32_on_a_tf32_gpu_has_the_note(capsys):
    args = ["ai", "conv2d", "--n", "8", "--c", "64", "--h", "56", "--w", "56", "--k", "64",
            "--dtype", "fp32"]
    assert main([*args, "--on", "A100"]) == 0
    out = capsys.readouterr().out
    # A100's dense TF32 tensor rate: 156 TFLOP/s (datasheet)
    assert ("note: PyTorch runs fp32 convs on TF32 by default on this GPU: --dtype tf32 for "
            "its ceiling (tf32 tensor 156 TFLOP/s)") in out
    for other in (["--on", "EPYC 9654"], [], ["--on", "A100", "--dtype", "fp16"]):
        assert main([*args, *other]) == 0
        assert "TF32" not in capsys.readouterr().out


# --- 17a N12: whatif --hardware onto a datasheet CPU: one factor for one loop ----------------

def test_whatif_hardware_takes_dram_efficiency_in_real_traffic_units():
    from rooflab.model.efficiency_basis import efficiency_basis
    from rooflab.model.whatif import move_hardware

    # 17a's jacobi7_256: 2.622e9 FLOP, 7.866e9 DRAM bytes in 755 ms, once as a hand count
    # (judged against the STREAM-counted 19.65 GB/s) and once as perf's counter bytes
    # (against the real-traffic 26.2 GB/s); EPYC 9654's datasheet DRAM 12 x 4800 MT/s x 8 B
    epyc = Roof("EPYC 9654", compute=(Ceiling(5.5e12, precision="fp64", unit="vector"),),
                memory=(Ceiling(460.8e9, level="DRAM", provenance="derived"),))
    hand = Kernel("jacobi", {"fp64": 2.622e9}, {"DRAM": 7.866e9}, seconds=0.755)
    perf = Kernel("jacobi perf", {"fp64": 2.622e9}, {"DRAM": 7.866e9}, seconds=0.755,
                  provenance={"flop": "counted", "bytes": "measured", "seconds": "measured"})
    w = move_hardware(CPU_MEASURED, [hand, perf], epyc)
    # 460.8 / 26.2 = 17.59x for both (before: 23.45x = 460.8 / 19.65 for the hand count)
    assert [round(old.seconds / new.seconds, 2) for old, new in w.moves] == [17.59, 17.59]
    # the before state stays the roof's own: the hand count is judged against 19.65 GB/s
    (p,) = [q for q in w.before.points if q.kernel == "jacobi"]
    assert p.bytes_per_s == 19.65e9
    _, _, line = efficiency_basis((CPU_MEASURED,), (epyc,), [hand])
    assert ("DRAM efficiencies taken against EPYC measured's DRAM (real traffic) 26.2 GB/s, "
            "not its STREAM-counted DRAM 19.6 GB/s") in line
    assert "would be 1.33x high" in line
    # a target with its own measured roof compares like with like: unchanged
    w = move_hardware(CPU_MEASURED, [hand], CPU_MEASURED)
    assert round(w.moves[0][0].seconds / w.moves[0][1].seconds, 6) == 1.0


# --- 17a N11: the re-time instruction takes no advice slot -----------------------------------

def test_terminal_prints_retime_apart_and_three_levers():
    from rich.console import Console

    from rooflab.model.diagnose import diagnose
    from rooflab.report.markdown import machine_for
    from rooflab.report.terminal import diagnosis_text

    # 17a's jacobi7_256 (20 sweeps of a 256^3 7-point fp64 stencil, 24 B/pt) with samples
    # spread 12.5 % (IQR / median): noisy, so the advice starts with "re-time"
    k = Kernel("jacobi7_256", {"fp64": 2.62193e9}, {"DRAM": 7.865791e9}, seconds=0.754704,
               calls=20, samples=(0.030, 0.035, 0.038, 0.040, 0.045, 0.050))
    a = analyze(CPU_MEASURED, [k])
    (d,) = diagnose(a, machine_for(a, CPU_PROFILE))
    assert d.advice[0].action.startswith("re-time")
    console = Console(width=400, record=True, color_system=None)
    console.print(diagnosis_text(d))
    text = console.export_text()
    assert "   ! re-time on a quiet machine (the advice below is uncertain): its timing" in text
    assert "1.00x predicted" not in text
    # the three levers: block 4 sweeps 4.00x, full-width SIMD 1.51x, NT stores 1.50x
    # (7.866e9 -> 7.866e9 x 2/3 B: 1.50x), which the re-time line used to crowd out
    assert text.count("   -> ") == 3
    assert "-> use non-temporal (streaming) stores for the output grid: 1.50x predicted" in text


def test_terminal_names_levers_past_the_third():
    from rooflab.report.terminal import more_advice_line

    class A:   # the two fields more_advice_line reads
        def __init__(self, action, speedup):
            self.action, self.speedup = action, speedup

    rest = [A("use non-temporal (streaming) stores for the output grid", 1.5)]
    assert more_advice_line(rest) == ("   also: use non-temporal (streaming) stores for "
                                      "the output grid 1.50x (every advice in full: "
                                      "-o report.md or --json)")


# --- 17a N13d: too_short only where each call was timed alone --------------------------------

def _too_short(k: Kernel):
    from rooflab.model.sanity import check_timing

    return [f for f in check_timing(k) if f.check == "too_short"]


def test_aggregate_c_timing_is_not_too_short():
    # 17a's k3.json: an L1 daxpy, 1e6 calls in one 0.3 s timer interval: 300 ns per call,
    # but the timer read 0.3 s
    assert _too_short(Kernel("daxpy_L1_1000", {"fp64": 2e9}, {"L1": 2.4e10}, seconds=0.3,
                             calls=1_000_000)) == []
    # rooflab's timer: 300 ns calls, 40 000 per sample (12 ms per reading)
    k = Kernel("m", {"fp64": 2e3}, {"L1": 2.4e4}, seconds=3e-7,
               samples=(3e-7,) * 5, meta={"calls_per_sample": 40_000})
    assert _too_short(k) == []


def test_calls_timed_alone_are_too_short():
    # per-call samples (a profiler's launches): 1000 calls of 3 us, each its own reading
    k = Kernel("t", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=3e-3, calls=1000,
               samples=(3e-6,) * 1000)
    (f,) = _too_short(k)
    assert "3 us per call is shorter than 10 us" in f.message
    # a single run of 4 us; a sample of one call
    assert _too_short(Kernel("t", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=4e-6))
    k = Kernel("m", {"fp64": 2e3}, {"L1": 2.4e4}, seconds=3e-7,
               samples=(3e-7,) * 5, meta={"calls_per_sample": 1})
    assert _too_short(k)
