"""Tensor parallelism (Megatron-LM, Shoeybi et al. 2019, arXiv:1909.08053): each device holds
1/tp of the heads, of the MLP width and of the vocabulary; two all-reduces of the hidden
state per layer (after attention and after the MLP), one of the embedded tokens per
forward pass (vLLM VocabParallelEmbedding.forward: each rank looks up the ids in its
slice of the vocabulary, zeroes the others, tensor_model_parallel_all_reduce), and the
vocab-parallel logits gathered once.

Each all-reduce is model.parallel.Link.allreduce_s, the ring (nccl-tests' bus bandwidth
convention, FACTS.md "Communication"): 2(n-1) x hop latency + 2(n-1)/n x bytes / bus
bandwidth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...errors import InputError
from ...model.ceiling import Roof
from ...model.comm_link import link_from_roof, ring_hops
from ...model.parallel import Link, TPStep, allreduce_link_bytes
from .kernels import decode_step
from .layer_weights import layer_weights
from .model_config import ModelConfig
from .settings import Settings
from .stored_weights import StoredWeights, weight_class
from .timing import time_step, work_split


def shard(cfg: ModelConfig, tp: int) -> ModelConfig:
    """The slice of the model one of `tp` devices holds (KV heads replicate when fewer
    than tp)."""
    if tp == 1:
        return cfg
    check_tp_heads(cfg, tp)
    moe = cfg.moe and replace(cfg.moe, intermediate=math.ceil(cfg.moe.intermediate / tp))
    part = cfg.with_(heads=cfg.heads // tp, kv_heads=max(1, cfg.kv_heads // tp),
                     intermediate=math.ceil(cfg.intermediate / tp),
                     vocab=math.ceil(cfg.vocab / tp), moe=moe,
                     name=f"{cfg.name} (1/{tp} per device)")
    st = cfg.stored
    if st is None or len(st.layer_bytes) != cfg.layers:
        return part
    return part.with_(stored=replace(st, layer_bytes=_layer_shares(cfg, part, st), tp=tp))


def check_tp_heads(cfg: ModelConfig, tp: int) -> None:
    """Inference --tp N splits the attention heads evenly, and the KV heads either evenly
    or, fewer than N, each replicated on N / kv devices (vLLM's rule); otherwise an error
    that lists the degrees that do (review s33 E: it named none, and qwen2.5-7b's 4 KV
    heads at --tp 7 were counted as one per device where some devices need two)."""
    heads, kv = cfg.heads, cfg.kv_heads
    if not heads % tp and (not kv % tp or not tp % kv):
        return
    ok = [d for d in range(2, heads + 1) if not heads % d and (not kv % d or not d % kv)]
    why = (f"must divide the {heads} attention heads of {cfg.name} (each device takes "
           f"heads / tp of them)" if heads % tp else
           f"neither divides the {kv} KV heads of {cfg.name} nor is a multiple of them "
           f"(they split evenly, or each is replicated on tp / {kv} devices, as vLLM "
           f"requires)")
    raise InputError(f"--tp {tp} {why}; give --tp "
                     f"{' or '.join(map(str, ok[:8])) if ok else '1'}")


def _layer_shares(cfg: ModelConfig, part: ModelConfig, st: StoredWeights
                  ) -> tuple[float, ...]:
    """A GGUF file's blk.N bytes, one device's share of each: the file's layer times the
    share of it the shard counts (heads and MLP width split, norms, MLA's latent
    projections and the router replicated), dense and MoE layers each their own (review
    s27 v2-F5: a stage held whole layers under --tp)."""
    s = Settings(weights=weight_class(st.main_type), stored=st)
    whole, one = layer_weights(cfg, s), layer_weights(part, s)

    def share(i: int) -> float:
        dense = not cfg.is_moe_layer(i) and whole.dense_layer is not None
        a, b = (whole.dense_layer, one.dense_layer) if dense else (whole.layer, one.layer)
        assert a is not None and b is not None
        return b.total_bytes / a.total_bytes if a.total_bytes else 1.0
    return tuple(n * share(i) for i, n in enumerate(st.layer_bytes))


# The hop latency the TPOT line weighs when a link has none (catalog links): 1 us, the order
# of NCCL's per-hop cost on NVLink/PCIe (review r3 F2); a sensitivity, not a default.
HOP_SENSITIVITY_S = 1e-6


@dataclass(frozen=True)
class TPResult:
    """A decode step at tensor-parallel degree `tp`: one device's kernels, then
    `allreduces` ring all-reduces of `allreduce_bytes` each on `link` (Link.allreduce_s,
    the one all-reduce formula). No overlap of communication with compute is assumed."""

    tp: int
    compute_s: float          # per-device decode floor (sum of kernel floors)
    allreduce_bytes: float    # payload of one all-reduce
    allreduces: int           # per step
    link: Link | None         # None on one device
    prompt: int = 0           # prefill tokens per sequence: the prefill's all-reduces
    # the vocab-parallel lm_head's logits, batch x vocab, gathered once a step (vLLM
    # LogitsProcessor._gather_logits, TRT-LLM gather_output); review 18d E
    gather_bytes: float = 0.0
    # the vocab-parallel embedding's all-reduce of the embedded tokens, batch x hidden x
    # 16-bit, once per forward pass (vLLM VocabParallelEmbedding); 0 on one device
    embedding_bytes: float = 0.0
    # query tokens per sequence in the decode step (Settings.decode_tokens): the decode
    # payloads above are batch x query_tokens rows, the prefill's per prompt token and
    # its gather (the last position only) are 1/query_tokens of them (review s21 x1 F1)
    query_tokens: int = 1
    # dies per device (model.dies.software_devices: an MI250X package is 2 GCDs, each a
    # rank to ROCm): the ring runs over tp x dies ranks, each holding the whole payload,
    # while `tp` counts packages (its compute and memory are the package's)
    dies: int = 1

    @property
    def ring(self) -> int:
        """The ranks each ring collective runs over: tp x dies (a --tp 4 of MI250X
        packages is a ring over 8 GCDs: 2 x 7/8 of the bytes, not 2 x 3/4)."""
        return self.tp * max(1, self.dies)

    @property
    def comm_s(self) -> float:
        """The step's per-layer all-reduces on the link, latency included (the embedding's
        all-reduce apart: embedding_s; the logits gather apart: gather_s; a pipeline's
        stages share the per-layer all-reduces, the first one embeds, the last gathers)."""
        return self._allreduces_s(self.allreduce_bytes)

    @property
    def embedding_s(self) -> float:
        """The embedding's one all-reduce of batch x hidden (Link.allreduce_s)."""
        return self._one_allreduce_s(self.embedding_bytes)

    @property
    def prefill_embedding_s(self) -> float:
        """The prefill's embedding all-reduce: every prompt token, batch x prompt x hidden."""
        return self._one_allreduce_s(self.embedding_bytes / self.query_tokens * self.prompt)

    @property
    def link_s(self) -> float:
        """Everything a decode step sends over the link: the per-layer all-reduces, the
        embedding's all-reduce and the logits gather (tpot_s - compute_s)."""
        return self.comm_s + self.embedding_s + self.gather_s

    @property
    def link_bytes(self) -> float:
        """What each rank sends over the link in one decode step, for the same account as
        link_s: ring all-reduces 2(tp-1)/tp x payload each, the gather (tp-1)/tp x its
        bytes (model.comm_link.allreduce_link_bytes)."""
        if self.link is None or self.tp <= 1:
            return 0.0
        n = self.ring
        return (self.allreduces * allreduce_link_bytes(self.allreduce_bytes, n)
                + allreduce_link_bytes(self.embedding_bytes, n)
                + (n - 1) / n * self.gather_bytes)

    @property
    def gather_s(self) -> float:
        """The logits gather: a ring all-gather of batch x vocab, (tp-1) hops and (tp-1)/tp
        of the bytes over the bus bandwidth (vLLM gathers to rank 0: no cheaper on a
        ring)."""
        return self._gather_s(self.gather_bytes)

    @property
    def prefill_comm_s(self) -> float:
        """The prefill's all-reduces: as many, of batch x prompt hidden states each (its
        logits gather apart: prefill_gather_s)."""
        if not self.prompt:
            return 0.0
        return self._allreduces_s(self.allreduce_bytes / self.query_tokens * self.prompt)

    @property
    def prefill_gather_s(self) -> float:
        """The prefill's logits gather: the last position only (batch x vocab, where a
        decode step of N query tokens gathers N positions)."""
        return self._gather_s(self.gather_bytes / self.query_tokens) if self.prompt else 0.0

    @property
    def prefill_link_s(self) -> float:
        """What the prefill adds to TTFT over the link: all-reduces, embedding, gather."""
        return self.prefill_comm_s + self.prefill_embedding_s + self.prefill_gather_s

    @property
    def tpot_s(self) -> float:
        return self.compute_s + self.link_s

    @property
    def link_bytes_per_s(self) -> float | None:
        return self.link.bus_bytes_per_s if self.link else None

    @property
    def link_source(self) -> str:
        return self.link.source if self.link else "single device"

    @property
    def latency_s(self) -> float:
        """What one all-reduce pays in latency: 2(tp-1) hops x the link's hop latency."""
        return self.link.allreduce_latency_s(self.ring) if self.link else 0.0

    def hop_latency_step_s(self, hop_s: float = HOP_SENSITIVITY_S) -> float:
        """What `hop_s` more latency per ring hop adds to one decode step: 2(tp-1) hops per
        all-reduce (the per-layer ones and the embedding's) and tp-1 for the logits
        gather. The weight of the latency a catalog link leaves out (review r3 F2: llama-3-70b
        --tp 8 --batch 64 on H100, (160 + 1) x 14 + 7 = 2261 hops: +2.26 ms at 1 us)."""
        if self.link is None or self.tp <= 1:
            return 0.0
        hops = ((self.allreduces + (1 if self.embedding_bytes else 0)) * ring_hops(self.ring)
                + (self.ring - 1 if self.gather_bytes else 0))
        return hops * hop_s

    def comm_s_at(self, batch: int, tabled_batch: int) -> float:
        """The step's all-reduces at another batch of the sweep: same count, link and
        latency, the payload (batch x hidden x Settings.comm_bytes) scaled by the batch."""
        return self._allreduces_s(self.allreduce_bytes / tabled_batch * batch)

    def gather_s_at(self, batch: int, tabled_batch: int) -> float:
        """The logits gather at another batch of the sweep (batch x vocab)."""
        return self._gather_s(self.gather_bytes / tabled_batch * batch)

    def embedding_s_at(self, batch: int, tabled_batch: int) -> float:
        """The embedding's all-reduce at another batch of the sweep (batch x hidden)."""
        return self._one_allreduce_s(self.embedding_bytes / tabled_batch * batch)

    def _one_allreduce_s(self, payload: float) -> float:
        if self.link is None or not payload:
            return 0.0
        return self.link.allreduce_s(payload, self.ring)

    def _allreduces_s(self, payload: float) -> float:
        if self.link is None:
            return 0.0
        return self.allreduces * self.link.allreduce_s(payload, self.ring)

    def _gather_s(self, nbytes: float) -> float:
        if self.link is None or self.tp <= 1 or not nbytes:
            return 0.0
        n = self.ring
        return ((n - 1) * self.link.hop_latency_s
                + (n - 1) / n * nbytes / self.link.bus_bytes_per_s)


def tensor_parallel(cfg: ModelConfig, s: Settings, roof: Roof, *, batch: int, context: int,
                    tp: int, link: Link | None = None, prompt: int = 0) -> TPResult:
    """Decode with TP degree `tp`: per-device kernels plus 2 all-reduces per layer, the
    embedding's all-reduce and one gather of the vocab-parallel logits on
    `link` (default: the roof's link ceiling, the first of model.comm_link.LINK_LEVELS it
    has: NVLink, PCIe, network, or the loopback `rooflab probe --comm` measured); with
    `prompt`, also the prefill's 2 all-reduces per layer and its embedding all-reduce of
    batch x prompt hidden states. A decode step of Settings.decode_tokens = N query tokens
    per sequence (a speculative verify) carries batch x N rows through every all-reduce
    and gathers batch x N logits (lm_head scores all N: kernels.decode_step)."""
    step = decode_step(shard(cfg, tp), s, batch, context)
    compute = time_step(step, roof).floor_s
    rows = batch * s.decode_tokens                 # the step's query tokens
    payload = rows * cfg.hidden * s.comm_bytes     # the 16-bit residual stream
    if tp == 1:
        return TPResult(1, compute, payload, 0, None, query_tokens=s.decode_tokens)
    link = link or link_from_roof(roof)      # its error says how to measure or give one
    # logits at the residual stream's 16-bit width (lm_head's output dtype)
    gather = rows * cfg.vocab * s.comm_bytes
    # the embedded tokens: one more all-reduce of the same rows x hidden payload
    from ...model.dies import software_devices

    return TPResult(tp, compute, payload, 2 * cfg.layers, link, prompt, gather,
                    embedding_bytes=payload, query_tokens=s.decode_tokens,
                    dies=software_devices(roof))


def tp_decode_step(cfg: ModelConfig, settings: Settings, roof: Roof, *, batch: int,
                   context: int, tp: int, link: Link) -> TPStep:
    """tensor_parallel's decode step as a model.parallel.TPStep: the same all-reduces on
    the same link, plus the binding ceiling and the communication point (FLOP per byte
    over the link) to draw under the link ceiling."""
    res = tensor_parallel(cfg, settings, roof, batch=batch, context=context, tp=tp,
                          link=link)
    step = decode_step(shard(cfg, tp), settings, batch, context)
    points = time_step(step, roof).points
    mem, comp = work_split(points)
    return TPStep(tp, res, step.flop, mem, comp, link, settings.precision)
