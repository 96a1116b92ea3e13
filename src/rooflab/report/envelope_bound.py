"""The bound words on the envelope roof (no `--on`, no recorded peaks: the ceilings are the
best the kernels themselves reached, profile_envelope). Such ceilings are lower bounds of
the machine's, so neither side is known to bind: a kernel that sets a ceiling (one file:
always both, so it sat at the ridge and read "compute" by a tie) says it has no roof to be
judged against; any other kernel's class is relative to the best here, and says so
(review s18 r4 F4: output3.csv read "100 % memory" at 7.5 % of its GPU's DRAM bandwidth).
"""

from __future__ import annotations

from ..ingest.profile_envelope import ENVELOPE_SOURCE
from ..json_stream import Streamed
from ..model.analysis import Analysis
from ..model.ceiling import Roof
from ..model.placement import Point

# At or above this % of the envelope a point is (within rounding) the best achieved: it sets
# that ceiling itself, so its class says which ceiling it set, nothing about the machine.
AT_ENVELOPE_PCT = 99.5
# The one wording of "no roof here; --on gives one", as a table cell, a class line and a
# note after a class (review s18 F12: four copies had drifted apart)
GIVE_ON = "give --on"
NO_ROOF = f"no roof ({GIVE_ON})"
NO_ROOF_LINE = f"no roof to judge against; {GIVE_ON}"
NO_ROOF_NOTE = f"(no roof: {GIVE_ON})"
AT_BEST = f"at the best here {NO_ROOF_NOTE}"   # markdown.class_counts' key for NO_ROOF
RELATIVE = "relative"


def on_envelope(roof: Roof) -> bool:
    """Whether the roof is the kernels' own best (profile_envelope.envelope_roof)."""
    return roof.source == ENVELOPE_SOURCE


def envelope_bound(p: Point, roof: Roof, bound: str | None = None) -> str:
    """`bound` (p.bound by default) as the tables print it on `roof`: unchanged off the
    envelope; on it NO_ROOF for a point that sets its ceiling, else 'memory (relative)'."""
    said = p.bound if bound is None else bound
    return _on_envelope_words(said, _percent_of_envelope(p)) if on_envelope(roof) else said


def _percent_of_envelope(p: Point) -> float | None:
    """The % of its envelope ceiling a point reached: of its roof, or for a point without
    FLOP (a copy: no FLOP/s, percent_of_roof None) of its bandwidth ceiling, which such a
    kernel can set on its own (seed 000's copyKernel is the envelope's DRAM ceiling)."""
    from ..model.bandwidth_reached import bandwidth_of

    return p.percent_of_roof if p.percent_of_roof is not None else bandwidth_of(p)[1]


def _on_envelope_words(said: str, percent: float | None) -> str:
    """The one rule of envelope_bound and envelope_json: a class on the envelope."""
    if said.startswith("not binding"):
        return said
    if percent is not None and percent >= AT_ENVELOPE_PCT:
        return NO_ROOF
    return f"{said} ({RELATIVE})"


# --json's `bound` where the tables say NO_ROOF (docs/json.md)
NO_ROOF_JSON = "no roof"


def envelope_json(doc: dict) -> dict:
    """An analysis document (schema.analysis_to_dict) with each point's bound as the
    tables word it on the envelope roof: "no roof" for a point that sets its ceiling, and
    `"relative": true` beside the class of any other (review s19: the JSON kept the
    model's "compute" where the terminal and HTML said "no roof (give --on)"). Unchanged
    off the envelope (the document's roof source says which)."""
    if (doc.get("roof") or {}).get("source") != ENVELOPE_SOURCE:
        return doc
    points = doc.get("analysis", ())
    if isinstance(points, Streamed):   # analysis_to_dict(streamed=True): worded as written
        return {**doc, "analysis": Streamed(lambda: map(envelope_point, points))}
    return {**doc, "analysis": envelope_points(points)}


def envelope_points(dicts) -> list[dict]:
    """Point documents (schema.points_to_dicts) of points on the envelope roof, worded as
    envelope_json says."""
    return [envelope_point(d) for d in dicts]


def envelope_point(d: dict) -> dict:
    """One point document on the envelope roof, worded as envelope_json says."""
    percent = d.get("percent_of_roof")
    if percent is None:   # no FLOP: of the bandwidth ceiling (_percent_of_envelope)
        percent = d.get("percent_of_bandwidth")
    said = _on_envelope_words(d.get("bound") or "", percent)
    if said == NO_ROOF:
        return {**d, "bound": NO_ROOF_JSON}
    if said.endswith(f"({RELATIVE})"):
        return {**d, "relative": True}
    return d


def analysis_json(analysis: Analysis, streamed: bool = False) -> dict:
    """The analysis document of every verb that writes one (schema.analysis_to_dict), its
    bounds worded on the envelope roof as the tables word them (envelope_json): report
    and plot --json said "compute" where their own tables said "no roof (give --on)".
    streamed: its kernels and points as Streamed arrays (analysis_to_dict's)."""
    from ..model.schema import analysis_to_dict

    return envelope_json(analysis_to_dict(analysis, streamed=streamed))


def level_words(full: Analysis) -> dict[tuple[int, str], str]:
    """Each point's bound as the tables print it, by (kernel_index, level): diagnose
    .level_bound ("not binding (DRAM binds)" under another level's lower roof), then
    envelope_bound. `full`: the kernels analysed at every level, so the binding level is
    in view; a view of one level (--level) looks its rows up here, where at that level
    alone an L2 point at 3 % read "latency" though DRAM binds (review s18 r4 F2)."""
    from ..model.diagnose_evidence import level_bounds

    return {(p.kernel_index, p.level): envelope_bound(p, full.roof, b)
            for p, b in zip(full.points, level_bounds(full), strict=True)}


def envelope_header(p: Point, roof: Roof | None, bound: str | None = None) -> str:
    """A diagnosis' class line: 'compute-bound' off the envelope (and with no roof in view:
    roof None); on it NO_ROOF_LINE, or 'memory-bound relative to the best here (no roof:
    give --on)'. The terminal, markdown and HTML reports all word it here."""
    bound = p.bound if bound is None else bound
    said = bound if roof is None else envelope_bound(p, roof, bound)
    if said == NO_ROOF:
        return NO_ROOF_LINE
    if said.endswith(f"({RELATIVE})"):
        return f"{bound}-bound relative to the best here {NO_ROOF_NOTE}"
    return f"{bound}-bound"
