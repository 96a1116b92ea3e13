"""gpt-oss's config gives no torch_dtype; its mxfp4 checkpoint stores the non-expert
tensors in bf16 and vLLM runs it with bf16 activations, so rooflab runs it in bf16 and
says why (review s19 r6 F6). A config with no torch_dtype and no mxfp4 keeps fp16."""

import json

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.settings import settings_for
from rooflab.workloads.llm.settings_dtype import bf16_fallback_note


def test_gpt_oss_runs_bf16_from_its_mxfp4_checkpoint(capsys):
    cfg = load_config("gpt-oss-20b")
    assert cfg.dtype == "" and cfg.quantization.method == "mxfp4"
    s = settings_for(cfg, roof=load_roof("H100"))
    assert (s.act, s.kv, s.base) == ("bf16", "bf16", "bf16")
    assert main(["llm", "gpt-oss-20b", "--on", "H100", "--json"]) == 0
    settings = json.loads(capsys.readouterr().out)["llm"]["settings"]
    assert settings["dtype_from"] == ("no torch_dtype in the config (bf16: an mxfp4 "
                                      "checkpoint, its other tensors bf16, as vLLM runs it)")


def test_without_bf16_it_falls_back_and_says_so():
    cfg, t4 = load_config("gpt-oss-20b"), load_roof("T4")
    assert settings_for(cfg, roof=t4).act == "fp16"
    (note,) = bf16_fallback_note(cfg, t4)
    assert note.startswith("gpt-oss-20b's mxfp4 checkpoint (no torch_dtype: bf16")
    assert "torch_dtype ()" not in note


def test_gpt2_keeps_float16_assumed():
    cfg = load_config("gpt2")
    assert cfg.dtype == "" and settings_for(cfg).base == "fp16"
    assert settings_for(cfg).dtype_from == "no torch_dtype in the config (float16 assumed)"
