"""s33 C: another GPU's roof got the clock note meant for a boost-clock roof of the GPU the
kernels ran on.

`rooflab ncu output.csv --on h100` (NERSC GPP, profiled on a compute capability 8.9 RTX 4060
Laptop GPU at 1.62 GHz) printed, after the capability warning: "note: the kernels ran at
1.62 GHz ..., while NVIDIA H100 SXM's catalog peaks assume 1.98 GHz (boost): % of roof is
judged at boost, so it reads at most 82 % ...; leave '@boost' out of --on (the compute
ceilings then scale to the recorded clock)". No '@boost' was given, and leaving it out scales
nothing: another GPU's roof is never scaled to a clock it did not run at (docs/ingest.md,
"The clock"). The H100's 1.98 GHz is 67 TFLOP/s fp32 / (132 SMs x 128 lanes x 2); 1.62 / 1.98
= 82 %: a ratio of two GPUs' clocks, which bounds nothing.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

CLOCK_NOTE = "the kernels ran at 1.62 GHz"


@pytest.mark.parametrize("verb", ["ncu", "report", "plot"])
def test_another_gpus_roof_gets_no_clock_note(gpp, verb, capsys, tmp_path):
    args = [verb, str(gpp / "output.csv"), "--on", "h100 sxm"]
    if verb == "plot":
        args += ["-o", str(tmp_path / "p.png")]
    assert main(args) == 0
    got = capsys.readouterr()
    said = got.out + got.err
    # the capability warning stays: the H100 is 9.0, the file records 8.9
    assert "compute capability 8.9 GPU, but NVIDIA H100 SXM is 9.0" in said
    assert CLOCK_NOTE not in said
    assert "leave '@boost' out" not in said


def test_the_h100_roof_keeps_its_listed_peaks(gpp, capsys):
    # not scaled either: H100 SXM's fp64 vector 34 TFLOP/s as listed, not 34 x 0.82
    assert main(["ncu", str(gpp / "output.csv"), "--on", "h100 sxm", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fp64 = next(c for c in doc["roof"]["compute"]
                if (c["precision"], c["unit"]) == ("fp64", "vector"))
    assert fp64["flop_per_s"] == pytest.approx(34e12, rel=0.01)
    assert not any(CLOCK_NOTE in n for n in doc["notes"])


def test_the_gpu_they_ran_on_at_boost_keeps_its_note(gpp, capsys):
    # the note's own case: RTX 4060 Laptop GPU kept at its 2.37 GHz boost peaks
    # (14.56 TFLOP/s / (24 x 128 x 2)); 1.62 / 2.37 = 68 %
    assert main(["ncu", str(gpp / "output.csv"), "--on", "RTX 4060 Laptop GPU@boost"]) == 0
    got = capsys.readouterr()
    said = got.out + got.err
    assert CLOCK_NOTE in said and "reads at most 68 %" in said
