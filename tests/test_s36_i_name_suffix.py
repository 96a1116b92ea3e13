"""Session 36 I: a ':SUFFIX' on a catalog name, and a die index past a package's dies, are
errors naming the valid choices (the catalog's loose match dropped them without a word)."""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error

from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import lookup


def test_unknown_suffix_names_the_choices(capsys):
    """'h100:foo' tokenises to h100 + foo; the H100 entries' words are inside it, so it was
    the H100 SXM, 'foo' dropped. Now an error listing what 'h100' fits (also_named)."""
    err = one_line_error(capsys, ["specs", "show", "h100:foo"])
    assert err == ("error: unknown hardware 'h100:foo': a catalog name takes no ':foo'; "
                   "'h100' is H100 SXM or H100 PCIe or H100 NVL: give one of those "
                   "(`rooflab specs list` shows all)")


def test_die_index_past_the_package_is_refused(capsys, tmp_path):
    """The MI250X is 2 devices to software (catalog software_devices = 2): die0 and die1
    exist, die9 does not; --on of a kernel verb said nothing and judged one die."""
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,precision\nk,1e9,1e6,1e-3,fp32\n")
    err = one_line_error(capsys, ["report", str(k), "--on", "mi250x:die9"])
    assert ("AMD Instinct MI250X is 2 dies to software, MI250X:die0 or MI250X:die1; give "
            "one, or 'MI250X' alone") in err


def test_a_suffix_on_a_package_lists_its_dies(capsys):
    """A package's own choices include its dies."""
    err = one_line_error(capsys, ["specs", "show", "mi250x:foo"])
    assert "takes no ':foo'; 'mi250x' is MI250X (one of its dies: MI250X:die0 or " \
           "MI250X:die1)" in err


def test_a_die_index_on_a_one_device_gpu_is_refused():
    """The H100 SXM is one device: no die to pick."""
    with pytest.raises(HardwareNotFound, match="NVIDIA H100 SXM is one device, no dies to "
                                               "pick: give 'H100 SXM'"):
        lookup("h100:die1")


@pytest.mark.parametrize("name, found", [
    ("mi250x:die1", "AMD Instinct MI250X"),             # a die within the package
    ("MI250X gcd0", "AMD Instinct MI250X"),
    ("AMD Instinct MI250X / MI250", "AMD Instinct MI250X"),   # rocm-smi's name: loose still
    ("AMD EPYC 7742 64-Core Processor", "AMD EPYC 7742"),    # lscpu's name
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
    ("AMD Instinct MI250X, one die (derived: the package's / 2)", "AMD Instinct MI250X"),
])
def test_names_that_were_read_still_are(name, found):
    """Driver names with words of their own, a roof's name (its ':' inside parentheses)
    and a die within the package resolve as before."""
    assert lookup(name).name == found


def test_a_die_by_index_gets_the_package_note(capsys):
    """`specs show mi250x:die1` shows the package's figures (2 dies together): said as for
    'MI250X GCD' (model/dies.die_query_words, which looked for whole words 'die'/'gcd')."""
    from rooflab.cli.main import main

    assert main(["specs", "show", "mi250x:die1"]) == 0
    err = capsys.readouterr().err
    assert "'mi250x:die1' is read as the package AMD Instinct MI250X (2 dies" in err
