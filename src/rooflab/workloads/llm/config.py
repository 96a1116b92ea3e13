"""A Hugging Face config.json as a frozen ModelConfig (no network, ever): the one place the
rest of rooflab imports it from. The work is split by what each part does:

  * model_config: the values (ModelConfig, MoE, MLA);
  * config_fields: typed, checked reads of the JSON's fields (aliases, ints, flags);
  * config_parse: parse_config, the family rules (Llama-like, MoE, MLA, GPT-2, sliding
    windows, wrappers) that turn the fields into a ModelConfig;
  * config_names: load_config and bundled_names (a path, or a bundled config by name);
  * quant_config: the `quantization_config` as a Quantization.
"""

from __future__ import annotations

from .config_fields import ALIASES, REQUIRED
from .config_names import SIZE_RE, SIZE_WORDS, bundled_names, load_config
from .config_parse import (
    CHECKED,
    ENCODER_ONLY,
    LAYERNORM,
    LEARNED_POSITIONS,
    NARROW_EXPERTS,
    NON_GATED,
    POST_NORMS,
    QK_NORM,
    SLIDING_PATTERN,
    TEXT_MODEL_TYPE,
    TIED_BY_DEFAULT,
    parse_config,
)
from .model_config import MLA, ModelConfig, MoE
from .quant_config import Quantization, quantization

__all__ = [
    "ALIASES", "CHECKED", "ENCODER_ONLY", "LAYERNORM", "LEARNED_POSITIONS", "MLA", "NARROW_EXPERTS",
    "NON_GATED", "POST_NORMS", "QK_NORM", "REQUIRED", "SIZE_RE", "SIZE_WORDS", "SLIDING_PATTERN",
    "TEXT_MODEL_TYPE", "TIED_BY_DEFAULT", "ModelConfig", "MoE", "Quantization", "bundled_names",
    "load_config", "parse_config", "quantization",
]
