"""A point's label written beside it (no leader) and level with another kernel's marker
is nearer its own marker than that one (review s18 r5 F3).

`rooflab llm tinyllama-1.1b --on T4 -o llm.json; rooflab plot llm.json --on T4`: v_proj,
launch-bound at 210 GFLOP/s (with k_proj), was labelled at (-7, +6) pt from its marker,
level with the 320 GFLOP/s marker of q/o/gate/up/down_proj and lm_head 11 pt above it, so
it read as not launch-bound."""

from __future__ import annotations

import math

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Kernel
from rooflab.report.chart import roofline_data
from rooflab.report.chart_layout_cost import _box, _to_pt, has_leader

# the decode step's kernels, 22 layers, fp16, untimed: (name, FLOP, DRAM bytes, calls)
DECODE = [("q_proj", 185e6, 185e6, 22), ("k_proj", 23.1e6, 23.2e6, 22),
          ("v_proj", 23.1e6, 23.2e6, 22), ("o_proj", 185e6, 185e6, 22),
          ("gate_proj", 508e6, 508e6, 22), ("up_proj", 508e6, 508e6, 22),
          ("down_proj", 508e6, 508e6, 22), ("lm_head", 131e6, 131e6, 1),
          ("rope", 152e3, 203e3, 22), ("norm", 3.6e6, 5.4e6, 44)]


def _dist(box, xy):
    return math.hypot(max(box[0] - xy[0], 0.0, xy[0] - box[2]),
                      max(box[1] - xy[1], 0.0, xy[1] - box[3]))


def test_labels_beside_their_point_are_nearer_it_than_any_other_marker():
    roof = lookup_roof("T4")
    ks = [Kernel(n, {"fp16": f}, {"DRAM": b}, calls=c) for n, f, b, c in DECODE]
    d = roofline_data([roof], ks)
    pt = lambda x, y: _to_pt(x, y, d.xlim, d.ylim)  # noqa: E731
    at = {p.kernel: p for p in d.points}
    # k/v_proj held by 22 x 5 us launches: 23.1 MFLOP / 110 us = 210 GFLOP/s; q_proj at
    # its roof, AI 1 x 320 GB/s: 11 pt apart on the chart
    assert at["v_proj"].flop_per_s == 23.1e6 / 110e-6
    assert at["q_proj"].flop_per_s == 320e9
    gap = math.dist(pt(at["v_proj"].ai, at["v_proj"].flop_per_s),
                    pt(at["q_proj"].ai, at["q_proj"].flop_per_s))
    assert 5 < gap < 20
    v = at["v_proj"]
    assert v.text   # labelled
    for p in d.points:
        if not p.text or has_leader(p.label_offset):
            continue
        own = pt(p.ai, p.flop_per_s)
        box = _box(own, p.label_offset, p.label_ha, p.label_va, p.text)
        for q in d.points:
            other = pt(q.ai, q.flop_per_s)
            if math.dist(other, own) < 4.5 or not box[1] <= other[1] <= box[3]:
                continue   # on the same spot (q_proj, o_proj, ...), or not level with it
            assert _dist(box, own) <= _dist(box, other), (p.kernel, "nearer", q.kernel)
