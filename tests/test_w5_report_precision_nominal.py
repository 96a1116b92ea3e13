"""`rooflab report --on PROFILE` holds the "use fp32" advice to the profile's nominal ratio
(review r4 F3): the naive fp64 matmul on a loaded Zen 4 probe was told "use fp32 instead of
fp64: 3.40x" because the callers never passed the nominal roof to the precision lever;
report.markdown.machine_for now carries it (Machine.nominal) to advice_compute/_memory.

Review numbers: measured fp64 69.2 / fp32 235 GFLOP/s, nominal 118 / 236 GFLOP/s.
Kernel: n = 512, FLOP 2 n^3 = 268,435,456, bytes 3 n^2 x 8 = 6,291,456, AI 42.67, 394 ms
(681.3 MFLOP/s). Measured ratio 235 / 69.2 = 3.396x; nominal 236 / 118 = 2.00x, so fp32 is
taken as 2 x 69.2 = 138.4 GFLOP/s and, at the kernel's current efficiency, the gain is 2.00x
(394 ms -> 197 ms).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.report.markdown import machine_for

N = 512
MEASURED = Roof(name="zen4", kind="measured",
                compute=(Ceiling(69.2e9, "fp64", "vector", provenance="measured"),
                         Ceiling(235e9, "fp32", "vector", provenance="measured")),
                memory=(Ceiling(50e9, level="DRAM", provenance="measured"),))
NOMINAL = Roof(name="zen4", kind="nominal",
               compute=(Ceiling(118e9, "fp64", "vector"), Ceiling(236e9, "fp32", "vector")),
               memory=(Ceiling(60e9, level="DRAM"),))
CREATED = "2026-01-02T03:04:05+00:00"


def _files(tmp_path: Path, nominal: Roof | None = NOMINAL) -> tuple[str, str]:
    prof, kern = tmp_path / "me.json", tmp_path / "all.json"
    save_profile(prof, MachineProfile(host={"name": "zen4", "kind": "cpu"}, nominal=nominal,
                                      measured=MEASURED, created=CREATED))
    kern.write_text(json.dumps({"kernels": [
        {"name": "mm_512", "flop": {"fp64": 2 * N**3}, "bytes": {"DRAM": 3 * N * N * 8},
         "seconds": 0.394, "unit": "vector", "meta": {"op": "matmul"}}]}))
    return str(kern), str(prof)


def _fp32_advice(capsys, kern: str, prof: str) -> dict:
    capsys.readouterr()
    assert main(["report", kern, "--on", prof, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (diag,) = doc["diagnosis"]
    (a,) = [a for a in diag["advice"] if a["action"] == "use fp32 instead of fp64"]
    return a


def test_report_holds_use_fp32_to_the_nominal_ratio(tmp_path, capsys):
    a = _fp32_advice(capsys, *_files(tmp_path))
    assert a["speedup"] == pytest.approx(2.0, rel=1e-9)            # not 235 / 69.2 = 3.40
    assert a["new_seconds"] == pytest.approx(0.394 / 2, rel=1e-9)  # 197 ms
    assert "measured fp32/fp64 vector = 3.40x" in a["assumption"]
    assert "nominal 2.00x: past the nominal ratio" in a["assumption"]
    assert "138 GFLOP/s (derived)" in a["assumption"]               # 2 x 69.2


def test_report_text_says_2x(tmp_path, capsys):
    kern, prof = _files(tmp_path)
    capsys.readouterr()
    assert main(["report", kern, "--on", prof]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "use fp32 instead of fp64: 2.00x predicted" in text
    assert "3.40x predicted" not in text


def test_without_a_nominal_roof_the_measured_ratio_stays_and_is_said_unchecked(
        tmp_path, capsys):
    a = _fp32_advice(capsys, *_files(tmp_path, nominal=None))
    assert a["speedup"] == pytest.approx(235 / 69.2, rel=1e-9)     # 3.396x
    assert "not checked against a nominal ratio" in a["assumption"]


def test_machine_for_carries_the_nominal_roof_only_beside_another_roof():
    profile = MachineProfile(host={"kind": "cpu"}, nominal=NOMINAL, measured=MEASURED)
    assert machine_for(analyze(MEASURED, []), profile).nominal == NOMINAL
    # judging the nominal roof itself: nothing to cap against
    assert machine_for(analyze(NOMINAL, []), profile).nominal is None
    assert machine_for(analyze(MEASURED, [])).nominal is None       # no profile
