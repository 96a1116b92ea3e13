"""Where tokens/s stops growing with the batch: the batch at which the decode step's weight
matmuls turn compute-bound, each by its own floor on the roof (sweep.Sweep.saturation).

A dense weight matmul's FLOP and bytes are affine in the batch (FLOP = a x b, bytes = W +
c x b: its weights once, its inputs and outputs per sequence), so the batch it turns at has
a closed form, read off the ops the step builder makes at batches 1 and 2 (checked at the
batch limit). That only guides the search: the answer is always the smallest batch at
which the time model's own points say so (`_first_near`), found in two steps where the
guess is right — what a bisection over the whole batch range finds (review s19: that
bisection rebuilt and timed the whole step ~32 times per analysis, 2.3x the llm_speed
benchmark). A MoE expert's FLOP and bytes are not affine (its routed tokens, the experts a
batch loads), so where experts turn last the search gallops up from the dense guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...model.analysis import analyze
from ...model.ceiling import Roof
from ...model.placement import Point, left_of_ridge
from .kernels import Step, decode_step
from .model_config import ModelConfig
from .settings import Settings
from .timing import StepTiming, time_step

# relative agreement asked of the batch-limit point with the line through batches 1 and 2
# (float sums of ~1e17 FLOP; a MoE expert misses it by orders of magnitude)
AFFINE_REL = 1e-9


@dataclass(frozen=True)
class Saturation:
    """Where the decode step's weight matmuls turn compute-bound, each by its own floor
    max(FLOP/P, bytes/B) on the roof (the time model's, not the step's aggregate AI).

    A weight matmul's floor has a part that does not grow with the batch (its weights,
    read once per step) while it is memory-bound; once compute-bound it is 2 x batch x K x
    N / P, in proportion to the batch, like attention's KV reads and the activations at
    every batch. So past `last_batch` the step's floor grows in proportion to the batch
    and tokens/s stops growing (`plateau_tokens_per_s`; the norms' weight vectors, a few
    kB, are all that stays constant, with the weights of any matmul in never_kernels).
    llama-3-8b on an H100 (ridge 295): lm_head at batch 320, gate/up/down at 326, q/o at
    346, k/v at 462, whatever the context."""

    first_batch: int | None        # the first weight matmul turns compute-bound (None: none)
    first_kernels: tuple[str, ...]
    last_batch: int | None         # every one that ever turns has (None: none ever does)
    last_kernels: tuple[str, ...]  # the last to turn
    never_kernels: tuple[str, ...]  # memory-bound at every batch (AI limit below the ridge)
    plateau_tokens_per_s: float    # tokens/s at last_batch (at batch 2^24 where that is None)


def _is_weight_matmul(step: Step) -> set[str]:
    return {o.op.name for o in step.ops if o.op.op == "linear" and o.split("weights") > 0}


class _Probe:
    """The decode step's weight-matmul points at one batch, each batch built once. Only the
    matmul kernels are placed (analyze: the same ceilings and points as time_step gives
    them, each kernel's point being its own), the whole step only where its floor is read."""

    def __init__(self, cfg: ModelConfig, s: Settings, roof: Roof, context: int) -> None:
        self.cfg, self.s, self.roof, self.context = cfg, s, roof, context
        self._points: dict[int, tuple[Point, ...]] = {}
        self._timings: dict[int, StepTiming] = {}

    def timing(self, b: int) -> StepTiming:
        if b not in self._timings:
            self._timings[b] = time_step(decode_step(self.cfg, self.s, b, self.context),
                                         self.roof)
        return self._timings[b]

    def points(self, b: int) -> tuple[Point, ...]:
        if b not in self._points:
            if b in self._timings:
                t = self._timings[b]
                mm = _is_weight_matmul(t.step)
                self._points[b] = tuple(p for p in t.points if p.kernel in mm)
            else:
                step = decode_step(self.cfg, self.s, b, self.context)
                mm = _is_weight_matmul(step)
                kernels = [k for k in step.kernels() if k.name in mm]
                self._points[b] = analyze(self.roof, kernels, levels=("DRAM",)).primary()
        return self._points[b]

    def memory(self, b: int) -> tuple[str, ...]:
        """The weight matmuls left of their ridge at b."""
        return tuple(p.kernel for p in self.points(b) if p.memory_bound_side)

    def names(self, b: int) -> tuple[str, ...]:
        return tuple(p.kernel for p in self.points(b))


def _first(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest batch in lo+1..hi where pred (monotone: False, then True) holds, given
    pred(hi) holds and pred(lo) does not (lo 0: none below)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pred(mid) else (mid, hi)
    return hi


def _first_near(pred: Callable[[int], bool], guess: int, limit: int) -> int | None:
    """Smallest batch in 1..limit where pred (monotone: False, then True) holds (None: not
    even at limit), searched from `guess`: two calls of pred when the guess is right,
    bisection below it when too high, galloping up then bisection when too low."""
    guess = min(max(1, guess), limit)
    if pred(guess):
        if guess == 1 or not pred(guess - 1):
            return guess
        return _first(pred, 0, guess - 1)
    lo = hi = guess
    while not pred(hi):
        if hi >= limit:
            return None
        lo, hi = hi, min(limit, 2 * hi)
    return _first(pred, lo, hi)


def _turn(at: dict[int, Point], limit: int, check: int | None = None) -> int | None:
    """The batch at which one weight matmul turns compute-bound, by the line through its
    points at the two batches of `at` (and through `check`'s point, where given): its FLOP
    and bytes affine in the batch under ceilings that do not move (else None: no closed
    form, the search finds it)."""
    (b0, p0), (b1, p1) = sorted((b, p) for b, p in at.items() if b != check)
    if any((p.peak_flop_per_s, p.bytes_per_s, p.ridge) !=
           (p0.peak_flop_per_s, p0.bytes_per_s, p0.ridge) for p in at.values()):
        return None
    a, c = (p1.flop - p0.flop) / (b1 - b0), (p1.bytes - p0.bytes) / (b1 - b0)  # per sequence
    w = p0.bytes - c * b0                             # once per step: the weights
    if not all(math.isclose(p.flop, a * b, rel_tol=AFFINE_REL)
               and math.isclose(p.bytes, w + c * b, rel_tol=AFFINE_REL)
               for b, p in at.items()):
        return None

    def turned(b: int) -> bool:   # the point's own test, on the affine counts
        return not left_of_ridge(a * b / (w + c * b), p0.ridge)

    denom = a - p0.ridge * c      # a b / (w + c b) >= ridge  <=>  b >= ridge w / denom
    if denom <= 0 or w <= 0 or not turned(limit):
        return None
    return _first_near(turned, math.ceil(min(limit, p0.ridge * w / denom)), limit)


def _turns(probe: _Probe, batches: tuple[int, ...], limit: int,
           check: int | None = None) -> dict[str, int]:
    """Each weight matmul's closed-form turning batch, for those _turn solves."""
    by = {b: {p.kernel: p for p in probe.points(b)} for b in batches}
    return {k: t for k in by[limit] if all(k in pts for pts in by.values())
            and (t := _turn({b: pts[k] for b, pts in by.items()}, limit, check)) is not None}


def saturation(cfg: ModelConfig, s: Settings, roof: Roof, context: int,
               limit: int = 1 << 24) -> Saturation:
    """Saturation of the decode step at `context`: each matmul's AI rises with the batch
    (a MoE expert's with the tokens routed to it), so "some matmul has turned" and "every
    matmul that ever turns has" are each false, then true; their first batches are
    searched from the dense matmuls' closed forms."""
    probe = _Probe(cfg, s, roof, context)
    # the lines want three distinct batches (a limit below 8 is searched, not solved)
    turns = _turns(probe, (1, 2, limit), limit, check=limit) if limit >= 8 else {}
    if 8 <= limit and len(turns) < len(probe.names(limit)):
        # a MoE expert: past the batch that loads every expert its bytes are affine too,
        # and the line through two such batches bounds its turn from above (fewer experts
        # loaded, fewer bytes): the guess the search starts from
        turns = {**_turns(probe, (limit // 2, limit), limit), **turns}
    # a matmul whose AI limit K x N / (K + N) is below the ridge (a MoE router, 2048 x 128)
    # never turns; its weights are a constant that every batch dilutes
    never = probe.memory(limit)

    def turned(b: int) -> tuple[str, ...]:
        """The matmuls that are compute-bound at b but were not at b - 1."""
        before = set(probe.memory(b - 1)) if b > 1 else set(probe.names(b))
        return tuple(k for k in probe.names(b) if k in before and k not in probe.memory(b))

    first = _first_near(lambda b: len(probe.memory(b)) < len(probe.names(b)),
                        min(turns.values(), default=limit), limit)
    last = None
    if len(never) < len(probe.names(limit)):
        guess = max((t for k, t in turns.items() if k not in never), default=1)
        if turns:
            probe.timing(guess)  # its floor is the plateau's where the guess holds
        last = _first_near(lambda b: set(probe.memory(b)) <= set(never), guess, limit)
    return Saturation(
        first_batch=first, first_kernels=turned(first) if first else (),
        last_batch=last, last_kernels=turned(last) if last else (), never_kernels=never,
        plateau_tokens_per_s=probe.timing(last or limit).tokens_per_s)
