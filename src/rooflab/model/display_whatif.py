"""Short text for a notebook cell's value: a what-if (model/retime.py's WhatIf).

As model/display.py does for a Kernel, an Analysis and an LLM estimate: IPython shows
`_repr_pretty_`, and without it a frozen WhatIf printed both Analyses, every kernel twice
with its roof. This says what `rooflab whatif` says: the change, each moved kernel's time
before -> after with its speed-up (a range for a whole step whose gap may be held, "at
least" for a lower bound), the total, and the assumption the prediction rests on. Pure
function of the value: no IPython import.
"""

from __future__ import annotations

from ..units import fmt_ai, fmt_seconds, fmt_times
from .dies import kind_words
from .display import TOP_POINTS

# the assumption is one long sentence (a batch on an unsplit decode point: ~1 kB); a cell
# shows its head, the rest is in .assumption
ASSUMPTION_CHARS = 480


def _span(fast: float, slow: float | None, least: bool) -> str:
    """'3.75 ms-8.89 ms' (a range), 'at least 8.18 ms' (a lower bound) or '15 ms'."""
    if slow is not None:
        lo, hi = sorted((fast, slow))
        return f"{fmt_seconds(lo)}-{fmt_seconds(hi)}"
    return ("at least " if least else "") + fmt_seconds(fast)


def _gain(before: float, fast: float, slow: float | None, least: bool) -> str:
    """'1.69x-4.00x', 'at most 1.83x' or '4.00x' (the speed-up of _span's times)."""
    if slow is not None:
        lo, hi = sorted((before / fast, before / slow))
        return f"{fmt_times(lo)}-{fmt_times(hi)}"
    return ("at most " if least else "") + fmt_times(before / fast)


def _move_line(w, old, new, ai_before, ai_after) -> str:
    """'decode b=1: 15 ms -> 3.75 ms-8.89 ms (1.69x-4.00x), AI 1 -> 4'; untimed: its
    floors (derived), as the CLI's table shows them."""
    from .dtype_names import move_label
    from .retime import gap_held, lower_bound
    from .work_floor import floor_s

    ai = f"AI {fmt_ai(ai_before)} -> {fmt_ai(ai_after)}"
    name = move_label(old.name, new.name)   # a name marked for its new dtype: shown once
    if old.seconds is None or new.seconds is None:
        fb, fa = floor_s(w.before.roof, old), floor_s(w.after.roof, new)
        if not (fb and fa):
            return f"{name}: not timed; {ai}"
        return (f"{name}: floor {fmt_seconds(fb)} -> {fmt_seconds(fa)} ({fmt_times(fb / fa)}, "
                f"derived: not timed), {ai}")
    slow, least = gap_held(new), lower_bound(new)
    return (f"{name}: {fmt_seconds(old.seconds)} -> {_span(new.seconds, slow, least)} "
            f"({_gain(old.seconds, new.seconds, slow, least)}), {ai}")


def _why_lines(w) -> list[str]:
    """Why a time is a range or a bound, once per what-if (the assumption's head may not
    reach it): a whole step's gap above its floor (retime.step_gap) scaled with the work or
    held; a decode point past the ridge at its compute floor (whatif_batch)."""
    from .retime import gap_held, lower_bound

    out = []
    gaps = [new.meta.get("gap_held_s") for _, new in w.moves if gap_held(new) is not None]
    if gaps:
        out.append(f"  range: a whole step's gap above its floor ({fmt_seconds(gaps[0])}"
                   f"{' for the first' if len(gaps) > 1 else ''}) scaled with the work, "
                   f"or held fixed (seed 004 Q6)")
    if any(lower_bound(new) for _, new in w.moves):
        out.append("  at least: past the ridge a decode point without a KV split gets its "
                   "compute floor, batch x FLOP / peak; the KV cache left out can only add "
                   "to it")
    return out


def whatif_text(w, top: int = TOP_POINTS) -> str:
    """A WhatIf in a few lines: the change and the roofs, the total before -> after with
    its speed-up (or range, or bound), the moved kernels longest first (at most `top`),
    and the assumption's head."""
    from .retime import lower_bound

    before, after = w.before.roof, w.after.roof
    where = (f"'{before.name}' ({kind_words(before)})" if before == after else
             f"'{before.name}' ({kind_words(before)}) -> '{after.name}' ({kind_words(after)})")
    lines = [f"WhatIf: {w.label} on {where}: {len(w.moves)} kernel(s) moved"]
    tb, ta = w.total_before_s, w.total_after_s
    if tb and ta:
        least = any(lower_bound(new) for _, new in w.moves)
        slow = w.total_after_gap_held_s
        lines.append(f"  total {fmt_seconds(tb)} -> {_span(ta, slow, least)} "
                     f"({_gain(tb, ta, slow, least)})")
    pairs = dict(zip((id(old) for old, _ in w.moves), move_points(w), strict=True))
    order = sorted(w.moves, key=lambda m: -(m[0].seconds or 0.0))
    lines += [f"  {_move_line(w, old, new, *(p.ai if p else None for p in pairs[id(old)]))}"
              for old, new in order[:top]]
    if len(order) > top:
        lines.append(f"  ... {len(order) - top} more moved kernel(s) (.moves)")
    lines += _why_lines(w)
    said = w.assumption
    if len(said) > ASSUMPTION_CHARS:
        said = said[:ASSUMPTION_CHARS].rsplit(" ", 1)[0] + " ... (.assumption)"
    lines.append(f"  assumes: {said}")
    lines.append("  (pairs in .moves; .before and .after are Analyses; JSON: "
                 "rooflab.model.whatif.describe(w))")
    return "\n".join(lines)


def move_points(w) -> list[tuple[object, object]]:
    """(binding point before, binding point after) of each of w.moves, in order, by the
    kernel itself, not its name: three convs of one name (a depthwise, a dense and a
    stride-2 one) each read their own AI and bound (review s28 R3 F8: all three read the
    last one's, 907 -> 1814, compute). None where a kernel has no point. Each side's
    binding points are looked up once (s32: once per move, 10,000 kernels took 50 s of
    the table's CPU, 200 million id() calls)."""
    sides = [(a, {id(p) for p in a.primary()}) for a in (w.before, w.after)]

    def binding(side, kernel):
        analysis, primary = sides[side]
        return next((p for p in analysis.points_of(kernel) if id(p) in primary), None)

    return [(binding(0, old), binding(1, new)) for old, new in w.moves]
