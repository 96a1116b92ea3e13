"""`--level X` of the profiler verbs: the rows are the analysis at X (its unplaced kernels
and notes as before), but each row's bound is worded with every level in view, so the
binding level is known. Analysed at X alone, a reduction at 16 % of DRAM ("memory") had its
L2 row (3 %) read "latency" instead of "not binding (DRAM binds)": a display filter changed
its bound class (review s18 r4 F2, docs/plot.md "not binding").
"""

from __future__ import annotations

from typing import Any

from ..model.analysis import Analysis


def analyze_in_view(roof, kernels, level: str | None,
                    analyze=None) -> tuple[Analysis, Analysis | None]:
    """(analysis, full) of a profiler verb's --level: L1 read as CARM, as `rooflab report
    --level L1` and `plot --level L1` read it (model/level_reading.analyze_at; ncu's table
    read the L1 row against the L1 ceiling alone: 3 % where report said 24 %, review s26
    v2 F4), its bounds its own (the per-level `full` would reword them); another level its
    row of the hierarchical roofline, `full` (every level) where a row reads "latency"
    (placement.binds_elsewhere: only such a row can read otherwise, review s18 reread F1).
    analyze: the verb's own (model.analysis.analyze; a test counts its calls)."""
    from ..model.level_carm import is_carm
    from ..model.level_reading import analyze_at

    if is_carm(level):
        return analyze_at(roof, kernels, level), None
    if analyze is None:
        from ..model.analysis import analyze
    analysis = analyze(roof, kernels, levels=[level] if level else None)
    full = (analyze(roof, kernels)
            if level and any(p.bound == "latency" for p in analysis.points) else None)
    return analysis, full


def reading_json(level: str | None, analysis: Analysis) -> dict[str, Any]:
    """{"reading": ...} of a profiler verb's --json under --level, as report's and plot's
    (model/level_reading.reading_dict, with the CARM points' ceilings); {} without."""
    from ..model.level_reading import reading_dict

    said = reading_dict(level, analysis)
    return {} if said is None else {"reading": said}


def bounds_in_view(analysis: Analysis, full: Analysis | None = None) -> dict[int, str]:
    """Each point of `analysis` (by id) with its bound as the tables print it
    (diagnose_evidence.level_bound; on the envelope roof report.envelope_bound), worded on `full`,
    the same kernels analysed at every level (None: `analysis` is that)."""
    from ..report.envelope_bound import level_words

    said = level_words(analysis if full is None else full)
    return {id(p): said.get((p.kernel_index, p.level), p.bound) for p in analysis.points}


def with_full_bounds(doc: dict[str, Any], full: Analysis | None) -> dict[str, Any]:
    """An analysis document (schema.analysis_to_dict) of one level with each point's bound
    and binding_level as `full` (every level) words them (without `full` as the document
    has them), then worded on the envelope roof (report.envelope_json). Only
    a point another level binds (placement.binds_elsewhere) reads otherwise there, so that
    is all this looks up, not every point of `full` written out (review s18 reread F1)."""
    from ..report.envelope_bound import envelope_json

    if full is None:
        return envelope_json(doc)   # on the envelope roof, as the tables word it
    from ..model.placement import NOT_BINDING, binds_elsewhere, kernel_key, primary_points

    binding = primary_points(full.points)
    said = {(p.kernel_index if p.kernel_index >= 0 else None, p.level):
            (p.bound, binds_elsewhere(p, binding.get(kernel_key(p)))) for p in full.points}
    out = []
    for d in doc.get("analysis", ()):
        key = (d.get("kernel_index"), d.get("level"))
        if key not in said:
            out.append(d)
            continue
        bound, other = said[key]
        new = {k: v for k, v in d.items() if k != "binding_level"}
        new.update({"bound": bound} if other is None else
                   {"bound": NOT_BINDING, "binding_level": other})
        out.append(new)
    return envelope_json({**doc, "analysis": out})
