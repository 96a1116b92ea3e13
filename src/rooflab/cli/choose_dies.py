"""`rooflab choose` on a catalog package that is several devices to software (MI250X).

The catalog's MI250X is one package of two graphics compute dies, "each a separate device
to software (64 GB, 1.64 TB/s each)" (its note; `software_devices = 2` in amd.toml). Ranked
as the package (3.28 TB/s, 128 GB) it came out 1.54x ahead of an A100 for a decode step one
process runs on 1.64 TB/s, about 21 ms, slower than the A100; the 10.4 ms needs the work
split across the dies over their link (review s20 r5 F2). So choose ranks one die, what
one process sees: model.choose.rank splits the package's roof (model/dies.py), and here
the memory and the row's mark take the same count, from the same rule: the roof's
model.dies.software_devices, the one place the catalog's field is read back (review s20
x2 F7: this module read the field while rank() read the roof, two rules that could drift).
"""

from __future__ import annotations

# the catalog's own words for the package ("two graphics compute dies in one package; each
# is a separate device to software (64 GB, 1.64 TB/s each)"), quoted under the table; the
# count is never read from them
_SEPARATE = "separate device to software"


def software_devices(dev) -> tuple[int, str]:
    """(how many devices software sees in one catalog package, the catalog's own note that
    describes them, "" where it has none); (1, "") for a device that is one. The count is
    model.dies.software_devices of the device's roof, as rank() takes it."""
    from ..model.dies import software_devices as roof_dies

    n = roof_dies(dev.roof)
    if n <= 1:
        return 1, ""
    return n, next((s for s in getattr(dev, "notes", ()) if _SEPARATE in s), "")


def catalog_entries(names):
    """(name, catalog Device) for each of names the catalog holds (profile files and
    unknown names left out)."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup

    for name in names:
        try:
            yield name, lookup(name)
        except RooflabError:
            continue


def die_notes(names) -> list[str]:
    """The line under the table for each ranked device that is several to software."""
    from ..model.dies import die_note

    out = []
    for name, dev in catalog_entries(names):
        dies, said = software_devices(dev)
        if dies > 1:
            out.append(die_note(name, dies) + (f" (the catalog: \"{said}\")" if said else ""))
    return out


def die_count(name: str) -> int:
    """software_devices of a catalog name; 1 for a profile file or an unknown name."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup

    try:
        return software_devices(lookup(name))[0]
    except RooflabError:
        return 1


def platform_max(names) -> list[str]:
    """"Name (4 TB)" for each catalog CPU among names: its memory is a platform maximum
    (Device.memory_is_platform_max), not installed RAM (review 19d N1)."""
    from ..units import si

    return [f"{name} (at most {si(dev.memory_bytes, 'B')})"
            for name, dev in catalog_entries(names) if dev.memory_is_platform_max]
