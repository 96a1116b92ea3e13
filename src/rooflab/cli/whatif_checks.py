"""Checks of `rooflab whatif`'s options against the kernels they change."""

from __future__ import annotations

import math

from ..errors import InputError


def check_batch(batch: int, kernels) -> None:
    """--batch N scales a kernel's FLOP, bytes and time by at most N / its batch (a train
    step's held parts not at all): past a Kernel's range (1e30 FLOP or bytes, 1e7 s) the
    largest --batch is named (1e30 was blamed on the file, "bytes[DRAM] 4.1e+33 ... is the
    unit right?", s36 J)."""
    from ..model.kernel import COUNT_RANGE, MAX_SECONDS
    from ..model.whatif_batch import HELD_PARTS, meta_batch

    def share(k) -> float:   # of the range, the most a kernel fills
        counts = [*k.flop.values(), *k.bytes.values()]
        return max(max(counts, default=0.0) / COUNT_RANGE[1], (k.seconds or 0) / MAX_SECONDS)

    hi = min((meta_batch(k) / f for k in kernels
              if k.meta.get("train_part") not in HELD_PARTS and (f := share(k)) > 0),
             default=math.inf)
    if batch >= 1 and batch > hi:
        raise InputError(f"--batch {batch}: the kernels' FLOP, bytes and times at that batch "
                         f"leave the range rooflab takes (up to {COUNT_RANGE[1]:g} FLOP or "
                         f"bytes, {MAX_SECONDS:g} s); give --batch {math.floor(hi):,} or less")
