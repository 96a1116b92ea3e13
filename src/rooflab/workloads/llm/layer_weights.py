"""One layer's stored weights by part (attention, FFN, norms) and the whole model's as
layers + what lies outside them (embedding, lm_head, final norm).

Seed 004 puts the FFN at "69 MB of a layer's 101 MB, two thirds"; its 101 MB is the whole
2.2 GB over 22 layers, which spreads TinyLlama's embedding and lm_head (2 x 131 MB) over
the layers. A layer's own weights are 88.1 MB (q/k/v/o 18.9 MB, gate/up/down 69.2 MB,
two RMSNorms 8.2 kB), so the FFN is 79 % of it. The bytes follow footprint.weight_bytes
exactly (matrices at the weight dtype unless kept unquantized, norm weights and biases at
the activation dtype, MLA's absorbed copies under quantized weights): layers x layer +
outside = the memory line's weights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...units import dtype_bytes, fmt_share, si
from .footprint import absorbed_copy_bytes
from .model_config import ModelConfig
from .params import (
    attention_params,
    count_params,
    expert_bias_params,
    layer_bias_params,
    mlp_params,
    module_params,
    norm_params,
)
from .settings import NARROW, Settings, is_kept

ATTENTION = frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj", "q_b_proj",
                       "kv_a_proj", "kv_b_proj"})
DENSE_MLP = ("gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class LayerWeights:
    """Bytes one transformer layer stores. `ffn` is the whole MLP: on an MoE layer all its
    routed experts (`experts` of them, as stored) + shared experts + router; `ffn_active`
    is what one token reads of it (top-k routed experts + shared + router; = ffn on a
    dense layer)."""

    attention_bytes: float    # q/k/v/o (MLA: its projections, layernorms, absorbed copies)
    ffn_bytes: float
    norms_bytes: float        # the layer's norm weights (LayerNorm: and biases), q/k norms
    ffn_active_bytes: float
    routed_bytes: float = 0.0     # MoE: all routed experts of the layer
    shared_bytes: float = 0.0     # MoE: the always-on shared experts
    router_bytes: float = 0.0
    experts: int = 0
    top_k: int = 0
    # of attention_bytes + ffn_bytes: the biases (params.layer_bias_params), weights as the
    # matrices are (parameters read once per step), said apart because a what-if that
    # narrows the matrices leaves them at the activation width
    bias_bytes: float = 0.0

    @property
    def total_bytes(self) -> float:
        return self.attention_bytes + self.ffn_bytes + self.norms_bytes

    @property
    def active_bytes(self) -> float:
        """What one token reads of the layer (MoE: only its top-k experts)."""
        return self.attention_bytes + self.ffn_active_bytes + self.norms_bytes

    def share(self, part_bytes: float) -> float:
        return part_bytes / self.total_bytes if self.total_bytes else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"total_bytes": self.total_bytes, "attention_bytes": self.attention_bytes,
                "ffn_bytes": self.ffn_bytes, "norms_bytes": self.norms_bytes,
                "attention_share": self.share(self.attention_bytes),
                "ffn_share": self.share(self.ffn_bytes),
                "norms_share": self.share(self.norms_bytes),
                "active_bytes": self.active_bytes, "ffn_active_bytes": self.ffn_active_bytes,
                "routed_experts_bytes": self.routed_bytes,
                "shared_experts_bytes": self.shared_bytes, "router_bytes": self.router_bytes,
                "experts": self.experts, "top_k": self.top_k, "bias_bytes": self.bias_bytes}


@dataclass(frozen=True)
class ModelWeights:
    """The whole model's stored weights: `layers` x `layer` (an MoE layer when the model has
    any), `dense_layers` x `dense_layer` (the dense-MLP layers of a mixed MoE model, such as
    DeepSeek's first_k_dense_replace; None otherwise), and the parts outside the layers."""

    layer: LayerWeights
    layers: int
    embedding_bytes: float    # token table (+ learned positions)
    lm_head_bytes: float      # 0 when tied to the embedding (one table, counted once)
    final_norm_bytes: float
    tied: bool
    dense_layer: LayerWeights | None = None
    dense_layers: int = 0

    @property
    def layers_bytes(self) -> float:
        dense = self.dense_layer.total_bytes * self.dense_layers if self.dense_layer else 0.0
        return self.layer.total_bytes * self.layers + dense

    @property
    def bias_bytes(self) -> float:
        """All layers' biases (the layers hold every bias the counts have)."""
        dense = self.dense_layer.bias_bytes * self.dense_layers if self.dense_layer else 0.0
        return self.layer.bias_bytes * self.layers + dense

    @property
    def outside_bytes(self) -> float:
        return self.embedding_bytes + self.lm_head_bytes + self.final_norm_bytes

    @property
    def total_bytes(self) -> float:
        return self.layers_bytes + self.outside_bytes

    def to_dict(self) -> dict[str, Any]:
        return {"layer": self.layer.to_dict(), "layers": self.layers,
                "dense_layer": self.dense_layer.to_dict() if self.dense_layer else None,
                "dense_layers": self.dense_layers, "layers_bytes": self.layers_bytes,
                "embedding_bytes": self.embedding_bytes, "lm_head_bytes": self.lm_head_bytes,
                "tied_embeddings": self.tied, "final_norm_bytes": self.final_norm_bytes,
                "bias_bytes": self.bias_bytes, "total_bytes": self.total_bytes}

    def describe(self, tp: int = 1, pp: int = 1) -> list[str]:
        """The summary's line: one layer by part, then the model as layers + the parts
        outside them (seed 004's "one layer" is 88.1 MB, not its 2.2 GB / 22)."""
        lw, moe = self.layer, self.layer.experts > 0
        sep = "; " if moe else ", "    # an MoE FFN lists its experts after a colon
        ffn = f"FFN {si(lw.ffn_bytes, 'B')} {_pct(lw.share(lw.ffn_bytes))}"
        if moe:
            shared = f" + shared {si(lw.shared_bytes, 'B')}" if lw.shared_bytes else ""
            ffn += (f": {lw.experts} experts {si(lw.routed_bytes, 'B')}{shared} + router "
                    f"{si(lw.router_bytes, 'B')}")
        biases = (f"{sep}biases {si(lw.bias_bytes, 'B')} of the attention and FFN bytes"
                  if lw.bias_bytes else "")
        line = (f"one {'MoE ' if moe else ''}layer's weights: {si(lw.total_bytes, 'B')} "
                f"(attention {si(lw.attention_bytes, 'B')} "
                f"{_pct(lw.share(lw.attention_bytes))}{sep}{ffn}{sep}norms "
                f"{si(lw.norms_bytes, 'B')}{biases})")
        if moe:
            line += (f", a token reads {si(lw.active_bytes, 'B')} of it (top-{lw.top_k} of "
                     f"{lw.experts} experts)")
        line += (f"; {self.layers} {'MoE ' if self.dense_layer else ''}layers "
                 f"{si(lw.total_bytes * self.layers, 'B')}")
        if self.dense_layer:
            d, n = self.dense_layer, self.dense_layers
            each = f"{si(d.total_bytes, 'B')} each, " if n > 1 else ""
            line += (f" + {n} dense layer{'s' * (n > 1)} {si(d.total_bytes * n, 'B')} "
                     f"({each}FFN {si(d.ffn_bytes, 'B')})")
        lm_head = ("lm_head tied to it" if self.tied else
                   f"lm_head {si(self.lm_head_bytes, 'B')}")
        line += (f" + embedding {si(self.embedding_bytes, 'B')} + {lm_head} + final norm "
                 f"{si(self.final_norm_bytes, 'B')} = {si(self.total_bytes, 'B')}")
        split = ([f"--tp {tp} splits each matrix over {tp} devices"] * (tp > 1)
                 + [f"--pp {pp} splits the layers over {pp} stages"] * (pp > 1))
        if split:
            line += f" (the whole model's; {', '.join(split)})"
        return [line]


def _pct(share: float) -> str:
    """A share of the layer's bytes as every share prints (units.fmt_share: 79.4 %, 2.9 %)."""
    return fmt_share(share)


def _matrix_bytes(s: Settings) -> Any:
    """Bytes of `n` parameters of the linear `name`: kept (unquantized) modules at the
    checkpoint's own width, the rest at the weight dtype (footprint.weight_bytes' rule)."""
    def of(name: str, n: float) -> float:
        if s.stored is not None:     # llama.cpp: as the module's tensors are stored
            return n * s.stored.of(name)
        full = s.weights in NARROW and is_kept(name, s.keep)
        return n * (dtype_bytes(s.base) if full else s.weight_bytes)
    return of


def _ffn(cfg: ModelConfig, s: Settings, moe: bool) -> tuple[float, float, float, float]:
    """(all, routed, shared, router) matrix + bias bytes of one layer's MLP."""
    of, mods = _matrix_bytes(s), module_params(cfg)
    if not moe:
        n = cfg.layers - cfg.moe_layers
        mats = sum(of(k, mods[k] / n) for k in DENSE_MLP if k in mods)
        return mats + mlp_params(cfg, cfg.intermediate)[1] * s.vector_bytes, 0.0, 0.0, 0.0
    n, m = cfg.moe_layers, cfg.moe
    assert m is not None
    e_b, r_b = expert_bias_params(cfg)    # gpt-oss: biases at the activation dtype
    routed = (sum(of(k, v / n) for k, v in mods.items() if k.startswith("expert_"))
              + m.experts * e_b * s.vector_bytes)
    shared = sum(of(k, v / n) for k, v in mods.items() if k.startswith("shared_"))
    router = of("router", mods["router"] / n) + r_b * s.vector_bytes
    return routed + shared + router, routed, shared, router


def _layer(cfg: ModelConfig, s: Settings, moe: bool) -> LayerWeights:
    of, mods = _matrix_bytes(s), module_params(cfg)
    att = (sum(of(k, v / cfg.layers) for k, v in mods.items() if k in ATTENTION)
           + attention_params(cfg)[1] * s.vector_bytes + absorbed_copy_bytes(cfg, s) / cfg.layers)
    norms = cfg.norms_per_layer * norm_params(cfg) + (2 * cfg.head_dim if cfg.qk_norm else 0)
    ffn, routed, shared, router = _ffn(cfg, s, moe)
    biases = layer_bias_params(cfg, moe) * s.vector_bytes
    if not moe:
        return LayerWeights(att, ffn, norms * s.vector_bytes, ffn, bias_bytes=biases)
    m = cfg.moe
    assert m is not None
    active = routed * m.top_k / m.experts + shared + router
    return LayerWeights(att, ffn, norms * s.vector_bytes, active, routed, shared, router,
                        m.experts, m.top_k, bias_bytes=biases)


def layer_weights(cfg: ModelConfig, s: Settings) -> ModelWeights:
    """The stored weights of `cfg` under `s`, by layer and part (the whole model: under
    --tp give the unsharded config; each device then holds its shard of every matrix)."""
    p = count_params(cfg)
    of = _matrix_bytes(s)
    table_full = s.weights in NARROW and (s.embedding_kept or (cfg.tied_embeddings
                                                               and is_kept("lm_head", s.keep)))
    embedding = p.embedding * (dtype_bytes(s.base) if table_full else s.table_bytes)
    lm_head = 0.0 if cfg.tied_embeddings else of("lm_head", p.lm_head)
    moe_n = cfg.moe_layers
    dense_n = cfg.layers - moe_n
    main = _layer(cfg, s, moe=moe_n > 0)
    dense = _layer(cfg, s, moe=False) if moe_n and dense_n else None
    return ModelWeights(layer=main, layers=moe_n or cfg.layers, embedding_bytes=embedding,
                        lm_head_bytes=lm_head, final_norm_bytes=norm_params(cfg) * s.vector_bytes,
                        tied=cfg.tied_embeddings, dense_layer=dense,
                        dense_layers=dense_n if dense else 0)
