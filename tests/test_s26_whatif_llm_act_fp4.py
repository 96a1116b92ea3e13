"""`rooflab llm --act nvfp4|mxfp4`: W4A4 on Blackwell. The linear kernels multiply in fp4
on the fp4_tensor ceiling (a roof without one holds them to fp8 and says so), their inputs
are 0.5 B plus the format's block scale, and fp4 activations need fp4 weights."""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import decode_step, load_config, time_step
from rooflab.workloads.llm.settings import Settings, settings_for


def _q_proj(**kw):
    cfg = load_config("llama-3-8b")
    s = settings_for(cfg, **kw)
    step = decode_step(cfg, s, 64, 1024)
    return s, step, next(k for k in step.kernels() if k.name == "q_proj")


def test_nvfp4_activations_count_their_block_scales():
    s, _, q = _q_proj(act="nvfp4")
    # --act nvfp4 alone sets nvfp4 weights (as --act fp8 sets fp8 weights)
    assert (s.act, s.act_format, s.weights, s.weight_format) == ("fp4", "nvfp4", "fp4", "nvfp4")
    assert s.act_bytes == 0.5 + 1 / 16 and s.precision == "fp4"
    # batch 64, 4096 x 4096: input 64 x 4096 x 0.5625 B, output at bf16 (the GEMM returns
    # the model dtype), weights 4096 x 4096 x 0.5625 B
    # per call; the kernel is its 32 layers' calls
    split = {part: v / 32 for part, v in q.meta["bytes_split"].items()}
    assert split["activations"] == 64 * 4096 * 0.5625 + 64 * 4096 * 2 == 671_744
    assert split["weights"] == 4096 * 4096 * 0.5625
    assert q.precision == "fp4" and q.total_flop == 32 * 2 * 64 * 4096 * 4096
    # norms and the residual stay at the model dtype, as under --act fp8
    s8 = settings_for(load_config("llama-3-8b"), act="fp8")
    assert s.wide == s8.wide == "bf16"


def test_mxfp4_activations_are_0_53125_bytes():
    s, _, q = _q_proj(act="mxfp4")
    assert s.act_bytes == 0.5 + 1 / 32 and s.weight_bytes == 0.53125
    assert q.meta["bytes_split"]["activations"] == 32 * 64 * 4096 * (0.53125 + 2)


def test_fp4_ceiling_on_b200_and_fp8_stand_in_on_h100():
    _, step, _ = _q_proj(act="nvfp4")
    for name, held in (("b200", "fp4"), ("h100 sxm", "fp8")):
        roof = load_roof(name)
        t = time_step(step, roof)
        q = next(p for p in t.analysis.points if p.kernel == "q_proj")
        # B200: fp4_tensor, 9 PFLOP/s dense; H100: no fp4, its fp8 tensor stands in
        assert q.peak_flop_per_s == roof.find_compute(held, "tensor").value, name
    r = run_cli("llm", "llama-3-8b", "--on", "h100 sxm", "--act", "nvfp4", "--phase",
                "decode")
    assert r.returncode == 0, r.stderr
    assert "has no fp4 ceiling; using fp8 tensor" in r.stdout + r.stderr


def test_fp4_activations_need_fp4_weights():
    with pytest.raises(InputError, match="needs fp4 weights; --weights int4"):
        settings_for(load_config("llama-3-8b"), weights="int4", act="nvfp4")
    with pytest.raises(InputError, match="say which format, nvfp4"):
        settings_for(load_config("llama-3-8b"), act="fp4")
    r = run_cli("llm", "llama-3-8b", "--on", "b200", "--act", "nvfp4", "--weights", "fp8")
    assert r.returncode == 2 and r.stderr.startswith("error: --act nvfp4 (W4A4")
    assert "Traceback" not in r.stderr


def test_other_weights_drop_the_fp4_gemms():
    # a --whatif row with fp8 weights cannot keep fp4 GEMMs: it runs weight-only at bf16
    s = settings_for(load_config("llama-3-8b"), act="nvfp4")
    w = s.with_(weights="fp8")
    assert (w.act, w.act_format, w.weights) == ("bf16", "", "fp8")
    assert s.with_(kv="fp8").act == "fp4"


def test_gpt_oss_mxfp4_w4a4_keeps_its_bf16_modules():
    # the config's mxfp4 experts multiply in fp4; its kept attention and router stay bf16
    cfg = load_config("gpt-oss-20b")
    s = settings_for(cfg, act="mxfp4")
    assert (s.weights, s.act, s.act_format) == ("fp4", "fp4", "mxfp4")
    step = decode_step(cfg, s, 1, 576)
    ks = {k.name: k for k in step.kernels()}
    assert ks["expert_up_proj"].precision == "fp4" and ks["q_proj"].precision == "bf16"


def test_json_says_the_formats(tmp_path):
    r = run_cli("llm", "llama-3-8b", "--on", "b200", "--act", "nvfp4", "--json", "-q")
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)["llm"]["settings"]
    assert (st["act"], st["act_format"], st["weights"], st["weight_format"]) == (
        "fp4", "nvfp4", "fp4", "nvfp4")
    # Settings(act="fp4") without a format takes the weights' own
    assert Settings(weights="fp4", group_size=32, scale_dtype="uint8",
                    act="fp4").act_format == "mxfp4"
