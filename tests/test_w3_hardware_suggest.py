"""An unknown hardware name suggests only close catalog names: 'nope' is no typo of
'AMD EPYC 7742' (difflib 0.5 with its alias), 'h10' and 'H300' are typos of H100, H200."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main


@pytest.mark.parametrize("argv", [["specs", "show", "nope"],
                                  ["specs", "show", "nope-9000"],
                                  ["specs", "compare", "h100", "abc"],
                                  ["scale", "--on", "nope", "--hidden", "4096", "--blocks", "2",
                                   "--tokens", "4096"]])
def test_a_name_like_no_device_points_at_the_list(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "did you mean" not in err and "EPYC" not in err
    assert "run `rooflab specs list` to see the catalog" in err


@pytest.mark.parametrize(("typed", "first"), [("h10", "NVIDIA H100 SXM"),
                                              ("rtx409", "NVIDIA GeForce RTX 4090"),
                                              # 'mi30' now ties MI300X with MI350X
                                              # (review s28 R4 F12 added it): one
                                              # character short of mi300x instead
                                              ("mi300", "AMD Instinct MI300X"),
                                              ("a10o", "NVIDIA A10")])
def test_a_near_miss_still_gets_its_suggestion(capsys, typed, first):
    assert main(["specs", "show", typed]) == 2
    err = capsys.readouterr().err
    assert err.split("did you mean: ")[1].split(", ")[0].rstrip("?") == first


@pytest.mark.parametrize("name", ["a100 sxm", "H100-SXM"])
def test_near_spellings_of_a_full_name_still_resolve(capsys, name):
    assert main(["specs", "show", name]) == 0
