"""The clock a roof's compute peaks hold at, in the chart's legend (review s22 r6 F4).

Nsight Compute's and Advisor's rooflines both state the clock their ceilings are at; a
rooflab chart named none: "at the clock it profiled at" was never a number, and a catalog
GPU's boost-clock peak read as what a clock-locked profile could reach. The roof knows the
clock in three cases, each said with where it comes from:

- a catalog GPU: its fp32 vector peak / (SMs x FP32 lanes x 2) (ingest/profile_checks.
  catalog_clock_hz), the datasheet's boost clock: "1.59 GHz SM boost clock (datasheet)";
- an Nsight Compute profile's own peaks (ingest/profile_import.peaks_roof, peak per cycle x
  the clock it profiled at): the clock the roof records (profile_import.profiled_clock_hz:
  the SM clock ncu recorded with the peaks), else, for a roof that records none (one saved
  before it did), the same division with the SMs and compute capability the profile
  recorded for its kernels: "SM 1.62 GHz (the clock ncu profiled at)";
- a CPU's derived peaks (hardware/cpu_nominal: "cores x 3.55 GHz (all-core boost, AMD) x
  ..."): the clock in its ceilings' method, with its words;
- a CPU probe's measured roof (review s22 h2 F8): the clock the probe measured, read from
  the roof's notes (probe/cpu/assemble: "the nominal roof uses the other clock reading,
  3.23 GHz", the nominal roof's name "(Zen 3, 2 cores @ 3.23 GHz)" in "far below
  nominal (...)", "... GHz alone" for the one-thread clock), the roof has no clock field.

Pure: reads the roof, its ceilings' methods and the kernels' meta.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model.ceiling import Roof
from ..model.kernel import Kernel

# the clock in a CPU ceiling's method (hardware/cpu_nominal.cpu_nominal_roof)
_CPU_CLOCK = re.compile(r"cores x ([0-9.]+) GHz(?: \(([^)]*)\))?")
PROFILER_PEAKS = "(profiler peaks)"
# the clock in a CPU probe's measured roof's notes (probe/cpu/assemble), most direct first:
# the reading the nominal roof used, then the nominal roof's name, then the one-thread clock
_NOTE_CLOCKS = (re.compile(r"the nominal roof uses the other clock reading, ([0-9.]+) GHz"),
                re.compile(r"\([^()]* @ ([0-9.]+) GHz[^()]*\)"),
                re.compile(r"([0-9.]+) GHz alone"))


def _probe_clock(roof: Roof) -> float | None:
    """The clock (GHz) a CPU probe measured, from its measured roof's notes; None when no
    note states it."""
    for pattern in _NOTE_CLOCKS:
        for note in roof.notes:
            m = pattern.search(note)
            if m:
                return float(m.group(1))
    return None


def _gpu_clock(fp32: float, sms: int, cc: str) -> float | None:
    from ..ingest.profile_checks import FP32_LANES_PER_SM

    lanes = FP32_LANES_PER_SM.get(cc)
    return fp32 / (sms * lanes * 2.0) if lanes and sms > 0 else None


def _profiled_clock(roof: Roof, kernels: Sequence[Kernel]) -> float | None:
    """The SM clock of an ncu profile's peaks: fp32 vector / (SMs x lanes x 2), the SMs and
    compute capability of a kernel the profile recorded on that device."""
    fp32 = roof.find_compute("fp32", "vector")
    device = roof.name.removesuffix(PROFILER_PEAKS).strip()
    for k in kernels:
        meta = k.meta or {}
        if fp32 is None or str(meta.get("device", "")) != device:
            continue
        try:
            sms = int(float(meta.get("sms") or 0))
        except ValueError:
            continue
        clock = _gpu_clock(fp32.value, sms, str(meta.get("cc") or ""))
        if clock:
            return clock
    return None


def roof_clock(roof: Roof, kernels: Sequence[Kernel] = ()) -> str:
    """'peaks at 1.59 GHz SM boost clock (datasheet)' and the like (module docstring) for
    a roof whose clock is known; '' for any other (a given file's, a measured roof whose
    notes state no clock)."""
    from ..ingest.profile_import import profiled_clock_hz

    recorded = profiled_clock_hz(roof)
    if recorded or roof.name.endswith(PROFILER_PEAKS):
        hz = recorded or _profiled_clock(roof, kernels)
        return f"peaks at SM {hz / 1e9:.2f} GHz (the clock ncu profiled at)" if hz else ""
    if roof.kind == "nominal":
        from ..ingest.profile_checks import catalog_clock_hz

        hz = catalog_clock_hz(roof)
        if hz:
            return f"peaks at {hz / 1e9:.2f} GHz SM boost clock (datasheet)"
        for c in roof.compute:
            m = _CPU_CLOCK.search(c.method or "")
            if m:
                words = m.group(2) or ("the clock the probe measured" if "probe" in
                                       roof.source else "")
                # 3 figures: the probe's clock is in the method as 2.25674 GHz (s33 I)
                return f"peaks at {float(m.group(1)):.3g} GHz" + (f" ({words})" if words
                                                                   else "")
    if roof.kind == "measured" and "probe" in roof.source:
        ghz = _probe_clock(roof)
        if ghz:
            return f"peaks at {ghz:.3g} GHz (the clock the probe measured)"
    return ""
