"""One rule for a package that is several devices to software (review s20 x2 F7).

The catalog's `software_devices` field is read back in one place: hardware/catalog.py
writes model.dies.note onto the package's roof, and every reader asks
model.dies.software_devices(roof): rank() in a notebook, `rooflab choose` (which read the
Device's field, a second rule that could drift from rank()'s), the probe's catalog match
(which had its own DIES_PER_PACKAGE table) and `rooflab llm --on`. A roof file saved from
the catalog keeps only notes, not the field, which is why the note carries the count. The
texts are written once, in model/dies.py: the package's `note` and one die's `die_note`."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace

import pytest

import rooflab
from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.model import dies
from rooflab.model.choose import rank

MI = "AMD Instinct MI250X"
# DRAM-bound everywhere: 16 GB of traffic, 1 GFLOP of bf16
STEP = rooflab.Kernel("step", flop={"bf16": 1e9}, bytes={"DRAM": 16e9}, seconds=0.02)


def _run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(args))
    return code, out.getvalue()


def test_choose_counts_dies_by_the_roof_as_rank_does():
    from rooflab.cli import choose_dies

    mi = lookup("MI250X")
    assert choose_dies.software_devices(mi)[0] == dies.software_devices(mi.roof) == 2
    # a Device whose roof does not say it (the field alone) is one device to both: the CLI
    # said 2 (the field) while rank() split nothing (the roof)
    plain = replace(mi, roof=replace(mi.roof, notes=()))
    assert plain.software_devices == 2
    assert choose_dies.software_devices(plain) == (1, "")
    c = rank([STEP], [("MI250X", plain.roof, 560.0)])[0]
    assert c.seconds == pytest.approx(16e9 / 3.2768e12) and c.tdp_w == 560.0
    # the CLI no longer splits a roof itself: rank() is the one place
    assert not hasattr(choose_dies, "per_die_candidate")
    assert not hasattr(choose_dies, "one_die")


def test_choose_ranks_one_die_through_rank_with_one_text(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,precision\nstep,1e9,16e9,bf16\n")
    code, out = _run("-q", "choose", str(path), "--among", "MI250X,A100", "--json")
    assert code == 0, out
    rows = {d["name"]: d for d in json.loads(out)["devices"]}
    # one die: 16e9 B / 1.6384 TB/s = 9.77 ms, behind the A100 80GB's 16e9 / 2.039e12
    assert rows[MI]["work_floor_s"] == pytest.approx(16e9 / 1.6384e12)
    assert rows[MI]["tdp_w"] == 280 and rows[MI]["software_devices"] == 2
    split = rank([STEP], [(MI, lookup("MI250X").roof, 560.0)])[0]
    assert split.seconds == pytest.approx(rows[MI]["work_floor_s"])
    # the note under the table is the split roof's own note, one text (it was a third)
    said = dies.die_note(MI, 2)
    assert said in split.roof.notes
    code, out = _run("choose", str(path), "--among", "MI250X,A100")
    text = " ".join(out.split())
    assert f"note: {said}" in text
    assert "each is a separate device to software (64 GB, 1.64 TB/s each)" in text


def test_the_probes_die_takes_the_same_rule_and_drops_the_package_note():
    import rooflab.probe.gpu.catalog_match as cm
    from rooflab.probe.gpu.catalog_match import catalog_roof

    assert not hasattr(cm, "DIES_PER_PACKAGE")
    # ROCm's name for one GCD, with its 64 GB: half the package's 3.2768 TB/s
    roof, name = catalog_roof("AMD Instinct MI250X / MI250", memory_bytes=64e9)
    assert name == "AMD Instinct MI250X, one die"
    assert roof.find_memory("DRAM").value == pytest.approx(1.6384e12)
    assert dies.software_devices(roof) == 1
    # the package's note ("its catalog ceilings and memory are the package's") is not
    # this die's: it was kept on the die's roof
    assert not any("devices to software" in n for n in roof.notes)
    # the whole package (128 GB shown) stays the package
    whole, name = catalog_roof("AMD Instinct MI250X / MI250", memory_bytes=128e9)
    assert name == MI and whole.find_memory("DRAM").value == pytest.approx(3.2768e12)


def test_llms_note_starts_with_the_roofs_note():
    code, out = _run("llm", "llama-3-8b", "--on", "MI250X")
    assert code == 0, out
    text = " ".join(out.split())
    assert f"note: {dies.note(MI, 2)}. So are these floors" in text
