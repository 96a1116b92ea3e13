"""Parallel steps on the roof: data-parallel training, tensor-parallel decode, scale what-ifs.

Seed 002 §2.4: with data parallelism every step ends in a gradient all-reduce, so a link's
bandwidth, not FLOP, can define the step; tensor parallelism adds all-reduces inside every
layer and cuts each device's share of the work (and its reuse). Links are memory ceilings
(levels units.LINKS: `NVLink`, `xGMI`, `ICI`, `PCIe`, `network`, `loopback`): a step's
communication point has AI = FLOP / bytes over the link and sits under that ceiling on the
same chart.

Assumptions (stated on every result):
- Ring all-reduce (nccl-tests PERFORMANCE.md; Patarasuk & Yuan 2009): each rank sends
  2(n-1)/n x S bytes in 2(n-1) steps, so t = 2(n-1) x hop latency + 2(n-1)/n x S / B_bus,
  where B_bus is the bus bandwidth nccl-tests reports. NCCL switches to trees at scale,
  so the latency term is pessimistic for large n; the bandwidth term is the ring's.
- A layer's time is its roofline floor max(FLOP / P, bytes / B_DRAM) (no launch overhead);
  B_DRAM is the ceiling byte_convention.memory_ceiling picks for its bytes (layer_dram).
- Training FLOP of a linear layer: 6 t k n (forward 2tkn, backward 4tkn: dX and dW).
- Data parallelism is weak scaling: each device keeps its batch; gradients are all-reduced
  once per layer (DDP buckets ~ layers).
- Overlap: a layer's all-reduce starts when its backward is done and the link is free;
  compute never waits for the link (separate streams, no contention for memory).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .ceiling import Ceiling, Roof
from .comm_link import RING, Link, allreduce_latency_words, allreduce_link_bytes, ring_link
from .kernel import Kernel
from .link_fits import link_from_profile  # noqa: F401  (docs/comm.md imports it from here)

GPU_COUNTS = tuple(2**i for i in range(11))          # 1, 2, 4, ..., 1024


# --- data-parallel training step -----------------------------------------------------------
@dataclass(frozen=True)
class Layer:
    """One layer's training work per device per step (forward + backward)."""

    name: str
    flop: float
    act_bytes: float          # activation traffic (scales with the per-device batch)
    weight_bytes: float       # weight + weight-gradient traffic (does not)
    grad_bytes: float         # gradient bytes all-reduced
    precision: str = "bf16"
    backward_share: float = 2 / 3   # backward is ~2x forward (6tkn = 2tkn + 4tkn)

    @property
    def bytes(self) -> float:
        return self.act_bytes + self.weight_bytes


def linear_layer(name: str, tokens: int, k: int, n: int, dtype_bytes: float = 2.0,
                 grad_bytes_per_param: float | None = None, precision: str = "bf16") -> Layer:
    """A k x n linear layer trained on `tokens` tokens per device.

    FLOP = 6 t k n. Compulsory bytes (each operand once per use): forward reads X, W and
    writes Y; backward reads dY, W and writes dX; reads X, dY and writes dW. Activations
    3 b (t k + t n); weights 2 reads + 1 gradient write = 3 b k n."""
    if min(tokens, k, n) < 1:
        raise InputError(f"layer {name}: tokens, k and n must be >= 1")
    g = dtype_bytes if grad_bytes_per_param is None else grad_bytes_per_param
    return Layer(name, 6.0 * tokens * k * n, 3 * dtype_bytes * (tokens * k + tokens * n),
                 3 * dtype_bytes * k * n, g * k * n, precision)


def block_shapes(hidden: int) -> tuple[tuple[str, int, int], ...]:
    """One transformer block's linear layers as (name, k, n): QKV h x 3h, attention output
    h x h, MLP up h x 4h and down 4h x h, 12 h^2 parameters. `rooflab scale`'s step
    (dp_block_layers) and its memory line (dp_block_params) both read it here, so a change
    of the block's shape (an MLP ratio) reaches both."""
    h = hidden
    return (("qkv", h, 3 * h), ("out", h, h), ("up", h, 4 * h), ("down", 4 * h, h))


def dp_block_layers(hidden: int, blocks: int, tokens: int, dtype: str,
                    grad_dtype: str | None = None) -> list[Layer]:
    """`blocks` transformer blocks (block_shapes) of --dtype, each layer trained on `tokens`
    tokens per device: 4 layers a block, named 'block{i}.{qkv,out,up,down}'. `grad_dtype`:
    what the gradients are all-reduced in (None: --dtype; Megatron-LM's bf16 default
    accumulates and all-reduces them in fp32)."""
    from ..units import dtype_bytes, flop_precision

    b, p = dtype_bytes(dtype), flop_precision(dtype)
    g = dtype_bytes(grad_dtype) if grad_dtype else None
    return [linear_layer(f"block{i}.{name}", tokens, k, n, b, g, precision=p)
            for i in range(blocks) for name, k, n in block_shapes(hidden)]


def dp_block_params(hidden: int, blocks: int) -> float:
    """The parameters of `blocks` blocks: the sum of k x n over block_shapes (12 h^2 a
    block; h = 4096, 32 blocks: 6.44e9)."""
    return float(blocks * sum(k * n for _, k, n in block_shapes(hidden)))


@dataclass(frozen=True)
class LayerTime:
    name: str
    compute_s: float
    memory_s: float
    comm_s: float
    ceiling: str              # the compute ceiling's label or "DRAM"

    @property
    def floor_s(self) -> float:
        return max(self.compute_s, self.memory_s)


@dataclass(frozen=True)
class DPStep:
    """A data-parallel training step on `n` devices."""

    n: int
    overlap: bool
    layers: tuple[LayerTime, ...]
    link: Link | None
    step_s: float
    flop: float                # per device
    link_bytes: float          # per device, sent over the link
    precision: str
    assumptions: tuple[str, ...] = field(default=())

    @property
    def compute_s(self) -> float:
        return sum(lt.floor_s for lt in self.layers)

    @property
    def comm_s(self) -> float:
        return sum(lt.comm_s for lt in self.layers)

    @property
    def exposed_comm_s(self) -> float:
        gap = self.step_s - self.compute_s
        return gap if gap > 1e-12 * self.step_s else 0.0    # float residue is not exposure

    @property
    def time_by_ceiling(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for lt in self.layers:
            out[lt.ceiling] = out.get(lt.ceiling, 0.0) + lt.floor_s
        if self.link is not None and self.comm_s > 0:
            out[self.link.level] = self.comm_s
        return out

    @property
    def binding(self) -> str:
        """The ceiling that holds the step longest: a compute ceiling, DRAM, or the link."""
        return max(self.time_by_ceiling.items(), key=lambda kv: kv[1])[0]

    @property
    def link_ai(self) -> float | None:
        """FLOP per byte over the link (the communication point's AI)."""
        return self.flop / self.link_bytes if self.link_bytes else None

    def point(self) -> Kernel:
        """The step as a kernel whose bytes are the link bytes: drawn against the link
        ceiling (plot_roofline(..., level=link.level))."""
        if self.link is None or not self.link_bytes:
            raise InputError("a single-device step sends nothing over a link; no "
                             "communication point")
        return _step_kernel(f"DP step x{self.n}", self, "data-parallel step")


def layer_time(layer: Layer, roof: Roof, link: Link | None, n: int) -> LayerTime:
    ceiling, _ = roof.compute_for(layer.precision)
    dram = layer_dram(layer, roof)
    compute_s, memory_s = layer.flop / ceiling.value, layer.bytes / dram.value
    comm = link.allreduce_s(layer.grad_bytes, n) if link is not None else 0.0
    return LayerTime(layer.name, compute_s, memory_s, comm,
                     ceiling.label if compute_s >= memory_s else "DRAM")


def layer_dram(layer: Layer, roof: Roof) -> Ceiling:
    """The DRAM ceiling a layer's bytes are judged against: byte_convention.memory_ceiling's one
    rule, asked with the layer as a kernel. A linear layer's bytes (linear_layer) are a
    hand count of each operand once, its stores (Y, dX, dW) without their write-allocate
    reads: STREAM-counted, so on a roof with both DRAM ceilings the counted one judges
    them, as it judges any matmul's count."""
    # looked up on analysis at call time, not imported at the top from byte_convention
    # (its owner): tests/test_real_traffic_everywhere.py replaces analysis.memory_ceiling
    # to check that the layer asks the one rule
    from .analysis import memory_ceiling

    as_kernel = Kernel(name=layer.name, flop={layer.precision: layer.flop},
                       bytes={"DRAM": layer.bytes}, meta={"op": "matmul"})
    c, _ = memory_ceiling(roof, as_kernel, "DRAM")
    # None only on a roof without DRAM: bandwidth() raises the roof's own error for it
    return c if c is not None else roof.bandwidth("DRAM")


def overlapped_step_s(layers: Sequence[LayerTime], backward_shares: Sequence[float]) -> float:
    """Forward of all layers, then backward in reverse; each layer's all-reduce starts
    when its backward ends and the link is free. The step ends when both are done."""
    t = sum(lt.floor_s * (1 - b) for lt, b in zip(layers, backward_shares, strict=True))
    link_free = 0.0
    for lt, b in zip(reversed(layers), reversed(backward_shares), strict=True):
        t += lt.floor_s * b
        link_free = max(link_free, t) + lt.comm_s
    return max(t, link_free)


def dp_step(layers: Sequence[Layer], roof: Roof, link: Link | None, n: int,
            overlap: bool = True) -> DPStep:
    """A data-parallel training step on `n` devices (see the module's assumptions)."""
    if n < 1:
        raise InputError(f"device count must be >= 1; got {n}")
    if not layers:
        raise InputError("a training step needs at least one layer")
    if n > 1 and link is None:
        raise InputError(f"{n} devices need a link for the gradient all-reduce")
    times = tuple(layer_time(la, roof, link if n > 1 else None, n) for la in layers)
    if overlap:
        step = overlapped_step_s(times, [la.backward_share for la in layers])
    else:
        step = sum(lt.floor_s + lt.comm_s for lt in times)
    grads = sum(la.grad_bytes for la in layers)
    precision = max(layers, key=lambda la: la.flop).precision
    notes = (_ring_per_layer(len(layers), link if n > 1 else None, n),
             "layer time = max(FLOP/P, bytes/B_DRAM)",
             "overlap: all-reduce of layer l runs during backward of layers < l"
             if overlap else "no overlap: all-reduces after the backward pass")
    return DPStep(n, overlap, times, link if n > 1 else None, step,
                  sum(la.flop for la in layers), allreduce_link_bytes(grads, n), precision,
                  notes)


def _ring_per_layer(layers: int, link: Link | None, n: int) -> str:
    """RING with what a step holds: one all-reduce per linear layer (DDP buckets ~ its
    weight matrices, each past 25 MiB at 7B sizes), so the step pays the ring's latency
    `layers` times (review 15v F-a: 1.76 ms + 16 x 140 us
    = 4.0 ms at 8 GPUs, not the 1.9 ms a single all-reduce gives)."""
    # "linear layer", not "layer": scale's 32 blocks hold 128 of them, and a user reading
    # "per layer: 128" against "32 blocks" took the count for a mistake (s37 A)
    text = (f"{RING}; one all-reduce per linear layer: {layers} per step, each paying the "
            f"latency")
    if link is not None and link.hop_latency_s > 0:
        text += f" ({allreduce_latency_words(link, n, layers)} at {n} devices)"
    return text


# --- tensor-parallel decode step -------------------------------------------------------------
@dataclass(frozen=True)
class TPStep:
    """A tensor-parallel decode step: per-device kernels plus 2 all-reduces per layer, the
    embedding's all-reduce and the logits gather (result.link_s and result.link_bytes: one
    account, so the link point's AI and the step time agree)."""

    tp: int
    result: Any               # workloads.llm.parallel.TPResult
    flop: float               # per device
    memory_s: float           # floors of the memory-bound kernels
    compute_s: float          # floors of the compute-bound kernels
    link: Link
    precision: str

    @property
    def link_bytes(self) -> float:
        """Bytes each rank sends in the step: the all-reduces and the logits gather that
        step_s pays (TPResult.link_bytes)."""
        return self.result.link_bytes

    @property
    def step_s(self) -> float:
        return self.result.tpot_s

    @property
    def binding(self) -> str:
        parts = {"compute": self.compute_s, "DRAM": self.memory_s, self.link.level:
                 self.result.link_s}
        return max(parts.items(), key=lambda kv: kv[1])[0]

    @property
    def link_ai(self) -> float | None:
        return self.flop / self.link_bytes if self.link_bytes else None

    def point(self) -> Kernel:
        return _step_kernel(f"TP decode x{self.tp}", self, "tensor-parallel decode step")


def _step_kernel(name: str, step: DPStep | TPStep, model: str) -> Kernel:
    """A parallel step as a kernel whose bytes are its link bytes (every figure derived by
    the model), drawn against the link ceiling (plot_roofline(..., level=link.level)).
    Only a step with a link has one (DPStep.point says so for a single device)."""
    return Kernel(name=f"{name} ({step.link.level})", flop={step.precision: step.flop},
                  bytes={step.link.level: step.link_bytes}, seconds=step.step_s,
                  provenance={"flop": "derived", "bytes": "derived", "seconds": "derived"},
                  meta={"model": model, "binding": step.binding})


# --- scale what-ifs --------------------------------------------------------------------------
@dataclass(frozen=True)
class ScalePoint:
    n: int
    step: DPStep
    efficiency: float         # weak scaling: step(1) / step(n)

    @property
    def speedup(self) -> float:
        """Throughput relative to one device (n x efficiency)."""
        return self.n * self.efficiency



def scale_dp(layers: Sequence[Layer], roof: Roof, intra: Link, inter: Link | None = None, *,
             gpus_per_node: int = 8, counts: Sequence[int] = GPU_COUNTS,
             overlap: bool = True, pair: Link | None = None,
             by_count: Mapping[int, Link] | None = None) -> tuple[ScalePoint, ...]:
    """Predicted data-parallel step time and efficiency for each device count.

    Up to `gpus_per_node` devices the ring runs on `intra`; beyond, it crosses `inter`
    (the slowest link sets a flat ring's pace; hierarchical all-reduce would do better).
    `pair`: a link that joins only two devices (an NVLink bridge), used for n = 2.
    `by_count`: the link of a group of n devices inside a node where it depends on n (an
    xGMI mesh: 2 MI300X share one link, 8 use all 7; comm_link.group_links).
    """
    base = dp_step(layers, roof, None, 1, overlap).step_s
    out = []
    for n in counts:
        link = intra if n <= gpus_per_node or inter is None else ring_link(intra, inter)
        if pair is not None and n == 2 and gpus_per_node >= 2:
            link = pair
        if by_count and n in by_count and n <= gpus_per_node:
            link = by_count[n]
        step = dp_step(layers, roof, link, n, overlap)
        out.append(ScalePoint(n, step, base / step.step_s))
    return tuple(out)


def comm_binds_at(points: Sequence[ScalePoint]) -> int | None:
    """The smallest device count at which the link is the binding ceiling."""
    return next((p.n for p in points if p.step.link is not None
                 and p.step.binding == p.step.link.level), None)
