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
    refuse_carm(roof, level)
    got = _analysis.analyze(roof, kernels, levels=[level], carm=is_carm(level))
    skipped = [f"{k.name}: no {level} bytes, so no {reading_name(level)} reading; "
               f"`rooflab report` without --level judges it at its binding level"
               for k in kernels if k.bytes and k.bytes.get(level, 0) <= 0]
    return replace(got, notes=(reading_words(level), *got.notes,
                               *dict.fromkeys(skipped)))


def refuse_carm(roof: Roof, level: str | None) -> None:
    """An InputError for the CARM reading on a roof with no L1 ceiling (level_carm.
    carm_refusal): report and plot refuse it, as --level L2 has no roof without L2."""
    from .level_carm import carm_refusal

    said = carm_refusal(roof) if is_carm(level) else ""
    if said:
        raise InputError(said)


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


def reading_dict(level: str | None, analysis: Analysis | None = None) -> dict[str, Any] | None:
    """--json's "reading": {"level", "model" (CARM, per-level, DRAM, hierarchical), "text"},
    and under CARM "ceilings": which ceiling holds each L1 point (carm_ceilings); None
    without --level (the document as before)."""
    if level is None:
        return None
    said: dict[str, Any] = {"level": level, "model": reading_name(level),
                            "text": reading_words(level)}
    if is_carm(level) and analysis is not None:
        said["ceilings"] = carm_ceilings(analysis)
    return said


def carm_ceilings(analysis: Analysis) -> list[dict[str, Any]]:
    """Each CARM point's binding ceiling, which the point's own fields leave to be inferred
    (its "level" is L1, the bytes' level, its "bytes_per_s" the binding level's bandwidth):
    "ceiling_level" and "ceiling_bytes_per_s" (or "compute" where the peak binds), and the
    share of the L1 bandwidth its loads and stores move, as the text prints it (review s26
    v2 F8)."""
    l1 = analysis.roof.find_memory("L1")
    out = []
    for p in analysis.points:
        if p.level != "L1":
            continue
        moved = p.bytes / p.seconds if p.seconds else None
        at_peak = p.attainable_flop_per_s >= p.peak_flop_per_s
        out.append({
            "kernel": p.kernel, "kernel_index": p.kernel_index,
            "ceiling_level": "compute" if at_peak else p.memory_ceiling,
            "ceiling_bytes_per_s": None if at_peak else p.bytes_per_s,
            "attainable_flop_per_s": p.attainable_flop_per_s,
            "l1_bytes_per_s": l1.value if l1 is not None else None,
            "achieved_bytes_per_s": moved,
            "percent_of_l1_bandwidth": (100 * moved / l1.value
                                        if moved is not None and l1 is not None
                                        and l1.value > 0 else None)})
    return out
