"""A host's data caches (split from hardware/host.py, which re-exports these names): the
Caches record and the readers of what the OS already holds (no command run here):
sysfs's per-instance sizes and sharing, lscpu's text (totals divided by instances), the
size words both print ('32K', '2 MiB'), and Windows' GetLogicalProcessorInformationEx.
hardware/host.detect_caches picks among them (and sysctl on macOS)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .cpu_topology import l3_layout, parse_cpulist
from .os_files import read as _read
from .os_files import to_int as _int
from .windows_topology import SOURCE as WIN_SOURCE
from .windows_topology import WinTopology

SYS_CPU = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class Caches:
    """Data-cache sizes in bytes: L1d/L2 per core, L3 per instance (shared)."""

    l1d: int | None = None
    l2: int | None = None
    l3: int | None = None
    l3_instances: int = 1   # those the process's CPUs reach (Linux sysfs: affinity mask)
    source: str = ""
    # Logical CPUs sharing one instance (sysfs shared_cpu_list): 2 for the L1d and L2 of a
    # core with two SMT threads. 1 where the OS does not say (lscpu, sysctl).
    l1d_sharing: int = 1
    l2_sharing: int = 1
    l3_sharing: int = 1   # logical CPUs sharing one L3 instance (sysfs), 1 when unknown

    def level(self, name: str) -> int | None:
        return {"L1": self.l1d, "L2": self.l2, "L3": self.l3}.get(name)

    def sharing(self, name: str) -> int:
        """Logical CPUs sharing one instance of L1/L2 (1 when unknown)."""
        return max(1, {"L1": self.l1d_sharing, "L2": self.l2_sharing}.get(name, 1))


# --- caches -------------------------------------------------------------------------------
def parse_cache_size(text: str) -> int | None:
    """'32K', '1024K', '32 MiB', '2 MiB (2 instances)' -> bytes, None when unreadable.

    Binary on purpose (K = 1024): lscpu and sysfs print cache sizes in KiB/MiB whether or not
    they write the 'i'. units.parse_size is the decimal parser (K = 1e3) for user input.
    """
    m = re.match(r"\s*([\d.]+)\s*([KMG]?)(i?B)?", text.strip(), re.I)
    if not m:
        return None
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


def sysfs_caches(root: Path = SYS_CPU) -> Caches:
    """Cache sizes of cpu0 from sysfs (sizes per instance), and how many logical CPUs
    share each L1d/L2 instance (shared_cpu_list: "0,64" or "0-1" on a core with two SMT
    threads; likwid-topology reads the same)."""
    sizes: dict[str, int] = {}
    sharing: dict[str, int] = {}
    for idx in sorted((root / "cpu0" / "cache").glob("index*")):
        kind = _read(idx / "type").strip()
        level = _read(idx / "level").strip()
        size = parse_cache_size(_read(idx / "size"))
        if kind in ("Data", "Unified") and level and size:
            sizes[f"L{level}"] = size
            sharing[f"L{level}"] = len(parse_cpulist(_read(idx / "shared_cpu_list"))) or 1
    if not sizes:
        return Caches()
    # L3 instances: distinct index3 shared_cpu_lists over every cpuN (cpu_topology)
    layout = l3_layout(root) if "L3" in sizes else None
    return Caches(l1d=sizes.get("L1"), l2=sizes.get("L2"), l3=sizes.get("L3"), source="sysfs",
                  l3_instances=layout[0] if layout else 1,
                  l1d_sharing=sharing.get("L1", 1), l2_sharing=sharing.get("L2", 1),
                  l3_sharing=sharing.get("L3", 1))


def parse_lscpu(text: str) -> Caches:
    """lscpu prints totals ('64 KiB (2 instances)'); divide by the instance count.

    util-linux 2.34-2.36 print the totals with no count ('L1d cache: 2 MiB' on a 64-core
    EPYC): L1d/L2 are then divided by the cores lscpu lists (per core), L3 is kept as one
    instance of the total (right for the DRAM working set; sysfs gives the real split).
    Older lscpu prints per-instance sizes without 'iB' ('32K')."""
    found: dict[str, tuple[int, int]] = {}
    cores = (_int(_lscpu_field(text, r"Core\(s\) per socket")) or 0) * (
        _int(_lscpu_field(text, r"Socket\(s\)")) or 1)
    for line in text.splitlines():
        m = re.match(r"\s*(L1d|L2|L3)(?: cache)?:\s*(.+)", line)
        if not m:
            continue
        total = parse_cache_size(m.group(2))
        inst = re.search(r"\((\d+) instances?\)", m.group(2))
        n = int(inst.group(1)) if inst else 1
        if not inst and re.search(r"iB", m.group(2)) and m.group(1) != "L3":
            if not cores:
                continue   # a total over an unknown number of cores: no per-core size
            n = cores
        if total:
            found[m.group(1)] = (total // n, n)
    if not found:
        return Caches()
    get = {k: v[0] for k, v in found.items()}
    return Caches(l1d=get.get("L1d"), l2=get.get("L2"), l3=get.get("L3"),
                  l3_instances=found.get("L3", (0, 1))[1], source="lscpu")


def windows_caches(topo: WinTopology) -> Caches:
    """Caches from GetLogicalProcessorInformationEx: each level's size, sharing and
    instances as Windows lists them (windows_topology.py)."""
    c = topo.caches
    if not c:
        return Caches(source="unknown")
    one = {lv: c[lv] for lv in ("L1", "L2", "L3") if lv in c}
    return Caches(l1d=one["L1"].size if "L1" in one else None,
                  l2=one["L2"].size if "L2" in one else None,
                  l3=one["L3"].size if "L3" in one else None,
                  l3_instances=one["L3"].instances if "L3" in one else 1, source=WIN_SOURCE,
                  l1d_sharing=one["L1"].sharing if "L1" in one else 1,
                  l2_sharing=one["L2"].sharing if "L2" in one else 1,
                  l3_sharing=one["L3"].sharing if "L3" in one else 1)


def _lscpu_field(text: str, field: str) -> str | None:
    m = re.search(rf"^\s*{field}:\s*(.+?)\s*$", text, re.M)
    return m.group(1) if m and m.group(1) != "-" else None
