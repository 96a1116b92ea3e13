"""Which words a typed device name may carry beyond the catalog entry it resolves to.

The catalog matches loosely: an entry's words inside the query find it, as a driver's
verbose name needs ('NVIDIA H100 80GB HBM3', 'AMD EPYC 7742 64-Core Processor'). So
'h100 foo' and 'a100 banana' found the H100 and A100 with the word dropped (s36 O). A word
outside the entry's own is kept when it is one that real device names carry:

- it holds a digit: model numbers, sizes, core counts, memory kinds ('mi250' of rocm-smi's
  'MI250X / MI250', '64' of lscpu's '64-Core', 'hbm3', '13th' of '13th Gen Intel');
- it has one or two letters: the suffix codes drivers print apart ('AC' of nvidia-smi's
  'NVIDIA B300 SXM6 AC', 'VF' of an MI300X virtual function, 'w' of 'w/ Radeon', 'XT');
- it is a word of any catalog name or alias ('grace', 'xeon', 'developer', 'kit', ...);
- it is one of DRIVER_WORDS, the longer words drivers, lscpu, the device tree and
  profilers print that no catalog name has.

Anything else is refused with the word named: no catalog or driver name has 'foo', so it
is the user's typo or a product rooflab does not know, and another's roof is no answer.
Only `lookup` (names people type or paste) checks; `match`, for the names rooflab reads
from drivers and files, stays loose (a word missing here must not cost a measured roof).
"""

from __future__ import annotations

import re

# Longer words real device names carry that no catalog entry's name has: nvidia-smi's
# 'MIG 3g.40gb', 'RTX 6000 Ada Generation', 'RTX 4000 SFF Ada'; device-tree models'
# 'Engineering Reference Developer Kit'; lscpu's Intel/AMD/Arm family and code names;
# rocm-smi's and rocminfo's GPU code names; a profile's roof provenance ('T4 measured').
DRIVER_WORDS = frozenset("""mig hbm sff lovelace engineering reference sample module board
    edition founders quadro titan grid data center threadripper emerald skylake icelake
    cooper broadwell haswell neoverse zen genuine virtual server workstation mxm oem apu
    ampere volta turing pascal kepler maxwell cdna rdna aldebaran arcturus vanjaram xtx
    measured nominal derived datasheet""".split())

# a word for one die of a package: 'die', 'gcd' (AMD's Graphics Compute Die), or one by
# its index ('die1', 'gcd0'): model/dies.py's package of several devices to software
DIE_WORD = re.compile(r"^(die|gcd)s?(\d+)?$")


def known_word(word: str, vocabulary: frozenset[str]) -> bool:
    """Whether `word` (a names.tokens token) is one a real device name may carry."""
    return (any(ch.isdigit() for ch in word) or len(word) <= 2 or word in vocabulary
            or word in DRIVER_WORDS or bool(DIE_WORD.match(word)))


def odd_words(head_tokens: tuple[str, ...], own: frozenset[str],
              vocabulary: frozenset[str]) -> list[str]:
    """The words of a typed name that are neither the found entry's (`own`) nor known."""
    return list(dict.fromkeys(t for t in head_tokens
                              if t not in own and not known_word(t, vocabulary)))


def core_not_product(text: str, devices) -> str | None:
    """The error for a typed core name ('Neoverse-V2', what lscpu prints as the model name
    on Arm): the catalog entries built on that core, or None when no entry has it as its
    microarch. Never one of them picked: NVIDIA Grace and AWS Graviton4 are both Neoverse
    V2, with other clocks, core counts and memory, so the core names no roof (s36 V)."""
    def flat(s: str) -> str:
        return re.sub(r"[^a-z0-9]", "", s.lower())

    typed = flat(text)
    hits = [d.name for d in devices
            if typed and any(flat(str(d.inputs.get(k, ""))) == typed
                             for k in ("microarch", "e_microarch"))]
    if not hits:
        return None
    return (f"'{text}' is a CPU core (lscpu prints it as the model name on Arm), not a "
            f"product; the catalog has it in {', '.join(hits)}: give the product's name "
            "(e.g. 'Grace' on NVIDIA Grace), or `rooflab probe` to measure this machine")
