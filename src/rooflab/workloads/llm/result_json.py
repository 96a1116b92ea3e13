"""An LLM result as JSON: the document `rooflab llm --json` and `-o FILE.json` write (roof,
kernels and analysis of one phase's step, and the `llm` section with both steps, totals,
footprint, sweeps and notes). Split from workloads/llm/analysis.py, which re-exports
result_to_dict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ...model.roof_schema import roof_to_dict
from ...model.schema import SCHEMA_VERSION, kernel_to_dict, points_to_dicts
from .sweep_bend import bend_batches

if TYPE_CHECKING:
    from .analysis import LLMResult
    from .kernels import Step
    from .timing import StepTiming


def _step_dict(t: StepTiming) -> dict[str, Any]:
    st: Step = t.step
    rows = []
    by_name = {p.kernel: p for p in t.points}
    for op in st.ops:
        p = by_name[op.op.name]
        rows.append({"name": op.op.name, "op": op.op.op, "calls": op.calls, "scope": op.scope,
                     "flop_per_call": op.op.flop, "bytes_per_call": op.op.bytes,
                     "flop": op.flop, "bytes": op.bytes,
                     "bytes_split": {k: op.split(k) for k in ("weights", "activations", "kv")},
                     "kv_read_bytes": op.kv_read, "kv_write_bytes": op.kv_write,
                     # work_floor_s: the name every document gives max(FLOP/P, bytes/B)
                     # (docs/json.md "Floor keys"); floor_s stays for old scripts
                     "ai": p.ai if p.ai != float("inf") else None, "floor_s": p.floor_s,
                     "work_floor_s": p.floor_s,
                     "floor_per_call_s": p.floor_s / op.calls, "bound": p.bound,
                     "binding": p.binding})
    lo, hi = t.launch_s_range
    return {"phase": st.phase, "batch": st.batch, "q_len": st.q_len, "context": st.context,
            "flop": st.flop, "bytes": st.bytes, "bytes_split": st.bytes_split, "ai": st.ai,
            "kv_read_bytes": st.kv_read_bytes, "kv_write_bytes": st.kv_write_bytes,
            "floor_s": t.floor_s, "work_floor_s": t.floor_s,
            "with_launches_s": t.with_launches_s,
            "fused_floor_s": t.fused_floor_s, "bound": t.bound,
            "tokens_per_s": t.tokens_per_s,
            "launches": {"per_step": st.launches, "per_layer": st.per_layer_kernels(),
                         "per_launch_s": list(t.per_launch_s), "total_s": [lo, hi],
                         "source": t.launch_source,
                         "launch_bound_kernels": list(t.launch_bound_kernels())},
            "kernels": rows}


def result_to_dict(r: LLMResult, measured: Sequence[Any] = (),
                   phase: str = "decode") -> dict[str, Any]:
    """The JSON vocabulary (roof, kernels, analysis of the decode step, or of the prefill
    with phase="prefill") plus an `llm` section holding both phases."""
    cfg, fp = r.config, r.footprint
    llm: dict[str, Any] = {
        "model": {"name": cfg.name, "family": cfg.family, "model_type": cfg.model_type,
                  "source": cfg.source, "layers": cfg.layers, "hidden": cfg.hidden,
                  "heads": cfg.heads, "kv_heads": cfg.kv_heads, "head_dim": cfg.head_dim,
                  # MLA caches this latent per token and layer, not kv_heads x head_dim
                  # (llm list --json's field; review s20 r8 F6)
                  "kv_latent": cfg.kv_elems_per_token() if cfg.mla else None,
                  "mla": (None if cfg.mla is None else
                          {"kv_lora_rank": cfg.mla.kv_lora_rank,
                           "qk_rope_head_dim": cfg.mla.qk_rope_head_dim,
                           "qk_nope_head_dim": cfg.mla.qk_nope_head_dim,
                           "v_head_dim": cfg.mla.v_head_dim,
                           "q_lora_rank": cfg.mla.q_lora_rank}),
                  "intermediate": cfg.intermediate, "vocab": cfg.vocab,
                  "max_position_embeddings": cfg.max_positions,
                  "params": r.params.total, "active_params": r.params.active},
        "settings": {"weights": r.settings.weights,
                     # as --weights takes it: mxfp4 / nvfp4 for fp4, a ggml type (q4_k)
                     "weight_format": r.settings.weight_format,
                     "act": r.settings.act, "act_format": r.settings.act_format or None,
                     "kv": r.settings.kv,
                     "attn": r.settings.attn, "group_size": r.settings.group_size,
                     "weight_bytes_per_param": r.settings.weight_bytes,
                     "zero_point": r.settings.zero_point,
                     "unquantized": (["embedding"] * r.settings.embedding_kept
                                     + list(r.settings.keep)),
                     "tp": r.settings.tp, "pp": r.settings.pp,
                     # the unquantized dtype and, when no --weights/--act set it, where it
                     # came from (review 19d N9)
                     "base": r.settings.base, "dtype_from": r.settings.dtype_from,
                     # llama.cpp weights: each kernel's bytes per weight as stored
                     "ggml": (r.settings.stored.to_dict() if r.settings.stored is not None
                              else None)},
        "request": {"batch": r.request.batch, "prompt": r.request.prompt,
                    "context": r.request.decode_context, "generate": r.request.generate,
                    "decode_tokens": r.settings.decode_tokens},
        "decode": _step_dict(r.decode), "prefill": _step_dict(r.prefill),
        "totals": {"tpot_s": r.tpot_s, "ttft_s": r.ttft_s, "tokens_per_s": r.tokens_per_s,
                   "request_s": r.request_s, "request_tpot_s": r.request_tpot_s,
                   # --decode-tokens N: each step's N tokens per sequence all accepted
                   "tokens_per_s_all_accepted": r.tokens_per_s * r.settings.decode_tokens,
                   "tpot_with_launches_s": r.decode.with_launches_s},
        "footprint": {"weights_bytes": fp.weights, "kv_bytes": fp.kv,
                      "kv_bytes_per_token": fp.kv_per_token,
                      "activations_bytes": fp.activations,
                      "decode_logits_bytes": fp.logits, "total_bytes": fp.total,
                      "device_bytes": fp.device_bytes, "fits": fp.fits,
                      "max_batch": fp.max_batch, "context": fp.context},
        "layer_weights": r.layer_weights.to_dict(),
    }
    if r.sweep is not None:
        sw = r.sweep
        llm["sweep"] = {"context": sw.context, "ridge": sw.ridge, "points": sw.rows(),
                        "kv_equals_weights_batch": sw.kv_equals_weights_batch,
                        **bend_batches(sw),
                        "knee_batch": sw.knee_batch, "ai_limit": sw.ai_limit}
        if sw.saturation is not None:
            # where tokens/s stops growing, by the per-kernel floors (review s18 r3 F1)
            llm["sweep"]["saturation"] = asdict(sw.saturation)
    if r.prefill_sweep is not None:
        llm["prefill_sweep"] = {"prompt": r.prefill_sweep.prompt,
                                "points": r.prefill_sweep.rows()}
    if r.context_sweep is not None:
        cs = r.context_sweep
        llm["context_sweep"] = {"batch": cs.batch, "ridge": cs.ridge, "points": cs.rows(),
                                "kv_equals_weights_context": cs.kv_equals_weights_context}
    if r.prompt_sweep is not None:
        llm["prompt_sweep"] = {"batch": r.prompt_sweep.batch,
                               "points": r.prompt_sweep.rows()}
    if r.notes:
        llm["notes"] = list(r.notes)
    top = r.prefill if phase == "prefill" else r.decode
    kernels = list(top.analysis.kernels) + list(measured)
    points = list(top.analysis.points)
    return {"schema_version": SCHEMA_VERSION, "roof": roof_to_dict(r.roof),
            "kernels": [kernel_to_dict(k) for k in kernels],
            "analysis": points_to_dicts(points), "llm": llm}
