"""The DRAM ceiling in real-traffic units, derived from STREAM-counted rates. Pure.

One derivation for every place that writes the ceiling: the CPU probe's measured roof
(probe/cpu/dram_ceiling.py) and each thread count's row of a scaling profile
(hardware/profile.py roof_at_threads, review 17a N5). It lives in model/ because both
layers import it (hardware may not import probe). model/byte_convention.py memory_ceiling
decides which bytes are judged against it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..units import fmt_times, si
from .ceiling import Ceiling

REAL_TRAFFIC = "DRAM (real traffic)"

# (explicit loads, explicit stores) per element of the STREAM kernels the probe times
# (probe/cpu/bandwidth.py STREAM; tests/test_real_traffic_everywhere.py keeps the two equal)
STREAM_SHAPES = {"copy": (1, 1), "scale": (1, 1), "add": (2, 1), "triad": (2, 1), "sum": (1, 0)}


def real_factor(loads: int, stores: int) -> float:
    """Real bytes over counted bytes of a loop with these explicit loads and stores per
    element: each store's line is first read (write-allocate: McCalpin's STREAM FAQ;
    likwid's MEM group counts it), so it moves loads + 2 x stores where STREAM counts
    loads + stores: copy and scale 3/2 (16 -> 24 B), add and triad 4/3 (24 -> 32 B), sum 1
    (review 17a N1)."""
    return (loads + 2 * stores) / (loads + stores)


def kernel_factor(name: str) -> float:
    """real_factor of the STREAM kernel `name`."""
    return real_factor(*STREAM_SHAPES[name])


def own_kernel(dram: Ceiling) -> str:
    """The STREAM kernel the DRAM ceiling was measured with: add when the probe used add's
    rate in place of a disturbed triad (dram_ceiling.dram_from_add), else triad."""
    return "add" if dram.method.startswith("STREAM add") else "triad"


def real_rates(dram: Ceiling, stream_dram: Mapping) -> list[tuple[str, float, tuple]]:
    """(kernel, real-traffic rate, real-traffic samples) of each STREAM kernel measured at
    DRAM: the DRAM ceiling's own kernel first, then every other kernel in `stream_dram`
    (extras.stream.DRAM: copy, scale, add, sum; its entry for the ceiling's own kernel is
    the ceiling itself)."""
    own = own_kernel(dram)
    f = kernel_factor(own)
    out = [(own, dram.value * f, tuple(v * f for v in dram.samples))]
    for name, got in stream_dram.items():
        rate = got.get("bytes_per_s") if isinstance(got, Mapping) else None
        if (name == own or name not in STREAM_SHAPES or not isinstance(rate, (int, float))
                or rate <= 0):
            continue
        f = kernel_factor(name)
        out.append((name, float(rate) * f,
                    tuple(float(v) * f for v in got.get("samples") or ())))
    return out


# The largest real-traffic rate the byte conventions allow over the STREAM-counted DRAM
# ceiling: a copy-shaped loop at the DRAM ceiling's counted rate moves 24 B for each 16
# counted (x 3/2; triad itself x 4/3), plus the probe's run-to-run noise (10 %: review 17a's
# quiet run read scale's real rate at 1.53x triad's counted one). A STREAM kernel above it
# was measured at another moment of a disturbed run than the DRAM ceiling (review 19c N1:
# scale 38.4 GB/s real beside triad's 12.8 counted, 3.0x): the two ceilings judge the same
# memory, so that kernel is left out.
CONSISTENT = 1.5 * 1.10


def real_traffic_ceiling(dram: Ceiling, stream_dram: Mapping, where: str = "this run's",
                         note: str = "") -> tuple[Ceiling, str]:
    """(the DRAM rate in real-traffic units, the STREAM kernel it came from): the largest
    real rate among the kernels measured at DRAM (real_rates), each counted rate x
    (loads + 2 stores)/(loads + stores), of those consistent with the DRAM ceiling (at
    most CONSISTENT x it). Taking triad alone left copy/scale-shaped loops, whose store
    share is larger, 15 % above it (review 17a N1); taking every kernel let one measured
    in a quiet moment of a disturbed run set a ceiling 3x DRAM (review 19c N1). The DRAM
    ceiling's own kernel (x 4/3) always counts, so a disturbed run gives DRAM x 4/3.

    Why leave the others out rather than raise DRAM to match them: the DRAM ceiling is
    the figure the probe chose by its own rules (the sweep's plateau, add only where it
    read clean: dram_ceiling.dram_from_add) and judges every STREAM-counted kernel; one
    best sample of another kernel, at another moment, is no better measurement of the
    memory, and raising both would promise speed-ups the chosen measurement did not see.
    The uncapped best stays in the method; a warning names the kernels left out (the
    chart's `*`). Provenance derived; the samples are the chosen kernel's, scaled the
    same way; warnings: DRAM's, then that one. `where` names the measurement in the
    method ("this run's", "the 1-thread row's"); `note` is added to it."""
    rates = real_rates(dram, stream_dram)
    limit = CONSISTENT * dram.value
    kept = [r for r in rates if r[0] == rates[0][0] or r[1] <= limit]
    left = sorted((r for r in rates if r not in kept), key=lambda r: -r[1])
    name, value, samples = max(kept, key=lambda r: r[1])
    parts = [f"{n} {si(v / kernel_factor(n), 'B/s')} x {_fraction(kernel_factor(n))} = "
             f"{si(v, 'B/s')}" for n, v, _ in rates]
    method = (f"derived from {where} measured DRAM rates: the largest real-traffic rate "
              f"of its STREAM kernels consistent with the DRAM ceiling (at most "
              f"{fmt_times(CONSISTENT)} it), {name}'s {si(value, 'B/s')} (of {'; '.join(parts)})"
              + (f"; left out as disturbed: {_named(left)} (the uncapped best "
                 f"{si(left[0][1], 'B/s')})" if left else "") +
              "; each counted rate x (loads + 2 stores)/(loads + stores): a store's line is "
              "first read (write-allocate), so copy and scale move 24 B per 16 counted (x "
              "3/2), add and triad 32 per 24 (x 4/3), the read-only sum what it counts "
              "(x 1); real traffic at the memory controller, write-allocate reads "
              "included, what hardware counters (perf, likwid-perfctr) count: counter-"
              "measured DRAM bytes and counts that are real traffic (read-only kernels, "
              "meta byte_count \"real traffic\") are judged against it"
              + (f"; {note}" if note else ""))
    warn = (disturbed_warning(dram, left, name, value),) if left else ()
    return Ceiling(value=value, level=REAL_TRAFFIC, provenance="derived", source=dram.source,
                   method=method, samples=samples,
                   warnings=dram.warnings + warn), name


def _named(rates) -> str:
    """"scale 38.4 GB/s, copy 35.7 GB/s" (real-traffic rates)."""
    return ", ".join(f"{n} {si(v, 'B/s')}" for n, v, _ in rates)


def disturbed_warning(dram: Ceiling, left, name: str, value: float) -> str:
    """What the ceiling says when kernels were left out: both figures, the kernels."""
    own = own_kernel(dram)
    return (f"{REAL_TRAFFIC}: STREAM {_named(left)} in real traffic, "
            f"{fmt_times(left[0][1] / dram.value)} the DRAM ceiling's {si(dram.value, 'B/s')} "
            f"({own}, counted), where the byte conventions allow at most 3/2x (+10 % "
            f"noise): the probe was disturbed between kernels, so they were left out; "
            f"the ceiling is {name}'s {si(value, 'B/s')}, consistent with DRAM; rerun on a "
            f"quiet machine")


def consistent(memory, stream_dram: Mapping) -> tuple[Ceiling, str] | None:
    """For a roof loaded from a file (`memory`: its memory ceilings): (the DRAM (real
    traffic) ceiling re-derived by real_traffic_ceiling, a warning saying so) where the
    stored one is above CONSISTENT x the stored DRAM (a profile written before review 19c
    N1, which took the best of every kernel); None where it is consistent or either is
    missing. `stream_dram` is the profile's extras.stream.DRAM (may be empty: then the
    DRAM ceiling's own kernel, x 4/3)."""
    by = {c.level: c for c in memory}
    dram, real = by.get("DRAM"), by.get(REAL_TRAFFIC)
    if dram is None or real is None or real.value <= CONSISTENT * dram.value * (1 + 1e-9):
        return None
    fixed, _ = real_traffic_ceiling(dram, stream_dram if isinstance(stream_dram, Mapping)
                                    else {})
    said = (f"{REAL_TRAFFIC}: this profile stores {si(real.value, 'B/s')}, "
            f"{fmt_times(real.value / dram.value)} its DRAM ceiling {si(dram.value, 'B/s')}, "
            f"beyond the 3/2x the byte conventions allow (written by a rooflab that took "
            f"the best of every STREAM kernel); judged at {si(fixed.value, 'B/s')} "
            f"instead; rerun the probe to rewrite it")
    return fixed, said


def _fraction(f: float) -> str:
    """3/2, 4/3, 1 as the method text writes them."""
    return {1.5: "3/2", 1.0: "1"}.get(round(f, 6), "4/3")
