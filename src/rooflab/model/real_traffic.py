"""The DRAM ceiling in real-traffic units, derived from STREAM-counted rates. Pure.

One derivation for every place that writes the ceiling: the CPU probe's measured roof
(probe/cpu/dram_ceiling.py) and each thread count's row of a scaling profile
(hardware/profile.py roof_at_threads, review 17a N5). It lives in model/ because both
layers import it (hardware may not import probe). model/analysis.py memory_ceiling
decides which bytes are judged against it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..units import si
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


def real_traffic_ceiling(dram: Ceiling, stream_dram: Mapping, where: str = "this run's",
                         note: str = "") -> tuple[Ceiling, str]:
    """(the DRAM rate in real-traffic units, the STREAM kernel it came from): the largest
    real rate among the kernels measured at DRAM (real_rates), each counted rate x
    (loads + 2 stores)/(loads + stores). Taking triad alone left copy/scale-shaped loops,
    whose store share is larger, 15 % above it (review 17a N1). Provenance derived; the
    samples are the chosen kernel's, scaled the same way; warnings: DRAM's. `where` names
    the measurement in the method ("this run's", "the 1-thread row's"); `note` is added
    to it (what the measurement lacks)."""
    rates = real_rates(dram, stream_dram)
    name, value, samples = max(rates, key=lambda r: r[1])
    parts = [f"{n} {si(v / kernel_factor(n), 'B/s')} x {_fraction(kernel_factor(n))} = "
             f"{si(v, 'B/s')}" for n, v, _ in rates]
    method = (f"derived from {where} measured DRAM rates: the largest real-traffic rate "
              f"of its STREAM kernels, {name}'s {si(value, 'B/s')} (of {'; '.join(parts)}); "
              f"each counted rate x (loads + 2 stores)/(loads + stores): a store's line is "
              f"first read (write-allocate), so copy and scale move 24 B per 16 counted (x "
              f"3/2), add and triad 32 per 24 (x 4/3), the read-only sum what it counts "
              f"(x 1); real traffic at the memory controller, write-allocate reads "
              f"included, what hardware counters (perf, likwid-perfctr) count: counter-"
              f"measured DRAM bytes and counts that are real traffic (read-only kernels, "
              f"meta byte_count \"real traffic\") are judged against it"
              + (f"; {note}" if note else ""))
    return Ceiling(value=value, level=REAL_TRAFFIC, provenance="derived", source=dram.source,
                   method=method, samples=samples, warnings=dram.warnings), name


def _fraction(f: float) -> str:
    """3/2, 4/3, 1 as the method text writes them."""
    return {1.5: "3/2", 1.0: "1"}.get(round(f, 6), "4/3")
