"""s33 C: `rooflab whatif` on the envelope roof (no --on, no peaks in the files).

Without a roof, the ceilings are the best the kernels themselves reached: NERSC GPP
output1.csv's one kernel sets them and reads 100 %. `whatif output1.csv --hardware H100`
carried that 100 % onto the H100 and printed `30.5 s -> 154 ms (198x)`; the kernel reaches 55 %
of the RTX 4060 Laptop GPU it ran on (--on 'RTX 4060 Laptop GPU'), which gives
`30.5 s -> 281 ms (108x)`:
  FLOP 2.597e12 (ncu: dadd + dmul + 2 dfma), DRAM bytes 2.597e12 / 5.03 = 516 GB;
  on the H100 at AI 5.03: min(34 TFLOP/s fp64, 5.03 x 3.35 TB/s = 16.9 TFLOP/s) = 16.9;
  at 100 %: 2.597e12 / 16.9e12 = 154 ms; at 55 %: 281 ms.
`whatif output1.csv --precision fp32` printed 1.00x: the envelope has no fp32 ceiling, so the
fp64 one (the kernel's own rate) capped it. Both are now an error naming --on.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


@pytest.mark.parametrize("change", [["--hardware", "H100"], ["--precision", "fp32"]])
def test_whatif_without_a_roof_is_refused(gpp, change, capsys):
    assert main(["whatif", str(gpp / "output1.csv"), *change]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    err = got.err
    assert err.startswith("error: ") and "Traceback" not in err
    assert "no roof is known" in err and "pass --on the device they ran on" in err
    # the file records compute capability 8.9: the catalog devices of it are named
    assert "RTX 4060 Laptop GPU" in err


def test_whatif_hardware_with_the_roof_it_ran_on(gpp, capsys):
    assert main(["whatif", str(gpp / "output1.csv"), "--on", "RTX 4060 Laptop GPU",
                 "--hardware", "H100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (move,) = doc["moves"]
    # 55 % of 16.9 TFLOP/s: 2.597e12 / (0.55 x 16.9e12) = 0.281 s (see the docstring);
    # the work floor at 100 %: 0.154 s
    assert move["after_s"] == pytest.approx(0.281, rel=0.02)
    assert move["after_work_floor_s"] == pytest.approx(0.154, rel=0.02)
    assert doc["speedup"] == pytest.approx(30.49 / 0.281, rel=0.02)


def test_a_memory_side_change_still_runs_on_the_envelope(gpp, capsys):
    # --bytes-scale moves along the slope of the bandwidth the kernels reached: allowed
    assert main(["whatif", str(gpp / "output1.csv"), "--bytes-scale", "0.5"]) == 0
