"""Session 35 B: a ridge row of the probe's record table (report/tables.profile_rows, the
one place ridge rows are built) divides a measured peak by a measured bandwidth, so it
carries the '!' of either (the 5 % rule, session 34) and a legend line under the table says
why. Before, the ridge rows of a noisy ceiling carried no mark.

Hand numbers: DRAM samples 100, 90, 80 GB/s (value 100 GB/s, the best): 3 samples, so the
full range, 20 / 90 = 22.2 % of the median, and the median 10 % below the best: noisy.
L1 400, 399, 398 GB/s: 2 / 399 = 0.5 %; fp64 1, 0.999, 0.998 TFLOP/s: 0.2 %: steady.
Ridges: fp64 / DRAM = 1e12 / 100e9 = 10 (marked), fp64 / L1 = 1e12 / 400e9 = 2.5 (not).
A noisy fp64 instead (1, 0.9, 0.8 TFLOP/s: 22.2 %) marks both of its ridges. `rooflab
specs show` of the profile saved marks the same ceiling and ridge (its ridge column).
"""

from __future__ import annotations

from rich.console import Console

from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.report.tables import profile_rows, profile_table


def _c(value, spread, **where):
    return Ceiling(value=value, provenance="measured", source="hand",
                   samples=tuple(value * (1 - spread * i) for i in range(3)), **where)


def _profile(dram_spread, fp64_spread, nominal=None):
    measured = Roof(name="box measured", kind="measured",
                    compute=(_c(1e12, fp64_spread, precision="fp64", unit="vector"),),
                    memory=(_c(400e9, 0.0025, level="L1"), _c(100e9, dram_spread,
                                                                   level="DRAM")))
    return MachineProfile(host={"name": "box"}, nominal=nominal, measured=measured)


def _rows(p):
    return {r.quantity: r.cells() for r in profile_rows(p)}


def test_a_noisy_bandwidth_marks_its_ridge_only():
    rows = _rows(_profile(0.1, 0.001))
    assert rows["DRAM bandwidth"][4] == "22.2 % !"
    assert rows["ridge fp64 / DRAM"] == ("ridge fp64 / DRAM", "-", "10", "-", "- !", "-")
    assert rows["L1 bandwidth"][4] == "0.5 %"
    assert rows["ridge fp64 / L1"] == ("ridge fp64 / L1", "-", "2.5", "-", "-", "-")


def test_a_noisy_peak_marks_every_ridge_it_divides():
    rows = _rows(_profile(0.001, 0.1))
    assert rows["fp64 vector peak"][4] == "22.2 % !"
    assert rows["ridge fp64 / DRAM"][4] == "- !" and rows["ridge fp64 / L1"][4] == "- !"


def test_steady_ceilings_and_a_nominal_ridge_carry_no_mark():
    nominal = Roof(name="box", kind="nominal",
                   compute=(Ceiling(value=2e12, precision="fp64", unit="vector",
                                    provenance="nominal", source="sheet"),),
                   memory=(Ceiling(value=200e9, level="DRAM", provenance="nominal",
                                   source="sheet"),))
    rows = _rows(_profile(0.001, 0.001, nominal))
    # nominal ridge 2e12 / 200e9 = 10, measured 10: no '!' on either
    assert rows["ridge fp64 / DRAM"] == ("ridge fp64 / DRAM", "10", "10", "100 %", "-", "-")


def _caption(p) -> str:
    console = Console(width=300, record=True)
    console.print(profile_table(p))
    return " ".join(console.export_text().split())


def test_the_legend_line_says_why_the_ridge_is_marked():
    legend = ("!: a measured ceiling whose samples vary over 5 % or that carries a warning; "
              "a ridge marked ! divides a marked peak or bandwidth and inherits its spread: "
              "read it no surer than they are")
    assert legend in _caption(_profile(0.1, 0.001))
    assert "a ridge marked !" not in _caption(_profile(0.001, 0.001))


def test_specs_show_of_the_profile_marks_the_same_ridge(tmp_path, capsys):
    path = tmp_path / "noisy.json"
    save_profile(path, _profile(0.1, 0.001))
    assert main(["specs", "show", str(path)]) == 0
    out = capsys.readouterr().out
    rows = {cells[0]: cells[1:] for line in out.splitlines()
            if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) >= 4}
    assert rows["fp64 vector"] == ["1 TFLOP/s", "10 !", "measured"]
    assert rows["DRAM"] == ["100 GB/s", "10 !", "measured !"]
    assert rows["L1"] == ["400 GB/s", "2.5", "measured"]
    assert "a ridge marked ! divides a marked peak or bandwidth" in " ".join(out.split())
