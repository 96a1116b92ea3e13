"""Pipeline parallelism for LLM decode: which kernels, weights and KV each stage holds.

Stage i holds a run of consecutive layers (model.pipeline.split_layers: the first
`layers % pp` stages take one more), the first stage also the embedding and the last the
final norm and the LM head. With tied embeddings the last stage keeps its own copy of the
table as its LM head (Megatron-LM shares it between the first and last stage the same way).
Under --tp each stage is first sharded (workloads.llm.parallel.shard): the numbers are per
device. model.pipeline turns the stages into TPOT and tokens/s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...model.ceiling import Roof
from ...model.parallel import Link
from ...model.pipeline import PPStep, Stage, pp_step, split_layers
from .footprint import (
    Footprint,
    absorbed_copy_bytes,
    activation_bytes_per_sequence,
    decode_logits_bytes,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_bytes_per_token_layer,
)
from .kernels import Step, build_step
from .model_config import ModelConfig
from .params import count_params, norm_params
from .settings import Settings
from .timing import time_step

FIRST_ONLY = ("embedding",)
LAST_ONLY = ("final_norm", "lm_head")


def stage_config(cfg: ModelConfig, layers: range) -> ModelConfig:
    """The config of a model made of `layers` only (sliding-window and MoE layers keep
    their pattern: indices are shifted to the stage)."""
    a = layers.start
    moe = cfg.moe and replace(cfg.moe, first_dense=cfg.moe.first_dense - a)
    # first_dense may go negative: is_moe_layer(j) then tests (j + a - first_dense) % freq,
    # the same layers as in the whole model
    return cfg.with_(layers=len(layers), moe=moe,
                     sliding_layers=tuple(i - a for i in cfg.sliding_layers if i in layers))


def _holds(index: int, pp: int) -> tuple[str, ...]:
    return (FIRST_ONLY if index == 0 else ()) + (LAST_ONLY if index == pp - 1 else ())


def stage_step(cfg: ModelConfig, s: Settings, layers: range, holds: tuple[str, ...], *,
               phase: str, batch: int, context: int) -> Step:
    """The kernels of one stage: its layers, plus the model-level kernels in `holds`; a
    decode stage runs Settings.decode_tokens query tokens a sequence, as
    kernels.decode_step (it ran one, so a --pp stage missed a verify's FLOP: s21 m2)."""
    q_len = s.decode_tokens if phase == "decode" else context
    full = build_step(stage_config(cfg, layers), s, phase=phase, batch=batch, q_len=q_len,
                      context=context)
    drop = {n for n in FIRST_ONLY + LAST_ONLY if n not in holds}
    return replace(full, ops=tuple(o for o in full.ops if o.op.name not in drop))


def stage_weight_bytes(cfg: ModelConfig, s: Settings, layers: range,
                       holds: tuple[str, ...]) -> float:
    """Stored weights of one stage: its layers' matrices at the weight dtype and vectors
    at the activation dtype, plus the embedding / final norm / LM head it holds."""
    p = count_params(stage_config(cfg, layers))
    table = cfg.vocab * cfg.hidden      # the embedding table (and an untied LM head)
    matrix, vector = p.matrix, p.vector
    if "embedding" not in holds:
        matrix -= p.embedding
    if "lm_head" not in holds:
        matrix -= p.lm_head
        vector -= norm_params(cfg)      # the final norm
    elif cfg.tied_embeddings and "embedding" not in holds:
        matrix += table                 # the last stage's own copy of the tied table
    if file_layer_bytes(cfg, s):
        return _stored_stage_bytes(cfg, s, layers, holds)
    return (matrix * s.weight_bytes + vector * s.vector_bytes
            + absorbed_copy_bytes(stage_config(cfg, layers), s))


def _stored_stage_bytes(cfg: ModelConfig, s: Settings, layers: range,
                        holds: tuple[str, ...]) -> float:
    """A stage's weights under a GGUF file's types: its own layers' tensors as the file
    stores them (a Q4_K_M file's layers differ: Llama-3-8B's blk.0 is 139 MB, blk.4 123
    MB), the table it holds at the table's type, the final norm and the LM head at
    output.weight's (a tied one: the last stage's own copy of the table)."""
    st = s.stored
    assert st is not None
    per_layer = file_layer_bytes(cfg, s)
    out = float(sum(per_layer[i] for i in layers))
    if "embedding" in holds:
        out += count_params(cfg).embedding * st.table
    if "lm_head" in holds:
        out += norm_params(cfg) * s.vector_bytes
        if not cfg.tied_embeddings or "embedding" not in holds:
            out += cfg.vocab * cfg.hidden * st.of("lm_head")
    return out


def file_layer_bytes(cfg: ModelConfig, s: Settings) -> tuple[float, ...]:
    """Each layer's bytes as the GGUF file of s.stored holds them on one of s.tp devices
    (parallel.shard puts the shard's share in cfg.stored), or (): count the layers."""
    st = s.stored
    if st is None or len(st.layer_bytes) != cfg.layers:
        return ()
    if s.tp == st.tp:
        return st.layer_bytes
    own = cfg.stored
    ok = own is not None and own.tp == s.tp and len(own.layer_bytes) == cfg.layers
    return own.layer_bytes if ok and own is not None else ()


def stage_activation_bytes(cfg: ModelConfig, s: Settings, holds: tuple[str, ...],
                           prompt: int) -> float:
    """Peak transient activations of one prompt in flight (reserved once, as footprint's),
    without the fp32 logits on a stage that has no LM head."""
    act = activation_bytes_per_sequence(cfg, s, prompt)
    return act if "lm_head" in holds else act - cfg.vocab * 4.0


def stage_footprint(cfg: ModelConfig, s: Settings, layers: range, holds: tuple[str, ...], *,
                    batch: int, context: int, prompt: int,
                    device_bytes: float | None = None) -> Footprint:
    """Bytes resident on the device of one stage: its weights, the KV of its layers for
    `context` tokens for `batch` sequences, one prompt's prefill activations, and on the
    LM head's stage the decode batch's fp32 logits."""
    scfg = stage_config(cfg, layers)
    logits = decode_logits_bytes(scfg, s, batch) if "lm_head" in holds else 0.0
    return Footprint(batch=batch, context=context,
                     weights=stage_weight_bytes(cfg, s, layers, holds),
                     kv=batch * kv_bytes_per_sequence(scfg, s, context),
                     activations=stage_activation_bytes(scfg, s, holds, prompt),
                     device_bytes=device_bytes, kv_per_token=kv_bytes_per_token(scfg, s),
                     logits=logits)


def heaviest_footprint(cfg: ModelConfig, s: Settings, *, pp: int, batch: int, context: int,
                       prompt: int, device_bytes: float | None = None) -> Footprint:
    """The footprint of the fullest of the `pp` stages: it decides whether the model fits."""
    fps = [stage_footprint(cfg, s, layers, _holds(i, pp), batch=batch, context=context,
                           prompt=prompt, device_bytes=device_bytes)
           for i, layers in enumerate(split_layers(cfg.layers, pp))]
    return max(fps, key=lambda fp: fp.total)


def stages(cfg: ModelConfig, s: Settings, roof: Roof, *, pp: int, batch: int, context: int,
           prompt: int, kv_context: int | None = None,
           comm_s_per_layer: float = 0.0, prefill_comm_s_per_layer: float = 0.0,
           gather_s: float = 0.0,
           embedding_s: tuple[float, float] = (0.0, 0.0)) -> tuple[Stage, ...]:
    """The `pp` stages of `cfg` (already sharded under TP): decode floor at `context`,
    prefill floor of batch x prompt, weights, KV for `kv_context` tokens (default
    `context`) and activations for `batch` sequences. comm_s_per_layer: the TP all-reduce
    time of one layer, added per layer held; gather_s: the TP logits gather, added to the
    stage that holds the LM head (its decode and its prefill); embedding_s: the TP
    embedding's all-reduce (decode, prefill), added to the stage that holds the
    embedding."""
    kv_ctx = kv_context or context
    out = []
    for i, layers in enumerate(split_layers(cfg.layers, pp)):
        holds = _holds(i, pp)
        dec = time_step(stage_step(cfg, s, layers, holds, phase="decode", batch=batch,
                                   context=context), roof).floor_s
        pre = time_step(stage_step(cfg, s, layers, holds, phase="prefill", batch=batch,
                                   context=prompt), roof).floor_s
        fp = stage_footprint(cfg, s, layers, holds, batch=batch, context=kv_ctx,
                             prompt=prompt)
        gather = gather_s if "lm_head" in holds else 0.0
        emb, pre_emb = embedding_s if "embedding" in holds else (0.0, 0.0)
        out.append(Stage(i, layers, holds, dec, comm_s_per_layer * len(layers) + gather + emb,
                         weights_bytes=fp.weights, kv_bytes=fp.kv,
                         activations_bytes=fp.activations, logits_bytes=fp.logits,
                         prefill_s=pre + prefill_comm_s_per_layer * len(layers) + gather
                         + pre_emb))
    return tuple(out)


def pipeline_parallel(cfg: ModelConfig, s: Settings, roof: Roof, *, pp: int, batch: int,
                      context: int, prompt: int, link: Link, micro_batches: int | None = None,
                      tp: int = 1, kv_context: int | None = None,
                      comm_s_per_layer: float = 0.0,
                      prefill_comm_s_per_layer: float = 0.0,
                      device_bytes: float | None = None, gather_s: float = 0.0,
                      embedding_s: tuple[float, float] = (0.0, 0.0)) -> PPStep:
    """Decode over `pp` stages of `cfg` (the TP shard under --tp) joined by `link`; each
    transfer carries the batch's hidden states (batch x decode_tokens x hidden x
    Settings.comm_bytes,
    the 16-bit residual stream under fp8/int8 activations) — under
    TP every rank sends its full copy to its peer in the next stage, in parallel."""
    st = stages(cfg, s, roof, pp=pp, batch=batch, context=context, prompt=prompt,
                kv_context=kv_context, comm_s_per_layer=comm_s_per_layer,
                prefill_comm_s_per_layer=prefill_comm_s_per_layer, gather_s=gather_s,
                embedding_s=embedding_s)
    ppr = pp_step(st, batch=batch, hidden=cfg.hidden, act_bytes=s.comm_bytes, link=link,
                  micro_batches=micro_batches, tp=tp, prompt=prompt,
                  device_bytes=device_bytes)
    # a decode step of N query tokens a sequence hands on N hidden states each (the
    # prefill's transfer stays batch x prompt): review s21 x1 F1
    return replace(ppr, transfer_bytes=ppr.transfer_bytes * s.decode_tokens)


@dataclass(frozen=True)
class LayerKind:
    """The layers of one kind a stage holds: their attention (full, a sliding window, a
    chunk) and MLP (dense, MoE), how many, one such layer's weights (the least and the most:
    a GGUF file's layers differ by their tensors' types) and one sequence's KV cache in it.
    A stage's bytes are sums; the mean layer they imply hides a hybrid model's two kinds
    (Gemma-2's window-4096 and full layers hold 2 x less and more KV at 8k; s26 leftover)."""

    attention: str
    mlp: str
    layers: int
    weights_bytes: tuple[float, float]
    kv_bytes: float

    def to_dict(self) -> dict[str, Any]:
        return {"attention": self.attention, "mlp": self.mlp, "layers": self.layers,
                "weights_bytes_per_layer": list(self.weights_bytes),
                "kv_bytes_per_layer": self.kv_bytes}


def layer_kinds(cfg: ModelConfig, s: Settings, layers: range, context: int
                ) -> tuple[LayerKind, ...]:
    """The kinds of `layers` of `cfg` (one TP shard under --tp), in the order first met:
    per layer its weights (a GGUF file's blk.N bytes, one device's share under --tp:
    file_layer_bytes; else layer_weights' MoE or dense layer) and one sequence's KV at
    `context` tokens (kv_len: a window caps it)."""
    from .layer_weights import layer_weights

    mw = layer_weights(cfg, s)
    gguf = file_layer_bytes(cfg, s)
    per_token = kv_bytes_per_token_layer(cfg, s)
    found: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for i in layers:
        window = cfg.sliding_window if i in cfg.sliding_layers else None
        att = f"{'chunk' if cfg.chunked else 'window'} {window}" if window else "full"
        moe = cfg.is_moe_layer(i)
        one = mw.layer if moe or mw.dense_layer is None else mw.dense_layer
        w = float(gguf[i]) if len(gguf) == cfg.layers else one.total_bytes
        found.setdefault((att, "MoE" if moe else "dense"), []).append(
            (w, per_token * cfg.kv_len(i, context)))
    return tuple(LayerKind(att, mlp, len(rows), (min(r[0] for r in rows),
                                                 max(r[0] for r in rows)), rows[0][1])
                 for (att, mlp), rows in found.items())


def pipeline_dict(ppr: PPStep, cfg: ModelConfig | None = None, s: Settings | None = None,
                  context: int = 0) -> dict[str, Any]:
    """`rooflab llm --json`'s llm.pipeline (docs/llm.md): plain SI numbers; with the
    (sharded) config, settings and KV context each stage's layer_kinds (LayerKind)."""
    lk = ppr.link
    out = _pipeline_dict(ppr, lk)
    if cfg is not None and s is not None:
        for row, st in zip(out["stages"], ppr.stages, strict=True):
            row["layer_kinds"] = [k.to_dict() for k in layer_kinds(cfg, s, st.layers,
                                                                    context)]
    return out


def _pipeline_dict(ppr: PPStep, lk: Link) -> dict[str, Any]:
    return {"pp": ppr.pp, "tp": ppr.tp, "gpus": ppr.gpus, "batch": ppr.batch,
            "micro_batches": ppr.micro_batches,
            "stages": [{"index": st.index, "first_layer": st.layers.start,
                        "layers": len(st.layers), "holds": list(st.holds),
                        "seconds": st.seconds, "compute_s": st.compute_s,
                        "comm_s": st.comm_s, "prefill_s": st.prefill_s,
                        # the throughput view's M x batch sequences in flight (review
                        # 11b #2); one micro-batch's under *_per_micro_batch
                        "weights_bytes": st.weights_bytes,
                        "kv_bytes": ppr.in_flight_kv_bytes(st),
                        "kv_bytes_per_micro_batch": st.kv_bytes,
                        "activations_bytes": st.activations_bytes,
                        "decode_logits_bytes": st.logits_bytes,
                        "total_bytes": ppr.in_flight_bytes(st),
                        "total_bytes_per_micro_batch": st.total_bytes}
                       for st in ppr.stages],
            "in_flight_sequences": ppr.in_flight, "device_bytes": ppr.device_bytes,
            "fits_in_flight": ppr.fits_in_flight,
            "max_batch_per_micro_batch": ppr.max_micro_batch,
            "transfer_bytes": ppr.transfer_bytes, "hop_s": ppr.hop_s,
            "transfers_per_token": ppr.pp - 1, "transfer_s": ppr.transfer_s,
            "prefill_transfer_bytes": ppr.prefill_transfer_bytes,
            "prefill_transfer_s": ppr.prefill_transfer_s,
            "stages_s": ppr.stages_s, "tpot_s": ppr.tpot_s,
            "link": {"level": lk.level, "bytes_per_s": lk.bus_bytes_per_s,
                     "latency_s": lk.hop_latency_s, "source": lk.source},
            "throughput": {"slowest_stage": ppr.slowest.index, "period_s": ppr.period_s,
                           "round_s": ppr.round_s, "tokens_per_s": ppr.tokens_per_s,
                           "tokens_per_s_per_gpu": ppr.tokens_per_s_per_gpu,
                           "bubble": ppr.bubble},
            "assumptions": list(ppr.assumptions)}


def smallest_fit(cfg: ModelConfig, s: Settings, *, batch: int, context: int, prompt: int,
                 device_bytes: float) -> dict[str, Any]:
    """What makes `batch` sequences fit in `device_bytes` per device when they do not:
    {"pp": the smallest --pp above s.pp at s.tp, "tp": the smallest --tp above s.tp
    (dividing the heads) at s.pp, "split": whether the widest split (--tp heads, --pp
    layers) fits at all}; None where none does. Computed by the same footprint as the
    memory line (weights + KV + activations of the heaviest stage, per TP shard)."""
    from .parallel import shard

    def fits(tp: int, pp: int) -> bool:
        shard_cfg = shard(cfg, tp)
        # s at this tp: the decode logits are gathered over tp shards (decode_logits_bytes)
        fp = heaviest_footprint(shard_cfg, replace(s, tp=tp), pp=pp, batch=batch,
                                context=context,
                                prompt=prompt, device_bytes=device_bytes)
        return bool(fp.fits)

    pp = next((n for n in range(s.pp + 1, cfg.layers + 1) if fits(s.tp, n)), None)
    tp = next((n for n in range(s.tp + 1, cfg.heads + 1)
               if cfg.heads % n == 0 and fits(n, s.pp)), None)
    # A batch too big for every split should not be told to "combine" --tp and --pp.
    split = pp is not None or tp is not None or fits(cfg.heads, cfg.layers)
    return {"pp": pp, "tp": tp, "split": split}


# Weight dtypes that shrink a footprint, least lossy first (8 bits before 4).
SMALLER_WEIGHTS = ("int8", "int4")


def narrower_weights(s: Settings) -> list[str]:
    """The SMALLER_WEIGHTS dtypes whose bytes per weight are below s's, in that order."""
    return [w for w in SMALLER_WEIGHTS if s.with_(weights=w).weight_bytes < s.weight_bytes]


def narrower_kv(s: Settings) -> bool:
    """Whether --kv fp8 stores s's KV cache in fewer bytes."""
    return s.with_(kv="fp8").kv_bytes < s.kv_bytes


def smaller_settings(s: Settings) -> tuple[tuple[str, Settings], ...]:
    """The --weights/--kv changes that make s's bytes smaller, as (options, settings), least
    lossy first (one change before two). Only dtypes narrower than the ones in use:
    `--weights int4` at int4 makes no room (the memory line used to offer it anyway)."""
    weights = narrower_weights(s)
    out = [(f"--weights {w}", s.with_(weights=w)) for w in weights]
    if narrower_kv(s):     # one change before two
        out += [("--kv fp8", s.with_(kv="fp8"))]
        out += [(f"--weights {w} --kv fp8", s.with_(weights=w, kv="fp8")) for w in weights]
    return tuple(out)


def quantized_fit(cfg: ModelConfig, s: Settings, *, batch: int, context: int, prompt: int,
                  device_bytes: float) -> tuple[str, Footprint] | None:
    """The first of smaller_settings(s) under which `batch` sequences fit on one device (one
    TP shard and --pp stage of s, as smallest_fit counts them), with its footprint; None when
    none does. On a device that cannot be split (a Jetson: one module, no link to a second)
    this is the way to fit a model, not --tp or --pp."""
    from .parallel import shard

    shard_cfg = shard(cfg, s.tp)
    for opts, q in smaller_settings(s):
        fp = heaviest_footprint(shard_cfg, q, pp=s.pp, batch=batch, context=context,
                                prompt=prompt, device_bytes=device_bytes)
        if fp.fits:
            return opts, fp
    return None
