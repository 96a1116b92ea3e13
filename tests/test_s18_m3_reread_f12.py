"""Reread s18 F12: one wording of "no roof, give --on" (envelope_bound), and '~' meaning the
home folder in the saves as in the loads (user_path)."""

import os

import pytest

import rooflab
from rooflab import Ceiling, Kernel, MachineProfile, Roof, analyze
from rooflab.errors import InputError
from rooflab.report import envelope_bound as eb
from rooflab.report.markdown import class_counts

BOX = Roof("box", compute=(Ceiling(1e12, "fp32"),), memory=(Ceiling(1e11, level="DRAM"),))
# 1e9 FLOP, 1e8 B in 10 ms: AI 10 (ridge 10), 1e11 FLOP/s = 10 % of the compute ceiling
K = Kernel("k", flop=1e9, bytes=1e8, seconds=1e-2)


def test_envelope_header_without_a_roof_is_the_plain_class():
    (p,) = analyze(BOX, [K]).points
    # terminal, markdown and HTML each wrote this conditional; roof None is now the header's
    assert eb.envelope_header(p, None, "memory") == "memory-bound"
    assert eb.envelope_header(p, None) == f"{p.bound}-bound"
    assert eb.envelope_header(p, BOX, "memory") == "memory-bound"


def test_the_no_roof_words_come_from_one_place():
    assert eb.NO_ROOF == "no roof (give --on)"
    assert eb.NO_ROOF_LINE == "no roof to judge against; give --on"
    assert eb.AT_BEST == "at the best here (no roof: give --on)"


def test_class_counts_words_the_envelope_kernel_with_the_constant(monkeypatch):
    from rooflab.ingest.profile_envelope import envelope_roof
    from rooflab.model.diagnose import diagnose

    roof = envelope_roof([K])
    (d,) = diagnose(analyze(roof, [K]))
    assert class_counts([d], roof) == "1 at the best here (no roof: give --on)"
    # the key is the constant, not a copy of its words
    monkeypatch.setattr("rooflab.report.markdown.AT_BEST", "AT BEST")
    assert class_counts([d], roof) == "1 AT BEST"


def test_save_kernels_expands_the_home_folder(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    written = rooflab.save_kernels("~/k.json", [K])
    # the file load_kernels("~/k.json") reads, not ./~/k.json under the working folder
    assert written == home / "k.json" and (home / "k.json").is_file()
    assert not os.path.exists(tmp_path / "~")
    (k,) = rooflab.load_kernels("~/k.json")
    assert (dict(k.flop), k.seconds, dict(k.bytes)) == ({"fp32": 1e9}, 1e-2, {"DRAM": 1e8})


def test_save_profile_expands_the_home_folder(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    rooflab.save_profile("~/me.json", MachineProfile(host={"name": "b"}, nominal=BOX))
    assert (home / "me.json").is_file() and not os.path.exists(tmp_path / "~")
    assert rooflab.load_profile("~/me.json").nominal.bandwidth("DRAM").value == 1e11


@pytest.mark.parametrize("call, words", [
    (lambda: rooflab.save_kernels(3, [K]), "save_kernels\\(\\): give a kernel file's path"),
    (lambda: rooflab.save_profile(None, MachineProfile(host={"name": "b"}, nominal=BOX)),
     "save_profile\\(\\): give a profile file's path"),
    (lambda: rooflab.load_profile(3.5), "load_profile\\(\\): give a profile file's path "
                                        "\\(str or pathlib.Path\\); got float 3.5"),
    (lambda: rooflab.load_kernels(None), "load_kernels\\(\\): give a kernel file's path "
                                         "\\(str or pathlib.Path\\); got NoneType None"),
])
def test_a_path_that_is_no_path_names_the_call(call, words):
    with pytest.raises(InputError, match=words):
        call()
