"""A package that is several devices to software (the MI250X: two dies, each its own GPU).

The catalog's figures for such a package are its dies' together (MI250X: 3.28 TB/s, 128 GB,
383 TFLOP/s bf16), while one process runs on one die, half of each. Ranked as the package,
an MI250X came out 1.54x ahead of an A100 80GB for a decode step one process runs at
1.64 TB/s, slower than the A100 (review s20 r5 F2). The catalog (hardware/catalog.py,
`software_devices = 2`) gives the package's roof a note written here (`note`), which is
how a Roof says it: `choose.rank` splits such a roof into one die (`one_die`), in the CLI
and for a notebook's `rank([k], [("MI250X", load_roof("MI250X"), 560)])` alike, and
`rooflab llm --on MI250X` says the floors it prints are the package's.

The note names the roof it belongs to, so a roof renamed from it (the probe's
"AMD Instinct MI250X, one die", already a die) is not split again; `one_die` replaces it
with a note saying what was done (`die_note`).

One rule (review s20 x2 F7): the catalog's field is read once, where hardware/catalog.py
writes `note` onto the package's roof, and every reader (rank() here, `rooflab choose`,
`rooflab llm --on`, the probe's catalog match) asks `software_devices(roof)`. The note, not
a field, carries the count because a Roof has no such field and a roof file saved from
one (`roof_to_dict`) keeps only its notes: a saved MI250X roof must still rank as one die.
Both texts are written here only.
"""

from __future__ import annotations

import re
from dataclasses import replace

# "AMD Instinct MI250X is 2 devices to software: ..." (the note's first words; the count
# and the name are read back from them)
_NOTE = re.compile(r"^(?P<name>.+) is (?P<n>\d+) devices to software: ")


def note(name: str, devices: int) -> str:
    """The note on the roof of a catalog package that is `devices` devices to software."""
    return (f"{name} is {devices} devices to software: its catalog ceilings and memory are "
            f"the package's, its {devices} dies' together, reached only by work split "
            f"across the dies over their link; one process sees one die, 1/{devices} of "
            f"each (`rooflab choose` ranks it so)")


def software_devices(roof) -> int:
    """How many devices to software `roof` is (its `note`, naming this roof); 1 for any
    other roof, one die already split included."""
    for text in getattr(roof, "notes", ()):
        m = _NOTE.match(text) if isinstance(text, str) else None
        if m and m["name"] == roof.name and int(m["n"]) > 1:
            return int(m["n"])
    return 1


# what one die's roof is called: the package's name and this, as the probe names the one
# die it finds (probe/gpu/catalog_match: "AMD Instinct MI250X, one die")
DIE = ", one die"


def one_die(roof, tdp_w: float | None, dies: int):
    """(roof, TDP) of one of `dies` equal dies: each ceiling / dies (derived from the
    package's figure), the package's TDP split evenly (an estimate: one busy die may draw
    more than half). The package's note gives way to one saying so; the name is the
    package's + DIE ("AMD Instinct MI250X, one die": `rooflab choose` names its row by the
    candidate, not the roof). The roof keeps the package's kind in memory (a catalog
    roof: its datasheet notes and clock legend), while every label and document says
    "derived" (label_kind: session 34 G, `report` on a train file read "AMD Instinct
    MI250X (nominal)" over halved ceilings)."""
    def part(c):
        return replace(c, value=c.value / dies, provenance="derived",
                       source=f"the package's {c.provenance} figure / {dies} dies"
                              + (f" ({c.source})" if c.source else ""))

    return (replace(roof, name=roof.name + DIE, compute=tuple(part(c) for c in roof.compute),
                    memory=tuple(part(c) for c in roof.memory),
                    notes=(*without_note(roof.notes), die_note(roof.name, dies))),
            None if tdp_w is None else tdp_w / dies)


def die_note(name: str, dies: int) -> str:
    """The note on one die split from a package (`one_die`), which `rooflab choose` prints
    under its table."""
    return (f"{name}: one of its {dies} dies, what one process sees: its ceilings, memory "
            f"and TDP are the package's / {dies} (the TDP split evenly, an estimate); the "
            f"package's figures are reached only by work split across its dies over their "
            f"link")


def is_one_die(roof) -> bool:
    """Whether `roof` is one die one_die split from a package (its name and die_note)."""
    name = getattr(roof, "name", "")
    if not isinstance(name, str) or not name.endswith(DIE):
        return False
    said = f"{name.removesuffix(DIE)}: one of its "
    return any(isinstance(n, str) and n.startswith(said) for n in getattr(roof, "notes", ()))


def label_kind(roof) -> str:
    """The kind a roof's label and documents give: "derived" for one die of a catalog
    package (one_die: the package's nominal figures / dies), else the roof's own."""
    return "derived" if roof.kind == "nominal" and is_one_die(roof) else roof.kind


def kind_words(roof) -> str:
    """The roof's kind as its label says it: one die of a package (is_one_die, in memory
    or read back from a document) "derived: the package's / 2", else label_kind."""
    n = _die_of(roof)
    if roof.kind in ("nominal", "derived") and n is not None:
        return f"derived: the package's / {n}"
    return label_kind(roof)


def _die_of(roof) -> int | None:
    """The count of dies `roof` is one of (its die_note), None where it is no die of a
    package (is_one_die)."""
    if not is_one_die(roof):
        return None
    base = roof.name.removesuffix(DIE)
    return next((int(m[1]) for t in roof.notes if isinstance(t, str)
                 and (m := re.match(re.escape(base) + r": one of its (\d+) dies", t))), None)


def die_words(roof) -> str:
    """What a kernel verb notes of one die of a package judging (kernel_roof's words,
    read back from the die's roof): split in memory by cli/inputs.resolve_on (kind
    "nominal") or read back from a file that saved one (`report --on MI250X --json`'s
    roof, a die's roof file: kind "derived", label_kind), which judges the same die and
    said nothing (s35 O); "" for any other roof (a probe's measured die)."""
    n = _die_of(roof)
    if n is None or roof.kind not in ("nominal", "derived"):
        return ""
    return _judged(KERNEL_WHY, roof.name.removesuffix(DIE), n).removeprefix("; ")


def without_note(notes) -> tuple:
    """`notes` less the package's `note` (a die's roof is not the package)."""
    return tuple(n for n in notes if not (isinstance(n, str) and _NOTE.match(n)))


def recorded_roof(roof) -> tuple:
    """(roof, words) for kernels a profiler recorded: rocprof (v1-v3, rocprof-compute)
    profiles one agent, and on a package of several dies an agent is one die (ROCm "MI250
    microarchitecture": 1.6 TB/s and 64 GB per GCD), so the kernels are judged against one
    die's roof, not the package's (review s28 R4 F2: a triad at 1.30 TB/s read 40 % of the
    MI250X's 3.28 TB/s, 79 % of its die's 1.64). `roof` itself and "" for any other roof.
    The TDP is no roof figure, so none is split."""
    return kernel_roof(roof, "a profiler records one device")


# why a kernel is judged on one die: the words kernel_roof and die_words give
KERNEL_WHY = "a kernel runs on one device (one process sees one die; rocprof records one GCD)"


def kernel_roof(roof, why: str = KERNEL_WHY) -> tuple:
    """(roof, words) for kernels judged on `roof`: one die's roof where `roof` is a package
    of several devices to software (a kernel runs on one of them: the MI250X's 30.9 ms
    gate_proj at the package's 383 TFLOP/s is 61.7 ms on the die its process sees, s35 A),
    with the words the roof line says ('; why, and ... one die's roof'); `roof` and ""
    for any other roof. Every --on of the kernel verbs goes through here (cli/inputs.
    resolve_on), as the profilers' (recorded_roof), so they judge alike."""
    dies = software_devices(roof)
    if dies <= 1:
        return roof, ""
    return one_die(roof, None, dies)[0], _judged(why, roof.name, dies)


def _judged(why: str, name: str, dies: int) -> str:
    return (f"; {why}, and {name} is {dies} devices to software: the kernels are judged "
            f"against one die's roof (the package's figures / {dies})")


# 'die', 'gcd', 'gcds', 'die1' as a word of a typed name ('MI250X GCD', 'mi250x:die1')
_ASKS_DIE = re.compile(r"(?<![a-z0-9])(?:die|gcd)s?\d*(?![a-z0-9])")


def die_query_words(query: str, name: str, dies: int) -> str:
    """What is said when a name asks for one die ('MI250X GCD', 'MI250X die') and the
    catalog entry found is the package (review s28 R4 F3: it resolved silently); '' when
    the query does not ask for a die or the entry is one device. A die by its index
    ('MI250X:die1', names.py takes die0 to die{dies-1}) asks for one too (s36 I)."""
    if dies <= 1 or not _ASKS_DIE.search(query.lower()):
        return ""
    return (f"'{query}' is read as the package {name} ({dies} dies, the figures below are "
            f"its dies' together); one die (GCD), what one process sees, has 1/{dies} of "
            f"each: `rooflab choose`, `train` and the kernel verbs' --on take one die")
