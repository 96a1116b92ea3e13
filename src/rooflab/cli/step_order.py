"""A warning when the files of an optimisation sequence are given out of their numbered order.

Several profiler files are steps in command-line order (ingest/ncu_files.py, `step_index`),
and that order stays the rule: rooflab cannot know which file came first. But the shell
expands `output*.csv` in the locale's collation order: under C it is output.csv output1.csv
... output8.csv, under en_US.UTF-8, de_DE.UTF-8 or zh_CN.UTF-8 (most desktops) output1.csv
... output8.csv output.csv, and output10.csv sorts before output2.csv everywhere. The same
command then drew the baseline as the last step, the trajectory ending with a step back
(review s23 r2 F2). Files whose names are one series (one folder, one stem with a trailing
number or none, one suffix) given out of that number's order are said, once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from .common import say

_NUMBERED = re.compile(r"^(.*?)(\d*)$")


def series_key(path: str) -> tuple[tuple[str, str, str], int]:
    """(the series: folder, stem without its trailing number, suffix; the number, -1 for
    none): output.csv is the series' first (the unnumbered baseline ncu writes before
    output1.csv), output10.csv comes after output9.csv."""
    p = PurePath(path)
    prefix, number = _NUMBERED.match(p.stem).groups()
    return (str(p.parent), prefix, p.suffix.lower()), int(number) if number else -1


def out_of_order(paths: Sequence[str]) -> tuple[str, str] | None:
    """(a file, the file of its series given before it that it precedes in numbered order),
    for the first such pair; None when each series of two or more files is in order. Files
    of no series (one file alone under its stem) never count."""
    last: dict[tuple[str, str, str], tuple[int, str]] = {}
    for path in paths:
        series, number = series_key(path)
        before = last.get(series)
        if before is not None and number < before[0]:
            return path, before[1]
        if before is None or number > before[0]:
            last[series] = (number, path)
    return None


def warn_step_order(paths: Sequence[str]) -> None:
    """Say once when the step files are out of their numbered order (out_of_order), with
    the shell words that list that series in order."""
    pair = out_of_order(paths)
    if pair is None or not glob_order(paths):
        return
    late, early = pair
    say("warning", f"{late} is given after {early}: steps are taken in the order the files "
                   f"are given, {late} as the later step. A shell's `*` sorts by the locale "
                   f"(output.csv after output8.csv under en_US.UTF-8, output10.csv before "
                   f"output2.csv under any): list the files in order, e.g. "
                   f"`{in_order_words(paths, late)}`")


def glob_order(paths: Sequence[str]) -> bool:
    """Whether the files are in an order a shell's `*` gives: byte order (the C locale), or
    a UTF-8 locale's, which compares letters and digits first, case and punctuation after
    (output1.csv before output.csv). Any other order was chosen by the user, as
    `gemm_fp32.csv gemm_fp16.csv` (review s23 h1 F2): nothing is said of it."""
    paths = list(paths)

    def collated(p: str) -> tuple[str, str]:
        return re.sub(r"[^0-9a-z]", "", p.lower()), p

    return paths == sorted(paths) or paths == sorted(paths, key=collated)


def in_order_words(paths: Sequence[str], member: str) -> str:
    """The shell words that expand to member's series in numbered order in any locale: the
    unnumbered file, then one `?` per digit count (`output.csv output?.csv output??.csv`)."""
    series = series_key(member)[0]
    numbers = [n for s, n in map(series_key, paths) if s == series]
    folder, prefix, suffix = series
    head = "" if folder == "." else folder.rstrip("/") + "/"
    words = [f"{head}{prefix}{suffix}"] if -1 in numbers else []
    digits = sorted({len(str(n)) for n in numbers if n >= 0})
    words += [f"{head}{prefix}{'?' * d}{suffix}" for d in digits]
    return " ".join(words)


def profiler_steps(paths: Sequence[str]) -> list[str]:
    """The files among `paths` that are read as steps: the profilers' (ncu, rocprof, likwid,
    perf), not rooflab's own kernel files, whose kernels are merged, nor torch traces,
    which are told apart by their rank (rank0.json ... rank10.json: no order; h1 F3)."""
    from ..ingest.kernelfile import file_kind

    return [p for p in paths if file_kind(p) not in ("rooflab", "torch")]
