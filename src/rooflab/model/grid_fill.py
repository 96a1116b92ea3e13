"""Whether a GPU kernel's recorded grid leaves most SMs without a block. Such a kernel is
latency (parallelism) bound whatever its % of roof: the SMs without a block add no
bandwidth or FLOP/s, so neither roof can be what holds it (review s21 r3 F6: NERSC GPP's
sigma_gpp_gpu_34_gpu__red, 4 blocks on 24 SMs, read "memory-bound" at 16 % of DRAM and
"latency-bound" at 8 % with 2 blocks; Nsight Compute's speed-of-light rule calls both
latency). Read from Kernel.meta grid ('(4, 1, 1)', ncu's Grid Size spelling) and sms
(device__attribute_multiprocessor_count, or the catalog's count). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..units import fmt_share

# Fewer blocks than this share of the SMs: more than half the SMs idle for the whole kernel
IDLE_SM_SHARE = 0.5


def grid_size(shape: object) -> int | None:
    """'(4, 1, 1)' -> 4 (the product of the dimensions); None if not that spelling."""
    if not isinstance(shape, str):
        return None
    try:
        dims = [int(x) for x in shape.strip().strip("()").split(",") if x.strip()]
    except ValueError:
        return None
    n = 1
    for d in dims:
        n *= d
    return n if dims and n > 0 else None


def few_blocks(meta: Mapping) -> tuple[int, int] | None:
    """(blocks, SMs) where the grid gives fewer blocks than IDLE_SM_SHARE of the SMs;
    None where it does not, or the grid or the SM count is not recorded."""
    blocks, sms = grid_size(meta.get("grid")), meta.get("sms")
    if blocks is None or not isinstance(sms, int) or isinstance(sms, bool) or sms <= 0:
        return None
    return (blocks, sms) if blocks < IDLE_SM_SHARE * sms else None


def grid_reason(meta: Mapping, blocks: int, sms: int) -> str:
    """'grid of 4 blocks x 256 threads on 24 SMs: 16.7 % of SMs get a block' (the words
    advice_compute.grid_words gives the same grid, so the position and the advice agree)."""
    threads = grid_size(meta.get("block"))
    return (f"grid of {blocks} blocks" + (f" x {threads} threads" if threads else "")
            + f" on {sms} SMs: {fmt_share(blocks / sms)} of SMs get a block")
