"""Headroom under the 450-line module budget (session 31 hc): report/chart_points.py (423
lines) and model/diagnose.py (422) split along their seams, each now at most 380 lines,
every name imported from its new home
(tests/test_moved_names.py: no re-exports)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rooflab

PACKAGE = Path(rooflab.__file__).parent


@pytest.mark.parametrize("module", ["report/chart_points.py", "model/diagnose.py"])
def test_split_module_has_headroom(module):
    n = len((PACKAGE / module).read_text(encoding="utf-8").splitlines())
    assert n <= 380, f"{module}: {n} lines"


def test_each_seam_is_a_module_of_its_own():
    from rooflab.model import diagnose_evidence
    from rooflab.report import chart_point_labels, chart_precisions

    assert diagnose_evidence.evidence.__module__ == "rooflab.model.diagnose_evidence"
    assert chart_precisions.precision_ceilings.__module__ == "rooflab.report.chart_precisions"
    assert chart_point_labels._labelled.__module__ == "rooflab.report.chart_point_labels"


def test_evidence_reads_as_before():
    """The moved evidence() still words a point: a memory-bound kernel left of its ridge."""
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model.analysis import analyze
    from rooflab.model.diagnose_evidence import evidence
    from rooflab.model.kernel import Kernel

    k = Kernel("copyish", {"fp32": 1e9}, {"DRAM": 4e9}, seconds=0.02)
    (p,) = analyze(lookup_roof("T4"), [k], levels=["DRAM"]).points
    said = evidence(p)
    assert said.startswith("AI 0.25 FLOP/B < ridge ")
    assert "held by DRAM at 320 GB/s" in said
