"""workloads/llm/config.py (538 lines) was split into model_config, config_fields,
config_parse and config_names (review 19e F-j's size budget); rooflab imports each name
from the module that holds it (review r1 F4)."""

from __future__ import annotations

import rooflab.workloads.llm.config as config
from rooflab.workloads.llm import config_names, config_parse


def test_config_keeps_only_what_benchmarks_import():
    """Review r1 F4: the split-off names are imported from their owners; config.py keeps
    load_config and parse_config (benchmarks/llm_speed.py, llm_validation.py), the same
    objects as in the modules that hold them."""
    assert config.__all__ == ["load_config", "parse_config"]
    assert config.parse_config is config_parse.parse_config
    assert config.load_config is config_names.load_config
    assert not hasattr(config, "ModelConfig") and not hasattr(config, "ALIASES")


def test_gpt_style_rules_are_one_set():
    """The non-gated MLP and the LayerNorm rule named the same 8 families twice; one set
    now, so a family added for one is added for both (GPT-2: both; Llama: neither)."""
    assert config_parse.LAYERNORM is config_parse.NON_GATED
    assert len(config_parse.NON_GATED) == 8 and "gpt2" in config_parse.NON_GATED
    gpt2, llama = config_names.load_config("gpt2"), config_names.load_config("llama-2-7b")
    assert (gpt2.gated_mlp, gpt2.norm) == (False, "layernorm")
    assert (llama.gated_mlp, llama.norm) == (True, "rmsnorm")
