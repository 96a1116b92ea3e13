"""A kernel analyze() gave no point: why, how to give it one, and its compute position.
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .ceiling import KernelCeiling, Roof
from .kernel import Kernel


@dataclass(frozen=True)
class Unplaced:
    """A kernel analyze() gave no point: why, and how to give it one. Its time stays in the
    total that every point's time_share is taken of, so the placed shares and these add up
    to 100 % (less a torch trace's time in ops without a formula, its meta's uncounted_s,
    which the total also holds). Without a memory level it still has a compute position:
    its achieved FLOP/s against the compute ceiling it is held to (no AI, so no
    attainable, no bound)."""

    kernel: str
    seconds: float | None
    calls: int
    time_share: float | None
    levels: tuple[str, ...]      # the memory levels it has bytes at (none usable here)
    reason: str                  # why there is no point
    fix: str                     # how to give it one
    flop: float
    compute: str                 # label of the compute ceiling it is held to
    peak_flop_per_s: float
    achieved_flop_per_s: float | None   # FLOP / seconds (None: untimed or no FLOP)
    kernel_index: int = -1       # its position in Analysis.kernels

    @property
    def percent_of_peak(self) -> float | None:
        if self.achieved_flop_per_s is None or self.peak_flop_per_s <= 0:
            return None
        return 100.0 * self.achieved_flop_per_s / self.peak_flop_per_s



def unplaced_kernel(roof: Roof, k: Kernel, held: KernelCeiling,
                    missing: Sequence[str], asked: int, total: float, index: int = -1) -> Unplaced:
    """Why kernel k got no point (no bytes; bytes only at levels the roof lacks; nothing
    but zeros), how to give it one, and its compute position (FLOP/s against its ceiling)."""
    here = [c.level for c in roof.memory]
    have = ", ".join(here) or "none"
    if not k.bytes:
        reason = "no bytes at any memory level, so no arithmetic intensity"
        fix = 'give its bytes, e.g. "bytes": {"DRAM": 1.0e8}'
    elif len(missing) == asked and len(k.bytes) > asked:
        # levels= (--level) set the kernel's other levels aside: that is the reason, not
        # its data, so name them rather than tell the user to add bytes it already has
        where = " and ".join(missing)
        aside = [lv for lv in k.bytes if lv not in missing]
        reason = (f"--level {where}: roof '{roof.name}' has no {where} ceiling (it has: "
                  f"{have}); this kernel also has {', '.join(aside)} bytes, set aside by "
                  f"--level")
        usable = next((lv for lv in aside if roof.find_memory(lv) is not None), None)
        instead = f" (or use --level {usable})" if usable else ""
        fix = (f"drop --level{instead}, or give a roof with "
               f"{_a(where)} {where} ceiling")
    elif len(missing) == asked:
        where = " and ".join(missing)
        reason = (f"its bytes are at {where} only, and roof '{roof.name}' has no {where} "
                  f"ceiling (it has: {have})")
        main = "DRAM" if "DRAM" in here else next(iter(here), None)
        other = f" or add {main} bytes" if main else ""
        fix = (f"give a roof with {_a(where)} {where} "
               f"ceiling (a probed profile: `rooflab probe -o profile.json`, then --on "
               f"profile.json){other}")
    else:
        reason = "0 FLOP and 0 bytes, so no arithmetic intensity"
        fix = "give its counts (flop=..., bytes=...)"
    flop = k.total_flop
    achieved = flop / k.seconds if k.seconds and flop > 0 else None
    return Unplaced(kernel=k.name, seconds=k.seconds, calls=k.calls,
                    time_share=k.seconds / total if k.seconds and total > 0 else None,
                    levels=tuple(k.bytes), reason=reason, fix=fix, flop=flop,
                    compute=held.label, peak_flop_per_s=held.ceiling.value,
                    achieved_flop_per_s=achieved, kernel_index=index)



def _a(level: str) -> str:
    """The article before a level's name as it is spoken: 'an L2', 'an HBM', 'a DRAM'."""
    return "an" if level[0] in "AEFHILMNORSX" else "a"
