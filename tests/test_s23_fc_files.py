"""Review s23: the sweep chart's plateau bands named (r6 F4), a written chart's
description in the file (r6 F11), the user's matplotlibrc kept out of the chart (r2 F4)
and no matplotlib lines on stderr where HOME is not writable (r2 F5)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rooflab
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import figure_bytes, roofline_data

pytest.importorskip("matplotlib")

KiB, MiB = 2**10, 2**20
SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"
SRC = Path(rooflab.__file__).resolve().parents[1]   # the rooflab under test


def _sweep_table():
    from rooflab.report.sweep_chart import Marker, SweepRow, SweepTable, Window

    rows = tuple(SweepRow(ws_bytes=ws, ws_bytes_total=2 * ws, best=b, median=b, spread=None,
                          level=lv, chosen=False, samples=2, calibrated=True)
                 for ws, b, lv in ((4 * KiB, 600e9, "L1"), (8 * KiB, 610e9, "L1"),
                                   (64 * KiB, 230e9, "L2"), (256 * KiB, 240e9, "L2"),
                                   (64 * MiB, 40e9, "DRAM"), (128 * MiB, 41e9, "DRAM")))
    windows = (Window("L1", 4 * KiB, 8 * KiB, 605e9), Window("L2", 64 * KiB, 256 * KiB, 235e9),
               Window("DRAM", 64 * MiB, 128 * MiB, 40.5e9))
    return SweepTable(source="extras.bandwidth_sweep", axis="per thread", kernel="triad",
                      threads=2, rows=rows, windows=windows,
                      markers=(Marker("L1d", 32 * KiB, "L1d 32 KiB"),), machine="box")


# -- r6 F4 ---------------------------------------------------------------------------------

def test_sweep_bands_carry_their_level_name_in_okabe_ito_colours():
    from matplotlib.colors import to_hex

    from rooflab.report.chart_parts import LEVEL_COLORS
    from rooflab.report.sweep_chart import plot_sweep

    ax = plot_sweep(_sweep_table()).ax_
    bands = {p.get_gid().split(":")[1]: to_hex(p.get_facecolor()[:3]) for p in ax.patches
             if (p.get_gid() or "").startswith("plateau:")}
    # old: tab:green, tab:olive, tab:red; now the levels' colours of the HTML chart
    assert bands == {lv: LEVEL_COLORS[lv].lower() for lv in ("L1", "L2", "DRAM")}
    names = {t.get_text(): t for t in ax.texts if (t.get_gid() or "").startswith("plateau-name")}
    assert set(names) == {"L1", "L2", "DRAM"}
    # each at its band's middle on the log axis: sqrt(4 KiB x 8 KiB) = 5792.6 bytes
    assert names["L1"].xy[0] == pytest.approx((4 * KiB * 8 * KiB) ** 0.5)
    assert names["L2"].xy[0] == pytest.approx(128 * KiB)
    assert ax.get_legend()._loc != 1   # not pinned to the upper right over the L3 marker


# -- r6 F11 --------------------------------------------------------------------------------

ROOF = Roof("box", compute=(Ceiling(1e12, "fp64", "vector"),),
            memory=(Ceiling(1e11, level="DRAM"),))
# AI 0.5 (memory side, ridge 10) and AI 100 (compute side)
KERNELS = [Kernel("triad", {"fp64": 1e9}, {"DRAM": 2e9}, seconds=0.04),
           Kernel("gemm", {"fp64": 1e11}, {"DRAM": 1e9}, seconds=0.2)]
SUMMARY = ("Roofline chart on box (nominal): 2 kernels, 1 compute-bound side, 1 memory-bound "
           "side; ridge AI*=10 (fp64 vector / DRAM); top kernel to work on: gemm")


def test_png_and_svg_carry_the_charts_description():
    from PIL import Image

    d = roofline_data([ROOF], KERNELS)
    png = Image.open(io.BytesIO(figure_bytes(d, "png", dpi=20)))
    assert png.text["Title"] == "Roofline: box (nominal)"
    # old: Title only
    assert png.text["Description"].startswith(SUMMARY)
    svg = figure_bytes(d, "svg").decode()
    assert f"<desc>{SUMMARY}" in svg
    assert svg.index("</title>") < svg.index("<desc>") < svg.index("<metadata>")
    assert f"<dc:description>{SUMMARY}" in svg


def test_sweep_chart_description_names_the_plateaus():
    from PIL import Image

    from rooflab.report.sweep_chart import plot_sweep

    png = Image.open(io.BytesIO(figure_bytes(plot_sweep(_sweep_table()), "png", dpi=20)))
    assert png.text["Description"] == (
        "box: triad bandwidth vs working set, working set per thread; plateaus L1 605 GB/s "
        "(4 KiB to 8 KiB), L2 235 GB/s (64 KiB to 256 KiB), DRAM 40.5 GB/s (64 MiB to "
        "128 MiB); cache sizes L1d 32 KiB.")


# -- r2 F4 ---------------------------------------------------------------------------------

def test_a_users_rc_settings_do_not_reach_the_chart():
    import matplotlib
    from PIL import Image

    user = {"font.size": 16, "lines.linewidth": 5, "savefig.bbox": "tight",
            "savefig.pad_inches": 1.0, "axes.titlesize": 30, "figure.dpi": 300}
    with matplotlib.rc_context(user):
        d = roofline_data([ROOF], KERNELS).plot()
        png = Image.open(io.BytesIO(figure_bytes(d, "png", dpi=20)))
        svg = figure_bytes(d, "svg")
        assert matplotlib.rcParams["font.size"] == 16   # the user's, back afterwards
    ax = d.ax_
    # matplotlib's default 10 pt (old: 16 and 30 from the rc)
    assert ax.xaxis.label.get_fontsize() == 10.0
    assert ax.title.get_fontsize() == 10.0
    assert ax.xaxis.get_ticklabels()[0].get_fontsize() == 10.0
    # 9 x 6 in at 20 dpi; old: "tight" cropped it and the pad grew it
    assert png.size == (180, 120)
    assert b'width="648pt" height="432pt"' in svg
    # the same SVG as without the rc
    assert svg == figure_bytes(roofline_data([ROOF], KERNELS), "svg")


def test_user_font_family_is_kept():
    import matplotlib

    with matplotlib.rc_context({"font.family": ["serif"]}):
        d = roofline_data([ROOF], KERNELS).plot()
    assert d.ax_.xaxis.label.get_fontfamily() == ["serif"]


# -- r2 F5 ---------------------------------------------------------------------------------

def test_unwritable_home_gives_no_matplotlib_lines_on_stderr(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    env.update(HOME="/dev/null", PYTHONPATH=str(SRC))
    out = tmp_path / "c.svg"
    r = subprocess.run([sys.executable, "-m", "rooflab", "-q", "plot",
                        str(SEEDS / "pts.json"), "--on", "h100-sxm", "-o", str(out)],
                       env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # old: "mkdir -p failed for path /dev/null/.config/matplotlib" and "Matplotlib created
    # a temporary cache directory ..."
    assert "matplotlib" not in r.stderr.lower() and "mkdir" not in r.stderr
    assert r.stderr.startswith("wrote ") and r.stderr.count("\n") == 1
    assert out.read_text().startswith("<?xml")
    # the private folder is removed at exit
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(
        f"rooflab-matplotlib-*/{out.name}"))


def test_config_dir_left_alone_where_it_is_writable(tmp_path, monkeypatch):
    from rooflab.report import chart_rc

    # "" reads as unset, and monkeypatch then removes the variable at teardown: delenv of an
    # unset name records nothing, and a folder quiet_config_dir set would leak into every
    # later test of this xdist worker (review s24 r1 F2)
    monkeypatch.setenv("MPLCONFIGDIR", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)   # as before the import
    assert chart_rc.quiet_config_dir() is None
    assert os.environ["MPLCONFIGDIR"] == ""   # left as it was: unset, to matplotlib
    monkeypatch.setenv("XDG_CONFIG_HOME", "/dev/null/cfg")   # cannot be made
    folder = chart_rc.quiet_config_dir()
    assert folder and os.environ["MPLCONFIGDIR"] == folder and os.access(folder, os.W_OK)


def test_a_crowded_charts_description_leaves_the_top_kernel_out():
    from rooflab.report import chart_description as cd

    # odd i: AI 0.5 (memory side of ridge 10), even i (251 of 0..500): AI 100
    ks = [Kernel(f"k{i}", {"fp64": 1e9}, {"DRAM": 2e9 if i % 2 else 1e7}, seconds=1e-3)
          for i in range(cd.DIAGNOSED_MAX + 1)]
    d = roofline_data([ROOF], ks, place_labels=False)
    assert cd.chart_description(d) == (
        "Roofline chart on box (nominal): 501 kernels, 251 compute-bound side, 250 "
        "memory-bound side; ridge AI*=10 (fp64 vector / DRAM).")
