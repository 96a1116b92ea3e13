"""Forgiving device-name matching: 'h200', 'H200-SXM', 'NVIDIA H200', 'Tesla T4' all resolve.

Names are normalised to lower-case alphanumeric tokens with vendor and marketing words
dropped ('nvidia', 'geforce', 'tesla', 'processor', ...), form factors unified
('sxm4' -> 'sxm') and '80 GB' joined to '80gb'. Matching then tries, in order:
the joined tokens equal to an entry's name or alias; the query's tokens all inside one
entry's name (unique); an entry's name/alias tokens all inside the query (the most
specific wins, as for verbose driver strings).

Variant words name a different product with different roofs ('laptop', 'ti', 'nvl',
'pcie', 'sxm', 'max', ...): a name never matches an entry across one. 'NVIDIA GeForce RTX
4060' (what torch and NVML report for the desktop card) must not find the Laptop GPU entry,
nor 'Tesla V100-PCIE-16GB' the SXM2 one, nor 'RTX 4060 Ti' the RTX 4060: no match (None,
or an unknown-hardware error) is better than the wrong roof.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from ..errors import HardwareNotFound

# 'superchip' is kept: the 'Grace CPU Superchip' is two Grace CPUs (the 144-core entry), not
# the one-socket 'NVIDIA Grace CPU' a dropped word left it as; a GH200 'Grace Hopper
# Superchip' still finds the GH200 by its other words (an entry's name inside the query).
_DROP = frozenset("""nvidia amd intel google apple aws ampere geforce tesla instinct radeon
    habana cloud gpu tensor core cores processor cpu accelerator the with r tm
    generation graphics card oam""".split())
_FORM = {"sxm2": "sxm", "sxm4": "sxm", "sxm5": "sxm", "sxm6": "sxm", "pci": "pcie",
         "pcie4": "pcie", "pcie5": "pcie", "gen": ""}
# Words that make another product of the same family (other clocks, SM counts, power or
# memory): 'RTX 4060' vs 'RTX 4060 Laptop GPU' / 'RTX 4060 Ti', 'H200' vs 'H200 NVL',
# 'V100 SXM2' vs 'V100 PCIe', 'M3' vs 'M3 Max'. 'd' is the RTX 4090 D (fewer SMs).
VARIANTS = frozenset("laptop mobile maxq ti super d nvl pcie sxm max pro ultra".split())


# A size written '40G' (LLM-Viewer's `nvidia_A100_40G`, 'A100 40G PCIe') is 40 GB: left as a
# word, it was dropped and the bare 'A100' found the 80 GB card (review s21 r6 F1). Only a
# number standing alone: 'A10G' and Graviton's 'c7g' are names, not sizes, and a MIG
# profile's '1g.10gb' counts compute slices.
_BARE_G = re.compile(r"(?<![a-z0-9.])(\d+)\s*g\b(?!\.\d)")
# A MIG profile 'Ng.Mgb' gives the slice's memory, not the card's: '3g.40gb' is half of an
# A100 80GB (NVIDIA MIG user guide, supported profiles: A100 40GB 2g.10gb/3g.20gb/4g.20gb/
# 7g.40gb, A100 80GB and H100 2g.20gb/3g.40gb/4g.40gb/7g.80gb, H100 NVL 3g.47gb, H200
# 3g.71gb), so it names the card of M x 8 / (2, 4, 4, 8 memory slices of 8) GB. 1g
# profiles are left as sizes: 1g.10gb is on both A100s (review s21 x1 F9).
_MIG = re.compile(r"(?<![a-z0-9])([2347])g\.(\d+)\s*gb\b")
_MIG_SLICES = {2: 2, 3: 4, 4: 4, 7: 8}
# The MIG cards' memory as their names give it; a profile's GB is rounded down (H200
# 3g.71gb: 142 of 141 GB), so the card is the nearest of these within 3 %.
_MIG_CARDS_GB = (40, 80, 94, 96, 141, 144)


def _mig_card(m: re.Match) -> str:
    gb = int(m[2]) * 8 / _MIG_SLICES[int(m[1])]
    near = min(_MIG_CARDS_GB, key=lambda c: abs(c - gb))
    return f" mig{m[1]}g {near if abs(near - gb) <= 0.03 * gb else round(gb)}gb "


def tokens(text: str) -> tuple[str, ...]:
    """Normalised tokens of a device name."""
    s = text.lower().replace("(r)", " ").replace("(tm)", " ")
    s = re.sub(r"@.*$", " ", s)                      # "CPU @ 2.00GHz"
    s = _MIG.sub(_mig_card, s)                       # "3g.40gb" -> the 80 GB card's
    s = re.sub(r"(\d+)\s*(gb|gib)\b", r"\1gb", s)    # "80 GB" -> "80gb"
    s = _BARE_G.sub(r"\1gb", s)                      # LLM-Viewer's "A100_40G" -> "40gb"
    s = re.sub(r"\bmax[\s-]*q\b", "maxq", s)          # "Max-Q" -> "maxq"
    s = re.sub(r"(\d+)[\s-]*cores?\b", r"\1 core", s)   # "30core", "30 cores" -> "30-core"
    out = []
    for tok in re.split(r"[^a-z0-9]+", s):
        tok = _FORM.get(tok, tok)
        if tok and tok not in _DROP:
            out.append(tok)
    return tuple(out)


def key(text: str) -> str:
    return "".join(tokens(text))


SIZE = re.compile(r"^\d+gb$")
# difflib ratio a catalog label must reach to be suggested: 0.5 offered 'AMD EPYC 7742' for
# 'nope' (the alias 'epyc7742' shares 'p', 'e'); typos of real names score 0.75 and up
# ('h300' -> H200/H800, 'h10' -> H100, 'rtx409' -> RTX 4090, 'mi30' -> MI300X: 0.8)
SUGGEST_CUTOFF = 0.6
# A typed size this close to a card's catalog memory is that card's (GiB vs GB, usable vs
# physical: B200 180 / 192 GB).
SIZE_TOLERANCE = 0.1


def _near(size: str, gb: float) -> bool:
    """Whether a label's '96gb' is a card's memory of `gb` GB (within SIZE_TOLERANCE). A
    size in a label that is not the memory ('GH200 480GB': the Grace CPU's LPDDR5X beside
    the GPU's 96 GB) still names the entry, but is never listed or checked as its size."""
    return abs(float(size[:-2]) - gb) <= SIZE_TOLERANCE * gb


def without_size(text: str) -> frozenset[str]:
    """A name's tokens less its memory size: 'Jetson Orin NX 16GB' -> {jetson, orin, nx}."""
    return frozenset(t for t in tokens(text) if not SIZE.match(t))


def largest_of_sizes(q: frozenset[str], candidates: Sequence[Any]) -> Any | None:
    """For a name typed without a memory size ('jetson-agx-orin', 'a100 sxm'): when the
    candidates are one product in several memory sizes (their names differ only in the
    size), the largest, as `a100` is the 80 GB part; else None (still ambiguous). Only
    for names people type (lookup); a driver or board string never gets this default."""
    if len(candidates) < 2 or any(SIZE.match(t) for t in q):
        return None
    if len({without_size(d.name) for d in candidates}) != 1:
        return None
    sizes = [d.memory_bytes or 0 for d in candidates]
    top = max(sizes)
    return candidates[sizes.index(top)] if sizes.count(top) == 1 else None


# Words that name a board of one product, the same chip at another power, clock or memory:
# 'A100' is sold as SXM and PCIe, 'H100' also as NVL. A bare family name resolves to one
# entry (its alias, or largest_of_sizes), and the others it fits are said (review r4 F2:
# LLM-Viewer's `nvidia_A100` is the 40 GB card, rooflab's `A100` the 80GB SXM).
FORM_FACTORS = frozenset("sxm pcie nvl".split())


# A chip sold in GPU bins has one entry per bin, named so: 'Apple M3 Max (30-core GPU)' and
# '(40-core GPU)' (other core counts, and for some bins less bandwidth: 300 vs 400 GB/s).
# The plain family name ('M3 Max') is an alias of the top bin; the others are said.
BIN = re.compile(r"\s*\((\d+)-core GPU\)\s*$")
# A GPU core count in what was typed: '30-core', '30 core GPU', '30cores'; not a CPU's
# ('M4 Max 14-core CPU' names the CPU, and says nothing against a GPU bin).
_TYPED_CORES = re.compile(r"(\d+)[\s-]*cores?\b(?![\s-]*cpu)", re.IGNORECASE)


def gpu_bin(name: str) -> int | None:
    """The GPU core count a binned entry's name says ('Apple M3 Max (30-core GPU)': 30)."""
    m = BIN.search(name)
    return int(m.group(1)) if m else None


def typed_gpu_cores(text: str) -> set[int]:
    """The GPU core counts a typed name gives ('M3 Max 30-core': {30}; a CPU's: none)."""
    return {int(n) for n in _TYPED_CORES.findall(text)}


def family_tokens(name: str) -> frozenset[str]:
    """What one product's entries share: the name less its memory size, form factor and
    GPU bin ('A100 40GB PCIe' -> {a100}; 'Apple M3 Max (30-core GPU)' -> {m3, max})."""
    return without_size(BIN.sub("", name)) - FORM_FACTORS


def also_named(text: str, found: Any, devices: Sequence[Any]) -> list[Any]:
    """The other entries `text` fits as well as `found`, the one it resolved to: the same
    product in another memory size, form factor or GPU bin ('A100' is the 80GB SXM; the
    40GB SXM and both PCIe cards fit it too; 'M3 Max' is the 40-core GPU part, and the
    30-core fits it too). Empty where the name says which ('A100 40GB PCIe', 'M3 Max
    30-core'). 'Apple M3 Max', what About This Mac says of either bin, is no entry's own
    name, so it gets the note too."""
    if key(text) == key(found.name):   # the entry's own name: nothing else was meant
        return []
    binned = gpu_bin(found.name) is not None
    if binned and gpu_bin(found.name) in typed_gpu_cores(text):
        return []
    q = frozenset(tokens(text))
    if binned:   # a CPU core count ('M4 Max 14-core CPU') tells no GPU bin apart
        q = frozenset(t for t in q if not t.isdigit())
    family = family_tokens(found.name)
    return [d for d in devices if d.name != found.name
            and family_tokens(d.name) == family
            and any(q <= frozenset(tokens(label)) for label in (d.name, *d.aliases))]


def short_name(name: str) -> str:
    """A catalog name less its leading vendor words, as people type it: 'NVIDIA A100 40GB
    SXM' -> 'A100 40GB SXM', 'AMD Instinct MI300X' -> 'MI300X'."""
    words = name.split()
    while len(words) > 1 and words[0].lower() in _DROP:
        words.pop(0)
    return " ".join(words)


def card_board(dev: Any) -> str | None:
    """'pcie' for a GPU whose catalog entry is a PCIe card though its name says no board:
    its peer link is PCIe (RTX 4090, L40S: 'PCIe Gen4 x16'), or a bridge, which joins PCIe
    cards (A30, RTX 3090: NVLink; MI210: Infinity Fabric Link); else None. An SXM or OAM
    module's peer link is NVLink or Infinity Fabric without a bridge; every card's host
    link is PCIe, so that says nothing."""
    link = str(getattr(dev, "interconnect", "") or "").lower()
    # a laptop GPU talks PCIe but is soldered, no card ('RTX 4060 Laptop GPU')
    laptop = {"laptop", "mobile", "maxq"} & set(tokens(dev.name))
    if getattr(dev, "kind", "") != "gpu" or not link or laptop:
        return None
    return "pcie" if link.startswith("pcie") or "bridge" in link else None


def board_words(dev: Any) -> str:
    """'PCIe Gen4 x16' (an RTX 4090's host link, its only link), 'PCIe Gen4 x16; NVLink 3
    (bridge) between cards' (an A30's): what makes card_board's entry a PCIe card."""
    host = getattr(dev, "host_link", None) or dev.interconnect
    return host if dev.interconnect == host else f"{host}; {dev.interconnect} between cards"


def board_note(text: str, found: Any) -> str:
    """"'rtx 4090 pcie' is NVIDIA GeForce RTX 4090, a PCIe card (PCIe Gen4 x16)" where the
    name's board word is not in the entry's name but is the board it is (card_board); ""
    otherwise."""
    q = frozenset(tokens(text))
    own = frozenset(t for label in (found.name, *found.aliases) for t in tokens(label))
    if "pcie" not in q or "pcie" in own or card_board(found) != "pcie":
        return ""
    return f"'{text}' is {found.name}, a PCIe card ({board_words(found)})"


def choice_note(text: str, found: Any, devices: Sequence[Any]) -> str:
    """"'A100' is NVIDIA A100 80GB SXM (also: A100 40GB SXM, ...; name one to choose)" where
    `text` fits several sizes or boards of one product (also_named); "'rtx 4090 pcie' is
    NVIDIA GeForce RTX 4090, a PCIe card (...)" where its board word is the board the one
    entry is (board_note); "" where it names the entry."""
    if said := board_note(text, found):
        return said
    others = also_named(text, found, devices)
    if not others:
        return ""
    return (f"'{text}' is {found.name} (also: {', '.join(short_name(d.name) for d in others)}"
            f"; name one to choose)")


def _unique(devices) -> list[Any]:
    """Distinct devices in order (devices hold dicts, so dedupe by name, not by hash)."""
    return list({dev.name: dev for dev in devices}.values())


class DeviceIndex:
    """Devices with their normalised names; built once per catalog."""

    def __init__(self, devices: Sequence[Any]):
        self.devices = tuple(devices)
        self._names: list[tuple[frozenset[str], int, Any]] = []  # (tokens, specificity, dev)
        self._keys: dict[str, Any] = {}
        self._variants: dict[str, frozenset[str]] = {}  # device name -> variant words it has
        self._sizes: dict[str, frozenset[str]] = {}     # device name -> '32gb' its labels say
        # device name -> its memory in GB, for a card whose labels give no size (a typed
        # 'rtx 4060 16gb' is not the 8 GB RTX 4060); not for CPUs or unified memory (Apple
        # M3 Max), where the catalog's figure is one configuration of many
        self._memory_gb: dict[str, float] = {}
        self._own: dict[str, frozenset[str]] = {}   # device name -> its labels' words
        for dev in self.devices:
            mine: set[str] = set()
            sizes: set[str] = set()
            for label in (dev.name, *dev.aliases):
                toks = tokens(label)
                self._keys.setdefault("".join(toks), dev)
                # distinct words: 'Grace-Grace' names one word, not two ('Grace Hopper
                # Superchip' is the GH200, not a tie with the Grace Superchip)
                self._names.append((frozenset(toks), len(set(toks)), dev))
                mine.update(VARIANTS.intersection(toks))
                sizes.update(t for t in toks if SIZE.match(t))
            self._variants[dev.name] = frozenset(mine)
            self._own[dev.name] = frozenset(t for label in (dev.name, *dev.aliases)
                                            for t in tokens(label))
            mem = getattr(dev, "memory_bytes", None)
            own_memory = bool(mem) and getattr(dev, "kind", "") in ("gpu", "accelerator") \
                and not getattr(dev, "unified_memory", False)
            if own_memory:
                sizes = {s for s in sizes if _near(s, mem / 1e9)}
                if not sizes:
                    self._memory_gb[dev.name] = mem / 1e9
            self._sizes[dev.name] = frozenset(sizes)
        self._vocabulary = frozenset().union(*self._own.values())   # every label's words

    def _exact(self, text: str) -> Any | None:
        return self._keys.get(key(text))

    def _within_query(self, q: frozenset[str], sized: bool = False) -> list[Any]:
        """Entries whose name/alias tokens all appear in the query, most specific first.

        An entry is skipped when the query names a variant the entry is not
        ('RTX 4060 Ti' is not the 'RTX 4060', 'V100-PCIE-16GB' is not the 'V100 SXM2'),
        and, with `sized`, when the query names a memory size the entry cannot be
        (_has_size: 'v100 16gb' is not the 'V100 SXM2 32GB', 'rtx 4060 16gb' not the 8 GB
        RTX 4060).
        """
        asked = {t for t in q if SIZE.match(t)}
        hits = [(n, dev) for toks, n, dev in self._names
                if toks and toks <= q
                and not (q - toks) & (VARIANTS - self._variants[dev.name])
                and not (sized and asked and not self._has_size(dev, asked))]
        if not hits:
            return []
        best = max(n for n, _ in hits)
        return _unique(dev for n, dev in hits if n == best)

    def _has_size(self, dev: Any, asked: set[str]) -> bool:
        """Whether the entry can be a typed memory size: its labels say that size, or (a
        card whose labels give none) its memory is within SIZE_TOLERANCE of it (TPU v4's
        32 GiB is 34.4 GB); an entry with neither says nothing against it."""
        named = self._sizes[dev.name]
        if named:
            return not asked - named
        gb = self._memory_gb.get(dev.name)
        return gb is None or all(abs(float(s[:-2]) - gb) <= SIZE_TOLERANCE * gb for s in asked)

    def _containing(self, q: frozenset[str], same_variant: bool = False) -> list[Any]:
        """Entries whose own name contains every query token.

        With same_variant, only names that add no variant word to the query: 'RTX 4060'
        is inside 'RTX 4060 Laptop GPU', but the laptop part is another product.
        """
        return _unique(dev for toks, _, dev in self._names
                       if q and q <= toks and not (same_variant and (toks - q) & VARIANTS))

    def lookup(self, text: str) -> Any:
        found = self._lookup(text)
        from . import name_errors as refuse

        refuse.refuse_gpu_cores(self, text, found)
        refuse.refuse_suffix(self, text, found)
        refuse.refuse_odd_words(self, text, found)
        return found

    def _lookup(self, text: str) -> Any:
        found = self._exact(text)
        if found is not None:
            return found
        q = frozenset(tokens(text))
        containing = self._containing(q)
        if len(containing) == 1:
            return containing[0]
        if len(containing) > 1:
            plain = self._containing(q, same_variant=True)   # '4060': the desktop card
            if len(plain) == 1:
                return plain[0]
            largest = largest_of_sizes(q, plain)   # 'jetson-orin-nx': the 16 GB module
            if largest is not None:
                return largest
            names = ", ".join(d.name for d in containing[:8])
            raise HardwareNotFound(f"'{text}' is ambiguous: it matches {names}; "
                                   "give more of the name (see `rooflab specs list`)")
        within = self._within_query(q, sized=True)
        if len(within) == 1:
            return within[0]
        # 'rtx4090 24gb': the name less its size is one entry's key ('rtx4090' is the RTX
        # 4090's), though its tokens are not the entry's ('rtx', '4090'); review s21 x1 F9
        asked = {t for t in q if SIZE.match(t)}
        bare = self._keys.get("".join(t for t in tokens(text) if not SIZE.match(t)))
        if asked and bare is not None and self._has_size(bare, asked):
            return bare
        card = self._pcie_card(text, q)
        if card is not None:
            return card
        from . import name_errors as refuse
        from .name_words import core_not_product

        refuse.refuse_size(self, text, q)
        refuse.refuse_other_board(self, text, q)
        raise HardwareNotFound(core_not_product(text, self.devices)
                               or f"unknown hardware '{text}'; {self.suggest(text)}")

    def _pcie_card(self, text: str, q: frozenset[str]) -> Any | None:
        """'rtx 4090 pcie', 'l40s pcie': the one entry the name less 'pcie' (and a size it
        can be) is, where that entry is a PCIe card though its name gives no board
        (card_board); None otherwise. The word was refused as a variant (the RTX 4090 has
        no 'pcie' in its name), and the error told the user to give 'RTX 4090' as if it
        were another board (s38 C)."""
        asked = {t for t in q if SIZE.match(t)}
        rest = q - asked - FORM_FACTORS
        if q & FORM_FACTORS != {"pcie"} or not rest:
            return None
        hits = _unique(dev for toks, _, dev in self._names
                       if toks - {t for t in toks if SIZE.match(t)} == rest)
        if len(hits) != 1 or self._variants[hits[0].name] & FORM_FACTORS:
            return None
        dev = hits[0]
        if card_board(dev) != "pcie":
            return None
        if asked and not self._has_size(dev, asked):   # 'rtx 4090 48gb pcie': the sizes
            from .name_errors import refuse_size

            refuse_size(self, text, q - {"pcie"})
            return None
        return dev

    def match(self, text: str) -> Any | None:
        """For driver/profiler strings: most specific entry named inside the text.

        Never crosses a variant word (desktop vs Laptop GPU, PCIe vs SXM, Ti, NVL):
        None when the exact product is not in the catalog.
        """
        found = self._exact(text)
        if found is not None:
            return found
        q = frozenset(tokens(text))
        within = self._within_query(q)
        if len(within) == 1:
            return within[0]
        containing = self._containing(q, same_variant=True)
        if len(containing) == 1:
            return containing[0]
        try:   # 'NVIDIA L40S PCIe': the PCIe card whose name gives no board, as lookup has it
            return self._pcie_card(text, q)
        except HardwareNotFound:   # a size that card is not ('RTX 4090 48GB PCIe'): none
            return None

    def suggest(self, text: str) -> str:
        """'did you mean: A, B, C?' from difflib over names and aliases."""
        labels = {key(label): dev.name for dev in self.devices
                  for label in (dev.name, *dev.aliases)}
        close = difflib.get_close_matches(key(text), list(labels), n=8, cutoff=SUGGEST_CUTOFF)
        names = list(dict.fromkeys(labels[c] for c in close))[:5]
        if names:
            return f"did you mean: {', '.join(names)}? (`rooflab specs list` shows all)"
        return "run `rooflab specs list` to see the catalog, or give a profile .json file"
