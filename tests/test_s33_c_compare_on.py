"""s33 C: `rooflab compare` took any --on without a word when it drew no chart.

`rooflab compare output1.csv output5.csv --on h2000` (NERSC GPP) printed the comparison
(30.5 s -> 12.3 s, 2.48x) and exit 0: --on is only the -o chart's roof, so without a chart it
was never read, and a misspelt name passed where every other verb says "unknown hardware
'h2000'; did you mean ...". Now it is read and an unknown one is the same error, exit 2.
"""

from __future__ import annotations

import pytest

from rooflab.cli.main import main


@pytest.mark.parametrize("extra", [[], ["--json"], ["-o", "c.json"]])
def test_compare_refuses_an_unknown_on(gpp, extra, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(gpp / "output1.csv"), str(gpp / "output5.csv"),
                 "--on", "h2000", *extra]) == 2
    got = capsys.readouterr()
    assert got.err.startswith("error: unknown hardware 'h2000'; did you mean: NVIDIA H200")
    assert "Traceback" not in got.err
    if "--json" in extra:   # --json: the error as a document on stdout too
        assert '"kind": "unknown_hardware"' in got.out
    else:
        assert got.out == ""
    assert not (tmp_path / "c.json").exists()


def test_compare_with_a_known_on_still_compares(gpp, capsys):
    assert main(["compare", str(gpp / "output1.csv"), str(gpp / "output5.csv"),
                 "--on", "RTX 4060 Laptop GPU@boost"]) == 0
    # 30.492 s / 12.3 s (ncu's gpu__time_duration of the two steps)
    assert "matched total: 30.5 s -> 12.3 s (2.48x)" in capsys.readouterr().out


def test_compare_refuses_a_missing_roof_file(gpp, tmp_path, capsys):
    assert main(["compare", str(gpp / "output1.csv"), str(gpp / "output5.csv"),
                 "--on", str(tmp_path / "nothere.json")]) == 2
    assert "file not found" in capsys.readouterr().err
