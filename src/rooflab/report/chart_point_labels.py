"""Which of a chart's points carry a label: the n longest kernels (_longest_labelled),
a kernel above its roof whatever its time, each label laid out clear of the others
(_labelled), and the notes that count the kernels left without one. Split from
chart_points.py, which imports these names back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..model.kernel import Kernel
from .chart_parts import DrawnPoint


def _longest_labelled(points: list[DrawnPoint], kernels: Sequence[Kernel], n: int,
                      named: list[str] | None = None) -> tuple[list[DrawnPoint], int, str]:
    """Labels on the n longest kernels only (by measured time; untimed ones after, by
    their floor: kernel_weights), every point kept; with the number of kernels left
    unlabelled and the note that says so. A name stands for all its kernels (a
    trajectory's steps share one). named: the kernels with a label in point_texts' full
    wording, where `points` holds some of them only (_worded); else those in points."""
    if named is None:
        named = list(dict.fromkeys(p.kernel for p in points if p.text))
    if n <= 0 or len(named) <= n:
        return points, 0, ""
    from .chart_layout_texts import labelled_note

    keep = _longest(named, kernels, points, n)
    out = [p if p.kernel in keep or not p.text else replace(p, text="") for p in points]
    left = len(named) - n
    return out, left, labelled_note(n, len(named), left)


def _longest(named: list[str], kernels: Sequence[Kernel], points: list[DrawnPoint],
             n: int) -> set[str]:
    """The n longest of the kernels `named` (kernel_weights, the heaviest first)."""
    from .chart_layout_texts import kernel_weights

    weight = kernel_weights(kernels, points)
    return set(sorted(named, key=lambda name: weight.get(name, (0.0,) * 3),
                      reverse=True)[:n])


def _worded(points: list[DrawnPoint], to_draw: Sequence[Kernel], trajectory: bool, n: int
            ) -> tuple[list[DrawnPoint], list[str]]:
    """point_texts' labels and the kernels they name (every one with a label in its full
    wording), the labels worded only for the kernels that can keep one where many points
    are labelled n at a time: the n longest and those above their roof (above_labelled
    may give them theirs back). The rest's would be blanked straight after; wording and
    copying 20 000 points' was ~0.3 s and blanking them again ~0.15 s (benchmarks/
    RESULTS.md session 37). With many points every kernel's named point has a label
    (its name, never blank: Kernel refuses one), so the kernels named are known unworded."""
    from .chart_layout_texts import FULL_LABELS, point_texts, primary_points
    from .chart_words import above_roof

    if n > 0 and len(points) > FULL_LABELS:
        primary = primary_points(points)
        named = list(dict.fromkeys(p.kernel for i, p in enumerate(points) if i in primary))
        if len(named) > n and all(p.kernel.strip() for p in points):
            only = _longest(named, to_draw, points, n) | {p.kernel for p in points
                                                          if above_roof(p)}
            return point_texts(points, trajectory, only), named
    full = point_texts(points, trajectory)
    return full, list(dict.fromkeys(p.kernel for p in full if p.text))


def _labelled(points, to_draw, trajectory: bool, n: int, place: bool, lines, ridges, xlim,
              ylim, roof_names, sweep, caps):
    """(lines, ridges, points, unlabelled, notes) with the n longest kernels labelled
    (_longest_labelled) and, where `place`, every label laid out clear of the others
    (chart_layout.layout_labels); not placed, lines and ridges are returned as given."""
    from .chart_layout import layout_labels
    from .chart_layout_texts import above_labelled

    full, named = _worded(points, to_draw, trajectory, n)
    longest = _longest_labelled(full, to_draw, n, named)
    # a kernel ringed above its roof keeps its name, whatever its time (review s18 r5 F5)
    texts, unlabelled, note = above_labelled(full, *longest, n, len(named))
    if not place:
        return lines, ridges, texts, unlabelled, [note] if note else []
    lines, ridges, points = layout_labels(lines, ridges, texts, xlim, ylim, roof_names,
                                          sweep, caps)
    # labels the layout left out rather than print over another (review 19c N6)
    lost = {p.kernel for p in texts if p.text} - {p.kernel for p in points if p.text}
    if lost and note:   # counted as the footnote counts them, after the drop (s22 h2 F5)
        note = _final_note(full, longest[0], points, to_draw, unlabelled + len(lost),
                           len(named))
    notes = [note] if note else []
    if lost:
        unlabelled += len(lost)
        notes.append(f"{len(lost)} kernel label(s) left out where they would print over "
                     f"another: {', '.join(sorted(lost))} (the JSON and `rooflab "
                     f"report` have them)")
    return lines, ridges, points, unlabelled, notes


def _final_note(full, longest, points, to_draw, left: int, named: int | None = None
                ) -> str:
    """The labelled note counted on the labels drawn (points), after the layout dropped
    some: as the footnote under the axis counts them (chart_layout_texts.labelled_counts;
    review s22 h2 F5: stderr said "the 20 longest ... 1961 drawn without a label", the
    footnote "the 19 longest ... 1962 more"). full: every label; longest: those the n
    longest kept (the rest above their roof were candidates for a label of their own).
    named: how many kernels have a label in full's wording, where full words some only."""
    from .chart_layout_texts import labelled_counts, labelled_note
    from .chart_words import above_roof

    n, above = labelled_counts(points, to_draw)
    if named is None:
        named = len(dict.fromkeys(p.kernel for p in full if p.text))
    kept = {p.kernel for p in longest if p.text}
    over = len({p.kernel for p in full if p.text and above_roof(p)} - kept)
    return labelled_note(n, named, left, above, over)
