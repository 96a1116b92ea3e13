"""Session 37 D: a family name with a board word the family is not sold as.

NVIDIA sells no 'H200 PCIe': the H200's PCIe card is the H200 NVL (a dual-slot PCIe Gen5
card with an NVLink bridge, 600 W; NVIDIA's H200 page, H200 NVL column). `--on 'H200 PCIe'`
was refused as unknown with "did you mean: NVIDIA H100 PCIe, NVIDIA A800 80GB PCIe, NVIDIA
A100 80GB PCIe, NVIDIA H200 SXM, NVIDIA A10?": four other products' roofs and not the card
meant. The error now names it. A board word the family lacks with no such name (an 'A100
NVL': the A100 is sold as SXM and PCIe) lists the boards there are, and picks none.
"""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error

from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import lookup


@pytest.mark.parametrize("typed", ["H200 PCIe", "h200-pcie", "NVIDIA H200 PCIe 141GB"])
def test_h200_pcie_names_the_h200_nvl(capsys, typed):
    """Old: "unknown hardware 'H200 PCIe'; did you mean: NVIDIA H100 PCIe, ..." (no NVL)."""
    err = one_line_error(capsys, ["ai", "matmul", "4096", "4096", "4096", "--on", typed])
    assert err == (f"error: unknown hardware '{typed}': NVIDIA sells no H200 PCIe; the "
                   "H200's PCIe card is the H200 NVL (the catalog has H200 SXM, H200 NVL): "
                   "give 'H200 NVL'")


def test_the_name_it_gives_is_the_600_w_card():
    """The name the error gives resolves to the H200 NVL: 600 W, 60 TFLOP/s fp32 (the SXM's
    700 W and 67), so the user who follows it gets the PCIe card's roofs."""
    nvl = lookup("H200 NVL")
    assert nvl.name == "NVIDIA H200 NVL" and nvl.tdp_w == 600


def test_a_board_the_family_lacks_lists_those_it_has():
    """'A100 NVL': the A100 comes as 40/80 GB in SXM and PCIe, no NVL; no pick. Old:
    "did you mean: NVIDIA H100 NVL, NVIDIA A100 80GB SXM, NVIDIA H200 NVL, NVIDIA A10?"."""
    with pytest.raises(HardwareNotFound) as e:
        lookup("A100 NVL")
    assert str(e.value).startswith(
        "unknown hardware 'A100 NVL': no A100 NVL in the catalog, which has the A100 as "
        "A100 40GB PCIe, A100 40GB SXM, A100 80GB PCIe, A100 80GB SXM; give one of those "
        "where it is your card")


def test_real_boards_still_resolve():
    """A guard: boards the catalog has are found as before (passes on the old code too)."""
    assert lookup("H100 PCIe").name == "NVIDIA H100 PCIe"
    assert lookup("H100 NVL").name == "NVIDIA H100 NVL"
    assert lookup("H200").name == "NVIDIA H200 SXM"
