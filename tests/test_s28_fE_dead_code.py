"""Dead code removed and folded, behaviour unchanged or now right (review s28 R1 sections
B-D): each test pins what the live path does, by hand, beside the name that is gone."""

from __future__ import annotations

import csv
import inspect

import pytest

import rooflab
from rooflab.model.kernel import Kernel

H100 = rooflab.load_roof("H100")


def test_report_import_builds_the_table_rows_once_not_again_for_the_file(tmp_path,
                                                                       monkeypatch, capsys):
    """-o x.csv built table_rows over every kernel for write_output, which never read
    them (review s28 R1 #8: 0.4-0.6 s and ~50 MB at 100,000 kernels): now the table's
    own call, for --top, is the only one, and the file still holds every kernel."""
    from rooflab.cli import profiled
    from rooflab.ingest.profile_import import ProfileImport

    assert "rows" not in inspect.signature(profiled.write_output).parameters
    calls = []
    real = profiled.table_rows

    def counting(analysis, top=None, *a, **kw):
        calls.append(top)
        return real(analysis, top, *a, **kw)

    monkeypatch.setattr(profiled, "table_rows", counting)
    ks = tuple(Kernel(f"k{i}", {"fp16": 1e9 + i}, {"DRAM": 1e7 + i}, seconds=1e-4 + i * 1e-9)
               for i in range(40))
    out = tmp_path / "t.csv"
    assert profiled.report_import(ProfileImport(ks), on="H100", top=5, json_out=False,
                                  output=str(out)) == 0
    capsys.readouterr()
    assert calls == [5]                      # the old code: [5, None]
    with open(out) as fh:
        names = {r["kernel"] for r in csv.DictReader(fh)}
    assert names == {k.name for k in ks}     # every kernel, not --top's 5


def test_held_work_ratio_is_the_rule_and_work_ratio_is_gone():
    """retime.work_ratio (efficiency_of's split, its jump at the floor) had no caller;
    held_work_ratio is what every what-if keeps (review s28 R1 #4)."""
    import rooflab.model.retime as retime
    from rooflab.model.retime_launch import held_work_ratio

    assert not hasattr(retime, "work_ratio")
    assert "launch_left_out" not in inspect.signature(retime.retime).parameters
    # 4 GB of DRAM on the H100's 3.35 TB/s: floor 4e9 / 3.35e12 = 1.194 ms, timed at
    # 0.6 ms in one call: the launch held is min(5 us, 0.6 ms - 0.5 x 5 us, |0.6 - 1.194|
    # ms) = 5 us, so the ratio is 1.194 / 0.595 = 2.007, not capped at 1
    k = Kernel("fast", {"fp16": 1e9}, {"DRAM": 4e9}, seconds=0.6e-3)
    (p,) = rooflab.analyze(H100, [k]).points
    assert p.floor_s == pytest.approx(4e9 / 3.35e12)
    assert H100.overhead_s == 5e-6
    assert held_work_ratio(p, k) == pytest.approx((4e9 / 3.35e12) / (0.6e-3 - 5e-6))


def test_whatif_identity_keeps_a_kernel_above_its_roof_where_it_is():
    """The rule the comments now name: an identity change predicts 1.00x, even for a
    kernel timed faster than its roof allows (review r8 F1)."""
    from rooflab.model.whatif import scale_bytes

    k = Kernel("fast", {"fp16": 1e9}, {"DRAM": 4e9}, seconds=0.6e-3)
    w = scale_bytes(H100, [k], 1.0)
    ((old, new),) = w.moves
    assert new.seconds == pytest.approx(old.seconds, rel=1e-12)


def test_retime_predicts_no_launches_for_a_time_under_half_its_launch_floor():
    """retime's launch_left_out flag was never passed; launch_share carries it: a time at
    or under half of calls x the floor holds no launches, and its prediction adds none."""
    from rooflab.model.retime_launch import launch_share

    # 1000 calls x 5 us = 5 ms of launch floor; timed 2 ms in all (GPU-side-like)
    k = Kernel("tiny", {"fp16": 1e6}, {"DRAM": 1e6}, seconds=2e-3, calls=1000)
    (p,) = rooflab.analyze(H100, [k]).points
    assert p.overhead_floor_s == pytest.approx(1000 * H100.overhead_s)
    assert launch_share(p, k) == 0.0


def test_more_line_takes_a_capped_list_only():
    from rooflab.cli import row_cap

    assert not hasattr(row_cap, "cap_rows")
    c = row_cap.cap(list(range(100)), weight=lambda r: r, limit=10)
    assert row_cap.more_line(c, "kernels", "`--json`") == \
        "... and 90 more kernels, shorter (`--json` lists every one)"


def test_model_config_reads_no_activation_and_counts_two_flop_per_element():
    """hidden_act was parsed and never read (review s28 R1 #11): the count is 2 FLOP per
    element for SiLU and GELU alike (kernels.ACT_FLOP), + 1 for a gated MLP's multiply."""
    from dataclasses import fields

    from rooflab.workloads.llm import load_config
    from rooflab.workloads.llm.kernels import decode_step
    from rooflab.workloads.llm.model_config import ModelConfig
    from rooflab.workloads.llm.settings import settings_for

    assert "activation" not in {f.name for f in fields(ModelConfig)}
    gpt2 = load_config("gpt2")          # gelu_new, not gated: intermediate 3072
    (act,) = [k for k in decode_step(gpt2, settings_for(gpt2), 1, 100).kernels()
              if k.name == "act"]
    assert (act.total_flop, act.calls) == (3072 * 2 * 12, 12)          # 12 layers
    tiny = load_config("tinyllama-1.1b")   # silu, gated: intermediate 5632
    (act_mul,) = [k for k in decode_step(tiny, settings_for(tiny), 1, 100).kernels()
                  if k.name == "act_mul"]
    assert (act_mul.total_flop, act_mul.calls) == (5632 * 3 * 22, 22)  # 22 layers


def test_removed_names_stay_removed():
    """No caller anywhere (review s28 R1 #7, #9, #10, #12, #13, #14, #17, #18)."""
    import rooflab.model.advice as advice
    import rooflab.model.advice_core as advice_core
    import rooflab.model.advice_tiling as advice_tiling
    import rooflab.model.whatif_floors as whatif_floors
    import rooflab.probe.cpu.runner as runner
    import rooflab.report.chart_marks as chart_marks
    import rooflab.workloads.llm.gguf_config as gguf_config
    from rooflab.report.html_figure import chart_display

    assert not hasattr(whatif_floors, "kernel_floors")
    assert not hasattr(advice_core, "predict_seconds")
    assert not hasattr(advice_tiling, "reuses_data")
    assert not hasattr(chart_marks, "ARROW_HEAD_PT")
    assert not hasattr(gguf_config, "FLOATS")
    assert "place_labels" not in inspect.signature(chart_display).parameters
    assert "l2_bytes" not in inspect.signature(advice.advise).parameters
    assert "max_reps" not in inspect.signature(runner.calibrate).parameters


def test_calibrate_stops_at_its_cap_when_the_clock_does_not_move():
    """A call timed at zero grows x8 a round until MAX_REPS (2^40), then stops: 8^14 =
    2^42 is the first count past it."""
    from rooflab.probe.cpu.runner import MAX_REPS, calibrate
    from rooflab.probe.timer import TimingPlan

    seen = []
    reps, _ = calibrate(seen.append, TimingPlan(), lambda: 0.0)
    assert MAX_REPS == 1 << 40 and reps == MAX_REPS
    assert max(seen) == 8 ** 13      # the last round timed; 8^14 ends the loop


def test_rocprof_plan_is_read_by_name(tmp_path):
    """The plan was a 13-tuple read by position (plan[5] for long) with a `col` no reader
    used (review s28 R1 #16)."""
    from rooflab.files import csv_reader
    from rooflab.ingest.rocprof import Plan, _plan

    assert "col" not in Plan._fields
    p = tmp_path / "long.csv"
    p.write_text("Dispatch_Id,Kernel_Name,Counter_Name,Counter_Value\n"
                 "1,k,SQ_INSTS_VALU_FMA_F32,10\n")
    with open(p) as fh:
        plan = _plan(str(p), csv_reader(fh))
    assert isinstance(plan, Plan) and plan.long and (plan.i_name, plan.i_id) == (1, 0)
    assert (plan.i_cn, plan.i_cv, plan.h) == (2, 3, 0)
