"""What each kernel's label says on the chart: full or one line, the name shortened,
a trajectory's steps.

Part of the chart's label layout (chart_layout); no matplotlib here.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..units import fmt_pct
from .chart_parts import DrawnPoint
from .label_names import chart_name, chart_names

# Point labels: the full three-line label up to this many labelled points, one line after.
FULL_LABELS = 8


def _short(name: str, kernel: str, short: dict[str, str] | None = None) -> str:
    """A label's first line with the kernel's name shortened for the chart (short: the
    chart's label_names.chart_names, else chart_name); what follows the name (" [DRAM]")
    is kept."""
    if name.startswith(kernel):
        return ((short or {}).get(kernel) or chart_name(kernel)) + name[len(kernel):]
    return chart_name(name)


# The end a what-if or compare chart gives a kernel's name ("q_proj (before)", "q_proj
# (after, 3.80x)", cli/whatif._chart_moves): a predicted point's one-line label says
# "predicted" inside it, not in a second pair of brackets ("q_proj (before) (predicted)").
PAIR_END = re.compile(r" \((before|after[^()]*)\)$")


def predicted(name: str, launch_bound: bool = False) -> str:
    """A one-line label for an untimed point: 'rope (predicted)'; 'rope (before,
    predicted)' where the name already ends in its before/after words; 'k_proj (before,
    predicted, launch-bound)' for one its launches hold under its roof (review 19c N10:
    drawn 10x under the DRAM slope, its one-line label gave no reason)."""
    return with_word(name, "predicted, launch-bound" if launch_bound else "predicted")


# the end of a full label whose point its launches hold down (chart_points._point_label)
LAUNCH_BOUND = " (launch-bound)"


def _launch_bound(p: DrawnPoint) -> bool:
    # (on its figures' line: not a kernel whose own name ends so)
    return "\n" in p.label and p.label.endswith(LAUNCH_BOUND)


def with_word(name: str, word: str) -> str:
    """'name (word)', or the word inside the name's own before/after brackets."""
    end = PAIR_END.search(name)
    if end is None:
        return f"{name} ({word})"
    return f"{name[:end.start()]} ({end.group(1)}, {word})"


def primary_points(points: list[DrawnPoint]) -> set[int]:
    """The indices of the points that carry their kernel's name (one a kernel; its other
    levels' points are labelled by their level)."""
    return {i for i, p in enumerate(points) if p.label != p.level or p.kernel == p.level}


def point_texts(points: list[DrawnPoint], trajectory: bool,
                only: set[str] | None = None) -> list[DrawnPoint]:
    """The label each point shows: full (name, AI, FLOP/s, % of roof) for a few points, one
    line each when many (the name shortened to label_names.LABEL_CHARS: the full one is in
    the JSON, the tables and the HTML hover); a trajectory's steps as "step i" (or their
    meta step_label, e.g. "b=8") with the name on the first and the figures on the first
    and last; extra memory levels by their level, few points only.
    only: the kernels whose labels to word where there are many points (the rest keep the
    text they have, none): a chart labels its 20 longest of 20 000, and wording and
    copying every point's was ~0.3 s (chart_point_labels._worded; the same texts)."""
    primary = primary_points(points)
    compact = len(points) > FULL_LABELS
    steps: dict[str, list[int]] = {}
    for i in sorted(primary):
        steps.setdefault(points[i].kernel, []).append(i)
    short = chart_names(points[i].kernel for i in sorted(primary))
    out = []
    for i, p in enumerate(points):
        if compact and not p.text and (i not in primary or only is not None
                                       and p.kernel not in only):
            out.append(p)   # (its text is none already: the same point, not a copy)
            continue
        if i not in primary:
            out.append(replace(p, text="" if compact else p.label))
            continue
        name = _short(p.label.split("\n", 1)[0], p.kernel, short)
        idx = steps[p.kernel]
        if trajectory and len(idx) > 1:
            n = idx.index(i) + 1
            step = p.step or f"step {n}"      # "b=8" for a batch sweep
            name = f"{name} · {step}" if n == 1 else step
            if compact or 1 < n < len(idx):
                out.append(replace(p, text=name))
                continue
        if compact:
            # "of roof": beside a size legend of time shares, a bare "74%" was read as
            # the kernel's share of the time (review 18c F6)
            pct = (f" · {fmt_pct(p.percent_of_roof)} of roof"
                   if p.percent_of_roof is not None else "")
            text = f"{name}{pct}" if p.measured else predicted(name, _launch_bound(p))
        else:
            text = "\n".join([name, *p.label.split("\n")[1:]])
        out.append(replace(p, text=text))
    return out


def above_labelled(full: list[DrawnPoint], texts: list[DrawnPoint], unlabelled: int,
                   note: str, n: int, named: int | None = None
                   ) -> tuple[list[DrawnPoint], int, str]:
    """chart_point_labels._longest_labelled's (texts, unlabelled, note) with the kernels that
    have a point above their roof labelled too (full: point_texts' labels, before the n
    longest were kept): the ring says "check the counts", so the reader needs the name
    to check (review s18 r5 F5: a compare chart's kern_006_softmax at 120 % of fp32
    vector was ringed but, not among the 20 longest, unnamed). At most n of them, the
    largest share of the time first (review s22 r6 F2: 210 of 2 001 kernels above a
    datasheet DRAM slope were all labelled on top of `--labels 20`, and their layout took
    minutes; the warning above the chart names every one, the note counts the rest).
    named: how many kernels have a label in full's wording, where full words some only
    (chart_point_labels._worded: every kernel above its roof is worded)."""
    from .chart_words import above_roof  # chart's rule, as the ring's

    over = {p.kernel for p in full if above_roof(p)}
    back = {p.kernel for p, q in zip(full, texts, strict=True)
            if p.kernel in over and p.text and not q.text}
    if not back:
        return texts, unlabelled, note
    share: dict[str, float] = {}
    for p in full:   # a kernel's largest share over its points (one per memory level)
        if p.kernel in back:
            share[p.kernel] = max(share.get(p.kernel, 0.0), p.share or 0.0)
    # by share, then by the kernel's first point (stable: the same chart every run)
    ranked = sorted(dict.fromkeys(p.kernel for p in full if p.kernel in back),
                    key=lambda k: -share[k])
    kept = set(ranked[:n]) if n > 0 else set(ranked)
    out = [p if p.kernel in kept else q for p, q in zip(full, texts, strict=True)]
    left = unlabelled - len(kept)
    if named is None:
        named = len(dict.fromkeys(p.kernel for p in full if p.text))
    return out, left, labelled_note(n, named, left, len(kept), len(back))


def labelled_note(n: int, named: int, left: int, above: int = 0, over: int = 0) -> str:
    """The note of a chart that labels its n longest kernels only (of `named`), and the
    `above` more ringed above their roof (above_labelled): one wording for both. over:
    how many unlabelled kernels were above their roof, where more than `above` (the rest
    are named in the chart's warning, not on it)."""
    more = f" and {above} more above their roof" if above else ""
    if over > above:
        more = (f" and {above} more of the {over} above their roof (the longest; the "
                f"warning names every one)")
    return (f"labelled the {n} longest of {named} kernels{more}; {left} drawn without a "
            f"label (`rooflab plot --labels N` sets how many, 0 labels every one)")


def labelled_counts(points, kernels) -> tuple[int, int]:
    """(longest, above) of a chart's labelled kernels (points with text): those labelled
    as the longest and those labelled only because a point of theirs is above its roof
    (above_labelled), so the footnote under the axis counts each as what it is (review
    s18 reread F2: 20 longest and 2 above their roof read "the 22 longest"). The second
    are the kernels above their roof that a longer kernel was left unlabelled beside."""
    from .chart_words import above_roof

    weight = kernel_weights(kernels, points)
    labelled = {p.kernel for p in points if p.text}
    bare = [weight.get(p.kernel, (0.0,) * 3) for p in points if p.kernel not in labelled]
    over = {p.kernel for p in points if above_roof(p)}
    above = sum(1 for name in labelled & over
                if bare and weight.get(name, (0.0,) * 3) < max(bare))
    return len(labelled) - above, above


def kernel_weights(kernels, points=()) -> dict[str, tuple[float, float, float]]:
    """What ranks kernels for a label, by name (measured time; for untimed ones their
    floor on the chart, FLOP / the rate their point is drawn at, then FLOP): a name stands
    for all its kernels (a trajectory's steps share one). By FLOP alone, a train step's
    longest kernel (the optimizer: 56 ms, AI 0.5) went unlabelled under "labelled the 20
    longest" (review s27 v3-F9)."""
    weight: dict[str, tuple[float, float, float]] = {}
    for k in kernels:
        w = (k.seconds or 0.0, 0.0, k.total_flop)
        weight[k.name] = max(weight.get(k.name, w), w)
    for p in points:   # an untimed point's rate is its predicted one: the floor's
        w = weight.get(p.kernel)
        if w is not None and not w[0] and not p.measured and p.flop_per_s > 0:
            weight[p.kernel] = (0.0, max(w[1], w[2] / p.flop_per_s), w[2])
    return weight
