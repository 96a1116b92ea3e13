"""The defaults a family's transformers config class fills in for fields its published
config.json leaves out, applied before the required-field check.

google/gemma-3-{4b,12b,27b}-it publish a `gemma3` wrapper whose text_config omits every
field equal to a Gemma3TextConfig default: the 4B one has only hidden_size,
intermediate_size, model_type, num_hidden_layers, rope_scaling and sliding_window. Read as
it stands it was refused (no vocab_size), and with the named fields added by hand head_dim
came out as hidden / heads (320 on the 4B) where transformers builds 256 (review s20 r8 F1).
"""

from __future__ import annotations

from typing import Any

# transformers' Gemma3TextConfig.__init__ defaults (models/gemma3/configuration_gemma3.py),
# only the fields rooflab reads; hidden_size, intermediate_size and num_hidden_layers
# also have defaults there (2304, 9216, 26: no released model's), so a config without
# them stays refused
FAMILY_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "num_attention_heads": 8,
                    "num_key_value_heads": 4, "head_dim": 256,
                    "max_position_embeddings": 131_072, "sliding_window": 4096,
                    "hidden_activation": "gelu_pytorch_tanh"},
}
CLASS_NAMES = {"gemma3_text": "Gemma3TextConfig"}
# applied without a word: it names the activation only, no count depends on it
UNSAID = frozenset({"hidden_activation"})


def with_family_defaults(d: dict[str, Any], model_type: str
                         ) -> tuple[dict[str, Any], str | None]:
    """`d` with the family's defaults for the fields it leaves out (absent or null), and a
    note naming them (None when none was needed)."""
    defaults = FAMILY_DEFAULTS.get(model_type)
    if not defaults:
        return d, None
    used = {k: v for k, v in defaults.items() if d.get(k) is None}
    told = {k: v for k, v in used.items() if k not in UNSAID}
    if not told:
        return {**d, **used}, None
    said = ", ".join(f"{k} {v}" for k, v in told.items())
    return {**d, **used}, (f"the {model_type} config leaves out {', '.join(told)}: "
                           f"transformers' {CLASS_NAMES[model_type]} defaults used ({said}), "
                           f"as transformers builds the model")
