"""A made-up /sys/devices/system/cpu cache tree, as the kernel writes it: one
cpuN/cache/indexI folder per cache with level, type, size and (when given)
shared_cpu_list, each a line of text. Four test files built it by hand."""

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
