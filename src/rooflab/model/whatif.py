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
from itertools import chain, combinations

from ..errors import InputError
from ..units import fmt_seconds
from .analysis import analyze
from .ceiling import Roof, _unit_of_part
from .dies import die_words, kernel_roof
from .held_unit import held_unit
from .kernel import Kernel, sum_counts
from .retime import WhatIf, _apply, _floor, _primary, _select, retime
from .retime_launch import launch_held_s
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
    merged, bytes_words = _merged(roof, members, fused_name)
    label = f"fuse {len(members)} kernels"
    full = (roof.overhead_s or 0.0) * merged.calls   # the fused kernel's launch floor
    eff, share = None, 1.0
    if all(k.seconds for k in members) and all(k.name in prim for k in members):
        # each member's time split as every other what-if splits it (retime_launch's band:
        # no switch at calls x the launch floor, where this split jumped ~9x; s27). No
        # range of report's two readings (seconds_launch_range): the launches fusing
        # removes make the band's time fall outside it (a 490 us and a 610 us member of
        # 100 calls on an H200: 610 us fused, 550 and 566 us under the readings)
        eff, launch = _fused_split(before, members)
        share = launch / full if full > 0 else 1.0
    new = retime(merged, roof, eff, label, launch_calls=merged.calls, launch_share=share)
    bound = ""
    if eff is not None and new.seconds is not None:
        # fusing only removes work and launches: members above their roof, taken at 100 %
        # of it fused, must not read slower than they were (review r8 F4)
        new = new.with_(seconds=min(new.seconds, _measured(members)))
        # nor faster than fusing fewer of them: the fused kernel does all their work
        # (s27 v2-F1: a third, faster member raised the combined efficiency, a,b,c read
        # 427 us where a,b read 1 ms)
        sub, slowest = _fewer_bound(roof, before, members)
        if slowest > new.seconds * (1 + 1e-12):
            new = new.with_(seconds=slowest)
            bound = (f"; never faster than fusing {'+'.join(sub)} alone "
                     f"({fmt_seconds(slowest)}), whose work it also does")
    after = [new if k is members[0] else k for k in kernels if k.name not in chosen or
             k is members[0]]
    return WhatIf(label,
                  f"{bytes_words}; it launches once per call and runs its work at the "
                  f"members' combined efficiency{bound}",
                  before, analyze(roof, after), tuple((k, new) for k in members))


def _merged(roof: Roof, members: Sequence[Kernel],
            fused_name: str | None = None) -> tuple[Kernel, str]:
    """The fused kernel, untimed, and the words saying how its bytes were had."""
    nbytes, bytes_words = fused_bytes(members)
    flop = sum_counts(k.flop for k in members)
    meta: dict[str, object] = {"fused": [k.name for k in members]}
    # the members' batch when they all agree (or none says one): without it the fused
    # kernel read as batch 1, and whatif printed "batch 4 -> 1 ... 0.25x the tokens/s"
    # for a fusion of a train step's kernels (s27 v3-F5)
    batch = members[0].meta.get("batch")
    if batch is not None and all(k.meta.get("batch") == batch for k in members):
        meta["batch"] = batch
    return Kernel(name=fused_name or "+".join(k.name for k in members),
                  flop=flop, bytes=nbytes, calls=max(k.calls for k in members),
                  unit=_fused_unit(roof, members, flop),
                  provenance={"flop": "derived", "bytes": "derived"}, meta=meta), bytes_words


def _fused_unit(roof: Roof, members: Sequence[Kernel], flop: dict[str, float]) -> str | None:
    """The fused kernel's unit: the one most of its dominant precision's FLOP ran on in
    the members, each member at the unit every verb holds it to (held_unit: its own, else
    vector for a known non-matrix kind on a roof with tensor units), its parts on
    ceiling._unit_of_part's units. Read at their own units alone, two fp16 n-body kernels
    that give none (meta op nbody, 400 + 200 us on an A100) fused into a kernel whose name
    says no kind, timed at the fp16 tensor ceiling (312 TFLOP/s): 152.5 us; held to fp16
    vector (78 TFLOP/s), as each member is, 595 us (s31). A Kernel has one
    unit, given to its dominant precision (its other precisions run on vector under a
    tensor unit), so the unit must be that of the work that dominates: SwiGLU's act_mul
    (vector, 17 GFLOP) fused into down_proj (tensor, 47 TFLOP) took the first member's
    vector and timed the GEMM at the bf16 vector ceiling, 58 ms -> 353 ms (s27 v3-F2).
    Ties go to the first member in file order."""
    if not flop:
        return next((k.unit for k in members if k.unit), None)
    dominant = max(flop.items(), key=lambda kv: kv[1])[0]
    by_unit: dict[str | None, float] = {}
    for k in members:
        if k.flop.get(dominant, 0.0) > 0:
            unit = _unit_of_part(dominant, k.precision, held_unit(roof, k))
            by_unit[unit] = by_unit.get(unit, 0.0) + k.flop[dominant]
    return max(by_unit.items(), key=lambda kv: kv[1])[0]


def _measured(members: Sequence[Kernel]) -> float:
    return sum(k.seconds or 0.0 for k in members)


# sub-fusions priced one by one up to this many members (2^10 - 11 = 1013 of them, ~0.1 s
# on a busy 2-core box; 12 took 0.4 s); above it, the pairs and the sets of all but one, a
# bound over those only (2^n of them would not end)
EVERY_SUBSET_UP_TO = 10


def _fewer_bound(roof: Roof, before, members: Sequence[Kernel]) -> tuple[list[str], float]:
    """The slowest prediction of a fusion of fewer of the same (timed) members, and its
    names; ([], 0) for two members. Each is priced as fuse prices the whole (the members'
    split, the combined efficiency, the cap at their measured time), so the whole reads at
    least the slowest of them: the combined efficiency is a mean, which a fast member
    raises, while the fused floor only grows with members (whatif_fuse_bytes)."""
    n = len(members)
    if n < 3:
        return [], 0.0
    if n <= EVERY_SUBSET_UP_TO:
        subs = (c for r in range(2, n) for c in combinations(members, r))
    else:
        subs = chain(combinations(members, 2), combinations(members, n - 1))
    best: tuple[list[str], float] = ([], 0.0)
    for sub in subs:
        merged, _ = _merged(roof, sub)
        eff, launch = _fused_split(before, sub)
        work, _ = _floor(roof, merged)
        seconds = min(_measured(sub), launch + work / eff)
        if seconds > best[1]:
            best = ([k.name for k in sub], seconds)
    return best


def _fused_split(before, members: Sequence[Kernel]) -> tuple[float, float]:
    """(combined efficiency, launch time held) of timed fusion members. Each member's time
    holds the launches retime_launch reads it to hold (launch_held_s), the rest is work;
    the efficiency is their work floors over their work, capped at 1 (below).
    The fused kernel launches as often as its most-called members and holds the most launch
    time any member holds: members timed well past their calls x the launch floor show that
    the file's times hold their launches, so one read as holding a little (its time near
    half of that, where the band starts) does not take them away (s27 v2-F1: until then
    the least of the most-called members', so a 260 us member of 100 calls cut a fusion of
    two 1 ms members from 500 us of launches to 10 us). A GPU-side member's 10000 calls
    add none, a 1-call partner's held launch stays (review r8 F4). Held launches rise with
    each member's time, so the prediction has no switch."""
    prim = _primary(before)
    held = [launch_held_s(prim[k.name], k) for k in members]
    work = sum(k.seconds for k in members) - sum(held)
    floor = sum(prim[k.name].floor_s for k in members)
    # capped at 1, unlike held_work_ratio: members above their roof in a chain are so
    # mostly by re-reading intermediates from cache, the very traffic fusing removes
    # (test_advice_r5's c1 chain: 1.60x above, fused measured 1.46x; keeping the ratio
    # said 2.00x, the cap 1.49x)
    eff = min(1.0, floor / work) if work > 0 else 1.0
    return eff, max(held)


def move_hardware(roof: Roof, kernels: Sequence[Kernel], other: Roof,
                  judge: Roof | None = None, change=None) -> WhatIf:
    """The same kernels on other hardware, each at the efficiency it reaches now of `roof`
    (the efficiency basis); judge: the roof they are judged on, where a whole step's gap
    above its floor is taken (retime.step_gap), when it is not `roof`. change: what a
    kernel becomes there, where not itself (a training step's communication row moves
    onto the other device's own link: cli/whatif_train.py). A package of several devices
    to software (the catalog's MI250X) is one die on either side, as `rooflab whatif --on
    MI250X --hardware ...` takes it (dies.kernel_roof: a kernel runs on one die; a
    notebook's load_roof("MI250X") moved onto the package's figures, 2x the CLI, s35 O),
    noted in that side's Analysis."""
    packages = (roof, other)
    roof, other = kernel_roof(roof)[0], kernel_roof(other)[0]
    judge = None if judge is None else kernel_roof(judge)[0]
    inside = ("" if roof.overhead_s is not None or other.overhead_s is None else
              f"; {roof.name} has no launch floor, so its measured times include their "
              f"launches and {other.name}'s launch floor bounds each prediction from below "
              f"rather than adding to it")
    w = _apply(roof, kernels, change or (lambda k: k), None, f"on {other.name}",
               f"each kernel reaches the same fraction of {other.name}'s roof as it "
               f"reaches of {roof.name}'s{inside}", new_roof=other, judge=judge)
    return _die_noted(w, packages)


def _die_noted(w: WhatIf, packages: tuple[Roof, Roof]) -> WhatIf:
    """`w` with the die note (dies.die_words, the CLI's words) on each side move_hardware
    split from a package here; a die given already split (the CLI's) is noted where it
    was split (cli/inputs_roofs), not twice."""
    from dataclasses import replace

    sides = {}
    for field, given in zip(("before", "after"), packages, strict=True):
        a = getattr(w, field)
        said = die_words(a.roof) if a.roof is not given else ""
        if said and said not in a.notes:
            sides[field] = replace(a, notes=(said, *a.notes))
    return replace(w, **sides) if sides else w
