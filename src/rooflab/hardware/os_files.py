"""Small readers for the OS's own files (/proc, sysfs, cgroupfs), shared by host,
cpu_topology and cgroup so that each treats a missing or unreadable file the same way."""

from __future__ import annotations

from pathlib import Path


def read(path: Path) -> str:
    """The file's text without surrounding whitespace; '' where it is absent or unreadable
    (sysfs and cgroup files vanish with kernel versions, containers and permissions)."""
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def to_int(text: str | None, base: int = 10) -> int | None:
    """int(text) in `base` (0: a prefixed literal such as Arm's '0xd40'), None if unreadable."""
    try:
        return int(str(text), base)
    except (TypeError, ValueError):
        return None
