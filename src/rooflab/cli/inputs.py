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

The roofs' half (resolving --on, the files' and the profiler's roofs, their notes) is
cli/inputs_roofs.py; its names are importable from here as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError

# The roofs' half lives in cli/inputs_roofs.py
from .inputs_roofs import (
    _file_roofs,
    _on_roofs,
    _profiler_roof,
    _roof_notes,
)

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
    # the notes a `rooflab llm -o` file closed its text with (its llm.notes), in file order:
    # report says them (report_llm_notes), read from the documents as the kernels were
    llm_notes: tuple[str, ...] = ()

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
    workload folder). A family name's note ('h100' is the H100 SXM, of three) is said
    here, before the verb's output (options.say_name_note_now).

    A package that is several devices to software (--on MI250X: two dies, model/dies.py)
    is one die's roof, as a kernel runs on one die (dies.kernel_roof; load_inputs notes it:
    dies.die_words). Here, once, for every verb that judges kernels by --on (report,
    plot, whatif, compare, ai, bench), as `rooflab rocprof --on` and `train --on` take one
    die; `rooflab specs show MI250X` reads the catalog, not this: the package's datasheet.
    """
    from ..model.dies import kernel_roof
    from .options import say_name_note_now

    if spec.lower().endswith(".ncu-rep"):
        from ..ingest.profile_import import roof_for_on

        return (roof_for_on(spec),)
    from ..hardware.resolve import load_roofs

    roofs = load_roofs(spec)
    if not roofs:
        raise InputError(f"--on {spec}: holds no roof; give a catalog name (`rooflab specs "
                         f"list`) or a profile from `rooflab probe -o`")
    say_name_note_now(spec)
    return tuple(kernel_roof(r)[0] for r in roofs)


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
    from ..ingest.kernelfile import file_kind, kernels_and_document
    from ..ingest.profile_checks import split_boost

    # --on 'NAME@boost': the catalog's compute ceilings as listed (_roof_notes)
    boost = any(split_boost(spec)[1] for spec in on)
    on = [split_boost(spec)[0] for spec in on]
    if distinct:
        refuse_repeated(paths)
    kinds = {p: file_kind(p) for p in paths}
    own = [p for p in paths if kinds[p] == "rooflab"]
    read = {path: kernels_and_document(path) for path in own}   # each file parsed once
    per_file = {path: ks for path, (ks, _) in read.items()}
    docs = {path: doc for path, (_, doc) in read.items() if doc is not None}
    kernels = [k for ks in per_file.values() for k in ks]
    device, device_note = _rocprof_device(on, kinds)
    imp = _profiler_files([p for p in paths if p not in own], kinds, progress, per_launch,
                          distinct if label_traces is None else label_traces, device)
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
    notes += viewed + ([device_note] if device_note else [])
    if on:
        from ..ingest.profile_import import kernels_with_sm_count

        # the SM count of the catalog GPU --on names, where a grid or a GEMM's tiles need
        # it (as `rooflab ncu --on` gives it; review s21 x2 F9)
        kernels = list(kernels_with_sm_count(kernels, on[0]))
        roofs, profile, source, (said_threads, warn_threads) = _on_roofs(on, kernels)
        notes += said_threads
        skipped += warn_threads   # warnings: the roof may not be the kernels' count
    else:
        roofs, profile, source = _file_roofs(own, docs)
        # a die's roof read back (a report written --on MI250X) judges as --on MI250X
        # does, and says so as it does: the note was --on's only (s36 F)
        from ..model.dies import die_words

        notes += [w for w in (die_words(roofs[0]),) if w] if roofs else []
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
    from .report_llm_notes import file_notes
    from .roof_source_notes import profile_judged  # the record table's nominal as judged
    return Inputs(tuple(kernels), judged, profile_judged(profile, roofs, judged), source,
                  tuple(notes + warned + said),
                  warnings=tuple(skipped + warned), told=tuple(told),
                  llm_notes=file_notes(docs.values()))


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


def refuse_missing(paths: Sequence[str]) -> None:
    """A path that does not exist is an error, as `report` and `plot` say it: `rooflab ncu
    output1.csv outptu5.csv` (a typo among the steps) warned "file not found (file skipped)"
    and exit 0 with one step of two (s33 C). '-' is standard input."""
    import os

    from ..errors import ParseError

    for p in paths:
        if p != "-" and not os.path.exists(p):
            raise ParseError("file not found", path=p)


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
    the --on naming the GPU that recorded the rocprof files (_rocprof_device), which
    rocprof's reader takes for its line size and occupancy (review s30)."""
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


def _rocprof_device(on: Sequence[str], kinds: dict[str, str]) -> tuple[list[str], str | None]:
    """([the --on naming the GPU that recorded the rocprof files] or [], a note or None):
    every --on reaches the reader (ingest.rocprof_arch.recording_device), not the first
    alone, which with `plot F --on profile.json --on mi300x` named no GPU (session 32)."""
    if "rocprof" not in kinds.values():
        return list(on[:1]), None
    from ..ingest.rocprof_arch import recording_device

    device, note = recording_device(on)
    return ([device] if device else []), note


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

