"""A MIG slice: the profile in a device name and its share of the whole card's nominal roof."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# --- a MIG slice: its share of the card -------------------------------------------------
# CUDA names a MIG device "<card> MIG <g>g.<GB>gb" ("NVIDIA A100-SXM4-80GB MIG 1g.10gb"; a
# compute instance of part of it "MIG 1c.3g.40gb"). NVIDIA MIG User Guide, "Supported MIG
# Profiles": a card has 7 compute slices and 8 memory slices; a profile's memory and L2
# are its memory slices / 8 (A100 80GB: 1g.10gb 1/8, 2g.20gb 2/8, 3g.40gb 4/8, 7g.80gb
# 8/8), its SMs its compute slices' (A100: 14 per slice, 98 in a 7g of the card's 108).
_MIG_RE = re.compile(r"\s*\bMIG\s+(?:\d+c\.)?(\d+)g\.(\d+)gb\b(?:\+me)?", re.IGNORECASE)
MIG_COMPUTE_SLICES = 7
MIG_MEMORY_SLICES = 8
# Memory levels a slice owns its share of; the host link (PCIe) is the card's, not split.
_MIG_SPLIT_LEVELS = ("DRAM", "L2")


@dataclass(frozen=True)
class MigProfile:
    """A MIG profile read from a device name."""

    profile: str        # "1g.10gb" (compute-instance prefix and "+me" dropped)
    slices: int         # compute slices (GPCs), of MIG_COMPUTE_SLICES
    memory_gb: int      # the profile's memory, GB as NVIDIA rounds it
    card: str           # the device name less the profile: the whole card's name


def mig_profile(name: str) -> MigProfile | None:
    """'NVIDIA A100-SXM4-80GB MIG 1g.10gb' -> MigProfile('1g.10gb', 1, 10, 'NVIDIA
    A100-SXM4-80GB'); None for a name without a MIG profile (a whole card)."""
    m = _MIG_RE.search(name or "")
    if m is None or not 1 <= int(m.group(1)) <= MIG_COMPUTE_SLICES or int(m.group(2)) <= 0:
        return None
    card = (name[:m.start()] + name[m.end():]).strip()
    return MigProfile(f"{int(m.group(1))}g.{int(m.group(2))}gb", int(m.group(1)),
                      int(m.group(2)), card)


def mig_memory_slices(memory_gb: float, card_gb: float | None) -> int | None:
    """The profile's memory slices (eighths of the card): its GB over the card's, to the
    nearest eighth (H200 141GB: 1g.18gb -> 1, 3g.71gb -> 4); None when the card's size is
    unknown or the share is no whole eighth within a quarter slice (not this card's)."""
    if not card_gb or card_gb <= 0:
        return None
    share = memory_gb / card_gb * MIG_MEMORY_SLICES
    n = round(share)
    return n if 1 <= n <= MIG_MEMORY_SLICES and abs(share - n) <= 0.25 else None


def mig_roof(roof, mig: MigProfile, *, card_sms: int | None, slice_sms: int | None,
             card_gb: float | None):
    """(the slice's nominal Roof, its name): compute ceilings x slice SMs / card SMs (both
    known; else compute slices / 7: a 7g has fewer SMs than the card, so that reads high),
    DRAM and L2 x memory slices / 8; the host link as the card's. Every scaled ceiling is
    "derived", its method saying how. Memory left at the card's figure (with a note) when
    the profile's GB does not give whole eighths of the card's."""
    tag = f"MIG {mig.profile}"
    if card_sms and slice_sms and slice_sms <= card_sms:
        c_num, c_den, c_how = slice_sms, card_sms, f"{slice_sms} of {card_sms} SMs"
    else:
        unknown = "the slice's SM count not read" if card_sms else \
            "the catalog gives no SM count for the card"
        c_num, c_den = mig.slices, MIG_COMPUTE_SLICES
        c_how = f"{mig.slices} of {MIG_COMPUTE_SLICES} compute slices ({unknown})"
    slices = mig_memory_slices(mig.memory_gb, card_gb)
    notes = [f"{tag}: a slice of the {roof.name}; compute x {c_how}"]

    def compute(c):
        return replace(c, value=c.value * c_num / c_den, provenance="derived",
                       method=f"{tag}: {c_how} x {c.value / 1e12:g} TFLOP/s")

    def memory(c):
        if slices is None or c.level not in _MIG_SPLIT_LEVELS:
            return c
        return replace(c, value=c.value * slices / MIG_MEMORY_SLICES, provenance="derived",
                       method=f"{tag}: {slices} of {MIG_MEMORY_SLICES} memory slices x "
                              f"{c.value / 1e9:g} GB/s")
    if slices is None:
        size = f"the card's {card_gb:g} GB" if card_gb else "the card, whose size is unknown"
        notes.append(f"{tag}: {mig.memory_gb} GB is no whole eighth of {size}: memory "
                     f"ceilings left at the whole card's")
    else:
        notes.append(f"{tag}: DRAM and L2 x {slices} of {MIG_MEMORY_SLICES} memory slices "
                     f"({mig.memory_gb} GB of {card_gb:g}); the host link is the card's")
    name = f"{roof.name} {tag} (derived)"
    return replace(roof, name=name, compute=tuple(map(compute, roof.compute)),
                   memory=tuple(map(memory, roof.memory)),
                   notes=roof.notes + tuple(notes)), name
