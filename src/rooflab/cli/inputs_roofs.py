"""The roofs a kernel-file verb judges by (cli/inputs.load_inputs' second half, split from
cli/inputs.py): every --on's (the first at the thread count the kernels give), else the
roofs rooflab's JSON files carry, else the profiler's own; the machine profile whose record
table the report shows; and the notes on a roof of another device or clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..model.dies import die_words, kind_words

if TYPE_CHECKING:
    from ..hardware.profile import MachineProfile
    from ..ingest.profile_import import ProfileImport
    from ..model.ceiling import Roof
    from ..model.kernel import Kernel


def _on_roofs(on: Sequence[str], kernels: Sequence[Kernel] = ()
              ) -> tuple[tuple[Roof, ...], MachineProfile | None, str,
                         tuple[list[str], list[str]]]:
    """Every --on's roofs (in order), the first --on's profile, the roof line, and the
    (notes, warnings): one die of a package judging (inputs.resolve_on), the kernels'
    thread count (the first --on at the count the kernels give: _threads_roofs)."""
    from .inputs import resolve_on
    from .options import on_source

    first_roofs, (notes, warned) = _threads_roofs(on[0], kernels)
    roofs = first_roofs + tuple(r for spec in on[1:] for r in resolve_on(spec))
    first = roofs[0]
    # one die of a package judging (resolve_on split it): one note, which report keeps in
    # its files and plot, whatif and compare's chart print (the roof line is report's)
    die = die_words(first)
    return (roofs, _profile_at(_profile_of(on[0]), first_roofs),
            f"roof: {first.name} ({kind_words(first)}), from {on_source(on[0])}",
            (([die] if die else []) + notes, warned))


def _profile_at(profile: MachineProfile | None, roofs: Sequence[Roof]
                ) -> MachineProfile | None:
    """The profile with the roofs that judge in place of its own where they are one of its
    thread rows (`--on p.json@1t`, or the row the kernels' 'threads' picked): the row as
    its measured roof and the row's nominal partner (nominal_at_threads: compute per the
    row's cores) as its nominal, so the record table, the read-with-care notes and the
    precision lever show the row's figures, not the whole run's (review s20 d1: L1 410
    GB/s under a one-thread row of 206). Host and extras (caches, datasheet check) stay
    the file's."""
    from dataclasses import replace

    if profile is None or not roofs or profile.measured is None \
            or roofs[0] == profile.measured or roofs[0].kind != "measured":
        return profile
    nominal = next((r for r in roofs[1:] if r.kind == "nominal"), profile.nominal)
    return replace(profile, measured=roofs[0], nominal=nominal)


def _threads_roofs(spec: str, kernels: Sequence[Kernel]
                   ) -> tuple[tuple[Roof, ...], tuple[list[str], list[str]]]:
    """--on's roofs at the thread count the kernels' files give (Kernel.meta["threads"]:
    a kernel file's 'threads', rooflab.measure's record), picked by
    hardware.thread_rows.roofs_for_kernel_threads, with its (notes, warnings). Kernels of different
    counts share one roof: it is kept, and said."""
    from ..hardware.thread_rows import roofs_for_kernel_threads
    from .inputs import resolve_on

    roofs = resolve_on(spec)
    counts: dict[int, list[str]] = {}
    for k in kernels:
        n = k.meta.get("threads")
        if isinstance(n, int) and not isinstance(n, bool):
            counts.setdefault(n, []).append(k.name)
    if not counts:
        return roofs, ([], [])
    if len(counts) > 1:
        each = "; ".join(f"{_thread_words(n)}: {', '.join(names[:3])}"
                         + (f" and {len(names) - 3} more" if len(names) > 3 else "")
                         for n, names in sorted(counts.items()))
        words = (f"the kernels ran on different thread counts ({each}), and one roof "
                 f"judges them all ({roofs[0].name}): judge each count on its own row "
                 f"(--on me.json@Nt, one run per count)")
        return roofs, ([words], [words])
    (n,) = counts
    picked, words, warn = roofs_for_kernel_threads(spec, n)
    if not words:
        return picked or roofs, ([], [])
    return picked or roofs, ([words], [words] if warn else [])


def _thread_words(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def _file_roofs(own: Sequence[str], docs: Mapping[str, object]
                ) -> tuple[tuple[Roof, ...], MachineProfile | None, str]:
    """The roofs rooflab's JSON files carry (the first file's judge), the profile of the
    file the judging roof came from, and the roof line; ((), None, '') when none holds one.
    docs: each JSON file's document as its kernels were read from it (not parsed again)."""
    from ..files import load_json
    from ..hardware.resolve import embedded_roofs

    roofs: list = []
    profile, source = None, ""
    for path in own:
        if not path.lower().endswith(".json"):
            continue   # a kernel CSV holds no roof
        data = docs[path] if path in docs else load_json(path)
        found = embedded_roofs(data, path)
        if found and not roofs:
            profile = _profile_in(data, path)
            source = f"roof: {found[0].name} ({kind_words(found[0])}), from {path}"
        roofs += [r for r in found if r not in roofs]
    return tuple(roofs), profile, source


def _profiler_roof(imp: ProfileImport) -> tuple[tuple[Roof, ...], str, list[str]]:
    """The profiler's own roof (ingest.profile_import.choose_roof) and, on the roof the
    kernels' best makes, what 100 % means there, as `rooflab ncu` says it."""
    from ..ingest.profile_envelope import ENVELOPE_NAME, ENVELOPE_NOTE
    from ..ingest.profile_import import choose_roof, envelope_words

    choice = choose_roof(None, imp)
    notes: list[str] = []
    if choice.roof.name == ENVELOPE_NAME:
        # a ceiling that holds a mixed kernel's minor FLOP too says so (review 13v F-B)
        notes = [ENVELOPE_NOTE, *(f"{ENVELOPE_NAME}: {w}" for w in envelope_words(choice.roof))]
    return (choice.roof,), choice.source, notes


def _roof_notes(roofs: Sequence[Roof], kernels: Sequence[Kernel], imp: ProfileImport | None,
                source: str, boost: bool = False
                ) -> tuple[tuple[Roof, ...], str, tuple[list[str], list[str]]]:
    """The roofs (a catalog GPU's compute ceilings at the SM clock ncu recorded:
    profile_import.clock_judged; as listed with --on 'NAME@boost'), the roof line and the
    (notes, warnings), once each: another device's roof or mixed clocks, a warning; a roof
    scaled to the recorded clock, a note (s26 r2 F1); kept at boost, a warning (13v F-G)."""
    from ..ingest.profile_checks import kernels_clock, recorded_cc
    from ..ingest.profile_import import clock_judged, device_mismatch

    # the import's clock, else a kernel file's (meta) beside its capability: with none, an
    # H100 roof went unseen as another GPU's and was scaled to 1.62 GHz (34 -> 27.8 TFLOP/s)
    clock_hz = (imp.clock_hz if imp is not None else None) or (
        kernels_clock(kernels) if recorded_cc(kernels) else None)
    mismatch = [device_mismatch(r, kernels) for r in roofs]
    # another GPU's roof is neither scaled nor given the clock note: the clock ncu
    # recorded is not its clock
    judged = [clock_judged(r, None if m else clock_hz, boost)
              for r, m in zip(roofs, mismatch, strict=True)]
    # the judging roof's on the roof line, before any advice is read
    for said in (mismatch[0], judged[0][1]):
        if said and said not in source:
            source += said
    warned = [m.removeprefix("; warning: ") for m in mismatch if m]
    notes: list[str] = []
    # scaled: a note; judged at boost, where % of roof reads low: a warning, as it was
    for r, (j, c) in zip(roofs, judged, strict=True):
        if c:
            (warned if j is r else notes).append(c.removeprefix("; note: "))
    return (tuple(r for r, _ in judged), source,
            (list(dict.fromkeys(notes)), list(dict.fromkeys(warned))))


def _profile_of(spec: str) -> MachineProfile | None:
    """The machine profile an --on file is or carries (its record table in the report)."""
    from ..files import load_json
    from ..hardware.resolve import looks_like_file, split_threads

    # 'p.json@1t' is p.json's one-thread row: the profile (caches, datasheet check) is the
    # file's all the same (review r5 F5: @1t dropped it, and with it cache_resident)
    picked = split_threads(spec) if "@" in spec else None
    spec = picked[0] if picked else spec
    if not spec.lower().endswith(".json") or not looks_like_file(spec) \
            or not Path(spec).is_file():
        return None
    return _profile_in(load_json(spec), spec)


def _profile_in(data: object, path: str) -> MachineProfile | None:
    """The profile a parsed document is or carries (document_parts.profile_part), else None."""
    from ..hardware.profile import profile_from_dict
    from ..model.document_parts import profile_part

    part = profile_part(data)
    if part is None:
        return None
    return profile_from_dict(part, where=path if part is data else f"{path}: profile")
