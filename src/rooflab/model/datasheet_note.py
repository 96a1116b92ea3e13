"""The note a datasheet (nominal) roof carries when it judges measured times.

Seed 000 §2.1: "算力和带宽都要用实际可达到的值而不是规格表上的理论峰值 ... 通常会打七八折";
§6.2 误判三: drawn on theoretical peaks "所有 kernel 看起来都离屋顶很远失去参考意义。一定要用
实测值"; seed 004: a quiet machine reaches 70-90 % of its datasheet compute peak and 75-90 %
of its bandwidth, and "做判断永远用实线" (the measured roof). A report judged on a catalog
roof gave % of roof, headroom and the >2x flag without a word of it (review 18a F8). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..units import fmt_ai, fmt_pct_range, fmt_times
from .ceiling import Ceiling, Roof
from .held_unit import held_unit
from .kernel import Kernel

# What a quiet machine reaches of its datasheet peaks (seed 004's table: measured matmul
# 70-90 % of the compute peak, 75-90 % of the bandwidth). The one home of both bands: the
# probe's low/below-nominal notes (probe/nominal.py) and the record table's "(low)" mark
# (report/record_table.py) read them here, when they run.
HEALTHY_COMPUTE = (0.70, 0.90)
HEALTHY_BANDWIDTH = (0.75, 0.90)
# A separate fact: what a plain copy kernel reaches of the datasheet bandwidth (seed 000
# §3.1), above seed 004's whole-run band; the probe's low-bandwidth note cites both.
COPY_BANDWIDTH = (0.85, 0.92)


def judged_on_datasheet(roof: Roof, kernels: Iterable[Kernel]) -> bool:
    """Whether a datasheet roof judges measured times: a nominal roof with a source (the
    catalog's datasheet; a roof built by hand names none) and a timed kernel that is no
    what-if's prediction (meta 'whatif'; a count alone has no % of roof)."""
    return (roof.kind == "nominal" and bool(roof.source) and any(
        k.seconds is not None and not k.meta.get("whatif") for k in kernels))


def datasheet_note(roof: Roof, kernels: Iterable[Kernel]) -> str | None:
    """The note for a datasheet roof judging measured times (judged_on_datasheet), else
    None."""
    if not judged_on_datasheet(roof, kernels):
        return None
    return (f"judged on datasheet peaks ({roof.name}): a quiet machine reaches "
            f"{band_words(HEALTHY_COMPUTE)} of them (seed 004), so % of roof reads up to "
            f"{fmt_times(1 / HEALTHY_COMPUTE[0])} low and the >2x flag is loose; judge by a "
            f"measured roof (`rooflab probe`; seed 000 §6.2){ridge_words(roof, kernels)}")


def expected_measured_ridge(roof: Roof) -> tuple[float, float] | None:
    """The measured ridge (top float ceiling / DRAM, as rooflab.ridge(roof)) that the bands
    imply for a quiet machine with this datasheet: its slowest compute over its fastest
    bandwidth up to its fastest compute over its slowest bandwidth. T4: 65 TFLOP/s x 0.70
    / (320 GB/s x 0.90) = 158 to 65 x 0.90 / (320 x 0.75) = 244 FLOP/B. Seed 004 expects
    "170-200", a range its own bands do not give (review r7 F3): a probe at 52 TFLOP/s
    and 250 GB/s (ridge 208, both inside the bands) is healthy. None without DRAM."""
    dram = roof.find_memory("DRAM")
    if dram is None or not roof.compute:
        return None
    return healthy_ridge_band(roof.top_float_compute().value / dram.value)


def healthy_ridge_band(ridge: float) -> tuple[float, float]:
    """The measured range a datasheet ridge (FLOP/B) implies for the healthy bands, whatever
    the roof or precision: ridge x (slowest compute / fastest bandwidth) up to ridge x
    (fastest compute / slowest bandwidth). T4 fp16 tensor: 203 -> 158-244 FLOP/B."""
    return (ridge * HEALTHY_COMPUTE[0] / HEALTHY_BANDWIDTH[1],
            ridge * HEALTHY_COMPUTE[1] / HEALTHY_BANDWIDTH[0])


def ridge_words(roof: Roof, kernels: Iterable[Kernel] = ()) -> str:
    """'; a measured ridge (fp16 tensor / DRAM, 203 on the datasheet) is expected at 158-244
    FLOP/byte for these bands (bandwidth 75-90 %)' (T4), or '' for a roof without DRAM. The
    ridge of the ceiling the kernels run at (work_ceiling), not the roof's top one."""
    dram = roof.find_memory("DRAM")
    if dram is None or not roof.compute:
        return ""
    top = work_ceiling(roof, kernels)
    nominal = top.value / dram.value
    band = healthy_ridge_band(nominal)
    return (f"; a measured ridge ({top.label} / DRAM, {fmt_ai(nominal)} on the datasheet) is "
            f"expected at {fmt_ai(band[0])}-{fmt_ai(band[1])} FLOP/byte for these bands "
            f"(bandwidth {band_words(HEALTHY_BANDWIDTH)})")


def work_ceiling(roof: Roof, kernels: Iterable[Kernel] = ()) -> Ceiling:
    """The ceiling of the precision (at its held unit) with the most FLOP among the kernels:
    fp64 vector for fp64 kernels (review s33 F4: the note named the fp8 tensor ridge, 156,
    of an RTX 4060 judging an fp64 kernel whose ridge there is 0.6); the top float ceiling
    (rooflab.ridge(roof)) for kernels without FLOP."""
    flop: dict[tuple[str, str | None], float] = {}
    for k in kernels:
        unit = held_unit(roof, k)
        for precision, f in k.flop.items():
            flop[(precision, unit)] = flop.get((precision, unit), 0.0) + (f or 0.0)
    if not flop or max(flop.values()) <= 0:
        return roof.top_float_compute()
    precision, unit = max(flop, key=flop.__getitem__)
    return roof.compute_for(precision, unit)[0]


def band_words(band: tuple[float, float]) -> str:
    """A band of fractions as the notes print it: (0.70, 0.90) -> '70-90 %'."""
    return fmt_pct_range(band[0] * 100, band[1] * 100)
