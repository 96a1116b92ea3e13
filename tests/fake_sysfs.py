"""A made-up /sys/devices/system/cpu cache tree, as the kernel writes it: one
cpuN/cache/indexI folder per cache with level, type, size and (when given)
shared_cpu_list, each a line of text. Four test files built it by hand. And a made-up
cgroupfs (write_cgroup) with the /proc/self/mountinfo line of its mount."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

# (level, type, size, shared_cpu_list or None), in index order
CacheRow = tuple[object, str, str, "str | None"]


def write_caches(root: Path, cpu: int, rows: Iterable[CacheRow]) -> Path:
    """cpu{cpu}/cache/index0.. under `root`, one per row; returns root."""
    for idx, (level, kind, size, shared) in enumerate(rows):
        d = root / f"cpu{cpu}" / "cache" / f"index{idx}"
        d.mkdir(parents=True)
        for name, text in (("level", level), ("type", kind), ("size", size),
                           ("shared_cpu_list", shared)):
            if text is not None:
                (d / name).write_text(f"{text}\n")
    return root


def write_cgroup(root: Path, rel: str = "", **files: object) -> Path:
    """One cgroup directory `rel` under the cgroupfs mount `root`, with its files, named
    with '_' for the first '.' (memory_max= writes memory.max); returns the directory."""
    d = root.joinpath(*[p for p in rel.strip("/").split("/") if p])
    d.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (d / name.replace("_", ".", 1)).write_text(f"{text}\n")
    return d


def mountinfo_line(mount_point: Path, root: str = "/", fstype: str = "cgroup2") -> str:
    """A /proc/self/mountinfo line for a cgroup mount at `mount_point` showing `root`."""
    opts = "rw" if fstype == "cgroup2" else "rw,memory"
    return (f"41 31 0:38 {root} {mount_point} rw,nosuid,nodev,noexec,relatime - {fstype} "
            f"{fstype} {opts}")
