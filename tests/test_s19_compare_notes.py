"""Review s19 r5 F3, F5-F12: what `rooflab compare` says beside its speed-ups.

F3: a what-if document as the second run: t4.json (decode b=1: 2.2 GFLOP fp16, 2.2 GB,
15 ms; matmul 4096: 137.4 GFLOP, 100.7 MB, 2.75 ms) moved to an H100 reads decode 1.44 ms
(gap scaled with the work) - 8.78 ms (gap held), 15 / 8.78 = 1.71x - 15 / 1.437 = 10.44x;
compare showed 10.44x alone, as measured, and gated on it.
F5: 10 calls of a 256x256 mm (6.54 ms, 336 MFLOP) vs 20 (6.23 ms, 671 MFLOP): per call 654 ->
311 us (2.10x) on the same work per call, where the work note said "FLOP x2.00 ... mostly a
faster kernel ... the speed-up is not the kernel's alone" beside it.
F7: b: gate_up 200 us, add 40 us, gone 10 us; a: gate_up 150 us, add 50 us, new 30 us:
matched 240 -> 200 us (1.20x), whole runs 250 -> 230 us (1.09x).
F8, F9, F10, F11, F12 as their tests say; F6: two report documents on their own roofs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.model.compare import Match, compare_kernels
from rooflab.model.kernel import Kernel


def _write(tmp_path: Path, name: str, kernels: list[dict]) -> str:
    p = tmp_path / name
    p.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    return str(p)


T4 = [{"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
       "seconds": 15e-3},
      {"name": "matmul 4096", "flop": {"fp16": 1.374e11}, "bytes": {"DRAM": 1.007e8},
       "seconds": 2.75e-3}]


@pytest.fixture
def whatif_h100(tmp_path, capsys) -> tuple[str, str]:
    t4 = _write(tmp_path, "t4.json", T4)
    w = str(tmp_path / "w2.json")
    assert main(["whatif", t4, "--on", "T4", "--hardware", "H100", "-o", w]) == 0
    capsys.readouterr()
    return t4, w


def test_a_whatif_after_side_shows_its_range_and_says_it_is_predicted(whatif_h100, capsys,
                                                                      monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    t4, w = whatif_h100
    assert main(["compare", t4, w, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    m = {r["kernel"]: r for r in d["matches"]}["decode b=1"]
    assert m["before_s_provenance"] == "measured" and m["after_s_provenance"] == "derived"
    low, high = m["after_s_range"]
    assert low == pytest.approx(m["after_s"]) and 15e-3 / high == pytest.approx(1.708, rel=1e-3)
    assert m["speedup_range"] == pytest.approx([15e-3 / high, 15e-3 / low])
    assert d["total_after_s_range"][1] == pytest.approx(17.75e-3 / 1.9795, rel=1e-3)
    assert any("what-if prediction (provenance derived)" in n for n in d["notes"])
    assert main(["compare", t4, w]) == 0
    out = capsys.readouterr().out
    # two decimals under 10, 3 figures from 10 (units.fmt_times): 10.44 is '10.4x'
    assert "1.44 ms-8.78 ms" in out and "1.71x-10.4x" in out
    assert "matched total: 17.7 ms -> 1.62 ms-8.97 ms (1.98x-10.9x)" in out


def test_the_gate_refuses_predicted_times(tmp_path, capsys):
    t4 = _write(tmp_path, "t4.json", T4)
    w = str(tmp_path / "w3.json")
    assert main(["whatif", t4, "--on", "H100", "--hardware", "T4", "-o", w]) == 0
    capsys.readouterr()
    assert main(["compare", t4, w, "--fail-if-slower", "5"]) == 2      # was 1, a "regression"
    err = capsys.readouterr().err
    assert "what-if prediction (provenance derived" in err and "Traceback" not in err


def test_calls_that_differ_get_one_note_per_call_and_totals():
    before = Kernel("mm", flop={"fp32": 335.5e6}, bytes={"DRAM": 7.86e6}, seconds=6.54e-3,
                    calls=10)
    after = Kernel("mm", flop={"fp32": 671e6}, bytes={"DRAM": 15.72e6}, seconds=6.23e-3,
                   calls=20)
    c = compare_kernels([before], [after])
    (note,) = [n for n in c.notes if n.startswith("mm:")]
    assert note.startswith("mm: 10 call(s) before, 20 after: per call 654 us -> 312 us "
                           "(2.10x), FLOP x1.00, DRAM bytes x1.00 per call: the same work "
                           "per call; totals over 10 and 20 call(s) 6.54 ms -> 6.23 ms "
                           "(1.05x), FLOP x2.00")
    assert not any("the speed-up is not the kernel's alone" in n for n in c.notes)  # was


def test_a_reduction_of_half_the_work_per_call_says_so():
    """GPP's __red kernel: 102 us -> 2 x 100 us, 524 kFLOP on both sides: half per call."""
    before = Kernel("red", flop={"fp64": 524e3}, bytes={"DRAM": 4.2e6}, seconds=102e-6)
    after = Kernel("red", flop={"fp64": 524e3}, bytes={"DRAM": 4.2e6}, seconds=200e-6,
                   calls=2)
    (note,) = compare_kernels([before], [after]).notes
    assert ("per call 102 us -> 100 us (1.02x), FLOP x0.50, DRAM bytes x0.50 per call: about "
            "the same time per call for other work; totals over 1 and 2 call(s) 102 us -> "
            "200 us (0.51x), FLOP x1.00") in note


def test_kernels_in_one_run_show_their_times_and_the_whole_runs(tmp_path, capsys,
                                                              monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    b = _write(tmp_path, "b.json", [
        {"name": "gate_up", "flop": {"fp16": 2e8}, "bytes": {"DRAM": 2e8}, "seconds": 200e-6},
        {"name": "add", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 6e6}, "seconds": 40e-6},
        {"name": "gone", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 6e6}, "seconds": 10e-6}])
    a = _write(tmp_path, "a.json", [
        {"name": "gate_up", "flop": {"fp16": 2e8}, "bytes": {"DRAM": 2e8}, "seconds": 150e-6},
        {"name": "add", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 6e6}, "seconds": 50e-6},
        {"name": "new", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 6e6}, "seconds": 30e-6}])
    assert main(["compare", b, a]) == 0
    out = capsys.readouterr().out
    assert "matched total: 240 us -> 200 us (1.20x)" in out
    assert "whole runs (every timed kernel, matched or not): 250 us -> 230 us (1.09x)" in out
    assert "only in the second run: new (30 us, not in the matched total)" in out
    assert main(["compare", b, a, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["only_after_s"] == {"new": pytest.approx(30e-6)}
    assert d["run_before_s"] == pytest.approx(250e-6)
    assert d["run_after_s"] == pytest.approx(230e-6)


def test_a_total_made_of_noise_says_so_and_the_chart_label_too():
    noisy_b = tuple(x * 1e-3 for x in (271, 150, 300, 90, 280, 100, 260, 95, 310))
    noisy_a = tuple(x * 1e-3 for x in (92.9, 290, 95, 270, 100, 285, 88, 300, 97))
    big = (Kernel("gemm_2048", flop=17.2e9, seconds=0.271, samples=noisy_b),
           Kernel("gemm_2048", flop=17.2e9, seconds=0.0929, samples=noisy_a))
    quiet = tuple(1e-3 * (1 + 0.001 * i) for i in range(9))
    small = (Kernel("triad", flop=1e6, seconds=1e-3, samples=quiet),
             Kernel("triad", flop=1e6, seconds=1.1e-3, samples=tuple(x * 1.1 for x in quiet)))
    c = compare_kernels([big[0], small[0]], [big[1], small[1]])
    g = c.matches[0]
    assert g.within_noise is True and g.speedup == pytest.approx(0.271 / 0.0929)
    assert any(n.startswith("the matched total moved 178 ms, and 178 ms of change is in "
                            "matches within the noise") for n in c.notes)
    from rooflab.cli.compare import _labelled

    assert _labelled(g)[1].name == "gemm_2048 (after, 2.92x, cannot tell)"


def test_two_machine_profiles_point_to_specs_compare(tmp_path, capsys):
    p1, p2 = str(tmp_path / "p1.json"), str(tmp_path / "p2.json")
    assert main(["specs", "import", "--from", "T4", "--dram", "270GB/s", "--fp16",
                 "50TFLOP/s@tensor", "-o", p1]) == 0
    assert main(["specs", "import", "--from", "T4", "--dram", "250GB/s", "--fp16",
                 "40TFLOP/s@tensor", "-o", p2]) == 0
    capsys.readouterr()
    assert main(["compare", p1, p2]) == 2
    err = capsys.readouterr().err
    assert f"`rooflab specs compare {p1} {p2}`" in err and f"--on {p1}" in err


def test_help_says_an_unmapped_pair_under_the_gate_is_an_error(capsys):
    assert main(["compare", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "under --fail-if-slower it is an error (exit 2) unless --map pairs it" in text
    assert "gated only when --map pairs it" not in text


def test_a_precision_change_is_noted_and_in_the_json(tmp_path, capsys):
    pb = _write(tmp_path, "pb.json", [{"name": "gemm", "flop": {"fp32": 2e12},
                                       "bytes": {"DRAM": 4e9}, "seconds": 0.2}])
    pa = _write(tmp_path, "pa.json", [{"name": "gemm", "flop": {"fp16": 2e12},
                                       "bytes": {"DRAM": 2e9}, "seconds": 0.05}])
    assert main(["compare", pb, pa, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    (m,) = d["matches"]
    assert (m["precision_before"], m["precision_after"]) == ("fp32", "fp16")
    assert m["speedup"] == pytest.approx(4.0)
    assert any(n.startswith("gemm: precision fp32 -> fp16") for n in d["notes"])


def test_two_report_documents_are_drawn_each_on_its_own_roof(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    h100 = [{**T4[0], "seconds": 2e-3}, {**T4[1], "seconds": 250e-6}]
    docs = []
    for name, kernels, on in (("rt4", T4, "T4"), ("rh2", h100, "H100 SXM")):
        src = _write(tmp_path, f"{name}_k.json", kernels)
        assert main(["report", src, "--on", on, "--json"]) == 0
        doc = tmp_path / f"{name}.json"
        doc.write_text(capsys.readouterr().out)
        docs.append(str(doc))
    png = str(tmp_path / "two.png")
    calls = []
    import rooflab.report.chart as chart

    real = chart.plot_roofline
    monkey = pytest.MonkeyPatch()
    monkey.setattr(chart, "plot_roofline",
                   lambda roofs, *a, **kw: calls.append((roofs, kw)) or real(roofs, *a, **kw))
    try:
        assert main(["compare", *docs, "-o", png]) == 0
    finally:
        monkey.undo()
    err = capsys.readouterr().err
    # decode after: 2.2 GB / 2 ms = 1.1 TB/s, 344 % of T4's 320 GB/s, 33 % of H100's 3.35 TB/s
    assert "above the roof" not in err                   # was a warning blaming the probe
    (roofs, kw), = calls
    assert [r.name for r in roofs] == ["NVIDIA H100 SXM", "NVIDIA T4"]
    assert kw["before_roof"].name == "NVIDIA T4"
    assert kw["title"].startswith("before on NVIDIA T4")


def test_one_precision_on_two_ceilings_names_its_kernels():
    from rooflab.model import Ceiling, Roof
    from rooflab.report.chart import plot_roofline
    from rooflab.report.chart_precisions import precision_ceilings

    h200 = Roof("H200", "nominal", compute=(Ceiling(34e12, "fp64", "vector"),
                                            Ceiling(67e12, "fp64", "tensor"),
                                            Ceiling(67e12, "fp32", "vector")),
                memory=(Ceiling(4.8e12, level="DRAM"),))
    ks = [Kernel("triad_fp64", {"fp64": 16.8e6}, {"DRAM": 201e6}, seconds=0.0107,
                 unit="vector"),
          Kernel("gemm_fp64_1024 (after, 0.76x)", {"fp64": 2.15e9}, {"DRAM": 25e6},
                 seconds=0.08, unit="tensor", meta={"compare_name": "gemm_fp64_1024"}),
          Kernel("triad_fp32", {"fp32": 33.6e6}, {"DRAM": 201e6}, seconds=0.0106)]
    assert precision_ceilings(plot_roofline([h200], ks)) == [
        "vector fp64 kernels (triad_fp64): judged on fp64 vector 34 TFLOP/s",
        "tensor fp64 kernels (gemm_fp64_1024): judged on fp64 tensor 67 TFLOP/s",
        "fp32 kernels: judged on fp32 vector 67 TFLOP/s"]


def test_match_has_no_range_for_measured_runs():
    m = Match("k", Kernel("k", flop=1e6, seconds=1e-3), Kernel("k", flop=1e6, seconds=2e-3))
    assert m.speedup_range is None and not m.predicted
