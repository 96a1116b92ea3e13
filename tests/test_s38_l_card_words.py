"""Session 38 L: a card's board words, the MI210 as the PCIe card it is, and `-o -`.

- 'rtx 4090 sxm nvl' said "with no NVL SXM board" (the board words sorted and run
  together, as if one board): now "with no SXM or NVL board", in the order typed.
- The AMD Instinct MI210 is sold only as a PCIe card (AnandTech's MI200 table, Mar 2022:
  form factor "PCIe (4.0)"; the MI250/MI250X are OAM), its peers joined by the Infinity
  Fabric Link bridge; the catalog said "Infinity Fabric (3 links)", so names.card_board saw
  a module and 'mi210 pcie' was refused ("another board has other clocks and power").
  The catalog now names the bridge; its 4-card hive still rings over the mesh.
- `-o -` said "unknown suffix '(none)'"; no verb writes its file to stdout.
"""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error

from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import lookup
from rooflab.hardware.names import card_board
from rooflab.model.comm_link import bridged_pairs, device_ring_link


@pytest.mark.parametrize("typed, words", [("rtx 4090 sxm nvl", "no SXM or NVL board"),
                                          ("rtx 4090 nvl sxm", "no NVL or SXM board")])
def test_two_boards_a_card_is_not_are_named_apart(capsys, typed, words):
    """Old: "with no NVL SXM board" both ways."""
    err = one_line_error(capsys, ["specs", "show", typed])
    assert f"the RTX 4090 is a PCIe card (PCIe Gen4 x16), with {words}:" in err


def test_mi210_pcie_is_the_mi210():
    """Old: HardwareNotFound "no MI210 PCIe in the catalog". 64 GB (64e9 B), 300 W."""
    dev = lookup("mi210 pcie")
    assert (dev.name, dev.memory_bytes, dev.tdp_w) == ("AMD Instinct MI210", 64e9, 300)
    assert card_board(dev) == "pcie"
    assert dev.interconnect == "Infinity Fabric Link bridge (3 links)"


def test_mi210_sxm_is_refused_naming_its_board(capsys):
    """Old: "... which has the MI210 as MI210 ... (another board has other clocks ...)"."""
    err = one_line_error(capsys, ["specs", "show", "mi210 sxm"])
    assert "the MI210 is a PCIe card (PCIe Gen4 x16; Infinity Fabric Link bridge (3 " \
           "links) between cards), with no SXM board" in err


def test_modules_stay_modules_and_the_hive_keeps_its_mesh():
    """The MI250X and MI300X are OAM modules (no bridge): no board of theirs is a card.
    4 MI210 ring over 3 of the bridge's links, 3 x 100 GB/s both directions / 2 = 150
    GB/s per direction, not over PCIe as an NVLink bridge's pairs would (bridged_pairs)."""
    for name in ("MI250X", "MI300X"):
        assert card_board(lookup(name)) is None
        with pytest.raises(HardwareNotFound):
            lookup(f"{name} pcie")
    mi210 = lookup("MI210")
    assert not bridged_pairs(mi210)
    assert bridged_pairs(lookup("A100 80GB PCIe"))
    link = device_ring_link(mi210, 4)
    assert (link.level, link.bus_bytes_per_s) == ("xGMI", 150e9)


@pytest.mark.parametrize("argv", [
    ["specs", "import", "--dram", "83GB/s", "--fp64", "355GFLOP/s", "-o", "-"],
    ["llm", "llama-2-7b", "--on", "H100", "-o", "-"]])
def test_dash_o_dash_says_leave_it_out(capsys, argv):
    """Old: "-o -: unknown suffix '(none)'; use .json"."""
    err = one_line_error(capsys, argv)
    assert err.startswith("error: -o - is not supported here: leave -o out to print")
