"""A Hugging Face config.json as a frozen ModelConfig (no network, ever). The work is split
by what each part does, and rooflab imports each name from the part that holds it:

  * model_config: the values (ModelConfig, MoE, MLA);
  * config_fields: typed, checked reads of the JSON's fields (aliases, ints, flags);
  * config_parse: parse_config, the family rules (Llama-like, MoE, MLA, GPT-2, sliding
    windows, wrappers) that turn the fields into a ModelConfig;
  * config_names: load_config and bundled_names (a path, or a bundled config by name);
  * quant_config: the `quantization_config` as a Quantization.

load_config and parse_config stay importable from here: benchmarks/ import them so.
"""

from __future__ import annotations

from .config_names import load_config
from .config_parse import parse_config

__all__ = ["load_config", "parse_config"]
