"""The inputs of every verb that reads kernel files: which kernels, which roofs, which notes.

One answer for report, plot, whatif and compare (review 14b F7), so `report x --on y` and
`plot x --on y` judge on the same roof and say the same notes:

- kernels: rooflab's own files (ingest.kernelfile.load_kernels), then the profilers' files
  read as `rooflab ncu/rocprof/torch` read them (several ncu or rocprof files = steps);
- roofs, the first of which judges: every --on (resolve_on); else the roofs the rooflab
  JSON files carry (hardware.resolve.embedded_roofs: a malformed one is an error, not "no
  roof"); else the profiler's (recorded peaks, the device named, else the best the
  kernels reached: ingest.profile_import.choose_roof);
- notes: what the reader must know to trust the numbers (files skipped, which metric
  stood in for another, a roof of another device or clock, what 100 % means on the
  best-achieved roof). report keeps them in the .md/.html/--json, plot prints them as
  warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..hardware.profile import MachineProfile
    from ..ingest.profile_import import ProfileImport
    from ..model.ceiling import Roof
    from ..model.kernel import Kernel

NO_ROOF = ("no roof to draw against or judge by: the files hold none; pass --on HARDWARE (a "
           "name from `rooflab specs list`) or --on profile.json (from `rooflab probe -o "
           "profile.json`)")


@dataclass(frozen=True)
class Inputs:
    kernels: tuple[Kernel, ...]
    roofs: tuple[Roof, ...]             # the first judges; plot draws them all
    profile: MachineProfile | None      # the profile the judging roof came from, if any
    source: str                         # where the judging roof came from (one line)
    notes: tuple[str, ...] = ()
    # the notes that say something may be wrong (a file skipped, a roof of another device
    # or clock), printed as `warning:`; the others (which metric stood in for another, what
    # 100 % means) as `note:`
    warnings: tuple[str, ...] = ()
    # the notes load_inputs printed on stderr already (rows and files a profiler's reader
    # skipped, warned as `rooflab ncu` warns them): print_notes does not say them twice
    told: tuple[str, ...] = ()

    @property
    def roof(self) -> Roof:
        return self.roofs[0]

    def print_notes(self) -> None:
        """The notes on stderr, as plot, whatif and compare's chart say them (report keeps
        them in its .md/.html/--json instead)."""
        from .common import say

        for note in self.notes:
            if note not in self.told:
                say("warning" if note in self.warnings else "note", note)


def resolve_on(spec: str) -> tuple[Roof, ...]:
    """The roofs one --on names, the one that judges first: an .ncu-rep's recorded peaks
    (one roof), else hardware.resolve.load_roofs (a catalog name; a profile: measured,
    then nominal; an analysis or roof JSON; rocprof-compute's roofline.csv or its
    workload folder)."""
    if spec.lower().endswith(".ncu-rep"):
        from ..ingest.profile_import import roof_for_on

        return (roof_for_on(spec),)
    from ..hardware.resolve import load_roofs

    roofs = load_roofs(spec)
    if not roofs:
        raise InputError(f"--on {spec}: holds no roof; give a catalog name (`rooflab specs "
                         f"list`) or a profile from `rooflab probe -o`")
    return roofs


def load_inputs(paths: Sequence[str], on: Sequence[str] = (),
                progress: Callable[[str, float], None] | None = None,
                kernel: Sequence[str] = (), exclude: Sequence[str] = (),
                per_launch: bool = False, distinct: bool = True,
                label_traces: bool | None = None, precision: str | None = None) -> Inputs:
    """Kernels from every file, the roofs to judge and draw them by, and the notes (see the
    module's docstring). kernel/exclude: only the kernels whose name matches one of `kernel`
    and none of `exclude`, as `rooflab ncu --kernel/--exclude` keeps them; per_launch: an
    ncu file's kernels one per launch, as `rooflab ncu --per-launch` reads them; distinct:
    refuse a file given twice (refuse_repeated; compare's before and after may be one);
    label_traces: several torch traces' rows labelled by file where their ranks do not tell
    them apart (ingest.profile_files.load_profiles), by default where files are distinct
    (compare pairs its two files' ops by name, plot --trajectory joins them: not there);
    precision: Nsight Compute's per-precision points (ingest.ncu_precision: 'fp64', 'each'),
    as `rooflab ncu --precision` gives them, for every file's kernels."""
    from ..ingest.kernelfile import file_kind, load_kernels
    from ..ingest.profile_checks import split_boost

    # --on 'NAME@boost': the catalog's compute ceilings as listed (_roof_notes)
    boost = any(split_boost(spec)[1] for spec in on)
    on = [split_boost(spec)[0] for spec in on]
    if distinct:
        refuse_repeated(paths)
    kinds = {p: file_kind(p) for p in paths}
    own = [p for p in paths if kinds[p] == "rooflab"]
    per_file = {path: load_kernels(path) for path in own}
    kernels = [k for ks in per_file.values() for k in ks]
    imp = _profiler_files([p for p in paths if p not in own], kinds, progress, per_launch,
                          distinct if label_traces is None else label_traces, on[:1])
    kernels, imp = _selected(kernels, imp, kernel, exclude)
    kernels, imp, viewed = _viewed(kernels, imp, precision)
    shared = shared_names(per_file)
    told: list[str] = []
    skipped, notes = ([shared], [shared]) if shared else ([], [])
    if imp is not None:
        kernels += imp.kernels
        told = _warn_skips(imp)
        skipped += told
        notes = skipped + _import_notes(imp)
    notes += viewed
    if on:
        from ..ingest.profile_import import kernels_with_sm_count

        # the SM count of the catalog GPU --on names, where a grid or a GEMM's tiles need
        # it (as `rooflab ncu --on` gives it; review s21 x2 F9)
        kernels = list(kernels_with_sm_count(kernels, on[0]))
        roofs, profile, source, (said_threads, warn_threads) = _on_roofs(on, kernels)
        notes += said_threads
        skipped += warn_threads   # warnings: the roof may not be the kernels' count
    else:
        roofs, profile, source = _file_roofs(own)
    if not roofs and imp is not None:
        try:
            roofs, source, said = _profiler_roof(imp)
        except InputError:
            if imp.kernels:
                raise
            # --kernel/--exclude kept only kernels of rooflab's files: the profiler's
            # "no kernel has both FLOP and bytes" would blame kernels no longer there
            raise InputError(f"{NO_ROOF} (--kernel/--exclude kept none of the profiler "
                             f"files' kernels, whose best rates would have made a "
                             f"lower-bound roof)") from None
        notes += said
    if not roofs:
        raise InputError(NO_ROOF)
    judged, source, (said, warned) = _roof_notes(roofs, kernels, imp, source, boost)
    from .roof_source_notes import profile_judged  # the record table's nominal as judged
    return Inputs(tuple(kernels), judged, profile_judged(profile, roofs, judged), source,
                  tuple(notes + warned + said),
                  warnings=tuple(skipped + warned), told=tuple(told))


def _warn_skips(imp: ProfileImport) -> list[str]:
    """The files and rows (a zero-time launch, a row cut short, nan values) the profiler's
    reader skipped, warned on stderr as `rooflab ncu/rocprof` warns them, now, so `report`
    (which keeps its notes for the .md/.html/--json) says them too; returned as the notes
    the report's files and --json carry. report and plot dropped the rows without a word,
    and said a whole file skipped only in the report's notes (review s22 r4 F4)."""
    from .common import warn

    for s in imp.failed:
        warn(f"{s} (file skipped)")
    for s in imp.skips:
        warn(str(s))
    return ([f"skipped: {s}" for s in imp.failed]
            + [f"skipped: {s}" for s in imp.skips])


def refuse_repeated(paths: Sequence[str]) -> None:
    """A file given twice (good.csv good.csv, or ./good.csv and a link to it) is refused:
    its kernels were counted twice, the total and every time share with them, without a
    word (review r3 F2: 2 ms and 50 % each for one 1 ms kernel)."""
    import os

    seen: dict[object, str] = {}
    for p in paths:
        try:
            st = os.stat(p)
            key: object = (st.st_dev, st.st_ino)
        except OSError:
            key = os.path.abspath(p)   # a missing file: the reader says so
        if key in seen:
            same = "" if seen[key] == p else f" (the same file as {seen[key]})"
            raise InputError(f"{p} is given twice{same}: its kernels would be counted twice; "
                             f"give each file once")
        seen[key] = p


# the start of shared_names' warning (compare's chart leaves it out: shared names are its point)
SHARED_NAMES_NOTE = "kernel names in more than one file:"


def shared_names(per_file: dict[str, Sequence[Kernel]], shown: int = 3) -> str | None:
    """The warning for kernel names that two of rooflab's files share: their rows (and
    --kernel, --only, --map) cannot tell the files apart. None when no name is shared."""
    where: dict[str, list[str]] = {}
    for path, kernels in per_file.items():
        for name in dict.fromkeys(k.name for k in kernels):
            where.setdefault(name, []).append(path)
    both = {n: ps for n, ps in where.items() if len(ps) > 1}
    if not both:
        return None
    said = "; ".join(f"'{n}' in {', '.join(ps)}" for n, ps in list(both.items())[:shown])
    more = f" and {len(both) - shown} more" if len(both) > shown else ""
    return (f"{SHARED_NAMES_NOTE} {said}{more}; their rows look alike and "
            f"a name selects them all: rename the kernels in one file to tell them apart")


def _profiler_files(paths: Sequence[str], kinds: dict[str, str],
                    progress: Callable[[str, float], None] | None,
                    per_launch: bool, label_traces: bool = False, on=()) -> ProfileImport | None:
    """The profilers' files read as their verbs read them (ingest.profile_files.load_profiles),
    the ncu ones per launch when asked. --per-launch without an ncu file is an error, not a
    silent no-op: only ncu records each launch under its own ID (rooflab's kernel files and
    analysis JSON hold one row per kernel, the launches summed or never known; rocprof and
    torch inputs are read as their verbs read them, which have no per-launch view), so the
    flag could change nothing and the user would read summed kernels as launches. `on`:
    --on's first device, which rocprof's reader takes for its occupancy (review s30)."""
    from ..ingest.profile_files import load_profiles

    if not per_launch:
        return load_profiles(list(paths), progress, label_traces, *on[:1])
    ncu = [p for p in paths if kinds[p] == "ncu"]
    if not ncu:
        raise InputError("--per-launch splits the kernels of Nsight Compute files (ncu CSV "
                         "or .ncu-rep) into their launches, and none of the files given is "
                         "one; leave out --per-launch, or pass the ncu file itself (not a "
                         "kernel file or JSON written from it)")
    from ..ingest.ncu_files import load_ncu
    from ..ingest.profile_files import join_imports

    rest = load_profiles([p for p in paths if p not in ncu], progress, label_traces, *on[:1])
    # ncu first, as load_profiles orders the profilers
    return join_imports([load_ncu(ncu, progress=progress, per_launch=True),
                         *([rest] if rest is not None else [])])


def _selected(kernels: list[Kernel], imp: ProfileImport | None, kernel: Sequence[str],
              exclude: Sequence[str]) -> tuple[list[Kernel], ProfileImport | None]:
    """The kernels of rooflab's files and the profilers' import, narrowed by --kernel and
    --exclude together (so 'left no kernel' counts every file's), before the notes and the
    roof are worked out: notes name only the kernels shown, and a roof of the best the
    kernels reached is of these kernels, as in `rooflab ncu`. The matching and its errors
    are ingest.profile_import.select_kernels', the profiler verbs' own."""
    if not kernel and not exclude:
        return kernels, imp
    from dataclasses import replace

    from ..ingest.profile_import import ProfileImport, select_kernels

    every = [*kernels, *(imp.kernels if imp is not None else ())]
    if not every:
        raise InputError("--kernel/--exclude choose among the kernels of the files given, "
                         "and no kernel file was given; pass the files, or leave the "
                         "options out")
    kept = {id(k) for k in select_kernels(ProfileImport(kernels=tuple(every)), kernel,
                                          exclude).kernels}
    if imp is not None:
        imp = replace(imp, kernels=tuple(k for k in imp.kernels if id(k) in kept))
    return [k for k in kernels if id(k) in kept], imp


def _viewed(kernels: list[Kernel], imp: ProfileImport | None, precision: str | None
            ) -> tuple[list[Kernel], ProfileImport | None, list[str]]:
    """The kernels (of rooflab's files and the profilers') in the per-precision view
    `precision` asks for (ingest.ncu_precision.precision_view), and its notes."""
    if precision is None:
        return kernels, imp, []
    from dataclasses import replace

    from ..ingest.ncu_precision import kernel_view, parse_view, view_notes

    view = parse_view(precision)
    notes = view_notes([*kernels, *(imp.kernels if imp is not None else ())], view)
    if imp is not None:
        imp = replace(imp, kernels=tuple(v for k in imp.kernels for v in kernel_view(k, view)))
    return [v for k in kernels for v in kernel_view(k, view)], imp, list(notes)


def _import_notes(imp: ProfileImport) -> list[str]:
    """The reader's notes, and which metric stood in for another (an .ncu-rep's L2/L1
    bytes) as `rooflab ncu` says it: the same kernel's AI differs between a report and its
    CSV export."""
    from .common import metric_notes

    return [*imp.notes, *metric_notes(imp.kernels, imp.notes)]


def _on_roofs(on: Sequence[str], kernels: Sequence[Kernel] = ()
              ) -> tuple[tuple[Roof, ...], MachineProfile | None, str,
                         tuple[list[str], list[str]]]:
    """Every --on's roofs (in order), the first --on's profile, the roof line, and the
    (notes, warnings) of the kernels' thread count: the first --on at the count the kernels
    give (_threads_roofs)."""
    from .options import on_source

    first_roofs, said = _threads_roofs(on[0], kernels)
    roofs = first_roofs + tuple(r for spec in on[1:] for r in resolve_on(spec))
    first = roofs[0]
    return (roofs, _profile_at(_profile_of(on[0]), first_roofs),
            f"roof: {first.name} ({first.kind}), from {on_source(on[0])}", said)


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
    hardware.resolve.roofs_for_kernel_threads, with its (notes, warnings). Kernels of different
    counts share one roof: it is kept, and said."""
    from ..hardware.resolve import roofs_for_kernel_threads

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


def _file_roofs(own: Sequence[str]) -> tuple[tuple[Roof, ...], MachineProfile | None, str]:
    """The roofs rooflab's JSON files carry (the first file's judge), the profile of the
    file the judging roof came from, and the roof line; ((), None, '') when none holds one."""
    from ..files import load_json
    from ..hardware.resolve import embedded_roofs

    roofs: list = []
    profile, source = None, ""
    for path in own:
        if not path.lower().endswith(".json"):
            continue   # a kernel CSV holds no roof
        data = load_json(path)
        found = embedded_roofs(data, path)
        if found and not roofs:
            profile = _profile_in(data, path)
            source = f"roof: {found[0].name} ({found[0].kind}), from {path}"
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
    # another GPU's roof is not scaled: the clock ncu recorded is not its clock
    judged = [clock_judged(r, clock_hz, boost or bool(m))
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
