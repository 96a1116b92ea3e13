"""A probed profile's thread rows: `--on me.json@1t` (split_threads, roofs_at_threads), the
nominal roof beside a row scaled to its cores (nominal_at_threads, per_thread_nominal), and
the row a run's or a kernel file's thread count picks (roofs_for_kernel_threads). Split from
hardware/resolve.py, which re-exports these names."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import InputError, ParseError, RooflabError, parse_error_in
from ..files import load_json
from ..model.ceiling import Ceiling, Roof
from ..model.document_parts import profile_part
from .profile import profile_from_dict, roof_at_threads


def _looks_like_file(spec: str) -> bool:
    from .resolve import looks_like_file  # resolve imports this module: no cycle at load

    return looks_like_file(spec)


# `--on me.json@1t`: the roof of a scaling probe at one thread count (review 14d D)
_AT_THREADS = re.compile(r"(?P<path>.+\.json)@(?P<n>\d+)(?:t|threads?)", re.IGNORECASE)
_AT_MEANS = ("picks a thread count of a probed profile (`rooflab probe --threads 1,2,all "
             "-o me.json`, then me.json@1t)")


def split_threads(spec: str) -> tuple[str, int] | None:
    """('me.json', 1) for 'me.json@1t' (or @1thread, @4threads); None where there is no
    '@' suffix (or the whole spec is a file whose name has an '@'). Any other '@' suffix is
    an InputError saying what @Nt means: 'EPYC 9654@1t' read as 'EPYC 9654' gave the
    whole chip's roof for one thread's (review 15v F-m), 'me.json@all' was "unknown
    hardware" (F-n)."""
    text = spec.strip()
    head, at, suffix = text.rpartition("@")
    if not at or _looks_like_file(text) or Path(text).exists():
        return None   # no suffix, or a file (or folder) whose name has an '@'
    m = _AT_THREADS.fullmatch(text)
    if m is None or not head.lower().endswith(".json"):
        raise InputError(_at_error(text, head, suffix))
    n = int(m["n"])
    if n < 1:
        raise InputError(f"'{text}': a thread count is 1 or more; {_at_accepted(head)}")
    return m["path"], n


def _at_error(text: str, head: str, suffix: str) -> str:
    """What is wrong with NAME@SUFFIX: a suffix on something that is not a .json profile
    (a catalog entry is the whole chip), or a .json's suffix that is no @Nt."""
    if not head.lower().endswith(".json"):
        what = ("a file, not a probed profile .json" if _looks_like_file(head)
                else "not a probed profile .json (a catalog entry's roof is the whole chip)")
        return f"'{text}': '@{suffix}' {_AT_MEANS}; '{head}' is {what}: drop '@{suffix}'"
    return f"'{text}': '@{suffix}' is no thread count; {_at_accepted(head)}"


def _at_accepted(path: str) -> str:
    """'accepted: @1t, @2t (the counts this profile has); @all is the file itself: drop
    the suffix', with the counts read from the file where it is a profile."""
    from .profile import scaling_counts

    counts: list[int] = []
    if Path(path).is_file():
        try:
            profile = profile_part(load_json(path))
        except (RooflabError, OSError):   # unreadable: say the general form
            profile = None
        counts = scaling_counts(profile) if isinstance(profile, Mapping) else []
    have = (", ".join(f"@{n}t" for n in counts) + " (the counts this profile has)"
            if counts else f"@Nt, which {_AT_MEANS}")
    return f"accepted: {have}; @all is the file itself: drop the suffix ({path})"


def roofs_at_threads(path: str, n: int) -> tuple[Roof, ...]:
    """A probed profile's roof at `n` threads (hardware.profile.roof_at_threads: its
    extras.scaling row, or the profile's measured roof at the count it was probed with),
    then its nominal roof, as a profile gives them."""
    if not Path(path).is_file():
        raise ParseError(f"file not found (from '{path}@{n}t')", path=path)
    data = load_json(path)
    profile = profile_part(data)
    if profile is None:
        raise ParseError(f"'@{n}t' picks a thread count of a probed profile (from `rooflab "
                         f"probe --threads 1,2,all -o me.json`), and this file is none; drop "
                         f"'@{n}t'", path=path)
    if n < 1:
        raise ParseError(f"a thread count is 1 or more; got '@{n}t'", path=path)
    try:
        roof = roof_at_threads(profile, n, where=path)
        nominal = profile_from_dict(profile, where=path).nominal
    except InputError as exc:
        raise parse_error_in(exc, path) from None
    if nominal is None:
        return (roof,)
    cores = _nominal_cores(profile)
    if cores is not None and n < cores:
        nominal = nominal_at_threads(nominal, n, cores)
    return roof, nominal


# A thread row (`--on me.json@1t`) beside its profile's nominal roof, derived for every core
# the probe ran on (probe/cpu/assemble.core_use x clock x FLOP/cycle): a
# 2x gap at one thread of two cores that was only the core count (review 18c F17). The
# row's nominal partner is the nominal compute per N cores (one thread per core); the
# bandwidths are the whole chip's, shared by its cores, and stay as they are.
def _nominal_cores(profile: Mapping) -> float | None:
    """The cores a probed CPU profile's nominal compute is summed over: the probe's thread
    count, at most the host's cores; None for a GPU, a hybrid CPU (P- and E-cores count
    at different rates: no single per-core figure) or a profile that does not say."""
    host = profile.get("host") or {}
    extras = profile.get("extras") or {}
    threads = (extras.get("scaling") or {}).get("reference_threads", extras.get("threads"))
    split = host.get("core_split") or {}
    if host.get("kind", "cpu") != "cpu" or split.get("e_cores"):
        return None
    # the probe writes the cores it summed over (physical cores of the CPUs used, at most a
    # cgroup quota: probe/cpu/assemble.core_use); `min(threads, cores)` counted SMT
    # siblings as cores (review s21 r2 F3) and stays for profiles written before
    used = host.get("nominal_cores")
    if isinstance(used, (int, float)) and not isinstance(used, bool) and used > 0:
        return used
    counts = [c for c in (threads, host.get("cores")) if isinstance(c, int) and c > 0]
    return min(counts) if counts else None


def _cores_words(n: int) -> str:
    return f"{n} core" if n == 1 else f"{n} cores"


# The words that open the method of a nominal bandwidth nominal_at_threads keeps whole
# beside a thread row ("whole chip (shared by its 2 cores): ..."): written here, and read
# back by is_whole_chip alone (report/read_with_care.py leaves such a bandwidth out of its
# disturbed-probe warning), so an edit to the words cannot part the two (s20 x2 F8).
WHOLE_CHIP = "whole chip (shared by its "


def is_whole_chip(c: Ceiling) -> bool:
    """Whether `c` is a nominal bandwidth nominal_at_threads kept the whole chip's."""
    return c.method.startswith(WHOLE_CHIP)


def nominal_at_threads(nominal: Roof, n: int, cores: int) -> Roof:
    """A nominal roof summed over `cores` cores, as the partner of an n-thread row: its
    compute ceilings x n / cores ("...; compute per 1 core)"), each method saying so; its
    bandwidths the whole chip's, said in their methods and the roof's notes."""
    k = _cores_words(n)
    compute = tuple(replace(c, value=c.value * n / cores,
                            method=f"scaled to {n} of {cores} cores: {c.method}")
                    for c in nominal.compute)
    memory = tuple(replace(m, method=f"{WHOLE_CHIP}{cores} cores)"
                           + (f": {m.method}" if m.method else ""))
                   for m in nominal.memory)
    name = (f"{nominal.name[:-1]}; compute per {k})" if nominal.name.endswith(")")
            else f"{nominal.name}, compute per {k}")
    said = (f"{nominal.name}: compute ceilings scaled to {n} of its {cores} cores "
            f"({n}/{cores} x), as the measured roof is its {n}-thread row; bandwidths stay "
            f"the whole chip's (shared by its cores)")
    return replace(nominal, name=name, compute=compute, memory=memory,
                   notes=(*nominal.notes, said))


# Roofs handed to the chart directly (the Python API: plot_roofline([row, nominal]), not
# `--on me.json@1t`) carry no profile to count from: there the row's count and the
# nominal's cores are read from the ceilings' methods, as profile.roof_at_threads and
# cpu_nominal write them. A nominal scaled above ("scaled to 1 of 2 cores: ...") no longer
# matches, so a roof is never scaled twice.
_THREAD_ROW = re.compile(r"^measured \((\d+) threads?\)")
_CORES_METHOD = re.compile(r"^(\d+) cores x ")


def _row_threads(roof: Roof) -> int | None:
    """The thread count of a profile's thread row (every ceiling measured at it)."""
    found = {m.group(1) for c in (*roof.compute, *roof.memory)
             if (m := _THREAD_ROW.match(c.method))}
    return int(found.pop()) if len(found) == 1 and roof.compute else None


def _summed_cores(roof: Roof) -> int | None:
    """The core count a derived CPU roof's compute ceilings are summed over."""
    found = {m.group(1) for c in roof.compute if (m := _CORES_METHOD.match(c.method))}
    whole = len(found) == 1 and all(_CORES_METHOD.match(c.method) for c in roof.compute)
    return int(found.pop()) if whole else None


def per_thread_nominal(roofs: Sequence[Roof]) -> tuple[tuple[Roof, ...], str]:
    """The roofs with every all-core derived roof scaled (nominal_at_threads) to the first
    roof's thread count where that roof is a thread row of fewer threads than the cores,
    and the note saying so ("" where nothing changed)."""
    n = _row_threads(roofs[0]) if roofs else None
    if n is None:
        return tuple(roofs), ""
    out, said = [roofs[0]], ""
    for r in roofs[1:]:
        k = _summed_cores(r)
        if k is None or n >= k:
            out.append(r)
            continue
        out.append(nominal_at_threads(r, n, k))
        said = out[-1].notes[-1]
    return tuple(out), said


def _threads_words(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


@dataclass(frozen=True)
class ThreadSubject:
    """Who ran on a thread count, in the words saying which row of a profile judges it:
    one chooser serves `bench --kernel --threads N` and a kernel file's 'threads', so the
    two say the same thing in the same words."""

    who: str          # "this run", "the kernels"
    count_from: str   # where the count came from, '{n}' the count: "--threads {n}"
    label: bool       # the words label a placement line: said even where the row matches


RUN = ThreadSubject("this run", "--threads {n}", label=True)            # bench --kernel
KERNELS = ThreadSubject("the kernels", "their 'threads'", label=False)  # kernel files


def profile_thread_counts(path: str) -> tuple[list[int], int | None] | None:
    """(the thread counts a profile .json holds a roof for, the count its measured roof was
    probed at) for a probed profile; None for anything else (a catalog name, a roof file)."""
    from .profile import scaling_counts

    if not path.lower().endswith(".json") or not Path(path).is_file():
        return None
    try:
        profile = profile_part(load_json(path))
    except (RooflabError, OSError):   # load_roofs read it already: it says what is wrong
        return None
    if profile is None:
        return None
    extras = profile.get("extras") or {}
    reference = (extras.get("scaling") or {}).get("reference_threads", extras.get("threads"))
    return scaling_counts(profile), reference if isinstance(reference, int) else None


def roofs_for_kernel_threads(spec: str, n: int, subject: ThreadSubject = KERNELS
                             ) -> tuple[tuple[Roof, ...] | None, str, bool]:
    """For work that ran on `n` threads (`subject`: a bench --kernel run, or kernels whose
    file says so in Kernel.meta["threads"]): (the roofs of --on `spec` at n threads, or
    None to keep spec's own; the words for the reader, '' when there is nothing to say;
    whether those words are a warning). A scaling profile (`probe --threads 1,all`) gives
    its n-thread row (roof_at_threads, as 'me.json@1t' does): a one-thread loop judged by
    the all-core roof read its % of roof 1/cores of what it is (review 16a G, L1). A roof
    without that row is kept, and said; a row the user picked with @Nt is kept."""
    ran = f"{subject.who} ran on {_threads_words(n)} ({subject.count_from.format(n=n)})"
    at = split_threads(spec)
    if at is not None:   # the user picked the row: keep it, say when it is another count
        if at[1] == n:
            return None, (f"the profile's {n}-thread row, as --on asked, like "
                          f"{subject.who}" if subject.label else ""), False
        return None, (f"{ran}, and --on {spec} picks the {at[1]}-thread row: judged on "
                      f"that row, as asked"), True
    counts = profile_thread_counts(spec)
    if counts is None:
        return None, (f"{ran}; the roof '{spec}' has no per-thread-count rows (a catalog "
                      f"entry is the whole chip, every core), so every core's ceilings "
                      f"judge: measure a roof at this count with `rooflab probe --threads "
                      f"{n},all -o me.json` and pass --on me.json"), True
    have, reference = counts
    if n == reference:
        return None, (f"the profile's roof, measured at {_threads_words(n)} like "
                      f"{subject.who}" if subject.label else ""), False
    if n in have:
        return (roofs_at_threads(spec, n),
                f"judged on the profile's {n}-thread row, picked to match "
                f"{subject.count_from.format(n=n)}; --on {spec}@{n}t picks the same", False)
    rows = ", ".join(map(str, have)) or "none"
    at_words = (f"measured at {_threads_words(reference)}" if reference is not None
                else "measured at a thread count it does not record")
    roof_words = (f"its {reference}-thread roof" if reference is not None
                  else "its measured roof")
    return None, (f"{ran}; the profile {spec} was {at_words} and has no {n}-thread row "
                  f"(rows: {rows}), so {roof_words} judges this {n}-thread run; to judge "
                  f"it at its own count, probe that count: `rooflab probe --threads "
                  f"{n},all -o {spec}`"), True
