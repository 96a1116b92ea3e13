"""`rooflab whatif --precision fp8|fp4|nvfp4|mxfp4` on an `rooflab llm` step counts the step
as `rooflab llm --act fp8|nvfp4|mxfp4` does (review s26 v1-F2): 8-bit/4-bit activations exist
at the GEMM inputs only, so the GEMM outputs, the KV cache and attention (Q, O, its math)
keep the model dtype; fp4 GEMM weights and inputs carry their block scales. Before, the
KV cache and the outputs shrank too: Llama-3-8B on a B200, batch 64, context 1024, whatif
fp8 1.61 ms vs llm --act fp8 2.18 ms, fp4 0.83 ms vs llm --act nvfp4 1.75 ms.
`whatif --quantize nvfp4|mxfp4` prices the formats as `llm --weights` does."""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

STEP = ("--phase", "decode", "--batch", "64", "--context", "1024")


def _llm(tmp_path, model, *extra):
    out = tmp_path / f"{model}{'_'.join(extra)}.json"
    r = run_cli("llm", model, "--on", "b200", "-q", "-o", str(out), *STEP, *extra)
    assert r.returncode == 0, r.stderr
    return out, json.loads(out.read_text())["llm"]["decode"]


def _whatif(path, *args):
    r = run_cli("whatif", str(path), "--on", "b200", "--json", "-q", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _same_per_kernel(w, want):
    ks = {k["name"]: k for k in want["kernels"]}
    for m in w["moves"]:
        k = ks[m.get("new_kernel") or m["kernel"]]
        assert m["after_work_floor_s"] == pytest.approx(k["work_floor_s"], rel=0.01), m["kernel"]
    assert w["total_after_work_floor_s"] == pytest.approx(want["work_floor_s"], rel=0.01)


@pytest.mark.parametrize("model", ["llama-3-8b", "deepseek-v2-lite"])
@pytest.mark.parametrize(("precision", "act"), [("fp8", "fp8"), ("fp4", "nvfp4"),
                                                ("nvfp4", "nvfp4"), ("mxfp4", "mxfp4")])
def test_whatif_precision_is_llm_act_per_kernel(tmp_path, model, precision, act):
    base, _ = _llm(tmp_path, model)
    _, want = _llm(tmp_path, model, "--act", act)
    _same_per_kernel(_whatif(base, "--precision", precision), want)


def test_reviewers_step_lands_on_llms_floors(tmp_path):
    base, before = _llm(tmp_path, "llama-3-8b")
    assert before["work_floor_s"] == pytest.approx(3.17e-3, rel=0.005)
    fp8 = _whatif(base, "--precision", "fp8")
    fp4 = _whatif(base, "--precision", "fp4")
    # llm --act fp8: 2.18 ms, --act nvfp4: 1.75 ms (the old what-if: 1.61 / 0.83 ms)
    assert fp8["total_after_work_floor_s"] == pytest.approx(2.18e-3, rel=0.005)
    assert fp4["total_after_work_floor_s"] == pytest.approx(1.75e-3, rel=0.005)
    moves = {m["kernel"]: m for m in fp8["moves"]}
    # attention: its 8.59 GB of bf16 KV reads stay (1.12 ms on the B200's 7.7 TB/s)
    att = moves["attention"]
    assert att["after_work_floor_s"] == pytest.approx(att["before_work_floor_s"], rel=1e-9)
    assert "GEMM outputs and attention" in fp8["assumption"]
    assert "nvfp4, 0.5625 B" in fp4["assumption"]


def test_q_proj_keeps_its_bf16_output_and_reads_fp8_inputs():
    # q_proj, batch 64, 4096 x 4096, one call: weights 16.8 MB -> 1 B each, input
    # 64 x 4096 x 2 -> x 1 B, output 64 x 4096 x 2 B stays: activations 786,432 B
    from rooflab.hardware.resolve import load_roof
    from rooflab.model.whatif_precision import change_precision
    from rooflab.workloads.llm import decode_step, load_config
    from rooflab.workloads.llm.settings import settings_for

    cfg = load_config("llama-3-8b")
    step = decode_step(cfg, settings_for(cfg), 64, 1024)
    q = next(k for k in step.kernels() if k.name == "q_proj")
    assert q.meta["model_dtype_share"] == {"activations": 0.5, "kv": 1.0}
    w = change_precision(load_roof("b200"), [q], "fp8")
    new = w.moves[0][1]
    split = {p: v / 32 for p, v in new.meta["bytes_split"].items()}
    assert split == {"weights": 4096 * 4096 * 1.0, "activations": 64 * 4096 * (1 + 2)}
    assert new.meta["weight_bytes_per_param"] == 1.0 and new.precision == "fp8"
    # the kept share follows, so a chained what-if reads it right: 2 / 3 of 786,432 B
    assert new.meta["model_dtype_share"]["activations"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(("fmt", "per"), [("nvfp4", 0.5625), ("mxfp4", 0.53125)])
def test_quantize_takes_the_fp4_formats_as_llm_weights_counts_them(tmp_path, fmt, per):
    base, _ = _llm(tmp_path, "llama-3-8b")
    _, want = _llm(tmp_path, "llama-3-8b", "--weights", fmt)
    w = _whatif(base, "--quantize", fmt)
    _same_per_kernel(w, want)
    assert f"stored in {per:.4g} byte(s) each ({fmt}:" in w["assumption"]


def test_quantize_unknown_format_names_the_targets(tmp_path):
    base, _ = _llm(tmp_path, "llama-3-8b")
    r = run_cli("whatif", str(base), "--on", "b200", "--quantize", "nvfp5")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "unknown weight format 'nvfp5'" in r.stderr and "nvfp4, mxfp4" in r.stderr
    r = run_cli("whatif", str(base), "--on", "b200", "--quantize", "nvfp4", "--group", "64")
    assert r.returncode != 0 and "drop --group" in r.stderr
