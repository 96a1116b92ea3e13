"""Notes on what one run's count assumes or leaves out, beyond the config's own notes
(ModelConfig.notes, which stay empty for the bundled families): MLA's decode form, and
Gemma-2's logit soft-capping under --attn naive (review s19 r6 F5, F4), the MTP modules
left out (review s20 r8 F7), and --tp's tables and all-reduce latency."""

from __future__ import annotations

from ...model.comm_link import no_latency_words
from ...units import dtype_bytes, fmt_seconds, si
from .layer_weights import layer_weights
from .model_config import ModelConfig
from .settings import NARROW, Settings


def mla_note(cfg: ModelConfig) -> list[str]:
    """Which MLA form is counted: the two differ by far more than a rounding
    (DeepSeek-V2-Lite at context 4096: 143 MFLOP of absorbed attention a layer against
    17.2 GFLOP to decompress the cache)."""
    m = cfg.mla
    if m is None:
        return []
    latent = m.kv_lora_rank + m.qk_rope_head_dim
    kv_b = cfg.heads * (m.qk_nope_head_dim + m.v_head_dim)
    return [f"MLA: decode is counted in the absorbed form (vLLM, FlashMLA): W_UK/W_UV folded "
            f"into q_absorb/v_absorb, attention over the {latent}-wide cached latent; "
            f"prefill decompresses K and V with kv_b_proj. Decoding without absorption "
            f"would decompress the cache every step: 2 x {m.kv_lora_rank} x {kv_b} FLOP per "
            f"cached token and layer"]


def softcap_note(cfg: ModelConfig, s: Settings, steps: tuple, bytes_per_s: float
                 ) -> list[str]:
    """Gemma-2's attention logit soft-capping, not counted. Under flash attention the tanh
    is fused into the kernel (a few FLOP a score: the counts stand, no note); HF eager runs
    `scores / cap; tanh; * cap` on the dense score matrix, three more read+write passes of
    it, each moving what the softmax row moves. `steps`: (label, Step) pairs."""
    cap = cfg.attn_softcap
    if not cap or s.flash:
        return []
    extra = [(label, 3 * sum(o.bytes for o in st.ops if o.op.op == "softmax"))
             for label, st in steps]
    said = "; ".join(f"{si(b, 'B')} per {label} ({fmt_seconds(b / bytes_per_s)} at DRAM "
                     f"bandwidth)" for label, b in extra)
    return [f"attention logit soft-capping (attn_logit_softcapping {cap:g}) is not counted: "
            f"eager attention (--attn naive) runs it as three more read+write passes of the "
            f"score matrix, 3 x the softmax rows' bytes: {said}; a final_logit_softcapping "
            f"on the logits (batch x vocab) is negligible"]


def mtp_note(cfg: ModelConfig, s: Settings) -> list[str]:
    """The multi-token-prediction modules (num_nextn_predict_layers), which no count here
    includes: DeepSeek-V3's 671 B is the card's 685 B less its MTP module. Each is one more
    decoder layer (an MoE one on an MoE model: DeepSeek-V3's MTP layer index 61 is past
    first_k_dense_replace) plus eh_proj (2 hidden -> hidden, a plain nn.Linear in vLLM's
    DeepSeekMultiTokenPredictorLayer: the unquantized width) and three RMSNorms (enorm,
    hnorm, shared_head.norm). `cfg` unsharded: the bytes are the whole module's."""
    n = cfg.mtp_layers
    if not n:
        return []
    w = layer_weights(cfg, s)
    h, lw = cfg.hidden, w.layer
    glue = 2 * h * h * dtype_bytes(s.base) + 3 * h * s.wide_bytes
    each = lw.total_bytes + glue
    tables = w.embedding_bytes + (w.embedding_bytes if cfg.tied_embeddings else w.lm_head_bytes)
    layer = "MoE decoder layer" if lw.experts else "decoder layer"
    times = f"{n} x " if n > 1 else ""
    return [f"num_nextn_predict_layers {n}: the multi-token-prediction (MTP) "
            f"module{'s are' if n > 1 else ' is'} not counted (parameters, weights, tables): "
            f"{si(n * each, 'B')} of weights ({times}one {layer} {si(lw.total_bytes, 'B')} "
            f"+ eh_proj and norms {si(glue, 'B')}), resident and read every step when served "
            f"with MTP speculative decoding (vLLM --speculative-config method mtp); the "
            f"checkpoint also stores an embedding and lm_head copy for it "
            f"({si(tables, 'B')}), which a server may share with the main model's"]


def decode_tokens_note(s: Settings, batch: int, step_s: float) -> list[str]:
    """What a --decode-tokens N step is and yields (review s21 r6 F3): N query tokens per
    sequence over one read of its cache, 1 to N of them accepted."""
    n = s.decode_tokens
    if n == 1:
        return []
    return [f"--decode-tokens {n}: each decode step runs {n} query tokens per sequence "
            f"against its KV cache, read once (a speculative-decoding verify of {n - 1} draft "
            f"tokens, vLLM num_speculative_tokens {n - 1}; LLM-Viewer's n_parallel_decode "
            f"{n}); the TPOT floor is that step's, which yields 1 to {n} tokens per "
            f"sequence: {batch / step_s:.4g} tokens/s if one is accepted (the tokens/s and "
            f"request floor here), up to {n * batch / step_s:.4g} if all {n} are; the draft "
            f"model's own time is not counted"]


def table_note(s: Settings) -> list[str]:
    """How the embedding table's rows are counted under narrow weights given by hand (s27):
    at the matrices' bytes per weight, group or block scales included (kernel_ops.
    embedding_bytes_per_param), as the table is stored. The setup line already says the
    table is quantized at all (llm_render.quantized_head); nothing to say for 16-bit
    weights, a checkpoint's own quantization_config or a GGUF file (its table's type is in
    the file)."""
    if s.weights not in NARROW or s.embedding_kept or s.stored is not None:
        return []
    per = s.weight_bytes
    if s.weights == "fp4":
        return [f"--weights {s.weight_format}: the embedding's gathered rows are counted as "
                f"the table is stored, {per:.6g} B a weight with its block scales, as the "
                f"matrices (and whatif --quantize/--precision {s.weight_format})"]
    scales = " with its group scales" if per > dtype_bytes(s.weights) else ""
    return [f"--weights {s.weight_format}: the embedding's gathered rows are counted as the "
            f"table is stored, {per:.6g} B a weight{scales}, as the matrices (and whatif "
            f"--quantize {s.weights} --group {s.group_size}); llama.cpp quantizes token_embd "
            f"with its block scales too"]


def tp_notes(cfg: ModelConfig, tp: int, link_latency_s: float,
             link_latency_source: str) -> list[str]:
    """What --tp's tables are, and whether the all-reduces' latency is counted: the
    all-reduces of batch x hidden are small, and NCCL's per-all-reduce latency
    (microseconds) can outweigh their bandwidth term."""
    notes = [f"tensor parallel over {tp} devices: tables are per device; "
             f"all-reduce traffic is in the 'parallel' section"]
    if link_latency_s > 0:
        notes.append(f"the all-reduce time counts link bandwidth plus "
                     f"{fmt_seconds(link_latency_s, 4)} of latency per all-reduce "
                     f"({link_latency_source}) for each of the {2 * cfg.layers} all-reduces "
                     f"per step")
    else:
        notes.append(no_latency_words(
            2 * cfg.layers, "--hop-latency-us US per ring hop or --link-latency US per "
            "all-reduce", "at small batches"))
    return notes
