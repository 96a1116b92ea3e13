"""rooflab whatif's terminal table and the lines under it: totals, ranges of whole steps,
floors, time per token (split from cli/whatif.py)."""

from __future__ import annotations

from ..model.choose import WITH_LAUNCHES
from ..report.term_text import cell
from ..units import fmt_times
from .row_cap import cap, more_line
from .whatif_floor_lines import floor_lines_of, scopes
from .whatif_llm import _scope


def _bound_cell(before, after) -> str:
    """The bound after the change, and the one before when it flipped (seed 000 §3.3: a
    kernel compute-bound in fp32 can be memory-bound in fp16)."""
    if after is None:
        return "-"
    if before is not None and before.bound != after.bound:
        return f"{after.bound} (was {before.bound})"
    return after.bound


def _moved(row) -> tuple[float, float]:
    """A row's weight in a cut table: the time the change saves (or costs), then the
    longer of its two times (untimed rows: their floors, or nothing)."""
    tb, ta = row[2], row[3]
    moved = abs(tb - ta) if tb is not None and ta is not None else 0.0
    return moved, max(tb or 0.0, ta or 0.0)


def _table(result, llm: dict | None = None):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ..model.choose import split_whole_steps
    from ..units import fmt_seconds

    # A whole measured step beside its own kernels (`rooflab llm --tpot-ms`) is not one
    # more kernel: it gets its own line under the table, and the totals leave it out.
    steps = {id(k) for k in split_whole_steps([old for old, _ in result.moves])[1]}
    rows, floored, step_lines = _rows(result, steps)
    every = bool(floored) and all(floored)
    heads = (("work floor before", "work floor after", "speed-up (work floors)") if every
             else ("time before", "time after", "speed-up"))
    # the label names a roof from a file: '[/] evil' was markup and crashed (s22 r1 F5)
    t = Table(title=f"What if: {cell(result.label)}", title_justify="left")
    for h in ("kernel", "AI before -> after", *heads, "bound after"):   # fold, no "…" (r3 F6)
        t.add_column(h, justify="left" if h in ("kernel", "bound after") else "right",
                     overflow="fold")
    held, low = _held(result), _lower_bounds(result)
    # past TERMINAL_ROWS the rows that move most, then the longest (review s23 r5 F6: a rich
    # row per kernel, 10k kernels >43 s of CPU; h2 F5: the 40 longest read 1.00x and hid
    # every kernel the what-if speeds up); --json and -o w.json keep every move
    capped = cap(rows, _moved)
    shown, left_out = capped.shown, capped.left_out
    for name, ai, tb, ta, sp, bound, floor in shown:
        mark = " floor" if floor and not every else ""
        other = held.get(name)
        least, most = ("at least ", "at most ") if name in low else ("", "")
        t.add_row(cell(name), ai, fmt_seconds(tb) + mark,
                  least + fmt_seconds(ta) + mark if other is None else _span(ta, other),
                  "-" if sp is None else f"{most}{fmt_times(sp)}{mark}" if other is None or not tb
                  else _span(tb / max(ta, other), tb / min(ta, other), "x"), bound)
    parts: list = [t]
    if left_out:
        parts.append(Text(more_line(capped, "kernels", "`--json` or -o w.json",
                                    less="moving less"), style="dim"))
    totals = None
    over_all, over_moved = scopes(result, steps)
    if result.speedup and not steps:
        totals = result.total_before_s, result.total_after_s
        slow_total = result.total_after_gap_held_s
        least, most = ("at least ", "at most ") if low else ("", "")
        parts.append(Text(
            f"total{over_all}: {fmt_seconds(result.total_before_s)} -> "
            + (f"{least}{fmt_seconds(result.total_after_s)} ({most}{fmt_times(result.speedup)})"
               if slow_total is None else
               f"{_span(result.total_after_s, slow_total)} ("
               + _span(result.total_before_s / max(result.total_after_s, slow_total),
                       result.total_before_s / min(result.total_after_s, slow_total), "x")
               + ")")))
    parts += [Text(line) for line in _held_lines(result) + _bound_lines(result)]
    measured = totals is not None   # the file's measured times, not the floors
    floor_lines = floor_lines_of(result, over_moved)
    if floor_lines and totals is None and every:
        from ..model.whatif_floors import total_floors

        totals = total_floors(result)["work"]
    parts += [Text(line) for line in floor_lines]
    from .whatif_train import comm_lines

    parts += [Text(line) for line in comm_lines(result)]   # a train --dp step's (s30)
    # per token: the kernels the batch moved only; under --only the rest of the file
    # makes no more tokens (review 12a #2: 19.2 ms / 64 mixed them in)
    line = _per_token_line(result, _moved_totals(result, steps) if measured else totals,
                           steps)
    if line and not measured and every:
        line = _on_floors(result, line)
    if line:
        parts.append(Text(line))
    parts += [Text(line) for line in step_lines]
    if any(floored) or floor_lines:
        parts.append(Text(f"work floor: max(FLOP / P, bytes / B) per kernel at 100 % of the "
                          f"roof, summed {_scope(llm)}; {WITH_LAUNCHES}: each "
                          f"kernel at least max(work floor, calls x launch floor), summed "
                          f"(the same in llm and choose); derived, lower bounds"
                          + ("; a row marked 'floor' has no measured time, so it shows its "
                             "work floor" if any(floored) and not every else ""),
                          style="dim"))
    parts.append(Text(f"assumes: {result.assumption}", style="dim"))
    # A ceiling the new roof lacks (fp8 math on an A100) falls back to another; say which.
    # one note per cause, its kernels listed, as choose says them (review r8 F8b: 15
    # "no fp8 ceiling" lines for tinyllama's 15 kernels)
    from ..model.display import grouped_notes

    # a set: a note per kernel on both sides (bf16 on a T4 -> fp8) was n x n
    said = set(result.before.notes)
    fresh = [n for n in result.after.notes if n not in said]
    parts += [Text(f"note: {n}", style="dim")
              for n in grouped_notes(fresh, (k.name for k in result.after.kernels))]
    return Group(*parts)


def _span(a: float, b: float, unit: str = "") -> str:
    """'3.75 ms-8.89 ms' (seconds) or '1.69x-4.00x' (unit 'x'), the smaller first."""
    from ..units import fmt_seconds

    lo, hi = sorted((a, b))
    return (f"{fmt_times(lo)}-{fmt_times(hi)}" if unit == "x"
            else f"{fmt_seconds(lo)}-{fmt_seconds(hi)}")


def _held(result) -> dict[str, float]:
    """{row name: time with the gap held fixed} for the whole steps with one launch assumed
    (model.retime.gap_held): their time after is a range, not the optimistic end alone."""
    from ..model.retime import gap_held

    return {_row_name(old, new): slow for old, new in result.moves
            if (slow := gap_held(new)) is not None}


def _lower_bounds(result) -> set[str]:
    """The rows whose time after is a lower bound (model.retime.lower_bound): an unsplit
    decode point batched past the ridge, at its compute floor."""
    from ..model.retime import lower_bound

    return {_row_name(old, new) for old, new in result.moves if lower_bound(new)}


def _row_name(old, new) -> str:
    """A move's row name as _rows gives it: the new name alone where it is the old one
    marked for its new dtype ('decode_fp16 b=1 [fp16->fp8]', dtype_names.move_label),
    'old -> new' where the change renamed the kernel (a --batch on `ai conv2d`'s name;
    the held range of a renamed row was lost while rows were looked up by old names)."""
    from ..model.dtype_names import move_label

    return move_label(old.name, new.name)


def _bound_lines(result) -> list[str]:
    """Why a row reads "at least": its compute floor, the arithmetic shown, and the fix
    (review H2: batch 185 answered, batch 186 exited 2)."""
    from ..model.ceiling import kernel_ceiling
    from ..model.whatif_batch import SPLIT_FIX, meta_batch
    from ..units import fmt_seconds, si

    out, low = [], _lower_bounds(result)   # once: per move it was n x n (s23 r5 F6)
    for old, new in result.moves:
        if old.name not in low:
            continue
        c = kernel_ceiling(result.after.roof, new.flop, new.unit, new.precision)
        peak = f"{si(c.ceiling.value, 'FLOP/s')} {c.label}"
        out.append(f"{old.name}: at least {fmt_seconds(new.seconds)} at batch "
                   f"{meta_batch(new)}: its compute floor, {si(new.total_flop, 'FLOP')} / "
                   f"{peak} (the KV cache, not in the point, can only add to it past the "
                   f"ridge); to predict the step, {SPLIT_FIX}")
    return out


def _held_lines(result) -> list[str]:
    """Why a row's time after is a range (review 18a F2): a whole step timed as one point
    (opkind.is_whole_step), whose gap above its floor may not move with its bytes."""
    from ..model.advice import step_words
    from ..model.retime import gap_held
    from ..units import fmt_seconds

    out = []
    for old, new in result.moves:
        slow = gap_held(new)
        if slow is None:
            continue
        gap = new.meta.get("gap_held_s", 0.0)
        out.append(f"{old.name}: {step_words(old, result.before.roof)}: its "
                   f"{fmt_seconds(gap)} above its floor (the gap below the roof: host time, "
                   f"kernel efficiency{'' if old.calls > 1 else ', launches'}) is scaled with "
                   f"the work for {fmt_seconds(new.seconds)} and held fixed for "
                   f"{fmt_seconds(slow)} ({_held_reason(result)})")
    return out


def _held_reason(result) -> str:
    """Why the gap may stay, in the words of the change asked (review 19a N5: a batch range
    explained itself with quantization)."""
    label = result.label.lower()
    if "batch" in label:
        return ("the host time between launches does not grow with the batch, and the "
                "kernels' efficiency need not change")
    if result.before.roof != result.after.roof:
        return ("other hardware need not shrink the host's share or the kernels' "
                "inefficiency")
    return "seed 004 Q6: quantization moves the point's AI, not the gap below the slope"


def _moved_totals(result, steps: set[int]) -> tuple[float, float] | None:
    """Measured time before and predicted after of the kernels that moved (a whole
    measured step beside its kernels left out); None where one has no time."""
    pairs = [(old.seconds, new.seconds) for old, new in result.moves if id(old) not in steps]
    if not pairs or any(b is None or a is None for b, a in pairs):
        return None
    return float(sum(b for b, _ in pairs)), float(sum(a for _, a in pairs))


def _per_token_line(result, totals, steps: set[int] = frozenset()) -> str:
    """Under a batch change the step gets slower while it makes more tokens: say the time
    per token too, or "8.07 ms -> 8.77 ms (0.92x)" reads as a loss (batch 1 -> 16 is
    14.7x the tokens/s). `totals`: of the moved kernels only, so the line says over which
    kernels when --only left others alone (they make no more tokens)."""
    from ..model.choose import split_whole_steps
    from ..model.whatif_batch import batched_moves, meta_batch

    if totals is None:
        return ""
    b0 = {meta_batch(old) for old, _ in batched_moves(result.moves)}
    b1 = {meta_batch(new) for _, new in batched_moves(result.moves)}
    if len(b0) != 1 or len(b1) != 1 or b0 == b1:
        return ""
    (before_b,), (after_b,) = b0, b1
    from ..units import fmt_seconds

    moved = [old.name for old, _ in result.moves if id(old) not in steps]
    every = len(moved) == len(split_whole_steps(result.before.kernels)[0])
    names = (", ".join(moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3
                                     else ""))
    over, rest = ("", "") if every else (f" over {names} only",
                                         "; the other kernels are not batched")
    tb, ta = totals[0] / before_b, totals[1] / after_b
    # a training step's batch counts sequences of --seq tokens (meta train_part): the
    # time is per sequence (review s27 v3-F6: "per token 211 ms")
    per, unit, rate = _per_words(result)
    # a whole step's range (its gap held): both ends per token too (review 19a N5)
    from ..model.retime import gap_held

    extra = sum(slow - new.seconds for old, new in result.moves
                if id(old) not in steps and (slow := gap_held(new)) is not None)
    least, most = ("at least ", "at most ") if _lower_bounds(result) else ("", "")
    if extra:
        slow = (totals[1] + extra) / after_b
        return (f"{per}{over} (batch {before_b} -> {after_b} {unit} per step{rest}): "
                f"{fmt_seconds(tb)} -> {_span(ta, slow)}, "
                f"{_span(tb / max(ta, slow), tb / min(ta, slow), 'x')} the {rate}")
    return (f"{per}{over} (batch {before_b} -> {after_b} {unit} per step{rest}): "
            f"{fmt_seconds(tb)} -> {least}{fmt_seconds(ta)}, {most}{fmt_times(tb / ta)} the "
            f"{rate}")


def _per_words(result) -> tuple[str, str, str]:
    """('per token', 'sequences', 'tokens/s') for an LLM batch; a training step's batch
    counts sequences (meta train_part: review s27 v3-F6, "per token 211 ms"); a batch read
    off an input's N (a conv's images, whatif_conv.BATCH_FROM) counts samples, not tokens
    (review s28 R3 F1: a ResNet trace said tokens/s)."""
    from ..model.whatif_conv import BATCH_FROM

    olds = [old for old, _ in result.moves]
    if any(old.meta.get("train_part") for old in olds):
        return "per sequence", "sequences", "tokens/s"
    if any(BATCH_FROM in old.meta for old in olds):
        return "per sample", "samples", "samples/s"
    return "per token", "sequences", "tokens/s"


def _on_floors(result, line: str) -> str:
    """An untimed file's per-token line names the floor it divides (the work floor) and
    adds the with-launches one, the step time on a launch-bound step (review r8 F8a:
    tinyllama's '1.02 ms -> 135 us' read as the time per token beside 2.03 -> 2.04 ms)."""
    from ..model.whatif_batch import batched_moves, meta_batch
    from ..model.whatif_floors import total_floors
    from ..units import fmt_seconds

    b, a = total_floors(result)["with_launches"]
    per = _per_words(result)[0]
    line = line.replace(per, f"{per} on the work floor", 1)
    if not b or not a:
        return line
    (old, new), *_ = batched_moves(result.moves)
    b0, b1 = meta_batch(old), meta_batch(new)
    return (f"{line}; with launches {fmt_seconds(b / b0)} -> {fmt_seconds(a / b1)}, "
            f"{fmt_times((b / b0) / (a / b1))}")


def _rows(result, steps: set[int]) -> tuple[list[tuple], list[bool], list[str]]:
    """The table's rows (name, AI before -> after, time before, after, speed-up, bound,
    floor?), whether each row shows floors, and the lines for whole measured steps."""
    from ..model.display_whatif import move_points
    from ..units import fmt_ai

    points = move_points(result)   # by kernel, not name (review s28 R3 F8)
    rows, floored, step_lines = [], [], []
    prev_new, members = None, []
    # rows without a measured time show their work floors, as the headline line does
    from ..model.whatif_floors import move_floors

    work = [(b[0], a[0]) for b, a in move_floors(result)]
    from ..model.whatif_comm import comm_exposures
    from .whatif_train import comm_label

    exposures = comm_exposures(result)   # a train --dp step's communication row (s30)
    for (old, new), (fb, fa), (b, a) in zip(result.moves, work, points, strict=True):
        sp = old.seconds / new.seconds if old.seconds and new.seconds else None
        if id(old) in steps:
            step_lines.append(_step_line(old, new, b, a, sp))
            continue
        # no measured time to move: show the floors (derived from the roof), as floors
        floor = old.seconds is None and new.seconds is None and bool(fb and fa)
        floored.append(floor)
        fb, fa = _whole(exposures.get(id(old)), fb, fa)
        times = ((fb, fa, fb / fa) if floor else (old.seconds, new.seconds, sp))
        if rows and new is prev_new and new.meta.get("fused"):
            # Fused members are one row: their summed time before against the one kernel
            # after (one row each read "1.00x" while the total said 3x).
            members.append(old)
            prev_tb, this_tb = rows[-1][2], times[0]
            # a member at 0.0 s adds nothing; only an unknown time makes the sum unknown
            tb = (prev_tb + this_tb if prev_tb is not None and this_tb is not None
                  else None)
            nbytes = sum(m.bytes.get(b.level, 0.0) for m in members) if b else 0.0
            ai_before = sum(m.total_flop for m in members) / nbytes if nbytes else None
            names = [m.name for m in members]
            rows[-1] = (f"{new.name} (fused)" if new.name == "+".join(names) else
                        f"{' + '.join(names)} -> {new.name}",
                        f"{fmt_ai(ai_before)} -> {fmt_ai(a.ai if a else None)}",
                        tb, times[1], tb / times[1] if tb and times[1] else None,
                        rows[-1][5], floor)
            continue
        prev_new, members = new, [old]
        name = _row_name(old, new)
        if id(old) in exposures:
            name = comm_label(name, exposures[id(old)])
        rows.append((name,
                     f"{fmt_ai(b.ai if b else None)} -> {fmt_ai(a.ai if a else None)}",
                     *times, _bound_cell(b, a), floor))
    return rows, floored, step_lines


def _whole(pair, fb, fa):
    """A communication row's floors as train's table gives them, its whole time with the
    hops its launches pay (Exposure.comm_s; the roof's floor is the bandwidth part alone:
    44.9 ms where train says 58.5 ms, s38 C); other rows' as they are."""
    if pair is None or pair[0] is None or pair[1] is None or not (fb and fa):
        return fb, fa
    return pair[0].comm_s, pair[1].comm_s


def _step_line(old, new, b, a, speedup) -> str:
    """The measured whole step, moved like a kernel at the fraction of its roof it reaches;
    a range where its gap may be held (review 19a N1: the llm route printed one 3.01x)."""
    from ..model.retime import gap_held
    from ..units import fmt_ai, fmt_seconds

    ai = f"AI {fmt_ai(b.ai if b else None)} -> {fmt_ai(a.ai if a else None)}"
    if not (old.seconds and new.seconds):
        return f"{old.name}: no measured time to move ({ai})"
    slow = gap_held(new)
    if slow is not None:
        return (f"{old.name}: {fmt_seconds(old.seconds)} -> {_span(new.seconds, slow)} "
                f"predicted ({_span(old.seconds / slow, speedup, 'x')}: its "
                f"{fmt_seconds(new.meta.get('gap_held_s', 0.0))} above its floor scaled with "
                f"the work, or held fixed); {ai} (the whole step, not added to the kernels)")
    return (f"{old.name}: {fmt_seconds(old.seconds)} -> {fmt_seconds(new.seconds)} predicted "
            f"({fmt_times(speedup)}, at the efficiency it reaches now); {ai} (the whole step, not "
            f"added to the kernels)")
