"""Tensor parallelism (Megatron-LM, Shoeybi et al. 2019, arXiv:1909.08053): each device holds
1/tp of the heads, of the MLP width and of the vocabulary; two all-reduces of the hidden
state per layer (after attention and after the MLP).

Ring all-reduce time ≈ 2(n-1)/n x bytes / link bandwidth + latency (nccl-tests' bus
bandwidth convention, FACTS.md "Communication").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...errors import InputError
from ...model.ceiling import Roof
from ...model.parallel import Link, TPStep, link_from_roof
from .config import ModelConfig
from .kernels import decode_step
from .settings import Settings
from .timing import time_step


def shard(cfg: ModelConfig, tp: int) -> ModelConfig:
    """The slice of the model one of `tp` devices holds (KV heads replicate when fewer
    than tp)."""
    if tp == 1:
        return cfg
    if cfg.heads % tp:
        raise InputError(f"--tp {tp} must divide the {cfg.heads} attention heads of {cfg.name}")
    moe = cfg.moe and replace(cfg.moe, intermediate=math.ceil(cfg.moe.intermediate / tp))
    return cfg.with_(heads=cfg.heads // tp, kv_heads=max(1, cfg.kv_heads // tp),
                     intermediate=math.ceil(cfg.intermediate / tp),
                     vocab=math.ceil(cfg.vocab / tp), moe=moe,
                     name=f"{cfg.name} (1/{tp} per device)")


def link_ceiling(roof: Roof, link_bytes_per_s: float | None = None,
                 source: str = "given (--link-bw)") -> tuple[float, str]:
    """The link bandwidth all-reduces run on: given, else the roof's link ceiling, the
    first of model.parallel.LINK_LEVELS it has (NVLink, PCIe, network, or the loopback a
    cluster profile of `rooflab probe --comm` measured)."""
    if link_bytes_per_s:
        return link_bytes_per_s, source
    lk = link_from_roof(roof)      # its error says how to measure or give one
    return lk.bus_bytes_per_s, lk.source


@dataclass(frozen=True)
class TPResult:
    tp: int
    compute_s: float          # per-device decode floor (sum of kernel floors)
    allreduce_bytes: float    # payload of one all-reduce
    allreduces: int           # per step
    comm_s: float             # all-reduce time per step on the link ceiling
    link_bytes_per_s: float | None
    link_source: str
    prefill_comm_s: float = 0.0   # the prefill's all-reduces (batch x prompt tokens each)
    latency_s: float = 0.0        # per all-reduce, in comm_s and prefill_comm_s (0: not given)

    @property
    def tpot_s(self) -> float:
        """No overlap of communication with compute is assumed."""
        return self.compute_s + self.comm_s

    def comm_s_at(self, batch: int, tabled_batch: int) -> float:
        """The step's all-reduces at another batch of the sweep: same count, link and
        latency, the payload (batch x hidden x act bytes) scaled by the batch."""
        if self.tp == 1 or not self.link_bytes_per_s:
            return 0.0
        payload = self.allreduce_bytes / tabled_batch * batch
        return self.allreduces * allreduce_seconds(payload, self.tp, self.link_bytes_per_s,
                                                   self.latency_s)


def allreduce_seconds(nbytes: float, n: int, link_bytes_per_s: float,
                      latency_s: float = 0.0) -> float:
    """Ring all-reduce: 2(n-1)/n x bytes over the link, plus a latency term."""
    if n == 1:
        return 0.0
    return 2.0 * (n - 1) / n * nbytes / link_bytes_per_s + latency_s


def tensor_parallel(cfg: ModelConfig, s: Settings, roof: Roof, *, batch: int, context: int,
                    tp: int, link_bytes_per_s: float | None = None,
                    link_source: str = "given (--link-bw)", latency_s: float = 0.0,
                    prompt: int = 0) -> TPResult:
    """Decode with TP degree `tp`: per-device kernels plus 2 all-reduces per layer; with
    `prompt`, also the prefill's 2 all-reduces per layer of batch x prompt hidden states."""
    step = decode_step(shard(cfg, tp), s, batch, context)
    compute = time_step(step, roof).floor_s
    payload = batch * cfg.hidden * s.act_bytes
    count = 2 * cfg.layers
    if tp == 1:
        return TPResult(1, compute, payload, 0, 0.0, None, "single device")
    if not (latency_s >= 0 and math.isfinite(latency_s)):
        raise InputError(f"--link-latency must be >= 0 microseconds per all-reduce (e.g. "
                         f"10); got {latency_s * 1e6:g}")
    bw, src = link_ceiling(roof, link_bytes_per_s, link_source)
    comm = count * allreduce_seconds(payload, tp, bw, latency_s)
    pre = count * allreduce_seconds(payload * prompt, tp, bw, latency_s) if prompt else 0.0
    return TPResult(tp, compute, payload, count, comm, bw, src, prefill_comm_s=pre,
                    latency_s=latency_s)


def tp_decode_step(cfg: ModelConfig, settings: Settings, roof: Roof, *, batch: int,
                   context: int, tp: int, link: Link) -> TPStep:
    """Decode at tensor-parallel degree `tp` with the LLM model's per-layer all-reduces.

    The transformer counts and the TP split (Megatron-LM, 2 all-reduces of the hidden
    state per layer) are this package's; model.parallel adds the link model, the binding
    ceiling and the communication point."""

    res = tensor_parallel(cfg, settings, roof, batch=batch, context=context, tp=tp,
                          link_bytes_per_s=link.bus_bytes_per_s, link_source=link.source,
                          latency_s=link.allreduce_latency_s(tp))
    step = decode_step(shard(cfg, tp), settings, batch, context)
    points = time_step(step, roof).points
    mem = sum(p.floor_s for p in points if p.bound != "compute")
    comp = sum(p.floor_s for p in points if p.bound == "compute")
    return TPStep(tp, res, step.flop, mem, comp, link, settings.precision)
