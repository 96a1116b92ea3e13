"""The words a number's provenance uses: one vocabulary for every writer of a Kernel (and
of a Ceiling, whose kinds are three of them). Pure; imports nothing of the package.

A Kernel's `provenance` maps "flop", "bytes", "seconds" (and "precision" where a default
was filled in) to one of these words, saying where the number came from:

- GIVEN     written by the user: a kernel file, `measure(fn, flop=..., bytes=...)`.
- ASSUMED   a default rooflab filled in because the user gave none (a kernel file's
            missing precision: fp32).
- NOMINAL   a datasheet figure (the catalog's ceilings).
- MEASURED  timed by a clock (a kernel's seconds, a probed ceiling).
- COUNTED   read off a profiler's hardware counters (ncu, rocprof, perf stat,
            likwid-perfctr): taken as it is, at its level. Counted DRAM bytes are what the
            memory controller moved (real traffic, write-allocate reads included).
- DERIVED   computed by rooflab's own formulas from shapes or other numbers (`ai`, `llm`,
            the bench zoo, `measure()`'s PyTorch dispatch counter, a torch trace's op
            rules, a what-if's prediction): bytes DERIVED are compulsory traffic.

Which source writes which word is docs/json.md's "Provenance" table (a test compares it
with each verb's output). A file may hold other words (provenance is free text on input,
and files written by older versions say bytes "measured" for perf/likwid counters): they
load as they are; counter_bytes_word() reads the old counter word too.
"""

from __future__ import annotations

from collections.abc import Mapping

GIVEN = "given"
ASSUMED = "assumed"
NOMINAL = "nominal"
MEASURED = "measured"
COUNTED = "counted"
DERIVED = "derived"
WORDS = (GIVEN, ASSUMED, NOMINAL, MEASURED, COUNTED, DERIVED)

# What `rooflab perf` / `rooflab likwid` wrote for their counter bytes before the words
# were made one: a file of theirs still holds it, and its bytes are still counter bytes.
OLD_COUNTER_BYTES = MEASURED


def counter_bytes_word(word: object) -> bool:
    """Whether a bytes provenance word says hardware counters (real traffic)."""
    return word in (COUNTED, OLD_COUNTER_BYTES)


def has_counter_bytes(provenance: Mapping[str, str] | None) -> bool:
    """Whether a kernel's provenance says its bytes were read off hardware counters."""
    return counter_bytes_word((provenance or {}).get("bytes"))
