"""Other work on rank 0's host while the ranks measured, under torchrun.

No launcher of ours sees the ranks there (torchrun starts them), so each rank takes a
load.snapshot before its first and after its last measurement, the ranks gather
(hostname, own CPU seconds between the two), and rank 0 judges its own host: /proc/stat
busy time over its window minus the CPU time of every rank on that host, as a share of
wall x CPUs. The ticks are summed over all the host's CPUs, not rank 0's affinity: the
other local ranks may be pinned elsewhere (torchrun --numa-binding) and their CPU time is
subtracted. Ranks on other hosts are not judged: rank 0 cannot read their /proc/stat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...hardware.profile import MachineProfile, profile_from_dict, profile_to_dict
from ..cpu.load import LoadSources, MachineLoad, Snapshot, machine_load
from .launch import ranks_cpus, with_machine_load

# Every CPU of the host: the aggregate /proc/stat line (see the module docstring).
HOST_SOURCES = LoadSources(affinity=lambda: None)


def host_ranks_cpu_s(own: Sequence[tuple[str, float]], host: str) -> tuple[int, float]:
    """(ranks on `host`, their summed CPU seconds) from every rank's (hostname, seconds)."""
    mine = [cpu for h, cpu in own if h == host]
    return len(mine), sum(mine)


def host_load(before: Snapshot, after: Snapshot, own: Sequence[tuple[str, float]],
              host: str, loadavg: float | None,
              sources: LoadSources = HOST_SOURCES) -> MachineLoad:
    """Rank 0: other work on `host` between its two snapshots. The snapshots' own CPU time
    (rank 0's alone) is replaced by the summed CPU time of every rank on the host."""
    ranks, cpu_s = host_ranks_cpu_s(own, host)
    cpus = before.ticks.cpus if before.ticks else sources.machine_cpus
    return machine_load(replace(before, own_cpu_s=0.0), replace(after, own_cpu_s=cpu_s),
                        ranks_cpus(ranks, cpus), loadavg, sources,
                        own_what=f"the CPU time of the {ranks} rank{'s' * (ranks != 1)} on "
                                 f"this host (each rank's os.times, children included, "
                                 f"gathered)")


def torchrun_scope(host: str, hosts: Sequence[str]) -> str:
    """extras.machine_load.scope: whose load it is, and which hosts it does not judge."""
    scope = f"ranks on {host} (torchrun), from the first to the last measurement"
    others = sorted(set(hosts) - {host})
    if others:
        scope += (f"; ranks on the other host{'s' * (len(others) > 1)} "
                  f"({', '.join(others)}) are not judged")
    return scope


def with_host_load(profile: MachineProfile, before: Snapshot, after: Snapshot,
                   own: Sequence[tuple[str, float]], host: str, loadavg: float | None,
                   sources: LoadSources = HOST_SOURCES) -> MachineProfile:
    """Rank 0's cluster profile with extras.machine_load for its host, recorded as the
    launcher records it (launch.with_machine_load: its notes first among the roof's)."""
    data: dict[str, Any] = with_machine_load(
        profile_to_dict(profile), host_load(before, after, own, host, loadavg, sources),
        torchrun_scope(host, [h for h, _ in own]))
    return profile_from_dict(data, "cluster profile from rank 0")
