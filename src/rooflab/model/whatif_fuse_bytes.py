"""The bytes a fused kernel moves (whatif --fuse), from what its members carry. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence

from ..units import si
from .kernel import Kernel
from .opkind import ELEMENTWISE_OPS, kind_word, op_kind

# Op kinds that map arrays element by element (no reduction, no matrix): a chain of them,
# fused, reads each outside input once and writes the last output once.
_MAP_WORDS = frozenset(ELEMENTWISE_OPS) | {"elementwise", "activation", "add", "relu", "silu",
                                           "gelu"}


def fused_bytes(members: Sequence[Kernel]) -> tuple[dict[str, float], str]:
    """The fused kernel's bytes per level and the words saying how they were had.

    Members all named elementwise maps by meta.op (a chain: each reads the one before's
    output): the fused loop reads every outside input once and writes the last output, so
    the members' bytes summed, less a write and a re-read of each of the k-1 intermediates,
    each intermediate taken as half the smallest member's bytes (that pass reads one array
    and writes one). o = x*2; o += y; o *= z: 16 + 24 + 24 - 2 x 2 x 8 = 32 B per element
    (x, y, z read, o written), not the largest member's 24 (review r5 F1: 1.49x, measured
    1.46x, where 24 B said 1.99x); k equal one-input passes still cut bytes k-fold. Never
    under the largest member's. Other members (reductions, matrices, unknown kinds): what
    the largest member moved, a floor only (right where all read the same inputs)."""
    levels = {lv for k in members for lv in k.bytes}
    largest = {lv: max(k.bytes.get(lv, 0.0) for k in members) for lv in levels}
    if not all(kind_word(op_kind(k)) in _MAP_WORDS for k in members):
        return largest, ("the fused kernel moves what its largest member moved (intermediates "
                         "stay on chip; with members of unknown or non-elementwise kind "
                         "(meta.op) that is a floor on its bytes where they read different "
                         "inputs, so the gain is at most this)")
    out = {}
    for lv in levels:
        have = [k.bytes[lv] for k in members if k.bytes.get(lv, 0.0) > 0]
        kept = (len(have) - 1) * min(have) if have else 0.0   # 2 x (k-1) x (min / 2)
        out[lv] = max(largest[lv], sum(have) - kept)
    shown = ""
    if out.get("DRAM"):
        sizes = " + ".join(si(k.bytes["DRAM"], "B") for k in members if k.bytes.get("DRAM"))
        shown = f" (DRAM: {sizes} -> {si(out['DRAM'], 'B')})"
    return out, ("the fused elementwise chain reads each outside input once and writes its "
                 "last output once: the members' bytes summed, less one write and one re-read "
                 "of each intermediate, taken as half the smallest member's bytes (a pass "
                 f"reading one array and writing one){shown}; members that re-read one "
                 "input move fewer bytes fused")
