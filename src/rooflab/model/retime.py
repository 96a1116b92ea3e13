"""Retiming: predict a changed kernel's time on a roof, the machinery every what-if shares.

A what-if (model/whatif.py) builds new Kernels from old ones under one stated assumption; this
module predicts their time on the (new) roof by keeping what the model cannot know constant:
the fraction of the roof the kernel's work reaches now. With `e` that efficiency and `L` the
launch floor (calls x overhead_s) times the share of it the old time held (retime_launch:
the split rises smoothly across calls x the floor, and a predicted kernel carries its share,
so the same launch time the efficiency took out comes back, and comes back again),

    new seconds = L_new + max(FLOP_new / P_new, bytes_new / B_new) / e_old

(see model/advice.py), with e_old not capped at 1 (retime_launch.held_work_ratio): a kernel
timed faster than its roof allows keeps its measured-to-floor ratio, so an identity change
predicts 1.00x.
A kernel without a measured time moves without a time. `WhatIf` holds the kernels before
and after; `describe` is its JSON shape. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from ..errors import InputError
from .advice_core import efficiency_of
from .analysis import Analysis, Point, analyze
from .ceiling import Roof
from .display import pretty
from .display_whatif import whatif_text
from .kernel import TIMING_META, Kernel
from .opkind import is_whole_step
from .real_traffic_basis import real_traffic_basis
from .retime_launch import (
    LAUNCH_RANGE_META,
    LAUNCH_SHARE_META,
    band_readings,
    held_work_ratio,
    launch_share,
    share_written,
)
from .sanity_ceilings import applicable_launch_s
from .work_floor import launch_plus, work_floor, work_floor_or_none

# What a whole decode step launches, for the words asking for its `calls`: ~14 kernels per
# Llama layer (workloads/llm/kernels.py: 14 x 22 + 3 = 311 for TinyLlama; seed 004 counts
# 15-25 per layer, eager PyTorch more).
STEP_CALLS_HINT = ("a decode step launches ~14 kernels per layer: set the point's `calls` "
                   "(14 x layers + 3, e.g. 311 for TinyLlama's 22 layers) or use "
                   "`rooflab llm --tpot-ms`")


def one_launch_step(kernel: Kernel) -> bool:
    """Whether a kernel is a whole step timed as one point (opkind.is_whole_step: decode,
    prefill, TPOT, 'generate token', meta whole_step) with one launch assumed (`calls` 1,
    absent). Its time then
    holds dozens of launches and host-side gaps the roof's launch floor does not count
    (seed 004: "点到斜线的垂直距离,就是 overhead 加 kernel 效率损失"), so neither "launch
    overhead is negligible" nor a gap that shrinks with its bytes can be said of it
    (review 18a F2). `rooflab llm --tpot-ms` gives its step its launch count."""
    return kernel.calls == 1 and is_whole_step(kernel)


def held_gap_s(p: Point) -> float | None:
    """A timed point's gap above its roof with the launch floor taken out: the work's time
    minus its work floor (efficiency_of), what a whole step's 'gap held fixed' end keeps
    (seed 004 Q6: quantization moves the point's AI, not the gap below the slope); None
    untimed."""
    if p.seconds is None:
        return None
    return max(0.0, efficiency_of(p).work_s - p.floor_s)


@dataclass(frozen=True)
class WhatIf:
    """The kernels before and after one change, on their roofs, with the pairs that moved."""

    label: str
    assumption: str
    before: Analysis
    after: Analysis
    moves: tuple[tuple[Kernel, Kernel], ...]
    # the roof each move was predicted on, where not after.roof (--precision capped per old
    # precision: one after-roof cannot hold two caps of one ceiling); () for all on it
    move_roofs: tuple[Roof, ...] = ()

    # a notebook shows the change, before -> after and the assumption, not both Analyses
    # (model/display_whatif.py)
    _repr_pretty_ = pretty(whatif_text)

    @property
    def total_before_s(self) -> float | None:
        return _total(self.before.kernels)

    @property
    def total_after_s(self) -> float | None:
        return _total(self.after.kernels)

    @property
    def speedup(self) -> float | None:
        b, a = self.total_before_s, self.total_after_s
        return b / a if b and a else None

    @property
    def total_after_gap_held_s(self) -> float | None:
        """total_after_s with each whole step's gap held fixed (gap_held): the other end
        of the total's range (the slow one where the change removes work, the fast one
        where it adds some); None where no kernel has such a range."""
        if self.total_after_s is None or not any(gap_held(k) for k in self.after.kernels):
            return None
        return float(sum(gap_held(k) or k.seconds for k in self.after.kernels))

    @cached_property
    def work_floors(self) -> tuple[tuple[float | None, float | None], ...]:
        """(work floor before, after) of each move, each on its own roof (work_floor; None
        where the roof has none of its levels), derived. Once per what-if: floors, the
        JSON's and the table's floors (whatif_floors.move_floors) all read it, where each
        worked every kernel's out again (s24: 13 analyses per kernel, 20 s at 10k)."""
        peaks: dict = {}   # each roof's compute ceilings, found once (work_floor)
        return tuple((work_floor_or_none(self.before.roof, old, peaks),
                       work_floor_or_none(self.roof_after(i), new, peaks))
                      for i, (old, new) in enumerate(self.moves))

    @cached_property
    def floors(self) -> tuple[tuple[float | None, float | None], ...]:
        """(floor before, floor after) of each move: its least time at the roof (derived)."""
        return tuple((launch_plus(self.before.roof, old, wb),
                      launch_plus(self.roof_after(i), new, wa))
                     for i, ((old, new), (wb, wa))
                     in enumerate(zip(self.moves, self.work_floors, strict=True)))

    @cached_property
    def before_work_floors(self) -> tuple[float | None, ...]:
        """Every kernel's work floor on the before roof, in before.kernels' order (None as
        work_floors): a fusion's floors on the whole step count the kernels it leaves alone
        (whatif_floors.total_floors), asked by the JSON and the table alike."""
        peaks: dict = {}
        return tuple(work_floor_or_none(self.before.roof, k, peaks) for k in self.before.kernels)

    def roof_after(self, i: int) -> Roof:
        """The roof move i was predicted on (move_roofs, else after.roof)."""
        return self.move_roofs[i] if self.move_roofs else self.after.roof

    @cached_property
    def total_floors(self) -> tuple[float | None, float | None]:
        """Summed floors of the moved kernels, each kernel once (fused members share one
        new kernel; a whole measured step beside its own kernels is not work again);
        None where any floor is unknown."""
        from .choose import split_whole_steps

        work = {id(k) for k in split_whole_steps([old for old, _ in self.moves])[0]}
        before: dict[int, float | None] = {}
        after: dict[int, float | None] = {}
        for (old, new), (fb, fa) in zip(self.moves, self.floors, strict=True):
            if id(old) in work:
                before[id(old)], after[id(new)] = fb, fa
        return tuple(None if not v or None in v.values() else float(sum(v.values()))
                     for v in (before, after))


def _total(kernels: Iterable[Kernel]) -> float | None:
    times = [k.seconds for k in kernels]
    return None if not times or any(t is None for t in times) else float(sum(times))


def _primary(analysis: Analysis) -> Mapping[str, Point]:
    return analysis.primary_by_name()


def _floor(roof: Roof, k: Kernel, peaks: dict | None = None) -> tuple[float, float]:
    """(work floor, launch floor) of a kernel on a roof, at its binding level (work_floor:
    off the roof's ceilings, not one Analysis per kernel; peaks: its memo)."""
    return work_floor(roof, k, peaks), _floor_launch(roof, k)


def _floor_launch(roof: Roof, k: Kernel) -> float:
    return (roof.overhead_s or 0.0) * k.calls


# Meta of a *measured* time (measuring.timed_kernel, bench/check.check_floors): it
# describes the old kernel's samples, so a predicted kernel must not carry it (a script
# reading `whatif -o w.json` would see a measured median on a derived time).
# kernel.TIMING_META less the raw samples, the plan and the warm-up calls, one list.
MEASURED_META = TIMING_META - {"raw_samples", "plan", "warmup_calls"}


# The meta a whole step's predicted kernel carries for the slow end of its range
# (retime's gap_s): the gap held and the time with it held.
GAP_HELD_META = ("gap_held_s", "seconds_gap_held")
# The meta of a predicted kernel whose `seconds` is a lower bound, not a prediction
# (whatif_batch: an unsplit decode point past the ridge, timed at its compute floor).
LOWER_BOUND = "seconds_lower_bound"


def lower_bound(k: Kernel) -> bool:
    """Whether a predicted kernel's time is a lower bound ("at least"), not a prediction."""
    return k.meta.get(LOWER_BOUND) is True


def retime(new: Kernel, new_roof: Roof, efficiency: float | None, label: str,
           launch_inside: bool = False, gap_s: float | None = None,
           held_scale: float = 1.0,
           launch_calls: int | None = None, launch_share: float = 1.0,
           peaks: dict | None = None, readings: tuple = ()) -> Kernel:
    """`new` with its time predicted on `new_roof` at the given work efficiency; the old
    measurement's meta (MEASURED_META) is dropped, identity meta (op, shape, ...) kept.
    launch_inside: the efficiency came from a roof with no launch floor, so the old time
    already holds its launches; the new launch floor is then a floor under the predicted
    time, not a term added to it (which would count the launches twice).
    gap_s: for a whole step (opkind.is_whole_step), its old gap above the
    roof (step_gap); the time with that gap held fixed, launches + new work floor x
    held_scale + gap, is kept as meta seconds_gap_held, the other end of a range with
    `seconds` (the gap scaled with the work; the fast end only where work shrinks).
    held_scale: step_gap's judging floor over the basis floor (1 on one roof), so the held
    end's work is at the rate the step reaches on its judging roof, carried like for like.
    launch_calls: the calls
    whose launches the predicted time holds, where not new.calls. launch_share: the
    fraction of calls x the launch floor the old time held (retime_launch's split; a
    fusion's, whatif._fused_split), so the predicted time adds back the launch share that
    the efficiency took out, no more; and readings' shares are of the same calls x the
    floor. peaks: work_floor's memo of compute
    ceilings, one dict for all the kernels a what-if retimes. readings: retime_launch's
    band_readings, the two ends (work ratio, launch share) of an old time near calls x
    its launch floor, priced into meta seconds_launch_range."""
    meta = {**{k: v for k, v in new.meta.items()
               if k not in MEASURED_META and k not in GAP_HELD_META and k != LOWER_BOUND
               and k not in (LAUNCH_SHARE_META, LAUNCH_RANGE_META)},
            "whatif": label}
    if efficiency is None:
        # no time to predict: no 'seconds' provenance either (it said 'measured')
        prov = {k: v for k, v in new.provenance.items() if k != "seconds"}
        return new.with_(seconds=None, samples=(), meta=meta, provenance=prov)
    work, launch = _floor(new_roof, new, peaks)
    if launch_calls is not None:
        launch = (new_roof.overhead_s or 0.0) * launch_calls
    if readings and not launch_inside:
        meta[LAUNCH_RANGE_META] = sorted(launch * share + work / eff for eff, share in readings)
    launch *= launch_share
    # the share of its launch floor the predicted time holds, read back when it is retimed
    # again (retime_launch: a round trip returns the measured time); none where the target's
    # floor is only a floor under the time
    share = None if launch_inside else share_written(launch, _floor_launch(new_roof, new))
    if share is not None:
        meta[LAUNCH_SHARE_META] = share
    prov = {**new.provenance, "seconds": "derived"}
    seconds = max(launch, work / efficiency) if launch_inside else launch + work / efficiency
    if gap_s is not None:
        held_work = work * held_scale + gap_s
        held = max(launch, held_work) if launch_inside else launch + held_work
        meta.update(gap_held_s=gap_s, seconds_gap_held=held)
    return new.with_(seconds=seconds, samples=(), meta=meta, provenance=prov)


def gap_held(k: Kernel) -> float | None:
    """A predicted whole step's time with its old gap held fixed (retime's gap_s), where it
    differs from its predicted time; None otherwise."""
    held = k.meta.get("seconds_gap_held")
    if not isinstance(held, (int, float)) or k.seconds is None:
        return None
    return float(held) if abs(held - k.seconds) > 1e-3 * k.seconds else None


def launch_left_out(before: Analysis, k: Kernel) -> bool:
    """Whether the kernel's measured time is below calls x its roof's launch floor, so the
    floor is left out of its judgement (sanity_ceilings.applicable_launch_s, as report
    says: below_launch_floor). Its prediction leaves the floor out too: judged the same
    way before and after, 10000 calls timed GPU-side at 5 ms read 5 ms -> 55 ms, an 11x
    "slowdown" from fp8 that was only the 50 ms of launches added to one side (review r1
    F6)."""
    p = _primary(before).get(k.name)
    return (p is not None and p.seconds is not None and bool(p.overhead_floor_s)
            and applicable_launch_s(p) == 0.0)


def _efficiency(before: Analysis, k: Kernel) -> float | None:
    """The work ratio a what-if keeps (retime_launch.held_work_ratio, uncapped), of the
    time less the launches retime_launch reads it to hold, the split every what-if but a
    fusion takes."""
    p = _primary(before).get(k.name)
    if p is None or p.seconds is None:
        return None
    return held_work_ratio(p, k)


def step_gap(judged: Analysis, rated: Analysis, k: Kernel) -> tuple[float, float] | None:
    """A whole step's gap above its floor, the one definition every what-if holds fixed:
    its time less its launches and its work floor on the roof it is judged on (held_gap_s
    of its point there: the --on profile's judging roof, measured where it has one), with
    that judging floor over its floor on the efficiency basis `rated` (1 when they are one
    roof). --hardware takes efficiencies against a profile's nominal roof (like for like
    with a datasheet target), and took the gap there too: seed 004's 15 ms step held 15 -
    0.005 - 2.2 GB / 320 GB/s = 8.12 ms on an H200 but 15 - 0.005 - 2.2 GB / 270 GB/s =
    6.85 ms under --quantize. None for any other kernel. With its `calls` given the
    launches are split off and the rest of the gap (host time, kernel efficiency) still need
    not move with the bytes, so the range stays (review 19a N1: `calls: 311` dropped seed
    004's int4 step to one optimistic 3.05x)."""
    if not is_whole_step(k):
        return None
    q = _primary(rated).get(k.name)
    p = _primary(judged).get(k.name) or q    # a judging roof without its level: the basis
    gap = held_gap_s(p) if p is not None else None
    if gap is None or q is None or not q.floor_s:
        return None
    return gap, p.floor_s / q.floor_s


def _select(kernels: Sequence[Kernel], names: Iterable[str] | None) -> set[str]:
    have = [k.name for k in kernels]
    if names is None:
        return set(have)
    wanted = set(names)
    missing = sorted(wanted - set(have))
    if missing:
        raise InputError(f"no kernel named {', '.join(repr(m) for m in missing)}; the kernels "
                         f"are: {', '.join(have)}")
    return wanted


def _apply(roof: Roof, kernels: Sequence[Kernel], change, names, label: str, assumption: str,
           new_roof: Roof | None = None, judge: Roof | None = None,
           roof_of=None) -> WhatIf:
    """judge: the roof the kernels are judged on, where a whole step's gap is measured
    (step_gap), when `roof` is only the basis of their efficiencies (--hardware).
    roof_of: the roof each (old) kernel is retimed on, where not the target (--precision's
    ceilings capped per old precision, whatif_precision)."""
    kernels = tuple(kernels)
    target = new_roof or roof
    before = analyze(roof, kernels)
    # onto a datasheet roof: efficiencies in its (real-traffic) units; the before state
    # shown stays the roof's own judgement (real_traffic_basis)
    units = real_traffic_basis(roof, target) if new_roof is not None else None
    rated = analyze(units, kernels) if units is not None else before
    chosen = _select(kernels, names)
    # a roof with no launch floor (rocprof-compute's roofline.csv) leaves the launches in
    # the measured times: the target's launch floor must not be added on top of them
    inside = roof.overhead_s is None and target.overhead_s is not None
    judged = analyze(judge, kernels) if judge is not None and judge != roof else before
    moves, after = [], []
    peaks: dict = {}   # the roofs' compute ceilings, found once (work_floor)
    for k in kernels:
        if k.name in chosen or new_roof is not None:
            gap, p = step_gap(judged, rated, k), _primary(rated).get(k.name)
            new = retime(change(k) if k.name in chosen else k,
                         roof_of(k) if roof_of is not None else target,
                         _efficiency(rated, k), label, launch_inside=inside,
                         gap_s=gap and gap[0], held_scale=gap[1] if gap else 1.0,
                         launch_share=launch_share(p, k), peaks=peaks,
                         readings=band_readings(p, k))
            moves.append((k, new))
            after.append(new)
        else:
            after.append(k)
    return WhatIf(label, assumption, before, analyze(target, after), tuple(moves))


def moves_document(w: WhatIf) -> Mapping[str, object]:
    """The what-if document's base (model/whatif_document.py, its home since review r8
    F5 made it longer)."""
    from .whatif_document import moves_document as document

    return document(w)
