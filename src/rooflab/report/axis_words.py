"""The x axis's title of a roofline chart: which bytes the intensity counts.

Review s22 r6 F3: "arithmetic intensity (FLOP/byte)" on every chart left a reader of an
`--level L2` chart reading L2 intensities against the DRAM slope, and a reader of a bench
chart (compulsory traffic: each byte moved once, ideal reuse) taking them for an Advisor
CARM's (all core<->cache bytes). One wording for the PNG/SVG (chart_draw) and the HTML
(html_figure). Pure: reads the display's points and kernels only.
"""

from __future__ import annotations

from ..model.provenance import DERIVED

# no point drawn: no basis to name
GENERIC = "arithmetic intensity (FLOP/byte)"
# a hierarchical chart: one marker per level, each at its own level's bytes
EACH_LEVEL = "arithmetic intensity (FLOP per byte at each marker's level)"


def intensity_title(points, kernels) -> str:
    """'arithmetic intensity (FLOP per DRAM byte)' where every point drawn is at one level;
    '... (FLOP per byte of minimum DRAM traffic)' where, in addition, every drawn kernel's
    bytes are rooflab's own count (provenance "derived": compulsory traffic, model/
    provenance.py: the bench zoo, `ai`, `llm`, a torch trace); EACH_LEVEL where points sit
    at several levels; GENERIC with none. points: DrawnPoints (.level, .kernel_index);
    kernels: the display's kernels (indexed by kernel_index)."""
    levels = {p.level for p in points}
    if not levels:
        return GENERIC
    if len(levels) > 1:
        return EACH_LEVEL
    level = next(iter(levels))
    drawn = [kernels[i] for i in {p.kernel_index for p in points} if 0 <= i < len(kernels)]
    if drawn and all((k.provenance or {}).get("bytes") == DERIVED for k in drawn):
        return f"arithmetic intensity (FLOP per byte of minimum {level} traffic)"
    return f"arithmetic intensity (FLOP per {level} byte)"


def axis_title(display) -> str:
    """intensity_title of a RooflineDisplay (chart_parts)."""
    return intensity_title(display.points, display.kernels)
