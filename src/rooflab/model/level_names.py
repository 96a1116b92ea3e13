"""A memory level a caller asks for (`--level`, plot_roofline(level=), analyze(levels=)),
made canonical and checked: one rule for the CLI and the Python API. Pure.

Without it the Python calls compared the name as typed with the kernels' canonical keys:
level="dram" drew no point and said "no bytes at dram" of a kernel with DRAM bytes, and
levels=["L9"] gave an empty analysis without a word (review s18 r8 F1).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from ..units import GROUP_LINKS, LEVELS, LINKS
from .canonical_names import level_name

KNOWN = (*LEVELS, *LINKS)


def checked_level(name: Any, where: str) -> str:
    """'dram', 'HBM3e', 'l2' -> DRAM, DRAM, L2, as the kernel files read them; a name that
    is no memory level or link is an InputError "{where} NAME: use one of ...". `where`
    names the argument as the caller wrote it: "--level", "plot_roofline(): level"."""
    if not isinstance(name, str):
        raise InputError(f"{where} {name!r:.40}: a memory level is a name, one of "
                         f"{', '.join(KNOWN)}")
    canonical = level_name(name)
    if canonical not in KNOWN and canonical not in GROUP_LINKS:   # 'xGMI (--dp ring)'
        raise InputError(f"{where} {canonical}: use one of {', '.join(KNOWN)}")
    return canonical


def checked_levels(names: Iterable[Any] | str, where: str) -> tuple[str, ...]:
    """checked_level over a list of levels; one name given bare (levels="DRAM") is a list of
    one (it matched by substring before: "RAM" found DRAM's bytes)."""
    if isinstance(names, str) or not hasattr(names, "__iter__"):
        names = (names,)
    return tuple(checked_level(n, where) for n in names)
