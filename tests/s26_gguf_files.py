"""Small GGUF files for the s26 gguf tests, written with the gguf package's GGUFWriter:
real ggml types and shapes, tensor data all zero bytes of the right length.

The tiny Llama (hidden 256, 2 layers, 4 heads of 64, 2 KV heads, FFN 512, vocab 1024), as
a Q4_K_M mix: Q4_K matrices, layer 0's attn_v and ffn_down and the output at Q6_K (what
llama.cpp's use_more_bits gives its first layers), F32 norms. By hand, from the block
structs (Q4_K 144 B per 256 weights, Q6_K 210 B per 256, F32 4 B):
  token_embd 1024 x 256 Q4_K:       1024 blocks x 144 = 147,456 B
  output     1024 x 256 Q6_K:       1024 blocks x 210 = 215,040 B
  output_norm 256 F32:                                    1,024 B
  layer 0: norms 2 x 1,024 + q 36,864 + k 18,432 + v (Q6_K, 128 blocks) 26,880
           + o 36,864 + gate 73,728 + up 73,728 + down (Q6_K, 512 blocks) 107,520
           = 376,064 B
  layer 1: the same with v 18,432 and down 73,728 (Q4_K)  = 333,824 B
  total                                                 = 1,073,408 B
  weights 1,705,216: 8 x 1,073,408 / 1,705,216 = 5.04 bits/weight
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
T = gguf.GGMLQuantizationType

TINY_TOTAL_BYTES = 1_073_408
TINY_LAYER_BYTES = (376_064, 333_824)


def finish(w, path: Path | None) -> Path | None:
    """Write the writer's header, metadata and tensors to its file and close it."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def add(w, name: str, shape: tuple[int, ...], typ) -> None:
    """A tensor of numpy shape (out, in) in ggml type `typ`, zero bytes."""
    block, size = gguf.GGML_QUANT_SIZES[typ]
    if typ == T.F32:
        w.add_tensor(name, np.zeros(shape, np.float32))
        return
    raw = np.zeros((*shape[:-1], shape[-1] // block * size), np.uint8)
    w.add_tensor(name, raw, raw_dtype=typ)   # a uint8 array: its shape is in bytes


def write_tiny_llama(path: Path, *, arch: str = "llama", drop: tuple[str, ...] = (),
                     file_type: int | None = 15, tied: bool = False,
                     split_max_tensors: int = 0, window: int = 0) -> Path:
    """The tiny Llama; split_max_tensors > 0 writes it as llama.cpp's split shards
    (path's stem + -0000k-of-0000N.gguf, as gguf-split names them)."""
    w = gguf.GGUFWriter(str(path), arch, split_max_tensors=split_max_tensors)
    keys = {"block_count": 2, "embedding_length": 256, "feed_forward_length": 512,
            "attention.head_count": 4, "attention.head_count_kv": 2, "context_length": 4096}
    for k, v in keys.items():
        if k not in drop:
            w.add_uint32(f"{arch}.{k}", v)
    if window:
        w.add_uint32(f"{arch}.attention.sliding_window", window)
    if file_type is not None:
        w.add_file_type(file_type)
    add(w, "token_embd.weight", (1024, 256), T.Q4_K)
    for i in range(2):
        wide = T.Q6_K if i == 0 else T.Q4_K
        add(w, f"blk.{i}.attn_norm.weight", (256,), T.F32)
        add(w, f"blk.{i}.attn_q.weight", (256, 256), T.Q4_K)
        add(w, f"blk.{i}.attn_k.weight", (128, 256), T.Q4_K)
        add(w, f"blk.{i}.attn_v.weight", (128, 256), wide)
        add(w, f"blk.{i}.attn_output.weight", (256, 256), T.Q4_K)
        add(w, f"blk.{i}.ffn_norm.weight", (256,), T.F32)
        add(w, f"blk.{i}.ffn_gate.weight", (512, 256), T.Q4_K)
        add(w, f"blk.{i}.ffn_up.weight", (512, 256), T.Q4_K)
        add(w, f"blk.{i}.ffn_down.weight", (256, 512), wide)
    add(w, "output_norm.weight", (256,), T.F32)
    if not tied:
        add(w, "output.weight", (1024, 256), T.Q6_K)
    return finish(w, path)


# A one-layer Qwen3-MoE (hidden 256, 4 heads of 64, 2 KV heads, 4 experts of width 256,
# top-2), experts as llama.cpp stores them, one 3-D tensor per projection:
#   token_embd Q4_K 147,456 + output Q6_K 215,040 + output_norm 1,024
#   layer: norms 2 x 1,024 + q_norm/k_norm 2 x 64 x 4 B = 512 + q 36,864 + k 18,432
#          + v 18,432 + o 36,864 + router 4 x 256 F32 = 4,096
#          + gate_exps/up_exps 4 x 256 x 256 Q4_K = 1024 blocks x 144 = 147,456 each
#          + down_exps Q6_K 1024 blocks x 210 = 215,040                 = 627,200
#   total 990,720 B
MOE_TOTAL_BYTES = 990_720


def write_tiny_qwen3_moe(path: Path) -> Path:
    arch = "qwen3moe"
    w = gguf.GGUFWriter(str(path), arch)
    for k, v in {"block_count": 1, "embedding_length": 256, "feed_forward_length": 512,
                 "attention.head_count": 4, "attention.head_count_kv": 2,
                 "attention.key_length": 64, "context_length": 4096, "expert_count": 4,
                 "expert_used_count": 2, "expert_feed_forward_length": 256}.items():
        w.add_uint32(f"{arch}.{k}", v)
    add(w, "token_embd.weight", (1024, 256), T.Q4_K)
    add(w, "blk.0.attn_norm.weight", (256,), T.F32)
    add(w, "blk.0.attn_q_norm.weight", (64,), T.F32)
    add(w, "blk.0.attn_k_norm.weight", (64,), T.F32)
    add(w, "blk.0.attn_q.weight", (256, 256), T.Q4_K)
    add(w, "blk.0.attn_k.weight", (128, 256), T.Q4_K)
    add(w, "blk.0.attn_v.weight", (128, 256), T.Q4_K)
    add(w, "blk.0.attn_output.weight", (256, 256), T.Q4_K)
    add(w, "blk.0.ffn_norm.weight", (256,), T.F32)
    add(w, "blk.0.ffn_gate_inp.weight", (4, 256), T.F32)
    add(w, "blk.0.ffn_gate_exps.weight", (4, 256, 256), T.Q4_K)
    add(w, "blk.0.ffn_up_exps.weight", (4, 256, 256), T.Q4_K)
    add(w, "blk.0.ffn_down_exps.weight", (4, 256, 256), T.Q6_K)
    add(w, "output_norm.weight", (256,), T.F32)
    add(w, "output.weight", (1024, 256), T.Q6_K)
    return finish(w, path)
