"""GGUF files for the s27 architecture tests (deepseek2, gpt-oss, llama4), shaped as
llama.cpp's converter writes them (conversion/deepseek.py, gpt_oss.py, llama4.py: the
header keys; llama-model.cpp: the tensors and their ggml shapes).

`header_only` writes a file whose tensor table is complete and whose data is a sparse
hole of the right length (os.truncate): a full-size DeepSeek-V2-Lite or gpt-oss-20b header
costs kilobytes of disk, and rooflab reads only the header. The tiny files' bytes are
counted by hand in each writer's comment (Q4_K 144 B per 256 weights, Q6_K 210 B per 256,
Q8_0 34 B per 32, MXFP4 17 B per 32, F16 2 B, F32 4 B).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from s26_gguf_files import gguf

T = gguf.GGMLQuantizationType
ALIGN = 32


def nbytes(shape: tuple[int, ...], typ) -> int:
    block, size = gguf.GGML_QUANT_SIZES[typ]
    return int(np.prod(shape)) // block * size


def header_only(path: Path, arch: str, meta: dict, tensors: list[tuple[str, tuple, object]],
                ) -> int:
    """Write `arch`'s header (meta: ints as uint32, floats as float32) and its tensor table
    (name, numpy shape (out, in) or (experts, out, in), ggml type), the data a sparse hole;
    returns the tensors' total bytes."""
    w = gguf.GGUFWriter(str(path), arch)
    for k, v in meta.items():
        if isinstance(v, bool):
            w.add_bool(k, v)
        elif isinstance(v, int):
            w.add_uint32(k, v)
        else:
            w.add_float32(k, v)
    total = 0
    for name, shape, typ in tensors:
        n = nbytes(shape, typ)
        total += n
        w.add_tensor_info(name, shape, np.dtype(np.float32), n, raw_dtype=typ)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    pad = sum(-(-nbytes(s, t) // ALIGN) * ALIGN for _, s, t in tensors)
    os.truncate(path, -(-path.stat().st_size // ALIGN) * ALIGN + pad)
    return total


def _keys(arch: str, d: dict) -> dict:
    return {f"{arch}.{k}": v for k, v in d.items()}


# --- DeepSeek-2 ------------------------------------------------------------------------

def deepseek2(path: Path, *, hidden: int, layers: int, heads: int, rank: int, rope: int,
              nope: int, v: int, ffn: int, experts: int, top_k: int, width: int,
              shared: int, dense: int, vocab: int, mla: bool = True, q_rank: int = 0,
              types: dict | None = None) -> int:
    """A deepseek2 file; `mla`: the current layout (attn_k_b/attn_v_b, *_mla keys),
    else the old one (attn_kv_b). `types`: tensor part -> ggml type (default Q4_K, the
    norms and router F32)."""
    ty = {"embd": T.Q4_K, "output": T.Q6_K, "attn": T.Q4_K, "kv_b": T.Q8_0, "ffn": T.Q4_K,
          "down": T.Q6_K, "exps": T.Q4_K, "down_exps": T.Q6_K, **(types or {})}
    meta = _keys("deepseek2", {
        "block_count": layers, "embedding_length": hidden, "feed_forward_length": ffn,
        "attention.head_count": heads, "context_length": 163840, "rope.dimension_count": rope,
        "attention.kv_lora_rank": rank, "expert_count": experts, "expert_used_count": top_k,
        "expert_feed_forward_length": width, "expert_shared_count": shared,
        "leading_dense_block_count": dense})
    if q_rank:
        meta["deepseek2.attention.q_lora_rank"] = q_rank
    if mla:     # conversion/deepseek.py: MLA as one compressed KV head
        meta.update(_keys("deepseek2", {
            "attention.head_count_kv": 1, "attention.key_length": rank + rope,
            "attention.value_length": rank, "attention.key_length_mla": nope + rope,
            "attention.value_length_mla": v}))
    else:
        meta.update(_keys("deepseek2", {"attention.head_count_kv": heads,
                                        "attention.key_length": nope + rope,
                                        "attention.value_length": v}))
    t = [("token_embd.weight", (vocab, hidden), ty["embd"])]
    for i in range(layers):
        b = f"blk.{i}."
        t += [(b + "attn_norm.weight", (hidden,), T.F32)]
        if q_rank:
            t += [(b + "attn_q_a.weight", (q_rank, hidden), ty["attn"]),
                  (b + "attn_q_a_norm.weight", (q_rank,), T.F32),
                  (b + "attn_q_b.weight", (heads * (nope + rope), q_rank), ty["attn"])]
        else:
            t += [(b + "attn_q.weight", (heads * (nope + rope), hidden), ty["attn"])]
        t += [(b + "attn_kv_a_mqa.weight", (rank + rope, hidden), ty["attn"]),
              (b + "attn_kv_a_norm.weight", (rank,), T.F32)]
        if mla:  # ggml {nope, rank, heads} and {rank, v, heads}
            t += [(b + "attn_k_b.weight", (heads, rank, nope), ty["kv_b"]),
                  (b + "attn_v_b.weight", (heads, v, rank), ty["kv_b"])]
        else:
            t += [(b + "attn_kv_b.weight", (heads * (nope + v), rank), ty["kv_b"])]
        t += [(b + "attn_output.weight", (hidden, heads * v), ty["attn"]),
              (b + "ffn_norm.weight", (hidden,), T.F32)]
        if i < dense:
            t += [(b + "ffn_gate.weight", (ffn, hidden), ty["ffn"]),
                  (b + "ffn_up.weight", (ffn, hidden), ty["ffn"]),
                  (b + "ffn_down.weight", (hidden, ffn), ty["down"])]
            continue
        t += [(b + "ffn_gate_inp.weight", (experts, hidden), T.F32),
              (b + "ffn_gate_exps.weight", (experts, width, hidden), ty["exps"]),
              (b + "ffn_up_exps.weight", (experts, width, hidden), ty["exps"]),
              (b + "ffn_down_exps.weight", (experts, hidden, width), ty["down_exps"])]
        if shared:
            t += [(b + "ffn_gate_shexp.weight", (shared * width, hidden), ty["ffn"]),
                  (b + "ffn_up_shexp.weight", (shared * width, hidden), ty["ffn"]),
                  (b + "ffn_down_shexp.weight", (hidden, shared * width), ty["down"])]
    t += [("output_norm.weight", (hidden,), T.F32), ("output.weight", (vocab, hidden),
                                                     ty["output"])]
    return header_only(path, "deepseek2", meta, t)


# The tiny DeepSeek-2 (hidden 256, 2 heads, kv_lora_rank 256, rope 64, nope 128, v 128;
# layer 0 dense FFN 512, layer 1 MoE: 4 experts of 256, top-2, one shared; vocab 1024):
#   token_embd Q4_K 1024 blocks x 144 = 147,456; output Q6_K 1024 x 210 = 215,040;
#   output_norm 1,024
#   each layer: attn_norm 1,024 + attn_q (384 x 256 Q4_K) 55,296 + attn_kv_a_mqa
#     (320 x 256) 46,080 + attn_kv_a_norm 1,024 + attn_k_b (2 x 256 x 128 Q8_0, 2048
#     blocks x 34) 69,632 + attn_v_b 69,632 + attn_output 36,864 + ffn_norm 1,024 = 280,576
#   layer 0: + gate 73,728 + up 73,728 + down (Q6_K 512 blocks) 107,520       = 535,552
#   layer 1: + router (4 x 256 F32) 4,096 + gate/up_exps 2 x 147,456 + down_exps (Q6_K)
#     215,040 + gate/up_shexp 2 x 36,864 + down_shexp (Q6_K) 53,760          = 922,112
#   total 147,456 + 215,040 + 1,024 + 535,552 + 922,112                     = 1,821,184
TINY_DS = dict(hidden=256, layers=2, heads=2, rank=256, rope=64, nope=128, v=128, ffn=512,
               experts=4, top_k=2, width=256, shared=1, dense=1, vocab=1024)
TINY_DS_BYTES = 1_821_184
TINY_DS_LAYERS = (535_552, 922_112)
# DeepSeek-V2-Lite (its config.json: bundled deepseek-v2-lite.json)
V2_LITE = dict(hidden=2048, layers=27, heads=16, rank=512, rope=64, nope=128, v=128,
               ffn=10944, experts=64, top_k=6, width=1408, shared=2, dense=1, vocab=102400)


# --- gpt-oss ---------------------------------------------------------------------------

def gpt_oss(path: Path, *, hidden: int, layers: int, heads: int, kv: int, head_dim: int,
            experts: int, top_k: int, width: int, window: int, vocab: int,
            attn=T.F16, embd=T.Q8_0) -> int:
    """A gpt-oss file: MXFP4 experts with F32 biases, biased attention, sinks."""
    meta = _keys("gpt-oss", {
        "block_count": layers, "embedding_length": hidden, "feed_forward_length": width,
        "attention.head_count": heads, "attention.head_count_kv": kv,
        "attention.key_length": head_dim, "attention.value_length": head_dim,
        "context_length": 131072, "attention.sliding_window": window,
        "expert_count": experts, "expert_used_count": top_k,
        "expert_feed_forward_length": width})
    q, k = heads * head_dim, kv * head_dim
    t = [("token_embd.weight", (vocab, hidden), embd)]
    for i in range(layers):
        b = f"blk.{i}."
        t += [(b + "attn_norm.weight", (hidden,), T.F32),
              (b + "attn_q.weight", (q, hidden), attn), (b + "attn_q.bias", (q,), T.F32),
              (b + "attn_k.weight", (k, hidden), attn), (b + "attn_k.bias", (k,), T.F32),
              (b + "attn_v.weight", (k, hidden), attn), (b + "attn_v.bias", (k,), T.F32),
              (b + "attn_output.weight", (hidden, q), attn),
              (b + "attn_output.bias", (hidden,), T.F32),
              (b + "attn_sinks.weight", (heads,), T.F32),
              (b + "post_attention_norm.weight", (hidden,), T.F32),
              (b + "ffn_gate_inp.weight", (experts, hidden), T.F32),
              (b + "ffn_gate_inp.bias", (experts,), T.F32)]
        for part, out, inp in (("gate", width, hidden), ("up", width, hidden),
                               ("down", hidden, width)):
            t += [(b + f"ffn_{part}_exps.weight", (experts, out, inp), T.MXFP4),
                  (b + f"ffn_{part}_exps.bias", (experts, out), T.F32)]
    t += [("output_norm.weight", (hidden,), T.F32), ("output.weight", (vocab, hidden), embd)]
    return header_only(path, "gpt-oss", meta, t)


# The tiny gpt-oss (hidden 128, 2 layers, 4 heads of 32, 2 KV heads, 4 experts of 128,
# top-2, window 16, vocab 256):
#   token_embd and output Q8_0 (256 x 128: 1024 blocks x 34) 34,816 each; output_norm 512
#   each layer: attn_norm 512 + q (128 x 128 F16) 32,768 + bias 512 + k (64 x 128)
#     16,384 + bias 256 + v 16,384 + 256 + o 32,768 + 512 + sinks 16 + post_attention_norm
#     512 + router (4 x 128 F32) 2,048 + bias 16 + gate/up/down_exps (4 x 128 x 128
#     MXFP4: 2048 blocks x 17) 3 x 34,816 + their biases (4 x 128 F32) 3 x 2,048 = 213,536
#   total 2 x 34,816 + 512 + 2 x 213,536                                        = 497,216
TINY_OSS = dict(hidden=128, layers=2, heads=4, kv=2, head_dim=32, experts=4, top_k=2,
                width=128, window=16, vocab=256)
TINY_OSS_BYTES = 497_216
OSS_20B = dict(hidden=2880, layers=24, heads=64, kv=8, head_dim=64, experts=32, top_k=4,
               width=2880, window=128, vocab=201088)


# --- Llama 4 ---------------------------------------------------------------------------

def llama4(path: Path, *, hidden: int, layers: int, heads: int, kv: int, head_dim: int,
           experts: int, top_k: int, width: int, ffn: int, step: int, vocab: int,
           typ=T.Q4_K, window: int | None = None) -> int:
    """A llama4 file: MoE (routed + one shared expert) every `step`-th layer, dense
    FFN `ffn` wide in the others; `window`: an attention.sliding_window key."""
    meta = _keys("llama4", {
        "block_count": layers, "embedding_length": hidden, "feed_forward_length": ffn,
        "attention.head_count": heads, "attention.head_count_kv": kv,
        "attention.key_length": head_dim, "attention.value_length": head_dim,
        "context_length": 262144, "expert_count": experts, "expert_used_count": top_k,
        "expert_feed_forward_length": width, "interleave_moe_layer_step": step})
    if window is not None:
        meta["llama4.attention.sliding_window"] = window
    q, k = heads * head_dim, kv * head_dim
    t = [("token_embd.weight", (vocab, hidden), typ)]
    for i in range(layers):
        b = f"blk.{i}."
        t += [(b + "attn_norm.weight", (hidden,), T.F32),
              (b + "attn_q.weight", (q, hidden), typ), (b + "attn_k.weight", (k, hidden), typ),
              (b + "attn_v.weight", (k, hidden), typ),
              (b + "attn_output.weight", (hidden, q), typ),
              (b + "ffn_norm.weight", (hidden,), T.F32)]
        if (i + 1) % step:
            t += [(b + "ffn_gate.weight", (ffn, hidden), typ),
                  (b + "ffn_up.weight", (ffn, hidden), typ),
                  (b + "ffn_down.weight", (hidden, ffn), typ)]
            continue
        t += [(b + "ffn_gate_inp.weight", (experts, hidden), T.F32),
              (b + "ffn_gate_exps.weight", (experts, width, hidden), typ),
              (b + "ffn_up_exps.weight", (experts, width, hidden), typ),
              (b + "ffn_down_exps.weight", (experts, hidden, width), typ),
              (b + "ffn_gate_shexp.weight", (width, hidden), typ),
              (b + "ffn_up_shexp.weight", (width, hidden), typ),
              (b + "ffn_down_shexp.weight", (hidden, width), typ)]
    t += [("output_norm.weight", (hidden,), T.F32), ("output.weight", (vocab, hidden), typ)]
    return header_only(path, "llama4", meta, t)


TINY_L4 = dict(hidden=256, layers=4, heads=4, kv=2, head_dim=64, experts=4, top_k=1,
               width=256, ffn=512, step=2, vocab=1024)
# Llama-4-Scout-17B-16E (tests/data/llm_configs/llama-4-scout-17b-16e.json)
SCOUT = dict(hidden=5120, layers=48, heads=40, kv=8, head_dim=128, experts=16, top_k=1,
             width=8192, ffn=16384, step=1, vocab=202048)
