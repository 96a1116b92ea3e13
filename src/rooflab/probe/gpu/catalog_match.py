"""The catalog entry behind the probe's nominal roof: by the device name, the board model,
the device memory and SM count; one die of a multi-die package; a MIG slice's share."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...units import fmt_fraction
from . import board as device_tree  # read at call time: tests point BOARD_MODEL elsewhere
from .mig import MigProfile, mig_profile, mig_roof


def _one_die(dev, roof, memory_bytes: float | None):
    """The nominal roof of one die when the device shows 1/n of a multi-die entry's memory
    (derived: the package figure / n; the host link is per die already), else `roof`.

    A package whose dies are separate devices to software: the MI250X's two graphics
    compute dies each show as one GPU with half the package's memory, bandwidth and compute
    ("AMD Instinct MI250 microarchitecture", ROCm docs: 1.6 TB/s and 64 GB per GCD, each
    with its own PCIe x16 link). ROCm names each die "AMD Instinct MI250X / MI250" (an
    MI250's die, 104 CUs to the MI250X's 110, gets the same name: its compute is 104/110
    of this). n is the catalog's `software_devices`, read as every verb reads it
    (model.dies.software_devices of the entry's roof; review s20 x2 F7)."""
    from ...model.dies import software_devices, without_note

    n = software_devices(dev.roof)
    if n <= 1 or not memory_bytes or not dev.memory_bytes \
            or not 0.8 < memory_bytes * n / dev.memory_bytes < 1.2:
        return roof, dev.name
    why = (f"one of the {n} dies of the {dev.name} (each is its own device): the package's "
           f"datasheet figure / {n}")

    def part(c):
        if c.level == "PCIe":
            return c
        return replace(c, value=c.value / n, provenance="derived",
                       source=f"{why}; {c.source}".rstrip("; "))
    name = f"{dev.name}, one die"
    return replace(roof, name=name, compute=tuple(map(part, roof.compute)),
                   memory=tuple(map(part, roof.memory)),
                   notes=(*without_note(roof.notes), why)), name


def catalog_roof(name: str, cc: str | None = None, *, memory_bytes: float | None = None):
    """(nominal Roof, catalog name) for a device name, or (None, reason) when unmatched or
    when the entry's compute capability differs from the device's (a wrong match).
    `memory_bytes` (the device's own) tells one die of a multi-die package (MI250X) from the
    package: its roof is then the package's figures divided among the dies."""
    try:
        from ...hardware.catalog import match_device_name
    except ImportError:
        return None, "the hardware catalog is not available in this rooflab"
    try:
        dev = match_device_name(name)
    except Exception as exc:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return None, f"catalog lookup failed: {exc}"
    if dev is None:
        return None, f"no catalog entry matches '{name}'"
    if cc and dev.compute_capability and dev.compute_capability != cc:
        return None, (f"catalog entry '{dev.name}' (compute capability "
                      f"{dev.compute_capability}) matched '{name}', but this device is {cc}: "
                      f"not used")
    link = dev.host_link_ceiling
    # The probe measures the host link too: its nominal figure goes beside it (the catalog's
    # own roofs leave links out, so charts of datasheet roofs stay cache/DRAM only).
    roof = replace(dev.roof, memory=dev.roof.memory + (link,)) if link else dev.roof
    return _one_die(dev, roof, memory_bytes)


@dataclass(frozen=True)
class CatalogMatch:
    """The catalog entry behind the probe's nominal roof and how it was found."""

    roof: Any | None              # the nominal Roof, None when no entry is used
    entry: str | None             # the catalog name
    how: str | None               # "matched by the device name ..." / "... board model ..."
    note: str | None              # why there is no nominal roof
    unified_memory: bool = False  # the entry's GPU shares DRAM with the CPU (Jetson)
    mig_profile: str | None = None  # "1g.10gb" when the device is a MIG slice


def _catalog_unified(text: str) -> bool:
    try:
        from ...hardware.catalog import is_unified_memory
        return is_unified_memory(text)
    except Exception:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return False


def _entries_named(name: str, cc: str | None) -> list[Any]:
    """Catalog entries (of this compute capability) whose names hold every word of `name`:
    the six Jetson Orins for 'Orin'. More than one means the name cannot decide."""
    try:
        from ...hardware.catalog import all_devices
        from ...hardware.names import tokens
    except ImportError:
        return []
    words = set(tokens(name))
    return [d for d in all_devices() if words and words <= set(tokens(d.name))
            and (cc is None or d.compute_capability in (None, cc))]


# --- the device's memory decides between modules of one name ------------------------------
# A Jetson module's "GB" is binary (16 GB of LPDDR5 = 16 GiB) and torch's total_memory is
# the kernel's view, less carve-outs (firmware, display, camera): an Orin NX 16GB reports
# 14.15 GiB (deviceQuery: 15189422080 bytes), an 8 GB module about 7.4 GiB. Never more.
# Tolerance 25 % under the nominal size: room for a 4 GB module's proportionally larger
# carve-out, while sizes a factor 2 apart (4, 8, 16, 32, 64 GB) never share a reading.
MEMORY_TOLERANCE = 0.25
GIB = float(1 << 30)
# Orin products at the memory size of a catalog module that are not themselves an entry:
# (name, GB, the catalog entry with the same roof, or None for another roof). The first
# Jetson AGX Orin Developer Kit (2022) has 32 GB with the 64GB module's GPU (the 64GB
# entry's roof); the AGX Orin Industrial (JAOi, DS-10662-001: 64 GB, GPU 1.185 GHz) has
# another. Their sizes cannot decide: 30 GiB or 61 GiB alone names no one roof. The SM
# count can, in part: an optional 4th field gives a product's SMs where no same-roof entry
# does (the Industrial module: 2048 CUDA cores, 16 SMs, as the 64GB), so a 14-SM device
# reporting 30 GiB is the AGX Orin 32GB, not the 2022 kit (16 SMs, the 64GB's GPU).
OFF_CATALOG = (("Jetson AGX Orin Developer Kit (2022, 32 GB)", 32, "NVIDIA Jetson AGX Orin 64GB"),
               ("Jetson AGX Orin Industrial", 64, None, 16))
# Words of a board model that make another product than a catalog entry (names.VARIANTS,
# and 'industrial'); 'super' is not one on a Jetson board: it is the same module run in
# MAXN_SUPER ("... Developer Kit Super"), the mode the catalog's Orin NX and Nano 8GB use.
_OTHER_PRODUCT = frozenset({"industrial"})


def _fits(gb: float, memory_bytes: float, tolerance: float) -> bool:
    """The reported memory is at most `gb` GiB and at most `tolerance` under it."""
    return (1 - tolerance) * gb <= memory_bytes / GIB <= gb


def _nominal_gb(device) -> float | None:
    mem = getattr(device, "memory_bytes", None)
    return mem / 1e9 if mem else None      # the catalog stores GB as 1e9 bytes


def pick_by_memory(candidates, memory_bytes: float | None, *, others=OFF_CATALOG,
                   tolerance: float = MEMORY_TOLERANCE):
    """Of several catalog entries that fit a device's name, the one whose nominal memory
    is nearest at or above the device's reported `memory_bytes` and within `tolerance`
    under it; None when no size fits, or when products with different roofs share the
    size that fits (Orin Nano 8GB and Orin NX 8GB both fit 7.4 GiB: the name must tell
    them apart first, else nothing is picked). `others`: (name, GB, same-roof entry name
    or None[, SMs]) for products that are not catalog entries; those whose family (name less
    size) is one of a candidate's count as rivals at their size. Pure: candidates need
    .name and .memory_bytes (GB x 1e9)."""
    from ...hardware.names import tokens, without_size

    if not memory_bytes or memory_bytes <= 0 or not candidates:
        return None
    sized = [(gb, d.name, d) for d in candidates if (gb := _nominal_gb(d))]
    families = {without_size(d.name) for d in candidates}
    sized += [(gb, same or name, None) for name, gb, same, *_ in others
              if any(f <= set(tokens(name)) for f in families)]
    fitting = sorted({gb for gb, _, _ in sized if _fits(gb, memory_bytes, tolerance)})
    if not fitting:
        return None
    at = [(roof, d) for gb, roof, d in sized if gb == fitting[0]]
    if len({roof for roof, _ in at}) != 1:
        return None
    roof = at[0][0]
    return next((d for d in candidates if d.name == roof), None)


def _holds(entry: str, memory_bytes: float, tolerance: float = MEMORY_TOLERANCE) -> bool:
    """Whether a device reporting `memory_bytes` can be the catalog entry `entry` (its
    own size, or a size another product with its roof comes in)."""
    try:
        from ...hardware.catalog import lookup
        gb = _nominal_gb(lookup(entry))
    except Exception:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return True
    sizes = ([gb] if gb else []) + [g for _, g, same, *_ in OFF_CATALOG if same == entry]
    return not sizes or any(_fits(g, memory_bytes, tolerance) for g in sizes)


def _board_family(name: str, cc: str | None, board: str | None) -> list[Any]:
    """The entries fitting the device name that the board model names less a memory size
    ('NVIDIA Jetson Orin NX Engineering Reference Developer Kit': both Orin NX); without
    a board, all that fit the name. A board naming another product ('Industrial') or
    none of them: none."""
    named = _entries_named(name, cc)
    if not board:
        return named
    from ...hardware.names import VARIANTS, tokens, without_size

    said = set(tokens(board))
    other = (VARIANTS - {"super"}) | _OTHER_PRODUCT
    out = []
    for d in named:
        own = {t for label in (d.name, *d.aliases) for t in tokens(label)}
        if without_size(d.name) <= said and not (said - own) & other:
            out.append(d)
    return out


def _entry_sms(entry: str | None) -> int | None:
    """The catalog entry's SM count, None where it gives none (or there is no such entry)."""
    return getattr(_entry_device(entry), "sms", None) if entry else None


def _entry_device(entry: str | None):
    """The catalog entry named `entry`, None where there is none."""
    try:
        from ...hardware.catalog import all_devices
        return next((d for d in all_devices() if d.name == entry), None)
    except Exception:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return None


def _match_mig(name: str, mig: MigProfile, cc: str | None, sms: int | None) -> CatalogMatch:
    """A MIG slice: the whole card by the name less the profile, then the slice's share of
    its nominal roof (mig_roof). The card's SM count is not the slice's, so it is not
    checked for equality; it is used for the share. A slice reporting more SMs than the
    card has cannot be a slice of it."""
    card, entry = catalog_roof(mig.card, cc)
    if card is None:
        return CatalogMatch(None, None, None, f"a MIG {mig.profile} slice, but {entry}",
                            mig_profile=mig.profile)
    dev = _entry_device(entry)
    card_sms = getattr(dev, "sms", None)
    if sms and card_sms and sms > card_sms:
        return CatalogMatch(None, None, None,
                            f"'{name}' names a MIG {mig.profile} slice of {entry}, but the "
                            f"device has {sms} SMs, more than the card's {card_sms}: not used",
                            mig_profile=mig.profile)
    roof, got = mig_roof(card, mig, card_sms=card_sms, slice_sms=sms,
                         card_gb=_nominal_gb(dev) if dev is not None else None)
    return CatalogMatch(roof, got,
                        f"matched as a MIG slice: the device name '{name}' less 'MIG "
                        f"{mig.profile}' names {entry}; its nominal roof scaled to the "
                        f"slice's share ({'; '.join(roof.notes[-2:])})", None,
                        mig_profile=mig.profile)


def _sms_fit(device, sms: int | None) -> bool:
    """Whether a catalog entry can be a device with `sms` SMs: it gives no count, or the
    same one (nothing is checked when the device's count is unknown)."""
    own = getattr(device, "sms", None)
    return not sms or not own or own == sms


def _sms_clash(entry: str | None, sms: int | None) -> str | None:
    """'the device has 14 SMs, X has 16' when the entry's SM count is not the device's."""
    own = _entry_sms(entry)
    if sms and own and own != sms:
        # AMD's are compute units: a CPX partition of an MI300X has 38 of its 304 (s28 R4 F8)
        unit = "CUs" if "AMD" in str(entry) else "SMs"
        return f"the device has {sms} {unit}, {entry} has {own}"
    return None


# A device reporting this much more memory than an entry's (decimal GB against torch's
# bytes) cannot be that product: 'NVIDIA GH200' with 142.5 GiB is not the 96 GB GH200. Loose
# (the B200's catalog 180 GB is usable memory of 192 physical) so a real card never fails.
MEMORY_OVER = 0.1


def _memory_clash(entry: str | None, memory_bytes: float | None) -> str | None:
    """'the device has 142.50 GiB, more than X's 96 GB' when the device reports over
    MEMORY_OVER more memory than the entry has (entries of the same SM count, H100 SXM,
    H200 and both GH200s, are told apart so); never for unified memory, where the
    catalog's figure is the whole board's."""
    dev = _entry_device(entry)
    gb = _nominal_gb(dev) if dev is not None else None
    if not memory_bytes or not gb or getattr(dev, "unified_memory", False) \
            or memory_bytes <= gb * 1e9 * (1 + MEMORY_OVER):
        return None
    return f"the device has {memory_bytes / GIB:.2f} GiB, more than {entry}'s {gb:g} GB"


def _rivals(sms: int | None) -> tuple:
    """OFF_CATALOG less the products whose SM count (their own, or their same-roof
    entry's) is known and is not the device's."""
    if not sms:
        return OFF_CATALOG
    out = []
    for rival in OFF_CATALOG:
        own = rival[3] if len(rival) > 3 else _entry_sms(rival[2])
        if not own or own == sms:
            out.append(rival)
    return tuple(out)


def _by_memory(name: str, cc: str | None, board: str | None, memory_bytes: float | None,
               sms: int | None = None):
    """(entry, family) when the device's memory picks one of the entries its name and
    board fit (and its SM count, where both it and the entry give one); (None, family)
    otherwise."""
    family = [d for d in _board_family(name, cc, board) if _sms_fit(d, sms)]
    if memory_bytes and family:
        return pick_by_memory(family, memory_bytes, others=_rivals(sms)), family
    return None, family


# match_catalog reads the board's power mode itself unless given one (tests, callers that
# read it already); None: no power mode (not a Jetson, or not read).
READ_POWER_MODE = object()


def _entry_mhz(entry: str | None) -> float | None:
    """The GPU clock (MHz) the entry's peaks assume (its `gpu_ghz`: Jetson), else None."""
    ghz = (getattr(_entry_device(entry), "inputs", None) or {}).get("gpu_ghz") if entry \
        else None
    return ghz * 1000 if ghz else None


def _with_power_mode(m: CatalogMatch, mode) -> CatalogMatch:
    """The match with a note in its roof and `how` when the running power mode caps the
    GPU below the clock the entry's peaks assume (Jetson nvpmodel, board.power_mode)."""
    nominal_mhz = _entry_mhz(m.entry) if m.roof is not None else None
    if nominal_mhz is None:
        return m
    if mode is READ_POWER_MODE:
        mode = device_tree.power_mode()
    note = device_tree.power_mode_note(mode, nominal_mhz)
    if note is None:
        return m
    return replace(m, roof=replace(m.roof, notes=m.roof.notes + (note,)),
                   how=f"{m.how}; {note}")


def match_catalog(name: str, cc: str | None = None, *, memory_bytes: float | None = None,
                  board: str | None = None, sms: int | None = None,
                  integrated: bool | None = None,
                  power_mode=READ_POWER_MODE) -> CatalogMatch:
    """_match_catalog, and on a board whose power mode (`power_mode`: board.power_mode's
    dict, None for none; by default read from the board's nvpmodel files) caps the GPU
    below the clock of the matched entry's peaks, a note saying by how much."""
    return _with_power_mode(_match_catalog(name, cc, memory_bytes=memory_bytes, board=board,
                                           sms=sms, integrated=integrated), power_mode)


def _match_catalog(name: str, cc: str | None = None, *, memory_bytes: float | None = None,
                   board: str | None = None, sms: int | None = None,
                   integrated: bool | None = None) -> CatalogMatch:
    """The nominal roof by the device's name, else by the board's model string (a Jetson
    is just "Orin" to torch; /proc/device-tree/model names the module), else by the
    device's memory among the entries the name (and board) fit: the NX developer kit or
    a bare "Orin" in a container (no device tree) with 14.2 GiB is the Orin NX 16GB.
    Memory also overrules a board model that names a module of another size (a 4 GB
    Orin Nano on the Nano developer kit's carrier). `sms` (torch's multi_processor_count)
    rules out every candidate whose catalog SM count differs: an AGX Orin 32GB module (14
    SMs) on the developer kit's carrier is not the 64GB (16); entries of one SM count (H100
    SXM, H200, both GH200s: 132) differ in memory, and a name's entry is not used for a
    device with over MEMORY_OVER more memory ('NVIDIA GH200' with 142.5 GiB: the memory
    then picks the 144GB entry). The board model is used only
    on an integrated GPU, or where `integrated` is unknown (None): a discrete GPU in a
    Jetson's PCIe slot is not the module. A MIG slice ('... MIG 1g.10gb') gets its share of
    the whole card's roof (_match_mig). Never a guess: when none decides, no roof and a
    note saying so."""
    mig = mig_profile(name)
    if mig is not None:
        # A slice's SMs are its share of the card's, never the card's count: its own path.
        return _match_mig(name, mig, cc, sms)
    rejected: list[str] = []     # candidates named by the name or board, and why not used
    roof, got = catalog_roof(name, cc, memory_bytes=memory_bytes)
    if roof is not None:
        clash = _sms_clash(got, sms) or _memory_clash(got, memory_bytes)
        if clash is None:
            return CatalogMatch(roof, got, f"matched by the device name '{name}'", None,
                                _catalog_unified(name))
        got = f"the device name '{name}' names {got}, but {clash}"
        rejected.append(got)
    mem = f"{memory_bytes / GIB:.2f} GiB" if memory_bytes else None
    if board and integrated is False:
        got = (f"{got}; the board model '{board}' is not used: the device does not report "
               f"itself integrated (a discrete GPU is not the board's own)")
        board = None
    if board:
        by_board, board_got = catalog_roof(board, cc, memory_bytes=memory_bytes)
        clash = _sms_clash(board_got, sms) if by_board is not None else None
        if by_board is not None and clash is None \
                and (not memory_bytes or _holds(board_got, memory_bytes)):
            return CatalogMatch(by_board, board_got,
                                f"matched by the board model '{board}' "
                                f"({device_tree.BOARD_MODEL}); the device name alone did "
                                f"not decide ({got})", None,
                                _catalog_unified(board))
        if by_board is not None:
            why = clash or f"this device's {mem} cannot be its memory"
            rejected.append(f"the board model '{board}' names {board_got}, but {why}")
            got = f"{got}; {rejected[-1]}"
        else:
            got = f"{got}; nor does the board model '{board}' ({board_got})"
    picked, family = _by_memory(name, cc, board, memory_bytes, sms)
    if picked is not None:
        roof, entry = catalog_roof(picked.name, cc, memory_bytes=memory_bytes)
        if roof is not None:
            among = ", ".join(d.name for d in family)
            whose = f"the board model '{board}'" if board else f"the device name '{name}'"
            if sms and any(getattr(d, "sms", None) for d in family):
                whose += f" and the device's {sms} SMs"
            overruled = f" ({'; '.join(rejected)})" if rejected else ""
            return CatalogMatch(roof, entry,
                                f"matched by the device memory: {mem} (torch's total_memory) "
                                f"fits {entry}'s {_nominal_gb(picked):g} GB (at most "
                                f"{fmt_fraction(MEMORY_TOLERANCE)} under it) and no other of the "
                                f"entries {whose} {'fit' if ' and ' in whose else 'fits'} "
                                f"({among}){overruled}", None,
                                _catalog_unified(picked.name))
    several = _entries_named(name, cc)
    if len(several) > 1:
        tell = "the board model does not tell" if board else "there is no board model to tell"
        size = (f", nor does the device memory ({mem}) name one of them"
                if mem else ", and no device memory was given")
        if sms and any(d.sms for d in several):
            fit = [d.name for d in several if _sms_fit(d, sms)]
            size += (f"; its {sms} SMs fit {len(fit)} of them"
                     + (f" ({', '.join(fit)})" if fit else ""))
        got = (f"{got}: '{name}' names {len(several)} catalog entries "
               f"({', '.join(d.name for d in several)}) and {tell} them apart{size}; not "
               f"guessed, so no nominal roof")
    return CatalogMatch(None, None, None, got)
