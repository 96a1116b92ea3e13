"""`rooflab report --level L1|L2|L3|DRAM|all`: the analysis a reading gives (review s26 r2
F4). Pure.

Without --level the report judges each kernel at the level that binds it hardest (the
hierarchical roofline's primary point), unchanged. --level L1 is the cache-aware roofline
(CARM: model/level_carm), L2/L3 one level of the hierarchical roofline, DRAM the classic
roofline, all every level's point (the hierarchical view, its binding level advised on).
The reading is said once, as a roof-wide note (no kernel named), so the terminal, .md,
.html and --json all carry it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..errors import InputError
from . import analysis as _analysis  # looked up per call: report's analyze, patched or not
from .analysis import Analysis
from .ceiling import Roof
from .kernel import Kernel
from .level_carm import ALL, is_carm, reading_name, reading_words
from .level_names import KNOWN, checked_level


def checked_reading(level: Any, where: str = "--level") -> str | None:
    """None (the default), 'all', or a canonical level ('l1' -> L1, 'hbm' -> DRAM); any
    other name an InputError naming the choices."""
    if level is None:
        return None
    if isinstance(level, str) and level.strip().lower() == ALL:
        return ALL
    try:
        return checked_level(level, where)
    except InputError:
        raise InputError(f"{where} {level!r:.40}: use one of {', '.join(KNOWN)} or all "
                         f"(L1 is the cache-aware CARM reading, DRAM the classic "
                         f"roofline)") from None


def analyze_at(roof: Roof, kernels: Sequence[Kernel], level: str | None) -> Analysis:
    """The analysis `--level` reads: the default's (level None) untouched; 'all' the
    same points with the reading said; a level its points alone (L1 read as CARM), with a
    note for each kernel without bytes there. An InputError where no kernel has bytes at
    the level (an empty report that exits 0 would read as "nothing to fix")."""
    if level is None:
        return _analysis.analyze(roof, kernels)
    if level == ALL:
        got = _analysis.analyze(roof, kernels)
        return replace(got, notes=(reading_words(level), *got.notes))
    have = [k for k in kernels if k.bytes.get(level, 0) > 0]
    if kernels and not have:
        levels = sorted({lv for k in kernels for lv, b in k.bytes.items() if b > 0})
        raise InputError(f"--level {level}: no kernel here has {level} bytes (they have "
                         f"{', '.join(levels) or 'none'}); pick one of those, or leave "
                         f"--level out for each kernel's binding level")
    got = _analysis.analyze(roof, kernels, levels=[level], carm=is_carm(level))
    skipped = [f"{k.name}: no {level} bytes, so no {reading_name(level)} reading; "
               f"`rooflab report` without --level judges it at its binding level"
               for k in kernels if k.bytes and k.bytes.get(level, 0) <= 0]
    return replace(got, notes=(reading_words(level), *got.notes,
                               *dict.fromkeys(skipped)))


def with_carm_evidence(diags: Sequence[Any], roof: Roof, level: str | None) -> list[Any]:
    """Under the CARM reading, each memory-bound diagnosis' evidence in CARM's words
    (level_carm.carm_evidence: held by the level whose roof binds, bytes/s as a share of
    L1's); the diagnoses unchanged otherwise."""
    diags = list(diags)
    if not is_carm(level):
        return diags
    from .level_carm import carm_evidence

    out = []
    for d in diags:
        said = carm_evidence(d.point, roof) if d.point is not None else ""
        out.append(replace(d, evidence=said) if said else d)
    return out


def reading_dict(level: str | None) -> dict[str, str] | None:
    """--json's "reading": {"level", "model" (CARM, per-level, DRAM, hierarchical), "text"};
    None without --level (the document as before)."""
    if level is None:
        return None
    return {"level": level, "model": reading_name(level), "text": reading_words(level)}
