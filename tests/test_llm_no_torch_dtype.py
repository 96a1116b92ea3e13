"""A config.json with no torch_dtype (gpt-oss, GPT-2) is said to have none: the setup line
read "fp16 from the config's torch_dtype (float16)", a value the config never gave."""

from __future__ import annotations

import json

from rooflab.cli.main import main
from rooflab.workloads.llm.config import load_config, parse_config


def test_gpt_oss_has_no_torch_dtype_and_says_bf16_from_its_mxfp4_checkpoint(capsys):
    assert load_config("gpt-oss-20b").dtype == ""
    assert main(["llm", "gpt-oss-20b", "--on", "h100", "--json"]) == 0
    setup = json.dumps(json.loads(capsys.readouterr().out))
    # s19 r6 F6: an mxfp4 checkpoint's other tensors are bf16, as vLLM runs it
    assert "no torch_dtype in the config (bf16: an mxfp4 checkpoint" in setup
    assert "the config's torch_dtype (float16)" not in setup


def test_a_given_torch_dtype_is_still_read():
    d = json.loads(json.dumps({"model_type": "llama", "hidden_size": 256,
                               "num_attention_heads": 4, "num_hidden_layers": 2,
                               "intermediate_size": 512, "vocab_size": 1000,
                               "torch_dtype": "bfloat16"}))
    assert parse_config(d).dtype == "bfloat16"
    assert parse_config({k: v for k, v in d.items() if k != "torch_dtype"}).dtype == ""
