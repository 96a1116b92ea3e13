"""Session 38 C: a board word that names the board the one catalog entry already is.

The RTX 4090 and the L40S are PCIe cards (the catalog's interconnect: 'PCIe Gen4 x16',
their only link), but their names carry no board word, so 'rtx 4090 pcie' crossed the
variant word 'pcie' and was refused: "no RTX 4090 PCIe in the catalog, which has the RTX
4090 as RTX 4090; give that name where it is your card (another board has other clocks
and power)", as if the user's PCIe card were another board. It now resolves, with a note
that says which entry and why; a board the card is not made as ('rtx 4090 sxm') is still
refused, with the card's own board named.
"""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error, run_cli

from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import lookup


@pytest.mark.parametrize("typed, name", [
    ("rtx 4090 pcie", "NVIDIA GeForce RTX 4090"), ("RTX-4090-PCIe", "NVIDIA GeForce RTX 4090"),
    ("l40s pcie", "NVIDIA L40S"), ("rtx 4090 24gb pcie", "NVIDIA GeForce RTX 4090")])
def test_a_pcie_cards_own_board_resolves(typed, name):
    """Old: HardwareNotFound. The entry found is the card's: the RTX 4090 at 450 W with 24
    GB (24e9 B) at 1008 GB/s, the L40S at 48 GB."""
    dev = lookup(typed)
    assert dev.name == name
    if "4090" in typed:
        assert (dev.tdp_w, dev.memory_bytes, dev.interconnect) == (450, 24e9, "PCIe Gen4 x16")
    else:
        assert dev.memory_bytes == 48e9


def test_the_verb_says_once_which_entry_and_why():
    """`--on 'l40s pcie'`: one note, the entry and its link; old: exit 2, the error."""
    done = run_cli("ai", "matmul", "4096", "4096", "4096", "--on", "l40s pcie")
    assert done.returncode == 0, done.stderr
    notes = [x for x in done.stderr.splitlines() if x.startswith("note: 'l40s pcie'")]
    assert notes == ["note: 'l40s pcie' is NVIDIA L40S, a PCIe card (PCIe Gen4 x16)"]


def test_a_board_the_card_is_not_is_refused_with_its_own_board(capsys):
    """'rtx 4090 sxm': no pick, and the advice names the PCIe card (old: "another board
    has other clocks and power", as if an SXM RTX 4090 existed)."""
    err = one_line_error(capsys, ["ai", "matmul", "64", "64", "64", "--on", "rtx 4090 sxm"])
    assert err == ("error: unknown hardware 'rtx 4090 sxm': the RTX 4090 is a PCIe card "
                   "(PCIe Gen4 x16), with no SXM board: give 'RTX 4090' where it is your "
                   "card, or measure yours with `rooflab probe`")


def test_a_size_the_card_is_not_says_its_size():
    """'rtx 4090 48gb pcie': the card is 24 GB; the size error, not a board one."""
    with pytest.raises(HardwareNotFound) as e:
        lookup("rtx 4090 48gb pcie")
    assert str(e.value).startswith("no 48GB 'rtx 4090 pcie' in the catalog: rtx 4090 pcie "
                                   "comes as 24GB in the catalog")


def test_guards_other_boards_stay_as_they_were():
    """Passes on the old code too: the H200's PCIe card is the NVL; a laptop GPU is no
    card; the MI300X is an OAM module (no PCIe in its interconnect)."""
    with pytest.raises(HardwareNotFound, match="the H200's PCIe card is the H200 NVL"):
        lookup("h200 pcie")
    for typed in ("rtx 4060 laptop pcie", "mi300x pcie"):
        with pytest.raises(HardwareNotFound, match="another board has other clocks"):
            lookup(typed)
    assert lookup("h100 pcie").name == "NVIDIA H100 PCIe"
