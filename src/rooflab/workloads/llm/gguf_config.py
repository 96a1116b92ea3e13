"""A llama.cpp GGUF file as a ModelConfig with its weights exactly as stored.
(DeepSeek-2's MLA, gpt-oss's and Llama 4's header keys: gguf_archs.)

The header's `{arch}.*` hyper-parameters become the fields of a Hugging Face config.json
(so config_parse's family rules apply: GQA, sliding windows, MoE widths, tied tables), and
the tensor table gives every matrix's ggml type and shape: each linear kernel's bytes per
weight is its tensors' stored bytes over their weights (stored_weights.StoredWeights), so
a Q4_K_M file's mix of Q4_K, Q6_K and F32 tensors is counted as stored. Only the header is
read (gguf_header): never a tensor's data.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ...errors import InputError, require
from ...units import si
from .config_parse import parse_config
from .gguf_archs import arch_fields, arch_notes, header_int
from .gguf_header import SPLIT_NAME, ArrayLength, GgufHeader, TensorInfo, read_model
from .model_config import ModelConfig
from .stored_weights import StoredWeights

# general.architecture -> the transformers model_type whose layout it is (llama.cpp
# convert_hf_to_gguf.py's classes); any other arch is refused, by name
ARCH_TYPES = {"llama": "llama", "mistral3": "mistral", "qwen2": "qwen2",
              "qwen2moe": "qwen2_moe", "qwen3": "qwen3", "qwen3moe": "qwen3_moe",
              "gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3_text", "phi3": "phi3",
              "gpt2": "gpt2", "starcoder": "gpt_bigcode", "deepseek2": "deepseek_v2",
              "gpt-oss": "gpt_oss", "llama4": "llama4_text"}
# GGUF tensor part (blk.N.<part>.weight) -> rooflab's linear kernels it holds; a fused
# tensor (Phi-3's attn_qkv, GPT-2's) holds several at one type
KERNELS = {"attn_q": ("q_proj",), "attn_k": ("k_proj",), "attn_v": ("v_proj",),
           "attn_qkv": ("q_proj", "k_proj", "v_proj"), "attn_output": ("o_proj",),
           "ffn_gate": ("gate_proj",), "ffn_up": ("up_proj",), "ffn_down": ("down_proj",),
           "ffn_gate_exps": ("expert_gate_proj",), "ffn_up_exps": ("expert_up_proj",),
           "ffn_down_exps": ("expert_down_proj",),
           "ffn_gate_up_exps": ("expert_gate_proj", "expert_up_proj"),
           "ffn_gate_shexp": ("shared_gate_proj",), "ffn_up_shexp": ("shared_up_proj",),
           "ffn_down_shexp": ("shared_down_proj",), "ffn_gate_inp": ("router",),
           # DeepSeek's MLA (llama-model.cpp LLM_ARCH_DEEPSEEK2): the low-rank query, the
           # latent's down-projection, and its up-projection, one attn_kv_b in old files,
           # split per head into attn_k_b and attn_v_b in the current layout
           "attn_q_a": ("q_a_proj",), "attn_q_b": ("q_b_proj",),
           "attn_kv_a_mqa": ("kv_a_proj",), "attn_kv_b": ("kv_b_proj",),
           "attn_k_b": ("kv_b_proj",), "attn_v_b": ("kv_b_proj",)}
# the absorbed decode's kernels (kernels.MLA_ABSORBED) are these tensors themselves in
# llama.cpp: their bytes per weight are kept under those names too
ABSORBED = {"attn_k_b": "q_absorb", "attn_v_b": "v_absorb"}
OUTSIDE = {"token_embd": "embedding", "position_embd": "embedding", "output": "lm_head"}
# blk.N.ffn_gate.E.weight: one expert's tensor (the first Mixtral GGUFs)
EXPERT_PART = re.compile(r"(ffn_gate|ffn_up|ffn_down)\.\d+$")
BLOCK = re.compile(r"blk\.(\d+)\.(.+?)(\.weight|\.bias)?$")


def load_gguf(path: str | Path) -> ModelConfig:
    """The model of a .gguf file, its default weights the file's tensors as stored."""
    h = read_model(path)
    arch = _arch(h)
    if not h.tensors:
        raise InputError(f"{h.path}: the GGUF file has no tensors (a vocabulary-only file, "
                         f"as llama.cpp's ggml-vocab-*.gguf); give the model's .gguf")
    d = _hf_fields(h, arch)
    split = SPLIT_NAME.fullmatch(Path(h.path).name)
    cfg = parse_config(d, name=split.group(1) if split else Path(h.path).stem, where=h.path)
    stored = stored_weights(h, cfg)
    cfg = cfg.with_(stored=stored, source=h.path)
    return cfg.with_(notes=cfg.notes + _notes(h, cfg, stored))


def _arch(h: GgufHeader) -> str:
    arch = h.metadata.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise InputError(f"{h.path}: metadata key 'general.architecture' is missing; "
                         f"every llama.cpp GGUF model names its architecture there (is this "
                         f"a model file, not a LoRA adapter or a vocabulary?)")
    if arch not in ARCH_TYPES:
        raise InputError(f"{h.path}: general.architecture '{arch}' is not one rooflab "
                         f"reads from GGUF ({', '.join(ARCH_TYPES)}); pass the model's "
                         f"Hugging Face config.json with --weights q4_k (or another ggml "
                         f"type) instead")
    return arch


def _count(h: GgufHeader, key: str, required: bool = True) -> int | None:
    """A positive integer metadata value, or an error naming the file and the key."""
    return header_int(h, key, required)


def _vocab(h: GgufHeader, arch: str) -> int:
    """Rows of the embedding table (its shape: padded vocabularies included), else the
    header's vocab_size, else the tokenizer's token count."""
    embd = next((t for t in h.tensors if t.name == "token_embd.weight"), None)
    if embd is not None and len(embd.shape) == 2:
        return embd.shape[1]
    tokens = h.metadata.get("tokenizer.ggml.tokens")
    n = _count(h, f"{arch}.vocab_size", required=False) or (
        tokens.length if isinstance(tokens, ArrayLength) else
        len(tokens) if isinstance(tokens, list) else None)
    if not n:
        raise InputError(f"{h.path}: no vocabulary size: no token_embd.weight tensor, no "
                         f"'{arch}.vocab_size' and no 'tokenizer.ggml.tokens' key")
    return n


def _hf_fields(h: GgufHeader, arch: str) -> dict[str, Any]:
    """The header's hyper-parameters under the config.json names config_parse reads."""
    names = {t.name for t in h.tensors}
    experts = _count(h, f"{arch}.expert_count", required=False)
    model_type = "mixtral" if arch == "llama" and experts else ARCH_TYPES[arch]
    d: dict[str, Any] = {
        "model_type": model_type,
        "hidden_size": _count(h, f"{arch}.embedding_length"),
        "num_hidden_layers": _count(h, f"{arch}.block_count"),
        "num_attention_heads": _count(h, f"{arch}.attention.head_count"),
        "num_key_value_heads": _count(h, f"{arch}.attention.head_count_kv", required=False),
        "intermediate_size": _count(h, f"{arch}.feed_forward_length"),
        "max_position_embeddings": _count(h, f"{arch}.context_length", required=False),
        "head_dim": _count(h, f"{arch}.attention.key_length", required=False),
        "vocab_size": _vocab(h, arch),
        # llama.cpp's loader turns Phi-3's window off (llama-model.cpp, LLM_ARCH_PHI3: "Phi
        # SWA is currently disabled - results might be suboptimal for some models",
        # swa_type NONE, n_swa 0, llama.cpp PR #13676): its cache keeps every token (v1-F3)
        # (llama4's is read by gguf_archs: 0 there means no chunked attention)
        "sliding_window": None if arch in ("phi3", "llama4") else _count(
            h, f"{arch}.attention.sliding_window", required=False),
        # no output.weight: llama.cpp reads the logits off token_embd (tied)
        "tie_word_embeddings": "output.weight" not in names,
        # llama.cpp's default KV cache type (f16) and its GPU compute type
        "torch_dtype": "float16",
        "attention_bias": "blk.0.attn_q.bias" in names or "blk.0.attn_qkv.bias" in names,
        # Gemma 2's score cap, for the --attn naive note (a float; config_parse checks it)
        "attn_logit_softcapping": h.metadata.get(f"{arch}.attn_logit_softcapping"),
    }
    if experts:
        d["num_local_experts"] = experts
        d["num_experts_per_tok"] = _count(h, f"{arch}.expert_used_count")
        d["moe_intermediate_size"] = _count(h, f"{arch}.expert_feed_forward_length",
                                            required=False)
        d["shared_expert_intermediate_size"] = _count(
            h, f"{arch}.expert_shared_feed_forward_length", required=False)
    d.update(arch_fields(h, arch))     # DeepSeek-2's MLA, gpt-oss's windows, Llama 4's MoE
    return {k: v for k, v in d.items() if v is not None}


def _kernels(t: TensorInfo, gated: bool, fused_mlp: bool) -> tuple[str, ...]:
    """rooflab's kernels a 2-D (or 3-D, experts) tensor holds; () when none."""
    base = t.name.removesuffix(".weight")
    if base in OUTSIDE:
        return (OUTSIDE[base],)
    m = BLOCK.fullmatch(t.name)
    part = m.group(2) if m else ""
    if EXPERT_PART.fullmatch(part):
        return ("expert_" + part.split(".")[0].removeprefix("ffn_") + "_proj",)
    if part == "ffn_up" and gated and fused_mlp:   # Phi-3: gate and up in one tensor
        return ("gate_proj", "up_proj")
    return KERNELS.get(part, ())


def _fused_mlp(h: GgufHeader) -> bool:
    """Whether ffn_up holds gate and up together (Phi-3: no ffn_gate tensor)."""
    names = {t.name for t in h.tensors}
    return "blk.0.ffn_up.weight" in names and "blk.0.ffn_gate.weight" not in names


def stored_weights(h: GgufHeader, cfg: ModelConfig) -> StoredWeights:
    """Bytes per weight of each kernel, of the table and of the 1-D tensors, as stored."""
    fused_mlp = _fused_mlp(h)
    nbytes: dict[str, int] = defaultdict(int)
    elems: dict[str, int] = defaultdict(int)
    for t in h.tensors:
        # biases are vectors whatever their dims (gpt-oss's per-expert ffn_*_exps.bias: 2-D)
        keys = (("vector",) if len(t.shape) < 2 or t.name.endswith(".bias")
                else _kernels(t, cfg.gated_mlp, fused_mlp))
        for k in keys:
            nbytes[k] += t.nbytes
            elems[k] += t.elements
    per = {k: nbytes[k] / elems[k] for k in nbytes if elems[k]}
    per.update(_absorbed(h))
    embedding = per.pop("embedding", None)
    vector = per.pop("vector", None)
    if cfg.tied_embeddings and embedding is not None:
        per["lm_head"] = embedding          # the logits read the one table
    mats = [k for k in nbytes if k not in ("embedding", "vector")]
    default = (sum(nbytes[k] for k in mats) / sum(elems[k] for k in mats) if mats
               else embedding or 2.0)
    return StoredWeights(label=_label(h), default=default, modules=tuple(sorted(per.items())),
                         embedding=embedding, vector=vector, words=_words(h),
                         source="the GGUF file's tensor types", main_type=_main_type(h),
                         file_bytes=sum(t.nbytes for t in h.tensors),
                         layer_bytes=_layer_bytes(h, cfg.layers))


def _absorbed(h: GgufHeader) -> dict[str, float]:
    """Bytes per weight of attn_k_b and attn_v_b under the absorbed kernels' names."""
    nbytes: dict[str, int] = defaultdict(int)
    elems: dict[str, int] = defaultdict(int)
    for t in h.tensors:
        m = BLOCK.fullmatch(t.name)
        if m and m.group(2) in ABSORBED and not t.name.endswith(".bias"):
            nbytes[ABSORBED[m.group(2)]] += t.nbytes
            elems[ABSORBED[m.group(2)]] += t.elements
    return {k: nbytes[k] / elems[k] for k in nbytes if elems[k]}


def _layer_bytes(h: GgufHeader, layers: int) -> tuple[int, ...]:
    """Bytes of each layer's tensors (blk.N.*), N = 0 .. layers - 1."""
    out = [0] * layers
    for t in h.tensors:
        m = BLOCK.fullmatch(t.name)
        if m and int(m.group(1)) < layers:
            out[int(m.group(1))] += t.nbytes
    return tuple(out)


def _main_type(h: GgufHeader) -> str:
    """The ggml type holding the most bytes (Q4_K in a Q4_K_M file)."""
    by = Counter()
    for t in h.tensors:
        by[t.type_name] += t.nbytes
    return by.most_common(1)[0][0] if by else "F16"


def _label(h: GgufHeader) -> str:
    """The file's type as llama.cpp names it (general.file_type 15: Q4_K_M), else its
    main tensor type."""
    ft = h.metadata.get("general.file_type")
    names = {int(t): t.name for t in require("gguf", "gguf").LlamaFileType}
    if isinstance(ft, int) and ft in names:
        return names[ft].removeprefix("MOSTLY_").replace("ALL_", "")
    return _main_type(h)


def _words(h: GgufHeader) -> str:
    """'4.85 bits/weight: Q4_K 193 tensors, Q6_K 33, F32 65' (llama.cpp's BPW: all the
    file's tensor bytes over all its weights)."""
    total = sum(t.elements for t in h.tensors)
    bits = 8 * sum(t.nbytes for t in h.tensors) / total if total else 0.0
    kinds = Counter(t.type_name for t in h.tensors).most_common()
    listed = ", ".join(f"{name} {n}{' tensors' * (i == 0)}" for i, (name, n) in enumerate(kinds))
    return f"{bits:.3g} bits/weight: {listed}"


def _notes(h: GgufHeader, cfg: ModelConfig, stored: StoredWeights) -> tuple[str, ...]:
    """The file's bytes, the layers that differ, and what the count leaves out."""
    shards = h.metadata.get("split.count", 1)
    shards = f" and its {shards - 1} other shards" if isinstance(shards, int) and shards > 1 else ""
    notes = [f"GGUF file {Path(h.path).name}{shards}: {stored.label}, {stored.words}; "
             f"{si(stored.file_bytes, 'B')} of tensors ({len(h.tensors)}), read from the "
             f"header only; the KV cache at llama.cpp's default f16"]
    notes += _unalike(h, cfg)
    window = h.metadata.get("phi3.attention.sliding_window")
    if h.metadata.get("general.architecture") == "phi3" and isinstance(window, int) and window:
        notes.append(f"the header's phi3.attention.sliding_window ({window}) is not applied: "
                     f"llama.cpp disables Phi-3's sliding window (\"Phi SWA is currently "
                     f"disabled\", PR #13676), so every layer keeps and reads the whole "
                     f"context's KV cache")
    notes += arch_notes(h, str(h.metadata.get("general.architecture")), cfg.heads)
    left = [t for t in h.tensors if len(t.shape) >= 2 and not t.name.endswith(".bias")
            and not _kernels(t, cfg.gated_mlp, _fused_mlp(h))]
    if left:
        shown = ", ".join(f"{t.name} ({si(t.nbytes, 'B')})" for t in left[:3])
        notes.append(f"{len(left)} matrix tensor{'s' * (len(left) > 1)} rooflab does not "
                     f"table ({shown}{', ...' if len(left) > 3 else ''}): not counted")
    uncounted = sum(t.nbytes for t in h.tensors if t.name.endswith(UNCOUNTED))
    return (*notes, *_total_note(cfg, stored, uncounted))


def _unalike(h: GgufHeader, cfg: ModelConfig) -> list[str]:
    """A line when layers of one kind (dense, MoE) are stored at different types (a Q4_K_M
    file's wider attn_v / ffn_down in some layers). A dense layer beside MoE ones differs
    by its FFN, not its types, and the one-layer lines show each kind apart (review s27
    v2-F7: DeepSeek-V3's 3 dense layers read as "58 of 61 hold wider types")."""
    per_layer: dict[int, int] = defaultdict(int)
    for t in h.tensors:
        m = BLOCK.fullmatch(t.name)
        if m:
            per_layer[int(m.group(1))] += t.nbytes
    kinds: dict[str, dict[int, int]] = defaultdict(dict)
    for i, n in per_layer.items():
        mixed = 0 < cfg.moe_layers < cfg.layers
        kinds[("MoE layers " if cfg.is_moe_layer(i) else "dense layers ") if mixed else ""][i] = n
    out = []
    for kind, rows in kinds.items():
        if min(rows.values()) == max(rows.values()):
            continue
        lo, hi = min(rows, key=rows.__getitem__), max(rows, key=rows.__getitem__)
        wider = sum(v != rows[lo] for v in rows.values())
        out.append(f"{LAYERS_NOTE}: {wider} of {len(rows)} {kind}hold wider types "
                   f"(blk.{hi}: {si(rows[hi], 'B')}, blk.{lo}: {si(rows[lo], 'B')}); the "
                   f"one-layer line shows their mean, the step's and the memory's totals "
                   f"are the file's bytes")
    return out


# tensors the count leaves out on purpose, with why: DeepSeek-V3's router score-correction
# bias (HF e_score_correction_bias, one fp32 value an expert and MoE layer) only shifts
# which experts are chosen, no matmul reads it per token; the config.json count has no row
# for it either, so the two stay equal (review s27 v2-F7)
UNCOUNTED = (".exp_probs_b.bias",)


def _total_note(cfg: ModelConfig, stored: StoredWeights,
                uncounted: int = 0) -> tuple[str, ...]:
    """A line when the count of the weights is not the file's bytes: tensors it does not
    table (rope_freqs), or shapes the hyper-parameters do not give."""
    from .footprint import weight_bytes
    from .settings import settings_for

    counted = weight_bytes(cfg, settings_for(cfg))
    diff = stored.file_bytes - uncounted - counted
    if abs(diff) < 1:
        return ()
    left = f" ({uncounted:,} B of exp_probs_b.bias, not counted, aside)" if uncounted else ""
    return (f"the weights counted from the hyper-parameters and the tensors' types, "
            f"{counted:,.0f} B, differ from the file's {stored.file_bytes:,} B of tensors{left} by "
            f"{diff:+,.0f} B ({100 * diff / stored.file_bytes:+.1f} %): tensors the count "
            f"has no row for (rope_freqs, a shared expert's gate) or shapes it does not "
            f"model",)


LAYERS_NOTE = "the layers are not stored alike"
KV_CLAUSE = "; the KV cache at llama.cpp's default f16"


def run_notes(cfg: ModelConfig, s: Any, weights: str | None, act: str | None,
              kv: str | None) -> ModelConfig:
    """A GGUF config's notes as the run uses the file (s26 v1-F6): when --weights or --act
    nvfp4/mxfp4 replace its tensor types, the totals are no longer the file's bytes (the
    per-layer note goes) and an fp4 --act says what it replaced, as --weights does
    (study.overridden_quantization); a --kv drops the f16 default's clause."""
    st = getattr(cfg, "stored", None)
    if st is None:
        return cfg
    notes = [n.replace(KV_CLAUSE, "") if kv is not None else n for n in cfg.notes]
    if s.stored is not st:
        notes = [n for n in notes if not n.startswith(LAYERS_NOTE)]
        fmt = str(act or "").strip().lower()
        if weights is None and s.weights == "fp4" and s.act == "fp4" and fmt:
            notes.append(f"--act {fmt} replaces the GGUF file's tensor types ({st.label}, "
                         f"{st.words}) with {fmt} weights (W4A4); the tables count {fmt}")
    return cfg.with_(notes=tuple(notes))
