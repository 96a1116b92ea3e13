"""Batch sweep of decode: AI, TPOT floor and throughput against batch at one context; and
of prefill (TTFT against batch at one prompt length) for `--phase prefill`. Context sweep
(decode steps against context at one batch) and prompt sweep (prefills against prompt length
at one batch): the sequence-length slider of LLM-Viewer, one value per row.

Weights are read once per step whatever the batch, so AI grows with the batch — until the
per-sequence bytes -- the KV cache and the activations, which every sequence reads and
writes for itself -- catch up with the weights (seed 004, "Day 16", names the KV bytes;
at a short context the activations come first: tinyllama on a T4 at context 16, batch 566).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...errors import InputError
from ...model.ceiling import Roof
from .footprint import Footprint
from .kernels import decode_step, prefill_step
from .model_config import ModelConfig
from .saturation import Saturation, saturation
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

    def kv_rows(self) -> dict[str, float]:
        """KV bytes read and written by the step (their sum is kv_bytes)."""
        st = self.timing.step
        return {"kv_read_bytes": st.kv_read_bytes, "kv_write_bytes": st.kv_write_bytes}


@dataclass(frozen=True)
class Sweep:
    """Points at each batch, plus where the curve bends."""

    context: int
    points: tuple[SweepPoint, ...]
    ridge: float                  # FLOP/byte of the roof the matmuls are held to
    kv_equals_weights_batch: float  # batch at which per-step KV reads equal weight reads
    # batch at which the whole step's aggregate AI (total FLOP / total bytes, as if one
    # kernel) reaches the ridge (None: never). Not where tokens/s stops growing: attention's
    # memory-bound KV bytes dilute it long after the matmuls turn compute-bound (review
    # s18 r3 F1); `saturation` is that batch, by the per-kernel floors
    knee_batch: float | None
    ai_limit: float               # AI as batch -> infinity (FLOP per sequence / bytes per sequence)
    saturation: Saturation | None = None

    def rows(self) -> list[dict[str, float]]:
        return [{"batch": p.batch, "ai": p.ai, "tpot_s": p.tpot_s,
                 "with_launches_s": p.timing.with_launches_s,
                 "tokens_per_s": p.tokens_per_s, "flop_per_s": p.flop_per_s,
                 "weight_bytes": p.weight_bytes, "kv_bytes": p.kv_bytes,
                 "bound": p.timing.bound, "flop": p.timing.step.flop,
                 "bytes": p.timing.step.bytes,
                 "activations_bytes": p.timing.step.bytes_split["activations"],
                 "launches": p.timing.step.launches, **p.kv_rows()} for p in self.points]


@dataclass(frozen=True)
class PrefillSweep:
    """One prefill (batch x prompt tokens) per batch: the TTFT floor a batch of prompts
    admitted together waits for, and the prompt tokens per second it processes."""

    prompt: int
    points: tuple[SweepPoint, ...]    # timing: the prefill step; tpot_s reads as TTFT

    def rows(self) -> list[dict[str, float]]:
        return [{"batch": p.batch, "ai": p.ai, "ttft_s": p.timing.floor_s,
                 "with_launches_s": p.timing.with_launches_s,
                 "prompt_tokens_per_s": p.batch * self.prompt / p.timing.floor_s,
                 "flop_per_s": p.flop_per_s, "bound": p.timing.bound,
                 "flop": p.timing.step.flop, "bytes": p.timing.step.bytes,
                 "weight_bytes": p.weight_bytes,
                 "activations_bytes": p.timing.step.bytes_split["activations"],
                 "kv_bytes": p.kv_bytes, **p.kv_rows()} for p in self.points]


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
                 knee_batch=knee(cfg, s, context, ridge), ai_limit=big.ai,
                 saturation=saturation(cfg, s, roof, context))


def prefill_sweep(cfg: ModelConfig, s: Settings, roof: Roof, batches: Sequence[int],
                  prompt: int) -> PrefillSweep:
    """The prefill step (prefill_step) at each batch of the sweep, `prompt` tokens each."""
    points = tuple(SweepPoint(b, time_step(prefill_step(cfg, s, b, prompt), roof))
                   for b in sweep_batches(batches))
    return PrefillSweep(prompt=prompt, points=points)


# the op kinds of attention proper (naive attention splits it into three kernels)
ATTENTION_OPS = ("attention", "attention_scores", "attention_values", "softmax")


def attention_share(t: StepTiming) -> float:
    """The share of the step's floor spent in attention (the rest: projections, MLP,
    norms, lm_head): what grows with the sequence length."""
    kinds = {o.op.name: o.op.op for o in t.step.ops}
    attn = sum(p.floor_s for p in t.points if kinds.get(p.kernel) in ATTENTION_OPS)
    return attn / t.floor_s if t.floor_s else 0.0


def sweep_lengths(values: Sequence[int], option: str) -> tuple[int, ...]:
    """The contexts or prompts of a sweep: in increasing order, each once."""
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise InputError(f"{option} values must be integers >= 1; got {v!r}")
    return tuple(sorted(set(values)))


@dataclass(frozen=True)
class ContextPoint:
    context: int
    timing: StepTiming
    footprint: Footprint | None    # batch sequences of `context` tokens on one device

    def row(self, batch: int) -> dict:
        st, t, fp = self.timing.step, self.timing, self.footprint
        return {"context": self.context, "ai": st.ai, "tpot_s": t.floor_s,
                "with_launches_s": t.with_launches_s, "tokens_per_s": batch / t.floor_s,
                "flop_per_s": t.achieved_flop_per_s_at_floor, "bound": t.bound,
                "flop": st.flop, "bytes": st.bytes, "launches": st.launches,
                "weight_bytes": st.bytes_split["weights"],
                "activations_bytes": st.bytes_split["activations"],
                "kv_bytes": st.bytes_split["kv"], "kv_read_bytes": st.kv_read_bytes,
                "kv_write_bytes": st.kv_write_bytes, "attention_share": attention_share(t),
                "footprint_bytes": fp.total if fp else None,
                "fits": fp.fits if fp else None,
                "max_batch": fp.max_batch if fp else None}


@dataclass(frozen=True)
class ContextSweep:
    """Decode steps of one batch at each context: the KV cache grows, the weights do not."""

    batch: int
    points: tuple[ContextPoint, ...]
    ridge: float
    # context at which the step's KV bytes (read + written) equal its weight bytes; None:
    # never (every layer's sliding window caps the cache below the weights)
    kv_equals_weights_context: float | None

    def rows(self) -> list[dict]:
        return [p.row(self.batch) for p in self.points]


@dataclass(frozen=True)
class PromptPoint:
    prompt: int
    timing: StepTiming            # the prefill of `batch` x `prompt` tokens


@dataclass(frozen=True)
class PromptSweep:
    """One prefill of `batch` prompts at each prompt length: the TTFT floor."""

    batch: int
    points: tuple[PromptPoint, ...]

    def rows(self) -> list[dict]:
        out = []
        for p in self.points:
            t, st = p.timing, p.timing.step
            out.append({"prompt": p.prompt, "ttft_s": t.floor_s,
                        "with_launches_s": t.with_launches_s, "ai": st.ai,
                        "bound": t.bound, "attention_share": attention_share(t),
                        "prompt_tokens_per_s": self.batch * p.prompt / t.floor_s,
                        "flop_per_s": t.achieved_flop_per_s_at_floor, "flop": st.flop,
                        "bytes": st.bytes, "launches": st.launches,
                        "weight_bytes": st.bytes_split["weights"],
                        "activations_bytes": st.bytes_split["activations"],
                        "kv_bytes": st.bytes_split["kv"], "kv_read_bytes": st.kv_read_bytes,
                        "kv_write_bytes": st.kv_write_bytes})
        return out


def _kv(cfg: ModelConfig, s: Settings, batch: int, context: int) -> float:
    return decode_step(cfg, s, batch, context).bytes_split["kv"]


def kv_equals_weights_context(cfg: ModelConfig, s: Settings, batch: int) -> float | None:
    """Context at which a decode step of `batch` reads and writes as many KV bytes as it
    reads weight bytes (kv_equals_weights turned around).

    Weight bytes do not depend on the context; KV bytes are linear in it between the
    sliding-window edges (a full-attention layer reads batch x context x its per-token
    bytes, a windowed one stops growing at its window), so the crossing is solved on each
    linear piece in closed form: c = lo + (weights - kv(lo)) / slope, not searched."""
    weights = decode_step(cfg, s, batch, 1).bytes_split["weights"]
    if cfg.chunked and cfg.sliding_window:
        return _chunked_crossing(cfg, s, batch, weights)
    edges = sorted({1, *((cfg.sliding_window,) if cfg.sliding_window else ())})
    for i, lo in enumerate(edges):
        at = _kv(cfg, s, batch, lo)
        if at >= weights:
            return float(lo)
        slope = _kv(cfg, s, batch, lo + 1) - at
        hi = edges[i + 1] if i + 1 < len(edges) else None
        if slope > 0:
            c = lo + (weights - at) / slope
            if hi is None or c <= hi:
                return c
    return None


def _chunked_crossing(cfg: ModelConfig, s: Settings, batch: int, weights: float
                      ) -> float | None:
    """kv_equals_weights_context for chunked attention (Llama 4): a chunked layer reads
    (c - 1) mod C + 1 tokens, so the KV read is a saw: K0 + A c + B ((c - 1) mod C + 1),
    with A the full layers' bytes per token and B the chunked ones'. It rises on each
    chunk k (c from kC + 1 to (k + 1) C) and drops at the next; each chunk's top,
    kv(C) + A k C, grows with k, so the first crossing is on the first chunk whose top
    reaches the weights, solved on that linear piece."""
    c_len = cfg.sliding_window
    assert c_len
    top0 = _kv(cfg, s, batch, c_len)
    a = (_kv(cfg, s, batch, c_len + 1) - _kv(cfg, s, batch, 1)) / c_len
    if top0 >= weights:
        k = 0
    elif a <= 0:
        return None        # every layer chunked: the KV read never passes one chunk's
    else:
        k = math.ceil((weights - top0) / (a * c_len))
    lo = k * c_len + 1
    at = _kv(cfg, s, batch, lo)
    if at >= weights:
        return float(lo)
    return lo + (weights - at) / (_kv(cfg, s, batch, lo + 1) - at)


def context_sweep(cfg: ModelConfig, s: Settings, roof: Roof, batch: int,
                  contexts: Sequence[int],
                  footprint_at: Callable[[int], Footprint] | None = None) -> ContextSweep:
    """The decode step (decode_step) of `batch` at each context; footprint_at(context):
    the device's footprint with that many tokens cached (None: no fit column)."""
    points = tuple(ContextPoint(c, time_step(decode_step(cfg, s, batch, c), roof),
                                footprint_at(c) if footprint_at else None)
                   for c in sweep_lengths(contexts, "--context"))
    return ContextSweep(batch=batch, points=points, ridge=ridge_of(roof, s),
                        kv_equals_weights_context=kv_equals_weights_context(cfg, s, batch))


def prompt_sweep(cfg: ModelConfig, s: Settings, roof: Roof, batch: int,
                 prompts: Sequence[int]) -> PromptSweep:
    """The prefill (prefill_step) of `batch` prompts at each prompt length."""
    points = tuple(PromptPoint(p, time_step(prefill_step(cfg, s, batch, p), roof))
                   for p in sweep_lengths(prompts, "--prompt"))
    return PromptSweep(batch=batch, points=points)
