"""Weights stored in llama.cpp's ggml types: the exact bytes per weight of each linear,
from a GGUF file's tensor table (gguf_config) or one type given to --weights (q4_k).

A ggml quantized type stores blocks: Q4_K packs 256 weights into 144 B (4.5 bits: 4-bit
values, 6-bit scales and mins per 32, an fp16 super-scale and min), Q6_K 256 into 210 B,
Q8_0 32 into 34 B (gguf.GGML_QUANT_SIZES; llama.cpp ggml-common.h block_q4_K ...). A file
mixes them: Q4_K_M keeps half of attn_v and ffn_down and the output matrix at Q6_K, the
norms at F32. Each kernel's bytes per weight here is its tensors' stored bytes over their
weights, so that summed over the model's layers it gives the file's bytes exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import InputError

# (block size in weights, block bytes) of the types --weights takes by name, as
# gguf.GGML_QUANT_SIZES gives them (tests/test_s26_gguf_quant.py checks the copy against
# the package, which a config.json run does not need installed)
GGML_BLOCKS: dict[str, tuple[int, int]] = {
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24),
    "Q8_0": (32, 34), "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144),
    "Q5_K": (256, 176), "Q6_K": (256, 210), "IQ2_XXS": (256, 66), "IQ2_XS": (256, 74),
    "IQ2_S": (256, 82), "IQ3_XXS": (256, 98), "IQ3_S": (256, 110), "IQ1_S": (256, 50),
    "IQ1_M": (256, 56), "IQ4_NL": (32, 18), "IQ4_XS": (256, 136), "TQ1_0": (256, 54),
    "TQ2_0": (256, 66),
}
# a ggml type -> the rooflab weight dtype whose math it stands for (dequantized to --act
# for the matmuls): its nominal integer width, bytes from the blocks above. Q5 has no
# rooflab int5: int6 names its class, the bytes are Q5's own.
PLAIN = {"F32": "fp32", "F16": "fp16", "BF16": "bf16", "F64": "fp32"}


def weight_class(type_name: str) -> str:
    """The rooflab --weights dtype a ggml type is counted under (math and what-ifs)."""
    t = type_name.upper()
    if t in PLAIN:
        return PLAIN[t]
    if t.startswith(("Q8", "I8")):
        return "int8"
    if t.startswith(("Q6", "Q5")):
        return "int6"
    if t.startswith(("Q4", "IQ4")):
        return "int4"
    if t.startswith(("Q3", "IQ3")):
        return "int3"
    if t in ("MXFP4", "NVFP4"):
        return "fp4"
    return "int2"      # Q2_K, IQ2_*, IQ1_*, TQ*: two bits or fewer


# llama.cpp's mix names, said when one is given to --weights (no one type's bytes)
MIXES = ("q2_k_s", "q3_k_s", "q3_k_m", "q3_k_l", "q4_k_s", "q4_k_m", "q5_k_s", "q5_k_m",
         "iq2_m", "iq3_m", "iq3_xs")


def ggml_weights(name: str | None) -> str | None:
    """The ggml type a --weights value names (q4_k, Q8_0, iq4_xs), or None."""
    if name is None:
        return None
    key = str(name).strip().upper()
    if key.lower() in MIXES:
        raise InputError(f"--weights {name}: a llama.cpp mix (mostly {key[:4]}, with some "
                         f"tensors wider, which ones by llama.cpp's per-layer rules); give "
                         f"the .gguf file itself for its exact bytes, or one type "
                         f"(--weights {key[:4].lower()})")
    return key if key in GGML_BLOCKS else None


@dataclass(frozen=True)
class StoredWeights:
    """Bytes per weight of each linear kernel (rooflab's names: q_proj, down_proj,
    expert_up_proj, lm_head) as stored, the embedding table's, and the norm weights' and
    biases' (`vector`; None: at the activation dtype, as rooflab counts them otherwise)."""

    label: str                       # Q4_K_M (the file's type) or Q4_K (--weights q4_k)
    default: float                   # bytes per weight of a linear not in `modules`
    modules: tuple[tuple[str, float], ...] = ()
    embedding: float | None = None   # None: `default`
    vector: float | None = None
    words: str = ""                  # "4.85 bits/weight: Q4_K 193 tensors, Q6_K 33, F32 65"
    source: str = ""                 # "the GGUF file's tensor types" or "--weights q4_k"
    main_type: str = ""              # the type holding the most bytes (Q4_K)
    file_bytes: int = 0              # all tensors of the file (0: not from a file)
    # each layer's tensors' bytes as the file stores them (blk.N.*), for --pp's stages;
    # under --tp one device's share of each (parallel.shard: tp > 1)
    layer_bytes: tuple[float, ...] = ()
    tp: int = 1

    def of(self, module: str) -> float:
        """Bytes per weight of linear `module` (an expert's: expert_up_proj)."""
        return dict(self.modules).get(module, self.default)

    @property
    def table(self) -> float:
        return self.default if self.embedding is None else self.embedding

    def to_dict(self) -> dict[str, object]:
        return {"format": self.label, "summary": self.words, "source": self.source,
                "main_type": self.main_type,
                "bytes_per_weight": {"default": self.default, **dict(self.modules),
                                     "embedding": self.table, "vector": self.vector},
                "file_tensor_bytes": self.file_bytes or None}

    def only(self, module: str) -> StoredWeights:
        """These weights as one linear sees them: its own bytes per weight as the default."""
        return replace(self, default=self.of(module))


def uniform(type_name: str) -> StoredWeights:
    """Every matrix, the embedding table included, in one ggml type (--weights q4_k: 144 B
    per 256 weights, 0.5625 B)."""
    block, size = GGML_BLOCKS[type_name]
    per = size / block
    return StoredWeights(label=type_name.lower(), default=per,
                         words=f"{size} B per block of {block} weights: {per:.6g} B, "
                               f"{8 * per:.4g} bits per weight",
                         source="", main_type=type_name)
