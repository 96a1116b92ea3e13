"""Why a typed device name is refused: the errors DeviceIndex.lookup raises where a name
finds an entry but says something the entry is not (a GPU bin, a die, a ':' suffix, a
word no device name has), or finds none though its family is there (a memory size or a
board the family is not sold as). Each names what there is instead; no silent pick of
another product's roof. Split from names.py (s37 D), which matches; this refuses.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import HardwareNotFound
from .name_words import DIE_WORD
from .names import (
    BIN,
    SIZE,
    also_named,
    board_words,
    card_board,
    family_tokens,
    gpu_bin,
    short_name,
    tokens,
    typed_gpu_cores,
)


def _die_count(found: Any) -> int:
    """How many devices to software the entry's package is (model/dies.py); 1 for others."""
    from ..model.dies import software_devices

    roof = getattr(found, "roof", None)
    return software_devices(roof) if roof is not None else 1


def _dies_words(stem: str, dies: int) -> str:
    """'MI250X:die0 or MI250X:die1'; 'X:die0 ... X:die3' past two."""
    return f"{stem}0 or {stem}1" if dies == 2 else f"{stem}0 ... {stem}{dies - 1}"


def refuse_odd_words(ix: Any, text: str, found: Any) -> None:
    """HardwareNotFound for a word no catalog or driver name has ('h100 foo': the
    H100's words are inside it, so it was the H100 SXM, 'foo' dropped; s36 O), in the
    name before a ':', ',' or '(' (refuse_suffix's part; a roof's own notes follow)."""
    from .name_words import odd_words

    head = re.split(r"[,(:]", text, maxsplit=1)[0]
    odd = odd_words(tokens(head), ix._own[found.name], ix._vocabulary)
    if not odd:
        return
    rest = " ".join(t for t in tokens(head) if t not in odd)
    choices = [found, *also_named(rest, found, ix.devices)]
    many = len(odd) > 1
    raise HardwareNotFound(
        f"unknown hardware '{text}': no catalog or driver name has the word"
        f"{'s' * many} {', '.join(repr(w) for w in odd)}; without {'them' if many else 'it'}"
        f" the name is {' or '.join(short_name(d.name) for d in choices)}: give one of "
        f"those, or see `rooflab specs list`")

def refuse_suffix(ix: Any, text: str, found: Any) -> None:
    """HardwareNotFound for a ':SUFFIX' other than one of a package's dies, and for a
    die index past them ('h100:foo', 'mi250x:die9'): the entries match loosely (an
    entry's words inside the query, as a driver's verbose name needs), so such a word
    was dropped without a word (s36 I). No catalog, driver or roof name has a ':'
    before its parentheses or a comma (', one die', '(derived: ...)'); a typed one
    is the user's."""
    head = re.split(r"[,(]", text, maxsplit=1)[0]
    name, colon, suffix = head.partition(":")
    dies = _die_count(found)
    short = short_name(found.name)
    for m in (DIE_WORD.match(t) for t in tokens(head)):
        if m and m[2] is not None and not (dies > 1 and int(m[2]) < dies):
            raise HardwareNotFound(
                f"unknown hardware '{text}': {found.name} is " + (
                    f"{dies} dies to software, {_dies_words(f'{short}:{m[1]}', dies)}; "
                    f"give one, or '{short}' alone (the kernel verbs, choose and train "
                    f"judge one die)" if dies > 1
                    else f"one device, no dies to pick: give '{short}'"))
    if not colon or all(DIE_WORD.match(t) for t in tokens(suffix)):
        return
    choices = [found, *also_named(name, found, ix.devices)]
    raise HardwareNotFound(
        f"unknown hardware '{text}': a catalog name takes no ':{suffix.strip()}'; "
        f"'{name.strip()}' is {' or '.join(short_name(d.name) for d in choices)}"
        + (f" (one of its dies: {_dies_words(f'{short}:die', dies)})" if dies > 1 else "")
        + ": give one of those (`rooflab specs list` shows all)")

def refuse_gpu_cores(ix: Any, text: str, found: Any) -> None:
    """HardwareNotFound where the name gives a GPU core count the entry it resolved to
    does not have ('M3 Max 35-core' read as the 40-core part): the counts there are,
    as refuse_size does for memory sizes; no silent pick of another bin's roof."""
    cores = gpu_bin(found.name)
    asked = typed_gpu_cores(text)
    if cores is None or not asked or cores in asked:
        return
    family = family_tokens(found.name)
    bins = sorted((d for d in ix.devices if gpu_bin(d.name) is not None
                   and family_tokens(d.name) == family), key=lambda d: gpu_bin(d.name))
    plain = BIN.sub("", short_name(found.name))
    counts = " or ".join(f"{gpu_bin(d.name)}-core" for d in bins)
    raise HardwareNotFound(
        f"no {'/'.join(f'{n}-core' for n in sorted(asked))} GPU '{plain}' in the catalog: "
        f"the {plain} comes with a {counts} GPU ({', '.join(d.name for d in bins)}); "
        f"give one of those, e.g. '{plain} {gpu_bin(bins[0].name)}-core', or the name "
        f"without a count (the {gpu_bin(bins[-1].name)}-core part)")


def refuse_size(ix: Any, text: str, q: frozenset[str]) -> None:
    """HardwareNotFound listing the sizes there are, when the name less its memory size
    ('v100 16gb' -> 'v100') names entries but none in that size: no silent pick."""
    asked = sorted(t for t in q if SIZE.match(t))
    rest = q - set(asked)
    if not asked or not rest:
        return
    found = ix._containing(rest) or ix._within_query(rest)
    if not found:
        return
    sizes = sorted({s for dev in found for s in ix._sizes[dev.name]}
                   | {f"{dev.memory_bytes / 1e9:g}gb" for dev in found
                      if not ix._sizes[dev.name] and getattr(dev, "memory_bytes", 0)},
                   key=lambda s: float(s[:-2]))
    family = re.sub(r"[\s_-]*(?<![a-z0-9.])\d+\s*(?:gi?b|g(?!\.\d))\b", "", text,
                    flags=re.IGNORECASE).strip(" -_")
    names = ", ".join(dev.name for dev in found[:8])
    raise HardwareNotFound(
        f"no {' '.join(s.upper() for s in asked)} '{family}' in the catalog: "
        f"{family} comes as {' or '.join(s.upper() for s in sizes)} in the catalog "
        f"({names}); give one of those sizes, or the name without one")


# A board word a product's card is sold under another name: NVIDIA's PCIe cards of the
# H100 and H200 are the NVL boards (dual-slot PCIe Gen5 cards with an NVLink bridge: the
# catalog's H100 NVL and H200 NVL, NVIDIA's H200 page's "H200 NVL" column); there is no
# 'H200 PCIe', and 'pcie' is what people type for it.
SOLD_AS = {"pcie": "nvl"}
_BOARD_WORDS = {"pcie": "PCIe", "sxm": "SXM", "nvl": "NVL"}


def _family_name(devices) -> str:
    """'H200' of [H200 SXM, H200 NVL]: the shortest short name less its board and size."""
    words = min((short_name(d.name) for d in devices), key=len).split()
    kept = [w for w in words if not (set(tokens(w)) & set(_BOARD_WORDS))
            and not all(SIZE.match(t) for t in tokens(w) or ("",))]
    return " ".join(kept) or words[0]


def refuse_other_board(ix: Any, text: str, q: frozenset[str]) -> None:
    """HardwareNotFound where the name less its board word (PCIe, SXM, NVL) is a family the
    catalog has, but not on that board ('H200 PCIe': the H200 comes as SXM and NVL): the
    boards there are, and the one meant where the word is sold under another name
    (SOLD_AS: its PCIe card is the H200 NVL). An unknown name said so, with 'did you
    mean: H100 PCIe, A800 80GB PCIe, ...', other products' roofs (s37 D)."""
    boards = {t for t in q if t in _BOARD_WORDS}
    rest = frozenset(t for t in q if not SIZE.match(t)) - set(_BOARD_WORDS)
    family = [d for d in ix.devices if rest and family_tokens(d.name) == rest]
    if not boards or not family or any(boards <= ix._own[d.name] for d in family):
        return
    name = _family_name(family)
    board = " ".join(_BOARD_WORDS[b] for b in sorted(boards))
    boards_there = ", ".join(short_name(d.name) for d in family)
    # one board word only: 'h200 sxm pcie' names two boards, and its SXM is there (s37 R)
    meant = [d for d in family for b in boards
             if len(boards) == 1 and SOLD_AS.get(b) in ix._own[d.name]]
    if meant:
        seller = getattr(meant[0], "vendor", "") or "its maker"
        raise HardwareNotFound(
            f"unknown hardware '{text}': {seller} sells no {name} {board}; the {name}'s "
            f"{board} card is the {short_name(meant[0].name)} (the catalog has "
            f"{boards_there}): give '{short_name(meant[0].name)}'")
    if len(family) == 1 and card_board(family[0]) == "pcie":
        # 'rtx 4090 sxm': the one entry is a PCIe card (names._pcie_card takes 'pcie'), and
        # no other board of it is made; it said "another board has other clocks" (s38 C)
        # "no SXM or NVL board" as typed: a card is neither, not an "NVL SXM" (s38 L)
        typed = dict.fromkeys(t for t in tokens(text) if t in boards - {"pcie"})
        other = " or ".join(_BOARD_WORDS[b] for b in typed)
        raise HardwareNotFound(
            f"unknown hardware '{text}': the {name} is a PCIe card "
            f"({board_words(family[0])}), with no {other} board: give '{boards_there}' "
            f"where it is your card, or measure yours with `rooflab probe`")
    # another board has other clocks, power and memory: no pick, and a one-entry family is
    # named only for the user who has that very card
    those = "that name" if len(family) == 1 else "one of those"
    raise HardwareNotFound(
        f"unknown hardware '{text}': no {name} {board} in the catalog, which has the {name} "
        f"as {boards_there}; give {those} where it is your card (another board has other "
        f"clocks and power), or measure yours with `rooflab probe`")
