"""Python API leftovers of review s18 r8 F4: '~' in a roof path, and plot_roofline() given a
profile names what to pass."""

import pytest

import rooflab
from rooflab.errors import InputError


def test_load_roof_expands_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    roof = rooflab.load_roof("T4")
    rooflab.save_profile(tmp_path / "me.json",
                         rooflab.MachineProfile(host={"name": "box"}, nominal=roof))
    (loaded,) = rooflab.hardware.resolve.load_roofs("~/me.json")
    assert loaded.find_compute("fp16", "tensor").value == roof.find_compute("fp16", "tensor").value


def test_plot_roofline_given_a_profile_says_pass_its_roofs():
    profile = rooflab.MachineProfile(host={"name": "box"}, nominal=rooflab.load_roof("T4"))
    with pytest.raises(InputError, match="a profile holds roofs: pass profile.roofs"):
        rooflab.plot_roofline(profile, [rooflab.Kernel("k", flop=1e9, bytes=1e6)])
