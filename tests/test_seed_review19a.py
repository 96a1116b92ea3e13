"""Review 19a's re-check findings on the seed paths (N1, N2, N13, N14, N9, N4, N3, N11, N6).

Every input is built here from the seeds' own numbers: seed 004's T4 (nominal 65 TFLOP/s
fp16 tensor / 320 GB/s, measured 50 TFLOP/s / 270 GB/s, launch floor 5 us) with its 15 ms
decode step of 2.2 GFLOP / 2.2 GB, and seed 000 §3.3's 280 TFLOP/s / 1.8 TB/s roof.
"""

from __future__ import annotations

import json

import pytest
from seed004_files import points_file, t4_profile

from rooflab.cli.main import main
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.model.opkind import is_whole_step
from rooflab.model.whatif import describe, quantize_weights

T4_MEASURED = Roof("T4", kind="measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor"),),
                   memory=(Ceiling(270e9, level="DRAM"),), overhead_s=5e-6)

# Hand numbers (review 19a N1): floor 2.2e9 / 270e9 = 8.148 ms; int4 floor 2.037 ms.
FLOOR = 2.2e9 / 270e9
# calls 311: launches 311 x 5 us = 1.555 ms, work 15 - 1.555 = 13.445 ms at 8.148 / 13.445
# = 60.6 % of the roof. Scaled: 1.555 + 2.037 / 0.606 = 4.92 ms (3.05x); held: 1.555 +
# 2.037 + (13.445 - 8.148) = 8.889 ms (1.6875x), the same slow end as with one launch.
LAUNCH_311 = 311 * 5e-6
SCALED_311 = LAUNCH_311 + (FLOOR / 4) / (FLOOR / (0.015 - LAUNCH_311))
HELD_311 = LAUNCH_311 + FLOOR / 4 + (0.015 - LAUNCH_311 - FLOOR)


def _step(name: str = "decode b=1", **kw) -> Kernel:
    return Kernel(name, {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015, **kw)


def _profile(tmp_path, dram_measured: float = 270e9) -> str:
    return t4_profile(tmp_path, dram_measured=dram_measured)


def _points(tmp_path, kernels, name="pts.json") -> str:
    return points_file(tmp_path, kernels, name)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), " ".join(err.split())


# --- N1 + N13 + N2: the whole-step range ---

def test_hand_numbers_of_the_calls_route():
    assert LAUNCH_311 == pytest.approx(1.555e-3)
    assert SCALED_311 == pytest.approx(4.92e-3, rel=2e-3)
    assert HELD_311 == pytest.approx(8.889e-3, rel=1e-3)


def test_calls_311_keeps_the_range_in_whatif():
    w = quantize_weights(T4_MEASURED, [_step(calls=311)], "int4")
    (_, new), = w.moves
    assert new.seconds == pytest.approx(SCALED_311)                 # 4.92 ms, 3.05x
    assert new.meta["seconds_gap_held"] == pytest.approx(HELD_311)  # 8.89 ms, 1.69x
    (row,) = describe(w)["moves"]
    assert row["after_s_range"] == pytest.approx([SCALED_311, HELD_311])
    assert row["speedup_gap_held"] == pytest.approx(0.015 / HELD_311)


def test_calls_311_keeps_the_range_in_the_advice():
    k = _step(calls=311)
    p = analyze(T4_MEASURED, [k]).points[0]
    int4 = next(a for a in advise(p, T4_MEASURED, k) if "int4" in a.action)
    assert int4.speedup == pytest.approx(0.015 / HELD_311)          # 1.69x, not 3.05x
    assert int4.seconds_range == pytest.approx((SCALED_311, HELD_311))
    assert "1.69x-3.05x" in int4.assumption and "311 launches" in int4.assumption


@pytest.mark.parametrize("name", ["TPOT b=1", "generate token", "llama_decode",
                                  "prefill 512"])
def test_whole_step_names(name):
    assert is_whole_step(_step(name))


@pytest.mark.parametrize("name", ["flash_decode_attention", "matmul 4096", "x + 1"])
def test_kernels_are_no_whole_step(name):
    assert not is_whole_step(_step(name))


def test_meta_says_whole_step():
    assert is_whole_step(_step("my point", meta={"whole_step": True}))
    assert not is_whole_step(_step("decode b=1", meta={"whole_step": False}))


def test_tpot_named_step_is_not_all_kernel_efficiency(tmp_path, capsys):
    pts = _points(tmp_path, [{"name": "TPOT b=1", "flop": {"fp16": 2.2e9},
                              "bytes": {"DRAM": 2.2e9}, "seconds": 0.015}])
    code, out, _ = run(capsys, "report", pts, "--on", _profile(tmp_path))
    assert code == 0
    assert "all kernel efficiency" not in out and "One launch assumed" in out


def test_long_unnamed_point_does_not_say_all_kernel_efficiency(tmp_path, capsys):
    pts = _points(tmp_path, [{"name": "blob", "flop": {"fp16": 2.2e9},
                              "bytes": {"DRAM": 2.2e9}, "seconds": 0.015}])
    code, out, _ = run(capsys, "report", pts, "--on", _profile(tmp_path))
    assert code == 0
    assert "all kernel efficiency" not in out and "if it is a whole step" in out


def test_whatif_json_carries_both_ends_and_whole_step(tmp_path, capsys):
    pts = _points(tmp_path, [{"name": "decode b=1", "flop": {"fp16": 2.2e9},
                              "bytes": {"DRAM": 2.2e9}, "seconds": 0.015}])
    assert main(["whatif", pts, "--on", _profile(tmp_path), "--quantize", "int4",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["moves"]
    held = 5e-6 + FLOOR / 4 + (0.015 - 5e-6 - FLOOR)               # 8.889 ms
    scaled = 5e-6 + (0.015 - 5e-6) / 4                               # 3.754 ms
    assert row["whole_step"] is True
    assert row["after_s_range"] == pytest.approx([scaled, held])
    assert doc["total_after_s_range"] == pytest.approx([scaled, held])
    assert doc["speedup_gap_held"] == pytest.approx(1.6875)


def test_report_advice_json_carries_both_ends(tmp_path, capsys):
    pts = _points(tmp_path, [{"name": "decode b=1", "flop": {"fp16": 2.2e9},
                              "bytes": {"DRAM": 2.2e9}, "seconds": 0.015}])
    assert main(["report", pts, "--on", _profile(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (d,) = doc["diagnosis"]
    int4 = next(a for a in d["advice"] if "int4" in a["action"])
    assert int4["speedup_range"] == pytest.approx([1.6875, 0.015 / (5e-6 + 14.995e-3 / 4)])
    assert int4["new_seconds_gap_held"] == pytest.approx(8.889e-3, rel=1e-3)


def test_llm_step_route_prints_the_range(tmp_path, capsys):
    # llm --tpot-ms 15 on the nominal T4: floor 2.087 GB / 320 GB/s = 6.51 ms, int4 1.66 ms;
    # held: 1.555 + 1.66 + (15 - 1.555 - 6.51) = 10.1-10.2 ms (1.48x); scaled 4.99 ms
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase",
                 "decode", "--tpot-ms", "15", "--json"]) == 0
    path = tmp_path / "d15.json"
    path.write_text(capsys.readouterr().out)
    code, out, _ = run(capsys, "whatif", str(path), "--on", "T4", "--quantize", "int4")
    assert code == 0
    line = out[out.index("decode step b=1 (measured): 15 ms ->"):]
    assert line.split(" predicted")[0].endswith("4.99 ms-10.2 ms")
    assert "(1.48x-3.01x" in line


# --- N14 + N9: specs import --from fits typed numbers to the datasheet ---

def test_fp16_without_unit_beside_t4_is_refused_with_the_tensor_hint(tmp_path, capsys):
    # T4 datasheet: fp16 vector 16.2, tensor 65 TFLOP/s; 50 / 16.2 = 309 %, 50 / 65 = 77 %
    out = tmp_path / "t4v.json"
    code, _, err = run(capsys, "specs", "import", "--from", "T4", "--dram", "270GB/s",
                       "--fp16", "50TFLOP/s", "-o", str(out))
    assert code != 0 and not out.exists()
    assert "309 %" in err and "77 % of its fp16 tensor 65 TFLOP/s" in err
    assert "--fp16 50TFLOP/s@tensor" in err and "Traceback" not in err


def test_bandwidth_above_the_datasheet_is_refused(tmp_path, capsys):
    code, _, err = run(capsys, "specs", "import", "--from", "T4", "--dram", "400GB/s",
                       "--fp16", "50TFLOP/s@tensor", "-o", str(tmp_path / "x.json"))
    assert code != 0 and "125 % of NVIDIA T4's datasheet DRAM 320 GB/s" in err   # 400/320


def test_a_single_unit_precision_takes_the_datasheet_unit(tmp_path, capsys):
    # the T4 lists int8 on tensor cores only (130 TOP/s): 100 TOP/s is its tensor figure
    out = tmp_path / "t4i.json"
    assert main(["specs", "import", "--from", "T4", "--dram", "270GB/s", "--int8",
                 "100TOP/s", "-o", str(out)]) == 0
    (c,) = json.loads(out.read_text())["measured"]["compute"]
    assert (c["precision"], c["unit"]) == ("int8", "tensor")


def test_from_does_not_store_the_launch_floor_as_measured(tmp_path, capsys):
    prof = tmp_path / "t4imp.json"
    assert main(["specs", "import", "--from", "T4", "--dram", "270GB/s", "--fp16",
                 "50TFLOP/s@tensor", "-o", str(prof)]) == 0
    measured = json.loads(prof.read_text())["measured"]
    assert "not measured" in measured["overhead_source"]
    pts = _points(tmp_path, [{"name": "matmul 4096", "flop": {"fp16": 137438953472},
                              "bytes": {"DRAM": 100663296}, "seconds": 0.00274877906944}])
    capsys.readouterr()
    code, out, _ = run(capsys, "report", pts, "--on", str(prof))
    assert code == 0
    assert "│ overhead floor │ 5 us │ 5 us (datasheet, not measured) │ - │" in out


# --- N6: a DRAM bandwidth at 62 % of nominal gets the quiet note and the (low) mark ---

def test_dram_at_62_percent_is_noted(tmp_path, capsys):
    pts = _points(tmp_path, [{"name": "matmul 4096", "flop": {"fp16": 137438953472},
                              "bytes": {"DRAM": 100663296}, "seconds": 0.00274877906944}])
    code, out, _ = run(capsys, "report", pts, "--on", _profile(tmp_path, 200e9))
    assert code == 0
    assert "│ DRAM bandwidth │ 320 GB/s │ 200 GB/s │ 62 % (low) │" in out      # 200/320
    assert "DRAM 200 GB/s = 62 % of 320 GB/s" in out and "85-92 %" in out


def test_dram_at_84_percent_stays_quiet(tmp_path, capsys):
    pts = _points(tmp_path, [{"name": "matmul 4096", "flop": {"fp16": 137438953472},
                              "bytes": {"DRAM": 100663296}, "seconds": 0.00274877906944}])
    code, out, _ = run(capsys, "report", pts, "--on", _profile(tmp_path))
    assert code == 0 and "84 % (low)" not in out and "= 84 % of 320 GB/s" not in out


# --- N4: fp32 work held to seed 000's fp16-tensor roof is not ranked with a prediction ---

SEED000 = Roof("seed 000", kind="measured",
               compute=(Ceiling(280e12, precision="fp16", unit="tensor"),),
               memory=(Ceiling(1.8e12, level="DRAM"),))


def test_fallback_gemm_is_not_ranked_with_53x():
    from rooflab.model.diagnose import diagnose

    # seed 000 §6.2: gemm_1024 2.1 GFLOP fp32, 12 MB, 500 us; the old advice read 500 us ->
    # 9.4 us (53.33x: fp32 at 80 % of 280 TFLOP/s); conv2d_3x3 (AI 7.5, left of the ridge
    # 155.6) is held by its bandwidth and stays ranked (headroom 2.118 ms / 133.3 us = 15.88x)
    ks = [Kernel("gemm_1024", {"fp32": 2.1e9}, {"DRAM": 1.2e7}, seconds=5e-4),
          Kernel("conv2d_3x3", {"fp32": 1.8e9}, {"DRAM": 2.4e8}, seconds=1.8e9 / 850e9)]
    diags = {d.kernel: d for d in diagnose(analyze(SEED000, ks))}
    gemm, conv = diags["gemm_1024"], diags["conv2d_3x3"]
    assert gemm.advice == () and gemm.headroom is None and not gemm.flagged
    assert gemm.priority == 0.0 and gemm.unranked
    assert any("not ranked" in n and "fp32 ceiling" in n for n in gemm.notes)
    assert conv.headroom == pytest.approx(15.88, rel=1e-3) and conv.advice


# --- N3: the derived DRAM levels a roof names are byte levels, not typos ---

T4_TRIAD = Roof("T4", kind="measured",
                compute=(Ceiling(50e12, precision="fp16", unit="tensor"),),
                memory=(Ceiling(270e9, level="DRAM"), Ceiling(250e9, level="DRAM (triad)")),
                overhead_s=5e-6)


@pytest.mark.parametrize("level", ["DRAM (triad)", "DRAM (real traffic)"])
def test_derived_dram_levels_do_not_warn(level):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = Kernel("x + 1 triad", {"fp16": 1e8}, {level: 4e8}, seconds=1.7e-3)
    assert dict(k.bytes) == {level: 4e8}


def test_measure_takes_the_triad_level():
    import rooflab

    m = rooflab.measure(name="x", flop={"fp16": 1e8}, bytes={"DRAM (triad)": 4e8})
    assert m is not None


def test_triad_kernel_is_judged_on_the_triad():
    # 4e8 B / 250 GB/s = 1.6 ms
    k = Kernel("x + 1 triad", {"fp16": 1e8}, {"DRAM (triad)": 4e8}, seconds=1.7e-3)
    (p,) = analyze(T4_TRIAD, [k]).primary()
    assert p.level == "DRAM (triad)" and p.floor_s == pytest.approx(1.6e-3)


def test_chart_draws_the_triad_only_where_it_judges():
    from rooflab.report.chart import roofline_data

    copy = Kernel("x + 1", {"fp16": 1e8}, {"DRAM": 4e8}, seconds=1.6e-3)
    triad = Kernel("x + 1 triad", {"fp16": 1e8}, {"DRAM (triad)": 4e8}, seconds=1.7e-3)

    def memory_lines(kernels):
        d = roofline_data([T4_TRIAD], kernels)
        return [ln.label for ln in d.lines if ln.kind == "memory"]

    assert not any("triad" in lb for lb in memory_lines([copy]))
    assert any("triad" in lb for lb in memory_lines([copy, triad]))


# --- N11: decode attention (one query) gets no tiling lever ---

def _decode_attention(**kw) -> Kernel:
    # `rooflab ai attention --heads 32 --kv-heads 4 --q-len 1 --kv-len 500 --head-dim 64`:
    # 4.1 MFLOP, 520 kB (AI 7.87: K and V read once, compulsory); timed 20 us
    return Kernel(kw.pop("name", "flash_decode_attention"), {"fp16": 4.1e6}, {"DRAM": 5.2e5},
                  seconds=2e-5, **kw)


@pytest.mark.parametrize("kernel", [
    _decode_attention(),
    _decode_attention(name="attn", meta={"op": "attention", "shape": {"q_len": 1}})])
def test_decode_attention_gets_no_tiling(kernel):
    p = analyze(T4_MEASURED, [kernel]).points[0]
    actions = [a.action for a in advise(p, T4_MEASURED, kernel)]
    assert actions and not any(a.startswith("tile") for a in actions)


def test_prefill_attention_still_gets_tiling():
    k = _decode_attention(name="attn", meta={"op": "attention", "shape": {"q_len": 512}})
    p = analyze(T4_MEASURED, [k]).points[0]
    assert any(a.action.startswith("tile") for a in advise(p, T4_MEASURED, k))


def test_latency_levers_are_capped_by_the_launch_that_stays():
    # the 5 us launch stays: no AI lever beats 20 us / 5 us = 4.0x (the work floor, 5.2e5 /
    # 270e9 = 1.93 us, gave a 10.38x cap), and each says it comes after the latency
    k = _decode_attention(name="attn_x", meta={"op": "attention"})
    p = analyze(T4_MEASURED, [k]).points[0]
    assert p.bound == "latency"
    ai_levers = [a for a in advise(p, T4_MEASURED, k) if a.shrinks != "below roof"]
    assert ai_levers
    for a in ai_levers:
        assert a.speedup <= 4.0 + 1e-9
        assert "only after the latency is fixed" in a.assumption


# --- N5: the batch what-if's words (no self-contradiction; range per token; its reason) ---

def test_batch_assumption_does_not_say_kv_grows_and_is_held():
    from rooflab.model.whatif import change_batch

    w = change_batch(T4_MEASURED, [_step()], 185)
    assert "(and KV) bytes grow" not in w.assumption
    assert "negligible at batch 185" in w.assumption


def test_batch_range_per_token_and_reason(tmp_path, capsys):
    # meta.weight_bytes 2.189e9 of 2.2e9: the step's range 22.5-28.8 ms at batch 185,
    # per token 22.5 / 185 = 122 us and 28.8 / 185 = 156 us (15 ms / 122 us = 123x)
    pts = _points(tmp_path, [{"name": "decode b=1", "flop": {"fp16": 2.2e9},
                              "bytes": {"DRAM": 2.2e9}, "seconds": 0.015,
                              "meta": {"weight_bytes": 2.189e9}}])
    code, out, _ = run(capsys, "whatif", pts, "--on", _profile(tmp_path), "--batch", "185")
    assert code == 0
    assert "15 ms -> 122 us-156 us, 96.4x-123x the tokens/s" in out
    assert "does not grow with the batch" in out and "quantization moves" not in out


# --- N7 / F4: docs/seeds.md shows what the commands print now ---

def test_seeds_page_shows_the_fallback_rows_as_printed(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root / "examples" / "seeds")
    out = tmp_path / "s0.md"
    assert main(["report", "seed000.csv", "--on", "seed000roof.json", "-o", str(out)]) == 0
    capsys.readouterr()
    page = (root / "docs" / "seeds.md").read_text(encoding="utf-8").splitlines()
    rows = [ln for ln in out.read_text(encoding="utf-8").splitlines()
            if ln.startswith(("| elementwise_add |", "| conv2d_3x3 |", "| gemm_1024 |",
                              "| softmax |")) and "fallback" in ln]
    assert len(rows) == 4
    for row in rows:
        assert row in page
    assert not any("| fp32 tensor |" in ln for ln in page)


def test_seeds_page_has_the_eager_launch_estimate():
    from pathlib import Path

    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "seeds.md")
                    .read_text(encoding="utf-8").split())
    # 41 x 22 + 3 = 905 launches; 905 x 5 us = 4.53 ms = 53 % of the 8.49 ms gap
    assert "905 per step, which would explain 4.53 ms-8.49 ms (53-100 %)" in page
    assert "--launches 880" in page and "So launches explain 18-37 % of the gap" not in page


# --- N10: the whole-step launch hint only where the roof has a launch floor ---

def test_cpu_roof_gets_no_cuda_launch_hint():
    from rooflab.model.diagnose import diagnose

    cpu = Roof("cpu", kind="nominal", compute=(Ceiling(2e12, precision="fp32"),),
               memory=(Ceiling(200e9, level="DRAM"),))
    k = Kernel("decode step", {"fp32": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.02)
    (d,) = diagnose(analyze(cpu, [k]))
    text = " ".join(x.words for x in d.distances) + " ".join(a.assumption for a in d.advice)
    assert "311 for TinyLlama" not in text and "CUDA graphs" not in text


# --- N8 (a): the record table's JSON says the percent its cell prints ---

def test_record_table_json_has_the_percent_of_the_measured_roof(tmp_path, capsys):
    pts = _points(tmp_path, [{"name": "decode b=1", "flop": {"fp16": 2.2e9},
                              "bytes": {"DRAM": 2.2e9}, "seconds": 0.015}])
    assert main(["report", pts, "--on", _profile(tmp_path), "--json"]) == 0
    rows = {r["quantity"]: r for r in json.loads(capsys.readouterr().out)["record_table"]}
    row = rows["decode b=1: FLOP/s"]
    # 2.2e9 / 15 ms = 147 GFLOP/s; measured roof at AI 1: 270 GFLOP/s -> 54 %; the nominal
    # slope 320 GFLOP/s -> ratio 0.458
    assert row["ratio"] == pytest.approx(2.2e9 / 0.015 / 320e9)
    assert row["percent_of_roof"] == pytest.approx(2.2e9 / 0.015 / 270e9 * 100)
    assert "54 % of the measured roof" in row["cells"][3]
