"""Flags on the CPU probe's measured ceilings: a peak above or far below its nominal
figure, and a reference that drifted between the start and the end of the probe."""

from __future__ import annotations

from dataclasses import replace

from ...model.ceiling import Ceiling, Roof
from ...units import fmt_rate, si

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
        lambda c, nom: (f"{c.label}: measured {fmt_rate(c.value, c.precision)} is "
                        f"{c.value / nom.value:.0%} of the nominal "
                        f"{fmt_rate(nom.value, nom.precision)} "
                        f"for {arch.name}; the CPU may not be what it reports (a VM can mask "
                        f"the microarchitecture) or the clock ran faster than measured"))


def flag_undershoot(measured: list[Ceiling], nominal: Roof | None) -> list[Ceiling]:
    """Measured below UNDERSHOOT x nominal: say so on the ceiling. Samples that were all
    slowed down alike show no spread, so the noise test stays silent on them."""
    return _flag_against_nominal(
        measured, nominal, lambda got, nom: got < UNDERSHOOT * nom,
        lambda c, nom: (f"{c.label}: measured {fmt_rate(c.value, c.precision)} is only "
                        f"{c.value / nom.value:.0%} of the nominal "
                        f"{fmt_rate(nom.value, nom.precision)} "
                        f"at the clock measured in this run: other load held the kernel up "
                        f"throughout, or the vector units run at a lower clock than the "
                        f"integer clock (AVX-512 frequency offsets); rerun on a quiet machine"))


# Other work on the machine (load.py). Flagged above 10 % of the CPUs the probe's threads
# used: an idle server or desktop shows 1-3 % (daemons, kernel threads), which the best-of-
# many-samples rule absorbs; at 10 % a parallel region, which waits for its slowest
# thread, is held up in about 1 - 0.9^threads of its samples (19 % with 2 threads, 57 %
# with 8), enough to move the medians past the 5 % noise test and to leave no quiet
# sample for a long one.
OTHER_LOAD = 0.10
# Steal: time a VM's host gave our vCPUs to someone else. Above 5 % say so on its own
# (the guest cannot see that work in its own process list).
STEAL = 0.05


def _loadavg_clause(load) -> str:
    if load.loadavg_1m_before is None:
        return ""
    return (f" (and the load average was {load.loadavg_1m_before:.1f} on "
            f"{load.machine_cpus} CPUs before it started)")


def machine_load_notes(load) -> list[str]:
    """Notes on other work during the probe (a load.MachineLoad): CPU time others took
    beyond the CPUs the probe left free, steal, or a busy start where nothing else is
    known."""
    notes: list[str] = []
    share = load.contended_share
    if share is not None and share > OTHER_LOAD:
        if load.spare_cpus == 0:
            head = (f"other processes used {load.other_cpu_share:.0%} of the CPUs while the "
                    f"probe ran")
        else:
            head = (f"other processes used {load.other_cpu_s / load.window_s:.2g} CPUs on "
                    f"average while the probe ran {load.threads} thread"
                    f"{'s' if load.threads != 1 else ''} on {load.cpus} "
                    f"CPUs, {share:.0%} of the CPUs its threads needed")
        notes.append(f"{head}{_loadavg_clause(load)}: measured ceilings read low; rerun on "
                     f"a quiet machine")
    elif (load.other_cpu_s is None and load.loadavg_1m_before is not None
          and load.loadavg_1m_before >= load.machine_cpus):
        notes.append(f"the load average was {load.loadavg_1m_before:.1f} on "
                     f"{load.machine_cpus} CPUs before the probe started: other work was "
                     f"probably running and measured ceilings may read low (this system has "
                     f"no /proc/stat, so work during the probe was not measured); rerun on a "
                     f"quiet machine")
    if load.steal_share is not None and load.steal_share > STEAL:
        notes.append(f"the VM's host took {load.steal_share:.0%} of the CPU time (steal) "
                     f"while the probe ran: other guests ran on the host's cores, so "
                     f"measured ceilings read low; rerun when the host is quieter")
    return notes


def busy_start_warning(loadavg: float | None, machine_cpus: int) -> str | None:
    """Before the long work: a load average at or above the CPU count means other work
    is queued for every CPU, and it would compete with the probe."""
    if loadavg is None or loadavg < machine_cpus:
        return None
    return (f"the machine is busy: the 1-minute load average is {loadavg:.1f} on "
            f"{machine_cpus} CPUs; other work will lower the measured ceilings; stop "
            f"(Ctrl-C) and rerun on a quiet machine for reliable figures")
