"""`rooflab plot --zoom` (review 18c F14): the NERSC GPP steps (85-89 GFLOP/s at AI 1.8-35)
fill under a quarter of the whole-roof chart; zoomed, the x axis hugs them plus the ridge and
the compute ceiling, half a decade each side. Recorded fixtures read in place."""
import json
from pathlib import Path

import pytest

from rooflab.cli.main import main

GPP = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "ncu" / "nersc-gpp"
pytestmark = pytest.mark.skipif(not GPP.is_dir(), reason=f"fixtures not found at {GPP} "
                                "(CI has ../shared beside its clone)")


def _limits(capsys, *extra):
    files = [str(GPP / f"output{i}.csv") for i in range(1, 8)]
    assert main(["plot", *files, "--on", str(GPP / "output5.ncu-rep"), "--json", *extra]) == 0
    data = json.loads(capsys.readouterr().out)
    return data["drawn"]["xlim"], data["drawn"]["ylim"]


def test_zoom_hugs_the_steps(capsys):
    (x0, x1), (y0, y1) = _limits(capsys)
    (zx0, zx1), (zy0, zy1) = _limits(capsys, "--zoom")
    assert (zx1 / zx0) < (x1 / x0) / 10      # over a decade fewer on x
    assert zy0 > y0 and zy1 <= y1 * 1.0001
    # the ridge (AI 0.608) and the fp64 ceiling (156 GFLOP/s) stay on the zoomed chart
    assert zx0 < 0.608 < zx1 and zy0 < 156e9 < zy1
