"""s33 C: `whatif --hardware` named an --on that does not exist.

`rooflab whatif output1.ncu-rep --hardware H100` (NERSC GPP; no --on: the roof is the peaks
the report recorded, named "NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)") ended its
assumption with "--on 'NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)@boost' takes it
against the listed peaks too": no catalog entry or file has that name. The listed peaks are
the catalog entry's of the device the report names: --on 'NVIDIA GeForce RTX 4060 Laptop
GPU@boost', which does run (fp64 at 228 GFLOP/s, boost 2.37 GHz: 70.9x to the H100).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.ceiling import Roof

GPU = "NVIDIA GeForce RTX 4060 Laptop GPU"


def _assumption(capsys, *args: str) -> str:
    assert main(["whatif", *args, "--hardware", "H100", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["assumption"]


def test_the_hint_names_the_catalog_entry_of_the_recorded_device(gpp, capsys):
    pytest.importorskip("ncu_report")
    rep = str(gpp / "output1.ncu-rep")
    said = _assumption(capsys, rep)
    assert "(profiler peaks)@boost" not in said
    hint = f"--on '{GPU}@boost'"
    assert hint in said
    # and that --on runs: the kernels judged at the listed (boost) peaks
    assert main(["whatif", rep, "--on", f"{GPU}@boost", "--hardware", "H100"]) == 0


def test_the_hint_for_a_catalog_roof_scaled_to_the_clock_is_unchanged(gpp, capsys):
    said = _assumption(capsys, str(gpp / "output1.csv"), "--on", "RTX 4060 Laptop GPU")
    assert f"--on '{GPU}@boost' takes it against the listed peaks too" in said


def test_no_hint_for_another_derived_roof():
    from rooflab.model.efficiency_basis import _at_boost

    roof = Roof(name="measured by hand", compute=(), memory=(), kind="derived")
    assert _at_boost(roof) == ""
