"""Which roof a what-if's efficiencies are taken against and which roof they are applied to
(split from model/retime.py): like for like where the --on and --hardware roofs hold a pair
of one kind (measured, derived, nominal), else the judging roofs with a line saying the
mix (a measured share carried onto datasheet peaks is optimistic). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from .ceiling import Roof
from .kernel import Kernel
from .real_traffic_basis import real_traffic_line
from .roof_schema import judged_kind


def efficiency_basis(on_roofs: Sequence[Roof], targets: Roof | Sequence[Roof],
                     kernels: Sequence[Kernel] = ()) -> tuple[Roof, Roof, str]:
    """The roof each kernel's efficiency is taken against, the target roof it is applied
    to, and a line saying which. on_roofs: what --on holds, the judging roof first (a
    profile: measured, then nominal); targets: what --hardware holds, in the same order.
    A fraction of a *measured* roof carried onto a *datasheet* roof assumes the target
    reaches its datasheet peaks (review 12a #5: matmul 4096 at 100 % of a T4's measured 50
    TFLOP/s is 77 % of its datasheet 65; on an H100's datasheet 989 that is 185 us, not the
    144 us at 100 %), and a datasheet fraction carried onto a measured roof is pessimistic
    by the probe's derating (review 13v F-M: catalog T4 -> the T4's own profile read 0.83x).
    So the first pair of one kind is used, the target's judging roof first, where the --on
    roof covers every kernel's memory levels (and an alternative target roof does too):
    like for like; otherwise the judging roofs, and the line says the mix. The kind is the
    one the numbers judge by (roof_schema.judged_kind): a catalog roof ncu's recorded clock
    scaled is "derived", not the datasheet's "nominal" (s27 v2-F8)."""
    targets = (targets,) if isinstance(targets, Roof) else tuple(targets)
    judge, first = on_roofs[0], targets[0]

    def covers(r: Roof) -> bool:
        return bool(r.compute and r.memory) and all(
            not k.bytes or any(r.find_memory(lv) is not None for lv in k.bytes)
            for k in kernels)

    kind = judged_kind    # ncu's clock-scaled catalog roof is "derived" (s27 v2-F8)
    pair = next(((r, t) for t in targets if t is first or covers(t)
                 for r in on_roofs if _like(r) == _like(t) and covers(r)), None)
    basis, target = pair or (judge, first)
    where = f"efficiency taken against {basis.name} ({_like(basis, said=True)})"
    onto = f"applied to {target.name} ({_like(target, said=True)})"
    if _like(basis) == _like(target):
        why = ""
        if basis is not judge:
            why += f", the --on profile's {kind(basis)} roof rather than its {kind(judge)} one"
        if target is not first:
            why += (f", the --hardware profile's {kind(target)} roof rather than its "
                    f"{kind(first)} one")
        return basis, target, f"{where}{why}, {onto}: like for like"
    if kind(basis) == "measured" and kind(target) == "nominal":
        return basis, target, (
            f"{where}, {onto}: not like for like, the "
            f"prediction assumes {target.name} reaches the same share of its datasheet "
            f"peaks as of {basis.name}'s measured ones (optimistic; a profile holding both "
            f"roofs gives like for like)" + real_traffic_line(basis, target))
    if kind(basis) == "derived" and kind(target) == "nominal":
        # the kernels were judged at the SM clock ncu recorded (profile_checks.
        # at_recorded_clock), the target at its listed (boost) clock
        return basis, target, (
            f"{where}, {onto}: not like for like, the efficiency is a share of peaks at "
            f"the SM clock ncu recorded, carried onto {target.name}'s listed peaks (its "
            f"boost clock){_at_boost(basis)}")
    return basis, target, f"{where}, {onto}: not like for like"


def _like(roof: Roof, said: bool = False) -> str:
    """The kind efficiency_basis pairs roofs by (said: as its line words it): judged_kind,
    but one die of a catalog package (dies.one_die) is the datasheet's figures / dies, like
    for like with another datasheet (an MI250X die onto an H100 read "not like for like
    ... the SM clock ncu recorded", no ncu at all; s35 A); a die ncu's clock scaled not."""
    from .dies import is_one_die, kind_words
    from .roof_schema import SCALED

    if roof.kind == "nominal" and is_one_die(roof) \
            and not any(n.startswith(SCALED) for n in roof.notes):
        return kind_words(roof) if said else "nominal"
    return judged_kind(roof)


# the name profile_import.peaks_roof gives the roof of the peaks an .ncu-rep recorded
_PEAKS = " (profiler peaks)"


def _at_boost(basis: Roof) -> str:
    """'; --on NAME@boost ...' naming an --on that takes the efficiency against listed
    peaks: the catalog roof scaled to ncu's clock by its own name, an .ncu-rep's recorded
    peaks by the device it names ('NVIDIA GeForce RTX 4060 Laptop GPU (profiler
    peaks)@boost' was no --on at all; s33 C); '' for any other derived roof."""
    from .roof_schema import SCALED

    if any(n.startswith(SCALED) for n in basis.notes):
        return f"; --on '{basis.name}@boost' takes it against the listed peaks too"
    if basis.name.endswith(_PEAKS) and len(basis.name) > len(_PEAKS):
        device = basis.name.removesuffix(_PEAKS)
        return (f"; --on '{device}@boost' (its catalog entry) takes it against the listed "
                f"peaks too")
    return ""
