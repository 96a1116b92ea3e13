"""Session 35 B: one die of an MI250X (dies.one_die, the package's figures / 2) reads
"derived: the package's / 2" (dies.kind_words) in every text that names a roof's kind:
the notebook displays of a Roof, an Analysis, a WhatIf, a Choice, an LLMResult and a
MachineProfile, `specs show/compare` of a die's roof file, `rooflab llm`'s setup line and
the analysis CSV's roof_kind column. Before, these formatted roof.kind, the package's
"nominal", over halved ceilings.

Hand numbers: the catalog MI250X has DRAM 3.2768 TB/s and fp32 tensor 95.7 TFLOP/s, so one
die has 1.6384 TB/s and 47.85 TFLOP/s. A kernel of 1e9 FLOP (fp32) and 1e8 B in 100 us:
AI 10, attainable 10 x 1.6384e12 = 16.38 TFLOP/s, achieved 1e9 / 1e-4 = 10 TFLOP/s = 61 %.
"""

from __future__ import annotations

import json

import pytest
from notebook_display import pretty

from rooflab.cli.main import main
from rooflab.cli.specs_tables import FileRoof, compare_rows
from rooflab.hardware.profile import MachineProfile
from rooflab.hardware.resolve import load_roof
from rooflab.model.analysis import analyze
from rooflab.model.choose import rank
from rooflab.model.csv_provenance import provenance_cells
from rooflab.model.dies import one_die
from rooflab.model.display import analysis_text
from rooflab.model.display_results import choice_text, profile_text
from rooflab.model.display_whatif import whatif_text
from rooflab.model.kernel import Kernel
from rooflab.model.roof_schema import roof_to_dict
from rooflab.model.whatif import scale_bytes

WORDS = "(derived: the package's / 2)"
DIE = "AMD Instinct MI250X, one die"


@pytest.fixture(scope="module")
def die():
    roof = one_die(load_roof("MI250X"), None, 2)[0]
    assert roof.name == DIE and roof.kind == "nominal"   # in memory: the catalog's kind
    assert roof.find_memory("DRAM").value == 3.2768e12 / 2
    return roof


K = Kernel("k", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-4)


def test_roof_and_analysis_displays_say_derived(die):
    text = pretty(die)
    assert text.splitlines()[0] == f"Roof '{DIE}' {WORDS}"
    # every ceiling is derived as the roof now reads: no provenance column beside them
    assert "(derived)" not in text and "(nominal)" not in text
    assert "  DRAM           1.64 TB/s" in text
    a = analyze(die, [K])
    assert analysis_text(a).splitlines()[0] == (
        f"Analysis on '{DIE}' {WORDS}: 1 kernel(s), 1 point(s)")


def test_whatif_choice_and_profile_displays_say_derived(die):
    w = scale_bytes(die, [K], 0.5)
    assert whatif_text(w).splitlines()[0].startswith(f"WhatIf: {w.label} on '{DIE}' {WORDS}")
    # rank() splits the package into one die itself (choose.rank, dies.one_die)
    (ch,) = rank([K], [("MI250X", load_roof("MI250X"), 560)])
    assert choice_text(ch).startswith(f"Choice 'MI250X' {WORDS}: work floor")
    lines = profile_text(MachineProfile(host={"name": "box"}, nominal=die)).splitlines()
    assert lines[1].split()[:5] == ["ceiling", "derived:", "the", "package's", "/"]
    assert f"  derived: the package's / 2 roof: '{DIE}'" in lines


def test_analysis_csv_roof_kind_is_derived(die):
    assert provenance_cells(K, die)["roof_kind"] == "derived"


@pytest.fixture(scope="module")
def die_file(die, tmp_path_factory):
    path = tmp_path_factory.mktemp("die") / "die.json"
    path.write_text(json.dumps({"schema_version": 2, **roof_to_dict(die)}))
    return str(path)


def test_specs_show_and_compare_of_a_die_file_say_derived(die, die_file, capsys):
    f = FileRoof(die_file, load_roof(die_file))
    assert f.name == f"{die_file} {WORDS}"
    assert compare_rows([f, f])[0] == ["kind"] + ["derived: the package's / 2 roof"] * 2
    assert main(["specs", "show", die_file]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert out.startswith(f"{die_file} {WORDS}")       # the table's title (FileRoof.name)
    assert f"roof {DIE} {WORDS}" in out and "(nominal)" not in out


def test_llm_setup_line_on_a_die_file_says_derived(die_file, capsys):
    assert main(["llm", "tinyllama-1.1b", "--on", die_file]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"roof '{DIE}' {WORDS}" in out
