"""One die of a catalog package (model.dies.one_die: an MI250X's, its ceilings the
package's / 2) is named and labelled derived, not "AMD Instinct MI250X (nominal)"
(session 34, helper G): `rooflab report` on a `train --on MI250X` file, its JSON, the
chart's label and `rooflab choose`'s row.

By hand: the MI250X package's DRAM is 3.2768 TB/s and bf16 tensor 383 TFLOP/s (the
catalog); one die 1.6384 TB/s and 191.5 TFLOP/s, each "derived".
"""

import json

import pytest

from rooflab.cli.main import main

DIE = "AMD Instinct MI250X, one die"


def test_one_die_roof_is_named_and_labelled_derived():
    from rooflab.hardware.resolve import load_roof
    from rooflab.model.dies import one_die
    from rooflab.model.roof_schema import judged_kind, roof_to_dict
    from rooflab.report.chart_words import provenance_label

    die, _ = one_die(load_roof("MI250X"), None, 2)
    assert die.name == DIE
    assert die.find_memory("DRAM").value == pytest.approx(1.6384e12)
    assert judged_kind(die) == "derived"
    assert roof_to_dict(die)["kind"] == "derived"
    assert provenance_label(die) == f"{DIE} (derived: the package's / 2)"
    # the package itself stays the catalog's nominal roof
    assert provenance_label(load_roof("MI250X")) == "AMD Instinct MI250X (nominal)"


@pytest.fixture()
def step_file(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    assert main(["-q", "train", "tinyllama-1.1b", "--on", "MI250X", "--batch", "1", "--seq",
                 "256", "--dp", "2", "-o", path]) == 0
    capsys.readouterr()
    return path


def test_train_file_and_report_say_one_die_derived(step_file, capsys):
    with open(step_file) as f:
        roof = json.load(f)["roof"]
    assert roof["name"] == DIE and roof["kind"] == "derived"
    dram = next(m for m in roof["memory"] if m["level"] == "DRAM")
    assert dram["kind"] == "derived" and dram["bytes_per_s"] == pytest.approx(1.6384e12)
    assert main(["report", step_file]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"{DIE} (derived: the package's / 2): " in text
    assert "MI250X (nominal)" not in text
    assert main(["-q", "report", step_file, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["roof"]["name"] == DIE and doc["roof"]["kind"] == "derived"


def test_choose_row_names_one_die_as_report_does(step_file, capsys):
    assert main(["choose", step_file, "--among", "MI250X"]) == 0
    out = capsys.readouterr().out
    assert "AMD Instinct MI250X, one die" in out.replace("\n│   │ ", " ")
    assert "(one die)" not in out
