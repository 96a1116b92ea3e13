"""The floor lines under `rooflab whatif`'s table: the work floor and the floor with
launches before -> after, with their ratio and why the two ratios differ, the fused
kernels' own floors beside the measured time they took, and the words naming which kernels
each line counts when --only changed some. Split from cli/whatif_table.py."""

from __future__ import annotations

from ..model.choose import WITH_LAUNCHES
from ..units import fmt_times


def scopes(result, steps: set[int]) -> tuple[str, str]:
    """The words naming each line's kernels when --only changed some of them: the total
    counts every kernel (the others at their own time), the work floors only the changed
    ones (review 16a L5: "total 1.36 s -> 1.11 s" over both kernels beside "work floor
    185 ms -> 123 ms" over one, unlabelled). ('', '') where every kernel moved or a fusion
    puts the floors on the whole step too."""
    from ..model.choose import split_whole_steps
    from ..model.whatif_floors import fused

    work = split_whole_steps(result.before.kernels)[0]
    moved = list(dict.fromkeys(old.name for old, _ in result.moves if id(old) not in steps))
    if fused(result) or not moved or len(moved) >= len(work):
        return "", ""
    names = ", ".join(moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3 else "")
    rest = len(work) - len(moved)
    return (f" (all {len(work)} kernels, {rest} of them unchanged)",
            f" ({names} only)")


def floor_lines_of(result, only: str = "") -> list[str]:
    """The work floor before -> after with its ratio (the headline, as `rooflab llm`'s TPOT
    floor), and the same with launches (as llm and choose give it): empty where a floor is
    unknown. only: the words naming the changed kernels when --only left others alone
    (scopes), so the floors do not read as the total's scope."""
    from ..model.whatif_floors import fused, moved_floors, total_floors
    from ..units import fmt_seconds

    floors = total_floors(result)
    whole = fused(result)
    scope = " (whole step)" if whole else only
    out = []
    for key, label in (("work", "work floor"), ("with_launches", WITH_LAUNCHES)):
        fb, fa = floors[key]
        if fb and fa:
            out.append(f"{label}{scope}: {fmt_seconds(fb)} -> {fmt_seconds(fa)} "
                       f"({fmt_times(fb / fa)})")
    (wb, wa), (lb, la) = floors["work"], floors["with_launches"]
    if len(out) == 2 and lb / la < 0.995 * wb / wa:
        out[1] += ("; the launches do not shrink with the work, so this ratio is smaller "
                   "(CUDA graphs or fused kernels remove them)")
    elif len(out) == 2 and lb / la > 1.005 * wb / wa:
        # a step that grows (--batch 8: 3.39 -> 7.27 ms beside 1.47 -> 5.41 ms) keeps its
        # launches: 0.47x beside 0.27x is right, but read as a mistake (s35 L)
        out[1] += ("; one step each: its launches do not grow with the work, so it slows "
                   "less than the work floor")
    if whole and out:
        # the fused kernels' own change is a detail: on the step it is diluted by the rest
        (mb, ma) = moved_floors(result)["with_launches"]
        if mb and ma:
            out.append(fused_alone(result, mb, ma))
    return out


def fused_alone(result, mb: float, ma: float) -> str:
    """The fused kernels' own floors before -> after and, where the members were timed,
    what they took -> the prediction with the time saved: a floor above the members'
    measured time (they beat a low roof) gave "17.5 ms -> 6.55 ms (2.67x; saved 10.9 ms)"
    of kernels that took 13 ms (review r5 F2), so the ratio and the saving are the
    measured ones there."""
    from ..model.whatif_floors import moved_times
    from ..units import fmt_seconds

    line = (f"the fused kernels alone, {WITH_LAUNCHES}: {fmt_seconds(mb)} -> "
            f"{fmt_seconds(ma)}")
    # the same totals as --json's moved.before_s / after_s
    times = moved_times(result)
    tb, ta = times["before_s"], times["after_s"]
    if tb is None or ta is None:
        return line + f" ({fmt_times(mb / ma)}; saved {fmt_seconds(mb - ma)})"
    if tb >= mb:
        line += f" ({fmt_times(mb / ma)})"
    else:
        line += f" (the members took {fmt_seconds(tb)}, under their floor)"
    return line + (f"; measured {fmt_seconds(tb)} -> {fmt_seconds(ta)} predicted "
                   f"({fmt_times(tb / ta)}; saved {fmt_seconds(tb - ta)})")
