"""The pair repair of the chart's label layout (report/chart_layout_pairs.py), scored
incrementally: the same spots as the repair that scored every pair from scratch (kept
here, as it was at f40b0ea, as the reference), at a fraction of the scoring.

At f40b0ea a 200-kernel chart's layout took 38 s, 36 of them in the pair repair: 1,588
pairs in conflict, each scoring both labels' 300 spots against the whole chart again.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest


def _kernels(n: int, seed: int):
    """n kernels over AI 0.01-1000 at 3-95 % of the EPYC 9654's roof, fp64 and fp32."""
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model.kernel import Kernel

    roof = lookup_roof("EPYC 9654")
    rng = random.Random(seed)
    out = []
    for i in range(n):
        prec = "fp64" if i % 3 else "fp32"
        peak, bw = roof.find_compute(prec).value, roof.bandwidth("DRAM").value
        ai = 10 ** rng.uniform(-2, 3)
        flop = 1e9 * 10 ** rng.uniform(0, 2)
        seconds = flop / (min(peak, ai * bw) * rng.uniform(0.03, 0.95))
        out.append(Kernel(name=f"kernel_{i:03d}", flop={prec: flop},
                          bytes={"DRAM": flop / ai}, seconds=seconds))
    return roof, out


def _reference_repair(moves):
    """f40b0ea's _repair_pairs, verbatim but for counting its moves into `moves`."""
    from rooflab.report.chart_layout_cost import _arrangement_cost, _box, _Scene
    from rooflab.report.chart_layout_points import (
        _cheapest,
        _in_conflict,
        _item,
        _leader_of,
        _pair_costs,
        _penalty,
    )

    def repair(out, pt, placed, soft, boxes_at, walls):
        out, placed = list(out), list(placed)
        idx = sorted(boxes_at)
        items = {k: _item(pt, k, out[k]) for k in idx}
        boxes = {k: _box(*items[k][1:]) for k in idx}
        for a_pos, i in enumerate(idx):
            for j in idx[a_pos + 1:]:
                if not _in_conflict(items[i], items[j], boxes[i], boxes[j]):
                    continue
                skip = {boxes_at[i], boxes_at[j]}
                fixed = [b for n, b in enumerate(placed) if n not in skip]
                leaders = [ld for k in idx if k not in (i, j)
                           for ld in [_leader_of(items[k])] if ld]
                scene = _Scene.of(fixed, soft, walls, leaders)
                now = (_arrangement_cost([items[i], items[j]], fixed, soft, walls, leaders,
                                         scene) + _penalty(out[i]) + _penalty(out[j]))
                best = (now, None)
                tries = {k: _cheapest(pt, out[k], k, fixed, soft, walls, leaders, scene)
                         for k in (i, j)}
                costs = _pair_costs(tries[i], tries[j], fixed, soft, walls, leaders, scene)
                for ci, row in zip(tries[i], costs, strict=True):
                    for cj, cost in zip(tries[j], row, strict=True):
                        if cost < best[0] - 1e-9:
                            best = (cost, (ci[1], cj[1]))
                if best[1] is None:
                    continue
                moves.append((i, j))
                for it in best[1]:
                    k, _, o, ha, va, _ = it
                    out[k] = replace(out[k], label_offset=o, label_ha=ha, label_va=va)
                    placed[boxes_at[k]] = _box(*it[1:])
                    items[k] = _item(pt, k, out[k])
                    boxes[k] = _box(*items[k][1:])
        return out, placed

    return repair


def _labels(roof, kernels, labels=0):
    from rooflab.report.chart import roofline_data

    d = roofline_data([roof], kernels, labels=labels)
    return [(p.text, p.label_offset, p.label_ha, p.label_va) for p in d.points]


def _zoo():
    """benchmarks/chart_speed.py's zoo: the bench zoo's 20 kernels, 1-5 ms each."""
    from rooflab.bench.zoo import specs
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model.kernel import Kernel

    return lookup_roof("EPYC 9654"), [
        Kernel(name=sp.name, flop={sp.count.precision: sp.count.flop},
               bytes={"DRAM": sp.count.bytes}, seconds=1e-3 * (1 + i % 5), unit=sp.count.unit)
        for i, sp in enumerate(specs())]


@pytest.mark.parametrize("case", ["40 kernels, seed 0", "40 kernels, seed 3", "zoo"])
def test_labels_go_where_the_reference_repair_puts_them(case, monkeypatch):
    """Every label's text, offset and alignment byte for byte as f40b0ea's repair leaves
    them: on two 40-kernel charts where that repair moves 14 and 17 pairs of labels (14 and
    19 before s33 merged ceiling labels of equal value into one, 14 and 18 before the
    labels' "54 %" gained its space in s32; 16 and 14 before the s18
    ceiling-side rules), and on the zoo chart, whose two conflicts no pair
    move undoes (chart_layout_groups does)."""
    from rooflab.report import chart_layout_pairs

    roof, kernels = _zoo() if case == "zoo" else _kernels(40, int(case[-1]))
    new = _labels(roof, kernels)
    moves: list = []
    monkeypatch.setattr(chart_layout_pairs, "repair_pairs", _reference_repair(moves))
    want = _labels(roof, kernels)
    # the zoo's count follows matplotlib's text extents: 0 moves with the fonts of 3.10,
    # 2 with matplotlib 3.11.2's; the labels must match the reference's either way
    assert len(moves) in {"40 kernels, seed 0": {14}, "40 kernels, seed 3": {17},
                          "zoo": {0, 2}}[case]
    assert sum(1 for t, *_ in new if t) >= 18
    assert new == want


def test_spots_scored_once_per_label_not_per_pair(monkeypatch):
    """The 40-kernel chart (seed 0): each label's 300 spots are scored against the chart
    (_Scene.columns on 300 rows) once when it is placed (_place) and, now, at most once
    more in the pair repair, when it is first in a pair: 62 times (59 before the labels'
    "54 %" gained its space in s32), at most 80. f40b0ea
    scored both labels' spots again for every pair in conflict: 90 times."""
    from rooflab.report import chart_layout_cost, chart_layout_points

    roof, kernels = _kernels(40, 0)
    calls: list[int] = []
    columns = chart_layout_cost._Scene.columns

    def counted(self, boxes, anchors, ends):
        calls.append(len(boxes))
        return columns(self, boxes, anchors, ends)

    monkeypatch.setattr(chart_layout_cost._Scene, "columns", counted)
    _labels(roof, kernels)
    whole = [n for n in calls if n == len(chart_layout_points._candidates())]
    assert len(whole) == 62
    assert len(whole) <= 2 * len(kernels)
