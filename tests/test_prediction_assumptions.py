"""Review 15v F-a, F-b, F-c, F-d, F-o: predictions that say what they assumed, one share
rule for a run of steps, and plot's summary counting what it drew."""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze, share_totals
from rooflab.model.kernel import Kernel
from rooflab.model.parallel import Link, allreduce_latency_words, dp_step
from rooflab.model.whatif import quantize_weights
from rooflab.report.chart import plot_roofline
from rooflab.workloads.ops import matmul

H100 = load_roof("H100")


# --- F-a: scale's latency is paid once per layer ------------------------------------------
def test_latency_words_say_the_all_reduces_a_step_holds():
    link = Link("NVLink", 100e9, 10e-6, "given")
    # 8 ranks: 2 x 7 = 14 hops x 10 us = 140 us per all-reduce; 16 of them = 2.24 ms
    assert allreduce_latency_words(link, 8) == "all-reduce latency 140 us = 14 hops x 10 us"
    assert allreduce_latency_words(link, 8, 16) == (
        "all-reduce latency 140 us = 14 hops x 10 us, x 16 all-reduces per step (one per "
        "linear layer) = 2.24 ms")


def test_scale_assumption_says_one_all_reduce_per_layer(capsys):
    # review 15v F-a repro: 4 blocks x 4 linear layers = 16 all-reduces per step
    assert main(["scale", "--on", "H100 SXM", "--hidden", "1024", "--blocks", "4",
                 "--tokens", "512", "--link-bw", "100GB/s", "--hop-latency-us", "10",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ring = doc["assumptions"][0]
    assert "one all-reduce per linear layer: 16 per step" in ring
    # at 1024 GPUs: 2 x 1023 = 2046 hops x 10 us = 20.46 ms, x 16 = 327.4 ms
    assert "2046 hops x 10 us, x 16 all-reduces per step (one per linear layer) = 327.4 ms" in ring


def test_dp_step_comm_is_bytes_plus_16_latencies():
    from rooflab.model.parallel import dp_block_layers

    layers = dp_block_layers(1024, 4, 512, "bf16")
    assert len(layers) == 16
    link = Link("NVLink", 100e9, 10e-6, "given")
    step = dp_step(layers, H100, link, 8)
    grads = 12 * 1024**2 * 4 * 2               # 100.7 MB of bf16 gradients
    hand = 2 * 7 / 8 * grads / 100e9 + 16 * 140e-6
    assert step.comm_s == pytest.approx(hand, rel=1e-9)      # 4.0 ms, not 1.9 ms
    assert step.comm_s == pytest.approx(4.001e-3, rel=1e-3)
    assert "16 per step" in step.assumptions[0]


# --- F-c: whatif --quantize says the share it used --------------------------------------
def test_quantize_assumption_gives_the_shape_share_it_used():
    k = matmul(256, 256, 256, dtype="fp16").kernel()
    w = quantize_weights(H100, [k], "int4")
    # bytes 3 x 256^2 x 2 = 393 216; weights (B, k x n) 131 072 = 1/3 of them
    assert w.moves[0][1].bytes["DRAM"] == pytest.approx(2 * 131_072 + 32_768)
    assert "weights 33.3 % of the bytes (its shape" in w.assumption
    # the old text claimed 1 for matmul kinds
    assert "1 for matmul" not in w.assumption


def test_quantize_names_each_kernels_share_when_they_differ():
    gemm = matmul(256, 256, 256, dtype="fp16").kernel()
    add = Kernel(name="residual_add", flop={"fp16": 1e6}, bytes={"DRAM": 6e6},
                 meta={"op": "add"})
    w = quantize_weights(H100, [gemm, add], "int4")
    assert f"{gemm.name}: weights 33.3 % of the bytes (its shape" in w.assumption
    assert "residual_add: weights 0 % of the bytes (its kind, add" in w.assumption
    given = quantize_weights(H100, [gemm], "int4", share=0.5)
    assert "weights 50.0 % of the bytes (given)" in given.assumption


# --- F-d: the advice says when it lands on the launch floor ------------------------------
def test_int4_advice_says_it_is_launch_bound_and_gives_the_work_floor_ratio():
    k = matmul(16, 4096, 4096, dtype="fp16").kernel()
    (p,) = analyze(H100, [k]).points
    a = next(x for x in advise(p, H100, k) if "int4" in x.action)
    # bytes 131 072 + 33 554 432 + 131 072 = 33.82 MB at 3.35 TB/s = 10.1 us; int4:
    # 2 x 131 072 + 33 554 432 / 4 = 8.65 MB = 2.58 us: 3.91x on the work floor, but the
    # 5 us launch floor holds it: 10.1 / 5 = 2.02x
    old = 131_072 * 2 + 33_554_432
    new = 131_072 * 2 + 33_554_432 / 4
    assert a.speedup == pytest.approx(old / 3.35e12 / 5e-6, rel=1e-3)
    assert f"{old / new:.3g}" == "3.91"
    assert ("the kernel is launch-bound after it, at the 5 us launch floor; the work floor "
            "shrinks 3.91x") in a.assumption


def test_fp8_advice_above_the_floor_says_nothing_of_it():
    k = matmul(16, 4096, 4096, dtype="fp16").kernel()
    (p,) = analyze(H100, [k]).points
    a = next(x for x in advise(p, H100, k) if "fp8" in x.action)
    # half the bytes: 5.05 us, just above the 5 us floor
    assert a.speedup == pytest.approx(2.0, rel=1e-2)
    assert "launch floor" not in a.assumption


# --- F-b: one share rule for a run of steps -----------------------------------------------
def _steps():
    return [Kernel(name="gpp [output]", flop={"fp64": 3.4e11}, bytes={"DRAM": 2.3e10},
                   seconds=22.77, meta={"step": "output", "step_index": 0}),
            Kernel(name="gpp [output1]", flop={"fp64": 2.6e12}, bytes={"DRAM": 5.2e11},
                   seconds=30.49, meta={"step": "output1", "step_index": 1})]


def test_shares_of_steps_are_per_file_in_the_analysis_and_the_chart():
    ks = _steps()
    assert share_totals(ks) == (22.77, 30.49)
    a = analyze(H100, ks)
    assert [p.time_share for p in a.points] == [1.0, 1.0]      # was 0.4275 / 0.5725
    assert any("share is of each kernel's own file" in n for n in a.notes)
    d = plot_roofline(H100, ks)
    assert [p.share for p in d.points] == [1.0, 1.0]
    # 100 % per file everywhere: sizes would say nothing, so all are drawn alike (8 pt),
    # not 13.1 / 15.1 pt of a summed share (20 x sqrt(0.4275), 20 x sqrt(0.5725))
    assert [p.size for p in d.points] == [8.0, 8.0] and not d.sized


def test_a_step_of_two_kernels_sizes_them_by_their_own_files_time():
    a, b = _steps()
    side = Kernel(name="fft [output1]", flop={"fp64": 1e10}, bytes={"DRAM": 1e10},
                  seconds=10.165, meta={"step": "output1", "step_index": 1})
    d = plot_roofline(H100, [a, b, side])
    # output1: 30.49 + 10.165 = 40.655 s; gpp 75 %, fft 25 %: 20 x sqrt(.75) = 17.3 pt,
    # 20 x sqrt(.25) = 10 pt; output's lone kernel 100 %: 20 pt
    assert [round(p.share, 4) for p in d.points] == [1.0, 0.75, 0.25]
    assert [round(p.size, 2) for p in d.points] == [20.0, 17.32, 10.0]


def test_one_run_keeps_the_summed_share():
    ks = [Kernel(name=k.name, flop=k.flop, bytes=k.bytes, seconds=k.seconds) for k in _steps()]
    assert share_totals(ks) == pytest.approx((53.26, 53.26))
    a = analyze(H100, ks)
    assert [round(p.time_share, 4) for p in a.points] == [0.4275, 0.5725]


def test_saved_ncu_steps_read_alike_by_ncu_report_and_plot(tmp_path, capsys):
    gpp = "/work/shared/fixtures/ncu/nersc-gpp"
    out = tmp_path / "steps.json"
    assert main(["ncu", f"{gpp}/output.csv", f"{gpp}/output1.csv", "-o", str(out)]) == 0
    capsys.readouterr()
    saved = json.loads(out.read_text())
    assert {round(p["time_share"], 6) for p in saved["analysis"]} == {1.0}
    assert main(["report", str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    shares = {round(p["time_share"], 6) for p in rep["analysis"]}
    assert shares == {1.0}
    assert main(["plot", str(out), "--json"]) == 0
    drawn = json.loads(capsys.readouterr().out)["drawn"]["points"]
    assert {p["share"] for p in drawn} == {1.0} and {p["size"] for p in drawn} == {8.0}


# --- F-o: plot counts what it drew; one severity for "no L3 point" ------------------------
def test_plot_summary_counts_drawn_kernels_after_min_share(tmp_path, capsys):
    ks = {"kernels": [
        {"name": "big", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 0.99},
        {"name": "tiny", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 1e5}, "seconds": 0.001}]}
    f = tmp_path / "k.json"
    f.write_text(json.dumps(ks))
    png = tmp_path / "a.png"
    assert main(["plot", str(f), "--on", "H100", "-o", str(png), "--min-share", "1"]) == 0
    out = capsys.readouterr().err   # `wrote` on stderr, as every verb (s22 r3 F7)
    # tiny: 0.001 / 0.991 = 0.1 % < 1 %
    assert (f"wrote {png}: 1 roof(s), 1 of 2 kernels (1 under --min-share 1 %), 1 point(s)"
            in out)


def test_plot_no_level_point_is_a_note_as_in_the_profiler_verbs(tmp_path, capsys):
    f = tmp_path / "k.json"
    f.write_text(json.dumps({"kernels": [{"name": "stream", "flop": {"fp64": 1e9},
                                          "bytes": {"DRAM": 8e9, "L3": 1e10},
                                          "seconds": 0.01}]}))
    assert main(["plot", str(f), "--on", "H100", "-o", str(tmp_path / "b.png")]) == 0
    err = capsys.readouterr().err
    assert "note: stream: roof 'NVIDIA H100 SXM' has no L3 ceiling, so no L3 point" in err
    assert "warning: stream: roof" not in err


def test_scale_latency_line_counts_the_step(capsys, monkeypatch):
    # 4 blocks x 4 linear layers = 16 all-reduces per step, each 14 hops x 10 us at 8 GPUs:
    # 16 x 140 us = 2.24 ms (the line said only "140 us = 14 hops x 10 us")
    from rooflab.cli.main import main

    monkeypatch.setenv("COLUMNS", "400")
    assert main(["scale", "--on", "H100 SXM", "--hidden", "1024", "--blocks", "4",
                 "--tokens", "512", "--link-bw", "100GB/s", "--hop-latency-us", "10"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines()
                if x.startswith("link latency per hop"))
    assert "at 8 GPUs all-reduce latency 140 us = 14 hops x 10 us, x 16 all-reduces per " \
           "step (one per linear layer) = 2.24 ms" in line
