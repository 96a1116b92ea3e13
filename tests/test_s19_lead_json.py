"""JSON contract mends the lead made from review s19 r2: every batch/prefill sweep point
carries with_launches_s (F2, docs/json.md 'Floor keys'), and a launch floor that
`specs import --from` copied from the datasheet reads as not measured in --json as in the
cell (F17)."""

import json
from pathlib import Path

from cli_inproc import run_cli

from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.kernels import decode_step, prefill_step
from rooflab.workloads.llm.settings import Settings
from rooflab.workloads.llm.sweep import batch_sweep, prefill_sweep
from rooflab.workloads.llm.timing import time_step

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"


def test_batch_and_prefill_sweep_points_carry_the_with_launches_floor():
    cfg, roof, s = load_config("tinyllama-1.1b"), load_roof("T4"), Settings()
    rows = batch_sweep(cfg, s, roof, (1, 64), 500).rows()
    want = time_step(decode_step(cfg, s, 1, 500), roof).with_launches_s
    assert rows[0]["with_launches_s"] == want
    assert rows[0]["with_launches_s"] > rows[0]["tpot_s"]     # the launches add time
    pre = prefill_sweep(cfg, s, roof, (1, 4), 128).rows()
    assert pre[1]["with_launches_s"] == time_step(prefill_step(cfg, s, 4, 128),
                                                  roof).with_launches_s


def test_a_copied_launch_floor_is_not_measured_in_json():
    out = run_cli("report", str(SEEDS / "pts.json"), "--on", str(SEEDS / "t4p.json"),
                  "--json")
    rows = [r for r in json.loads(out.stdout)["record_table"]
            if r["quantity"] == "overhead floor"]
    assert rows and rows[0]["nominal"] == 5e-06
    assert rows[0]["measured"] is None and rows[0]["ratio"] is None
    assert "not measured" in rows[0]["cells"][2]


def test_every_document_says_schema_version_2():
    # llm list and scale wrote a literal 1 after the bump (s19 r2 F3); ai occupancy none (F1)
    for argv in (["llm", "list", "--json"], ["scale", "--on", "H100", "--json"],
                 ["ai", "occupancy", "--cc", "8.0", "--block", "256", "--regs", "64",
                  "--json"]):
        out = run_cli(*argv)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["schema_version"] == 2, argv


def test_llm_and_plot_rows_name_the_ceilings_that_judged_them(tmp_path):
    # H100: q_proj is bf16 tensor work against the HBM (the row's 3.35 TB/s, 989.5 TFLOP/s)
    doc = json.loads(run_cli("llm", "tinyllama-1.1b", "--on", "H100", "--json").stdout)
    row = next(r for r in doc["analysis"] if r["kernel"] == "q_proj")
    assert (row["memory_ceiling"], row["compute_ceiling"]) == ("DRAM", "bf16 tensor")
    assert row["bytes_per_s"] == 3.35e12 and row["peak_flop_per_s"] == 989.5e12
    out = run_cli("plot", str(SEEDS / "pts.json"), "--on", str(SEEDS / "t4p.json"),
                  "-o", str(tmp_path / "c.png"), "--json")
    rows = json.loads(out.stdout)["analysis"]
    assert rows and all("memory_ceiling" in r for r in rows)


def test_profiler_documents_always_carry_import_notes(output4):
    # a list even when empty, like notes and skipped (s19 r2 F4: it was left out)
    doc = json.loads(run_cli("ncu", output4, "--on", "L40S", "--json").stdout)
    assert doc["import_notes"] == [] and isinstance(doc["skipped"], list)


def test_bf16_stand_in_offers_the_fp16_cast_only_where_fp16_tensor_math_exists():
    # a CPU roof has no fp16 tensor ceiling to cast to (review s19 h1 R2)
    from rooflab.hardware.catalog import lookup_roof

    _, cpu_note = lookup_roof("EPYC 7763").compute_for("bf16")
    assert cpu_note.endswith("using fp32 vector (without bf16 math bf16 runs at the fp32 rate)")
    _, t4_note = lookup_roof("T4").compute_for("bf16")
    assert t4_note.endswith("cast to fp16 for the fp16 tensor ceiling)")


def test_ai_spmv_says_the_on_note_once():
    # spmv resolved --on twice (once for the write-allocate rule): two identical notes
    out = run_cli("ai", "spmv", "2e6", "54e6", "--on", "h100")
    assert out.returncode == 0 and out.stderr.count("'h100' is NVIDIA H100 SXM") == 1


def test_ai_spmv_on_a_roof_of_no_known_kind_says_a_cpu_is_assumed(tmp_path):
    # its write-allocate read rests on that assumption, as elementwise --stride's lines do
    box = tmp_path / "box.json"
    box.write_text(json.dumps({"schema_version": 2, "roof": {
        "name": "mybox", "kind": "nominal",
        "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 1e12}],
        "memory": [{"level": "DRAM", "bytes_per_s": 1e11}]}}))
    out = run_cli("ai", "spmv", "1e6", "5e6", "--on", str(box))
    assert out.returncode == 0 and "a CPU assumed: the roof names no machine kind" in out.stdout
