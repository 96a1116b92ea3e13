"""The intensity sweep (the Empirical Roofline Toolkit / mixbench idea): one kernel that
applies k FMAs to every element it loads and stores, timed for k from 1 to a few hundred.

Per element: 2k FLOP, 16 bytes (one 8-byte load, one 8-byte store; fp64), so the
arithmetic intensity is k/8 FLOP/byte. Over a DRAM-sized array the points climb the
bandwidth slope, bend at the knee and flatten on the FMA roof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..timer import TimingPlan
from .bandwidth import rows_of
from .runner import Rate, Team, measure_rate

BYTES_PER_ELEMENT = 16
# Not STREAM's count: the in-place kernel has no write-allocate, so its 16 B are all real,
# while the triad roof counts 24 of the 32 B triad moves. Sweep points can read up to 4/3
# of the DRAM roof (review 11a F-D); ERT avoids it by using the sweep kernel for both.
BYTE_MODEL = ("real traffic: one load + one store per element in place (16 B fp64), no "
              "write-allocate; the DRAM roof is STREAM-counted triad (24 of the 32 B it "
              "moves), so points up to 4/3 above the roof are expected")


@dataclass(frozen=True)
class SweepPoint:
    k: int
    ai: float              # FLOP/byte
    rate: Rate             # FLOP/s samples

    @property
    def flop_per_s(self) -> float:
        return self.rate.best

    def to_dict(self) -> dict:
        return {"k": self.k, "ai": self.ai, "flop_per_s": self.flop_per_s,
                "bytes_per_s": self.flop_per_s / self.ai,
                "median_flop_per_s": self.rate.median, "samples": list(self.rate.samples)}


def intensity_sweep(ks: tuple[int, ...], ws_per_thread: float, team: Team,
                    plan: TimingPlan, clock=time.perf_counter, progress=None,
                    pool=None) -> tuple[SweepPoint, ...]:
    from . import kernels as K

    block = K.block_elements(8)
    nblocks = max(1, int(ws_per_thread / (2 * 8 * block)))
    n = nblocks * block
    if pool is not None:    # reuse the bandwidth sweep's arrays (touched by their threads)
        src, dst = pool.rows(0, team.threads, n), pool.rows(1, team.threads, n)
    else:
        src = rows_of(team.threads, n, 0.5)
        dst = rows_of(team.threads, n, 0.0)
    out = np.zeros(team.threads)
    points = []
    for i, k in enumerate(ks):
        def call(reps: int, k=k) -> None:
            K.par_run(K.ERT, src, dst, dst, 0.999, k, nblocks, reps, out, n)

        rate = measure_rate(call, 2.0 * k * n * team.threads, plan, clock=clock)
        points.append(SweepPoint(k, 2.0 * k / BYTES_PER_ELEMENT, rate))
        if progress:
            progress(i + 1, len(ks))
    return tuple(points)


def method_text(ws_bytes_total: float, threads: int) -> str:
    return (f"k FMAs per element on {ws_bytes_total / 2**20:.0f} MiB (load + store, "
            f"16 B/element fp64, AI = k/8), {threads} threads; ERT-style kernel")
