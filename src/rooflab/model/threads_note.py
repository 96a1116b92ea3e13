"""analyze()'s note for a kernel that ran on fewer threads than the probed roof judging it
(review s18 r8 F5: analyze() said nothing where `rooflab report` and diagnose() did), in
check_threads' words (sanity_ceilings), and the rule that says it once. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .ceiling import Roof
from .kernel import Kernel
from .sanity_ceilings import THREADS_SAID, thread_gap, threads_message

# analyze()'s own note (threads_note), which THREADS_SAID does not match, so diagnose() on
# a Python analysis still finds the 'threads' check
THREADS_NOTED = re.compile(r": ran on \d+ threads?; judged by the \d+-thread roof: ")


def threads_note(kernel: Kernel, roof: Roof) -> str | None:
    """'name: ran on 1 thread; judged by the 2-thread roof: ...' for a kernel run on fewer
    threads than its roof (sanity_ceilings.thread_gap), else None."""
    gap = thread_gap(kernel, roof)
    if gap is None:
        return None
    # the finding's words, and the Python spelling of the row (a notebook has no --on)
    return f"{kernel.name}: {threads_message(*gap)}; in Python load_roof('PROFILE@{gap[0]}t')"


def threads_said_once(notes: Sequence[str], said: Sequence[str] = (),
                      findings: Iterable = ()) -> tuple[str, ...]:
    """The notes less analyze()'s thread notes (THREADS_NOTED) where the thread count is
    said already: by another note, in `notes` or `said` (the CLI's input notes, which name
    the profile's rows: THREADS_SAID), or by a diagnosis' 'threads' finding (a kernel file
    carrying its own roof, no --on). One sentence, not two (review s18 r8 F5); the one rule
    for Analysis, `rooflab plot` and `rooflab report`."""
    if not (any(THREADS_SAID.search(n) for n in [*said, *notes])
            or any(getattr(f, "check", None) == "threads" for f in findings)):
        return tuple(notes)
    return tuple(n for n in notes if not THREADS_NOTED.search(n))
