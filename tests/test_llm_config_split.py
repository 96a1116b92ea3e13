"""workloads/llm/config.py (538 lines) was split into model_config, config_fields,
config_parse and config_names (review 19e F-j's size budget): config stays the one place
the rest of rooflab imports from, so every public name it had is still there, the same
object as in the module that now holds it."""

from __future__ import annotations

import rooflab.workloads.llm.config as config
from rooflab.workloads.llm import config_fields, config_names, config_parse, model_config

# The public names of config.py before the split (its tables, values and functions).
OLD_NAMES = (
    "ALIASES", "REQUIRED", "NON_GATED", "LAYERNORM", "LEARNED_POSITIONS", "TIED_BY_DEFAULT",
    "POST_NORMS", "SLIDING_PATTERN", "TEXT_MODEL_TYPE", "NARROW_EXPERTS", "ENCODER_ONLY",
    "CHECKED", "QK_NORM", "SIZE_RE", "SIZE_WORDS", "MoE", "MLA", "ModelConfig",
    "Quantization", "quantization", "parse_config", "bundled_names", "load_config",
)


def test_every_old_name_is_importable_from_config():
    missing = [n for n in OLD_NAMES if not hasattr(config, n)]
    assert not missing
    assert set(OLD_NAMES) <= set(config.__all__)


def test_config_re_exports_the_split_modules_objects():
    assert config.ModelConfig is model_config.ModelConfig
    assert config.ALIASES is config_fields.ALIASES
    assert config.parse_config is config_parse.parse_config
    assert config.load_config is config_names.load_config


def test_gpt_style_rules_are_one_set():
    """The non-gated MLP and the LayerNorm rule named the same 8 families twice; one set
    now, so a family added for one is added for both (GPT-2: both; Llama: neither)."""
    assert config.LAYERNORM is config.NON_GATED
    assert len(config.NON_GATED) == 8 and "gpt2" in config.NON_GATED
    gpt2, llama = config.load_config("gpt2"), config.load_config("llama-2-7b")
    assert (gpt2.gated_mlp, gpt2.norm) == (False, "layernorm")
    assert (llama.gated_mlp, llama.norm) == (True, "rmsnorm")
