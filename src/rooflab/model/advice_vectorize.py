"""'Not vectorised, or one dependency chain?' advice: a compute-side CPU kernel running at
or under the roof's scalar (no SIMD) ceiling, which `rooflab probe` measures beside the
vector one.

Williams et al.'s roofline (CACM 2009, "w/out SIMD") and Intel Advisor's scalar roofs
draw in-core ceilings under the vector peak: a compute-limited loop that is not vectorised
can reach the scalar ceiling at most, and the lever is SIMD, worth up to the vector /
scalar ratio (the lanes: 4 for fp64 with AVX2, 8 for fp32), not "12 % of roof, tune it".
FLOP/s alone cannot tell that from a loop with one dependency chain per lane (a
recurrence, or a reduction into one accumulator, packed or not): it waits an FMA latency a
step and sits under the scalar ceiling too (review s19 r4 F2: a recurrence built with -O3
-march=native -ffast-math gained 1.00x; a packed one-chain loop gained 4.4x from 8
accumulators, nothing from vectorising again). So the advice names both, in that order,
with what in the assembly tells them apart. Only for a CPU roof with both ceilings of the
kernel's precision; never for a GPU. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..units import fmt_rate, fmt_times
from .advice_core import Advice, Efficiency, _advice, pct
from .advice_threads import kernel_threads
from .analysis import Point
from .ceiling import Ceiling, Roof
from .kernel import Kernel
from .machine import Machine, core_share
from .sanity_ceilings import roof_threads

SCALAR = "scalar"
# How far above the scalar ceiling a kernel may read and still be "at" it: the ceiling's
# interquartile range / median (the spread the probe reports for every figure), at least 5 %
# (the probe's noise test) and at most 10 %. Not (max - min) / median: the ceiling is the
# best sample, so a held-up low sample says nothing about how far above it a scalar loop
# can read (review s19 r4 F3: one 10.9 of 69 samples near 25 made it +25 %, and a packed
# loop at 31.5 GFLOP/s read 'at or under' 25.8). The cap: a vectorised loop at half its
# vector ceiling reads 2x the scalar one with AVX2 fp64 (1x with SSE2 at 50 %, which no cap
# separates), so more than 10 % above the best scalar sample is no scalar loop.
LEAST_TOLERANCE, MOST_TOLERANCE = 0.05, 0.10
# A vector ceiling under this many times the scalar one gives no lever worth a line.
LEAST_RATIO = 1.5
# Under this share of its threads' scalar ceiling a loop is more likely held by one
# dependency chain than by scalar issue alone: 12 independent scalar FMA chains reach the
# ceiling, one chain reaches 1/(latency x pipes) of it (1/8 on Zen 3: review r4's recurrence
# at 12 %), a packed one-chain loop lanes/8 of it (49 % with AVX2 fp64).
CHAIN_SHARE = 0.5
# What the assembly shows for each precision: packed FMAs (vectorised) and scalar ones
_FMA_WORDS = {"fp64": ("vfmadd...pd", "vfmadd...sd"), "fp32": ("vfmadd...ps", "vfmadd...ss")}


def tolerance(scalar: Ceiling) -> float:
    """The relative margin above the scalar ceiling that still reads 'at' it."""
    iqr = scalar.iqr_rel or 0.0
    return min(MOST_TOLERANCE, max(LEAST_TOLERANCE, iqr))


def _thread_share(roof: Roof, kernel: Kernel | None,
                  cores: int | None) -> tuple[float, str, str]:
    """(the factor from the roof's scalar ceiling to the kernel's threads' one, words for
    it, a hedge). Scalar FMA throughput is per core and SMT siblings share a core's FMA
    pipes, so the factor is machine.core_share: min(n, cores) / min(N, cores) for a kernel
    on n of a roof's N threads (review s19 r4 F8: a 2-thread scalar loop on a 1-thread roof
    was missed; x1 F2: 1 thread of a 2-thread roof on 1 core reaches all of it), n / N
    under the roof's threads without the host's core count and not scaled up above them.
    1 when either thread count is unknown, and then the hedge says it may be the threads."""
    have, n = roof_threads(roof), kernel_threads(kernel)
    if have is None or n is None:
        return 1.0, "", ("" if have == 1 else " (or not on every core)")
    share = core_share(n, have, cores)
    if share == 1:
        return 1.0, "", ""
    top, base = (min(n, cores), min(have, cores)) if cores else (n, have)
    if n < have:
        smt = (f" ({top} of the {base} cores they span: SMT siblings share a core's FMA "
               f"pipes)" if (top, base) != (n, have) else "")
        return share, f" for its {n} of the roof's {have} threads{smt}", ""
    return (share, f" for its {n} threads ({top} cores: the roof's {have}-thread ceiling x "
            f"{top}/{base}, scalar FMA throughput being per core)", "")


@dataclass(frozen=True)
class ScalarFit:
    """A kernel at or under its threads' scalar ceiling: the two ceilings, the kernel's
    threads' scalar ceiling (`own`, FLOP/s) and the share of it the kernel reaches."""

    scalar: Ceiling
    vector: Ceiling
    factor: float      # the roof's ceilings -> the kernel's threads' (_thread_share)
    threads: str
    hedge: str
    achieved: float

    @property
    def own(self) -> float:
        return self.scalar.value * self.factor

    @property
    def ratio(self) -> float:
        return self.vector.value / self.scalar.value

    @property
    def share(self) -> float:
        """achieved / own: the kernel's share of its threads' scalar ceiling."""
        return self.achieved / self.own


def scalar_fit(p: Point, roof: Roof, machine: Machine | None,
               kernel: Kernel | None = None) -> ScalarFit | None:
    """The ScalarFit of a CPU kernel whose achieved FLOP/s is at or under its precision's
    scalar ceiling (within tolerance()); None for a GPU roof, a tensor kernel, a roof
    without both ceilings, a vector / scalar ratio under LEAST_RATIO, or a kernel above."""
    if machine is None or machine.kind != "cpu" or p.unit == "tensor":
        return None
    achieved = p.achieved_flop_per_s
    scalar = roof.find_compute(p.precision, SCALAR)
    vector = roof.find_compute(p.precision, "vector")
    if not achieved or scalar is None or vector is None or p.peak_flop_per_s <= 0:
        return None
    factor, threads, hedge = _thread_share(roof, kernel, getattr(machine, "cores", None))
    fit = ScalarFit(scalar, vector, factor, threads, hedge, achieved)
    if fit.ratio < LEAST_RATIO or achieved > fit.own * (1 + tolerance(scalar)):
        return None
    return fit


def vectorize_advice(p: Point, e: Efficiency, roof: Roof, machine: Machine | None,
                     kernel: Kernel | None = None) -> Advice | None:
    """'not vectorised, or one dependency chain?' for a kernel scalar_fit() finds at or
    under its scalar ceiling, predicting up to the vector / scalar gain: the kernel keeps
    the share of the scalar ceiling it reaches now, on the vector one (e.g. vector 100
    GFLOP/s, scalar 25, a kernel at 20: 80 % of scalar -> 80 GFLOP/s, 4x). None otherwise."""
    fit = scalar_fit(p, roof, machine, kernel)
    if fit is None:
        return None
    scalar, vector, own, achieved = fit.scalar, fit.vector, fit.own, fit.achieved
    # the work's efficiency against its threads' scalar ceiling (e.efficiency is against
    # the ceiling it is held to, p.peak_flop_per_s), kept on the vector one
    eff = min(1.0, e.efficiency * p.peak_flop_per_s / own)
    where = ("at or under" if achieved <= own else
             f"within {100 * (achieved / own - 1):.0f} % of")
    detail = (f"it reaches {fmt_rate(achieved, p.precision)}, {where} the "
              f"{scalar.provenance} {scalar.label} ceiling{fit.threads} "
              f"({fmt_rate(own, p.precision)}, one lane, no SIMD); the {vector.label} one "
              f"is {fmt_rate(vector.value * fit.factor, p.precision)}")
    if fit.share < CHAIN_SHARE:
        detail += (f"; at {pct(fit.share)} of the scalar ceiling, under half of it, one "
                   f"dependency chain is the likelier cause (a vectorised loop with one "
                   f"accumulator sits there too), and vectorising alone does not help it")
    packed, single = _FMA_WORDS.get(p.precision, ("packed FMAs", "scalar FMAs"))
    simd = machine.simd if machine is not None else "SIMD"
    return _advice(
        p, e, f"not vectorised, or one dependency chain{fit.hedge}? vectorise, or split the "
              f"chain into independent accumulators: up to {fmt_times(fit.ratio)} ({simd}; the "
              f"{vector.label} / scalar ceiling)", detail,
        "roof" if p.unit == SCALAR else "below roof", flop=p.flop, nbytes=p.bytes,
        peak=vector.value * fit.factor, bw=p.bytes_per_s, efficiency=eff,
        assumption=f"the loop's FLOP run on every {simd} lane with enough independent "
                   f"chains, keeping the {pct(eff)} of the scalar ceiling it reaches now, "
                   f"on the vector one (up to the vector / scalar ratio, and only from the "
                   f"cause the loop has); to tell the two apart, check the hot loop's "
                   f"assembly: scalar FMAs ({single}) and no packed ones ({packed}) mean "
                   f"it is not vectorised (contiguous data, numba fastmath=True / -O3 "
                   f"-march=native -ffast-math); packed ones mean it is, and the lever is "
                   f"the chains: count the independent accumulators (a recurrence x = f(x) "
                   f"or a sum into one variable is one chain, waiting an FMA latency a "
                   f"step; 8 or more hide it)")
