"""The note for matrix-core (MFMA) kernels judged on an AMD Instinct datasheet: AMD's own
measured Max-Achievable FLOP/s (MAF) are about half the datasheet's matrix peak, far below
the 70-90 % a quiet machine reaches on seed 004's table (datasheet_note), because the clock
falls from its 2.1 GHz boost to ~1.1-1.5 GHz under dense MFMA work. A GEMM at 50 % of an
MI300X's bf16 roof is near what hipBLASLt reaches, not 2x short of it. Pure.

Source: AMD, "Measuring Max-Achievable FLOPs – Part 2" (rocm.blogs.amd.com/
software-tools-optimization/measuring-max-achievable-flops-part2), Table 1: hipBLASLt on a
tuned M=4096 N=4864 (fp8: 3648) K=32896 GEMM, ROCm 6.3, with the median engine clock.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..units import fmt_pct
from .ceiling import Roof
from .datasheet_note import judged_on_datasheet
from .kernel import Kernel

MAF_SOURCE = ("AMD, 'Measuring Max-Achievable FLOPs - Part 2', Table 1 (hipBLASLt, "
              "rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-"
              "part2)")
# catalog name -> {precision: (measured FLOP/s, median engine clock Hz)} (measured)
MAF = {
    "AMD Instinct MI300X": {"fp16": (654e12, 1115e6), "bf16": (708e12, 1207e6),
                            "fp8": (1273e12, 1230e6)},
    "AMD Instinct MI325X": {"fp16": (794e12, 1354e6), "bf16": (843e12, 1447e6),
                            "fp8": (1519e12, 1464e6)},
}


def maf_note(roof: Roof, kernels: Iterable[Kernel]) -> str | None:
    """'matrix-core (MFMA) kernels on AMD Instinct MI300X's datasheet: AMD's own measured
    max-achievable rate is bf16 708 TFLOP/s (54 % of the datasheet's 1307, at 1207 MHz)
    ...' for the precisions its tensor (matrix) kernels run, when a datasheet roof with
    MAF figures judges measured times (datasheet_note's condition); else None."""
    kernels = list(kernels)
    table = MAF.get(roof.name)
    if table is None or not judged_on_datasheet(roof, kernels):
        return None
    used = dict.fromkeys(p for k in kernels if k.unit == "tensor" for p in k.flop
                         if p in table)
    said = []
    for p in used:
        peak = roof.find_compute(p, "tensor")
        if peak is None:
            continue
        got, clock = table[p]
        said.append(f"{p} {got / 1e12:.0f} TFLOP/s ({fmt_pct(100 * got / peak.value)} of the "
                    f"datasheet's {peak.value / 1e12:.0f}, at {clock / 1e6:.0f} MHz)")
    if not said:
        return None
    return (f"matrix-core (MFMA) kernels on {roof.name}'s datasheet: AMD's own measured "
            f"max-achievable rate is {', '.join(said)}, its clock falling from the 2.1 GHz "
            f"the peak assumes under dense MFMA work; a GEMM near that share of the matrix "
            f"roof is at what AMD's tuned libraries reach ({MAF_SOURCE}; `rooflab probe` "
            f"measures this machine's)")
