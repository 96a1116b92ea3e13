"""Parameter counts from a config's own fields (checked against published counts in tests)."""

from __future__ import annotations

from dataclasses import dataclass

from .model_config import ModelConfig


@dataclass(frozen=True)
class ParamCount:
    """Parameters by part. `matrix` parts are stored at the weight dtype, `vector` parts
    (norm weights, biases) at the activation dtype."""

    embedding: int          # token embedding table (+ learned positions)
    attention: int          # all layers: q/k/v/o (or MLA's projections) incl. biases
    mlp: int                # dense MLP layers (all layers of a dense model)
    experts: int            # routed experts of all MoE layers
    shared_experts: int
    router: int
    norms: int
    lm_head: int            # 0 when tied to the embedding
    vector: int             # of the above: 1-D parameters (norm weights, biases)
    active_experts: int     # routed-expert parameters one token uses (top-k of each MoE layer)

    @property
    def total(self) -> int:
        return (self.embedding + self.attention + self.mlp + self.experts + self.shared_experts
                + self.router + self.norms + self.lm_head)

    @property
    def matrix(self) -> int:
        return self.total - self.vector

    @property
    def active(self) -> int:
        """Parameters one token touches (MoE: only its top-k experts)."""
        return self.total - self.experts + self.active_experts


def attention_params(cfg: ModelConfig) -> tuple[int, int]:
    """(matrix, bias/norm vector) parameters of one attention block."""
    h = cfg.hidden
    if cfg.mla:
        m = cfg.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            q, qv = h * m.q_lora_rank + m.q_lora_rank * cfg.heads * qk, m.q_lora_rank
        else:
            q, qv = h * cfg.heads * qk, 0
        kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim)
        kv_b = m.kv_lora_rank * cfg.heads * (m.qk_nope_head_dim + m.v_head_dim)
        o = cfg.heads * m.v_head_dim * h
        return q + kv_a + kv_b + o, qv + m.kv_lora_rank   # + q_a and kv_a layernorms
    mat = h * cfg.q_dim + 2 * h * cfg.kv_dim + cfg.q_dim * h
    vec = ((cfg.q_dim + 2 * cfg.kv_dim if cfg.qkv_bias else 0)
           + (h if cfg.out_bias or cfg.o_bias else 0) + (cfg.heads if cfg.attention_sinks else 0))
    return mat, vec


def expert_bias_params(cfg: ModelConfig) -> tuple[int, int]:
    """(one routed expert's, the router's) bias parameters of one MoE layer: gpt-oss's
    gate_up_proj_bias (2 x width), down_proj_bias (hidden) and router bias (experts)."""
    m = cfg.moe
    if m is None or not m.bias:
        return 0, 0
    return (2 if cfg.gated_mlp else 1) * m.intermediate + cfg.hidden, m.experts


def mlp_params(cfg: ModelConfig, width: int) -> tuple[int, int]:
    """(matrix, bias) parameters of one MLP of this width (gated: gate, up, down)."""
    mats = 3 if cfg.gated_mlp else 2
    bias = (width + cfg.hidden) if cfg.out_bias else 0
    return mats * cfg.hidden * width, bias


def layer_bias_params(cfg: ModelConfig, moe: bool) -> int:
    """Bias parameters of one layer (an MoE one when `moe`): the attention projections'
    (q/k/v with qkv_bias, o with out_bias/o_bias; MLA has none), the dense MLP's, or every
    routed expert's and the router's (expert_bias_params). Biases are weights: parameters
    stored with the layer and read once per step, counted in its attention/FFN bytes and in
    the kernels' "weights" split at Settings.vector_bytes. gpt-oss-20b: 8,000 attention +
    32 x 8,640 expert + 32 router = 284,512 a layer. Norm weights, LayerNorm betas and
    gpt-oss's attention sinks are not biases: norms_bytes, attention_params' vector."""
    att = 0
    if cfg.mla is None:
        att = ((cfg.q_dim + 2 * cfg.kv_dim if cfg.qkv_bias else 0)
               + (cfg.hidden if cfg.out_bias or cfg.o_bias else 0))
    if not moe or cfg.moe is None:
        return att + mlp_params(cfg, cfg.intermediate)[1]
    e_b, r_b = expert_bias_params(cfg)     # shared experts carry none (count_params)
    return att + cfg.moe.experts * e_b + r_b


def norm_params(cfg: ModelConfig) -> int:
    """One norm: RMSNorm has a weight, LayerNorm a weight and a bias."""
    return cfg.hidden * (2 if cfg.norm == "layernorm" else 1)


def count_params(cfg: ModelConfig) -> ParamCount:
    att_m, att_v = attention_params(cfg)
    dense_m, dense_v = mlp_params(cfg, cfg.intermediate)
    moe_layers = cfg.moe_layers
    dense_layers = cfg.layers - moe_layers
    experts = shared = router = active = moe_vector = 0
    if cfg.moe:
        e_m, _ = mlp_params(cfg, cfg.moe.intermediate)
        experts = moe_layers * cfg.moe.experts * e_m
        active = moe_layers * cfg.moe.top_k * e_m
        shared = moe_layers * cfg.moe.shared * e_m
        router = moe_layers * cfg.hidden * cfg.moe.experts
        e_b, r_b = expert_bias_params(cfg)
        experts += moe_layers * cfg.moe.experts * e_b
        active += moe_layers * cfg.moe.top_k * e_b
        router += moe_layers * r_b
        moe_vector = moe_layers * (cfg.moe.experts * e_b + r_b)
    norms = (cfg.layers * cfg.norms_per_layer + 1) * norm_params(cfg)
    if cfg.qk_norm:    # Qwen3's / Gemma 3's q_norm and k_norm: one head_dim gamma each per layer
        norms += cfg.layers * 2 * cfg.head_dim
    embedding = cfg.vocab * cfg.hidden
    if cfg.positions == "learned":
        embedding += (cfg.max_positions or 0) * cfg.hidden
    vector = norms + cfg.layers * att_v + dense_layers * dense_v + moe_vector
    return ParamCount(
        embedding=embedding, attention=cfg.layers * (att_m + att_v),
        mlp=dense_layers * (dense_m + dense_v), experts=experts, shared_experts=shared,
        router=router, norms=norms, lm_head=0 if cfg.tied_embeddings else cfg.vocab * cfg.hidden,
        vector=vector, active_experts=active)


def _attention_modules(cfg: ModelConfig) -> dict[str, int]:
    """Matrix parameters of one attention block by kernel name (kernels.py's linears)."""
    h = cfg.hidden
    if not cfg.mla:
        return {"q_proj": h * cfg.q_dim, "k_proj": h * cfg.kv_dim, "v_proj": h * cfg.kv_dim,
                "o_proj": cfg.q_dim * h}
    m = cfg.mla
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    q = ({"q_a_proj": h * m.q_lora_rank, "q_b_proj": m.q_lora_rank * cfg.heads * qk}
         if m.q_lora_rank else {"q_proj": h * cfg.heads * qk})
    return {**q, "kv_a_proj": h * (m.kv_lora_rank + m.qk_rope_head_dim),
            "kv_b_proj": m.kv_lora_rank * cfg.heads * (m.qk_nope_head_dim + m.v_head_dim),
            "o_proj": cfg.heads * m.v_head_dim * h}


def _mlp_modules(cfg: ModelConfig, width: int, prefix: str = "") -> dict[str, int]:
    names = ("gate_proj", "up_proj", "down_proj") if cfg.gated_mlp else ("up_proj", "down_proj")
    return {prefix + n: cfg.hidden * width for n in names}


def module_params(cfg: ModelConfig) -> dict[str, int]:
    """Matrix parameters of each linear kernel name over all layers (kernels.py's names:
    q_proj, expert_down_proj, router, lm_head, ...); with the embedding table they sum to
    ParamCount.matrix. What a checkpoint keeps unquantized (Settings.keep) is looked up here."""
    out: dict[str, int] = {}

    def add(parts: dict[str, int], times: int) -> None:
        for name, n in parts.items():
            out[name] = out.get(name, 0) + n * times

    add(_attention_modules(cfg), cfg.layers)
    add(_mlp_modules(cfg, cfg.intermediate), cfg.layers - cfg.moe_layers)
    if cfg.moe:
        add(_mlp_modules(cfg, cfg.moe.intermediate, "expert_"), cfg.moe_layers * cfg.moe.experts)
        if cfg.moe.shared:
            add(_mlp_modules(cfg, cfg.moe.intermediate * cfg.moe.shared, "shared_"),
                cfg.moe_layers)
        add({"router": cfg.hidden * cfg.moe.experts}, cfg.moe_layers)
    add({"lm_head": 0 if cfg.tied_embeddings else cfg.vocab * cfg.hidden}, 1)
    return out
