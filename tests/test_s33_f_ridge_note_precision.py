"""Review s33 F4: the datasheet note's expected measured ridge named the roof's top float
ceiling whatever the kernels ran: `rooflab ncu output.csv --on 'RTX 4060 Laptop GPU'` (an
fp64 kernel) said "a measured ridge (fp8 tensor / DRAM, 156 on the datasheet)". It now
names the ceiling of the precision with the most FLOP among the kernels.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model.datasheet_note import datasheet_note
from rooflab.model.kernel import Kernel

GPP = Path("/work/shared/fixtures/ncu/nersc-gpp/output.csv")


def test_fp32_kernels_on_a_t4_get_the_fp32_vector_ridge():
    # T4: fp32 vector 8.1 TFLOP/s, DRAM 320 GB/s: ridge 8.1e12 / 320e9 = 25.3 FLOP/B;
    # bands: 25.3125 x 0.70 / 0.90 = 19.69 to 25.3125 x 0.90 / 0.75 = 30.375
    # (old: fp16 tensor 65e12 / 320e9 = 203, 158-244)
    saxpy = Kernel("saxpy", {"fp32": 2e9}, {"DRAM": 12e9}, seconds=0.05)
    note = datasheet_note(load_roof("T4"), [saxpy])
    assert note.endswith("; a measured ridge (fp32 vector / DRAM, 25.3 on the datasheet) is "
                         "expected at 19.7-30.4 FLOP/byte for these bands (bandwidth "
                         "75-90 %)")


def test_the_precision_with_most_flop_names_the_ridge():
    saxpy = Kernel("saxpy", {"fp32": 2e9}, {"DRAM": 12e9}, seconds=0.05)
    mixed = Kernel("mixed", {"fp32": 1e9, "fp16": 4e9}, {"DRAM": 12e9}, seconds=0.05)
    # fp16 4e9 > fp32 2e9 + 1e9: T4's fp16 tensor 65e12 / 320e9 = 203 (158-244)
    note = datasheet_note(load_roof("T4"), [saxpy, mixed])
    assert "(fp16 tensor / DRAM, 203 on the datasheet) is expected at 158-244" in note


def test_memory_only_kernels_keep_the_top_float_ridge():
    copy = Kernel("copy", {}, {"DRAM": 12e9}, seconds=0.05)
    note = datasheet_note(load_roof("T4"), [copy])
    assert "(fp16 tensor / DRAM, 203 on the datasheet)" in note


@pytest.mark.skipif(not GPP.exists(), reason="no /work/shared/fixtures (NERSC GPP recording)")
def test_the_gpp_recording_names_fp64(capsys):
    assert main(["ncu", str(GPP), "--on", "RTX 4060 Laptop GPU"]) == 0
    out, err = capsys.readouterr()
    text = " ".join((out + err).split())
    # fp64 vector 228 GFLOP/s x 1.62 / 2.37 GHz (the clock ncu recorded) = 155 GFLOP/s over
    # DRAM 256 GB/s = 0.607; bands 0.607 x 0.7 / 0.9 = 0.472, 0.607 x 0.9 / 0.75 = 0.729
    # (old: fp8 tensor / DRAM, 156)
    assert ("a measured ridge (fp64 vector / DRAM, 0.607 on the datasheet) is expected at "
            "0.472-0.729 FLOP/byte") in text
    assert "fp8 tensor / DRAM" not in text
