"""Task H2: the what-if's batch cliff, its two gaps for one step, and its notebook display.

Seed 004's decode step (Day 16, Q6): 2.2 GFLOP and 2.2 GB at batch 1 in 15 ms, timed as
one point, on its T4: measured 50 TFLOP/s fp16 tensor and 270 GB/s, nominal 65 TFLOP/s and
320 GB/s, 5 us per launch. Ridge (measured) 50e12 / 270e9 = 185.2 FLOP/B; the step's AI
is 1 x batch, so batch 185 is under it and 186 past it.
"""

from __future__ import annotations

import json

import pytest
from notebook_display import pretty
from seed004_files import points_file, t4_profile

from rooflab.cli.main import main
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.model.retime import held_gap_s
from rooflab.model.whatif import change_batch, describe, move_hardware, quantize_weights

T4_MEASURED = Roof("T4", kind="measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor"),),
                   memory=(Ceiling(270e9, level="DRAM"),), overhead_s=5e-6)
T4_NOMINAL = Roof("T4", kind="nominal",
                  compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
                  memory=(Ceiling(320e9, level="DRAM"),), overhead_s=5e-6)
# an H200 as the catalog has it (datasheet): 989.5 TFLOP/s fp16 tensor, 4.8 TB/s, 5 us
H200 = Roof("H200", kind="nominal",
            compute=(Ceiling(989.5e12, precision="fp16", unit="tensor"),),
            memory=(Ceiling(4.8e12, level="DRAM"),), overhead_s=5e-6)
DECODE_DOC = {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
              "seconds": 0.015}


def _decode(**kw) -> Kernel:
    return Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015, **kw)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), " ".join(err.split())


# --- 1. the batch cliff: graded, a lower bound past the ridge ---------------------------

def test_batch_185_is_a_prediction_and_186_a_lower_bound():
    # 185: under the ridge, bytes held (no split): the step takes its 15 ms, a prediction
    (_, at185), = change_batch(T4_MEASURED, [_decode()], 185).moves
    assert at185.seconds == pytest.approx(0.015) and "seconds_lower_bound" not in at185.meta
    # 186: past it, the compute floor 186 x 2.2e9 / 50e12 = 8.184 ms (launch 5 us < it)
    w = change_batch(T4_MEASURED, [_decode()], 186)
    (_, at186), = w.moves
    assert at186.seconds == pytest.approx(8.184e-3)
    assert "seconds_gap_held" not in at186.meta           # no range on a bound
    assert "past the ridge" in w.assumption and "lower bound" in w.assumption
    assert "meta.weight_bytes" in w.assumption            # the fix, as at batch 185


def test_the_lower_bound_is_machine_readable_in_the_json():
    d = describe(change_batch(T4_MEASURED, [_decode()], 186))
    (row,) = d["moves"]
    assert row["after_s"] == pytest.approx(8.184e-3) and row["after_s_lower_bound"] is True
    # 15 / 8.184 = 1.833: at most
    assert row["speedup"] == pytest.approx(1.8328, rel=1e-4) and row["speedup_upper_bound"]
    assert d["total_after_s_lower_bound"] is True and d["speedup_upper_bound"] is True
    kernel = d["after"]["kernels"][0]
    assert kernel["meta"]["seconds_lower_bound"] is True
    # a prediction says nothing of bounds
    assert "total_after_s_lower_bound" not in describe(
        change_batch(T4_MEASURED, [_decode()], 185))


def test_a_batch_sweep_across_the_ridge_answers_every_batch(tmp_path, capsys):
    pts, prof = points_file(tmp_path, [DECODE_DOC]), t4_profile(tmp_path)
    code, out, _ = run(capsys, "whatif", pts, "--on", prof, "--batch", "185")
    assert code == 0 and "15 ms -> 15 ms (1.00x)" in out and "at least 8" not in out
    code, out, err = run(capsys, "whatif", pts, "--on", prof, "--batch", "186")
    assert code == 0 and "error" not in err                 # was exit 2
    assert "total: 15 ms -> at least 8.18 ms (at most 1.83x)" in out
    # the arithmetic shown: 186 x 2.2 GFLOP = 409 GFLOP at 50 TFLOP/s
    assert "409 GFLOP / 50 TFLOP/s" in out and "meta.weight_bytes" in out
    # per token: 8.184 ms / 186 = 44.0 us; 15 ms / 44.0 us = 340.9x
    assert "15 ms -> at least 44 us, at most 341x the tokens/s" in out
    code, out, _ = run(capsys, "whatif", pts, "--on", prof, "--batch", "186", "--json")
    data = json.loads(out)
    assert code == 0 and data["total_after_s_lower_bound"] is True


def test_a_split_point_past_the_ridge_keeps_its_full_prediction():
    # weights 2.07 of 2.2 GB: the other 0.13 GB grows x186 = 24.18 GB, + 2.07 = 26.25 GB
    # at 270 GB/s = 97.2 ms of floor, memory-bound (AI 409.2 / 26.25 = 15.6 < 185)
    w = change_batch(T4_MEASURED, [_decode(meta={"weight_bytes": 2.07e9})], 186)
    (_, new), = w.moves
    assert "seconds_lower_bound" not in new.meta
    assert new.seconds > 0.097 and "total_after_s_lower_bound" not in describe(w)


# --- 2. one gap above the floor for one step --------------------------------------------

# By hand: on the judging (measured) roof the step's floor is 2.2e9 / 270e9 = 8.148 ms, so
# its gap is 15 - 0.005 - 8.148 = 6.847 ms, under --quantize and --hardware alike.
# --hardware took it against the nominal roof, its efficiency basis: 15 - 0.005 -
# 2.2e9 / 320e9 (6.875) = 8.120 ms. The held end on the H200 keeps 6.847 ms and moves the
# 8.148 ms of work like for like, by the datasheet ratio 320 / 4800: 0.5432 ms; with the
# 5 us launch, 7.395 ms (it was 5 us + 0.458 + 8.120 = 8.583 ms).
GAP = 0.015 - 5e-6 - 2.2e9 / 270e9
H200_HELD = 5e-6 + (2.2e9 / 270e9) * (320e9 / 4.8e12) + GAP


def test_hardware_and_quantize_hold_one_gap():
    assert GAP == pytest.approx(6.847e-3, rel=1e-3)
    (p,) = analyze(T4_MEASURED, [_decode()]).primary()
    assert held_gap_s(p) == pytest.approx(GAP)
    (_, q), = quantize_weights(T4_MEASURED, [_decode()], "int4").moves
    (_, h), = move_hardware(T4_NOMINAL, [_decode()], H200, judge=T4_MEASURED).moves
    assert q.meta["gap_held_s"] == pytest.approx(GAP)
    assert h.meta["gap_held_s"] == pytest.approx(GAP)          # was 8.120 ms
    assert h.meta["seconds_gap_held"] == pytest.approx(H200_HELD)
    assert H200_HELD == pytest.approx(7.395e-3, rel=1e-3)
    # the fast end is the like-for-like efficiency as before: 6.875 / 14.995 = 45.85 % of
    # the nominal roof; 5 us + 0.4583 ms / 0.4585 = 1.005 ms
    assert h.seconds == pytest.approx(5e-6 + (2.2e9 / 4.8e12) / (6.875e-3 / 14.995e-3))


def test_the_cli_says_one_gap_for_both_changes(tmp_path, capsys):
    pts, prof = points_file(tmp_path, [DECODE_DOC]), t4_profile(tmp_path)
    _, quant, _ = run(capsys, "whatif", pts, "--on", prof, "--quantize", "int4")
    code, hw, _ = run(capsys, "whatif", pts, "--on", prof, "--hardware", "H200")
    assert code == 0
    assert "6.85 ms above its floor" in quant and "6.85 ms above its floor" in hw
    assert "8.12 ms" not in hw
    assert "1 ms-7.4 ms" in hw                                 # was 1 ms-8.58 ms


# --- 3. a WhatIf in a notebook -----------------------------------------------------------

def test_a_whatif_displays_before_after_range_and_assumption():
    text = pretty(quantize_weights(T4_MEASURED, [_decode()], "int4"))
    lines = text.splitlines()
    # int4: 15 ms -> 3.754 ms (gap scaled) to 8.889 ms (gap held): 1.69x-4.00x
    assert lines[:3] == ["WhatIf: weights -> int4 on 'T4' (measured): 1 kernel(s) moved",
                         "  total 15 ms -> 3.75 ms-8.89 ms (1.69x-4.00x)",
                         "  decode b=1: 15 ms -> 3.75 ms-8.89 ms (1.69x-4.00x), AI 1 -> 4"]
    assert "(6.85 ms)" in text and "  assumes: weights are read once" in text
    assert len(text) < 2000


def test_a_lower_bound_and_a_move_between_roofs_display_as_such():
    text = pretty(change_batch(T4_MEASURED, [_decode()], 186))
    assert "  total 15 ms -> at least 8.18 ms (at most 1.83x)" in text.splitlines()
    assert len(text) < 2000
    text = pretty(move_hardware(T4_NOMINAL, [_decode()], H200, judge=T4_MEASURED))
    assert text.splitlines()[0] == ("WhatIf: on H200 on 'T4' (nominal) -> 'H200' "
                                    "(nominal): 1 kernel(s) moved")
    # 15 / 7.395 = 2.03x, 15 / 1.005 = 14.93 (14.9x: 3 figures from 10)
    assert "  total 15 ms -> 1 ms-7.4 ms (2.03x-14.9x)" in text.splitlines()
