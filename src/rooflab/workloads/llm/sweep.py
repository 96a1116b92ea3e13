"""Batch sweep of decode: AI, TPOT floor and throughput against batch at one context; and
of prefill (TTFT against batch at one prompt length) for `--phase prefill`.

Weights are read once per step whatever the batch, so AI grows with the batch — until the
KV cache, which every sequence reads for itself, catches up with the weights (seed 004,
"Day 16": AI stops equalling the batch because of KV bytes, not FLOP).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import InputError
from ...model.ceiling import Roof
from .config import ModelConfig
from .kernels import decode_step, prefill_step
from .settings import Settings
from .timing import StepTiming, time_step


@dataclass(frozen=True)
class SweepPoint:
    batch: int
    timing: StepTiming

    @property
    def ai(self) -> float:
        return self.timing.step.ai

    @property
    def tpot_s(self) -> float:
        return self.timing.floor_s

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.tpot_s

    @property
    def flop_per_s(self) -> float:
        return self.timing.achieved_flop_per_s_at_floor

    @property
    def weight_bytes(self) -> float:
        return self.timing.step.bytes_split["weights"]

    @property
    def kv_bytes(self) -> float:
        return self.timing.step.bytes_split["kv"]


@dataclass(frozen=True)
class Sweep:
    """Points at each batch, plus where the curve bends."""

    context: int
    points: tuple[SweepPoint, ...]
    ridge: float                  # FLOP/byte of the roof the matmuls are held to
    kv_equals_weights_batch: float  # batch at which per-step KV reads equal weight reads
    knee_batch: float | None      # batch at which the step's AI reaches the ridge (None: never)
    ai_limit: float               # AI as batch -> infinity (FLOP per sequence / bytes per sequence)

    def rows(self) -> list[dict[str, float]]:
        return [{"batch": p.batch, "ai": p.ai, "tpot_s": p.tpot_s,
                 "tokens_per_s": p.tokens_per_s, "flop_per_s": p.flop_per_s,
                 "weight_bytes": p.weight_bytes, "kv_bytes": p.kv_bytes,
                 "bound": p.timing.bound, "flop": p.timing.step.flop,
                 "bytes": p.timing.step.bytes,
                 "activations_bytes": p.timing.step.bytes_split["activations"],
                 "launches": p.timing.step.launches} for p in self.points]


@dataclass(frozen=True)
class PrefillSweep:
    """One prefill (batch x prompt tokens) per batch: the TTFT floor a batch of prompts
    admitted together waits for, and the prompt tokens per second it processes."""

    prompt: int
    points: tuple[SweepPoint, ...]    # timing: the prefill step; tpot_s reads as TTFT

    def rows(self) -> list[dict[str, float]]:
        return [{"batch": p.batch, "ai": p.ai, "ttft_s": p.timing.floor_s,
                 "prompt_tokens_per_s": p.batch * self.prompt / p.timing.floor_s,
                 "flop_per_s": p.flop_per_s, "bound": p.timing.bound,
                 "flop": p.timing.step.flop, "bytes": p.timing.step.bytes,
                 "weight_bytes": p.weight_bytes,
                 "activations_bytes": p.timing.step.bytes_split["activations"],
                 "kv_bytes": p.kv_bytes} for p in self.points]


def sweep_batches(batches: Sequence[int]) -> tuple[int, ...]:
    """The batches of a sweep: in increasing order, each once (`--batch 4,1,1` is 1, 4)."""
    return tuple(sorted(set(check_batches(batches))))


def check_batches(batches: Sequence[int]) -> tuple[int, ...]:
    if not batches:
        raise InputError("--batch needs at least one value, e.g. --batch 1,4,16")
    for b in batches:
        if not isinstance(b, int) or b < 1:
            raise InputError(f"--batch values must be integers >= 1; got {b!r}")
    return tuple(batches)


def ridge_of(roof: Roof, s: Settings) -> float:
    """Ridge of the ceiling the matmuls are held to (tensor unit when the roof has one)."""
    compute, _ = roof.compute_for(s.precision, "tensor")
    return compute.value / roof.bandwidth("DRAM").value


def _ai(cfg: ModelConfig, s: Settings, batch: float, context: int) -> float:
    return decode_step(cfg, s, max(1, int(batch)), context).ai


def knee(cfg: ModelConfig, s: Settings, context: int, ridge: float,
         limit: int = 1 << 24) -> float | None:
    """Smallest batch whose decode AI reaches the ridge (bisection; AI rises with batch)."""
    if _ai(cfg, s, limit, context) < ridge:
        return None
    lo, hi = 1, limit
    if _ai(cfg, s, lo, context) >= ridge:
        return 1.0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _ai(cfg, s, mid, context) < ridge else (lo, mid)
    return float(hi)


def kv_equals_weights(cfg: ModelConfig, s: Settings, context: int) -> float:
    """Batch at which a decode step reads as many KV bytes as weight bytes.

    KV bytes grow linearly with the batch (each sequence reads its own cache). Weight bytes
    are nearly constant for a dense model, but for MoE they grow with the experts the
    batch's tokens touch, so b = weights(b) / kv_per_sequence is solved by fixed-point
    iteration (weights(b) is increasing and bounded, so it climbs to the crossing)."""
    one = decode_step(cfg, s, 1, context).bytes_split
    if not one["kv"]:
        return float("inf")
    b = one["weights"] / one["kv"]
    for _ in range(64):
        nxt = decode_step(cfg, s, max(1, math.ceil(b)), context).bytes_split["weights"] / one["kv"]
        if abs(nxt - b) < 0.5:
            return nxt
        b = nxt
    return b


def batch_sweep(cfg: ModelConfig, s: Settings, roof: Roof, batches: Sequence[int],
                context: int) -> Sweep:
    points = tuple(SweepPoint(b, time_step(decode_step(cfg, s, b, context), roof))
                   for b in sweep_batches(batches))
    ridge = ridge_of(roof, s)
    big = decode_step(cfg, s, 1 << 24, context)
    return Sweep(context=context, points=points, ridge=ridge,
                 kv_equals_weights_batch=kv_equals_weights(cfg, s, context),
                 knee_batch=knee(cfg, s, context, ridge), ai_limit=big.ai)


def prefill_sweep(cfg: ModelConfig, s: Settings, roof: Roof, batches: Sequence[int],
                  prompt: int) -> PrefillSweep:
    """The prefill step (prefill_step) at each batch of the sweep, `prompt` tokens each."""
    points = tuple(SweepPoint(b, time_step(prefill_step(cfg, s, b, prompt), roof))
                   for b in sweep_batches(batches))
    return PrefillSweep(prompt=prompt, points=points)
