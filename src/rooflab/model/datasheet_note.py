"""The note a datasheet (nominal) roof carries when it judges measured times.

Seed 000 §2.1: "算力和带宽都要用实际可达到的值而不是规格表上的理论峰值 ... 通常会打七八折";
§6.2 误判三: drawn on theoretical peaks "所有 kernel 看起来都离屋顶很远失去参考意义。一定要用
实测值"; seed 004: a quiet machine reaches 70-90 % of its datasheet compute peak and 75-90 %
of its bandwidth, and "做判断永远用实线" (the measured roof). A report judged on a catalog
roof gave % of roof, headroom and the >2x flag without a word of it (review 18a F8). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from .ceiling import Roof
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
            f"{1 / HEALTHY_COMPUTE[0]:.1f}x low and the >2x flag is loose; judge by a "
            f"measured roof (`rooflab probe`; seed 000 §6.2)")


def band_words(band: tuple[float, float]) -> str:
    """A band of fractions as the notes print it: (0.70, 0.90) -> '70-90 %'."""
    return f"{band[0] * 100:.0f}-{band[1] * 100:.0f} %"
