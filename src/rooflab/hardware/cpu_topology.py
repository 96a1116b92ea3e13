"""Which physical core each logical CPU belongs to, and how many L3 instances there are.

A CPU set (`--cpus 0,112`, a container's cpuset, a Kubernetes CPU-manager pod) names
logical CPUs; SMT siblings share one core's FMA pipes, so the nominal compute roof counts
the distinct cores among them, not the CPUs (review s21 r2 F3). The map comes from
/proc/cpuinfo's `physical id`/`core id` (x86), else from sysfs cpuN/topology/core_cpus_list
(thread_siblings_list before Linux 5.4): Arm kernels print no core id in cpuinfo, and their
sysfs core_id is not unique (review s21 x1 F5, below).
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass
from pathlib import Path

from .os_files import read as _read
from .os_files import to_int as _int


def parse_cpulist(text: str) -> tuple[int, ...]:
    """'0-15,20,22-23' -> (0, ..., 15, 20, 22, 23); '' -> ()."""
    out: list[int] = []
    for part in text.strip().split(","):
        lo, _, hi = part.strip().partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(out)


def _cpu_dirs(sys_cpu: Path) -> list[Path]:
    return sorted((d for d in sys_cpu.glob("cpu*") if re.fullmatch(r"cpu\d+", d.name)),
                  key=lambda d: int(d.name[3:]))


def core_map(blocks: list[dict[str, str]], sys_cpu: Path | None
             ) -> tuple[tuple[int, str], ...]:
    """(logical CPU, core key) pairs, one key per physical core; () where neither source
    says (sys_cpu None: cpuinfo only). cpuinfo's key is 'package/core'. sysfs's is the
    core's CPU list: on a device-tree Arm board (Jetson Orin, RK3588, Asahi) Linux >= 6.0
    gives every CPU package 0 and restarts core_id in each cluster, so 'package/core_id'
    would merge cores of different clusters (x1 F5); core_cpus_list is the SMT group itself."""
    pairs = []
    for b in blocks:
        cpu = b.get("processor", "")
        if cpu.isdigit() and "core id" in b:
            pairs.append((int(cpu), f"{b.get('physical id', '0')}/{b['core id']}"))
    if pairs or sys_cpu is None:
        return tuple(pairs)
    for d in _cpu_dirs(sys_cpu):
        top = d / "topology"
        group = parse_cpulist(_read(top / "core_cpus_list") or _read(top / "thread_siblings_list"))
        core = _read(top / "core_id")
        if group:
            pairs.append((int(d.name[3:]), "cpus " + ",".join(map(str, group))))
        elif core:   # no sibling list (a kernel without either file): package/core
            pairs.append((int(d.name[3:]), f"{_read(top / 'physical_package_id') or '0'}/{core}"))
    return tuple(pairs)


def physical_cores(cpus, cores: tuple[tuple[int, str], ...]) -> int:
    """Distinct physical cores among `cpus`; a CPU the map lacks counts as its own core
    (the map is empty where the OS names no cores: then logical CPUs are all we have)."""
    where = dict(cores)
    keys = {where.get(c, f"cpu{c}") for c in cpus}
    return len(keys)


# --- L3 instances (sysfs) -----------------------------------------------------------------
def _l3_lists(sys_cpu: Path, cpus) -> dict[int, tuple[int, ...]]:
    """Each CPU's L3 instance, as the CPUs sharing it (cpuN/cache/index* of level 3,
    shared_cpu_list); CPUs sysfs shows no L3 for are left out."""
    out: dict[int, tuple[int, ...]] = {}
    for c in cpus:
        for idx in (sys_cpu / f"cpu{c}" / "cache").glob("index*"):
            if _read(idx / "level") == "3":
                shared = parse_cpulist(_read(idx / "shared_cpu_list"))
                if shared:
                    out[c] = shared
    return out


def l3_layout(sys_cpu: Path) -> tuple[int, int] | None:
    """(distinct L3 instances seen, logical CPUs sharing cpu0's L3) over every cpuN; None
    without a sysfs L3. Older lscpu (before util-linux 2.37) prints no instance count, so
    this is the count to trust."""
    lists = _l3_lists(sys_cpu, [int(d.name[3:]) for d in _cpu_dirs(sys_cpu)])
    if not lists:
        return None
    return len(set(lists.values())), len(lists.get(0) or next(iter(lists.values())))


def l3_instances(layout: tuple[int, int] | None, logical_cpus: int) -> int | None:
    """L3 instances: the distinct lists seen, or the logical CPUs over the CPUs sharing one
    (a sysfs copy with cpu0 alone, or CPUs hidden from this container), whichever is more."""
    if layout is None:
        return None
    seen, sharing = layout
    by_count = -(-logical_cpus // sharing) if sharing else 1
    return max(seen, by_count, 1)


# --- hybrid CPUs: which logical CPUs are P-cores and which E-cores ------------------------
@dataclass(frozen=True)
class CoreSplit:
    """P- and E-cores of a hybrid CPU (Alder/Raptor/Arrow Lake...), as the kernel lists them.

    `e_clock_ratio` is an E-core's cpufreq maximum over a P-core's (None where cpufreq is
    absent): the probe measures one clock, and E-cores run slower. macOS gives counts
    only (hw.perflevel0/1.physicalcpu): p_cpus and e_cpus are then empty."""

    p_cores: int
    e_cores: int
    p_cpus: tuple[int, ...]
    e_cpus: tuple[int, ...]
    e_clock_ratio: float | None
    source: str


def _type_cpus(sys_cpu: Path, pmu: Path) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    """(P logical CPUs, E logical CPUs, source). Linux lists them per core type under
    /sys/devices/system/cpu/types/<intel_core_N|intel_atom_N>/cpulist on newer kernels,
    and as the hybrid PMUs' cpu lists (/sys/bus/event_source/devices/cpu_core/cpus,
    cpu_atom/cpus) since 5.13."""
    types = sys_cpu / "types"
    p: list[int] = []
    e: list[int] = []
    for d in sorted(types.glob("*")) if types.is_dir() else ():
        cpus = parse_cpulist(_read(d / "cpulist"))
        (e if "atom" in d.name else p if "core" in d.name else []).extend(cpus)
    if p and e:
        return tuple(p), tuple(e), str(types)
    p_pmu = parse_cpulist(_read(pmu / "cpu_core" / "cpus"))
    e_pmu = parse_cpulist(_read(pmu / "cpu_atom" / "cpus"))
    if p_pmu and e_pmu:
        return p_pmu, e_pmu, f"{pmu}/cpu_core,cpu_atom"
    return (), (), ""


HYBRID_PMU_KERNEL = (5, 13)   # the first kernel with cpu_core/cpu_atom PMUs (perf: hybrid)


def kernel_version(release: str) -> tuple[int, int] | None:
    """'5.10.0-23-amd64' -> (5, 10); None where the release names no version."""
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def hybrid_pmu(pmu: Path, release: str | None = None) -> bool | None:
    """True with cpu_core/cpu_atom PMUs (a hybrid kernel), False with one plain `cpu` PMU
    and no cpu_core (the kernel found one core type: i5-12400, i3-12100, Xeon E-2400 are
    Golden Cove without E-cores), None where the PMU directory says neither. A kernel
    before 5.13 shows one plain `cpu` PMU on a hybrid CPU too (Debian 11's 5.10, RHEL 8's
    4.18 on a 13900K: review s21 x1 F6), so there it says nothing: None.
    `release`: platform.release() unless given."""
    if (pmu / "cpu_core").is_dir():
        return True
    if not (pmu / "cpu").is_dir():
        return None
    version = kernel_version(platform.release() if release is None else release)
    return False if version and version >= HYBRID_PMU_KERNEL else None


def _max_khz(sys_cpu: Path, cpu: int) -> int | None:
    return _int(_read(sys_cpu / f"cpu{cpu}" / "cpufreq" / "cpuinfo_max_freq"))


def detect_core_split(blocks: list[dict[str, str]], sys_cpu: Path,
                      pmu: Path) -> CoreSplit | None:
    """The P/E split of a hybrid CPU from sysfs, None when the OS shows none."""
    p, e, source = _type_cpus(sys_cpu, pmu)
    if not (p and e):
        return None
    pk, ek = _max_khz(sys_cpu, p[0]), _max_khz(sys_cpu, e[0])
    cores = core_map(blocks, sys_cpu)   # P-cores have two threads, E-cores one
    return CoreSplit(p_cores=physical_cores(p, cores), e_cores=physical_cores(e, cores),
                     p_cpus=p, e_cpus=e, e_clock_ratio=ek / pk if pk and ek else None,
                     source=source)


def cores_in_set(split: CoreSplit, cpus, cores: tuple[tuple[int, str], ...]
                 ) -> tuple[int, int]:
    """(P, E) physical cores among `cpus` (review s21 r2 F4: --cpus 16-31 on a 13900K is
    16 E-cores, not 8 P + 8 E). Without CPU lists (macOS): the split's own counts."""
    if not (split.p_cpus or split.e_cpus):
        return split.p_cores, split.e_cores
    mine = set(cpus)
    p = [c for c in split.p_cpus if c in mine]
    e = [c for c in split.e_cpus if c in mine]
    return (physical_cores(p, cores) if p else 0), (physical_cores(e, cores) if e else 0)


def l3_groups(sys_cpu: Path, cpus) -> int | None:
    """Distinct L3 instances among `cpus`, None where sysfs shows none for them."""
    return len(set(_l3_lists(sys_cpu, cpus).values())) or None


def l3_reach(sys_cpu: Path, cpus) -> int | None:
    """Distinct L3 instances among `cpus` when sysfs lists an L3 for every one of them: the
    last-level cache a cpuset, taskset or Slurm --cpus-per-task lets this process fill (4
    CPUs of a 12-CCD EPYC reach one 32 MiB L3, not 12: s24 r2 F1 addendum). None where a
    CPU has no list (a sysfs copy with cpu0 alone says nothing about the others)."""
    cpus = set(cpus)
    lists = _l3_lists(sys_cpu, sorted(cpus))
    return len(set(lists.values())) if cpus and len(lists) == len(cpus) else None
