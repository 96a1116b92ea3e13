"""Advice and what-if verdicts that contradicted the seeds (review 18a F1, F2, F10, F8, F5).

Every input is built here from the seeds' own numbers (seed 000 §6.2's table on its
280 TFLOP/s / 1.8 TB/s roof; seed 004's T4 profile, nominal 65 TFLOP/s / 320 GB/s and
measured 50 TFLOP/s / 270 GB/s, with its 15 ms decode step), not read from examples/seeds/,
which another change may edit.
"""

from __future__ import annotations

import pytest
from seed004_files import points_file, t4_profile

from rooflab.cli.main import main
from rooflab.hardware.profile import load_profile
from rooflab.hardware.resolve import load_roof
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.diagnose import diagnose
from rooflab.model.kernel import Kernel
from rooflab.model.whatif import change_batch, describe, quantize_weights
from rooflab.probe.nominal import low_compute_notes, profile_low_notes

# seed 000 §3.3's measured roof: fp16 tensor 280 TFLOP/s, DRAM 1.8 TB/s (ridge 155.6)
SEED000 = Roof("seed 000", kind="measured",
               compute=(Ceiling(280e12, precision="fp16", unit="tensor"),),
               memory=(Ceiling(1.8e12, level="DRAM"),))
# seed 004's T4: measured 50 TFLOP/s and 270 GB/s, launch floor 5 us (ridge 185.2)
T4_MEASURED = Roof("T4", kind="measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor"),),
                   memory=(Ceiling(270e9, level="DRAM"),), overhead_s=5e-6)
T4_NOMINAL = Roof("T4", kind="nominal",
                  compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
                  memory=(Ceiling(320e9, level="DRAM"),), overhead_s=5e-6)


def _decode(**kw) -> Kernel:
    """Seed 004's decode step at batch 1: 2.2 GFLOP, 2.2 GB, 15 ms, timed as one point."""
    return Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015, **kw)


def _profile(tmp_path, fp16_measured: float = 50e12) -> str:
    return t4_profile(tmp_path, fp16_measured)


def _points_file(tmp_path, kernels) -> str:
    return points_file(tmp_path, kernels)


DECODE_DOC = {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
              "seconds": 0.015}


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), " ".join(err.split())


# --- F1: a latency-bound kernel's lever is parallelism, not AI (seed 000 §6.2 误判二) ---

def _conv(seconds: float) -> Kernel:
    return Kernel("conv2d_3x3", {"fp16": 1.8e9}, {"DRAM": 2.4e8}, seconds=seconds)


def test_latency_bound_conv_leads_with_parallelism_and_caps_tiling_at_its_headroom():
    # seed 000's conv2d_3x3: 850 GFLOP/s at AI 7.5 of an attainable 1.8 TB/s x 7.5 =
    # 13.5 TFLOP/s (6.3 %: latency). Work floor 2.4e8 / 1.8e12 = 133.3 us; its time
    # 1.8e9 / 850e9 = 2.118 ms: headroom 15.88x. Tiling to the ridge used to predict
    # 20.74x (6.3 % of a 20.7x higher roof), above the whole headroom.
    k = _conv(1.8e9 / 850e9)
    p = analyze(SEED000, [k]).points[0]
    assert p.bound == "latency"
    advice = advise(p, SEED000, k)
    assert advice[0].action.startswith("expose more parallelism")
    # 80 % of the roof at AI 7.5: 133.3 us / 0.8 = 166.7 us; 2.118 ms / 166.7 us = 12.71x
    assert advice[0].speedup == pytest.approx((1.8e9 / 850e9) / (2.4e8 / 1.8e12 / 0.8))
    assert "误判二" in advice[0].detail
    headroom = (1.8e9 / 850e9) / (2.4e8 / 1.8e12)
    assert headroom == pytest.approx(15.88, abs=0.01)
    tile = next(a for a in advice if a.action.startswith("tile"))
    assert tile.speedup == pytest.approx(headroom)
    assert "only after the latency is fixed" in tile.assumption and "20.7x" in tile.assumption
    assert "capped at its 15.9x headroom" in tile.assumption
    assert all(a.speedup <= headroom * (1 + 1e-9) for a in advice)


def test_latency_bound_conv_on_a_catalog_t4_too():
    # review 18a: conv_a 1.8e9 FLOP, 2.4e8 B in 20 ms on a T4 (320 GB/s): floor 750 us,
    # headroom 26.67x; tiling read 26.91x and ranked first
    t4 = load_roof("T4")
    k = Kernel("conv_a", {"fp16": 1.8e9}, {"DRAM": 2.4e8}, seconds=2.0e-2,
               meta={"op": "conv2d"})
    (d,) = diagnose(analyze(t4, [k]))
    assert d.bound == "latency" and d.headroom == pytest.approx(26.67, abs=0.01)
    assert d.advice[0].action.startswith("expose more parallelism")
    assert max(a.speedup for a in d.advice) <= d.headroom * (1 + 1e-9)


# --- F2: a whole decode step timed as one point (seed 004 Q3, Q6) ---

def test_whole_decode_step_says_one_launch_assumed_not_negligible():
    (d,) = diagnose(analyze(T4_MEASURED, [_decode()]))
    below = next(x for x in d.distances if x.name == "below roof").words
    assert "negligible" not in below                   # was "5 us of the 15 ms: negligible"
    assert "One launch assumed" in below and "`calls`" in below and "--tpot-ms" in below
    assert "CUDA graphs" in below


def test_a_decode_step_with_its_calls_keeps_the_launch_split():
    # 311 launches x 5 us = 1.56 ms of the 15 ms: the usual split, not "one launch assumed"
    (d,) = diagnose(analyze(T4_MEASURED, [_decode(calls=311)]))
    below = next(x for x in d.distances if x.name == "below roof").words
    assert "One launch assumed" not in below and "explains up to 1.56 ms" in below


# Hand check (review 18a F2): bytes floor 2.2e9 / 270e9 = 8.148 ms, launch 5 us, gap
# 15 - 0.005 - 8.148 = 6.847 ms. int4 (0.5 of 2 bytes): floor 2.037 ms; the gap scaled
# with the work, 5 us + 2.037 / 0.5434 = 3.754 ms (4.00x); held, 5 us + 2.037 + 6.847 =
# 8.889 ms (1.6875x).
FLOOR = 2.2e9 / 270e9
GAP = 0.015 - 5e-6 - FLOOR
HELD = 5e-6 + FLOOR / 4 + GAP
SCALED = 5e-6 + (0.015 - 5e-6) / 4


def test_int4_on_the_whole_step_is_a_range_in_whatif():
    w = quantize_weights(T4_MEASURED, [_decode()], "int4")
    (_, new), = w.moves
    assert HELD == pytest.approx(8.889e-3, rel=1e-3) and 0.015 / HELD == pytest.approx(1.6875)
    assert new.seconds == pytest.approx(SCALED)
    assert new.meta["seconds_gap_held"] == pytest.approx(HELD)
    (row,) = describe(w)["moves"]
    assert row["after_s_gap_held"] == pytest.approx(HELD)
    assert row["speedup_gap_held"] == pytest.approx(1.6875)


def test_int4_on_the_whole_step_is_a_range_in_the_advice():
    k = _decode()
    p = analyze(T4_MEASURED, [k]).points[0]
    int4 = next(a for a in advise(p, T4_MEASURED, k) if "int4" in a.action)
    assert int4.speedup == pytest.approx(0.015 / HELD)            # 1.69x, not 4.00x
    assert "a range, 1.69x-4.00x" in int4.assumption and "Q6" in int4.assumption


def test_whatif_cli_prints_the_range(tmp_path, capsys):
    pts = _points_file(tmp_path, [DECODE_DOC])
    code, out, _ = run(capsys, "whatif", pts, "--on", _profile(tmp_path), "--quantize", "int4")
    assert code == 0
    assert "3.75 ms-8.89 ms" in out and "1.69x-4.00x" in out
    assert "one launch assumed" in out and "6.85 ms above its floor" in out


# --- F10: batch on a decode point without a KV/activation split (seed 004 Day 16) ---

def test_batch_185_says_the_kv_assumption_at_the_batch_asked():
    w = change_batch(T4_MEASURED, [_decode()], 185)
    assert "negligible at batch 185" in w.assumption
    assert "meta.weight_bytes" in w.assumption and "rooflab llm --batch" in w.assumption


def test_batch_past_the_ridge_is_a_lower_bound_without_a_kv_figure():
    # AI 1 x batch reaches the ridge 50e12 / 270e9 = 185.2 at batch 185: 186 is past it.
    # Refused there before (review H2: batch 185 answered, 186 exited 2); now at least its
    # compute floor 186 x 2.2e9 / 50e12 = 8.184 ms (the KV cache can only add to it)
    w = change_batch(T4_MEASURED, [_decode()], 186)
    (_, new), = w.moves
    assert new.seconds == pytest.approx(186 * 2.2e9 / 50e12)
    assert new.meta["seconds_lower_bound"] is True
    assert "meta.weight_bytes" in w.assumption and "rooflab llm --batch" in w.assumption
    # with the weights' bytes given, the rest grows with the batch: a full prediction
    split = _decode(meta={"weight_bytes": 2.07e9})
    w = change_batch(T4_MEASURED, [split], 186)
    assert w.moves[0][1].seconds > 0.015 and "seconds_lower_bound" not in w.moves[0][1].meta


def test_batch_past_the_ridge_cli_answers_at_least_with_the_fix(tmp_path, capsys):
    # 200 x 2.2e9 / 50e12 = 8.8 ms
    pts = _points_file(tmp_path, [DECODE_DOC])
    code, out, err = run(capsys, "whatif", pts, "--on", _profile(tmp_path), "--batch", "200")
    assert code == 0 and "Traceback" not in err
    assert "at least 8.8 ms" in out and "meta.weight_bytes" in out


# --- F8: judged on a datasheet roof (seed 000 §6.2 误判三) ---

def test_a_datasheet_roof_says_it_judges_on_datasheet_peaks():
    a100 = load_roof("A100")
    k = Kernel("gemm", {"fp32": 2.1e9}, {"DRAM": 1.2e7}, seconds=5e-4)
    note = [n for n in analyze(a100, [k]).notes if n.startswith("judged on datasheet")]
    assert len(note) == 1 and "70-90 %" in note[0] and "rooflab probe" in note[0]
    # a measured roof, a count without a time, a roof built by hand: no such note
    for roof, kernels in ((T4_MEASURED, [k]), (a100, [k.with_(seconds=None)]),
                          (T4_NOMINAL, [k])):
        assert not any("datasheet" in n for n in analyze(roof, kernels).notes)


def test_the_datasheet_note_reaches_the_markdown_report(tmp_path, capsys):
    pts = _points_file(tmp_path, [DECODE_DOC])
    md = tmp_path / "r.md"
    assert main(["report", pts, "--on", "T4", "-o", str(md)]) == 0
    capsys.readouterr()
    assert "judged on datasheet peaks" in md.read_text()


# --- F5: a measured compute peak at 50-70 % of nominal (seed 000 §3.2) ---

def _measured_fp16(value: float) -> Roof:
    return Roof("T4", kind="measured", compute=(Ceiling(value, precision="fp16",
                                                        unit="tensor"),))


@pytest.mark.parametrize("value, said", [(40e12, True), (30e12, False), (50e12, False)])
def test_a_compute_peak_at_50_to_70_percent_gets_the_quieter_note(value, said):
    # 40 of 65 TFLOP/s is 62 %: seed 000 §3.2's 60-70 % symptom; 46 % is the louder
    # "far below" note's, 77 % is healthy
    notes = low_compute_notes(_measured_fp16(value), T4_NOMINAL, "gpu")
    assert bool(notes) is said
    if said:
        assert "62 % of 65 TFLOP/s" in notes[0] and "seed 000 §3.2" in notes[0]


def test_a_profile_at_62_percent_gets_the_note(tmp_path):
    prof = load_profile(_profile(tmp_path, fp16_measured=40e12))
    (note,) = profile_low_notes(prof)
    assert "fp16 tensor 40 TFLOP/s = 62 %" in note
    assert profile_low_notes(load_profile(_profile(tmp_path))) == []
