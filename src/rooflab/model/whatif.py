"""What-ifs: change precision, quantize weights, sparsify, fuse kernels, change batch, scale
one kernel's bytes (more reuse), move hardware.

Each what-if builds new Kernels from old ones under one stated assumption; model/retime.py
predicts their time on the (new) roof at the efficiency each kernel reaches now, and holds
`WhatIf` and its JSON shape. This module holds the what-ifs that reshape bytes or kernels
(scale_bytes, fuse, move_hardware); the others live by what they change: whatif_precision,
whatif_weights (quantize, sparsify), whatif_batch; the floors and the JSON shape in
whatif_floors, the "read with care" lines in whatif_warnings. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..errors import InputError
from .advice_core import efficiency_of
from .analysis import analyze
from .ceiling import Roof
from .kernel import Kernel, sum_counts
from .retime import WhatIf, _apply, _primary, _select, held_launch_share, launch_left_out, retime
from .whatif_batch import change_batch  # noqa: F401  (docs/report.md imports it from here)
from .whatif_floors import describe  # noqa: F401  (docs/python.md imports it from here)
from .whatif_fuse_bytes import fused_bytes
from .whatif_precision import change_precision  # noqa: F401  (docs/report.md imports it from here)
from .whatif_weights import quantize_weights  # noqa: F401  (docs/report.md imports it from here)


def scale_bytes(roof: Roof, kernels: Sequence[Kernel], factor: float,
                names: Iterable[str] | None = None) -> WhatIf:
    """More (or less) data reuse: bytes x `factor` at every memory level the kernel lists,
    FLOP unchanged, so AI / factor (seed 000 §5.3: better tiling took a conv from AI ~5 to
    20+, factor 0.25, "nearly 3x" faster while still bandwidth-bound). Every level, as the
    precision and weight what-ifs scale every level: the model cannot tell which level the
    reuse happens in; a kernel file with DRAM bytes only (most) does not see the choice.
    A 'weight_bytes' meta is scaled with the bytes, so the weight share stays."""
    if not 0 < factor < math.inf:
        raise InputError(f"bytes scale must be > 0 and finite (0.25 = a quarter of the "
                         f"bytes, AI x 4); got {factor:g}")

    def change(k: Kernel) -> Kernel:
        wb = k.meta.get("weight_bytes")
        meta = ({**k.meta, "weight_bytes": wb * factor}
                if isinstance(wb, (int, float)) and not isinstance(wb, bool) else k.meta)
        return k.with_(bytes={lv: b * factor for lv, b in k.bytes.items()}, meta=meta)

    return _apply(roof, kernels, change, names, f"bytes x {factor:g}",
                  f"the same FLOP move {factor:g}x the bytes at every memory level (AI x "
                  f"{1 / factor:.3g}: reuse from tiling, blocking or caching); the work "
                  f"keeps the fraction of its roof it reaches now")


def fuse(roof: Roof, kernels: Sequence[Kernel], names: Sequence[str],
         fused_name: str | None = None) -> WhatIf:
    """Fuse kernels into one: FLOP add up, intermediates stay on chip, one launch."""
    kernels = tuple(kernels)
    chosen = _select(kernels, names)
    if len(chosen) < 2:
        raise InputError("fuse needs at least two kernel names, e.g. --fuse add,relu,mul")
    members = [k for k in kernels if k.name in chosen]
    before = analyze(roof, kernels)
    prim = _primary(before)
    flop = sum_counts(k.flop for k in members)
    nbytes, bytes_words = fused_bytes(members)
    merged = Kernel(name=fused_name or "+".join(k.name for k in members), flop=flop,
                    bytes=nbytes, calls=max(k.calls for k in members),
                    unit=next((k.unit for k in members if k.unit), None),
                    provenance={"flop": "derived", "bytes": "derived"},
                    meta={"fused": [k.name for k in members]})
    eff = None
    if all(k.seconds for k in members) and all(k.name in prim for k in members):
        effs = [efficiency_of(prim[k.name]) for k in members]
        work = sum(e.work_s for e in effs)
        floor = sum(prim[k.name].floor_s for k in members)
        # capped at 1, unlike retime.work_ratio: members above their roof in a chain are
        # so mostly by re-reading intermediates from cache, the very traffic fusing
        # removes (test_advice_r5's c1 chain: 1.60x above, fused measured 1.46x; keeping
        # the ratio said 2.00x, the cap 1.49x)
        eff = min(1.0, floor / work) if work > 0 else 1.0
    label = f"fuse {len(members)} kernels"
    # members timed below calls x the launch floor (GPU-side times) hold no launches: nor
    # does the fused kernel's prediction (retime.launch_left_out, review r1 F6). Judged per
    # member: the fused launches are those of the members whose times held theirs, so a
    # GPU-side member's 10000 calls are not added back by a 1-call partner (review r8 F4)
    held = [k for k in members if not launch_left_out(before, k)]
    most = max(held, key=lambda k: k.calls) if held else None
    # of its launches, only the share its measured time held comes back (as retime's other
    # callers: a member timed near its roof held part of them; review s21 x2 F1)
    new = retime(merged, roof, eff, label, launch_left_out=not held,
                 launch_calls=most.calls if most else None,
                 launch_share=held_launch_share(before, most) if most else 1.0)
    measured = sum(k.seconds or 0.0 for k in members)
    if eff is not None and new.seconds is not None and new.seconds > measured:
        # fusing only removes work and launches: members above their roof, taken at 100 %
        # of it fused, must not read slower than they were (review r8 F4)
        new = new.with_(seconds=measured)
    after = [new if k is members[0] else k for k in kernels if k.name not in chosen or
             k is members[0]]
    return WhatIf(label,
                  f"{bytes_words}; it launches once per call and runs its work at the "
                  f"members' combined efficiency",
                  before, analyze(roof, after), tuple((k, new) for k in members))


def move_hardware(roof: Roof, kernels: Sequence[Kernel], other: Roof,
                  judge: Roof | None = None) -> WhatIf:
    """The same kernels on other hardware, each at the efficiency it reaches now of `roof`
    (the efficiency basis); judge: the roof they are judged on, where a whole step's gap
    above its floor is taken (retime.step_gap), when it is not `roof`."""
    inside = ("" if roof.overhead_s is not None or other.overhead_s is None else
              f"; {roof.name} has no launch floor, so its measured times include their "
              f"launches and {other.name}'s launch floor bounds each prediction from below "
              f"rather than adding to it")
    return _apply(roof, kernels, lambda k: k, None, f"on {other.name}",
                  f"each kernel reaches the same fraction of {other.name}'s roof as it "
                  f"reaches of {roof.name}'s{inside}", new_roof=other, judge=judge)
