"""Flags on the CPU probe's measured ceilings: a peak above or far below its nominal
figure, and a reference that drifted between the start and the end of the probe."""

from __future__ import annotations

from dataclasses import replace

from ...model.ceiling import Ceiling, Roof
from ...units import si

OVERSHOOT = 1.05     # measured above nominal by more than this is flagged
# Measured below this fraction of nominal is flagged: the nominal roof is taken at the
# clock measured in this run, so the FMA kernel reaches ~100 % of it here (bf16/int8
# through torch 84-90 %); far below, its samples were all held up by other load, or the
# vector units run slower than the integer clock (AVX-512 frequency offsets).
UNDERSHOOT = 0.75
DRIFT = 0.05         # start/end reference measurements differing by more is flagged
# DRAM triad measured again at the end: a VM's memory bandwidth can jump between states
# within seconds (docs/probe.md: 37 vs 55 GB/s on the dev VM); more than this is said.
DRAM_DRIFT = 0.10


def drift_note(start: float, end: float, limit: float = DRIFT) -> str | None:
    """A note when the reference measured at the end differs from the start by > limit."""
    change = end / start - 1
    if abs(change) <= limit:
        return None
    return (f"the fp64 FMA reference moved {change:+.1%} between the start and the end of "
            f"the probe (clock drift or other load); rerun or use --full")


def dram_drift_note(start: float, end: float, limit: float = DRAM_DRIFT) -> str | None:
    """A note when DRAM triad at the end of the probe differs from the sweep's by > limit."""
    change = end / start - 1
    if abs(change) <= limit:
        return None
    return (f"DRAM triad read {si(start, 'B/s')} in the sweep and {si(end, 'B/s')} at the "
            f"end of the probe ({change:+.0%}): the host's memory bandwidth changed during "
            f"the run (other load, or a VM's memory moving between states); the DRAM "
            f"ceiling is the sweep's: rerun and compare before trusting it")


def _flag_against_nominal(measured: list[Ceiling], nominal: Roof | None, outside,
                          say) -> list[Ceiling]:
    """Each compute ceiling whose value is `outside(measured, nominal)` gets `say(c, nom)`."""
    if nominal is None:
        return measured
    out = []
    for c in measured:
        nom = nominal.find_compute(c.precision, c.unit) if c.is_compute else None
        if nom is not None and outside(c.value, nom.value):
            c = replace(c, warnings=c.warnings + (say(c, nom),))
        out.append(c)
    return out


def flag_overshoot(measured: list[Ceiling], nominal: Roof | None, arch) -> list[Ceiling]:
    """Measured above nominal by > 5 %: say so on the ceiling (the VM may mask the CPU)."""
    return _flag_against_nominal(
        measured, nominal, lambda got, nom: got > OVERSHOOT * nom,
        lambda c, nom: (f"{c.label}: measured {si(c.value, 'FLOP/s')} is "
                        f"{c.value / nom.value:.0%} of the nominal {si(nom.value, 'FLOP/s')} "
                        f"for {arch.name}; the CPU may not be what it reports (a VM can mask "
                        f"the microarchitecture) or the clock ran faster than measured"))


def flag_undershoot(measured: list[Ceiling], nominal: Roof | None) -> list[Ceiling]:
    """Measured below UNDERSHOOT x nominal: say so on the ceiling. Samples that were all
    slowed down alike show no spread, so the noise test stays silent on them."""
    return _flag_against_nominal(
        measured, nominal, lambda got, nom: got < UNDERSHOOT * nom,
        lambda c, nom: (f"{c.label}: measured {si(c.value, 'FLOP/s')} is only "
                        f"{c.value / nom.value:.0%} of the nominal {si(nom.value, 'FLOP/s')} "
                        f"at the clock measured in this run: other load held the kernel up "
                        f"throughout, or the vector units run at a lower clock than the "
                        f"integer clock (AVX-512 frequency offsets); rerun on a quiet machine"))
