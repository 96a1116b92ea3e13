"""Which AMD GPU a rocprof file is from, as far as its counter names or the device the user
named can tell, and the matrix-core instruction counters that cannot be FLOP.

The line size of rocprof-compute's L1 and L1->L2 read formulas is 64 B on MI200 (gfx90a)
and 128 B on MI300 (gfx942), and only MI300 has TCC_BUBBLE, its 128-B HBM reads. A file
says MI300 by TCC_BUBBLE or by the TCC_EA0_ spelling of the HBM request counters (gfx942's
spelling: rocprof-compute's gfx942 pmc sets, which its gfx90a sets spell TCC_EA_), MI200 by
the TCC_EA_ spelling (read_as), whatever --on names; a file with neither, the named device
(`--on mi300x`, a workload folder `MI300X_A1`) decides (review r9 F2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

_INSTINCT = re.compile(r"MI(\d)\d\d", re.IGNORECASE)

# An MI350-class GPU (MI350X, MI355X: gfx950) read as MI300's (truthy: 128-B lines, the
# TCC_EA0_ names), but whose 128-B HBM reads are TCC_EA0_RDREQ_128B, not TCC_BUBBLE: its
# notes ask for those (rocprof_dram.py). The note asked for TCC_BUBBLE there (s36 L).
GFX950 = "gfx950"


def mi300_of_name(text: str | None) -> bool | str | None:
    """True for an MI300-class name (MI300X, MI325X, 'MI300X_A1'), GFX950 for an MI350 one
    (MI350X, MI355X), False for an older Instinct one (MI100, MI210, MI250X, 'MI200'),
    None for any other."""
    hit = _INSTINCT.search(text or "")
    if hit is None:
        return None
    return GFX950 if hit.group(0).upper().startswith("MI35") else hit.group(1) >= "3"


def mi300_of_device(spec: str | None) -> bool | None:
    """mi300_of_name of the device `--on` names: a catalog name ('mi300x' is AMD Instinct
    MI300X) or a rocprof-compute workload folder ('workloads/app/MI300X_A1'); None for a
    profile or roof file, or a name the catalog does not know."""
    if not spec or not isinstance(spec, str):
        return None
    if Path(spec).is_dir():
        return mi300_of_path(str(Path(spec).resolve() / "pmc_perf.csv"))
    if Path(spec).suffix:   # a profile.json, a roofline.csv: its GPU is not named here
        return None
    from ..errors import HardwareNotFound
    from ..hardware.catalog import lookup

    try:
        return mi300_of_name(lookup(spec).name)
    except (HardwareNotFound, ValueError):
        return None


_WORKLOAD_ARCH = re.compile(r"MI\d\d\d[A-Z]?(?:_.*)?", re.IGNORECASE)


def mi300_of_path(path: str) -> bool | None:
    """rocprof-compute names a workload's folder by its GPU (workloads/NAME/MI300X_A1/
    pmc_perf.csv, .../MI200/...): what the name of the file's folder says, when it is one
    such (not any folder name holding 'mi2..')."""
    name = Path(path).parent.name
    return mi300_of_name(name) if _WORKLOAD_ARCH.fullmatch(name) else None


@lru_cache(maxsize=64)
def spelled_mi300(keys: tuple[str, ...]) -> bool | None:
    """What a dispatch's counter names say: True (TCC_BUBBLE or TCC_EA0_: MI300), False
    (TCC_EA_: MI200's spelling), None (no HBM request counter)."""
    if any(k.startswith(("TCC_EA0_", "TCC_BUBBLE")) for k in keys):
        return True
    return False if any(k.startswith("TCC_EA_") for k in keys) else None


def read_as(file_says: bool | None, named: bool | None) -> tuple[bool | None, str]:
    """(whether a dispatch is read as MI300's, a note or ''): the file's counter names
    decide where they say (spelled_mi300), else the GPU --on or the folder names. Both
    spellings are the recording GPU's own: rocprofiler defines TCC_EA_RDREQ(_sum) for
    gfx9-gfx90a and only TCC_EA0_ for gfx940-942 (derived_counters.xml; counter_defs.yaml
    for rocprofv3), so a TCC_EA_ file is an MI100/MI200's even under --on MI300X. It was
    read as MI300's there (128-B L1 lines, L1 and L2 bytes twice MI200's, and a TCC_BUBBLE
    note) while a TCC_EA0_ file under --on MI250X kept its MI300 reading (s36 F)."""
    if file_says is None:
        return named, ""
    if file_says is False and named:
        return False, ("the TCC_EA_ counter names are MI100/MI200's (gfx908/gfx90a) "
                       "spelling, MI300 (gfx942) spells them TCC_EA0_: the file is read as "
                       "MI200's (64-B L1 and L1->L2 read lines) although --on names an "
                       "MI300; name the GPU that recorded it")
    return file_says, ""


def bubble_note(file_says: bool | None, named: bool | str | None) -> str:
    """The note on an MI300 read without its 128-B read counter, saying what made it MI300:
    the file's TCC_EA0_ names (file_says) or the GPU --on names (named). It once said "on
    MI300" under `--on MI250X` too, where the names alone had decided it (s35 audit); on
    an MI350 (named GFX950) the counter is TCC_EA0_RDREQ_128B, not TCC_BUBBLE (s36 L)."""
    if named == GFX950:   # gfx950 counts its reads by size; TCC_BUBBLE is no read count
        return ("TCC_EA0_RDREQ_64B and TCC_EA0_RDREQ_128B not collected on MI350/MI355X "
                "(gfx950): its 128-B DRAM reads counted as 64 B (DRAM bytes up to 2x low); "
                "add TCC_EA0_RDREQ_32B_sum, TCC_EA0_RDREQ_64B_sum and TCC_EA0_RDREQ_128B_sum "
                "to --pmc (TCC_BUBBLE does not count them there)")
    cost = ("its 128-B DRAM reads counted as 64 B (DRAM bytes up to 2x low); add "
            "TCC_BUBBLE_sum to --pmc")
    if named is None:   # the TCC_EA0_ names alone: an MI300's or an MI350's
        return ("TCC_BUBBLE not collected on MI300: " + cost + " (on MI350/MI355X, gfx950: "
                "TCC_EA0_RDREQ_64B_sum and TCC_EA0_RDREQ_128B_sum instead; name the GPU "
                "with --on)")
    if file_says and named is False:
        return ("TCC_BUBBLE not collected: the TCC_EA0_ counter names are MI300's (gfx942) "
                "spelling, so the file is read as MI300's although --on names an older GPU "
                "(MI100/MI200, no TCC_BUBBLE); if it is from an MI300, " + cost)
    return "TCC_BUBBLE not collected on MI300: " + cost


def ea_spelled(name: str, mi300: bool | str | None) -> str:
    """A TCC_EA_ counter's name as the GPU it is read as spells it, for a note asking for it:
    TCC_EA0_ on MI300 and MI350 (gfx942, gfx950; mi300 truthy, as read_as decides), the
    canonical TCC_EA_ otherwise. The notes said TCC_EA_RDREQ_32B to an MI300 user, a
    counter rocprofv3 does not know there (s36 M)."""
    return name.replace("TCC_EA_", "TCC_EA0_", 1) if mi300 else name


ARCH_NOTE = ("64-B L1 and L1->L2 read lines assumed (MI200): the file does not say which GPU "
             "(no TCC_EA/TCC_BUBBLE counter); on MI300 name it with --on mi300x (128-B lines)")

# matrix-core instruction counters: one per wave instruction, whose FLOP depend on the
# instruction's shape (v_mfma_f32_32x32x8bf16: 16,384 per wave), so not FLOP; the MOPS
# counters (MI200, MI300) count FLOP / 512 (review r9 F3)
_MFMA_INSTS = ("SQ_INSTS_MFMA", *(f"SQ_INSTS_VALU_MFMA_{p}"
                                  for p in ("F8", "F16", "BF16", "F32", "F64", "I8")))
_MFMA_SPELLINGS = {s: n for n in _MFMA_INSTS for s in (n, f"{n}_sum")}


@lru_cache(maxsize=64)
def _mfma_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in keys if k in _MFMA_SPELLINGS)


def mfma_note(m: Mapping[str, float]) -> str:
    """The note on matrix-core instructions counted but not as FLOP ('' when none ran)."""
    ran = [k for k in _mfma_keys(tuple(m)) if m[k] == m[k] and m[k] > 0]
    if not ran:
        return ""
    named = ", ".join(f"{k} {m[k]:.0f}" for k in ran)
    mops = sorted({_MFMA_SPELLINGS[k].replace("SQ_INSTS_VALU_MFMA_", "SQ_INSTS_VALU_MFMA_MOPS_")
                   for k in ran if _MFMA_SPELLINGS[k] != "SQ_INSTS_MFMA"}) or \
        ["SQ_INSTS_VALU_MFMA_MOPS_<F16|BF16|F32|F64|I8|F8>"]
    return (f"matrix-core instructions ran ({named}) but are not counted as FLOP (an "
            f"instruction's FLOP depend on its shape): collect {', '.join(mops)} (MI200/MI300; "
            f"MI100 has no MOPS counters, so its matrix FLOP cannot be counted); the FLOP "
            f"here are the vector ones only")


def recording_device(specs) -> tuple[str | None, str | None]:
    """(the --on that names the AMD GPU a rocprof file was recorded on, a note or None),
    from every --on given (plot takes several): the first naming an Instinct GPU or a
    rocprof-compute workload folder, whatever comes before it (a profile, an NVIDIA roof),
    since a counter CSV does not record its GPU and that GPU decides the line size (above)
    and the occupancy's limits (rocprof_occupancy.target_gfx). Another --on naming an AMD
    GPU read otherwise is only drawn: the note says which GPU the counters were read as."""
    from .rocprof_occupancy import target_gfx

    def reading(spec):
        return (target_gfx(spec, []), mi300_of_device(spec))

    named = [s for s in specs if reading(s) != (None, None)]
    if not named:
        return None, None
    first, others = named[0], [s for s in named[1:] if reading(s) != reading(named[0])]
    if not others:
        return first, None
    gfx, mi300 = reading(first)
    lines = "128-B" if mi300 else "64-B"
    return first, (f"rocprof counters read as recorded on --on {first} ({gfx or 'its GPU'}: "
                   f"its occupancy limits, and {lines} L1 lines where the counters do not "
                   f"tell; a counter CSV does not record its GPU); "
                   f"{', '.join(f'--on {s}' for s in others)} only drawn: put the GPU "
                   f"that recorded the file first among the --on")
