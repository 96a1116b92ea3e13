"""Pipeline parallelism on the roof: stages of consecutive layers, one token through them.

Seed 002 §2.4: parallelism that splits the model's weight blocks redraws the roof. Pipeline
parallelism (GPipe, Huang et al. 2019, arXiv:1811.06965) gives each of `pp` devices (or TP
groups) a run of consecutive layers; between stages only the hidden state of the batch
moves, point to point.

Assumptions (stated on every result):
- A stage's time is the sum of its kernels' floors (plus its TP all-reduces, if any).
- A stage-to-stage transfer is point to point: bytes / link bandwidth per direction + the
  link's latency. Sending overlaps the next micro-batch's compute (separate streams).
- Latency view (one batch in flight): a token passes every stage in turn, so
  TPOT = sum of stage times + (pp - 1) transfers. The sum of the stage times is the
  one-device time: pipeline parallelism does not cut single-stream latency.
- Throughput view (M micro-batches of `batch` in flight): decode is autoregressive, so a
  micro-batch's next token starts only after its previous one left the last stage. A round
  in which every micro-batch makes one token lasts max(M x period, TPOT), where the period
  max(slowest stage, one transfer) is the pace of a full pipeline. Tokens/s = M x batch /
  round; with M = pp and even stages that is pp x batch / TPOT.
- Memory in the throughput view: each stage keeps the KV of every sequence in flight,
  M x batch of them, for its layers; it computes one micro-batch at a time, so it holds
  one prompt's prefill workspace, reserved once (review 11b #2: the one-batch figure said
  "fits" for 4 x 300 sequences of llama-3-70b that need 99 GB of an 80 GB H100).
- The sampled token's way back to the first stage (a few bytes per sequence, through the
  scheduler) is not counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from .parallel import Link

ASSUMPTIONS = (
    "stage time = sum of its kernel floors (+ its TP all-reduces)",
    "stage-to-stage transfer: point to point, bytes / link bandwidth per direction + latency",
    "TPOT = sum of stage times + (pp - 1) transfers: no speed-up for one stream",
    "throughput: round = max(M x max(slowest stage, transfer), TPOT); tokens/s = M x batch "
    "/ round",
    "throughput memory per stage: weights + KV of M x batch sequences + one micro-batch's "
    "activations",
)


def split_layers(layers: int, pp: int) -> tuple[range, ...]:
    """Consecutive layer ranges for `pp` stages; when `layers` does not divide evenly the
    first `layers % pp` stages take one layer more. The last stage, which also holds the
    LM head, is never among them: in decode the LM head reads vocab x hidden weights,
    about a layer's worth in Llama models, while the first stage's embedding reads only
    the batch's rows. Serving frameworks differ here (vLLM takes a split by hand from
    VLLM_PP_LAYER_PARTITION); the stage times show what a split costs."""
    if not isinstance(pp, int) or pp < 1:
        raise InputError(f"--pp must be an integer >= 1 (pipeline stages); got {pp!r}")
    if pp > layers:
        raise InputError(f"--pp {pp} is more stages than the model's {layers} layers; a "
                         f"stage holds at least one layer: use --pp {layers} or fewer")
    q, r = divmod(layers, pp)
    out, start = [], 0
    for i in range(pp):
        n = q + (1 if i < r else 0)
        out.append(range(start, start + n))
        start += n
    return tuple(out)


def p2p_seconds(nbytes: float, link: Link) -> float:
    """One point-to-point send of `nbytes` on `link`: bytes / bandwidth + latency."""
    return nbytes / link.bus_bytes_per_s + link.hop_latency_s if nbytes else 0.0


@dataclass(frozen=True)
class Stage:
    """One pipeline stage on one device (per TP rank when combined with TP)."""

    index: int
    layers: range                 # the model's layers this stage holds
    holds: tuple[str, ...]        # model-level parts it also holds (embedding, lm_head)
    compute_s: float              # decode floor of its kernels
    comm_s: float = 0.0           # its TP all-reduces (0 without TP)
    weights_bytes: float = 0.0
    kv_bytes: float = 0.0
    activations_bytes: float = 0.0
    prefill_s: float = 0.0        # prefill floor of its kernels (+ its TP all-reduces)
    # the decode batch's fp32 logits, batch x vocab x 4 B, on the LM head's stage (vLLM's
    # profile run reserves them for the sampler: footprint.decode_logits_bytes)
    logits_bytes: float = 0.0

    @property
    def seconds(self) -> float:
        """Decode time of this stage for one micro-batch (no overlap of TP comm)."""
        return self.compute_s + self.comm_s

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.kv_bytes + self.activations_bytes + self.logits_bytes

    def describe(self) -> str:
        lo, hi = self.layers.start, self.layers.stop - 1
        span = f"layer {lo}" if lo == hi else f"layers {lo}-{hi}"
        return span + "".join(f" + {h}" for h in self.holds)


@dataclass(frozen=True)
class PPStep:
    """A pipeline-parallel decode step: `stages` in order, `transfer_bytes` between
    neighbours (the batch's hidden state), `micro_batches` in flight for throughput."""

    stages: tuple[Stage, ...]
    batch: int
    transfer_bytes: float
    link: Link
    micro_batches: int
    tp: int = 1
    prefill_transfer_bytes: float = 0.0
    assumptions: tuple[str, ...] = field(default=ASSUMPTIONS)
    device_bytes: float | None = None     # memory per device, for the in-flight fit

    def __post_init__(self) -> None:
        if not self.stages:
            raise InputError("a pipeline needs at least one stage")
        if not isinstance(self.micro_batches, int) or self.micro_batches < 1:
            raise InputError(f"--micro-batches must be an integer >= 1; got "
                             f"{self.micro_batches!r}")

    @property
    def pp(self) -> int:
        return len(self.stages)

    @property
    def gpus(self) -> int:
        return self.pp * self.tp

    @property
    def hop_s(self) -> float:
        """One decode transfer between neighbouring stages."""
        return p2p_seconds(self.transfer_bytes, self.link)

    @property
    def transfer_s(self) -> float:
        """All transfers of one token: (pp - 1) hops."""
        return (self.pp - 1) * self.hop_s

    @property
    def stages_s(self) -> float:
        """Sum of the stage times: the one-device (or one TP group) step time."""
        return sum(st.seconds for st in self.stages)

    @property
    def tpot_s(self) -> float:
        """Latency view, one batch in flight: every stage in turn plus the transfers."""
        return self.stages_s + self.transfer_s

    @property
    def prefill_transfer_s(self) -> float:
        """The prompt's hidden states (batch x prompt tokens) through (pp - 1) hops."""
        return (self.pp - 1) * p2p_seconds(self.prefill_transfer_bytes, self.link)

    @property
    def slowest(self) -> Stage:
        return max(self.stages, key=lambda st: st.seconds)

    @property
    def period_s(self) -> float:
        """The pace of a full pipeline: the slowest stage, or one transfer if longer."""
        return max(self.slowest.seconds, self.hop_s)

    @property
    def round_s(self) -> float:
        """Time in which each micro-batch in flight makes one token."""
        return max(self.micro_batches * self.period_s, self.tpot_s)

    @property
    def tokens_per_s(self) -> float:
        """Throughput view: M micro-batches of `batch` per round, for the whole system."""
        return self.micro_batches * self.batch / self.round_s

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.tokens_per_s / self.gpus

    @property
    def bubble(self) -> float:
        """Idle share of the slowest stage in the throughput view (0 when it never
        waits): 1 - M x stage / round; with M < pp even stages idle 1 - M / pp."""
        busy = self.micro_batches * self.slowest.seconds / self.round_s
        gap = 1.0 - busy
        return gap if gap > 1e-12 else 0.0     # float residue is not a bubble

    @property
    def in_flight(self) -> int:
        """Sequences live at once in the throughput view: M micro-batches of `batch`."""
        return self.micro_batches * self.batch

    def in_flight_kv_bytes(self, st: Stage) -> float:
        """The KV a stage keeps for every sequence in flight (its layers only)."""
        return self.micro_batches * st.kv_bytes

    def in_flight_bytes(self, st: Stage) -> float:
        """A stage's resident bytes in the throughput view: weights, the KV of M x batch
        sequences and their decode logits, one prompt's prefill workspace (reserved
        once)."""
        return (st.weights_bytes + self.micro_batches * (st.kv_bytes + st.logits_bytes)
                + st.activations_bytes)

    @property
    def heaviest_in_flight(self) -> Stage:
        return max(self.stages, key=self.in_flight_bytes)

    @property
    def fits_in_flight(self) -> bool | None:
        """Whether every stage holds its M micro-batches (None: memory unknown)."""
        if not self.device_bytes:
            return None
        return self.in_flight_bytes(self.heaviest_in_flight) <= self.device_bytes

    @property
    def max_micro_batch(self) -> int | None:
        """The largest batch per micro-batch with which every stage holds M of them: per
        stage floor((memory - weights - activations) / (M x (KV + logits) per sequence)). The
        activations are one prompt's prefill workspace, reserved once whatever the batch
        (footprint.Footprint.max_batch, review 18d B), so they are not divided by it. 0
        when the weights and workspace alone do not fit, None when the memory is unknown."""
        if not self.device_bytes:
            return None
        best = None
        for st in self.stages:
            per_seq = self.micro_batches * (st.kv_bytes + st.logits_bytes) / self.batch
            if per_seq <= 0:
                continue
            free = self.device_bytes - st.weights_bytes - st.activations_bytes
            n = max(0, math.floor(free / per_seq))
            best = n if best is None else min(best, n)
        return best


def pp_step(stages: Sequence[Stage], *, batch: int, hidden: int, act_bytes: float,
            link: Link, micro_batches: int | None = None, tp: int = 1,
            prompt: int = 0, device_bytes: float | None = None) -> PPStep:
    """A PPStep whose transfers carry batch x hidden activations per token (and
    batch x prompt x hidden in prefill); `micro_batches` defaults to the stage count."""
    stages = tuple(stages)
    m = len(stages) if micro_batches is None else micro_batches
    return PPStep(stages, batch, batch * hidden * act_bytes, link, m, tp,
                  prefill_transfer_bytes=batch * prompt * hidden * act_bytes,
                  device_bytes=device_bytes)
