"""Review s18 r8 (rooflab as a library in a notebook): the Python API's level names,
profile saving, exception exports, argument checks, with_() on a measured kernel and the
bare-FLOP precision mark. Numbers by hand from the T4 catalog roof (fp16 tensor 65
TFLOP/s, DRAM 320 GB/s, 5 us per launch)."""

from __future__ import annotations

import json

import pytest

import rooflab
from rooflab import errors
from rooflab.hardware.profile import MachineProfile, load_profile, save_profile
from rooflab.ingest.kernelfile import load_kernels, save_kernels
from rooflab.ingest.kernelfile_rows import precision_assumed_note
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.display import kernel_text

T4 = rooflab.load_roof("T4")
# AI 1e9 / 1e8 = 10 FLOP/B; attainable min(65e12, 3.2e11 x 10) = 3.2e12 FLOP/s;
# achieved 1e9 / 1e-3 = 1e12 FLOP/s = 31.25 % of it
K = rooflab.Kernel("k", flop={"fp16": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-3)
ONE_OF = "use one of L1, L2, L3, DRAM, NVLink, xGMI, ICI, PCIe, network, loopback"


# --- F1: level names in analyze() / plot_roofline() ---------------------------------------

@pytest.mark.parametrize("levels", [["dram"], ["HBM3e"], ("DRAM",), "dram"])
def test_analyze_levels_read_as_in_files(levels):
    (p,) = rooflab.analyze(T4, [K], levels=levels).points
    assert p.level == "DRAM"
    assert p.percent_of_roof == pytest.approx(31.25)


def test_analyze_unknown_level_is_refused():
    with pytest.raises(errors.InputError, match=f"analyze\\(\\): levels L9: {ONE_OF}"):
        rooflab.analyze(T4, [K], levels=["L9"])


def test_chart_level_read_as_in_files():
    from rooflab.report.chart import roofline_data

    d = roofline_data([T4], [K], level="dram")
    assert [(p.kernel, p.level) for p in d.points] == [("k", "DRAM")]
    assert not any("no bytes at" in n for n in d.notes)
    with pytest.raises(errors.InputError, match=f"plot_roofline\\(\\): level L9: {ONE_OF}"):
        roofline_data([T4], [K], level="L9")


def test_one_level_rule_for_cli_and_python():
    from rooflab.model.level_names import checked_level

    # the CLI's `--level` words (cli/plot.py), from the shared function
    assert checked_level("hbm3", "--level") == "DRAM"
    assert checked_level("l2", "--level") == "L2"
    assert checked_level("nvlink", "--level") == "NVLink"
    with pytest.raises(errors.InputError, match=f"^--level L9: {ONE_OF}$"):
        checked_level("L9", "--level")


# --- F2: save_profile / MachineProfile types; a roof without ceilings ------------------

def test_save_profile_refuses_a_roof(tmp_path):
    out = tmp_path / "r.json"
    with pytest.raises(errors.InputError, match="got Roof 'NVIDIA T4'; wrap it: "
                                                  "MachineProfile"):
        save_profile(out, T4)
    with pytest.raises(errors.InputError, match="must be a MachineProfile; got dict"):
        save_profile(out, {"a": 1})
    assert not out.exists()


def test_machine_profile_checks_its_fields():
    with pytest.raises(errors.InputError, match="host must be a dict"):
        MachineProfile(host="box")
    with pytest.raises(errors.InputError, match="measured must be a Roof or None"):
        MachineProfile(host={"name": "box"}, measured={"x": 1})
    with pytest.raises(errors.InputError, match="nominal must be a Roof or None"):
        MachineProfile(host={"name": "box"}, nominal="T4")


def test_save_profile_refuses_a_roof_without_ceilings(tmp_path):
    out = tmp_path / "e.json"
    with pytest.raises(errors.InputError, match="measured roof 'x' has no ceilings"):
        save_profile(out, MachineProfile(host={"name": "b"}, measured=Roof("x")))
    assert not out.exists()
    # one with ceilings saves and reads back with its numbers
    box = Roof("box", kind="measured", compute=(Ceiling(118e9, "fp64", provenance="measured"),),
               memory=(Ceiling(37.5e9, level="DRAM", provenance="measured"),))
    save_profile(out, MachineProfile(host={"name": "b"}, measured=box))
    back = load_profile(out).measured
    assert (back.compute[0].value, back.bandwidth("DRAM").value) == (118e9, 37.5e9)


# --- F3: the exception types where docs/python.md §8 names them -------------------------

@pytest.mark.parametrize("name", ["RooflabError", "InputError", "ParseError",
                                  "MissingFileError", "HardwareNotFound",
                                  "MissingDependency", "OutputError", "InputWarning"])
def test_errors_exported(name):
    assert getattr(rooflab, name) is getattr(errors, name)
    assert name in rooflab.__all__


def test_except_rooflab_hardware_not_found():
    with pytest.raises(rooflab.HardwareNotFound, match="unknown hardware 'h2000'"):
        rooflab.load_roof("h2000")


# --- F4: argument types, ~, find_compute/bandwidth names -------------------------------

@pytest.mark.parametrize("bad", [3, None])
def test_load_kernels_bad_type(bad):
    with pytest.raises(errors.InputError, match="load_kernels\\(\\): give a kernel file's "
                                                  "path"):
        load_kernels(bad)


def test_home_folder_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    save_kernels(tmp_path / "k.json", [K])
    (k,) = load_kernels("~/k.json")
    assert (k.name, k.seconds, dict(k.bytes)) == ("k", 1e-3, {"DRAM": 1e8})
    box = Roof("box", compute=(Ceiling(1e12, "fp32"),), memory=(Ceiling(1e11, level="DRAM"),))
    save_profile(tmp_path / "me.json", MachineProfile(host={"name": "b"}, nominal=box))
    assert load_profile("~/me.json").nominal.bandwidth("DRAM").value == 1e11


@pytest.mark.parametrize("call", [lambda: rooflab.ridge("1e12", 1e11),
                                  lambda: rooflab.attainable(1.0, "1e12", 1e11),
                                  lambda: rooflab.ridge(1e12, True)])
def test_text_rates_refused(call):
    with pytest.raises(errors.InputError, match="must be a number in"):
        call()


def test_roof_lookups_read_names_as_in_files():
    assert T4.bandwidth("dram").value == 3.2e11
    assert T4.find_compute("FP16").value == 65e12
    assert rooflab.ridge(T4.find_compute("FP16").value, T4.bandwidth("dram").value) == 203.125


# --- F9: with_(seconds=...) on a measured kernel ----------------------------------------

MEASURED = rooflab.Kernel(
    "triad", flop={"fp64": 1e7}, bytes={"DRAM": 1.2e8}, seconds=0.04,
    samples=(0.0402, 0.0323, 0.0454, 0.0400), provenance={"seconds": "measured"},
    meta={"device": "cpu", "seconds_stat": "median", "median_s": 0.04, "best_s": 0.0323,
          "spread": 0.33, "iqr_rel": 0.21, "samples_n": 4, "calls_per_sample": 1,
          "warning": "triad: timing samples vary"})


def test_with_seconds_drops_the_old_samples():
    k2 = MEASURED.with_(seconds=0.005)
    assert k2.seconds == 0.005 and k2.samples == ()
    assert dict(k2.meta) == {"device": "cpu"}
    text = kernel_text(k2)
    assert text.startswith("Kernel 'triad': 5 ms per call (measured)")
    assert "median of" not in text and "32.3 ms" not in text and "vary" not in text
    # the same as the kernel built afresh with that time
    fresh = rooflab.Kernel("triad", flop={"fp64": 1e7}, bytes={"DRAM": 1.2e8},
                           seconds=0.005, meta={"device": "cpu"})
    assert (k2.samples, dict(k2.meta), dict(k2.provenance)) == \
        (fresh.samples, dict(fresh.meta), dict(fresh.provenance))
    assert MEASURED.with_(calls=2).samples == ()


def test_with_keeps_samples_when_the_time_stays():
    assert MEASURED.with_(name="x").samples == MEASURED.samples
    assert MEASURED.with_(seconds=0.04).meta["best_s"] == 0.0323
    # samples given with the new time: the caller's
    k = MEASURED.with_(seconds=0.005, samples=(0.005, 0.0051))
    assert k.samples == (0.005, 0.0051)


# --- F6: a bare FLOP number is an assumed precision, as in a kernel file ----------------

def test_bare_flop_marked_assumed(tmp_path):
    k = rooflab.Kernel("hand", flop=2e9, bytes=1.2e7, seconds=1e-3)
    assert dict(k.flop) == {"fp32": 2e9}
    assert k.provenance["precision"] == "assumed"
    assert "precision" not in rooflab.Kernel("z", flop=0, bytes=1e6).provenance
    assert "precision" not in rooflab.Kernel("d", flop={"fp32": 2e9}).provenance
    save_kernels(tmp_path / "hand.json", [k])
    saved = json.loads((tmp_path / "hand.json").read_text())["kernels"][0]
    assert saved["provenance"]["precision"] == "assumed"
    note = precision_assumed_note(load_kernels(tmp_path / "hand.json"))
    assert note.startswith("precision not given for 1 kernel ('hand'): judged as fp32")


# --- F7: docstrings -------------------------------------------------------------------

def test_docstrings():
    assert "ParseError" in rooflab.load_profile.__doc__
    assert "Returns None" in rooflab.save_profile.__doc__
    assert "seconds" in Roof.__doc__ and "overhead_s" in Roof.__doc__
    assert "bytes/s" in Roof.bandwidth.__doc__
    # the A100's top float ceiling is fp16 tensor (a tie with bf16 names fp16)
    assert rooflab.load_roof("A100").top_float_compute().label == "fp16 tensor"
    for fn in (rooflab.ridge, rooflab.attainable):
        assert "bf16 tensor" not in fn.__doc__ and "fp16 tensor" in fn.__doc__
