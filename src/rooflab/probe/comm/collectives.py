"""Timed collectives over torch.distributed: a size sweep per collective, bounded in time.

Every rank runs the same loop and takes every decision from numbers all ranks agree on
(a MAX all-reduce on the control group), so no rank ever waits in a collective that
another rank skipped. One sample = `iters` back-to-back calls between a barrier and a
device synchronize (nccl-tests' timing loop); a sample's time is the slowest rank's, since
a collective is done only when every rank is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...errors import InputError
from ...units import fmt_bytes_binary as _fmt
from .busbw import LABELS, algbw, bus_factor
from .fit import AlphaBeta, fit_alpha_beta

KiB, MiB = 1 << 10, 1 << 20
ELEMENT_BYTES = 4      # float32 buffers: every backend reduces them


def _sizes(lo: int, hi: int, step: int) -> tuple[int, ...]:
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= step
    return tuple(out)


@dataclass(frozen=True)
class SweepPlan:
    """Message sizes and the time allowed per collective. Times in seconds."""

    name: str
    sizes: tuple[int, ...]
    budget_s: float        # per collective: larger sizes are skipped once it is spent
    sample_s: float        # target length of one sample (iters x one call)
    samples: int           # samples per size
    warmup: int            # untimed calls per size
    max_iters: int = 1000
    # calls per sample at least: a single call of a large message on a loaded host is one
    # scheduler hiccup away from 2x (review r3 F4: 64 MiB samples of 111-199 ms)
    min_iters: int = 1


PLANS = {p.name: p for p in (
    # tiny: CI's real 2-process probe; a few seconds in all. 16 MiB at the top keeps the
    # bandwidth term well above latency noise, so beta is fitted even on a loaded host.
    SweepPlan("tiny", (KiB, 16 * KiB, 256 * KiB, 4 * MiB, 16 * MiB), budget_s=1.0,
              sample_s=0.003, samples=3, warmup=2, max_iters=50),
    SweepPlan("quick", _sizes(KiB, 256 * MiB, 4), budget_s=3.0, sample_s=0.01, samples=5,
              warmup=1, min_iters=3),
    SweepPlan("default", _sizes(KiB, 256 * MiB, 2), budget_s=10.0, sample_s=0.02, samples=7,
              warmup=2, min_iters=3),
    SweepPlan("full", _sizes(KiB, 1024 * MiB, 2), budget_s=30.0, sample_s=0.05, samples=10,
              warmup=3, min_iters=3),
)}


def get_plan(mode: str) -> SweepPlan:
    try:
        return PLANS[mode]
    except KeyError:
        raise InputError(f"comm probe mode must be one of {', '.join(PLANS)}; got '{mode}'"
                         ) from None


@dataclass(frozen=True)
class SizeResult:
    """One message size: per-call seconds of each sample (slowest rank)."""

    nbytes: int
    iters: int
    samples: tuple[float, ...]
    # calls in the first sample when the rest were re-planned from it (_replan); 0 = iters
    first_iters: int = 0

    @property
    def seconds(self) -> float:
        import statistics

        return statistics.median(self.samples)

    @property
    def best_s(self) -> float:
        return min(self.samples)


@dataclass(frozen=True)
class CollectiveResult:
    collective: str
    ranks: int
    rows: tuple[SizeResult, ...]
    stopped: str = ""                  # why larger sizes were not measured ("" = all were)
    pair: tuple[int, int] | None = None  # send/recv: (sender, receiver)
    link: str = ""                     # send/recv: "intra-node" or "inter-node"

    @property
    def label(self) -> str:
        base = LABELS[self.collective]
        return f"{base} {self.pair[0]}->{self.pair[1]}" if self.pair else base

    @property
    def factor(self) -> float:
        return bus_factor(self.collective, 2 if self.pair else self.ranks)

    def busbw(self, row: SizeResult, best: bool = False) -> float:
        return algbw(row.nbytes, row.best_s if best else row.seconds) * self.factor

    @property
    def fit(self) -> AlphaBeta | None:
        """alpha/beta over the measured sizes; None when they cannot give one (fewer
        than two sizes, or times that do not grow with size: all latency)."""
        if len({r.nbytes for r in self.rows}) < 2:
            return None
        try:
            return fit_alpha_beta([r.nbytes for r in self.rows],
                                  [r.seconds for r in self.rows])
        except InputError:
            return None

    def to_dict(self) -> dict:
        fit = self.fit
        return {
            "collective": self.collective, "label": self.label, "ranks": self.ranks,
            "pair": list(self.pair) if self.pair else None, "link": self.link,
            "bus_factor": self.factor, "stopped": self.stopped,
            "fit": fit.to_dict() | {
                "beta_bus_bytes_per_s": fit.beta_bytes_per_s * self.factor} if fit else None,
            "rows": [{"bytes": r.nbytes, "iters": r.iters,
                      **({"first_sample_iters": r.first_iters} if r.first_iters else {}),
                      "seconds": r.seconds,
                      "best_s": r.best_s, "samples": list(r.samples),
                      "algbw_bytes_per_s": algbw(r.nbytes, r.seconds),
                      "busbw_bytes_per_s": self.busbw(r),
                      "busbw_best_bytes_per_s": self.busbw(r, best=True)}
                     for r in self.rows],
        }


@dataclass
class Comm:
    """What a sweep needs: torch, the process group's rank/size, the device, a control
    group (gloo, CPU tensors) for agreeing on numbers, and a device synchronize."""

    torch: object
    dist: object
    rank: int
    world: int
    device: object
    control: object = None
    clock: Callable[[], float] = time.perf_counter

    def sync(self) -> None:
        if getattr(self.device, "type", "cpu") == "cuda":
            self.torch.cuda.synchronize(self.device)

    def agree_max(self, values: Sequence[float]) -> list[float]:
        t = self.torch.tensor([float(v) for v in values], dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX, group=self.control)
        return [float(v) for v in t.tolist()]

    def barrier(self) -> None:
        self.agree_max([0.0])


def _fn(dist, *names):
    """The first of `names` torch.distributed has (newer names first: no FutureWarning)."""
    return next(getattr(dist, n) for n in names if hasattr(dist, n))


def make_op(comm: Comm, collective: str, nbytes: int, pair: tuple[int, int] | None = None
            ) -> tuple[Callable[[], object], int]:
    """A zero-argument call running one `collective` of about `nbytes`, and its exact size.

    Buffers are zeros (sums stay 0: no overflow to inf, no denormals)."""
    torch, dist, n = comm.torch, comm.dist, comm.world
    elems = max(n, nbytes // ELEMENT_BYTES // n * n)
    zeros = lambda k: torch.zeros(k, dtype=torch.float32, device=comm.device)  # noqa: E731
    if collective == "all_reduce":
        buf = zeros(elems)
        return (lambda: dist.all_reduce(buf)), elems * ELEMENT_BYTES
    if collective == "all_gather":
        out, inp = zeros(elems), zeros(elems // n)
        f = _fn(dist, "all_gather_single", "all_gather_into_tensor")
        return (lambda: f(out, inp)), elems * ELEMENT_BYTES
    if collective == "reduce_scatter":
        out, inp = zeros(elems // n), zeros(elems)
        f = _fn(dist, "reduce_scatter_single", "reduce_scatter_tensor")
        return (lambda: f(out, inp)), elems * ELEMENT_BYTES
    if collective == "all_to_all":
        out, inp = zeros(elems), zeros(elems)
        return (lambda: dist.all_to_all_single(out, inp)), elems * ELEMENT_BYTES
    if collective == "broadcast":
        buf = zeros(elems)
        return (lambda: dist.broadcast(buf, src=0)), elems * ELEMENT_BYTES
    if collective == "send_recv":
        src, dst = pair or (0, 1)
        buf = zeros(max(1, nbytes // ELEMENT_BYTES))
        size = buf.numel() * ELEMENT_BYTES
        if comm.rank == src:
            return (lambda: dist.send(buf, dst)), size
        if comm.rank == dst:
            return (lambda: dist.recv(buf, src)), size
        return (lambda: None), size
    raise InputError(f"unknown collective '{collective}'")


def _timed(comm: Comm, op: Callable[[], object], iters: int) -> float:
    comm.barrier()
    t0 = comm.clock()
    for _ in range(iters):
        op()
    comm.sync()
    return (comm.clock() - t0) / iters


# A first sample longer than REPLAN x sample_s (or shorter than sample_s / REPLAN) re-plans
# the calls of the others from its own per-call time.
REPLAN = 2.0


def _iters(plan: SweepPlan, per_call_s: float) -> int:
    """Calls per sample so that one sample lasts about plan.sample_s."""
    return int(min(plan.max_iters, max(plan.min_iters,
                                       round(plan.sample_s / max(per_call_s, 1e-9)))))


def _replan(plan: SweepPlan, iters: int, first_s: float) -> int:
    """The calls per sample for the samples after the first, which took `first_s` per call
    (the slowest rank's, so every rank decides alike). Three single calls can mislead: on
    a loaded host a call right after a barrier ran in 89 us while back to back they took
    2.2-4.1 ms each, so 112 calls made samples of 0.28 s against a plan of 10 ms and the
    1 KiB size ate half the budget (review s20 r3 F7). The first sample is timed as the
    others are, so its per-call time plans them; it is kept as a sample."""
    if plan.sample_s / REPLAN <= iters * first_s <= REPLAN * plan.sample_s:
        return iters
    return _iters(plan, first_s)


def sweep(comm: Comm, collective: str, plan: SweepPlan, max_bytes: float | None = None,
          pair: tuple[int, int] | None = None, link: str = "",
          progress: Callable[[str], None] | None = None) -> CollectiveResult:
    """Measure `collective` at each size of the plan until the budget is spent."""
    sizes = [s for s in plan.sizes if max_bytes is None or s <= max_bytes]
    rows: list[SizeResult] = []
    spent, stopped, prev = 0.0, "", None
    # At least two sizes are always measured: the alpha/beta fit needs them.
    label = LABELS[collective]
    for k, size in enumerate(sizes):
        calls = plan.warmup + 3 + plan.samples
        if prev is not None and len(rows) >= 2:
            # Predict this size from the last one (time grows at most linearly with size).
            one = prev.seconds * size / prev.nbytes
            guess = one * (calls - plan.samples) + plan.samples * max(plan.sample_s,
                                                                      plan.min_iters * one)
            if spent + guess > plan.budget_s:
                stopped = (f"{_fmt(size)} would take about {guess:.2g} s more, past the "
                           f"{plan.budget_s:g} s budget per collective ({spent:.2f} s spent); "
                           f"sizes from {_fmt(size)} up not measured (--full measures more)")
                break
        if progress:
            progress(f"{label} {_fmt(size)}")
        t_start = comm.clock()
        op, exact = make_op(comm, collective, size, pair)
        for _ in range(plan.warmup):
            op()
        comm.sync()
        # The best of three single calls sets the loop length (a first call can stall).
        (one,) = comm.agree_max([min(_timed(comm, op, 1) for _ in range(3))])
        first_iters = _iters(plan, one)
        (first,) = comm.agree_max([_timed(comm, op, first_iters)])
        iters = _replan(plan, first_iters, first)
        local = [_timed(comm, op, iters) for _ in range(plan.samples - 1)]
        agreed = comm.agree_max(local + [comm.clock() - t_start])
        spent += agreed[-1]
        prev = SizeResult(exact, iters, (first, *agreed[:-1]),
                          first_iters if iters != first_iters else 0)
        rows.append(prev)
        del op
        if k + 1 < len(sizes) and len(rows) >= 2 and spent > plan.budget_s:
            stopped = (f"time budget {plan.budget_s:g} s per collective spent after "
                       f"{_fmt(size)}; sizes from {_fmt(sizes[k + 1])} up not measured")
            break
    if max_bytes is not None and len(sizes) < len(plan.sizes) and not stopped:
        stopped = f"sizes capped at {_fmt(max_bytes)} by available memory"
    return CollectiveResult(collective, comm.world, tuple(rows), stopped, pair, link)


def memory_cap(plan: SweepPlan, available_bytes: float | None, local_ranks: int) -> float | None:
    """Largest message size whose buffers (2 x size per rank, all local ranks together)
    fit in half the available memory; None when the plan's sizes all fit."""
    if not available_bytes:
        return None
    cap = available_bytes / 2 / (2 * max(1, local_ranks))
    return None if cap >= max(plan.sizes) else cap
