"""Review 15v: an `@` suffix after --on that is no probed profile's `.json@Nt` is refused
(F-m, F-n); an ERT file with DRAM and HBM/MCDRAM keeps the one named DRAM, the same in
--on and `specs import` (F-f); the ERT note says the ceilings' own precision (F-g); with
ROOFLAB_ON the profiler verbs' roof line and roof_source say `from ROOFLAB_ON=X` (F-k)."""

from __future__ import annotations

import copy
import json

import pytest
from test_likwid import MEM_DP
from test_roof_import import ERT_P100, _scaling_profile

from rooflab.cli.main import main
from rooflab.errors import InputError, ParseError
from rooflab.hardware.resolve import load_roofs, split_threads


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "me.json"   # probed at 1, 2 and 4 threads
    path.write_text(json.dumps(_scaling_profile()))
    return str(path)


def _ert(tmp_path, name: str, gbytes=None, gflops=None) -> str:
    doc = copy.deepcopy(ERT_P100)   # ebugger/Empirical-Roofline-Toolkit, P100 Run.018
    if gbytes is not None:
        doc["empirical"]["gbytes"]["data"] = gbytes
    if gflops is not None:
        doc["empirical"]["gflops"]["data"] = gflops
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


# --- F-m: NAME@... on a catalog name ---------------------------------------------------------
@pytest.mark.parametrize("spec", ["EPYC 9654@1t", "H100@4threads", "EPYC 9654@banana"])
def test_suffix_on_a_catalog_name_is_refused(spec):
    # the old code read 'EPYC 9654@1t' as 'EPYC 9654': the 96-core roof, fp32 7.37 TFLOP/s
    with pytest.raises(InputError) as err:
        load_roofs(spec)
    text = str(err.value)
    suffix = spec.rpartition("@")[2]
    assert f"'@{suffix}' picks a thread count of a probed profile" in text
    assert "catalog entry's roof is the whole chip" in text and f"drop '@{suffix}'" in text


def test_suffix_on_a_catalog_name_exits_2_in_ai_and_specs_show(capsys):
    assert main(["ai", "matmul", "1024", "1024", "1024", "--on", "EPYC 9654@1t"]) == 2
    err = capsys.readouterr().err
    assert "error: 'EPYC 9654@1t'" in err and "Traceback" not in err
    assert main(["specs", "show", "H100@1t"]) == 2
    assert "'H100' is not a probed profile .json" in capsys.readouterr().err


def test_a_file_whose_name_has_an_at_is_still_a_file(tmp_path):
    path = tmp_path / "run@1t"   # an existing file: never read as a suffix
    path.write_text("x")
    assert split_threads(str(path)) is None
    assert split_threads("me.json@2t") == ("me.json", 2)


# --- F-n: what a profile's suffix accepts ---------------------------------------------------
@pytest.mark.parametrize("suffix", ["all", "x"])
def test_profile_suffix_says_what_is_accepted(profile, suffix, capsys):
    # the old code: "unknown hardware 'me.json@all'"
    assert main(["specs", "show", f"{profile}@{suffix}"]) == 2
    err = capsys.readouterr().err
    assert f"'@{suffix}' is no thread count" in err
    assert "accepted: @1t, @2t, @4t (the counts this profile has)" in err
    assert f"@all is the file itself: drop the suffix ({profile})" in err
    assert "unknown hardware" not in err


def test_zero_threads_is_one_or_more(profile, capsys):
    # the old code: "no roof for 0 threads ...; probe them with ..."
    with pytest.raises(InputError, match="a thread count is 1 or more; accepted: @1t, @2t"):
        load_roofs(f"{profile}@0t")
    assert main(["ai", "matmul", "64", "64", "64", "--dtype", "fp64", "--on",
                 f"{profile}@0t"]) == 2
    err = capsys.readouterr().err
    assert "1 or more" in err and "probe them" not in err


# --- F-f: DRAM and HBM/MCDRAM in one ERT file ------------------------------------------------
P100_WITH_HBM = [["L1", 1002.83], ["L2", 541.98], ["L3", 290.41], ["DRAM", 68.76],
                 ["HBM", 900.0]]


def test_ert_dram_and_hbm_keeps_dram_in_on(tmp_path, capsys):
    path = _ert(tmp_path, "ert_hbm.json", gbytes=P100_WITH_HBM)
    roof = load_roofs(path)[0]
    dram = [c for c in roof.memory if c.level == "DRAM"]
    # one DRAM ceiling, the 68.76 GB/s DDR (the old code kept both; 900 GB/s won)
    assert [c.value for c in dram] == [pytest.approx(68.76e9)]
    assert ("HBM 900 GB/s (empirical.gbytes.data[4]) not used as DRAM: the figure named "
            "'DRAM' is (the memory past every cache)") in roof.notes
    # 400 MB at 68.76 GB/s = 5.817 ms (at 900 GB/s it read 444 us)
    assert main(["ai", "elementwise", "100000000", "--on", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["work_floor_s"] == pytest.approx(4e8 / 68.76e9, rel=1e-9)


def test_ert_dram_and_mcdram_one_rule_in_specs_import(tmp_path, capsys):
    path = _ert(tmp_path, "ert_knl.json",
                gbytes=[["L1", 1002.83], ["MCDRAM", 450.0], ["DRAM", 90.0]])
    out = tmp_path / "imp.json"
    # the old code: "DRAM given twice: by ert_knl.json and by ert_knl.json; keep one"
    assert main(["specs", "import", path, "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [(m["level"], m["bytes_per_s"]) for m in doc["memory"]] == [
        ("L1", pytest.approx(1002.83e9)), ("DRAM", pytest.approx(90e9))]
    assert "MCDRAM 450 GB/s (empirical.gbytes.data[1]) not used as DRAM" in \
        doc["memory"][1]["method"]


def test_ert_two_fast_memories_and_no_dram_is_refused(tmp_path, capsys):
    path = _ert(tmp_path, "ert_two.json", gbytes=[["L1", 1000.0], ["MCDRAM", 450.0],
                                                  ["HBM", 900.0]])
    with pytest.raises(ParseError, match=r"empirical.gbytes.data: both 'MCDRAM' \(data\[1\]\) "
                                         r"and 'HBM' \(data\[2\]\) read as DRAM"):
        load_roofs(path)
    assert main(["specs", "import", path, "-o", str(tmp_path / "x.json")]) == 2
    assert "both 'MCDRAM' (data[1]) and 'HBM' (data[2]) read as DRAM" in \
        capsys.readouterr().err


# --- F-g: the note says the ceilings' precision ----------------------------------------------
def test_ert_note_says_fp32_from_the_figure_name(tmp_path):
    roof = load_roofs(_ert(tmp_path, "ert_sp.json", gflops=[["FP32 GFLOPs", 500.0]]))[0]
    assert [(c.precision, c.value) for c in roof.compute] == [("fp32", 500e9)]
    note = roof.notes[0]
    assert note.endswith("FLOP/s read as fp32 (the figure's name 'FP32 GFLOPs')")
    assert "fp64" not in note


def test_ert_note_default_build_is_fp64(tmp_path):
    roof = load_roofs(_ert(tmp_path, "ert.json"))[0]
    assert roof.notes[0].endswith("FLOP/s read as fp64 (ERT's default build, double)")


# --- F-k: ROOFLAB_ON in the profiler verbs' roof line ----------------------------------------
def test_rooflab_on_is_named_in_the_likwid_roof_line_and_json(tmp_path, monkeypatch, capsys):
    lk = tmp_path / "lk.csv"
    lk.write_text(MEM_DP)
    monkeypatch.setenv("ROOFLAB_ON", "EPYC 9654")
    assert main(["likwid", str(lk)]) == 0
    captured = capsys.readouterr()
    assert "roof: AMD EPYC 9654 (nominal), from ROOFLAB_ON=EPYC 9654" in captured.out
    assert "--on" not in captured.out and "note: --on EPYC 9654" not in captured.err
    assert main(["likwid", str(lk), "--json"]) == 0
    source = json.loads(capsys.readouterr().out)["roof_source"]
    assert source.startswith("roof: AMD EPYC 9654 (nominal), from ROOFLAB_ON=EPYC 9654")
    # an --on typed wins and is said as typed
    assert main(["likwid", str(lk), "--on", "EPYC 9654", "--json"]) == 0
    source = json.loads(capsys.readouterr().out)["roof_source"]
    assert source.startswith("roof: AMD EPYC 9654 (nominal), from --on EPYC 9654")


def test_choose_refuses_a_catalog_name_with_a_thread_suffix(capsys):
    # `choose --among` looked names up in the catalog directly: 'H100@1t' read as 'H100'
    from pathlib import Path

    kernels = str(Path(__file__).resolve().parent.parent / "examples" / "seeds" / "k.json")
    assert main(["choose", kernels, "--among", "H100@1t,T4"]) == 2
    assert "a catalog entry's roof is the whole chip" in capsys.readouterr().err
