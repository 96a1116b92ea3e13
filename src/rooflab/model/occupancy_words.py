"""A kernel's occupancy in words, from the meta a profiler reader leaves: ncu's Occupancy
section for NVIDIA (warps of 32 per SM), or the theoretical occupancy rooflab derives from
rocprof's kernel resources for AMD (waves of 64 per CU, ingest/rocprof_occupancy.py). Split
from model/advice_compute.py, which re-exports occupancy_words. Pure.
"""

from __future__ import annotations

from ..sides import share_text
from .grid_fill import grid_size as grid_blocks

# Threads per warp on every NVIDIA GPU so far: a block of 128 threads is 4 warps.
WARP_THREADS = 32


def occupancy_words(m) -> str:
    """'theoretical 41.7 % (20 of 48 warps), limited by registers; achieved 41.6 %' from
    meta occupancy_theoretical / _limiter / _achieved (ncu's Occupancy section, % of the
    SM's warp slots); '' without a theoretical figure. The warps are derived: the blocks
    one SM holds (occupancy_limit_blocks) x the block's warps, and the SM's warp slots
    that many make the theoretical %; left out when the two do not give whole warps. An
    AMD kernel (rocprof: meta wave_size 64, workgroup_size) counts waves of 64 per CU, and
    says where its figure came from (meta occupancy_from: derived, not recorded)."""
    most = m.get("occupancy_theoretical")
    if not isinstance(most, (int, float)) or isinstance(most, bool) or most <= 0:
        return ""
    text = f"theoretical {occupancy_pct(most)}"
    size, unit = _wave(m)
    blocks = m.get("occupancy_limit_blocks")
    threads = grid_blocks(m.get("block")) or _whole(m.get("workgroup_size"))
    if isinstance(blocks, (int, float)) and blocks >= 1 and threads:
        active = int(blocks) * -(-threads // size)
        slots = active * 100 / most
        if abs(slots - round(slots)) < 0.05:
            text += f" ({active} of {round(slots)} {unit})"
    limit = m.get("occupancy_limiter")
    if limit:
        text += f", limited by {limit}"
    got = m.get("occupancy_achieved")
    if isinstance(got, (int, float)) and not isinstance(got, bool):
        text += f"; achieved {occupancy_pct(got)}"
    if m.get("occupancy_from"):
        text += f" ({m['occupancy_from']})"
    return text


def occupancy_pct(pct: float, high: float | None = None) -> str:
    """An occupancy in percent of the SM's warp (the CU's wave) slots, as every page prints
    it (advice, the latency detail, `ai occupancy`, a kernel's launches; four roundings
    before, s36 D): a share's one decimal ('41.7 %', '100.0 %'; sides.share_text keeps
    an achieved 99.96 % off a full SM). high: a range of launches, '16.5-41.7 %', one
    figure where both ends print alike."""
    text = share_text(pct)
    if high is None or share_text(high) == text:
        return text
    return f"{text.removesuffix(' %')}-{share_text(high)}"


def _wave(m) -> tuple[int, str]:
    """(threads per warp or wave, what to call them): an AMD kernel's meta wave_size (64)
    counts waves; NVIDIA's warps of WARP_THREADS otherwise."""
    size = _whole(m.get("wave_size"))
    return (size, "waves") if size else (WARP_THREADS, "warps")


def _whole(v) -> int | None:
    """A positive whole number from meta (a CSV read back gives 256.0), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 1:
        return None
    return int(v) if float(v).is_integer() else None
