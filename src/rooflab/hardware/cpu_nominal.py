"""Derived CPU compute ceilings: cores x GHz x lanes x FMA pipes x 2 for one core design
(`cpu_arch.MicroArch`), or P- plus E-cores of a hybrid part, each at its own design's rate."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..model.ceiling import Ceiling, Roof
from ..model.roofline import cpu_peak_flop_per_s
from .cpu_arch import MicroArch


def catalog_clock(inputs: Mapping[str, Any], vendor: str) -> tuple[float, str]:
    """The clock (GHz) a catalog CPU's peaks are derived at, and the words that name it.

    A vendor's all-core clock (`all_core_ghz`: AMD's "All Core Boost Speed") where the entry
    has one: a Zen part runs its cores far above base under a full vector load (EPYC 9654:
    3.55 GHz all-core vs 2.4 base), so a base-clock peak would understate it by up to 1.5x.
    Else the base clock, said as such: the fallback, not a claim that the part runs there."""
    if inputs.get("all_core_ghz"):
        return float(inputs["all_core_ghz"]), f"all-core boost, {vendor}"
    return float(inputs["base_ghz"]), "base clock"


def cpu_nominal_roof(name: str, cores: int, ghz: float, arch: MicroArch,
                     dram_bytes_per_s: float | None, source: str, clock: str = "") -> Roof:
    """Derived compute ceilings (cores x GHz x lanes x pipes x 2) and a nominal DRAM one.

    `clock` names which clock `ghz` is ("base clock" or "all-core boost, AMD" for catalog
    entries, from catalog_clock); it goes into each ceiling's method so a reader can tell a
    base-clock peak from an all-core boost one."""
    where = f"{cores} cores x {ghz:g} GHz" + (f" ({clock})" if clock else "")
    compute = []
    for prec, bits in (("fp64", 64), ("fp32", 32)) if arch.nominal_known else ():
        lanes = arch.simd_bits // bits
        compute.append(Ceiling(
            value=cpu_peak_flop_per_s(cores, ghz, arch.simd_bits, bits, arch.fma_pipes),
            precision=prec, unit="vector", provenance="derived", source=arch.source,
            method=f"{where} x {lanes} lanes x {arch.fma_pipes} FMA pipes x 2 ({arch.name})"))
    for fast in arch.fast_paths if arch.nominal_known else ():
        compute.append(Ceiling(
            # the clock in whole hertz: no float noise (3.6864e12, not 3686399999999.9995)
            value=cores * round(ghz * 1e9) * fast.flop_per_cycle, precision=fast.precision,
            unit=fast.unit, provenance="derived", source=arch.source,
            method=f"{where} x {fast.flop_per_cycle:g} FLOP/cycle ({fast.via}, {arch.name})"))
    memory = ()
    if dram_bytes_per_s:
        memory = (Ceiling(value=dram_bytes_per_s, level="DRAM", provenance="nominal",
                          source=source),)
    return Roof(name=name, kind="nominal", compute=tuple(compute), memory=memory,
                source=source, notes=arch.notes)


def hybrid_nominal_roof(name: str, p_cores: int, p_ghz: float, p_arch: MicroArch,
                        e_cores: int, e_ghz: float, e_arch: MicroArch, source: str,
                        clock: str = "") -> Roof:
    """P-core + E-core derived peaks, per (precision, unit) both designs have: each core
    counted at its own design's rate (the catalog adds hybrid entries the same way)."""
    p = cpu_nominal_roof(name, p_cores, p_ghz, p_arch, None, source, clock)
    if e_cores <= 0:
        return p
    e = cpu_nominal_roof(name, e_cores, e_ghz, e_arch, None, source, clock)
    e_by = {c.label: c for c in e.compute}
    compute = tuple(
        replace(c, value=c.value + e_by[c.label].value,
                method=f"P-cores: {c.method} + E-cores: {e_by[c.label].method}")
        for c in p.compute if c.label in e_by)
    return replace(p, compute=compute, notes=p.notes + e.notes)


@dataclass(frozen=True)
class RatedClock:
    """A CPU's rated clock (GHz), from the catalog entry its name matches (base and boost)
    or from the GHz its name states (Intel's '... @ 2.90GHz', the base clock)."""

    base_ghz: float | None
    boost_ghz: float | None
    source: str

    def words(self) -> str:
        """'base 2.4 GHz, boost 3.7 GHz (catalog: AMD EPYC 9654)'."""
        parts = [f"{k} {v:g} GHz" for k, v in (("base", self.base_ghz),
                                                ("boost", self.boost_ghz)) if v]
        return f"{', '.join(parts)} ({self.source})"


_NAMED_GHZ = re.compile(r"@\s*(\d+(?:\.\d+)?)\s*GHz", re.IGNORECASE)


def rated_clock(cpu_model: str) -> RatedClock | None:
    """The rated clock of the CPU named `cpu_model` (/proc/cpuinfo "model name"), or None
    when neither the catalog nor the name says it (a VM's bare 'AMD EPYC')."""
    from .catalog import match_device_name  # catalog builds its roofs with this module

    device = match_device_name(cpu_model) if cpu_model.strip() else None
    inputs = device.inputs if device is not None and device.kind == "cpu" else {}
    if inputs.get("base_ghz"):
        return RatedClock(float(inputs["base_ghz"]), _ghz(inputs.get("boost_ghz")),
                          f"catalog: {device.name}")
    named = _NAMED_GHZ.search(cpu_model)
    if named:
        return RatedClock(float(named.group(1)), None, "the CPU's model name")
    return None


def _ghz(value) -> float | None:
    return float(value) if value else None
