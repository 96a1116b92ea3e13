"""`ai occupancy --on` a chip with no CUDA compute capability says the calculator is CUDA's,
not "give --cc X.Y" (which would make up a number for an Apple or AMD GPU), and the
--stride help prints its x[i*S] (Rich read the bracket as markup and dropped it)."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main


# an AMD CDNA GPU has its own calculator since session 29 (tests/test_s29_gC_cdna_occupancy.py)
@pytest.mark.parametrize("on", ["m2", "epyc 9654"])
def test_a_chip_without_cuda_says_the_calculator_is_cudas(capsys, on):
    assert main(["ai", "occupancy", "--block", "256", "--regs", "32", "--on", on]) == 2
    err = capsys.readouterr().err
    assert f"--on {on} is not an NVIDIA GPU" in err and "CUDA's occupancy calculator" in err
    assert "--cc X.Y" not in err and "Traceback" not in err


def test_an_nvidia_gpu_still_runs(capsys):
    # T4 (7.5): 32 warps per SM, block 256 = 8 warps -> 4 blocks, 100 %
    assert main(["ai", "occupancy", "--block", "256", "--regs", "32", "--on", "t4"]) == 0
    assert "theoretical occupancy 100.0 %" in capsys.readouterr().out


def test_stride_help_keeps_its_brackets(capsys):
    assert main(["ai", "elementwise", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.count("x[i*S]") == 2
