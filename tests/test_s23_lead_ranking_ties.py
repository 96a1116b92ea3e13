"""Review s23 r2 F7 in the Python API: `ranking_text` (a notebook's table of `rank`'s
choices) numbered tied devices 1, 2 while `rooflab choose` now gives them one place. Two
copies of the H100 roof under two names take the same time (1e9 B of DRAM at 3.35 TB/s =
299 us for examples/seeds/k.json), so they share place 1 and the A100 is third."""

from __future__ import annotations

from conftest import REPO

import rooflab
from rooflab.model.choose import rank
from rooflab.model.display_results import ranking_text


def test_tied_choices_share_a_place_in_the_ranking_text():
    kernels = rooflab.load_kernels(REPO / "examples" / "seeds" / "k.json")
    h100 = rooflab.load_roof("H100")
    choices = rank(kernels, [("H100 a", h100, 700.0), ("H100 b", h100, 700.0),
                             ("A100", rooflab.load_roof("A100"), 400.0)])
    places = [line.split()[0] for line in ranking_text(choices).splitlines()[2:]]
    assert places == ["1", "1", "3"]


def test_rocprof_steps_out_of_their_numbered_order_are_said_too(tmp_path, capsys):
    """Review s23 r2 F2 for every profiler verb (cli/options.py profiler_verb), not ncu
    alone: counters2.csv given before counters.csv under a locale's `*` order."""
    from test_rocprof import WIDE

    from rooflab.cli.main import main

    for name in ("counters.csv", "counters2.csv"):
        (tmp_path / name).write_text(WIDE)
    files = [str(tmp_path / "counters2.csv"), str(tmp_path / "counters.csv")]
    assert main(["rocprof", *files, "--on", "mi300x"]) == 0
    err = capsys.readouterr().err
    assert f"{files[1]} is given after {files[0]}" in err
    assert main(["rocprof", *reversed(files), "--on", "mi300x"]) == 0
    assert "is given after" not in capsys.readouterr().err


def test_the_choose_footnote_speaks_of_shared_places_only_where_there_are(capsys):
    """Review s23 h1 F6: "equal in both: one # (10, 10, 12)" was said under every table."""
    from rooflab.cli.main import main

    pts = str(REPO / "examples" / "seeds" / "pts.json")
    assert main(["choose", pts, "--among", "h100-sxm,a100"]) == 0
    assert "one #" not in capsys.readouterr().out
    assert main(["choose", pts, "--among", "h100-sxm,h800-sxm"]) == 0
    assert "equal in both: one # (10, 10, 12)" in " ".join(capsys.readouterr().out.split())
