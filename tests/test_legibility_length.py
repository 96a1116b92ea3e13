"""Review r1_legible F8 and F14-F17: one leader-line rule for the chart's layout and its
drawing, and the long functions split into named parts (behaviour unchanged: the other
chart, HTML, CSV and CLI tests pin it; these pin the parts and the rule).

Hand numbers: a label 12 pt from its point sits beside it (no leader); 12.5 pt across or
13 pt down is moved away and gets a leader. A CSV row with flop 2e9 and gflops 100 took
2e9 / (100 x 1e9) = 0.02 s, derived; one with seconds 3e-3 took 3 ms, measured.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import replace

import pytest

from rooflab.errors import ParseError
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report import chart_layout_cost
from rooflab.report.chart import roofline_data

ROOF = Roof("hand", "measured",
            compute=(Ceiling(1e12, "fp64", provenance="measured"),),
            memory=(Ceiling(1e11, level="DRAM", provenance="measured"),))


def test_one_leader_rule_twelve_points():
    from rooflab.report.chart_layout_cost import LEADER_PT, has_leader

    assert LEADER_PT == 12
    assert not has_leader((12, 0)) and not has_leader((-12, 12)) and not has_leader((0, 0))
    assert has_leader((12.5, 0)) and has_leader((0, -13)) and has_leader((-40, 3))


def _labelled_display(offset):
    k = Kernel("dgemm", flop={"fp64": 2e9}, bytes={"DRAM": 1e8}, seconds=0.01)
    d = roofline_data([ROOF], [k], place_labels=False)
    points = [replace(p, label_offset=offset) if p.text else p for p in d.points]
    assert sum(1 for p in points if p.text) == 1
    return replace(d, points=tuple(points)), next(p.text for p in points if p.text)


def _leader_of(d, text) -> bool:
    from rooflab.report.chart_draw import draw

    _, ax = draw(d, None)
    (label,) = [t for t in ax.texts if t.get_text() == text]
    return label.arrow_patch is not None


def test_chart_draw_draws_a_leader_by_the_layouts_rule(monkeypatch):
    near, text = _labelled_display((12.0, 0.0))
    far, _ = _labelled_display((0.0, -13.0))
    assert not _leader_of(near, text)
    assert _leader_of(far, text)
    # the drawing asks the layout's rule: moved, the two move together
    monkeypatch.setattr(chart_layout_cost, "LEADER_PT", 20)
    assert not _leader_of(far, text)
    monkeypatch.setattr(chart_layout_cost, "LEADER_PT", 5)
    assert _leader_of(near, text)


def test_csv_row_seconds_measured_or_derived():
    from rooflab.ingest.kernelfile_csv import _row_seconds

    assert _row_seconds({"flop": "2e9", "gflops": "100"}, "k.csv", 2) == (0.02, "derived")
    assert _row_seconds({"seconds": "3e-3"}, "k.csv", 2) == (0.003, "measured")
    assert _row_seconds({"seconds": ""}, "k.csv", 2) == (None, "measured")
    with pytest.raises(ParseError, match="not both"):
        _row_seconds({"flop": "2e9", "seconds": "1", "gflops": "5"}, "k.csv", 3)


def test_csv_header_refusals_in_their_own_part():
    from rooflab.ingest.kernelfile_csv import _refuse_header

    _refuse_header(["name", "flop", "bytes"], [], "k.csv")   # nothing missing: no word
    with pytest.raises(ParseError, match="separated by ';'"):
        _refuse_header(["name;flop;bytes"], ["name", "flop", "bytes"], "k.csv")
    with pytest.raises(ParseError, match="AI alone gives no"):
        _refuse_header(["name", "ai", "gflops"], ["flop", "bytes"], "k.csv")


def _lines(func) -> int:
    """A function's lines, from its first decorator to its last line."""
    node = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return node.end_lineno - start + 1


def test_split_functions_are_short():
    from rooflab.cli import choose, specs
    from rooflab.ingest.kernelfile_csv import kernels_from_csv
    from rooflab.report.chart_draw import draw
    from rooflab.report.html_figure import figure

    for func in (draw, figure, kernels_from_csv.__wrapped__, choose.choose,
                 choose.register, specs.register, specs._list_cmd, specs._show_cmd,
                 specs._compare_cmd):
        assert _lines(func) <= 60, func.__qualname__
    # specs' commands are module-level, registered by register (review r1 F17)
    assert _lines(specs.register) <= 12
