"""The single-kernel counts a step is built from (kernels.build_step): a linear, an
element-wise op, a norm, the embedding gather and attention, each an OpCount with its bytes
split into weights / activations / kv (kernels.py's module docstring states the
conventions). Split out of kernels.py, which holds the step's assembly.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...units import dtype_bytes
from .. import ops
from ..count import OpCount
from .byte_split import added
from .model_config import ModelConfig
from .settings import Settings

ATTENTION_OPS = ("attention", "attention_scores", "attention_values")
# Biases are weights: parameters, resident and read once per step like the matrices (s27:
# gpt-oss-20b's 6.83 M bias parameters, 13.7 MB in bf16, layer_weights.bias_bytes)
BYTE_MODEL = ("compulsory traffic split into weights (parameters: matrices, biases, norm "
              "weights) / activations / kv; weights read once per step for the whole batch")


def _count(name: str, op: str, flop: float, split: Mapping[str, float], s: Settings,
           unit: str | None = None, **shape) -> OpCount:
    # GEMMs at the activation precision (int8 for W8A8); attention at
    # Settings.attention_precision (fp8 only with an fp8 cache), norms and elementwise at
    # Settings.math_precision (16-bit under 8-bit activations)
    precision = (s.precision if op == "linear" else s.attention_precision
                 if op in ATTENTION_OPS else s.math_precision)
    split = {k: float(v) for k, v in split.items() if v}
    return OpCount(name=name, op=op, flop=float(flop), bytes=sum(split.values()),
                   precision=precision, unit=unit, bytes_split=split, byte_model=BYTE_MODEL,
                   shape=shape)


def _from_op(base: OpCount, name: str, split: Mapping[str, float], s: Settings,
             op: str | None = None) -> OpCount:
    """An ops.* count with its bytes split into weights / activations / kv instead."""
    return _count(name, op or base.op, base.flop, split, s, base.unit, **base.shape)


def linear(name: str, tokens: int, k: int, n: int, s: Settings, *, bias: bool = False,
           weight_rows: float = 1.0, out_kv: bool = False, **moe: int) -> OpCount:
    """tokens x k @ k x n (ops.matmul: 2*tokens*k*n FLOP); the weight read once (x
    `weight_rows` distinct copies, e.g. the experts touched); outputs written to the KV
    cache count as kv. `moe` (experts=E, top_k=k) goes into the shape, so that a what-if
    on another batch can recount the experts touched. A module the checkpoint keeps
    unquantized (Settings.keep: lm_head) is counted at its own width."""
    s = s.for_module(name)
    base = ops.matmul(tokens, n, k, dtype=s.act)
    flop = base.flop + (tokens * n if bias else 0)
    # the input at --act (8-bit under W8A8); the output and a bias at Settings.wide: the
    # GEMM returns the model dtype (review s21 r6 F2)
    weights = weight_rows * (k * n * s.weight_bytes + (n * s.vector_bytes if bias else 0))
    out = tokens * n * (s.kv_bytes if out_kv else s.wide_bytes)
    split = {"weights": weights, "activations": tokens * k * s.act_bytes + (0 if out_kv else out),
             "kv": out if out_kv else 0}
    return _count(name, "linear", flop, split, s, unit="tensor", m=tokens, k=k, n=n, **moe)


def elementwise(name: str, elements: int, s: Settings, *, inputs: int = 1, outputs: int = 1,
                flop_per_element: float = 1, op: str = "elementwise") -> OpCount:
    base = ops.elementwise(elements, s.wide, inputs=inputs, outputs=outputs,
                           flop_per_element=flop_per_element)
    return _from_op(base, name, {"activations": base.bytes}, s, op)


def norm(name: str, rows: int, cols: int, cfg: ModelConfig, s: Settings) -> OpCount:
    """ops.rmsnorm / ops.layernorm: x read, y written (activations), gamma (+beta) weights."""
    fn = ops.layernorm if cfg.norm == "layernorm" else ops.rmsnorm
    base = fn(rows, cols, s.wide)
    act = 2.0 * rows * cols * s.wide_bytes
    # gamma (+beta) at the width they are stored at: a GGUF file's F32 norms read 4 B each
    gamma = (base.bytes - act) * s.vector_bytes / s.wide_bytes
    return _from_op(base, name, {"activations": act, "weights": gamma}, s)


def embedding(tokens: int, cfg: ModelConfig, s: Settings) -> OpCount:
    """ops.embedding: the looked-up rows are weights (as the table is stored,
    embedding_bytes_per_param: group scales included, or the checkpoint's own width where
    its quantization_config leaves the table unquantized); learned position embeddings
    (GPT-2) add a second gather and an add."""
    base = ops.embedding(tokens, cfg.hidden, embedding_table_dtype(s))
    # compulsory traffic: each distinct row once, so at most the whole table (a 256 x
    # 2048-token prefill of llama-3-8b gathers 524,288 rows of a 128,256-row table: 1.05
    # GB, not 4.3; review s18 r3 F4); positions: at most max_positions rows
    row = cfg.hidden * embedding_bytes_per_param(s)
    rows = row * min(tokens, cfg.vocab)
    caps = {"vocab": cfg.vocab}
    if cfg.positions == "learned":
        rows += row * min(tokens, cfg.max_positions)
        caps["max_positions"] = cfg.max_positions
    split = {"weights": rows,
             "activations": base.bytes_split["ids"] + tokens * cfg.hidden * s.wide_bytes}
    flop = tokens * cfg.hidden if cfg.positions == "learned" else 0.0
    # the caps go into the shape: its "weights" are rows gathered per token, so a what-if
    # on another batch grows them up to the table (whatif_batch.gathered_rows_ratio;
    # review s26 r3 F5: they were held as if read once per step)
    return _count("embedding", "embedding", flop, split, s, tokens=tokens, hidden=cfg.hidden,
                  **caps)


def embedding_table_dtype(s: Settings) -> str:
    """The dtype the embedding table is read at: the checkpoint's own width where its
    quantization_config leaves the table unquantized (Settings.embedding_kept)."""
    return s.base if s.embedding_kept else s.weights


def embedding_bytes_per_param(s: Settings) -> float:
    """Bytes per embedding-table weight: the checkpoint's own width where its
    quantization_config leaves the table unquantized (Settings.embedding_kept), else the
    table as stored (Settings.table_bytes): by hand (`--weights int4`) the matrices' own
    bytes per weight, their group scales included (0.5 + 2/128 = 0.515625 B), a GGUF
    file's table type, a ggml --weights type's blocks. One rule with footprint, the layer
    weights and whatif --quantize int4 --group 128: the gathered rows are the stored
    table's rows (before s27 they were read at a bare 0.5 B, the table stored at 0.516).
    llama.cpp quantizes token_embd with its block scales (no bare-width table exists);
    GPTQ/AWQ keep it at fp16, which a checkpoint's config.json gives (embedding_kept);
    count_notes.table_note says which the run counts. fp4 by hand (nvfp4/mxfp4) alike:
    the table with its block scales, 0.5625 / 0.53125 B a weight (model/fp4_formats.py),
    as whatif --quantize and --precision nvfp4|mxfp4 count it (before s27 a bare 0.5 B,
    the footprint's table at 0.5625)."""
    if s.embedding_kept:
        return dtype_bytes(s.base)
    return s.table_bytes


def attention(prefix: str, *, batch: int, heads: int, q_len: int, kv_len: int, qk_dim: int,
              v_dim: int, kv_token_bytes: float, s: Settings, causal: bool,
              kv_is_cache: bool = True, window: int | None = None,
              chunk: int | None = None) -> tuple[OpCount, ...]:
    """Scores Q K^T and values P V of `heads` heads over `kv_len` keys.

    kv_token_bytes: bytes of K and V of one token (all KV heads; GQA read once per KV head).
    causal: query i sees keys up to kv_len - q_len + i (and at most `window` of them).
    chunk: block-causal (Llama 4's chunked attention): the query at position p sees the
    keys of its own chunk only, p mod chunk + 1 of them (transformers' chunked_overlay:
    kv // chunk == q // chunk); kv_len is then what the last query sees.
    """
    ab = s.wide_bytes        # Q (from q_proj) and O (to o_proj): the model dtype
    past = kv_len - q_len
    if chunk:
        pairs = _chunk_pairs(past + q_len, chunk) - _chunk_pairs(past, chunk)
    elif window:
        pairs = sum(min(past + i + 1, window) for i in range(q_len))
    else:
        pairs = ops.attention_scores(q_len, kv_len, causal)
    kv_read = batch * kv_len * kv_token_bytes
    kv_key = "kv" if kv_is_cache else "activations"
    q_bytes = batch * heads * q_len * qk_dim * ab
    o_bytes = batch * heads * q_len * v_dim * ab
    flop = 2.0 * batch * heads * pairs * (qk_dim + v_dim)
    shape = dict(batch=batch, heads=heads, q_len=q_len, kv_len=kv_len, qk_dim=qk_dim,
                 v_dim=v_dim, causal=causal, scores=pairs)
    if s.flash:
        split = added(("activations", q_bytes + o_bytes), (kv_key, kv_read))
        return (_count(f"{prefix}attention", "attention", flop, split, s, unit="tensor",
                       flash=True, **shape),)
    # naive (eager): the dense masked scores are computed, written, softmaxed and read back
    dense = batch * heads * q_len * kv_len
    flop = 2.0 * dense * (qk_dim + v_dim)
    k_frac = qk_dim / (qk_dim + v_dim)   # K's share of a token's K+V (MLA prefill: 192/320)
    qk = _count(f"{prefix}attn_scores", "attention_scores", flop * qk_dim / (qk_dim + v_dim),
                added(("activations", q_bytes + dense * ab), (kv_key, kv_read * k_frac)), s,
                unit="tensor", **shape)
    base = ops.softmax(batch * heads * q_len, kv_len, s.wide)
    sm = _from_op(base, f"{prefix}softmax", {"activations": base.bytes}, s)
    pv = _count(f"{prefix}attn_values", "attention_values", flop * v_dim / (qk_dim + v_dim),
                added(("activations", dense * ab + o_bytes), (kv_key, kv_read * (1 - k_frac))),
                s, unit="tensor", **shape)
    return qk, sm, pv


def _chunk_pairs(n: int, chunk: int) -> int:
    """Scores the first `n` positions compute under chunked attention: a full chunk's
    triangle C(C+1)/2 for each whole chunk, r(r+1)/2 for the r positions after them
    (Llama 4 Scout, one 32768-token prompt, chunk 8192: 4 x 8192 x 8193 / 2)."""
    whole, r = divmod(n, chunk)
    return whole * chunk * (chunk + 1) // 2 + r * (r + 1) // 2
