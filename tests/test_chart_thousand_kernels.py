"""Charts and reports at a thousand kernels (review 12c K) and the launch-bound label of an
untimed point (review 12d E, last paragraph)."""

from __future__ import annotations

import json

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.kernel import Kernel
from rooflab.report.chart import LABELS_SHOWN, roofline_data


def _kernels(n: int) -> list[Kernel]:
    # k{i} takes (i + 1) ms: the longest are the highest numbers
    return [Kernel(name=f"k{i}", flop={"fp32": 1e9 * (1 + i % 7)},
                   bytes={"DRAM": 1e8 * (1 + i % 5)}, seconds=1e-3 * (i + 1))
            for i in range(n)]


def _labelled(display) -> set[str]:
    return {p.kernel for p in display.points if p.text}


def test_a_crowded_chart_labels_only_the_longest_kernels_and_draws_every_point():
    d = roofline_data([lookup_roof("T4")], _kernels(30))
    assert LABELS_SHOWN == 20
    assert len(d.points) == 30                      # every point is drawn
    assert _labelled(d) == {f"k{i}" for i in range(10, 30)}   # the 20 longest
    assert d.unlabelled == 10
    assert any("labelled the 20 longest of 30 kernels; 10 drawn without a label" in n
               for n in d.notes)


def test_labels_option_sets_how_many_and_zero_labels_every_one():
    roof = lookup_roof("T4")
    d = roofline_data([roof], _kernels(30), labels=3)
    assert _labelled(d) == {"k27", "k28", "k29"}
    assert d.unlabelled == 27
    every = roofline_data([roof], _kernels(30), labels=0)
    assert len(_labelled(every)) == 30 and every.unlabelled == 0


def test_a_small_chart_is_unchanged():
    d = roofline_data([lookup_roof("T4")], _kernels(5))
    assert _labelled(d) == {f"k{i}" for i in range(5)}
    assert d.unlabelled == 0
    assert not any("labelled the" in n for n in d.notes)


def test_untimed_kernels_rank_after_timed_ones_by_flop():
    timed = [Kernel(name="t", flop={"fp32": 1e6}, bytes={"DRAM": 1e6}, seconds=1e-3)]
    untimed = [Kernel(name=f"u{i}", flop={"fp32": 1e9 * (i + 1)}, bytes={"DRAM": 1e8})
               for i in range(4)]
    d = roofline_data([lookup_roof("T4")], timed + untimed, labels=2)
    assert _labelled(d) == {"t", "u3"}


def test_an_untimed_launch_bound_point_is_labelled_with_what_the_launch_lets_it_reach():
    # review 12d E: the TinyLlama decode attention on an H100, 4.096e6 FLOP and 520 192 B.
    # Work floor 520 192 B / 3.35e12 B/s = 155 ns; one call x 5 us launch floor binds, so it
    # reaches 4.096e6 / 5e-6 = 8.19e11 FLOP/s, not the DRAM slope's 26.4 TFLOP/s.
    roof = lookup_roof("h100")
    assert roof.overhead_s == pytest.approx(5e-6)
    k = Kernel(name="attn", flop={"fp16": 4.096e6}, bytes={"DRAM": 520_192})
    (p,) = roofline_data([roof], [k]).points
    assert p.label == "attn\nAI 7.87 · predicted 819 GFLOP/s (launch-bound)"
    # a big untimed kernel keeps its roof rate: 1e12 FLOP / 1e9 B on the fp32 roof
    big = Kernel(name="g", flop={"fp32": 1e12}, bytes={"DRAM": 1e9})
    (q,) = roofline_data([roof], [big]).points
    assert q.label == "g\nAI 1000 · predicted 67 TFLOP/s"


def test_many_points_are_drawn_as_few_artists_the_labelled_ones_on_their_own():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    d = roofline_data([lookup_roof("T4")], _kernels(300)).plot()
    # 300 points: one Line2D per look for the 280 unlabelled (two looks here: all measured
    # DRAM circles, memory- or compute-bound) and one per labelled point, not 300
    markers = [ln for ln in d.ax_.lines if ln.get_linestyle() == "None"
               and ln.get_marker() == "o"]
    assert sum(len(ln.get_xdata()) for ln in markers) == 300
    assert {p.side for p in d.points if not p.text} == {"memory", "compute"}
    # the 20 longest labelled, less any left out rather than printed over another label
    # (review 19c N6; the notes name them)
    shown = len({p.kernel for p in d.points if p.text})
    assert 18 <= shown <= 20 and len(markers) == shown + 2
    assert (f"{shown} longest kernels; {300 - shown} more drawn without a label"
            in d.ax_.get_xlabel())


def test_diagnose_looks_points_up_by_kernel_not_by_scanning(monkeypatch):
    from collections import Counter

    from rooflab.model.analysis import Analysis, analyze
    from rooflab.model.diagnose import diagnose

    roof = lookup_roof("T4")
    kernels = _kernels(40)
    analysis = analyze(roof, kernels)
    before = diagnose(analysis)
    asked = []
    real = Analysis.points_of
    monkeypatch.setattr(Analysis, "points_of",
                        lambda self, k: asked.append(k.name) or real(self, k))
    after = diagnose(analysis)
    # every kernel's points come from points_of (an index built once), at most twice a
    # kernel (its primary point, then its diagnosis); a scan of every point per kernel made
    # `rooflab report` quadratic (20 000 kernels: 20 s), and for_kernel, which did, is gone
    assert set(asked) == {f"k{i}" for i in range(40)}
    assert max(Counter(asked).values()) <= 2
    assert not hasattr(Analysis, "for_kernel")
    assert [(d.kernel, d.rank, d.gain_s) for d in after] == [
        (d.kernel, d.rank, d.gain_s) for d in before]
    assert after[0].kernel == "k39"   # the longest (40 ms) has the most to gain


def test_two_kernels_of_one_name_keep_their_own_points_in_diagnose():
    from rooflab.model.analysis import analyze
    from rooflab.model.diagnose import diagnose

    a = Kernel(name="k", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-3)
    b = Kernel(name="k", flop={"fp32": 4e9}, bytes={"DRAM": 1e8}, seconds=2e-3)
    got = diagnose(analyze(lookup_roof("T4"), [a, b]))
    assert sorted(d.point.flop for d in got) == [1e9, 4e9]


def _write(tmp_path, n):
    path = tmp_path / f"big{n}.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": f"k{i}", "flop": {"fp32": 1e9 + i}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}
        for i in range(n)]}))
    return path


def test_cli_plot_says_how_many_labels_were_left_out(tmp_path, capsys):
    from rooflab.cli.main import main

    src = _write(tmp_path, 60)
    out = tmp_path / "c.png"
    assert main(["plot", str(src), "--on", "T4", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: labelled the 20 longest of 60 kernels; 40 drawn without a label" in err
    assert "UserWarning" not in err
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_cli_plot_labels_must_not_be_negative(tmp_path, capsys):
    from rooflab.cli.main import main

    src = _write(tmp_path, 3)
    assert main(["plot", str(src), "--on", "T4", "--labels", "-1", "-o",
                 str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert "--labels -1" in err and "Traceback" not in err


def test_many_unlabelled_markers_are_obstacles_as_covered_grid_cells():
    from rooflab.report.chart_layout import _marker_obstacles
    from rooflab.report.chart_layout_points import MANY_MARKERS
    from rooflab.report.chart_parts import DrawnPoint

    def point(x, text=""):
        return DrawnPoint(kernel="k", level="DRAM", ai=x, flop_per_s=1.0, color="b",
                          measured=True, text=text)

    pt = lambda x, y: (x, 100.0)  # noqa: E731  (already in points: x pt, y 100 pt)
    few = [point(10.0 * i) for i in range(5)]
    assert _marker_obstacles(few, pt) == [(10.0 * i - 4.5, 95.5, 10.0 * i + 4.5, 104.5)
                                          for i in range(5)]
    # 300 markers 1 pt apart along a row (x 50-349) and one labelled at x 400: the labelled
    # keeps its own box; the others are 3 rows of one run each (cells of 4.5 pt:
    # x 45.5-353.5 -> cells 10-78, y 95.5-104.5 -> rows 21-23)
    crowd = [point(50.0 + i) for i in range(300)] + [point(400.0, "k")]
    assert len(crowd) > MANY_MARKERS
    boxes = _marker_obstacles(crowd, pt)
    assert boxes[0] == (395.5, 95.5, 404.5, 104.5)
    assert boxes[1:] == [(10 * 4.5, j * 4.5, 79 * 4.5, (j + 1) * 4.5) for j in (21, 22, 23)]


@pytest.mark.parametrize("bad", [-1, 2.5, "5", True])
def test_labels_must_be_a_count(bad):
    from rooflab.errors import InputError

    with pytest.raises(InputError, match="labels must be a count"):
        roofline_data([lookup_roof("T4")], _kernels(3), labels=bad)
