"""Overheads: what a kernel costs when it does (almost) nothing.

- eager: back-to-back launches of the smallest PyTorch kernel (a one-element add_), one
  marked region of many launches divided by their count — the per-kernel floor of eager
  PyTorch code (seed 004: 5-10 us per launch). This is the roof's overhead_s.
- round trip: one launch followed by a synchronize, on the host clock — the latency a
  single isolated kernel pays.
- empty Triton kernel: the same two for a kernel with no body (CUDA with Triton only).
- graph replay: the same many tiny kernels captured in a CUDA graph and replayed, per kernel
  (CUDA only): what launch overhead shrinks to when the host is out of the loop.
"""

from __future__ import annotations

from ..stats import summarize
from ..timer import Timing
from .context import Context
from .timing import clock_timer, time_batched, time_calls


def _launch_pair(ctx: Context, name: str, fn) -> dict[str, float]:
    calls = ctx.sizes.launch_calls
    eager = time_batched(fn, ctx.timer, calls, ctx.sizes.plan)
    ctx.keep(f"{name}_back_to_back", eager, 1, "kernel", kind="overhead", calls=calls)

    def round_trip() -> None:
        fn()
        ctx.sync()

    rt = time_calls(round_trip, clock_timer(sync=ctx.sync), ctx.sizes.plan)
    ctx.keep(f"{name}_round_trip", rt, 1, "kernel", kind="overhead")
    return {f"{name}_back_to_back_s": eager.median, f"{name}_round_trip_s": rt.median}


def _graph_replay(ctx: Context, x) -> dict[str, float]:
    torch, calls = ctx.torch, ctx.sizes.launch_calls
    side = torch.cuda.Stream(device=ctx.dev)
    side.wait_stream(torch.cuda.current_stream(ctx.dev))
    with torch.cuda.stream(side):
        for _ in range(3):   # warm-up on a side stream, as torch.cuda.graphs documents
            x.add_(1.0)
    torch.cuda.current_stream(ctx.dev).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            x.add_(1.0)
    replay = time_batched(graph.replay, ctx.timer, 1, ctx.sizes.plan)
    samples = tuple(s / calls for s in replay.samples)
    per_kernel = Timing(samples=samples, inner=calls, stats=summarize(samples))
    ctx.keep("graph_replay_per_kernel", per_kernel, 1, "kernel", kind="overhead", calls=calls)
    return {"graph_replay_per_kernel_s": per_kernel.median}


def overheads(ctx: Context) -> tuple[float, dict[str, float]]:
    """(overhead_s for the roof, every overhead figure by name)."""
    torch = ctx.torch
    x = torch.ones(1, device=ctx.dev)
    ctx.say("overhead: kernel launch")
    figures = _launch_pair(ctx, "torch_tiny_kernel", lambda: x.add_(1.0))
    kernels = ctx.triton_kernels()
    if kernels is not None:
        figures.update(_launch_pair(ctx, "triton_empty_kernel", lambda: kernels.launch_empty(x)))
    if ctx.is_cuda:
        ctx.say("overhead: CUDA graph replay")
        try:
            figures.update(_graph_replay(ctx, x))
        except RuntimeError as exc:
            ctx.skipped["graph_replay"] = f"RuntimeError: {str(exc)[:200]}"
    else:
        ctx.skipped["graph_replay"] = "CUDA graphs need a CUDA device"
    return figures["torch_tiny_kernel_back_to_back_s"], figures
