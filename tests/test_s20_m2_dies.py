"""The MI250X is two devices to software (s20 mender m2 item 2): the catalog says so by a
field (`software_devices = 2`), its roof carries the note model/dies.py writes, and every
ranking takes one die, what one process runs on: `rooflab choose`, and model.choose.rank /
ranking_text in a notebook. `rooflab llm --on MI250X` says its floors are the package's.
A row that cannot run the work has no ratio to the best in --json (`relative` null), as
the table's `vs best` reads '-'."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace

import pytest

import rooflab
from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.hardware.catalog import device_to_dict, lookup, parse_catalog_text
from rooflab.model.choose import choices_to_dict, rank
from rooflab.model.display_results import ranking_text

# one decode-like step: 16 GB of DRAM traffic, 1 GFLOP of bf16 (DRAM-bound everywhere)
STEP = rooflab.Kernel("step", flop={"bf16": 1e9}, bytes={"DRAM": 16e9}, seconds=0.02)


def _dies():
    from rooflab.model import dies  # new in this change: a test apiece fails without it

    return dies


def _run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(args))
    return code, out.getvalue()


def test_the_catalog_field_says_how_many_devices_a_package_is():
    dies = _dies()
    mi = lookup("MI250X")
    assert mi.software_devices == 2 and device_to_dict(mi)["software_devices"] == 2
    assert lookup("MI300X").software_devices == 1 and lookup("H100").software_devices == 1
    # the roof carries it (what rank() sees), naming itself
    assert dies.software_devices(mi.roof) == 2
    assert dies.software_devices(rooflab.load_roof("MI250X")) == 2
    assert dies.software_devices(rooflab.load_roof("MI300X")) == 1
    # the probe's one-die roof is renamed: already a die, not split again
    assert dies.software_devices(replace(mi.roof, name="AMD Instinct MI250X, one die")) == 1


def test_choose_dies_takes_the_roofs_count_not_the_catalog_wording():
    from rooflab.cli.choose_dies import software_devices as catalog_dies

    mi = lookup("MI250X")
    n, note = catalog_dies(mi)
    assert n == 2 and note.startswith("two graphics compute dies in one package")
    # the catalog's own wording is no second source of the count: the roof's note (what
    # rank() reads, written from the field by the catalog) is the one rule (review s20 x2
    # F7); a roof without it is one device, whatever the Device's notes say
    plain = replace(mi, roof=replace(mi.roof, notes=()))
    assert catalog_dies(plain) == (1, "")


def _entry(extra: str) -> str:
    return ("[[device]]\nname = 'X'\nvendor = 'V'\nkind = 'gpu'\n"
            "source = 'https://example.com/x'\nmemory_gb = 64\nmemory_gbps = 1000\n"
            "interconnect = 'PCIe'\ninterconnect_gbps = 64\n" + extra +
            "[device.tflops]\nfp32_vector = 10\n")


def test_the_catalog_checks_the_field():
    assert parse_catalog_text(_entry("software_devices = 4\n"), "t.toml")[0] \
        .software_devices == 4
    for bad in ("software_devices = 0\n", "software_devices = 1.5\n",
                "software_devices = true\n"):
        with pytest.raises(ParseError, match="software_devices"):
            parse_catalog_text(_entry(bad), "t.toml")


def test_rank_in_a_notebook_takes_one_mi250x_die():
    mi250x, a100 = rooflab.load_roof("MI250X"), rooflab.load_roof("A100")
    choices = rank([STEP], [("MI250X", mi250x, 560.0), ("A100", a100, 400.0)])
    # one die: 16e9 B / (3276.8 / 2) GB/s = 9.77 ms, behind the A100's 16e9 / 2.039e12 =
    # 7.85 ms; the package's 3.2768 TB/s ranked it first at 4.88 ms
    assert [c.name for c in choices] == ["A100", "MI250X"]
    mi = choices[1]
    assert mi.seconds == pytest.approx(16e9 / 1.6384e12)
    assert choices[0].seconds == pytest.approx(16e9 / 2.039e12)
    assert mi.tdp_w == 280.0 and mi.energy_j == pytest.approx(280 * mi.ranked_s)
    assert mi.roof.find_memory("DRAM").value == 1.6384e12
    assert mi.roof.find_memory("DRAM").provenance == "derived"
    text = ranking_text(choices)
    row = next(line for line in text.splitlines() if "MI250X" in line)
    assert "9.77 ms" in row and "1.24x" in row and "280 W" in row
    # a roof split already (the CLI's per_die_candidate) is not split again
    once, tdp = _dies().one_die(mi250x, 560.0, 2)
    again = rank([STEP], [("MI250X", once, tdp)])[0]
    assert again.seconds == pytest.approx(mi.seconds) and again.tdp_w == 280.0


def test_a_saved_mi250x_roof_still_ranks_as_one_die():
    from rooflab.model.roof_schema import roof_from_dict, roof_to_dict

    saved = roof_from_dict(json.loads(json.dumps(roof_to_dict(rooflab.load_roof("MI250X")))))
    c = rank([STEP], [("mine", saved, None)])[0]
    assert c.seconds == pytest.approx(16e9 / 1.6384e12)


def test_relative_is_null_for_a_device_that_cannot_run_the_work():
    # 190 GB: the MI300X (192 GB) holds it, the faster B200 (180 GB) does not
    cands = [("MI300X", rooflab.load_roof("MI300X"), 750.0),
             ("B200", rooflab.load_roof("B200"), 1000.0)]
    mem = {"MI300X": 192e9, "B200": 180e9}
    rows = choices_to_dict(rank([STEP], cands, needs_bytes=190e9, memory_bytes=mem), [STEP])
    assert [(r["name"], r["viable"]) for r in rows] == [("MI300X", True), ("B200", False)]
    assert rows[0]["relative"] == 1.0 and rows[0]["relative_with_launches"] == 1.0
    # was 5.3 / 7.7 = 0.69x: a ratio to a best it cannot stand beside
    assert rows[1]["relative"] is None and rows[1]["relative_with_launches"] is None
    # none fits 200 GB: each is still set against the fastest of them
    rows = choices_to_dict(rank([STEP], cands, needs_bytes=200e9, memory_bytes=mem), [STEP])
    by = {r["name"]: r for r in rows}
    assert by["B200"]["relative"] == 1.0
    assert by["MI300X"]["relative"] == pytest.approx(7.7 / 5.3)


def test_choose_json_relative_is_null_where_the_table_says_minus(tmp_path):
    code, out = _run("-q", "llm", "llama-3-70b", "--batch", "64", "--prompt", "2048",
                     "--generate", "256", "--phase", "decode", "--on", "MI300X", "--json")
    assert code == 0, out
    doc = tmp_path / "whole.json"
    doc.write_text(out)
    code, out = _run("-q", "choose", str(doc), "--among", "MI300X,B200", "--json")
    assert code == 0, out
    rows = {d["name"]: d for d in json.loads(out)["devices"]}
    assert rows["NVIDIA B200"]["fits"] is False
    assert rows["NVIDIA B200"]["relative"] is None
    assert rows["NVIDIA B200"]["relative_with_launches"] is None
    assert rows["AMD Instinct MI300X"]["relative"] == 1.0


def test_llm_on_mi250x_says_the_floors_are_the_packages():
    code, out = _run("llm", "llama-3-8b", "--on", "MI250X")
    assert code == 0, out
    text = " ".join(out.split())
    # the roof's note (model.dies.note, its one text), then what it means for the floors
    assert ("note: AMD Instinct MI250X is 2 devices to software: its catalog ceilings and "
            "memory are the package's") in text
    assert "one process has 2x these work floors (the launches the same)" in text
    code, out = _run("-q", "llm", "llama-3-8b", "--on", "MI250X", "--json")
    notes = json.loads(out)["llm"]["notes"]
    assert sum("is 2 devices to software" in n for n in notes) == 1
    code, out = _run("llm", "llama-3-8b", "--on", "MI300X")
    assert code == 0 and "devices to software" not in out
    code, out = _run("llm", "llama-3-8b", "--on", "MI250X", "--tp", "2")
    assert "each of the 2 devices here is a whole package (4 dies)" in " ".join(out.split())
