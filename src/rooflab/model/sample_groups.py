"""Whether a kernel's timing samples split into two well-separated groups. Pure.

A bimodal sample set is two things timed into one entry: two input shapes measured under
one name, a clock that changed mid-run (a boost clock dropping, a GPU leaving its
power state), or other load that came and went (samples alternating between two times:
another process taking the second core every other sample, review s20 x1 F3, a zoo
kernel of one shape). Its median is one group's time or neither's, and a U test between
two such runs compares mixtures: the same mixture reads "within noise" whatever either
group did.

Only timing samples of repeated runs of one call are judged (kernel_groups): a
profiler's kernel (ncu, rocprof, torch.profiler) is a launch group, its time the sum of
its launches and each sample one launch, possibly of another grid or size under the same
name; two launch sizes there are no timing problem, its median is not its time, and the
advice to time the shapes apart is rooflab.measure's (review s20 x1 F1).

The rule (two_groups): sort the samples; at each split leaving at least
MIN_GROUP_SAMPLES and MIN_GROUP_SHARE of them on each side, the gap between the sides
(the slow side's fastest minus the fast side's slowest) must exceed GAP_OVER_SPREAD x the
larger of the two sides' own ranges (max - min), and be at least MIN_GAP_REL of the fast
side's slowest sample. Why these numbers:
- GAP_OVER_SPREAD = 3 with each side >= 3 samples and >= 20 %: on synthetic unimodal runs
  (4000 each; normal 5 and 20 % sd, lognormal sigma 0.3 and 0.8, 1 + exponential tail,
  uniform, Pareto a = 3) it fired on at most 0.33 % of 9-sample runs and 0.13 % of
  12-sample runs, never on 5; two groups 2x apart with 2 % noise fire every time (1.5x
  apart with 3 % noise: 83 % of 9-sample runs; 1.3x: a third; closer groups are within
  what load does anyway). Sides of 2 fired on 1.3 % of 9-sample runs and on a real
  5-sample run here (3 samples near 30.6 ms, 2 near 34.8 ms on a busy machine: load), so
  a group needs 3: one or two held-up samples are outliers, which the noise test and the
  median already handle.
- the gap >= 5 % of the fast side (sample_spread NOISY_IQR, the noise test's limit): a
  timer that quantizes tight samples into two ticks is not two groups that matter.
On this machine's own runs (8 `rooflab bench` runs, default and --quick, 160 sample sets
of 5-18 samples on a busy 2-core box; tests/test_s20_d2_bimodal.py keeps 80 of them) it
fires on none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..units import fmt_seconds, fmt_times
from .compare_merge import untestable
from .kernel import Kernel
from .sample_spread import NOISY_IQR

GAP_OVER_SPREAD = 3.0
MIN_GROUP_SAMPLES = 3
MIN_GROUP_SHARE = 0.2
MIN_GAP_REL = NOISY_IQR


@dataclass(frozen=True)
class Groups:
    """The two groups a sample set splits into (seconds, sorted)."""

    fast: tuple[float, ...]
    slow: tuple[float, ...]

    @property
    def gap(self) -> float:
        return self.slow[0] - self.fast[-1]

    @property
    def spread(self) -> float:
        """The larger side's own range (max - min)."""
        return max(self.fast[-1] - self.fast[0], self.slow[-1] - self.slow[0])

    @property
    def ratio(self) -> float:
        """The slow group's median over the fast group's."""
        return _median(self.slow) / _median(self.fast)

    def words(self) -> str:
        """'5 samples near 1.00 ms and 4 near 2.00 ms (2.00x apart)'."""
        return (f"{len(self.fast)} samples near {fmt_seconds(_median(self.fast))} and "
                f"{len(self.slow)} near {fmt_seconds(_median(self.slow))} "
                f"({fmt_times(self.ratio)} apart)")


def _median(xs: Sequence[float]) -> float:
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def two_groups(samples: Sequence[float]) -> Groups | None:
    """The split of `samples` into two well-separated groups (module doc), the widest gap
    where several qualify; None when the samples form one group (or are too few)."""
    xs = sorted(x for x in samples if x > 0 and math.isfinite(x))
    n = len(xs)
    least = max(MIN_GROUP_SAMPLES, math.ceil(MIN_GROUP_SHARE * n))
    best, best_gap = None, 0.0
    # Groups' gap and spread read straight off the sorted list: building both halves at
    # every split was O(n^2) (a decorated function's .kernel at 20k calls: 1.5 s of 1.8)
    for i in range(least, n - least + 1):
        gap = xs[i] - xs[i - 1]
        spread = max(xs[i - 1] - xs[0], xs[-1] - xs[i])
        if (gap > GAP_OVER_SPREAD * spread and gap >= MIN_GAP_REL * xs[i - 1]
                and (best is None or gap > best_gap)):
            best, best_gap = i, gap
    return None if best is None else Groups(tuple(xs[:best]), tuple(xs[best:]))


# The profilers whose kernels are launch groups (module doc): ingest.aggregate.group_kernel
# (ncu, rocprof) and ingest.torch_trace_groups set meta "source" to these, with `calls`
# the launches and one sample per launch.
LAUNCH_SOURCES = frozenset({"ncu", "rocprof", "torch.profiler"})


def launch_group(kernel: Kernel) -> bool:
    """Whether the kernel's samples are a profiler's launches summed into its time, or
    entries summed by compare (compare_merge.untestable: samples that do not describe the
    total), rather than timing samples of repeated runs of one call."""
    if untestable(kernel):
        return True
    source = kernel.meta.get("source")
    return (isinstance(source, str) and source in LAUNCH_SOURCES
            and kernel.calls == len(kernel.samples) > 1)


def one_call(kernel: Kernel) -> bool:
    """Whether the samples time one call over and over (rooflab.measure(fn, *args) and
    `rooflab bench`: one call, several per sample), so of one input shape."""
    return kernel.calls == 1 and "calls_per_sample" in kernel.meta


def kernel_groups(kernel: Kernel) -> Groups | None:
    """two_groups of the kernel's samples, None for a launch group (launch_group)."""
    return None if launch_group(kernel) else two_groups(kernel.samples)


LOAD = "other load that came and went (samples alternating between two times)"
CLOCK = "a clock that changed mid-run"
SHAPES = "two input shapes"
PIN = "pin the clocks (cpupower frequency-set / nvidia-smi -lgc)"
QUIET = "re-run on a quiet machine"
WHAT_TO_DO = (f"time each shape (each input size) as its own kernel; for one shape, {QUIET} "
              f"and {PIN}")
# the advice for samples of one call, one shape (one_call): load first, as measured on a
# busy 2-core box (review s20 x1 F3: triad_fp64 alternating 15.9 / 20.3 ms)
ONE_SHAPE_WHAT_TO_DO = f"{QUIET} (no other process on its cores), and {PIN}"


# meta seconds_stat of a decorated function's kernel whose calls ran at once in several
# threads (measure_aggregate): its time is the span they were busy, its samples latencies
BUSY_SPAN = "busy span of calls that ran at once"


def contention(busy: int, threads: object = None) -> str:
    """The cause for samples of `busy` calls that ran at once (in `threads` threads, when a
    whole number): each call's time holds its waits for the others."""
    among = (f"{threads} threads" if isinstance(threads, int) and not isinstance(threads, bool)
             else "several threads")
    return (f"contention: {busy} call{'s' if busy != 1 else ''} ran at once in {among}, "
            f"each call's time holding its waits for the others (the GIL, shared cores, "
            f"memory bandwidth)")


def causes(one_shape: bool, busy: int = 0, threads: object = None) -> tuple[str, ...]:
    """What may have made two groups, the likeliest first; contention first when `busy`
    calls ran at once (meta overlapped_calls): the samples are latencies under it, some
    calls running alone, others beside 1, 2, ... more."""
    plain = (LOAD, CLOCK) if one_shape else (SHAPES, CLOCK, LOAD)
    return (contention(busy, threads), *plain) if busy else plain


def busy_calls(kernel: Kernel) -> int:
    """How many of the kernel's calls ran at once with another thread's (meta
    overlapped_calls, set with seconds_stat BUSY_SPAN); 0 for any other kernel."""
    n = kernel.meta.get("overlapped_calls")
    if kernel.meta.get("seconds_stat") != BUSY_SPAN or isinstance(n, bool) \
            or not isinstance(n, (int, float)) or not 1 <= n <= 1e18:   # NaN, inf: none
        return 0
    return int(n)


def _either(xs: tuple[str, ...]) -> str:
    return ", ".join(xs[:-1]) + f", or {xs[-1]}" if len(xs) > 2 else " or ".join(xs)


ALONE = ("time one call alone (rooflab.measure(fn, *args)) for its own latency; the busy "
         "span is the calls' throughput together")


def what_to_do(one_shape: bool, busy: int = 0) -> str:
    plain = ONE_SHAPE_WHAT_TO_DO if one_shape else WHAT_TO_DO
    return f"{ALONE}; {plain}" if busy else plain


def bimodal_words(name: str, samples: Sequence[float], one_shape: bool = False,
                  busy: int = 0, threads: object = None) -> str | None:
    """The warning for a bimodal sample set, naming the groups and what to do (one_shape:
    samples of one call, so no two input shapes; busy: that many calls ran at once, so
    contention is named first); None when the samples form one group."""
    g = two_groups(samples)
    if g is None:
        return None
    what = "two groups of calls" if one_shape else "two different things"
    why = _either(causes(one_shape, busy, threads))
    return (f"{name}: timing samples split into two groups, {g.words()}: {what} were timed "
            f"into one entry ({why}), so its median and compare's noise test mix the two; "
            f"{what_to_do(one_shape, busy)}")
